/* test_regressions.c — every input that ever crashed or miscompiled something stays fixed.
 *
 * tests/fixtures/crashers/ holds the inputs the fuzzers (tests/fuzz/) and the random-graph test
 * (tests/test_random_graphs.c) found. Each file is replayed through the harness of the fuzzer
 * it came from, chosen by extension — nothing may crash, leak or hit UB (run under
 * SANITIZE=1):
 *   .py    FX text: parse; if it parses, lint, print, re-parse, print again: same text
 *   .json  JSON graph: load; if it loads, write and load again
 *   .npy   .npy reader: parse (any result)
 *   .log   TORCH_TRACE reader: read every record (payloads NUL-terminated at payload_len)
 *   .sym   size expression: parse and simplify; both evaluate to the same value
 * Graph repros listed in `pipeline` below must also go through the pass pipeline with lint and
 * numerics (values and dtypes) intact, and, when the final graph lowers, through ir_lower and
 * the IR interpreter (outputs and mutated inputs as the reference gives them). Entries with a `todo` are known open bugs: they are
 * reported as TAP TODO (prove passes; they show as "unexpectedly succeeded" once fixed). */
#include "ops/interp.h"
#include "lowering/lowering.h"
#include "fx_passes/passes.h"
#include "fx_passes/pattern.h"
#include "../trace/trace.h"
#include "tap.h"

#include <dirent.h>

#define CRASHERS "tests/fixtures/crashers"

/* A TAP point that is a known bug (TODO) when todo is non-NULL. */
static void ok_todo(bool cond, const char *todo, const char *name) {
    if (!todo) { ok(cond, "%s", name); return; }
    ++tap_run_;
    printf("%s %d - %s # TODO %s\n", cond ? "ok" : "not ok", tap_run_, name, todo);
}

static bool ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static bool replay_fx(MiCtx *ctx, const char *text, size_t len) {
    Graph *g = fx_parse(ctx, text, len, "crasher.py", 1);
    if (!g) return true;                     /* a clean error is fine */
    graph_lint(ctx, g, NULL);
    char *t1 = fx_print(g, true);
    Graph *g2 = fx_parse(ctx, t1, strlen(t1), "printed.py", 1);
    bool good = g2 != NULL;
    if (g2) {
        char *t2 = fx_print(g2, true);
        good = strcmp(t1, t2) == 0;
        free(t2);
        graph_free(g2);
    }
    free(t1);
    graph_free(g);
    return good;
}

static bool replay_json(MiCtx *ctx, const char *text, size_t len) {
    Graph *g = graph_from_json(ctx, text, len, "crasher.json");
    if (!g) return true;
    graph_lint(ctx, g, NULL);
    char *js = graph_to_json(g);
    Graph *g2 = graph_from_json(ctx, js, strlen(js), "written.json");
    bool good = g2 != NULL;
    graph_free(g2);
    free(js);
    graph_free(g);
    return good;
}

static bool replay_log(MiCtx *ctx, const char *path) {
    TraceReader *rd = trace_reader_open(ctx, path);
    if (!rd) return false;
    TraceRecord r;
    int rc;
    bool good = true;
    while ((rc = trace_reader_next(rd, &r)) == 1)
        if (!r.payload || r.payload[r.payload_len] != 0) good = false;
    trace_reader_close(rd);
    return good && rc == 0;
}

static bool replay_sym(MiCtx *ctx, const char *text) {
    Expr *e = sym_parse(ctx, text, NULL);
    if (!e) return true;
    static const SymBinding b[] = {{"x0", 3}, {"x1", 5}, {"r0_0", 7}, {"s0", 4}, {"s1", 9}, {"u0", -2}};
    static const SymRange r[] = {{"x0", 0, 15}, {"x1", 0, 7}, {"r0_0", 0, 31}, {"s0", 1, 20}, {"s1", 1, 9}, {"u0", -10, 10}};
    const char *names[16];
    int n = sym_free_symbols(e, names, 16);
    SymBinding bind[16];
    for (int i = 0; i < n; i++) {
        bind[i].name = names[i];
        bind[i].value = 2;
        for (int k = 0; k < 6; k++) if (strcmp(names[i], b[k].name) == 0) bind[i].value = b[k].value;
    }
    Expr *s = sym_simplify(ctx->sym, e, r, 6);
    int64_t v1 = 0, v2 = 0, v3 = 0;
    int rc1 = sym_eval(ctx, e, bind, n, &v1), rc2 = s ? sym_eval(ctx, s, bind, n, &v2) : -1;
    /* the printed form parses back to an expression of the same value, or the parser refuses
     * it with a limit error (nesting depth, size) */
    char *buf = malloc(1 << 16);
    sym_str(e, buf, 1 << 16);
    mi_clear_err(ctx);
    Expr *back = strlen(buf) < (1 << 16) - 1 ? sym_parse(ctx, buf, NULL) : e;
    bool round = back ? back == e || (sym_eval(ctx, back, bind, n, &v3) == 0) == (rc1 == 0)
                      : strstr(ctx->err.msg, "nested too deeply") || strstr(ctx->err.msg, "too large");
    if (back && back != e && rc1 == 0 && v3 != v1) round = false;
    free(buf);
    mi_clear_err(ctx);
    return round && (rc1 != 0 || (rc2 == 0 && v1 == v2));
}

