/* mkldnn_fusion.c — the unary lowering patterns of torch/_inductor/fx_passes/mkldnn_fusion.py
 * (_register_unary_fusion, registered into post-grad pass_patterns[1] by lazy_init's
 * _mkldnn_fusion_init): a frozen graph's mkldnn._convolution_pointwise.default(..., 'none', [],
 * '') with exactly one user, that user aten.relu / aten.sigmoid / aten.tanh (the
 * _combined_fusion patterns, users=1, float), becomes one node calling the pattern's handler.
 *
 * register_lowering_pattern's LoweringPatternEntry.apply inserts, before the unary node,
 * graph.call_function(handler, match.args): FX names it after the handler, "fn" ("fn_1", ...),
 * prints its target as the function's global name "torch__inductor_fx_passes_mkldnn_fusion_fn"
 * and gives it the unary node's meta (replacement.meta.update(node.meta): annotation and
 * stack); the convolution's ten arguments stay as matched, its attr still 'none'. The handler
 * lowers to the convolution with attr 'relu' (UnaryAttr(op_name)): the attr goes on the node as
 * Node.fused_unary, which core/ops/ops_mkldnn.c's row for the handler reads.
 * Not here (yet): the gelu / hardswish / hardsigmoid / swish / leaky_relu / hardtanh patterns,
 * the low-precision variants, and the linear / transposed-convolution computation ops. */
#include "fx_passes/pattern.h"
#include "ops/ops.h"

#include <stdio.h>
#include <string.h>

#define CONV_PW "mkldnn._convolution_pointwise.default"
#define HANDLER "torch__inductor_fx_passes_mkldnn_fusion_fn"

/* CallFunction(unary, CallFunction(mkldnn._convolution_pointwise.default, *10 Args, _users=1))
 * with _is_valid_computation_unary_fusion: the convolution's attr (args[-3]) is 'none'. */
bool mkldnn_match_unary(PassCtx *pc, Graph *g, Node *u, PatMatch *m) {
    (void)pc; (void)g;
    if (u->nargs != 1 || u->nkwargs || u->args[0].kind != V_NODE) return false;
    Node *conv = u->args[0].node;
    if (conv->kind != N_CALL_FUNCTION || strcmp(conv->target, CONV_PW) != 0 || conv->nargs != 10 || conv->nkwargs) return false;
    if (conv->nusers != 1) return false;
    const Value *attr = &conv->args[7];
    if (attr->kind != V_STR || strcmp(attr->s, "none") != 0) return false;
    m->nodes[m->nnodes++] = conv;
    m->nodes[m->nnodes++] = u;
    return true;
}

/* "aten.relu.default" -> "relu": UnaryAttr(op_name) of the _combined_fusion patterns */
static const char *unary_name(const char *target) {
    if (!strcmp(target, "aten.relu.default")) return "relu";
    if (!strcmp(target, "aten.sigmoid.default")) return "sigmoid";
    if (!strcmp(target, "aten.tanh.default")) return "tanh";
    return NULL;
}

int mkldnn_replace_unary(PassCtx *pc, Graph *g, PatMatch *m) {
    Node *conv = m->nodes[0], *u = m->nodes[1];
    const char *attr = unary_name(u->target);
    if (!attr) return 0;
    const char *name = pass_node_name_for(pc, g, "fn");
    Node *fn = graph_insert_before(g, u, N_CALL_FUNCTION, name, HANDLER);
    graph_set_args(g, fn, conv->args, conv->nargs);
    fn->op = op_lookup(HANDLER);
    fn->fused_unary = attr;            /* a literal: clones copy it into their arena */
    if (u->has_meta) graph_set_meta(g, fn, &u->meta);
    fn->annotated = u->annotated;
    fn->stack = u->stack;
    fn->comment = u->comment;
    graph_replace_all_uses(g, u, fn);
    char why[96];
    snprintf(why, sizeof why, "pattern mkldnn unary fusion (%s)", attr);
    pass_note(pc, '+', fn->name, "%s", why);
    pass_note(pc, '-', u->name, "%s", why);
    pass_note(pc, '-', conv->name, "%s", why);
    graph_remove_node(g, u);
    graph_remove_node(g, conv);
    return 1;
}
