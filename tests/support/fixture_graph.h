/* fixture_graph.h — what the lowering and CUDA tests share: an FX fixture loaded, its ops
 * resolved and the reference interpreter run on the test's inputs (tests/test_lowering_gather.c,
 * tests/test_lowering_scan.c); nvcc found as the runtime finds it (tests/test_cuda_cases.c,
 * tests/test_lowering_scan.c).
 *
 *     IValue in[3], *ref = NULL;
 *     Graph *g = tf_load_ref(ctx, "tests/fixtures/lowering/scans_cuda.py", in, 3, &ref, 9);
 *     if (!ok(g != NULL, "loads, the reference runs")) diag("%s", ctx->err.msg);
 *
 * Test support only (tests/support/ -> libtestsupport.a); nothing here is part of the product. */
#ifndef FIXTURE_GRAPH_H
#define FIXTURE_GRAPH_H

#include "ops/interp.h"

/* Load `path`, resolve its ops and run the reference interpreter on in[0..nin): exactly nout
 * outputs into *ref (interp_free_outputs). NULL + ctx error (the file, the run, or "N outputs,
 * want M"); nothing to free then. */
Graph *tf_load_ref(MiCtx *ctx, const char *path, IValue *in, int nin, IValue **ref, int nout);
/* nvcc as the runtime finds it: $MINDUCTOR_NVCC, nvcc on PATH, /usr/local/cuda/bin/nvcc; NULL
 * when there is none (CI). */
const char *tf_find_nvcc(void);
/* `nvcc -c -arch=sm_90` of a CUDA source in a fresh temporary folder (removed after): 1 when it
 * compiles, 0 when it does not (nvcc's first 2000 bytes of output on stderr), -1 when there is
 * no nvcc. */
int tf_nvcc_compiles(const char *src);

#ifdef TAP_H
/* tf_nvcc_compiles as one TAP point ("NAME: nvcc compiles the CUDA source"), a skip without
 * nvcc; a NULL src fails the point. */
static inline void tf_nvcc_ok(const char *name, const char *src) {
    int r = src ? tf_nvcc_compiles(src) : 0;
    if (r < 0) skip(1, "nvcc not found (the CUDA source compiles on a machine with the CUDA toolkit)");
    else ok(r == 1, "%s: nvcc compiles the CUDA source", name);
}
#endif

#endif
