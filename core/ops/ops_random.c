/* ops_random.c — random ops (rand, randn, randint, *_like, bernoulli, native_dropout, prims.normal
 * and Inductor's prims.inductor_seeds / inductor_lookup_seed / inductor_random / inductor_randint).
 * They cannot reproduce PyTorch's random streams; they draw from a generator seeded by the session seed and the
 * node's name, so a run is repeatable and two random nodes differ. Numerics checks of graphs
 * with these ops compare distributions, not values. */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t node_seed(ShapeArgs *sa) {
    uint64_t h = sa->ctx->seed ^ 0x5eedf00dull;
    for (const char *p = sa->node && sa->node->name ? sa->node->name : ""; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    return h;
}

static double uniform(uint64_t *s) { return (double)(mix(s) >> 11) * (1.0 / 9007199254740992.0); }

static double normal(uint64_t *s) {
    double u = uniform(s), v = uniform(s);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

enum { RD_RAND, RD_RANDN, RD_RAND_LIKE, RD_RANDN_LIKE, RD_BERNOULLI, RD_DROPOUT, RD_SEEDS, RD_LOOKUP, RD_IRANDOM, RD_RANDPERM,
       RD_RANDINT, RD_RANDINT_LOW, RD_IRANDINT, RD_PNORMAL };
typedef struct RandSpec { int kind; } RandSpec;

static int shape_random(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const RandSpec *sp = sa->op->data;
    Expr *size[MI_MAX_DIMS];
    int n;
    TensorMeta *x;
    Device cpu = {DEV_CPU, -1};
    Device dev = sa->eval ? cpu : arg_device(sa_arg(sa, -1, "device"), cpu);
    *nout = 1;
    switch (sp->kind) {
    case RD_RAND: case RD_RANDN: case RD_IRANDOM: case RD_PNORMAL:
        if (sa_int_list(sa, sa_arg(sa, 0, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
        meta_alloc(sa, out, arg_dtype(sa_arg(sa, -1, "dtype"), default_float()), n, dev);
        for (int i = 0; i < n; i++) out->size[i] = size[i];
        meta_contiguous_strides(sa, out);
        if (sp->kind == RD_IRANDOM && !sa->eval) out->device = sa_first_device(sa);
        return 0;
    case RD_RANDINT: case RD_RANDINT_LOW: case RD_IRANDINT: {
        /* randint(high, size) / randint.low(low, high, size): int64 unless dtype says otherwise;
         * prims.inductor_randint(low, high, size, seed): int64 on the seed's device */
        int at = sp->kind == RD_RANDINT ? 1 : 2;
        if (sa_int_list(sa, sa_arg(sa, at, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
        double lo = 0, hi;
        DType t;
        if (sp->kind != RD_RANDINT && sa_scalar(sa, sa_arg(sa, 0, "low"), "low", &lo, &t)) return -1;
        if (sa_scalar(sa, sa_arg(sa, at - 1, "high"), "high", &hi, &t)) return -1;
        if (!(lo < hi)) return sa_err(sa, "random_ expects 'from' to be less than 'to', but got from=%g >= to=%g", lo, hi);
        meta_alloc(sa, out, sp->kind == RD_IRANDINT ? DT_I64 : arg_dtype(sa_arg(sa, -1, "dtype"), DT_I64), n, dev);
        for (int i = 0; i < n; i++) out->size[i] = size[i];
        meta_contiguous_strides(sa, out);
        if (sp->kind == RD_IRANDINT && !sa->eval) out->device = sa_first_device(sa);
        return 0;
    }
    case RD_RAND_LIKE: case RD_RANDN_LIKE: case RD_BERNOULLI:
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
        meta_like(sa, out, x, arg_dtype(sa_arg(sa, -1, "dtype"), x->dtype));
        return 0;
    case RD_DROPOUT:
        if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &x)) return -1;
        meta_like(sa, &out[0], x, x->dtype);
        meta_like(sa, &out[1], x, DT_BOOL);
        *nout = 2;
        return 0;
    case RD_SEEDS: {
        Expr *cnt;
        if (sa_int(sa, sa_arg(sa, 0, "count"), "count", &cnt)) return -1;
        meta_alloc(sa, out, DT_I64, 1, sa->eval ? cpu : arg_device(sa_arg(sa, 1, "device"), cpu));
        out->size[0] = cnt;
        out->stride[0] = sym_int(sa->sym, 1);
        return 0;
    }
    case RD_RANDPERM: {
        Expr *cnt;
        int64_t v;
        if (sa_int(sa, sa_arg(sa, 0, "n"), "n", &cnt)) return -1;
        if (sym_is_int(cnt, &v) && v < 0) return sa_err(sa, "n must be non-negative, got %lld", (long long)v);
        meta_alloc(sa, out, arg_dtype(sa_arg(sa, -1, "dtype"), DT_I64), 1, dev);
        out->size[0] = cnt;
        out->stride[0] = sym_int(sa->sym, 1);
        return 0;
    }
    case RD_LOOKUP:
        if (sa_tensor(sa, sa_arg(sa, 0, "seeds"), "seeds", &x)) return -1;
        meta_alloc(sa, out, DT_I64, 0, x->device);
        return 0;
    }
    return sa_err(sa, "unknown random op");
}

static int random_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    const RandSpec *sp = c->op->data;
    TensorMeta m[2];
    int n, rc = -1;
    Tensor *o[2] = {0};
    uint64_t s = node_seed(sa);
    if (ev_shape(sa, m, &n)) goto done;
    for (int k = 0; k < n; k++)
        if (!(o[k] = ev_new(sa, &m[k]))) goto done;
    int64_t total = tensor_numel(o[0]);
    double p = 0.5;
    DType t;
    Tensor *x = NULL;
    if (sp->kind == RD_BERNOULLI || sp->kind == RD_DROPOUT) {
        ArgRef ap = sa_arg(sa, 1, "p");
        if (arg_present(ap) && sa_scalar(sa, ap, "p", &p, &t)) goto done;
        if (p < 0 || p > 1) { sa_err(sa, "probability %g is outside [0, 1]", p); goto done; }
        x = ev_tensor(sa_arg(sa, 0, NULL));
    }
    if (sp->kind == RD_IRANDOM || sp->kind == RD_IRANDINT) {
        /* inductor_random(size, seed, mode), inductor_randint(low, high, size, seed): the seed tensor picks the stream */
        Tensor *seed = ev_tensor(sa_arg(sa, sp->kind == RD_IRANDOM ? 1 : 3, "seed"));
        if (seed && tensor_numel(seed) > 0) s ^= (uint64_t)tensor_get_i(seed, 0) * 0x9e3779b97f4a7c15ull;
    }
    if (sp->kind == RD_LOOKUP) {
        int64_t idx;
        Tensor *seeds = ev_tensor(sa_arg(sa, 0, "seeds"));
        if (sa_const_int(sa, sa_arg(sa, 1, "index"), "index", &idx)) goto done;
        if (idx < 0 || idx >= tensor_numel(seeds)) { sa_err(sa, "seed index %lld out of range", (long long)idx); goto done; }
        tensor_set_f(o[0], 0, (double)tensor_get_i(seeds, idx));
        goto ok_out;
    }
    if (sp->kind == RD_RANDPERM) {       /* Fisher-Yates over 0..n-1 */
        for (int64_t k = 0; k < total; k++) tensor_set_f(o[0], k, (double)k);
        for (int64_t k = total - 1; k > 0; k--) {
            int64_t j = (int64_t)(uniform(&s) * (double)(k + 1));
            double a = tensor_get_f(o[0], k), b = tensor_get_f(o[0], j);
            tensor_set_f(o[0], k, b);
            tensor_set_f(o[0], j, a);
        }
        goto ok_out;
    }
    if (sp->kind == RD_RANDINT || sp->kind == RD_RANDINT_LOW || sp->kind == RD_IRANDINT) {   /* uniform in [low, high) */
        double lo = 0, hi = 1;
        DType t;
        if (sp->kind != RD_RANDINT) sa_scalar(sa, sa_arg(sa, 0, "low"), "low", &lo, &t);
        sa_scalar(sa, sa_arg(sa, sp->kind == RD_RANDINT ? 0 : 1, "high"), "high", &hi, &t);
        for (int64_t k = 0; k < total; k++) tensor_set_f(o[0], k, floor(lo + (hi - lo) * uniform(&s)));
        goto ok_out;
    }
    double mean = 0, std = 1;
    if (sp->kind == RD_PNORMAL) {   /* prims.normal(shape, *, mean, std, dtype, device, requires_grad) */
        if (sa_scalar(sa, sa_arg(sa, -1, "mean"), "mean", &mean, &t) || sa_scalar(sa, sa_arg(sa, -1, "std"), "std", &std, &t)) goto done;
        if (std < 0) { sa_err(sa, "normal expects std >= 0.0, but found std %g", std); goto done; }
    }
    bool normal_mode = sp->kind == RD_RANDN || sp->kind == RD_PNORMAL || sp->kind == RD_RANDN_LIKE ||
                       (sp->kind == RD_IRANDOM && !strcmp(arg_str(sa_arg(sa, 2, "mode"), "rand"), "randn"));
    for (int64_t k = 0; k < total; k++) {
        switch (sp->kind) {
        case RD_SEEDS: tensor_set_f(o[0], k, (double)(mix(&s) >> 12)); break;
        case RD_BERNOULLI: tensor_set_f(o[0], k, uniform(&s) < p ? 1 : 0); break;
        case RD_DROPOUT: {
            bool keep = uniform(&s) >= p;
            tensor_set_f(o[0], k, keep && p < 1 ? tensor_get_f(x, k) / (1 - p) : 0);
            tensor_set_f(o[1], k, keep);
            break;
        }
        default: tensor_set_f(o[0], k, normal_mode ? mean + std * normal(&s) : uniform(&s)); break;
        }
    }
ok_out:
    if (n == 1) {
        ev_out_tensor(out, o[0]);
    } else {
        out->kind = IV_TUPLE;
        out->n = n;
        out->items = mi_xcalloc((size_t)n, sizeof(IValue));
        for (int k = 0; k < n; k++) ev_out_tensor(&out->items[k], o[k]);
    }
    o[0] = o[1] = NULL;
    rc = 0;
done:
    tensor_unref(o[0]);
    tensor_unref(o[1]);
    return rc;
}
static int random_eval(const OpCall *c, IValue *out) { return ev_call(c, out, random_body); }


/* ---- distribution fills: x.uniform_(a, b), normal_, cauchy_, exponential_, geometric_,
 * log_normal_, bernoulli_(p), their functional forms, bernoulli(probs), normal(mean, std),
 * randint_like, multinomial, rrelu_with_noise (the ATen samplers' formulas over our stream) ---- */

enum { DS_UNIFORM, DS_NORMAL, DS_CAUCHY, DS_EXPONENTIAL, DS_GEOMETRIC, DS_LOG_NORMAL, DS_BERNOULLI_P, DS_BERNOULLI_T,
       DS_NORMAL_TT, DS_RANDINT, DS_RANDINT_LOW, DS_MULTINOMIAL, DS_RRELU };
typedef struct DistSpec { int kind; } DistSpec;

static int shape_dist(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const DistSpec *sp = sa->op->data;
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, sp->kind == DS_NORMAL_TT ? "mean" : "self"), "self", &x)) return -1;
    if (sp->kind == DS_MULTINOMIAL) {
        int64_t k;
        if (sa_const_int(sa, sa_arg(sa, 1, "num_samples"), "num_samples", &k)) return -1;
        if (x->ndim < 1 || x->ndim > 2) return sa_err(sa, "prob_dist must be 1 or 2 dim");
        meta_alloc(sa, out, DT_I64, x->ndim, x->device);
        if (x->ndim == 2) out->size[0] = x->size[0];
        out->size[x->ndim - 1] = sym_int(sa->sym, k);
        meta_contiguous_strides(sa, out);
        return 0;
    }
    if (sa->op->flags & OPF_INPLACE) { meta_copy(sa, out, x); return 0; }
    meta_like(sa, out, x, arg_dtype(sa_arg(sa, -1, "dtype"), x->dtype));
    meta_contiguous_strides(sa, out);
    return 0;
}

static double arg_or(ShapeArgs *sa, int pos, const char *name, double dflt) {
    ArgRef a = sa_arg(sa, pos, name);
    double v = dflt;
    DType t;
    if (arg_present(a) && !arg_is_tensor(sa, a)) sa_scalar(sa, a, name, &v, &t);
    return v;
}

static int dist_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    const DistSpec *sp = c->op->data;
    TensorMeta m;
    int n, rc = -1;
    Tensor *o = NULL;
    uint64_t s = node_seed(sa);
    if (ev_shape(sa, &m, &n)) goto done;
    Tensor *x = ev_tensor(sa_arg(sa, 0, NULL));
    if (!(o = ev_new(sa, &m))) goto done;
    int64_t total = tensor_numel(o);
    double a = 0, b = 1;
    switch (sp->kind) {
    case DS_UNIFORM: a = arg_or(sa, 1, "from", 0); b = arg_or(sa, 2, "to", 1); break;
    case DS_NORMAL: a = arg_or(sa, 1, "mean", 0); b = arg_or(sa, 2, "std", 1); break;
    case DS_CAUCHY: a = arg_or(sa, 1, "median", 0); b = arg_or(sa, 2, "sigma", 1); break;
    case DS_EXPONENTIAL: a = arg_or(sa, 1, "lambd", 1); break;
    case DS_GEOMETRIC: a = arg_or(sa, 1, "p", 0.5); break;
    case DS_LOG_NORMAL: a = arg_or(sa, 1, "mean", 1); b = arg_or(sa, 2, "std", 2); break;
    case DS_BERNOULLI_P: a = arg_or(sa, 1, "p", 0.5); break;
    case DS_RANDINT: a = 0; b = arg_or(sa, 1, "high", 1); break;
    case DS_RANDINT_LOW: a = arg_or(sa, 1, "low", 0); b = arg_or(sa, 2, "high", 1); break;
    case DS_RRELU: a = arg_or(sa, 2, "lower", 1.0 / 8); b = arg_or(sa, 3, "upper", 1.0 / 3); break;
    default: break;
    }
    if (sp->kind == DS_MULTINOMIAL) {
        int64_t k = o->size[o->ndim - 1], rows = x->ndim == 2 ? x->size[0] : 1, cats = x->size[x->ndim - 1];
        bool repl = arg_bool(sa_arg(sa, 2, "replacement"), false);
        if (!repl && k > cats) { sa_err(sa, "cannot sample n_sample > prob_dist.size(-1) samples without replacement"); goto done; }
        double *w = mi_xcalloc((size_t)(cats ? cats : 1), sizeof *w);
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t j = 0; j < cats; j++) w[j] = tensor_get_f(x, r * cats + j);
            for (int64_t q = 0; q < k; q++) {
                double tot = 0;
                for (int64_t j = 0; j < cats; j++) tot += w[j];
                double u = uniform(&s) * tot;
                int64_t pick = cats - 1;
                for (int64_t j = 0; j < cats; j++) { if (u < w[j]) { pick = j; break; } u -= w[j]; }
                tensor_set_f(o, r * k + q, (double)pick);
                if (!repl) w[pick] = 0;
            }
        }
        free(w);
    } else {
        Tensor *std = sp->kind == DS_NORMAL_TT ? ev_tensor(sa_arg(sa, 1, "std")) : NULL;
        Tensor *noise = sp->kind == DS_RRELU ? ev_tensor(sa_arg(sa, 1, "noise")) : NULL;
        bool training = sp->kind == DS_RRELU && arg_bool(sa_arg(sa, 4, "training"), false);
        for (int64_t k = 0; k < total; k++) {
            double u = uniform(&s), v;
            switch (sp->kind) {
            case DS_UNIFORM: v = a + (b - a) * u; break;
            case DS_NORMAL: v = a + b * normal(&s); break;
            case DS_CAUCHY: v = a + b * tan(M_PI * (u - 0.5)); break;
            case DS_EXPONENTIAL: v = -log1p(-u) / a; break;
            case DS_GEOMETRIC: v = ceil(log1p(-u) / log1p(-a)); if (v < 1) v = 1; break;
            case DS_LOG_NORMAL: v = exp(a + b * normal(&s)); break;
            case DS_BERNOULLI_P: v = u < a; break;
            case DS_BERNOULLI_T: v = u < tensor_get_f(x, k); break;
            case DS_NORMAL_TT: v = tensor_get_f(x, k) + (std ? tensor_get_f(std, std && tensor_numel(std) == total ? k : 0) : 1) * normal(&s); break;
            case DS_RANDINT: case DS_RANDINT_LOW: v = floor(a + (b - a) * u); break;
            case DS_RRELU: {
                double xv = tensor_get_f(x, k), r = training ? a + (b - a) * u : (a + b) / 2;
                v = xv <= 0 ? xv * r : xv;
                if (noise && training) tensor_set_f(noise, k, xv <= 0 ? r : 1);
                break;
            }
            default: v = u; break;
            }
            tensor_set_f(o, k, v);
        }
    }
    if (c->op->flags & OPF_INPLACE) {
        rc = tensor_copy_into(c->ctx, x, o);
        tensor_unref(o);
        o = NULL;
        if (rc == 0) ev_out_tensor(out, tensor_ref(x));
        goto done;
    }
    ev_out_tensor(out, o);
    o = NULL;
    rc = 0;
