/* passes.h — the post-grad pass pipeline, stepped one pass at a time.
 *
 * A pass is a named function that rewrites a Graph in place (the manager hands it a fresh
 * clone, so the graph before stays as a snapshot). The PassManager runs Inductor's post-grad
 * order (core/fx_passes/passes.md), records every step (graph before/after, changes with reasons, time,
 * lint and numerics checks), and lets the shell step, undo, replay, jump and bisect:
 *
 *     states[0] = the input graph, states[k] = the graph after the first k steps.
 *     cursor    = how many steps are applied; pm_graph() = states[cursor].
 *
 * After every step: graph_lint, and when inputs were given, the reference interpreter on the
 * new graph compared with the outputs (and mutated inputs) of the original graph. The first
 * step that breaks either is the bisect result, reported by pass name.
 *
 * Functionalization (core/fx_passes/functionalize.h) is step 0 ("functionalize") when the graph has
 * mutations that are not the copy_ epilogue of a functional graph. */
#ifndef PASSES_H
#define PASSES_H

#include "fx/graph.h"
#include "ops/interp.h"

typedef struct PassManager PassManager;
typedef struct NameSet NameSet;
typedef struct PatternSet PatternSet;

/* The layout of one example input, as Inductor's compile_fx receives it (for a backward graph:
 * the forward's outputs, channels-last where layout optimization made them so). The
 * fake_tensor_prop step puts these strides on the placeholder of that name and re-infers every
 * node's meta, as compile_fx's fake_tensor_prop(gm, example_inputs) does before the post-grad
 * passes. Read from a log's fx_graph_runnable artifact (trace/trace.h, trace_example_layouts). */
typedef struct InputLayout {
    char *name;               /* placeholder name ("primals_1") */
    int ndim;
    int64_t *size, *stride;   /* ndim entries each */
} InputLayout;
void input_layouts_free(InputLayout *l, int n);
/* The layouts of an fx_graph_runnable payload ("reader.tensor(buf0, (16, 3, 3, 3),
 * (27, 1, 9, 3), is_leaf=True)  # primals_1"; no strides = contiguous), in order; returns how
 * many (*out malloc'd, free with input_layouts_free). core/fx_passes/input_layouts.c */
int input_layouts_parse(const char *text, InputLayout **out);
/* The SymInt example inputs of an fx_graph_runnable payload ("reader.symint(6)  # arg0_1") as
 * size hints of g (graph_add_size_hint: the symbol placeholder arg0_1 is typed with gets 6);
 * returns how many were recorded. core/fx_passes/input_layouts.c */
int input_size_hints(const char *text, Graph *g);

/* One recorded change of a pass: kind '+' added, '-' removed, '~' rewritten, '>' moved. */
typedef struct PassChange {
    char kind;
    char *node;      /* node name (in the graph after for '+', '~', '>'; before for '-') */
    char *reason;    /* "view->reshape", "pattern addmm_split", "noop: full slice", ... */
    int match;       /* k > 0: part of the k-th pattern match of the step (its matched nodes '-',
                        its replacement '+' or the node rewritten '~'); 0: not a match */
} PassChange;

/* What a pass function gets: the session, the graph's device, a place for its notes. */
typedef struct PassCtx {
    MiCtx *ctx;
    Device device;            /* the graph's device (from placeholder/node metas) */
    bool inference;           /* false for training graphs (primals_/tangents_ inputs) */
    const PatternSet *user_patterns;   /* user patterns (pm_load_patterns); may be NULL */
    bool extra_simplify;      /* also run the algebraic clean-ups Inductor does not do (x*1, ...) */
    const InputLayout *layouts; int nlayouts;   /* example-input layouts (fake_tensor_prop) */
    PassChange *changes; int nchanges, capchanges;
    NameSet *names;           /* node names in use (built on first use by pass_node_name_for) */
    const Graph *const *history; int nhistory;   /* earlier states: their names stay taken */
    int match_seq;            /* pattern matches made so far in this step */
    int cur_match;            /* the match being applied (pass_note stamps it), 0 outside */
} PassCtx;

