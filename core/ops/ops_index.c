/* ops_index.c — ops that move data by index: cat/stack, index.Tensor (advanced indexing),
 * index_select, gather, scatter/scatter_add, embedding, index_put and the functional
 * scatters slice_scatter/select_scatter that functionalization produces from in-place writes
 * into views. Index values are bounds-checked at run time (clear error, never a wild read). */
#include "ops/ops_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- cat / stack ---- */

static int tensor_list(ShapeArgs *sa, ArgRef a, const char *what, TensorMeta **ms, int *n, int max) {
    int len = arg_list_len(a);
    if (len < 0) return sa_err(sa, "argument '%s' must be a list of tensors", what);
    if (len > max) return sa_err(sa, "argument '%s' has %d tensors (at most %d supported)", what, len, max);
    for (int k = 0; k < len; k++)
        if (sa_tensor(sa, arg_item(a, k), what, &ms[k])) return -1;
    *n = len;
    return 0;
}

static bool legacy_empty(const TensorMeta *m) { return m->ndim == 1 && ex_eq_int(m->size[0], 0); }

static int shape_cat(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *ms[OP_MAX_OUTS];
    int n;
    int64_t dim = 0;
    *nout = 1;
    if (tensor_list(sa, sa_arg(sa, 0, "tensors"), "tensors", ms, &n, OP_MAX_OUTS)) return -1;
    ArgRef ad = sa_arg(sa, 1, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (n == 0) return sa_err(sa, "expected a non-empty list of tensors");
    const TensorMeta *ref = NULL;
    PromoteState ps;
    promote_init(&ps);
    for (int k = 0; k < n; k++) {
        ps.dim = ps.dim == DT_INVALID ? ms[k]->dtype : dtype_promote(ps.dim, ms[k]->dtype);
        if (!ref && !legacy_empty(ms[k])) ref = ms[k];
    }
    if (!ref) ref = ms[0];
    if (sa_dim(sa, dim, ref->ndim, &dim)) return -1;
    meta_alloc(sa, out, ps.dim, ref->ndim, ref->device);
    Expr *total = sym_int(sa->sym, 0);
    for (int k = 0; k < n; k++) {
        if (legacy_empty(ms[k]) && ms[k] != ref) continue;
        if (ms[k]->ndim != ref->ndim)
            return sa_err(sa, "tensors must have the same rank: %d vs %d (tensor %d)", ref->ndim, ms[k]->ndim, k);
        for (int i = 0; i < ref->ndim; i++)
            if (i != dim && ex_cmp(sa, ms[k]->size[i], ref->size[i]) != 0)
                return sa_err(sa, "sizes of tensors must match except in dimension %lld (tensor %d differs at dimension %d)",
                              (long long)dim, k, i);
        total = sym_add(sa->sym, total, ms[k]->size[dim]);
    }
    for (int i = 0; i < ref->ndim; i++) out->size[i] = i == dim ? total : ref->size[i];
    meta_contiguous_strides(sa, out);
    return 0;
}

static int cat_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    ArgRef list = sa_arg(sa, 0, "tensors");
    int64_t dim = 0, at = 0;
    ArgRef ad = sa_arg(sa, 1, "dim");
    if (arg_present(ad)) sa_const_int(sa, ad, "dim", &dim);
    if (dim < 0) dim += o->ndim;
    for (int k = 0; k < arg_list_len(list); k++) {
        Tensor *t = ev_tensor(arg_item(list, k));
        if (t->ndim == 1 && t->size[0] == 0 && o->ndim != 1) continue;
        Tensor *v = tensor_view(o, o->ndim, o->size, o->stride, o->offset + at * o->stride[dim]);
        v->size[dim] = t->size[dim];
        at += t->size[dim];
        int r = tensor_copy_into(c->ctx, v, t);
        tensor_unref(v);
        if (r) { sa_err(sa, "%s", c->ctx->err.msg); return -1; }
    }
    return 0;
}
static int cat_eval(const OpCall *c, IValue *out) { return ev_run(c, out, cat_fill); }

static int shape_stack(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *ms[OP_MAX_OUTS];
    int n;
    int64_t dim = 0;
    *nout = 1;
    if (tensor_list(sa, sa_arg(sa, 0, "tensors"), "tensors", ms, &n, OP_MAX_OUTS)) return -1;
    if (n == 0) return sa_err(sa, "expected a non-empty list of tensors");
    ArgRef ad = sa_arg(sa, 1, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) return -1;
    if (sa_dim(sa, dim, ms[0]->ndim + 1, &dim)) return -1;
    DType dt = ms[0]->dtype;
    for (int k = 1; k < n; k++) {
        dt = dtype_promote(dt, ms[k]->dtype);
        if (ms[k]->ndim != ms[0]->ndim) return sa_err(sa, "stack expects tensors of equal shape");
        for (int i = 0; i < ms[0]->ndim; i++)
            if (ex_cmp(sa, ms[k]->size[i], ms[0]->size[i]) != 0) return sa_err(sa, "stack expects tensors of equal shape");
    }
    meta_alloc(sa, out, dt, ms[0]->ndim + 1, ms[0]->device);
    for (int i = 0, j = 0; i < ms[0]->ndim + 1; i++)
        out->size[i] = i == dim ? sym_int(sa->sym, n) : ms[0]->size[j++];
    meta_contiguous_strides(sa, out);
    return 0;
}

