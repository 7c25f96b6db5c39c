/* decomp.c — the decomposition machinery (decomp.h): the builder decompositions are written
 * against, the table lookup, and the three users of one decomposition: the reference
 * interpreter (decomp_eval runs it on a tiny graph of the call's runtime tensors), meta
 * inference (decomp_shape, the same on the node's argument metas) and the decompose_graph
 * pass Inductor's lowering starts from. The decompositions themselves are in decomp_*.c. */
#include "ops/decomp.h"
#include "ops/interp.h"
#include "ops/ops_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookup ---- */

const DecompDef *decomp_find(const char *name) {
    const OpDef *op = op_lookup(name);
    if (op && op->eval == decomp_eval && op->data) return op->data;
    if (!name) return NULL;
    if (!strncmp(name, "torch.ops.", 10)) name += 10;
    for (int i = 0; i < decomp_extra_count; i++)
        if (!strcmp(decomp_extra_table[i].name, name)) return &decomp_extra_table[i];
    return NULL;
}

/* ---- errors ---- */

int db_fail(DecompB *b, const char *fmt, ...) {
    if (b->failed) return -1;
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->failed = true;
    return mi_err(b->ctx, b->g->source, b->n->src_line, 0, "node '%s' (%s): %s", b->n->name, b->n->target, msg);
}

/* ---- arguments ---- */

const Value *db_arg(DecompB *b, int pos, const char *name) {
    const Node *n = b->n;
    if (pos >= 0 && pos < n->nargs) return &n->args[pos];
    if (name)
        for (int k = 0; k < n->nkwargs; k++)
            if (!strcmp(n->kwargs[k].name, name)) return &n->kwargs[k].v;
    return NULL;
}

Node *db_opt_tensor(DecompB *b, int pos, const char *name) {
    const Value *v = db_arg(b, pos, name);
    if (!v || v->kind == V_NONE) return NULL;
    if (v->kind != V_NODE) { db_fail(b, "argument '%s' must be a tensor", name); return NULL; }
    return v->node;
}

Node *db_tensor(DecompB *b, int pos, const char *name) {
    Node *x = db_opt_tensor(b, pos, name);
    if (!x) db_fail(b, "missing tensor argument '%s'", name);
    return x;
}

int64_t db_int(DecompB *b, int pos, const char *name, int64_t dflt) {
    const Value *v = db_arg(b, pos, name);
    int64_t r;
    if (!v || v->kind == V_NONE) return dflt;
    if (value_as_int(v, &r)) return r;
    if (v->kind == V_SYM && sym_is_int(v->sym, &r)) return r;
    if (v->kind == V_NODE && v->node->is_sym && v->node->sym_val && sym_is_int(v->node->sym_val, &r)) return r;
    db_fail(b, "argument '%s' must be a constant int", name);
    return dflt;
}

double db_float(DecompB *b, int pos, const char *name, double dflt) {
    const Value *v = db_arg(b, pos, name);
    double r;
    if (!v || v->kind == V_NONE) return dflt;
    if (value_as_double(v, &r)) return r;
    db_fail(b, "argument '%s' must be a constant number", name);
    return dflt;
}

bool db_bool(DecompB *b, int pos, const char *name, bool dflt) {
    const Value *v = db_arg(b, pos, name);
    int64_t r;
    if (!v || v->kind == V_NONE) return dflt;
    if (value_as_int(v, &r)) return r != 0;
    db_fail(b, "argument '%s' must be a bool", name);
    return dflt;
}

const char *db_str(DecompB *b, int pos, const char *name, const char *dflt) {
    const Value *v = db_arg(b, pos, name);
    return v && v->kind == V_STR ? v->s : dflt;
}

