/* special.h — scalar special functions behind the special_* / digamma / polygamma / igamma ...
 * pointwise ops (core/ops/special.c): Bessel and Airy functions, incomplete gamma, normal
 * quantiles from GSL (libgsl-dev, configure's HAVE_GSL); digamma, Hurwitz zeta, polygamma and
 * the orthogonal polynomials Cephes-style as ATen's Math.h defines them. */
#ifndef SPECIAL_H
#define SPECIAL_H

#include <stdbool.h>

bool special_have_gsl(void);     /* false: the GSL-backed functions are refused (named) */

double sf_digamma(double x);
double sf_zeta(double x, double q);                 /* Hurwitz zeta(x, q) */
double sf_polygamma(double n, double x);
double sf_erfinv(double x);
double sf_erfcx(double x);
double sf_ndtri(double p);
double sf_log_ndtr(double x);
double sf_i0(double x), sf_i0e(double x), sf_i1(double x), sf_i1e(double x);
double sf_k0(double x), sf_k0e(double x), sf_k1(double x), sf_k1e(double x);
double sf_j0(double x), sf_j1(double x), sf_y0(double x), sf_y1(double x);
double sf_airy_ai(double x);
double sf_spherical_j0(double x);
double sf_igamma(double a, double x), sf_igammac(double a, double x);
/* orthogonal polynomials p(x, n) (special_poly.c: n truncated to an integer, negative n gives
 * 0; f32: computed in float as ATen's float kernel, else double; bounded work for any n) */
double sf_chebyshev_t(double x, double n, bool f32), sf_chebyshev_u(double x, double n, bool f32);
double sf_chebyshev_v(double x, double n, bool f32), sf_chebyshev_w(double x, double n, bool f32);
double sf_shifted_chebyshev_t(double x, double n, bool f32), sf_shifted_chebyshev_u(double x, double n, bool f32);
double sf_shifted_chebyshev_v(double x, double n, bool f32), sf_shifted_chebyshev_w(double x, double n, bool f32);
double sf_hermite_h(double x, double n, bool f32), sf_hermite_he(double x, double n, bool f32);
double sf_laguerre_l(double x, double n, bool f32), sf_legendre_p(double x, double n, bool f32);

#endif
