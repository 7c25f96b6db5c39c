/* ops_mkldnn.c — the ops torch._inductor.config.freezing leaves in a CPU graph (freezing's
 * weight-pack pass, fx_passes/mkldnn_fusion.py _register_weight_pack_pass) in the op registry:
 *
 *   mkldnn._convolution_pointwise.default(x, w, b, padding, stride, dilation, groups,
 *                                         attr, scalars, algorithm)
 *       a convolution (note: padding before stride) followed by the pointwise op `attr`
 *       ("none", "relu", "sigmoid", "tanh", "hardswish", "hardsigmoid", "swish", "gelu" with
 *       algorithm "none"/"tanh", "leaky_relu" [slope], "hardtanh" [min, max]: the attrs of
 *       aten/src/ATen/native/mkldnn/Utils.cpp fusion_unary_attr_map); the meta is
 *       meta_mkldnn_convolution_default's: channels-last whatever the input;
 *   mkl._mkl_linear(x, packed_w, orig_w, bias, batch_size): x @ orig_w^T + bias (the MKL-packed
 *       copy of the weight is opaque; orig_w is the [out, in] weight it was packed from);
 *   prims.inductor_force_stride_order.default(x, stride): x copied into those strides;
 *   torch__inductor_fx_passes_mkldnn_fusion_fn(...): the node mkldnn_fusion's unary lowering
 *       patterns leave (core/fx_passes/mkldnn_fusion.c): the convolution's arguments as
 *       matched, computed with the attr the pattern fused (Node.fused_unary, not in the text).
 *
 * The frozen weights are get_attr constants (_frozen_param20) whose values a log does not
 * carry: `inputs random` gives them random values of their annotated shape. Lowered as
 * FallbackKernels (Inductor: the ExternKernels ConvolutionUnary / MKLPackedLinear, and
 * ExternKernel.require_stride_order), running these reference implementations. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the convolution ---- */

typedef struct PwConv {
    TensorMeta *x, *w, *b;
    int nsp;
    int64_t pad[3], stride[3], dil[3], groups;
} PwConv;

static int int_list(ShapeArgs *sa, int pos, const char *what, int nsp, int64_t dflt, int64_t *out) {
    return ops_conv_list(sa, sa_arg(sa, pos, what), what, nsp, dflt, out);
}

static int pw_parse(ShapeArgs *sa, PwConv *c) {
    memset(c, 0, sizeof *c);
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &c->x) || sa_tensor(sa, sa_arg(sa, 1, "weight"), "weight", &c->w)) return -1;
    ArgRef ab = sa_arg(sa, 2, "bias");
    if (arg_present(ab) && sa_tensor(sa, ab, "bias", &c->b)) return -1;
    c->nsp = c->x->ndim - 2;
    if (c->nsp < 1 || c->nsp > 3 || c->w->ndim != c->x->ndim)
        return sa_err(sa, "expects input and weight of one rank 3, 4 or 5, got %d and %d", c->x->ndim, c->w->ndim);
    if (int_list(sa, 3, "padding", c->nsp, 0, c->pad) || int_list(sa, 4, "stride", c->nsp, 1, c->stride) ||
        int_list(sa, 5, "dilation", c->nsp, 1, c->dil)) return -1;
    c->groups = 1;
    ArgRef ag = sa_arg(sa, 6, "groups");
    if (arg_present(ag) && sa_const_int(sa, ag, "groups", &c->groups)) return -1;
    for (int i = 0; i < c->nsp; i++)
        if (c->stride[i] < 1 || c->dil[i] < 1 || c->pad[i] < 0 || c->groups < 1)
            return sa_err(sa, "stride/dilation/groups must be >= 1 and padding >= 0");
    int64_t cin, cout, wcin;
    if (!sym_is_int(c->x->size[1], &cin) || !sym_is_int(c->w->size[0], &cout) || !sym_is_int(c->w->size[1], &wcin))
        return sa_err(sa, "channel counts must be constants");
    if (cin != wcin * c->groups || cout % c->groups)
        return sa_err(sa, "input has %lld channels but weight expects %lld x %lld groups", (long long)cin, (long long)wcin, (long long)c->groups);
    if (c->b && (c->b->ndim != 1 || !ex_eq_int(c->b->size[0], cout))) return sa_err(sa, "bias must have %lld elements", (long long)cout);
    return 0;
}

