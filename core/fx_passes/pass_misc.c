/* pass_misc.c — the small steps of Inductor's compile_fx / post_grad_passes, each as in
 * torch/_inductor/fx_passes/post_grad.py: view_to_reshape, remove_profiler_ops,
 * remove_assert_ops, move_constructors_to_cuda (ConstructorMoverPass) and the get_attr clean-up of
 * decompose_auto_functionalized. */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

/* view_to_reshape (compile_fx, before fake_tensor_prop): every aten.view.default becomes
 * aten.reshape.default in place, keeping name and stack, so that re-propagating metas with
 * channels-last example inputs cannot fail on a view. Only view.default (view.dtype stays). */
int pass_view_to_reshape(PassCtx *pc, Graph *g) {
    const OpDef *op = op_lookup("aten.reshape.default");
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION || strcmp(n->target, "aten.view.default") != 0) continue;
        n->target = "aten.reshape.default";
        n->op = op;
        pass_note(pc, '~', n->name, "view_to_reshape");
    }
    return 0;
}

/* Erase every node whose target is one of targets, last first (as Inductor does: a
 * _record_function_exit goes before the enter whose handle it reads). */
static int erase_targets(PassCtx *pc, Graph *g, const char *const *targets, const char *why) {
    bool *dead = mi_xcalloc(g->n + 1, sizeof(bool));
    int c = 0;
    for (int i = g->n - 1; i >= 0; i--) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION) continue;
        for (int k = 0; targets[k]; k++)
            if (strcmp(n->target, targets[k]) == 0) {
                dead[i] = true;
                c++;
                pass_note(pc, '-', n->name, "%s", why);
                break;
            }
    }
    if (c) pu_remove_nodes(g, dead);
    free(dead);
    return 0;
}

/* _remove_profiler_ops: record_function enter/exit are side-effectful but compute nothing;
 * they are erased so they do not block fusion. */
int pass_remove_profiler_ops(PassCtx *pc, Graph *g) {
    static const char *const t[] = {"profiler._record_function_enter.default",
        "profiler._record_function_enter_new.default", "profiler._record_function_exit._RecordFunction", NULL};
    return erase_targets(pc, g, t, "profiler op");
}

/* remove_assert_ops: only aten._assert_tensor_metadata (lowered to nothing; it would block
 * unfuse_bias_add_to_pointwise). _assert_async and _assert_scalar stay: they check values. */
int pass_remove_assert_ops(PassCtx *pc, Graph *g) {
    static const char *const t[] = {"aten._assert_tensor_metadata.default", NULL};
    return erase_targets(pc, g, t, "assert op");
}

/* decompose_auto_functionalized: after rewriting auto_functionalized HOPs (none here) it erases
 * every get_attr node without users ("we need to remove the get_attr registered for
 * _constant_schema ..."): a constant whose only reader the joint graph's constant folding
 * replaced by a full() goes with it. Example: `_tensor_constant0 = self._tensor_constant0`
 * left unread after lift_fresh_copy became full([], -1.0). */
int pass_decompose_auto_functionalized(PassCtx *pc, Graph *g) {
    graph_compute_users(g);
    bool *dead = mi_xcalloc(g->n + 1, sizeof(bool));
    int c = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_GET_ATTR || n->nusers) continue;
        dead[i] = true;
        c++;
        pass_note(pc, '-', n->name, "get_attr without users");
    }
    if (c) pu_remove_nodes(g, dead);
    free(dead);
    return 0;
}

/* ---- move_constructors_to_cuda (ConstructorMoverPass("cuda")) ---- */

static bool on_cuda(const Node *n) { return n->has_meta && n->meta.device.kind == DEV_CUDA; }
static bool on_cpu(const Node *n) { return n->has_meta && n->meta.device.kind == DEV_CPU; }

