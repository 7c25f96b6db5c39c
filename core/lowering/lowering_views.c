/* lowering_views.c — view lowerings (Inductor's GenericView / ReinterpretView): permute,
 * transpose, select, slice, narrow, expand, unsqueeze, squeeze, diagonal, view / reshape (a
 * ReinterpretView of a contiguous buffer, else flat re-indexing), split / chunk / unbind into
 * tuples of views, and getitem of a tuple. No data moves: each is an index remapping closure.
 * Also repeat, a Pointwise that re-indexes its input the same way (index % size). */
#include "lowering/lowering_impl.h"

#include <string.h>

/* ---- views ---- */

/* q with q*b == a when b divides the monomial a (coefficients and factors), else NULL:
 * mono_div(48*s27*s77, 48*s27) == s77. */
static Expr *mono_div(SymCtx *s, Expr *a, Expr *b) {
    Expr *q = sym_floordiv(s, a, b);
    return sym_mul(s, q, b) == a ? q : NULL;
}

/* size_hint(a) vs size_hint(b) without hints: -1, 0, 1, or 2 when it cannot be told (a
 * symbolic ratio is at least 2: a dynamic size is never 0 or 1) */
static int size_cmp(SymCtx *s, Expr *a, Expr *b) {
    int64_t x, y;
    if (a == b) return 0;
    if (sym_is_int(a, &x) && sym_is_int(b, &y)) return (x > y) - (x < y);
    Expr *q;
    if ((q = mono_div(s, a, b)) && !(sym_is_int(q, &x) && x <= 1)) return 1;
    if ((q = mono_div(s, b, a)) && !(sym_is_int(q, &x) && x <= 1)) return -1;
    return 2;
}

/* View._dynamic_reshape_indexer(old, new): map[d] (old dim d) as an expression of the new
 * dims' variables, pairing sizes from the innermost: equal sizes share a variable, new dims
 * smaller than an old one combine (var2*size + var), an old dim smaller than a new one splits
 * it into ModularIndexing digits; size-1 dims are 0 / skipped. False where Inductor's
 * optimistic algorithm fails (an AssertionError / IndexError there): [8, 2, 32] -> [8, 8, 8]
 * pairs 32 with 8*8 = 64. Example: [s77, s27, 48] -> [s27*s77, 48] gives
 * [ModularIndexing(v0, s27, s77), ModularIndexing(v0, 1, s27), v1]. */
bool lw_reshape_indexer(Lower *L, Expr **old, int no, Expr **nw, Expr **vars, int nn, Expr **map) {
    SymCtx *s = L->s;
    Expr *sn[MI_MAX_DIMS], *vn[MI_MAX_DIMS], *so[MI_MAX_DIMS], *out[MI_MAX_DIMS];
    int tn = nn, to = no, k = 0;
    int64_t one;
    for (int i = 0; i < nn; i++) { sn[i] = nw[i]; vn[i] = vars[i]; }
    for (int i = 0; i < no; i++) so[i] = old[i];
#define IS1(e) (sym_is_int((e), &one) && one == 1)
    while (tn > 0 && to > 0) {
        Expr *size_old = so[--to], *var = vn[tn - 1], *size_new = sn[tn - 1];
        tn--;
        if (k >= MI_MAX_DIMS) return false;
        if (IS1(size_old)) { out[k++] = sym_int(s, 0); tn++; continue; }
        if (IS1(size_new)) { to++; continue; }
        int c = size_cmp(s, size_new, size_old);
        if (c == 0) { out[k++] = var; continue; }
        if (c == -1) {
            while (size_cmp(s, size_new, size_old) == -1) {
                if (tn == 0) return false;
                tn--;
                var = sym_add(s, sym_mul(s, vn[tn], size_new), var);
                size_new = sym_mul(s, size_new, sn[tn]);
            }
            if (size_new != size_old) return false;
            out[k++] = var;
            continue;
        }
        if (c != 1) return false;
        Expr *divisor = size_old;
        out[k++] = sym_modidx(s, var, sym_int(s, 1), size_old);
        while (size_cmp(s, size_new, size_old) == 1) {
            if (to == 0 || k >= MI_MAX_DIMS) return false;
            Expr *modulus = so[--to];
            out[k++] = sym_modidx(s, var, divisor, modulus);
            divisor = sym_mul(s, divisor, modulus);
            size_old = sym_mul(s, size_old, modulus);
        }
        if (size_new != size_old) return false;
    }
    while (to > 0) { if (!IS1(so[--to]) || k >= MI_MAX_DIMS) return false; out[k++] = sym_int(s, 0); }
    while (tn > 0) if (!IS1(sn[--tn])) return false;
#undef IS1
    if (k != no) return false;
    for (int d = 0; d < no; d++) map[d] = out[no - 1 - d];
    return true;
}

