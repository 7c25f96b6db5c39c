/* test_unseen12.c — the rules the twelfth batch of unseen models (tests/tools/survey_models12.py)
 * needed, each checked on computed values (hand values from PyTorch's definitions, the
 * interpreter, the compiled C module) or on the exact text a user reads:
 *   - Python complex scalars in a graph (cpu_complex_angle_ops: `aten.mul.Tensor(complex_1,
 *     (1+2j))`): read and printed back as repr() writes them (complexobject.c complex_repr), and
 *     a complex scalar operand of a pointwise op promoting to complex (c10's ScalarType of a
 *     Python complex is the default complex dtype) and computed with its imaginary part;
 *   - every FallbackKernel result sized by an unbacked symbol its call defines comes back
 *     allocated by the call (cpu_unique_counts_dynamic: _unique2's counts are [u0], u0 the size of
 *     its first result; the compiled module had allocated them with u0 still 0). */
#include "tap.h"
#include "ops/interp.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)
#define parsed(fx) cc_parsed(ctx, fx, "unseen12.py")

/* the interpreter's output k of g on ins equals want[0..n) within tol */
static void interp_is(Graph *g, Tensor **ins, int nin, int k, const double *want, int64_t n, double tol, const char *what) {
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, ins, nin, &no) : NULL;
    ok(o && no > k && o[k].kind == IV_TENSOR && og_values(o[k].t, want, n, tol), "%s", what);
    if (o) interp_free_outputs(o, no);
}

