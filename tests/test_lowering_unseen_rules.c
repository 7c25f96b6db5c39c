/* test_lowering_unseen_rules.c — Inductor rules the unseen torch.compile logs were missing
 * (tests/fixtures/unseen, issue #21), each on a small graph lowered, scheduled, compiled to C and
 * checked against the interpreter on random inputs:
 *  - extern_kernels.mm / addmm / bmm beside f32: Inductor calls the ATen kernel for every
 *    floating dtype (torch/_inductor/kernel/mm.py), so an f16, bf16 or f64 matmul is one extern
 *    kernel (mi_gemm_f16 / mi_gemm_bf16: f32 accumulation, one rounding; mi_gemm_f64 in double),
 *    and the CUDA source instantiates the templated GEMM for the dtype. Sizes leave partial
 *    32-tiles; B is a transposed weight (strided) as in a linear layer.
 *  - aten.repeat and aten.diagonal as lowering.py lowers them (repeat: a Pointwise reading the
 *    input at index % size on each repeated dim; diagonal: a GenericView, the other dims then
 *    the diagonal), generated kernels and no FallbackKernel.
 *  - aten.glu as lowering.py lowers it: one Pointwise (its origins: the glu node).
 *  - prims.fma as ops.fma: fmaf in C and CUDA.
 *  - a returned view Inductor cannot turn into a ReinterpretView (convert_to_reinterpret_view
 *    with sizevars' own simplification) is copied at its node; one it can is not.
 *  - 200 in-place Scatters into graph inputs read by one sum: a StarDep on each, once.
 *  - a 2-d pad whose only user is an mm realizes its input (inplace_constant_pad_nd). */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "codegen/codegen_cuda.h"

/* Lower, schedule and compile `fx` (device cpu), check against the interpreter with rtol/atol.
 * nextern: the extern kernels expected; nloops: the generated kernels expected (-1: at least
 * one). csym / cusym (or NULL): text the C / CUDA source of the schedule must contain. */
