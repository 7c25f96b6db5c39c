/* test_unseen11.c — the rules the eleventh batch of unseen models needed, each checked on
 * computed values (hand values from PyTorch's definitions, the interpreter, the compiled C
 * module) or on the exact text a user reads:
 *   - SymFloat annotations (cpu_dynamic_true_train: batch norm's n / (n - 1) with dynamic sizes,
 *     "Sym(FloatTrueDiv(IntTrueDiv(8*s27*s77, 8), (IntTrueDiv(8*s27*s77, 8)) - 1.0))"): the
 *     functions of torch/utils/_sympy/functions.py evaluated (symfloat.h), the text printed back
 *     as read, the interpreter's value checked against the annotation, the kernels computing it
 *     in float64 as Inductor's CppPrinter prints it (static_cast<double>(a) / static_cast<double>(b));
 *   - gcd / lcm (cpu_gcd_lcm_isin): ATen's calc_gcd and lcm_kernel, gcd a FallbackKernel as
 *     lowering.py's make_fallback(aten.gcd); prims.div (lcm's decomposition) truncating ints as
 *     lowering.py div_prim;
 *   - the special polynomials' .n_scalar / .x_scalar overloads (cpu_special_polynomials);
 *   - a user's torch.library op (cpu_custom_op_library): lowered as a FallbackKernel from its
 *     annotation, running it refused with an error naming the op and what still works. */
#include "tap.h"
#include "base/symfloat.h"
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
#define parsed(fx) cc_parsed(ctx, fx, "unseen11.py")

/* the interpreter's output k of g on ins equals want[0..n) within tol */
static void interp_is(Graph *g, Tensor **ins, int nin, int k, const double *want, int64_t n, double tol, const char *what) {
    ok(cc_output_is(ctx, g, ins, nin, k, want, n, tol), "%s", what);
}

/* the value of SymFloat text under s0 = 2, s1 = 3 is want (a float within 1e-12) */
static void sf_is(const char *text, double want) {
    SymBinding b[] = {{"s0", 2}, {"s1", 3}};
    SymNum v = {0};
    int rc = symfloat_eval(ctx, text, b, 2, &v);
    double got = v.is_int ? (double)v.i : v.f;
    ok(rc == 0 && fabs(got - want) <= 1e-12 * fmax(1, fabs(want)), "%s = %g", text, want);
    if (rc || fabs(got - want) > 1e-12 * fmax(1, fabs(want))) diag("got %.17g (rc %d: %s)", got, rc, ctx->err.msg);
}

/* symfloat_eval of text fails with a message containing want */
static void sf_fails(const char *text, const char *want) {
    SymBinding b[] = {{"s0", 2}};
    SymNum v;
    MiTry t = mi_try(ctx);
    int rc = symfloat_eval(ctx, text, b, 1, &v);
    ok(rc < 0 && strstr(ctx->err.msg, want), "%s fails: %s", text, want);
    if (rc == 0 || !strstr(ctx->err.msg, want)) diag("got: %s", rc < 0 ? ctx->err.msg : "(no error)");
    mi_try_end(&t);
}

