/* test_freezing.c — what torch._inductor.config.freezing leaves in a CPU graph
 * (cpu_freezing_conv_bn_eval of the ninth unseen batch), on computed values:
 *   - mkldnn._convolution_pointwise.default: padding before stride, the pointwise attr
 *     (none, relu, sigmoid, tanh, hardswish, hardsigmoid, swish, gelu none / tanh, leaky_relu,
 *     hardtanh) against hand values, the channels-last meta of meta_mkldnn_convolution_default;
 *   - mkl._mkl_linear (input @ orig_weight^T + bias) and prims.inductor_force_stride_order;
 *   - mkldnn_fusion's unary lowering pattern in pass_pattern_1: relu(conv 'none') -> the handler
 *     node "fn" printed as torch__inductor_fx_passes_mkldnn_fusion_fn, exact text, the same
 *     values as before the pass; not when the conv has two users or an attr already;
 *   - the handler node loaded from a printed post-grad graph cannot run (its attr is not in the
 *     text): a clear error;
 *   - frozen parameters (get_attr constants) through the compiled C module = the interpreter;
 *   - lowering as mkldnn_lowerings.py: the convolution's input required channels-last, the
 *     packed linear's bias added after it, force_stride_order a copy only when needed. */
#include "tap.h"
#include "fx_passes/passes.h"
#include "ops/interp.h"
#include "tests/support/codegen_check.h"
#include "tests/support/compiled_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define parsed(fx) cc_parsed(ctx, fx, "freezing.py")

static Tensor *T(int ndim, const int64_t *size, const double *v) {
    Tensor *t = tensor_new(ctx, DT_F32, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, v[i]);
    return t;
}

/* x [1, 1, 3, 3] = 0..8 - 4, w [1, 1, 2, 2] = {1, -1, 2, 0.5}, b = -0.5, padding 0, stride 1:
 * out[i][j] = x[i][j] - x[i][j+1] + 2 x[i+1][j] + 0.5 x[i+1][j+1] - 0.5 */
static double conv_hand(int i, int j) {
    double x[9];
    for (int k = 0; k < 9; k++) x[k] = k - 4;
    return x[i * 3 + j] - x[i * 3 + j + 1] + 2 * x[(i + 1) * 3 + j] + 0.5 * x[(i + 1) * 3 + j + 1] - 0.5;
}

