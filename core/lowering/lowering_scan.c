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

/* DeviceProperties.multi_processor_count of the GPUs the recorded logs ran on (H100 / H200) */
enum { GPU_NUM_SM = 132 };

/* The loads of an inner function, run once over index symbols (Reduction.num_splits'
 * get_read_indices reads the recorded body the same way). */
typedef struct ReadIdx { OpsHandler h; Expr *idx[32]; int n; } ReadIdx;
static IrVal ri_load(OpsHandler *h, Buffer *buf, Expr *index) {
    ReadIdx *r = h->self;
    (void)buf;
    if (r->n < 32) r->idx[r->n++] = index;
    return 0;
}
static void ri_store(OpsHandler *h, Buffer *b, Expr *i, IrVal v) { (void)h; (void)b; (void)i; (void)v; }
static IrVal ri_constant(OpsHandler *h, double v, DType dt) { (void)h; (void)v; (void)dt; return 0; }
static IrVal ri_index_expr(OpsHandler *h, Expr *e, DType dt) { (void)h; (void)e; (void)dt; return 0; }
static IrVal ri_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) { (void)h; (void)v; (void)dt; (void)src; return 0; }
static IrVal ri_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) { (void)h; (void)op; (void)a; (void)dt; return 0; }
static IrVal ri_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, IrVal v) { (void)h; (void)dt; (void)src; (void)rt; (void)v; return 0; }
static IrVal ri_getitem(OpsHandler *h, IrVal v, int k) { (void)h; (void)v; (void)k; return 0; }
static IrVal ri_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) { (void)h; (void)v; (void)b; (void)off; return 0; }
static Expr *ri_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    (void)h; (void)x; (void)check; (void)wrap_neg;
    return sym ? sym : size;
}

/* Scan.num_splits > 1 (Reduction.num_splits with reduction_type "scan", which always may
 * split): static sizes only; the reads that use every loop var vote inner (the scanned var's
 * stride is at most 1) or outer; inner_reduction_splits splits when fewer than 2 * num_sm rows
 * scan more than 8192 elements, outer_reduction_splits (split_size min_elements_per_thread,
 * rvals_per_thread 4) when more than 128 and the rows are fewer than num_sm * 2 * 32. Example:
 * cumsum over 16384 elements of 4 rows splits (SplitScan); over 50 of 4 rows it does not. */
static bool scan_splits(Lower *L, const IrFn *f, int ndim, Expr **size, int axis) {
    int64_t numel = 1, rn, v;
    for (int d = 0; d < ndim; d++) {
        if (!sym_is_int(size[d], &v)) return false;
        if (d != axis) numel *= v;
    }
    sym_is_int(size[axis], &rn);
    if (numel == 1) return rn > 8192;
    if (rn <= 32 || numel >= GPU_NUM_SM * 2 * 32) return false;
    ReadIdx r = {0};
    r.h = (OpsHandler){&r, ri_load, ri_store, ri_constant, ri_index_expr, ri_to_dtype, ri_math, ri_red, ri_getitem,
                       ri_store, ri_indirect, ri_store, NULL, ri_bucketize};
    Expr *idx[MI_MAX_DIMS], *zero[MI_MAX_DIMS];
    const char *names[MI_MAX_DIMS];
    int nv = 0;
    for (int d = 0; d < ndim; d++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_s%d", d);
        idx[d] = sym_is_int(size[d], &v) && v == 1 ? sym_int(L->s, 0) : sym_symbol(L->s, nm);
        if (idx[d]->kind == EX_SYM) { names[nv] = idx[d]->name; zero[nv++] = sym_int(L->s, 0); }
    }
    f->call(f, &r.h, idx);
    int inner = 0, outer = 0;
    for (int i = 0; i < r.n; i++) {
        const char *fs[MI_MAX_DIMS * 2 + 8];
        int nf = sym_free_symbols(r.idx[i], fs, MI_MAX_DIMS * 2 + 8);
        bool all = true;
        for (int k = 0; k < nv; k++) {
            bool has = false;
            for (int j = 0; j < nf; j++) has |= fs[j] == names[k];
            all &= has;
        }
        if (!all) continue;
        Expr *one[MI_MAX_DIMS];
        for (int k = 0; k < nv; k++) one[k] = names[k] == idx[axis]->name ? sym_int(L->s, 1) : zero[k];
        Expr *st = sym_simplify(L->s, sym_sub(L->s, sym_subst(L->s, r.idx[i], names, one, nv), sym_subst(L->s, r.idx[i], names, zero, nv)), NULL, 0);
        int64_t sv;
        if (sym_is_int(st, &sv) && sv > 1) outer++;
        else inner++;
    }
    if (!inner && !outer) return false;   /* no full-size read: ReductionHint.DEFAULT, 1 */
    if (inner > outer) return numel < 2 * GPU_NUM_SM && rn > 8192;
    return rn > 128;
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
