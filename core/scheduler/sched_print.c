/* sched_print.c — the scheduler's result as text: the recorded fusion decisions (`why`, the
 * shell's sched listing) and the ir_post_fusion.txt form, each group printed as Inductor's
 * debug.py prints its SchedulerNodes (FusedSchedulerNode / OuterLoopFusedSchedulerNode with
 * writes, unmet and met dependencies, outputs, then every snode's body). Reads a finished
 * Schedule (scheduler.c) and changes nothing. */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fusion decisions, one line each: "fuse op0 + op1 score=80: vertical: producer into consumer". */
char *sched_decisions_text(const Schedule *s) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < s->ndecisions; i++) {
        const FusionDecision *d = &s->decisions[i];
        sb_printf(&sb, "%s %s + %s score=%lld: %s\n", d->verb ? d->verb : d->accepted ? "fuse" : "skip", d->a, d->b,
                  (long long)d->score, d->reason);
    }
    if (!sb.s) sb_put(&sb, "");
    return sb_take(&sb);
}

/* The fused node's own lines as Inductor's FusedSchedulerNode prints them: writes (union),
 * unmet dependencies (reads of buffers made outside the group), met dependencies (the other
 * reads the group's writes do not cover), and every node's output buffer. On cpu a group whose
 * nodes run different inner loops under shared outer loops is an OuterLoopFusedSchedulerNode. */
static void print_fused_header(const Schedule *s, const SchedGroup *g, const char *nm, StrBuf *sb) {
    SymCtx *S = s->ir->ctx->sym;
    bool same = true;
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    for (int i = 1; i < g->n; i++) {
        const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
        same &= b0 && b && b->nvars == b0->nvars && b->npoint == b0->npoint &&
                memcmp(b->ranges, b0->ranges, sizeof(Expr *) * b->nvars) == 0;
    }
    bool cpu = s->nodes[g->nodes[0]].buf->layout.device.kind == DEV_CPU;
    sb_printf(sb, "%s: %s(", nm, cpu && !same ? "OuterLoopFusedSchedulerNode" : "FusedSchedulerNode");
    for (int i = 0; i < g->n; i++) sb_printf(sb, "%sSchedulerNode", i ? "," : "");
    sb_put(sb, ")\n");
    int nw = 0, nr = 0;
    for (int i = 0; i < g->n; i++) { nw += s->nodes[g->nodes[i]].deps.nwrites; nr += s->nodes[g->nodes[i]].deps.nreads; }
    char **w = mi_xcalloc((size_t)nw + 1, sizeof *w), **r = mi_xcalloc((size_t)nr + 1, sizeof *r);
    char **unmet = mi_xcalloc((size_t)nr + 1, sizeof *unmet), **met = mi_xcalloc((size_t)nr + 1, sizeof *met);
    bool *mine = mi_xcalloc((size_t)nr + 1, 1), *input = mi_xcalloc((size_t)nr + 1, 1);
    nw = nr = 0;
    for (int i = 0; i < g->n; i++) {
        const SchedNode *n = &s->nodes[g->nodes[i]];
        for (int k = 0; k < n->deps.nwrites; k++) w[nw++] = ir_dep_text(&n->deps.writes[k], n->buf->body, S);
    }
    for (int i = 0; i < g->n; i++) {
        const SchedNode *n = &s->nodes[g->nodes[i]];
        for (int k = 0; k < n->deps.nreads; k++) {
            const Buffer *rb = n->deps.reads[k].buf;
            for (int j = 0; j < g->n; j++)
                for (int q = 0; q < s->nodes[g->nodes[j]].deps.nwrites; q++) mine[nr] |= s->nodes[g->nodes[j]].deps.writes[q].buf == rb;
            input[nr] = rb->kind == BUF_INPUT;
            r[nr++] = ir_dep_text(&n->deps.reads[k], n->buf->body, S);
        }
    }
    int nu = 0, nm2 = 0;
    for (int k = 0; k < nr; k++) {
        bool written = false;
        for (int q = 0; q < nw; q++) written |= strcmp(r[k], w[q]) == 0;
        if (written) continue;
        bool is_unmet = !mine[k] && !input[k];
        if (is_unmet) unmet[nu++] = r[k];
        else met[nm2++] = r[k];
    }
    sb_printf(sb, "%s.writes = ", nm);
    ir_print_dep_list(w, nw, sb);
    sb_printf(sb, "\n%s.unmet_dependencies = ", nm);
    ir_print_dep_list(unmet, nu, sb);
    sb_printf(sb, "\n%s.met_dependencies = ", nm);
    ir_print_dep_list(met, nm2, sb);
    sb_printf(sb, "\n%s.outputs = [\n", nm);
    for (int i = 0; i < g->n; i++) ir_print_buffer_output(s->ir, s->nodes[g->nodes[i]].buf, sb);
    sb_put(sb, "]\n");
    for (int k = 0; k < nw; k++) free(w[k]);
    for (int k = 0; k < nr; k++) free(r[k]);
    free(w); free(r); free(unmet); free(met); free(mine); free(input);
}

/* The whole schedule in ir_post_fusion.txt form (Inductor's debug.py): each group in kernel order,
 * fused ones with their header, single nodes as ir_pre_fusion prints them, then cond branches. */
char *sched_print(const Schedule *s) {
    StrBuf sb;
    sb_init(&sb);
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        char nm[512];
        sched_group_name(s, s->order[k], nm, sizeof nm);
        if (g->n > 1) {
            print_fused_header(s, g, nm, &sb);
            sb_printf(&sb, "%s.kernel = %s\n%s.outer_loops = %d\n", nm, g->kernel_name, nm, g->nouter);
            for (int i = 0; i < g->n; i++) {
                sb_printf(&sb, "%s.snodes[%d] =\n", nm, i);
                ir_print_buffer_as(s->ir, s->nodes[g->nodes[i]].buf, s->nodes[g->nodes[i]].name, false, &sb);
            }
        } else {
            ir_print_buffer(s->ir, s->nodes[g->nodes[0]].buf, s->nodes[g->nodes[0]].name, &sb);
        }
        sb_put(&sb, "\n\n");
    }
    sched_print_branches(s, &sb);
    if (!sb.s) sb_put(&sb, "");
    return sb_take(&sb);
}
