/* sched_score.c — what two groups that do not feed each other share, dependency by dependency
 * (Inductor's score_fusion_memory for a horizontal pair). The fusion rounds of scheduler.c pair
 * groups that touch a common buffer; Inductor then scores such a pair by the bytes of the
 * MemoryDeps both sides have (equal after normalization: the same buffer, the same index over
 * the same normalized loop ranges) and refuses a horizontal pair that shares less than
 * config.score_fusion_memory_threshold (10 bytes; can_fuse_horizontal). Two reads of one buffer
 * at different indexes share nothing: the row-wise and the column-wise softmax statistics of
 * one [6, 6] matrix (6*c0 + k against c0 + 6*k) stay two kernels. On the GPU a pair whose reads
 * differ only by loop order is still worth trying when one side is pointwise
 * (shared_data_after_reordering_loop: the merge reorders the pointwise side's loops,
 * core/scheduler/sched_reshape.c; two reductions are never reordered). */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV (MI_MAX_DIMS * 2)

/* One normalized dependency: index over c0.. with the ranges of the vars it uses. done: made
 * (in a node's cache, SchedNode.ndeps). */
typedef struct NDep {
    const Buffer *buf;
    DepKind kind;
    Expr *index;
    int nv;
    Expr *sizes[MAXV];
    int64_t bytes;
    bool done;
} NDep;

/* MemoryDep canonicalize without normalization (extract_read_writes(normalize=False), what
 * GPU nodes carry under loop_ordering_after_fusion): the node's vars of range 1 dropped, the
 * rest renamed c0.. in order. Returns the index; *nv and sizes[] the kept vars' ranges. */
Expr *sched_dep_canon(SymCtx *S, Expr *index, const LoopBody *b, Expr **sizes, int *nv) {
    const char *from[MAXV];
    Expr *to[MAXV];
    char names[MAXV][16];
    int k = 0;
    for (int i = 0; i < b->nvars && i < MAXV; i++) {
        int64_t one;
        from[i] = b->vars[i]->name;
        if (sym_is_int(b->ranges[i], &one) && one == 1) { to[i] = sym_int(S, 0); continue; }
        snprintf(names[i], 16, "c%d", k);
        sizes[k++] = b->ranges[i];
        to[i] = sym_symbol(S, names[i]);
    }
    *nv = k;
    return sym_subst(S, index, from, to, b->nvars < MAXV ? b->nvars : MAXV);
}

/* MemoryDep.numbytes_hint: the numel of the vars the index uses (the buffer's for an indirect
 * index), times the element size; 64 for a symbolic size (a size hint Inductor would have).
 * A numel naming an unbacked symbol (u0 of masked_select, of an item()) has no hint: 0, as
 * Scheduler.dep_size_hint gives a dep whose has_unbacked_symbols() holds (get_dep_size_hint),
 * so two reductions over masked_select's f32[u0] share nothing and stay two kernels. */
static int64_t ndep_bytes(const IrModule *m, const NDep *d) {
    SymCtx *S = m->ctx->sym;
    int64_t n = 1, v;
    if (d->kind == DEP_STAR || ir_index_is_indirect(d->index)) {
        Expr *numel = layout_numel(S, &d->buf->layout);
        if (ir_expr_unbacked(m, numel)) return 0;
        if (!sym_is_int(numel, &n)) n = 64;
    } else
        for (int i = 0; i < d->nv; i++) {
            if (ir_expr_unbacked(m, d->sizes[i])) return 0;
            n *= sym_is_int(d->sizes[i], &v) ? v : 64;
        }
    return n * (int64_t)dtype_size(d->buf->layout.dtype);
}

void sched_node_forget_ndeps(SchedNode *n) {
    for (int c = 0; c < 2; c++) {
        free(n->ndeps[c]);
        n->ndeps[c] = NULL;
    }
}

/* Dep k of node nd (its reads, then its writes) normalized (canon: sched_dep_canon, else
 * dep_normalize), from the node's cache: Inductor normalizes a node's read_writes once, when
 * the node is made; normalizing them again for every pair scored was 30% of the scheduler's
 * time on a 1 000-node chain (every block reads the same weight and bias). */
static const NDep *node_ndep(const Schedule *s, SchedNode *nd, int k, bool canon) {
    const DepSet *d = &nd->deps;
    NDep **cache = &nd->ndeps[canon];
    if (!*cache) *cache = mi_xcalloc((size_t)(d->nreads + d->nwrites) + 1, sizeof **cache);
    NDep *y = &(*cache)[k];
    if (y->done) return y;
    SymCtx *S = s->ir->ctx->sym;
    const Dep *x = k < d->nreads ? &d->reads[k] : &d->writes[k - d->nreads];
    y->buf = x->buf;
    y->kind = x->kind;
    if (x->kind == DEP_MEMORY) {
        Expr *vars[MAXV];
        y->index = canon ? sched_dep_canon(S, x->index, nd->buf->body, y->sizes, &y->nv)
                         : dep_normalize(S, x->index, nd->buf->body, vars, y->sizes, &y->nv);
    }
    y->bytes = ndep_bytes(s->ir, y);
    y->done = true;
    return y;
}

