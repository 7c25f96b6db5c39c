/* ops_pool_backward.c — the gradients of the pooling and padding ops whose backward Inductor
 * runs as a FallbackKernel (lowering.py make_fallback: adaptive_max_pool2d/3d_backward,
 * fractional_max_pool2d/3d_backward, replication_pad1d/2d_backward; replication_pad3d_backward
 * by its implicit fallback). Here ATen's CPU kernels:
 *   adaptive_max_pool{2,3}d_backward(grad_output, self, indices),
 *   fractional_max_pool{2,3}d_backward(grad_output, self, kernel_size, output_size, indices):
 *     zeros like self, and each output position's gradient added at the flat index (within its
 *     plane: h * W + w, or t * H * W + h * W + w) that the forward's indices recorded;
 *   replication_pad{1,2,3}d_backward(grad_output, self, padding): each padded position's
 *     gradient added to the input pixel the forward copied (its coordinates clamped into the
 *     input), so border pixels collect their whole padded strip.
 * Results have self's shape and dtype, in self's suggested memory format for the adaptive pools
 * (meta_adaptive_max_pool2d_backward), contiguous for the others (resize_as_). Example:
 * replication_pad1d_backward of grad [1, 2, 3, 4, 5] with padding [1, 2] over 2 inputs ->
 * [1 + 2, 3 + 4 + 5]. */
#include "ops/ops_impl.h"

#include <stdlib.h>

enum { PB_INDEX, PB_REPLICATE };
typedef struct PoolBwd { int kind, nsp, idx_pos; bool suggested; } PoolBwd;
#define PB(sa) ((const PoolBwd *)(sa)->op->data)

static int shape_pool_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const PoolBwd *pb = PB(sa);
    TensorMeta *g, *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &g) || sa_tensor(sa, sa_arg(sa, 1, "self"), "self", &x)) return -1;
    if (x->ndim != pb->nsp + 1 && x->ndim != pb->nsp + 2) return sa_err(sa, "expected a %dD or %dD self, got %dD", pb->nsp + 1, pb->nsp + 2, x->ndim);
    if (g->ndim != x->ndim) return sa_err(sa, "grad_output has %d dims, self %d", g->ndim, x->ndim);
    if (pb->kind == PB_INDEX) {
        TensorMeta *ix;
        if (sa_tensor(sa, sa_arg(sa, pb->idx_pos, "indices"), "indices", &ix)) return -1;
        if (ix->dtype != DT_I64) return sa_err(sa, "expected int64 indices, got %s", dtype_abbrev(ix->dtype));
        if (ix->ndim != g->ndim) return sa_err(sa, "indices have %d dims, grad_output %d", ix->ndim, g->ndim);
        for (int i = 0; i < g->ndim; i++)
            if (ex_cmp(sa, ix->size[i], g->size[i]) != 0) return sa_err(sa, "indices and grad_output differ in size at dim %d", i);
    }
    meta_alloc(sa, out, g->dtype, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out->size[i] = x->size[i];
    if (pb->suggested) meta_suggested_strides(sa, out, x);
    else meta_contiguous_strides(sa, out);
    return 0;
}

