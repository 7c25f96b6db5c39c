/* lint.c — structural checks of a Graph (FX's Graph.lint plus metadata checks): uses before
 * definition, uses of nodes that are not in the graph, duplicate names, one output node and
 * it is last, tensor metadata that is self-consistent and agrees with what the op registry
 * infers, higher-order op subgraphs whose arity matches their operands. Run after loading and
 * after every pass by the pass manager. */
#include "fx/graph.h"
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lint {
    MiCtx *ctx;
    Graph *g;
    StrBuf *report;
    int problems;         /* in this graph */
    int *total;           /* in the whole tree of graphs; the first one goes into ctx->err */
    const char *prefix;   /* "" or "subgraph true_graph_0: " */
} Lint;

static void problem(Lint *l, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(Lint *l, const Node *n, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = n ? n->src_line : 0;
    if (l->report) {
        if (line && l->g->source && *l->g->source) sb_printf(l->report, "%s:%d: ", l->g->source, line);
        else if (line) sb_printf(l->report, "line %d: ", line);
        else if (l->g->source && *l->g->source) sb_printf(l->report, "%s: ", l->g->source);
        sb_printf(l->report, "%s", l->prefix);
        if (n) sb_printf(l->report, "node '%s': ", n->name ? n->name : "?");
        sb_printf(l->report, "%s\n", msg);
    }
    l->problems++;
    if ((*l->total)++ == 0)
        mi_err(l->ctx, l->g->source, line, 0, "%s%s%s%s%s", l->prefix, n ? "node '" : "", n ? (n->name ? n->name : "?") : "",
               n ? "': " : "", msg);
}

typedef struct UseCheck { Lint *l; const Node *user; int pos; } UseCheck;

static void check_use(Node *used, void *ud) {
    UseCheck *u = ud;
    if (!used) { problem(u->l, u->user, "uses a null node"); return; }
    int at = graph_index_of(u->l->g, used);
    if (at < 0) problem(u->l, u->user, "uses '%s', which is not in the graph", used->name ? used->name : "?");
    else if (at >= u->pos) problem(u->l, u->user, "uses '%s' before it is defined", used->name);
}

static void check_meta(Lint *l, const Node *n) {
    const TensorMeta *m = &n->meta;
    if (m->dtype < 0 || m->dtype >= DT_COUNT) { problem(l, n, "invalid dtype %d", (int)m->dtype); return; }
    if (m->ndim < 0 || m->ndim > 64) { problem(l, n, "invalid rank %d", m->ndim); return; }
    if (m->ndim > 0 && (!m->size || !m->stride)) { problem(l, n, "rank %d but no sizes/strides", m->ndim); return; }
    for (int i = 0; i < m->ndim; i++) {
        int64_t v;
        if (!m->size[i] || !m->stride[i]) { problem(l, n, "missing size or stride in dim %d", i); return; }
        if (sym_is_int(m->size[i], &v) && v < 0) problem(l, n, "negative size %lld in dim %d", (long long)v, i);
        if (sym_is_int(m->stride[i], &v) && v < 0) problem(l, n, "negative stride %lld in dim %d", (long long)v, i);
    }
}

/* Compare the annotation with what the registry infers (single-tensor results only). */
static void check_inferred(Lint *l, Node *n) {
    const OpDef *op = n->op;
    if (!op || !op->infer_meta || n->kind != N_CALL_FUNCTION || n->is_method) return;
    /* Python operators on tensors (Dynamo-level graphs: "x + 1", "x[0:4]") are not the
     * registry's operator.* rows, which work on SymInts and tuples of ATen graphs */
    if (strncmp(n->target, "operator.", 9) == 0)
        for (int a = 0; a < n->nargs; a++)
            if (n->args[a].kind == V_NODE && n->args[a].node->annotated && !n->args[a].node->is_sym) return;
    /* nothing to infer from an input whose op is unknown and whose type was not printed */
    for (int a = 0; a < n->nargs; a++) {
        const Node *in = n->args[a].kind == V_NODE ? n->args[a].node : NULL;
        if (in && in->kind == N_CALL_FUNCTION && !in->op && !in->annotated) return;
    }
    TensorMeta out[16];
    memset(out, 0, sizeof out);
    int nout = 0;
    MiTry tentative = mi_try(l->ctx);
    if (op->infer_meta(l->ctx, l->g, n, out, &nout) < 0) {
        char msg[1024], head[600];
        snprintf(msg, sizeof msg, "%s", l->ctx->err.msg);
        mi_try_end(&tentative);
        /* the registry's message starts "node 'x' (op): " already said by the problem prefix */
        snprintf(head, sizeof head, "node '%s' (%s): ", n->name ? n->name : "?", op->name);
        size_t hl = strlen(head);
        problem(l, n, "%s: %s", op->name, strncmp(msg, head, hl) ? msg : msg + hl);
        return;
    }
    mi_try_end(&tentative);
    if (!n->has_meta || n->is_sym || (op->flags & OPF_TUPLE) || nout > 1) return;
    const TensorMeta *m = &out[0];
    char want[512], got[512];
    if (m->dtype != n->meta.dtype || m->ndim != n->meta.ndim) {
        problem(l, n, "annotation %s but %s infers %s", meta_str(&n->meta, got, sizeof got), op->name,
                meta_str(m, want, sizeof want));
        return;
    }
    for (int i = 0; i < m->ndim; i++)
        if (m->size && m->size[i] != n->meta.size[i]) {
            problem(l, n, "annotation %s but %s infers %s", meta_str(&n->meta, got, sizeof got), op->name,
                    meta_str(m, want, sizeof want));
            return;
        }
}

static int lint_graph(Lint *l);

/* dtype, sizes and strides equal (devices may differ: cuda graphs run on the cpu here) */
static bool meta_same_shape(const TensorMeta *a, const TensorMeta *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++) {
        if (a->size[i] != b->size[i]) return false;
        if (a->has_stride && b->has_stride && a->stride[i] != b->stride[i]) return false;
    }
    return true;
}

