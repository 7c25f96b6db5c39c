/* ops_grid_backward.c — the gradients of grid_sample (F.grid_sample, spatial transformers):
 * grid_sampler_2d_backward and grid_sampler_3d_backward(grad_output, input, grid,
 * interpolation_mode, padding_mode, align_corners, output_mask) -> (grad_input, grad_grid).
 * Inductor has no lowering for either (make_fallback in lowering.py): in compiled code they are
 * FallbackKernels that run these reference kernels. Written from ATen's GridSampler.cpp
 * (_grid_sampler_2d_cpu_fallback_backward, grid_sampler_3d_backward_cpu_impl): each output point
 * scatters grad_output into the input pixels its forward read (times their weights), and the
 * grid gets d(sample)/d(pixel coordinate) times d(pixel coordinate)/d(grid coordinate) (the
 * *_set_grad multipliers of unnormalize, border clipping and reflection). grad_input is None
 * when output_mask[0] is false, as the meta function (torch/_meta_registrations.py) returns.
 * Also cuDNN's grid sampler and its backward: the 2-D bilinear / zeros / align_corners case. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* (grad_input: zeros like input, contiguous | None, grad_grid: like grid, contiguous) */
static int shape_grid_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *go, *x, *g;
    int64_t mode;
    int nsp = ((const int *)sa->op->data)[0];
    *nout = 2;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &go) || sa_tensor(sa, sa_arg(sa, 1, "input"), "input", &x) ||
        sa_tensor(sa, sa_arg(sa, 2, "grid"), "grid", &g) || sa_const_int(sa, sa_arg(sa, 3, "interpolation_mode"), "interpolation_mode", &mode)) return -1;
    if (x->ndim != nsp + 2 || g->ndim != nsp + 2 || go->ndim != nsp + 2)
        return sa_err(sa, "grid_sampler_%dd_backward needs %d-D grad_output, input and grid", nsp, nsp + 2);
    if (!ex_eq_int(g->size[nsp + 1], nsp)) return sa_err(sa, "grid_sampler(): expected grid to have size %d in last dimension", nsp);
    if (mode < 0 || mode > (nsp == 2 ? 2 : 1)) return sa_err(sa, "grid_sampler(): invalid interpolation_mode %lld", (long long)mode);
    bool mask0 = true;
    ArgRef am = sa_arg(sa, 6, "output_mask");
    if (arg_list_len(am) >= 1) mask0 = arg_bool(arg_item(am, 0), true);
    meta_alloc(sa, &out[0], x->dtype, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out[0].size[i] = x->size[i];
    meta_contiguous_strides(sa, &out[0]);
    if (!mask0) out[0].dtype = DT_INVALID;
    meta_alloc(sa, &out[1], g->dtype, g->ndim, g->device);
    for (int i = 0; i < g->ndim; i++) out[1].size[i] = g->size[i];
    meta_contiguous_strides(sa, &out[1]);
    return 0;
}

/* grid_sampler_compute_source_index_set_grad: the pixel coordinate of grid coordinate c and
 * d(pixel)/d(c) in *mult (unnormalize: (size - 1) / 2 or size / 2; border: 0 where clipped
 * (the border itself counts as clipped); reflection: -1 on a mirrored stretch). */
static double clip_set_grad(double c, int64_t size, double *g) {
    if (c <= 0) { *g = 0; return 0; }
    double mx = (double)(size - 1);
    if (c >= mx) { *g = 0; return mx; }
    *g = 1;
    return c;
}
static double reflect_set_grad(double c, int64_t twice_lo, int64_t twice_hi, double *g) {
    if (twice_lo == twice_hi) { *g = 0; return 0; }
    double mn = (double)twice_lo / 2, span = (double)(twice_hi - twice_lo) / 2, sign = 1;
    c -= mn;
    if (c < 0) { sign = -1; c = -c; }
    double extra = fmod(c, span);
    int64_t flips = (int64_t)floor(c / span);
    if (flips % 2 == 0) { *g = sign; return extra + mn; }
    *g = -sign;
    return span - extra + mn;
}
static double unnormalize_set_grad(double c, int64_t size, bool align, double *mult) {
    *mult = align ? (double)(size - 1) / 2 : (double)size / 2;
    return align ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * (double)size - 1) / 2;
}
static double source_set_grad(double c, int64_t size, int pad, bool align, double *mult) {
    double gc, gr;
    c = unnormalize_set_grad(c, size, align, mult);
    if (pad == 1) { c = clip_set_grad(c, size, &gc); *mult *= gc; }
    else if (pad == 2) {
        c = align ? reflect_set_grad(c, 0, 2 * (size - 1), &gr) : reflect_set_grad(c, -1, 2 * size - 1, &gr);
        c = clip_set_grad(c, size, &gc);
        *mult *= gr * gc;
    }
    return c;
}