/* View.dynamic_reshape_indexer: the optimistic pairing, else through the flat index
 * (fuse_reindexing of old -> [numel] and [numel] -> new): the old dims as ModularIndexing
 * digits of sum(var_k * contiguous stride_k), a lone non-1 old dim being the sum itself. */
static void reshape_map(Lower *L, Expr **old, int no, Expr **nw, int nn, Expr **map) {
    SymCtx *s = L->s;
    Expr *vars[MI_MAX_DIMS];
    for (int k = 0; k < nn; k++) vars[k] = lw_var(L, k);
    if (lw_reshape_indexer(L, old, no, nw, vars, nn, map)) return;
    int64_t one;
    Expr *flat = sym_int(s, 0), *st = sym_int(s, 1);
    for (int k = nn - 1; k >= 0; k--) {
        if (sym_is_int(nw[k], &one) && one == 1) continue;
        flat = sym_add(s, flat, sym_mul(s, st, vars[k]));
        st = sym_mul(s, st, nw[k]);
    }
    int big = 0;
    for (int d = 0; d < no; d++) big += !(sym_is_int(old[d], &one) && one == 1);
    st = sym_int(s, 1);
    for (int d = no - 1; d >= 0; d--) {
        if (sym_is_int(old[d], &one) && one == 1) { map[d] = sym_int(s, 0); continue; }
        map[d] = big == 1 ? flat : sym_modidx(s, flat, st, old[d]);
        st = sym_mul(s, st, old[d]);
    }
}

