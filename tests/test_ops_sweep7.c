/* test_ops_sweep7.c — the ops left from the sweep of Inductor's lowering / fallback /
 * decomposition tables against the registry, each checked on computed values:
 *   - bitwise shifts (pointwise lowerings): ATen's out-of-range counts on hand values in int8 /
 *     int32, the compiled C module equal to the interpreter, the CUDA source built by nvcc;
 *   - FallbackKernels: _embedding_bag_backward / _dense_backward / _per_sample_weights_backward
 *     (hand values for sum / mean / max / padding_idx / scale_grad_by_freq, the adjoint of the
 *     forward, an empty offset2bag rebuilt from the offsets), adaptive / fractional max pool and
 *     replication pad backwards (the adjoint of the forward), the linear / bilinear / trilinear /
 *     bicubic and antialiased upsample backwards (adjoint of the forward, align_corners on and
 *     off, up and down), each as <g, f(x)> = <f_backward(g), x> in float64 for an f linear in x
 *     (a max pool with its indices fixed is);
 *   - decompositions as Inductor's: _fused_rms_norm (hand values; its backward against central
 *     differences of the forward), repeat_interleave.Tensor (the kernel's values; with an int
 *     output_size decompose_graph gives cumsum / iota / searchsorted / clamp_max with the same
 *     values), randint.default -> randint.low;
 *   - randint and prims.inductor_randint: the range and dtype, ops.randint64 in the IR and in
 *     compiled C whose draws stay in [low, high);
 *   - _unsafe_masked_index_put_accumulate's clamp to [-size, size - 1] (decompositions.py);
 *   - random inputs: identity pivots for what a solve reads as pivots;
 *   - adaptive_max_pool2d lowered as lowering.py does (compiled C = interpreter, nvcc);
 *   - a graph of the fallbacks compiled to C (equal to the interpreter) and to CUDA (nvcc). */
#include "tap.h"
#include "compile_fx/compile_fx.h"
#include "ir/ir.h"
#include "lowering/lowering.h"
#include "ops/decomp.h"
#include "ops/interp.h"
#include "runtime/runtime.h"
#include "tests/support/codegen_check.h"
#include "tests/support/compiled_check.h"
#include "tests/support/fixture_graph.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

static Tensor *TD(DType dt, int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals ? vals[i] : (double)i);
    return t;
}

/* a tensor of pseudo-random values in [-1, 1) (a fixed sine sequence) */
static Tensor *TS(DType dt, int ndim, const int64_t *size, double f) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, sin(f * (double)(i + 1)));
    return t;
}

static Graph *graph_src(const char *src) {
    Graph *g = fx_parse(ctx, src, strlen(src), "sweep7.py", 1);
    if (!g) { char e[1024]; diag("parse: %s", mi_err_str(ctx, e, sizeof e)); mi_clear_err(ctx); return NULL; }
    ops_resolve_graph(g);
    return g;
}

/* interpreter outputs of g on ins (borrowed), NULL on failure (diagnosed) */
static IValue *interp(Graph *g, Tensor **ins, int n, int *nout) { return cc_interp(ctx, g, ins, n, nout); }

/* the one output of `body` (which assigns r) on ins: a new reference or NULL */
static Tensor *run1(const char *params, const char *body, Tensor **ins, int n) {
    Graph *g = og_graph(ctx, params, body, "r");
    int no = 0;
    IValue *o = interp(g, ins, n, &no);
    Tensor *r = o && no == 1 && o[0].kind == IV_TENSOR ? tensor_ref(o[0].t) : NULL;
    if (o) interp_free_outputs(o, no);
    graph_free(g);
    return r;
}

static void check(const char *name, const char *params, const char *body, Tensor **ins, int n, const double *want, int64_t nw, double tol) {
    Tensor *r = run1(params, body, ins, n);
    ok(og_values(r, want, nw, tol), "%s", name);
    tensor_unref(r);
}

static double dot(const Tensor *a, const Tensor *b) {
    double s = 0;
    for (int64_t i = 0; a && b && i < tensor_numel(a) && i < tensor_numel(b); i++) s += tensor_get_f(a, i) * tensor_get_f(b, i);
    return s;
}

/* <w, f(x)> = <f_backward(w), x>: fwd assigns u = f(x) (and may use x, w), bwd assigns r from w */
static void adjoint(const char *name, const char *params, const char *fwd, const char *bwd, Tensor *x, Tensor *w) {
    char body[2048];
    snprintf(body, sizeof body, "%s        m = torch.ops.aten.mul.Tensor(u, w)\n        r = torch.ops.aten.sum.default(m)\n", fwd);
    Tensor *lhs = run1(params, body, (Tensor *[]){x, w}, 2), *gi = run1(params, bwd, (Tensor *[]){x, w}, 2);
    double l = lhs ? tensor_get_f(lhs, 0) : NAN, r = gi ? dot(gi, x) : NAN;
    ok(lhs && gi && tensor_numel(gi) == tensor_numel(x) && fabs(l - r) <= 1e-12 * (1 + fabs(l)), "%s: <w, f(x)> %.15g = <f_bwd(w), x> %.15g", name, l, r);
    tensor_unref(lhs);
    tensor_unref(gi);
}

/* g's IR text (ir_print of the lowered module; malloc'd, NULL on failure) */
static char *ir_text(Graph *g) {
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char *txt = m ? ir_print(m) : NULL;
    if (!m) { diag("lowering: %s", ctx->err.msg); mi_clear_err(ctx); }
    ir_free(m);
    return txt;
}

/* g compiled to C: every output equal to the interpreter's */
static void c_agrees(const char *name, Graph *g, Tensor **ins, int n) {
    ok(cc_c_agrees(ctx, g, ins, n, 1e-6), "%s: the compiled C module agrees with the interpreter", name);
}

/* g's CUDA source, built by nvcc where it is installed */
static void cuda_builds(const char *name, Graph *g) {
    ctx->target = MI_DEV_CUDA;
    CgBuild b;
    cg_compile(ctx, g, &b, CG_SOURCE);
    ctx->target = MI_DEV_CPU;
    if (!ok(b.src != NULL, "%s: CUDA source generated", name)) { diag("%s", ctx->err.msg); mi_clear_err(ctx); }
    tf_nvcc_ok(name, b.src);
    cg_free(&b);
}

