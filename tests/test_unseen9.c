/* test_unseen9.c — the rules the ninth batch of unseen models needed, each checked on computed
 * values (hand values from PyTorch's definitions, the interpreter, the compiled C module, nvcc
 * on the CUDA source):
 *   - _adaptive_avg_pool2d_backward(grad_output, self) takes the pooled sizes from grad_output
 *     (cpu_adaptive_avgpool_nondivisible_train: the interpreter read `self` as output_size);
 *   - full with a SymInt fill value lowers as lowering.py's _full: ops.index_expr(value, dtype)
 *     (cpu_dynamic_reshape_chain: `new_zeros(b, t).fill_(t)`);
 *   - masked_scatter_backward (cpu_index_copy_fill_masked_scatter_train): ATen's
 *     masked_scatter_backward_symint, a FallbackKernel as in Inductor;
 *   - the window factories (cpu_stft_istft's hann_window): ATen's TensorFactories.cpp, periodic
 *     and symmetric, run as implicit FallbackKernels;
 *   - unbacked SymInts in compiled code (cpu_item_capture_scalar, cuda_masked_select_unbacked):
 *     u1 = x.item() of an input and of a computed buffer, u0 / u1 the sizes masked_select and
 *     nonzero return, defined where Inductor's wrapper defines them, before their users; the
 *     buffers and outputs they size allocated once known. */
#include "tap.h"
#include "fx_passes/passes.h"
#include "ir/ir.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "tests/support/codegen_check.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)

/* g's CUDA source built by nvcc (a skip without nvcc) */
#define nvcc_builds(name, g) CC_NVCC_POINT(ctx, name, g)

/* the graph of FX text fx, its ops resolved (NULL, diagnosed, when it does not parse) */
#define parsed(fx) cc_parsed(ctx, fx, "unseen9.py")

/* the interpreter's output 0 of g on ins equals want[0..n) within tol; `what` names the case */
static void interp_is(Graph *g, Tensor **ins, int nin, const double *want, int64_t n, double tol, const char *what) {
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, ins, nin, &no) : NULL;
    ok(o && no >= 1 && o[0].kind == IV_TENSOR && og_values(o[0].t, want, n, tol), "%s", what);
    if (o) interp_free_outputs(o, no);
}

/* ---- _adaptive_avg_pool2d_backward ---- */
static void test_adaptive_avg_backward(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, g: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", x: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\"):\n"
        "        b: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\" = torch.ops.aten._adaptive_avg_pool2d_backward.default(g, x)\n"
        "        return (b,)\n";
    Graph *g = parsed(fx);
    Tensor *gr = TD(DT_F32, 4, (int64_t[]){1, 1, 2, 2}, (double[]){1, 2, 3, 4}), *x = TD(DT_F32, 4, (int64_t[]){1, 1, 3, 3}, NULL);
    /* 3 -> 2 adaptive windows: rows [0, 2) and [1, 3) (floor(i * 3 / 2), ceil((i + 1) * 3 / 2)),
     * the same columns; each window has 4 elements, so x[i][j] = sum of g / 4 over the windows
     * covering it: the middle (1+2+3+4)/4, the corner 1/4 */
    interp_is(g, (Tensor *[]){gr, x}, 2, (double[]){0.25, 0.75, 0.5, 1.0, 2.5, 1.5, 0.75, 1.75, 1.0}, 9, 1e-6,
              "_adaptive_avg_pool2d_backward 3x3 <- 2x2 (non-divisible windows) by hand");
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){gr, x}, 2, 1e-6), "... the compiled C module (its FallbackKernel) agrees");
    tensor_unref(gr);
    tensor_unref(x);
    graph_free(g);
}

