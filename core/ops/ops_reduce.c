/* ops_reduce.c — reductions and the normalizations built on them: sum, mean, amax/amin,
 * max/min, argmax/argmin, prod, any/all, var/std/var_mean, logsumexp, softmax/log_softmax,
 * prims.prepare_softmax_online and native_layer_norm. One group iterator walks the reduced
 * elements of each output position; every reduction is a small function of a group. Results
 * are contiguous, as PyTorch allocates them. Accumulation is in double. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    RK_SUM, RK_MEAN, RK_AMAX, RK_AMIN, RK_PROD, RK_ANY, RK_ALL, RK_ARGMAX, RK_ARGMIN,
    RK_MAXDIM, RK_MINDIM, RK_VAR, RK_STD, RK_VAR_MEAN, RK_LOGSUMEXP,
    RK_SOFTMAX, RK_LOGSOFTMAX, RK_PREP_SOFTMAX, RK_LAYERNORM, RK_HASH,
};
/* how the dims argument is given: ALL = no dims argument; LIST = dim list (empty = all);
 * ONE = a single int or None; REQ1 = a required single int */
enum { D_ALL, D_LIST, D_ONE, D_REQ1 };

typedef struct RedSpec { int kind, dims; } RedSpec;

/* ---- shape ---- */

typedef struct RedShape {
    TensorMeta *x;
    bool mask[MI_MAX_DIMS];     /* reduced dims */
    bool keepdim;
    DType out_dtype;
} RedShape;

static int red_parse(ShapeArgs *sa, const RedSpec *sp, RedShape *r) {
    memset(r, 0, sizeof *r);
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &r->x)) return -1;
    int nd = r->x->ndim;
    if (nd > MI_MAX_DIMS) return sa_err(sa, "rank too large");
    ArgRef ad = sa_arg(sa, 1, "dim");
    int64_t dims[MI_MAX_DIMS];
    int n = 0;
    if (sp->dims != D_ALL && arg_present(ad))
        if (sa_const_int_list(sa, ad, "dim", dims, &n, MI_MAX_DIMS)) return -1;
    if (sp->dims == D_REQ1 && n != 1) return sa_err(sa, "expects exactly one dim");
    if (n == 0) {
        for (int i = 0; i < nd; i++) r->mask[i] = true;
    } else {
        for (int k = 0; k < n; k++) {
            int64_t d;
            if (sa_dim(sa, dims[k], nd, &d)) return -1;
            if (nd == 0) continue;
            if (r->mask[d]) return sa_err(sa, "dim %lld appears twice in the reduction", (long long)d);
            r->mask[d] = true;
        }
    }
    /* keepdim: positional after dim for most, kwarg-only for the .correction overloads */
    ArgRef ak = sa_arg(sa, sp->kind == RK_VAR || sp->kind == RK_STD || sp->kind == RK_VAR_MEAN ? -1 : 2, "keepdim");
    r->keepdim = sp->dims != D_ALL && arg_bool(ak, false);
    DType in = r->x->dtype, dt = in;
    switch (sp->kind) {
    case RK_SUM: case RK_PROD:
        if (ev_intlike(in)) dt = DT_I64;
        dt = arg_dtype(sa_arg(sa, -1, "dtype"), dt);
        break;
    case RK_MEAN: case RK_VAR: case RK_STD: case RK_VAR_MEAN: case RK_LOGSUMEXP:
        dt = arg_dtype(sa_arg(sa, -1, "dtype"), in);
        if (ev_intlike(dt)) {
            if (sp->kind == RK_LOGSUMEXP) dt = default_float();
            else return sa_err(sa, "needs a floating point input, got %s", dtype_abbrev(in));
        }
        break;
    case RK_ANY: case RK_ALL: dt = DT_BOOL; break;
    case RK_ARGMAX: case RK_ARGMIN: dt = DT_I64; break;
    case RK_HASH: {
        int64_t mode = 0;
        ArgRef am = sa_arg(sa, -1, "mode");
        if (arg_present(am) && sa_const_int(sa, am, "mode", &mode)) return -1;
        if (mode != 0) return sa_err(sa, "hash_tensor: only mode=0 (xor reduction) is supported, got mode=%lld", (long long)mode);
        if (dtype_is_complex(in)) return sa_err(sa, "hash_tensor: complex inputs are not supported");
        dt = DT_U64;
        break;
    }
    default: break;
    }
    r->out_dtype = dt;
    return 0;
}

