/* test_lowering_pool_backward.c — the pooling lowerings added after the first pooling family
 * (core/lowering/lowering_pooling_backward.c, fractional max pooling in lowering_pooling.c):
 * avg_pool2d_backward (covered count, count_include_pad, ceil_mode + divisor_override),
 * avg_pool3d_backward, upsample_nearest2d_backward (integer ratio and CeilDiv windows) and
 * fractional_max_pool2d / 3d lower to Pointwise / Reduction kernels (no FallbackKernel, but
 * where Inductor falls back: a window covered by 36 pooled positions). Their values — from the
 * IR interpreter and from the compiled C module, fusion on and off — equal the reference
 * interpreter's (ATen's definitions); the backwards are the adjoints of their forwards
 * (<g, f(x)> = <f_backward(g), x> in float64); the fractional windows start where ATen's
 * generate_intervals puts them (computed here); the CUDA source compiles with nvcc. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"

#include <math.h>
#include <string.h>

#define BWD "tests/fixtures/lowering/pooling_backward.py"
#define FRAC "tests/fixtures/lowering/fractional_pool.py"

/* distinct values with both signs: ((k * 193) % 389) / 4 - 40, times `scale` */
static Tensor *mk(MiCtx *ctx, int nd, const int64_t *size, double scale) {
    Tensor *t = tensor_new(ctx, DT_F32, nd, size);
    for (int64_t k = 0; k < tensor_numel(t); k++) tensor_set_f(t, k, scale * ((double)((k * 193) % 389) / 4.0 - 40.0));
    return t;
}

static int count_kind(const IrModule *m, BufKind k) {
    int c = 0;
    for (int i = 0; i < m->nbufs; i++) c += m->bufs[i]->kind == k;
    return c;
}

/* every output of got equals ref's (rtol 1e-5, atol 1e-5) */
static bool agree(const IValue *ref, const IValue *got, int n, const char *what) {
    bool all = true;
    for (int k = 0; k < n; k++) {
        CompareResult cr = tensor_compare(got[k].t, ref[k].t, 1e-5, 1e-5);
        if (!cr.ok) { diag("%s: output %d differs by %g", what, k, cr.max_abs); all = false; }
    }
    return all;
}

static double dot(const Tensor *a, const Tensor *b) {
    double s = 0;
    for (int64_t i = 0; i < tensor_numel(a); i++) s += tensor_get_f(a, i) * tensor_get_f(b, i);
    return s;
}

/* the IR interpreter and the compiled module on g (fusion on, then off) against ref; `check`
 * looks at each module's outputs and IR */
static void run_both(MiCtx *ctx, Graph *g, IValue *in, int nin, const IValue *ref, int nout, const char *name,
                     void (*check)(const IrModule *m, const IValue *in, const IValue *out, const char *what)) {
    for (int f = 1; f >= 0; f--) {
        ctx->fusion = f;
        char what[96];
        snprintf(what, sizeof what, "%s, fusion %s", name, f ? "on" : "off");
        CgBuild b;
        if (!ok(cg_compile(ctx, g, &b, 0) == 0, "%s: lowers, schedules and compiles", what)) diag("%s", ctx->err.msg);
        IValue *got = NULL;
        int ngot = 0;
        if (b.m && ok(ir_interp_run(ctx, b.m, in, nin, &got, &ngot) == 0 && ngot == nout, "%s: IR interpreter runs", what))
            ok(agree(ref, got, nout, what), "%s: the IR interpreter equals the reference interpreter", what);
        else diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        got = NULL;
        ngot = 0;
        if (b.rt && ok(rt_run(ctx, b.rt, g, in, nin, &got, &ngot, NULL) == 0 && ngot == nout, "%s: the module runs", what)) {
            ok(agree(ref, got, nout, what), "%s: the compiled module equals the reference interpreter", what);
            if (check) check(b.m, in, got, what);
        } else if (b.rt) diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        cg_free(&b);
    }
    ctx->target = MI_DEV_CUDA;
    CgBuild b;
    ok(cg_compile(ctx, g, &b, CG_SOURCE) == 0, "%s: CUDA source generated", name);
    tf_nvcc_ok(name, b.src);
    cg_free(&b);
    ctx->target = MI_DEV_CPU;
}

