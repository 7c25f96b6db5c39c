/* viz_diff.c — a pass diff as one picture: the union of the graph before and after a pass,
 * nodes matched by name; added nodes green, removed red (dashed), rewritten (same name, other
 * target, arguments or meta) yellow. The shell may pass the pass manager's own change list,
 * which then overrides the name-based rule. */
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

typedef struct DiffEdge { VizGraph *vg; const char *to; const Graph *only_missing_in; } DiffEdge;
static void diff_edge(Node *arg, void *ud) {
    DiffEdge *de = ud;
    if (de->only_missing_in && graph_find(de->only_missing_in, arg->name)) return;
    vizg_edge(de->vg, arg->name, de->to, NULL);
}
static void node_edges(VizGraph *vg, const Node *n) {
    DiffEdge de = { vg, n->name, NULL };
    for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], diff_edge, &de);
    for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, diff_edge, &de);
}

static VizChange override(const char *name, const char *const *names, const VizChange *kinds, int n,
                          VizChange dflt) {
    for (int i = 0; i < n; i++)
        if (names[i] && strcmp(names[i], name) == 0) return kinds[i];
    return dflt;
}

VizGraph *viz_diff(MiCtx *ctx, const Graph *before, const Graph *after,
                   const char *const *change_names, const VizChange *change_kinds, int nchanges,
                   const VizOptions *opt, int *nadded, int *nremoved, int *nrewritten) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    VizGraph *vg = vizg_new(ctx, "diff", opt);
    if (!vg) return NULL;
    int counts[5] = {0};
    for (int i = 0; i < after->n; i++) {
        const Node *n = after->nodes[i];
        char *lab = viz_fx_label(n, opt->show_meta);
        Agnode_t *an = vizg_node(vg, NULL, n->name, lab, viz_node_class(n));
        free(lab);
        VizChange c = override(n->name, change_names, change_kinds, nchanges,
                               viz_node_change(before, after, n->name));
        vizg_mark_change(an, c);
        counts[c]++;
    }
    for (int i = 0; i < before->n; i++) {
        const Node *n = before->nodes[i];
        if (graph_find(after, n->name)) continue;
        char *lab = viz_fx_label(n, opt->show_meta);
        Agnode_t *an = vizg_node(vg, NULL, n->name, lab, viz_node_class(n));
        free(lab);
        vizg_mark_change(an, VIZ_REMOVED);
        counts[VIZ_REMOVED]++;
    }
    for (int i = 0; i < after->n; i++) node_edges(vg, after->nodes[i]);
    for (int i = 0; i < before->n; i++) {
        const Node *n = before->nodes[i];
        if (!graph_find(after, n->name)) node_edges(vg, n);       /* edges into removed nodes */
        else {                                                      /* edges out of removed nodes */
            DiffEdge de = { vg, n->name, after };
            for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], diff_edge, &de);
        }
    }
    if (nadded) *nadded = counts[VIZ_ADDED];
    if (nremoved) *nremoved = counts[VIZ_REMOVED];
    if (nrewritten) *nrewritten = counts[VIZ_REWRITTEN];
    return vg;
}
