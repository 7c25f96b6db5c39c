/* sched_reshape.c — fusing nodes that walk the same elements through differently shaped outer
 * loops (Inductor compares SchedulerNode._sizes after simplify_and_reorder merged contiguous
 * dims; we split instead). A layer norm over [8, 256, 128] reduces over outer loops [8, 256];
 * the pointwise that normalizes its view [2048, 128] loops over [2048]: the same rows. When the
 * two outer range lists have the same total and one common refinement (the union of their
 * prefix products, each dividing the next: [8, 256] and [2048] -> [8, 256]), every node of both
 * groups is re-expressed over the refinement: loop var p_i over range r_i = R_a*...*R_b becomes
 * q_a*R_(a+1)*...*R_b + ... + q_b, later vars are renamed, and each index is re-simplified
 * under the new ranges (so ModularIndexing/FloorDiv from the view fold away). The iteration set
 * of each node is unchanged (a bijection), so the rewrite is always correct on its own; whether
 * the two groups may then share loops is decided by the scheduler's ordinary checks on the
 * rewritten dependencies (writer and reader index must be equal), and a refused attempt is
 * undone. A kept rewrite lives as long as the schedule: sched_free restores the lowered bodies,
 * so the IR module is the same before and after scheduling (a second `sched` decides alike).
 * Splitting (not merging) keeps indices linear: no FloorDiv/ModularIndexing appears.
 * On the GPU a pointwise node joining a reduction kernel is split into the kernel's (numel,
 * rnumel) (simd.py SIMDKernel.is_compatible), so the inner loops are refined the same way (a
 * pointwise [2, 4, 8, 8] and the sum over [2, 4] x [64] meet as [2, 4] x [8, 8]); first the
 * reads across the pair must be the writes' elements as Inductor's fusable_read_and_write
 * sees GPU deps (not normalized unless the two have different numbers of vars). */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV (MI_MAX_DIMS * 2)

typedef struct Saved { int node; LoopBody body; Expr **indexes; } Saved;
struct SchedReshape { Saved *v; int n; };

/* The outer loop ranges a group runs under: its reductions' pointwise dims, or (pointwise only)
 * all dims of its nodes (identical across the group). */
static int outer_list(const Schedule *s, const int *nodes, int n, int red, Expr **out) {
    const LoopBody *b = s->nodes[nodes[0]].buf->body;
    if (!b) return -1;
    (void)n;
    int k = red >= 0 ? red : b->nvars;
    for (int i = 0; i < k; i++) out[i] = b->ranges[i];
    return k;
}

static bool all_int(Expr *const *l, int n, int64_t *v) {
    for (int i = 0; i < n; i++)
        if (!sym_is_int(l[i], &v[i]) || v[i] < 2) return false;
    return true;
}

/* Common refinement of two constant range lists with the same total. cut[i]: the position in R
 * where old dim i starts (cut[n] = nr). False when the prefix products do not nest. */
static bool refine(const int64_t *a, int na, const int64_t *b, int nb, int64_t *R, int *nr, int *cuta, int *cutb) {
    int64_t pa = a[0], pb = b[0], prev = 1;
    int i = 0, j = 0, k = 0;
    cuta[0] = cutb[0] = 0;
    while (i < na && j < nb) {
        int64_t next = pa < pb ? pa : pb;
        if (next <= prev || next % prev || k == MAXV) return false;
        R[k++] = next / prev;
        prev = next;
        if (pa == next) { cuta[++i] = k; if (i < na && __builtin_mul_overflow(pa, a[i], &pa)) return false; }
        if (pb == next) { cutb[++j] = k; if (j < nb && __builtin_mul_overflow(pb, b[j], &pb)) return false; }
    }
    *nr = k;
    return i == na && j == nb;
}

