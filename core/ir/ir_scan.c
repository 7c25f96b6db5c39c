/* ir_scan.c — what one row of an ir.Scan / ir.Sort computes, on doubles: the IR interpreter
 * (core/ir/ir_interp.c) collects a row's values through the body, calls ir_scan_row, and stores
 * each element's result. The combine functions are Inductor's (lowering.py), applied left to
 * right, so the interpreter is the reference the CUDA block scan (codegen_cuda_scan.c) is
 * checked against. */
#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* torch's NaN-propagating minimum / maximum (ops.minimum / ops.maximum) */
static double nan_min(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static double nan_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

/* Inductor's logcumsumexp combine (log_add_exp_helper) of the running a and the next b:
 * min_v = minimum(a, b), max_v = maximum(a, b); where((min_v != max_v) | ~isinf(min_v),
 * log1p(exp(min_v - max_v)) + max_v, a). Two equal infinities keep a (no inf - inf). */
double ir_scan_logaddexp(double a, double b) {
    double mn = nan_min(a, b), mx = nan_max(a, b);
    bool mask = mn != mx || !isinf(mn);
    return mask ? log1p(exp(mn - mx)) + mx : a;
}

/* Inductor's argmax / argmin combine with arg_break_ties_left=False (cummax / cummin): does the
 * earlier pair (av, ai) win against the later (bv, bi)? The larger (smaller) value, a NaN over a
 * number; a tie (NaN and NaN too) goes to the larger index, i.e. the later element. */
bool ir_scan_arg_keeps(bool is_min, bool is_float, double av, double ai, double bv, double bi) {
    bool mask = is_min ? av < bv : av > bv, equal = av == bv;
    if (is_float) {
        bool an = isnan(av), bn = isnan(bv);
        mask = mask || (an && !bn);
        equal = equal || (an && bn);
    }
    return mask || (equal && ai > bi);
}

/* Sort order of keys a, b (ascending: NaN last, as torch.sort; descending: NaN first): < 0 when
 * a goes before b, 0 on a tie. */
static int key_cmp(double a, double b, bool desc) {
    bool an = isnan(a), bn = isnan(b);
    int c = an && bn ? 0 : an ? 1 : bn ? -1 : a < b ? -1 : a > b ? 1 : 0;
    return desc ? -c : c;
}

/* Stable merge sort of positions ord[0..n) by keys (ties keep their order). */
static void merge_sort(int64_t *ord, int64_t *tmp, int64_t n, const double *key, bool desc) {
    if (n < 2) return;
    int64_t h = n / 2;
    merge_sort(ord, tmp, h, key, desc);
    merge_sort(ord + h, tmp, n - h, key, desc);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = key_cmp(key[ord[j]], key[ord[i]], desc) < 0 ? ord[j++] : ord[i++];
    while (i < h) tmp[k++] = ord[i++];
    while (j < n) tmp[k++] = ord[j++];
    memcpy(ord, tmp, sizeof *ord * (size_t)n);
}

/* One row: in[k][0..len) are value k of each element (k < n), out[k] the results. A sort is
 * always stable here (a valid result of an unstable sort too). dt: the first value's dtype
 * (f32 rounds each partial result, as the kernel's float registers do). */
void ir_scan_row(IrScanOp op, int flags, DType dt, int n, double *const *in, int64_t len, double *const *out) {
    bool f32 = dt == DT_F32 || dt == DT_F16 || dt == DT_BF16, fl = dtype_is_float(dt);
    if (op == SCAN_SORT) {
        int64_t *ord = mi_xmalloc(sizeof *ord * (size_t)(2 * len + 1));
        for (int64_t r = 0; r < len; r++) ord[r] = r;
        merge_sort(ord, ord + len, len, in[0], (flags & SCAN_DESCENDING) != 0);
        for (int k = 0; k < n; k++)
            for (int64_t r = 0; r < len; r++) out[k][r] = in[k][ord[r]];
        free(ord);
        return;
    }
    double acc = 0, acci = 0;
    for (int64_t r = 0; r < len; r++) {
        double x = in[0][r], xi = n > 1 ? in[1][r] : 0;
        if (r == 0) { acc = x; acci = xi; }
        else switch (op) {
        case SCAN_SUM: acc = acc + x; break;
        case SCAN_PROD: acc = acc * x; break;
        case SCAN_LOGADDEXP: acc = ir_scan_logaddexp(acc, x); break;
        case SCAN_MAX: case SCAN_MIN:
            if (!ir_scan_arg_keeps(op == SCAN_MIN, fl, acc, acci, x, xi)) { acc = x; acci = xi; }
            break;
        default: break;
        }
        if (f32) acc = (float)acc;
        out[0][r] = acc;
        if (n > 1) out[1][r] = acci;
    }
}
