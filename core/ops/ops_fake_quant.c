/* ops_fake_quant.c — quantization-aware training's fake quantization, as AOT autograd leaves it in
 * a forward graph: torch.fake_quantize_per_tensor_affine / _per_channel_affine become the
 * `_cachemask` ops, which return (output, mask) so the backward can be grad * mask (their
 * `_cachemask_backward` decompositions). Inductor has no lowering for them: they reach the
 * scheduler as fallback kernels (extern calls) that run this reference implementation.
 * ATen's CPU kernels (native/quantized/cpu/kernels/QuantizedOpKernels.cpp,
 * _fake_quantize_tensor_helper and _fake_quant_per_channel_cachemask_cpu_helper), in the input's
 * precision (float for f32/f16/bf16, double for f64), with inv_scale = 1.0f / scale in float:
 *     q    = zero_point + nearbyint(x * inv_scale)      (round half to even)
 *     out  = (clamp(q, quant_min, quant_max) - zero_point) * scale
 *     mask = quant_min <= q <= quant_max
 * Per channel, scale and zero_point are 1-d along `axis`; a floating zero_point is added before
 * the rounding (lrintf(zero_point + x * inv_scale)), as the affine quantizer does. Both results
 * have the input's shape and strides (empty_like); the mask is bool. */
#include "ops/ops_impl.h"

#include <math.h>

/* (output, mask) like self: the meta function of both ops (torch/_meta_registrations.py). */
static int shape_fake_quant(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (!dtype_is_float(x->dtype)) return sa_err(sa, "fake quantization takes a floating tensor, got %s", dtype_torch_name(x->dtype));
    meta_like(sa, &out[0], x, x->dtype);
    meta_like(sa, &out[1], x, DT_BOOL);
    *nout = 2;
    return 0;
}

/* One element. Example: x = 0.37, scale 0.05 (inv 20), zero point 0, range [-128, 127]:
 * q = nearbyint(7.4) = 7, out = 0.35, mask 1. `fzp` marks a floating zero point (per channel).
 * The trick is ATen's mixed arithmetic: the per-tensor kernel computes (q - zp) * scale in float
 * (int64 * float), the per-channel one in double (std::fmin returns double). */
static void fq_one(double x, float scale, double zp, bool fzp, bool per_channel, int64_t qmin, int64_t qmax, bool f64,
                   double *out, bool *mask) {
    float inv = 1.0f / scale;
    double q;
    if (fzp) q = (double)lrintf((float)zp + (float)x * inv);
    else if (f64) q = zp + nearbyint(x * (double)inv);
    else q = zp + (double)nearbyintf((float)x * inv);
    *mask = (double)qmin <= q && q <= (double)qmax;
    double c = fmin(fmax(q, (double)qmin), (double)qmax);
    if (!fzp) c = (double)(int64_t)c;
    *out = per_channel ? (c - zp) * (double)scale : (double)((float)(c - zp) * scale);
}

/* The shared fill of (output, mask) = res[0], res[1]: `form` 0 reads the scalars (per tensor),
 * 1 one-element tensors (the _tensor_qparams form, whose fake_quant_enabled = 0 copies self and
 * sets the mask to true), 2 the scale / zero_point tensors along `axis` (per channel). */
