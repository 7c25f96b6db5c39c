/* lowering_realize.c — store or recompute: when a pending value (a Pointwise not yet in memory)
 * becomes a buffer. Inductor decides this per FX node right after lowering it
 * (GraphLowering.run_node) from the node's users and from what the value's inner function does,
 * counted by running it on a counting ops handler (OpCounterCSE, ir.py inner_fn_opcount):
 *
 *   - several users, one of them an op that needs realized inputs (mm, bmm, convolution,
 *     pooling, as_strided, every fallback): realize_hint (realize when it reads more than one
 *     buffer at a non-constant index);
 *   - several users, one of them mm, _int_mm or convolution_backward (convolution too unless
 *     layout_opt): the value is required in its eager stride order (need_fixed_layout:
 *     ExternKernel.require_stride_order -- a view of a pending value becomes a copy);
 *   - several users, one of them the graph output: realize;
 *   - mark_reuse(users): realize when read by several users and, on cpu, it uses exp or sigmoid,
 *     or it reads more than realize_reads_threshold (4) buffers, or its inner function has more
 *     than realize_opcount_threshold (30) distinct ops (should_realize_on_reuse);
 *   - has_exceeded_max_reads (more than realize_acc_reads_threshold = 8 reads, or > 30 ops):
 *     realize_hint;
 *   - a Pointwise with more than 30 ops: realize;
 *   - a view the graph returns: the storage it looks at is realized (run_node: "Realize so that
 *     outputs are correctly aliased"), and the output reads it as a ReinterpretView.
 *
 * Otherwise the value stays inline in every reader: an upcast bf16 -> f32 read by var_mean and
 * the normalize (1 read, 2 ops) is recomputed in both, as Inductor's output_code.py shows.
 * lw_after_node applies this after every node (core/lowering/lowering.c); lw_users_init counts
 * each node's distinct users as fx's Node.users does. */
#include "lowering/lowering_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inductor's config defaults (torch/_inductor/config.py) */
#define REALIZE_READS_THRESHOLD 4
#define REALIZE_OPCOUNT_THRESHOLD 30
#define REALIZE_ACC_READS_THRESHOLD 8
/* Ours: a closure tree this large (calls, shared subtrees counted each time) is realized
 * before it is even counted, so that re-running it stays cheap (Inductor would recurse). */
#define REALIZE_MAX_CALLS 2048

/* ---- OpCounterCSE: distinct values of one run of an inner function ---- */

typedef struct OcKey { int kind, op; IrVal a[4]; DType dt; double c; const Buffer *buf; const Expr *e; } OcKey;

typedef struct OpCounter {
    OpsHandler h;
    OcKey *keys; int n, cap;
    int reads, nontrivial_reads;
    bool heavy_cpu;          /* exp or sigmoid among the ops */
    bool reads_reduction;    /* loads a realized reduction's buffer */
    const Buffer *want;      /* lw_mark_buffer_mutated: does it load this buffer? */
    bool loads_want;
    SymCtx *s;
} OpCounter;

enum { OC_LOAD, OC_CONST, OC_INDEX, OC_CAST, OC_MATH, OC_RED, OC_ITEM };

/* The value number of key k: an existing equal value's, else a new one. */
static IrVal oc_value(OpCounter *c, const OcKey *k, bool *fresh) {
    for (int i = 0; i < c->n; i++)
        if (!memcmp(&c->keys[i], k, sizeof *k)) { if (fresh) *fresh = false; return i; }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->keys = mi_xrealloc(c->keys, sizeof(OcKey) * c->cap);
    }
    c->keys[c->n] = *k;
    if (fresh) *fresh = true;
    return c->n++;
}

static OcKey oc_key(int kind) { OcKey k; memset(&k, 0, sizeof k); k.kind = kind; k.a[0] = k.a[1] = k.a[2] = -1; return k; }

