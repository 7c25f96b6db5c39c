/* special_src.c — the C source of the special functions generated C kernels call (Inductor's
 * pointwise_overrides_data, codegen/common.py: calc_erfinv, calc_i0, calc_digamma, ... in the
 * cpp backend), written into a module only when its kernels use them (cg_special_src). They
 * compute in double; an f32 kernel rounds the result when it stores it, as the interpreter does.
 * The algorithms: ATen's own where it has a short one (erfinv's rational guess and two Newton
 * steps, Cephes digamma and zeta, trigamma, log_ndtr, the spherical j0 series); for I0 / I1 and
 * ndtri (Cephes tables in ATen) the convergent power series / asymptotic series and Newton steps
 * that reach the same double-precision values. tests/test_special_src.c holds them to the
 * interpreter's (core/ops/special.c: GSL, libm) and to known values. CUDA kernels call CUDA's
 * own functions instead (erfinvf, cyl_bessel_i0f, ...: codegen_cuda_kernel.c). */
#include "codegen/special_src.h"

static const char src_erfinv[] =
    "/* erfinv (ATen calc_erfinv): a rational first guess, two Newton steps on erf */\n"
    "MI_SF double mi_sf_erfinv(double y) {\n"
    "    const double a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};\n"
    "    const double b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};\n"
    "    const double c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};\n"
    "    const double d[2] = {3.543889200, 1.637067800};\n"
    "    double ya = fabs(y), x, z, num, dem;\n"
    "    if (ya > 1) return NAN;\n"
    "    if (ya == 1) return copysign(INFINITY, y);\n"
    "    if (ya <= 0.7) {\n"
    "        z = y * y;\n"
    "        num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];\n"
    "        dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0;\n"
    "        x = y * num / dem;\n"
    "    } else {\n"
    "        z = sqrt(-log((1.0 - ya) / 2.0));\n"
    "        num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];\n"
    "        dem = (d[1] * z + d[0]) * z + 1.0;\n"
    "        x = copysign(num / dem, y);\n"
    "    }\n"
    "    x = x - (erf(x) - y) / (1.1283791670955126 * exp(-x * x));\n"
    "    x = x - (erf(x) - y) / (1.1283791670955126 * exp(-x * x));\n"
    "    return x;\n"
    "}\n";

static const char src_bessel_i[] =
    "/* modified Bessel I0 / I1 (order nu = 0, 1), exp(-|x|)-scaled when `scaled`: the power series\n"
    " * sum (x/2)^(2k+nu) / (k! (k+nu)!) (positive terms: no cancellation) up to |x| = 30, beyond it\n"
    " * the asymptotic series e^x / sqrt(2 pi x) sum (-1)^k prod_{j<=k} (mu - (2j-1)^2) / (k! (8x)^k),\n"
    " * mu = 4 nu^2 (its terms shrink to e^-2x before they grow) */\n"
    "MI_SF double mi_sf_bessel_i(double x, int nu, int scaled) {\n"
    "    double ax = fabs(x), r;\n"
    "    if (isnan(x)) return x;\n"
    "    if (ax <= 30) {\n"
    "        double q = ax * ax / 4, t = nu ? ax / 2 : 1, s = t;\n"
    "        for (int k = 1; k < 500 && t > s * 1e-17; k++) { t *= q / ((double)k * (double)(k + nu)); s += t; }\n"
    "        r = scaled ? s * exp(-ax) : s;\n"
    "    } else {\n"
    "        double mu = 4.0 * nu * nu, t = 1, s = 1;\n"
    "        for (int k = 1; k < 60; k++) {\n"
    "            double nt = -t * (mu - (double)(2 * k - 1) * (2 * k - 1)) / ((double)k * 8 * ax);\n"
    "            if (fabs(nt) >= fabs(t)) break;\n"
    "            t = nt;\n"
    "            s += t;\n"
    "            if (fabs(t) < 1e-17 * fabs(s)) break;\n"
    "        }\n"
    "        r = s / sqrt(2 * 3.141592653589793 * ax);\n"
    "        if (!scaled) r = ax > 709 ? INFINITY : r * exp(ax);\n"
    "    }\n"
    "    return nu && x < 0 ? -r : r;\n"
    "}\n"
    "MI_SF double mi_sf_i0(double x) { return mi_sf_bessel_i(x, 0, 0); }\n"
    "MI_SF double mi_sf_i0e(double x) { return mi_sf_bessel_i(x, 0, 1); }\n"
    "MI_SF double mi_sf_i1(double x) { return mi_sf_bessel_i(x, 1, 0); }\n"
    "MI_SF double mi_sf_i1e(double x) { return mi_sf_bessel_i(x, 1, 1); }\n";

