/* ir_layout.c — stride orders and late layout decisions (Inductor's ir.py get_stride_order,
 * FlexibleLayout.stride_ordered / fill_ordered, Layout.is_stride_ordered, ComputedBuffer.
 * decide_layout with scheduler.pick_loop_order).
 *
 * A buffer realized during lowering starts with a flexible (contiguous) layout. Two things may
 * decide it later: a consumer that needs a stride order (a convolution run channels last:
 * ExternKernel.require_stride_order freezes the layout in that order, core/lowering/layout_opt.c),
 * and GraphLowering.finalize, where each layout still flexible takes the order of the buffer's
 * reads (a batch norm's normalize reading a channels-last convolution output is written channels
 * last too). Inductor records loop bodies only after that; we record them at realization, so a
 * changed layout re-records the bodies from the recipe ir_trace_body kept (IrTrace): loads go
 * through the producer's layout at record time (lw_call_buf_load), so replaying picks it up. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* get_stride_order: argsort of the strides (ascending; among equal strides the later dim first,
 * as utils.argsort reverses a stable descending sort), then each dim's rank. [16384, 1, 512, 16]
 * -> [3, 0, 2, 1]. */
bool ir_stride_order(Expr *const *stride, int n, int *order) {
    int64_t st[MI_MAX_DIMS];
    int idx[MI_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        if (!sym_is_int(stride[d], &st[d])) return false;
        idx[d] = d;
    }
    for (int i = 1; i < n; i++)   /* insertion sort: by stride, ties by dim descending */
        for (int j = i; j > 0; j--) {
            int a = idx[j - 1], b = idx[j];
            if (st[a] > st[b] || (st[a] == st[b] && a < b)) { idx[j - 1] = b; idx[j] = a; }
            else break;
        }
    for (int r = 0; r < n; r++) order[idx[r]] = r;
    return true;
}

/* stride_ordered: the dim of rank 0 gets stride 1, each next rank the product of the sizes
 * filled before it (fill order = the dims by rank). */
void ir_strides_for_order(SymCtx *s, Expr *const *size, int n, const int *order, Expr **stride) {
    Expr *next = sym_int(s, 1);
    for (int r = 0; r < n; r++)
        for (int d = 0; d < n; d++)
            if (order[d] == r) {
                stride[d] = next;
                next = sym_mul(s, next, size[d]);
            }
}

/* is_stride_ordered: size-1 dims are dropped and the order re-ranked over the rest; then the
 * strides listed by rank must not decrease. [4, 3, 32, 32] / [3072, 1, 96, 3] is ordered
 * [3, 0, 2, 1]; a contiguous [4, 1, 8, 8] is channels last too (its one channel drops out). */
bool ir_layout_stride_ordered(const Layout *l, const int *order) {
    int64_t st[MI_MAX_DIMS];
    int ord[MI_MAX_DIMS], n = 0;
    for (int d = 0; d < l->ndim; d++) {
        int64_t one;
        if (sym_is_int(l->size[d], &one) && one == 1) continue;
        if (!sym_is_int(l->stride[d], &st[n])) return false;
        ord[n++] = order[d];
    }
    int64_t by_rank[MI_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int r = 0;   /* ord[i]'s rank among the kept dims */
        for (int j = 0; j < n; j++) r += ord[j] < ord[i];
        by_rank[r] = st[i];
    }
    for (int r = 0; r + 1 < n; r++)
        if (by_rank[r] > by_rank[r + 1]) return false;
    return true;
}