done:
    tensor_unref(o);
    return rc;
}
static int dist_eval(const OpCall *c, IValue *out) { return ev_call(c, out, dist_body); }

/* decomposition.py randint: randint(high, size, **kwargs) -> randint.low(0, high, size, **kwargs)
 * (the generator overloads stay: Inductor registers only .default) */
int decomp_randint_default(DecompB *b, Value *outs, int *nout) {
    const Value *hi = db_arg(b, 0, "high"), *size = db_arg(b, 1, "size");
    if (!hi || !size) return db_fail(b, "randint needs high and size");
    outs[0] = VN(db_call(b, "aten.randint.low", DBV(VI(0), *hi, *size), b->n->kwargs, b->n->nkwargs));
    *nout = 1;
    return b->failed ? -1 : 0;
}

#define DST(name, flags, kind, doc) {name, OPF_RANDOM | (flags), op_infer_generic, dist_eval, doc, shape_dist, &(const DistSpec){kind}}

static const RandSpec r_rand = {RD_RAND}, r_randn = {RD_RANDN}, r_rand_like = {RD_RAND_LIKE}, r_randn_like = {RD_RANDN_LIKE},
    r_bern = {RD_BERNOULLI}, r_drop = {RD_DROPOUT}, r_seeds = {RD_SEEDS}, r_lookup = {RD_LOOKUP}, r_irandom = {RD_IRANDOM}, r_randperm = {RD_RANDPERM},
    r_randint = {RD_RANDINT}, r_randint_low = {RD_RANDINT_LOW}, r_irandint = {RD_IRANDINT}, r_pnormal = {RD_PNORMAL};

