/* sched_memory.c — Inductor's reorder_for_peak_memory (torch/_inductor/memory.py, on by default:
 * config.reorder_for_peak_memory), the last step of Scheduler.__init__ after fusion: the fused
 * nodes in their topological order (the baseline) and three other topological orders — LPMF
 * (least peak memory first), BFS (the node whose predecessors ran earliest first), DFS (small
 * nodes first) — are each given a peak-memory estimate, and the lowest wins (the baseline on a
 * tie). The order decides which neighbours the cpp backend puts into one C function (a kernel
 * group is flushed at extern calls), so it changes the kernels a user sees. Example: a backward
 * whose per-channel sums only feed outputs runs them after the convolution_backward call,
 * which frees the large grad-input buffer first: two cpp kernels around the extern call.
 *
 * The model, as memory.py's: a buffer computed here (get_numel() elements; a fallback's
 * MultiOutputLayout buffer allocates its items, each item frees its own) is allocated when
 * its node runs and freed after its last reader (a graph output is "freed" before step 0,
 * pm_peak); graph inputs other than those utils.py is_nonfreeable_buffers names (primals_*,
 * arg*, fwd_rng_state*, bwd_rng_state*, tangents*) -- the saved activations of a backward --
 * are "freeable": live from the start, freed after their last reader. Sizes need numbers: a
 * symbolic size takes the graph's size hint (ShapeEnv's example value, read from a log's
 * fx_graph_runnable: Graph.size_hints); a graph without hints for its symbols keeps the
 * baseline. */
#define _GNU_SOURCE   /* qsort_r */
#include "scheduler/sched_memory.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct PmBuf {
    int64_t alloc, size;       /* bytes allocated by its producer, freed after its last use */
    int producer;              /* unit, or -1: a freeable graph input (live from the start) */
    int *succ; int nsucc;      /* units reading it (other than its producer) */
    bool output;               /* a graph output: never freed */
} PmBuf;

typedef struct Pm {
    int nu, nb;
    PmBuf *b;
    int64_t *size;             /* per unit: bytes its outputs allocate */
    int **pred_bufs; int *npred_bufs;   /* per unit: buffers it reads that come from elsewhere */
    const int *ss, *su;        /* unit successor edges (CSR), all dependencies */
    int *npred;                /* per unit: number of predecessor units */
    int **preds; int *npreds;  /* per unit: predecessor units */
} Pm;

static void push(int **a, int *n, int v) {
    for (int i = 0; i < *n; i++) if ((*a)[i] == v) return;
    *a = mi_xrealloc(*a, sizeof(int) * (*n + 1));
    (*a)[(*n)++] = v;
}

/* memory.py compute_size_for_scheduler_buffer: bytes of b's elements (get_numel() times the
 * element size, not the storage extent: a ConcatKernel's [5, 1] slice with stride 9 counts 5
 * elements); false when symbolic. A MultiOutputLayout buffer holds no elements of its own: it
 * costs the sum of its MultiOutput items when made (size_alloc) and gives nothing back
 * (size_free 0); an item costs nothing when made and gives back its own size. Example: a
 * cumprod fallback's buffer allocates its one [5, 8] f32 result, 160 bytes; the item frees
 * them after its last reader. */
/* V.graph.sizevars.size_hint(e): e's value, a symbolic one evaluated with the graph's size
 * hints (ShapeEnv's example values: Graph.size_hints); false when a symbol has none (a graph
 * loaded without its example inputs, an unbacked size). Example: s77 * 4 with s77 = 6 -> 24. */
static bool size_hint(const IrModule *m, Expr *e, int64_t *v) {
    if (sym_is_int(e, v)) return true;
    const Graph *g = m->graph;
    while (g && g->parent) g = g->parent;
    if (!g || !g->nsize_hints) return false;
    MiTry t = mi_try(m->ctx);
    bool ok = sym_eval(m->ctx, e, g->size_hints, g->nsize_hints, v) == 0;
    mi_try_end(&t);
    return ok;
}

