/* decomp_foreach.c — the _foreach_* ops (torch._foreach_add, _foreach_mul_, ... : what
 * torch.optim's multi-tensor optimizers put in a graph) as one decomposition: item k of the
 * result is the plain op applied to item k of every list argument, the other arguments
 * being shared:
 *     _foreach_add.List([a, b], [c, d], alpha=2)  ->  (add.Tensor(a, c, alpha=2), add.Tensor(b, d, alpha=2))
 *     _foreach_pow.ScalarAndTensor(0.9, [s, t])   ->  (pow.Scalar(0.9, s), pow.Scalar(0.9, t))
 * The in-place forms (_foreach_add_.Scalar) copy item k into self[k] and return self, as
 * ATen's foreach kernels do. The rows are Inductor's own foreach table (lowering.py
 * register_foreach_pointwise / register_foreach_inplace and the decompositions of
 * _foreach_addcmul / addcdiv / lerp); the reference interpreter and meta inference run this
 * decomposition, and core/lowering/lowering_foreach.c lowers through it, so item k becomes
 * the pointwise kernel of its plain op. */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <stdio.h>
#include <string.h>

/* The plain op of foreach op `t` for overload `ov` ("List", "Scalar", "ScalarList", "Tensor",
 * "ScalarAndTensor", "default"), written into buf; NULL when this overload has no plain op.
 * `base` is the name between "aten._foreach_" and the overload, without a trailing '_'. */
static const char *plain_op(const char *base, const char *ov, char *buf, size_t n) {
    bool list = !strcmp(ov, "List"), scalar = !strcmp(ov, "Scalar") || !strcmp(ov, "ScalarList");
    static const char *const arith[] = {"add", "sub", "mul", "div"};
    for (size_t i = 0; i < sizeof arith / sizeof arith[0]; i++)
        if (!strcmp(base, arith[i])) { snprintf(buf, n, "aten.%s.Tensor", base); return buf; }
    if (!strcmp(base, "pow"))
        return !strcmp(ov, "ScalarAndTensor") ? "aten.pow.Scalar" : list ? "aten.pow.Tensor_Tensor" : scalar ? "aten.pow.Tensor_Scalar" : NULL;
    if (!strcmp(base, "maximum") || !strcmp(base, "minimum")) {   /* foreach max with a number is clamp_min */
        bool mx = base[1] == 'a';
        return list ? (mx ? "aten.maximum.default" : "aten.minimum.default")
               : scalar ? (mx ? "aten.clamp_min.default" : "aten.clamp_max.default") : NULL;
    }
    if (!strcmp(base, "clamp_min") || !strcmp(base, "clamp_max")) {
        snprintf(buf, n, "aten.%s.%s", base, list ? "Tensor" : "default");
        return list || scalar ? buf : NULL;
    }
    if (!strcmp(base, "addcmul") || !strcmp(base, "addcdiv")) {
        snprintf(buf, n, "aten.%s.default", base);
        return scalar ? buf : NULL;
    }
    if (!strcmp(base, "lerp")) return list ? "aten.lerp.Tensor" : scalar ? "aten.lerp.Scalar" : NULL;
    if (!strcmp(base, "norm")) return !strcmp(ov, "Scalar") ? "aten.linalg_vector_norm.default" : NULL;
    if (!strcmp(base, "copy")) return "aten.copy.default";
    if (!strcmp(base, "zero")) return "aten.zero.default";
    snprintf(buf, n, "aten.%s.default", base);   /* the unary ops: sqrt, neg, reciprocal, ... */
    return !strcmp(ov, "default") ? buf : NULL;
}

/* Split "aten._foreach_add_.List" into base "add", overload "List" and whether it is in place. */
static bool foreach_name(const char *t, char *base, size_t nb, const char **ov, bool *inplace) {
    static const char pre[] = "aten._foreach_";
    if (strncmp(t, pre, sizeof pre - 1) != 0) return false;
    const char *b = t + sizeof pre - 1, *dot = strchr(b, '.');
    size_t len = dot ? (size_t)(dot - b) : strlen(b);
    *inplace = len > 1 && b[len - 1] == '_';
    if (*inplace) len--;
    if (len == 0 || len >= nb) return false;
    memcpy(base, b, len);
    base[len] = 0;
    *ov = dot ? dot + 1 : "default";
    return true;
}

const char *foreach_plain_op(const char *target, char *buf, size_t n, bool *inplace) {
    char base[64];
    const char *ov;
    bool ip;
    if (!foreach_name(target, base, sizeof base, &ov, &ip)) return NULL;
    if (inplace) *inplace = ip;
    return plain_op(base, ov, buf, n);
}

/* The decomposition of every row: item k of each list argument (all lists as long as self),
 * the other arguments as they are; addcmul/addcdiv's positional value becomes the plain op's
 * keyword, copy's non_blocking is dropped. */
