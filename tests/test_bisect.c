/* test_bisect.c — a deliberately broken pass is caught at that pass, by name: by the check
 * after every step (pm_first_failure / pm_report) and by pm_bisect's binary search over the
 * states; a pass that breaks lint (a dangling use) is caught as well. */
#include "ops/inputs.h"
#include "fx_passes/passes.h"
#include "ops/ops.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define CASE "tests/fixtures/torch-cases/cpu/ln_gelu/graph0"

/* Planted bug: turns the last aten.add.Tensor into aten.sub.Tensor. */
static int broken_numerics(PassCtx *pc, Graph *g) {
    for (int i = g->n - 1; i >= 0; i--) {
        Node *n = g->nodes[i];
        if (n->target && !strcmp(n->target, "aten.add.Tensor")) {
            n->target = "aten.sub.Tensor";
            n->op = op_lookup(n->target);
            pass_note(pc, '~', n->name, "planted bug: add -> sub");
            return 0;
        }
    }
    return 0;
}

/* Planted bug: the output reads a node that is removed from the graph. */
static int broken_lint(PassCtx *pc, Graph *g) {
    Node *out = graph_output(g);
    for (int i = g->n - 2; i >= 0; i--) {
        Node *n = g->nodes[i];
        if (n->kind == N_CALL_FUNCTION) {
            graph_remove_node(g, n);   /* leaves its users dangling */
            pass_note(pc, '-', n->name, "planted bug: removed a used node");
            break;
        }
    }
    (void)out;
    return 0;
}

static IValue *inputs(MiCtx *ctx, const Graph *g, int *n) {
    IValue *in = NULL;
    return inputs_from_dir(ctx, g, CASE, &in, n) == 0 ? in : NULL;
}

static void planted(MiCtx *ctx, const Graph *g, const IValue *in, int nin, const char *where, PassFn fn, const char *kind) {
    PassManager *pm = pm_new(ctx, g, in, nin);
    ok(pm_override_pass(pm, where, fn) == 0, "plant a %s bug in %s", kind, where);
    pm_run_all(pm);
    int f = pm_first_failure(pm);
    is_str(f >= 0 ? pm_pass_name(pm, f) : "(none)", where, "step checks name the broken pass (%s)", kind);
    char *r = pm_report(pm);
    ok(strstr(r, where) != NULL && strstr(r, kind) != NULL, "report names the pass and what broke");
    diag("report: %s", r);
    free(r);
    const PassStep *s = pm_step_record(pm, f);
    ok(s && s->numerics_detail, "step record keeps the detail");
    if (s && s->numerics_detail) diag("%s: %s", where, s->numerics_detail);
    for (int i = 0; i < f; i++) ok(pm_pass_state(pm, i) == STEP_DONE, "step %s before it is clean", pm_pass_name(pm, i));
    pm_free(pm);
    /* fresh manager: bisect without per-step checks */
    pm = pm_new(ctx, g, in, nin);
    pm_override_pass(pm, where, fn);
    char *why = NULL;
    int b = pm_bisect(pm, &why);
    is_str(b >= 0 ? pm_pass_name(pm, b) : "(none)", where, "bisect names the broken pass (%s)", kind);
    diag("bisect: %s", why ? why : "");
    free(why);
    pm_free(pm);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = graph_load_file(ctx, CASE "/pre_post_grad.py");
    ok(g != NULL, "load ln_gelu");
    if (!g) return done_testing();
    ops_resolve_graph(g);
    int nin = 0;
    IValue *in = inputs(ctx, g, &nin);
    /* clean pipeline: bisect finds nothing */
    PassManager *pm = pm_new(ctx, g, in, nin);
    char *why = NULL;
    is_int(pm_bisect(pm, &why), -1, "clean pipeline: bisect finds no bad pass");
    free(why);
    pm_free(pm);
    planted(ctx, g, in, nin, "pass_pattern_1", broken_numerics, "numerics");
    planted(ctx, g, in, nin, "stable_sort", broken_numerics, "numerics");
    planted(ctx, g, in, nin, "post_grad_custom_pre_pass", broken_lint, "lint");
    /* the user hook API */
    pm = pm_new(ctx, g, in, nin);
    pm_set_custom_post(pm, broken_numerics);
    pm_run_all(pm);
    int f = pm_first_failure(pm);
    is_str(f >= 0 ? pm_pass_name(pm, f) : "(none)", "post_grad_custom_post_pass", "custom post pass hook runs and is checked");
    pm_free(pm);
    ok(pm_override_pass(pm = pm_new(ctx, g, NULL, 0), "no_such_pass", broken_lint) < 0, "unknown pass name is an error");
    pm_free(pm);
    for (int i = 0; i < nin; i++) ivalue_clear(&in[i]);
    free(in);
    graph_free(g);
    mi_ctx_free(ctx);
    return done_testing();
}
