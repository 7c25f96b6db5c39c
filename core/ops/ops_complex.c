/* ops_complex.c — complex64/complex128 in the op layer: the complex math of the elementwise ops
 * that allow complex operands (add, mul, div, exp, sqrt, abs, pow, eq, where, ...; the kernel
 * loop in ops_pointwise.c applies complex_pointwise_fn's element function when the computation
 * dtype is complex), and
 * the ops that build or take apart complex tensors: complex, polar, view_as_real,
 * view_as_complex, view.dtype (any bit reinterpretation, c64 <-> f32 among them), real, imag,
 * _conj and conj_physical. Values are computed in double complex
 * and rounded on store (a c64 result keeps float parts). */
#include "ops/ops_impl.h"

#include <complex.h>
#ifndef CMPLX      /* glibc defines it for gcc only; clang (the fuzz build) has the builtin */
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#include <math.h>
#include <string.h>

typedef double complex Cx;
typedef Cx (*CxFn)(const Cx *z, double alpha);

static Cx c_add(const Cx *z, double a) { return z[0] + a * z[1]; }
static Cx c_sub(const Cx *z, double a) { return z[0] - a * z[1]; }
static Cx c_rsub(const Cx *z, double a) { return z[1] - a * z[0]; }
static Cx c_mul(const Cx *z, double a) { (void)a; return z[0] * z[1]; }
static Cx c_div(const Cx *z, double a) { (void)a; return z[0] / z[1]; }
static Cx c_neg(const Cx *z, double a) { (void)a; return -z[0]; }
static Cx c_recip(const Cx *z, double a) { (void)a; return 1.0 / z[0]; }
static Cx c_exp(const Cx *z, double a) { (void)a; return cexp(z[0]); }
static Cx c_log(const Cx *z, double a) { (void)a; return clog(z[0]); }
static Cx c_sqrt(const Cx *z, double a) { (void)a; return csqrt(z[0]); }
static Cx c_rsqrt(const Cx *z, double a) { (void)a; return 1.0 / csqrt(z[0]); }
static Cx c_sin(const Cx *z, double a) { (void)a; return csin(z[0]); }
static Cx c_cos(const Cx *z, double a) { (void)a; return ccos(z[0]); }
static Cx c_tan(const Cx *z, double a) { (void)a; return ctan(z[0]); }
static Cx c_sinh(const Cx *z, double a) { (void)a; return csinh(z[0]); }
static Cx c_cosh(const Cx *z, double a) { (void)a; return ccosh(z[0]); }
static Cx c_tanh(const Cx *z, double a) { (void)a; return ctanh(z[0]); }
static Cx c_sigmoid(const Cx *z, double a) { (void)a; return 1.0 / (1.0 + cexp(-z[0])); }
static Cx c_pow(const Cx *z, double a) { (void)a; return z[1] == 0 ? 1.0 : cpow(z[0], z[1]); }
static Cx c_abs(const Cx *z, double a) { (void)a; return cabs(z[0]); }
static Cx c_eq(const Cx *z, double a) { (void)a; return z[0] == z[1]; }
static Cx c_ne(const Cx *z, double a) { (void)a; return z[0] != z[1]; }
static Cx c_where(const Cx *z, double a) { (void)a; return creal(z[0]) != 0 ? z[1] : z[2]; }
static Cx c_mfill(const Cx *z, double a) { (void)a; return creal(z[1]) != 0 ? z[2] : z[0]; }
static Cx c_second(const Cx *z, double a) { (void)a; return z[1]; }
static Cx c_isnan(const Cx *z, double a) { (void)a; return isnan(creal(z[0])) || isnan(cimag(z[0])); }
static Cx c_sgn(const Cx *z, double a) { (void)a; double m = cabs(z[0]); return m == 0 ? 0 : z[0] / m; }

