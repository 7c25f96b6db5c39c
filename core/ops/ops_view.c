/* ops_view.c — view ops: results share their input's storage with new sizes, strides and
 * storage offset (permute, transpose, expand, unsqueeze, squeeze, slice, select, view, split,
 * as_strided, ...). The shape function computes the view's layout exactly as PyTorch does;
 * eval applies that layout to the runtime tensor. reshape is a view when PyTorch's
 * computeStride allows it and a contiguous copy otherwise. */
#include "ops/ops_impl.h"

#include <string.h>

static Expr *offset_of(ShapeArgs *sa, const TensorMeta *m) { return m->offset ? m->offset : sym_int(sa->sym, 0); }

static int self_meta(ShapeArgs *sa, TensorMeta **m) { return sa_tensor(sa, sa_arg(sa, 0, "self"), "self", m); }

static void view_of(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, int ndim) {
    meta_alloc(sa, out, x->dtype, ndim, x->device);
    out->has_device = x->has_device || !sa->eval;
    out->offset = offset_of(sa, x);
}

/* ---- view / reshape ---- */

static Expr *numel_of(ShapeArgs *sa, const TensorMeta *m) {
    Expr *n = sym_int(sa->sym, 1);
    for (int i = 0; i < m->ndim; i++) n = sym_mul(sa->sym, n, m->size[i]);
    return n;
}

/* *is_view tells whether the result aliases the input (reshape may have to copy). */
static int reshape_shape(ShapeArgs *sa, TensorMeta *out, bool must_view, bool *is_view) {
    TensorMeta *x;
    Expr *size[MI_MAX_DIMS];
    int n;
    if (self_meta(sa, &x) || sa_int_list(sa, sa_arg(sa, 1, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
    if (sa_infer_shape(sa, numel_of(sa, x), size, n)) return -1;
    view_of(sa, out, x, n);
    for (int i = 0; i < n; i++) out->size[i] = size[i];
    *is_view = view_strides(sa, x, size, n, out->stride);
    if (!*is_view) {
        if (must_view)
            return sa_err(sa, "view size is not compatible with input tensor's size and stride "
                              "(at least one dimension spans across two contiguous subspaces); use reshape");
        meta_contiguous_strides(sa, out);
        out->offset = sym_int(sa->sym, 0);
    }
    return 0;
}

static int shape_view(ShapeArgs *sa, TensorMeta *out, int *nout) {
    bool v;
    *nout = 1;
    return reshape_shape(sa, out, true, &v);
}

static int shape_reshape(ShapeArgs *sa, TensorMeta *out, int *nout) {
    bool v;
    *nout = 1;
    return reshape_shape(sa, out, false, &v);
}

int op_reshape_copies(MiCtx *ctx, Graph *g, const Node *n) {
    if (n->kind != N_CALL_FUNCTION ||
        (strcmp(n->target, "aten.reshape.default") != 0 && strcmp(n->target, "aten._unsafe_view.default") != 0))
        return 0;
    ShapeArgs sa;
    sa_from_node(&sa, ctx, g, n, op_lookup(n->target));
    TensorMeta m;
    bool is_view;
    if (reshape_shape(&sa, &m, false, &is_view)) return -1;
    return is_view ? 0 : 1;
}

/* ---- permute / transpose / t ---- */

static int shape_permute(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dims[MI_MAX_DIMS];
    int n;
    *nout = 1;
    if (self_meta(sa, &x) || sa_const_int_list(sa, sa_arg(sa, 1, "dims"), "dims", dims, &n, MI_MAX_DIMS)) return -1;
    if (n != x->ndim) return sa_err(sa, "permute needs %d dims for a tensor of rank %d, got %d", x->ndim, x->ndim, n);
    bool seen[MI_MAX_DIMS] = {0};
    view_of(sa, out, x, n);
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (sa_dim(sa, dims[i], n, &d)) return -1;
        if (seen[d]) return sa_err(sa, "permute: dimension %lld repeats", (long long)d);
        seen[d] = true;
        out->size[i] = x->size[d];
        out->stride[i] = x->stride[d];
    }
    return 0;
}

static int transpose_dims(ShapeArgs *sa, TensorMeta *out, TensorMeta *x, int64_t a, int64_t b) {
    view_of(sa, out, x, x->ndim);
    for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = x->stride[i]; }
    if (x->ndim == 0) return 0;
    if (sa_dim(sa, a, x->ndim, &a) || sa_dim(sa, b, x->ndim, &b)) return -1;
    out->size[a] = x->size[b]; out->stride[a] = x->stride[b];
    out->size[b] = x->size[a]; out->stride[b] = x->stride[a];
    return 0;
}

static int shape_transpose(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t a, b;
    *nout = 1;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "dim0"), "dim0", &a) ||
        sa_const_int(sa, sa_arg(sa, 2, "dim1"), "dim1", &b)) return -1;
    return transpose_dims(sa, out, x, a, b);
}