static void red_out_meta(ShapeArgs *sa, const RedShape *r, TensorMeta *out, DType dt) {
    int nd = 0;
    for (int i = 0; i < r->x->ndim; i++) nd += r->keepdim || !r->mask[i];
    meta_alloc(sa, out, dt, nd, r->x->device);
    for (int i = 0, k = 0; i < r->x->ndim; i++) {
        if (r->mask[i] && !r->keepdim) continue;
        out->size[k++] = r->mask[i] ? sym_int(sa->sym, 1) : r->x->size[i];
    }
    meta_contiguous_strides(sa, out);
}

static int shape_reduce(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const RedSpec *sp = sa->op->data;
    RedShape r;
    if (red_parse(sa, sp, &r)) return -1;
    red_out_meta(sa, &r, &out[0], r.out_dtype);
    *nout = 1;
    if (sp->kind == RK_VAR_MEAN) { red_out_meta(sa, &r, &out[1], r.out_dtype); *nout = 2; }
    if (sp->kind == RK_MAXDIM || sp->kind == RK_MINDIM) { red_out_meta(sa, &r, &out[1], DT_I64); *nout = 2; }
    return 0;
}

/* softmax family: same shape as the input, one dim */
static int softmax_parse(ShapeArgs *sa, TensorMeta **x, int64_t *dim, DType *dt) {
    int64_t d;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", x) || sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &d)) return -1;
    if (sa_dim(sa, d, (*x)->ndim, dim)) return -1;
    *dt = (*x)->dtype;
    ArgRef h = sa_arg(sa, 2, "half_to_float");
    if (h.v && h.v->kind == V_BOOL && h.v->b && (*dt == DT_F16 || *dt == DT_BF16)) *dt = DT_F32;
    if (h.v && h.v->kind == V_DTYPE) *dt = h.v->dtype;            /* softmax.int(self, dim, dtype) */
    *dt = arg_dtype(sa_arg(sa, -1, "dtype"), *dt);
    if (ev_intlike(*dt)) return sa_err(sa, "softmax needs a floating point input, got %s", dtype_abbrev(*dt));
    return 0;
}

static int shape_softmax(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dim;
    DType dt;
    if (softmax_parse(sa, &x, &dim, &dt)) return -1;
    meta_alloc(sa, out, dt, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) out->size[i] = x->size[i];
    meta_like(sa, out, x, dt);
    *nout = 1;
    return 0;
}

static int shape_prep_softmax(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int64_t dim;
    DType dt;
    if (softmax_parse(sa, &x, &dim, &dt)) return -1;
    RedShape r = {.x = x, .keepdim = true};
    if (x->ndim) r.mask[dim] = true;
    red_out_meta(sa, &r, &out[0], dt);
    red_out_meta(sa, &r, &out[1], dt);
    *nout = 2;
    return 0;
}

static int layer_norm_parse(ShapeArgs *sa, TensorMeta **x, int *axis) {
    Expr *ns[MI_MAX_DIMS];
    int n;
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", x) ||
        sa_int_list(sa, sa_arg(sa, 1, "normalized_shape"), "normalized_shape", ns, &n, MI_MAX_DIMS)) return -1;
    if (n > (*x)->ndim) return sa_err(sa, "normalized_shape has %d dims but the input only %d", n, (*x)->ndim);
    *axis = (*x)->ndim - n;
    for (int i = 0; i < n; i++)
        if (ex_cmp(sa, ns[i], (*x)->size[*axis + i]) != 0)
            return sa_err(sa, "normalized_shape does not match the input's trailing dimensions");
    return 0;
}

static int shape_layer_norm(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    int axis;
    if (layer_norm_parse(sa, &x, &axis)) return -1;
    meta_like(sa, &out[0], x, x->dtype);
    meta_contiguous_strides(sa, &out[0]);
    RedShape r = {.x = x, .keepdim = true};
    for (int i = axis; i < x->ndim; i++) r.mask[i] = true;
    DType st = x->dtype == DT_F16 || x->dtype == DT_BF16 ? DT_F32 : x->dtype;
    red_out_meta(sa, &r, &out[1], st);
    red_out_meta(sa, &r, &out[2], st);
    *nout = 3;
    return 0;
}

