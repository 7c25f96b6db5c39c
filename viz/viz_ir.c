/* viz_ir.c — the IR buffer graph: one node per buffer or graph input (id = its name, label =
 * kind and layout as the shell describes it), one edge per read dependency. The shell fills the
 * neutral VizBufGraph from the lowered IR, so this file does not depend on core/ir.h. */
#include <stdlib.h>
#include "viz_internal.h"

static char *buf_label(const VizBufNode *b) {
    StrBuf sb; sb_init(&sb);
    viz_escape_sb(&sb, b->name);
    if (b->label && *b->label) { sb_put(&sb, "\\n"); viz_escape_sb(&sb, b->label); }
    return sb_take(&sb);
}

VizGraph *viz_buffers(MiCtx *ctx, const VizBufGraph *bg, const char *title, const VizOptions *opt) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    VizGraph *vg = vizg_new(ctx, title ? title : "buffers", opt);
    if (!vg) return NULL;
    for (int i = 0; i < bg->n; i++) {
        char *lab = buf_label(&bg->nodes[i]);
        vizg_node(vg, NULL, bg->nodes[i].name, lab, bg->nodes[i].cls);
        free(lab);
    }
    for (int i = 0; i < bg->nedges; i++)
        vizg_edge(vg, bg->edges[i].from, bg->edges[i].to, bg->edges[i].label);
    return vg;
}