static void test_conv_attrs(void) {
    static const struct { const char *attr, *scalars, *algo; } cases[] = {
        {"none", "[]", ""}, {"relu", "[]", ""}, {"sigmoid", "[]", ""}, {"tanh", "[]", ""}, {"hardswish", "[]", ""},
        {"hardsigmoid", "[]", ""}, {"swish", "[]", ""}, {"gelu", "[]", "none"}, {"gelu", "[]", "tanh"},
        {"leaky_relu", "[0.125]", ""}, {"hardtanh", "[-1.5, 2.0]", ""},
    };
    double xv[9], wv[4] = {1, -1, 2, 0.5}, bv[1] = {-0.5};
    for (int k = 0; k < 9; k++) xv[k] = k - 4;
    Tensor *x = T(4, (int64_t[]){1, 1, 3, 3}, xv), *w = T(4, (int64_t[]){1, 1, 2, 2}, wv), *b = T(1, (int64_t[]){1}, bv);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char fx[1024];
        snprintf(fx, sizeof fx,
                 "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, x: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\", w: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", b: \"f32[1][1]cpu\"):\n"
                 "        y: \"f32[1, 1, 2, 2][4, 1, 2, 1]cpu\" = torch.ops.mkldnn._convolution_pointwise.default(x, w, b, [0, 0], [1, 1], [1, 1], 1, '%s', %s, '%s')\n"
                 "        return (y,)\n", cases[c].attr, cases[c].scalars, cases[c].algo);
        Graph *g = parsed(fx);
        int no = 0;
        IValue *r = g ? cc_interp(ctx, g, (Tensor *[]){x, w, b}, 3, &no) : NULL;
        double worst = r && no == 1 ? 0 : INFINITY;
        for (int i = 0; i < 2 && worst < INFINITY; i++)
            for (int j = 0; j < 2; j++) {
                double v = conv_hand(i, j), e = v;
                const char *a = cases[c].attr;
                if (!strcmp(a, "relu")) e = v > 0 ? v : 0;
                else if (!strcmp(a, "sigmoid")) e = 1 / (1 + exp(-v));
                else if (!strcmp(a, "tanh")) e = tanh(v);
                else if (!strcmp(a, "hardswish")) e = v * fmin(fmax(v + 3, 0), 6) / 6;
                else if (!strcmp(a, "hardsigmoid")) e = fmin(fmax(v + 3, 0), 6) / 6;
                else if (!strcmp(a, "swish")) e = v / (1 + exp(-v));
                else if (!strcmp(a, "gelu") && !strcmp(cases[c].algo, "none")) e = 0.5 * v * (1 + erf(v / sqrt(2)));
                else if (!strcmp(a, "gelu")) e = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
                else if (!strcmp(a, "leaky_relu")) e = v > 0 ? v : 0.125 * v;
                else if (!strcmp(a, "hardtanh")) e = fmin(fmax(v, -1.5), 2.0);
                worst = fmax(worst, fabs(tensor_get_f(r[0].t, i * 2 + j) - e));
            }
        ok(worst < 1e-5, "conv + '%s'%s%s on hand values (max abs err %.3g)", cases[c].attr, *cases[c].algo ? " " : "", cases[c].algo, worst);
        if (c == 0 && r && no == 1) {
            int64_t s1 = r[0].t->stride[1], s2 = r[0].t->stride[2];
            ok(s1 == 1 && s2 == 2, "the result is channels-last as meta_mkldnn_convolution_default makes it (strides [.., %lld, %lld, ..])",
               (long long)s1, (long long)s2);
        }
        if (r) interp_free_outputs(r, no);
        graph_free(g);
    }
    /* padding comes before stride: padding [1, 1], stride [2, 2] on the 3x3 input gives 2x2 */
    Graph *g = parsed("class GraphModule(torch.nn.Module):\n"
                      "    def forward(self, x: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\", w: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", b: \"f32[1][1]cpu\"):\n"
                      "        y: \"f32[1, 1, 2, 2][4, 1, 2, 1]cpu\" = torch.ops.mkldnn._convolution_pointwise.default(x, w, b, [1, 1], [2, 2], [1, 1], 1, 'none', [], '')\n"
                      "        return (y,)\n");
    int no = 0;
    IValue *r = g ? cc_interp(ctx, g, (Tensor *[]){x, w, b}, 3, &no) : NULL;
    /* out[0][0] reads x[-1..0][-1..0]: only x[0][0] = -4 under w[1][1] = 0.5; out[1][1] reads x[1..2][1..2] */
    double e00 = 0.5 * -4 - 0.5, e11 = 1 * 0 - 1 * 1 + 2 * 3 + 0.5 * 4 - 0.5;
    ok(r && no == 1 && fabs(tensor_get_f(r[0].t, 0) - e00) < 1e-6 && fabs(tensor_get_f(r[0].t, 3) - e11) < 1e-6,
       "padding [1, 1] then stride [2, 2] (the schema's order): %g and %g", e00, e11);
    if (r) interp_free_outputs(r, no);
    graph_free(g);
    g = parsed("class GraphModule(torch.nn.Module):\n"
               "    def forward(self, x: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\", w: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", b: \"f32[1][1]cpu\"):\n"
               "        y: \"f32[1, 1, 2, 2][4, 1, 2, 1]cpu\" = torch.ops.mkldnn._convolution_pointwise.default(x, w, b, [0, 0], [1, 1], [1, 1], 1, 'mish', [], '')\n"
               "        return (y,)\n");
    IValue in[3] = {{.kind = IV_TENSOR, .t = x}, {.kind = IV_TENSOR, .t = w}, {.kind = IV_TENSOR, .t = b}}, *o = NULL;
    ok(g && interp_run(ctx, g, in, 3, &o, &no) < 0 && strstr(ctx->err.msg, "unsupported pointwise attr 'mish'"),
       "an attr outside fusion_unary_attr_map is an error naming it");
    mi_clear_err(ctx);
    graph_free(g);
    tensor_unref(x); tensor_unref(w); tensor_unref(b);
}

