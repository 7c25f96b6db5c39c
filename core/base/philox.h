/* philox.h — Philox-4x32-10 counter-based random numbers (see philox.c). */
#ifndef PHILOX_H
#define PHILOX_H

#include <stdbool.h>
#include <stdint.h>

/* ops.rand(seed, offset) (normal: ops.randn) as the generated code computes it: Philox-4x32-10
 * of counter offset under key seed, uniform in [0, 1) from 24 bits, normal by Box-Muller.
 * Example: mi_philox_rand(0, 0, false) is 0x6627e8 / 2^24 (Random123's known answer). */
double mi_philox_rand(int64_t seed, int64_t offset, bool normal);
/* ops.randint64(seed, offset, low, high) as the generated code computes it (Inductor's
 * randint64_cpu / triton_helpers.randint64): the first two Philox words as one 64-bit value,
 * modulo high - low, plus low. */
int64_t mi_philox_randint64(int64_t seed, int64_t offset, int64_t low, int64_t high);

#endif
