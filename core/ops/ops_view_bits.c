/* ops_view_bits.c — ATen's conjugate and negative bits (Tensor.is_conj(), is_neg()) in our
 * tensor metas. They are lazy: aten._conj of a complex tensor returns a view with the
 * conjugate bit set instead of conjugating, _neg_view likewise with the negative bit, every
 * view keeps its base's bits (a view shares its base's dispatch keys) and an op that writes a
 * fresh tensor (clone, resolve_conj, arithmetic) resolves them: its result has neither.
 * The printed annotation never shows them, yet Inductor reads them: post_grad.py's same_meta
 * (remove_noop_ops) compares is_conj() and is_neg(), so clone(_conj) is no no-op (hyena's FFT
 * convolution backward keeps clone(_conj) as Inductor does). Where they come from:
 *   - op_infer_meta gives every inferred meta its bits (op_view_bits);
 *   - ops_resolve_graph derives them over a loaded graph in program order;
 *   - a backward graph loaded from a log takes its placeholders' bits from the forward graph
 *     of the same compile (ops_view_bits_from_forward): AOT's partitioner gives a saved
 *     tensor's placeholder the meta of the forward node that produced it. */
#include "ops/ops.h"

#include <string.h>

/* The node whose bits n's result shares when n is a view, else NULL: args[0] of a view op,
 * the base of a multi-output view op for its getitems (split, unbind). */
static const Node *view_base(const Node *n) {
    if (n->kind != N_CALL_FUNCTION || n->nargs < 1 || n->args[0].kind != V_NODE) return NULL;
    const Node *x = n->args[0].node;
    if (!strcmp(n->target, "operator.getitem")) {
        if (x->kind == N_CALL_FUNCTION && x->op && (x->op->flags & OPF_VIEW) && x->nargs > 0 && x->args[0].kind == V_NODE)
            return x->args[0].node;
        return NULL;
    }
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    return op && (op->flags & OPF_VIEW) ? x : NULL;
}

/* The conjugate / negative bits of n's result from its inputs' metas, as ATen sets them.
 * The trick: only a handful of ops set or keep a bit; every other op materializes.
 * Examples: _conj(x: c64) -> conj; _conj(x: f32) -> x's bits (ATen returns x itself);
 * permute(_conj) -> conj; clone(_conj) -> plain; resolve_conj(plain x) -> x's bits. */
void op_view_bits(const Node *n, bool *conj, bool *neg) {
    *conj = *neg = false;
    if (n->kind != N_CALL_FUNCTION) return;
    const char *t = n->target;
    const Node *x = n->nargs > 0 && n->args[0].kind == V_NODE ? n->args[0].node : NULL;
    bool xc = x && x->has_meta && x->meta.is_conj, xn = x && x->has_meta && x->meta.is_neg;
    if (!strcmp(t, "aten._conj.default") || !strcmp(t, "aten.conj.default")) {
        *conj = x && x->has_meta && dtype_is_complex(x->meta.dtype) ? !xc : xc;
        *neg = xn;
        return;
    }
    if (!strcmp(t, "aten._neg_view.default")) { *conj = xc; *neg = !xn; return; }
    /* resolve_conj / resolve_neg return self when its bit is clear, else a clone */
    if (!strcmp(t, "aten.resolve_conj.default")) { if (!xc) { *neg = xn; } return; }
    if (!strcmp(t, "aten.resolve_neg.default")) { if (!xn) { *conj = xc; } return; }
    const Node *b = view_base(n);
    if (b && b->has_meta) { *conj = b->meta.is_conj; *neg = b->meta.is_neg; }
}

/* Derive the bits of every op node of g (and its subgraphs) in program order; placeholders
 * keep theirs. Example: a graph parsed from text whose _conj output feeds a permute: both get
 * the conjugate bit. */
void ops_view_bits_graph(Graph *g) {
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind == N_CALL_FUNCTION && n->has_meta) op_view_bits(n, &n->meta.is_conj, &n->meta.is_neg);
    }
    for (int s = 0; s < g->nsubs; s++) ops_view_bits_graph(g->subs[s].g);
}

/* Give bw's placeholders the bits of the nodes of fw (its forward, bits derived) they are
 * named after — the saved tensors the forward returns and the primals — and derive bw's
 * bits from them. Returns how many placeholders got a bit. Example: hyena's forward returns
 * `_conj = aten._conj(_fft_r2c)`; the backward's placeholder `_conj` becomes a conjugate
 * view, so its clone stays. */
int ops_view_bits_from_forward(Graph *bw, const Graph *fw) {
    int set = 0;
    for (int i = 0; i < bw->n; i++) {
        Node *p = bw->nodes[i];
        if (p->kind != N_PLACEHOLDER || !p->has_meta) continue;
        const Node *f = graph_find((Graph *)fw, p->name);
        if (!f || !f->has_meta || f->meta.dtype != p->meta.dtype || f->meta.ndim != p->meta.ndim) continue;
        p->meta.is_conj = f->meta.is_conj;
        p->meta.is_neg = f->meta.is_neg;
        set += p->meta.is_conj || p->meta.is_neg;
    }
    ops_view_bits_graph(bw);
    return set;
}
