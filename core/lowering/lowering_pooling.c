/* lowering_pooling.c — pooling lowerings, as Inductor's pooling lowerings (torch/_inductor,
 * lowering.py's max_pool / avg_pool / adaptive pooling): max pooling is a max and an argmax
 * Reduction over the kernel window (prims._low_memory_max_pool_with_offsets keeps the argmax as
 * an int8 offset inside the window; _low_memory_max_pool_offsets_to_indices turns offsets into
 * flat input indices), avg pooling a sum Reduction divided by the window size or the count of
 * covered elements, the backward of max pooling a Pointwise that gathers the gradient of every
 * pooled position whose window covers an input element, adaptive avg pooling a Pointwise over
 * the largest window, fractional max pooling a max and an argmax over windows that start where
 * its random samples put them. Windows too large to inline (> 25 elements) and dilated backward
 * fall back, as Inductor does. The avg / nearest-upsampling backwards: lowering_pooling_backward.c. */
#include "lowering/lowering_impl.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define POOL_MAX_WINDOW LW_POOL_MAX_WINDOW

/* An int list argument padded to n entries (one entry repeats; empty: dflt[], or 0). */
static int pool_list(const Node *n, int i, const char *kw, int nd, const int64_t *dflt, int64_t *out) {
    const Value *v = lw_arg_or_kw(n, i, kw);
    int64_t tmp[8];
    int c = v && v->kind != V_NONE ? lw_int_list(v, tmp, 8) : 0;
    if (c < 0 || c > nd) return -1;
    for (int j = 0; j < nd; j++) out[j] = c == 0 ? (dflt ? dflt[j] : 0) : c == 1 ? tmp[0] : tmp[j];
    return 0;
}

/* max_pool_checks / _avg_poolnd's argument normalization: stride defaults to the kernel, padding
 * to 0, dilation to 1. Positions: kernel_size at argi, then stride, padding, [dilation,] ceil. */
int lw_pool_args(Lower *L, const Node *n, int argi, int nd, bool has_dilation, PoolArgs *pa) {
    static const int64_t ones[3] = {1, 1, 1};
    pa->n = nd;
    if (pool_list(n, argi, "kernel_size", nd, NULL, pa->k) < 0 || pool_list(n, argi + 1, "stride", nd, pa->k, pa->s) < 0 ||
        pool_list(n, argi + 2, "padding", nd, NULL, pa->p) < 0 ||
        (has_dilation ? pool_list(n, argi + 3, "dilation", nd, ones, pa->d) : pool_list(n, -1, "dilation", nd, ones, pa->d)) < 0)
        return lw_err(L, n, "'%s': bad kernel_size, stride, padding or dilation", n->target);
    for (int i = 0; i < nd; i++)
        if (pa->k[i] <= 0 || pa->s[i] <= 0 || pa->d[i] <= 0 || pa->p[i] < 0)
            return lw_err(L, n, "'%s': kernel_size, stride and dilation must be positive, padding >= 0", n->target);
    int64_t c = 0;
    lw_arg_int(n, argi + (has_dilation ? 4 : 3), "ceil_mode", &c);
    pa->ceil = c != 0;
    return 0;
}

/* pooling_size: out = (x + 2p - d(k-1) + (s-1)) // s; with ceil_mode one more window when it
 * starts inside the input or the left padding (then *ceil stays true, else it is a no-op). */
Expr *lw_pool_out_size(Lower *L, Expr *x, const PoolArgs *pa, int i, bool *ceil) {
    SymCtx *s = L->s;
    int64_t base = 2 * pa->p[i] - pa->d[i] * (pa->k[i] - 1);
    Expr *out = sym_floordiv(s, sym_add(s, x, sym_int(s, base + pa->s[i] - 1)), sym_int(s, pa->s[i]));
    *ceil = false;
    if (!pa->ceil) return out;
    Expr *alt = sym_floordiv(s, sym_add(s, x, sym_int(s, base + 2 * (pa->s[i] - 1))), sym_int(s, pa->s[i]));
    int64_t xv, av, ov;
    if (sym_is_int(x, &xv) && sym_is_int(alt, &av) && (av - 1) * pa->s[i] >= xv + pa->p[i]) alt = sym_int(s, av - 1);
    if (sym_is_int(alt, &av) && sym_is_int(out, &ov) && av == ov) return out;
    *ceil = true;
    return alt;
}

/* The lowest value of dt (what padding reads as for max pooling). */
static double dtype_lowest(DType dt) {
    switch (dt) {
    case DT_BOOL: return 0;
    case DT_U8: return 0;
    case DT_I8: return INT8_MIN;
    case DT_I16: return INT16_MIN;
    case DT_I32: return INT32_MIN;
    case DT_I64: return (double)INT64_MIN;
    default: return -INFINITY;
    }
}

/* x read at the window element (out dims o, window dims r): [*batch, o_i*s + r_i*d - p]; when
 * `masked`, positions outside x read `fill` (constant_boundary_condition; the index is clamped
 * so the discarded load stays in bounds). Result: a TensorBox of [*batch, *out, *kernel]. */
