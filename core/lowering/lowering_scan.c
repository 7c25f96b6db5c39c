/* lowering_scan.c — the scan and sort lowerings of Inductor's lowering.py (cumsum, cumprod,
 * logcumsumexp, cummax, cummin; sort.default / sort.stable) and ir.Scan.create / ir.Sort.create:
 * on a GPU (a cuda tensor, `set device cuda`) each output is a buffer whose body scans (sorts) the scanned dim as its one
 * reduction var (ir_trace_scan), so the scheduler fuses it with pointwise producers and
 * consumers like a reduction; where the backend has no BackendFeature.SCAN / SORT (the cpp
 * backend), or Scan.create / Sort.create decline (a split scan of two values, a sort of more
 * than 512 elements), the op is a FallbackKernel, as Inductor's fallback_cumsum & co. */
#include "lowering/lowering_impl.h"

#include <stdio.h>
#include <string.h>

/* Scan.num_splits > 1 (Reduction.num_splits with reduction_type "scan", which always may
 * split; core/lowering/lowering_split.c): cumsum over 16384 elements of 4 rows splits
 * (SplitScan); over 50 of 4 rows it does not. */
static bool scan_splits(Lower *L, const IrFn *f, int ndim, Expr **size, int axis) {
    bool red[MI_MAX_DIMS], outer;
    for (int d = 0; d < ndim; d++) red[d] = d == axis;
    return lw_num_splits_dims(L, f, ndim, size, red, RED_SUM, &outer) > 1;
}

/* ir.Scan.create / ir.Sort.create: one realized buffer per value (n of them, into out[]), or
 * false when the op must fall back (no GPU, a split scan of two values, a sort over more than
 * 512 elements or a symbolic length). A scanned dim of one element is a pointwise copy. */
static bool scan_create(Lower *L, const Node *n, IrTBox *x, IrScan proto, int ndim, Expr **size, IrTBox **out) {
    /* V.graph.has_feature(device, BackendFeature.SCAN / SORT): Triton has them, the cpp backend
     * not; here the backend is the session's target (a cuda graph compiled for the CPU is C) */
    if (!lw_gpu_backend(L, n)) return false;
    int64_t len;
    bool known = sym_is_int(size[proto.axis], &len);
    if (proto.op == SCAN_SORT && !(known && len <= 512)) return false;   /* persistent kernels only */
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    lw_origins_merge(L, &o, &no, x);
    if (known && len <= 1) {
        for (int k = 0; k < proto.n; k++) out[k] = lw_tbox_of_storage(L, lw_storage_new(L, proto.fns[k], proto.dtypes[k], ndim, size, o, no));
        return true;
    }
    if (proto.op != SCAN_SORT && scan_splits(L, proto.fns[0], ndim, size, proto.axis) && proto.n > 1) return false;
    Device dev = n->has_meta ? n->meta.device : L->dev;
    for (int k = 0; k < proto.n; k++) {
        IrScan *sc = lw_alloc(L, sizeof *sc);
        *sc = proto;
        sc->output_index = k;
        Layout l = layout_contiguous(L->m, proto.dtypes[k], dev, ndim, size);
        Buffer *b = lw_new_buffer(L, BUF_COMPUTED, &l);
        b->origins = o;
        b->norigins = no;
        b->scan = sc;
        b->body = ir_trace_scan(L->m, b, sc, ndim, size);
        IrStorage *sb = lw_storage_new(L, NULL, proto.dtypes[k], ndim, size, o, no);
        sb->buf = b;
        out[k] = lw_tbox_of_storage(L, sb);
    }
    return true;
}

static int norm_dim(Lower *L, const Node *n, int64_t d, int ndim, int *axis) {
    int nd = ndim ? ndim : 1;
    if (d < -nd || d >= nd) return lw_err(L, n, "dim %lld out of range for a %d-d tensor", (long long)d, ndim);
    *axis = (int)(d < 0 ? d + nd : d);
    return 0;
}

/* The loader of the scanned dim's index as int64 (cummax's `lambda _: "rindex"`) */
static IrVal call_scan_index(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    return h->index_expr(h, idx[f->dim], f->dtype);
}

/* cumsum / cumprod (arg SCAN_SUM / SCAN_PROD; integer and bool inputs scan in int64 unless a
 * dtype is given: the node's dtype), logcumsumexp, cummax / cummin (values and int64 indices;
 * ties go to the later element, as torch). A 0-d tensor is a copy (and index 0). */
