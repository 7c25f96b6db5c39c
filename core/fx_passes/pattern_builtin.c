/* pattern_builtin.c — the rewrites real Inductor made on the real cases, as pass_pattern_0..2:
 *
 *   group 0: view -> reshape (every device; keeps the node's name and stack, like
 *            Inductor's view_to_reshape);
 *   group 1: softmax amax/sub/exp/sum -> prims.prepare_softmax_online (max, sum) read with
 *            getitem, then sub, exp (cuda only: Inductor has online softmax only for triton);
 *   group 2: addmm(bias, x, w) -> mm(x, w) + add(bias, mm) when a pointwise/reduction op reads
 *            the result (cuda only); then, when PassCtx.extra_simplify is on, algebraic clean-ups
 *            (x*1, x+0, x-0, x/1, consecutive reshapes folded, exact cast chains folded) that
 *            Inductor does NOT do post-grad (cuda/attention keeps a mul by 1), so they are off
 *            by default to stay faithful; and the user's patterns.
 * New nodes are named like Inductor's (mm_default, add_tensor, ...) with no stack. */
#include "fx_passes/pattern.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

static bool is_call(const Node *n, const char *target) {
    return n && n->kind == N_CALL_FUNCTION && strcmp(n->target, target) == 0;
}

static Node *arg_node(const Node *n, int i) {
    return i < n->nargs && n->args[i].kind == V_NODE ? n->args[i].node : NULL;
}

/* ---- view -> reshape ---- */
static int view_to_reshape(PassCtx *pc, Graph *g) {
    const OpDef *op = op_lookup("aten.reshape.default");
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (!is_call(n, "aten.view.default")) continue;
        n->target = "aten.reshape.default";
        n->op = op;
        pass_note(pc, '~', n->name, "view_to_reshape");
    }
    return 0;
}

/* ---- addmm split ---- */
static bool has_pointwise_or_reduction_user(const Node *n) {
    for (int u = 0; u < n->nusers; u++) {
        const Node *us = n->users[u];
        if (us->kind == N_CALL_FUNCTION && us->op && (us->op->flags & (OPF_POINTWISE | OPF_REDUCTION))) return true;
    }
    return false;
}

static int addmm_split(PassCtx *pc, Graph *g) {
    if (pc->device.kind != DEV_CUDA) return 0;
    graph_compute_users(g);
    int n0 = g->n;
    Node **snap = mi_xmalloc((n0 + 1) * sizeof *snap);
    memcpy(snap, g->nodes, n0 * sizeof *snap);
    int rc = 0;
    for (int i = 0; i < n0; i++) {
        Node *a = snap[i];
        if (a->id < 0 || !is_call(a, "aten.addmm.default") || a->nargs != 3 || a->nkwargs) continue;
        Node *inp = arg_node(a, 0);
        if (!inp || !inp->has_meta || inp->meta.device.kind != DEV_CUDA) continue;
        if (!g->users_valid) graph_compute_users(g);
        if (!has_pointwise_or_reduction_user(a)) continue;
        Value mmargs[2] = {a->args[1], a->args[2]};
        Node *mm = pattern_new_node(pc, g, a, "aten.mm.default", mmargs, 2, NULL, 0);
        if (!mm) { rc = -1; break; }
        Value addargs[2] = {a->args[0], value_node(mm)};
        Node *add = pattern_new_node(pc, g, a, "aten.add.Tensor", addargs, 2, NULL, 0);
        if (!add) { rc = -1; break; }
        mm->stack = add->stack = a->stack;   /* replace_by_example keeps the replaced node's stack */
        mm->comment = add->comment = a->comment;
        pass_note(pc, '+', mm->name, "pattern unfuse_bias_add_to_pointwise");
        pass_note(pc, '+', add->name, "pattern unfuse_bias_add_to_pointwise");
        pass_note(pc, '-', a->name, "pattern unfuse_bias_add_to_pointwise: addmm -> mm + add");
        graph_replace_all_uses(g, a, add);
        graph_remove_node(g, a);
        graph_compute_users(g);
    }
    free(snap);
    return rc;
}

/* ---- softmax -> prepare_softmax_online ---- */
static bool is_dim_list(const Value *v, int64_t *dim) {
    if ((v->kind != V_LIST && v->kind != V_TUPLE) || v->list.n != 1) return false;
    return value_as_int(&v->list.items[0], dim);
}

