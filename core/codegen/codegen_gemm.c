/* codegen_gemm.c — the matrix products of the generated C module in f64, f16 and bf16.
 * Inductor calls the ATen kernel (extern_kernels.mm / addmm / bmm) for every floating dtype
 * (torch/_inductor/kernel/mm.py tuned_mm: aten_mm is always a choice); ATen computes an f64
 * product in f64 (BLAS dgemm) and an f16 / bf16 one with f32 accumulation, rounding each
 * result once on store. The module does the same: mi_gemm_f64 calls cblas_dgemm when the
 * operands are BLAS-shaped (else a loop accumulating in double), mi_gemm_f16 / _bf16 widen the
 * operands to f32 row-major copies, run the f32 mi_gemm, and round C back. With a bias (addmm;
 * element (i, j) at bias[i * bsi + j * bsj], the signature of the f32 mi_gemm) C starts from
 * it and the product is added before the one rounding. */
#include "codegen/codegen_gemm.h"

/* C[M,N] (+)= A[M,K] @ B[K,N] in double; A, B strided, C row-major with leading dim ldc.
 * Example: a [4, 3] f64 weight times [3, 5] f64 input is one cblas_dgemm. */
const char cg_gemm_f64_src[] =
    "static void mi_gemm_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t sa0, int64_t sa1,\n"
    "                        const double *B, int64_t sb0, int64_t sb1, double *C, int64_t ldc,\n"
    "                        const double *bias, int64_t bsi, int64_t bsj)\n{\n"
    "    if (M <= 0 || N <= 0) return;\n"
    "    int acc = bias != NULL;\n"
    "    if (bias)\n"
    "        for (int64_t i = 0; i < M; i++) for (int64_t j = 0; j < N; j++) C[i * ldc + j] = bias[i * bsi + j * bsj];\n"
    "#ifdef MI_HAVE_CBLAS\n"
    "    int ta = -1, tb = -1; int64_t lda = 0, ldb = 0;\n"
    "    if (sa1 == 1 && sa0 >= (K > 1 ? K : 1)) { ta = 0; lda = sa0; } else if (sa0 == 1 && sa1 >= (M > 1 ? M : 1)) { ta = 1; lda = sa1; }\n"
    "    if (sb1 == 1 && sb0 >= (N > 1 ? N : 1)) { tb = 0; ldb = sb0; } else if (sb0 == 1 && sb1 >= (K > 1 ? K : 1)) { tb = 1; ldb = sb1; }\n"
    "    if (ta >= 0 && tb >= 0 && K > 0 && M < INT32_MAX && N < INT32_MAX && K < INT32_MAX) {\n"
    "        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,\n"
    "                    (int)M, (int)N, (int)K, 1.0, A, (int)lda, B, (int)ldb, acc ? 1.0 : 0.0, C, (int)ldc);\n"
    "        return;\n    }\n#endif\n"
    "    #pragma omp parallel for\n"
    "    for (int64_t i = 0; i < M; i++)\n"
    "        for (int64_t j = 0; j < N; j++) {\n"
    "            double s = 0;\n"
    "            for (int64_t k = 0; k < K; k++) s += A[i * sa0 + k * sa1] * B[k * sb0 + j * sb1];\n"
    "            C[i * ldc + j] = acc ? C[i * ldc + j] + s : s;\n"
    "        }\n}\n\n";

/* The half products, one macro for both formats: widen A and B into row-major f32 copies
 * (and C when it holds the bias), mi_gemm in f32, round each result once. Without memory for
 * the copies, a direct loop accumulating in f32 gives the same values.
 * Example: an f16 [8, 64] x [64, 128] projection is one f32 mi_gemm and 1024 roundings. */
const char cg_gemm_half_src[] =
    "#define MI_GEMM_HALF(NAME, TOF, FROMF)\\\n"
    "static void NAME(int64_t M, int64_t N, int64_t K, const uint16_t *A, int64_t sa0, int64_t sa1,\\\n"
    "                 const uint16_t *B, int64_t sb0, int64_t sb1, uint16_t *C, int64_t ldc,\\\n"
    "                 const uint16_t *bias, int64_t bsi, int64_t bsj)\\\n"
    "{\\\n"
    "    if (M <= 0 || N <= 0) return;\\\n"
    "    float *a = malloc(sizeof(float) * (size_t)(M * K + 1)), *b = malloc(sizeof(float) * (size_t)(K * N + 1));\\\n"
    "    float *c = malloc(sizeof(float) * (size_t)(M * N));\\\n"
    "    if (!a || !b || !c) {\\\n"
    "        free(a); free(b); free(c);\\\n"
    "        for (int64_t i = 0; i < M; i++)\\\n"
    "            for (int64_t j = 0; j < N; j++) {\\\n"
    "                float s = bias ? TOF(bias[i * bsi + j * bsj]) : 0.0f;\\\n"
    "                for (int64_t k = 0; k < K; k++) s += TOF(A[i * sa0 + k * sa1]) * TOF(B[k * sb0 + j * sb1]);\\\n"
    "                C[i * ldc + j] = FROMF(s);\\\n"
    "            }\\\n"
    "        return;\\\n"
    "    }\\\n"
    "    for (int64_t i = 0; i < M; i++) for (int64_t k = 0; k < K; k++) a[i * K + k] = TOF(A[i * sa0 + k * sa1]);\\\n"
    "    for (int64_t k = 0; k < K; k++) for (int64_t j = 0; j < N; j++) b[k * N + j] = TOF(B[k * sb0 + j * sb1]);\\\n"
    "    if (bias) for (int64_t i = 0; i < M; i++) for (int64_t j = 0; j < N; j++) c[i * N + j] = TOF(bias[i * bsi + j * bsj]);\\\n"
    "    mi_gemm(M, N, K, a, K, 1, b, N, 1, c, N, bias ? c : NULL, N, 1);   /* c starts from the bias */\\\n"
    "    for (int64_t i = 0; i < M; i++) for (int64_t j = 0; j < N; j++) C[i * ldc + j] = FROMF(c[i * N + j]);\\\n"
    "    free(a); free(b); free(c);\\\n"
    "}\n"
    "MI_GEMM_HALF(mi_gemm_f16, mi_h2f, mi_f2h)\n"
    "MI_GEMM_HALF(mi_gemm_bf16, mi_bf2f, mi_f2bf)\n\n";
