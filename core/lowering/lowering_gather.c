/* lowering_gather.c — lowerings that read or write at indexes loaded from tensors (Inductor's
 * lowering.py index / _unsafe_index / embedding / gather / index_put / scatter family), written
 * with ops.indirect_indexing: a loaded integer becomes an index symbol of the loop body
 * (core/ir/ops_handler.h), so `weight[ids[i], j]` is one Pointwise:
 *
 *     load = ops.load('ids', p0); set_indirect0 = self.set_indirect0(load)
 *     load_1 = ops.load('weight', 64*indirect0 + p1)
 *
 * Writes at loaded indexes are Inductor's ir.Scatter: the base is cloned into a fresh buffer,
 * then a second ComputedBuffer mutates that clone (its store index holds the indirect symbols;
 * mode "atomic_add" when accumulating). The op falls back to its reference implementation
 * (a FallbackKernel) exactly where Inductor falls back: boolean indexes, index_put
 * accumulating int64/bool/bf16 (needs_fallback_due_to_atomic_add_limitations), and the scatter
 * reductions use_scatter_fallback sends to ATen (utils.py; on the CPU scatter_add/sum with more
 * than one thread, config.cpp.fallback_scatter_reduce_sum). Nearest upsampling reads through
 * indirect indexes too (upsample_nearestnd). */
#include "lowering/lowering_impl.h"
#include "fx_passes/functionalize.h"

#include <string.h>

/* ---- the index map (Inductor's index_output_size_and_inner_fn) ---- */

/* Out index idx (f->nin dims) -> the index of the indexed tensor: dims without an index
 * tensor take the next output dims in order; dim k with index tensor ia[k] takes
 * indirect_indexing(ia[k](idx[start .. start + rank)), isize[k]). The broadcast index tensors'
 * dims sit at output dims start .. start+rank (start 0 when the indexed dims are not
 * consecutive: PyTorch moves them to the front). Example: x[:, ids] with x [4, 10], ids [3]:
 * out [4, 3], out (i, j) -> x (i, indirect(ids[j])). */
static void index_map(const IrFn *f, OpsHandler *h, Expr *const *idx, Expr **out) {
    int last = -1;
    for (int k = 0; k < f->nia; k++)
        if (f->ia[k]) last = k;
    int n = 0, next = 0;
    for (int i = 0; i <= last; i++) {
        if (i == f->start) next += f->rank;
        if (!f->ia[i]) { out[n++] = idx[next++]; continue; }
        IrVal v = f->ia[i]->call(f->ia[i], h, idx + f->start);
        out[n++] = ops_indirect_indexing(h, v, f->isize[i], f->check, f->wrap_neg);
    }
    while (next < f->nin) out[n++] = idx[next++];
}

/* x loaded at the mapped index (Inductor's index_impl inner_fn) */
static IrVal call_index(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    Expr *in[MI_MAX_DIMS + 1];
    index_map(f, h, idx, in);
    return f->a[0]->call(f->a[0], h, in);
}

/* The index list of index / index_put (args[1]): per dim the TensorBox or NULL (None), into
 * t[]; the count, -1 with ctx error. *has_bool: some index is bool/uint8 (a mask). */
static int index_list(Lower *L, const Node *n, int pos, IrTBox **t, bool *has_bool) {
    const Value *lst = lw_arg_or_kw(n, pos, "indices");
    if (!lst || (lst->kind != V_LIST && lst->kind != V_TUPLE)) return lw_err(L, n, "'%s' needs a list of indices", n->target);
    if (lst->list.n > MI_MAX_DIMS) return lw_err(L, n, "'%s': %d indices is too many", n->target, lst->list.n);
    *has_bool = false;
    int ntensor = 0;
    for (int k = 0; k < lst->list.n; k++) {
        const Value *v = &lst->list.items[k];
        t[k] = NULL;
        if (v->kind == V_NONE) continue;
        LVal *lv = v->kind == V_NODE ? lw_node_val(L, v->node) : NULL;
        if (!lv || lv->kind != LV_TBOX) return lw_err(L, n, "'%s': index %d is not a tensor", n->target, k);
        t[k] = lv->t;
        ntensor++;
        DType dt = t[k]->dtype;
        if (dt == DT_BOOL || dt == DT_U8) *has_bool = true;
        else if (dt != DT_I64 && dt != DT_I32) return lw_err(L, n, "'%s': indices must be int64, int32, byte or bool, not %s", n->target, dtype_abbrev(dt));
    }
    if (!ntensor) return lw_err(L, n, "'%s' requires at least one non-None index", n->target);
    return lst->list.n;
}

/* Broadcast shape of the index tensors (torch.broadcast_tensors) into size; its rank. */
static int index_broadcast(Lower *L, IrTBox *const *t, int nt, Expr **size) {
    int rank = 0;
    for (int k = 0; k < nt; k++)
        if (t[k] && t[k]->ndim > rank) rank = t[k]->ndim;
    for (int d = 0; d < rank; d++) size[d] = sym_int(L->s, 1);
    for (int k = 0; k < nt; k++) {
        if (!t[k]) continue;
        for (int d = 0; d < t[k]->ndim; d++) {
            int od = d + rank - t[k]->ndim;
            int64_t one;
            if (!(sym_is_int(t[k]->size[d], &one) && one == 1)) size[od] = t[k]->size[d];
        }
    }
    return rank;
}

