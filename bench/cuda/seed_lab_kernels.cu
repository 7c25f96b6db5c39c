// seed_lab_kernels.cu — seed_example (x.permute(1, 0) + x[2, :] over 4096 x 4096: out[p0*4096+p1] =
// x[p0*4096+p1] + x[8192+p0]) written by hand in launch shapes Triton's pointwise kernel can take, and a
// float4 copy, each exported as lab_<name>(x, out, stream) for bench/cuda/harness_lab.py (issue 18,
// perf10). tTuU[el]: blocks of T threads, U float4 per thread (XBLOCK = 4 T U), the grid covering the
// 4M float4s exactly, 32-bit index, no loop or guard; el: the broadcast load L2 evict_last (Inductor
// marks it so). lab_memset: the cudaMemsetAsync flush cudabench uses.
//   nvcc -O3 -shared -Xcompiler -fPIC -arch=sm_90 -o seedk.so seed_lab_kernels.cu
#include <cstdint>
#include <cuda_runtime.h>
static const int64_t R = 4096, N = R * R;
__device__ __forceinline__ float ld_el(const float *p) {
    float v;
    asm volatile("{\n\t.reg .b64 pol;\n\tcreatepolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
                 "ld.global.L2::cache_hint.f32 %0, [%1], pol;\n\t}" : "=f"(v) : "l"(p));
    return v;
}
// T threads, U float4 per thread at t + u*T of the block's tile (Triton: XBLOCK = 4*T*U), 32-bit index, EL: evict_last bcast
template <int T, int U, bool EL>
__global__ void __launch_bounds__(T) k_tile(const float *__restrict__ x, float *__restrict__ o) {
    const int t0 = blockIdx.x * (T * U);
    float4 q[U]; float s[U];
#pragma unroll
    for (int u = 0; u < U; u++) { const int v = t0 + u * T + threadIdx.x; q[u] = *reinterpret_cast<const float4 *>(x + 4 * v); }
#pragma unroll
    for (int u = 0; u < U; u++) { const int v = t0 + u * T + threadIdx.x; const float *p = x + (4 * v) / 4096 + 8192; s[u] = EL ? ld_el(p) : *p; }
#pragma unroll
    for (int u = 0; u < U; u++) { const int v = t0 + u * T + threadIdx.x; *reinterpret_cast<float4 *>(o + 4 * v) = make_float4(q[u].x + s[u], q[u].y + s[u], q[u].z + s[u], q[u].w + s[u]); }
}
__global__ void __launch_bounds__(256) k_copy(const float4 *__restrict__ a, float4 *__restrict__ o) {
    const int v = blockIdx.x * 256 + threadIdx.x; o[v] = a[v];
}
#define NV ((unsigned)(N / 4))
#define EXP(name, T, U, EL) extern "C" int lab_##name(const float *x, float *o, void *st) { k_tile<T, U, EL><<<NV / (T * U), T, 0, (cudaStream_t)st>>>(x, o); return (int)cudaGetLastError(); }
EXP(t256u1, 256, 1, false)
EXP(t256u1el, 256, 1, true)
EXP(t128u2, 128, 2, false)
EXP(t128u2el, 128, 2, true)
EXP(t512u1, 512, 1, false)
EXP(t1024u1, 1024, 1, false)
EXP(t256u2el, 256, 2, true)
extern "C" int lab_copy4(const float *x, float *o, void *st) { k_copy<<<NV / 256, 256, 0, (cudaStream_t)st>>>((const float4 *)x, (float4 *)o); return (int)cudaGetLastError(); }
extern "C" int lab_memset(void *p, size_t n, void *st) { return (int)cudaMemsetAsync(p, 0, n, (cudaStream_t)st); }