static void print_list(const int64_t *v, int n, char *out, size_t on) {
    size_t p = 0;
    p += (size_t)snprintf(out + p, on - p, "[");
    for (int i = 0; i < n && p < on; i++) p += (size_t)snprintf(out + p, on - p, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (p < on) snprintf(out + p, on - p, "]");
}

/* Rewrite body b: its vars [at, at + nd) become the fine ranges R[0..nr), old var at + i
 * covering R[cut[i]..cut[i+1]); the vars after them are renamed (p2 -> p4 when two vars were
 * added). An outer split (at 0) grows npoint, an inner one of a reduction's vars (at npoint)
 * grows nred. In place (the body is the buffer's; `save` keeps what undo needs). */
static void split_body(IrModule *m, LoopBody *b, int at, int nd, const int64_t *R, int nr, const int *cut) {
    SymCtx *S = m->ctx->sym;
    int nv = b->nvars - nd + nr;
    Expr **vars = arena_alloc(&m->arena, sizeof(Expr *) * (nv + 1));
    Expr **ranges = arena_alloc(&m->arena, sizeof(Expr *) * (nv + 1));
    int dov[MAXV];
    for (int j = 0; j < nv; j++) {
        char nm[16];
        snprintf(nm, sizeof nm, "p%d", j);
        vars[j] = sym_symbol(S, nm);
    }
    const char *from[MAXV];
    Expr *to[MAXV];
    for (int i = 0; i < at; i++) {
        from[i] = b->vars[i]->name;
        to[i] = vars[i];
        ranges[i] = b->ranges[i];
        dov[i] = b->dim_of_var[i];
    }
    for (int i = 0; i < nd; i++) {
        Expr *e = sym_int(S, 0);
        for (int j = cut[i]; j < cut[i + 1]; j++) {
            e = sym_add(S, sym_mul(S, e, sym_int(S, R[j])), vars[at + j]);
            ranges[at + j] = sym_int(S, R[j]);
            dov[at + j] = b->dim_of_var[at + i];
        }
        from[at + i] = b->vars[at + i]->name;
        to[at + i] = e;
    }
    for (int i = at + nd; i < b->nvars; i++) {
        from[i] = b->vars[i]->name;
        to[i] = vars[i - nd + nr];
        ranges[i - nd + nr] = b->ranges[i];
        dov[i - nd + nr] = b->dim_of_var[i];
    }
    int old = b->nvars;
    b->vars = vars;
    b->ranges = ranges;
    if (at < b->npoint) b->npoint += nr - nd;
    else b->nred += nr - nd;
    b->nvars = nv;
    memcpy(b->dim_of_var, dov, sizeof(int) * (size_t)nv);
    for (int k = 0; k < b->nindexes; k++)
        b->indexes[k] = ir_simplify(m, sym_subst(S, b->indexes[k], from, to, old), b);
}

static bool save_node(Schedule *s, SchedReshape *u, int node) {
    LoopBody *b = s->nodes[node].buf->body;
    u->v = mi_xrealloc(u->v, sizeof(Saved) * (size_t)(u->n + 1));
    Saved *sv = &u->v[u->n++];
    sv->node = node;
    sv->body = *b;
    sv->indexes = mi_xmalloc(sizeof(Expr *) * (size_t)(b->nindexes + 1));
    memcpy(sv->indexes, b->indexes, sizeof(Expr *) * (size_t)b->nindexes);
    return true;
}

/* Inductor's stride_vars for loop var v of body b: index f with the other pointwise vars and
 * v set to 0 subtracted from f with the other pointwise vars 0 and v = 1. */
Expr *sched_var_stride(SymCtx *S, const LoopBody *b, Expr *f, int v) {
    const char *names[MAXV];
    Expr *one[MAXV], *zero[MAXV];
    int k = 0;
    for (int i = 0; i < b->npoint && k < MAXV; i++, k++) {
        names[k] = b->vars[i]->name;
        zero[k] = sym_int(S, 0);
        one[k] = sym_int(S, i == v ? 1 : 0);
    }
    return sym_sub(S, sym_subst(S, f, names, one, k), sym_subst(S, f, names, zero, k));
}

/* Would Inductor's _simplify_loops_impl merge the pointwise loop vars lo..hi (outer to inner,
 * consecutive) of every node into one? Its can_merge_dims(a, b), for the inner group a (var hi,
 * size so far acc) and the next outer var b, on every index formula: stride_a * acc == stride_b,
 * then the sound test f(a = m1*acc, b = m2) == f(a = 0, b = m1 + m2). A channels-last read
 * (strides 1 and 144 for a [2, 4] pair) keeps the pair apart, so the node keeps loops [2, 4]
 * and never matches a node over [8]: the two are not fused (instance norm backward). */
static bool mergeable(Schedule *s, const int *nodes, int n, int lo, int hi) {
    SymCtx *S = s->ir->ctx->sym;
    Expr *m1 = sym_symbol(S, "_merge_tester1"), *m2 = sym_symbol(S, "_merge_tester2");
    for (int i = 0; i < n; i++) {
        const LoopBody *b = s->nodes[nodes[i]].buf->body;
        if (!b || hi >= b->npoint) return false;
        Expr *acc = b->ranges[hi];
        for (int j = hi - 1; j >= lo; j--) {
            const char *nm[2] = {b->vars[hi]->name, b->vars[j]->name};
            for (int k = 0; k < b->nindexes; k++) {
                Expr *f = b->indexes[k];
                if (sym_mul(S, sched_var_stride(S, b, f, hi), acc) != sched_var_stride(S, b, f, j)) return false;
                Expr *r1[2] = {sym_mul(S, m1, acc), m2}, *r2[2] = {sym_int(S, 0), sym_add(S, m1, m2)};
                if (sym_subst(S, f, nm, r1, 2) != sym_subst(S, f, nm, r2, 2)) return false;
            }
            acc = sym_mul(S, acc, b->ranges[j]);
        }
    }
    return true;
}

/* Every stretch of the refinement between cut points the two sides share is one loop on each
 * side once Inductor merged what it can: a side with several loops there must be able to merge
 * them (mergeable), else the sizes Inductor compares differ. */
static bool sides_merge(Schedule *s, const int *na, int nA, int ka, const int *ca, const int *nb, int nB, int kb, const int *cb) {
    int start_a = 0, start_b = 0;
    for (int ia = 1, ib = 1; ia <= ka && ib <= kb;) {
        if (ca[ia] < cb[ib]) { ia++; continue; }
        if (cb[ib] < ca[ia]) { ib++; continue; }
        /* a common cut: side a's vars start_a..ia-1, side b's start_b..ib-1 */
        if (ia - 1 > start_a && !mergeable(s, na, nA, start_a, ia - 1)) return false;
        if (ib - 1 > start_b && !mergeable(s, nb, nB, start_b, ib - 1)) return false;
        start_a = ia++;
        start_b = ib++;
    }
    return true;
}

static void recollect(Schedule *s, int node) {
    SchedNode *n = &s->nodes[node];
    sched_node_forget_ndeps(n);
    dep_set_free(&n->deps);
    ir_deps_collect(s->ir, n->buf, &n->deps);
}

/* The common refinement of the inner lists (the vars after each node's outer loops) of every
 * node of both groups that has inner loops: a reduction's reduction vars, the dims of a
 * pointwise node beyond the shared outer loops. All must walk the same total in nested
 * blocks ([8, 8] and [64] -> [8, 8]; [2, 8, 8] and [128] -> [2, 8, 8]). Returns its length
 * (0: no node has inner loops, or nothing to refine; -1: no common refinement). */
static int inner_refinement(const Schedule *s, const int *const *nodes, const int *n, const int *k, int64_t *R) {
    int nr = 0;
    int64_t total = 0;
    bool differ = false;
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < n[side]; i++) {
            const LoopBody *b = s->nodes[nodes[side][i]].buf->body;
            int ni = b->nvars - k[side];
            int64_t v[MAXV], t = 1, R2[MAXV];
            int c1[MAXV + 1], c2[MAXV + 1], nr2;
            if (ni <= 0) continue;
            if (ni > MAXV || !all_int(b->ranges + k[side], ni, v)) return -1;
            for (int j = 0; j < ni; j++) if (__builtin_mul_overflow(t, v[j], &t)) return -1;
            if (!nr) { memcpy(R, v, sizeof(int64_t) * (size_t)ni); nr = ni; total = t; continue; }
            if (t != total || !refine(R, nr, v, ni, R2, &nr2, c1, c2)) return -1;
            differ |= nr2 != nr || nr2 != ni;
            memcpy(R, R2, sizeof(int64_t) * (size_t)nr2);
            nr = nr2;
        }
    return differ ? nr : 0;
}

