/* pass_reinplace.c — reinplace_inplaceable_ops, after Inductor's fx_passes/reinplace.py:
 *
 *  1. canonicalize: every view scatter (slice_scatter, select_scatter, diagonal_scatter,
 *     as_strided_scatter) is rebuilt as a new node (Inductor's _generalized_scatter), which is
 *     why the real post-grad graphs show `slice_scatter_default` with no stack;
 *  2. decide: a scatter is reinplaced when its input can be mutated (no view of the input's
 *     storage is used after it; for a graph input, only when a copy_ epilogue writes it back)
 *     and it pays (both input and result are realized anyway, the result is copied back into
 *     the input, or the view is diagonal/as_strided); index_put -> index_put_ needs only the
 *     first condition, and so do the functional collectives (_c10d_functional.all_reduce ->
 *     all_reduce_, Inductor's inplaceable_collective_ops; seen in the multirank logs);
 *  3. decompose: reinplaced scatters become view(inp) + copy_(view, src) and their copy_
 *     epilogue goes; the others stay functional scatters.
 * Storage is approximated by following view ops back to their base. */
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

static Node *new_call(PassCtx *pc, Graph *g, Node *before, const char *target, const Value *args, int nargs,
                      const Kwarg *kw, int nkw) {
    const char *name = pass_node_name_for(pc, g, target);
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

typedef struct {
    Graph *g;
    int *root;            /* storage root per node id */
    int *next_same;       /* next node id with the same root, -1 at the end (lists start at the root) */
    bool *root_has_input; /* some node of this storage is a placeholder / get_attr */
    Node **first_copy;    /* placeholder id -> first copy_ into it */
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

static bool any_use_after(Stor *s, const Node *node, const Node *copy_node, const Node *mutated) {
    for (int i = s->root[mutated->id]; i >= 0; i = s->next_same[i]) {
        const Node *v = s->g->nodes[i];
        for (int u = 0; u < v->nusers; u++) {
            const Node *us = v->users[u];
            if (us->id <= node->id) continue;
            if (copy_node && copy_node->id <= us->id) continue;
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

static bool should_reinplace_scatter(const Node *node) {
    Node *inp = arg_node(node, 0);
    bool inp_is_input = inp->kind == N_PLACEHOLDER || inp->kind == N_GET_ATTR;
    if (inp_is_input && result_escapes(node, 0)) return false;
    const char *v = scatter_view(node->target);
    if (v && (!strcmp(v, "aten.diagonal.default") || !strcmp(v, "aten.as_strided.default"))) return true;
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

int pass_reinplace(PassCtx *pc, Graph *g) {
    /* 1. canonicalize view scatters into fresh nodes (appended, then put in place: O(n)) */
    int n0 = g->n, nsc = 0;
    Node **order = mi_xmalloc((n0 + 1) * sizeof *order);
    memcpy(order, g->nodes, n0 * sizeof *order);
    for (int i = 0; i < n0; i++) {
        Node *s = order[i];
        if (s->kind != N_CALL_FUNCTION || !scatter_view(s->target) || s->nargs < 2 || !arg_node(s, 0)) continue;
        Node *c = new_call(pc, g, NULL, s->target, s->args, s->nargs, s->kwargs, s->nkwargs);
        if (!c) { free(order); return -1; }
        pass_note(pc, '~', c->name, "canonicalized view scatter (was %s)", s->name);
        order[i] = c;
        nsc++;
    }
    if (nsc) {
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

    /* 2. decide */
    graph_compute_users(g);
    int n = g->n;
    Stor st = {g, mi_xcalloc(n + 1, sizeof(int)), mi_xcalloc(n + 1, sizeof(int)), mi_xcalloc(n + 1, sizeof(bool)),
               mi_xcalloc(n + 1, sizeof(Node *))};
    int *last = mi_xcalloc(n + 1, sizeof(int));
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
        if (x->kind != N_CALL_FUNCTION) continue;
        if (foreach_inplace_form(x->target)) {
            if (reinplace_foreach(&st, x, drop_copy)) { reinplace[i] = true; nre++; }
            continue;
        }
        bool scatter = scatter_view(x->target) != NULL && arg_node(x, 0);
        bool iput = inplace_form(x->target) && arg_node(x, 0);
        if (!scatter && !iput) continue;
        Node *inp = arg_node(x, 0);
        if (!can_inplace(&st, x, inp)) continue;
        if (scatter && !should_reinplace_scatter(x)) continue;
        reinplace[i] = true;
        nre++;
        /* the copy_ epilogue that writes this result back into the input goes away */
        for (int u = 0; u < x->nusers; u++)
            if (is_copy_(x->users[u]) && arg_node(x->users[u], 0) == inp) drop_copy[x->users[u]->id] = true;
    }
    /* 3. apply */
    int rc = 0;
    if (nre) {
        Node **todo = mi_xcalloc(n + 1, sizeof *todo);
        Node **copies = mi_xcalloc(n + 1, sizeof *copies);
        int nt = 0, nc = 0;
        for (int i = 0; i < n; i++) {
            if (reinplace[i]) todo[nt++] = g->nodes[i];
            if (drop_copy[i]) copies[nc++] = g->nodes[i];
        }
        for (int k = 0; k < nc; k++) {
            Node *c = copies[k];
            pass_note(pc, '-', c->name, "copy_ epilogue not needed: the input is mutated in place");
            graph_replace_all_uses(g, c, arg_node(c, 0));
            graph_remove_node(g, c);
        }
        for (int k = 0; k < nt && rc == 0; k++) {
            Node *x = todo[k];
            Node *inp = arg_node(x, 0);
            const char *inpl = inplace_form(x->target);
            if (!inpl) inpl = foreach_inplace_form(x->target);
            if (inpl) {
                char a[64], b[64];
                pass_note(pc, '~', x->name, "reinplaced: %s -> %s", pu_op_short(x->target, a, sizeof a),
                          pu_op_short(inpl, b, sizeof b));
                x->target = inpl;
                x->op = op_lookup(x->target);
                continue;
            }
            const char *vt = scatter_view(x->target);
            Value vargs[16];
            int nv = 0;
            vargs[nv++] = value_node(inp);
            for (int a = 2; a < x->nargs && nv < 16; a++) vargs[nv++] = x->args[a];
            Node *view = new_call(pc, g, x, vt, vargs, nv, x->kwargs, x->nkwargs);
            if (!view) { rc = -1; break; }
            Value cargs[2] = {value_node(view), x->args[1]};
            Node *cp = new_call(pc, g, x, "aten.copy_.default", cargs, 2, NULL, 0);
            if (!cp) { rc = -1; break; }
            pass_note(pc, '+', view->name, "reinplaced %s: view of the input", x->name);
            pass_note(pc, '+', cp->name, "reinplaced %s: write src in place", x->name);
            pass_note(pc, '-', x->name, "reinplaced: users now read %s", inp->name);
            graph_replace_all_uses(g, x, inp);
            graph_remove_node(g, x);
        }
        free(todo);
        free(copies);
    }
    free(st.root);
    free(st.next_same);
    free(st.root_has_input);
    free(st.first_copy);
    free(reinplace);
    free(drop_copy);
    return rc;
}