void ir_layout_loop_order(const Layout *l, int *order) {
    int n = l->ndim;
    for (int i = 0; i < n; i++) order[i] = i;
    int64_t st[MI_MAX_DIMS];
    for (int i = 0; i < n; i++)
        if (!sym_is_int(l->stride[i], &st[i])) return;
    for (int i = 1; i < n; i++)       /* stable insertion sort by decreasing stride */
        for (int j = i; j > 0 && st[order[j]] > st[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
}

/* Record b's body again from its recipe, with its current layout. */
static void retrace_body(IrModule *m, Buffer *b);
static void retrace(IrModule *m, Buffer *b) {
    if (!b->trace) return;
    LoopBody *old = b->body;
    retrace_body(m, b);   /* with b->born, as the first time: the same storages inline */
    if (old && old != b->body) { free(old->ops); free(old->indexes); }   /* the arena keeps the rest */
}

static void retrace_body(IrModule *m, Buffer *b) {
    const IrTrace *t = b->trace;
    if (t->scatter) {
        b->body = ir_trace_scatter(m, b, t->fn, t->indexer, t->ndim, t->size, t->atomic_add);
        return;
    }
    if (t->scan) {
        b->body = ir_trace_scan(m, b, t->scan, t->ndim, t->size);
        return;
    }
    int order[MI_MAX_DIMS];
    if (t->by_layout) ir_layout_loop_order(&ir_store_target(b)->layout, order);
    b->body = ir_trace_body(m, b, t->fn, t->ndim, t->size, t->by_layout ? order : NULL, t->nred, t->rsize, t->rt,
                            t->welford_item);
}

static void set_strides(IrModule *m, Buffer *b, Expr *const *stride) {
    Expr **st = arena_alloc(&m->arena, sizeof(Expr *) * (b->layout.ndim + 1));
    for (int d = 0; d < b->layout.ndim; d++) st[d] = stride[d];
    b->layout.stride = st;
    b->layout.fixed = true;
}

void ir_relayout(IrModule *m, Buffer *b, Expr *const *stride) {
    set_strides(m, b, stride);
    retrace(m, b);
}

void ir_retrace_all(IrModule *m) {
    for (int i = 0; i < m->nbufs; i++)
        if (m->bufs[i]->kind == BUF_COMPUTED) retrace(m, m->bufs[i]);
}

/* sizevars.stride_hints of one access: per dim d0 + d (d < ndim) of the vars k0 <= k < k1,
 * index(var = 1) - index(all vars 0), the other vars and indirect symbols at 0; 0 where that
 * is not a number or the dim has no loop variable (size 1). */
static void access_strides(SymCtx *s, const LoopBody *b, Expr *index, int d0, int ndim, int k0, int k1, int64_t *out);
/* read_strides over the output dims (the pointwise vars) */
static void read_strides(SymCtx *s, const LoopBody *b, Expr *index, int ndim, int64_t *out) {
    access_strides(s, b, index, 0, ndim, 0, b->npoint, out);
}
static void access_strides(SymCtx *s, const LoopBody *b, Expr *index, int d0, int ndim, int k0, int k1, int64_t *out) {
    const char *names[MI_MAX_DIMS * 2 + 64];
    Expr *zero[MI_MAX_DIMS * 2 + 64];
    int nn = 0;
    for (int k = 0; k < b->nvars && nn < MI_MAX_DIMS * 2; k++) { names[nn] = b->vars[k]->name; zero[nn++] = sym_int(s, 0); }
    for (int k = 0; k < b->nindirect && nn < MI_MAX_DIMS * 2 + 64; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "indirect%d", k);
        names[nn] = sym_symbol(s, nm)->name;
        zero[nn++] = sym_int(s, 0);
    }
    Expr *base = sym_simplify(s, sym_subst(s, index, names, zero, nn), NULL, 0);
    for (int d = 0; d < ndim; d++) {
        out[d] = 0;
        for (int k = k0; k < k1; k++) {
            if (b->dim_of_var[k] != d0 + d) continue;
            zero[k] = sym_int(s, 1);
            Expr *at = sym_simplify(s, sym_sub(s, sym_subst(s, index, names, zero, nn), base), NULL, 0);
            zero[k] = sym_int(s, 0);
            int64_t v;
            if (sym_is_int(at, &v)) out[d] = v < 0 ? -v : v;
        }
    }
}

/* ComputedBuffer.get_fill_order: the dims from fastest to slowest, by pick_loop_order over the
 * strides of the body's reads; false when it reads nothing. */
static bool fill_order_of(IrModule *m, const Buffer *buf, int *fill) {
    const LoopBody *b = buf->body;
    int n = buf->layout.ndim, nreads = 0;
    for (int i = 0; i < b->nops; i++) nreads += b->ops[i].kind == LOP_LOAD;
    if (nreads == 0 || n == 0) return false;
    int64_t (*sl)[MI_MAX_DIMS * 2] = mi_xcalloc((size_t)nreads, sizeof *sl);
    int r = 0;
    for (int i = 0; i < b->nops; i++)
        if (b->ops[i].kind == LOP_LOAD) read_strides(m->ctx->sym, b, b->indexes[b->ops[i].index], n, sl[r++]);
    ir_pick_loop_sort(fill, n, sl, nreads, buf->layout.size);
    free(sl);
    return true;
}

/* ComputedBuffer.simplify_and_reorder's _apply_loop_reordering for the pointwise body b of
 * `ndim` output dims (sizes `size`): pick_loop_order over the strides of every memory access,
 * the stores first, then the loads (each ops.load once, as LoopBody.get_read_exprs; only
 * Halide has PREFER_STORE_LOOP_ORDER, so the cpp and Triton backends count the reads), then
 * reversed: order[k] is the output dim at nesting level k, outermost first. Example: a
 * pointwise node storing one contiguous NCHW [2, 3, 10, 10] buffer from three channels-last
 * loads walks (n, h, w, c), the loads' order, as Inductor's op1.sizes ([2, 100, 3]) show;
 * two NCHW and two channels-last accesses tie and keep NCHW. False when b has no access. */
bool ir_pick_loop_order(IrModule *m, const LoopBody *b, int ndim, Expr *const *size, int *order) {
    return ir_pick_dims_order(m, b, 0, ndim, 0, b->npoint, size, order);
}

bool ir_pick_dims_order(IrModule *m, const LoopBody *b, int d0, int ndim, int k0, int k1, Expr *const *size, int *order) {
    int n = 0;
    for (int i = 0; i < b->nops; i++) n += b->ops[i].kind == LOP_LOAD || b->ops[i].kind == LOP_STORE || b->ops[i].kind == LOP_STORE_REDUCTION;
    if (n == 0 || ndim == 0) return false;
    int64_t (*sl)[MI_MAX_DIMS * 2] = mi_xcalloc((size_t)n, sizeof *sl);
    int r = 0;
    for (int pass = 0; pass < 2; pass++)   /* get_write_exprs, then get_read_exprs */
        for (int i = 0; i < b->nops; i++)
            if (pass ? b->ops[i].kind == LOP_LOAD : b->ops[i].kind == LOP_STORE || b->ops[i].kind == LOP_STORE_REDUCTION)
                access_strides(m->ctx->sym, b, b->indexes[b->ops[i].index], d0, ndim, k0, k1, sl[r++]);
    int fill[MI_MAX_DIMS * 2];
    ir_pick_loop_sort(fill, ndim, sl, n, size);
    for (int k = 0; k < ndim; k++) order[k] = fill[ndim - 1 - k];
    free(sl);
    return true;
}

/* Does b's body load a buffer whose layout ir_decide_layouts changed (relaid[id])? */
static bool reads_relaid(const Buffer *b, const bool *relaid) {
    for (int i = 0; b->body && i < b->body->nops; i++)
        if (b->body->ops[i].kind == LOP_LOAD && b->body->ops[i].buf && relaid[b->body->ops[i].buf->id]) return true;
    return false;
}

/* ComputedBuffer.decide_layout of one flexible buffer: frozen in its fill order (the strides of
 * its reads, get_fill_order), else as it is. Called by finalize for every buffer, and during
 * lowering by Reduction.num_splits' get_read_indices for the buffers a split candidate reads.
 * True when its strides changed. */
bool ir_decide_layout(IrModule *m, Buffer *b) {
    if (b->kind != BUF_COMPUTED || b->layout.fixed) return false;
    bool changed = false;
    int fill[MI_MAX_DIMS], order[MI_MAX_DIMS];
    if (!b->mutates && b->body && b->trace && fill_order_of(m, b, fill)) {
        for (int r = 0; r < b->layout.ndim; r++) order[fill[r]] = r;
        Expr *st[MI_MAX_DIMS];
        ir_strides_for_order(m->ctx->sym, b->layout.size, b->layout.ndim, order, st);
        bool same = true;
        for (int d = 0; d < b->layout.ndim; d++) same &= st[d] == b->layout.stride[d];   /* interned */
        if (!same) { set_strides(m, b, st); changed = true; }
    }
    b->layout.fixed = true;
    return changed;
}

/* ir_extern_args_follow: an extern's argument realized for mm_args (a pending value or a copy,
 * FlexibleLayout) is read with the strides decide_layout chose for it at finalize. Example: the
 * zero-padded transpose an mm reads (pad_mm's constant_pad_nd of a permute) fills (1, 8) from
 * its permuted read, as Inductor's buf1 of cuda_logaddexp_xlogy_train's backward. */
void ir_extern_args_follow(IrModule *m) {
    for (int i = 0; i < m->nbufs; i++) {
        Buffer *b = m->bufs[i];
        for (int k = 0; b->kind == BUF_EXTERN && k < b->neargs; k++)
            if (b->eargs[k].follows && b->eargs[k].buf) b->eargs[k].view = b->eargs[k].buf->layout;
    }
}

/* GraphLowering.finalize: decide_layout for every buffer in creation order. Its fill order
 * comes from the reads as they are then: a buffer read whose layout an earlier decision
 * changed is read through the new strides (make_loader indexes through the layout when
 * called), so the body is recorded again first. Example: the decoder layer's residual add
 * decided [2, 6, 16] with strides (16, 32, 1), the layer norm's m2 reduction over it then
 * fills (1, 2, 12), as Inductor's buf34. */
bool ir_decide_layouts(IrModule *m) {
    bool changed = false;
    int maxid = 0;
    for (int i = 0; i < m->nbufs; i++) if (m->bufs[i]->id > maxid) maxid = m->bufs[i]->id;
    bool *relaid = mi_xcalloc((size_t)maxid + 2, 1);
    for (int i = 0; i < m->nbufs; i++) {
        Buffer *b = m->bufs[i];
        if (b->kind != BUF_COMPUTED || b->layout.fixed) continue;
        if (!b->mutates && b->body && b->trace && changed && reads_relaid(b, relaid)) retrace(m, b);
        if (ir_decide_layout(m, b)) { changed = true; relaid[b->id] = true; }
    }
    free(relaid);
    return changed;
}
