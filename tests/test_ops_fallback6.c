/* test_ops_fallback6.c — the ATen ops a sixth batch of real models needed (tests/tools/
 * survey_models6.py) that Inductor runs as FallbackKernels: _cdist_backward / _pdist_backward
 * (cosine/p-norm pairwise losses), embedding_renorm (nn.Embedding(max_norm=...)), and
 * grid_sampler_2d/3d_backward (spatial transformers), on values derived by hand from ATen's
 * kernels, and grid_sampler's gradients against the forward op itself: grad_input by the
 * adjoint identity <grad_out, sample(x)> = <grad_input, x> (sampling is linear in x), grad_grid
 * by central differences of the forward in float64. Then the sweep's first ops: nearest
 * upsampling's gradient (the adjoint of the forward op, and hand values) and the low-precision
 * matrix products (_scaled_mm of float8 with tensorwise and rowwise scales, _int_mm,
 * _weight_int8pack_mm). */
#include "ops/interp.h"
#include "ops/ops_impl.h"
#include "tap.h"
#include "tests/support/op_graph.h"

static MiCtx *ctx;

static Graph *graph_of(const char *params, const char *body, const char *ret) { return og_graph(ctx, params, body, ret); }

static Tensor *TD(DType dt, int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals ? vals[i] : (double)i);
    return t;
}

/* the graph's (one) output on the inputs (borrowed): a new reference or NULL */
static Tensor *run1(const char *params, const char *body, Tensor **ts, int n) {
    Graph *g = graph_of(params, body, "r");
    IValue in[8] = {0}, *outs = NULL;
    int nouts = 0;
    Tensor *r = NULL;
    for (int i = 0; i < n; i++) { in[i].kind = IV_TENSOR; in[i].t = tensor_ref(ts[i]); }
    if (g && interp_run(ctx, g, in, n, &outs, &nouts) == 0 && nouts == 1 && outs[0].kind == IV_TENSOR) r = tensor_ref(outs[0].t);
    else { char e[2048]; diag("run failed: %s", mi_err_str(ctx, e, sizeof e)); mi_clear_err(ctx); }
    if (outs) interp_free_outputs(outs, nouts);
    for (int i = 0; i < n; i++) tensor_unref(in[i].t);
    graph_free(g);
    return r;
}

static bool values(const Tensor *t, const double *want, int64_t n, double tol) { return og_values(t, want, n, tol); }

static void check(const char *name, const char *params, const char *body, Tensor **ins, int n, const double *want, int64_t nw, double tol) {
    Tensor *r = run1(params, body, ins, n);
    ok(values(r, want, nw, tol), "%s", name);
    tensor_unref(r);
}