/* op base name (no "aten.", no overload, no trailing '_' of in-place variants) -> function */
static const struct { const char *name; CxFn fn; } cx_ops[] = {
    {"add", c_add}, {"sub", c_sub}, {"rsub", c_rsub}, {"mul", c_mul}, {"div", c_div}, {"neg", c_neg},
    {"reciprocal", c_recip}, {"exp", c_exp}, {"log", c_log}, {"sqrt", c_sqrt}, {"rsqrt", c_rsqrt},
    {"sin", c_sin}, {"cos", c_cos}, {"tan", c_tan}, {"sinh", c_sinh}, {"cosh", c_cosh}, {"tanh", c_tanh},
    {"sigmoid", c_sigmoid}, {"pow", c_pow}, {"abs", c_abs}, {"eq", c_eq}, {"ne", c_ne}, {"where", c_where},
    {"masked_fill", c_mfill}, {"fill", c_second}, {"isnan", c_isnan}, {"sgn", c_sgn},
};

static CxFn cx_lookup(const char *op) {
    if (!op) return NULL;
    const char *p = strncmp(op, "aten.", 5) == 0 ? op + 5 : op;
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (n > 1 && p[n - 1] == '_') n--;
    for (size_t i = 0; i < sizeof cx_ops / sizeof cx_ops[0]; i++)
        if (strlen(cx_ops[i].name) == n && strncmp(cx_ops[i].name, p, n) == 0) return cx_ops[i].fn;
    return NULL;
}

bool complex_to_real(const char *op) { return cx_lookup(op) == c_abs; }

/* The element function of op, the kernel's loop (ops_pointwise.c) applies it. */
static MiCx cx_apply(CxFn fn, const MiCx *z, int nin, double alpha) {
    Cx w[3];
    for (int k = 0; k < nin && k < 3; k++) w[k] = CMPLX(z[k].re, z[k].im);
    Cx r = fn(w, alpha);
    return (MiCx){creal(r), cimag(r)};
}

#define CX_WRAP(f) static MiCx w_##f(const MiCx *z, int nin, double alpha) { return cx_apply(f, z, nin, alpha); }
CX_WRAP(c_add) CX_WRAP(c_sub) CX_WRAP(c_rsub) CX_WRAP(c_mul) CX_WRAP(c_div) CX_WRAP(c_neg) CX_WRAP(c_recip)
CX_WRAP(c_exp) CX_WRAP(c_log) CX_WRAP(c_sqrt) CX_WRAP(c_rsqrt) CX_WRAP(c_sin) CX_WRAP(c_cos) CX_WRAP(c_tan)
CX_WRAP(c_sinh) CX_WRAP(c_cosh) CX_WRAP(c_tanh) CX_WRAP(c_sigmoid) CX_WRAP(c_pow) CX_WRAP(c_abs) CX_WRAP(c_eq)
CX_WRAP(c_ne) CX_WRAP(c_where) CX_WRAP(c_mfill) CX_WRAP(c_second) CX_WRAP(c_isnan) CX_WRAP(c_sgn)

ComplexFn complex_pointwise_fn(const char *op) {
    static const struct { CxFn f; ComplexFn w; } wraps[] = {
        {c_add, w_c_add}, {c_sub, w_c_sub}, {c_rsub, w_c_rsub}, {c_mul, w_c_mul}, {c_div, w_c_div}, {c_neg, w_c_neg},
        {c_recip, w_c_recip}, {c_exp, w_c_exp}, {c_log, w_c_log}, {c_sqrt, w_c_sqrt}, {c_rsqrt, w_c_rsqrt},
        {c_sin, w_c_sin}, {c_cos, w_c_cos}, {c_tan, w_c_tan}, {c_sinh, w_c_sinh}, {c_cosh, w_c_cosh},
        {c_tanh, w_c_tanh}, {c_sigmoid, w_c_sigmoid}, {c_pow, w_c_pow}, {c_abs, w_c_abs}, {c_eq, w_c_eq},
        {c_ne, w_c_ne}, {c_where, w_c_where}, {c_mfill, w_c_mfill}, {c_second, w_c_second}, {c_isnan, w_c_isnan},
        {c_sgn, w_c_sgn},
    };
    CxFn f = cx_lookup(op);
    for (size_t i = 0; f && i < sizeof wraps / sizeof wraps[0]; i++)
        if (wraps[i].f == f) return wraps[i].w;
    return NULL;
}

