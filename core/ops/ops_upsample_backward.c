/* ops_upsample_backward.c — the gradients of upsampling, which a U-Net (or a 3-D segmentation
 * net) trained with nn.Upsample has in its backward graph:
 *   upsample_nearest{1,2,3}d_backward, _upsample_nearest_exact{1,2,3}d_backward(grad_output,
 *     output_size, input_size, scales...);
 *   upsample_linear1d / bilinear2d / trilinear3d / bicubic2d_backward(grad_output, output_size,
 *     input_size, align_corners, scales...).
 * Inductor lowers upsample_nearest2d_backward (lowering.py), falls back to ATen for the linear,
 * trilinear and bicubic ones (make_fallback) and for the rest by default; here one reference
 * kernel, a FallbackKernel in compiled code: each output position adds its gradient, times the
 * weight the forward gave it, to each input pixel the forward read (the adjoint of the forward).
 * Nearest: the source index computed in float as ATen's nearest_idx (floor(dst * scale), exact:
 * floor((dst + 0.5) * scale), scale = 1 / scales[i] when given, else in / out, clamped to
 * in - 1); linear / cubic: the forward's own taps (resample_taps in ops_pool.c), a product over
 * the dims. Example: linear1d 2 -> 4, no align, grad [1, 1, 1, 1] -> [2, 2]. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>

enum { UB_NEAREST, UB_EXACT, UB_LINEAR, UB_CUBIC };
typedef struct UpBwd { int nsp, kind; } UpBwd;
#define UB(sa) ((const UpBwd *)(sa)->op->data)

/* grad_input: input_size, in grad_output's suggested memory format */
static int shape_up_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *go;
    int64_t osz[3], isz[5];
    int no, ni, nsp = UB(sa)->nsp;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &go) ||
        sa_const_int_list(sa, sa_arg(sa, 1, "output_size"), "output_size", osz, &no, 3) ||
        sa_const_int_list(sa, sa_arg(sa, 2, "input_size"), "input_size", isz, &ni, 5)) return -1;
    if (no != nsp || ni != nsp + 2) return sa_err(sa, "expected output_size of %d and input_size of %d entries, got %d and %d", nsp, nsp + 2, no, ni);
    if (go->ndim != nsp + 2) return sa_err(sa, "expected grad_output to be %d-D, got %d-D", nsp + 2, go->ndim);
    for (int i = 0; i < nsp; i++)
        if (!ex_eq_int(go->size[2 + i], osz[i])) return sa_err(sa, "grad_output's spatial size %d differs from output_size", i);
    meta_alloc(sa, out, go->dtype, nsp + 2, go->device);
    for (int i = 0; i < nsp + 2; i++) out->size[i] = sym_int(sa->sym, isz[i]);
    meta_suggested_strides(sa, out, go);
    return 0;
}

