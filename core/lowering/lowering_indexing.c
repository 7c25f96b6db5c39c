/* lowering_indexing.c — lowerings that place one tensor's elements into another: cat and
 * stack (chains of masked reads), constant_pad_nd (a masked read), slice_scatter /
 * select_scatter (where(index in range, src, base)), and copy_ into a graph input (a store
 * into the input's buffer: input mutation). */
#include "lowering/lowering_impl.h"

#include "fx_passes/functionalize.h"

#include <string.h>

/* slice_scatter / select_scatter, op by op as lowering.py's inner functions (the ops decide
 * inner_fn_opcount, hence realization: a chain of scatters into zeros stays pending up to 30):
 *   slice_scatter: idx_dim = index_expr(i); a mask of ge(idx_dim, start) when start != 0,
 *     lt(idx_dim, end) when end != the base's extent (map[0]), eq(index_expr((i - start) mod
 *     step), 0) when step != 1, and-ed in that order; masked(mask, src[(i - start) // step],
 *     0) -- here where(mask, src, 0) with the src index clamped to its extent, so the
 *     discarded load stays in bounds -- then where(mask, that, base[i]); a slice of the whole
 *     extent is src itself;
 *   select_scatter: where(eq(index_expr(i, int32), index_expr(index, int32)), src, base). */
static IrVal call_scatter(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = lw_fn_sym(f);
    Expr *i = idx[f->dim];
    IrVal cond = -1;
    Expr *sidx[MI_MAX_DIMS];
    int ns = 0;
    if (f->op == 0) {   /* slice */
        int64_t st = 1, lo;
        sym_is_int(f->step, &st);
        bool has_lo = !(sym_is_int(f->lo, &lo) && lo == 0), has_hi = f->hi != f->map[0];
        /* the src index, clamped so that the (discarded) load stays in bounds */
        Expr *j = sym_floordiv(s, sym_sub(s, i, f->lo), f->step);
        if (has_lo || has_hi || st != 1) j = sym_max(s, sym_int(s, 0), sym_min(s, j, sym_sub(s, f->e, sym_int(s, 1))));
        for (int d = 0; d < f->nin; d++) sidx[ns++] = d == f->dim ? j : idx[d];
        if (!has_lo && !has_hi && st == 1) return f->a[1]->call(f->a[1], h, sidx);
        IrVal idim = h->index_expr(h, i, DT_I64);
        if (has_lo) cond = ops_binary(h, IOP_GE, idim, h->index_expr(h, f->lo, DT_I64), DT_BOOL);
        if (has_hi) {
            IrVal c = ops_binary(h, IOP_LT, idim, h->index_expr(h, f->hi, DT_I64), DT_BOOL);
            cond = cond < 0 ? c : ops_binary(h, IOP_LOGICAL_AND, cond, c, DT_BOOL);
        }
        if (st != 1) {
            IrVal md = h->index_expr(h, sym_modidx(s, sym_sub(s, i, f->lo), sym_int(s, 1), f->step), DT_I64);
            IrVal c = ops_binary(h, IOP_EQ, md, h->constant(h, 0, DT_I64), DT_BOOL);
            cond = cond < 0 ? c : ops_binary(h, IOP_LOGICAL_AND, cond, c, DT_BOOL);
        }
        IrVal sv = f->a[1]->call(f->a[1], h, sidx);
        IrVal masked = ops_where(h, cond, sv, h->constant(h, 0, f->dtype), f->dtype);
        IrVal bv = f->a[0]->call(f->a[0], h, idx);
        return ops_where(h, cond, masked, bv, f->dtype);
    }
    /* select: i == index */
    IrVal a = h->index_expr(h, i, DT_I32);
    IrVal b = h->index_expr(h, f->lo, DT_I32);
    cond = ops_binary(h, IOP_EQ, a, b, DT_BOOL);
    for (int d = 0; d < f->nin; d++)
        if (d != f->dim) sidx[ns++] = idx[d];
    IrVal sv = f->a[1]->call(f->a[1], h, sidx);
    IrVal bv = f->a[0]->call(f->a[0], h, idx);
    return ops_where(h, cond, sv, bv, f->dtype);
}

