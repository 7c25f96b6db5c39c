/* viz_fx.c — the FX graph as a picture: one Graphviz node per FX node (id = node name, shape and
 * colour by op class, label = name, op, annotation), one edge per use. Large graphs collapse
 * into boxes (viz/viz_collapse.c); or nodes can be grouped into clusters by an external node ->
 * kernel assignment (fusion groups). Subgraphs of higher-order ops (cond branches) are nested
 * clusters linked from the node that names them. */
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
void viz_fx_add_edges(VizGraph *vg, const Graph *g, const char *const *alias) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        EdgeCtx ec = { vg, alias ? (alias[i] ? alias[i] : n->name) : n->name, alias, g };
        for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], add_use_edge, &ec);
        for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, add_use_edge, &ec);
    }
}

VizGraph *viz_fx(MiCtx *ctx, const Graph *g, const VizOptions *opt) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    if (opt->collapse_over > 0 && g->n > opt->collapse_over) return viz_fx_collapsed(ctx, g, opt);
    return viz_fx_clustered(ctx, g, NULL, opt);
}

/* Subgraphs (cond branches) as nested clusters "cluster_sub_<path>" labelled with their class;
 * their nodes are named "<path>.<node>" ("true_graph_0.sin"), and dashed edges link the get_attr
 * node that names a subgraph to it and its output back to each higher-order op that calls it. */
static void add_sub_edges(VizGraph *vg, const Graph *g, const char *prefix) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        char to[600];
        snprintf(to, sizeof to, "%s%s", prefix, n->name);
        for (int a = 0; a < n->nargs + n->nkwargs; a++) {
            const Value *v = a < n->nargs ? &n->args[a] : &n->kwargs[a - n->nargs].v;
            Node *stack[64];
            int ns = 0;
            if (v->kind == V_NODE) stack[ns++] = v->node;
            else if (VALUE_IS_SEQ(v))
                for (int k = 0; k < v->list.n && ns < 64; k++)
                    if (v->list.items[k].kind == V_NODE) stack[ns++] = v->list.items[k].node;
            for (int k = 0; k < ns; k++) {
                char from[600];
                snprintf(from, sizeof from, "%s%s", prefix, stack[k]->name);
                vizg_edge(vg, from, to, NULL);
            }
        }
    }
}

static void add_subgraphs(VizGraph *vg, Agraph_t *parent, const Graph *g, const char *prefix, const VizOptions *opt, int depth) {
    if (depth > 16) return;
    for (int s = 0; s < g->nsubs; s++) {
        const Graph *sg = g->subs[s].g;
        char path[600], cname[700], label[700];
        snprintf(path, sizeof path, "%s%s.", prefix, g->subs[s].name);
        snprintf(cname, sizeof cname, "cluster_sub_%s%s", prefix, g->subs[s].name);
        snprintf(label, sizeof label, "class %s", g->subs[s].name);
        Agraph_t *cl = agsubg(parent, cname, 1);
        vizg_set(cl, "label", label);
        vizg_set(cl, "style", "rounded,dashed");
        vizg_set(cl, "color", "#3c78d8");
        for (int i = 0; i < sg->n; i++) {
            char id[700];
            snprintf(id, sizeof id, "%s%s", path, sg->nodes[i]->name);
            char *lab = viz_fx_label(sg->nodes[i], opt->show_meta);
            vizg_node(vg, cl, id, lab, viz_node_class(sg->nodes[i]));
            free(lab);
        }
        add_sub_edges(vg, sg, path);
        add_subgraphs(vg, cl, sg, path, opt, depth + 1);
        /* link: get_attr node -> the subgraph's first node; its output -> each caller */
        const Node *first = sg->n ? sg->nodes[0] : NULL, *out = graph_output(sg);
        for (int i = 0; i < g->n; i++) {
            const Node *ga = g->nodes[i];
            if (ga->kind != N_GET_ATTR || !ga->target || strcmp(ga->target, g->subs[s].name)) continue;
            char from[700], to[700];
            snprintf(from, sizeof from, "%s%s", prefix, ga->name);
            snprintf(to, sizeof to, "%s%s", path, first ? first->name : "");
            Agedge_t *e = first ? vizg_edge(vg, from, to, "subgraph") : NULL;
            if (e) { vizg_set(e, "style", "dashed"); vizg_set(e, "lhead", cname); }
            for (int k = 0; out && k < g->n; k++) {
                const Node *call = g->nodes[k];
                bool uses = false;
                for (int a = 0; a < call->nargs; a++) uses |= call->args[a].kind == V_NODE && call->args[a].node == ga;
                if (!uses) continue;
                char o[700], c[700];
                snprintf(o, sizeof o, "%s%s", path, out->name);
                snprintf(c, sizeof c, "%s%s", prefix, call->name);
                Agedge_t *r = vizg_edge(vg, o, c, "result");
                if (r) { vizg_set(r, "style", "dashed"); vizg_set(r, "ltail", cname); }
            }
        }
    }
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
    viz_fx_add_edges(vg, g, NULL);
    if (g->nsubs) {
        vizg_set(vg->g, "compound", "true");
        add_subgraphs(vg, vg->g, g, "", opt, 0);
    }
    return vg;
}
