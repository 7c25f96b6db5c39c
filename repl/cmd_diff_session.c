/* cmd_diff_session.c — `diff session A.mi B.mi`: two saved sessions side by side.
 *
 * Each script (what `save session` writes, or one written by hand) is replayed into a session of
 * its own — its own context, graph, passes and schedule — so the current session is never
 * touched. Then, aligned, what differs:
 *
 *   settings   device, threads, fusion, seed, tolerance, collapse, limits, pattern file, breakpoint
 *   passes     step by step: applied or not, changed the graph or not (only the steps that differ)
 *   graph      the FX text after the applied passes, node by node (a unified diff, `-` only in A,
 *              `+` only in B)
 *   groups     fusion groups (one loop nest each) matched by the FX nodes they compute (their
 *              origins): those only one side has
 *   kernels    generated kernels matched the same way (on cpu one kernel may run several groups),
 *              each with its generated function compared (kernel names aside): a unified diff
 *              when it differs, or only in one
 *
 * and a last line counting the differences ("diff session: the two sessions agree" when none).
 * A script may only build state (load, inputs, set, patterns, break, step/next/back/goto/run,
 * lower, sched, codegen, enter/leave, and the read-only graph/passes/lint/ir/check): a line with
 * `trace`, `save`, `serve`, `report`, ... is refused before anything runs, as is an unreadable
 * or binary file; an error names the script, its line and the reason. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "fx/graph_diff.h"
#include "scheduler/scheduler.h"

static const char *const ALLOWED[] = {
    "load", "inputs", "set", "patterns", "break", "step", "next", "back", "goto", "run", "lower", "sched", "codegen",
    "enter", "leave", "graph", "passes", "lint", "ir", "check", "quit", "exit", NULL,
};

static bool allowed(const char *cmd) {
    for (int i = 0; ALLOWED[i]; i++)
        if (!strcmp(ALLOWED[i], cmd)) return true;
    return false;
}

/* The ';'-separated commands of one script line, '#' comments dropped (quotes respected, as
 * the shell's run_line splits): each malloc'd, NULL-terminated. */
static char **line_commands(const char *line, int *n) {
    char **v = mi_xcalloc(strlen(line) + 2, sizeof *v);
    StrBuf cur;
    sb_init(&cur);
    char quote = 0;
    *n = 0;
    for (const char *p = line;; p++) {
        char c = *p;
        if (quote && c == '\\' && p[1]) { sb_putc(&cur, c); sb_putc(&cur, *++p); continue; }
        if (c && quote) { if (c == quote) quote = 0; sb_putc(&cur, c); continue; }
        if (c == '\'' || c == '"') { quote = c; sb_putc(&cur, c); continue; }
        bool comment = c == '#' && (cur.len == 0 || cur.s[cur.len - 1] == ' ' || cur.s[cur.len - 1] == '\t');
        if (c == ';' || c == 0 || comment) {
            v[(*n)++] = mi_xstrdup(cur.s ? cur.s : "");
            cur.len = 0;
            if (cur.s) cur.s[0] = 0;
            if (c == 0 || comment) break;
            continue;
        }
        sb_putc(&cur, c);
    }
    sb_free(&cur);
    return v;
}

/* A session of its own (output to /dev/null, Ctrl-C shared with s), replaying `path`; NULL + an
 * error in s->ctx naming path, line and reason. */
