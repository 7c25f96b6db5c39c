/* lowering_reductions.c — reduction lowerings (Inductor's Reduction.create and the reduction
 * lowerings of lowering.py): sum / prod / amax / amin / argmax / argmin / mean, max.dim and
 * min.dim, any / all, var / std / var_mean (Welford), logsumexp, softmax, log_softmax and
 * prepare_softmax_online. Each reduction is realized into its own buffer at once; the
 * pointwise tail (mean's division, softmax's exp / sum) stays pending. */
#include "lowering/lowering_impl.h"

#include <math.h>
#include <string.h>

/* softmax lowering modes (the row argument) */
enum { SOFTMAX = 0, SOFTMAX_ONLINE = 1, LOG_SOFTMAX = 2 };

/* ---- reductions ---- */

static int norm_dims(const Node *n, int argi, const char *kw, int ndim, bool *red) {
    for (int d = 0; d < ndim; d++) red[d] = false;
    const Value *v = lw_arg_or_kw(n, argi, kw);
    int64_t dims[MI_MAX_DIMS];
    int nd = (!v || v->kind == V_NONE) ? -1 : lw_int_list(v, dims, MI_MAX_DIMS);
    if (nd == -1 && v && v->kind != V_NONE) return -1;
    if (nd <= 0) { for (int d = 0; d < ndim; d++) red[d] = true; return ndim; }
    for (int i = 0; i < nd; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + ndim : dims[i];
        if (ndim == 0 && (d == 0 || d == -1)) continue;
        if (d < 0 || d >= ndim) return -1;
        red[d] = true;
    }
    int c = 0;
    for (int d = 0; d < ndim; d++) c += red[d];
    return c;
}

/* Inductor's argmax / argmin combine_fn (get_reduction_combine_fn) on values: the (value,
 * index) pair of a and b that wins -- the larger (smaller) value, a NaN over a number, the
 * lower index on a tie; *av and *ai become the winner's. */
static void arg_combine(OpsHandler *h, bool is_min, DType vdt, IrVal *av, IrVal *ai, IrVal bv, IrVal bi) {
    IrVal mask = ops_binary(h, is_min ? IOP_LT : IOP_GT, *av, bv, DT_BOOL);
    IrVal equal = ops_binary(h, IOP_EQ, *av, bv, DT_BOOL);
    if (dtype_is_float(vdt)) {
        IrVal anan = ops_binary(h, IOP_NE, *av, *av, DT_BOOL), bnan = ops_binary(h, IOP_NE, bv, bv, DT_BOOL);
        mask = ops_binary(h, IOP_LOGICAL_OR, mask, ops_binary(h, IOP_GT, anan, bnan, DT_BOOL), DT_BOOL);
        equal = ops_binary(h, IOP_LOGICAL_OR, equal, ops_binary(h, IOP_LOGICAL_AND, anan, bnan, DT_BOOL), DT_BOOL);
    }
    IrVal tie = ops_binary(h, IOP_LOGICAL_AND, equal, ops_binary(h, IOP_LT, *ai, bi, DT_BOOL), DT_BOOL);
    mask = ops_binary(h, IOP_LOGICAL_OR, mask, tie, DT_BOOL);
    *av = ops_where(h, mask, *av, bv, vdt);
    *ai = ops_where(h, mask, *ai, bi, DT_I64);
}

/* The unrolled reduction's inner function: f->a[0] is the reduction's (output vars, then nr =
 * f->nmap reduction vars of sizes f->map[]), f->op the IrReduceType, f->c the element count.
 * Each element is loaded once and folded left into the accumulator through the handler, so
 * the work is linear in the elements (argmax's pairs are values, not re-evaluated closures). */
static IrVal call_unrolled(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = lw_fn_sym(f);
    IrReduceType rt = (IrReduceType)f->op;
    bool arg = rt == RED_ARGMAX || rt == RED_ARGMIN;
    IrMathOp comb = rt == RED_SUM ? IOP_ADD : rt == RED_PROD ? IOP_MUL : rt == RED_MAX ? IOP_MAXIMUM : IOP_MINIMUM;
    int no = f->nin, nr = f->nmap;
    int64_t rnumel = (int64_t)f->c, rn[MI_MAX_DIMS];
    for (int j = 0; j < nr; j++) sym_is_int(f->map[j], &rn[j]);
    Expr *in[MI_MAX_DIMS * 2];
    for (int d = 0; d < no; d++) in[d] = idx[d];
    IrVal acc = 0, acci = 0;
    for (int64_t k = 0; k < rnumel; k++) {
        int64_t r = k;
        for (int j = nr - 1; j >= 0; j--) { in[no + j] = sym_int(s, r % rn[j]); r /= rn[j]; }
        IrVal v = f->a[0]->call(f->a[0], h, in);
        if (!arg) { acc = k ? ops_binary(h, comb, acc, v, f->dtype) : v; continue; }
        IrVal vi = h->constant(h, (double)k, DT_I64);
        if (!k) { acc = v; acci = vi; }
        else arg_combine(h, rt == RED_ARGMIN, f->a[0]->dtype, &acc, &acci, v, vi);
    }
    return arg ? acci : acc;
}

/* Inductor's Reduction._unroll_reduction_fn: the reduction f (over no output vars then nr
 * reduction vars, sizes rn[]) as a pointwise function of the no output vars, the combine_fn
 * folded left over every reduction index in row-major order (sum of 4: ((v0 + v1) + v2) + v3;
 * argmax: over (value, flat index) pairs, the index returned). rnumel == 1 is the plain copy
 * at reduction index 0 (argmax / argmin: the constant 0). */