static int shape_t(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (self_meta(sa, &x)) return -1;
    if (x->ndim > 2) return sa_err(sa, "t() expects a tensor with <= 2 dimensions, got %d", x->ndim);
    return transpose_dims(sa, out, x, 0, x->ndim == 2 ? 1 : 0);
}

/* ---- expand ---- */

static int shape_expand(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    Expr *size[MI_MAX_DIMS];
    int n;
    *nout = 1;
    if (self_meta(sa, &x) || sa_int_list(sa, sa_arg(sa, 1, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
    if (n < x->ndim) return sa_err(sa, "expand: the number of sizes (%d) must be >= the tensor's rank (%d)", n, x->ndim);
    view_of(sa, out, x, n);
    Expr *zero = sym_int(sa->sym, 0);
    for (int i = 0; i < n; i++) {
        int j = i - (n - x->ndim);
        if (j < 0) {
            if (ex_eq_int(size[i], -1)) return sa_err(sa, "expand: -1 not allowed for a new leading dimension");
            out->size[i] = size[i];
            out->stride[i] = zero;
            continue;
        }
        if (ex_eq_int(size[i], -1) || ex_cmp(sa, size[i], x->size[j]) == 0) {
            out->size[i] = x->size[j];
            out->stride[i] = x->stride[j];
        } else if (ex_eq_int(x->size[j], 1)) {
            out->size[i] = size[i];
            out->stride[i] = zero;
        } else {
            char a[64], b[64];
            return sa_err(sa, "expand: size %s at dimension %d cannot be expanded to %s (only size 1 can)",
                          sym_str(x->size[j], a, sizeof a), i, sym_str(size[i], b, sizeof b));
        }
    }
    return 0;
}

/* ---- unsqueeze / squeeze ---- */

static int shape_unsqueeze(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t d;
    *nout = 1;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &d)) return -1;
    if (x->ndim + 1 > MI_MAX_DIMS) return sa_err(sa, "rank too large");
    if (sa_dim(sa, d, x->ndim + 1, &d)) return -1;
    view_of(sa, out, x, x->ndim + 1);
    for (int i = 0, j = 0; i < x->ndim + 1; i++) {
        if (i == d) {
            out->size[i] = sym_int(sa->sym, 1);
            out->stride[i] = d >= x->ndim ? sym_int(sa->sym, 1) : sym_mul(sa->sym, x->size[d], x->stride[d]);
        } else {
            out->size[i] = x->size[j];
            out->stride[i] = x->stride[j];
            j++;
        }
    }
    return 0;
}

static int squeeze_mask(ShapeArgs *sa, TensorMeta *out, TensorMeta *x, const bool *drop) {
    int n = 0;
    for (int i = 0; i < x->ndim; i++) n += !(drop[i] && ex_eq_int(x->size[i], 1));
    view_of(sa, out, x, n);
    for (int i = 0, k = 0; i < x->ndim; i++)
        if (!(drop[i] && ex_eq_int(x->size[i], 1))) { out->size[k] = x->size[i]; out->stride[k] = x->stride[i]; k++; }
    return 0;
}

static int shape_squeeze(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    bool drop[MI_MAX_DIMS] = {0};
    *nout = 1;
    if (self_meta(sa, &x)) return -1;
    ArgRef d = sa_arg(sa, 1, "dim");
    if (!arg_present(d)) {
        for (int i = 0; i < x->ndim; i++) drop[i] = true;
    } else {
        int64_t dims[MI_MAX_DIMS];
        int n;
        if (sa_const_int_list(sa, d, "dim", dims, &n, MI_MAX_DIMS)) return -1;
        for (int k = 0; k < n; k++) {
            int64_t v;
            if (sa_dim(sa, dims[k], x->ndim, &v)) return -1;
            if (x->ndim) drop[v] = true;
        }
    }
    return squeeze_mask(sa, out, x, drop);
}

/* ---- slice / select / narrow ---- */

static int slice_meta(ShapeArgs *sa, TensorMeta *out, TensorMeta *x, int64_t dim, ArgRef as, ArgRef ae, int64_t step) {
    if (x->ndim == 0) return sa_err(sa, "slice() cannot be applied to a 0-dim tensor");
    if (sa_dim(sa, dim, x->ndim, &dim)) return -1;
    if (step <= 0) return sa_err(sa, "slice step must be positive, got %lld", (long long)step);
    SymCtx *S = sa->sym;
    Expr *size = x->size[dim], *start, *end;
    if (arg_present(as)) { if (sa_int(sa, as, "start", &start)) return -1; } else start = sym_int(S, 0);
    if (arg_present(ae)) { if (sa_int(sa, ae, "end", &end)) return -1; } else end = sym_int(S, INT64_MAX);
    int64_t s, e, n;
    if (sym_is_int(start, &s) && s < 0) start = sym_add(S, size, start);
    if (sym_is_int(end, &e) && e < 0) end = sym_add(S, size, end);
    if (sym_is_int(size, &n)) {
        if (sym_is_int(start, &s)) { if (s < 0) s = 0; if (s > n) s = n; start = sym_int(S, s); }
        if (sym_is_int(end, &e)) { if (e > n) e = n; end = sym_int(S, e); }
    } else {
        if (sym_is_int(end, &e) && e >= ((int64_t)1 << 40)) end = size;
    }
    if (sym_is_int(start, &s) && sym_is_int(end, &e) && e < s) end = start;
    view_of(sa, out, x, x->ndim);
    for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = x->stride[i]; }
    Expr *len = sym_sub(S, end, start);
    if (step != 1) len = sym_floordiv(S, sym_add(S, len, sym_int(S, step - 1)), sym_int(S, step));
    out->size[dim] = len;
    out->stride[dim] = sym_mul(S, x->stride[dim], sym_int(S, step));
    out->offset = sym_add(S, offset_of(sa, x), sym_mul(S, start, x->stride[dim]));
    return 0;
}