static Session *replay(Session *s, const char *path) {
    size_t len = 0;
    char *text = mi_read_file(s->ctx, path, &len);
    if (!text) return NULL;
    if (memchr(text, 0, len)) {
        free(text);
        mi_err(s->ctx, path, 0, 0, "a binary file, not a session script (`save session FILE` writes one)");
        return NULL;
    }
    Session *x = session_new();
    x->out = fopen("/dev/null", "w");
    x->err = fopen("/dev/null", "w");
    x->errexit = true;
    x->script = path;
    x->ctx->interrupt = s->ctx->interrupt;
    int lineno = 0;
    bool failed = false, quit = false;
    for (char *line = text, *nl; line && !failed && !quit; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        lineno++;
        x->script_line = lineno;
        int nc;
        char **cmds = line_commands(line, &nc);
        for (int c = 0; c < nc && !failed && !quit; c++) {
            int argc;
            char **argv = split_words(cmds[c], &argc);
            if (argc > 0) {
                const Command *cmd = command_find(argv[0]);
                if (!cmd) {
                    const char *sug = command_suggest(argv[0]);
                    mi_err(s->ctx, path, lineno, 0, "unknown command '%s'%s%s%s", argv[0], sug ? " (did you mean '" : "",
                           sug ? sug : "", sug ? "'?)" : "");
                    failed = true;
                } else if (!allowed(argv[0])) {
                    mi_err(s->ctx, path, lineno, 0, "'%s' is not run by diff session: a compared script only builds state "
                           "(load, inputs, set, patterns, break, step, next, back, goto, run, lower, sched, codegen, enter, "
                           "leave; graph, passes, lint, ir, check)", argv[0]);
                    failed = true;
                } else if (!strcmp(argv[0], "quit") || !strcmp(argv[0], "exit")) {
                    quit = true;
                } else if (cmd->fn(x, argc, argv) < 0) {
                    char why[1200];
                    mi_err_str(x->ctx, why, sizeof why);
                    mi_err(s->ctx, path, lineno, 0, "%s: %s", argv[0], why);
                    failed = true;
                }
            }
            free_words(argv, argc);
        }
        for (int c = 0; c < nc; c++) free(cmds[c]);
        free(cmds);
    }
    free(text);
    if (!failed && !x->graph) {
        mi_err(s->ctx, path, 0, 0, "the script loads no graph (a session script starts with `load FILE`)");
        failed = true;
    }
    if (failed) {
        fclose(x->out);
        fclose(x->err);
        x->out = x->err = NULL;
        session_free(x);
        return NULL;
    }
    return x;
}

static void close_replay(Session *x) {
    if (!x) return;
    fclose(x->out);
    fclose(x->err);
    x->out = x->err = NULL;
    session_free(x);
}

/* One setting of both sessions: a row when they differ, else its name on the "same" list. */
static void setting(Session *s, const char *name, const char *a, const char *b, StrBuf *same, int *ndiff) {
    if (!strcmp(a, b)) { sb_printf(same, "%s%s %s", same->len ? ", " : "", name, a); return; }
    fprintf(s->out, "  %-22s A: %-26s B: %s\n", name, a, b);
    (*ndiff)++;
}

static void diff_settings(Session *s, Session *a, Session *b, int *ndiff) {
    fprintf(s->out, "settings:\n");
    StrBuf same;
    sb_init(&same);
    char va[1200], vb[1200];
    Session *x[2] = {a, b};
    char *v[2] = {va, vb};
#define BOTH(fmt, ...) for (int k = 0; k < 2; k++) { Session *S = x[k]; MiCtx *C = S->ctx; (void)C; snprintf(v[k], sizeof va, fmt, __VA_ARGS__); }
    BOTH("%s", C->target == MI_DEV_CUDA ? "cuda" : "cpu");
    setting(s, "device", va, vb, &same, ndiff);
    BOTH("%d", C->threads);
    setting(s, "threads", va, vb, &same, ndiff);
    BOTH("%s", C->fusion ? "on" : "off");
    setting(s, "fusion", va, vb, &same, ndiff);
    BOTH("%llu", (unsigned long long)C->seed);
    setting(s, "seed", va, vb, &same, ndiff);
    BOTH("rtol %g atol %g", S->rtol, S->atol);
    setting(s, "tolerance", va, vb, &same, ndiff);
    BOTH("%d", S->collapse_over);
    setting(s, "collapse", va, vb, &same, ndiff);
    for (const MiLimitInfo *l = mi_limit_info(); l->name; l++) {
        char nm[64];
        snprintf(nm, sizeof nm, "limit %s", l->name);
        BOTH("%d", *(const int *)((const char *)&C->limits + l->offset));
        setting(s, nm, va, vb, &same, ndiff);
    }
    BOTH("%s", S->patterns_path ? S->patterns_path : "(none)");
    setting(s, "patterns", va, vb, &same, ndiff);
    BOTH("%s", S->break_pass ? S->break_pass : "(none)");
    setting(s, "break", va, vb, &same, ndiff);
    BOTH("%s", S->load_args ? S->load_args : "(none)");
    setting(s, "load", va, vb, &same, ndiff);
    BOTH("%s", S->inputs_args ? S->inputs_args : "(none)");
    setting(s, "inputs", va, vb, &same, ndiff);
    BOTH("%s", S->scope ? S->scope : "(top)");
    setting(s, "entered", va, vb, &same, ndiff);
#undef BOTH
    fprintf(s->out, "  same: %s\n", same.s ? same.s : "(nothing)");
    sb_free(&same);
}

