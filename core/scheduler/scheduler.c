/* scheduler.c — SchedNodes from IR buffers, dead-buffer removal, fusion rounds with a
 * bytes-saved score and recorded decisions, topological kernel order, buffer reuse planning.
 * See scheduler.h for the kernel model; core/codegen/codegen_c.c turns the result into C. */
#include "scheduler/scheduler.h"
#include "scheduler/sched_memory.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool node_reads(const SchedNode *n, const Buffer *b) {
    for (int i = 0; i < n->deps.nreads; i++)
        if (n->deps.reads[i].buf == b) return true;
    return false;
}

/* Node order: a node runs after the nodes whose results it reads, after earlier writers of what
 * it writes, and a mutation (copy_ into a placeholder, a Scatter into a clone) after every
 * reader of the old value created before it. The edges are built from buffer users (fx_edges
 * below). */
static const LoopBody *nbody(const Schedule *s, int n) { return s->nodes[n].buf->body; }

static bool uses_var_from(const Expr *e, int m) {
    if (e->kind == EX_SYM && e->name[0] == 'p' && e->name[1] >= '0' && e->name[1] <= '9') {
        int v = 0;
        for (const char *c = e->name + 1; *c >= '0' && *c <= '9'; c++) v = 10 * v + (*c - '0');
        if (v >= m) return true;
    }
    for (int i = 0; i < e->n; i++)
        if (uses_var_from(e->args[i], m)) return true;
    return false;
}

/* A read or write at an index known only at run time (embedding's load, a Scatter's store,
 * also where its dims are all size 1 and the symbol dropped out) never pairs with a write: the
 * element is not the same one (Inductor's fusable_read_and_write refuses SymT.TMP indexes). */
static bool dep_indirect(const Dep *d) { return d->scatter || (d->index && ir_index_is_indirect(d->index)); }

static bool same_inner(const LoopBody *a, const LoopBody *b, int m) {
    if (a->nvars != b->nvars) return false;
    for (int i = m; i < a->nvars; i++)
        if (a->ranges[i] != b->ranges[i]) return false;
    return true;
}

static int64_t buf_bytes(const Buffer *b, SymCtx *sy) {
    int64_t n;
    if (!sym_is_int(layout_numel(sy, &b->layout), &n)) return 4096;
    int64_t bytes;
    if (n < 0 || __builtin_mul_overflow(n, (int64_t)dtype_size(b->layout.dtype), &bytes)) return INT64_MAX / 4;
    return bytes;
}

/* ---- buffer users and node edges, built once in O(deps) (large graphs: 10 000 nodes) ---- */
typedef struct Fx {
    int *rd_start, *rd;          /* buffer id -> reader node ids (CSR, ascending, unique) */
    int *wr_start, *wr;          /* buffer id -> writer node ids */
    int *succ_start, *succ;      /* node -> nodes that must run after it (alive nodes only) */
    int *topo;                   /* node -> position in one topological order */
    int64_t *bytes;              /* buffer id -> bytes (the fusion score) */
    int *stamp, cur;             /* scratch marks over nodes */
    int *bstamp, bcur;           /* scratch marks over buffers */
    int *gstamp, gcur;           /* scratch marks over groups */
    int *pos;                    /* scratch: node -> index in the group being checked */
    int *gred;                   /* group -> npoint of its reductions, -1: only pointwise */
    bool exact;                  /* fuse_cycle walks groups (no topological bound) */
} Fx;

static void csr_users(const Schedule *s, int nb, bool writes, int **start, int **list) {
    int *st = mi_xcalloc(nb + 2, sizeof(int));
    int *last = mi_xmalloc(sizeof(int) * (nb + 1));
    for (int b = 0; b < nb; b++) last[b] = -1;
    for (int pass = 0; pass < 2; pass++) {
        int *out = pass ? mi_xmalloc(sizeof(int) * (st[nb] + 1)) : NULL, *pos = NULL;
        if (pass) {
            pos = mi_xmalloc(sizeof(int) * (nb + 1));
            memcpy(pos, st, sizeof(int) * (nb + 1));
            for (int b = 0; b < nb; b++) last[b] = -1;
        }
        for (int i = 0; i < s->nnodes; i++) {
            const DepSet *d = &s->nodes[i].deps;
            int n = writes ? d->nwrites : d->nreads;
            const Dep *v = writes ? d->writes : d->reads;
            for (int k = 0; k < n; k++) {
                int b = v[k].buf->id;
                if (b < 0 || b >= nb || last[b] == i) continue;
                last[b] = i;
                if (pass) out[pos[b]++] = i;
                else st[b + 1]++;
            }
        }
        if (!pass) for (int b = 0; b < nb; b++) st[b + 1] += st[b];
        else { *list = out; free(pos); }
    }
    free(last);
    *start = st;
}

/* r reads an input after the in-place Scatter `w` mutated it (ir_deps_collect's StarDep on w). */
static bool reads_after_scatter(const SchedNode *r, const Buffer *w) {
    if (!w->inplace_alias || !w->trace || !w->trace->scatter || !w->mutates || w->mutates->kind != BUF_INPUT) return false;
    for (int i = 0; i < r->deps.nreads; i++)
        if (r->deps.reads[i].buf == w && r->deps.reads[i].kind == DEP_STAR) return true;
    return false;
}

static void fx_edges(Schedule *s, Fx *f) {
    int nb = s->ir->nbufs, ne = 0, cap = 64;
    int *eu = mi_xmalloc(sizeof(int) * cap), *ev = mi_xmalloc(sizeof(int) * cap);
#define EDGE(u_, v_) do { if (ne == cap) { cap *= 2; eu = mi_xrealloc(eu, sizeof(int) * cap); ev = mi_xrealloc(ev, sizeof(int) * cap); } \
                          eu[ne] = (u_); ev[ne] = (v_); ne++; } while (0)
    for (int b = 0; b < nb; b++) {
        bool input = s->ir->bufs[b]->kind == BUF_INPUT;
        int prev = -1;
        for (int wi = f->wr_start[b]; wi < f->wr_start[b + 1]; wi++) {
            int w = f->wr[wi];
            if (s->nodes[w].dead) continue;
            if (prev >= 0) EDGE(prev, w);   /* writers in creation order */
            prev = w;
            for (int ri = f->rd_start[b]; ri < f->rd_start[b + 1]; ri++) {
                int r = f->rd[ri];
                if (r == w || s->nodes[r].dead) continue;
                if (!input && r > w) EDGE(w, r);   /* producer -> consumer (nodes in creation order) */
                else if (input && reads_after_scatter(&s->nodes[r], s->nodes[w].buf)) continue;   /* reads
                                               the input after an in-place Scatter: its StarDep orders it */
                else EDGE(r, w);            /* a reader of the value before a mutation (an input's
                                               readers, a Scatter's earlier one) runs first */
            }
        }
    }
#undef EDGE
    int n = s->nnodes;
    f->succ_start = mi_xcalloc(n + 2, sizeof(int));
    for (int e = 0; e < ne; e++) f->succ_start[eu[e] + 1]++;
    for (int i = 0; i < n; i++) f->succ_start[i + 1] += f->succ_start[i];
    f->succ = mi_xmalloc(sizeof(int) * (ne + 1));
    int *pos = mi_xmalloc(sizeof(int) * (n + 1));
    memcpy(pos, f->succ_start, sizeof(int) * (n + 1));
    for (int e = 0; e < ne; e++) f->succ[pos[eu[e]]++] = ev[e];
    /* one topological order of the nodes (Kahn, the smallest ready node first: creation order
     * wherever that respects the edges); bounds the cycle search below, and orders the nodes
     * inside a kernel (sched_order_key: an in-place foreach item after the readers of the
     * input's old value, before the readers of its new value) */
    int *indeg = mi_xcalloc(n + 1, sizeof(int)), *q = mi_xmalloc(sizeof(int) * (n + 1)), nq = 0;
    for (int e = 0; e < ne; e++) indeg[ev[e]]++;
    f->topo = mi_xmalloc(sizeof(int) * (n + 1));
#define QPUSH(x_) do { int i_ = nq++; q[i_] = (x_); \
        while (i_ > 0 && q[(i_ - 1) / 2] > q[i_]) { int p_ = (i_ - 1) / 2, t_ = q[p_]; q[p_] = q[i_]; q[i_] = t_; i_ = p_; } } while (0)
    for (int i = 0; i < n; i++) { f->topo[i] = n + i; if (!indeg[i]) QPUSH(i); }
    int t = 0;
    while (nq) {
        int u = q[0];
        q[0] = q[--nq];
        for (int i = 0;;) {
            int l = 2 * i + 1, r = l + 1, m = i;
            if (l < nq && q[l] < q[m]) m = l;
            if (r < nq && q[r] < q[m]) m = r;
            if (m == i) break;
            int x = q[m]; q[m] = q[i]; q[i] = x; i = m;
        }
        f->topo[u] = t++;
        for (int k = f->succ_start[u]; k < f->succ_start[u + 1]; k++)
            if (--indeg[f->succ[k]] == 0) QPUSH(f->succ[k]);
    }
#undef QPUSH
    free(s->okey);
    s->okey = mi_xmalloc(sizeof(int) * (n + 1));
    memcpy(s->okey, f->topo, sizeof(int) * (n + 1));
    free(indeg); free(q); free(pos); free(eu); free(ev);
}

static void fx_init(const Schedule *s, Fx *f) {
    int nb = s->ir->nbufs;
    memset(f, 0, sizeof *f);
    csr_users(s, nb, false, &f->rd_start, &f->rd);
    csr_users(s, nb, true, &f->wr_start, &f->wr);
    f->bytes = mi_xmalloc(sizeof(int64_t) * (nb + 1));
    for (int b = 0; b < nb; b++) f->bytes[b] = buf_bytes(s->ir->bufs[b], s->ir->ctx->sym);
    f->stamp = mi_xcalloc(s->nnodes + 1, sizeof(int));
    f->bstamp = mi_xcalloc(nb + 1, sizeof(int));
    f->gstamp = mi_xcalloc(s->nnodes + 1, sizeof(int));
    f->pos = mi_xcalloc(s->nnodes + 1, sizeof(int));
    f->gred = mi_xcalloc(s->nnodes + 1, sizeof(int));
}
static void fx_free(Fx *f) {
    free(f->rd_start); free(f->rd); free(f->wr_start); free(f->wr);
    free(f->succ_start); free(f->succ); free(f->topo); free(f->bytes);
    free(f->stamp); free(f->bstamp); free(f->gstamp); free(f->pos); free(f->gred);
}

