/* lowering_concat.c — aten.cat on the CPU as Inductor lowers it there: always ir.ConcatKernel
 * (lowering.py cat: "We observed negative performance impact of pointwise_cat optimization on
 * CPU so disabled it": `if cpu_device: return ConcatKernel.create(inputs, dim)`), and all-int8 /
 * uint8 inputs as a FallbackKernel of aten.cat.
 *
 * ConcatKernel.create makes the cat's buffer (FixedLayout: contiguous strides of the cat's size,
 * or channels last when an input is) and realizes each input into its slice (realize_into): a
 * pending value becomes a ComputedBuffer whose NonOwningLayout is the slice (the cat's strides,
 * offset = start * stride[dim]) and which stores straight into the cat's storage; anything else
 * (a view, a graph input, an extern result, a realized buffer) is copied by a new Pointwise
 * realized the same way. The ConcatKernel itself is a NopKernelSchedulerNode: it reads its
 * inputs (StarDeps), writes its own buffer, and runs no code. Its buffer is registered after its
 * inputs' (llama's rotary cat: op4, op5 write the two halves, op6 is the ConcatKernel).
 * Called from lower_cat (lowering_indexing.c) when the target is the CPU. */
#include "lowering/lowering_impl.h"

#include <string.h>

/* Layout.is_channels_last_contiguous of a 4-d layout: the strides are channels last's
 * ([H*W*C, 1, W*C, C]) wherever the size is not 1. */
static bool channels_last_contiguous(SymCtx *s, int ndim, Expr *const *size, Expr *const *stride) {
    if (ndim != 4) return false;
    Expr *want[4];
    ir_strides_for_order(s, size, 4, (int[]){3, 0, 2, 1}, want);
    for (int d = 0; d < 4; d++) {
        int64_t one;
        if (!(sym_is_int(size[d], &one) && one == 1) && want[d] != stride[d]) return false;
    }
    return true;
}

/* The cat's strides: contiguous, or channels last when an input's realized FixedLayout is
 * channels-last contiguous, or (no input is a realized storage) when an FX argument's fake
 * tensor is (ConcatKernel.create). */
static void cat_strides(Lower *L, IrTBox **in, const Value *lst, int nin, int ndim, Expr **size, Expr **stride) {
    Layout c = layout_contiguous(L->m, DT_F32, L->dev, ndim, size);
    for (int d = 0; d < ndim; d++) stride[d] = c.stride[d];
    bool any_storage = false, cl = false;
    for (int i = 0; i < nin && !cl; i++) {
        IrStorage *sb = in[i]->is_view ? NULL : in[i]->sb;
        if (!sb || !sb->buf) continue;
        any_storage = true;
        const Layout *l = &sb->buf->layout;
        cl = (sb->buf->kind != BUF_COMPUTED || l->fixed) && channels_last_contiguous(L->s, l->ndim, l->size, l->stride);
    }
    for (int i = 0; i < nin && !cl && !any_storage; i++) {
        const Node *a = lst->list.items[i].kind == V_NODE ? lst->list.items[i].node : NULL;
        cl = a && a->has_meta && channels_last_contiguous(L->s, a->meta.ndim, a->meta.size, a->meta.stride);
    }
    if (cl) ir_strides_for_order(L->s, size, ndim, (int[]){3, 0, 2, 1}, stride);
}

/* ConcatKernel.realize_into(t, slice): t's pending storage (of the cat's dtype) realized into
 * the slice, else a copy of t realized into it. */
static Buffer *realize_into(Lower *L, IrTBox *t, DType dt, const Layout *slice) {
    IrStorage *sb = !t->is_view && t->sb && !t->sb->buf && t->sb->fn && t->dtype == dt ? t->sb : NULL;
    if (!sb) {   /* introduce a copy (Pointwise.create over src.make_loader()) */
        const char **o = NULL;
        int no = 0;
        lw_origins_merge(L, &o, &no, t);
        sb = lw_storage_new(L, lw_to_dtype(L, t->loader, dt), dt, t->ndim, t->size, o, no);
    }
    return lw_realize(L, sb, slice);
}

int lw_concat_kernel(Lower *L, const Node *n, const TensorMeta *m, const Value *lst, int64_t dim) {
    int nin = lst->list.n;
    IrTBox **in = lw_alloc(L, sizeof(IrTBox *) * (nin + 1));
    bool small_int = true;   /* all int8 / uint8: aten.cat's FallbackKernel */
    for (int k = 0; k < nin; k++) {
        const Value *v = &lst->list.items[k];
        LVal *lv = v->kind == V_NODE ? lw_node_val(L, v->node) : NULL;
        in[k] = lv && lv->kind == LV_TBOX ? lv->t : NULL;
        if (!in[k]) return lw_err(L, n, "cat: item %d is not a tensor", k);
        if (in[k]->ndim != m->ndim) return lw_err(L, n, "cat: legacy empty inputs are not supported");
        small_int &= in[k]->dtype == DT_I8 || in[k]->dtype == DT_U8;
    }
    if (small_int) return lw_fallback(L, n);
    SymCtx *s = L->s;
    Expr *size[MI_MAX_DIMS], *stride[MI_MAX_DIMS], *start[64 + 1];
    for (int d = 0; d < m->ndim; d++) size[d] = in[0]->size[d];
    size[dim] = sym_int(s, 0);
    for (int k = 0; k < nin; k++) {
        start[k < 64 ? k : 64] = size[dim];
        size[dim] = sym_add(s, size[dim], in[k]->size[dim]);
    }
    if (nin > 64) return lw_err(L, n, "cat: more than 64 inputs on the CPU's ConcatKernel");
    cat_strides(L, in, lst, nin, m->ndim, size, stride);
    Device dev = n->has_meta ? n->meta.device : L->dev;
    Layout cl = layout_contiguous(L->m, m->dtype, dev, m->ndim, size);
    for (int d = 0; d < m->ndim; d++) cl.stride[d] = stride[d];
    cl.fixed = true;
    ExternArg *ea = lw_alloc(L, sizeof(ExternArg) * nin);
    for (int k = 0; k < nin; k++) {   /* SliceView(kernel, dim, start, end) as a NonOwningLayout */
        Layout sl = cl;
        sl.size = lw_alloc(L, sizeof(Expr *) * m->ndim);
        memcpy(sl.size, cl.size, sizeof(Expr *) * m->ndim);
        sl.size[dim] = in[k]->size[dim];
        sl.offset = sym_mul(s, start[k], stride[dim]);
        sl.non_owning = true;
        Buffer *b = realize_into(L, in[k], m->dtype, &sl);
        ea[k] = (ExternArg){b, b->layout};
    }
    Buffer *cat = lw_new_buffer(L, BUF_EXTERN, &cl);
    cat->ext = EXT_CONCAT;
    cat->eargs = ea;
    cat->neargs = nin;
    lw_origins_of_node(L, cat, n);
    for (int k = 0; k < nin; k++) ea[k].buf->alias_of = cat;
    return lw_set_tbox(L, n, lw_tbox_of_buffer(L, cat));
}
