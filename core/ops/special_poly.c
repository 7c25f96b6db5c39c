/* special_poly.c — the orthogonal polynomials of torch.special (chebyshev_polynomial_t/u/v/w,
 * their shifted forms, hermite_polynomial_h/he, laguerre_polynomial_l, legendre_polynomial_p)
 * for the interpreter's pointwise kernels (ops_pointwise.c) and so for the FallbackKernels the
 * lowering makes of them (Inductor lowers them to aten fallbacks).
 *
 * Each is aten/src/ATen/native/Math.h's *_forward(T x, int64_t n) as written there: the early
 * returns (n < 0, |x| == 1, Laguerre's x == 0), Chebyshev's closed forms cos(n acos x) for
 * n > 6 (T) or n > 8 (U, V, W) when |x| < 1, the three-term recurrences that stop when q turns
 * NaN (an overflow: inf - inf), and Hermite's degree limit (getHermitianLimit: 128 for float,
 * 512 for double: NaN past it). T is the kernel's compute type: f32 (and f16 / bf16 widened,
 * opmath) rounds every step to float as ATen's float instantiation does, so an overflow and the
 * NaN it leads to happen where ATen's do.
 *
 * Bounded work. ATen's recurrences run n steps where the value neither overflows nor is cut
 * short: Legendre with |x| < 1, Laguerre with x > 0, and |x| a hair above 1 (Chebyshev /
 * Legendre grow by (|x| + sqrt(x^2 - 1))^n, which takes ~3e10 steps to overflow a double when
 * |x| = 1 + 2^-52). A degree given as 1e15 would take days. Past POLY_MAX_STEPS steps the value
 * comes from the closed form instead (Chebyshev: cosh / sinh of n acosh |x|; Legendre: Hilb's
 * formula, error O(n^-3/2); Laguerre: its Hilb-type formula, error O(n^-3/4); Szego, Orthogonal
 * Polynomials 8.21.17 / 8.22.4), an overflow there giving ATen's NaN. At that degree ATen's own
 * float recurrence has lost more to rounding (~ sqrt(n) float ulps) than these formulas do. */
#include "ops/special.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* recurrence steps run at most; the closed forms beyond (see the top) */
#define POLY_MAX_STEPS ((int64_t)1 << 22)

/* ATen's static_cast<int64_t>(n) of the degree as x86-64 does it (cvttsd2si): NaN and values
 * past the int64 range give INT64_MIN (then n < 0: the polynomial is 0), which a C cast leaves
 * undefined. Example: poly_n(3.7) = 3, poly_n(1e30) = poly_n(NAN) = INT64_MIN. */
static int64_t poly_n(double nn) { return nn >= -9.2e18 && nn <= 9.2e18 ? (int64_t)nn : INT64_MIN; }

/* one arithmetic step in the compute type: float rounds (an exact double product or sum of
 * floats rounded once is the float operation's result) */
static double rt(double v, bool f32) { return f32 ? (double)(float)v : v; }
/* an int64 operand converted to the compute type, as C++'s usual conversions do */
static double ct(int64_t k, bool f32) { return f32 ? (double)(float)k : (double)k; }

/* A closed form's value as ATen's recurrence would end past an overflow: NaN (q = inf, then
 * inf - inf); a finite value rounded to the compute type (inf in float too: NaN). */
static double closed(double v, bool f32) {
    v = rt(v, f32);
    return isfinite(v) ? v : NAN;
}

/* The shared Chebyshev recurrence r = 2x q - p from (p, q) = (1, q1) for k = 2..n, stopping
 * when q is NaN; *done false when POLY_MAX_STEPS ran out first. Example: T_3(0.5): q1 = 0.5,
 * r = -0.5, then -1. A NaN x stops at once: ATen returns its uninitialised r there; NaN here. */
static double cheb_recur(double x, double q, int64_t n, bool f32, bool *done) {
    double p = 1, r = NAN, xx = rt(x + x, f32);
    int64_t k;
    for (k = 2; k <= n && !isnan(q) && k <= POLY_MAX_STEPS; k++) {
        r = rt(rt(xx * q, f32) - p, f32);
        p = q;
        q = r;
    }
    *done = !(k <= n && !isnan(q));
    return r;
}

/* T, U, V, W past the step bound (|x| > 1): with t = acosh |x|, T_n = cosh(n t), U_n =
 * sinh((n+1) t) / sinh(t), V_n = cosh((n+1/2) t) / cosh(t/2), W_n = sinh((n+1/2) t) / sinh(t/2)
 * at x > 1; at x < -1 T and U take the sign (-1)^n, V and W swap (V_n(-x) = (-1)^n W_n(x)). */
