/* viz_fx.c — the FX graph as a picture: one Graphviz node per FX node (id = node name, shape and
 * colour by op class, label = name, op, annotation), one edge per use. Large graphs collapse by
 * module path (the "# File:" comment a node sits under) into one box per module; or nodes can be
 * grouped into clusters by an external node -> kernel assignment (fusion groups). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "viz_internal.h"

typedef struct EdgeCtx { VizGraph *vg; const char *to; const char *const *alias; const Graph *g; } EdgeCtx;

static const char *alias_of(const EdgeCtx *ec, const Node *n) {
    if (!ec->alias) return n->name;
    int i = graph_index_of(ec->g, n);
    return i >= 0 && ec->alias[i] ? ec->alias[i] : n->name;
}

static void add_use_edge(Node *arg, void *ud) {
    EdgeCtx *ec = ud;
    vizg_edge(ec->vg, alias_of(ec, arg), ec->to, NULL);
}

/* Edges from every node an FX node reads to the node (names mapped through alias, if any). */
static void add_edges(VizGraph *vg, const Graph *g, const char *const *alias) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        EdgeCtx ec = { vg, alias ? (alias[i] ? alias[i] : n->name) : n->name, alias, g };
        for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], add_use_edge, &ec);
        for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, add_use_edge, &ec);
    }
}

/* The module key of a stack: "/path/models.py:11 in seed_example" (text before ", code:"). */
static char *module_key(const Node *n) {
    const char *s = n->stack;
    if (!s || !*s) return mi_xstrdup("(no stacktrace)");
    const char *end = strstr(s, ", code:");
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char *k = mi_xcalloc(1, len + 1);
    memcpy(k, s, len);
    return k;
}

static VizGraph *collapsed(MiCtx *ctx, const Graph *g, const VizOptions *opt) {
    VizGraph *vg = vizg_new(ctx, g->class_name ? g->class_name : "graph", opt);
    if (!vg) return NULL;
    char **keys = mi_xcalloc(g->n ? g->n : 1, sizeof *keys);
    char **alias = mi_xcalloc(g->n ? g->n : 1, sizeof *alias);
    int ngroups = 0;
    char **gkeys = mi_xcalloc(g->n ? g->n : 1, sizeof *gkeys);
    int *gcount = mi_xcalloc(g->n ? g->n : 1, sizeof *gcount);
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION) {
            char *lab = viz_fx_label(n, opt->show_meta);
            vizg_node(vg, NULL, n->name, lab, viz_node_class(n));
            free(lab);
            continue;
        }
        keys[i] = module_key(n);
        int gi = 0;
        while (gi < ngroups && strcmp(gkeys[gi], keys[i]) != 0) gi++;
        if (gi == ngroups) gkeys[ngroups++] = mi_xstrdup(keys[i]);
        gcount[gi]++;
        char id[32];
        snprintf(id, sizeof id, "group_%d", gi);
        alias[i] = mi_xstrdup(id);
    }
    for (int gi = 0; gi < ngroups; gi++) {
        char id[32];
        snprintf(id, sizeof id, "group_%d", gi);
        StrBuf lab; sb_init(&lab);
        viz_escape_sb(&lab, gkeys[gi]);
        sb_printf(&lab, "\\n(%d nodes)", gcount[gi]);
        vizg_node(vg, NULL, id, lab.s, VIZ_GROUP);
        sb_free(&lab);
    }
    add_edges(vg, g, (const char *const *)alias);
    for (int i = 0; i < g->n; i++) { free(keys[i]); free(alias[i]); }
    for (int gi = 0; gi < ngroups; gi++) free(gkeys[gi]);
    free(keys); free(alias); free(gkeys); free(gcount);
    return vg;
}

VizGraph *viz_fx(MiCtx *ctx, const Graph *g, const VizOptions *opt) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    if (opt->collapse_over > 0 && g->n > opt->collapse_over) return collapsed(ctx, g, opt);
    return viz_fx_clustered(ctx, g, NULL, opt);
}

VizGraph *viz_fx_clustered(MiCtx *ctx, const Graph *g, const char *const *node_kernel,
                           const VizOptions *opt) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    VizGraph *vg = vizg_new(ctx, g->class_name ? g->class_name : "graph", opt);
    if (!vg) return NULL;
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        Agraph_t *sub = NULL;
        if (node_kernel && node_kernel[i]) sub = vizg_cluster(vg, node_kernel[i], node_kernel[i]);
        char *lab = viz_fx_label(n, opt->show_meta);
        vizg_node(vg, sub, n->name, lab, viz_node_class(n));
        free(lab);
    }
    add_edges(vg, g, NULL);
    return vg;
}
