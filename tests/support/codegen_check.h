/* codegen_check.h — a graph through lower -> sched -> codegen -> rt_compile in one call
 * (cg_compile, for every test that runs the compiled module or reads its source), and the
 * compile-and-compare step of the C code generator's tests (cg_check_compile: an FX text run
 * and compared with the reference interpreter; test_codegen_loops, test_codegen_vec). */
#ifndef MI_TEST_CODEGEN_CHECK_H
#define MI_TEST_CODEGEN_CHECK_H

#include "base/mi.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"
#include "scheduler/scheduler.h"

#include <stdlib.h>

/* The stages of one graph's compile; a stage that did not run (or failed) is NULL. */
typedef struct CgBuild {
    IrModule *m;     /* ir_lower */
    Schedule *s;     /* sched_run */
    char *src;       /* codegen_c, or codegen_cuda when ctx->target is MI_DEV_CUDA */
    RtModule *rt;    /* rt_compile (C only, and not with CG_SOURCE) */
} CgBuild;
enum { CG_SOURCE = 1 };   /* stop at the source (no rt_compile) */

/* Lower g, schedule it, generate its source and compile it (each stage when the one before gave
 * a result; ctx->fusion and ctx->target as the caller set them). 0 when every stage asked for
 * ran, else -1 with ctx's error. Free with cg_free even on failure. Example:
 *   CgBuild b;
 *   if (cg_compile(ctx, g, &b, 0) == 0) rt_run(ctx, b.rt, g, in, nin, &out, &nout, NULL);
 *   cg_free(&b); */
int cg_compile(MiCtx *ctx, const Graph *g, CgBuild *b, unsigned flags);
/* Free what cg_compile made and zero b. */
void cg_free(CgBuild *b);

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
