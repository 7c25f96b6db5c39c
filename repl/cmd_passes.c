/* cmd_passes.c — shell commands that step through the post-grad pass pipeline with the pass
 * manager (core/fx_passes/passes.h): passes, step, next, back, goto, run, break, patterns, diff, bisect. Passes are
 * numbered from 1 in the shell: `goto 3` is the graph after passes 1..3, `diff 3` what pass 3
 * did. Every applied step is written to the trace log when tracing is on. */
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "fx/graph_diff.h"
#include "trace/trace.h"
#include "viz/viz.h"
#include "fx_passes/pattern.h"


static bool require_pm(Session *s) {
    if (!session_require_graph(s)) return false;
    if (!s->pm) { mi_err(s->ctx, "", 0, 0, "the pass manager could not start for this graph"); return false; }
    return true;
}

char **session_pass_names(Session *s) {
    int n = s->pm ? pm_num_passes(s->pm) : 0;
    int tn = 0;
    const PassDef *t = n ? NULL : pass_table(&tn);
    int count = n ? n : tn;
    char **names = mi_xcalloc(count + 1, sizeof *names);
    for (int i = 0; i < count; i++) names[i] = mi_xstrdup(n ? pm_pass_name(s->pm, i) : t[i].name);
    return names;
}

static void print_step_line(Session *s, int i) {
    const PassStep *st = pm_step_record(s->pm, i);
    int n = pm_num_passes(s->pm);
    fprintf(s->out, "step %d/%d %s", i + 1, n, pm_pass_name(s->pm, i));
    if (s->scope) fprintf(s->out, " [in %s]", s->scope);
    fprintf(s->out, ": ");
    if (!st) { fprintf(s->out, "not run\n"); return; }
    if (st->error) { fprintf(s->out, "FAILED: %s\n", st->error); return; }
    /* inside a subgraph: only what the pass did there */
    bool changed = st->changed;
    int nchanges = st->nchanges;
    char *scoped = s->scope ? scoped_changes(s, i, &changed, &nchanges) : NULL;
    const char *changes_text = scoped ? scoped : st->changes_text;
    fprintf(s->out, "%s", changed ? "changed" : "no change");
    if (nchanges) fprintf(s->out, " (%d change%s)", nchanges, nchanges == 1 ? "" : "s");
    fprintf(s->out, ", %.3f ms, ", st->ns / 1e6);
    if (st->unchecked) fprintf(s->out, "not checked");
    else if (st->input_failing) {    /* its input already failed: only what this pass did */
        if (st->failing_since) fprintf(s->out, "input failing since step %d", st->failing_since);
        else fprintf(s->out, "the loaded graph fails lint");
        fprintf(s->out, ", %s", st->same_as_input ? "lint and numerics same as its input" : "DIFFERS from its input");
    }
    else {
        fprintf(s->out, "lint %s", st->lint_ok ? "ok" : "FAILED");
        if (st->checked) fprintf(s->out, ", numerics %s", st->numerics_ok ? "ok" : "FAILED");
    }
    fputc('\n', s->out);
    if (changes_text && *changes_text) {
        const char *p = changes_text;
        while (*p) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(s->out, "    %.*s\n", len, p);
            p += len + (nl ? 1 : 0);
        }
    }
    if (st->input_failing) {           /* the failure itself was shown at its step */
        if (st->vs_input) fprintf(s->out, "    vs its input: %s\n", st->vs_input);
    } else if (!st->unchecked) {
        if (!st->lint_ok && st->lint_report) fprintf(s->out, "%s", st->lint_report);
        if (st->checked && !st->numerics_ok && st->numerics_detail)
            fprintf(s->out, "    numerics: %s\n", st->numerics_detail);
    }
    free(scoped);
}