static const char *step_state(const PassManager *pm, int i) {
    if (!pm || i >= pm_num_passes(pm)) return "-";
    if (i >= pm_cursor(pm)) return "pending";
    const PassStep *st = pm_step_record(pm, i);
    return !st ? "applied" : st->error ? "failed" : st->changed ? "changed" : "no change";
}

static void diff_passes(Session *s, Session *a, Session *b, int *ndiff) {
    int na = a->pm ? pm_num_passes(a->pm) : 0, nb = b->pm ? pm_num_passes(b->pm) : 0, n = na > nb ? na : nb;
    fprintf(s->out, "passes: A at step %d of %d, B at step %d of %d\n", a->pm ? pm_cursor(a->pm) : 0, na,
            b->pm ? pm_cursor(b->pm) : 0, nb);
    int rows = 0;
    for (int i = 0; i < n; i++) {
        const char *pa = i < na ? pm_pass_name(a->pm, i) : "-", *pb = i < nb ? pm_pass_name(b->pm, i) : "-";
        const char *sa = step_state(a->pm, i), *sb = step_state(b->pm, i);
        if (!strcmp(pa, pb) && !strcmp(sa, sb)) continue;
        if (!rows++) fprintf(s->out, "  %-5s %-36s %-12s %s\n", "step", "pass", "A", "B");
        if (!strcmp(pa, pb)) fprintf(s->out, "  %-5d %-36s %-12s %s\n", i + 1, pa, sa, sb);
        else fprintf(s->out, "  %-5d A: %s %s | B: %s %s\n", i + 1, pa, sa, pb, sb);
    }
    if (!rows) fprintf(s->out, "  same steps, same results\n");
    *ndiff += rows;
}

static void diff_graph(Session *s, Session *a, Session *b, const char *pa, const char *pb, int *ndiff) {
    const Graph *ga = session_graph(a), *gb = session_graph(b);
    /* both in A's print form: a SymFloat printed as read in one and as the post-grad graph
     * prints it in the other is the same node */
    char *ta = fx_print(ga, false), *tb = fx_print_as(gb, ga, false);
    char *d = text_diff(ta, tb, pa, pb, 2);
    fprintf(s->out, "graph after the applied passes: A %d nodes, B %d nodes\n", ga->n, gb->n);
    if (!d || !*d) fprintf(s->out, "  same, node by node\n");
    else {
        int nl = 0;
        for (const char *p = d; *p;) {
            size_t l = strcspn(p, "\n");
            fprintf(s->out, "  %.*s\n", (int)l, p);
            if ((*p == '-' || *p == '+') && strncmp(p, "---", 3) && strncmp(p, "+++", 3)) nl++;
            p += l + (p[l] == '\n');
        }
        *ndiff += nl;
    }
    free(d);
    free(ta);
    free(tb);
}

/* A kernel of a schedule with the FX nodes it computes ("add relu", sorted) and its code. */
typedef struct DsKernel { const char *name; char *origins; char *code; bool is_extern, matched; } DsKernel;

static int cmp_str(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* Its generated function, as `codegen NAME` prints it (NULL for an extern call). */
static char *kernel_code(Session *x, const char *name) {
    char *buf = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&buf, &n);
    if (!mem) return NULL;
    FILE *keep = x->out;
    x->out = mem;
    int rc = cmd_codegen(x, 2, (char *[]){"codegen", (char *)name, NULL});
    x->out = keep;
    fclose(mem);
    mi_clear_err(x->ctx);
    if (rc < 0) { free(buf); return NULL; }
    return buf;
}