static int stack_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    ArgRef list = sa_arg(sa, 0, "tensors");
    int64_t dim = 0;
    ArgRef ad = sa_arg(sa, 1, "dim");
    if (arg_present(ad)) sa_const_int(sa, ad, "dim", &dim);
    if (dim < 0) dim += o->ndim;
    for (int k = 0; k < arg_list_len(list); k++) {
        int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS];
        for (int i = 0, j = 0; i < o->ndim; i++)
            if (i != dim) { size[j] = o->size[i]; stride[j] = o->stride[i]; j++; }
        Tensor *v = tensor_view(o, o->ndim - 1, size, stride, o->offset + k * o->stride[dim]);
        int r = tensor_copy_into(c->ctx, v, ev_tensor(arg_item(list, k)));
        tensor_unref(v);
        if (r) { sa_err(sa, "%s", c->ctx->err.msg); return -1; }
    }
    return 0;
}
static int stack_eval(const OpCall *c, IValue *out) { return ev_run(c, out, stack_fill); }

/* ---- advanced indexing: x[i0, None, i2] ---- */

typedef struct AdvIndex {
    TensorMeta *x;
    TensorMeta *idx[MI_MAX_DIMS];   /* NULL = full slice */
    Tensor *it[MI_MAX_DIMS];        /* eval mode: the index tensors (borrowed or in own[]) */
    Tensor *own[MI_MAX_DIMS];       /* eval mode: long indices made from boolean masks */
    int nidx;
    Expr *bshape[MI_MAX_DIMS];
    int nb;
    bool adjacent;
    bool has_mask;                  /* a boolean mask index: the indexed shape depends on the data */
    int first;                      /* position of the first index tensor */
} AdvIndex;

static void adv_free(AdvIndex *ai) {
    for (int k = 0; k < MI_MAX_DIMS; k++) { tensor_unref(ai->own[k]); ai->own[k] = NULL; }
}

/* A boolean (or uint8) mask index over dims d..d+m-1 of x stands for the m long index tensors
 * of mask.nonzero() (ATen's expandTensors): x[mask] == x[mask.nonzero().unbind(1)]. Eval mode
 * fills ai->it[d..d+m) with them; from a graph node the count is unknown (an unbacked size),
 * so their metas get the size `count`. Example: mask [T, F, T] over a [3, 2] x -> one index
 * [0, 2], the result [2, 2]. */
static int adv_mask(ShapeArgs *sa, AdvIndex *ai, Tensor *mask, TensorMeta *mm, int d) {
    int m = mm->ndim ? mm->ndim : 1;
    if (d + m > ai->x->ndim) return sa_err(sa, "too many indices for tensor of dimension %d", ai->x->ndim);
    for (int j = 0; j < mm->ndim; j++)
        if (ex_cmp(sa, mm->size[j], ai->x->size[d + j]) != 0)
            return sa_err(sa, "The shape of the mask at index %d does not match the shape of the indexed tensor at index %d", j, d + j);
    int64_t cnt = 0, n = mask ? tensor_numel(mask) : 0;
    for (int64_t e = 0; e < n; e++) cnt += tensor_get_i(mask, e) != 0;
    Expr *count = sa->eval ? sym_int(sa->sym, cnt) : sym_symbol(sa->sym, "u0");
    for (int j = 0; j < m; j++) {
        TensorMeta *im = arena_alloc(sa->arena, sizeof *im);
        meta_alloc(sa, im, DT_I64, 1, mm->device);
        im->size[0] = count;
        meta_contiguous_strides(sa, im);
        ai->idx[d + j] = im;
        if (!sa->eval) continue;
        Tensor *t = tensor_new(sa->ctx, DT_I64, 1, &cnt);
        if (!t) return sa_err(sa, "out of memory");
        ai->own[d + j] = ai->it[d + j] = t;
    }
    if (!sa->eval) return 0;
    for (int64_t e = 0, k = 0; e < n; e++) {
        if (!tensor_get_i(mask, e)) continue;
        int64_t rem = e;
        for (int j = m - 1; j >= 0; j--) {
            int64_t sz = mm->ndim ? mask->size[j] : 1;
            tensor_set_f(ai->it[d + j], k, (double)(rem % sz));
            rem /= sz;
        }
        k++;
    }
    return 0;
}