static int pool_bwd_fill(ShapeArgs *sa, Tensor *o) {
    const PoolBwd *pb = PB(sa);
    Tensor *g = ev_tensor(sa_arg(sa, 0, "grad_output"));
    int nsp = pb->nsp, lead = o->ndim - nsp;
    int64_t in[3], out[3], isz = 1, osz = 1, planes = 1, pad[6] = {0};
    for (int i = 0; i < lead; i++) {
        if (g->size[i] != o->size[i]) return sa_err(sa, "grad_output and self differ in size at dim %d", i);
        planes *= o->size[i];
    }
    for (int i = 0; i < nsp; i++) {
        in[i] = o->size[lead + i]; out[i] = g->size[lead + i];
        isz *= in[i]; osz *= out[i];
    }
    if (pb->kind == PB_REPLICATE) {   /* padding: (left, right) of the last dim first, as F.pad */
        int n = 0;
        if (sa_const_int_list(sa, sa_arg(sa, 2, "padding"), "padding", pad, &n, 6)) return -1;
        if (n != 2 * nsp) return sa_err(sa, "expected padding of %d entries, got %d", 2 * nsp, n);
        for (int i = 0; i < nsp; i++)
            if (out[i] != in[i] + pad[2 * (nsp - 1 - i)] + pad[2 * (nsp - 1 - i) + 1])
                return sa_err(sa, "grad_output's spatial size %lld at dim %d is not the padded input's %lld", (long long)out[i], lead + i,
                              (long long)(in[i] + pad[2 * (nsp - 1 - i)] + pad[2 * (nsp - 1 - i) + 1]));
    }
    Tensor *ix = pb->kind == PB_INDEX ? ev_tensor(sa_arg(sa, pb->idx_pos, "indices")) : NULL;
    double *acc = mi_xcalloc((size_t)(planes * isz > 0 ? planes * isz : 1), sizeof *acc);
    int rc = 0;
    for (int64_t q = 0; q < osz && rc == 0; q++) {
        int64_t rest = q, oc[3], at = 0;
        for (int i = nsp - 1; i >= 0; i--) { oc[i] = rest % out[i]; rest /= out[i]; }
        for (int i = 0; i < nsp && pb->kind == PB_REPLICATE; i++) {
            int64_t c = oc[i] - pad[2 * (nsp - 1 - i)];
            at = at * in[i] + (c < 0 ? 0 : c > in[i] - 1 ? in[i] - 1 : c);
        }
        for (int64_t p = 0; p < planes; p++) {
            if (ix) {
                at = tensor_get_i(ix, p * osz + q);
                if (at < 0 || at >= isz) { rc = sa_err(sa, "found an invalid max index: %lld (output volumes are of size %lld)", (long long)at, (long long)isz); break; }
            }
            acc[p * isz + at] += tensor_get_f(g, p * osz + q);
        }
    }
    for (int64_t e = 0; e < planes * isz && rc == 0; e++) tensor_set_f(o, e, acc[e]);
    free(acc);
    return rc;
}
static int pool_bwd_eval(const OpCall *c, IValue *out) { return ev_run(c, out, pool_bwd_fill); }

#define PBR(name, kind, nsp, idx, sugg, doc) {name, 0, op_infer_generic, pool_bwd_eval, doc, shape_pool_bwd, &(const PoolBwd){kind, nsp, idx, sugg}}
const OpDef ops_pool_backward_table[] = {
    PBR("aten.adaptive_max_pool2d_backward.default", PB_INDEX, 2, 2, true, "grad of adaptive_max_pool2d: scattered to the recorded max indices"),
    PBR("aten.adaptive_max_pool3d_backward.default", PB_INDEX, 3, 2, true, "grad of adaptive_max_pool3d: scattered to the recorded max indices"),
    PBR("aten.fractional_max_pool2d_backward.default", PB_INDEX, 2, 4, false, "grad of fractional_max_pool2d: scattered to the recorded max indices"),
    PBR("aten.fractional_max_pool3d_backward.default", PB_INDEX, 3, 4, false, "grad of fractional_max_pool3d: scattered to the recorded max indices"),
    PBR("aten.replication_pad1d_backward.default", PB_REPLICATE, 1, 0, false, "grad of replication_pad1d: the padded strips summed into the border"),
    PBR("aten.replication_pad2d_backward.default", PB_REPLICATE, 2, 0, false, "grad of replication_pad2d: the padded strips summed into the border"),
    PBR("aten.replication_pad3d_backward.default", PB_REPLICATE, 3, 0, false, "grad of replication_pad3d: the padded strips summed into the border"),
};
const int ops_pool_backward_count = sizeof ops_pool_backward_table / sizeof ops_pool_backward_table[0];