static IrVal oc_load(OpsHandler *h, Buffer *buf, Expr *index) {
    OpCounter *c = h->self;
    OcKey k = oc_key(OC_LOAD);
    k.buf = buf;
    k.e = index;
    bool fresh;
    IrVal v = oc_value(c, &k, &fresh);
    if (buf && buf->is_reduction) c->reads_reduction = true;
    if (buf && buf == c->want) c->loads_want = true;
    if (fresh) {   /* a read at a constant index (a broadcast scalar) is a trivial one */
        int64_t cst;
        c->reads++;
        if (!sym_is_int(index, &cst)) c->nontrivial_reads++;
    }
    return v;
}
static void oc_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) { (void)h; (void)buf; (void)index; (void)v; }
static IrVal oc_constant(OpsHandler *h, double v, DType dt) {
    OcKey k = oc_key(OC_CONST);
    k.c = v;
    k.dt = dt;
    return oc_value(h->self, &k, NULL);
}
static IrVal oc_index_expr(OpsHandler *h, Expr *e, DType dt) {
    OcKey k = oc_key(OC_INDEX);
    k.e = e;
    k.dt = dt;
    return oc_value(h->self, &k, NULL);
}
static IrVal oc_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    OcKey k = oc_key(OC_CAST);
    k.a[0] = v;
    k.dt = dt;
    (void)src;
    return oc_value(h->self, &k, NULL);
}
static IrVal oc_math(OpsHandler *h, IrMathOp op, const IrVal *args, DType dt) {
    OpCounter *c = h->self;
    OcKey k = oc_key(OC_MATH);
    k.op = op;
    for (int i = 0; i < ir_math_arity(op); i++) k.a[i] = args[i];
    k.dt = dt;
    if (op == IOP_EXP || op == IOP_SIGMOID) c->heavy_cpu = true;
    return oc_value(c, &k, NULL);
}
static IrVal oc_reduction(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) {
    OcKey k = oc_key(OC_RED);
    k.op = rt;
    for (int i = 0; i < ir_reduce_arity(rt); i++) k.a[i] = v[i];
    k.dt = dt;
    (void)src;
    return oc_value(h->self, &k, NULL);
}
static IrVal oc_getitem(OpsHandler *h, IrVal v, int i) {
    OcKey k = oc_key(OC_ITEM);
    k.a[0] = v;
    k.op = i;
    return oc_value(h->self, &k, NULL);
}
static void oc_store_reduction(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) { (void)h; (void)buf; (void)index; (void)v; }
/* ops.bucketize: an op that reads its boundaries buffer */
static IrVal oc_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) {
    OpCounter *c = h->self;
    OcKey k = oc_key(OC_MATH);
    k.op = IOP_COUNT;   /* no math op: a key of its own */
    k.a[0] = v;
    k.a[1] = off;
    k.buf = b->buf;
    k.dt = b->index_dtype;
    bool fresh;
    IrVal r = oc_value(c, &k, &fresh);
    if (fresh) { c->reads++; c->nontrivial_reads++; }
    return r;
}
/* MockHandler.indirect_indexing: the symbol named after the value (sympy_index_symbol(
 * str(index_var)), "tmp16"), so two indirect reads through one value load at one index and
 * count once (the linear interpolation's x[lo] in both lo + (hi - lo) * w terms) */
static Expr *oc_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    OpCounter *c = h->self;
    (void)size; (void)check; (void)wrap_neg;
    if (sym) return sym;
    char nm[32];
    snprintf(nm, sizeof nm, "opc_tmp%d", (int)x);
    return sym_symbol(c->s, nm);
}

/* What Inductor's inner_fn_opcount reports for a pending storage: its inner function run once
 * over index symbols (0 for a dim of size 1, as Loops._index makes them). */
typedef struct OpCount { int num_ops, reads, nontrivial_reads; bool heavy_cpu, reads_reduction; } OpCount;

static OpCount opcount_of(Lower *L, const IrStorage *sb, const Buffer *want, bool *loads_want) {
    OpCounter c;
    memset(&c, 0, sizeof c);
    c.s = L->s;
    c.want = want;
    c.h = (OpsHandler){.self = &c, .load = oc_load, .store = oc_store, .constant = oc_constant,
                       .index_expr = oc_index_expr, .to_dtype = oc_to_dtype, .math = oc_math,
                       .reduction = oc_reduction, .getitem = oc_getitem, .store_reduction = oc_store_reduction,
                       .indirect_indexing = oc_indirect, .store_atomic_add = oc_store, .bucketize = oc_bucketize};
    Expr *idx[MI_MAX_DIMS];
    for (int d = 0; d < sb->ndim && d < MI_MAX_DIMS; d++) {
        int64_t one;
        char nm[16];
        snprintf(nm, sizeof nm, "opc%d", d);
        idx[d] = sym_is_int(sb->size[d], &one) && one == 1 ? sym_int(L->s, 0) : sym_symbol(L->s, nm);
    }
    int cap = L->m->capture;
    L->m->capture = sb->born + 1;   /* inner_fn_opcount runs what the value captured */
    sb->fn->call(sb->fn, &c.h, idx);
    L->m->capture = cap;
    OpCount r = {c.n, c.reads, c.nontrivial_reads, c.heavy_cpu, c.reads_reduction};
    if (loads_want) *loads_want = c.loads_want;
    free(c.keys);
    return r;
}
static OpCount opcount(Lower *L, const IrStorage *sb) { return opcount_of(L, sb, NULL, NULL); }

