/* test_sched_unseen7.c — two Inductor rules the seventh batch of unseen logs showed, each on a
 * small graph lowered, scheduled, compiled to C and checked against the interpreter:
 *  - cpp.py's fusion where a reduction to a scalar shares no outer loop with the other group
 *    (_get_outer_loop_fusion_depth is 0): only _why_fuse_nodes' SAME_VARS_REDUCE (two
 *    reductions over the same ranges, side by side) and COMPATIBLE_REDUCTION (a pointwise
 *    producer walking the reduced ranges) fuse; a scalar reduction does not take its pointwise
 *    consumer. With a fallback between them the consumer runs in another cpp kernel
 *    (cpu_interp_area_nearest_aa: 2 kernels as Inductor, was 1).
 *  - GraphLowering.run_node's require_exact_strides for a returned extern result: glow's
 *    forward returns conv2d's channels-last output: its NCHW copy is made at the convolution,
 *    so it runs before the slogdet fallback (3 kernels as Inductor, was 2).
 *  - lowering.py's adaptive_max_pool2d: two Pointwise values over the largest window (no
 *    FallbackKernel up to 25 window positions), ties to the first position as ATen
 *    (cpu_adaptive_maxpool_replpad_train forward: 2 kernels as Inductor, was 3). */
#include "tap.h"
#include "tests/support/codegen_check.h"

#define HDR "class <lambda>(torch.nn.Module):\n"

/* Lower and schedule fx on the CPU; *gen: generated kernels in order, their names in names[]
 * (up to 8) and the kernel index of each (extern ones too) in kinds ('c' generated, 'x' extern);
 * checks compiled C against the interpreter. Returns the schedule (caller frees s, m, g). */