/* Write steps [from, to) to the trace log: graph after, diff, svg. */
static void trace_steps(Session *s, int from, int to) {
    if (!s->ctx->trace) return;
    for (int i = from; i < to; i++) {
        const Graph *g = pm_graph_at(s->pm, i + 1);
        if (!g) continue;
        char *text = fx_print(g, true);
        char *diff = pm_step_diff(s->pm, i);
        char *svg = NULL;
        VizOptions vo; viz_default_options(&vo);
        vo.collapse_over = s->collapse_over;
        if (!mi_interrupted(s->ctx)) {        /* after Ctrl-C: the text and diff, no picture */
            VizGraph *vg = viz_fx(s->ctx, g, &vo);
            VizRenderer *vr = session_renderer(s);
            if (vg && vr) svg = viz_render_data(s->ctx, vr, vg, "svg", NULL);
            viz_free(vg);
            mi_clear_err(s->ctx);
        }
        /* the pass's own time as a chromium span, named as in PyTorch's logs */
        const PassStep *st = pm_step_record(s->pm, i);
        char span[200];
        snprintf(span, sizeof span, "pass.post_grad_passes.%s", pm_pass_name(s->pm, i));
        strace_span(s, span, st ? st->ns : 0);
        /* numbered like the shell's steps: minductor_pass_01_functionalize is `step 1`; the
         * step's info first (time, checks, pattern matches) for the report's pass page */
        char *info = strace_step_info(s, i), iname[300];
        snprintf(iname, sizeof iname, "minductor_pass_%02d_%s_info", i + 1, pm_pass_name(s->pm, i));
        if (info) trace_artifact(s->ctx->trace, iname, "json", info);
        free(info);
        trace_pass_step(s->ctx->trace, i + 1, pm_pass_name(s->pm, i), text, diff, svg);
        free(text); free(diff); free(svg);
    }
}

/* After a movement from cursor `old`: print the steps applied, or the failure. */
static int report_move(Session *s, int old, int rc) {
    int cur = pm_cursor(s->pm);
    if (cur > old) {
        for (int i = old; i < cur; i++) print_step_line(s, i);
        trace_steps(s, old, cur);
        session_drop_compile(s);
    }
    if (rc < 0 && mi_interrupted(s->ctx)) {   /* Ctrl-C: nothing recorded for the pass it stopped in */
        fprintf(s->out, "at step %d/%d%s%s\n", cur, pm_num_passes(s->pm), cur ? " after " : " (the loaded graph)",
                cur ? pm_pass_name(s->pm, cur - 1) : "");
        return -1;
    }
    if (rc < 0) {
        int failed = cur;          /* the pass at the cursor failed */
        if (failed < pm_num_passes(s->pm)) {
            print_step_line(s, failed);
            const PassStep *st = pm_step_record(s->pm, failed);
            char what[160];
            snprintf(what, sizeof what, "pass %s", pm_pass_name(s->pm, failed));
            strace_fail(s, what, st && st->error ? st->error : s->ctx->err.msg);
        }
        return -1;
    }
    if (cur < old) session_drop_compile(s);
    return 0;
}

int cmd_passes(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "passes");
    if (!require_pm(s)) return -1;
    int n = pm_num_passes(s->pm), cur = pm_cursor(s->pm);
    for (int i = 0; i < n; i++) {
        const PassStep *st = pm_step_record(s->pm, i);
        StepState state = pm_pass_state(s->pm, i);
        char mark = ' ';
        if (state == STEP_FAILED || (st && st->error)) mark = '!';
        else if (st && i < cur) {
            bool changed = st->changed;
            int nc;
            if (s->scope) free(scoped_changes(s, i, &changed, &nc));   /* did it change this subgraph? */
            mark = changed ? '*' : '.';
        }
        bool brk = s->break_pass && !strcmp(s->break_pass, pm_pass_name(s->pm, i));
        fprintf(s->out, "%c%c %2d %c %-44s", i == cur ? '>' : ' ', brk ? 'B' : ' ', i + 1, mark,
                pm_pass_name(s->pm, i));
        if (st && i < cur && !st->error) {
            fprintf(s->out, " %8.3f ms", st->ns / 1e6);
            if (st->unchecked) fprintf(s->out, "  not checked");
            else if (st->input_failing) {    /* one failure, shown once: later passes vs their input */
                if (st->failing_since) fprintf(s->out, "  (fails since step %d; ", st->failing_since);
                else fprintf(s->out, "  (the loaded graph fails lint; ");
                fprintf(s->out, "%s)", st->same_as_input ? "same as its input" : "DIFFERS from its input");
            }
            else fprintf(s->out, "%s%s", st->lint_ok ? "" : "  lint FAILED", st->checked && !st->numerics_ok ? "  numerics FAILED" : "");
        }
        fputc('\n', s->out);
    }
    if (cur == n) fprintf(s->out, ">   all %d passes applied\n", n);
    return 0;
}

int cmd_step(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "step");
    if (!require_pm(s)) return -1;
    int old = pm_cursor(s->pm);
    if (old >= pm_num_passes(s->pm)) { fprintf(s->out, "all passes applied\n"); return 0; }
    return report_move(s, old, pm_step(s->pm));
}

