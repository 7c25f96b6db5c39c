/* test_special_src.c — the special functions generated kernels call (core/codegen/special_src.c)
 * and their lowering as pointwise ops (lowering_pointwise.c lower_special, Inductor's
 * pointwise_overrides_data):
 *   1. the emitted C source compiled on its own: known values (mpmath, 30 digits) and
 *      agreement with the interpreter's functions (core/ops/special.c) over a grid;
 *   2. a graph with every one of them: one fused C kernel, no FallbackKernel, and exec
 *      (compiled kernel against the interpreter) agrees, f32 and f64;
 *   3. the same graph on cuda: libdevice's functions in the kernels (erfinvf, cyl_bessel_i0f,
 *      j0f, ...), FallbackKernels for those without a Triton spelling (i0e, digamma, ...);
 *      nvcc compiles the module when it is installed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"
#include "base/mi.h"
#include "codegen/special_src.h"
#include "ops/special.h"
#include "tests/support/shell_harness.h"

/* every emitted function behind one entry point: mi_eval(k, x, y) */
static const char *const fn_names[] = {"erfinv", "i0", "i0e", "i1", "i1e", "digamma", "erfcx", "ndtri",
                                       "log_ndtr", "spherical_bessel_j0", "polygamma", "zeta"};
enum { F_ERFINV, F_I0, F_I0E, F_I1, F_I1E, F_DIGAMMA, F_ERFCX, F_NDTRI, F_LOG_NDTR, F_SPH_J0, F_POLYGAMMA, F_ZETA, F_N };

static double rel_err(double got, double want) {
    if (got == want || (isnan(got) && isnan(want))) return 0;
    return fabs(got - want) / fmax(fabs(want), 1e-300);
}

/* the interpreter's value of function k */
static double interp(int k, double x, double y) {
    switch (k) {
    case F_ERFINV: return sf_erfinv(x);
    case F_I0: return sf_i0(x);
    case F_I0E: return sf_i0e(x);
    case F_I1: return sf_i1(x);
    case F_I1E: return sf_i1e(x);
    case F_DIGAMMA: return sf_digamma(x);
    case F_ERFCX: return sf_erfcx(x);
    case F_NDTRI: return sf_ndtri(x);
    case F_LOG_NDTR: return sf_log_ndtr(x);
    case F_SPH_J0: return sf_spherical_j0(x);
    case F_POLYGAMMA: return sf_polygamma(x, y);
    default: return sf_zeta(x, y);
    }
}

