/* functionalize.h — turn a graph with in-place ops (add_, mul_, copy_, index_put_, ...) and
 * views of mutated tensors into a functional graph, the form AOTAutograd hands Inductor:
 *
 *   - every in-place op becomes its functional variant (add_ -> add) whose result is the new
 *     value of the mutated tensor;
 *   - a mutation through a view is scattered back into its base (slice -> slice_scatter,
 *     select -> select_scatter, view -> view to the base's shape, permute -> inverse permute,
 *     ...), and later uses of any view of that base are regenerated from the new base value;
 *   - mutated graph inputs get a final copy_(input, new_value) before the output.
 *
 * The result of cpu/view_mutation's eager code is the same graph as its pre_post_grad.py. */
#ifndef FUNCTIONALIZE_H
#define FUNCTIONALIZE_H

#include "fx/graph.h"

/* True when g has an in-place op other than the copy_-into-input epilogue (a copy_ into an
 * input whose result, or whose input, is read after it counts as an in-place op). */
bool functionalize_needed(const Graph *g);
/* n is copy_(placeholder, value) and neither the placeholder nor n is read after it. */
bool functionalize_copy_is_epilogue(const Graph *g, const Node *n);
/* n is an in-place foreach op (_foreach_add_.List, as reinplace makes it) whose first list holds
 * placeholders only, none of them read after it: like the copy_ epilogue, the lowering writes
 * the new values into those inputs (core/lowering/lowering_foreach.c). */
bool functionalize_foreach_is_epilogue(const Graph *g, const Node *n);
/* n is index_put_ / prims._unsafe_index_put_ into a placeholder or into an intermediate that is
 * no view, not read after it (its readers read n): Inductor's index_put_ lowering scatters into
 * that tensor (lowering_gather.c). */
bool functionalize_scatter_in_place(const Graph *g, const Node *n);
/* functionalize_needed, less those in-place scatters: whether ir_lower lowers g's functional form. */
bool functionalize_needed_for_lowering(const Graph *g);

/* New functional graph (g is unchanged). NULL with ctx error (e.g. an in-place op without a
 * functional variant, a mutation through an expand). */
Graph *functionalize(MiCtx *ctx, const Graph *g);

#endif