/* ---- complex <-> real views ---- */

static DType real_of(DType t) { return t == DT_C128 ? DT_F64 : DT_F32; }
static DType complex_of(DType t) { return t == DT_F64 ? DT_C128 : DT_C64; }

/* view_as_real(c[..]) = r[.., 2]: strides doubled, a last dim of stride 1 (in real elements);
 * view_as_complex(r[.., 2]) the inverse, which needs a last dim of size 2 and stride 1 and even
 * strides elsewhere. real/imag: view_as_real(x)[..., 0 or 1] (x itself when x is real). */
enum { CV_AS_REAL, CV_AS_COMPLEX, CV_REAL, CV_IMAG };
typedef struct CvSpec { int kind; } CvSpec;

static int shape_cview(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const CvSpec *sp = sa->op->data;
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    SymCtx *S = sa->sym;
    bool cx = dtype_is_complex(x->dtype);
    switch (sp->kind) {
    case CV_AS_REAL:
        if (!cx) return sa_err(sa, "view_as_real is only supported for complex tensors, got %s", dtype_abbrev(x->dtype));
        meta_alloc(sa, out, real_of(x->dtype), x->ndim + 1, x->device);
        for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = sym_mul(S, x->stride[i], sym_int(S, 2)); }
        out->size[x->ndim] = sym_int(S, 2);
        out->stride[x->ndim] = sym_int(S, 1);
        out->offset = sym_mul(S, x->offset, sym_int(S, 2));
        return 0;
    case CV_AS_COMPLEX: {
        if (x->dtype != DT_F32 && x->dtype != DT_F64)
            return sa_err(sa, "view_as_complex is only supported for float and double tensors, got %s", dtype_abbrev(x->dtype));
        if (x->ndim == 0 || !ex_eq_int(x->size[x->ndim - 1], 2)) return sa_err(sa, "tensor must have a last dimension of size 2");
        if (!ex_eq_int(x->stride[x->ndim - 1], 1)) return sa_err(sa, "tensor must have a last dimension with stride 1");
        meta_alloc(sa, out, complex_of(x->dtype), x->ndim - 1, x->device);
        for (int i = 0; i + 1 < x->ndim; i++) {
            int64_t s;
            if (sym_is_int(x->stride[i], &s) && s % 2) return sa_err(sa, "tensor must have a stride divisible by 2 for all but last dimension");
            out->size[i] = x->size[i];
            out->stride[i] = sym_floordiv(S, x->stride[i], sym_int(S, 2));
        }
        out->offset = sym_floordiv(S, x->offset, sym_int(S, 2));
        return 0;
    }
    default:   /* real / imag */
        if (!cx) {
            if (sp->kind == CV_IMAG) return sa_err(sa, "imag is not implemented for tensors with non-complex dtypes");
            meta_copy(sa, out, x);
            return 0;
        }
        meta_alloc(sa, out, real_of(x->dtype), x->ndim, x->device);
        for (int i = 0; i < x->ndim; i++) { out->size[i] = x->size[i]; out->stride[i] = sym_mul(S, x->stride[i], sym_int(S, 2)); }
        out->offset = sym_add(S, sym_mul(S, x->offset, sym_int(S, 2)), sym_int(S, sp->kind == CV_IMAG));
        return 0;
    }
}

/* A view over base's storage with the meta's layout, in the meta's dtype (the element units of
 * m's strides). */
