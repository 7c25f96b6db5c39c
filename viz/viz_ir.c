/* viz_ir.c — the IR buffer graph: one node per buffer or graph input (id = its name, label =
 * kind and layout as the shell describes it), one edge per read dependency; a cond branch's
 * buffers sit in a dashed cluster "cluster_sub_<branch>". The shell fills the neutral
 * VizBufGraph from the lowered IR, so this file does not depend on core/ir/ir.h; the drawing is
 * shared with the fusion picture (viz_grouped, viz/viz_fusion.c). */
#include "viz_internal.h"

VizGraph *viz_buffers(MiCtx *ctx, const VizBufGraph *bg, const char *title, const VizOptions *opt) {
    return viz_grouped(ctx, bg, title ? title : "buffers", opt, true);
}