static Schedule *sched_of(MiCtx *ctx, const char *name, const char *fx, Graph **g_out, IrModule **m_out, char *kinds, size_t nk) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    *g_out = g;
    *m_out = NULL;
    if (!ok(g != NULL, "%s parses", name)) return NULL;
    ops_resolve_graph(g);
    ctx->fusion = true;
    ctx->target = MI_DEV_CPU;
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    *m_out = b.m;   /* the module and the schedule are the caller's */
    Schedule *s = b.s;
    if (!s) { char e[600]; diag("%s", mi_err_str(ctx, e, sizeof e)); free(b.src); return NULL; }
    size_t k = 0;
    for (int i = 0; i < s->nkernels && k + 1 < nk; i++) {
        const SchedKernel *K = &s->kernels[i];
        if (K->name && !strncmp(K->name, "extern_multi_output", 19)) continue;   /* no code: its owner's call wrote it */
        kinds[k++] = K->is_extern ? 'x' : 'c';
    }
    kinds[k] = 0;
    RtModule *rt = b.rt;
    IValue *in = NULL;
    int nin = 0, r = -1;
    StrBuf rep;
    sb_init(&rep);
    if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) r = rt_check(ctx, rt, g, in, nin, 1e-5, 1e-5, &rep);
    ok(r == 1, "%s: compiled C agrees with the interpreter", name);
    if (r != 1) { char e[600]; diag("%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e)); }
    sb_free(&rep);
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    free(b.src);
    return s;
}

static bool decided(const Schedule *s, bool accepted, const char *reason) {
    for (int i = 0; i < s->ndecisions; i++)
        if (s->decisions[i].accepted == accepted && strstr(s->decisions[i].reason, reason)) return true;
    return false;
}

/* sum(x), a fallback cumsum, sum of it, add of the two scalars */
static const char *scalar_after_fallback = HDR
    "    def forward(self, arg0_1: \"f32[6, 5][5, 1]cpu\"):\n"
    "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg0_1)\n"
    "        cumsum: \"f32[6, 5][5, 1]cpu\" = torch.ops.aten.cumsum.default(arg0_1, 0)\n"
    "        sum_2: \"f32[][]cpu\" = torch.ops.aten.sum.default(cumsum);  cumsum = None\n"
    "        add: \"f32[][]cpu\" = torch.ops.aten.add.Tensor(sum_1, sum_2);  sum_1 = sum_2 = None\n"
    "        return (add,)\n";

/* two scalar reductions over the same 30 elements (sum, amax), returned apart */
static const char *same_ranges = HDR
    "    def forward(self, arg0_1: \"f32[6, 5][5, 1]cpu\"):\n"
    "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg0_1)\n"
    "        amax: \"f32[][]cpu\" = torch.ops.aten.amax.default(arg0_1, [0, 1])\n"
    "        return (sum_1, amax)\n";

/* a returned pointwise value and its sum: COMPATIBLE_REDUCTION */
static const char *pointwise_then_sum = HDR
    "    def forward(self, arg0_1: \"f32[30][1]cpu\"):\n"
    "        mul: \"f32[30][1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 2)\n"
    "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(mul)\n"
    "        return (mul, sum_1)\n";

static void test_scalar_reductions(MiCtx *ctx) {
    Graph *g;
    IrModule *m;
    char kinds[32];
    Schedule *s = sched_of(ctx, "scalar after fallback", scalar_after_fallback, &g, &m, kinds, sizeof kinds);
    is_str(kinds, "cxc", "sum(x) runs before the cumsum fallback, sum(cumsum) + add after it: two cpp kernels");
    ok(s && decided(s, false, "cpp: a reduction to a scalar"), "the scalar sums are refused their add (no outer loop)");
    sched_free(s); ir_free(m); graph_free(g);
    s = sched_of(ctx, "same ranges", same_ranges, &g, &m, kinds, sizeof kinds);
    is_str(kinds, "c", "sum and amax of one tensor: one kernel");
    ok(s && s->ndecisions > 0 && s->decisions[0].accepted, "and one fused group (SAME_VARS_REDUCE)");
    sched_free(s); ir_free(m); graph_free(g);
    s = sched_of(ctx, "pointwise then sum", pointwise_then_sum, &g, &m, kinds, sizeof kinds);
    ok(s && s->ndecisions > 0 && s->decisions[0].accepted, "a returned pointwise and the sum of it fuse (COMPATIBLE_REDUCTION)");
    sched_free(s); ir_free(m); graph_free(g);
}

/* glow's invertible 1x1 convolution forward, as the log has it (cpu_glow_invconv_slogdet_train) */
static const char *glow_forward =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, primals_1: \"f32[4, 4][1, 4]cpu\", primals_2: \"f32[2, 4, 5, 5][100, 25, 5, 1]cpu\"):\n"
    "        unsqueeze: \"f32[4, 4, 1][1, 4, 1]cpu\" = torch.ops.aten.unsqueeze.default(primals_1, 2)\n"
    "        unsqueeze_1: \"f32[4, 4, 1, 1][1, 4, 1, 1]cpu\" = torch.ops.aten.unsqueeze.default(unsqueeze, 3);  unsqueeze = None\n"
    "        convolution: \"f32[2, 4, 5, 5][100, 25, 5, 1]cpu\" = torch.ops.aten.convolution.default(primals_2, unsqueeze_1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1);  unsqueeze_1 = None\n"
    "        _linalg_slogdet = torch.ops.aten._linalg_slogdet.default(primals_1)\n"
    "        getitem_1: \"f32[][]cpu\" = _linalg_slogdet[1]\n"
    "        getitem_2: \"f32[4, 4][1, 4]cpu\" = _linalg_slogdet[2]\n"
    "        getitem_3: \"i32[4][1]cpu\" = _linalg_slogdet[3];  _linalg_slogdet = None\n"
    "        mul: \"f32[][]cpu\" = torch.ops.aten.mul.Tensor(getitem_1, 5);  getitem_1 = None\n"
    "        mul_1: \"f32[][]cpu\" = torch.ops.aten.mul.Tensor(mul, 5);  mul = None\n"
    "        return (convolution, mul_1, primals_1, primals_2, getitem_2, getitem_3)\n";

static void test_returned_extern(MiCtx *ctx) {
    Graph *g;
    IrModule *m;
    char kinds[32];
    Schedule *s = sched_of(ctx, "glow forward", glow_forward, &g, &m, kinds, sizeof kinds);
    /* layouts: the convolution's channels-last inputs (Inductor's layout optimization), the
     * extern convolution, its NCHW copy, the slogdet fallback, the scalar muls */
    is_str(kinds, "cxcxc", "copy of the returned convolution right after it, before the slogdet fallback: 3 cpp kernels");
    const Buffer *conv_copy = NULL;
    for (int i = 0; m && i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->kind == BUF_COMPUTED && b->output_index == 0) conv_copy = b;
    }
    int64_t st[4] = {0};
    for (int d = 0; conv_copy && d < 4; d++) sym_is_int(conv_copy->layout.stride[d], &st[d]);
    ok(conv_copy && st[0] == 100 && st[1] == 25 && st[2] == 5 && st[3] == 1, "output 0 is the copy in the eager strides [100, 25, 5, 1]");
    sched_free(s); ir_free(m); graph_free(g);
}