/* The index closure over x of shape (xnd, xsize) with index tensors t[0..nt): fills the output
 * size and returns the closure (x loaded at the mapped index; f->a[0] = x's loader, NULL: an
 * indexer for a Scatter). -1 with ctx error. */
static IrFn *index_fn(Lower *L, const Node *n, const IrFn *x, int xnd, Expr **xsize, IrTBox *const *t, int nt,
                      bool check, bool wrap_neg, int *ondim, Expr **osize) {
    Expr *tsize[MI_MAX_DIMS];
    int rank = index_broadcast(L, t, nt, tsize);
    int first = -1, prev = -1;
    bool nonconsec = false;
    for (int k = 0; k < nt; k++) {
        if (!t[k]) continue;
        if (first < 0) first = k;
        if (prev >= 0 && k - prev != 1) nonconsec = true;
        prev = k;
    }
    if (nt > xnd) { lw_err(L, n, "'%s': too many indices (%d) for a tensor of rank %d", n->target, nt, xnd); return NULL; }
    if (xnd - nt + rank > MI_MAX_DIMS) { lw_err(L, n, "'%s': result rank above %d", n->target, MI_MAX_DIMS); return NULL; }
    if (check)   /* Inductor's index_impl_helper: an index into a dim of size 0 can never hold */
        for (int k = 0; k < nt; k++) {
            int64_t z, tz;
            bool tnz = true;
            for (int d = 0; d < rank; d++) tnz &= !(sym_is_int(tsize[d], &tz) && tz == 0);
            if (t[k] && sym_is_int(xsize[k], &z) && z == 0 && tnz) {
                lw_err(L, n, "index is out of bounds for dimension with size 0");
                return NULL;
            }
        }
    /* output size: the None dims, then x's dims past the index list, with the index shape
     * inserted at the first indexed dim (or in front when the indexed dims are apart) */
    Expr *rest[MI_MAX_DIMS];
    int nr = 0;
    for (int k = 0; k < nt; k++)
        if (!t[k]) rest[nr++] = xsize[k];
    for (int k = nt; k < xnd; k++) rest[nr++] = xsize[k];
    int start = nonconsec ? 0 : first, on = 0;
    for (int k = 0; k < start; k++) osize[on++] = rest[k];
    for (int d = 0; d < rank; d++) osize[on++] = tsize[d];
    for (int k = start; k < nr; k++) osize[on++] = rest[k];
    *ondim = on;
    IrFn *f = lw_fn(L, call_index, x ? x->dtype : DT_I64);
    f->a[0] = x;
    f->na = x ? 1 : 0;
    f->cost = x ? lw_fn_cost(x) : 0;
    f->ia = lw_alloc(L, sizeof(IrFn *) * (nt + 1));
    f->isize = lw_alloc(L, sizeof(Expr *) * (nt + 1));
    f->nia = nt;
    for (int k = 0; k < nt; k++) {
        f->isize[k] = xsize[k];
        if (!t[k]) continue;
        f->ia[k] = lw_broadcast(L, t[k]->loader, t[k]->ndim, t[k]->size, rank, tsize);
        if (!f->ia[k]) { lw_err(L, n, "'%s': index %d does not broadcast", n->target, k); return NULL; }
        f->cost = lw_cost_add(f->cost, lw_cost_add(lw_fn_cost(f->ia[k]), 2));
    }
    f->rank = rank;
    f->start = start;
    f->nin = on;
    f->check = check;
    f->wrap_neg = wrap_neg;
    f->index_call = index_map;
    return f;
}

/* x (rank 0 seen as [1], as Inductor views it) */
static void shape_of(Lower *L, IrTBox *x, int *nd, Expr **size) {
    *nd = x->ndim ? x->ndim : 1;
    for (int d = 0; d < x->ndim; d++) size[d] = x->size[d];
    if (!x->ndim) size[0] = sym_int(L->s, 1);
}
static const IrFn *loader_of(Lower *L, IrTBox *x) {
    if (x->ndim) return x->loader;
    Expr *none[1];
    return lw_reindex(L, x->loader, 1, none, 0);   /* [1] -> [] */
}

/* index.Tensor (check) / _unsafe_index.Tensor (no check): a Pointwise gather; boolean
 * indexes fall back (Inductor: "Fallback for bool indices"). */
static int lower_index(Lower *L, const Node *n, int check) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *t[MI_MAX_DIMS];
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    bool has_bool;
    int nt = index_list(L, n, 1, t, &has_bool);
    if (nt < 0) return -1;
    if (has_bool) return lw_fallback(L, n);
    int xnd, ond;
    Expr *xs[MI_MAX_DIMS], *os[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    IrFn *f = index_fn(L, n, loader_of(L, x), xnd, xs, t, nt, check, true, &ond, os);
    if (!f) return -1;
    const TensorMeta *m = lw_out_meta(n);
    if (!m || m->ndim != ond) return lw_err(L, n, "'%s': result rank %d, expected %d", n->target, m ? m->ndim : -1, ond);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    lw_origins_merge(L, &o, &no, x);
    for (int k = 0; k < nt; k++) lw_origins_merge(L, &o, &no, t[k]);
    return lw_set_pending(L, n, f, x->dtype, o, no);
}

