/* pass_reinplace.c — reinplace_inplaceable_ops, after Inductor's fx_passes/reinplace.py:
 *
 *  1. canonicalize (canonicalize_view_scatter_ops): every view scatter (slice_scatter,
 *     select_scatter, diagonal_scatter, as_strided_scatter) becomes one generalized scatter
 *     (Inductor's _generalized_scatter(inp, src, view_ops)); a scatter whose src is another
 *     one's result on a view of the same base, `b = scatter(self, scatter(view2(self), src,
 *     [view1]), [view2])`, fuses into `scatter(self, src, [view2, view1])` at the inner one's place;
 *  2. decide: a scatter is reinplaced when its input can be mutated (no view of the input's
 *     storage is used after it; for a graph input, only when a copy_ epilogue writes it back)
 *     and it pays (both input and result are realized anyway, the result is copied back into
 *     the input, or a view is diagonal/as_strided); index_put -> index_put_ needs only the
 *     first condition, and so do the functional collectives (_c10d_functional.all_reduce ->
 *     all_reduce_, Inductor's inplaceable_collective_ops; seen in the multirank logs);
 *  3. decompose (decompose_generalized_scatter): first the functional ones in graph order, a
 *     view scatter per view (`slice_tensor = slice(self); slice_scatter_default =
 *     slice_scatter(slice_tensor, src); slice_scatter_default_1 = slice_scatter(self, ...)`,
 *     which is why the real post-grad graphs show those names with no stack), then the
 *     reinplaced ones: the views of inp + copy_(view, src), and their copy_ epilogue goes.
 * Storage is approximated by following view ops back to their base. Deviation: a fused inner
 * scatter whose result has other users is not fused (Inductor fuses and re-reads it as a view). */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

static const char *const SCATTER_TO_VIEW[][2] = {
    {"aten.slice_scatter.default", "aten.slice.Tensor"},
    {"aten.select_scatter.default", "aten.select.int"},
    {"aten.diagonal_scatter.default", "aten.diagonal.default"},
    {"aten.as_strided_scatter.default", "aten.as_strided.default"},
};

static const char *scatter_view(const char *t) {
    for (size_t i = 0; i < sizeof SCATTER_TO_VIEW / sizeof SCATTER_TO_VIEW[0]; i++)
        if (!strcmp(t, SCATTER_TO_VIEW[i][0])) return SCATTER_TO_VIEW[i][1];
    return NULL;
}

/* Ops that turn into their in-place form (same arguments) when their first input is dead
 * (reinplace.py inplaceable_ops and inplaceable_collective_ops). */
static const char *const INPLACEABLE[][2] = {
    {"aten.index_put.default", "aten.index_put_.default"},
    {"aten._unsafe_index_put.default", "prims._unsafe_index_put_.default"},
    {"_c10d_functional.all_reduce.default", "_c10d_functional.all_reduce_.default"},
    {"_c10d_functional.all_reduce_coalesced.default", "_c10d_functional.all_reduce_coalesced_.default"},
};

/* inplaceable_foreach_ops (lowering.py register_foreach_inplace): the list in args[0] is
 * mutated; reinplaced only when every item is a graph input copied back from this op. */
static const char *const FOREACH_INPLACEABLE[][2] = {
    {"aten._foreach_add.List", "aten._foreach_add_.List"},
    {"aten._foreach_add.Scalar", "aten._foreach_add_.Scalar"},
    {"aten._foreach_mul.List", "aten._foreach_mul_.List"},
    {"aten._foreach_mul.Scalar", "aten._foreach_mul_.Scalar"},
    {"aten._foreach_div.List", "aten._foreach_div_.List"},
    {"aten._foreach_div.Scalar", "aten._foreach_div_.Scalar"},
    {"aten._foreach_copy.default", "aten._foreach_copy_.default"},
    {"aten._foreach_addcmul.Scalar", "aten._foreach_addcmul_.Scalar"},
    {"aten._foreach_addcdiv.Scalar", "aten._foreach_addcdiv_.Scalar"},
};

