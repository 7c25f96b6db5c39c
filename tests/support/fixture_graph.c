/* fixture_graph.c — see fixture_graph.h: fixture graphs with their reference outputs, and nvcc
 * (found, and compiling a CUDA source). */
#include "tests/support/fixture_graph.h"
#include "ops/ops.h"

#include <stdio.h>
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

int tf_nvcc_compiles(const char *src) {
    const char *nvcc = tf_find_nvcc();
    if (!nvcc) return -1;
    char dir[] = "/tmp/minductor_nvccXXXXXX", cmd[1400], cu[64];
    if (!mkdtemp(dir)) return 0;
    snprintf(cu, sizeof cu, "%s/k.cu", dir);
    FILE *f = fopen(cu, "w");
    if (f) { fputs(src, f); fclose(f); }
    snprintf(cmd, sizeof cmd, "\"%s\" -c -arch=sm_90 -Wno-deprecated-gpu-targets -diag-suppress 177,550 -o %s/k.o %s > %s/log 2>&1; rc=$?; "
             "[ $rc -ne 0 ] && head -c 2000 %s/log >&2; rm -rf %s; exit $rc", nvcc, dir, cu, dir, dir, dir);
    return f && system(cmd) == 0;
}