static bool is_true(const Value *v) { return v->kind == V_BOOL && v->b; }

static Node *user_matching(const Node *n, const char *target, int argi) {
    for (int u = 0; u < n->nusers; u++) {
        Node *us = n->users[u];
        if (is_call(us, target) && arg_node(us, argi) == n) return us;
    }
    return NULL;
}

static int softmax_online(PassCtx *pc, Graph *g) {
    if (pc->device.kind != DEV_CUDA) return 0;
    graph_compute_users(g);
    int n0 = g->n;
    Node **snap = mi_xmalloc((n0 + 1) * sizeof *snap);
    memcpy(snap, g->nodes, n0 * sizeof *snap);
    int rc = 0;
    for (int i = 0; i < n0; i++) {
        Node *amax = snap[i];
        int64_t dim, dim2;
        if (amax->id < 0 || !is_call(amax, "aten.amax.default") || amax->nargs != 3 || amax->nkwargs) continue;
        Node *x = arg_node(amax, 0);
        if (!x || !is_dim_list(&amax->args[1], &dim) || !is_true(&amax->args[2])) continue;
        if (!x->has_meta || x->meta.device.kind != DEV_CUDA || !dtype_is_float(x->meta.dtype)) continue;
        if (!g->users_valid) graph_compute_users(g);
        Node *sub = NULL;
        for (int u = 0; u < amax->nusers; u++) {
            Node *us = amax->users[u];
            if (is_call(us, "aten.sub.Tensor") && us->nargs == 2 && arg_node(us, 0) == x && arg_node(us, 1) == amax) sub = us;
        }
        if (!sub) continue;
        Node *ex = user_matching(sub, "aten.exp.default", 0);
        if (!ex || ex->nargs != 1) continue;
        Node *sum = user_matching(ex, "aten.sum.dim_IntList", 0);
        if (!sum || sum->nargs != 3 || sum->nkwargs || !is_dim_list(&sum->args[1], &dim2) || dim2 != dim ||
            !is_true(&sum->args[2])) continue;
        Value pargs[2] = {value_node(x), value_int(dim)};
        Node *pso = pattern_new_node(pc, g, amax, "prims.prepare_softmax_online.default", pargs, 2, NULL, 0);
        if (!pso) { rc = -1; break; }
        Value g0[2] = {value_node(pso), value_int(0)}, g1[2] = {value_node(pso), value_int(1)};
        Node *gmax = pattern_new_node(pc, g, amax, "operator.getitem", g0, 2, NULL, 0);
        Node *gsum = gmax ? pattern_new_node(pc, g, amax, "operator.getitem", g1, 2, NULL, 0) : NULL;
        if (!gsum) { rc = -1; break; }
        Value sargs[2] = {value_node(x), value_node(gmax)};
        Node *nsub = pattern_new_node(pc, g, amax, "aten.sub.Tensor", sargs, 2, NULL, 0);
        if (!nsub) { rc = -1; break; }
        Value eargs[1] = {value_node(nsub)};
        Node *nexp = pattern_new_node(pc, g, amax, "aten.exp.default", eargs, 1, NULL, 0);
        if (!nexp) { rc = -1; break; }
        Node *added[5] = {pso, gmax, gsum, nsub, nexp};
        for (int k = 0; k < 5; k++) pass_note(pc, '+', added[k]->name, "pattern prepare_softmax (online softmax)");
        graph_replace_all_uses(g, sum, gsum);
        graph_replace_all_uses(g, ex, nexp);
        graph_replace_all_uses(g, sub, nsub);
        graph_replace_all_uses(g, amax, gmax);
        Node *gone[4] = {sum, ex, sub, amax};
        for (int k = 0; k < 4; k++) {
            pass_note(pc, '-', gone[k]->name, "pattern prepare_softmax (online softmax)");
            graph_remove_node(g, gone[k]);
        }
        graph_compute_users(g);
    }
    free(snap);
    return rc;
}

