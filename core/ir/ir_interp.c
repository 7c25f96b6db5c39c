/* ir_interp.c — the interpreter handler: runs an IrModule's buffers (creation order,
 * input mutations last) by replaying each LoopBody once per element with double-valued handles;
 * extern matmuls run as naive loops. Storage is one double array per buffer laid out by the
 * buffer's strides, so index expressions are exercised exactly as the generated C uses them.
 * Meant for checking the IR against the graph interpreter on small inputs. Its errors (an index
 * out of bounds, an integer division by zero: ATen's ZeroDivisionError) name the graph file, the
 * line and node of the buffer being run (cur_err). */
#include "ir/ir.h"
#include "base/philox.h"
#include "ops/special.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Acc { double v, m2, n; int64_t idx, count; } Acc;

typedef struct Interp {
    OpsHandler h;
    MiCtx *ctx;
    IrModule *m;
    double **store;                 /* per buffer id */
    int64_t *store_len;
    SymBinding *bind; int nbind;    /* size symbols, then the loop variables, then indirectK */
    int capbind;
    int nsymbind;
    double *vals; int nvals;        /* handle -> value for the current replay */
    Acc *acc;                       /* per op position of the current body */
    int64_t *red_target; Buffer **red_buf; int nred_pending;
    IrVal *red_val;
    /* a Scan / Sort body (run_scan): phase 1 collects each element's values into row[k] at
     * position `at`, phase 2 reads the scanned results res[k][at] through getitem */
    const LoopBody *body;
    int scan_phase;
    double *row[2], *res[2];
    int64_t at;
    const Buffer *cur;              /* the buffer being run: errors name its node */
    bool err;
} Interp;

/* An error of the buffer being run, once (the first stands): "FILE:LINE: IR interpreter:
 * buffer 'buf3' (node 'floor_divide'): REASON", the file and line of the graph node the buffer
 * holds the value of (ir_origins.c's producer, else the node that realized it). */