static int shape_slice(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dim = 0, step = 1;
    *nout = 1;
    if (self_meta(sa, &x)) return -1;
    ArgRef ad = sa_arg(sa, 1, "dim"), ast = sa_arg(sa, 4, "step");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (arg_present(ast) && sa_const_int(sa, ast, "step", &step)) return -1;
    return slice_meta(sa, out, x, dim, sa_arg(sa, 2, "start"), sa_arg(sa, 3, "end"), step);
}

static int shape_narrow(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dim, start, len;
    *nout = 1;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim) ||
        sa_const_int(sa, sa_arg(sa, 2, "start"), "start", &start) || sa_const_int(sa, sa_arg(sa, 3, "length"), "length", &len))
        return -1;
    Value vs = value_int(start), ve = value_int(start + len);
    return slice_meta(sa, out, x, dim, (ArgRef){&vs, NULL}, (ArgRef){&ve, NULL}, 1);
}

static int select_meta(ShapeArgs *sa, TensorMeta *out, TensorMeta *x, int64_t dim, Expr *index) {
    if (x->ndim == 0) return sa_err(sa, "select() cannot be applied to a 0-dim tensor");
    if (sa_dim(sa, dim, x->ndim, &dim)) return -1;
    int64_t i, n;
    if (sym_is_int(index, &i) && sym_is_int(x->size[dim], &n)) {
        if (i < -n || i >= n)
            return sa_err(sa, "select(): index %lld out of range for dimension %lld of size %lld",
                          (long long)i, (long long)dim, (long long)n);
        if (i < 0) index = sym_int(sa->sym, i + n);
    } else if (sym_is_int(index, &i) && i < 0) {
        index = sym_add(sa->sym, x->size[dim], index);
    }
    view_of(sa, out, x, x->ndim - 1);
    for (int a = 0, k = 0; a < x->ndim; a++)
        if (a != dim) { out->size[k] = x->size[a]; out->stride[k] = x->stride[a]; k++; }
    out->offset = sym_add(sa->sym, offset_of(sa, x), sym_mul(sa->sym, index, x->stride[dim]));
    return 0;
}

