/* codegen_cuda_extern.c — the extern kernels of the CUDA backend (see codegen_cuda_extern.h):
 * what Inductor's wrapper calls as extern_kernels.mm / addmm / bmm (ATen -> cuBLAS), the
 * attention externs (ATen's flash / memory-efficient kernels) and extern convolution (cuDNN),
 * as device code written into the module, plus the call of each inside mi_launch.
 *   - GEMM: cuBLAS, dlopen'ed at the first GEMM ($MINDUCTOR_CUBLAS, libcublas.so.13 / .12 / .so
 *     through the loader, /usr/local/cuda/lib64): f32 through cublasSgemmStridedBatched in its
 *     default math mode (no TF32: torch.backends.cuda.matmul.allow_tf32 is False by default),
 *     f64 through cublasDgemmStridedBatched, f16 / bf16 through cublasGemmStridedBatchedEx with
 *     f32 accumulation (CUBLAS_COMPUTE_32F), as ATen's at::cuda::blas::gemm / bgemm. Row-major
 *     operands map to cuBLAS's column-major view (C^T = B^T A^T) when each has a unit-stride dim;
 *     otherwise, or without cuBLAS (MINDUCTOR_CUBLAS=0 forces it), a 32x32-tile shared-memory
 *     GEMM runs. mi_cuda_libs() says which.
 *   - attention: one warp per 32 queries of a (batch, head); K and V tiles through shared memory,
 *     an online softmax per query row in registers (flash attention), causal blocks stop at their
 *     last query, additive f32 or boolean masks, the logsumexp row; heads over 256 take a plain
 *     kernel of one thread per query.
 *   - convolution: im2col into a stream-ordered scratch buffer (the weight packed [Cout][Cin/g *
 *     kernel] in the same launch), then the GEMM per group over the batch (ATen's slow_conv2d
 *     does the same: unfold + gemm). */
#include "codegen/codegen_cuda_extern.h"
#include "codegen/codegen_cuda_kernel.h"
#include "codegen/codegen_kernel.h"
#include "codegen/codegen_cuda_gemm_plan.h"

#include <stdio.h>
#include <string.h>

static void ex(StrBuf *sb, const Expr *e) { sym_c_sb(e, sb); }