static const char *lookup2(const char *const (*tab)[2], size_t n, const char *t) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t, tab[i][0])) return tab[i][1];
    return NULL;
}

static const char *inplace_form(const char *t) {
    return lookup2(INPLACEABLE, sizeof INPLACEABLE / sizeof INPLACEABLE[0], t);
}

static const char *foreach_inplace_form(const char *t) {
    return lookup2(FOREACH_INPLACEABLE, sizeof FOREACH_INPLACEABLE / sizeof FOREACH_INPLACEABLE[0], t);
}

static bool is_view(const Node *n) {
    return n->kind == N_CALL_FUNCTION && n->op && (n->op->flags & OPF_VIEW);
}

static Node *arg_node(const Node *n, int i) {
    return i < n->nargs && n->args[i].kind == V_NODE ? n->args[i].node : NULL;
}

static Node *new_call_named(PassCtx *pc, Graph *g, Node *before, const char *name, const char *target,
                            const Value *args, int nargs, const Kwarg *kw, int nkw) {
    Node *n = graph_insert_before(g, before, N_CALL_FUNCTION, name, target);
    graph_set_args(g, n, args, nargs);
    if (nkw) graph_set_kwargs(g, n, kw, nkw);
    n->op = op_lookup(target);
    n->stack = "";
    if (!n->op) {
        mi_err(pc->ctx, g->source, 0, 0, "reinplace: unsupported op '%s'", target);
        return NULL;
    }
    if (op_infer_node_meta(pc->ctx, g, n) < 0) return NULL;
    return n;
}

static Node *new_call(PassCtx *pc, Graph *g, Node *before, const char *target, const Value *args, int nargs,
                      const Kwarg *kw, int nkw) {
    return new_call_named(pc, g, before, pass_node_name_for(pc, g, target), target, args, nargs, kw, nkw);
}

/* ---- view chains (reinplace.py node_to_view_base / node_to_view_op) ---- */

/* One view applied to a tensor: the view op and its arguments after the tensor. A scatter
 * node's view is SCATTER_TO_VIEW of its target with the scatter's args[2:]. */
typedef struct ViewOp { const char *target; const Value *args; int nargs; const Kwarg *kw; int nkw; } ViewOp;
/* The views from a node's base to the node, linked from the last one back; len of them. */
typedef struct Chain { const struct Chain *prev; ViewOp op; int len; } Chain;

static ViewOp view_of_view(const Node *v) {
    return (ViewOp){v->target, v->args + 1, v->nargs - 1, v->kwargs, v->nkwargs};
}

static ViewOp view_of_scatter(const Node *s) {
    return (ViewOp){scatter_view(s->target), s->args + 2, s->nargs - 2, s->kwargs, s->nkwargs};
}

static bool viewop_eq(const ViewOp *a, const ViewOp *b) {
    if (strcmp(a->target, b->target) || a->nargs != b->nargs || a->nkw != b->nkw) return false;
    for (int i = 0; i < a->nargs; i++)
        if (!value_equal(&a->args[i], &b->args[i])) return false;
    for (int i = 0; i < a->nkw; i++)
        if (strcmp(a->kw[i].name, b->kw[i].name) || !value_equal(&a->kw[i].v, &b->kw[i].v)) return false;
    return true;
}

/* Is chain a exactly chain b followed by `last`? ([slice(2,0,3)] is [] + slice(2,0,3)) */
static bool chain_extends(const Chain *a, const Chain *b, const ViewOp *last) {
    if ((a ? a->len : 0) != (b ? b->len : 0) + 1 || !viewop_eq(&a->op, last)) return false;
    for (a = a->prev; a && b; a = a->prev, b = b->prev)
        if (!viewop_eq(&a->op, &b->op)) return false;
    return true;
}

/* ---- generalized scatters (reinplace.py _generalized_scatter) ---- */