static int cview_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    TensorMeta m;
    int n;
    if (ev_shape(sa, &m, &n)) return -1;
    Tensor *base = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off;
    if (!base || ev_sizes(sa, &m, size, stride)) return -1;
    if (sym_eval(c->ctx, m.offset, c->syms, c->nsyms, &off)) { sa_err(sa, "cannot compute the view's offset"); return -1; }
    Tensor *t = tensor_view(base, m.ndim, size, stride, off);
    t->dtype = m.dtype;     /* (a float64 reference run's c128 base gives an f64 meta here) */
    ev_out_tensor(out, t);
    return 0;
}
static int cview_eval(const OpCall *c, IValue *out) { return ev_call(c, out, cview_body); }

/* ---- view.dtype: the same bytes as another dtype ---- */

/* ATen's view_dtype (TensorConversions.cpp): the same storage read as `dtype`. Equal element
 * sizes keep sizes, strides and offset; a smaller element (downsize, e.g. c64 -> f32, ratio 2)
 * multiplies the last size, the other strides and the offset by the ratio; a larger one
 * (upsize, f32 -> c64) divides them, and needs stride(-1) == 1, size(-1), the offset and the
 * other strides divisible by the ratio. Example: c64[6][1] as f32 -> f32[12][1];
 * f32[3, 4][4, 1] as c64 -> c64[3, 2][2, 1]. Neither conjugate nor negative views. */
