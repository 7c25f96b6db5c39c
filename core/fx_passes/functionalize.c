/* functionalize.c — rebuild a graph with in-place ops and view mutations as a functional
 * graph (the form AOTAutograd hands Inductor; see functionalize.h).
 *
 * Bookkeeping per node of the input graph: a view knows its parent (views chain back to a
 * base); every base has its current value (a node of the new graph) and a version that grows
 * with each mutation; a view caches its value with the base version it was made at and is
 * regenerated from the current base when that is stale. An in-place op on a view computes the
 * new view value functionally, then scatters it back up the chain (slice -> slice_scatter,
 * select -> select_scatter, view -> view to the parent's shape, permute -> inverse permute,
 * ...). The in-place node's own result aliases its first argument. Mutated placeholders get
 * copy_(input, value) before the output. Runs in one forward sweep. */
#include "fx_passes/functionalize.h"
#include "ops/ops.h"
#include "ops/decomp.h"
#include "fx_passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_inplace(const Node *n) {
    if (n->kind != N_CALL_FUNCTION) return false;
    if (n->op) return (n->op->flags & OPF_INPLACE) != 0;
    const char *a = strchr(n->target, '.');
    if (!a) return false;
    const char *b = strchr(a + 1, '.');
    size_t len = b ? (size_t)(b - a - 1) : strlen(a + 1);
    return len > 1 && a[len] == '_' && a[1] != '_';
}

static bool is_view(const Node *n) {
    return n->kind == N_CALL_FUNCTION && n->op && (n->op->flags & OPF_VIEW);
}

static Node *arg_node(const Node *n, int i) {
    return i < n->nargs && n->args[i].kind == V_NODE ? n->args[i].node : NULL;
}

typedef struct Uses { const Node *a, *b; bool hit; } Uses;
static void note_use(Node *x, void *ud) { Uses *u = ud; if (x == u->a || x == u->b) u->hit = true; }

/* Some node after position i and before position end reads a or b. */
static bool used_between(const Graph *g, int i, int end, const Node *a, const Node *b) {
    Uses u = {a, b, false};
    for (int j = i + 1; j < end && !u.hit; j++) {
        const Node *x = g->nodes[j];
        for (int k = 0; k < x->nargs; k++) value_for_each_node(&x->args[k], note_use, &u);
        for (int k = 0; k < x->nkwargs; k++) value_for_each_node(&x->kwargs[k].v, note_use, &u);
    }
    return u.hit;
}

/* Some node after position i reads a or b (the output node included). */
static bool used_after(const Graph *g, int i, const Node *a, const Node *b) { return used_between(g, i, g->n, a, b); }

/* copy_(input, value) that AOTAutograd leaves at the end of a graph for a mutated input
 * (keep_input_mutations): nothing after it reads the input or the copy_, except the graph's
 * output, which may return the copy_ -- a mutated input the model also returns
 * (`return (add_3, copy_)` for `self.count += 1; return ..., self.count`). */
bool functionalize_copy_is_epilogue(const Graph *g, const Node *n) {
    Node *dst = arg_node(n, 0);
    if (n->kind != N_CALL_FUNCTION || strcmp(n->target, "aten.copy_.default") != 0 || !dst || dst->kind != N_PLACEHOLDER)
        return false;
    int i = graph_index_of(g, n);
    if (i < 0) return false;
    const Node *out = graph_output(g);
    return !used_between(g, i, out ? graph_index_of(g, out) : g->n, dst, n);
}

bool functionalize_foreach_is_epilogue(const Graph *g, const Node *n) {
    bool inplace = false;
    char buf[96];
    if (n->kind != N_CALL_FUNCTION || !foreach_plain_op(n->target, buf, sizeof buf, &inplace) || !inplace) return false;
    if (n->nargs < 1 || (n->args[0].kind != V_LIST && n->args[0].kind != V_TUPLE)) return false;
    int i = graph_index_of(g, n);
    for (int k = 0; k < n->args[0].list.n; k++) {
        const Value *it = &n->args[0].list.items[k];
        if (it->kind != V_NODE || it->node->kind != N_PLACEHOLDER || i < 0 || used_after(g, i, it->node, it->node)) return false;
    }
    return true;
}

