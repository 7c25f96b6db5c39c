/* cmd_misc.c — shell commands around the pipeline: show (Graphviz pictures of the FX graph,
 * IR, fusion groups, pass diffs), trace on/off (TORCH_TRACE log of the session), report
 * (tlparse-like HTML of that log), save session (a script that rebuilds the state), set
 * (settings) and quit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "commands.h"
#include "teach.h"
#include "base/same.h"
#include "viz/viz.h"
#include "trace/trace.h"

/* ---------------------------------------------------------------- show */

static VizGraph *build_diff(Session *s, const char *step_arg, const VizOptions *vo) {
    int k;
    if (!session_require_graph(s) || diff_step(s, step_arg, &k) < 0) return NULL;   /* as `diff STEP` */
    const Graph *before = pm_graph_at(s->pm, k - 1), *after = pm_graph_at(s->pm, k);
    const PassStep *st = pm_step_record(s->pm, k - 1);
    int nch = st ? st->nchanges : 0;
    const char **names = mi_xcalloc(nch ? nch : 1, sizeof *names);
    VizChange *kinds = mi_xcalloc(nch ? nch : 1, sizeof *kinds);
    int m = 0;
    size_t pl = s->scope ? strlen(s->scope) : 0;
    if (s->scope) {     /* inside `enter`: that subgraph's diff, its nodes named relative to it */
        before = graph_at_path(before, s->scope);
        after = graph_at_path(after, s->scope);
        if (!before || !after) {
            free(names); free(kinds);
            mi_err(s->ctx, "", 0, 0, "subgraph %s is not in the graph at step %d", s->scope, k);
            return NULL;
        }
    }
    for (int i = 0; i < nch; i++) {
        char c = st->changes[i].kind;
        if (c != '+' && c != '-' && c != '~' && c != '>') continue;
        const char *node = st->changes[i].node;
        if (s->scope && (strncmp(node, s->scope, pl) || node[pl] != '.')) continue;
        names[m] = s->scope ? node + pl + 1 : node;
        kinds[m++] = c == '+' ? VIZ_ADDED : c == '-' ? VIZ_REMOVED : c == '~' ? VIZ_REWRITTEN : VIZ_MOVED;
    }
    int na, nr, nw;
    VizGraph *vg = viz_diff(s->ctx, before, after, names, kinds, m, vo, &na, &nr, &nw);
    free(names); free(kinds);
    if (vg) fprintf(s->err, "diff of step %d %s%s%s: %d added, %d removed, %d rewritten\n", k,
                    pm_pass_name(s->pm, k - 1), s->scope ? " in " : "", s->scope ? s->scope : "", na, nr, nw);
    return vg;
}

