/* graph.c — the FX graph data structure: construction and editing of nodes (ids kept in
 * program order, names unique like FX's), deep copies, uses and users, typed argument values
 * and tensor metadata helpers. Everything a graph points to lives in its arena, except
 * symbolic expressions (interned in the session's SymCtx). Parsers (fx_parse.c,
 * graph_json.c), passes, lowering and the printers all build on these functions. */
#include "fx/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

/* ---- graphs ---- */

Graph *graph_new(const char *class_name) {
    Graph *g = mi_xcalloc(1, sizeof *g);
    arena_init(&g->arena);
    g->class_name = arena_strdup(&g->arena, class_name ? class_name : "GraphModule");
    return g;
}

void graph_free(Graph *g) {
    if (!g) return;
    for (int i = 0; i < g->nsubs; i++) graph_free(g->subs[i].g);
    free(g->subs);
    free(g->nodes);
    arena_free(&g->arena);
    free(g);
}

static char *gdup(Graph *g, const char *s) { return s ? arena_strdup(&g->arena, s) : NULL; }

static void renumber(Graph *g, int from) {
    for (int i = from < 0 ? 0 : from; i < g->n; i++) g->nodes[i]->id = i;
    g->users_valid = false;
}

int graph_index_of(const Graph *g, const Node *n) {
    if (!n) return -1;
    if (n->id >= 0 && n->id < g->n && g->nodes[n->id] == n) return n->id;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i] == n) return i;
    return -1;
}

static Node *new_node(Graph *g, NodeKind kind, const char *name, const char *target) {
    Node *n = arena_alloc(&g->arena, sizeof *n);
    n->kind = kind;
    n->name = name ? gdup(g, name) : graph_unique_name(g, kind == N_OUTPUT ? "output" : "node");
    n->target = gdup(g, target);
    n->meta.dtype = DT_F32;
    n->meta.device.index = -1;
    return n;
}

static void insert_at(Graph *g, int pos, Node *n) {
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->nodes = mi_xrealloc(g->nodes, g->cap * sizeof *g->nodes);
    }
    memmove(g->nodes + pos + 1, g->nodes + pos, (g->n - pos) * sizeof *g->nodes);
    g->nodes[pos] = n;
    g->n++;
    renumber(g, pos);
}

Node *graph_add_node(Graph *g, NodeKind kind, const char *name, const char *target) {
    Node *n = new_node(g, kind, name, target);
    insert_at(g, g->n, n);
    return n;
}

Node *graph_insert_before(Graph *g, Node *anchor, NodeKind kind, const char *name, const char *target) {
    int pos = graph_index_of(g, anchor);
    if (pos < 0) pos = g->n;
    Node *n = new_node(g, kind, name, target);
    insert_at(g, pos, n);
    return n;
}

void graph_remove_node(Graph *g, Node *n) {
    int pos = graph_index_of(g, n);
    if (pos < 0) return;
    memmove(g->nodes + pos, g->nodes + pos + 1, (g->n - pos - 1) * sizeof *g->nodes);
    g->n--;
    n->id = -1;
    renumber(g, pos);
}

void graph_move_before(Graph *g, Node *n, Node *anchor) {
    if (n == anchor) return;
    int from = graph_index_of(g, n);
    if (from < 0 || graph_index_of(g, anchor) < 0) return;
    memmove(g->nodes + from, g->nodes + from + 1, (g->n - from - 1) * sizeof *g->nodes);
    g->n--;
    int to = graph_index_of(g, anchor);   /* anchor may have shifted */
    memmove(g->nodes + to + 1, g->nodes + to, (g->n - to) * sizeof *g->nodes);
    g->nodes[to] = n;
    g->n++;
    renumber(g, 0);
}

void graph_set_args(Graph *g, Node *n, const Value *args, int nargs) {
    Value *a = nargs > 0 ? arena_alloc(&g->arena, nargs * sizeof *a) : NULL;
    for (int i = 0; i < nargs; i++) a[i] = value_copy(g, &args[i]);
    n->args = a;
    n->nargs = nargs;
    g->users_valid = false;
}

void graph_set_kwargs(Graph *g, Node *n, const Kwarg *kw, int nkw) {
    Kwarg *k = nkw > 0 ? arena_alloc(&g->arena, nkw * sizeof *k) : NULL;
    for (int i = 0; i < nkw; i++) {
        k[i].name = gdup(g, kw[i].name);
        k[i].v = value_copy(g, &kw[i].v);
    }
    n->kwargs = k;
    n->nkwargs = nkw;
    g->users_valid = false;
}