static int shape_select(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dim;
    Expr *index;
    *nout = 1;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim) ||
        sa_int(sa, sa_arg(sa, 2, "index"), "index", &index)) return -1;
    return select_meta(sa, out, x, dim, index);
}

/* ---- split / unbind / chunk (tuples of views) ---- */

static int split_sizes(ShapeArgs *sa, TensorMeta *out, int *nout, TensorMeta *x, int64_t dim, const int64_t *sizes, int n) {
    if (n > *nout) return sa_err(sa, "split into %d pieces (at most %d supported)", n, *nout);
    int64_t start = 0;
    for (int k = 0; k < n; k++) {
        Value vs = value_int(start), ve = value_int(start + sizes[k]);
        if (slice_meta(sa, &out[k], x, dim, (ArgRef){&vs, NULL}, (ArgRef){&ve, NULL}, 1)) return -1;
        start += sizes[k];
    }
    *nout = n;
    return 0;
}

static int dim_size_const(ShapeArgs *sa, TensorMeta *x, int64_t *dim, int64_t *size) {
    if (sa_dim(sa, *dim, x->ndim, dim)) return -1;
    if (!sym_is_int(x->size[*dim], size)) return sa_err(sa, "splitting a symbolic dimension is not supported");
    return 0;
}

static int shape_split(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t ss, dim = 0, size;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "split_size"), "split_size", &ss)) return -1;
    ArgRef ad = sa_arg(sa, 2, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (dim_size_const(sa, x, &dim, &size)) return -1;
    if (ss <= 0) return sa_err(sa, "split_size must be positive");
    int64_t sizes[OP_MAX_OUTS];
    int n = 0;
    for (int64_t s = 0; s < size || (size == 0 && n == 0); s += ss) {
        if (n >= OP_MAX_OUTS) return sa_err(sa, "too many split pieces");
        sizes[n++] = size - s < ss ? size - s : ss;
        if (size == 0) break;
    }
    return split_sizes(sa, out, nout, x, dim, sizes, n);
}

static int shape_split_with_sizes(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t sizes[OP_MAX_OUTS], dim = 0, size, total = 0;
    int n;
    if (self_meta(sa, &x) || sa_const_int_list(sa, sa_arg(sa, 1, "split_sizes"), "split_sizes", sizes, &n, OP_MAX_OUTS))
        return -1;
    ArgRef ad = sa_arg(sa, 2, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (dim_size_const(sa, x, &dim, &size)) return -1;
    for (int k = 0; k < n; k++) total += sizes[k];
    if (total != size)
        return sa_err(sa, "split_with_sizes: sizes sum to %lld but dimension %lld has size %lld",
                      (long long)total, (long long)dim, (long long)size);
    return split_sizes(sa, out, nout, x, dim, sizes, n);
}

static int shape_chunk(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t chunks, dim = 0, size;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "chunks"), "chunks", &chunks)) return -1;
    ArgRef ad = sa_arg(sa, 2, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (dim_size_const(sa, x, &dim, &size)) return -1;
    if (chunks <= 0) return sa_err(sa, "chunks must be positive");
    int64_t ss = (size + chunks - 1) / chunks, sizes[OP_MAX_OUTS];
    int n = 0;
    if (ss == 0) ss = 1;
    for (int64_t s = 0; s < size; s += ss) {
        if (n >= OP_MAX_OUTS) return sa_err(sa, "too many chunks");
        sizes[n++] = size - s < ss ? size - s : ss;
    }
    return split_sizes(sa, out, nout, x, dim, sizes, n);
}