/* cuBLAS at run time and the GEMM every extern goes through. */
static const char *gemm_src =
    "#include <dlfcn.h>\n"
    "/* ---- cuBLAS, loaded at the first GEMM (the prototypes of cublas_api.h; handles as void *) ---- */\n"
    "typedef int (*MiBlasCreate)(void **);\n"
    "typedef int (*MiBlasSetStream)(void *, cudaStream_t);\n"
    "typedef int (*MiBlasSgemm)(void *, int, int, int, int, int, const float *, const float *, int, long long,\n"
    "                           const float *, int, long long, const float *, float *, int, long long, int);\n"
    "typedef int (*MiBlasDgemm)(void *, int, int, int, int, int, const double *, const double *, int, long long,\n"
    "                           const double *, int, long long, const double *, double *, int, long long, int);\n"
    "typedef int (*MiBlasGemmEx)(void *, int, int, int, int, int, const void *, const void *, int, int, long long,\n"
    "                            const void *, int, int, long long, const void *, void *, int, int, long long, int, int, int);\n"
    "struct MiBlas { void *h; MiBlasSetStream set_stream; MiBlasSgemm sgemm; MiBlasDgemm dgemm; MiBlasGemmEx gemmex; char info[448]; };\n"
    "static MiBlas mi_blas_load(void)\n{\n"
    "    MiBlas b;\n    memset(&b, 0, sizeof b);\n"
    "    const char *env = getenv(\"MINDUCTOR_CUBLAS\");\n"
    "    if (env && !strcmp(env, \"0\")) { snprintf(b.info, sizeof b.info, \"templated GEMM (MINDUCTOR_CUBLAS=0)\"); return b; }\n"
    "    const char *names[] = {env && *env ? env : \"libcublas.so.13\", \"libcublas.so.13\", \"libcublas.so.12\", \"libcublas.so\",\n"
    "                           \"/usr/local/cuda/lib64/libcublas.so\", NULL};\n"
    "    void *lib = NULL;\n    char why[256] = \"\";\n"
    "    for (int i = 0; names[i] && !lib; i++)\n"
    "        if (!(lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) && !why[0]) { const char *e = dlerror(); snprintf(why, sizeof why, \"%s\", e ? e : names[i]); }\n"
    "    if (!lib) { snprintf(b.info, sizeof b.info, \"templated GEMM (cuBLAS not loaded: %s)\", why); return b; }\n"
    "    MiBlasCreate create = (MiBlasCreate)dlsym(lib, \"cublasCreate_v2\");\n"
    "    b.set_stream = (MiBlasSetStream)dlsym(lib, \"cublasSetStream_v2\");\n"
    "    b.sgemm = (MiBlasSgemm)dlsym(lib, \"cublasSgemmStridedBatched\");\n"
    "    b.dgemm = (MiBlasDgemm)dlsym(lib, \"cublasDgemmStridedBatched\");\n"
    "    b.gemmex = (MiBlasGemmEx)dlsym(lib, \"cublasGemmStridedBatchedEx\");\n"
    "    Dl_info di;\n    const char *path = create && dladdr((void *)create, &di) && di.dli_fname ? di.dli_fname : \"?\";\n"
    "    int st = -1;\n"
    "    if (!create || !b.set_stream || !b.sgemm || !b.dgemm || !b.gemmex)\n"
    "        snprintf(b.info, sizeof b.info, \"templated GEMM (%s lacks the cublas*StridedBatched entry points)\", path);\n"
    "    else if ((st = create(&b.h)) != 0) { b.h = NULL; snprintf(b.info, sizeof b.info, \"templated GEMM (cublasCreate failed: status %d)\", st); }\n"
    "    else snprintf(b.info, sizeof b.info, \"cuBLAS (%s)\", path);\n"
    "    return b;\n}\n"
    "static MiBlas *mi_blas(void) { static MiBlas b = mi_blas_load(); return &b; }\n"
    "extern \"C\" const char *mi_cuda_libs(void) { return mi_blas()->info; }\n"
    "/* cudaDataType of T for cublasGemmStridedBatchedEx (CUDA_R_32F 0, _64F 1, _16F 2, _16BF 14) */\n"
    "template <typename T> struct MiBlasT { static const int v = -1; };\n"
    "template <> struct MiBlasT<float> { static const int v = 0; };\n"
    "template <> struct MiBlasT<double> { static const int v = 1; };\n"
    "#ifdef __CUDA_FP16_H__\ntemplate <> struct MiBlasT<__half> { static const int v = 2; };\n#endif\n"
    "#ifdef __CUDA_BF16_H__\ntemplate <> struct MiBlasT<__nv_bfloat16> { static const int v = 14; };\n#endif\n"
    "/* C = A @ B (+ C) through cuBLAS by mi_gemm_plan (core/codegen/codegen_cuda_gemm_plan.h, below):\n"
    "   0 when it ran, -1 when cuBLAS is absent or the operands have no plan. */\n"
    "template <typename T>\n"
    "static int mi_gemm_blas(cudaStream_t st, int64_t batch, int64_t M, int64_t N, int64_t K, const T *A, int64_t sa0, int64_t sa1, int64_t sab,\n"
    "                        const T *B, int64_t sb0, int64_t sb1, int64_t sbb, T *C, int64_t sc0, int64_t sc1, int64_t scb, int acc)\n{\n"
    "    MiBlas *b = mi_blas();\n"
    "    const int dt = MiBlasT<T>::v;\n"
    "    if (!b->h || dt < 0 || batch > 2147483647) return -1;\n"
    "    const MiGemmPlan p = mi_gemm_plan(M, N, K, sa0, sa1, sb0, sb1, sc0, sc1);\n"
    "    if (!p.ok) return -1;\n"
    "    if (batch == 1) sab = sbb = scb = 0;\n"
    "    const void *X = p.swap ? (const void *)A : (const void *)B, *Y = p.swap ? (const void *)B : (const void *)A;   /* cuBLAS's A, B */\n"
    "    const long long sx = p.swap ? sab : sbb, sy = p.swap ? sbb : sab;\n"
    "    if (b->set_stream(b->h, st) != 0) return -1;\n"
    "    int s;\n"
    "    if (dt == 0) {\n"
    "        const float one = 1.0f, beta = acc ? 1.0f : 0.0f;\n"
    "        s = b->sgemm(b->h, p.ta, p.tb, (int)p.m, (int)p.n, (int)K, &one, (const float *)X, (int)p.lda, sx, (const float *)Y, (int)p.ldb, sy,\n"
    "                     &beta, (float *)C, (int)p.ldc, scb, (int)batch);\n"
    "    } else if (dt == 1) {\n"
    "        const double one = 1.0, beta = acc ? 1.0 : 0.0;\n"
    "        s = b->dgemm(b->h, p.ta, p.tb, (int)p.m, (int)p.n, (int)K, &one, (const double *)X, (int)p.lda, sx, (const double *)Y, (int)p.ldb, sy,\n"
    "                     &beta, (double *)C, (int)p.ldc, scb, (int)batch);\n"
    "    } else {   /* CUBLAS_COMPUTE_32F = 68, CUBLAS_GEMM_DEFAULT = -1 */\n"
    "        const float one = 1.0f, beta = acc ? 1.0f : 0.0f;\n"
    "        s = b->gemmex(b->h, p.ta, p.tb, (int)p.m, (int)p.n, (int)K, &one, X, dt, (int)p.lda, sx, Y, dt, (int)p.ldb, sy,\n"
    "                      &beta, C, dt, (int)p.ldc, scb, (int)batch, 68, -1);\n"
    "    }\n"
    "    return s == 0 ? 0 : -1;\n}\n"
    "/* The fallback: C[M,N] (+)= A[M,K] @ B[K,N] per batch z; A, B, C strided. 32x32 tiles;\n"
    "   T the element type, Acc the accumulator (float; double for f64), one rounding on store. */\n"
    "template <typename T, typename Acc>\n"
    "__global__ void mi_gemm_kernel(int64_t M, int64_t N, int64_t K, const T *A, int64_t sa0, int64_t sa1, int64_t sab,\n"
    "                               const T *B, int64_t sb0, int64_t sb1, int64_t sbb, T *C, int64_t sc0, int64_t sc1, int64_t scb, int acc)\n{\n"
    "    __shared__ Acc As[32][33], Bs[32][33];\n"
    "    A += blockIdx.z * sab; B += blockIdx.z * sbb; C += blockIdx.z * scb;\n"
    "    const int tx = threadIdx.x, ty = threadIdx.y;   /* 32 x 8 threads, 4 rows each */\n"
    "    const int64_t row0 = (int64_t)blockIdx.y * 32, col = (int64_t)blockIdx.x * 32 + tx;\n"
    "    Acc s[4] = {0, 0, 0, 0};\n"
    "    for (int64_t k0 = 0; k0 < K; k0 += 32) {\n"
    "        for (int q = 0; q < 4; q++) {\n"
    "            int r = ty + 8 * q;\n"
    "            As[r][tx] = (row0 + r < M && k0 + tx < K) ? (Acc)A[(row0 + r) * sa0 + (k0 + tx) * sa1] : (Acc)0;\n"
    "            Bs[r][tx] = (k0 + r < K && col < N) ? (Acc)B[(k0 + r) * sb0 + col * sb1] : (Acc)0;\n"
    "        }\n"
    "        __syncthreads();\n"
    "        #pragma unroll 8\n"
    "        for (int kk = 0; kk < 32; kk++)\n"
    "            for (int q = 0; q < 4; q++) s[q] += As[ty + 8 * q][kk] * Bs[kk][tx];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    for (int q = 0; q < 4; q++) {\n"
    "        int64_t r = row0 + ty + 8 * q;\n"
    "        if (r < M && col < N) C[r * sc0 + col * sc1] = (T)(acc ? (Acc)C[r * sc0 + col * sc1] + s[q] : s[q]);\n"
    "    }\n}\n"
    "/* C[b] (+)= A[b] @ B[b] for b < batch (row-major views by strides): cuBLAS, else mi_gemm_kernel */\n"
    "template <typename T, typename Acc>\n"
    "static void mi_gemm(cudaStream_t st, int64_t batch, int64_t M, int64_t N, int64_t K, const T *A, int64_t sa0, int64_t sa1, int64_t sab,\n"
    "                    const T *B, int64_t sb0, int64_t sb1, int64_t sbb, T *C, int64_t sc0, int64_t sc1, int64_t scb, int acc)\n{\n"
    "    if (M <= 0 || N <= 0 || batch <= 0) return;\n"
    "    if (mi_gemm_blas<T>(st, batch, M, N, K, A, sa0, sa1, sab, B, sb0, sb1, sbb, C, sc0, sc1, scb, acc) == 0) return;\n"
    "    dim3 grid((unsigned)((N + 31) / 32), (unsigned)((M + 31) / 32), (unsigned)batch), block(32, 8);\n"
    "    mi_gemm_kernel<T, Acc><<<grid, block, 0, st>>>(M, N, K, A, sa0, sa1, sab, B, sb0, sb1, sbb, C, sc0, sc1, scb, acc);\n}\n"
    "/* C[i, j] = bias (1-d over j or 2-d strided), before an addmm accumulates */\n"
    "template <typename T>\n"
    "__global__ void mi_bias_kernel(int64_t M, int64_t N, T *C, int64_t sc0, int64_t sc1, const T *bias, int nd, int64_t s0, int64_t s1)\n{\n"
    "    for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < M * N; x += (int64_t)gridDim.x * blockDim.x) {\n"
    "        int64_t i = x / N, j = x % N;\n"
    "        C[i * sc0 + j * sc1] = nd == 1 ? bias[j * s0] : nd == 2 ? bias[i * s0 + j * s1] : bias[0];\n"
    "    }\n}\n\n";

