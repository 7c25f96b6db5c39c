/* test_special_poly.c — the orthogonal polynomials of core/ops/special_poly.c: ATen's Math.h
 * definitions (closed forms for large n inside [-1, 1], the NaN that ends a recurrence after an
 * overflow, Hermite's degree limit, float rounding for f32) and bounded work for any degree,
 * each point against a value computed here from the polynomial's closed form or, just past the
 * step bound, from ATen's recurrence run here in full. A degree of 1e15 used to run 1e15 steps. */
#include "tap.h"
#include "ops/special.h"
#include "ops/interp.h"
#include "tests/support/compiled_check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static MiCtx *ctx;

static void near(double got, double want, double rtol, double atol, const char *what) {
    bool good = (isnan(want) && isnan(got)) || fabs(got - want) <= atol + rtol * fabs(want);
    ok(good, "%s", what);
    if (!good) diag("got %.17g, want %.17g", got, want);
}

/* Chebyshev: cos / sin of n acos x inside, cosh / sinh of n acosh x outside */
static void test_chebyshev(void) {
    double x = 0.3, t = acos(x), n = 1e15;
    near(sf_chebyshev_t(x, n, false), cos(n * t), 0, 0, "T_1e15(0.3) = cos(n acos x) exactly (ATen's closed form past n = 6)");
    near(sf_chebyshev_u(x, n, false), sin((n + 1) * t) / sin(t), 0, 0, "U_1e15(0.3) = sin((n + 1) acos x) / sin(acos x)");
    near(sf_chebyshev_w(x, n, false), sin((n + 0.5) * t) / sin(t / 2), 0, 0, "W_1e15(0.3) = sin((n + 1/2) t) / sin(t / 2)");
    /* outside [-1, 1] the recurrence grows until it overflows; then q = inf - inf ends it: NaN */
    near(sf_chebyshev_t(3, 100, false), cosh(100 * acosh(3.0)), 1e-12, 0, "T_100(3) = cosh(100 acosh 3) ~ 1e76 in double");
    near(sf_chebyshev_t(3, 100, true), NAN, 0, 0, "T_100(3) in float: past FLT_MAX, so NaN (ATen's float kernel)");
    near(sf_chebyshev_t(-3, 101, false), -cosh(101 * acosh(3.0)), 1e-12, 0, "T_101(-3) = -cosh(101 acosh 3)");
    near(sf_chebyshev_t(3, 1e15, false), NAN, 0, 0, "T_1e15(3): the overflow's NaN after ~400 steps");
    near(sf_chebyshev_u(-3, 1e15, false), NAN, 0, 0, "U_1e15(-3): NaN");
    /* |x| a hair above 1: the recurrence would need ~3e10 steps to overflow; past the step
     * bound the closed form gives the value, or ATen's NaN when it overflows */
    double xe = 1 + 0x1p-52, te = acosh(xe);
    near(sf_chebyshev_t(xe, 1e9, false), cosh(1e9 * te), 1e-6, 0, "T_1e9(1 + 2^-52) = cosh(n acosh x) (closed form past the bound)");
    near(sf_chebyshev_u(xe, 1e9, false), sinh((1e9 + 1) * te) / sinh(te), 1e-6, 0, "U_1e9(1 + 2^-52) = sinh((n + 1) t) / sinh(t)");
    near(sf_chebyshev_v(-xe, 1e9, false), sinh((1e9 + 0.5) * te) / sinh(te / 2), 1e-6, 0,
         "V_1e9(-(1 + 2^-52)) = (-1)^n W_n(1 + 2^-52) = sinh((n + 1/2) t) / sinh(t / 2)");
    near(sf_chebyshev_t(xe, 1e15, false), NAN, 0, 0, "T_1e15(1 + 2^-52): cosh overflows, ATen's NaN");
    /* just past the bound the closed form is ATen's recurrence, run here in full */
    int64_t nb = ((int64_t)1 << 22) + 1000;
    double xr = 1 + 1e-13, p = 1, q = xr, r = q;
    for (int64_t k = 2; k <= nb; k++) { r = 2 * xr * q - p; p = q; q = r; }
    /* (the recurrence's own rounding near x = 1 is ~1e-5 relative at this n; cosh is exact) */
    near(sf_chebyshev_t(xr, (double)nb, false), r, 1e-4, 0, "T_n(1 + 1e-13), n = 2^22 + 1000: the closed form is the recurrence's value");
    /* small degrees: the recurrence, in float for f32 */
    near(sf_chebyshev_t(0.5, 5, true), 16 * pow(0.5, 5) - 20 * pow(0.5, 3) + 5 * 0.5, 1e-6, 0, "T5(0.5) in float");
    near(sf_shifted_chebyshev_t(0.75, 3, false), 4 * pow(0.5, 3) - 3 * 0.5, 1e-15, 0, "T*3(0.75) = T3(0.5)");
}

/* Hermite: the recurrence up to getHermitianLimit (128 float, 512 double), NaN past it */
static void test_hermite(void) {
    double x = 0.7;
    near(sf_hermite_h(x, 5, false), 32 * pow(x, 5) - 160 * pow(x, 3) + 120 * x, 1e-13, 0, "H5(0.7) = 32x^5 - 160x^3 + 120x");
    near(sf_hermite_he(x, 4, false), pow(x, 4) - 6 * x * x + 3, 1e-13, 0, "He4(0.7) = x^4 - 6x^2 + 3");
    near(sf_hermite_h(x, 129, true), NAN, 0, 0, "H_129 in float: past the limit 128, NaN");
    near(sf_hermite_h(0.1, 100, false), pow(2, 50) * sf_hermite_he(0.1 * sqrt(2), 100, false), 1e-10, 0,
         "H_100(0.1) = 2^50 He_100(0.1 sqrt 2) (both recurrences, under the limit)");
    near(sf_hermite_he(0.1, 20, true), sf_hermite_he(0.1, 20, false), 1e-5, 0, "He_20(0.1) in float: the double's value, float-rounded steps");
    near(sf_hermite_h(x, 513, false), NAN, 0, 0, "H_513 in double: past the limit 512, NaN");
    near(sf_hermite_he(x, 1e18, false), NAN, 0, 0, "He_1e18: NaN, no 1e18 steps");
}