static const IrFn *unrolled_reduction(Lower *L, const IrFn *f, int no, int nr, Expr **rsize, int64_t rnumel,
                                      IrReduceType rt, DType out_dt) {
    if (rnumel == 1 && (rt == RED_ARGMAX || rt == RED_ARGMIN)) return lw_const(L, 0, out_dt);
    IrFn *u = lw_fn(L, call_unrolled, out_dt);
    u->a[0] = f;
    u->na = 1;
    u->op = rt;
    u->c = (double)rnumel;
    u->nin = no;
    u->nmap = nr;
    u->map = lw_alloc(L, sizeof(Expr *) * (nr + 1));
    for (int j = 0; j < nr; j++) u->map[j] = rsize[j];
    int per = rt == RED_ARGMAX || rt == RED_ARGMIN ? 12 : 1;   /* ops the combine adds per element */
    int fc = lw_fn_cost(f);
    u->cost = (int)(rnumel * (fc + per) > 1 << 20 ? 1 << 20 : rnumel * (fc + per));
    return u;
}

/* The realized reduction buffer of f (no output dims osize, then nr reduced dims rsize);
 * keepdim: the kept size-1 dims go outermost, as Inductor's decide_layout ([64, 1]: strides
 * [1, 64]). */
static IrStorage *reduction_buffer(Lower *L, const Node *n, IrTBox *x, const IrFn *f, int no, Expr **osize, int nr,
                                   Expr **rsize, IrReduceType rt, DType out_dt, int welford_item, bool keepdim,
                                   const char *oname) {
    SymCtx *s = L->s;
    Layout l = layout_contiguous(L->m, out_dt, n->has_meta ? n->meta.device : L->dev, no, osize);
    if (keepdim) {
        Expr *outer = sym_int(s, 1);
        for (int d = 0; d < no; d++) {
            int64_t one;
            if (!(sym_is_int(osize[d], &one) && one == 1)) outer = sym_mul(s, outer, osize[d]);
        }
        for (int d = 0; d < no; d++) {
            int64_t one;
            if (sym_is_int(osize[d], &one) && one == 1) l.stride[d] = outer;
        }
    }
    Buffer *b = lw_new_buffer(L, BUF_COMPUTED, &l);
    const char **o = NULL;
    int nor = 0;
    lw_origins_add(L, &o, &nor, oname ? oname : lw_short_name(L, n->target));
    lw_origins_merge(L, &o, &nor, x);
    b->origins = o;
    b->norigins = nor;
    b->is_reduction = true;
    b->rtype = rt;
    b->body = ir_trace_body(L->m, b, f, no, osize, NULL, nr, rsize, rt, welford_item);
    IrStorage *sb = lw_storage_new(L, NULL, out_dt, no, osize, o, nor);
    sb->buf = b;
    return sb;
}

/* Reduction.default_value of a split's masked tail: max / min start at the dtype's lowest /
 * highest (float: -inf / inf; bool 0 / 1), prod at 1, the others at 0 */
static double reduction_default(IrReduceType rt, DType dt) {
    bool fl = dt == DT_F32 || dt == DT_F64 || dt == DT_F16 || dt == DT_BF16;
    double lo = dt == DT_I8 ? -128 : dt == DT_I16 ? -32768 : dt == DT_I32 ? -2147483648.0 : dt == DT_I64 ? -9223372036854775808.0 : 0;
    double hi = dt == DT_I8 ? 127 : dt == DT_I16 ? 32767 : dt == DT_I32 ? 2147483647.0 : dt == DT_I64 ? 9223372036854775807.0 :
                dt == DT_U8 ? 255 : 1;
    switch (rt) {
    case RED_MAX: return fl ? -INFINITY : lo;
    case RED_MIN: return fl ? INFINITY : hi;
    case RED_PROD: return 1;
    default: return 0;
    }
}

static IrStorage *reduction_create(Lower *L, const Node *n, IrTBox *x, const IrFn *f, int no, Expr **osize, int nr,
                                   Expr **rsize, IrReduceType rt, DType out_dt, bool keepdim, const char *oname);

/* Reduction._multilayer_wrap_loader: f (no output dims, then nr reduced dims rsize) as a
 * function of [*ranges, split] and the block's element r, reading the reduced dims through the
 * flat index block * s + r, masked to dflt past rnumel when split does not divide it.
 * Example: rnumel 240, split 2: block 120, element (c, s, r) reads flat 120 * s + r. */
static const IrFn *multilayer_wrap(Lower *L, const IrFn *f, int no, int nr, Expr **rsize, int64_t rnumel, int64_t split,
                                   double dflt) {
    SymCtx *s = L->s;
    int64_t block = (rnumel + split - 1) / split;
    Expr *flat = sym_add(s, sym_mul(s, sym_int(s, block), lw_var(L, no)), lw_var(L, no + 1));
    Expr *map[MI_MAX_DIMS * 2], *total = sym_int(s, rnumel);
    /* ops.masked runs the body only inside; here the body reads at the index clamped into it
     * (as constant_pad_nd's masked read) and the where() keeps the default */
    Expr *at = rnumel % split ? sym_min(s, flat, sym_int(s, rnumel - 1)) : flat;
    for (int d = 0; d < no; d++) map[d] = lw_var(L, d);
    lw_reshape_indexer(L, rsize, nr, &total, &at, 1, map + no);
    const IrFn *w = lw_reindex(L, f, no + 2, map, no + nr);
    if (rnumel % split) {
        const IrFn *in = lw_math(L, IOP_LT, DT_BOOL, lw_index_expr(L, flat, no + 2, DT_I32), lw_const(L, (double)rnumel, DT_I32), NULL);
        w = lw_math(L, IOP_WHERE, w->dtype, in, w, lw_const(L, dflt, w->dtype));
    }
    return w;
}