/* ---- complex scalars ---- */
static void test_complex_repr(void) {
    char b[64];
    struct { double re, im; const char *want; } c[] = {
        {1, 2, "(1+2j)"}, {0, 2, "2j"}, {0, -1.5, "-1.5j"}, {-0.0, -1, "(-0-1j)"}, {1e-05, -2.5, "(1e-05-2.5j)"},
        {0.1, 1e16, "(0.1+1e+16j)"}, {NAN, INFINITY, "(nan+infj)"}, {2, -INFINITY, "(2-infj)"}, {0, 0, "0j"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        is_str(fx_complex_repr(c[i].re, c[i].im, b, sizeof b), c[i].want, "repr(complex(%g, %g))", c[i].re, c[i].im);
}

static void test_complex_scalar(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, re: \"f32[3][1]cpu\", im: \"f32[3][1]cpu\"):\n"
        "        z: \"c64[3][1]cpu\" = torch.ops.aten.complex.default(re, im)\n"
        "        mul: \"c64[3][1]cpu\" = torch.ops.aten.mul.Tensor(z, (1+2j))\n"
        "        add: \"c64[3][1]cpu\" = torch.ops.aten.add.Tensor(mul, -1.5j)\n"
        "        sub: \"c64[3][1]cpu\" = torch.ops.aten.sub.Tensor(add, (-0-1j))\n"
        "        mul_1: \"c64[3][1]cpu\" = torch.ops.aten.mul.Tensor(re, (1e-05+2j))\n"
        "        view_as_real: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.view_as_real.default(sub)\n"
        "        view_as_real_1: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.view_as_real.default(mul_1)\n"
        "        return (view_as_real, view_as_real_1)\n";
    Graph *g = parsed(fx);
    char *text = g ? fx_print(g, false) : NULL;
    ok(text && strstr(text, "aten.mul.Tensor(z, (1+2j))") && strstr(text, "aten.add.Tensor(mul, -1.5j)") &&
       strstr(text, "aten.sub.Tensor(add, (-0-1j))") && strstr(text, "aten.mul.Tensor(re, (1e-05+2j))"),
       "complex scalars print back as Python's repr() wrote them");
    if (!text || !strstr(text, "(-0-1j)")) diag("%s", text ? text : "(no graph)");
    free(text);
    Tensor *re = TD(DT_F32, 1, (int64_t[]){3}, (double[]){1, 0, -2});
    Tensor *im = TD(DT_F32, 1, (int64_t[]){3}, (double[]){0, 1, 0.5});
    Tensor *ins[] = {re, im};
    /* (a+bi)(1+2i) = (a - 2b) + (2a + b)i; then - 1.5i; then - (-0 - 1i) = + 1i
     * 1+0i -> 1+2i -> 1+0.5i -> 1+1.5i;  0+1i -> -2+1i -> -2-0.5i -> -2+0.5i;  -2+0.5i -> -3-3.5i -> -3-5i -> -3-4i */
    interp_is(g, ins, 2, 0, (double[]){1, 1.5, -2, 0.5, -3, -4}, 6, 1e-6, "z * (1+2j) - 1.5j - (-0-1j): the imaginary parts count");
    /* a real tensor times a complex scalar promotes to c64: re * (1e-05+2j) */
    interp_is(g, ins, 2, 1, (double[]){1e-05, 2, 0, 0, -2e-05, -4}, 6, 1e-9, "f32 tensor * (1e-05+2j) is c64 (the default complex dtype)");
    ok(g && cc_c_agrees(ctx, g, ins, 2, 1e-6), "complex scalars: the compiled C module agrees with the interpreter");
    graph_free(g);
    tensor_unref(re); tensor_unref(im);
}

/* ---- _unique2: results sized by a sibling's unbacked size ---- */
static void test_unique_counts(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, ids: \"i64[6][1]cpu\", w: \"f32[6, 2][2, 1]cpu\"):\n"
        "        _unique2 = torch.ops.aten._unique2.default(ids, True, True, True)\n"
        "        getitem: \"i64[u0][1]cpu\" = _unique2[0]\n"
        "        getitem_1: \"i64[6][1]cpu\" = _unique2[1]\n"
        "        getitem_2: \"i64[u0][1]cpu\" = _unique2[2]\n"
        "        index: \"i64[6][1]cpu\" = torch.ops.aten.index.Tensor(getitem_2, [getitem_1])\n"
        "        convert_element_type: \"f32[6][1]cpu\" = torch.ops.prims.convert_element_type.default(index, torch.float32)\n"
        "        unsqueeze: \"f32[6, 1][1, 1]cpu\" = torch.ops.aten.unsqueeze.default(convert_element_type, 1)\n"
        "        mul: \"f32[6, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(w, unsqueeze)\n"
        "        convert_element_type_1: \"f32[u0][1]cpu\" = torch.ops.prims.convert_element_type.default(getitem, torch.float32)\n"
        "        mean: \"f32[][]cpu\" = torch.ops.aten.mean.default(convert_element_type_1)\n"
        "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(getitem_2)\n"
        "        return (mul, mean, sum_1)\n";
    Graph *g = parsed(fx);
    Tensor *ids = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, 1, 3, 0, 1, 3});
    Tensor *w = TD(DT_F32, 2, (int64_t[]){6, 2}, (double[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1});
    Tensor *ins[] = {ids, w};
    /* unique [0, 1, 3], inverse [2, 1, 2, 0, 1, 2], counts [1, 2, 3]: each row times its id's count */
    interp_is(g, ins, 2, 0, (double[]){3, 3, 2, 2, 3, 3, 1, 1, 2, 2, 3, -3}, 12, 0, "w * counts[inverse]");
    interp_is(g, ins, 2, 1, (double[]){4.0 / 3}, 1, 1e-6, "mean of the unique values [0, 1, 3]");
    interp_is(g, ins, 2, 2, (double[]){6}, 1, 0, "the counts sum to the number of ids");
    ok(g && cc_c_agrees(ctx, g, ins, 2, 0), "_unique2's [u0] counts come back from its call: the compiled C module agrees");
    graph_free(g);
    tensor_unref(ids); tensor_unref(w);
}

int main(void) {
    ctx = mi_ctx_new();
    test_complex_repr();
    test_complex_scalar();
    test_unique_counts();
    mi_ctx_free(ctx);
    return done_testing();
}
