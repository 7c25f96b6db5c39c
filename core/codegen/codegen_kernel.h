/* codegen_kernel.h — one fused kernel as a C function (core/codegen/codegen_kernel.c), used by the
 * file-level emitter core/codegen/codegen_c.c. */
#ifndef CODEGEN_KERNEL_H
#define CODEGEN_KERNEL_H

#include "scheduler/scheduler.h"

/* C type name of a dtype, NULL when the C backend has none. */
const char *cg_ctype(DType t);
/* Does a kernel group write / read-or-write buffer b? */
bool cg_group_writes(const Schedule *s, const SchedGroup *g, const Buffer *b);
bool cg_group_touches(const Schedule *s, const SchedGroup *g, const Buffer *b);
/* The buffers a group touches: ids ascending (= IrModule.bufs order), writes[k] when it writes
 * ids[k]. malloc'd arrays (free both); returns the count. O(deps log deps). */
int cg_group_bufs(const Schedule *s, const SchedGroup *g, int **ids, bool **writes);
/* ... of every group of kernel k (a cpp kernel group: the union, same order). */
int cg_kernel_bufs(const Schedule *s, const SchedKernel *k, int **ids, bool **writes);
/* Append `static void <k->name>(bufs..., const int64_t *syms) {...}`: each group of k as its own
 * loop nest, in order; -1 + ctx error. mem (may be NULL): the module's memory plan; a buffer
 * written in place of another (CgMemPlan.inplace_of) is no argument of its own but a pointer
 * to the other's storage inside the kernel (Inductor's in_out_ptr). */
struct CgMemPlan;
int cg_emit_kernel(MiCtx *ctx, const Schedule *s, const SchedKernel *k, const struct CgMemPlan *mem, StrBuf *out);
/* Inductor's source-node comment for kernel k: "Topologically Sorted Source Nodes: [add, relu],
 * Original ATen: [aten.add, aten.relu]" (from the buffers' FX origins, core/ir/ir_origins.c),
 * as a C comment line after indent; nothing when the kernel has no FX origin. */
void cg_source_comment(const Schedule *s, const SchedKernel *k, const char *indent, StrBuf *out);
/* `const int mi_output_alias[] = {-1, 2, ...};` after decl (the C++ linkage prefix or ""):
 * per output, the index of the input it is (a graph input returned as it is: the caller's
 * tensor comes back, the module does not write outputs[j]), else -1. Outputs the module lays out
 * other than the graph's annotation get `int mi_output_strides(j, syms, out)` (runtime.h). */
void cg_emit_output_alias(const IrModule *m, const char *decl, StrBuf *out);
/* The mask arguments and the end of attention b's mi_sdpa call (the C and the CUDA backends):
 * "buf + offset, is_bool, OPEN s0, s1, s2, s3 CLOSE);", the mask's strides over [B, H, L, S]
 * with 0 where it broadcasts (a missing leading dim, or size 1), or "NONE);" without a mask.
 * Example, a bool [8, 8] mask in CUDA (open "MiStrides4{{", close "}}"):
 * "arg3_1 + 0LL, 1, MiStrides4{{0, 0, 8LL, 1LL}});". */
void cg_emit_sdpa_mask(StrBuf *sb, const Buffer *b, const char *open, const char *close, const char *none);

#endif
