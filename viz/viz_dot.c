/* viz_dot.c — a picture back from its DOT text: what viz_to_dot wrote (the shell's `show`
 * without a file prints it) read again with cgraph, ready for viz_render_data. The shell's
 * transcript draws the DOT a `show` printed only when the transcript is saved, so a session
 * that never saves one pays no layout. */
#include "viz_internal.h"

static int quiet(char *msg) { (void)msg; return 0; }

/* The graph of a DOT text ("digraph ... { ... }"); NULL + ctx error when cgraph cannot read it.
 * Example: viz_from_dot(ctx, "digraph g { a -> b }") has 2 nodes. */
VizGraph *viz_from_dot(MiCtx *ctx, const char *dot) {
    agseterrf(quiet);
    Agraph_t *g = dot ? agmemread(dot) : NULL;
    if (!g) { mi_err(ctx, "", 0, 0, "graphviz: not a DOT graph"); return NULL; }
    VizGraph *vg = mi_xcalloc(1, sizeof *vg);
    vg->g = g;
    vg->nnodes = agnnodes(g);
    return vg;
}
