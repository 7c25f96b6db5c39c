/* test_sched.c — scheduling and fusion: kernel counts with fusion on and off, the recorded
 * fusion decisions, dead buffer removal, post-fusion text. */
#include "tap.h"
#include "scheduler.h"
#include "lowering.h"
#include "codegen_c.h"

static Schedule *sched(MiCtx *ctx, const char *rel, bool fusion, Graph **g, IrModule **m) {
    char path[512];
    snprintf(path, sizeof path, "tests/fixtures/torch-cases/%s/post_post_grad.py", rel);
    *g = graph_load_file(ctx, path);
    *m = NULL;
    if (!*g) return NULL;
    ops_resolve_graph(*g);
    *m = ir_lower(ctx, *g);
    if (!*m) return NULL;
    ctx->fusion = fusion;
    return sched_run(ctx, *m);
}

static int kernels(MiCtx *ctx, const char *rel, bool fusion, char **decisions, char **post) {
    Graph *g;
    IrModule *m;
    Schedule *s = sched(ctx, rel, fusion, &g, &m);
    int k = s ? sched_num_kernels(s) : -1;
    if (s && decisions) *decisions = sched_decisions_text(s);
    if (s && post) *post = sched_print(s);
    sched_free(s);
    ir_free(m);
    graph_free(g);
    return k;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char *dec = NULL, *post = NULL;
    is_int(kernels(ctx, "cpu/seed_example/graph0", true, NULL, NULL), 1, "seed_example: one kernel");
    int k = kernels(ctx, "cpu/ln_gelu/graph0", true, &dec, &post);
    is_int(k, 1, "ln_gelu: one kernel, as Inductor's cpp_fused_..._0");
    ok(dec && strstr(dec, "fuse ") != NULL, "ln_gelu: accepted fusions are listed");
    ok(dec && strstr(dec, "vertical") != NULL, "ln_gelu: a vertical fusion");
    ok(post && strstr(post, "FusedSchedulerNode") && strstr(post, "cpp_fused_"), "post-fusion text names the fused kernel");
    free(dec); free(post); dec = post = NULL;
    ok(kernels(ctx, "cpu/ln_gelu/graph0", false, &dec, NULL) > 2, "ln_gelu: more kernels without fusion");
    ok(dec && dec[0] == 0, "no decisions when fusion is off");
    free(dec); dec = NULL;
    k = kernels(ctx, "cpu/softmax/graph0", true, &dec, NULL);
    is_int(k, 1, "softmax: one kernel");
    /* every decision with its reason and score, in the order they were taken */
    is_str(dec, "fuse op0 + op1 score=256256: vertical: producer into consumer\n"
                "fuse op2 + op3 score=256256: vertical: producer into consumer\n"
                "fuse op0_op1 + op2_op3 score=256000: vertical: producer into consumer\n", "softmax: the decisions");
    free(dec); dec = NULL;
    k = kernels(ctx, "cuda/softmax/graph0", true, NULL, NULL);
    is_int(k, 1, "softmax via prepare_softmax_online: one kernel");
    /* reductions: x.sum(dim=0) reduces over another outer size: it cannot join the row kernel */
    k = kernels(ctx, "cpu/reductions/graph0", true, &dec, NULL);
    is_int(k, 2, "reductions: row kernel + column sum");
    ok(dec && strstr(dec, "skip op3 + op0_op1_op2_op4 score=49536: outer sizes differ\n") != NULL,
       "reductions: the rejected fusion is recorded with its reason");
    free(dec); dec = NULL;
    /* extern kernels never fuse; relu fuses... into nothing (its producer is extern) */
    is_int(kernels(ctx, "cpu/mlp/graph0", true, NULL, NULL), 3, "mlp: addmm, relu, addmm");
    /* memory planning, fusion off: softmax's sum (buf2, f32[64, 1]) takes the storage of the max
     * (buf0), dead once exp(x - max) is computed; buf1 is still read by the division */
    Graph *g0;
    IrModule *m0;
    Schedule *s0 = sched(ctx, "cpu/softmax/graph0", false, &g0, &m0);
    if (ok(s0 != NULL, "softmax schedules with fusion off")) {
        Buffer *b0 = ir_find_buffer(m0, "buf0"), *b1 = ir_find_buffer(m0, "buf1"), *b2 = ir_find_buffer(m0, "buf2");
        ok(b0 && b1 && b2 && s0->reuse_of[b2->id] == b0->id, "buf2 reuses buf0");
        ok(b1 && s0->reuse_of[b1->id] < 0 && b0 && s0->reuse_of[b0->id] < 0, "buf0, buf1 get their own storage");
        char *src = codegen_c(ctx, s0);
        ok(src && strstr(src, "    float *buf2 = buf0;   /* reuses the freed buf0 */\n") && !strstr(src, "free(buf2)"),
           "call() hands buf0's storage to buf2 and frees it once");
        free(src);
    }
    sched_free(s0); ir_free(m0); graph_free(g0);
    /* mlp_train backward: the bias grads (sum keepdim, then view to [128] / [10]) are written
     * straight into the outputs, as Inductor's reinterpret_tensor: no copy kernels */
    Graph *g1;
    IrModule *m1;
    Schedule *s1 = sched(ctx, "cpu/mlp_train/graph1", true, &g1, &m1);
    if (ok(s1 != NULL, "mlp_train backward schedules")) {
        is_int(s1->nnodes, 6, "mlp_train backward: 3 mm + 2 sums + relu grad, no copies");
        ok(m1->outputs[1] && m1->out_views[1] && m1->outputs[1]->layout.ndim == 2 && m1->out_views[1]->ndim == 1,
           "output 1 is the [1, 128] sum seen as [128]");
    }
    sched_free(s1); ir_free(m1); graph_free(g1);
    /* dead buffer removal: var_mean's unused parts / getitem chains */
    Graph *g;
    IrModule *m;
    Schedule *s = sched(ctx, "cpu/view_mutation/graph0", true, &g, &m);
    ok(s != NULL, "view_mutation schedules");
    if (s) {
        int dead = 0;
        for (int i = 0; i < s->nnodes; i++) dead += s->nodes[i].dead;
        ok(s->norder >= 2, "mutation through a transposed view is not fused with its reads (%d kernels)", s->norder);
        diag("view_mutation: %d nodes, %d dead, %d kernels", s->nnodes, dead, s->norder);
    }
    sched_free(s); ir_free(m); graph_free(g);
    mi_ctx_free(ctx);
    return done_testing();
}