static IrTBox *pool_window(Lower *L, IrTBox *x, const PoolArgs *pa, Expr **osize, bool masked, double fill) {
    SymCtx *s = L->s;
    int n = pa->n, nb = x->ndim - n, nd = nb + 2 * n;
    Expr *map[MI_MAX_DIMS], *size[MI_MAX_DIMS];
    const IrFn *mask = NULL;
    for (int d = 0; d < nb; d++) { map[d] = lw_var(L, d); size[d] = x->size[d]; }
    for (int i = 0; i < n; i++) {
        size[nb + i] = osize[i];
        size[nb + n + i] = sym_int(s, pa->k[i]);
        Expr *ih = sym_add(s, sym_add(s, sym_mul(s, lw_var(L, nb + i), sym_int(s, pa->s[i])),
                                       sym_mul(s, lw_var(L, nb + n + i), sym_int(s, pa->d[i]))), sym_int(s, -pa->p[i]));
        Expr *xs = x->size[nb + i];
        if (!masked) { map[nb + i] = ih; continue; }
        map[nb + i] = sym_max(s, sym_int(s, 0), sym_min(s, ih, sym_sub(s, xs, sym_int(s, 1))));
        const IrFn *ie = lw_index_expr(L, ih, nd, DT_I64);
        const IrFn *ok = lw_math(L, IOP_LOGICAL_AND, DT_BOOL, lw_math(L, IOP_GE, DT_BOOL, ie, lw_const(L, 0, DT_I64), NULL),
                                 lw_math(L, IOP_LT, DT_BOOL, ie, lw_index_expr(L, xs, nd, DT_I64), NULL), NULL);
        mask = mask ? lw_math(L, IOP_LOGICAL_AND, DT_BOOL, mask, ok, NULL) : ok;
    }
    const IrFn *ld = lw_reindex(L, x->loader, nd, map, x->ndim);
    if (mask) ld = lw_math(L, IOP_WHERE, x->dtype, mask, ld, lw_const(L, fill, x->dtype));
    IrTBox *w = lw_tbox_new(L, x->dtype, nd, size, ld);
    lw_origins_merge(L, &w->origins, &w->norigins, x);   /* a pending x folds into the reduction */
    return w;
}

/* Max and argmax (offset inside the window, int64) of every window of x. */
static int max_pool_offsets(Lower *L, const Node *n, IrTBox *x, const PoolArgs *pa, IrTBox **vals, IrTBox **offs) {
    int nb = x->ndim - pa->n;
    if (nb < 1 || nb > 2) return lw_err(L, n, "'%s' needs a %d-d or %d-d input", n->target, pa->n + 1, pa->n + 2);
    lw_realize_hint(L, x);
    Expr *osize[3];
    bool any_ceil = false, pad = false;
    for (int i = 0; i < pa->n; i++) {
        bool c;
        osize[i] = lw_pool_out_size(L, x->size[nb + i], pa, i, &c);
        any_ceil |= c;
        pad |= pa->p[i] != 0 || pa->d[i] > 1;
    }
    IrTBox *w = pool_window(L, x, pa, osize, pad || any_ceil, dtype_lowest(x->dtype));
    bool red[MI_MAX_DIMS] = {0};
    for (int i = 0; i < pa->n; i++) red[nb + pa->n + i] = true;
    int saved = L->unroll_threshold;
    L->unroll_threshold = POOL_MAX_WINDOW;   /* _low_memory_max_pool_with_offsets: config.patch(unroll_reductions_threshold=25) */
    *vals = lw_tbox_of_storage(L, lw_reduction(L, n, w, red, false, RED_MAX, x->dtype, 0, NULL));
    *offs = lw_tbox_of_storage(L, lw_reduction(L, n, w, red, false, RED_ARGMAX, DT_I64, 0, NULL));
    L->unroll_threshold = saved;
    return 0;
}

/* Offsets inside the window -> flat indices into the input's spatial dims (int64):
 * r = the window position of the offset (row-major over the kernel), ih = o*s + r*d - p,
 * index = ih flattened over the input's spatial sizes (_pool_offsets_to_indices). */
static IrTBox *pool_offsets_to_indices(Lower *L, IrTBox *offs, const PoolArgs *pa, Expr *const *insize, const char *oname) {
    SymCtx *s = L->s;
    int n = pa->n, nd = offs->ndim, nb = nd - n;
    const IrFn *off = lw_to_dtype(L, offs->loader, DT_I64);
    const IrFn *flat = NULL;
    int64_t inner = 1;   /* product of the kernel sizes after dim i */
    for (int i = n - 1; i >= 0; i--) {
        const IrFn *r = lw_math(L, IOP_FLOORDIV, DT_I64, off, lw_const(L, (double)inner, DT_I64), NULL);
        if (i > 0) r = lw_math(L, IOP_FMOD, DT_I64, r, lw_const(L, (double)pa->k[i], DT_I64), NULL);
        inner *= pa->k[i];
        Expr *base = sym_sub(s, sym_mul(s, lw_var(L, nb + i), sym_int(s, pa->s[i])), sym_int(s, pa->p[i]));
        const IrFn *ih = lw_math(L, IOP_ADD, DT_I64, lw_index_expr(L, base, nd, DT_I64),
                                 lw_math(L, IOP_MUL, DT_I64, r, lw_const(L, (double)pa->d[i], DT_I64), NULL), NULL);
        Expr *st = sym_int(s, 1);   /* stride of spatial dim i in the flat index */
        for (int j = i + 1; j < n; j++) st = sym_mul(s, st, insize[j]);
        const IrFn *term = lw_math(L, IOP_MUL, DT_I64, ih, lw_index_expr(L, st, nd, DT_I64), NULL);
        flat = flat ? lw_math(L, IOP_ADD, DT_I64, term, flat, NULL) : term;
    }
    return lw_pw_box(L, flat, DT_I64, nd, offs->size, oname);
}

