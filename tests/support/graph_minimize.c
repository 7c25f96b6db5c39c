/* graph_minimize.c — shrink a graph while a failure persists (declared in graph_random.h).
 *
 * Greedy delta debugging over graph edits, each tried on a clone and kept only when the clone
 * still lints clean and the caller's predicate still says "fails":
 *   1. drop one returned value (while more than one is returned);
 *   2. bypass a call: replace its uses by one of its inputs (or any earlier node) with the
 *      same meta, then delete it;
 *   3. delete a call nobody uses (in-place calls included: maybe the bug is elsewhere);
 *   4. delete a placeholder nobody uses.
 * Repeats until a full sweep changes nothing or the predicate budget is spent. */
#include "graph_random.h"
#include "ops/ops.h"

typedef struct Min {
    MiCtx *ctx;
    GraphFailsFn fails;
    void *ud;
    int tries, max_tries;
    Graph *cur;
} Min;

/* Keep cand if it is valid and still fails; takes ownership of cand. */
static bool try_keep(Min *m, Graph *cand) {
    if (m->tries >= m->max_tries) { graph_free(cand); return false; }
    ops_resolve_graph(cand);
    if (graph_lint(m->ctx, cand, NULL) != 0) {
        mi_clear_err(m->ctx);
        graph_free(cand);
        return false;
    }
    m->tries++;
    bool still = m->fails(m->ctx, cand, m->ud);
    mi_clear_err(m->ctx);
    if (!still) { graph_free(cand); return false; }
    graph_free(m->cur);
    m->cur = cand;
    return true;
}

static bool drop_output(Min *m, int k) {
    Node *o = graph_output(m->cur);
    if (!o || o->nargs < 1 || o->args[0].kind != V_TUPLE || o->args[0].list.n < 2) return false;
    if (k >= o->args[0].list.n) return false;
    Graph *c = graph_clone(m->cur);
    Node *co = graph_output(c);
    Value items[64];
    int n = 0;
    for (int i = 0; i < co->args[0].list.n && n < 64; i++)
        if (i != k) items[n++] = co->args[0].list.items[i];
    Value tup = value_tuple(c, items, n);
    graph_set_args(c, co, &tup, 1);
    return try_keep(m, c);
}

typedef struct Collect { Node *in[32]; int n; } Collect;
static void collect(Node *x, void *ud) {
    Collect *c = ud;
    if (c->n < 32) c->in[c->n++] = x;
}
static void collect_value(const Value *v, Collect *c) { value_for_each_node(v, collect, c); }

/* Bypass node idx with a same-meta replacement (its inputs first, then earlier nodes). */
static bool bypass(Min *m, int idx) {
    Node *n = m->cur->nodes[idx];
    if (n->kind != N_CALL_FUNCTION || !n->has_meta) return false;
    Collect c = {{0}, 0};
    for (int i = 0; i < n->nargs; i++) collect_value(&n->args[i], &c);
    for (int i = 0; i < idx && c.n < 32; i++) c.in[c.n++] = m->cur->nodes[i];
    for (int k = 0; k < c.n; k++) {
        Node *r = c.in[k];
        if (!r->has_meta || r->is_sym || !meta_equal(&r->meta, &n->meta)) continue;
        int ridx = graph_index_of(m->cur, r);
        if (ridx < 0 || ridx >= idx) continue;
        Graph *cl = graph_clone(m->cur);
        Node *cn = cl->nodes[idx], *cr = cl->nodes[ridx];
        graph_replace_all_uses(cl, cn, cr);
        graph_remove_node(cl, cn);
        if (try_keep(m, cl)) return true;
    }
    return false;
}

static bool delete_unused(Min *m, int idx) {
    Node *n = m->cur->nodes[idx];
    if (n->kind != N_CALL_FUNCTION && n->kind != N_PLACEHOLDER) return false;
    graph_compute_users(m->cur);
    if (n->nusers != 0) return false;
    Graph *cl = graph_clone(m->cur);
    graph_remove_node(cl, cl->nodes[idx]);
    return try_keep(m, cl);
}

Graph *graph_minimize(MiCtx *ctx, const Graph *g, GraphFailsFn fails, void *ud, int max_tries) {
    Min m = {ctx, fails, ud, 0, max_tries > 0 ? max_tries : 2000, graph_clone(g)};
    bool changed = true;
    while (changed && m.tries < m.max_tries) {
        changed = false;
        for (int k = 0; ; k++) {
            Node *o = graph_output(m.cur);
            if (!o || o->nargs < 1 || o->args[0].kind != V_TUPLE || k >= o->args[0].list.n) break;
            if (drop_output(&m, k)) { changed = true; k--; }
        }
        for (int i = m.cur->n - 1; i >= 0 && m.tries < m.max_tries; i--) {
            if (i >= m.cur->n) continue;
            if (delete_unused(&m, i) || bypass(&m, i)) changed = true;
        }
    }
    return m.cur;
}