static int shape_unbind(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dim = 0, size;
    if (self_meta(sa, &x)) return -1;
    ArgRef ad = sa_arg(sa, 1, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (dim_size_const(sa, x, &dim, &size)) return -1;
    if (size > *nout) return sa_err(sa, "unbind into %lld pieces (at most %d supported)", (long long)size, *nout);
    for (int64_t k = 0; k < size; k++)
        if (select_meta(sa, &out[k], x, dim, sym_int(sa->sym, k))) return -1;
    *nout = (int)size;
    return 0;
}

/* ---- as_strided / alias ---- */

static int shape_as_strided(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    Expr *size[MI_MAX_DIMS], *stride[MI_MAX_DIMS];
    int n, ns;
    *nout = 1;
    if (self_meta(sa, &x) || sa_int_list(sa, sa_arg(sa, 1, "size"), "size", size, &n, MI_MAX_DIMS) ||
        sa_int_list(sa, sa_arg(sa, 2, "stride"), "stride", stride, &ns, MI_MAX_DIMS)) return -1;
    if (n != ns) return sa_err(sa, "as_strided: %d sizes but %d strides", n, ns);
    view_of(sa, out, x, n);
    for (int i = 0; i < n; i++) { out->size[i] = size[i]; out->stride[i] = stride[i]; }
    ArgRef ao = sa_arg(sa, 3, "storage_offset");
    if (arg_present(ao) && sa_int(sa, ao, "storage_offset", &out->offset)) return -1;
    return 0;
}

static int shape_alias(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (self_meta(sa, &x)) return -1;
    view_of(sa, out, x, x->ndim);
    for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = x->stride[i]; }
    return 0;
}

/* ---- eval ---- */

static Tensor *apply_view(ShapeArgs *sa, Tensor *base, const TensorMeta *m) {
    int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off;
    if (m->ndim > MI_MAX_DIMS) { sa_err(sa, "rank too large"); return NULL; }
    if (ev_sizes(sa, m, size, stride)) return NULL;
    if (sym_eval(sa->ctx, m->offset, sa->syms, sa->nsyms, &off)) { sa_err(sa, "bad offset"); return NULL; }
    /* the view must stay inside the storage */
    int64_t hi = off, es = (int64_t)dtype_size(base->dtype);
    bool empty = false;
    for (int i = 0; i < m->ndim; i++) {
        if (size[i] == 0) empty = true;
        if (size[i] < 0 || stride[i] < 0) { sa_err(sa, "negative size or stride in view"); return NULL; }
        int64_t d;
        if (size[i] > 0 && (__builtin_mul_overflow(size[i] - 1, stride[i], &d) || __builtin_add_overflow(hi, d, &hi))) {
            sa_err(sa, "view extent overflows");
            return NULL;
        }
    }
    if (!empty && (off < 0 || hi >= (int64_t)(base->storage->nbytes / (size_t)es))) {
        sa_err(sa, "view is out of bounds of its storage (%lld elements)", (long long)(base->storage->nbytes / es));
        return NULL;
    }
    return tensor_view(base, m->ndim, size, stride, off);
}

static int view_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    TensorMeta m[OP_MAX_OUTS];
    int n;
    if (ev_shape(sa, m, &n)) return -1;
    Tensor *base = ev_tensor(sa_arg(sa, 0, "self"));
    if (!base) { sa_err(sa, "argument 'self' is not a tensor"); return -1; }
    if (c->op->flags & OPF_TUPLE) {
        out->kind = IV_TUPLE;
        out->n = n;
        out->items = mi_xcalloc((size_t)(n ? n : 1), sizeof(IValue));
        for (int k = 0; k < n; k++) {
            Tensor *t = apply_view(sa, base, &m[k]);
            if (!t) { ivalue_clear(out); return -1; }
            ev_out_tensor(&out->items[k], t);
        }
    } else {
        Tensor *t = apply_view(sa, base, &m[0]);
        if (!t) return -1;
        ev_out_tensor(out, t);
    }
    return 0;
}
static int view_eval(const OpCall *c, IValue *out) { return ev_call(c, out, view_body); }

