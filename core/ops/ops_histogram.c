/* ops_histogram.c — histogram and histogramdd as ATen's Histogram.cpp / HistogramKernel.cpp
 * compute them: histogram.bin_ct / .bins_tensor (1-D, over all elements), and the pieces
 * torch.histogramdd is traced into: _histogramdd_bin_edges (the edge tensors),
 * _histogramdd_from_bin_cts (counts over equal bins) and _histogramdd_from_bin_tensors
 * (counts over given edges). Inductor falls back to ATen for all of them, so compiled code
 * calls these reference kernels. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { HG_BIN_CT, HG_BINS_TENSOR, HG_DD_EDGES, HG_DD_CTS, HG_DD_TENSORS };
typedef struct HistSpec { int kind; } HistSpec;
#define HKIND(sa) (((const HistSpec *)(sa)->op->data)->kind)
#define HG_MAX_D 16

/* the input seen as [N, D] rows: D = 1 for histogram, the last dim for histogramdd */
static int hist_dims(ShapeArgs *sa, const TensorMeta *x, int64_t *D) {
    if (HKIND(sa) <= HG_BINS_TENSOR) { *D = 1; return 0; }
    if (x->ndim < 1 || !sym_is_int(x->size[x->ndim - 1], D)) return sa_err(sa, "torch.histogramdd: input must have at least one dimension of known size");
    if (*D < 1 || *D > HG_MAX_D) return sa_err(sa, "torch.histogramdd: %lld dimensions (at most %d supported)", (long long)*D, HG_MAX_D);
    return 0;
}

/* bin counts: an int (bin_ct) or an int list (histogramdd), one per dim */
static int hist_counts(ShapeArgs *sa, int64_t D, int64_t *ct) {
    int n = 1;
    ArgRef a = sa_arg(sa, 1, "bins");
    if (HKIND(sa) == HG_BIN_CT) { ct[0] = 100; if (arg_present(a) && sa_const_int(sa, a, "bins", &ct[0])) return -1; }
    else if (sa_const_int_list(sa, a, "bins", ct, &n, HG_MAX_D)) return -1;
    if (n != D) return sa_err(sa, "torch.histogramdd: expected %lld sequences of bin edges or bin counts, got %d", (long long)D, n);
    for (int d = 0; d < D; d++) if (ct[d] <= 0) return sa_err(sa, "torch.histogramdd(): bins must be > 0, but got %lld for dimension %d", (long long)ct[d], d);
    return 0;
}

static int shape_hist(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *e[HG_MAX_D];
    int64_t D, ct[HG_MAX_D];
    int kind = HKIND(sa);
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || hist_dims(sa, x, &D)) return -1;
    if (!dtype_is_float(x->dtype)) return sa_err(sa, "torch.histogram: input tensor must be floating point, got %s", dtype_abbrev(x->dtype));
    if (kind == HG_BINS_TENSOR || kind == HG_DD_TENSORS) {
        ArgRef a = sa_arg(sa, 1, "bins");
        int n = kind == HG_BINS_TENSOR ? 1 : arg_list_len(a);
        if (n != D) return sa_err(sa, "torch.histogramdd: expected %lld bin edge tensors, got %d", (long long)D, n);
        for (int d = 0; d < D; d++) {
            if (sa_tensor(sa, kind == HG_BINS_TENSOR ? a : arg_item(a, d), "bins", &e[d])) return -1;
            if (e[d]->dtype != x->dtype) return sa_err(sa, "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got %s and %s", dtype_abbrev(x->dtype), dtype_abbrev(e[d]->dtype));
            if (e[d]->ndim != 1 || !sym_is_int(e[d]->size[0], &ct[d]) || ct[d] < 1)
                return sa_err(sa, "torch.histogramdd(): bins tensor should have one dimension and at least 1 element");
            ct[d]--;
        }
    } else if (hist_counts(sa, D, ct)) return -1;
    if (kind == HG_DD_EDGES) {
        *nout = (int)D;
        for (int d = 0; d < D; d++) {
            meta_alloc(sa, &out[d], x->dtype, 1, x->device);
            out[d].size[0] = sym_int(sa->sym, ct[d] + 1);
            meta_contiguous_strides(sa, &out[d]);
        }
        return 0;
    }
    bool dd = kind >= HG_DD_EDGES;
    meta_alloc(sa, &out[0], x->dtype, dd ? (int)D : 1, x->device);
    for (int d = 0; d < D; d++) out[0].size[d] = sym_int(sa->sym, ct[d]);
    meta_contiguous_strides(sa, &out[0]);
    *nout = 1;
    if (!dd) {
        *nout = 2;
        meta_alloc(sa, &out[1], x->dtype, 1, x->device);
        out[1].size[0] = sym_int(sa->sym, ct[0] + 1);
        meta_contiguous_strides(sa, &out[1]);
    }
    return 0;
}