/* ---- full with a SymInt fill value ---- */
static void test_full_symint(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, s0: \"Sym(s0)\", s1: \"Sym(s1)\", x: \"f32[s0, s1][s1, 1]cpu\"):\n"
        "        full: \"f32[s0, s1][s1, 1]cpu\" = torch.ops.aten.full.default([s0, s1], s1, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        add: \"f32[s0, s1][s1, 1]cpu\" = torch.ops.aten.add.Tensor(full, x)\n"
        "        mul: \"Sym(s0*s1)\" = s0 * s1\n"
        "        full_1: \"i64[s0][1]cpu\" = torch.ops.aten.full.default([s0], mul, dtype = torch.int64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        return (add, full_1)\n";
    Graph *g = parsed(fx);
    IValue in[3] = {{.kind = IV_INT, .i = 2}, {.kind = IV_INT, .i = 3},
                    {.kind = IV_TENSOR, .t = TD(DT_F32, 2, (int64_t[]){2, 3}, (double[]){0.5, -1, 2, 0, 4, -3})}};
    IValue *o = NULL;
    int no = 0;
    bool ran = g && interp_run(ctx, g, in, 3, &o, &no) == 0 && no == 2;
    /* full(s1) + x: 3 + x; full([s0], s0 * s1): 6, 6 */
    ok(ran && og_values(o[0].t, (double[]){3.5, 2, 5, 3, 7, 0}, 6, 1e-6) && og_values(o[1].t, (double[]){6, 6}, 2, 0),
       "full with a SymInt fill value (s1, s0 * s1) by hand");
    if (o) interp_free_outputs(o, no);
    char why[256] = "";
    ok(g && lowering_supported(g, why, sizeof why), "full with a SymInt fill lowers (%s)", why);
    if (g) {
        CgBuild b;
        IValue *got = NULL;
        int ngot = 0;
        bool built = cg_compile(ctx, g, &b, 0) == 0;
        if (!built) diag("%s", ctx->err.msg);
        ok(built && rt_run(ctx, b.rt, g, in, 3, &got, &ngot, NULL) == 0 && ngot == 2 &&
               og_values(got[0].t, (double[]){3.5, 2, 5, 3, 7, 0}, 6, 1e-6) && og_values(got[1].t, (double[]){6, 6}, 2, 0),
           "... the compiled C module computes the same (the fill read from the sizes at run time)");
        interp_free_outputs(got, ngot);
        cg_free(&b);
        nvcc_builds("full with a SymInt fill", g);
    }
    ivalue_clear(&in[2]);
    graph_free(g);
}

/* ---- masked_scatter_backward ---- */
static void test_masked_scatter_backward(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, g: \"f32[2, 2][2, 1]cpu\", m: \"b8[2, 2][2, 1]cpu\", r: \"b8[2][1]cpu\"):\n"
        "        a: \"f32[3][1]cpu\" = torch.ops.aten.masked_scatter_backward.default(g, m, [3])\n"
        "        b: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.masked_scatter_backward.default(g, r, [2, 2])\n"
        "        c: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(b, 3)\n"
        "        return (a, c)\n";
    Graph *g = parsed(fx);
    Tensor *gr = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4}), *m = TD(DT_BOOL, 2, (int64_t[]){2, 2}, (double[]){1, 0, 0, 1}),
           *r = TD(DT_BOOL, 1, (int64_t[]){2}, (double[]){0, 1});
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, (Tensor *[]){gr, m, r}, 3, &no) : NULL;
    /* grad.masked_select(mask) = [1, 4], one zero appended to numel 3; the row mask [0, 1]
     * broadcast selects column 1: [2, 4], zeros to 4, viewed [2, 2], times 3 */
    ok(o && no == 2 && og_values(o[0].t, (double[]){1, 4, 0}, 3, 0) && og_values(o[1].t, (double[]){6, 12, 0, 0}, 4, 0),
       "masked_scatter_backward: the selected gradient, zero-padded to sizes (a broadcast mask too) by hand");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){gr, m, r}, 3, 0), "... the compiled C module (a FallbackKernel, then a Pointwise) agrees");
    if (g) nvcc_builds("masked_scatter_backward", g);
    tensor_unref(gr);
    tensor_unref(m);
    tensor_unref(r);
    graph_free(g);
}