/* ---- SymFloat ---- */
static void test_symfloat_values(void) {
    /* batch norm's unbiased factor n / (n - 1) with n = 8*s0*s1 / 8 = 6: 6 / 5 */
    sf_is("FloatTrueDiv(IntTrueDiv(8*s0*s1, 8), (IntTrueDiv(8*s0*s1, 8)) - 1.0)", 1.2);
    sf_is("-1.00000000000000 + IntTrueDiv(8*s0*s1, 8)", 5.0);
    sf_is("FloatTrueDiv(1.0, IntTrueDiv(8*s0*s1, 8))", 1.0 / 6);
    sf_is("0.100000000000000", 0.1);
    sf_is("RoundToInt(2.5)", 2);      /* Python round: half to even */
    sf_is("RoundToInt(3.5)", 4);
    sf_is("TruncToInt(-2.7)", -2);
    sf_is("FloorToInt(-2.5)", -3);
    sf_is("CeilToInt(ToFloat(s1) / 2)", 2);
    sf_is("PowByNatural(s0, 10)", 1024);
    sf_is("PowByNatural(-1, 2*s1 + 1)", -1);
    sf_is("(1 - s0)**4", 1);
    sf_is("FloatPow(ToFloat(s0), 0.5)", sqrt(2.0));
    sf_is("OpaqueUnaryFn_sqrt(ToFloat(4*s0*s0))", 4);
    sf_is("RoundDecimal(1.2345, 2)", 1.23);
    sf_is("FloorDiv(-7, s0) + Mod(-7, s1)", -4 + 2);   /* Python floor semantics */
    sf_is("TruncToFloat(IntTrueDiv(-7, s0))", -3);
    sf_fails("IntTrueDiv(s0, s0 - 2)", "division by zero in IntTrueDiv");
    sf_fails("IntTrueDiv(s0, s9)", "symbol 's9' has no value");
    sf_fails("Frobnicate(s0)", "unknown function 'Frobnicate'");
    /* int64 edges (fuzz_sym, helper fuzz12): each was C undefined behaviour (signed overflow, or
     * INT64_MIN / -1, which traps); Python's ints are unbounded, ours refuse past int64 */
    sf_fails("LShift(4611686018427387904, 2)", "integer overflow in LShift");
    sf_fails("FloorDiv(-9223372036854775807 - 1, -1)", "integer overflow in FloorDiv");
    sf_fails("CeilDiv(-9223372036854775807 - 1, -1)", "integer overflow in CeilDiv");
    sf_fails("ModularIndexing(-9223372036854775807 - 1, -1, 5)", "integer overflow in ModularIndexing");
    sf_fails("-(-9223372036854775807 - 1)", "integer overflow in unary '-'");
    sf_is("Mod(-9223372036854775807 - 1, -1)", 0);
    sf_is("CeilDiv(-9223372036854775807 - 1, 3)", -3074457345618258602.0);
    sf_is("CeilDiv(-7, s0) + CeilDiv(7, s0) + CeilDiv(7, -s0)", -3 + 4 - 3);
    sf_is("LShift(-3, 61) + LShift(s0, 3)", -6917529027641081856.0 + 16);
    ok(symfloat_check(ctx, "FloatTrueDiv(IntTrueDiv(8*s27*s77, 8), (IntTrueDiv(8*s27*s77, 8)) - 1.0)", NULL) == 0,
       "check without bindings accepts cpu_dynamic_true_train's annotation");
}

/* the graph shape of cpu_dynamic_true_train's running_var update: loads, prints back byte for
 * byte, interprets (the annotation agrees with the computed 6 / 5), and its lowering says why
 * it stops */
static void test_symfloat_graph(void) {
    Graph *g = cc_parsed_file(ctx, "tests/fixtures/sym/symfloat_running_var.py");
    ok(g != NULL, "a graph with SymFloat annotations loads");
    if (!g) return;
    char *text = fx_print(g, false);
    ok(text && strstr(text, "truediv_1: \"Sym(FloatTrueDiv(IntTrueDiv(8*s0*s1, 8), (IntTrueDiv(8*s0*s1, 8)) - 1.0))\""),
       "the SymFloat annotation prints back as read");
    free(text);
    int64_t sz[] = {2, 8, 3};
    Tensor *x = TD(DT_F32, 3, sz, NULL);
    double want[48];
    for (int i = 0; i < 48; i++) want[i] = i * 1.2;
    interp_is(g, (Tensor *[]){x}, 1, 0, want, 48, 1e-5, "x * n / (n - 1) with n = 6: the interpreter");
    /* lowered as Inductor prints it into the kernel: float64 index_exprs divided, converted */
    ok(cc_c_agrees(ctx, g, (Tensor *[]){x}, 1, 1e-6), "x * n / (n - 1): the compiled C module agrees with the interpreter");
    IrModule *m = ir_lower(ctx, g);
    char *ir = m ? ir_print(m) : NULL;
    ok(ir && strstr(ir, "ops.index_expr(get_index_1, torch.float64)") && strstr(ir, "ops.constant(1.0, torch.float64)"),
       "the SymFloat is computed in float64 in the kernel");
    free(ir);
    if (m) ir_free(m);
    tensor_unref(x);
    graph_free(g);
    /* a function the kernels do not compute yet: the lowering names it and the node */
    const char *fx2 =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[s0][1]cpu\"):\n"
        "        sym_numel_default: \"Sym(s0)\" = torch.ops.aten.sym_numel.default(x)\n"
        "        r: \"Sym(FloatPow(IntTrueDiv(s0, 8), 1.0))\" = sym_numel_default / 8;  sym_numel_default = None\n"
        "        mul: \"f32[s0][1]cpu\" = torch.ops.aten.mul.Tensor(x, r);  x = r = None\n"
        "        return (mul,)\n";
    g = parsed(fx2);
    MiTry t = mi_try(ctx);
    m = g ? ir_lower(ctx, g) : NULL;
    ok(g && !m && strstr(ctx->err.msg, "SymFloat 'r', Sym(FloatPow(IntTrueDiv(s0, 8), 1.0)): ") &&
       strstr(ctx->err.msg, "FloatPow is not lowered into kernels yet"), "an unlowered SymFloat function is named");
    if (m) ir_free(m);
    mi_try_end(&t);
    graph_free(g);
}

