/* ops.c — the op registry: the family tables (core/ops/ops_*.c and decomp_*.c, listed in ops.h)
 * seen as one list, lookup by name, resolving a graph's
 * nodes to their rows, and meta inference for a node (what passes use when they build nodes
 * and what lint checks annotations against). */
#include "ops/ops_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const OpDef *rows; const int *n; } families[] = {
    {ops_pointwise_table, &ops_pointwise_count},
    {ops_view_table, &ops_view_count},
    {ops_reduce_table, &ops_reduce_count},
    {ops_matmul_table, &ops_matmul_count},
    {ops_attention_table, &ops_attention_count},
    {ops_index_table, &ops_index_count},
    {ops_misc_table, &ops_misc_count},
    {ops_conv_table, &ops_conv_count},
    {ops_random_table, &ops_random_count},
    {ops_complex_table, &ops_complex_count},
    {ops_scan_table, &ops_scan_count},
    {ops_pool_table, &ops_pool_count},
    {ops_linalg_table, &ops_linalg_count},
    {ops_fft_table, &ops_fft_count},
    {ops_distance_table, &ops_distance_count},
    {ops_scatter_table, &ops_scatter_count},
    {ops_embedding_bag_table, &ops_embedding_bag_count},
    {ops_weight_norm_table, &ops_weight_norm_count},
    {ops_fake_quant_table, &ops_fake_quant_count},
    {ops_rnn_cell_table, &ops_rnn_cell_count},
    {ops_transformer_table, &ops_transformer_count},
    {ops_sample_table, &ops_sample_count},
    {ops_grid_backward_table, &ops_grid_backward_count},
    {ops_amp_table, &ops_amp_count},
    {ops_lowp_mm_table, &ops_lowp_mm_count},
    {ops_upsample_backward_table, &ops_upsample_backward_count},
    {ops_embedding_bag_backward_table, &ops_embedding_bag_backward_count},
    {ops_pool_backward_table, &ops_pool_backward_count},
    {ops_repeat_interleave_table, &ops_repeat_interleave_count},
    {ops_segment_table, &ops_segment_count},
    {ops_ctc_table, &ops_ctc_count},
    {ops_flex_attention_table, &ops_flex_attention_count},
    {ops_mkldnn_table, &ops_mkldnn_count},
    {ops_histogram_table, &ops_histogram_count},
    {ops_unique_table, &ops_unique_count},
    {ops_linalg_ext_table, &ops_linalg_ext_count},
    {ops_window_table, &ops_window_count},
    {ops_decomp_pointwise_table, &ops_decomp_pointwise_count},
    {ops_decomp_shape_table, &ops_decomp_shape_count},
    {ops_decomp_reduce_table, &ops_decomp_reduce_count},
    {ops_decomp_nn_table, &ops_decomp_nn_count},
    {ops_decomp_foreach_table, &ops_decomp_foreach_count},
    {ops_decomp_range_table, &ops_decomp_range_count},
};
#define NFAM ((int)(sizeof families / sizeof families[0]))

int op_count(void) {
    int n = 0;
    for (int f = 0; f < NFAM; f++) n += *families[f].n;
    return n;
}

const OpDef *op_at(int i) {
    if (i < 0) return NULL;
    for (int f = 0; f < NFAM; f++) {
        if (i < *families[f].n) return &families[f].rows[i];
        i -= *families[f].n;
    }
    return NULL;
}

const char *op_packet_default(const char *name, char *buf, size_t n) {
    const char *dot = name ? strchr(name, '.') : NULL;
    if (!dot || strchr(dot + 1, '.') || (strncmp(name, "aten.", 5) && strncmp(name, "prims.", 6))) return NULL;
    snprintf(buf, n, "%s.default", name);
    return buf;
}

const OpDef *op_lookup(const char *name) {
    if (!name) return NULL;
    if (!strncmp(name, "torch.ops.", 10)) name += 10;
    for (int f = 0; f < NFAM; f++)
        for (int i = 0; i < *families[f].n; i++)
            if (!strcmp(families[f].rows[i].name, name)) return &families[f].rows[i];
    char buf[256];
    const char *def = op_packet_default(name, buf, sizeof buf);
    return def ? op_lookup(def) : NULL;
}

int ops_resolve_graph(Graph *g) {
    int unknown = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION) continue;
        n->op = op_lookup(n->target);
        if (!n->op) unknown++;
    }
    for (int s = 0; s < g->nsubs; s++) unknown += ops_resolve_graph(g->subs[s].g);
    ops_view_bits_graph(g);      /* the conj/neg bits the printed annotations do not show */
    return unknown;
}