static void test_linear_and_stride(void) {
    Graph *g = parsed("class GraphModule(torch.nn.Module):\n"
                      "    def forward(self, x: \"f32[2, 3][3, 1]cpu\", packed: \"f32[7, 1][1, 0]cpu\", w: \"f32[2, 3][3, 1]cpu\", b: \"f32[2][1]cpu\"):\n"
                      "        y: \"f32[2, 2][2, 1]cpu\" = torch.ops.mkl._mkl_linear(x, packed, w, b, 2)\n"
                      "        z: \"f32[2, 2][1, 2]cpu\" = torch.ops.prims.inductor_force_stride_order.default(y, (1, 2))\n"
                      "        return (z,)\n");
    double xv[6] = {1, 2, 3, -1, 0, 2}, pv[7] = {0}, wv[6] = {1, 0, -1, 0.5, 0.5, 0.5}, bv[2] = {10, -10};
    Tensor *x = T(2, (int64_t[]){2, 3}, xv), *p = T(2, (int64_t[]){7, 1}, pv), *w = T(2, (int64_t[]){2, 3}, wv), *b = T(1, (int64_t[]){2}, bv);
    int no = 0;
    IValue *r = g ? cc_interp(ctx, g, (Tensor *[]){x, p, w, b}, 4, &no) : NULL;
    /* [1 2 3] . [1 0 -1] + 10 = 8; [1 2 3] . [.5 .5 .5] - 10 = -7; [-1 0 2] -> -3 + 10 = 7, 0.5 - 10 = -9.5 */
    double e[4] = {8, -7, 7, -9.5};
    bool vals = r && no == 1;
    for (int i = 0; vals && i < 4; i++) vals = fabs(tensor_get_f(r[0].t, i) - e[i]) < 1e-6;
    ok(vals, "_mkl_linear = x @ orig_weight^T + bias: 8 -7 / 7 -9.5 (the packed weight unused)");
    ok(r && no == 1 && r[0].t->stride[0] == 1 && r[0].t->stride[1] == 2, "inductor_force_stride_order gives strides (1, 2)");
    if (r) interp_free_outputs(r, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x, p, w, b}, 4, 0), "compiled C (extern kernels) = interpreter");
    CgBuild cb;
    int rc = g ? cg_compile(ctx, g, &cb, CG_SOURCE) : -1;
    ok(rc == 0 && strstr(cb.src, "fb->run(fb->ctx, \"y\", 3,") && !strstr(cb.src, "fb->run(fb->ctx, \"z\""),
       "MKLPackedLinear gets 3 tensors (its bias is a pointwise add after it, mkl_packed_linear) and force_stride_order is no extern call");
    if (rc) diag("%s", ctx->err.msg);
    mi_clear_err(ctx);
    cg_free(&cb);
    graph_free(g);
    tensor_unref(x); tensor_unref(p); tensor_unref(w); tensor_unref(b);
}

/* the before-post-grad shape of cpu_freezing_conv_bn_eval: frozen parameters, conv 'none', relu */
static const char *FROZEN_FX =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg8_1: \"f32[2, 3, 8, 8][192, 64, 8, 1]cpu\"):\n"
    "        # No stacktrace found for following nodes\n"
    "        add_tensor: \"f32[8][1]cpu\" = self._frozen_param19\n"
    "        _reorder_convolution_weight: \"f32[8, 3, 3, 3][1, 0, 0, 0]cpu\" = self._frozen_param20\n"
    "\n"
    "        # File: m.py:9 in forward, code: return F.relu(s.b(s.c(x))).mean((2, 3))\n"
    "        _convolution_pointwise_default: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch.ops.mkldnn._convolution_pointwise.default(arg8_1, _reorder_convolution_weight, add_tensor, [1, 1], [1, 1], [1, 1], 1, 'none', [], '');  arg8_1 = _reorder_convolution_weight = add_tensor = None\n"
    "        relu: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch.ops.aten.relu.default(_convolution_pointwise_default);  _convolution_pointwise_default = None\n"
    "        mean: \"f32[2, 8][8, 1]cpu\" = torch.ops.aten.mean.dim(relu, [2, 3]);  relu = None\n"
    "        return (mean,)\n";