/* index_select(x, dim, index) = index(x, [None] * dim + [index]) (torch/_decomp). */
static int lower_index_select(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *idx = lw_arg_tbox(L, n, 2), *t[MI_MAX_DIMS] = {0};
    int64_t dim = 0;
    if (!x || !idx || !lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "index_select needs a tensor, a dim and an index");
    int xnd;
    Expr *xs[MI_MAX_DIMS], *os[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    if (xnd == 0 && (dim == 0 || dim == -1))   /* refs: a 0-d self is an element of R^1; the only valid index is 0 */
        return lw_set_pointwise(L, n, loader_of(L, x), x->dtype, 3);
    if (dim < 0) dim += xnd;
    if (dim < 0 || dim >= xnd) return lw_err(L, n, "index_select: dim %lld out of range", (long long)dim);
    if (idx->dtype != DT_I64 && idx->dtype != DT_I32) return lw_err(L, n, "index_select: index must be int64 or int32");
    IrTBox *one = idx;
    if (idx->ndim == 0) {   /* a 0-d index selects one element: seen as [1] */
        Expr *s1 = sym_int(L->s, 1);
        one = lw_tbox_new(L, idx->dtype, 1, &s1, loader_of(L, idx));
    }
    t[dim] = one;
    int ond;
    IrFn *f = index_fn(L, n, loader_of(L, x), xnd, xs, t, (int)dim + 1, true, true, &ond, os);
    if (!f) return -1;
    return lw_set_pointwise(L, n, f, x->dtype, 3);
}

/* embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): out[i.., j..] =
 * weight[indirect(indices[i..]), j..]; sparse falls back. */
static int lower_embedding(Lower *L, const Node *n, int arg) {
    IrTBox *w = lw_arg_tbox(L, n, 0), *ids = lw_arg_tbox(L, n, 1), *t[1];
    const Value *sp = lw_arg_or_kw(n, 4, "sparse");
    if (sp && sp->kind == V_BOOL && sp->b) return lw_fallback(L, n);
    if (!w || !ids || w->ndim < 1) return lw_err(L, n, "embedding needs a weight of rank >= 1 and indices");
    if (ids->dtype != DT_I64 && ids->dtype != DT_I32) return lw_err(L, n, "embedding: indices must be int64 or int32, not %s", dtype_abbrev(ids->dtype));
    t[0] = ids;
    int ond;
    Expr *os[MI_MAX_DIMS];
    IrFn *f = index_fn(L, n, w->loader, w->ndim, w->size, t, 1, true, true, &ond, os);
    if (!f) return -1;
    return lw_set_pointwise(L, n, f, w->dtype, 2);
}

/* gather(x, dim, index): out[i..] = x[i.. with dim replaced by indirect(index[i..])], over
 * index's shape. */
static IrVal call_gather(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    Expr *in[MI_MAX_DIMS + 1];
    for (int d = 0; d < f->nin; d++) in[d] = idx[d];
    IrVal v = f->ia[0]->call(f->ia[0], h, idx);
    in[f->dim] = ops_indirect_indexing(h, v, f->isize[0], f->check, f->wrap_neg);
    return f->a[0]->call(f->a[0], h, in);
}
/* The element a gather/scatter walks: idx with dim replaced by the loaded index (a Scatter's
 * output indexer; scatter_reduce_'s output_indexer uses wrap_neg=False). */
static void scatter_map(const IrFn *f, OpsHandler *h, Expr *const *idx, Expr **out) {
    for (int d = 0; d < f->nin; d++) out[d] = idx[d];
    IrVal v = f->ia[0]->call(f->ia[0], h, idx);
    out[f->dim] = ops_indirect_indexing(h, v, f->isize[0], f->check, f->wrap_neg);
}
static IrFn *dim_fn(Lower *L, const IrFn *x, IrTBox *index, int dim, Expr *size, int nin, bool wrap_neg) {
    IrFn *f = lw_fn(L, call_gather, x ? x->dtype : DT_I64);
    f->a[0] = x;
    f->na = x ? 1 : 0;
    f->ia = lw_alloc(L, sizeof(IrFn *));
    f->isize = lw_alloc(L, sizeof(Expr *));
    f->ia[0] = loader_of(L, index);
    f->isize[0] = size;
    f->nia = 1;
    f->dim = dim;
    f->nin = nin;
    f->check = true;
    f->wrap_neg = wrap_neg;
    f->cost = lw_cost_add(x ? lw_fn_cost(x) : 0, lw_cost_add(lw_fn_cost(f->ia[0]), 2));
    f->index_call = scatter_map;
    return f;
}

static int lower_gather(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *index = lw_arg_tbox(L, n, 2);
    int64_t dim = 0;
    if (!x || !index || !lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "gather needs a tensor, a dim and an index");
    if (index->dtype != DT_I64 && index->dtype != DT_I32) return lw_err(L, n, "gather: index must be int64 or int32");
    int xnd;
    Expr *xs[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    if (dim < 0) dim += xnd;
    if (dim < 0 || dim >= xnd) return lw_err(L, n, "gather: dim %lld out of range", (long long)dim);
    int ind = index->ndim ? index->ndim : 1;
    if (ind != xnd) return lw_err(L, n, "gather: index rank %d differs from the input's %d", index->ndim, x->ndim);
    IrFn *f = dim_fn(L, loader_of(L, x), index, (int)dim, xs[dim], ind, true);
    return lw_set_pointwise(L, n, f, x->dtype, 3);
}

/* ---- Scatter: a clone of the base, then stores at loaded indexes into it ---- */

/* A fresh buffer holding x's values (Inductor's clone(x) then self.realize()). */
static IrTBox *clone_realized(Lower *L, const Node *n, IrTBox *x) {
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    lw_origins_merge(L, &o, &no, x);
    IrStorage *sb = lw_storage_new(L, x->loader, x->dtype, x->ndim, x->size, o, no);
    lw_realize(L, sb, NULL);
    return lw_tbox_of_storage(L, sb);
}

/* self.realize() of a pending x that index_put_ then mutates: the readers lowered while x was
 * pending hold its inner function (make_loader of a Pointwise is the function itself) and keep
 * computing the old values, while the mutation writes the buffer x becomes. So x's node gets a
 * fresh storage with the same function, realized, and the pending one stays with its readers.
 * Example: z = zeros; a = z + t (pending); index_put_(z, [i], v, True); a + z_new: a still
 * adds 0, not the scattered values. */
static IrTBox *realize_for_mutation(Lower *L, const Node *n, IrTBox *x) {
    IrStorage *sb = lw_storage_new(L, x->sb->fn, x->dtype, x->ndim, x->size, x->origins, x->norigins);
    sb->node = x->sb->node;
    lw_realize(L, sb, NULL);
    IrTBox *t = lw_tbox_of_storage(L, sb);
    LVal *lv = n->nargs > 0 && n->args[0].kind == V_NODE ? lw_node_val(L, n->args[0].node) : NULL;
    if (lv && lv->kind == LV_TBOX && lv->t == x) lv->t = t;   /* x's node now names the mutated buffer */
    return t;
}

/* ir.Scatter into base's buffer: ComputedBuffer mutating it (MutationLayoutSHOULDREMOVE),
 * iterating `size` (ndim dims), value fn, element indexer->index_call. */
static Buffer *add_scatter(Lower *L, const Node *n, IrTBox *base, const IrFn *fn, const IrFn *indexer, int ndim,
                           Expr **size, bool atomic_add) {
    Buffer *target = base->sb->buf;
    lw_mark_buffer_mutated(L, target);   /* MutationLayoutSHOULDREMOVE(target) */
    Layout lay = target->layout;
    Buffer *b = lw_new_buffer(L, BUF_COMPUTED, &lay);
    b->mutates = target;
    target->mutated = true;   /* V.graph.mutated_buffers: its readers load it, never inline it */
    lw_origins_of_node(L, b, n);
    b->body = ir_trace_scatter(L->m, b, fn, indexer, ndim, size, atomic_add);
    return b;
}

/* index_put(x, indices, values, accumulate) / _unsafe_index_put (no check): Inductor's
 * index_put_impl_ on clone(x). The in-place forms index_put_ / prims._unsafe_index_put_ (mode
 * bit 2; only where functionalize_scatter_in_place holds: no boolean index, no fallback, x not
 * read after it) are index_put_impl_ on x itself, as Inductor's Scatter with
 * MutationLayoutSHOULDREMOVE(self): into a graph input, readers of the result read the input;
 * into an intermediate (reinplace's chains), x's buffer, realized first. Example:
 * index_put_(index_put_(zeros, i, 0), i, v, True) is a fill and two scatters into one buffer. */
static int index_put_impl(Lower *L, const Node *n, IrTBox *x, IrTBox **t, int nt, IrTBox *v, bool acc, bool check, bool in_place);
static int lower_index_put(Lower *L, const Node *n, int mode) {
    int check = mode & 1;
    bool in_place = mode & 2;
    IrTBox *x = lw_arg_tbox(L, n, 0), *v = lw_arg_tbox(L, n, 2), *t[MI_MAX_DIMS];
    if (!x || !v) return lw_err(L, n, "'%s' needs a tensor, indices and values", n->target);
    bool has_bool, acc = false;
    const Value *av = lw_arg_or_kw(n, 3, "accumulate");
    if (av && av->kind == V_BOOL) acc = av->b;
    int nt = index_list(L, n, 1, t, &has_bool);
    if (nt < 0) return -1;
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "'%s' has no shape", n->target);
    int64_t vn = 1, sz;
    for (int d = 0; d < v->ndim; d++) vn = sym_is_int(v->size[d], &sz) ? vn * sz : -1;
    if (vn == 1 && nt == 1 && has_bool) {   /* one mask, one value: where(mask, value, x) */
        IrTBox *mask = t[0];
        Expr *map[MI_MAX_DIMS];
        for (int d = 0; d < mask->ndim; d++) map[d] = lw_var(L, d);
        const IrFn *mk = lw_reindex(L, mask->loader, x->ndim, map, mask->ndim);   /* unsqueezed to x's rank */
        mk = lw_to_dtype(L, mk, DT_BOOL);
        const IrFn *val = lw_to_dtype(L, lw_broadcast(L, v->loader, v->ndim, v->size, x->ndim, x->size), x->dtype);
        if (acc) val = lw_math(L, IOP_ADD, x->dtype, x->loader, val, NULL);
        return lw_set_pointwise(L, n, lw_math(L, IOP_WHERE, x->dtype, mk, val, x->loader), x->dtype, 3);
    }
    if (has_bool) return lw_fallback_on_clone(L, n);
    return index_put_impl(L, n, x, t, nt, v, acc, check, in_place);
}

/* index_put_impl_(x or clone(x), indices t[0..nt), values v, accumulate) after the mask case */
static int index_put_impl(Lower *L, const Node *n, IrTBox *x, IrTBox **t, int nt, IrTBox *v, bool acc, bool check, bool in_place) {
    if (acc && (x->dtype == DT_I64 || x->dtype == DT_BOOL || x->dtype == DT_BF16))
        return lw_fallback_on_clone(L, n);   /* needs_fallback_due_to_atomic_add_limitations */
    int xnd, ond;
    Expr *xs[MI_MAX_DIMS], *os[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    IrFn *ix = index_fn(L, n, NULL, xnd, xs, t, nt, check, true, &ond, os);
    if (!ix) return -1;
    const IrFn *val = lw_broadcast(L, v->loader, v->ndim, v->size, ond, os);
    if (!val) return lw_err(L, n, "'%s': values of rank %d do not broadcast to the indexed shape", n->target, v->ndim);
    val = lw_to_dtype(L, val, x->dtype);
    if (in_place && !(functionalize_scatter_in_place(L->g, n) && x->sb && !x->is_view))
        return lw_err(L, n, "index_put_ is lowered in place only into a tensor (no view) not read after it");
    bool into_input = in_place && x->sb->buf && x->sb->buf->kind == BUF_INPUT;
    IrTBox *out = in_place ? x->sb->buf ? x : realize_for_mutation(L, n, x) : clone_realized(L, n, x);
    Buffer *sc = add_scatter(L, n, out, val, ix, ond, os, acc);
    if (into_input) {   /* readers of the input made after it depend on it (ir_deps_collect) */
        out->sb->buf->mutated = true;
        sc->inplace_alias = true;
    }
    return lw_set_tbox(L, n, out);
}


/* diagonal_scatter's store index: src's index (the dims other than dim1 / dim2 in order, then
 * the diagonal) into x's dims; f->dim / f->op are dim1 / dim2, f->c the offset. */
static void diag_map(const IrFn *f, OpsHandler *h, Expr *const *idx, Expr **out) {
    (void)h;
    SymCtx *s = f->sym;
    int d1 = f->dim, d2 = f->op, k = 0;
    int64_t off = (int64_t)f->c;
    Expr *i = idx[f->nin - 2];
    for (int d = 0; d < f->nin; d++)
        if (d != d1 && d != d2) out[d] = idx[k++];
    out[d1] = off < 0 ? sym_add(s, i, sym_int(s, -off)) : i;
    out[d2] = off > 0 ? sym_add(s, i, sym_int(s, off)) : i;
}

/* diagonal_scatter(x, src, offset, dim1, dim2), lowering.py's: output = clone(x) (realized),
 * mutate_to(diagonal(output, offset, dim1, dim2), src) -- realize_into stores src through the
 * diagonal view's indexer into the clone's buffer (MutationLayoutSHOULDREMOVE) -- and the
 * clone is the result. Example: the infonce backward's zeros [6, 6] with -g/6 on the
 * diagonal: a fill, then a store at 7 * i into the same buffer (no fallback). */
static int lower_diagonal_scatter(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *x = lw_arg_tbox(L, n, 0), *src = lw_arg_tbox(L, n, 1);
    int64_t off = 0, d1 = 0, d2 = 1;
    if (!x || !src) return lw_err(L, n, "diagonal_scatter needs a tensor and a source");
    lw_arg_int(n, 2, "offset", &off);
    lw_arg_int(n, 3, "dim1", &d1);
    lw_arg_int(n, 4, "dim2", &d2);
    if (d1 < 0) d1 += x->ndim;
    if (d2 < 0) d2 += x->ndim;
    if (x->ndim < 2 || d1 < 0 || d2 < 0 || d1 >= x->ndim || d2 >= x->ndim || d1 == d2 || src->ndim != x->ndim - 1)
        return lw_err(L, n, "diagonal_scatter: bad dims %lld, %lld for a source of rank %d into rank %d", (long long)d1,
                      (long long)d2, src->ndim, x->ndim);
    IrTBox *out = clone_realized(L, n, x);
    IrFn *ix = lw_fn(L, NULL, DT_I64);
    ix->index_call = diag_map;
    ix->nin = x->ndim;   /* the diagonal is src's last dim, index nin - 2 */
    ix->dim = (int)d1;
    ix->op = (int)d2;
    ix->c = (double)off;
    add_scatter(L, n, out, lw_to_dtype(L, src->loader, x->dtype), ix, src->ndim, src->size, false);
    return lw_set_tbox(L, n, out);
}

/* _unsafe_masked_index_put_accumulate(x, mask, indices, values) (lowering.py): where(mask,
 * values, 0) added at the indices clamped into [-size, size - 1] of clone(x), as
 * _unsafe_index_put (index_put_impl_ without a check; a negative index wraps). Example: x [4],
 * indices [-1, 7], mask [1, 1], values [1, 2] -> both added to x[3]. */
static int lower_masked_index_put_acc(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *x = lw_arg_tbox(L, n, 0), *mask = lw_arg_tbox(L, n, 1), *v = lw_arg_tbox(L, n, 3), *t[MI_MAX_DIMS];
    if (!x || !mask || !v) return lw_err(L, n, "_unsafe_masked_index_put_accumulate needs a tensor, a mask, indices and values");
    bool has_bool;
    int nt = index_list(L, n, 2, t, &has_bool);
    if (nt < 0) return -1;
    if (has_bool) return lw_fallback(L, n);
    const IrFn *mk = lw_broadcast(L, lw_to_dtype(L, mask->loader, DT_BOOL), mask->ndim, mask->size, v->ndim, v->size);
    if (!mk) return lw_err(L, n, "_unsafe_masked_index_put_accumulate: the mask does not broadcast to the values");
    IrTBox *mv = lw_tbox_new(L, v->dtype, v->ndim, v->size, lw_math(L, IOP_WHERE, v->dtype, mk, v->loader, lw_const(L, 0, v->dtype)));
    int xnd;
    Expr *xs[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    for (int k = 0; k < nt && k < xnd; k++) {   /* clamp(index, -size, size - 1): clamp_min, then clamp_max */
        if (!t[k]) continue;
        DType it = t[k]->dtype;
        const IrFn *lo = lw_to_dtype(L, lw_index_expr(L, sym_neg(L->s, xs[k]), 0, DT_I64), it);
        const IrFn *hi = lw_to_dtype(L, lw_index_expr(L, sym_sub(L->s, xs[k], sym_int(L->s, 1)), 0, DT_I64), it);
        const IrFn *c = lw_math(L, IOP_MINIMUM, it, lw_math(L, IOP_MAXIMUM, it, t[k]->loader, lo, NULL), hi, NULL);
        t[k] = lw_tbox_new(L, it, t[k]->ndim, t[k]->size, c);
    }
    return index_put_impl(L, n, x, t, nt, mv, true, false, false);
}

/* Inductor's use_scatter_fallback for `packet` (scatter_ / scatter_reduce_) with reduction
 * `red` ("sum", "add", NULL, ...). */
static bool scatter_fallback(Lower *L, const Node *n, bool reduce_packet, const char *red, DType self_dt, DType src_dt, bool src_tensor) {
    if (reduce_packet && !red) return false;
    const char *ty = reduce_packet ? "sum" : "add";
    bool gpu = (n->has_meta ? n->meta.device.kind : L->dev.kind) == DEV_CUDA;
    if (red && strcmp(red, ty) != 0) return true;
    if (src_tensor && gpu && (src_dt == DT_I64 || src_dt == DT_BOOL || src_dt == DT_BF16)) return true;
    if (reduce_packet && red && src_tensor && !gpu && L->ctx->threads != 1) return true;   /* fallback_scatter_reduce_sum */
    if (red && (self_dt == DT_BOOL || self_dt == DT_I64)) return true;
    return false;
}

/* scatter_reduce_(clone(x), dim, index, src, reduce, include_self) after the fallback checks:
 * a Scatter over index's shape at x[.., indirect(index[..]), ..] (wrap_neg=False); "sum"
 * accumulates (atomic_add); include_self=False first stores zeros there. */
static int scatter_lowered(Lower *L, const Node *n, IrTBox *x, int64_t dim, IrTBox *index, const IrFn *src,
                           bool sum, bool include_self) {
    int xnd;
    Expr *xs[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    if (dim < 0) dim += xnd;
    if (dim < 0 || dim >= xnd) return lw_err(L, n, "'%s': dim %lld out of range", n->target, (long long)dim);
    int ind = index->ndim ? index->ndim : 1;
    if (ind != xnd) return lw_err(L, n, "'%s': index rank %d differs from the input's %d", n->target, index->ndim, x->ndim);
    Expr *isz[MI_MAX_DIMS];
    for (int d = 0; d < ind; d++) isz[d] = index->ndim ? index->size[d] : sym_int(L->s, 1);
    IrTBox *out = clone_realized(L, n, x);
    int64_t z;
    for (int d = 0; d < ind; d++)
        if (sym_is_int(isz[d], &z) && z == 0) return lw_set_tbox(L, n, out);   /* nothing to scatter */
    IrFn *ix = dim_fn(L, NULL, index, (int)dim, xs[dim], ind, false);
    if (!include_self) add_scatter(L, n, out, lw_const(L, 0, x->dtype), ix, ind, isz, false);
    add_scatter(L, n, out, src, ix, ind, isz, sum);
    return lw_set_tbox(L, n, out);
}

/* src (args[3]) as a loader over index's shape in x's dtype: a tensor (read at the same
 * element) or a number (full_like). */
static const IrFn *scatter_src(Lower *L, const Node *n, IrTBox *x, bool *is_tensor, DType *src_dt) {
    const Value *sv = lw_arg_or_kw(n, 3, "src");
    if (!sv) sv = lw_arg_or_kw(n, 3, "value");
    double d;
    *is_tensor = sv && sv->kind == V_NODE;
    if (!*is_tensor) {
        if (!sv || !value_as_double(sv, &d)) return NULL;
        *src_dt = x->dtype;
        return lw_const(L, d, x->dtype);
    }
    IrTBox *s = lw_arg_tbox(L, n, 3);
    if (!s) return NULL;
    *src_dt = s->dtype;
    return lw_to_dtype(L, loader_of(L, s), x->dtype);
}

/* scatter.src / .value / .reduce / .value_reduce: scatter_(clone(x), ...); reduce "add" ->
 * scatter_reduce_ "sum", "multiply" -> "prod" (a fallback) */
static int lower_scatter_op(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *index = lw_arg_tbox(L, n, 2);
    int64_t dim;
    if (!x || !index || !lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "'%s' needs a tensor, a dim and an index", n->target);
    if (index->dtype != DT_I64 && index->dtype != DT_I32) return lw_err(L, n, "'%s': index must be int64 or int32", n->target);
    const Value *rv = lw_arg_or_kw(n, 4, "reduce");
    const char *red = rv && rv->kind == V_STR ? rv->s : NULL;
    bool src_tensor;
    DType sdt;
    const IrFn *src = scatter_src(L, n, x, &src_tensor, &sdt);
    if (!src) return lw_err(L, n, "'%s': src must be a tensor or a number", n->target);
    if (red && strcmp(red, "add") != 0 && strcmp(red, "multiply") != 0) return lw_err(L, n, "'%s': reduce must be 'add' or 'multiply'", n->target);
    if (!red && scatter_fallback(L, n, false, NULL, x->dtype, sdt, src_tensor)) return lw_fallback_on_clone(L, n);
    if (red) {   /* scatter_reduce_ with "sum" / "prod"; a number src became full_like (a tensor) */
        const char *r2 = strcmp(red, "add") == 0 ? "sum" : "prod";
        if (scatter_fallback(L, n, true, r2, x->dtype, sdt, true)) return lw_fallback_on_clone(L, n);
        return scatter_lowered(L, n, x, dim, index, src, true, true);
    }
    return scatter_lowered(L, n, x, dim, index, src, false, true);
}

/* scatter_add(x, dim, index, src) = scatter_reduce_(clone(x), ..., "sum") */
static int lower_scatter_add(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *index = lw_arg_tbox(L, n, 2);
    int64_t dim;
    if (!x || !index || !lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "scatter_add needs a tensor, a dim and an index");
    bool src_tensor;
    DType sdt;
    const IrFn *src = scatter_src(L, n, x, &src_tensor, &sdt);
    if (!src || !src_tensor) return lw_err(L, n, "scatter_add: src must be a tensor");
    if (scatter_fallback(L, n, true, "sum", x->dtype, sdt, true)) return lw_fallback_on_clone(L, n);
    return scatter_lowered(L, n, x, dim, index, src, true, true);
}

/* scatter_reduce.two(x, dim, index, src, reduce, include_self): only "sum" has a lowering */
static int lower_scatter_reduce(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *index = lw_arg_tbox(L, n, 2);
    int64_t dim;
    const Value *rv = lw_arg_or_kw(n, 4, "reduce");
    if (!x || !index || !lw_arg_int(n, 1, "dim", &dim) || !rv || rv->kind != V_STR)
        return lw_err(L, n, "scatter_reduce needs a tensor, a dim, an index, src and a reduction");
    bool src_tensor;
    DType sdt;
    const IrFn *src = scatter_src(L, n, x, &src_tensor, &sdt);
    if (!src) return lw_err(L, n, "scatter_reduce: src must be a tensor");
    const Value *iv = lw_arg_or_kw(n, -1, "include_self");
    bool include_self = !(iv && iv->kind == V_BOOL && !iv->b);
    if (scatter_fallback(L, n, true, rv->s, x->dtype, sdt, src_tensor)) return lw_fallback_on_clone(L, n);
    return scatter_lowered(L, n, x, dim, index, src, strcmp(rv->s, "sum") == 0, include_self);
}

/* _unsafe_masked_index(x, mask, indices, fill): where(mask, x[indices], fill) (Inductor's
 * ops.masked: the load happens only under the mask; here every index is clamped into its dim,
 * so a masked-off element loads in bounds; no check, no wrap, as Inductor) */
static int lower_masked_index(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *mask = lw_arg_tbox(L, n, 1), *t[MI_MAX_DIMS];
    if (lw_arg_symbolic(n, 3, "fill")) return lw_fallback(L, n);   /* a SymFloat fill: read at run time */
    double fill = lw_arg_num(n, 3, "fill", 0);
    if (!x || !mask) return lw_err(L, n, "_unsafe_masked_index needs a tensor and a mask");
    bool has_bool;
    int nt = index_list(L, n, 2, t, &has_bool);
    if (nt < 0) return -1;
    if (has_bool) return lw_fallback(L, n);
    const TensorMeta *m = lw_out_meta(n);
    if (!m) return lw_err(L, n, "_unsafe_masked_index has no shape");
    const IrFn *mk = lw_broadcast(L, lw_to_dtype(L, mask->loader, DT_BOOL), mask->ndim, mask->size, m->ndim, m->size);
    if (!mk) return lw_err(L, n, "_unsafe_masked_index: the mask does not broadcast to the result");
    int xnd, ond;
    Expr *xs[MI_MAX_DIMS], *os[MI_MAX_DIMS];
    shape_of(L, x, &xnd, xs);
    /* each index clamped into its dim: a masked-off element then loads in bounds */
    IrTBox *tm[MI_MAX_DIMS];
    for (int k = 0; k < nt; k++) {
        tm[k] = NULL;
        if (!t[k] || k >= xnd) continue;
        DType it = t[k]->dtype;
        const IrFn *hi = lw_to_dtype(L, lw_index_expr(L, sym_sub(L->s, xs[k], sym_int(L->s, 1)), 0, DT_I64), it);
        const IrFn *c = lw_math(L, IOP_MAXIMUM, it, lw_math(L, IOP_MINIMUM, it, t[k]->loader, hi, NULL), lw_const(L, 0, it), NULL);
        tm[k] = lw_tbox_new(L, it, t[k]->ndim, t[k]->size, c);
    }
    IrFn *f = index_fn(L, n, loader_of(L, x), xnd, xs, tm, nt, false, false, &ond, os);
    if (!f) return -1;
    const IrFn *r = lw_math(L, IOP_WHERE, x->dtype, mk, f, lw_const(L, fill, x->dtype));
    return lw_set_pointwise(L, n, r, x->dtype, 3);
}

/* ---- upsampling: Inductor's upsample_nearestnd ---- */

/* One resized dim f->dim of the output: input index floor(o * s) (exact: floor((o + 0.5) * s)),
 * s = f->c, computed in float and truncated to int32 as Inductor's scale_fn, clamped to the
 * last input row as ATen's nearest_idx, then indirect_indexing(check=False). */
static IrVal call_upsample(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    Expr *in[MI_MAX_DIMS];
    for (int d = 0; d < f->nin; d++) in[d] = idx[d];
    IrVal x = h->index_expr(h, idx[f->dim], DT_F32);
    if (f->op) x = ops_add(h, x, h->constant(h, 0.5, DT_F32), DT_F32);
    x = ops_mul(h, x, h->constant(h, f->c, DT_F32), DT_F32);
    x = h->to_dtype(h, x, DT_I32, DT_F32);
    int64_t last;
    if (sym_is_int(f->e, &last)) x = ops_binary(h, IOP_MINIMUM, x, h->constant(h, (double)(last - 1), DT_I32), DT_I32);
    in[f->dim] = h->indirect_indexing(h, x, f->e, false, false, NULL);
    return f->a[0]->call(f->a[0], h, in);
}

/* upsample_nearest{1,2,3}d and _upsample_nearest_exact{1,2,3}d, .default (output_size, then a
 * scale per dim) and .vec (output_size or scale_factors, as the decomposition into .default
 * reads them): the last `n` dims resized. Sizes that are not plain ints: a FallbackKernel. */
static int lower_upsample_nearest(Lower *L, const Node *n, int arg) {
    int nsp = arg & 3;
    bool exact = (arg & 4) != 0, vec = strstr(n->target, ".vec") != NULL;
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const TensorMeta *m = lw_out_meta(n);
    if (!x || !m || x->ndim < nsp || m->ndim != x->ndim) return lw_err(L, n, "'%s' needs a tensor of rank >= %d and a shape", n->target, nsp);
    double scale[3] = {0, 0, 0};
    for (int i = 0; i < nsp; i++) {
        double s = 0;
        if (vec) {
            const Value *sf = lw_arg_or_kw(n, 2, "scale_factors");
            if (sf && (sf->kind == V_LIST || sf->kind == V_TUPLE) && sf->list.n == nsp && !value_as_double(&sf->list.items[i], &s)) s = 0;
        } else {
            const char *kw = nsp == 1 ? "scales" : i == nsp - 1 ? "scales_w" : i == nsp - 2 ? "scales_h" : "scales_d";
            if (lw_arg_symbolic(n, 2 + i, kw)) return lw_fallback(L, n);   /* a SymFloat scale: read at run time */
            s = lw_arg_num(n, 2 + i, kw, 0);
        }
        scale[i] = s;
    }
    const IrFn *f = x->loader;
    for (int i = 0; i < nsp; i++) {
        int d = x->ndim - nsp + i;
        int64_t in, out;
        if (!sym_is_int(x->size[d], &in) || !sym_is_int(m->size[d], &out) || out < 1) return lw_fallback(L, n);
        IrFn *u = lw_fn(L, call_upsample, x->dtype);
        u->a[0] = f;
        u->na = 1;
        u->nin = x->ndim;
        u->dim = d;
        u->op = exact;
        u->c = scale[i] > 0 ? 1.0 / scale[i] : (double)in / (double)out;
        u->e = x->size[d];
        u->cost = lw_cost_add(lw_fn_cost(f), 5);
        f = u;
    }
    lw_realize_hint(L, x);   /* elements are read several times */
    return lw_set_pointwise(L, n, f, x->dtype, 1);
}

/* ---- the rows ---- */

const LoweringDef lowering_gather_table[] = {
    {"aten.index.Tensor", lower_index, 1}, {"aten._unsafe_index.Tensor", lower_index, 0},
    {"aten.index_select.default", lower_index_select, 0}, {"aten.embedding.default", lower_embedding, 0},
    {"aten.gather.default", lower_gather, 0}, {"aten.diagonal_scatter.default", lower_diagonal_scatter, 0},
    {"aten.index_put.default", lower_index_put, 1}, {"aten._unsafe_index_put.default", lower_index_put, 0},
    {"aten.index_put_.default", lower_index_put, 1 | 2}, {"prims._unsafe_index_put_.default", lower_index_put, 2},
    {"aten.scatter.src", lower_scatter_op, 0}, {"aten.scatter.value", lower_scatter_op, 0},
    {"aten.scatter.reduce", lower_scatter_op, 0}, {"aten.scatter.value_reduce", lower_scatter_op, 0},
    {"aten.scatter_add.default", lower_scatter_add, 0}, {"aten.scatter_reduce.two", lower_scatter_reduce, 0},
    {"aten._unsafe_masked_index.default", lower_masked_index, 0},
    {"aten._unsafe_masked_index_put_accumulate.default", lower_masked_index_put_acc, 0},
    {"aten.upsample_nearest1d.default", lower_upsample_nearest, 1}, {"aten.upsample_nearest1d.vec", lower_upsample_nearest, 1},
    {"aten.upsample_nearest2d.default", lower_upsample_nearest, 2}, {"aten.upsample_nearest2d.vec", lower_upsample_nearest, 2},
    {"aten.upsample_nearest3d.default", lower_upsample_nearest, 3}, {"aten.upsample_nearest3d.vec", lower_upsample_nearest, 3},
    {"aten._upsample_nearest_exact1d.default", lower_upsample_nearest, 1 | 4},
    {"aten._upsample_nearest_exact2d.default", lower_upsample_nearest, 2 | 4},
    {"aten._upsample_nearest_exact3d.default", lower_upsample_nearest, 3 | 4},
};
const int lowering_gather_count = sizeof lowering_gather_table / sizeof lowering_gather_table[0];
