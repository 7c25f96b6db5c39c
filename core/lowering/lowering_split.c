/* lowering_split.c — Inductor's split reductions on a GPU (ir.py Reduction.num_splits and
 * create_multilayer): "triton doesn't support reduce to single element well, so break it up".
 * A reduction of few outputs over many elements becomes two reductions: the first over
 * [*ranges, split] reducing blocks of ceil(rnumel / split) elements (an intermediate buffer,
 * f32 for f16 / bf16), the second over ranges reducing the split partials. num_splits decides
 * from static sizes, the number of SMs of the recorded GPUs (H100 / H200: 132) and whether the
 * reads walk the reduced elements contiguously (inner) or strided (outer: channels-last batch
 * statistics, a column sum). The scan lowering asks the same question (Scan.num_splits). */
#include "lowering/lowering_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* DeviceProperties.multi_processor_count of the GPUs the recorded logs ran on (H100 / H200) */
enum { GPU_NUM_SM = 132, MIN_ELEMENTS_PER_THREAD = 32, MAX_ELEMENTS_PER_THREAD = 512, THREADS_PER_SM = 2048 };

/* The loads of an inner function, run once over index symbols (get_read_indices). */
typedef struct ReadIdx { OpsHandler h; Expr *idx[32]; Buffer *buf[32]; int n; } ReadIdx;
static IrVal ri_load(OpsHandler *h, Buffer *buf, Expr *index) {
    ReadIdx *r = h->self;
    if (r->n < 32) { r->buf[r->n] = buf; r->idx[r->n++] = index; }
    return 0;
}
static void ri_store(OpsHandler *h, Buffer *b, Expr *i, IrVal v) { (void)h; (void)b; (void)i; (void)v; }
static IrVal ri_constant(OpsHandler *h, double v, DType dt) { (void)h; (void)v; (void)dt; return 0; }
static IrVal ri_index_expr(OpsHandler *h, Expr *e, DType dt) { (void)h; (void)e; (void)dt; return 0; }
static IrVal ri_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) { (void)h; (void)v; (void)dt; (void)src; return 0; }
static IrVal ri_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) { (void)h; (void)op; (void)a; (void)dt; return 0; }
static IrVal ri_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) { (void)h; (void)dt; (void)src; (void)rt; (void)v; return 0; }
static IrVal ri_getitem(OpsHandler *h, IrVal v, int k) { (void)h; (void)v; (void)k; return 0; }
static IrVal ri_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) { (void)h; (void)v; (void)b; (void)off; return 0; }
static Expr *ri_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    (void)h; (void)x; (void)check; (void)wrap_neg;
    return sym ? sym : size;
}

/* num_splits' vote over the reads that use every loop var (size-1 dims are no var): outer when
 * every reduced var (red[d]) walks with a stride above 1 (index at var = 1 minus at 0, the other
 * vars 0), else inner. Example: a channels-last [2, 6, 4, 5, 6] read per channel: the reduced
 * n, d, h, w step by 720, 180, 36, 6: outer. */