static void copy_meta(Arena *a, TensorMeta *dst, const TensorMeta *m) {
    *dst = *m;
    int nd = m->ndim > 0 ? m->ndim : 0;
    dst->size = nd ? arena_alloc(a, nd * sizeof(Expr *)) : NULL;
    dst->stride = nd ? arena_alloc(a, nd * sizeof(Expr *)) : NULL;
    for (int i = 0; i < nd; i++) {
        dst->size[i] = m->size ? m->size[i] : NULL;
        dst->stride[i] = m->stride ? m->stride[i] : NULL;
    }
}

void graph_set_meta(Graph *g, Node *n, const TensorMeta *m) {
    copy_meta(&g->arena, &n->meta, m);
    n->has_meta = true;
}

static bool replace_in_value(Value *v, Node *from, Node *to, int *count) {
    bool changed = false;
    if (v->kind == V_NODE && v->node == from) { v->node = to; ++*count; changed = true; }
    else if (VALUE_IS_SEQ(v))
        for (int i = 0; i < v->list.n; i++) changed |= replace_in_value(&v->list.items[i], from, to, count);
    return changed;
}

int graph_replace_all_uses(Graph *g, Node *from, Node *to) {
    int count = 0;
    if (from == to) return 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n == to) continue;
        for (int a = 0; a < n->nargs; a++) replace_in_value(&n->args[a], from, to, &count);
        for (int k = 0; k < n->nkwargs; k++) replace_in_value(&n->kwargs[k].v, from, to, &count);
    }
    if (count) g->users_valid = false;
    return count;
}

static bool name_used(const Graph *g, const char *s) {
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->nodes[i]->name, s) == 0) return true;
    return false;
}

/* Names FX never gives a node as is (Python builtins and keywords it would shadow): a node
 * for aten.sum is called "sum_1", one for aten.slice "slice_1". */
static const char *const reserved_names[] = {
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "compile",
    "complex", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec", "filter", "float",
    "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input",
    "int", "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "max", "min", "next",
    "object", "oct", "open", "ord", "pow", "print", "property", "range", "repr", "reversed", "round",
    "set", "setattr", "slice", "sorted", "str", "sum", "super", "tuple", "type", "vars", "zip",
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
    "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
    "yield", "self", "torch", "inf", "nan", "device", "operator", "fx_pytree", "pytree",
};

static bool reserved(const char *s) {
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
        if (strcmp(reserved_names[i], s) == 0) return true;
    return false;
}

const char *graph_unique_name(Graph *g, const char *base) {
    if (!base || !*base) base = "node";
    if (!reserved(base) && !name_used(g, base)) return arena_strdup(&g->arena, base);
    /* "add_3" counts on from 3, like FX's namespace */
    size_t len = strlen(base), end = len;
    while (end > 0 && base[end - 1] >= '0' && base[end - 1] <= '9') end--;
    long num = 0;
    if (end < len && end > 1 && base[end - 1] == '_') {
        num = strtol(base + end, NULL, 10);
        len = end - 1;
    }
    char buf[512];
    for (;;) {
        num++;
        snprintf(buf, sizeof buf, "%.*s_%ld", (int)(len < 400 ? len : 400), base, num);
        if (!name_used(g, buf)) return arena_strdup(&g->arena, buf);
    }
}

Node *graph_find(const Graph *g, const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return NULL;
}

Node *graph_output(const Graph *g) {
    for (int i = g->n - 1; i >= 0; i--)
        if (g->nodes[i]->kind == N_OUTPUT) return g->nodes[i];
    return NULL;
}

static int count_leaves(const Value *v) {
    if (v->kind != V_LIST && v->kind != V_TUPLE) return 1;
    int n = 0;
    for (int k = 0; k < v->list.n; k++) n += count_leaves(&v->list.items[k]);
    return n;
}
static void put_leaves(const Value *v, Value *out, int *at) {
    if (v->kind != V_LIST && v->kind != V_TUPLE) { out[(*at)++] = *v; return; }
    for (int k = 0; k < v->list.n; k++) put_leaves(&v->list.items[k], out, at);
}

/* The graph's results as pytree leaves: `return (a, (b, c))` gives a, b, c, as the compiled
 * callable of PyTorch returns them flattened. A flat return is the output node's own list;
 * a nested one is flattened into g's arena. */
