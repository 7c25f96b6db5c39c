/* ir_cond.c — higher_order.cond below the FX graph: the branch modules a cond buffer owns
 * (lowered by core/lowering.c's lower_cond), their names ("true_graph_0_buf0", as Inductor
 * prefixes a subgraph's buffers), their schedules (each branch is scheduled and fused on its
 * own, so each branch gets its own kernels), and the text of both for `ir` / `sched`.
 * core/codegen_c.c emits each branch as a C function with the module ABI and an `if` on the
 * predicate in the caller; core/ir_interp.c runs the chosen branch's IR. */
#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ir_cond_free(IrCond *c) {
    if (!c) return;
    for (int b = 0; b < 2; b++) {
        ir_free(c->branch[b]);
        c->branch[b] = NULL;
    }
}

const char *ir_prefix(const IrModule *m) { return m && m->name_prefix ? m->name_prefix : ""; }

void ir_cond_set_prefix(IrModule *m, const char *prefix) {
    m->name_prefix = arena_printf(&m->arena, "%s%s", prefix, ir_prefix(m));
    for (int i = 0; i < m->nbufs; i++) {
        Buffer *b = m->bufs[i];
        /* inputs keep their placeholder names (the IR interpreter finds them by name) */
        if (b->kind != BUF_INPUT) b->name = arena_printf(&m->arena, "%s%s", prefix, b->name);
        if (b->cond)
            for (int k = 0; k < 2; k++)
                if (b->cond->branch[k]) ir_cond_set_prefix(b->cond->branch[k], prefix);
    }
}

void ir_print_branches(const IrModule *m, StrBuf *sb) {
    for (int i = 0; i < m->nbufs; i++) {
        const IrCond *c = m->bufs[i]->cond;
        if (!c) continue;
        for (int k = 0; k < 2; k++) {
            char *t = ir_print(c->branch[k]);
            sb_printf(sb, "# subgraph %s (%s branch of %s)\n%s", c->names[k], k ? "false" : "true", m->bufs[i]->name, t);
            free(t);
        }
    }
}

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
            sb_printf(sb, "# subgraph %s (%s branch of %s): %d kernel%s\n%s", s->branches[i].cond->cond->names[k],
                      k ? "false" : "true", s->branches[i].cond->name, sched_num_kernels(s->branches[i].s[k]),
                      sched_num_kernels(s->branches[i].s[k]) == 1 ? "" : "s", t);
            free(t);
        }
}