int cmd_next(Session *s, int argc, char **argv) {
    long n = 1;
    if (argc > 2) return usage_error(s, "next");
    if (argc == 2 && parse_count(s, argv[1], "N", &n) < 0) return -1;
    if (!require_pm(s)) return -1;
    int old = pm_cursor(s->pm);
    if (n > 0 && old >= pm_num_passes(s->pm)) { fprintf(s->out, "all passes applied\n"); return 0; }   /* as `step` says */
    int rc = pm_next(s->pm, (int)n);
    if (report_move(s, old, rc) < 0) return -1;
    int cur = pm_cursor(s->pm);
    if (cur - old < n && cur < pm_num_passes(s->pm))
        fprintf(s->out, "stopped at breakpoint before %s\n", pm_pass_name(s->pm, cur));
    return 0;
}

int cmd_back(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "back");
    if (!require_pm(s)) return -1;
    int old = pm_cursor(s->pm);
    if (old == 0) { fprintf(s->out, "at step 0 (the loaded graph)\n"); return 0; }
    pm_back(s->pm);
    session_drop_compile(s);
    fprintf(s->out, "back to step %d (undid %s)\n", old - 1, pm_pass_name(s->pm, old - 1));
    return 0;
}

/* A step number 0..n or a pass name (-> the state just after it). */
static int parse_step(Session *s, const char *arg, int *out) {
    int n = pm_num_passes(s->pm);
    int i = pm_find_pass(s->pm, arg);
    if (i >= 0) { *out = i + 1; return 0; }
    long v;
    if (parse_count(s, arg, "STEP", &v) < 0 || v > n) {
        mi_clear_err(s->ctx);
        return mi_err(s->ctx, "", 0, 0, "'%s' is neither a step number 0..%d nor a pass name (see 'passes')", arg, n);
    }
    *out = (int)v;
    return 0;
}

int cmd_goto(Session *s, int argc, char **argv) {
    if (argc != 2) return usage_error(s, "goto");
    if (!require_pm(s)) return -1;
    int k;
    if (parse_step(s, argv[1], &k) < 0) return -1;
    int old = pm_cursor(s->pm);
    int rc = pm_goto(s->pm, k);
    if (report_move(s, old, rc) < 0) return -1;
    fprintf(s->out, "at step %d/%d%s%s\n", k, pm_num_passes(s->pm), k ? " after " : " (the loaded graph)",
            k ? pm_pass_name(s->pm, k - 1) : "");
    return 0;
}

int cmd_run(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "run");
    if (!require_pm(s)) return -1;
    int old = pm_cursor(s->pm), n = pm_num_passes(s->pm);
    if (old >= n) { fprintf(s->out, "all passes applied\n"); return 0; }
    fprintf(s->err, "running passes %d..%d\n", old + 1, n);
    /* one step at a time, each printed when done: the progress of a long run */
    int brk = s->break_pass ? pm_find_pass(s->pm, s->break_pass) : -1;
    for (int cur = old; cur < n; cur = pm_cursor(s->pm)) {
        if (cur > old && cur == brk) break;
        fflush(s->out);
        if (report_move(s, cur, pm_step(s->pm)) < 0) return -1;
    }
    int cur = pm_cursor(s->pm);
    if (cur < n) fprintf(s->out, "stopped at breakpoint before %s\n", pm_pass_name(s->pm, cur));
    else {
        char *rep = pm_report(s->pm);
        fprintf(s->out, "%s\n", rep);
        free(rep);
    }
    return 0;
}

int cmd_break(Session *s, int argc, char **argv) {
    if (argc > 2) return usage_error(s, "break");
    if (!require_pm(s)) return -1;
    if (argc == 1) {
        fprintf(s->out, s->break_pass ? "breakpoint before %s\n" : "no breakpoint\n", s->break_pass);
        return 0;
    }
    if (!strcmp(argv[1], "off") || !strcmp(argv[1], "clear")) {
        pm_set_break(s->pm, NULL);
        free(s->break_pass); s->break_pass = NULL;
        fprintf(s->out, "breakpoint cleared\n");
        return 0;
    }
    if (pm_set_break(s->pm, argv[1]) < 0) return -1;
    free(s->break_pass);
    s->break_pass = mi_xstrdup(argv[1]);
    fprintf(s->out, "breakpoint before %s\n", argv[1]);
    return 0;
}

