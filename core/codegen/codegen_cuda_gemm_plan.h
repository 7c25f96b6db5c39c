/* codegen_cuda_gemm_plan.h — how a row-major strided GEMM becomes one cuBLAS call, as C code that
 * is both compiled (tests/test_cuda_gemm_plan.c checks it against a column-major GEMM on the CPU)
 * and written into every CUDA module with GEMMs (codegen_cuda_extern.c stringifies it), so the
 * two cannot drift apart. cuBLAS is column-major: row-major C[M,N] = A[M,K] @ B[K,N] is the
 * column-major C^T = B^T A^T, i.e. cuBLAS's m = N, n = M, first operand B, second A. A matrix X
 * (r x c, strides s0, s1) is an operand whose op gives X^T when one of its dims has unit stride:
 * op N on the column-major X^T (ld s0) when s1 == 1, op T on the column-major X (ld s1) when
 * s0 == 1; a dim of size 1 takes any stride. A C whose unit-stride dim is its rows (sc0 == 1) is
 * computed transposed (swap: C^T = B^T A^T with A and B exchanged). Broadcast (stride 0) or
 * gathered operands have no plan: the templated GEMM runs. Example: A [2048,128] contiguous, B the
 * weight's transpose (strides 1, 128), C contiguous: ta = T (ld 128), tb = N (ld 128), ldc 128. */
#ifndef CODEGEN_CUDA_GEMM_PLAN_H
#define CODEGEN_CUDA_GEMM_PLAN_H

#define MI_GEMM_PLAN_SRC \
typedef struct MiGemmPlan { int ok, swap, ta, tb; int64_t m, n, lda, ldb, ldc; } MiGemmPlan; \
static int mi_blas_operand(int64_t r, int64_t c, int64_t s0, int64_t s1, int *op, int64_t *ld) \
{ \
    const int64_t cm = c > 1 ? c : 1, rm = r > 1 ? r : 1; \
    if ((s1 == 1 || c == 1) && (r == 1 || s0 >= cm)) { *op = 0; *ld = r == 1 ? cm : s0; return 1; } \
    if ((s0 == 1 || r == 1) && (c == 1 || s1 >= rm)) { *op = 1; *ld = c == 1 ? rm : s1; return 1; } \
    return 0; \
} \
static MiGemmPlan mi_gemm_plan(int64_t M, int64_t N, int64_t K, int64_t sa0, int64_t sa1, int64_t sb0, int64_t sb1, \
                               int64_t sc0, int64_t sc1) \
{ \
    MiGemmPlan p; \
    int64_t t; \
    memset(&p, 0, sizeof p); \
    if (sc1 != 1 && N > 1 && (sc0 == 1 || M == 1)) { \
        p.swap = 1; \
        t = M; M = N; N = t; \
        t = sa0; sa0 = sb1; sb1 = t; \
        t = sa1; sa1 = sb0; sb0 = t; \
        t = sc0; sc0 = sc1; sc1 = t; \
    } \
    p.m = N; p.n = M; \
    p.ldc = M == 1 ? (N > 1 ? N : 1) : sc0; \
    p.ok = mi_blas_operand(K, N, sb0, sb1, &p.ta, &p.lda) && mi_blas_operand(M, K, sa0, sa1, &p.tb, &p.ldb) && \
           (sc1 == 1 || N == 1) && p.ldc >= N && K > 0 && p.lda <= 2147483647 && p.ldb <= 2147483647 && \
           p.ldc <= 2147483647 && M <= 2147483647 && N <= 2147483647 && K <= 2147483647; \
    return p; \
}

#define MI_STR_(...) #__VA_ARGS__
#define MI_STR(...) MI_STR_(__VA_ARGS__)

#endif