/* _cdist_backward / _pdist_backward: x1 = (0, 0), x2 = (3, 4), grad 1 */
static void test_dist_backward(void) {
    Tensor *x1 = TD(DT_F32, 2, (int64_t[]){1, 2}, (double[]){0, 0}), *x2 = TD(DT_F32, 2, (int64_t[]){1, 2}, (double[]){3, 4});
    Tensor *g = TD(DT_F32, 2, (int64_t[]){1, 1}, (double[]){1});
    const char *params = "g: \"f32[1, 1][1, 1]cpu\", a: \"f32[1, 2][2, 1]cpu\", b: \"f32[1, 2][2, 1]cpu\", d: \"f32[1, 1][1, 1]cpu\"";
    struct { double p, dist, want[2]; const char *name; } cs[] = {
        {2, 5, {-0.6, -0.8}, "p = 2: diff / dist"},
        {1, 7, {-1, -1}, "p = 1: sign(diff)"},
        {INFINITY, 4, {0, -1}, "p = inf: sign where |diff| is the max"},
        {3, cbrt(91), {-9 / pow(91, 2.0 / 3), -16 / pow(91, 2.0 / 3)}, "p = 3: diff |diff| / dist^2"},
        {0.5, pow(sqrt(3) + 2, 2), {-pow(3, -0.5) / pow(pow(sqrt(3) + 2, 2), -0.5), -pow(4, -0.5) / pow(pow(sqrt(3) + 2, 2), -0.5)},
         "p = 0.5: sign |diff|^(p-1) / dist^(p-1)"},
        {0, 2, {0, 0}, "p = 0: no gradient"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, "        r: \"f32[1, 2][2, 1]cpu\" = torch.ops.aten._cdist_backward.default(g, a, b, %s, d)\n",
                 isinf(cs[i].p) ? "inf" : cs[i].p == 0.5 ? "0.5" : cs[i].p == 3 ? "3.0" : cs[i].p == 2 ? "2.0" : cs[i].p == 1 ? "1.0" : "0.0");
        Tensor *d = TD(DT_F32, 2, (int64_t[]){1, 1}, &cs[i].dist);
        check(cs[i].name, params, body, (Tensor *[]){g, x1, x2, d}, 4, cs[i].want, 2, 1e-6);
        tensor_unref(d);
    }
    /* a broadcast batch: x1 [2, 1, 2] against x2 [1, 2, 2] -> grad_x1 [2, 1, 2] summing over x2's 2 rows */
    Tensor *a = TD(DT_F32, 3, (int64_t[]){2, 1, 2}, (double[]){0, 0, 1, 1}), *b = TD(DT_F32, 3, (int64_t[]){1, 2, 2}, (double[]){3, 4, 0, 1});
    Tensor *gg = TD(DT_F32, 3, (int64_t[]){2, 1, 2}, (double[]){1, 1, 1, 1});
    Tensor *dd = TD(DT_F32, 3, (int64_t[]){2, 1, 2}, (double[]){5, 1, sqrt(13), 1});
    check("_cdist_backward over a broadcast batch: row (0,0) -> (-0.6,-0.8)+(0,-1); row (1,1) -> (-2,-3)/sqrt13+(1,0)",
          "g: \"f32[2, 1, 2][2, 2, 1]cpu\", a: \"f32[2, 1, 2][2, 2, 1]cpu\", b: \"f32[1, 2, 2][4, 2, 1]cpu\", d: \"f32[2, 1, 2][2, 2, 1]cpu\"",
          "        r: \"f32[2, 1, 2][2, 2, 1]cpu\" = torch.ops.aten._cdist_backward.default(g, a, b, 2.0, d)\n",
          (Tensor *[]){gg, a, b, dd}, 4, (double[]){-0.6, -1.8, -2 / sqrt(13) + 1, -3 / sqrt(13)}, 4, 1e-6);
    Tensor *x = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){0, 0, 3, 4}), *g1 = TD(DT_F32, 1, (int64_t[]){1}, (double[]){1}), *d1 = TD(DT_F32, 1, (int64_t[]){1}, (double[]){5});
    check("_pdist_backward p = 2: pair (0, 1) adds -(0.6, 0.8) to row 0 and (0.6, 0.8) to row 1",
          "g: \"f32[1][1]cpu\", x: \"f32[2, 2][2, 1]cpu\", d: \"f32[1][1]cpu\"",
          "        r: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten._pdist_backward.default(g, x, 2.0, d)\n",
          (Tensor *[]){g1, x, d1}, 3, (double[]){-0.6, -0.8, 0.6, 0.8}, 4, 1e-6);
    tensor_unref(x1); tensor_unref(x2); tensor_unref(g); tensor_unref(a); tensor_unref(b); tensor_unref(gg); tensor_unref(dd);
    tensor_unref(x); tensor_unref(g1); tensor_unref(d1);
}

/* embedding_renorm: rows 0 (twice) and 1 are named; row 0's norm 5 > 1 is scaled by
 * 1 / (5 + 1e-7), row 1's 0.5 stays, row 2 (norm 10) is not named and stays */
