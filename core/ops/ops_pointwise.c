/* ops_pointwise.c — elementwise ops (add, mul, exp, where, comparisons, ...): one spec per op
 * (arity, dtype rule, float and int scalar functions) and one shared shape function and one
 * shared kernel that broadcast the operands, follow PyTorch's type promotion and output layout,
 * compute in double (floats) or int64 (ints) and store in the result dtype. In-place variants
 * (add_, mul_, ...) compute the same and write into their first argument. */
#include "ops/ops_impl.h"
#include "ops/special.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct PwParams { double alpha; int64_t ialpha; int round; int gelu_tanh; double lo, hi; bool has_lo, has_hi;
                         bool f32; /* computing in f32: composite ops round each step, as torch's kernels do */ } PwParams;
/* one step of a composite op: rounded to float when the op computes in f32 */
#define R(v) (p->f32 ? (double)(float)(v) : (double)(v))
typedef double (*PwF)(const double *x, const PwParams *p);
typedef int64_t (*PwI)(const int64_t *x, const PwParams *p);

enum { R_PROMOTE, R_FLOAT, R_BOOL, R_SAME, R_WHERE, R_LOGICAL };
enum { P_ALPHA = 1, P_ROUND = 2, P_GELU = 4, P_CLAMP = 8, P_HARDTANH = 16, P_SOFTPLUS = 32, P_ELU = 64, P_SLOPE = 128,
       P_GSL = 256 /* computed with GSL: refused (naming it) when configure did not find it */,
       P_ZDIV = 512 /* an integer division: a zero divisor raises ZeroDivisionError, as ATen's CPU kernels */ };

typedef struct PwSpec {
    int nin, rule, params;
    PwF f;
    PwI fi;             /* NULL: ints are computed through f */
    const char *names[3];
} PwSpec;

/* ---- scalar functions ---- */
#define F1(name, expr) static double name(const double *x, const PwParams *p) { (void)p; double a = x[0]; return (expr); }
#define F2(name, expr) static double name(const double *x, const PwParams *p) { (void)p; double a = x[0], b = x[1]; return (expr); }
#define I1(name, expr) static int64_t name(const int64_t *x, const PwParams *p) { (void)p; int64_t a = x[0]; return (expr); }
#define I2(name, expr) static int64_t name(const int64_t *x, const PwParams *p) { (void)p; int64_t a = x[0], b = x[1]; return (expr); }

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
/* integer division by 0 is refused before (P_ZDIV); by -1 it negates, wrapping (INT64_MIN / -1
 * is INT64_MIN, as the compiled module's mi_zdiv_floor gives: C's a / -1 would trap there) */