int db_ints(DecompB *b, int pos, const char *name, int64_t *out, int max) {
    const Value *v = db_arg(b, pos, name);
    if (!v || v->kind == V_NONE) return -1;
    if (v->kind != V_LIST && v->kind != V_TUPLE) {
        out[0] = db_int(b, pos, name, 0);
        return 1;
    }
    if (v->list.n > max) { db_fail(b, "argument '%s' has too many entries", name); return -1; }
    for (int k = 0; k < v->list.n; k++) {
        const Value *it = &v->list.items[k];
        if (!value_as_int(it, &out[k]) && !(it->kind == V_SYM && sym_is_int(it->sym, &out[k])) &&
            !(it->kind == V_NODE && it->node->is_sym && it->node->sym_val && sym_is_int(it->node->sym_val, &out[k]))) {
            db_fail(b, "argument '%s' must be a list of constant ints", name);
            return -1;
        }
    }
    return v->list.n;
}

Value db_scalar(DecompB *b, int pos, const char *name, Value dflt) {
    const Value *v = db_arg(b, pos, name);
    if (!v || v->kind == V_NONE) return dflt;
    if (v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL || v->kind == V_SYM) return *v;
    if (v->kind == V_NODE && v->node->is_sym) return *v;
    db_fail(b, "argument '%s' must be a number", name);
    return dflt;
}

/* ---- metas ---- */

const TensorMeta *db_meta(DecompB *b, Node *x) {
    if (!x) { db_fail(b, "a tensor is missing"); return NULL; }
    if (x->has_meta) return &x->meta;
    TensorMeta *out = arena_alloc(&b->g->arena, OP_MAX_OUTS * sizeof *out);
    int nout = OP_MAX_OUTS;
    if (op_infer_meta(b->ctx, b->g, x, out, &nout) || nout != 1 || out[0].dtype == DT_INVALID) {
        if (!b->failed) { b->failed = true; if (!b->ctx->err.msg[0]) db_fail(b, "no metadata for '%s'", x->name); }
        return NULL;
    }
    return &out[0];
}

int db_ndim(DecompB *b, Node *x) { const TensorMeta *m = db_meta(b, x); return m ? m->ndim : 0; }
DType db_dtype(DecompB *b, Node *x) { const TensorMeta *m = db_meta(b, x); return m ? m->dtype : DT_F32; }

int db_wrap_dim(DecompB *b, int64_t dim, int ndim) {
    int64_t r = ndim > 0 ? ndim : 1;
    if (dim < -r || dim >= r) { db_fail(b, "dimension %lld out of range for rank %d", (long long)dim, ndim); return 0; }
    return (int)(dim < 0 ? dim + r : dim);
}

Expr *db_size(DecompB *b, Node *x, int dim) {
    const TensorMeta *m = db_meta(b, x);
    if (!m) return sym_int(b->ctx->sym, 1);
    if (m->ndim == 0) return sym_int(b->ctx->sym, 1);
    return m->size[db_wrap_dim(b, dim, m->ndim)];
}

bool db_size_const(DecompB *b, Node *x, int dim, int64_t *v) { return sym_is_int(db_size(b, x, dim), v); }

Value db_expr_val(DecompB *b, Expr *e) {
    int64_t v;
    if (sym_is_int(e, &v)) return value_int(v);
    Value r = {.kind = V_SYM};
    r.sym = e;
    (void)b;
    return r;
}

Value db_size_val(DecompB *b, Node *x, int dim) { return db_expr_val(b, db_size(b, x, dim)); }

Value db_shape_val(DecompB *b, Node *x) {
    const TensorMeta *m = db_meta(b, x);
    Value items[MI_MAX_DIMS];
    int n = m ? m->ndim : 0;
    for (int i = 0; i < n; i++) items[i] = db_expr_val(b, m->size[i]);
    return value_list(b->g, items, n);
}

/* ---- emitting ---- */

Value VDT(DType dt) { Value v = {.kind = V_DTYPE}; v.dtype = dt; return v; }

Value db_ilist(DecompB *b, const int64_t *v, int n) {
    Value items[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) items[i] = value_int(v[i]);
    return value_list(b->g, items, n);
}

Value db_vlist(DecompB *b, const Value *v, int n) { return value_list(b->g, v, n); }

static bool has_null_node(const Value *v) {
    if (v->kind == V_NODE) return v->node == NULL;
    if (v->kind == V_LIST || v->kind == V_TUPLE)
        for (int i = 0; i < v->list.n; i++) if (has_null_node(&v->list.items[i])) return true;
    return false;
}

