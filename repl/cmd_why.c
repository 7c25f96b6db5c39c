/* cmd_why.c — the shell's explanations and TORCH_COMPILE_DEBUG-style dump:
 *   why BUF_A BUF_B     do the two buffers fuse, and which scheduler decision (rule) said so,
 *                       naming the FX nodes each buffer computes;
 *   why-not PATTERN NODE  where PATTERN failed to match at NODE (core/fx_passes/pattern.c);
 *   dump DIR            fx_graph_readable.py, fx_graph_transformed.py, ir_pre_fusion.txt,
 *                       ir_post_fusion.txt, output_code.c and the pictures of the current graph.
 * `why` prints sched_explain() (core/scheduler/sched_explain.c), which reads the scheduler's
 * recorded decisions: the report's why page shows the same text for each decision. */
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

int cmd_why(Session *s, int argc, char **argv) {
    if (argc != 3) return usage_error(s, "why");
    const Schedule *sc = session_schedule(s);
    if (!sc) return -1;
    int a = sched_node_of(sc, argv[1]), b = sched_node_of(sc, argv[2]);
    if (a < 0 || b < 0)
        return mi_err(s->ctx, "", 0, 0, "no scheduled buffer '%s' (see `sched`: buffers buf0..., nodes op0...)", a < 0 ? argv[1] : argv[2]);
    if (a == b) return mi_err(s->ctx, "", 0, 0, "'%s' and '%s' are the same buffer", argv[1], argv[2]);
    StrBuf sb;
    sb_init(&sb);
    sched_explain(sc, a, b, &sb);        /* the same text the report's why page shows */
    fputs(sb.s ? sb.s : "", s->out);
    sb_free(&sb);
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
