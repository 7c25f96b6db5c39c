/* lowering_unbacked.c — unbacked SymInts (u0, u1: sizes and values only known at run time) and
 * the buffers that define them, as Inductor's lowering records them (unbacked_bindings):
 *   - aten._local_scalar_dense(t) (`.item()`): Inductor's DynamicScalar; here the value of t's
 *     one element, read after the kernel that writes t (or on entry when t is an input);
 *   - a FallbackKernel whose result has a fresh symbol as a size (nonzero, masked_select): the
 *     size the call returned (codegen_unbacked_symbol_defs: `u0 = buf1.size(0)`).
 * Each is an IrUnbacked of the module and a name of its syms (kernels read it from there); the
 * scheduler orders its users after the definer (ir_deps.c) and the generated code sets it
 * (codegen_c.c). */
#include "lowering/lowering_impl.h"

#include <ctype.h>
#include <string.h>

/* Inductor's unbacked integer symbols are named u0, u1, ... (SymT.UNBACKED_INT) */
static bool unbacked_name(const char *s) {
    if (!s || s[0] != 'u' || !s[1]) return false;
    for (const char *c = s + 1; *c; c++) if (!isdigit((unsigned char)*c)) return false;
    return true;
}

static bool known_sym(const IrModule *m, const char *name) {
    for (int i = 0; i < m->nsyms; i++)
        if (!strcmp(m->sym_names[i], name)) return true;
    return false;
}

/* Record `name` as defined by b (dim, or -1 with the element's offset). */
static void add_unbacked(Lower *L, const char *name, Buffer *b, int dim, Expr *offset) {
    IrModule *m = L->m;
    IrUnbacked *u = arena_alloc(&m->arena, sizeof *u * (size_t)(m->nunbacked + 1));
    if (m->nunbacked) memcpy(u, m->unbacked, sizeof *u * (size_t)m->nunbacked);
    u[m->nunbacked] = (IrUnbacked){arena_strdup(&m->arena, name), b, dim, offset, m->nbufs};
    m->unbacked = u;
    m->nunbacked++;
    m->sym_names = mi_xrealloc(m->sym_names, sizeof(char *) * (size_t)(m->nsyms + 1));
    m->sym_names[m->nsyms++] = u[m->nunbacked - 1].name;
}

/* _local_scalar_dense(t) whose annotation is a fresh unbacked symbol (Sym(u1)): t as a buffer
 * (a strided view of an input or a realized buffer), the symbol defined by its one element.
 * Returns 1 when recorded, 0 when n is no such node, -1 on error. Example:
 * `_local_scalar_dense_1: "Sym(u1)" = torch.ops.aten._local_scalar_dense.default(arg1_1)`. */
int lw_unbacked_item(Lower *L, const Node *n) {
    if (!n->target || strcmp(n->target, "aten._local_scalar_dense.default") || !n->sym_val || n->sym_val->kind != EX_SYM ||
        !unbacked_name(n->sym_val->name) || known_sym(L->m, n->sym_val->name))
        return 0;
    IrTBox *t = lw_arg_tbox(L, n, 0);
    if (!t) return lw_err(L, n, "'%s' needs a tensor", n->target);
    if (t->ndim != 0) {
        int64_t one = 1;
        for (int d = 0; d < t->ndim; d++) if (!sym_is_int(t->size[d], &one) || one != 1) return lw_err(L, n, "item(): a tensor of one element");
    }
    Layout view;
    Buffer *b = lw_as_strided(L, t, &view);
    if (!b) return lw_err(L, n, "item(): its tensor has no buffer");
    add_unbacked(L, n->sym_val->name, b, -1, view.offset);
    return 1;
}

/* After n lowered as an extern kernel (a FallbackKernel): each size of its result that is a
 * fresh unbacked symbol is defined by the call. Example: `masked_select: "f32[u0]"` defines u0
 * as buf1's size 0. */
void lw_unbacked_sizes(Lower *L, const Node *n, int pos) {
    if (!n->has_meta || L->vals[pos].kind != LV_TBOX || !L->vals[pos].t) return;
    IrTBox *t = L->vals[pos].t;
    Buffer *b = t->sb ? t->sb->buf : NULL;
    if (!b || b->kind != BUF_EXTERN) return;
    for (int d = 0; d < n->meta.ndim; d++) {
        const Expr *e = n->meta.size[d];
        if (e && e->kind == EX_SYM && unbacked_name(e->name) && !known_sym(L->m, e->name)) add_unbacked(L, e->name, b, d, NULL);
    }
}