int cmd_show(Session *s, int argc, char **argv) {
    if (argc < 2) return usage_error(s, "show");
    const char *what = argv[1], *file = NULL, *format = NULL, *step = NULL;
    VizOptions vo; viz_default_options(&vo);
    vo.collapse_over = s->collapse_over;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--svg") || !strcmp(a, "--png") || !strcmp(a, "--dot")) && i + 1 < argc) {
            format = a + 2; file = argv[++i];
        } else if (!strcmp(a, "--collapse") && i + 1 < argc) {
            long v;
            if (parse_count(s, argv[++i], "--collapse N", &v) < 0) return -1;
            vo.collapse_over = (int)v;
        } else if (!strcmp(a, "--lr")) {
            vo.rankdir = "LR";
        } else if (!strcmp(what, "diff") && !step && a[0] != '-') {
            step = a;
        } else return usage_error(s, "show");
    }
    VizGraph *vg = NULL;
    if (!strcmp(what, "fx") || !strcmp(what, "graph")) {
        if (!session_require_graph(s)) return -1;
        const Graph *g = session_view(s);
        char **kernels = session_node_kernels(s, g);     /* big graphs box by kernel after `sched` */
        vo.node_kernel = (const char *const *)kernels;
        vo.nnode_kernel = kernels ? g->n : 0;
        vg = viz_fx(s->ctx, g, &vo);
        if (kernels) free_words(kernels, g->n);
        if (vg && *viz_note(vg)) fprintf(s->err, "%s\n", viz_note(vg));
    } else if (!strcmp(what, "ir") || !strcmp(what, "fusion")) {
        VizBufGraph bg = {0};
        bool fusion = !strcmp(what, "fusion");
        if (compile_state_bufgraph(s, &bg, fusion) < 0) return -1;
        vg = fusion ? viz_fusion(s->ctx, &bg, &vo) : viz_buffers(s->ctx, &bg, "ir", &vo);
        compile_bufgraph_free(&bg);
    } else if (!strcmp(what, "diff")) {
        if (!session_require_graph(s)) return -1;
        vg = build_diff(s, step, &vo);
    } else {
        return mi_err(s->ctx, "", 0, 0, "show what? '%s' is not one of fx, ir, fusion, diff", what);
    }
    if (!vg) return -1;
    int rc = 0;
    if (file) {
        fprintf(s->err, "rendering %d nodes to %s...\n", viz_node_count(vg), file);
        VizRenderer *vr = session_renderer(s);
        rc = vr ? viz_render_file(s->ctx, vr, vg, format, file) : -1;
        if (rc == 0) fprintf(s->out, "wrote %s (%s, %d nodes)\n", file, format, viz_node_count(vg));
    } else {
        char *dot = viz_to_dot(s->ctx, vg);
        if (dot) { fputs(dot, s->out); free(dot); } else rc = -1;
    }
    viz_free(vg);
    return rc;
}

/* ---------------------------------------------------------------- trace, report */

static int trace_stop(Session *s) { return strace_close(s); }

int cmd_trace(Session *s, int argc, char **argv) {
    if (argc == 1) {
        if (s->trace_on) fprintf(s->out, "tracing to %s\n", s->trace_path);
        else fprintf(s->out, "tracing is off%s%s\n", s->trace_path ? "; last log: " : "",
                     s->trace_path ? s->trace_path : "");
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "off")) {
        if (!s->trace_on) { fprintf(s->out, "tracing is already off\n"); return 0; }
        if (trace_stop(s) < 0) return -1;      /* a write failed: the log is incomplete */
        fprintf(s->out, "trace closed: %s\n", s->trace_path);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "on")) return usage_error(s, "trace");
    /* the same log again: close it first (opening truncates it under the open writer) */
    if (s->trace_on && !strcmp(s->trace_path, argv[2]) && trace_stop(s) < 0) return -1;
    TraceWriter *tw = trace_open(s->ctx, argv[2]);
    if (!tw) return -1;
    if (trace_stop(s) < 0) {                   /* the previous log: say so, go on with the new one */
        char buf[1200];
        mi_err_str(s->ctx, buf, sizeof buf);
        fprintf(s->err, "warning: %s\n", buf);
        mi_clear_err(s->ctx);
    }
    s->ctx->trace = tw;
    s->trace_on = true;
    free(s->trace_path);
    s->trace_path = mi_xstrdup(argv[2]);
    s->trace_frame = 0;
    strace_begin_compile(s);     /* the loaded graph (if any) is compile 0/0 */
    fprintf(s->out, "tracing to %s\n", argv[2]);
    return 0;
}

/* report --all-ranks LOGDIR [DIR]: the multi-rank report (trace/multirank.c) */
static int report_all_ranks(Session *s, const char *logdir, const char *dir) {
    fprintf(s->err, "parsing the rank logs in %s...\n", logdir);
    TlparseMultiSummary ms;
    memset(&ms, 0, sizeof ms);
    if (tlparse_all_ranks(s->ctx, logdir, dir, NULL, &ms) < 0) return -1;
    fprintf(s->out, "report: %s/index.html (%d rank%s; %d divergent compile id%s, %d collective mismatch%s, %d failure mismatch%s)\n",
            dir, ms.n_ranks, ms.n_ranks == 1 ? "" : "s", ms.n_divergent_compiles, ms.n_divergent_compiles == 1 ? "" : "s",
            ms.n_collective_mismatches, ms.n_collective_mismatches == 1 ? "" : "es", ms.n_failure_mismatches,
            ms.n_failure_mismatches == 1 ? "" : "es");
    for (int r = 0; r < ms.n_ranks; r++)
        fprintf(s->out, "  rank %d: %d compile%s, %d failed, %d with collectives -> %s/rank_%d/index.html\n", ms.ranks[r].rank,
                ms.ranks[r].s.n_compiles, ms.ranks[r].s.n_compiles == 1 ? "" : "s", ms.ranks[r].s.n_failed,
                ms.ranks[r].n_collective_graphs, dir, ms.ranks[r].rank);
    tlparse_multi_summary_free(&ms);
    return 0;
}