/* Run every file of the crashers directory through its harness. */
static void replay_all(MiCtx *ctx) {
    DIR *d = opendir(CRASHERS);
    if (!d) { ok(0, "open %s", CRASHERS); return; }
    char *names[1024];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 1024;)
        if (e->d_name[0] != '.' && !ends_with(e->d_name, ".md")) names[n++] = strdup(e->d_name);
    closedir(d);
    for (int i = 0; i < n; i++)             /* stable order */
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) { char *t = names[i]; names[i] = names[j]; names[j] = t; }
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", CRASHERS, names[i]);
        size_t len = 0;
        char *data = mi_read_file(ctx, path, &len);
        if (!data) { ok(0, "%s: readable", path); free(names[i]); continue; }
        bool good = true;
        const char *what = "replayed";
        if (ends_with(path, ".py")) { good = replay_fx(ctx, data, len); what = "FX parse/print stable"; }
        else if (ends_with(path, ".json")) { good = replay_json(ctx, data, len); what = "JSON load/write stable"; }
        else if (ends_with(path, ".npy")) {
            Tensor *t = npy_parse(ctx, data, len, path);
            if (t) tensor_unref(t);
            what = ".npy parse: no crash";
        } else if (ends_with(path, ".log")) { good = replay_log(ctx, path); what = "trace reader consistent"; }
        else if (ends_with(path, ".sym")) { good = replay_sym(ctx, data); what = "sym parse/simplify agree"; }
        else if (ends_with(path, ".pat")) {      /* a pattern file: parsed, refused or not, no leak */
            PatternSet ps;
            patternset_init(&ps);
            pattern_parse(ctx, &ps, data, path);
            patternset_free(&ps);
            what = "pattern file parse: no crash or leak";
        }
        mi_clear_err(ctx);
        ok(good, "%s: %s", names[i], what);
        free(data);
        free(names[i]);
    }
}

/* Graph repros that must survive the whole pass pipeline. */
static const struct { const char *file, *todo; bool extra_simplify; } pipeline[] = {
    /* found by test_random_graphs (seeds 174, 631, 773): an in-place op whose other operand
     * has a wider dtype (f32 += f64) is functionalized to the out-of-place op without the
     * cast back to self's dtype, so later nodes (and the result) become f64. Fixed: the
     * functional op is followed by convert_element_type back to self's dtype. */
    {"functionalize_inplace_promote.py", NULL},
    /* seed 13126 (30 calls): reshape of a non-contiguous permute is a copy taken before the
     * later mul_ of the base; functionalization replayed it after the mutation. Fixed: a
     * reshape that cannot be a view (op_reshape_copies) is a new base. */
    {"functionalize_reshape_copy_before_mutation.py", NULL},
    /* seed 13497 (30 calls, cuda): rows holding +-inf (x / trunc(x)); the softmax pattern's
     * prepare_softmax_online disagreed with amax/sub/exp/sum on non-finite rows. Fixed: the
     * reference computes exp(x - max) like eager_prepare_softmax (nan on such rows). */
    {"pattern_softmax_online_inf.py", NULL},
    /* seed 541, extra simplify on: x*1 -> x returns the input itself, which clamp_min_ then
     * mutates: the output must be the value before the mutation. Fixed: a pattern never
     * returns a node whose storage an in-place op writes (pattern.c storage_mutated). */
    {"extra_simplify_mul_one_mutated_input.py", NULL, true},
    /* seeds 153, 273, 884, 918, 986 (lowered IR and kernels): the result of copy_(input, src),
     * or the input read after it, is src's value; lowering gave the input's old value (the
     * copy_ was taken for the copy_ epilogue). Fixed: such a copy_ is functionalized. */
    {"lowering_copy_into_input_read_after.py", NULL},
    /* seed 61868 (cuda): copy_(arg1, arg0) then arg0.add_(): functionalized, the copy of arg0
     * is a no-op to remove_noop_ops, which made the epilogue copy_(arg1, arg0) read arg0 after
     * its own copy_ had overwritten it. Fixed: a copy of a mutated tensor stays. */
    {"remove_noop_copy_of_mutated_input.py", NULL},
    /* fuzz_lower (helper fuzz12, its first round with the lowering reached): where(mask, x,
     * self._tensor_constant0) then softmax; the IR interpreter left the constant's buffer at 0
     * (the session's value reached only the compiled module). Fixed: ir_interp_run reads it. */
    {"ir_interp_tensor_constant.py", NULL},
    /* fuzz_lower (session 12, on tests/fixtures/lowering/foreach.py): the pending 0.9 ** arg5_1
     * (returned, so realized only at the output) became a buffer after _foreach_add_'s buffer
     * that writes arg5_1 in place, and the IR interpreter (creation order) read the new value.
     * Fixed: mutate_to's realize_into calls GraphLowering.mark_buffer_mutated(arg5_1) first,
     * which realizes every pending reader of the old value ("realization order determines
     * scheduling order"); the IR interpreter's outputs are the FX interpreter's. */
    {"ir_interp_foreach_mutated_input_order.py", NULL},
};