/* "add erf mul": the FX nodes the nodes[0..n) of sc compute, sorted, distinct; malloc'd. */
static char *origins_of(const Schedule *sc, const int *nodes, int n) {
    const char **names = NULL;
    int nn = 0;
    for (int i = 0; i < n; i++) {
        const Node **o;
        int no = ir_origin_nodes(sc->ir, sc->nodes[nodes[i]].buf, &o);
        names = mi_xrealloc(names, sizeof *names * (size_t)(nn + no + 1));
        for (int j = 0; j < no; j++) names[nn++] = o[j]->name;
        free(o);
    }
    qsort(names, nn, sizeof *names, cmp_str);
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    for (int i = 0; i < nn; i++)
        if (!i || strcmp(names[i], names[i - 1])) sb_printf(&sb, "%s%s", sb.len ? " " : "", names[i]);
    free(names);
    return sb_take(&sb);
}

/* The kernels of sc (with their code when `x` is given) or, with groups, its fusion groups (one
 * loop nest each; a cpp kernel may run several), each keyed by the FX nodes it computes. */
static DsKernel *kernels_of(Session *x, const Schedule *sc, bool groups, int *nk) {
    DsKernel *v = mi_xcalloc(sc->norder + sc->nkernels + 1, sizeof *v);
    int n = 0;
    for (int k = 0; k < sc->nkernels; k++) {
        const SchedKernel *kr = &sc->kernels[k];
        int *nodes = NULL, nn = 0;
        for (int p = 0; p < kr->n; p++) {
            const SchedGroup *g = &sc->groups[sc->order[kr->first + p]];
            if (groups) {
                v[n].name = kr->name;
                v[n].is_extern = kr->is_extern;
                v[n++].origins = origins_of(sc, g->nodes, g->n);
                continue;
            }
            nodes = mi_xrealloc(nodes, sizeof *nodes * (size_t)(nn + g->n));
            memcpy(nodes + nn, g->nodes, sizeof *nodes * (size_t)g->n);
            nn += g->n;
        }
        if (groups) continue;
        v[n].name = kr->name;
        v[n].origins = origins_of(sc, nodes, nn);
        v[n].is_extern = kr->is_extern;
        v[n++].code = kr->is_extern ? NULL : kernel_code(x, kr->name);
        free(nodes);
    }
    *nk = n;
    return v;
}

static void free_kernels(DsKernel *v, int n) {
    for (int i = 0; i < n; i++) { free(v[i].origins); free(v[i].code); }
    free(v);
}

/* Index of the unmatched entry of v[0..n) computing the same FX nodes as k, or -1. */
static int match(DsKernel *v, int n, const DsKernel *k) {
    for (int j = 0; j < n; j++)
        if (!v[j].matched && v[j].is_extern == k->is_extern && !strcmp(v[j].origins, k->origins)) return j;
    return -1;
}

/* The entries of v[0..n) no match was found for, on side "A" ('-') or "B" ('+'): groups as
 * "[origins] in kernel", kernels as "name  [origins]"; each counts as a difference. */
static void unmatched(Session *s, const DsKernel *v, int n, const char *side, bool groups, int *ndiff) {
    char sign = *side == 'A' ? '-' : '+';
    for (int i = 0; i < n; i++) {
        if (v[i].matched) continue;
        if (groups) fprintf(s->out, "  %c only in %s: [%s] in %s\n", sign, side, v[i].origins, v[i].name);
        else fprintf(s->out, "  %c only in %s: %s  [%s]\n", sign, side, v[i].name, v[i].origins);
        (*ndiff)++;
    }
}

/* Fusion groups of both schedules matched by origins: the ones only one side has. */
static void diff_groups(Session *s, const Schedule *sa, const Schedule *sb, int *ndiff) {
    int na, nb, same = 0;
    DsKernel *ga = kernels_of(NULL, sa, true, &na), *gb = kernels_of(NULL, sb, true, &nb);
    for (int i = 0; i < na; i++) {
        int j = match(gb, nb, &ga[i]);
        if (j < 0) continue;
        ga[i].matched = gb[j].matched = true;
        same++;
    }
    fprintf(s->out, "fusion groups (one loop nest each, matched by the FX nodes they compute): A %d, B %d, %d in both\n", na, nb, same);
    unmatched(s, ga, na, "A", true, ndiff);
    unmatched(s, gb, nb, "B", true, ndiff);
    free_kernels(ga, na);
    free_kernels(gb, nb);
}