static int fake_quant_fill(ShapeArgs *sa, Tensor *const *res, int form) {
    Tensor *x = ev_tensor(sa_arg(sa, 0, NULL)), *st = NULL, *zt = NULL;
    double scale = 1, zp = 0;
    int64_t axis = 0, qmin, qmax, enabled = 1, K = 1, inner = 1;
    DType t;
    int qarg = form == 0 ? 3 : 4;   /* (self, scale, zp, min, max); (self, s, zp, enabled | axis, min, max) */
    if (sa_const_int(sa, sa_arg(sa, qarg, "quant_min"), "quant_min", &qmin) ||
        sa_const_int(sa, sa_arg(sa, qarg + 1, "quant_max"), "quant_max", &qmax))
        return -1;
    if (qmin > qmax) return sa_err(sa, "`quant_min` should be less than or equal to `quant_max` (%lld > %lld)", (long long)qmin, (long long)qmax);
    if (form == 0) {
        int64_t z;
        if (sa_scalar(sa, sa_arg(sa, 1, "scale"), "scale", &scale, &t) || sa_const_int(sa, sa_arg(sa, 2, "zero_point"), "zero_point", &z)) return -1;
        zp = (double)z;
    } else {
        st = ev_tensor(sa_arg(sa, 1, NULL));
        zt = ev_tensor(sa_arg(sa, 2, NULL));
        if (!st || !zt) return sa_err(sa, "scale and zero_point must be tensors");
        if (form == 1) {
            Tensor *en = ev_tensor(sa_arg(sa, 3, NULL));
            if (!en || tensor_numel(en) < 1 || tensor_numel(st) < 1 || tensor_numel(zt) < 1)
                return sa_err(sa, "scale, zero_point and fake_quant_enabled must have one element");
            enabled = (int64_t)tensor_get_f(en, 0);
            scale = tensor_get_f(st, 0);
            zp = (double)(int64_t)tensor_get_f(zt, 0);
        } else {
            if (sa_const_int(sa, sa_arg(sa, 3, "axis"), "axis", &axis)) return -1;
            if (axis < 0 || axis >= x->ndim)
                return sa_err(sa, "`axis` must be between 0 and number of dimensions of input (axis %lld, %d dims)", (long long)axis, x->ndim);
            K = x->size[axis];
            for (int i = (int)axis + 1; i < x->ndim; i++) inner *= x->size[i];
            if (tensor_numel(st) != K || tensor_numel(zt) != K)
                return sa_err(sa, "dimensions of scale and zero-point are not consistent with input tensor (%lld channels along axis %lld)", (long long)K, (long long)axis);
        }
    }
    bool f64 = x->dtype == DT_F64, fzp = form == 2 && dtype_is_float(zt->dtype);
    int64_t total = tensor_numel(x);
    for (int64_t e = 0; e < total; e++) {
        double v = tensor_get_f(x, e), r;
        bool mk;
        if (!enabled) { r = v; mk = true; }
        else if (form == 2) {
            int64_t k = (e / inner) % K;
            double z = fzp ? (double)(float)tensor_get_f(zt, k) : (double)(int64_t)tensor_get_f(zt, k);
            fq_one(v, (float)tensor_get_f(st, k), z, fzp, true, qmin, qmax, f64, &r, &mk);
        } else fq_one(v, (float)scale, zp, false, false, qmin, qmax, f64, &r, &mk);
        tensor_set_f(res[0], e, r);
        tensor_set_f(res[1], e, mk);
    }
    return 0;
}

static int fq_tensor_fill(ShapeArgs *sa, Tensor *const *res, int n) { (void)n; return fake_quant_fill(sa, res, 0); }
static int fq_qparams_fill(ShapeArgs *sa, Tensor *const *res, int n) { (void)n; return fake_quant_fill(sa, res, 1); }
static int fq_channel_fill(ShapeArgs *sa, Tensor *const *res, int n) { (void)n; return fake_quant_fill(sa, res, 2); }
static int fq_tensor_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, fq_tensor_fill); }
static int fq_qparams_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, fq_qparams_fill); }
static int fq_channel_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, fq_channel_fill); }

const OpDef ops_fake_quant_table[] = {
    {"aten.fake_quantize_per_tensor_affine_cachemask.default", OPF_TUPLE, op_infer_generic, fq_tensor_eval,
     "fake quantization with one scale and zero point: ((clamp(zp + round(x/s)) - zp) * s, in-range mask)", shape_fake_quant, NULL},
    {"aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.default", OPF_TUPLE, op_infer_generic, fq_qparams_eval,
     "fake quantization with scale, zero point and an enable flag as one-element tensors", shape_fake_quant, NULL},
    {"aten.fake_quantize_per_channel_affine_cachemask.default", OPF_TUPLE, op_infer_generic, fq_channel_eval,
     "fake quantization with a scale and zero point per channel of `axis`", shape_fake_quant, NULL},
};
const int ops_fake_quant_count = sizeof ops_fake_quant_table / sizeof ops_fake_quant_table[0];
