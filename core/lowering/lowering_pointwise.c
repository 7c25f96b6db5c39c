/* lowering_pointwise.c — pointwise lowerings (Inductor's make_pointwise / register_lowering of
 * elementwise ops): one ops.* call per op (add, exp, eq, ...), where, clamp, dtype conversion,
 * factories (full, zeros, empty*, arange / iota), clone, and the ops Inductor decomposes before
 * lowering (silu, gelu, softplus, remainder, ...) as the same math. Each result is a pending
 * Pointwise inner function; realization is the consumer's business (lowering_boxes.c). */
#include "lowering/lowering_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A pointwise ATen op that is one ops.* call (add, exp, eq, ...): arguments broadcast to the
 * output's shape and converted to the computation dtype; comparisons compute in the promoted
 * dtype of their operands (a python number does not promote a tensor of its kind), logical ops
 * in bool; add/sub's alpha multiplies the second operand. arg: the IrMathOp. */
static int lower_pointwise(Lower *L, const Node *n, int arg) {
    IrMathOp op = (IrMathOp)arg;
    int nt = ir_math_arity(op);   /* tensor-or-number arguments */
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "pointwise op '%s' has no shape annotation", n->target);
    if (n->nargs < nt) return lw_err(L, n, "op '%s' needs %d arguments", n->target, nt);
    DType cdt = m->dtype;
    if (ir_math_is_compare(op)) {
        DType a = lw_arg_dtype(L, n, 0), b = nt > 1 ? lw_arg_dtype(L, n, 1) : a;
        if (a == DT_INVALID || b == DT_INVALID) return lw_err(L, n, "bad arguments to '%s'", n->target);
        bool at = n->args[0].kind == V_NODE, bt = nt > 1 && n->args[1].kind == V_NODE;
        cdt = (at && !bt) ? (dtype_is_float(a) || !dtype_is_float(b) ? a : DT_F32)
            : (!at && bt) ? (dtype_is_float(b) || !dtype_is_float(a) ? b : DT_F32) : dtype_promote(a, b);
        if (op == IOP_LOGICAL_AND || op == IOP_LOGICAL_OR || op == IOP_LOGICAL_NOT) cdt = DT_BOOL;
    }
    const IrFn *a[2] = {0};
    for (int i = 0; i < nt; i++) {
        a[i] = lw_arg_loader(L, n, i, m->ndim, m->size, cdt);
        if (!a[i] && n->args[i].kind == V_NODE && n->args[i].node->symfloat) return -1;   /* said why */
        if (!a[i]) return lw_err(L, n, "argument %d of '%s' is not a tensor or number", i, n->target);
    }
    /* add/sub with alpha */
    const Kwarg *alpha = node_kwarg(n, "alpha");
    double al;
    if (alpha && value_as_double(&alpha->v, &al) && al != 1.0 && nt == 2)
        a[1] = lw_math(L, IOP_MUL, cdt, a[1], lw_const(L, al, cdt), NULL);
    const IrFn *f = nt == 1 ? lw_math(L, op, m->dtype, a[0], NULL, NULL)
                               : lw_math(L, op, m->dtype, a[0], a[1], NULL);
    return lw_set_pointwise(L, n, f, m->dtype, nt);
}

/* A special function of Inductor's pointwise_overrides_data (codegen/common.py) or erfinv:
 * one ops.* call (lower_pointwise) on the CPU, where the cpp backend spells them all
 * (calc_i0, calc_digamma, ...). On the GPU only those with a Triton (libdevice) spelling are
 * pointwise: register_pointwise's triton_fallback makes the others FallbackKernels there.
 * Example: special_i1e on cuda -> FallbackKernel, i0 on cuda -> cyl_bessel_i0f in the kernel. */
static int lower_special(Lower *L, const Node *n, int arg) {
    IrMathOp op = (IrMathOp)arg;
    bool triton = op == IOP_ERFINV || op == IOP_I0 || op == IOP_I1 || op == IOP_ERFCX || op == IOP_BESSEL_J0 ||
                  op == IOP_BESSEL_J1 || op == IOP_BESSEL_Y0 || op == IOP_BESSEL_Y1 || op == IOP_MODIFIED_BESSEL_I0 ||
                  op == IOP_MODIFIED_BESSEL_I1;
    bool gpu = (n->has_meta ? n->meta.device.kind : L->dev.kind) == DEV_CUDA;
    if (gpu && !triton) return lw_fallback(L, n);
    return lower_pointwise(L, n, arg);
}

/* x ** k for an integer k: Inductor's pow_recursive (x ** 5 = ((x * x) * (x * x)) * x;
 * negative k: the reciprocal of x ** -k; k = 0: the constant 1). */
static const IrFn *pow_recursive(Lower *L, const IrFn *x, int64_t k, DType dt) {
    if (k < 0) return lw_math(L, IOP_RECIPROCAL, dt, pow_recursive(L, x, -k, dt), NULL, NULL);
    if (k == 0) return lw_const(L, 1, dt);
    if (k == 1) return x;
    const IrFn *h = pow_recursive(L, x, k / 2, dt);
    const IrFn *r = lw_math(L, IOP_MUL, dt, h, h, NULL);
    return k % 2 ? lw_math(L, IOP_MUL, dt, r, x, NULL) : r;
}