static int adv_parse(ShapeArgs *sa, ArgRef self, ArgRef list, AdvIndex *ai) {
    memset(ai, 0, sizeof *ai);
    if (sa_tensor(sa, self, "self", &ai->x)) return -1;
    int len = arg_list_len(list);
    if (len < 0) return sa_err(sa, "argument 'indices' must be a list");
    if (len > ai->x->ndim) return sa_err(sa, "too many indices (%d) for a tensor of rank %d", len, ai->x->ndim);
    int last = -1, count = 0, d = 0;
    ai->first = -1;
    for (int k = 0; k < len; k++, d++) {
        ArgRef it = arg_item(list, k);
        if (!arg_present(it)) continue;
        TensorMeta *im;
        if (sa_tensor(sa, it, "indices", &im)) return -1;
        DType dt = im->dtype;
        if (d >= MI_MAX_DIMS) return sa_err(sa, "too many indices");
        if (dt == DT_BOOL || dt == DT_U8) {
            if (im->ndim == 0) { adv_free(ai); return sa_err(sa, "a 0-dimensional boolean index (x[True]) is not supported"); }
            if (adv_mask(sa, ai, sa->eval ? ev_tensor(it) : NULL, im, d)) { adv_free(ai); return -1; }
            ai->has_mask = true;
            int m = im->ndim ? im->ndim : 1;
            if (ai->first < 0) ai->first = d;
            last = d + m - 1;
            count += m;
            d += m - 1;
            continue;
        }
        if (!dtype_is_int(dt)) { adv_free(ai); return sa_err(sa, "indices must be integer tensors, got %s", dtype_abbrev(dt)); }
        ai->idx[d] = im;
        if (sa->eval) ai->it[d] = ev_tensor(it);
        if (ai->first < 0) ai->first = d;
        last = d;
        count++;
    }
    ai->nidx = d;
    if (d > ai->x->ndim) { adv_free(ai); return sa_err(sa, "too many indices (%d) for a tensor of rank %d", d, ai->x->ndim); }
    if (count == 0) return sa_err(sa, "at least one index tensor is required");
    ai->adjacent = last - ai->first + 1 == count;
    if (sa_broadcast(sa, ai->idx, d, ai->bshape, &ai->nb)) { adv_free(ai); return -1; }
    return 0;
}

/* result dims: list of (source dim or -1 for broadcast-index dims) */
static int adv_result(ShapeArgs *sa, const AdvIndex *ai, TensorMeta *out, DType dt) {
    int nd = ai->x->ndim;
    int rank = nd - 0;
    int nindexed = 0;
    for (int k = 0; k < ai->nidx; k++) nindexed += ai->idx[k] != NULL;
    rank = nd - nindexed + ai->nb;
    if (rank > MI_MAX_DIMS) return sa_err(sa, "result rank too large");
    meta_alloc(sa, out, dt, rank, ai->x->device);
    int r = 0;
    if (!ai->adjacent) for (int b = 0; b < ai->nb; b++) out->size[r++] = ai->bshape[b];
    for (int d = 0; d < nd; d++) {
        if (d < ai->nidx && ai->idx[d]) {
            if (ai->adjacent && d == ai->first) for (int b = 0; b < ai->nb; b++) out->size[r++] = ai->bshape[b];
            continue;
        }
        out->size[r++] = ai->x->size[d];
    }
    meta_contiguous_strides(sa, out);
    return 0;
}

static int shape_index(ShapeArgs *sa, TensorMeta *out, int *nout) {
    AdvIndex ai;
    *nout = 1;
    if (adv_parse(sa, sa_arg(sa, 0, "self"), sa_arg(sa, 1, "indices"), &ai)) return -1;
    adv_free(&ai);
    if (ai.has_mask && !sa->eval && sa->node && sa->node->has_meta) {   /* data-dependent: the traced size */
        meta_copy(sa, out, &sa->node->meta);
        return 0;
    }
    return adv_result(sa, &ai, out, ai.x->dtype);
}

/* Visit every indexed element: fn(result linear index, source storage position). */
typedef int (*AdvVisit)(void *ud, int64_t r, int64_t pos);

