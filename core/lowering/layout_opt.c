/* layout_opt.c — Inductor's layout optimization and stride requirements (graph.py
 * GraphLowering.decide_layout_opt, find_nodes_prefer_channels_last, the output-stride rule of
 * run_node; ir.py ExternKernel.require_stride_order / require_exact_strides).
 *
 * A graph with convolutions may run them channels last (layout_opt): the convolution lowering
 * (lowering_extern.c) then requires its input and weight in channels-last order. A buffer whose
 * layout is still flexible is simply laid out that way (its body is recorded again, core/ir/
 * ir_layout.c); a fixed one (a graph input, an extern result) is copied by a new kernel, which
 * is where Inductor's extra copy kernels come from. The outputs a training forward saves for its
 * backward that sit next to convolutions (nodes_prefer_channels_last) are returned channels last
 * too, so a weight that is both saved and convolved is copied once, at its placeholder. */
#include "lowering/lowering_impl.h"

#include <stdlib.h>
#include <string.h>

static bool is_conv(const Node *n) {
    return n->kind == N_CALL_FUNCTION && n->target && !strcmp(n->target, "aten.convolution.default");
}

/* utils.is_mkldnn_conv: the oneDNN convolutions freezing leaves in a graph */
static bool is_mkldnn_conv(const Node *n) {
    static const char *const t[] = {"mkldnn._convolution_pointwise.default", "mkldnn._convolution_pointwise.binary",
                                    "mkldnn._convolution_pointwise_.binary", "mkldnn._convolution_transpose_pointwise.default"};
    if (n->kind != N_CALL_FUNCTION || !n->target) return false;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(n->target, t[i])) return true;
    return false;
}

static const TensorMeta *arg_meta(const Node *n, int i) {
    return i < n->nargs && n->args[i].kind == V_NODE && n->args[i].node->has_meta ? &n->args[i].node->meta : NULL;
}

/* size k of a static shape (-1 when symbolic or absent) */
static int64_t dim_of(const TensorMeta *m, int k) {
    int64_t v;
    return m && k < m->ndim && sym_is_int(m->size[k], &v) ? v : -1;
}

static bool has_free_symbols(const TensorMeta *m) {
    for (int d = 0; m && d < m->ndim; d++)
        if (!sym_is_int(m->size[d], NULL) || !sym_is_int(m->stride[d], NULL)) return true;
    return false;
}

/* flop_counter.conv_flop_count (what count_flops_fx reports for a convolution): batch * c_out *
 * c_in * prod(kernel) * prod(spatial of the output, of the input when transposed) * 2; -1 when a
 * shape is symbolic (count_flops_fx gives None) */
static double conv_flops(const Node *n) {
    const TensorMeta *x = arg_meta(n, 0), *w = arg_meta(n, 1), *o = n->has_meta ? &n->meta : NULL;
    const Value *tv = lw_arg_or_kw(n, 6, "transposed");
    bool transposed = tv && tv->kind == V_BOOL && tv->b;
    const TensorMeta *sp = transposed ? x : o;
    if (!x || !w || !sp || x->ndim < 1 || w->ndim < 2) return -1;
    double f = 2;
    int64_t v;
    for (int d = 0; d < w->ndim; d++) { if ((v = dim_of(w, d)) < 0) return -1; f *= (double)v; }
    for (int d = 2; d < sp->ndim; d++) { if ((v = dim_of(sp, d)) < 0) return -1; f *= (double)v; }
    if ((v = dim_of(x, 0)) < 0) return -1;
    return f * (double)v;
}

static bool is_grouped(const Node *n) {
    int64_t g = 1;
    lw_arg_int(n, 8, "groups", &g);
    return g > 1 && dim_of(arg_meta(n, 1), 1) > 1;
}
static bool is_in_out_channel(const Node *n) {
    const TensorMeta *w = arg_meta(n, 1);
    return dim_of(w, 0) * 2 <= dim_of(w, 1) && dim_of(w, 2) > 1;
}
static bool is_small_channel(const Node *n) {
    const TensorMeta *w = arg_meta(n, 1);
    return dim_of(w, 0) <= 64 && dim_of(w, 1) <= 64;
}