/* Scheduler.fusable_read_and_write on the GPU: node r's read rd of what node w writes (wr) is
 * the same element when the two canonical deps are equal; only when they have different numbers
 * of vars are both normalized first (contiguous vars merged), since the loops are not merged
 * when GPU nodes are made. So a pointwise [2, 4, 4, 64] does not join the sum of its view
 * [2, 16] x [8, 8] (four vars each, other indexes), while [2, 4, 8, 8] joins [2, 4] x [64]. */
static bool gpu_fusable_read(SymCtx *S, const Dep *rd, const LoopBody *rb, const Dep *wr, const LoopBody *wb) {
    if (rd->kind != DEP_MEMORY || wr->kind != DEP_MEMORY) return false;
    Expr *rs[MAXV], *ws[MAXV], *vars[MAXV];
    int rn, wn;
    Expr *ri = sched_dep_canon(S, rd->index, rb, rs, &rn), *wi = sched_dep_canon(S, wr->index, wb, ws, &wn);
    if (rn != wn) {
        ri = dep_normalize(S, rd->index, rb, vars, rs, &rn);
        wi = dep_normalize(S, wr->index, wb, vars, ws, &wn);
    }
    if (ri != wi || rn < wn) return false;
    for (int i = 0; i < wn; i++)
        if (rs[i] != ws[i]) return false;
    return true;
}

