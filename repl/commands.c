/* commands.c — the command table, the line dispatcher (';'-separated commands, quoting,
 * comments), `help`, and "did you mean" suggestions for unknown commands. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "teach.h"

static const Command commands[] = {
    {"help", "help [COMMAND]",
     "List the commands, or show the usage and description of one.", cmd_help, CPL_CMD},
    {"load", "load FILE | load LOG COMPILE_ID [ARTIFACT]",
     "Load a graph: FX text (print_readable, .py/.txt) or JSON (.json); or the graph of one\n"
     "compile of a TORCH_TRACE log (COMPILE_ID like 0/0; ARTIFACT defaults to\n"
     "before_post_grad_graph, then aot_inference_graph / aot_forward_graph; a\n"
     "before_post_grad_graph equal to the post-grad graph gives way to the graph the\n"
     "compilation was handed: aot_forward/backward_graph or after_joint_graph, with a note).\n"
     "`load LOG` alone lists the log's compiles. A failed load keeps the previous graph.", cmd_load, CPL_FILE},
    {"graph", "graph [--stack] [--json]",
     "Print the current graph (the loaded graph after the applied passes) as FX text;\n"
     "--stack keeps the '# File:' comments, --json prints the JSON form.", cmd_graph, CPL_NONE},
    {"passes", "passes",
     "List the post-grad passes in order with their status: '*' applied (changed), '.' applied\n"
     "(no change), '!' failed, ' ' pending; '>' marks the cursor, 'B' a breakpoint.", cmd_passes, CPL_NONE},
    {"step", "step",
     "Run the next pass and print what it changed.", cmd_step, CPL_NONE},
    {"next", "next [N]",
     "Run the next N passes (default 1), stopping at a breakpoint. While a tour runs, `next`\n"
     "alone moves the tour on (`next N` with a number still runs passes; `tour next` always\n"
     "moves the tour).", cmd_next_or_tour, CPL_NONE},
    {"back", "back",
     "Undo the last applied pass (the graph before it comes back). While a tour runs, `back`\n"
     "goes to the tour's previous step instead (`goto STEP` moves passes then; `tour back`\n"
     "always moves the tour).", cmd_back_or_tour, CPL_NONE},
    {"goto", "goto STEP|PASS",
     "Move to the state after STEP passes (0 = the loaded graph), or to just after PASS.", cmd_goto, CPL_PASS},
    {"run", "run",
     "Run all remaining passes (stops before a breakpoint).", cmd_run, CPL_NONE},
    {"break", "break [PASS|off]",
     "Stop `run`/`next` before PASS; without argument show the breakpoint; 'off' clears it.", cmd_break, CPL_PASS},
    {"patterns", "patterns [FILE|off]",
     "Add the rewrites of a pattern file (core/fx_passes/patterns.md) to pass_pattern_2, for this graph and\n"
     "the next ones; without argument show the file in use; 'off' drops them. The steps from\n"
     "pass_pattern_2 on are recomputed.", cmd_patterns, CPL_FILE},
    {"diff", "diff [STEP|PASS] | diff session A.mi B.mi",
     "Show what a pass changed (unified diff of the FX text and the change list); default the\n"
     "last applied step.\n"
     "diff session: replay two session scripts (`save session FILE`), each in a session of its\n"
     "own (this one is not touched), and print what differs: settings, the passes applied, the\n"
     "graph node by node, the kernels (fusion groups matched by the FX nodes they compute) and\n"
     "each kernel's generated code. A script may only build state (load, inputs, set, patterns,\n"
     "break, step/next/back/goto/run, lower, sched, codegen, enter/leave, graph/passes/lint/ir/\n"
     "check); an error names the script, its line and the reason.", cmd_diff, CPL_PASS},
    {"lint", "lint",
     "Check the current graph: use-before-def, dangling uses, duplicate names, meta consistency,\n"
     "output placement. Prints 'lint: ok' or the problems.", cmd_lint, CPL_NONE},
    {"check", "check",
     "Run the reference interpreter on the loaded graph and on the current graph with the\n"
     "session's inputs (random if none) and compare every output; when the inputs came from a\n"
     "directory holding PyTorch's recorded outputs (out0.npy, ...), compare with those too.", cmd_check, CPL_NONE},
    {"bisect", "bisect",
     "Find the first pass that breaks lint or numerics (needs inputs for numerics).", cmd_bisect, CPL_NONE},
    {"inputs", "inputs [random [SEED] | FILE.npy... | DIR]",
     "Set the graph inputs: random (from SEED or the session seed), .npy files in placeholder\n"
     "order, or a directory's in0.npy, in1.npy, ... (and NAME.npy for each tensor constant\n"
     "self.NAME; random ones when missing with 'random'). Without arguments, show them.", cmd_inputs, CPL_FILE},
    {"lower", "lower",
     "Lower the current graph to the loop IR (buffers with define-by-run bodies).", cmd_lower, CPL_NONE},
    {"ir", "ir [post]",
     "Print the lowered IR like Inductor's ir_pre_fusion.txt ('post': ir_post_fusion.txt).", cmd_ir, CPL_NONE},
    {"sched", "sched",
     "Schedule the IR: fusion groups (kernels) and every fusion decision with its reason.", cmd_sched, CPL_NONE},
    {"codegen", "codegen [KERNEL]",
     "Show the generated C source (all of it, or one kernel); CUDA source after `set device cuda`.", cmd_codegen, CPL_NODE},
    {"exec", "exec [REPS] [--profile]",
     "Compile the generated C, run it on the inputs, compare with the reference interpreter\n"
     "(max abs err per output) and time it: median and p10-p90 spread of REPS runs (default 10)\n"
     "after a warm-up, on the physical cores other processes leave free ('set threads N' to\n"
     "choose); a warning when the spread is too wide to trust. --profile: then the\n"
     "time of each fused kernel and extern call, slowest first (CPU modules).", cmd_exec, CPL_NONE},
    {"show", "show fx|ir|fusion|diff [STEP] [--svg FILE|--png FILE|--dot FILE]",
     "Draw the FX graph, the IR buffer graph, the fusion groups or a pass diff with Graphviz.\n"
     "Without a file option the DOT text is printed.", cmd_show, CPL_SHOW},
    {"why", "why BUF_A BUF_B",
     "Do two buffers fuse, and which scheduler decision said so (its rule and score), naming the FX\n"
     "nodes each buffer computes. A traced session's report (`trace on F; sched; report`) has a\n"
     "why page with every decision and this text for each.", cmd_why, CPL_NONE},
    {"why-not", "why-not PATTERN NODE",
     "Where PATTERN (a rule of the `patterns` file or Inductor's: prepare_softmax, addmm, ...) fails\n"
     "to match at NODE of the current graph.", cmd_why_not, CPL_NODE},
    {"dump", "dump DIR",
     "Write what TORCH_COMPILE_DEBUG writes for the current graph: fx_graph_readable.py,\n"
     "fx_graph_transformed.py, ir_pre/post_fusion.txt, output_code.c, and the pictures (SVG and an\n"
     "interactive page each: search, node details, collapse, legend).", cmd_dump, CPL_FILE},
    {"artifact", "artifact LOG COMPILE_ID [NAME[#N]]",
     "Print one artifact of a TORCH_TRACE log as the log holds it: recompile_reasons,\n"
     "dynamo_guards, inductor_output_code, a graph's text, ...; NAME#N is the N-th of a repeated\n"
     "name. Without NAME, list the artifacts of that compile ('load' takes the graphs among them).", cmd_artifact, CPL_FILE},
    {"trace", "trace on FILE | trace off | trace",
     "Write a TORCH_TRACE log of what the session does (graphs, pass steps, code) to FILE;\n"
     "'trace off' closes it, 'trace' alone says where it goes. 'report' turns it into HTML.", cmd_trace, CPL_FILE},
    {"report", "report [DIR] | report --all-ranks LOGDIR [DIR]",
     "Turn the current trace log into a tlparse-like HTML report in DIR (default tl_out); without\n"
     "one, the TORCH_TRACE log the graph was loaded from. A trace still being written is closed\n"
     "first (its compile ends there, as a finished run's log does); 'trace on FILE' starts another.\n"
     "--all-ranks: LOGDIR's dedicated_log_torch_trace_rank_N_*.log files, parsed in parallel, one\n"
     "report per rank under DIR/rank_N/ and a landing page lining the ranks up (divergent compile\n"
     "ids, failures, collective sequences per rank).", cmd_report, CPL_FILE},
    {"save", "save session FILE | save graph FILE | save outputs DIR | save transcript FILE.html|FILE.md",
     "save session: write a script of the commands that rebuild the current state (replay it\n"
     "with `minductor < FILE`). save graph: write the current graph as FX text, or as JSON when\n"
     "FILE ends in .json. save outputs: run the current graph on the inputs and write DIR/inK.npy,\n"
     "outK.npy and inK_after.npy (mutated inputs) as PyTorch's recorded cases have them (bf16 as\n"
     "float32); `inputs DIR; check` compares with them later. save transcript: the session so far,\n"
     "each command with its output and the pictures it drew, as one self-contained HTML page\n"
     "(SVG inline) or as plain text (.md).", cmd_save, CPL_FILE},
    {"set", "set [device cpu|cuda | threads N | fusion on|off | seed N | errexit on|off |\n"
            "     collapse N | tolerance RTOL [ATOL] | timer on|off | limit NAME N]",
     "Change a setting; without arguments list them. `device cuda` selects the CUDA-only passes\n"
     "and makes codegen/exec emit CUDA (built with nvcc; exec needs a GPU). `limit NAME N` raises\n"
     "or lowers a bound on runaway work (sym_degree, pattern_matches, fusion_rounds, draw_nodes,\n"
     "while_iterations: the most body_fn trips of one while_loop in the interpreters and the\n"
     "compiled code, which PyTorch does not bound); work past a bound stops with an error naming\n"
     "the limit.", cmd_set, CPL_SET},
    {"enter", "enter SUBGRAPH",
     "Look inside a subgraph (a cond branch such as true_graph_0): graph, lint, show fx, passes,\n"
     "step and diff then show that subgraph; the passes still run over the whole graph, inner\n"
     "subgraphs first, as Inductor's _recursive_post_grad_passes does. Nested: enter again.", cmd_enter, CPL_SUBGRAPH},
    {"leave", "leave", "Go back out of the entered subgraph (to its parent graph).", cmd_leave, CPL_NONE},
    {"tour", "tour [NAME|FILE.tour | next | back | hint | off]",
     "Guided lessons on bundled examples (examples/tours/): without argument list them; `tour\n"
     "NAME` starts one. Each step explains, then runs its commands in this session (your own\n"
     "commands work in between); `next`/`back` (or `tour next`/`tour back`) move, the exercise at\n"
     "the end is answered with `answer TEXT`; `tour hint` helps, `tour off` leaves.", cmd_tour, CPL_TOUR},
    {"answer", "answer TEXT",
     "Answer the exercise at the end of the running tour; a wrong answer is an error (with a\n"
     "hint), a right one finishes the lesson.", cmd_answer, CPL_NONE},
    {"serve", "serve [LO-HI | off]",
     "Serve a live page of the session on http://127.0.0.1:PORT/ (first free port of LO-HI,\n"
     "default 8000-8099; this machine only) for a projector: the graph picture, the passes with\n"
     "the last diff, the IR and the fusion picture, updated after every command. `serve off` or\n"
     "leaving the shell stops it.", cmd_serve, CPL_NONE},
    {"quit", "quit", "Leave the shell.", cmd_quit, CPL_NONE},
    {"exit", "exit", "Leave the shell.", cmd_quit, CPL_NONE},
};

const Command *command_table(int *n) {
    *n = (int)(sizeof commands / sizeof commands[0]);
    return commands;
}

const Command *command_find(const char *name) {
    int n;
    const Command *t = command_table(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

static int edit_distance(const char *a, const char *b) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 64 || lb > 64) return 99;
    int d[65][65];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;      /* transposition */
            d[i][j] = c;
        }
    return d[la][lb];
}