static int dc_foreach(DecompB *b, Value *outs, int *nout) {
    const Node *n = b->n;
    char buf[96];
    bool inplace = false;
    const char *plain = foreach_plain_op(n->target, buf, sizeof buf, &inplace);
    if (!plain) return db_fail(b, "'%s' has no plain op to apply to each item", n->target);
    if (!op_lookup(plain)) return db_fail(b, "'%s': its plain op '%s' is not supported", n->target, plain);
    bool addc = strstr(plain, "aten.addc") != NULL, copy = !strcmp(plain, "aten.copy.default");
    int len = -1, self = -1;
    for (int i = 0; i < n->nargs; i++)
        if (n->args[i].kind == V_LIST || n->args[i].kind == V_TUPLE) {
            if (len < 0) { len = n->args[i].list.n; self = i; }
            else if (n->args[i].list.n != len)
                return db_fail(b, "argument %d has %d items, the first list %d", i, n->args[i].list.n, len);
        }
    if (len < 0) return db_fail(b, "'%s' needs a list of tensors", n->target);
    int want_self = strstr(n->target, ".ScalarAndTensor") ? 1 : 0;   /* pow(number, [tensors]) */
    if (self != want_self) return db_fail(b, "'%s': argument %d (self) must be a list of tensors", n->target, want_self);
    if (len > OP_MAX_OUTS) return db_fail(b, "'%s' over %d tensors (%d)", n->target, OP_MAX_OUTS, len);
    int npos = n->nargs;
    if (copy && npos > 2) npos = 2;                  /* _foreach_copy(self, src, non_blocking) */
    bool value_kw = addc && npos == 4;               /* _foreach_addcmul.Scalar(self, t1, t2, value) */
    if (value_kw) npos = 3;
    for (int k = 0; k < len && !b->failed; k++) {
        Value args[8];
        Kwarg kw[8];
        int nkw = 0;
        if (npos > 8) return db_fail(b, "'%s': too many arguments", n->target);
        for (int i = 0; i < npos; i++) {
            const Value *v = &n->args[i];
            args[i] = v->kind == V_LIST || v->kind == V_TUPLE ? v->list.items[k] : *v;
        }
        if (value_kw) {
            const Value *v = &n->args[3];
            kw[nkw++] = (Kwarg){"value", v->kind == V_LIST || v->kind == V_TUPLE ? v->list.items[k] : *v};
        }
        for (int i = 0; i < n->nkwargs && nkw < 8; i++) {
            if (copy && !strcmp(n->kwargs[i].name, "non_blocking")) continue;
            const Value *v = &n->kwargs[i].v;
            kw[nkw++] = (Kwarg){n->kwargs[i].name, v->kind == V_LIST || v->kind == V_TUPLE ? v->list.items[k] : *v};
        }
        Node *r = db_call(b, plain, args, npos, kw, nkw);
        if (r && inplace) {
            const Value *s = &n->args[self].list.items[k];
            if (s->kind != V_NODE) return db_fail(b, "item %d of self is not a tensor", k);
            r = db_op(b, "aten.copy_.default", *s, VN(r));
        }
        if (!r) return -1;
        outs[k] = VN(r);
    }
    *nout = len;
    return b->failed ? -1 : 0;
}

#define F(name, doc) DECOMP_ROW(name, OPF_TUPLE, dc_foreach, false, doc)
#define FI(name, doc) DECOMP_ROW(name, OPF_TUPLE | OPF_INPLACE, dc_foreach, false, doc)