static int64_t idiv_floor(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
static int64_t imod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static double fmod_py(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static int64_t ipow(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    int64_t r = 1;
    while (b) { if (b & 1) r = wrap_mul(r, a); a = wrap_mul(a, a); b >>= 1; }
    return r;
}
static double fmax_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double fmin_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

static double f_add(const double *x, const PwParams *p) { return x[0] + p->alpha * x[1]; }
static int64_t i_add(const int64_t *x, const PwParams *p) { return wrap_add(x[0], wrap_mul(p->ialpha, x[1])); }
static double f_sub(const double *x, const PwParams *p) { return x[0] - p->alpha * x[1]; }
static double f_rsub(const double *x, const PwParams *p) { return x[1] - p->alpha * x[0]; }
static int64_t i_rsub(const int64_t *x, const PwParams *p) { return wrap_add(x[1], -wrap_mul(p->ialpha, x[0])); }
static int64_t i_sub(const int64_t *x, const PwParams *p) { return wrap_add(x[0], -wrap_mul(p->ialpha, x[1])); }
static double f_div(const double *x, const PwParams *p) {
    double q = x[0] / x[1];
    if (p->round == 1) return trunc(q);
    if (p->round == 2) return floor(q);
    return q;
}
static int64_t i_div(const int64_t *x, const PwParams *p) {   /* only reached with a rounding mode */
    if (x[1] == 0) return 0;
    if (x[1] == -1) return (int64_t)(0 - (uint64_t)x[0]);
    return p->round == 2 ? idiv_floor(x[0], x[1]) : x[0] / x[1];
}
/* prims.div (torch/_prims/__init__.py _div_aten): ints and bools truncate (div with
 * rounding_mode "trunc"), floats divide truly. Example: prims.div(-7, 2) = -3. */
static double f_pdiv(const double *x, const PwParams *p) { return x[0] / x[1]; }
static int64_t i_pdiv(const int64_t *x, const PwParams *p) {
    if (x[1] == -1) return (int64_t)(0 - (uint64_t)x[0]);
    return x[1] == 0 ? 0 : x[0] / x[1];
}
/* the composite ops below follow the step order of PyTorch's CPU kernels (GeluKernel,
 * silu/mish/softplus/hardswish in Activation.cpp), each step in the compute dtype */
static double f_gelu(const double *x, const PwParams *p) {
    double a = x[0];
    if (p->gelu_tanh) {
        double cube = R(R(a * a) * a), inner = R(sqrt(2 / M_PI) * R(a + R(0.044715 * cube)));
        return R(a * 0.5) * R(1 + R(tanh(inner)));
    }
    return R(a * 0.5) * R(1 + R(erf(R(a * M_SQRT1_2))));
}
static double f_clamp(const double *x, const PwParams *p) {
    double a = x[0];
    if (isnan(a)) return a;
    if (p->has_lo && a < p->lo) a = p->lo;
    if (p->has_hi && a > p->hi) a = p->hi;
    return a;
}
static int64_t i_clamp(const int64_t *x, const PwParams *p) {
    int64_t a = x[0];
    if (p->has_lo && a < (int64_t)p->lo) a = (int64_t)p->lo;
    if (p->has_hi && a > (int64_t)p->hi) a = (int64_t)p->hi;
    return a;
}

F2(f_mul, a * b)            I2(i_mul, wrap_mul(a, b))
F1(f_neg, -a)               I1(i_neg, (int64_t)(0 - (uint64_t)a))
F1(f_abs, fabs(a))          I1(i_abs, a < 0 ? (int64_t)(0 - (uint64_t)a) : a)
F1(f_exp, exp(a))           F1(f_log, log(a))
F1(f_sqrt, sqrt(a))         F1(f_rsqrt, 1 / R(sqrt(a)))   /* torch: 1 / sqrt(x), two roundings in f32 */
F1(f_tanh, tanh(a))         F1(f_sigmoid, 1 / R(1 + R(exp(-a))))
F1(f_relu, a < 0 ? 0 : a)   /* nan and -0 pass through, as clamp_min(x, 0) gives them */  I1(i_relu, a > 0 ? a : 0)
F1(f_erf, erf(a))           F1(f_erfc, erfc(a))
F1(f_sin, sin(a))           F1(f_cos, cos(a))           F1(f_tan, tan(a))
F1(f_asin, asin(a))         F1(f_acos, acos(a))         F1(f_atan, atan(a))
F1(f_sinh, sinh(a))         F1(f_cosh, cosh(a))
F1(f_log1p, log1p(a))       F1(f_expm1, expm1(a))       F1(f_log2, log2(a))
F1(f_log10, log10(a))       F1(f_exp2, exp2(a))         F1(f_recip, 1 / a)
F1(f_floor, floor(a))       F1(f_ceil, ceil(a))         F1(f_round, nearbyint(a))
F1(f_trunc, trunc(a))       I1(i_ident, a)
F1(f_sign, (a > 0) - (a < 0))   /* torch's kernel: sign(nan) = 0 */  I1(i_sign, a > 0 ? 1 : a < 0 ? -1 : 0)
static double f_silu(const double *x, const PwParams *p) { return x[0] / R(1 + R(exp(-x[0]))); }
static double f_hardsigmoid(const double *x, const PwParams *p) { return fmin_nan(fmax_nan(R(x[0] + 3), 0), 6) / 6; }
static double f_hardswish(const double *x, const PwParams *p) { return R(x[0] * fmin_nan(fmax_nan(R(x[0] + 3), 0), 6)) / 6; }
static double f_mish(const double *x, const PwParams *p) { return x[0] * R(tanh(R(log1p(R(exp(x[0])))))); }
static double f_softplus(const double *x, const PwParams *p) {   /* beta in alpha, threshold in hi */
    double bx = R(x[0] * p->alpha);
    return bx > p->hi ? x[0] : R(log1p(R(exp(bx)))) / p->alpha;
}
/* elu(x, alpha, scale, input_scale): alpha in alpha, scale in hi, input_scale in lo */
static double f_elu(const double *x, const PwParams *p) { return x[0] > 0 ? p->hi * x[0] : R(expm1(R(x[0] * p->lo))) * R(p->alpha * p->hi); }
F1(f_lgamma, lgamma(a))
F1(f_isnan, isnan(a) ? 1 : 0)   F1(f_isinf, isinf(a) ? 1 : 0)
F1(f_lnot, a == 0)          I1(i_lnot, a == 0)
I1(i_bnot, ~a)              I1(i_bnot_bool, !a)
F2(f_pow, pow(a, b))        I2(i_pow, ipow(a, b))
F2(f_max, fmax_nan(a, b))   I2(i_max, a > b ? a : b)
F2(f_min, fmin_nan(a, b))   I2(i_min, a < b ? a : b)
F2(f_rem, fmod_py(a, b))    I2(i_rem, imod(a, b))
F2(f_fmod, fmod(a, b))      I2(i_fmod, b == 0 || b == -1 ? 0 : a % b)
F2(f_fdiv, floor(a / b))    I2(i_fdiv, idiv_floor(a, b))
F2(f_atan2, atan2(a, b))
F2(f_eq, a == b)            I2(i_eq, a == b)
F2(f_ne, a != b)            I2(i_ne, a != b)
F2(f_lt, a < b)             I2(i_lt, a < b)
F2(f_le, a <= b)            I2(i_le, a <= b)
F2(f_gt, a > b)             I2(i_gt, a > b)
F2(f_ge, a >= b)            I2(i_ge, a >= b)
F2(f_land, (a != 0) && (b != 0))   F2(f_lor, (a != 0) || (b != 0))   F2(f_lxor, (a != 0) != (b != 0))
I2(i_band, a & b)           I2(i_bor, a | b)            I2(i_bxor, a ^ b)
/* ATen's calc_gcd (aten/src/ATen/native/Math.h): Euclid on |a|, |b| (|INT64_MIN| wraps as in
 * C++); gcd(0, 0) = 0. lcm (BinaryMiscOpsKernels.cpp lcm_kernel): g == 0 ? 0 : |a / g * b|.
 * Example: gcd(-12, 18) = 6, lcm(-4, 6) = 12. */
static int64_t calc_gcd(int64_t a_in, int64_t b_in) {
    int64_t a = a_in < 0 ? (int64_t)(0 - (uint64_t)a_in) : a_in, b = b_in < 0 ? (int64_t)(0 - (uint64_t)b_in) : b_in;
    while (a != 0) {
        int64_t c = a;
        a = b % a;
        b = c;
    }
    return b;
}
static int64_t calc_lcm(int64_t a, int64_t b) {
    int64_t g = calc_gcd(a, b);
    if (g == 0) return 0;
    int64_t r = (int64_t)((uint64_t)(a / g) * (uint64_t)b);
    return r < 0 ? (int64_t)(0 - (uint64_t)r) : r;
}
I2(i_gcd, calc_gcd(a, b))   I2(i_lcm, calc_lcm(a, b))
/* the shifts in int64; the store wraps to the result dtype, which gives ATen's narrower results too */
I2(i_shl, dtype_shift_left(DT_I64, a, b))   I2(i_shr, dtype_shift_right(DT_I64, a, b))
static double f_leaky(const double *x, const PwParams *p) { return x[0] > 0 ? x[0] : x[0] * p->alpha; }
F1(f_acosh, acosh(a))       F1(f_asinh, asinh(a))       F1(f_atanh, atanh(a))
F2(f_copysign, copysign(a, b))   F2(f_hypot, hypot(a, b))
/* nextafter in the compute dtype (float32 steps by float32 ulps) */
static double f_nextafter(const double *x, const PwParams *p) { return p->f32 ? (double)nextafterf((float)x[0], (float)x[1]) : nextafter(x[0], x[1]); }
F1(f_signbit, signbit(a) ? 1 : 0)   I1(i_signbit, a < 0)
/* special functions (core/ops/special.c) */
F1(f_digamma, sf_digamma(a))   F2(f_polygamma, sf_polygamma(a, b))   F2(f_zeta, sf_zeta(a, b))
F1(f_erfinv, sf_erfinv(a))     F1(f_erfcx, sf_erfcx(a))   F1(f_ndtri, sf_ndtri(a))   F1(f_log_ndtr, sf_log_ndtr(a))
F1(f_i0, sf_i0(a)) F1(f_i0e, sf_i0e(a)) F1(f_i1, sf_i1(a)) F1(f_i1e, sf_i1e(a))
F1(f_k0, sf_k0(a)) F1(f_k0e, sf_k0e(a)) F1(f_k1, sf_k1(a)) F1(f_k1e, sf_k1e(a))
F1(f_j0, sf_j0(a)) F1(f_j1, sf_j1(a)) F1(f_y0, sf_y0(a)) F1(f_y1, sf_y1(a))
F1(f_airy, sf_airy_ai(a))      F1(f_sph_j0, sf_spherical_j0(a))
F2(f_igamma, sf_igamma(a, b))  F2(f_igammac, sf_igammac(a, b))
F2(f_cheb_t, sf_chebyshev_t(a, b, p->f32)) F2(f_cheb_u, sf_chebyshev_u(a, b, p->f32)) F2(f_cheb_v, sf_chebyshev_v(a, b, p->f32)) F2(f_cheb_w, sf_chebyshev_w(a, b, p->f32))
F2(f_scheb_t, sf_shifted_chebyshev_t(a, b, p->f32)) F2(f_scheb_u, sf_shifted_chebyshev_u(a, b, p->f32))
F2(f_scheb_v, sf_shifted_chebyshev_v(a, b, p->f32)) F2(f_scheb_w, sf_shifted_chebyshev_w(a, b, p->f32))
F2(f_herm_h, sf_hermite_h(a, b, p->f32)) F2(f_herm_he, sf_hermite_he(a, b, p->f32)) F2(f_lag_l, sf_laguerre_l(a, b, p->f32)) F2(f_leg_p, sf_legendre_p(a, b, p->f32))
static double f_where(const double *x, const PwParams *p) { (void)p; return x[0] != 0 ? x[1] : x[2]; }
static int64_t i_where(const int64_t *x, const PwParams *p) { (void)p; return x[0] != 0 ? x[1] : x[2]; }
static double f_fma(const double *x, const PwParams *p) { (void)p; return fma(x[0], x[1], x[2]); }
static int64_t i_fma(const int64_t *x, const PwParams *p) { (void)p; return x[0] * x[1] + x[2]; }
static double f_mfill(const double *x, const PwParams *p) { (void)p; return x[1] != 0 ? x[2] : x[0]; }
static int64_t i_mfill(const int64_t *x, const PwParams *p) { (void)p; return x[1] != 0 ? x[2] : x[0]; }
static double f_second(const double *x, const PwParams *p) { (void)p; return x[1]; }
static int64_t i_second(const int64_t *x, const PwParams *p) { (void)p; return x[1]; }

/* ---- specs ---- */
#define S1 {"self"}
#define S2 {"self", "other"}
static const PwSpec
    sp_add = {2, R_PROMOTE, P_ALPHA, f_add, i_add, S2}, sp_sub = {2, R_PROMOTE, P_ALPHA, f_sub, i_sub, S2},
    sp_rsub = {2, R_PROMOTE, P_ALPHA, f_rsub, i_rsub, S2},
    sp_mul = {2, R_PROMOTE, 0, f_mul, i_mul, S2}, sp_div = {2, R_FLOAT, 0, f_div, NULL, S2},
    sp_div_mode = {2, R_PROMOTE, P_ROUND | P_ZDIV, f_div, i_div, S2},
    sp_neg = {1, R_PROMOTE, 0, f_neg, i_neg, S1}, sp_abs = {1, R_PROMOTE, 0, f_abs, i_abs, S1},
    sp_exp = {1, R_FLOAT, 0, f_exp, NULL, S1}, sp_log = {1, R_FLOAT, 0, f_log, NULL, S1},
    sp_sqrt = {1, R_FLOAT, 0, f_sqrt, NULL, S1}, sp_rsqrt = {1, R_FLOAT, 0, f_rsqrt, NULL, S1},
    sp_tanh = {1, R_FLOAT, 0, f_tanh, NULL, S1}, sp_sigmoid = {1, R_FLOAT, 0, f_sigmoid, NULL, S1},
    sp_relu = {1, R_PROMOTE, 0, f_relu, i_relu, S1}, sp_gelu = {1, R_FLOAT, P_GELU, f_gelu, NULL, S1},
    sp_erf = {1, R_FLOAT, 0, f_erf, NULL, S1}, sp_erfc = {1, R_FLOAT, 0, f_erfc, NULL, S1},
    sp_sin = {1, R_FLOAT, 0, f_sin, NULL, S1}, sp_cos = {1, R_FLOAT, 0, f_cos, NULL, S1},
    sp_tan = {1, R_FLOAT, 0, f_tan, NULL, S1}, sp_asin = {1, R_FLOAT, 0, f_asin, NULL, S1},
    sp_acos = {1, R_FLOAT, 0, f_acos, NULL, S1}, sp_atan = {1, R_FLOAT, 0, f_atan, NULL, S1},
    sp_sinh = {1, R_FLOAT, 0, f_sinh, NULL, S1}, sp_cosh = {1, R_FLOAT, 0, f_cosh, NULL, S1},
    sp_log1p = {1, R_FLOAT, 0, f_log1p, NULL, S1}, sp_expm1 = {1, R_FLOAT, 0, f_expm1, NULL, S1},
    sp_log2 = {1, R_FLOAT, 0, f_log2, NULL, S1}, sp_log10 = {1, R_FLOAT, 0, f_log10, NULL, S1},
    sp_exp2 = {1, R_FLOAT, 0, f_exp2, NULL, S1}, sp_recip = {1, R_FLOAT, 0, f_recip, NULL, S1},
    sp_floor = {1, R_PROMOTE, 0, f_floor, i_ident, S1}, sp_ceil = {1, R_PROMOTE, 0, f_ceil, i_ident, S1},
    sp_round = {1, R_PROMOTE, 0, f_round, i_ident, S1}, sp_trunc = {1, R_PROMOTE, 0, f_trunc, i_ident, S1},
    sp_sign = {1, R_PROMOTE, 0, f_sign, i_sign, S1}, sp_silu = {1, R_FLOAT, 0, f_silu, NULL, S1},
    sp_lgamma = {1, R_FLOAT, 0, f_lgamma, NULL, S1},
    sp_isnan = {1, R_LOGICAL, 0, f_isnan, NULL, S1}, sp_isinf = {1, R_LOGICAL, 0, f_isinf, NULL, S1},
    sp_lnot = {1, R_LOGICAL, 0, f_lnot, i_lnot, S1}, sp_bnot = {1, R_PROMOTE, 0, NULL, i_bnot, S1},
    sp_pow = {2, R_PROMOTE, 0, f_pow, i_pow, {"self", "exponent"}},
    sp_max = {2, R_PROMOTE, 0, f_max, i_max, S2}, sp_min = {2, R_PROMOTE, 0, f_min, i_min, S2},
    sp_rem = {2, R_PROMOTE, P_ZDIV, f_rem, i_rem, S2}, sp_fmod = {2, R_PROMOTE, P_ZDIV, f_fmod, i_fmod, S2},
    sp_fdiv = {2, R_PROMOTE, P_ZDIV, f_fdiv, i_fdiv, S2}, sp_atan2 = {2, R_FLOAT, 0, f_atan2, NULL, S2},
    sp_eq = {2, R_BOOL, 0, f_eq, i_eq, S2}, sp_ne = {2, R_BOOL, 0, f_ne, i_ne, S2},
    sp_lt = {2, R_BOOL, 0, f_lt, i_lt, S2}, sp_le = {2, R_BOOL, 0, f_le, i_le, S2},
    sp_gt = {2, R_BOOL, 0, f_gt, i_gt, S2}, sp_ge = {2, R_BOOL, 0, f_ge, i_ge, S2},
    sp_land = {2, R_LOGICAL, 0, f_land, NULL, S2}, sp_lor = {2, R_LOGICAL, 0, f_lor, NULL, S2},
    sp_lxor = {2, R_LOGICAL, 0, f_lxor, NULL, S2},
    sp_band = {2, R_PROMOTE, 0, NULL, i_band, S2}, sp_bor = {2, R_PROMOTE, 0, NULL, i_bor, S2},
    sp_bxor = {2, R_PROMOTE, 0, NULL, i_bxor, S2},
    sp_pdiv = {2, R_PROMOTE, P_ZDIV, f_pdiv, i_pdiv, {"a", "b"}},
    sp_gcd = {2, R_PROMOTE, 0, NULL, i_gcd, S2}, sp_lcm = {2, R_PROMOTE, 0, NULL, i_lcm, S2},
    sp_shl = {2, R_PROMOTE, 0, NULL, i_shl, S2}, sp_shr = {2, R_PROMOTE, 0, NULL, i_shr, S2},
    sp_clamp = {1, R_PROMOTE, P_CLAMP, f_clamp, i_clamp, S1},
    sp_hardtanh = {1, R_PROMOTE, P_HARDTANH, f_clamp, NULL, S1},
    sp_hardsigmoid = {1, R_FLOAT, 0, f_hardsigmoid, NULL, S1}, sp_hardswish = {1, R_FLOAT, 0, f_hardswish, NULL, S1},
    sp_mish = {1, R_FLOAT, 0, f_mish, NULL, S1}, sp_softplus = {1, R_FLOAT, P_SOFTPLUS, f_softplus, NULL, S1},
    sp_elu = {1, R_FLOAT, P_ELU, f_elu, NULL, S1},
    sp_leaky = {1, R_FLOAT, P_SLOPE, f_leaky, NULL, S1},
    sp_acosh = {1, R_FLOAT, 0, f_acosh, NULL, S1}, sp_asinh = {1, R_FLOAT, 0, f_asinh, NULL, S1},
    sp_atanh = {1, R_FLOAT, 0, f_atanh, NULL, S1},
    sp_copysign = {2, R_FLOAT, 0, f_copysign, NULL, S2}, sp_hypot = {2, R_FLOAT, 0, f_hypot, NULL, S2},
    sp_nextafter = {2, R_PROMOTE, 0, f_nextafter, NULL, S2},
    sp_signbit = {1, R_LOGICAL, 0, f_signbit, i_signbit, S1},
    sp_digamma = {1, R_FLOAT, 0, f_digamma, NULL, S1}, sp_polygamma = {2, R_FLOAT, 0, f_polygamma, NULL, {"n", "self"}},
    sp_zeta = {2, R_FLOAT, 0, f_zeta, NULL, {"self", "other"}},
    sp_erfinv = {1, R_FLOAT, 0, f_erfinv, NULL, S1}, sp_erfcx = {1, R_FLOAT, 0, f_erfcx, NULL, S1},
    sp_ndtri = {1, R_FLOAT, 0, f_ndtri, NULL, S1}, sp_log_ndtr = {1, R_FLOAT, 0, f_log_ndtr, NULL, S1},
    sp_i0 = {1, R_FLOAT, 0, f_i0, NULL, S1}, sp_i0e = {1, R_FLOAT, 0, f_i0e, NULL, S1},
    sp_i1 = {1, R_FLOAT, 0, f_i1, NULL, S1}, sp_i1e = {1, R_FLOAT, 0, f_i1e, NULL, S1},
    sp_k0 = {1, R_FLOAT, P_GSL, f_k0, NULL, S1}, sp_k0e = {1, R_FLOAT, P_GSL, f_k0e, NULL, S1},
    sp_k1 = {1, R_FLOAT, P_GSL, f_k1, NULL, S1}, sp_k1e = {1, R_FLOAT, P_GSL, f_k1e, NULL, S1},
    sp_j0 = {1, R_FLOAT, 0, f_j0, NULL, S1}, sp_j1 = {1, R_FLOAT, 0, f_j1, NULL, S1},
    sp_y0 = {1, R_FLOAT, 0, f_y0, NULL, S1}, sp_y1 = {1, R_FLOAT, 0, f_y1, NULL, S1},
    sp_airy = {1, R_FLOAT, P_GSL, f_airy, NULL, S1}, sp_sph_j0 = {1, R_FLOAT, 0, f_sph_j0, NULL, S1},
    sp_igamma = {2, R_FLOAT, P_GSL, f_igamma, NULL, S2}, sp_igammac = {2, R_FLOAT, P_GSL, f_igammac, NULL, S2},
#define XN {"x", "n"}
    sp_cheb_t = {2, R_FLOAT, 0, f_cheb_t, NULL, XN}, sp_cheb_u = {2, R_FLOAT, 0, f_cheb_u, NULL, XN},
    sp_cheb_v = {2, R_FLOAT, 0, f_cheb_v, NULL, XN}, sp_cheb_w = {2, R_FLOAT, 0, f_cheb_w, NULL, XN},
    sp_scheb_t = {2, R_FLOAT, 0, f_scheb_t, NULL, XN}, sp_scheb_u = {2, R_FLOAT, 0, f_scheb_u, NULL, XN},
    sp_scheb_v = {2, R_FLOAT, 0, f_scheb_v, NULL, XN}, sp_scheb_w = {2, R_FLOAT, 0, f_scheb_w, NULL, XN},
    sp_herm_h = {2, R_FLOAT, 0, f_herm_h, NULL, XN}, sp_herm_he = {2, R_FLOAT, 0, f_herm_he, NULL, XN},
    sp_lag_l = {2, R_FLOAT, 0, f_lag_l, NULL, XN}, sp_leg_p = {2, R_FLOAT, 0, f_leg_p, NULL, XN},
    sp_where = {3, R_WHERE, 0, f_where, i_where, {"condition", "self", "other"}},
    sp_fma = {3, R_PROMOTE, 0, f_fma, i_fma, {"a", "b", "c"}},
    sp_mfill = {3, R_SAME, 0, f_mfill, i_mfill, {"self", "mask", "value"}},
    sp_fill = {2, R_SAME, 0, f_second, i_second, {"self", "value"}};

/* ---- operands ---- */

typedef struct PwOperand {
    TensorMeta *m;      /* NULL for a scalar */
    Tensor *t;          /* eval mode */
    double v; DType vt; /* scalar */
    double vi;          /* a complex scalar's imaginary part (vt DT_C64) */
} PwOperand;

static int pw_collect(ShapeArgs *sa, const PwSpec *sp, PwOperand *ops) {
    for (int i = 0; i < sp->nin; i++) {
        ArgRef a = sa_arg(sa, i, sp->names[i]);
        memset(&ops[i], 0, sizeof ops[i]);
        if (arg_is_tensor(sa, a)) {
            if (sa_tensor(sa, a, sp->names[i], &ops[i].m)) return -1;
            ops[i].t = ev_tensor(a);
        } else if (a.v && a.v->kind == V_COMPLEX) {   /* a Python complex: promotes as complex */
            ops[i].v = a.v->cx.re; ops[i].vi = a.v->cx.im; ops[i].vt = DT_C64;
        } else {
            if (!a.v) return sa_err(sa, "expected %d arguments, got %d", sp->nin, sa->nargs);
            if (sa_scalar(sa, a, sp->names[i], &ops[i].v, &ops[i].vt)) return -1;
        }
    }
    if (sp->nin && !ops[0].m && sp->rule != R_WHERE) {
        bool any = false;
        for (int i = 0; i < sp->nin; i++) any |= ops[i].m != NULL;
        if (!any) return sa_err(sa, "needs at least one tensor argument");
    }
    return 0;
}

static void pw_types(const PwSpec *sp, const PwOperand *ops, DType *common, DType *out) {
    PromoteState ps;
    promote_init(&ps);
    int first = sp->rule == R_WHERE ? 1 : 0;
    for (int i = first; i < sp->nin; i++) {
        if (ops[i].m) promote_tensor(&ps, ops[i].m);
        else promote_scalar(&ps, ops[i].vt);
    }
    DType c = promote_result(&ps);
    switch (sp->rule) {
    case R_FLOAT: if (ev_intlike(c)) c = default_float(); *out = c; break;
    case R_BOOL: *out = DT_BOOL; break;
    case R_LOGICAL: *out = DT_BOOL; c = DT_F64; break;
    case R_SAME: c = *out = ops[0].m ? ops[0].m->dtype : c; break;
    default: *out = c; break;
    }
    *common = c;
}

static int pw_shape_spec(ShapeArgs *sa, const PwSpec *sp, TensorMeta *out, PwOperand *ops, DType *common) {
    if (pw_collect(sa, sp, ops)) return -1;
    TensorMeta *ins[3] = {0};
    for (int i = 0; i < sp->nin; i++) ins[i] = ops[i].m;
    Expr *size[MI_MAX_DIMS];
    int nd;
    if (sa_broadcast(sa, ins, sp->nin, size, &nd)) return -1;
    DType dt;
    pw_types(sp, ops, common, &dt);
    if (*common == DT_INVALID || dt == DT_INVALID) {
        char names[3][16] = {"", "", ""};
        bool f8 = false;
        for (int i = 0; i < sp->nin && i < 3; i++) {
            snprintf(names[i], sizeof names[i], "%s", ops[i].m ? dtype_abbrev(ops[i].m->dtype) : "scalar");
            f8 = f8 || (ops[i].m && dtype_is_float8(ops[i].m->dtype));
        }
        return sa_err(sa, "no type promotion for %s and %s (%s)", names[0], names[1][0] ? names[1] : names[2],
                      f8 ? "PyTorch does not promote float8 types with any other type" : "PyTorch promotes uint16/32/64 only with bool and floating types");
    }
    if (dtype_is_complex(*common) && sa->op) {   /* complex math: core/ops/ops_complex.c */
        if (!complex_pointwise_fn(sa->op->name))
            return sa_err(sa, "not supported for complex dtype %s", dtype_abbrev(*common));
        if (complex_to_real(sa->op->name)) dt = *common == DT_C128 ? DT_F64 : DT_F32;   /* abs: COMPLEX_TO_FLOAT */
    }
    if (sp->fi == NULL && sp->f == NULL) return sa_err(sa, "no implementation");
    if ((sp->params & P_GSL) && !special_have_gsl())
        return sa_err(sa, "needs the GSL library, which configure did not find (apt-get install libgsl-dev, then ./configure)");
    if (!sp->f && !ev_intlike(*common))
        return sa_err(sa, "not supported for dtype %s (integer or bool tensors only)", dtype_abbrev(*common));
    meta_alloc(sa, out, dt, nd, sa->eval ? (Device){DEV_CPU, -1} : sa_first_device(sa));
    for (int i = 0; i < nd; i++) out->size[i] = size[i];
    meta_elementwise_strides(sa, out, ins, sp->nin);
    if (sa->op && (sa->op->flags & OPF_INPLACE)) {
        const TensorMeta *self = ops[0].m;
        if (!self) return sa_err(sa, "in-place op needs a tensor 'self'");
        bool same = self->ndim == nd;
        for (int i = 0; same && i < nd; i++) same = ex_cmp(sa, self->size[i], size[i]) == 0;
        if (!same) return sa_err(sa, "in-place result shape differs from the shape of 'self'");
        meta_copy(sa, out, self);
    }
    return 0;
}

static int pw_shape(ShapeArgs *sa, TensorMeta *out, int *nout) {
    PwOperand ops[3];
    DType common;
    *nout = 1;
    return pw_shape_spec(sa, sa->op->data, out, ops, &common);
}

static void pw_params(ShapeArgs *sa, const PwSpec *sp, PwParams *p) {
    memset(p, 0, sizeof *p);
    p->alpha = 1; p->ialpha = 1;
    if (sp->params & P_ALPHA) {
        ArgRef a = sa_arg(sa, -1, "alpha");
        DType t;
        if (arg_present(a) && sa_scalar(sa, a, "alpha", &p->alpha, &t) == 0) p->ialpha = (int64_t)p->alpha;
    }
    if (sp->params & P_ROUND) {
        const char *m = arg_str(sa_arg(sa, -1, "rounding_mode"), NULL);
        p->round = m && !strcmp(m, "trunc") ? 1 : m && !strcmp(m, "floor") ? 2 : 0;
    }
    if (sp->params & P_GELU) {
        const char *m = arg_str(sa_arg(sa, -1, "approximate"), "none");
        p->gelu_tanh = !strcmp(m, "tanh");
    }
    if (sp->params & (P_HARDTANH | P_SOFTPLUS | P_ELU)) {
        /* hardtanh(self, min_val=-1, max_val=1); softplus(self, beta=1, threshold=20); elu(self, alpha=1) */
        static const char *names[3][2] = {{"min_val", "max_val"}, {"beta", "threshold"}, {"alpha", "scale"}};
        int which = sp->params & P_HARDTANH ? 0 : sp->params & P_SOFTPLUS ? 1 : 2;
        double v[2] = {which == 0 ? -1 : 1, which == 0 ? 1 : which == 1 ? 20 : 1};
        DType t;
        for (int k = 0; k < 2; k++) {
            ArgRef a = sa_arg(sa, 1 + k, names[which][k]);
            if (arg_present(a)) sa_scalar(sa, a, names[which][k], &v[k], &t);
        }
        if (which == 0) { p->lo = v[0]; p->hi = v[1]; p->has_lo = p->has_hi = true; }
        else { p->alpha = v[0]; p->hi = v[1]; }
        if (which == 2) {
            ArgRef a = sa_arg(sa, 3, "input_scale");
            p->lo = 1;
            if (arg_present(a)) sa_scalar(sa, a, "input_scale", &p->lo, &t);
        }
    }
    if (sp->params & P_SLOPE) {           /* leaky_relu(self, negative_slope=0.01) */
        ArgRef a = sa_arg(sa, 1, "negative_slope");
        DType t;
        p->alpha = 0.01;
        if (arg_present(a)) sa_scalar(sa, a, "negative_slope", &p->alpha, &t);
    }
    if (sp->params & P_CLAMP) {
        DType t;
        ArgRef lo = sa_arg(sa, 1, "min"), hi = sa_arg(sa, 2, "max");
        if (arg_present(lo) && sa_scalar(sa, lo, "min", &p->lo, &t) == 0) p->has_lo = true;
        if (arg_present(hi) && sa_scalar(sa, hi, "max", &p->hi, &t) == 0) p->has_hi = true;
    }
}

/* Dtypes whose CPU kernels compute in float32: f32 itself and the half types, which PyTorch
 * widens to f32 ("opmath"), computes each step in f32 and rounds once to the result dtype on
 * store (round-to-nearest-even). Example: bf16 gelu = f32 gelu of the widened input, rounded. */
static bool opmath_f32(DType t) { return t == DT_F32 || t == DT_F16 || t == DT_BF16; }

/* The shared kernel: iterate the result in row-major order, keeping a storage position per
 * tensor operand (stride 0 on broadcast dimensions). An integer division (P_ZDIV: div with a
 * rounding mode, remainder, fmod, floor_divide) by zero fails with ATen's CPU error
 * (BinaryOpsKernel.cpp: TORCH_CHECK(b != 0, "ZeroDivisionError")): -1 with the error in sa.
 * Example: remainder(i64 [5], i64 [0]) -> "ZeroDivisionError". */
static int pw_kernel(ShapeArgs *sa, const PwSpec *sp, const PwParams *p, PwOperand *ops, Tensor *o, DType common, const char *opname) {
    int nd = o->ndim, nin = sp->nin;
    ComplexFn cf = dtype_is_complex(common) ? complex_pointwise_fn(opname) : NULL;   /* core/ops/ops_complex.c */
    int64_t st[3][MI_MAX_DIMS] = {{0}}, pos[3] = {0}, idx[MI_MAX_DIMS] = {0};
    for (int k = 0; k < nin; k++) {
        Tensor *t = ops[k].t;
        if (!t) continue;
        pos[k] = t->offset;
        for (int i = 0; i < nd; i++) {
            int j = i - (nd - t->ndim);
            st[k][i] = (j < 0 || t->size[j] == 1) ? 0 : t->stride[j];
        }
    }
    bool ints = ev_intlike(common) && sp->fi;
    PwI fi = sp->fi == i_bnot && common == DT_BOOL ? i_bnot_bool : sp->fi;
    int64_t n = tensor_numel(o), op = o->offset;
    double xf[3];
    int64_t xi[3];
    for (int64_t e = 0; e < n; e++) {
        if (cf) {
            MiCx z[3];
            for (int k = 0; k < nin; k++) {
                z[k].re = ops[k].v; z[k].im = ops[k].vi;
                if (ops[k].t) tensor_load_c(ops[k].t, pos[k], &z[k].re, &z[k].im);
            }
            MiCx r = cf(z, nin, p->alpha);
            tensor_store_c(o, op, r.re, r.im);
        } else if (ints) {
            for (int k = 0; k < nin; k++) xi[k] = ops[k].t ? tensor_load_i(ops[k].t, pos[k]) : (int64_t)ops[k].v;
            if ((sp->params & P_ZDIV) && xi[1] == 0)
                return sa_err(sa, "ZeroDivisionError: %s with an integer divisor of zero (ATen's CPU kernels check it: TORCH_CHECK(b != 0))", opname);
            tensor_store_i(o, op, fi(xi, p));
        } else {
            for (int k = 0; k < nin; k++) xf[k] = ops[k].t ? tensor_load_f(ops[k].t, pos[k]) : ops[k].v;
            /* values are rounded to the compute dtype first, as PyTorch does (f16/bf16 compute in
             * f32, their "opmath" type; a python scalar stays a float, not a bf16) */
            if (opmath_f32(common) && sp->rule != R_LOGICAL)
                for (int k = 0; k < nin; k++) xf[k] = (float)xf[k];
            tensor_store_f(o, op, sp->f(xf, p));
        }
        for (int d = nd - 1; d >= 0; d--) {
            idx[d]++;
            op += o->stride[d];
            for (int k = 0; k < nin; k++) pos[k] += st[k][d];
            if (idx[d] < o->size[d]) break;
            op -= o->stride[d] * idx[d];
            for (int k = 0; k < nin; k++) pos[k] -= st[k][d] * idx[d];
            idx[d] = 0;
        }
    }
    return 0;
}

static int pw_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    const PwSpec *sp = c->op->data;
    PwOperand ops[3];
    DType common;
    TensorMeta m;
    if (pw_shape_spec(sa, sp, &m, ops, &common)) return -1;
    PwParams p;
    pw_params(sa, sp, &p);
    p.f32 = opmath_f32(common);
    if (c->op->flags & OPF_INPLACE) {
        /* compute into a fresh tensor (operands may alias self), then copy into self */
        TensorMeta fm = m;
        meta_contiguous_strides(sa, &fm);
        Tensor *tmp = ev_new(sa, &fm);
        if (!tmp) return -1;
        int rc = pw_kernel(sa, sp, &p, ops, tmp, common, c->op->name);
        if (rc == 0) rc = tensor_copy_into(c->ctx, ops[0].t, tmp);
        tensor_unref(tmp);
        if (rc == 0) ev_out_tensor(out, tensor_ref(ops[0].t));
        return rc;
    }
    Tensor *o = ev_new(sa, &m);
    if (!o) return -1;
    if (pw_kernel(sa, sp, &p, ops, o, common, c->op->name)) {
        tensor_unref(o);
        return -1;
    }
    ev_out_tensor(out, o);
    return 0;
}
static int pw_eval(const OpCall *c, IValue *out) { return ev_call(c, out, pw_body); }

#define PW(name, spec, doc) {name, OPF_POINTWISE, op_infer_generic, pw_eval, doc, pw_shape, &spec}
/* the x_scalar / n_scalar overloads of a special polynomial (one argument a number) */
#define PW_XN(base, spec) PW(base ".x_scalar", spec, "x a number, n a tensor"), PW(base ".n_scalar", spec, "x a tensor, n a number")
#define PWI(name, spec, doc) {name, OPF_POINTWISE | OPF_INPLACE, op_infer_generic, pw_eval, doc, pw_shape, &spec}

const OpDef ops_pointwise_table[] = {
    PW("aten.add.Tensor", sp_add, "self + alpha * other"),
    PW("aten.add.Scalar", sp_add, "self + alpha * other"),
    PW("aten.sub.Tensor", sp_sub, "self - alpha * other"),
    PW("aten.sub.Scalar", sp_sub, "self - alpha * other"),
    PW("aten.rsub.Scalar", sp_rsub, "other - alpha * self (operands swapped)"),
    PW("aten.mul.Tensor", sp_mul, "self * other"),
    PW("aten.mul.Scalar", sp_mul, "self * other"),
    PW("aten.div.Tensor", sp_div, "true division"),
    PW("aten.div.Scalar", sp_div, "true division"),
    PW("aten.div.Tensor_mode", sp_div_mode, "division with rounding_mode trunc/floor"),
    PW("aten.div.Scalar_mode", sp_div_mode, "division with rounding_mode trunc/floor"),
    PW("aten.neg.default", sp_neg, "-x"),
    PW("aten.abs.default", sp_abs, "|x|"),
    PW("aten.exp.default", sp_exp, "e^x"),
    PW("aten.exp2.default", sp_exp2, "2^x"),
    PW("aten.expm1.default", sp_expm1, "e^x - 1"),
    PW("aten.log.default", sp_log, "natural log"),
    PW("aten.log1p.default", sp_log1p, "log(1 + x)"),
    PW("aten.log2.default", sp_log2, "log base 2"),
    PW("aten.log10.default", sp_log10, "log base 10"),
    PW("aten.sqrt.default", sp_sqrt, "square root"),
    PW("aten.rsqrt.default", sp_rsqrt, "1 / sqrt(x)"),
    PW("aten.reciprocal.default", sp_recip, "1 / x"),
    PW("aten.tanh.default", sp_tanh, "tanh"),
    PW("aten.sigmoid.default", sp_sigmoid, "1 / (1 + e^-x)"),
    PW("aten.silu.default", sp_silu, "x * sigmoid(x)"),
    PW("aten.relu.default", sp_relu, "max(x, 0)"),
    PW("aten.gelu.default", sp_gelu, "gelu, approximate='none' or 'tanh'"),
    PW("aten.leaky_relu.default", sp_leaky, "x > 0 ? x : slope * x"),
    PW("aten.hardtanh.default", sp_hardtanh, "clamp to [min_val, max_val] (default [-1, 1])"),
    PW("aten.hardsigmoid.default", sp_hardsigmoid, "relu6(x + 3) / 6"),
    PW("aten.hardswish.default", sp_hardswish, "x * relu6(x + 3) / 6"),
    PW("aten.mish.default", sp_mish, "x * tanh(softplus(x))"),
    PW("aten.softplus.default", sp_softplus, "log(1 + exp(beta x)) / beta, linear above threshold"),
    PW("aten.elu.default", sp_elu, "x > 0 ? x : alpha * (e^x - 1)"),
    PW("aten.erf.default", sp_erf, "error function"),
    PW("aten.erfc.default", sp_erfc, "complementary error function"),
    PW("aten.sin.default", sp_sin, "sine"),
    PW("aten.cos.default", sp_cos, "cosine"),
    PW("aten.tan.default", sp_tan, "tangent"),
    PW("aten.asin.default", sp_asin, "arcsine"),
    PW("aten.acos.default", sp_acos, "arccosine"),
    PW("aten.atan.default", sp_atan, "arctangent"),
    PW("aten.sinh.default", sp_sinh, "hyperbolic sine"),
    PW("aten.cosh.default", sp_cosh, "hyperbolic cosine"),
    PW("aten.lgamma.default", sp_lgamma, "log gamma"),
    PW("aten.floor.default", sp_floor, "floor"),
    PW("aten.ceil.default", sp_ceil, "ceil"),
    PW("aten.round.default", sp_round, "round half to even"),
    PW("aten.trunc.default", sp_trunc, "round toward zero"),
    PW("aten.sign.default", sp_sign, "sign"),
    PW("aten.isnan.default", sp_isnan, "x != x"),
    PW("aten.isinf.default", sp_isinf, "|x| == inf"),
    PW("aten.pow.Tensor_Scalar", sp_pow, "self ** exponent"),
    PW("aten.pow.Tensor_Tensor", sp_pow, "self ** exponent"),
    PW("aten.pow.Scalar", sp_pow, "self ** exponent"),
    PW("aten.maximum.default", sp_max, "elementwise max (nan propagates)"),
    PW("aten.minimum.default", sp_min, "elementwise min (nan propagates)"),
    PW("aten.clamp.default", sp_clamp, "clamp to [min, max]"),
    PW("aten.clamp_min.default", sp_max, "max(self, min)"),
    PW("aten.clamp_min.Tensor", sp_max, "max(self, min) with a tensor bound"),
    PW("aten.clamp_max.Tensor", sp_min, "min(self, max) with a tensor bound"),
    PW("aten.acosh.default", sp_acosh, "inverse hyperbolic cosine"),
    PW("aten.asinh.default", sp_asinh, "inverse hyperbolic sine"),
    PW("aten.atanh.default", sp_atanh, "inverse hyperbolic tangent"),
    PW("aten.copysign.Tensor", sp_copysign, "|self| with the sign of other"),
    PW("aten.copysign.Scalar", sp_copysign, "|self| with the sign of other"),
    PW("aten.hypot.default", sp_hypot, "sqrt(self^2 + other^2)"),
    PW("aten.nextafter.default", sp_nextafter, "next representable value after self toward other"),
    PW("aten.signbit.default", sp_signbit, "sign bit set (-0.0 too)"),
    PW("aten.digamma.default", sp_digamma, "psi(x), the derivative of lgamma"),
    PW("aten.special_digamma.default", sp_digamma, "psi(x), the derivative of lgamma"),
    PW("aten.polygamma.default", sp_polygamma, "n-th derivative of digamma"),
    PW("aten.special_zeta.default", sp_zeta, "Hurwitz zeta(x, q)"),
    PW("aten.special_zeta.self_scalar", sp_zeta, "Hurwitz zeta(x, q)"),
    PW("aten.special_zeta.other_scalar", sp_zeta, "Hurwitz zeta(x, q)"),
    PW("aten.erfinv.default", sp_erfinv, "inverse error function"),
    PW("aten.special_erfcx.default", sp_erfcx, "exp(x^2) erfc(x)"),
    PW("aten.special_ndtri.default", sp_ndtri, "inverse of the normal CDF"),
    PW("aten.special_log_ndtr.default", sp_log_ndtr, "log of the normal CDF"),
    PW("aten.i0.default", sp_i0, "modified Bessel function I0"),
    PW("aten.special_i0.default", sp_i0, "modified Bessel function I0"),
    PW("aten.special_i0e.default", sp_i0e, "exp(-|x|) I0(x)"),
    PW("aten.special_i1.default", sp_i1, "modified Bessel function I1"),
    PW("aten.special_i1e.default", sp_i1e, "exp(-|x|) I1(x)"),
    PW("aten.special_modified_bessel_i0.default", sp_i0, "modified Bessel function I0"),
    PW("aten.special_modified_bessel_i1.default", sp_i1, "modified Bessel function I1"),
    PW("aten.special_modified_bessel_k0.default", sp_k0, "modified Bessel function K0"),
    PW("aten.special_modified_bessel_k1.default", sp_k1, "modified Bessel function K1"),
    PW("aten.special_scaled_modified_bessel_k0.default", sp_k0e, "exp(x) K0(x)"),
    PW("aten.special_scaled_modified_bessel_k1.default", sp_k1e, "exp(x) K1(x)"),
    PW("aten.special_bessel_j0.default", sp_j0, "Bessel function J0"),
    PW("aten.special_bessel_j1.default", sp_j1, "Bessel function J1"),
    PW("aten.special_bessel_y0.default", sp_y0, "Bessel function Y0"),
    PW("aten.special_bessel_y1.default", sp_y1, "Bessel function Y1"),
    PW("aten.special_airy_ai.default", sp_airy, "Airy function Ai"),
    PW("aten.special_spherical_bessel_j0.default", sp_sph_j0, "spherical Bessel j0 = sin(x)/x"),
    PW("aten.igamma.default", sp_igamma, "regularized lower incomplete gamma P(a, x)"),
    PW("aten.igammac.default", sp_igammac, "regularized upper incomplete gamma Q(a, x)"),
    PW("aten.special_chebyshev_polynomial_t.default", sp_cheb_t, "Chebyshev T_n(x)"),
    PW("aten.special_chebyshev_polynomial_u.default", sp_cheb_u, "Chebyshev U_n(x)"),
    PW("aten.special_chebyshev_polynomial_v.default", sp_cheb_v, "Chebyshev V_n(x)"),
    PW("aten.special_chebyshev_polynomial_w.default", sp_cheb_w, "Chebyshev W_n(x)"),
    PW("aten.special_shifted_chebyshev_polynomial_t.default", sp_scheb_t, "shifted Chebyshev T_n(x)"),
    PW("aten.special_shifted_chebyshev_polynomial_u.default", sp_scheb_u, "shifted Chebyshev U_n(x)"),
    PW("aten.special_shifted_chebyshev_polynomial_v.default", sp_scheb_v, "shifted Chebyshev V_n(x)"),
    PW("aten.special_shifted_chebyshev_polynomial_w.default", sp_scheb_w, "shifted Chebyshev W_n(x)"),
    PW("aten.special_hermite_polynomial_h.default", sp_herm_h, "physicists' Hermite H_n(x)"),
    PW("aten.special_hermite_polynomial_he.default", sp_herm_he, "probabilists' Hermite He_n(x)"),
    PW("aten.special_laguerre_polynomial_l.default", sp_lag_l, "Laguerre L_n(x)"),
    PW("aten.special_legendre_polynomial_p.default", sp_leg_p, "Legendre P_n(x)"),
    PW_XN("aten.special_chebyshev_polynomial_t", sp_cheb_t),
    PW_XN("aten.special_chebyshev_polynomial_u", sp_cheb_u),
    PW_XN("aten.special_chebyshev_polynomial_v", sp_cheb_v),
    PW_XN("aten.special_chebyshev_polynomial_w", sp_cheb_w),
    PW_XN("aten.special_shifted_chebyshev_polynomial_t", sp_scheb_t),
    PW_XN("aten.special_shifted_chebyshev_polynomial_u", sp_scheb_u),
    PW_XN("aten.special_shifted_chebyshev_polynomial_v", sp_scheb_v),
    PW_XN("aten.special_shifted_chebyshev_polynomial_w", sp_scheb_w),
    PW_XN("aten.special_hermite_polynomial_h", sp_herm_h),
    PW_XN("aten.special_hermite_polynomial_he", sp_herm_he),
    PW_XN("aten.special_laguerre_polynomial_l", sp_lag_l),
    PW_XN("aten.special_legendre_polynomial_p", sp_leg_p),
    PW("prims.div.default", sp_pdiv, "a / b, truncating for ints"),
    PW("aten.gcd.default", sp_gcd, "greatest common divisor (ATen calc_gcd)"),
    PW("aten.lcm.default", sp_lcm, "least common multiple (ATen lcm_kernel)"),
    PW("aten.bitwise_and.Scalar", sp_band, "x & y"),
    PW("aten.bitwise_or.Scalar", sp_bor, "x | y"),
    PW("aten.bitwise_xor.Scalar", sp_bxor, "x ^ y"),
    PW("aten.clamp_max.default", sp_min, "min(self, max)"),
    PW("aten.remainder.Tensor", sp_rem, "python-style modulo"),
    PW("aten.remainder.Scalar", sp_rem, "python-style modulo"),
    PW("aten.fmod.Tensor", sp_fmod, "C-style modulo"),
    PW("aten.fmod.Scalar", sp_fmod, "C-style modulo"),
    PW("aten.floor_divide.default", sp_fdiv, "floor(self / other)"),
    PW("aten.floor_divide.Scalar", sp_fdiv, "floor(self / other)"),
    PW("aten.atan2.default", sp_atan2, "atan2(self, other)"),
    PW("aten.where.self", sp_where, "condition ? self : other"),
    PW("prims.fma.default", sp_fma, "a * b + c with one rounding (prims.fma, as the refs of softmax backward emit it)"),
    PW("aten.where.ScalarOther", sp_where, "condition ? self : other (a scalar)"),
    PW("aten.where.ScalarSelf", sp_where, "condition ? self (a scalar) : other"),
    PW("aten.where.Scalar", sp_where, "condition ? self : other (both scalars)"),
    PW("aten.masked_fill.Scalar", sp_mfill, "mask ? value : self"),
    PW("aten.masked_fill.Tensor", sp_mfill, "mask ? value : self"),
    PW("aten.eq.Tensor", sp_eq, "=="), PW("aten.eq.Scalar", sp_eq, "=="),
    PW("aten.ne.Tensor", sp_ne, "!="), PW("aten.ne.Scalar", sp_ne, "!="),
    PW("aten.lt.Tensor", sp_lt, "<"), PW("aten.lt.Scalar", sp_lt, "<"),
    PW("aten.le.Tensor", sp_le, "<="), PW("aten.le.Scalar", sp_le, "<="),
    PW("aten.gt.Tensor", sp_gt, ">"), PW("aten.gt.Scalar", sp_gt, ">"),
    PW("aten.ge.Tensor", sp_ge, ">="), PW("aten.ge.Scalar", sp_ge, ">="),
    PW("aten.logical_not.default", sp_lnot, "!x"),
    PW("aten.logical_and.default", sp_land, "x && y"),
    PW("aten.logical_or.default", sp_lor, "x || y"),
    PW("aten.logical_xor.default", sp_lxor, "x != y as bools"),
    PW("aten.bitwise_not.default", sp_bnot, "~x (ints), !x (bool)"),
    PW("aten.bitwise_and.Tensor", sp_band, "x & y"),
    PW("aten.bitwise_or.Tensor", sp_bor, "x | y"),
    PW("aten.bitwise_xor.Tensor", sp_bxor, "x ^ y"),
    PW("aten.bitwise_left_shift.Tensor", sp_shl, "x << y (a count out of [0, width) gives 0)"),
    PW("aten.bitwise_left_shift.Tensor_Scalar", sp_shl, "x << y (a count out of [0, width) gives 0)"),
    PW("aten.bitwise_left_shift.Scalar_Tensor", sp_shl, "x << y (a count out of [0, width) gives 0)"),
    PW("aten.__lshift__.Tensor", sp_shl, "x << y (a count out of [0, width) gives 0)"),
    PW("aten.__lshift__.Scalar", sp_shl, "x << y (a count out of [0, width) gives 0)"),
    PW("aten.bitwise_right_shift.Tensor", sp_shr, "x >> y (a count out of [0, width) shifts by width - 1)"),
    PW("aten.bitwise_right_shift.Tensor_Scalar", sp_shr, "x >> y (a count out of [0, width) shifts by width - 1)"),
    PW("aten.bitwise_right_shift.Scalar_Tensor", sp_shr, "x >> y (a count out of [0, width) shifts by width - 1)"),
    PW("aten.__rshift__.Tensor", sp_shr, "x >> y (a count out of [0, width) shifts by width - 1)"),
    PW("aten.__rshift__.Scalar", sp_shr, "x >> y (a count out of [0, width) shifts by width - 1)"),
    PWI("aten.bitwise_left_shift_.Tensor", sp_shl, "in-place x <<= y"),
    PWI("aten.bitwise_left_shift_.Tensor_Scalar", sp_shl, "in-place x <<= y"),
    PWI("aten.bitwise_right_shift_.Tensor", sp_shr, "in-place x >>= y"),
    PWI("aten.bitwise_right_shift_.Tensor_Scalar", sp_shr, "in-place x >>= y"),
    PWI("aten.add_.Tensor", sp_add, "in-place self += alpha * other"),
    PWI("aten.add_.Scalar", sp_add, "in-place self += alpha * other"),
    PWI("aten.sub_.Tensor", sp_sub, "in-place self -= alpha * other"),
    PWI("aten.mul_.Tensor", sp_mul, "in-place self *= other"),
    PWI("aten.mul_.Scalar", sp_mul, "in-place self *= other"),
    PWI("aten.div_.Tensor", sp_div, "in-place self /= other"),
    PWI("aten.div_.Scalar", sp_div, "in-place self /= other"),
    PWI("aten.relu_.default", sp_relu, "in-place relu"),
    PWI("aten.sigmoid_.default", sp_sigmoid, "in-place sigmoid"),
    PWI("aten.tanh_.default", sp_tanh, "in-place tanh"),
    PWI("aten.exp_.default", sp_exp, "in-place exp"),
    PWI("aten.neg_.default", sp_neg, "in-place negation"),
    PWI("aten.clamp_.default", sp_clamp, "in-place clamp"),
    PWI("aten.clamp_min_.default", sp_max, "in-place clamp_min"),
    PWI("aten.masked_fill_.Scalar", sp_mfill, "in-place masked_fill"),
    PWI("aten.fill_.Scalar", sp_fill, "in-place fill with a value"),
    PWI("aten.pow_.Scalar", sp_pow, "in-place power"),
    PW("aten.fill.Scalar", sp_fill, "tensor like self filled with value"),
};
const int ops_pointwise_count = sizeof ops_pointwise_table / sizeof ops_pointwise_table[0];