/* prims._low_memory_max_pool_with_offsets(x, kernel_size, stride, padding, dilation, ceil_mode)
 * -> (max, int8 offset inside the window). arg: spatial dims. */
static int lower_max_pool_offsets(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    PoolArgs pa;
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    int64_t kl[8];
    int nk = lw_int_list(lw_arg_or_kw(n, 1, "kernel_size"), kl, 8);
    if (nk != 2 && nk != 3) return lw_err(L, n, "'%s': kernel_size must have 2 or 3 entries", n->target);
    if (lw_pool_args(L, n, 1, nk, true, &pa) < 0) return -1;
    IrTBox *items[2];
    if (max_pool_offsets(L, n, x, &pa, &items[0], &items[1]) < 0) return -1;
    items[1] = lw_pw_box(L, lw_to_dtype(L, items[1]->loader, DT_I8), DT_I8, items[1]->ndim, items[1]->size,
                         lw_short_name(L, n->target));
    return lw_set_tuple(L, n, items, 2);
}

/* prims._low_memory_max_pool_offsets_to_indices(offsets, kernel_size, input_size, stride,
 * padding, dilation) -> int64 flat indices. */
static int lower_max_pool_offsets_to_indices(Lower *L, const Node *n, int arg) {
    IrTBox *offs = lw_arg_tbox(L, n, 0);
    if (!offs) return lw_err(L, n, "'%s' needs a tensor", n->target);
    PoolArgs pa = {0};
    int64_t kl[8];
    int nk = lw_int_list(lw_arg_or_kw(n, 1, "kernel_size"), kl, 8);
    if (nk != 2 && nk != 3) return lw_err(L, n, "'%s': kernel_size must have 2 or 3 entries", n->target);
    pa.n = nk;
    const Value *iv = lw_arg_or_kw(n, 2, "input_size");
    if (!iv || (iv->kind != V_LIST && iv->kind != V_TUPLE) || iv->list.n < nk)
        return lw_err(L, n, "'%s': bad input_size", n->target);
    if (pool_list(n, 1, "kernel_size", nk, NULL, pa.k) < 0 || pool_list(n, 3, "stride", nk, pa.k, pa.s) < 0 ||
        pool_list(n, 4, "padding", nk, NULL, pa.p) < 0 || pool_list(n, 5, "dilation", nk, (int64_t[]){1, 1, 1}, pa.d) < 0)
        return lw_err(L, n, "'%s': bad kernel_size, stride, padding or dilation", n->target);
    Expr *insize[3];
    for (int i = 0; i < nk; i++) {
        insize[i] = lw_value_expr(L, &iv->list.items[iv->list.n - nk + i]);
        if (!insize[i]) return lw_err(L, n, "'%s': bad input_size", n->target);
    }
    return lw_set_tbox(L, n, pool_offsets_to_indices(L, offs, &pa, insize, lw_short_name(L, n->target)));
}

/* max_pool2d_with_indices / max_pool3d_with_indices(x, kernel_size, stride, padding, dilation,
 * ceil_mode) -> (max, int64 flat index). arg: spatial dims. */
static int lower_max_pool_with_indices(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    PoolArgs pa;
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    if (lw_pool_args(L, n, 1, arg, true, &pa) < 0) return -1;
    IrTBox *items[2], *offs;
    if (max_pool_offsets(L, n, x, &pa, &items[0], &offs) < 0) return -1;
    items[1] = pool_offsets_to_indices(L, offs, &pa, x->size + x->ndim - arg, lw_short_name(L, n->target));
    return lw_set_tuple(L, n, items, 2);
}

/* The most pooled positions along one dim whose windows cover one input position. */
int64_t lw_pool_cover(int64_t k, int64_t s) {
    int64_t best = 1;
    for (int64_t h = 0; h < 2 * k; h++) {
        int64_t lo = h - k < 0 ? 0 : (h - k) / s;   /* FloorDiv of a non-negative value */
        int64_t c = h / s - lo;
        if (c > best) best = c;
    }
    return best;
}

/* max_pool2d_with_indices_backward(grad_output, x, kernel_size, stride, padding, dilation,
 * ceil_mode, indices): for each input (h, w), the sum of grad_output over the pooled positions
 * whose window covers it and whose index is h * W + w (phstart = (h + p - k + s) // s clamped
 * at 0, phend = min((h + p) // s + 1, pooled height)). Dilation or a window of more than 25
 * pooled positions: the FallbackKernel, as Inductor. */
