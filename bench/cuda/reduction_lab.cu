// reduction_lab.cu — kernel shapes for bench/graphs/reductions.py on the GPU, timed one by one
// (issue 18: CUDA reductions at >= 80% of copy bandwidth). It includes the CUDA that minductor
// generates for the workload (GEN, made by bench/cuda/build.sh: `minductor --device cuda -c
// 'load bench/graphs/reductions.py; codegen'`) and times, after a 256 MB memset that evicts L2,
// its two kernels alone and together, against hand-written variants of each:
//   colsum: x.sum(dim=0) over 4096 rows of 1024 columns
//     gen       8 columns x 128 reduction lanes per block (1024 threads, 128 blocks)
//     split     32 columns (float4 per thread) x 32 lanes per block, rows split S ways, partial
//               sums reduced in split order by the last block of each column tile (deterministic)
//   rows: var_mean + amax + normalize + add the column sums, one row of 1024 per ...
//     gen       block of 128 threads, 8 scalar slots per thread, block reductions
//     warp      warp (32 lanes x 8 float4 each), 8 rows per block, shuffles only, no barrier
// Every variant's output is compared with the generated kernels' (max abs difference printed).
//   nvcc -O3 -arch=sm_90 -DGEN='"gen.cu"' -o lab reduction_lab.cu && ./lab
#include GEN
#include <vector>
#include <algorithm>
#include <functional>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
static const int R = 4096, C = 1024;

__global__ void colsum_split(const float4 *__restrict__ x, float *__restrict__ part, float *__restrict__ out,
                             unsigned *__restrict__ done, int rows, int cols4, int S) {
    // blockDim (8, 32): tx -> a float4 of columns, ty -> reduction lane; blockIdx.x: 32-column tile, y: split
    __shared__ float4 sh[32][8];
    __shared__ bool last;
    int c4 = blockIdx.x * 8 + threadIdx.x, per = (rows + S - 1) / S, r0 = blockIdx.y * per, r1 = min(rows, r0 + per);
    float4 a = make_float4(0, 0, 0, 0);
#pragma unroll 8
    for (int r = r0 + threadIdx.y; r < r1; r += 32) {
        float4 v = x[(size_t)r * cols4 + c4];
        a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
    }
    sh[threadIdx.y][threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y == 0) {
        float4 t = sh[0][threadIdx.x];
        for (int k = 1; k < 32; k++) { float4 v = sh[k][threadIdx.x]; t.x += v.x; t.y += v.y; t.z += v.z; t.w += v.w; }
        reinterpret_cast<float4 *>(part)[(size_t)blockIdx.y * cols4 + c4] = t;
        __threadfence();
    }
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) last = atomicAdd(&done[blockIdx.x], 1u) == (unsigned)S - 1;
    __syncthreads();
    if (!last) return;
    int t = threadIdx.y * 8 + threadIdx.x;   // 256 threads, 32 columns of this tile
    if (t < 32) {
        int c = blockIdx.x * 32 + t;
        float s = 0;
        for (int k = 0; k < S; k++) s += __ldcg(&part[(size_t)k * cols4 * 4 + c]);
        out[c] = s;
    }
    if (t == 0) done[blockIdx.x] = 0;
}

__device__ __forceinline__ float wsum(float v) { for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o); return v; }
__device__ __forceinline__ float wmax(float v) { for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(0xffffffffu, v, o); v = (w != w || w > v) ? w : v; } return v; }

template <int WPB>
__global__ void __launch_bounds__(WPB * 32) rows_warp(const float4 *__restrict__ x, const float4 *__restrict__ cs, float4 *__restrict__ out, int rows) {
    int lane = threadIdx.x & 31;
    for (int row = blockIdx.x * WPB + (threadIdx.x >> 5); row < rows; row += gridDim.x * WPB) {
        float4 v[8];
        float s = 0, mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            v[j] = x[(size_t)row * 256 + lane + 32 * j];
            s += v[j].x + v[j].y + v[j].z + v[j].w;
        }
        s = wsum(s);
        float mean = s / 1024.0f, q = 0;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            float a = v[j].x - mean, b = v[j].y - mean, c = v[j].z - mean, d = v[j].w - mean;
            q += a * a + b * b + c * c + d * d;
            float m4 = fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w));
            mx = (m4 != m4 || m4 > mx) ? m4 : mx;
        }
        q = wsum(q);
        mx = wmax(mx);
        float inv = 1.0f / sqrtf(q / 1023.0f + 1e-5f);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            float4 c = cs[lane + 32 * j], o;
            o.x = (v[j].x - mean) * inv + mx + c.x; o.y = (v[j].y - mean) * inv + mx + c.y;
            o.z = (v[j].z - mean) * inv + mx + c.z; o.w = (v[j].w - mean) * inv + mx + c.w;
            out[(size_t)row * 256 + lane + 32 * j] = o;
        }
    }
}