/* pow(x, b) with a number b, as Inductor's pow lowering: a float b equal to an integer counts
 * as that integer; b = 0.5 is sqrt; an integer b with -32 < b < 32 (b >= 0 for integer x) is
 * embedded as multiplications (pow_recursive), so pow(x, 2) is x * x; anything else is
 * ops.pow. Example: the RMSNorm x.pow(2).mean(-1) reads x once and squares it. */
static int lower_pow_scalar(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    double b;
    if (!m || n->nargs < 2 || !value_as_double(&n->args[1], &b)) return lower_pointwise(L, n, IOP_POW);
    if (b == 0.5 && dtype_is_float(m->dtype)) {
        const IrFn *x = lw_arg_loader(L, n, 0, m->ndim, m->size, m->dtype);
        if (!x) return lw_err(L, n, "pow: the base is not a tensor");
        return lw_set_pointwise(L, n, lw_math(L, IOP_SQRT, m->dtype, x, NULL, NULL), m->dtype, 1);
    }
    if (b != (double)(int64_t)b || b <= -32 || b >= 32 || (!dtype_is_float(m->dtype) && b < 0) || m->dtype == DT_BOOL)
        return lower_pointwise(L, n, IOP_POW);
    const IrFn *x = lw_arg_loader(L, n, 0, m->ndim, m->size, m->dtype);
    if (!x) return lw_err(L, n, "pow: the base is not a tensor");
    return lw_set_pointwise(L, n, pow_recursive(L, x, (int64_t)b, m->dtype), m->dtype, 1);
}

/* div(a, b, rounding_mode): Inductor's div_mode: "floor" is floordiv of ints, else
 * floor(a / b); "trunc" truncdiv of ints, else trunc(a / b); none: a / b. */
static int lower_div_mode(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    const Value *rv = lw_arg_or_kw(n, 2, "rounding_mode");
    const char *mode = rv && rv->kind == V_STR ? rv->s : NULL;
    if (!m || n->nargs < 2) return lw_err(L, n, "div needs two arguments and a shape");
    DType dt = m->dtype;
    const IrFn *a = lw_arg_loader(L, n, 0, m->ndim, m->size, dt), *b = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
    if (!a || !b) return lw_err(L, n, "bad arguments to '%s'", n->target);
    bool ints = !dtype_is_float(dt);
    const IrFn *f;
    if (mode && !strcmp(mode, "floor")) f = ints ? lw_math(L, IOP_FLOORDIV, dt, a, b, NULL)
                                                  : lw_math(L, IOP_FLOOR, dt, lw_math(L, IOP_TRUEDIV, dt, a, b, NULL), NULL, NULL);
    else if (mode && !strcmp(mode, "trunc")) f = ints ? lw_math(L, IOP_TRUNCDIV, dt, a, b, NULL)
                                                       : lw_math(L, IOP_TRUNC, dt, lw_math(L, IOP_TRUEDIV, dt, a, b, NULL), NULL, NULL);
    else if (!mode) f = lw_math(L, IOP_TRUEDIV, dt, a, b, NULL);
    else return lw_err(L, n, "div: rounding_mode must be 'trunc', 'floor' or None, not '%s'", mode);
    return lw_set_pointwise(L, n, f, dt, 2);
}

/* prims.div: lowering.py div_prim: integer (or bool) operands truncdiv; a float division by a
 * constant multiplies by its reciprocal (copysign(inf, 0) for a zero); else truediv. */
static int lower_div_prim(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    if (!m || n->nargs < 2) return lw_err(L, n, "prims.div needs two arguments and a shape");
    DType dt = m->dtype;
    const IrFn *a = lw_arg_loader(L, n, 0, m->ndim, m->size, dt);
    if (!a) return lw_err(L, n, "bad arguments to '%s'", n->target);
    double d;
    if (!dtype_is_float(dt)) {
        const IrFn *b = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!b) return lw_err(L, n, "bad arguments to '%s'", n->target);
        return lw_set_pointwise(L, n, lw_math(L, IOP_TRUNCDIV, dt, a, b, NULL), dt, 2);
    }
    if (n->args[1].kind != V_NODE && value_as_double(&n->args[1], &d)) {
        double r = d == 0 ? copysign(INFINITY, d) : 1.0 / d;
        return lw_set_pointwise(L, n, lw_math(L, IOP_MUL, dt, a, lw_const(L, r, dt), NULL), dt, 2);
    }
    const IrFn *b = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
    if (!b) return lw_err(L, n, "bad arguments to '%s'", n->target);
    return lw_set_pointwise(L, n, lw_math(L, IOP_TRUEDIV, dt, a, b, NULL), dt, 2);
}

/* frac(x) = x - trunc(x) (torch/_refs) */
static int lower_frac(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    const IrFn *x = m ? lw_arg_loader(L, n, 0, m->ndim, m->size, m->dtype) : NULL;
    if (!x) return lw_err(L, n, "frac needs a tensor and a shape");
    return lw_set_pointwise(L, n, lw_math(L, IOP_SUB, m->dtype, x, lw_math(L, IOP_TRUNC, m->dtype, x, NULL, NULL), NULL), m->dtype, 1);
}