/* ---- window factories ---- */
static void test_windows(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4][1]cpu\"):\n"
        "        a: \"f32[4][1]cpu\" = torch.ops.aten.hann_window.default(4, device = device(type='cpu'), pin_memory = False)\n"
        "        b: \"f32[5][1]cpu\" = torch.ops.aten.hann_window.periodic(5, False, device = device(type='cpu'), pin_memory = False)\n"
        "        c: \"f32[4][1]cpu\" = torch.ops.aten.hamming_window.default(4, device = device(type='cpu'), pin_memory = False)\n"
        "        d: \"f32[3][1]cpu\" = torch.ops.aten.blackman_window.periodic(3, False, device = device(type='cpu'), pin_memory = False)\n"
        "        e: \"f32[5][1]cpu\" = torch.ops.aten.bartlett_window.periodic(5, False, device = device(type='cpu'), pin_memory = False)\n"
        "        f: \"f32[4][1]cpu\" = torch.ops.aten.bartlett_window.default(4, device = device(type='cpu'), pin_memory = False)\n"
        "        g: \"f32[3][1]cpu\" = torch.ops.aten.kaiser_window.beta(3, False, 1.0, device = device(type='cpu'), pin_memory = False)\n"
        "        h: \"f32[1][1]cpu\" = torch.ops.aten.hann_window.default(1, device = device(type='cpu'), pin_memory = False)\n"
        "        m: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(x, a)\n"
        "        return (m, b, c, d, e, f, g, h)\n";
    Graph *g = parsed(fx);
    Tensor *x = TD(DT_F32, 1, (int64_t[]){4}, (double[]){2, 4, 6, 8});
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, &x, 1, &no) : NULL;
    /* periodic N: the symmetric window of N + 1 without its last point. hann(4) = 0.5 - 0.5 cos(pi k / 2)
     * = 0, .5, 1, .5 (times x); symmetric hann(5) 0, .5, 1, .5, 0; hamming(4) 0.54 - 0.46 cos(pi k / 2);
     * symmetric blackman(3) 0.42 - 0.5 cos(pi k) + 0.08 cos(2 pi k) = 0, 1, 0; bartlett 2k / (m - 1)
     * then 2 - 2k / (m - 1); kaiser(3, beta 1) I0(sqrt(1 - (k - 1)^2)) / I0(1) = 1 / I0(1) at the
     * ends (I0(1) = 1.2660658777520082); a window of 1 is [1] */
    const double ke = 1 / 1.2660658777520082;
    ok(o && no == 8 && og_values(o[0].t, (double[]){0, 2, 6, 4}, 4, 1e-6) && og_values(o[1].t, (double[]){0, 0.5, 1, 0.5, 0}, 5, 1e-6) &&
           og_values(o[2].t, (double[]){0.08, 0.54, 1, 0.54}, 4, 1e-6) && og_values(o[3].t, (double[]){0, 1, 0}, 3, 1e-6) &&
           og_values(o[4].t, (double[]){0, 0.5, 1, 0.5, 0}, 5, 1e-6) && og_values(o[5].t, (double[]){0, 0.5, 1, 0.5}, 4, 1e-6) &&
           og_values(o[6].t, (double[]){ke, 1, ke}, 3, 1e-6) && og_values(o[7].t, (double[]){1}, 1, 0),
       "hann / hamming / blackman / bartlett / kaiser windows, periodic and symmetric, by hand");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, &x, 1, 0), "... the compiled C module (implicit FallbackKernels) agrees");
    tensor_unref(x);
    graph_free(g);
}

/* ---- unbacked SymInts ---- */

