// pointwise_lab.cu — launch shapes of the CUDA backend's pointwise kernels, timed one by one on
// the two workloads where Triton was faster (bench/results/cuda-bench-2026-11-26T0248.log:
// pointwise_chain 0.0548 vs 0.0519 ms, seed_example 0.0382 vs 0.0360 ms; a copy_ of the same
// bytes 0.0506 / 0.0353 ms). The bodies are those codegen_cuda_kernel.c generates for
// bench/graphs/pointwise_chain.py (2.0*a + b, relu, sigmoid, tanh) and seed_example.py
// (x.permute(1, 0) + x[2, :] over 4096 x 4096, output strides (1, 4096)); variants:
//   gen        grid-stride, 256 threads, grid capped at 8 blocks per SM, one float4 per step (today)
//   full       one float4 per thread, no loop (grid covers n / 4: Triton's one block per tile)
//   unroll U   grid-stride, U float4 loads issued before any math (more bytes in flight)
//   cs         gen with streaming cache hints (__ldcs / __stcs: evict-first)
//   fastexp    gen with __expf in the sigmoid (what Triton's tl.exp lowers to: ex2.approx)
//   tile T x U seed_example as blocks of T threads over tiles of T * U float4s, the loop's condition
//              the block's (the generated shape since 2026-11-26 15:10 is tile 256 x 1)
//   hint       tile 256 x 1 with L2 / L1 cache hints on the broadcast and the streamed load
// Also a plain float4 copy of the same bytes. Each time: median of 50 after a 256 MB memset
// (L2 evicted, as cudabench's mi_cuda_time). Outputs are compared with gen's.
//   nvcc -O3 -arch=sm_90 -o plab bench/cuda/pointwise_lab.cu && ./plab
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <functional>
#include <type_traits>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
static const int64_t R = 4096, N = R * R;

template <bool FAST> __device__ __forceinline__ float chain(float a, float b) {
    float t = a * 2.0f + b;
    t = t < 0 ? 0 : t;
    float s = 1.0f / (1.0f + (FAST ? __expf(-t) : expf(-t)));
    return s - tanhf(b) * 0.5f;
}
template <bool CS> __device__ __forceinline__ float4 ld4(const float *p) { return CS ? __ldcs(reinterpret_cast<const float4 *>(p)) : *reinterpret_cast<const float4 *>(p); }
template <bool CS> __device__ __forceinline__ void st4(float *p, float4 v) { if (CS) __stcs(reinterpret_cast<float4 *>(p), v); else *reinterpret_cast<float4 *>(p) = v; }

template <int U, bool CS, bool FAST>
__global__ void __launch_bounds__(256) k_chain(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ o) {
    const int64_t nv = N / 4, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += U * step) {
        float4 x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; u++) if (v + u * step < nv) { x[u] = ld4<CS>(a + 4 * (v + u * step)); y[u] = ld4<CS>(b + 4 * (v + u * step)); }
