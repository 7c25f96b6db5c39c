// reduction_mix.cu — bench/cuda/reduction_lab.cu's hand-written kernels for bench/graphs/reductions.py
// and the generated ones (GEN: the CUDA minductor generates for it, whose kernels are named
// cuda_fused_sum_0 and cuda_fused_add_amax_div_sqrt_sub_var_mean_1[_blk]) in pairs, each pair's
// second kernel a PDL launch, exported as lab_<pair>(x, out, stream) for bench/cuda/harness_lab.py
// (issue 18, perf10: which of the two kernels makes the generated pair slower than the hand one).
//   hand pairs: v64_w8 (float4 column sum split 64 ways + a warp per row, 8 rows per block),
//               s16_w8 (scalar column sum split 16 ways, the generator's shape, + the same rows),
//               v64_b128 (+ a block of 128 per row)
//   mixes:      gcol / hcol (generated / hand column sum) x gblk / gwarp / hwarp / hblk
//   nvcc -O3 -shared -Xcompiler -fPIC -arch=sm_90 -DGEN='"/abs/gen.cu"' -o red_lab.so reduction_mix.cu
#define main lab_unused_main
#include "reduction_lab.cu"
#undef main
static float *part_, *cs_; static unsigned *done_;
static void init_() { if (!part_) { CK(cudaMalloc(&part_, 4ull * 512 * C)); CK(cudaMalloc(&cs_, 4 * C + 256)); CK(cudaMalloc(&done_, 4 * 1024)); CK(cudaMemset(done_, 0, 4 * 1024)); } }
extern "C" int lab_v64_w8(const float *x, float *out, void *st) {
    init_();
    cs_v<32, 8, false, true><<<dim3(C / 128, 64), dim3(32, 8)>>>((const float4 *)x, (float4 *)part_, (float4 *)cs_, done_, R, C / 4, 64);
    launch_pdl(rows_warp<8, false, true>, dim3(R / 8), dim3(256), (const float4 *)x, (const float4 *)cs_, (float4 *)out, R);
    return (int)cudaGetLastError();
}
extern "C" int lab_s16_w8(const float *x, float *out, void *st) {
    init_();
    cs_s<32, 8, true><<<dim3(C / 32, 16), dim3(32, 8)>>>(x, part_, cs_, done_, R, C, 16);
    launch_pdl(rows_warp<8, false, true>, dim3(R / 8), dim3(256), (const float4 *)x, (const float4 *)cs_, (float4 *)out, R);
    return (int)cudaGetLastError();
}
extern "C" int lab_v64_b128(const float *x, float *out, void *st) {
    init_();
    cs_v<32, 8, false, true><<<dim3(C / 128, 64), dim3(32, 8)>>>((const float4 *)x, (float4 *)part_, (float4 *)cs_, done_, R, C / 4, 64);
    launch_pdl(rows_blk<128, true>, dim3(R), dim3(128), x, (const float *)cs_, out, R);
    return (int)cudaGetLastError();
}

static MiSyms sy0() { MiSyms s; memset(&s, 0, sizeof s); return s; }
static MiSyms sy1() { MiSyms s = sy0(); s.pdl = 1; return s; }
#define GCOL(x) cuda_fused_sum_0<<<dim3(C / 32, 16), dim3(32, 8)>>>(x, cs_, sy0())
#define HCOL(x) cs_s<32, 8, true><<<dim3(C / 32, 16), dim3(32, 8)>>>(x, part_, cs_, done_, R, C, 16)
#define GBLK(x, o) launch_pdl(cuda_fused_add_amax_div_sqrt_sub_var_mean_1_blk, dim3(R), dim3(128), x, (float *)0, (float *)0, (float *)0, (const float *)cs_, o, sy1())
#define GWARP(x, o) launch_pdl(cuda_fused_add_amax_div_sqrt_sub_var_mean_1, dim3(R / 4), dim3(32, 4), x, (float *)0, (float *)0, (float *)0, (const float *)cs_, o, sy1())
#define HWARP(x, o) launch_pdl(rows_warp<8, false, true>, dim3(R / 8), dim3(256), (const float4 *)x, (const float4 *)cs_, (float4 *)o, R)
#define HBLK(x, o) launch_pdl(rows_blk<128, true>, dim3(R), dim3(128), x, (const float *)cs_, o, R)
#define PAIR(name, A, B) extern "C" int lab_##name(const float *x, float *o, void *st) { init_(); A(x); B(x, o); return (int)cudaGetLastError(); }
PAIR(gcol_gblk, GCOL, GBLK)
PAIR(gcol_gwarp, GCOL, GWARP)
PAIR(gcol_hwarp, GCOL, HWARP)
PAIR(gcol_hblk, GCOL, HBLK)
PAIR(hcol_gblk, HCOL, GBLK)
PAIR(hcol_gwarp, HCOL, GWARP)
PAIR(hcol_hwarp, HCOL, HWARP)