bool functionalize_needed(const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (!is_inplace(n)) continue;
        if (!functionalize_copy_is_epilogue(g, n) && !functionalize_foreach_is_epilogue(g, n)) return true;
    }
    return false;
}

/* index_put_'s destination lowered in place: a graph input, or an intermediate that is no view
 * (reinplace's chain: index_put_(index_put_(zeros, ...), ...)) */
static bool scatter_dst_ok(const Graph *g, const Node *dst) {
    if (dst->kind == N_PLACEHOLDER) return true;
    if (dst->kind != N_CALL_FUNCTION || is_view(dst)) return false;
    return !is_inplace(dst) || functionalize_scatter_in_place(g, dst);
}

bool functionalize_scatter_in_place(const Graph *g, const Node *n) {
    Node *dst = arg_node(n, 0);
    if (n->kind != N_CALL_FUNCTION || !dst || (strcmp(n->target, "aten.index_put_.default") != 0 &&
                                              strcmp(n->target, "prims._unsafe_index_put_.default") != 0) ||
        !scatter_dst_ok(g, dst))
        return false;
    const Value *ix = n->nargs > 1 ? &n->args[1] : NULL, *acc = n->nargs > 3 ? &n->args[3] : NULL;
    if (!ix || (ix->kind != V_LIST && ix->kind != V_TUPLE)) return false;
    for (int k = 0; k < ix->list.n; k++) {   /* a boolean index is a masked fill or a fallback */
        const Value *it = &ix->list.items[k];
        if (it->kind == V_NODE && (!it->node->has_meta || it->node->meta.dtype == DT_BOOL || it->node->meta.dtype == DT_U8)) return false;
    }
    if (acc && acc->kind == V_BOOL && acc->b && (!dst->has_meta || dst->meta.dtype == DT_I64 || dst->meta.dtype == DT_BOOL || dst->meta.dtype == DT_BF16))
        return false;   /* needs_fallback_due_to_atomic_add_limitations: a fallback, functional */
    int i = graph_index_of(g, n);
    return i >= 0 && !used_after(g, i, dst, dst);
}

/* As functionalize_needed, but an index_put_ into an input read only through its result is
 * what Inductor's index_put_ lowering takes in place (no functional form needed). */
bool functionalize_needed_for_lowering(const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (!is_inplace(n)) continue;
        if (!functionalize_copy_is_epilogue(g, n) && !functionalize_foreach_is_epilogue(g, n) && !functionalize_scatter_in_place(g, n))
            return true;
    }
    return false;
}

typedef struct F {
    MiCtx *ctx;
    const Graph *g;
    Graph *out;
    int n;
    int *alias;        /* in-place result -> the node it aliases (old ids), else self */
    int *parent;       /* view -> parent old id, -1 for bases */
    Node **cur;        /* base: current value */
    int *version;      /* base: mutation count */
    Node **vcur;       /* view: cached value */
    int *vver;         /* view: base version of the cache */
    int *first_mut;    /* base: old id of first mutating node (for the copy_ stack) */
    const char *stack; /* stack for nodes being made */
    NameSet *names;    /* names of the input graph and of the new nodes */
} F;

static int canon(F *f, const Node *x) {
    int id = x->id;
    while (f->alias[id] != id) id = f->alias[id];
    return id;
}

static int base_of(F *f, int id) {
    while (f->parent[id] >= 0) id = f->parent[id];
    return id;
}

static Node *get_value(F *f, int id);

static Value remap(F *f, const Value *v) {
    if (v->kind == V_NODE) {
        const Node *x = v->node;
        if (x->id < 0 || x->id >= f->n || f->g->nodes[x->id] != x) return value_none();
        return value_node(get_value(f, canon(f, x)));
    }
    if (v->kind == V_LIST || v->kind == V_TUPLE) {
        Value *items = mi_xcalloc(v->list.n + 1, sizeof *items);
        for (int i = 0; i < v->list.n; i++) items[i] = remap(f, &v->list.items[i]);
        Value r = v->kind == V_LIST ? value_list(f->out, items, v->list.n) : value_tuple(f->out, items, v->list.n);
        free(items);
        return r;
    }
    return value_copy(f->out, v);
}

/* A name free in both the new graph and the input graph (input names are kept as they are). */
static const char *fresh_name(F *f, const char *base) { return nameset_fresh(f->names, f->out, base); }

