/* lowering_mkldnn.c — the ops freezing leaves on the CPU (core/ops/ops_mkldnn.c), lowered as
 * torch/_inductor/mkldnn_lowerings.py and mkldnn_ir.py lower them, with a FallbackKernel
 * running the reference where Inductor calls the oneDNN / MKL kernel:
 *
 *   mkldnn._convolution_pointwise.default and mkldnn_fusion's handler node
 *   (torch__inductor_fx_passes_mkldnn_fusion_fn): ConvolutionUnary.create ->
 *       _prepare_convolution_fusion_create requires the input in channels-last stride order
 *       (req_stride_order [nsp+1, 0, nsp, ..., 1]: a graph input is copied by a kernel) and
 *       gives the result the fixed channels-last layout of its meta;
 *   mkl._mkl_linear: mkl_packed_linear runs MKLPackedLinear without the bias and adds the bias
 *       as a pointwise op over the result (`if b is not None: result = add(result, b)`), which
 *       fuses into the readers;
 *   prims.inductor_force_stride_order.default: require_stride_order (a copy only when needed).
 *
 * Example (cpu_freezing_conv_bn_eval): the channels-last copy of the input, the mean, the
 * linear's bias add: 3 generated kernels, as Inductor's output code has. */
#include "lowering/lowering_impl.h"

#include <string.h>

static int lower_pw_conv(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *x = lw_arg_tbox(L, n, 0);
    int order[MI_MAX_DIMS];
    int nsp = x ? x->ndim - 2 : 0;
    if (nsp < 1 || nsp > 3) return lw_fallback(L, n);
    order[0] = nsp + 1;
    order[1] = 0;
    for (int i = 1; i <= nsp; i++) order[1 + i] = nsp + 1 - i;
    return lw_fallback_with(L, n, -1, order);
}

static int lower_mkl_linear(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *bias = lw_arg_tbox(L, n, 3);
    const TensorMeta *m = lw_out_meta(n);
    if (!bias || !m || bias->ndim != 1 || m->ndim < 1) return lw_fallback(L, n);
    if (lw_fallback_with(L, n, 3, NULL)) return -1;
    LVal *lv = lw_node_val(L, n);
    if (!lv || lv->kind != LV_TBOX || !lv->t) return lw_err(L, n, "_mkl_linear: the kernel gave no result");
    Expr *map[1] = {lw_var(L, m->ndim - 1)};   /* bias[n] over result[..., n] */
    const IrFn *bf = lw_to_dtype(L, lw_reindex(L, bias->loader, m->ndim, map, 1), m->dtype);
    const IrFn *f = lw_math(L, IOP_ADD, m->dtype, lv->t->loader, bf, NULL);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    return lw_set_pending(L, n, f, m->dtype, o, no);
}

/* lowering.py inductor_force_stride_order: ExternKernel.require_stride_order(input,
 * get_stride_order(stride)) - a copy only when the input is not in that order already. */
static int lower_force_stride(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *x = lw_arg_tbox(L, n, 0);
    int64_t v[MI_MAX_DIMS];
    int k = lw_int_list(lw_arg_or_kw(n, 1, "stride"), v, MI_MAX_DIMS);
    Expr *st[MI_MAX_DIMS];
    int order[MI_MAX_DIMS];
    if (!x || k != x->ndim) return lw_fallback(L, n);
    for (int d = 0; d < k; d++) st[d] = sym_int(L->s, v[d]);
    if (!ir_stride_order(st, k, order)) return lw_fallback(L, n);
    return lw_set_tbox(L, n, lw_require_stride_order(L, x, order));
}

const LoweringDef lowering_mkldnn_table[] = {
    {"prims.inductor_force_stride_order.default", lower_force_stride, 0, false},
    {"mkldnn._convolution_pointwise.default", lower_pw_conv, 0, false},
    {"torch__inductor_fx_passes_mkldnn_fusion_fn", lower_pw_conv, 0, false},
    {"mkl._mkl_linear", lower_mkl_linear, 0, false},
};
const int lowering_mkldnn_count = sizeof lowering_mkldnn_table / sizeof lowering_mkldnn_table[0];
