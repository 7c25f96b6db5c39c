/* codegen_split.h — split points of a pointwise segment's innermost loop
 * (core/codegen/codegen_split.c; used by codegen_kernel.c). */
#ifndef CODEGEN_SPLIT_H
#define CODEGEN_SPLIT_H

#include "ir/ir.h"

/* The values of the innermost loop variable `var` (range [0, n)) in (0, n) where some body of
 * `bodies` changes the side of a select or a clamp on it: a comparison of index_expr(var + r)
 * with an integer constant, or Min / Max(c, var + r) in an index. pts[0..min(ret, max)) ascending;
 * returns how many distinct points there are (more than max: the caller should not split).
 * Example: a cat of two [.., 16] along the last dim -> {16}. */
int cg_split_points(SymCtx *sy, const LoopBody *const *bodies, int nb, Expr *var, int64_t n, int64_t *pts, int max);

#endif
