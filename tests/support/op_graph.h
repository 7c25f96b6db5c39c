/* op_graph.h — one-op graphs for the op tests (test_decomp, test_ops_fallback6): a graph from
 * its parameter list and body lines, and a result compared with values derived by hand. Test
 * support only (tests/support/ -> libtestsupport.a). */
#ifndef OP_GRAPH_H
#define OP_GRAPH_H

#include "fx/graph.h"
#include "base/tensor.h"

/* `class G(torch.nn.Module): def forward(self, PARAMS): BODY return (RET,)` parsed and its ops
 * resolved; NULL (with a diagnostic line) when it does not parse. Example:
 * og_graph(ctx, "x: \"f32[3][1]cpu\"", "        r = torch.ops.aten.neg.default(x)\n", "r"). */
Graph *og_graph(MiCtx *ctx, const char *params, const char *body, const char *ret);
/* t has n elements, each within tol * (1 + |want|) of want (a diagnostic names the first that
 * is not). */
bool og_values(const Tensor *t, const double *want, int64_t n, double tol);

#endif
