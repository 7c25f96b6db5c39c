/* ops_pool.c — pooling, unpooling, padding and resampling over the trailing 1-3 spatial
 * dimensions: avg_pool1d/2d/3d (+ backward), max_pool2d/3d_with_indices (+ backward),
 * adaptive avg/max pooling (+ backward), max_unpool2d/3d, reflection/replication pads,
 * upsample nearest(-exact)/linear/bilinear/trilinear/bicubic and grid_sampler_2d. The leading
 * dims (N, C or just C) are "planes"; each kernel loops over planes and output positions the
 * way ATen's CPU kernels do (window clipping, count_include_pad, ceil_mode, NaN-propagating max,
 * area_pixel_compute_source_index for the resamplers). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PK_AVG, PK_MAX, PK_AVG_BWD, PK_MAX_BWD, PK_ADAPT_AVG, PK_ADAPT_MAX, PK_ADAPT_AVG_BWD, PK_UNPOOL,
       PK_REFLECT, PK_REPLICATE, PK_NEAREST, PK_NEAREST_EXACT, PK_LINEAR, PK_CUBIC, PK_GRID,
       PK_MAX_OFFSETS /* prims._low_memory_max_pool_with_offsets */, PK_OFFSETS_TO_IDX };
typedef struct PoolSpec { int kind, nsp; bool vec; } PoolSpec;
#define SPEC(sa) ((const PoolSpec *)(sa)->op->data)

/* The row's spec, except for Inductor's two low-memory max-pool prims, which serve 2-d and 3-d
 * pooling alike: their spatial dims are len(kernel_size) (2 or 3; anything else keeps the row's
 * 2 and fails on the input's rank). tmp holds the adjusted copy. */
static const PoolSpec *spec_of(ShapeArgs *sa, PoolSpec *tmp) {
    const PoolSpec *sp = SPEC(sa);
    if (sp->kind != PK_MAX_OFFSETS && sp->kind != PK_OFFSETS_TO_IDX) return sp;
    int n = arg_list_len(sa_arg(sa, 1, "kernel_size"));
    if (n != 2 && n != 3) return sp;
    *tmp = *sp;
    tmp->nsp = n;
    return tmp;
}

/* ---- parameters ---- */

typedef struct Pool {
    int nsp;                        /* spatial dims */
    int64_t k[3], s[3], p[3], d[3]; /* kernel, stride, padding, dilation */
    bool ceil, include_pad;
    int64_t divisor;                /* 0: none */
    int64_t in[3], out[3];
    double scale[3];                /* resamplers: scales_* (0 = none) */
    bool align;
    int64_t pad_lo[3], pad_hi[3];
} Pool;

/* an int list argument of nsp entries (a single entry repeats; empty gives dflt) */
static int list_arg(ShapeArgs *sa, int pos, const char *name, int nsp, const int64_t *dflt, int64_t *out) {
    ArgRef a = sa_arg(sa, pos, name);
    int64_t v[8];
    int n = 0;
    if (arg_present(a) && sa_const_int_list(sa, a, name, v, &n, 8)) return -1;
    if (n == 0) { for (int i = 0; i < nsp; i++) out[i] = dflt ? dflt[i] : 0; return 0; }
    if (n != 1 && n != nsp) return sa_err(sa, "%s must be a single int or %d ints, got %d", name, nsp, n);
    for (int i = 0; i < nsp; i++) out[i] = v[n == 1 ? 0 : i];
    return 0;
}

static int64_t pooling_out(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t dil, bool ceil) {
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? s - 1 : 0);
    int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil && (out - 1) * s >= in + pad) out--;
    return out;
}

static int spatial_in(ShapeArgs *sa, const TensorMeta *x, int nsp, int64_t *in) {
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return sa_err(sa, "expected a %dD or %dD input, got %dD", nsp + 1, nsp + 2, x->ndim);
    for (int i = 0; i < nsp; i++)
        if (!sym_is_int(x->size[x->ndim - nsp + i], &in[i])) return sa_err(sa, "symbolic spatial sizes are not supported");
    return 0;
}

/* The pooled output: x's leading dims, osz spatially, in x's suggested memory format (ATen's
 * pooling kernels keep channels-last inputs channels-last). */