/* outputs (a, fa, b, fb, c, fc, d, fd, e, fe, f, ff, z, h, k, fk) of BWD: each backward against
 * its forward; inputs (x, g, x3, g3, u, v). k's corners by hand: ATen's pool_size for
 * ceil_mode with count_include_pad is the window clipped to the (padded) input, so x[6][6]
 * (window [6, 8) x [6, 8) over 7 x 7) takes g[3][3] / 1, x[0][6] g[0][3] / 2, x[0][0]
 * g[0][0] / 4 (Inductor's lowering.py divides all by 4: pytorch/pytorch#198119). */
static void check_backward(const IrModule *m, const IValue *in, const IValue *o, const char *what) {
    static const struct { int bwd, fwd, x, g; const char *name; } adj[] = {
        {0, 1, 0, 1, "avg_pool2d_backward (padding, covered count)"},
        {2, 3, 0, 1, "avg_pool2d_backward (count_include_pad)"},
        {4, 5, 0, 1, "avg_pool2d_backward (ceil_mode, divisor_override 5)"},
        {6, 7, 2, 3, "avg_pool3d_backward"},
        {8, 9, 0, 4, "upsample_nearest2d_backward 7 -> 14"},
        {10, 11, -12, 5, "upsample_nearest2d_backward 5x7 -> 7x9"},
        {14, 15, 0, 1, "avg_pool2d_backward (ceil_mode, count_include_pad)"},
    };
    for (int k = 0; k < 7; k++) {
        const Tensor *x = adj[k].x < 0 ? o[-adj[k].x].t : in[adj[k].x].t;
        double l = dot(in[adj[k].g].t, o[adj[k].fwd].t), r = dot(o[adj[k].bwd].t, x);
        ok(fabs(l - r) <= 1e-5 * (1 + fabs(l)), "%s: %s is the adjoint of its forward (%.9g, %.9g)", what, adj[k].name, l, r);
    }
    const Tensor *gk = in[1].t, *xk = o[14].t;
    int bad = 0;
    for (int p = 0; p < 6; p++) {   /* planes (b, c) */
        static const struct { int xi, gi; double div; } c[] = {{48, 15, 1}, {6, 3, 2}, {42, 12, 2}, {0, 0, 4}, {7, 0, 4}};
        for (int q = 0; q < 5; q++)
            bad += fabs(tensor_get_f(xk, p * 49 + c[q].xi) - tensor_get_f(gk, p * 16 + c[q].gi) / c[q].div) > 1e-6;
    }
    ok(bad == 0, "%s: ceil_mode + count_include_pad: the overhanging windows divide by the rows and columns they cover (%d wrong)", what, bad);
    /* 15 Pointwise (the avg pools, unrolled, and the upsamplings), the 6x6 backward a
     * FallbackKernel and its MultiOutput */
    int ncomp = count_kind(m, BUF_COMPUTED), next = count_kind(m, BUF_EXTERN);
    ok(ncomp == 15 && next == 2, "%s: 15 computed buffers (%d), 2 extern: the FallbackKernel of the 36-position window (%d)", what, ncomp, next);
}

/* fixture `path` on in[0..nin) (taken): the reference interpreter's nout outputs, then run_both */
static void fixture(MiCtx *ctx, const char *path, IValue *in, int nin, int nout, const char *name,
                    void (*check)(const IrModule *m, const IValue *in, const IValue *out, const char *what)) {
    IValue *ref = NULL;
    Graph *g = tf_load_ref(ctx, path, in, nin, &ref, nout);
    if (ok(g != NULL, "%s loads, the reference interpreter runs it", path)) {
        char why[300] = "";
        ok(lowering_supported(g, why, sizeof why), "%s: every op has a lowering or a fallback (%s)", name, why);
        run_both(ctx, g, in, nin, ref, nout, name, check);
        interp_free_outputs(ref, nout);
        graph_free(g);
    } else diag("%s", ctx->err.msg);
    for (int i = 0; i < nin; i++) ivalue_clear(&in[i]);
}