const Value *graph_output_flat(const Graph *g, int *n) {
    const Node *o = graph_output(g);
    *n = 0;
    if (!o || !o->nargs) return NULL;
    const Value *r = &o->args[0];
    if (o->nargs != 1) { *n = o->nargs; return o->args; }
    if (r->kind != V_LIST && r->kind != V_TUPLE) { *n = 1; return r; }
    bool nested = false;
    for (int k = 0; k < r->list.n; k++) nested |= r->list.items[k].kind == V_LIST || r->list.items[k].kind == V_TUPLE;
    if (!nested) { *n = r->list.n; return r->list.items; }
    int cnt = count_leaves(r), at = 0;
    Value *flat = arena_alloc(&((Graph *)g)->arena, (size_t)(cnt ? cnt : 1) * sizeof *flat);
    put_leaves(r, flat, &at);
    *n = cnt;
    return flat;
}

int graph_num_placeholders(const Graph *g) {
    int c = 0;
    for (int i = 0; i < g->n; i++) c += g->nodes[i]->kind == N_PLACEHOLDER;
    return c;
}

Node *graph_placeholder(const Graph *g, int k) {
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i]->kind == N_PLACEHOLDER && k-- == 0) return g->nodes[i];
    return NULL;
}

Graph *graph_subgraph(const Graph *g, const char *name) {
    for (int i = 0; i < g->nsubs; i++)
        if (strcmp(g->subs[i].name, name) == 0) return g->subs[i].g;
    return NULL;
}

Graph *graph_add_subgraph(Graph *parent, const char *name) {
    Graph *s = graph_new(name);
    s->parent = parent;
    s->source = parent->source;
    parent->subs = mi_xrealloc(parent->subs, (parent->nsubs + 1) * sizeof *parent->subs);
    parent->subs[parent->nsubs].name = arena_strdup(&parent->arena, name);
    parent->subs[parent->nsubs].g = s;
    parent->nsubs++;
    return s;
}

/* ---- users ---- */

typedef struct UseList { Node **v; int n, cap; } UseList;

static void collect_use(Node *n, void *ud) {
    UseList *l = ud;
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == n) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = mi_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = n;
}

/* Distinct nodes used by n, in order of first appearance in args then kwargs. */
static int node_inputs(const Node *n, UseList *l) {
    l->n = 0;
    for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], collect_use, l);
    for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, collect_use, l);
    return l->n;
}

void graph_compute_users(Graph *g) {
    for (int i = 0; i < g->n; i++) g->nodes[i]->nusers = 0;
    UseList l = {0};
    for (int i = 0; i < g->n; i++) {
        node_inputs(g->nodes[i], &l);
        for (int k = 0; k < l.n; k++)
            if (graph_index_of(g, l.v[k]) >= 0) l.v[k]->nusers++;
    }
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        n->users = n->nusers ? arena_alloc(&g->arena, n->nusers * sizeof(Node *)) : NULL;
        n->nusers = 0;
    }
    for (int i = 0; i < g->n; i++) {
        node_inputs(g->nodes[i], &l);
        for (int k = 0; k < l.n; k++)
            if (graph_index_of(g, l.v[k]) >= 0) l.v[k]->users[l.v[k]->nusers++] = g->nodes[i];
    }
    free(l.v);
    g->users_valid = true;
}

int graph_dead_after(Graph *g, const Node *user, Node **out, int max) {
    if (!g->users_valid) graph_compute_users(g);
    if (user->kind == N_PLACEHOLDER || user->kind == N_OUTPUT) return 0;
    int pos = graph_index_of(g, user), count = 0;
    if (pos < 0) return 0;
    UseList l = {0};
    node_inputs(user, &l);
    for (int k = 0; k < l.n; k++) {
        Node *in = l.v[k];
        int ip = graph_index_of(g, in);
        if (ip < 0) continue;
        /* last use: no user of `in` comes after `user` */
        bool last = true;
        for (int u = 0; u < in->nusers; u++)
            if (in->users[u]->id > pos) { last = false; break; }
        if (last && count < max) out[count++] = in;
    }
    free(l.v);
    if (user->nusers == 0 && count < max) out[count++] = (Node *)user;
    return count;
}

/* ---- deep copy ---- */

static Node *map_node(const Graph *src, Graph *dst, Node *n) {
    int i = graph_index_of(src, n);
    return i >= 0 ? dst->nodes[i] : n;   /* a dangling reference stays what it was */
}