static void out_meta(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, int nsp, const int64_t *osz, DType dt) {
    meta_alloc(sa, out, dt, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out->size[i] = i < x->ndim - nsp ? x->size[i] : sym_int(sa->sym, osz[i - (x->ndim - nsp)]);
    meta_suggested_strides(sa, out, x);
}

/* read the pool parameters of the op from its arguments (x: the pooled input) */
static int pool_params(ShapeArgs *sa, const PoolSpec *sp, const TensorMeta *x, const TensorMeta *xin, Pool *P) {
    memset(P, 0, sizeof *P);
    int nsp = P->nsp = sp->nsp;
    static const int64_t ones[3] = {1, 1, 1};
    if (spatial_in(sa, xin, nsp, P->in)) return -1;
    for (int i = 0; i < 3; i++) P->d[i] = 1;
    switch (sp->kind) {
    case PK_AVG: case PK_AVG_BWD: {
        int b = sp->kind == PK_AVG_BWD;
        if (list_arg(sa, 1 + b, "kernel_size", nsp, NULL, P->k) || list_arg(sa, 2 + b, "stride", nsp, P->k, P->s) ||
            list_arg(sa, 3 + b, "padding", nsp, NULL, P->p)) return -1;
        P->ceil = arg_bool(sa_arg(sa, 4 + b, "ceil_mode"), false);
        P->include_pad = arg_bool(sa_arg(sa, 5 + b, "count_include_pad"), true);
        ArgRef dv = sa_arg(sa, 6 + b, "divisor_override");
        if (arg_present(dv) && sa_const_int(sa, dv, "divisor_override", &P->divisor)) return -1;
        break;
    }
    case PK_MAX: case PK_MAX_BWD: case PK_MAX_OFFSETS: {
        int b = sp->kind == PK_MAX_BWD;
        if (list_arg(sa, 1 + b, "kernel_size", nsp, NULL, P->k) || list_arg(sa, 2 + b, "stride", nsp, P->k, P->s) ||
            list_arg(sa, 3 + b, "padding", nsp, NULL, P->p) || list_arg(sa, 4 + b, "dilation", nsp, ones, P->d)) return -1;
        P->ceil = arg_bool(sa_arg(sa, 5 + b, "ceil_mode"), false);
        break;
    }
    default: break;
    }
    if (sp->kind <= PK_MAX_BWD || sp->kind == PK_MAX_OFFSETS) {
        for (int i = 0; i < nsp; i++) {
            if (P->k[i] <= 0 || P->s[i] <= 0 || P->d[i] <= 0) return sa_err(sa, "kernel_size, stride and dilation must be positive");
            if (P->p[i] * 2 > P->k[i]) return sa_err(sa, "pad should be at most half of effective kernel size");
            P->out[i] = pooling_out(P->in[i], P->k[i], P->p[i], P->s[i], P->d[i], P->ceil);
            if (P->out[i] <= 0) return sa_err(sa, "output size is too small");
        }
    }
    (void)x;
    return 0;
}

/* upsample output size: output_size given, or in * scale_factor (vec overloads) */
static int resample_params(ShapeArgs *sa, const PoolSpec *sp, const TensorMeta *x, Pool *P) {
    memset(P, 0, sizeof *P);
    int nsp = P->nsp = sp->nsp;
    if (spatial_in(sa, x, nsp, P->in)) return -1;
    bool linear = sp->kind == PK_LINEAR || sp->kind == PK_CUBIC;
    ArgRef os = sa_arg(sa, 1, "output_size");
    int n = 0;
    int64_t o[8];
    if (arg_present(os) && sa_const_int_list(sa, os, "output_size", o, &n, 8)) return -1;
    if (linear) P->align = arg_bool(sa_arg(sa, 2, "align_corners"), false);
    if (sp->vec) {
        ArgRef sf = sa_arg(sa, linear ? 3 : 2, "scale_factors");
        if (n == 0) {
            if (!arg_present(sf) || arg_list_len(sf) != nsp) return sa_err(sa, "must specify exactly one of output_size and scale_factors");
            for (int i = 0; i < nsp; i++) {
                double f; DType t;
                if (sa_scalar(sa, arg_item(sf, i), "scale_factors", &f, &t)) return -1;
                P->scale[i] = f;
                o[i] = (int64_t)floor((double)P->in[i] * f);
            }
            n = nsp;
        }
    } else {
        for (int i = 0; i < nsp; i++) {
            ArgRef a = sa_arg(sa, (linear ? 3 : 2) + i, nsp == 1 ? "scales" : i == nsp - 1 ? "scales_w" : i == nsp - 2 ? "scales_h" : "scales_d");
            double f = 0; DType t;
            if (arg_present(a) && sa_scalar(sa, a, "scales", &f, &t)) return -1;
            P->scale[i] = f;
        }
    }
    if (n != nsp) return sa_err(sa, "output_size must have %d entries, got %d", nsp, n);
    for (int i = 0; i < nsp; i++) P->out[i] = o[i];
    return 0;
}

static int pad_params(ShapeArgs *sa, const PoolSpec *sp, const TensorMeta *x, Pool *P) {
    memset(P, 0, sizeof *P);
    int nsp = P->nsp = sp->nsp;
    if (spatial_in(sa, x, nsp, P->in)) return -1;
    int64_t pad[6];
    int n;
    if (sa_const_int_list(sa, sa_arg(sa, 1, "padding"), "padding", pad, &n, 6)) return -1;
    if (n != 2 * nsp) return sa_err(sa, "padding must have %d entries, got %d", 2 * nsp, n);
    for (int i = 0; i < nsp; i++) {          /* padding lists the last dim first: (left, right, top, bottom, ...) */
        P->pad_lo[nsp - 1 - i] = pad[2 * i];
        P->pad_hi[nsp - 1 - i] = pad[2 * i + 1];
    }
    for (int i = 0; i < nsp; i++) {
        P->out[i] = P->in[i] + P->pad_lo[i] + P->pad_hi[i];
        if (sp->kind == PK_REFLECT && (P->pad_lo[i] >= P->in[i] || P->pad_hi[i] >= P->in[i]))
            return sa_err(sa, "padding size should be less than the corresponding input dimension");
        if (P->out[i] < 1) return sa_err(sa, "output size is too small");
    }
    return 0;
}

static int adaptive_params(ShapeArgs *sa, const PoolSpec *sp, const TensorMeta *x, Pool *P) {
    memset(P, 0, sizeof *P);
    P->nsp = sp->nsp;
    if (spatial_in(sa, x, sp->nsp, P->in)) return -1;
    return list_arg(sa, 1, "output_size", sp->nsp, NULL, P->out);
}

/* _adaptive_avg_pool{2,3}d_backward(grad_output, self): the schema has no output_size, the
 * pooled sizes are grad_output's spatial sizes. Example: grad [2, 6, 3, 4] over self
 * [2, 6, 7, 9] pools 7 x 9 onto 3 x 4. */
static int adaptive_bwd_params(ShapeArgs *sa, const PoolSpec *sp, const TensorMeta *x, const TensorMeta *g, Pool *P) {
    memset(P, 0, sizeof *P);
    P->nsp = sp->nsp;
    if (spatial_in(sa, x, sp->nsp, P->in) || spatial_in(sa, g, sp->nsp, P->out)) return -1;
    if (g->ndim != x->ndim) return sa_err(sa, "grad_output and self must have the same number of dimensions");
    return 0;
}

/* ---- shapes ---- */

static int shape_pool(ShapeArgs *sa, TensorMeta *out, int *nout) {
    PoolSpec tmp;
    const PoolSpec *sp = spec_of(sa, &tmp);
    TensorMeta *x, *y;
    Pool P;
    *nout = 1;
    switch (sp->kind) {
    case PK_AVG_BWD: case PK_MAX_BWD: case PK_ADAPT_AVG_BWD:     /* grad_input like self */
        if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &y) || sa_tensor(sa, sa_arg(sa, 1, "self"), "self", &x)) return -1;
        if (sp->kind != PK_ADAPT_AVG_BWD && pool_params(sa, sp, y, x, &P)) return -1;
        meta_like(sa, out, x, y->dtype);
        meta_suggested_strides(sa, out, x);       /* in self's suggested memory format */
        return 0;
    case PK_UNPOOL: {
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
        int64_t o[3];
        if (list_arg(sa, 2, "output_size", sp->nsp, NULL, o)) return -1;
        if (x->ndim != sp->nsp + 1 && x->ndim != sp->nsp + 2) return sa_err(sa, "expected a %dD or %dD input", sp->nsp + 1, sp->nsp + 2);
        out_meta(sa, out, x, sp->nsp, o, x->dtype);
        return 0;
    }
    case PK_OFFSETS_TO_IDX:
        if (sa_tensor(sa, sa_arg(sa, 0, "offsets"), "offsets", &x)) return -1;
        meta_like(sa, out, x, DT_I64);          /* empty_like(offsets, int64): offsets' strides */
        return 0;
    case PK_GRID: {
        TensorMeta *g;
        if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &x) || sa_tensor(sa, sa_arg(sa, 1, "grid"), "grid", &g)) return -1;
        if (x->ndim != 4 || g->ndim != 4) return sa_err(sa, "grid_sampler_2d needs a 4-D input and grid");
        meta_alloc(sa, out, x->dtype, 4, x->device);
        out->size[0] = x->size[0]; out->size[1] = x->size[1]; out->size[2] = g->size[1]; out->size[3] = g->size[2];
        meta_contiguous_strides(sa, out);
        return 0;
    }
    default: break;
    }
    if (sa_tensor(sa, sa_arg(sa, 0, sp->kind >= PK_NEAREST ? "input" : "self"), "self", &x)) return -1;
    int rc = sp->kind == PK_REFLECT || sp->kind == PK_REPLICATE ? pad_params(sa, sp, x, &P)
           : sp->kind == PK_MAX_OFFSETS ? pool_params(sa, sp, x, x, &P)
           : sp->kind >= PK_NEAREST ? resample_params(sa, sp, x, &P)
           : sp->kind == PK_ADAPT_AVG || sp->kind == PK_ADAPT_MAX ? adaptive_params(sa, sp, x, &P)
           : pool_params(sa, sp, x, x, &P);
    if (rc) return -1;
    out_meta(sa, &out[0], x, sp->nsp, P.out, x->dtype);
    if (sp->kind == PK_MAX || sp->kind == PK_ADAPT_MAX) { out_meta(sa, &out[1], x, sp->nsp, P.out, DT_I64); *nout = 2; }
    if (sp->kind == PK_MAX_OFFSETS) { out_meta(sa, &out[1], x, sp->nsp, P.out, DT_I8); *nout = 2; }
    return 0;
}