static IrVal call_cat(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = lw_fn_sym(f);
    Expr *i = idx[f->dim];
    Expr *li[MI_MAX_DIMS], *ri[MI_MAX_DIMS];
    for (int d = 0; d < f->nin; d++) li[d] = ri[d] = idx[d];
    Expr *one = sym_int(s, 1), *zero = sym_int(s, 0);
    li[f->dim] = sym_min(s, i, sym_sub(s, f->lo, one));
    ri[f->dim] = sym_max(s, zero, sym_min(s, sym_sub(s, i, f->lo), sym_sub(s, f->hi, one)));
    IrVal c = ops_binary(h, IOP_LT, h->index_expr(h, i, DT_I64), h->index_expr(h, f->lo, DT_I64), DT_BOOL);
    IrVal lv = f->a[0]->call(f->a[0], h, li);
    IrVal rv = f->a[1]->call(f->a[1], h, ri);
    return ops_where(h, c, lv, rv, f->dtype);
}

/* cat / stack: the output meta, the tensor list (args[0]) and the dim (args[1], default 0,
 * negative counted from the output's rank). */
static int list_and_dim(Lower *L, const Node *n, const char *what, const TensorMeta **m, const Value **lst, int64_t *dim) {
    *m = lw_out_meta(n);
    *lst = n->nargs > 0 ? &n->args[0] : NULL;
    if (!*m || !*lst || ((*lst)->kind != V_LIST && (*lst)->kind != V_TUPLE) || (*lst)->list.n < 1)
        return lw_err(L, n, "%s needs a list of tensors and a shape", what);
    *dim = 0;
    lw_arg_int(n, 1, "dim", dim);
    if (*dim < 0) *dim += (*m)->ndim;
    if (*dim < 0 || *dim >= (*m)->ndim) return lw_err(L, n, "%s: bad dim", what);
    return 0;
}

/* The cat of `left` (the inputs so far, `split` long along dim) and `right` (`len` long):
 * a call_cat closure over nin dims (stack: split k, len 1). */
static const IrFn *cat_join(Lower *L, const IrFn *left, const IrFn *right, int dim, int nin, Expr *split, Expr *len) {
    IrFn *f = lw_fn(L, call_cat, right->dtype);
    f->a[0] = left;
    f->a[1] = right;
    f->na = 2;
    f->dim = dim;
    f->nin = nin;
    f->lo = split;
    f->hi = len;
    f->cost = lw_cost_add(lw_fn_cost(left), lw_cost_add(lw_fn_cost(right), 4));
    return f;
}

/* stack(tensors, dim): cat of the tensors each seen with a size-1 dim inserted at dim. */
static int lower_stack(Lower *L, const Node *n, int arg) {
    const TensorMeta *m;
    const Value *lst;
    int64_t dim;
    if (list_and_dim(L, n, "stack", &m, &lst, &dim) < 0) return -1;
    const IrFn *acc = NULL;
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, "stack");
    for (int k = 0; k < lst->list.n; k++) {
        const Value *v = &lst->list.items[k];
        LVal *lv = v->kind == V_NODE ? lw_node_val(L, v->node) : NULL;
        IrTBox *t = lv && lv->kind == LV_TBOX ? lv->t : NULL;
        if (!t || t->ndim + 1 != m->ndim) return lw_err(L, n, "stack: item %d is not a tensor of rank %d", k, m->ndim - 1);
        lw_origins_merge(L, &o, &no, t);
        Expr *map[MI_MAX_DIMS];
        for (int d = 0, od = 0; od < m->ndim; od++)
            if (od != dim) map[d++] = lw_var(L, od);
        const IrFn *ld = lw_to_dtype(L, lw_reindex(L, t->loader, m->ndim, map, t->ndim), m->dtype);
        if (!acc) { acc = ld; continue; }
        acc = cat_join(L, acc, ld, (int)dim, m->ndim, sym_int(L->s, k), sym_int(L->s, 1));
    }
    return lw_set_pending(L, n, acc, m->dtype, o, no);
}