/* Reduction.create_multilayer: the first layer reduces f over [*ranges, split] in blocks of
 * ceil(rnumel / split) (multilayer_wrap, masked to the reduction's default), realized (f32 for
 * f16 / bf16); the second reduces its split partials per output, a plain Reduction (neither
 * unrolled nor split again). Example: a column sum of [240, 6] on a GPU: [6, 2] partials of
 * 120, then [6]. */
static IrStorage *reduction_multilayer(Lower *L, const Node *n, IrTBox *x, const IrFn *f, int no, Expr **osize, int nr,
                                       Expr **rsize, int64_t rnumel, int64_t split, IrReduceType rt, DType out_dt,
                                       bool keepdim, const char *oname) {
    SymCtx *s = L->s;
    int64_t block = (rnumel + split - 1) / split;
    const IrFn *w = multilayer_wrap(L, f, no, nr, rsize, rnumel, split, reduction_default(rt, f->dtype));
    DType inter = out_dt == DT_F16 || out_dt == DT_BF16 ? DT_F32 : out_dt;
    if (rt != RED_ARGMAX && rt != RED_ARGMIN) w = lw_to_dtype(L, w, inter);
    Expr *osz[MI_MAX_DIMS + 1], *bsz = sym_int(s, block);
    for (int d = 0; d < no; d++) osz[d] = osize[d];
    osz[no] = sym_int(s, split);
    IrStorage *mid = reduction_create(L, n, x, w, no + 1, osz, 1, &bsz, rt, inter, false, oname);
    if (!mid->buf) lw_realize(L, mid, NULL);
    const IrFn *g = lw_to_dtype(L, lw_tbox_of_storage(L, mid)->loader, out_dt);
    Expr *ssz = sym_int(s, split);
    return reduction_buffer(L, n, x, g, no, osize, 1, &ssz, rt, out_dt, 0, keepdim, oname);
}

/* Reduction.create from f (no output dims, then nr reduced dims): unrolled, split or one
 * buffer (see lw_reduction); not Welford (welford_create) */
static IrStorage *reduction_create(Lower *L, const Node *n, IrTBox *x, const IrFn *f, int no, Expr **osize, int nr,
                                   Expr **rsize, IrReduceType rt, DType out_dt, bool keepdim, const char *oname) {
    int64_t rn[MI_MAX_DIMS], rnumel = 1, onum = 1;
    bool rstatic = true, ostatic = true;
    for (int j = 0; j < nr; j++) {
        rstatic &= sym_is_int(rsize[j], &rn[j]);
        if (rstatic) rnumel *= rn[j];
    }
    for (int d = 0; d < no; d++) {
        int64_t v;
        if (sym_is_int(osize[d], &v)) onum *= v;
        else ostatic = false;
    }
    int threshold = L->unroll_threshold ? L->unroll_threshold : 8;
    bool one = rstatic && rnumel == 1;
    /* (sympy_product(ranges) != 1 or is_gpu(device.type)): a GPU unrolls a single result too */
    bool gpu = (n->has_meta ? n->meta.device : L->dev).kind != DEV_CPU;
    if (one || (rstatic && rnumel > 0 && rnumel < threshold && (!ostatic || onum != 1 || gpu))) {
        const IrFn *pf = unrolled_reduction(L, f, no, nr, rsize, rnumel, rt, out_dt);
        const char **o = NULL;
        int nor = 0;
        lw_origins_add(L, &o, &nor, oname ? oname : lw_short_name(L, n->target));
        lw_origins_merge(L, &o, &nor, x);
        return lw_storage_new(L, pf, out_dt, no, osize, o, nor);
    }
    /* triton doesn't support reduce to single element well, so break it up */
    bool outer;
    int64_t split = gpu && L->ctx->target == MI_DEV_CUDA ? lw_num_splits(L, f, no, osize, nr, rsize, rt, &outer) : 1;
    if (split > 1) return reduction_multilayer(L, n, x, f, no, osize, nr, rsize, rnumel, split, rt, out_dt, keepdim, oname);
    return reduction_buffer(L, n, x, f, no, osize, nr, rsize, rt, out_dt, 0, keepdim, oname);
}

/* The three inner functions of a welford_combine (mean, m2, weight) as one IrFn: the body
 * recorder calls each (ir.c trace_body); called as one function it runs all three and gives
 * the mean's value. */
static IrVal call_welford_triple(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrVal v = f->a[0]->call(f->a[0], h, idx);
    f->a[1]->call(f->a[1], h, idx);
    f->a[2]->call(f->a[2], h, idx);
    return v;
}
static const IrFn *welford_triple(Lower *L, const IrFn *const *fns) {
    IrFn *f = lw_fn(L, call_welford_triple, fns[0]->dtype);
    f->na = 3;
    f->cost = 0;
    for (int k = 0; k < 3; k++) {
        f->a[k] = fns[k];
        f->cost = lw_cost_add(f->cost, lw_fn_cost(fns[k]));
    }
    return f;
}

static void welford_create(Lower *L, const Node *n, IrTBox *x, const IrFn *const *fns, IrReduceType rt, int no,
                           Expr **osize, int nr, Expr **rsize, DType dt, bool keepdim, const char *oname,
                           const bool *want, IrStorage **out);

