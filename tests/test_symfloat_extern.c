/* test_symfloat_extern.c — SymFloat and SymInt scalars computed from sizes as arguments of the
 * kernels that are not pointwise: a FallbackKernel (aten.histc's max = x.size(0) / 2) receives
 * the value of its "Sym(IntTrueDiv(s0, 2))" annotation evaluated at run time (Inductor's
 * wrapper passes the expression printed as Python, (1/2)*s0), and the extern addmm's alpha /
 * beta (extern_kernels.addmm(..., alpha=, beta=)) are computed from the sizes. Checked on
 * computed values: hand values from ATen's definitions, the reference interpreter, the compiled
 * C module; the CUDA source of the same graphs builds with nvcc (running it needs a GPU). */
#include "tap.h"
#include "ir/ir.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)
#define parsed(fx) cc_parsed(ctx, fx, "symfloat_extern.py")

/* the interpreter's output k of g on ins equals want[0..n) within tol */
static void interp_is(Graph *g, Tensor **ins, int nin, int k, const double *want, int64_t n, double tol, const char *what) {
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, ins, nin, &no) : NULL;
    ok(o && no > k && o[k].kind == IV_TENSOR && og_values(o[k].t, want, n, tol), "%s", what);
    if (o) interp_free_outputs(o, no);
}

/* FX text of the histc graph on device dev ("cpu" or "cuda:0") */
static void histc_fx(char *buf, size_t n, const char *dev) {
    snprintf(buf, n,
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, x: \"f32[s0][1]%s\"):\n"
             "        sym_size_int: \"Sym(s0)\" = torch.ops.aten.sym_size.int(x, 0)\n"
             "        truediv: \"Sym(IntTrueDiv(s0, 2))\" = sym_size_int / 2;  sym_size_int = None\n"
             "        histc: \"f32[4][1]%s\" = torch.ops.aten.histc.default(x, 4, 0, truediv);  x = truediv = None\n"
             "        return (histc,)\n", dev, dev);
}

/* histc(x, bins=4, min=0, max=s0/2): a FallbackKernel whose max is a SymFloat */
static void test_fallback_symfloat(void) {
    char fx[1024];
    histc_fx(fx, sizeof fx, "cpu");
    Graph *g = parsed(fx);
    /* x = 0..7, max = 8 / 2 = 4.0: bins [0,1) [1,2) [2,3) [3,4]; 5, 6, 7 lie outside */
    Tensor *x = TD(DT_F32, 1, (int64_t[]){8}, NULL);
    interp_is(g, (Tensor *[]){x}, 1, 0, (double[]){1, 1, 1, 2}, 4, 0, "histc(0..7, 4, 0, 8 / 2): the interpreter");
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char *ir = m ? ir_print(m) : NULL;
    ok(ir && strstr(ir, "FallbackKernel") && strstr(ir, "aten.histc.default"), "histc lowers as a FallbackKernel");
    if (!ir) diag("%s", ctx->err.msg);
    free(ir);
    if (m) ir_free(m);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x}, 1, 0), "the compiled C module passes the SymFloat to the fallback (8 rows)");
    /* another size: the value is computed from the sizes at run time, not frozen at compile */
    Tensor *x2 = TD(DT_F32, 1, (int64_t[]){4}, (double[]){0.5, 1.5, 1.9, 2.0});
    interp_is(g, (Tensor *[]){x2}, 1, 0, (double[]){0, 1, 0, 3}, 4, 0, "histc(x, 4, 0, 4 / 2): bins of width 0.5");
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x2}, 1, 0), "the compiled C module agrees for 4 rows");
    tensor_unref(x);
    tensor_unref(x2);
    graph_free(g);
    histc_fx(fx, sizeof fx, "cuda:0");
    g = parsed(fx);
    if (g) CC_NVCC_POINT(ctx, "histc with a SymFloat max on cuda", g);
    else ok(0, "the cuda histc graph loads");
    graph_free(g);
}

/* FX text of addmm(b, x, w, beta=s0, alpha=s0/2) on device dev */
static void addmm_fx(char *buf, size_t n, const char *dev) {
    snprintf(buf, n,
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, b: \"f32[2][1]%s\", x: \"f32[s0, 2][2, 1]%s\", w: \"f32[2, 2][2, 1]%s\"):\n"
             "        sym_size_int: \"Sym(s0)\" = torch.ops.aten.sym_size.int(x, 0)\n"
             "        truediv: \"Sym(IntTrueDiv(s0, 2))\" = sym_size_int / 2\n"
             "        addmm: \"f32[s0, 2][2, 1]%s\" = torch.ops.aten.addmm.default(b, x, w, beta = sym_size_int, alpha = truediv);  b = x = w = sym_size_int = truediv = None\n"
             "        return (addmm,)\n", dev, dev, dev, dev);
}

