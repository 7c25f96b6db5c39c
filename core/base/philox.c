/* philox.c — the counter-based random numbers of ops.rand / ops.randn and of attention dropout:
 * Philox-4x32-10, what Triton's tl.rand and ATen's CUDA generator use. A draw is a pure function
 * of (seed, offset), so a backward regenerates its forward's dropout mask from the seed and
 * offset the forward returned, as PyTorch's attention kernels do. Part of core/base: the IR
 * interpreter (core/ir) and the reference attention (core/ops) both call it. */
#include "base/philox.h"

#include <math.h>

/* Philox-4x32-10 (Salmon et al., SC'11; Random123's philox4x32, as at::Philox4_32 and Triton's
 * tl.rand): counter (offset, 0, 0, 0), key (seed's low and high words); the generated C and
 * CUDA carry the same function (codegen/op_overrides.c: cg_rand_src). */
static void philox(uint64_t seed, uint64_t offset, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)offset, c1 = (uint32_t)(offset >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

double mi_philox_rand(int64_t seed, int64_t offset, bool normal) {
    uint32_t o[4];
    philox((uint64_t)seed, (uint64_t)offset, o);
    float u = (float)(o[0] >> 8) * (1.0f / 16777216.0f);   /* [0, 1) in 24 bits */
    if (!normal) return u;
    float u1 = (float)((o[0] >> 8) + 1) * (1.0f / 16777216.0f), u2 = (float)(o[1] >> 8) * (1.0f / 16777216.0f);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853071795864f * u2);   /* Box-Muller */
}

int64_t mi_philox_randint64(int64_t seed, int64_t offset, int64_t low, int64_t high) {
    uint32_t o[4];
    philox((uint64_t)seed, (uint64_t)offset, o);
    uint64_t r = (uint64_t)o[0] | ((uint64_t)o[1] << 32), span = (uint64_t)(high - low);
    return span ? (int64_t)(r % span) + low : low;
}
