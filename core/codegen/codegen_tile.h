/* codegen_tile.h — the loop order of a transposing pointwise group (core/codegen/codegen_tile.c;
 * used by codegen_kernel.c's emit_group). */
#ifndef CODEGEN_TILE_H
#define CODEGEN_TILE_H

#include "scheduler/scheduler.h"

/* Is group g (outer loops p0..p(mo-1), every node pointwise over the same nv = mo + 1 vars) a
 * transposition whose innermost loop is too short to vectorize: innermost extent of 2..8 (half
 * a vector of floats at most), an access strided along it and contiguous along the var just outside? Then the
 * caller runs that outer var as the simd loop with the short one inside it, unrolled. */
bool cg_tile_transposed(const Schedule *s, const SchedGroup *g, int mo);

#endif
