/* pass_noop.c — remove_noop_ops: drop ops that return their input unchanged and rewire their
 * users to that input, with Inductor's rules (fx_passes/post_grad.py noop_registry): clone,
 * alias, copy (not into pinned memory), full slices, slice_scatter of a whole tensor, repeat
 * by ones, zero padding, same-dtype casts, device_put to the same device, int (not bool)
 * ceil/floor/round/trunc, pow 1, single-input cat, same-shape view.
 * The op's result must have the same meta as the input, and no new aliasing between graph
 * inputs and outputs may appear; a copy of a tensor that an in-place op writes (a mutated
 * input) stays when it is read after that write. One forward sweep. */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

#define INT64_BIG 9223372036854775807LL

static const Value *arg_or_kw(const Node *n, int i, const char *name) {
    if (i < n->nargs) return &n->args[i];
    const Kwarg *k = node_kwarg(n, name);
    return k ? &k->v : NULL;
}

static bool get_int(const Value *v, int64_t dflt, int64_t *out) {
    if (!v || v->kind == V_NONE) { *out = dflt; return true; }
    return value_as_int(v, out);
}

static bool size_ge(const TensorMeta *m, int64_t dim, int64_t end) {
    if (end >= INT64_BIG) return true;
    if (dim < 0) dim += m->ndim;
    if (dim < 0 || dim >= m->ndim) return false;
    int64_t s;
    return sym_is_int(m->size[dim], &s) && end >= s;
}

/* Returns the node the op is a no-op of (before meta checks), or NULL. */
static Node *noop_source(const Node *n, const char **why) {
    const char *t = n->target;
    const Value *a0 = n->nargs > 0 ? &n->args[0] : NULL;
    Node *x = a0 && a0->kind == V_NODE ? a0->node : NULL;
    char op[128];
    pu_op_short(t, op, sizeof op);
    if (!strcmp(t, "aten.clone.default") || !strcmp(t, "aten.alias.default")) { *why = "noop: clone/alias"; return x; }
    if (!strcmp(t, "aten.copy.default")) {
        /* a copy into a pinned-memory buffer is a real transfer */
        const Kwarg *pin = x && x->kind == N_CALL_FUNCTION ? node_kwarg(x, "pin_memory") : NULL;
        if (pin && pin->v.kind == V_BOOL && pin->v.b) return NULL;
        *why = "noop: copy of same meta";
        return n->nargs > 1 && n->args[1].kind == V_NODE ? n->args[1].node : NULL;
    }
    if (!strcmp(t, "prims.device_put.default")) {
        if (!x || !x->has_meta || n->nargs < 2 || n->args[1].kind != V_DEVICE) return NULL;
        Device d = n->args[1].device;
        if (d.kind != x->meta.device.kind || (d.index >= 0 && x->meta.device.index >= 0 && d.index != x->meta.device.index))
            return NULL;
        *why = "noop: device_put to its own device";
        return x;
    }
    if (!strcmp(t, "aten.slice.Tensor")) {
        int64_t dim, start, end, step;
        const Value *vs = arg_or_kw(n, 2, "start"), *ve = arg_or_kw(n, 3, "end");
        if (!vs || vs->kind == V_NONE || !ve || ve->kind == V_NONE) return NULL;
        if (!x || !x->has_meta) return NULL;
        if (!get_int(arg_or_kw(n, 1, "dim"), 0, &dim) || !value_as_int(vs, &start) ||
            !value_as_int(ve, &end) || !get_int(arg_or_kw(n, 4, "step"), 1, &step)) return NULL;
        if (start == 0 && step == 1 && size_ge(&x->meta, dim, end)) { *why = "noop: full slice"; return x; }
        return NULL;
    }
    if (!strcmp(t, "aten.slice_scatter.default")) {
        Node *src = n->nargs > 1 && n->args[1].kind == V_NODE ? n->args[1].node : NULL;
        if (!x || !src || !x->has_meta || !src->has_meta) return NULL;
        int64_t dim, start, end, step;
        if (!get_int(arg_or_kw(n, 2, "dim"), 0, &dim) || !get_int(arg_or_kw(n, 3, "start"), 0, &start) ||
            !get_int(arg_or_kw(n, 4, "end"), INT64_BIG, &end) || !get_int(arg_or_kw(n, 5, "step"), 1, &step)) return NULL;
        if (x->meta.ndim != src->meta.ndim) return NULL;
        for (int i = 0; i < x->meta.ndim; i++) if (x->meta.size[i] != src->meta.size[i]) return NULL;
        if (start == 0 && step == 1 && size_ge(&x->meta, dim, end)) { *why = "noop: slice_scatter of the whole tensor"; return src; }
        return NULL;
    }
    if (!strcmp(op, "repeat") || !strcmp(op, "constant_pad_nd")) {
        const Value *l = n->nargs > 1 ? &n->args[1] : NULL;
        if (!l || (l->kind != V_LIST && l->kind != V_TUPLE)) return NULL;
        int64_t want = !strcmp(op, "repeat") ? 1 : 0;
        for (int i = 0; i < l->list.n; i++) {
            int64_t v;
            if (!value_as_int(&l->list.items[i], &v) || v != want) return NULL;
        }
        *why = want ? "noop: repeat by ones" : "noop: zero padding";
        return x;
    }
    if (!strcmp(t, "prims.convert_element_type.default")) {
        if (!x || !x->has_meta || n->nargs < 2 || n->args[1].kind != V_DTYPE || n->args[1].dtype != x->meta.dtype) return NULL;
        *why = "noop: same-dtype cast";
        return x;
    }
    if (!strcmp(op, "ceil") || !strcmp(op, "floor") || !strcmp(op, "round") || !strcmp(op, "trunc")) {
        /* is_integer_dtype: the integer types, not bool */
        if (!x || !x->has_meta || !dtype_is_int(x->meta.dtype)) return NULL;
        if (!strcmp(t + strlen(t) - 8, ".decimals")) return NULL;
        *why = "noop: rounding an integer";
        return x;
    }
    if (!strcmp(op, "pow")) {
        if (n->nargs < 2 || n->args[1].kind != V_INT || n->args[1].i != 1) return NULL;
        *why = "noop: pow 1";
        return x;
    }
    if (!strcmp(op, "cat")) {
        if (!a0 || a0->kind != V_LIST || a0->list.n != 1 || a0->list.items[0].kind != V_NODE) return NULL;
        *why = "noop: cat of one tensor";
        return a0->list.items[0].node;
    }
    if (!strcmp(t, "aten.view.default")) {
        if (!x || !x->has_meta || n->nargs < 2) return NULL;
        const Value *l = &n->args[1];
        if ((l->kind != V_LIST && l->kind != V_TUPLE) || l->list.n != x->meta.ndim) return NULL;
        for (int i = 0; i < l->list.n; i++) {
            int64_t v, s;
            if (l->list.items[i].kind == V_NODE && l->list.items[i].node->is_sym &&
                l->list.items[i].node->sym_val == x->meta.size[i]) continue;
            if (!value_as_int(&l->list.items[i], &v) || !sym_is_int(x->meta.size[i], &s) || v != s) return NULL;
        }
        *why = "noop: view to the same shape";
        return x;
    }
    if (!strcmp(t, "aten.view.dtype")) {
        if (!x || !x->has_meta || n->nargs < 2 || n->args[1].kind != V_DTYPE || n->args[1].dtype != x->meta.dtype) return NULL;
        *why = "noop: view as the same dtype";
        return x;
    }
    return NULL;
}