const char *command_suggest(const char *name) {
    int n, best = strlen(name) <= 4 ? 2 : 3;     /* accept distance 1 for short words, else 2 */
    const Command *t = command_table(&n);
    const char *pick = NULL;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(name, t[i].name);
        if (d < best) { best = d; pick = t[i].name; }
    }
    if (!pick && strlen(name) >= 2)
        for (int i = 0; i < n; i++)
            if (strncmp(t[i].name, name, strlen(name)) == 0) return t[i].name;
    return pick;
}

int usage_error(Session *s, const char *cmd) {
    const Command *c = command_find(cmd);
    return mi_err(s->ctx, "", 0, 0, "usage: %s", c ? c->usage : cmd);
}

int parse_count(Session *s, const char *arg, const char *what, long *out) {
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < 0 || v > 1000000000L)
        return mi_err(s->ctx, "", 0, 0, "%s must be a non-negative integer, got '%s'", what, arg);
    *out = v;
    return 0;
}

int cmd_help(Session *s, int argc, char **argv) {
    int n;
    const Command *t = command_table(&n);
    if (argc > 2) return usage_error(s, "help");
    if (argc == 2) {
        const Command *c = command_find(argv[1]);
        if (!c) {
            const char *sug = command_suggest(argv[1]);
            return mi_err(s->ctx, "", 0, 0, "no command '%s'%s%s%s", argv[1],
                          sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
        }
        fprintf(s->out, "usage: %s\n%s\n", c->usage, c->help);
        return 0;
    }
    fprintf(s->out, "commands (help COMMAND for details):\n");
    for (int i = 0; i < n; i++) {
        /* The first sentence of the help text, on one line. */
        char first[160];
        size_t k = 0;
        for (const char *h = t[i].help; *h && k + 4 < sizeof first; h++) {
            first[k++] = *h == '\n' ? ' ' : *h;
            if ((*h == '.' || *h == ';') && (h[1] == 0 || h[1] == ' ' || h[1] == '\n')) break;
        }
        first[k] = 0;
        if (k > 1 && first[k - 1] == ';') first[k - 1] = 0;
        if (strlen(first) > 68) {                  /* keep the listing one screen wide */
            first[68] = 0;
            char *sp = strrchr(first, ' ');
            strcpy(sp ? sp : first + 64, " ...");
        }
        fprintf(s->out, "  %-8s %s\n", t[i].name, first);
    }
    return 0;
}

char **split_words(const char *cmd, int *argc) {
    int cap = 8, n = 0;
    char **argv = mi_xcalloc(cap, sizeof *argv);
    const char *p = cmd;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        StrBuf w; sb_init(&w);
        sb_put(&w, "");
        char quote = 0;
        while (*p && (quote || !isspace((unsigned char)*p))) {
            if (quote) {
                if (*p == quote) { quote = 0; p++; continue; }
                if (*p == '\\' && quote == '"' && p[1]) { sb_putc(&w, p[1]); p += 2; continue; }
                sb_putc(&w, *p++);
            } else if (*p == '\'' || *p == '"') {
                quote = *p++;
            } else if (*p == '\\' && p[1]) {
                sb_putc(&w, p[1]); p += 2;
            } else {
                sb_putc(&w, *p++);
            }
        }
        if (n + 2 > cap) { cap *= 2; argv = mi_xrealloc(argv, cap * sizeof *argv); }
        argv[n++] = sb_take(&w);
    }
    argv[n] = NULL;
    *argc = n;
    return argv;
}