/* ---- the group iterator ---- */

typedef struct Groups {
    int nk, nr;
    int kd[MI_MAX_DIMS], rd[MI_MAX_DIMS];
    int64_t outer, inner;
} Groups;

static void groups_init(Groups *g, const Tensor *t, const bool *mask) {
    g->nk = g->nr = 0;
    g->outer = g->inner = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (mask[i]) { g->rd[g->nr++] = i; g->inner *= t->size[i]; }
        else { g->kd[g->nk++] = i; g->outer *= t->size[i]; }
    }
}

/* Storage positions of the inner elements of group `o` of tensor t (same shape as the
 * tensor the groups were made for). */
static void group_pos(const Groups *g, const Tensor *t, int64_t o, int64_t *pos) {
    int64_t base = t->offset;
    for (int k = g->nk - 1; k >= 0; k--) {
        int d = g->kd[k];
        base += (o % t->size[d]) * t->stride[d];
        o /= t->size[d];
    }
    int64_t idx[MI_MAX_DIMS] = {0}, p = base;
    for (int64_t e = 0; e < g->inner; e++) {
        pos[e] = p;
        for (int k = g->nr - 1; k >= 0; k--) {
            int d = g->rd[k];
            idx[k]++;
            p += t->stride[d];
            if (idx[k] < t->size[d]) break;
            p -= t->stride[d] * idx[k];
            idx[k] = 0;
        }
    }
}

static double group_reduce(int kind, const double *v, int64_t n, int64_t *arg, double correction, double *mean_out) {
    double acc = 0;
    *arg = 0;
    switch (kind) {
    case RK_SUM: for (int64_t i = 0; i < n; i++) acc += v[i]; return acc;
    case RK_MEAN: for (int64_t i = 0; i < n; i++) acc += v[i]; return acc / (double)n;
    case RK_PROD: acc = 1; for (int64_t i = 0; i < n; i++) acc *= v[i]; return acc;
    case RK_ANY: for (int64_t i = 0; i < n; i++) if (v[i] != 0) return 1; return 0;
    case RK_ALL: for (int64_t i = 0; i < n; i++) if (v[i] == 0) return 0; return 1;
    case RK_AMAX: case RK_MAXDIM: case RK_ARGMAX:
    case RK_AMIN: case RK_MINDIM: case RK_ARGMIN: {
        bool mx = kind == RK_AMAX || kind == RK_MAXDIM || kind == RK_ARGMAX;
        acc = n ? v[0] : (mx ? -INFINITY : INFINITY);
        for (int64_t i = 1; i < n; i++) {
            if (isnan(acc)) break;
            if (isnan(v[i]) || (mx ? v[i] > acc : v[i] < acc)) { acc = v[i]; *arg = i; }
        }
        return acc;
    }
    case RK_VAR: case RK_STD: case RK_VAR_MEAN: {
        double m = 0, ss = 0;
        for (int64_t i = 0; i < n; i++) m += v[i];
        m /= (double)n;
        for (int64_t i = 0; i < n; i++) ss += (v[i] - m) * (v[i] - m);
        double d = (double)n - correction;
        double var = d > 0 ? ss / d : (ss == 0 && d == 0 ? NAN : ss / d);
        if (d <= 0) var = NAN;
        *mean_out = m;
        return kind == RK_STD ? sqrt(var) : var;
    }
    case RK_LOGSUMEXP: {
        double mx = -INFINITY;
        for (int64_t i = 0; i < n; i++) if (v[i] > mx) mx = v[i];
        if (isinf(mx)) return mx;
        for (int64_t i = 0; i < n; i++) acc += exp(v[i] - mx);
        return mx + log(acc);
    }
    default: return 0;
    }
}