static const char src_digamma[] =
    "/* digamma (ATen calc_digamma, Cephes psi): reflection for x < 0, recurrence up to x >= 10,\n"
    " * then the asymptotic series with B_2k / 2k */\n"
    "MI_SF double mi_sf_digamma(double x) {\n"
    "    const double A[7] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,\n"
    "                         -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,\n"
    "                         8.33333333333333333333E-2};\n"
    "    double result = 0;\n"
    "    if (x == 0) return copysign(INFINITY, -x);\n"
    "    if (x < 0) {\n"
    "        if (x == trunc(x)) return NAN;\n"
    "        double q, r = modf(x, &q);\n"
    "        result = -3.141592653589793 / tan(3.141592653589793 * r);\n"
    "        x = 1 - x;\n"
    "    }\n"
    "    while (x < 10) { result -= 1 / x; x += 1; }\n"
    "    if (x == 10) return result + 2.25175258906672110764;\n"
    "    double y = 0;\n"
    "    if (x < 1.0e17) {\n"
    "        double z = 1.0 / (x * x), p = A[0];\n"
    "        for (int i = 1; i < 7; i++) p = p * z + A[i];\n"
    "        y = z * p;\n"
    "    }\n"
    "    return result + log(x) - (0.5 / x) - y;\n"
    "}\n";

static const char src_polygamma[] =
    "/* Hurwitz zeta(x, q) (ATen zeta, Cephes): Euler-Maclaurin summation, A[i] = (2i+2)! / B_(2i+2) */\n"
    "MI_SF double mi_sf_zeta(double x, double q) {\n"
    "    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,\n"
    "                          -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,\n"
    "                          1.8152105401943546773e17, -7.1661652561756670113e18};\n"
    "    const double MACHEP = 1.11022302462515654042E-16;\n"
    "    if (x == 1.0) return INFINITY;\n"
    "    if (x < 1.0) return NAN;\n"
    "    if (q <= 0.0) {\n"
    "        if (q == floor(q)) return INFINITY;\n"
    "        if (x != floor(x)) return NAN;\n"
    "    }\n"
    "    double s = pow(q, -x), a = q, b = 0.0, k = 0.0;\n"
    "    int i = 0;\n"
    "    while (i < 9 || a <= 9.0) {\n"
    "        i += 1;\n"
    "        a += 1.0;\n"
    "        b = pow(a, -x);\n"
    "        s += b;\n"
    "        if (fabs(b / s) < MACHEP) return s;\n"
    "    }\n"
    "    double w = a;\n"
    "    s += b * w / (x - 1.0);\n"
    "    s -= 0.5 * b;\n"
    "    a = 1.0;\n"
    "    for (i = 0; i < 12; i++) {\n"
    "        a *= x + k;\n"
    "        b /= w;\n"
    "        double t = a * b / A[i];\n"
    "        s = s + t;\n"
    "        if (fabs(t / s) < MACHEP) return s;\n"
    "        k += 1.0;\n"
    "        a *= x + k;\n"
    "        b /= w;\n"
    "        k += 1.0;\n"
    "    }\n"
    "    return s;\n"
    "}\n"
    "/* polygamma(n, x) as Inductor's cpp override: n == 0 digamma, n == 1 ATen's trigamma\n"
    " * (reflection below 1/2, six recurrence steps, then the series), else calc_polygamma:\n"
    " * (-1)^(n+1) n! zeta(n + 1, x) */\n"
    "MI_SF double mi_sf_polygamma(double nd, double x) {\n"
    "    long long n = (long long)nd;\n"
    "    if (n == 0) return mi_sf_digamma(x);\n"
    "    if (n == 1) {\n"
    "        double sign = +1, result = 0;\n"
    "        if (x < 0.5) {\n"
    "            double s = sin(3.141592653589793 * x);\n"
    "            sign = -1;\n"
    "            result -= (3.141592653589793 * 3.141592653589793) / (s * s);\n"
    "            x = 1 - x;\n"
    "        }\n"
    "        for (int i = 0; i < 6; ++i) { result += 1 / (x * x); x += 1; }\n"
    "        double ixx = 1 / (x * x);\n"
    "        result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x;\n"
    "        return sign * result;\n"
    "    }\n"
    "    return ((n % 2) ? 1.0 : -1.0) * exp(lgamma((double)n + 1.0)) * mi_sf_zeta((double)n + 1, x);\n"
    "}\n";

