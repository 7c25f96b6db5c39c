/* sched_inplace.c — which buffer a generated kernel writes in the storage of a buffer it reads
 * (Inductor's BaseSchedulerNode.decide_inplace_update, torch/_inductor/scheduler.py, with
 * SchedulerNode.can_inplace, PythonWrapperCodegen.can_reuse and can_match_buffer_size of
 * codegen/wrapper.py). Runs once the kernels are made (sched_run, before plan_memory, which
 * gives the in-place buffer its input's storage); the GPU code generator passes the input once
 * as the kernel's in/out argument (Triton's `in_out_ptr0`), so a kernel that overwrites its
 * input and the same kernel writing a fresh buffer are two sources, two definitions, as in
 * Inductor's output code (cuda_hopfield_update: triton_poi_fused_mul_0 from the graph input,
 * triton_poi_fused_mul_2 in place of the mm's result).
 *
 * Inductor decides while it generates each node of a kernel: output b of node n takes the
 * storage of a buffer a that n reads when
 *   - b is allocated by n (a ComputedBuffer, no mutation, no alias) and n writes only b, at
 *     the index (and over the ranges) at which n reads a (can_inplace, merged over all of n's
 *     reads of a: NodeUser.merge ands them);
 *   - a is no graph input or constant, not removed, not freed (can_reuse), not made by a
 *     NopKernel (a ConcatKernel), no MultiOutputLayout, no mutation's buffer;
 *   - every user of a other than n is an ancestor of n or ran in an earlier kernel (the
 *     remaining uses are [n]); a graph output's OutputNode is a use that always remains;
 *   - the nodes of n's kernel reach a through one dependency alone (single_index_in_fused_node);
 *   - same dtype, and a's storage equals b's, or lies within 5% above it (can_match_buffer_size).
 * The first read of n (in its read order) that qualifies is taken.
 * Left out, so no in-place: an a written in n's own kernel (Inductor keeps such an a as the
 * in/out argument when b outlives the kernel; our GPU kernels keep a kernel-local a in
 * registers), a combo kernel's nodes, a scan's result, a buffer sized by an unbacked symbol, an
 * a that is a MultiOutput item or a cond's result, and an output b
 * whose storage is not exactly a's (the caller allocates the output at its own size). */
#include "scheduler/scheduler.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXV (MI_MAX_DIMS * 2)

/* Storage element counts of a and b as Inductor's can_match_buffer_size compares them: the
 * same expression, or integers with 0.95 * a <= b <= a; `exact` (b is a graph output): equal. */
static bool sizes_match(SymCtx *sy, const Buffer *a, const Buffer *b, bool exact) {
    if (a->layout.dtype != b->layout.dtype) return false;
    Expr *ea = layout_storage_size(sy, &a->layout), *eb = layout_storage_size(sy, &b->layout);
    if (ea == eb) return true;
    int64_t na, nb;
    return !exact && sym_is_int(ea, &na) && sym_is_int(eb, &nb) && nb <= na && (double)nb >= 0.95 * (double)na;
}

/* Does any op of b's body store b by atomic add (a MemoryDep of mode atomic_add, which no
 * plain read equals)? */
static bool stores_atomic(const Buffer *b) {
    const LoopBody *body = b->body;
    for (int o = 0; body && o < body->nops; o++)
        if (body->ops[o].kind == LOP_STORE && body->ops[o].atomic_add) return true;
    return false;
}

/* SchedulerNode.can_inplace for every read of a by n (NodeUser.merge ands them): n writes one
 * MemoryDep (b's, no scatter), and each read of a is a MemoryDep at that index. */
static bool reads_at_write(const SchedNode *n, const Buffer *a) {
    if (n->deps.nwrites != 1) return false;
    const Dep *w = &n->deps.writes[0];
    if (w->kind != DEP_MEMORY || w->scatter || w->buf != n->buf) return false;
    bool any = false;
    for (int r = 0; r < n->deps.nreads; r++) {
        const Dep *d = &n->deps.reads[r];
        if (d->buf != a) continue;
        if (d->kind != DEP_MEMORY || d->index != w->index) return false;
        any = true;
    }
    return any;
}

/* Is node u an ancestor of node n inside kernel k (nk: node -> kernel)? Any path from u to n
 * stays in k: a node between them runs after u's kernel and before n's, which are k. stack:
 * room for every node; seen: all clear, left clear. */
static bool ancestor_in_kernel(const Schedule *s, const int *nk, int k, int u, int n, int *stack, char *seen) {
    int sp = 0, nseen = 0;   /* breadth-first: stack[0..nseen) expanded, stack[nseen..sp) to expand */
    bool found = false;
    stack[sp++] = n;
    seen[n] = 1;
    while (nseen < sp && !found) {
        const SchedNode *x = &s->nodes[stack[nseen++]];
        for (int r = 0; r < x->deps.nreads && !found; r++) {
            int bid = x->deps.reads[r].buf->id;
            for (int w = s->wr_start[bid]; w < s->wr_start[bid + 1]; w++) {
                int p = s->wr[w];
                if (nk[p] != k || seen[p] || s->nodes[p].dead) continue;
                if (p == u) { found = true; break; }
                seen[p] = 1;
                stack[sp++] = p;
            }
        }
    }
    for (int i = 0; i < sp; i++) seen[stack[i]] = 0;
    return found;
}