static void one(MiCtx *ctx, const char *name, const char *fx, int nextern, int nloops,
                const char *csym, const char *cusym, double rtol, double atol) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    if (!ok(g != NULL, "%s parses", name)) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    ctx->target = MI_DEV_CPU;
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    Schedule *s = b.s;
    int next = 0, nloop = 0;
    for (int i = 0; s && i < s->nkernels; i++) {
        if (s->kernels[i].is_extern) next++;
        else nloop++;
    }
    ok(s && next == nextern && (nloops < 0 ? nloop >= 1 : nloop == nloops),
       "%s: %d extern kernel(s), %s generated (%d extern, %d generated)", name, nextern, nloops < 0 ? "some" : nloops ? "one" : "none", next, nloop);
    if (!s) { char e[600]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    if (csym) ok(b.src && strstr(b.src, csym), "%s: the C module calls %s", name, csym);
    RtModule *rt = b.rt;
    IValue *in = NULL;
    int nin = 0, r = -1;
    StrBuf rep;
    sb_init(&rep);
    if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) r = rt_check(ctx, rt, g, in, nin, rtol, atol, &rep);
    ok(r == 1, "%s agrees with the interpreter", name);
    if (r != 1) { char e[600]; diag("%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e)); }
    sb_free(&rep);
    if (in) interp_free_outputs(in, nin);
    if (cusym) {
        char *cu = s ? codegen_cuda(ctx, s) : NULL;
        ok(cu && strstr(cu, cusym), "%s: the CUDA source calls %s", name, cusym);
        free(cu);
    }
    cg_free(&b);
    graph_free(g);
}

#define HDR "class <lambda>(torch.nn.Module):\n"

static const char *mm_f16 = HDR
    "    def forward(self, arg0_1: \"f16[37, 53][53, 1]cpu\", arg1_1: \"f16[29, 53][53, 1]cpu\"):\n"
    "        permute: \"f16[53, 29][1, 53]cpu\" = torch.ops.aten.permute.default(arg1_1, [1, 0])\n"
    "        mm: \"f16[37, 29][29, 1]cpu\" = torch.ops.aten.mm.default(arg0_1, permute)\n"
    "        return (mm,)\n";

static const char *addmm_bf16 = HDR
    "    def forward(self, arg0_1: \"bf16[29][1]cpu\", arg1_1: \"bf16[37, 53][53, 1]cpu\", arg2_1: \"bf16[29, 53][53, 1]cpu\"):\n"
    "        permute: \"bf16[53, 29][1, 53]cpu\" = torch.ops.aten.permute.default(arg2_1, [1, 0])\n"
    "        addmm: \"bf16[37, 29][29, 1]cpu\" = torch.ops.aten.addmm.default(arg0_1, arg1_1, permute)\n"
    "        return (addmm,)\n";

static const char *bmm_f64 = HDR
    "    def forward(self, arg0_1: \"f64[3, 37, 53][1961, 53, 1]cpu\", arg1_1: \"f64[3, 53, 29][1537, 29, 1]cpu\"):\n"
    "        bmm: \"f64[3, 37, 29][1073, 29, 1]cpu\" = torch.ops.aten.bmm.default(arg0_1, arg1_1)\n"
    "        return (bmm,)\n";

static const char *addmm_f64 = HDR
    "    def forward(self, arg0_1: \"f64[37, 29][29, 1]cpu\", arg1_1: \"f64[53, 37][37, 1]cpu\", arg2_1: \"f64[53, 29][29, 1]cpu\"):\n"
    "        permute: \"f64[37, 53][1, 37]cpu\" = torch.ops.aten.permute.default(arg1_1, [1, 0])\n"
    "        addmm: \"f64[37, 29][29, 1]cpu\" = torch.ops.aten.addmm.default(arg0_1, permute, arg2_1)\n"
    "        return (addmm,)\n";

static const char *bmm_bf16 = HDR
    "    def forward(self, arg0_1: \"bf16[2, 37, 53][1961, 53, 1]cpu\", arg1_1: \"bf16[2, 53, 29][1537, 29, 1]cpu\"):\n"
    "        bmm: \"bf16[2, 37, 29][1073, 29, 1]cpu\" = torch.ops.aten.bmm.default(arg0_1, arg1_1)\n"
    "        return (bmm,)\n";

/* instance norm's weight repeated per sample (F.instance_norm), a leading new dim, a size-1 dim */
static const char *repeat_fx = HDR
    "    def forward(self, arg0_1: \"f32[3][1]cpu\", arg1_1: \"f32[2, 1, 5][5, 5, 1]cpu\"):\n"
    "        repeat: \"f32[6][1]cpu\" = torch.ops.aten.repeat.default(arg0_1, [2])\n"
    "        repeat_1: \"f32[4, 2, 3, 10][60, 30, 10, 1]cpu\" = torch.ops.aten.repeat.default(arg1_1, [4, 1, 3, 2])\n"
    "        mul: \"f32[4, 2, 3, 10][60, 30, 10, 1]cpu\" = torch.ops.aten.mul.Tensor(repeat_1, 2.0)\n"
    "        return (repeat, mul)\n";

/* einsum('bii->bi'), offsets below and above, dims given negative and swapped, then a reduction over it */
static const char *diagonal_fx = HDR
    "    def forward(self, arg0_1: \"f32[2, 5, 4][20, 4, 1]cpu\"):\n"
    "        diagonal: \"f32[2, 4][20, 5]cpu\" = torch.ops.aten.diagonal.default(arg0_1, 0, 1, 2)\n"
    "        diagonal_1: \"f32[4, 2][1, 24]cpu\" = torch.ops.aten.diagonal.default(arg0_1, -2, 1, 0)\n"
    "        diagonal_2: \"f32[2, 3][20, 5]cpu\" = torch.ops.aten.diagonal.default(arg0_1, 1, -2, -1)\n"
    "        sum_1: \"f32[2][1]cpu\" = torch.ops.aten.sum.dim_IntList(diagonal, [1])\n"
    "        add: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten.add.Tensor(diagonal_2, 1.0)\n"
    "        mul: \"f32[4, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(diagonal_1, 3.0)\n"
    "        return (sum_1, add, mul)\n";

/* glu over dim 1, then a mul: Inductor's glu lowering (mul(first half, sigmoid(second half)))
 * makes one Pointwise that fuses with its consumer, no FallbackKernel; kernel named after glu */
static const char *glu_fx = HDR
    "    def forward(self, arg0_1: \"f32[2, 6, 5][30, 5, 1]cpu\"):\n"
    "        glu: \"f32[2, 3, 5][15, 5, 1]cpu\" = torch.ops.aten.glu.default(arg0_1, 1)\n"
    "        mul: \"f32[2, 3, 5][15, 5, 1]cpu\" = torch.ops.aten.mul.Tensor(glu, 2.0)\n"
    "        return (mul,)\n";

/* prims.fma (PyTorch's refs emit it in a softmax backward): Inductor's ops.fma, one rounding */
static const char *fma_fx = HDR
    "    def forward(self, arg0_1: \"f32[8, 4][4, 1]cpu\", arg1_1: \"f32[8, 1][1, 1]cpu\", arg2_1: \"f32[8, 4][4, 1]cpu\"):\n"
    "        neg: \"f32[8, 4][4, 1]cpu\" = torch.ops.aten.neg.default(arg0_1)\n"
    "        fma: \"f32[8, 4][4, 1]cpu\" = torch.ops.prims.fma.default(neg, arg1_1, arg2_1)\n"
    "        return (fma,)\n";

/* multi-head attention's q: select of a pending value, reshape [8, 2, 32] -> [8, 8, 8] (no
 * dim pairing: View.dynamic_reshape_indexer goes through the flat index), permute, reshape to
 * [2, 4, 8, 8], returned. run_node realizes the add and requires the view in its eager stride
 * order; Inductor's _simplify_with_ranges cannot make the composed index linear, so
 * convert_to_reinterpret_view fails and the view is copied: two buffers, as its output code */
static const char *qkv_view_fx = HDR
    "    def forward(self, arg0_1: \"f32[3, 8, 2, 32][512, 64, 32, 1]cpu\"):\n"
    "        add: \"f32[3, 8, 2, 32][512, 64, 32, 1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, 1.0)\n"
    "        select: \"f32[8, 2, 32][64, 32, 1]cpu\" = torch.ops.aten.select.int(add, 0, 1)\n"
    "        view: \"f32[8, 8, 8][64, 8, 1]cpu\" = torch.ops.aten.reshape.default(select, [8, 8, 8])\n"
    "        permute: \"f32[8, 8, 8][8, 64, 1]cpu\" = torch.ops.aten.permute.default(view, [1, 0, 2])\n"
    "        view_1: \"f32[2, 4, 8, 8][32, 8, 64, 1]cpu\" = torch.ops.aten.reshape.default(permute, [2, 4, 8, 8])\n"
    "        return (view_1,)\n";

/* the same chain whose reshapes pair dims ([3, 8, 2, 32] -> [3, 16, 32]): the digits join
 * back, the returned view is a ReinterpretView of the add's buffer, one buffer */
static const char *joined_view_fx = HDR
    "    def forward(self, arg0_1: \"f32[3, 8, 2, 32][512, 64, 32, 1]cpu\"):\n"
    "        add: \"f32[3, 8, 2, 32][512, 64, 32, 1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, 1.0)\n"
    "        view: \"f32[3, 16, 32][512, 32, 1]cpu\" = torch.ops.aten.reshape.default(add, [3, 16, 32])\n"
    "        permute: \"f32[16, 3, 32][32, 512, 1]cpu\" = torch.ops.aten.permute.default(view, [1, 0, 2])\n"
    "        return (permute,)\n";

/* lowering.py inplace_constant_pad_nd: a 2-d pad whose only user is an mm realizes its input
 * (here the doubled embedding-like value seen through a reshape), and the pad reads it: the mul
 * and the pad, 2 buffers; a pad read by an add first stays inline in it (1 buffer, the add the
 * mm realizes) */
#define PAD_FX(user) HDR \
    "    def forward(self, arg0_1: \"f32[6, 5, 4][20, 4, 1]cpu\", arg1_1: \"f32[20, 20][20, 1]cpu\"):\n" \
    "        mul: \"f32[6, 5, 4][20, 4, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 2.0)\n" \
    "        view: \"f32[6, 20][20, 1]cpu\" = torch.ops.aten.reshape.default(mul, [6, 20])\n" \
    "        pad: \"f32[8, 20][20, 1]cpu\" = torch.ops.aten.constant_pad_nd.default(view, [0, 0, 0, 2])\n" user \
    "        return (mm,)\n"
static const char *pad_mm_fx = PAD_FX(
    "        mm: \"f32[8, 20][20, 1]cpu\" = torch.ops.aten.mm.default(pad, arg1_1)\n");
static const char *pad_add_mm_fx = PAD_FX(
    "        add: \"f32[8, 20][20, 1]cpu\" = torch.ops.aten.add.Tensor(pad, 1.0)\n"
    "        mm: \"f32[8, 20][20, 1]cpu\" = torch.ops.aten.mm.default(add, arg1_1)\n");

/* The computed buffers lowering `fx` makes (a copy is one more). */
static void computed(MiCtx *ctx, const char *name, const char *fx, int want) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    if (!ok(g != NULL, "%s parses", name)) return;
    ops_resolve_graph(g);
    ctx->target = MI_DEV_CPU;
    IrModule *m = ir_lower(ctx, g);
    int n = 0;
    for (int i = 0; m && i < m->nbufs; i++) n += m->bufs[i]->kind == BUF_COMPUTED;
    ok(m && n == want, "%s: %d computed buffer(s) (%d)", name, want, n);
    ir_free(m);
    graph_free(g);
}

