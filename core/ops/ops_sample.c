/* ops_sample.c — resampling ops whose taps come from a computed table, as ATen's CPU kernels
 * build it: grid_sampler_3d (grid points -> 8 trilinear corners or the nearest voxel),
 * the antialiased resizes _upsample_bilinear2d_aa / _upsample_bicubic2d_aa (separable filters
 * whose support widens with the downscale factor, UpSampleKernel.cpp) and their backwards (the
 * same taps, each output gradient spread back over them), and fractional max
 * pooling (pseudo-random window starts from the `random_samples` input,
 * FractionalMaxPool2d.cpp / 3d). None has an Inductor lowering here: in compiled code they are
 * FallbackKernels that call these reference kernels. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SK_GRID3, SK_AA_LINEAR, SK_AA_CUBIC, SK_FRAC2, SK_FRAC3, SK_AA_LINEAR_BWD, SK_AA_CUBIC_BWD };
typedef struct SampleSpec { int kind; } SampleSpec;
#define SKIND(sa) (((const SampleSpec *)(sa)->op->data)->kind)

static int const_sizes(ShapeArgs *sa, const TensorMeta *x, int64_t *v) {
    for (int i = 0; i < x->ndim; i++)
        if (!sym_is_int(x->size[i], &v[i])) return sa_err(sa, "symbolic sizes are not supported");
    return 0;
}

/* ---- grid_sampler_3d ---- */

/* grid_sampler_3d(input [N, C, D, H, W], grid [N, D', H', W', 3], interpolation_mode,
 * padding_mode, align_corners) -> [N, C, D', H', W']; grid's last dim is (x, y, z) = (W, H, D) */
static int shape_grid3(ShapeArgs *sa, TensorMeta *out) {
    TensorMeta *x, *g;
    int64_t mode;
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &x) || sa_tensor(sa, sa_arg(sa, 1, "grid"), "grid", &g) ||
        sa_const_int(sa, sa_arg(sa, 2, "interpolation_mode"), "interpolation_mode", &mode)) return -1;
    if (x->ndim != 5 || g->ndim != 5) return sa_err(sa, "grid_sampler_3d needs a 5-D input and grid, got %d-D and %d-D", x->ndim, g->ndim);
    if (!ex_eq_int(g->size[4], 3)) return sa_err(sa, "grid_sampler(): expected grid to have size 3 in last dimension");
    if (ex_cmp(sa, x->size[0], g->size[0]) != 0) return sa_err(sa, "grid_sampler(): expected grid and input to have same batch size");
    if (mode == 2) return sa_err(sa, "grid_sampler(): bicubic interpolation only supports 4D input");
    if (mode < 0 || mode > 1) return sa_err(sa, "grid_sampler(): invalid interpolation_mode %lld", (long long)mode);
    meta_alloc(sa, out, x->dtype, 5, x->device);
    out->size[0] = x->size[0]; out->size[1] = x->size[1];
    for (int i = 0; i < 3; i++) out->size[2 + i] = g->size[1 + i];
    meta_contiguous_strides(sa, out);
    return 0;
}

/* the voxel (z, y, x) of plane (n, c), 0 outside (within_bounds_3d) */
static double vox(const Tensor *x, const int64_t *s, int64_t n, int64_t c, int64_t z, int64_t y, int64_t w) {
    if (z < 0 || z >= s[2] || y < 0 || y >= s[3] || w < 0 || w >= s[4]) return 0;
    return tensor_get_f(x, (((n * s[1] + c) * s[2] + z) * s[3] + y) * s[4] + w);
}

/* ATen grid_sampler_3d_cpu_impl: unnormalize + pad each coordinate (grid_coord), then the 8
 * corners of floor(ix, iy, iz) weighted by the opposite sub-volume, or nearbyint (ties to even) */