/* Does every read across the two groups of what the other group writes pass
 * gpu_fusable_read? (Scheduler.can_fuse_vertical: "memory deps did not match"; the first
 * failing pair is said in why.) */
static bool gpu_deps_match(const Schedule *s, const int *const *nodes, const int *n, char *why, size_t wn) {
    SymCtx *S = s->ir->ctx->sym;
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < n[side]; i++) {
            const SchedNode *R = &s->nodes[nodes[side][i]];
            for (int j = 0; j < n[!side]; j++) {
                const SchedNode *W = &s->nodes[nodes[!side][j]];
                for (int r = 0; r < R->deps.nreads; r++)
                    for (int w = 0; w < W->deps.nwrites; w++)
                        if (R->deps.reads[r].buf == W->deps.writes[w].buf &&
                            !gpu_fusable_read(S, &R->deps.reads[r], R->buf->body, &W->deps.writes[w], W->buf->body)) {
                            snprintf(why, wn, "%s read at a different index than %s writes it", R->deps.reads[r].buf->name, W->name);
                            return false;
                        }
            }
        }
    return true;
}

SchedReshape *sched_reshape_pair(Schedule *s, const int *na, int nA, int redA, const int *nb, int nB, int redB,
                                 char *note, size_t nn) {
    Expr *la[MAXV], *lb[MAXV];
    int64_t va[MAXV], vb[MAXV], R[MAXV], RI[MAXV];
    int ca[MAXV + 1], cb[MAXV + 1], nr = 0;
    note[0] = 0;
    int ka = outer_list(s, na, nA, redA, la), kb = outer_list(s, nb, nB, redB, lb);
    if (ka <= 0 || kb <= 0) return NULL;
    if (!all_int(la, ka, va) || !all_int(lb, kb, vb)) return NULL;
    /* a pointwise-only side against a reduction side: the prefix of its dims that covers the
     * reduction's outer total (the rest are its inner loop) */
    int64_t ta = 1, tb = 1;
    for (int i = 0; i < ka; i++) if (__builtin_mul_overflow(ta, va[i], &ta)) return NULL;
    for (int i = 0; i < kb; i++) if (__builtin_mul_overflow(tb, vb[i], &tb)) return NULL;
    if (redA < 0 && redB >= 0) {
        int64_t p = 1; int k = 0;
        while (k < ka && p < tb) p *= va[k++];
        if (p != tb) return NULL;
        ka = k; ta = p;
    } else if (redB < 0 && redA >= 0) {
        int64_t p = 1; int k = 0;
        while (k < kb && p < ta) p *= vb[k++];
        if (p != ta) return NULL;
        kb = k; tb = p;
    }
    if (ta != tb) return NULL;
    if (!refine(va, ka, vb, kb, R, &nr, ca, cb)) return NULL;
    /* the cpp backend compares loop sizes; Triton only the element counts (a GPU group is
       (numel, rnumel)), so there any split is what Inductor sees */
    if (s->ir->ctx->target != MI_DEV_CUDA && !sides_merge(s, na, nA, ka, ca, nb, nB, kb, cb)) return NULL;
    for (int side = 0; side < 2; side++) {   /* room for the new vars */
        const int *nodes = side ? nb : na;
        int n = side ? nB : nA, k = side ? kb : ka;
        for (int i = 0; i < n; i++) {
            const LoopBody *b = s->nodes[nodes[i]].buf->body;
            if (!b || b->nvars < k || b->npoint < k || b->nvars - k + nr > MAXV) return NULL;
        }
    }
    /* GPU (simd.py: a pointwise node joins a reduction kernel when its ranges split into the
     * kernel's (numel, rnumel), SIMDKernel.is_compatible): the inner loops refined too, so a
     * pointwise [2, 4, 8, 8] and the group-norm sum over [2, 4] x [64] meet as [2, 4] x [8, 8] */
    const int *sides[2] = {na, nb};
    int ns[2] = {nA, nB}, ks[2] = {ka, kb};
    bool gpu = s->ir->ctx->target == MI_DEV_CUDA;
    /* (a pointwise-only pair keeps the plain split: our lowering realizes some views Inductor
     * inlines, and the split is what lets their two kernels meet again, swin's rolled clone) */
    if (gpu && (redA >= 0 || redB >= 0) && !gpu_deps_match(s, sides, ns, note, nn)) return NULL;   /* note: why */
    int nri = (redA >= 0 || redB >= 0) && gpu ? inner_refinement(s, sides, ns, ks, RI) : 0;
    if (nri < 0) nri = 0;
    if (nr == ka && nr == kb && !nri) return NULL;   /* nothing to split: the shapes already agree */
    for (int side = 0; side < 2 && nri; side++)
        for (int i = 0; i < ns[side]; i++) {
            const LoopBody *b = s->nodes[sides[side][i]].buf->body;
            if (b->nvars - ks[side] > 0 && nr + nri > MAXV) return NULL;
        }
    SchedReshape *u = mi_xcalloc(1, sizeof *u);
    char from_a[96], from_b[96], to[96];
    print_list(va, ka, from_a, sizeof from_a);
    print_list(vb, kb, from_b, sizeof from_b);
    print_list(R, nr, to, sizeof to);
    size_t p = 0;
    if (nr != ka && nr != kb) p = (size_t)snprintf(note, nn, "; outer loops %s and %s both split to %s", from_a, from_b, to);
    else if (nr != ka || nr != kb) p = (size_t)snprintf(note, nn, "; outer loops %s split to %s", nr != ka ? from_a : from_b, to);
    if (nri && p < nn) {
        print_list(RI, nri, to, sizeof to);
        snprintf(note + p, nn - p, "; inner loops split to %s", to);
    }
    for (int side = 0; side < 2; side++) {
        const int *nodes = sides[side];
        int k = ks[side];
        const int *cut = side ? cb : ca;
        for (int i = 0; i < ns[side]; i++) {
            LoopBody *b = s->nodes[nodes[i]].buf->body;
            int ni = b->nvars - k;
            int64_t v[MAXV], R2[MAXV];
            int ci[MAXV + 1], c2[MAXV + 1], nr2 = 0;
            bool inner = nri && ni > 0 && all_int(b->ranges + k, ni, v) && refine(v, ni, RI, nri, R2, &nr2, ci, c2) && nr2 != ni;
            if (nr == k && !inner) continue;
            save_node(s, u, nodes[i]);
            if (nr != k) split_body(s->ir, b, 0, k, R, nr, cut);
            if (inner) split_body(s->ir, b, nr, ni, RI, nri, ci);
            recollect(s, nodes[i]);
        }
    }
    return u;
}

