/* compiled_check.h — what the op tests share to check a graph end to end on their own inputs:
 * the reference interpreter's outputs, the compiled C module (compile_fx) against them, and the
 * CUDA source built by nvcc, and the graphs and tensors such tests build (tests/test_ops_sweep7.c,
 * tests/test_unseen8.c, test_unseen9.c, test_hop9.c, test_freezing.c).
 *
 *     int n = 0;
 *     IValue *o = cc_interp(ctx, g, (Tensor *[]){x}, 1, &n);
 *     ok(cc_c_agrees(ctx, g, (Tensor *[]){x}, 1, 1e-6), "compiled C = interpreter");
 *
 * Test support only (tests/support/ -> libtestsupport.a); nothing here is part of the product. */
#ifndef COMPILED_CHECK_H
#define COMPILED_CHECK_H

#include "ops/interp.h"

#define CC_MAX_IN 16   /* the most inputs cc_interp / cc_c_agrees take */

/* The interpreter's outputs of g on ins[0..n) (borrowed; at most CC_MAX_IN): interp_free_outputs them;
 * NULL with a diagnostic line when it fails. */
IValue *cc_interp(MiCtx *ctx, Graph *g, Tensor **ins, int n, int *nout);
/* The interpreter's output k of g on ins[0..n) holds want[0..nwant) within tol (og_values);
 * false (with a diagnostic line when the run fails) otherwise, or when g is NULL. */
bool cc_output_is(MiCtx *ctx, Graph *g, Tensor **ins, int n, int k, const double *want, int64_t nwant, double tol);
/* g compiled to C (compile_fx) and run on ins: every tensor output within tol (rtol = atol) of
 * the interpreter's; false with a diagnostic line when not. ins are not mutated (both runs get
 * copies). */
bool cc_c_agrees(MiCtx *ctx, Graph *g, Tensor **ins, int n, double tol);
/* g lowered, scheduled and generated for CUDA (cg_compile), the source compiled by nvcc -c
 * (tf_nvcc_compiles): 1 when it
 * builds, 0 when not (diagnosed), -1 when there is no nvcc (CI). Restores ctx->target. */
int cc_cuda_builds(MiCtx *ctx, Graph *g);
/* One TAP point (for tests that include tap.h): g's CUDA source builds with nvcc; a skip where
 * there is no nvcc (CI). */
#define CC_NVCC_POINT(ctx, name, g) do { \
        int cc_rc_ = cc_cuda_builds(ctx, g); \
        if (cc_rc_ < 0) skip(1, "nvcc not found (the CUDA source compiles on a machine with the CUDA toolkit)"); \
        else ok(cc_rc_ == 1, "%s: nvcc compiles the CUDA source", name); \
    } while (0)
/* The inputs of an exported graph (tests/tools/export_log_graphs.sh: NAME.py, and a training
 * run's backward NAME_backward.py) as the checks against the interpreter give them
 * (bench/cuda/cudabench.c graphs): a backward whose forward file lies beside it takes the saved
 * tensors from that forward on random primals, as a training step hands them over
 * (interp_random_inputs_from_forward: a sort's indices are a permutation, not the zeros of a
 * random int64 input, so a scatter.src through them writes each place once; with duplicate
 * indices CUDA keeps any one of the writes, as PyTorch documents); anything else, or a forward
 * that does not run, random inputs (interp_random_inputs). dir/name: the graph's file; *from_fw
 * says which. 0, or -1 with ctx error. */
int cc_export_inputs(MiCtx *ctx, const Graph *g, const char *dir, const char *name, IValue **in, int *nin, bool *from_fw);
/* The graph of FX text fx (file: the name its errors carry), its ops resolved; NULL with a
 * diagnostic line ("# parse: ...") when it does not parse. */
Graph *cc_parsed(MiCtx *ctx, const char *fx, const char *file);
/* cc_parsed of the FX text in the file at path (e.g. tests/fixtures/sym/symfloat_running_var.py);
 * NULL with a diagnostic line when it cannot be read or does not parse. */
Graph *cc_parsed_file(MiCtx *ctx, const char *path);
/* A tensor of dtype dt and the given sizes holding vals (row-major), or 0, 1, 2, ... when vals
 * is NULL. */
Tensor *cc_tensor(MiCtx *ctx, DType dt, int ndim, const int64_t *size, const double *vals);

#endif