static bool buf_bytes(const Buffer *b, const IrModule *m, int64_t *out) {
    int64_t n;
    if (!size_hint(m, layout_numel(m->ctx->sym, &b->layout), &n)) return false;
    *out = n * (int64_t)dtype_size(b->layout.dtype);
    return true;
}

/* utils.py is_nonfreeable_buffers: a graph input the program cannot give back (parameters,
 * forward inputs, RNG states, the backward's tangents), so memory.py leaves it out of the
 * estimate. Example: "tangents_1" -> true; "mul_3" (a saved activation) -> false. */
static bool nonfreeable(const char *name) {
    static const char *const pre[] = {"primals_", "arg", "fwd_rng_state", "bwd_rng_state", "tangents"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (!strncmp(name, pre[i], strlen(pre[i]))) return true;
    return false;
}

/* Is the scheduler node of buffer b alive (dead_node_elimination drops an unused MultiOutput,
 * and with it the item from its fallback's users)? */
static bool node_alive(const Schedule *s, const Buffer *b) {
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].buf == b) return !s->nodes[i].dead;
    return false;
}
static bool buf_size(const Schedule *s, const Buffer *b, SymCtx *sy, int64_t *alloc, int64_t *free_) {
    *alloc = *free_ = 0;
    if (b->kind == BUF_COMPUTED && b->mutates) return true;   /* stores into an input (MutationLayout) */
    if (b->layout.multi) {
        for (int k = 0; k < b->nitems; k++) {
            int64_t x;
            if (!b->items[k] || !node_alive(s, b->items[k])) continue;   /* a dead item is no user */
            if (!buf_bytes(b->items[k], s->ir, &x)) return false;
            *alloc += x;
        }
        return true;
    }
    if (!buf_bytes(b, s->ir, free_)) return false;
    if (!(b->kind == BUF_EXTERN && b->ext == EXT_MULTI_OUTPUT && b->mo_of)) *alloc = *free_;
    return true;
}

/* The clone whose storage an on-clone fallback's result is (IrFallback.on_clone: Inductor's
 * ScatterFallback mutates clone(x) in place), for b that fallback's own buffer or its item:
 * argument 0 when it is a buffer computed here that nothing else reads (the clone Inductor
 * would realize for it); NULL otherwise (then the result counts as a buffer of its own).
 * Then the fallback's buffer and item cost nothing (the NoneLayout buffer of a mutation),
 * and the clone is freed after the fallback, its last reader: the readers of the mutated
 * value read the mutation's 0-byte name. (The newest memory.py forwards them to the clone
 * through mutation_real_name; the PyTorch 2.11 compiles of the unseen logs behave as without
 * it: gat's scatter_reduce amax keeps its eq reader last, after the matmul, two kernels.) */
static const Buffer *clone_of(const Schedule *s, const Buffer *b) {
    const Buffer *o = b->kind == BUF_EXTERN && b->ext == EXT_MULTI_OUTPUT && b->mo_of ? b->mo_of : b;
    if (o->kind != BUF_EXTERN || o->ext != EXT_FALLBACK || !o->fb || !o->fb->on_clone || o->neargs < 1) return NULL;
    const Buffer *c = o->eargs[0].buf;
    if (!c || c->kind == BUF_INPUT || c->layout.multi) return NULL;
    for (int i = 0; i < s->nnodes; i++) {
        if (s->nodes[i].dead || s->nodes[i].buf == o) continue;
        for (int r = 0; r < s->nodes[i].deps.nreads; r++)
            if (s->nodes[i].deps.reads[r].buf == c) return NULL;
    }
    return c;
}

/* graph.get_dep_size_hint of a read: the elements the dependency walks (MemoryDep.get_numel:
 * the ranges of the vars its index uses; an indirect or star dep the whole buffer) times the
 * dtype size; false when symbolic. A freeable input is sized by its last read, as
 * get_freeable_input_buf keeps the last dep seen per name. */
