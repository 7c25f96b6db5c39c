/* test_hop.c — higher-order ops with subgraphs (torch.ops.higher_order.cond) through the whole
 * pipeline: the recorded cuda/hop_cond case (interpreter, IR interpreter and generated C against
 * PyTorch's output, and the other branch against the interpreter on the negated input), a cond
 * with two results and a transposed operand (tests/fixtures/hop/), the pass pipeline running
 * over the branches with their changes named "true_graph_0.view", one kernel source shared by
 * the branches and the graph around them (cond_shared_kernel.py), and the checkpoint_train
 * graphs (no higher-order op left after AOT, but recorded numerics). */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/shell_harness.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_reuse.h"
#include "fx_passes/passes.h"
#include "viz/viz.h"

#include <unistd.h>

#define CASES "tests/fixtures/torch-cases"

static Graph *load(MiCtx *ctx, const char *path) {
    Graph *g = graph_load_file(ctx, path);
    if (!g) { char e[1200]; diag("%s", mi_err_str(ctx, e, sizeof e)); return NULL; }
    ops_resolve_graph(g);
    return g;
}

static char *shell(const char *cmds);
static IValue tensor_iv(Tensor *t) { IValue v = {0}; v.kind = IV_TENSOR; v.t = t; return v; }

static Tensor *negated(MiCtx *ctx, const Tensor *x) {
    Tensor *t = tensor_new(ctx, x->dtype, x->ndim, x->size);
    for (int64_t i = 0; t && i < tensor_numel(t); i++) tensor_set_f(t, i, -tensor_get_f(x, i));
    return t;
}

static double max_abs_diff(const Tensor *a, const Tensor *b) {
    if (tensor_numel(a) != tensor_numel(b)) return INFINITY;
    double m = 0;
    for (int64_t i = 0; i < tensor_numel(a); i++) {
        double d = fabs(tensor_get_f(a, i) - tensor_get_f(b, i));
        if (d > m || d != d) m = d;
    }
    return m;
}

/* cg_compile, the stage that failed diagnosed ("lower: ...", "codegen: ...", "compile: ..."). */
static bool build(MiCtx *ctx, const Graph *g, CgBuild *b) {
    if (cg_compile(ctx, g, b, 0) == 0) return true;
    char e[1200];
    diag("%s: %s", !b->m ? "lower" : !b->src ? "codegen" : "compile", mi_err_str(ctx, e, sizeof e));
    return false;
}