/* New call node at the end of out with given args; meta inferred. */
static Node *emit(F *f, const char *name_base, const char *target, const Value *args, int nargs,
                  const Kwarg *kw, int nkw) {
    char shortname[128];
    const char *base = name_base ? name_base : pu_op_short(target, shortname, sizeof shortname);
    Node *n = graph_add_node(f->out, N_CALL_FUNCTION, fresh_name(f, base), target);
    graph_set_args(f->out, n, args, nargs);
    if (nkw) graph_set_kwargs(f->out, n, kw, nkw);
    n->op = op_lookup(target);
    n->stack = f->stack ? arena_strdup(&f->out->arena, f->stack) : NULL;
    if (!n->op) {
        mi_err(f->ctx, f->g->source, 0, 0, "functionalize: unsupported op '%s'", target);
        return NULL;
    }
    if (op_infer_node_meta(f->ctx, f->out, n) < 0) return NULL;
    return n;
}

static const char *functional_target(Graph *out, const char *t);

/* Re-apply view node `vid` (old) on a new parent value (an in-place view op such as
 * transpose_ as its view op). */
static Node *replay_view(F *f, int vid, Node *parent_val) {
    const Node *v = f->g->nodes[vid];
    Value *args = mi_xcalloc(v->nargs + 1, sizeof *args);
    args[0] = value_node(parent_val);
    for (int i = 1; i < v->nargs; i++) args[i] = remap(f, &v->args[i]);
    Kwarg *kw = mi_xcalloc(v->nkwargs + 1, sizeof *kw);
    for (int k = 0; k < v->nkwargs; k++) { kw[k].name = v->kwargs[k].name; kw[k].v = remap(f, &v->kwargs[k].v); }
    const char *t = v->op && (v->op->flags & OPF_INPLACE) ? functional_target(f->out, v->target) : v->target;
    Node *r = t ? emit(f, NULL, t, args, v->nargs, kw, v->nkwargs) : NULL;
    if (!t) graph_node_err(f->ctx, f->g, v, "functionalize: no functional variant of '%s'", v->target);
    free(args);
    free(kw);
    return r;
}

static Node *get_value(F *f, int id) {
    if (f->parent[id] < 0) return f->cur[id];
    int b = base_of(f, id);
    if (f->vcur[id] && f->vver[id] == f->version[b]) return f->vcur[id];
    Node *p = get_value(f, f->parent[id]);
    if (!p) return NULL;
    const char *saved = f->stack;
    Node *r = replay_view(f, id, p);
    f->stack = saved;
    f->vcur[id] = r;
    f->vver[id] = f->version[b];
    return r;
}

static Value int_list_from_sizes(F *f, const TensorMeta *m, bool *ok) {
    Value *items = mi_xcalloc(m->ndim + 1, sizeof *items);
    for (int i = 0; i < m->ndim; i++) {
        int64_t s;
        if (sym_is_int(m->size[i], &s)) items[i] = value_int(s);
        else { items[i].kind = V_SYM; items[i].sym = m->size[i]; }
    }
    Value r = value_list(f->out, items, m->ndim);
    free(items);
    *ok = true;
    return r;
}