void sched_reshape_undo(Schedule *s, SchedReshape *u, bool deps) {
    if (!u) return;
    for (int i = u->n - 1; i >= 0; i--) {
        Saved *sv = &u->v[i];
        LoopBody *b = s->nodes[sv->node].buf->body;
        Expr **idx = b->indexes;
        *b = sv->body;
        b->indexes = idx;   /* same array (never reallocated after tracing): restore its items */
        memcpy(b->indexes, sv->indexes, sizeof(Expr *) * (size_t)b->nindexes);
        if (deps) recollect(s, sv->node);
    }
    for (int i = 0; i < u->n; i++) free(u->v[i].indexes);
    free(u->v);
    free(u);
}

/* ---- loop reordering (GPU) ---- */

/* sizevars.stride_hints of a dependency's index over a body's vars: per var, the index at that
 * var = 1 minus at every var 0 (a FloorDiv / ModularIndexing of a view counts as its first
 * step). False, as Inductor's decide_loop_order_to_match bails, unless the index's free symbols
 * are exactly the vars (a broadcast, an indirect or a size symbol: none), no range is 0 or 1 and
 * the strides are distinct. Example: the [128, 8] reshape of a permuted NCHW convolution read as
 * 64*p1 + 512*(p0 // 64) + ModularIndexing(p0, 1, 64): strides (1, 64). */