static int lower_view_op(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const TensorMeta *m = lw_out_meta(n);
    if (!x) return lw_err(L, n, "view op '%s' needs a tensor argument", n->target);
    if (!m) return lw_err(L, n, "view op '%s' needs a shape annotation", n->target);
    const char *t = n->target;
    SymCtx *s = L->s;
    Expr *map[MI_MAX_DIMS];
    int nd = m->ndim;
    if (strncmp(t, "aten.permute.", 13) == 0) {
        int64_t perm[MI_MAX_DIMS];
        int np = lw_int_list(lw_arg_or_kw(n, 1, "dims"), perm, MI_MAX_DIMS);
        if (np != x->ndim) return lw_err(L, n, "permute: bad dims");
        for (int k = 0; k < np; k++) {
            int64_t d = perm[k] < 0 ? perm[k] + np : perm[k];
            if (d < 0 || d >= np) return lw_err(L, n, "permute: bad dim %lld", (long long)perm[k]);
            map[d] = lw_var(L, k);
        }
    } else if (strcmp(t, "aten.t.default") == 0 || strcmp(t, "aten.transpose.int") == 0) {
        int64_t d0 = 0, d1 = 1;
        if (strcmp(t, "aten.transpose.int") == 0 && (!lw_arg_int(n, 1, "dim0", &d0) || !lw_arg_int(n, 2, "dim1", &d1))) return lw_err(L, n, "transpose: bad dims");
        int r = x->ndim ? x->ndim : 1;
        if (d0 < 0) d0 += r;
        if (d1 < 0) d1 += r;
        for (int k = 0; k < x->ndim; k++) map[k] = lw_var(L, k);
        if (x->ndim >= 2 || (d0 < x->ndim && d1 < x->ndim)) {
            if (d0 < 0 || d1 < 0 || d0 >= x->ndim || d1 >= x->ndim) { if (x->ndim) return lw_err(L, n, "transpose: bad dims"); }
            else { map[d0] = lw_var(L, (int)d1); map[d1] = lw_var(L, (int)d0); }
        }
    } else if (strncmp(t, "aten.select.", 12) == 0) {
        int64_t dim, idx;
        if (!lw_arg_int(n, 1, "dim", &dim) || !lw_arg_int(n, 2, "index", &idx)) return lw_err(L, n, "select: bad args");
        if (dim < 0) dim += x->ndim;
        Expr *ie = sym_int(s, idx);
        if (idx < 0) ie = sym_add(s, x->size[dim], ie);
        for (int d = 0, k = 0; d < x->ndim; d++) map[d] = d == dim ? ie : lw_var(L, k++);
    } else if (strncmp(t, "aten.slice.", 11) == 0) {
        int64_t dim = 0, start = 0, step = 1;
        lw_arg_int(n, 1, "dim", &dim);
        if (dim < 0) dim += x->ndim;
        const Value *sv = lw_arg_or_kw(n, 2, "start");
        Expr *st = sv && sv->kind != V_NONE ? lw_value_expr(L, sv) : sym_int(s, 0);
        if (!st) return lw_err(L, n, "slice: bad start");
        if (sym_is_int(st, &start) && start < 0) st = sym_add(s, x->size[dim], st);
        lw_arg_int(n, 4, "step", &step);
        for (int d = 0; d < x->ndim; d++)
            map[d] = d == dim ? sym_add(s, st, sym_mul(s, sym_int(s, step), lw_var(L, d))) : lw_var(L, d);
    } else if (strncmp(t, "aten.narrow.", 12) == 0) {
        int64_t dim = 0, start = 0;
        if (!lw_arg_int(n, 1, "dim", &dim) || !lw_arg_int(n, 2, "start", &start)) return lw_err(L, n, "narrow: bad args");
        if (dim < 0) dim += x->ndim;
        if (dim < 0 || dim >= x->ndim) return lw_err(L, n, "narrow: bad dim");
        Expr *st = start < 0 ? sym_add(s, x->size[dim], sym_int(s, start)) : sym_int(s, start);
        for (int d = 0; d < x->ndim; d++) map[d] = d == dim ? sym_add(s, st, lw_var(L, d)) : lw_var(L, d);
    } else if (strcmp(t, "aten.diagonal.default") == 0) {
        /* lowering.py diagonal: a GenericView; the other dims in order, then the diagonal
         * (index i reads [.., i + base1, .., i + base2, ..], base (0, offset) or (-offset, 0)) */
        int64_t off = 0, d1 = 0, d2 = 1;
        lw_arg_int(n, 1, "offset", &off);
        lw_arg_int(n, 2, "dim1", &d1);
        lw_arg_int(n, 3, "dim2", &d2);
        if (d1 < 0) d1 += x->ndim;
        if (d2 < 0) d2 += x->ndim;
        if (d1 < 0 || d2 < 0 || d1 >= x->ndim || d2 >= x->ndim || d1 == d2 || nd != x->ndim - 1)
            return lw_err(L, n, "diagonal: bad dims");
        Expr *di = lw_var(L, nd - 1);
        for (int d = 0, k = 0; d < x->ndim; d++)
            map[d] = d == d1 ? sym_add(s, di, sym_int(s, off < 0 ? -off : 0))
                   : d == d2 ? sym_add(s, di, sym_int(s, off > 0 ? off : 0)) : lw_var(L, k++);
    } else if (strncmp(t, "aten.expand.", 12) == 0 || strncmp(t, "aten.broadcast_to", 17) == 0) {
        int64_t one;
        lw_mark_reuse(L, x, nd, m->size);
        for (int d = 0; d < x->ndim; d++) {
            int od = d + nd - x->ndim;
            map[d] = sym_is_int(x->size[d], &one) && one == 1 && !(sym_is_int(m->size[od], &one) && one == 1)
                         ? sym_int(s, 0) : lw_var(L, od);
        }
    } else if (strncmp(t, "aten.unsqueeze.", 15) == 0) {
        int64_t dim;
        if (!lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "unsqueeze: bad dim");
        if (dim < 0) dim += nd;
        for (int d = 0, k = 0; k < nd; k++)
            if (k != dim) map[d++] = lw_var(L, k);
    } else if (strncmp(t, "aten.squeeze.", 13) == 0 || strncmp(t, "aten.view.", 10) == 0 ||
               strncmp(t, "aten.reshape.", 13) == 0 || strncmp(t, "aten._unsafe_view.", 18) == 0 ||
               strncmp(t, "aten.alias.", 11) == 0 || strncmp(t, "aten.detach.", 12) == 0 ||
               strncmp(t, "aten.lift_fresh.", 16) == 0) {
        /* same non-1 sizes in the same order: map dims one to one */
        int64_t one;
        int xi = 0, k = 0;
        bool simple = true;
        for (int d = 0; d < x->ndim; d++) {
            if (sym_is_int(x->size[d], &one) && one == 1) { map[d] = sym_int(s, 0); continue; }
            while (k < nd && sym_is_int(m->size[k], &one) && one == 1) k++;
            if (k >= nd || m->size[k] != x->size[d]) { simple = false; break; }
            map[d] = lw_var(L, k++);
            xi++;
        }
        while (simple && k < nd) {
            if (!(sym_is_int(m->size[k], &one) && one == 1)) simple = false;
            k++;
        }
        if (!simple) {
            /* contiguous buffer: reinterpret; else generic flat re-indexing */
            Buffer *b;
            Layout v;
            /* is_contiguous_storage_and_layout(x): a realized buffer or a ReinterpretView of
               one, not a generic View */
            if (!(x->is_view && x->generic) && ir_probe_strided(L->m, x->loader, x->ndim, x->size, &b, &v)) {
                Layout c = layout_contiguous(L->m, x->dtype, v.device, x->ndim, x->size);
                bool contig = true;
                for (int d = 0; d < x->ndim; d++)
                    if (!(sym_is_int(x->size[d], &one) && one == 1) && c.stride[d] != v.stride[d]) contig = false;
                if (contig) {
                    Layout nl = layout_contiguous(L->m, x->dtype, v.device, nd, m->size);
                    nl.offset = v.offset;
                    IrFn *f = lw_fn(L, lw_call_buf_load, x->dtype);   /* a ReinterpretView */
                    Layout *vl = lw_alloc(L, sizeof *vl);
                    *vl = nl;
                    f->buf = b;
                    f->view = vl;
                    return lw_set_view(L, n, x, f, nd, m->size);
                }
            }
            reshape_map(L, x->size, x->ndim, m->size, nd, map);
            int rc = lw_set_view(L, n, x, lw_reindex(L, x->loader, nd, map, x->ndim), nd, m->size);
            lw_node_val(L, n)->t->generic = true;   /* a View with a reindex, not a ReinterpretView */
            return rc;
        }
    } else {
        return lw_err(L, n, "unsupported view op '%s'", t);
    }
    return lw_set_view(L, n, x, lw_reindex(L, x->loader, nd, map, x->ndim), nd, m->size);
}