static void compiled_agrees(const char *name, Graph *g, Tensor **ins, int n) {
    c_agrees(name, g, ins, n);
    cuda_builds(name, g);
}

/* ---- bitwise shifts ---- */
static void test_shifts(void) {
    Tensor *a = TD(DT_I8, 1, (int64_t[]){6}, (double[]){1, -1, 5, -128, 100, -7});
    Tensor *b = TD(DT_I8, 1, (int64_t[]){6}, (double[]){7, 3, 9, -1, 2, 100});
    Tensor *c = TD(DT_I32, 1, (int64_t[]){6}, (double[]){1, 5, 3, -1, 7, -100});
    const char *p = "a: \"i8[6][1]cpu\", b: \"i8[6][1]cpu\", c: \"i32[6][1]cpu\"";
    check("int8 a << b: 1 << 7 wraps to -128, -1 << 3 = -8, counts 9, -1 and 100 give 0, 100 << 2 wraps to -112", p,
          "        r: \"i8[6][1]cpu\" = torch.ops.aten.bitwise_left_shift.Tensor(a, b)\n", (Tensor *[]){a, b, c}, 3,
          (double[]){-128, -8, 0, 0, -112, 0}, 6, 0);
    check("int8 a >> b: counts out of [0, 8) shift by 7 (the sign): 5 >> 9 = 0, -128 >> -1 = -1, -7 >> 100 = -1", p,
          "        r: \"i8[6][1]cpu\" = torch.ops.aten.bitwise_right_shift.Tensor(a, b)\n", (Tensor *[]){a, b, c}, 3,
          (double[]){0, -1, 0, -1, 25, -1}, 6, 0);
    check("int32 c << 30 (__lshift__.Scalar) keeps the low 32 bits: 5 << 30 = 2^30, 3 << 30 = -2^30, -100 << 30 = 0", p,
          "        r: \"i32[6][1]cpu\" = torch.ops.aten.__lshift__.Scalar(c, 30)\n", (Tensor *[]){a, b, c}, 3,
          (double[]){1073741824, 1073741824, -1073741824, -1073741824, -1073741824, 0}, 6, 0);
    check("int32 c >> 2 (__rshift__.Scalar) is arithmetic: -1 >> 2 = -1, -100 >> 2 = -25", p,
          "        r: \"i32[6][1]cpu\" = torch.ops.aten.__rshift__.Scalar(c, 2)\n", (Tensor *[]){a, b, c}, 3,
          (double[]){0, 1, 0, -1, 1, -25}, 6, 0);
    check("3 << c (Scalar_Tensor) stays int32: negative counts give 0", p,
          "        r: \"i32[6][1]cpu\" = torch.ops.aten.bitwise_left_shift.Scalar_Tensor(3, c)\n", (Tensor *[]){a, b, c}, 3,
          (double[]){6, 96, 24, 0, 384, 0}, 6, 0);
    Tensor *u = TD(DT_U8, 1, (int64_t[]){3}, (double[]){200, 255, 17});
    Tensor *k = TD(DT_U8, 1, (int64_t[]){3}, (double[]){1, 8, 200});
    check("uint8: 200 << 1 wraps to 144, 255 >> 8 = 0 (no sign), counts >= 8 give 0",
          "u: \"u8[3][1]cpu\", k: \"u8[3][1]cpu\"",
          "        l = torch.ops.aten.bitwise_left_shift.Tensor(u, k)\n        s = torch.ops.aten.bitwise_right_shift.Tensor(u, k)\n"
          "        r = torch.ops.aten.add.Tensor(l, s)\n", (Tensor *[]){u, k}, 2, (double[]){144 + 100, 0, 0}, 3, 0);
    Graph *g = graph_src("class G(torch.nn.Module):\n    def forward(self, a: \"i8[6][1]cpu\", b: \"i8[6][1]cpu\", c: \"i32[6][1]cpu\"):\n"
                         "        l: \"i8[6][1]cpu\" = torch.ops.aten.bitwise_left_shift.Tensor(a, b)\n"
                         "        h: \"i8[6][1]cpu\" = torch.ops.aten.bitwise_right_shift.Tensor(a, b)\n"
                         "        s: \"i32[6][1]cpu\" = torch.ops.aten.__lshift__.Scalar(c, 30)\n"
                         "        t: \"i32[6][1]cpu\" = torch.ops.aten.__rshift__.Tensor(c, c)\n"
                         "        u: \"i32[6][1]cpu\" = torch.ops.aten.bitwise_left_shift.Scalar_Tensor(3, c)\n"
                         "        return (l, h, s, t, u)\n");
    char *txt = ir_text(g);
    ok(txt && strstr(txt, "ops.bitwise_left_shift(") && strstr(txt, "ops.bitwise_right_shift("), "the IR calls ops.bitwise_left_shift / bitwise_right_shift (Inductor's names)");
    free(txt);
    compiled_agrees("shifts", g, (Tensor *[]){a, b, c}, 3);
    graph_free(g);
    tensor_unref(a); tensor_unref(b); tensor_unref(c); tensor_unref(u); tensor_unref(k);
}