#pragma unroll
        for (int u = 0; u < U; u++) if (v + u * step < nv) {
            float4 r = make_float4(chain<FAST>(x[u].x, y[u].x), chain<FAST>(x[u].y, y[u].y), chain<FAST>(x[u].z, y[u].z), chain<FAST>(x[u].w, y[u].w));
            st4<CS>(o + 4 * (v + u * step), r);
        }
    }
}
// out[p0*4096 + p1] (buffer order) = x[p0*4096 + p1] + x[8192 + p0], as generated
template <int U, bool CS>
__global__ void __launch_bounds__(256) k_seed(const float *__restrict__ x, float *__restrict__ o) {
    const int64_t nv = N / 4, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += U * step) {
        float4 q[U];
#pragma unroll
        for (int u = 0; u < U; u++) if (v + u * step < nv) q[u] = ld4<CS>(x + 4 * (v + u * step));
#pragma unroll
        for (int u = 0; u < U; u++) if (v + u * step < nv) {
            const float s = x[(4 * (v + u * step)) / R + 8192];
            st4<CS>(o + 4 * (v + u * step), make_float4(q[u].x + s, q[u].y + s, q[u].z + s, q[u].w + s));
        }
    }
}
// Triton's pointwise tile (XBLOCK 1024 over 4 warps: 8 elements per thread): a block of T threads
// owns tiles of T * U float4s; thread t takes float4s t, t + T, ... of its tile. SEQ: each float4
// is loaded, added and stored in turn in one unrolled loop (the generated code's shape; nvcc may
// hoist the later loads: x is const __restrict__), else all U loads first. I32: 32-bit indices.
template <int T, int U, bool SEQ, bool I32>
__global__ void __launch_bounds__(T) k_seed_tile(const float *__restrict__ x, float *o) {
    typedef typename std::conditional<I32, int, int64_t>::type ix;
    const ix nv = (ix)(N / 4);
    for (ix t0 = (ix)blockIdx.x * (T * U); t0 < nv; t0 += (ix)gridDim.x * (T * U)) {
        if (SEQ) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                const ix v = t0 + u * T + threadIdx.x;
                if (v < nv) {
                    const float4 q = *reinterpret_cast<const float4 *>(x + 4 * v);
                    const float s = x[(4 * v) / (ix)R + 8192];
                    *reinterpret_cast<float4 *>(o + 4 * v) = make_float4(q.x + s, q.y + s, q.z + s, q.w + s);
                }
            }
        } else {
            float4 q[U];
#pragma unroll
            for (int u = 0; u < U; u++) { const ix v = t0 + u * T + threadIdx.x; if (v < nv) q[u] = *reinterpret_cast<const float4 *>(x + 4 * v); }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const ix v = t0 + u * T + threadIdx.x;
                if (v < nv) { const float s = x[(4 * v) / (ix)R + 8192]; *reinterpret_cast<float4 *>(o + 4 * v) = make_float4(q[u].x + s, q[u].y + s, q[u].z + s, q[u].w + s); }
            }
        }
    }
}
// Cache hints on the generated tile 256 x 1 shape: BH the broadcast load x[8192 + row] with an L2
// evict_last policy (Inductor marks a broadcast load evict_last; Triton lowers it to createpolicy +
// ld.global.L2::cache_hint), MH the main float4 load: 1 L1::no_allocate, 2 L2 evict_first policy
// (read once).
__device__ __forceinline__ float ld_evict_last(const float *p) {
    float v;
    asm volatile("{\n\t.reg .b64 pol;\n\tcreatepolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
                 "ld.global.nc.L2::cache_hint.f32 %0, [%1], pol;\n\t}" : "=f"(v) : "l"(p));
    return v;
}
template <int MH> __device__ __forceinline__ float4 ld4_hint(const float *p) {
    float4 v;
    if (MH == 1)
        asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    else if (MH == 2)
        asm volatile("{\n\t.reg .b64 pol;\n\tcreatepolicy.fractional.L2::evict_first.b64 pol, 1.0;\n\t"
                     "ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], pol;\n\t}" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    else v = *reinterpret_cast<const float4 *>(p);
    return v;
}
template <bool BH, int MH>
__global__ void __launch_bounds__(256) k_seed_hint(const float *__restrict__ x, float *o) {
    const int64_t nv = N / 4;
    for (int64_t t0 = (int64_t)blockIdx.x * 256; t0 < nv; t0 += (int64_t)gridDim.x * 256) {
        const int64_t v = t0 + threadIdx.x;
        if (v < nv) {
            const float4 q = ld4_hint<MH>(x + 4 * v);
            const float s = BH ? ld_evict_last(x + (4 * v) / R + 8192) : x[(4 * v) / R + 8192];
            *reinterpret_cast<float4 *>(o + 4 * v) = make_float4(q.x + s, q.y + s, q.z + s, q.w + s);
        }
    }
}
__global__ void k_copy(const float4 *__restrict__ a, float4 *__restrict__ o, int64_t nv) {
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += (int64_t)gridDim.x * blockDim.x) o[v] = a[v];
}

static void *flush;
static double time_ms(std::function<void()> f) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int i = 0; i < 5; i++) f();
    std::vector<float> t;
    for (int r = 0; r < 50; r++) {
        cudaMemsetAsync(flush, 0, 256 << 20);
        cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}