/* the compiled C module's outputs of g on ins (NULL, diagnosed, when it does not build or run) */
static IValue *compiled(Graph *g, IValue *ins, int nin, int *nout) {
    CgBuild b;
    IValue *got = NULL;
    *nout = 0;
    if (cg_compile(ctx, g, &b, 0) != 0 || rt_run(ctx, b.rt, g, ins, nin, &got, nout, NULL) != 0) {
        diag("%s", ctx->err.msg);
        mi_clear_err(ctx);
        interp_free_outputs(got, *nout);
        got = NULL;
    }
    cg_free(&b);
    return got;
}

static void test_unbacked_item(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4, 8][8, 1]cpu\", n: \"i64[][]cpu\", k: \"i64[3][1]cpu\"):\n"
        "        u1: \"Sym(u1)\" = torch.ops.aten._local_scalar_dense.default(n)\n"
        "        full: \"f32[u1][1]cpu\" = torch.ops.aten.full.default([u1], 2.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        sl: \"f32[4, u1][8, 1]cpu\" = torch.ops.aten.slice.Tensor(x, 1, 0, u1)\n"
        "        s: \"f32[][]cpu\" = torch.ops.aten.sum.default(sl)\n"
        "        ks: \"i64[][]cpu\" = torch.ops.aten.sum.default(k)\n"
        "        u2: \"Sym(u2)\" = torch.ops.aten._local_scalar_dense.default(ks)\n"
        "        f2: \"f32[u2][1]cpu\" = torch.ops.aten.full.default([u2], 1.5, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        e: \"f32[u2][1]cpu\" = torch.ops.aten.exp.default(f2)\n"
        "        s2a: \"f32[][]cpu\" = torch.ops.aten.sum.default(e)\n"
        "        srt = torch.ops.aten.sort.default(e)\n"
        "        srt0: \"f32[u2][1]cpu\" = srt[0]\n"
        "        s2b: \"f32[][]cpu\" = torch.ops.aten.amax.default(srt0, [0])\n"
        "        s2: \"f32[][]cpu\" = torch.ops.aten.add.Tensor(s2a, s2b)\n"
        "        return (full, s, s2)\n";
    Graph *g = parsed(fx);
    double xv[32];
    for (int i = 0; i < 32; i++) xv[i] = i % 8;   /* every row 0..7 */
    IValue in[3] = {{.kind = IV_TENSOR, .t = TD(DT_F32, 2, (int64_t[]){4, 8}, xv)}, {.kind = IV_TENSOR, .t = TD(DT_I64, 0, NULL, (double[]){5})},
                    {.kind = IV_TENSOR, .t = TD(DT_I64, 1, (int64_t[]){3}, (double[]){1, 2, 3})}};
    int no = 0;
    IValue *o = g ? compiled(g, in, 3, &no) : NULL;
    /* u1 = 5: full([5], 2); sum of x[:, :5] = 4 (0+1+2+3+4) = 40; u2 = 1 + 2 + 3 = 6 (the item of
     * a computed sum): sum(exp(full([6], 1.5))) + max(sort(...)) = 6 e^1.5 + e^1.5 */
    ok(o && no == 3 && o[0].t->ndim == 1 && o[0].t->size[0] == 5 && og_values(o[0].t, (double[]){2, 2, 2, 2, 2}, 5, 0) &&
           og_values(o[1].t, (double[]){40}, 1, 1e-5) && og_values(o[2].t, (double[]){7 * exp(1.5)}, 1, 1e-4),
       "item() of an input (u1 = 5) and of a computed sum (u2 = 6) by hand, in the compiled C module");
    interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){in[0].t, in[1].t, in[2].t}, 3, 1e-5), "... and it agrees with the interpreter");
    if (g) {
        CgBuild b;
        bool built = cg_compile(ctx, g, &b, CG_SOURCE) == 0 && b.src;
        ok(built && strstr(b.src, "u1 = (int64_t)(n[0LL]); syms[") && strstr(b.src, "u2 = (int64_t)(buf") &&
               strstr(b.src, "fb->alloc_out(fb->ctx, 0,") && strstr(b.src, "mi_ub_alloc(&mi_ub[") &&
               strstr(b.src, "syms[1] = u2;") < strstr(b.src, "mi_ub_alloc(&mi_ub["),
           "the generated C defines u1 on entry, u2 after the kernel that sums k, asks the caller for full([u1]) and allocates the sort once u2 is known");
        if (!built) diag("%s", ctx->err.msg);
        cg_free(&b);
    }
    for (int i = 0; i < 3; i++) ivalue_clear(&in[i]);
    graph_free(g);
}

