/* ops_scatter.c — scatters with a reduction and the index_* family: scatter_reduce.two,
 * scatter.reduce / value_reduce, index_reduce and masked_scatter have reference kernels here
 * (Inductor lowers or falls back on them); index_add, index_copy, index_fill, take, put and
 * isin are decompositions into index_put / index (torch/_decomp/decompositions.py,
 * torch/_refs), written once in the table at the end. */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RD_SUM, RD_PROD, RD_MEAN, RD_AMAX, RD_AMIN, RD_SET };

static int reduce_kind(ShapeArgs *sa, const char *r, int *k) {
    if (!r) return sa_err(sa, "missing argument 'reduce'");
    if (!strcmp(r, "sum") || !strcmp(r, "add")) *k = RD_SUM;
    else if (!strcmp(r, "prod") || !strcmp(r, "multiply")) *k = RD_PROD;
    else if (!strcmp(r, "mean")) *k = RD_MEAN;
    else if (!strcmp(r, "amax")) *k = RD_AMAX;
    else if (!strcmp(r, "amin")) *k = RD_AMIN;
    else return sa_err(sa, "reduce argument must be one of sum, prod, mean, amax, amin, got '%s'", r);
    return 0;
}

static double combine(int k, double a, double b) {
    switch (k) {
    case RD_SUM: case RD_MEAN: return a + b;
    case RD_PROD: return a * b;
    case RD_AMAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case RD_AMIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    default: return b;
    }
}

static int shape_self(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    meta_like(sa, out, x, x->dtype);
    meta_contiguous_strides(sa, out);
    return 0;
}

/* storage position in t of the element at the coordinates of element k (row-major) of `shape`,
 * with coordinate `dim` replaced by v when dim >= 0 */
static int64_t pos_at(const Tensor *t, const Tensor *shape, int64_t k, int dim, int64_t v) {
    int64_t p = t->offset;
    for (int i = shape->ndim - 1; i >= 0; i--) {
        int64_t c = k % shape->size[i];
        k /= shape->size[i];
        if (i == dim) c = v;
        if (i < t->ndim) p += c * t->stride[i];
    }
    return p;
}

static double ld(const Tensor *t, int64_t p) { return ev_intlike(t->dtype) ? (double)tensor_load_i(t, p) : tensor_load_f(t, p); }
static void st(Tensor *t, int64_t p, double v) { if (ev_intlike(t->dtype)) tensor_store_i(t, p, (int64_t)(ev_intlike(t->dtype) ? floor(v) : v)); else tensor_store_f(t, p, v); }

/* The shared kernel: for each element k of `where` (index shape), target = out at (coords of k
 * with dim = index value); value = src at coords of k (or `value`). include_self=false: the first
 * value reaching a target replaces self's. mean divides by the count at the end. */
static int scatter_reduce_run(ShapeArgs *sa, Tensor *o, const Tensor *idx, int dim, const Tensor *src, double value,
                              int kind, bool include_self, bool index_select_style) {
    int64_t n = tensor_numel(idx), dsize = o->ndim ? o->size[dim] : 1;
    int64_t total = tensor_numel(o);
    int64_t *count = mi_xcalloc((size_t)(total ? total : 1), sizeof *count);
    Tensor *shape = index_select_style ? (Tensor *)src : (Tensor *)idx;
    int64_t iters = index_select_style ? tensor_numel(src) : n;
    for (int64_t k = 0; k < iters; k++) {
        int64_t v;
        if (index_select_style) {
            int64_t rem = k, c = 0;
            for (int i = src->ndim - 1; i >= 0; i--) { if (i == dim) c = rem % src->size[i]; rem /= src->size[i]; }
            v = tensor_load_i(idx, tensor_pos(idx, src->ndim ? c : 0));
        } else v = tensor_load_i(idx, tensor_pos(idx, k));
        if (v < -dsize || v >= dsize) {
            free(count);
            return sa_err(sa, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, dim, (long long)dsize);
        }
        if (v < 0) v += dsize;
        int64_t op = pos_at(o, shape, k, o->ndim ? dim : -1, v);
        double sv = src ? ld(src, pos_at(src, shape, k, -1, 0)) : value;
        /* count per output element: its linear index from the storage position (o is contiguous) */
        int64_t lin = op - o->offset;
        if (kind == RD_SET) { st(o, op, sv); continue; }
        if (!include_self && count[lin] == 0) st(o, op, sv);
        else st(o, op, combine(kind, ld(o, op), sv));
        count[lin]++;
    }
    if (kind == RD_MEAN)
        for (int64_t e = 0; e < total; e++) {
            int64_t c = count[e] + (include_self ? 1 : 0);
            if (count[e] == 0) continue;
            int64_t p = o->offset + e;
            double v = ld(o, p) / (double)c;
            if (ev_intlike(o->dtype)) v = floor(v);
            st(o, p, v);
        }
    free(count);
    return 0;
}