/* Attention: the flash kernel (head sizes up to 256) and the row kernel beyond. */
static const char *sdpa_src =
    "/* out = softmax(q @ k^T * scale + mask) @ v, lse = the row's logsumexp. One warp takes 32 queries\n"
    "   of one (batch, head) (blockIdx.x = bh * nqb + query block); K and V tiles of BK keys go through\n"
    "   shared memory; each thread keeps its query row, output row, running max and sum in registers\n"
    "   and rescales them once per tile (online softmax). causal: key j only for query i >= j (top-\n"
    "   left), and a block stops at the tile of its last query; mask: additive f32 (mb 0) or bool (mb 1:\n"
    "   false masks out), strides sm over [B, H, L, S] (0 where broadcast). A row with every key masked\n"
    "   is NaN (exp(-inf - -inf), as the reference). lse rows in [L, lsel) (the efficient kernel pads\n"
    "   to 32 queries) are -inf. D >= max(E, Ev): the registers of a row. */\n"
    "template <int D, int BK>\n"
    "__global__ void __launch_bounds__(32) mi_flash_kernel(int64_t H, int64_t L, int64_t S, int E, int Ev, float scale, int64_t nqb,\n"
    "        const float *q, MiStrides4 sq, const float *k, MiStrides4 sk, const float *v, MiStrides4 sv,\n"
    "        float *out, MiStrides4 so, float *lse, MiStrides4 sl, int64_t lsel, int causal, const void *mask, int mb, MiStrides4 sm)\n{\n"
    "    __shared__ float Ks[BK][D], Vs[BK][D];\n"
    "    const int64_t bh = blockIdx.x / nqb, qb = blockIdx.x % nqb, b = bh / H, h = bh % H;\n"
    "    const int64_t i = qb * 32 + threadIdx.x;\n"
    "    const bool act = i < L;\n"
    "    const float *qp = q + b * sq.s[0] + h * sq.s[1] + (act ? i : 0) * sq.s[2];\n"
    "    float qr[D], o[D];\n"
    "    #pragma unroll\n"
    "    for (int e = 0; e < D; e++) { qr[e] = act && e < E ? qp[e * sq.s[3]] : 0.0f; o[e] = 0.0f; }\n"
    "    float mx = -INFINITY, sum = 0.0f;\n"
    "    int64_t kend = S;\n"
    "    if (causal) { int64_t last = (qb * 32 + 32 < L ? qb * 32 + 32 : L) - 1; kend = last + 1 < S ? last + 1 : S; }\n"
    "    const float *kb = k + b * sk.s[0] + h * sk.s[1], *vb = v + b * sv.s[0] + h * sv.s[1];\n"
    "    for (int64_t j0 = 0; j0 < kend; j0 += BK) {\n"
    "        __syncthreads();\n"
    "        for (int t = threadIdx.x; t < BK * D; t += 32) {\n"
    "            const int jj = t / D, e = t % D;\n"
    "            const int64_t j = j0 + jj;\n"
    "            Ks[jj][e] = j < kend && e < E ? kb[j * sk.s[2] + e * sk.s[3]] : 0.0f;\n"
    "            Vs[jj][e] = j < kend && e < Ev ? vb[j * sv.s[2] + e * sv.s[3]] : 0.0f;\n"
    "        }\n"
    "        __syncthreads();\n"
    "        if (!act) continue;\n"
    "        float s[BK], tmax = -INFINITY;\n"
    "        #pragma unroll\n"
    "        for (int jj = 0; jj < BK; jj++) {\n"
    "            const int64_t j = j0 + jj;\n"
    "            float d = 0.0f;\n"
    "            #pragma unroll\n"
    "            for (int e = 0; e < D; e++) d += qr[e] * Ks[jj][e];\n"
    "            d *= scale;\n"
    "            if (j >= kend || (causal && j > i)) d = -INFINITY;\n"
    "            else if (mask) {\n"
    "                const int64_t mo = b * sm.s[0] + h * sm.s[1] + i * sm.s[2] + j * sm.s[3];\n"
    "                if (mb) { if (!((const bool *)mask)[mo]) d = -INFINITY; }\n"
    "                else d += ((const float *)mask)[mo];\n"
    "            }\n"
    "            s[jj] = d;\n"
    "            tmax = fmaxf(tmax, d);\n"
    "        }\n"
    "        const float nmx = fmaxf(mx, tmax);\n"
    "        if (nmx == -INFINITY) continue;   /* nothing visible yet */\n"
    "        const float corr = expf(mx - nmx);\n"
    "        sum *= corr;\n"
    "        #pragma unroll\n"
    "        for (int e = 0; e < D; e++) o[e] *= corr;\n"
    "        #pragma unroll\n"
    "        for (int jj = 0; jj < BK; jj++) {\n"
    "            const float p = expf(s[jj] - nmx);\n"
    "            sum += p;\n"
    "            #pragma unroll\n"
    "            for (int e = 0; e < D; e++) o[e] += p * Vs[jj][e];\n"
    "        }\n"
    "        mx = nmx;\n"
    "    }\n"
    "    if (act) {\n"
    "        float *op = out + b * so.s[0] + h * so.s[1] + i * so.s[2];\n"
    "        const float nan = __int_as_float(0x7fc00000);\n"
    "        #pragma unroll\n"
    "        for (int e = 0; e < D; e++) if (e < Ev) op[e * so.s[3]] = mx == -INFINITY ? nan : o[e] / sum;\n"
    "        if (lse && lsel) lse[b * sl.s[0] + h * sl.s[1] + i * sl.s[2]] = mx == -INFINITY ? nan : logf(sum) + mx;\n"
    "    } else if (lse && i < lsel) lse[b * sl.s[0] + h * sl.s[1] + i * sl.s[2]] = -INFINITY;\n"
    "}\n"
    "/* the same for any head size: one thread per (batch, head, query), two passes over the keys */\n"
    "__global__ void mi_sdpa_rows(int64_t B, int64_t H, int64_t L, int64_t S, int64_t E, int64_t Ev, float scale, int64_t nq,\n"
    "        const float *q, MiStrides4 sq, const float *k, MiStrides4 sk, const float *v, MiStrides4 sv,\n"
    "        float *out, MiStrides4 so, float *lse, MiStrides4 sl, int64_t lsel, int causal, const void *mask, int mb, MiStrides4 sm)\n{\n"
    "    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (t >= B * H * nq) return;\n"
    "    int64_t i = t % nq, h = (t / nq) % H, b = t / (nq * H);\n"
    "    if (i >= L) { if (lse && i < lsel) lse[b * sl.s[0] + h * sl.s[1] + i * sl.s[2]] = -INFINITY; return; }\n"
    "    const float *qi = q + b * sq.s[0] + h * sq.s[1] + i * sq.s[2];\n"
    "    const int64_t jn = causal ? (i + 1 < S ? i + 1 : S) : S;\n"
    "    float mx = -INFINITY, sum = 0.0f;\n"
    "    for (int pass = 0; pass < 2; pass++) {\n"
    "        float *o = out + b * so.s[0] + h * so.s[1] + i * so.s[2];\n"
    "        if (pass) for (int64_t e = 0; e < Ev; e++) o[e * so.s[3]] = 0.0f;\n"
    "        for (int64_t j = 0; j < jn; j++) {\n"
    "            const float *kj = k + b * sk.s[0] + h * sk.s[1] + j * sk.s[2];\n"
    "            float d = 0.0f;\n"
    "            for (int64_t e = 0; e < E; e++) d += qi[e * sq.s[3]] * kj[e * sk.s[3]];\n"
    "            d *= scale;\n"
    "            if (mask) {\n"
    "                const int64_t mo = b * sm.s[0] + h * sm.s[1] + i * sm.s[2] + j * sm.s[3];\n"
    "                if (mb) { if (!((const bool *)mask)[mo]) d = -INFINITY; }\n"
    "                else d += ((const float *)mask)[mo];\n"
    "            }\n"
    "            if (!pass) { float m2 = fmaxf(mx, d); if (m2 != -INFINITY) { sum = sum * expf(mx - m2) + expf(d - m2); mx = m2; } continue; }\n"
    "            const float p = expf(d - mx) / sum;\n"
    "            const float *vj = v + b * sv.s[0] + h * sv.s[1] + j * sv.s[2];\n"
    "            for (int64_t e = 0; e < Ev; e++) o[e * so.s[3]] += p * vj[e * sv.s[3]];\n"
    "        }\n"
    "        if (!pass && mx == -INFINITY) { sum = __int_as_float(0x7fc00000); mx = sum; }   /* every key masked: NaN */\n"
    "    }\n"
    "    if (lse && lsel) lse[b * sl.s[0] + h * sl.s[1] + i * sl.s[2]] = logf(sum) + mx;\n"
    "}\n"
    "/* The launch: the flash kernel instantiated for head size D (known when generated; 0: chosen here\n"
    "   from E and Ev; -1: over 256, the row kernel) */\n"
    "template <int D>\n"
    "static void mi_sdpa(cudaStream_t st, int64_t B, int64_t H, int64_t L, int64_t S, int64_t E, int64_t Ev, float scale,\n"
    "        const float *q, MiStrides4 sq, const float *k, MiStrides4 sk, const float *v, MiStrides4 sv,\n"
    "        float *out, MiStrides4 so, float *lse, MiStrides4 sl, int64_t lsel, int causal, const void *mask, int mb, MiStrides4 sm)\n{\n"
    "    const int64_t nq = lse && lsel > L ? lsel : L, nqb = (nq + 31) / 32, hd = E > Ev ? E : Ev;\n"
    "    if (B * H * nq <= 0) return;\n"
    "    const unsigned grid = (unsigned)(B * H * nqb);\n"
    "#define MI_FLASH(d, bk) mi_flash_kernel<d, bk><<<grid, 32, 0, st>>>(H, L, S, (int)E, (int)Ev, scale, nqb, q, sq, k, sk, v, sv, out, so, lse, sl, lsel, causal, mask, mb, sm)\n"
    "#define MI_ROWS mi_sdpa_rows<<<(unsigned)((B * H * nq + 127) / 128), 128, 0, st>>>(B, H, L, S, E, Ev, scale, nq, q, sq, k, sk, v, sv, out, so, lse, sl, lsel, causal, mask, mb, sm)\n"
    "    if constexpr (D == 32) MI_FLASH(32, 32);\n"
    "    else if constexpr (D == 64) MI_FLASH(64, 32);\n"
    "    else if constexpr (D == 128) MI_FLASH(128, 16);\n"
    "    else if constexpr (D == 256) MI_FLASH(256, 8);\n"
    "    else if constexpr (D == 0) {\n"
    "        if (hd <= 32) MI_FLASH(32, 32);\n"
    "        else if (hd <= 64) MI_FLASH(64, 32);\n"
    "        else if (hd <= 128) MI_FLASH(128, 16);\n"
    "        else if (hd <= 256) MI_FLASH(256, 8);\n"
    "        else MI_ROWS;\n"
    "    } else MI_ROWS;\n"
    "#undef MI_FLASH\n#undef MI_ROWS\n"
    "}\n\n";