/* Legendre: P_2m(0) = (-1)^m (2m)! / (4^m m!^2) = (-1)^m prod (2j - 1) / (2j), ~ (-1)^m / sqrt(pi m) */
static void test_legendre(void) {
    double want = 1;
    for (int j = 1; j <= 500; j++) want *= -(2.0 * j - 1) / (2.0 * j);
    near(sf_legendre_p(0, 1000, false), want, 1e-12, 0, "P_1000(0) = (-1)^500 (1000)! / (4^500 500!^2) (recurrence)");
    double m = 5e11;
    near(sf_legendre_p(0, 2 * m, false), 1 / sqrt(M_PI * m) * (1 - 1 / (8 * m)), 1e-4, 0,
         "P_1e12(0) ~ (-1)^m / sqrt(pi m): the closed form past the step bound, no 1e12 steps");
    near(sf_legendre_p(0, 2 * m + 1, false), 0, 0, 1e-9, "P_(1e12 + 1)(0) = 0 (odd degree)");
    near(sf_legendre_p(-0.5, 3, false), (5 * -0.125 + 1.5) / 2, 1e-15, 0, "P3(-0.5) = (5x^3 - 3x) / 2");
    /* just past the bound: Hilb's formula against ATen's recurrence run here in full */
    int64_t nb = ((int64_t)1 << 22) + 1001;
    double x = 0.3, p = 1, q = x, r = q;
    for (int64_t k = 1; k < nb; k++) { r = ((2.0 * k + 1) * x * q - k * p) / (k + 1); p = q; q = r; }
    near(sf_legendre_p(x, (double)nb, false), r, 0, 1e-9, "P_n(0.3), n = 2^22 + 1001: Hilb's formula is the recurrence's value");
    near(sf_legendre_p(1.5, 1e15, false), NAN, 0, 0, "P_1e15(1.5): the overflow's NaN");
}

/* Laguerre: L_n(0) = 1; L2, L3 by hand; |L_n(x)| <= e^{x/2} for x >= 0 at any degree */
static void test_laguerre(void) {
    double x = 0.5;
    near(sf_laguerre_l(x, 3, false), (-pow(x, 3) + 9 * x * x - 18 * x + 6) / 6, 1e-14, 0, "L3(0.5) = (-x^3 + 9x^2 - 18x + 6) / 6");
    near(sf_laguerre_l(0, 1e15, false), 1, 0, 0, "L_1e15(0) = 1 (ATen's early return)");
    double v = sf_laguerre_l(x, 1e15, false);
    ok(isfinite(v) && fabs(v) <= exp(x / 2), "L_1e15(0.5) is bounded by e^{x/2} (Szego 7.21.3), no 1e15 steps: %g", v);
    int64_t nb = ((int64_t)1 << 22) + 1000;
    double p = 1, q = 1 - x, r = q;
    for (int64_t k = 1; k < nb; k++) { r = ((2.0 * k + 1 - x) * q - k * p) / (k + 1); p = q; q = r; }
    near(sf_laguerre_l(x, (double)nb, false), r, 0, 2e-5, "L_n(0.5), n = 2^22 + 1000: the Hilb-type formula is the recurrence's value (O(n^-3/4))");
    near(sf_laguerre_l(-3, 1e15, false), NAN, 0, 0, "L_1e15(-3): grows, overflows: NaN");
}

/* through the interpreter: a degree tensor of 1e15 runs (the op's kernel passes f32) */
static void test_graph(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f64[3][1]cpu\"):\n"
        "        p: \"f64[3][1]cpu\" = torch.ops.aten.special_legendre_polynomial_p.n_scalar(x, 1000000000000000.0)\n"
        "        t: \"f64[3][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.n_scalar(x, 1000000000000000.0)\n"
        "        return (p, t)\n";
    Graph *g = cc_parsed(ctx, fx, "poly.py");
    Tensor *x = cc_tensor(ctx, DT_F64, 1, (int64_t[]){3}, (double[]){0, 1, 0.3});
    Tensor *ins[] = {x};
    double m = 5e14;
    ok(g && cc_output_is(ctx, g, ins, 1, 0, (double[]){1 / sqrt(M_PI * m), 1, sf_legendre_p(0.3, 1e15, false)}, 3, 1e-6),
       "legendre_polynomial_p(x, 1e15) in a graph: P(0) ~ 1/sqrt(pi n/2), P(1) = 1");
    ok(g && cc_output_is(ctx, g, ins, 1, 1, (double[]){cos(1e15 * acos(0.0)), 1, cos(1e15 * acos(0.3))}, 3, 1e-9),
       "chebyshev_polynomial_t(x, 1e15) in a graph: cos(n acos x)");
    graph_free(g);
    tensor_unref(x);
}

int main(void) {
    ctx = mi_ctx_new();
    test_chebyshev();
    test_hermite();
    test_legendre();
    test_laguerre();
    test_graph();
    mi_ctx_free(ctx);
    return done_testing();
}
