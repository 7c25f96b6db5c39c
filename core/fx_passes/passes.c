/* passes.c — the pass manager: Inductor's post-grad pass table, the step history with
 * graph snapshots, undo/replay/goto, the lint + numerics check after each step, and bisect.
 * The passes themselves live in core/fx_passes/pass_*.c; see passes.h for the model. */
#include "fx_passes/passes.h"
#include "fx_passes/functionalize.h"
#include "fx/graph_diff.h"
#include "fx_passes/pattern.h"
#include "ops/numerics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table (Inductor's order, core/fx_passes/passes.md) ---- */

static const PassDef PASS_TABLE[] = {
    {"functionalize", "turn in-place ops and view mutations into functional ops + copy_ epilogue", pass_functionalize},
    /* compile_fx, before the post-grad passes: view_to_reshape, then fake_tensor_prop */
    {"view_to_reshape", "compile_fx: every aten.view becomes aten.reshape (before the metas are re-propagated)", pass_view_to_reshape},
    {"fake_tensor_prop", "compile_fx: re-infer every meta from the example inputs' layouts (nothing to do without them)", pass_fake_tensor_prop},
    /* post_grad_passes (config.dce is False: no dead code elimination) */
    {"reorder_for_locality", "move a node's producers down next to it (inference graphs only)", pass_reorder_for_locality},
    {"remove_profiler_ops", "drop profiler record_function ops", pass_remove_profiler_ops},
    /* torch 2.11 logs group_batch_fusion_passes under this name (nothing to fuse by default) */
    {"post_grad_custom_pre_pass", "user hook (none by default)", pass_nothing},
    {"remove_noop_ops", "drop ops that return their input unchanged, rewiring users", pass_remove_noop_ops},
    {"remove_assert_ops", "drop aten._assert_tensor_metadata", pass_remove_assert_ops},
    {"pass_pattern_0", "pattern group 0 (no default patterns)", pass_pattern_0},
    {"pass_pattern_1", "pattern group 1: softmax -> prepare_softmax_online (cuda), pointless cumsum", pass_pattern_1},
    {"pass_pattern_2", "pattern group 2: addmm <-> mm + add, partial reductions reused; user patterns; optional x*1, x+0, ...", pass_pattern_2},
    {"stable_sort", "stable topological sort", pass_stable_sort},
    {"move_constructors_to_cuda", "move cpu constructors feeding cuda ops to cuda", pass_move_constructors_to_cuda},
    {"reinplace_inplaceable_ops", "canonicalize view scatters; reinplace scatters, index_put, foreach ops when the input is dead", pass_reinplace},
    {"decompose_triton_kernel_wrapper_functional", "(no user triton kernels here)", pass_nothing},
    {"decompose_auto_functionalized", "(no auto_functionalized ops here) then erase get_attr nodes nobody reads", pass_decompose_auto_functionalized},
    {"decompose_scan_to_while_loop", "(no scan here)", pass_nothing},
    {"decompose_map_to_while_loop", "(no map here)", pass_nothing},
    {"post_grad_custom_post_pass", "user hook (none by default)", pass_nothing},
};
#define NPASSES ((int)(sizeof PASS_TABLE / sizeof PASS_TABLE[0]))

const PassDef *pass_table(int *n) {
    *n = NPASSES;
    return PASS_TABLE;
}

int pass_nothing(PassCtx *pc, Graph *g) { (void)pc; (void)g; return 0; }