char *quote_word(const char *w) {
    StrBuf sb; sb_init(&sb);
    sb_put(&sb, "");
    if (!*w || strpbrk(w, " \t;#'\"<>")) {
        sb_putc(&sb, '"');
        for (const char *p = w; *p; p++) { if (*p == '"' || *p == '\\') sb_putc(&sb, '\\'); sb_putc(&sb, *p); }
        sb_putc(&sb, '"');
    } else sb_put(&sb, w);
    return sb_take(&sb);
}

void free_words(char **argv, int argc) {
    for (int i = 0; i < argc; i++) free(argv[i]);
    free(argv);
}

/* `CMD > FILE` / `CMD >> FILE`: the position of the first '>' outside quotes in text that has
 * something after it, or -1 (a '>' at the end is part of the command: `nosuchcmd <b>`). */
static long redirect_at(const char *text) {
    char quote = 0;
    for (const char *p = text; *p; p++) {
        if (quote && *p == '\\' && p[1]) { p++; continue; }
        if (quote) { if (*p == quote) quote = 0; continue; }
        if (*p == '\'' || *p == '"') quote = *p;
        else if (*p == '>') return p[strspn(p, "> \t")] ? p - text : -1;
    }
    return -1;
}

/* Open the redirection target of `text` (after the '>' at `at`): s->out goes there for the
 * command; *saved gets the old s->out. 0, or -1 + ctx error (no file named, cannot open). */