bool lw_decide_layout_opt(const Graph *g, bool inference) {
    /* config.layout_optimization is on and force_layout_optimization off by default */
    const Node *conv[512];
    int nconv = 0;
    bool all_cpu = true;
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (!is_conv(n) && !is_mkldnn_conv(n)) continue;
        if (nconv < 512) conv[nconv++] = n;
        for (int a = 0; a < 2; a++) {
            const TensorMeta *m = arg_meta(n, a);
            if (!m || m->device.kind != DEV_CPU) all_cpu = false;   /* SUPPORTED_MKLDNN_DEVICES */
        }
    }
    if (nconv == 0) return false;
    if (all_cpu) return true;   /* mkldnn enabled and available: always channels last on cpu */
    if (g->n >= 300 * nconv) return false;   /* only a few convolutions */
    for (int c = 0; c < nconv; c++)
        if (has_free_symbols(arg_meta(conv[c], 0)) || has_free_symbols(arg_meta(conv[c], 1))) return false;
    if (inference) {
        /* the benchmarked channels-last speed-up per kind of convolution, weighted by flops */
        double total = 0, weighted = 0;
        for (int c = 0; c < nconv; c++) {
            if (!is_conv(conv[c])) continue;
            double f = conv_flops(conv[c]);
            if (f < 0) continue;
            double mult = is_grouped(conv[c]) ? 1.358 : is_small_channel(conv[c]) ? 0.783 : is_in_out_channel(conv[c]) ? 0.725 : 0.823;
            total += f;
            weighted += f * mult;
        }
        return weighted <= total;
    }
    bool all_small = true;
    for (int c = 0; c < nconv; c++) {
        if (!is_conv(conv[c])) continue;
        if (is_grouped(conv[c]) || is_in_out_channel(conv[c])) return false;
        all_small &= is_small_channel(conv[c]);
    }
    return !all_small;
}

/* find_nodes_prefer_channels_last: backwards, a convolution and every node one of whose users
 * is in the set (bmm stops it); then forwards up to the last convolution, the users of the set's
 * nodes join it. */
static void prefer_channels_last(Lower *L, bool *set) {
    const Graph *g = L->g;
    int last_conv = -1;
    for (int i = g->n - 1; i >= 0; i--) {
        const Node *n = g->nodes[i];
        if (is_conv(n)) { set[i] = true; if (last_conv < 0) last_conv = i; continue; }
        if (n->target && !strcmp(n->target, "aten.bmm.default")) continue;
        if (is_mkldnn_conv(n)) { set[i] = true; continue; }
        for (int k = 0; k < L->nusers[i] && !set[i]; k++) set[i] = set[graph_index_of(g, L->users[i][k])];
    }
    for (int i = 0; i < g->n; i++) {
        if (i == last_conv) break;
        if (!set[i]) continue;
        for (int k = 0; k < L->nusers[i]; k++) {
            const Node *u = L->users[i][k];
            if (u->target && !strcmp(u->target, "aten.bmm.default")) continue;
            set[graph_index_of(g, u)] = true;
        }
    }
}

void lw_layout_opt_init(Lower *L) {
    const Graph *g = L->g;
    L->layout_opt = !L->branch && lw_decide_layout_opt(g, !graph_is_training(g));
    L->prefer_cl = mi_xcalloc(g->n ? g->n : 1, sizeof(bool));
    L->prefer_g = g;
    if (L->layout_opt) prefer_channels_last(L, L->prefer_cl);
}

/* The output positions of g's output node that are user visible (compile_fx's
 * user_visible_output_idxs): every output of an inference or backward graph; of a training
 * forward, the model's own outputs, which AOT Autograd puts before the tensors saved for the
 * backward. The graph text does not say how many there are, so they are taken to end at the first
 * returned graph input (the saved values begin with the saved primals_*). */
static bool user_visible(const Lower *L, const Node *n) {
    const Graph *g = L->g;
    const Node *out = NULL;
    bool backward = false, training = graph_is_training(g);
    for (int i = 0; i < g->n; i++) {
        if (g->nodes[i]->kind == N_OUTPUT) out = g->nodes[i];
        if (g->nodes[i]->kind == N_PLACEHOLDER && !strncmp(g->nodes[i]->name, "tangents_", 9)) backward = true;
    }
    if (!out || out->nargs < 1) return false;
    const Value *v = &out->args[0];
    int nitems = v->kind == V_TUPLE || v->kind == V_LIST ? v->list.n : 1;
    const Value *items = v->kind == V_TUPLE || v->kind == V_LIST ? v->list.items : v;
    bool saved = false;
    for (int j = 0; j < nitems; j++) {
        const Node *x = items[j].kind == V_NODE ? items[j].node : NULL;
        if (training && !backward && x && x->kind == N_PLACEHOLDER) saved = true;
        if (x == n && !saved) return true;
    }
    return false;
}

/* is_non_overlapping_and_dense of a static meta */
static bool dense(const TensorMeta *m) {
    int64_t sz[MI_MAX_DIMS], st[MI_MAX_DIMS];
    int idx[MI_MAX_DIMS], n = 0;
    for (int d = 0; d < m->ndim; d++) {
        if (!sym_is_int(m->size[d], &sz[n]) || !sym_is_int(m->stride[d], &st[n])) return false;
        if (sz[n] != 1) { idx[n] = n; n++; }
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && st[idx[j]] < st[idx[j - 1]]; j--) { int t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t; }
    int64_t want = 1;
    for (int i = 0; i < n; i++) {
        if (st[idx[i]] != want) return false;
        want *= sz[idx[i]];
    }
    return true;
}

bool lw_output_channels_last(Lower *L, const Node *n, Expr **stride) {
    int i = graph_index_of(L->g, n);
    if (!L->layout_opt || L->prefer_g != L->g || i < 0 || !L->prefer_cl[i] || !n->has_meta || n->meta.ndim != 4 || !dense(&n->meta) ||
        user_visible(L, n))
        return false;
    static const int nhwc[4] = {3, 0, 2, 1};
    ir_strides_for_order(L->s, n->meta.size, 4, nhwc, stride);
    return true;
}