static bool var_strides(SymCtx *S, const Expr *idx, const LoopBody *b, int64_t *st) {
    const char *fs[MAXV + 1], *names[MAXV];
    Expr *at[MAXV];
    int nf = sym_free_symbols((Expr *)idx, fs, MAXV + 1);
    if (nf != b->nvars || b->nvars > MAXV) return false;
    for (int v = 0; v < b->nvars; v++) {
        bool has = false;
        for (int i = 0; i < nf; i++) has |= !strcmp(fs[i], b->vars[v]->name);
        int64_t r;
        if (!has || (sym_is_int(b->ranges[v], &r) && r < 2)) return false;   /* a symbolic range: its hint is > 1 */
        names[v] = b->vars[v]->name;
        at[v] = sym_int(S, 0);
    }
    Expr *base = sym_subst(S, (Expr *)idx, names, at, b->nvars);
    for (int v = 0; v < b->nvars; v++) {
        at[v] = sym_int(S, 1);
        Expr *d = sym_simplify(S, sym_sub(S, sym_subst(S, (Expr *)idx, names, at, b->nvars), base), NULL, 0);
        at[v] = sym_int(S, 0);
        if (!sym_is_int(d, &st[v])) return false;
        for (int u = 0; u < v; u++) if (st[u] == st[v]) return false;
    }
    return true;
}

/* Body b's loops permuted: new var k walks old var order[k] (Inductor's apply_new_loop_order). */
static void permute_body(IrModule *m, LoopBody *b, const int *order) {
    SymCtx *S = m->ctx->sym;
    int nv = b->nvars;
    Expr **ranges = arena_alloc(&m->arena, sizeof(Expr *) * (nv + 1));
    int dov[MAXV];
    const char *from[MAXV];
    Expr *to[MAXV];
    for (int k = 0; k < nv; k++) {
        ranges[k] = b->ranges[order[k]];
        dov[k] = b->dim_of_var[order[k]];
        from[k] = b->vars[order[k]]->name;
        to[k] = b->vars[k];
    }
    b->ranges = ranges;
    memcpy(b->dim_of_var, dov, sizeof(int) * (size_t)nv);
    for (int k = 0; k < b->nindexes; k++)
        b->indexes[k] = ir_simplify(m, sym_subst(S, b->indexes[k], from, to, nv), b);
}

