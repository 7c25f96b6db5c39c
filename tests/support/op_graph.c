/* op_graph.c — one-op graphs for the op tests (see op_graph.h). */
#include "tests/support/op_graph.h"
#include "ops/ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

Graph *og_graph(MiCtx *ctx, const char *params, const char *body, const char *ret) {
    char src[8192];
    snprintf(src, sizeof src, "class G(torch.nn.Module):\n    def forward(self, %s):\n%s        return (%s,)\n", params, body, ret);
    Graph *g = fx_parse(ctx, src, strlen(src), "test.py", 1);
    if (!g) { char e[2048]; fprintf(stderr, "# parse failed: %s\n", mi_err_str(ctx, e, sizeof e)); return NULL; }
    ops_resolve_graph(g);
    return g;
}

bool og_values(const Tensor *t, const double *want, int64_t n, double tol) {
    if (!t || tensor_numel(t) != n) { fprintf(stderr, "# wrong element count\n"); return false; }
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(tensor_get_f(t, i) - want[i]) <= tol * (1 + fabs(want[i])))) {
            fprintf(stderr, "# element %lld: got %.9g want %.9g\n", (long long)i, tensor_get_f(t, i), want[i]);
            return false;
        }
    return true;
}