#define GS_MAX 16
/* A canonicalized view scatter `_generalized_scatter(inp, src, view_ops)`. In the graph it is
 * `node`, a fresh copy of the outermost scatter; the views are those of lvl[0] (outermost)
 * .. lvl[nlvl-1] (innermost), the fresh nodes of the fused scatters, whose innermost args[1]
 * is src. Position: Inductor puts a fused scatter at the innermost one's place, lvl[nlvl-1]
 * (node itself when nothing fused); lvl[1..] stay in the graph, unused but for the next
 * level, until decompose removes them. */
typedef struct GScat {
    Node *node;
    Node *lvl[GS_MAX];
    int nlvl;
} GScat;

static Node *gs_inp(const GScat *q) { return arg_node(q->node, 0); }
static Node *gs_anchor(const GScat *q) { return q->lvl[q->nlvl - 1]; }
static Value gs_src(const GScat *q) { return gs_anchor(q)->args[1]; }

typedef struct {
    Graph *g;
    int *root;            /* storage root per node id */
    int *next_same;       /* next node id with the same root, -1 at the end (lists start at the root) */
    bool *root_has_input; /* some node of this storage is a placeholder / get_attr */
    Node **first_copy;    /* placeholder id -> first copy_ into it */
    int *pos;             /* where a node stands for these checks: a fused scatter at its innermost
                             level's place (reinplace.py inserts it there), others at their id */
    bool *gone;           /* fused inner levels: erased in Inductor's graph, but for their src */
} Stor;

static bool is_meta_only_user(const Node *u) {
    if (is_view(u)) {
        for (int k = 0; k < u->nusers; k++) if (!is_meta_only_user(u->users[k])) return false;
        return true;
    }
    return u->kind == N_CALL_FUNCTION && (!strcmp(u->target, "aten.sym_size.int") || !strcmp(u->target, "aten.sym_stride.int") ||
                                          !strcmp(u->target, "aten.sym_numel.default"));
}

static bool is_copy_(const Node *n) { return n->kind == N_CALL_FUNCTION && !strcmp(n->target, "aten.copy_.default"); }

/* Is a view of mutated's storage used after node (before copy_node, when given)? A fused
 * scatter's inner levels are gone from Inductor's graph except for their use of src. */
static bool any_use_after(Stor *s, const Node *node, const Node *copy_node, const Node *mutated) {
    int at = s->pos[node->id];
    for (int i = s->root[mutated->id]; i >= 0; i = s->next_same[i]) {
        const Node *v = s->g->nodes[i];
        for (int u = 0; u < v->nusers; u++) {
            const Node *us = v->users[u];
            if (us == node || (s->gone[us->id] && arg_node(us, 1) != v)) continue;
            int p = s->pos[us->id];
            if (p <= at) continue;
            if (copy_node && copy_node->id <= p) continue;
            if (is_meta_only_user(us)) continue;
            if (is_copy_(us) && arg_node(us, 0) == mutated) continue;
            return true;
        }
    }
    return false;
}

static bool can_inplace(Stor *s, const Node *node, const Node *mutated) {
    if (!mutated || mutated->id < 0) return false;
    if (mutated->kind == N_PLACEHOLDER || mutated->kind == N_GET_ATTR) {
        Node *c = s->first_copy[mutated->id];
        if (!c) return false;
        return !any_use_after(s, node, c, mutated);
    }
    if (s->root_has_input[s->root[mutated->id]]) return false;
    return !any_use_after(s, node, NULL, mutated);
}

static bool is_buffer(const Node *n) {
    if (n->kind == N_CALL_FUNCTION && !strcmp(n->target, "operator.getitem") && arg_node(n, 0)) return is_buffer(arg_node(n, 0));
    return n->kind == N_PLACEHOLDER || n->kind == N_OUTPUT || (n->op && (n->op->flags & OPF_EXTERN));
}

static bool is_realized(const Node *n) {
    if (is_buffer(n)) return true;
    for (int u = 0; u < n->nusers; u++) {
        const Node *us = n->users[u];
        if (us->kind == N_OUTPUT || (us->op && (us->op->flags & OPF_EXTERN))) return true;
    }
    return false;
}