static bool pending(const IrStorage *sb) { return sb && !sb->buf && sb->fn; }

/* The storage a box computes or looks at (a view's base), when it is still pending. */
static IrStorage *pending_of(IrTBox *t) {
    IrStorage *sb = t->is_view ? t->view_of : t->sb;
    return pending(sb) ? sb : NULL;
}

/* StorageBox.realize_hint: realize when more than one read is at a non-constant index. */
static void realize_hint(Lower *L, IrStorage *sb) {
    if (pending(sb) && opcount(L, sb).nontrivial_reads > 1) lw_realize(L, sb, NULL);
}

int lw_pending_opcount(Lower *L, const IrStorage *sb, bool *reads_reduction) {
    OpCount c = opcount(L, sb);
    if (reads_reduction) *reads_reduction = c.reads_reduction;
    return c.num_ops;
}

bool lw_reads_no_buffer(Lower *L, IrTBox *t) {
    IrStorage *sb = pending_of(t);
    if (!sb || (t->is_view && t->view_of != sb)) return false;
    return opcount(L, sb).reads == 0;
}

void lw_realize_hint(Lower *L, IrTBox *t) {
    IrStorage *sb = pending_of(t);
    if (sb) realize_hint(L, sb);
}

/* GraphLowering.mark_buffer_mutated(name), which MutationLayoutSHOULDREMOVE and MutationOutput
 * call: "when a buffer is mutated we need to make sure all the reads to the old version are
 * realized before the mutation happens" -- every node value still pending (or a view of a
 * pending value) that loads b is realized now, so its kernel is scheduled before the store that
 * overwrites b (add_scatter calls it for the Scatter's MutationLayoutSHOULDREMOVE,
 * lw_alias_into_input for realize_into's; a copy_ into a graph input keeps lw_mutate_input's
 * own order: it is an epilogue, run after every reader). Example: x realized, y = x + 1
 * pending, index_put_(x, i, v): y becomes a buffer before the scatter, and reads x's old values. */
void lw_mark_buffer_mutated(Lower *L, const Buffer *b) {
    if (!b) return;
    for (int i = 0; i < L->g->n; i++) {
        LVal *lv = &L->vals[i];
        IrTBox *one = lv->kind == LV_TBOX ? lv->t : NULL;
        int nt = lv->kind == LV_TUPLE ? lv->n : one != NULL;
        for (int k = 0; k < nt; k++) {
            IrTBox *t = lv->kind == LV_TUPLE ? lv->items[k] : one;
            IrStorage *sb = t ? pending_of(t) : NULL;
            bool loads = false;
            if (!sb) continue;
            opcount_of(L, sb, b, &loads);
            if (loads) lw_realize(L, sb, NULL);
        }
    }
}

/* StorageBox.should_realize_on_reuse(users) */
static bool realize_on_reuse(Lower *L, IrStorage *sb, int users) {
    if (users <= 1) return false;
    OpCount c = opcount(L, sb);
    if (L->dev.kind == DEV_CPU && c.heavy_cpu) return true;
    return c.reads > REALIZE_READS_THRESHOLD || c.num_ops > REALIZE_OPCOUNT_THRESHOLD;
}

/* TensorBox.mark_reuse(users), as lowering.py's expand calls it before broadcasting a tensor
 * to a shape with users = numel(shape) / numel(tensor) copies of each element: a pending value
 * re-read that often is realized when it costs (should_realize_on_reuse: more than 4 reads, more
 * than 30 ops, exp/sigmoid on cpu). Static sizes only (Inductor's size hints). Example: an
 * unrolled column count sum(x != 0, dim=0) of 6 rows broadcast over the 6 rows is a buffer. */
