/* pattern_builtin.c — pass_pattern_0..2: each runs Inductor's pattern entries of that
 * group (core/fx_passes/post_grad_patterns.c; group 0 has none by default) in one reverse
 * sweep, as PatternMatcherPass.apply does; group 2 then runs, when PassCtx.extra_simplify is
 * on, algebraic clean-ups (x*1, x+0, x-0, x/1, consecutive reshapes folded, exact cast chains
 * folded) that Inductor does NOT do post-grad (cuda/attention keeps a mul by 1), so they are
 * off by default to stay faithful; and last the user's pattern file. */
#include "fx_passes/pattern.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

static Node *arg_node(const Node *n, int i) {
    return i < n->nargs && n->args[i].kind == V_NODE ? n->args[i].node : NULL;
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
    int ne = 0;
    const GraphPatternEntry *e = post_grad_pattern_entries(group, &ne);
    if (ne && pattern_entries_apply(pc, g, e, ne) < 0) return -1;
    switch (group) {
    case 2:
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