/* "aten.mul.Tensor" -> "mul" (FX's naming of call nodes) */
static const char *base_name(const char *target, char *buf, size_t n) {
    const char *p = strchr(target, '.');
    p = p ? p + 1 : target;
    size_t l = strcspn(p, ".");
    if (l >= n) l = n - 1;
    memcpy(buf, p, l);
    buf[l] = 0;
    return buf;
}

Node *db_call(DecompB *b, const char *target, const Value *args, int nargs, const Kwarg *kw, int nkw) {
    if (b->failed) return NULL;
    for (int i = 0; i < nargs; i++)
        if (has_null_node(&args[i])) { db_fail(b, "decomposition: an operand of %s is missing", target); return NULL; }
    for (int i = 0; i < nkw; i++)
        if (has_null_node(&kw[i].v)) { db_fail(b, "decomposition: an operand of %s is missing", target); return NULL; }
    const OpDef *op = op_lookup(target);
    if (!op) { db_fail(b, "its decomposition needs op '%s', which is not in the registry", target); return NULL; }
    char nb[64];
    Node *x = graph_insert_before(b->g, b->anchor, N_CALL_FUNCTION, graph_unique_name(b->g, base_name(target, nb, sizeof nb)), target);
    graph_set_args(b->g, x, args, nargs);
    if (nkw) graph_set_kwargs(b->g, x, kw, nkw);
    x->op = op;
    x->stack = b->n->stack;
    x->src_line = b->n->src_line;
    if (op_infer_node_meta(b->ctx, b->g, x)) { b->failed = true; return NULL; }
    return x;
}

Node *db_getitem(DecompB *b, Node *t, int k) { return db_op(b, "operator.getitem", VN(t), VI(k)); }

/* ---- torch functions ---- */

Node *db_binary(DecompB *b, const char *target, Node *x, Node *y) { return db_op(b, target, VN(x), VN(y)); }
Node *db_unary(DecompB *b, const char *target, Node *x) { return db_op(b, target, VN(x)); }
Node *db_add(DecompB *b, Node *x, Node *y) { return db_binary(b, "aten.add.Tensor", x, y); }
Node *db_sub(DecompB *b, Node *x, Node *y) { return db_binary(b, "aten.sub.Tensor", x, y); }
Node *db_mul(DecompB *b, Node *x, Node *y) { return db_binary(b, "aten.mul.Tensor", x, y); }
Node *db_div(DecompB *b, Node *x, Node *y) { return db_binary(b, "aten.div.Tensor", x, y); }
Node *db_adds(DecompB *b, Node *x, double s) { return db_op(b, "aten.add.Tensor", VN(x), VF(s)); }
Node *db_muls(DecompB *b, Node *x, double s) { return db_op(b, "aten.mul.Tensor", VN(x), VF(s)); }
Node *db_rsubs(DecompB *b, double s, Node *x) { return db_op(b, "aten.rsub.Scalar", VN(x), VF(s)); }
Node *db_where(DecompB *b, Node *c, Node *x, Node *y) { return db_op(b, "aten.where.self", VN(c), VN(x), VN(y)); }
Node *db_where_s(DecompB *b, Node *c, Node *x, double s) { return db_op(b, "aten.where.ScalarOther", VN(c), VN(x), VF(s)); }

Node *db_to(DecompB *b, Node *x, DType dt) {
    if (!x || b->failed) return NULL;
    if (db_dtype(b, x) == dt) return x;
    return db_op(b, "prims.convert_element_type.default", VN(x), VDT(dt));
}

Node *db_full_like(DecompB *b, Node *x, double v, DType dt) {
    Kwarg kw[1] = {{"dtype", VDT(dt == DT_INVALID ? db_dtype(b, x) : dt)}};
    return db_call(b, "aten.full_like.default", DBV(VN(x), VF(v)), kw, 1);
}

Node *db_scalar_tensor(DecompB *b, double v, DType dt) {
    Kwarg kw[1] = {{"dtype", VDT(dt)}};
    return db_call(b, "aten.scalar_tensor.default", DBV(VF(v)), kw, 1);
}