/* dead buffer removal: a node none of whose results is read by a live node (and that writes no
 * output and mutates nothing) dies; its producers are re-checked (worklist, O(deps)) */
static void remove_dead(Schedule *s, Fx *f) {
    int nb = s->ir->nbufs, n = s->nnodes;
    int *nread = mi_xmalloc(sizeof(int) * (nb + 1));
    for (int b = 0; b < nb; b++) nread[b] = f->rd_start[b + 1] - f->rd_start[b];
    int *work = mi_xmalloc(sizeof(int) * (n + 1)), nw = 0;
    bool *queued = mi_xcalloc(n + 1, 1);
    for (int i = n - 1; i >= 0; i--) { work[nw++] = i; queued[i] = true; }
    while (nw) {
        int i = work[--nw];
        queued[i] = false;
        SchedNode *nd = &s->nodes[i];
        if (nd->dead || nd->buf->output_index >= 0 || nd->buf->mutates || nd->buf->side_effect) continue;
        bool keep = false;   /* sdpa's logsumexp, a cond's later results are outputs too */
        for (int w = 0; w < nd->deps.nwrites && !keep; w++) {
            const Buffer *b = nd->deps.writes[w].buf;
            keep = b->output_index >= 0 || nread[b->id] - (node_reads(nd, b) ? 1 : 0) > 0;
        }
        if (keep) continue;
        nd->dead = true;
        for (int r = 0; r < nd->deps.nreads; r++) {
            const Buffer *b = nd->deps.reads[r].buf;
            bool first = true;   /* count each buffer once per node */
            for (int k = 0; k < r; k++) first &= nd->deps.reads[k].buf != b;
            if (!first) continue;
            nread[b->id]--;
            for (int wi = f->wr_start[b->id]; wi < f->wr_start[b->id + 1]; wi++) {
                int w = f->wr[wi];
                if (!queued[w] && !s->nodes[w].dead) { work[nw++] = w; queued[w] = true; }
            }
        }
    }
    free(nread); free(work); free(queued);
}

/* "outer sizes differ: [96] vs [128]" (the first m ranges of each) */
static void outer_differ(const LoopBody *a, const LoopBody *b, int m, char *why, size_t wl) {
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "outer sizes differ: ");
    for (int side = 0; side < 2; side++) {
        const LoopBody *x = side ? b : a;
        sb_put(&sb, side ? " vs [" : "[");
        for (int k = 0; k < m && k < x->nvars; k++) { if (k) sb_put(&sb, ", "); sym_str_sb(x->ranges[k], &sb); }
        sb_put(&sb, "]");
    }
    snprintf(why, wl, "%s", sb.s);
    sb_free(&sb);
}

/* The outer loops a kernel of pointwise nodes[] shares: with identical iteration spaces all but
 * the innermost loop; on the cpu, where they differ, the loops of their common leading sizes
 * (cpp.py OuterLoopFusedSchedulerNode: _get_outer_loop_fusion_depth, each node running its own
 * inner loops inside; CppScheduling decides whether the pair may fuse so, sched_cpp.c). -1
 * with the reason otherwise. Example: a row amax over [12] (5 elements unrolled) and the exp
 * over [12, 5] that reads it share the loop over 12 rows: 1. */
static int pointwise_outer(const Schedule *s, const int *nodes, int n, char *why, size_t wn) {
    const LoopBody *ref = nbody(s, nodes[0]);
    bool same = true, cpu = s->ir->ctx->target != MI_DEV_CUDA;
    int common = ref->nvars;
    for (int i = 1; i < n; i++) {
        const LoopBody *b = nbody(s, nodes[i]);
        int k = 0;
        while (k < common && k < b->nvars && b->ranges[k] == ref->ranges[k]) k++;
        if (b->nvars != ref->nvars || k < ref->nvars) same = false;
        if (!same && !cpu) { snprintf(why, wn, b->nvars != ref->nvars ? "different iteration ranks" : "different sizes"); return -1; }
        common = k;
    }
    if (same) return ref->nvars > 0 ? ref->nvars - 1 : 0;
    if (common < 1) { snprintf(why, wn, "different iteration ranks and no common outer loop"); return -1; }
    return common;
}

/* Can nodes[] (sorted) form one kernel? Returns nouter >= 0, or -1 with reason. With f, the
 * writer of each read is found through the buffer's writer list (large groups). */
static int group_shape_fx(const Schedule *s, Fx *f, const int *nodes, int n, char *why, size_t wn) {
    int m = -1;
    const LoopBody *ref = NULL;
    for (int i = 0; i < n; i++) {
        const Buffer *b = s->nodes[nodes[i]].buf;
        if (b->kind != BUF_COMPUTED) { snprintf(why, wn, "extern kernel"); return -1; }
        if (b->body->nred) {
            if (m >= 0 && m != b->body->npoint) { snprintf(why, wn, "reductions over different outer sizes"); return -1; }
            m = b->body->npoint;
        }
    }
    if (m < 0) {   /* only pointwise: identical iteration spaces, or on the cpu shared outer loops */
        ref = nbody(s, nodes[0]);
        m = pointwise_outer(s, nodes, n, why, wn);
        if (m < 0) return -1;
    }
    for (int i = 0; i < n; i++) {
        const LoopBody *b = nbody(s, nodes[i]);
        if (b->npoint < m) { snprintf(why, wn, "iteration space smaller than the shared outer loop"); return -1; }
        if (!ref) ref = b;
        for (int k = 0; k < m; k++)
            if (b->ranges[k] != ref->ranges[k]) { outer_differ(ref, b, m, why, wn); return -1; }
    }
    /* data dependencies inside the kernel must be element-local */
    int cur = 0;
    if (f) {
        cur = ++f->cur;
        for (int i = 0; i < n; i++) { f->stamp[nodes[i]] = cur; f->pos[nodes[i]] = i; }
    }
    for (int j = 0; j < n; j++) {
        const SchedNode *B = &s->nodes[nodes[j]];
        for (int r = 0; r < B->deps.nreads; r++) {
            const Dep *rd = &B->deps.reads[r];
            int bid = rd->buf->id;
            int nwr = f ? f->wr_start[bid + 1] - f->wr_start[bid] : n;
            for (int x = 0; x < nwr; x++) {
                int i = x;
                if (f) {
                    int w = f->wr[f->wr_start[bid] + x];
                    if (f->stamp[w] != cur) continue;
                    i = f->pos[w];
                }
                if (i == j) continue;
                const SchedNode *A = &s->nodes[nodes[i]];
                for (int w = 0; w < A->deps.nwrites; w++) {
                    const Dep *wr = &A->deps.writes[w];
                    if (wr->buf != rd->buf) continue;
                    if (wr->index != rd->index || dep_indirect(wr) || dep_indirect(rd)) { snprintf(why, wn, "%s read at a different index than %s writes it", rd->buf->name, A->name); return -1; }
                    if (uses_var_from(wr->index, m) && !same_inner(A->buf->body, B->buf->body, m)) {
                        snprintf(why, wn, "%s crosses inner loops of different sizes", rd->buf->name);
                        return -1;
                    }
                    if (i > j && !A->buf->mutates) { snprintf(why, wn, "order"); return -1; }
                }
            }
        }
    }
    return m;
}
static int group_shape(const Schedule *s, const int *nodes, int n, char *why, size_t wn) {
    return group_shape_fx(s, NULL, nodes, n, why, wn);
}

static const char *gname(Schedule *s, const SchedGroup *g) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < g->n; i++) {
        if (g->n > 12 && i == 8) {   /* a long group: its first nodes, the count, its last */
            sb_printf(&sb, "_..(%d nodes).._%s", g->n, s->nodes[g->nodes[g->n - 1]].name);
            break;
        }
        sb_printf(&sb, "%s%s", i ? "_" : "", s->nodes[g->nodes[i]].name);
    }
    char *r = arena_strdup(&s->arena, sb.s ? sb.s : "");
    sb_free(&sb);
    return r;
}

int sched_group_at(const Schedule *s, int n, int at) {
    int g = n;
    while (g >= 0 && g < s->ngroups && s->groups[g].merged_into >= 0 && s->groups[g].merged_at < at) g = s->groups[g].merged_into;
    return g;
}

int sched_decision_side(const Schedule *s, const FusionDecision *d, int n) {
    int g = sched_group_at(s, n, d->at);
    return g == d->ga ? 0 : g == d->gb ? 1 : -1;
}

const char *sched_group_name(const Schedule *s, int g, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < s->groups[g].n && k + 1 < n; i++)
        k += snprintf(buf + k, n - k, "%s%s", i ? "_" : "", s->nodes[s->groups[g].nodes[i]].name);
    return buf;
}

#define MAX_DECISIONS 4096   /* a 10 000-node graph would list thousands: the first ones are kept */

/* Keep a decision on groups ga + gb (their names, the fusion count) for `sched`, `why`, the
 * fusion picture and the report; a refusal repeated while neither group changed is kept once. */