/* scatter_reduce.two(self, dim, index, src, reduce, include_self=True), scatter.reduce(self, dim,
 * index, src, reduce), scatter.value_reduce(self, dim, index, value, reduce) and
 * index_reduce(self, dim, index, source, reduce, include_self=True) */
static int scatter_reduce_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    int kind = RD_SUM;
    bool index_style = !strcmp(c->op->name, "aten.index_reduce.default");
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self")), *idx = ev_tensor(sa_arg(sa, 2, "index"));
    ArgRef as = sa_arg(sa, 3, index_style ? "source" : "src");
    Tensor *src = arg_is_tensor(sa, as) ? ev_tensor(as) : NULL;
    double value = 0;
    DType vt;
    if (!src && sa_scalar(sa, as, "value", &value, &vt)) return -1;
    if (reduce_kind(sa, arg_str(sa_arg(sa, 4, "reduce"), NULL), &kind)) return -1;
    bool include_self = arg_bool(sa_arg(sa, 5, "include_self"), true);
    int64_t dim;
    if (sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim) || sa_dim(sa, dim, x->ndim, &dim)) return -1;
    if (!x || !idx || (!index_style && idx->ndim != x->ndim && tensor_numel(idx))) { sa_err(sa, "index must have the rank of self"); return -1; }
    if (tensor_copy_into(c->ctx, o, x)) return -1;
    if (index_style && (!src || src->ndim != x->ndim)) { sa_err(sa, "source must have the rank of self"); return -1; }
    if (scatter_reduce_run(sa, o, idx, (int)dim, src, value, kind, include_self, index_style)) return -1;
    return 0;
}
static int scatter_reduce_eval(const OpCall *c, IValue *out) { return ev_run(c, out, scatter_reduce_fill); }

/* masked_scatter(self, mask, source): self with its mask-true elements (row-major order) taken
 * from source's elements in order */
static int masked_scatter_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self")), *mask = ev_tensor(sa_arg(sa, 1, "mask")), *src = ev_tensor(sa_arg(sa, 2, "source"));
    if (!x || !mask || !src) { sa_err(sa, "needs tensors self, mask, source"); return -1; }
    if (tensor_copy_into(c->ctx, o, x)) return -1;
    int64_t total = tensor_numel(o), next = 0, ns = tensor_numel(src);
    for (int64_t e = 0; e < total; e++) {
        int64_t rem = e, mp = mask->offset;
        for (int i = o->ndim - 1; i >= 0; i--) {
            int64_t ci = rem % o->size[i];
            rem /= o->size[i];
            int j = i - (o->ndim - mask->ndim);
            if (j >= 0 && mask->size[j] != 1) mp += ci * mask->stride[j];
        }
        if (!tensor_load_i(mask, mp)) continue;
        if (next >= ns) { sa_err(sa, "masked_scatter: expected source to have at least %lld elements", (long long)next + 1); return -1; }
        st(o, tensor_pos(o, e), ld(src, tensor_pos(src, next++)));
    }
    return 0;
}
static int masked_scatter_eval(const OpCall *c, IValue *out) { return ev_run(c, out, masked_scatter_fill); }

/* masked_scatter_backward(grad_output, mask, sizes): source's gradient, as ATen's
 * masked_scatter_backward_symint (Tensor.cpp): grad_output.masked_select(mask) (the two
 * broadcast), zeros appended up to numel(sizes), viewed as sizes; contiguous, grad's dtype.
 * Inductor keeps it a FallbackKernel (make_fallback). Example: grad [[1, 2], [3, 4]], mask
 * [[1, 0], [0, 1]], sizes [3] -> [1, 4, 0]. */