/* lowering.py inplace_constant_pad_nd (config.inplace_padding, on by default), up to where it
 * gives up: a 2-d x padded by four numbers whose only user is an mm or addmm ("the op can not
 * be fused into the single user") is realized -- a view's storage -- and, a computed buffer of
 * its own, its layout frozen. The in-place pad itself (x's buffer viewed wider and its tail
 * filled) needs rows already laid out wider than they are (stride0 >= rowsize + npad), which
 * our buffers never are (no padded strides): the pad is then lowered as usual, reading x's
 * buffer. Example: pad_mm's pad of reshape(embedding) before the DCN cross layer's mm realizes
 * the embedding; the pad reads it as the next layer's pad reads its add: one kernel source. */
static void inplace_pad_realize(Lower *L, const Node *n, IrTBox *x, int np) {
    int i = graph_index_of(L->g, n);
    if (i < 0 || !L->nusers || L->nusers[i] != 1 || np != 4 || x->ndim != 2) return;
    const char *u = L->users[i][0]->target;
    if (!u || (strcmp(u, "aten.mm.default") && strcmp(u, "aten.addmm.default"))) return;
    IrStorage *sb = x->is_view ? x->view_of : x->sb;
    if (sb && !sb->buf && sb->fn) lw_realize(L, sb, NULL);
    if (!x->is_view && x->sb && x->sb->buf && x->sb->buf->kind == BUF_COMPUTED) x->sb->buf->layout.fixed = true;
}

/* constant_pad_nd(x, pad, value): pad = [left_last, right_last, left_prev, ...]; a read at
 * out - left, masked to x's extent (negative pads crop). */
static int lower_pad(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    IrTBox *x = lw_arg_tbox(L, n, 0);
    int64_t pad[2 * MI_MAX_DIMS];
    int np = x ? lw_int_list(lw_arg_or_kw(n, 1, "pad"), pad, 2 * MI_MAX_DIMS) : -1;
    if (!m || !x || np < 0 || np % 2 || np / 2 > x->ndim || m->ndim != x->ndim) return lw_err(L, n, "constant_pad_nd: bad arguments");
    double value = 0;
    const Value *vv = lw_arg_or_kw(n, 2, "value");
    if (vv && vv->kind != V_NONE && !value_as_double(vv, &value)) return lw_err(L, n, "constant_pad_nd: value must be a number");
    bool any = false;
    for (int k = 0; k < np; k++) any |= pad[k] != 0;
    if (any) inplace_pad_realize(L, n, x, np);   /* all zero: clone(x) */
    SymCtx *s = L->s;
    Expr *map[MI_MAX_DIMS];
    const IrFn *mask = NULL;
    for (int d = 0; d < x->ndim; d++) {
        int k = x->ndim - 1 - d;   /* pad pair k applies to dim ndim-1-k */
        if (2 * k >= np || (pad[2 * k] == 0 && pad[2 * k + 1] == 0)) { map[d] = lw_var(L, d); continue; }
        Expr *in = sym_sub(s, lw_var(L, d), sym_int(s, pad[2 * k]));
        map[d] = sym_max(s, sym_int(s, 0), sym_min(s, in, sym_sub(s, x->size[d], sym_int(s, 1))));
        const IrFn *ie = lw_index_expr(L, in, x->ndim, DT_I64);
        const IrFn *ok = lw_math(L, IOP_LOGICAL_AND, DT_BOOL, lw_math(L, IOP_GE, DT_BOOL, ie, lw_const(L, 0, DT_I64), NULL),
                                 lw_math(L, IOP_LT, DT_BOOL, ie, lw_index_expr(L, x->size[d], x->ndim, DT_I64), NULL), NULL);
        mask = mask ? lw_math(L, IOP_LOGICAL_AND, DT_BOOL, mask, ok, NULL) : ok;
    }
    const IrFn *ld = lw_to_dtype(L, lw_reindex(L, x->loader, x->ndim, map, x->ndim), m->dtype);
    const IrFn *f = mask ? lw_math(L, IOP_WHERE, m->dtype, mask, ld, lw_const(L, value, m->dtype)) : ld;
    return lw_set_pointwise(L, n, f, m->dtype, 1);
}