static int reduce_fill(ShapeArgs *sa, Tensor *const *o, int nout) {
    const RedSpec *sp = sa->call->op->data;
    RedShape r;
    int rc = -1;
    double *vals = NULL;
    int64_t *pos = NULL;
    if (red_parse(sa, sp, &r)) return -1;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    double correction = 1;
    ArgRef ac = sa_arg(sa, -1, "correction");
    DType ct;
    if (arg_present(ac) && sa_scalar(sa, ac, "correction", &correction, &ct)) goto done;
    Groups g;
    groups_init(&g, x, r.mask);
    if (g.inner == 0 && (sp->kind == RK_AMAX || sp->kind == RK_AMIN || sp->kind == RK_ARGMAX ||
                         sp->kind == RK_ARGMIN || sp->kind == RK_MAXDIM || sp->kind == RK_MINDIM) && g.outer > 0) {
        sa_err(sa, "cannot reduce over an empty dimension (max/min of nothing)");
        goto done;
    }
    vals = malloc((size_t)(g.inner ? g.inner : 1) * sizeof *vals);
    pos = malloc((size_t)(g.inner ? g.inner : 1) * sizeof *pos);
    if (!vals || !pos) { sa_err(sa, "out of memory"); goto done; }
    bool ints = ev_intlike(x->dtype) && (sp->kind == RK_SUM || sp->kind == RK_PROD) && ev_intlike(o[0]->dtype);
    for (int64_t k = 0; k < g.outer; k++) {
        group_pos(&g, x, k, pos);
        int64_t arg = 0, op0 = tensor_pos(o[0], k);
        double mean = 0;
        if (sp->kind == RK_HASH) {   /* each element widened to f64 / i64, its 64 bits xor-ed */
            uint64_t h = 0;
            for (int64_t i = 0; i < g.inner; i++) {
                uint64_t bits;
                if (dtype_is_float(x->dtype)) { double d = tensor_load_f(x, pos[i]); memcpy(&bits, &d, sizeof bits); }
                else bits = (uint64_t)tensor_load_i(x, pos[i]);
                h ^= bits;
            }
            tensor_store_i(o[0], op0, (int64_t)h);
            continue;
        }
        if (ints) {
            int64_t acc = sp->kind == RK_PROD ? 1 : 0;
            for (int64_t i = 0; i < g.inner; i++) {
                int64_t v = tensor_load_i(x, pos[i]);
                acc = sp->kind == RK_PROD ? (int64_t)((uint64_t)acc * (uint64_t)v) : (int64_t)((uint64_t)acc + (uint64_t)v);
            }
            tensor_store_i(o[0], op0, acc);
            continue;
        }
        for (int64_t i = 0; i < g.inner; i++) vals[i] = tensor_load_f(x, pos[i]);
        double v = group_reduce(sp->kind, vals, g.inner, &arg, correction, &mean);
        if (sp->kind == RK_ARGMAX || sp->kind == RK_ARGMIN) tensor_store_i(o[0], op0, arg);
        else tensor_store_f(o[0], op0, v);
        if (sp->kind == RK_VAR_MEAN) tensor_store_f(o[1], tensor_pos(o[1], k), mean);
        if (sp->kind == RK_MAXDIM || sp->kind == RK_MINDIM) tensor_store_i(o[1], tensor_pos(o[1], k), arg);
    }
    rc = 0;
done:
    free(vals);
    free(pos);
    return rc;
}
static int reduce_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, reduce_fill); }

/* softmax / log_softmax / prepare_softmax_online over one dim */
static int softmax_fill(ShapeArgs *sa, Tensor *const *o, int nout) {
    const RedSpec *sp = sa->call->op->data;
    TensorMeta *xm;
    int64_t dim;
    DType dt;
    int rc = -1;
    double *vals = NULL;
    int64_t *pos = NULL, *opos = NULL;
    if (softmax_parse(sa, &xm, &dim, &dt)) return -1;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    bool mask[MI_MAX_DIMS] = {0};
    if (x->ndim) mask[dim] = true;
    Groups g;
    groups_init(&g, x, mask);
    size_t cap = (size_t)(g.inner ? g.inner : 1);
    vals = malloc(cap * sizeof *vals);
    pos = malloc(cap * sizeof *pos);
    opos = malloc(cap * sizeof *opos);
    if (!vals || !pos || !opos) { sa_err(sa, "out of memory"); goto done; }
    for (int64_t k = 0; k < g.outer; k++) {
        group_pos(&g, x, k, pos);
        double mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < g.inner; i++) {
            vals[i] = tensor_load_f(x, pos[i]);
            if (vals[i] > mx || isnan(vals[i])) mx = vals[i];
        }
        /* exp(x - max) even on rows holding +-inf, as PyTorch's kernels and the reference
         * eager_prepare_softmax do: such rows give nan */
        double shift = mx;
        for (int64_t i = 0; i < g.inner; i++) sum += exp(vals[i] - shift);
        if (sp->kind == RK_PREP_SOFTMAX) {
            tensor_store_f(o[0], tensor_pos(o[0], k), mx);
            tensor_store_f(o[1], tensor_pos(o[1], k), sum);
            continue;
        }
        group_pos(&g, o[0], k, opos);
        for (int64_t i = 0; i < g.inner; i++) {
            double e = vals[i] - shift;
            tensor_store_f(o[0], opos[i], sp->kind == RK_LOGSOFTMAX ? e - log(sum) : exp(e) / sum);
        }
    }
    rc = 0;