static const Value *output_items(const Node *o, int *n) {
    *n = 0;
    if (!o || o->nargs < 1) return NULL;
    const Value *r = &o->args[0];
    if (r->kind == V_LIST || r->kind == V_TUPLE) { *n = r->list.n; return r->list.items; }
    *n = 1;
    return r;
}

static void check_cond(Lint *l, Node *n) {
    /* cond(pred, true_graph, false_graph, operands) */
    Graph *branches[2] = {NULL, NULL};
    if (n->nargs != 4) { problem(l, n, "higher_order.cond takes 4 arguments, got %d", n->nargs); return; }
    const Value *ops = &n->args[3];
    if (ops->kind != V_TUPLE && ops->kind != V_LIST) { problem(l, n, "cond operands must be a tuple"); return; }
    for (int b = 1; b <= 2; b++) {
        const Value *v = &n->args[b];
        if (v->kind != V_NODE || v->node->kind != N_GET_ATTR) {
            problem(l, n, "cond branch %d is not a get_attr of a subgraph", b);
            continue;
        }
        Graph *sub = graph_subgraph(l->g, v->node->target);
        if (!sub) { problem(l, n, "cond branch '%s' names no subgraph", v->node->target); continue; }
        int np = graph_num_placeholders(sub);
        if (np != ops->list.n) {
            problem(l, n, "subgraph '%s' takes %d inputs but cond passes %d operands", v->node->target, np, ops->list.n);
            continue;
        }
        /* each placeholder's annotation matches the operand it receives */
        for (int k = 0; k < np; k++) {
            const Node *ph = graph_placeholder(sub, k);
            const Value *o = &ops->list.items[k];
            if (o->kind != V_NODE || !o->node->has_meta || o->node->is_sym || !ph->has_meta || ph->is_sym) continue;
            if (!meta_same_shape(&ph->meta, &o->node->meta)) {
                char a[256], b2[256];
                problem(l, n, "subgraph '%s' input %d ('%s') is %s but cond passes '%s' of %s", v->node->target, k, ph->name,
                        meta_str(&ph->meta, a, sizeof a), o->node->name, meta_str(&o->node->meta, b2, sizeof b2));
            }
        }
        branches[b - 1] = sub;
    }
    /* both branches return the same number of results with the same metas */
    if (branches[0] && branches[1]) {
        const Node *o0 = graph_output(branches[0]), *o1 = graph_output(branches[1]);
        int n0 = 0, n1 = 0;
        const Value *r0 = output_items(o0, &n0), *r1 = output_items(o1, &n1);
        const char *t = n->args[1].node->target, *f = n->args[2].node->target;
        if (o0 && o1 && n0 != n1) problem(l, n, "branches return different numbers of results: '%s' %d, '%s' %d", t, n0, f, n1);
        for (int k = 0; o0 && o1 && n0 == n1 && k < n0; k++) {
            const Node *x = r0[k].kind == V_NODE ? r0[k].node : NULL, *y = r1[k].kind == V_NODE ? r1[k].node : NULL;
            if (!x || !y || !x->has_meta || !y->has_meta || x->is_sym || y->is_sym) continue;
            if (!meta_same_shape(&x->meta, &y->meta)) {
                char a[256], b2[256];
                problem(l, n, "branches return different metas for result %d: '%s' gives %s, '%s' gives %s", k, t,
                        meta_str(&x->meta, a, sizeof a), f, meta_str(&y->meta, b2, sizeof b2));
            }
        }
    }
    /* the predicate is a one-element tensor (or a constant / SymBool) */
    const Value *p = &n->args[0];
    if (p->kind == V_NODE && p->node->has_meta && !p->node->is_sym) {
        Expr *ne = meta_numel(l->ctx->sym, &p->node->meta);
        int64_t k;
        if (sym_is_int(ne, &k) && k != 1) problem(l, n, "cond predicate '%s' has %lld elements (expected 1)", p->node->name, (long long)k);
    }
}