static int adv_walk(ShapeArgs *sa, Tensor *x, Tensor *const *it, int nidx, bool adjacent, int first, const int64_t *rsize, int rank,
                    int nb, AdvVisit fn, void *ud) {
    int64_t total = 1;
    for (int i = 0; i < rank; i++) total *= rsize[i];
    int bstart = adjacent ? first : 0;
    int64_t ridx[MI_MAX_DIMS];
    for (int64_t r = 0; r < total; r++) {
        int64_t rem = r;
        for (int i = rank - 1; i >= 0; i--) { ridx[i] = rem % rsize[i]; rem /= rsize[i]; }
        int64_t pos = x->offset;
        int rd = 0;             /* walks result dims that come from x */
        for (int d = 0; d < x->ndim; d++) {
            if (d < nidx && it[d]) {
                /* index tensor value at the broadcast index ridx[bstart .. bstart+nb) */
                Tensor *t = it[d];
                int64_t ip = t->offset;
                for (int j = 0; j < t->ndim; j++) {
                    int64_t bi = ridx[bstart + (nb - t->ndim) + j];
                    ip += (t->size[j] == 1 ? 0 : bi) * t->stride[j];
                }
                int64_t v = tensor_load_i(t, ip);
                if (v < -x->size[d] || v >= x->size[d])
                    return sa_err(sa, "index %lld is out of bounds for dimension %d with size %lld",
                                  (long long)v, d, (long long)x->size[d]);
                if (v < 0) v += x->size[d];
                pos += v * x->stride[d];
                continue;
            }
            int ri = rd < bstart ? rd : rd + nb;
            if (!adjacent) ri = nb + rd;
            pos += ridx[ri] * x->stride[d];
            rd++;
        }
        if (fn(ud, r, pos)) return -1;
    }
    return 0;
}

typedef struct { Tensor *x, *o, *v; bool accumulate; int64_t *vpos; } IdxCopy;

static int visit_gather(void *ud, int64_t r, int64_t pos) {
    IdxCopy *c = ud;
    int64_t op = tensor_pos(c->o, r);
    if (ev_intlike(c->x->dtype)) tensor_store_i(c->o, op, tensor_load_i(c->x, pos));
    else tensor_store_f(c->o, op, tensor_load_f(c->x, pos));
    return 0;
}

static int index_fill(ShapeArgs *sa, Tensor *o) {
    AdvIndex ai;
    int rc = -1;
    memset(&ai, 0, sizeof ai);
    if (adv_parse(sa, sa_arg(sa, 0, "self"), sa_arg(sa, 1, "indices"), &ai)) goto done;
    IdxCopy ic = {ev_tensor(sa_arg(sa, 0, "self")), o, NULL, false, NULL};
    if (adv_walk(sa, ic.x, ai.it, ai.nidx, ai.adjacent, ai.first, o->size, o->ndim, ai.nb, visit_gather, &ic))
        goto done;
    rc = 0;
done:
    adv_free(&ai);
    return rc;
}
static int index_eval(const OpCall *c, IValue *out) { return ev_run(c, out, index_fill); }

/* index_put(self, indices, values, accumulate): clone of self with the indexed elements set */
static int shape_like_self(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (sa->op->flags & OPF_INPLACE) { meta_copy(sa, out, x); return 0; }
    meta_like(sa, out, x, x->dtype);
    return 0;
}

static int shape_index_put(ShapeArgs *sa, TensorMeta *out, int *nout) {
    AdvIndex ai;
    TensorMeta *v, rm;
    if (adv_parse(sa, sa_arg(sa, 0, "self"), sa_arg(sa, 1, "indices"), &ai)) return -1;
    adv_free(&ai);
    if (sa_tensor(sa, sa_arg(sa, 2, "values"), "values", &v)) return -1;
    if (ai.has_mask && !sa->eval) return shape_like_self(sa, out, nout);   /* the indexed count is known at run time */
    if (adv_result(sa, &ai, &rm, ai.x->dtype)) return -1;
    TensorMeta *ins[2] = {&rm, v};
    Expr *size[MI_MAX_DIMS];
    int nd;
    if (sa_broadcast(sa, ins, 2, size, &nd) || nd != rm.ndim)
        return sa_err(sa, "values of shape rank %d do not broadcast to the indexed shape", v->ndim);
    return shape_like_self(sa, out, nout);
}

static int visit_put(void *ud, int64_t r, int64_t pos) {
    IdxCopy *c = ud;
    int64_t vp = c->vpos[r];
    if (ev_intlike(c->o->dtype)) {
        int64_t v = tensor_load_i(c->v, vp);
        tensor_store_i(c->o, pos, c->accumulate ? tensor_load_i(c->o, pos) + v : v);
    } else {
        double v = tensor_load_f(c->v, vp);
        tensor_store_f(c->o, pos, c->accumulate ? tensor_load_f(c->o, pos) + v : v);
    }
    return 0;
}