/* ATen's linspace kernel in the edges' dtype: from both ends, step (end - start) / (n - 1) */
static void fill_linspace(Tensor *t, double lo, double hi) {
    int64_t n = t->size[0];
    bool f32 = t->dtype == DT_F32;
    double step = n > 1 ? (f32 ? (double)(((float)hi - (float)lo) / (float)(n - 1)) : (hi - lo) / (double)(n - 1)) : 0;
    for (int64_t i = 0; i < n; i++) {
        double v = i < n / 2 ? (f32 ? (double)((float)lo + (float)step * (float)i) : lo + step * (double)i)
                             : (f32 ? (double)((float)hi - (float)step * (float)(n - 1 - i)) : hi - step * (double)(n - 1 - i));
        tensor_set_f(t, i, n == 1 ? lo : v);
    }
}

/* select_outer_bin_edges: `range` (2 per dim) or the data's min and max per dim; infinite
 * ranges refused; an empty range widened by 0.5 each side (NumPy). Empty input: [-0.5, 0.5]. */
static int outer_edges(ShapeArgs *sa, const Tensor *x, int64_t D, double *lo, double *hi) {
    ArgRef r = sa_arg(sa, 2, "range");
    int64_t N = D ? tensor_numel(x) / D : 0;
    if (arg_present(r)) {
        if (arg_list_len(r) != 2 * D) return sa_err(sa, "torch.histogramdd: range should have %lld elements, but got %d", (long long)(2 * D), arg_list_len(r));
        for (int d = 0; d < D; d++) {
            DType t;
            if (sa_scalar(sa, arg_item(r, 2 * d), "range", &lo[d], &t) || sa_scalar(sa, arg_item(r, 2 * d + 1), "range", &hi[d], &t)) return -1;
        }
    } else
        for (int d = 0; d < D; d++) {
            lo[d] = hi[d] = 0;
            for (int64_t i = 0; i < N; i++) {
                double v = tensor_get_f(x, i * D + d);
                if (i == 0 || isnan(v) || v < lo[d]) lo[d] = isnan(lo[d]) && i ? lo[d] : v;   /* aminmax: NaN wins */
                if (i == 0 || isnan(v) || v > hi[d]) hi[d] = isnan(hi[d]) && i ? hi[d] : v;
            }
        }
    for (int d = 0; d < D; d++) {
        if (!isfinite(lo[d]) || !isfinite(hi[d]))
            return sa_err(sa, "torch.histogramdd: dimension %d's range [%g, %g] is not finite", d, lo[d], hi[d]);
        if (lo[d] > hi[d]) return sa_err(sa, "torch.histogramdd: min should not exceed max, but got min %g max %g for dimension %d", lo[d], hi[d], d);
        if (lo[d] == hi[d]) { lo[d] -= 0.5; hi[d] += 0.5; }
    }
    return 0;
}

/* first edge index whose value is > v (std::upper_bound) in e[lo, hi) */
static int64_t upper_bound(const Tensor *e, int64_t lo, int64_t hi, double v) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (tensor_get_f(e, mid) <= v) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* histogramdd_cpu_contiguous: per row, skip it when any coordinate is outside [first edge, last
 * edge] (or NaN); the bin by binary search (given edges) or by division then a local search
 * (equal bins); the last bin keeps its right edge. density divides by the total and the bin
 * widths. Example: x [0, .5, 1], 2 bins over [0, 1]: edges [0, .5, 1], counts [1, 2]. */
static int hist_fill(ShapeArgs *sa, const Tensor *x, int64_t D, Tensor *const *edges, bool linear, Tensor *h) {
    ArgRef aw = sa_arg(sa, 3, "weight"), ad = sa_arg(sa, 4, "density");
    if (HKIND(sa) == HG_BINS_TENSOR || HKIND(sa) == HG_DD_TENSORS) { aw = sa_arg(sa, 2, "weight"); ad = sa_arg(sa, 3, "density"); }
    Tensor *w = arg_present(aw) ? ev_tensor(aw) : NULL;
    int64_t N = D ? tensor_numel(x) / D : 0, nh = tensor_numel(h);
    if (w && tensor_numel(w) != N) return sa_err(sa, "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension");
    for (int64_t k = 0; k < nh; k++) tensor_set_f(h, k, 0);
    for (int64_t i = 0; i < N; i++) {
        int64_t at = 0;
        bool skip = false;
        for (int d = 0; d < D && !skip; d++) {
            const Tensor *e = edges[d];
            int64_t ne = e->size[0];
            double v = tensor_get_f(x, i * D + d), lo = tensor_get_f(e, 0), hi = tensor_get_f(e, ne - 1);
            if (ne < 2 || !(v >= lo && v <= hi)) { skip = true; break; }
            int64_t pos;
            if (!linear) pos = upper_bound(e, 0, ne, v) - 1;
            else {
                pos = (int64_t)((v - lo) * (double)(ne - 1) / (hi - lo));
                int64_t pmin = pos - 1 > 0 ? pos - 1 : 0, pmax = pos + 2 < ne ? pos + 2 : ne;
                pos = upper_bound(e, pmin, pmax, v) - 1;
            }
            if (pos == ne - 1) pos--;
            if (pos < 0 || pos > ne - 2) { skip = true; break; }   /* edges that are not sorted */
            at = at * (ne - 1) + pos;
        }
        if (!skip) tensor_set_f(h, at, tensor_get_f(h, at) + (w ? tensor_get_f(w, i) : 1));
    }
    if (arg_bool(ad, false)) {
        double total = 0;
        for (int64_t k = 0; k < nh; k++) total += tensor_get_f(h, k);
        for (int64_t k = 0; k < nh; k++) {
            double v = tensor_get_f(h, k) / total;
            int64_t rem = k;
            for (int d = (int)D - 1; d >= 0; d--) {
                int64_t nb = edges[d]->size[0] - 1, b = rem % nb;
                rem /= nb;
                v /= tensor_get_f(edges[d], b + 1) - tensor_get_f(edges[d], b);
            }
            tensor_set_f(h, k, v);
        }
    }
    return 0;
}