static void test_recorded_cond(MiCtx *ctx) {
    Graph *g = load(ctx, CASES "/cuda/hop_cond/graph0/post_post_grad.py");
    if (!ok(g != NULL, "hop_cond loads")) return;
    is_int(graph_lint(ctx, g, NULL), 0, "hop_cond lints clean");
    char why[512] = "";
    ok(lowering_supported(g, why, sizeof why), "hop_cond can be lowered (%s)", why);
    Tensor *x = npy_load(ctx, CASES "/cuda/hop_cond/graph0/in0.npy");
    Tensor *want = npy_load(ctx, CASES "/cuda/hop_cond/graph0/out0.npy");
    Tensor *nx = x ? negated(ctx, x) : NULL;
    if (!ok(x && want && nx, "recorded input and output load")) goto out;
    double sum = 0;
    for (int64_t i = 0; i < tensor_numel(x); i++) sum += tensor_get_f(x, i);

    /* expected results, computed here independently: sum > 0 ? sin(x) * 2 : cos(x) + 1 */
    Tensor *input[2] = {x, nx}, *expect[2];
    for (int k = 0; k < 2; k++) {
        expect[k] = tensor_new(ctx, DT_F32, x->ndim, x->size);
        double s = k ? -sum : sum;
        for (int64_t i = 0; i < tensor_numel(x); i++) {
            float v = (float)tensor_get_f(input[k], i);
            tensor_set_f(expect[k], i, s > 0 ? sinf(v) * 2.0f : cosf(v) + 1.0f);
        }
    }
    double dw = max_abs_diff(expect[0], want);
    ok(dw < 1e-5, "the recorded output is the %s branch (sum %.3f, max abs err %.3g)", sum > 0 ? "true" : "false", sum, dw);
    const char *which[2] = {"recorded input", "negated input"};

    CgBuild b;
    bool built = build(ctx, g, &b);
    ok(built, "hop_cond compiles to C");
    if (built) {
        ok(strstr(b.src, "static int true_graph_0(") && strstr(b.src, "static int false_graph_0("),
           "each branch is its own function");
        ok(strstr(b.src, "true_graph_0_cpp_fused_mul_sin_0(") && strstr(b.src, "false_graph_0_cpp_fused_add_cos_0("),
           "each branch has its own kernel");
        ok(strstr(b.src, "? true_graph_0(cin, cout, csyms0) : false_graph_0(cin, cout, csyms1)") != NULL,
           "the wrapper branches on the predicate buffer");
        is_int(sched_num_kernels(b.s), 2, "top level: the fused sum+gt kernel and the cond");
        is_int(b.s->nbranches, 1, "one cond with scheduled branches");
        if (b.s->nbranches == 1) {
            is_int(sched_num_kernels(b.s->branches[0].s[0]), 1, "true branch: one kernel");
            is_int(sched_num_kernels(b.s->branches[0].s[1]), 1, "false branch: one kernel");
        }
        char *irt = ir_print(b.m);
        ok(strstr(irt, "op2.node.kernel = torch.ops.higher_order.cond") && strstr(irt, "true_graph_0_op0.writes = [MemoryDep('true_graph_0_buf0'"),
           "ir text shows the cond and the branch's buffers named like Inductor's");
        free(irt);
    }
    for (int k = 0; k < 2; k++) {
        IValue in = tensor_iv(input[k]), *outs = NULL;
        int nouts = 0;
        ok(interp_run(ctx, g, &in, 1, &outs, &nouts) == 0 && nouts == 1 && outs[0].kind == IV_TENSOR &&
           max_abs_diff(outs[0].t, expect[k]) < 1e-5, "interpreter, %s", which[k]);
        interp_free_outputs(outs, nouts);
        if (built) {
            outs = NULL;
            ok(ir_interp_run(ctx, b.m, &in, 1, &outs, &nouts) == 0 && nouts == 1 && outs[0].kind == IV_TENSOR &&
               max_abs_diff(outs[0].t, expect[k]) < 1e-5, "IR interpreter, %s", which[k]);
            interp_free_outputs(outs, nouts);
            outs = NULL;
            int rc = rt_run(ctx, b.rt, g, &in, 1, &outs, &nouts, NULL);
            double d = rc == 0 && nouts == 1 ? max_abs_diff(outs[0].t, expect[k]) : INFINITY;
            ok(d < 1e-5, "generated C, %s (max abs err %.3g)", which[k], d);
            interp_free_outputs(outs, nouts);
        }
    }
    cg_free(&b);
    tensor_unref(expect[0]);
    tensor_unref(expect[1]);
out:
    if (x) tensor_unref(x);
    if (want) tensor_unref(want);
    if (nx) tensor_unref(nx);
    graph_free(g);
}