static void cur_err(Interp *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cur_err(Interp *it, const char *fmt, ...) {
    if (it->err) return;
    it->err = true;
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const Buffer *b = it->cur;
    const Node *n = b ? (b->producer ? b->producer : b->origin) : NULL;
    if (!b) { mi_err(it->ctx, NULL, 0, 0, "IR interpreter: %s", why); return; }
    mi_err(it->ctx, n ? it->m->graph->source : NULL, n ? n->src_line : 0, 0, "IR interpreter: buffer '%s'%s%s%s: %s", b->name,
           n ? " (node '" : "", n ? n->name : "", n ? "')" : "", why);
}

/* Integer floordiv / truncdiv / fmod (C's %) of the values of an integer dtype, as ATen's CPU
 * kernels compute them (BinaryOpsKernel.cpp: div_floor / div_trunc / fmod on integral types):
 * a zero divisor is their TORCH_CHECK(b != 0, "ZeroDivisionError"), an error naming the buffer;
 * x / -1 wraps (INT64_MIN / -1 is INT64_MIN, as the generated mi_zdiv_* helpers give). The
 * values go through int64 exactly, not through a double quotient. Example: floordiv(-7, 2) = -4,
 * fmod(-7, 2) = -1, floordiv(5, 0) -> "ZeroDivisionError". */
static double int_div(Interp *it, IrMathOp op, double x, double y) {
    int64_t a = tensor_float_to_int(x, DT_I64), b = tensor_float_to_int(y, DT_I64);
    if (b == 0) {
        cur_err(it, "ZeroDivisionError: an integer %s by zero (ATen's CPU kernels: TORCH_CHECK(b != 0, \"ZeroDivisionError\"))",
                op == IOP_FMOD ? "remainder or fmod" : "division");
        return 0;
    }
    if (b == -1) return op == IOP_FMOD ? 0 : (double)(int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    if (op == IOP_FMOD) return (double)r;
    if (op == IOP_FLOORDIV && r != 0 && (r < 0) != (b < 0)) q--;
    return (double)q;
}

/* a value of an integer dtype (held as a double) as int64, defined for any double: ATen's
 * x86-64 conversion (NaN or out of range: INT64_MIN), as the stored tensor would hold it */
static int64_t I64(double x) { return tensor_float_to_int(x, DT_I64); }

static int64_t ev(Interp *it, const Expr *e) {
    int64_t v = 0;
    if (sym_eval(it->ctx, e, it->bind, it->nbind, &v) < 0) it->err = true;
    return v;
}

static double *storage_of(Interp *it, const Buffer *b) { return it->store[ir_store_target(b)->id]; }

static IrVal push(Interp *it, double v) { it->vals[it->nvals] = v; return it->nvals++; }

static IrVal i_load(OpsHandler *h, Buffer *buf, Expr *index) {
    Interp *it = h->self;
    int64_t i = ev(it, index);
    const Buffer *t = ir_store_target(buf);
    if (i < 0 || i >= it->store_len[t->id]) { cur_err(it, "load of %s at %lld out of bounds", t->name, (long long)i); return push(it, 0); }
    return push(it, storage_of(it, buf)[i]);
}
static void store_at(Interp *it, Buffer *buf, int64_t i, double v) {
    const Buffer *t = ir_store_target(buf);
    if (i < 0 || i >= it->store_len[t->id]) { cur_err(it, "store to %s at %lld out of bounds", t->name, (long long)i); return; }
    DType dt = t->layout.dtype;
    if (dt == DT_F32) v = (float)v;
    else if (dtype_is_float8(dt)) v = mi_f8_to_f32(dt, mi_f32_to_f8(dt, (float)v));   /* 3 or 2 mantissa bits */
    else if (dtype_is_int(dt)) v = (double)tensor_float_to_int(v, dt);
    else if (dt == DT_BOOL) v = v != 0;
    it->store[t->id][i] = v;
}
static void i_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Interp *it = h->self;
    if (it->scan_phase == 1) { push(it, 0); return; }   /* the row is not scanned yet */
    store_at(it, buf, ev(it, index), it->vals[v]);
    push(it, 0);
}
static void i_store_atomic_add(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Interp *it = h->self;
    int64_t i = ev(it, index);
    const Buffer *t = ir_store_target(buf);
    double old = i >= 0 && i < it->store_len[t->id] ? it->store[t->id][i] : 0;
    store_at(it, buf, i, old + it->vals[v]);
    push(it, 0);
}
/* The value, wrapped (x < 0: x + size) and checked as the kernels do, bound to the body's
 * symbol for the indexes that follow. */
static Expr *i_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    Interp *it = h->self;
    push(it, 0);   /* one handle per op: reductions find their accumulator by position */
    int64_t raw = tensor_float_to_int(it->vals[x], DT_I64), v = raw, n = ev(it, size);
    if (wrap_neg && v < 0) v += n;
    if (v < 0 || v >= n) cur_err(it, "index %lld is out of bounds for dimension with size %lld", (long long)raw, (long long)n);
    if (v < 0 || v >= n) v = 0;   /* the rest of this element stays in bounds (its error is kept) */
    int k;
    for (k = it->nsymbind; k < it->nbind; k++)
        if (it->bind[k].name == sym->name) break;
    if (k == it->nbind) {
        if (it->nbind >= it->capbind) { it->err = true; return sym; }
        it->bind[it->nbind++].name = sym->name;
    }
    it->bind[k].value = v;
    return sym;
}
static IrVal i_constant(OpsHandler *h, double v, DType dt) { return push(h->self, v); }
static IrVal i_index_expr(OpsHandler *h, Expr *e, DType dt) { Interp *it = h->self; return push(it, (double)ev(it, e)); }
static IrVal i_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    Interp *it = h->self;
    double x = it->vals[v];
    if (dt == DT_F32) x = (float)x;
    else if (dtype_is_float8(dt)) x = mi_f8_to_f32(dt, mi_f32_to_f8(dt, (float)x));
    else if (dtype_is_int(dt) && (dtype_is_float(src) || dt == DT_I64)) x = (double)tensor_float_to_int(x, dt);
    else if (dtype_is_int(dt)) x = (double)tensor_float_to_int((double)(int32_t)I64(x), dt);   /* int -> narrower int wraps */
    else if (dt == DT_BOOL) x = x != 0;
    return push(it, x);
}
static IrVal i_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) {
    Interp *it = h->self;
    double x = it->vals[a[0]], y = ir_math_arity(op) > 1 ? it->vals[a[1]] : 0, z = ir_math_arity(op) > 2 ? it->vals[a[2]] : 0, r = 0;
    double w = ir_math_arity(op) > 3 ? it->vals[a[3]] : 0;
    if ((op == IOP_FLOORDIV || op == IOP_TRUNCDIV || op == IOP_FMOD) && dtype_is_int(dt)) return push(it, int_div(it, op, x, y));
    switch (op) {
    case IOP_NEG: r = -x; break;
    case IOP_EXP: r = exp(x); break;
    case IOP_LOG: r = log(x); break;
    case IOP_SQRT: r = sqrt(x); break;
    case IOP_RSQRT: r = dt == DT_F32 ? 1 / (double)(float)sqrt(x) : 1 / sqrt(x); break;   /* as the kernels: two roundings */
    case IOP_TANH: r = tanh(x); break;
    case IOP_SIGMOID: r = dt == DT_F32 ? 1 / (double)(float)(1 + (double)(float)exp(-x)) : 1 / (1 + exp(-x)); break;
    case IOP_RELU: r = x < 0 ? 0 : x; break;
    case IOP_ERF: r = erf(x); break;
    case IOP_SIN: r = sin(x); break;
    case IOP_COS: r = cos(x); break;
    case IOP_TAN: r = tan(x); break;
    case IOP_ASIN: r = asin(x); break;
    case IOP_ACOS: r = acos(x); break;
    case IOP_LGAMMA: r = lgamma(x); break;
    case IOP_ATAN: r = atan(x); break;
    case IOP_SINH: r = sinh(x); break;
    case IOP_COSH: r = cosh(x); break;
    case IOP_ASINH: r = asinh(x); break;
    case IOP_ACOSH: r = acosh(x); break;
    case IOP_ATANH: r = atanh(x); break;
    case IOP_EXP2: r = exp2(x); break;
    case IOP_LOG2: r = log2(x); break;
    case IOP_LOG10: r = log10(x); break;
    case IOP_ERFC: r = erfc(x); break;
    case IOP_ERFINV: r = sf_erfinv(x); break;
    case IOP_I0: case IOP_MODIFIED_BESSEL_I0: r = sf_i0(x); break;
    case IOP_I0E: r = sf_i0e(x); break;
    case IOP_I1: case IOP_MODIFIED_BESSEL_I1: r = sf_i1(x); break;
    case IOP_I1E: r = sf_i1e(x); break;
    case IOP_DIGAMMA: r = sf_digamma(x); break;
    case IOP_ERFCX: r = sf_erfcx(x); break;
    case IOP_NDTRI: r = sf_ndtri(x); break;
    case IOP_LOG_NDTR: r = sf_log_ndtr(x); break;
    case IOP_BESSEL_J0: r = sf_j0(x); break;
    case IOP_BESSEL_J1: r = sf_j1(x); break;
    case IOP_BESSEL_Y0: r = sf_y0(x); break;
    case IOP_BESSEL_Y1: r = sf_y1(x); break;
    case IOP_SPHERICAL_BESSEL_J0: r = sf_spherical_j0(x); break;
    case IOP_POLYGAMMA: r = sf_polygamma(x, y); break;
    case IOP_ZETA: r = sf_zeta(x, y); break;
    case IOP_TRUNC: r = trunc(x); break;
    case IOP_FREXP_MANTISSA: case IOP_FREXP_EXPONENT: {
        int e = 0;
        double mt = isfinite(x) ? (dt == DT_F32 ? (double)frexpf((float)x, &e) : frexp(x, &e)) : x;
        r = op == IOP_FREXP_MANTISSA ? mt : (double)e;
        break;
    }
    case IOP_SIGNBIT: r = signbit(x) != 0; break;
    case IOP_BITWISE_NOT: r = dt == DT_BOOL ? !x : (double)~I64(x); break;
    case IOP_ATAN2: r = atan2(x, y); break;
    case IOP_COPYSIGN: r = copysign(x, y); break;
    case IOP_HYPOT: r = hypot(x, y); break;
    case IOP_NEXTAFTER: r = dt == DT_F32 ? (double)nextafterf((float)x, (float)y) : nextafter(x, y); break;
    case IOP_BITWISE_AND: r = (double)(I64(x) & I64(y)); break;
    case IOP_BITWISE_OR: r = (double)(I64(x) | I64(y)); break;
    case IOP_BITWISE_XOR: r = (double)(I64(x) ^ I64(y)); break;
    case IOP_BITWISE_LEFT_SHIFT: r = (double)dtype_shift_left(dt, I64(x), I64(y)); break;
    case IOP_BITWISE_RIGHT_SHIFT: r = (double)dtype_shift_right(dt, I64(x), I64(y)); break;
    case IOP_FMAX: r = fmax(x, y); break;
    case IOP_FMIN: r = fmin(x, y); break;
    case IOP_TRUNCDIV: r = trunc(x / y); break;   /* an integer dtype: int_div */
    case IOP_ABS: r = fabs(x); break;
    case IOP_RECIPROCAL: r = 1 / x; break;
    case IOP_EXPM1: r = expm1(x); break;
    case IOP_LOG1P: r = log1p(x); break;
    case IOP_FLOOR: r = floor(x); break;
    case IOP_CEIL: r = ceil(x); break;
    case IOP_ROUND: r = nearbyint(x); break;
    case IOP_SIGN: r = (x > 0) - (x < 0); break;
    case IOP_LOGICAL_NOT: r = !x; break;
    case IOP_ADD: r = x + y; break;
    case IOP_SUB: r = x - y; break;
    case IOP_MUL: r = x * y; break;
    case IOP_TRUEDIV: r = x / y; break;
    case IOP_POW: r = pow(x, y); break;
    case IOP_MAXIMUM: r = isnan(x) || isnan(y) ? x + y : x > y ? x : y; break;   /* NaN propagates, as in torch */
    case IOP_MINIMUM: r = isnan(x) || isnan(y) ? x + y : x < y ? x : y; break;
    case IOP_EQ: r = x == y; break;
    case IOP_NE: r = x != y; break;
    case IOP_LT: r = x < y; break;
    case IOP_LE: r = x <= y; break;
    case IOP_GT: r = x > y; break;
    case IOP_GE: r = x >= y; break;
    case IOP_LOGICAL_AND: r = x && y; break;
    case IOP_LOGICAL_OR: r = x || y; break;
    case IOP_FLOORDIV: r = floor(x / y); break;
    case IOP_FMOD: r = fmod(x, y); break;
    case IOP_WHERE: r = x != 0 ? y : z; break;
    case IOP_FMA: r = dt == DT_F32 ? (double)fmaf((float)x, (float)y, (float)z) : fma(x, y, z); break;
    case IOP_RANDINT64:
        r = (double)mi_philox_randint64(fabs(x) < 9.2e18 ? I64(x) : 0, fabs(y) < 9.2e18 ? I64(y) : 0, I64(z), I64(w));
        break;
    case IOP_RAND: case IOP_RANDN:   /* the seed went through a double: statistically equal to the kernels' */
        r = mi_philox_rand(fabs(x) < 9.2e18 ? I64(x) : 0, fabs(y) < 9.2e18 ? I64(y) : 0, op == IOP_RANDN);
        break;
    default: break;
    }
    if (dt == DT_F32) r = (float)r;
    return push(it, r);
}
static IrVal i_reduction(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) {
    Interp *it = h->self;
    int id = it->nvals;
    Acc *a = &it->acc[id];
    double x = it->vals[v[0]];
    switch (rt) {
    case RED_SUM: a->v += x; break;
    case RED_PROD: a->v *= x; break;
    case RED_MAX: if (x > a->v || isnan(x)) a->v = x; break;
    case RED_MIN: if (x < a->v || isnan(x)) a->v = x; break;
    /* like torch: the first NaN is the arg-extremum */
    case RED_ARGMAX: if (!isnan(a->v) && (x > a->v || isnan(x))) { a->v = x; a->idx = a->count; } a->count++; break;
    case RED_ARGMIN: if (!isnan(a->v) && (x < a->v || isnan(x))) { a->v = x; a->idx = a->count; } a->count++; break;
    case RED_WELFORD: { a->n += 1; double d = x - a->v; a->v += d / a->n; a->m2 += d * (x - a->v); break; }
    case RED_WELFORD_COMBINE: {   /* ir.py welford_combine_fn; an empty pair stays empty (Triton's where) */
        double m2 = it->vals[v[1]], w = it->vals[v[2]], nw = a->n + w, d = x - a->v, f = nw == 0 ? 0 : w / nw;
        a->v += d * f;
        a->m2 += m2 + d * d * a->n * f;
        a->n = nw;
        break;
    }
    default: break;
    }
    return push(it, 0);
}
static IrVal i_getitem(OpsHandler *h, IrVal v, int k) {
    Interp *it = h->self;
    if (it->scan_phase && it->body->ops[v].kind == LOP_SCAN) return push(it, it->scan_phase == 2 ? it->res[k][it->at] : 0);
    it->vals[it->nvals] = -1 - (k * 100000 + v);
    return it->nvals++;
}
static IrVal i_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dtypes, const IrVal *v, int n) {
    Interp *it = h->self;
    for (int k = 0; it->scan_phase == 1 && k < n; k++) it->row[k][it->at] = it->vals[v[k]];
    return push(it, 0);
}
/* ops.bucketize: ATen's cus_lower_bound / cus_upper_bound over the run of len elements from
 * element `off` of b->buf (stride apart): the first position whose boundary is not < v (right:
 * not <= v); a NaN v lands past the end */
