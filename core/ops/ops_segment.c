/* ops_segment.c — segment_reduce: a reduction over consecutive runs ("segments") of `data`
 * along `axis`, their lengths given directly (lengths) or as boundaries (offsets), as ATen's
 * SegmentReduce.cpp CPU kernel computes it. Inductor falls back to ATen for it
 * (make_fallback), so compiled code calls this reference kernel. */
#include "ops/ops_impl.h"

#include <math.h>
#include <string.h>

enum { SEG_MAX, SEG_MEAN, SEG_MIN, SEG_SUM, SEG_PROD };

static int seg_reduction(ShapeArgs *sa, int *red) {
    static const char *names[] = {"max", "mean", "min", "sum", "prod"};
    const char *r = arg_str(sa_arg(sa, 1, "reduce"), NULL);
    for (int k = 0; r && k < 5; k++) if (!strcmp(r, names[k])) { *red = k; return 0; }
    return sa_err(sa, "segment_reduce: reduction '%s' is not supported (max, mean, min, sum, prod)", r ? r : "?");
}

/* segment_reduce(data, reduce, *, lengths, indices, offsets, axis, unsafe, initial): data's shape
 * with dim `axis` replaced by the segment count (lengths' last size, or offsets' minus 1);
 * lengths/offsets carry data's dims before axis in front (batched segments). */
static int shape_segment(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *l = NULL;
    int red;
    int64_t axis = 0;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "data"), "data", &x) || seg_reduction(sa, &red)) return -1;
    ArgRef al = sa_arg(sa, 2, "lengths"), ao = sa_arg(sa, 4, "offsets"), ax = sa_arg(sa, 5, "axis");
    if (arg_present(sa_arg(sa, 3, "indices"))) return sa_err(sa, "segment_reduce: indices are not supported, give lengths or offsets");
    bool offs = !arg_present(al);
    if (offs && !arg_present(ao)) return sa_err(sa, "segment_reduce: either lengths or offsets must be defined");
    if (sa_tensor(sa, offs ? ao : al, offs ? "offsets" : "lengths", &l)) return -1;
    if (arg_present(ax) && sa_const_int(sa, ax, "axis", &axis)) return -1;
    if (sa_dim(sa, axis, x->ndim, &axis)) return -1;
    if (!dtype_is_int(l->dtype)) return sa_err(sa, "segment_reduce: %s must be an integer tensor", offs ? "offsets" : "lengths");
    if (l->ndim != axis + 1) return sa_err(sa, "segment_reduce: %s must have %lld dims (data's dims before axis, then segments)", offs ? "offsets" : "lengths", (long long)axis + 1);
    for (int i = 0; i < axis; i++)
        if (ex_cmp(sa, l->size[i], x->size[i]) != 0) return sa_err(sa, "segment_reduce: %s and data disagree in dim %d", offs ? "offsets" : "lengths", i);
    int64_t segs;
    if (!sym_is_int(l->size[axis], &segs)) return sa_err(sa, "symbolic segment counts are not supported");
    if (offs) segs--;
    if (segs < 0) return sa_err(sa, "segment_reduce: offsets must not be empty");
    meta_alloc(sa, out, x->dtype, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out->size[i] = i == axis ? sym_int(sa->sym, segs) : x->size[i];
    meta_contiguous_strides(sa, out);
    return 0;
}

/* per output element: start from `initial` (else the reduction's identity), fold the segment's
 * values (max/min propagate NaN), mean divides by the length; an empty segment keeps the start
 * value, NaN for mean without initial. Example: data [1, 5, 2, 3], lengths [2, 0, 2], max,
 * initial None -> [5, -inf, 3]. */
static int segment_fill(ShapeArgs *sa, Tensor *o) {
    int red;
    if (seg_reduction(sa, &red)) return -1;
    ArgRef al = sa_arg(sa, 2, "lengths"), ai = sa_arg(sa, 7, "initial");
    bool offs = !arg_present(al);
    Tensor *x = ev_tensor(sa_arg(sa, 0, "data")), *l = ev_tensor(offs ? sa_arg(sa, 4, "offsets") : al);
    int64_t axis = 0;
    ArgRef ax = sa_arg(sa, 5, "axis");
    if (arg_present(ax)) sa_const_int(sa, ax, "axis", &axis);
    if (axis < 0) axis += x->ndim;
    double init = red == SEG_MAX ? -INFINITY : red == SEG_MIN ? INFINITY : red == SEG_PROD ? 1 : 0;
    bool has_init = arg_present(ai);
    DType t;
    if (has_init && sa_scalar(sa, ai, "initial", &init, &t)) return -1;
    int64_t outer = 1, inner = 1, n = x->size[axis], segs = o->size[axis], lrow = l->size[axis];
    for (int i = 0; i < axis; i++) outer *= x->size[i];
    for (int i = (int)axis + 1; i < x->ndim; i++) inner *= x->size[i];
    for (int64_t a = 0; a < outer; a++) {
        int64_t start = 0;
        for (int64_t s = 0; s < segs; s++) {
            if (offs) start = tensor_get_i(l, a * lrow + s);   /* offsets give each segment's start */
            int64_t len = offs ? tensor_get_i(l, a * lrow + s + 1) - tensor_get_i(l, a * lrow + s) : tensor_get_i(l, a * lrow + s);
            if (len < 0) { sa_err(sa, "segment_reduce: lengths contains negative value %lld", (long long)len); return -1; }
            if (start < 0 || start + len > n) { sa_err(sa, "segment_reduce: segments cover %lld elements but data has %lld along axis %lld", (long long)(start + len), (long long)n, (long long)axis); return -1; }
            for (int64_t j = 0; j < inner; j++) {
                double acc = init;
                for (int64_t k = 0; k < len; k++) {
                    double v = tensor_get_f(x, (a * n + start + k) * inner + j);
                    switch (red) {
                    case SEG_MAX: acc = isnan(v) ? v : (acc < v ? v : acc); break;
                    case SEG_MIN: acc = isnan(v) ? v : (v < acc ? v : acc); break;
                    case SEG_PROD: acc *= v; break;
                    default: acc += v; break;
                    }
                }
                if (red == SEG_MEAN) acc = len == 0 ? (has_init ? acc : NAN) : isnan(acc) ? acc : acc / (double)len;
                tensor_set_f(o, (a * segs + s) * inner + j, acc);
            }
            start += len;
        }
    }
    return 0;
}
static int segment_eval(const OpCall *c, IValue *out) { return ev_run(c, out, segment_fill); }

const OpDef ops_segment_table[] = {
    {"aten.segment_reduce.default", 0, op_infer_generic, segment_eval, "max/mean/min/sum/prod over consecutive segments along axis", shape_segment, NULL},
};
const int ops_segment_count = sizeof ops_segment_table / sizeof ops_segment_table[0];