/* ---- kernels ---- */

typedef struct Planes { int64_t n, isz, osz; } Planes;

static double ld(const Tensor *t, int64_t lin) { return tensor_get_f(t, lin); }

/* linear spatial index of (c0, c1, c2) over sizes sz (nsp dims) */
static int64_t lin3(const int64_t *c, const int64_t *sz, int nsp) {
    int64_t r = 0;
    for (int i = 0; i < nsp; i++) r = r * sz[i] + c[i];
    return r;
}
static void coords(int64_t lin, const int64_t *sz, int nsp, int64_t *c) {
    for (int i = nsp - 1; i >= 0; i--) { c[i] = lin % sz[i]; lin /= sz[i]; }
}

/* area_pixel_compute_scale / source_index (ATen UpSample.h) */
static double area_scale(int64_t in, int64_t out, bool align, double scale) {
    if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
    return scale > 0 ? 1.0 / scale : (double)in / (double)out;
}
static double source_index(double scale, int64_t dst, bool align, bool cubic) {
    if (align) return scale * (double)dst;
    double s = scale * ((double)dst + 0.5) - 0.5;
    return !cubic && s < 0 ? 0 : s;
}
static double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
static double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

int resample_taps(bool cubic, int64_t in, int64_t out, bool align, double scale, int64_t dst, int64_t *idx, double *w) {
    double real = source_index(area_scale(in, out, align, scale), dst, align, cubic);
    if (!cubic) {   /* UpSampleKernel's compute_source_index_and_lambda */
        idx[0] = (int64_t)real;
        if (idx[0] > in - 1) idx[0] = in - 1;
        idx[1] = idx[0] + (idx[0] < in - 1 ? 1 : 0);
        w[1] = real - (double)idx[0];
        if (w[1] < 0) w[1] = 0;
        w[0] = 1 - w[1];
        return 2;
    }
    double f = floor(real), t = real - f, A = -0.75;   /* get_cubic_upsample_coefficients, bounded reads */
    w[0] = cubic2(t + 1, A); w[1] = cubic1(t, A); w[2] = cubic1(1 - t, A); w[3] = cubic2(2 - t, A);
    for (int a = 0; a < 4; a++) {
        int64_t c = (int64_t)f - 1 + a;
        idx[a] = c < 0 ? 0 : c > in - 1 ? in - 1 : c;
    }
    return 4;
}