static bool dep_bytes(const Dep *d, const LoopBody *body, const IrModule *m, int64_t *out) {
    SymCtx *sy = m->ctx->sym;
    const Buffer *b = d->buf;
    if (d->kind != DEP_MEMORY || !d->index || !body || ir_index_is_indirect(d->index)) {
        int64_t n = 1, v;
        for (int i = 0; i < b->layout.ndim; i++) { if (!size_hint(m, b->layout.size[i], &v)) return false; n *= v; }
        *out = n * (int64_t)dtype_size(b->layout.dtype);
        return true;
    }
    Expr *vars[MI_MAX_DIMS * 2], *sizes[MI_MAX_DIMS * 2];
    int nv = 0;
    Expr *idx = dep_normalize(sy, d->index, body, vars, sizes, &nv);
    const char *used[64];
    int nu = sym_free_symbols(idx, used, 64);
    int64_t n = 1;
    for (int i = 0; i < nv; i++) {
        bool in = false;
        for (int u = 0; u < nu; u++) in |= strcmp(used[u], vars[i]->name) == 0;
        int64_t v;
        if (!in) continue;
        if (!size_hint(m, sizes[i], &v)) return false;
        n *= v;
    }
    *out = n * (int64_t)dtype_size(b->layout.dtype);
    return true;
}

/* The units' buffers and edges; false when a size is symbolic. */
static bool pm_build(const Schedule *s, int nu, const int *ustart, const int *ss, const int *su, Pm *p) {
    const IrModule *m = s->ir;
    SymCtx *sy = m->ctx->sym;
    memset(p, 0, sizeof *p);
    p->nu = nu;
    p->nb = m->nbufs;
    p->b = mi_xcalloc(p->nb + 1, sizeof(PmBuf));
    p->size = mi_xcalloc(nu + 1, sizeof(int64_t));
    p->pred_bufs = mi_xcalloc(nu + 1, sizeof(int *));
    p->npred_bufs = mi_xcalloc(nu + 1, sizeof(int));
    p->ss = ss;
    p->su = su;
    for (int i = 0; i < p->nb; i++) p->b[i].producer = -2;   /* -2: not a planned buffer */
    bool ok = true;
    /* producers: a node's own buffer is made by its unit (a MultiOutput item by its own node,
     * though the fallback's call writes it); other buffers by the first unit writing them */
    for (int pass = 0; pass < 2; pass++)
        for (int u = 0; u < nu; u++)
            for (int q = ustart[u]; q < ustart[u + 1]; q++) {
                const SchedGroup *g = &s->groups[s->order[q]];
                for (int i = 0; i < g->n; i++) {
                    const DepSet *d = &s->nodes[g->nodes[i]].deps;
                    for (int w = pass ? 0 : -1; w < (pass ? d->nwrites : 0); w++) {
                        const Buffer *b = w < 0 ? s->nodes[g->nodes[i]].buf : d->writes[w].buf;
                        PmBuf *pb = &p->b[b->id];
                        if (b->kind == BUF_INPUT || pb->producer != -2) continue;
                        if (b->kind == BUF_EXTERN && b->ext == EXT_MULTI_OUTPUT && !node_alive(s, b)) continue;   /* removed */
                        pb->producer = u;
                        pb->output = b->output_index >= 0;
                        if (!buf_size(s, b, sy, &pb->alloc, &pb->size)) ok = false;
                        if (clone_of(s, b)) pb->alloc = pb->size = 0;   /* the mutated clone: a rename */
                        p->size[u] += pb->alloc;
                    }
                }
            }
    /* readers: successors of a buffer, predecessor buffers of a unit; freeable inputs */
    for (int u = 0; u < nu && ok; u++)
        for (int q = ustart[u]; q < ustart[u + 1]; q++) {
            const SchedGroup *g = &s->groups[s->order[q]];
            for (int i = 0; i < g->n; i++) {
                const DepSet *d = &s->nodes[g->nodes[i]].deps;
                for (int r = 0; r < d->nreads; r++) {
                    const Buffer *b = d->reads[r].buf;
                    PmBuf *pb = &p->b[b->id];
                    if (b->kind == BUF_INPUT) {
                        if (nonfreeable(b->name)) continue;
                        if (pb->producer == -2) {
                            pb->producer = -1;
                            pb->output = false;
                            for (int j = 0; j < m->noutputs; j++) pb->output |= m->outputs[j] == b;
                        }
                        if (pb->producer == -1 && !dep_bytes(&d->reads[r], s->nodes[g->nodes[i]].buf->body, m, &pb->size)) ok = false;
                    } else if (pb->producer < 0 || pb->producer == u) continue;
                    push(&pb->succ, &pb->nsucc, u);
                    push(&p->pred_bufs[u], &p->npred_bufs[u], b->id);
                }
            }
        }
    p->npred = mi_xcalloc(nu + 1, sizeof(int));
    p->preds = mi_xcalloc(nu + 1, sizeof(int *));
    p->npreds = mi_xcalloc(nu + 1, sizeof(int));
    for (int u = 0; u < nu; u++)
        for (int k = ss[u]; k < ss[u + 1]; k++) { p->npred[su[k]]++; push(&p->preds[su[k]], &p->npreds[su[k]], u); }
    return ok;
}