static void emitted_source(MiCtx *ctx) {
    char dir[] = "/tmp/mi_special_XXXXXX";
    if (!mkdtemp(dir)) { skip(3, "mkdtemp failed"); return; }
    char cpath[256], sopath[300], cmd[1024];
    snprintf(cpath, sizeof cpath, "%s/sf.c", dir);
    snprintf(sopath, sizeof sopath, "%s/sf.so", dir);
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "#include <math.h>\n");
    cg_special_src_all(&sb);
    sb_put(&sb, "double mi_eval(int k, double x, double y) {\n    switch (k) {\n");
    for (int k = 0; k < F_N; k++)
        sb_printf(&sb, "    case %d: return mi_sf_%s(x%s);\n", k, fn_names[k], k >= F_POLYGAMMA ? ", y" : "");
    sb_put(&sb, "    }\n    return 0;\n}\n");
    mi_write_file(ctx, cpath, sb.s, sb.len);
    sb_free(&sb);
    snprintf(cmd, sizeof cmd, "cc -std=gnu11 -O2 -Wall -Werror -shared -fPIC -o %s %s -lm 2>&1", sopath, cpath);
    void *h = system(cmd) == 0 ? dlopen(sopath, RTLD_NOW) : NULL;
    double (*ev)(int, double, double) = h ? (double (*)(int, double, double))dlsym(h, "mi_eval") : NULL;
    if (!ok(ev != NULL, "the emitted special functions compile with -Wall -Werror")) { skip(2, "no module"); return; }

    /* known values: mpmath at 30 digits */
    static const struct { int k; double x, y, want, tol; } known[] = {
        {F_ERFINV, 0.5, 0, 0.476936276204469873381418353643, 1e-15},
        {F_ERFINV, -0.999, 0, -2.32675376551352449386643369707, 1e-14},
        {F_I0, 1, 0, 1.26606587775200833559824462521, 1e-15},
        {F_I1, 1, 0, 0.56515910399248502720769602761, 1e-15},
        {F_I1, -3, 0, -3.95337021740260939647863574058, 1e-15},
        {F_I0E, 50, 0, 0.0565616266474541925299391880158, 1e-15},
        {F_I1E, 40, 0, 0.0624822290744420607476527643844, 1e-15},
        {F_I1E, 1, 0, 0.207910415349708448869354685508, 1e-15},
        {F_I1E, -8.5, 0, -0.130549355094595855091511663613, 1e-15},
        {F_ERFCX, 30, 0, 0.0187958888614167514971253290494, 1e-15},
        {F_ERFCX, -2, 0, 108.940904389977972412355433825, 1e-15},
        {F_LOG_NDTR, -20, 0, -203.917155371097263936804458655, 1e-15},
        {F_LOG_NDTR, 0.5, 0, -0.368946415288656393065615639043, 1e-15},
        {F_SPH_J0, 0.3, 0, 0.985067355537798584784665566712, 1e-15},
        {F_DIGAMMA, 0.5, 0, -1.963510026021423479440976333, 1e-15},
        {F_DIGAMMA, -2.5, 0, 1.10315664064524318722569033367, 1e-14},
        {F_POLYGAMMA, 1, 1, 1.64493406684822643647241516665, 1e-9},   /* ATen's trigamma series: 5e-10 */
        {F_POLYGAMMA, 3, 2.5, 0.22390584881725205125514750352, 1e-14},
        {F_ZETA, 3, 2, 0.202056903159594285399738161511, 1e-15},
        {F_NDTRI, 0.975, 0, 1.95996398454005423552459443052, 1e-15},
        {F_NDTRI, 1e-20, 0, -9.26234008979840757371735697788, 1e-14},
        {F_NDTRI, 1e-300, 0, -37.0470962993611992372229625079, 1e-14},
    };
    int bad = 0;
    /* the emitted functions, then the interpreter's own (ATen's Cephes code in
     * core/ops/special_cephes.c, no library) */
    for (int who = 0; who < 2; who++) {
        bad = 0;
        for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
            double got = who ? interp(known[i].k, known[i].x, known[i].y) : ev(known[i].k, known[i].x, known[i].y);
            if (rel_err(got, known[i].want) > known[i].tol) {
                bad++;
                diag("%s%s(%g%s) = %.17g, want %.17g", who ? "interpreter " : "", fn_names[known[i].k], known[i].x,
                     known[i].k >= F_POLYGAMMA ? ", ..." : "", got, known[i].want);
            }
        }
        is_int(bad, 0, "%s%zu known values (mpmath) to 1e-14 relative", who ? "the interpreter, GSL or not: the same " : "",
               sizeof known / sizeof *known);
    }

    /* the interpreter's values over a grid, edges included (0, poles, infinities, NaN) */
    static const double xs[] = {-40, -25, -5.5, -2.5, -1.5, -0.3, -1e-5, 0, 1e-7, 0.2, 0.7, 1, 2.5, 7, 15,
                                29.9, 30.1, 50, 200, INFINITY, -INFINITY, NAN};
    static const double ps[] = {0, 1e-300, 1e-100, 1e-20, 1e-8, 0.001, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999, 1 - 1e-12, 1, 1.5, NAN};
    int n = 0;
    bad = 0;
    for (int k = 0; k < F_N; k++) {
        bool prob = k == F_NDTRI || k == F_ERFINV;
        int nx = prob ? (int)(sizeof ps / sizeof *ps) : (int)(sizeof xs / sizeof *xs);
        for (int i = 0; i < nx; i++) {
            double x = prob ? (k == F_ERFINV ? 2 * ps[i] - 1 : ps[i]) : xs[i];
            double y = k == F_POLYGAMMA ? x : 1.5;
            double a = k == F_POLYGAMMA ? (double)(i % 4) : k == F_ZETA ? fabs(x) + 1.25 : x;
            if (k == F_DIGAMMA && x < -20) continue;   /* the reflection's tan(pi r) loses digits far out */
            if (k == F_ERFINV && fabs(x) > 1 - 1e-9 && fabs(x) < 1) continue;   /* Newton on erf (ATen's too) is noise there */
            if (isinf(x) && (k == F_POLYGAMMA || k == F_ZETA || k == F_DIGAMMA)) continue;
            double got = ev(k, a, y), want = interp(k, a, y);
            /* GSL's exp(x^2 + log erfc) loses digits far out; erfinv's Newton steps on erf near +-1 */
            double tol = (k == F_ERFCX && x > 100) || k == F_ERFINV ? 1e-10 : 1e-11;
            n++;
            if (rel_err(got, want) > tol && !(isinf(got) && isinf(want) && (got > 0) == (want > 0))) {
                bad++;
                diag("%s(%g, %g): emitted %.17g, interpreter %.17g", fn_names[k], a, y, got, want);
            }
        }
    }
    is_int(bad, 0, "%d grid points agree with the interpreter's functions", n);
    ok(isnan(ev(F_DIGAMMA, -2, 0)) && isinf(ev(F_DIGAMMA, 0, 0)) && ev(F_DIGAMMA, -0.0, 0) > 0 && isnan(ev(F_ERFINV, 1.5, 0)) &&
       ev(F_NDTRI, 0, 0) == -INFINITY && ev(F_ERFINV, 1, 0) == INFINITY && ev(F_SPH_J0, INFINITY, 0) == 0,
       "ATen's edges: digamma at poles NaN and +-inf at +-0, erfinv(1.5) NaN, ndtri(0) -inf, erfinv(1) inf, spherical j0(inf) 0");
    dlclose(h);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
}