static int lower_split(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor argument", n->target);
    const char *t = n->target;
    bool unbind = strncmp(t, "aten.unbind", 11) == 0, chunk = strncmp(t, "aten.chunk", 10) == 0;
    bool with_sizes = strncmp(t, "aten.split_with_sizes", 21) == 0;
    int64_t dim = 0, total, sizes[256], k = 0;
    lw_arg_int(n, unbind ? 1 : 2, "dim", &dim);
    if (dim < 0) dim += x->ndim;
    if (dim < 0 || dim >= x->ndim) return lw_err(L, n, "'%s': bad dim", t);
    if (!sym_is_int(x->size[dim], &total)) return lw_err(L, n, "'%s' along a symbolic size is not supported", t);
    if (unbind) {
        if (total > 256) return lw_err(L, n, "unbind into %lld pieces (max 256)", (long long)total);
        for (k = 0; k < total; k++) sizes[k] = 1;
    } else if (with_sizes) {
        k = lw_int_list(lw_arg_or_kw(n, 1, "split_sizes"), sizes, 256);
        int64_t sum = 0;
        for (int i = 0; i < k; i++) sum += sizes[i] < 0 ? -1000000 : sizes[i];
        if (k < 0 || sum != total) return lw_err(L, n, "split_with_sizes: sizes do not add up to %lld", (long long)total);
    } else {
        int64_t c = 0;
        if (!lw_arg_int(n, 1, chunk ? "chunks" : "split_size", &c) || (c <= 0 && (chunk || total > 0)))
            return lw_err(L, n, "'%s': bad %s", t, chunk ? "chunks" : "split_size");
        int64_t ss = chunk ? (total + c - 1) / c : c;
        if (ss == 0 || total == 0) sizes[k++] = 0;
        for (int64_t off = 0; ss > 0 && off < total; off += ss) {
            if (k == 256) return lw_err(L, n, "'%s' into more than 256 pieces", t);
            sizes[k++] = total - off < ss ? total - off : ss;
        }
    }
    IrTBox **items = lw_alloc(L, sizeof(IrTBox *) * (k ? k : 1));
    int64_t off = 0;
    for (int i = 0; i < k; i++) {
        Expr *psize[MI_MAX_DIMS], *map[MI_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < x->ndim; d++) {
            if (d == dim) {
                map[d] = unbind ? sym_int(L->s, off) : sym_add(L->s, sym_int(L->s, off), lw_var(L, nd));
                if (!unbind) psize[nd++] = sym_int(L->s, sizes[i]);
            } else {
                map[d] = lw_var(L, nd);
                psize[nd++] = x->size[d];
            }
        }
        IrTBox *v = lw_tbox_new(L, x->dtype, nd, psize, lw_reindex(L, x->loader, nd, map, x->ndim));
        v->is_view = true;
        v->view_of = x->is_view ? x->view_of : x->sb;
        const char **o = NULL;
        int no = 0;
        lw_origins_add(L, &o, &no, lw_short_name(L, t));
        lw_origins_merge(L, &o, &no, x);
        v->origins = o;
        v->norigins = no;
        items[i] = v;
        off += sizes[i];
    }
    return lw_set_tuple(L, n, items, (int)k);
}

