/* pass_fake_tensor_prop.c — compile_fx's fake_tensor_prop(gm, example_inputs), the step
 * between view_to_reshape and the post-grad passes: the graph's metas are re-derived from
 * the inputs Inductor is actually given. It matters for backward graphs after layout
 * optimization: the forward returned channels-last tensors, so the backward's placeholders
 * (and everything computed from them) get channels-last strides that the aot_backward_graph
 * print does not show (cpu/cnn_train: convolution "[16384, 1024, 32, 1]" becomes
 * "[16384, 1, 512, 16]"). The layouts come from the PassManager (pm_set_input_layouts; the
 * shell reads them from the log's fx_graph_runnable); without layouts, or when they equal
 * the placeholders' strides, the step changes nothing. */
#include "fx_passes/passes.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

static const InputLayout *layout_for(const PassCtx *pc, const char *name) {
    for (int i = 0; i < pc->nlayouts; i++)
        if (!strcmp(pc->layouts[i].name, name)) return &pc->layouts[i];
    return NULL;
}

/* Put layout l's strides on placeholder n. Returns 1 when a stride changed, 0 when none did,
 * -1 (ctx error) when the sizes disagree: the layouts belong to another graph. */
static int apply_layout(PassCtx *pc, Graph *g, Node *n, const InputLayout *l) {
    if (!n->has_meta || n->meta.ndim != l->ndim)
        return mi_err(pc->ctx, g->source, n->src_line, 0, "fake_tensor_prop: example input '%s' has %d dims, the placeholder %d",
                      l->name, l->ndim, n->has_meta ? n->meta.ndim : 0);
    bool changed = false;
    for (int d = 0; d < l->ndim; d++) {
        int64_t s;
        if (sym_is_int(n->meta.size[d], &s) && s != l->size[d])
            return mi_err(pc->ctx, g->source, n->src_line, 0, "fake_tensor_prop: example input '%s' has size %lld in dim %d, the placeholder %lld",
                          l->name, (long long)l->size[d], d, (long long)s);
        int64_t old;
        if (!sym_is_int(n->meta.stride[d], &old) || old != l->stride[d]) changed = true;
    }
    if (!changed) return 0;
    for (int d = 0; d < l->ndim; d++) n->meta.stride[d] = sym_int(pc->ctx->sym, l->stride[d]);
    n->meta.has_stride = true;
    pass_note(pc, '~', n->name, "example input layout");
    return 1;
}

/* Re-infer n's meta from its (possibly changed) inputs. An op whose meta cannot be inferred
 * keeps its printed meta, as does a tuple op (its getitems are re-inferred one by one). */
static void reinfer(PassCtx *pc, Graph *g, Node *n) {
    if (n->kind != N_CALL_FUNCTION || !n->has_meta) return;
    TensorMeta *out = mi_xcalloc(OP_MAX_OUTS, sizeof *out);
    int nout = OP_MAX_OUTS;
    if (op_infer_meta(pc->ctx, g, n, out, &nout) < 0) {
        mi_clear_err(pc->ctx);
    } else if (nout == 1 && out[0].dtype != DT_INVALID && !meta_equal(&out[0], &n->meta)) {
        bool had_stride = n->meta.has_stride;
        graph_set_meta(g, n, &out[0]);
        n->meta.has_stride = had_stride || out[0].has_stride;
        pass_note(pc, '~', n->name, "meta re-inferred from the example inputs");
    }
    free(out);
}

/* The example inputs are the top graph's: a subgraph (a cond branch, a score_mod) has placeholders
 * of its own, often with the same names ("arg0_1"), that FakeTensorProp never sees (the HOP's fake
 * impl traces its branch on the operands). So only g without a parent is matched. */
int pass_fake_tensor_prop(PassCtx *pc, Graph *g) {
    if (!pc->nlayouts || g->parent) return 0;
    int changed = 0;
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind != N_PLACEHOLDER) continue;
        const InputLayout *l = layout_for(pc, n->name);
        if (!l) continue;
        int rc = apply_layout(pc, g, n, l);
        if (rc < 0) return -1;
        changed += rc;
    }
    if (!changed) return 0;
    for (int i = 0; i < g->n; i++) reinfer(pc, g, g->nodes[i]);
    return 0;
}