/* the extern addmm with alpha a SymFloat and beta a SymInt */
static void test_addmm_symbolic_scalars(void) {
    char fx[1200];
    addmm_fx(fx, sizeof fx, "cpu");
    Graph *g = parsed(fx);
    /* s0 = 4: x = 0..7, w = 0..3, x @ w = [2 3] [6 11] [10 19] [14 27]; out = 4 * b + 2 * (x @ w) */
    Tensor *b = TD(DT_F32, 1, (int64_t[]){2}, (double[]){1, -1});
    Tensor *x = TD(DT_F32, 2, (int64_t[]){4, 2}, NULL);
    Tensor *w = TD(DT_F32, 2, (int64_t[]){2, 2}, NULL);
    Tensor *ins[] = {b, x, w};
    interp_is(g, ins, 3, 0, (double[]){8, 2, 16, 18, 24, 34, 32, 50}, 8, 1e-6,
              "addmm(b, x, w, beta=s0, alpha=s0 / 2) with s0 = 4: the interpreter");
    ok(g && cc_c_agrees(ctx, g, ins, 3, 1e-5), "the compiled C module computes alpha and beta from the sizes");
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char *ir = m ? ir_print(m) : NULL;
    ok(ir && strstr(ir, "ExternKernel") && strstr(ir, "ops.index_expr(") && strstr(ir, "torch.float64"),
       "the product is an extern mm; alpha is s0 / 2 computed in float64 in its epilogue");
    if (!ir) diag("%s", ctx->err.msg);
    free(ir);
    if (m) ir_free(m);
    tensor_unref(b); tensor_unref(x); tensor_unref(w);
    graph_free(g);
    addmm_fx(fx, sizeof fx, "cuda:0");
    g = parsed(fx);
    if (g) CC_NVCC_POINT(ctx, "addmm with symbolic alpha and beta on cuda", g);
    else ok(0, "the cuda addmm graph loads");
    graph_free(g);
}

/* pointwise ops whose scalar is a SymFloat: leaky_relu's slope and hardtanh's bounds computed
 * in the kernel (Inductor's decompositions put the sympy expression there), elu's alpha (folded
 * in double by the lowering) through its FallbackKernel; before, lw_arg_num took the default */
static void test_pointwise_symfloat_scalars(void) {
    const char *fx =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[s0][1]cpu\"):\n"
        "        sym_size_int: \"Sym(s0)\" = torch.ops.aten.sym_size.int(x, 0)\n"
        "        truediv: \"Sym(IntTrueDiv(s0, 8))\" = sym_size_int / 8\n"
        "        neg: \"Sym(-IntTrueDiv(s0, 8))\" = -truediv\n"
        "        lr: \"f32[s0][1]cpu\" = torch.ops.aten.leaky_relu.default(x, truediv)\n"
        "        ht: \"f32[s0][1]cpu\" = torch.ops.aten.hardtanh.default(x, neg, truediv)\n"
        "        el: \"f32[s0][1]cpu\" = torch.ops.aten.elu.default(x, truediv)\n"
        "        return (lr, ht, el)\n";
    Graph *g = parsed(fx);
    /* s0 = 4: slope = bounds = alpha = 0.5 */
    Tensor *x = TD(DT_F32, 1, (int64_t[]){4}, (double[]){-2, -0.25, 0.25, 3});
    interp_is(g, (Tensor *[]){x}, 1, 0, (double[]){-1, -0.125, 0.25, 3}, 4, 1e-6, "leaky_relu(x, s0 / 8) with s0 = 4: the interpreter");
    interp_is(g, (Tensor *[]){x}, 1, 1, (double[]){-0.5, -0.25, 0.25, 0.5}, 4, 1e-6, "hardtanh(x, -s0 / 8, s0 / 8)");
    interp_is(g, (Tensor *[]){x}, 1, 2, (double[]){0.5 * expm1(-2), 0.5 * expm1(-0.25), 0.25, 3}, 4, 1e-6, "elu(x, s0 / 8)");
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x}, 1, 1e-6), "the compiled C module computes the three from the size");
    tensor_unref(x);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_fallback_symfloat();
    test_addmm_symbolic_scalars();
    test_pointwise_symfloat_scalars();
    mi_ctx_free(ctx);
    return done_testing();
}