/* The parent's new value after view `vid` (applied to parent value `pv`) became `val`. */
static Node *inverse_view(F *f, int vid, Node *pv, Node *val) {
    const Node *v = f->g->nodes[vid];
    char op[128];
    pu_op_short(v->target, op, sizeof op);
    size_t ol = strlen(op);
    if (ol > 1 && op[ol - 1] == '_') op[ol - 1] = 0;   /* transpose_ -> transpose */
    Value args[8];
    int na = 0;
    if (!strcmp(op, "slice") || !strcmp(op, "select") || !strcmp(op, "diagonal") || !strcmp(op, "as_strided")) {
        char t[160];
        snprintf(t, sizeof t, "aten.%s_scatter.default", op);
        args[na++] = value_node(pv);
        args[na++] = value_node(val);
        for (int i = 1; i < v->nargs && na < 8; i++) args[na++] = remap(f, &v->args[i]);
        return emit(f, NULL, t, args, na, NULL, 0);
    }
    if (!strcmp(op, "permute")) {
        const Value *d = v->nargs > 1 ? &v->args[1] : NULL;
        if (!d || (d->kind != V_LIST && d->kind != V_TUPLE)) goto unsupported;
        int nd = d->list.n;
        Value *inv = mi_xcalloc(nd + 1, sizeof *inv);
        for (int i = 0; i < nd; i++) {
            int64_t k;
            if (!value_as_int(&d->list.items[i], &k)) { free(inv); goto unsupported; }
            if (k < 0) k += nd;
            if (k < 0 || k >= nd) { free(inv); goto unsupported; }
            inv[k] = value_int(i);
        }
        args[na++] = value_node(val);
        args[na++] = value_list(f->out, inv, nd);
        free(inv);
        return emit(f, NULL, "aten.permute.default", args, na, NULL, 0);
    }
    if (!strcmp(op, "t") || !strcmp(op, "transpose")) {
        args[na++] = value_node(val);
        for (int i = 1; i < v->nargs; i++) args[na++] = remap(f, &v->args[i]);
        return emit(f, NULL, !strcmp(op, "t") ? "aten.t.default" : "aten.transpose.int", args, na, NULL, 0);
    }
    if (!strcmp(op, "alias")) return val;
    if (!strcmp(op, "expand")) {
        graph_node_err(f->ctx, f->g, v, "functionalize: cannot mutate through an expand");
        return NULL;
    }
    /* view, reshape, _unsafe_view, squeeze, unsqueeze, flatten...: view back to the parent shape */
    if (!pv->has_meta) goto unsupported;
    bool ok;
    args[na++] = value_node(val);
    args[na++] = int_list_from_sizes(f, &pv->meta, &ok);
    return emit(f, NULL, "aten.view.default", args, na, NULL, 0);
unsupported:
    graph_node_err(f->ctx, f->g, v, "functionalize: cannot scatter back through '%s'", v->target);
    return NULL;
}

static const char *functional_target(Graph *out, const char *t) {
    if (!strcmp(t, "aten.copy_.default")) return "aten.copy.default";
    if (!strcmp(t, "aten.transpose_.default")) return "aten.transpose.int";   /* the view op's overload name */
    if (!strcmp(t, "aten.normal_.default")) return "aten.normal_functional.default";   /* as PyTorch names it */
    char buf[256];
    const char *a = strchr(t, '.');
    if (!a) return NULL;
    const char *b = strchr(a + 1, '.');
    size_t len = b ? (size_t)(b - a - 1) : strlen(a + 1);
    if (len < 2 || a[len] != '_') return NULL;
    snprintf(buf, sizeof buf, "%.*s%.*s%s", (int)(a - t + 1), t, (int)(len - 1), a + 1, b ? b : "");
    return arena_strdup(&out->arena, buf);
}