/* Two results, a transposed operand, both predicates; and the passes inside the branches. */
static void test_two_results(MiCtx *ctx) {
    Graph *g = load(ctx, "tests/fixtures/hop/cond_two_results.py");
    if (!ok(g != NULL, "cond_two_results loads")) return;
    is_int(graph_lint(ctx, g, NULL), 0, "cond_two_results lints clean");
    char *printed = fx_print(g, true);
    size_t len;
    char *text = mi_read_file(ctx, "tests/fixtures/hop/cond_two_results.py", &len);
    ok(printed && text && strcmp(printed, text) == 0, "prints back exactly, nested classes included");
    free(printed);
    free(text);
    CgBuild b;
    bool built = build(ctx, g, &b);
    ok(built, "cond_two_results compiles to C");
    for (int sign = 0; sign < 2; sign++) {
        ctx->seed = 7 + sign;
        IValue *in = NULL;
        int nin = 0;
        if (interp_random_inputs(ctx, g, NULL, 0, &in, &nin) < 0) { ok(0, "random inputs"); continue; }
        /* make sum(x) clearly positive or negative */
        for (int64_t i = 0; i < tensor_numel(in[0].t); i++)
            tensor_set_f(in[0].t, i, fabs(tensor_get_f(in[0].t, i)) * (sign ? -1 : 1) + (sign ? -0.1 : 0.1));
        IValue *ref = NULL, *irv = NULL;
        int nref = 0, nir = 0;
        ok(interp_run(ctx, g, in, nin, &ref, &nref) == 0 && nref == 2, "interpreter runs (%s branch)", sign ? "false" : "true");
        if (nref == 2) {
            /* independent expectation for result 1: a*b or -a */
            double d = 0;
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    double a = tensor_get_f(in[0].t, i * 4 + j), yt = tensor_get_f(in[1].t, j * 4 + i);
                    double e = sign ? -a : (double)((float)a * (float)yt);
                    d = fmax(d, fabs(tensor_get_f(ref[1].t, i * 4 + j) - e));
                }
            ok(d < 1e-6, "result 1 is %s (max abs err %.3g)", sign ? "-x" : "x * y.T", d);
        }
        if (built) {
            StrBuf rep;
            sb_init(&rep);
            int r = rt_check(ctx, b.rt, g, in, nin, 1e-5, 1e-6, &rep);
            ok(r == 1, "generated C agrees with the interpreter (%s branch)", sign ? "false" : "true");
            if (r != 1) diag("%s", rep.s ? rep.s : ctx->err.msg);
            sb_free(&rep);
            ok(ir_interp_run(ctx, b.m, in, nin, &irv, &nir) == 0 && nir == 2 && nref == 2 &&
               max_abs_diff(irv[0].t, ref[0].t) < 1e-6 && max_abs_diff(irv[1].t, ref[1].t) < 1e-6,
               "IR interpreter agrees (%s branch)", sign ? "false" : "true");
            interp_free_outputs(irv, nir);
        }
        interp_free_outputs(ref, nref);

        /* the pass pipeline runs inside the branches; numerics checked after every step */
        if (sign == 0) {
            PassManager *pm = pm_new(ctx, g, in, nin);
            ok(pm_run_all(pm) == pm_num_passes(pm), "all passes run");
            ok(pm_first_failure(pm) < 0, "no step broke lint or numerics");
            int p0 = pm_find_pass(pm, "view_to_reshape");
            const PassStep *st = pm_step_record(pm, p0);
            bool t_view = false, f_view = false;
            for (int k = 0; st && k < st->nchanges; k++) {
                t_view |= !strcmp(st->changes[k].node, "true_graph_0.view");
                f_view |= !strcmp(st->changes[k].node, "false_graph_0.view");
            }
            ok(st && st->changed && t_view && f_view, "view_to_reshape rewrote the view in both branches, named by subgraph");
            const Graph *after = pm_graph(pm);
            Graph *tg = graph_subgraph(after, "true_graph_0");
            Node *v = tg ? graph_find(tg, "view") : NULL;
            is_str(v ? v->target : NULL, "aten.reshape.default", "the branch's view became a reshape");
            const Graph *before = pm_graph_at(pm, 0);
            Node *v0 = before ? graph_find(graph_subgraph(before, "true_graph_0"), "view") : NULL;
            is_str(v0 ? v0->target : NULL, "aten.view.default", "the snapshot before keeps the view");
            pm_free(pm);
        }
        interp_free_outputs(in, nin);
    }
    cg_free(&b);
    graph_free(g);
}