static int lower_cat(Lower *L, const Node *n, int arg) {
    const TensorMeta *m;
    const Value *lst;
    int64_t dim;
    if (list_and_dim(L, n, "cat", &m, &lst, &dim) < 0) return -1;
    /* the CPU: ir.ConcatKernel (lowering_concat.c), unless one input (cat -> clone) */
    if (L->ctx->target == MI_DEV_CPU && lst->list.n > 1 && !L->scratch && (!n->has_meta || n->meta.device.kind == DEV_CPU))
        return lw_concat_kernel(L, n, m, lst, dim);
    /* a GPU: pointwise_cat or ConcatKernel by lowering.py's rule (lowering_concat.c) */
    if (L->ctx->target == MI_DEV_CUDA && lst->list.n > 1 && !L->scratch && !lw_cat_pointwise_gpu(L, n, lst))
        return lw_concat_kernel(L, n, m, lst, dim);
    const IrFn *acc = NULL;
    Expr *off = sym_int(L->s, 0);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, "cat");
    for (int k = 0; k < lst->list.n; k++) {
        const Value *v = &lst->list.items[k];
        LVal *lv = v->kind == V_NODE ? lw_node_val(L, v->node) : NULL;
        IrTBox *t = lv && lv->kind == LV_TBOX ? lv->t : NULL;
        if (!t) return lw_err(L, n, "cat: item %d is not a tensor", k);
        if (t->ndim != m->ndim) return lw_err(L, n, "cat: legacy empty inputs are not supported");
        lw_origins_merge(L, &o, &no, t);
        const IrFn *ld = lw_to_dtype(L, t->loader, m->dtype);
        if (!acc) { acc = ld; off = t->size[dim]; continue; }
        acc = cat_join(L, acc, ld, (int)dim, m->ndim, off, t->size[dim]);
        off = sym_add(L->s, off, t->size[dim]);
    }
    return lw_set_pending(L, n, acc, m->dtype, o, no);
}

/* ---- scatters and mutation ---- */

