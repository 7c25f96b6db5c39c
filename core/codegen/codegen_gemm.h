/* codegen_gemm.h — the generated C module's matrix products in the dtypes beside f32
 * (core/codegen/codegen_gemm.c): extern_kernels.mm / addmm / bmm of an f64, f16 or bf16 graph
 * call mi_gemm_f64 / mi_gemm_f16 / mi_gemm_bf16, with the signature of the f32 mi_gemm that
 * codegen_c.c emits (the halves call it after widening to f32). */
#ifndef CODEGEN_GEMM_H
#define CODEGEN_GEMM_H

/* mi_gemm_f64 (needs mi_gemm's prelude: omp.h, cblas.h under MI_HAVE_CBLAS) */
extern const char cg_gemm_f64_src[];
/* mi_gemm_f16 / mi_gemm_bf16 (need mi_gemm and the half helpers mi_h2f / mi_f2h / mi_bf2f /
 * mi_f2bf) */
extern const char cg_gemm_half_src[];

#endif
