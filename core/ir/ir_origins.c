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

typedef struct Walk {
    const Buffer *b;
    const bool *realized;     /* per node id: some buffer's origin */
    bool *seen;
    int ng;
} Walk;

static void visit(Walk *w, const Node *n, bool root);

static void visit_value(Walk *w, const Value *v) {
    if (v->kind == V_NODE && v->node) visit(w, v->node, false);
    else if (v->kind == V_LIST || v->kind == V_TUPLE)
        for (int i = 0; i < v->list.n; i++) visit_value(w, &v->list.items[i]);
}

static void visit(Walk *w, const Node *n, bool root) {
    if (n->id < 0 || n->id >= w->ng || w->seen[n->id] || n->kind != N_CALL_FUNCTION) return;
    if (!root && w->realized[n->id]) return;          /* another buffer: a read, not folded in */
    if (!root && !in_origins(w->b, n)) return;
    w->seen[n->id] = true;
    for (int i = 0; i < n->nargs; i++) visit_value(w, &n->args[i]);
    for (int i = 0; i < n->nkwargs; i++) visit_value(w, &n->kwargs[i].v);
}

int ir_origin_nodes(const IrModule *m, const Buffer *b, const Node ***out) {
    *out = NULL;
    const Graph *g = m->graph;
    if (!g || !b || !b->origin) return 0;
    bool *realized = mi_xcalloc((size_t)g->n + 1, 1);
    bool *seen = mi_xcalloc((size_t)g->n + 1, 1);
    for (int i = 0; i < m->nbufs; i++) {
        const Node *o = m->bufs[i]->producer ? m->bufs[i]->producer : m->bufs[i]->origin;
        if (o && o->id >= 0 && o->id < g->n && g->nodes[o->id] == o && m->bufs[i] != b) realized[o->id] = true;
    }
    Walk w = {b, realized, seen, g->n};
    const Node *root = b->producer ? b->producer : b->origin;
    if (root->id >= 0 && root->id < g->n && g->nodes[root->id] == root) visit(&w, root, true);
    int n = 0;
    for (int i = 0; i < g->n; i++) n += seen[i];
    const Node **v = mi_xmalloc(sizeof *v * (size_t)(n + 1));
    n = 0;
    for (int i = 0; i < g->n; i++)            /* graph order = topological order */
        if (seen[i]) v[n++] = g->nodes[i];
    free(realized);
    free(seen);
    *out = v;
    return n;
}

void ir_source_nodes_comment(const IrModule *m, const Buffer *const *bufs, int nb, StrBuf *names, StrBuf *aten) {
    const Graph *g = m->graph;
    if (!g) return;
    bool *all = mi_xcalloc((size_t)g->n + 1, 1);
    for (int k = 0; k < nb; k++) {
        const Node **v;
        int n = ir_origin_nodes(m, bufs[k], &v);
        for (int i = 0; i < n; i++) all[v[i]->id] = true;
        free(v);
    }
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