SchedReshape *sched_reorder_pair(Schedule *s, const int *np, int nP, const int *nq, int nQ, char *note, size_t nn) {
    SymCtx *S = s->ir->ctx->sym;
    note[0] = 0;
    const LoopBody *pb = s->nodes[np[0]].buf->body;
    if (!pb || pb->nred || pb->nvars < 2 || pb->nvars > MAXV) return NULL;
    for (int i = 1; i < nP; i++) {   /* every node of P over the same loops */
        const LoopBody *b = s->nodes[np[i]].buf->body;
        if (!b || b->nred || b->nvars != pb->nvars) return NULL;
        for (int v = 0; v < b->nvars; v++) if (b->ranges[v] != pb->ranges[v]) return NULL;
    }
    /* the shared buffer with the most elements whose two dependencies walk it in other orders */
    int best[MAXV], have = 0;
    int64_t best_numel = -1;
    for (int i = 0; i < nP; i++) {
        const SchedNode *P = &s->nodes[np[i]];
        for (int x = 0; x < P->deps.nreads + P->deps.nwrites; x++) {
            const Dep *dp = x < P->deps.nreads ? &P->deps.reads[x] : &P->deps.writes[x - P->deps.nreads];
            if (dp->kind != DEP_MEMORY) continue;
            for (int j = 0; j < nQ; j++) {
                const SchedNode *Q = &s->nodes[nq[j]];
                const LoopBody *qb = Q->buf->body;
                if (!qb || qb->nvars != pb->nvars) continue;
                for (int y = 0; y < Q->deps.nreads + Q->deps.nwrites; y++) {
                    const Dep *dq = y < Q->deps.nreads ? &Q->deps.reads[y] : &Q->deps.writes[y - Q->deps.nreads];
                    if (dq->kind != DEP_MEMORY || dq->buf != dp->buf || dq->index == dp->index) continue;
                    int64_t sp[MAXV], sq[MAXV], numel = 1;
                    if (!var_strides(S, dp->index, pb, sp) || !var_strides(S, dq->index, qb, sq)) continue;
                    int order[MAXV];
                    bool okk = true;
                    for (int k = 0; k < qb->nvars && okk; k++) {
                        order[k] = -1;
                        for (int v = 0; v < pb->nvars; v++) if (sp[v] == sq[k]) order[k] = v;
                        okk = order[k] >= 0 && pb->ranges[order[k]] == qb->ranges[k];
                        int64_t r = 0;
                        if (okk) numel *= sym_is_int(qb->ranges[k], &r) ? r : 64;   /* a size hint */
                    }
                    if (!okk || numel <= best_numel) continue;
                    best_numel = numel;
                    memcpy(best, order, sizeof(int) * (size_t)qb->nvars);
                    have = 1;
                }
            }
        }
    }
    if (!have) return NULL;
    bool identity = true;
    for (int k = 0; k < pb->nvars; k++) identity &= best[k] == k;
    if (identity) return NULL;
    SchedReshape *u = mi_xcalloc(1, sizeof *u);
    size_t p = (size_t)snprintf(note, nn, "; loops of %s reordered to [", s->nodes[np[0]].name);
    for (int k = 0; k < pb->nvars && p < nn; k++) {
        char r[64];
        p += (size_t)snprintf(note + p, nn - p, "%s%s", k ? ", " : "", sym_str(pb->ranges[best[k]], r, sizeof r));
    }
    if (p < nn) snprintf(note + p, nn - p, "]");
    for (int i = 0; i < nP; i++) {
        save_node(s, u, np[i]);
        permute_body(s->ir, s->nodes[np[i]].buf->body, best);
        recollect(s, np[i]);
    }
    return u;
}

/* ---- merge_loops (GPU, after fusion) ---- */

/* Can body b's adjacent vars v (outer) and v + 1 become one var of range r_v * r_(v+1)? Every
 * index must depend on them only through r_(v+1) * p_v + p_(v+1): the index at (p_v, p_(v+1)) =
 * (m1, m2) equals the index at (0, r_(v+1) * m1 + m2) (_simplify_loops' can_merge_dims, its
 * sound version). Ranges of 1 and symbolic ranges are left alone. */