static int up_bwd_fill(ShapeArgs *sa, Tensor *o) {
    const UpBwd *u = UB(sa);
    Tensor *go = ev_tensor(sa_arg(sa, 0, "grad_output"));
    int nsp = u->nsp;
    int64_t in[3], out[3], planes = o->size[0] * o->size[1], isz = 1, osz = 1;
    float sc[3];
    double given[3];
    bool align = u->kind >= UB_LINEAR && arg_bool(sa_arg(sa, 3, "align_corners"), false);
    for (int i = 0; i < nsp; i++) {
        in[i] = o->size[2 + i]; out[i] = go->size[2 + i];
        isz *= in[i]; osz *= out[i];
        double s = 0;
        DType t;
        ArgRef as = sa_arg(sa, (u->kind >= UB_LINEAR ? 4 : 3) + i,
                           nsp == 1 ? "scales" : i == nsp - 1 ? "scales_w" : i == nsp - 2 ? "scales_h" : "scales_d");
        if (arg_present(as) && sa_scalar(sa, as, "scales", &s, &t)) return -1;
        given[i] = s;
        sc[i] = (float)(s > 0 ? 1.0 / s : (double)in[i] / (double)out[i]);
    }
    double *acc = mi_xcalloc((size_t)(planes * isz > 0 ? planes * isz : 1), sizeof *acc);
    for (int64_t q = 0; q < osz; q++) {
        int64_t rest = q, src = 0;
        int64_t oc[3];
        for (int i = nsp - 1; i >= 0; i--) { oc[i] = rest % out[i]; rest /= out[i]; }
        if (u->kind >= UB_LINEAR) {   /* the forward's taps: weight products over the dims */
            int64_t ti[3][4], c[3] = {0}, nt = 1;
            double tw[3][4];
            int k = 0;
            for (int i = 0; i < nsp; i++) k = resample_taps(u->kind == UB_CUBIC, in[i], out[i], align, given[i], oc[i], ti[i], tw[i]);
            for (int i = 0; i < nsp; i++) nt *= k;
            for (int64_t m = 0; m < nt; m++) {
                double w = 1;
                int64_t at = 0;
                for (int i = nsp - 1, r = (int)m; i >= 0; i--, r /= k) { c[i] = ti[i][r % k]; w *= tw[i][r % k]; }
                for (int i = 0; i < nsp; i++) at = at * in[i] + c[i];
                for (int64_t p = 0; p < planes; p++) acc[p * isz + at] += w * tensor_get_f(go, p * osz + q);
            }
            continue;
        }
        for (int i = 0; i < nsp; i++) {
            int64_t s = u->kind == UB_EXACT ? (int64_t)floorf(((float)oc[i] + 0.5f) * sc[i]) : (int64_t)floorf((float)oc[i] * sc[i]);
            src = src * in[i] + (s < in[i] - 1 ? s : in[i] - 1);
        }
        for (int64_t p = 0; p < planes; p++) acc[p * isz + src] += tensor_get_f(go, p * osz + q);
    }
    for (int64_t e = 0; e < planes * isz; e++) tensor_set_f(o, e, acc[e]);
    free(acc);
    return 0;
}
static int up_bwd_eval(const OpCall *c, IValue *out) { return ev_run(c, out, up_bwd_fill); }

#define UBR(name, nsp, kind, doc) {name, 0, op_infer_generic, up_bwd_eval, doc, shape_up_bwd, &(const UpBwd){nsp, kind}}
#define NEAR_DOC "grad of nearest upsampling: output gradients summed into their source pixels"
#define LIN_DOC "grad of linear upsampling: output gradients spread over their source pixels by the forward's weights"
const OpDef ops_upsample_backward_table[] = {
    UBR("aten.upsample_nearest1d_backward.default", 1, UB_NEAREST, NEAR_DOC),
    UBR("aten.upsample_nearest2d_backward.default", 2, UB_NEAREST, NEAR_DOC),
    UBR("aten.upsample_nearest3d_backward.default", 3, UB_NEAREST, NEAR_DOC),
    UBR("aten._upsample_nearest_exact1d_backward.default", 1, UB_EXACT, NEAR_DOC),
    UBR("aten._upsample_nearest_exact2d_backward.default", 2, UB_EXACT, NEAR_DOC),
    UBR("aten._upsample_nearest_exact3d_backward.default", 3, UB_EXACT, NEAR_DOC),
    UBR("aten.upsample_linear1d_backward.default", 1, UB_LINEAR, LIN_DOC),
    UBR("aten.upsample_bilinear2d_backward.default", 2, UB_LINEAR, LIN_DOC),
    UBR("aten.upsample_trilinear3d_backward.default", 3, UB_LINEAR, LIN_DOC),
    UBR("aten.upsample_bicubic2d_backward.default", 2, UB_CUBIC, "grad of bicubic upsampling: output gradients spread over the 4x4 source pixels by the forward's weights"),
};
const int ops_upsample_backward_count = sizeof ops_upsample_backward_table / sizeof ops_upsample_backward_table[0];