/* a SymFloat annotation that disagrees with the value computed: the interpreter says so */
static void test_symfloat_mismatch(void) {
    const char *fx =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[s0][1]cpu\"):\n"
        "        sym_numel_default: \"Sym(s0)\" = torch.ops.aten.sym_numel.default(x)\n"
        "        truediv: \"Sym(IntTrueDiv(s0, 4))\" = sym_numel_default / 8;  sym_numel_default = None\n"
        "        mul: \"f32[s0][1]cpu\" = torch.ops.aten.mul.Tensor(x, truediv);  x = truediv = None\n"
        "        return (mul,)\n";
    Graph *g = parsed(fx);
    Tensor *x = TD(DT_F32, 1, (int64_t[]){8}, NULL);
    int no = 0;
    MiTry t = mi_try(ctx);
    IValue *o = NULL;
    if (g) interp_run(ctx, g, (IValue[]){{.kind = IV_TENSOR, .t = x}}, 1, &o, &no);
    ok(!o && strstr(ctx->err.msg, "node 'truediv': computed 1 but its annotation Sym(IntTrueDiv(s0, 4)) is 2"),
       "a wrong SymFloat annotation is reported with both values");
    if (o) interp_free_outputs(o, no);
    mi_try_end(&t);
    tensor_unref(x);
    graph_free(g);
}

/* ---- gcd, lcm, prims.div ---- */
static void test_gcd_lcm(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, a: \"i64[6][1]cpu\", b: \"i64[6][1]cpu\"):\n"
        "        gcd: \"i64[6][1]cpu\" = torch.ops.aten.gcd.default(a, b)\n"
        "        lcm: \"i64[6][1]cpu\" = torch.ops.aten.lcm.default(a, b)\n"
        "        return (gcd, lcm)\n";
    Graph *g = parsed(fx);
    Tensor *a = TD(DT_I64, 1, (int64_t[]){6}, (double[]){-12, 0, 0, 7, -4, -7});
    Tensor *b = TD(DT_I64, 1, (int64_t[]){6}, (double[]){18, 5, 0, -21, 6, 2});
    /* calc_gcd on |a|, |b|; lcm = |a / g * b| (0 when g is 0); prims.div truncates */
    interp_is(g, (Tensor *[]){a, b}, 2, 0, (double[]){6, 5, 0, 7, 2, 1}, 6, 0, "gcd(-12, 18) = 6, gcd(0, 0) = 0");
    interp_is(g, (Tensor *[]){a, b}, 2, 1, (double[]){36, 0, 0, 21, 12, 14}, 6, 0, "lcm(-4, 6) = 12, lcm(0, 5) = 0");
    graph_free(g);
    /* compiled: gcd a FallbackKernel, prims.div a pointwise truncdiv (no zero divisor here) */
    const char *fx2 =
        "class G(torch.nn.Module):\n"
        "    def forward(self, a: \"i64[5][1]cpu\", b: \"i64[5][1]cpu\"):\n"
        "        gcd: \"i64[5][1]cpu\" = torch.ops.aten.gcd.default(a, b)\n"
        "        div: \"i64[5][1]cpu\" = torch.ops.prims.div.default(a, b)\n"
        "        return (gcd, div)\n";
    g = parsed(fx2);
    Tensor *a2 = TD(DT_I64, 1, (int64_t[]){5}, (double[]){-12, 9, 7, -4, -7});
    Tensor *b2 = TD(DT_I64, 1, (int64_t[]){5}, (double[]){18, 6, -21, 6, 2});
    interp_is(g, (Tensor *[]){a2, b2}, 2, 1, (double[]){0, 1, 0, 0, -3}, 5, 0, "prims.div truncates: 9 / 6 = 1, -7 / 2 = -3");
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){a2, b2}, 2, 0), "gcd and prims.div: the compiled C module agrees with the interpreter");
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char *ir = m ? ir_print(m) : NULL;
    ok(ir && strstr(ir, "aten.gcd.default"), "gcd lowers as a FallbackKernel (make_fallback(aten.gcd))");
    free(ir);
    if (m) ir_free(m);
    graph_free(g);
    tensor_unref(a); tensor_unref(b); tensor_unref(a2); tensor_unref(b2);
}

