/* viz_render.c — the shared half of viz/: creating Graphviz graphs, node/edge styling by class
 * (one const table), label escaping, and rendering through gvc (layout "dot", then
 * gvRenderFilename / gvRenderData) or plain agwrite for DOT without layout. The gvContext lives
 * in a VizRenderer the caller owns, so there is no global state here.
 *
 * Graphviz's dot layout cannot be stopped from outside and takes minutes on a wide graph of a
 * thousand nodes, so the layout runs in a forked child: the session waits for it, polling
 * ctx->interrupt (Ctrl-C kills the child and the call fails with "interrupted"), and reports
 * progress. The child inherits the graph and the gvc context as they are; nothing it does
 * reaches the session's memory. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <graphviz/gvc.h>
#include "viz_internal.h"
#include "ops/ops.h"

typedef struct ClassStyle { const char *name, *shape, *fill, *style; } ClassStyle;

static const ClassStyle class_styles[VIZ_NCLASSES] = {
    [VIZ_PLACEHOLDER] = {"placeholder", "invhouse", "#cfe2f3", "filled"},
    [VIZ_POINTWISE]   = {"pointwise",   "box",      "#d9ead3", "filled,rounded"},
    [VIZ_REDUCTION]   = {"reduction",   "hexagon",  "#fce5cd", "filled"},
    [VIZ_VIEW]        = {"view",        "box",      "#eeeeee", "filled,dashed"},
    [VIZ_EXTERN]      = {"extern",      "box3d",    "#d9d2e9", "filled"},
    [VIZ_OUTPUT]      = {"output",      "house",    "#cfe2f3", "filled"},
    [VIZ_UNSUPPORTED] = {"unsupported", "octagon",  "#f4cccc", "filled,bold"},
    [VIZ_OTHER]       = {"other",       "ellipse",  "#ffffff", "filled"},
    [VIZ_GROUP]       = {"group",       "folder",   "#fff2cc", "filled"},
};

const char *viz_class_name(VizClass c) {
    return c >= 0 && c < VIZ_NCLASSES ? class_styles[c].name : "?";
}

VizClass viz_node_class(const Node *n) {
    switch (n->kind) {
    case N_PLACEHOLDER: return VIZ_PLACEHOLDER;
    case N_OUTPUT: return VIZ_OUTPUT;
    case N_GET_ATTR: return VIZ_OTHER;
    case N_CALL_FUNCTION: break;
    }
    if (n->target && strcmp(n->target, "operator.getitem") == 0) return VIZ_VIEW;
    if (!n->op) return VIZ_UNSUPPORTED;
    unsigned f = n->op->flags;
    if (f & OPF_EXTERN) return VIZ_EXTERN;
    if (f & OPF_REDUCTION) return VIZ_REDUCTION;
    if (f & OPF_VIEW) return VIZ_VIEW;
    if (f & OPF_POINTWISE) return VIZ_POINTWISE;
    return VIZ_OTHER;
}

void viz_default_options(VizOptions *o) {
    memset(o, 0, sizeof *o);
    o->collapse_over = 200;
    o->show_meta = true;
    o->rankdir = "TB";
}

void vizg_set(void *obj, const char *attr, const char *value) {
    agsafeset(obj, (char *)attr, (char *)value, (char *)"");
}

static int quiet_errf(char *msg) { (void)msg; return 0; }

VizGraph *vizg_new(MiCtx *ctx, const char *name, const VizOptions *opt) {
    agseterrf(quiet_errf);
    Agraph_t *g = agopen((char *)name, Agdirected, NULL);
    if (!g) { mi_err(ctx, "", 0, 0, "graphviz: cannot create graph '%s'", name); return NULL; }
    VizGraph *vg = mi_xcalloc(1, sizeof *vg);
    vg->g = g;
    vizg_set(g, "rankdir", opt && opt->rankdir ? opt->rankdir : "TB");
    vizg_set(g, "fontname", "Helvetica");
    agattr(g, AGNODE, (char *)"fontname", (char *)"Helvetica");
    agattr(g, AGNODE, (char *)"fontsize", (char *)"10");
    agattr(g, AGEDGE, (char *)"arrowsize", (char *)"0.6");
    return vg;
}

void viz_escape_sb(StrBuf *sb, const char *s) {
    for (; s && *s; s++) {
        if (*s == '\\') sb_put(sb, "\\\\");
        else if (*s == '"') sb_put(sb, "\\\"");
        else if (*s == '\n') sb_put(sb, "\\n");
        else sb_putc(sb, *s);
    }
}

Agnode_t *vizg_node(VizGraph *vg, Agraph_t *sub, const char *id, const char *label, VizClass cls) {
    Agraph_t *where = sub ? sub : vg->g;
    Agnode_t *n = agnode(vg->g, (char *)id, 0);
    if (!n) { n = agnode(vg->g, (char *)id, 1); vg->nnodes++; }
    if (where != vg->g) agsubnode(where, n, 1);
    const ClassStyle *st = &class_styles[cls >= 0 && cls < VIZ_NCLASSES ? cls : VIZ_OTHER];
    vizg_set(n, "shape", st->shape);
    vizg_set(n, "style", st->style);
    vizg_set(n, "fillcolor", st->fill);
    vizg_set(n, "class", st->name);
    if (label) vizg_set(n, "label", label);
    return n;
}

Agedge_t *vizg_edge(VizGraph *vg, const char *from, const char *to, const char *label) {
    if (!from || !to || strcmp(from, to) == 0) return NULL;
    Agnode_t *a = agnode(vg->g, (char *)from, 0), *b = agnode(vg->g, (char *)to, 0);
    if (!a || !b) return NULL;
    Agedge_t *e = agedge(vg->g, a, b, NULL, 0);
    if (e) return e;
    e = agedge(vg->g, a, b, NULL, 1);
    if (e && label) vizg_set(e, "label", label);
    return e;
}

Agraph_t *vizg_cluster(VizGraph *vg, const char *kernel, const char *label) {
    char name[512];
    snprintf(name, sizeof name, "cluster_%s", kernel);
    Agraph_t *sub = agsubg(vg->g, name, 1);
    vizg_set(sub, "label", label ? label : kernel);
    vizg_set(sub, "style", "rounded,filled");
    vizg_set(sub, "fillcolor", "#f7f7f7");
    vizg_set(sub, "color", "#888888");
    return sub;
}

void vizg_mark_change(Agnode_t *n, VizChange c) {
    switch (c) {
    case VIZ_ADDED:     vizg_set(n, "fillcolor", "#93c47d"); vizg_set(n, "style", "filled,bold"); break;
    case VIZ_REMOVED:   vizg_set(n, "fillcolor", "#e06666"); vizg_set(n, "style", "filled,dashed"); break;
    case VIZ_REWRITTEN: vizg_set(n, "fillcolor", "#ffd966"); vizg_set(n, "style", "filled,bold"); break;
    case VIZ_MOVED:     vizg_set(n, "color", "#3c78d8"); vizg_set(n, "penwidth", "2"); break;
    case VIZ_SAME: break;
    }
    static const char *const names[] = {"same", "added", "removed", "rewritten", "moved"};
    vizg_set(n, "change", names[c]);
}

char *viz_fx_label(const Node *n, bool show_meta) {
    StrBuf sb; sb_init(&sb);
    viz_escape_sb(&sb, n->name);
    if (n->kind == N_CALL_FUNCTION || n->kind == N_GET_ATTR) {
        sb_put(&sb, "\\n");
        viz_escape_sb(&sb, n->target ? n->target : "?");
    }
    if (show_meta) {
        StrBuf ann; sb_init(&ann);
        if (node_annotation_sb(n, &ann) && ann.len) { sb_put(&sb, "\\n"); viz_escape_sb(&sb, ann.s); }
        sb_free(&ann);
    }
    return sb_take(&sb);
}

const char *viz_format_for_path(const char *path) {
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot) return NULL;
    if (!strcmp(dot, ".svg")) return "svg";
    if (!strcmp(dot, ".png")) return "png";
    if (!strcmp(dot, ".dot") || !strcmp(dot, ".gv")) return "dot";
    if (!strcmp(dot, ".pdf")) return "pdf";
    return NULL;
}

int viz_node_count(const VizGraph *vg) { return vg ? vg->nnodes : 0; }
const char *viz_note(const VizGraph *vg) { return vg ? vg->note : ""; }

void vizg_legend(VizGraph *vg, unsigned present) {
    Agraph_t *cl = agsubg(vg->g, (char *)"cluster_legend", 1);
    vizg_set(cl, "label", "legend");
    vizg_set(cl, "style", "rounded,dashed");
    vizg_set(cl, "color", "#bbbbbb");
    char id[64];
    const char *prev = NULL;
    for (int c = 0; c < VIZ_NCLASSES; c++) {
        if (!(present & (1u << c))) continue;
        snprintf(id, sizeof id, "legend_%s", class_styles[c].name);
        Agnode_t *n = vizg_node(vg, cl, id, c == VIZ_GROUP ? "collapsed box" : class_styles[c].name, (VizClass)c);
        vg->nnodes--;                            /* a sample, not a node of the graph */
        vizg_set(n, "fontsize", "9");
        if (prev) {                              /* an invisible chain keeps the samples in a column */
            Agedge_t *e = agedge(vg->g, agnode(vg->g, (char *)prev, 0), n, NULL, 1);
            if (e) vizg_set(e, "style", "invis");
        }
        prev = agnameof(n);
    }
}

