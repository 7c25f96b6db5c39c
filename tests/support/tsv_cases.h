/* tsv_cases.h — the recorded-text tables the printer tests share: a file of "INPUT\tWANT" lines
 * written by a Python generator from PyTorch's own code (tests/fixtures/sym/sympy_str.tsv:
 * sympy's str(); sympy_fast_str.tsv: Inductor's sympy_str), each input run through our function
 * and its text compared with WANT (tests/test_sym.c, tests/test_symfloat_print.c).
 *
 *     TsvTally t = tsv_compare(ctx, "tests/fixtures/sym/sympy_str.tsv", "sympy", ours, NULL);
 *     is_int(t.n, 800, "800 sympy cases");
 *     is_int(t.same, t.n, "sym_str matches sympy's str() on every case");
 *
 * Test support only (tests/support/ -> libtestsupport.a); nothing here is part of the product. */
#ifndef TSV_CASES_H
#define TSV_CASES_H

#include "base/mi.h"

/* Our text for one case's input, appended to out; false when there is none (does not parse). */
typedef bool (*TsvOurs)(MiCtx *ctx, const char *in, StrBuf *out, void *user);

/* n: the cases read (-1 when the file cannot be read: ctx's error names it); same: how many
 * gave exactly WANT. */
typedef struct TsvTally { int n, same; } TsvTally;

/* Every case of the table at path (lines starting with '#' and lines without a tab are
 * comments) through ours; the first five differences on stderr as TAP comments,
 * "# INPUT: LABEL \"WANT\", ours \"GOT\"". */
TsvTally tsv_compare(MiCtx *ctx, const char *path, const char *label, TsvOurs ours, void *user);

#endif