static IrVal i_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) {
    Interp *it = h->self;
    int64_t len = ev(it, b->len), st = ev(it, b->stride), o = I64(it->vals[off]), lo = 0, hi = len;
    const Buffer *t = ir_store_target(b->buf);
    const double *d = storage_of(it, b->buf), x = it->vals[v];
    if (o < 0 || o + (len - 1) * st >= it->store_len[t->id]) {
        cur_err(it, "bucketize of %s at %lld out of bounds", t->name, (long long)o);
        return push(it, 0);
    }
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        double m = d[o + mid * st];
        if (b->right ? !(m > x) : !(m >= x)) lo = mid + 1;
        else hi = mid;
    }
    return push(it, (double)lo);
}
static void i_store_red(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Interp *it = h->self;
    it->red_target[it->nred_pending] = ev(it, index);
    it->red_buf[it->nred_pending] = buf;
    it->red_val[it->nred_pending] = v;
    it->nred_pending++;
    push(it, 0);
}

static double red_final(Interp *it, const LoopBody *b, IrVal v) {
    const LoopOp *o = &b->ops[v];
    if (o->kind == LOP_GETITEM) {
        const Acc *a = &it->acc[o->args[0]];
        return o->item == 0 ? a->v : o->item == 1 ? a->m2 : a->n;
    }
    const Acc *a = &it->acc[v];
    return (o->rtype == RED_ARGMAX || o->rtype == RED_ARGMIN) ? (double)a->idx : a->v;
}