static const char *FUSED_FX =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg8_1: \"f32[2, 3, 8, 8][192, 64, 8, 1]cpu\"):\n"
    "        # No stacktrace found for following nodes\n"
    "        add_tensor: \"f32[8][1]cpu\" = self._frozen_param19\n"
    "        _reorder_convolution_weight: \"f32[8, 3, 3, 3][1, 0, 0, 0]cpu\" = self._frozen_param20\n"
    "\n"
    "        # File: m.py:9 in forward, code: return F.relu(s.b(s.c(x))).mean((2, 3))\n"
    "        fn: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch__inductor_fx_passes_mkldnn_fusion_fn(arg8_1, _reorder_convolution_weight, add_tensor, [1, 1], [1, 1], [1, 1], 1, 'none', [], '');  arg8_1 = _reorder_convolution_weight = add_tensor = None\n"
    "        mean: \"f32[2, 8][8, 1]cpu\" = torch.ops.aten.mean.dim(fn, [2, 3]);  fn = None\n"
    "        return (mean,)\n";

static void test_unary_pattern(void) {
    Graph *g = parsed(FROZEN_FX);
    if (!ok(g != NULL, "the frozen graph parses")) return;
    Tensor *x = tensor_new(ctx, DT_F32, 4, (int64_t[]){2, 3, 8, 8});
    uint64_t seed = 9;
    tensor_fill_random(x, &seed);
    Tensor *w = tensor_new(ctx, DT_F32, 4, (int64_t[]){8, 3, 3, 3}), *b = tensor_new(ctx, DT_F32, 1, (int64_t[]){8});
    tensor_fill_random(w, &seed);
    tensor_fill_random(b, &seed);
    mi_const_set(ctx, "_frozen_param20", w);
    mi_const_set(ctx, "_frozen_param19", b);
    IValue in = {.kind = IV_TENSOR, .t = x};
    PassManager *pm = pm_new(ctx, g, &in, 1);
    int rc = pm_run_all(pm);
    ok(rc == pm_num_passes(pm) && pm_first_failure(pm) < 0, "the passes run, numerics checked after each");
    const Graph *r = pm_graph(pm);
    char *txt = r ? fx_print(r, true) : NULL;
    ok(txt && !strcmp(txt, FUSED_FX), "pass_pattern_1 leaves the handler node `fn` with the conv's arguments and relu's meta and stack, as Inductor prints it");
    if (txt && strcmp(txt, FUSED_FX)) diag("%s", txt);
    free(txt);
    const Node *fn = r ? graph_find(r, "fn") : NULL;
    ok(fn && fn->fused_unary && !strcmp(fn->fused_unary, "relu"), "the node knows the attr its lowering uses: relu");
    /* the fused graph's values: conv then relu then mean, by the interpreter on the loaded graph */
    int n0 = 0, n1 = 0;
    IValue *a = cc_interp(ctx, g, (Tensor *[]){x}, 1, &n0), *c = r ? cc_interp(ctx, (Graph *)r, (Tensor *[]){x}, 1, &n1) : NULL;
    ok(a && c && n0 == 1 && n1 == 1 && tensor_compare(a[0].t, c[0].t, 0, 0).ok, "the fused graph gives exactly the values of conv + relu");
    if (a) interp_free_outputs(a, n0);
    if (c) interp_free_outputs(c, n1);
    ok(r && cc_c_agrees(ctx, (Graph *)r, (Tensor *[]){x}, 1, 1e-6), "compiled C (frozen constants, the fused conv as an extern kernel) = interpreter");
    CgBuild cb;
    int crc = r ? cg_compile(ctx, r, &cb, CG_SOURCE) : -1;
    ok(crc == 0 && cb.s && sched_num_kernels(cb.s) >= 2 && strstr(cb.src, "cpp_fused_torch__inductor_fx_passes_mkldnn_fusion_fn_0"),
       "the convolution's input is copied to channels-last by a kernel first (ConvolutionUnary's require_stride_order)");
    cg_free(&cb);
    pm_free(pm);
    graph_free(g);

    /* a second user of the conv, or an attr already fused: no match (users=1, args[-3] == 'none') */
    static const char *const keep[2][2] = {
        {"relu: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch.ops.aten.relu.default(_convolution_pointwise_default)\n"
         "        add: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch.ops.aten.add.Tensor(relu, _convolution_pointwise_default)\n"
         "        mean: \"f32[2, 8][8, 1]cpu\" = torch.ops.aten.mean.dim(add, [2, 3])\n", "'none'"},
        {"relu: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch.ops.aten.relu.default(_convolution_pointwise_default)\n"
         "        mean: \"f32[2, 8][8, 1]cpu\" = torch.ops.aten.mean.dim(relu, [2, 3])\n", "'tanh'"},
    };
    for (int k = 0; k < 2; k++) {
        char fx[2048];
        snprintf(fx, sizeof fx,
                 "class <lambda>(torch.nn.Module):\n"
                 "    def forward(self, arg8_1: \"f32[2, 3, 8, 8][192, 64, 8, 1]cpu\"):\n"
                 "        add_tensor: \"f32[8][1]cpu\" = self._frozen_param19\n"
                 "        _reorder_convolution_weight: \"f32[8, 3, 3, 3][1, 0, 0, 0]cpu\" = self._frozen_param20\n"
                 "        _convolution_pointwise_default: \"f32[2, 8, 8, 8][512, 1, 64, 8]cpu\" = torch.ops.mkldnn._convolution_pointwise.default(arg8_1, _reorder_convolution_weight, add_tensor, [1, 1], [1, 1], [1, 1], 1, %s, [], '')\n"
                 "        %s        return (mean,)\n", keep[k][1], keep[k][0]);
        Graph *h = parsed(fx);
        PassManager *p2 = h ? pm_new(ctx, h, NULL, 0) : NULL;
        if (p2) pm_run_all(p2);
        const Graph *hr = p2 ? pm_graph(p2) : NULL;
        ok(hr && graph_find(hr, "relu") && !graph_find(hr, "fn"), "no fusion when %s", k ? "the conv has an attr already" : "the conv has two users");
        if (p2) pm_free(p2);
        graph_free(h);
    }

    /* the printed post-grad graph loads and prints back; running its handler node says why not */
    Graph *f = parsed(FUSED_FX);
    char *back = f ? fx_print(f, true) : NULL;
    ok(back && !strcmp(back, FUSED_FX), "the post-grad text with torch__inductor_fx_passes_mkldnn_fusion_fn parses and prints back");
    free(back);
    IValue *o = NULL;
    int no = 0;
    IValue in2 = {.kind = IV_TENSOR, .t = x};
    ok(f && interp_run(ctx, f, &in2, 1, &o, &no) < 0 && strstr(ctx->err.msg, "not in the printed graph"),
       "its handler cannot run from the text alone: the error says the fused op is not in it");
    mi_clear_err(ctx);
    graph_free(f);
    const char *badfx = "class G(torch.nn.Module):\n    def forward(self, x: \"f32[2][1]cpu\"):\n        y = foo_fn(x)\n        return (y,)\n";
    Graph *bad = fx_parse(ctx, badfx, strlen(badfx), "b.py", 1);
    ok(!bad && strstr(ctx->err.msg, "unsupported call target 'foo_fn'"), "other bare call targets stay errors");
    mi_clear_err(ctx);
    graph_free(bad);
    tensor_unref(x); tensor_unref(w); tensor_unref(b);
    mi_consts_clear(ctx);
}

int main(void) {
    ctx = mi_ctx_new();
    test_conv_attrs();
    test_linear_and_stride();
    test_unary_pattern();
    mi_ctx_free(ctx);
    return done_testing();
}
