/* test_codegen_mm_dtypes.c — extern_kernels.mm / addmm / bmm beside f32: Inductor calls the ATen
 * kernel for every floating dtype (torch/_inductor/kernel/mm.py), so an f16, bf16 or f64 matmul
 * is an extern kernel here too, not a loop reduction. Each graph is lowered (the product must
 * be an extern buffer), compiled to C (mi_gemm_f16 / mi_gemm_bf16: f32 accumulation, one
 * rounding; mi_gemm_f64 in double) and checked against the interpreter on random inputs; the
 * CUDA source of the same schedule instantiates the templated GEMM for the dtype. Sizes leave
 * partial 32-tiles; B is a transposed weight (strided) as in a linear layer. */
#include "tap.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_cuda.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"

/* Lower, schedule and compile `fx` (device cpu, then the CUDA text), check against the
 * interpreter with tolerances rtol/atol, and look for `csym` in the C source and `cusym` in the
 * CUDA source. */
static void one(MiCtx *ctx, const char *name, const char *fx, const char *csym, const char *cusym, double rtol, double atol) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    if (!ok(g != NULL, "%s parses", name)) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    ctx->target = MI_DEV_CPU;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    int next = 0, nloop = 0;
    for (int i = 0; s && i < s->nkernels; i++) {
        if (s->kernels[i].is_extern) next++;
        else nloop++;
    }
    ok(s && next == 1 && nloop == 0, "%s: one extern kernel, no loop kernel (%d extern, %d loop)", name, next, nloop);
    char *src = s ? codegen_c(ctx, s) : NULL;
    ok(src && strstr(src, csym), "%s: the C module calls %s", name, csym);
    RtModule *rt = src ? rt_compile(ctx, src) : NULL;
    IValue *in = NULL;
    int nin = 0, r = -1;
    StrBuf rep;
    sb_init(&rep);
    if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) r = rt_check(ctx, rt, g, in, nin, rtol, atol, &rep);
    ok(r == 1, "%s agrees with the interpreter", name);
    if (r != 1) {
        char e[600];
        diag("%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e));
    }
    sb_free(&rep);
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    free(src);
    char *cu = s ? codegen_cuda(ctx, s) : NULL;
    ok(cu && strstr(cu, cusym), "%s: the CUDA source calls %s", name, cusym);
    free(cu);
    sched_free(s);
    ir_free(m);
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

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    /* f16 / bf16: the interpreter rounds a double sum once, the module an f32 sum: at most one
     * unit in the last place of the half format apart */
    one(ctx, "mm f16", mm_f16, "mi_gemm_f16(", "mi_gemm<__half, float>(", 2e-3, 2e-3);
    one(ctx, "addmm bf16", addmm_bf16, "mi_gemm_bf16(", "mi_gemm<__nv_bfloat16, float>(", 1.6e-2, 1.6e-2);
    one(ctx, "bmm f64", bmm_f64, "mi_gemm_f64(", "mi_gemm<double, double>(", 1e-12, 1e-12);
    one(ctx, "addmm f64", addmm_f64, "mi_gemm_f64(", "mi_gemm<double, double>(", 1e-12, 1e-12);
    one(ctx, "bmm bf16", bmm_bf16, "mi_gemm_bf16(", "mi_gemm<__nv_bfloat16, float>(", 1.6e-2, 1.6e-2);
    mi_ctx_free(ctx);
    return done_testing();
}
