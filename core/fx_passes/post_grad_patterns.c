/* post_grad_patterns.c — the graph patterns Inductor registers in its post-grad pattern
 * passes (torch/_inductor/fx_passes/post_grad.py), each written after its Python source:
 *
 *   pass_patterns[1]: mkldnn_fusion's unary lowering patterns (core/fx_passes/mkldnn_fusion.c),
 *                     prepare_softmax (register_replacement of amax/sub/exp/sum by
 *                     prims.prepare_softmax_online, cuda + triton only);
 *   pass_patterns[2]: unfuse_bias_add_to_pointwise (addmm -> mm + add on a GPU when every use
 *                     is pointwise), addmm (add(mm(a, b), inp) -> addmm(inp, a, b) otherwise),
 *                     reuse_partial (amax/amin over some dims and over everything share the
 *                     partial result when the input has >= 4096 elements).
 *
 * Each entry matches from its anchor node (a GraphPatternEntry, pattern.h); the driver
 * (pattern_entries_apply in pattern.c) visits anchors in reverse graph order as
 * PatternMatcherPass.apply does, so the last softmax gets prepare_softmax_online_default and
 * the first of six gets prepare_softmax_online_default_5. */
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

/* torch/_inductor/utils.py is_view: an overload whose schema aliases an argument (view ops,
 * reshape, and in-place ops too); aten._unsafe_view has no alias annotation. */
static bool schema_aliases(const Node *n) {
    if (!n->op) return false;
    if (!strcmp(n->target, "aten._unsafe_view.default")) return false;
    return (n->op->flags & (OPF_VIEW | OPF_INPLACE)) != 0;
}

/* is_pointwise_use (utils.py): a use is pointwise when its op has torch.Tag.pointwise; uses
 * through getitem or a view count by their own uses (all must be pointwise; none is fine).
 * The output node, or an op outside the registry, is not pointwise. Example: addmm -> view ->
 * relu is a pointwise use; addmm -> sum or addmm returned is not. */
bool pattern_is_pointwise_use_or(const Node *use, bool (*extra)(const Node *), int depth) {
    if (depth > 64 || use->kind != N_CALL_FUNCTION) return false;
    bool getitem = !strcmp(use->target, "operator.getitem");
    if (!getitem && !use->op) return false;
    if (getitem || schema_aliases(use)) {
        for (int u = 0; u < use->nusers; u++)
            if (!pattern_is_pointwise_use_or(use->users[u], extra, depth + 1)) return false;
        return true;
    }
    return (use->op->flags & OPF_POINTWISE) != 0 || (extra && extra(use));
}
bool pattern_is_pointwise_use(const Node *use, int depth) { return pattern_is_pointwise_use_or(use, NULL, depth); }

/* Is node n's tensor on a GPU? Its meta says, unless the pass manager's device was set to
 * something else than the graph's own (the shell's `--device cuda` on a cpu graph): then
 * every node counts as being there. */
static bool on_gpu(const PassCtx *pc, const Graph *g, const Node *n) {
    if (graph_device(g).kind != pc->device.kind) return pc->device.kind == DEV_CUDA;
    return n && n->has_meta && n->meta.device.kind == DEV_CUDA;
}

/* should_prefer_unfused_addmm: inp on a GPU and every use of the output pointwise. */
static bool prefer_unfused_addmm(const PassCtx *pc, const Graph *g, const Node *inp, const Node *out) {
    if (!inp || !on_gpu(pc, g, inp)) return false;
    for (int u = 0; u < out->nusers; u++)
        if (!pattern_is_pointwise_use(out->users[u], 0)) return false;
    return true;
}

static const Value *kwarg_value(const Node *n, const char *name) {
    const Kwarg *k = node_kwarg(n, name);
    return k ? &k->v : NULL;
}

static bool is_one(const Value *v) {
    double d;
    return !v || (value_as_double(v, &d) && d == 1.0);
}

/* ---- unfuse_bias_add_to_pointwise: CallFunction(aten.addmm, KeywordArg("inp"), Arg(), Arg(),
 * beta=KeywordArg("beta"), alpha=KeywordArg("alpha")) ---- */
static bool match_unfuse(PassCtx *pc, Graph *g, Node *a, PatMatch *m) {
    if (a->nargs != 3) return false;
    for (int k = 0; k < a->nkwargs; k++)
        if (strcmp(a->kwargs[k].name, "beta") && strcmp(a->kwargs[k].name, "alpha")) return false;
    Node *inp = arg_node(a, 0);
    if (!inp || !prefer_unfused_addmm(pc, g, inp, a)) return false;
    /* The handler's first line: config.keep_addmm_fused_for_half_dtypes (on by default) keeps
     * an f16/bf16 addmm fused, because unfusing rounds the mm's result to half precision
     * before the bias is added. Inductor counts the match and leaves the graph as it was. */
    if (inp->has_meta && (inp->meta.dtype == DT_F16 || inp->meta.dtype == DT_BF16)) return false;
    m->nodes[m->nnodes++] = a;
    return true;
}