/* Convolution as im2col + GEMM (after gemm_src). */
static const char *conv_src =
    "/* A convolution's shape, spatial dims as 3 (a 2-d one has d = 1: size 1, stride 0, no padding) */\n"
    "struct MiConvGeom {\n"
    "    int64_t xs[5];             /* input strides: n, c, d, h, w */\n"
    "    int64_t in[3], ks[3], os[3];   /* input, kernel and output spatial sizes */\n"
    "    int64_t st[3], pd[3], dl[3];\n"
    "    int64_t ws[5];             /* weight strides: cout, cin / groups, kd, kh, kw */\n"
    "};\n"
    "/* col[n][k][p] = x[n][ci][od*st - pd + kd*dl][...] (0 in the padding) for n < nb, k = (ci, kd, kh, kw)\n"
    "   < Kc, p = (od, oh, ow) < P; the first nw elements past col pack the weight wp[co][k] (nw 0: done) */\n"
    "template <typename T>\n"
    "__global__ void mi_im2col_kernel(int64_t nb, int64_t Kc, int64_t P, MiConvGeom g, const T *x, T *col, const T *w, T *wp, int64_t nw)\n{\n"
    "    const int64_t ncol = nb * Kc * P, kk3 = g.ks[0] * g.ks[1] * g.ks[2];\n"
    "    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < ncol + nw; t += (int64_t)gridDim.x * blockDim.x) {\n"
    "        const int64_t u = t < ncol ? t % (Kc * P) : (t - ncol) % Kc;\n"
    "        const int64_t kk = t < ncol ? u / P : u, kr = kk % kk3, ci = kk / kk3;\n"
    "        const int64_t kd = kr / (g.ks[1] * g.ks[2]), kh = (kr / g.ks[2]) % g.ks[1], kw = kr % g.ks[2];\n"
    "        if (t >= ncol) {\n"
    "            const int64_t co = (t - ncol) / Kc;\n"
    "            wp[t - ncol] = w[co * g.ws[0] + ci * g.ws[1] + kd * g.ws[2] + kh * g.ws[3] + kw * g.ws[4]];\n"
    "            continue;\n"
    "        }\n"
    "        const int64_t p = u % P, n = t / (Kc * P);\n"
    "        const int64_t od = p / (g.os[1] * g.os[2]), oh = (p / g.os[2]) % g.os[1], ow = p % g.os[2];\n"
    "        const int64_t id = od * g.st[0] - g.pd[0] + kd * g.dl[0], ih = oh * g.st[1] - g.pd[1] + kh * g.dl[1],\n"
    "                      iw = ow * g.st[2] - g.pd[2] + kw * g.dl[2];\n"
    "        const bool in = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2];\n"
    "        col[t] = in ? x[n * g.xs[0] + ci * g.xs[1] + id * g.xs[2] + ih * g.xs[3] + iw * g.xs[4]] : (T)0.0f;\n"
    "    }\n}\n"
    "/* y[n][co][p] = bias[co] before the GEMMs accumulate (an unpeeled f16 / bf16 bias) */\n"
    "template <typename T>\n"
    "__global__ void mi_conv_bias_kernel(int64_t N, int64_t Co, int64_t P, T *y, int64_t ysn, int64_t ysc, int64_t ysp, const T *bias, int64_t sb)\n{\n"
    "    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < N * Co * P; t += (int64_t)gridDim.x * blockDim.x) {\n"
    "        const int64_t p = t % P, c = (t / P) % Co, n = t / (P * Co);\n"
    "        y[n * ysn + c * ysc + p * ysp] = bias[c * sb];\n"
    "    }\n}\n"
    "/* y = conv(x, w) (+ bias): per chunk of the batch (the scratch im2col buffer at most 256 MB) and\n"
    "   group, im2col then C[co][p] = wp[co][k] @ col[k][p] batched over the chunk; y's spatial dims are\n"
    "   one run of stride ysp. 1 (error text in mi_errbuf) when the scratch cannot be had. */\n"
    "template <typename T, typename Acc>\n"
    "static int mi_conv(cudaStream_t st, int sms, int64_t N, int64_t C, int64_t Co, int64_t groups, MiConvGeom g,\n"
    "                   const T *x, const T *w, const T *bias, int64_t sbias, T *y, int64_t ysn, int64_t ysc, int64_t ysp)\n{\n"
    "    const int64_t Cg = C / groups, Og = Co / groups, Kc = Cg * g.ks[0] * g.ks[1] * g.ks[2], P = g.os[0] * g.os[1] * g.os[2];\n"
    "    if (N <= 0 || Co <= 0 || P <= 0) return 0;\n"
    "    const unsigned cap = (unsigned)(sms > 0 ? sms * 8 : 1024);\n"
    "    if (bias) mi_conv_bias_kernel<T><<<mi_blocks((N * Co * P + 255) / 256, cap), 256, 0, st>>>(N, Co, P, y, ysn, ysc, ysp, bias, sbias);\n"
    "    int64_t nb = N;\n"
    "    while (nb > 1 && nb * Kc * P * (int64_t)sizeof(T) > ((int64_t)256 << 20)) nb = (nb + 1) / 2;\n"
    "    T *wp = NULL, *col = NULL;\n"
    "    MI_CK(cudaMallocAsync((void **)&wp, sizeof(T) * (size_t)(Co * Kc) + 16, st));\n"
    "    MI_CK(cudaMallocAsync((void **)&col, sizeof(T) * (size_t)(nb * Kc * P) + 16, st));\n"
    "    for (int64_t n0 = 0; n0 < N; n0 += nb)\n"
    "        for (int64_t gi = 0; gi < groups; gi++) {\n"
    "            const int64_t cnt = N - n0 < nb ? N - n0 : nb, nw = n0 == 0 && gi == 0 ? Co * Kc : 0;\n"
    "            mi_im2col_kernel<T><<<mi_blocks((cnt * Kc * P + nw + 255) / 256, cap), 256, 0, st>>>(cnt, Kc, P, g,\n"
    "                x + n0 * g.xs[0] + gi * Cg * g.xs[1], col, w, wp, nw);\n"
    "            mi_gemm<T, Acc>(st, cnt, Og, P, Kc, wp + gi * Og * Kc, Kc, 1, 0, col, P, 1, Kc * P,\n"
    "                            y + n0 * ysn + gi * Og * ysc, ysc, ysp, ysn, bias != NULL);\n"
    "        }\n"
    "    MI_CK(cudaFreeAsync(col, st));\n"
    "    MI_CK(cudaFreeAsync(wp, st));\n"
    "    return 0;\n}\n\n";

