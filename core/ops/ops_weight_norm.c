/* ops_weight_norm.c — the backward of nn.utils.weight_norm's fused op, as AOT autograd leaves
 * it in a backward graph: _weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms,
 * dim) -> (grad_v, grad_g). The forward (_weight_norm_interface) is decomposed before post-grad;
 * the backward is one of Inductor's fallbacks (make_fallback), so it reaches the scheduler as an
 * extern call that runs this reference implementation. ATen's definition
 * (native/WeightNorm.cpp, _weight_norm_differentiable_backward, the same formula the fused CPU
 * and CUDA kernels compute), with s = sum of grad_w * v over every dim but `dim`:
 *     grad_v = (g / norms) * (grad_w - v * s / norms^2)        grad_g = s / norms
 * Like the fused kernels it takes dim 0 or the last dim only. Both results are contiguous
 * (at::empty_like(..., MemoryFormat::Contiguous)). */
#include "ops/ops_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct WnArgs { TensorMeta *gw, *v, *g, *norms; int64_t dim; } WnArgs;

static int wn_args(ShapeArgs *sa, WnArgs *a) {
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_w"), "grad_w", &a->gw) || sa_tensor(sa, sa_arg(sa, 1, "saved_v"), "saved_v", &a->v) ||
        sa_tensor(sa, sa_arg(sa, 2, "saved_g"), "saved_g", &a->g) || sa_tensor(sa, sa_arg(sa, 3, "saved_norms"), "saved_norms", &a->norms) ||
        sa_const_int(sa, sa_arg(sa, 4, "dim"), "dim", &a->dim))
        return -1;
    int nd = a->v->ndim;
    if (a->gw->ndim != nd) return sa_err(sa, "grad_w has %d dims and saved_v %d; they must have the same shape", a->gw->ndim, nd);
    for (int i = 0; i < nd; i++)
        if (ex_cmp(sa, a->gw->size[i], a->v->size[i])) return sa_err(sa, "grad_w and saved_v differ in size at dim %d", i);
    if (a->dim < 0) a->dim += nd;
    if (nd < 1 || (a->dim != 0 && a->dim != nd - 1)) return sa_err(sa, "fused kernels can only be applied for first or last dim (dim %lld of a %d-dim weight)", (long long)a->dim, nd);
    return 0;
}

static int shape_weight_norm_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    WnArgs a;
    if (wn_args(sa, &a)) return -1;
    meta_copy(sa, &out[0], a.v);
    meta_contiguous_strides(sa, &out[0]);
    meta_copy(sa, &out[1], a.g);
    meta_contiguous_strides(sa, &out[1]);
    *nout = 2;
    return 0;
}

/* The per-slice sums s[k] (k indexes `dim`), then both results. Example: dim 0 of a [16, 16]
 * weight: s[i] = sum_j grad_w[i, j] * v[i, j]; grad_g[i] = s[i] / norms[i]. tensor_get_f takes
 * the logical (row-major) index, so any strides of the inputs work. */
static int weight_norm_bwd_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    Tensor *const *o = res;
    double *s = NULL;
    WnArgs a;
    if (wn_args(sa, &a)) return -1;
    Tensor *gw = ev_tensor(sa_arg(sa, 0, NULL)), *v = ev_tensor(sa_arg(sa, 1, NULL));
    Tensor *g = ev_tensor(sa_arg(sa, 2, NULL)), *nr = ev_tensor(sa_arg(sa, 3, NULL));
    int64_t total = tensor_numel(v), K = v->ndim ? v->size[a.dim] : 1, inner = 1;
    for (int i = (int)a.dim + 1; i < v->ndim; i++) inner *= v->size[i];
    if (tensor_numel(g) != K || tensor_numel(nr) != K) { sa_err(sa, "saved_g and saved_norms must have %lld elements, one per slice of dim %lld", (long long)K, (long long)a.dim); return -1; }
    s = mi_xcalloc((size_t)(K ? K : 1), sizeof *s);
    for (int64_t e = 0; e < total; e++) s[(e / inner) % K] += tensor_get_f(gw, e) * tensor_get_f(v, e);
    for (int64_t e = 0; e < total; e++) {
        int64_t k = (e / inner) % K;
        double nk = tensor_get_f(nr, k);
        tensor_set_f(o[0], e, tensor_get_f(g, k) / nk * (tensor_get_f(gw, e) - tensor_get_f(v, e) * s[k] / (nk * nk)));
    }
    for (int64_t k = 0; k < K; k++) tensor_set_f(o[1], k, s[k] / tensor_get_f(nr, k));
    free(s);
    return 0;
}
static int weight_norm_bwd_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, weight_norm_bwd_fill); }

const OpDef ops_weight_norm_table[] = {
    {"aten._weight_norm_interface_backward.default", OPF_TUPLE, op_infer_generic, weight_norm_bwd_eval,
     "gradients of weight_norm's v and g: (g/n)(dw - v*s/n^2) and s/n, s = sum of dw*v per slice of dim", shape_weight_norm_bwd, NULL},
};
const int ops_weight_norm_count = sizeof ops_weight_norm_table / sizeof ops_weight_norm_table[0];
