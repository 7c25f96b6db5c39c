/* viz.h — pictures of the pipeline with Graphviz (cgraph builds the graph, gvc lays it out and
 * renders it): the FX graph, the IR buffer graph, fusion groups as clusters, and a pass diff.
 *
 * viz/ only reads the structures it is given. The IR and fusion pictures take a neutral
 * description (VizBufGraph) that the shell fills from the IR/scheduler, so viz/ does not depend
 * on their headers. Node ids in every picture are the FX node / buffer names (Graphviz writes
 * them in <title> in SVG); fusion groups are clusters named "cluster_<kernel>".
 *
 * Building returns a VizGraph (an Agraph_t plus nothing global); render it to "dot", "svg" or
 * "png" with viz_render_file / viz_render_data through a VizRenderer; free it with viz_free. */
#ifndef VIZ_H
#define VIZ_H

#include "fx/graph.h"

typedef struct VizGraph VizGraph;

/* How a node is drawn. */
typedef enum {
    VIZ_PLACEHOLDER, VIZ_POINTWISE, VIZ_REDUCTION, VIZ_VIEW, VIZ_EXTERN, VIZ_OUTPUT,
    VIZ_UNSUPPORTED, VIZ_OTHER, VIZ_GROUP,
    VIZ_NCLASSES
} VizClass;

/* Change of a node in a pass diff. */
typedef enum { VIZ_SAME, VIZ_ADDED, VIZ_REMOVED, VIZ_REWRITTEN, VIZ_MOVED } VizChange;

typedef struct VizOptions {
    int collapse_over;    /* collapse FX nodes into boxes when the graph has more than this many
                             nodes (viz/viz_collapse.c: by module path, kernel or op run); 0 = never */
    bool show_meta;       /* put dtype/shape in labels (default true via viz_default_options) */
    const char *rankdir;  /* "TB" (default) or "LR" */
    /* the kernel of each FX node of the graph drawn (indexed like g->nodes; NULL entries: none),
       named as `sched` names it; used to collapse graphs without "# File:" comments. May be NULL. */
    const char *const *node_kernel;
    int nnode_kernel;
} VizOptions;

void viz_default_options(VizOptions *o);

/* Class of an FX node: placeholder, output, by op flags (pointwise, reduction, view, extern),
 * unsupported (op == NULL for call_function), other. */
VizClass viz_node_class(const Node *n);
const char *viz_class_name(VizClass c);

/* A neutral buffer graph for the IR and fusion pictures. Groups are clusters "cluster_<kernel>":
 * fusion groups (the buffers of one kernel) and subgraphs (a cond branch's buffers, with its
 * kernels nested inside through `parent`). */
typedef struct VizBufNode {
    const char *name;     /* node id: the buffer name ("buf0") or input name ("arg0_1") */
    const char *label;    /* extra label lines (may be NULL): "Pointwise f32[64, 64]" */
    VizClass cls;
} VizBufNode;
/* An edge; `label` its text, `tooltip` (may be NULL) the full text SVG shows on hover. An edge
 * with a tooltip is a refused fusion (the fusion picture): its short reason in red on the edge,
 * the whole WhyNoFuse text as the SVG <title>; other labelled edges (a cond branch's operands
 * and results) are dashed. */
typedef struct VizEdge { const char *from, *to, *label, *tooltip; } VizEdge;
typedef struct VizGroup {
    const char *kernel;   /* cluster "cluster_<kernel>" */
    const char *label;
    int nmembers; const char **members;
    int parent;           /* 1 + index of the enclosing group; 0: top level */
    bool subgraph;        /* a cond branch (dashed cluster holding its buffers and kernels),
                             drawn in the IR picture too; otherwise a fusion group (kernel) */
} VizGroup;
typedef struct VizBufGraph {
    VizBufNode *nodes; int n;
    VizEdge *edges; int nedges;
    VizGroup *groups; int ngroups;   /* fusion groups (may be 0) */
} VizBufGraph;

/* Builders. NULL + ctx error on failure. */
VizGraph *viz_fx(MiCtx *ctx, const Graph *g, const VizOptions *opt);
/* IR picture: buffers and reads; subgraph groups drawn as nested dashed clusters. */
VizGraph *viz_buffers(MiCtx *ctx, const VizBufGraph *bg, const char *title, const VizOptions *opt);
/* Fusion picture: viz_buffers with every group drawn as a cluster "cluster_<kernel>" (nested
 * in its parent's cluster); above opt->collapse_over buffers, each kernel is one box. */
VizGraph *viz_fusion(MiCtx *ctx, const VizBufGraph *bg, const VizOptions *opt);
/* FX graph where nodes are grouped into clusters by an external assignment (node name ->
 * kernel name), e.g. the scheduler's kernels mapped back to FX nodes. */
VizGraph *viz_fx_clustered(MiCtx *ctx, const Graph *g, const char *const *node_kernel,
                           const VizOptions *opt);

/* Pass diff by node name: nodes only in `after` are added (green), only in `before` removed
 * (red, dashed), in both with a different target/arguments/meta rewritten (yellow); VIZ_MOVED
 * (only from the change list: same node, new position) gets a blue border.
 * `changes` (may be NULL) overrides the computed kind per name of `after`/`before` nodes:
 * an array of n names and kinds. Counts go to *nadded etc. (may be NULL). */
VizGraph *viz_diff(MiCtx *ctx, const Graph *before, const Graph *after,
                   const char *const *change_names, const VizChange *change_kinds, int nchanges,
                   const VizOptions *opt, int *nadded, int *nremoved, int *nrewritten);
/* The change kind of one node name between two graphs (the rule viz_diff uses). */
VizChange viz_node_change(const Graph *before, const Graph *after, const char *name);

/* A renderer holds one gvc context (GVC_t) for many renders. Make one per session/program and
 * keep it: graphviz 2.43's text-layout plugin caches font names across contexts, so freeing a
 * context and making another one reads freed memory. */
typedef struct VizRenderer VizRenderer;
VizRenderer *viz_renderer_new(MiCtx *ctx);
void viz_renderer_free(VizRenderer *r);

/* Render: format is "dot", "svg", "png" (or any gvc format); layout engine "dot".
 * viz_render_data returns malloc'd data (length in *len, may be NULL). */
int viz_render_file(MiCtx *ctx, VizRenderer *r, VizGraph *vg, const char *format, const char *path);
char *viz_render_data(MiCtx *ctx, VizRenderer *r, VizGraph *vg, const char *format, size_t *len);
/* The graph as DOT without layout (agwrite): fast and stable for tests. malloc'd. */
char *viz_to_dot(MiCtx *ctx, VizGraph *vg);
/* A graph read back from DOT text (viz/viz_dot.c), to render later; NULL + ctx error. */
VizGraph *viz_from_dot(MiCtx *ctx, const char *dot);
/* Format from a file name's extension (".svg" -> "svg"); NULL when unknown. */
const char *viz_format_for_path(const char *path);
int viz_node_count(const VizGraph *vg);
/* What the builder did that the reader should know, "" when nothing: "collapsed 808 of 811
 * nodes into 41 boxes by kernel (the nodes have no '# File:' comments); 'show fx --collapse 0'
 * draws every node". */
const char *viz_note(const VizGraph *vg);
/* An interactive HTML page around an SVG picture (viz/viz_html.c): search, node panel (FX line,
 * stack, IR, kernels read from fx_text_url / ir_post_fusion.txt / code_url beside the page),
 * collapse/expand clusters, legend. malloc'd. */
char *viz_svg_page(const char *svg, const char *title, const char *fx_text_url, const char *code_url);
void viz_free(VizGraph *vg);

#endif