/* WelfordReduction.create_multilayer: the first layer is a Welford over [*ranges, split] in
 * blocks of ceil(rnumel / split) (multilayer_wrap, masked to 0), its mean, m2 and weight
 * realized; the second merges the split partial triples per output (welford_combine). When
 * split does not divide rnumel, a welford_reduce becomes the welford_combine of (x, 0, 1), so
 * that the masked elements (0, 0, 0) weigh nothing. Example: the layer norm statistics of
 * [4, 16384] on a GPU: [4, 1, 2] partials of 8192, then [4, 1] over the 2 partials. */
static void welford_multilayer(Lower *L, const Node *n, IrTBox *x, const IrFn *const *fns, IrReduceType rt, int no,
                               Expr **osize, int nr, Expr **rsize, int64_t rnumel, int64_t split, DType dt,
                               bool keepdim, const char *oname, const bool *want, IrStorage **out) {
    if (rnumel % split && rt != RED_WELFORD_COMBINE) {
        const IrFn *c[3] = {fns[0], lw_const(L, 0, dt), lw_const(L, 1, dt)};
        welford_multilayer(L, n, x, c, RED_WELFORD_COMBINE, no, osize, nr, rsize, rnumel, split, dt, keepdim, oname, want, out);
        return;
    }
    const IrFn *w[3];
    for (int k = 0; k < ir_reduce_arity(rt); k++) w[k] = multilayer_wrap(L, fns[k], no, nr, rsize, rnumel, split, 0);
    Expr *osz[MI_MAX_DIMS + 1], *bsz = sym_int(L->s, (rnumel + split - 1) / split), *ssz = sym_int(L->s, split);
    for (int d = 0; d < no; d++) osz[d] = osize[d];
    osz[no] = ssz;
    const bool all[3] = {true, true, true};
    IrStorage *mid[3];
    welford_create(L, n, x, w, rt, no + 1, osz, 1, &bsz, dt, false, oname, all, mid);
    const IrFn *g[3];
    for (int k = 0; k < 3; k++) {
        if (!mid[k]->buf) lw_realize(L, mid[k], NULL);
        g[k] = lw_tbox_of_storage(L, mid[k])->loader;
    }
    welford_create(L, n, x, g, RED_WELFORD_COMBINE, no, osize, 1, &ssz, dt, keepdim, oname, want, out);
}

/* WelfordReduction.create over no output dims, then nr reduced dims: fns[0] the values
 * (welford_reduce) or fns[0..2] partial (mean, m2, weight) triples (welford_combine); out[k]
 * gets the mean (k = 0), m2 (1) or weight (2) where want[k], each its own buffer (Inductor's
 * three outputs, the unused ones dead). One element is a copy: (x, 0, 1), a combine's own
 * triple; Welford is never unrolled ("TODO: Unrolled reduction"); on a GPU, Reduction.num_splits
 * of fns[0] may split it (welford_multilayer). */
static void welford_create(Lower *L, const Node *n, IrTBox *x, const IrFn *const *fns, IrReduceType rt, int no,
                           Expr **osize, int nr, Expr **rsize, DType dt, bool keepdim, const char *oname,
                           const bool *want, IrStorage **out) {
    int64_t rnumel = 1, v;
    bool rstatic = true;
    for (int j = 0; j < nr; j++) {
        rstatic &= sym_is_int(rsize[j], &v);
        if (rstatic) rnumel *= v;
    }
    if (rstatic && rnumel == 1) {
        for (int k = 0; k < 3; k++) {
            if (!want[k]) continue;
            const IrFn *pf = rt == RED_WELFORD_COMBINE ? unrolled_reduction(L, fns[k], no, nr, rsize, 1, RED_SUM, dt)
                             : k == 0                 ? unrolled_reduction(L, fns[0], no, nr, rsize, 1, RED_SUM, dt)
                                                      : lw_const(L, k == 1 ? 0 : 1, dt);
            const char **o = NULL;
            int nor = 0;
            lw_origins_add(L, &o, &nor, oname ? oname : lw_short_name(L, n->target));
            lw_origins_merge(L, &o, &nor, x);
            out[k] = lw_storage_new(L, pf, dt, no, osize, o, nor);
        }
        return;
    }
    bool gpu = (n->has_meta ? n->meta.device : L->dev).kind != DEV_CPU, outer;
    int64_t split = gpu && rstatic && L->ctx->target == MI_DEV_CUDA ? lw_num_splits(L, fns[0], no, osize, nr, rsize, rt, &outer) : 1;
    if (split > 1) {
        welford_multilayer(L, n, x, fns, rt, no, osize, nr, rsize, rnumel, split, dt, keepdim, oname, want, out);
        return;
    }
    const IrFn *f = rt == RED_WELFORD_COMBINE ? welford_triple(L, fns) : fns[0];
    for (int k = 0; k < 3; k++)
        if (want[k]) out[k] = reduction_buffer(L, n, x, f, no, osize, nr, rsize, rt, dt, k, keepdim, oname);
}

/* x's loader over the output dims (keepdim: the reduced ones as size 1), then the reduced dims
 * (Inductor's _make_reduction_inner): *no / osize, *nr / rsize get the two lists */
static const IrFn *reduction_inner(Lower *L, IrTBox *x, const bool *red, bool keepdim, int *no, Expr **osize, int *nr,
                                   Expr **rsize) {
    Expr *map[MI_MAX_DIMS];
    *no = *nr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d]) {
            if (keepdim) osize[(*no)++] = sym_int(L->s, 1);
        } else osize[(*no)++] = x->size[d];
    }
    for (int d = 0; d < x->ndim; d++)
        if (red[d]) rsize[(*nr)++] = x->size[d];
    int ko = 0, kr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d]) { map[d] = lw_var(L, *no + kr++); if (keepdim) ko++; }
        else map[d] = lw_var(L, ko++);
    }
    return lw_reindex(L, x->loader, *no + *nr, map, x->ndim);
}