static bool result_escapes(const Node *n, int depth) {
    if (depth > 64) return true;
    for (int u = 0; u < n->nusers; u++) {
        const Node *us = n->users[u];
        if (us->kind == N_OUTPUT) return true;
        if (is_view(us) && result_escapes(us, depth + 1)) return true;
    }
    return false;
}

/* scatter_always_uses_mutation: a diagonal or as_strided view among the levels (their
 * scatters are lowered into mutations anyway, so mutating is never a pessimisation). */
static bool gs_always_mutates(const GScat *q) {
    for (int k = 0; k < q->nlvl; k++) {
        const char *v = scatter_view(q->lvl[k]->target);
        if (!strcmp(v, "aten.diagonal.default") || !strcmp(v, "aten.as_strided.default")) return true;
    }
    return false;
}

/* should_reinplace_scatter: mutating pays when input and result are realized anyway, or the
 * result is copied back into the input; never when the input is a graph input whose result
 * escapes (the caller would get an alias of its own tensor). */
static bool should_reinplace_scatter(const GScat *q) {
    const Node *node = q->node;
    Node *inp = gs_inp(q);
    bool inp_is_input = inp->kind == N_PLACEHOLDER || inp->kind == N_GET_ATTR;
    if (inp_is_input && result_escapes(node, 0)) return false;
    if (gs_always_mutates(q)) return true;
    if (is_realized(inp) && is_realized(node)) return true;
    if (inp_is_input)
        for (int u = 0; u < node->nusers; u++)
            if (is_copy_(node->users[u]) && arg_node(node->users[u], 0) == inp) return true;
    return false;
}

/* The first copy_(item, src) of the epilogue whose src is the foreach node x or one of its
 * getitems (reinplace.py keys copy_ nodes by (dst, src), looking through such a getitem). */
static Node *foreach_copy_back(const Node *item, const Node *x) {
    for (int u = 0; u < item->nusers; u++) {
        Node *c = item->users[u];
        if (!is_copy_(c) || arg_node(c, 0) != item) continue;
        Node *src = arg_node(c, 1);
        if (src == x || (src && !strcmp(src->target ? src->target : "", "operator.getitem") && arg_node(src, 0) == x))
            return c;
    }
    return NULL;
}

/* A foreach op is reinplaced when every tensor of its first list is a graph input that a
 * copy_ of the epilogue writes back from it, the tensors are distinct storages, and each can
 * be mutated in place; those copy_ nodes then go. Marks them in drop_copy. */
static bool reinplace_foreach(Stor *s, Node *x, bool *drop_copy) {
    if (x->nargs < 1 || x->args[0].kind != V_LIST) return false;
    const Value *l = &x->args[0];
    Node **copies = mi_xcalloc(l->list.n + 1, sizeof *copies);
    bool ok = l->list.n > 0;
    for (int k = 0; k < l->list.n && ok; k++) {
        const Value *it = &l->list.items[k];
        Node *item = it->kind == V_NODE ? it->node : NULL;
        ok = item && (item->kind == N_PLACEHOLDER || item->kind == N_GET_ATTR) && (copies[k] = foreach_copy_back(item, x));
        for (int j = 0; j < k && ok; j++) ok = s->root[l->list.items[j].node->id] != s->root[item->id];
        ok = ok && can_inplace(s, x, item);
    }
    if (ok)
        for (int k = 0; k < l->list.n; k++) drop_copy[copies[k]->id] = true;
    free(copies);
    return ok;
}

/* Step 1, canonicalize_view_scatter_ops: each view scatter gets a fresh node in its place
 * (named _generalized_scatter as Inductor's, a name no final graph shows); one whose src is
 * the only use of a generalized scatter on view2(self), where view2 is this scatter's own
 * view of the same base, fuses with it. Returns per slot (= node id after) its GScat, or NULL. */
