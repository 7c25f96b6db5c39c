/* fuzz_lower.c — libFuzzer target, differential: FX text that parses and lints clean runs in
 * the reference interpreter, goes through the post-grad passes, is lowered to the loop IR
 * (core/lowering) and run by the IR interpreter; the two runs must agree (tensor_compare
 * rtol 1e-4, atol 1e-5, NaN equal to NaN, as tests/test_random_graphs.c compares them).
 * Then the scheduler and both code generators run on the IR (text only: compiling every
 * input would cost a cc run; `make check-long` compiles). A disagreement aborts with both
 * values (a finding); an op that has no lowering, or any stage that refuses with an error,
 * is not; a graph with a random op (OPF_RANDOM: each run draws its own seed) is lowered and run
 * but not compared. Placeholders above 64K elements are skipped. Seeds: seed-fx (tests/fuzz/seeds.sh).
 * A graph whose only unknown ops are a user's own (torch.library, op_is_custom, with their
 * result annotated) cannot be interpreted; it goes through the passes without inputs, then
 * lowering (a FallbackKernel, as Inductor's implicit fallback), the IR printer, the scheduler
 * and both code generators, as the shell's run / ir / sched / code do for it.
 * A while_loop runs at most 1000 trips here (limit while_iterations), so that a cond_fn that
 * never turns False ends in its error well inside the per-input timeout. */
#include "fx_passes/passes.h"
#include "compile_fx/compile_fx.h"
#include "tests/fuzz/fuzz_graph.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_cuda.h"
#include "ops/numerics.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One value: integer results as before, allclose in doubles (the IR interpreter holds one double
 * per element, so an int64 past 2**53 is its nearest double: INT64_MIN + 1 reads INT64_MIN, not
 * a finding: the seed tests/fixtures/codegen/nan_semantics.py, int64(NaN) + 1), floats by
 * num_check_value. */
static bool same_or_int(NumCheck *c, const char *label, const IValue *ref, const IValue *res, int which, int i) {
    if (dtype_is_int(ref->t->dtype) || ref->t->dtype == DT_BOOL) {
        CompareResult cr = tensor_compare(res->t, ref->t, 1e-4, 1e-5);
        if (!cr.ok) sb_printf(c->report, "%s %d: integers differ (max_abs %g, %lld mismatches)\n", label, i, cr.max_abs, (long long)cr.mismatches);
        return cr.ok;
    }
    return num_check_value(c, label, ref, res, which, i, false);
}

/* The outputs and the inputs after the run must agree by the rule of the shell's check and of
 * fuzz_exec (torch._dynamo.utils.same: allclose at rtol 1e-4 / atol 1e-5, else RMSE against the
 * graph's float64 run, core/ops/numerics.h); abort with the report otherwise. The IR rounds a
 * bf16 / f16 kernel's value once at its store where the interpreter rounds each eager op, so a
 * strict allclose failed on rounding (tests/fixtures/codegen/as_strided_group_norm_bf16.py, a
 * seed: 158 of 576 bf16 elements 1 ulp apart, session 13). in0: the inputs
 * before either run (the float64 run's). */
static void agree(MiCtx *ctx, const Graph *h, const IValue *in0, int nin, const IValue *oa, int na, const IValue *ob, int nb,
                  const IValue *ia, const IValue *ib) {
    if (na != nb) { fprintf(stderr, "fuzz_lower: output: %d values vs %d\n", na, nb); abort(); }
    StrBuf rep;
    sb_init(&rep);
    NumCheck c = {.ctx = ctx, .rtol = 1e-4, .atol = 1e-5, .report = &rep, .fp64 = numref_new(ctx, h, in0, nin)};
    bool good = true;
    for (int i = 0; i < na; i++)
        if (oa[i].kind != ob[i].kind) { fprintf(stderr, "fuzz_lower: output %d: kind %d vs %d\n", i, oa[i].kind, ob[i].kind); abort(); }
    for (int i = 0; i < na; i++)
        if (oa[i].kind == IV_TENSOR) good &= same_or_int(&c, "output", &oa[i], &ob[i], NUM_OUT, i);
    for (int i = 0; i < nin; i++)
        if (ia[i].kind == IV_TENSOR) good &= same_or_int(&c, "input after the run", &ia[i], &ib[i], NUM_IN_AFTER, i);
    if (!good) { fprintf(stderr, "fuzz_lower: interpreter vs lowered IR:\n%s\n", rep.s ? rep.s : ""); abort(); }
    numref_free(c.fp64);
    sb_free(&rep);
}