static Value clone_value(const Graph *src, Graph *dst, const Value *v) {
    Value r = *v;
    switch (v->kind) {
    case V_NODE: r.node = map_node(src, dst, v->node); break;
    case V_STR: case V_TORCH: r.s = gdup(dst, v->s); break;
    case V_LIST: case V_TUPLE: case V_DICT:
        r.list.items = v->list.n ? arena_alloc(&dst->arena, v->list.n * sizeof(Value)) : NULL;
        for (int i = 0; i < v->list.n; i++) r.list.items[i] = clone_value(src, dst, &v->list.items[i]);
        break;
    default: break;
    }
    return r;
}

static Graph *clone_into(const Graph *g, Graph *parent) {
    Graph *c = graph_new(g->class_name);
    c->parent = parent;
    c->source = gdup(c, g->source);
    c->expanded_def = g->expanded_def;
    c->fast_sympy_print = g->fast_sympy_print;
    c->trailer = gdup(c, g->trailer);
    c->npytree_args = g->npytree_args;
    if (g->npytree_args) {
        c->pytree_args = arena_alloc(&c->arena, g->npytree_args * sizeof(char *));
        for (int i = 0; i < g->npytree_args; i++) c->pytree_args[i] = gdup(c, g->pytree_args[i]);
    }
    c->nsize_hints = g->nsize_hints;
    if (g->nsize_hints) {
        c->size_hints = arena_alloc(&c->arena, g->nsize_hints * sizeof *c->size_hints);
        for (int i = 0; i < g->nsize_hints; i++)
            c->size_hints[i] = (SymBinding){gdup(c, g->size_hints[i].name), g->size_hints[i].value};
    }
    c->nout_comments = g->nout_comments;
    if (g->nout_comments) {
        c->out_comments = arena_alloc(&c->arena, g->nout_comments * sizeof(char *));
        for (int i = 0; i < g->nout_comments; i++) c->out_comments[i] = gdup(c, g->out_comments[i]);
    }
    c->cap = g->n > 0 ? g->n : 1;
    c->nodes = mi_xmalloc(c->cap * sizeof *c->nodes);
    c->n = g->n;
    for (int i = 0; i < g->n; i++) {
        const Node *s = g->nodes[i];
        Node *d = arena_alloc(&c->arena, sizeof *d);
        *d = *s;
        d->id = i;
        d->name = gdup(c, s->name);
        d->target = gdup(c, s->target);
        d->stack = gdup(c, s->stack);
        d->comment = gdup(c, s->comment);
        d->ph_comment = gdup(c, s->ph_comment);
        d->fused_unary = gdup(c, s->fused_unary);
        d->symbool = gdup(c, s->symbool);
        d->symfloat = gdup(c, s->symfloat);
        d->users = NULL;
        d->nusers = 0;
        if (s->has_meta || s->meta.ndim) copy_meta(&c->arena, &d->meta, &s->meta);
        c->nodes[i] = d;
    }
    for (int i = 0; i < g->n; i++) {
        const Node *s = g->nodes[i];
        Node *d = c->nodes[i];
        d->args = s->nargs ? arena_alloc(&c->arena, s->nargs * sizeof(Value)) : NULL;
        for (int a = 0; a < s->nargs; a++) d->args[a] = clone_value(g, c, &s->args[a]);
        d->kwargs = s->nkwargs ? arena_alloc(&c->arena, s->nkwargs * sizeof(Kwarg)) : NULL;
        for (int k = 0; k < s->nkwargs; k++) {
            d->kwargs[k].name = gdup(c, s->kwargs[k].name);
            d->kwargs[k].v = clone_value(g, c, &s->kwargs[k].v);
        }
    }
    for (int i = 0; i < g->nsubs; i++) {
        c->subs = mi_xrealloc(c->subs, (c->nsubs + 1) * sizeof *c->subs);
        c->subs[c->nsubs].name = gdup(c, g->subs[i].name);
        c->subs[c->nsubs].g = clone_into(g->subs[i].g, c);
        c->nsubs++;
    }
    return c;
}

Graph *graph_clone(const Graph *g) { return g ? clone_into(g, NULL) : NULL; }

/* graph_add_size_hint: the placeholder's symbol (a bare one: "Sym(s77)", not "Sym(2*s0)")
 * gets the value; an existing hint is overwritten. Example: arg0_1: "Sym(s77)" with 6 ->
 * s77 = 6. */