/* calc_conv_nd_return_shape, then .to(memory_format=channels_last / channels_last_3d) */
static int shape_pw_conv(ShapeArgs *sa, TensorMeta *out, int *nout) {
    PwConv c;
    *nout = 1;
    if (pw_parse(sa, &c)) return -1;
    SymCtx *S = sa->sym;
    meta_alloc(sa, out, c.x->dtype, c.x->ndim, c.x->device);
    out->size[0] = c.x->size[0];
    out->size[1] = c.w->size[0];
    for (int i = 0; i < c.nsp; i++) {   /* (in + 2p - d (k - 1) - 1) // s + 1 */
        Expr *num = sym_sub(S, sym_add(S, c.x->size[2 + i], sym_int(S, 2 * c.pad[i])),
                            sym_add(S, sym_mul(S, sym_int(S, c.dil[i]), sym_sub(S, c.w->size[2 + i], sym_int(S, 1))), sym_int(S, 1)));
        int64_t v;
        if (sym_is_int(num, &v) && v < 0) return sa_err(sa, "kernel is larger than the padded input in spatial dim %d", i);
        out->size[2 + i] = sym_add(S, sym_floordiv(S, num, sym_int(S, c.stride[i])), sym_int(S, 1));
    }
    meta_channels_last_strides(sa, out);
    return 0;
}

/* The pointwise attr: name, scalars, algorithm (fusion_unary_attr_map). */
typedef struct Unary { char name[32]; double s[2]; int ns; char algo[16]; } Unary;

static int unary_apply(ShapeArgs *sa, const Unary *u, Tensor *o) {
    const char *a = u->name;
    if (!strcmp(a, "none")) return 0;
    bool known = !strcmp(a, "relu") || !strcmp(a, "sigmoid") || !strcmp(a, "tanh") || !strcmp(a, "hardswish") ||
                 !strcmp(a, "hardsigmoid") || !strcmp(a, "swish") || !strcmp(a, "gelu") || !strcmp(a, "leaky_relu") ||
                 !strcmp(a, "hardtanh");
    if (!known) return sa_err(sa, "unsupported pointwise attr '%s'", a);
    if ((!strcmp(a, "leaky_relu") && u->ns < 1) || (!strcmp(a, "hardtanh") && u->ns < 2))
        return sa_err(sa, "attr '%s' needs %d scalars, got %d", a, !strcmp(a, "hardtanh") ? 2 : 1, u->ns);
    bool tanh_gelu = !strcmp(u->algo, "tanh");
    for (int64_t e = 0; e < tensor_numel(o); e++) {
        double x = tensor_get_f(o, e), y = x;
        if (!strcmp(a, "relu")) y = x < 0 ? 0 : x;
        else if (!strcmp(a, "sigmoid")) y = 1 / (1 + exp(-x));
        else if (!strcmp(a, "tanh")) y = tanh(x);
        else if (!strcmp(a, "hardswish")) y = x * fmin(fmax(x + 3, 0), 6) / 6;
        else if (!strcmp(a, "hardsigmoid")) y = fmin(fmax(x + 3, 0), 6) / 6;
        else if (!strcmp(a, "swish")) y = x / (1 + exp(-x));
        else if (!strcmp(a, "gelu"))
            y = tanh_gelu ? 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) : 0.5 * x * (1 + erf(x * M_SQRT1_2));
        else if (!strcmp(a, "leaky_relu")) y = x > 0 ? x : x * u->s[0];
        else if (!strcmp(a, "hardtanh")) y = fmin(fmax(x, u->s[0]), u->s[1]);
        tensor_set_f(o, e, y);
    }
    return 0;
}

/* The attr of arguments 7..9 ("relu", [], ""). */
static int unary_of_args(ShapeArgs *sa, Unary *u) {
    memset(u, 0, sizeof *u);
    snprintf(u->name, sizeof u->name, "%s", arg_str(sa_arg(sa, 7, "attr"), "none"));
    snprintf(u->algo, sizeof u->algo, "%s", arg_str(sa_arg(sa, 9, "algorithm"), ""));
    ArgRef s = sa_arg(sa, 8, "scalars");
    int n = arg_list_len(s);
    for (int k = 0; k < n && k < 2; k++) {
        DType t;
        if (sa_scalar(sa, arg_item(s, k), "scalar", &u->s[k], &t)) return -1;
        u->ns++;
    }
    return 0;
}

static int pw_conv_run(ShapeArgs *sa, const Unary *u, Tensor *o) {
    PwConv c;
    if (pw_parse(sa, &c)) return -1;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "input")), *w = ev_tensor(sa_arg(sa, 1, "weight"));
    Tensor *b = c.b ? ev_tensor(sa_arg(sa, 2, "bias")) : NULL;
    ops_conv_forward(x, w, b, c.nsp, c.stride, c.pad, c.dil, c.groups, o);
    return unary_apply(sa, u, o);
}

static int pw_conv_fill(ShapeArgs *sa, Tensor *o) {
    Unary u;
    return unary_of_args(sa, &u) ? -1 : pw_conv_run(sa, &u, o);
}
static int pw_conv_eval(const OpCall *c, IValue *out) { return ev_run(c, out, pw_conv_fill); }

