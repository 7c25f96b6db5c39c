/* ops_embedding_bag_backward.c — the gradients of nn.EmbeddingBag (ops_embedding_bag.c's
 * _embedding_bag), which a DLRM-style model has in its backward graph. Inductor runs all three
 * as FallbackKernels (lowering.py make_fallback); here ATen's CPU kernels (EmbeddingBag.cpp):
 *   _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
 *       num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx)
 *     the dense gradient [num_weights, D] (sparse=True, a sparse tensor, is refused); an empty
 *     offset2bag (the CPU forward's fast path of a float sum returns one) is rebuilt from the
 *     offsets as make_offset2bag does;
 *   _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
 *       num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx) the same;
 *   _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
 *       padding_idx) -> [numel(indices)]: grad[bag(k)] . weight[indices[k]] (mode sum only).
 * Sum / mean: each index position k adds grad[bag(k)] * scale to row indices[k] (padding_idx
 * skipped), scale = per_sample_weights[k], / bag_size[bag] for mean (when not 0), and with
 * scale_grad_by_freq / counts[sorted_indices[u]] where u numbers the distinct indices, which is
 * what _embedding_bag_dense_backward_cpu_sum_mean divides by (counts[indices_data[i]], not the
 * row's own count); positions are visited in sorted-index order and accumulated in the
 * gradient's dtype, as its axpy does. Max: each non-empty bag adds grad[bag][d] to row
 * maximum_indices[bag][d]. Example: indices [1, 1, 2], offsets [0, 2], sum, grad rows g0, g1
 * -> row 1 = 2 g0, row 2 = g1. */
#include "ops/ops_impl.h"

#include <stdlib.h>
#include <string.h>

enum { EB_BACKWARD, EB_DENSE, EB_PSW };
enum { MODE_SUM, MODE_MEAN, MODE_MAX };
#define EBKIND(sa) (*(const int *)(sa)->op->data)

/* schema positions of each form's arguments (-1: not an argument of that form) */
typedef struct EbPos { int grad, weight, indices, offsets, offset2bag, bag_size, max_indices, num_weights, freq, mode, sparse, psw, padding; } EbPos;
static const EbPos eb_pos[] = {
    [EB_BACKWARD] = {0, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
    [EB_DENSE] = {0, -1, 1, -1, 2, 3, 4, 5, 6, 7, -1, 8, 9},
    [EB_PSW] = {0, 1, 2, 3, 4, -1, -1, -1, -1, 5, -1, -1, 6},
};

static int shape_eb_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    int kind = EBKIND(sa);
    const EbPos *p = &eb_pos[kind];
    TensorMeta *g, *ix;
    int64_t mode = 0;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, p->grad, "grad"), "grad", &g) || sa_tensor(sa, sa_arg(sa, p->indices, "indices"), "indices", &ix) ||
        sa_const_int(sa, sa_arg(sa, p->mode, "mode"), "mode", &mode)) return -1;
    if (g->ndim != 2 || ix->ndim != 1) return sa_err(sa, "expected a 2-D grad and 1-D indices, got %dD and %dD", g->ndim, ix->ndim);
    if (ix->dtype != DT_I64 && ix->dtype != DT_I32) return sa_err(sa, "expected indices to be long or int, got %s", dtype_abbrev(ix->dtype));
    if (mode < MODE_SUM || mode > MODE_MAX) return sa_err(sa, "mode %lld is not 0 (sum), 1 (mean) or 2 (max)", (long long)mode);
    if (kind == EB_PSW) {
        if (mode != MODE_SUM) return sa_err(sa, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
        meta_alloc(sa, out, g->dtype, 1, g->device);
        out->size[0] = ix->size[0];
    } else {
        if (kind == EB_BACKWARD && arg_bool(sa_arg(sa, p->sparse, "sparse"), false))
            return sa_err(sa, "sparse=True gives a sparse gradient, which is not supported (nn.EmbeddingBag(sparse=False) gives the dense one)");
        Expr *nw;
        if (sa_int(sa, sa_arg(sa, p->num_weights, "num_weights"), "num_weights", &nw)) return -1;
        meta_alloc(sa, out, g->dtype, 2, g->device);
        out->size[0] = nw;
        out->size[1] = g->size[1];
    }
    meta_contiguous_strides(sa, out);
    return 0;
}

/* bag of each index position: offset2bag itself, or (when it is empty) make_offset2bag's
 * cumsum of ones at the offsets less one: the number of offsets <= k, minus 1 */