void lw_mark_reuse(Lower *L, IrTBox *t, int ndim, Expr *const *size) {
    IrStorage *sb = pending_of(t);
    if (!sb) return;
    int64_t from = 1, to = 1, v;
    for (int d = 0; d < t->ndim; d++) {
        if (!sym_is_int(t->size[d], &v)) return;
        from *= v;
    }
    for (int d = 0; d < ndim; d++) {
        if (!sym_is_int(size[d], &v)) return;
        to *= v;
    }
    if (from > 0 && to / from > 1) lw_mark_reuse_users(L, t, to / from);
}

/* TensorBox.mark_reuse(users) with the count given (lowering.py's unfold: ceil(windows * size /
 * dim size) reads of each element): a pending value that costs is realized. */
void lw_mark_reuse_users(Lower *L, IrTBox *t, int64_t users) {
    IrStorage *sb = pending_of(t);
    if (sb && users > 1 && realize_on_reuse(L, sb, (int)(users > 1 << 20 ? 1 << 20 : users))) lw_realize(L, sb, NULL);
}

/* lowering.py's needs_realized_inputs: the ops registered with add_needs_realized_inputs, and
 * every op lowered by make_fallback (no lowering of ours: our FallbackKernel; attention). */
static bool needs_realized_inputs(const Node *u) {
    static const char *const ops[] = {
        "aten.as_strided.default", "aten.as_strided_copy.default", "aten.avg_pool2d.default",
        "aten.avg_pool2d_backward.default", "aten.bmm.default", "aten.convolution.default",
        "aten.convolution_backward.default", "aten.max_pool2d_with_indices.default",
        "aten.max_pool3d_with_indices.default", "aten.max_pool2d_with_indices_backward.default",
        "aten.mm.default", "aten.upsample_nearest2d.default", "aten._upsample_nearest_exact2d.default",
        "aten._int_mm.default",
        "aten._scaled_dot_product_flash_attention_for_cpu.default",
        "aten._scaled_dot_product_efficient_attention.default",
        "aten._scaled_dot_product_flash_attention.default",
        "aten._scaled_dot_product_cudnn_attention.default",
    };
    if (u->kind != N_CALL_FUNCTION || !u->target) return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(u->target, ops[i])) return true;
    return !lowering_find(u->target) && strncmp(u->target, "higher_order.", 13) != 0;
}

/* run_node's need_fixed_layout: users that want a value with several users in its eager
 * stride order (mm, _int_mm, convolution_backward; convolution too unless layout_opt: its input
 * is then channels last). The mkldnn / mkl ops of that list come from freezing passes only. */
static bool need_fixed_layout(const Lower *L, const Node *u) {
    if (u->kind != N_CALL_FUNCTION || !u->target) return false;
    return !strcmp(u->target, "aten.mm.default") || !strcmp(u->target, "aten._int_mm.default") ||
           !strcmp(u->target, "aten.convolution_backward.default") ||
           (!L->layout_opt && !strcmp(u->target, "aten.convolution.default"));
}

/* Is n returned by the graph (a user is the output node) with strides to keep: a tensor of at
 * least one dim (Inductor: len(strides) > 0) whose meta matches the pending value? Not in a
 * cond branch or a decomposition's scratch graph (their outputs are copied by the caller). */
static bool returned_with_strides(Lower *L, const Node *n, int i, const IrStorage *sb) {
    if (L->branch || L->scratch || i < 0 || !n->has_meta || n->meta.ndim == 0 || n->meta.ndim != sb->ndim || n->meta.dtype != sb->dtype)
        return false;
    for (int d = 0; d < sb->ndim; d++)
        if (n->meta.size[d] != sb->size[d]) return false;
    for (int k = 0; k < L->nusers[i]; k++)
        if (L->users[i][k]->kind == N_OUTPUT) return true;
    return false;
}

/* torch._prims_common.is_non_overlapping_and_dense of a meta: the dims of size > 1, taken by
 * their strides, step 1, then each the product of the sizes before. */