/* ---- embedding bag backward ---- */
static void test_embedding_bag_backward(void) {
    /* indices [1, 1, 2, 0], offsets [0, 2] (bags {1, 1}, {2, 0}), grad rows g0 = [1, 2], g1 = [10, 20] */
    Tensor *g = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 10, 20});
    Tensor *ix = TD(DT_I64, 1, (int64_t[]){4}, (double[]){1, 1, 2, 0}), *off = TD(DT_I64, 1, (int64_t[]){2}, (double[]){0, 2});
    Tensor *o2b = TD(DT_I64, 1, (int64_t[]){4}, (double[]){0, 0, 1, 1}), *empty = TD(DT_I64, 1, (int64_t[]){0}, NULL);
    Tensor *bs = TD(DT_I64, 1, (int64_t[]){2}, (double[]){2, 2}), *mx = TD(DT_I64, 2, (int64_t[]){2, 2}, (double[]){1, 1, 2, 0});
    const char *p = "g: \"f32[2, 2][2, 1]cpu\", i: \"i64[4][1]cpu\", o: \"i64[2][1]cpu\", b: \"i64[4][1]cpu\", s: \"i64[2][1]cpu\", m: \"i64[2, 2][2, 1]cpu\"";
    Tensor *ins[6] = {g, ix, off, o2b, bs, mx};
    check("_embedding_bag_backward sum: row 1 = 2 g0, row 2 = row 0 = g1, row 3 untouched", p,
          "        r = torch.ops.aten._embedding_bag_backward.default(g, i, o, b, s, m, 4, False, 0, False, None)\n", ins, 6,
          (double[]){10, 20, 2, 4, 10, 20, 0, 0}, 8, 0);
    check("... mean: each divided by its bag's size 2", p,
          "        r = torch.ops.aten._embedding_bag_backward.default(g, i, o, b, s, m, 4, False, 1, False, None)\n", ins, 6,
          (double[]){5, 10, 1, 2, 5, 10, 0, 0}, 8, 0);
    check("... max: g[bag][d] to row maximum_indices[bag][d] (row 1 <- g0, row 2 col 0 and row 0 col 1 <- g1)", p,
          "        r = torch.ops.aten._embedding_bag_backward.default(g, i, o, b, s, m, 4, False, 2, False, None)\n", ins, 6,
          (double[]){0, 20, 1, 2, 10, 0, 0, 0}, 8, 0);
    check("... padding_idx 1: row 1 gets nothing", p,
          "        r = torch.ops.aten._embedding_bag_backward.default(g, i, o, b, s, m, 4, False, 0, False, None, 1)\n", ins, 6,
          (double[]){10, 20, 0, 0, 10, 20, 0, 0}, 8, 0);
    /* scale_grad_by_freq: counts {0: 1, 1: 2, 2: 1}; sorted indices [0, 1, 1, 2]; distinct index u
     * is divided by counts[sorted[u]]: u 0 (row 0) by counts[0] = 1, u 1 (row 1) by counts[1] = 2,
     * u 2 (row 2) by counts[sorted[2] = 1] = 2 -- ATen's CPU kernel, not the row's own count 1 */
    check("... scale_grad_by_freq divides as the CPU kernel does (row 2 by counts[sorted[2]] = 2)", p,
          "        r = torch.ops.aten._embedding_bag_backward.default(g, i, o, b, s, m, 4, True, 0, False, None)\n", ins, 6,
          (double[]){10, 20, 1, 2, 5, 10, 0, 0}, 8, 0);
    Tensor *ins_e[6] = {g, ix, off, empty, bs, mx};
    check("... an empty offset2bag (the CPU forward's fast path) is rebuilt from the offsets",
          "g: \"f32[2, 2][2, 1]cpu\", i: \"i64[4][1]cpu\", o: \"i64[2][1]cpu\", b: \"i64[0][1]cpu\", s: \"i64[2][1]cpu\", m: \"i64[2, 2][2, 1]cpu\"",
          "        r = torch.ops.aten._embedding_bag_backward.default(g, i, o, b, s, m, 4, False, 0, False, None)\n", ins_e, 6,
          (double[]){10, 20, 2, 4, 10, 20, 0, 0}, 8, 0);
    Tensor *psw = TD(DT_F32, 1, (int64_t[]){4}, (double[]){1, 0.5, 2, -1});
    check("_embedding_bag_dense_backward with per_sample_weights: row 1 = 1.5 g0, row 2 = 2 g1, row 0 = -g1",
          "g: \"f32[2, 2][2, 1]cpu\", i: \"i64[4][1]cpu\", b: \"i64[4][1]cpu\", s: \"i64[2][1]cpu\", m: \"i64[2, 2][2, 1]cpu\", w: \"f32[4][1]cpu\"",
          "        r = torch.ops.aten._embedding_bag_dense_backward.default(g, i, b, s, m, 4, False, 0, w)\n",
          (Tensor *[]){g, ix, o2b, bs, mx, psw}, 6, (double[]){-10, -20, 1.5, 3, 20, 40, 0, 0}, 8, 0);
    Tensor *wt = TD(DT_F32, 2, (int64_t[]){3, 2}, (double[]){1, 0, 0, 1, 2, 3});
    check("_embedding_bag_per_sample_weights_backward: grad[bag] . weight[index] = [2, 2, 80, 10]",
          "g: \"f32[2, 2][2, 1]cpu\", w: \"f32[3, 2][2, 1]cpu\", i: \"i64[4][1]cpu\", o: \"i64[2][1]cpu\", b: \"i64[0][1]cpu\"",
          "        r = torch.ops.aten._embedding_bag_per_sample_weights_backward.default(g, w, i, o, b, 0)\n",
          (Tensor *[]){g, wt, ix, off, empty}, 5, (double[]){2, 2, 80, 10}, 4, 0);
    /* the adjoint of the forward: sum / mean with include_last_offset and an empty bag, f64 */
    Tensor *W = TS(DT_F64, 2, (int64_t[]){5, 3}, 0.9), *G = TS(DT_F64, 2, (int64_t[]){3, 3}, 1.7);
    Tensor *I = TD(DT_I64, 1, (int64_t[]){7}, (double[]){4, 0, 0, 2, 3, 1, 4}), *O = TD(DT_I64, 1, (int64_t[]){4}, (double[]){0, 3, 3, 7});
    for (int mode = 0; mode < 2; mode++) {
        char params[300], fwd[600], bwd[600];
        snprintf(params, sizeof params, "x: \"f64[5, 3][3, 1]cpu\", w: \"f64[3, 3][3, 1]cpu\", i: \"i64[7][1]cpu\", o: \"i64[4][1]cpu\"");
        snprintf(fwd, sizeof fwd, "        e = torch.ops.aten._embedding_bag.default(x, i, o, False, %d, False, None, True)\n        u = e[0]\n", mode);
        snprintf(bwd, sizeof bwd, "        e = torch.ops.aten._embedding_bag.default(x, i, o, False, %d, False, None, True)\n"
                 "        e1 = e[1]\n        e2 = e[2]\n        e3 = e[3]\n"
                 "        r = torch.ops.aten._embedding_bag_backward.default(w, i, o, e1, e2, e3, 5, False, %d, False, None)\n", mode, mode);
        char body[1200];
        snprintf(body, sizeof body, "%s        m = torch.ops.aten.mul.Tensor(u, w)\n        r = torch.ops.aten.sum.default(m)\n", fwd);
        Tensor *lhs = run1(params, body, (Tensor *[]){W, G, I, O}, 4), *gi = run1(params, bwd, (Tensor *[]){W, G, I, O}, 4);
        double l = lhs ? tensor_get_f(lhs, 0) : NAN, r = dot(gi, W);
        ok(lhs && gi && fabs(l - r) < 1e-12, "_embedding_bag_backward %s (include_last_offset, an empty bag) is the adjoint of _embedding_bag: %.15g = %.15g",
           mode ? "mean" : "sum", l, r);
        tensor_unref(lhs); tensor_unref(gi);
    }
    /* compiled: the DLRM backward's shape (an empty offset2bag) as a FallbackKernel */
    Graph *cg = graph_src("class G(torch.nn.Module):\n    def forward(self, g: \"f32[2, 2][2, 1]cpu\", i: \"i64[4][1]cpu\", o: \"i64[2][1]cpu\", "
                          "b: \"i64[0][1]cpu\", s: \"i64[2][1]cpu\", m: \"i64[2, 2][2, 1]cpu\"):\n"
                          "        h: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(g, 2.0)\n"
                          "        r: \"f32[4, 2][2, 1]cpu\" = torch.ops.aten._embedding_bag_backward.default(h, i, o, b, s, m, 4, False, 0, False, None)\n"
                          "        q: \"f32[4, 2][2, 1]cpu\" = torch.ops.aten.add.Tensor(r, 1.0)\n"
                          "        return (q,)\n");
    compiled_agrees("_embedding_bag_backward between two kernels", cg, ins_e, 6);
    graph_free(cg);
    Tensor *all[] = {g, ix, off, o2b, empty, bs, mx, psw, wt, W, G, I, O};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tensor_unref(all[k]);
}