bool graph_add_size_hint(Graph *g, const char *ph, int64_t value) {
    const Node *n = graph_find(g, ph);
    if (!n || n->kind != N_PLACEHOLDER || !n->is_sym || !n->sym_val) return false;
    if (n->sym_val->kind != EX_SYM) return false;
    const char *name = n->sym_val->name;
    for (int i = 0; i < g->nsize_hints; i++)
        if (!strcmp(g->size_hints[i].name, name)) { g->size_hints[i].value = value; return true; }
    SymBinding *h = arena_alloc(&g->arena, (g->nsize_hints + 1) * sizeof *h);
    if (g->nsize_hints) memcpy(h, g->size_hints, g->nsize_hints * sizeof *h);
    h[g->nsize_hints++] = (SymBinding){gdup(g, name), value};
    g->size_hints = h;
    return true;
}

/* ---- values ---- */

Value value_none(void) { Value v = {0}; v.kind = V_NONE; return v; }
Value value_node(Node *n) { Value v = {0}; v.kind = V_NODE; v.node = n; return v; }
Value value_int(int64_t i) { Value v = {0}; v.kind = V_INT; v.i = i; return v; }
Value value_float(double f) { Value v = {0}; v.kind = V_FLOAT; v.f = f; return v; }
Value value_complex(double re, double im) { Value v = {0}; v.kind = V_COMPLEX; v.cx.re = re; v.cx.im = im; return v; }
Value value_bool(bool b) { Value v = {0}; v.kind = V_BOOL; v.b = b; return v; }
Value value_str(Graph *g, const char *s) { Value v = {0}; v.kind = V_STR; v.s = gdup(g, s ? s : ""); return v; }

static Value make_seq(Graph *g, ValueKind k, const Value *items, int n) {
    Value v = {0};
    v.kind = k;
    v.list.n = n;
    v.list.items = n > 0 ? arena_alloc(&g->arena, n * sizeof(Value)) : NULL;
    for (int i = 0; i < n; i++) v.list.items[i] = value_copy(g, &items[i]);
    return v;
}
Value value_list(Graph *g, const Value *items, int n) { return make_seq(g, V_LIST, items, n); }
Value value_tuple(Graph *g, const Value *items, int n) { return make_seq(g, V_TUPLE, items, n); }
Value value_dict(Graph *g, const Value *kv, int n) { return make_seq(g, V_DICT, kv, n); }

/* {'OUTPUT_LOGSUMEXP': True, ...}["OUTPUT_LOGSUMEXP"] -> the True value; NULL when d is not a
 * dict or has no such string key. */
const Value *value_dict_get(const Value *d, const char *key) {
    if (!d || d->kind != V_DICT) return NULL;
    for (int i = 0; i + 1 < d->list.n; i += 2)
        if (d->list.items[i].kind == V_STR && !strcmp(d->list.items[i].s, key)) return &d->list.items[i + 1];
    return NULL;
}

Value value_copy(Graph *g, const Value *v) {
    switch (v->kind) {
    case V_STR: case V_TORCH: { Value r = *v; r.s = gdup(g, v->s); return r; }
    case V_LIST: case V_TUPLE: case V_DICT: return make_seq(g, v->kind, v->list.items, v->list.n);
    default: return *v;
    }
}

bool value_equal(const Value *a, const Value *b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case V_NONE: return true;
    case V_NODE: return a->node == b->node;
    case V_INT: return a->i == b->i;
    case V_FLOAT: return a->f == b->f || (isnan(a->f) && isnan(b->f));
    case V_COMPLEX:
        return (a->cx.re == b->cx.re || (isnan(a->cx.re) && isnan(b->cx.re))) &&
               (a->cx.im == b->cx.im || (isnan(a->cx.im) && isnan(b->cx.im)));
    case V_BOOL: return a->b == b->b;
    case V_STR: case V_TORCH: return strcmp(a->s, b->s) == 0;
    case V_DTYPE: return a->dtype == b->dtype;
    case V_DEVICE: return device_eq(a->device, b->device);
    case V_SYM: return a->sym == b->sym;
    case V_LIST: case V_TUPLE: case V_DICT:
        if (a->list.n != b->list.n) return false;
        for (int i = 0; i < a->list.n; i++)
            if (!value_equal(&a->list.items[i], &b->list.items[i])) return false;
        return true;
    }
    return false;
}

void value_for_each_node(const Value *v, void (*fn)(Node *, void *), void *ud) {
    if (v->kind == V_NODE) fn(v->node, ud);
    else if (VALUE_IS_SEQ(v))
        for (int i = 0; i < v->list.n; i++) value_for_each_node(&v->list.items[i], fn, ud);
}