/* ---- special polynomials with a scalar x or n ---- */
static void test_polynomials_scalar(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[2][1]cpu\", n: \"f32[4][1]cpu\"):\n"
        "        t: \"f32[2][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.n_scalar(x, 3)\n"
        "        h: \"f32[4][1]cpu\" = torch.ops.aten.special_hermite_polynomial_h.x_scalar(2.0, n)\n"
        "        p: \"f32[2][1]cpu\" = torch.ops.aten.special_legendre_polynomial_p.n_scalar(x, 2)\n"
        "        l: \"f32[4][1]cpu\" = torch.ops.aten.special_laguerre_polynomial_l.x_scalar(1.0, n)\n"
        "        return (t, h, p, l)\n";
    Graph *g = parsed(fx);
    Tensor *x = TD(DT_F32, 1, (int64_t[]){2}, (double[]){0.5, -0.3});
    Tensor *n = TD(DT_F32, 1, (int64_t[]){4}, (double[]){0, 1, 2, 3});
    Tensor *ins[] = {x, n};
    /* T3 = 4x^3 - 3x; H_n(2) = 1, 4, 14, 40; P2 = (3x^2 - 1) / 2; L_n(1) = 1, 0, -1/2, -2/3 */
    interp_is(g, ins, 2, 0, (double[]){-1.0, 0.792}, 2, 1e-6, "chebyshev_polynomial_t.n_scalar(x, 3) = 4x^3 - 3x");
    interp_is(g, ins, 2, 1, (double[]){1, 4, 14, 40}, 4, 1e-6, "hermite_polynomial_h.x_scalar(2, n)");
    interp_is(g, ins, 2, 2, (double[]){-0.125, -0.365}, 2, 1e-6, "legendre_polynomial_p.n_scalar(x, 2)");
    interp_is(g, ins, 2, 3, (double[]){1, 0, -0.5, -2.0 / 3}, 4, 1e-6, "laguerre_polynomial_l.x_scalar(1, n)");
    ok(g && cc_c_agrees(ctx, g, ins, 2, 1e-6), "the scalar overloads: the compiled C module agrees with the interpreter");
    graph_free(g);
    tensor_unref(x); tensor_unref(n);
}

/* ATen's special cases (aten/src/ATen/native/Math.h *_forward): n < 0 gives 0, |x| == 1 the
 * closed forms ((-1)^n, (n + 1)(-1)^n for U ...), large n with |x| < 1 the trigonometric form
 * (T_n = cos(n acos x) past n = 6), x == 0 for Laguerre 1; the rest the recurrences. Hand values
 * from the polynomials: T5 = 16x^5 - 20x^3 + 5x, U3 = 8x^3 - 4x, P3 = (5x^3 - 3x) / 2,
 * V2 = 4x^2 - 2x - 1, W2 = 4x^2 + 2x - 1, He3 = x^3 - 3x, L2 = (x^2 - 4x + 2) / 2, T*3(x) = T3(2x - 1). */