static int hist_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    TensorMeta m[HG_MAX_D];
    Tensor *r[HG_MAX_D] = {0}, *edges[HG_MAX_D] = {0};
    int nm = 0, rc = -1, kind = HKIND(sa);
    double lo[HG_MAX_D], hi[HG_MAX_D];
    int64_t D;
    if (ev_shape(sa, m, &nm)) goto done;
    for (int k = 0; k < nm; k++) if (!(r[k] = ev_new(sa, &m[k]))) goto done;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    D = kind <= HG_BINS_TENSOR ? 1 : x->size[x->ndim - 1];
    if (kind == HG_BINS_TENSOR || kind == HG_DD_TENSORS) {
        ArgRef a = sa_arg(sa, 1, "bins");
        for (int d = 0; d < D; d++) edges[d] = tensor_ref(ev_tensor(kind == HG_BINS_TENSOR ? a : arg_item(a, d)));
    } else {
        if (outer_edges(sa, x, D, lo, hi)) goto done;
        for (int d = 0; d < D; d++) {
            int64_t ne = kind == HG_DD_EDGES ? r[d]->size[0] : kind == HG_BIN_CT ? r[1]->size[0] : r[0]->size[d] + 1;
            if (kind == HG_DD_EDGES) edges[d] = tensor_ref(r[d]);
            else if (kind == HG_BIN_CT) edges[d] = tensor_ref(r[1]);
            else if (!(edges[d] = tensor_new(c->ctx, x->dtype, 1, &ne))) goto done;
            fill_linspace(edges[d], lo[d], hi[d]);
        }
    }
    if (kind != HG_DD_EDGES && hist_fill(sa, x, D, edges, kind == HG_BIN_CT || kind == HG_DD_CTS, r[0])) goto done;
    if (kind == HG_BINS_TENSOR && tensor_copy_into(c->ctx, r[1], edges[0])) { sa_err(sa, "%s", c->ctx->err.msg); goto done; }
    if (nm == 1 && kind != HG_DD_EDGES) ev_out_tensor(out, r[0]);
    else ev_out_tuple(out, r, nm);
    for (int k = 0; k < nm; k++) r[k] = NULL;
    rc = 0;
done:
    for (int k = 0; k < HG_MAX_D; k++) { tensor_unref(r[k]); tensor_unref(edges[k]); }
    return rc;
}
static int hist_eval(const OpCall *c, IValue *out) { return ev_call(c, out, hist_body); }

#define HR(name, kind, flags, doc) {name, flags, op_infer_generic, hist_eval, doc, shape_hist, &(const HistSpec){kind}}
const OpDef ops_histogram_table[] = {
    HR("aten.histogram.bin_ct", HG_BIN_CT, OPF_TUPLE, "(counts of `bins` equal bins over range or the data's span, bin edges)"),
    HR("aten.histogram.bins_tensor", HG_BINS_TENSOR, OPF_TUPLE, "(counts between the given bin edges, the edges)"),
    HR("aten._histogramdd_bin_edges.default", HG_DD_EDGES, OPF_TUPLE, "the equal-bin edges of each of the last dim's D coordinates"),
    HR("aten._histogramdd_from_bin_cts.default", HG_DD_CTS, 0, "D-dimensional counts over equal bins"),
    HR("aten._histogramdd_from_bin_tensors.default", HG_DD_TENSORS, 0, "D-dimensional counts between the given bin edges"),
};
const int ops_histogram_count = sizeof ops_histogram_table / sizeof ops_histogram_table[0];