static int shape_view_dtype(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    DType to = arg_dtype(sa_arg(sa, 1, "dtype"), DT_INVALID);
    if (to == DT_INVALID) return sa_err(sa, "view.dtype needs a dtype");
    if (to != x->dtype && (x->is_conj || x->is_neg))
        return sa_err(sa, "torch.Tensor.view is not supported for %s view tensors when converting to a different dtype",
                      x->is_conj ? "conjugate" : "negative");
    SymCtx *S = sa->sym;
    int64_t from_sz = (int64_t)dtype_size(x->dtype), to_sz = (int64_t)dtype_size(to), nd = x->ndim;
    meta_copy(sa, out, x);
    out->dtype = to;
    if (from_sz == to_sz) return 0;
    const char *fn = dtype_abbrev(x->dtype), *tn = dtype_abbrev(to);
    if (nd == 0) return sa_err(sa, "self.dim() cannot be 0 to view %s as %s (different element sizes)", fn, tn);
    if (!ex_eq_int(x->stride[nd - 1], 1))
        return sa_err(sa, "self.stride(-1) must be 1 to view %s as %s (different element sizes)", fn, tn);
    out->stride[nd - 1] = sym_int(S, 1);
    if (from_sz > to_sz) {     /* downsize */
        Expr *r = sym_int(S, from_sz / to_sz);
        for (int i = 0; i + 1 < nd; i++) out->stride[i] = sym_mul(S, x->stride[i], r);
        out->size[nd - 1] = sym_mul(S, x->size[nd - 1], r);
        out->offset = sym_mul(S, x->offset, r);
        return 0;
    }
    int64_t ratio = to_sz / from_sz, v;     /* upsize */
    Expr *r = sym_int(S, ratio);
    if (sym_is_int(x->size[nd - 1], &v) && v % ratio)
        return sa_err(sa, "self.size(-1) must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                      (long long)ratio, fn, tn, (long long)v);
    if (sym_is_int(x->offset, &v) && v % ratio)
        return sa_err(sa, "self.storage_offset() must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                      (long long)ratio, fn, tn, (long long)v);
    for (int i = 0; i + 1 < nd; i++) {
        if (sym_is_int(x->stride[i], &v) && v % ratio)
            return sa_err(sa, "self.stride(%d) must be divisible by %lld to view %s as %s (different element sizes), but got %lld",
                          i, (long long)ratio, fn, tn, (long long)v);
        out->stride[i] = sym_floordiv(S, x->stride[i], r);
    }
    out->size[nd - 1] = sym_floordiv(S, x->size[nd - 1], r);
    out->offset = sym_floordiv(S, x->offset, r);
    return 0;
}

/* The view over self's storage. A float64 reference run holds c128 / f64 where the graph says
 * c64 / f32: the view goes to the run's counterpart of dtype (c64 -> c128, f32 -> f64), which
 * keeps the pairing of complex and real parts; any other reinterpretation (f32 bits as i32)
 * has no float64 meaning and fails that run. */
static int view_dtype_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    DType to = arg_dtype(sa_arg(sa, 1, "dtype"), DT_INVALID);
    if (!x || to == DT_INVALID) return sa_err(sa, "view.dtype needs a tensor and a dtype");
    if (c->fp64 && (dtype_is_float(to) || dtype_is_complex(to))) {
        DType run = dtype_is_complex(to) ? DT_C128 : DT_F64;
        bool pair = run == x->dtype || (dtype_is_complex(run) ? x->dtype == DT_F64 : x->dtype == DT_C128);
        if (!pair) return sa_err(sa, "view.dtype reinterprets %s bits as %s: no float64 reference run", dtype_abbrev(x->dtype), dtype_abbrev(to));
        to = run;
    } else if (c->fp64 && x->dtype != to && (dtype_is_float(x->dtype) || dtype_is_complex(x->dtype)))
        return sa_err(sa, "view.dtype reinterprets %s bits as %s: no float64 reference run", dtype_abbrev(x->dtype), dtype_abbrev(to));
    int64_t from_sz = (int64_t)dtype_size(x->dtype), to_sz = (int64_t)dtype_size(to), nd = x->ndim;
    int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off = x->offset;
    for (int i = 0; i < nd; i++) { size[i] = x->size[i]; stride[i] = x->stride[i]; }
    if (from_sz != to_sz) {
        if (nd == 0 || (x->stride[nd - 1] != 1 && x->size[nd - 1] > 1))
            return sa_err(sa, "view.dtype: %s as %s needs a last dim of stride 1", dtype_abbrev(x->dtype), dtype_abbrev(to));
        stride[nd - 1] = 1;
        if (from_sz > to_sz) {
            int64_t r = from_sz / to_sz;
            for (int i = 0; i + 1 < nd; i++) stride[i] *= r;
            size[nd - 1] *= r;
            off *= r;
        } else {
            int64_t r = to_sz / from_sz;
            bool ok = size[nd - 1] % r == 0 && off % r == 0;
            for (int i = 0; i + 1 < nd; i++) { ok = ok && stride[i] % r == 0; stride[i] /= r; }
            if (!ok) return sa_err(sa, "view.dtype: %s as %s: sizes, strides or offset not divisible by %lld",
                                   dtype_abbrev(x->dtype), dtype_abbrev(to), (long long)r);
            size[nd - 1] /= r;
            off /= r;
        }
    }
    Tensor *t = tensor_view(x, (int)nd, size, stride, off);
    t->dtype = to;
    ev_out_tensor(out, t);
    return 0;
}
static int view_dtype_eval(const OpCall *c, IValue *out) { return ev_call(c, out, view_dtype_body); }

/* ---- complex(real, imag), polar(abs, angle), conj ---- */

enum { CB_COMPLEX, CB_POLAR, CB_CONJ };
typedef struct CbSpec { int kind; } CbSpec;

static int shape_cbuild(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const CbSpec *sp = sa->op->data;
    TensorMeta *a, *b = NULL;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, sp->kind == CB_POLAR ? "abs" : sp->kind == CB_CONJ ? "self" : "real"), "self", &a)) return -1;
    if (sp->kind == CB_CONJ) { meta_like(sa, out, a, a->dtype); return 0; }
    if (sa_tensor(sa, sa_arg(sa, 1, sp->kind == CB_POLAR ? "angle" : "imag"), "imag", &b)) return -1;
    if (a->dtype != b->dtype) return sa_err(sa, "expected both inputs of the same dtype, got %s and %s", dtype_abbrev(a->dtype), dtype_abbrev(b->dtype));
    if (a->dtype != DT_F32 && a->dtype != DT_F64) return sa_err(sa, "expected float or double inputs, got %s", dtype_abbrev(a->dtype));
    TensorMeta *ins[2] = {a, b};
    Expr *size[MI_MAX_DIMS];
    int nd;
    if (sa_broadcast(sa, ins, 2, size, &nd)) return -1;
    meta_alloc(sa, out, complex_of(a->dtype), nd, a->device);
    for (int i = 0; i < nd; i++) out->size[i] = size[i];
    meta_elementwise_strides(sa, out, ins, 2);
    return 0;
}

