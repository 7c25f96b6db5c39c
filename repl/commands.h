/* commands.h — the shell's command table (like sqlite3's dot-commands): one row per command
 * with its usage line, help text, handler and what its arguments complete to. Handlers live in
 * repl/cmd_*.c, grouped by pipeline stage; the dispatcher and help are in repl/commands.c. */
#ifndef REPL_COMMANDS_H
#define REPL_COMMANDS_H

#include "session.h"

/* What an argument completes to in the line editor. */
typedef enum { CPL_NONE, CPL_FILE, CPL_PASS, CPL_NODE, CPL_CMD, CPL_SHOW, CPL_SET, CPL_STEP, CPL_SUBGRAPH, CPL_TOUR } Completion;

/* 0 on success; -1 with ctx error set (the dispatcher prints it). */
typedef int (*CmdFn)(Session *s, int argc, char **argv);

typedef struct Command {
    const char *name;
    const char *usage;      /* "load FILE | load LOG COMPILE_ID [ARTIFACT]" */
    const char *help;       /* several lines */
    CmdFn fn;
    Completion complete;
} Command;

const Command *command_table(int *n);
const Command *command_find(const char *name);
/* Run one line: commands separated by ';', '#' starts a comment. Returns 0 when every command
 * succeeded, -1 at the first failure (printed; the rest of the line is skipped). */
int run_line(Session *s, const char *line);
/* Split a command into words (quotes '..' "..", backslash escapes). malloc'd argv, *argc. */
char **split_words(const char *cmd, int *argc);
void free_words(char **argv, int argc);
/* w quoted so that split_words gives it back as one word ("a b" -> "\"a b\""); malloc'd. */
char *quote_word(const char *w);
/* The closest command name to `name` (edit distance <= 2 or a prefix), or NULL. */
const char *command_suggest(const char *name);

/* Handlers (repl/cmd_*.c). */
int cmd_help(Session *s, int argc, char **argv);
int cmd_load(Session *s, int argc, char **argv);
/* Whether the file starts like a TORCH_TRACE log (a glog prefix). repl/cmd_graph.c */
bool looks_like_trace_log(const char *path);
/* Tab completion of `load LOG CID SPEC`: the compile ids of the log (cid NULL) or the graph
 * specs of compile cid (NAME, NAME#N, forward, backward); NULL when log is not a trace log. */
char **load_log_names(Session *s, const char *log, const char *cid);
int cmd_graph(Session *s, int argc, char **argv);
int cmd_lint(Session *s, int argc, char **argv);
int cmd_inputs(Session *s, int argc, char **argv);
int cmd_check(Session *s, int argc, char **argv);
int cmd_passes(Session *s, int argc, char **argv);
int cmd_step(Session *s, int argc, char **argv);
int cmd_next(Session *s, int argc, char **argv);
int cmd_back(Session *s, int argc, char **argv);
int cmd_goto(Session *s, int argc, char **argv);
int cmd_run(Session *s, int argc, char **argv);
int cmd_break(Session *s, int argc, char **argv);
int cmd_patterns(Session *s, int argc, char **argv);
int cmd_diff(Session *s, int argc, char **argv);
/* `artifact LOG ID [NAME[#N]]` (repl/cmd_graph.c): an artifact's payload, or the list. */
int cmd_artifact(Session *s, int argc, char **argv);
/* The step `diff [STEP]` and `show diff [STEP]` show (arg NULL: the cursor's), a pass that
 * has run: 1..n into *k, else -1 with the error ("step 0 is the loaded graph: ..."). */
int diff_step(Session *s, const char *arg, int *k);
/* `diff session A.mi B.mi` (repl/cmd_diff_session.c): both scripts replayed apart, then aligned. */
int cmd_diff_session(Session *s, int argc, char **argv);
int cmd_bisect(Session *s, int argc, char **argv);
int cmd_lower(Session *s, int argc, char **argv);
int cmd_ir(Session *s, int argc, char **argv);
int cmd_sched(Session *s, int argc, char **argv);
int cmd_codegen(Session *s, int argc, char **argv);
int cmd_exec(Session *s, int argc, char **argv);
int cmd_show(Session *s, int argc, char **argv);
int cmd_why(Session *s, int argc, char **argv);        /* repl/cmd_why.c */
int cmd_why_not(Session *s, int argc, char **argv);
int cmd_dump(Session *s, int argc, char **argv);
int cmd_trace(Session *s, int argc, char **argv);
int cmd_report(Session *s, int argc, char **argv);
int cmd_save(Session *s, int argc, char **argv);
int cmd_set(Session *s, int argc, char **argv);
int cmd_quit(Session *s, int argc, char **argv);
int cmd_enter(Session *s, int argc, char **argv);
/* Teaching (repl/teach.h): tour, answer, serve; next/back move an active tour. */
int cmd_tour(Session *s, int argc, char **argv);
int cmd_answer(Session *s, int argc, char **argv);
int cmd_serve(Session *s, int argc, char **argv);
int cmd_next_or_tour(Session *s, int argc, char **argv);
int cmd_back_or_tour(Session *s, int argc, char **argv);
/* Completions of `tour ARG`: the lesson names and next/back/hint/off (malloc'd, NULL-terminated). */
char **tour_completions(Session *s);
int cmd_leave(Session *s, int argc, char **argv);

/* Shared by handlers: "usage: <usage>" error for command argv[0]. */
int usage_error(Session *s, const char *cmd);
/* Parse a non-negative integer argument; -1 + ctx error naming `what` when invalid. */
int parse_count(Session *s, const char *arg, const char *what, long *out);
/* Names for completion: pass names / node names of the current graph (malloc'd array of
 * malloc'd strings, NULL-terminated). */
char **session_pass_names(Session *s);
char **session_node_names(Session *s);
char **session_subgraph_names(Session *s);      /* subgraphs of the current view (repl/cmd_hop.c) */
/* Inside a subgraph (s->scope): the changes of a step that belong to it, as text, and whether
 * the step changed it; *count gets their number (repl/cmd_hop.c). malloc'd. */
char *scoped_changes(Session *s, int step, bool *changed, int *count);
/* Buffer/kernel names of the compiled state (repl/cmd_compile.c); NULL when none. */
char **compile_state_names(CompileState *cs);
/* The kernel (function) names of the generated code, scheduling silently first (Tab after
 * `codegen `); NULL when the graph cannot be scheduled. */
char **session_kernel_names(Session *s);
/* The kernel of each node of g (indexed like g->nodes, NULL entries: none), named as the
 * fusion picture names it, when g is the scheduled graph; NULL otherwise. Free with
 * free_words(names, g->n). */
char **session_node_kernels(Session *s, const Graph *g);
/* The lowered buffers (and with fusion groups after `sched`) as a viz buffer graph; the strings
 * live until compile_bufgraph_free. -1 + ctx error when nothing is lowered. */
struct VizBufGraph;
int compile_state_bufgraph(Session *s, struct VizBufGraph *out, bool with_groups);
void compile_bufgraph_free(struct VizBufGraph *bg);
/* Whether `sched` has run on the lowered state (repl/cmd_compile.c). */
bool compile_state_scheduled(const CompileState *cs);

/* `minductor tlparse ...` (repl/tlparse_cli.c): "LOG -o DIR" or "DIR --all-ranks -o DIR".
 * Prints a summary on stdout, errors on stderr; returns a process exit code. */
int tlparse_main(MiCtx *ctx, int argc, char **argv);

#endif