static int grid3_kernel(ShapeArgs *sa, const Tensor *x, const Tensor *g, Tensor *o) {
    int64_t mode, pad, s[5];
    if (sa_const_int(sa, sa_arg(sa, 2, "interpolation_mode"), "interpolation_mode", &mode) ||
        sa_const_int(sa, sa_arg(sa, 3, "padding_mode"), "padding_mode", &pad)) return -1;
    if (pad < 0 || pad > 2) return sa_err(sa, "grid_sampler(): invalid padding_mode %lld", (long long)pad);
    bool align = arg_bool(sa_arg(sa, 4, "align_corners"), false);
    for (int i = 0; i < 5; i++) s[i] = x->size[i];
    int64_t OD = g->size[1], OH = g->size[2], OW = g->size[3], npts = OD * OH * OW;
    for (int64_t n = 0; n < s[0]; n++)
        for (int64_t p = 0; p < npts; p++) {
            int64_t gb = (n * npts + p) * 3;
            double ix = grid_coord(tensor_get_f(g, gb), s[4], (int)pad, align);
            double iy = grid_coord(tensor_get_f(g, gb + 1), s[3], (int)pad, align);
            double iz = grid_coord(tensor_get_f(g, gb + 2), s[2], (int)pad, align);
            bool finite = isfinite(ix) && isfinite(iy) && isfinite(iz);   /* a NaN/inf point reads nothing */
            for (int64_t c = 0; c < s[1]; c++) {
                double v = 0;
                if (!finite) v = NAN;
                else if (mode == 1) v = vox(x, s, n, c, (int64_t)nearbyint(iz), (int64_t)nearbyint(iy), (int64_t)nearbyint(ix));
                else {
                    double x0 = floor(ix), y0 = floor(iy), z0 = floor(iz), fx = ix - x0, fy = iy - y0, fz = iz - z0;
                    for (int k = 0; k < 8; k++) {
                        int dz = k >> 2, dy = (k >> 1) & 1, dx = k & 1;
                        double w = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * (dz ? fz : 1 - fz);
                        v += w * vox(x, s, n, c, (int64_t)z0 + dz, (int64_t)y0 + dy, (int64_t)x0 + dx);
                    }
                }
                tensor_set_f(o, (n * s[1] + c) * npts + p, v);
            }
        }
    return 0;
}

/* ---- antialiased resize ---- */

/* _upsample_{bilinear,bicubic}2d_aa(input [N, C, H, W], output_size, align_corners, scales_h,
 * scales_w) */
static int shape_aa(ShapeArgs *sa, TensorMeta *out) {
    TensorMeta *x;
    int64_t osz[2];
    int n;
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &x) ||
        sa_const_int_list(sa, sa_arg(sa, 1, "output_size"), "output_size", osz, &n, 2)) return -1;
    if (x->ndim != 4) return sa_err(sa, "expected a 4-D input [N, C, H, W], got %d-D", x->ndim);
    if (n != 2) return sa_err(sa, "It is expected output_size equals to 2, but got size %d", n);
    if (osz[0] <= 0 || osz[1] <= 0) return sa_err(sa, "Input and output sizes should be greater than 0, but got output (H: %lld, W: %lld)", (long long)osz[0], (long long)osz[1]);
    if (!dtype_is_float(x->dtype)) return sa_err(sa, "antialiased upsampling needs a floating input, got %s", dtype_abbrev(x->dtype));
    meta_alloc(sa, out, x->dtype, 4, x->device);
    out->size[0] = x->size[0]; out->size[1] = x->size[1];
    out->size[2] = sym_int(sa->sym, osz[0]); out->size[3] = sym_int(sa->sym, osz[1]);
    meta_suggested_strides(sa, out, x);
    return 0;
}