const Kwarg *node_kwarg(const Node *n, const char *name) {
    for (int i = 0; i < n->nkwargs; i++)
        if (strcmp(n->kwargs[i].name, name) == 0) return &n->kwargs[i];
    return NULL;
}

bool value_as_int(const Value *v, int64_t *out) {
    if (v->kind == V_INT) { *out = v->i; return true; }
    if (v->kind == V_BOOL) { *out = v->b; return true; }
    return false;
}

bool value_as_double(const Value *v, double *out) {
    if (v->kind == V_INT) { *out = (double)v->i; return true; }
    if (v->kind == V_FLOAT) { *out = v->f; return true; }
    if (v->kind == V_BOOL) { *out = v->b; return true; }
    return false;
}

/* ---- tensor metadata ---- */

void meta_init_contiguous(SymCtx *s, TensorMeta *m, Arena *a, DType dt, int ndim, Expr **size, Device dev) {
    memset(m, 0, sizeof *m);
    m->dtype = dt;
    m->ndim = ndim;
    m->device = dev;
    m->has_device = true;
    m->has_stride = true;
    m->offset = sym_int(s, 0);
    m->size = ndim ? arena_alloc(a, ndim * sizeof(Expr *)) : NULL;
    m->stride = ndim ? arena_alloc(a, ndim * sizeof(Expr *)) : NULL;
    Expr *st = sym_int(s, 1);
    for (int i = ndim - 1; i >= 0; i--) {
        m->size[i] = size[i];
        m->stride[i] = st;
        /* PyTorch's contiguous strides treat size-0/1 dims as 1 when multiplying */
        int64_t c;
        if (!(sym_is_int(size[i], &c) && c <= 1)) st = sym_mul(s, st, size[i]);
    }
}

bool meta_equal(const TensorMeta *a, const TensorMeta *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim || !device_eq(a->device, b->device)) return false;
    if (a->is_conj != b->is_conj || a->is_neg != b->is_neg) return false;   /* as post_grad.py's same_meta */
    for (int i = 0; i < a->ndim; i++) {
        if (a->size[i] != b->size[i]) return false;
        if (a->stride && b->stride && a->stride[i] != b->stride[i]) return false;
    }
    return true;
}

Expr *meta_numel(SymCtx *s, const TensorMeta *m) {
    Expr *e = sym_int(s, 1);
    for (int i = 0; i < m->ndim; i++) e = sym_mul(s, e, m->size[i]);
    return e;
}

static void put_expr(StrBuf *sb, const Expr *e) {
    if (e) sym_str_sb(e, sb);
    else sb_putc(sb, '?');
}

void meta_str_sb(const TensorMeta *m, StrBuf *sb) {
    sb_put(sb, dtype_abbrev(m->dtype));
    sb_putc(sb, '[');
    for (int i = 0; i < m->ndim; i++) {
        if (i) sb_put(sb, ", ");
        put_expr(sb, m->size ? m->size[i] : NULL);
    }
    sb_putc(sb, ']');
    if (m->has_stride) {
        sb_putc(sb, '[');
        for (int i = 0; i < m->ndim; i++) {
            if (i) sb_put(sb, ", ");
            put_expr(sb, m->stride ? m->stride[i] : NULL);
        }
        sb_putc(sb, ']');
    }
    if (m->has_device) {
        char d[32];
        sb_put(sb, device_str(m->device, d, sizeof d));
    }
}

const char *meta_str(const TensorMeta *m, char *buf, size_t n) {
    StrBuf sb;
    sb_init(&sb);
    meta_str_sb(m, &sb);
    snprintf(buf, n, "%s", sb.s ? sb.s : "");
    sb_free(&sb);
    return buf;
}

int graph_node_err(MiCtx *ctx, const Graph *g, const Node *n, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mi_err(ctx, g ? g->source : NULL, n ? n->src_line : 0, 0, "%s (node '%s')", msg,
                  n && n->name ? n->name : "?");
}

/* Device of the graph: the first node meta with a device; cpu if none. */
Device graph_device(const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->has_meta && n->meta.has_device) return n->meta.device;
    }
    Device d = {DEV_CPU, -1};
    return d;
}

/* True for an AOT joint/forward/backward graph: its placeholders are primals_* / tangents_*. */
bool graph_is_training(const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_PLACEHOLDER) continue;
        if (strncmp(n->name, "primals_", 8) == 0 || strncmp(n->name, "tangents_", 9) == 0) return true;
    }
    return false;
}