/* A ternary op of three (broadcast) operands: where(condition, self, other), its condition read
 * as bool, and prims.fma(a, b, c), Inductor's ops.fma. `arg` is the IOP. */
static int lower_ternary(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    const char *name = ir_math_name(arg);
    if (!m || n->nargs < 3) return lw_err(L, n, "%s needs 3 arguments and a shape", name);
    const IrFn *x = lw_arg_loader(L, n, 0, m->ndim, m->size, arg == IOP_WHERE ? DT_BOOL : m->dtype);
    const IrFn *y = lw_arg_loader(L, n, 1, m->ndim, m->size, m->dtype);
    const IrFn *z = lw_arg_loader(L, n, 2, m->ndim, m->size, m->dtype);
    if (!x || !y || !z) return lw_err(L, n, "bad arguments to %s", name);
    return lw_set_pointwise(L, n, lw_math(L, arg, m->dtype, x, y, z), m->dtype, 3);
}

static int lower_clamp(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "clamp needs a shape");
    const IrFn *f = lw_arg_loader(L, n, 0, m->ndim, m->size, m->dtype);
    if (!f) return lw_err(L, n, "bad argument to clamp");
    bool is_min = strstr(n->target, "clamp_min") != NULL, is_max = strstr(n->target, "clamp_max") != NULL;
    double lo, hi;
    const Value *vlo = lw_arg_or_kw(n, 1, is_max ? "max" : "min");
    const Value *vhi = is_min || is_max ? NULL : lw_arg_or_kw(n, 2, "max");
    if (is_max) { if (vlo && value_as_double(vlo, &hi)) f = lw_math(L, IOP_MINIMUM, m->dtype, f, lw_const(L, hi, m->dtype), NULL); }
    else {
        if (vlo && vlo->kind != V_NONE && value_as_double(vlo, &lo)) f = lw_math(L, IOP_MAXIMUM, m->dtype, f, lw_const(L, lo, m->dtype), NULL);
        if (vhi && vhi->kind != V_NONE && value_as_double(vhi, &hi)) f = lw_math(L, IOP_MINIMUM, m->dtype, f, lw_const(L, hi, m->dtype), NULL);
    }
    return lw_set_pointwise(L, n, f, m->dtype, 1);
}

static int lower_convert(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "'%s' needs a shape", n->target);
    const IrFn *f = lw_arg_loader(L, n, 0, m->ndim, m->size, m->dtype);
    if (!f) return lw_err(L, n, "bad argument to '%s'", n->target);
    return lw_set_pointwise(L, n, f, m->dtype, 1);
}

static int lower_full(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "'%s' needs a shape", n->target);
    double v = 0;   /* empty*, new_empty: zeros, as the interpreter */
    if (strstr(n->target, "ones")) v = 1;
    else if (strstr(n->target, "scalar_tensor")) {   /* scalar_tensor(s, dtype=...): a 0-d s */
        const Value *sv = lw_arg_or_kw(n, 0, "s");
        if (!sv || !value_as_double(sv, &v)) return lw_err(L, n, "scalar_tensor needs a number");
    } else if (strstr(n->target, "full")) {
        const Value *fv = lw_arg_or_kw(n, strncmp(n->target, "aten.new_full", 13) == 0 ? 2 : 1, "fill_value");
        Expr *e = fv && !value_as_double(fv, &v) ? lw_value_expr(L, fv) : NULL;
        /* lowering.py's _full: a sympy fill value (a SymInt) is ops.index_expr(value, dtype).
         * Example: full([s77, s27], s27) fills with index_expr(s27) cast to float32 */
        if (e) return lw_set_pointwise(L, n, lw_index_expr(L, e, m->ndim, m->dtype), m->dtype, 0);
        if (!fv || fv->kind == V_NODE || fv->kind == V_SYM) return lw_err(L, n, "full needs a number or SymInt fill value");
    }
    return lw_set_pointwise(L, n, lw_const(L, v, m->dtype), m->dtype, 0);
}

/* ---- composite ops: decomposed into the IR's math ops, as Inductor's decompositions do ---- */

static const IrFn *softplus_fn(Lower *L, const IrFn *x, double beta, double th, DType dt) {
    const IrFn *bx = beta == 1 ? x : lw_math(L, IOP_MUL, dt, x, lw_const(L, beta, dt), NULL);
    const IrFn *sp = lw_math(L, IOP_LOG1P, dt, lw_math(L, IOP_EXP, dt, bx, NULL, NULL), NULL, NULL);
    if (beta != 1) sp = lw_math(L, IOP_TRUEDIV, dt, sp, lw_const(L, beta, dt), NULL);
    return lw_math(L, IOP_WHERE, dt, lw_math(L, IOP_GT, DT_BOOL, bx, lw_const(L, th, dt), NULL), x, sp);
}