static bool ndep_eq(const NDep *a, const NDep *b) {
    if (a->buf != b->buf || a->kind != b->kind) return false;
    if (a->kind == DEP_STAR) return true;
    if (a->index != b->index || a->nv != b->nv) return false;
    for (int i = 0; i < a->nv; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}

/* The normalized reads and writes of nodes[0..n) on the buffers `on` names (n_on of them),
 * without repeats (a set, as Inductor's read_writes). */
static int collect(const Schedule *s, const int *nodes, int n, const Buffer *const *on, int n_on, bool canon, NDep **out) {
    NDep *v = NULL;
    int nv = 0, cap = 0;
    for (int i = 0; i < n; i++) {
        SchedNode *nd = &s->nodes[nodes[i]];
        const DepSet *d = &nd->deps;
        for (int k = 0; k < d->nreads + d->nwrites; k++) {
            const Dep *x = k < d->nreads ? &d->reads[k] : &d->writes[k - d->nreads];
            bool want = false;
            for (int j = 0; j < n_on && !want; j++) want = on[j] == x->buf;
            if (!want) continue;
            const NDep *y = node_ndep(s, nd, k, canon);
            bool dup = false;
            for (int j = 0; j < nv && !dup; j++) dup = ndep_eq(&v[j], y);
            if (dup) continue;
            if (nv == cap) { cap = cap ? 2 * cap : 16; v = mi_xrealloc(v, sizeof *v * (size_t)cap); }
            v[nv++] = *y;
        }
    }
    *out = v;
    return nv;
}

/* The (stride hint, range) terms of a normalized index sorted by stride, and its offset:
 * MemoryDep.normalize_with_stride_order (two deps equal under it differ only by loop order).
 * The strides are sizevars.stride_hints (the index at c_i = 1 minus at every c 0), so a view's
 * FloorDiv / ModularIndexing counts by its first step, as Inductor's. */
static bool same_up_to_order(SymCtx *S, const NDep *a, const NDep *b) {
    if (a->buf != b->buf || a->kind != DEP_MEMORY || b->kind != DEP_MEMORY || a->nv != b->nv || a->nv == 0 || a->nv > MAXV) return false;
    if (ir_index_is_indirect(a->index) || ir_index_is_indirect(b->index)) return false;
    int64_t ca[MAXV], cb[MAXV], ra[MAXV], rb[MAXV];
    Expr *zero = sym_int(S, 0);
    char vn[MAXV][16];
    const char *vnames[MAXV];
    for (int i = 0; i < a->nv; i++) {
        snprintf(vn[i], 16, "c%d", i);
        vnames[i] = vn[i];
    }
    for (int side = 0; side < 2; side++) {
        const NDep *d = side ? b : a;
        int64_t *c = side ? cb : ca, *r = side ? rb : ra;
        Expr *at[MAXV];
        for (int i = 0; i < d->nv; i++) at[i] = zero;
        Expr *base = sym_subst(S, d->index, vnames, at, d->nv);
        for (int i = 0; i < d->nv; i++) {
            at[i] = sym_int(S, 1);
            Expr *st = sym_simplify(S, sym_sub(S, sym_subst(S, d->index, vnames, at, d->nv), base), NULL, 0);
            at[i] = zero;
            if (!sym_is_int(st, &c[i]) || !sym_is_int(d->sizes[i], &r[i])) return false;
        }
        for (int i = 1; i < d->nv; i++)   /* insertion sort by coefficient, largest first */
            for (int j = i; j > 0 && c[j] > c[j - 1]; j--) {
                int64_t t = c[j]; c[j] = c[j - 1]; c[j - 1] = t;
                t = r[j]; r[j] = r[j - 1]; r[j - 1] = t;
            }
    }
    for (int i = 0; i < a->nv; i++)
        if (ca[i] != cb[i] || ra[i] != rb[i]) return false;
    const char *nm[MAXV];   /* the offsets (every var 0) */
    Expr *za[MAXV];
    char names[MAXV][16];
    for (int i = 0; i < a->nv; i++) {
        snprintf(names[i], 16, "c%d", i);
        nm[i] = names[i];
        za[i] = zero;
    }
    return sym_subst(S, a->index, nm, za, a->nv) == sym_subst(S, b->index, nm, za, b->nv);
}

int64_t sched_shared_dep_bytes(const Schedule *s, const int *a, int na, const int *b, int nb, bool canon, bool *reorderable) {
    *reorderable = false;
    /* the buffers both sides touch */
    const Buffer **common = NULL;
    int nc = 0, cap = 0;
    for (int i = 0; i < na; i++) {
        const DepSet *d = &s->nodes[a[i]].deps;
        for (int k = 0; k < d->nreads + d->nwrites; k++) {
            const Buffer *x = k < d->nreads ? d->reads[k].buf : d->writes[k - d->nreads].buf;
            bool seen = false, in_b = false;
            for (int j = 0; j < nc && !seen; j++) seen = common[j] == x;
            for (int j = 0; j < nb && !seen && !in_b; j++) {
                const DepSet *e = &s->nodes[b[j]].deps;
                for (int q = 0; q < e->nreads + e->nwrites && !in_b; q++)
                    in_b = (q < e->nreads ? e->reads[q].buf : e->writes[q - e->nreads].buf) == x;
            }
            if (seen || !in_b) continue;
            if (nc == cap) { cap = cap ? 2 * cap : 8; common = mi_xrealloc(common, sizeof *common * (size_t)cap); }
            common[nc++] = x;
        }
    }
    NDep *da = NULL, *db = NULL;
    int ka = nc ? collect(s, a, na, common, nc, canon, &da) : 0, kb = nc ? collect(s, b, nb, common, nc, canon, &db) : 0;
    int64_t score = 0;
    SymCtx *S = s->ir->ctx->sym;
    for (int i = 0; i < ka; i++)
        for (int j = 0; j < kb; j++) {
            if (ndep_eq(&da[i], &db[j])) { score += da[i].bytes; break; }
            if (!*reorderable && same_up_to_order(S, &da[i], &db[j])) *reorderable = true;
        }
    free(da);
    free(db);
    free(common);
    return score;
}