struct VizRenderer { GVC_t *gvc; };

VizRenderer *viz_renderer_new(MiCtx *ctx) {
    GVC_t *gvc = gvContext();
    if (!gvc) { mi_err(ctx, "", 0, 0, "graphviz: cannot create a context"); return NULL; }
    VizRenderer *r = mi_xcalloc(1, sizeof *r);
    r->gvc = gvc;
    return r;
}

void viz_renderer_free(VizRenderer *r) {
    if (!r) return;
    gvFreeContext(r->gvc);
    free(r);
}

static int layout(MiCtx *ctx, VizRenderer *r, VizGraph *vg) {
    if (!r) return mi_err(ctx, "", 0, 0, "graphviz: no renderer");
    if (vg->nnodes > ctx->limits.draw_nodes) {     /* dot's layout grows faster than linearly */
        char hint[160];
        return mi_errf(ctx, "the picture has %d boxes, over the drawing limit: collapse it (show fx --collapse N) or "
                       "draw less (%s)", vg->nnodes, mi_limit_hint("draw_nodes", ctx->limits.draw_nodes, hint, sizeof hint));
    }
    if (gvLayout(r->gvc, vg->g, "dot") != 0)
        return mi_err(ctx, "", 0, 0, "graphviz: layout 'dot' failed");
    return 0;
}