/* ---- pool / pad backwards ---- */
static void test_pool_pad_backward(void) {
    Tensor *g5 = TD(DT_F32, 3, (int64_t[]){1, 1, 5}, (double[]){1, 2, 3, 4, 5}), *x2 = TD(DT_F32, 3, (int64_t[]){1, 1, 2}, NULL);
    check("replication_pad1d_backward [1, 2] over 2 inputs: [1 + 2, 3 + 4 + 5]", "g: \"f32[1, 1, 5][5, 5, 1]cpu\", x: \"f32[1, 1, 2][2, 2, 1]cpu\"",
          "        r = torch.ops.aten.replication_pad1d_backward.default(g, x, [1, 2])\n", (Tensor *[]){g5, x2}, 2, (double[]){3, 12}, 2, 0);
    tensor_unref(g5); tensor_unref(x2);
    Tensor *x = TS(DT_F64, 4, (int64_t[]){2, 3, 5, 7}, 1.3), *w;
    w = TS(DT_F64, 4, (int64_t[]){2, 3, 5 + 3, 7 + 3}, 0.7);
    adjoint("replication_pad2d_backward [1, 2, 3, 0]", "x: \"f64[2, 3, 5, 7]\", w: \"f64[2, 3, 8, 10]\"",
            "        u = torch.ops.aten.replication_pad2d.default(x, [1, 2, 3, 0])\n",
            "        r = torch.ops.aten.replication_pad2d_backward.default(w, x, [1, 2, 3, 0])\n", x, w);
    tensor_unref(w);
    w = TS(DT_F64, 4, (int64_t[]){2, 3, 3, 4}, 0.7);
    adjoint("adaptive_max_pool2d_backward 5x7 -> 3x4 (overlapping windows)", "x: \"f64[2, 3, 5, 7]\", w: \"f64[2, 3, 3, 4]\"",
            "        p = torch.ops.aten.adaptive_max_pool2d.default(x, [3, 4])\n        u = p[0]\n",
            "        p = torch.ops.aten.adaptive_max_pool2d.default(x, [3, 4])\n        p1 = p[1]\n        r = torch.ops.aten.adaptive_max_pool2d_backward.default(w, x, p1)\n", x, w);
    tensor_unref(w);
    w = TS(DT_F64, 4, (int64_t[]){2, 3, 3, 3}, 0.4);
    Tensor *rs = TD(DT_F64, 3, (int64_t[]){2, 3, 2}, (double[]){0.1, 0.7, 0.3, 0.9, 0.5, 0.2, 0.8, 0.4, 0.6, 0.05, 0.95, 0.35});
    char bwd[600];
    snprintf(bwd, sizeof bwd, "        p = torch.ops.aten.fractional_max_pool2d.default(x, [2, 2], [3, 3], s)\n"
             "        p1 = p[1]\n        r = torch.ops.aten.fractional_max_pool2d_backward.default(w, x, [2, 2], [3, 3], p1)\n");
    {
        const char *params = "x: \"f64[2, 3, 5, 7]\", w: \"f64[2, 3, 3, 3]\", s: \"f64[2, 3, 2]\"";
        Tensor *lhs = run1(params, "        p = torch.ops.aten.fractional_max_pool2d.default(x, [2, 2], [3, 3], s)\n        u = p[0]\n"
                           "        m = torch.ops.aten.mul.Tensor(u, w)\n        r = torch.ops.aten.sum.default(m)\n", (Tensor *[]){x, w, rs}, 3);
        Tensor *gi = run1(params, bwd, (Tensor *[]){x, w, rs}, 3);
        double l = lhs ? tensor_get_f(lhs, 0) : NAN, r = dot(gi, x);
        ok(lhs && gi && fabs(l - r) < 1e-12, "fractional_max_pool2d_backward is the adjoint of the pool with its indices fixed: %.15g = %.15g", l, r);
        tensor_unref(lhs); tensor_unref(gi);
    }
    tensor_unref(w); tensor_unref(rs); tensor_unref(x);
    Tensor *x3 = TS(DT_F64, 5, (int64_t[]){1, 2, 4, 5, 6}, 1.1), *w3 = TS(DT_F64, 5, (int64_t[]){1, 2, 3, 2, 4}, 0.3);
    adjoint("adaptive_max_pool3d_backward 4x5x6 -> 3x2x4", "x: \"f64[1, 2, 4, 5, 6]\", w: \"f64[1, 2, 3, 2, 4]\"",
            "        p = torch.ops.aten.adaptive_max_pool3d.default(x, [3, 2, 4])\n        u = p[0]\n",
            "        p = torch.ops.aten.adaptive_max_pool3d.default(x, [3, 2, 4])\n        p1 = p[1]\n        r = torch.ops.aten.adaptive_max_pool3d_backward.default(w, x, p1)\n", x3, w3);
    tensor_unref(w3);
    w3 = TS(DT_F64, 5, (int64_t[]){1, 2, 6, 8, 7}, 0.3);
    adjoint("replication_pad3d_backward [0, 1, 2, 1, 1, 1]", "x: \"f64[1, 2, 4, 5, 6]\", w: \"f64[1, 2, 6, 8, 7]\"",
            "        u = torch.ops.aten.replication_pad3d.default(x, [0, 1, 2, 1, 1, 1])\n",
            "        r = torch.ops.aten.replication_pad3d_backward.default(w, x, [0, 1, 2, 1, 1, 1])\n", x3, w3);
    tensor_unref(w3); tensor_unref(x3);
}