#define RND(name, flags, spec, doc) {name, OPF_RANDOM | (flags), op_infer_generic, random_eval, doc, shape_random, &spec}

const OpDef ops_random_table[] = {
    RND("aten.rand.default", OPF_CONSTRUCTOR, r_rand, "uniform [0, 1) of size"),
    RND("aten.randn.default", OPF_CONSTRUCTOR, r_randn, "standard normal of size"),
    RND("prims.normal.default", OPF_CONSTRUCTOR, r_pnormal, "normal(mean, std) of shape (randn's prim; a FallbackKernel in Inductor)"),
    RND("aten.rand_like.default", 0, r_rand_like, "uniform [0, 1) like self"),
    RND("aten.randn_like.default", 0, r_randn_like, "standard normal like self"),
    RND("aten.bernoulli.p", 0, r_bern, "1 with probability p, like self"),
    RND("aten.native_dropout.default", OPF_TUPLE, r_drop, "(input * mask / (1 - p), mask)"),
    RND("prims.inductor_seeds.default", OPF_CONSTRUCTOR, r_seeds, "count random seeds"),
    RND("prims.inductor_lookup_seed.default", 0, r_lookup, "seeds[index] as a 0-dim tensor"),
    RND("prims.inductor_random.default", 0, r_irandom, "rand/randn of size from a seed tensor"),
    RND("aten.randperm.default", OPF_CONSTRUCTOR, r_randperm, "random permutation of 0..n-1"),
    RND("aten.randint.default", OPF_CONSTRUCTOR, r_randint, "integers uniform in [0, high) of size (int64)"),
    RND("aten.randint.generator", OPF_CONSTRUCTOR, r_randint, "integers uniform in [0, high) of size, from a generator"),
    RND("aten.randint.low", OPF_CONSTRUCTOR, r_randint_low, "integers uniform in [low, high) of size (int64)"),
    RND("aten.randint.low_generator", OPF_CONSTRUCTOR, r_randint_low, "integers uniform in [low, high) of size, from a generator"),
    RND("prims.inductor_randint.default", 0, r_irandint, "randint(low, high, size) from a seed tensor (int64)"),
    DST("aten.uniform_.default", OPF_INPLACE, DS_UNIFORM, "fill with uniform [from, to)"),
    DST("aten.uniform.default", 0, DS_UNIFORM, "uniform [from, to) like self"),
    DST("aten.normal_.default", OPF_INPLACE, DS_NORMAL, "fill with normal(mean, std)"),
    DST("aten.normal_functional.default", 0, DS_NORMAL, "normal(mean, std) like self"),
    DST("aten.cauchy_.default", OPF_INPLACE, DS_CAUCHY, "fill with Cauchy(median, sigma)"),
    DST("aten.cauchy.default", 0, DS_CAUCHY, "Cauchy(median, sigma) like self"),
    DST("aten.exponential_.default", OPF_INPLACE, DS_EXPONENTIAL, "fill with exponential(lambd)"),
    DST("aten.exponential.default", 0, DS_EXPONENTIAL, "exponential(lambd) like self"),
    DST("aten.geometric_.default", OPF_INPLACE, DS_GEOMETRIC, "fill with geometric(p)"),
    DST("aten.geometric.default", 0, DS_GEOMETRIC, "geometric(p) like self"),
    DST("aten.log_normal_.default", OPF_INPLACE, DS_LOG_NORMAL, "fill with log-normal(mean, std)"),
    DST("aten.log_normal.default", 0, DS_LOG_NORMAL, "log-normal(mean, std) like self"),
    DST("aten.bernoulli_.float", OPF_INPLACE, DS_BERNOULLI_P, "fill with bernoulli(p)"),
    DST("aten.bernoulli.float", 0, DS_BERNOULLI_P, "bernoulli(p) like self"),
    DST("aten.bernoulli.default", 0, DS_BERNOULLI_T, "1 with probability self[i]"),
    DST("aten.normal.Tensor_Tensor", 0, DS_NORMAL_TT, "normal(mean[i], std[i])"),
    DST("aten.randint_like.default", 0, DS_RANDINT, "integers in [0, high) like self"),
    DST("aten.randint_like.low_dtype", 0, DS_RANDINT_LOW, "integers in [low, high) like self"),
    DST("aten.multinomial.default", 0, DS_MULTINOMIAL, "category samples drawn by the row weights"),
    DST("aten.rrelu_with_noise.default", 0, DS_RRELU, "leaky relu with a random slope in [lower, upper] (training)"),
};
const int ops_random_count = sizeof ops_random_table / sizeof ops_random_table[0];