static GScat **canonicalize(PassCtx *pc, Graph *g) {
    int n0 = g->n, nsc = 0;
    graph_compute_users(g);
    Node **order = mi_xmalloc((n0 + 1) * sizeof *order);
    memcpy(order, g->nodes, n0 * sizeof *order);
    GScat **gs = mi_xcalloc(n0 + 1, sizeof *gs);
    const Chain **chain = mi_xcalloc(n0 + 1, sizeof *chain);
    Chain *cbuf = mi_xcalloc(n0 + 1, sizeof *cbuf);
    int *base = mi_xmalloc((n0 + 1) * sizeof *base);
    bool failed = false;
    for (int i = 0; i < n0 && !failed; i++) {
        Node *s = order[i], *a0 = arg_node(s, 0);
        base[i] = i;
        if (is_view(s) && a0 && a0->id >= 0 && a0->id < i) {
            const Chain *p = chain[a0->id];
            base[i] = base[a0->id];
            cbuf[i] = (Chain){p, view_of_view(s), (p ? p->len : 0) + 1};
            chain[i] = &cbuf[i];
        }
        if (s->kind != N_CALL_FUNCTION || !scatter_view(s->target) || s->nargs < 2 || !a0 || a0->id < 0) continue;
        Node *c = new_call_named(pc, g, NULL, pass_node_name_for(pc, g, "_generalized_scatter"), s->target, s->args,
                                 s->nargs, s->kwargs, s->nkwargs);
        if (!c) { failed = true; break; }
        pass_note(pc, '~', c->name, "canonicalized view scatter (was %s)", s->name);
        order[i] = c;
        nsc++;
        GScat *q = mi_xcalloc(1, sizeof *q);
        q->node = q->lvl[0] = c;
        q->nlvl = 1;
        Node *src = arg_node(s, 1);
        GScat *in = src && src->id >= 0 && src->id < i ? gs[src->id] : NULL;
        Node *iinp = in ? arg_node(in->node, 0) : NULL;
        ViewOp mine = view_of_scatter(s);
        if (in && src->nusers == 1 && in->nlvl < GS_MAX && iinp && iinp->id >= 0 && iinp->id < i &&
            base[iinp->id] == base[a0->id] && chain_extends(chain[iinp->id], chain[a0->id], &mine)) {
            for (int k = 0; k < in->nlvl; k++) q->lvl[1 + k] = in->lvl[k];
            q->nlvl = in->nlvl + 1;
            gs[src->id] = NULL;
            free(in);
            pass_note(pc, '~', c->name, "fused with the view scatter %s of its src", src->name);
        }
        gs[i] = q;
    }
    if (nsc && !failed) {
        Node **map = mi_xcalloc(g->n + 1, sizeof *map);
        for (int i = 0; i < n0; i++)
            if (order[i] != g->nodes[i]) map[i] = order[i];
        pu_replace_uses(g, map);
        for (int i = 0; i < n0; i++)
            if (map[i]) g->nodes[i]->id = -1;
        g->n = n0;
        pu_set_order(g, order);
        free(map);
    }
    free(order);
    free(chain);
    free(cbuf);
    free(base);
    if (failed) {
        for (int i = 0; i < n0; i++) free(gs[i]);
        free(gs);
        return NULL;
    }
    return gs;
}

/* The view args of level l applied to t: (t, l's args[2:]). */
static int level_view_args(const Node *l, Node *t, Value *va, int cap) {
    int nv = 0;
    va[nv++] = value_node(t);
    for (int a = 2; a < l->nargs && nv < cap; a++) va[nv++] = l->args[a];
    return nv;
}

/* _decompose_scatter_functional: levels k.. of q applied to inp, before q's anchor:
 * view = view_k(inp); src' = (levels k+1.. on view); return scatter_k(inp, src'). */
static Node *decompose_functional(PassCtx *pc, Graph *g, const GScat *q, int k, Node *inp, Value src) {
    const Node *l = q->lvl[k];
    Value va[16];
    if (k + 1 < q->nlvl) {
        int nv = level_view_args(l, inp, va, 16);
        Node *view = new_call(pc, g, gs_anchor(q), scatter_view(l->target), va, nv, l->kwargs, l->nkwargs);
        Node *inner = view ? decompose_functional(pc, g, q, k + 1, view, src) : NULL;
        if (!inner) return NULL;
        src = value_node(inner);
    }
    int nv = level_view_args(l, inp, va, 16);
    Value sa[17] = {va[0], src};
    for (int a = 1; a < nv; a++) sa[a + 1] = va[a];
    return new_call(pc, g, gs_anchor(q), l->target, sa, nv + 1, l->kwargs, l->nkwargs);
}

