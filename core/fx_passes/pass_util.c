/* pass_util.c — batch graph edits shared by the passes (replace many uses, remove many nodes,
 * reorder) in one O(n) sweep each, so passes stay linear on 10,000-node graphs, plus small
 * facts about nodes (impure? op short name). */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Node *resolve(Node **map, Node *n) {
    int guard = 0;
    while (n && n->id >= 0 && map[n->id] && map[n->id] != n && guard++ < 1000000) n = map[n->id];
    return n;
}

static int remap_value(Value *v, Node **map, const Graph *g) {
    int c = 0;
    if (v->kind == V_NODE) {
        Node *n = v->node;
        if (n && n->id >= 0 && n->id < g->n && g->nodes[n->id] == n && map[n->id]) {
            v->node = resolve(map, n);
            c++;
        }
    } else if (VALUE_IS_SEQ(v)) {
        for (int i = 0; i < v->list.n; i++) c += remap_value(&v->list.items[i], map, g);
    }
    return c;
}

int pu_replace_uses(Graph *g, Node **map) {
    int c = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        for (int a = 0; a < n->nargs; a++) c += remap_value(&n->args[a], map, g);
        for (int k = 0; k < n->nkwargs; k++) c += remap_value(&n->kwargs[k].v, map, g);
    }
    if (c) g->users_valid = false;
    return c;
}

void pu_remove_nodes(Graph *g, const bool *dead) {
    int k = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (dead[i]) { n->id = -1; continue; }
        g->nodes[k] = n;
        n->id = k++;
    }
    g->n = k;
    g->users_valid = false;
}

void pu_set_order(Graph *g, Node **order) {
    for (int i = 0; i < g->n; i++) {
        g->nodes[i] = order[i];
        order[i]->id = i;
    }
    g->users_valid = false;
}

void pu_for_each_input(const Node *n, void (*fn)(Node *, void *), void *ud) {
    for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], fn, ud);
    for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, fn, ud);
}

static bool target_is_inplace(const char *t) {
    /* "aten.add_.Tensor": the op name (between the dots) ends with '_' */
    const char *a = strchr(t, '.');
    if (!a) return false;
    const char *b = strchr(a + 1, '.');
    size_t len = b ? (size_t)(b - a - 1) : strlen(a + 1);
    return len > 1 && a[len] == '_' && a[1] != '_';
}

/* Inductor's is_mutation_op: a call whose schema is mutable (our OPF_INPLACE; an op the
 * registry lacks counts when its name ends in '_', "aten._foreach_add_.Scalar") or that writes
 * an out= tensor. Example: copy_, index_put_, add_ are; add, _foreach_add are not. */
bool pu_is_mutation(const Node *n) {
    if (n->kind != N_CALL_FUNCTION) return false;
    if (node_kwarg(n, "out")) return true;
    if (n->op) return (n->op->flags & OPF_INPLACE) != 0;
    return target_is_inplace(n->target);
}

const char *pu_op_short(const char *target, char *buf, size_t n) {
    const char *a = strchr(target, '.');
    const char *s = a ? a + 1 : target;
    const char *b = strchr(s, '.');
    size_t len = b ? (size_t)(b - s) : strlen(s);
    if (len >= n) len = n - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    return buf;
}

/* ---- fresh node names in O(1) (graph_unique_name scans the graph on every try) ---- */

typedef struct NameEnt { char *key; long next; } NameEnt;
struct NameSet { NameEnt *e; size_t cap, n; };

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static NameEnt *ns_slot(NameSet *s, const char *key) {
    size_t i = name_hash(key) & (s->cap - 1);
    while (s->e[i].key && strcmp(s->e[i].key, key) != 0) i = (i + 1) & (s->cap - 1);
    return &s->e[i];
}

static void ns_grow(NameSet *s) {
    NameEnt *old = s->e;
    size_t oc = s->cap;
    s->cap = oc ? oc * 2 : 256;
    s->e = mi_xcalloc(s->cap, sizeof *s->e);
    for (size_t i = 0; i < oc; i++)
        if (old[i].key) *ns_slot(s, old[i].key) = old[i];
    free(old);
}