static int index_put_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    TensorMeta rm;
    AdvIndex ai;
    int rc = -1;
    Tensor *vb = NULL;
    int64_t *vpos = NULL;
    bool parsed = false;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    if (o != x && tensor_copy_into(c->ctx, o, x)) goto done;
    if (adv_parse(sa, sa_arg(sa, 0, "self"), sa_arg(sa, 1, "indices"), &ai) || adv_result(sa, &ai, &rm, o->dtype)) goto done;
    parsed = true;
    if (!(vb = ev_new(sa, &rm)) || tensor_copy_into(c->ctx, vb, ev_tensor(sa_arg(sa, 2, "values")))) {
        sa_err(sa, "values: %s", c->ctx->err.msg);
        goto done;
    }
    int64_t total = tensor_numel(vb);
    vpos = malloc((size_t)(total ? total : 1) * sizeof *vpos);
    if (!vpos) { sa_err(sa, "out of memory"); goto done; }
    for (int64_t i = 0; i < total; i++) vpos[i] = tensor_pos(vb, i);
    IdxCopy ic = {o, o, vb, arg_bool(sa_arg(sa, 3, "accumulate"), false), vpos};
    /* walk positions in o (same layout semantics as self) */
    if (adv_walk(sa, o, ai.it, ai.nidx, ai.adjacent, ai.first, vb->size, vb->ndim, ai.nb, visit_put, &ic))
        goto done;
    rc = 0;
done:
    if (parsed) adv_free(&ai);
    tensor_unref(vb);
    free(vpos);
    return rc;
}
static int index_put_eval(const OpCall *c, IValue *out) { return ev_run(c, out, index_put_fill); }

/* ---- gather / scatter / index_select / embedding ---- */

static int shape_gather(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *idx;
    int64_t dim;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim) ||
        sa_tensor(sa, sa_arg(sa, 2, "index"), "index", &idx)) return -1;
    if (sa_dim(sa, dim, x->ndim, &dim)) return -1;
    if (idx->ndim != x->ndim && !(x->ndim == 0 && idx->ndim <= 1))
        return sa_err(sa, "index must have the same rank as self (%d), got %d", x->ndim, idx->ndim);
    if (!dtype_is_int(idx->dtype)) return sa_err(sa, "index must be an integer tensor");
    meta_alloc(sa, out, x->dtype, idx->ndim, x->device);
    for (int i = 0; i < idx->ndim; i++) out->size[i] = idx->size[i];
    meta_contiguous_strides(sa, out);
    return 0;
}

/* position in x of element `lin` of index tensor idx with the dim coordinate replaced by v */
static int64_t gpos(const Tensor *x, const Tensor *idx, int64_t lin, int dim, int64_t v) {
    int64_t pos = x->offset;
    for (int i = idx->ndim - 1; i >= 0; i--) {
        int64_t c = lin % idx->size[i];
        lin /= idx->size[i];
        if (x->ndim) pos += (i == dim ? v : c) * x->stride[i];
    }
    return pos;
}

static int idx_value(ShapeArgs *sa, const Tensor *idx, int64_t k, int64_t size, int dim, int64_t *v) {
    *v = tensor_get_i(idx, k);
    if (*v < -size || *v >= size)
        return sa_err(sa, "index %lld is out of bounds for dimension %d with size %lld", (long long)*v, dim, (long long)size);
    if (*v < 0) *v += size;
    return 0;
}

static int gather_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self")), *idx = ev_tensor(sa_arg(sa, 2, "index"));
    int64_t dim;
    sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim);
    if (dim < 0) dim += x->ndim ? x->ndim : 1;
    for (int i = 0; i < idx->ndim && x->ndim; i++)
        if (i != dim && idx->size[i] > x->size[i]) { sa_err(sa, "index size %lld exceeds self size %lld at dimension %d", (long long)idx->size[i], (long long)x->size[i], i); return -1; }
    int64_t total = tensor_numel(idx), dsize = x->ndim ? x->size[dim] : 1;
    for (int64_t k = 0; k < total; k++) {
        int64_t v;
        if (idx_value(sa, idx, k, dsize, (int)dim, &v)) return -1;
        int64_t sp = gpos(x, idx, k, (int)dim, v), op = tensor_pos(o, k);
        if (ev_intlike(x->dtype)) tensor_store_i(o, op, tensor_load_i(x, sp));
        else tensor_store_f(o, op, tensor_load_f(x, sp));
    }
    return 0;
}
static int gather_eval(const OpCall *c, IValue *out) { return ev_run(c, out, gather_fill); }