/* the separable filters: triangle (bilinear, support 1) and Keys cubic a = -0.5 (support 2) */
static double aa_filter(bool cubic, double x) {
    x = fabs(x);
    if (!cubic) return x < 1 ? 1 - x : 0;
    const double a = -0.5;
    if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* ATen _compute_weights_aa for output position i: the taps xmin .. xmin + xsize of an input of
 * `in`, normalized to sum 1; a downscale (scale >= 1) widens the support by the scale.
 * Example: 4 -> 2 bilinear: scale 2, support 2, output 0 centred at 1 reads inputs 0..2 with
 * weights [.25, .5, .25] / 1 -> taps 0, 1, 2. */
static int aa_taps(bool cubic, int64_t i, int64_t in, double scale, double *w, int64_t *xmin) {
    double interp = cubic ? 4 : 2;
    double support = scale >= 1 ? interp * 0.5 * scale : interp * 0.5;
    int64_t maxsz = (int64_t)ceil(support) * 2 + 1;
    double center = scale * ((double)i + 0.5), invscale = scale >= 1 ? 1.0 / scale : 1.0, total = 0;
    int64_t lo = (int64_t)(center - support + 0.5);
    if (lo < 0) lo = 0;
    int64_t hi = (int64_t)(center + support + 0.5);
    if (hi > in) hi = in;
    int64_t n = hi - lo;
    if (n < 0) n = 0;
    if (n > maxsz) n = maxsz;
    for (int64_t j = 0; j < n; j++) { w[j] = aa_filter(cubic, ((double)(j + lo) - center + 0.5) * invscale); total += w[j]; }
    if (total != 0) for (int64_t j = 0; j < n; j++) w[j] /= total;
    *xmin = lo;
    return (int)n;
}

/* area_pixel_compute_scale */
static double aa_scale(int64_t in, int64_t out, bool align, double scale) {
    if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
    return scale > 0 ? 1.0 / scale : (double)in / (double)out;
}

/* _upsample_{bilinear,bicubic}2d_aa_backward(grad_output, output_size, input_size,
 * align_corners, scales_h, scales_w): input_size, in grad_output's suggested memory format */
static int shape_aa_bwd(ShapeArgs *sa, TensorMeta *out) {
    TensorMeta *g;
    int64_t osz[2], isz[4];
    int no, ni;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &g) ||
        sa_const_int_list(sa, sa_arg(sa, 1, "output_size"), "output_size", osz, &no, 2) ||
        sa_const_int_list(sa, sa_arg(sa, 2, "input_size"), "input_size", isz, &ni, 4)) return -1;
    if (no != 2 || ni != 4 || g->ndim != 4) return sa_err(sa, "expected a 4-D grad_output, 2 output sizes and 4 input sizes");
    for (int i = 0; i < 2; i++)
        if (!ex_eq_int(g->size[2 + i], osz[i])) return sa_err(sa, "grad_output's spatial size %d differs from output_size", i);
    meta_alloc(sa, out, g->dtype, 4, g->device);
    for (int i = 0; i < 4; i++) out->size[i] = sym_int(sa->sym, isz[i]);
    meta_suggested_strides(sa, out, g);
    return 0;
}

/* the adjoint of aa_kernel: the height taps spread each output row over a temporary of
 * [P, H, OW], then the width taps spread that over the input columns */
static int aa_backward(ShapeArgs *sa, bool cubic, const Tensor *g, Tensor *o) {
    bool align = arg_bool(sa_arg(sa, 3, "align_corners"), false);
    double sc[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        ArgRef a = sa_arg(sa, 4 + i, i ? "scales_w" : "scales_h");
        DType t;
        if (arg_present(a) && sa_scalar(sa, a, "scales", &sc[i], &t)) return -1;
    }
    int64_t P = o->size[0] * o->size[1], H = o->size[2], W = o->size[3], OH = g->size[2], OW = g->size[3];
    if (g->size[0] * g->size[1] != P) return sa_err(sa, "grad_output and input_size differ in batch or channels");
    double sh = aa_scale(H, OH, align, sc[0]), sw = aa_scale(W, OW, align, sc[1]);
    if (!isfinite(sh) || !isfinite(sw) || sh > (double)(H + 1) * 1e6 || sw > (double)(W + 1) * 1e6)
        return sa_err(sa, "antialiased upsampling: invalid scale factors (scales_h %g, scales_w %g)", sc[0], sc[1]);
    int64_t maxw = (int64_t)ceil((cubic ? 2 : 1) * (sw > sh ? (sw > 1 ? sw : 1) : (sh > 1 ? sh : 1))) * 2 + 2;
    double *tmp = calloc((size_t)(P * H * OW + 1), sizeof(double)), *acc = calloc((size_t)(P * H * W + 1), sizeof(double));
    double *w = malloc(sizeof(double) * (size_t)maxw);
    if (!tmp || !acc || !w) { free(tmp); free(acc); free(w); return sa_err(sa, "out of memory"); }
    for (int64_t i = 0; i < OH; i++) {
        int64_t lo;
        int n = aa_taps(cubic, i, H, sh, w, &lo);
        for (int64_t p = 0; p < P; p++)
            for (int64_t j = 0; j < OW; j++) {
                double gv = tensor_get_f(g, (p * OH + i) * OW + j);
                for (int k = 0; k < n; k++) tmp[(p * H + lo + k) * OW + j] += w[k] * gv;
            }
    }
    for (int64_t j = 0; j < OW; j++) {
        int64_t lo;
        int n = aa_taps(cubic, j, W, sw, w, &lo);
        for (int64_t p = 0; p < P * H; p++)
            for (int k = 0; k < n; k++) acc[p * W + lo + k] += w[k] * tmp[p * OW + j];
    }
    for (int64_t e = 0; e < P * H * W; e++) tensor_set_f(o, e, acc[e]);
    free(tmp);
    free(acc);
    free(w);
    return 0;
}