static bool can_merge(IrModule *m, const LoopBody *b, int v) {
    SymCtx *S = m->ctx->sym;
    int64_t ra, rb;
    if (!sym_is_int(b->ranges[v], &ra) || !sym_is_int(b->ranges[v + 1], &rb) || ra < 2 || rb < 2) return false;
    Expr *m1 = sym_symbol(S, "mi_merge1"), *m2 = sym_symbol(S, "mi_merge2");
    const char *nm[2] = {b->vars[v]->name, b->vars[v + 1]->name};
    Expr *at[2] = {m1, m2}, *flat[2] = {sym_int(S, 0), sym_add(S, sym_mul(S, sym_int(S, rb), m1), m2)};
    for (int k = 0; k < b->nindexes; k++)
        if (ir_simplify(m, sym_subst(S, b->indexes[k], nm, at, 2), b) != ir_simplify(m, sym_subst(S, b->indexes[k], nm, flat, 2), b))
            return false;
    return true;
}

/* Body b with vars v and v + 1 merged (p_v -> 0, p_(v+1) -> the merged var, later vars renamed
 * one down); in place, as split_body. */
static void merge_body(IrModule *m, LoopBody *b, int v) {
    SymCtx *S = m->ctx->sym;
    int nv = b->nvars - 1;
    Expr **vars = arena_alloc(&m->arena, sizeof(Expr *) * (nv + 1));
    Expr **ranges = arena_alloc(&m->arena, sizeof(Expr *) * (nv + 1));
    int dov[MAXV];
    const char *from[MAXV];
    Expr *to[MAXV];
    for (int j = 0; j < nv; j++) {
        char nm[16];
        snprintf(nm, sizeof nm, "p%d", j);
        vars[j] = sym_symbol(S, nm);
    }
    for (int i = 0; i < b->nvars; i++) {
        int j = i <= v ? i : i - 1;
        from[i] = b->vars[i]->name;
        to[i] = i == v ? sym_int(S, 0) : vars[j];
        if (i == v) continue;
        ranges[j] = i == v + 1 ? sym_mul(S, b->ranges[v], b->ranges[v + 1]) : b->ranges[i];
        dov[j] = b->dim_of_var[i];
    }
    int old = b->nvars;
    b->vars = vars;
    b->ranges = ranges;
    b->npoint -= 1;
    b->nvars = nv;
    memcpy(b->dim_of_var, dov, sizeof(int) * (size_t)nv);
    for (int k = 0; k < b->nindexes; k++)
        b->indexes[k] = ir_simplify(m, sym_subst(S, b->indexes[k], from, to, old), b);
}

SchedReshape *sched_merge_loops(Schedule *s, const int *nodes, int n) {
    const LoopBody *b0 = s->nodes[nodes[0]].buf->body;
    if (!b0 || b0->nred || b0->nvars < 2) return NULL;
    for (int i = 0; i < n; i++) {   /* a pointwise group: every node over the same loops */
        const LoopBody *b = s->nodes[nodes[i]].buf->body;
        if (!b || b->nred || b->nvars != b0->nvars) return NULL;
        for (int v = 0; v < b->nvars; v++) if (b->ranges[v] != b0->ranges[v]) return NULL;
    }
    SchedReshape *u = NULL;
    for (int v = b0->nvars - 2; v >= 0; v--) {   /* innermost pair first, as _simplify_loops */
        bool ok = true;
        for (int i = 0; i < n && ok; i++) ok = can_merge(s->ir, s->nodes[nodes[i]].buf->body, v);
        if (!ok) continue;
        if (!u) {
            u = mi_xcalloc(1, sizeof *u);
            for (int i = 0; i < n; i++) save_node(s, u, nodes[i]);
        }
        for (int i = 0; i < n; i++) merge_body(s->ir, s->nodes[nodes[i]].buf->body, v);
        b0 = s->nodes[nodes[0]].buf->body;
    }
    for (int i = 0; u && i < n; i++) recollect(s, nodes[i]);
    return u;
}