static void pool_backward(MiCtx *ctx) {
    int64_t sx[4] = {2, 3, 7, 7}, sg[4] = {2, 3, 4, 4}, sx3[5] = {2, 2, 5, 6, 6}, sg3[5] = {2, 2, 2, 3, 3},
            su[4] = {2, 3, 14, 14}, sv[4] = {2, 3, 7, 9};
    IValue in[6] = {{.kind = IV_TENSOR, .t = mk(ctx, 4, sx, 1)},   {.kind = IV_TENSOR, .t = mk(ctx, 4, sg, 0.5)},
                    {.kind = IV_TENSOR, .t = mk(ctx, 5, sx3, 1)},  {.kind = IV_TENSOR, .t = mk(ctx, 5, sg3, -0.25)},
                    {.kind = IV_TENSOR, .t = mk(ctx, 4, su, 0.1)}, {.kind = IV_TENSOR, .t = mk(ctx, 4, sv, 2)}};
    fixture(ctx, BWD, in, 6, 16, "pooling backwards", check_backward);
}

/* ATen's generate_intervals as Inductor computes it: alpha = (in - k) / (out - 1) in float64,
 * start_i = trunc((i + u) * alpha) - trunc(u * alpha) (i + u in float32), the last in - k */
static int64_t frac_start(double u, int64_t in, int64_t out, int64_t k, int64_t i) {
    if (i == out - 1) return in - k;
    double alpha = (double)(in - k) / (double)(out - 1);
    return (int64_t)trunc((double)((float)i + (float)u) * alpha) - (int64_t)trunc((double)(float)u * alpha);
}

/* outputs (v, i, v5, i5, v3, i3) of FRAC: the 2-d ones against windows placed here */
static void check_fractional(const IrModule *m, const IValue *in, const IValue *o, const char *what) {
    const Tensor *x = in[0].t, *s = in[1].t;
    static const struct { int v, k, oh, ow; } c[2] = {{0, 2, 3, 3}, {2, 5, 2, 3}};
    for (int t = 0; t < 2; t++) {
        int bad = 0;
        for (int p = 0; p < 6; p++)   /* planes (b, c); samples (W, H) */
            for (int i = 0; i < c[t].oh; i++)
                for (int j = 0; j < c[t].ow; j++) {
                    int64_t h0 = frac_start(tensor_get_f(s, 2 * p + 1), 7, c[t].oh, c[t].k, i);
                    int64_t w0 = frac_start(tensor_get_f(s, 2 * p), 7, c[t].ow, c[t].k, j);
                    double best = -INFINITY;
                    int64_t at = -1;
                    for (int a = 0; a < c[t].k; a++)
                        for (int b = 0; b < c[t].k; b++) {
                            double xv = tensor_get_f(x, p * 49 + (h0 + a) * 7 + w0 + b);
                            if (xv > best) { best = xv; at = (h0 + a) * 7 + w0 + b; }
                        }
                    int64_t q = (p * c[t].oh + i) * c[t].ow + j;
                    if (tensor_get_f(o[c[t].v].t, q) != best || tensor_get_f(o[c[t].v + 1].t, q) != (double)at) bad++;
                }
        ok(bad == 0, "%s: fractional_max_pool2d %dx%d: the max and its index in the windows generate_intervals places (%d wrong)",
           what, c[t].k, c[t].k, bad);
    }
    int nred = 0;
    for (int i = 0; i < m->nbufs; i++) nred += m->bufs[i]->is_reduction;
    ok(nred == 2 && count_kind(m, BUF_EXTERN) == 0,
       "%s: the 25-position window's max and argmax are Reductions (%d), the smaller ones unrolled; no extern kernel", what, nred);
}

static void fractional(MiCtx *ctx) {
    int64_t sx[4] = {2, 3, 7, 7}, ss[3] = {2, 3, 2}, sy[5] = {2, 2, 6, 7, 8}, ss3[3] = {2, 2, 3};
    Tensor *s = tensor_new(ctx, DT_F32, 3, ss), *s3 = tensor_new(ctx, DT_F32, 3, ss3);
    for (int k = 0; k < 12; k++) tensor_set_f(s, k, 0.05 + 0.0777 * k);   /* samples in [0, 1) */
    for (int k = 0; k < 12; k++) tensor_set_f(s3, k, 0.93 - 0.0711 * k);
    IValue in[4] = {{.kind = IV_TENSOR, .t = mk(ctx, 4, sx, 1)}, {.kind = IV_TENSOR, .t = s},
                    {.kind = IV_TENSOR, .t = mk(ctx, 5, sy, -1)}, {.kind = IV_TENSOR, .t = s3}};
    fixture(ctx, FRAC, in, 4, 6, "fractional max pool", check_fractional);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    pool_backward(ctx);
    fractional(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
