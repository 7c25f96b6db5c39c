/* ops_scan.c — ops that work along one dimension a line at a time, which Inductor lowers
 * with its scan/sort templates or falls back to ATen for: cumsum, cumprod, cummax, cummin,
 * logcumsumexp, sort, topk, kthvalue, median, nanmedian, mode, searchsorted, bucketize, and
 * the data-dependent nonzero / masked_select. Reference implementations follow ATen's CPU
 * kernels (NaN ordering: NaN is the largest value; ties keep the original order). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SC_CUMSUM, SC_CUMPROD, SC_CUMMAX, SC_CUMMIN, SC_LOGCUMSUMEXP, SC_SORT, SC_SORT_STABLE, SC_TOPK, SC_KTHVALUE,
       SC_MEDIAN_ALL, SC_MEDIAN_DIM, SC_NANMEDIAN_ALL, SC_NANMEDIAN_DIM, SC_MODE };
typedef struct ScanSpec { int kind; } ScanSpec;
#define KIND(sa) (((const ScanSpec *)(sa)->op->data)->kind)

/* ---- shapes ---- */

static void like(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, DType dt) {
    meta_alloc(sa, out, dt, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out->size[i] = x->size[i];
    meta_contiguous_strides(sa, out);
}

/* x with dimension d set to `n` (removed when n is NULL) */
static void reduced(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, int d, Expr *n, DType dt) {
    int nd = x->ndim - (n ? 0 : 1);
    if (x->ndim == 0) nd = 0;
    meta_alloc(sa, out, dt, nd, x->device);
    for (int i = 0, k = 0; i < x->ndim; i++) {
        if (i == d && !n) continue;
        out->size[k++] = i == d ? n : x->size[i];
    }
    meta_contiguous_strides(sa, out);
}

static int dim_arg(ShapeArgs *sa, const TensorMeta *x, int pos, const char *name, int64_t dflt, int64_t *d) {
    ArgRef a = sa_arg(sa, pos, name);
    int64_t v = dflt;
    if (arg_present(a) && sa_const_int(sa, a, name, &v)) return -1;
    return sa_dim(sa, v, x->ndim, d);
}

static int shape_scan(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int kind = KIND(sa);
    int64_t d;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    *nout = 1;
    switch (kind) {
    case SC_CUMSUM: case SC_CUMPROD: {
        if (dim_arg(sa, x, 1, "dim", 0, &d)) return -1;
        DType dt = ev_intlike(x->dtype) ? DT_I64 : x->dtype;
        like(sa, out, x, arg_dtype(sa_arg(sa, -1, "dtype"), dt));
        return 0;
    }
    case SC_LOGCUMSUMEXP:
        if (dim_arg(sa, x, 1, "dim", 0, &d)) return -1;
        if (ev_intlike(x->dtype)) return sa_err(sa, "logcumsumexp needs a floating point input, got %s", dtype_abbrev(x->dtype));
        like(sa, out, x, x->dtype);
        return 0;
    case SC_CUMMAX: case SC_CUMMIN:
        if (dim_arg(sa, x, 1, "dim", 0, &d)) return -1;
        like(sa, &out[0], x, x->dtype);
        like(sa, &out[1], x, DT_I64);
        *nout = 2;
        return 0;
    case SC_SORT: case SC_SORT_STABLE:
        if (dim_arg(sa, x, kind == SC_SORT ? 1 : -1, "dim", -1, &d)) return -1;
        like(sa, &out[0], x, x->dtype);
        like(sa, &out[1], x, DT_I64);
        *nout = 2;
        return 0;
    case SC_TOPK: {
        Expr *k;
        if (sa_int(sa, sa_arg(sa, 1, "k"), "k", &k) || dim_arg(sa, x, 2, "dim", -1, &d)) return -1;
        Expr *len = x->ndim ? x->size[d] : sym_int(sa->sym, 1);
        if (ex_cmp(sa, k, len) > 0 || ex_cmp(sa, k, sym_int(sa->sym, 0)) < 0) return sa_err(sa, "selected index k out of range");
        if (x->ndim == 0) { like(sa, &out[0], x, x->dtype); like(sa, &out[1], x, DT_I64); }
        else { reduced(sa, &out[0], x, (int)d, k, x->dtype); reduced(sa, &out[1], x, (int)d, k, DT_I64); }
        *nout = 2;
        return 0;
    }
    case SC_MEDIAN_ALL: case SC_NANMEDIAN_ALL:
        meta_alloc(sa, out, x->dtype, 0, x->device);
        return 0;
    case SC_KTHVALUE: case SC_MEDIAN_DIM: case SC_NANMEDIAN_DIM: case SC_MODE: {
        int pos = kind == SC_KTHVALUE ? 2 : 1;
        if (dim_arg(sa, x, pos, "dim", -1, &d)) return -1;
        bool keep = arg_bool(sa_arg(sa, pos + 1, "keepdim"), false);
        Expr *one = keep ? sym_int(sa->sym, 1) : NULL;
        if (x->ndim == 0) { like(sa, &out[0], x, x->dtype); like(sa, &out[1], x, DT_I64); }
        else { reduced(sa, &out[0], x, (int)d, one, x->dtype); reduced(sa, &out[1], x, (int)d, one, DT_I64); }
        *nout = 2;
        return 0;
    }
    }
    return sa_err(sa, "unknown scan");
}

/* ---- lines along a dim ---- */

/* Comparison with NaN as the largest value; ties by original position (stable). */
typedef struct Item { double v; int64_t i; } Item;
static int cmp_asc(const void *a, const void *b) {
    const Item *x = a, *y = b;
    bool nx = isnan(x->v), ny = isnan(y->v);
    if (nx != ny) return nx ? 1 : -1;
    if (!nx && x->v != y->v) return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}
static int cmp_desc(const void *a, const void *b) {
    const Item *x = a, *y = b;
    bool nx = isnan(x->v), ny = isnan(y->v);
    if (nx != ny) return nx ? -1 : 1;
    if (!nx && x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static double load(const Tensor *t, int64_t pos) {
    return ev_intlike(t->dtype) ? (double)tensor_load_i(t, pos) : tensor_load_f(t, pos);
}
static void store(Tensor *t, int64_t pos, double v) {
    if (ev_intlike(t->dtype)) tensor_store_i(t, pos, (int64_t)v);
    else tensor_store_f(t, pos, v);
}

/* line `l` of x along d: storage positions of its n elements */
static void line_pos(const Tensor *x, int d, int64_t l, int64_t *pos) {
    int64_t base = x->offset, rem = l;
    for (int i = x->ndim - 1; i >= 0; i--) {
        if (i == d) continue;
        base += (rem % x->size[i]) * x->stride[i];
        rem /= x->size[i];
    }
    int64_t n = x->ndim ? x->size[d] : 1, st = x->ndim ? x->stride[d] : 0;
    for (int64_t k = 0; k < n; k++) pos[k] = base + k * st;
}

static int64_t nlines(const Tensor *x, int d) {
    int64_t n = 1;
    for (int i = 0; i < x->ndim; i++) if (i != d) n *= x->size[i];
    return n;
}

static int64_t line_len(const Tensor *x, int d) { return x->ndim ? x->size[d] : 1; }

/* ---- eval ---- */

static int scan_line(int kind, const Tensor *x, const int64_t *px, Tensor *o, const int64_t *po, Tensor *oi, const int64_t *pi,
                     int64_t n, int64_t k, bool largest, bool sorted, Item *it) {
    bool f32 = x->dtype == DT_F32;
    switch (kind) {
    case SC_CUMSUM: case SC_CUMPROD: {
        bool ints = ev_intlike(o->dtype);
        int64_t ia = kind == SC_CUMSUM ? 0 : 1;
        double a = kind == SC_CUMSUM ? 0 : 1;
        for (int64_t e = 0; e < n; e++) {
            if (ints) {
                int64_t v = tensor_load_i(x, px[e]);
                ia = kind == SC_CUMSUM ? (int64_t)((uint64_t)ia + (uint64_t)v) : (int64_t)((uint64_t)ia * (uint64_t)v);
                tensor_store_i(o, po[e], ia);
            } else {
                double v = load(x, px[e]);
                a = kind == SC_CUMSUM ? a + v : a * v;
                if (o->dtype == DT_F32) a = (float)a;    /* ATen accumulates in the output type */
                tensor_store_f(o, po[e], a);
            }
        }
        return 0;
    }
    case SC_LOGCUMSUMEXP: {
        double a = -INFINITY;
        for (int64_t e = 0; e < n; e++) {
            double v = load(x, px[e]);
            double mx = a > v ? a : v, mn = a > v ? v : a;
            if (isnan(v) || isnan(a)) a = NAN;
            else if (isinf(mx) && mx == mn) a = mx;
            else a = mx + log1p(exp(mn - mx));
            if (f32) a = (float)a;
            tensor_store_f(o, po[e], a);
        }
        return 0;
    }
    case SC_CUMMAX: case SC_CUMMIN: {
        double best = 0;
        int64_t bi = 0;
        for (int64_t e = 0; e < n; e++) {
            double v = load(x, px[e]);
            if (e == 0 || isnan(v) || (!isnan(best) && (kind == SC_CUMMAX ? v >= best : v <= best))) { best = v; bi = e; }
            store(o, po[e], best);
            tensor_store_i(oi, pi[e], bi);
        }
        return 0;
    }
    default: break;
    }
    for (int64_t e = 0; e < n; e++) { it[e].v = load(x, px[e]); it[e].i = e; }
    switch (kind) {
    case SC_SORT: case SC_SORT_STABLE:
        qsort(it, (size_t)n, sizeof *it, largest ? cmp_desc : cmp_asc);
        for (int64_t e = 0; e < n; e++) { store(o, po[e], it[e].v); tensor_store_i(oi, pi[e], it[e].i); }
        return 0;
    case SC_TOPK:
        qsort(it, (size_t)n, sizeof *it, largest ? cmp_desc : cmp_asc);
        if (!sorted) { /* the k picked, back in input order (as ATen's partial sort leaves them) */
            for (int64_t a = 1; a < k; a++)
                for (int64_t b2 = a; b2 > 0 && it[b2 - 1].i > it[b2].i; b2--) { Item t = it[b2]; it[b2] = it[b2 - 1]; it[b2 - 1] = t; }
        }
        for (int64_t e = 0; e < k; e++) { store(o, po[e], it[e].v); tensor_store_i(oi, pi[e], it[e].i); }
        return 0;
    case SC_KTHVALUE: case SC_MEDIAN_DIM: case SC_MEDIAN_ALL: case SC_NANMEDIAN_DIM: case SC_NANMEDIAN_ALL: {
        qsort(it, (size_t)n, sizeof *it, cmp_asc);
        int64_t pick;
        if (kind == SC_KTHVALUE) pick = k - 1;
        else {
            int64_t cnt = n;
            bool nanmed = kind == SC_NANMEDIAN_DIM || kind == SC_NANMEDIAN_ALL;
            if (nanmed) { cnt = 0; while (cnt < n && !isnan(it[cnt].v)) cnt++; }
            if (!nanmed && n && isnan(it[n - 1].v)) {       /* median of a line with NaN is NaN (its first NaN) */
                int64_t f = 0;
                while (!isnan(it[f].v)) f++;
                pick = f;
            } else pick = cnt ? (cnt - 1) / 2 : 0;
            if (nanmed && cnt == 0) pick = 0;
        }
        if (n == 0) return -1;
        store(o, po[0], it[pick].v);
        if (oi) tensor_store_i(oi, pi[0], it[pick].i);
        return 0;
    }
    case SC_MODE: {
        qsort(it, (size_t)n, sizeof *it, cmp_asc);
        double bv = 0; int64_t bc = 0, bidx = 0;
        for (int64_t a = 0; a < n;) {
            int64_t b2 = a, last = it[a].i;
            while (b2 < n && (it[b2].v == it[a].v || (isnan(it[b2].v) && isnan(it[a].v)))) { if (it[b2].i > last) last = it[b2].i; b2++; }
            if (b2 - a > bc) { bc = b2 - a; bv = it[a].v; bidx = last; }
            a = b2;
        }
        store(o, po[0], bv);
        tensor_store_i(oi, pi[0], bidx);
        return 0;
    }
    }
    return -1;
}

static int scan_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    TensorMeta m[OP_MAX_OUTS];
    int nm, rc = -1, kind = KIND(sa);
    Tensor *o = NULL, *oi = NULL;
    int64_t *px = NULL, *po = NULL, *pi = NULL;
    Item *it = NULL;
    if (ev_shape(sa, m, &nm)) goto done;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t d = 0, k = 0;
    bool largest = false, sorted = true;
    int dpos = kind == SC_SORT || kind == SC_CUMSUM || kind == SC_CUMPROD || kind == SC_CUMMAX || kind == SC_CUMMIN ||
               kind == SC_LOGCUMSUMEXP || kind == SC_MEDIAN_DIM || kind == SC_NANMEDIAN_DIM || kind == SC_MODE ? 1
             : kind == SC_TOPK || kind == SC_KTHVALUE ? 2 : -1;
    bool all = kind == SC_MEDIAN_ALL || kind == SC_NANMEDIAN_ALL;
    int64_t dflt = kind == SC_CUMSUM || kind == SC_CUMPROD || kind == SC_CUMMAX || kind == SC_CUMMIN || kind == SC_LOGCUMSUMEXP ? 0 : -1;
    if (!all && dim_arg(sa, &(TensorMeta){.ndim = x->ndim}, dpos, "dim", dflt, &d)) goto done;
    if (kind == SC_SORT || kind == SC_SORT_STABLE) largest = arg_bool(sa_arg(sa, kind == SC_SORT ? 2 : -1, "descending"), false);
    if (kind == SC_TOPK) {
        if (sa_const_int(sa, sa_arg(sa, 1, "k"), "k", &k)) goto done;
        largest = arg_bool(sa_arg(sa, 3, "largest"), true);
        sorted = arg_bool(sa_arg(sa, 4, "sorted"), true);
    }
    if (kind == SC_KTHVALUE && sa_const_int(sa, sa_arg(sa, 1, "k"), "k", &k)) goto done;
    Tensor *xx = x;
    if (all) {                   /* median of all elements: one line over the flattened tensor */
        xx = tensor_contiguous(c->ctx, x);
        if (!xx) goto done;
        int64_t n1 = tensor_numel(x);
        Tensor *flat = tensor_view(xx, 1, &n1, (int64_t[]){1}, xx->offset);
        tensor_unref(xx);
        xx = flat;
        if (n1 == 0) { sa_err(sa, "median() input tensor cannot be empty"); tensor_unref(xx); goto done; }
    }
    o = ev_new(sa, &m[0]);
    if (nm > 1) oi = ev_new(sa, &m[1]);
    if (!o || (nm > 1 && !oi)) { if (xx != x) tensor_unref(xx); goto done; }
    int64_t n = line_len(xx, (int)d), lines = nlines(xx, (int)d);
    if (kind == SC_KTHVALUE && (k < 1 || k > n)) { sa_err(sa, "kthvalue(): selected number k out of range for dimension %lld", (long long)d); if (xx != x) tensor_unref(xx); goto done; }
    if ((kind == SC_MEDIAN_DIM || kind == SC_NANMEDIAN_DIM || kind == SC_MODE) && n == 0) {
        sa_err(sa, "median/mode of an empty dimension"); if (xx != x) tensor_unref(xx); goto done;
    }
    px = mi_xcalloc((size_t)(n + 1), sizeof *px);
    po = mi_xcalloc((size_t)(n + 1), sizeof *po);
    pi = mi_xcalloc((size_t)(n + 1), sizeof *pi);
    it = mi_xcalloc((size_t)(n + 1), sizeof *it);
    /* outputs: same-shape (scans, sort), k along d (topk), or one per line (kthvalue, median, mode) */
    bool per_line = kind == SC_KTHVALUE || kind == SC_MEDIAN_DIM || kind == SC_NANMEDIAN_DIM || kind == SC_MODE || all;
    for (int64_t l = 0; l < lines; l++) {
        line_pos(xx, (int)d, l, px);
        if (per_line) {
            po[0] = tensor_pos(o, l);
            if (oi) pi[0] = tensor_pos(oi, l);
        } else {
            line_pos(o, (int)d, l, po);
            if (oi) line_pos(oi, (int)d, l, pi);
        }
        scan_line(kind, xx, px, o, po, oi, pi, n, k, largest, sorted, it);
    }
    if (xx != x) tensor_unref(xx);
    if (oi) ev_out_tuple(out, (Tensor *[]){o, oi}, 2);
    else ev_out_tensor(out, o);
    o = oi = NULL;
    rc = 0;
done:
    if (o) tensor_unref(o);
    if (oi) tensor_unref(oi);
    free(px); free(po); free(pi); free(it);
    return rc;
}
static int scan_eval(const OpCall *c, IValue *out) { return ev_call(c, out, scan_body); }

/* ---- searchsorted / bucketize ---- */

static int shape_search(ShapeArgs *sa, TensorMeta *out, int *nout) {
    bool bucket = !strcmp(sa->op->name, "aten.bucketize.Tensor");
    TensorMeta *v;
    if (sa_tensor(sa, sa_arg(sa, bucket ? 0 : 1, "self"), "self", &v)) return -1;
    bool i32 = arg_bool(sa_arg(sa, 2, "out_int32"), false);
    like(sa, out, v, i32 ? DT_I32 : DT_I64);
    *nout = 1;
    return 0;
}

static int search_fill(ShapeArgs *sa, Tensor *o) {
    bool bucket = !strcmp(sa->call->op->name, "aten.bucketize.Tensor");
    Tensor *seq = ev_tensor(sa_arg(sa, bucket ? 1 : 0, bucket ? "boundaries" : "sorted_sequence"));
    Tensor *v = ev_tensor(sa_arg(sa, bucket ? 0 : 1, "self"));
    Tensor *sorter = bucket ? NULL : ev_tensor(sa_arg(sa, 5, "sorter"));
    bool right = arg_bool(sa_arg(sa, 3, "right"), false);
    const char *side = bucket ? NULL : arg_str(sa_arg(sa, 4, "side"), NULL);
    if (side && !strcmp(side, "right")) right = true;
    if (!seq || !v) { sa_err(sa, "needs tensor arguments"); return -1; }
    if (seq->ndim > 1 && seq->ndim != v->ndim) { sa_err(sa, "boundaries and input must have the same leading dimensions"); return -1; }
    int64_t n = seq->ndim ? seq->size[seq->ndim - 1] : 1, inner = v->ndim ? v->size[v->ndim - 1] : 1;
    int64_t total = tensor_numel(v);
    for (int64_t e = 0; e < total; e++) {
        double x = load(v, tensor_pos(v, e));
        int64_t row = seq->ndim > 1 ? e / (inner ? inner : 1) : 0, lo = 0, hi = n;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            int64_t at = row * n + (sorter ? tensor_load_i(sorter, tensor_pos(sorter, row * n + mid)) : mid);
            double s = load(seq, tensor_pos(seq, at));
            /* ATen's cus_lower_bound / cus_upper_bound: a NaN (or +inf) value lands at the end */
            bool go_right = right ? !(s > x) : !(s >= x);
            if (go_right) lo = mid + 1; else hi = mid;
        }
        tensor_store_i(o, tensor_pos(o, e), lo);
    }
    return 0;
}
static int search_eval(const OpCall *c, IValue *out) { return ev_run(c, out, search_fill); }

/* ---- nonzero / masked_select: the result size depends on the data ---- */

/* The node's own annotation gives the (unbacked) size when inferring from a graph; at run time
 * the count is computed. */
static int shape_data_dependent(ShapeArgs *sa, TensorMeta *out, int *nout) {
    bool nz = !strcmp(sa->op->name, "aten.nonzero.default");
    TensorMeta *x, *mm;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (!nz && sa_tensor(sa, sa_arg(sa, 1, "mask"), "mask", &mm)) return -1;
    if (x->ndim > MI_MAX_DIMS || (!nz && mm->ndim > MI_MAX_DIMS)) return sa_err(sa, "rank too large");
    *nout = 1;
    Expr *count;
    if (sa->eval) {
        Tensor *t = ev_tensor(sa_arg(sa, 0, "self"));
        Tensor *mask = nz ? NULL : ev_tensor(sa_arg(sa, 1, "mask"));
        int64_t cnt = 0, n = tensor_numel(t);
        if (nz) { for (int64_t e = 0; e < n; e++) cnt += load(t, tensor_pos(t, e)) != 0; }
        else {
            int64_t sz[MI_MAX_DIMS]; int nd = t->ndim > mask->ndim ? t->ndim : mask->ndim;
            int64_t total = 1;
            for (int i = 0; i < nd; i++) {
                int a = i - (nd - t->ndim), b = i - (nd - mask->ndim);
                int64_t sa_ = a >= 0 ? t->size[a] : 1, sb = b >= 0 ? mask->size[b] : 1;
                sz[i] = sa_ == 1 ? sb : sa_;
                total *= sz[i];
            }
            for (int64_t e = 0; e < total; e++) {
                int64_t rem = e, mp = mask->offset;
                for (int i = nd - 1; i >= 0; i--) {
                    int64_t idx = rem % sz[i]; rem /= sz[i];
                    int b = i - (nd - mask->ndim);
                    if (b >= 0 && mask->size[b] != 1) mp += idx * mask->stride[b];
                }
                cnt += tensor_load_i(mask, mp) != 0;
            }
        }
        count = sym_int(sa->sym, cnt);
    } else if (sa->node && sa->node->has_meta && sa->node->meta.ndim >= 1) {
        count = sa->node->meta.size[0];
    } else {
        count = sym_symbol(sa->sym, "u0");
    }
    meta_alloc(sa, out, nz ? DT_I64 : x->dtype, nz ? 2 : 1, x->device);
    out->size[0] = count;
    if (nz) out->size[1] = sym_int(sa->sym, x->ndim);
    meta_contiguous_strides(sa, out);
    return 0;
}

static int data_dependent_fill(ShapeArgs *sa, Tensor *o) {
    bool nz = !strcmp(sa->call->op->name, "aten.nonzero.default");
    Tensor *t = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t k = 0;
    if (nz) {
        int64_t n = tensor_numel(t);
        for (int64_t e = 0; e < n; e++) {
            if (load(t, tensor_pos(t, e)) == 0) continue;
            int64_t rem = e;
            for (int i = t->ndim - 1; i >= 0; i--) { tensor_store_i(o, tensor_pos(o, k * t->ndim + i), rem % t->size[i]); rem /= t->size[i]; }
            k++;
        }
    } else {
        Tensor *mask = ev_tensor(sa_arg(sa, 1, "mask"));
        int nd = t->ndim > mask->ndim ? t->ndim : mask->ndim;
        int64_t sz[MI_MAX_DIMS], total = 1;
        for (int i = 0; i < nd; i++) {
            int a = i - (nd - t->ndim), b = i - (nd - mask->ndim);
            int64_t s1 = a >= 0 ? t->size[a] : 1, s2 = b >= 0 ? mask->size[b] : 1;
            sz[i] = s1 == 1 ? s2 : s1;
            total *= sz[i];
        }
        for (int64_t e = 0; e < total; e++) {
            int64_t rem = e, mp = mask->offset, tp = t->offset;
            for (int i = nd - 1; i >= 0; i--) {
                int64_t idx = rem % sz[i]; rem /= sz[i];
                int a = i - (nd - t->ndim), b = i - (nd - mask->ndim);
                if (b >= 0 && mask->size[b] != 1) mp += idx * mask->stride[b];
                if (a >= 0 && t->size[a] != 1) tp += idx * t->stride[a];
            }
            if (tensor_load_i(mask, mp)) store(o, tensor_pos(o, k++), load(t, tp));
        }
    }
    return 0;
}
static int data_dependent_eval(const OpCall *c, IValue *out) { return ev_run(c, out, data_dependent_fill); }

/* ---- frexp (mantissa, exponent) and histc (bin counts) ---- */

static int shape_frexp(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (!dtype_is_float(x->dtype)) return sa_err(sa, "torch.frexp() only supports floating-point dtypes, got %s", dtype_abbrev(x->dtype));
    like(sa, &out[0], x, x->dtype);
    like(sa, &out[1], x, DT_I32);
    *nout = 2;
    return 0;
}

static int frexp_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    Tensor *o = res[0], *e = res[1];
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    for (int64_t k = 0; k < tensor_numel(x); k++) {
        int ex = 0;
        double v = tensor_get_f(x, k), mant = x->dtype == DT_F32 ? (double)frexpf((float)v, &ex) : frexp(v, &ex);
        tensor_set_f(o, k, mant);
        tensor_store_i(e, tensor_pos(e, k), isfinite(v) ? ex : 0);
    }
    return 0;
}
static int frexp_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, frexp_fill); }