/* getitem(x, k): item k of a tuple value. A tuple op's value holds its flat results; for an op
 * whose item 0 is a list (OPF_LIST_FIRST) getitem(op, 0) is that list, a tuple of its results,
 * and getitem(op, i > 0) the flat result after it (op_result_item). */
static int lower_getitem(Lower *L, const Node *n, int arg) {
    int64_t k;
    int first, count;
    if (n->nargs < 2 || n->args[0].kind != V_NODE || !value_as_int(&n->args[1], &k))
        return lw_err(L, n, "getitem needs a node and an index");
    LVal *src = lw_node_val(L, n->args[0].node);
    if (src && src->kind == LV_TUPLE && op_result_item(n->args[0].node, k, &first, &count)) {
        if (count >= 0 && first + count <= src->n) return lw_set_tuple(L, n, src->items + first, count);
        k = first;
    }
    if (!src || src->kind != LV_TUPLE || k < 0 || k >= src->n)
        return lw_err(L, n, "getitem of something that is not a tuple of tensors");
    if (!src->items[k]) {   /* None or an int (attention's cum_seq_q, max_q): a node that reads it says so */
        if (L->nusers[graph_index_of(L->g, n)] == 0) return 0;
        return lw_err(L, n, "getitem %lld of '%s' is not a tensor", (long long)k, n->args[0].node->name);
    }
    return lw_set_tbox(L, n, src->items[k]);
}