/* while_loop(cond_fn, body_fn, carried_inputs, additional_inputs): both subgraphs take the
 * carried + additional inputs; cond_fn returns one value, body_fn one per carried input with its
 * meta (while_loop_fake_tensor_mode's check_meta_consistency of carried_inputs and body_output). */
static void check_while_loop(Lint *l, Node *n) {
    if (n->nargs != 4) { problem(l, n, "higher_order.while_loop takes 4 arguments, got %d", n->nargs); return; }
    const Value *car = &n->args[2], *add = &n->args[3];
    if ((car->kind != V_TUPLE && car->kind != V_LIST) || (add->kind != V_TUPLE && add->kind != V_LIST)) {
        problem(l, n, "while_loop carried_inputs and additional_inputs must be tuples");
        return;
    }
    int nc = car->list.n, na = add->list.n;
    for (int b = 0; b < 2; b++) {
        const Value *v = &n->args[b];
        const char *what = b ? "body_fn" : "cond_fn";
        if (v->kind != V_NODE || v->node->kind != N_GET_ATTR) { problem(l, n, "while_loop %s is not a get_attr of a subgraph", what); continue; }
        Graph *sub = graph_subgraph(l->g, v->node->target);
        if (!sub) { problem(l, n, "while_loop %s '%s' names no subgraph", what, v->node->target); continue; }
        int np = graph_num_placeholders(sub), nr = 0;
        if (np != nc + na) problem(l, n, "subgraph '%s' takes %d inputs but while_loop passes %d carried + %d additional", v->node->target, np, nc, na);
        const Value *r = output_items(graph_output(sub), &nr);
        if (!b && nr != 1) problem(l, n, "cond_fn '%s' returns %d values (expected one bool)", v->node->target, nr);
        if (!b) continue;
        if (nr != nc) { problem(l, n, "body_fn '%s' returns %d values for %d carried inputs", v->node->target, nr, nc); continue; }
        for (int k = 0; k < nc; k++) {
            const Node *x = r[k].kind == V_NODE ? r[k].node : NULL, *c = car->list.items[k].kind == V_NODE ? car->list.items[k].node : NULL;
            if (!x || !c || !x->has_meta || !c->has_meta || x->is_sym || c->is_sym) continue;
            if (!meta_same_shape(&x->meta, &c->meta)) {
                char a[256], b2[256];
                problem(l, n, "body_fn result %d is %s but carried input '%s' is %s", k, meta_str(&x->meta, a, sizeof a), c->name,
                        meta_str(&c->meta, b2, sizeof b2));
            }
        }
    }
}

/* tag_activation_checkpoint(body, *operands, **kwargs): the body takes the operands. */
static void check_checkpoint(Lint *l, Node *n) {
    const Value *v = n->nargs ? &n->args[0] : NULL;
    if (!v || v->kind != V_NODE || v->node->kind != N_GET_ATTR) {
        problem(l, n, "the checkpointed body is not a get_attr of a subgraph");
        return;
    }
    Graph *sub = graph_subgraph(l->g, v->node->target);
    if (!sub) { problem(l, n, "checkpoint body '%s' names no subgraph", v->node->target); return; }
    int np = graph_num_placeholders(sub);
    if (np != n->nargs - 1) {
        problem(l, n, "subgraph '%s' takes %d inputs but the checkpoint passes %d operands", v->node->target, np, n->nargs - 1);
        return;
    }
    for (int k = 0; k < np; k++) {
        const Node *ph = graph_placeholder(sub, k);
        const Value *o = &n->args[k + 1];
        if (o->kind != V_NODE || !o->node->has_meta || o->node->is_sym || !ph->has_meta || ph->is_sym) continue;
        if (!meta_same_shape(&ph->meta, &o->node->meta)) {
            char a[256], b2[256];
            problem(l, n, "subgraph '%s' input %d ('%s') is %s but the checkpoint passes '%s' of %s", v->node->target, k,
                    ph->name, meta_str(&ph->meta, a, sizeof a), o->node->name, meta_str(&o->node->meta, b2, sizeof b2));
        }
    }
}

