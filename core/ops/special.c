/* special.c — the scalar special functions of special.h. Where a well-kept library has the
 * function it is used: libm (Bessel J/Y, erf), GSL (modified Bessel K and its scaled form, Airy
 * Ai, regularized incomplete gamma). Where ATen itself uses Cephes (digamma, Hurwitz zeta ->
 * polygamma; I0 / I1, ndtri, erfinv, log_ndtr in special_cephes.c), the same algorithm is
 * written here, as aten/src/ATen/native/Math.h does (its orthogonal polynomials: special_poly.c). Domain edges (zeros, negative integers, infinities) follow ATen's results. */
#include "ops/special.h"

#include <math.h>
#include <stdint.h>

#ifdef HAVE_GSL
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_airy.h>
#include <gsl/gsl_sf_bessel.h>
#include <gsl/gsl_sf_gamma.h>
/* GSL's default error handler aborts; every call goes through the _e form (status checked) */
static double gsl_or_nan(int status, double v) { return status == GSL_SUCCESS || status == GSL_EUNDRFLW ? v : NAN; }
#define GSL1(fn, x) ({ gsl_sf_result r_; gsl_set_error_handler_off(); int s_ = fn(x, &r_); gsl_or_nan(s_, r_.val); })
bool special_have_gsl(void) { return true; }
#else
bool special_have_gsl(void) { return false; }
#define GSL1(fn, x) ((void)(x), NAN)
#endif

/* Cephes psi: reflection for x < 0, recurrence up to x >= 10, asymptotic series with the
 * coefficients B_2k / 2k (1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12) */
double sf_digamma(double x) {
    static const double PSI_10 = 2.25175258906672110764;
    if (x == 0) return copysign(INFINITY, -x);
    if (x < 0) {
        if (x == trunc(x)) return NAN;
        double q, r = modf(x, &q);
        return sf_digamma(1 - x) - M_PI / tan(M_PI * r);
    }
    double result = 0;
    while (x < 10) { result -= 1 / x; x += 1; }
    if (x == 10) return result + PSI_10;
    static const double A[] = {1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252, -1.0 / 120, 1.0 / 12};
    double y = 0;
    if (x < 1.0e17) {
        double z = 1.0 / (x * x), p = A[0];
        for (int i = 1; i < 7; i++) p = p * z + A[i];
        y = z * p;
    }
    return result + log(x) - (0.5 / x) - y;
}

/* Cephes zeta(x, q): Euler-Maclaurin summation; A[i] = (2i+2)! / B_(2i+2) */
double sf_zeta(double x, double q) {
    static const double MACHEP = 1.11022302462515654042E-16;
    static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                               -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                               1.8152105401943546773e17, -7.1661652561756670113e18};
    if (x == 1.0) return INFINITY;
    if (x < 1.0) return NAN;
    if (q <= 0.0) {
        if (q == floor(q)) return INFINITY;
        if (x != floor(x)) return NAN;
    }
    double s = pow(q, -x), a = q, b = 0.0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i += 1;
        a += 1.0;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < MACHEP) return s;
    }
    double w = a;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    a = 1.0;
    double k = 0.0;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        double t = a * b / A[i];
        s = s + t;
        if (fabs(t / s) < MACHEP) return s;
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    return s;
}

/* ATen calc_polygamma: n = 0 digamma, n = 1 trigamma, else (-1)^(n+1) n! zeta(n + 1, x) */
double sf_polygamma(double n, double x) {
    int64_t k = (int64_t)n;
    if (k == 0) return sf_digamma(x);
    if (k == 1) {             /* ATen's trigamma: reflection below 1/2, then 6 recurrence steps + series */
        double sign = +1, result = 0;
        if (x < 0.5) {
            sign = -1;
            double s = sin(M_PI * x);
            result -= (M_PI * M_PI) / (s * s);
            x = 1 - x;
        }
        for (int i = 0; i < 6; ++i) { result += 1 / (x * x); x += 1; }
        double ixx = 1 / (x * x);
        result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x;
        return sign * result;
    }
    return ((k % 2) ? 1.0 : -1.0) * exp(lgamma((double)k + 1.0)) * sf_zeta((double)k + 1, x);
}