static bool is_view(const Node *n) { return n->kind == N_CALL_FUNCTION && n->op && (n->op->flags & OPF_VIEW); }

int pass_remove_noop_ops(PassCtx *pc, Graph *g) {
    int n = g->n;
    Node **map = mi_xcalloc(n + 1, sizeof *map);
    bool *dead = mi_xcalloc(n + 1, sizeof(bool));
    int *root = mi_xcalloc(n + 1, sizeof(int));
    bool *in_store = mi_xcalloc(n + 1, sizeof(bool)), *out_store = mi_xcalloc(n + 1, sizeof(bool));
    int *first_mut = mi_xmalloc((n + 1) * sizeof(int));   /* storage root -> first in-place write */
    for (int i = 0; i <= n; i++) first_mut[i] = n;
    graph_compute_users(g);
    Node *out = graph_output(g);
    /* storage roots: a view shares its input's storage */
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        root[i] = i;
        if (is_view(x) && x->nargs > 0 && x->args[0].kind == V_NODE && x->args[0].node->id >= 0)
            root[i] = root[x->args[0].node->id];
        if (x->kind == N_PLACEHOLDER) in_store[root[i]] = true;
        if (x->kind == N_CALL_FUNCTION && x->op && (x->op->flags & OPF_INPLACE) && x->nargs > 0 &&
            x->args[0].kind == V_NODE && x->args[0].node->id >= 0)
            if (first_mut[root[x->args[0].node->id]] > i) first_mut[root[x->args[0].node->id]] = i;
    }
    if (out && out->nargs > 0) {
        const Value *o = &out->args[0];
        if (o->kind == V_NODE && o->node->id >= 0) out_store[root[o->node->id]] = true;
        if (o->kind == V_LIST || o->kind == V_TUPLE)
            for (int k = 0; k < o->list.n; k++)
                if (o->list.items[k].kind == V_NODE && o->list.items[k].node->id >= 0)
                    out_store[root[o->list.items[k].node->id]] = true;
    }
    int removed = 0;
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        if (x->kind != N_CALL_FUNCTION) continue;
        const char *why = NULL;
        Node *src = noop_source(x, &why);
        if (!src || src->id < 0) continue;
        while (map[src->id]) src = map[src->id];
        if (!x->has_meta || !src->has_meta || !meta_equal(&x->meta, &src->meta)) continue;
        int ns = root[i], ss = root[src->id];
        bool node_is_view = ns == ss;
        if (!node_is_view && out_store[ns] && (in_store[ss] || out_store[ss])) continue;
        /* a copy of a tensor that an in-place op (the copy_ epilogue of a mutated input, say)
         * writes is not a no-op for readers after that write: they must keep the value from
         * before it; nor is a copy that is itself written in place */
        if (!node_is_view && first_mut[ns] < n) continue;
        if (!node_is_view && first_mut[ss] < n) {
            bool late = false;
            for (int u = 0; u < x->nusers && !late; u++) late = x->users[u]->id > first_mut[ss];
            if (late) continue;
        }
        if (node_is_view && out && out->nargs > 0 && out->args[0].kind == V_NODE && out->args[0].node == x &&
            (src->kind == N_PLACEHOLDER || src == out->args[0].node)) continue;
        map[i] = src;
        dead[i] = true;
        removed++;
        pass_note(pc, '-', x->name, "%s (users now read %s)", why, src->name);
    }
    if (removed) {
        pu_replace_uses(g, map);
        pu_remove_nodes(g, dead);
    }
    free(map); free(dead); free(root); free(in_store); free(out_store); free(first_mut);
    return 0;
}
