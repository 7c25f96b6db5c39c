/* interp.h — the reference interpreter: runs a Graph node by node with the reference
 * implementations of core/ops/ops.c. It is the ground truth every pass and every generated kernel
 * is checked against. */
#ifndef INTERP_H
#define INTERP_H

#include "ops/ops.h"

/* Run g on inputs (one per placeholder: IV_TENSOR, or IV_INT for SymInt placeholders; symbol
 * values are bound from SymInt inputs and from tensor shapes). On success *outs (malloc'd array
 * of *nouts IValues, caller frees with interp_free_outputs) holds the returned values. In-place
 * ops mutate the input tensors as PyTorch would. */
int interp_run(MiCtx *ctx, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts);
/* interp_run in float64: every floating tensor the graph makes is f64 (complex: c128) whatever
 * dtype the graph names, so explicit casts to bf16/f32 round nothing; the inputs are cloned
 * up to f64. The reference torch._dynamo.utils.same(fp64_ref=) measures rounding against
 * (core/ops/numerics.c). Fails (ctx error) on graphs that reinterpret bits (view.dtype). */
int interp_run_fp64(MiCtx *ctx, const Graph *g, const IValue *inputs, int ninputs, IValue **outs, int *nouts,
                    IValue **inputs_after);
/* Run a subgraph of a higher-order op from inside an op's eval, in the caller's mode. */
int interp_run_sub(const OpCall *c, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts);
/* interp_run_sub without the placeholder checks: tensors of any shape broadcast through the
 * subgraph's ops (a vmap of a 0-dim function, for pointwise bodies: flex_attention's score_mod). */
int interp_run_sub_bcast(const OpCall *c, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts);
void interp_free_outputs(IValue *outs, int n);

/* An argument's run-time value as ops' eval functions take it (core/ops/ops.h OpCall.argv): node
 * references through node_value (which stores an owned reference in *out), lists holding nodes
 * as IV_TUPLEs whose constants become scalars, symbolic sizes evaluated under syms, other
 * top-level constants IV_NONE (ops read those from the Value). The interpreter and the
 * FallbackKernel runtime (core/ir/ir_fallback.c) both resolve arguments with it. */
typedef int (*InterpNodeValueFn)(void *env, const Node *ref, IValue *out);
int interp_resolve_arg(MiCtx *ctx, const Value *v, IValue *out, bool nested, const SymBinding *syms, int nsyms,
                       InterpNodeValueFn node_value, void *env);

/* Make random inputs matching g's placeholders (symbols bound from `syms`, else 8); tensor
 * constants the session has no value for (mi_const_get) get random values too. Integer tensors
 * are zeros (valid as any index), except the pivots a solve reads (linalg_lu_solve, lu_unpack,
 * linalg_ldl_solve): identity pivots 1..n. */
int interp_random_inputs(MiCtx *ctx, const Graph *g, const SymBinding *syms, int nsyms,
                         IValue **inputs, int *ninputs);
/* Inputs for a backward graph bw as a training step hands them over: fw (its forward, from the
 * same compile) runs on random inputs, and bw's placeholders named as fw's placeholders (the
 * primals) or as fw's outputs (the saved tensors: LU and pivots of a slogdet, a dropout mask)
 * take those values in their own layouts; the rest (the tangents) are random. *taken counts
 * the placeholders filled from the forward. -1 with ctx error when the forward does not run. */
int interp_random_inputs_from_forward(MiCtx *ctx, const Graph *bw, const Graph *fw, IValue **inputs, int *ninputs, int *taken);

#endif