/* var_mean_welford_'s WelfordReduction.create of x over red[] (welford_reduce, dtype dt):
 * out[0] the mean, out[1] the m2, out[2] the weight where want[k]; a split Welford's first
 * layer is made once for all of them */
static void welford_of(Lower *L, const Node *n, IrTBox *x, const bool *red, bool keepdim, DType dt, const char *oname,
                       const bool *want, IrStorage **out) {
    Expr *osize[MI_MAX_DIMS], *rsize[MI_MAX_DIMS];
    int no, nr;
    const IrFn *f = reduction_inner(L, x, red, keepdim, &no, osize, &nr, rsize);
    welford_create(L, n, x, &f, RED_WELFORD, no, osize, nr, rsize, dt, keepdim, oname, want, out);
}

/* Reduce x over dims red[] into a realized buffer; out size keepdim or not. As Inductor's
 * Reduction.create, a reduction of a static number of elements below unroll_reductions_threshold
 * (8) into more than one output element is no reduction but a pending pointwise that unrolls it
 * (unrolled_reduction; softmax over 4 experts: max(x0, x1, x2, x3)), and one of exactly one
 * element is a pointwise copy; Welford stays a reduction (Inductor's unrolled Welford is a TODO)
 * except for one element (mean = x, m2 = 0). On a GPU, Reduction.num_splits may split it in two
 * (core/lowering/lowering_split.c, reduction_multilayer). */
IrStorage *lw_reduction(Lower *L, const Node *n, IrTBox *x, const bool *red, bool keepdim,
                                 IrReduceType rt, DType out_dt, int welford_item, const char *oname) {
    if (rt == RED_WELFORD) {
        bool want[3] = {welford_item == 0, welford_item == 1, welford_item == 2};
        IrStorage *out[3] = {NULL, NULL, NULL};
        welford_of(L, n, x, red, keepdim, out_dt, oname, want, out);
        return out[welford_item];
    }
    Expr *osize[MI_MAX_DIMS], *rsize[MI_MAX_DIMS];
    int no, nr;
    const IrFn *f = reduction_inner(L, x, red, keepdim, &no, osize, &nr, rsize);
    if (rt != RED_ARGMAX && rt != RED_ARGMIN) f = lw_to_dtype(L, f, out_dt);
    return reduction_create(L, n, x, f, no, osize, nr, rsize, rt, out_dt, keepdim, oname);
}

static Expr *red_numel(Lower *L, IrTBox *x, const bool *red) {
    Expr *e = sym_int(L->s, 1);
    for (int d = 0; d < x->ndim; d++)
        if (red[d]) e = sym_mul(L->s, e, x->size[d]);
    return e;
}

/* pointwise over a realized storage: load(buf) op constant-or-index-expr */
static IrTBox *pw_scale(Lower *L, IrStorage *sb, IrMathOp op, Expr *by, DType dt, const char *oname) {
    IrTBox *t = lw_tbox_of_storage(L, sb);
    int64_t v;
    const IrFn *c = sym_is_int(by, &v) ? lw_const(L, (double)v, dt)
                                       : lw_to_dtype(L, lw_index_expr(L, by, 0, DT_I64), dt);
    const IrFn *f = lw_math(L, op, dt, lw_to_dtype(L, t->loader, dt), c, NULL);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, oname);
    IrStorage *ns = lw_storage_new(L, f, dt, sb->ndim, sb->size, o, no);
    return lw_tbox_of_storage(L, ns);
}

static int lower_reduction(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor argument", n->target);
    const char *t = n->target;
    bool red[MI_MAX_DIMS];
    bool keepdim = false;
    int64_t kd = 0;
    IrReduceType rt = RED_SUM;
    bool mean = false;
    bool all = strcmp(t, "aten.sum.default") == 0 || strcmp(t, "aten.mean.default") == 0 ||
               strcmp(t, "aten.max.default") == 0 || strcmp(t, "aten.min.default") == 0 ||
               strcmp(t, "aten.prod.default") == 0;
    if (all) { for (int d = 0; d < x->ndim; d++) red[d] = true; }
    else {
        /* argmax / argmin without a dim: the index into the flattened tensor (every dim reduced,
         * row-major: the reduction loop's own order) */
        if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lw_err(L, n, "'%s': bad dims", t);
        if (lw_arg_int(n, 2, "keepdim", &kd)) keepdim = kd != 0;
    }
    if (strncmp(t, "aten.amax", 9) == 0 || strncmp(t, "aten.max.", 9) == 0) rt = RED_MAX;
    else if (strncmp(t, "aten.amin", 9) == 0 || strncmp(t, "aten.min.", 9) == 0) rt = RED_MIN;
    else if (strncmp(t, "aten.prod", 9) == 0) rt = RED_PROD;
    else if (strncmp(t, "aten.argmax", 11) == 0) rt = RED_ARGMAX;
    else if (strncmp(t, "aten.argmin", 11) == 0) rt = RED_ARGMIN;
    else if (strncmp(t, "aten.mean", 9) == 0) mean = true;
    DType odt = n->has_meta ? n->meta.dtype : x->dtype;
    if ((rt == RED_ARGMAX || rt == RED_ARGMIN) && x->ndim == 0 && n->has_meta)   /* a 0-d tensor: index 0 */
        return lw_set_pointwise(L, n, lw_const(L, 0, odt), odt, 0);
    IrStorage *sb = lw_reduction(L, n, x, red, keepdim, rt, mean ? odt : odt, 0, NULL);
    if (mean) return lw_set_tbox(L, n, pw_scale(L, sb, IOP_TRUEDIV, red_numel(L, x, red), odt, "mean"));
    return lw_set_tbox(L, n, lw_tbox_of_storage(L, sb));
}