static void test_embedding_renorm(void) {
    Tensor *w = TD(DT_F32, 2, (int64_t[]){3, 2}, (double[]){3, 4, 0.3, 0.4, 6, 8});
    Tensor *ix = TD(DT_I64, 1, (int64_t[]){3}, (double[]){0, 0, 1});
    float s = (float)(1.0 / (5 + 1e-7));
    check("embedding_renorm: named rows over max_norm scaled by max_norm / (norm + 1e-7)",
          "w: \"f32[3, 2][2, 1]cpu\", i: \"i64[3][1]cpu\"",
          "        r: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.embedding_renorm.default(w, i, 1.0, 2.0)\n",
          (Tensor *[]){w, ix}, 2, (double[]){(float)(3 * s), (float)(4 * s), 0.3f, 0.4f, 6, 8}, 6, 0);
    ok(tensor_get_f(w, 0) == 3, "embedding_renorm (functional) leaves self unchanged");
    check("embedding_renorm with norm_type 1: row 0's 7 > 2 -> scaled by 2 / 7",
          "w: \"f32[3, 2][2, 1]cpu\", i: \"i64[3][1]cpu\"",
          "        r: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.embedding_renorm.default(w, i, 2.0, 1.0)\n",
          (Tensor *[]){w, ix}, 2, (double[]){6.0 / 7, 8.0 / 7, 0.3, 0.4, 6, 8}, 6, 1e-6);
    tensor_unref(w); tensor_unref(ix);
}

/* grid_sampler_2d_backward on a 2x2 image [[0, 1], [2, 3]] sampled at its centre (0, 0):
 * bilinear d/dx = 1, d/dy = 2 in pixels, times (W - 1) / 2 = 0.5 (align_corners) or W / 2 = 1 */
static void test_grid_backward_values(void) {
    Tensor *x = TD(DT_F32, 4, (int64_t[]){1, 1, 2, 2}, (double[]){0, 1, 2, 3}), *gr = TD(DT_F32, 4, (int64_t[]){1, 1, 1, 2}, (double[]){0, 0});
    Tensor *go = TD(DT_F32, 4, (int64_t[]){1, 1, 1, 1}, (double[]){1});
    const char *params = "go: \"f32[1, 1, 1, 1][1, 1, 1, 1]cpu\", x: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", g: \"f32[1, 1, 1, 2][2, 2, 2, 1]cpu\"";
    check("grid_sampler_2d_backward grad_grid, align_corners: (0.5, 1)", params,
          "        b = torch.ops.aten.grid_sampler_2d_backward.default(go, x, g, 0, 0, True, [False, True])\n"
          "        r: \"f32[1, 1, 1, 2][2, 2, 2, 1]cpu\" = b[1]\n", (Tensor *[]){go, x, gr}, 3, (double[]){0.5, 1}, 2, 1e-6);
    check("grid_sampler_2d_backward grad_grid, no align_corners: (1, 2)", params,
          "        b = torch.ops.aten.grid_sampler_2d_backward.default(go, x, g, 0, 0, False, [True, True])\n"
          "        r: \"f32[1, 1, 1, 2][2, 2, 2, 1]cpu\" = b[1]\n", (Tensor *[]){go, x, gr}, 3, (double[]){1, 2}, 2, 1e-6);
    check("grid_sampler_2d_backward grad_input: a quarter to each pixel", params,
          "        b = torch.ops.aten.grid_sampler_2d_backward.default(go, x, g, 0, 0, True, [True, True])\n"
          "        r: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\" = b[0]\n", (Tensor *[]){go, x, gr}, 3, (double[]){0.25, 0.25, 0.25, 0.25}, 4, 1e-6);
    tensor_set_f(gr, 0, 1.0);
    check("grid_sampler_2d_backward, border padding at x = 1 (align_corners): clipped, d/dx = 0", params,
          "        b = torch.ops.aten.grid_sampler_2d_backward.default(go, x, g, 0, 1, True, [False, True])\n"
          "        r: \"f32[1, 1, 1, 2][2, 2, 2, 1]cpu\" = b[1]\n", (Tensor *[]){go, x, gr}, 3, (double[]){0, 1}, 2, 1e-6);
    Graph *g = graph_of(params, "        b = torch.ops.aten.grid_sampler_2d_backward.default(go, x, g, 0, 0, True, [False, True])\n"
                                "        r = b[0]\n", "r");
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    Node *bn = g ? graph_find(g, "b") : NULL;
    ok(bn && op_infer_meta(ctx, g, bn, m, &nm) == 0 && nm == 2 && m[0].dtype == DT_INVALID && m[1].dtype == DT_F32,
       "grid_sampler_2d_backward's meta: grad_input None when output_mask[0] is False");
    graph_free(g);
    tensor_unref(x); tensor_unref(gr); tensor_unref(go);
}