static int redirect_open(Session *s, const char *text, long at, FILE **saved) {
    bool append = text[at + 1] == '>';
    int wc;
    char **w = split_words(text + at + 1 + append, &wc);
    int rc = 0;
    if (wc != 1) rc = mi_err(s->ctx, "", 0, 0, "'>' needs one file name after it (CMD > FILE, CMD >> FILE)");
    else {
        FILE *f = fopen(w[0], append ? "a" : "w");
        if (!f) rc = mi_err(s->ctx, w[0], 0, 0, "cannot write: %s", strerror(errno));
        else { fflush(s->out); *saved = s->out; s->out = f; }
    }
    free_words(w, wc);
    return rc;
}

static int run_command(Session *s, const char *full) {
    /* `codegen > k.c`: the command's results (stdout) into a file, notes stay on stderr */
    long at = redirect_at(full);
    char *text = mi_xstrdup(full);
    if (at >= 0) text[at] = 0;
    FILE *saved = NULL;
    int argc;
    char **argv = split_words(text, &argc);
    int rc = 0;
    if (at >= 0 && argc > 0 && redirect_open(s, full, at, &saved) < 0) {
        session_print_error(s);
        free_words(argv, argc);
        free(text);
        return -1;
    }
    teach_cmd_begin(s, text);        /* the transcript records, the live view refreshes */
    if (argc > 0) {
        const Command *c = command_find(argv[0]);
        if (!c) {
            const char *sug = command_suggest(argv[0]);
            if (sug) mi_err(s->ctx, "", 0, 0, "unknown command '%s' (did you mean '%s'? try 'help')", argv[0], sug);
            else mi_err(s->ctx, "", 0, 0, "unknown command '%s' (try 'help')", argv[0]);
            rc = -1;
        } else {
            mi_clear_err(s->ctx);
            interrupt_arm(s);
            uint64_t t0 = mi_now_ns();
            rc = c->fn(s, argc, argv) < 0 ? -1 : 0;
            if (s->timer) fprintf(s->err, "(%s: %.3f ms)\n", argv[0], (mi_now_ns() - t0) / 1e6);
            if (rc < 0 && mi_interrupted(s->ctx)) rc = -2;
        }
        if (rc == -2) {
            s->interrupted = true;
            char buf[1200];
            mi_err_str(s->ctx, buf, sizeof buf);
            fflush(s->out);
            fprintf(s->err, "%s%s; %s\n", strstr(buf, "interrupted") ? "" : "interrupted (Ctrl-C): ", buf,
                    s->interactive ? "back at the prompt, the session as it was" : "the script stops here");
            fflush(s->err);
            mi_clear_err(s->ctx);
        } else if (rc < 0) {
            session_print_error(s);
            if (s->script && !s->interactive) {      /* which line of the script failed */
                fprintf(s->err, "  at %s:%d: %s", s->script, s->script_line, argv[0]);
                for (int i = 1; i < argc; i++) fprintf(s->err, " %s", argv[i]);
                if (s->script_cmd > 1) fprintf(s->err, "   (command %d of the line)", s->script_cmd);
                fputc('\n', s->err);
            }
        }
    }
    fflush(s->out);
    teach_cmd_end(s, argc, argv, rc);
    if (saved) {                       /* after the transcript let go of s->out */
        if (fclose(s->out) != 0 && rc == 0) {
            mi_err(s->ctx, "", 0, 0, "writing the redirected output failed: %s", strerror(errno));
            session_print_error(s);
            rc = -1;
        }
        s->out = saved;
    }
    free_words(argv, argc);
    free(text);
    return rc;
}