static int64_t *bags_of(ShapeArgs *sa, const EbPos *p, int64_t ni) {
    Tensor *o2b = ev_tensor(sa_arg(sa, p->offset2bag, "offset2bag"));
    int64_t *bag = mi_xcalloc((size_t)(ni ? ni : 1), sizeof *bag);
    if (o2b && tensor_numel(o2b) == ni) {
        for (int64_t k = 0; k < ni; k++) bag[k] = tensor_get_i(o2b, k);
        return bag;
    }
    Tensor *off = p->offsets >= 0 ? ev_tensor(sa_arg(sa, p->offsets, "offsets")) : NULL;
    if (!off || (o2b && tensor_numel(o2b) != 0)) {
        free(bag);
        sa_err(sa, "expected offset2bag to have %lld elements (one per index)%s", (long long)ni, off ? "" : ", or offsets to rebuild it from");
        return NULL;
    }
    int64_t *add = mi_xcalloc((size_t)(ni + 1), sizeof *add);
    for (int64_t b = 0; b < tensor_numel(off); b++) {
        int64_t s = tensor_get_i(off, b);
        if (s < 0 || s > ni) { free(add); free(bag); sa_err(sa, "offset %lld is out of range for %lld indices", (long long)s, (long long)ni); return NULL; }
        add[s]++;
    }
    int64_t run = -1;
    for (int64_t k = 0; k < ni; k++) { run += add[k]; bag[k] = run; }
    free(add);
    return bag;
}

/* an index position and its index value, sorted stably by value */
typedef struct IxPos { int64_t v, k; } IxPos;
static int by_index(const void *a, const void *b) {
    const IxPos *x = a, *y = b;
    return x->v < y->v ? -1 : x->v > y->v ? 1 : (x->k > y->k) - (x->k < y->k);
}

/* the dense gradient (sum / mean / max) into o, zero-filled by ev_new */
static int dense_fill(ShapeArgs *sa, const EbPos *p, Tensor *o) {
    Tensor *g = ev_tensor(sa_arg(sa, p->grad, "grad")), *ix = ev_tensor(sa_arg(sa, p->indices, "indices"));
    Tensor *bs = ev_tensor(sa_arg(sa, p->bag_size, "bag_size"));
    ArgRef pa = sa_arg(sa, p->psw, "per_sample_weights");
    Tensor *psw = arg_present(pa) ? ev_tensor(pa) : NULL;
    int64_t mode = 0, pad = -1, rows = o->size[0], D = o->size[1], ni = tensor_numel(ix), nb = g->size[0];
    bool freq = arg_bool(sa_arg(sa, p->freq, "scale_grad_by_freq"), false);
    sa_const_int(sa, sa_arg(sa, p->mode, "mode"), "mode", &mode);
    ArgRef pi = sa_arg(sa, p->padding, "padding_idx");
    if (arg_present(pi) && sa_const_int(sa, pi, "padding_idx", &pad)) return -1;
    for (int64_t e = 0; e < rows * D; e++) tensor_set_f(o, e, 0);
    if (mode == MODE_MAX) {   /* _embedding_bag_dense_backward_cpu_max: index_add over the non-empty bags */
        Tensor *mi = ev_tensor(sa_arg(sa, p->max_indices, "maximum_indices"));
        if (!mi || tensor_numel(mi) != nb * D || !bs || tensor_numel(bs) < nb) return sa_err(sa, "max mode needs maximum_indices [%lld, %lld] and bag_size", (long long)nb, (long long)D);
        for (int64_t b = 0; b < nb; b++) {
            if (tensor_get_i(bs, b) == 0) continue;
            for (int64_t d = 0; d < D; d++) {
                int64_t r = tensor_get_i(mi, b * D + d);
                if (r < 0 || r >= rows) return sa_err(sa, "maximum_indices %lld is out of range for %lld rows", (long long)r, (long long)rows);
                tensor_set_f(o, r * D + d, tensor_get_f(o, r * D + d) + tensor_get_f(g, b * D + d));
            }
        }
        return 0;
    }
    if (psw && tensor_numel(psw) != ni) return sa_err(sa, "expected %lld per_sample_weights, got %lld", (long long)ni, (long long)tensor_numel(psw));
    int64_t *bag = bags_of(sa, p, ni);
    if (!bag) return -1;
    IxPos *ord = mi_xcalloc((size_t)(ni ? ni : 1), sizeof *ord);
    int64_t *counts = mi_xcalloc((size_t)(rows ? rows : 1), sizeof *counts);
    int rc = 0;
    for (int64_t k = 0; k < ni && rc == 0; k++) {
        ord[k] = (IxPos){tensor_get_i(ix, k), k};
        if (ord[k].v < 0 || ord[k].v >= rows) rc = sa_err(sa, "index %lld is out of range for %lld rows", (long long)ord[k].v, (long long)rows);
        else counts[ord[k].v]++;
    }
    if (rc == 0) qsort(ord, (size_t)ni, sizeof *ord, by_index);
    bool f32 = o->dtype != DT_F64;
    for (int64_t j = 0, u = -1; j < ni && rc == 0; j++) {
        int64_t k = ord[j].k, r = ord[j].v, b = bag[k];
        if (j == 0 || r != ord[j - 1].v) u++;   /* u numbers the distinct indices */
        if (r == pad) continue;
        if (b < 0 || b >= nb) { rc = sa_err(sa, "offset2bag %lld is out of range for %lld bags", (long long)b, (long long)nb); break; }
        double scale = psw ? tensor_get_f(psw, k) : 1.0;
        if (freq) scale /= (double)counts[ord[u].v];
        if (mode == MODE_MEAN && bs && b < tensor_numel(bs) && tensor_get_i(bs, b) != 0) scale /= (double)tensor_get_i(bs, b);
        if (f32) scale = (float)scale;
        for (int64_t d = 0; d < D; d++) {
            double v = tensor_get_f(o, r * D + d) + scale * tensor_get_f(g, b * D + d);
            tensor_set_f(o, r * D + d, f32 ? (double)(float)v : v);
        }
    }
    free(ord);
    free(counts);
    free(bag);
    return rc;
}