/* The dependencies of node x on buffer a (its reads, then its writes) that single_dep_in_kernel
 * compares: each must be the first one met (*nv0 < 0: none yet, then it is kept in idx0 / sz0). */
static bool one_dep(SymCtx *sy, const SchedNode *x, const Buffer *a, Expr **idx0, Expr **sz0, int *nv0) {
    Expr *sz[MAXV];
    for (int q = 0; q < x->deps.nreads + x->deps.nwrites; q++) {
        const Dep *d = q < x->deps.nreads ? &x->deps.reads[q] : &x->deps.writes[q - x->deps.nreads];
        if (d->buf != a) continue;
        if (d->kind != DEP_MEMORY) return false;
        int nv;
        Expr *idx = sched_dep_canon(sy, d->index, x->buf->body, sz, &nv);
        if (*nv0 < 0) {
            *idx0 = idx;
            *nv0 = nv;
            memcpy(sz0, sz, sizeof(Expr *) * (size_t)nv);
            continue;
        }
        if (idx != *idx0 || nv != *nv0) return false;
        for (int v = 0; v < nv; v++)
            if (sz[v] != sz0[v]) return false;
    }
    return true;
}

/* single_index_in_fused_node: the reads and writes of a by the nodes of kernel k are one
 * dependency (index over the node's own vars renamed c0.., and their ranges: the GPU's
 * unnormalized MemoryDep, sched_dep_canon). Only a's readers can touch it: its one writer ran
 * in an earlier kernel. */
static bool single_dep_in_kernel(const Schedule *s, const int *nk, int k, const Buffer *a) {
    SymCtx *sy = s->ir->ctx->sym;
    Expr *idx0 = NULL, *sz0[MAXV];
    int nv0 = -1;
    for (int r = s->rd_start[a->id]; r < s->rd_start[a->id + 1]; r++) {
        const SchedNode *x = &s->nodes[s->rd[r]];
        if (nk[x->id] == k && !x->dead && !one_dep(sy, x, a, &idx0, sz0, &nv0)) return false;
    }
    return true;
}

/* Can n (node of kernel k) write its buffer b in a's storage? See the head comment. */
static bool can_take(const Schedule *s, const int *nk, int k, const SchedNode *n, const Buffer *a, int *stack, char *seen) {
    const IrModule *m = s->ir;
    const Buffer *b = n->buf;
    if (a == b || a->kind == BUF_INPUT || a->output_index >= 0 || a->alias_of || a->layout.multi || a->mutates) return false;
    if (a->kind == BUF_EXTERN && (a->ext == EXT_CONCAT || a->ext == EXT_MULTI_OUTPUT || a->ext == EXT_COND)) return false;
    if (ir_layout_unbacked(m, &a->layout, true)) return false;
    /* a's only writer ran in an earlier kernel (a mutated buffer is a mutation's, excluded) */
    if (s->wr_start[a->id + 1] - s->wr_start[a->id] != 1 || nk[s->wr[s->wr_start[a->id]]] >= k) return false;
    if (!reads_at_write(n, a)) return false;
    if (!sizes_match(m->ctx->sym, a, b, b->output_index >= 0)) return false;
    for (int r = s->rd_start[a->id]; r < s->rd_start[a->id + 1]; r++) {   /* the remaining uses: [n] */
        int u = s->rd[r];
        if (u == n->id || s->nodes[u].dead || nk[u] < k) continue;
        if (nk[u] > k || !ancestor_in_kernel(s, nk, k, u, n->id, stack, seen)) return false;
    }
    return single_dep_in_kernel(s, nk, k, a);
}

void sched_decide_inplace(Schedule *s) {
    const IrModule *m = s->ir;
    s->inplace_of = mi_xmalloc(sizeof(int) * (size_t)(m->nbufs + 1));
    for (int i = 0; i < m->nbufs; i++) s->inplace_of[i] = -1;
    int *nk = mi_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1)), *stack = mi_xmalloc(sizeof(int) * (size_t)(s->nnodes + 1));
    char *seen = mi_xcalloc((size_t)s->nnodes + 1, 1);
    for (int i = 0; i < s->nnodes; i++) nk[i] = -1;
    for (int p = 0; p < s->norder; p++) {
        const SchedGroup *g = &s->groups[s->order[p]];
        int k = sched_kernel_of_pos(s, p);
        for (int i = 0; i < g->n; i++) nk[g->nodes[i]] = k;
    }
    for (int p = 0; p < s->norder; p++) {
        const SchedGroup *g = &s->groups[s->order[p]];
        int k = sched_kernel_of_pos(s, p);
        if (g->is_extern || s->kernels[k].is_extern || s->kernels[k].combo) continue;
        for (int i = 0; i < g->n; i++) {
            const SchedNode *n = &s->nodes[g->nodes[i]];
            const Buffer *b = n->buf;
            if (n->dead || b->kind != BUF_COMPUTED || b->mutates || b->alias_of || b->scan || stores_atomic(b) ||
                ir_layout_unbacked(m, &b->layout, true))
                continue;
            for (int r = 0; r < n->deps.nreads; r++) {
                const Buffer *a = n->deps.reads[r].buf;
                bool earlier = false;   /* a read twice: judged at its first read */
                for (int q = 0; q < r && !earlier; q++) earlier = n->deps.reads[q].buf == a;
                if (earlier || !can_take(s, nk, k, n, a, stack, seen)) continue;
                s->inplace_of[b->id] = a->id;
                break;
            }
        }
    }
    free(nk);
    free(stack);
    free(seen);
}