// the same with scalar loads, lane + 32 * j (what the generator's slots do, one warp per row)
template <int WPB>
__global__ void __launch_bounds__(WPB * 32) rows_warp_scalar(const float *__restrict__ x, const float *__restrict__ cs, float *__restrict__ out, int rows) {
    int lane = threadIdx.x & 31;
    for (int row = blockIdx.x * WPB + (threadIdx.x >> 5); row < rows; row += gridDim.x * WPB) {
        float v[32];
        float s = 0, mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < 32; j++) { v[j] = x[(size_t)row * 1024 + lane + 32 * j]; s += v[j]; }
        s = wsum(s);
        float mean = s / 1024.0f, q = 0;
#pragma unroll
        for (int j = 0; j < 32; j++) { float a = v[j] - mean; q += a * a; mx = (v[j] != v[j] || v[j] > mx) ? v[j] : mx; }
        q = wsum(q);
        mx = wmax(mx);
        float inv = 1.0f / sqrtf(q / 1023.0f + 1e-5f);
#pragma unroll
        for (int j = 0; j < 32; j++) out[(size_t)row * 1024 + lane + 32 * j] = (v[j] - mean) * inv + mx + cs[lane + 32 * j];
    }
}

static char *flush;
static float time_it(const std::function<void()> &f, int reps = 50) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int i = 0; i < reps + 5; i++) {
        CK(cudaMemsetAsync(flush, i & 255, 256u << 20));
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 5) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

static float maxdiff(const float *d, const float *ref, size_t n) {
    std::vector<float> h(n), r(n);
    CK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), ref, n * 4, cudaMemcpyDeviceToHost));
    float m = 0;
    for (size_t i = 0; i < n; i++) m = std::max(m, fabsf(h[i] - r[i]));
    return m;
}

int main() {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&flush, 256u << 20));
    float *x, *cs_ref, *out_ref, *cs, *out, *part, *b0, *b1, *b2;
    unsigned *done;
    CK(cudaMalloc(&x, 4ull * R * C)); CK(cudaMalloc(&out_ref, 4ull * R * C)); CK(cudaMalloc(&out, 4ull * R * C));
    CK(cudaMalloc(&cs_ref, 4 * C)); CK(cudaMalloc(&cs, 4 * C)); CK(cudaMalloc(&part, 4ull * 64 * C));
    CK(cudaMalloc(&b0, 4 * R)); CK(cudaMalloc(&b1, 4 * R)); CK(cudaMalloc(&b2, 4 * R));
    CK(cudaMalloc(&done, 4 * 64)); CK(cudaMemset(done, 0, 4 * 64));
    std::vector<float> hx((size_t)R * C);
    for (size_t i = 0; i < hx.size(); i++) hx[i] = (float)((i * 2654435761u) % 10007) / 5003.5f - 1.0f;
    CK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    MiSyms sy;
    memset(&sy, 0, sizeof sy);
#ifdef GEN_SPLIT   /* the generator's split column reduction (16 splits of 32-output tiles) */
    auto gen_col = [&] { cuda_fused_sum_0<<<dim3(C / 32, 16), dim3(32, 8)>>>(x, cs_ref, sy); };
#else
    auto gen_col = [&] { cuda_fused_sum_0<<<(C + 7) / 8, dim3(8, 128)>>>(x, cs_ref, sy); };
