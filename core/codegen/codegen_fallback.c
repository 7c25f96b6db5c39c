/* codegen_fallback.c — the FallbackKernel call of generated code, shared by the C and CUDA
 * backends (see codegen_fallback.h): the callback ABI text and the tensor descriptions. */
#include "codegen/codegen_fallback.h"

#include <stdio.h>
#include <string.h>

const char cg_fallback_abi[] =
    "#define MI_FALLBACK_FAILED 2000   /* call_fb() returns this when a fallback op fails */\n"
    "typedef struct MiFbTensor { void *data; int32_t dtype, ndim; int64_t offset; int64_t size[16], stride[16]; } MiFbTensor;\n"
    "typedef struct MiFb {\n"
    "    void *ctx;\n"
    "    int (*run)(void *ctx, const char *node, int nargs, const MiFbTensor *args, int nouts, MiFbTensor *outs,\n"
    "               int nsyms, const char *const *sym_names, const int64_t *syms);\n"
    "    void *(*alloc_out)(void *ctx, int j, int nsyms, const char *const *sym_names, const int64_t *syms);\n"
    "} MiFb;\n\n";

int cg_fallback_outs(const Buffer *b, const Buffer **outs, int max) {
    int n = 0;
    if (b->layout.multi) {   /* a FallbackKernel or the attention: its MultiOutput items */
        for (int k = 0; k < b->nitems && n < max; k++) outs[n++] = b->items[k];
        return n;
    }
    if (b->ext == EXT_FALLBACK && b->fb) {
        for (int k = 0; k < b->fb->nouts && n < max; k++) outs[n++] = b->fb->outs[k];
        return n;
    }
    if (max > 0) outs[n++] = b;
    return n;
}

void cg_emit_concat(const Buffer *b, StrBuf *sb) {
    sb_printf(sb, "    /* %s: ConcatKernel, no code: its %d inputs stored their slices of it (NonOwningLayout) */\n", b->name, b->neargs);
}

void cg_emit_multi_output(const Buffer *b, StrBuf *sb) {
    const Buffer *o = b->mo_of;
    if (o->fb && !o->fb->tuple)   /* one result: generate_output's indices are [] */
        sb_printf(sb, "    /* %s = %s: MultiOutput, filled by %s's call */\n", b->name, o->name, o->name);
    else sb_printf(sb, "    /* %s = %s[%d]: MultiOutput, filled by %s's call */\n", b->name, o->name, b->mo_index, o->name);
}

const char *cg_fallback_node(const Buffer *b, char *buf, size_t n, const IrModule *m) {
    const Node *node = b->ext == EXT_FALLBACK && b->fb ? b->fb->node : b->origin;
    if (!node) return NULL;
    snprintf(buf, n, "%s%s", ir_prefix(m), node->name);
    return buf;
}

/* {(void *)data, dtype, ndim, offset, {sizes}, {strides}}; {0} for a result nobody reads */
static void fb_tensor(StrBuf *sb, const char *data, const Layout *l) {
    if (!data) { sb_put(sb, "{0}"); return; }
    sb_printf(sb, "{(void *)%s, %d, %d, ", data, (int)l->dtype, l->ndim);
    sym_c_sb(l->offset, sb);
    sb_put(sb, ", {");
    for (int d = 0; d < l->ndim; d++) { if (d) sb_put(sb, ", "); sym_c_sb(l->size[d], sb); }
    if (!l->ndim) sb_put(sb, "0");
    sb_put(sb, "}, {");
    for (int d = 0; d < l->ndim; d++) { if (d) sb_put(sb, ", "); sym_c_sb(l->stride[d], sb); }
    if (!l->ndim) sb_put(sb, "0");
    sb_put(sb, "}}");
}

void cg_emit_fallback_descs(StrBuf *sb, const IrModule *m, const Buffer *b, const char *const *arg_data,
                            const char *const *out_data) {
    sb_put(sb, "        const MiFbTensor fa[] = {");
    for (int i = 0; i < b->neargs; i++) {
        if (i) sb_put(sb, ",\n            ");
        fb_tensor(sb, arg_data ? arg_data[i] : b->eargs[i].buf->name, &b->eargs[i].view);
    }
    if (!b->neargs) sb_put(sb, "{0}");
    sb_put(sb, "};\n        MiFbTensor fo[] = {");
    const Buffer *outs[64];
    int nouts = cg_fallback_outs(b, outs, 64);
    for (int k = 0; k < nouts; k++) {
        if (k) sb_put(sb, ",\n            ");
        /* a result whose size the call decides (an unbacked u0): offset -1 asks it to allocate
         * the storage and write back data, sizes and strides */
        if (outs[k] && ir_call_sizes_result(m, outs[k])) sb_printf(sb, "{NULL, %d, %d, -1, {0}, {0}}", (int)outs[k]->layout.dtype, outs[k]->layout.ndim);
        else fb_tensor(sb, !outs[k] ? NULL : out_data ? out_data[k] : outs[k]->name, outs[k] ? &outs[k]->layout : NULL);
    }
    sb_put(sb, "};\n        const char *const fsn[] = {");
    for (int i = 0; i < m->nsyms; i++) sb_printf(sb, "\"%s\", ", m->sym_names[i]);
    sb_put(sb, "NULL};\n        const int64_t fsv[] = {");
    for (int i = 0; i < m->nsyms; i++) sb_printf(sb, "%s, ", m->sym_names[i]);
    sb_put(sb, "0};\n");
}

void cg_emit_fallback_run(StrBuf *sb, const IrModule *m, const Buffer *b) {
    char node[256];
    const Buffer *outs[64];
    int nouts = cg_fallback_outs(b, outs, 64);
    sb_printf(sb, "!fb || !fb->run || fb->run(fb->ctx, \"%s\", %d, fa, %d, fo, %d, fsn, fsv)",
              cg_fallback_node(b, node, sizeof node, m) ? node : "?", b->neargs, nouts, m->nsyms);
}
