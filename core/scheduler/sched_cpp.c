/* sched_cpp.c — the C++ backend's own fusion rule (codegen/cpp.py CppScheduling), asked by the
 * fusion rounds (core/scheduler/scheduler.c) before our loop-shape checks, on the cpu target.
 *
 * Inductor's C++ backend decides on each node's group, the loop sizes simplify_and_reorder left
 * it (ir_cpp_group: ((18,), (16,)) for a row sum whose rows merge), never on the tensors' dims:
 *   _why_fuse_nodes(node1, node2): SAME_VARS_REDUCE (equal iteration and reduction sizes),
 *     COMPATIBLE_REDUCTION (a pointwise node1 walking node2's iteration + reduction sizes),
 *     COMPATIBLE_RANGES_NO_REDUCTION (two pointwise nodes over one buffer size, one of them
 *     flattened to one loop; the flattened one is re-split);
 *   can_fuse_horizontal: _why_fuse_nodes, neither an outer-loop-fused node, at most
 *     config.cpp.max_horizontal_fusion_size (16) nodes together;
 *   can_fuse_vertical: (_why_fuse_nodes and node1 no reduction) or outer-loop fusion:
 *     _get_outer_loop_fusion_depth >= 1, the leading iteration sizes both share (node1's last
 *     outer node against node2's first; two outer-loop-fused nodes only at one depth).
 * A FusedSchedulerNode's group is its first reduction node's, else its first node's. The state
 * per group (its group, whether outer-loop fused and at which depth, its first and last outer
 * nodes' groups) follows the merges. Example: a sum over rows of 16 and the pointwise
 * [2, 9, 16] that reads it fuse (depth 1 would need the sum's ((18,), (16,)) to share 18 with
 * ((2, 9, 16),)); they don't here, so each runs its own loop nest. */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPP_MAX_HORIZONTAL_FUSION_SIZE 16   /* config.cpp.max_horizontal_fusion_size */

typedef struct CppState {
    IrGroup g;            /* the node's group (FusedSchedulerNode.group) */
    IrGroup first, last;  /* its first / last outer node's group (itself unless outer-loop fused) */
    int depth;            /* outer_loop_fusion_depth; 0: not an OuterLoopFusedSchedulerNode */
    bool red, fused;      /* any reduction; more than one node */
    int nnodes;
    const Buffer *buf;    /* a single node's buffer (COMPATIBLE_RANGES compares its size) */
    const Buffer *size_of;   /* a buffer whose size every node's buffer has; NULL: sizes differ */
} CppState;

struct SchedCpp { CppState *st; int n; CppState pending; };

void sched_cpp_init(Schedule *s) {
    s->cpp = NULL;
    if (s->ir->ctx->target == MI_DEV_CUDA) return;
    SchedCpp *c = mi_xcalloc(1, sizeof *c);
    c->n = s->ngroups;
    c->st = mi_xcalloc((size_t)c->n + 1, sizeof *c->st);
    for (int g = 0; g < s->ngroups; g++) {
        CppState *t = &c->st[g];
        const Buffer *b = s->nodes[s->groups[g].nodes[0]].buf;
        t->nnodes = s->groups[g].n;
        t->buf = t->size_of = b;
        if (b->kind == BUF_COMPUTED && b->body && ir_cpp_group(s->ir->ctx->sym, b->body, &t->g)) t->red = t->g.nr > 0;
        t->first = t->last = t->g;
    }
    s->cpp = c;
}

void sched_cpp_free(Schedule *s) {
    if (!s->cpp) return;
    free(s->cpp->st);
    free(s->cpp);
    s->cpp = NULL;
}

static bool eq(const Expr *const *a, int na, const Expr *const *b, int nb) { return ir_group_eq(a, na, b, nb); }

static Expr *prod(SymCtx *S, Expr *const *v, int n) {
    Expr *p = sym_int(S, 1);
    for (int i = 0; i < n; i++) p = sym_mul(S, p, v[i]);
    return p;
}

/* _can_fuse_nodes_with_compatible_ranges: two pointwise groups of one number of elements, one
 * of them a single loop, and the one to re-split a single node whose buffer has the size of the
 * other's buffer (of every node's buffer when the other is fused: its ranges_set of one size).
 * Example: a softplus over [6, 3] flattened to ((18,),) fuses into the fused pair of
 * ((6, 3),) nodes that read a broadcast row (the distributions' backward). */
static bool compatible_ranges(const Schedule *s, const CppState *a, const CppState *b) {
    if (a->g.nr || b->g.nr) return false;
    SymCtx *S = s->ir->ctx->sym;
    if (prod(S, (Expr *const *)a->g.v, a->g.nv) != prod(S, (Expr *const *)b->g.v, b->g.nv)) return false;
    if (!(a->g.nv == 1 || b->g.nv == 1)) return false;
    const CppState *rec = a->g.nv < b->g.nv ? a : b, *ref = rec == a ? b : a;
    if (rec->fused || !rec->buf || !ref->size_of) return false;
    const Layout *x = &rec->buf->layout, *y = &ref->size_of->layout;
    return eq((const Expr *const *)x->size, x->ndim, (const Expr *const *)y->size, y->ndim);
}