/* scatter(self, dim, index, src|value) and scatter_add: out = clone(self); out[.. index ..] (+)= src */
static int scatter_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    bool add = strstr(c->op->name, "scatter_add") != NULL;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self")), *idx, *src = NULL;
    TensorMeta *im;
    double value = 0;
    DType vt;
    if (sa_tensor(sa, sa_arg(sa, 2, "index"), "index", &im)) return -1;
    idx = ev_tensor(sa_arg(sa, 2, "index"));
    ArgRef as = sa_arg(sa, 3, add || strstr(c->op->name, ".src") ? "src" : "value");
    if (arg_is_tensor(sa, as)) src = ev_tensor(as);
    else if (sa_scalar(sa, as, "value", &value, &vt)) return -1;
    if (o != x && tensor_copy_into(c->ctx, o, x)) return -1;
    int64_t dim;
    sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim);
    if (dim < 0) dim += x->ndim ? x->ndim : 1;
    if (idx->ndim != x->ndim || (src && src->ndim != idx->ndim)) { sa_err(sa, "index, self and src must have the same rank"); return -1; }
    for (int i = 0; i < idx->ndim; i++)
        if ((i != dim && idx->size[i] > x->size[i]) || (src && idx->size[i] > src->size[i])) {
            sa_err(sa, "index is larger than self or src at dimension %d", i);
            return -1;
        }
    int64_t total = tensor_numel(idx), dsize = x->ndim ? x->size[dim] : 1;
    for (int64_t k = 0; k < total; k++) {
        int64_t v;
        if (idx_value(sa, idx, k, dsize, (int)dim, &v)) return -1;
        int64_t op = gpos(o, idx, k, (int)dim, v);
        double sv = src ? tensor_load_f(src, gpos(src, idx, k, -1, 0)) : value;
        if (add) sv += tensor_load_f(o, op);
        tensor_store_f(o, op, sv);
    }
    return 0;
}
static int scatter_eval(const OpCall *c, IValue *out) { return ev_run(c, out, scatter_fill); }

static int shape_index_select(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *idx;
    int64_t dim;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim) ||
        sa_tensor(sa, sa_arg(sa, 2, "index"), "index", &idx)) return -1;
    if (sa_dim(sa, dim, x->ndim ? x->ndim : 1, &dim)) return -1;   /* a 0-d self is seen as [1] (ATen wraps 0-d dims) */
    if (idx->ndim > 1) return sa_err(sa, "index must be 0-D or 1-D");
    if (idx->dtype != DT_I64 && idx->dtype != DT_I32)   /* ATen: "Expected dtype int32/int64 for index" */
        return sa_err(sa, "index must be int64 or int32, not %s", dtype_abbrev(idx->dtype));
    meta_alloc(sa, out, x->dtype, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out->size[i] = i == dim ? (idx->ndim ? idx->size[0] : sym_int(sa->sym, 1)) : x->size[i];
    meta_contiguous_strides(sa, out);
    return 0;
}

static int shape_embedding(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *w, *idx;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "weight"), "weight", &w) || sa_tensor(sa, sa_arg(sa, 1, "indices"), "indices", &idx)) return -1;
    if (w->ndim != 2) return sa_err(sa, "weight must be 2-D, got %d-D", w->ndim);
    if (!dtype_is_int(idx->dtype)) return sa_err(sa, "indices must be an integer tensor");
    if (idx->ndim + 1 > MI_MAX_DIMS) return sa_err(sa, "rank too large");
    meta_alloc(sa, out, w->dtype, idx->ndim + 1, w->device);
    for (int i = 0; i < idx->ndim; i++) out->size[i] = idx->size[i];
    out->size[idx->ndim] = w->size[1];
    meta_contiguous_strides(sa, out);
    return 0;
}

/* index_select and embedding: rows of x picked along dim by a flat index */
static int take_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    bool emb = strstr(c->op->name, "embedding") != NULL;
    Tensor *x = ev_tensor(sa_arg(sa, 0, NULL)), *idx = ev_tensor(sa_arg(sa, emb ? 1 : 2, NULL));
    int64_t dim = 0;
    if (!emb) { sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &dim); if (dim < 0) dim += x->ndim; }
    int64_t ni = tensor_numel(idx), dsize = x->ndim ? x->size[dim] : 1;   /* 0-d self: one element, index 0 */
    int64_t total = tensor_numel(o);
    /* o viewed as [outer, ni, inner] over x's [outer, dsize, inner] */
    int64_t inner = 1, outer = 1;
    for (int i = dim + 1; i < x->ndim; i++) inner *= x->size[i];
    for (int i = 0; i < dim; i++) outer *= x->size[i];
    (void)total;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t k = 0; k < ni; k++) {
            int64_t v;
            if (idx_value(sa, idx, k, dsize, (int)dim, &v)) return -1;
            for (int64_t b = 0; b < inner; b++) {
                int64_t sl = (a * dsize + v) * inner + b, ol = (a * ni + k) * inner + b;
                tensor_set_f(o, ol, tensor_get_f(x, sl));
            }
        }
    return 0;
}
static int take_eval(const OpCall *c, IValue *out) { return ev_run(c, out, take_fill); }

/* ---- slice_scatter / select_scatter ---- */