static void reset_acc(Interp *it, const LoopBody *b) {
    for (int i = 0; i < b->nops; i++) {
        Acc *a = &it->acc[i];
        memset(a, 0, sizeof *a);
        if (b->ops[i].kind != LOP_REDUCTION) continue;
        switch (b->ops[i].rtype) {
        case RED_PROD: a->v = 1; break;
        case RED_MAX: case RED_ARGMAX: a->v = -INFINITY; break;
        case RED_MIN: case RED_ARGMIN: a->v = INFINITY; break;
        default: break;
        }
    }
}

/* iterate vars [from, to) as a nest, calling fn at each point */
static void run_point(Interp *it, const LoopBody *b) {
    it->nvals = 0;
    loop_body_run(b, &it->h);
}

static int64_t range_of(Interp *it, const LoopBody *b, int v) { return ev(it, b->ranges[v]); }

static void nest(Interp *it, const LoopBody *b, int v, int to, bool red_phase) {
    if (it->err) return;
    if (v == to) {
        if (!red_phase && b->nred) {   /* a point: run the reduction nest, then store */
            reset_acc(it, b);
            it->nred_pending = 0;
            nest(it, b, b->npoint, b->nvars, true);
            for (int k = 0; k < it->nred_pending; k++)
                store_at(it, it->red_buf[k], it->red_target[k], red_final(it, b, it->red_val[k]));
            return;
        }
        int keep = it->nred_pending;
        run_point(it, b);
        if (red_phase && it->nred_pending > keep) {   /* stores are the same every step: keep one set */
            int per = it->nred_pending - keep;
            if (keep >= per) it->nred_pending = keep;
        }
        return;
    }
    int64_t n = range_of(it, b, v);
    for (int64_t i = 0; i < n && !it->err; i++) {
        it->bind[it->nsymbind + v].value = i;
        nest(it, b, v + 1, to, red_phase);
    }
}