static void test_unbacked_sizes(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[2, 4][4, 1]cpu\"):\n"
        "        gt: \"b8[2, 4][4, 1]cpu\" = torch.ops.aten.gt.Scalar(x, 0)\n"
        "        ms: \"f32[u0][1]cpu\" = torch.ops.aten.masked_select.default(x, gt)\n"
        "        n0: \"Sym(u0)\" = torch.ops.aten.sym_size.int(ms, 0)\n"
        "        s: \"f32[][]cpu\" = torch.ops.aten.sum.default(ms)\n"
        "        a: \"f32[][]cpu\" = torch.ops.aten.add.Tensor(s, n0)\n"
        "        nz: \"i64[u1, 2][1, u1]cpu\" = torch.ops.aten.nonzero.default(gt)\n"
        "        c: \"f32[u1, 2][1, u1]cpu\" = torch.ops.prims.convert_element_type.default(nz, torch.float32)\n"
        "        m: \"f32[2][1]cpu\" = torch.ops.aten.mean.dim(c, [0])\n"
        "        d: \"f32[u0][1]cpu\" = torch.ops.aten.mul.Tensor(ms, 2)\n"
        "        return (a, m, d)\n";
    Graph *g = parsed(fx);
    IValue in[1] = {{.kind = IV_TENSOR, .t = TD(DT_F32, 2, (int64_t[]){2, 4}, (double[]){1, -2, 3, 0, -1, 4, 5, 6})}};
    int no = 0;
    IValue *o = g ? compiled(g, in, 1, &no) : NULL;
    /* x > 0 at (0, 0), (0, 2), (1, 1), (1, 2), (1, 3): masked_select [1, 3, 4, 5, 6] (u0 = 5),
     * its sum 19 plus u0 = 24; nonzero's rows (u1 = 5) average to (3/5, 8/5); the returned
     * ms * 2 is sized by u0 */
    ok(o && no == 3 && og_values(o[0].t, (double[]){24}, 1, 1e-6) && og_values(o[1].t, (double[]){0.6, 1.6}, 2, 1e-6) &&
           o[2].t->size[0] == 5 && og_values(o[2].t, (double[]){2, 6, 8, 10, 12}, 5, 0),
       "masked_select / nonzero: u0 = u1 = 5 from their results, the sums, means and the output sized by u0 by hand");
    interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, &in[0].t, 1, 1e-6), "... and the compiled C module agrees with the interpreter");
    ctx->target = MI_DEV_CUDA;
    CgBuild b;
    bool refused = g && cg_compile(ctx, g, &b, CG_SOURCE) != 0 && strstr(ctx->err.msg, "does not return outputs sized by an unbacked SymInt");
    ok(refused, "the CUDA backend says it does not return an output sized by an unbacked SymInt yet (not an nvcc error)");
    if (g) cg_free(&b);   /* what cg_compile built before the refusal */
    mi_clear_err(ctx);
    ctx->target = MI_DEV_CPU;
    ivalue_clear(&in[0]);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_adaptive_avg_backward();
    test_full_symint();
    test_masked_scatter_backward();
    test_windows();
    test_unbacked_item();
    test_unbacked_sizes();
    mi_ctx_free(ctx);
    return done_testing();
}