static Node *reduce_dims(DecompB *b, const char *target, Node *x, const int64_t *dims, int ndims, bool keepdim) {
    Value d = ndims < 0 ? value_none() : db_ilist(b, dims, ndims);
    if (ndims < 0 && !keepdim && !strcmp(target, "aten.sum.dim_IntList")) return db_op(b, "aten.sum.default", VN(x));
    return db_op(b, target, VN(x), d, VB(keepdim));
}
Node *db_sum(DecompB *b, Node *x, const int64_t *dims, int ndims, bool keepdim) {
    return reduce_dims(b, "aten.sum.dim_IntList", x, dims, ndims, keepdim);
}
Node *db_amax(DecompB *b, Node *x, const int64_t *dims, int ndims, bool keepdim) {
    return ndims < 0 ? db_op(b, "aten.amax.default", VN(x), db_ilist(b, NULL, 0), VB(keepdim))
                     : reduce_dims(b, "aten.amax.default", x, dims, ndims, keepdim);
}
Node *db_unsqueeze(DecompB *b, Node *x, int64_t dim) { return db_op(b, "aten.unsqueeze.default", VN(x), VI(dim)); }
Node *db_squeeze_dims(DecompB *b, Node *x, const int64_t *dims, int n) {
    return db_op(b, "aten.squeeze.dims", VN(x), db_ilist(b, dims, n));
}
Node *db_view(DecompB *b, Node *x, Value shape) { return db_op(b, "aten.view.default", VN(x), shape); }
Node *db_reshape(DecompB *b, Node *x, Value shape) { return db_op(b, "aten.reshape.default", VN(x), shape); }
Node *db_permute(DecompB *b, Node *x, const int64_t *perm, int n) { return db_op(b, "aten.permute.default", VN(x), db_ilist(b, perm, n)); }
Node *db_expand(DecompB *b, Node *x, Value shape) { return db_op(b, "aten.expand.default", VN(x), shape); }
Node *db_clone(DecompB *b, Node *x) { return db_op(b, "aten.clone.default", VN(x)); }
Node *db_arange(DecompB *b, Value end, DType dt) {
    Kwarg kw[1] = {{"dtype", VDT(dt)}};
    return db_call(b, "aten.arange.start_step", DBV(VI(0), end, VI(1)), kw, 1);
}
Node *db_slice(DecompB *b, Node *x, int64_t dim, Value start, Value end, int64_t step) {
    return db_op(b, "aten.slice.Tensor", VN(x), VI(dim), start, end, VI(step));
}
Node *db_cat(DecompB *b, Node **xs, int n, int64_t dim) {
    Value items[64];
    if (n > 64) { db_fail(b, "too many tensors to concatenate"); return NULL; }
    for (int i = 0; i < n; i++) items[i] = value_node(xs[i]);
    return db_op(b, "aten.cat.default", value_list(b->g, items, n), VI(dim));
}

DType db_opmath(DType dt) { return dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt; }

DType db_float_dtype(DecompB *b, Node *x, Node *y) {
    PromoteState p;
    promote_init(&p);
    if (x && db_meta(b, x)) promote_tensor(&p, db_meta(b, x));
    if (y && db_meta(b, y)) promote_tensor(&p, db_meta(b, y));
    DType dt = promote_result(&p);
    return ev_intlike(dt) ? default_float() : dt;
}

/* ---- the tiny graph the interpreter and meta inference run a decomposition on ---- */

typedef struct Mini {
    MiCtx *ctx;
    Graph *g;
    ShapeArgs *sa;                  /* meta mode (node or eval), or NULL */
    const OpCall *call;             /* interpreter mode */
    IValue *inputs; int ninputs, cap;
} Mini;

static Node *mini_placeholder(Mini *m, const TensorMeta *meta, Tensor *t) {
    char nm[32];
    snprintf(nm, sizeof nm, "arg%d", m->ninputs);
    Node *p = graph_add_node(m->g, N_PLACEHOLDER, nm, nm);
    graph_set_meta(m->g, p, meta);
    p->has_meta = p->annotated = true;
    if (m->ninputs == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->inputs = mi_xrealloc(m->inputs, (size_t)m->cap * sizeof *m->inputs);
    }
    memset(&m->inputs[m->ninputs], 0, sizeof(IValue));
    if (t) { m->inputs[m->ninputs].kind = IV_TENSOR; m->inputs[m->ninputs].t = tensor_ref(t); }
    m->ninputs++;
    return p;
}