static void pm_free(Pm *p) {
    for (int i = 0; i < p->nb; i++) free(p->b[i].succ);
    for (int u = 0; u < p->nu; u++) { free(p->pred_bufs[u]); free(p->preds[u]); }
    free(p->b); free(p->size); free(p->pred_bufs); free(p->npred_bufs); free(p->npred); free(p->preds); free(p->npreds);
}

/* memory.py estimate_peak_memory: each buffer allocated at its producer's step (a freeable
 * input at step 0), freed after the step of its last reader. A graph output gets end_step -1
 * in compute_memory_timeline, so its size is taken off at step 0 (memory[end_step + 1] -=
 * size_free): it never counts once made, and counts negative before. Example: a bias-grad sum
 * (an output) reading only the tangent is best run first, as Inductor's DFS order does. */
static int64_t pm_peak(const Pm *p, const int *order) {
    int n = p->nu;
    int *step = mi_xmalloc(sizeof(int) * (n + 1));
    int64_t *delta = mi_xcalloc(n + 2, sizeof(int64_t));
    for (int t = 0; t < n; t++) step[order[t]] = t;
    for (int i = 0; i < p->nb; i++) {
        const PmBuf *b = &p->b[i];
        if (b->producer == -2) continue;
        int start = b->producer >= 0 ? step[b->producer] : 0, end = start;
        if (b->producer == -1 && !b->nsucc) continue;
        for (int k = 0; k < b->nsucc; k++) if (step[b->succ[k]] > end) end = step[b->succ[k]];
        if (b->output) end = -1;
        delta[start] += b->producer >= 0 ? b->alloc : b->size;
        delta[end + 1] -= b->size;
    }
    int64_t cur = 0, peak = 0;
    for (int t = 0; t <= n; t++) { cur += delta[t]; if (cur > peak) peak = cur; }
    free(step);
    free(delta);
    return peak;
}

/* memory.py topological_sort_lpmf: among ready units, the one keeping the running peak lowest
 * (max(live + size, peak so far)), then the one freeing most (size - memory_to_free), then the
 * earliest in the baseline. */
