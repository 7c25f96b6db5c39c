/* same.c — torch._dynamo.utils.same's accuracy rule for one tensor (allclose, then RMSE against
 * a float64 reference) and the statistical comparison of random draws; see same.h. Pure tensor
 * code: the float64 run and the report text are core/ops/numerics.c's. */
#include "base/same.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool same_shape(const Tensor *a, const Tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->size[i] != b->size[i]) return false;
    return true;
}

static bool intlike(DType d) { return dtype_is_int(d) || d == DT_BOOL; }

/* Element-for-element equality of integer/bool tensors in int64 (no rounding through double).
 * mismatches counts differing elements; worst_index is the first of them. */
static CompareResult exact_compare(const Tensor *ref, const Tensor *res) {
    CompareResult r = {.shape_ok = true, .worst_index = -1};
    int64_t n = tensor_numel(ref);
    for (int64_t k = 0; k < n; k++) {
        int64_t a = tensor_get_i(ref, k), b = tensor_get_i(res, k);
        if (a == b) continue;
        double d = fabs((double)a - (double)b), rel = a ? d / fabs((double)a) : INFINITY;
        if (r.worst_index < 0) r.worst_index = k;
        r.mismatches++;
        if (d > r.max_abs) r.max_abs = d;
        if (rel > r.max_rel) r.max_rel = rel;
    }
    r.ok = r.mismatches == 0;
    return r;
}

double tensor_rmse(const Tensor *a, const Tensor *b) {
    int64_t n = tensor_numel(a);
    if (n == 0) return 0;
    double sum = 0;
    for (int64_t k = 0; k < n; k++) {
        double x, y, xi, yi;
        tensor_get_c(a, k, &x, &xi);         /* real dtypes: imaginary part 0 */
        tensor_get_c(b, k, &y, &yi);
        double d = x - y, di = xi - yi;
        sum += d * d + di * di;            /* inf - inf = NaN: the RMSE becomes NaN, as torch's */
    }
    return sqrt(sum / (double)n);
}

static bool has_nan(const Tensor *t) {
    int64_t n = tensor_numel(t);
    for (int64_t k = 0; k < n; k++) {
        double re, im;
        tensor_get_c(t, k, &re, &im);
        if (isnan(re) || isnan(im)) return true;
    }
    return false;
}

/* get_multiplier() of same(): 3 for half results, small tensors and 1x1 feature maps, else 2. */
static double multiplier(const Tensor *ref, const Tensor *res, int64_t numel, double tol) {
    double m = res->dtype == DT_F16 || res->dtype == DT_BF16 ? 3.0 : 2.0;
    if (numel < 1000 || (ref->ndim == 4 && ref->size[3] == 1 && ref->size[2] == 1) || tol >= 2e-2) m = 3.0;
    return m;
}

SameResult tensor_same(const Tensor *ref, const Tensor *res, const Tensor *fp64, double rtol, double atol) {
    SameResult s = {0};
    s.close.worst_index = -1;
    s.shape_ok = same_shape(ref, res);
    s.dtype_ok = ref->dtype == res->dtype;
    if (!s.shape_ok || !s.dtype_ok) return s;
    if (intlike(ref->dtype)) {
        s.how = SAME_EXACT;
        s.close = exact_compare(ref, res);
        s.ok = s.close.ok;
        return s;
    }
    s.how = SAME_CLOSE;
    s.close = tensor_compare(res, ref, rtol, atol);
    if (s.close.ok) { s.ok = true; return s; }
    if (!fp64 || !same_shape(fp64, ref)) { s.want_fp64 = fp64 == NULL; return s; }
    s.used_fp64 = true;
    s.how = SAME_RMSE;
    double tol = fmax(rtol, atol);
    /* the reference has NaNs where the result and the float64 run agree without any */
    if (has_nan(ref) && !has_nan(fp64) && !has_nan(res) && tensor_compare(res, fp64, 4e-2, 4e-2).ok) {
        s.how = SAME_NAN_CORNER;
        s.ok = true;
        return s;
    }
    s.ref_rmse = tensor_rmse(fp64, ref);
    s.res_rmse = tensor_rmse(fp64, res);
    s.multiplier = multiplier(ref, res, tensor_numel(ref), tol);
    s.slack = tol / 10.0;
    s.ok = s.res_rmse <= s.multiplier * s.ref_rmse + s.slack;
    if (!s.ok && isnan(s.ref_rmse) && isnan(s.res_rmse)) s.ok = true;   /* equal_nan */
    return s;
}