#endif
    auto gen_row = [&] { cuda_fused_add_amax_div_sqrt_sub_var_mean_1<<<R, 128>>>(x, b0, b1, b2, cs_ref, out_ref, sy); };
    double bytes = 4.0 * R * C * 2 + 4.0 * C;
    char *c0, *c1;   /* copy bandwidth in this run: 512 MB device to device, read + write */
    CK(cudaMalloc(&c0, 512u << 20)); CK(cudaMalloc(&c1, 512u << 20));
    float tc = time_it([&] { CK(cudaMemcpyAsync(c1, c0, 512u << 20, cudaMemcpyDeviceToDevice)); }, 10);
    const double copy_gbs = 2.0 * (512u << 20) / tc / 1e6;
    CK(cudaFree(c0)); CK(cudaFree(c1));
    printf("copy bandwidth (cudaMemcpy D2D 512 MB, read + write): %.0f GB/s\n", copy_gbs);
    printf("reductions 4096x1024: graph bytes %.1f MB; %% below = graph bytes / time / copy bandwidth\n", bytes / 1e6);
    float t;
    t = time_it(gen_col); printf("gen colsum            %8.2f us  (reads 16.8 MB: %5.0f GB/s)\n", t * 1e3, 4.0 * R * C / t / 1e6);
    t = time_it([&] { gen_col(); gen_row(); }); printf("gen colsum + rows     %8.2f us  %3.0f%%\n", t * 1e3, bytes / t / 1e6 / copy_gbs * 100);
    t = time_it(gen_row); printf("gen rows alone        %8.2f us\n", t * 1e3);
    for (int S : {4, 8, 16, 32, 64}) {
        auto col = [&] { colsum_split<<<dim3(C / 32, S), dim3(8, 32)>>>((const float4 *)x, part, cs, done, R, C / 4, S); };
        t = time_it(col);
        printf("split colsum S=%-2d     %8.2f us  (%5.0f GB/s) maxdiff %.3g\n", S, t * 1e3, 4.0 * R * C / t / 1e6, maxdiff(cs, cs_ref, C));
    }
    for (int wpb : {4, 8, 16}) {
        auto row = [&] {
            if (wpb == 4) rows_warp<4><<<R / 4, 128>>>((const float4 *)x, (const float4 *)cs_ref, (float4 *)out, R);
            else if (wpb == 8) rows_warp<8><<<R / 8, 256>>>((const float4 *)x, (const float4 *)cs_ref, (float4 *)out, R);
            else rows_warp<16><<<R / 16, 512>>>((const float4 *)x, (const float4 *)cs_ref, (float4 *)out, R);
        };
        t = time_it(row);
        printf("warp rows %2d/block     %8.2f us  maxdiff %.3g\n", wpb, t * 1e3, maxdiff(out, out_ref, (size_t)R * C));
        t = time_it([&] { gen_col(); row(); }); printf("  gen colsum + warp    %8.2f us  %3.0f%%\n", t * 1e3, bytes / t / 1e6 / copy_gbs * 100);
        for (int S : {8, 16, 32}) {
            t = time_it([&] { colsum_split<<<dim3(C / 32, S), dim3(8, 32)>>>((const float4 *)x, part, cs, done, R, C / 4, S); row(); });
            printf("  split S=%-2d + warp    %8.2f us  %3.0f%%\n", S, t * 1e3, bytes / t / 1e6 / copy_gbs * 100);
        }
    }
    t = time_it([&] { rows_warp_scalar<8><<<R / 8, 256>>>(x, cs_ref, out, R); });
    printf("warp scalar rows 8    %8.2f us  maxdiff %.3g\n", t * 1e3, maxdiff(out, out_ref, (size_t)R * C));
    t = time_it([&] { gen_col(); rows_warp_scalar<8><<<R / 8, 256>>>(x, cs_ref, out, R); });
    printf("  gen colsum + warp scalar %8.2f us  %3.0f%%\n", t * 1e3, bytes / t / 1e6 / copy_gbs * 100);
    auto row8 = [&] { rows_warp<8><<<R / 8, 256>>>((const float4 *)x, (const float4 *)cs_ref, (float4 *)out, R); };
    t = time_it([&] { colsum_split<<<dim3(C / 32, 16), dim3(8, 32)>>>((const float4 *)x, part, cs, done, R, C / 4, 16); gen_row(); });
    printf("split S=16 + gen rows %8.2f us  %3.0f%%\n", t * 1e3, bytes / t / 1e6 / copy_gbs * 100);
    t = time_it(row8); printf("warp rows 8 (again)   %8.2f us\n", t * 1e3);
    return 0;
}
