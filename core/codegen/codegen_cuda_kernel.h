/* codegen_cuda_kernel.h — one fused group as a CUDA __global__ kernel and its launch
 * (core/codegen/codegen_cuda_kernel.c), used by the file-level emitter core/codegen/codegen_cuda.c. */
#ifndef CODEGEN_CUDA_KERNEL_H
#define CODEGEN_CUDA_KERNEL_H

#include "scheduler/scheduler.h"

/* CUDA C++ type of a dtype, NULL when the backend has none. */
const char *cu_type(DType t);
/* Has a kernel group a reduction? (Which buffers it writes / touches: cg_group_writes /
 * cg_group_touches of codegen_kernel.h.) */
bool cu_group_has_reduction(const Schedule *s, const SchedGroup *g);
/* Append the group's __global__ kernel (flat pointwise or row kernel); -1 + ctx error. Uses the
 * file prelude's helpers (mi_block_reduce, mi_col_reduce, MiWelford, MiSyms, ...). */
int cu_emit_kernel(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out);
/* Append the host-side launch of the group (inside mi_launch: mi_st, mi_sy, mi_sms, mi_pdl in
 * scope); pdl: a generated kernel was launched just before, so this one may start early
 * (programmatic dependent launch, when mi_pdl). */
void cu_emit_launch(const Schedule *s, const SchedGroup *g, bool pdl, StrBuf *out);
/* Is buffer b never stored by the kernel that writes it (a persistent row kernel keeps it in
 * registers alone)? Then the launch function allocates nothing for it. */
bool cu_buffer_unstored(const Schedule *s, const Buffer *b);
/* A combo kernel (the subnodes of a foreach node, SchedKernel.combo): one __global__ whose
 * blocks each run one sub-kernel's flat loops (pointwise groups only), and its launch. */
int cu_emit_combo(MiCtx *ctx, const Schedule *s, const SchedKernel *k, StrBuf *out);
void cu_emit_combo_launch(const Schedule *s, const SchedKernel *k, StrBuf *out);

/* ---- scans and sorts (core/codegen/codegen_cuda_scan.c) ---- */
/* The device templates of scan and sort nodes (MiSP, the combine functors, mi_scan_chunk,
 * mi_block_sort): the prelude holds them when some node scans (cu_module_has_scan). */
const char *cu_scan_prelude(void);
/* The body's ops.scan / ops.sort op, NULL when it has none. */
const LoopOp *cu_body_scan(const LoopBody *b);
bool cu_group_has_scan(const Schedule *s, const SchedGroup *g);
bool cu_module_has_scan(const Schedule *s);
/* The combine functor of a scan op ("MiScanAdd", "MiScanArg<0>"); NULL for the sort. */
const char *cu_scan_functor(IrScanOp op);
/* Shared memory of a kernel with scans: blockDim.x (<= 1024) MiSP<T> of at most 16 bytes, or
 * a sort's four arrays of 512 elements of at most 8 bytes */
#define CU_SCAN_SHARED_BYTES 16384

#endif