/* Rendered in memory and written here: graphviz's own file output calls exit() when a write
 * fails (a full disk), which would end the shell and lose the session. */
int viz_render_file(MiCtx *ctx, VizRenderer *r, VizGraph *vg, const char *format, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return mi_err(ctx, path, 0, 0, "cannot write: %s", strerror(errno));
    size_t len = 0;
    char *data = viz_render_data(ctx, r, vg, format, &len);
    if (!data) { fclose(f); return -1; }
    bool ok = fwrite(data, 1, len, f) == len;
    int e = errno;
    if (fclose(f) != 0 && ok) { ok = false; e = errno; }
    free(data);
    if (!ok) return mi_err(ctx, path, 0, 0, "write failed: %s", strerror(e));
    return 0;
}

/* Layout and render in this process (what the child of render_in_child does). */
static char *render_here(MiCtx *ctx, VizRenderer *r, VizGraph *vg, const char *format, size_t *len) {
    if (layout(ctx, r, vg) < 0) return NULL;
    char *data = NULL; unsigned int n = 0;
    int rc = gvRenderData(r->gvc, vg->g, format, &data, &n);
    char *out = NULL;
    if (rc == 0 && data) {
        out = malloc((size_t)n + 1);
        if (out) { memcpy(out, data, n); out[n] = 0; if (len) *len = n; }
    }
    if (data) gvFreeRenderData(data);
    gvFreeLayout(r->gvc, vg->g);
    if (!out) mi_err(ctx, "", 0, 0, "graphviz: cannot render format '%s'", format);
    return out;
}