/* The lowering-pattern node: its arguments are the 'none' convolution's, its attr the fused
 * unary's ("gelu|tanh" = name|algorithm). */
static int fused_fill(ShapeArgs *sa, Tensor *o) {
    const char *f = sa->node ? sa->node->fused_unary : NULL;
    if (!f)
        return sa_err(sa, "the unary op this lowering pattern fused into the convolution is not in the printed graph "
                          "(run the post-grad passes from the graph before them)");
    Unary u;
    memset(&u, 0, sizeof u);
    const char *bar = strchr(f, '|');
    snprintf(u.name, sizeof u.name, "%.*s", bar ? (int)(bar - f) : (int)strlen(f), f);
    if (bar) snprintf(u.algo, sizeof u.algo, "%s", bar + 1);
    if (sa->nargs != 10) return sa_err(sa, "expects the 10 arguments of mkldnn._convolution_pointwise, got %d", sa->nargs);
    return pw_conv_run(sa, &u, o);
}
static int fused_eval(const OpCall *c, IValue *out) { return ev_run(c, out, fused_fill); }

/* ---- mkl._mkl_linear ---- */

static int shape_mkl_linear(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *w;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &x) || sa_tensor(sa, sa_arg(sa, 2, "orig_weight"), "orig_weight", &w)) return -1;
    if (x->ndim < 1 || w->ndim != 2 || ex_cmp(sa, x->size[x->ndim - 1], w->size[1]) != 0)
        return sa_err(sa, "input [..., K] and orig_weight [N, K] do not fit");
    meta_alloc(sa, out, x->dtype, x->ndim, x->device);
    for (int d = 0; d < x->ndim - 1; d++) out->size[d] = x->size[d];
    out->size[x->ndim - 1] = w->size[0];
    meta_contiguous_strides(sa, out);
    return 0;
}

static int mkl_linear_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *x = ev_tensor(sa_arg(sa, 0, NULL)), *w = ev_tensor(sa_arg(sa, 2, NULL));
    ArgRef ab = sa_arg(sa, 3, "bias");
    Tensor *b = arg_present(ab) ? ev_tensor(ab) : NULL;
    int64_t K = w->size[1], N = w->size[0], rows = N ? tensor_numel(o) / N : 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t n = 0; n < N; n++) {
            double acc = b ? tensor_get_f(b, n) : 0;
            for (int64_t k = 0; k < K; k++) acc += tensor_get_f(x, r * K + k) * tensor_get_f(w, n * K + k);
            tensor_set_f(o, r * N + n, acc);
        }
    return 0;
}
static int mkl_linear_eval(const OpCall *c, IValue *out) { return ev_run(c, out, mkl_linear_fill); }

/* ---- prims.inductor_force_stride_order ---- */

static int shape_force_stride(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t st[MI_MAX_DIMS];
    int n = 0;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &x) || sa_const_int_list(sa, sa_arg(sa, 1, "stride"), "stride", st, &n, MI_MAX_DIMS)) return -1;
    if (n != x->ndim) return sa_err(sa, "stride has %d entries for a %d-D input", n, x->ndim);
    meta_copy(sa, out, x);
    for (int d = 0; d < n; d++) out->stride[d] = sym_int(sa->sym, st[d]);
    out->has_stride = true;
    return 0;
}

static int force_stride_fill(ShapeArgs *sa, Tensor *o) {
    return tensor_copy_into(sa->ctx, o, ev_tensor(sa_arg(sa, 0, NULL)));
}
static int force_stride_eval(const OpCall *c, IValue *out) { return ev_run(c, out, force_stride_fill); }

const OpDef ops_mkldnn_table[] = {
    {"mkldnn._convolution_pointwise.default", OPF_EXTERN, op_infer_generic, pw_conv_eval,
     "oneDNN convolution (padding, stride, dilation, groups) then the pointwise attr (freezing)", shape_pw_conv, NULL},
    {"torch__inductor_fx_passes_mkldnn_fusion_fn", OPF_EXTERN, op_infer_generic, fused_eval,
     "mkldnn_fusion's unary lowering pattern: the convolution with the fused pointwise op", shape_pw_conv, NULL},
    {"mkl._mkl_linear", OPF_EXTERN, op_infer_generic, mkl_linear_eval,
     "MKL packed linear: input @ orig_weight^T + bias (freezing)", shape_mkl_linear, NULL},
    {"prims.inductor_force_stride_order.default", 0, op_infer_generic, force_stride_eval,
     "copy of the input with the given strides", shape_force_stride, NULL},
};
const int ops_mkldnn_count = sizeof ops_mkldnn_table / sizeof ops_mkldnn_table[0];
