/* test_lowering_repeat.c — aten.repeat and aten.diagonal lower as Inductor's lowering.py does
 * (repeat: a Pointwise reading the input at index % size on each repeated dim; diagonal: a
 * GenericView, the other dims then the diagonal), not as FallbackKernels: each graph is one
 * generated kernel with no extern buffer, and its compiled C agrees with the interpreter
 * (whose repeat and diagonal are ATen's definitions) on random inputs. */
#include "tap.h"
#include "codegen/codegen_c.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"

/* fx -> lower -> sched (expect no extern, and `kernels` generated kernels unless -1) -> C, checked */
static void one(MiCtx *ctx, const char *name, const char *fx, int kernels) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    if (!ok(g != NULL, "%s parses", name)) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    int next = 0, nloop = 0;
    for (int i = 0; s && i < s->nkernels; i++) {
        if (s->kernels[i].is_extern) next++;
        else nloop++;
    }
    ok(s && next == 0 && nloop >= 1 && (kernels < 0 || nloop == kernels), "%s: generated kernels only (%d, %d extern)", name, nloop, next);
    if (!s) { char e[600]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    char *src = s ? codegen_c(ctx, s) : NULL;
    RtModule *rt = src ? rt_compile(ctx, src) : NULL;
    IValue *in = NULL;
    int nin = 0, r = -1;
    StrBuf rep;
    sb_init(&rep);
    if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) r = rt_check(ctx, rt, g, in, nin, 1e-5, 1e-6, &rep);
    ok(r == 1, "%s agrees with the interpreter", name);
    if (r != 1) { char e[600]; diag("%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e)); }
    sb_free(&rep);
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    free(src);
    sched_free(s);
    ir_free(m);
    graph_free(g);
}

#define HDR "class <lambda>(torch.nn.Module):\n"

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

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    one(ctx, "repeat", repeat_fx, 1);
    one(ctx, "diagonal", diagonal_fx, -1);
    mi_ctx_free(ctx);
    return done_testing();
}
