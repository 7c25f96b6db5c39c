/* test_viz.c — the Graphviz pictures (viz/): FX graph, collapsed FX graph, buffer graph,
 * fusion clusters and pass diff, as DOT and as SVG (checked to be well-formed XML by a small
 * tag-balance checker, and to carry the FX node names in <title> and the cluster names), plus a
 * PNG file with the PNG signature. */
#include <ctype.h>
#include <unistd.h>
#include "tap.h"
#include "fx/graph.h"
#include "ops/ops.h"
#include "viz/viz.h"

/* Minimal XML well-formedness: tags balance, quotes close, entities are &name; / &#N;.
 * Returns NULL when fine, else a static description of the first problem. */
static const char *xml_check(const char *s, char *why, size_t n) {
    const char *stack[512];
    size_t lens[512];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p == '&') {
            const char *q = p + 1;
            if (*q == '#') q++;
            while (*q && (isalnum((unsigned char)*q))) q++;
            if (*q != ';' || q == p + 1) { snprintf(why, n, "bad entity at offset %ld", (long)(p - s)); return why; }
            p = q + 1;
            continue;
        }
        if (*p != '<') { p++; continue; }
        if (!strncmp(p, "<!--", 4)) {
            const char *e = strstr(p, "-->");
            if (!e) { snprintf(why, n, "unclosed comment"); return why; }
            p = e + 3; continue;
        }
        if (!strncmp(p, "<?", 2) || !strncmp(p, "<!", 2)) {
            const char *e = strchr(p, '>');
            if (!e) { snprintf(why, n, "unclosed declaration"); return why; }
            p = e + 1; continue;
        }
        bool closing = p[1] == '/';
        const char *name = p + (closing ? 2 : 1);
        size_t len = 0;
        while (name[len] && !isspace((unsigned char)name[len]) && name[len] != '>' && name[len] != '/') len++;
        if (!len) { snprintf(why, n, "empty tag name at offset %ld", (long)(p - s)); return why; }
        const char *q = name + len;
        char quote = 0;
        while (*q && (quote || *q != '>')) {
            if (quote) { if (*q == quote) quote = 0; else if (*q == '<') { snprintf(why, n, "'<' in attribute"); return why; } }
            else if (*q == '"' || *q == '\'') quote = *q;
            q++;
        }
        if (!*q) { snprintf(why, n, "unclosed tag <%.*s", (int)len, name); return why; }
        bool self = q[-1] == '/';
        if (closing) {
            if (depth == 0 || lens[depth - 1] != len || strncmp(stack[depth - 1], name, len)) {
                snprintf(why, n, "</%.*s> does not close <%.*s>", (int)len, name,
                         depth ? (int)lens[depth - 1] : 0, depth ? stack[depth - 1] : "");
                return why;
            }
            depth--;
        } else if (!self) {
            if (depth == 0) roots++;
            if (depth == 512) { snprintf(why, n, "too deep"); return why; }
            stack[depth] = name; lens[depth] = len; depth++;
        }
        p = q + 1;
    }
    if (depth) { snprintf(why, n, "unclosed <%.*s>", (int)lens[depth - 1], stack[depth - 1]); return why; }
    if (roots != 1) { snprintf(why, n, "%d root elements", roots); return why; }
    return NULL;
}

static int count(const char *hay, const char *needle) {
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) c++;
    return c;
}