static int do_inplace(F *f, const Node *x) {
    Node *m0 = arg_node(x, 0);
    if (!m0 && x->nargs && x->args[0].kind == V_LIST)   /* _foreach_add_ on intermediates: not made by reinplace */
        return graph_node_err(f->ctx, f->g, x, "functionalize: in-place foreach op '%s' on tensors that are not graph inputs is not supported (use the functional '%s' form)", x->target, "_foreach_*");
    if (!m0) return mi_err(f->ctx, f->g->source, x->src_line, 0, "functionalize: in-place op '%s' without a tensor first argument", x->name);
    int m = canon(f, m0);
    const char *ft = functional_target(f->out, x->target);
    if (!ft || !op_lookup(ft))
        return graph_node_err(f->ctx, f->g, x, "functionalize: no functional variant of '%s'", x->target);
    Node *mv = get_value(f, m);
    if (!mv) return -1;
    Value *args = mi_xcalloc(x->nargs + 1, sizeof *args);
    args[0] = value_node(mv);
    for (int i = 1; i < x->nargs; i++) args[i] = remap(f, &x->args[i]);
    Kwarg *kw = mi_xcalloc(x->nkwargs + 1, sizeof *kw);
    for (int k = 0; k < x->nkwargs; k++) { kw[k].name = x->kwargs[k].name; kw[k].v = remap(f, &x->kwargs[k].v); }
    char shortname[128];
    Node *val = emit(f, pu_op_short(ft, shortname, sizeof shortname), ft, args, x->nargs, kw, x->nkwargs);
    free(args);
    free(kw);
    if (!val) return -1;
    /* add_(f32, f64) computes in the promoted type, then casts back to self's dtype */
    if (val->has_meta && mv->has_meta && val->meta.dtype != mv->meta.dtype) {
        Value cargs[2] = {value_node(val), {.kind = V_DTYPE, .dtype = mv->meta.dtype}};
        val = emit(f, "convert_element_type", "prims.convert_element_type.default", cargs, 2, NULL, 0);
        if (!val) return -1;
    }
    int b = base_of(f, m);
    if (f->first_mut[b] < 0) f->first_mut[b] = x->id;
    if (m != b) {
        /* chain base -> ... -> m, regenerate the intermediates fresh, scatter back up */
        int chain[256], k = 0;
        for (int c = m; c != b && k < 256; c = f->parent[c]) chain[k++] = c;
        if (k >= 256) return mi_err(f->ctx, f->g->source, x->src_line, 0, "functionalize: view chain too long");
        Node *vals[257];
        vals[0] = f->cur[b];
        for (int j = 1; j < k; j++) {   /* chain[k-1] is the first view off the base */
            vals[j] = replay_view(f, chain[k - j], vals[j - 1]);
            if (!vals[j]) return -1;
        }
        Node *v = val;
        for (int j = k; j >= 1; j--) {
            v = inverse_view(f, chain[k - j], vals[j - 1], v);
            if (!v) return -1;
        }
        val = v;
    }
    f->cur[b] = val;
    f->version[b]++;
    f->alias[x->id] = m;
    return 0;
}

/* x copied into the new graph with its arguments remapped to their current values: everything
 * a node carries (meta, SymInt / SymBool / SymFloat value, printing details) but its users.
 * Example: mul.Tensor(clone, truediv_1) after an earlier add_(clone, 1) reads add. */
static Node *copy_node(F *f, const Node *x) {
    /* remap first: it may emit regenerated views, which must come before n */
    Value *args = mi_xcalloc(x->nargs + 1, sizeof *args);
    for (int i = 0; i < x->nargs; i++) args[i] = remap(f, &x->args[i]);
    Kwarg *kw = mi_xcalloc(x->nkwargs + 1, sizeof *kw);
    for (int k = 0; k < x->nkwargs; k++) { kw[k].name = x->kwargs[k].name; kw[k].v = remap(f, &x->kwargs[k].v); }
    Node *n = graph_add_node(f->out, x->kind, x->name, x->target);
    graph_set_args(f->out, n, args, x->nargs);
    if (x->nkwargs) graph_set_kwargs(f->out, n, kw, x->nkwargs);
    free(args);
    free(kw);
    n->op = x->op;
    n->annotated = x->annotated;
    if (x->has_meta) { graph_set_meta(f->out, n, &x->meta); n->has_meta = true; }
    n->is_sym = x->is_sym;
    n->sym_val = x->sym_val;
    /* a SymBool / SymFloat node stays one: without the text, a use of it (mul.Tensor(x,
     * truediv_1)) would take it for a tensor without metadata */
    n->symbool = x->symbool ? arena_strdup(&f->out->arena, x->symbool) : NULL;
    n->symfloat = x->symfloat ? arena_strdup(&f->out->arena, x->symfloat) : NULL;
    n->fused_unary = x->fused_unary ? arena_strdup(&f->out->arena, x->fused_unary) : NULL;
    n->stack = x->stack ? arena_strdup(&f->out->arena, x->stack) : NULL;
    n->src_line = x->src_line;
    n->comment = x->comment ? arena_strdup(&f->out->arena, x->comment) : NULL;
    n->group_start = x->group_start;
    n->ph_comment = x->ph_comment ? arena_strdup(&f->out->arena, x->ph_comment) : NULL;
    n->pytree_leaf = x->pytree_leaf;
    n->is_method = x->is_method;
    return n;
}