static int lower_composite(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "'%s' needs a shape annotation", n->target);
    DType dt = m->dtype;
    char op[64];
    snprintf(op, sizeof op, "%s", lw_short_name(L, n->target));
    if (!strcmp(op, "isnan") || !strcmp(op, "isinf") || !strcmp(op, "logical_xor")) {   /* bool of another dtype */
        DType in = lw_arg_dtype(L, n, 0);
        const IrFn *a = in == DT_INVALID ? NULL : lw_arg_loader(L, n, 0, m->ndim, m->size, in), *f;
        if (!a) return lw_err(L, n, "bad first argument to '%s'", n->target);
        if (!strcmp(op, "isnan")) f = lw_math(L, IOP_NE, DT_BOOL, a, a, NULL);
        else if (!strcmp(op, "isinf"))
            f = dtype_is_float(in) ? lw_math(L, IOP_EQ, DT_BOOL, lw_math(L, IOP_ABS, in, a, NULL, NULL), lw_const(L, INFINITY, in), NULL)
                                   : lw_const(L, 0, DT_BOOL);
        else {
            const IrFn *b = lw_arg_loader(L, n, 1, m->ndim, m->size, DT_BOOL);
            if (!b) return lw_err(L, n, "bad second argument to logical_xor");
            f = lw_math(L, IOP_NE, DT_BOOL, lw_to_dtype(L, a, DT_BOOL), b, NULL);
        }
        return lw_set_pointwise(L, n, f, DT_BOOL, !strcmp(op, "logical_xor") ? 2 : 1);
    }
    const IrFn *x = lw_arg_loader(L, n, 0, m->ndim, m->size, dt);
    if (!x) return lw_err(L, n, "bad first argument to '%s'", n->target);
#define C(v) lw_const(L, (v), dt)
#define M1(o, a) lw_math(L, (o), dt, (a), NULL, NULL)
#define M2(o, a, b) lw_math(L, (o), dt, (a), (b), NULL)
#define GT0(a) lw_math(L, IOP_GT, DT_BOOL, (a), C(0), NULL)
    const IrFn *f = NULL;
    int nt = 1;
    /* softplus / elu fold their scalars in double (PyTorch's CPU kernels' rounding): one known
     * only at run time (a SymFloat node) runs the op's FallbackKernel, which reads its value */
    if ((!strcmp(op, "softplus") && (lw_arg_symbolic(n, 1, "beta") || lw_arg_symbolic(n, 2, "threshold"))) ||
        (!strcmp(op, "elu") && (lw_arg_symbolic(n, 1, "alpha") || lw_arg_symbolic(n, 2, "scale") || lw_arg_symbolic(n, 3, "input_scale"))))
        return lw_fallback(L, n);
#define NUM(i, kw, d) lw_num_loader(L, n, (i), (kw), (d), m->ndim, dt)
    /* the step order of PyTorch's CPU kernels, so that f32 rounding agrees step by step */
    if (!strcmp(op, "silu")) f = M2(IOP_TRUEDIV, x, M2(IOP_ADD, C(1), M1(IOP_EXP, M1(IOP_NEG, x))));
    else if (!strcmp(op, "softplus")) f = softplus_fn(L, x, lw_arg_num(n, 1, "beta", 1), lw_arg_num(n, 2, "threshold", 20), dt);
    else if (!strcmp(op, "mish")) f = M2(IOP_MUL, x, M1(IOP_TANH, M1(IOP_LOG1P, M1(IOP_EXP, x))));
    else if (!strcmp(op, "leaky_relu")) {
        const IrFn *slope = NUM(1, "negative_slope", 0.01);
        if (!slope) return -1;
        f = lw_math(L, IOP_WHERE, dt, GT0(x), x, M2(IOP_MUL, x, slope));
    }
    else if (!strcmp(op, "elu")) {
        double alpha = lw_arg_num(n, 1, "alpha", 1), scale = lw_arg_num(n, 2, "scale", 1), iscale = lw_arg_num(n, 3, "input_scale", 1);
        const IrFn *neg = M2(IOP_MUL, M1(IOP_EXPM1, iscale == 1 ? x : M2(IOP_MUL, x, C(iscale))), C(dt == DT_F32 ? (double)(float)(alpha * scale) : alpha * scale));
        f = lw_math(L, IOP_WHERE, dt, GT0(x), scale == 1 ? x : M2(IOP_MUL, x, C(scale)), neg);
    } else if (!strcmp(op, "hardsigmoid") || !strcmp(op, "hardswish")) {
        const IrFn *r6 = M2(IOP_MINIMUM, M2(IOP_MAXIMUM, M2(IOP_ADD, x, C(3)), C(0)), C(6));
        f = !strcmp(op, "hardsigmoid") ? M2(IOP_TRUEDIV, r6, C(6)) : M2(IOP_TRUEDIV, M2(IOP_MUL, x, r6), C(6));
    } else if (!strcmp(op, "gelu")) {
        const Value *ap = lw_arg_or_kw(n, -1, "approximate");
        bool tanh_ = ap && ap->kind == V_STR && !strcmp(ap->s, "tanh");
        const IrFn *in = tanh_ ? M2(IOP_MUL, C(sqrt(2 / M_PI)), M2(IOP_ADD, x, M2(IOP_MUL, C(0.044715), M2(IOP_MUL, x, M2(IOP_MUL, x, x)))))
                               : M2(IOP_MUL, x, C(M_SQRT1_2));
        f = M2(IOP_MUL, M2(IOP_MUL, C(0.5), x), M2(IOP_ADD, C(1), M1(tanh_ ? IOP_TANH : IOP_ERF, in)));
    } else if (!strcmp(op, "rsub")) {
        const IrFn *o = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!o) return lw_err(L, n, "bad second argument to rsub");
        double al = lw_arg_num(n, -1, "alpha", 1);
        const IrFn *alf = lw_arg_symbolic(n, -1, "alpha") ? NUM(-1, "alpha", 1) : NULL;
        if (lw_arg_symbolic(n, -1, "alpha") && !alf) return -1;
        f = M2(IOP_SUB, o, alf ? M2(IOP_MUL, x, alf) : al == 1 ? x : M2(IOP_MUL, x, C(al)));
        nt = 2;
    } else if (!strcmp(op, "masked_fill")) {
        const IrFn *mask = lw_arg_loader(L, n, 1, m->ndim, m->size, DT_BOOL), *v = lw_arg_loader(L, n, 2, m->ndim, m->size, dt);
        if (!mask || !v) return lw_err(L, n, "bad arguments to masked_fill");
        f = lw_math(L, IOP_WHERE, dt, mask, v, x);
        nt = 3;
    } else if (!strcmp(op, "fill")) {
        f = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!f) return lw_err(L, n, "bad fill value");
    } else if (!strcmp(op, "copy")) {         /* functional copy_: src broadcast into self's shape and dtype */
        f = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!f) return lw_err(L, n, "bad copy source");
        nt = 2;
    } else if (!strcmp(op, "hardtanh")) {     /* clamp: NaN propagates */
        const IrFn *lo = NUM(1, "min_val", -1), *hi = NUM(2, "max_val", 1);
        if (!lo || !hi) return -1;
        f = M2(IOP_MINIMUM, M2(IOP_MAXIMUM, x, lo), hi);
    } else if (!strcmp(op, "remainder")) {    /* Python modulo, as torch's CPU kernel: fmod, then fix the sign */
        const IrFn *b = lw_arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!b) return lw_err(L, n, "bad second argument to remainder");
        const IrFn *r = M2(IOP_FMOD, x, b);
        const IrFn *fix = lw_math(L, IOP_LOGICAL_AND, DT_BOOL, lw_math(L, IOP_NE, DT_BOOL, r, C(0), NULL),
                                  lw_math(L, IOP_NE, DT_BOOL, lw_math(L, IOP_LT, DT_BOOL, r, C(0), NULL),
                                          lw_math(L, IOP_LT, DT_BOOL, b, C(0), NULL), NULL), NULL);
        f = lw_math(L, IOP_WHERE, dt, fix, M2(IOP_ADD, r, b), r);
        nt = 2;
    } else if (!strcmp(op, "trunc")) {
        f = dtype_is_float(dt) ? lw_math(L, IOP_WHERE, dt, lw_math(L, IOP_LT, DT_BOOL, x, C(0), NULL), M1(IOP_CEIL, x), M1(IOP_FLOOR, x)) : x;
    } else {
        return lw_err(L, n, "no composite lowering for '%s'", n->target);
    }
