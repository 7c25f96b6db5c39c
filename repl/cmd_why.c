/* cmd_why.c — the shell's explanations and TORCH_COMPILE_DEBUG-style dump:
 *   why BUF_A BUF_B     do the two buffers fuse, and which scheduler decision (rule) said so,
 *                       naming the FX nodes each buffer computes;
 *   why-not PATTERN NODE  where PATTERN failed to match at NODE (core/fx_passes/pattern.c);
 *   dump DIR            fx_graph_readable.py, fx_graph_transformed.py, ir_pre_fusion.txt,
 *                       ir_post_fusion.txt, output_code.c and the pictures of the current graph.
 * `why` reads the scheduler's decisions through its data (Schedule.decisions, groups, kernels),
 * so it explains whatever rules the scheduler applies. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "commands.h"
#include "scheduler/scheduler.h"
#include "fx_passes/pattern.h"
#include "viz/viz.h"

/* The scheduler node of a buffer ("buf3") or node name ("op3"), or -1. */
static int sched_node_of(const Schedule *sc, const char *name) {
    for (int i = 0; i < sc->nnodes; i++)
        if (!strcmp(sc->nodes[i].name, name) || (sc->nodes[i].buf && !strcmp(sc->nodes[i].buf->name, name))) return i;
    return -1;
}

/* Does a decision's group name ("op0_op3_op4", "op0_..(20 nodes).._op9") name node `op`? */
static bool group_names(const char *group, const char *op) {
    size_t n = strlen(op);
    for (const char *p = group; (p = strstr(p, op)); p++)
        if ((p == group || p[-1] == '_') && (p[n] == 0 || p[n] == '_')) return true;
    return false;
}

static void origins_line(Session *s, const Schedule *sc, int node) {
    const Buffer *b = sc->nodes[node].buf;
    const Node **v;
    int n = ir_origin_nodes(sc->ir, b, &v);
    fprintf(s->out, "  %s (%s): FX nodes", b->name, sc->nodes[node].name);
    for (int i = 0; i < n; i++) fprintf(s->out, " %s", v[i]->name);
    if (!n) fprintf(s->out, " (none: an input or a buffer made by lowering)");
    fputc('\n', s->out);
    free(v);
}

static int kernel_of(const Schedule *sc, int group) {
    for (int k = 0; k < sc->nkernels; k++)
        for (int p = 0; p < sc->kernels[k].n; p++)
            if (sc->order[sc->kernels[k].first + p] == group) return k;
    return -1;
}

const char *sched_refusal(const Schedule *sc, const Buffer *x, const Buffer *y) {
    int a = -1, b = -1;
    for (int i = 0; i < sc->nnodes; i++) {
        if (sc->nodes[i].buf == x) a = i;
        if (sc->nodes[i].buf == y) b = i;
    }
    if (a < 0 || b < 0 || sc->nodes[a].group == sc->nodes[b].group) return NULL;
    const char *why = NULL;
    for (int i = 0; i < sc->ndecisions; i++) {
        const FusionDecision *d = &sc->decisions[i];
        if (d->accepted) continue;
        if ((group_names(d->a, sc->nodes[a].name) && group_names(d->b, sc->nodes[b].name)) ||
            (group_names(d->a, sc->nodes[b].name) && group_names(d->b, sc->nodes[a].name)))
            why = d->reason;
    }
    return why;
}

