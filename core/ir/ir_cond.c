/* ir_cond.c — higher_order.cond below the FX graph: the branch modules a cond buffer owns
 * (lowered by core/lowering/lowering_extern.c's lower_cond), their names ("true_graph_0_buf0", as Inductor
 * prefixes a subgraph's buffers) and the text of the branches for `ir`; their schedules live
 * in core/scheduler/sched_cond.c.
 * core/codegen/codegen_c.c emits each branch as a C function with the module ABI and an `if` on the
 * predicate in the caller; core/ir/ir_interp.c runs the chosen branch's IR. */
#include "ir/ir.h"

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