static int lower_max_dim(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    int64_t dim, kd = 0;
    if (!x || !lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "'%s' needs a tensor and a dim", n->target);
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lw_err(L, n, "'%s': bad dim", n->target);
    bool keepdim = lw_arg_int(n, 2, "keepdim", &kd) && kd;
    bool mx = strncmp(n->target, "aten.max", 8) == 0;
    const char *nm = mx ? "max" : "min";
    IrStorage *v = lw_reduction(L, n, x, red, keepdim, mx ? RED_MAX : RED_MIN, x->dtype, 0, nm);
    IrStorage *i = lw_reduction(L, n, x, red, keepdim, mx ? RED_ARGMAX : RED_ARGMIN, DT_I64, 0, nm);
    IrTBox *items[2] = {lw_tbox_of_storage(L, v), lw_tbox_of_storage(L, i)};
    return lw_set_tuple(L, n, items, 2);
}

/* any / all: an int64 count of nonzero (any) or zero (all) elements, compared with 0 (so an
 * empty reduction gives False / True, as torch). */
static int lower_any_all(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor argument", n->target);
    bool any = strncmp(n->target, "aten.any", 8) == 0, red[MI_MAX_DIMS];
    bool whole = strcmp(n->target, "aten.any.default") == 0 || strcmp(n->target, "aten.all.default") == 0;
    int64_t kd = 0;
    if (whole) for (int d = 0; d < x->ndim; d++) red[d] = true;
    else if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lw_err(L, n, "'%s': bad dims", n->target);
    bool keepdim = !whole && lw_arg_int(n, 2, "keepdim", &kd) && kd;
    const char *nm = any ? "any" : "all";
    const IrFn *hit = lw_math(L, any ? IOP_NE : IOP_EQ, DT_BOOL, x->loader, lw_const(L, 0, x->dtype), NULL);
    IrTBox *cnt = lw_pw_box(L, lw_to_dtype(L, hit, DT_I64), DT_I64, x->ndim, x->size, nm);
    IrStorage *sb = lw_reduction(L, n, cnt, red, keepdim, RED_SUM, DT_I64, 0, nm);
    IrTBox *c = lw_tbox_of_storage(L, sb);
    const IrFn *out = lw_math(L, any ? IOP_GT : IOP_EQ, DT_BOOL, c->loader, lw_const(L, 0, DT_I64), NULL);
    return lw_set_tbox(L, n, lw_pw_box(L, out, DT_BOOL, c->ndim, c->size, nm));
}

/* lowering.py use_two_step_variance / var_mean_sum_: a variance over a static number of
 * elements below unroll_reductions_threshold (8), into more than one output element, is
 * computed in two steps rather than by Welford: mean = sum(x) / N (realized when var_mean
 * returns it), then sum((x - mean)^2) / max(N - correction, 0) -- both unrolled sums, so a
 * small column variance is a pending Pointwise that fuses like one (var over 7 rows next to
 * argmin over them: one kernel). In f32 for f16/bf16 (get_computation_dtype), cast back.
 * Returns false (nothing done) when Welford applies. */
static bool two_step_var(Lower *L, const Node *n, IrTBox *x, const bool *red, bool keepdim, double corr, bool want_mean,
                         const char *nm, IrTBox **var, IrTBox **mean) {
    int64_t rn = 1, on = 1, v;
    bool ostatic = true;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d] && !sym_is_int(x->size[d], &v)) return false;
        if (red[d]) rn *= v;
        else if (sym_is_int(x->size[d], &v)) on *= v;
        else ostatic = false;
    }
    int threshold = L->unroll_threshold ? L->unroll_threshold : 8;
    if (rn >= threshold || (ostatic && on == 1)) return false;
    DType out = x->dtype, dt = (out == DT_F16 || out == DT_BF16) ? DT_F32 : out;
    if (dt != out) x = lw_pw_box(L, lw_to_dtype(L, x->loader, dt), dt, x->ndim, x->size, nm);
    IrTBox *mt = pw_scale(L, lw_reduction(L, n, x, red, true, RED_SUM, dt, 0, nm), IOP_TRUEDIV, sym_int(L->s, rn), dt, nm);
    if (want_mean && mt->sb && !mt->sb->buf) lw_realize(L, mt->sb, NULL);
    Expr *map[MI_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) map[d] = red[d] ? sym_int(L->s, 0) : lw_var(L, d);
    const IrFn *diff = lw_math(L, IOP_SUB, dt, x->loader, lw_reindex(L, mt->loader, x->ndim, map, x->ndim), NULL);
    IrTBox *sq = lw_pw_box(L, lw_math(L, IOP_MUL, dt, diff, diff, NULL), dt, x->ndim, x->size, nm);
    int64_t denom = rn - (int64_t)corr;
    IrTBox *vt = pw_scale(L, lw_reduction(L, n, sq, red, keepdim, RED_SUM, dt, 0, nm), IOP_TRUEDIV, sym_int(L->s, denom > 0 ? denom : 0), dt, nm);
    if (dt != out) vt = lw_pw_box(L, lw_to_dtype(L, vt->loader, out), out, vt->ndim, vt->size, nm);
    *var = vt;
    if (mean) {
        IrTBox *m = mt;
        if (!keepdim) {   /* squeeze the reduced dims */
            Expr *sq_map[MI_MAX_DIMS], *osz[MI_MAX_DIMS];
            int k = 0;
            for (int d = 0; d < x->ndim; d++) {
                sq_map[d] = red[d] ? sym_int(L->s, 0) : lw_var(L, k);
                if (!red[d]) osz[k++] = x->size[d];
            }
            m = lw_tbox_new(L, dt, k, osz, lw_reindex(L, mt->loader, k, sq_map, x->ndim));
            m->is_view = mt->sb != NULL;
            m->view_of = mt->sb;
        }
        if (dt != out) m = lw_pw_box(L, lw_to_dtype(L, m->loader, out), out, m->ndim, m->size, nm);
        *mean = m;
    }
    return true;
}