static int cbuild_fill(ShapeArgs *sa, Tensor *o) {
    const CbSpec *sp = sa->call->op->data;
    Tensor *a = ev_tensor(sa_arg(sa, 0, NULL)), *b = sp->kind == CB_CONJ ? NULL : ev_tensor(sa_arg(sa, 1, NULL));
    int64_t total = tensor_numel(o);
    int64_t idx[MI_MAX_DIMS] = {0};
    for (int64_t e = 0; e < total; e++) {
        int64_t rem = e;
        for (int d = o->ndim - 1; d >= 0; d--) { idx[d] = rem % o->size[d]; rem /= o->size[d]; }
        int64_t pa = a->offset, pb = b ? b->offset : 0, po = o->offset;
        for (int d = 0; d < o->ndim; d++) {
            int ja = d - (o->ndim - a->ndim), jb = b ? d - (o->ndim - b->ndim) : -1;
            if (ja >= 0 && a->size[ja] > 1) pa += idx[d] * a->stride[ja];
            if (jb >= 0 && b->size[jb] > 1) pb += idx[d] * b->stride[jb];
            po += idx[d] * o->stride[d];
        }
        double re, im;
        tensor_load_c(a, pa, &re, &im);
        if (sp->kind == CB_CONJ) { tensor_store_c(o, po, re, -im); continue; }
        double y = tensor_load_f(b, pb);
        if (sp->kind == CB_POLAR) tensor_store_c(o, po, re * cos(y), re * sin(y));
        else tensor_store_c(o, po, re, y);
    }
    return 0;
}
static int cbuild_eval(const OpCall *c, IValue *out) { return ev_run(c, out, cbuild_fill); }

static const CvSpec cv_real_v = {CV_AS_REAL}, cv_cplx_v = {CV_AS_COMPLEX}, cv_re = {CV_REAL}, cv_im = {CV_IMAG};
static const CbSpec cb_complex = {CB_COMPLEX}, cb_polar = {CB_POLAR}, cb_conj = {CB_CONJ};

#define CV(name, spec, doc) {name, OPF_VIEW, op_infer_generic, cview_eval, doc, shape_cview, &spec}
#define CB(name, spec, doc) {name, OPF_POINTWISE, op_infer_generic, cbuild_eval, doc, shape_cbuild, &spec}

const OpDef ops_complex_table[] = {
    CV("aten.view_as_real.default", cv_real_v, "complex [..] as real [.., 2] (a view)"),
    CV("aten.view_as_complex.default", cv_cplx_v, "real [.., 2] as complex [..] (a view)"),
    CV("aten.real.default", cv_re, "real part (a view; self for real tensors)"),
    CV("aten.imag.default", cv_im, "imaginary part (a view)"),
    {"aten.view.dtype", OPF_VIEW, op_infer_generic, view_dtype_eval, "the same bytes read as another dtype (a view; c64 <-> f32 pairs)",
     shape_view_dtype, NULL},
    CB("aten.complex.default", cb_complex, "real + imag * 1j"),
    CB("aten.polar.default", cb_polar, "abs * (cos(angle) + sin(angle) * 1j)"),
    CB("aten._conj.default", cb_conj, "complex conjugate (materialized)"),
    CB("aten._conj_physical.default", cb_conj, "complex conjugate"),
    CB("aten.conj_physical.default", cb_conj, "complex conjugate"),
};
const int ops_complex_count = sizeof ops_complex_table / sizeof ops_complex_table[0];
