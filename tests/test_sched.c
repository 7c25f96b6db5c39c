/* test_sched.c — scheduling and fusion: kernel counts with fusion on and off, the recorded
 * fusion decisions, dead buffer removal, post-fusion text. */
#include "tap.h"
#include "scheduler.h"
#include "lowering.h"

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
    ok(k >= 1 && k <= 2, "ln_gelu: %d kernels (<= 2)", k);
    ok(dec && strstr(dec, "fuse ") != NULL, "ln_gelu: accepted fusions are listed");
    ok(dec && strstr(dec, "vertical") != NULL, "ln_gelu: a vertical fusion");
    ok(post && strstr(post, "FusedSchedulerNode") && strstr(post, "cpp_fused_"), "post-fusion text names the fused kernel");
    free(dec); free(post); dec = post = NULL;
    ok(kernels(ctx, "cpu/ln_gelu/graph0", false, &dec, NULL) > 2, "ln_gelu: more kernels without fusion");
    ok(dec && dec[0] == 0, "no decisions when fusion is off");
    free(dec); dec = NULL;
    k = kernels(ctx, "cpu/softmax/graph0", true, NULL, NULL);
    ok(k >= 1 && k <= 2, "softmax: %d kernels (<= 2)", k);
    k = kernels(ctx, "cuda/softmax/graph0", true, NULL, NULL);
    ok(k >= 1 && k <= 2, "softmax via prepare_softmax_online: %d kernels (<= 2)", k);
    /* reductions: x.sum(dim=0) reduces over another outer size: it cannot join the row kernel */
    k = kernels(ctx, "cpu/reductions/graph0", true, &dec, NULL);
    is_int(k, 2, "reductions: row kernel + column sum");
    ok(dec && strstr(dec, "skip ") != NULL, "reductions: a rejected fusion is recorded with its reason");
    free(dec); dec = NULL;
    /* extern kernels never fuse; relu fuses... into nothing (its producer is extern) */
    is_int(kernels(ctx, "cpu/mlp/graph0", true, NULL, NULL), 3, "mlp: addmm, relu, addmm");
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
