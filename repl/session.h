/* session.h — the shell's state: the context, the loaded graph, the pass manager that steps
 * through the post-grad passes, the inputs, the lowered IR / schedule / generated code, and the
 * shell settings. Commands (repl/cmd_*.c) read and change it; nothing else does.
 *
 * Invariant: a failed command leaves the previous state usable (a failed `load` keeps the old
 * graph; a failed `lower` keeps no half-built IR). */
#ifndef REPL_SESSION_H
#define REPL_SESSION_H

#include <stdio.h>
#include "fx/graph.h"
#include "ops/interp.h"
#include "fx_passes/passes.h"

typedef struct CompileState CompileState;   /* repl/cmd_compile.c: IR, schedule, code */
typedef struct VizRenderer VizRenderer;

typedef struct Session {
    MiCtx *ctx;
    FILE *out;               /* results (stdout) */
    FILE *err;               /* errors and progress (stderr) */

    Graph *graph;            /* the loaded graph (owned) */
    Graph *forward;          /* a backward loaded from a log: the forward of its compile (owned;
                                random inputs run it for the saved tensors), else NULL */
    char *load_args;         /* arguments of the `load` that produced it, for `save session` */
    PassManager *pm;         /* over `graph`; NULL when the pass module failed to start */
    char *break_pass;        /* breakpoint pass name, or NULL */
    char *patterns_path;     /* user pattern file (core/fx_passes/patterns.md) run in pass_pattern_2, or NULL */
    char *scope;             /* entered subgraph path ("true_graph_0", "f.g"), NULL at top */

    IValue *inputs; int ninputs;
    char *inputs_args;       /* arguments of the `inputs` command, for `save session` */
    InputLayout *layouts; int nlayouts;   /* example inputs' layouts of a graph loaded from a log
                                             (the fake_tensor_prop step), or none */

    CompileState *cs;        /* NULL until `lower` */

    VizRenderer *viz;        /* graphviz context, made on first use (session_renderer) */

    struct Teach *teach;     /* tour, live view, transcript (repl/teach.h); made on first use */

    char *trace_path;        /* current TORCH_TRACE output (ctx->trace open) or last one */
    bool trace_on;
    /* the compile being traced (repl/session_trace.c): one per loaded graph, frame_id N/0 */
    int trace_frame;         /* frame_id of the next compile */
    bool trace_in_compile;   /* a compile is open: its compilation_metrics are still due */
    uint64_t trace_ns;       /* time spent in passes, lowering, scheduling, codegen */
    char *trace_fail;        /* the first failure in it ("pass remove_noop_ops: ..."), or NULL */

    /* settings */
    bool errexit;            /* non-interactive: stop at the first error */
    bool interactive;
    int collapse_over;       /* viz: collapse FX pictures above this many nodes */
    bool timer;              /* print each command's wall time */
    double rtol, atol;       /* numerics tolerance for check / exec */
    bool quit;               /* `quit` was run */
    int exit_code;
    /* the command running (repl/interrupt.c) */
    uint64_t cmd_start_ns;   /* when it started (progress lines count from here) */
    bool interrupted;        /* Ctrl-C stopped a command: a script ends with status 130 */
    /* where a non-interactive command came from, for its error messages (repl/main.c) */
    const char *script;      /* "<stdin>" or "-c"; NULL when interactive */
    int script_line;         /* line of the script (1-based) */
    int script_cmd;          /* which ';'-separated command of that line (1-based) */
} Session;

Session *session_new(void);
void session_free(Session *s);

/* The graph commands work on: the pass manager's current step, else the loaded graph. NULL
 * when nothing is loaded. */
const Graph *session_graph(const Session *s);
bool session_require_graph(Session *s);     /* false + ctx error "no graph loaded" */
/* What graph/lint/show/diff look at: session_graph narrowed to the entered subgraph
 * (repl/cmd_hop.c); the whole graph when none is entered. */
const Graph *session_view(const Session *s);
/* The subgraph at `path` ("a.b") under g, or NULL. */
const Graph *graph_at_path(const Graph *g, const char *path);

/* Take ownership of g as the loaded graph (drops pass history, IR, inputs, breakpoint). */
void session_set_graph(Session *s, Graph *g, const char *load_args);
/* The forward graph of the loaded backward (takes ownership; NULL: none). */
void session_set_forward(Session *s, Graph *fw);
/* Random inputs for the loaded graph: for a backward with its forward, the primals and saved
 * tensors from a run of the forward (interp_random_inputs_from_forward; a note on s->err says
 * so, or why the forward did not run and all are random). */