int cmd_why(Session *s, int argc, char **argv) {
    if (argc != 3) return usage_error(s, "why");
    const Schedule *sc = session_schedule(s);
    if (!sc) return -1;
    int a = sched_node_of(sc, argv[1]), b = sched_node_of(sc, argv[2]);
    if (a < 0 || b < 0)
        return mi_err(s->ctx, "", 0, 0, "no scheduled buffer '%s' (see `sched`: buffers buf0..., nodes op0...)", a < 0 ? argv[1] : argv[2]);
    if (a == b) return mi_err(s->ctx, "", 0, 0, "'%s' and '%s' are the same buffer", argv[1], argv[2]);
    const SchedNode *na = &sc->nodes[a], *nb = &sc->nodes[b];
    origins_line(s, sc, a);
    origins_line(s, sc, b);
    if (na->dead || nb->dead) {
        fprintf(s->out, "%s is never used: the scheduler removed it, so it fuses with nothing\n", (na->dead ? na : nb)->buf->name);
        return 0;
    }
    int ka = kernel_of(sc, na->group), kb = kernel_of(sc, nb->group);
    /* the decisions that name both (either side) */
    const FusionDecision *last_acc = NULL, *last_rej = NULL;
    for (int i = 0; i < sc->ndecisions; i++) {
        const FusionDecision *d = &sc->decisions[i];
        bool both = (group_names(d->a, na->name) && group_names(d->b, nb->name)) ||
                    (group_names(d->a, nb->name) && group_names(d->b, na->name));
        if (!both) continue;
        if (d->accepted) last_acc = d; else last_rej = d;
    }
    if (na->group == nb->group) {
        fprintf(s->out, "fused: %s and %s are in one kernel, %s\n", na->buf->name, nb->buf->name,
                ka >= 0 ? sc->kernels[ka].name : "?");
        if (last_acc) fprintf(s->out, "decided by: fuse %s + %s (score %lld bytes): %s\n", last_acc->a, last_acc->b,
                              (long long)last_acc->score, last_acc->reason);
        else fprintf(s->out, "decided by: a fusion of larger groups (the decision that joined them names a group "
                             "abbreviated in the list, or the list was full)\n");
        return 0;
    }
    fprintf(s->out, "not fused: %s is in %s, %s in %s\n", na->buf->name, ka >= 0 ? sc->kernels[ka].name : "?", nb->buf->name,
            kb >= 0 ? sc->kernels[kb].name : "?");
    if (ka >= 0 && ka == kb)
        fprintf(s->out, "(both groups run in one cpp kernel function, one loop nest each: Inductor's CppScheduling "
                        "kernel group; they are not one loop)\n");
    const SchedGroup *ga = &sc->groups[na->group], *gb = &sc->groups[nb->group];
    if (last_rej) {
        fprintf(s->out, "refused: %s + %s (score %lld bytes): %s\n", last_rej->a, last_rej->b, (long long)last_rej->score,
                last_rej->reason);
        if (last_acc) fprintf(s->out, "(an earlier decision fused parts of them: %s + %s: %s)\n", last_acc->a, last_acc->b, last_acc->reason);
    } else if (ga->is_extern || gb->is_extern)
        fprintf(s->out, "rule: %s is an extern kernel call (%s); Inductor fuses no pointwise work into extern calls\n",
                (ga->is_extern ? na : nb)->buf->name, (ga->is_extern ? ga : gb)->kernel_name);
    else {
        /* share a buffer? then the pair was a candidate; else never scored */
        bool share = false;
        const DepSet *da = &na->deps, *db = &nb->deps;
        for (int i = 0; i < da->nreads + da->nwrites && !share; i++) {
            const Buffer *x = i < da->nreads ? da->reads[i].buf : da->writes[i - da->nreads].buf;
            for (int j = 0; j < db->nreads + db->nwrites && !share; j++)
                share = x && x == (j < db->nreads ? db->reads[j].buf : db->writes[j - db->nreads].buf);
        }
        if (!share) fprintf(s->out, "rule: they share no buffer (neither reads what the other writes, no common read), "
                                    "so the scheduler never scored the pair (score 0: Inductor's score_fusion_memory)\n");
        else fprintf(s->out, "rule: no decision on this pair was kept (the list keeps the first %d; see `sched`)\n", sc->ndecisions);
    }
    return 0;
}