/* aten.repeat(x, repeats): a Pointwise over the tiled shape reading x at index % size on
 * each repeated dim (0 where x's size is 1), x first viewed with leading 1s when repeats is
 * longer; all repeats 1 is a clone (lowering.py repeat). Example: repeat(w[4], [2, 3]) is
 * [2, 12] reading w[(j % 4)]. (Inductor also calls x.mark_reuse, which realizes an expensive
 * pending input; an input read several times here is re-read through its loader.) */
static int lower_repeat(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const TensorMeta *m = lw_out_meta(n);
    if (!x || !m) return lw_err(L, n, "repeat needs a tensor argument and a shape annotation");
    int64_t rep[MI_MAX_DIMS];
    int nr = lw_int_list(lw_arg_or_kw(n, 1, "repeats"), rep, MI_MAX_DIMS);
    if (nr < x->ndim || nr != m->ndim) return lw_err(L, n, "repeat: %d repeats for %d dims", nr, x->ndim);
    SymCtx *s = L->s;
    int lead = nr - x->ndim;
    Expr *map[MI_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        Expr *v = lw_var(L, lead + d);
        int64_t sz;
        bool one = sym_is_int(x->size[d], &sz) && sz == 1;
        map[d] = rep[lead + d] == 1 ? v : one ? sym_int(s, 0) : sym_modidx(s, v, sym_int(s, 1), x->size[d]);
    }
    return lw_set_pointwise(L, n, lw_reindex(L, x->loader, nr, map, x->ndim), x->dtype, 1);
}

/* lowering.py as_strided(x, size, stride, storage_offset): "as_strided ignores views" — the
 * storage under x (x.data.unwrap_view()) is realized, its layout frozen, and the result is a
 * ReinterpretView of that storage with FixedLayout(size, stride, storage_offset or 0): a strided
 * load, no kernel. Example: group norm's as_strided(mul[2, 4, 2, 1], [2, 8], [8, 1]) reads
 * mul's buffer at 8*i + j. A view whose storage is unknown stays a fallback. */
static int lower_as_strided(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const Value *sz = lw_arg_or_kw(n, 1, "size"), *st = lw_arg_or_kw(n, 2, "stride");
    const Value *off = lw_arg_or_kw(n, 3, "storage_offset");
    IrStorage *base = x ? (x->is_view ? x->view_of : x->sb) : NULL;
    if (!x || !base || !sz || !st || (sz->kind != V_LIST && sz->kind != V_TUPLE) ||
        (st->kind != V_LIST && st->kind != V_TUPLE) || sz->list.n != st->list.n || sz->list.n > MI_MAX_DIMS)
        return lw_fallback(L, n);
    int nd = sz->list.n;
    Layout *vl = lw_alloc(L, sizeof *vl);
    vl->size = lw_alloc(L, sizeof(Expr *) * (nd + 1));
    vl->stride = lw_alloc(L, sizeof(Expr *) * (nd + 1));
    for (int d = 0; d < nd; d++) {
        vl->size[d] = lw_value_expr(L, &sz->list.items[d]);
        vl->stride[d] = lw_value_expr(L, &st->list.items[d]);
        if (!vl->size[d] || !vl->stride[d]) return lw_fallback(L, n);
    }
    vl->offset = off && off->kind != V_NONE ? lw_value_expr(L, off) : sym_int(L->s, 0);
    if (!vl->offset) return lw_fallback(L, n);
    Buffer *b = base->buf ? base->buf : lw_realize(L, base, NULL);   /* x.realize() */
    if (!b || b->layout.multi) return lw_fallback(L, n);
    b->layout.fixed = true;   /* as_storage_and_layout(x, freeze=True) */
    vl->fixed = true;
    vl->ndim = nd;
    vl->dtype = x->dtype;
    vl->device = b->layout.device;
    IrFn *f = lw_fn(L, lw_call_buf_load, x->dtype);
    f->buf = b;
    f->view = vl;
    return lw_set_view(L, n, x, f, nd, vl->size);
}

