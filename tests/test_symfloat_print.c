/* test_symfloat_print.c — SymFloat annotations as Inductor prints its post-grad graph:
 * compile_fx.py prints inductor_post_grad_graph with print_readable(fast_sympy_print=True), so a
 * Sym(...) annotation is torch/_inductor/utils.py sympy_str of the expression, not sympy's str()
 * the AOT graph showed (cpu_dynamic_true_train: "(IntTrueDiv(8*s27*s77, 8)) - 1.0" becomes
 * "-1.00000000000000 + IntTrueDiv(8*s27*s77, 8)"). Checked on exact text: 600 random
 * expressions with sympy 1.14's output (tests/fixtures/sym/gen_sympy_fast_str.py), and a graph
 * printed before and after the post-grad passes (tests/fixtures/sym/symfloat_running_var.py,
 * cpu_dynamic_true_train's running_var update, which test_unseen11 runs). */
#include "tap.h"
#include "base/symfloat.h"
#include "fx/graph.h"
#include "fx_passes/passes.h"
#include "tests/support/compiled_check.h"
#include "tests/support/tsv_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

/* symfloat_fast_str(text) is want */
static void fast_is(const char *text, const char *want) {
    StrBuf sb;
    sb_init(&sb);
    bool r = symfloat_fast_str(text, &sb);
    ok(r && sb.s && !strcmp(sb.s, want), "%s -> %s", text, want);
    if (!r || !sb.s || strcmp(sb.s, want)) diag("got %s", r ? (sb.s ? sb.s : "") : "(no parse)");
    sb_free(&sb);
}

static void test_cases(void) {
    fast_is("(IntTrueDiv(8*s27*s77, 8)) - 1.0", "-1.00000000000000 + IntTrueDiv(8*s27*s77, 8)");
    /* a call is an atom printed by str(): as the AOT graph showed it */
    fast_is("FloatTrueDiv(IntTrueDiv(8*s27*s77, 8), (IntTrueDiv(8*s27*s77, 8)) - 1.0)",
            "FloatTrueDiv(IntTrueDiv(8*s27*s77, 8), (IntTrueDiv(8*s27*s77, 8)) - 1.0)");
    fast_is("0.100000000000000", "0.100000000000000");
    fast_is("1.0 - (IntTrueDiv(s0, 2))", "1.00000000000000 - IntTrueDiv(s0, 2)");   /* 'a - b' kept */
    fast_is("ToFloat(s0) - ToFloat(s1)", "-ToFloat(s1) + ToFloat(s0)");          /* Mul before ToFloat */
    fast_is("2.5*ToFloat(s0) + 1.0e-5", "1.00000000000000e-5 + 2.50000000000000 * ToFloat(s0)");
    fast_is("-1.0*ToFloat(s1)", "-1.00000000000000 * ToFloat(s1)");   /* Float(-1.0) != -1 */
    /* a '%' / '//' term kept as text after another factor or a '-': parenthesized, else it
     * reads as (oo * A) % 8 (fuzz_sym, helper fuzz12: check refused the printed text) */
    fast_is("(30//42-0*0*0*0*0*0*-2) % 8*oo+ x+ x1", "x + x1 + oo * ((30//42-0*0*0*0*0*0*-2) % 8)");
    fast_is("-(s0 % 8)", "-(s0 % 8)");
    fast_is("2*(s0 // 3)", "2 * (s0 // 3)");
    fast_is("2*(s0 / 3)", "2 * s0 / 3");
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "x");
    ok(!symfloat_fast_str("IntTrueDiv(s0, ", &sb) && !strcmp(sb.s, "x"), "text that does not parse: false, nothing appended");
    sb_free(&sb);
}

/* symfloat_fast_str as a TsvOurs */
static bool fast_str_of(MiCtx *c, const char *in, StrBuf *out, void *user) {
    (void)c, (void)user;
    return symfloat_fast_str(in, out);
}

/* every case of tests/fixtures/sym/sympy_fast_str.tsv */
static void test_fixture(void) {
    TsvTally t = tsv_compare(ctx, "tests/fixtures/sym/sympy_fast_str.tsv", "sympy_str", fast_str_of, NULL);
    ok(t.n >= 0, "read tests/fixtures/sym/sympy_fast_str.tsv");
    is_int(t.n, 600, "600 sympy cases");
    is_int(t.same, t.n, "symfloat_fast_str matches sympy_str on every case");
}

/* The loaded AOT graph prints its annotations as read; after the post-grad passes the SymFloat
 * annotations print as inductor_post_grad_graph shows them. */
static void test_graph(void) {
    Graph *g = cc_parsed_file(ctx, "tests/fixtures/sym/symfloat_running_var.py");
    if (!ok(g != NULL, "the graph loads")) return;
    char *before = fx_print(g, false);
    ok(before && strstr(before, "sub: \"Sym((IntTrueDiv(8*s0*s1, 8)) - 1.0)\""), "the loaded graph prints the annotation as read");
    free(before);
    PassManager *pm = pm_new(ctx, g, NULL, 0);
    ok(pm_run_all(pm) == pm_num_passes(pm), "the post-grad passes run");
    char *after = fx_print(pm_graph(pm), false);
    ok(after && strstr(after, "sub: \"Sym(-1.00000000000000 + IntTrueDiv(8*s0*s1, 8))\""),
       "after them: sympy_str of the same expression");
    ok(after && strstr(after, "truediv_1: \"Sym(FloatTrueDiv(IntTrueDiv(8*s0*s1, 8), (IntTrueDiv(8*s0*s1, 8)) - 1.0))\"") &&
       strstr(after, "truediv: \"Sym(IntTrueDiv(8*s0*s1, 8))\""), "calls print as sympy's str() printed them");
    if (after && !strstr(after, "-1.00000000000000 + IntTrueDiv")) diag("%s", after);
    free(after);
    pm_free(pm);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_cases();
    test_fixture();
    test_graph();
    mi_ctx_free(ctx);
    return done_testing();
}