/* _decompose_scatter_mutating: the views of inp in turn, then copy_(view, src), before q's
 * anchor; with `clone` the views are of a clone of inp (a scatter that was not reinplaced but
 * always mutates), called through the packet as reinplace.py does (graph_call_function(graph,
 * aten.clone, inp): printed `torch.ops.aten.clone(add_1)`). Returns the tensor that holds the result. */
static Node *decompose_mutating(PassCtx *pc, Graph *g, const GScat *q, Node *inp, bool clone) {
    Node *at = gs_anchor(q), *tmp = inp;
    Value va[16];
    if (clone) {
        Value ca[1] = {value_node(inp)};
        tmp = inp = new_call_named(pc, g, at, pass_node_name_for(pc, g, "clone"), "aten.clone", ca, 1, NULL, 0);
    }
    for (int k = 0; k < q->nlvl && tmp; k++) {
        const Node *l = q->lvl[k];
        int nv = level_view_args(l, tmp, va, 16);
        tmp = new_call(pc, g, at, scatter_view(l->target), va, nv, l->kwargs, l->nkwargs);
    }
    if (!tmp) return NULL;
    Value cargs[2] = {value_node(tmp), gs_src(q)};
    return new_call(pc, g, at, "aten.copy_.default", cargs, 2, NULL, 0) ? inp : NULL;
}

/* q's node and its fused levels leave the graph (each level is the next one's only user). */
static void gs_remove(Graph *g, const GScat *q) {
    for (int k = 0; k < q->nlvl; k++) graph_remove_node(g, q->lvl[k]);
}