static bool dense_meta(Lower *L, const TensorMeta *m) {
    bool used[MI_MAX_DIMS] = {0};
    int64_t one;
    for (int d = 0; d < m->ndim; d++) used[d] = sym_is_int(m->size[d], &one) && one == 1;
    Expr *next = NULL;
    for (int k = 0; k < m->ndim; k++) {
        int at = -1;
        for (int d = 0; d < m->ndim && at < 0; d++)
            if (!used[d] && (next ? m->stride[d] == next : sym_is_int(m->stride[d], &one) && one == 1)) at = d;
        if (at < 0) break;
        used[at] = true;
        next = next ? sym_mul(L->s, next, m->size[at]) : m->size[at];
    }
    for (int d = 0; d < m->ndim; d++) if (!used[d]) return false;
    return true;
}

/* a graph output reads node position i */
static bool returned(Lower *L, int i) {
    for (int k = 0; i >= 0 && k < L->nusers[i]; k++)
        if (L->users[i][k]->kind == N_OUTPUT) return true;
    return false;
}

/* run_node's maybe_apply_channels_last_stride_order, applied before a value is realized for
 * reuse (should_realize_on_reuse) or for its accumulated reads (has_exceeded_max_reads): a dense
 * 4-d value of nodes_prefer_channels_last, not user visible and not read by an as_strided op, is
 * required channels-last (require_stride_order realizes a pending one in that order). True when
 * applied. Example: an inception block's 3x3 max pool (9 reads of the input) feeding only a cat is
 * realized [486, 1, 54, 6] next to the pools the convolutions read, and fuses with them. */
static bool channels_last_first(Lower *L, const Node *n, int i, LVal *lv) {
    Expr *st[4];
    int order[4];
    if (lv->t->ndim != 4 || !lw_output_channels_last(L, n, st) || !ir_stride_order(st, 4, order)) return false;
    for (int k = 0; k < L->nusers[i]; k++) {
        const char *u = L->users[i][k]->target;
        if (u && (!strcmp(u, "aten.as_strided.default") || !strcmp(u, "aten.as_strided_.default") ||
                  !strcmp(u, "aten.as_strided_scatter.default") || !strcmp(u, "aten.resize.default") ||
                  !strcmp(u, "aten.resize_as.default")))
            return false;   /* is_input_for_as_strided */
    }
    lv->t = lw_require_stride_order(L, lv->t, order);
    return true;
}