/* lowering.py unfold(x, dimension, size, step): a GenericView, out [.., (n - size) // step + 1,
 * .., size] reading x[.., idx[-1] + idx[dim] * step, ..]; x is marked for reuse by the
 * ceil(windows * size / n) reads of each element; a 0-d x is slice(unsqueeze(x, 0), end=size).
 * Example: unfold(x[3, 9, 16], -1, 5, 2) is [3, 9, 6, 5] reading x[i, j, 2k + w]. */
static int lower_unfold(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const TensorMeta *m = lw_out_meta(n);
    int64_t dim, size, step;
    if (!x || !m) return lw_err(L, n, "unfold needs a tensor argument and a shape annotation");
    if (!lw_arg_int(n, 1, "dimension", &dim) || !lw_arg_int(n, 2, "size", &size) || !lw_arg_int(n, 3, "step", &step) || step <= 0)
        return lw_err(L, n, "unfold: bad dimension, size or step");
    SymCtx *s = L->s;
    Expr *map[MI_MAX_DIMS];
    if (x->ndim == 0) {
        if (m->ndim != 1) return lw_err(L, n, "unfold of a 0-d tensor: the result must have 1 dim");
        return lw_set_view(L, n, x, lw_reindex(L, x->loader, 1, map, 0), 1, m->size);
    }
    if (dim < 0) dim += x->ndim;
    if (dim < 0 || dim >= x->ndim || m->ndim != x->ndim + 1) return lw_err(L, n, "unfold: bad dimension");
    int64_t dsz, windows;
    if (sym_is_int(x->size[dim], &dsz) && dsz > 0 && sym_is_int(m->size[dim], &windows))
        lw_mark_reuse_users(L, x, (windows * size + dsz - 1) / dsz);
    for (int d = 0; d < x->ndim; d++)
        map[d] = d == dim ? sym_add(s, lw_var(L, x->ndim), sym_mul(s, lw_var(L, d), sym_int(s, step))) : lw_var(L, d);
    int rc = lw_set_view(L, n, x, lw_reindex(L, x->loader, m->ndim, map, x->ndim), m->ndim, m->size);
    if (!rc) lw_node_val(L, n)->t->generic = true;   /* GenericView.create */
    return rc;
}

/* ---- the views rows of the lowering table ---- */

const LoweringDef lowering_views_table[] = {
    {"aten.permute.default", lower_view_op, 0}, {"aten.select.int", lower_view_op, 0},
    {"aten.slice.Tensor", lower_view_op, 0}, {"aten.expand.default", lower_view_op, 0},
    {"aten.unsqueeze.default", lower_view_op, 0}, {"aten.squeeze.dim", lower_view_op, 0},
    {"aten.squeeze.dims", lower_view_op, 0}, {"aten.squeeze.default", lower_view_op, 0},
    {"aten.view.default", lower_view_op, 0}, {"aten.reshape.default", lower_view_op, 0},
    {"aten._unsafe_view.default", lower_view_op, 0}, {"aten.alias.default", lower_view_op, 0},
    {"aten.detach.default", lower_view_op, 0}, {"aten.split.Tensor", lower_split, 0},
    {"aten.split_with_sizes.default", lower_split, 0}, {"aten.chunk.default", lower_split, 0},
    {"aten.unbind.int", lower_split, 0}, {"aten.narrow.default", lower_view_op, 0},
    {"aten.lift_fresh.default", lower_view_op, 0}, {"aten.t.default", lower_view_op, 0},
    {"aten.transpose.int", lower_view_op, 0}, {"operator.getitem", lower_getitem, 0},
    {"aten.diagonal.default", lower_view_op, 0}, {"aten.repeat.default", lower_repeat, 0},
    {"aten.as_strided.default", lower_as_strided, 0}, {"aten.unfold.default", lower_unfold, 0},
};
const int lowering_views_count = sizeof lowering_views_table / sizeof lowering_views_table[0];