/* Write all of buf to fd; false on a failed write. */
static bool write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        buf += w; n -= (size_t)w;
    }
    return true;
}

/* Lay out and render in a forked child that sends back "O" + data or "E" + message through a
 * pipe. The parent reads while polling for Ctrl-C (then SIGKILL to the child) and reports
 * progress every second ("drawing: 12 s"). NULL + ctx error; falls back to render_here when
 * fork fails. */
static char *render_in_child(MiCtx *ctx, VizRenderer *r, VizGraph *vg, const char *format, size_t *len) {
    int fds[2];
    if (pipe(fds) != 0) return render_here(ctx, r, vg, format, len);
    pid_t pid = fork();
    if (pid < 0) { close(fds[0]); close(fds[1]); return render_here(ctx, r, vg, format, len); }
    if (pid == 0) {                         /* the child: draw, send, _exit (no atexit, no leak check) */
        signal(SIGINT, SIG_DFL);
        close(fds[0]);
        size_t n = 0;
        char *data = render_here(ctx, r, vg, format, &n);
        bool ok = data ? write_all(fds[1], "O", 1) && write_all(fds[1], data, n)
                       : write_all(fds[1], "E", 1) && write_all(fds[1], ctx->err.msg, strlen(ctx->err.msg));
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    StrBuf got;
    sb_init(&got);
    uint64_t t0 = mi_now_ns();
    bool interrupted = false;
    for (;;) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, 50);
        if (mi_interrupted(ctx)) { interrupted = true; break; }
        mi_progress(ctx, "drawing (seconds)", (long)((mi_now_ns() - t0) / 1000000000ull), 0);
        if (pr <= 0) continue;
        char buf[65536];
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;                  /* EOF: the child is done */
        sb_putn(&got, buf, (size_t)n);
    }
    close(fds[0]);
    if (interrupted) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (interrupted) {
        sb_free(&got);
        mi_err_interrupted(ctx, "while drawing %d nodes (graphviz stopped after %.1f s)", vg->nnodes, (mi_now_ns() - t0) * 1e-9);
        return NULL;
    }
    if (got.len == 0 || got.s[0] != 'O') {
        if (got.len > 1 && got.s[0] == 'E') mi_err(ctx, "", 0, 0, "%.*s", (int)got.len - 1, got.s + 1);
        else mi_err(ctx, "", 0, 0, "graphviz: drawing failed (%s)", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "no output");
        sb_free(&got);
        return NULL;
    }
    char *out = mi_xmalloc(got.len);
    memcpy(out, got.s + 1, got.len - 1);
    out[got.len - 1] = 0;
    if (len) *len = got.len - 1;
    sb_free(&got);
    return out;
}

char *viz_render_data(MiCtx *ctx, VizRenderer *r, VizGraph *vg, const char *format, size_t *len) {
    return render_in_child(ctx, r, vg, format, len);
}

char *viz_to_dot(MiCtx *ctx, VizGraph *vg) {
    char *buf = NULL; size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) { mi_err(ctx, "", 0, 0, "out of memory writing DOT"); return NULL; }
    agwrite(vg->g, f);
    fclose(f);
    return buf;
}

void viz_free(VizGraph *vg) {
    if (!vg) return;
    if (vg->g) agclose(vg->g);
    free(vg);
}