/* separable_upsample_generic_Nd_kernel_impl: the width pass into a temporary, then the height pass */
static int aa_kernel(ShapeArgs *sa, bool cubic, const Tensor *x, Tensor *o) {
    bool align = arg_bool(sa_arg(sa, 2, "align_corners"), false);
    double sc[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        ArgRef a = sa_arg(sa, 3 + i, i ? "scales_w" : "scales_h");
        DType t;
        if (arg_present(a) && sa_scalar(sa, a, "scales", &sc[i], &t)) return -1;
    }
    int64_t P = x->size[0] * x->size[1], H = x->size[2], W = x->size[3], OH = o->size[2], OW = o->size[3];
    double sh = aa_scale(H, OH, align, sc[0]), sw = aa_scale(W, OW, align, sc[1]);
    if (!isfinite(sh) || !isfinite(sw) || sh > (double)(H + 1) * 1e6 || sw > (double)(W + 1) * 1e6)
        return sa_err(sa, "antialiased upsampling: invalid scale factors (scales_h %g, scales_w %g)", sc[0], sc[1]);
    int64_t maxw = (int64_t)ceil((cubic ? 2 : 1) * (sw > sh ? (sw > 1 ? sw : 1) : (sh > 1 ? sh : 1))) * 2 + 2;
    double *tmp = malloc(sizeof(double) * (size_t)(P * H * OW + 1)), *w = malloc(sizeof(double) * (size_t)maxw);
    if (!tmp || !w) { free(tmp); free(w); return sa_err(sa, "out of memory"); }
    for (int64_t j = 0; j < OW; j++) {
        int64_t lo;
        int n = aa_taps(cubic, j, W, sw, w, &lo);
        for (int64_t p = 0; p < P * H; p++) {
            double v = 0;
            for (int k = 0; k < n; k++) v += w[k] * tensor_get_f(x, p * W + lo + k);
            tmp[p * OW + j] = v;
        }
    }
    for (int64_t i = 0; i < OH; i++) {
        int64_t lo;
        int n = aa_taps(cubic, i, H, sh, w, &lo);
        for (int64_t p = 0; p < P; p++)
            for (int64_t j = 0; j < OW; j++) {
                double v = 0;
                for (int k = 0; k < n; k++) v += w[k] * tmp[(p * H + lo + k) * OW + j];
                tensor_set_f(o, (p * OH + i) * OW + j, v);
            }
    }
    free(tmp);
    free(w);
    return 0;
}

/* ---- fractional max pooling ---- */

/* fractional_max_pool{2,3}d(self, kernel_size, output_size, random_samples [N, C, nsp]) ->
 * (values, indices into the input plane), both [.., C, out...] */
static int shape_frac(ShapeArgs *sa, TensorMeta *out, int nsp) {
    TensorMeta *x, *r;
    int64_t k[3], o[3], sz[5];
    int nk, no;
    const char *name = nsp == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) ||
        sa_const_int_list(sa, sa_arg(sa, 1, "kernel_size"), "kernel_size", k, &nk, 3) ||
        sa_const_int_list(sa, sa_arg(sa, 2, "output_size"), "output_size", o, &no, 3) ||
        sa_tensor(sa, sa_arg(sa, 3, "random_samples"), "random_samples", &r)) return -1;
    if (nk == 1) for (int i = 1; i < nsp; i++) k[i] = k[0];
    if (no == 1) for (int i = 1; i < nsp; i++) o[i] = o[0];
    if ((nk != 1 && nk != nsp) || (no != 1 && no != nsp)) return sa_err(sa, "%s: kernel_size and output_size must be a single int or %d ints", name, nsp);
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2) return sa_err(sa, "%s: expected a %dD or %dD input, got %dD", name, nsp + 1, nsp + 2, x->ndim);
    if (const_sizes(sa, x, sz)) return -1;
    int64_t N = x->ndim == nsp + 2 ? sz[0] : 1, C = sz[x->ndim - nsp - 1];
    for (int i = 0; i < nsp; i++) {
        int64_t in = sz[x->ndim - nsp + i];
        if (k[i] <= 0 || o[i] <= 0) return sa_err(sa, "%s: kernel_size and output_size must be positive", name);
        if (o[i] + k[i] - 1 > in)
            return sa_err(sa, "%s: pool size %lld too large relative to input size %lld (output size %lld) in spatial dim %d",
                          name, (long long)k[i], (long long)in, (long long)o[i], i);
    }
    if (r->ndim != 3 || !ex_eq_int(r->size[0], N) || !ex_eq_int(r->size[1], C) || !ex_eq_int(r->size[2], nsp))
        return sa_err(sa, "%s: random_samples must be [%lld, %lld, %d]", name, (long long)N, (long long)C, nsp);
    if (!dtype_is_float(x->dtype) || r->dtype != x->dtype) return sa_err(sa, "%s: expected floating self and random_samples of its dtype", name);
    for (int t = 0; t < 2; t++) {
        meta_alloc(sa, &out[t], t ? DT_I64 : x->dtype, x->ndim, x->device);
        for (int i = 0; i < x->ndim; i++)
            out[t].size[i] = i < x->ndim - nsp ? x->size[i] : sym_int(sa->sym, o[i - (x->ndim - nsp)]);
        meta_contiguous_strides(sa, &out[t]);
    }
    return 0;
}