/* ---- random draws ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Finite values of t, sorted; count of NaN/inf in *nonfinite. Caller frees. */
static double *sorted_finite(const Tensor *t, int64_t *n, int64_t *nonfinite) {
    int64_t total = tensor_numel(t), k = 0;
    double *v = mi_xcalloc((size_t)(total ? total : 1), sizeof *v);
    *nonfinite = 0;
    for (int64_t i = 0; i < total; i++) {
        double x = tensor_get_f(t, i);
        if (isfinite(x)) v[k++] = x;
        else (*nonfinite)++;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    *n = k;
    return v;
}

/* Two-sample Kolmogorov-Smirnov distance: the largest gap between the empirical CDFs. Ties
 * are stepped over together, so a value shared by both samples adds no gap. */
static double ks_distance(const double *a, int64_t na, const double *b, int64_t nb) {
    int64_t i = 0, j = 0;
    double d = 0;
    while (i < na && j < nb) {
        double x = a[i] < b[j] ? a[i] : b[j];
        while (i < na && a[i] == x) i++;
        while (j < nb && b[j] == x) j++;
        double gap = fabs((double)i / (double)na - (double)j / (double)nb);
        if (gap > d) d = gap;
    }
    return d;
}

static double nonzero_rate(const Tensor *t) {
    int64_t n = tensor_numel(t), nz = 0;
    for (int64_t k = 0; k < n; k++) nz += tensor_get_f(t, k) != 0;
    return n ? (double)nz / (double)n : 0;
}

RandomResult tensor_random_compare(const Tensor *ref, const Tensor *res) {
    RandomResult r = {0};
    r.shape_ok = same_shape(ref, res);
    r.dtype_ok = ref->dtype == res->dtype;
    if (!r.shape_ok || !r.dtype_ok) return r;
    int64_t n = tensor_numel(ref);
    r.rate_ref = nonzero_rate(ref);
    r.rate_res = nonzero_rate(res);
    double p = (r.rate_ref + r.rate_res) / 2;
    r.rate_tol = n ? 5 * sqrt(2 * p * (1 - p) / (double)n) + 1.0 / (double)n : 0;
    r.rate_ok = fabs(r.rate_ref - r.rate_res) <= r.rate_tol;
    r.range_ok = r.finite_ok = r.ks_ok = true;
    r.numeric = ref->dtype != DT_BOOL;
    if (r.numeric && n > 0) {
        int64_t na, nb;
        double *a = sorted_finite(ref, &na, &r.nonfinite_ref), *b = sorted_finite(res, &nb, &r.nonfinite_res);
        r.finite_ok = r.nonfinite_ref > 0 || r.nonfinite_res == 0;
        if (na > 0 && nb > 0) {
            r.lo_ref = a[0]; r.hi_ref = a[na - 1];
            r.lo_res = b[0]; r.hi_res = b[nb - 1];
            double span = r.hi_ref - r.lo_ref, slack = 0.25 * (span > 0 ? span : fabs(r.hi_ref) + 1e-12);
            r.ks = ks_distance(a, na, b, nb);
            r.ks_limit = 1.95 * sqrt((double)(na + nb) / ((double)na * (double)nb));
            r.ks_ok = r.ks <= r.ks_limit;
            /* With few random draws (randint over 3 of 20 tokens) a sample's extremes move a lot,
             * so a range off by more than the slack still agrees when the share of values outside
             * the other side's range is within the KS limit (a count, as a rank test judges it).
             * Beyond the reference's range by more than an order of magnitude of anything it holds
             * (16 x its span and its largest magnitude) stays a mismatch: garbage, not a draw. */
            double over = fmax(r.lo_ref - r.lo_res, r.hi_res - r.hi_ref);     /* result beyond */
            double under = fmax(r.lo_res - r.lo_ref, r.hi_ref - r.hi_res);    /* result narrower */
            int64_t out_res = 0, out_ref = 0;
            for (int64_t k = 0; over > slack && k < nb; k++) out_res += b[k] < r.lo_ref || b[k] > r.hi_ref;
            for (int64_t k = 0; under > slack && k < na; k++) out_ref += a[k] < r.lo_res || a[k] > r.hi_res;
            double scale = fmax(fmax(span, fabs(r.lo_ref)), fmax(fabs(r.hi_ref), 1e-12));
            bool over_ok = over <= slack || (over <= 16 * scale && (double)out_res / (double)nb <= r.ks_limit);
            bool under_ok = under <= slack || (double)out_ref / (double)na <= r.ks_limit;
            r.range_ok = over_ok && under_ok;
        } else {
            r.range_ok = na == nb;
        }
        free(a);
        free(b);
    }
    r.ok = r.rate_ok && r.range_ok && r.finite_ok && r.ks_ok;
    return r;
}
