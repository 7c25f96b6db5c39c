/* blas_core.c — make the BLAS run the kernels this CPU has. Part of the runtime stage: the
 * generated modules (codegen_c.c's mi_gemm) and the reference interpreter's matmuls call the
 * process's one OpenBLAS, so rt_compile tunes it once before the first module runs.
 *
 * OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernel set ("core") from cpuid when it
 * loads; a release older than the CPU does not know it and falls back to an older core:
 * 0.3.21 runs its Haswell (AVX2) kernels on an AVX-512 Zen 5 and Prescott (SSE3) ones on
 * unknown Intel models, 2-5x slower per gemm than its SkylakeX kernels. OPENBLAS_CORETYPE picks
 * the core, but is read only when the library initialises; OpenBLAS re-reads it in
 * gotoblas_dynamic_init() after gotoblas_dynamic_quit(), which is what rt_blas_tune does (with
 * no BLAS call in flight). A user's own OPENBLAS_CORETYPE is left as it is unless
 * MINDUCTOR_BLAS_CORETYPE says otherwise ("cpuid": choose from cpuid anyway; a core name: that
 * core); any other BLAS (BLIS, MKL, netlib) is left alone: the symbols are weak and absent there. */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CBLAS
extern char *openblas_get_corename(void) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));
#endif

/* What an OpenBLAS core name's kernels need: 3 AVX-512, 2 AVX2 + FMA, 1 AVX, 0 SSE (and
 * anything unknown). Names as openblas_get_corename() spells them. */
static int core_level(const char *name) {
    static const char *const l3[] = {"skylakex", "cooperlake", "sapphirerapids", NULL};
    static const char *const l2[] = {"haswell", "zen", NULL};
    static const char *const l1[] = {"sandybridge", "bulldozer", "piledriver", "steamroller", "excavator", NULL};
    for (int i = 0; l3[i]; i++) if (!strcasecmp(name, l3[i])) return 3;
    for (int i = 0; l2[i]; i++) if (!strcasecmp(name, l2[i])) return 2;
    for (int i = 0; l1[i]; i++) if (!strcasecmp(name, l1[i])) return 1;
    return 0;
}

/* The best core this build of OpenBLAS has for this CPU, from cpuid (GCC's
 * __builtin_cpu_supports also checks that the OS saves the wide registers): Cooperlake on
 * AVX-512 with BF16, SkylakeX on AVX-512 F/BW/DQ/VL, Haswell on AVX2 + FMA, Sandybridge on AVX.
 * A core the library was built without (no gotoblas_NAME table) is skipped. NULL: none. */
static const char *cpuid_core(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    struct { const char *name, *table; bool ok; } c[] = {
        {"Cooperlake", "gotoblas_COOPERLAKE", avx512 && __builtin_cpu_supports("avx512bf16")},
        {"SkylakeX", "gotoblas_SKYLAKEX", avx512},
        {"Haswell", "gotoblas_HASWELL", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
        {"Sandybridge", "gotoblas_SANDYBRIDGE", __builtin_cpu_supports("avx")},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i].ok && dlsym(RTLD_DEFAULT, c[i].table)) return c[i].name;
#endif
    return NULL;
}

const char *rt_blas_choose(const char *detected, const char *openblas_env, const char *mi_env, const char *best,
                           char *why, size_t n) {
    snprintf(why, n, "%s", "");
    if (mi_env && *mi_env && strcmp(mi_env, "cpuid") != 0) {   /* a core named outright */
        snprintf(why, n, "MINDUCTOR_BLAS_CORETYPE=%s", mi_env);
        return strcasecmp(mi_env, detected) ? mi_env : NULL;
    }
    bool by_cpuid = mi_env && !strcmp(mi_env, "cpuid");
    if (openblas_env && *openblas_env && !by_cpuid) {
        snprintf(why, n, "OPENBLAS_CORETYPE=%s%s%s", openblas_env, best && core_level(best) > core_level(detected) ? "; cpuid offers " : "",
                 best && core_level(best) > core_level(detected) ? best : "");
        return NULL;
    }
    if (!best || core_level(best) <= core_level(detected)) {
        if (openblas_env && *openblas_env) snprintf(why, n, "OPENBLAS_CORETYPE=%s", openblas_env);
        return NULL;
    }
    if (openblas_env && *openblas_env) snprintf(why, n, "chosen from cpuid over OPENBLAS_CORETYPE=%s", openblas_env);
    else snprintf(why, n, "chosen from cpuid; OpenBLAS detected %s", detected);
    return best;
}

typedef struct BlasTune { char note[200]; } BlasTune;
static BlasTune tune_result;   /* written once under pthread_once: the process's one BLAS */
static pthread_once_t tune_once = PTHREAD_ONCE_INIT;

static void tune(void) {
    BlasTune *t = &tune_result;
    snprintf(t->note, sizeof t->note, "no OpenBLAS");
#ifdef HAVE_CBLAS
    if (!openblas_get_corename) return;
    const char *cur = openblas_get_corename();
    snprintf(t->note, sizeof t->note, "OpenBLAS core %s", cur ? cur : "?");
    if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit || !cur) return;   /* not a DYNAMIC_ARCH build */
    char was[40], why[120];
    snprintf(was, sizeof was, "%s", cur);
    const char *user = getenv("OPENBLAS_CORETYPE");
    char keep[64] = "";
    if (user) snprintf(keep, sizeof keep, "%s", user);
    const char *want = rt_blas_choose(was, user, getenv("MINDUCTOR_BLAS_CORETYPE"), cpuid_core(), why, sizeof why);
    char table[64];
    int k = snprintf(table, sizeof table, "gotoblas_");
    for (const char *c = want ? want : ""; *c && k < (int)sizeof table - 1; c++) table[k++] = (char)toupper((unsigned char)*c);
    table[k] = 0;
    if (want && !dlsym(RTLD_DEFAULT, table)) {   /* OpenBLAS would fall back to Prescott, or exit */
        snprintf(why, sizeof why, "this OpenBLAS has no core '%s'", want);
        want = NULL;
    }
    if (want) {
        setenv("OPENBLAS_CORETYPE", want, 1);
        gotoblas_dynamic_quit();
        gotoblas_dynamic_init();
        if (keep[0]) setenv("OPENBLAS_CORETYPE", keep, 1); else unsetenv("OPENBLAS_CORETYPE");
        cur = openblas_get_corename();
    }
    snprintf(t->note, sizeof t->note, "OpenBLAS core %s%s%s%s", cur ? cur : "?", why[0] ? " (" : "", why, why[0] ? ")" : "");
#endif
}

const char *rt_blas_tune(void) {
    pthread_once(&tune_once, tune);
    return tune_result.note;
}

const char *rt_blas_cpuid_core(void) { return cpuid_core(); }