done:
    free(vals);
    free(pos);
    free(opos);
    return rc;
}
static int softmax_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, softmax_fill); }

static int layer_norm_fill(ShapeArgs *sa, Tensor *const *o, int nout) {
    TensorMeta *xm, *wm = NULL, *bm = NULL;
    int axis, rc = -1;
    double *vals = NULL;
    int64_t *pos = NULL, *opos = NULL;
    if (layer_norm_parse(sa, &xm, &axis)) return -1;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "input")), *w = NULL, *b = NULL;
    ArgRef aw = sa_arg(sa, 2, "weight"), ab = sa_arg(sa, 3, "bias");
    if (arg_present(aw)) { if (sa_tensor(sa, aw, "weight", &wm)) goto done; w = ev_tensor(aw); }
    if (arg_present(ab)) { if (sa_tensor(sa, ab, "bias", &bm)) goto done; b = ev_tensor(ab); }
    double eps;
    DType et;
    if (sa_scalar(sa, sa_arg(sa, 4, "eps"), "eps", &eps, &et)) goto done;
    bool mask[MI_MAX_DIMS] = {0};
    for (int i = axis; i < x->ndim; i++) mask[i] = true;
    Groups g;
    groups_init(&g, x, mask);
    if ((w && tensor_numel(w) != g.inner) || (b && tensor_numel(b) != g.inner)) {
        sa_err(sa, "weight/bias must have %lld elements", (long long)g.inner);
        goto done;
    }
    size_t cap = (size_t)(g.inner ? g.inner : 1);
    vals = malloc(cap * sizeof *vals);
    pos = malloc(cap * sizeof *pos);
    opos = malloc(cap * sizeof *opos);
    if (!vals || !pos || !opos) { sa_err(sa, "out of memory"); goto done; }
    for (int64_t k = 0; k < g.outer; k++) {
        group_pos(&g, x, k, pos);
        group_pos(&g, o[0], k, opos);
        double mean = 0, ss = 0;
        for (int64_t i = 0; i < g.inner; i++) { vals[i] = tensor_load_f(x, pos[i]); mean += vals[i]; }
        mean /= (double)g.inner;
        for (int64_t i = 0; i < g.inner; i++) ss += (vals[i] - mean) * (vals[i] - mean);
        double rstd = 1 / sqrt(ss / (double)g.inner + eps);
        for (int64_t i = 0; i < g.inner; i++) {
            double y = (vals[i] - mean) * rstd;
            if (w) y *= tensor_get_f(w, i);
            if (b) y += tensor_get_f(b, i);
            tensor_store_f(o[0], opos[i], y);
        }
        tensor_store_f(o[1], tensor_pos(o[1], k), mean);
        tensor_store_f(o[2], tensor_pos(o[2], k), rstd);
    }
    rc = 0;
done:
    free(vals);
    free(pos);
    free(opos);
    return rc;
}
static int layer_norm_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, layer_norm_fill); }