void cg_cuda_extern_sources(const CuExterns *x, StrBuf *out) {
    if (x->mm || x->conv) {
        sb_put(out, "/* ---- core/codegen/codegen_cuda_gemm_plan.h ---- */\n" MI_STR(MI_GEMM_PLAN_SRC) "\n");
        sb_put(out, gemm_src);
    }
    if (x->sdpa) sb_put(out, sdpa_src);
    if (x->conv) sb_put(out, conv_src);
}

int cg_cuda_sdpa_head(const Buffer *b) {
    int64_t e, ev;
    if (!sym_is_int(b->eargs[0].view.size[3], &e) || !sym_is_int(b->eargs[2].view.size[3], &ev)) return 0;
    int64_t d = e > ev ? e : ev;
    return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : d <= 256 ? 256 : -1;
}

/* "MiStrides4{{a, b, c, d}}" of a layout's first n strides (0 past them) */
static void strides4(StrBuf *sb, const Layout *l, int n) {
    sb_put(sb, "MiStrides4{{");
    for (int d = 0; d < 4; d++) { if (d) sb_put(sb, ", "); if (l && d < n) ex(sb, l->stride[d]); else sb_put(sb, "0"); }
    sb_put(sb, "}}");
}

static void emit_sdpa_call(const Buffer *b, StrBuf *sb) {
    const ExternArg *a = b->eargs;
    const Buffer *o = b->items[0], *l = b->items[1];   /* its MultiOutputs: out, logsumexp */
    sb_put(sb, "    {   /* attention: flash kernel */\n");
    sb_printf(sb, "        mi_sdpa<%d>(mi_st, ", cg_cuda_sdpa_head(b));
    for (int d = 0; d < 3; d++) { ex(sb, a[0].view.size[d]); sb_put(sb, ", "); }
    ex(sb, a[1].view.size[2]); sb_put(sb, ", "); ex(sb, a[0].view.size[3]); sb_put(sb, ", "); ex(sb, a[2].view.size[3]);
    sb_printf(sb, ", %.9gf,\n            ", b->scale);
    for (int i = 0; i < 3; i++) {
        sb_printf(sb, "%s + ", a[i].buf->name); ex(sb, a[i].view.offset); sb_put(sb, ", ");
        strides4(sb, &a[i].view, 4);
        sb_put(sb, ", ");
    }
    sb_printf(sb, "\n            %s, ", o->name);
    strides4(sb, &o->layout, 4);
    sb_printf(sb, ", %s, ", l ? l->name : "NULL");
    strides4(sb, l ? &l->layout : NULL, 3);
    sb_put(sb, ", ");
    if (l) ex(sb, l->layout.size[2]); else sb_put(sb, "0");
    sb_printf(sb, ",\n            %d, ", b->causal);
    cg_emit_sdpa_mask(sb, b, "MiStrides4{{", "}}", "NULL, 0, MiStrides4{{0, 0, 0, 0}}");
    sb_put(sb, "    }\n");
    for (int k = 2; k < b->nitems; k++)   /* the philox seed and offset: no dropout, 0 */
        if (b->items[k]) sb_printf(sb, "    MI_CK(cudaMemsetAsync(%s, 0, sizeof(int64_t), mi_st));\n", b->items[k]->name);
}

