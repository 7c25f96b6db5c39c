/* sched_cond.c — the schedules of higher_order.cond's branch modules (core/ir/ir_cond.c): each
 * branch is scheduled and fused on its own, so each branch gets its own kernels, named after the
 * branch's prefix ("true_graph_0"); `sched` prints them after the caller's kernels and
 * core/codegen/codegen_c.c emits each as a C function called under an `if` on the predicate. */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fn_name(const IrModule *branch, char *out, size_t n) {
    snprintf(out, n, "%s", ir_prefix(branch));
    size_t len = strlen(out);
    if (len && out[len - 1] == '_') out[len - 1] = 0;
}

void sched_run_branches(MiCtx *ctx, Schedule *s) {
    IrModule *m = s->ir;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (!b->cond) continue;
        s->branches = mi_xrealloc(s->branches, sizeof(SchedBranch) * (s->nbranches + 1));
        SchedBranch *sb = &s->branches[s->nbranches++];
        memset(sb, 0, sizeof *sb);
        sb->cond = b;
        for (int k = 0; k < 2; k++) {
            sb->s[k] = sched_run(ctx, b->cond->branch[k]);
            fn_name(b->cond->branch[k], sb->fn[k], sizeof sb->fn[k]);
        }
    }
}

void sched_free_branches(Schedule *s) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) sched_free(s->branches[i].s[k]);
    free(s->branches);
    s->branches = NULL;
    s->nbranches = 0;
}

const SchedBranch *sched_branch_of(const Schedule *s, const Buffer *cond) {
    for (int i = 0; i < s->nbranches; i++)
        if (s->branches[i].cond == cond) return &s->branches[i];
    return NULL;
}

void sched_print_branches(const Schedule *s, StrBuf *sb) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            char *t = sched_print(s->branches[i].s[k]);
            sb_printf(sb, "# subgraph %s (%s of %s): %d kernel%s\n%s", s->branches[i].cond->cond->names[k],
                      ir_cond_role(s->branches[i].cond->cond, k), s->branches[i].cond->name, sched_num_kernels(s->branches[i].s[k]),
                      sched_num_kernels(s->branches[i].s[k]) == 1 ? "" : "s", t);
            free(t);
        }
}