#undef C
#undef M1
#undef M2
#undef GT0
#undef NUM
    return lw_set_pointwise(L, n, f, dt, nt);
}

/* cat: out[i] = i < split ? left[i] : right[i - split] along dim; both loads stay in bounds
 * (the index is clamped; the load not taken is discarded). a[0] is the cat of the inputs
 * before the last one, a[1] the last input. */
/* arange / iota: start + step * i, in int64 when start and step are integers, else in double
 * (torch's CPU accumulate type for floats), cast to the output dtype. */
static int lower_arange(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    if (!m || m->ndim != 1) return lw_err(L, n, "'%s' needs a 1-d shape", n->target);
    const char *t = n->target;
    double start = 0, step = 1;
    const Value *sv = NULL, *pv = NULL;
    if (strcmp(t, "aten.arange.start") == 0 || strcmp(t, "aten.arange.start_step") == 0) {
        sv = lw_arg_or_kw(n, 0, "start");
        pv = lw_arg_or_kw(n, strcmp(t, "aten.arange.start_step") == 0 ? 2 : -1, "step");
    } else if (strcmp(t, "prims.iota.default") == 0) {
        sv = lw_arg_or_kw(n, -1, "start");
        pv = lw_arg_or_kw(n, -1, "step");
    }
    if (sv && sv->kind != V_NONE && !value_as_double(sv, &start)) return lw_err(L, n, "'%s': start must be a number", t);
    if (pv && pv->kind != V_NONE && !value_as_double(pv, &step)) return lw_err(L, n, "'%s': step must be a number", t);
    const IrFn *f;
    if (start == (double)(int64_t)start && step == (double)(int64_t)step)
        f = lw_index_expr(L, sym_add(L->s, sym_int(L->s, (int64_t)start), sym_mul(L->s, sym_int(L->s, (int64_t)step), lw_var(L, 0))), 1, DT_I64);
    else
        f = lw_math(L, IOP_ADD, DT_F64, lw_const(L, start, DT_F64),
                    lw_math(L, IOP_MUL, DT_F64, lw_const(L, step, DT_F64), lw_to_dtype(L, lw_index_expr(L, lw_var(L, 0), 1, DT_I64), DT_F64), NULL), NULL);
    return lw_set_pointwise(L, n, lw_to_dtype(L, f, m->dtype), m->dtype, 0);
}

/* clone / contiguous: the same values, pending (the consumer decides the layout). */
static int lower_clone(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    return lw_set_pointwise(L, n, x->loader, x->dtype, 1);
}