/* Inductor's foreach lowerings (opsets.json inductor_lowerings) and decompositions */
const OpDef ops_decomp_foreach_table[] = {
    F("aten._foreach_add.List", "self[k] + alpha * other[k]"),
    F("aten._foreach_add.Scalar", "self[k] + scalar"),
    F("aten._foreach_add.ScalarList", "self[k] + scalars[k]"),
    F("aten._foreach_add.Tensor", "self[k] + alpha * other (one tensor)"),
    FI("aten._foreach_add_.List", "self[k] += alpha * other[k]"),
    FI("aten._foreach_add_.Scalar", "self[k] += scalar"),
    FI("aten._foreach_add_.ScalarList", "self[k] += scalars[k]"),
    FI("aten._foreach_add_.Tensor", "self[k] += alpha * other"),
    F("aten._foreach_sub.List", "self[k] - alpha * other[k]"),
    F("aten._foreach_sub.Scalar", "self[k] - scalar"),
    F("aten._foreach_sub.ScalarList", "self[k] - scalars[k]"),
    FI("aten._foreach_sub_.List", "self[k] -= alpha * other[k]"),
    FI("aten._foreach_sub_.Scalar", "self[k] -= scalar"),
    F("aten._foreach_mul.List", "self[k] * other[k]"),
    F("aten._foreach_mul.Scalar", "self[k] * scalar"),
    F("aten._foreach_mul.ScalarList", "self[k] * scalars[k]"),
    F("aten._foreach_mul.Tensor", "self[k] * other (one tensor)"),
    FI("aten._foreach_mul_.List", "self[k] *= other[k]"),
    FI("aten._foreach_mul_.Scalar", "self[k] *= scalar"),
    FI("aten._foreach_mul_.ScalarList", "self[k] *= scalars[k]"),
    FI("aten._foreach_mul_.Tensor", "self[k] *= other"),
    F("aten._foreach_div.List", "self[k] / other[k]"),
    F("aten._foreach_div.Scalar", "self[k] / scalar"),
    F("aten._foreach_div.ScalarList", "self[k] / scalars[k]"),
    F("aten._foreach_div.Tensor", "self[k] / other (one tensor)"),
    FI("aten._foreach_div_.List", "self[k] /= other[k]"),
    FI("aten._foreach_div_.Scalar", "self[k] /= scalar"),
    FI("aten._foreach_div_.ScalarList", "self[k] /= scalars[k]"),
    FI("aten._foreach_div_.Tensor", "self[k] /= other"),
    F("aten._foreach_pow.List", "self[k] ** exponent[k]"),
    F("aten._foreach_pow.Scalar", "self[k] ** exponent"),
    F("aten._foreach_pow.ScalarList", "self[k] ** exponent[k] (numbers)"),
    F("aten._foreach_pow.ScalarAndTensor", "self ** exponent[k] (a number to tensor powers)"),
    F("aten._foreach_maximum.List", "maximum(self[k], other[k])"),
    F("aten._foreach_maximum.Scalar", "maximum(self[k], scalar)"),
    F("aten._foreach_minimum.List", "minimum(self[k], other[k])"),
    F("aten._foreach_minimum.Scalar", "minimum(self[k], scalar)"),
    F("aten._foreach_clamp_min.List", "clamp_min(self[k], other[k])"),
    F("aten._foreach_clamp_min.Scalar", "clamp_min(self[k], scalar)"),
    F("aten._foreach_clamp_max.List", "clamp_max(self[k], other[k])"),
    F("aten._foreach_clamp_max.Scalar", "clamp_max(self[k], scalar)"),
    F("aten._foreach_addcmul.Scalar", "self[k] + value * tensor1[k] * tensor2[k]"),
    F("aten._foreach_addcmul.ScalarList", "self[k] + scalars[k] * tensor1[k] * tensor2[k]"),
    FI("aten._foreach_addcmul_.Scalar", "self[k] += value * tensor1[k] * tensor2[k]"),
    F("aten._foreach_addcdiv.Scalar", "self[k] + value * tensor1[k] / tensor2[k]"),
    F("aten._foreach_addcdiv.ScalarList", "self[k] + scalars[k] * tensor1[k] / tensor2[k]"),
    FI("aten._foreach_addcdiv_.Scalar", "self[k] += value * tensor1[k] / tensor2[k]"),
    F("aten._foreach_lerp.List", "lerp(self[k], tensors1[k], weights[k])"),
    F("aten._foreach_lerp.Scalar", "lerp(self[k], tensors1[k], weight)"),
    F("aten._foreach_lerp.ScalarList", "lerp(self[k], tensors1[k], weight[k])"),
    FI("aten._foreach_lerp_.Scalar", "self[k] = lerp(self[k], tensors1[k], weight)"),
    F("aten._foreach_copy.default", "src[k] copied in self[k]'s dtype and shape"),
    FI("aten._foreach_copy_.default", "self[k].copy_(src[k])"),
    F("aten._foreach_norm.Scalar", "vector norm of each tensor"),
    FI("aten._foreach_zero_.default", "self[k].zero_()"),
    F("aten._foreach_abs.default", "abs of each tensor"),
    F("aten._foreach_exp.default", "exp of each tensor"),
    F("aten._foreach_log.default", "log of each tensor"),
    F("aten._foreach_neg.default", "neg of each tensor"),
    F("aten._foreach_reciprocal.default", "reciprocal of each tensor"),
    F("aten._foreach_rsqrt.default", "rsqrt of each tensor"),
    F("aten._foreach_sign.default", "sign of each tensor"),
    F("aten._foreach_sqrt.default", "sqrt of each tensor"),
    FI("aten._foreach_sqrt_.default", "in-place sqrt of each tensor"),
    FI("aten._foreach_neg_.default", "in-place neg of each tensor"),
};
const int ops_decomp_foreach_count = sizeof ops_decomp_foreach_table / sizeof ops_decomp_foreach_table[0];
