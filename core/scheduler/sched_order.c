/* sched_order.c — the order of the fused kernels before the peak-memory reorder, as Inductor's
 * Scheduler.fuse_nodes_once leaves self.nodes after each round: sorted by min_order (a fused
 * node's first original node), then topological_sort_schedule, a depth-first walk that puts
 * each node after its unmet dependencies, visited in the order of their names. The order
 * decides which cpp kernels an extern call separates (core/scheduler/sched_kernels.c) and is
 * memory.py's baseline (core/scheduler/sched_memory.c). Example: two row sums fused into one
 * node (min_order 0), the second waiting for an mm: the mm runs first, then the sums, then
 * any earlier-numbered node the sums do not wait for. */
#define _GNU_SOURCE   /* qsort_r */
#include "scheduler/scheduler.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sched_unit_of(const Schedule *s, int g) { return s->combo_of && s->combo_of[g] >= 0 ? s->ngroups + s->combo_of[g] : g; }
int sched_unit_key(const Schedule *s, int u) {
    if (u < s->ngroups) return s->groups[u].nodes[0];
    const SchedCombo *c = &s->combos[u - s->ngroups];
    int k = s->nnodes;
    for (int i = 0; i < c->n; i++) if (s->groups[c->groups[i]].nodes[0] < k) k = s->groups[c->groups[i]].nodes[0];
    return k;
}

/* pred_name order: by the predecessor node's buffer name as Python compares strings
 * ("buf19" < "buf4"), then by node */
static int cmp_pred(const void *x, const void *y, void *arg) {
    const Schedule *s = arg;
    int a = *(const int *)x, b = *(const int *)y;
    int c = strcmp(s->nodes[a].buf->name, s->nodes[b].buf->name);
    return c ? c : (a > b) - (a < b);
}

/* Scheduler.fuse_nodes_once's order after a round, on the acyclic order topo_order found:
 * the fused nodes sorted by min_order (their first node), then topological_sort_schedule, a
 * depth-first walk that puts each node after its unmet dependencies, visited sorted by the
 * dependency's name (the buffer a predecessor wrote, or its own name for an ordering dep).
 * So a late group pulls its producers forward: a weight-gradient sum over a late mm result
 * comes right after that mm, before the earlier-numbered nodes that only wait for it. */
void sched_inductor_order(Schedule *s, const int *succ_start, const int *succ) {
    int G = s->ngroups, U = G + s->ncombos, n = s->norder;
    int *uof = mi_xmalloc(sizeof(int) * (G + 1)), *key = mi_xmalloc(sizeof(int) * (U + 1));
    for (int g = 0; g < G; g++) uof[g] = sched_unit_of(s, g);
    for (int u = 0; u < U; u++) key[u] = INT32_MAX;
    for (int p = 0; p < n; p++) { int u = uof[s->order[p]]; int k = sched_unit_key(s, u); if (k < key[u]) key[u] = k; }
    /* predecessor nodes per unit (CSR), each list in dependency-name order */
    int *ps = mi_xcalloc(U + 2, sizeof(int)), *pl = NULL;
    for (int pass = 0; pass < 2; pass++) {
        int *pos = pass ? mi_xmalloc(sizeof(int) * (U + 1)) : NULL;
        if (pass) { memcpy(pos, ps, sizeof(int) * (U + 1)); pl = mi_xmalloc(sizeof(int) * (ps[U] + 1)); }
        for (int x = 0; x < s->nnodes; x++) {
            int gx = s->nodes[x].group;
            if (!s->groups[gx].alive) continue;
            for (int k = succ_start[x]; k < succ_start[x + 1]; k++) {
                int gy = s->nodes[succ[k]].group;
                if (!s->groups[gy].alive || uof[gy] == uof[gx]) continue;
                if (pass) pl[pos[uof[gy]]++] = x;
                else ps[uof[gy] + 1]++;
            }
        }
        if (!pass) for (int u = 0; u < U; u++) ps[u + 1] += ps[u];
        free(pos);
    }
    for (int u = 0; u < U; u++) qsort_r(pl + ps[u], (size_t)(ps[u + 1] - ps[u]), sizeof(int), cmp_pred, s);
    /* the units by min_order */
    int *units = mi_xmalloc(sizeof(int) * (n + 1)), nu = 0;
    bool *seen = mi_xcalloc(U + 1, 1);
    for (int p = 0; p < n; p++) { int u = uof[s->order[p]]; if (!seen[u]) { seen[u] = true; units[nu++] = u; } }
    for (int i = 1; i < nu; i++)
        for (int j = i; j > 0 && key[units[j]] < key[units[j - 1]]; j--) { int t = units[j]; units[j] = units[j - 1]; units[j - 1] = t; }
    memset(seen, 0, sizeof(bool) * (U + 1));
    int *stk = mi_xmalloc(sizeof(int) * (U + 1)), *nxt = mi_xcalloc(U + 1, sizeof(int)), *out = mi_xmalloc(sizeof(int) * (n + 1)), no = 0;
    for (int i = 0; i < nu; i++) {
        int sp = 0;
        if (seen[units[i]]) continue;
        seen[units[i]] = true;
        stk[sp++] = units[i];
        while (sp) {
            int u = stk[sp - 1];
            if (nxt[u] < ps[u + 1] - ps[u]) {
                int v = uof[s->nodes[pl[ps[u] + nxt[u]++]].group];
                if (!seen[v]) { seen[v] = true; stk[sp++] = v; }
                continue;
            }
            sp--;
            if (u >= G) {
                const SchedCombo *c = &s->combos[u - G];
                for (int k = 0; k < c->n; k++) if (s->groups[c->groups[k]].alive) out[no++] = c->groups[k];
            } else out[no++] = u;
        }
    }
    if (no == n) memcpy(s->order, out, sizeof(int) * (size_t)n);
    free(uof); free(key); free(ps); free(pl); free(units); free(seen); free(stk); free(nxt); free(out);
}