/* _why_fuse_nodes: 1 SAME_VARS_REDUCE, 2 COMPATIBLE_REDUCTION, 3 COMPATIBLE_RANGES, 0 none */
static int why_fuse(const Schedule *s, const CppState *a, const CppState *b) {
    const IrGroup *x = &a->g, *y = &b->g;
    if (eq((const Expr *const *)x->v, x->nv, (const Expr *const *)y->v, y->nv) && eq((const Expr *const *)x->r, x->nr, (const Expr *const *)y->r, y->nr)) return 1;
    if (x->nr == 0 && x->nv == y->nv + y->nr && eq((const Expr *const *)x->v, y->nv, (const Expr *const *)y->v, y->nv) &&
        eq((const Expr *const *)x->v + y->nv, y->nr, (const Expr *const *)y->r, y->nr))
        return 2;
    return compatible_ranges(s, a, b) ? 3 : 0;
}

/* _get_outer_loop_fusion_depth */
static int outer_depth(const CppState *a, const CppState *b) {
    const IrGroup *x = &a->last, *y = &b->first;
    if (x->nv == 0 && y->nv == 0 && x->nr && y->nr) return 0;
    if (a->depth && b->depth) return a->depth == b->depth ? a->depth : 0;
    int d = x->nv < y->nv ? x->nv : y->nv;
    if (d < 1 || !eq((const Expr *const *)x->v, d, (const Expr *const *)y->v, d)) return 0;
    if (a->depth || b->depth) return (a->depth ? a->depth : b->depth) == d ? d : 0;
    return d;
}

/* node1 / node2 of Inductor's pair: the producer first, else the earlier group */
static void pair_order(const Schedule *s, int ga, int gb, bool vertical, bool a_feeds_b, int *g1, int *g2) {
    bool a_first;
    if (vertical) a_first = a_feeds_b;
    else a_first = sched_order_key(s, s->groups[ga].nodes[0]) <= sched_order_key(s, s->groups[gb].nodes[0]);
    *g1 = a_first ? ga : gb;
    *g2 = a_first ? gb : ga;
}

/* How CppScheduling would fuse: 0 refused, 1 FusedSchedulerNode, 2 OuterLoopFusedSchedulerNode
 * (*depth set). */
static int decide(const Schedule *s, int ga, int gb, bool vertical, bool a_feeds_b, int *depth, char *why, size_t wl) {
    const SchedCpp *c = s->cpp;
    int g1, g2;
    pair_order(s, ga, gb, vertical, a_feeds_b, &g1, &g2);
    const CppState *a = &c->st[g1], *b = &c->st[g2];
    int r = why_fuse(s, a, b);
    bool horizontal_impl = r && !a->depth && !b->depth;
    *depth = 0;
    if (!vertical) {
        if (a->nnodes + b->nnodes > CPP_MAX_HORIZONTAL_FUSION_SIZE) { snprintf(why, wl, "cpp: more than %d nodes (max_horizontal_fusion_size)", CPP_MAX_HORIZONTAL_FUSION_SIZE); return 0; }
        if (horizontal_impl) return 1;
    } else {
        if (horizontal_impl && !a->red) return 1;
        int d = outer_depth(a, b);
        if (d >= 1) { *depth = d; return 2; }
    }
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "cpp: ");
    ir_group_print(&a->g, &sb);
    sb_put(&sb, " vs ");
    ir_group_print(&b->g, &sb);
    if (a->depth || b->depth) sb_put(&sb, vertical ? " (outer-loop fused: no common depth)" : " (outer-loop fused: no horizontal fusion)");
    else if (vertical) sb_put(&sb, a->red ? " (a reduction feeds a node of other outer loops)" : " (no shared outer loop)");
    else sb_put(&sb, r ? "" : " (neither the same sizes nor a compatible reduction)");
    snprintf(why, wl, "%s", sb.s);
    sb_free(&sb);
    return 0;
}

int sched_cpp_priority(const Schedule *s, int ga, int gb, bool vertical, bool a_feeds_b, char *why, size_t wl) {
    if (!s->cpp) return 0;
    int d;
    return decide(s, ga, gb, vertical, a_feeds_b, &d, why, wl) - 1;
}

void sched_cpp_prepare(Schedule *s, int ga, int gb, bool vertical, bool a_feeds_b) {
    SchedCpp *c = s->cpp;
    if (!c) return;
    char why[8];
    int d, g1, g2;
    int kind = decide(s, ga, gb, vertical, a_feeds_b, &d, why, sizeof why);
    pair_order(s, ga, gb, vertical, a_feeds_b, &g1, &g2);
    CppState a = c->st[g1], b = c->st[g2], *t = &c->pending;
    if (kind == 1 && why_fuse(s, &a, &b) == 3) t->g = a.g.nv >= b.g.nv ? a.g : b.g;   /* the flat one re-split as the other */
    else t->g = a.red || !b.red ? a.g : b.g;
    t->red = a.red || b.red;
    t->fused = true;
    t->nnodes = a.nnodes + b.nnodes;
    t->buf = NULL;
    t->size_of = a.size_of && b.size_of &&
                 eq((const Expr *const *)a.size_of->layout.size, a.size_of->layout.ndim,
                    (const Expr *const *)b.size_of->layout.size, b.size_of->layout.ndim) ? a.size_of : NULL;
    if (kind == 2) {
        t->depth = d;
        t->first = a.first;
        t->last = b.last;
    } else {
        t->depth = 0;
        t->first = t->last = t->g;
    }
}

void sched_cpp_commit(Schedule *s, int survivor) {
    if (s->cpp) s->cpp->st[survivor] = s->cpp->pending;
}
