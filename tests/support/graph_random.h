/* graph_random.h — random valid graphs for robustness testing, and a minimizer for the ones
 * that break something.
 *
 * graph_random() builds an ATen graph from a seed: f32 placeholders with broadcast-compatible
 * shapes (static, or with symbolic dims), then a chain of calls drawn from the op registry (pointwise unary/binary/
 * scalar, comparisons + where, reductions, softmax, views, in-place mutations, cat, dtype
 * conversions, mm/addmm, decomposed softmax). Every node's meta comes from the registry's own inference (op_infer_node_meta),
 * and a candidate call whose inference fails is dropped, so the result always lints clean and
 * runs in the reference interpreter. The same seed gives the same graph (and the same FX text).
 *
 * graph_minimize() shrinks a graph while a caller's predicate keeps holding ("still fails"):
 * it drops outputs, replaces a node by one of its inputs of the same meta, and removes nodes
 * nobody uses, until no single step keeps the failure. Used by tests/test_random_graphs.c to
 * print a small repro as FX text; the shell and bench can use both. */
#ifndef GRAPH_RANDOM_H
#define GRAPH_RANDOM_H

#include "fx/graph.h"

typedef struct RandomGraphOpts {
    int max_inputs;       /* placeholders: 1..max_inputs (default 3) */
    int max_calls;        /* call_function nodes: 2..max_calls (default 12) */
    int max_rank;         /* 1..max_rank (default 3) */
    int max_dim;          /* each size 1..max_dim (default 6) */
    int max_outputs;      /* 1..max_outputs returned values (default 3) */
    bool views;           /* permute, transpose, view, unsqueeze, slice, select, expand */
    bool reductions;      /* sum, mean, amax, amin, argmax, softmax, log_softmax */
    bool mutations;       /* add_, mul_, relu_, copy_ on inputs and intermediates */
    bool view_mutations;  /* also mutate slice/select views of intermediates */
    bool risky_math;      /* log, sqrt, reciprocal, ... (may make nan/inf) */
    int cuda_percent;     /* share of graphs whose tensors are on cuda:0 (default 25): the
                             cuda-only pattern passes run on those; the interpreter runs them
                             on the CPU all the same */
    int symbolic_percent; /* share of graphs with dynamic shapes (default 25): some dims are
                             symbols s0, s1, ... with SymInt placeholders first; every symbol's
                             hint is 8, the value interp_random_inputs binds by default */
} RandomGraphOpts;

void graph_random_default_opts(RandomGraphOpts *o);   /* everything on, defaults above */

/* A random valid graph (ops resolved, metas inferred, lint clean). opts NULL = defaults.
 * NULL + ctx error only if the registry lacks the basic ops. */
Graph *graph_random(MiCtx *ctx, uint64_t seed, const RandomGraphOpts *opts);

/* Predicate for the minimizer: true when g still shows the failure. */
typedef bool (*GraphFailsFn)(MiCtx *ctx, const Graph *g, void *ud);

/* A smallest-found clone of g for which fails() still holds (g itself is not changed).
 * fails(g) should hold on entry; at most max_tries predicate calls (0 = 2000). */
Graph *graph_minimize(MiCtx *ctx, const Graph *g, GraphFailsFn fails, void *ud, int max_tries);

#endif