void sched_record(Schedule *s, const char *verb, int ga, int gb, const char *a, const char *b, bool acc, int64_t score,
                  const char *why) {
    if (s->ndecisions >= MAX_DECISIONS) { s->decisions_full = true; return; }
    if (!a) a = gname(s, &s->groups[ga]);
    if (!b) b = gname(s, &s->groups[gb]);
    for (int i = s->ndecisions > 256 ? s->ndecisions - 256 : 0; i < s->ndecisions; i++)   /* a rejection is listed once (recent ones) */
        if (!acc && !s->decisions[i].accepted && strcmp(s->decisions[i].a, a) == 0 && strcmp(s->decisions[i].b, b) == 0) return;
    if (s->ndecisions == s->capdecisions) {
        s->capdecisions = s->capdecisions ? 2 * s->capdecisions : 16;
        s->decisions = mi_xrealloc(s->decisions, sizeof(FusionDecision) * s->capdecisions);
    }
    FusionDecision *d = &s->decisions[s->ndecisions++];
    d->verb = verb;
    d->a = a;
    d->b = b;
    d->ga = ga;
    d->gb = gb;
    d->at = s->nmerges;
    d->accepted = acc;
    d->score = score;
    snprintf(d->reason, sizeof d->reason, "%s", why);
}
static void record(Schedule *s, int ga, int gb, bool acc, int64_t score, const char *why) {
    sched_record(s, NULL, ga, gb, NULL, NULL, acc, score, why);
}

static bool group_touches_buf(const Schedule *s, const Fx *f, int g, int b) {
    for (int k = f->rd_start[b]; k < f->rd_start[b + 1]; k++) if (s->nodes[f->rd[k]].group == g) return true;
    for (int k = f->wr_start[b]; k < f->wr_start[b + 1]; k++) if (s->nodes[f->wr[k]].group == g) return true;
    return false;
}
/* Does group ga write something group gb reads (ga a producer of gb)? */
static bool group_feeds_into(const Schedule *s, const Fx *f, int ga, int gb) {
    const SchedGroup *B = &s->groups[gb];
    for (int k = 0; k < B->n; k++) {
        const DepSet *d = &s->nodes[B->nodes[k]].deps;
        for (int r = 0; r < d->nreads; r++) {
            int b = d->reads[r].buf->id;
            for (int w = f->wr_start[b]; w < f->wr_start[b + 1]; w++)
                if (s->nodes[f->wr[w]].group == ga) return true;
        }
    }
    return false;
}

/* Does one group read what the other writes (a vertical pair)? */
static bool groups_feed(const Schedule *s, const Fx *f, int ga, int gb) {
    return group_feeds_into(s, f, ga, gb) || group_feeds_into(s, f, gb, ga);
}

/* config.score_fusion_memory_threshold (bytes) */
#define SCORE_FUSION_MEMORY_THRESHOLD 10

/* bytes of the buffers both groups touch (walks the smaller group). A horizontal pair (neither
 * feeds the other) is scored by the dependencies both have exactly (sched_score.c), 0 below
 * Inductor's threshold (can_fuse_horizontal: "score_fusion_memory_threshold") unless, on the
 * GPU, a loop reorder of one side could make a read shared. On the CPU a vertical pair is
 * scored the same way (score_fusion_memory is one rule: the normalized MemoryDeps both
 * sides have; the cpp backend's deps are normalized, extract_read_writes(normalize=True)),
 * and one that shares none is refused (choices.py can_fuse: shared_data_score == 0). So the
 * sum over [5, 8] (its read of x normalizes to x's write, 160 bytes) joins x's producer before
 * the [5] epilogue reading x[:, 0] and x[:, 7] joins the sum (20 bytes of the sum's result):
 * the epilogue then reads x at other indexes than the fused node writes it and stays apart.
 * The GPU keeps the touched-buffer bytes for a vertical pair: its deps are not normalized
 * (loop_ordering_after_fusion) and the loop reorder / re-tiling of sched_reshape.c stands in
 * for shared_data_after_reordering_loop there. Returns -1 for that refused vertical pair (0
 * for a horizontal pair under the threshold), so that the refusal can be shown. */
static int64_t pair_score(const Schedule *s, Fx *f, int ga, int gb) {
    if (s->groups[ga].n > s->groups[gb].n) { int t = ga; ga = gb; gb = t; }
    const SchedGroup *S = &s->groups[ga];
    int mark = ++f->bcur;
    int64_t score = 0;
    for (int i = 0; i < S->n; i++) {
        const DepSet *d = &s->nodes[S->nodes[i]].deps;
        for (int k = 0; k < d->nreads + d->nwrites; k++) {
            const Buffer *b = k < d->nreads ? d->reads[k].buf : d->writes[k - d->nreads].buf;
            if (f->bstamp[b->id] == mark) continue;
            f->bstamp[b->id] = mark;
            if (group_touches_buf(s, f, gb, b->id)) score += f->bytes[b->id];
        }
    }
    if (score <= 0) return score;
    bool vertical = groups_feed(s, f, ga, gb), cuda = s->ir->ctx->target == MI_DEV_CUDA;
    if (vertical && cuda) return score;
    bool reorder = false;
    int64_t exact = sched_shared_dep_bytes(s, S->nodes, S->n, s->groups[gb].nodes, s->groups[gb].n, false, &reorder);
    if (exact >= SCORE_FUSION_MEMORY_THRESHOLD || (vertical && exact > 0)) return exact;
    if (vertical) return -1;   /* choices.py can_fuse: shared_data_score == 0 (recorded) */
    /* shared_data_after_reordering_loop reorders a pointwise side only ("Don't reorder loops
     * since both nodes are reductions"): two reductions sharing no dependency stay apart */
    bool pointwise_side = f->gred[ga] < 0 || f->gred[gb] < 0;
    if (!reorder && pointwise_side && cuda)   /* the GPU nodes' own deps (not normalized under loop_ordering_after_fusion) */
        sched_shared_dep_bytes(s, S->nodes, S->n, s->groups[gb].nodes, s->groups[gb].n, true, &reorder);
    return reorder && pointwise_side && cuda ? score : 0;
}

long sched_order_key(const Schedule *s, int n) {
    const Buffer *b = s->nodes[n].buf;   /* copy_ into an input last; an in-place foreach item where the edges put it */
    return (b->mutates && !b->inplace_alias ? (1L << 40) : 0) + (s->okey ? s->okey[n] : n);
}
static long order_key(const Schedule *s, int n) { return sched_order_key(s, n); }

/* GPU: the pointwise side of groups ga, gb (the earlier group first, as Inductor's node1)
 * reordered to walk a shared buffer as the other side does; NULL when neither can. */
static SchedReshape *reorder_pointwise_side(Schedule *s, const Fx *f, int ga, int gb, char *note, size_t nn) {
    const SchedGroup *A = &s->groups[ga], *B = &s->groups[gb];
    int g1 = A->nodes[0] < B->nodes[0] ? ga : gb, g2 = g1 == ga ? gb : ga;
    SchedReshape *u = NULL;
    for (int t = 0; t < 2 && !u; t++) {
        int gp = t ? g2 : g1, gq = t ? g1 : g2;
        if (f->gred[gp] >= 0) continue;
        u = sched_reorder_pair(s, s->groups[gp].nodes, s->groups[gp].n, s->groups[gq].nodes, s->groups[gq].n, note, nn);
    }
    return u;
}

/* One producer/consumer pair inside a would-be kernel: same element, and inner loops that fit */
static bool dep_ok(const Schedule *s, int wn, const Dep *wr, int rn, const Dep *rd, int m, char *why, size_t wl) {
    const SchedNode *A = &s->nodes[wn], *B = &s->nodes[rn];
    if (wr->index != rd->index || dep_indirect(wr) || dep_indirect(rd)) { snprintf(why, wl, "%s read at a different index than %s writes it", rd->buf->name, A->name); return false; }
    if (uses_var_from(wr->index, m) && !same_inner(A->buf->body, B->buf->body, m)) {
        snprintf(why, wl, "%s crosses inner loops of different sizes", rd->buf->name);
        return false;
    }
    if (order_key(s, wn) > order_key(s, rn) && !A->buf->mutates) { snprintf(why, wl, "order"); return false; }
    return true;
}

/* Can groups ga and gb (each a valid kernel) form one kernel? nouter >= 0, or -1 + why. Only
 * what the merge adds is checked: the shared outer loop and the pairs across the two groups
 * (with a new nouter the whole merged list is checked, *full set). */
static int merge_shape(const Schedule *s, Fx *f, int ga, int gb, bool *full, char *why, size_t wl) {
    const SchedGroup *A = &s->groups[ga], *B = &s->groups[gb];
    int ra = f->gred[ga], rb = f->gred[gb], m;
    const LoopBody *refA = nbody(s, A->nodes[0]), *refB = nbody(s, B->nodes[0]);
    *full = false;
    if (ra >= 0 && rb >= 0 && ra != rb) { snprintf(why, wl, "reductions over different outer sizes"); return -1; }
    if (ra < 0 && rb < 0) {   /* only pointwise: identical iteration spaces (else the whole list, on the cpu) */
        bool same = refA->nvars == refB->nvars;
        for (int k = 0; k < refA->nvars && same; k++) same = refA->ranges[k] == refB->ranges[k];
        if (!same && s->ir->ctx->target != MI_DEV_CUDA) { *full = true; return 0; }
        if (refA->nvars != refB->nvars) { snprintf(why, wl, "different iteration ranks"); return -1; }
        if (!same) { snprintf(why, wl, "different sizes"); return -1; }
        m = refA->nvars > 0 ? refA->nvars - 1 : 0;
    } else m = ra >= 0 ? ra : rb;
    if (m != A->nouter || m != B->nouter) { *full = true; return 0; }
    if (refB->npoint < m) { snprintf(why, wl, "iteration space smaller than the shared outer loop"); return -1; }
    for (int k = 0; k < m; k++)
        if (refA->ranges[k] != refB->ranges[k]) { outer_differ(refA, refB, m, why, wl); return -1; }
    int gs = A->n <= B->n ? ga : gb, gl = gs == ga ? gb : ga;
    const SchedGroup *S = &s->groups[gs];
    for (int i = 0; i < S->n; i++) {
        int u = S->nodes[i];
        const DepSet *d = &s->nodes[u].deps;
        for (int r = 0; r < d->nreads; r++) {   /* S reads what L writes */
            const Dep *rd = &d->reads[r];
            int b = rd->buf->id;
            for (int k = f->wr_start[b]; k < f->wr_start[b + 1]; k++) {
                int w = f->wr[k];
                if (s->nodes[w].group != gl) continue;
                const DepSet *dw = &s->nodes[w].deps;
                for (int x = 0; x < dw->nwrites; x++)
                    if (dw->writes[x].buf == rd->buf && !dep_ok(s, w, &dw->writes[x], u, rd, m, why, wl)) return -1;
            }
        }
        for (int x = 0; x < d->nwrites; x++) {  /* L reads what S writes */
            const Dep *wr = &d->writes[x];
            int b = wr->buf->id;
            for (int k = f->rd_start[b]; k < f->rd_start[b + 1]; k++) {
                int r = f->rd[k];
                if (s->nodes[r].group != gl) continue;
                const DepSet *dr = &s->nodes[r].deps;
                for (int y = 0; y < dr->nreads; y++)
                    if (dr->reads[y].buf == wr->buf && !dep_ok(s, u, wr, r, &dr->reads[y], m, why, wl)) return -1;
            }
        }
    }
    return m;
}

