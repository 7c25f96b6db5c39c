/* ops_distance.c — aten._pdist_forward, the p-distances between all pairs of rows of a matrix
 * (upper triangle, row-major: (0,1), (0,2), ..., (1,2), ...), and the gradients of pdist and
 * cdist (_pdist_backward, _cdist_backward), which Inductor falls back to ATen for
 * (make_fallback in lowering.py): ATen's DistanceOpsKernel.cpp, one derivative per norm (p = 0,
 * 1, < 2, 2, inf, general). pdist's result size n (n - 1) / 2 is static, unlike a masked_select
 * of the full distance matrix. (_cdist_forward is a decomposition, core/ops/decomp_reduce.c.) */
#include "ops/ops_impl.h"

#include <math.h>

static int shape_pdist(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t n;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (x->ndim != 2) return sa_err(sa, "pdist only supports 2D tensors, got: %dD", x->ndim);
    if (!dtype_is_float(x->dtype)) return sa_err(sa, "pdist only supports floating-point dtypes, got %s", dtype_abbrev(x->dtype));
    if (!sym_is_int(x->size[0], &n)) return sa_err(sa, "pdist of a symbolic number of rows");
    meta_alloc(sa, out, x->dtype, 1, x->device);
    out->size[0] = sym_int(sa->sym, n * (n - 1) / 2);
    meta_contiguous_strides(sa, out);
    return 0;
}

/* ATen's pdist: p = 0 counts differing entries, p = inf takes the largest |difference| */
static int pdist_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    double p = 2;
    DType t;
    ArgRef ap = sa_arg(sa, 1, "p");
    if (arg_present(ap) && sa_scalar(sa, ap, "p", &p, &t)) return -1;
    if (p < 0) { sa_err(sa, "pdist only supports non-negative p values"); return -1; }
    int64_t n = x->size[0], d = x->size[1], k = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double acc = 0;
            for (int64_t e = 0; e < d; e++) {
                double v = fabs(tensor_get_f(x, i * d + e) - tensor_get_f(x, j * d + e));
                if (p == 0) acc += v != 0;
                else if (isinf(p)) acc = v > acc ? v : acc;
                else acc += pow(v, p);
            }
            tensor_set_f(o, k++, p == 0 || isinf(p) ? acc : p == 1 ? acc : pow(acc, 1 / p));
        }
    return 0;
}
static int pdist_eval(const OpCall *c, IValue *out) { return ev_run(c, out, pdist_fill); }

/* ---- the gradients ---- */

static double sgn(double v) { return (double)((0 < v) - (v < 0)); }

/* d dist / d diff of one coordinate, times grad, as DistanceOpsKernel.cpp's backward structs:
 * p = 1 sign; p < 2 sign |diff|^(p-1) / dist^(p-1) (0 where diff == 0 and p < 1); p = 2
 * diff / dist; inf: sign where |diff| is the max; else diff |diff|^(p-2) / dist^(p-1); 0 where
 * dist == 0 (p = 0 has no gradient). Example: p = 2, diff 3, dist 5, grad 1 -> 0.6. */
static double dist_grad(double diff, double grad, double dist, double p) {
    if (p == 0) return 0;
    if (p == 1) return grad * sgn(diff);
    if (p < 2) {
        if (dist == 0 || (diff == 0 && p < 1)) return 0;
        return sgn(diff) * pow(fabs(diff), p - 1) * grad / pow(dist, p - 1);
    }
    if (p == 2) return dist == 0 ? 0 : grad * diff / dist;
    if (isinf(p)) {
        double m = fabs(fabs(diff) - dist);
        return grad * sgn(diff) * (1 - (1 < ceil(m) ? 1 : ceil(m)));
    }
    return dist == 0 ? 0 : diff * pow(fabs(diff), p - 2) * grad / pow(dist, p - 1);
}

/* _pdist_backward(grad, self, p, pdist) -> grad of self [n, m]: pair k = (i, j) adds its
 * derivative to row i and subtracts it from row j */
static int shape_pdist_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 1, "self"), "self", &x)) return -1;
    if (x->ndim != 2) return sa_err(sa, "_pdist_backward requires self to be 2-dimensional, got %dD", x->ndim);
    meta_alloc(sa, out, x->dtype, 2, x->device);
    out->size[0] = x->size[0]; out->size[1] = x->size[1];
    meta_contiguous_strides(sa, out);
    return 0;
}

static int pdist_bwd_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *g = ev_tensor(sa_arg(sa, 0, "grad")), *x = ev_tensor(sa_arg(sa, 1, "self")), *d = ev_tensor(sa_arg(sa, 3, "pdist"));
    double p;
    DType t;
    if (sa_scalar(sa, sa_arg(sa, 2, "p"), "p", &p, &t)) return -1;
    int64_t n = x->size[0], m = x->size[1], k = 0, np = n * (n - 1) / 2;
    if (!g || !d || tensor_numel(g) != np || tensor_numel(d) != np)
        return sa_err(sa, "grad and pdist must hold the %lld pair distances", (long long)np);
    for (int64_t e = 0; e < n * m; e++) tensor_set_f(o, e, 0);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++, k++) {
            double gk = tensor_get_f(g, k), dk = tensor_get_f(d, k);
            for (int64_t e = 0; e < m; e++) {
                double r = dist_grad(tensor_get_f(x, i * m + e) - tensor_get_f(x, j * m + e), gk, dk, p);
                tensor_set_f(o, i * m + e, tensor_get_f(o, i * m + e) + r);
                tensor_set_f(o, j * m + e, tensor_get_f(o, j * m + e) - r);
            }
        }
    return 0;
}
static int pdist_bwd_eval(const OpCall *c, IValue *out) { return ev_run(c, out, pdist_bwd_fill); }