/* erfcx = exp(x^2) erfc(x): directly below 26 (exp(x^2) still finite, erfc keeps its relative
 * accuracy), beyond it the asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
 * to 8 terms (below 1e-16 there; the generated C's mi_sf_erfcx is the same).
 * Example: erfcx(30) = 0.018795888861416751. */
double sf_erfcx(double x) {
    if (isnan(x)) return x;
    if (x < 26) return exp(x * x) * erfc(x);
    double z = 1 / (2 * x * x), t = 1, s = 1;
    for (int k = 1; k < 8; k++) { t *= -(double)(2 * k - 1) * z; s += t; }
    return s / (x * 1.7724538509055160273);
}

/* K0/K1: inf at 0, nan below (ATen) */
static double kfun(double x, int which) {
    if (isnan(x) || x < 0) return NAN;
    if (x == 0) return INFINITY;
    if (isinf(x)) return 0;
    switch (which) {
    case 0: return GSL1(gsl_sf_bessel_K0_e, x);
    case 1: return GSL1(gsl_sf_bessel_K0_scaled_e, x);
    case 2: return GSL1(gsl_sf_bessel_K1_e, x);
    default: return GSL1(gsl_sf_bessel_K1_scaled_e, x);
    }
}
double sf_k0(double x) { return kfun(x, 0); }
double sf_k0e(double x) { return kfun(x, 1); }
double sf_k1(double x) { return kfun(x, 2); }
double sf_k1e(double x) { return kfun(x, 3); }
/* Bessel J/Y of the first and second kind: libm; Y at 0 is -inf, below 0 nan */
double sf_j0(double x) { return j0(x); }
double sf_j1(double x) { return j1(x); }
double sf_y0(double x) { return x < 0 ? NAN : x == 0 ? -INFINITY : y0(x); }
double sf_y1(double x) { return x < 0 ? NAN : x == 0 ? -INFINITY : y1(x); }

double sf_airy_ai(double x) {
    if (isinf(x)) return x > 0 ? 0 : NAN;
#ifdef HAVE_GSL
    gsl_sf_result r;
    gsl_set_error_handler_off();
    int st = gsl_sf_airy_Ai_e(x, GSL_PREC_DOUBLE, &r);
    return gsl_or_nan(st, r.val);
#else
    return NAN;
#endif
}

double sf_spherical_j0(double x) {
    if (isinf(x)) return 0;
    if (fabs(x) < 0.5) {      /* ATen's series: 1 - x^2/6 + x^4/120 - ... */
        double x2 = x * x;
        return 1 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040 + x2 * (1.0 / 362880 + x2 * (-1.0 / 39916800 + x2 / 6227020800.0)))));
    }
    return sin(x) / x;
}

/* regularized incomplete gamma P(a, x) / Q(a, x) with ATen's edge values */
static double igam(double a, double x, bool upper) {
    if (isnan(a) || isnan(x) || x < 0 || a < 0) return NAN;
    if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : NAN;
    if (x == 0) return upper ? 1.0 : 0.0;
    if (isinf(a)) return isinf(x) ? NAN : (upper ? 1.0 : 0.0);
    if (isinf(x)) return upper ? 0.0 : 1.0;
#ifdef HAVE_GSL
    gsl_sf_result r;
    gsl_set_error_handler_off();
    int st = upper ? gsl_sf_gamma_inc_Q_e(a, x, &r) : gsl_sf_gamma_inc_P_e(a, x, &r);
    return gsl_or_nan(st, r.val);
#else
    return NAN;
#endif
}
double sf_igamma(double a, double x) { return igam(a, x, false); }
double sf_igammac(double a, double x) { return igam(a, x, true); }

/* The orthogonal polynomials (chebyshev_polynomial_*, hermite, laguerre, legendre): special_poly.c. */