static void pm_lpmf(const Pm *p, int *out) {
    int n = p->nu, no = 0;
    int *indeg = mi_xmalloc(sizeof(int) * (n + 1)), *outdeg = mi_xcalloc(p->nb + 1, sizeof(int));
    int64_t *to_free = mi_xcalloc(n + 1, sizeof(int64_t));
    bool *ready = mi_xcalloc(n + 1, 1);
    for (int u = 0; u < n; u++) { indeg[u] = p->npred[u]; ready[u] = indeg[u] == 0; }
    int64_t live = 0, out_mem = 0;
    for (int i = 0; i < p->nb; i++) {
        const PmBuf *b = &p->b[i];
        if (b->producer == -2 || (b->producer == -1 && !b->nsucc)) continue;
        outdeg[i] = b->nsucc + b->output;
        if (b->producer == -1) live += b->size;
        if (b->output) out_mem += b->size;
    }
    int64_t peak = live > out_mem ? live : out_mem;
    for (int u = 0; u < n; u++) {
        for (int k = 0; k < p->npred_bufs[u]; k++)
            if (outdeg[p->pred_bufs[u][k]] == 1) to_free[u] += p->b[p->pred_bufs[u][k]].size;
    }
    for (int i = 0; i < p->nb; i++)   /* written and used only inside its own unit */
        if (p->b[i].producer >= 0 && outdeg[i] == 0) to_free[p->b[i].producer] += p->b[i].size;
    while (no < n) {
        int best = -1;
        int64_t k1 = 0, k2 = 0;
        for (int u = 0; u < n; u++) {
            if (!ready[u]) continue;
            int64_t a = live + p->size[u] > peak ? live + p->size[u] : peak, b = p->size[u] - to_free[u];
            if (best < 0 || a < k1 || (a == k1 && b < k2)) { best = u; k1 = a; k2 = b; }
        }
        if (best < 0) break;
        ready[best] = false;
        out[no++] = best;
        live += p->size[best];
        if (live > peak) peak = live;
        live -= to_free[best];
        for (int k = p->ss[best]; k < p->ss[best + 1]; k++)
            if (--indeg[p->su[k]] == 0) ready[p->su[k]] = true;
        for (int k = 0; k < p->npred_bufs[best]; k++) {
            int bi = p->pred_bufs[best][k];
            if (--outdeg[bi] == 1)
                for (int j = 0; j < p->b[bi].nsucc; j++) to_free[p->b[bi].succ[j]] += p->b[bi].size;
        }
    }
    free(indeg); free(outdeg); free(to_free); free(ready);
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* memory.py topological_sort_bfs: among ready units, the one whose predecessors ran earliest
 * (their sorted execution steps compared as lists), then the earliest in the baseline. */
static void pm_bfs(const Pm *p, int *out) {
    int n = p->nu, no = 0;
    int *indeg = mi_xmalloc(sizeof(int) * (n + 1)), *step = mi_xmalloc(sizeof(int) * (n + 1));
    int **prio = mi_xcalloc(n + 1, sizeof(int *));
    bool *ready = mi_xcalloc(n + 1, 1);
    for (int u = 0; u < n; u++) { indeg[u] = p->npred[u]; ready[u] = indeg[u] == 0; step[u] = -1; }
    while (no < n) {
        int best = -1;
        for (int u = 0; u < n; u++) {
            if (!ready[u]) continue;
            if (!prio[u]) {   /* its predecessors' steps, ascending */
                prio[u] = mi_xmalloc(sizeof(int) * (p->npreds[u] + 1));
                for (int k = 0; k < p->npreds[u]; k++) prio[u][k] = step[p->preds[u][k]];
                qsort(prio[u], p->npreds[u], sizeof(int), cmp_int);
            }
            if (best < 0) { best = u; continue; }
            int c = 0, na = p->npreds[u], nb = p->npreds[best];
            for (int k = 0; k < na && k < nb && !c; k++) c = (prio[u][k] > prio[best][k]) - (prio[u][k] < prio[best][k]);
            if (!c) c = (na > nb) - (na < nb);
            if (c < 0) best = u;   /* equal: the lower index, already held */
        }
        if (best < 0) break;
        ready[best] = false;
        step[best] = no;
        out[no++] = best;
        for (int k = p->ss[best]; k < p->ss[best + 1]; k++)
            if (--indeg[p->su[k]] == 0) ready[p->su[k]] = true;
    }
    for (int u = 0; u < n; u++) free(prio[u]);
    free(prio); free(indeg); free(step); free(ready);
}

/* memory.py topological_sort_dfs: visit units by (size with reads, baseline index), each after
 * its predecessors visited in the same order. */
typedef struct DfsCtx { const Pm *p; const int64_t *key; bool *seen; int *out, no; } DfsCtx;
static int cmp_dfs(const void *a, const void *b, void *arg) {
    const int64_t *key = arg;
    int x = *(const int *)a, y = *(const int *)b;
    if (key[x] != key[y]) return key[x] < key[y] ? -1 : 1;
    return (x > y) - (x < y);
}
static void dfs_visit(DfsCtx *c, int u) {
    if (c->seen[u]) return;
    c->seen[u] = true;
    int np = c->p->npreds[u], *pr = mi_xmalloc(sizeof(int) * (np + 1));
    if (np) memcpy(pr, c->p->preds[u], sizeof(int) * np);   /* a unit without predecessors has preds[u] NULL */
    qsort_r(pr, np, sizeof(int), cmp_dfs, (void *)c->key);
    for (int k = 0; k < np; k++) dfs_visit(c, pr[k]);
    free(pr);
    c->out[c->no++] = u;
}
static void pm_dfs(const Pm *p, int *out) {
    int n = p->nu;
    int64_t *key = mi_xmalloc(sizeof(int64_t) * (n + 1));
    int *all = mi_xmalloc(sizeof(int) * (n + 1));
    for (int u = 0; u < n; u++) {
        key[u] = p->size[u];
        for (int k = 0; k < p->npred_bufs[u]; k++) key[u] += p->b[p->pred_bufs[u][k]].size;
        all[u] = u;
    }
    qsort_r(all, n, sizeof(int), cmp_dfs, key);
    DfsCtx c = {p, key, mi_xcalloc(n + 1, 1), out, 0};
    for (int k = 0; k < n; k++) dfs_visit(&c, all[k]);
    free(c.seen); free(all); free(key);
}

/* order holds every unit once and puts each edge's source first */
static bool is_topological(const Pm *p, const int *order) {
    int n = p->nu;
    int *pos = mi_xmalloc(sizeof(int) * (n + 1));
    bool ok = true;
    for (int u = 0; u < n; u++) pos[u] = -1;
    for (int t = 0; t < n && ok; t++) {
        if (order[t] < 0 || order[t] >= n || pos[order[t]] >= 0) ok = false;
        else pos[order[t]] = t;
    }
    for (int u = 0; u < n && ok; u++)
        for (int k = p->ss[u]; k < p->ss[u + 1] && ok; k++) ok = pos[u] < pos[p->su[k]];
    free(pos);
    return ok;
}

int *sched_peak_memory_order(const Schedule *s, int nu, const int *ustart, const int *ss, const int *su,
                             char *note, size_t notelen) {
    Pm p;
    if (note && notelen) note[0] = 0;
    if (nu < 2 || !pm_build(s, nu, ustart, ss, su, &p)) {
        if (nu >= 2) pm_free(&p);
        return NULL;
    }
    int *base = mi_xmalloc(sizeof(int) * (nu + 1)), *best = NULL;
    for (int u = 0; u < nu; u++) base[u] = u;
    int64_t bpeak = pm_peak(&p, base), peak0 = bpeak;
    static const char *const names[3] = {"lpmf", "bfs", "dfs"};
    const char *won = NULL;
    for (int k = 0; k < 3; k++) {
        int *o = mi_xmalloc(sizeof(int) * (nu + 1));
        for (int u = 0; u < nu; u++) o[u] = -1;
        if (k == 0) pm_lpmf(&p, o);
        else if (k == 1) pm_bfs(&p, o);
        else pm_dfs(&p, o);
        int64_t pk = is_topological(&p, o) ? pm_peak(&p, o) : INT64_MAX;   /* (memory.py skips a method that fails) */
        if (pk < bpeak) { free(best); best = o; bpeak = pk; won = names[k]; }
        else free(o);
    }
    if (best && note) snprintf(note, notelen, "reordered for peak memory (%s): %lld -> %lld bytes", won, (long long)peak0, (long long)bpeak);
    free(base);
    pm_free(&p);
    return best;
}