/* A Scan / Sort body at one point of its pointwise vars (bound): every element of the row runs
 * the body to collect its values (stores skipped), the row is scanned, then every element runs
 * again and stores its result. */
static void scan_point(Interp *it, const LoopBody *b, const LoopOp *sop) {
    int sv = it->nsymbind + b->npoint;   /* the scan var's binding */
    int64_t len = range_of(it, b, b->npoint);
    if (it->err || len <= 0) return;
    for (int k = 0; k < 2; k++) { it->row[k] = mi_xcalloc((size_t)len, sizeof(double)); it->res[k] = mi_xcalloc((size_t)len, sizeof(double)); }
    for (int phase = 1; phase <= 2 && !it->err; phase++) {
        if (phase == 2) ir_scan_row(sop->sop, sop->sflags, sop->dtype, sop->nargs, it->row, len, it->res);
        it->scan_phase = phase;
        for (it->at = 0; it->at < len && !it->err; it->at++) {
            it->bind[sv].value = it->at;
            run_point(it, b);
        }
    }
    it->scan_phase = 0;
    for (int k = 0; k < 2; k++) { free(it->row[k]); free(it->res[k]); }
}
static void scan_nest(Interp *it, const LoopBody *b, const LoopOp *sop, int v) {
    if (it->err) return;
    if (v == b->npoint) { scan_point(it, b, sop); return; }
    int64_t n = range_of(it, b, v);
    for (int64_t i = 0; i < n && !it->err; i++) {
        it->bind[it->nsymbind + v].value = i;
        scan_nest(it, b, sop, v + 1);
    }
}

static int run_computed(Interp *it, Buffer *buf) {
    const LoopBody *b = buf->body;
    it->body = b;
    it->nbind = it->nsymbind + b->nvars;
    for (int v = 0; v < b->nvars; v++) { it->bind[it->nsymbind + v].name = b->vars[v]->name; it->bind[it->nsymbind + v].value = 0; }
    it->vals = mi_xcalloc(b->nops + 1, sizeof(double));
    it->acc = mi_xcalloc(b->nops + 1, sizeof(Acc));
    /* reduction stores are collected per step; nest() keeps one set but holds two while
     * comparing, so room for twice the body's ops */
    it->red_target = mi_xcalloc(2 * (b->nops + 1), sizeof(int64_t));
    it->red_buf = mi_xcalloc(2 * (b->nops + 1), sizeof(Buffer *));
    it->red_val = mi_xcalloc(2 * (b->nops + 1), sizeof(IrVal));
    const LoopOp *sop = NULL;
    for (int i = 0; i < b->nops; i++)
        if (b->ops[i].kind == LOP_SCAN) sop = &b->ops[i];
    if (sop) scan_nest(it, b, sop, 0);
    else nest(it, b, 0, b->npoint, false);
    free(it->vals); free(it->acc); free(it->red_target); free(it->red_buf); free(it->red_val);
    return it->err ? -1 : 0;
}

static double eget(Interp *it, const ExternArg *a, int64_t i, int64_t j, int64_t bt, int off) {
    int64_t ix = ev(it, a->view.offset);
    if (off) ix += bt * ev(it, a->view.stride[0]);
    ix += i * ev(it, a->view.stride[off]) + j * ev(it, a->view.stride[off + 1]);
    return it->store[a->buf->id][ix];
}

static int run_cond(Interp *it, Buffer *b);
static int run_fallback(Interp *it, Buffer *b);

static int run_extern(Interp *it, Buffer *b) {
    if (b->ext == EXT_MULTI_OUTPUT || b->ext == EXT_CONCAT) return 0;   /* its owner's call / its inputs stored it */
    if (b->ext == EXT_COND) return run_cond(it, b);
    if (b->ext == EXT_FALLBACK || b->ext == EXT_CONV) return run_fallback(it, b);   /* conv: its reference */
    if (b->ext == EXT_SDPA) return mi_err(it->ctx, NULL, 0, 0, "IR interpreter: attention is not supported");
    const ExternArg *A = b->ext == EXT_ADDMM ? &b->eargs[1] : &b->eargs[0], *B = b->ext == EXT_ADDMM ? &b->eargs[2] : &b->eargs[1];
    int off = b->ext == EXT_BMM;
    int64_t nb = off ? ev(it, b->layout.size[0]) : 1, M = ev(it, b->layout.size[off]), N = ev(it, b->layout.size[off + 1]);
    int64_t K = ev(it, A->view.size[off + 1]);
    for (int64_t bt = 0; bt < nb; bt++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += eget(it, A, i, k, bt, off) * eget(it, B, k, j, bt, off);
                if (b->ext == EXT_ADDMM) {
                    const ExternArg *bias = &b->eargs[0];
                    int64_t ix = ev(it, bias->view.offset);
                    if (bias->view.ndim == 1) ix += j * ev(it, bias->view.stride[0]);
                    else if (bias->view.ndim == 2) ix += i * ev(it, bias->view.stride[0]) + j * ev(it, bias->view.stride[1]);
                    s += it->store[bias->buf->id][ix];
                }
                int64_t o = (off ? bt * ev(it, b->layout.stride[0]) : 0) + i * ev(it, b->layout.stride[off]) + j * ev(it, b->layout.stride[off + 1]);
                /* the kernel's dtype: f32 and f16 / bf16 (accumulated in f32) round on store */
                DType dt = b->layout.dtype;
                it->store[b->id][o] = dt == DT_F64 ? s : dt == DT_F16 ? mi_f16_to_f32(mi_f32_to_f16((float)s))
                                    : dt == DT_BF16 ? mi_bf16_to_f32(mi_f32_to_bf16((float)s)) : (float)s;
            }
    return 0;
}