/* report of one log into dir, with a one-line summary */
static int report_log(Session *s, const char *log, const char *dir) {
    TlparseSummary sum;
    memset(&sum, 0, sizeof sum);
    if (tlparse_run(s->ctx, log, dir, NULL, &sum) < 0) return -1;
    fprintf(s->out, "report: %s/index.html (%d compile%s, %d artifacts, %d failed, %.3f s)\n", dir,
            sum.n_compiles, sum.n_compiles == 1 ? "" : "s", sum.n_artifacts, sum.n_failed, sum.seconds);
    return 0;
}

int cmd_report(Session *s, int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "--all-ranks")) {
        if (argc < 3 || argc > 4) return usage_error(s, "report");
        return report_all_ranks(s, argv[2], argc == 4 ? argv[3] : "tl_out");
    }
    if (argc > 2) return usage_error(s, "report");
    const char *dir = argc == 2 ? argv[1] : "tl_out";
    if (!s->trace_path) {
        /* no log of the session: the log the graph was loaded from, if it came from one */
        char log[1024] = "";
        int wc = 0;
        char **w = s->load_args ? split_words(s->load_args, &wc) : NULL;
        if (wc > 0 && looks_like_trace_log(w[0])) snprintf(log, sizeof log, "%s", w[0]);
        if (w) free_words(w, wc);
        if (!log[0]) return mi_err(s->ctx, "", 0, 0, "no trace log: start one with 'trace on FILE' "
                                   "(or load a graph from a TORCH_TRACE log)");
        fprintf(s->err, "parsing %s (the log the graph was loaded from)...\n", log);
        return report_log(s, log, dir);
    }
    if (s->trace_on) {
        if (trace_stop(s) < 0) return -1;
        fprintf(s->err, "trace closed: %s (start a new one with 'trace on FILE')\n", s->trace_path);
    }
    fprintf(s->err, "parsing %s...\n", s->trace_path);
    return report_log(s, s->trace_path, dir);
}

/* ---------------------------------------------------------------- save session */

static int save_graph(Session *s, const char *path) {
    if (!session_require_graph(s)) return -1;
    const char *dot = strrchr(path, '.');
    bool json = dot && !strcmp(dot, ".json");
    char *text = json ? graph_to_json(session_graph(s)) : fx_print(session_graph(s), true);
    if (!text) return mi_err(s->ctx, "", 0, 0, "cannot print the graph");
    int rc = mi_write_file(s->ctx, path, text, strlen(text));
    free(text);
    if (rc == 0) fprintf(s->out, "saved the current graph to %s (%s)\n", path, json ? "JSON" : "FX text");
    return rc;
}

/* One tensor as DIR/<stem><k><suffix>.npy; a note when its dtype has no numpy type. */
static int save_npy(Session *s, const char *dir, const char *stem, int k, const char *suffix, const Tensor *t) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s%d%s.npy", dir, stem, k, suffix);
    if (npy_save(s->ctx, p, t) < 0) return -1;
    if (!dtype_npy_descr(t->dtype))
        fprintf(s->err, "note: %s is %s; written as float32 (.npy has no %s)\n", p, dtype_abbrev(t->dtype), dtype_abbrev(t->dtype));
    return 0;
}