static void vote(Lower *L, const IrFn *f, int nd, Expr **size, const bool *red, int *inner, int *outer, bool decide) {
    int64_t v;
    *inner = *outer = 0;
    ReadIdx r = {0};
    r.h = (OpsHandler){&r, ri_load, ri_store, ri_constant, ri_index_expr, ri_to_dtype, ri_math, ri_red, ri_getitem,
                       ri_store, ri_indirect, ri_store, NULL, ri_bucketize};
    Expr *idx[MI_MAX_DIMS * 2], *zero[MI_MAX_DIMS * 2];
    const char *names[MI_MAX_DIMS * 2];
    bool rv[MI_MAX_DIMS * 2];
    int nv = 0;
    for (int d = 0; d < nd; d++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_s%d", d);
        idx[d] = sym_is_int(size[d], &v) && v == 1 ? sym_int(L->s, 0) : sym_symbol(L->s, nm);
        if (idx[d]->kind == EX_SYM) { names[nv] = idx[d]->name; rv[nv] = red[d]; zero[nv++] = sym_int(L->s, 0); }
    }
    f->call(f, &r.h, idx);
    bool changed = false;
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
        if (decide && r.buf[i] && ir_decide_layout(L->m, r.buf[i])) changed = L->relaid = true;   /* buf.decide_layout() */
        bool out = true;
        for (int k = 0; k < nv; k++) {
            if (!rv[k]) continue;
            Expr *one[MI_MAX_DIMS * 2];
            for (int j = 0; j < nv; j++) one[j] = j == k ? sym_int(L->s, 1) : zero[j];
            Expr *st = sym_simplify(L->s, sym_sub(L->s, sym_subst(L->s, r.idx[i], names, one, nv), sym_subst(L->s, r.idx[i], names, zero, nv)), NULL, 0);
            int64_t sv;
            out &= sym_is_int(st, &sv) && sv > 1;
        }
        if (out) (*outer)++;
        else (*inner)++;
    }
    if (changed) vote(L, f, nd, size, red, inner, outer, false);   /* the reads again, through the new strides */
}

/* num_splits' vote over the reads that use every loop var (get_read_indices; size-1 dims are
 * no var), each read buffer's layout decided first (decide_layout: a flexible one is frozen in
 * its fill order, and the reads are taken again when one changed): outer when every reduced
 * var (red[d]) walks with a stride above 1 (index at var = 1 minus at 0, the other vars 0),
 * else inner. Example: the batch norm backward's sums over a pointwise value of a
 * channels-last convolution: the value is frozen channels-last, so the reduced n, d, h, w
 * step by 720, 180, 36, 6: outer. */
static void split_vote(Lower *L, const IrFn *f, int nd, Expr **size, const bool *red, int *inner, int *outer) {
    vote(L, f, nd, size, red, inner, outer, true);
}

/* the divisor of n closest to t (the smallest of equally close ones, as min over
 * sympy.divisors) */
static int64_t closest_divisor(int64_t n, int64_t t) {
    int64_t best = 1;
    for (int64_t d = 1; d <= n; d++)
        if (n % d == 0 && llabs(d - t) < llabs(best - t)) best = d;
    return best;
}

/* inner_reduction_splits(reduction_numel_hint, numel_hint) */
int64_t lw_inner_reduction_splits(int64_t rn, int64_t numel) {
    const int64_t num_threads = 32 * 8, min_e = (int64_t)MIN_ELEMENTS_PER_THREAD * GPU_NUM_SM * THREADS_PER_SM,
                  max_e = (int64_t)MAX_ELEMENTS_PER_THREAD * GPU_NUM_SM * THREADS_PER_SM;
    if (numel >= 2 * GPU_NUM_SM || rn <= 8192) return 1;
    int64_t split_size;
    if (rn * numel <= min_e) split_size = MIN_ELEMENTS_PER_THREAD;
    else if (rn * numel < max_e) {
        int64_t target_blocks = (int64_t)GPU_NUM_SM * THREADS_PER_SM / (2 * num_threads);
        int64_t blocks_per_output = (target_blocks + numel - 1) / numel;
        int64_t tmp = (rn + num_threads * blocks_per_output - 1) / (num_threads * blocks_per_output);
        int64_t c = closest_divisor(rn, tmp);
        split_size = llabs(c - tmp) < 30 ? (c > MIN_ELEMENTS_PER_THREAD ? c : MIN_ELEMENTS_PER_THREAD) : tmp;
    } else {
        int64_t c = closest_divisor(rn, MAX_ELEMENTS_PER_THREAD);
        split_size = llabs(c - MAX_ELEMENTS_PER_THREAD) < 50 ? c : MAX_ELEMENTS_PER_THREAD;
    }
    return (rn + split_size * num_threads - 1) / (split_size * num_threads);
}