static double maxdiff(const float *d1, const float *d2) {
    std::vector<float> h1(N), h2(N);
    cudaMemcpy(h1.data(), d1, N * 4, cudaMemcpyDeviceToHost); cudaMemcpy(h2.data(), d2, N * 4, cudaMemcpyDeviceToHost);
    double m = 0;
    for (int64_t i = 0; i < N; i++) m = std::max(m, (double)fabsf(h1[i] - h2[i]));
    return m;
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceProp pr; cudaGetDeviceProperties(&pr, 0);
    printf("%s, %d SMs\n", pr.name, sms);
    float *a, *b, *o, *ref;
    CK(cudaMalloc(&a, N * 4)); CK(cudaMalloc(&b, N * 4)); CK(cudaMalloc(&o, N * 4)); CK(cudaMalloc(&ref, N * 4)); CK(cudaMalloc(&flush, 256 << 20));
    std::vector<float> h(N);
    for (int64_t i = 0; i < N; i++) h[i] = (float)((i * 2654435761u) % 20000) / 2000.0f - 5.0f;
    cudaMemcpy(a, h.data(), N * 4, cudaMemcpyHostToDevice);
    for (int64_t i = 0; i < N; i++) h[i] = (float)((i * 40503u) % 20000) / 2000.0f - 5.0f;
    cudaMemcpy(b, h.data(), N * 4, cudaMemcpyHostToDevice);
    const unsigned cap8 = sms * 8, full = (unsigned)(N / 4 / 256);
    double c1 = time_ms([&] { k_copy<<<full, 256>>>((const float4 *)a, (float4 *)o, N / 4); });
    printf("  float4 copy 67 MB -> 67 MB          %8.2f us\n", c1 * 1e3);
    struct V { const char *name; std::function<void()> f; };
    std::vector<V> vc = {
        {"gen (cap 8/SM, U1)", [&] { k_chain<1, false, false><<<cap8, 256>>>(a, b, o); }},
        {"full grid", [&] { k_chain<1, false, false><<<full, 256>>>(a, b, o); }},
        {"cap 8/SM, unroll 2", [&] { k_chain<2, false, false><<<cap8, 256>>>(a, b, o); }},
        {"cap 8/SM, unroll 4", [&] { k_chain<4, false, false><<<cap8, 256>>>(a, b, o); }},
        {"full/2 grid, unroll 2", [&] { k_chain<2, false, false><<<full / 2, 256>>>(a, b, o); }},
        {"cap 8/SM, cs hints", [&] { k_chain<1, true, false><<<cap8, 256>>>(a, b, o); }},
        {"cap 8/SM, unroll 2, cs", [&] { k_chain<2, true, false><<<cap8, 256>>>(a, b, o); }},
        {"cap 8/SM, __expf", [&] { k_chain<1, false, true><<<cap8, 256>>>(a, b, o); }},
        {"unroll 2, __expf", [&] { k_chain<2, false, true><<<cap8, 256>>>(a, b, o); }},
    };
    printf("pointwise_chain (201 MB):\n");
    k_chain<1, false, false><<<cap8, 256>>>(a, b, ref);
    for (auto &v : vc) { double t = time_ms(v.f); printf("  %-28s %8.2f us  maxdiff %.3g\n", v.name, t * 1e3, maxdiff(o, ref)); }
    std::vector<V> vs = {
        {"gen (cap 8/SM, U1)", [&] { k_seed<1, false><<<cap8, 256>>>(a, o); }},
        {"full grid", [&] { k_seed<1, false><<<full, 256>>>(a, o); }},
        {"cap 8/SM, unroll 2", [&] { k_seed<2, false><<<cap8, 256>>>(a, o); }},
        {"cap 8/SM, unroll 4", [&] { k_seed<4, false><<<cap8, 256>>>(a, o); }},
        {"full/2 grid, unroll 2", [&] { k_seed<2, false><<<full / 2, 256>>>(a, o); }},
        {"cap 8/SM, cs hints", [&] { k_seed<1, true><<<cap8, 256>>>(a, o); }},
        {"cap 8/SM, unroll 2, cs", [&] { k_seed<2, true><<<cap8, 256>>>(a, o); }},
        {"tile 256 x 1 (generated)", [&] { k_seed_tile<256, 1, true, false><<<full, 256>>>(a, o); }},
        {"tile 128 x 2 seq", [&] { k_seed_tile<128, 2, true, false><<<full / 2, 128>>>(a, o); }},
        {"tile 128 x 2 loads first", [&] { k_seed_tile<128, 2, false, false><<<full / 2, 128>>>(a, o); }},
        {"tile 128 x 2 seq, i32", [&] { k_seed_tile<128, 2, true, true><<<full / 2, 128>>>(a, o); }},
        {"tile 256 x 2 seq", [&] { k_seed_tile<256, 2, true, false><<<full / 2, 256>>>(a, o); }},
        {"tile 128 x 1", [&] { k_seed_tile<128, 1, true, false><<<full * 2, 128>>>(a, o); }},
        {"tile 128 x 4 seq", [&] { k_seed_tile<128, 4, true, false><<<full / 4, 128>>>(a, o); }},
        {"tile 256 x 1 i32", [&] { k_seed_tile<256, 1, true, true><<<full, 256>>>(a, o); }},
        {"hint: none (= tile 256 x 1)", [&] { k_seed_hint<false, 0><<<full, 256>>>(a, o); }},
        {"hint: bcast evict_last", [&] { k_seed_hint<true, 0><<<full, 256>>>(a, o); }},
        {"hint: main L1 no_allocate", [&] { k_seed_hint<false, 1><<<full, 256>>>(a, o); }},
        {"hint: main L2 evict_first", [&] { k_seed_hint<false, 2><<<full, 256>>>(a, o); }},
        {"hint: both (el + no_alloc)", [&] { k_seed_hint<true, 1><<<full, 256>>>(a, o); }},
        {"hint: both (el + ef)", [&] { k_seed_hint<true, 2><<<full, 256>>>(a, o); }},
        {"float4 copy (same bytes)", [&] { k_copy<<<full, 256>>>((const float4 *)a, (float4 *)o, N / 4); }},
    };
    printf("seed_example (134 MB):\n");
    k_seed<1, false><<<cap8, 256>>>(a, ref);
    for (int pass = 0; pass < 2; pass++)   /* twice: the order's drift shows */
        for (auto &v : vs) { double t = time_ms(v.f); printf("  %-28s %8.2f us  maxdiff %.3g\n", v.name, t * 1e3, maxdiff(o, ref)); }
    return 0;
}
