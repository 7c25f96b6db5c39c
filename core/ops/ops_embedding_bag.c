/* ops_embedding_bag.c — nn.EmbeddingBag's op: _embedding_bag(weight, indices, offsets,
 * scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx) ->
 * (output, offset2bag, bag_size, max_indices), and _embedding_bag_forward_only. Bag b holds
 * indices[offsets[b] : offsets[b + 1]] (the last bag runs to the end, or to the extra last
 * offset); mode 0 sums the rows (times per_sample_weights), 1 averages them, 2 takes their
 * elementwise max (max_indices: the row each maximum came from); padding_idx rows are skipped;
 * an empty bag gives zeros. Metas as torch/_meta_registrations.py meta_embedding_bag (the CPU
 * fast path of a float sum returns an empty offset2bag; bag_size holds the offset differences,
 * as ATen's make_bag_size_out computes them). Inductor runs it as a FallbackKernel too.
 * Also nn.Embedding's max_norm: embedding_renorm_ (and its functional embedding_renorm), which
 * Inductor has no lowering for (an implicit FallbackKernel). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_SUM, MODE_MEAN, MODE_MAX };

typedef struct BagArgs {
    TensorMeta *w, *idx, *off, *psw;
    int64_t mode, padding_idx;
    bool last;                    /* include_last_offset */
} BagArgs;

static int bag_args(ShapeArgs *sa, BagArgs *a) {
    memset(a, 0, sizeof *a);
    if (sa_tensor(sa, sa_arg(sa, 0, "weight"), "weight", &a->w) || sa_tensor(sa, sa_arg(sa, 1, "indices"), "indices", &a->idx) ||
        sa_tensor(sa, sa_arg(sa, 2, "offsets"), "offsets", &a->off)) return -1;
    ArgRef m = sa_arg(sa, 4, "mode"), p = sa_arg(sa, 6, "per_sample_weights"), pi = sa_arg(sa, 8, "padding_idx");
    a->padding_idx = -1;
    if (arg_present(m) && sa_const_int(sa, m, "mode", &a->mode)) return -1;
    if (arg_present(pi) && sa_const_int(sa, pi, "padding_idx", &a->padding_idx)) return -1;
    a->last = arg_bool(sa_arg(sa, 7, "include_last_offset"), false);
    if (arg_present(p) && arg_is_tensor(sa, p) && sa_tensor(sa, p, "per_sample_weights", &a->psw)) return -1;
    if (a->idx->dtype != DT_I64 && a->idx->dtype != DT_I32) return sa_err(sa, "expected indices to be long or int, got %s", dtype_abbrev(a->idx->dtype));
    if (a->off->dtype != DT_I64 && a->off->dtype != DT_I32) return sa_err(sa, "expected offsets to be long or int, got %s", dtype_abbrev(a->off->dtype));
    if (!dtype_is_float(a->w->dtype)) return sa_err(sa, "expected weight to be floating point type, got %s", dtype_abbrev(a->w->dtype));
    if (a->w->ndim != 2 || a->idx->ndim != 1 || a->off->ndim != 1) return sa_err(sa, "expects a 2-D weight and 1-D indices and offsets");
    if (a->mode < MODE_SUM || a->mode > MODE_MAX) return sa_err(sa, "mode %lld is not 0 (sum), 1 (mean) or 2 (max)", (long long)a->mode);
    if (a->psw && a->mode != MODE_SUM) return sa_err(sa, "embedding_bag: per_sample_weights only supported with mode='sum'");
    if (a->psw && a->psw->ndim != 1) return sa_err(sa, "expected per_sample_weights to be 1D tensor, got %dD", a->psw->ndim);
    return 0;
}

static void meta_1d(ShapeArgs *sa, TensorMeta *m, DType dt, Device dev, Expr *n) {
    meta_alloc(sa, m, dt, 1, dev);
    m->size[0] = n;
    meta_contiguous_strides(sa, m);
}