int pass_reinplace(PassCtx *pc, Graph *g) {
    /* 1. canonicalize view scatters (fresh nodes put in place: O(n)) */
    GScat **gs = canonicalize(pc, g);
    if (!gs) return -1;

    /* 2. decide */
    graph_compute_users(g);
    int n = g->n;
    Stor st = {g, mi_xcalloc(n + 1, sizeof(int)), mi_xcalloc(n + 1, sizeof(int)), mi_xcalloc(n + 1, sizeof(bool)),
               mi_xcalloc(n + 1, sizeof(Node *)), mi_xcalloc(n + 1, sizeof(int)), mi_xcalloc(n + 1, sizeof(bool))};
    int *last = mi_xcalloc(n + 1, sizeof(int));
    for (int i = 0; i < n; i++) st.pos[i] = i;
    for (int i = 0; i < n; i++)
        if (gs[i]) {
            st.pos[i] = gs_anchor(gs[i])->id;
            for (int k = 1; k < gs[i]->nlvl; k++) st.gone[gs[i]->lvl[k]->id] = true;
        }
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        st.root[i] = i;
        if (is_view(x) && arg_node(x, 0) && arg_node(x, 0)->id >= 0) st.root[i] = st.root[arg_node(x, 0)->id];
        int r = st.root[i];
        st.next_same[i] = -1;
        if (r != i) st.next_same[last[r]] = i;
        last[r] = i;
        if (x->kind == N_PLACEHOLDER || x->kind == N_GET_ATTR) st.root_has_input[r] = true;
        Node *dst = arg_node(x, 0);
        if (is_copy_(x) && dst && dst->id >= 0 && !st.first_copy[dst->id]) st.first_copy[dst->id] = x;
    }
    free(last);
    bool *reinplace = mi_xcalloc(n + 1, sizeof(bool));
    bool *drop_copy = mi_xcalloc(n + 1, sizeof(bool));
    int nre = 0;
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        if (x->kind != N_CALL_FUNCTION || st.gone[i]) continue;
        if (foreach_inplace_form(x->target)) {
            if (reinplace_foreach(&st, x, drop_copy)) { reinplace[i] = true; nre++; }
            continue;
        }
        bool scatter = gs[i] != NULL;
        bool iput = inplace_form(x->target) && arg_node(x, 0);
        if (!scatter && !iput) continue;
        Node *inp = arg_node(x, 0);
        if (!can_inplace(&st, x, inp)) continue;
        if (scatter && !should_reinplace_scatter(gs[i])) continue;
        reinplace[i] = true;
        nre++;
        /* the copy_ epilogue that writes this result back into the input goes away */
        for (int u = 0; u < x->nusers; u++)
            if (is_copy_(x->users[u]) && arg_node(x->users[u], 0) == inp) drop_copy[x->users[u]->id] = true;
    }
    /* 3. apply: in-place forms and dropped copies, then decompose_generalized_scatter: the
     * functional scatters in graph order, then the reinplaced ones */
    int rc = 0;
    GScat **func = mi_xcalloc(n + 1, sizeof *func), **mut = mi_xcalloc(n + 1, sizeof *mut);
    Node **copies = mi_xcalloc(n + 1, sizeof *copies), **retarget = mi_xcalloc(n + 1, sizeof *retarget);
    int nf = 0, nm = 0, nc = 0, nt = 0;
    for (int i = 0; i < n; i++) {
        if (gs[i] && reinplace[i]) mut[nm++] = gs[i];
        else if (gs[i]) func[nf++] = gs[i];
        else if (reinplace[i]) retarget[nt++] = g->nodes[i];
        if (drop_copy[i]) copies[nc++] = g->nodes[i];
    }
    for (int k = 0; k < nc; k++) {
        Node *c = copies[k];
        pass_note(pc, '-', c->name, "copy_ epilogue not needed: the input is mutated in place");
        graph_replace_all_uses(g, c, arg_node(c, 0));
        graph_remove_node(g, c);
    }
    for (int k = 0; k < nt; k++) {
        Node *x = retarget[k];
        const char *inpl = inplace_form(x->target);
        if (!inpl) inpl = foreach_inplace_form(x->target);
        char a[64], b[64];
        pass_note(pc, '~', x->name, "reinplaced: %s -> %s", pu_op_short(x->target, a, sizeof a), pu_op_short(inpl, b, sizeof b));
        x->target = inpl;
        x->op = op_lookup(x->target);
    }
    for (int k = 0; k < nf && rc == 0; k++) {
        const GScat *q = func[k];
        Node *x = q->node, *inp = gs_inp(q), *r;
        bool mutates = gs_always_mutates(q);
        if (!mutates && q->nlvl == 1)   /* the one scatter, under the name decompose gives it */
            r = new_call(pc, g, x, x->target, x->args, x->nargs, x->kwargs, x->nkwargs);
        else
            r = mutates ? decompose_mutating(pc, g, q, inp, true) : decompose_functional(pc, g, q, 0, inp, gs_src(q));
        if (!r) { rc = -1; break; }
        pass_note(pc, '~', r->name, "%s scatter of %d view%s (was %s)", mutates ? "cloned and mutated" : "functional",
                  q->nlvl, q->nlvl > 1 ? "s" : "", x->name);
        graph_replace_all_uses(g, x, r);
        gs_remove(g, q);
    }
    for (int k = 0; k < nm && rc == 0; k++) {
        const GScat *q = mut[k];
        Node *x = q->node, *inp = gs_inp(q);
        if (!decompose_mutating(pc, g, q, inp, false)) { rc = -1; break; }
        pass_note(pc, '-', x->name, "reinplaced: a view of %s written in place; users now read %s", inp->name, inp->name);
        graph_replace_all_uses(g, x, inp);
        gs_remove(g, q);
    }
    for (int i = 0; i < n; i++) free(gs[i]);
    free(gs);
    free(func);
    free(mut);
    free(copies);
    free(retarget);
    free(st.root);
    free(st.next_same);
    free(st.root_has_input);
    free(st.first_copy);
    free(st.pos);
    free(st.gone);
    free(reinplace);
    free(drop_copy);
    return rc;
}