void pass_note(PassCtx *pc, char kind, const char *node, const char *fmt, ...) {
    if (pc->nchanges == pc->capchanges) {
        pc->capchanges = pc->capchanges ? 2 * pc->capchanges : 16;
        pc->changes = mi_xrealloc(pc->changes, pc->capchanges * sizeof *pc->changes);
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PassChange *c = &pc->changes[pc->nchanges++];
    c->kind = kind;
    c->node = mi_xstrdup(node ? node : "");
    c->reason = mi_xstrdup(buf);
    c->match = pc->cur_match;
}

/* ---- small graph facts shared by passes ---- */

const char *pass_node_name_for(PassCtx *pc, Graph *g, const char *target) {
    const char *dot = strchr(target, '.');
    const char *s = dot ? dot + 1 : target;        /* drop the namespace */
    if (strncmp(target, "operator.", 9) == 0) s = target + 9;
    char buf[256];
    size_t k = 0;
    for (size_t i = 0; s[i] && k + 2 < sizeof buf; i++) {
        char c = s[i];
        if (c == '.') c = '_';
        if (c >= 'A' && c <= 'Z') {
            if (i > 0 && s[i - 1] >= 'a' && s[i - 1] <= 'z') buf[k++] = '_';
            c = (char)(c - 'A' + 'a');
        }
        buf[k++] = c;
    }
    buf[k] = 0;
    if (!pc->names) {
        /* FX never reuses a name, also not one of a node an earlier pass erased */
        pc->names = nameset_new();
        for (int h = 0; h < pc->nhistory; h++) nameset_add_graph(pc->names, pc->history[h]);
        nameset_add_graph(pc->names, g);
        if (pc->inference) nameset_add_traced_stems(pc->names, pc->nhistory ? pc->history[0] : g);
    }
    return nameset_fresh(pc->names, g, buf);
}

bool graph_has_mutations(const Graph *g) { return functionalize_needed(g); }

/* ---- the manager ---- */

struct PassManager {
    MiCtx *ctx;
    PassDef passes[NPASSES];
    int npasses;
    Graph **states;           /* npasses + 1; NULL = not computed */
    PassStep *steps;          /* npasses */
    int cursor;
    int brk;                  /* break before this pass index, -1 none */
    Device device;
    bool inference;
    bool extra;
    PatternSet user;
    InputLayout *layouts; int nlayouts;   /* example inputs (fake_tensor_prop) */
    /* checks */
    IValue *inputs; int ninputs;
    bool have_ref;
    IValue *ref_outs; int nref_outs;
    IValue *ref_ins; int nref_ins;   /* inputs after the original graph ran */
    char *ref_error;                 /* why numerics can't be checked */
    NumRef *fp64;                    /* the original graph in float64, run when a comparison needs it */
    double rtol, atol;               /* the allclose step of the numerics (pm_set_tolerance) */
    char *loaded_lint;               /* lint report of states[0], NULL when clean */
    /* the outputs of one state, kept to compare the next step with its input */
    int cache_k;                     /* state index of cache_outs, -1 none */
    IValue *cache_outs; int ncache_outs;
    IValue *cache_ins;               /* inputs after it ran (pm->ninputs) */
};

static void ivalues_free(IValue *v, int n);
static void cache_drop(PassManager *pm) {
    if (pm->cache_outs) interp_free_outputs(pm->cache_outs, pm->ncache_outs);
    ivalues_free(pm->cache_ins, pm->ninputs);
    pm->cache_outs = NULL; pm->ncache_outs = 0; pm->cache_ins = NULL;
    pm->cache_k = -1;
}

static void step_clear(PassStep *s) {
    for (int i = 0; i < s->nchanges; i++) {
        free(s->changes[i].node);
        free(s->changes[i].reason);
    }
    free(s->changes);
    free(s->changes_text);
    free(s->lint_report);
    free(s->numerics_detail);
    free(s->error);
    free(s->vs_input);
    const char *name = s->pass;
    memset(s, 0, sizeof *s);
    s->pass = name;
}

/* Forget steps i.. (their records and states after them). */
static void pm_invalidate_from(PassManager *pm, int i) {
    if (i < 0) i = 0;
    for (int k = i; k < pm->npasses; k++) {
        step_clear(&pm->steps[k]);
        if (pm->states[k + 1]) {
            graph_free(pm->states[k + 1]);
            pm->states[k + 1] = NULL;
        }
    }
    if (pm->cursor > i) pm->cursor = i;
    if (pm->cache_k > i) cache_drop(pm);
}

static int ivalue_clone(MiCtx *ctx, const IValue *v, IValue *out) {
    memset(out, 0, sizeof *out);
    out->kind = v->kind;
    out->i = v->i;
    out->f = v->f;
    if (v->kind == IV_TENSOR) {
        out->t = tensor_clone(ctx, v->t);
        if (!out->t) { out->kind = IV_NONE; return -1; }
    } else if (v->kind == IV_TUPLE) {
        out->n = v->n;
        out->items = mi_xcalloc(v->n, sizeof *out->items);
        for (int i = 0; i < v->n; i++)
            if (ivalue_clone(ctx, &v->items[i], &out->items[i]) < 0) return -1;
    }
    return 0;
}

static void ivalues_free(IValue *v, int n) {
    if (!v) return;
    for (int i = 0; i < n; i++) ivalue_clear(&v[i]);
    free(v);
}

static IValue *inputs_copy(PassManager *pm) {
    IValue *in = mi_xcalloc(pm->ninputs ? pm->ninputs : 1, sizeof *in);
    for (int i = 0; i < pm->ninputs; i++)
        if (ivalue_clone(pm->ctx, &pm->inputs[i], &in[i]) < 0) {
            ivalues_free(in, pm->ninputs);
            return NULL;
        }
    return in;
}

/* Run g on fresh copies of the inputs. */
static int run_graph(PassManager *pm, const Graph *g, IValue **outs, int *nouts, IValue **ins_after) {
    IValue *in = inputs_copy(pm);
    if (!in) return -1;
    if (interp_run(pm->ctx, g, in, pm->ninputs, outs, nouts) < 0) {
        ivalues_free(in, pm->ninputs);
        return -1;
    }
    *ins_after = in;
    return 0;
}

static void pm_compute_ref(PassManager *pm) {
    pm->have_ref = false;
    free(pm->ref_error);
    pm->ref_error = NULL;
    if (!pm->inputs) return;
    if (run_graph(pm, pm->states[0], &pm->ref_outs, &pm->nref_outs, &pm->ref_ins) < 0) {
        char buf[1200];
        if (mi_interrupted(pm->ctx)) return;      /* no reference yet: check_numerics tries again */
        pm->ref_error = mi_xstrdup(mi_err_str(pm->ctx, buf, sizeof buf));
        mi_clear_err(pm->ctx);
        return;
    }
    pm->nref_ins = pm->ninputs;
    pm->have_ref = true;
    numref_free(pm->fp64);
    pm->fp64 = numref_new(pm->ctx, pm->states[0], pm->inputs, pm->ninputs);
}

/* Compare one value with torch._dynamo.utils.same's rule; its line goes to d only when it
 * differs. */
static bool compare_value(NumCheck *c, StrBuf *d, const char *what, const IValue *ref, const IValue *res, int which,
                          int index, bool random) {
    StrBuf one;
    sb_init(&one);
    c->report = &one;
    bool ok = num_check_value(c, what, ref, res, which, index, random);
    if (!ok && one.s) sb_put(d, one.s);
    sb_free(&one);
    return ok;
}

/* Compare a run of g (outs, ins: inputs after it) with a reference run of ref_g (want_outs,
 * want_ins) by torch._dynamo.utils.same's rule (core/ops/numerics.h); values that depend on a
 * random op in either graph compare statistically. fp64 (may be NULL): the float64 run of the
 * loaded graph. A line per value that differs goes to d; *worst gets the largest max abs err. */
static bool compare_runs(PassManager *pm, const Graph *ref_g, const IValue *want_outs, int nwant, const IValue *want_ins,
                         const Graph *g, const IValue *outs, int nouts, const IValue *ins, NumRef *fp64, StrBuf *d,
                         double *worst) {
    bool ok = true;
    int nr = nouts > nwant ? nouts : nwant;
    bool *rnd = mi_xcalloc((size_t)nr + 1, sizeof *rnd), *rnd2 = mi_xcalloc((size_t)nr + 1, sizeof *rnd2);
    bool *rin = mi_xcalloc((size_t)pm->ninputs + 1, sizeof *rin), *rin2 = mi_xcalloc((size_t)pm->ninputs + 1, sizeof *rin2);
    num_random_outputs(ref_g, rnd, nr, rin, pm->ninputs);
    num_random_outputs(g, rnd2, nr, rin2, pm->ninputs);
    NumCheck c = {.ctx = pm->ctx, .rtol = pm->rtol, .atol = pm->atol, .fp64 = fp64,
                  .random_why = "not comparable: the graphs' random ops draw differently"};
    if (nouts != nwant) {
        sb_printf(d, "%d outputs, expected %d; ", nouts, nwant);
        ok = false;
    } else {
        for (int i = 0; i < nouts; i++) {
            char w[32];
            snprintf(w, sizeof w, "out%d", i);
            ok &= compare_value(&c, d, w, &want_outs[i], &outs[i], NUM_OUT, i, rnd[i] || rnd2[i]);
        }
    }
    for (int i = 0; i < pm->ninputs; i++) {
        char w[32];
        snprintf(w, sizeof w, "in%d_after", i);
        ok &= compare_value(&c, d, w, &want_ins[i], &ins[i], NUM_IN_AFTER, i, rin[i] || rin2[i]);
    }
    free(rnd); free(rnd2); free(rin); free(rin2);
    if (worst) *worst = c.worst_abs;
    return ok;
}

/* Check state k (graph g) against the reference outputs; its outputs stay in the cache. */
static void check_numerics(PassManager *pm, int k, const Graph *g, PassStep *s) {
    if (!pm->inputs) return;
    s->checked = true;
    if (!pm->have_ref && !pm->ref_error) pm_compute_ref(pm);      /* an interrupted start */
    if (!pm->have_ref) {
        s->checked = false;
        s->numerics_ok = true;
        s->numerics_detail = mi_xstrdup(pm->ref_error ? pm->ref_error : "no reference");
        return;
    }
    IValue *outs = NULL, *ins = NULL;
    int nouts = 0;
    if (run_graph(pm, g, &outs, &nouts, &ins) < 0) {
        char buf[1200];
        StrBuf d;
        sb_init(&d);
        sb_printf(&d, "interpreter failed: %s", mi_err_str(pm->ctx, buf, sizeof buf));
        mi_clear_err(pm->ctx);
        s->numerics_ok = false;
        s->numerics_detail = sb_take(&d);
        return;
    }
    StrBuf d;
    sb_init(&d);
    double worst = 0;
    bool ok = compare_runs(pm, pm->states[0], pm->ref_outs, pm->nref_outs, pm->ref_ins, g, outs, nouts, ins, pm->fp64, &d, &worst);
    if (ok) sb_printf(&d, "%d outputs match (max abs err %.3g)", nouts, worst);
    s->numerics_ok = ok;
    s->numerics_detail = sb_take(&d);
    cache_drop(pm);
    pm->cache_k = k;
    pm->cache_outs = outs; pm->ncache_outs = nouts;
    pm->cache_ins = ins;
}

/* The pass did not run, or a check of its result failed (unchecked records have none). */
static bool step_failed(const PassStep *s) {
    return s->error || (!s->unchecked && (!s->lint_ok || (s->checked && !s->numerics_ok)));
}

/* The outputs of state k, taken out of the cache or computed: *outs NULL when they cannot be
 * (no reference, or the interpreter failed on it). */
static void take_state_outputs(PassManager *pm, int k, IValue **outs, int *nouts, IValue **ins) {
    *outs = NULL; *nouts = 0; *ins = NULL;
    if (!pm->have_ref) return;
    if (pm->cache_k == k) {
        *outs = pm->cache_outs; *nouts = pm->ncache_outs; *ins = pm->cache_ins;
        pm->cache_outs = NULL; pm->cache_ins = NULL; pm->ncache_outs = 0; pm->cache_k = -1;
        return;
    }
    if (run_graph(pm, pm->states[k], outs, nouts, ins) < 0) { mi_clear_err(pm->ctx); *outs = NULL; *ins = NULL; }
}

/* Step i's input (state i) failed a check on the way, first at step `since` (0: the loaded
 * graph): judge step i against its input instead of marking it failed again. in_lint: the
 * input's lint report; in_outs/in_ins: its outputs (NULL: unknown); the step's own are in the
 * cache after check_numerics. */
static void compare_with_input(PassManager *pm, int i, int since, const char *in_lint, bool in_numerics_ok, PassStep *s,
                               const Graph *g, const IValue *in_outs, int nin_outs, const IValue *in_ins) {
    s->input_failing = true;
    s->failing_since = since;
    bool lint_same = (!in_lint && !s->lint_report) || (in_lint && s->lint_report && !strcmp(in_lint, s->lint_report));
    StrBuf d;
    sb_init(&d);
    bool numerics_same = true;
    if (s->changed && s->checked) {
        if (in_outs && pm->cache_k == i + 1)
            numerics_same = compare_runs(pm, pm->states[i], in_outs, nin_outs, in_ins, g, pm->cache_outs, pm->ncache_outs,
                                         pm->cache_ins, NULL, &d, NULL);
        else numerics_same = s->numerics_ok == in_numerics_ok;   /* one of them did not run */
    }
    if (!lint_same) sb_printf(&d, "%s%s", d.len ? "; " : "", s->lint_report ? "new lint problems" : "lint now clean");
    s->same_as_input = lint_same && numerics_same;
    if (!s->same_as_input) s->vs_input = sb_take(&d);
    sb_free(&d);
}

PassManager *pm_new(MiCtx *ctx, const Graph *g, const IValue *inputs, int ninputs) {
    PassManager *pm = mi_xcalloc(1, sizeof *pm);
    pm->ctx = ctx;
    pm->rtol = pm->atol = 1e-4;
    pm->npasses = NPASSES;
    memcpy(pm->passes, PASS_TABLE, sizeof PASS_TABLE);
    pm->states = mi_xcalloc(NPASSES + 1, sizeof *pm->states);
    pm->steps = mi_xcalloc(NPASSES, sizeof *pm->steps);
    for (int i = 0; i < NPASSES; i++) pm->steps[i].pass = pm->passes[i].name;
    pm->states[0] = graph_clone(g);
    pm->brk = -1;
    pm->cache_k = -1;
    StrBuf rep;
    sb_init(&rep);
    if (graph_lint(ctx, pm->states[0], &rep) > 0) pm->loaded_lint = sb_take(&rep);
    sb_free(&rep);
    mi_clear_err(ctx);
    pm->device = graph_device(g);
    pm->inference = !graph_is_training(g);
    patternset_init(&pm->user);
    if (inputs && ninputs > 0) {
        pm->ninputs = ninputs;
        pm->inputs = mi_xcalloc(ninputs, sizeof *pm->inputs);
        for (int i = 0; i < ninputs; i++) ivalue_clone(ctx, &inputs[i], &pm->inputs[i]);
        pm_compute_ref(pm);
    }
    return pm;
}

void pm_free(PassManager *pm) {
    if (!pm) return;
    cache_drop(pm);
    free(pm->loaded_lint);
    for (int i = 0; i < pm->npasses; i++) step_clear(&pm->steps[i]);
    for (int i = 0; i <= pm->npasses; i++) graph_free(pm->states[i]);
    free(pm->states);
    free(pm->steps);
    ivalues_free(pm->inputs, pm->ninputs);
    if (pm->ref_outs) interp_free_outputs(pm->ref_outs, pm->nref_outs);
    ivalues_free(pm->ref_ins, pm->nref_ins);
    free(pm->ref_error);
    numref_free(pm->fp64);
    patternset_free(&pm->user);
    input_layouts_free(pm->layouts, pm->nlayouts);
    free(pm);
}

void input_layouts_free(InputLayout *l, int n) {
    for (int i = 0; l && i < n; i++) {
        free(l[i].name);
        free(l[i].size);
        free(l[i].stride);
    }
    free(l);
}

void pm_set_input_layouts(PassManager *pm, const InputLayout *l, int n) {
    input_layouts_free(pm->layouts, pm->nlayouts);
    pm->layouts = NULL;
    pm->nlayouts = 0;
    if (l && n > 0) {
        pm->layouts = mi_xcalloc(n, sizeof *pm->layouts);
        for (int i = 0; i < n; i++) {
            InputLayout *d = &pm->layouts[i];
            d->name = mi_xstrdup(l[i].name);
            d->ndim = l[i].ndim;
            d->size = mi_xcalloc(d->ndim + 1, sizeof *d->size);
            d->stride = mi_xcalloc(d->ndim + 1, sizeof *d->stride);
            memcpy(d->size, l[i].size, d->ndim * sizeof *d->size);
            memcpy(d->stride, l[i].stride, d->ndim * sizeof *d->stride);
        }
        pm->nlayouts = n;
    }
    pm_invalidate_from(pm, pm_find_pass(pm, "fake_tensor_prop"));
}

void pm_set_device(PassManager *pm, Device d) { pm->device = d; pm_invalidate_from(pm, 0); }
void pm_set_inference(PassManager *pm, bool inf) { pm->inference = inf; pm_invalidate_from(pm, 0); }
void pm_set_extra_simplify(PassManager *pm, bool on) { pm->extra = on; pm_invalidate_from(pm, 0); }
void pm_set_tolerance(PassManager *pm, double rtol, double atol) {
    if (pm->rtol == rtol && pm->atol == atol) return;
    pm->rtol = rtol;
    pm->atol = atol;
    pm_invalidate_from(pm, 0);
}

int pm_find_pass(const PassManager *pm, const char *name) {
    for (int i = 0; i < pm->npasses; i++)
        if (strcmp(pm->passes[i].name, name) == 0) return i;
    return -1;
}

int pm_override_pass(PassManager *pm, const char *name, PassFn fn) {
    int i = pm_find_pass(pm, name);
    if (i < 0) return mi_err(pm->ctx, NULL, 0, 0, "no pass named '%s'", name);
    pm->passes[i].run = fn ? fn : pass_nothing;
    pm_invalidate_from(pm, i);
    return 0;
}

void pm_set_custom_pre(PassManager *pm, PassFn fn) { pm_override_pass(pm, "post_grad_custom_pre_pass", fn); }
void pm_set_custom_post(PassManager *pm, PassFn fn) { pm_override_pass(pm, "post_grad_custom_post_pass", fn); }

int pm_load_patterns(PassManager *pm, const char *path) {
    if (pattern_load_file(pm->ctx, &pm->user, path) < 0) return -1;
    pm_invalidate_from(pm, pm_find_pass(pm, "pass_pattern_2"));
    return 0;
}

int pm_add_patterns(PassManager *pm, const char *text, const char *source) {
    if (pattern_parse(pm->ctx, &pm->user, text, source) < 0) return -1;
    pm_invalidate_from(pm, pm_find_pass(pm, "pass_pattern_2"));
    return 0;
}

int pm_num_passes(const PassManager *pm) { return pm->npasses; }
const char *pm_pass_name(const PassManager *pm, int i) { return i >= 0 && i < pm->npasses ? pm->passes[i].name : NULL; }
const char *pm_pass_doc(const PassManager *pm, int i) { return i >= 0 && i < pm->npasses ? pm->passes[i].doc : NULL; }

StepState pm_pass_state(const PassManager *pm, int i) {
    if (i < 0 || i >= pm->npasses || i >= pm->cursor || !pm->steps[i].ran) {
        if (i >= 0 && i < pm->npasses && pm->steps[i].ran && pm->steps[i].error) return STEP_FAILED;
        return STEP_PENDING;
    }
    const PassStep *s = &pm->steps[i];
    if (s->error || (!s->input_failing && step_failed(s))) return STEP_FAILED;
    return STEP_DONE;
}

const PassStep *pm_step_record(const PassManager *pm, int i) {
    if (i < 0 || i >= pm->npasses || !pm->steps[i].ran) return NULL;
    return &pm->steps[i];
}

int pm_cursor(const PassManager *pm) { return pm->cursor; }
const Graph *pm_graph(const PassManager *pm) { return pm->states[pm->cursor]; }
const Graph *pm_graph_at(const PassManager *pm, int k) {
    return k >= 0 && k <= pm->npasses ? pm->states[k] : NULL;
}
bool pm_has_inputs(const PassManager *pm) { return pm->inputs != NULL; }

void pm_set_inputs(PassManager *pm, const IValue *inputs, int ninputs) {
    cache_drop(pm);
    ivalues_free(pm->inputs, pm->ninputs);
    if (pm->ref_outs) interp_free_outputs(pm->ref_outs, pm->nref_outs);
    ivalues_free(pm->ref_ins, pm->nref_ins);
    pm->inputs = NULL; pm->ninputs = 0;
    pm->ref_outs = NULL; pm->nref_outs = 0;
    pm->ref_ins = NULL; pm->nref_ins = 0;
    pm->have_ref = false;
    numref_free(pm->fp64);
    pm->fp64 = NULL;
    if (inputs && ninputs > 0) {
        pm->ninputs = ninputs;
        pm->inputs = mi_xcalloc(ninputs, sizeof *pm->inputs);
        for (int i = 0; i < ninputs; i++) ivalue_clone(pm->ctx, &inputs[i], &pm->inputs[i]);
        pm_compute_ref(pm);
    }
}

/* Same nodes in the same order with the same targets, arguments (node refs by position),
 * metas and stacks: the printed graphs would be equal. O(n). */
static bool values_same(const Value *a, const Value *b) {
    if (a->kind != b->kind) return false;
    if (a->kind == V_NODE) return a->node && b->node && a->node->id == b->node->id && !strcmp(a->node->name, b->node->name);
    if (VALUE_IS_SEQ(a)) {
        if (a->list.n != b->list.n) return false;
        for (int i = 0; i < a->list.n; i++) if (!values_same(&a->list.items[i], &b->list.items[i])) return false;
        return true;
    }
    return value_equal(a, b);
}

static bool str_same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static bool graphs_same(const Graph *a, const Graph *b) {
    if (a->n != b->n || a->nsubs != b->nsubs) return false;
    for (int s = 0; s < a->nsubs; s++)
        if (!graphs_same(a->subs[s].g, b->subs[s].g)) return false;
    for (int i = 0; i < a->n; i++) {
        const Node *x = a->nodes[i], *y = b->nodes[i];
        if (x->kind != y->kind || !str_same(x->name, y->name) || !str_same(x->target, y->target) ||
            x->nargs != y->nargs || x->nkwargs != y->nkwargs || x->has_meta != y->has_meta ||
            x->annotated != y->annotated || !str_same(x->stack, y->stack) || !str_same(x->comment, y->comment))
            return false;
        if (x->has_meta && !meta_equal(&x->meta, &y->meta)) return false;
        for (int k = 0; k < x->nargs; k++) if (!values_same(&x->args[k], &y->args[k])) return false;
        for (int k = 0; k < x->nkwargs; k++)
            if (!str_same(x->kwargs[k].name, y->kwargs[k].name) || !values_same(&x->kwargs[k].v, &y->kwargs[k].v)) return false;
    }
    return true;
}

static char *changes_text(const PassChange *c, int n) {
    StrBuf b;
    sb_init(&b);
    for (int i = 0; i < n; i++) sb_printf(&b, "%c %s (%s)\n", c[i].kind, c[i].node, c[i].reason);
    return sb_take(&b);
}

/* Run one pass over g's subgraphs (recursively, first) and then over g, as Inductor's
 * _recursive_post_grad_passes does. A subgraph gets its own PassCtx (its own name set); its
 * changes are noted on `top` under qualified names: "true_graph_0.sin". */
static int run_pass_tree(const PassDef *pd, PassCtx *top, Graph *g, const char *qual) {
    for (int s = 0; s < g->nsubs; s++) {
        char q[512];
        snprintf(q, sizeof q, "%s%s.", qual, g->subs[s].name);
        if (run_pass_tree(pd, top, g->subs[s].g, q) < 0) return -1;
    }
    if (!*qual) return pd->run(top, g);
    PassCtx pc = *top;
    pc.changes = NULL;
    pc.nchanges = pc.capchanges = 0;
    pc.names = NULL;
    pc.history = NULL;        /* names of earlier states: kept for the top graph only */
    pc.nhistory = 0;
    int rc = pd->run(&pc, g);
    nameset_free(pc.names);
    top->match_seq = pc.match_seq;
    for (int k = 0; k < pc.nchanges; k++) {
        pass_note(top, pc.changes[k].kind, NULL, "%s", pc.changes[k].reason);
        PassChange *c = &top->changes[top->nchanges - 1];
        c->match = pc.changes[k].match;
        free(c->node);
        size_t n = strlen(qual) + strlen(pc.changes[k].node) + 1;
        c->node = mi_xmalloc(n);
        snprintf(c->node, n, "%s%s", qual, pc.changes[k].node);
        free(pc.changes[k].node);
        free(pc.changes[k].reason);
    }
    free(pc.changes);
    if (rc == 0) graph_compute_users(g);
    return rc;
}

/* Forget the checks of a step (its lint and numerics results). */
static void clear_checks(PassStep *s) {
    free(s->lint_report); free(s->numerics_detail); free(s->vs_input);
    s->lint_report = s->numerics_detail = s->vs_input = NULL;
    s->lint_ok = s->numerics_ok = s->checked = s->same_as_input = s->input_failing = false;
    s->failing_since = 0;
    s->unchecked = true;
}

/* The checks of step i whose result is g: lint, numerics against the reference (skipped when
 * the graph did not change), and when its input already failed, how it compares with its
 * input. -1 + ctx error on Ctrl-C (the step is left unchecked). */
static int check_step(PassManager *pm, int i, const Graph *g) {
    PassStep *s = &pm->steps[i];
    clear_checks(s);
    StrBuf rep;
    sb_init(&rep);
    int nprob = graph_lint(pm->ctx, (Graph *)g, &rep);
    s->lint_ok = nprob == 0;
    if (nprob) s->lint_report = sb_take(&rep);
    else sb_free(&rep);
    mi_clear_err(pm->ctx);
    const PassStep *prev = i > 0 && pm->steps[i - 1].ran ? &pm->steps[i - 1] : NULL;
    /* did its input fail, and since when? (the loaded graph's own lint for step 1) */
    bool input_failed = i == 0 ? pm->loaded_lint != NULL : prev && (prev->input_failing || step_failed(prev));
    int since = i == 0 ? 0 : prev && prev->input_failing ? prev->failing_since : i;
    const char *in_lint = i == 0 ? pm->loaded_lint : prev ? prev->lint_report : NULL;
    bool in_numerics_ok = i == 0 || !prev || !prev->checked || prev->numerics_ok;
    IValue *in_outs = NULL, *in_ins = NULL;
    int nin_outs = 0;
    if (!s->changed && pm->have_ref && (i == 0 || (prev && prev->checked))) {
        /* same graph as before this step: same numerics, no need to interpret it again */
        s->checked = true;
        s->numerics_ok = i == 0 ? true : prev->numerics_ok;
        s->numerics_detail = mi_xstrdup(i == 0 || !prev->numerics_detail ? "unchanged graph" : prev->numerics_detail);
    } else {
        if (input_failed) take_state_outputs(pm, i, &in_outs, &nin_outs, &in_ins);
        check_numerics(pm, i + 1, g, s);
    }
    int rc = 0;
    if (mi_interrupted(pm->ctx)) {
        clear_checks(s);
        rc = mi_err_interrupted(pm->ctx, "while checking pass %d %s", i + 1, pm->passes[i].name);
    } else {
        if (input_failed) compare_with_input(pm, i, since, in_lint, in_numerics_ok, s, g, in_outs, nin_outs, in_ins);
        s->unchecked = false;
    }
    if (in_outs) interp_free_outputs(in_outs, nin_outs);
    ivalues_free(in_ins, pm->ninputs);
    return rc;
}

/* Run pass i on states[i] -> states[i+1], with checks. */
static int run_pass(PassManager *pm, int i, bool checks) {
    PassStep *s = &pm->steps[i];
    step_clear(s);
    if (pm->states[i + 1]) { graph_free(pm->states[i + 1]); pm->states[i + 1] = NULL; }
    Graph *g = graph_clone(pm->states[i]);
    /* what the passes make is Inductor's post-grad graph, which PyTorch prints in the compact
     * form (print_readable's default: inductor_post_grad_graph in a log), also when it was handed
     * an AOT graph printed one placeholder per line; its Sym annotations as compile_fx.py prints
     * inductor_post_grad_graph, print_readable(fast_sympy_print=True): SymFloats through
     * torch/_inductor/utils.py sympy_str ("-1.00000000000000 + IntTrueDiv(8*s27*s77, 8)" where
     * the AOT graph showed "(IntTrueDiv(8*s27*s77, 8)) - 1.0") */
    g->expanded_def = false;
    g->fast_sympy_print = true;
    g->nout_comments = 0;
    PassCtx pc = {0};
    pc.ctx = pm->ctx;
    pc.device = pm->device;
    pc.inference = pm->inference;
    pc.user_patterns = &pm->user;
    pc.extra_simplify = pm->extra;
    pc.layouts = pm->layouts;
    pc.nlayouts = pm->nlayouts;
    pc.history = (const Graph *const *)pm->states;
    pc.nhistory = i;
    uint64_t t0 = mi_now_ns();
    int rc = run_pass_tree(&pm->passes[i], &pc, g, "");
    s->ns = mi_now_ns() - t0;
    nameset_free(pc.names);
    s->ran = true;
    s->changes = pc.changes;
    s->nchanges = pc.nchanges;
    s->changes_text = changes_text(pc.changes, pc.nchanges);
    if (rc < 0 && mi_interrupted(pm->ctx)) {   /* Ctrl-C: no record, as if the pass never ran */
        step_clear(s);
        graph_free(g);
        return mi_err_interrupted(pm->ctx, "in pass %d %s", i + 1, pm->passes[i].name);
    }
    if (rc < 0) {
        char buf[1200];
        char msg[1300];
        snprintf(msg, sizeof msg, "pass %d %s failed: %s", i + 1, pm->passes[i].name, mi_err_str(pm->ctx, buf, sizeof buf));
        s->error = mi_xstrdup(msg);
        graph_free(g);
        mi_err(pm->ctx, NULL, 0, 0, "%s", msg);
        return -1;
    }
    graph_compute_users(g);
    s->changed = !graphs_same(pm->states[i], g);
    s->unchecked = true;
    if (checks && check_step(pm, i, g) < 0) {       /* Ctrl-C during the checks: no record either */
        step_clear(s);
        graph_free(g);
        return -1;
    }
    pm->states[i + 1] = g;
    return 0;
}

int pm_step(PassManager *pm) {
    if (pm->cursor >= pm->npasses) return pm->cursor;
    int i = pm->cursor;
    if (!(pm->steps[i].ran && pm->states[i + 1] && !pm->steps[i].error)) {
        /* a recorded step is replayed as is; otherwise run it (dropping later records) */
        pm_invalidate_from(pm, i);
        pm->cursor = i;
        if (run_pass(pm, i, true) < 0) return -1;
    } else if (pm->steps[i].unchecked && check_step(pm, i, pm->states[i + 1]) < 0) {
        return -1;                    /* computed by bisect without checks: check it now */
    }
    pm->cursor = i + 1;
    return pm->cursor;
}

int pm_next(PassManager *pm, int n) {
    for (int k = 0; k < n && pm->cursor < pm->npasses; k++) {
        if (k > 0 && pm->cursor == pm->brk) break;
        if (pm_step(pm) < 0) return -1;
    }
    return pm->cursor;
}

int pm_back(PassManager *pm) {
    if (pm->cursor > 0) pm->cursor--;
    return pm->cursor;
}

int pm_goto(PassManager *pm, int k) {
    if (k < 0 || k > pm->npasses)
        return mi_err(pm->ctx, NULL, 0, 0, "step %d out of range 0..%d", k, pm->npasses);
    if (k <= pm->cursor) { pm->cursor = k; return k; }
    while (pm->cursor < k)
        if (pm_step(pm) < 0) return -1;
    return pm->cursor;
}

int pm_run_all(PassManager *pm) {
    bool first = true;
    while (pm->cursor < pm->npasses) {
        if (!first && pm->cursor == pm->brk) break;
        first = false;
        if (pm_step(pm) < 0) return -1;
    }
    return pm->cursor;
}

int pm_set_break(PassManager *pm, const char *name) {
    if (!name) { pm->brk = -1; return 0; }
    int i = pm_find_pass(pm, name);
    if (i < 0) return mi_err(pm->ctx, NULL, 0, 0, "no pass named '%s'", name);
    pm->brk = i;
    return 0;
}

const char *pm_loaded_lint(const PassManager *pm) { return pm->loaded_lint; }

int pm_first_failure(const PassManager *pm) {
    for (int i = 0; i < pm->npasses; i++) {
        const PassStep *s = &pm->steps[i];
        if (!s->ran) continue;
        if (s->error || (!s->input_failing && step_failed(s))) return i;
    }
    return -1;
}

/* Is state k good (lint clean, numerics hold)? why gets "lint: ..." / "numerics: ...". */
static bool state_ok(PassManager *pm, int k, StrBuf *why) {
    Graph *g = pm->states[k];
    StrBuf rep;
    sb_init(&rep);
    int nprob = graph_lint(pm->ctx, g, &rep);
    mi_clear_err(pm->ctx);
    if (nprob) {
        sb_printf(why, "lint: %d problem%s: %s", nprob, nprob == 1 ? "" : "s", rep.s ? rep.s : "");
        while (why->len && why->s[why->len - 1] == '\n') why->s[--why->len] = 0;
        sb_free(&rep);
        return false;
    }
    sb_free(&rep);
    if (!pm->have_ref && !pm->ref_error && pm->inputs) pm_compute_ref(pm);
    if (k == 0 && pm->ref_error) {       /* the interpreter cannot run the loaded graph */
        sb_printf(why, "the interpreter fails on it: %s", pm->ref_error);
        return false;
    }
    if (!pm->have_ref) return true;
    PassStep tmp = {0};
    check_numerics(pm, k, g, &tmp);
    bool ok = tmp.numerics_ok;
    if (!ok) sb_printf(why, "numerics: %s", tmp.numerics_detail ? tmp.numerics_detail : "");
    free(tmp.numerics_detail);
    return ok;
}

int pm_bisect(PassManager *pm, char **why) {
    if (why) *why = NULL;
    StrBuf w;
    sb_init(&w);
    /* a graph that fails before any pass ran: no pass is to blame */
    if (!state_ok(pm, 0, &w)) {
        if (mi_interrupted(pm->ctx)) { sb_free(&w); return mi_err_interrupted(pm->ctx, "while checking the loaded graph"), PM_BISECT_ERROR; }
        if (why) *why = sb_take(&w);
        sb_free(&w);
        return PM_BISECT_LOADED;
    }
    sb_free(&w);
    /* compute every state without per-step checks (their records stay unchecked) */
    int saved = pm->cursor;
    for (int i = 0; i < pm->npasses; i++) {
        if (pm->states[i + 1] && pm->steps[i].ran) continue;
        if (run_pass(pm, i, false) < 0) {
            if (mi_interrupted(pm->ctx)) { pm->cursor = saved < i ? saved : i; return PM_BISECT_ERROR; }
            pm->cursor = i;
            if (why) {
                char buf[1200];
                StrBuf b;
                sb_init(&b);
                sb_printf(&b, "the pass failed: %s", mi_err_str(pm->ctx, buf, sizeof buf));
                *why = sb_take(&b);
            }
            return i;
        }
    }
    pm->cursor = saved > pm->cursor ? saved : pm->cursor;
    sb_init(&w);
    bool last_ok = state_ok(pm, pm->npasses, &w);
    sb_free(&w);
    if (mi_interrupted(pm->ctx)) return mi_err_interrupted(pm->ctx, "while checking the last state"), PM_BISECT_ERROR;
    if (last_ok) {
        if (why) *why = mi_xstrdup("all passes clean");
        return -1;
    }
    /* states[lo] good, states[hi] bad */
    int lo = 0, hi = pm->npasses;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        StrBuf t;
        sb_init(&t);
        bool good = state_ok(pm, mid, &t);
        sb_free(&t);
        if (mi_interrupted(pm->ctx))
            return mi_err_interrupted(pm->ctx, "while bisecting (between pass %d and pass %d)", lo + 1, hi), PM_BISECT_ERROR;
        if (good) lo = mid;
        else hi = mid;
    }
    StrBuf b;
    sb_init(&b);
    state_ok(pm, hi, &b);
    if (why) *why = sb_take(&b);
    else sb_free(&b);
    return hi - 1;
}

