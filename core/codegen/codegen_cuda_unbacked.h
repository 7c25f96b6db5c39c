/* codegen_cuda_unbacked.h — unbacked SymInts in the CUDA backend's launch function
 * (core/codegen/codegen_cuda_unbacked.c): item() read back to the host, data-dependent
 * FallbackKernel results copied to device storage allocated once their size is known, buffers
 * they size allocated at their first writer. Used by core/codegen/codegen_cuda.c. */
#ifndef CODEGEN_CUDA_UNBACKED_H
#define CODEGEN_CUDA_UNBACKED_H

#include "codegen/codegen_kernel.h"

/* 0, or -1 with a ctx error for what the backend does not do yet: an output sized by an
 * unbacked symbol, unbacked symbols with cond / while_loop. */
int cu_unbacked_check(MiCtx *ctx, const Schedule *s);
/* Is b's storage allocated once an unbacked symbol defined inside the module is known? */
bool cu_unbacked_late(const IrModule *m, const Buffer *b);
/* Per buffer id its mi_ub slot (-1: none; malloc'd), *n the count. */
int *cu_unbacked_slots(const IrModule *m, int *n);
/* `MI_CK(cudaMallocAsync(&b, bytes, mi_st)); mi_ub[slot] = b;` at b's first writer. */
void cu_unbacked_alloc(const IrModule *m, const Buffer *b, int slot, const char *ctype, StrBuf *out);
/* `u1 = b.item()` for each item() of buffer b (element type ctype): copied to the host, the
 * stream synchronized, the symbol set in mi_sy. */
void cu_unbacked_item_defs(const IrModule *m, const Buffer *b, const char *ctype, StrBuf *out);
/* Inside a host round trip, after the call: result o (fo[k]), whose size the call decided, to
 * device storage (mi_ub[slot]) and the symbols its sizes define. */
void cu_unbacked_fresh_result(const IrModule *m, const Buffer *o, int k, int slot, const char *ctype, StrBuf *out);
/* Free the n late allocations at the end of the launch function. */
void cu_unbacked_free(int n, StrBuf *out);

#endif