static void pool_kernel(const PoolSpec *sp, const Pool *P, const Tensor *x, Tensor *o, Tensor *oi, const Planes *pl) {
    int nsp = P->nsp;
    for (int64_t p = 0; p < pl->n; p++) {
        for (int64_t q = 0; q < pl->osz; q++) {
            int64_t oc[3] = {0}, lo[3], hi[3];
            coords(q, P->out, nsp, oc);
            bool mx = sp->kind == PK_MAX || sp->kind == PK_ADAPT_MAX || sp->kind == PK_MAX_OFFSETS;
            double acc = mx ? -INFINITY : 0;
            int64_t argk = 0;
            int64_t arg = -1, cnt = 1, pool_size = 1;
            for (int i = 0; i < nsp; i++) {
                if (sp->kind == PK_ADAPT_AVG || sp->kind == PK_ADAPT_MAX) {
                    lo[i] = (int64_t)floor((double)(oc[i] * P->in[i]) / (double)P->out[i]);
                    hi[i] = (int64_t)ceil((double)((oc[i] + 1) * P->in[i]) / (double)P->out[i]);
                } else if (sp->kind == PK_AVG) {
                    lo[i] = oc[i] * P->s[i] - P->p[i];
                    hi[i] = lo[i] + P->k[i];
                    if (hi[i] > P->in[i] + P->p[i]) hi[i] = P->in[i] + P->p[i];
                    pool_size *= hi[i] - lo[i];
                    if (lo[i] < 0) lo[i] = 0;
                    if (hi[i] > P->in[i]) hi[i] = P->in[i];
                } else {
                    lo[i] = oc[i] * P->s[i] - P->p[i];
                    hi[i] = lo[i] + (P->k[i] - 1) * P->d[i] + 1;
                }
            }
            if (sp->kind == PK_AVG) {
                cnt = 1;
                for (int i = 0; i < nsp; i++) cnt *= hi[i] - lo[i];
            }
            int64_t c[3] = {0};
            int64_t step[3] = {1, 1, 1};
            if (sp->kind == PK_MAX || sp->kind == PK_MAX_OFFSETS) for (int i = 0; i < nsp; i++) step[i] = P->d[i];
            for (c[0] = lo[0]; c[0] < hi[0]; c[0] += step[0])
                for (c[1] = nsp > 1 ? lo[1] : 0; c[1] < (nsp > 1 ? hi[1] : 1); c[1] += step[1])
                    for (c[2] = nsp > 2 ? lo[2] : 0; c[2] < (nsp > 2 ? hi[2] : 1); c[2] += step[2]) {
                        bool inside = true;
                        for (int i = 0; i < nsp; i++) inside &= c[i] >= 0 && c[i] < P->in[i];
                        if (!inside) continue;
                        int64_t li = lin3(c, P->in, nsp);
                        double v = ld(x, p * pl->isz + li);
                        if (mx) {
                            if (arg < 0 || v > acc || isnan(v)) {
                                if (!isnan(acc) || arg < 0) {
                                    acc = v; arg = li; argk = 0;
                                    for (int i = 0; i < nsp; i++) argk = argk * P->k[i] + (c[i] - lo[i]) / step[i];
                                }
                            }
                        } else acc += v;
                    }
            int64_t oq = p * pl->osz + q;
            if (sp->kind == PK_AVG) {
                int64_t div = P->divisor ? P->divisor : P->include_pad ? pool_size : cnt;
                tensor_set_f(o, oq, acc / (double)div);
            } else if (sp->kind == PK_ADAPT_AVG) {
                int64_t n = 1;
                for (int i = 0; i < nsp; i++) n *= hi[i] - lo[i];
                tensor_set_f(o, oq, acc / (double)n);
            } else {
                tensor_set_f(o, oq, acc);
                tensor_store_i(oi, tensor_pos(oi, oq), sp->kind == PK_MAX_OFFSETS ? argk : arg);
            }
        }
    }
}

/* gradients: avg / adaptive avg distribute, max scatters to the argmax. Returns false at the
 * first argmax index outside its input plane (the index in *bad, its position in 'indices' in
 * *bad_at): in a backward graph the indices are a graph input, and random (all-zero) offsets of a
 * padded window give negative ones, e.g. -17 for a 3x3 window at (-1, -1) of a 16-wide plane. */