/* repl(inp, x1, x2, alpha, beta): mm = x1 @ x2; alpha * mm if alpha != 1; beta * inp if
 * beta != 1; inp + mm. One matched node: the new nodes take its stack (replace_by_example). */
static int replace_unfuse(PassCtx *pc, Graph *g, PatMatch *m) {
    Node *a = m->nodes[0];
    const Value *alpha = kwarg_value(a, "alpha"), *beta = kwarg_value(a, "beta");
    Node *made[4];
    int nm = 0;
    Value mmargs[2] = {a->args[1], a->args[2]};
    Node *mm = made[nm++] = pattern_new_node(pc, g, a, "aten.mm.default", mmargs, 2, NULL, 0);
    if (!mm) return -1;
    Value r = value_node(mm), inp = a->args[0];
    if (!is_one(alpha)) {
        Value margs[2] = {r, *alpha};
        Node *mul = made[nm++] = pattern_new_node(pc, g, a, "aten.mul.Tensor", margs, 2, NULL, 0);
        if (!mul) return -1;
        r = value_node(mul);
    }
    if (!is_one(beta)) {
        Value bargs[2] = {inp, *beta};
        Node *mul = made[nm++] = pattern_new_node(pc, g, a, "aten.mul.Tensor", bargs, 2, NULL, 0);
        if (!mul) return -1;
        inp = value_node(mul);
    }
    Value addargs[2] = {inp, r};
    Node *add = made[nm++] = pattern_new_node(pc, g, a, "aten.add.Tensor", addargs, 2, NULL, 0);
    if (!add) return -1;
    for (int k = 0; k < nm; k++) {
        made[k]->stack = a->stack;
        made[k]->comment = a->comment;
        pass_note(pc, '+', made[k]->name, "pattern unfuse_bias_add_to_pointwise");
    }
    pass_note(pc, '-', a->name, "pattern unfuse_bias_add_to_pointwise: addmm -> mm + add");
    graph_replace_all_uses(g, a, add);
    graph_remove_node(g, a);
    return 1;
}

/* ---- addmm: CallFunction(aten.add, KeywordArg("inp"), CallFunction(aten.mm, Arg(), Arg()))
 * and the mirrored form, registered in that order; the mm must have this add as its only
 * user. is_valid_addmm_fusion: inp a tensor node expandable to the mm's [m, n], same dtype as
 * both matrices, and not should_prefer_unfused_addmm. ---- */
static bool ex_is_one(const Expr *e) {
    int64_t v;
    return sym_is_int(e, &v) && v == 1;
}

static bool expandable_to(const TensorMeta *a, Expr *const *want, int nwant) {
    if (a->ndim > nwant) return false;
    for (int i = 0; i < a->ndim; i++) {
        Expr *s = a->size[a->ndim - 1 - i], *w = want[nwant - 1 - i];
        if (s != w && !ex_is_one(s)) return false;
    }
    return true;
}

static bool match_addmm_at(const PassCtx *pc, const Graph *g, Node *a, int mm_pos, PatMatch *m) {
    if (a->nargs != 2) return false;
    const Value *alpha = kwarg_value(a, "alpha");
    if (a->nkwargs > (alpha ? 1 : 0) || !is_one(alpha)) return false;
    Node *mm = arg_node(a, mm_pos), *inp = arg_node(a, 1 - mm_pos);
    if (!is_call(mm, "aten.mm.default") || mm->nargs != 2 || mm->nkwargs || mm->nusers != 1) return false;
    Node *m1 = arg_node(mm, 0), *m2 = arg_node(mm, 1);
    if (!inp || !m1 || !m2 || !inp->has_meta || !m1->has_meta || !m2->has_meta) return false;
    if (m1->meta.ndim != 2 || m2->meta.ndim != 2) return false;
    Expr *want[2] = {m1->meta.size[0], m2->meta.size[1]};
    if (!expandable_to(&inp->meta, want, 2)) return false;
    if (inp->meta.dtype != m1->meta.dtype || inp->meta.dtype != m2->meta.dtype) return false;
    if (prefer_unfused_addmm(pc, g, inp, a)) return false;
    m->nodes[m->nnodes++] = mm;
    m->nodes[m->nnodes++] = a;
    m->binds[0] = value_node(inp);
    return true;
}

static bool match_addmm_inp_first(PassCtx *pc, Graph *g, Node *a, PatMatch *m) {
    return match_addmm_at(pc, g, a, 1, m);
}

