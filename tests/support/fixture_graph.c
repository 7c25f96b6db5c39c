/* fixture_graph.c — see fixture_graph.h: fixture graphs with their reference outputs, and nvcc. */
#include "tests/support/fixture_graph.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <unistd.h>

Graph *tf_load_ref(MiCtx *ctx, const char *path, IValue *in, int nin, IValue **ref, int nout) {
    Graph *g = graph_load_file(ctx, path);
    if (!g) return NULL;
    ops_resolve_graph(g);
    int n = 0;
    *ref = NULL;
    if (interp_run(ctx, g, in, nin, ref, &n) == 0 && n == nout) return g;
    if (*ref) { mi_err(ctx, path, 0, 0, "the reference interpreter gave %d outputs, want %d", n, nout); interp_free_outputs(*ref, n); }
    *ref = NULL;
    graph_free(g);
    return NULL;
}

const char *tf_find_nvcc(void) {
    const char *e = getenv("MINDUCTOR_NVCC");
    if (e && *e) return access(e, X_OK) == 0 ? e : NULL;
    if (system("command -v nvcc >/dev/null 2>&1") == 0) return "nvcc";
    return access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc" : NULL;
}