static int shape_histc(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t bins = 100;
    ArgRef a = sa_arg(sa, 1, "bins");
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || (arg_present(a) && sa_const_int(sa, a, "bins", &bins))) return -1;
    if (bins <= 0) return sa_err(sa, "bins must be > 0");
    if (!dtype_is_float(x->dtype)) return sa_err(sa, "torch.histc: input tensor must be floating point, got %s", dtype_abbrev(x->dtype));
    meta_alloc(sa, out, x->dtype, 1, x->device);
    out->size[0] = sym_int(sa->sym, bins);
    meta_contiguous_strides(sa, out);
    *nout = 1;
    return 0;
}

/* ATen histc: range [min, max] (the data's when equal, widened by 1 when still equal); x == max
 * falls in the last bin; values outside are not counted */
static int histc_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    double lo = 0, hi = 0;
    DType t;
    ArgRef al = sa_arg(sa, 2, "min"), ah = sa_arg(sa, 3, "max");
    if ((arg_present(al) && sa_scalar(sa, al, "min", &lo, &t)) || (arg_present(ah) && sa_scalar(sa, ah, "max", &hi, &t))) return -1;
    int64_t n = tensor_numel(x), bins = o->size[0];
    if (lo == hi && n) {
        lo = hi = tensor_get_f(x, 0);
        for (int64_t k = 1; k < n; k++) { double v = tensor_get_f(x, k); if (v < lo) lo = v; if (v > hi) hi = v; }
    }
    if (lo == hi) { lo -= 1; hi += 1; }
    if (lo > hi) { sa_err(sa, "torch.histc: max must be larger than min"); return -1; }
    for (int64_t b2 = 0; b2 < bins; b2++) tensor_set_f(o, b2, 0);
    for (int64_t k = 0; k < n; k++) {
        double v = tensor_get_f(x, k);
        if (!(v >= lo && v <= hi)) continue;
        int64_t b2 = (int64_t)((v - lo) * (double)bins / (hi - lo));
        if (b2 >= bins) b2 = bins - 1;
        tensor_set_f(o, b2, tensor_get_f(o, b2) + 1);
    }
    return 0;
}
static int histc_eval(const OpCall *c, IValue *out) { return ev_run(c, out, histc_fill); }