/* prims.rev(x, dims): torch.flip as the refs leave it (dims already canonical). Inductor's
 * lowering (lowering.py `rev`) is a Pointwise whose loader reads x at size - 1 - i along each
 * reversed dim. Example: rev(x[4, 4], [1]) reads x[_v0, 3 - _v1]. */
static int lower_rev(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    int64_t dims[MI_MAX_DIMS];
    int nd = lw_int_list(lw_arg_or_kw(n, 1, "dims"), dims, MI_MAX_DIMS);
    if (nd < 0) return lw_err(L, n, "prims.rev: dims must be a list of ints");
    Expr *map[MI_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) map[d] = lw_var(L, d);
    for (int k = 0; k < nd; k++) {
        int64_t d = dims[k] < 0 ? dims[k] + x->ndim : dims[k];
        if (d < 0 || d >= x->ndim) return lw_err(L, n, "prims.rev: dim %lld out of range for %d dims", (long long)dims[k], x->ndim);
        map[d] = sym_sub(L->s, sym_sub(L->s, x->size[d], sym_int(L->s, 1)), lw_var(L, (int)d));
    }
    return lw_set_pointwise(L, n, lw_reindex(L, x->loader, x->ndim, map, x->ndim), x->dtype, 1);
}

/* ---- the pointwise rows of the lowering table ---- */

/* frexp.Tensor(x) -> (mantissa, int32 exponent), as lowering.py lowers it: two Pointwise values
 * over x, ops.frexp's items (here two ops: the mantissa, and the exponent computed in x's float
 * dtype, exact, then cast). An integer x stays the FallbackKernel. Example: frexp(12.0) =
 * (0.75, 4). */
static int lower_frexp(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor argument", n->target);
    if (!dtype_is_float(x->dtype)) return lw_fallback(L, n);
    DType dt = x->dtype;
    const char *nm = lw_short_name(L, n->target);
    const IrFn *m = lw_math(L, IOP_FREXP_MANTISSA, dt, x->loader, NULL, NULL);
    const IrFn *e = lw_to_dtype(L, lw_math(L, IOP_FREXP_EXPONENT, dt, x->loader, NULL, NULL), DT_I32);
    IrTBox *items[2] = {lw_pw_box(L, m, dt, x->ndim, x->size, nm), lw_pw_box(L, e, DT_I32, x->ndim, x->size, nm)};
    lw_origins_merge(L, &items[0]->origins, &items[0]->norigins, x);
    lw_origins_merge(L, &items[1]->origins, &items[1]->norigins, x);
    return lw_set_tuple(L, n, items, 2);
}