/* The body whose sizes are group g's (FusedSchedulerNode.group: its first reduction node's,
 * else its first node's) and the smallest order key of its nodes. */
static const LoopBody *group_body(const Schedule *s, int g, long *first) {
    const SchedGroup *G = &s->groups[g];
    const LoopBody *ref = NULL;
    *first = -1;
    for (int i = 0; i < G->n; i++) {
        const LoopBody *b = nbody(s, G->nodes[i]);
        long k = sched_order_key(s, G->nodes[i]);
        if (*first < 0 || k < *first) *first = k;
        if (b->nred && (!ref || !ref->nred)) ref = b;
        if (!ref) ref = b;
    }
    return ref;
}

static bool ranges_eq(Expr *const *a, int na, Expr *const *b, int nb) {
    if (na != nb) return false;
    for (int k = 0; k < na; k++) if (a[k] != b[k]) return false;
    return true;
}

/* cpp.py where a reduction shares no outer loop with the other group (a reduction to a
 * scalar): outer-loop fusion needs a common outer loop (_get_outer_loop_fusion_depth >= 1), so
 * only _why_fuse_nodes' cases are left, with node1 the producer of a vertical pair (the pair
 * as get_possible_fusions made it, node1 before node2 in the topological node list, kept when
 * _try_fusion_pairs looks up the nodes' fused nodes), else the earlier group:
 *   SAME_VARS_REDUCE: two reductions over the same reduction ranges, side by side (a vertical
 *     pair refuses it: can_fuse_vertical wants `not node1.is_reduction()`);
 *   COMPATIBLE_REDUCTION: a pointwise node1 walking exactly the ranges node2 reduces.
 * A reduction never takes a later pointwise group. Example: a per-row sum over [6] feeding a
 * scalar mean that was fused side by side with an earlier [6] pointwise node: node1 is the
 * row sum, so the three share one loop over 6 (distributions' log_prob). What is refused still shares the cpp
 * kernel when nothing external runs between (the kernel group), so this changes the count
 * only around an extern call. Example: sum(x) and the scalar add of it after a fallback run
 * in another kernel than the sum. true = may fuse; false with the reason in why. */
static bool cpp_scalar_reduction_ok(const Schedule *s, Fx *f, int ga, int gb, char *why, size_t wl) {
    if (s->ir->ctx->target == MI_DEV_CUDA) return true;
    int ra = f->gred[ga], rb = f->gred[gb];
    if (!(ra == 0 || rb == 0) || (ra > 0 || rb > 0)) return true;   /* a shared outer loop: outer-loop fusion */
    long ka, kb;
    const LoopBody *A = group_body(s, ga, &ka), *B = group_body(s, gb, &kb);
    bool vertical = groups_feed(s, f, ga, gb);
    if (vertical ? group_feeds_into(s, f, gb, ga) : kb < ka) { const LoopBody *t = A; A = B; B = t; int r = ra; ra = rb; rb = r; }
    if (ra == 0 && rb == 0) {
        if (!vertical && ranges_eq(A->ranges, A->nvars, B->ranges, B->nvars)) return true;
        snprintf(why, wl, "cpp: %s", vertical ? "a reduction to a scalar feeds the other (no outer loop to share)"
                                              : "reductions to a scalar over different ranges");
        return false;
    }
    if (ra < 0 && ranges_eq(A->ranges, A->nvars, B->ranges + B->npoint, B->nvars - B->npoint)) return true;
    snprintf(why, wl, "cpp: %s", ra == 0 ? "a reduction to a scalar before a pointwise group (no outer loop to share)"
                                         : "the pointwise group walks other ranges than the scalar reduction reduces");
    return false;
}

/* The reduction body of group g (Inductor's FusedSchedulerNode.group is its reduction node's):
 * its numel (*n) and rnumel (*r); false when the group has none. */
static bool group_numels(const Schedule *s, int g, Expr **n, Expr **r) {
    SymCtx *S = s->ir->ctx->sym;
    for (int i = 0; i < s->groups[g].n; i++) {
        const LoopBody *b = nbody(s, s->groups[g].nodes[i]);
        if (!b || !b->nred) continue;
        *n = sym_int(S, 1);
        *r = sym_int(S, 1);
        for (int v = 0; v < b->nvars; v++)
            if (v < b->npoint) *n = sym_mul(S, *n, b->ranges[v]);
            else *r = sym_mul(S, *r, b->ranges[v]);
        return true;
    }
    return false;
}

/* The GPU (Triton) rule for two reduction kernels (codegen/simd.py SIMDScheduling.can_fuse:
 * "reduction_can_fuse = numel1 == numel2 and rnumel1 == rnumel2"): one Triton kernel has one
 * (xnumel, rnumel) grid, so reductions over different numbers of elements stay apart even when
 * both reduce to a scalar. Example: sum over a [2, 4, 5, 5] avg-pool output (1, 200) and a
 * sum over a [2, 4, 3, 3] max-pool output (1, 72): two kernels. The cpp backend shares outer
 * loops only, so on the CPU this is merge_shape's business. */
static bool simd_reductions_ok(const Schedule *s, int ga, int gb, char *why, size_t wl) {
    Expr *n1, *r1, *n2, *r2;
    if (!group_numels(s, ga, &n1, &r1) || !group_numels(s, gb, &n2, &r2)) return true;
    if (n1 == n2 && r1 == r2) return true;
    snprintf(why, wl, "one Triton kernel has one (numel, rnumel)");
    return false;
}

/* The GPU (Triton) rule for a reduction kernel and a pointwise one (codegen/simd.py
 * SIMDScheduling.can_fuse, reduction against pointwise, via can_fuse_horizontal's swap): the
 * pointwise numel must equal the reduction's numel (an epilogue per row) or numel * rnumel (a
 * prologue / epilogue over the reduced elements); otherwise "nodes numel incompatibility".
 * The cpp backend has no such rule (outer-loop fusion shares the outer loops only), so on the
 * CPU this always holds. Example: argmax over [5, 12] (numel 5, rnumel 12) and an embedding
 * row gather [5, 6] (numel 30) do not fuse on cuda; the one-hot [5, 12] (numel 60) does. */
static bool simd_numel_ok(const Schedule *s, const Fx *f, int ga, int gb, char *why, size_t wl) {
    if (s->ir->ctx->target != MI_DEV_CUDA || (f->gred[ga] < 0 && f->gred[gb] < 0)) return true;
    if (f->gred[ga] >= 0 && f->gred[gb] >= 0) return simd_reductions_ok(s, ga, gb, why, wl);
    int gr = f->gred[ga] >= 0 ? ga : gb, gp = gr == ga ? gb : ga;
    const LoopBody *r = NULL, *p = nbody(s, s->groups[gp].nodes[0]);
    for (int i = 0; i < s->groups[gr].n && !r; i++) {
        const LoopBody *b = nbody(s, s->groups[gr].nodes[i]);
        if (b && b->nred) r = b;
    }
    if (!r || !p) return true;
    SymCtx *S = s->ir->ctx->sym;
    Expr *n1 = sym_int(S, 1), *r1 = sym_int(S, 1), *n2 = sym_int(S, 1);
    for (int v = 0; v < r->nvars; v++) {
        if (v < r->npoint) n1 = sym_mul(S, n1, r->ranges[v]);
        else r1 = sym_mul(S, r1, r->ranges[v]);
    }
    for (int v = 0; v < p->nvars; v++) n2 = sym_mul(S, n2, p->ranges[v]);
    if (n2 == n1 || n2 == sym_mul(S, n1, r1)) return true;
    char a[48], b[48], c[48];
    snprintf(why, wl, "pointwise numel %s is neither the reduction's numel %s nor numel * rnumel %s",
             sym_str(n2, a, sizeof a), sym_str(n1, b, sizeof b), sym_str(sym_mul(S, n1, r1), c, sizeof c));
    return false;
}

/* simd.py can_fuse for a pointwise group over numel * rnumel elements and a reduction kernel
 * (config.triton.tiling_prevents_reduction_fusion; sched_tiling.c). */
static bool reduction_tiling_ok(const Schedule *s, const Fx *f, int ga, int gb) {
    if ((f->gred[ga] >= 0) == (f->gred[gb] >= 0)) return true;
    int gr = f->gred[ga] >= 0 ? ga : gb, gp = gr == ga ? gb : ga;
    Expr *n, *r;
    int64_t nn, rr, pn = 1, v;
    if (!group_numels(s, gr, &n, &r) || !sym_is_int(n, &nn) || !sym_is_int(r, &rr)) return true;
    const LoopBody *p = nbody(s, s->groups[gp].nodes[0]);
    for (int k = 0; p && k < p->nvars; k++) {
        if (!sym_is_int(p->ranges[k], &v)) return true;
        pn *= v;
    }
    if (!p || pn != nn * rr || rr == 1) return true;   /* an epilogue per row: no tiling rule */
    return sched_reduction_tiling_ok(s, s->groups[gp].nodes, s->groups[gp].n, nn, rr);
}

