/* lowering_concat.c — aten.cat as a ConcatKernel. On the CPU Inductor always makes one: ir.ConcatKernel
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
 * Called from lower_cat (lowering_indexing.c) when the target is the CPU, and on a GPU when
 * lw_cat_pointwise_gpu (below: lowering.py's choice between pointwise_cat and ConcatKernel)
 * says ConcatKernel; there the slices' writers are ordinary kernels that store into the cat's
 * storage (codegen_cuda_kernel.c store_name) and the Nop runs nothing. */
#include "lowering/lowering_impl.h"
#include "fx_passes/pattern.h"

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

/* ---- the GPU's choice (lowering.py cat after its cpu_device branch) ---- */

/* The storage a box computes or looks at (unwrap_tensor: a view's base). */
static IrStorage *base_of(IrTBox *t) { return t->is_view ? t->view_of : t->sb; }

/* should_lower_cat_input: a realized storage (is_storage_and_layout) only when it cannot be
 * realized into the cat without a copy -- ConcatKernel.can_realize_into_without_copy: a
 * ComputedBuffer whose layout is still flexible can, a graph input or an extern kernel's result
 * (FixedLayout) cannot; an unrealized Pointwise always; anything else (unknown) not. */
static bool should_lower_input(IrTBox *t) {
    IrStorage *st = base_of(t);
    if (!st) return false;
    if (st->buf) return !(st->buf->kind == BUF_COMPUTED && !st->buf->layout.fixed);
    return st->fn != NULL;
}

/* can_fuse_reduction: a realized reduction, or an unrealized Pointwise that loads one. */
static bool fuses_reduction(Lower *L, IrTBox *t) {
    IrStorage *st = base_of(t);
    if (!st) return false;
    if (st->buf) return st->buf->is_reduction;
    bool red = false;
    if (st->fn) lw_pending_opcount(L, st, &red);
    return red;
}

/* additional_pointwise_ops: a cat or a constant_pad_nd use counts as pointwise here */
static bool cat_or_pad(const Node *u) {
    return u->target && (!strcmp(u->target, "aten.cat.default") || !strcmp(u->target, "aten.constant_pad_nd.default"));
}

/* MAX_COMPLEX_POINTWISE_CAT, MAX_SIMPLE_OP_COUNT, config.max_pointwise_cat_inputs */
enum { MAX_COMPLEX_POINTWISE_CAT = 8, MAX_SIMPLE_OP_COUNT = 2, MAX_POINTWISE_CAT_INPUTS = 8 };

/* pointwise_cat when few inputs (or many simple ones) and either the cat only feeds pointwise
 * uses and some input would otherwise be materialized (fuse_pointwise_use), or every input
 * needs a copy anyway and none brings a reduction in (horizontal_fuse_cat). (Later Inductor
 * also refuses pointwise_cat when an input has other consumers; the PyTorch 2.11 of the
 * recorded logs does not: giou's torch.ones is recomputed in four cats.) Example: mish/hardswish backward's cat of three gradients, the
 * first already realized (flexible) and the cat read by mm and sum: a ConcatKernel, the three
 * gradients written into its slices by one kernel. */
bool lw_cat_pointwise_gpu(Lower *L, const Node *n, const Value *lst) {
    int nin = lst->list.n;
    IrTBox **in = lw_alloc(L, sizeof(IrTBox *) * (nin + 1));
    for (int k = 0; k < nin; k++) {
        const Value *v = &lst->list.items[k];
        LVal *lv = v->kind == V_NODE ? lw_node_val(L, v->node) : NULL;
        in[k] = lv && lv->kind == LV_TBOX ? lv->t : NULL;
        if (!in[k]) return true;   /* the caller reports it */
    }
    bool few = nin <= MAX_COMPLEX_POINTWISE_CAT;
    if (!few && nin <= MAX_POINTWISE_CAT_INPUTS) {
        few = true;
        for (int k = 0; k < nin && few; k++) {
            IrStorage *st = base_of(in[k]);
            few = !(st && !st->buf && st->fn) || lw_pending_opcount(L, st, NULL) <= MAX_SIMPLE_OP_COUNT;
        }
    }
    if (!few) return false;
    int i = graph_index_of(L->g, n);
    bool pointwise_uses = i >= 0;
    for (int u = 0; i >= 0 && u < L->nusers[i] && pointwise_uses; u++)
        pointwise_uses = pattern_is_pointwise_use_or(L->users[i][u], cat_or_pad, 0);
    bool any_lower = false, all_lower = true, fusable_reduction = false;
    for (int k = 0; k < nin; k++) {
        bool lo = should_lower_input(in[k]);
        any_lower |= lo;
        all_lower &= lo;
        fusable_reduction |= fuses_reduction(L, in[k]);
    }
    bool fuse_pointwise_use = any_lower && pointwise_uses, horizontal = all_lower && !fusable_reduction;
    return fuse_pointwise_use || horizontal;
}