/* The stride of one run over the spatial dims of layout l (dims 2..nd+1; each stride the next
 * one's times that one's size, size-1 dims skipped): 1 and true when they are all of size 1. */
static bool spatial_run(const Layout *l, int nd, int64_t *run) {
    int64_t prev_stride = 0, prev_size = 0, sz, st;
    bool any = false;
    *run = 1;
    for (int d = nd + 1; d >= 2; d--) {
        if (!sym_is_int(l->size[d], &sz) || !sym_is_int(l->stride[d], &st)) return false;
        if (sz == 1) continue;
        if (!any) *run = st;
        else if (st != prev_stride * prev_size) return false;
        any = true;
        prev_stride = st;
        prev_size = sz;
    }
    return true;
}

bool cg_cuda_conv_on_gpu(const Buffer *b) {
    const IrConv *c = b->conv;
    DType dt = b->layout.dtype;
    int64_t run;
    if (!c || c->transposed || c->nd < 1 || c->nd > 3 || b->neargs < 2 || b->neargs > 3) return false;
    if (dt != DT_F32 && dt != DT_F64 && dt != DT_F16 && dt != DT_BF16) return false;
    if (b->layout.ndim != c->nd + 2 || b->eargs[0].view.ndim != c->nd + 2 || b->eargs[1].view.ndim != c->nd + 2) return false;
    if (b->neargs > 2 && b->eargs[2].view.ndim != 1) return false;
    for (int i = 0; i < b->neargs; i++)
        if (b->eargs[i].buf->layout.dtype != dt) return false;
    return spatial_run(&b->layout, c->nd, &run);
}