/* logical element `lin` of layout l (row-major order) -> storage index */
static int64_t lin_to_storage(Interp *it, const Layout *l, int64_t lin) {
    int64_t ix = ev(it, l->offset);
    for (int d = l->ndim - 1; d >= 0; d--) {
        int64_t n = ev(it, l->size[d]);
        if (n <= 0) return ix;
        ix += (lin % n) * ev(it, l->stride[d]);
        lin /= n;
    }
    return ix;
}
static int64_t numel(Interp *it, const Layout *l) {
    int64_t n = 1;
    for (int d = 0; d < l->ndim; d++) n *= ev(it, l->size[d]);
    return n;
}

/* ExternArg a of the current module as a new tensor of its dtype (its view's elements). */
static Tensor *earg_tensor(Interp *it, const ExternArg *a) {
    int64_t size[MI_MAX_DIMS];
    for (int d = 0; d < a->view.ndim; d++) size[d] = ev(it, a->view.size[d]);
    Tensor *t = tensor_new(it->ctx, a->buf->layout.dtype, a->view.ndim, size);
    if (!t) return NULL;
    int64_t n = numel(it, &a->view);
    for (int64_t i = 0; i < n; i++) tensor_set_f(t, i, it->store[a->buf->id][lin_to_storage(it, &a->view, i)]);
    return t;
}

/* higher_order.while_loop (while_loop_dense): cond_fn's module on the carried + additional
 * tensors; while its bool is true the body's module gives the next carried tensors, at most
 * ctx->limits.while_iterations times (then an error naming the limit, as the interpreter). */
static int run_while(Interp *it, Buffer *b, IValue *in, int nin, IValue **outs, int *nouts) {
    const IrCond *c = b->cond;
    int nc = c->ncarried, lim = it->ctx->limits.while_iterations;
    for (int iters = 0;; iters++) {
        IValue *r = NULL;
        int nr = 0;
        if (ir_interp_run(it->ctx, c->branch[0], in, nin, &r, &nr)) return -1;
        bool go = nr == 1 && r[0].kind == IV_TENSOR && tensor_numel(r[0].t) == 1 && tensor_get_f(r[0].t, 0) != 0;
        bool bad = nr != 1 || r[0].kind != IV_TENSOR || tensor_numel(r[0].t) != 1;
        interp_free_outputs(r, nr);
        if (bad) return mi_err(it->ctx, NULL, 0, 0, "IR interpreter: cond_fn '%s' must return a boolean scalar tensor", c->names[0]);
        if (!go) break;
        if (iters >= lim) {
            char hint[160];
            return mi_err(it->ctx, NULL, 0, 0, "IR interpreter: while_loop '%s': cond_fn '%s' still gives True after %d iterations of body_fn '%s' (%s)",
                          b->name, c->names[0], iters, c->names[1], mi_limit_hint("while_iterations", lim, hint, sizeof hint));
        }
        if (mi_interrupted(it->ctx)) return mi_err_interrupted(it->ctx, "in while_loop '%s' after %d iterations", b->name, iters);
        if (ir_interp_run(it->ctx, c->branch[1], in, nin, &r, &nr)) return -1;
        if (nr != nc) { interp_free_outputs(r, nr); return mi_err(it->ctx, NULL, 0, 0, "IR interpreter: body_fn gave %d results for %d carried", nr, nc); }
        for (int k = 0; k < nc; k++) { ivalue_clear(&in[k]); in[k] = r[k]; }
        free(r);
    }
    *outs = mi_xcalloc(nc + 1, sizeof **outs);
    for (int k = 0; k < nc; k++) ivalue_copy(&(*outs)[k], &in[k]);
    *nouts = nc;
    return 0;
}

/* higher_order.cond: the predicate picks a branch module, which runs on the operands (as
 * tensors, through a nested ir_interp_run); its results are stored into the cond's buffers.
 * higher_order.while_loop (is_while) runs its two modules in turn (run_while) on the same. */
static int run_cond(Interp *it, Buffer *b) {
    const IrCond *c = b->cond;
    int base = c->is_while ? 0 : 1;   /* a cond's eargs[0] is its predicate */
    int nin = b->neargs - base, nouts = 0, rc = 0;
    IValue *in = mi_xcalloc(nin + 1, sizeof *in), *outs = NULL;
    for (int k = 0; k < nin && !rc; k++) {
        Tensor *t = earg_tensor(it, &b->eargs[k + base]);
        if (!t) { rc = -1; break; }
        in[k].kind = IV_TENSOR;
        in[k].t = t;
    }
    if (!rc && c->is_while) rc = run_while(it, b, in, nin, &outs, &nouts);
    else if (!rc) {
        const ExternArg *p = &b->eargs[0];
        int64_t pi = ev(it, p->view.offset);
        if (it->err || pi < 0 || pi >= it->store_len[p->buf->id]) rc = mi_err(it->ctx, NULL, 0, 0, "IR interpreter: bad cond predicate");
        else rc = ir_interp_run(it->ctx, c->branch[it->store[p->buf->id][pi] != 0 ? 0 : 1], in, nin, &outs, &nouts);
    }
    for (int k = 0; !rc && k < c->nouts; k++) {
        Buffer *o = c->outs[k];
        if (k >= nouts || outs[k].kind != IV_TENSOR) { rc = mi_err(it->ctx, NULL, 0, 0, "IR interpreter: cond branch gave no result %d", k); break; }
        int64_t n = numel(it, &o->layout);
        for (int64_t i = 0; i < n; i++) it->store[o->id][lin_to_storage(it, &o->layout, i)] = tensor_get_f(outs[k].t, i);
    }
    interp_free_outputs(outs, nouts);
    interp_free_outputs(in, nin);
    return rc ? -1 : 0;
}