int run_line(Session *s, const char *line) {
    /* Split on ';' and '#' outside quotes. */
    StrBuf cur; sb_init(&cur);
    sb_put(&cur, "");
    char quote = 0;
    int rc = 0;
    int base = s->script_line;   /* the line this text starts on (a -c text may hold several) */
    s->script_cmd = 1;
    for (const char *p = line;; p++) {
        char c = *p;
        if (quote && c == '\\' && p[1]) { sb_putc(&cur, c); sb_putc(&cur, *++p); continue; }
        if (c && quote) { if (c == quote) quote = 0; sb_putc(&cur, c); continue; }
        if (c == '\'' || c == '"') { quote = c; sb_putc(&cur, c); continue; }
        if (c == '#' && (cur.len == 0 || isspace((unsigned char)cur.s[cur.len - 1]))) {
            while (p[1] && p[1] != '\n') p++;     /* to the end of the line */
            continue;
        }
        if (c == ';' || c == '\n' || c == 0) {
            int crc = run_command(s, cur.s ? cur.s : "");
            bool stopped = crc == -2;
            if (crc < 0) rc = -1;
            bool blank = true;
            for (size_t k = 0; k < cur.len; k++) blank &= isspace((unsigned char)cur.s[k]) != 0;
            if (!blank) s->script_cmd++;
            if (c == '\n') { s->script_line++; s->script_cmd = 1; }
            cur.len = 0; if (cur.s) cur.s[0] = 0;
            if (rc < 0 && ((s->errexit && !s->interactive) || stopped)) break;   /* Ctrl-C drops the rest of the line */
            if (s->quit || c == 0) break;
            continue;
        }
        sb_putc(&cur, c);
    }
    sb_free(&cur);
    s->script_line = base;
    return rc;
}
