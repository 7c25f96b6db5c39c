/* pass_misc.c — the small post-grad passes: remove_profiler_ops, remove_assert_ops and
 * move_constructors_to_cuda. On the real cases they find nothing to do, but they run (and
 * show as unchanged steps) in Inductor's order. */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

static int remove_matching(PassCtx *pc, Graph *g, const char *const *targets, const char *why) {
    graph_compute_users(g);
    bool *dead = mi_xcalloc(g->n + 1, sizeof(bool));
    int c = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION) continue;
        for (int k = 0; targets[k]; k++)
            if (strcmp(n->target, targets[k]) == 0 && n->nusers == 0) {
                dead[i] = true;
                c++;
                pass_note(pc, '-', n->name, "%s", why);
            }
    }
    if (c) pu_remove_nodes(g, dead);
    free(dead);
    return 0;
}

int pass_remove_profiler_ops(PassCtx *pc, Graph *g) {
    static const char *const t[] = {"profiler._record_function_enter.default",
        "profiler._record_function_enter_new.default", "profiler._record_function_exit._RecordFunction",
        "profiler._record_function_exit.default", NULL};
    return remove_matching(pc, g, t, "profiler op");
}

/* aten._assert_scalar (a runtime check of a SymBool, "s0 >= 2") is kept, as in Inductor: it
 * has a side effect and the generated wrapper checks it */
int pass_remove_assert_ops(PassCtx *pc, Graph *g) {
    static const char *const t[] = {"aten._assert_tensor_metadata.default", "aten._assert_async.msg",
        "aten._assert_async.default", NULL};
    return remove_matching(pc, g, t, "assert op");
}

/* Inductor moves cpu constructors (full, zeros, arange, ...) whose only users are cuda ops onto
 * the cuda device. We rewrite the device= kwarg of such constructors. */
int pass_move_constructors_to_cuda(PassCtx *pc, Graph *g) {
    if (pc->device.kind != DEV_CUDA) return 0;
    graph_compute_users(g);
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION || !n->op || !(n->op->flags & OPF_CONSTRUCTOR)) continue;
        if (!n->has_meta || n->meta.device.kind != DEV_CPU || n->nusers == 0) continue;
        bool all_cuda = true;
        for (int u = 0; u < n->nusers; u++) {
            const Node *us = n->users[u];
            if (us->kind != N_CALL_FUNCTION || !us->has_meta || us->meta.device.kind != DEV_CUDA) all_cuda = false;
        }
        if (!all_cuda) continue;
        /* numel 1 cpu scalars are fine where they are (Inductor keeps them) */
        int64_t numel = 0;
        if (sym_is_int(meta_numel(pc->ctx->sym, &n->meta), &numel) && numel <= 1) continue;
        for (int k = 0; k < n->nkwargs; k++)
            if (strcmp(n->kwargs[k].name, "device") == 0 && n->kwargs[k].v.kind == V_DEVICE) {
                n->kwargs[k].v.device = pc->device;
                n->meta.device = pc->device;
                pass_note(pc, '~', n->name, "constructor moved to cuda");
            }
    }
    return 0;
}