static int lower_scatter(Lower *L, const Node *n, int is_slice) {
    IrTBox *base = lw_arg_tbox(L, n, 0), *src = lw_arg_tbox(L, n, 1);
    const TensorMeta *m = lw_out_meta(n);
    if (!base || !src || !m) return lw_err(L, n, "'%s' needs two tensors and a shape", n->target);
    SymCtx *s = L->s;
    int64_t dim = 0;
    lw_arg_int(n, 2, "dim", &dim);
    if (dim < 0) dim += m->ndim;
    IrFn *f = lw_fn(L, call_scatter, m->dtype);
    f->a[0] = lw_to_dtype(L, base->loader, m->dtype);
    f->a[1] = lw_to_dtype(L, src->loader, m->dtype);
    f->na = 2;
    f->cost = lw_cost_add(lw_fn_cost(base->loader), lw_cost_add(lw_fn_cost(src->loader), 6));
    f->dim = (int)dim;
    f->nin = m->ndim;
    if (is_slice) {
        int64_t step = 1, v;
        const Value *sv = lw_arg_or_kw(n, 3, "start"), *ev = lw_arg_or_kw(n, 4, "end");
        Expr *st = sv && sv->kind != V_NONE ? lw_value_expr(L, sv) : sym_int(s, 0);
        Expr *en = ev && ev->kind != V_NONE ? lw_value_expr(L, ev) : m->size[dim];
        if (!st || !en) return lw_err(L, n, "slice_scatter: bad start/end");
        if (sym_is_int(st, &v) && v < 0) st = sym_add(s, m->size[dim], st);
        if (sym_is_int(en, &v) && v < 0) en = sym_add(s, m->size[dim], en);
        int64_t es, sz;
        if (sym_is_int(en, &es) && sym_is_int(m->size[dim], &sz) && es > sz) en = m->size[dim];
        lw_arg_int(n, 5, "step", &step);
        f->op = 0;
        f->step = sym_int(s, step);
        f->hi = en;
        f->e = src->size[dim];
        f->lo = st;
        f->map = lw_alloc(L, sizeof(Expr *));   /* the base's extent along dim */
        f->map[0] = m->size[dim];
        f->nmap = 1;
    } else {
        int64_t idx;
        if (!lw_arg_int(n, 3, "index", &idx)) return lw_err(L, n, "select_scatter: bad index");
        f->op = 1;
        f->lo = idx < 0 ? sym_add(s, m->size[dim], sym_int(s, idx)) : sym_int(s, idx);
    }
    return lw_set_pointwise(L, n, f, m->dtype, 2);
}

/* Write src into the graph input dst (a MutationLayout store, as Inductor's mutate_to): the
 * new value is realized first, since its computation may read the input at other positions
 * (copied out when it is the input itself); the store broadcasts and converts src to the
 * input's shape and dtype. The mutated input is marked so the module writes it back. */
int lw_mutate_input(Lower *L, const Node *n, IrTBox *dst, IrTBox *src) {
    /* a pending value mutated in place (a training batch norm's running mean computed by a
     * repeat) is realized first, as mutate_to realizes its target */
    if (dst && src && dst->sb && !dst->sb->buf && !dst->is_view) lw_realize(L, dst->sb, NULL);
    if (!dst || !src || !dst->sb || !dst->sb->buf) return lw_err(L, n, "%s: bad arguments", lw_short_name(L, n->target));
    Buffer *in = dst->sb->buf;
    Layout v;
    /* realize_into reads src through its loader (src.make_loader()): unlike a ReinterpretView
     * that does not freeze the layout of the buffer src views, which decide_layout still
     * picks from its reads (a transposed select_scatter feeding copy_ gets its input's order) */
    IrStorage *base = src->is_view ? src->view_of : src->sb;
    if (base && !base->buf && base->fn) lw_realize(L, base, NULL);
    bool flexible = base && base->buf && !base->buf->layout.fixed;
    Buffer *sbuf = lw_as_strided(L, src, &v);
    if (flexible && sbuf == base->buf) sbuf->layout.fixed = false;
    const IrFn *f = src->loader;
    if (ir_store_target(sbuf) == in) {   /* src reads the input being overwritten: copy it out first */
        IrStorage *cp = lw_storage_new(L, src->loader, src->dtype, src->ndim, src->size, src->origins, src->norigins);
        lw_realize(L, cp, NULL);
        f = lw_tbox_of_storage(L, cp)->loader;
    }
    Layout lay = in->layout;
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, "copy");
    Buffer *b = lw_new_buffer(L, BUF_COMPUTED, &lay);
    b->mutates = in;
    in->mutated = true;
    b->origins = o;
    b->norigins = no;
    f = lw_broadcast(L, f, src->ndim, src->size, lay.ndim, lay.size);   /* copy_ broadcasts src */
    if (!f) return lw_err(L, n, "%s: source of rank %d does not broadcast to rank %d", lw_short_name(L, n->target), src->ndim, lay.ndim);
    f = lw_to_dtype(L, f, lay.dtype);
    int order[MI_MAX_DIMS];
    lw_loop_order(&lay, order);
    b->body = ir_trace_body(L->m, b, f, lay.ndim, lay.size, order, 0, NULL, RED_SUM, 0);
    return 0;
}