/* A decode step updating many caches in place (index_put_ into N graph inputs, as a KV cache
 * does), then a sum reading them all: each reader depends on the Scatters, once each
 * (ir_deps.c's per-input index of Scatters; it scanned every buffer for every read). Checked
 * on the scheduler's dependencies and against the interpreter. */
static char *many_scatters_fx(int n) {
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, HDR "    def forward(self, ");
    for (int k = 0; k < n; k++) sb_printf(&sb, "arg%d_1: \"f32[8, 4][4, 1]cpu\", ", k);
    sb_printf(&sb, "idx: \"i64[2][1]cpu\", v: \"f32[2, 4][4, 1]cpu\"):\n");
    for (int k = 0; k < n; k++)
        sb_printf(&sb, "        index_put_%d: \"f32[8, 4][4, 1]cpu\" = torch.ops.aten.index_put_.default(arg%d_1, [idx], v)\n", k, k);
    sb_printf(&sb, "        add_1: \"f32[8, 4][4, 1]cpu\" = torch.ops.aten.add.Tensor(index_put_0, index_put_1)\n");
    for (int k = 2; k < n; k++)
        sb_printf(&sb, "        add_%d: \"f32[8, 4][4, 1]cpu\" = torch.ops.aten.add.Tensor(add_%d, index_put_%d)\n", k, k - 1, k);
    sb_printf(&sb, "        return (add_%d,)\n", n - 1);
    return sb_take(&sb);
}