/* Would merging ga and gb close a cycle: a path that leaves the pair and comes back?
 * Quick form: nodes past the pair's last topological position cannot lead back, so the search
 * stops there. That bound holds for single nodes but not once kernels are fused (a fused
 * group may hold an early and a late node: op2 -> op4 ~ op0 -> op3 through {op0, op4}); when
 * the quick form let such a cycle through, sched_run redoes the fusion with the exact form,
 * which walks groups (reaching one node of a fused kernel reaches all of them). */
static bool fuse_cycle_exact(const Schedule *s, Fx *f, int ga, int gb) {
    int gc = ++f->gcur;
    int cap = 64, sp = 0;
    int *stack = mi_xmalloc(sizeof(int) * cap);
#define PUSH_GROUP(g_) do { const SchedGroup *G_ = &s->groups[g_]; \
        for (int i_ = 0; i_ < G_->n; i_++) { \
            if (sp == cap) { cap *= 2; stack = mi_xrealloc(stack, sizeof(int) * cap); } \
            stack[sp++] = G_->nodes[i_]; } } while (0)
    PUSH_GROUP(ga);
    PUSH_GROUP(gb);
    bool cycle = false;
    while (sp && !cycle) {
        int u = stack[--sp];
        bool outside = s->nodes[u].group != ga && s->nodes[u].group != gb;
        for (int k = f->succ_start[u]; k < f->succ_start[u + 1]; k++) {
            int v = f->succ[k], gv = s->nodes[v].group;
            if (gv == ga || gv == gb) {
                if (outside) { cycle = true; break; }
                continue;
            }
            if (f->gstamp[gv] == gc) continue;
            f->gstamp[gv] = gc;
            PUSH_GROUP(gv);
        }
    }
#undef PUSH_GROUP
    free(stack);
    return cycle;
}

static bool fuse_cycle(const Schedule *s, Fx *f, int ga, int gb) {
    if (f->exact) return fuse_cycle_exact(s, f, ga, gb);
    int maxpos = -1, cur = ++f->cur;
    int cap = 64, sp = 0;
    int *stack = mi_xmalloc(sizeof(int) * cap);
    for (int pass = 0; pass < 2; pass++) {
        const SchedGroup *G = &s->groups[pass ? gb : ga];
        for (int i = 0; i < G->n; i++) {
            int u = G->nodes[i];
            if (f->topo[u] > maxpos) maxpos = f->topo[u];
            if (sp == cap) { cap *= 2; stack = mi_xrealloc(stack, sizeof(int) * cap); }
            stack[sp++] = u;
        }
    }
    bool cycle = false;
    while (sp && !cycle) {
        int u = stack[--sp];
        bool outside = s->nodes[u].group != ga && s->nodes[u].group != gb;
        for (int k = f->succ_start[u]; k < f->succ_start[u + 1]; k++) {
            int v = f->succ[k], gv = s->nodes[v].group;
            if (gv == ga || gv == gb) {
                if (outside) { cycle = true; break; }
                continue;
            }
            if (f->topo[v] > maxpos || f->stamp[v] == cur) continue;
            f->stamp[v] = cur;
            if (sp == cap) { cap *= 2; stack = mi_xrealloc(stack, sizeof(int) * cap); }
            stack[sp++] = v;
        }
    }
    free(stack);
    return cycle;
}

/* fuse_cycle with foreach nodes: a foreach node runs as one kernel, so its subnodes count as
 * one unit (Inductor's will_fusion_create_cycle sees the ForeachKernelSchedulerNode): would
 * merging ga and gb (with the foreach nodes they are subnodes of) close a path that leaves
 * the merged unit and comes back? Exact: reaching a subnode of another foreach node reaches
 * all of it. */
static bool unit_cycle(const Schedule *s, Fx *f, int ga, int gb) {
    int ca = s->combo_of[ga], cb = s->combo_of[gb];
#define IN_SET(g_) ((g_) == ga || (g_) == gb || (s->combo_of[g_] >= 0 && (s->combo_of[g_] == ca || s->combo_of[g_] == cb)))
    int gc = ++f->gcur, cap = 64, sp = 0;
    int *stack = mi_xmalloc(sizeof(int) * cap);
#define PUSH_GROUP(g_) do { const SchedGroup *G_ = &s->groups[g_]; \
        for (int i_ = 0; i_ < G_->n; i_++) { \
            if (sp == cap) { cap *= 2; stack = mi_xrealloc(stack, sizeof(int) * cap); } \
            stack[sp++] = G_->nodes[i_]; } } while (0)
    for (int g = 0; g < s->ngroups; g++)
        if (s->groups[g].alive && IN_SET(g)) PUSH_GROUP(g);
    bool cycle = false;
    while (sp && !cycle) {
        int u = stack[--sp];
        bool outside = !IN_SET(s->nodes[u].group);
        for (int k = f->succ_start[u]; k < f->succ_start[u + 1]; k++) {
            int v = f->succ[k], gv = s->nodes[v].group;
            if (IN_SET(gv)) {
                if (outside) { cycle = true; break; }
                continue;
            }
            if (f->gstamp[gv] == gc) continue;
            int cv = s->combo_of[gv];
            for (int k2 = 0; cv >= 0 && k2 < s->combos[cv].n; k2++) {   /* the whole unit */
                int g2 = s->combos[cv].groups[k2];
                if (f->gstamp[g2] != gc) { f->gstamp[g2] = gc; PUSH_GROUP(g2); }
            }
            if (f->gstamp[gv] != gc) { f->gstamp[gv] = gc; PUSH_GROUP(gv); }
        }
    }
#undef PUSH_GROUP
#undef IN_SET
    free(stack);
    return cycle;
}

typedef struct Cand { int a, b; int64_t score; int prox; bool same_type; } Cand;   /* a, b: first nodes of the groups */
/* Strict-weak order for the dedup sort: the node pair. */
static int cmp_pair(const void *x, const void *y) {
    const Cand *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}
/* choices.py FusionScore.__lt__ (p worse than q): the memory scores alone when one is more
 * than 16 times the other, else (type_score, memory_score, proximity_score) in turn, where
 * type_score holds when both sides are reductions or both are not (and they share memory) and
 * proximity_score = -max(|min_order1 - max_order2|, |min_order2 - max_order1|). Example: a
 * pointwise pair sharing 64 bytes goes before a reduction feeding a pointwise node through
 * 1024 bytes (not more than 16 times as much). */
static bool fusion_score_lt(const Cand *p, const Cand *q) {
    int64_t hi = p->score > q->score ? p->score : q->score, lo = p->score < q->score ? p->score : q->score;
    if (hi > lo * 16) return p->score < q->score;
    if (p->same_type != q->same_type) return !p->same_type;
    if (p->score != q->score) return p->score < q->score;
    return p->prox < q->prox;
}
/* possible_fusions.sort(key=score_fusion_key, reverse=True): best first, a stable merge sort
 * (the order is not transitive across the 16x rule; equal pairs keep their node order) */
static void sort_candidates(Cand *c, int n) {
    qsort(c, (size_t)n, sizeof(Cand), cmp_pair);
    Cand *t = mi_xmalloc(sizeof(Cand) * (size_t)(n + 1));
    for (int w = 1; w < n; w *= 2)
        for (int lo = 0; lo < n - w; lo += 2 * w) {
            int mid = lo + w, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
            while (i < mid && j < hi) t[k++] = fusion_score_lt(&c[i], &c[j]) ? c[j++] : c[i++];
            while (i < mid) t[k++] = c[i++];
            while (j < hi) t[k++] = c[j++];
            memcpy(c + lo, t + lo, sizeof(Cand) * (size_t)(hi - lo));
        }
    free(t);
}

/* The node lists of groups ga and gb merged in execution order (malloc'd, *n nodes). */
static int *merged_nodes(const Schedule *s, int ga, int gb, int *n) {
    const SchedGroup *A = &s->groups[ga], *B = &s->groups[gb];
    *n = A->n + B->n;
    int *tmp = mi_xmalloc(sizeof(int) * (size_t)*n);
    for (int x = 0, y = 0, k = 0; k < *n; k++)
        tmp[k] = y >= B->n || (x < A->n && order_key(s, A->nodes[x]) < order_key(s, B->nodes[y])) ? A->nodes[x++] : B->nodes[y++];
    return tmp;
}

/* Merge groups ga and gb into the larger one (fewer nodes to relabel; gb on a tie), its nodes
 * tmp[0..n) (taken) under nouter shared loops; the merge is stamped for sched_group_at and the
 * foreach node it belongs to kept up to date. The survivor's id is returned. */
static int merge_groups(Schedule *s, Fx *f, int ga, int gb, int *tmp, int n, int nouter) {
    int gsm = s->groups[ga].n <= s->groups[gb].n ? ga : gb, glg = gsm == ga ? gb : ga;
    SchedGroup *L = &s->groups[glg], *Sm = &s->groups[gsm];
    free(L->nodes);
    L->nodes = tmp;
    L->n = n;
    L->nouter = nouter;
    f->gred[glg] = f->gred[ga] >= 0 || f->gred[gb] >= 0 ? nouter : -1;
    for (int k = 0; k < Sm->n; k++) s->nodes[Sm->nodes[k]].group = glg;
    Sm->alive = false;
    Sm->merged_into = glg;
    Sm->merged_at = s->nmerges++;
    sched_foreach_merged(s, glg, gsm);
    return glg;
}

/* ForeachKernelSchedulerNode.can_fuse / fuse for two foreach nodes of one length (the pair ga,
 * gb are subnodes of each): the subnodes fuse pairwise in list order when every pair can
 * (shared data, one loop shape) and the merged unit closes no cycle; all or none. Returns the
 * number of pairs fused. */