/* FallbackKernel: its arguments copied out of the double storage into tensors of their dtype,
 * the node's reference implementation run on them (core/ir/ir_fallback.c), the results stored back. */
static int run_fallback(Interp *it, Buffer *b) {
    const IrFallback *fb = b->fb;
    Tensor **args = mi_xcalloc((size_t)b->neargs + 1, sizeof *args), **res = mi_xcalloc((size_t)fb->nouts + 1, sizeof *res);
    int rc = 0;
    for (int k = 0; k < b->neargs && !rc; k++) {
        const ExternArg *a = &b->eargs[k];
        int64_t size[MI_MAX_DIMS];
        for (int d = 0; d < a->view.ndim; d++) size[d] = ev(it, a->view.size[d]);
        args[k] = tensor_new(it->ctx, a->buf->layout.dtype, a->view.ndim, size);
        if (!args[k]) { rc = -1; break; }
        int64_t n = numel(it, &a->view);
        for (int64_t i = 0; i < n; i++) tensor_set_f(args[k], i, storage_of(it, a->buf)[lin_to_storage(it, &a->view, i)]);
    }
    for (int k = 0; k < fb->nouts && !rc; k++) {
        const Buffer *o = fb->outs[k];
        if (!o) continue;
        int64_t size[MI_MAX_DIMS];
        for (int d = 0; d < o->layout.ndim; d++) size[d] = ev(it, o->layout.size[d]);
        if (!(res[k] = tensor_new(it->ctx, o->layout.dtype, o->layout.ndim, size))) rc = -1;
    }
    if (!rc && it->err) rc = -1;
    if (!rc) rc = ir_fallback_eval(it->ctx, it->m->graph, fb->node, args, b->neargs, res, fb->nouts, it->bind, it->nsymbind);
    for (int k = 0; k < fb->nouts && !rc; k++) {
        const Buffer *o = fb->outs[k];
        if (!o) continue;
        int64_t n = numel(it, &o->layout);
        for (int64_t i = 0; i < n; i++) it->store[o->id][lin_to_storage(it, &o->layout, i)] = tensor_get_f(res[k], i);
    }
    for (int k = 0; k < b->neargs; k++) tensor_unref(args[k]);
    for (int k = 0; k < fb->nouts; k++) tensor_unref(res[k]);
    free(args);
    free(res);
    return rc ? -1 : 0;
}

/* The graph's tensor inputs and their buffers: with in, each input's elements into its buffer's
 * storage (through the buffer's layout: a strided input lands where its strides say); without,
 * each input the module mutated (b->mutated, an index_put_ or copy_ into it) written back into
 * the caller's tensor. inputs[0..ninputs) are the placeholders in graph order, SymInts among
 * them. Example: x: f32[4, 2] with strides [1, 4] is read x[0,0], x[0,1], x[1,0], ... into
 * storage 0, 4, 1, ... */
static void copy_inputs(Interp *it, const Graph *g, IValue *inputs, int ninputs, bool in) {
    int pi = 0;
    for (int i = 0; i < g->n && pi < ninputs; i++) {
        const Node *p = g->nodes[i];
        if (p->kind != N_PLACEHOLDER) continue;
        IValue *v = &inputs[pi++];
        if (p->is_sym) continue;
        Buffer *b = ir_find_buffer(it->m, p->name);
        if (!b || (!in && !b->mutated)) continue;
        double *st = it->store[b->id];
        int64_t n = numel(it, &b->layout);
        for (int64_t k = 0; k < n; k++) {
            int64_t at = lin_to_storage(it, &b->layout, k);
            if (in) st[at] = tensor_get_f(v->t, k);
            else tensor_set_f(v->t, k, st[at]);
        }
    }
}