/* generate_intervals: the start of each window, alpha = (in - pool) / (out - 1) in the input's
 * precision, start_i = int((i + u) * alpha) - int(u * alpha), the last window flush right.
 * Example: u = 0.5, in 9, pool 3, out 2: alpha 6 -> starts [0, 6]. */
static void frac_starts(double u, bool f32, int64_t in, int64_t out, int64_t pool, int64_t *seq) {
    if (out > 1) {
        double alpha = f32 ? (double)((float)(in - pool) / (float)(out - 1)) : (double)(in - pool) / (double)(out - 1);
        for (int64_t i = 0; i < out - 1; i++) {
            if (f32) seq[i] = (int64_t)(int)(((float)i + (float)u) * (float)alpha) - (int64_t)(int)((float)u * (float)alpha);
            else seq[i] = (int64_t)(int)(((double)i + u) * alpha) - (int64_t)(int)(u * alpha);
        }
    }
    if (out > 0) seq[out - 1] = in - pool;
}

/* per plane: window starts from samples (3d: T, H, W = samples 0, 1, 2; 2d: W = sample 0,
 * H = sample 1), then the max of each window, NaN winning, index = flat position in the plane */
static int frac_kernel(ShapeArgs *sa, int nsp, const Tensor *x, const Tensor *r, Tensor *o, Tensor *oi) {
    int64_t k[3], osz[3], in[3];
    int nk, no;
    if (sa_const_int_list(sa, sa_arg(sa, 1, "kernel_size"), "kernel_size", k, &nk, 3) ||
        sa_const_int_list(sa, sa_arg(sa, 2, "output_size"), "output_size", osz, &no, 3)) return -1;
    if (nk == 1) for (int i = 1; i < nsp; i++) k[i] = k[0];
    if (no == 1) for (int i = 1; i < nsp; i++) osz[i] = osz[0];
    int64_t isz = 1, opl = 1;
    for (int i = 0; i < nsp; i++) { in[i] = x->size[x->ndim - nsp + i]; isz *= in[i]; opl *= osz[i]; }
    int64_t planes = isz ? tensor_numel(x) / isz : 0;
    int64_t *seq = malloc(sizeof(int64_t) * (size_t)(osz[0] + osz[1] + (nsp == 3 ? osz[2] : 0) + 1));
    if (!seq) return sa_err(sa, "out of memory");
    bool f32 = x->dtype != DT_F64;
    for (int64_t p = 0; p < planes; p++) {
        int64_t *st[3] = {seq, seq + osz[0], seq + osz[0] + osz[1]};
        for (int i = 0; i < nsp; i++) {
            int sample = nsp == 2 ? 1 - i : i;   /* 2d: sample 0 is W, sample 1 is H */
            double u = tensor_get_f(r, p * nsp + sample);
            if (!(u >= 0 && u < 1)) { free(seq); return sa_err(sa, "random_samples must lie in [0, 1), got %g", u); }
            frac_starts(u, f32, in[i], osz[i], k[i], st[i]);
            for (int64_t q = 0; q < osz[i]; q++)   /* rounding never moves a window past the input */
                st[i][q] = st[i][q] < 0 ? 0 : st[i][q] > in[i] - k[i] ? in[i] - k[i] : st[i][q];
        }
        for (int64_t q = 0; q < opl; q++) {
            int64_t c[3] = {0, 0, 0}, rem = q;
            for (int i = nsp - 1; i >= 0; i--) { c[i] = rem % osz[i]; rem /= osz[i]; }
            int64_t s0[3];
            for (int i = 0; i < nsp; i++) s0[i] = st[i][c[i]];
            int64_t best = 0;
            for (int i = 0; i < nsp; i++) best = best * in[i] + s0[i];
            double mv = -INFINITY;
            int64_t kn = 1;
            for (int i = 0; i < nsp; i++) kn *= k[i];
            for (int64_t e = 0; e < kn; e++) {
                int64_t kc[3], er = e, pos = 0;
                for (int i = nsp - 1; i >= 0; i--) { kc[i] = er % k[i]; er /= k[i]; }
                for (int i = 0; i < nsp; i++) pos = pos * in[i] + s0[i] + kc[i];
                double v = tensor_get_f(x, p * isz + pos);
                if (v > mv || isnan(v)) { mv = v; best = pos; }
            }
            tensor_set_f(o, p * opl + q, mv);
            tensor_store_i(oi, tensor_pos(oi, p * opl + q), best);
        }
    }
    free(seq);
    return 0;
}