/* save outputs DIR: the session inputs and what the current graph computes from them, in the
 * layout PyTorch's recorded cases use (inK.npy, outK.npy, inK_after.npy for mutated inputs,
 * NAME.npy for tensor constants),
 * so `inputs DIR; check` compares a later graph with these values. */
static int save_outputs(Session *s, const char *dir) {
    if (!session_require_graph(s)) return -1;
    if (session_ensure_inputs(s) < 0) return -1;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return mi_err(s->ctx, dir, 0, 0, "cannot create directory: %s", strerror(errno));
    IValue *in = session_clone_inputs(s->ctx, s->inputs, s->ninputs), *outs = NULL;
    int nouts = 0, rc = -1, nsaved = 0;
    if (!in) return -1;
    if (interp_run(s->ctx, session_graph(s), in, s->ninputs, &outs, &nouts) < 0) goto done;
    for (int k = 0; k < s->ninputs; k++) {
        if (s->inputs[k].kind != IV_TENSOR) continue;
        if (save_npy(s, dir, "in", k, "", s->inputs[k].t) < 0) goto done;
        if (!tensor_same(s->inputs[k].t, in[k].t, NULL, 0, 0).ok) {
            if (save_npy(s, dir, "in", k, "_after", in[k].t) < 0) goto done;
            nsaved++;
        }
    }
    for (int k = 0; k < nouts; k++) {
        if (outs[k].kind != IV_TENSOR) continue;
        if (save_npy(s, dir, "out", k, "", outs[k].t) < 0) goto done;
        nsaved++;
    }
    for (int k = 0; k < s->ctx->nconsts; k++) {   /* tensor constants: DIR/NAME.npy, as inputs DIR reads them */
        char p[1200];
        snprintf(p, sizeof p, "%s/%s.npy", dir, s->ctx->consts[k].name);
        if (npy_save(s->ctx, p, s->ctx->consts[k].t) < 0) goto done;
    }
    fprintf(s->out, "saved %d input%s and %d result%s to %s\n", s->ninputs, s->ninputs == 1 ? "" : "s", nsaved,
            nsaved == 1 ? "" : "s", dir);
    rc = 0;
done:
    interp_free_outputs(outs, nouts);
    session_free_inputs(in, s->ninputs);
    return rc;
}