/* var.correction / std.correction: welford m2 / (N - correction), sqrt for std. */
static int lower_var_std(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "'%s' needs a tensor", n->target);
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lw_err(L, n, "'%s': bad dims", n->target);
    int64_t kd = 0;
    bool keepdim = lw_arg_int(n, -1, "keepdim", &kd) && kd;
    double corr = 1;
    const Kwarg *c = node_kwarg(n, "correction");
    if (c && c->v.kind != V_NONE) value_as_double(&c->v, &corr);
    bool sd = strncmp(n->target, "aten.std", 8) == 0;
    const char *nm = sd ? "std" : "var";
    DType dt = x->dtype;
    IrTBox *v = NULL;
    if (!two_step_var(L, n, x, red, keepdim, corr, false, nm, &v, NULL)) {
        IrStorage *m2 = lw_reduction(L, n, x, red, keepdim, RED_WELFORD, dt, 1, nm);
        Expr *N = sym_sub(L->s, red_numel(L, x, red), sym_int(L->s, (int64_t)corr));
        v = pw_scale(L, m2, IOP_TRUEDIV, N, dt, nm);
    }
    if (sd) v = lw_pw_box(L, lw_math(L, IOP_SQRT, dt, v->loader, NULL, NULL), dt, v->ndim, v->size, nm);
    return lw_set_tbox(L, n, v);
}

/* logsumexp as torch computes it: m = amax(x) with infinities replaced by 0,
 * log(sum(exp(x - m))) + m. */
static int lower_logsumexp(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "logsumexp needs a tensor");
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lw_err(L, n, "logsumexp: bad dims");
    int64_t kd = 0;
    bool keepdim = lw_arg_int(n, 2, "keepdim", &kd) && kd;
    const TensorMeta *om = lw_out_meta(n);
    DType dt = om ? om->dtype : x->dtype;
    if (dt != x->dtype) x = lw_pw_box(L, lw_to_dtype(L, x->loader, dt), dt, x->ndim, x->size, "logsumexp");
    IrTBox *mt = lw_tbox_of_storage(L, lw_reduction(L, n, x, red, true, RED_MAX, dt, 0, "logsumexp"));
    const IrFn *isinf = lw_math(L, IOP_EQ, DT_BOOL, lw_math(L, IOP_ABS, dt, mt->loader, NULL, NULL), lw_const(L, INFINITY, dt), NULL);
    const IrFn *m = lw_math(L, IOP_WHERE, dt, isinf, lw_const(L, 0, dt), mt->loader);
    Expr *map[MI_MAX_DIMS], *omap[MI_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < x->ndim; d++) {
        map[d] = red[d] ? sym_int(L->s, 0) : lw_var(L, d);
        omap[d] = red[d] ? sym_int(L->s, 0) : lw_var(L, keepdim ? d : k);
        k += !red[d];
    }
    const IrFn *e = lw_math(L, IOP_EXP, dt, lw_math(L, IOP_SUB, dt, x->loader, lw_reindex(L, m, x->ndim, map, x->ndim), NULL), NULL, NULL);
    IrTBox *st = lw_tbox_of_storage(L, lw_reduction(L, n, lw_pw_box(L, e, dt, x->ndim, x->size, "logsumexp"), red, keepdim, RED_SUM, dt, 0, "logsumexp"));
    const IrFn *out = lw_math(L, IOP_ADD, dt, lw_math(L, IOP_LOG, dt, st->loader, NULL, NULL), lw_reindex(L, m, st->ndim, omap, x->ndim), NULL);
    return lw_set_tbox(L, n, lw_pw_box(L, out, dt, st->ndim, st->size, "logsumexp"));
}

/* split / split_with_sizes / chunk / unbind: a tuple of views of x along dim (sizes must be
 * known: a symbolic split dim is refused). */
static int lower_var_mean(Lower *L, const Node *n, int arg) {
    IrTBox *x = lw_arg_tbox(L, n, 0);
    if (!x) return lw_err(L, n, "var_mean needs a tensor");
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lw_err(L, n, "var_mean: bad dims");
    int64_t kd = 0;
    bool keepdim = lw_arg_int(n, -1, "keepdim", &kd) && kd;
    double corr = 1;
    const Kwarg *c = node_kwarg(n, "correction");
    if (c && c->v.kind != V_NONE) value_as_double(&c->v, &corr);
    const Kwarg *ub = node_kwarg(n, "unbiased");
    int64_t u;
    if (ub && value_as_int(&ub->v, &u)) corr = u ? 1 : 0;
    DType dt = x->dtype;
    IrTBox *tv = NULL, *tm = NULL;
    if (two_step_var(L, n, x, red, keepdim, corr, true, "var_mean", &tv, &tm)) {
        IrTBox *items2[2] = {tv, tm};
        return lw_set_tuple(L, n, items2, 2);
    }
    const bool want[3] = {true, true, false};
    IrStorage *wf[3] = {NULL, NULL, NULL}, *mean, *m2;
    welford_of(L, n, x, red, keepdim, dt, "var_mean", want, wf);
    mean = wf[0];
    m2 = wf[1];
    Expr *N = sym_sub(L->s, red_numel(L, x, red), sym_int(L->s, (int64_t)corr));
    IrTBox *items[2] = {pw_scale(L, m2, IOP_TRUEDIV, N, dt, "var_mean"), lw_tbox_of_storage(L, mean)};
    return lw_set_tuple(L, n, items, 2);
}