/* ---- algebraic clean-ups (group 2), written in the pattern language ---- */
static const char ALGEBRA[] =
    "pattern mul_by_one\n  doc: x * 1 -> x\n  match:\n    m = aten.mul.Tensor(x, 1)\n  replace:\n    return x\nend\n"
    "pattern one_mul\n  doc: 1 * x -> x\n  match:\n    m = aten.mul.Tensor(1, x)\n  replace:\n    return x\nend\n"
    "pattern add_zero\n  doc: x + 0 -> x\n  match:\n    a = aten.add.Tensor(x, 0)\n  replace:\n    return x\nend\n"
    "pattern sub_zero\n  doc: x - 0 -> x\n  match:\n    a = aten.sub.Tensor(x, 0)\n  replace:\n    return x\nend\n"
    "pattern div_by_one\n  doc: x / 1 -> x\n  match:\n    a = aten.div.Tensor(x, 1)\n  replace:\n    return x\nend\n"
    "pattern permute_noop\n  doc: permute that changes nothing (same sizes and strides) -> x\n  match:\n    p = aten.permute.default(x, d)\n  replace:\n    return x\nend\n"
    "pattern expand_noop\n  doc: expand to the same shape -> x\n  match:\n    e = aten.expand.default(x, s)\n  replace:\n    return x\nend\n"
    "pattern reshape_noop\n  doc: reshape to the same shape -> x\n  match:\n    r = aten.reshape.default(x, s)\n  replace:\n    return x\nend\n"
    "pattern reshape_reshape\n  doc: reshape(reshape(x, a), b) -> reshape(x, b)\n  match:\n"
    "    r1 = aten.reshape.default(x, a)\n    r2 = aten.reshape.default(r1, b)\n  replace:\n"
    "    r = aten.reshape.default(x, b)\n    return r\nend\n"
    "pattern cast_cast\n  doc: convert(convert(x, t1), t2) -> convert(x, t2) when t1 is wider than x and t2\n  match:\n"
    "    c1 = prims.convert_element_type.default(x, t1)\n    c2 = prims.convert_element_type.default(c1, t2)\n  replace:\n"
    "    c = prims.convert_element_type.default(x, t2)\n    return c\nend\n";

/* cast chains fold only when the middle type loses nothing of x (so the result is exact) */
static bool cast_chain_exact(const Graph *g, Node *anchor, const Value *binds) {
    (void)g;
    Node *c1 = arg_node(anchor, 0);
    Node *x = c1 ? arg_node(c1, 0) : NULL;
    if (!x || !x->has_meta || !c1->has_meta) return false;
    DType a = x->meta.dtype, mid = c1->meta.dtype;
    if (a == mid) return true;
    if (dtype_is_float(a)) return dtype_is_float(mid) && dtype_size(mid) > dtype_size(a) && a != DT_BF16 ? true :
                                  (a == DT_BF16 && (mid == DT_F32 || mid == DT_F64));
    if (dtype_is_int(a) || a == DT_BOOL) return dtype_is_int(mid) && dtype_size(mid) > dtype_size(a);
    (void)binds;
    return false;
}

static int algebra(PassCtx *pc, Graph *g) {
    PatternSet ps;
    patternset_init(&ps);
    if (pattern_parse(pc->ctx, &ps, ALGEBRA, "<builtin patterns>") < 0) return -1;
    for (int i = 0; i < ps.n; i++)
        if (!strcmp(ps.pats[i].name, "cast_cast")) ps.pats[i].check = cast_chain_exact;
    graph_compute_users(g);
    int rc = pattern_apply(pc, g, &ps);
    patternset_free(&ps);
    return rc < 0 ? -1 : 0;
}

int pattern_builtin_group(PassCtx *pc, Graph *g, int group) {
    switch (group) {
    case 0: return view_to_reshape(pc, g);
    case 1: return softmax_online(pc, g);
    case 2:
        if (addmm_split(pc, g) < 0) return -1;
        if (pc->extra_simplify && algebra(pc, g) < 0) return -1;
        if (pc->user_patterns && pc->user_patterns->n) {
            graph_compute_users(g);
            if (pattern_apply(pc, g, pc->user_patterns) < 0) return -1;
        }
        return 0;
    }
    return 0;
}

int pass_pattern_0(PassCtx *pc, Graph *g) { return pattern_builtin_group(pc, g, 0); }
int pass_pattern_1(PassCtx *pc, Graph *g) { return pattern_builtin_group(pc, g, 1); }
int pass_pattern_2(PassCtx *pc, Graph *g) { return pattern_builtin_group(pc, g, 2); }