static void tensor_meta_of(Mini *m, const Tensor *t, TensorMeta *meta, Expr **sz, Expr **st) {
    memset(meta, 0, sizeof *meta);
    meta->dtype = t->dtype;
    meta->ndim = t->ndim;
    meta->size = sz;
    meta->stride = st;
    for (int i = 0; i < t->ndim; i++) { sz[i] = sym_int(m->ctx->sym, t->size[i]); st[i] = sym_int(m->ctx->sym, t->stride[i]); }
    meta->offset = sym_int(m->ctx->sym, 0);
    meta->device = (Device){DEV_CPU, -1};
    meta->has_stride = meta->has_device = true;
}

/* v (with its runtime value iv in interpreter mode) as a Value of the tiny graph */
static int mini_value(Mini *m, const Value *v, const IValue *iv, Value *out) {
    *out = value_copy(m->g, v);
    switch (v->kind) {
    case V_NODE: {
        const Node *src = v->node;
        if (iv) {
            switch (iv->kind) {
            case IV_TENSOR: {
                TensorMeta meta; Expr *sz[MI_MAX_DIMS], *st[MI_MAX_DIMS];
                tensor_meta_of(m, iv->t, &meta, sz, st);
                *out = value_node(mini_placeholder(m, &meta, iv->t));
                return 0;
            }
            case IV_INT: *out = value_int(iv->i); return 0;
            case IV_BOOL: *out = value_bool(iv->i != 0); return 0;
            case IV_FLOAT: *out = value_float(iv->f); return 0;
            case IV_NONE: *out = value_none(); return 0;
            default: return mi_err(m->ctx, NULL, 0, 0, "argument node '%s' has a value a decomposition cannot take", src->name);
            }
        }
        if (src->is_sym && src->sym_val) { Value s = {.kind = V_SYM}; s.sym = src->sym_val; *out = s; return 0; }
        if (src->symbool) return mi_err(m->ctx, NULL, 0, 0, "argument node '%s' is a SymBool", src->name);
        TensorMeta *tm;
        ArgRef a = {v, NULL};
        if (sa_tensor(m->sa, a, src->name, &tm)) return -1;
        *out = value_node(mini_placeholder(m, tm, NULL));
        return 0;
    }
    case V_LIST: case V_TUPLE: {
        Value *items = mi_xcalloc((size_t)(v->list.n ? v->list.n : 1), sizeof *items);
        int rc = 0;
        for (int k = 0; k < v->list.n && rc == 0; k++) {
            const IValue *it = iv && iv->kind == IV_TUPLE && k < iv->n ? &iv->items[k] : NULL;
            rc = mini_value(m, &v->list.items[k], it, &items[k]);
        }
        if (rc == 0) *out = v->kind == V_LIST ? value_list(m->g, items, v->list.n) : value_tuple(m->g, items, v->list.n);
        free(items);
        return rc;
    }
    case V_SYM:
        if (m->call) {
            int64_t x;
            if (sym_eval(m->ctx, v->sym, m->call->syms, m->call->nsyms, &x)) return -1;
            *out = value_int(x);
        }
        return 0;
    default: return 0;
    }
}

/* Build the tiny graph: placeholders for the tensor arguments, the call, and run the
 * decomposition into it; outs receive the results; the call node is removed. */
