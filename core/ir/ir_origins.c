/* ir_origins.c — the FX nodes a buffer was made from (Inductor's IRNode.origins, a set of FX
 * nodes), for provenance: the source-node comments of generated kernels, the report's
 * FX <-> IR <-> code links, and the shell's `why`.
 *
 * Lowering keeps, per buffer, the node whose value it holds (Buffer.producer) and the op short
 * names folded into it (Buffer.origins, which name kernels). The nodes are found again by walking
 * the graph back from the producer through the nodes that were not realized into buffers of their
 * own (inlined pointwise ops, views), keeping those whose op is one of the buffer's origins.
 * Example: relu(add(x, 1)) realized as buf0 -> origin relu, origins {relu, add} -> nodes
 * [add, relu]. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "aten.add.Tensor" -> "add" (lowering's short name) into buf. */
static const char *short_op(const char *target, char *buf, size_t n) {
    const char *a = strchr(target, '.');
    if (!a) { snprintf(buf, n, "%s", target); return buf; }
    a++;
    size_t len = strcspn(a, ".");
    snprintf(buf, n, "%.*s", (int)len, a);
    return buf;
}

static bool in_origins(const Buffer *b, const Node *n) {
    char s[128];
    short_op(n->target ? n->target : "", s, sizeof s);
    for (int i = 0; i < b->norigins; i++)
        if (!strcmp(b->origins[i], s)) return true;
    return false;
}

/* The walk's state, made once per module (ir_origins_new) and reused for each buffer:
 * producers[id] = how many of the module's buffers hold node id's value (a node some buffer
 * holds is a read, not folded in, unless that buffer is the one walked); seen / touched: the
 * nodes of the current walk, cleared after it, so a buffer costs the nodes it visits, not the
 * whole graph (per-buffer arrays of the graph's size made the kernels' source comments
 * O(buffers x nodes): 2.4 s of a 10 000-node chain's scheduling stage). */
struct IrOrigins {
    const IrModule *m;
    int ng;
    int *producers;
    bool *seen;
    int *touched, ntouched;
    const Buffer *b;          /* the buffer walked */
    int own;                  /* its own producer's node id (-1: none) */
};

static const Node *root_of(const Buffer *b) { return b->producer ? b->producer : b->origin; }

static int node_id_in(const Graph *g, const Node *o) {
    return o && o->id >= 0 && o->id < g->n && g->nodes[o->id] == o ? o->id : -1;
}

IrOrigins *ir_origins_new(const IrModule *m) {
    IrOrigins *w = mi_xcalloc(1, sizeof *w);
    w->m = m;
    const Graph *g = m->graph;
    w->ng = g ? g->n : 0;
    w->producers = mi_xcalloc((size_t)w->ng + 1, sizeof *w->producers);
    w->seen = mi_xcalloc((size_t)w->ng + 1, 1);
    w->touched = mi_xmalloc(sizeof *w->touched * ((size_t)w->ng + 1));
    for (int i = 0; g && i < m->nbufs; i++) {
        int id = node_id_in(g, root_of(m->bufs[i]));
        if (id >= 0) w->producers[id]++;
    }
    return w;
}

void ir_origins_free(IrOrigins *w) {
    if (!w) return;
    free(w->producers);
    free(w->seen);
    free(w->touched);
    free(w);
}

static void visit(IrOrigins *w, const Node *n, bool root);

static void visit_value(IrOrigins *w, const Value *v) {
    if (v->kind == V_NODE && v->node) visit(w, v->node, false);
    else if (VALUE_IS_SEQ(v))
        for (int i = 0; i < v->list.n; i++) visit_value(w, &v->list.items[i]);
}

static void visit(IrOrigins *w, const Node *n, bool root) {
    if (n->id < 0 || n->id >= w->ng || w->seen[n->id] || n->kind != N_CALL_FUNCTION) return;
    if (!root && w->producers[n->id] - (n->id == w->own) > 0) return;   /* another buffer: a read */
    if (!root && !in_origins(w->b, n)) return;
    w->seen[n->id] = true;
    w->touched[w->ntouched++] = n->id;
    for (int i = 0; i < n->nargs; i++) visit_value(w, &n->args[i]);
    for (int i = 0; i < n->nkwargs; i++) visit_value(w, &n->kwargs[i].v);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int ir_origins_of(IrOrigins *w, const Buffer *b, const Node ***out) {
    *out = NULL;
    const Graph *g = w->m->graph;
    if (!g || !b || !b->origin) return 0;
    w->b = b;
    w->ntouched = 0;
    const Node *root = root_of(b);
    w->own = node_id_in(g, root);
    /* a buffer of another module is not counted in producers: its own node is then no
     * exception (Buffer.id is its position in IrModule.bufs) */
    if (b->id < 0 || b->id >= w->m->nbufs || w->m->bufs[b->id] != b) w->own = -1;
    if (node_id_in(g, root) >= 0) visit(w, root, true);
    int n = w->ntouched;
    qsort(w->touched, (size_t)n, sizeof *w->touched, cmp_int);   /* graph order = topological order */
    const Node **v = mi_xmalloc(sizeof *v * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        v[i] = g->nodes[w->touched[i]];
        w->seen[w->touched[i]] = false;
    }
    *out = v;
    return n;
}

int ir_origin_nodes(const IrModule *m, const Buffer *b, const Node ***out) {
    IrOrigins *w = ir_origins_new(m);
    int n = ir_origins_of(w, b, out);
    ir_origins_free(w);
    return n;
}

void ir_source_nodes_comment(const IrModule *m, const Buffer *const *bufs, int nb, StrBuf *names, StrBuf *aten) {
    const Graph *g = m->graph;
    if (!g) return;
    bool *all = mi_xcalloc((size_t)g->n + 1, 1);
    IrOrigins *w = ir_origins_new(m);
    for (int k = 0; k < nb; k++) {
        const Node **v;
        int n = ir_origins_of(w, bufs[k], &v);
        for (int i = 0; i < n; i++) all[v[i]->id] = true;
        free(v);
    }
    ir_origins_free(w);
    /* Original ATen: the overload packets ("aten.addmm"), first-seen in graph order */
    char seen_ops[64][96];
    int nops = 0;
    for (int i = 0; i < g->n; i++) {
        if (!all[i]) continue;
        const Node *n = g->nodes[i];
        sb_printf(names, "%s%s", names->len ? ", " : "", n->name);
        const char *t = n->target ? n->target : "";
        const char *d1 = strchr(t, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        char pk[96];
        snprintf(pk, sizeof pk, "%.*s", (int)(d2 ? d2 - t : (long)strlen(t)), t);
        bool dup = false;
        for (int k = 0; k < nops; k++) dup |= !strcmp(seen_ops[k], pk);
        if (!dup && nops < 64) {
            snprintf(seen_ops[nops++], 96, "%s", pk);
            sb_printf(aten, "%s%s", aten->len ? ", " : "", pk);
        }
    }
    free(all);
}
