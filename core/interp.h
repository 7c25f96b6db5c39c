/* interp.h — the reference interpreter: runs a Graph node by node with the reference
 * implementations of core/ops.c. It is the ground truth every pass and every generated kernel
 * is checked against. */
#ifndef INTERP_H
#define INTERP_H

#include "ops.h"

/* Run g on inputs (one per placeholder: IV_TENSOR, or IV_INT for SymInt placeholders; symbol
 * values are bound from SymInt inputs and from tensor shapes). On success *outs (malloc'd array
 * of *nouts IValues, caller frees with interp_free_outputs) holds the returned values. In-place
 * ops mutate the input tensors as PyTorch would. */
int interp_run(MiCtx *ctx, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts);
void interp_free_outputs(IValue *outs, int n);

/* Make random inputs matching g's placeholders (symbols bound from `syms`, else 8). */
int interp_random_inputs(MiCtx *ctx, const Graph *g, const SymBinding *syms, int nsyms,
                         IValue **inputs, int *ninputs);

#endif