/* The shortest "%g"-style text that reads back as exactly v (1e-05, not 1.0000000000000001e-05). */
static void exact_double(double v, char *buf, size_t n) {
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* A file the saved session reads (graph, inputs, patterns) that is not there any more: the
 * replay would fail or differ, so say so now. */
static void warn_missing(Session *s, const char *what, const char *args) {
    int wc = 0;
    char **w = args ? split_words(args, &wc) : NULL;
    struct stat st;
    if (wc > 0 && strcmp(w[0], "random") && stat(w[0], &st) != 0)
        fprintf(s->err, "warning: the session's %s %s is not there: replaying it will fail\n", what, w[0]);
    if (w) free_words(w, wc);
}

/* The script that rebuilds the session: every setting that changes results first (device,
 * threads, fusion, seed, tolerance, limits, the user pattern file), then the graph, its inputs,
 * the breakpoint, the pass cursor, the lowered/scheduled state and the entered subgraph.
 * Replayed into a fresh shell it gives the same state (test_shell_daily checks `set`, `passes`
 * and `graph` of both). Example:
 *   set device cpu / set threads 0 / set fusion on / set tolerance 0.0001 0.0001
 *   patterns p.pat / load g.py / inputs random 7 / set seed 7 / break stable_sort / goto 2 / sched */
static int save_session(Session *s, const char *path) {
    StrBuf sb; sb_init(&sb);
    time_t now = time(NULL);
    char when[64], cwd[1024];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    sb_printf(&sb, "# minductor session saved %s; replay with: minductor < %s\n", when, path);
    if (getcwd(cwd, sizeof cwd)) sb_printf(&sb, "# relative paths are relative to %s\n", cwd);
    MiCtx *c = s->ctx;
    sb_printf(&sb, "set device %s\n", c->target == MI_DEV_CUDA ? "cuda" : "cpu");
    sb_printf(&sb, "set threads %d\n", c->threads);
    sb_printf(&sb, "set fusion %s\n", c->fusion ? "on" : "off");
    char rt[40], at[40];
    exact_double(s->rtol, rt, sizeof rt);
    exact_double(s->atol, at, sizeof at);
    sb_printf(&sb, "set tolerance %s %s\n", rt, at);
    for (const MiLimitInfo *l = mi_limit_info(); l->name; l++) {
        int v = *(const int *)((const char *)&c->limits + l->offset);
        if (v != l->def) sb_printf(&sb, "set limit %s %d\n", l->name, v);
    }
    if (s->collapse_over != 200) sb_printf(&sb, "set collapse %d\n", s->collapse_over);
    if (s->patterns_path) {                  /* before load: it applies to the graphs loaded after */
        char *q = quote_word(s->patterns_path);
        sb_printf(&sb, "patterns %s\n", q);
        free(q);
        warn_missing(s, "pattern file", s->patterns_path);
    }
    if (s->load_args) { sb_printf(&sb, "load %s\n", s->load_args); warn_missing(s, "graph", s->load_args); }
    if (s->inputs_args) { sb_printf(&sb, "inputs %s\n", s->inputs_args); warn_missing(s, "inputs", s->inputs_args); }
    /* after the inputs: `inputs random N` sets the seed to N, and the session's own seed may have
     * changed since (fuzz_session) */
    sb_printf(&sb, "set seed %llu\n", (unsigned long long)c->seed);
    if (s->break_pass) sb_printf(&sb, "break %s\n", s->break_pass);
    if (s->pm && pm_cursor(s->pm) > 0) sb_printf(&sb, "goto %d\n", pm_cursor(s->pm));
    if (s->cs) sb_put(&sb, compile_state_scheduled(s->cs) ? "sched\n" : "lower\n");
    if (s->scope) {             /* the entered subgraph, one `enter` per level ("a.b") */
        const char *p = s->scope;
        for (const char *dot; (dot = strchr(p, '.')); p = dot + 1) sb_printf(&sb, "enter %.*s\n", (int)(dot - p), p);
        sb_printf(&sb, "enter %s\n", p);
    }
    if (s->trace_on) sb_printf(&sb, "# tracing was on: trace on %s\n", s->trace_path);
    int rc = mi_write_file(s->ctx, path, sb.s, sb.len);
    if (rc == 0) fprintf(s->out, "saved session to %s\n", path);
    sb_free(&sb);
    return rc;
}

int cmd_save(Session *s, int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "graph")) return save_graph(s, argv[2]);
    if (argc == 3 && !strcmp(argv[1], "outputs")) return save_outputs(s, argv[2]);
    if (argc == 3 && !strcmp(argv[1], "transcript")) return transcript_save(s, argv[2]);
    if (argc != 3 || strcmp(argv[1], "session")) return usage_error(s, "save");
    return save_session(s, argv[2]);
}

/* ---------------------------------------------------------------- set, quit */

static int on_off(Session *s, const char *arg, bool *out) {
    if (!strcmp(arg, "on") || !strcmp(arg, "true") || !strcmp(arg, "1")) { *out = true; return 0; }
    if (!strcmp(arg, "off") || !strcmp(arg, "false") || !strcmp(arg, "0")) { *out = false; return 0; }
    return mi_err(s->ctx, "", 0, 0, "expected on or off, got '%s'", arg);
}

static void print_settings(Session *s) {
    MiCtx *c = s->ctx;
    fprintf(s->out, "device    %s\n", c->target == MI_DEV_CUDA ? "cuda" : "cpu");
    fprintf(s->out, "threads   %d%s\n", c->threads, c->threads ? "" : " (default)");
    fprintf(s->out, "fusion    %s\n", c->fusion ? "on" : "off");
    fprintf(s->out, "seed      %llu\n", (unsigned long long)c->seed);
    fprintf(s->out, "errexit   %s\n", s->errexit ? "on" : "off");
    fprintf(s->out, "collapse  %d\n", s->collapse_over);
    fprintf(s->out, "timer     %s\n", s->timer ? "on" : "off");
    fprintf(s->out, "tolerance rtol %g atol %g\n", s->rtol, s->atol);
    for (const MiLimitInfo *l = mi_limit_info(); l->name; l++)
        fprintf(s->out, "limit %-16s %d  (%s; default %d)\n", l->name, *(const int *)((const char *)&c->limits + l->offset),
                l->what, l->def);
}