/* sum(w * forward(x, grid)) in float64 */
static double fwd_dot(int nsp, int mode, int pad, bool align, Tensor *x, Tensor *grid, Tensor *w, const char *params) {
    char body[512];
    snprintf(body, sizeof body, "        s = torch.ops.aten.grid_sampler_%dd.default(x, g, %d, %d, %s)\n"
             "        m = torch.ops.aten.mul.Tensor(s, w)\n        r: \"f64[][]cpu\" = torch.ops.aten.sum.default(m)\n",
             nsp, mode, pad, align ? "True" : "False");
    Tensor *r = run1(params, body, (Tensor *[]){x, grid, w}, 3);
    double v = r ? tensor_get_f(r, 0) : NAN;
    tensor_unref(r);
    return v;
}

/* the backward's two results against the forward, every mode and padding (2-D and 3-D) */
static void test_grid_backward_vs_forward(int nsp) {
    int64_t xs[5] = {1, 2, 3, 4, 3}, gs[5] = {1, 2, 2, 2, 3}, os[5] = {1, 2, 2, 2, 2};
    if (nsp == 2) { xs[2] = 4; xs[3] = 5; gs[1] = 3; gs[2] = 2; gs[3] = 2; os[2] = 3; os[3] = 2; }
    int nd = nsp + 2, npts = nsp == 2 ? 6 : 8;
    char sx[64], sg[64], so[64], params[512];
    snprintf(sx, sizeof sx, nsp == 2 ? "f64[1, 2, 4, 5]" : "f64[1, 2, 3, 4, 3]");
    snprintf(sg, sizeof sg, nsp == 2 ? "f64[1, 3, 2, 2]" : "f64[1, 2, 2, 2, 3]");
    snprintf(so, sizeof so, nsp == 2 ? "f64[1, 2, 3, 2]" : "f64[1, 2, 2, 2, 2]");
    snprintf(params, sizeof params, "x: \"%s\", g: \"%s\", w: \"%s\"", sx, sg, so);
    Tensor *x = TD(DT_F64, nd, xs, NULL), *grid = TD(DT_F64, nd, gs, NULL), *w = TD(DT_F64, nd, os, NULL);
    for (int64_t i = 0; i < tensor_numel(x); i++) tensor_set_f(x, i, sin(1.7 * (double)i) * 3);
    for (int64_t i = 0; i < tensor_numel(w); i++) tensor_set_f(w, i, cos(0.9 * (double)i) + 0.5);
    /* points inside, near the border and outside (reflection / zeros), none on a pixel edge */
    for (int64_t i = 0; i < tensor_numel(grid); i++) tensor_set_f(grid, i, 1.37 * sin(2.3 * (double)i + 0.4));
    for (int mode = 0; mode < (nsp == 2 ? 3 : 2); mode++)
        for (int pad = 0; pad < 3; pad++)
            for (int al = 0; al < 2; al++) {
                char body[512], bparams[512];
                snprintf(bparams, sizeof bparams, "w: \"%s\", x: \"%s\", g: \"%s\"", so, sx, sg);
                snprintf(body, sizeof body, "        b = torch.ops.aten.grid_sampler_%dd_backward.default(w, x, g, %d, %d, %s, [True, True])\n"
                         "        r = b[%%d]\n", nsp, mode, pad, al ? "True" : "False");
                char b0[600], b1[600];
                snprintf(b0, sizeof b0, body, 0);
                snprintf(b1, sizeof b1, body, 1);
                Tensor *gi = run1(bparams, b0, (Tensor *[]){w, x, grid}, 3), *gg = run1(bparams, b1, (Tensor *[]){w, x, grid}, 3);
                double lhs = fwd_dot(nsp, mode, pad, al, x, grid, w, params), rhs = 0, worst = 0;
                for (int64_t i = 0; gi && i < tensor_numel(x); i++) rhs += tensor_get_f(gi, i) * tensor_get_f(x, i);
                for (int64_t i = 0; gg && i < npts * nsp; i++) {
                    double keep = tensor_get_f(grid, i), h = 1e-6;
                    tensor_set_f(grid, i, keep + h);
                    double up = fwd_dot(nsp, mode, pad, al, x, grid, w, params);
                    tensor_set_f(grid, i, keep - h);
                    double dn = fwd_dot(nsp, mode, pad, al, x, grid, w, params);
                    tensor_set_f(grid, i, keep);
                    double fd = (up - dn) / (2 * h), e = fabs(fd - tensor_get_f(gg, i)) / (1 + fabs(fd));
                    if (e > worst) worst = e;
                }
                ok(gi && gg && fabs(lhs - rhs) <= 1e-9 * (1 + fabs(lhs)) && worst < 1e-5,
                   "grid_sampler_%dd_backward mode %d padding %d align_corners %d: <w, fwd(x)> %.12g = <grad_input, x> %.12g; grad_grid vs central differences %.2g",
                   nsp, mode, pad, al, lhs, rhs, worst);
                tensor_unref(gi); tensor_unref(gg);
            }
    tensor_unref(x); tensor_unref(grid); tensor_unref(w);
}