/* Inductor's mutate_to(dst, src, unsafe_alias=True) for an in-place foreach item
 * (register_foreach_inplace): MutationLayoutSHOULDREMOVE.realize_into skips the copy and
 * realizes src itself with the input's layout as its mutation target, so the item is ONE
 * buffer that writes the input (`_foreach_add_([s], 1)`: buf0 = s + 1 stored into s), and
 * later readers of the item read it (the input's storage) after it. Only a pending,
 * unviewed value of the input's dtype and sizes can be aliased (Inductor asserts a
 * FlexibleLayout there); returns false, nothing done, otherwise. */
bool lw_alias_into_input(Lower *L, IrTBox *dst, IrTBox *src) {
    IrStorage *sb = src && !src->is_view ? src->sb : NULL;
    if (!dst || !dst->sb || !dst->sb->buf || dst->sb->buf->kind != BUF_INPUT || !sb || sb->buf || !sb->fn) return false;
    Buffer *in = dst->sb->buf;
    if (sb->dtype != in->layout.dtype || sb->ndim != in->layout.ndim) return false;
    for (int d = 0; d < sb->ndim; d++)
        if (sb->size[d] != in->layout.size[d]) return false;   /* hash-consed */
    /* realize_into: the readers of the input's old value (pending values of earlier nodes)
     * are realized before src is, so they come first in buffer order, which is scheduling
     * order (V.graph.mark_buffer_mutated(dst)); src is this node's own, not among them */
    lw_mark_buffer_mutated(L, in);
    if (sb->buf || !sb->fn) return false;
    Layout lay = in->layout;
    Buffer *b = lw_new_buffer(L, BUF_COMPUTED, &lay);
    b->born = sb->born;   /* src.realize(): its body inlines what the item's function captured */
    if (sb->node) b->producer = sb->node;
    b->origins = sb->origins;
    b->norigins = sb->norigins;
    b->mutates = in;
    b->inplace_alias = true;
    in->mutated = true;
    int order[MI_MAX_DIMS];
    lw_loop_order(&lay, order);
    b->body = ir_trace_body(L->m, b, sb->fn, sb->ndim, sb->size, order, 0, NULL, RED_SUM, 0);
    sb->buf = b;
    sb->fn = NULL;
    return true;
}

static int lower_copy_(Lower *L, const Node *n, int arg) {
    const Value *dv = &n->args[0];
    if (n->nargs < 2 || dv->kind != V_NODE || dv->node->kind != N_PLACEHOLDER)
        return lw_err(L, n, "copy_ is only supported into graph inputs");
    if (!functionalize_copy_is_epilogue(L->g, n))   /* the input would be read after it: functionalize first */
        return lw_err(L, n, "copy_ into '%s' is read after it (run functionalize first)", dv->node->name);
    IrTBox *dst = lw_arg_tbox(L, n, 0), *src = lw_arg_tbox(L, n, 1);
    if (lw_mutate_input(L, n, dst, src)) return -1;
    return lw_set_tbox(L, n, dst);
}

/* ---- the indexing rows of the lowering table ---- */

const LoweringDef lowering_indexing_table[] = {
    {"aten.constant_pad_nd.default", lower_pad, 0}, {"aten.stack.default", lower_stack, 0},
    {"aten.cat.default", lower_cat, 0}, {"aten.copy_.default", lower_copy_, 0},
    {"aten.slice_scatter.default", lower_scatter, 1}, {"aten.select_scatter.default", lower_scatter, 0},
};
const int lowering_indexing_count = sizeof lowering_indexing_table / sizeof lowering_indexing_table[0];
