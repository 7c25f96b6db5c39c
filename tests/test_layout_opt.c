/* test_layout_opt.c — Inductor's layout optimization (core/lowering/layout_opt.c, core/ir/
 * ir_layout.c): GraphLowering.decide_layout_opt's decision on small graphs (cpu always with a
 * convolution; on cuda the inference flop weights and the training grouped / in>out / small
 * channel rules, dynamic shapes), the stride-order helpers, and the exact strides a cpu graph
 * conv -> relu -> conv gets: the input and weights copied channels last, the relu laid out like
 * the convolution it reads, a 1x1 weight left alone, the returned result in its annotated strides;
 * a one-channel convolution's NCHW result (conv_layout: meta_conv's format of the inputs). */
#include "tap.h"
#include "lowering/lowering_impl.h"

#include <stdio.h>
#include <string.h>

/* one convolution x[N, C, H, W] * w[O, C/g, K, K] with the given groups, as an inference graph
 * (argN_1) or a training forward (primals_N) on dev */
static Graph *conv_graph(MiCtx *ctx, const char *dev, bool training, const char *n, int C, int H, int O, int K, int g) {
    char x[64], w[64], out[64], text[2048];
    snprintf(x, sizeof x, "f32[%s, %d, %d, %d]", n, C, H, H);
    snprintf(w, sizeof w, "f32[%d, %d, %d, %d][%d, %d, %d, 1]%s", O, C / g, K, K, C / g * K * K, K * K, K, dev);
    snprintf(out, sizeof out, "f32[%s, %d, %d, %d]%s", n, O, H - K + 1, H - K + 1, dev);
    const char *a = training ? "primals_1" : "arg0_1", *b = training ? "primals_2" : "arg1_1";
    snprintf(text, sizeof text,
             "class M(torch.nn.Module):\n"
             "    def forward(self, %s: \"%s%s\", %s: \"%s\"):\n"
             "        convolution: \"%s\" = torch.ops.aten.convolution.default(%s, %s, None, [1, 1], [0, 0], [1, 1], False, [0, 0], %d)\n"
             "        return (convolution,)\n",
             a, x, dev, b, w, out, a, b, g);
    Graph *gr = fx_parse(ctx, text, strlen(text), "<conv>", 1);
    if (gr) ops_resolve_graph(gr);
    return gr;
}

static void decide(MiCtx *ctx, const char *dev, bool training, const char *n, int C, int O, int K, int g, bool want, const char *what) {
    Graph *gr = conv_graph(ctx, dev, training, n, C, 8, O, K, g);
    if (!ok(gr != NULL, "%s parses", what)) return;
    is_int(lw_decide_layout_opt(gr, !graph_is_training(gr)), want, "%s: layout_opt %s", what, want ? "on" : "off");
    graph_free(gr);
}

static void test_decisions(MiCtx *ctx) {
    decide(ctx, "cpu", true, "4", 3, 16, 3, 1, true, "cpu, training, small channels (oneDNN: always)");
    decide(ctx, "cuda:0", false, "4", 3, 16, 3, 1, true, "cuda inference, small channels (0.783 x flops)");
    decide(ctx, "cuda:0", true, "4", 3, 16, 3, 1, false, "cuda training, only small-channel convolutions");
    decide(ctx, "cuda:0", true, "4", 64, 128, 3, 1, true, "cuda training, 64 -> 128 channels");
    decide(ctx, "cuda:0", true, "4", 128, 32, 3, 1, false, "cuda training, in-channels >= 2 x out-channels");
    decide(ctx, "cuda:0", true, "4", 128, 128, 3, 2, false, "cuda training, a grouped convolution (64 in-channels a group)");
    decide(ctx, "cuda:0", true, "4", 128, 128, 3, 128, true, "cuda training, depthwise (1 in-channel a group)");
    decide(ctx, "cuda:0", false, "4", 128, 128, 3, 2, false, "cuda inference, grouped flops dominate (1.358 x)");
    decide(ctx, "cuda:0", true, "s0", 64, 128, 3, 1, false, "cuda training, dynamic batch");
    const char *none = "class M(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[4, 4][4, 1]cpu\"):\n"
                       "        relu: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.relu.default(arg0_1)\n        return (relu,)\n";
    Graph *gr = fx_parse(ctx, none, strlen(none), "<none>", 1);
    ok(gr && !lw_decide_layout_opt(gr, true), "no convolution: layout_opt off");
    graph_free(gr);
}

