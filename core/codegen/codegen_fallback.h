/* codegen_fallback.h — FallbackKernel calls in generated code, shared by both backends.
 *
 * A compiled module runs an op it has no kernel for by calling back into minductor (the
 * callback table MiFb of core/runtime/runtime.h, "Fallbacks"): it describes each argument and
 * result as an MiFbTensor {data, dtype, ndim, offset, size, stride} and asks fb->run to execute
 * the graph node with the C reference implementation (core/ir/ir_fallback.c). The C backend
 * passes its buffers directly; the CUDA backend passes host copies (a host round trip, see
 * core/codegen/codegen_cuda.c). */
#ifndef CODEGEN_FALLBACK_H
#define CODEGEN_FALLBACK_H

#include "scheduler/scheduler.h"

/* MI_FALLBACK_FAILED, MiFbTensor and MiFb as C declarations (valid C and C++). */
extern const char cg_fallback_abi[];

/* The results the callback fills for extern buffer b: the MultiOutput items of a
 * MultiOutputLayout (a FallbackKernel's, the attention's: out, logsumexp, ...; NULL for an item
 * that is not a tensor), else b itself. */
int cg_fallback_outs(const Buffer *b, const Buffer **outs, int max);

/* A MultiOutput node's line in call(): nothing runs, its owner's call filled it
 * ("buf4 = buf3[0]" in Inductor's wrapper), so a comment says where its data came from. */
void cg_emit_multi_output(const Buffer *b, StrBuf *sb);
/* A ConcatKernel's line (a NopKernelSchedulerNode): a comment, its inputs wrote its storage. */
void cg_emit_concat(const Buffer *b, StrBuf *sb);

/* The node the callback runs for b ("true_graph_0_" + name inside a cond branch); NULL when b
 * has no graph node. */
const char *cg_fallback_node(const Buffer *b, char *buf, size_t n, const IrModule *m);

/* Append the argument and result descriptions of b (`const MiFbTensor fa[] = {...}; fo[];
 * fsn[]; fsv[]`, 8 spaces in). arg_data[i] / out_data[k] name the memory of argument i /
 * result k; NULL arrays: the buffers' own names. */
void cg_emit_fallback_descs(StrBuf *sb, const IrModule *m, const Buffer *b, const char *const *arg_data,
                            const char *const *out_data);

/* Append the call expression, nonzero when it failed:
 * `!fb || !fb->run || fb->run(fb->ctx, "node", nargs, fa, nouts, fo, nsyms, fsn, fsv)`. */
void cg_emit_fallback_run(StrBuf *sb, const IrModule *m, const Buffer *b);

#endif