static int lower_max_pool2d_backward(Lower *L, const Node *n, int arg) {
    IrTBox *go = lw_arg_tbox(L, n, 0), *x = lw_arg_tbox(L, n, 1), *ix = lw_arg_tbox(L, n, 7);
    const TensorMeta *m = lw_out_meta(n);
    PoolArgs pa;
    if (!go || !x || !ix || !m) return lw_err(L, n, "'%s' needs grad_output, self, indices and a shape", n->target);
    if (x->ndim != 3 && x->ndim != 4) return lw_err(L, n, "'%s' needs a 3-d or 4-d input", n->target);
    if (lw_pool_args(L, n, 2, 2, true, &pa) < 0) return -1;
    int64_t wh = lw_pool_cover(pa.k[0], pa.s[0]), ww = lw_pool_cover(pa.k[1], pa.s[1]);
    if (pa.d[0] != 1 || pa.d[1] != 1 || wh * ww > POOL_MAX_WINDOW) return lw_fallback(L, n);
    lw_realize_hint(L, go);
    SymCtx *s = L->s;
    int nd = x->ndim, nb = nd - 2;
    Expr *W = x->size[nd - 1], *PH = go->size[nd - 2], *PW = go->size[nd - 1];
    Expr *h = sym_add(s, lw_var(L, nb), sym_int(s, pa.p[0])), *w = sym_add(s, lw_var(L, nb + 1), sym_int(s, pa.p[1]));
    Expr *phs = sym_max(s, sym_int(s, 0), sym_floordiv(s, sym_add(s, h, sym_int(s, pa.s[0] - pa.k[0])), sym_int(s, pa.s[0])));
    Expr *pws = sym_max(s, sym_int(s, 0), sym_floordiv(s, sym_add(s, w, sym_int(s, pa.s[1] - pa.k[1])), sym_int(s, pa.s[1])));
    Expr *phe = sym_min(s, sym_add(s, sym_floordiv(s, h, sym_int(s, pa.s[0])), sym_int(s, 1)), PH);
    Expr *pwe = sym_min(s, sym_add(s, sym_floordiv(s, w, sym_int(s, pa.s[1])), sym_int(s, 1)), PW);
    const IrFn *target = lw_index_expr(L, sym_add(s, sym_mul(s, lw_var(L, nb), W), lw_var(L, nb + 1)), nd, DT_I64);
    DType dt = m->dtype;
    const IrFn *grad = NULL;
    for (int64_t a = 0; a < wh; a++)
        for (int64_t b = 0; b < ww; b++) {
            Expr *ph = sym_add(s, phs, sym_int(s, a)), *pw = sym_add(s, pws, sym_int(s, b));
            Expr *map[MI_MAX_DIMS];
            for (int d = 0; d < nb; d++) map[d] = lw_var(L, d);
            map[nb] = sym_min(s, ph, sym_sub(s, phe, sym_int(s, 1)));
            map[nb + 1] = sym_min(s, pw, sym_sub(s, pwe, sym_int(s, 1)));
            const IrFn *idx = lw_to_dtype(L, lw_reindex(L, ix->loader, nd, map, nd), DT_I64);
            const IrFn *part = lw_to_dtype(L, lw_reindex(L, go->loader, nd, map, nd), dt);
            const IrFn *check = lw_math(L, IOP_EQ, DT_BOOL, idx, target, NULL);
            if (!grad) { grad = lw_math(L, IOP_WHERE, dt, check, part, lw_const(L, 0, dt)); continue; }
            const IrFn *in = lw_math(L, IOP_LOGICAL_AND, DT_BOOL,
                                     lw_math(L, IOP_LT, DT_BOOL, lw_index_expr(L, ph, nd, DT_I64), lw_index_expr(L, phe, nd, DT_I64), NULL),
                                     lw_math(L, IOP_LT, DT_BOOL, lw_index_expr(L, pw, nd, DT_I64), lw_index_expr(L, pwe, nd, DT_I64), NULL), NULL);
            grad = lw_math(L, IOP_WHERE, dt, lw_math(L, IOP_LOGICAL_AND, DT_BOOL, in, check, NULL),
                           lw_math(L, IOP_ADD, dt, grad, part, NULL), grad);
        }
    return lw_set_pointwise(L, n, grad, dt, 2);
}

/* _avg_poolnd's body for x pooled by pa (window <= 25 or kernel == stride; the caller checks):
 * a sum over the window (padding reads 0) in the computation dtype, divided by `divisor` when
 * non-zero (divisor_override), else the window size, or (with padding or a ceil_mode window)
 * the number of positions the window covers (clipped to the input unless count_include_pad),
 * cast back. A pending value; origins: n's op. Example: upsample_nearest2d_backward of a 2x
 * upsampling is x pooled 2x2 with divisor 1. */
IrTBox *lw_avg_pool(Lower *L, const Node *n, IrTBox *x, const PoolArgs *pa, bool cip, double divisor) {
    int nd = x->ndim, nb = nd - pa->n;
    Expr *osize[3];
    bool pad = false;
    int64_t window = 1;
    for (int i = 0; i < pa->n; i++) {
        bool c;
        osize[i] = lw_pool_out_size(L, x->size[nb + i], pa, i, &c);
        pad |= c || pa->p[i] != 0;
        window *= pa->k[i];
    }
    lw_realize_hint(L, x);
    DType dt = x->dtype, cdt = dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt;
    IrTBox *w = pool_window(L, x, pa, osize, pad, 0);
    bool red[MI_MAX_DIMS] = {0};
    for (int i = 0; i < pa->n; i++) red[nb + pa->n + i] = true;
    int saved = L->unroll_threshold;
    L->unroll_threshold = POOL_MAX_WINDOW + 1;   /* _avg_poolnd sums windows of up to 25 unrolled (fn_sum) */
    IrTBox *sum = lw_tbox_of_storage(L, lw_reduction(L, n, w, red, false, RED_SUM, cdt, 0, NULL));
    L->unroll_threshold = saved;
    const IrFn *div;
    if (!pad || divisor != 0) div = lw_const(L, divisor != 0 ? divisor : (double)window, cdt);
    else {   /* the count of positions each window covers */
        SymCtx *s = L->s;
        div = NULL;
        for (int i = 0; i < pa->n; i++) {
            Expr *xs = x->size[nb + i];
            Expr *hs = sym_sub(s, sym_mul(s, lw_var(L, nb + i), sym_int(s, pa->s[i])), sym_int(s, pa->p[i]));
            Expr *he = sym_min(s, sym_add(s, hs, sym_int(s, pa->k[i])), sym_add(s, xs, sym_int(s, pa->p[i])));
            if (!cip) { hs = sym_max(s, hs, sym_int(s, 0)); he = sym_min(s, he, xs); }
            const IrFn *f = lw_to_dtype(L, lw_index_expr(L, sym_sub(s, he, hs), nd, DT_I64), cdt);
            div = div ? lw_math(L, IOP_MUL, cdt, div, f, NULL) : f;
        }
    }
    const IrFn *out = lw_math(L, IOP_TRUEDIV, cdt, lw_to_dtype(L, sum->loader, cdt), div, NULL);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    return lw_tbox_of_storage(L, lw_storage_new(L, lw_to_dtype(L, out, dt), dt, nd, sum->size, o, no));
}