/* _cdist_backward(grad, x1, x2, p, cdist) -> grad of x1, sized as x1 expanded to the broadcast
 * batch ([*batch, r1, m], contiguous; autograd sums the broadcast away): grad_x1[b, i, :] =
 * sum_j dist_grad(x1[b, i, :] - x2[b, j, :], grad[b, i, j], cdist[b, i, j]) */
static int cdist_batch(ShapeArgs *sa, const TensorMeta *a, const TensorMeta *b, Expr **bs, int *nb) {
    TensorMeta ta = *a, tb = *b, *ins[2] = {&ta, &tb};
    ta.ndim = a->ndim - 2; tb.ndim = b->ndim - 2;
    return sa_broadcast(sa, ins, 2, bs, nb);
}

static int shape_cdist_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x1, *x2;
    Expr *bs[16];
    int nb;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 1, "x1"), "x1", &x1) || sa_tensor(sa, sa_arg(sa, 2, "x2"), "x2", &x2)) return -1;
    if (x1->ndim < 2 || x2->ndim < 2) return sa_err(sa, "cdist only supports at least 2D tensors, X1 got: %dD", x1->ndim);
    if (ex_cmp(sa, x1->size[x1->ndim - 1], x2->size[x2->ndim - 1]) != 0) return sa_err(sa, "X1 and X2 must have the same number of columns");
    if (cdist_batch(sa, x1, x2, bs, &nb)) return -1;
    meta_alloc(sa, out, x1->dtype, nb + 2, x1->device);
    for (int i = 0; i < nb; i++) out->size[i] = bs[i];
    out->size[nb] = x1->size[x1->ndim - 2];
    out->size[nb + 1] = x1->size[x1->ndim - 1];
    meta_contiguous_strides(sa, out);
    return 0;
}

/* the first element of batch `b` (row-major over the broadcast batch bs[0..nb)) in t, whose
 * leading t->ndim - 2 dims broadcast against bs */
static int64_t batch_base(const Tensor *t, const int64_t *bs, int nb, int64_t b) {
    int tb = t->ndim - 2;
    int64_t lin = 0, mul = t->size[t->ndim - 2] * t->size[t->ndim - 1];
    for (int d = nb - 1; d >= 0; d--) {
        int64_t c = b % bs[d];
        b /= bs[d];
        int td = d - (nb - tb);
        if (td < 0) continue;
        if (t->size[td] != 1) lin += c * mul;
        mul *= t->size[td];
    }
    return lin;
}

static int cdist_bwd_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *g = ev_tensor(sa_arg(sa, 0, "grad")), *x1 = ev_tensor(sa_arg(sa, 1, "x1")), *x2 = ev_tensor(sa_arg(sa, 2, "x2"));
    Tensor *d = ev_tensor(sa_arg(sa, 4, "cdist"));
    double p;
    DType t;
    if (sa_scalar(sa, sa_arg(sa, 3, "p"), "p", &p, &t)) return -1;
    int nb = o->ndim - 2;
    int64_t bs[16], nbatch = 1, r1 = x1->size[x1->ndim - 2], r2 = x2->size[x2->ndim - 2], m = x1->size[x1->ndim - 1];
    for (int i = 0; i < nb; i++) { bs[i] = o->size[i]; nbatch *= bs[i]; }
    if (!g || !d || tensor_numel(g) != nbatch * r1 * r2 || tensor_numel(d) != nbatch * r1 * r2)
        return sa_err(sa, "grad and cdist must be [*batch, %lld, %lld]", (long long)r1, (long long)r2);
    for (int64_t b = 0; b < nbatch; b++) {
        int64_t b1 = batch_base(x1, bs, nb, b), b2 = batch_base(x2, bs, nb, b);
        for (int64_t i = 0; i < r1; i++)
            for (int64_t e = 0; e < m; e++) {
                double acc = 0, a = tensor_get_f(x1, b1 + i * m + e);
                for (int64_t j = 0; j < r2; j++) {
                    int64_t k = (b * r1 + i) * r2 + j;
                    acc += dist_grad(a - tensor_get_f(x2, b2 + j * m + e), tensor_get_f(g, k), tensor_get_f(d, k), p);
                }
                tensor_set_f(o, (b * r1 + i) * m + e, acc);
            }
    }
    return 0;
}
static int cdist_bwd_eval(const OpCall *c, IValue *out) { return ev_run(c, out, cdist_bwd_fill); }

const OpDef ops_distance_table[] = {
    {"aten._pdist_forward.default", 0, op_infer_generic, pdist_eval, "p-distances between all pairs of rows (upper triangle)", shape_pdist, NULL},
    {"aten._pdist_backward.default", 0, op_infer_generic, pdist_bwd_eval, "grad of _pdist_forward w.r.t. self", shape_pdist_bwd, NULL},
    {"aten._cdist_backward.default", 0, op_infer_generic, cdist_bwd_eval, "grad of _cdist_forward w.r.t. x1 (x1 expanded to the broadcast batch)", shape_cdist_bwd, NULL},
};
const int ops_distance_count = sizeof ops_distance_table / sizeof ops_distance_table[0];