static bool same_results(IValue *a, int na, IValue *b, int nb, char *why, size_t n) {
    if (na != nb) { snprintf(why, n, "%d outputs vs %d", na, nb); return false; }
    for (int i = 0; i < na; i++) {
        if (a[i].kind != b[i].kind) { snprintf(why, n, "output %d: kinds differ", i); return false; }
        if (a[i].kind != IV_TENSOR) continue;
        if (a[i].t->dtype != b[i].t->dtype) {
            snprintf(why, n, "output %d: dtype %s vs %s", i, dtype_abbrev(a[i].t->dtype), dtype_abbrev(b[i].t->dtype));
            return false;
        }
        CompareResult cr = tensor_compare(a[i].t, b[i].t, 1e-4, 1e-5);
        if (!cr.ok) { snprintf(why, n, "output %d: max_abs %g", i, cr.max_abs); return false; }
    }
    return true;
}

/* The final graph, when it can be lowered: the IR interpreter's outputs and mutated inputs
 * must be the reference's (ref_in: the inputs after the reference run). */
static bool check_lowered(MiCtx *ctx, const Graph *g, IValue *ref_in, int nin, IValue *ref_out, int nout,
                          char *why, size_t n) {
    if (!lowering_supported(g, NULL, 0)) return true;
    char err[2048];
    IValue *in = NULL, *outs = NULL;
    int nin2 = 0, nouts = 0;
    bool good = false;
    IrModule *m = ir_lower(ctx, g);
    ctx->seed = 1;
    if (!m || interp_random_inputs(ctx, g, NULL, 0, &in, &nin2) < 0 || ir_interp_run(ctx, m, in, nin2, &outs, &nouts) < 0) {
        snprintf(why, n, "lowered: %s", mi_err_str(ctx, err, sizeof err));
    } else {
        char w1[1024] = "", w2[1024] = "";
        good = same_results(ref_out, nout, outs, nouts, w1, sizeof w1) && same_results(ref_in, nin, in, nin2, w2, sizeof w2);
        if (!good) snprintf(why, n, "lowered IR: %s%s", w1, w2);
    }
    if (outs) interp_free_outputs(outs, nouts);
    if (in) interp_free_outputs(in, nin2);
    ir_free(m);
    return good;
}