static bool pool_backward(const PoolSpec *sp, const Pool *P, const Tensor *g, const Tensor *idx, Tensor *o, const Planes *pl,
                          int64_t *bad, int64_t *bad_at) {
    int nsp = P->nsp;
    int64_t total = pl->n * pl->isz;
    for (int64_t e = 0; e < total; e++) tensor_set_f(o, e, 0);
    for (int64_t p = 0; p < pl->n; p++)
        for (int64_t q = 0; q < pl->osz; q++) {
            double gv = ld(g, p * pl->osz + q);
            if (sp->kind == PK_MAX_BWD) {
                int64_t li = tensor_load_i(idx, tensor_pos(idx, p * pl->osz + q));
                if (li < 0 || li >= pl->isz) { *bad = li; *bad_at = p * pl->osz + q; return false; }
                int64_t at = p * pl->isz + li;
                tensor_set_f(o, at, ld(o, at) + gv);
                continue;
            }
            int64_t oc[3] = {0}, lo[3] = {0}, hi[3] = {1, 1, 1}, pool_size = 1, cnt = 1;
            coords(q, P->out, nsp, oc);
            for (int i = 0; i < nsp; i++) {
                if (sp->kind == PK_ADAPT_AVG_BWD) {
                    lo[i] = (int64_t)floor((double)(oc[i] * P->in[i]) / (double)P->out[i]);
                    hi[i] = (int64_t)ceil((double)((oc[i] + 1) * P->in[i]) / (double)P->out[i]);
                } else {
                    lo[i] = oc[i] * P->s[i] - P->p[i];
                    hi[i] = lo[i] + P->k[i];
                    if (hi[i] > P->in[i] + P->p[i]) hi[i] = P->in[i] + P->p[i];
                    pool_size *= hi[i] - lo[i];
                    if (lo[i] < 0) lo[i] = 0;
                    if (hi[i] > P->in[i]) hi[i] = P->in[i];
                }
            }
            for (int i = 0; i < nsp; i++) cnt *= hi[i] - lo[i];
            int64_t div = sp->kind == PK_ADAPT_AVG_BWD ? cnt : P->divisor ? P->divisor : P->include_pad ? pool_size : cnt;
            int64_t c[3];
            for (c[0] = lo[0]; c[0] < hi[0]; c[0]++)
                for (c[1] = nsp > 1 ? lo[1] : 0; c[1] < (nsp > 1 ? hi[1] : 1); c[1]++)
                    for (c[2] = nsp > 2 ? lo[2] : 0; c[2] < (nsp > 2 ? hi[2] : 1); c[2]++) {
                        int64_t at = p * pl->isz + lin3(c, P->in, nsp);
                        tensor_set_f(o, at, ld(o, at) + gv / (double)div);
                    }
        }
    return true;
}

static void pad_kernel(const PoolSpec *sp, const Pool *P, const Tensor *x, Tensor *o, const Planes *pl) {
    int nsp = P->nsp;
    for (int64_t p = 0; p < pl->n; p++)
        for (int64_t q = 0; q < pl->osz; q++) {
            int64_t c[3] = {0};
            coords(q, P->out, nsp, c);
            for (int i = 0; i < nsp; i++) {
                int64_t v = c[i] - P->pad_lo[i], n = P->in[i];
                if (sp->kind == PK_REFLECT) { if (v < 0) v = -v; if (v >= n) v = 2 * (n - 1) - v; }
                else { if (v < 0) v = 0; if (v >= n) v = n - 1; }
                c[i] = v;
            }
            tensor_set_f(o, p * pl->osz + q, ld(x, p * pl->isz + lin3(c, P->in, nsp)));
        }
}

static void resample_kernel(const PoolSpec *sp, const Pool *P, const Tensor *x, Tensor *o, const Planes *pl) {
    int nsp = P->nsp;
    for (int64_t p = 0; p < pl->n; p++)
        for (int64_t q = 0; q < pl->osz; q++) {
            int64_t oc[3] = {0};
            coords(q, P->out, nsp, oc);
            double v = 0;
            if (sp->kind == PK_NEAREST || sp->kind == PK_NEAREST_EXACT) {
                int64_t c[3];
                for (int i = 0; i < nsp; i++) {
                    double s = P->scale[i] > 0 ? 1.0 / P->scale[i] : (double)P->in[i] / (double)P->out[i];
                    float sf = (float)s;     /* ATen computes the nearest index in float */
                    int64_t src = sp->kind == PK_NEAREST ? (int64_t)floorf((float)oc[i] * sf) : (int64_t)floorf(((float)oc[i] + 0.5f) * sf);
                    c[i] = src < P->in[i] - 1 ? src : P->in[i] - 1;
                }
                v = ld(x, p * pl->isz + lin3(c, P->in, nsp));
            } else {    /* linear (2 taps per dim) or bicubic (4): the product of the dims' weights */
                int64_t ti[3][4], c[3] = {0}, nt = 1;
                double tw[3][4];
                int k = 0;
                for (int i = 0; i < nsp; i++) k = resample_taps(sp->kind == PK_CUBIC, P->in[i], P->out[i], P->align, P->scale[i], oc[i], ti[i], tw[i]);
                for (int i = 0; i < nsp; i++) nt *= k;
                for (int64_t m = 0; m < nt; m++) {
                    double w = 1;
                    for (int i = nsp - 1, r = (int)m; i >= 0; i--, r /= k) { c[i] = ti[i][r % k]; w *= tw[i][r % k]; }
                    v += w * ld(x, p * pl->isz + lin3(c, P->in, nsp));
                }
            }
            tensor_set_f(o, p * pl->osz + q, v);
        }
}

/* grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
 * bilinear (0) / nearest (1) / bicubic (2); zeros (0) / border (1) / reflection (2) */
static double grid_unnormalize(double c, int64_t size, bool align) {
    return align ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * (double)size - 1) / 2;
}
static double reflect(double c, int64_t twice_lo, int64_t twice_hi) {
    if (twice_lo == twice_hi) return 0;
    double mn = (double)twice_lo / 2, span = (double)(twice_hi - twice_lo) / 2;
    c = fabs(c - mn);
    double extra = fmod(c, span);
    int64_t flips = (int64_t)floor(c / span);
    return flips % 2 == 0 ? extra + mn : span - extra + mn;
}
/* compute_coordinates: border clamps, reflection reflects then clamps (c unnormalized) */
double grid_pad(double c, int64_t size, int pad, bool align) {
    if (pad == 1) c = c < 0 ? 0 : c > (double)(size - 1) ? (double)(size - 1) : c;
    else if (pad == 2) {
        c = align ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
        c = c < 0 ? 0 : c > (double)(size - 1) ? (double)(size - 1) : c;
    }
    return c;
}
double grid_coord(double c, int64_t size, int pad, bool align) { return grid_pad(grid_unnormalize(c, size, align), size, pad, align); }
static double grid_at(const Tensor *x, int64_t n, int64_t ch, int64_t y, int64_t xx, int pad) {
    int64_t H = x->size[2], W = x->size[3];
    if (pad != 0) { if (y < 0) y = 0; if (y >= H) y = H - 1; if (xx < 0) xx = 0; if (xx >= W) xx = W - 1; }
    if (y < 0 || y >= H || xx < 0 || xx >= W) return 0;
    return ld(x, ((n * x->size[1] + ch) * H + y) * W + xx);
}
/* o[n, c, i, j] = input x sampled at grid g[n, i, j] = (x, y) in [-1, 1], modes as above (the
 * cuDNN grid sampler, core/ops/ops_grid_backward.c, is mode 0, pad 0, align true) */