/* is_index_put_and_requires_h2d_sync_for_gpu_value: an index_put(_) with a bool or int8 index
 * whose value is a one-element cpu tensor. ATen's index_put_ runs masked_fill_ for that value
 * without the nonzero() a cuda value would need (a host-device sync), so the value stays on cpu.
 * Example: `h[h < -0.5] = 0.0` -> index_put_(h, [lt], full([], 0.0, device=cpu)). */
static bool index_put_keeps_cpu_value(const Node *u) {
    if (strcmp(u->target, "aten.index_put.default") && strcmp(u->target, "aten.index_put_.default")) return false;
    if (u->nargs < 3 || (u->args[1].kind != V_LIST && u->args[1].kind != V_TUPLE) || u->args[2].kind != V_NODE) return false;
    bool byte_bool = false;
    for (int i = 0; i < u->args[1].list.n; i++) {
        const Value *ix = &u->args[1].list.items[i];
        if (ix->kind == V_NODE && ix->node->has_meta && (ix->node->meta.dtype == DT_BOOL || ix->node->meta.dtype == DT_I8)) byte_bool = true;
    }
    const Node *val = u->args[2].node;
    if (!byte_bool || !on_cpu(val)) return false;
    for (int d = 0; d < val->meta.ndim; d++) {
        int64_t s = 0;
        if (!sym_is_int(val->meta.size[d], &s) || s != 1) return false;
    }
    return true;
}

/* cannot_be_moved: the output, anything but an aten/prims op, and an index_put that keeps a
 * cpu scalar value (above) stop the move. */
static bool cannot_be_moved(const Node *u) {
    if (u->kind != N_CALL_FUNCTION) return true;
    if (strncmp(u->target, "aten.", 5) != 0 && strncmp(u->target, "prims.", 6) != 0) return true;
    return index_put_keeps_cpu_value(u);
}

/* Ops that take cpu tensors beside cuda ones and return a cuda tensor. */
static bool allow_cpu_device(const Node *u) {
    static const char *const t[] = {"aten.index.Tensor", "aten.index_put.default", "aten.index_put_.default",
                                    "aten.copy.default", "aten.copy_.default", "aten.slice_scatter.default", NULL};
    for (int k = 0; t[k]; k++) if (!strcmp(u->target, t[k])) return true;
    return false;
}

static void count_cpu_input(Node *in, void *ud) {
    int *c = ud;
    if (on_cpu(in)) (*c)++;
}

typedef struct { const bool *moved; bool any; } MovedScan;

static void scan_moved(Node *in, void *ud) {
    MovedScan *ms = ud;
    if (in->id >= 0 && ms->moved[in->id]) ms->any = true;
}