static int shape_slice_scatter(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *src;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || sa_tensor(sa, sa_arg(sa, 1, "src"), "src", &src)) return -1;
    bool select = strstr(sa->op->name, "select_scatter") != NULL;
    if (src->ndim != x->ndim - (select ? 1 : 0))
        return sa_err(sa, "src has rank %d but the %s of self has rank %d", src->ndim, select ? "selection" : "slice",
                      x->ndim - (select ? 1 : 0));
    /* ATen's slice_scatter / select_scatter start from clone_preserve_strides(self): the result
     * has self's strides even when self is a non-dense view (a slice of a slice) */
    meta_alloc(sa, out, x->dtype, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = x->stride[i]; }
    return 0;
}

static int scatter_view_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    int rc = -1;
    Tensor *v = NULL;
    bool select = strstr(c->op->name, "select_scatter") != NULL;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self")), *src = ev_tensor(sa_arg(sa, 1, "src"));
    if (tensor_copy_into(c->ctx, o, x)) { sa_err(sa, "%s", c->ctx->err.msg); goto done; }
    int64_t dim = 0, size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off = o->offset;
    ArgRef ad = sa_arg(sa, 2, "dim");
    if (arg_present(ad) && sa_const_int(sa, ad, "dim", &dim)) goto done;
    if (sa_dim(sa, dim, x->ndim, &dim)) goto done;
    int nd = 0;
    if (select) {
        int64_t idx;
        if (sa_const_int(sa, sa_arg(sa, 3, "index"), "index", &idx)) goto done;
        if (idx < -x->size[dim] || idx >= x->size[dim]) { sa_err(sa, "index %lld out of range for size %lld", (long long)idx, (long long)x->size[dim]); goto done; }
        if (idx < 0) idx += x->size[dim];
        off += idx * o->stride[dim];
        for (int i = 0; i < o->ndim; i++) if (i != dim) { size[nd] = o->size[i]; stride[nd] = o->stride[i]; nd++; }
    } else {
        int64_t start = 0, end = INT64_MAX, step = 1, len = x->size[dim];
        ArgRef as = sa_arg(sa, 3, "start"), ae = sa_arg(sa, 4, "end"), ap = sa_arg(sa, 5, "step");
        if ((arg_present(as) && sa_const_int(sa, as, "start", &start)) || (arg_present(ae) && sa_const_int(sa, ae, "end", &end)) ||
            (arg_present(ap) && sa_const_int(sa, ap, "step", &step))) goto done;
        if (step <= 0) { sa_err(sa, "step must be positive"); goto done; }
        if (start < 0) start += len;
        if (end < 0) end += len;
        if (start < 0) start = 0;
        if (start > len) start = len;
        if (end > len) end = len;
        if (end < start) end = start;
        for (int i = 0; i < o->ndim; i++) { size[i] = o->size[i]; stride[i] = o->stride[i]; }
        size[dim] = (end - start + step - 1) / step;
        stride[dim] *= step;
        off += start * o->stride[dim];
        nd = o->ndim;
    }
    bool same = src->ndim == nd;
    for (int i = 0; same && i < nd; i++) same = src->size[i] == size[i];
    if (!same) {
        char a[128], b[128];
        Tensor tmp = *o;
        tmp.ndim = nd;
        memcpy(tmp.size, size, sizeof size);
        sa_err(sa, "src %s does not match the target region %s", tensor_type_str(src, a, sizeof a), tensor_type_str(&tmp, b, sizeof b));
        goto done;
    }
    v = tensor_view(o, nd, size, stride, off);
    if (tensor_copy_into(c->ctx, v, src)) { sa_err(sa, "%s", c->ctx->err.msg); goto done; }
    rc = 0;
done:
    tensor_unref(v);
    return rc;
}
static int scatter_view_eval(const OpCall *c, IValue *out) { return ev_run(c, out, scatter_view_fill); }

/* ---- constant_pad_nd(self, pad, value): pad = [left_last, right_last, left_prev, ...] ---- */

static int pad_parse(ShapeArgs *sa, TensorMeta **x, int64_t *lo, int64_t *hi) {
    int64_t pad[2 * MI_MAX_DIMS];
    int n;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", x) || sa_const_int_list(sa, sa_arg(sa, 1, "pad"), "pad", pad, &n, 2 * MI_MAX_DIMS))
        return -1;
    if (n % 2 || n / 2 > (*x)->ndim) return sa_err(sa, "pad needs an even number of values, at most 2 per dimension (got %d)", n);
    for (int i = 0; i < (*x)->ndim; i++) lo[i] = hi[i] = 0;
    for (int k = 0; k < n / 2; k++) { lo[(*x)->ndim - 1 - k] = pad[2 * k]; hi[(*x)->ndim - 1 - k] = pad[2 * k + 1]; }
    return 0;
}