int ir_interp_run(MiCtx *ctx, IrModule *m, IValue *inputs, int ninputs, IValue **outs, int *nouts) {
    Interp it = {0};
    it.ctx = ctx;
    it.m = m;
    it.h = (OpsHandler){&it, i_load, i_store, i_constant, i_index_expr, i_to_dtype, i_math, i_reduction, i_getitem, i_store_red,
                        i_indirect, i_store_atomic_add, i_scan, i_bucketize};
    for (int i = 0; i < m->nbufs; i++)   /* one double per element: a complex one has two */
        if (dtype_is_complex(m->bufs[i]->layout.dtype))
            return mi_err(ctx, NULL, 0, 0, "IR interpreter: buffer '%s' is %s: complex values are not supported here (one double "
                          "per element); the interpreter and the compiled module run them", m->bufs[i]->name,
                          dtype_abbrev(m->bufs[i]->layout.dtype));
    it.capbind = m->nsyms + 2 * MI_MAX_DIMS + 64;
    it.bind = mi_xcalloc(it.capbind + 1, sizeof(SymBinding));
    /* bind symbols from SymInt inputs and input shapes */
    const Graph *g = m->graph;
    int pi = 0, ti = 0;
    for (int i = 0; i < g->n && pi < ninputs; i++) {
        const Node *p = g->nodes[i];
        if (p->kind != N_PLACEHOLDER) continue;
        IValue *v = &inputs[pi++];
        if (p->is_sym) {
            if (p->sym_val && p->sym_val->kind == EX_SYM) { it.bind[it.nsymbind].name = p->sym_val->name; it.bind[it.nsymbind++].value = v->i; }
            continue;
        }
        if (v->kind != IV_TENSOR || !v->t) { free(it.bind); return mi_err(ctx, NULL, 0, 0, "IR interpreter: input %d is not a tensor", pi - 1); }
        for (int d = 0; d < p->meta.ndim && d < v->t->ndim; d++)
            if (p->meta.size[d]->kind == EX_SYM) { it.bind[it.nsymbind].name = p->meta.size[d]->name; it.bind[it.nsymbind++].value = v->t->size[d]; }
        ti++;
    }
    it.nbind = it.nsymbind;
    it.store = mi_xcalloc(m->nbufs + 1, sizeof(double *));
    it.store_len = mi_xcalloc(m->nbufs + 1, sizeof(int64_t));
    int rc = 0;
    for (int i = 0; i < m->nbufs && !rc; i++) {
        Buffer *b = m->bufs[i];
        if (b->mutates) continue;
        int64_t n = ev(&it, layout_storage_size(ctx->sym, &b->layout));
        if (it.err || n < 0 || n > ((int64_t)1 << 28)) { rc = mi_err(ctx, NULL, 0, 0, "IR interpreter: bad size for %s", b->name); break; }
        it.store[i] = mi_xcalloc(n ? n : 1, sizeof(double));
        it.store_len[i] = n;
    }
    /* inputs */
    if (!rc) copy_inputs(&it, g, inputs, ninputs, true);
    /* tensor constants (self._tensor_constant0): inputs after the placeholders, named by the
     * attribute (ir_lower), valued by the session as the compiled module's caller does */
    for (int i = 0; i < g->n && !rc; i++) {
        const Node *c = g->nodes[i];
        if (!ir_is_tensor_constant(g, c)) continue;
        char name[128];
        snprintf(name, sizeof name, "%s", c->target);
        for (char *q = name; *q; q++) if (!isalnum((unsigned char)*q)) *q = '_';
        Buffer *b = ir_find_buffer(m, name);
        if (!b) continue;
        Tensor *t = mi_const_get(ctx, c->target);
        int64_t n = numel(&it, &b->layout);
        if (!t) rc = mi_err(ctx, g->source, c->src_line, 0, "IR interpreter: tensor constant '%s' has no value ('inputs DIR' reads DIR/%s.npy)", c->target, c->target);
        else if (tensor_numel(t) != n) rc = mi_err(ctx, g->source, c->src_line, 0, "IR interpreter: tensor constant '%s' has %lld elements, its buffer %lld",
                                                  c->target, (long long)tensor_numel(t), (long long)n);
        for (int64_t k = 0; !rc && k < n; k++) it.store[b->id][lin_to_storage(&it, &b->layout, k)] = tensor_get_f(t, k);
    }
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (int i = 0; i < m->nbufs && !rc; i++) {
            Buffer *b = m->bufs[i];
            bool epilogue = b->mutates && b->mutates->kind == BUF_INPUT && !b->inplace_alias;   /* copy_ into an input: last */
            if (!ir_is_op(b) || b->dead || (pass == 0) == epilogue) continue;   /* dead: no kernel runs it */
            it.cur = b;
            rc = b->kind == BUF_EXTERN ? run_extern(&it, b) : run_computed(&it, b);
            if (it.err) rc = -1;
        }
    if (!rc) {
        *nouts = m->noutputs;
        *outs = mi_xcalloc(m->noutputs ? m->noutputs : 1, sizeof(IValue));
        for (int j = 0; j < m->noutputs; j++) {
            Buffer *b = m->outputs[j];
            if (!b) continue;
            const Layout *ol = m->out_views && m->out_views[j] ? m->out_views[j] : &b->layout;   /* a view of b */
            int64_t size[MI_MAX_DIMS];
            for (int d = 0; d < ol->ndim; d++) size[d] = ev(&it, ol->size[d]);
            Tensor *t = tensor_new(ctx, ol->dtype, ol->ndim, size);
            if (!t) { rc = -1; break; }
            int64_t n = numel(&it, ol);
            for (int64_t k = 0; k < n; k++) tensor_set_f(t, k, it.store[b->id][lin_to_storage(&it, ol, k)]);
            (*outs)[j].kind = IV_TENSOR;
            (*outs)[j].t = t;
        }
        /* mutated inputs are written back */
        if (!rc) copy_inputs(&it, g, inputs, ninputs, false);
        if (rc) { interp_free_outputs(*outs, *nouts); *outs = NULL; }
    }
    for (int i = 0; i < m->nbufs; i++) free(it.store[i]);
    free(it.store);
    free(it.store_len);
    free(it.bind);
    (void)ti;
    return rc ? -1 : 0;
}