/* mode 0: softmax, 1: prepare_softmax_online (max, sum), 2: log_softmax. softmax.int and
 * log_softmax.int with a dtype compute in that dtype. */
static int lower_softmax(Lower *L, const Node *n, int mode) {
    bool online = mode == 1;
    IrTBox *x = lw_arg_tbox(L, n, 0);
    int64_t dim;
    if (!x || !lw_arg_int(n, 1, "dim", &dim)) return lw_err(L, n, "'%s' needs a tensor and a dim", n->target);
    if (x->ndim == 0) return lw_err(L, n, "'%s' of a 0-dim tensor is not supported", n->target);
    if (dim < 0) dim += x->ndim;
    if (dim < 0 || dim >= x->ndim) return lw_err(L, n, "'%s': bad dim", n->target);
    bool red[MI_MAX_DIMS] = {0};
    red[dim] = true;
    const TensorMeta *om = lw_out_meta(n);
    DType dt = online || !om ? x->dtype : om->dtype;
    const char *nm = online ? "prepare_softmax_online" : mode == 2 ? "_log_softmax" : "_softmax";
    if (dt != x->dtype) {   /* softmax(x, dim, dtype): cast first */
        const char **co = NULL;
        int nco = 0;
        lw_origins_add(L, &co, &nco, nm);
        x = lw_tbox_of_storage(L, lw_storage_new(L, lw_to_dtype(L, x->loader, dt), dt, x->ndim, x->size, co, nco));
    }
    IrStorage *mx = lw_reduction(L, n, x, red, true, RED_MAX, dt, 0, nm);
    IrTBox *mxt = lw_tbox_of_storage(L, mx);
    /* e = exp(x - max) */
    Expr *map[MI_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) map[d] = d == dim ? sym_int(L->s, 0) : lw_var(L, d);
    const IrFn *mb = lw_reindex(L, mxt->loader, x->ndim, map, x->ndim);
    const IrFn *xs = lw_math(L, IOP_SUB, dt, x->loader, mb, NULL);
    const IrFn *e = lw_math(L, IOP_EXP, dt, xs, NULL, NULL);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, nm);
    IrTBox *et = lw_tbox_of_storage(L, lw_storage_new(L, e, dt, x->ndim, x->size, o, no));
    IrStorage *sm = lw_reduction(L, n, et, red, true, RED_SUM, dt, 0, nm);
    IrTBox *smt = lw_tbox_of_storage(L, sm);
    if (online) {
        IrTBox *items[2] = {mxt, smt};
        return lw_set_tuple(L, n, items, 2);
    }
    const IrFn *sbf = lw_reindex(L, smt->loader, x->ndim, map, x->ndim);
    const IrFn *out = mode == 2 ? lw_math(L, IOP_SUB, dt, xs, lw_math(L, IOP_LOG, dt, sbf, NULL, NULL), NULL)
                                : lw_math(L, IOP_TRUEDIV, dt, e, sbf, NULL);
    return lw_set_tbox(L, n, lw_tbox_of_storage(L, lw_storage_new(L, out, dt, x->ndim, x->size, o, no)));
}

/* ---- the reductions rows of the lowering table ---- */

const LoweringDef lowering_reductions_table[] = {
    {"aten.sum.dim_IntList", lower_reduction, 0}, {"aten.sum.default", lower_reduction, 0},
    {"aten.amax.default", lower_reduction, 0}, {"aten.amin.default", lower_reduction, 0},
    {"aten.mean.dim", lower_reduction, 0}, {"aten.prod.dim_int", lower_reduction, 0},
    {"aten.argmax.default", lower_reduction, 0}, {"aten.argmin.default", lower_reduction, 0},
    {"aten.mean.default", lower_reduction, 0}, {"aten.max.default", lower_reduction, 0},
    {"aten.min.default", lower_reduction, 0}, {"aten.prod.default", lower_reduction, 0},
    {"aten.max.dim", lower_max_dim, 0}, {"aten.min.dim", lower_max_dim, 0},
    {"aten.any.dim", lower_any_all, 0}, {"aten.any.dims", lower_any_all, 0},
    {"aten.any.default", lower_any_all, 0}, {"aten.all.dim", lower_any_all, 0},
    {"aten.all.default", lower_any_all, 0}, {"aten.var.correction", lower_var_std, 0},
    {"aten.std.correction", lower_var_std, 0}, {"aten.logsumexp.default", lower_logsumexp, 0},
    {"aten.var_mean.correction", lower_var_mean, 0}, {"aten._softmax.default", lower_softmax, SOFTMAX},
    {"prims.prepare_softmax_online.default", lower_softmax, SOFTMAX_ONLINE},
    {"aten.softmax.int", lower_softmax, SOFTMAX}, {"aten._log_softmax.default", lower_softmax, LOG_SOFTMAX},
    {"aten.log_softmax.int", lower_softmax, LOG_SOFTMAX},
};
const int lowering_reductions_count = sizeof lowering_reductions_table / sizeof lowering_reductions_table[0];