static void test_stride_orders(MiCtx *ctx) {
    SymCtx *s = ctx->sym;
    Expr *st[4] = {sym_int(s, 16384), sym_int(s, 1), sym_int(s, 512), sym_int(s, 16)}, *sz[4], *got[4];
    int order[4];
    ok(ir_stride_order(st, 4, order) && order[0] == 3 && order[1] == 0 && order[2] == 2 && order[3] == 1,
       "get_stride_order of channels-last strides is [3, 0, 2, 1]");
    Expr *ties[4] = {sym_int(s, 32), sym_int(s, 1), sym_int(s, 32), sym_int(s, 32)};
    ok(ir_stride_order(ties, 4, order) && order[0] == 3 && order[1] == 0 && order[2] == 2 && order[3] == 1,
       "equal strides: the later dim ranks lower (utils.argsort)");
    int64_t n[4] = {4, 3, 32, 32};
    for (int d = 0; d < 4; d++) sz[d] = sym_int(s, n[d]);
    static const int nhwc[4] = {3, 0, 2, 1};
    ir_strides_for_order(s, sz, 4, nhwc, got);
    int64_t v[4];
    for (int d = 0; d < 4; d++) sym_is_int(got[d], &v[d]);
    ok(v[0] == 3072 && v[1] == 1 && v[2] == 96 && v[3] == 3, "stride_ordered([4, 3, 32, 32], channels last) = [3072, 1, 96, 3]");
    Layout l = {.ndim = 4, .size = sz, .stride = got};
    ok(ir_layout_stride_ordered(&l, nhwc), "is_stride_ordered accepts it");
    Expr *one[4] = {sym_int(s, 4), sym_int(s, 1), sym_int(s, 8), sym_int(s, 8)};
    Expr *cont[4] = {sym_int(s, 64), sym_int(s, 64), sym_int(s, 8), sym_int(s, 1)};
    Layout c = {.ndim = 4, .size = one, .stride = cont};
    ok(ir_layout_stride_ordered(&c, nhwc), "a contiguous [4, 1, 8, 8] is channels last too (size-1 dims are ignored)");
    static const int nchw[4] = {3, 2, 1, 0};
    ok(!ir_layout_stride_ordered(&l, nchw), "channels-last strides are not contiguous-ordered");
}

/* Lower `text` and check that its IR text holds each layout line of want[0..n). */
static void check_layouts(MiCtx *ctx, const char *text, const char *what, const char *const *want, size_t n) {
    Graph *g = fx_parse(ctx, text, strlen(text), what, 1);
    if (!ok(g != NULL, "%s parses", what)) return;
    ops_resolve_graph(g);
    IrModule *m = ir_lower(ctx, g);
    char *ir = m ? ir_print(m) : NULL;
    for (size_t i = 0; i < n; i++)
        if (!ok(ir && strstr(ir, want[i]), "%s", want[i]) && ir) diag("%s", ir);
    free(ir);
    ir_free(m);
    graph_free(g);
}