static void check_pipeline(MiCtx *ctx, const char *file, const char *todo, bool extra) {
    char path[1024], err[2048], why[4096] = "";
    snprintf(path, sizeof path, "%s/%s", CRASHERS, file);
    Graph *g = graph_load_file(ctx, path);
    if (!g) { ok(0, "%s loads: %s", path, mi_err_str(ctx, err, sizeof err)); return; }
    ops_resolve_graph(g);
    ctx->seed = 1;
    IValue *in = NULL, *in2 = NULL, *o1 = NULL, *o2 = NULL;
    int nin = 0, nin2 = 0, n1 = 0, n2 = 0;
    bool good = false;
    PassManager *pm = NULL;
    if (interp_random_inputs(ctx, g, NULL, 0, &in, &nin) < 0 || interp_run(ctx, g, in, nin, &o1, &n1) < 0) {
        snprintf(why, sizeof why, "reference run: %s", mi_err_str(ctx, err, sizeof err));
        goto done;
    }
    interp_random_inputs(ctx, g, NULL, 0, &in2, &nin2);        /* fresh copies, same values */
    pm = pm_new(ctx, g, in2, nin2);
    if (pm && extra) pm_set_extra_simplify(pm, true);
    if (!pm || pm_run_all(pm) != pm_num_passes(pm)) {
        snprintf(why, sizeof why, "pipeline stopped: %s", mi_err_str(ctx, err, sizeof err));
        goto done;
    }
    if (pm_first_failure(pm) >= 0) {
        char *rep = pm_report(pm);
        snprintf(why, sizeof why, "%s", rep);
        free(rep);
        goto done;
    }
    if (interp_run(ctx, pm_graph(pm), in2, nin2, &o2, &n2) < 0) {
        snprintf(why, sizeof why, "final graph run: %s", mi_err_str(ctx, err, sizeof err));
        goto done;
    }
    good = same_results(o1, n1, o2, n2, why, sizeof why);
    if (good) good = check_lowered(ctx, pm_graph(pm), in, nin, o1, n1, why, sizeof why);
done:
    ok_todo(good, todo, file);
    if (!good) diag("%s", why);
    if (o1) interp_free_outputs(o1, n1);
    if (o2) interp_free_outputs(o2, n2);
    if (in) interp_free_outputs(in, nin);
    if (in2) interp_free_outputs(in2, nin2);
    pm_free(pm);
    graph_free(g);
    mi_clear_err(ctx);
}

/* A tensor constant the session has no value for: the IR interpreter says so, as the runtime
 * does (it ran on zeros). */
static void check_constant_without_value(void) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = graph_load_file(ctx, CRASHERS "/ir_interp_tensor_constant.py");
    if (g) ops_resolve_graph(g);
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    Tensor *x = tensor_new(ctx, DT_F32, 1, (int64_t[]){5}), *mask = tensor_new(ctx, DT_BOOL, 1, (int64_t[]){5});
    IValue in[2] = {{.kind = IV_TENSOR, .t = x}, {.kind = IV_TENSOR, .t = mask}}, *outs = NULL;
    int nouts = 0;
    int rc = m ? ir_interp_run(ctx, m, in, 2, &outs, &nouts) : 0;
    char err[1024];
    mi_err_str(ctx, err, sizeof err);
    ok(rc < 0 && strstr(err, "ir_interp_tensor_constant.py:4: IR interpreter: tensor constant '_tensor_constant0' has no value "
                             "('inputs DIR' reads DIR/_tensor_constant0.npy)"), "IR interpreter, a constant without a value: %s", err);
    if (outs) interp_free_outputs(outs, nouts);
    tensor_unref(x);
    tensor_unref(mask);
    ir_free(m);
    graph_free(g);
    mi_ctx_free(ctx);
}

/* fuzz_lower (session 12): tests/fixtures/lowering/fft_complex.py's lowered IR gave the real
 * parts only (one double per element); the IR interpreter now refuses complex buffers by name. */
static void check_complex_refused(void) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = graph_load_file(ctx, "tests/fixtures/lowering/fft_complex.py");
    if (g) ops_resolve_graph(g);
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    IValue *in = NULL, *outs = NULL;
    int nin = 0, nouts = 0;
    ctx->seed = 1;
    int rc = m && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0 ? ir_interp_run(ctx, m, in, nin, &outs, &nouts) : 0;
    char err[1024];
    mi_err_str(ctx, err, sizeof err);
    ok(rc < 0 && strstr(err, "IR interpreter: buffer '") &&
       strstr(err, "' is c64: complex values are not supported here (one double per element); the interpreter and the compiled module run them"),
       "IR interpreter, a complex buffer: %s", err);
    if (outs) interp_free_outputs(outs, nouts);
    if (in) interp_free_outputs(in, nin);
    ir_free(m);
    graph_free(g);
    mi_ctx_free(ctx);
}

int main(void) {
    check_constant_without_value();
    check_complex_refused();
    MiCtx *ctx = mi_ctx_new();
    replay_all(ctx);
    for (size_t i = 0; i < sizeof pipeline / sizeof *pipeline; i++)
        check_pipeline(ctx, pipeline[i].file, pipeline[i].todo, pipeline[i].extra_simplify);
    mi_ctx_free(ctx);
    return done_testing();
}