/* avg_pool2d / avg_pool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override): lw_avg_pool; a window of more than 25 positions (kernel != stride): the
 * FallbackKernel. arg: spatial dims. */
static int lower_avg_pool(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    PoolArgs pa;
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    if (lw_pool_args(L, n, 1, arg, false, &pa) < 0) return -1;
    int nb = x->ndim - arg;
    if (nb < 1 || nb > 2) return lw_err(L, n, "'%s' needs a %d-d or %d-d input", n->target, arg + 1, arg + 2);
    int64_t cip = 1, window = 1;
    lw_arg_int(n, 5, "count_include_pad", &cip);
    const Value *dv = lw_arg_or_kw(n, 6, "divisor_override");
    double divisor = 0;
    if (dv && dv->kind != V_NONE && !value_as_double(dv, &divisor)) return lw_err(L, n, "'%s': bad divisor_override", n->target);
    bool same = true;
    for (int i = 0; i < arg; i++) {
        window *= pa.k[i];
        same &= pa.k[i] == pa.s[i];
    }
    if (window > POOL_MAX_WINDOW && !same) return lw_fallback(L, n);
    return lw_set_tbox(L, n, lw_avg_pool(L, n, x, &pa, cip != 0, divisor));
}

/* Window position (a, b) of adaptive pooling over the last two dims of an nd-d input of
 * spatial sizes in[] pooled to os[] (lowering.py's _adaptive_pooling_fn with
 * pad_adaptive_loader): map[] the input index read (clamped inside the input), at[] the
 * unclamped row and column, and the mask "inside this output's window" (row start i*H // oh,
 * end ceil((i+1)*H / oh); columns alike). `ceil`: upsample_nearest2d_backward's windows, start
 * ceil(i*H / oh) and end ceil((i+1)*H / oh) (CeilDiv). */
const IrFn *lw_adaptive_pos(Lower *L, int nd, const int64_t *in, const int64_t *os, int64_t a, int64_t b, bool ceil,
                            Expr **map, Expr **at) {
    SymCtx *s = L->s;
    int nb = nd - 2;
    const IrFn *mask = NULL;
    for (int d = 0; d < nb; d++) map[d] = lw_var(L, d);
    for (int i = 0; i < 2; i++) {
        Expr *o = lw_var(L, nb + i), *I = sym_int(s, in[i]), *O = sym_int(s, os[i]);
        Expr *o1 = sym_add(s, o, sym_int(s, 1));
        Expr *st = ceil ? sym_ceildiv(s, sym_mul(s, o, I), O) : sym_floordiv(s, sym_mul(s, o, I), O);
        Expr *en = ceil ? sym_ceildiv(s, sym_mul(s, o1, I), O)
                        : sym_floordiv(s, sym_add(s, sym_mul(s, o1, I), sym_int(s, os[i] - 1)), O);
        at[i] = sym_add(s, st, sym_int(s, i ? b : a));
        map[nb + i] = sym_min(s, at[i], sym_int(s, in[i] - 1));
        const IrFn *ok = lw_math(L, IOP_LT, DT_BOOL, lw_index_expr(L, at[i], nd, DT_I64), lw_index_expr(L, en, nd, DT_I64), NULL);
        mask = mask ? lw_math(L, IOP_LOGICAL_AND, DT_BOOL, mask, ok, NULL) : ok;
    }
    return mask;
}

/* _adaptive_avg_pool2d(x, output_size): the identity when sizes agree, avg_pool2d when the input
 * divides evenly, else for each output (i, j) the mean of x over rows [i*H // oh, ceil((i+1)*H /
 * oh)) and the same columns, read through the largest window with masks (more than 25 window
 * positions: the FallbackKernel). */