static int fuse_foreach_pairs(Schedule *s, Fx *f, int ga, int gb, int64_t score, bool rec) {
    int ca = s->combo_of[ga], cb = s->combo_of[gb];
    if (s->groups[s->combos[cb].groups[0]].nodes[0] < s->groups[s->combos[ca].groups[0]].nodes[0]) { int t = ca; ca = cb; cb = t; }
    SchedCombo *P = &s->combos[ca], *C = &s->combos[cb];
    int np = P->n;
    char why[160] = "", said[220];
    if (unit_cycle(s, f, ga, gb)) {
        if (rec) record(s, ga, gb, false, score, "will create cycle (through another kernel)");
        return 0;
    }
    int **tmp = mi_xcalloc((size_t)np + 1, sizeof(int *)), *nn = mi_xcalloc((size_t)np + 1, sizeof(int));
    int *no = mi_xcalloc((size_t)np + 1, sizeof(int)), *surv = mi_xcalloc((size_t)np + 1, sizeof(int));
    bool ok = true;
    for (int i = 0; i < np && ok; i++) {
        int x = P->groups[i], y = C->groups[i];
        bool full = false;
        if (pair_score(s, f, x, y) <= 0) { snprintf(why, sizeof why, "score_fusion_memory_threshold"); ok = false; break; }
        no[i] = merge_shape(s, f, x, y, &full, why, sizeof why);
        tmp[i] = merged_nodes(s, x, y, &nn[i]);
        if (full && no[i] >= 0) no[i] = group_shape_fx(s, f, tmp[i], nn[i], why, sizeof why);
        if (no[i] < 0) {
            char w0[160];
            sched_why_no_fuse(s, s->groups[x].nodes, s->groups[x].n, s->groups[y].nodes, s->groups[y].n, why, w0, sizeof w0);
            snprintf(why, sizeof why, "subnodes %s and %s: %.120s", gname(s, &s->groups[x]), gname(s, &s->groups[y]), w0);
            ok = false;
        }
    }
    if (ok) snprintf(said, sizeof said, "foreach: two foreach nodes of %d subnodes fuse pairwise (vertical: producer into consumer)", np);
    else snprintf(said, sizeof said, "foreach: %s", why);
    if (rec) record(s, ga, gb, ok, score, said);   /* (the groups as they stand, before the merges) */
    if (ok) {
        for (int i = 0; i < np; i++) { surv[i] = merge_groups(s, f, P->groups[i], C->groups[i], tmp[i], nn[i], no[i]); tmp[i] = NULL; }
        sched_foreach_join(s, ca, cb, surv);
    }
    for (int i = 0; i < np; i++) free(tmp[i]);
    free(tmp); free(nn); free(no); free(surv);
    return ok ? np : 0;
}

/* Inductor's proximity_score of groups ga and gb: -max(|min1 - max2|, |min2 - max1|) over the
 * nodes' positions in the original order (min_order / max_order of a fused node). */
static int proximity(const Schedule *s, int ga, int gb) {
    int lo[2] = {INT32_MAX, INT32_MAX}, hi[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        const SchedGroup *G = &s->groups[k ? gb : ga];
        for (int i = 0; i < G->n; i++) {
            if (G->nodes[i] < lo[k]) lo[k] = G->nodes[i];
            if (G->nodes[i] > hi[k]) hi[k] = G->nodes[i];
        }
    }
    int d1 = abs(lo[0] - hi[1]), d2 = abs(lo[1] - hi[0]);
    return -(d1 > d2 ? d1 : d2);
}

/* Fusion rounds: the candidates are pairs of groups that share a buffer (a buffer with many
 * users pairs only neighbours in node order), tried best score first; a round repeats while
 * it fuses something, at most max_rounds times (MiLimits.fusion_rounds; Inductor's
 * fuse_nodes stops after 10 rounds too). */
static void fuse_rounds(Schedule *s, Fx *f, int max_rounds) {
    int nb = s->ir->nbufs;
    int *gs = mi_xmalloc(sizeof(int) * (s->ngroups + 1));
    for (int g = 0; g < s->ngroups; g++) {
        const Buffer *b = s->nodes[s->groups[g].nodes[0]].buf;
        f->gred[g] = b->kind == BUF_COMPUTED && b->body->nred ? b->body->npoint : -1;
    }
    for (int round = 0; round < max_rounds; round++) {
        Cand *c = NULL;
        int nc = 0, capc = 0;
        for (int b = 0; b < nb; b++) {
            int ng = 0, gc = ++f->gcur;
            for (int pass = 0; pass < 2; pass++) {
                const int *st = pass ? f->wr_start : f->rd_start, *l = pass ? f->wr : f->rd;
                for (int k = st[b]; k < st[b + 1]; k++) {
                    int g = s->nodes[l[k]].group;
                    if (!s->groups[g].alive || s->groups[g].is_extern || f->gstamp[g] == gc) continue;
                    f->gstamp[g] = gc;
                    gs[ng++] = g;
                }
            }
            for (int i = 0; i < ng; i++)
                for (int j = i + 1; j < ng && (ng <= 32 || j == i + 1); j++) {
                    if (nc == capc) { capc = capc ? 2 * capc : 64; c = mi_xrealloc(c, sizeof(Cand) * capc); }
                    int a = gs[i] < gs[j] ? gs[i] : gs[j], bb = gs[i] < gs[j] ? gs[j] : gs[i];
                    c[nc++] = (Cand){s->groups[a].nodes[0], s->groups[bb].nodes[0], 0};
                }
        }
        /* unique pairs, scored, best first */
        if (!nc) { free(c); break; }
        qsort(c, nc, sizeof(Cand), cmp_pair);
        int nu = 0;
        for (int i = 0; i < nc; i++)
            if (!nu || c[nu - 1].a != c[i].a || c[nu - 1].b != c[i].b) c[nu++] = c[i];
        nc = nu;
        for (int i = 0; i < nc; i++) {
            int ga = s->nodes[c[i].a].group, gb = s->nodes[c[i].b].group;
            c[i].score = pair_score(s, f, ga, gb);
            c[i].prox = proximity(s, ga, gb);
            c[i].same_type = (f->gred[ga] >= 0) == (f->gred[gb] >= 0) && c[i].score > 0;
        }
        sort_candidates(c, nc);
        int fused = 0;
        /* cpu: Scheduler.get_possible_fusions_with_highest_priority: a round tries only the pairs
         * of the best priority CppScheduling.get_fusion_pair_priority gives (0: a fusion of
         * _why_fuse_nodes, 1: an outer-loop fusion); the outer-loop pairs get a round only when
         * no other pair can fuse. (A pair that would close a cycle is no candidate at all:
         * can_fuse_vertical's "intermediate nodes between node1 & node2".) */
        for (int prio = 0; prio < (s->cpp ? 2 : 1) && !fused; prio++)
        for (int i = 0; i < nc; i++) {
            int ga = s->nodes[c[i].a].group, gb = s->nodes[c[i].b].group;
            if (ga == gb) continue;
            if (ga > gb) { int t = ga; ga = gb; gb = t; }
            SchedGroup *A = &s->groups[ga], *B = &s->groups[gb];
            int64_t score = fused ? pair_score(s, f, ga, gb) : c[i].score;
            bool rec = s->ndecisions < MAX_DECISIONS, full = false;
            if (score < 0 && rec)
                record(s, ga, gb, false, 0, "no shared data; every buffer of the producer is read at other (normalized) "
                                            "indexes than it is written (choices.py can_fuse: shared_data_score 0)");
            if (score <= 0) continue;
            /* the C++ backend's own rule (sched_cpp.c); said only where our loop checks below
             * would have fused, so a refusal both make keeps our finer reason */
            bool feeds = groups_feed(s, f, ga, gb), a_feeds = feeds && group_feeds_into(s, f, ga, gb);
            char cwhy[160];
            int pr = sched_cpp_priority(s, ga, gb, feeds, a_feeds, cwhy, sizeof cwhy);
            if (s->cpp && (pr >= 0 ? pr != prio : prio == 1)) continue;
            bool cpp_ok = pr >= 0;
            char why[160];
            if (!rec) s->decisions_full = true;
            int fe = s->combo_of ? sched_foreach_pair(s, ga, gb, why, sizeof why) : 0;
            if (fe == -2) continue;
            if (fe == -1) {
                if (rec) record(s, ga, gb, false, score, why);
                continue;
            }
            if (fe == 2) { fused += fuse_foreach_pairs(s, f, ga, gb, score, rec); continue; }
            if (s->combo_of ? unit_cycle(s, f, ga, gb) : fuse_cycle(s, f, ga, gb)) {
                if (rec) record(s, ga, gb, false, score, "will create cycle (through another kernel)");
                continue;
            }
            if (!simd_numel_ok(s, f, ga, gb, why, sizeof why)) {
                if (rec) {
                    char said[256];
                    sched_why_no_fuse(s, A->nodes, A->n, B->nodes, B->n, why, said, sizeof said);
                    record(s, ga, gb, false, score, said);
                }
                continue;
            }
            if (!cpp_scalar_reduction_ok(s, f, ga, gb, why, sizeof why)) {
                if (rec) record(s, ga, gb, false, score, why);
                continue;
            }
            int nouter = merge_shape(s, f, ga, gb, &full, why, sizeof why);
            /* the merged node list (both sorted: merge them) */
            int n = A->n + B->n, *tmp = mi_xmalloc(sizeof(int) * n);
            for (int x = 0, y = 0, k = 0; k < n; k++)
                tmp[k] = y >= B->n || (x < A->n && order_key(s, A->nodes[x]) < order_key(s, B->nodes[y])) ? A->nodes[x++] : B->nodes[y++];
            if (full && nouter >= 0) nouter = group_shape_fx(s, f, tmp, n, why, sizeof why);
            char note[160] = "";
            /* same elements under differently split outer loops (sched_reshape_pair), or, on
             * the GPU, a pointwise side walking a shared buffer in another loop order
             * (sched_reorder_pair). Inductor reorders while scoring, before it checks the
             * shapes, when the pair shares no dependency exactly (score_fusion_memory below
             * the threshold: shared_data_after_reordering_loop): then the reorder is tried
             * first, so the reordered pointwise meets the reduction's own tiling. */
            bool cuda = s->ir->ctx->target == MI_DEV_CUDA, reorder_first = false;
            if (nouter < 0 && cuda) {
                bool can = false;
                reorder_first = sched_shared_dep_bytes(s, A->nodes, A->n, B->nodes, B->n, true, &can) < SCORE_FUSION_MEMORY_THRESHOLD && can;
            }
            bool pushed = false;
            for (int t = 0; t < 2 && nouter < 0; t++) {
                bool reorder = (t == 0) == reorder_first;
                if (reorder && !cuda) continue;
                char why2[160];
                SchedReshape *u = reorder ? reorder_pointwise_side(s, f, ga, gb, note, sizeof note)
                                          : sched_reshape_pair(s, A->nodes, A->n, f->gred[ga], B->nodes, B->n, f->gred[gb], note, sizeof note);
                int no2 = u ? group_shape_fx(s, f, tmp, n, why2, sizeof why2) : -1;
                if (!u && !reorder && note[0]) memcpy(why2, note, sizeof why2);   /* deps refused the split */
                if (no2 >= 0) {
                    nouter = no2;
                    s->reshapes = mi_xrealloc(s->reshapes, sizeof *s->reshapes * (size_t)(s->nreshapes + 1));
                    s->reshapes[s->nreshapes++] = u;
                    pushed = true;
                } else {
                    sched_reshape_undo(s, u, true);
                    if ((u || note[0]) && !reorder) {   /* say why the common shape did not help either */
                        char w0[160];
                        memcpy(w0, why, sizeof w0);
                        snprintf(why, sizeof why, "%.60s (split to one shape: %.70s)", w0, why2);
                    }
                    note[0] = 0;
                }
            }
            if (nouter >= 0 && !cpp_ok) {
                if (pushed) sched_reshape_undo(s, s->reshapes[--s->nreshapes], true);
                if (rec) record(s, ga, gb, false, score, cwhy);
                free(tmp);
                continue;
            }
            if (nouter >= 0 && cuda && !reduction_tiling_ok(s, f, ga, gb)) {
                if (pushed) sched_reshape_undo(s, s->reshapes[--s->nreshapes], true);
                if (rec) record(s, ga, gb, false, score, "invalid tiling for reduction (simd.py can_fuse: the pointwise group's select_tiling is neither 1-d nor the reduction's (numel, rnumel))");
                free(tmp);
                continue;
            }
            if (nouter < 0) {
                if (rec) {
                    char said[256];
                    sched_why_no_fuse(s, A->nodes, A->n, B->nodes, B->n, why, said, sizeof said);
                    record(s, ga, gb, false, score, said);
                }
                free(tmp);
                continue;
            }
            bool vertical = feeds;
            if (rec) {
                char acc[200];
                snprintf(acc, sizeof acc, "%s%s%s", vertical ? "vertical: producer into consumer" : "horizontal: shared reads", note,
                         fe == 1 ? "; into a subnode of the foreach node" : "");
                record(s, ga, gb, true, score, acc);
            }
            sched_cpp_prepare(s, ga, gb, feeds, a_feeds);
            sched_cpp_commit(s, merge_groups(s, f, ga, gb, tmp, n, nouter));
            fused++;
        }
        free(c);
        if (!fused) break;
    }
    free(gs);
}

