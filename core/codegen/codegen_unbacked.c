/* codegen_unbacked.c — what generated code does for unbacked SymInts (IrModule.unbacked, made
 * by core/lowering/lowering_unbacked.c), as Inductor's wrapper does
 * (codegen_unbacked_symbol_defs, DynamicScalar's codegen):
 *   - `u1 = (int64_t)(arg1_1[0]);` once the buffer holding the item() is written (on entry for
 *     a graph input), `u0 = fo[0].size[0];` after a FallbackKernel with a data-dependent result
 *     size, each also stored into the call's own copy of syms, which the kernels read;
 *   - the storage of a buffer whose size such a symbol gives is malloc'd at its first writer
 *     (not from the arena taken on entry), kept in mi_ub[] and freed when the call returns;
 *     a data-dependent FallbackKernel result comes back allocated by the call (fo[k].data). */
#include "codegen/codegen_unbacked.h"
#include "codegen/codegen_fallback.h"
#include "codegen/codegen_kernel.h"

#include <stdlib.h>
#include <string.h>

const char cg_unbacked_src[] =
    "/* storage of buffers sized by unbacked symbols: allocated once the size is known */\n"
    "static void *mi_ub_alloc(void **slot, size_t n) { free(*slot); *slot = malloc(n ? n : 1); return *slot; }\n"
    "static void mi_ub_free(void **ub, int n) { for (int i = 0; i < n; i++) { free(ub[i]); ub[i] = NULL; } }\n\n";

int *cg_unbacked_slots(const Schedule *s, const CgMemPlan *mem, int *n) {
    const IrModule *m = s->ir;
    int *ub = malloc(sizeof(int) * (size_t)(m->nbufs + 1));
    *n = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        bool late = b->kind != BUF_INPUT && b->output_index < 0 && mem->slot[i] < 0 && !b->layout.multi && !b->mutates &&
                    !b->alias_of && ir_layout_unbacked(m, &b->layout, true);
        ub[i] = late ? (*n)++ : -1;
    }
    return ub;
}

int cg_sym_index(const IrModule *m, const char *name) {
    for (int i = 0; i < m->nsyms; i++)
        if (!strcmp(m->sym_names[i], name)) return i;
    return -1;
}

void cg_unbacked_item_defs(const IrModule *m, const Buffer *b, StrBuf *out) {
    for (int i = 0; i < m->nunbacked; i++) {
        const IrUnbacked *u = &m->unbacked[i];
        if (u->buf != b || u->dim >= 0) continue;
        sb_printf(out, "    %s = (int64_t)(%s[", u->name, b->name);
        sym_c_sb(u->offset ? u->offset : b->layout.offset, out);
        sb_printf(out, "]); syms[%d] = %s;   /* %s = %s.item() */\n", cg_sym_index(m, u->name), u->name, u->name, b->name);
    }
}

void cg_unbacked_fresh_results(const IrModule *m, const Buffer *b, const int *ub_of, StrBuf *out) {
    const Buffer *outs[64];
    int nouts = cg_fallback_outs(b, outs, 64);
    for (int k = 0; k < nouts; k++) {
        const Buffer *o = outs[k];
        if (!o || ub_of[o->id] < 0 || !ir_call_sizes_result(m, o)) continue;
        sb_printf(out, "        %s = (%s *)fo[%d].data; mi_ub[%d] = fo[%d].data;\n", o->name, cg_ctype(o->layout.dtype), k, ub_of[o->id], k);
        for (int i = 0; i < m->nunbacked; i++)
            if (m->unbacked[i].buf == o && m->unbacked[i].dim >= 0)
                sb_printf(out, "        %s = fo[%d].size[%d]; syms[%d] = %s;\n", m->unbacked[i].name, k, m->unbacked[i].dim,
                          cg_sym_index(m, m->unbacked[i].name), m->unbacked[i].name);
    }
}