static int shape_pad(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t lo[MI_MAX_DIMS], hi[MI_MAX_DIMS];
    *nout = 1;
    if (pad_parse(sa, &x, lo, hi)) return -1;
    meta_alloc(sa, out, x->dtype, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) {
        out->size[i] = sym_add(sa->sym, x->size[i], sym_int(sa->sym, lo[i] + hi[i]));
        int64_t v;
        if (sym_is_int(out->size[i], &v) && v < 0) return sa_err(sa, "padding makes dimension %d negative", i);
    }
    meta_contiguous_strides(sa, out);
    return 0;
}

static int pad_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    TensorMeta *xm;
    int rc = -1;
    int64_t lo[MI_MAX_DIMS], hi[MI_MAX_DIMS];
    Tensor *dv = NULL, *sv = NULL;
    double value = 0;
    DType vt;
    if (pad_parse(sa, &xm, lo, hi)) goto done;
    ArgRef av = sa_arg(sa, 2, "value");
    if (arg_present(av) && sa_scalar(sa, av, "value", &value, &vt)) goto done;
    for (int64_t k = 0; k < tensor_numel(o); k++) tensor_set_f(o, k, value);
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t size[MI_MAX_DIMS], soff = x->offset, doff = o->offset;
    bool empty = false;
    for (int i = 0; i < x->ndim; i++) {
        int64_t s0 = lo[i] < 0 ? -lo[i] : 0, d0 = lo[i] > 0 ? lo[i] : 0;
        size[i] = x->size[i] - s0 - (hi[i] < 0 ? -hi[i] : 0);
        if (size[i] <= 0) empty = true;
        soff += s0 * x->stride[i];
        doff += d0 * o->stride[i];
    }
    if (!empty) {
        sv = tensor_view(x, x->ndim, size, x->stride, soff);
        dv = tensor_view(o, o->ndim, size, o->stride, doff);
        if (tensor_copy_into(c->ctx, dv, sv)) { sa_err(sa, "%s", c->ctx->err.msg); goto done; }
    }
    rc = 0;
done:
    tensor_unref(dv);
    tensor_unref(sv);
    return rc;
}
static int pad_eval(const OpCall *c, IValue *out) { return ev_run(c, out, pad_fill); }

const OpDef ops_index_table[] = {
    {"aten.constant_pad_nd.default", 0, op_infer_generic, pad_eval, "pad (or crop, when negative) with a constant", shape_pad, NULL},
    {"aten.cat.default", 0, op_infer_generic, cat_eval, "concatenate along dim", shape_cat, NULL},
    {"aten.stack.default", 0, op_infer_generic, stack_eval, "stack along a new dim", shape_stack, NULL},
    {"aten.index.Tensor", 0, op_infer_generic, index_eval, "advanced indexing x[i, None, j]", shape_index, NULL},
    {"aten._unsafe_index.Tensor", 0, op_infer_generic, index_eval, "index.Tensor without bounds checks", shape_index, NULL},
    {"aten._unsafe_index_put.default", OPF_SCATTER, op_infer_generic, index_put_eval, "index_put without bounds checks", shape_index_put, NULL},
    {"aten.index_put.default", OPF_SCATTER, op_infer_generic, index_put_eval, "clone of self with x[indices] = values (or +=)", shape_index_put, NULL},
    {"aten.index_put_.default", OPF_INPLACE, op_infer_generic, index_put_eval, "in-place x[indices] = values (or +=)", shape_index_put, NULL},
    {"aten.gather.default", 0, op_infer_generic, gather_eval, "out[i][j] = self[index[i][j]][j] (dim 0)", shape_gather, NULL},
    {"aten.scatter_add.default", OPF_SCATTER, op_infer_generic, scatter_eval, "clone of self; self[index[i][j]][j] += src[i][j]", shape_like_self, NULL},
    {"aten.scatter.src", OPF_SCATTER, op_infer_generic, scatter_eval, "clone of self; self[index[i][j]][j] = src[i][j]", shape_like_self, NULL},
    {"aten.scatter.value", OPF_SCATTER, op_infer_generic, scatter_eval, "clone of self; self[index[i][j]][j] = value", shape_like_self, NULL},
    {"aten.scatter_add_.default", OPF_INPLACE, op_infer_generic, scatter_eval, "in-place scatter_add", shape_like_self, NULL},
    {"aten.index_select.default", 0, op_infer_generic, take_eval, "rows of self along dim picked by a 1-D index", shape_index_select, NULL},
    {"aten.embedding.default", 0, op_infer_generic, take_eval, "weight[indices]", shape_embedding, NULL},
    {"aten.slice_scatter.default", OPF_SCATTER, op_infer_generic, scatter_view_eval, "clone of self with self[start:end:step] = src along dim", shape_slice_scatter, NULL},
    {"aten.select_scatter.default", OPF_SCATTER, op_infer_generic, scatter_view_eval, "clone of self with self[index] = src along dim", shape_slice_scatter, NULL},
};
const int ops_index_count = sizeof ops_index_table / sizeof ops_index_table[0];
