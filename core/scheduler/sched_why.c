/* sched_why.c — a refused fusion said in Inductor's words (scheduler.py WhyNoFuse, and the
 * backends' can_fuse), with our own finding kept after "; ".
 *
 * The checks of core/scheduler/scheduler.c find *why* two groups cannot share a loop nest in
 * minductor's terms (outer sizes, an index mismatch, a cycle). A user holding Inductor's fusion
 * log next to ours should read the same reason, so each finding is mapped to the text Inductor
 * prints for the same situation:
 *     cycle                         -> "will create cycle"
 *     index of a read != its write  -> "memory deps did not match"
 *     consumer before producer      -> "node1 must go before node2"
 *     loop shapes (cuda, Triton)    -> "numel/rnumel mismatch (reduce) (128, 96), (96, 128)",
 *                                      "numel/rnumel mismatch (non-reduce) ...",
 *                                      "nodes numel/rnumel incompatibility" / "nodes numel incompatibility"
 *     loop shapes (cpu, C++)        -> CppScheduling refuses without a message: we print both
 *                                      groups as Inductor's group.iteration, "cpp: ((96,), (128,))
 *                                      vs ((128,), (96,))"
 * e.g. "numel/rnumel mismatch (reduce) (96, 128), (128, 96); outer sizes differ: [96] vs [128]". */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <string.h>

/* The group's representative body: its reduction's (Inductor's FusedSchedulerNode.group is the
 * reduction node's), else its first node's. */
static const LoopBody *rep(const Schedule *s, const int *nodes, int n) {
    for (int i = 0; i < n; i++) {
        const Buffer *b = s->nodes[nodes[i]].buf;
        if (b->kind == BUF_COMPUTED && b->body && b->body->nred) return b->body;
    }
    const Buffer *b = s->nodes[nodes[0]].buf;
    return b->kind == BUF_COMPUTED ? b->body : NULL;
}

/* numel / rnumel of a body: products of its pointwise and reduction ranges */
static Expr *prod(SymCtx *S, const LoopBody *b, int from, int to) {
    Expr *e = sym_int(S, 1);
    for (int v = from; v < to; v++) e = sym_mul(S, e, b->ranges[v]);
    return e;
}

/* "((64,), (1000,))" as Inductor prints a cpp group */
static void cpp_group(const LoopBody *b, StrBuf *sb) {
    sb_put(sb, "((");
    for (int v = 0; v < b->npoint; v++) { sym_str_sb(b->ranges[v], sb); sb_put(sb, b->npoint == 1 ? "," : v + 1 < b->npoint ? ", " : ""); }
    sb_put(sb, "), (");
    for (int v = b->npoint; v < b->nvars; v++) { sym_str_sb(b->ranges[v], sb); sb_put(sb, b->nred == 1 ? "," : v + 1 < b->nvars ? ", " : ""); }
    sb_put(sb, "))");
}

void sched_why_no_fuse(const Schedule *s, const int *na, int nA, const int *nb, int nB, const char *raw, char *out, size_t n) {
    if (!strncmp(raw, "would create a cycle", 20)) { snprintf(out, n, "will create cycle (%s)", raw); return; }
    if (!strcmp(raw, "order")) { snprintf(out, n, "node1 must go before node2"); return; }
    if (strstr(raw, "read at a different index") || strstr(raw, "crosses inner loops")) {
        snprintf(out, n, "memory deps did not match; %s", raw);
        return;
    }
    const LoopBody *a = rep(s, na, nA), *b = rep(s, nb, nB);
    if (!a || !b) { snprintf(out, n, "%s", raw); return; }
    StrBuf sb;
    sb_init(&sb);
    if (s->ir->ctx && s->ir->ctx->target == MI_DEV_CUDA) {
        SymCtx *S = s->ir->ctx->sym;
        Expr *n1 = prod(S, a, 0, a->npoint), *r1 = prod(S, a, a->npoint, a->nvars);
        Expr *n2 = prod(S, b, 0, b->npoint), *r2 = prod(S, b, b->npoint, b->nvars);
        if (a->nred && b->nred) sb_put(&sb, "numel/rnumel mismatch (reduce) (");
        else if (!a->nred && !b->nred) sb_put(&sb, "numel/rnumel mismatch (non-reduce) (");
        if (a->nred == 0) n1 = prod(S, a, 0, a->nvars);
        if (b->nred == 0) n2 = prod(S, b, 0, b->nvars);
        if ((a->nred != 0) != (b->nred != 0)) {   /* pointwise against reduction (simd.py) */
            Expr *pw = a->nred ? n2 : n1, *rn = a->nred ? n1 : n2, *rr = a->nred ? r1 : r2;
            sb_put(&sb, pw == sym_mul(S, rn, rr) ? "nodes numel/rnumel incompatibility" : "nodes numel incompatibility");
        } else {
            sym_str_sb(n1, &sb); sb_put(&sb, ", "); sym_str_sb(n2, &sb); sb_put(&sb, "), (");
            sym_str_sb(r1, &sb); sb_put(&sb, ", "); sym_str_sb(r2, &sb); sb_put(&sb, ")");
        }
    } else {
        sb_put(&sb, "cpp: ");
        cpp_group(a, &sb);
        sb_put(&sb, " vs ");
        cpp_group(b, &sb);
    }
    snprintf(out, n, "%s; %s", sb.s, raw);
    sb_free(&sb);
}
