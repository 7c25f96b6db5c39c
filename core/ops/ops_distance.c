/* ops_distance.c — aten._pdist_forward, the p-distances between all pairs of rows of a matrix
 * (upper triangle, row-major: (0,1), (0,2), ..., (1,2), ...), which Inductor falls back to ATen
 * for. Its result size n (n - 1) / 2 is static, unlike a masked_select of the full distance
 * matrix. (_cdist_forward is a decomposition, core/ops/decomp_reduce.c.) */
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

const OpDef ops_distance_table[] = {
    {"aten._pdist_forward.default", 0, op_infer_generic, pdist_eval, "p-distances between all pairs of rows (upper triangle)", shape_pdist, NULL},
};
const int ops_distance_count = sizeof ops_distance_table / sizeof ops_distance_table[0];
