/* tap.h — a small TAP producer for the test programs (run by prove).
 *
 *   plan(n) / done_testing()      declare the count up front or at the end
 *   ok(cond, fmt, ...)            one test point
 *   is_int(got, want, name)       integers, with a diagnostic on mismatch
 *   is_str(got, want, name)       strings (NULL-safe), with a diagnostic on mismatch
 *   is_double(got, want, tol, name)
 *   diag(fmt, ...)                a '# ' comment line on stderr
 *   skip(n, why)                  n skipped points
 *   exit_status()                 0 when every point passed */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "base/lsan_defaults.h"   /* LeakSanitizer's options and suppressions, as the shell's */

static int tap_run_, tap_failed_, tap_planned_;

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void diag(const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    char buf[8192]; vsnprintf(buf, sizeof buf, fmt, ap); va_end(ap);
    fflush(stdout);
    for (char *line = buf, *nl; line && *line; line = nl) {
        nl = strchr(line, '\n');
        if (nl) *nl++ = 0;
        fprintf(stderr, "# %s\n", line);
    }
}

static __attribute__((unused)) void plan(int n) { tap_planned_ = n; printf("1..%d\n", n); }

static int ok_(int cond, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int ok_(int cond, const char *file, int line, const char *fmt, ...) {
    char name[1024]; va_list ap; va_start(ap, fmt); vsnprintf(name, sizeof name, fmt, ap); va_end(ap);
    ++tap_run_;
    printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_run_, name);
    if (!cond) { ++tap_failed_; diag("  Failed test '%s'\n  at %s line %d.", name, file, line); }
    fflush(stdout);
    return cond;
}
#define ok(cond, ...) ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do { long long g_ = (long long)(got), w_ = (long long)(want); \
    if (!ok(g_ == w_, __VA_ARGS__)) diag("         got: %lld\n    expected: %lld", g_, w_); } while (0)
#define is_str(got, want, ...) do { const char *g_ = (got), *w_ = (want); \
    int e_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_; \
    if (!ok(e_, __VA_ARGS__)) diag("         got: '%s'\n    expected: '%s'", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); } while (0)
#define is_double(got, want, tol, ...) do { double g_ = (got), w_ = (want); \
    if (!ok(fabs(g_ - w_) <= (tol), __VA_ARGS__)) diag("         got: %.17g\n    expected: %.17g", g_, w_); } while (0)

static __attribute__((unused)) void skip(int n, const char *why) {
    for (int i = 0; i < n; i++) printf("ok %d # skip %s\n", ++tap_run_, why);
}

static __attribute__((unused)) int done_testing(void) {
    if (!tap_planned_) printf("1..%d\n", tap_run_);
    else if (tap_planned_ != tap_run_) diag("planned %d tests but ran %d", tap_planned_, tap_run_);
    return tap_failed_ || (tap_planned_ && tap_planned_ != tap_run_) ? 1 : 0;
}
#define exit_status() done_testing()

#endif