/* Note one change (strings are copied). */
void pass_note(PassCtx *pc, char kind, const char *node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

typedef int (*PassFn)(PassCtx *pc, Graph *g);   /* 0 ok, -1 with ctx error */

typedef struct PassDef {
    const char *name;
    const char *doc;          /* one line */
    PassFn run;
} PassDef;

/* The built-in passes (core/fx_passes/pass_*.c), usable on their own. */
int pass_functionalize(PassCtx *pc, Graph *g);
int pass_view_to_reshape(PassCtx *pc, Graph *g);
int pass_fake_tensor_prop(PassCtx *pc, Graph *g);
int pass_reorder_for_locality(PassCtx *pc, Graph *g);
int pass_remove_profiler_ops(PassCtx *pc, Graph *g);
int pass_remove_assert_ops(PassCtx *pc, Graph *g);
int pass_decompose_auto_functionalized(PassCtx *pc, Graph *g);   /* erases get_attr nodes nobody reads */
int pass_remove_noop_ops(PassCtx *pc, Graph *g);
int pass_pattern_0(PassCtx *pc, Graph *g);
int pass_pattern_1(PassCtx *pc, Graph *g);
int pass_pattern_2(PassCtx *pc, Graph *g);
int pass_stable_sort(PassCtx *pc, Graph *g);
int pass_move_constructors_to_cuda(PassCtx *pc, Graph *g);
int pass_reinplace(PassCtx *pc, Graph *g);
int pass_nothing(PassCtx *pc, Graph *g);       /* the decompose_* passes of HOPs we lack */
/* The pipeline's pass table in order (functionalize first, custom hooks included). */
const PassDef *pass_table(int *n);

/* Shared helpers for pass files. */
/* "aten.mm.default" -> "mm_default", "aten.add.Tensor" -> "add_tensor" (as torch.fx names
 * nodes made by graph.call_function); written into the graph's arena, made unique in O(1)
 * through pc->names (names of removed nodes stay taken, as in FX's namespace). */
const char *pass_node_name_for(PassCtx *pc, Graph *g, const char *target);
/* Set of names with FX-style fresh-name generation ("add" -> "add_1", "add_2", ...). */
NameSet *nameset_new(void);
void nameset_add_graph(NameSet *s, const Graph *g);
/* An inference graph (make_fx's own names): each stem_N of g marks the plain stem taken. */
void nameset_add_traced_stems(NameSet *s, const Graph *g);
const char *nameset_fresh(NameSet *s, Graph *g, const char *base);   /* copy in g's arena */
void nameset_free(NameSet *s);
/* True when n is an in-place op that is not a copy_ of the final input-mutation epilogue. */
bool graph_has_mutations(const Graph *g);

/* Batch graph edits used by passes (core/fx_passes/pass_util.c); O(n) each. */
/* Replace uses: map[id] (indexed by current node ids; NULL = keep) replaces node id in every
 * argument of every node; chains a->b->c resolve to c. Returns uses replaced. */
int pu_replace_uses(Graph *g, Node **map);
/* Remove the nodes with dead[id] set (ids current), keep order, renumber. */
void pu_remove_nodes(Graph *g, const bool *dead);
/* Put g's nodes in the given order (a permutation of g->nodes), renumber. */
void pu_set_order(Graph *g, Node **order);
/* Call fn for every node argument (args, then kwargs, lists recursed) of n. */
void pu_for_each_input(const Node *n, void (*fn)(Node *, void *), void *ud);
/* Inductor's is_mutation_op (in-place op or out= call): bounds the mutation regions. */
bool pu_is_mutation(const Node *n);
/* The op's short name, e.g. "mul" for "aten.mul.Tensor" (static buffer free: into buf). */
const char *pu_op_short(const char *target, char *buf, size_t n);

/* ---- the manager ---- */

/* STEP_FAILED: the pass did not run, or broke a check its input passed. A step whose input
 * already failed (an earlier pass, or the loaded graph) is STEP_DONE; PassStep.input_failing,
 * .failing_since and .same_as_input say how it compares with its input. */
typedef enum { STEP_PENDING, STEP_DONE, STEP_FAILED } StepState;

typedef struct PassStep {
    const char *pass;        /* pass name */
    bool ran;                /* a record exists */
    bool changed;            /* printed graph differs */
    PassChange *changes; int nchanges;
    char *changes_text;      /* "+ mm_default (pattern addmm_split)\n..." */
    uint64_t ns;
    bool lint_ok;
    char *lint_report;       /* NULL when clean */
    bool checked;            /* numerics were compared (inputs given) */
    bool numerics_ok;
    char *numerics_detail;   /* "out0: max_abs 0 ..." or the error */
    char *error;             /* the pass failed (its ctx error text), NULL otherwise */
    /* When its input already failed a check, the step is judged against its input instead of
     * being marked failed again: */
    bool input_failing;      /* its input already failed lint or numerics */
    int failing_since;       /* (input_failing) the step whose check failed first: 1.. for pass k,
                                0 for the loaded graph itself */
    bool same_as_input;      /* (input_failing) lint report and numerics equal its input's */
    bool unchecked;          /* computed without checks (pm_bisect): checked when stepped onto */
    char *vs_input;          /* (input_failing) how it differs from its input ("out0: 3 mismatches ..."
                                or "new lint problems"), NULL when the same */
} PassStep;

/* Create from a graph (cloned; the caller keeps g). inputs (may be NULL/0): one per
 * placeholder, used for the checks; they are never mutated (copies are run). */
PassManager *pm_new(MiCtx *ctx, const Graph *g, const IValue *inputs, int ninputs);
void pm_free(PassManager *pm);

/* Override the graph's device (patterns that depend on cuda) / inference flag; resets history. */
void pm_set_device(PassManager *pm, Device d);
void pm_set_inference(PassManager *pm, bool inference);
/* Turn on the extra algebraic clean-ups in pass_pattern_2 (off by default: Inductor keeps x*1). */
void pm_set_extra_simplify(PassManager *pm, bool on);
/* The allclose tolerance of the numerics after each pass (default 1e-4 both, as same()'s tol);
 * recorded steps are checked again. */
void pm_set_tolerance(PassManager *pm, double rtol, double atol);
/* Set the user hooks (post_grad_custom_pre_pass / post_grad_custom_post_pass); NULL = none. */
void pm_set_custom_pre(PassManager *pm, PassFn fn);
void pm_set_custom_post(PassManager *pm, PassFn fn);
/* Replace the function of the pass named `name` (tests plant broken passes this way).
 * Returns -1 when no such pass. Drops recorded steps from that pass on. */
int pm_override_pass(PassManager *pm, const char *name, PassFn fn);
/* Load user pattern rewrites (core/fx_passes/patterns.md); they run in pass_pattern_2. */
int pm_load_patterns(PassManager *pm, const char *path);
/* The user patterns loaded (may be empty) and the device the passes see. */
const PatternSet *pm_user_patterns(const PassManager *pm);
Device pm_device(const PassManager *pm);
/* The same from text (source names it in errors). */
int pm_add_patterns(PassManager *pm, const char *text, const char *source);
/* Example-input layouts for the fake_tensor_prop step (copied; NULL/0 clears). Drops the
 * recorded steps from fake_tensor_prop on. */
void pm_set_input_layouts(PassManager *pm, const InputLayout *l, int n);

int pm_num_passes(const PassManager *pm);
const char *pm_pass_name(const PassManager *pm, int i);
const char *pm_pass_doc(const PassManager *pm, int i);
int pm_find_pass(const PassManager *pm, const char *name);   /* index or -1 */
StepState pm_pass_state(const PassManager *pm, int i);
const PassStep *pm_step_record(const PassManager *pm, int i);  /* NULL if not run */

int pm_cursor(const PassManager *pm);            /* steps applied */
const Graph *pm_graph(const PassManager *pm);    /* current graph */
const Graph *pm_graph_at(const PassManager *pm, int k);   /* states[k], NULL if not computed */

/* Movement. Each returns the new cursor, or -1 on error (a pass that fails stops there and
 * its record holds the error). pm_step runs (or replays) the next pass. */
int pm_step(PassManager *pm);
int pm_next(PassManager *pm, int n);
int pm_back(PassManager *pm);
int pm_goto(PassManager *pm, int k);             /* 0..num_passes */
int pm_run_all(PassManager *pm);                 /* stops at a breakpoint */
/* Break before the named pass in pm_run_all/pm_next (NULL clears). -1 if unknown. */
int pm_set_break(PassManager *pm, const char *name);

/* Checks. */
bool pm_has_inputs(const PassManager *pm);
/* Set the inputs of the numerics checks from now on, keeping the computed states and the
 * steps already recorded (their checks stay as they ran). */
void pm_set_inputs(PassManager *pm, const IValue *inputs, int ninputs);
/* Index of the first recorded step whose lint or numerics check failed, -1 if none. */
int pm_first_failure(const PassManager *pm);
/* The lint report of the loaded graph (state 0), NULL when it is clean. */
const char *pm_loaded_lint(const PassManager *pm);
/* Check the loaded graph; run every pass (no checks along the way), then binary-search the
 * states for the first one whose numerics (or lint) break. Returns the index of the first pass
 * that made a clean graph bad (0-based; the shell says "pass i+1"), -1 when none broke (needs
 * inputs for numerics), PM_BISECT_LOADED when the loaded graph already fails lint or cannot be
 * interpreted (no pass is to blame), PM_BISECT_ERROR with the ctx error on Ctrl-C. `why` (may
 * be NULL) gets a malloc'd reason: "lint: 2 problems: ...", "numerics: out0: ...", "the pass
 * failed: ...". */
#define PM_BISECT_LOADED (-2)
#define PM_BISECT_ERROR (-3)
int pm_bisect(PassManager *pm, char **why);
/* Summary "pass NAME broke numerics: ..." or "all passes clean"; malloc'd. */
char *pm_report(const PassManager *pm);

/* Text diff (unified style) of step i: before vs after; malloc'd. */
char *pm_step_diff(const PassManager *pm, int i);

#endif