static int reshape_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    TensorMeta m;
    bool is_view;
    if (reshape_shape(sa, &m, false, &is_view)) return -1;
    Tensor *base = ev_tensor(sa_arg(sa, 0, "self")), *t;
    if (is_view) {
        t = apply_view(sa, base, &m);
    } else {
        Tensor *cont = tensor_contiguous(c->ctx, base);
        if (!cont) { sa_err(sa, "%s", c->ctx->err.msg); return -1; }
        int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS];
        if (ev_sizes(sa, &m, size, stride)) { tensor_unref(cont); return -1; }
        t = tensor_view(cont, m.ndim, size, stride, 0);
        tensor_unref(cont);
    }
    if (!t) return -1;
    ev_out_tensor(out, t);
    return 0;
}
static int reshape_eval(const OpCall *c, IValue *out) { return ev_call(c, out, reshape_body); }


/* ---- diagonal / unfold ---- */

/* diagonal(self, offset=0, dim1=0, dim2=1): dim1 and dim2 dropped, the diagonal appended as the
 * last dim with stride stride1 + stride2, starting `offset` above (below when negative) the main
 * one: x[2, 3] offset 1 -> [2] strides [4] offset 1 */
static int shape_diagonal(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t off = 0, d1 = 0, d2 = 1;
    *nout = 1;
    if (self_meta(sa, &x)) return -1;
    ArgRef ao = sa_arg(sa, 1, "offset"), a1 = sa_arg(sa, 2, "dim1"), a2 = sa_arg(sa, 3, "dim2");
    if ((arg_present(ao) && sa_const_int(sa, ao, "offset", &off)) || (arg_present(a1) && sa_const_int(sa, a1, "dim1", &d1)) ||
        (arg_present(a2) && sa_const_int(sa, a2, "dim2", &d2))) return -1;
    if (x->ndim < 2) return sa_err(sa, "diagonal needs at least 2 dimensions, got %d", x->ndim);
    if (sa_dim(sa, d1, x->ndim, &d1) || sa_dim(sa, d2, x->ndim, &d2)) return -1;
    if (d1 == d2) return sa_err(sa, "diagonal dimensions cannot be identical %lld, %lld", (long long)d1, (long long)d2);
    view_of(sa, out, x, x->ndim - 1);
    int k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != d1 && i != d2) { out->size[k] = x->size[i]; out->stride[k] = x->stride[i]; k++; }
    SymCtx *S = sa->sym;
    Expr *zero = sym_int(S, 0), *len;
    if (off >= 0) {
        len = sym_max(S, zero, sym_min(S, x->size[d1], sym_sub(S, x->size[d2], sym_int(S, off))));
        out->offset = sym_add(S, out->offset, sym_mul(S, sym_int(S, off), x->stride[d2]));
    } else {
        len = sym_max(S, zero, sym_min(S, sym_add(S, x->size[d1], sym_int(S, off)), x->size[d2]));
        out->offset = sym_add(S, out->offset, sym_mul(S, sym_int(S, -off), x->stride[d1]));
    }
    out->size[k] = len;
    out->stride[k] = sym_add(S, x->stride[d1], x->stride[d2]);
    return 0;
}

/* unfold(self, dimension, size, step): windows of `size` every `step` along dimension, the
 * window as a new last dim: x[10] size 4 step 3 -> [3, 4] strides [3, 1] */
static int shape_unfold(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t d, size, step;
    *nout = 1;
    if (self_meta(sa, &x) || sa_const_int(sa, sa_arg(sa, 1, "dimension"), "dimension", &d) ||
        sa_const_int(sa, sa_arg(sa, 2, "size"), "size", &size) || sa_const_int(sa, sa_arg(sa, 3, "step"), "step", &step)) return -1;
    if (step <= 0) return sa_err(sa, "step is %lld but must be > 0", (long long)step);
    if (sa_dim(sa, d, x->ndim, &d)) return -1;
    SymCtx *S = sa->sym;
    Expr *dsize = x->ndim ? x->size[d] : sym_int(S, 1), *dstride = x->ndim ? x->stride[d] : sym_int(S, 1);
    if (ex_cmp(sa, dsize, sym_int(S, size)) < 0)
        return sa_err(sa, "maximum size for tensor at dimension %lld is smaller than size %lld", (long long)d, (long long)size);
    view_of(sa, out, x, x->ndim + 1);
    for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = x->stride[i]; }
    if (x->ndim) {
        out->size[d] = sym_add(S, sym_floordiv(S, sym_sub(S, dsize, sym_int(S, size)), sym_int(S, step)), sym_int(S, 1));
        out->stride[d] = sym_mul(S, dstride, sym_int(S, step));
    }
    out->size[x->ndim] = sym_int(S, size);
    out->stride[x->ndim] = dstride;
    return 0;
}