/* ---- upsample backwards ---- */
static void test_upsample_backward(void) {
    Tensor *g4 = TD(DT_F32, 3, (int64_t[]){1, 1, 4}, (double[]){1, 1, 1, 1}), *x2 = TD(DT_F32, 3, (int64_t[]){1, 1, 2}, NULL);
    check("upsample_linear1d_backward 2 -> 4, no align: weights (1, .75+.25, .25+.75, 1) split -> [2, 2]",
          "g: \"f32[1, 1, 4][4, 4, 1]cpu\", x: \"f32[1, 1, 2][2, 2, 1]cpu\"",
          "        r = torch.ops.aten.upsample_linear1d_backward.default(g, [4], [1, 1, 2], False)\n", (Tensor *[]){g4, x2}, 2, (double[]){2, 2}, 2, 1e-7);
    tensor_unref(g4); tensor_unref(x2);
    static const struct { const char *op; int nsp; int64_t in[3], out[3]; } cs[] = {
        {"upsample_linear1d", 1, {5}, {9}}, {"upsample_linear1d", 1, {7}, {3}},
        {"upsample_bilinear2d", 2, {4, 5}, {7, 3}}, {"upsample_trilinear3d", 3, {3, 4, 2}, {5, 2, 3}},
        {"upsample_bicubic2d", 2, {4, 5}, {9, 3}}, {"upsample_bicubic2d", 2, {6, 3}, {4, 7}},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (int align = 0; align < 2; align++) {
            int nsp = cs[c].nsp;
            int64_t xs[5] = {2, 3}, ws[5] = {2, 3};
            char xsz[64] = "2, 3", wsz[64] = "2, 3", osz[32] = "", isz[64] = "2, 3";
            for (int i = 0; i < nsp; i++) {
                xs[2 + i] = cs[c].in[i]; ws[2 + i] = cs[c].out[i];
                snprintf(xsz + strlen(xsz), sizeof xsz - strlen(xsz), ", %lld", (long long)cs[c].in[i]);
                snprintf(isz + strlen(isz), sizeof isz - strlen(isz), ", %lld", (long long)cs[c].in[i]);
                snprintf(wsz + strlen(wsz), sizeof wsz - strlen(wsz), ", %lld", (long long)cs[c].out[i]);
                snprintf(osz + strlen(osz), sizeof osz - strlen(osz), "%s%lld", i ? ", " : "", (long long)cs[c].out[i]);
            }
            Tensor *x = TS(DT_F64, nsp + 2, xs, 1.3), *w = TS(DT_F64, nsp + 2, ws, 0.7);
            char params[200], fwd[300], bwd[300], name[160];
            snprintf(params, sizeof params, "x: \"f64[%s]\", w: \"f64[%s]\"", xsz, wsz);
            snprintf(fwd, sizeof fwd, "        u = torch.ops.aten.%s.default(x, [%s], %s)\n", cs[c].op, osz, align ? "True" : "False");
            snprintf(bwd, sizeof bwd, "        r = torch.ops.aten.%s_backward.default(w, [%s], [%s], %s)\n", cs[c].op, osz, isz, align ? "True" : "False");
            snprintf(name, sizeof name, "%s_backward [%s] -> [%s] align_corners=%d", cs[c].op, xsz + 6, osz, align);
            adjoint(name, params, fwd, bwd, x, w);
            tensor_unref(x); tensor_unref(w);
        }
    /* scales given (the vec-style factors reach the backward as scales_h / scales_w) */
    Tensor *x = TS(DT_F64, 4, (int64_t[]){1, 2, 3, 5}, 0.9), *w = TS(DT_F64, 4, (int64_t[]){1, 2, 7, 11}, 0.4);
    adjoint("upsample_bilinear2d_backward with scales 2.5, 2.25", "x: \"f64[1, 2, 3, 5]\", w: \"f64[1, 2, 7, 11]\"",
            "        u = torch.ops.aten.upsample_bilinear2d.default(x, [7, 11], False, 2.5, 2.25)\n",
            "        r = torch.ops.aten.upsample_bilinear2d_backward.default(w, [7, 11], [1, 2, 3, 5], False, 2.5, 2.25)\n", x, w);
    tensor_unref(x); tensor_unref(w);
    for (int cubic = 0; cubic < 2; cubic++)
        for (int down = 0; down < 2; down++) {
            int64_t in[2] = {down ? 9 : 4, down ? 10 : 5}, out[2] = {down ? 4 : 7, down ? 3 : 9};
            Tensor *xa = TS(DT_F64, 4, (int64_t[]){1, 2, in[0], in[1]}, 1.7), *wa = TS(DT_F64, 4, (int64_t[]){1, 2, out[0], out[1]}, 0.6);
            char params[200], fwd[300], bwd[300], name[160];
            const char *op = cubic ? "_upsample_bicubic2d_aa" : "_upsample_bilinear2d_aa";
            snprintf(params, sizeof params, "x: \"f64[1, 2, %lld, %lld]\", w: \"f64[1, 2, %lld, %lld]\"", (long long)in[0], (long long)in[1], (long long)out[0], (long long)out[1]);
            snprintf(fwd, sizeof fwd, "        u = torch.ops.aten.%s.default(x, [%lld, %lld], False)\n", op, (long long)out[0], (long long)out[1]);
            snprintf(bwd, sizeof bwd, "        r = torch.ops.aten.%s_backward.default(w, [%lld, %lld], [1, 2, %lld, %lld], False)\n", op,
                     (long long)out[0], (long long)out[1], (long long)in[0], (long long)in[1]);
            snprintf(name, sizeof name, "%s_backward %s (%lldx%lld -> %lldx%lld)", op, down ? "down" : "up", (long long)in[0], (long long)in[1], (long long)out[0], (long long)out[1]);
            adjoint(name, params, fwd, bwd, xa, wa);
            tensor_unref(xa); tensor_unref(wa);
        }
}

/* ---- _fused_rms_norm ---- */
static void test_fused_rms_norm(void) {
    Tensor *x = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){3, 4, 1, -1}), *w = TD(DT_F32, 1, (int64_t[]){2}, (double[]){2, 0.5});
    /* row [3, 4]: mean square 12.5; row [1, -1]: 1 */
    double r0 = 1 / sqrt(12.5), r1 = 1;
    check("_fused_rms_norm: x * rsqrt(mean(x^2) + 0) * w", "x: \"f32[2, 2][2, 1]cpu\", w: \"f32[2][1]cpu\"",
          "        t = torch.ops.aten._fused_rms_norm.default(x, [2], w, 0.0)\n        r = t[0]\n", (Tensor *[]){x, w}, 2,
          (double[]){3 * r0 * 2, 4 * r0 * 0.5, 1 * r1 * 2, -1 * r1 * 0.5}, 4, 1e-6);
    check("... its rstd [2, 1] (eps None: float32's epsilon)", "x: \"f32[2, 2][2, 1]cpu\", w: \"f32[2][1]cpu\"",
          "        t = torch.ops.aten._fused_rms_norm.default(x, [2], w, None)\n        r = t[1]\n", (Tensor *[]){x, w}, 2,
          (double[]){1 / sqrt(12.5 + 1.1920928955078125e-07), 1 / sqrt(1 + 1.1920928955078125e-07)}, 2, 1e-7);
    tensor_unref(x); tensor_unref(w);
    /* the backward against central differences of sum(g * forward) in float64 */
    Tensor *X = TS(DT_F64, 3, (int64_t[]){2, 3, 4}, 1.1), *W = TS(DT_F64, 2, (int64_t[]){3, 4}, 0.5), *G = TS(DT_F64, 3, (int64_t[]){2, 3, 4}, 0.8);
    for (int64_t i = 0; i < 12; i++) tensor_set_f(W, i, 1 + tensor_get_f(W, i));
    const char *params = "x: \"f64[2, 3, 4]\", w: \"f64[3, 4]\", g: \"f64[2, 3, 4]\"";
    const char *fwd = "        t = torch.ops.aten._fused_rms_norm.default(x, [3, 4], w, 1e-05)\n        t0 = t[0]\n        m = torch.ops.aten.mul.Tensor(t0, g)\n"
                      "        r = torch.ops.aten.sum.default(m)\n";
    int nb = 0;
    Graph *bg = og_graph(ctx, params, "        t = torch.ops.aten._fused_rms_norm.default(x, [3, 4], w, 1e-05)\n"
                         "        t1 = t[1]\n        b = torch.ops.aten._fused_rms_norm_backward.default(g, x, [3, 4], t1, w, [True, True])\n"
                         "        gi = b[0]\n        gw = b[1]\n", "gi, gw");
    IValue *bo = interp(bg, (Tensor *[]){X, W, G}, 3, &nb);
    double worst = 0;
    for (int which = 0; which < 2 && bo && nb == 2; which++) {
        Tensor *t = which ? W : X, *grad = bo[which].t;
        for (int64_t i = 0; i < tensor_numel(t); i++) {
            double v = tensor_get_f(t, i), h = 1e-6;
            tensor_set_f(t, i, v + h);
            Tensor *fp = run1(params, fwd, (Tensor *[]){X, W, G}, 3);
            tensor_set_f(t, i, v - h);
            Tensor *fm = run1(params, fwd, (Tensor *[]){X, W, G}, 3);
            tensor_set_f(t, i, v);
            double fd = fp && fm ? (tensor_get_f(fp, 0) - tensor_get_f(fm, 0)) / (2 * h) : NAN, e = fabs(fd - tensor_get_f(grad, i));
            if (!(e <= worst)) worst = e;
            if (e > 1e-7) diag("%s[%lld]: differences %.9g, backward %.9g", which ? "w" : "x", (long long)i, fd, tensor_get_f(grad, i));
            tensor_unref(fp); tensor_unref(fm);
        }
    }
    ok(bo && nb == 2 && worst < 1e-7, "_fused_rms_norm_backward (normalized over [3, 4]) matches central differences of the forward: max error %.3g", worst);
    if (bo) interp_free_outputs(bo, nb);
    graph_free(bg);
    /* the decomposition's text: mean over the normalized dims listed last first */
    Graph *dg = og_graph(ctx, params, "        t = torch.ops.aten._fused_rms_norm.default(x, [3, 4], w, 1e-05)\n        r = t[0]\n", "r");
    ok(dg && decompose_graph(ctx, dg) >= 1, "decompose_graph rewrites _fused_rms_norm");
    char *txt = dg ? fx_print(dg, false) : NULL;
    ok(txt && strstr(txt, "torch.ops.aten.mean.dim(pow_1, [2, 1], True)") && strstr(txt, "torch.ops.aten.add.Scalar(mean, 1e-05)") &&
       strstr(txt, "torch.ops.aten.rsqrt.default(add)"), "... as decompositions._fused_rms_norm: pow, mean.dim([2, 1], keepdim), add.Scalar(eps), rsqrt");
    if (!txt || !strstr(txt, "[2, 1], True")) diag("%s", txt ? txt : ctx->err.msg);
    free(txt);
    graph_free(dg);
    tensor_unref(X); tensor_unref(W); tensor_unref(G);
}

