/* fuzz_passes.c — libFuzzer target: FX text that parses and lints clean goes through the
 * reference interpreter and the whole post-grad pass pipeline (with the manager's per-step
 * checks) without crashing, leaking or hitting UB. Numerics disagreements are not crashes
 * here (tests/test_random_graphs.c hunts those); a pass that errors out is fine too, as long
 * as it says why. Placeholders above 64K elements are skipped to keep executions fast.
 * Seeds: tests/fuzz/seeds.sh's seed-fx (fixtures + random graphs). */
#include "fx_passes/passes.h"
#include "tests/fuzz/fuzz_graph.h"
#include <stdlib.h>
#include <string.h>

static bool small_inputs(const IValue *in, int n) {
    for (int i = 0; i < n; i++)
        if (in[i].kind == IV_TENSOR && tensor_numel(in[i].t) > 65536) return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = fx_parse(ctx, (const char *)data, size, "fuzz.py", 1);
    if (g && ops_resolve_graph(g) == 0 && graph_lint(ctx, g, NULL) == 0) {
        bool ok = fz_small_graph(g);   /* refuse huge annotations before allocating anything */
        IValue *in = NULL;
        int nin = 0;
        ctx->seed = 1;
        mi_limit_set(ctx, "while_iterations", 1000);   /* a runaway while_loop: its error, not a timeout */
        if (ok && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0 && small_inputs(in, nin)) {
            PassManager *pm = pm_new(ctx, g, in, nin);
            if (pm) {
                pm_run_all(pm);
                char *rep = pm_report(pm);
                free(rep);
                pm_free(pm);
            }
        }
        if (in) interp_free_outputs(in, nin);
    }
    graph_free(g);
    mi_ctx_free(ctx);
    return 0;
}