/* geometry field f[d] for the 3 spatial slots: d < pad is a padded dim (value v0), else e(d - pad) */
static void geom3(StrBuf *sb, const char *f, int pad, const char *v0, const Layout *l, bool strides, const int64_t *ints) {
    for (int d = 0; d < 3; d++) {
        sb_printf(sb, "        mi_g.%s[%d] = ", f, d);
        if (d < pad) sb_put(sb, v0);
        else if (ints) sb_printf(sb, "%lldLL", (long long)ints[d - pad]);
        else ex(sb, strides ? l->stride[2 + d - pad] : l->size[2 + d - pad]);
        sb_put(sb, ";\n");
    }
}

static void emit_conv_call(const Buffer *b, StrBuf *sb) {
    const IrConv *c = b->conv;
    const Layout *x = &b->eargs[0].view, *w = &b->eargs[1].view, *y = &b->layout;
    const int pad = 3 - c->nd;
    const char *t = cu_type(y->dtype), *acc = y->dtype == DT_F64 ? "double" : "float";
    int64_t run;
    spatial_run(y, c->nd, &run);
    sb_put(sb, "    {   /* extern_kernels.convolution: im2col + GEMM */\n        MiConvGeom mi_g;\n");
    for (int d = 0; d < 2; d++) { sb_printf(sb, "        mi_g.xs[%d] = ", d); ex(sb, x->stride[d]); sb_printf(sb, "; mi_g.ws[%d] = ", d); ex(sb, w->stride[d]); sb_put(sb, ";\n"); }
    for (int d = 0; d < 3; d++) {
        sb_printf(sb, "        mi_g.xs[%d] = ", 2 + d);
        if (d < pad) sb_put(sb, "0"); else ex(sb, x->stride[2 + d - pad]);
        sb_printf(sb, "; mi_g.ws[%d] = ", 2 + d);
        if (d < pad) sb_put(sb, "0"); else ex(sb, w->stride[2 + d - pad]);
        sb_put(sb, ";\n");
    }
    geom3(sb, "in", pad, "1", x, false, NULL);
    geom3(sb, "ks", pad, "1", w, false, NULL);
    geom3(sb, "os", pad, "1", y, false, NULL);
    geom3(sb, "st", pad, "1", NULL, false, c->stride);
    geom3(sb, "pd", pad, "0", NULL, false, c->padding);
    geom3(sb, "dl", pad, "1", NULL, false, c->dilation);
    sb_printf(sb, "        if (mi_conv<%s, %s>(mi_st, mi_sms, ", t, acc);
    ex(sb, x->size[0]); sb_put(sb, ", "); ex(sb, x->size[1]); sb_put(sb, ", "); ex(sb, y->size[1]);
    sb_printf(sb, ", %lldLL, mi_g,\n                ", (long long)c->groups);
    for (int i = 0; i < 2; i++) { sb_printf(sb, "%s + ", b->eargs[i].buf->name); ex(sb, b->eargs[i].view.offset); sb_put(sb, ", "); }
    if (b->neargs > 2) {
        sb_printf(sb, "%s + ", b->eargs[2].buf->name); ex(sb, b->eargs[2].view.offset); sb_put(sb, ", "); ex(sb, b->eargs[2].view.stride[0]);
    } else sb_put(sb, "NULL, 0");
    sb_printf(sb, ", %s, ", b->name);
    ex(sb, y->stride[0]); sb_put(sb, ", "); ex(sb, y->stride[1]);
    sb_printf(sb, ", %lldLL)) return 1;\n    }\n", (long long)run);
}