void grid_sample_2d(const Tensor *x, const Tensor *g, Tensor *o, int mode, int pad, bool align) {
    int64_t N = x->size[0], C = x->size[1], H = x->size[2], W = x->size[3], OH = g->size[1], OW = g->size[2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < OH; i++)
            for (int64_t j = 0; j < OW; j++) {
                int64_t gb = ((n * OH + i) * OW + j) * 2;
                double gx = ld(g, gb), gy = ld(g, gb + 1);
                for (int64_t ch = 0; ch < C; ch++) {
                    double v = 0;
                    if (mode == 2) {
                        double ix = grid_unnormalize(gx, W, align), iy = grid_unnormalize(gy, H, align);
                        double fx = floor(ix), fy = floor(iy), tx = ix - fx, ty = iy - fy, A = -0.75;
                        double wx[4] = {cubic2(tx + 1, A), cubic1(tx, A), cubic1(1 - tx, A), cubic2(2 - tx, A)};
                        double wy[4] = {cubic2(ty + 1, A), cubic1(ty, A), cubic1(1 - ty, A), cubic2(2 - ty, A)};
                        for (int a = 0; a < 4; a++)
                            for (int b2 = 0; b2 < 4; b2++) {
                                double yy = grid_pad(fy - 1 + a, H, (int)pad, align), xx2 = grid_pad(fx - 1 + b2, W, (int)pad, align);
                                v += wy[a] * wx[b2] * grid_at(x, n, ch, (int64_t)floor(yy), (int64_t)floor(xx2), 0);
                            }
                    } else {
                        double ix = grid_coord(gx, W, (int)pad, align), iy = grid_coord(gy, H, (int)pad, align);
                        if (mode == 1) v = grid_at(x, n, ch, (int64_t)nearbyint(iy), (int64_t)nearbyint(ix), 0);
                        else {
                            double x0 = floor(ix), y0 = floor(iy);
                            double wx1 = ix - x0, wy1 = iy - y0;
                            v = grid_at(x, n, ch, (int64_t)y0, (int64_t)x0, 0) * (1 - wx1) * (1 - wy1) +
                                grid_at(x, n, ch, (int64_t)y0, (int64_t)x0 + 1, 0) * wx1 * (1 - wy1) +
                                grid_at(x, n, ch, (int64_t)y0 + 1, (int64_t)x0, 0) * (1 - wx1) * wy1 +
                                grid_at(x, n, ch, (int64_t)y0 + 1, (int64_t)x0 + 1, 0) * wx1 * wy1;
                        }
                    }
                    tensor_set_f(o, ((n * C + ch) * OH + i) * OW + j, v);
                }
            }
}
static int grid_kernel(ShapeArgs *sa, const Tensor *x, const Tensor *g, Tensor *o) {
    int64_t mode, pad;
    if (sa_const_int(sa, sa_arg(sa, 2, "interpolation_mode"), "interpolation_mode", &mode) ||
        sa_const_int(sa, sa_arg(sa, 3, "padding_mode"), "padding_mode", &pad)) return -1;
    bool align = arg_bool(sa_arg(sa, 4, "align_corners"), false);
    if (mode < 0 || mode > 2 || pad < 0 || pad > 2) return sa_err(sa, "invalid interpolation or padding mode");
    grid_sample_2d(x, g, o, (int)mode, (int)pad, align);
    return 0;
}

