/* viz_diff.c — a pass diff as one picture: the union of the graph before and after a pass,
 * nodes matched by name; added nodes green, removed red (dashed), rewritten (same name, other
 * target, arguments or meta) yellow. Subgraphs (cond branches) are diffed the same way inside
 * nested clusters, their nodes named "<path>.<node>" as in the FX picture. The shell may pass
 * the pass manager's own change list (names qualified the same way), which then overrides the
 * name-based rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "viz_internal.h"

/* Text of a node's call (target, args, kwargs, annotation) for comparing across graphs. */
static char *node_sig(const Node *n) {
    StrBuf sb; sb_init(&sb);
    sb_printf(&sb, "%d %s(", (int)n->kind, n->target ? n->target : "");
    for (int i = 0; i < n->nargs; i++) { value_print_sb(&n->args[i], &sb); sb_putc(&sb, ','); }
    for (int i = 0; i < n->nkwargs; i++) {
        sb_printf(&sb, "%s=", n->kwargs[i].name);
        value_print_sb(&n->kwargs[i].v, &sb);
        sb_putc(&sb, ',');
    }
    sb_put(&sb, ") ");
    node_annotation_sb(n, &sb);
    return sb_take(&sb);
}

VizChange viz_node_change(const Graph *before, const Graph *after, const char *name) {
    Node *a = before ? graph_find(before, name) : NULL;
    Node *b = after ? graph_find(after, name) : NULL;
    if (!a && !b) return VIZ_SAME;
    if (!a) return VIZ_ADDED;
    if (!b) return VIZ_REMOVED;
    char *sa = node_sig(a), *sb = node_sig(b);
    VizChange c = strcmp(sa, sb) == 0 ? VIZ_SAME : VIZ_REWRITTEN;
    free(sa); free(sb);
    return c;
}

typedef struct DiffEdge { VizGraph *vg; const char *to; const Graph *only_missing_in; const char *prefix; } DiffEdge;
static void diff_edge(Node *arg, void *ud) {
    DiffEdge *de = ud;
    if (de->only_missing_in && graph_find(de->only_missing_in, arg->name)) return;
    char from[600];
    snprintf(from, sizeof from, "%s%s", de->prefix, arg->name);
    vizg_edge(de->vg, from, de->to, NULL);
}
static void node_edges(VizGraph *vg, const Node *n, const char *prefix) {
    char to[600];
    snprintf(to, sizeof to, "%s%s", prefix, n->name);
    DiffEdge de = { vg, to, NULL, prefix };
    for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], diff_edge, &de);
    for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, diff_edge, &de);
}

static VizChange override(const char *name, const char *const *names, const VizChange *kinds, int n,
                          VizChange dflt) {
    for (int i = 0; i < n; i++)
        if (names[i] && strcmp(names[i], name) == 0) return kinds[i];
    return dflt;
}

typedef struct DiffCtx {
    VizGraph *vg;
    const char *const *names; const VizChange *kinds; int n;
    const VizOptions *opt;
    int counts[5];
} DiffCtx;

static const Graph *sub_named(const Graph *g, const char *name) {
    for (int i = 0; g && i < g->nsubs; i++)
        if (!strcmp(g->subs[i].name, name)) return g->subs[i].g;
    return NULL;
}

static void diff_level(DiffCtx *dc, Agraph_t *where, const Graph *before, const Graph *after, const char *prefix,
                       int depth);

/* The subgraphs of either side, paired by name, as nested clusters "cluster_sub_<path>" (as in
 * the FX picture); a dashed edge links the get_attr node that names one to its first node. */
