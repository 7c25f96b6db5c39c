/* codegen_cuda_extern.h — the extern kernels of the CUDA backend (codegen_cuda.c calls them):
 * GEMMs as Inductor's extern_kernels.mm / addmm / bmm (cuBLAS, loaded at run time, with a
 * templated shared-memory GEMM when it is absent), attention (a flash-attention style kernel for
 * the `_scaled_dot_product_*` externs) and convolution (im2col + that GEMM). */
#ifndef CODEGEN_CUDA_EXTERN_H
#define CODEGEN_CUDA_EXTERN_H

#include "scheduler/scheduler.h"

/* Which extern sources a module needs. */
typedef struct CuExterns { bool mm, sdpa, conv; } CuExterns;

/* The device and host code of the externs in x (after the prelude and MiStrides4). With mm or
 * conv it also defines `extern "C" const char *mi_cuda_libs(void)`: which GEMM runs ("cuBLAS
 * (/path/libcublas.so.13)", or "templated GEMM (cuBLAS not loaded: why)"). */
void cg_cuda_extern_sources(const CuExterns *x, StrBuf *out);

/* The launch of extern b (mm / addmm / bmm / attention / convolution) inside mi_launch. */
void cg_cuda_emit_extern(const Buffer *b, StrBuf *sb);

/* Does this backend have a GPU kernel for convolution b? Not transposed, 1-3 spatial dims, every
 * tensor of the output's floating dtype, a 1-d bias, and the output's spatial dims one run of
 * memory (NCHW or NHWC: each spatial stride is the next one times its size). */
bool cg_cuda_conv_on_gpu(const Buffer *b);

/* Static head size D >= max(E, Ev) the attention kernel is instantiated with (32, 64, 128 or
 * 256), 0 when a size is symbolic (chosen at run time), -1 when larger (the row kernel). */
int cg_cuda_sdpa_head(const Buffer *b);

#endif