static int cmp_node_name(const void *a, const void *b) {
    const Node *x = *(Node *const *)a, *y = *(Node *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->id - y->id;
}

/* Does some name repeat among v[0..k)? An open-addressing table of the names (FNV-1a): one pass,
 * where sorting every name at every lint (a lint runs after each of the 19 passes) was a
 * quarter of the passes stage on a 1 000-node graph. */
static bool any_repeat(Node *const *v, int k) {
    size_t cap = 16;
    while (cap < 2 * (size_t)k + 16) cap *= 2;
    Node **slot = mi_xcalloc(cap, sizeof *slot);
    bool rep = false;
    for (int i = 0; i < k && !rep; i++) {
        uint64_t h = 1469598103934665603ull;
        for (const char *c = v[i]->name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
        for (size_t j = h & (cap - 1);; j = (j + 1) & (cap - 1)) {
            if (!slot[j]) { slot[j] = v[i]; break; }
            if (!strcmp(slot[j]->name, v[i]->name)) { rep = true; break; }
        }
    }
    free(slot);
    return rep;
}

/* Duplicate names, by sorting (graphs from big logs have thousands of nodes), only when
 * any_repeat found one: each duplicate is reported after the one it repeats, by name. */
static void check_names(Lint *l) {
    Graph *g = l->g;
    Node **v = mi_xmalloc((g->n + 1) * sizeof *v);
    int k = 0;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i] && g->nodes[i]->name) v[k++] = g->nodes[i];
    if (!any_repeat(v, k)) {
        free(v);
        return;
    }
    qsort(v, k, sizeof *v, cmp_node_name);
    for (int i = 1; i < k; i++)
        if (strcmp(v[i]->name, v[i - 1]->name) == 0)
            problem(l, v[i], "duplicate name (also node %d)", v[i - 1]->id);
    free(v);
}

static int lint_graph(Lint *l) {
    Graph *g = l->g;
    int outputs = 0;
    check_names(l);
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (!n) { problem(l, NULL, "null node at position %d", i); continue; }
        if (n->id != i) problem(l, n, "id %d but sits at position %d", n->id, i);
        if (!n->name || !*n->name) problem(l, n, "has no name");
        UseCheck u = {l, n, i};
        for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], check_use, &u);
        for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, check_use, &u);
        switch (n->kind) {
        case N_OUTPUT:
            outputs++;
            if (i != g->n - 1) problem(l, n, "output node is not the last node");
            if (n->nargs != 1) problem(l, n, "output node has %d arguments (expected 1)", n->nargs);
            break;
        case N_PLACEHOLDER:
            if (n->nargs) problem(l, n, "placeholder with arguments");
            break;
        case N_GET_ATTR:
            if (!n->target) problem(l, n, "get_attr without a target");
            break;
        case N_CALL_FUNCTION:
            if (!n->target || !*n->target) { problem(l, n, "call_function without a target"); break; }
            if (strcmp(n->target, "operator.getitem") == 0) {
                if (n->nargs != 2 || n->args[0].kind != V_NODE)
                    problem(l, n, "getitem expects (node, index)");
            } else if (strcmp(n->target, "higher_order.cond") == 0) check_cond(l, n);
            else if (strcmp(n->target, "higher_order.tag_activation_checkpoint") == 0) check_checkpoint(l, n);
            else if (strcmp(n->target, "higher_order.while_loop") == 0) check_while_loop(l, n);
            break;
        default:
            problem(l, n, "unknown node kind %d", (int)n->kind);
        }
        if (n->has_meta && !n->is_sym) check_meta(l, n);
        if (n->is_sym && !n->sym_val && n->annotated) problem(l, n, "SymInt node without a value");
    }
    if (outputs == 0) problem(l, NULL, "graph has no output node");
    else if (outputs > 1) problem(l, NULL, "graph has %d output nodes", outputs);
    /* inferred metas only once the structure is sound (they follow the args) */
    if (l->problems == 0)
        for (int i = 0; i < g->n; i++) check_inferred(l, g->nodes[i]);
    for (int s = 0; s < g->nsubs; s++) {
        Lint sub = *l;
        char prefix[300];
        snprintf(prefix, sizeof prefix, "%ssubgraph %s: ", l->prefix, g->subs[s].name);
        sub.prefix = prefix;
        sub.g = g->subs[s].g;
        sub.problems = 0;
        lint_graph(&sub);
    }
    return l->problems;
}

int graph_lint(MiCtx *ctx, Graph *g, StrBuf *report) {
    int total = 0;
    Lint l = {ctx, g, report, 0, &total, ""};
    if (!g) return mi_err(ctx, NULL, 0, 0, "no graph"), 1;
    lint_graph(&l);
    return total;
}