/* kernels in dependency order; among ready kernels the one with the earliest node first. A
 * foreach node is one unit (Inductor orders the ForeachKernelSchedulerNode as one node): its
 * subnodes come out together, in list order, once everything any of them needs is done. */
static void topo_order(Schedule *s, Fx *f) {
    int G = s->ngroups, U = G + s->ncombos;
    int *indeg = mi_xcalloc(U + 1, sizeof(int)), *key = mi_xmalloc(sizeof(int) * (U + 1));
    bool *live = mi_xcalloc(U + 1, 1);
    for (int g = 0; g < G; g++) live[sched_unit_of(s, g)] |= s->groups[g].alive;
    for (int u = 0; u < U; u++) key[u] = live[u] ? sched_unit_key(s, u) : 0;
    for (int u = 0; u < s->nnodes; u++) {
        int gu = s->nodes[u].group;
        if (!s->groups[gu].alive) continue;
        for (int k = f->succ_start[u]; k < f->succ_start[u + 1]; k++) {
            int gv = s->nodes[f->succ[k]].group;
            if (sched_unit_of(s, gv) != sched_unit_of(s, gu) && s->groups[gv].alive) indeg[sched_unit_of(s, gv)]++;
        }
    }
    /* binary min-heap of ready units keyed by their first node */
    int *heap = mi_xmalloc(sizeof(int) * (U + 1)), nh = 0;
#define KEY(u_) (key[u_])
#define PUSH(u_) do { int i_ = nh++; heap[i_] = (u_); \
        while (i_ > 0 && KEY(heap[(i_ - 1) / 2]) > KEY(heap[i_])) { int p_ = (i_ - 1) / 2, t_ = heap[p_]; heap[p_] = heap[i_]; heap[i_] = t_; i_ = p_; } } while (0)
    for (int u = 0; u < U; u++)
        if (live[u] && indeg[u] == 0) PUSH(u);
    s->order = mi_xmalloc(sizeof(int) * (G + 1));
    s->norder = 0;
    while (nh) {
        int un = heap[0];
        heap[0] = heap[--nh];
        for (int i = 0;;) {
            int l = 2 * i + 1, r = l + 1, m = i;
            if (l < nh && KEY(heap[l]) < KEY(heap[m])) m = l;
            if (r < nh && KEY(heap[r]) < KEY(heap[m])) m = r;
            if (m == i) break;
            int t = heap[m]; heap[m] = heap[i]; heap[i] = t; i = m;
        }
        const SchedCombo *c = un >= G ? &s->combos[un - G] : NULL;
        int first = s->norder;
        if (c) { for (int i = 0; i < c->n; i++) if (s->groups[c->groups[i]].alive) s->order[s->norder++] = c->groups[i]; }
        else s->order[s->norder++] = un;
        for (int p = first, end = s->norder; p < end; p++) {
            const SchedGroup *A = &s->groups[s->order[p]];
            for (int i = 0; i < A->n; i++) {
                int u = A->nodes[i];
                for (int k = f->succ_start[u]; k < f->succ_start[u + 1]; k++) {
                    int gv = s->nodes[f->succ[k]].group, uv = sched_unit_of(s, gv);
                    if (uv != un && s->groups[gv].alive && --indeg[uv] == 0) PUSH(uv);
                }
            }
        }
    }
#undef PUSH
#undef KEY
    free(heap);
    free(indeg);
    free(key);
    free(live);
}

/* Is the edge x -> y there only because fallback x's call writes the MultiOutput item y reads?
 * memory.py links a node to the nodes making the buffers it depends on (succ_nodes from
 * unmet_dependencies): y reads the item, made by its MultiOutput node, not the fallback's
 * MultiOutputLayout buffer, so the MultiOutput node alone precedes y. Example: the sum of
 * svd's S (buf4 = buf2[1]) waits for buf4's node, which BFS ranks by its own step, not the
 * svd call's: the sums run after all the items, one kernel after the fallbacks. */
static bool item_edge(const Schedule *s, int x, int y) {
    const Buffer *b = s->nodes[x].buf;
    if (!b->layout.multi) return false;
    const DepSet *d = &s->nodes[y].deps;
    for (int r = 0; r < d->nreads; r++) if (d->reads[r].buf == b) return false;
    return true;
}

/* Inductor's reorder_for_peak_memory (memory.py; sched_memory.c) on the units of s->order: the
 * foreach nodes' groups stay together, edges are every dependency between units but a
 * fallback's to the readers of its items (item_edge). */
static void peak_memory_order(Schedule *s, Fx *f) {
    int n = s->norder, G = s->ngroups, nu = 0;
    int *ustart = mi_xmalloc(sizeof(int) * (n + 2)), *uof = mi_xmalloc(sizeof(int) * (G + 1));
    for (int p = 0; p < n;) {
        int un = sched_unit_of(s, s->order[p]);
        ustart[nu] = p;
        while (p < n && sched_unit_of(s, s->order[p]) == un) uof[s->order[p++]] = nu;
        nu++;
    }
    ustart[nu] = n;
    int *ss = mi_xcalloc(nu + 2, sizeof(int)), *su = NULL, *mark = mi_xmalloc(sizeof(int) * (nu + 1));
    for (int pass = 0; pass < 2; pass++) {
        int *pos = pass ? mi_xmalloc(sizeof(int) * (nu + 1)) : NULL;
        if (pass) { memcpy(pos, ss, sizeof(int) * (nu + 1)); su = mi_xmalloc(sizeof(int) * (ss[nu] + 1)); }
        for (int u = 0; u < nu; u++) mark[u] = -1;
        for (int u = 0; u < nu; u++)
            for (int q = ustart[u]; q < ustart[u + 1]; q++) {
                const SchedGroup *g = &s->groups[s->order[q]];
                for (int i = 0; i < g->n; i++)
                    for (int k = f->succ_start[g->nodes[i]]; k < f->succ_start[g->nodes[i] + 1]; k++) {
                        int gv = s->nodes[f->succ[k]].group;
                        if (!s->groups[gv].alive || item_edge(s, g->nodes[i], f->succ[k])) continue;
                        int v = uof[gv];
                        if (v == u || mark[v] == u) continue;
                        mark[v] = u;
                        if (pass) su[pos[u]++] = v;
                        else ss[u + 1]++;
                    }
            }
        if (!pass) for (int u = 0; u < nu; u++) ss[u + 1] += ss[u];
        free(pos);
    }
    int *perm = sched_peak_memory_order(s, nu, ustart, ss, su, s->mem_note, sizeof s->mem_note);
    if (perm) {
        int *no = mi_xmalloc(sizeof(int) * (n + 1)), k = 0;
        for (int t = 0; t < nu; t++)
            for (int q = ustart[perm[t]]; q < ustart[perm[t] + 1]; q++) no[k++] = s->order[q];
        memcpy(s->order, no, sizeof(int) * n);
        free(no);
        free(perm);
    }
    free(ustart); free(uof); free(ss); free(su); free(mark);
}

