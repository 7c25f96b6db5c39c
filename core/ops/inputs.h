/* inputs.h — a graph's inputs from .npy files, checked against its placeholders, and the
 * tensors recorded beside a graph by a real PyTorch run (the torch-cases layout):
 *     DIR/in<K>.npy        input of placeholder K (SymInt placeholders may have none: their
 *                          value is read off the tensors whose sizes name the symbol)
 *     DIR/out<K>.npy       eager output K
 *     DIR/in<K>_after.npy  input K after the run's in-place mutation
 * The shell's `inputs`, the tests and the benchmarks all load through here. Random inputs
 * are interp_random_inputs (core/ops/interp.h). */
#ifndef INPUTS_H
#define INPUTS_H

#include "ops/interp.h"

/* One .npy per placeholder (npaths == placeholders), or one per tensor placeholder (SymInts
 * then inferred). Each tensor must match its placeholder's dtype, rank and sizes (a constant
 * size exactly; a symbolic one consistently with every other input that names the symbol):
 * "PATH: input 1 ('x') should be f32[8, 16], the file holds f32[8, 15]". On success *out
 * (free with inputs_free) holds one IValue per placeholder and *n their number. */
int inputs_from_npy(MiCtx *ctx, const Graph *g, char *const *paths, int npaths, IValue **out, int *n);

/* As inputs_from_npy / inputs_from_dir, appending a "note: ...\n" line to notes (may be NULL)
 * for every input inputs_conform rounded (bf16 recorded as float32). */
int inputs_from_npy_noted(MiCtx *ctx, const Graph *g, char *const *paths, int npaths, IValue **out, int *n,
                          StrBuf *notes);
int inputs_from_dir_noted(MiCtx *ctx, const Graph *g, const char *dir, IValue **out, int *n, StrBuf *notes);

/* Make a loaded array t fit placeholder k of g the way PyTorch's input was: a float32 array
 * for a bf16/float8 placeholder (.npy has no such types; PyTorch's bf16 tensors are saved as
 * float32) is rounded to the placeholder's dtype and *note (n bytes, "" otherwise) says so in
 * one line; the result gets the placeholder's annotated strides (a transposed input stays
 * transposed, so views of it behave as in PyTorch). Returns a new reference, or NULL + ctx
 * error naming `source` when the rank or dtype cannot match. */
Tensor *inputs_conform(MiCtx *ctx, const Graph *g, int k, Tensor *t, const char *source, char *note, size_t n);

/* DIR/in<K>.npy for every placeholder K, as inputs_from_npy checks them; a tensor placeholder
 * without its file is an error naming it. The graph's tensor constants come from DIR too
 * (inputs_constants_from_dir). */
int inputs_from_dir(MiCtx *ctx, const Graph *g, const char *dir, IValue **out, int *n);

/* The tensor constants of g (get_attr nodes that are not subgraphs: self._tensor_constant0)
 * from DIR/<name>.npy into the session context (mi_const_set), checked against the node's
 * annotation; a constant without its file gets a note (its users then cannot run). Returns
 * how many were loaded, -1 with ctx error naming the file. inputs_from_dir calls it. */
int inputs_constants_from_dir(MiCtx *ctx, const Graph *g, const char *dir, StrBuf *notes);

/* The recorded tensor DIR/<stem><K><suffix>.npy, e.g. ("out", k, "") or ("in", k, "_after").
 * NULL with *missing = true (and no error) when the file does not exist; NULL + ctx error
 * when it exists but does not load. */
Tensor *recorded_tensor(MiCtx *ctx, const char *dir, const char *stem, int k, const char *suffix, bool *missing);

/* Compare a run of g with what PyTorch recorded: outs[K] with DIR/out<K>.npy and in[K] (the
 * inputs after the run) with DIR/in<K>_after.npy, where those files exist, by the numerics
 * verdict (core/ops/numerics.h: allclose(rtol, atol), else RMSE against a float64 run of g on
 * the recorded inputs; values of g's random ops statistically; bf16 recorded as f32). g may be
 * NULL (allclose only). Returns the number of tensors compared (0: nothing was recorded), or
 * -1 when one differs (why: its report line, "output 1: f32[4] MISMATCH max abs err 0.5 ...")
 * or a file does not load (ctx error). *worst (may be NULL) gets the largest max abs error. */
int recorded_check(MiCtx *ctx, const Graph *g, const char *dir, const IValue *outs, int nout, const IValue *in, int nin,
                   double rtol, double atol, double *worst, char *why, size_t wn);

/* Free inputs made here (or by interp_random_inputs). */
void inputs_free(IValue *in, int n);

#endif