/* Is target a user's op (torch.library: "survey.scaled_tanh.default"), of a namespace that is
 * none of PyTorch's own (aten, prims, higher_order, operator ...)? */
bool op_is_custom(const char *target) {
    static const char *own[] = {"aten", "prims", "higher_order", "operator", "_operator", "torch", "math",
                                "builtins", "inductor", "quantized_decomposed", "quantized", "mkl", "mkldnn",
                                "onednn", "_c10d_functional", "c10d_functional", "_quantized", "fbgemm"};
    const char *dot = target ? strchr(target, '.') : NULL;
    if (!dot) return false;
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        if (strlen(own[k]) == (size_t)(dot - target) && !strncmp(own[k], target, (size_t)(dot - target))) return false;
    return true;
}

/* The error for an op not in the registry; for a user's own op (op_is_custom) it says what
 * still works: Inductor calls such an op as a FallbackKernel, so the lowering does too, but
 * its body (Python) is not in the graph, and nothing here can compute its values. */
int op_unsupported_err(MiCtx *ctx, const Graph *g, const Node *n) {
    if (op_is_custom(n->target))
        return graph_node_err(ctx, g, n,
                              "custom op %s has no implementation in minductor (a torch.library op: its body is "
                              "not in the graph): check / exec / interpreting cannot run this graph; run, ir, sched, "
                              "kernels and code show it as a FallbackKernel", n->target);
    return graph_node_err(ctx, g, n, "unsupported op '%s'", n->target ? n->target : "?");
}

int op_infer_generic(MiCtx *ctx, Graph *g, const Node *n, TensorMeta *out, int *nout) {
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    if (!op) return op_unsupported_err(ctx, g, n);
    if (!op->shape) return mi_err(ctx, g->source, n->src_line, 0, "node '%s' (%s): no meta inference for this op", n->name, op->name);
    ShapeArgs sa;
    sa_from_node(&sa, ctx, g, n, op);
    /* run into a full-size buffer, then copy what the caller has room for (a caller passing
     * *nout <= 0 gets one entry); *nout returns the real count */
    int cap = *nout >= 1 ? *nout : 1;
    TensorMeta *tmp = mi_xcalloc(OP_MAX_OUTS, sizeof *tmp);
    int cnt = OP_MAX_OUTS;
    int rc = op->shape(&sa, tmp, &cnt);
    if (rc == 0) {
        for (int i = 0; i < cnt && i < cap; i++) out[i] = tmp[i];
        *nout = cnt;
    }
    free(tmp);
    return rc;
}

int op_infer_meta(MiCtx *ctx, Graph *g, const Node *n, TensorMeta *out, int *nout) {
    if (n->kind != N_CALL_FUNCTION) {
        if (n->has_meta) { out[0] = n->meta; *nout = 1; return 0; }
        return mi_err(ctx, g->source, n->src_line, 0, "node '%s' has no tensor metadata", n->name);
    }
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    if (!op) return op_unsupported_err(ctx, g, n);
    if (!op->infer_meta) return mi_err(ctx, g->source, n->src_line, 0, "node '%s' (%s): no meta inference for this op", n->name, op->name);
    int rc = op->infer_meta(ctx, g, n, out, nout);
    if (rc == 0 && *nout >= 1 && !(op->flags & OPF_TUPLE)) op_view_bits(n, &out[0].is_conj, &out[0].is_neg);
    return rc;
}

int op_infer_node_meta(MiCtx *ctx, Graph *g, Node *n) {
    TensorMeta *out = mi_xcalloc(OP_MAX_OUTS, sizeof *out);
    int nout = OP_MAX_OUTS;
    int rc = op_infer_meta(ctx, g, n, out, &nout);
    if (rc == 0) {
        const OpDef *op = n->op ? n->op : op_lookup(n->target);
        if ((op && (op->flags & OPF_TUPLE)) || nout != 1 || out[0].dtype == DT_INVALID) {
            n->has_meta = false;
            n->annotated = false;
        } else {
            graph_set_meta(g, n, &out[0]);
            n->has_meta = true;
            n->annotated = true;
        }
    }
    free(out);
    return rc;
}

void ivalue_clear(IValue *v) {
    if (!v) return;
    if (v->kind == IV_TENSOR) tensor_unref(v->t);
    if (v->kind == IV_TUPLE) {
        for (int i = 0; i < v->n; i++) ivalue_clear(&v->items[i]);
        free(v->items);
    }
    memset(v, 0, sizeof *v);
    v->kind = IV_NONE;
}