const LoweringDef lowering_pointwise_table[] = {
    {"aten.add.Tensor", lower_pointwise, IOP_ADD}, {"aten.add.Scalar", lower_pointwise, IOP_ADD},
    {"aten.sub.Tensor", lower_pointwise, IOP_SUB}, {"aten.sub.Scalar", lower_pointwise, IOP_SUB},
    {"aten.mul.Tensor", lower_pointwise, IOP_MUL}, {"aten.mul.Scalar", lower_pointwise, IOP_MUL},
    {"aten.div.Tensor", lower_pointwise, IOP_TRUEDIV}, {"aten.div.Scalar", lower_pointwise, IOP_TRUEDIV},
    {"aten.pow.Tensor_Scalar", lower_pow_scalar, 0},
    {"aten.pow.Tensor_Tensor", lower_pointwise, IOP_POW},
    {"aten.maximum.default", lower_pointwise, IOP_MAXIMUM},
    {"aten.minimum.default", lower_pointwise, IOP_MINIMUM}, {"aten.eq.Tensor", lower_pointwise, IOP_EQ},
    {"aten.eq.Scalar", lower_pointwise, IOP_EQ}, {"aten.ne.Tensor", lower_pointwise, IOP_NE},
    {"aten.ne.Scalar", lower_pointwise, IOP_NE}, {"aten.lt.Tensor", lower_pointwise, IOP_LT},
    {"aten.lt.Scalar", lower_pointwise, IOP_LT}, {"aten.le.Tensor", lower_pointwise, IOP_LE},
    {"aten.le.Scalar", lower_pointwise, IOP_LE}, {"aten.gt.Tensor", lower_pointwise, IOP_GT},
    {"aten.gt.Scalar", lower_pointwise, IOP_GT}, {"aten.ge.Tensor", lower_pointwise, IOP_GE},
    {"aten.ge.Scalar", lower_pointwise, IOP_GE},
    {"aten.logical_and.default", lower_pointwise, IOP_LOGICAL_AND},
    {"aten.logical_or.default", lower_pointwise, IOP_LOGICAL_OR},
    {"aten.logical_not.default", lower_pointwise, IOP_LOGICAL_NOT},
    {"aten.neg.default", lower_pointwise, IOP_NEG}, {"aten.exp.default", lower_pointwise, IOP_EXP},
    {"aten.log.default", lower_pointwise, IOP_LOG}, {"aten.sqrt.default", lower_pointwise, IOP_SQRT},
    {"aten.rsqrt.default", lower_pointwise, IOP_RSQRT}, {"aten.tanh.default", lower_pointwise, IOP_TANH},
    {"aten.sigmoid.default", lower_pointwise, IOP_SIGMOID}, {"aten.relu.default", lower_pointwise, IOP_RELU},
    {"aten.erf.default", lower_pointwise, IOP_ERF}, {"aten.sin.default", lower_pointwise, IOP_SIN},
    {"aten.cos.default", lower_pointwise, IOP_COS}, {"aten.tan.default", lower_pointwise, IOP_TAN},
    {"aten.abs.default", lower_pointwise, IOP_ABS},
    {"aten.reciprocal.default", lower_pointwise, IOP_RECIPROCAL},
    {"aten.expm1.default", lower_pointwise, IOP_EXPM1}, {"aten.log1p.default", lower_pointwise, IOP_LOG1P},
    {"aten.floor.default", lower_pointwise, IOP_FLOOR}, {"aten.ceil.default", lower_pointwise, IOP_CEIL},
    {"aten.sign.default", lower_pointwise, IOP_SIGN}, {"aten.round.default", lower_pointwise, IOP_ROUND},
    {"aten.asin.default", lower_pointwise, IOP_ASIN}, {"aten.acos.default", lower_pointwise, IOP_ACOS},
    {"aten.lgamma.default", lower_pointwise, IOP_LGAMMA}, {"aten.fmod.Scalar", lower_pointwise, IOP_FMOD},
    {"aten.fmod.Tensor", lower_pointwise, IOP_FMOD},
    {"aten.floor_divide.default", lower_pointwise, IOP_FLOORDIV},
    {"aten.floor_divide.Scalar", lower_pointwise, IOP_FLOORDIV},
    {"aten.pow.Scalar", lower_pointwise, IOP_POW}, {"aten.where.self", lower_ternary, IOP_WHERE},
    {"prims.fma.default", lower_ternary, IOP_FMA},
    {"aten.clamp.default", lower_clamp, 0}, {"aten.clamp_min.default", lower_clamp, 0},
    {"aten.clamp_max.default", lower_clamp, 0}, {"prims.convert_element_type.default", lower_convert, 0},
    {"aten._to_copy.default", lower_convert, 0}, {"aten.full.default", lower_full, 0},
    {"aten.zeros.default", lower_full, 0}, {"aten.ones.default", lower_full, 0},
    {"aten.scalar_tensor.default", lower_full, 0}, {"aten.full_like.default", lower_full, 0},
    {"aten.zeros_like.default", lower_full, 0}, {"aten.ones_like.default", lower_full, 0},
    {"aten.empty.memory_format", lower_full, 0}, {"aten.empty_strided.default", lower_full, 0},
    {"aten.empty_like.default", lower_full, 0}, {"aten.new_zeros.default", lower_full, 0},
    {"aten.new_ones.default", lower_full, 0}, {"aten.new_empty.default", lower_full, 0},
    {"aten.new_full.default", lower_full, 0}, {"aten.arange.default", lower_arange, 0},
    {"aten.arange.start", lower_arange, 0}, {"aten.arange.start_step", lower_arange, 0},
    {"prims.iota.default", lower_arange, 0}, {"aten.silu.default", lower_composite, 0},
    {"aten.softplus.default", lower_composite, 0}, {"aten.mish.default", lower_composite, 0},
    {"aten.leaky_relu.default", lower_composite, 0}, {"aten.elu.default", lower_composite, 0},
    {"aten.gelu.default", lower_composite, 0}, {"aten.hardsigmoid.default", lower_composite, 0},
    {"aten.hardswish.default", lower_composite, 0}, {"aten.rsub.Scalar", lower_composite, 0},
    {"aten.rsub.Tensor", lower_composite, 0}, {"aten.masked_fill.Scalar", lower_composite, 0},
    {"aten.masked_fill.Tensor", lower_composite, 0}, {"aten.fill.Scalar", lower_composite, 0},
    {"aten.copy.default", lower_composite, 0}, {"aten.trunc.default", lower_pointwise, IOP_TRUNC},
    {"aten.isnan.default", lower_composite, 0}, {"aten.isinf.default", lower_composite, 0},
    {"aten.logical_xor.default", lower_composite, 0}, {"aten.hardtanh.default", lower_composite, 0},
    {"aten.remainder.Tensor", lower_composite, 0}, {"aten.remainder.Scalar", lower_composite, 0},
    {"aten.lift_fresh_copy.default", lower_clone, 0}, {"aten.to.dtype", lower_convert, 0},
    {"aten.clone.default", lower_clone, 0}, {"aten.contiguous.default", lower_clone, 0},
    /* the rest of Inductor's make_pointwise lowerings (lowering.py) */
    {"aten.atan.default", lower_pointwise, IOP_ATAN}, {"aten.sinh.default", lower_pointwise, IOP_SINH},
    {"aten.cosh.default", lower_pointwise, IOP_COSH}, {"aten.asinh.default", lower_pointwise, IOP_ASINH},
    {"aten.acosh.default", lower_pointwise, IOP_ACOSH}, {"aten.atanh.default", lower_pointwise, IOP_ATANH},
    {"aten.exp2.default", lower_pointwise, IOP_EXP2}, {"aten.log2.default", lower_pointwise, IOP_LOG2},
    {"aten.log10.default", lower_pointwise, IOP_LOG10}, {"aten.erfc.default", lower_pointwise, IOP_ERFC},
    {"aten.frexp.Tensor", lower_frexp, 0},
    {"aten.signbit.default", lower_pointwise, IOP_SIGNBIT}, {"aten.atan2.default", lower_pointwise, IOP_ATAN2},
    {"aten.copysign.Tensor", lower_pointwise, IOP_COPYSIGN}, {"aten.copysign.Scalar", lower_pointwise, IOP_COPYSIGN},
    {"aten.hypot.default", lower_pointwise, IOP_HYPOT}, {"aten.nextafter.default", lower_pointwise, IOP_NEXTAFTER},
    {"aten.fmax.default", lower_pointwise, IOP_FMAX}, {"aten.fmin.default", lower_pointwise, IOP_FMIN},
    {"aten.bitwise_not.default", lower_pointwise, IOP_BITWISE_NOT},
    {"aten.bitwise_and.Tensor", lower_pointwise, IOP_BITWISE_AND}, {"aten.bitwise_and.Scalar", lower_pointwise, IOP_BITWISE_AND},
    {"aten.bitwise_or.Tensor", lower_pointwise, IOP_BITWISE_OR}, {"aten.bitwise_or.Scalar", lower_pointwise, IOP_BITWISE_OR},
    {"aten.bitwise_xor.Tensor", lower_pointwise, IOP_BITWISE_XOR}, {"aten.bitwise_xor.Scalar", lower_pointwise, IOP_BITWISE_XOR},
    /* bitwise_left_shift / bitwise_right_shift and their __lshift__ / __rshift__ names (lowering.py) */
    {"aten.bitwise_left_shift.Tensor", lower_pointwise, IOP_BITWISE_LEFT_SHIFT},
    {"aten.bitwise_left_shift.Tensor_Scalar", lower_pointwise, IOP_BITWISE_LEFT_SHIFT},
    {"aten.bitwise_left_shift.Scalar_Tensor", lower_pointwise, IOP_BITWISE_LEFT_SHIFT},
    {"aten.__lshift__.Tensor", lower_pointwise, IOP_BITWISE_LEFT_SHIFT}, {"aten.__lshift__.Scalar", lower_pointwise, IOP_BITWISE_LEFT_SHIFT},
    {"aten.bitwise_right_shift.Tensor", lower_pointwise, IOP_BITWISE_RIGHT_SHIFT},
    {"aten.bitwise_right_shift.Tensor_Scalar", lower_pointwise, IOP_BITWISE_RIGHT_SHIFT},
    {"aten.bitwise_right_shift.Scalar_Tensor", lower_pointwise, IOP_BITWISE_RIGHT_SHIFT},
    {"aten.__rshift__.Tensor", lower_pointwise, IOP_BITWISE_RIGHT_SHIFT}, {"aten.__rshift__.Scalar", lower_pointwise, IOP_BITWISE_RIGHT_SHIFT},
    {"aten.clamp_min.Tensor", lower_pointwise, IOP_MAXIMUM}, {"aten.clamp_max.Tensor", lower_pointwise, IOP_MINIMUM},
    {"aten.where.ScalarOther", lower_ternary, IOP_WHERE}, {"aten.where.ScalarSelf", lower_ternary, IOP_WHERE},
    {"aten.where.Scalar", lower_ternary, IOP_WHERE}, {"aten.div.Tensor_mode", lower_div_mode, 0},
    {"prims.div.default", lower_div_prim, 0},
    {"aten.div.Scalar_mode", lower_div_mode, 0}, {"aten.frac.default", lower_frac, 0},
    {"prims.rev.default", lower_rev, 0},
    /* special functions (pointwise_overrides_data; erfinv is register_pointwise_numeric) */
    {"aten.erfinv.default", lower_special, IOP_ERFINV}, {"aten.i0.default", lower_special, IOP_I0},
    {"aten.special_i0e.default", lower_special, IOP_I0E}, {"aten.special_i1.default", lower_special, IOP_I1},
    {"aten.special_i1e.default", lower_special, IOP_I1E}, {"aten.digamma.default", lower_special, IOP_DIGAMMA},
    {"aten.polygamma.default", lower_special, IOP_POLYGAMMA}, {"aten.special_erfcx.default", lower_special, IOP_ERFCX},
    {"aten.special_ndtri.default", lower_special, IOP_NDTRI}, {"aten.special_log_ndtr.default", lower_special, IOP_LOG_NDTR},
    {"aten.special_bessel_j0.default", lower_special, IOP_BESSEL_J0}, {"aten.special_bessel_j1.default", lower_special, IOP_BESSEL_J1},
    {"aten.special_bessel_y0.default", lower_special, IOP_BESSEL_Y0}, {"aten.special_bessel_y1.default", lower_special, IOP_BESSEL_Y1},
    {"aten.special_modified_bessel_i0.default", lower_special, IOP_MODIFIED_BESSEL_I0},
    {"aten.special_modified_bessel_i1.default", lower_special, IOP_MODIFIED_BESSEL_I1},
    {"aten.special_spherical_bessel_j0.default", lower_special, IOP_SPHERICAL_BESSEL_J0},
    {"aten.special_zeta.default", lower_special, IOP_ZETA},
};
const int lowering_pointwise_count = sizeof lowering_pointwise_table / sizeof lowering_pointwise_table[0];