static int mini_build(Mini *m, const OpDef *op, const Value *args, const IValue *argv, int nargs,
                      const Kwarg *kw, const IValue *kwv, int nkw, const Node *orig, Value *outs, int *nout) {
    const DecompDef *d = decomp_find(op->name);
    if (!d) return mi_err(m->ctx, NULL, 0, 0, "no decomposition for %s", op->name);
    m->g = graph_new("decomposition");
    m->g->source = m->sa && m->sa->graph ? m->sa->graph->source : NULL;
    Value *a = mi_xcalloc((size_t)(nargs + 1), sizeof *a);
    Kwarg *k = mi_xcalloc((size_t)(nkw + 1), sizeof *k);
    int rc = 0;
    for (int i = 0; i < nargs && rc == 0; i++) rc = mini_value(m, &args[i], argv ? &argv[i] : NULL, &a[i]);
    for (int i = 0; i < nkw && rc == 0; i++) { k[i].name = kw[i].name; rc = mini_value(m, &kw[i].v, kwv ? &kwv[i] : NULL, &k[i].v); }
    Node *call = NULL;
    if (rc == 0) {
        call = graph_add_node(m->g, N_CALL_FUNCTION, orig ? orig->name : "call", op->name);
        graph_set_args(m->g, call, a, nargs);
        graph_set_kwargs(m->g, call, k, nkw);
        call->op = op;
        call->src_line = orig ? orig->src_line : 0;
        DecompB b = {.ctx = m->ctx, .g = m->g, .anchor = call, .n = call};
        *nout = 0;
        rc = d->fn(&b, outs, nout);
        if (rc == DECOMP_SKIP)
            rc = mi_err(m->ctx, NULL, 0, 0, "%s: no implementation for these arguments (its decomposition does not apply)", op->name);
        else if (rc == 0 && b.failed) rc = -1;
        for (int i = 0; rc == 0 && i < *nout; i++)
            if (outs[i].kind == V_NODE && outs[i].node == call) rc = mi_err(m->ctx, NULL, 0, 0, "%s: its decomposition returns itself", op->name);
    }
    if (call) graph_remove_node(m->g, call);
    free(a);
    free(k);
    return rc;
}

static void mini_free(Mini *m) {
    for (int i = 0; i < m->ninputs; i++) ivalue_clear(&m->inputs[i]);
    free(m->inputs);
    if (m->g) graph_free(m->g);
}

int decomp_eval(const OpCall *c, IValue *out) {
    Mini m = {.ctx = c->ctx, .call = c};
    Value *outs = mi_xcalloc(OP_MAX_OUTS, sizeof *outs);
    int nout = 0;
    int rc = mini_build(&m, c->op, c->args, c->argv, c->nargs, c->kwargs, c->kwargv, c->nkwargs, c->node, outs, &nout);
    IValue *res = NULL;
    int nres = 0;
    if (rc == 0) {
        Node *o = graph_add_node(m.g, N_OUTPUT, "output", "output");
        Value t = value_tuple(m.g, outs, nout);
        graph_set_args(m.g, o, &t, 1);
        rc = interp_run(c->ctx, m.g, m.inputs, m.ninputs, &res, &nres);
    }
    if (rc == 0) {
        if (nres == 1 && !(c->op->flags & OPF_TUPLE)) {
            *out = res[0];
            free(res);
        } else {
            memset(out, 0, sizeof *out);
            out->kind = IV_TUPLE;
            out->n = nres;
            out->items = res;
        }
    } else if (c->node && !strstr(c->ctx->err.msg, c->node->name)) {
        char msg[900];
        snprintf(msg, sizeof msg, "%.800s", c->ctx->err.msg);
        mi_err(c->ctx, c->graph ? c->graph->source : NULL, c->node->src_line, 0, "node '%s' (%s): %s", c->node->name, c->op->name, msg);
    }
    free(outs);
    mini_free(&m);
    return rc;
}

int decomp_shape(ShapeArgs *sa, TensorMeta *out, int *nout) {
    Mini m = {.ctx = sa->ctx, .sa = sa, .call = sa->eval ? sa->call : NULL};
    Value *outs = mi_xcalloc(OP_MAX_OUTS, sizeof *outs);
    int n = 0;
    int rc = mini_build(&m, sa->op, sa->args, sa->argv, sa->nargs, sa->kwargs, sa->kwargv, sa->nkwargs, sa->node, outs, &n);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (outs[i].kind != V_NODE) { memset(&out[i], 0, sizeof out[i]); out[i].dtype = DT_INVALID; continue; }
        DecompB b = {.ctx = sa->ctx, .g = m.g, .anchor = NULL, .n = outs[i].node};
        const TensorMeta *tm = db_meta(&b, outs[i].node);
        if (!tm) { rc = -1; break; }
        meta_copy(sa, &out[i], tm);
    }
    if (rc == 0) *nout = n;
    else if (sa->node && !strstr(sa->ctx->err.msg, sa->node->name)) {
        char msg[900];
        snprintf(msg, sizeof msg, "%.800s", sa->ctx->err.msg);
        sa_err(sa, "%s", msg);
    }
    free(outs);
    mini_free(&m);
    return rc;
}