#define V(name, shape, doc) {name, OPF_VIEW, op_infer_generic, view_eval, doc, shape, NULL}
#define VI(name, shape, doc) {name, OPF_VIEW | OPF_INPLACE, op_infer_generic, view_eval, doc, shape, NULL}
#define VT(name, shape, doc) {name, OPF_VIEW | OPF_TUPLE, op_infer_generic, view_eval, doc, shape, NULL}

const OpDef ops_view_table[] = {
    V("aten.view.default", shape_view, "view with a new shape (must be compatible with the strides)"),
    {"aten._unsafe_view.default", OPF_VIEW, op_infer_generic, reshape_eval, "view without alias tracking (reshape semantics)", shape_reshape, NULL},
    {"aten.reshape.default", OPF_VIEW, op_infer_generic, reshape_eval, "view when possible, else a contiguous copy", shape_reshape, NULL},
    V("aten.permute.default", shape_permute, "reorder dimensions"),
    V("aten.transpose.int", shape_transpose, "swap two dimensions"),
    V("aten.t.default", shape_t, "transpose a <= 2-D tensor"),
    V("aten.expand.default", shape_expand, "broadcast size-1 dimensions (stride 0)"),
    V("aten.unsqueeze.default", shape_unsqueeze, "insert a size-1 dimension"),
    V("aten.squeeze.dim", shape_squeeze, "drop a size-1 dimension"),
    V("aten.squeeze.dims", shape_squeeze, "drop size-1 dimensions"),
    V("aten.squeeze.default", shape_squeeze, "drop all size-1 dimensions"),
    V("aten.slice.Tensor", shape_slice, "x[start:end:step] along dim"),
    V("aten.narrow.default", shape_narrow, "x[start:start+length] along dim"),
    V("aten.select.int", shape_select, "x[index] along dim (drops the dim)"),
    V("aten.as_strided.default", shape_as_strided, "view with explicit sizes, strides, offset"),
    V("aten.alias.default", shape_alias, "same tensor"),
    V("aten.diagonal.default", shape_diagonal, "the (offset) diagonal of dims dim1, dim2 as the last dim"),
    V("aten.unfold.default", shape_unfold, "sliding windows along a dim as a new last dim"),
    V("aten.detach.default", shape_alias, "same tensor (no autograd here)"),
    V("aten.lift_fresh.default", shape_alias, "same tensor"),
    VT("aten.split.Tensor", shape_split, "pieces of split_size along dim"),
    VT("aten.split_with_sizes.default", shape_split_with_sizes, "pieces of the given sizes along dim"),
    VT("aten.chunk.default", shape_chunk, "n nearly equal pieces along dim"),
    VT("aten.unbind.int", shape_unbind, "all slices along dim"),
    /* in-place view ops: self's sizes and strides change (the interpreter rebinds self to the
     * result; functionalize turns them into the view op, stft's transpose_ / squeeze_) */
    VI("aten.transpose_.default", shape_transpose, "swap two dimensions of self (in place)"),
    VI("aten.t_.default", shape_t, "transpose a <= 2-D self (in place)"),
    VI("aten.unsqueeze_.default", shape_unsqueeze, "insert a size-1 dimension into self (in place)"),
    VI("aten.squeeze_.dim", shape_squeeze, "drop a size-1 dimension of self (in place)"),
    VI("aten.squeeze_.dims", shape_squeeze, "drop size-1 dimensions of self (in place)"),
    VI("aten.squeeze_.default", shape_squeeze, "drop all size-1 dimensions of self (in place)"),
    VI("aten.as_strided_.default", shape_as_strided, "give self explicit sizes, strides, offset (in place)"),
};
const int ops_view_count = sizeof ops_view_table / sizeof ops_view_table[0];