static void emit_gemm_call(const Buffer *b, StrBuf *sb) {
    const ExternArg *a = b->eargs;
    const ExternArg *A = b->ext == EXT_ADDMM ? &a[1] : &a[0], *Bm = b->ext == EXT_ADDMM ? &a[2] : &a[1];
    int off = b->ext == EXT_BMM ? 1 : 0;
    sb_put(sb, "    {\n");
    if (b->ext == EXT_ADDMM) {
        const Layout *bl = &a[0].view;
        sb_put(sb, "        const int64_t mi_M = "); ex(sb, b->layout.size[0]);
        sb_put(sb, ", mi_N = "); ex(sb, b->layout.size[1]);
        sb_printf(sb, ";\n        if (mi_M * mi_N > 0) mi_bias_kernel<%s><<<mi_blocks((mi_M * mi_N + 255) / 256, 4096), 256, 0, mi_st>>>(mi_M, mi_N, %s, ", cu_type(b->layout.dtype), b->name);
        ex(sb, b->layout.stride[0]); sb_put(sb, ", "); ex(sb, b->layout.stride[1]);
        sb_printf(sb, ", %s + ", a[0].buf->name);
        ex(sb, bl->offset);
        sb_printf(sb, ", %d, ", bl->ndim);
        if (bl->ndim >= 1) ex(sb, bl->stride[0]); else sb_put(sb, "0");
        sb_put(sb, ", ");
        if (bl->ndim >= 2) ex(sb, bl->stride[1]); else sb_put(sb, "0");
        sb_put(sb, ");\n");
    }
    sb_printf(sb, "        mi_gemm<%s, %s>(mi_st, ", cu_type(b->layout.dtype), b->layout.dtype == DT_F64 ? "double" : "float");
    if (off) ex(sb, b->layout.size[0]); else sb_put(sb, "1");
    sb_put(sb, ", ");
    ex(sb, b->layout.size[off]); sb_put(sb, ", "); ex(sb, b->layout.size[off + 1]); sb_put(sb, ", ");
    ex(sb, A->view.size[off + 1]);
    const ExternArg *ops[2] = {A, Bm};
    for (int i = 0; i < 2; i++) {
        sb_printf(sb, ",\n                %s + ", ops[i]->buf->name); ex(sb, ops[i]->view.offset);
        sb_put(sb, ", "); ex(sb, ops[i]->view.stride[off]); sb_put(sb, ", "); ex(sb, ops[i]->view.stride[off + 1]);
        sb_put(sb, ", "); if (off) ex(sb, ops[i]->view.stride[0]); else sb_put(sb, "0");
    }
    sb_printf(sb, ",\n                %s, ", b->name);
    ex(sb, b->layout.stride[off]); sb_put(sb, ", "); ex(sb, b->layout.stride[off + 1]);
    sb_put(sb, ", "); if (off) ex(sb, b->layout.stride[0]); else sb_put(sb, "0");
    sb_printf(sb, ", %d);\n    }\n", b->ext == EXT_ADDMM);
}

void cg_cuda_emit_extern(const Buffer *b, StrBuf *sb) {
    if (b->ext == EXT_SDPA) emit_sdpa_call(b, sb);
    else if (b->ext == EXT_CONV) emit_conv_call(b, sb);
    else emit_gemm_call(b, sb);
}