static int lower_adaptive_avg_pool2d(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const TensorMeta *m = lw_out_meta(n);
    int64_t os[2];
    if (!x || !m || lw_int_list(lw_arg_or_kw(n, 1, "output_size"), os, 2) != 2 || (x->ndim != 3 && x->ndim != 4))
        return lw_err(L, n, "'%s' needs a 3-d or 4-d tensor, an output_size of 2 and a shape", n->target);
    int nd = x->ndim, nb = nd - 2;
    int64_t in[2];
    if (!sym_is_int(x->size[nb], &in[0]) || !sym_is_int(x->size[nb + 1], &in[1]))
        return lw_err(L, n, "'%s' over symbolic sizes is not supported", n->target);
    if (in[0] == os[0] && in[1] == os[1]) return lw_set_pointwise(L, n, x->loader, x->dtype, 1);
    lw_realize_hint(L, x);
    SymCtx *s = L->s;
    DType dt = x->dtype;
    if (os[0] > 0 && os[1] > 0 && in[0] % os[0] == 0 && in[1] % os[1] == 0) {
        PoolArgs pa = {2, {in[0] / os[0], in[1] / os[1]}, {in[0] / os[0], in[1] / os[1]}, {0, 0}, {1, 1}, false};
        Expr *osize[2] = {sym_int(s, os[0]), sym_int(s, os[1])};
        IrTBox *w = pool_window(L, x, &pa, osize, false, 0);
        bool red[MI_MAX_DIMS] = {0};
        red[nb + 2] = red[nb + 3] = true;
        DType cdt = dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt;
        IrTBox *sum = lw_tbox_of_storage(L, lw_reduction(L, n, w, red, false, RED_SUM, cdt, 0, NULL));
        const IrFn *out = lw_math(L, IOP_TRUEDIV, cdt, sum->loader, lw_const(L, (double)(pa.k[0] * pa.k[1]), cdt), NULL);
        return lw_set_pointwise(L, n, lw_to_dtype(L, out, dt), dt, 0);
    }
    int64_t km[2];
    for (int i = 0; i < 2; i++) km[i] = os[i] ? ((in[i] + os[i] - 1) + os[i] - 1) / os[i] : 0;
    if (km[0] * km[1] > POOL_MAX_WINDOW) return lw_fallback(L, n);
    const IrFn *sum = NULL, *cnt = NULL;
    for (int64_t a = 0; a < km[0]; a++)
        for (int64_t b = 0; b < km[1]; b++) {
            Expr *map[MI_MAX_DIMS], *at[2];
            const IrFn *mask = lw_adaptive_pos(L, nd, in, os, a, b, false, map, at);
            const IrFn *v = lw_math(L, IOP_WHERE, dt, mask, lw_reindex(L, x->loader, nd, map, nd), lw_const(L, 0, dt));
            const IrFn *c = lw_math(L, IOP_WHERE, dt, mask, lw_const(L, 1, dt), lw_const(L, 0, dt));
            sum = sum ? lw_math(L, IOP_ADD, dt, v, sum, NULL) : v;
            cnt = cnt ? lw_math(L, IOP_ADD, dt, c, cnt, NULL) : c;
        }
    return lw_set_pointwise(L, n, lw_math(L, IOP_TRUEDIV, dt, sum, cnt, NULL), dt, 1);
}

/* adaptive_max_pool2d(x, output_size) -> (max, int64 index), as lowering.py lowers it: for each
 * output (i, j) the window rows [i*H // oh, ceil((i+1)*H / oh)) and the same columns, read
 * through the largest window (h_kernel_max x w_kernel_max, row-major) with the positions
 * outside the window at -inf (pad_adaptive_loader): the value is maximum(val, max so far)
 * (NaN propagates), the index (h_start + a) * W + w_start + b of the last position greater
 * than the max before it (_adaptive_pooling_fn_with_idx). Two Pointwise values. More than 25
 * window positions, an integer input or an output that divides the input evenly (decomposed
 * to max_pool2d_with_indices before lowering in Inductor): the FallbackKernel. Example: a
 * [2, 4, 1, 48] input pooled to [1, 5] reads windows of up to 11 columns. */
static int lower_adaptive_max_pool2d(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    int64_t os[2], in[2];
    if (!x || lw_int_list(lw_arg_or_kw(n, 1, "output_size"), os, 2) != 2 || (x->ndim != 3 && x->ndim != 4))
        return lw_err(L, n, "'%s' needs a 3-d or 4-d tensor and an output_size of 2", n->target);
    int nd = x->ndim, nb = nd - 2;
    if (!sym_is_int(x->size[nb], &in[0]) || !sym_is_int(x->size[nb + 1], &in[1]) || !dtype_is_float(x->dtype) ||
        os[0] <= 0 || os[1] <= 0 || (in[0] % os[0] == 0 && in[1] % os[1] == 0))
        return lw_fallback(L, n);
    int64_t km[2];
    for (int i = 0; i < 2; i++) km[i] = ((in[i] + os[i] - 1) + os[i] - 1) / os[i];
    if (km[0] * km[1] > POOL_MAX_WINDOW) return lw_fallback(L, n);
    lw_realize_hint(L, x);
    SymCtx *s = L->s;
    DType dt = x->dtype;
    const IrFn *maxval = NULL, *maxidx = NULL;
    for (int64_t a = 0; a < km[0]; a++)
        for (int64_t b = 0; b < km[1]; b++) {
            Expr *map[MI_MAX_DIMS], *at[2];
            const IrFn *mask = lw_adaptive_pos(L, nd, in, os, a, b, false, map, at);
            const IrFn *val = lw_math(L, IOP_WHERE, dt, mask, lw_reindex(L, x->loader, nd, map, nd), lw_const(L, -INFINITY, dt));
            const IrFn *idx = lw_index_expr(L, sym_add(s, sym_mul(s, at[0], sym_int(s, in[1])), at[1]), nd, DT_I64);
            if (!maxval) { maxval = val; maxidx = idx; continue; }
            maxidx = lw_math(L, IOP_WHERE, DT_I64, lw_math(L, IOP_GT, DT_BOOL, val, maxval, NULL), idx, maxidx);
            maxval = lw_math(L, IOP_MAXIMUM, dt, val, maxval, NULL);
        }
    Expr *size[MI_MAX_DIMS];
    for (int d = 0; d < nb; d++) size[d] = x->size[d];
    size[nb] = sym_int(s, os[0]);
    size[nb + 1] = sym_int(s, os[1]);
    IrTBox *items[2] = {lw_pw_box(L, maxval, dt, nd, size, lw_short_name(L, n->target)),
                        lw_pw_box(L, maxidx, DT_I64, nd, size, lw_short_name(L, n->target))};
    return lw_set_tuple(L, n, items, 2);
}