static int shape_masked_scatter_backward(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *g;
    Expr *size[MI_MAX_DIMS];
    int n;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &g) ||
        sa_int_list(sa, sa_arg(sa, 2, "sizes"), "sizes", size, &n, MI_MAX_DIMS)) return -1;
    meta_alloc(sa, out, g->dtype, n, g->device);
    for (int i = 0; i < n; i++) out->size[i] = size[i];
    meta_contiguous_strides(sa, out);
    *nout = 1;
    return 0;
}

static int masked_scatter_backward_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *g = ev_tensor(sa_arg(sa, 0, "grad_output")), *mask = ev_tensor(sa_arg(sa, 1, "mask"));
    if (!g || !mask) { sa_err(sa, "needs tensors grad_output and mask"); return -1; }
    int nd = g->ndim > mask->ndim ? g->ndim : mask->ndim;
    int64_t bs[MI_MAX_DIMS], total = 1, next = 0, no = tensor_numel(o);
    for (int i = 0; i < nd; i++) {   /* masked_select broadcasts grad_output and mask */
        int jg = i - (nd - g->ndim), jm = i - (nd - mask->ndim);
        int64_t a = jg >= 0 ? g->size[jg] : 1, b = jm >= 0 ? mask->size[jm] : 1;
        if (a != b && a != 1 && b != 1) { sa_err(sa, "grad_output and mask do not broadcast"); return -1; }
        bs[i] = a == 1 ? b : a;
        total *= bs[i];
    }
    for (int64_t e = 0; e < total; e++) {
        int64_t rem = e, gp = g->offset, mp = mask->offset;
        for (int i = nd - 1; i >= 0; i--) {
            int64_t ci = rem % bs[i];
            rem /= bs[i];
            int jg = i - (nd - g->ndim), jm = i - (nd - mask->ndim);
            if (jg >= 0 && g->size[jg] != 1) gp += ci * g->stride[jg];
            if (jm >= 0 && mask->size[jm] != 1) mp += ci * mask->stride[jm];
        }
        if (!tensor_load_i(mask, mp)) continue;
        if (next >= no) { sa_err(sa, "masked_scatter_backward: the mask selects more than the %lld elements of sizes", (long long)no); return -1; }
        st(o, tensor_pos(o, next++), ld(g, gp));
    }
    for (; next < no; next++) st(o, tensor_pos(o, next), 0);
    return 0;
}
static int masked_scatter_backward_eval(const OpCall *c, IValue *out) { return ev_run(c, out, masked_scatter_backward_fill); }

/* ---- decompositions ---- */

static int one(Value *outs, int *nout, Node *x) { outs[0] = value_node(x); *nout = 1; return 0; }
#define RET(x) return one(outs, nout, (x))

/* index list (None,) * dim + (index,) */
static Value dim_index(DecompB *b, int dim, Node *index) {
    Value items[MI_MAX_DIMS];
    for (int i = 0; i < dim; i++) items[i] = VNONE;
    items[dim] = VN(index);
    return db_vlist(b, items, dim + 1);
}

/* decompositions._index_add / _index_copy: index_put(x, (None,)*dim + (index,), tensor, accumulate) */
static int index_add_copy(DecompB *b, Value *outs, int *nout, bool add) {
    Node *x = db_tensor(b, 0, "self"), *index = db_tensor(b, 2, "index"), *t = db_tensor(b, 3, add ? "source" : "source");
    int nd = db_ndim(b, x), dim = db_wrap_dim(b, db_int(b, 1, "dim", 0), nd);
    if (db_ndim(b, index) > 1) return db_fail(b, "Index should have dimension 1 or 0 (got %d)", db_ndim(b, index));
    if (add) {
        Value alpha = db_scalar(b, -1, "alpha", VI(1));
        double a;
        if (!value_as_double(&alpha, &a) || a != 1) t = db_op(b, "aten.mul.Tensor", VN(t), alpha);
    }
    bool zero_dim = nd == 0;
    Node *x1 = zero_dim ? db_unsqueeze(b, x, 0) : x;
    Node *r = db_op(b, "aten.index_put.default", VN(x1), dim_index(b, dim, index), VN(t), VB(add));
    RET(zero_dim ? db_op(b, "aten.squeeze.dim", VN(r), VI(0)) : db_clone(b, r));
}
static int dc_index_add(DecompB *b, Value *o, int *n) { return index_add_copy(b, o, n, true); }
static int dc_index_copy(DecompB *b, Value *o, int *n) { return index_add_copy(b, o, n, false); }