/* outer_reduction_splits(reduction_numel_hint, numel_hint) */
int64_t lw_outer_reduction_splits(int64_t rn, int64_t numel) {
    const int64_t num_threads = 8 * 32, rvals_per_thread = 4, xvals_per_block = 128,
                  min_e = (int64_t)MIN_ELEMENTS_PER_THREAD * GPU_NUM_SM * THREADS_PER_SM,
                  max_e = (int64_t)MAX_ELEMENTS_PER_THREAD * GPU_NUM_SM * THREADS_PER_SM;
    int64_t xblocks = (numel + xvals_per_block - 1) / xvals_per_block, split_size;
    if (rn * numel < min_e) split_size = MIN_ELEMENTS_PER_THREAD;
    else if (rn * numel < max_e) {
        int64_t target_blocks = (int64_t)GPU_NUM_SM * THREADS_PER_SM / num_threads;
        target_blocks = (target_blocks + xblocks - 1) / xblocks;
        int64_t tmp = (rn + rvals_per_thread * target_blocks - 1) / (rvals_per_thread * target_blocks);
        int64_t c = closest_divisor(rn, tmp);
        split_size = llabs(tmp - c) < 20 ? (c > MIN_ELEMENTS_PER_THREAD ? c : MIN_ELEMENTS_PER_THREAD) : tmp;
    } else {
        int64_t c = closest_divisor(rn, MAX_ELEMENTS_PER_THREAD);
        split_size = llabs(c - MAX_ELEMENTS_PER_THREAD) < 50 ? c : MAX_ELEMENTS_PER_THREAD;
    }
    return (rn + rvals_per_thread * split_size - 1) / (rvals_per_thread * split_size);
}

/* Reduction.num_splits for a GPU reduction of static sizes (should_split: not argmax / argmin;
 * the cpp backend reduces to a single element and never splits): f over the nd dims of size[],
 * red[d] marking the reduced ones (a scan's scanned dim). Returns the split (1: none); *outer
 * gets ReductionHint.OUTER. Example: var_mean per channel of a channels-last [2, 6, 4, 5, 6]: 6
 * outputs of 240, outer, split_size 32, (240 + 127) / 128 = 2. */
int64_t lw_num_splits_dims(Lower *L, const IrFn *f, int nd, Expr **size, const bool *red, IrReduceType rt, bool *outer) {
    *outer = false;
    if (rt == RED_ARGMAX || rt == RED_ARGMIN) return 1;
    int64_t numel = 1, rn = 1, v;
    for (int d = 0; d < nd; d++) {
        if (!sym_is_int(size[d], &v)) return 1;   /* "We don't support unbacked symints" */
        if (red[d]) rn *= v;
        else numel *= v;
    }
    if (numel == 1) return lw_inner_reduction_splits(rn, numel);   /* (the existing-ranges split: not taken) */
    if (rn <= MIN_ELEMENTS_PER_THREAD || numel >= GPU_NUM_SM * 2 * 32) return 1;
    int inner, out;
    split_vote(L, f, nd, size, red, &inner, &out);
    if (!inner && !out) return 1;   /* "TODO determine splits when all inputs are broadcast" */
    if (inner > out) return lw_inner_reduction_splits(rn, numel);
    *outer = true;
    return lw_outer_reduction_splits(rn, numel);
}

/* lw_num_splits_dims for f over no output dims, then nr reduced dims */
int64_t lw_num_splits(Lower *L, const IrFn *f, int no, Expr **osize, int nr, Expr **rsize, IrReduceType rt, bool *outer) {
    Expr *size[MI_MAX_DIMS * 2];
    bool red[MI_MAX_DIMS * 2];
    for (int d = 0; d < no; d++) { size[d] = osize[d]; red[d] = false; }
    for (int j = 0; j < nr; j++) { size[no + j] = rsize[j]; red[no + j] = true; }
    return lw_num_splits_dims(L, f, no + nr, size, red, rt, outer);
}