int session_random_inputs(Session *s, IValue **in, int *n);
/* Take ownership of inputs (one per placeholder). */
void session_set_inputs(Session *s, IValue *in, int n, const char *args);
/* The example inputs' layouts for the loaded graph (takes ownership; NULL/0 none): the pass
 * manager's fake_tensor_prop step applies them. session_set_graph drops them. */
void session_set_layouts(Session *s, InputLayout *l, int n);
/* Make random inputs from ctx->seed if none are set. -1 + ctx error. */
int session_ensure_inputs(Session *s);
/* Drop the lowered state (after the graph changed). */
void session_drop_compile(Session *s);
/* Rebuild the pass manager (after inputs/device changed), keeping the cursor and breakpoint. */
int session_rebuild_pm(Session *s);

/* The session's graphviz renderer (made on first use); NULL + ctx error. */
VizRenderer *session_renderer(Session *s);

/* Print an error in the shell's format ("error: file:line: msg") to s->err. */
void session_print_error(Session *s);

/* Clone inputs (fresh tensors) so a run cannot mutate the session's inputs. */
IValue *session_clone_inputs(MiCtx *ctx, const IValue *in, int n);
/* Input i differs in `after` (a run's inputs afterwards) from the session's: a mutated input. */
bool session_input_changed(const Session *s, const IValue *after, int i);
void session_free_inputs(IValue *in, int n);
/* After two runs that both failed (the first's message in `first`, the second's in ctx): when
 * both name the same PyTorch exception ("ZeroDivisionError"), print "WHAT: ok (both raise ...)"
 * with both messages (labelled a and b), clear the error and return true; else false, the second
 * error left in ctx. Eager PyTorch raising is an outcome both sides must agree on. */
bool session_same_raise(Session *s, const char *what, const char *first, const char *a, const char *b);

/* The session's TORCH_TRACE log (repl/session_trace.c); all no-ops when tracing is off.
 * A compile is one loaded graph: begin writes its compile id N/0, a dynamo_start naming the
 * file and before_post_grad_graph; end writes compilation_metrics (time, first failure). */
void strace_begin_compile(Session *s);
void strace_end_compile(Session *s);
/* A timed step (pass, lowering, ...) as a chromium_event span of `ns` ending now; counts
 * towards the compile's time. */
void strace_span(Session *s, const char *name, uint64_t ns);
/* Record the compile's first failure (kept for compilation_metrics' fail_reason) as "WHAT: REASON",
 * or REASON alone when what is NULL (the pipeline driver's errors already name their stage). */
void strace_fail(Session *s, const char *what, const char *reason);
/* An artifact of the current compile (payload text). */
void strace_artifact(Session *s, const char *name, const char *text);
/* JSON of pass step i (0-based) for the minductor_pass_NN_<pass>_info artifact the report's
 * pass pages read: pass, step, ms, changed, nodes_before/after, lint_ok, numerics, error,
 * changes [{kind, node, reason, match}], matches [{match, pattern, matched, replacement}].
 * malloc'd; NULL when the step has no record. */
char *strace_step_info(Session *s, int i);
/* inductor_provenance_tracking_node_mappings of the session's compile (repl/session_provenance.c):
 * preToPost/postToPre over the pass steps, cppCodeToPost/postToCppCode by kernel debug handle,
 * irToPost/postToIr by buffer. malloc'd JSON, NULL when nothing is loaded. */
struct Schedule;
char *session_provenance_json(Session *s, const struct Schedule *sc);
/* The current schedule (repl/cmd_compile.c), scheduling quietly when needed; NULL + ctx error. */
const struct Schedule *session_schedule(Session *s);
/* After `sched`: the minductor_fusion_decisions artifact (sched_decisions_json) and the fusion
 * picture as minductor_fusion_svg (skipped past limit draw_nodes), for the report's why page. */
void strace_schedule(Session *s, const struct Schedule *sc);
/* Close the log (ending the open compile first); -1 + ctx error when a write to it failed. */
int strace_close(Session *s);

/* Ctrl-C and progress (repl/interrupt.c): install the SIGINT handler and point ctx->interrupt
 * at its flag (progress lines go to stderr when it is a terminal); arm clears the flag before a
 * command. */
void interrupt_install(Session *s);
void interrupt_arm(Session *s);

/* CompileState lifetime (repl/cmd_compile.c). */
void compile_state_free(CompileState *cs);

#endif