static void test_polynomials_cases(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f64[5][1]cpu\"):\n"
        "        t5: \"f64[5][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.n_scalar(x, 5)\n"
        "        t10: \"f64[5][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.n_scalar(x, 10)\n"
        "        tneg: \"f64[5][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.n_scalar(x, -1)\n"
        "        u3: \"f64[5][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_u.n_scalar(x, 3)\n"
        "        p3: \"f64[5][1]cpu\" = torch.ops.aten.special_legendre_polynomial_p.n_scalar(x, 3)\n"
        "        v2: \"f64[5][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_v.n_scalar(x, 2)\n"
        "        w2: \"f64[5][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_w.n_scalar(x, 2)\n"
        "        he3: \"f64[5][1]cpu\" = torch.ops.aten.special_hermite_polynomial_he.n_scalar(x, 3)\n"
        "        l2: \"f64[5][1]cpu\" = torch.ops.aten.special_laguerre_polynomial_l.n_scalar(x, 2)\n"
        "        st3: \"f64[5][1]cpu\" = torch.ops.aten.special_shifted_chebyshev_polynomial_t.n_scalar(x, 3)\n"
        "        return (t5, t10, tneg, u3, p3, v2, w2, he3, l2, st3)\n";
    Graph *g = parsed(fx);
    Tensor *x = TD(DT_F64, 1, (int64_t[]){5}, (double[]){-1, 1, 0.5, 0.3, 0});
    Tensor *ins[] = {x};
    static const struct { const char *what; double v[5]; } want[] = {
        {"T5: -1 at -1, the polynomial inside", {-1, 1, 0.5, 0.99888, 0}},
        {"T10: cos(10 acos x) past n = 6", {1, 1, -0.5, 0.9955225087999999, -1}},
        {"T_-1 = 0", {0, 0, 0, 0, 0}},
        {"U3: -(n + 1) at -1", {-4, 4, -1, -0.984, 0}},
        {"P3", {-1, 1, -0.4375, -0.3825, 0}},
        {"V2: 2n + 1 at -1", {5, 1, -1, -1.24, -1}},
        {"W2: 2n + 1 at 1", {1, 5, 1, -0.04, -1}},
        {"He3", {2, -2, -1.375, -0.873, 0}},
        {"L2: 1 at 0", {3.5, -0.5, 0.125, 0.445, 1}},
        {"shifted T3 = T3(2x - 1)", {-99, 1, 0, 0.944, -1}},
    };
    for (int k = 0; k < 10; k++) interp_is(g, ins, 1, k, want[k].v, 5, 1e-12, want[k].what);
    ok(g && cc_c_agrees(ctx, g, ins, 1, 1e-12), "the special cases: the compiled C module agrees with the interpreter");
    graph_free(g);
    tensor_unref(x);
    /* a degree past int64 or NaN: ATen's static_cast<int64_t>(n) on x86-64 gives INT64_MIN, so
     * 0 (the C cast was undefined); 2n + 1 of a degree past 2**62 in double (n + n overflowed) */
    fx = "class G(torch.nn.Module):\n"
         "    def forward(self, x: \"f64[2][1]cpu\"):\n"
         "        big: \"f64[2][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.n_scalar(x, 1e30)\n"
         "        hn: \"f64[2][1]cpu\" = torch.ops.aten.special_hermite_polynomial_h.n_scalar(x, nan)\n"
         "        v: \"f64[2][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_v.n_scalar(x, 5e18)\n"
         "        return (big, hn, v)\n";
    g = parsed(fx);
    x = TD(DT_F64, 1, (int64_t[]){2}, (double[]){-1, 1});
    ins[0] = x;
    interp_is(g, ins, 1, 0, (double[]){0, 0}, 2, 0, "T_n with n = 1e30: 0 (INT64_MIN, as ATen on x86-64)");
    interp_is(g, ins, 1, 1, (double[]){0, 0}, 2, 0, "H_n with n = nan: 0");
    interp_is(g, ins, 1, 2, (double[]){1e19 + 1, 1}, 2, 0, "V_n at -1 with n = 5e18: 2n + 1 in double; 1 at 1");
    graph_free(g);
    tensor_unref(x);
}

/* ---- a user's torch.library op ---- */
static void test_custom_op(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4, 5][5, 1]cpu\"):\n"
        "        y: \"f32[4, 5][5, 1]cpu\" = torch.ops.mylib.scaled_tanh.default(x, 2.0)\n"
        "        relu: \"f32[4, 5][5, 1]cpu\" = torch.ops.aten.relu.default(y);  y = None\n"
        "        return (relu,)\n";
    Graph *g = parsed(fx);
    ok(g != NULL, "a graph with a user's op loads");
    if (!g) return;
    IrModule *m = ir_lower(ctx, g);
    char *ir = m ? ir_print(m) : NULL;
    ok(ir && strstr(ir, "mylib.scaled_tanh.default"), "the user's op lowers as a FallbackKernel from its annotation");
    if (!ir) diag("%s", ctx->err.msg);
    free(ir);
    if (m) ir_free(m);
    Tensor *x = TD(DT_F32, 2, (int64_t[]){4, 5}, NULL);
    int no = 0;
    MiTry t = mi_try(ctx);
    IValue *o = NULL;
    interp_run(ctx, g, (IValue[]){{.kind = IV_TENSOR, .t = x}}, 1, &o, &no);
    ok(!o && strstr(ctx->err.msg, "custom op mylib.scaled_tanh.default has no implementation in minductor") &&
       strstr(ctx->err.msg, "(node 'y')"), "interpreting it names the op, the node and why");
    if (o || !strstr(ctx->err.msg, "custom op")) diag("got: %s", ctx->err.msg);
    if (o) interp_free_outputs(o, no);
    mi_try_end(&t);
    tensor_unref(x);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_symfloat_values();
    test_symfloat_graph();
    test_symfloat_mismatch();
    test_gcd_lcm();
    test_polynomials_scalar();
    test_polynomials_cases();
    test_custom_op();
    mi_ctx_free(ctx);
    return done_testing();
}
