/* ops_unique.c — ops whose result size depends on the data, as ATen's CPU kernels compute them
 * (Unique.cpp, Nonzero): _unique2 (torch.unique: sorted distinct values, inverse indices,
 * counts), unique_consecutive (runs of equal values collapsed) and nonzero_static (nonzero with
 * a fixed row count, padded with fill_value). From a graph node the data-dependent sizes are
 * the traced ones (the getitem annotations, Inductor's unbacked SymInts bound by the trace);
 * at run time they are computed. Inductor falls back to ATen for these ops, so compiled code
 * calls these reference kernels with the traced sizes. */
#define _GNU_SOURCE   /* qsort_r */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { UQ_UNIQUE2, UQ_CONSECUTIVE };
typedef struct UniqSpec { int kind; } UniqSpec;
#define UKIND(sa) (((const UniqSpec *)(sa)->op->data)->kind)

/* flags of the op: (sorted,) return_inverse, return_counts */
static void uniq_flags(ShapeArgs *sa, bool *inv, bool *cnt) {
    bool u2 = UKIND(sa) == UQ_UNIQUE2;
    *inv = arg_bool(sa_arg(sa, u2 ? 2 : 1, "return_inverse"), false);
    *cnt = arg_bool(sa_arg(sa, u2 ? 3 : 2, "return_counts"), false);
}

/* the values in row-major order; *n of them (caller frees) */
static double *uniq_values(const Tensor *x, int64_t *n) {
    *n = tensor_numel(x);
    double *v = malloc(sizeof(double) * (size_t)(*n ? *n : 1));
    if (v) for (int64_t i = 0; i < *n; i++) v[i] = tensor_get_f(x, i);
    return v;
}

/* ascending, NaN last; ties by position (a stable sort, so the first occurrence comes first) */
static int cmp_idx(const void *a, const void *b, void *vals) {
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    double x = ((const double *)vals)[i], y = ((const double *)vals)[j];
    bool nx = isnan(x), ny = isnan(y);
    if (nx != ny) return nx ? 1 : -1;
    if (!nx && x != y) return x < y ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The unique values (out, *nu of them), the inverse index of each element and the count of each
 * value. _unique2 sorts (ATen's CPU kernel always does) and keeps each NaN apart (equal_nan
 * false); unique_consecutive keeps the order and collapses equal neighbours.
 * Example: [2, 1, 2, 2] -> _unique2 [1, 2] inverse [1, 0, 1, 1] counts [1, 3];
 * unique_consecutive [2, 1, 2] inverse [0, 1, 2, 2] counts [1, 1, 2]. */
static int uniq_compute(int kind, const double *v, int64_t n, double *out, int64_t *inv, int64_t *cnt, int64_t *nu) {
    int64_t *ord = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!ord) return -1;
    for (int64_t i = 0; i < n; i++) ord[i] = i;
    if (kind == UQ_UNIQUE2) qsort_r(ord, (size_t)n, sizeof *ord, cmp_idx, (void *)v);
    int64_t u = -1;
    for (int64_t k = 0; k < n; k++) {
        double x = v[ord[k]];
        if (u < 0 || !(x == out[u])) { out[++u] = x; cnt[u] = 0; }
        cnt[u]++;
        inv[ord[k]] = u;
    }
    *nu = u + 1;
    free(ord);
    return 0;
}

/* (output [u], inverse: self's shape or [0], counts: [u] or [0]); u traced or computed */
static int shape_unique(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    bool inv, cnt;
    *nout = 3;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (dtype_is_complex(x->dtype)) return sa_err(sa, "unique: complex inputs are not supported");
    if (UKIND(sa) == UQ_CONSECUTIVE && arg_present(sa_arg(sa, 3, "dim")))
        return sa_err(sa, "unique_consecutive with dim (unique slices) is not supported; only dim=None");
    uniq_flags(sa, &inv, &cnt);
    Expr *u = NULL;
    if (sa->eval) {
        int64_t n, nu;
        Tensor *t = ev_tensor(sa_arg(sa, 0, "self"));
        double *v = uniq_values(t, &n), *o = malloc(sizeof(double) * (size_t)(n ? n : 1));
        int64_t *iv = malloc(sizeof(int64_t) * (size_t)(n ? n : 1)), *cn = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        int rc = v && o && iv && cn ? uniq_compute(UKIND(sa), v, n, o, iv, cn, &nu) : -1;
        free(v); free(o); free(iv); free(cn);
        if (rc) return sa_err(sa, "out of memory");
        u = sym_int(sa->sym, nu);
    } else if (!(u = sa_traced_size(sa, 0, 0)) && !(cnt && (u = sa_traced_size(sa, 2, 0)))) u = sym_symbol(sa->sym, "u0");
    meta_alloc(sa, &out[0], x->dtype, 1, x->device);
    out[0].size[0] = u;
    if (inv) { meta_alloc(sa, &out[1], DT_I64, x->ndim, x->device); for (int i = 0; i < x->ndim; i++) out[1].size[i] = x->size[i]; }
    else { meta_alloc(sa, &out[1], DT_I64, 1, x->device); out[1].size[0] = sym_int(sa->sym, 0); }
    meta_alloc(sa, &out[2], DT_I64, 1, x->device);
    out[2].size[0] = cnt ? u : sym_int(sa->sym, 0);
    for (int k = 0; k < 3; k++) meta_contiguous_strides(sa, &out[k]);
    return 0;
}

