/* lowering.h — FX graph -> IR (Inductor's lowering.py, small).
 *
 * ir_lower() walks the graph in order and gives every node an IR value:
 * pointwise ops become pending inner functions (define-by-run closures over the ops handler),
 * views become re-indexing closures, reductions and extern kernels become buffers. Pending
 * storages are realized into ComputedBuffers when they have several users, feed a reduction
 * or extern kernel, are graph outputs, or their inner function grows too large.
 * The lowering table is one row {op name, lowering function, argument} per op, in family tables
 * by kind (core/lowering/lowering_{pointwise,views,reductions,indexing,extern}.c, internals in
 * lowering_impl.h) joined by core/lowering/lowering.c; an op without a row lowers to a
 * FallbackKernel when it has a reference implementation. lowering_supported() tells callers
 * (tests, the shell) whether a graph can be lowered before trying. */
#ifndef LOWERING_H
#define LOWERING_H

#include "ir/ir.h"

/* Lower a graph (after post-grad passes) to IR. NULL + ctx error naming op and node. */
IrModule *ir_lower(MiCtx *ctx, const Graph *g);

/* True when every call_function target of g has a lowering; otherwise *why (if non-NULL)
 * gets "unsupported op 'aten.foo' (node 'foo')" into buf. */
bool lowering_supported(const Graph *g, char *why, size_t n);

/* Number of ops with lowerings and their names (for the shell's help). */
int lowering_count(void);
const char *lowering_name(int i);

#endif
