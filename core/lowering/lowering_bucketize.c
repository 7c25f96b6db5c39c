/* lowering_bucketize.c — bucketize.Tensor and searchsorted.Tensor as Inductor's lowering.py
 * lowers them on a GPU: a Pointwise calling ops.bucketize (a binary search of each value in the
 * realized boundaries buffer; Triton's bucketize_binary_search, our CUDA mi_bucketize), realized
 * at once so a broadcast of the result does not repeat the search ([NOTE: inductor bucketize
 * realize]). The cpp backend has no BackendFeature.BUCKETIZE: on the CPU (and for a graph
 * compiled for the CPU) both ops stay FallbackKernels calling ATen's, as in Inductor. */
#include "lowering/lowering_impl.h"

#include <string.h>

/* ops.bucketize(value, boundaries, offset, index dtype, right): a[0] the values' loader, a[1]
 * the run's start in the boundaries buffer (an index_expr over the output's index) */
static IrVal call_bucketize(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrVal v = f->a[0]->call(f->a[0], h, idx);
    IrVal off = f->a[1]->call(f->a[1], h, idx);
    return h->bucketize(h, v, f->bnd, off);
}

/* bucketize.Tensor(input, boundaries, *, out_int32, right) (arg 0) and searchsorted.Tensor(
 * sorted_sequence, self, *, out_int32, right, side, sorter) (arg 1). The runs: a 1-d boundaries
 * tensor is one run from its offset; an N-d sorted_sequence has one run per index of its leading
 * dims, starting at their strides times the value's leading indices (get_flattened_index). The
 * boundaries are realized (a view of a buffer is read through its strides and offset). A sorter
 * stays a FallbackKernel here (lowering.py lowers it with ops.bucketize's sorter arguments).
 * Example: searchsorted(cumsum [4], iota [10], right=True) on a GPU: one kernel, the iota
 * computed inline and searched in cumsum's buffer. */
static int lower_bucketize(Lower *L, const Node *n, int arg) {
    const TensorMeta *m = lw_out_meta(n);
    IrTBox *vals = lw_arg_tbox(L, n, arg ? 1 : 0), *bt = lw_arg_tbox(L, n, arg ? 0 : 1);
    if (!m || !vals || !bt || bt->ndim < 1) return lw_err(L, n, "'%s' needs two tensors and a shape", n->target);
    const Value *so = lw_arg_or_kw(n, -1, "sorter");
    if (!lw_gpu_backend(L, n) || (so && so->kind != V_NONE) || (!arg && bt->ndim != 1) || (arg && bt->ndim > 1 && bt->ndim != vals->ndim))
        return lw_fallback(L, n);
    int64_t i32 = 0, right = 0;
    lw_arg_int(n, -1, "out_int32", &i32);
    lw_arg_int(n, -1, "right", &right);
    const Value *side = lw_arg_or_kw(n, -1, "side");
    if (side && side->kind == V_STR && !strcmp(side->s, "right")) right = 1;
    DType it = i32 ? DT_I32 : DT_I64;
    Layout view;
    Buffer *b = lw_as_strided(L, bt, &view);   /* boundaries.realize() */
    IrBoundaries *bd = lw_alloc(L, sizeof *bd);
    *bd = (IrBoundaries){b, bt->size[bt->ndim - 1], view.stride[bt->ndim - 1], it, right != 0};
    SymCtx *s = L->s;
    Expr *off = view.offset ? view.offset : sym_int(s, 0);
    for (int d = 0; d < bt->ndim - 1; d++) off = sym_add(s, off, sym_mul(s, view.stride[d], lw_var(L, d)));
    const IrFn *vf = vals->loader;
    if (vals->dtype != bt->dtype && (dtype_is_float(bt->dtype) || dtype_is_float(vals->dtype)))   /* NO_OPMATH promotion */
        vf = lw_to_dtype(L, vf, dtype_is_float(bt->dtype) ? bt->dtype : vals->dtype);
    IrFn *f = lw_fn(L, call_bucketize, it);
    f->a[0] = vf;
    f->a[1] = lw_index_expr(L, off, vals->ndim, DT_I64);
    f->na = 2;
    f->bnd = bd;
    f->cost = lw_cost_add(lw_fn_cost(vf), 4);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    lw_origins_merge(L, &o, &no, vals);
    IrStorage *sb = lw_storage_new(L, f, it, m->ndim, m->size, o, no);
    lw_realize(L, sb, NULL);   /* [NOTE: inductor bucketize realize] */
    return lw_set_tbox(L, n, lw_tbox_of_storage(L, sb));
}

const LoweringDef lowering_bucketize_table[] = {
    {"aten.bucketize.Tensor", lower_bucketize, 0, true},
    {"aten.searchsorted.Tensor", lower_bucketize, 1, true},
};
const int lowering_bucketize_count = sizeof lowering_bucketize_table / sizeof lowering_bucketize_table[0];