/* ---- repeat_interleave.Tensor ---- */
static void test_repeat_interleave(void) {
    Tensor *r = TD(DT_I64, 1, (int64_t[]){4}, (double[]){2, 0, 3, 1});
    check("repeat_interleave.Tensor [2, 0, 3, 1] -> [0, 0, 2, 2, 2, 3]", "q: \"i64[4][1]cpu\"",
          "        r = torch.ops.aten.repeat_interleave.Tensor(q)\n", &r, 1, (double[]){0, 0, 2, 2, 2, 3}, 6, 0);
    Graph *g = og_graph(ctx, "r: \"i64[4][1]cpu\"", "        o: \"i64[6][1]cpu\" = torch.ops.aten.repeat_interleave.Tensor(r, output_size = 6)\n", "o");
    int n0 = 0, n1 = 0;
    IValue *k = interp(g, &r, 1, &n0);
    ok(g && decompose_graph(ctx, g) == 1, "decompose_graph applies Inductor's decomposition when output_size is an int");
    char *txt = g ? fx_print(g, false) : NULL;
    ok(txt && strstr(txt, "torch.ops.aten.cumsum.default(r, 0)") && strstr(txt, "torch.ops.prims.iota.default(6, start = 0, step = 1, dtype = torch.int64") &&
       strstr(txt, "torch.ops.aten.searchsorted.Tensor(cumsum, iota, right = True)") && strstr(txt, "torch.ops.aten.clamp_max.default(searchsorted, 3)") &&
       !strstr(txt, "repeat_interleave.Tensor"), "... cumsum, iota, searchsorted(right=True), clamp_max(n - 1)");
    if (txt && !strstr(txt, "clamp_max")) diag("%s", txt);
    free(txt);
    IValue *d = interp(g, &r, 1, &n1);
    ok(k && d && n0 == 1 && n1 == 1 && tensor_compare(k[0].t, d[0].t, 0, 0).ok, "... whose values equal the kernel's");
    if (k) interp_free_outputs(k, n0);
    if (d) interp_free_outputs(d, n1);
    graph_free(g);
    g = og_graph(ctx, "r: \"i64[4][1]cpu\"", "        o = torch.ops.aten.repeat_interleave.Tensor(r)\n", "o");
    ok(g && decompose_graph(ctx, g) == 0, "without output_size the op stays (Inductor's FallbackKernel with an unbacked size)");
    graph_free(g);
    Tensor *x = TD(DT_F32, 2, (int64_t[]){4, 2}, NULL);
    Graph *cg = graph_src("class G(torch.nn.Module):\n    def forward(self, r: \"i64[4][1]cpu\", x: \"f32[4, 2][2, 1]cpu\"):\n"
                          "        o: \"i64[6][1]cpu\" = torch.ops.aten.repeat_interleave.Tensor(r, output_size = 6)\n"
                          "        s: \"f32[6, 2][2, 1]cpu\" = torch.ops.aten.index_select.default(x, 0, o)\n"
                          "        t: \"f32[6, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(s, 3.0)\n"
                          "        return (o, t)\n");
    compiled_agrees("repeat_interleave + index_select", cg, (Tensor *[]){r, x}, 2);
    graph_free(cg);
    tensor_unref(x);
    tensor_unref(r);
}

