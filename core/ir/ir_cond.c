/* ir_cond.c — higher_order.cond and higher_order.while_loop below the FX graph: the branch modules a cond buffer owns
 * (lowered by core/lowering/lowering_extern.c's lower_cond), their names ("true_graph_0_buf0", as Inductor
 * prefixes a subgraph's buffers) and the text of the branches for `ir`; their schedules live
 * in core/scheduler/sched_cond.c.
 * core/codegen/codegen_c.c emits each branch as a C function with the module ABI and an `if` on the
 * predicate in the caller (a host loop for a while_loop: cond_fn, then body_fn while it gives
 * True); core/ir/ir_interp.c runs the chosen branch's IR (the loop's subgraphs in turn). */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "true branch" / "false branch"; "cond_fn" / "body_fn" of a while_loop (the names
 * torch/_higher_order_ops/while_loop.py gives them). */
const char *ir_cond_role(const IrCond *c, int k) {
    if (c->is_while) return k ? "body_fn" : "cond_fn";
    return k ? "false branch" : "true branch";
}

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
            sb_printf(sb, "# subgraph %s (%s of %s)\n%s", c->names[k], ir_cond_role(c, k), m->bufs[i]->name, t);
            free(t);
        }
    }
}