/* ---- fractional max pooling: lowering.py's _fractional_max_pool ---- */

/* The window start of output position o along spatial dim d of fractional pooling
 * (_fractional_pooling_offsets): with u = random_samples[b, c, sample of d] and alpha = (in - k) /
 * (out - 1) in float64 (0 when out is 1), start = trunc((o + u) * alpha) - trunc(u * alpha),
 * except the last position, which starts at in - k; an index symbol (indirect_indexing over
 * the input's extent). f: the closure (a[1] the samples' loader, isize[3d..3d+2] in, out and
 * kernel of dim d, start the batch dims, rank the spatial dims). */
static Expr *frac_start(const IrFn *f, OpsHandler *h, Expr *const *idx, int d) {
    SymCtx *s = f->sym;
    int nb = f->start, n = f->rank;
    Expr *in = f->isize[3 * d], *out = f->isize[3 * d + 1], *k = f->isize[3 * d + 2];
    /* 2-d: samples (W, H) as lowering.py reads them (n - 1 - d). 3-d: ATen's kernels read (T, H,
     * W) = samples 0, 1, 2 while lowering.py's n - 1 - d would take T from sample 2; the values
     * follow ATen (eager) here, the kernel is the same */
    Expr *sidx[3] = {idx[0], idx[1], sym_int(s, n == 2 ? n - 1 - d : d)};
    DType sdt = f->a[1]->dtype;
    IrVal u = f->a[1]->call(f->a[1], h, sidx);
    IrVal i = h->index_expr(h, idx[nb + d], sdt);
    IrVal diff = h->index_expr(h, sym_sub(s, in, k), DT_I64);
    IrVal last = h->index_expr(h, sym_sub(s, out, sym_int(s, 1)), DT_I64);
    IrVal alpha = ops_div(h, h->to_dtype(h, diff, DT_F64, DT_I64), h->to_dtype(h, last, DT_F64, DT_I64), DT_F64);
    alpha = ops_where(h, ops_binary(h, IOP_EQ, last, h->constant(h, 0, DT_I64), DT_BOOL), h->constant(h, 0, DT_F64), alpha, DT_F64);
    IrVal a = ops_mul(h, h->to_dtype(h, ops_add(h, i, u, sdt), DT_F64, sdt), alpha, DT_F64);
    IrVal b = ops_mul(h, h->to_dtype(h, u, DT_F64, sdt), alpha, DT_F64);
    IrVal seq = ops_sub(h, ops_unary(h, IOP_TRUNC, a, DT_F64), ops_unary(h, IOP_TRUNC, b, DT_F64), DT_F64);
    seq = h->to_dtype(h, seq, DT_I64, DT_F64);
    IrVal mask = ops_binary(h, IOP_LT, h->index_expr(h, idx[nb + d], DT_I64), last, DT_BOOL);
    return ops_indirect_indexing(h, ops_where(h, mask, seq, diff, DT_I64), in, true, true);
}

/* x read at window element r of output o (index [*batch, *o, *r]): x[*batch, start_d(o_d) + r_d]
 * (fn_inner / increments_to_index). a[0]: x's loader. */
static IrVal call_frac_window(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    int nb = f->start, n = f->rank;
    Expr *in[MI_MAX_DIMS];
    for (int d = 0; d < nb; d++) in[d] = idx[d];
    for (int d = 0; d < n; d++) in[nb + d] = sym_add(f->sym, frac_start(f, h, idx, d), idx[nb + n + d]);
    return f->a[0]->call(f->a[0], h, in);
}

/* The flat index into the input plane of the argmax offset at output o (_pool_offsets_to_indices
 * with increments_to_index): the offset as an index symbol over the window, split row-major
 * into r (_flattened_index_to_nd), start_d(o_d) + r_d flattened over the input's spatial sizes
 * (_flatten_index). a[0]: the offsets' loader. */
static IrVal call_frac_indices(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = f->sym;
    int n = f->rank;
    Expr *window = sym_int(s, 1);
    for (int d = 0; d < n; d++) window = sym_mul(s, window, f->isize[3 * d + 2]);
    Expr *rest = ops_indirect_indexing(h, f->a[0]->call(f->a[0], h, idx), window, true, true), *flat = NULL;
    for (int d = 0; d < n; d++) {
        Expr *m = sym_int(s, 1);
        for (int j = d + 1; j < n; j++) m = sym_mul(s, m, f->isize[3 * j + 2]);
        Expr *r = d == n - 1 ? rest : sym_floordiv(s, rest, m);
        if (d < n - 1) rest = sym_sub(s, rest, sym_mul(s, r, m));
        Expr *at = sym_add(s, frac_start(f, h, idx, d), r);
        flat = flat ? sym_add(s, sym_mul(s, f->isize[3 * d], flat), at) : at;
    }
    return h->index_expr(h, flat, DT_I64);
}