/* ties: clamp makes many equal maxima; both outputs are compared with the interpreter (ATen's
 * kernel: the first position of the max) */
static const char *adaptive_max = HDR
    "    def forward(self, arg0_1: \"f32[2, 3, 7, 10][210, 70, 10, 1]cpu\"):\n"
    "        clamp: \"f32[2, 3, 7, 10][210, 70, 10, 1]cpu\" = torch.ops.aten.clamp.default(arg0_1, -0.5, 0.3)\n"
    "        p = torch.ops.aten.adaptive_max_pool2d.default(clamp, [3, 4])\n"
    "        getitem: \"f32[2, 3, 3, 4][36, 12, 4, 1]cpu\" = p[0]\n"
    "        getitem_1: \"i64[2, 3, 3, 4][36, 12, 4, 1]cpu\" = p[1];  p = None\n"
    "        return (getitem, getitem_1)\n";

/* 30 rows to 4: windows of up to 9 x 9 positions, more than 25: the FallbackKernel */
static const char *adaptive_max_big = HDR
    "    def forward(self, arg0_1: \"f32[1, 2, 30, 30][1800, 900, 30, 1]cpu\"):\n"
    "        p = torch.ops.aten.adaptive_max_pool2d.default(arg0_1, [4, 4])\n"
    "        getitem: \"f32[1, 2, 4, 4][32, 16, 4, 1]cpu\" = p[0]\n"
    "        getitem_1: \"i64[1, 2, 4, 4][32, 16, 4, 1]cpu\" = p[1];  p = None\n"
    "        return (getitem, getitem_1)\n";

/* the kernel kinds of fx's schedule are `want` (and compiled C agrees with the interpreter) */
static void expect_kinds(MiCtx *ctx, const char *name, const char *fx, const char *want, const char *what) {
    Graph *g;
    IrModule *m;
    char kinds[32];
    Schedule *s = sched_of(ctx, name, fx, &g, &m, kinds, sizeof kinds);
    is_str(kinds, want, "%s", what);
    sched_free(s); ir_free(m); graph_free(g);
}

static void test_adaptive_max_pool(MiCtx *ctx) {
    expect_kinds(ctx, "adaptive_max_pool2d", adaptive_max, "c", "adaptive_max_pool2d 7x10 -> 3x4 (windows of 3 x 4): generated code, no fallback");
    expect_kinds(ctx, "adaptive_max_pool2d, large windows", adaptive_max_big, "x", "30x30 -> 4x4 (windows of 9 x 9): the FallbackKernel");
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    test_adaptive_max_pool(ctx);
    test_scalar_reductions(ctx);
    test_returned_extern(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