static bool is_intermediate(const Buffer *b) {
    return (b->kind == BUF_COMPUTED && !b->mutates && b->output_index < 0) ||
           (b->kind == BUF_EXTERN && b->output_index < 0 && !b->layout.multi);   /* MultiOutputLayout: no storage */
}

/* The buffer whose storage b lives in: a ConcatKernel's for one of its NonOwningLayout slices. */
static Buffer *slice_root(Buffer *b) { return b->alias_of ? b->alias_of : b; }

/* Storage of the intermediates for the GPU wrapper (codegen_cuda.c): a buffer written in place
 * of one its kernel reads (s->inplace_of) takes that one's storage, which passes on to it
 * instead of being freed; else a freed buffer's of the same dtype and size (wrapper.py's
 * ReuseLine). A buffer whose in-place successors end in a graph output lives in the output. */
static void plan_memory(Schedule *s) {
    IrModule *m = s->ir;
    sched_decide_inplace(s);
    s->reuse_of = mi_xmalloc(sizeof(int) * (m->nbufs + 1));
    int *last = mi_xmalloc(sizeof(int) * (m->nbufs + 1));
    for (int i = 0; i < m->nbufs; i++) { s->reuse_of[i] = -1; last[i] = -1; }
    /* lifetimes in kernels, not groups: a cpp kernel's groups share one function whose
     * arguments are restrict pointers, so no storage is handed on inside one kernel */
    for (int k = 0; k < s->norder; k++) {
        SchedGroup *g = &s->groups[s->order[k]];
        int kk = sched_kernel_of_pos(s, k);
        for (int i = 0; i < g->n; i++) {
            SchedNode *n = &s->nodes[g->nodes[i]];
            /* a NonOwningLayout slice lives as long as its ConcatKernel's storage */
            for (int r = 0; r < n->deps.nreads; r++) last[slice_root(n->deps.reads[r].buf)->id] = kk;
            for (int w = 0; w < n->deps.nwrites; w++)
                if (last[slice_root(n->deps.writes[w].buf)->id] < kk) last[slice_root(n->deps.writes[w].buf)->id] = kk;
        }
    }
    int *freed = mi_xmalloc(sizeof(int) * (m->nbufs + 1)), nfreed = 0;
    bool *placed = mi_xcalloc(m->nbufs + 1, 1);   /* storage decided at its first writer (a
                                                      Scatter writes its clone again later) */
    int *succ = mi_xmalloc(sizeof(int) * (m->nbufs + 1));   /* the buffer written in place of it, -1 */
    for (int i = 0; i < m->nbufs; i++) succ[i] = -1;
    for (int i = 0; i < m->nbufs; i++)
        if (s->inplace_of[i] >= 0) succ[s->inplace_of[i]] = i;
    SymCtx *sy = m->ctx->sym;
    for (int k = 0; k < s->norder; k++) {
        SchedGroup *g = &s->groups[s->order[k]];
        for (int i = 0; i < g->n; i++) {
            SchedNode *n = &s->nodes[g->nodes[i]];
            for (int w = 0; w < n->deps.nwrites; w++) {
                Buffer *b = slice_root(n->deps.writes[w].buf);   /* a slice: the cat's storage, here */
                if (!is_intermediate(b) || placed[b->id]) continue;
                placed[b->id] = true;
                if (s->inplace_of[b->id] >= 0) { s->reuse_of[b->id] = s->inplace_of[b->id]; continue; }
                int e = b->id;   /* the end of b's in-place successors */
                while (succ[e] >= 0) e = succ[e];
                if (m->bufs[e]->output_index >= 0) { s->reuse_of[b->id] = e; continue; }
                Expr *sz = layout_storage_size(sy, &b->layout);
                for (int f = 0; f < nfreed; f++) {
                    Buffer *o = m->bufs[freed[f]];
                    if (o->layout.dtype == b->layout.dtype && layout_storage_size(sy, &o->layout) == sz) {
                        s->reuse_of[b->id] = o->id;
                        freed[f] = freed[--nfreed];
                        break;
                    }
                }
            }
        }
        int kk = sched_kernel_of_pos(s, k);
        if (k + 1 < s->norder && sched_kernel_of_pos(s, k + 1) == kk) continue;   /* kernel not done */
        for (int i = 0; i < m->nbufs; i++)
            if (last[i] == kk && is_intermediate(m->bufs[i]) && succ[i] < 0) {
                /* the storage actually freed is the root of its reuse chain */
                freed[nfreed++] = i;
            }
    }
    free(last);
    free(freed);
    free(placed);
    free(succ);
}

/* one group per node, nothing fused yet */
static void init_groups(Schedule *s) {
    for (int i = 0; i < s->nnodes; i++) {
        SchedGroup *g = &s->groups[i];
        g->nodes = mi_xmalloc(sizeof(int));
        g->nodes[0] = i;
        g->n = 1;
        g->alive = !s->nodes[i].dead;
        g->is_extern = s->nodes[i].buf->kind == BUF_EXTERN;
        char why[160];
        g->nouter = g->is_extern ? 0 : group_shape(s, g->nodes, 1, why, sizeof why);
        s->nodes[i].group = i;
        g->merged_into = -1;
        g->merged_at = 0;
    }
    s->ngroups = s->nnodes;
    s->nmerges = 0;
    s->ndecisions = 0;
    s->decisions_full = false;
}

/* put the lowered bodies back, newest split first */
static void undo_reshapes(Schedule *s, bool deps) {
    while (s->nreshapes > 0) sched_reshape_undo(s, s->reshapes[--s->nreshapes], deps);
    free(s->reshapes);
    s->reshapes = NULL;
}

Schedule *sched_run(MiCtx *ctx, IrModule *m) {
    Schedule *s = mi_xcalloc(1, sizeof *s);
    s->ir = m;
    arena_init(&s->arena);
    s->nodes = mi_xcalloc(m->nbufs + 1, sizeof(SchedNode));
    for (int i = 0; i < m->nbufs; i++) {
        Buffer *b = m->bufs[i];
        if (!ir_is_op(b)) continue;
        SchedNode *n = &s->nodes[s->nnodes];
        n->id = s->nnodes++;
        n->buf = b;
        n->name = arena_printf(&s->arena, "%sop%d", ir_prefix(m), b->id - m->ninputs);
        ir_deps_collect(m, b, &n->deps);
    }
    Fx fx;
    fx_init(s, &fx);
    remove_dead(s, &fx);
    fx_edges(s, &fx);
    s->groups = mi_xcalloc(s->nnodes + 1, sizeof(SchedGroup));
    init_groups(s);
    if (ctx->fusion) sched_cpp_init(s);       /* the C++ backend's groups, from the lowered bodies */
    if (ctx->fusion) sched_foreach_init(s);   /* Scheduler.create_foreach_nodes, before fusion */
    if (ctx->fusion) fuse_rounds(s, &fx, ctx->limits.fusion_rounds);
    topo_order(s, &fx);
    int nalive = 0;
    for (int g = 0; g < s->ngroups; g++) nalive += s->groups[g].alive;
    if (s->norder != nalive && ctx->fusion) {   /* the quick cycle check missed one: redo exactly */
        undo_reshapes(s, true);
        for (int g = 0; g < s->ngroups; g++) free(s->groups[g].nodes);
        free(s->order);
        s->order = NULL;
        s->ndecisions = 0;
        init_groups(s);
        sched_cpp_free(s);
        sched_cpp_init(s);
        sched_foreach_init(s);
        fx.exact = true;
        fuse_rounds(s, &fx, ctx->limits.fusion_rounds);
        topo_order(s, &fx);
        nalive = 0;
        for (int g = 0; g < s->ngroups; g++) nalive += s->groups[g].alive;
    }
    if (s->norder == nalive && ctx->fusion) sched_inductor_order(s, fx.succ_start, fx.succ);
    if (s->norder != nalive) {   /* a cycle between kernels: never drop kernels silently */
        mi_err(ctx, NULL, 0, 0, "scheduler: %d of %d kernels are in a dependency cycle (a fusion bug)", nalive - s->norder, nalive);
        fx_free(&fx);
        sched_free(s);
        return NULL;
    }
    if (ctx->target == MI_DEV_CUDA)   /* Scheduler.merge_loops (loop_ordering_after_fusion, GPU) */
        for (int g = 0; g < s->ngroups; g++) {
            SchedGroup *G = &s->groups[g];
            if (!G->alive || G->is_extern) continue;
            SchedReshape *u = sched_merge_loops(s, G->nodes, G->n);
            if (!u) continue;
            s->reshapes = mi_xrealloc(s->reshapes, sizeof *s->reshapes * (size_t)(s->nreshapes + 1));
            s->reshapes[s->nreshapes++] = u;
            int nv = s->nodes[G->nodes[0]].buf->body->nvars;
            G->nouter = nv > 0 ? nv - 1 : 0;
        }
    if (ctx->fusion) peak_memory_order(s, &fx);   /* config.reorder_for_peak_memory, after fusion */
    s->rd_start = fx.rd_start; s->rd = fx.rd; s->wr_start = fx.wr_start; s->wr = fx.wr;
    fx.rd_start = fx.rd = fx.wr_start = fx.wr = NULL;
    fx_free(&fx);
    sched_make_kernels(s);
    plan_memory(s);
    sched_run_branches(ctx, s);
    return s;
}

void sched_free(Schedule *s) {
    if (!s) return;
    undo_reshapes(s, false);
    sched_cpp_free(s);
    for (int i = 0; i < s->nnodes; i++) {
        sched_node_forget_ndeps(&s->nodes[i]);
        dep_set_free(&s->nodes[i].deps);
    }
    for (int i = 0; i < s->ngroups; i++) free(s->groups[i].nodes);
    free(s->nodes);
    free(s->groups);
    free(s->order);
    free(s->kernels);
    free(s->decisions);
    sched_foreach_free(s);
    free(s->okey);
    free(s->reuse_of);
    free(s->inplace_of);
    free(s->rd_start); free(s->rd); free(s->wr_start); free(s->wr);
    sched_free_branches(s);
    arena_free(&s->arena);
    free(s);
}

int sched_num_kernels(const Schedule *s) { return s->nkernels; }