static void free_vals(IValue *v, int n) { if (v) interp_free_outputs(v, n); }

/* Are all of g's unresolved calls (subgraphs included) a user's ops with an annotated result? */
static bool only_custom_unknown(const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind == N_CALL_FUNCTION && !n->op && !(n->target && op_is_custom(n->target) && n->has_meta)) return false;
    }
    for (int s = 0; s < g->nsubs; s++)
        if (!only_custom_unknown(g->subs[s].g)) return false;
    return true;
}

/* Does g (or a subgraph) call a random op (OPF_RANDOM: dropout's inductor_random, rand, ...)?
 * Each run draws its own seed (prims.inductor_seeds), so two runs differ by design. */
static bool has_random(const Graph *g) {
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i]->op && (g->nodes[i]->op->flags & OPF_RANDOM)) return true;
    for (int s = 0; s < g->nsubs; s++)
        if (has_random(g->subs[s].g)) return true;
    return false;
}

/* The custom-op path: passes without inputs, lowering, IR text, scheduler, C and CUDA text. */
static void custom_ops(MiCtx *ctx, Graph *g) {
    PassManager *pm = pm_new(ctx, g, NULL, 0);
    if (pm && pm_run_all(pm) == pm_num_passes(pm)) {   /* pm_run_all gives the cursor */
        CompiledFx c;
        compile_fx_init(&c, pm_graph(pm));
        if (compile_fx(ctx, &c, CFX_GENERATED) == 0) {
            char *ir = ir_print(c.ir);
            free(ir);
            ctx->target = MI_DEV_CUDA;
            char *cu = c.sched ? codegen_cuda(ctx, c.sched) : NULL;
            free(cu);
            ctx->target = MI_DEV_CPU;
        }
        compile_fx_free(&c);
    }
    pm_free(pm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = fx_parse(ctx, (const char *)data, size, "fuzz.py", 1);
    IValue *in = NULL;
    int nin = 0;
    ctx->seed = 1;
    mi_limit_set(ctx, "while_iterations", 1000);
    int unknown = g ? ops_resolve_graph(g) : -1;
    if (unknown > 0 && only_custom_unknown(g) && graph_lint(ctx, g, NULL) == 0 && fz_small_graph(g)) custom_ops(ctx, g);
    if (g && unknown == 0 && graph_lint(ctx, g, NULL) == 0 && fz_small_graph(g) &&
        interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) {
        PassManager *pm = pm_new(ctx, g, in, nin);
        if (pm && pm_run_all(pm) == pm_num_passes(pm)) {   /* pm_run_all gives the cursor */
            const Graph *h = pm_graph(pm);
            char why[512];
            IValue *ia = fz_clone(ctx, in, nin), *ib = fz_clone(ctx, in, nin), *oa = NULL, *ob = NULL;
            int na = 0, nb = 0;
            CompiledFx c;
            compile_fx_init(&c, h);
            if (lowering_supported(h, why, sizeof why) && interp_run(ctx, h, ia, nin, &oa, &na) == 0 &&
                compile_fx(ctx, &c, CFX_LOWERED) == 0 && ir_interp_run(ctx, c.ir, ib, nin, &ob, &nb) == 0) {
                if (!has_random(h)) {   /* a random op: each run its own draws, nothing to compare */
                    agree(ctx, h, in, nin, oa, na, ob, nb, ia, ib);
                }
                if (compile_fx(ctx, &c, CFX_GENERATED) == 0) {        /* C text */
                    ctx->target = MI_DEV_CUDA;                       /* and CUDA text */
                    char *cu = c.sched ? codegen_cuda(ctx, c.sched) : NULL;
                    free(cu);
                    ctx->target = MI_DEV_CPU;
                }
            }
            compile_fx_free(&c);
            free_vals(oa, na);
            free_vals(ob, nb);
            free_vals(ia, nin);
            free_vals(ib, nin);
        }
        pm_free(pm);
    }
    free_vals(in, nin);
    graph_free(g);
    mi_ctx_free(ctx);
    return 0;
}