int cmd_why_not(Session *s, int argc, char **argv) {
    if (argc != 3) return usage_error(s, "why-not");
    if (!session_require_graph(s)) return -1;
    Graph *g = graph_clone(session_graph(s));      /* matchers read users; never the session's graph */
    StrBuf out;
    sb_init(&out);
    Device dev = s->pm ? pm_device(s->pm) : graph_device(g);
    int rc = pattern_why_not(s->ctx, s->pm ? pm_user_patterns(s->pm) : NULL, g, dev, argv[1], argv[2], &out);
    if (rc == 0) fprintf(s->out, "%s\n", out.s ? out.s : "");
    sb_free(&out);
    graph_free(g);
    return rc;
}

/* Run a shell command with its output captured; malloc'd text or NULL (error in ctx). */
static char *capture(Session *s, int (*fn)(Session *, int, char **), int argc, char **argv) {
    char *buf = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&buf, &n);
    if (!mem) { mi_err(s->ctx, "", 0, 0, "out of memory"); return NULL; }
    FILE *keep = s->out;
    s->out = mem;
    int rc = fn(s, argc, argv);
    s->out = keep;
    fclose(mem);
    if (rc < 0) { free(buf); return NULL; }
    return buf;
}

static int put_file(Session *s, const char *dir, const char *name, const char *text) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) return mi_err(s->ctx, p, 0, 0, "cannot write");
    fputs(text ? text : "", f);
    if (fclose(f) != 0) return mi_err(s->ctx, p, 0, 0, "write failed");
    fprintf(s->out, "  %s\n", p);
    return 0;
}

int cmd_dump(Session *s, int argc, char **argv) {
    if (argc != 2) return usage_error(s, "dump");
    if (!session_require_graph(s)) return -1;
    const char *dir = argv[1];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return mi_err(s->ctx, dir, 0, 0, "cannot create: %s", strerror(errno));
    fprintf(s->out, "dump %s:\n", dir);
    char *t = fx_print(s->graph, true);                 /* the graph handed to the passes */
    int rc = put_file(s, dir, "fx_graph_readable.py", t);
    free(t);
    t = fx_print(session_graph(s), true);             /* after the applied passes */
    if (!rc) rc = put_file(s, dir, "fx_graph_transformed.py", t);
    free(t);
    if (rc) return -1;
    char *ir = capture(s, cmd_ir, 1, (char *[]){"ir", NULL});
    if (!ir) return -1;
    rc = put_file(s, dir, "ir_pre_fusion.txt", ir);
    free(ir);
    ir = rc ? NULL : capture(s, cmd_ir, 2, (char *[]){"ir", "post", NULL});
    if (!ir) return -1;
    rc = put_file(s, dir, "ir_post_fusion.txt", ir);
    free(ir);
    char *code = rc ? NULL : capture(s, cmd_codegen, 1, (char *[]){"codegen", NULL});
    if (!code) return -1;
    rc = put_file(s, dir, s->ctx->target == MI_DEV_CUDA ? "output_code.cu" : "output_code.c", code);
    free(code);
    if (rc) return -1;
    /* the pictures: SVG files and an interactive page around each (viz/viz_html.c) */
    static const char *const what[3] = {"fx", "ir", "fusion"};
    for (int k = 0; k < 3; k++) {
        char svg[1200], html[1200];
        snprintf(svg, sizeof svg, "%s/%s_graph.svg", dir, what[k]);
        char *junk = capture(s, cmd_show, 4, (char *[]){"show", (char *)what[k], "--svg", svg, NULL});
        if (!junk) return -1;
        free(junk);
        char *data = mi_read_file(s->ctx, svg, NULL);
        if (!data) return -1;
        char title[200];
        snprintf(title, sizeof title, "%s graph", what[k]);
        char *page = viz_svg_page(data, title, k == 0 ? "fx_graph_transformed.py" : k == 1 ? "ir_pre_fusion.txt" : "ir_post_fusion.txt",
                                  k == 0 ? "output_code.c" : "output_code.c");
        free(data);
        snprintf(html, sizeof html, "%s_graph.html", what[k]);
        rc = put_file(s, dir, html, page);
        free(page);
        if (rc) return -1;
        fprintf(s->out, "  %s\n", svg);
    }
    return 0;
}
