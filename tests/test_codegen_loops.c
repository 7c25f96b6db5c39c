/* test_codegen_loops.c — the loop forms of core/codegen/codegen_kernel.c: one Welford for var and mean
 * with lanes and a scalar tail, vectorizable NaN-propagating amax, row-local intermediates,
 * column reductions in tiles, parallel full reductions, the shared row loop of a segment. Each
 * graph is compiled and checked against the interpreter (random inputs, and NaNs where the
 * kernel form has a NaN path); sizes are chosen to leave partial lane blocks and tiles. */
#include "tap.h"
#include "codegen/codegen_c.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"

static int count(const char *s, const char *pat) {
    int n = 0;
    for (const char *p = s ? strstr(s, pat) : NULL; p; p = strstr(p + 1, pat)) n++;
    return n;
}

/* compile `fx`, check it against the interpreter; nan_at >= 0 puts a NaN into input 0 there.
 * Returns the generated source (caller frees) or NULL. */
static char *compile_check(MiCtx *ctx, const char *name, const char *fx, long nan_at) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    if (!ok(g != NULL, "%s parses", name)) return NULL;
    ops_resolve_graph(g);
    ctx->fusion = true;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    char *src = s ? codegen_c(ctx, s) : NULL;
    RtModule *rt = src ? rt_compile(ctx, src) : NULL;
    IValue *in = NULL;
    int nin = 0, r = -1;
    StrBuf rep;
    sb_init(&rep);
    if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) {
        if (nan_at >= 0) ((float *)in[0].t->storage->data)[in[0].t->offset + nan_at] = NAN;
        r = rt_check(ctx, rt, g, in, nin, 1e-4, 1e-5, &rep);
    }
    ok(r == 1, "%s%s agrees with the interpreter", name, nan_at >= 0 ? " (with a NaN)" : "");
    if (r != 1) {
        char e[600];
        diag("%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e));
        if (src) diag("%s", src);
    }
    sb_free(&rep);
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    sched_free(s);
    ir_free(m);
    graph_free(g);
    return src;
}

static const char *var_mean_amax =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[37, 53][53, 1]cpu\"):\n"
    "        var_mean = torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 1, keepdim = True)\n"
    "        getitem: \"f32[37, 1][1, 1]cpu\" = var_mean[0]\n"
    "        getitem_1: \"f32[37, 1][1, 1]cpu\" = var_mean[1];  var_mean = None\n"
    "        sub: \"f32[37, 53][53, 1]cpu\" = torch.ops.aten.sub.Tensor(arg0_1, getitem_1)\n"
    "        add: \"f32[37, 1][1, 1]cpu\" = torch.ops.aten.add.Tensor(getitem, 1e-05)\n"
    "        sqrt: \"f32[37, 1][1, 1]cpu\" = torch.ops.aten.sqrt.default(add)\n"
    "        div: \"f32[37, 53][53, 1]cpu\" = torch.ops.aten.div.Tensor(sub, sqrt)\n"
    "        amax: \"f32[37, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [1], True)\n"
    "        add_1: \"f32[37, 53][53, 1]cpu\" = torch.ops.aten.add.Tensor(div, amax)\n"
    "        return (add_1,)\n";

static const char *softmax =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[9, 70][70, 1]cpu\"):\n"
    "        amax: \"f32[9, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [-1], True)\n"
    "        sub: \"f32[9, 70][70, 1]cpu\" = torch.ops.aten.sub.Tensor(arg0_1, amax)\n"
    "        exp: \"f32[9, 70][70, 1]cpu\" = torch.ops.aten.exp.default(sub)\n"
    "        sum_1: \"f32[9, 1][1, 1]cpu\" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)\n"
    "        div: \"f32[9, 70][70, 1]cpu\" = torch.ops.aten.div.Tensor(exp, sum_1)\n"
    "        return (div,)\n";

static const char *col_sum_max =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[45, 150][150, 1]cpu\"):\n"
    "        sum_1: \"f32[150][1]cpu\" = torch.ops.aten.sum.dim_IntList(arg0_1, [0])\n"
    "        amax: \"f32[150][1]cpu\" = torch.ops.aten.amax.default(arg0_1, [0])\n"
    "        return (sum_1, amax)\n";

static const char *full_sum =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[300, 7][7, 1]cpu\"):\n"
    "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg0_1)\n"
    "        amin: \"f32[][]cpu\" = torch.ops.aten.amin.default(arg0_1, [0, 1])\n"
    "        return (sum_1, amin)\n";

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char *src = compile_check(ctx, "var_mean_amax", var_mean_amax, -1);
    if (src) {
        is_int(count(src, "mi_wf_merge(&"), 2, "var and mean share one Welford (lanes merged, then the tail)");
        ok(count(src, "MI_WF(acc") == 2, "the Welford update is in the lane loop and in the scalar tail");
        ok(strstr(src, "mi_wf_merge") != NULL, "lanes are merged");
        ok(strstr(src, "_nan") != NULL, "amax tracks NaN beside the vectorized max");
        ok(count(src, "#pragma omp simd") >= 2, "the row loops are omp simd");
    }
    free(src);
    free(compile_check(ctx, "var_mean_amax", var_mean_amax, 5 * 53 + 52));   /* NaN in the tail */
    free(compile_check(ctx, "var_mean_amax", var_mean_amax, 7 * 53 + 3));    /* NaN in a lane block */

    src = compile_check(ctx, "softmax", softmax, -1);
    if (src) {
        ok(strstr(src, "loc_") != NULL, "softmax keeps exp in a row-local array");
        ok(strstr(src, "reduction(max:") && strstr(src, "reduction(|:"), "amax is an omp simd max reduction with a NaN flag");
    }
    free(src);
    free(compile_check(ctx, "softmax", softmax, 2 * 70 + 69));

    src = compile_check(ctx, "col_sum_max", col_sum_max, -1);
    if (src) ok(strstr(src, "mi_t") && strstr(src, "mi_n"), "column reductions walk tiles of the output dim");
    free(src);
    free(compile_check(ctx, "col_sum_max", col_sum_max, 44 * 150 + 149));

    src = compile_check(ctx, "full_sum", full_sum, -1);
    if (src) ok(strstr(src, "parallel for reduction(+:") || strstr(src, "parallel for simd reduction(+:"), "a full reduction is a parallel reduction");
    free(src);
    free(compile_check(ctx, "full_sum", full_sum, 123));

    mi_ctx_free(ctx);
    return exit_status();
}
