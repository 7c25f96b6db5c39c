/* codegen_outputs.c — what a generated module (C or CUDA) tells its caller about its outputs,
 * and the attention mask arguments both backends pass (declared in codegen_kernel.h): the
 * outputs that are inputs returned as they are (mi_output_alias), the outputs laid out other
 * than their annotation (mi_output_strides), the outputs that are views of a storage
 * (mi_output_view); the runtime (core/runtime/runtime.c) allocates and wraps the outputs from
 * them. Moved from codegen_kernel.c, which emits the kernels themselves. */
#include "codegen/codegen_kernel.h"

#include <stdio.h>

/* The graph's annotation of output j (NULL when it has none). */
static const TensorMeta *output_meta(const IrModule *m, int j) {
    const Node *o = graph_output(m->graph);
    if (!o || o->nargs < 1) return NULL;
    const Value *v = &o->args[0];
    const Value *it = v->kind == V_TUPLE || v->kind == V_LIST ? (j < v->list.n ? &v->list.items[j] : NULL) : (j == 0 ? v : NULL);
    return it && it->kind == V_NODE && it->node->has_meta ? &it->node->meta : NULL;
}

/* `int NAME(int j, const int64_t *syms, int64_t *ARG)`: the size symbols, then a switch on j
 * over `cases` ("    case 3: ARG[0] = ...; return 1;" lines), 0 for any other j; nothing when
 * there are no cases. Frees cases. */
static void emit_switch_fn(const IrModule *m, const char *decl, const char *name, const char *arg, StrBuf *cases, StrBuf *out) {
    if (cases->s && cases->s[0]) {
        sb_printf(out, "%sint %s(int j, const int64_t *syms, int64_t *%s)\n{\n", decl, name, arg);
        for (int i = 0; i < m->nsyms; i++) sb_printf(out, "    const int64_t %s = syms[%d];\n", m->sym_names[i], i);
        sb_printf(out, "    (void)syms;\n    switch (j) {\n%s    default: return 0;\n    }\n}\n\n", cases->s);
    }
    sb_free(cases);
}

/* `int mi_output_view(j, syms, v)` for the outputs returned as views of a storage (IrModule
 * out_views: Inductor's `return (reinterpret_tensor(buf6, (2, 1, 20, 16), (640, 640, 32, 1), 16), ...)`):
 * 1 and v = {owner, storage numel, offset, size[ndim], stride[ndim]}, where owner is -1 for an
 * input's storage (mi_output_alias names it), j when the module writes the buffer into
 * outputs[j] (the caller allocates numel elements there), else the output whose storage it is. */
static void emit_output_views(const IrModule *m, const char *decl, StrBuf *out) {
    StrBuf cases;
    sb_init(&cases);
    for (int j = 0; j < m->noutputs; j++) {
        const Buffer *b = m->outputs[j];
        const Layout *v = m->out_views ? m->out_views[j] : NULL;
        if (!b || !v) continue;
        int owner = b->kind == BUF_INPUT ? -1 : b->output_index;
        sb_printf(&cases, "    case %d: v[0] = %d; v[1] = ", j, owner);
        sym_c_sb(layout_storage_size(m->ctx->sym, &b->layout), &cases);
        sb_put(&cases, "; v[2] = ");
        sym_c_sb(v->offset, &cases);
        sb_put(&cases, ";");
        for (int d = 0; d < 2 * v->ndim; d++) {
            sb_printf(&cases, " v[%d] = ", 3 + d);
            sym_c_sb(d < v->ndim ? v->size[d] : v->stride[d - v->ndim], &cases);
            sb_put(&cases, ";");
        }
        sb_put(&cases, " return 1;\n");
    }
    emit_switch_fn(m, decl, "mi_output_view", "v", &cases, out);
}

/* codegen_kernel.h: mi_output_alias, mi_output_strides and mi_output_view */
void cg_emit_output_alias(const IrModule *m, const char *decl, StrBuf *out) {
    sb_printf(out, "%sconst int mi_output_alias[] = {", decl);
    for (int j = 0; j < m->noutputs; j++) {
        const Buffer *b = m->outputs[j];
        sb_printf(out, "%d, ", b && b->kind == BUF_INPUT ? b->input_index : -1);
    }
    sb_put(out, "-1};\n\n");
    /* outputs laid out other than their annotation (a channels-last activation saved for the
     * backward, as Inductor returns it): the caller allocates them with these strides */
    StrBuf cases;
    sb_init(&cases);
    for (int j = 0; j < m->noutputs; j++) {
        const Buffer *b = m->outputs[j];
        const TensorMeta *t = output_meta(m, j);
        if (!b || b->kind == BUF_INPUT || (m->out_views && m->out_views[j]) || !t || t->ndim != b->layout.ndim) continue;
        bool same = true;
        for (int d = 0; d < t->ndim; d++) same &= t->stride[d] == b->layout.stride[d];
        if (same) continue;
        sb_printf(&cases, "    case %d:", j);
        for (int d = 0; d < t->ndim; d++) {
            sb_printf(&cases, " out[%d] = ", d);
            sym_c_sb(b->layout.stride[d], &cases);
            sb_put(&cases, ";");
        }
        sb_put(&cases, " return 1;\n");
    }
    emit_switch_fn(m, decl, "mi_output_strides", "out", &cases, out);
    emit_output_views(m, decl, out);
}

/* codegen_kernel.h: the mask arguments and the end of attention b's mi_sdpa call */
void cg_emit_sdpa_mask(StrBuf *sb, const Buffer *b, const char *open, const char *close, const char *none) {
    if (b->neargs <= 3) { sb_printf(sb, "%s);\n", none); return; }
    const ExternArg *m = &b->eargs[3];
    const Layout *ml = &m->view;
    sb_printf(sb, "%s + ", m->buf->name);
    sym_c_sb(ml->offset, sb);
    sb_printf(sb, ", %d, %s", ml->dtype == DT_BOOL, open);
    for (int d = 0; d < 4; d++) {
        int md = d - (4 - ml->ndim);
        int64_t one;
        if (d) sb_put(sb, ", ");
        if (md < 0 || (sym_is_int(ml->size[md], &one) && one == 1)) sb_put(sb, "0");
        else sym_c_sb(ml->stride[md], sb);
    }
    sb_printf(sb, "%s);\n", close);
}