/* ---- the pass ---- */

static bool is_getitem_of(const Node *u, const Node *n, int64_t *k) {
    return u->kind == N_CALL_FUNCTION && u->target && !strcmp(u->target, "operator.getitem") && u->nargs == 2 &&
           u->args[0].kind == V_NODE && u->args[0].node == n && value_as_int(&u->args[1], k);
}

/* Replace n by outs: a tuple op's getitem users by the items, else every use by outs[0]. */
static int replace_node(MiCtx *ctx, Graph *g, Node *n, const Value *outs, int nout) {
    graph_compute_users(g);
    bool tuple = (n->op && (n->op->flags & OPF_TUPLE)) || nout != 1;
    if (tuple) {
        int nu = n->nusers;
        Node **users = mi_xcalloc((size_t)(nu ? nu : 1), sizeof *users);
        memcpy(users, n->users, (size_t)nu * sizeof *users);
        for (int i = 0; i < nu; i++) {
            int64_t k;
            if (!is_getitem_of(users[i], n, &k) || k < 0 || k >= nout || outs[k].kind != V_NODE) {
                free(users);
                return mi_err(ctx, g->source, n->src_line, 0, "node '%s' (%s): a use of its result cannot take the decomposition's",
                              n->name, n->target);
            }
        }
        for (int i = 0; i < nu; i++) {
            int64_t k;
            is_getitem_of(users[i], n, &k);
            graph_replace_all_uses(g, users[i], outs[k].node);
            if (graph_index_of(g, users[i]) >= 0) graph_remove_node(g, users[i]);
        }
        free(users);
    } else {
        if (outs[0].kind != V_NODE)
            return mi_err(ctx, g->source, n->src_line, 0, "node '%s' (%s): its decomposition returns no tensor", n->name, n->target);
        graph_replace_all_uses(g, n, outs[0].node);
    }
    graph_remove_node(g, n);
    return 0;
}

int decompose_graph(MiCtx *ctx, Graph *g) {
    int count = 0;
    for (int s = 0; s < g->nsubs; s++) {
        int r = decompose_graph(ctx, g->subs[s].g);
        if (r < 0) return -1;
        count += r;
    }
    Value *outs = mi_xcalloc(OP_MAX_OUTS, sizeof *outs);
    int guard = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION || !n->target) continue;
        const DecompDef *d = decomp_find(n->target);
        if (!d || !d->inductor) continue;
        if (++guard > 100000) { free(outs); return mi_err(ctx, g->source, n->src_line, 0, "decompositions do not terminate (at node '%s')", n->name); }
        DecompB b = {.ctx = ctx, .g = g, .anchor = n, .n = n};
        int nout = 0;
        int first = i;
        int rc = d->fn(&b, outs, &nout);
        if (rc == DECOMP_SKIP) continue;
        if (rc < 0 || b.failed) { free(outs); return -1; }
        if (replace_node(ctx, g, n, outs, nout)) { free(outs); return -1; }
        count++;
        i = first - 1;           /* look at the new nodes too: they may decompose further */
    }
    free(outs);
    return count;
}

/* Decompositions of ops that also have their own kernel in the registry; decompose_graph
 * applies the `inductor` ones (a DECOMP_SKIP keeps the kernel: repeat_interleave.Tensor
 * without an int output_size). */
const DecompDef decomp_extra_table[] = {
    {"aten.repeat_interleave.Tensor", decomp_repeat_interleave_tensor, true},
    {"aten.randint.default", decomp_randint_default, true},
};
const int decomp_extra_count = sizeof decomp_extra_table / sizeof decomp_extra_table[0];