static void diff_subgraphs(DiffCtx *dc, Agraph_t *where, const Graph *before, const Graph *after, const char *prefix,
                           int depth) {
    for (int side = 0; side < 2; side++) {
        const Graph *g = side ? before : after;
        for (int i = 0; g && i < g->nsubs; i++) {
            const char *name = g->subs[i].name;
            if (side && sub_named(after, name)) continue;          /* drawn with the after side */
            const Graph *sa = sub_named(after, name), *sb = sub_named(before, name);
            char path[600], cname[700], label[700];
            snprintf(path, sizeof path, "%s%s.", prefix, name);
            snprintf(cname, sizeof cname, "cluster_sub_%s%s", prefix, name);
            snprintf(label, sizeof label, "class %s%s", name, !sa ? " (removed)" : !sb ? " (added)" : "");
            agattr(dc->vg->g, AGRAPH, (char *)"compound", (char *)"true");
            Agraph_t *cl = agsubg(where, cname, 1);
            vizg_set(cl, "label", label);
            vizg_set(cl, "style", "rounded,dashed");
            vizg_set(cl, "color", "#3c78d8");
            diff_level(dc, cl, sb, sa, path, depth + 1);
            const Graph *any = sa ? sa : sb;
            if (!any->n) continue;
            char first[700];
            snprintf(first, sizeof first, "%s%s", path, any->nodes[0]->name);
            for (int k = 0; k < g->n; k++) {
                const Node *ga = g->nodes[k];
                if (ga->kind != N_GET_ATTR || !ga->target || strcmp(ga->target, name)) continue;
                char from[700];
                snprintf(from, sizeof from, "%s%s", prefix, ga->name);
                Agedge_t *e = vizg_edge(dc->vg, from, first, "subgraph");
                if (e) { vizg_set(e, "style", "dashed"); vizg_set(e, "lhead", cname); }
            }
        }
    }
}

/* One graph level: the union of its nodes (ids prefixed with the subgraph path), marked. */
static void diff_level(DiffCtx *dc, Agraph_t *where, const Graph *before, const Graph *after, const char *prefix,
                       int depth) {
    if (depth > 16) return;
    Agraph_t *sub = where == dc->vg->g ? NULL : where;
    char id[700];
    for (int i = 0; after && i < after->n; i++) {
        const Node *n = after->nodes[i];
        snprintf(id, sizeof id, "%s%s", prefix, n->name);
        char *lab = viz_fx_label(n, dc->opt->show_meta);
        Agnode_t *an = vizg_node(dc->vg, sub, id, lab, viz_node_class(n));
        free(lab);
        VizChange c = override(id, dc->names, dc->kinds, dc->n, viz_node_change(before, after, n->name));
        vizg_mark_change(an, c);
        dc->counts[c]++;
    }
    for (int i = 0; before && i < before->n; i++) {
        const Node *n = before->nodes[i];
        if (after && graph_find(after, n->name)) continue;
        snprintf(id, sizeof id, "%s%s", prefix, n->name);
        char *lab = viz_fx_label(n, dc->opt->show_meta);
        Agnode_t *an = vizg_node(dc->vg, sub, id, lab, viz_node_class(n));
        free(lab);
        vizg_mark_change(an, VIZ_REMOVED);
        dc->counts[VIZ_REMOVED]++;
    }
    for (int i = 0; after && i < after->n; i++) node_edges(dc->vg, after->nodes[i], prefix);
    for (int i = 0; before && i < before->n; i++) {
        const Node *n = before->nodes[i];
        if (!after || !graph_find(after, n->name)) node_edges(dc->vg, n, prefix);   /* edges into removed nodes */
        else {                                                                      /* edges out of removed nodes */
            snprintf(id, sizeof id, "%s%s", prefix, n->name);
            DiffEdge de = { dc->vg, id, after, prefix };
            for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], diff_edge, &de);
        }
    }
    diff_subgraphs(dc, where, before, after, prefix, depth);
}

VizGraph *viz_diff(MiCtx *ctx, const Graph *before, const Graph *after,
                   const char *const *change_names, const VizChange *change_kinds, int nchanges,
                   const VizOptions *opt, int *nadded, int *nremoved, int *nrewritten) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    VizGraph *vg = vizg_new(ctx, "diff", opt);
    if (!vg) return NULL;
    DiffCtx dc = { vg, change_names, change_kinds, nchanges, opt, {0} };
    diff_level(&dc, vg->g, before, after, "", 0);
    if (nadded) *nadded = dc.counts[VIZ_ADDED];
    if (nremoved) *nremoved = dc.counts[VIZ_REMOVED];
    if (nrewritten) *nrewritten = dc.counts[VIZ_REWRITTEN];
    return vg;
}