/* text with every `from` replaced by `to` (kernel names aside when comparing code); malloc'd */
static char *renamed(const char *text, const char *from, const char *to) {
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    size_t fl = strlen(from);
    for (const char *p = text; *p;) {
        const char *q = fl ? strstr(p, from) : NULL;
        if (!q) { sb_put(&sb, p); break; }
        sb_printf(&sb, "%.*s%s", (int)(q - p), p, to);
        p = q + fl;
    }
    return sb_take(&sb);
}

static void diff_kernels(Session *s, Session *a, Session *b, const char *pa, const char *pb, int *ndiff) {
    const Schedule *sa = session_schedule(a);
    char why[1200] = "";
    if (!sa) mi_err_str(a->ctx, why, sizeof why);
    const Schedule *sb = sa ? session_schedule(b) : NULL;
    if (sa && !sb) mi_err_str(b->ctx, why, sizeof why);
    if (!sa || !sb) {
        fprintf(s->out, "kernels: not compared: %s cannot be scheduled: %s\n", !sa ? "A" : "B", why);
        mi_clear_err(a->ctx);
        mi_clear_err(b->ctx);
        (*ndiff)++;
        return;
    }
    diff_groups(s, sa, sb, ndiff);
    int na, nb;
    DsKernel *ka = kernels_of(a, sa, false, &na), *kb = kernels_of(b, sb, false, &nb);
    fprintf(s->out, "kernels and their code (matched by the FX nodes they compute): A %d, B %d\n", na, nb);
    for (int i = 0; i < na; i++) {
        int j = match(kb, nb, &ka[i]);
        if (j < 0) continue;
        ka[i].matched = kb[j].matched = true;
        bool same_name = !strcmp(ka[i].name, kb[j].name);
        char *cb = kb[j].code ? renamed(kb[j].code, kb[j].name, ka[i].name) : NULL;
        char *d = ka[i].code && cb ? text_diff(ka[i].code, cb, pa, pb, 3) : NULL;
        bool code_same = !d || !*d;
        fprintf(s->out, "  %c %s%s%s  [%s]%s\n", code_same && same_name ? '=' : '~', ka[i].name, same_name ? "" : " | ",
                same_name ? "" : kb[j].name, ka[i].origins, ka[i].is_extern ? "  extern call" : code_same ? "  code same" : "  code differs:");
        if (!code_same) {
            for (const char *p = d; *p;) {
                size_t l = strcspn(p, "\n");
                fprintf(s->out, "      %.*s\n", (int)l, p);
                p += l + (p[l] == '\n');
            }
        }
        *ndiff += !(code_same && same_name);
        free(d);
        free(cb);
    }
    unmatched(s, ka, na, "A", false, ndiff);
    unmatched(s, kb, nb, "B", false, ndiff);
    free_kernels(ka, na);
    free_kernels(kb, nb);
}

int cmd_diff_session(Session *s, int argc, char **argv) {
    if (argc != 4) return usage_error(s, "diff");
    const char *pa = argv[2], *pb = argv[3];
    fprintf(s->err, "replaying %s and %s, each in a session of its own...\n", pa, pb);
    Session *a = replay(s, pa);
    if (!a) return -1;
    Session *b = replay(s, pb);
    if (!b) { close_replay(a); return -1; }
    fprintf(s->out, "diff session A = %s, B = %s\n", pa, pb);
    int nd = 0;
    diff_settings(s, a, b, &nd);
    diff_passes(s, a, b, &nd);
    diff_graph(s, a, b, pa, pb, &nd);
    diff_kernels(s, a, b, pa, pb, &nd);
    if (nd) fprintf(s->out, "diff session: %d difference%s\n", nd, nd == 1 ? "" : "s");
    else fprintf(s->out, "diff session: the two sessions agree (settings, passes, graph, kernels and their code)\n");
    close_replay(a);
    close_replay(b);
    return mi_interrupted(s->ctx) ? mi_err_interrupted(s->ctx, "while comparing the sessions") : 0;
}