/* ---- randint ---- */
static void test_randint(void) {
    Graph *g = graph_src("class G(torch.nn.Module):\n    def forward(self):\n"
                         "        a = torch.ops.aten.randint.low(-3, 4, [200])\n"
                         "        b = torch.ops.aten.randint.default(5, [3, 40], dtype = torch.int32)\n"
                         "        return (a, b)\n");
    int n = 0;
    IValue *o = interp(g, NULL, 0, &n);
    bool in_range = o && n == 2 && o[0].t->dtype == DT_I64 && o[1].t->dtype == DT_I32 && tensor_numel(o[1].t) == 120;
    bool lo_seen = false, hi_seen = false;
    for (int64_t i = 0; in_range && i < 200; i++) {
        double v = tensor_get_f(o[0].t, i);
        in_range = v >= -3 && v <= 3 && v == floor(v);
        lo_seen |= v == -3; hi_seen |= v == 3;
    }
    for (int64_t i = 0; in_range && i < 120; i++) in_range = tensor_get_f(o[1].t, i) >= 0 && tensor_get_f(o[1].t, i) <= 4;
    ok(in_range && lo_seen && hi_seen, "randint.low(-3, 4) gives int64 in [-3, 4) reaching both ends; randint(5, dtype=int32) int32 in [0, 5)");
    if (o) interp_free_outputs(o, n);
    ok(g && decompose_graph(ctx, g) == 1, "decompose_graph: randint.default -> randint.low(0, high, size, **kwargs) (decomposition.py randint)");
    char *txt = g ? fx_print(g, false) : NULL;
    ok(txt && strstr(txt, "torch.ops.aten.randint.low(0, 5, [3, 40], dtype = torch.int32)"), "... keeping dtype");
    free(txt);
    graph_free(g);
    /* replace_random's form: inductor_randint from a looked-up seed, fused into its consumer */
    g = graph_src("class G(torch.nn.Module):\n    def forward(self, x: \"i64[8, 50][50, 1]cpu\"):\n"
                  "        inductor_seeds_default: \"i64[1][1]cpu\" = torch.ops.prims.inductor_seeds.default(1, device(type='cpu'))\n"
                  "        inductor_lookup_seed_default: \"i64[][]cpu\" = torch.ops.prims.inductor_lookup_seed.default(inductor_seeds_default, 0)\n"
                  "        inductor_randint_default: \"i64[8, 50][50, 1]cpu\" = torch.ops.prims.inductor_randint.default(-2, 9, [8, 50], inductor_lookup_seed_default)\n"
                  "        add: \"i64[8, 50][50, 1]cpu\" = torch.ops.aten.add.Tensor(inductor_randint_default, x)\n"
                  "        return (add,)\n");
    char *ir = ir_text(g);
    ok(ir && strstr(ir, "ops.randint64(load, index_expr, index_expr_1, index_expr_2)") && strstr(ir, "torch.int64"),
       "inductor_randint lowers to ops.randint64(seed, offset, low, high) (lowering.py inductor_randint)");
    if (ir && !strstr(ir, "randint64")) diag("%s", ir);
    free(ir);
    Tensor *x = TD(DT_I64, 2, (int64_t[]){8, 50}, NULL);
    for (int64_t i = 0; i < 400; i++) tensor_set_f(x, i, 0);
    CompiledFx c;
    compile_fx_init(&c, g);
    IValue in = {.kind = IV_TENSOR, .t = tensor_ref(x)}, *co = NULL;
    int nc = 0, rc = g ? compile_fx(ctx, &c, CFX_BUILT) : -1;
    if (rc == 0) rc = rt_run(ctx, c.mod, g, &in, 1, &co, &nc, NULL);
    if (rc) { char e[1024]; diag("%s", mi_err_str(ctx, e, sizeof e)); mi_clear_err(ctx); }
    bool range = rc == 0 && nc == 1 && co[0].t->dtype == DT_I64, lo = false, hi = false;
    int64_t distinct = 0;
    for (int64_t i = 0; range && i < 400; i++) {
        int64_t v = tensor_get_i(co[0].t, i);
        range = v >= -2 && v < 9;
        lo |= v == -2; hi |= v == 8;
        distinct += i > 0 && v != tensor_get_i(co[0].t, i - 1);
    }
    ok(range && lo && hi && distinct > 300, "compiled C: the fused kernel's randint64 draws are int64 in [-2, 9), reaching both ends");
    ok(c.code && strstr(c.code, "mi_randint64("), "... through mi_randint64 (Philox)");
    if (co) interp_free_outputs(co, nc);
    tensor_unref(in.t);
    compile_fx_free(&c);
    cuda_builds("inductor_randint", g);
    graph_free(g);
    tensor_unref(x);
}