/* upsample_nearest{2d,exact2d}_backward: hand values for 2x, and <g, up(x)> = <up_bwd(g), x> at
 * ratios 3 -> 5 and 5 -> 3 */
static void test_upsample_backward(void) {
    Tensor *g = TD(DT_F32, 4, (int64_t[]){1, 1, 4, 4}, NULL);
    check("upsample_nearest2d_backward 2x: each input pixel sums its 2x2 block of 0..15",
          "g: \"f32[1, 1, 4, 4][16, 16, 4, 1]cpu\"",
          "        r: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\" = torch.ops.aten.upsample_nearest2d_backward.default(g, [4, 4], [1, 1, 2, 2], 2.0, 2.0)\n",
          &g, 1, (double[]){10, 18, 42, 50}, 4, 0);
    tensor_unref(g);
    static const int64_t sz[2][2] = {{3, 5}, {5, 3}};
    for (int ex = 0; ex < 2; ex++)
        for (int k = 0; k < 2; k++) {
            int64_t in = sz[k][0], out = sz[k][1];
            Tensor *x = TD(DT_F64, 4, (int64_t[]){1, 2, in, in}, NULL), *w = TD(DT_F64, 4, (int64_t[]){1, 2, out, out}, NULL);
            for (int64_t i = 0; i < tensor_numel(x); i++) tensor_set_f(x, i, sin(1.3 * (double)i));
            for (int64_t i = 0; i < tensor_numel(w); i++) tensor_set_f(w, i, cos(0.7 * (double)i));
            char params[256], fwd[512], bwd[512];
            const char *nm = ex ? "_upsample_nearest_exact2d" : "upsample_nearest2d";
            snprintf(params, sizeof params, "x: \"f64[1, 2, %lld, %lld]\", w: \"f64[1, 2, %lld, %lld]\"", (long long)in, (long long)in, (long long)out, (long long)out);
            snprintf(fwd, sizeof fwd, "        u = torch.ops.aten.%s.default(x, [%lld, %lld])\n        m = torch.ops.aten.mul.Tensor(u, w)\n"
                     "        r: \"f64[][]cpu\" = torch.ops.aten.sum.default(m)\n", nm, (long long)out, (long long)out);
            snprintf(bwd, sizeof bwd, "        r = torch.ops.aten.%s_backward.default(w, [%lld, %lld], [1, 2, %lld, %lld])\n",
                     nm, (long long)out, (long long)out, (long long)in, (long long)in);
            Tensor *lhs = run1(params, fwd, (Tensor *[]){x, w}, 2), *gi = run1(params, bwd, (Tensor *[]){x, w}, 2);
            double dot = 0;
            for (int64_t i = 0; gi && i < tensor_numel(x); i++) dot += tensor_get_f(gi, i) * tensor_get_f(x, i);
            ok(lhs && gi && fabs(tensor_get_f(lhs, 0) - dot) < 1e-12, "%s_backward %lld -> %lld is the adjoint of the forward: %.12g = %.12g",
               nm, (long long)in, (long long)out, lhs ? tensor_get_f(lhs, 0) : NAN, dot);
            tensor_unref(lhs); tensor_unref(gi); tensor_unref(x); tensor_unref(w);
        }
}