static int shape_embedding_bag(ShapeArgs *sa, TensorMeta *out, int *nout) {
    BagArgs a;
    if (bag_args(sa, &a)) return -1;
    SymCtx *S = sa->sym;
    Expr *bags = a.off->size[0];
    if (a.last) bags = sym_add(S, bags, sym_int(S, -1));
    meta_alloc(sa, &out[0], a.w->dtype, 2, a.w->device);
    out[0].size[0] = bags;
    out[0].size[1] = a.w->size[1];
    meta_contiguous_strides(sa, &out[0]);
    Device dev = a.off->device;
    if (dev.kind != DEV_CPU) {
        meta_1d(sa, &out[1], a.idx->dtype, dev, a.idx->size[0]);
        meta_1d(sa, &out[2], a.idx->dtype, dev, a.off->size[0]);
        if (a.mode == MODE_MAX) {
            meta_alloc(sa, &out[3], a.idx->dtype, 2, dev);
            out[3].size[0] = bags;
            out[3].size[1] = a.w->size[1];
            meta_contiguous_strides(sa, &out[3]);
        } else meta_1d(sa, &out[3], a.idx->dtype, dev, sym_int(S, 0));
    } else {
        /* is_fast_path: float / half weight with unit row stride (the output's is), no padding_idx */
        bool fast = (a.w->dtype == DT_F32 || a.w->dtype == DT_F16) && ex_eq_int(a.w->stride[1], 1) && a.padding_idx < 0 &&
                    (!a.psw || ex_eq_int(a.psw->stride[0], 1));
        meta_1d(sa, &out[1], a.off->dtype, dev, a.mode != MODE_SUM || !fast ? a.idx->size[0] : sym_int(S, 0));
        meta_1d(sa, &out[2], a.off->dtype, dev, bags);
        if (a.mode == MODE_MAX) {
            meta_alloc(sa, &out[3], a.off->dtype, 2, dev);
            out[3].size[0] = bags;
            out[3].size[1] = a.w->size[1];
            meta_contiguous_strides(sa, &out[3]);
        } else meta_1d(sa, &out[3], a.off->dtype, dev, bags);
    }
    *nout = 4;
    return 0;
}

static int embedding_bag_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[4];
    int n, rc = -1;
    Tensor *o[4] = {0};
    BagArgs a;
    if (bag_args(sa, &a) || ev_shape(sa, m, &n)) goto done;
    for (int i = 0; i < 4; i++) if (!(o[i] = ev_new(sa, &m[i]))) goto done;
    Tensor *w = ev_tensor(sa_arg(sa, 0, NULL)), *idx = ev_tensor(sa_arg(sa, 1, NULL)), *off = ev_tensor(sa_arg(sa, 2, NULL));
    Tensor *psw = a.psw ? ev_tensor(sa_arg(sa, 6, "per_sample_weights")) : NULL;
    int64_t ni = tensor_numel(idx), noff = tensor_numel(off), bags = o[0]->size[0], D = w->size[1], rows = w->size[0];
    if (psw && tensor_numel(psw) != ni) { sa_err(sa, "expected per_sample_weights.numel() (%lld) to be the same as indices.numel() (%lld)", (long long)tensor_numel(psw), (long long)ni); goto done; }
    for (int64_t b = 0; b < bags; b++) {
        int64_t start = tensor_get_i(off, b), end = b + 1 < noff ? tensor_get_i(off, b + 1) : ni;
        if (b == 0 && start != 0) { sa_err(sa, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0; got %lld", (long long)start); goto done; }
        if (start < 0 || end < start || end > ni) { sa_err(sa, "offsets are not increasing within [0, %lld] at bag %lld", (long long)ni, (long long)b); goto done; }
        int64_t count = 0;
        for (int64_t d = 0; d < D; d++) {
            double acc = a.mode == MODE_MAX ? -INFINITY : 0;
            int64_t arg = -1;
            count = 0;
            for (int64_t k = start; k < end; k++) {
                int64_t r = tensor_get_i(idx, k);
                if (r < 0 || r >= rows) { sa_err(sa, "index %lld is out of range for an embedding of %lld rows", (long long)r, (long long)rows); goto done; }
                if (r == a.padding_idx) continue;
                count++;
                double v = tensor_get_f(w, r * D + d) * (psw ? tensor_get_f(psw, k) : 1);
                if (a.mode == MODE_MAX) { if (v > acc || isnan(v) || arg < 0) { acc = v; arg = r; } }
                else acc += v;
            }
            if (a.mode == MODE_MEAN) acc = count ? acc / (double)count : 0;
            if (a.mode == MODE_MAX && count == 0) acc = 0;
            tensor_set_f(o[0], b * D + d, acc);
            if (a.mode == MODE_MAX) tensor_set_f(o[3], b * D + d, (double)arg);
        }
        for (int64_t k = start; k < end && tensor_numel(o[1]) == ni; k++) tensor_set_f(o[1], k, (double)b);
        tensor_set_f(o[2], b, (double)(end - start));            /* make_bag_size_out: offset differences */
        if (a.mode != MODE_MAX && b < tensor_numel(o[3])) tensor_set_f(o[3], b, (double)(end - start));
    }
    ev_out_tuple(out, o, 4);
    memset(o, 0, sizeof o);
    rc = 0;
done:
    for (int i = 0; i < 4; i++) tensor_unref(o[i]);
    return rc;
}
static int embedding_bag_eval(const OpCall *c, IValue *out) { return ev_call(c, out, embedding_bag_body); }

/* embedding_renorm(self, indices, max_norm, norm_type): ATen's embedding_renorm_cpu_ on a copy
 * (the _ form on self): each distinct row of self that indices name, whose norm_type-norm
 * exceeds max_norm, is scaled by max_norm / (norm + 1e-7) (the scale a double, the multiply in
 * self's dtype). Example: row [3, 4], max_norm 1, p 2: norm 5 -> [0.6, 0.8] (less 1e-7 relative). */
static int shape_renorm_rows(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *w, *ix;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &w) || sa_tensor(sa, sa_arg(sa, 1, "indices"), "indices", &ix)) return -1;
    if (w->ndim != 2) return sa_err(sa, "embedding_renorm_: self must be 2-D, got %dD", w->ndim);
    if (ix->dtype != DT_I64 && ix->dtype != DT_I32)
        return sa_err(sa, "embedding_renorm_: expected indices of dtype Long or Int, got %s", dtype_abbrev(ix->dtype));
    meta_like(sa, out, w, w->dtype);
    return 0;
}