int cmd_patterns(Session *s, int argc, char **argv) {
    if (argc > 2) return usage_error(s, "patterns");
    if (argc == 1) {
        fprintf(s->out, s->patterns_path ? "patterns from %s\n" : "no user patterns\n", s->patterns_path);
        return 0;
    }
    char *old = s->patterns_path;
    if (!strcmp(argv[1], "off")) s->patterns_path = NULL;
    else {
        /* check the file first: a bad file changes nothing */
        PatternSet ps;
        patternset_init(&ps);
        int rc = pattern_load_file(s->ctx, &ps, argv[1]);
        int n = ps.n;
        patternset_free(&ps);
        if (rc < 0) return -1;
        s->patterns_path = mi_xstrdup(argv[1]);
        fprintf(s->out, "%d pattern%s from %s (run in pass_pattern_2)\n", n, n == 1 ? "" : "s", argv[1]);
    }
    if (session_rebuild_pm(s) < 0) {
        free(s->patterns_path);
        s->patterns_path = old;
        session_rebuild_pm(s);
        return -1;
    }
    if (!s->patterns_path) fprintf(s->out, "user patterns off\n");
    free(old);
    return 0;
}

int diff_step(Session *s, const char *arg, int *k) {
    *k = pm_cursor(s->pm);
    if (arg && parse_step(s, arg, k) < 0) return -1;
    if (*k == 0 && arg)
        return mi_err(s->ctx, "", 0, 0, "step 0 is the loaded graph: nothing to diff (steps are 1..%d)", pm_num_passes(s->pm));
    if (*k == 0) return mi_err(s->ctx, "", 0, 0, "no pass applied yet: nothing to diff (try 'step')");
    if (!pm_graph_at(s->pm, *k - 1) || !pm_graph_at(s->pm, *k))
        return mi_err(s->ctx, "", 0, 0, "pass %d (%s) has not run yet", *k, pm_pass_name(s->pm, *k - 1));
    return 0;
}

int cmd_diff(Session *s, int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "session")) return cmd_diff_session(s, argc, argv);   /* repl/cmd_diff_session.c */
    if (argc > 2) return usage_error(s, "diff");
    if (!require_pm(s)) return -1;
    int k;
    if (diff_step(s, argc == 2 ? argv[1] : NULL, &k) < 0) return -1;
    int i = k - 1;
    const PassStep *st = pm_step_record(s->pm, i);
    fprintf(s->out, "diff of step %d %s%s%s:\n", k, pm_pass_name(s->pm, i), s->scope ? " in " : "", s->scope ? s->scope : "");
    char *d = NULL;
    char *scoped = NULL;
    if (s->scope) {
        const Graph *a = graph_at_path(pm_graph_at(s->pm, i), s->scope), *z = graph_at_path(pm_graph_at(s->pm, k), s->scope);
        d = a && z ? graph_diff_text(a, z) : mi_xstrdup("");
        bool ch;
        int nc;
        scoped = scoped_changes(s, i, &ch, &nc);
    } else d = pm_step_diff(s->pm, i);
    if (!d || !*d) fprintf(s->out, "(no change to the graph text)\n");
    else { fputs(d, s->out); if (d[strlen(d) - 1] != '\n') fputc('\n', s->out); }
    free(d);
    const char *ct = scoped ? scoped : st ? st->changes_text : NULL;
    if (ct && *ct) {
        fprintf(s->out, "changes:\n");
        fputs(ct, s->out);
    }
    free(scoped);
    return 0;
}

int cmd_bisect(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "bisect");
    if (!require_pm(s)) return -1;
    if (!pm_has_inputs(s->pm)) {
        fprintf(s->err, "no inputs: making random ones for the numerics check\n");
        if (session_ensure_inputs(s) < 0) return -1;
    }
    fprintf(s->err, "bisecting %d passes...\n", pm_num_passes(s->pm));
    char *why = NULL;
    int bad = pm_bisect(s->pm, &why);
    /* passes numbered as everywhere in the shell: pass 1 is `step 1`, state k is after pass k */
    if (bad == PM_BISECT_ERROR) { free(why); return -1; }
    if (bad == PM_BISECT_LOADED)
        fprintf(s->out, "bisect: the loaded graph already fails (before pass 1): %s\n", why ? why : "");
    else if (bad < 0) fprintf(s->out, "bisect: %s\n", why ? why : "all passes clean");
    else fprintf(s->out, "bisect: pass %d %s broke it (the graph before it was clean): %s\n", bad + 1,
                 pm_pass_name(s->pm, bad), why ? why : "");
    free(why);
    return 0;
}


char **session_node_names(Session *s) {
    const Graph *g = session_view(s);
    int n = g ? g->n : 0;
    char **names = mi_xcalloc(n + 1, sizeof *names);
    for (int i = 0; i < n; i++) names[i] = mi_xstrdup(g->nodes[i]->name);
    return names;
}
