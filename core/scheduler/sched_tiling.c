/* sched_tiling.c — the GPU's pointwise tiling, as far as fusion needs it (codegen/simd.py
 * SIMDScheduling.select_tiling for a pointwise node list, max_tiles 2). can_fuse uses it to keep a
 * pointwise group out of a reduction kernel whose (numel, rnumel) it does not tile into
 * (config.triton.tiling_prevents_reduction_fusion: "invalid tiling for reduction"): the group's
 * tiling must be 1-d, (numel,), or exactly the reduction's (numel, rnumel).
 *
 * select_tiling, pointwise: each node with more than one loop proposes, per memory dependency, the
 * split after its first unit-stride loop var (none if that var is the last, or every later var has
 * stride 0: a broadcast), scored by the elements the dependency walks (x2 for a write, x2 for each
 * half of at least 32 elements that is a multiple of 32) and kept when that score reaches the
 * node's element count; a buffer name proposes once. The proposals, summed per split and ranked by
 * score (the first seen first on a tie), are tried in order: the first one every node's ranges
 * can be split into (SIMDKernel.is_compatible) wins; else the 1-d tiling.
 * Example: an image normalize over [2, 3, 5, 6] read and written channels-last (strides 90, 1,
 * 18, 3) tiles as (6, 30), the (numel, rnumel) of the per-channel sum beside it: one kernel. */
#include "scheduler/scheduler.h"

#include <string.h>

#define MAXV (MI_MAX_DIMS * 2)
#define MAXT 64

/* the stride hint of var v in index e (stride_hints); false if not a number */
static bool stride_hint(SymCtx *S, const LoopBody *b, Expr *e, int v, int64_t *out) {
    return sym_is_int(sched_var_stride(S, b, e, v), out);
}

static bool good_size(int64_t s) { return s >= 32 && s % 32 == 0; }

/* SIMDKernel._split_iteration_ranges: can ranges r[0..n) be laid out over groups (g0, g1)? */
static bool compatible(int64_t g0, int64_t g1, const int64_t *r, int n) {
    int64_t rem[2] = {g0, g1};
    int cur = 0;
    for (int i = 0; i < n; i++) {
        int64_t size = r[i];
        if (size == 1) continue;
        while (cur < 2 && rem[cur] == 1) cur++;
        if (cur >= 2) return false;
        if (cur + 1 < 2 && size > rem[cur]) {
            if (size % rem[cur]) return false;
            int64_t s2 = size / rem[cur];
            rem[cur] = 1;
            if (rem[cur + 1] % s2) return false;
            rem[cur + 1] /= s2;
            continue;
        }
        if (rem[cur] % size) return false;
        rem[cur] /= size;
    }
    return rem[0] == 1 && rem[1] == 1;
}

typedef struct Tile { int64_t a, b, score; } Tile;

/* select_tiling(nodes, numel) for the pointwise nodes[0..n): *a x *b (a == 1: the 1-d tiling).
 * False when a range is symbolic (no decision: the caller lets the fusion be). */
static bool select_tiling(const Schedule *s, const int *nodes, int n, int64_t numel, int64_t *ta, int64_t *tb) {
    SymCtx *S = s->ir->ctx->sym;
    Tile t[MAXT];
    int nt = 0;
    const Buffer *seen[MAXT];
    int nseen = 0;
    for (int i = 0; i < n; i++) {
        const SchedNode *nd = &s->nodes[nodes[i]];
        const LoopBody *b = nd->buf->body;
        if (!b || b->nred) continue;
        int64_t r[MAXV], prod = 1;
        for (int v = 0; v < b->npoint; v++) {
            if (!sym_is_int(b->ranges[v], &r[v])) return false;
            prod *= r[v];
        }
        if (b->npoint <= 1) continue;
        for (int k = 0; k < nd->deps.nreads + nd->deps.nwrites; k++) {
            bool write = k >= nd->deps.nreads;
            const Dep *d = write ? &nd->deps.writes[k - nd->deps.nreads] : &nd->deps.reads[k];
            if (d->kind != DEP_MEMORY || !d->index || ir_index_is_indirect(d->index)) continue;
            bool dup = false;
            for (int j = 0; j < nseen && !dup; j++) dup = seen[j] == d->buf;
            if (dup) continue;
            int64_t st[MAXV];
            int split = -1;
            for (int v = 0; v < b->npoint; v++) {
                if (!stride_hint(S, b, d->index, v, &st[v])) st[v] = 2;   /* not affine: no unit stride */
                if (split < 0 && st[v] == 1) split = v + 1;
            }
            if (split < 0 || split == b->npoint) continue;
            bool bcast = true;
            for (int v = split; v < b->npoint; v++) bcast &= st[v] == 0;
            if (bcast) continue;
            int64_t a = 1, c = 1, score = 1;
            for (int v = 0; v < b->npoint; v++) {
                if (v < split) a *= r[v]; else c *= r[v];
                if (st[v] != 0) score *= r[v];
            }
            if (write) score *= 2;
            if (good_size(a)) score *= 2;
            if (good_size(c)) score *= 2;
            if (score < prod) continue;
            if (nseen < MAXT) seen[nseen++] = d->buf;   /* a named candidate: once per buffer */
            int j = 0;
            while (j < nt && !(t[j].a == a && t[j].b == c)) j++;
            if (j == nt) {
                if (nt == MAXT) continue;
                t[nt++] = (Tile){a, c, 0};
            }
            t[j].score += score;
        }
    }
    for (int i = 1; i < nt; i++)   /* stable: by score, highest first */
        for (int j = i; j > 0 && t[j].score > t[j - 1].score; j--) { Tile x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
    for (int k = 0; k < nt; k++) {
        bool all = true;
        for (int i = 0; i < n && all; i++) {
            const LoopBody *b = s->nodes[nodes[i]].buf->body;
            int64_t r[MAXV];
            for (int v = 0; v < b->npoint; v++) sym_is_int(b->ranges[v], &r[v]);
            all = compatible(t[k].a, t[k].b, r, b->npoint);
        }
        if (all) { *ta = t[k].a; *tb = t[k].b; return true; }
    }
    *ta = 1;
    *tb = numel;
    return true;
}

bool sched_reduction_tiling_ok(const Schedule *s, const int *pw, int npw, int64_t numel, int64_t rnumel) {
    int64_t a, b;
    if (!select_tiling(s, pw, npw, numel * rnumel, &a, &b)) return true;
    return a == 1 || (a == numel && b == rnumel);
}