/* conv -> relu -> conv on the cpu: every layout as Inductor's ir_pre_fusion.txt would show it */
static void test_cpu_strides(MiCtx *ctx) {
    const char *text =
        "class M(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"f32[2, 3, 8, 8][192, 64, 8, 1]cpu\", arg1_1: \"f32[4, 3, 3, 3][27, 9, 3, 1]cpu\", "
        "arg2_1: \"f32[5, 4, 1, 1][4, 1, 1, 1]cpu\"):\n"
        "        convolution: \"f32[2, 4, 6, 6][144, 36, 6, 1]cpu\" = torch.ops.aten.convolution.default(arg0_1, arg1_1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)\n"
        "        relu: \"f32[2, 4, 6, 6][144, 36, 6, 1]cpu\" = torch.ops.aten.relu.default(convolution)\n"
        "        convolution_1: \"f32[2, 5, 6, 6][180, 36, 6, 1]cpu\" = torch.ops.aten.convolution.default(relu, arg2_1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)\n"
        "        return (convolution_1,)\n";
    static const char *want[] = {
        "buf0.layout = FixedLayout('cpu', torch.float32, size=[2, 3, 8, 8], stride=[192, 1, 24, 3])",   /* input copy */
        "buf1.layout = FixedLayout('cpu', torch.float32, size=[4, 3, 3, 3], stride=[27, 1, 9, 3])",     /* weight copy */
        "buf2.layout = FixedLayout('cpu', torch.float32, size=[2, 4, 6, 6], stride=[144, 1, 24, 4])",   /* conv: channels last */
        "buf3.layout = FixedLayout('cpu', torch.float32, size=[2, 4, 6, 6], stride=[144, 1, 24, 4])",   /* relu, required so */
        /* the 1x1 weight [5, 4, 1, 1] / [4, 1, 1, 1] is channels last already (size-1 dims do not
         * count): no copy */
        "buf4.layout = FixedLayout('cpu', torch.float32, size=[2, 5, 6, 6], stride=[180, 1, 30, 5])",   /* conv_1 */
        "buf5.layout = FixedLayout('cpu', torch.float32, size=[2, 5, 6, 6], stride=[180, 36, 6, 1])",   /* output: its strides */
    };
    check_layouts(ctx, text, "the cpu graph", want, sizeof want / sizeof want[0]);
}

/* kernel/conv.py conv_layout under layout_opt: the result's format is meta_conv's for x and w as
 * required. A one-channel image and weight are already "channels last" for the requirement
 * (size-1 dims skipped) and keep NCHW strides, which suggest_memory_format calls contiguous: the
 * first convolution writes NCHW (PixelCNN's, as Inductor's assert_size_stride shows), its ReLU
 * is laid out channels last for the second, which writes channels last (cuda: x or w decides) */
static void test_one_channel_conv(MiCtx *ctx) {
    const char *text =
        "class M(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"f32[2, 1, 8, 8][64, 64, 8, 1]cuda:0\", arg1_1: \"f32[8, 1, 5, 5][25, 25, 5, 1]cuda:0\", "
        "arg2_1: \"f32[4, 8, 3, 3][72, 9, 3, 1]cuda:0\"):\n"
        "        convolution: \"f32[2, 8, 4, 4][128, 16, 4, 1]cuda:0\" = torch.ops.aten.convolution.default(arg0_1, arg1_1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)\n"
        "        relu: \"f32[2, 8, 4, 4][128, 16, 4, 1]cuda:0\" = torch.ops.aten.relu.default(convolution)\n"
        "        convolution_1: \"f32[2, 4, 2, 2][16, 4, 2, 1]cuda:0\" = torch.ops.aten.convolution.default(relu, arg2_1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)\n"
        "        return (convolution_1,)\n";
    Graph *g = fx_parse(ctx, text, strlen(text), "<one channel>", 1);
    if (g) ops_resolve_graph(g);
    ok(g && lw_decide_layout_opt(g, true), "cuda inference, small channels: layout_opt on");
    graph_free(g);
    static const char *want[] = {
        "buf0.layout = FixedLayout('cuda:0', torch.float32, size=[2, 8, 4, 4], stride=[128, 16, 4, 1])",   /* conv: NCHW */
        "buf1.layout = FixedLayout('cuda:0', torch.float32, size=[2, 8, 4, 4], stride=[128, 1, 32, 8])",   /* relu: channels last */
        "buf3.layout = FixedLayout('cuda:0', torch.float32, size=[2, 4, 2, 2], stride=[16, 1, 8, 4])",     /* conv_1: channels last */
    };
    check_layouts(ctx, text, "the one-channel graph", want, sizeof want / sizeof want[0]);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    test_decisions(ctx);
    test_stride_orders(ctx);
    test_cpu_strides(ctx);
    test_one_channel_conv(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