static bool match_addmm_mm_first(PassCtx *pc, Graph *g, Node *a, PatMatch *m) {
    return match_addmm_at(pc, g, a, 0, m);
}

static int replace_addmm(PassCtx *pc, Graph *g, PatMatch *m) {
    Node *mm = m->nodes[0], *a = m->nodes[1];
    Value args[3] = {m->binds[0], mm->args[0], mm->args[1]};
    Node *r = pattern_new_node(pc, g, a, "aten.addmm.default", args, 3, NULL, 0);
    if (!r) return -1;
    pass_note(pc, '+', r->name, "pattern addmm");
    pass_note(pc, '-', a->name, "pattern addmm: mm + add -> addmm");
    pass_note(pc, '-', mm->name, "pattern addmm");
    graph_replace_all_uses(g, a, r);
    graph_remove_node(g, a);
    graph_remove_node(g, mm);
    return 1;
}

/* ---- reuse_partial: MultiOutputPattern([red(inp, reduced_dims, keepdim), red'(inp)]) for
 * red in amax/amin, red' the same op or max/min over everything ---- */
static bool match_partial(Node *a, const char *full_alt, PatMatch *m) {
    if (a->nargs != 3 || a->nkwargs) return false;
    Node *inp = arg_node(a, 0);
    if (!inp) return false;
    for (int u = 0; u < inp->nusers; u++) {
        Node *f = inp->users[u];
        if (f == a || f->nargs != 1 || f->nkwargs || arg_node(f, 0) != inp) continue;
        if (!is_call(f, a->target) && !is_call(f, full_alt)) continue;
        m->nodes[m->nnodes++] = a;
        m->nodes[m->nnodes++] = f;
        return true;
    }
    return false;
}

static bool match_partial_amax(PassCtx *pc, Graph *g, Node *a, PatMatch *m) {
    (void)pc; (void)g;
    return match_partial(a, "aten.max.default", m);
}

static bool match_partial_amin(PassCtx *pc, Graph *g, Node *a, PatMatch *m) {
    (void)pc; (void)g;
    return match_partial(a, "aten.min.default", m);
}

/* Below 4096 elements the reuse is not worth it: the handler returns without a change. */
static int replace_partial(PassCtx *pc, Graph *g, PatMatch *m) {
    Node *part = m->nodes[0], *full = m->nodes[1];
    Node *inp = arg_node(part, 0);
    int64_t numel;
    if (!inp->has_meta || !sym_is_int(meta_numel(pc->ctx->sym, &inp->meta), &numel) || numel < 4096) return 0;
    Node *first = part->id < full->id ? part : full;
    Node *np = pattern_new_node(pc, g, first, part->target, part->args, part->nargs, NULL, 0);
    if (!np) return -1;
    Value fargs[1] = {value_node(np)};
    Node *nf = pattern_new_node(pc, g, first, full->target, fargs, 1, NULL, 0);
    if (!nf) return -1;
    pass_note(pc, '+', np->name, "pattern reuse_partial");
    pass_note(pc, '+', nf->name, "pattern reuse_partial (the full reduction reads the partial one)");
    graph_replace_all_uses(g, part, np);
    graph_replace_all_uses(g, full, nf);
    pass_note(pc, '-', part->name, "pattern reuse_partial");
    pass_note(pc, '-', full->name, "pattern reuse_partial");
    graph_remove_node(g, full);
    graph_remove_node(g, part);
    return 1;
}

/* ---- prepare_softmax: outputs (xmax, xsum, xsub, xexp) of
 *   xmax = amax(x, [dim], True); xsub = x - xmax; xexp = exp(xsub); xsum = sum(xexp, [dim], True)
 * replaced by (getitem(pso, 0), getitem(pso, 1), x - getitem0, exp(...)) with
 * pso = prims.prepare_softmax_online(x, dim). extra_check: x on cuda (config.online_softmax,
 * the triton backend); the outputs may have any users. ---- */
static bool one_dim(const Value *v, int64_t *dim) {
    if ((v->kind != V_LIST && v->kind != V_TUPLE) || v->list.n != 1) return false;
    return value_as_int(&v->list.items[0], dim);
}

static bool is_true(const Value *v) { return v->kind == V_BOOL && v->b; }