/* ---- rows ---- */

static int shape_sample(ShapeArgs *sa, TensorMeta *out, int *nout) {
    *nout = 1;
    switch (SKIND(sa)) {
    case SK_GRID3: return shape_grid3(sa, out);
    case SK_AA_LINEAR: case SK_AA_CUBIC: return shape_aa(sa, out);
    case SK_AA_LINEAR_BWD: case SK_AA_CUBIC_BWD: return shape_aa_bwd(sa, out);
    default: *nout = 2; return shape_frac(sa, out, SKIND(sa) == SK_FRAC2 ? 2 : 3);
    }
}

static int sample_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    int kind = SKIND(sa);
    Tensor *o = res[0], *oi = n > 1 ? res[1] : NULL;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "input"));
    int krc = kind == SK_AA_LINEAR_BWD || kind == SK_AA_CUBIC_BWD ? aa_backward(sa, kind == SK_AA_CUBIC_BWD, x, o)
            : kind == SK_GRID3 ? grid3_kernel(sa, x, ev_tensor(sa_arg(sa, 1, "grid")), o)
            : kind == SK_AA_LINEAR || kind == SK_AA_CUBIC ? aa_kernel(sa, kind == SK_AA_CUBIC, x, o)
            : frac_kernel(sa, kind == SK_FRAC2 ? 2 : 3, x, ev_tensor(sa_arg(sa, 3, "random_samples")), o, oi);
    return krc ? -1 : 0;
}
static int sample_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, sample_fill); }

#define SR(name, kind, flags, doc) {name, flags, op_infer_generic, sample_eval, doc, shape_sample, &(const SampleSpec){kind}}
const OpDef ops_sample_table[] = {
    SR("aten.grid_sampler_3d.default", SK_GRID3, 0, "sample a volume at grid points (trilinear/nearest)"),
    SR("aten._upsample_bilinear2d_aa.default", SK_AA_LINEAR, 0, "antialiased bilinear resize (triangle filter widened by the downscale)"),
    SR("aten._upsample_bicubic2d_aa.default", SK_AA_CUBIC, 0, "antialiased bicubic resize (Keys a = -0.5 filter widened by the downscale)"),
    SR("aten._upsample_bilinear2d_aa_backward.default", SK_AA_LINEAR_BWD, 0, "grad of _upsample_bilinear2d_aa: output gradients spread back over the filter taps"),
    SR("aten._upsample_bicubic2d_aa_backward.default", SK_AA_CUBIC_BWD, 0, "grad of _upsample_bicubic2d_aa: output gradients spread back over the filter taps"),
    SR("aten.fractional_max_pool2d.default", SK_FRAC2, OPF_TUPLE, "(max over pseudo-random windows, index in the plane)"),
    SR("aten.fractional_max_pool3d.default", SK_FRAC3, OPF_TUPLE, "(max over pseudo-random windows, index in the volume)"),
};
const int ops_sample_count = sizeof ops_sample_table / sizeof ops_sample_table[0];