static const char src_erfcx[] =
    "/* erfcx(x) = exp(x^2) erfc(x): directly below x = 26 (erfc keeps its relative accuracy there),\n"
    " * above it the asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k */\n"
    "MI_SF double mi_sf_erfcx(double x) {\n"
    "    if (isnan(x)) return x;\n"
    "    if (x < 26) return exp(x * x) * erfc(x);\n"
    "    double z = 1 / (2 * x * x), t = 1, s = 1;\n"
    "    for (int k = 1; k < 8; k++) { t *= -(double)(2 * k - 1) * z; s += t; }\n"
    "    return s / (x * 1.7724538509055160273);\n"
    "}\n";

static const char src_ndtri[] =
    "/* ndtri(p), the standard normal quantile: -sqrt(2) erfcinv(2p) below 1/2, sqrt(2)\n"
    " * erfcinv(2(1 - p)) above (1 - p is exact there); erfcinv(q) from erfinv's first guess,\n"
    " * then Newton steps on log(erfc(y)) - log(q) (nearly linear in the tail; erfc keeps its\n"
    " * relative accuracy there) */\n"
    "MI_SF double mi_sf_erfcinv(double q) {\n"
    "    double y;\n"
    "    if (q >= 0.3) y = mi_sf_erfinv(1 - q);\n"
    "    else {\n"
    "        const double c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};\n"
    "        const double d[2] = {3.543889200, 1.637067800};\n"
    "        double z = sqrt(-log(q / 2.0));\n"
    "        y = (((c[3] * z + c[2]) * z + c[1]) * z + c[0]) / ((d[1] * z + d[0]) * z + 1.0);\n"
    "        for (int i = 0; i < 4; i++) { double e = erfc(y); y += (log(e) - log(q)) * e / (1.1283791670955126 * exp(-y * y)); }\n"
    "    }\n"
    "    return y;\n"
    "}\n"
    "MI_SF double mi_sf_ndtri(double p) {\n"
    "    if (isnan(p) || p < 0 || p > 1) return NAN;\n"
    "    if (p == 0) return -INFINITY;\n"
    "    if (p == 1) return INFINITY;\n"
    "    if (p < 0.5) return -1.4142135623730951 * mi_sf_erfcinv(2 * p);\n"
    "    return 1.4142135623730951 * mi_sf_erfcinv(2 * (1 - p));\n"
    "}\n";