/* Occurrences of needle in hay. */
static int count_str(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* One src_to_kernel for a graph and its subgraphs (graph.py codegen_subgraph: the branch's
 * scheduler generates into the parent's wrapper): the column sum after each branch's mm has one
 * source, defined once in the true branch and called by the false branch and, after the cond,
 * by the outer graph; the generated C agrees with the interpreter on both branches. */
static void test_shared_kernel(MiCtx *ctx) {
    Graph *g = load(ctx, "tests/fixtures/hop/cond_shared_kernel.py");
    if (!ok(g != NULL, "cond_shared_kernel loads")) return;
    CgBuild b = {0};   /* cg_compile with compile_fx's src_to_kernel stage between sched and codegen */
    b.m = ir_lower(ctx, g);
    b.s = b.m ? sched_run(ctx, b.m) : NULL;
    if (b.s) codegen_reuse_kernels(ctx, b.s);
    b.src = b.s ? codegen_c(ctx, b.s) : NULL;
    b.rt = b.src ? rt_compile(ctx, b.src) : NULL;
    bool built = b.rt != NULL;
    ok(built, "cond_shared_kernel compiles to C");
    if (!built) { char e[1200]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    if (built && b.s->nbranches == 1) {
        const Schedule *t = b.s->branches[0].s[0], *f = b.s->branches[0].s[1];
        const SchedKernel *tk = &t->kernels[t->nkernels - 1], *fk = &f->kernels[f->nkernels - 1];
        const SchedKernel *outer = &b.s->kernels[b.s->nkernels - 1];
        ok(tk->same_as < 0 && tk->shared, "the true branch's column sum is a definition, shared");
        ok(fk->same_sched == t && fk->same_as == t->nkernels - 1, "the false branch's column sum calls the true branch's");
        ok(outer->same_sched == t && outer->same_as == t->nkernels - 1, "the outer graph's column sum after the cond calls it too");
        is_str(fk->name, "true_graph_0_cpp_fused_sum_1", "the false branch's kernel takes the definition's name");
        is_int(codegen_num_definitions(b.s), 5, "5 definitions: gt_sum, mul, relu, sigmoid and one sum (Inductor's cpp_fused_* count)");
        is_int(count_str(b.src, "static void true_graph_0_cpp_fused_sum_1("), 1, "the C source defines the sum once");
        is_int(count_str(b.src, "true_graph_0_cpp_fused_sum_1("), 4, "and calls it from three functions");
        ok(strstr(b.src, "static void true_graph_0_cpp_fused_sum_1(") < strstr(b.src, "static int true_graph_0("),
           "every kernel is defined before the first branch function");
    } else ok(0, "one cond with scheduled branches");
    for (int sign = 0; sign < 2 && built; sign++) {
        ctx->seed = 11 + sign;
        IValue *in = NULL;
        int nin = 0;
        if (interp_random_inputs(ctx, g, NULL, 0, &in, &nin) < 0) { ok(0, "random inputs"); continue; }
        for (int64_t i = 0; i < tensor_numel(in[0].t); i++)   /* sum(x) clearly positive or negative */
            tensor_set_f(in[0].t, i, fabs(tensor_get_f(in[0].t, i)) * (sign ? -1 : 1) + (sign ? -0.1 : 0.1));
        StrBuf rep;
        sb_init(&rep);
        int r = rt_check(ctx, b.rt, g, in, nin, 1e-5, 1e-6, &rep);
        ok(r == 1, "generated C agrees with the interpreter (%s branch)", sign ? "false" : "true");
        if (r != 1) diag("%s", rep.s ? rep.s : ctx->err.msg);
        sb_free(&rep);
        interp_free_outputs(in, nin);
    }
    cg_free(&b);
    graph_free(g);
    char *out = shell("load tests/fixtures/hop/cond_shared_kernel.py; sched");
    if (!out) { skip(1, "MINDUCTOR_BIN not set"); return; }
    ok(strstr(out, "      true_graph_0_cpp_fused_sum_1     false_graph_0_buf2(false_graph_0_op2)  "
                   "[same source as kernel 2 of true_graph_0: defined once, called again]") != NULL,
       "sched names the definition the false branch's kernel calls");
    free(out);
}

/* A cond inside a branch: every (p, q) through interpreter, IR interpreter and generated C. */
static void test_nested(MiCtx *ctx) {
    Graph *g = load(ctx, "tests/fixtures/hop/cond_nested.py");
    if (!ok(g != NULL, "cond_nested loads")) return;
    is_int(graph_lint(ctx, g, NULL), 0, "cond_nested lints clean");
    Graph *t = graph_subgraph(g, "true_graph_0");
    ok(t && t->nsubs == 2 && graph_subgraph(t, "false_graph_0") && graph_subgraph(t, "false_graph_0")->parent == t,
       "the inner branches belong to the outer true branch");
    char *js = graph_to_json(g), *a = fx_print(g, true);
    Graph *h = js ? graph_from_json(ctx, js, strlen(js), "nested.json") : NULL;
    char *bb = h ? fx_print(h, true) : NULL;
    ok(a && bb && strcmp(a, bb) == 0, "nested subgraphs survive the JSON round trip");
    free(js); free(a); free(bb);
    graph_free(h);
    CgBuild b;
    bool built = build(ctx, g, &b);
    ok(built && strstr(b.src, "static int true_graph_0_true_graph_0(") &&
       strstr(b.src, "q[0LL] ? true_graph_0_true_graph_0(cin, cout, csyms0) : true_graph_0_false_graph_0(cin, cout, csyms1)"),
       "the inner cond is a branch inside the outer branch's function");
    int64_t one = 1, eight = 8;
    (void)one;
    Tensor *x = tensor_new(ctx, DT_F32, 1, &eight);
    for (int i = 0; i < 8; i++) tensor_set_f(x, i, (i - 3.5) / 2);
    for (int pq = 0; pq < 4; pq++) {
        bool p = pq & 2, q = pq & 1;
        Tensor *tp = tensor_new(ctx, DT_BOOL, 0, NULL), *tq = tensor_new(ctx, DT_BOOL, 0, NULL);
        tensor_set_f(tp, 0, p);
        tensor_set_f(tq, 0, q);
        Tensor *want = tensor_new(ctx, DT_F32, 1, &eight);
        for (int i = 0; i < 8; i++) {
            float v = (float)tensor_get_f(x, i);
            tensor_set_f(want, i, !p ? -v : q ? expf(v) : fabsf(v));
        }
        IValue in[3] = {tensor_iv(tp), tensor_iv(tq), tensor_iv(x)}, *outs = NULL;
        int nouts = 0;
        double d1 = INFINITY, d2 = INFINITY, d3 = INFINITY;
        if (interp_run(ctx, g, in, 3, &outs, &nouts) == 0 && nouts == 1) d1 = max_abs_diff(outs[0].t, want);
        interp_free_outputs(outs, nouts);
        outs = NULL;
        if (built && ir_interp_run(ctx, b.m, in, 3, &outs, &nouts) == 0 && nouts == 1) d2 = max_abs_diff(outs[0].t, want);
        interp_free_outputs(outs, nouts);
        outs = NULL;
        if (built && rt_run(ctx, b.rt, g, in, 3, &outs, &nouts, NULL) == 0 && nouts == 1) d3 = max_abs_diff(outs[0].t, want);
        interp_free_outputs(outs, nouts);
        ok(d1 < 1e-6 && d2 < 1e-6 && d3 < 1e-6, "p=%d q=%d: interpreter %.2g, IR interpreter %.2g, generated C %.2g", p, q, d1, d2, d3);
        tensor_unref(tp);
        tensor_unref(tq);
        tensor_unref(want);
    }
    tensor_unref(x);
    cg_free(&b);
    graph_free(g);
}

/* Symbolic sizes: one compiled module, the branches get s0 from the caller, three sizes. */
static void test_dynamic(MiCtx *ctx) {
    Graph *g = load(ctx, "tests/fixtures/hop/cond_dynamic.py");
    if (!ok(g != NULL, "cond_dynamic loads")) return;
    CgBuild b;
    bool built = build(ctx, g, &b);
    ok(built && strstr(b.src, "const int64_t csyms0[] = {s0, 0};"), "the branches take s0 from the caller");
    for (int k = 0; built && k < 3; k++) {
        int64_t n = 3 + 17 * k;
        SymBinding sb = {"s0", n};
        ctx->seed = 100 + k;
        IValue *in = NULL;
        int nin = 0;
        if (interp_random_inputs(ctx, g, &sb, 1, &in, &nin) < 0) { ok(0, "random inputs"); continue; }
        StrBuf rep;
        sb_init(&rep);
        int r = rt_check(ctx, b.rt, g, in, nin, 1e-5, 1e-6, &rep);
        ok(r == 1, "s0=%lld: generated C agrees with the interpreter", (long long)n);
        if (r != 1) diag("%s", rep.s ? rep.s : ctx->err.msg);
        sb_free(&rep);
        interp_free_outputs(in, nin);
    }
    cg_free(&b);
    graph_free(g);
}

/* checkpoint_train: after AOT the activation-checkpointing HOP is gone (recompute is inlined);
 * both graphs load, lint and reproduce PyTorch's outputs in the interpreter. */
static void test_checkpoint_train(MiCtx *ctx) {
    int nin_of[2] = {3, 4}, nout_of[2] = {4, 3};
    for (int gi = 0; gi < 2; gi++) {
        char path[256];
        snprintf(path, sizeof path, CASES "/cuda/checkpoint_train/graph%d/post_post_grad.py", gi);
        Graph *g = load(ctx, path);
        if (!ok(g != NULL, "checkpoint_train graph%d loads", gi)) continue;
        is_int(graph_lint(ctx, g, NULL), 0, "checkpoint_train graph%d lints clean", gi);
        IValue in[4] = {{0}};
        bool loaded = true;
        for (int k = 0; k < nin_of[gi]; k++) {
            snprintf(path, sizeof path, CASES "/cuda/checkpoint_train/graph%d/in%d.npy", gi, k);
            Tensor *t = npy_load(ctx, path);
            if (!t) { loaded = false; break; }
            in[k] = tensor_iv(t);
        }
        IValue *outs = NULL;
        int nouts = 0, compared = 0;
        double worst = 0;
        if (loaded && interp_run(ctx, g, in, nin_of[gi], &outs, &nouts) == 0 && nouts == nout_of[gi]) {
            for (int j = 0; j < nouts; j++) {
                snprintf(path, sizeof path, CASES "/cuda/checkpoint_train/graph%d/out%d.npy", gi, j);
                FILE *f = fopen(path, "rb");
                if (!f) continue;
                fclose(f);
                Tensor *w = npy_load(ctx, path);
                if (!w || outs[j].kind != IV_TENSOR) { if (w) tensor_unref(w); continue; }
                worst = fmax(worst, max_abs_diff(outs[j].t, w));
                compared++;
                tensor_unref(w);
            }
        }
        ok(compared == (gi == 0 ? 4 : 2) && worst < 1e-4, "checkpoint_train graph%d: %d outputs match PyTorch (max abs err %.3g)",
           gi, compared, worst);
        interp_free_outputs(outs, nouts);
        for (int k = 0; k < 4; k++) ivalue_clear(&in[k]);
        graph_free(g);
    }
}

/* The picture: branches are nested clusters linked from the get_attr node and back to cond. */
static void test_viz(MiCtx *ctx) {
    Graph *g = load(ctx, "tests/fixtures/hop/cond_two_results.py");
    if (!ok(g != NULL, "cond_two_results loads for viz")) return;
    VizOptions vo;
    viz_default_options(&vo);
    VizGraph *vg = viz_fx(ctx, g, &vo);
    char *dot = vg ? viz_to_dot(ctx, vg) : NULL;
    is_int(vg ? viz_node_count(vg) : 0, g->n + g->subs[0].g->n + g->subs[1].g->n, "every node of every graph is drawn once");
    ok(dot && strstr(dot, "subgraph cluster_sub_true_graph_0 {") && strstr(dot, "subgraph cluster_sub_false_graph_0 {"),
       "each branch is a cluster");
    ok(dot && strstr(dot, "\"true_graph_0.add\"") && strstr(dot, "\"true_graph_0.a\" -> \"true_graph_0.add\""),
       "branch nodes and edges are qualified by the subgraph");
    ok(dot && strstr(dot, "true_graph_0 -> \"true_graph_0.a\"") && strstr(dot, "lhead=cluster_sub_true_graph_0"),
       "the get_attr node links to its cluster");
    ok(dot && strstr(dot, "\"false_graph_0.output\" -> cond") && strstr(dot, "ltail=cluster_sub_false_graph_0"),
       "the branch's output links back to cond");
    free(dot);
    viz_free(vg);
    graph_free(g);
}

/* The shell: enter / leave, graph and passes inside a branch. */
static char *shell(const char *cmds) {
    const char *bin = getenv("MINDUCTOR_BIN");
    if (!bin) return NULL;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' -q -k -c \"%s\" 2>&1", bin, cmds);
    return sh_pipe(cmd, NULL);
}

static void test_shell(void) {
    char *out = shell("load tests/fixtures/hop/cond_two_results.py; enter nope; enter false_graph_0; graph; lint; "
                      "next 2; diff 2; leave; leave; help enter");
    if (!out) { skip(10, "MINDUCTOR_BIN not set"); return; }
    ok(strstr(out, "error: no subgraph 'nope' here (subgraphs: true_graph_0, false_graph_0)") != NULL, "enter names the choices");
    ok(strstr(out, "in subgraph false_graph_0: 6 nodes (2 inputs, 3 ops)") != NULL, "enter says where it is");
    ok(strstr(out, "class false_graph_0(torch.nn.Module):\n    def forward(self, a: ") != NULL, "graph prints the branch");
    ok(strstr(out, "step 2/19 view_to_reshape [in false_graph_0]: changed (1 change)") && strstr(out, "    ~ view (view_to_reshape)"),
       "steps show the branch's own changes");
    ok(strstr(out, "diff of step 2 view_to_reshape in false_graph_0:") &&
       strstr(out, "+        view: \"f32[16][1]cpu\" = torch.ops.aten.reshape.default(sub, [16]);  sub = None"),
       "diff shows the branch's diff");
    ok(strstr(out, "at the top-level graph: 11 nodes (2 inputs, 6 ops); subgraphs: true_graph_0 false_graph_0") != NULL, "leave goes back up");
    ok(strstr(out, "error: not inside a subgraph (see 'enter')") != NULL, "leave at the top is an error");
    ok(strstr(out, "usage: enter SUBGRAPH") != NULL, "enter has help");
    free(out);
    out = shell("load tests/fixtures/hop/cond_nested.py; enter true_graph_0; enter false_graph_0; graph; leave; lint");
    ok(out && strstr(out, "in subgraph true_graph_0.false_graph_0: 3 nodes (1 inputs, 1 ops)") &&
       strstr(out, "class false_graph_0(torch.nn.Module):\n    def forward(self, x: \"f32[8][1]cpu\"):\n        abs_1:") &&
       strstr(out, "in subgraph true_graph_0: 7 nodes (2 inputs, 2 ops); subgraphs: true_graph_0 false_graph_0"),
       "enter nests, leave goes up one level");
    free(out);
    /* the diff picture diffs the branches too, in their clusters; inside `enter`, only that branch */
    out = shell("load tests/fixtures/hop/cond_two_results.py; next 2; show diff 2; enter false_graph_0; show diff 2");
    const char *d1 = out ? strstr(out, "diff of step 2 view_to_reshape: 0 added, 0 removed, 2 rewritten") : NULL;
    const char *c1 = out ? strstr(out, "\tsubgraph cluster_sub_false_graph_0 {") : NULL;
    const char *v1 = c1 ? strstr(c1, "\t\t\"false_graph_0.view\"\t[change=rewritten,") : NULL;
    ok(d1 && v1 && strstr(out, "\t\t\"true_graph_0.view\"\t[change=rewritten,"),
       "show diff: the views rewritten in both branches are marked in the branches' clusters");
    const char *d2 = out ? strstr(out, "diff of step 2 view_to_reshape in false_graph_0: 0 added, 0 removed, 1 rewritten") : NULL;
    const char *g2 = d2 ? strstr(d2, "digraph diff {") : NULL;
    ok(g2 && strstr(g2, "\tview\t[change=rewritten,") && !strstr(g2, "true_graph_0") && !strstr(g2, "cluster_"),
       "show diff inside a branch: that branch alone, its nodes by their own names");
    free(out);
    /* sched lists each branch's own kernels; the IR and fusion pictures nest them in the branch */
    out = shell("load tests/fixtures/torch-cases/cuda/hop_cond/graph0/pre_post_grad.py; sched; show fusion; "
                "show ir; show fusion --collapse 3");
    ok(out && strstr(out, "4 kernels (fusion on)") &&
       strstr(out, "\n  subgraph true_graph_0 (true branch of buf2, function true_graph_0): 1 kernel\n"
                   "      true_graph_0_cpp_fused_mul_sin_0 true_graph_0_buf0(true_graph_0_op0)\n"
                   "  subgraph false_graph_0 (false branch of buf2, function false_graph_0): 1 kernel\n"
                   "      false_graph_0_cpp_fused_add_cos_0 false_graph_0_buf0(false_graph_0_op0)\n"),
       "sched prints the branches' kernels after the top level");
    const char *fus = out ? strstr(out, "digraph fusion {") : NULL;
    const char *sub = fus ? strstr(fus, "\tsubgraph cluster_sub_true_graph_0 {") : NULL;
    const char *kern = sub ? strstr(sub, "\t\tsubgraph cluster_true_graph_0_cpp_fused_mul_sin_0 {") : NULL;
    const char *fsub = sub ? strstr(sub, "\tsubgraph cluster_sub_false_graph_0 {") : NULL;
    ok(kern && fsub && kern < fsub && strstr(kern, "true_graph_0_buf0\t[class=pointwise") < fsub,
       "fusion picture: the branch's kernel cluster (and its buffer) nested in the branch's cluster");
    ok(fus && strstr(fus, "arg0_1 -> true_graph_0_arg0_1\t[label=operand,") &&
       strstr(fus, "false_graph_0_buf0 -> buf2\t[label=false,"), "operand and result edges link the branch to its caller");
    const char *ir = out ? strstr(out, "digraph ir {") : NULL;
    ok(ir && strstr(ir, "\tsubgraph cluster_sub_false_graph_0 {") && !strstr(ir, "cluster_false_graph_0_cpp") &&
       strstr(ir, "true_graph_0_buf0 -> buf2\t[label=true,"), "IR picture: branches as clusters, no kernel clusters");
    const char *col = ir ? strstr(ir, "digraph fusion {") : NULL;
    ok(col && strstr(col, "true_graph_0_cpp_fused_mul_sin_0\t[class=group,") && !strstr(col, "true_graph_0_buf0") &&
       strstr(col, "arg0_1 -> cpp_fused_gt_sum_0;") && strstr(col, "cpp_fused_gt_sum_0 -> extern_cond;"),
       "collapsed fusion picture: one box per kernel, edges between kernels");
    free(out);
    /* the trace view lists what the log says about CUDA graphs per compile id */
    out = shell("load tests/fixtures/logs/cuda_reduce_overhead.log");
    ok(out && strstr(out, "           cudagraphs: requested; not skipped; runtime cudagraphify 12073 us over 2 records; "
                          "2 cudagraph events (cudagraphify.get_container, CUDAGraphNode.record)\n"),
       "load LOG shows the cudagraph line of compile 0/0");
    free(out);
}

/* torch.utils.checkpoint: the Dynamo graph of the recorded case (tag_activation_checkpoint with
 * a wrap_body_0 subgraph), and an ATen-level version of it checked against PyTorch's forward
 * output, through the interpreter, the passes (they run inside the body) and generated C (the
 * body is lowered inline and fuses with its caller). */
static void test_checkpoint_hop(MiCtx *ctx) {
    Graph *g = load(ctx, "tests/fixtures/hop/checkpoint_dynamo_output_graph.py");
    if (ok(g != NULL, "the recorded Dynamo graph with tag_activation_checkpoint loads")) {
        is_int(graph_lint(ctx, g, NULL), 0, "it lints clean (the body takes the 3 operands)");
        Graph *body = graph_subgraph(g, "wrap_body_0");
        is_int(body ? graph_num_placeholders(body) : -1, 3, "wrap_body_0 has 3 inputs");
        IValue *in = NULL, *outs = NULL;
        int nin = 0, nouts = 0;
        ok(interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0 && interp_run(ctx, g, in, nin, &outs, &nouts) < 0 &&
           strstr(ctx->err.msg, "in body 'wrap_body_0': unsupported op 'torch._C._nn.linear' (node 'linear')"),
           "interpreting it runs the body and stops at the first Dynamo-level op (%s)", ctx->err.msg);
        interp_free_outputs(in, nin);
        interp_free_outputs(outs, nouts);
        graph_free(g);
    }
    const char *bad =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4][1]cpu\"):\n"
        "        wrap_body_0 = self.wrap_body_0\n"
        "        tag_activation_checkpoint = torch.ops.higher_order.tag_activation_checkpoint(wrap_body_0, x, x, use_reentrant = False)\n"
        "        getitem: \"f32[4][1]cpu\" = tag_activation_checkpoint[0]\n"
        "        return (getitem,)\n"
        "\n"
        "    class wrap_body_0(torch.nn.Module):\n"
        "        def forward(self, a: \"f32[4][1]cpu\"):\n"
        "            return (a,)\n";
    g = fx_parse(ctx, bad, strlen(bad), "bad.py", 1);
    StrBuf rep;
    sb_init(&rep);
    ok(g && graph_lint(ctx, g, &rep) == 1 && rep.s && strstr(rep.s, "subgraph 'wrap_body_0' takes 1 inputs but the checkpoint passes 2 operands"),
       "lint: checkpoint operand count");
    sb_free(&rep);
    graph_free(g);

    g = load(ctx, "tests/fixtures/hop/checkpoint_aten.py");
    if (!ok(g != NULL, "checkpoint_aten loads")) return;
    is_int(graph_lint(ctx, g, NULL), 0, "checkpoint_aten lints clean");
    IValue in[3] = {{0}};
    for (int k = 0; k < 3; k++) {
        char path[200];
        snprintf(path, sizeof path, CASES "/cuda/checkpoint_train/graph0/in%d.npy", k);
        Tensor *t = npy_load(ctx, path);
        if (t) in[k] = tensor_iv(t);
    }
    Tensor *want = npy_load(ctx, CASES "/cuda/checkpoint_train/graph0/out0.npy");
    IValue *outs = NULL;
    int nouts = 0;
    double d = INFINITY;
    if (want && interp_run(ctx, g, in, 3, &outs, &nouts) == 0 && nouts == 1) d = max_abs_diff(outs[0].t, want);
    ok(d < 1e-4, "interpreter = PyTorch's forward output (max abs err %.3g)", d);
    interp_free_outputs(outs, nouts);
    PassManager *pm = pm_new(ctx, g, in, 3);
    ok(pm_run_all(pm) == pm_num_passes(pm) && pm_first_failure(pm) < 0, "passes run clean inside the body");
    const PassStep *st = pm_step_record(pm, pm_find_pass(pm, "pass_pattern_2"));
    bool split = false;
    for (int k = 0; st && k < st->nchanges; k++) split |= !strcmp(st->changes[k].node, "wrap_body_0.addmm");
    ok(split, "the body's addmm is split (cuda), named wrap_body_0.addmm");
    CgBuild b;
    bool built = build(ctx, pm_graph(pm), &b);
    ok(built, "checkpoint_aten compiles (after the passes)");
    if (built) {
        is_int(sched_num_kernels(b.s), 2, "the body is inlined: mm + one fused kernel, as in the AOT graph");
        outs = NULL;
        d = INFINITY;
        if (rt_run(ctx, b.rt, pm_graph(pm), in, 3, &outs, &nouts, NULL) == 0 && nouts == 1) d = max_abs_diff(outs[0].t, want);
        ok(d < 1e-4, "generated C = PyTorch's forward output (max abs err %.3g)", d);
        interp_free_outputs(outs, nouts);
        cg_free(&b);
    }
    pm_free(pm);
    if (want) tensor_unref(want);
    for (int k = 0; k < 3; k++) ivalue_clear(&in[k]);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    test_recorded_cond(ctx);
    test_two_results(ctx);
    test_shared_kernel(ctx);
    test_nested(ctx);
    test_dynamic(ctx);
    test_checkpoint_train(ctx);
    test_checkpoint_hop(ctx);
    test_viz(ctx);
    test_shell();
    mi_ctx_free(ctx);
    return done_testing();
}