/* refs._index_fill: index_copy of a full tensor of the value */
static int dc_index_fill(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *index = db_tensor(b, 2, "index");
    const Value *v = db_arg(b, 3, "value");
    if (!v) return db_fail(b, "missing argument 'value'");
    int nd = db_ndim(b, x);
    bool zero_dim = nd == 0;
    Node *a = zero_dim ? db_unsqueeze(b, x, 0) : x;
    int dim = db_wrap_dim(b, db_int(b, 1, "dim", 0), zero_dim ? 1 : nd);
    Value shape[MI_MAX_DIMS];
    int ad = zero_dim ? 1 : nd;
    for (int i = 0; i < ad; i++) shape[i] = db_size_val(b, a, i);
    int64_t ni = 1;
    for (int i = 0; i < db_ndim(b, index); i++) { int64_t s; if (!db_size_const(b, index, i, &s)) return db_fail(b, "symbolic index size"); ni *= s; }
    shape[dim] = VI(ni);
    Node *full;
    if (v->kind == V_NODE) full = db_expand(b, db_to(b, v->node, db_dtype(b, x)), db_vlist(b, shape, ad));
    else {
        Kwarg kw[1] = {{"dtype", VDT(db_dtype(b, x))}};
        full = db_call(b, "aten.full.default", DBV(db_vlist(b, shape, ad), *v), kw, 1);
    }
    Node *idx1 = db_ndim(b, index) == 0 ? db_unsqueeze(b, index, 0) : index;
    Node *r = db_op(b, "aten.index_put.default", VN(a), dim_index(b, dim, idx1), VN(full), VB(false));
    RET(zero_dim ? db_op(b, "aten.squeeze.dim", VN(r), VI(0)) : r);
}

/* refs.take: self.reshape(-1)[index] */
static int dc_take(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *index = db_tensor(b, 1, "index");
    Node *flat = db_reshape(b, x, db_ilist(b, (int64_t[]){-1}, 1));
    Value items[1] = {VN(index)};
    RET(db_op(b, "aten.index.Tensor", VN(flat), db_vlist(b, items, 1)));
}

/* refs.put: index_put on the flattened tensor, reshaped back */
static int dc_put(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *index = db_tensor(b, 1, "index"), *src = db_tensor(b, 2, "source");
    bool acc = db_bool(b, 3, "accumulate", false);
    Node *flat = db_reshape(b, x, db_ilist(b, (int64_t[]){-1}, 1));
    Value items[1] = {VN(index)};
    Node *r = db_op(b, "aten.index_put.default", VN(flat), db_vlist(b, items, 1), VN(db_reshape(b, src, db_shape_val(b, index))), VB(acc));
    RET(db_reshape(b, r, db_shape_val(b, x)));
}

/* decompositions.isin_default: (elements.unsqueeze(-1) == test.flatten()).any(-1) (^ invert) */
static int dc_isin(DecompB *b, Value *outs, int *nout) {
    const Value *e = db_arg(b, 0, "elements"), *t = db_arg(b, 1, "test_elements");
    if (!e || !t) return db_fail(b, "needs elements and test_elements");
    bool invert = db_bool(b, 3, "invert", false);
    Node *el = e->kind == V_NODE ? e->node : NULL, *te = t->kind == V_NODE ? t->node : NULL;
    if (!el) el = db_scalar_tensor(b, db_float(b, 0, "elements", 0), db_dtype(b, te));
    Node *flat = te ? db_reshape(b, te, db_ilist(b, (int64_t[]){-1}, 1)) : NULL;
    Node *eq = te ? db_binary(b, "aten.eq.Tensor", db_unsqueeze(b, el, -1), flat)
                  : db_op(b, "aten.eq.Scalar", VN(db_unsqueeze(b, el, -1)), *t);
    Node *r = db_op(b, "aten.any.dim", VN(eq), VI(-1));
    RET(invert ? db_unary(b, "aten.logical_not.default", r) : r);
}

/* decompositions._unsafe_masked_index(_put_accumulate): indices clamped into range, masked-off
 * positions read `fill` (write 0); the put clamps to [-size, size - 1] (a negative index then
 * wraps in _unsafe_index_put), the read to [0, size - 1] */