static NameEnt *ns_get(NameSet *s, const char *key, bool create) {
    if (!s->cap || (s->n + 1) * 2 > s->cap) ns_grow(s);
    NameEnt *e = ns_slot(s, key);
    if (!e->key && create) {
        e->key = mi_xstrdup(key);
        e->next = 0;
        s->n++;
    }
    return e->key ? e : NULL;
}

NameSet *nameset_new(void) { return mi_xcalloc(1, sizeof(NameSet)); }

/* The counter of a stem ("getitem" for getitem_3) lives under "\x01stem", apart from the names
 * themselves: FX's _Namespace keeps _base_count[stem] beside _used_names, and a stem whose plain
 * name is free is handed out as it is even when its counter is high. */
static NameEnt *ns_counter(NameSet *s, const char *stem) {
    char key[420];
    snprintf(key, sizeof key, "\x01%s", stem);
    return ns_get(s, key, true);
}

/* Split "getitem_3" into stem "getitem" (into stem[n]) and 3; false for a name without a suffix. */
static bool name_suffix(const char *name, char *stem, size_t n, long *num) {
    size_t len = strlen(name), end = len;
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') end--;
    if (!(end < len && end > 1 && name[end - 1] == '_') || len - end > 9) return false;
    *num = strtol(name + end, NULL, 10);
    snprintf(stem, n, "%.*s", (int)(end - 1 < 390 ? end - 1 : 390), name);
    return true;
}

void nameset_add_graph(NameSet *s, const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const char *name = g->nodes[i]->name;
        ns_get(s, name, true);
        /* the graph was built by FX, whose counter for a stem passed the largest suffix it
         * handed out: getitem, getitem_1, getitem_3 (getitem_2 deleted) -> the next is getitem_4 */
        char stem[400];
        long num;
        if (name_suffix(name, stem, sizeof stem, &num)) {
            NameEnt *c = ns_counter(s, stem);
            if (c->next < num) c->next = num;
        }
    }
}

/* An inference graph comes straight from make_fx's tracer, whose namespace hands out a stem's
 * plain name before stem_1, stem_2, ...: its stem_N means the plain stem was taken, even when the
 * node that had it was erased before the graph was printed (sort's unused values[0] `getitem`
 * beside getitem_1). A training graph's forward and backward are copies of the joint graph's
 * nodes under their joint names (the partitioner's node_copy), so there a plain name missing
 * from the graph is free. Example: inference graph with getitem_1 -> the next getitem is getitem_2. */
void nameset_add_traced_stems(NameSet *s, const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        char stem[400];
        long num;
        if (name_suffix(g->nodes[i]->name, stem, sizeof stem, &num) && num >= 1) ns_get(s, stem, true);
    }
}

void nameset_free(NameSet *s) {
    if (!s) return;
    for (size_t i = 0; i < s->cap; i++) free(s->e[i].key);
    free(s->e);
    free(s);
}

const char *nameset_fresh(NameSet *s, Graph *g, const char *base) {
    if (!base || !*base) base = "node";
    if (!ns_get(s, base, false)) {
        ns_get(s, base, true);
        return arena_strdup(&g->arena, base);
    }
    /* "add_3" counts on from 3, like FX's namespace */
    long num = 0;
    char stem[400];
    if (!name_suffix(base, stem, sizeof stem, &num)) { snprintf(stem, sizeof stem, "%.390s", base); num = 0; }
    NameEnt *se = ns_counter(s, stem);   /* the stem's counter remembers the last suffix */
    if (se->next > num) num = se->next;
    char buf[512];
    for (;;) {
        num++;
        snprintf(buf, sizeof buf, "%s_%ld", stem, num);
        if (!ns_get(s, buf, false)) break;
    }
    se = ns_counter(s, stem);
    se->next = num;
    ns_get(s, buf, true);
    return arena_strdup(&g->arena, buf);
}