static bool match_softmax(PassCtx *pc, Graph *g, Node *amax, PatMatch *m) {
    int64_t dim, dim2;
    if (amax->nargs != 3 || amax->nkwargs) return false;
    Node *x = arg_node(amax, 0);
    if (!x || !one_dim(&amax->args[1], &dim) || !is_true(&amax->args[2])) return false;
    for (int u = 0; u < amax->nusers; u++) {
        Node *sub = amax->users[u];
        if (!is_call(sub, "aten.sub.Tensor") || sub->nargs != 2 || sub->nkwargs || arg_node(sub, 0) != x ||
            arg_node(sub, 1) != amax) continue;
        for (int v = 0; v < sub->nusers; v++) {
            Node *ex = sub->users[v];
            if (!is_call(ex, "aten.exp.default") || ex->nargs != 1 || ex->nkwargs) continue;
            for (int w = 0; w < ex->nusers; w++) {
                Node *sum = ex->users[w];
                if (!is_call(sum, "aten.sum.dim_IntList") || sum->nargs != 3 || sum->nkwargs || arg_node(sum, 0) != ex ||
                    !one_dim(&sum->args[1], &dim2) || dim2 != dim || !is_true(&sum->args[2])) continue;
                if (!on_gpu(pc, g, x)) return false;
                m->nodes[m->nnodes++] = amax;
                m->nodes[m->nnodes++] = sub;
                m->nodes[m->nnodes++] = ex;
                m->nodes[m->nnodes++] = sum;
                m->binds[0] = value_node(x);
                m->binds[1] = value_int(dim);
                return true;
            }
        }
    }
    return false;
}

static int replace_softmax(PassCtx *pc, Graph *g, PatMatch *m) {
    Node *amax = m->nodes[0], *sub = m->nodes[1], *ex = m->nodes[2], *sum = m->nodes[3];
    Value pargs[2] = {m->binds[0], m->binds[1]};
    Node *pso = pattern_new_node(pc, g, amax, "prims.prepare_softmax_online.default", pargs, 2, NULL, 0);
    if (!pso) return -1;
    Value g0[2] = {value_node(pso), value_int(0)}, g1[2] = {value_node(pso), value_int(1)};
    Node *gmax = pattern_new_node(pc, g, amax, "operator.getitem", g0, 2, NULL, 0);
    Node *gsum = gmax ? pattern_new_node(pc, g, amax, "operator.getitem", g1, 2, NULL, 0) : NULL;
    if (!gsum) return -1;
    Value sargs[2] = {m->binds[0], value_node(gmax)};
    Node *nsub = pattern_new_node(pc, g, amax, "aten.sub.Tensor", sargs, 2, NULL, 0);
    if (!nsub) return -1;
    Value eargs[1] = {value_node(nsub)};
    Node *nexp = pattern_new_node(pc, g, amax, "aten.exp.default", eargs, 1, NULL, 0);
    if (!nexp) return -1;
    Node *added[5] = {pso, gmax, gsum, nsub, nexp};
    for (int k = 0; k < 5; k++) pass_note(pc, '+', added[k]->name, "pattern prepare_softmax (online softmax)");
    graph_replace_all_uses(g, sum, gsum);
    graph_replace_all_uses(g, ex, nexp);
    graph_replace_all_uses(g, sub, nsub);
    graph_replace_all_uses(g, amax, gmax);
    Node *gone[4] = {amax, sub, ex, sum};
    for (int k = 0; k < 4; k++) {
        pass_note(pc, '-', gone[k]->name, "pattern prepare_softmax (online softmax)");
        graph_remove_node(g, gone[k]);
    }
    return 1;
}

/* The entries of each pass_patterns[i], in Inductor's registration order. */
static const GraphPatternEntry GROUP1[] = {
    /* lazy_init: _mkldnn_fusion_init first (the float _combined_fusion entries relu, sigmoid, tanh) */
    {"mkldnn_unary_fusion", {"aten.relu.default", NULL}, mkldnn_match_unary, mkldnn_replace_unary},
    {"mkldnn_unary_fusion", {"aten.sigmoid.default", NULL}, mkldnn_match_unary, mkldnn_replace_unary},
    {"mkldnn_unary_fusion", {"aten.tanh.default", NULL}, mkldnn_match_unary, mkldnn_replace_unary},
    {"prepare_softmax", {"aten.amax.default", NULL}, match_softmax, replace_softmax},
};
static const GraphPatternEntry GROUP2[] = {
    {"unfuse_bias_add_to_pointwise", {"aten.addmm.default", NULL}, match_unfuse, replace_unfuse},
    {"addmm", {"aten.add.Tensor", NULL}, match_addmm_inp_first, replace_addmm},
    {"addmm", {"aten.add.Tensor", NULL}, match_addmm_mm_first, replace_addmm},
    {"reuse_partial", {"aten.amax.default", NULL}, match_partial_amax, replace_partial},
    {"reuse_partial", {"aten.amin.default", NULL}, match_partial_amin, replace_partial},
};

const GraphPatternEntry *post_grad_pattern_entries(int group, int *n) {
    switch (group) {
    case 1: *n = (int)(sizeof GROUP1 / sizeof GROUP1[0]); return GROUP1;
    case 2: *n = (int)(sizeof GROUP2 / sizeof GROUP2[0]); return GROUP2;
    }
    *n = 0;
    return NULL;
}