static Value clamped_indices(DecompB *b, Node *x, bool neg) {
    const Value *l = db_arg(b, 2, "indices");
    if (!l || (l->kind != V_LIST && l->kind != V_TUPLE) || l->list.n > MI_MAX_DIMS) { db_fail(b, "indices must be a list"); return VNONE; }
    Value items[MI_MAX_DIMS];
    for (int i = 0; i < l->list.n; i++) {
        items[i] = l->list.items[i];
        if (items[i].kind != V_NODE) continue;
        Value hi = db_expr_val(b, sym_sub(b->ctx->sym, db_size(b, x, i), sym_int(b->ctx->sym, 1)));
        Value lo = neg ? db_expr_val(b, sym_neg(b->ctx->sym, db_size(b, x, i))) : VI(0);
        items[i] = VN(db_op(b, "aten.clamp.default", items[i], lo, hi));
    }
    return db_vlist(b, items, l->list.n);
}
static int dc_masked_index(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *mask = db_tensor(b, 1, "mask");
    Value fill = db_scalar(b, 3, "fill", VI(0));
    Node *r = db_op(b, "aten._unsafe_index.Tensor", VN(x), clamped_indices(b, x, false));
    RET(db_op(b, "aten.masked_fill.Scalar", VN(r), VN(db_unary(b, "aten.logical_not.default", mask)), fill));
}
static int dc_masked_index_put_acc(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *mask = db_tensor(b, 1, "mask"), *v = db_tensor(b, 3, "values");
    Node *mv = db_op(b, "aten.masked_fill.Scalar", VN(v), VN(db_unary(b, "aten.logical_not.default", mask)), VI(0));
    RET(db_op(b, "aten._unsafe_index_put.default", VN(x), clamped_indices(b, x, true), VN(mv), VB(true)));
}

#define D(name, flags, fn, ind, doc) DECOMP_ROW(name, flags, fn, ind, doc)
const OpDef ops_scatter_table[] = {
    D("aten._unsafe_masked_index.default", 0, dc_masked_index, false, "x[clamped indices], fill where mask is false"),
    D("aten._unsafe_masked_index_put_accumulate.default", OPF_SCATTER, dc_masked_index_put_acc, false,
      "clone of x; x[clamped indices] += values where mask"),
    {"aten.scatter_reduce.two", OPF_SCATTER, op_infer_generic, scatter_reduce_eval, "clone of self; self[index] reduce= src (sum/prod/mean/amax/amin)", shape_self, NULL},
    {"aten.scatter.reduce", OPF_SCATTER, op_infer_generic, scatter_reduce_eval, "clone of self; self[index] add/multiply= src", shape_self, NULL},
    {"aten.scatter.value_reduce", OPF_SCATTER, op_infer_generic, scatter_reduce_eval, "clone of self; self[index] add/multiply= value", shape_self, NULL},
    {"aten.index_reduce.default", OPF_SCATTER, op_infer_generic, scatter_reduce_eval, "clone of self; rows index[i] reduce= source rows i", shape_self, NULL},
    {"aten.masked_scatter.default", OPF_SCATTER, op_infer_generic, masked_scatter_eval, "self with mask-true elements taken from source in order", shape_self, NULL},
    {"aten.masked_scatter_backward.default", 0, op_infer_generic, masked_scatter_backward_eval,
     "source's grad: grad_output's mask-true elements in order, zeros after, viewed as sizes", shape_masked_scatter_backward, NULL},
    D("aten.index_add.default", OPF_SCATTER, dc_index_add, true, "clone of self; rows index[i] += alpha * source rows i"),
    D("aten.index_copy.default", OPF_SCATTER, dc_index_copy, true, "clone of self; rows index[i] = source rows i"),
    D("aten.index_fill.int_Scalar", OPF_SCATTER, dc_index_fill, true, "clone of self; rows index = value"),
    D("aten.index_fill.int_Tensor", OPF_SCATTER, dc_index_fill, true, "clone of self; rows index = value"),
    D("aten.take.default", 0, dc_take, true, "elements of the flattened self at index"),
    D("aten.put.default", OPF_SCATTER, dc_put, true, "clone of self with flat positions index set (or added) from source"),
    D("aten.isin.Tensor_Tensor", 0, dc_isin, true, "elements that occur in test_elements"),
    D("aten.isin.Tensor_Scalar", 0, dc_isin, true, "elements equal to test_element"),
    D("aten.isin.Scalar_Tensor", 0, dc_isin, true, "element occurs in test_elements"),
};
const int ops_scatter_count = sizeof ops_scatter_table / sizeof ops_scatter_table[0];
