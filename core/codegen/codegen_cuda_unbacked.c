/* codegen_cuda_unbacked.c — unbacked SymInts in the CUDA backend's launch function (see
 * codegen_cuda_unbacked.h), the GPU side of what codegen_unbacked.c does for C and Inductor's
 * wrapper does (codegen_unbacked_symbol_defs, DynamicScalar's codegen):
 *   - `u1 = buf.item()`: one element copied to the host once the kernel writing buf has run
 *     (the stream synchronized), then u1 is a host local and in mi_sy, which later launches
 *     pass to their kernels;
 *   - a FallbackKernel result whose size its call decides (masked_select, nonzero): the call runs
 *     on the host (codegen_cuda_on_host), hands back host storage and sizes; the storage is
 *     copied into a device buffer allocated then, and `u0 = fo[k].size[0]`;
 *   - a buffer whose size such a symbol gives is allocated at its first writer (cudaMallocAsync,
 *     not from the workspace sized on entry) and freed when the launch function returns.
 * Outputs sized by an unbacked symbol are refused: the host staging (mi_sizes) allocates every
 * output before the first launch. */
#include "codegen/codegen_cuda_unbacked.h"
#include "codegen/codegen_fallback.h"
#include "codegen/codegen_unbacked.h"
#include "codegen/op_overrides.h"

#include <stdio.h>
#include <string.h>

int cu_unbacked_check(MiCtx *ctx, const Schedule *s) {
    const IrModule *m = s->ir;
    if (!m->nunbacked) return 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->output_index >= 0 && b->kind != BUF_INPUT && ir_layout_unbacked(m, &b->layout, false))
            return mi_err(ctx, NULL, 0, 0, "the CUDA backend does not return outputs sized by an unbacked SymInt yet: output '%s' "
                          "(its staging allocates every output before the first launch); the C backend runs this graph", b->name);
    }
    if (s->nbranches || cg_has_while(s))
        return mi_err(ctx, NULL, 0, 0, "the CUDA backend does not define unbacked SymInts in a graph with cond / while_loop yet; "
                      "the C backend runs this graph");
    return 0;
}

bool cu_unbacked_late(const IrModule *m, const Buffer *b) {
    return m->nunbacked && b->kind != BUF_INPUT && b->output_index < 0 && !b->layout.multi && !b->mutates && !b->alias_of &&
           ir_layout_unbacked(m, &b->layout, true);
}

int *cu_unbacked_slots(const IrModule *m, int *n) {
    int *slot = mi_xmalloc(sizeof(int) * (size_t)(m->nbufs + 1));
    *n = 0;
    for (int i = 0; i < m->nbufs; i++) slot[i] = cu_unbacked_late(m, m->bufs[i]) ? (*n)++ : -1;
    return slot;
}

void cu_unbacked_alloc(const IrModule *m, const Buffer *b, int slot, const char *ctype, StrBuf *out) {
    sb_printf(out, "    MI_CK(cudaMallocAsync((void **)&%s, sizeof(%s) * (size_t)(", b->name, ctype);
    sym_c_sb(layout_storage_size(m->ctx->sym, &b->layout), out);
    sb_printf(out, ") + 16, mi_st));   /* sized by an unbacked symbol, known now */\n    mi_ub[%d] = %s;\n", slot, b->name);
}

void cu_unbacked_item_defs(const IrModule *m, const Buffer *b, const char *ctype, StrBuf *out) {
    for (int i = 0; i < m->nunbacked; i++) {
        const IrUnbacked *u = &m->unbacked[i];
        if (u->buf != b || u->dim >= 0) continue;
        sb_printf(out, "    {   /* %s = %s.item(): one element to the host */\n        %s mi_it;\n"
                       "        MI_CK(cudaMemcpyAsync(&mi_it, %s + (", u->name, b->name, ctype, b->name);
        sym_c_sb(u->offset ? u->offset : b->layout.offset, out);
        sb_printf(out, "), sizeof mi_it, cudaMemcpyDeviceToHost, mi_st));\n        MI_CK(cudaStreamSynchronize(mi_st));\n"
                       "        %s = (int64_t)mi_it; mi_sy.v[%d] = %s;\n    }\n", u->name, cg_sym_index(m, u->name), u->name);
    }
}

void cu_unbacked_fresh_result(const IrModule *m, const Buffer *o, int k, int slot, const char *ctype, StrBuf *out) {
    sb_printf(out, "        if (!mi_fr) {   /* %s: its size came back from the call (host storage, contiguous) */\n"
                   "            int64_t mi_hi = fo[%d].offset; bool mi_empty = false;\n"
                   "            for (int mi_d = 0; mi_d < fo[%d].ndim; mi_d++) {\n"
                   "                if (fo[%d].size[mi_d] == 0) mi_empty = true;\n"
                   "                else mi_hi += (fo[%d].size[mi_d] - 1) * fo[%d].stride[mi_d];\n            }\n"
                   "            const size_t mi_fb = mi_empty ? 0 : (size_t)(mi_hi + 1) * sizeof(%s);\n"
                   "            if (cudaMallocAsync((void **)&%s, mi_fb + 16, mi_st) != cudaSuccess) mi_fr = 1;\n"
                   "            else {\n                mi_ub[%d] = %s;\n"
                   "                if (mi_fb && (cudaMemcpyAsync(%s, fo[%d].data, mi_fb, cudaMemcpyHostToDevice, mi_st) != cudaSuccess ||\n"
                   "                              cudaStreamSynchronize(mi_st) != cudaSuccess)) mi_fr = 2;\n"
                   "            }\n",
              o->name, k, k, k, k, k, ctype, o->name, slot, o->name, o->name, k);
    for (int i = 0; i < m->nunbacked; i++)
        if (m->unbacked[i].buf == o && m->unbacked[i].dim >= 0)
            sb_printf(out, "            %s = fo[%d].size[%d]; mi_sy.v[%d] = %s;\n", m->unbacked[i].name, k, m->unbacked[i].dim,
                      cg_sym_index(m, m->unbacked[i].name), m->unbacked[i].name);
    sb_printf(out, "        }\n        free(fo[%d].data);\n", k);
}

void cu_unbacked_free(int n, StrBuf *out) {
    if (n) sb_printf(out, "    for (int mi_i = 0; mi_i < %d; mi_i++) if (mi_ub[mi_i]) MI_CK(cudaFreeAsync(mi_ub[mi_i], mi_st));\n", n);
}