static void many_scatters(MiCtx *ctx, int n) {
    char *fx = many_scatters_fx(n);
    Graph *g = fx_parse(ctx, fx, strlen(fx), "many scatters", 1);
    if (ok(g != NULL, "%d in-place scatters parse", n)) {
        ops_resolve_graph(g);
        ctx->target = MI_DEV_CPU;
        IrModule *m = ir_lower(ctx, g);
        Schedule *s = m ? sched_run(ctx, m) : NULL;
        /* every node reading a mutated input has a StarDep on that input's Scatter, once */
        int nsc = 0, reads = 0, star = 0, dup = 0;
        for (int i = 0; s && i < s->nnodes; i++) {
            const SchedNode *sn = &s->nodes[i];
            nsc += sn->buf->mutates && sn->buf->inplace_alias;
            for (int r = 0; r < sn->deps.nreads; r++) {
                const Dep *d = &sn->deps.reads[r];
                if (d->kind == DEP_MEMORY && d->buf->kind == BUF_INPUT && d->buf->mutated) {
                    reads++;
                    for (int q = 0; q < sn->deps.nreads; q++) {
                        const Dep *e = &sn->deps.reads[q];
                        if (e->kind == DEP_STAR && e->buf->mutates == d->buf) { star++; break; }
                    }
                }
                if (d->kind != DEP_STAR) continue;
                for (int q = 0; q < r; q++) dup += sn->deps.reads[q].kind == DEP_STAR && sn->deps.reads[q].buf == d->buf;
            }
        }
        ok(nsc == n && reads == n && star == n && dup == 0,
           "each read of the %d updated caches depends on its Scatter, once (%d scatters, %d reads, %d with the StarDep, %d repeated)", n, nsc, reads, star, dup);
        sched_free(s);
        ir_free(m);
        graph_free(g);
    }
    one(ctx, "many scatters", fx, 0, -1, NULL, NULL, 1e-5, 1e-6);
    free(fx);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    /* f16 / bf16: the interpreter rounds a double sum once, the module an f32 sum: at most one
     * unit in the last place of the half format apart */
    one(ctx, "mm f16", mm_f16, 1, 0, "mi_gemm_f16(", "mi_gemm<__half, float>(", 2e-3, 2e-3);
    one(ctx, "addmm bf16", addmm_bf16, 1, 0, "mi_gemm_bf16(", "mi_gemm<__nv_bfloat16, float>(", 1.6e-2, 1.6e-2);
    one(ctx, "bmm f64", bmm_f64, 1, 0, "mi_gemm_f64(", "mi_gemm<double, double>(", 1e-12, 1e-12);
    one(ctx, "addmm f64", addmm_f64, 1, 0, "mi_gemm_f64(", "mi_gemm<double, double>(", 1e-12, 1e-12);
    one(ctx, "bmm bf16", bmm_bf16, 1, 0, "mi_gemm_bf16(", "mi_gemm<__nv_bfloat16, float>(", 1.6e-2, 1.6e-2);
    one(ctx, "repeat", repeat_fx, 0, 1, NULL, NULL, 1e-5, 1e-6);
    one(ctx, "diagonal", diagonal_fx, 0, -1, NULL, NULL, 1e-5, 1e-6);
    one(ctx, "glu", glu_fx, 0, 1, "cpp_fused_glu_mul_0", NULL, 1e-5, 1e-6);
    one(ctx, "fma", fma_fx, 0, 1, "fmaf(", "fmaf(", 1e-6, 1e-7);
    /* cpp puts both loop nests of the copied view into one C function (a kernel group) */
    one(ctx, "q view copied", qkv_view_fx, 0, 1, NULL, NULL, 1e-6, 1e-7);
    computed(ctx, "q view copied", qkv_view_fx, 2);
    one(ctx, "joined view", joined_view_fx, 0, 1, NULL, NULL, 1e-6, 1e-7);
    computed(ctx, "joined view", joined_view_fx, 1);
    computed(ctx, "pad before mm", pad_mm_fx, 2);
    one(ctx, "pad before mm", pad_mm_fx, 1, -1, NULL, NULL, 1e-5, 1e-5);
    computed(ctx, "pad before add", pad_add_mm_fx, 1);
    many_scatters(ctx, 200);
    mi_ctx_free(ctx);
    return done_testing();
}
