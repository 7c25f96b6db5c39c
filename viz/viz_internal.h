/* viz_internal.h — what the viz builders share (not part of the public API): the VizGraph
 * wrapper around a cgraph Agraph_t, node/edge helpers with the per-class style table, and
 * label escaping. */
#ifndef VIZ_INTERNAL_H
#define VIZ_INTERNAL_H

#include <graphviz/cgraph.h>
#include "viz.h"

struct VizGraph {
    Agraph_t *g;
    int nnodes;
    char note[400];       /* viz_note */
};

/* A legend: one sample node per class in `present` (a bit per VizClass), in a cluster of its
 * own; the samples do not count as nodes of the picture. viz/viz_render.c */
void vizg_legend(VizGraph *vg, unsigned present);
/* Edges from every node an FX node reads to the node, names mapped through alias (indexed
 * like g->nodes; NULL entries keep the name) when given. viz/viz_fx.c */
void viz_fx_add_edges(VizGraph *vg, const Graph *g, const char *const *alias);
/* The FX picture of g with its call nodes collapsed into boxes (viz/viz_collapse.c). */
VizGraph *viz_fx_collapsed(MiCtx *ctx, const Graph *g, const VizOptions *opt);

VizGraph *vizg_new(MiCtx *ctx, const char *name, const VizOptions *opt);
/* Node `id` in `sub` (NULL = root) with a label (graphviz escapes: lines joined by "\n"). */
Agnode_t *vizg_node(VizGraph *vg, Agraph_t *sub, const char *id, const char *label, VizClass cls);
/* Edge between existing nodes (no duplicates, no self loops); NULL when either is missing. */
Agedge_t *vizg_edge(VizGraph *vg, const char *from, const char *to, const char *label);
Agraph_t *vizg_cluster(VizGraph *vg, const char *kernel, const char *label);
void vizg_mark_change(Agnode_t *n, VizChange c);
/* Append s to sb escaped for a graphviz label (backslashes, quotes, newlines -> "\n"). */
void viz_escape_sb(StrBuf *sb, const char *s);
/* Label of an FX node: name, op, annotation. malloc'd. */
char *viz_fx_label(const Node *n, bool show_meta);
void vizg_set(void *obj, const char *attr, const char *value);
/* A buffer graph with its groups as (nested) clusters; subgraphs_only: only cond branches
 * (the IR picture). viz/viz_fusion.c. */
VizGraph *viz_grouped(MiCtx *ctx, const VizBufGraph *bg, const char *title, const VizOptions *opt,
                      bool subgraphs_only);

#endif