int cmd_set(Session *s, int argc, char **argv) {
    if (argc == 1) { print_settings(s); return 0; }
    const char *key = argv[1];
    if (!strcmp(key, "tolerance") && (argc == 3 || argc == 4)) {
        char *e1, *e2 = NULL;
        double r = strtod(argv[2], &e1), a = argc == 4 ? strtod(argv[3], &e2) : r;
        if (*e1 || (e2 && *e2) || r < 0 || a < 0)
            return mi_err(s->ctx, "", 0, 0, "tolerance must be non-negative numbers");
        bool changed = s->rtol != r || s->atol != a;
        s->rtol = r; s->atol = a;
        fprintf(s->out, "tolerance rtol %g atol %g\n", r, a);
        if (s->pm && changed) {      /* the numerics after each pass too: the steps are checked again */
            int cur = pm_cursor(s->pm);
            session_drop_compile(s);                 /* the IR points into the steps' graphs */
            pm_set_tolerance(s->pm, r, a);
            if (cur > 0 && pm_goto(s->pm, cur) < 0) return -1;   /* back where the cursor was */
        }
        return 0;
    }
    if (!strcmp(key, "limit") && argc == 4) {      /* set limit NAME N */
        long v;
        if (parse_count(s, argv[3], argv[2], &v) < 0 || mi_limit_set(s->ctx, argv[2], v) < 0) return -1;
        fprintf(s->out, "limit %s = %ld\n", argv[2], v);
        return 0;
    }
    if (argc != 3) return usage_error(s, "set");
    const char *val = argv[2];
    MiCtx *c = s->ctx;
    long v;
    if (!strcmp(key, "device")) {
        if (!strcmp(val, "cpu")) c->target = MI_DEV_CPU;
        else if (!strcmp(val, "cuda")) c->target = MI_DEV_CUDA;
        else return mi_err(s->ctx, "", 0, 0, "device must be cpu or cuda, got '%s'", val);
        session_drop_compile(s);
        if (session_rebuild_pm(s) < 0) return -1;
    } else if (!strcmp(key, "threads")) {
        if (parse_count(s, val, "threads", &v) < 0) return -1;
        if (v > 4096) return mi_err(s->ctx, "", 0, 0, "threads: %ld is too many", v);
        c->threads = (int)v;
    } else if (!strcmp(key, "fusion")) {
        if (on_off(s, val, &c->fusion) < 0) return -1;
        session_drop_compile(s);
    } else if (!strcmp(key, "seed")) {
        char *end;
        unsigned long long seed = strtoull(val, &end, 10);
        if (!*val || *end || val[0] == '-') return mi_err(s->ctx, "", 0, 0, "seed must be a non-negative integer, got '%s'", val);
        c->seed = seed;
    } else if (!strcmp(key, "errexit")) {
        if (on_off(s, val, &s->errexit) < 0) return -1;
    } else if (!strcmp(key, "timer")) {
        if (on_off(s, val, &s->timer) < 0) return -1;
    } else if (!strcmp(key, "collapse")) {
        if (parse_count(s, val, "collapse", &v) < 0) return -1;
        s->collapse_over = (int)v;
    } else {
        return mi_err(s->ctx, "", 0, 0, "unknown setting '%s' (device, threads, fusion, seed, errexit, collapse, tolerance, timer, limit)", key);
    }
    fprintf(s->out, "%s = %s\n", key, val);
    return 0;
}

int cmd_quit(Session *s, int argc, char **argv) {
    (void)argc; (void)argv;
    s->quit = true;
    return 0;
}