char *pm_report(const PassManager *pm) {
    StrBuf b;
    sb_init(&b);
    int f = pm_first_failure(pm);
    if (f < 0 && pm->loaded_lint) {      /* no pass is to blame: say what each did to it */
        int differ = -1;
        for (int i = 0; i < pm->cursor && differ < 0; i++)
            if (pm->steps[i].ran && !pm->steps[i].same_as_input && !pm->steps[i].unchecked) differ = i;
        sb_printf(&b, "the loaded graph already fails lint (see 'goto 0; lint'); ");
        if (differ < 0) sb_printf(&b, "each of the %d applied passes left it as its input", pm->cursor);
        else sb_printf(&b, "pass %d %s is the first to differ from its input: %s", differ + 1, pm->passes[differ].name,
                       pm->steps[differ].vs_input ? pm->steps[differ].vs_input : "");
        return sb_take(&b);
    }
    if (f < 0) {
        /* say so when the numerics could not be checked: lint alone is not "clean" */
        if (pm->inputs && !pm->have_ref && pm->cursor > 0)
            sb_printf(&b, "all %d applied passes lint clean; numerics not checked: the reference interpreter cannot run "
                          "the loaded graph (%s)", pm->cursor, pm->ref_error ? pm->ref_error : "no reference");
        else if (!pm->inputs && pm->cursor > 0)
            sb_printf(&b, "all %d applied passes lint clean; numerics not checked (no inputs)", pm->cursor);
        else
            sb_printf(&b, "all %d applied passes clean", pm->cursor);
        return sb_take(&b);
    }
    const PassStep *s = &pm->steps[f];
    if (s->error) sb_put(&b, s->error);
    else if (!s->lint_ok) sb_printf(&b, "pass %d %s broke lint:\n%s", f + 1, s->pass, s->lint_report ? s->lint_report : "");
    else sb_printf(&b, "pass %d %s broke numerics: %s", f + 1, s->pass, s->numerics_detail ? s->numerics_detail : "");
    return sb_take(&b);
}

char *pm_step_diff(const PassManager *pm, int i) {
    if (i < 0 || i >= pm->npasses || !pm->states[i] || !pm->states[i + 1]) return mi_xstrdup("");
    return graph_diff_text(pm->states[i], pm->states[i + 1]);
}

const PatternSet *pm_user_patterns(const PassManager *pm) { return &pm->user; }
Device pm_device(const PassManager *pm) { return pm->device; }