/* ---- require_stride_order / require_exact_strides ---- */

static bool numel_le_one(const IrTBox *t) {
    int64_t n = 1, v;
    for (int d = 0; d < t->ndim; d++) {
        if (!sym_is_int(t->size[d], &v)) return false;
        n *= v;
    }
    return n <= 1;
}

/* strides equal where the size is not 1 (significant_strides_equal) */
static bool strides_match(const Layout *l, Expr *const *stride) {
    for (int d = 0; d < l->ndim; d++) {
        int64_t one;
        if (!(sym_is_int(l->size[d], &one) && one == 1) && l->stride[d] != stride[d]) return false;
    }
    return true;
}

/* copy_input + freeze: a new kernel copying t into `stride` (origins: the node being lowered) */
static IrTBox *copy_into(Lower *L, IrTBox *t, Expr *const *stride) {
    Layout l = layout_contiguous(L->m, t->dtype, L->dev, t->ndim, t->size);
    if (L->cur && L->cur->has_meta) l.device = L->cur->meta.device;
    for (int d = 0; d < t->ndim; d++) l.stride[d] = stride[d];
    l.fixed = true;
    const char **o = NULL;
    int no = 0;
    if (L->cur && L->cur->kind == N_CALL_FUNCTION) lw_origins_add(L, &o, &no, lw_short_name(L, L->cur->target));
    IrStorage *sb = lw_storage_new(L, t->loader, t->dtype, t->ndim, t->size, o, no);
    lw_realize(L, sb, &l);
    return lw_tbox_of_storage(L, sb);
}

/* Both requirements: `order` (stride order) or `exact` strides. */
static IrTBox *require(Lower *L, IrTBox *t, const int *order, Expr *const *exact) {
    Expr *want[MI_MAX_DIMS];
    if (exact) memcpy(want, exact, sizeof(Expr *) * (size_t)t->ndim);
    else ir_strides_for_order(L->s, t->size, t->ndim, order, want);
    IrStorage *sb = t->is_view ? NULL : t->sb;
    if (sb && !sb->buf && sb->fn) {   /* pending: realized in the wanted layout */
        Layout l = layout_contiguous(L->m, t->dtype, L->dev, t->ndim, t->size);
        if (L->cur && L->cur->has_meta) l.device = L->cur->meta.device;
        for (int d = 0; d < t->ndim; d++) l.stride[d] = want[d];
        l.fixed = true;
        lw_realize(L, sb, &l);
        return t;
    }
    if (sb && sb->buf) {
        Buffer *b = sb->buf;
        bool ok = order ? ir_layout_stride_ordered(&b->layout, order) : strides_match(&b->layout, want);
        if (!b->layout.fixed && b->kind == BUF_COMPUTED && !b->mutates) {
            if (!ok || (exact && !strides_match(&b->layout, want))) {
                ir_relayout(L->m, b, want);
                L->relaid = true;
            }
            b->layout.fixed = true;
            return t;
        }
        if (ok) return t;
        return copy_into(L, t, want);
    }
    /* a view: a ReinterpretView when its strides already fit (convert_to_reinterpret_view, which
     * first freezes the buffer under it: channels-last where the eager value is, so a permute of
     * a channels-last value returned in NHWC order is a view of it, not a copy) */
    Buffer *b;
    Layout v;
    IrStorage *base = t->view_of;
    if (base && base->buf) lw_freeze_under_view(L, base->buf);
    if (base && base->buf && ir_probe_strided(L->m, t->loader, t->ndim, t->size, &b, &v) &&
        (order ? ir_layout_stride_ordered(&v, order) : strides_match(&v, want))) {
        b->layout.fixed = true;
        return t;
    }
    return copy_into(L, t, want);
}

IrTBox *lw_require_stride_order(Lower *L, IrTBox *t, const int *order) {
    if (!t || numel_le_one(t)) return t;
    return require(L, t, order, NULL);
}

IrTBox *lw_require_exact_strides(Lower *L, IrTBox *t, Expr *const *stride) {
    return t ? require(L, t, NULL, stride) : t;
}

void lw_layout_opt_output_rule(Lower *L, const Node *n) {
    Expr *st[4];
    LVal *lv = lw_node_val(L, n);
    if (!lv || lv->kind != LV_TBOX || !lv->t || lv->t->ndim != 4 || !lw_output_channels_last(L, n, st)) return;
    int i = graph_index_of(L->g, n);
    bool is_output = false;
    for (int k = 0; k < L->nusers[i]; k++) is_output |= L->users[i][k]->kind == N_OUTPUT;
    if (!is_output) return;
    if (lv->t->is_view) {
        int order[4];
        if (ir_stride_order(st, 4, order)) lv->t = lw_require_stride_order(L, lv->t, order);
    } else
        lv->t = lw_require_exact_strides(L, lv->t, st);
}