static int uf_find(int *parent, int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Constructors (full, zeros, arange, ... with device=cpu) whose cpu results only ever reach
 * cuda ops through ops that accept a cpu input (index, index_put, copy, slice_scatter) move to
 * the cuda device; a chain that reaches the output, a non-aten op, or a cuda op with a cpu
 * input left over keeps all constructors it depends on (and those merged with them) on cpu.
 * Example: arange(4, device=cpu) -> index(x_cuda, [arange]) moves; full(..., cpu) returned
 * as an output stays. */
int pass_move_constructors_to_cuda(PassCtx *pc, Graph *g) {
    int n = g->n;
    Device target = {DEV_CPU, -1};
    int ntargets = 0;
    for (int i = 0; i < n; i++) {
        const Node *x = g->nodes[i];
        if (!on_cuda(x)) continue;
        if (!ntargets || x->meta.device.index != target.index) ntargets++;
        target = x->meta.device;
    }
    int *cons = mi_xmalloc((n + 1) * sizeof(int)), ncons = 0;
    int *cidx = mi_xmalloc((n + 1) * sizeof(int));    /* node id -> constructor index or -1 */
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        cidx[i] = -1;
        if (x->kind != N_CALL_FUNCTION || !x->op || !(x->op->flags & OPF_CONSTRUCTOR)) continue;
        if (strncmp(x->target, "aten.", 5) && strncmp(x->target, "prims.", 6)) continue;
        const Kwarg *dk = node_kwarg(x, "device");
        if (!dk || dk->v.kind != V_DEVICE || dk->v.device.kind != DEV_CPU) continue;
        cidx[i] = ncons;
        cons[ncons++] = i;
    }
    if (!ncons || ntargets != 1) { free(cons); free(cidx); return 0; }
    graph_compute_users(g);
    int *indeg = mi_xcalloc(n + 1, sizeof(int));
    bool *pending = mi_xcalloc(n + 1, sizeof(bool));     /* still a key of cpu_indeg */
    for (int i = 0; i < n; i++) {
        pu_for_each_input(g->nodes[i], count_cpu_input, &indeg[i]);
        pending[i] = indeg[i] != 0;
    }
    int *parent = mi_xmalloc((ncons + 1) * sizeof(int));
    bool *cannot = mi_xcalloc(ncons + 1, sizeof(bool));
    for (int c = 0; c < ncons; c++) parent[c] = c;
    int *dep = mi_xmalloc((n + 1) * sizeof(int));        /* node -> one constructor of its set, -1 */
    for (int i = 0; i < n; i++) dep[i] = cidx[i];
    int *queue = mi_xmalloc((n + ncons + 1) * sizeof(int)), nq = 0;
    for (int c = 0; c < ncons; c++) queue[nq++] = cons[c];
    bool *queued = mi_xcalloc(n + 1, sizeof(bool));
    while (nq) {
        int x = queue[--nq];
        Node *node = g->nodes[x];
        for (int u = 0; u < node->nusers; u++) {
            Node *us = node->users[u];
            int ui = us->id;
            if (cannot_be_moved(us)) {
                if (dep[x] >= 0) cannot[uf_find(parent, dep[x])] = true;
                break;
            }
            if (allow_cpu_device(us) && on_cuda(us)) {
                pending[ui] = false;
            } else {
                indeg[ui]--;
                pending[ui] = true;
                if (indeg[ui] == 0 && !queued[ui]) {
                    pending[ui] = false;
                    queued[ui] = true;
                    queue[nq++] = ui;
                }
            }
            if (dep[x] >= 0 && dep[ui] >= 0) {
                int a = uf_find(parent, dep[x]), b = uf_find(parent, dep[ui]);
                if (a != b) { parent[b] = a; cannot[a] |= cannot[b]; }
            }
            if (dep[ui] < 0) dep[ui] = dep[x];
        }
    }
    for (int i = 0; i < n; i++)
        if (pending[i] && dep[i] >= 0) cannot[uf_find(parent, dep[i])] = true;
    bool *moved = mi_xcalloc(n + 1, sizeof(bool));
    for (int c = 0; c < ncons; c++) {
        if (cannot[uf_find(parent, c)]) continue;
        Node *x = g->nodes[cons[c]];
        for (int k = 0; k < x->nkwargs; k++)
            if (!strcmp(x->kwargs[k].name, "device")) x->kwargs[k].v.device = target;
        x->meta.device = target;
        moved[cons[c]] = true;
        pass_note(pc, '~', x->name, "constructor moved to %s", "cuda");
    }
    /* FakeTensorUpdater: the cpu nodes computed from a moved constructor now run on cuda */
    for (int i = 0; i < n; i++) {
        Node *x = g->nodes[i];
        if (moved[i] || !on_cpu(x) || x->kind != N_CALL_FUNCTION) continue;
        MovedScan ms = {moved, false};
        pu_for_each_input(x, scan_moved, &ms);
        if (!ms.any) continue;
        if (op_infer_node_meta(pc->ctx, g, x) < 0) mi_clear_err(pc->ctx);
        moved[i] = on_cuda(x);
    }
    free(moved);
    free(cons); free(cidx); free(indeg); free(pending); free(parent); free(cannot);
    free(dep); free(queue); free(queued);
    return 0;
}