static int unique_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[3];
    Tensor *r[3] = {0};
    int nm, rc = -1;
    double *v = NULL, *o = NULL;
    int64_t *iv = NULL, *cn = NULL, n, nu;
    bool inv, cnt;
    if (ev_shape(sa, m, &nm)) goto done;
    for (int k = 0; k < 3; k++) if (!(r[k] = ev_new(sa, &m[k]))) goto done;
    uniq_flags(sa, &inv, &cnt);
    v = uniq_values(ev_tensor(sa_arg(sa, 0, "self")), &n);
    o = malloc(sizeof(double) * (size_t)(n ? n : 1));
    iv = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    cn = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!v || !o || !iv || !cn || uniq_compute(UKIND(sa), v, n, o, iv, cn, &nu)) { sa_err(sa, "out of memory"); goto done; }
    for (int64_t k = 0; k < nu; k++) tensor_set_f(r[0], k, o[k]);
    if (inv) for (int64_t k = 0; k < n; k++) tensor_store_i(r[1], tensor_pos(r[1], k), iv[k]);
    if (cnt) for (int64_t k = 0; k < nu; k++) tensor_store_i(r[2], tensor_pos(r[2], k), cn[k]);
    ev_out_tuple(out, r, 3);
    r[0] = r[1] = r[2] = NULL;
    rc = 0;
done:
    for (int k = 0; k < 3; k++) tensor_unref(r[k]);
    free(v); free(o); free(iv); free(cn);
    return rc;
}
static int unique_eval(const OpCall *c, IValue *out) { return ev_call(c, out, unique_body); }

/* nonzero_static(self, *, size, fill_value=-1) -> [size, self.dim()] int64: the first `size`
 * rows of nonzero(self), the remaining rows filled with fill_value. Example: [0, 3, 0, 5],
 * size 3 -> [[1], [3], [-1]]. */
static int shape_nonzero_static(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t size;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || sa_const_int(sa, sa_arg(sa, 1, "size"), "size", &size)) return -1;
    if (size < 0) return sa_err(sa, "nonzero_static: 'size' must be an non-negative integer, got %lld", (long long)size);
    meta_alloc(sa, out, DT_I64, 2, x->device);
    out->size[0] = sym_int(sa->sym, size);
    out->size[1] = sym_int(sa->sym, x->ndim);
    meta_contiguous_strides(sa, out);
    return 0;
}

static int nonzero_static_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t fill = -1, size = o->size[0], nd = x->ndim, k = 0, n = tensor_numel(x);
    ArgRef af = sa_arg(sa, 2, "fill_value");
    if (arg_present(af) && sa_const_int(sa, af, "fill_value", &fill)) return -1;
    for (int64_t e = 0; e < n && k < size; e++) {
        if (tensor_get_f(x, e) == 0) continue;
        int64_t rem = e;
        for (int64_t i = nd - 1; i >= 0; i--) { tensor_store_i(o, tensor_pos(o, k * nd + i), rem % x->size[i]); rem /= x->size[i]; }
        k++;
    }
    for (int64_t e = k * nd; e < size * nd; e++) tensor_store_i(o, tensor_pos(o, e), fill);
    return 0;
}
static int nonzero_static_eval(const OpCall *c, IValue *out) { return ev_run(c, out, nonzero_static_fill); }

#define UQ(name, kind, doc) {name, OPF_TUPLE, op_infer_generic, unique_eval, doc, shape_unique, &(const UniqSpec){kind}}
const OpDef ops_unique_table[] = {
    UQ("aten._unique2.default", UQ_UNIQUE2, "(sorted distinct values, inverse indices, counts)"),
    UQ("aten.unique_consecutive.default", UQ_CONSECUTIVE, "(values with equal neighbours collapsed, inverse indices, counts)"),
    {"aten.nonzero_static.default", 0, op_infer_generic, nonzero_static_eval, "the first `size` rows of nonzero, padded with fill_value", shape_nonzero_static, NULL},
};
const int ops_unique_count = sizeof ops_unique_table / sizeof ops_unique_table[0];