/* ---- _unsafe_masked_index_put_accumulate: indices clamped to [-size, size - 1], then wrapped ---- */
static void test_masked_index_put(void) {
    Tensor *x = TD(DT_F32, 1, (int64_t[]){4}, (double[]){0, 0, 0, 0}), *m = TD(DT_BOOL, 1, (int64_t[]){3}, (double[]){1, 1, 0});
    Tensor *i = TD(DT_I64, 1, (int64_t[]){3}, (double[]){-1, 7, 2}), *v = TD(DT_F32, 1, (int64_t[]){3}, (double[]){1, 2, 4});
    check("_unsafe_masked_index_put_accumulate: -1 wraps to 3, 7 clamps to 3, the masked-off 2 adds nothing -> [0, 0, 0, 3]",
          "x: \"f32[4][1]cpu\", m: \"b8[3][1]cpu\", i: \"i64[3][1]cpu\", v: \"f32[3][1]cpu\"",
          "        r = torch.ops.aten._unsafe_masked_index_put_accumulate.default(x, m, [i], v)\n", (Tensor *[]){x, m, i, v}, 4,
          (double[]){0, 0, 0, 3}, 4, 0);
    Graph *g = graph_src("class G(torch.nn.Module):\n    def forward(self, x: \"f32[4][1]cpu\", m: \"b8[3][1]cpu\", i: \"i64[3][1]cpu\", v: \"f32[3][1]cpu\"):\n"
                         "        r: \"f32[4][1]cpu\" = torch.ops.aten._unsafe_masked_index_put_accumulate.default(x, m, [i], v)\n"
                         "        return (r,)\n");
    char *txt = ir_text(g);
    ok(txt && strstr(txt, "where = ops.where(load_1, load_2, constant)") && strstr(txt, "'atomic_add')") && strstr(txt, "maximum = ops.maximum(load, index_expr)"),
       "lowered as lowering.py does: where(mask, values, 0) stored with atomic_add at clamp(index, -4, 3) into clone(x)");
    free(txt);
    compiled_agrees("_unsafe_masked_index_put_accumulate", g, (Tensor *[]){x, m, i, v}, 4);
    graph_free(g);
    tensor_unref(x); tensor_unref(m); tensor_unref(i); tensor_unref(v);
}

/* adaptive_max_pool2d lowered as lowering.py does (a window that does not divide) */
static void test_adaptive_max_lowering(void) {
    Graph *g = graph_src("class G(torch.nn.Module):\n    def forward(self, x: \"f32[2, 3, 5, 7][105, 35, 7, 1]cpu\"):\n"
                         "        p = torch.ops.aten.adaptive_max_pool2d.default(x, [3, 4])\n"
                         "        v: \"f32[2, 3, 3, 4][36, 12, 4, 1]cpu\" = p[0]\n"
                         "        i: \"i64[2, 3, 3, 4][36, 12, 4, 1]cpu\" = p[1]\n"
                         "        r: \"f32[2, 3, 3, 4][36, 12, 4, 1]cpu\" = torch.ops.aten.mul.Tensor(v, 2.0)\n"
                         "        return (r, i)\n");
    char *txt = ir_text(g);
    ok(txt && strstr(txt, "ops.gt(") && strstr(txt, "ops.maximum(") && !strstr(txt, "FallbackKernel"),
       "adaptive_max_pool2d 5x7 -> 3x4 lowers to two Pointwise (maximum, where(gt) of flat indices), no FallbackKernel");
    free(txt);
    Tensor *x = TS(DT_F32, 4, (int64_t[]){2, 3, 5, 7}, 2.3);
    compiled_agrees("adaptive_max_pool2d lowered", g, &x, 1);
    graph_free(g);
    tensor_unref(x);
}

/* random inputs: pivots that a solve reads are the identity pivots, so a backward graph that gets
 * its LU factorization as an input (Glow's invertible 1x1 conv: slogdet's backward) runs */
static void test_random_pivots(void) {
    Graph *g = graph_src("class G(torch.nn.Module):\n    def forward(self, lu: \"f32[3, 3][1, 3]cpu\", piv: \"i32[3][1]cpu\", b: \"f32[3, 2][2, 1]cpu\", ix: \"i64[3][1]cpu\"):\n"
                         "        x: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.linalg_lu_solve.default(lu, piv, b, adjoint = True)\n"
                         "        return (x, ix)\n");
    IValue *in = NULL;
    int n = 0;
    ok(g && interp_random_inputs(ctx, g, NULL, 0, &in, &n) == 0 && n == 4 && tensor_get_i(in[1].t, 0) == 1 && tensor_get_i(in[1].t, 1) == 2 &&
       tensor_get_i(in[1].t, 2) == 3 && tensor_get_i(in[3].t, 1) == 0, "random inputs: linalg_lu_solve's pivots are 1, 2, 3; other int inputs stay 0");
    int no = 0;
    IValue *o = NULL;
    ok(in && interp_run(ctx, g, in, n, &o, &no) == 0 && no == 2, "... and the solve runs on them");
    mi_clear_err(ctx);
    if (o) interp_free_outputs(o, no);
    if (in) interp_free_outputs(in, n);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_shifts();
    test_embedding_bag_backward();
    test_pool_pad_backward();
    test_upsample_backward();
    test_fused_rms_norm();
    test_repeat_interleave();
    test_randint();
    test_masked_index_put();
    test_random_pivots();
    test_adaptive_max_lowering();
    mi_ctx_free(ctx);
    return done_testing();
}