void lw_after_node(Lower *L, const Node *n) {
    LVal *lv = lw_node_val(L, n);
    if (!lv || lv->kind != LV_TBOX || !lv->t) return;
    IrTBox *t = lv->t;
    int i = graph_index_of(L->g, n);
    if (t->is_view && !L->branch && !L->scratch && returned(L, i)) {
        /* run_node: "Realize so that outputs are correctly aliased", then the returned view
         * is required in its eager stride order (a dense one) */
        IrStorage *base = pending_of(t);
        if (base) lw_realize(L, base, NULL);
        if (n->has_meta && n->meta.ndim == t->ndim && t->ndim > 0 && dense_meta(L, &n->meta))
            lv->t = lw_require_stride_order_box(L, t, n->meta.stride);
        return;
    }
    int users = i >= 0 ? L->nusers[i] : 0;
    if (users > 1 && !L->branch && !L->scratch && n->has_meta && n->meta.ndim == t->ndim && t->ndim > 0) {
        /* run_node, user by user: realize_hint for needs_realized_inputs, then the eager
         * stride order for need_fixed_layout (the value may become a copy from here on) */
        for (int k = 0; k < users; k++) {
            const Node *u = L->users[i][k];
            if (needs_realized_inputs(u) && pending_of(t)) realize_hint(L, pending_of(t));
            if (need_fixed_layout(L, u)) { lv->t = t = lw_require_stride_order_box(L, t, n->meta.stride); break; }
        }
    }
    if (!t->is_view && t->sb && t->sb->buf && t->sb->buf->kind == BUF_EXTERN && !L->branch && !L->scratch && returned(L, i) &&
        n->has_meta && n->meta.ndim == t->ndim && t->ndim > 0) {
        /* run_node: a returned extern result (a convolution laid out channels-last, a
         * fallback's output) gets its eager strides at its own node (require_exact_strides):
         * the copy kernel comes right after the extern, not at the graph's output. Example:
         * glow's forward returns conv2d's output: its NCHW copy precedes the slogdet */
        Expr *st[MI_MAX_DIMS];
        memcpy(st, n->meta.stride, sizeof(Expr *) * (size_t)t->ndim);
        lw_output_channels_last(L, n, st);       /* a saved activation near convolutions stays channels-last */
        lv->t = lw_require_exact_strides(L, t, st);
        return;
    }
    IrStorage *sb = pending_of(t);
    if (!sb) return;
    if (!t->is_view && returned_with_strides(L, n, i, sb)) {
        /* GraphLowering.run_node: a value the graph returns gets its eager strides here
         * (ExternKernel.require_exact_strides), so a pending one is realized at its own node --
         * before a later node (a copy_ into an input) realizes what it reads */
        Layout l = layout_contiguous(L->m, n->meta.dtype, n->meta.device, n->meta.ndim, n->meta.size);
        for (int d = 0; d < l.ndim; d++) l.stride[d] = n->meta.stride[d];
        l.fixed = true;
        lw_realize(L, sb, &l);
        return;
    }
    if (sb->fn->cost > REALIZE_MAX_CALLS) { lw_realize(L, sb, NULL); return; }
    if (t->is_view)   /* a returned view: its storage is realized, the output a ReinterpretView of it */
        for (int k = 0; k < users; k++)
            if (L->users[i][k]->kind == N_OUTPUT) { lw_realize(L, sb, NULL); return; }
    if (users > 1) {
        for (int k = 0; k < users && pending(sb); k++) {
            const Node *u = L->users[i][k];
            if (needs_realized_inputs(u)) realize_hint(L, sb);
            if (u->kind == N_OUTPUT && !t->is_view) lw_realize(L, sb, NULL);
        }
        if (pending(sb) && realize_on_reuse(L, sb, users) && !channels_last_first(L, n, i, lv)) lw_realize(L, sb, NULL);
        if (lv->t != t) return;
    }
    if (t->is_view || !pending(sb)) return;
    OpCount c = opcount(L, sb);
    if (c.reads > REALIZE_ACC_READS_THRESHOLD || c.num_ops > REALIZE_OPCOUNT_THRESHOLD) {   /* has_exceeded_max_reads */
        if (channels_last_first(L, n, i, lv)) return;
        if (c.nontrivial_reads > 1) lw_realize(L, sb, NULL);
    }
    if (pending(sb) && c.num_ops > REALIZE_OPCOUNT_THRESHOLD) lw_realize(L, sb, NULL);   /* has_large_inner_fn */
}

/* ---- users ---- */

typedef struct UseCtx { Lower *L; int user; int *last; bool fill; } UseCtx;

static void add_use(Node *x, void *ud) {
    UseCtx *u = ud;
    int j = graph_index_of(u->L->g, x);
    if (j < 0 || u->last[j] == u->user) return;   /* fx counts a user once: add(x, x) */
    u->last[j] = u->user;
    if (u->fill) u->L->users[j][u->L->nusers[j]] = u->L->g->nodes[u->user];
    u->L->nusers[j]++;
}

void lw_users_init(Lower *L) {
    const Graph *g = L->g;
    int n = g->n;
    L->nusers = mi_xcalloc(n ? n : 1, sizeof(int));
    L->users = mi_xcalloc(n ? n : 1, sizeof(const Node **));
    int *last = mi_xcalloc(n ? n : 1, sizeof(int));
    for (int pass = 0; pass < 2; pass++) {
        UseCtx u = {L, 0, last, pass == 1};
        for (int j = 0; j < n; j++) last[j] = -1;
        if (pass == 1)
            for (int j = 0; j < n; j++) {
                L->users[j] = mi_xcalloc(L->nusers[j] ? L->nusers[j] : 1, sizeof(const Node *));
                L->nusers[j] = 0;
            }
        for (int i = 0; i < n; i++) {
            const Node *x = g->nodes[i];
            u.user = i;
            for (int a = 0; a < x->nargs; a++) value_for_each_node(&x->args[a], add_use, &u);
            for (int a = 0; a < x->nkwargs; a++) value_for_each_node(&x->kwargs[a].v, add_use, &u);
        }
    }
    free(last);
}

void lw_users_free(Lower *L) {
    for (int j = 0; L->users && j < L->g->n; j++) free(L->users[j]);
    free(L->users);
    free(L->nusers);
    L->users = NULL;
    L->nusers = NULL;
}
