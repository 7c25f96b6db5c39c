/* codegen_csum.h — cascade summation of large float32 sums in the C kernels (Inductor's
 * CascadeSumHelper; core/codegen/codegen_csum.c, used by codegen_kernel.c). */
#ifndef CODEGEN_CSUM_H
#define CODEGEN_CSUM_H

#include "ir/ir.h"

#define CG_CSUM_CHUNK 4096   /* cpp.py's chunk_size */

/* The helper's functions, for the generated module's prelude (after the Welford ones). */
extern const char cg_csum_prelude[];
/* Does body b take the helper: a float32 sum reduction over more than CG_CSUM_CHUNK elements, or
 * over a symbolic count (cpp.py need_use_acc_helper: "use acc helper if cannot get size_hint";
 * there are no size hints here)? */
bool cg_csum_needed(const LoopBody *b);
/* The helper's range (its steps) as C text (malloc'd), and *k the levels its stack array holds
 * above level 0 (from the steps when constant, else the most a 64-bit count needs). `lanes`:
 * an accumulator per lane of blocks of w lanes over the innermost var, one step per block and
 * one per scalar tail: R / I * (I / w + 1) for R reduction elements, I the innermost extent;
 * else one step per element (scalar) or per reduction iteration (a tile of columns): R. */
char *cg_csum_steps(SymCtx *sy, const LoopBody *b, bool lanes, int w, int64_t *k);
/* Accumulator a (float; w lanes: an array, 1: a scalar) under the helper of `steps` steps:
 * its stack, counters and depth declared after ind (pre); the line run once per step (step,
 * no indent: "if (++a_ci == 4096) ..."); the final value written back into a (fin, after ind):
 * the scalar, every lane (each_lane: before the lanes are combined), or lane mi_l (a tile
 * column's epilogue). */
void cg_csum_decl(StrBuf *pre, const char *ind, const char *a, int w, const char *steps, int64_t k);
void cg_csum_step(StrBuf *step, const char *a, int w);
void cg_csum_final(StrBuf *fin, const char *ind, const char *a, int w, bool each_lane);

/* The step lines (NULL: none) into out at depth (4 spaces a level). */
void cg_csum_put_steps(StrBuf *out, int depth, const char *steps);

#endif