static bool have_nvcc(void) {
    return system("command -v nvcc >/dev/null 2>&1") == 0 || access("/usr/local/cuda/bin/nvcc", X_OK) == 0;
}

static void lowered(ShellEnv *env) {
    char *out = sh_output(env, "load tests/fixtures/lowering/special_fns.py; inputs random 7; lower; sched; exec 1", NULL);
    ok(out && strstr(out, "1 kernel (fusion on)") && !strstr(out, "fallback_"), "cpu: every special function fuses into one C kernel");
    ok(out && strstr(out, "output 0: f32[6, 7] ok") && strstr(out, "output 1: f64[5] ok") && strstr(out, "exec: ok"),
       "cpu: the compiled kernel agrees with the interpreter (f32 and f64)");
    if (out && !strstr(out, "exec: ok")) diag("%s", out);
    free(out);

    /* the same graph with its tensors on cuda */
    char src[] = "tests/fixtures/lowering/special_fns.py", dst[256], cmd[1024];
    snprintf(dst, sizeof dst, "%s/special_cuda.py", env->tmpdir);
    snprintf(cmd, sizeof cmd, "sed 's/cpu\"/cuda:0\"/g' %s > %s", src, dst);
    if (!ok(system(cmd) == 0, "the cuda copy of the graph")) return;
    snprintf(cmd, sizeof cmd, "set device cuda; load %s; lower; sched; codegen", dst);
    out = sh_output(env, cmd, NULL);
    static const char *const fb[] = {"fallback_special_i0e ", "fallback_special_i1e ", "fallback_digamma ", "fallback_polygamma ",
                                     "fallback_special_ndtri ", "fallback_special_log_ndtr ", "fallback_special_spherical_bessel_j0 ",
                                     "fallback_special_zeta "};
    int nfb = 0;
    for (size_t i = 0; out && i < sizeof fb / sizeof *fb; i++) nfb += strstr(out, fb[i]) != NULL;
    is_int(nfb, 8, "cuda: the eight without a Triton spelling are FallbackKernels");
    ok(out && strstr(out, "erfinvf(") && strstr(out, "cyl_bessel_i0f(") && strstr(out, "cyl_bessel_i1f(") && strstr(out, "erfcxf(") &&
       strstr(out, "j0f(") && strstr(out, "y1f(") && strstr(out, "erfinv(") && strstr(out, "cyl_bessel_i0(") && !strstr(out, "mi_sf_"),
       "cuda: the others call CUDA's functions in the kernels (f32 and f64)");
    const char *cu = out ? strstr(out, "/* generated by minductor (cuda)") : NULL;
    if (cu && have_nvcc()) {
        char cpath[256];
        snprintf(cpath, sizeof cpath, "%s/special.cu", env->tmpdir);
        FILE *f = fopen(cpath, "w");
        if (f) { fputs(cu, f); fclose(f); }
        snprintf(cmd, sizeof cmd, "PATH=$PATH:/usr/local/cuda/bin nvcc -c -o %s/special.o %s >/dev/null 2>&1", env->tmpdir, cpath);
        ok(f && system(cmd) == 0, "cuda: nvcc compiles the module");
    } else skip(1, "no nvcc");
    free(out);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    emitted_source(ctx);
    ShellEnv env;
    if (sh_init(&env, "minductor_sfXXXXXX") == 0) {
        lowered(&env);
        sh_cleanup(&env);
    }
    mi_ctx_free(ctx);
    return done_testing();
}