Graph *functionalize(MiCtx *ctx, const Graph *g) {
    if (g->nsubs) {
        mi_err(ctx, g->source, 0, 0, "functionalize: graphs with subgraphs are not supported");
        return NULL;
    }
    F f = {0};
    f.ctx = ctx;
    f.g = g;
    f.n = g->n;
    f.out = graph_new(g->class_name);
    f.out->source = g->source ? arena_strdup(&f.out->arena, g->source) : NULL;
    f.names = nameset_new();
    nameset_add_graph(f.names, g);
    int n = g->n;
    f.alias = mi_xmalloc((n + 1) * sizeof(int));
    f.parent = mi_xmalloc((n + 1) * sizeof(int));
    f.first_mut = mi_xmalloc((n + 1) * sizeof(int));
    f.cur = mi_xcalloc(n + 1, sizeof(Node *));
    f.vcur = mi_xcalloc(n + 1, sizeof(Node *));
    f.version = mi_xcalloc(n + 1, sizeof(int));
    f.vver = mi_xcalloc(n + 1, sizeof(int));
    for (int i = 0; i < n; i++) { f.alias[i] = i; f.parent[i] = -1; f.first_mut[i] = -1; }
    bool failed = false;
    for (int i = 0; i < n && !failed; i++) {
        const Node *x = g->nodes[i];
        f.stack = x->stack;
        if (x->kind == N_OUTPUT) {
            /* the copy_ epilogue for mutated inputs, in placeholder order */
            for (int b = 0; b < n && !failed; b++) {
                const Node *p = g->nodes[b];
                if (p->kind != N_PLACEHOLDER || f.version[b] == 0) continue;
                f.stack = f.first_mut[b] >= 0 ? g->nodes[f.first_mut[b]]->stack : NULL;
                Value cargs[2] = {value_node(f.vcur[b]), value_node(f.cur[b])};   /* vcur: the new placeholder */
                Node *c = emit(&f, "copy_", "aten.copy_.default", cargs, 2, NULL, 0);
                if (!c) failed = true;
            }
            f.stack = x->stack;
            if (!failed) copy_node(&f, x);
            continue;
        }
        if (is_inplace(x) && is_view(x) && arg_node(x, 0)) {
            /* transpose_(y): a view of y's value, and y itself (every later reader) becomes it */
            int m = canon(&f, arg_node(x, 0));
            Node *p = get_value(&f, m);
            Node *v = p ? replay_view(&f, i, p) : NULL;
            if (!v) { failed = true; continue; }
            f.parent[i] = m;
            f.vcur[i] = v;
            f.vver[i] = f.version[base_of(&f, i)];
            f.alias[m] = i;
            continue;
        }
        if (is_inplace(x)) {
            if (do_inplace(&f, x) < 0) failed = true;
            continue;
        }
        Node *nn = copy_node(&f, x);
        if (x->kind == N_PLACEHOLDER) {
            f.cur[i] = nn;
            f.vcur[i] = nn;   /* placeholders are bases: vcur keeps the placeholder for the epilogue */
            continue;
        }
        int copies = 0;   /* a reshape that cannot be a view is a copy: a new base */
        if (is_view(x) && arg_node(x, 0) && (copies = op_reshape_copies(ctx, (Graph *)g, x)) < 0) { failed = true; continue; }
        if (is_view(x) && arg_node(x, 0) && !copies) {
            f.parent[i] = canon(&f, arg_node(x, 0));
            f.vcur[i] = nn;
            f.vver[i] = f.version[base_of(&f, i)];
        } else {
            f.cur[i] = nn;
        }
    }
    nameset_free(f.names);
    free(f.alias); free(f.parent); free(f.first_mut); free(f.cur); free(f.vcur); free(f.version); free(f.vver);
    if (failed) { graph_free(f.out); return NULL; }
    ops_resolve_graph(f.out);
    return f.out;
}

/* The pipeline step: functionalize in place (the manager gave us a clone). */
int pass_functionalize(PassCtx *pc, Graph *g) {
    if (!functionalize_needed(g)) return 0;
    Graph *fg = functionalize(pc->ctx, g);
    if (!fg) return -1;
    Graph tmp = *g;
    *g = *fg;
    *fg = tmp;
    for (int i = 0; i < g->nsubs; i++) g->subs[i].g->parent = g;
    for (int i = 0; i < fg->nsubs; i++) fg->subs[i].g->parent = fg;
    graph_free(fg);
    pass_note(pc, '~', "graph", "functionalized: in-place ops -> functional ops + copy_ epilogue");
    return 0;
}