/* fractional_max_pool2d / fractional_max_pool3d(x, kernel_size, output_size, random_samples)
 * -> (max, int64 index) as lowering.py's _fractional_max_pool: max and argmax Reductions over
 * the kernel window at each output's interval start (unrolled below 25 window positions, as
 * there: config.patch(unroll_reductions_threshold=25)), then the offsets turned into flat
 * indices. An input without a batch dim, or sizes that are not ints: the FallbackKernel.
 * Example: 7 -> 3 rows with kernel 2 and u = 0.5: alpha 2.5, starts 0, 2 and 5. arg: spatial
 * dims. */
static int lower_fractional_max_pool(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0), *rs = lw_arg_tbox(L, n, 3);
    int64_t k[3], os[3];
    if (!x || !rs || lw_int_list(lw_arg_or_kw(n, 1, "kernel_size"), k, 3) != arg ||
        lw_int_list(lw_arg_or_kw(n, 2, "output_size"), os, 3) != arg)
        return lw_err(L, n, "'%s' needs a tensor, a kernel_size and an output_size of %d and random_samples", n->target, arg);
    int nd = x->ndim, nb = nd - arg;
    if (nb != 2 || rs->ndim != 3) return lw_fallback(L, n);
    SymCtx *s = L->s;
    lw_realize_hint(L, x);
    Expr **isz = lw_alloc(L, 3 * arg * sizeof *isz), *size[MI_MAX_DIMS];
    for (int d = 0; d < arg; d++) {
        isz[3 * d] = x->size[nb + d];
        isz[3 * d + 1] = sym_int(s, os[d]);
        isz[3 * d + 2] = sym_int(s, k[d]);
    }
    IrFn *w = lw_fn(L, call_frac_window, x->dtype);
    w->a[0] = x->loader;
    w->a[1] = rs->loader;
    w->na = 2;
    w->nin = nd + arg;
    w->start = nb;
    w->rank = arg;
    w->isize = isz;
    w->cost = lw_cost_add(lw_fn_cost(x->loader), lw_cost_add(lw_fn_cost(rs->loader), 12 * arg));
    for (int d = 0; d < nb; d++) size[d] = x->size[d];
    for (int d = 0; d < arg; d++) { size[nb + d] = isz[3 * d + 1]; size[nb + arg + d] = isz[3 * d + 2]; }
    IrTBox *win = lw_tbox_new(L, x->dtype, nd + arg, size, w);
    lw_origins_merge(L, &win->origins, &win->norigins, x);
    bool red[MI_MAX_DIMS] = {0};
    for (int d = 0; d < arg; d++) red[nb + arg + d] = true;
    int saved = L->unroll_threshold;
    L->unroll_threshold = POOL_MAX_WINDOW;
    IrTBox *vals = lw_tbox_of_storage(L, lw_reduction(L, n, win, red, false, RED_MAX, x->dtype, 0, NULL));
    IrTBox *offs = lw_tbox_of_storage(L, lw_reduction(L, n, win, red, false, RED_ARGMAX, DT_I64, 0, NULL));
    L->unroll_threshold = saved;
    IrFn *ix = lw_fn(L, call_frac_indices, DT_I64);
    *ix = *w;
    ix->call = call_frac_indices;
    ix->dtype = DT_I64;
    ix->a[0] = offs->loader;
    ix->nin = nd;
    ix->cost = lw_cost_add(lw_fn_cost(offs->loader), lw_cost_add(lw_fn_cost(rs->loader), 12 * arg));
    IrTBox *items[2] = {vals, lw_pw_box(L, ix, DT_I64, nd, vals->size, lw_short_name(L, n->target))};
    return lw_set_tuple(L, n, items, 2);
}

/* ---- the pooling rows of the lowering table ---- */

const LoweringDef lowering_pooling_table[] = {
    {"prims._low_memory_max_pool_with_offsets.default", lower_max_pool_offsets, 0},
    {"prims._low_memory_max_pool_offsets_to_indices.default", lower_max_pool_offsets_to_indices, 0},
    {"aten.max_pool2d_with_indices.default", lower_max_pool_with_indices, 2},
    {"aten.max_pool3d_with_indices.default", lower_max_pool_with_indices, 3},
    {"aten.max_pool2d_with_indices_backward.default", lower_max_pool2d_backward, 0},
    {"aten.avg_pool2d.default", lower_avg_pool, 2}, {"aten.avg_pool3d.default", lower_avg_pool, 3},
    {"aten._adaptive_avg_pool2d.default", lower_adaptive_avg_pool2d, 0},
    {"aten.adaptive_max_pool2d.default", lower_adaptive_max_pool2d, 0},
    {"aten.fractional_max_pool2d.default", lower_fractional_max_pool, 2},
    {"aten.fractional_max_pool3d.default", lower_fractional_max_pool, 3},
};
const int lowering_pooling_count = sizeof lowering_pooling_table / sizeof lowering_pooling_table[0];