#define SC(name, kind, flags, doc) {name, flags, op_infer_generic, scan_eval, doc, shape_scan, &(const ScanSpec){kind}}
const OpDef ops_scan_table[] = {
    SC("aten.cumsum.default", SC_CUMSUM, 0, "running sum along dim"),
    SC("aten.cumprod.default", SC_CUMPROD, 0, "running product along dim"),
    SC("aten.cummax.default", SC_CUMMAX, OPF_TUPLE, "(running max, its index) along dim"),
    SC("aten.cummin.default", SC_CUMMIN, OPF_TUPLE, "(running min, its index) along dim"),
    SC("aten.logcumsumexp.default", SC_LOGCUMSUMEXP, 0, "running log(sum(exp)) along dim"),
    SC("aten.sort.default", SC_SORT, OPF_TUPLE, "(sorted values, indices) along dim"),
    SC("aten.sort.stable", SC_SORT_STABLE, OPF_TUPLE, "(sorted values, indices) along dim, stable"),
    SC("aten.topk.default", SC_TOPK, OPF_TUPLE, "(k largest/smallest values, indices) along dim"),
    SC("aten.kthvalue.default", SC_KTHVALUE, OPF_TUPLE, "(k-th smallest value, index) along dim"),
    SC("aten.median.default", SC_MEDIAN_ALL, 0, "lower median of all elements (nan if any)"),
    SC("aten.median.dim", SC_MEDIAN_DIM, OPF_TUPLE, "(lower median, index) along dim"),
    SC("aten.nanmedian.default", SC_NANMEDIAN_ALL, 0, "lower median ignoring nan"),
    SC("aten.nanmedian.dim", SC_NANMEDIAN_DIM, OPF_TUPLE, "(lower median ignoring nan, index) along dim"),
    SC("aten.mode.default", SC_MODE, OPF_TUPLE, "(most frequent value, index) along dim"),
    {"aten.frexp.Tensor", OPF_TUPLE, op_infer_generic, frexp_eval, "(mantissa in [0.5, 1), int32 exponent)", shape_frexp, NULL},
    {"aten.histc.default", 0, op_infer_generic, histc_eval, "histogram counts of `bins` equal bins over [min, max]", shape_histc, NULL},
    {"aten.searchsorted.Tensor", 0, op_infer_generic, search_eval, "insertion indices into a sorted sequence", shape_search, NULL},
    {"aten.bucketize.Tensor", 0, op_infer_generic, search_eval, "bucket indices of values in boundaries", shape_search, NULL},
    {"aten.nonzero.default", 0, op_infer_generic, data_dependent_eval, "indices of nonzero elements [n, ndim]", shape_data_dependent, NULL},
    {"aten.masked_select.default", 0, op_infer_generic, data_dependent_eval, "elements where mask is true (1-D)", shape_data_dependent, NULL},
};
const int ops_scan_count = sizeof ops_scan_table / sizeof ops_scan_table[0];