/* the cubic convolution weights (A = -0.75) of the 4 taps at offset t, and their derivatives
 * (get_cubic_upsample_coefficients, get_cubic_coefficients_grad) */
static void cubic_w(double t, double *w, double *dw) {
    const double A = -0.75;
    double x = t + 1;
    w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    x = t;
    w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x = 1 - t;
    w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x = 2 - t;
    w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    x = -1 - t;
    dw[0] = (-3 * A * x - 10 * A) * x - 8 * A;
    x = -t;
    dw[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
    x = 1 - t;
    dw[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
    x = 2 - t;
    dw[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

typedef struct GridBwd {
    int nsp;
    int64_t N, C, in[3], out[3], npts;   /* spatial sizes, outermost first (D, H, W) */
    Tensor *go, *x, *gi;                  /* gi: NULL when not asked */
    double *acc;                          /* grad_input accumulated in double */
} GridBwd;

/* the input pixel (n, c, p[0..nsp)) as a flat index, -1 outside */
static int64_t pix(const GridBwd *G, int64_t n, int64_t c, const int64_t *p) {
    int64_t ix = n * G->C + c;
    for (int d = 0; d < G->nsp; d++) {
        if (p[d] < 0 || p[d] >= G->in[d]) return -1;
        ix = ix * G->in[d] + p[d];
    }
    return ix;
}

/* one output point: coordinate co[d] (pixel space, innermost dim last) with multipliers mult;
 * linear (mode 0: 2^nsp corners) or nearest (mode 1); gradient of the point's pixel
 * coordinates into gc[] */
static void point_linear(GridBwd *G, int64_t n, int64_t pt, const double *co, int mode, double *gc) {
    int nsp = G->nsp, ncorner = 1 << nsp;
    double base[3], fr[3];
    for (int d = 0; d < nsp; d++) { gc[d] = 0; base[d] = mode == 1 ? nearbyint(co[d]) : floor(co[d]); fr[d] = co[d] - base[d]; }
    for (int64_t c = 0; c < G->C; c++) {
        double gout = tensor_get_f(G->go, (n * G->C + c) * G->npts + pt);
        if (mode == 1) {
            int64_t p[3];
            for (int d = 0; d < nsp; d++) p[d] = (int64_t)base[d];
            int64_t ix = pix(G, n, c, p);
            if (ix >= 0 && G->acc) G->acc[ix] += gout;
            continue;
        }
        for (int k = 0; k < ncorner; k++) {
            int64_t p[3];
            double w[3];
            for (int d = 0; d < nsp; d++) {
                int bit = (k >> (nsp - 1 - d)) & 1;
                p[d] = (int64_t)base[d] + bit;
                w[d] = bit ? fr[d] : 1 - fr[d];
            }
            int64_t ix = pix(G, n, c, p);
            if (ix < 0) continue;
            double wall = 1;
            for (int d = 0; d < nsp; d++) wall *= w[d];
            if (G->acc) G->acc[ix] += wall * gout;
            double v = tensor_get_f(G->x, ix);
            for (int d = 0; d < nsp; d++) {
                double dw = ((k >> (nsp - 1 - d)) & 1) ? 1 : -1;
                for (int e = 0; e < nsp; e++) if (e != d) dw *= w[e];
                gc[d] += v * dw * gout;
            }
        }
    }
}

/* bicubic (2-D only): 4x4 taps around floor(co), each tap's coordinate padded as the forward
 * does (compute_coordinates), the grid gradient from the weights' derivatives */
static void point_cubic(GridBwd *G, int64_t n, int64_t pt, const double *co, int pad, bool align, double *gc) {
    double fy = floor(co[0]), fx = floor(co[1]), wy[4], wx[4], dwy[4], dwx[4];
    cubic_w(co[0] - fy, wy, dwy);
    cubic_w(co[1] - fx, wx, dwx);
    gc[0] = gc[1] = 0;
    for (int64_t c = 0; c < G->C; c++) {
        double gout = tensor_get_f(G->go, (n * G->C + c) * G->npts + pt);
        for (int i = 0; i < 4; i++)          /* x taps */
            for (int j = 0; j < 4; j++) {    /* y taps */
                int64_t p[2] = {(int64_t)grid_pad(fy - 1 + j, G->in[0], pad, align), (int64_t)grid_pad(fx - 1 + i, G->in[1], pad, align)};
                int64_t ix = pix(G, n, c, p);
                if (ix < 0) continue;
                if (G->acc) G->acc[ix] += gout * wx[i] * wy[j];
                double v = tensor_get_f(G->x, ix);
                gc[1] -= v * dwx[i] * wy[j] * gout;
                gc[0] -= v * dwy[j] * wx[i] * gout;
            }
    }
}

/* The two gradients into res[0] (grad_input, or NULL: not asked) and res[1] (grad_grid), from
 * grad_output go, input x and grid, nsp spatial dims, the modes given. -1 after sa_err. */
static int grid_bwd_run(ShapeArgs *sa, int nsp, Tensor *go, Tensor *x, Tensor *grid, int mode, int pad, bool align, Tensor *const *res) {
    GridBwd G = {0};
    G.nsp = nsp; G.go = go; G.x = x;
    if (pad < 0 || pad > 2) return sa_err(sa, "grid_sampler(): invalid padding_mode %d", pad);
    G.N = G.x->size[0]; G.C = G.x->size[1]; G.npts = 1;
    for (int d = 0; d < nsp; d++) { G.in[d] = G.x->size[2 + d]; G.out[d] = grid->size[1 + d]; G.npts *= G.out[d]; }
    if (grid->size[0] != G.N || G.go->size[0] != G.N || G.go->size[1] != G.C)
        return sa_err(sa, "grid_sampler(): batch or channel sizes of grad_output, input and grid differ");
    for (int d = 0; d < nsp; d++)
        if (G.go->size[2 + d] != G.out[d]) return sa_err(sa, "grid_sampler(): grad_output's spatial sizes differ from the grid's");
    int64_t nin = tensor_numel(G.x);
    if (res[0]) G.acc = mi_xcalloc((size_t)(nin ? nin : 1), sizeof *G.acc);
    for (int64_t n = 0; n < G.N; n++)
        for (int64_t pt = 0; pt < G.npts; pt++) {
            double co[3], mult[3], gc[3] = {0, 0, 0};
            bool finite = true;
            for (int d = 0; d < nsp; d++) {
                /* grid's last dim is (x, y[, z]): innermost spatial dim first */
                double c = tensor_get_f(grid, (n * G.npts + pt) * nsp + (nsp - 1 - d));
                int64_t size = G.in[d];
                co[d] = mode == 2 ? unnormalize_set_grad(c, size, align, &mult[d]) : source_set_grad(c, size, pad, align, &mult[d]);
                finite = finite && isfinite(co[d]);
            }
            if (finite && mode == 2) point_cubic(&G, n, pt, co, pad, align, gc);
            else if (finite) point_linear(&G, n, pt, co, mode, gc);
            for (int d = 0; d < nsp; d++)
                tensor_set_f(res[1], (n * G.npts + pt) * nsp + (nsp - 1 - d), mode == 1 ? 0 : mult[d] * gc[d]);
        }
    if (res[0]) for (int64_t e = 0; e < nin; e++) tensor_set_f(res[0], e, G.acc[e]);
    free(G.acc);
    return 0;
}

static int grid_bwd_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[OP_MAX_OUTS];
    int nm, rc = -1;
    Tensor *res[2] = {0};
    int nsp = ((const int *)sa->op->data)[0];
    int64_t mode, pad;
    if (ev_shape(sa, m, &nm) || sa_const_int(sa, sa_arg(sa, 3, "interpolation_mode"), "interpolation_mode", &mode) ||
        sa_const_int(sa, sa_arg(sa, 4, "padding_mode"), "padding_mode", &pad)) goto done;
    bool align = arg_bool(sa_arg(sa, 5, "align_corners"), false);
    if ((m[0].dtype != DT_INVALID && !(res[0] = ev_new(sa, &m[0]))) || !(res[1] = ev_new(sa, &m[1]))) goto done;
    if (grid_bwd_run(sa, nsp, ev_tensor(sa_arg(sa, 0, "grad_output")), ev_tensor(sa_arg(sa, 1, "input")),
                     ev_tensor(sa_arg(sa, 2, "grid")), (int)mode, (int)pad, align, res)) goto done;
    ev_out_tuple(out, res, 2);
    memset(res, 0, sizeof res);
    rc = 0;
done:
    for (int i = 0; i < 2; i++) tensor_unref(res[i]);
    return rc;
}
static int grid_bwd_eval(const OpCall *c, IValue *out) { return ev_call(c, out, grid_bwd_body); }

/* ---- cuDNN's grid sampler (aten/src/ATen/native/cudnn/GridSampler.cpp) ----
 * What F.grid_sample dispatches to on CUDA for a 4-D input when cudnn_is_acceptable, 32-bit
 * indexing and C <= 1024 hold (cond_cudnn_grid_sampler) and the modes are bilinear, zeros,
 * align_corners=True: cudnn_grid_sampler(self, grid) -> output [N, C, H', W'], and
 * cudnn_grid_sampler_backward(self, grid, grad_output) -> (grad_self, grad_grid), every result
 * contiguous (resize_ of an empty tensor). The values are grid_sampler_2d's and its backward's
 * with those modes; Inductor has no lowering for either (a FallbackKernel, as the logs' output
 * code calls torch.ops.aten.cudnn_grid_sampler.default). */
static int cudnn_grid_check(ShapeArgs *sa, TensorMeta **x, TensorMeta **g) {
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", x) || sa_tensor(sa, sa_arg(sa, 1, "grid"), "grid", g)) return -1;
    if ((*x)->ndim != 4 || (*g)->ndim != 4) return sa_err(sa, "Invalid arguments to cudnn_grid_sampler_forward (needs a 4-D input and grid)");
    if (!ex_eq_int((*g)->size[3], 2)) return sa_err(sa, "grid_sampler(): expected grid to have size 2 in last dimension");
    if (ex_cmp(sa, (*x)->size[0], (*g)->size[0]) != 0) return sa_err(sa, "grid_sampler(): expected grid and input to have same batch size");
    if ((*x)->dtype != (*g)->dtype) return sa_err(sa, "expected input and grid of the same dtype, got %s and %s", dtype_abbrev((*x)->dtype), dtype_abbrev((*g)->dtype));
    int64_t c;
    if (sym_is_int((*x)->size[1], &c) && c > 1024) return sa_err(sa, "Invalid arguments to cudnn_grid_sampler_forward (more than 1024 channels)");
    return 0;
}

/* a contiguous meta of sizes sz[0..4) in like's dtype and device */
static void cudnn_meta(ShapeArgs *sa, TensorMeta *out, const TensorMeta *like, Expr *const *sz) {
    meta_alloc(sa, out, like->dtype, 4, like->device);
    for (int i = 0; i < 4; i++) out->size[i] = sz[i];
    meta_contiguous_strides(sa, out);
}

static int shape_cudnn_grid(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *g, *go;
    bool bwd = sa->op->data != NULL;
    if (cudnn_grid_check(sa, &x, &g)) return -1;
    if (!bwd) {
        *nout = 1;
        cudnn_meta(sa, out, x, (Expr *[]){x->size[0], x->size[1], g->size[1], g->size[2]});
        return 0;
    }
    if (sa_tensor(sa, sa_arg(sa, 2, "grad_output"), "grad_output", &go)) return -1;
    if (go->ndim != 4) return sa_err(sa, "cudnn_grid_sampler_backward needs a 4-D grad_output");
    *nout = 2;
    cudnn_meta(sa, &out[0], x, x->size);
    cudnn_meta(sa, &out[1], g, g->size);
    return 0;
}

static int cudnn_grid_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[OP_MAX_OUTS];
    int nm;
    Tensor *res[2] = {0};
    if (ev_shape(sa, m, &nm)) return -1;
    for (int i = 0; i < nm; i++)
        if (!(res[i] = ev_new(sa, &m[i]))) { tensor_unref(res[0]); return -1; }
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self")), *grid = ev_tensor(sa_arg(sa, 1, "grid"));
    if (nm == 1) {
        grid_sample_2d(x, grid, res[0], 0, 0, true);
        return ev_out_tensor(out, res[0]);
    }
    if (grid_bwd_run(sa, 2, ev_tensor(sa_arg(sa, 2, "grad_output")), x, grid, 0, 0, true, res)) {
        tensor_unref(res[0]); tensor_unref(res[1]);
        return -1;
    }
    return ev_out_tuple(out, res, 2);
}
static int cudnn_grid_eval(const OpCall *c, IValue *out) { return ev_call(c, out, cudnn_grid_body); }

const OpDef ops_grid_backward_table[] = {
    {"aten.grid_sampler_2d_backward.default", OPF_TUPLE, op_infer_generic, grid_bwd_eval,
     "(grad_input | None, grad_grid) of grid_sampler_2d (bilinear/nearest/bicubic)", shape_grid_bwd, &(const int){2}},
    {"aten.grid_sampler_3d_backward.default", OPF_TUPLE, op_infer_generic, grid_bwd_eval,
     "(grad_input | None, grad_grid) of grid_sampler_3d (trilinear/nearest)", shape_grid_bwd, &(const int){3}},
    {"aten.cudnn_grid_sampler.default", 0, op_infer_generic, cudnn_grid_eval,
     "grid_sampler_2d bilinear, zeros padding, align_corners (cuDNN's)", shape_cudnn_grid, NULL},
    {"aten.cudnn_grid_sampler_backward.default", OPF_TUPLE, op_infer_generic, cudnn_grid_eval,
     "(grad_self, grad_grid) of cudnn_grid_sampler", shape_cudnn_grid, &(const int){1}},
};
const int ops_grid_backward_count = sizeof ops_grid_backward_table / sizeof ops_grid_backward_table[0];
