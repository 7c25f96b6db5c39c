/* codegen_check.h — compile an FX graph to C, run it and compare with the reference interpreter
 * (the tests of the C code generator's loop forms: test_codegen_loops, test_codegen_vec). */
#ifndef MI_TEST_CODEGEN_CHECK_H
#define MI_TEST_CODEGEN_CHECK_H

#include "base/mi.h"

#include <stdlib.h>

/* Parse, lower, schedule (fusion on), generate C for `fx`, compile it, run it on random inputs
 * (nan_at >= 0: a NaN into input 0 there) and compare with the interpreter (rtol 1e-4, atol
 * 1e-5). *agree = 1 when it agrees; otherwise *report (malloc'd) says why, with the source.
 * Returns the generated source (caller frees) or NULL. Example:
 *   char *src = cg_check_compile(ctx, fx, -1, &agree, &why); */
char *cg_check_compile(MiCtx *ctx, const char *fx, long nan_at, int *agree, char **report);
/* Occurrences of pat in s (0 when s is NULL). */
int cg_check_count(const char *s, const char *pat);

#ifdef TAP_H
/* In a test that includes tap.h first: cg_check_compile as one TAP point ("NAME agrees with the
 * interpreter", the report as a diagnostic when not). Returns the source (caller frees). */
static inline char *cg_check(MiCtx *ctx, const char *name, const char *fx, long nan_at) {
    int agree;
    char *why;
    char *src = cg_check_compile(ctx, fx, nan_at, &agree, &why);
    ok(agree, "%s%s agrees with the interpreter", name, nan_at >= 0 ? " (with a NaN)" : "");
    if (!agree) diag("%s", why ? why : "");
    free(why);
    return src;
}
#endif

#endif
