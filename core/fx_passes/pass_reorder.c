/* pass_reorder.c — reorder_for_locality and stable_sort, exactly as Inductor orders nodes.
 *
 * reorder_for_locality (inference graphs only): walk the graph backward; for each node, move
 * each producer (a call_function, not a getitem, in the same mutation region, whose users are
 * all already visited) to just before it. Nodes from the first copy_ on are left alone (the
 * input-mutation epilogue). A moved node is visited next, so chains move together.
 * stable_sort: stable topological sort (a node waits for its last unready input).
 * Both use an index-linked list / work lists: O(n + edges). */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int *prev, *next;     /* linked list over node ids; root = n */
    bool *seen;
    int *region;
    Graph *g;
    int cur;
    PassCtx *pc;
    int moved;
} Reorder;

static void unlink_node(Reorder *r, int x) {
    r->next[r->prev[x]] = r->next[x];
    r->prev[r->next[x]] = r->prev[x];
}

static void insert_before(Reorder *r, int x, int anchor) {
    int p = r->prev[anchor];
    r->next[p] = x;
    r->prev[x] = p;
    r->next[x] = anchor;
    r->prev[anchor] = x;
}

static void visit(Node *other, void *ud) {
    Reorder *r = ud;
    int o = other->id;
    if (o < 0 || other->kind != N_CALL_FUNCTION) return;
    if (strcmp(other->target, "operator.getitem") == 0) return;
    for (int u = 0; u < other->nusers; u++)
        if (!r->seen[other->users[u]->id]) return;
    if (r->region[o] != r->region[r->cur]) return;
    if (r->prev[r->cur] == o) return;             /* already right before */
    unlink_node(r, o);
    insert_before(r, o, r->cur);
    r->moved++;
}

/* Note the nodes whose relative order changed: those off the longest increasing run of old
 * positions in the new order (what graph_diff calls moved), with the node now after them. */
static void note_moves(PassCtx *pc, Node **order, int n) {
    int *tail = mi_xmalloc((n + 1) * sizeof(int)), *prev = mi_xmalloc((n + 1) * sizeof(int));
    bool *keep = mi_xcalloc(n + 1, sizeof(bool));
    int len = 0;
    for (int i = 0; i < n; i++) {
        int lo = 0, hi = len;
        while (lo < hi) { int mid = (lo + hi) / 2; if (order[tail[mid]]->id < order[i]->id) lo = mid + 1; else hi = mid; }
        prev[i] = lo > 0 ? tail[lo - 1] : -1;
        tail[lo] = i;
        if (lo == len) len++;
    }
    for (int i = len ? tail[len - 1] : -1; i >= 0; i = prev[i]) keep[i] = true;
    for (int i = 0; i < n; i++)
        if (!keep[i]) pass_note(pc, '>', order[i]->name, "moved (now before %s)", i + 1 < n ? order[i + 1]->name : "");
    free(tail); free(prev); free(keep);
}

static bool is_mutation(const Node *n) {
    if (n->kind != N_CALL_FUNCTION) return false;
    if (n->op) return (n->op->flags & OPF_INPLACE) != 0;
    return false;
}

int pass_reorder_for_locality(PassCtx *pc, Graph *g) {
    if (!pc->inference) return 0;
    int n = g->n;
    graph_compute_users(g);
    Reorder r = {0};
    r.g = g;
    r.pc = pc;
    r.prev = mi_xcalloc(n + 1, sizeof(int));
    r.next = mi_xcalloc(n + 1, sizeof(int));
    r.seen = mi_xcalloc(n + 1, sizeof(bool));
    r.region = mi_xcalloc(n + 1, sizeof(int));
    int region = 0, first_copy = -1;
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        if (is_mutation(x)) region++;
        r.region[i] = region;
        if (first_copy < 0 && x->kind == N_CALL_FUNCTION && strcmp(x->target, "aten.copy_.default") == 0)
            first_copy = i;
        r.prev[i] = i == 0 ? n : i - 1;
        r.next[i] = i == n - 1 ? n : i + 1;
    }
    r.next[n] = n ? 0 : n;
    r.prev[n] = n ? n - 1 : n;
    bool past = first_copy < 0;
    for (int cur = r.prev[n]; cur != n; cur = r.prev[cur]) {
        r.seen[cur] = true;
        if (!past) {
            past = cur == first_copy;
            continue;
        }
        r.cur = cur;
        pu_for_each_input(g->nodes[cur], visit, &r);
    }
    if (r.moved) {
        Node **order = mi_xmalloc((n + 1) * sizeof *order);
        int k = 0;
        for (int x = r.next[n]; x != n; x = r.next[x]) order[k++] = g->nodes[x];
        note_moves(pc, order, k);   /* ids are still the old positions here */
        pu_set_order(g, order);
        free(order);
    }
    free(r.prev);
    free(r.next);
    free(r.seen);
    free(r.region);
    return 0;
}

/* ---- stable topological sort ---- */

typedef struct { int *v; int n, cap; } IntVec;

static void iv_push(IntVec *a, int x) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 4;
        a->v = mi_xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

typedef struct { bool *ready; int last_unready; } WaitScan;

static void scan_input(Node *in, void *ud) {
    WaitScan *w = ud;
    if (in->id >= 0 && !w->ready[in->id]) w->last_unready = in->id;
}

int pass_stable_sort(PassCtx *pc, Graph *g) {
    int n = g->n;
    bool *ready = mi_xcalloc(n + 1, sizeof(bool));
    IntVec *waiting = mi_xcalloc(n + 1, sizeof(IntVec));
    IntVec pending = {0};
    Node **order = mi_xmalloc((n + 1) * sizeof *order);
    int k = 0;
    for (int i = n - 1; i >= 0; i--) iv_push(&pending, i);
    while (pending.n) {
        int x = pending.v[--pending.n];
        WaitScan w = {ready, -1};
        pu_for_each_input(g->nodes[x], scan_input, &w);
        if (w.last_unready >= 0) {
            iv_push(&waiting[w.last_unready], x);
            continue;
        }
        ready[x] = true;
        order[k++] = g->nodes[x];
        IntVec *wl = &waiting[x];
        for (int j = wl->n - 1; j >= 0; j--) iv_push(&pending, wl->v[j]);
        wl->n = 0;
    }
    int status = 0;
    if (k != n) {
        status = mi_err(pc->ctx, g->source, 0, 0, "stable_sort: graph has a cycle (%d of %d nodes sorted)", k, n);
    } else {
        bool changed = false;
        for (int i = 0; i < n; i++) changed |= order[i] != g->nodes[i];
        if (changed) {
            note_moves(pc, order, n);
            pu_set_order(g, order);
        }
    }
    for (int i = 0; i <= n; i++) free(waiting[i].v);
    free(waiting);
    free(pending.v);
    free(order);
    free(ready);
    return status;
}