static int pool_body(ShapeArgs *sa, IValue *out) {
    PoolSpec tmp;
    const PoolSpec *sp = spec_of(sa, &tmp);
    TensorMeta m[OP_MAX_OUTS];
    int nm, rc = -1;
    Tensor *o = NULL, *oi = NULL;
    if (ev_shape(sa, m, &nm)) goto done;
    o = ev_new(sa, &m[0]);
    if (!o || (nm > 1 && !(oi = ev_new(sa, &m[1])))) goto done;
    Pool P;
    Planes pl;
    bool bwd = sp->kind == PK_AVG_BWD || sp->kind == PK_MAX_BWD || sp->kind == PK_ADAPT_AVG_BWD;
    Tensor *x = ev_tensor(sa_arg(sa, bwd ? 1 : 0, "self")), *g = bwd ? ev_tensor(sa_arg(sa, 0, "grad_output")) : NULL;
    TensorMeta *xm = NULL, *gm = NULL;
    if (sp->kind != PK_OFFSETS_TO_IDX && sa_tensor(sa, sa_arg(sa, bwd ? 1 : 0, "self"), "self", &xm)) goto done;
    if (bwd && sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", &gm)) goto done;
    if (sp->kind == PK_OFFSETS_TO_IDX) {
        /* offsets_to_indices(offsets, kernel_size, input_size, stride, padding, dilation) */
        int ns = sp->nsp;
        int64_t K[3], I[3], S[3], Pd[3], D[3];
        static const int64_t ones[3] = {1, 1, 1};
        if (list_arg(sa, 1, "kernel_size", ns, NULL, K) || list_arg(sa, 2, "input_size", ns, NULL, I) ||
            list_arg(sa, 3, "stride", ns, K, S) || list_arg(sa, 4, "padding", ns, NULL, Pd) || list_arg(sa, 5, "dilation", ns, ones, D)) goto done;
        Tensor *off = ev_tensor(sa_arg(sa, 0, "offsets"));
        int64_t kn = 1;
        for (int i = 0; i < ns; i++) {
            if (K[i] < 1 || I[i] < 1 || S[i] < 1 || D[i] < 1) { sa_err(sa, "kernel_size, input_size, stride and dilation must be positive"); goto done; }
            kn *= K[i];
        }
        if (!off || off->ndim < ns) { sa_err(sa, "offsets must have at least %d dimensions", ns); goto done; }
        int64_t O[3], osz = 1;
        for (int i = 0; i < ns; i++) { O[i] = off->size[off->ndim - ns + i]; osz *= O[i]; }
        for (int64_t e = 0; e < tensor_numel(off); e++) {
            int64_t oc[3], kc[3], ic[3], r = tensor_get_i(off, e);
            if (r < 0 || r >= kn) { sa_err(sa, "offset %lld is outside the %lld kernel positions", (long long)r, (long long)kn); goto done; }
            coords(e % (osz ? osz : 1), O, ns, oc);
            coords(r, K, ns, kc);
            for (int i = 0; i < ns; i++) ic[i] = oc[i] * S[i] - Pd[i] + kc[i] * D[i];
            tensor_store_i(o, tensor_pos(o, e), lin3(ic, I, ns));
        }
    } else if (sp->kind == PK_GRID) {
        Tensor *gr = ev_tensor(sa_arg(sa, 1, "grid"));
        if (grid_kernel(sa, x, gr, o)) goto done;
    } else if (sp->kind == PK_UNPOOL) {
        Tensor *idx = ev_tensor(sa_arg(sa, 1, "indices"));
        if (!idx) { sa_err(sa, "argument 'indices' must be a tensor"); goto done; }
        int64_t isz = 1, osz = 1, ns = sp->nsp, tot = tensor_numel(o);
        for (int i = 0; i < ns; i++) { isz *= x->size[x->ndim - ns + i]; osz *= o->size[o->ndim - ns + i]; }
        for (int64_t e = 0; e < tot; e++) tensor_set_f(o, e, 0);
        int64_t np = isz ? tensor_numel(x) / isz : 0;
        for (int64_t p = 0; p < np; p++)
            for (int64_t q = 0; q < isz; q++) {
                int64_t at = tensor_get_i(idx, p * isz + q);
                if (at < 0 || at >= osz) { sa_err(sa, "max_unpool: found an invalid max index %lld (output volumes are of size %lld)", (long long)at, (long long)osz); goto done; }
                tensor_set_f(o, p * osz + at, ld(x, p * isz + q));
            }
    } else {
        int krc = sp->kind == PK_REFLECT || sp->kind == PK_REPLICATE ? pad_params(sa, sp, xm, &P)
                : sp->kind == PK_MAX_OFFSETS ? pool_params(sa, sp, xm, xm, &P)
                : sp->kind >= PK_NEAREST ? resample_params(sa, sp, xm, &P)
                : sp->kind == PK_ADAPT_AVG || sp->kind == PK_ADAPT_MAX ? adaptive_params(sa, sp, xm, &P)
                : sp->kind == PK_ADAPT_AVG_BWD ? adaptive_bwd_params(sa, sp, xm, gm, &P)
                : pool_params(sa, sp, bwd ? gm : xm, xm, &P);
        if (krc) goto done;
        pl.isz = pl.osz = 1;
        for (int i = 0; i < sp->nsp; i++) { pl.isz *= P.in[i]; pl.osz *= P.out[i]; }
        pl.n = pl.isz ? tensor_numel(x) / pl.isz : 0;
        if (bwd) {
            int64_t bad = 0, bad_at = 0;
            if (!pool_backward(sp, &P, g, sp->kind == PK_MAX_BWD ? ev_tensor(sa_arg(sa, 7, "indices")) : NULL, o, &pl, &bad, &bad_at)) {
                sa_err(sa, "max_pool backward: found an invalid max index %lld at position %lld of 'indices' (input planes are of size %lld)%s",
                       (long long)bad, (long long)bad_at, (long long)pl.isz,
                       bad < 0 ? "; random integer inputs are 0, which a padded window turns into negative indices: load the backward with its forward's outputs (a log) or give recorded inputs" : "");
                goto done;
            }
        } else if (sp->kind == PK_REFLECT || sp->kind == PK_REPLICATE) pad_kernel(sp, &P, x, o, &pl);
        else if (sp->kind >= PK_NEAREST && sp->kind != PK_MAX_OFFSETS) resample_kernel(sp, &P, x, o, &pl);
        else pool_kernel(sp, &P, x, o, oi, &pl);
    }
    if (oi) ev_out_tuple(out, (Tensor *[]){o, oi}, 2);
    else ev_out_tensor(out, o);
    o = oi = NULL;
    rc = 0;
done:
    if (o) tensor_unref(o);
    if (oi) tensor_unref(oi);
    return rc;
}
static int pool_eval(const OpCall *c, IValue *out) { return ev_call(c, out, pool_body); }

#define PL(name, kind, nsp, vec, flags, doc) {name, flags, op_infer_generic, pool_eval, doc, shape_pool, &(const PoolSpec){kind, nsp, vec}}
const OpDef ops_pool_table[] = {
    PL("aten.avg_pool1d.default", PK_AVG, 1, false, 0, "average over sliding windows (1 spatial dim)"),
    PL("aten.avg_pool2d.default", PK_AVG, 2, false, 0, "average over sliding windows (2 spatial dims)"),
    PL("aten.avg_pool3d.default", PK_AVG, 3, false, 0, "average over sliding windows (3 spatial dims)"),
    PL("aten.avg_pool2d_backward.default", PK_AVG_BWD, 2, false, 0, "grad of avg_pool2d"),
    PL("aten.avg_pool3d_backward.default", PK_AVG_BWD, 3, false, 0, "grad of avg_pool3d"),
    PL("aten.max_pool2d_with_indices.default", PK_MAX, 2, false, OPF_TUPLE, "(max over windows, flat index in the plane)"),
    PL("aten.max_pool3d_with_indices.default", PK_MAX, 3, false, OPF_TUPLE, "(max over windows, flat index in the volume)"),
    PL("aten.max_pool2d_with_indices_backward.default", PK_MAX_BWD, 2, false, 0, "grad of max_pool2d: scattered to the argmax"),
    PL("aten.max_pool3d_with_indices_backward.default", PK_MAX_BWD, 3, false, 0, "grad of max_pool3d: scattered to the argmax"),
    PL("aten.adaptive_avg_pool1d.default", PK_ADAPT_AVG, 1, false, 0, "average over adaptive windows"),
    PL("aten._adaptive_avg_pool2d.default", PK_ADAPT_AVG, 2, false, 0, "average over adaptive windows"),
    PL("aten._adaptive_avg_pool3d.default", PK_ADAPT_AVG, 3, false, 0, "average over adaptive windows"),
    PL("aten._adaptive_avg_pool2d_backward.default", PK_ADAPT_AVG_BWD, 2, false, 0, "grad of adaptive avg pool 2d"),
    PL("aten._adaptive_avg_pool3d_backward.default", PK_ADAPT_AVG_BWD, 3, false, 0, "grad of adaptive avg pool 3d"),
    PL("aten.adaptive_max_pool2d.default", PK_ADAPT_MAX, 2, false, OPF_TUPLE, "(max over adaptive windows, index)"),
    PL("aten.adaptive_max_pool3d.default", PK_ADAPT_MAX, 3, false, OPF_TUPLE, "(max over adaptive windows, index)"),
    PL("aten.max_unpool2d.default", PK_UNPOOL, 2, false, 0, "zeros with values put back at their max_pool indices"),
    PL("aten.max_unpool3d.default", PK_UNPOOL, 3, false, 0, "zeros with values put back at their max_pool indices"),
    PL("aten.reflection_pad1d.default", PK_REFLECT, 1, false, 0, "pad by reflecting at the border"),
    PL("aten.reflection_pad2d.default", PK_REFLECT, 2, false, 0, "pad by reflecting at the border"),
    PL("aten.reflection_pad3d.default", PK_REFLECT, 3, false, 0, "pad by reflecting at the border"),
    PL("aten.replication_pad1d.default", PK_REPLICATE, 1, false, 0, "pad by repeating the border"),
    PL("aten.replication_pad2d.default", PK_REPLICATE, 2, false, 0, "pad by repeating the border"),
    PL("aten.replication_pad3d.default", PK_REPLICATE, 3, false, 0, "pad by repeating the border"),
    PL("aten.upsample_nearest1d.default", PK_NEAREST, 1, false, 0, "nearest-neighbour resize"),
    PL("aten.upsample_nearest2d.default", PK_NEAREST, 2, false, 0, "nearest-neighbour resize"),
    PL("aten.upsample_nearest3d.default", PK_NEAREST, 3, false, 0, "nearest-neighbour resize"),
    PL("aten.upsample_nearest1d.vec", PK_NEAREST, 1, true, 0, "nearest-neighbour resize"),
    PL("aten.upsample_nearest2d.vec", PK_NEAREST, 2, true, 0, "nearest-neighbour resize"),
    PL("aten.upsample_nearest3d.vec", PK_NEAREST, 3, true, 0, "nearest-neighbour resize"),
    PL("aten._upsample_nearest_exact1d.default", PK_NEAREST_EXACT, 1, false, 0, "nearest resize, pixel centres"),
    PL("aten._upsample_nearest_exact2d.default", PK_NEAREST_EXACT, 2, false, 0, "nearest resize, pixel centres"),
    PL("aten._upsample_nearest_exact3d.default", PK_NEAREST_EXACT, 3, false, 0, "nearest resize, pixel centres"),
    PL("aten.upsample_linear1d.default", PK_LINEAR, 1, false, 0, "linear resize"),
    PL("aten.upsample_bilinear2d.default", PK_LINEAR, 2, false, 0, "bilinear resize"),
    PL("aten.upsample_trilinear3d.default", PK_LINEAR, 3, false, 0, "trilinear resize"),
    PL("aten.upsample_linear1d.vec", PK_LINEAR, 1, true, 0, "linear resize"),
    PL("aten.upsample_bilinear2d.vec", PK_LINEAR, 2, true, 0, "bilinear resize"),
    PL("aten.upsample_trilinear3d.vec", PK_LINEAR, 3, true, 0, "trilinear resize"),
    PL("aten.upsample_bicubic2d.default", PK_CUBIC, 2, false, 0, "bicubic resize (A = -0.75)"),
    PL("aten.upsample_bicubic2d.vec", PK_CUBIC, 2, true, 0, "bicubic resize (A = -0.75)"),
    PL("aten.grid_sampler_2d.default", PK_GRID, 2, false, 0, "sample input at grid points (bilinear/nearest/bicubic)"),
    /* 2 spatial dims here; 3 when kernel_size has 3 entries (spec_of) */
    PL("prims._low_memory_max_pool_with_offsets.default", PK_MAX_OFFSETS, 2, false, OPF_TUPLE,
       "(max over windows, int8 offset of the max inside its window) (Inductor's low-memory max pool)"),
    PL("prims._low_memory_max_pool_offsets_to_indices.default", PK_OFFSETS_TO_IDX, 2, false, 0,
       "window offsets of max_pool back to flat input indices"),
};
const int ops_pool_count = sizeof ops_pool_table / sizeof ops_pool_table[0];