static int renorm_rows_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *w = ev_tensor(sa_arg(sa, 0, "self")), *ix = ev_tensor(sa_arg(sa, 1, "indices"));
    double maxn, p;
    DType t;
    if (sa_scalar(sa, sa_arg(sa, 2, "max_norm"), "max_norm", &maxn, &t) || sa_scalar(sa, sa_arg(sa, 3, "norm_type"), "norm_type", &p, &t)) return -1;
    int64_t rows = w->size[0], d = w->size[1], ni = tensor_numel(ix);
    if (o != w) for (int64_t e = 0; e < rows * d; e++) tensor_set_f(o, e, tensor_get_f(w, e));
    unsigned char *seen = mi_xcalloc((size_t)(rows ? rows : 1), 1);
    for (int64_t k = 0; k < ni; k++) {
        int64_t r = tensor_get_i(ix, k);
        if (r < 0 || r >= rows) { free(seen); return sa_err(sa, "embedding_renorm_: index %lld is out of bounds for %lld rows", (long long)r, (long long)rows); }
        if (seen[r]++) continue;
        double acc = 0;
        for (int64_t e = 0; e < d; e++) {
            double v = fabs(tensor_get_f(o, r * d + e));
            if (p == 0) acc += v != 0;
            else if (isinf(p)) acc = v > acc ? v : acc;
            else acc += p == 1 ? v : p == 2 ? v * v : pow(v, p);
        }
        double norm = p == 0 || isinf(p) || p == 1 ? acc : p == 2 ? sqrt(acc) : pow(acc, 1 / p);
        if (!(norm > maxn)) continue;
        double scale = maxn / (norm + 1e-7);
        if (o->dtype != DT_F64) scale = (float)scale;   /* the Scalar in self's opmath type */
        for (int64_t e = 0; e < d; e++) tensor_set_f(o, r * d + e, tensor_get_f(o, r * d + e) * scale);
    }
    free(seen);
    return 0;
}
static int renorm_rows_eval(const OpCall *c, IValue *out) { return ev_run(c, out, renorm_rows_fill); }

const OpDef ops_embedding_bag_table[] = {
    {"aten.embedding_renorm.default", 0, op_infer_generic, renorm_rows_eval,
     "copy of self whose rows named by indices are scaled to norm <= max_norm (nn.Embedding max_norm)", shape_renorm_rows, NULL},
    {"aten.embedding_renorm_.default", OPF_INPLACE, op_infer_generic, renorm_rows_eval,
     "rows of self named by indices scaled in place to norm <= max_norm", shape_renorm_rows, NULL},
    {"aten._embedding_bag.default", OPF_TUPLE, op_infer_generic, embedding_bag_eval,
     "rows of weight summed / averaged / maxed per bag of indices (offsets start the bags)", shape_embedding_bag, NULL},
    {"aten._embedding_bag_forward_only.default", OPF_TUPLE, op_infer_generic, embedding_bag_eval,
     "_embedding_bag without what its backward needs", shape_embedding_bag, NULL},
};
const int ops_embedding_bag_count = sizeof ops_embedding_bag_table / sizeof ops_embedding_bag_table[0];
