/* fuzz_graph.h — what the graph-running fuzz targets share (fuzz_lower, fuzz_exec, fuzz_passes):
 * the bound on an input's size, and copies of its inputs for a second run. Header-only: each
 * target is one .c file linked with build-fuzz/lib.a (Makefile). */
#ifndef FUZZ_GRAPH_H
#define FUZZ_GRAPH_H

#include "fx/graph.h"
#include "ops/interp.h"
#include <stdlib.h>

/* Does every placeholder of g hold at most 64K elements (a symbolic size counted as 8)? Bigger
 * inputs are skipped, to keep an execution fast. */
static inline bool fz_small_graph(const Graph *g) {
    for (int k = 0; k < graph_num_placeholders(g); k++) {
        const Node *p = graph_placeholder(g, k);
        int64_t numel = 1, v;
        for (int i = 0; p->has_meta && i < p->meta.ndim; i++) {
            if (!sym_is_int(p->meta.size[i], &v)) v = 8;
            if (v < 0 || v > 65536) return false;
            numel *= v;
            if (numel > 65536) return false;
        }
    }
    return true;
}

/* in[0..n) with every tensor cloned (a run may mutate its inputs); interp_free_outputs it. */
static inline IValue *fz_clone(MiCtx *ctx, const IValue *in, int n) {
    IValue *c = calloc((size_t)n + 1, sizeof *c);
    for (int i = 0; i < n; i++) {
        c[i] = in[i];
        if (in[i].kind == IV_TENSOR) c[i].t = tensor_clone(ctx, in[i].t);
    }
    return c;
}

#endif