static int lower_scan(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor argument", n->target);
    int64_t d = 0;
    int axis = 0;
    if (!lw_arg_int(n, 1, "dim", &d)) return lw_err(L, n, "'%s' needs a dim", n->target);
    if (norm_dim(L, n, d, x->ndim, &axis) < 0) return -1;
    bool arg2 = arg == SCAN_MAX || arg == SCAN_MIN;
    DType dt = arg2 ? x->dtype : n->has_meta ? n->meta.dtype : x->dtype;
    const IrFn *f = lw_to_dtype(L, x->loader, dt);
    if (x->ndim == 0) {
        IrTBox *items[2] = {lw_pw_box(L, f, dt, 0, NULL, lw_short_name(L, n->target)), NULL};
        if (!arg2) return lw_set_tbox(L, n, items[0]);
        items[1] = lw_pw_box(L, lw_const(L, 0, DT_I64), DT_I64, 0, NULL, lw_short_name(L, n->target));
        return lw_set_tuple(L, n, items, 2);
    }
    IrScan proto = {.op = (IrScanOp)arg, .n = 1, .fns = {f}, .dtypes = {dt, dt}, .axis = axis};
    if (arg2) {
        IrFn *ix = lw_fn(L, call_scan_index, DT_I64);
        ix->dim = axis;
        proto.n = 2;
        proto.fns[1] = ix;
        proto.dtypes[1] = DT_I64;
    }
    IrTBox *out[2];
    if (!scan_create(L, n, x, proto, x->ndim, x->size, out)) return lw_fallback(L, n);
    return proto.n == 2 ? lw_set_tuple(L, n, out, 2) : lw_set_tbox(L, n, out[0]);
}

/* sort.default(x, dim=-1, descending=False) / sort.stable(x, *, stable, dim, descending):
 * lowering.py's sort_stable: the keys and an int16 iota of the sorted dim (its length must be
 * below int16's max) sorted together by ir.Sort; the indices are then converted to int64. */
static int lower_sort(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor argument", n->target);
    bool stable_op = arg == 1;
    int64_t d = -1, desc = 0, stable = 0;
    lw_arg_int(n, stable_op ? -1 : 1, "dim", &d);
    lw_arg_int(n, stable_op ? -1 : 2, "descending", &desc);
    if (stable_op) lw_arg_int(n, -1, "stable", &stable);
    int axis = 0;
    if (norm_dim(L, n, d, x->ndim, &axis) < 0) return -1;
    const char *nm = lw_short_name(L, n->target);
    if (x->ndim == 0) {
        IrTBox *items[2] = {lw_pw_box(L, x->loader, x->dtype, 0, NULL, nm), lw_pw_box(L, lw_const(L, 0, DT_I64), DT_I64, 0, NULL, nm)};
        return lw_set_tuple(L, n, items, 2);
    }
    int64_t len;
    if (!(sym_is_int(x->size[axis], &len) && len < 32767)) return lw_fallback(L, n);
    IrFn *ix = lw_fn(L, call_scan_index, DT_I16);
    ix->dim = axis;
    IrScan proto = {.op = SCAN_SORT, .flags = (stable ? SCAN_STABLE : 0) | (desc ? SCAN_DESCENDING : 0), .n = 2,
                    .fns = {x->loader, ix}, .dtypes = {x->dtype, DT_I16}, .axis = axis};
    IrTBox *out[2];
    if (!scan_create(L, n, x, proto, x->ndim, x->size, out)) return lw_fallback(L, n);
    out[1] = lw_pw_box(L, lw_to_dtype(L, out[1]->loader, DT_I64), DT_I64, x->ndim, x->size, nm);
    return lw_set_tuple(L, n, out, 2);
}

/* ---- the scan rows of the lowering table ---- */

const LoweringDef lowering_scan_table[] = {
    {"aten.cumsum.default", lower_scan, SCAN_SUM, true}, {"aten.cumprod.default", lower_scan, SCAN_PROD, true},
    {"aten.logcumsumexp.default", lower_scan, SCAN_LOGADDEXP, true}, {"aten.cummax.default", lower_scan, SCAN_MAX, true},
    {"aten.cummin.default", lower_scan, SCAN_MIN, true}, {"aten.sort.default", lower_sort, 0, true},
    {"aten.sort.stable", lower_sort, 1, true},
};
const int lowering_scan_count = sizeof lowering_scan_table / sizeof lowering_scan_table[0];
