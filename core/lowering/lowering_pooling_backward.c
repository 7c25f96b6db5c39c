/* lowering_pooling_backward.c — the pooling backwards Inductor lowers instead of calling ATen
 * (torch/_inductor/lowering.py: avg_pool2d_backward, avg_pool3d_backward,
 * upsample_nearest2d_backward); the max pool backward lives with the forward in
 * lowering_pooling.c. Each is one Pointwise over the input's shape:
 *   - avg_pool{2,3}d_backward: for each input element, the pooled positions whose window covers
 *     it (pstart = (i + p - k + s) // s clamped at 0, pend = min((i + p) // s + 1, pooled)),
 *     read through the largest such range (lw_pool_cover per dim) with masks, each gradient
 *     divided by the divisor, the window size or the window's covered count;
 *   - upsample_nearest2d_backward: a 2x2 (or any integer ratio) upsampling's gradient is an
 *     avg_pool2d with divisor 1; other ratios sum the gradient over the CeilDiv windows of
 *     adaptive pooling.
 * A window of more than 25 positions (125 in 3-d) stays a FallbackKernel, as Inductor's. */
#include "lowering/lowering_impl.h"

#include <string.h>

/* avg_pool2d_backward / avg_pool3d_backward(grad_output, self, kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override): as lowering.py's avg_pool{2,3}d_backward,
 * the window positions unrolled in row-major order, the first one's where() against 0 and each
 * later one's added under its mask. arg: spatial dims. Example: kernel 3, stride 2 over 7 rows:
 * row 4 takes pooled rows 1 and 2 (pstart (4 - 3 + 2) // 2 = 1, pend 4 // 2 + 1 = 3). */
static int lower_avg_pool_backward(Lower *L, const Node *n, int arg) {
    IrTBox *go = lw_arg_tbox(L, n, 0), *x = lw_arg_tbox(L, n, 1);
    const TensorMeta *m = lw_out_meta(n);
    PoolArgs pa;
    if (!go || !x || !m) return lw_err(L, n, "'%s' needs grad_output, self and a shape", n->target);
    int nd = x->ndim, nb = nd - arg;
    if ((nb != 1 && nb != 2) || go->ndim != nd) return lw_err(L, n, "'%s' needs a %d-d or %d-d input", n->target, arg + 1, arg + 2);
    if (lw_pool_args(L, n, 2, arg, false, &pa) < 0) return -1;
    int64_t cip = 1;
    lw_arg_int(n, 6, "count_include_pad", &cip);
    const Value *dv = lw_arg_or_kw(n, 7, "divisor_override");
    double divisor = 0;
    if (dv && dv->kind != V_NONE && (!value_as_double(dv, &divisor) || divisor == 0))
        return lw_err(L, n, "'%s': divisor must be not zero", n->target);
    int64_t win[3], window = 1, kprod = 1;
    bool had_padding = false, had_ceil = false;
    for (int i = 0; i < arg; i++) {
        bool c;
        lw_pool_out_size(L, x->size[nb + i], &pa, i, &c);
        had_padding |= c || pa.p[i] != 0;
        had_ceil |= c;
        win[i] = lw_pool_cover(pa.k[i], pa.s[i]);
        window *= win[i];
        kprod *= pa.k[i];
    }
    if (window > (arg == 2 ? LW_POOL_MAX_WINDOW : 125)) return lw_fallback(L, n);
    lw_realize_hint(L, go);   /* read many times */
    SymCtx *s = L->s;
    DType dt = m->dtype;
    Expr *ps[3], *pe[3];
    for (int i = 0; i < arg; i++) {
        Expr *v = sym_add(s, lw_var(L, nb + i), sym_int(s, pa.p[i]));
        ps[i] = sym_max(s, sym_int(s, 0), sym_floordiv(s, sym_add(s, v, sym_int(s, pa.s[i] - pa.k[i])), sym_int(s, pa.s[i])));
        pe[i] = sym_min(s, sym_add(s, sym_floordiv(s, v, sym_int(s, pa.s[i])), sym_int(s, 1)), go->size[nb + i]);
    }
    const IrFn *grad = NULL;
    for (int64_t w = 0; w < window; w++) {
        Expr *map[MI_MAX_DIMS], *factor = sym_int(s, 1), *padded = sym_int(s, 1);
        const IrFn *mask = NULL;
        for (int d = 0; d < nb; d++) map[d] = lw_var(L, d);
        for (int i = 0, rest = (int)w; i < arg; i++) {
            int64_t inner = 1;
            for (int j = i + 1; j < arg; j++) inner *= win[j];
            Expr *p = sym_add(s, ps[i], sym_int(s, rest / inner));
            rest %= (int)inner;
            map[nb + i] = sym_min(s, p, sym_sub(s, pe[i], sym_int(s, 1)));
            const IrFn *lt = lw_math(L, IOP_LT, DT_BOOL, lw_index_expr(L, p, nd, DT_I64), lw_index_expr(L, pe[i], nd, DT_I64), NULL);
            mask = mask ? lw_math(L, IOP_LOGICAL_AND, DT_BOOL, mask, lt, NULL) : lt;
            /* compute_pool_size_without_padding: the window clipped to the padded input, then
             * (count_include_pad=False) to the input */
            Expr *st = sym_sub(s, sym_mul(s, p, sym_int(s, pa.s[i])), sym_int(s, pa.p[i]));
            Expr *en = sym_min(s, sym_add(s, st, sym_int(s, pa.k[i])), sym_add(s, x->size[nb + i], sym_int(s, pa.p[i])));
            padded = sym_mul(s, padded, sym_sub(s, en, st));
            st = sym_max(s, st, sym_int(s, 0));
            en = sym_min(s, en, x->size[nb + i]);
            factor = sym_mul(s, factor, sym_sub(s, en, st));
        }
        /* count_include_pad with a ceil_mode window past the padded input: ATen's pool_size
         * (AvgPoolKernel.cpp: hend = min(hstart + kH, H + padH), pool_size = hend - hstart)
         * and Inductor's forward lowering divide by the window clipped to the padded input;
         * lowering.py's backward divides by kH * kW there (pytorch/pytorch#198119, a wrong
         * gradient), so here the backward follows ATen. Example: 15 columns, kernel 4, stride
         * 3, ceil_mode: the last window [12, 16) covers 3 columns and divides by 3. */
        const IrFn *scale = divisor != 0 ? lw_const(L, divisor, dt)
                            : cip && had_ceil ? lw_to_dtype(L, lw_index_expr(L, padded, nd, DT_I64), dt)
                            : cip || !had_padding ? lw_const(L, (double)kprod, dt)
                                                  : lw_to_dtype(L, lw_index_expr(L, factor, nd, DT_I64), dt);
        const IrFn *part = lw_math(L, IOP_TRUEDIV, dt, lw_to_dtype(L, lw_reindex(L, go->loader, nd, map, nd), dt), scale, NULL);
        grad = grad ? lw_math(L, IOP_WHERE, dt, mask, lw_math(L, IOP_ADD, dt, grad, part, NULL), grad)
                    : lw_math(L, IOP_WHERE, dt, mask, part, lw_const(L, 0, dt));
    }
    return lw_set_pointwise(L, n, grad, dt, 1);
}

/* upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h, scales_w) as
 * lowering.py's: grad_output's plane (inp_h x inp_w, static) onto input_size's (out_h x out_w).
 * Integer ratios: avg_pool2d with kernel = stride = the ratio and divisor 1 (more than 25
 * window positions: Inductor calls ATen's avg_pool2d; here the op's own FallbackKernel, an
 * extern call either way). Others: for each input element (i, j) the sum of grad_output over
 * rows [ceil(i * inp_h / out_h), ceil((i + 1) * inp_h / out_h)) and the same columns, read
 * through the largest window (ceil(inp / out) per dim) with masks. The scales are not read
 * (Inductor's lowering derives the windows from the sizes). Example: 5 -> 7 rows: input row 2
 * gathers rows ceil(14/5) = 3 and 4 (end ceil(21/5) = 5). */
static int lower_upsample_nearest2d_backward(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    const TensorMeta *m = lw_out_meta(n);
    const Value *iv = lw_arg_or_kw(n, 2, "input_size");
    if (!x || !m || x->ndim < 2 || !iv || (iv->kind != V_LIST && iv->kind != V_TUPLE) || iv->list.n != x->ndim || m->ndim != x->ndim)
        return lw_err(L, n, "'%s' needs a grad_output, an input_size of its rank and a shape", n->target);
    int nd = x->ndim, nb = nd - 2;
    int64_t in[2], os[2];
    for (int i = 0; i < 2; i++)
        if (!sym_is_int(x->size[nb + i], &in[i]) || !sym_is_int(m->size[nb + i], &os[i]) || os[i] <= 0)
            return lw_fallback(L, n);
    lw_realize_hint(L, x);   /* elements are reused */
    if (in[0] % os[0] == 0 && in[1] % os[1] == 0) {
        int64_t k0 = in[0] / os[0], k1 = in[1] / os[1];
        if (k0 * k1 > LW_POOL_MAX_WINDOW) return lw_fallback(L, n);
        PoolArgs pa = {2, {k0, k1}, {k0, k1}, {0, 0}, {1, 1}, false};
        return lw_set_tbox(L, n, lw_avg_pool(L, n, x, &pa, true, 1.0));
    }
    int64_t km[2] = {(in[0] + os[0] - 1) / os[0], (in[1] + os[1] - 1) / os[1]};
    DType dt = x->dtype;
    const IrFn *sum = NULL;
    for (int64_t a = 0; a < km[0]; a++)
        for (int64_t b = 0; b < km[1]; b++) {
            Expr *map[MI_MAX_DIMS], *at[2];
            const IrFn *mask = lw_adaptive_pos(L, nd, in, os, a, b, true, map, at);
            const IrFn *v = lw_math(L, IOP_WHERE, dt, mask, lw_reindex(L, x->loader, nd, map, nd), lw_const(L, 0, dt));
            sum = sum ? lw_math(L, IOP_ADD, dt, v, sum, NULL) : v;
        }
    return lw_set_pointwise(L, n, sum, dt, 1);
}

/* ---- the rows ---- */

const LoweringDef lowering_pooling_backward_table[] = {
    {"aten.avg_pool2d_backward.default", lower_avg_pool_backward, 2},
    {"aten.avg_pool3d_backward.default", lower_avg_pool_backward, 3},
    {"aten.upsample_nearest2d_backward.default", lower_upsample_nearest2d_backward, 0},
};
const int lowering_pooling_backward_count = sizeof lowering_pooling_backward_table / sizeof lowering_pooling_backward_table[0];