static Graph *load(MiCtx *ctx, const char *path) {
    Graph *g = fx_load_file(ctx, path);
    if (g) ops_resolve_graph(g);
    else { char b[1024]; diag("load %s: %s", path, mi_err_str(ctx, b, sizeof b)); }
    return g;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    VizRenderer *rr = viz_renderer_new(ctx);
    ok(rr != NULL, "renderer");
    char why[256];

    /* xml checker self-test */
    ok(xml_check("<a><b x=\"1\"/>t&amp;</a>", why, sizeof why) == NULL, "xml checker accepts good XML");
    ok(xml_check("<a><b></a>", why, sizeof why) != NULL, "xml checker rejects unbalanced tags");
    ok(xml_check("<a>&bad</a>", why, sizeof why) != NULL, "xml checker rejects a bare &");

    Graph *g = load(ctx, "tests/fixtures/torch-cases/cpu/seed_example/graph0/pre_post_grad.py");
    ok(g != NULL, "seed_example loads");
    if (!g) return done_testing();

    is_int(viz_node_class(graph_find(g, "arg0_1")), VIZ_PLACEHOLDER, "arg0_1 is a placeholder");
    is_int(viz_node_class(graph_find(g, "add")), VIZ_POINTWISE, "add is pointwise");
    is_int(viz_node_class(graph_find(g, "permute")), VIZ_VIEW, "permute is a view");
    is_int(viz_node_class(graph_output(g)), VIZ_OUTPUT, "output node class");
    is_str(viz_class_name(VIZ_REDUCTION), "reduction", "class name");

    VizOptions vo;
    viz_default_options(&vo);
    VizGraph *vg = viz_fx(ctx, g, &vo);
    ok(vg != NULL, "viz_fx builds");
    is_int(viz_node_count(vg), 5, "5 nodes in the picture");
    char *dot = viz_to_dot(ctx, vg);
    ok(dot && strstr(dot, "digraph"), "DOT is a digraph");
    ok(dot && strstr(dot, "permute -> add"), "DOT has edge permute -> add");
    ok(dot && strstr(dot, "select -> add"), "DOT has edge select -> add");
    ok(dot && strstr(dot, "arg0_1 -> permute"), "DOT has edge arg0_1 -> permute");
    ok(dot && strstr(dot, "aten.add.Tensor"), "labels carry the op");
    ok(dot && strstr(dot, "f32[64, 64][1, 64]cpu"), "labels carry dtype/shape/stride");
    ok(dot && strstr(dot, "shape=invhouse"), "placeholders are drawn as invhouse");
    free(dot);

    size_t len = 0;
    char *svg = viz_render_data(ctx, rr, vg, "svg", &len);
    ok(svg && len > 100, "SVG rendered (%zu bytes)", len);
    const char *bad = svg ? xml_check(svg, why, sizeof why) : "no svg";
    ok(bad == NULL, "SVG is well-formed XML%s%s", bad ? ": " : "", bad ? bad : "");
    if (svg) {
        const char *ids[] = {"arg0_1", "permute", "select", "add", "output"};
        for (int i = 0; i < 5; i++) {
            char t[64];
            snprintf(t, sizeof t, "<title>%s</title>", ids[i]);
            is_int(count(svg, t), 1, "SVG has %s", t);
        }
        ok(strstr(svg, "<title>permute&#45;&gt;add</title>") != NULL, "SVG has the edge permute->add");
    }
    free(svg);

    /* DOT and SVG and PNG files through gvRenderFilename */
    char dir[] = "/tmp/minductor_vizXXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    const char *fmts[] = {"dot", "svg", "png"};
    for (int i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/g.%s", dir, fmts[i]);
        is_str(viz_format_for_path(path), fmts[i], "format from .%s", fmts[i]);
        int rc = viz_render_file(ctx, rr, vg, fmts[i], path);
        is_int(rc, 0, "render %s file", fmts[i]);
        size_t flen = 0;
        char *data = mi_read_file(ctx, path, &flen);
        ok(data && flen > 0, "%s file is not empty", fmts[i]);
        if (data && i == 2) ok(flen > 8 && !memcmp(data, "\x89PNG\r\n\x1a\n", 8), "PNG signature");
        if (data && i == 0) ok(strstr(data, "pos=") != NULL, "rendered DOT has layout positions");
        free(data);
        unlink(path);
    }
    ok(viz_render_file(ctx, rr, vg, "svg", "/nonexistent-dir/x.svg") < 0, "unwritable path fails");
    ok(strstr(ctx->err.msg, "cannot write") != NULL, "error says why: %s", ctx->err.msg);
    mi_clear_err(ctx);
    rmdir(dir);
    is_str(viz_format_for_path("x.txt"), NULL, "unknown extension");
    viz_free(vg);

    /* collapse a larger graph by module path */
    Graph *ln = load(ctx, "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/pre_post_grad.py");
    ok(ln != NULL, "ln_gelu loads");
    if (ln) {
        VizOptions co = vo;
        co.collapse_over = 3;
        VizGraph *cg = viz_fx(ctx, ln, &co);
        char *cdot = cg ? viz_to_dot(ctx, cg) : NULL;
        ok(cdot && strstr(cdot, "group_0") && strstr(cdot, "nodes)"), "collapsed picture has module groups");
        ok(cg && viz_node_count(cg) < ln->n, "collapsed: %d boxes for %d nodes", viz_node_count(cg), ln->n);
        int ph = graph_num_placeholders(ln);
        ok(cdot && strstr(cdot, graph_placeholder(ln, 0)->name), "placeholders stay visible (%d)", ph);
        free(cdot);
        viz_free(cg);

        /* fusion-style clusters over FX nodes */
        const char **kern = calloc(ln->n, sizeof *kern);
        for (int i = 0; i < ln->n; i++)
            if (ln->nodes[i]->kind == N_CALL_FUNCTION) kern[i] = i % 2 ? "cpp_fused_0" : "cpp_fused_1";
        VizGraph *kg = viz_fx_clustered(ctx, ln, kern, &vo);
        char *ksvg = kg ? viz_render_data(ctx, rr, kg, "svg", NULL) : NULL;
        ok(ksvg && strstr(ksvg, "<title>cluster_cpp_fused_0</title>"), "SVG has cluster_cpp_fused_0");
        ok(ksvg && strstr(ksvg, "<title>cluster_cpp_fused_1</title>"), "SVG has cluster_cpp_fused_1");
        const char *kb = ksvg ? xml_check(ksvg, why, sizeof why) : "none";
        ok(kb == NULL, "clustered SVG well-formed%s%s", kb ? ": " : "", kb ? kb : "");
        free(ksvg); free(kern);
        viz_free(kg);
        graph_free(ln);
    }

    /* buffer graph and fusion groups */
    VizBufNode bn[] = {
        {"arg0_1", "InputBuffer f32[64, 64]", VIZ_PLACEHOLDER},
        {"buf0", "ComputedBuffer Pointwise f32[64, 64]", VIZ_POINTWISE},
        {"buf1", "ComputedBuffer Reduction f32[64]", VIZ_REDUCTION},
        {"buf2", "ComputedBuffer Pointwise f32[64, 64]", VIZ_POINTWISE},
    };
    VizEdge be[] = {{"arg0_1", "buf0", NULL}, {"buf0", "buf1", NULL}, {"buf1", "buf2", NULL},
                    {"buf0", "buf2", NULL}, {"buf2", "nosuch", NULL}};
    const char *m0[] = {"buf0", "buf1", "buf2"};
    VizGroup grp[] = {{"cpp_fused_add_sum_0", "vertical: buf1 reads buf0", 3, m0}};
    VizBufGraph bg = {bn, 4, be, 5, grp, 1};
    VizGraph *ig = viz_buffers(ctx, &bg, "ir", &vo);
    char *idot = ig ? viz_to_dot(ctx, ig) : NULL;
    ok(idot && strstr(idot, "buf0 -> buf1") && strstr(idot, "arg0_1 -> buf0"), "IR picture has the read edges");
    ok(idot && !strstr(idot, "nosuch"), "edges to unknown buffers are dropped");
    free(idot);
    viz_free(ig);
    VizGraph *fg = viz_fusion(ctx, &bg, &vo);
    char *fsvg = fg ? viz_render_data(ctx, rr, fg, "svg", NULL) : NULL;
    ok(fsvg && strstr(fsvg, "<title>cluster_cpp_fused_add_sum_0</title>"), "fusion SVG has the kernel cluster");
    ok(fsvg && strstr(fsvg, "<title>buf1</title>") && strstr(fsvg, "<title>arg0_1</title>"), "fusion SVG has buffer ids");
    const char *fb = fsvg ? xml_check(fsvg, why, sizeof why) : "none";
    ok(fb == NULL, "fusion SVG well-formed%s%s", fb ? ": " : "", fb ? fb : "");
    free(fsvg);
    viz_free(fg);
    /* above collapse_over buffers a kernel is one box; edges go between kernels and inputs */
    VizOptions co = vo;
    co.collapse_over = 3;
    fg = viz_fusion(ctx, &bg, &co);
    char *cdot = fg ? viz_to_dot(ctx, fg) : NULL;
    ok(cdot && strstr(cdot, "cpp_fused_add_sum_0\t[class=group,") && strstr(cdot, "arg0_1 -> cpp_fused_add_sum_0;") &&
       !strstr(cdot, "\tbuf1\t[") && !strstr(cdot, "buf0 ->") && !strstr(cdot, "cluster_"), "collapsed fusion picture: one box per kernel (%d nodes)",
       viz_node_count(fg));
    is_int(viz_node_count(fg), 2, "the input and the kernel");
    free(cdot);
    viz_free(fg);

    /* pass diff: remove select, add a node, rewrite add */
    Graph *after = graph_clone(g);
    Node *add = graph_find(after, "add"), *perm = graph_find(after, "permute");
    Node *mul = graph_insert_before(after, add, N_CALL_FUNCTION, "mul_tensor", "aten.mul.Tensor");
    Value margs[2] = {value_node(perm), value_node(perm)};
    graph_set_args(after, mul, margs, 2);
    Value aargs[2] = {value_node(perm), value_node(mul)};
    graph_set_args(after, add, aargs, 2);
    graph_remove_node(after, graph_find(after, "select"));
    is_int(viz_node_change(g, after, "select"), VIZ_REMOVED, "select removed");
    is_int(viz_node_change(g, after, "mul_tensor"), VIZ_ADDED, "mul_tensor added");
    is_int(viz_node_change(g, after, "add"), VIZ_REWRITTEN, "add rewritten");
    is_int(viz_node_change(g, after, "permute"), VIZ_SAME, "permute same");
    int na = -1, nr = -1, nw = -1;
    VizGraph *dg = viz_diff(ctx, g, after, NULL, NULL, 0, &vo, &na, &nr, &nw);
    is_int(na, 1, "diff: 1 added");
    is_int(nr, 1, "diff: 1 removed");
    is_int(nw, 1, "diff: 1 rewritten");
    char *ddot = dg ? viz_to_dot(ctx, dg) : NULL;
    ok(ddot && strstr(ddot, "#93c47d") && strstr(ddot, "#e06666") && strstr(ddot, "#ffd966"),
       "diff colours: green, red, yellow");
    ok(ddot && strstr(ddot, "select -> add"), "removed node keeps its edge");
    free(ddot);
    char *dsvg = dg ? viz_render_data(ctx, rr, dg, "svg", NULL) : NULL;
    ok(dsvg && strstr(dsvg, "<title>select</title>") && strstr(dsvg, "<title>mul_tensor</title>"),
       "diff SVG has removed and added nodes");
    free(dsvg);
    viz_free(dg);
    /* an explicit change list overrides the name rule */
    const char *names[] = {"permute"};
    VizChange kinds[] = {VIZ_REWRITTEN};
    dg = viz_diff(ctx, g, after, names, kinds, 1, &vo, &na, &nr, &nw);
    is_int(nw, 2, "override: permute counted as rewritten");
    viz_free(dg);
    graph_free(after);

    graph_free(g);
    viz_renderer_free(rr);
    mi_ctx_free(ctx);
    return done_testing();
}