/* _scaled_mm / _int_mm / _weight_int8pack_mm on small integers (exact in every dtype involved) */
static void test_lowp_mm(void) {
    Tensor *a = TD(DT_F8E4M3, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4}), *b = TD(DT_F8E4M3, 2, (int64_t[]){2, 2}, (double[]){1, 0.5, -1, 2});
    Tensor *s1 = TD(DT_F32, 0, NULL, (double[]){0.5}), *s2 = TD(DT_F32, 0, NULL, (double[]){4});
    /* A @ B = [[-1, 4.5], [-1, 9.5]] */
    check("_scaled_mm tensorwise scales 0.5 and 4: 2 (A @ B), out_dtype float32",
          "a: \"f8e4m3fn[2, 2][2, 1]cpu\", b: \"f8e4m3fn[2, 2][2, 1]cpu\", sa: \"f32[][]cpu\", sb: \"f32[][]cpu\"",
          "        r: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten._scaled_mm.default(a, b, sa, sb, out_dtype = torch.float32)\n",
          (Tensor *[]){a, b, s1, s2}, 4, (double[]){-2, 9, -2, 19}, 4, 0);
    Tensor *ra = TD(DT_F32, 2, (int64_t[]){2, 1}, (double[]){1, 2}), *rb = TD(DT_F32, 2, (int64_t[]){1, 2}, (double[]){3, 1}), *bias = TD(DT_BF16, 1, (int64_t[]){2}, (double[]){0.5, 0});
    check("_scaled_mm rowwise scales [1, 2] x [3, 1] + bias, bf16: (A @ B)[i][j] sa[i] sb[j] + bias[j], 19 rounds to 19",
          "a: \"f8e4m3fn[2, 2][2, 1]cpu\", b: \"f8e4m3fn[2, 2][2, 1]cpu\", sa: \"f32[2, 1][1, 1]cpu\", sb: \"f32[1, 2][2, 1]cpu\", c: \"bf16[2][1]cpu\"",
          "        r: \"bf16[2, 2][2, 1]cpu\" = torch.ops.aten._scaled_mm.default(a, b, sa, sb, c, out_dtype = torch.bfloat16)\n",
          (Tensor *[]){a, b, ra, rb, bias}, 5, (double[]){-2.5, 4.5, -5.5, 19}, 4, 0);
    Tensor *i8a = TD(DT_I8, 2, (int64_t[]){2, 3}, (double[]){127, -128, 5, 1, 2, 3}), *i8b = TD(DT_I8, 2, (int64_t[]){3, 2}, (double[]){127, 1, 127, 1, 1, 1});
    check("_int_mm: 127*127 - 128*127 + 5 = -122 and 127 - 128 + 5 = 4; 1*127 + 2*127 + 3, 6",
          "a: \"i8[2, 3][3, 1]cpu\", b: \"i8[3, 2][2, 1]cpu\"",
          "        r: \"i32[2, 2][2, 1]cpu\" = torch.ops.aten._int_mm.default(a, b)\n",
          (Tensor *[]){i8a, i8b}, 2, (double[]){-122, 4, 384, 6}, 4, 0);
    Tensor *x = TD(DT_F32, 2, (int64_t[]){1, 2}, (double[]){1, 2}), *w = TD(DT_I8, 2, (int64_t[]){3, 2}, (double[]){1, 1, -2, 3, 0, 5});
    Tensor *sc = TD(DT_F32, 1, (int64_t[]){3}, (double[]){0.5, 2, 1});
    check("_weight_int8pack_mm: x @ w^T = [3, 4, 10] times scales [0.5, 2, 1]",
          "x: \"f32[1, 2][2, 1]cpu\", w: \"i8[3, 2][2, 1]cpu\", s: \"f32[3][1]cpu\"",
          "        r: \"f32[1, 3][3, 1]cpu\" = torch.ops.aten._weight_int8pack_mm.default(x, w, s)\n",
          (Tensor *[]){x, w, sc}, 3, (double[]){1.5, 8, 10}, 3, 0);
    Tensor *all[] = {a, b, s1, s2, ra, rb, bias, i8a, i8b, x, w, sc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_unref(all[i]);
}

int main(void) {
    ctx = mi_ctx_new();
    test_dist_backward();
    test_embedding_renorm();
    test_grid_backward_values();
    test_grid_backward_vs_forward(2);
    test_grid_backward_vs_forward(3);
    test_upsample_backward();
    test_lowp_mm();
    mi_ctx_free(ctx);
    return done_testing();
}