/* per_sample_weights' gradient: grad[bag(k)] . weight[indices[k]], 0 at padding_idx */
static int psw_fill(ShapeArgs *sa, const EbPos *p, Tensor *o) {
    Tensor *g = ev_tensor(sa_arg(sa, p->grad, "grad")), *w = ev_tensor(sa_arg(sa, p->weight, "weight")), *ix = ev_tensor(sa_arg(sa, p->indices, "indices"));
    int64_t pad = -1, ni = tensor_numel(ix), D = g->size[1], nb = g->size[0];
    ArgRef pi = sa_arg(sa, p->padding, "padding_idx");
    if (arg_present(pi) && sa_const_int(sa, pi, "padding_idx", &pad)) return -1;
    if (!w || w->ndim != 2 || w->size[1] != D) return sa_err(sa, "expected a weight of %lld columns", (long long)D);
    int64_t *bag = bags_of(sa, p, ni);
    if (!bag) return -1;
    int rc = 0;
    for (int64_t k = 0; k < ni && rc == 0; k++) {
        int64_t r = tensor_get_i(ix, k), b = bag[k];
        double acc = 0;
        if (r != pad) {
            if (r < 0 || r >= w->size[0] || b < 0 || b >= nb) { rc = sa_err(sa, "index %lld or bag %lld is out of range", (long long)r, (long long)b); break; }
            for (int64_t d = 0; d < D; d++) acc += tensor_get_f(g, b * D + d) * tensor_get_f(w, r * D + d);
        }
        tensor_set_f(o, k, acc);
    }
    free(bag);
    return rc;
}

static int eb_bwd_fill(ShapeArgs *sa, Tensor *o) {
    const EbPos *p = &eb_pos[EBKIND(sa)];
    return EBKIND(sa) == EB_PSW ? psw_fill(sa, p, o) : dense_fill(sa, p, o);
}
static int eb_bwd_eval(const OpCall *c, IValue *out) { return ev_run(c, out, eb_bwd_fill); }

#define EBB(name, kind, doc) {name, 0, op_infer_generic, eb_bwd_eval, doc, shape_eb_bwd, &(const int){kind}}
const OpDef ops_embedding_bag_backward_table[] = {
    EBB("aten._embedding_bag_backward.default", EB_BACKWARD, "grad of _embedding_bag's weight (dense): each bag's gradient added to its rows"),
    EBB("aten._embedding_bag_dense_backward.default", EB_DENSE, "grad of _embedding_bag's weight from offset2bag (dense)"),
    EBB("aten._embedding_bag_per_sample_weights_backward.default", EB_PSW, "grad of per_sample_weights: grad[bag] . weight[index] per index"),
};
const int ops_embedding_bag_backward_count = sizeof ops_embedding_bag_backward_table / sizeof ops_embedding_bag_backward_table[0];