static double cheb_closed(char kind, double x, int64_t n, bool f32) {
    double t = acosh(fabs(x)), nn = (double)n, v;
    bool neg = x < 0, odd = n % 2 != 0;
    char k = kind;
    if (neg && (kind == 'v' || kind == 'w')) k = kind == 'v' ? 'w' : 'v';
    switch (k) {
    case 't': v = cosh(nn * t); break;
    case 'u': v = sinh((nn + 1) * t) / sinh(t); break;
    case 'v': v = cosh((nn + 0.5) * t) / cosh(t / 2); break;
    default: v = sinh((nn + 0.5) * t) / sinh(t / 2); break;
    }
    return closed(neg && odd ? -v : v, f32);
}

double sf_chebyshev_t(double x, double nn, bool f32) {
    int64_t n = poly_n(nn);
    if (n < 0) return 0;
    if (fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
    if (n > 6 && fabs(x) < 1) return rt(cos(rt(ct(n, f32) * rt(acos(x), f32), f32)), f32);
    if (n == 0) return 1;
    if (n == 1) return x;
    bool done;
    double r = cheb_recur(x, x, n, f32, &done);
    return done ? r : cheb_closed('t', x, n, f32);
}

double sf_chebyshev_u(double x, double nn, bool f32) {
    int64_t n = poly_n(nn);
    if (n < 0) return 0;
    if (fabs(x) == 1) return x > 0 || n % 2 == 0 ? ct(n + 1, f32) : -ct(n + 1, f32);
    if (n > 8 && fabs(x) < 1) {
        double t = rt(acos(x), f32), s = rt(sin(t), f32), n1 = ct(n + 1, f32);
        if (s != 0) return rt(rt(sin(rt(n1 * t, f32)), f32) / s, f32);
        return rt(rt(n1 * rt(cos(rt(n1 * t, f32)), f32), f32) / x, f32);
    }
    if (n == 0) return 1;
    if (n == 1) return rt(x + x, f32);
    bool done;
    double r = cheb_recur(x, rt(x + x, f32), n, f32, &done);
    return done ? r : cheb_closed('u', x, n, f32);
}

/* V (w false) and W (w true): their edge values and closed forms differ only by the roles of
 * x > 0 and the sign (-1)^n, as ATen writes them out */
static double cheb_vw(double x, double nn, bool f32, bool w) {
    int64_t n = poly_n(nn);
    if (n < 0) return 0;
    double two_n1 = rt((double)n + (double)n + 1, f32);   /* n + n + 1 in int64 overflows past 2**62 */
    double edge_pos = w ? two_n1 : 1, edge_neg = w ? (n % 2 == 0 ? 1 : -1) : (n % 2 == 0 ? two_n1 : -two_n1);
    if (fabs(x) == 1) return x > 0 ? edge_pos : edge_neg;
    if (n > 8 && fabs(x) < 1) {
        double t = rt(acos(x), f32), h = rt(t / 2, f32), nh = rt(ct(n, f32) + 0.5, f32);
        if (!w && rt(sin(h), f32) != 1) return rt(rt(cos(rt(nh * t, f32)), f32) / rt(cos(h), f32), f32);
        if (w && rt(cos(h), f32) != 1) return rt(rt(sin(rt(nh * t, f32)), f32) / rt(sin(h), f32), f32);
        return w && x > 0 ? edge_pos : edge_neg;   /* V: +-(2n + 1); W: 2n + 1 at x > 0, else +-1 */
    }
    if (n == 0) return 1;
    if (n == 1) return rt(rt(x + x, f32) + (w ? 1 : -1), f32);
    bool done;
    double r = cheb_recur(x, rt(rt(x + x, f32) + (w ? 1 : -1), f32), n, f32, &done);
    return done ? r : cheb_closed(w ? 'w' : 'v', x, n, f32);
}
double sf_chebyshev_v(double x, double n, bool f32) { return cheb_vw(x, n, f32, false); }
double sf_chebyshev_w(double x, double n, bool f32) { return cheb_vw(x, n, f32, true); }

/* the shifted polynomials: ATen's shifted_chebyshev_polynomial_*_forward are the same
 * definitions at x + x - 1 (written out there with the edges at x == 1 and x == 0) */
double sf_shifted_chebyshev_t(double x, double n, bool f32) { return sf_chebyshev_t(rt(rt(x + x, f32) - 1, f32), n, f32); }
double sf_shifted_chebyshev_u(double x, double n, bool f32) { return sf_chebyshev_u(rt(rt(x + x, f32) - 1, f32), n, f32); }
double sf_shifted_chebyshev_v(double x, double n, bool f32) { return sf_chebyshev_v(rt(rt(x + x, f32) - 1, f32), n, f32); }
double sf_shifted_chebyshev_w(double x, double n, bool f32) { return sf_chebyshev_w(rt(rt(x + x, f32) - 1, f32), n, f32); }

/* getHermitianLimit<T>(): past it ATen returns NaN (the recurrence would overflow anyway) */
static int64_t hermite_limit(bool f32) { return f32 ? 128 : 512; }

double sf_hermite_h(double x, double nn, bool f32) {
    int64_t n = poly_n(nn);   /* ATen's float overload maps inf / NaN to -1: 0 as here */
    if (n < 0) return 0;
    if (n == 0) return 1;
    if (n == 1) return rt(x + x, f32);
    if (n > hermite_limit(f32)) return NAN;
    double p = 1, q = rt(x + x, f32), r = 0;
    for (int64_t k = 2; k < n + n; k += 2) {
        r = rt(rt(rt(x + x, f32) * q, f32) - rt(ct(k, f32) * p, f32), f32);
        p = q;
        q = r;
    }
    return r;
}

double sf_hermite_he(double x, double nn, bool f32) {
    int64_t n = poly_n(nn);
    if (n < 0) return 0;
    if (n == 0) return 1;
    if (n == 1) return x;
    if (n > hermite_limit(f32)) return NAN;
    double p = 1, q = x, r = 0;
    for (int64_t k = 1; k < n; k++) {
        r = rt(rt(x * q, f32) - rt(ct(k, f32) * p, f32), f32);
        p = q;
        q = r;
    }
    return r;
}

/* Laguerre past the step bound: the Hilb-type formula e^{-x/2} L_n(x) ~ J0(2 sqrt(N x)) for
 * x > 0 and ~ I0(2 sqrt(N |x|)) for x < 0, N = n + 1/2 (Szego 8.22.4, alpha = 0) */
static double laguerre_closed(double x, int64_t n, bool f32) {
    double N = (double)n + 0.5, a = 2 * sqrt(N * fabs(x));
    return closed(exp(x / 2) * (x > 0 ? sf_j0(a) : sf_i0(a)), f32);
}

double sf_laguerre_l(double x, double nn, bool f32) {
    int64_t n = poly_n(nn);
    if (n < 0) return 0;
    if (fabs(x) == 0) return 1;
    if (n == 0) return 1;
    if (n == 1) return rt(1 - x, f32);
    double p = 1, q = rt(1 - x, f32), r = NAN, omx = q;
    int64_t k;
    for (k = 1; k < n && !isnan(q) && k <= POLY_MAX_STEPS; k++) {
        double a = rt(ct(k + k, f32) + omx, f32);
        r = rt(rt(rt(a * q, f32) - rt(ct(k, f32) * p, f32), f32) / ct(k + 1, f32), f32);
        p = q;
        q = r;
    }
    return k < n && !isnan(q) ? laguerre_closed(x, n, f32) : r;
}

/* Legendre past the step bound: Hilb's formula P_n(cos t) ~ sqrt(t / sin t) J0((n + 1/2) t)
 * for |x| < 1 (t near pi through P_n(-x) = (-1)^n P_n(x)), and its continuation
 * P_n(cosh t) ~ sqrt(t / sinh t) I0((n + 1/2) t) for |x| > 1 (Szego 8.21.17) */
static double legendre_closed(double x, int64_t n, bool f32) {
    double ax = fabs(x), N = (double)n + 0.5, v;
    if (ax < 1) {
        double t = acos(ax);
        v = t == 0 ? 1 : sqrt(t / sin(t)) * sf_j0(N * t);
    } else {
        double t = acosh(ax);
        v = sqrt(t / sinh(t)) * sf_i0(N * t);
    }
    return closed(x < 0 && n % 2 != 0 ? -v : v, f32);
}

double sf_legendre_p(double x, double nn, bool f32) {
    int64_t n = poly_n(nn);
    if (n < 0) return 0;
    if (fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
    if (n == 0) return 1;
    if (n == 1) return x;
    double p = 1, q = x, r = NAN;
    int64_t k;
    for (k = 1; k < n && !isnan(q) && k <= POLY_MAX_STEPS; k++) {
        double a = rt(rt(ct(k + k + 1, f32) * x, f32) * q, f32);
        r = rt(rt(a - rt(ct(k, f32) * p, f32), f32) / ct(k + 1, f32), f32);
        p = q;
        q = r;
    }
    return k < n && !isnan(q) ? legendre_closed(x, n, f32) : r;
}