static const char src_log_ndtr[] =
    "/* log_ndtr (ATen calc_log_ndtr): log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1, else\n"
    " * log1p(-erfc(x / sqrt 2) / 2) */\n"
    "MI_SF double mi_sf_log_ndtr(double x) {\n"
    "    double t = x * 0.70710678118654752440;\n"
    "    if (x < -1.0) return log(mi_sf_erfcx(-t) / 2) - t * t;\n"
    "    return log1p(-erfc(t) / 2);\n"
    "}\n";

static const char src_spherical[] =
    "/* spherical Bessel j0 (ATen spherical_bessel_j0_forward): sin(x) / x, its Taylor series\n"
    " * below |x| = 1/2, 0 at infinity */\n"
    "MI_SF double mi_sf_spherical_bessel_j0(double x) {\n"
    "    if (isinf(x)) return 0.0;\n"
    "    if (fabs(x) < 0.5)\n"
    "        return 1.0 + x * x * (-1.0 / 6.0 + x * x * (1.0 / 120.0 + x * x * (-1.0 / 5040.0 + x * x * (1.0 / 362880.0\n"
    "               + x * x * (-1.0 / 39916800.0 + x * x * (1.0 / 6227020800.0))))));\n"
    "    return sin(x) / x;\n"
    "}\n";

/* One chunk per function family, in dependency order (polygamma calls digamma, ndtri calls
 * erfinv, log_ndtr calls erfcx). */
enum { SF_ERFINV, SF_BESSEL_I, SF_DIGAMMA, SF_POLYGAMMA, SF_ERFCX, SF_NDTRI, SF_LOG_NDTR, SF_SPHERICAL, SF_N };
static const char *const chunk_src[SF_N] = {src_erfinv, src_bessel_i, src_digamma, src_polygamma,
                                            src_erfcx, src_ndtri, src_log_ndtr, src_spherical};

/* The chunks `need` marks, with their dependencies, after "#define MI_SF static inline". */
static void emit(StrBuf *out, bool need[SF_N]) {
    need[SF_DIGAMMA] |= need[SF_POLYGAMMA];
    need[SF_ERFINV] |= need[SF_NDTRI];
    need[SF_ERFCX] |= need[SF_LOG_NDTR];
    bool any = false;
    for (int k = 0; k < SF_N; k++) any |= need[k];
    if (!any) return;
    sb_put(out, "/* special functions (Inductor's calc_erfinv, calc_i0, calc_digamma, ...), in double */\n#define MI_SF static inline\n");
    for (int k = 0; k < SF_N; k++)
        if (need[k]) sb_put(out, chunk_src[k]);
    sb_put(out, "\n");
}

void cg_special_src(StrBuf *out, const IrModule *m) {
    bool need[SF_N] = {0};
    need[SF_ERFINV] = ir_module_uses_math(m, IOP_ERFINV);
    need[SF_BESSEL_I] = ir_module_uses_math(m, IOP_I0) || ir_module_uses_math(m, IOP_I0E) || ir_module_uses_math(m, IOP_I1) ||
                        ir_module_uses_math(m, IOP_I1E) || ir_module_uses_math(m, IOP_MODIFIED_BESSEL_I0) ||
                        ir_module_uses_math(m, IOP_MODIFIED_BESSEL_I1);
    need[SF_DIGAMMA] = ir_module_uses_math(m, IOP_DIGAMMA);
    need[SF_POLYGAMMA] = ir_module_uses_math(m, IOP_POLYGAMMA) || ir_module_uses_math(m, IOP_ZETA);
    need[SF_ERFCX] = ir_module_uses_math(m, IOP_ERFCX);
    need[SF_NDTRI] = ir_module_uses_math(m, IOP_NDTRI);
    need[SF_LOG_NDTR] = ir_module_uses_math(m, IOP_LOG_NDTR);
    need[SF_SPHERICAL] = ir_module_uses_math(m, IOP_SPHERICAL_BESSEL_J0);
    emit(out, need);
}

void cg_special_src_all(StrBuf *out) {
    bool need[SF_N];
    for (int k = 0; k < SF_N; k++) need[k] = true;
    emit(out, need);
}