static const RedSpec
    r_sum = {RK_SUM, D_LIST}, r_sum_all = {RK_SUM, D_ALL}, r_mean = {RK_MEAN, D_LIST}, r_mean_all = {RK_MEAN, D_ALL},
    r_amax = {RK_AMAX, D_LIST}, r_amin = {RK_AMIN, D_LIST}, r_max_all = {RK_AMAX, D_ALL}, r_min_all = {RK_AMIN, D_ALL},
    r_prod = {RK_PROD, D_REQ1}, r_prod_all = {RK_PROD, D_ALL}, r_any = {RK_ANY, D_LIST}, r_all = {RK_ALL, D_LIST},
    r_any_all = {RK_ANY, D_ALL}, r_all_all = {RK_ALL, D_ALL},
    r_argmax = {RK_ARGMAX, D_ONE}, r_argmin = {RK_ARGMIN, D_ONE},
    r_maxdim = {RK_MAXDIM, D_REQ1}, r_mindim = {RK_MINDIM, D_REQ1},
    r_var = {RK_VAR, D_LIST}, r_std = {RK_STD, D_LIST}, r_var_mean = {RK_VAR_MEAN, D_LIST},
    r_lse = {RK_LOGSUMEXP, D_LIST}, r_hash = {RK_HASH, D_LIST},
    r_softmax = {RK_SOFTMAX, D_REQ1}, r_logsoftmax = {RK_LOGSOFTMAX, D_REQ1}, r_prep = {RK_PREP_SOFTMAX, D_REQ1};

#define RED(name, spec, doc) {name, OPF_REDUCTION, op_infer_generic, reduce_eval, doc, shape_reduce, &spec}
#define RED2(name, spec, doc) {name, OPF_REDUCTION | OPF_TUPLE, op_infer_generic, reduce_eval, doc, shape_reduce, &spec}
#define SMX(name, spec, doc) {name, OPF_REDUCTION, op_infer_generic, softmax_eval, doc, shape_softmax, &spec}

const OpDef ops_reduce_table[] = {
    RED("aten.hash_tensor.default", r_hash, "xor of the 64 bits of each element widened to f64 / i64 (uint64)"),
    RED("aten.sum.dim_IntList", r_sum, "sum over dims (ints accumulate in int64)"),
    RED("aten.sum.default", r_sum_all, "sum of all elements"),
    RED("aten.mean.dim", r_mean, "mean over dims"),
    RED("aten.mean.default", r_mean_all, "mean of all elements"),
    RED("aten.amax.default", r_amax, "max over dims (empty list = all)"),
    RED("aten.amin.default", r_amin, "min over dims (empty list = all)"),
    RED("aten.max.default", r_max_all, "max of all elements"),
    RED("aten.min.default", r_min_all, "min of all elements"),
    RED2("aten.max.dim", r_maxdim, "(values, indices) of the max along dim"),
    RED2("aten.min.dim", r_mindim, "(values, indices) of the min along dim"),
    RED("aten.argmax.default", r_argmax, "index of the max (flattened when dim is None)"),
    RED("aten.argmin.default", r_argmin, "index of the min (flattened when dim is None)"),
    RED("aten.prod.dim_int", r_prod, "product along dim"),
    RED("aten.prod.default", r_prod_all, "product of all elements"),
    RED("aten.any.dim", r_any, "any nonzero along dim"),
    RED("aten.any.dims", r_any, "any nonzero along dims"),
    RED("aten.any.default", r_any_all, "any nonzero"),
    RED("aten.all.dim", r_all, "all nonzero along dim"),
    RED("aten.all.default", r_all_all, "all nonzero"),
    RED("aten.var.correction", r_var, "variance with correction (default 1)"),
    RED("aten.std.correction", r_std, "standard deviation with correction (default 1)"),
    RED2("aten.var_mean.correction", r_var_mean, "(variance, mean) with correction"),
    RED("aten.logsumexp.default", r_lse, "log(sum(exp(x))) over dims, stable"),
    SMX("aten._softmax.default", r_softmax, "softmax along dim"),
    SMX("aten.softmax.int", r_softmax, "softmax along dim (optional dtype)"),
    SMX("aten._log_softmax.default", r_logsoftmax, "log_softmax along dim"),
    SMX("aten.log_softmax.int", r_logsoftmax, "log_softmax along dim (optional dtype)"),
    {"prims.prepare_softmax_online.default", OPF_REDUCTION | OPF_TUPLE, op_infer_generic, softmax_eval,
     "(max, sum(exp(x - max))) along dim, keepdim", shape_prep_softmax, &r_prep},
    {"aten.native_layer_norm.default", OPF_REDUCTION | OPF_TUPLE, op_infer_generic, layer_norm_eval,
     "(out, mean, rstd) of layer norm over the trailing normalized_shape", shape_layer_norm, NULL},
};
const int ops_reduce_count = sizeof ops_reduce_table / sizeof ops_reduce_table[0];
