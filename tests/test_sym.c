/* test_sym.c — symbolic expressions (core/base/sym.c): canonical forms, printing as PyTorch
 * prints, parsing round trips and errors, simplification under ranges, interval bounds,
 * C printing (compiled and run against sym_eval), and a randomized differential check. */
#include "base/sym.h"
#include "base/symfloat.h"
#include "tap.h"
#include "tests/support/tsv_cases.h"

#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

static MiCtx *ctx;
static SymCtx *S;

static Expr *P(const char *t) {
    Expr *e = sym_parse(ctx, t, NULL);
    if (!e) {
        char b[1200];
        diag("parse failed: %s", mi_err_str(ctx, b, sizeof b));
    }
    return e;
}

static char sbuf[4][4096];
static int sbi;
static const char *STR(const Expr *e) {
    char *b = sbuf[sbi++ & 3];
    return e ? sym_str(e, b, 4096) : "(null)";
}
static const char *CSTR(const Expr *e) {
    char *b = sbuf[sbi++ & 3];
    return e ? sym_c(e, b, 4096) : "(null)";
}

static void test_canonical(void) {
    Expr *x = sym_symbol(S, "x"), *y = sym_symbol(S, "y"), *s0 = sym_symbol(S, "s0");
    Expr *two = sym_int(S, 2), *three = sym_int(S, 3);
    ok(sym_symbol(S, "x") == x, "symbols are interned");
    ok(sym_int(S, 2) == two, "integers are interned");
    ok(sym_add(S, x, x) == sym_mul(S, two, x), "x + x == 2*x");
    ok(sym_mul(S, sym_mul(S, two, x), three) == sym_mul(S, sym_int(S, 6), x), "2*x*3 == 6*x");
    ok(sym_sub(S, x, x) == sym_int(S, 0), "x - x == 0");
    ok(sym_mul(S, x, sym_int(S, 0)) == sym_int(S, 0), "x*0 == 0");
    ok(sym_mul(S, x, sym_int(S, 1)) == x, "x*1 == x");
    ok(sym_add(S, x, y) == sym_add(S, y, x), "x + y == y + x");
    ok(sym_add(S, sym_add(S, x, sym_int(S, 1)), x) == sym_add(S, sym_mul(S, two, x), sym_int(S, 1)),
       "x + 1 + x == 2*x + 1");
    ok(sym_mul(S, sym_mul(S, x, y), s0) == sym_mul(S, s0, sym_mul(S, y, x)), "products flattened and sorted");
    ok(sym_floordiv(S, x, sym_int(S, 1)) == x, "FloorDiv(x, 1) == x");
    ok(sym_floordiv(S, sym_int(S, -7), two) == sym_int(S, -4), "-7 // 2 == -4 (floor)");
    ok(sym_floordiv(S, sym_int(S, 7), sym_int(S, -2)) == sym_int(S, -4), "7 // -2 == -4");
    ok(sym_mod(S, sym_int(S, -7), three) == sym_int(S, 2), "-7 %% 3 == 2 (python)");
    ok(sym_mod(S, sym_int(S, 7), sym_int(S, -3)) == sym_int(S, -2), "7 %% -3 == -2 (python)");
    ok(sym_ceildiv(S, sym_int(S, 7), two) == sym_int(S, 4), "CeilDiv(7, 2) == 4");
    ok(sym_ceildiv(S, sym_int(S, -7), two) == sym_int(S, -3), "CeilDiv(-7, 2) == -3");
    ok(sym_modidx(S, sym_int(S, 37), sym_int(S, 4), sym_int(S, 5)) == sym_int(S, 4), "ModularIndexing(37, 4, 5) == 4");
    ok(sym_min(S, sym_int(S, 3), sym_int(S, 5)) == sym_int(S, 3), "Min(3, 5) == 3");
    ok(sym_max(S, sym_int(S, 3), sym_int(S, 5)) == sym_int(S, 5), "Max(3, 5) == 5");
    ok(sym_max(S, x, sym_add(S, x, sym_int(S, 1))) == sym_add(S, x, sym_int(S, 1)), "Max(x, x + 1) == x + 1");
    ok(sym_min(S, x, y) == sym_min(S, y, x), "Min is symmetric");
    ok(sym_min(S, x, sym_min(S, y, x)) == sym_min(S, x, y), "Min flattened and deduplicated");
    ok(P("Min(4, Max(8, y))") == sym_int(S, 4), "Min(4, Max(8, y)) == 4 (absorption)");
    ok(P("Max(x, Min(x, y))") == x, "Max(x, Min(x, y)) == x");
    ok(P("Max(Min(-9, s77), Min(-9, -5*d0, s77))") == P("Min(-9, s77)"), "Max of Mins with nested arg sets");
    ok(P("Min(-4, Min(0, x) - 329)") == P("Min(0, x) - 329"), "Min decided by interval bounds");
    ok(P("(64*x1 + x0)//64") == P("x1 + FloorDiv(x0, 64)"), "FloorDiv(64*x1 + x0, 64) pulls x1 out");
    ok(P("(2*x + 4*y)//4") == P("(x + 2*y)//2"), "gcd divided out of FloorDiv");
    ok(P("(x//4)//8") == P("x//32"), "nested FloorDiv by constants merged");
    ok(P("x//-2") == P("(-x)//2"), "negative divisor made positive");
    ok(P("x % 8") == P("ModularIndexing(x, 1, 8)"), "Mod by a constant is ModularIndexing(x, 1, c)");
    ok(P("ModularIndexing(x + 32*y, 4, 8)") == P("ModularIndexing(x, 4, 8)"), "ModularIndexing drops multiples of div*mod");
    ok(P("ModularIndexing(x//4, 2, 8)") == P("ModularIndexing(x, 8, 8)"), "ModularIndexing of FloorDiv merged");
    ok(P("ModularIndexing(x, 1, 1)") == sym_int(S, 0), "ModularIndexing(x, 1, 1) == 0");
    ok(P("(x + 1)*(y - 1)") == P("x*y - x + y - 1"), "products of sums are expanded");
    ok(P("s0*s0") == P("s0**2"), "x*x == x**2");
    ok(P("2*(x + y) - 2*y") == P("2*x"), "distribution collects terms");
    Expr *e = P("x0 + 64*x1");
    ok(e && e->kind == EX_ADD && e->args[0] == sym_symbol(S, "x0") && e->n == 2, "sum args in print order");
    e = P("3 + x");
    ok(e && e->kind == EX_ADD && e->args[1] == sym_int(S, 3), "constant term last");
    e = P("x*y*5");
    ok(e && e->kind == EX_MUL && e->args[0] == sym_int(S, 5), "coefficient first");
    int64_t v;
    ok(sym_is_int(sym_int(S, 42), &v) && v == 42 && !sym_is_int(x, NULL), "sym_is_int");
    ok(sym_has_symbols(P("x + 1")) && !sym_has_symbols(P("3*4")), "sym_has_symbols");
    sym_take_overflow(S);
    sym_mul(S, sym_int(S, INT64_MAX), two);
    ok(sym_take_overflow(S) && !sym_take_overflow(S), "overflow in folding sets the sticky flag once");
}

static void test_printing(void) {
    static const char *cases[][2] = {
        {"s77", "s77"},
        {"s0*2", "2*s0"},
        {"1 + s0", "s0 + 1"},
        {"s1*s0", "s0*s1"},
        {"s0 - 1", "s0 - 1"},
        {"64*x1 + x0", "x0 + 64*x1"},
        {"d1 + 10*d0", "10*d0 + d1"},
        {"d1 + s27*d0", "d0*s27 + d1"},
        {"128 + c0", "c0 + 128"},
        {"d3 + 64*d2 + 4096*d1 + 16384*d0", "16384*d0 + 4096*d1 + 64*d2 + d3"},
        {"r0_1 + 64*x0", "r0_1 + 64*x0"},
        {"1 - x", "1 - x"},
        {"5 - 2*x", "5 - 2*x"},
        {"y - x", "-x + y"},
        {"-x - 1", "-x - 1"},
        {"-x", "-x"},
        {"-3", "-3"},
        {"x*x*y", "x**2*y"},
        {"x0//16", "(x0//16)"},
        {"16*(x0//16) + ModularIndexing(x0, 1, 16)", "16*((x0//16)) + ModularIndexing(x0, 1, 16)"},
        {"x1 + (x0//64)", "x1 + ((x0//64))"},
        {"(x0 + 1)//4", "((x0 + 1)//4)"},
        {"(s0*s1)//16", "((s0*s1)//16)"},
        {"-(x//2)", "-((x//2))"},
        {"ks0*ks1 - 16*((ks0*ks1)//16)", "ks0*ks1 - 16*(((ks0*ks1)//16))"},
        {"ModularIndexing(x0, 1, 64)", "ModularIndexing(x0, 1, 64)"},
        {"x % y", "Mod(x, y)"},
        {"Min(x, 64)", "Min(64, x)"},
        {"Max(s0, s1, 1)", "Max(1, s0, s1)"},
        {"CeilDiv(s0, 4)", "CeilDiv(s0, 4)"},
        {"(x + 1)*(y + 1)", "x*y + x + y + 1"},
        {"x*(y//2)", "x*((y//2))"},
        {"Min(d0 + 63, 69 - x0)", "Min(69 - x0, d0 + 63)"},
        {"27946 - c1*c1", "27946 - c1**2"},
        {"Min(s0//4, 3*ks0)", "Min(3*ks0, (s0//4))"},
        {"Max(Min(x, y), Max(y, 2))", "Max(2, y)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        is_str(STR(P(cases[i][0])), cases[i][1], "str(%s)", cases[i][0]);
    char small[8];
    is_str(sym_str(P("x0 + 64*x1"), small, sizeof small), "x0 + 64", "sym_str truncates to the buffer");
    StrBuf sb;
    sb_init(&sb);
    sym_str_sb(P("2*s0"), &sb);
    sb_put(&sb, " | ");
    sym_c_sb(P("2*s0"), &sb);
    is_str(sb.s, "2*s0 | (2LL*s0)", "sym_str_sb / sym_c_sb append");
    sb_free(&sb);
}

/* sym_c: the C the code generators index with (helpers of sym_c_prelude, python semantics) */
static void test_c_printing(void) {
    static const char *cases[][2] = {
        {"x0 + 64*x1", "(x0 + (64LL*x1))"},
        {"x0//16", "mi_floordiv(x0, 16LL)"},
        {"(x0 - 1)//16", "mi_floordiv((x0 + -1LL), 16LL)"},
        {"ModularIndexing(x0, 16, 4)", "mi_modidx(x0, 16LL, 4LL)"},
        {"ModularIndexing(x0 - 5, 1, 4)", "mi_modidx((x0 + -5LL), 1LL, 4LL)"},
        {"CeilDiv(s0, 16)", "mi_ceildiv(s0, 16LL)"},
        {"Mod(x, s0)", "mi_mod(x, s0)"},
        {"Min(x0, s0, 7)", "mi_min(7LL, mi_min(s0, x0))"},
        {"Max(x0, 1)", "mi_max(1LL, x0)"},
        {"4294967296*x0 - 1", "((4294967296LL*x0) + -1LL)"},
        {"-x*y", "(-1LL*x*y)"},
        {"-9223372036854775808", "(-9223372036854775807LL - 1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        is_str(CSTR(P(cases[i][0])), cases[i][1], "c(%s)", cases[i][0]);
    ok(strstr(sym_c_prelude(), "mi_floordiv") && strstr(sym_c_prelude(), "mi_modidx") && strstr(sym_c_prelude(), "mi_max"),
       "sym_c_prelude defines the helpers");
}

/* The degree limit (MiLimits.sym_degree): products of sums past it stay products, with the
 * same value; the limit can be raised. */
static void test_degree_limit(void) {
    Expr *a = P("(s0 + 2)**5"), *b = P("(s0 + 3)**30");
    ok(b && b->kind == EX_ADD && b->n == 31, "(s0 + 3)**30 is multiplied out (31 terms)");
    Expr *p = sym_mul(ctx->sym, a, b);
    ok(p && p->kind == EX_MUL, "a product of degree 35 > 32 stays a product");
    SymBinding z = {"s0", 0};
    int64_t v = 0;
    ok(sym_eval(ctx, p, &z, 1, &v) == 0 && v == 6588516227028768LL, "with the same value (2**5 * 3**30 at s0 = 0)");
    mi_clear_err(ctx);
    ok(!sym_parse(ctx, "x**40", NULL), "x**40 is over the default limit");
    is_int(mi_limit_set(ctx, "sym_degree", 64), 0, "set limit sym_degree 64");
    ok(sym_parse(ctx, "x**40", NULL) != NULL, "then x**40 parses");
    Expr *q = sym_mul(ctx->sym, a, b);
    ok(q && q->kind == EX_ADD && q->n == 36, "and the degree-35 product is multiplied out (36 terms)");
    is_int(mi_limit_set(ctx, "sym_degree", 0), -1, "0 is out of range");
    is_int(mi_limit_set(ctx, "bogus", 3), -1, "unknown limit");
    ok(strstr(ctx->err.msg, "unknown limit 'bogus' (limits: sym_degree, pattern_matches, fusion_rounds, draw_nodes, while_iterations)") != NULL,
       "the error lists the limits: %s", ctx->err.msg);
    mi_limit_set(ctx, "sym_degree", 32);
}

static void test_parse_errors(void) {
    static const struct { const char *text; int col; const char *msg; } cases[] = {
        {"s0 +", 5, "expected an expression, found end of text"},
        {"(s0", 4, "expected ')' to close '(' at column 1"},
        {"FloorDiv(s0, 2", 15, "expected ',' or ')'"},
        {"FloorDiv(1)", 1, "FloorDiv takes 2 arguments, got 1"},
        {"ModularIndexing(1, 2, 3, 4)", 26, "takes at most 3 arguments"},
        {"foo(1)", 1, "unknown function 'foo'"},
        {"s0/2", 3, "true division '/' is not supported"},
        {"99999999999999999999", 1, "out of the int64 range"},
        {"9223372036854775807 + 1", 21, "integer overflow"},
        {"3037000500**2", 11, "integer overflow"},
        {"x**-1", 2, "exponent must be a non-negative integer constant"},
        {"x**33", 2, "exponent 33 is over the degree limit (limit sym_degree = 32; raise it with 'set limit sym_degree N')"},
        {"Max(0,s1  --2)**240", 15, "exponent 240 is over the degree limit"},
        {"x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x", 64, "degree 33 is over the degree limit"},
        {"x**y", 2, "exponent must be a non-negative integer constant"},
        {"s0 s1", 4, "unexpected 's' after the expression"},
        {"", 1, "expected an expression"},
        {"2x", 2, "unexpected 'x' after the number"},
        {"s0 + $", 6, "found '$'"},
        {"Min()", 5, "expected an expression"},
    };
    char b[1200];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mi_clear_err(ctx);
        Expr *e = sym_parse(ctx, cases[i].text, NULL);
        ok(!e && ctx->err.col == cases[i].col && strstr(ctx->err.msg, cases[i].msg),
           "parse error for \"%s\"", cases[i].text);
        if (e || ctx->err.col != cases[i].col || !strstr(ctx->err.msg, cases[i].msg))
            diag("got col %d: %s", ctx->err.col, mi_err_str(ctx, b, sizeof b));
    }
    /* deep nesting is an error, not a crash */
    char deep[2100];
    memset(deep, '(', 1000);
    deep[1000] = 'x';
    memset(deep + 1001, ')', 1000);
    deep[2001] = 0;
    ok(!sym_parse(ctx, deep, NULL) && strstr(ctx->err.msg, "nested too deeply"), "1000 nested parentheses rejected");
    memset(deep, '-', 2000);
    deep[2000] = 'x';
    deep[2001] = 0;
    ok(!sym_parse(ctx, deep, NULL) && strstr(ctx->err.msg, "nested too deeply"), "2000 unary minuses rejected");
    /* end pointer: stop at the first unconsumed char */
    const char *end = NULL;
    Expr *e = sym_parse(ctx, "s0*s1, 1]", &end);
    ok(e == P("s0*s1") && end && strcmp(end, ", 1]") == 0, "sym_parse with end stops before ','");
    ok(P("  s0 \t+ 1 ") == P("s0 + 1"), "whitespace ignored");
    ok(P("-9223372036854775808") == sym_int(S, INT64_MIN), "INT64_MIN literal");
    ok(P("-2**2") == sym_int(S, -4), "-2**2 == -(2**2)");
    ok(P("FloorDiv(x, 4)") == P("x//4") && P("CleanDiv(x, 4)") == P("x//4") && P("Identity(x)") == P("x"),
       "FloorDiv/CleanDiv/Identity");
    ok(P("PythonMod(x, 8)") == P("x % 8"), "PythonMod");
    ok(P("x - -1") == P("x + 1"), "binary minus of negative");
    Expr *m = sym_add(S, sym_symbol(S, "s0"), sym_int(S, INT64_MIN));
    is_str(STR(m), "s0 - 9223372036854775808", "INT64_MIN constant term prints like sympy");
    ok(P("s0 - 9223372036854775808") == m, "... and parses back");
    m = sym_add(S, sym_symbol(S, "s0"), sym_mul(S, sym_int(S, INT64_MIN), sym_symbol(S, "x")));
    ok(P(STR(m)) == m, "s0 - 9223372036854775808*x parses back");
    ok(P("s0 - 9223372036854775808*((x//2))") != NULL, "... also with a FloorDiv factor");
    ok(!sym_parse(ctx, "s0 - 9223372036854775808//2", NULL) && strstr(ctx->err.msg, "out of the int64 range"),
       "s0 - 9223372036854775808//2 rejected (not representable)");
}

/* One grammar (sym_parse.c) under two semantics: what sizes write (FloorDiv printed "(a//b)",
 * PythonMod "a % b", unary '+', tabs) the SymFloat side reads too, with Python's values; what
 * only SymInt / SymFloat write (floats, '/', IntTrueDiv) sizes refuse by name. */
static void test_one_grammar(void) {
    static const struct { const char *text; double want; } vals[] = {
        {"(s0//2) + 1", 2},                 /* s0 = 3 */
        {"-7 % s0", 2},                     /* Python modulo */
        {"+s0\t* 2", 6},
        {"-2.5**2", -6.25},                 /* -(2.5**2) */
        {"-2**2", -4},
        {"1.00000000000000e-5*s0", 3e-5},
        {"IntTrueDiv(s0, 2)**2", 2.25},
        {"s0 - 9223372036854775808 + 9223372036854775807", 2},
        {"Max(1, s0, 2*s0 - 1, 4)", 5},
    };
    SymBinding b = {"s0", 3};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        const char *text = vals[i].text;
        SymNum v = {0};
        int rc = symfloat_eval(ctx, text, &b, 1, &v);
        double got = v.is_int ? (double)v.i : v.f;
        ok(rc == 0 && fabs(got - vals[i].want) < 1e-15, "symfloat_eval(%s) = %g", vals[i].text, vals[i].want);
        if (rc) diag("%s", ctx->err.msg);
        Expr *e = strchr(text, '.') || strstr(text, "**") ? NULL : sym_parse(ctx, text, NULL);
        int64_t iv;
        if (e) ok(sym_eval(ctx, e, &b, 1, &iv) == 0 && iv == (int64_t)vals[i].want, "sym_parse(%s) evaluates the same", vals[i].text);
    }
    mi_clear_err(ctx);
    ok(!sym_parse(ctx, "IntTrueDiv(s0, 2)", NULL) && ctx->err.col == 1 &&
       strstr(ctx->err.msg, "IntTrueDiv is not supported in size expressions"), "a float function is no size: %s", ctx->err.msg);
    ok(!sym_parse(ctx, "s0*1.5", NULL) && ctx->err.col == 5 && strstr(ctx->err.msg, "unexpected '.' after the number"),
       "a float literal is no size");
    ok(symfloat_check(ctx, "FloorDiv(s0, 2, 3)", NULL) < 0 && ctx->err.col == 17 && strstr(ctx->err.msg, "FloorDiv takes at most 2 arguments"),
       "arity errors are the same on both sides: %s", ctx->err.msg);
    ok(symfloat_check(ctx, "IntTrueDiv(s0, 2) s1", NULL) < 0 && ctx->err.col == 19 &&
       strstr(ctx->err.msg, "unexpected 's' after the expression"), "trailing text: %s", ctx->err.msg);
}

/* Every index expression and size in the recorded Inductor ir dumps parses and prints back
 * to exactly the same text. */
static void test_fixture_roundtrip(void) {
    int checked = 0, same = 0;
    const char *roots[] = {"tests/fixtures/torch-cases/cpu", "tests/fixtures/torch-cases/cuda"};
    for (int r = 0; r < 2; r++) {
        DIR *d = opendir(roots[r]);
        if (!d) continue;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            char dpath[1024];
            snprintf(dpath, sizeof dpath, "%s/%s/debug", roots[r], de->d_name);
            DIR *d2 = opendir(dpath);
            if (!d2) continue;
            struct dirent *de2;
            while ((de2 = readdir(d2))) {
                if (de2->d_name[0] == '.') continue;
                char path[2048];
                snprintf(path, sizeof path, "%s/%s/ir_pre_fusion.txt", dpath, de2->d_name);
                char *text = mi_read_file(ctx, path, NULL);
                if (!text) continue;
                /* MemoryDep('buf', INDEX, {c0: SIZE, ...}) */
                for (char *p = strstr(text, "MemoryDep('"); p; p = strstr(p + 1, "MemoryDep('")) {
                    char *q = strstr(p, "', ");
                    if (!q) break;
                    q += 3;
                    char *end = strstr(q, ", {");
                    char *close = end ? strchr(end, '}') : NULL;
                    if (!end || !close) break;
                    char idx[512];
                    snprintf(idx, sizeof idx, "%.*s", (int)(end - q), q);
                    Expr *e = sym_parse(ctx, idx, NULL);
                    checked++;
                    if (e && !strcmp(STR(e), idx)) same++;
                    else diag("%s: \"%s\" -> \"%s\"", path, idx, STR(e));
                    for (char *v = strchr(end, ':'); v && v < close; v = strchr(v + 1, ':')) {
                        char val[256];
                        size_t n = strcspn(v + 2, ",}");
                        snprintf(val, sizeof val, "%.*s", (int)n, v + 2);
                        e = sym_parse(ctx, val, NULL);
                        checked++;
                        if (e && !strcmp(STR(e), val)) same++;
                        else diag("%s: \"%s\" -> \"%s\"", path, val, STR(e));
                    }
                }
                free(text);
            }
            closedir(d2);
        }
        closedir(d);
    }
    ok(checked > 100, "found %d index/size expressions in the fixtures' ir dumps", checked);
    is_int(same, checked, "all fixture index/size expressions print back identically");
}

/* sym_str prints like sympy's str(): 800 random expressions with sympy 1.14's output. */
/* sym_parse then sym_str: the printed text of a case (tsv_compare's TsvOurs) */
static bool sym_str_of(MiCtx *c, const char *in, StrBuf *out, void *user) {
    (void)user;
    Expr *e = sym_parse(c, in, NULL);
    if (e) sb_put(out, STR(e));
    return e != NULL;
}

static void test_sympy_fixture(void) {
    TsvTally t = tsv_compare(ctx, "tests/fixtures/sym/sympy_str.tsv", "sympy", sym_str_of, NULL);
    ok(t.n >= 0, "read tests/fixtures/sym/sympy_str.tsv");
    is_int(t.n, 800, "800 sympy cases");
    is_int(t.same, t.n, "sym_str matches sympy's str() on every case");
}

static void test_simplify(void) {
    SymRange r[] = {{"x0", 0, 63}, {"x1", 0, 3}, {"x2", 0, 1023}, {"s0", 1, 64}};
    static const char *cases[][2] = {
        {"ModularIndexing(x0, 1, 64)", "x0"},
        {"ModularIndexing(x2, 1, 64)", "ModularIndexing(x2, 1, 64)"},
        {"ModularIndexing(x0 + 64*x1, 64, 4)", "x1"},
        {"ModularIndexing(x0 + 64*x1, 64, 2)", "ModularIndexing(x1, 1, 2)"},
        {"ModularIndexing(x2, 16, 64)", "(x2//16)"},
        {"ModularIndexing(x2, 16, 8)", "ModularIndexing(x2, 16, 8)"},
        {"x0//64", "0"},
        {"(x0 + 64*x1)//64", "x1"},
        {"(x0 + 64*x1 + 5)//64", "x1 + (((x0 + 5)//64))"},
        {"(x1 + 4)//8", "0"},
        {"x0//s0", "(x0//s0)"},
        {"x1//s1", "(x1//s1)"},
        {"Min(x0, 64)", "x0"},
        {"Max(x0, 64)", "64"},
        {"Min(x0, x1)", "Min(x0, x1)"},
        {"Min(x1, 4, x0 + 4)", "x1"},
        {"Mod(x1, s1)", "Mod(x1, s1)"},
        {"Mod(x1, s0 + 3)", "x1"},
        {"CeilDiv(x1, 8)", "CeilDiv(x1, 8)"},
        {"CeilDiv(x1 + 1, 8)", "1"},
        {"ModularIndexing(x0 - 64, 1, 64)", "x0"},
        {"x0 + 64*x1 + 256*((x2//256))", "x0 + 64*x1 + 256*((x2//256))"},
        {"ModularIndexing(x2 + 1024, 1, 2048)", "x2 + 1024"},
        {"ModularIndexing(y, 1, 64) + 64*(y//64)", "y"},
        {"ModularIndexing(y, 1, 16) + 16*ModularIndexing(y, 16, 4) + 64*(y//64)", "y"},
        {"3*ModularIndexing(y, 4, 8) + 24*(y//32) + 1", "3*((y//4)) + 1"},
        {"ModularIndexing(y, 1, 16) + 32*(y//16)", "32*((y//16)) + ModularIndexing(y, 1, 16)"},
        /* FloorDiv(g*A + r, g*k) -> FloorDiv(A, k) for 0 <= r < g (the transformer block's gelu
         * index: a view of [2048, 512] as [8, 256, 512] and back) */
        {"x0 + 4096*((64*x2 + x0)//4096) + 64*ModularIndexing(x2, 1, 64)", "x0 + 64*x2"},
        {"(64*x1 + x0)//128", "(x1//2)"},
        {"(64*x2 + x0)//4096", "(x2//64)"},
        {"(64*x2 + x0 + 1)//4096", "((x0 + 64*x2 + 1)//4096)"},
        {"(64*x2 - x0)//4096", "((-x0 + 64*x2)//4096)"},
        {"(128*x2 + 2*x0 + x1)//256", "((2*x0 + x1 + 128*x2)//256)"},
        {"(256*x2 + x0 + 64*x1)//512", "(x2//2)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Expr *e = P(cases[i][0]);
        is_str(STR(e ? sym_simplify(S, e, r, 4) : NULL), cases[i][1], "simplify(%s)", cases[i][0]);
    }
    /* default: s* sizes are >= 1 */
    is_str(STR(sym_simplify(S, P("Max(s5, 1)"), NULL, 0)), "s5", "Max(s5, 1) == s5 with no ranges (sizes >= 1)");
    is_str(STR(sym_simplify(S, P("Max(u5, 1)"), NULL, 0)), "Max(1, u5)", "Max(u5, 1) stays (u5 unknown)");
    {   /* fuzz_sym: once s0 <= 20 makes the Max its product, (22*s5*s25)**24 folds 22**24, past
         * int64: simplify keeps the exact input, and the next parse sees no overflow of its own */
        static const SymRange r20[] = {{"s0", 1, 20}};
        Expr *big = P("Max(s0, s5*s25*22, 16)**24*22*255");
        ok(big && sym_simplify(S, big, r20, 1) == big, "simplify keeps an expression whose folding would overflow int64");
        ok(P("s5*s25*22") != NULL, "a parse after that simplify succeeds");
    }
    is_str(STR(sym_simplify(S, P("ModularIndexing(x7, 1, 8)"), NULL, 0)), "ModularIndexing(x7, 1, 8)",
           "no range for x7: ModularIndexing kept");
    Expr *e = P("x0 + 1");
    ok(sym_simplify(S, e, r, 4) == e, "simplify returns the same node when nothing changes");
}

static void test_bound(void) {
    SymRange r[] = {{"x0", 0, 63}, {"x1", 0, 3}, {"u0", -5, 5}};
    int64_t lo, hi;
    ok(sym_bound(P("x0 + 64*x1"), r, 3, &lo, &hi) && lo == 0 && hi == 255, "bound x0 + 64*x1 = [0, 255]");
    ok(sym_bound(P("u0*u0"), r, 3, &lo, &hi) && lo == -25 && hi == 25, "bound u0*u0 = [-25, 25] (interval)");
    ok(sym_bound(P("(x0 - 10)//4"), r, 3, &lo, &hi) && lo == -3 && hi == 13, "bound floordiv = [-3, 13]");
    ok(sym_bound(P("ModularIndexing(u0, 1, 8)"), r, 3, &lo, &hi) && lo == 0 && hi == 7, "bound ModularIndexing = [0, 7]");
    ok(sym_bound(P("Min(x0, 10) - x1"), r, 3, &lo, &hi) && lo == -3 && hi == 10, "bound Min(...) - x1");
    ok(!sym_bound(P("s0 + 1"), r, 3, &lo, &hi) && lo == 2 && hi == INT64_MAX, "bound s0 + 1 = [2, inf)");
    ok(!sym_bound(P("y"), r, 3, &lo, &hi) && lo == INT64_MIN && hi == INT64_MAX, "unknown symbol unbounded");
    ok(!sym_bound(P("x0//y"), r, 3, &lo, &hi) && lo == INT64_MIN, "divisor may be 0: unbounded");
    ok(sym_bound(P("CeilDiv(x0, 8)"), r, 3, &lo, &hi) && lo == 0 && hi == 8, "bound CeilDiv = [0, 8]");
    ok(!sym_bound(P("s0*9223372036854775807"), NULL, 0, &lo, &hi) && lo == INT64_MAX && hi == INT64_MAX,
       "huge products saturate");
}

static void test_eval_subst(void) {
    SymBinding b[] = {{"s0", 10}, {"x", -7}, {"y", 0}, {"big", INT64_MAX}};
    int64_t v = 0;
    ok(sym_eval(ctx, P("2*s0 + x//2"), b, 4, &v) == 0 && v == 16, "eval 2*s0 + x//2 = 16");
    ok(sym_eval(ctx, P("ModularIndexing(x, 2, 3)"), b, 4, &v) == 0 && v == 2, "eval ModularIndexing(-7, 2, 3)");
    ok(sym_eval(ctx, P("Max(x, s0, 3)"), b, 4, &v) == 0 && v == 10, "eval Max");
    ok(sym_eval(ctx, P("CeilDiv(x, 2)"), b, 4, &v) == 0 && v == -3, "eval CeilDiv(-7, 2) = -3");
    ok(sym_eval(ctx, P("Mod(x, s0)"), b, 4, &v) == 0 && v == 3, "eval Mod(-7, 10) = 3");
    ok(sym_eval(ctx, P("s0//y"), b, 4, &v) == -1 && strstr(ctx->err.msg, "division by zero"), "division by zero is an error");
    ok(sym_eval(ctx, P("Mod(s0, y)"), b, 4, &v) == -1 && strstr(ctx->err.msg, "division by zero"), "modulo by zero is an error");
    ok(sym_eval(ctx, P("big + s0"), b, 4, &v) == -1 && strstr(ctx->err.msg, "overflow"), "overflow is an error");
    ok(sym_eval(ctx, P("big*big"), b, 4, &v) == -1 && strstr(ctx->err.msg, "overflow"), "multiplication overflow");
    ok(sym_eval(ctx, P("s0 + z"), b, 4, &v) == -1 && strstr(ctx->err.msg, "unbound symbol 'z'"), "unbound symbol");
    const char *names[] = {"x", "s0"};
    Expr *repl[] = {P("x0 + 64*x1"), P("4")};
    is_str(STR(sym_subst(S, P("x//64 + s0*y"), names, repl, 2)), "x1 + 4*y + ((x0//64))", "subst re-canonicalizes");
    is_str(STR(sym_subst(S, P("Min(x, s0)"), names, repl, 2)), "Min(4, x0 + 64*x1)", "subst into Min");
    is_str(STR(sym_coeff(S, P("x0 + 64*x1"), "x1")), "64", "coeff of x1 in x0 + 64*x1");
    is_str(STR(sym_coeff(S, P("x0*s0 + x0*s1 + 3"), "x0")), "s0 + s1", "coeff of x0 collects terms");
    is_str(STR(sym_coeff(S, P("x0 + 1"), "x9")), "0", "coeff of an absent symbol is 0");
    ok(!sym_coeff(S, P("x0 + (x0//4)"), "x0"), "coeff NULL when x0 is inside FloorDiv");
    ok(!sym_coeff(S, P("x0*x0"), "x0"), "coeff NULL when x0 is squared");
    const char *fs[8];
    int n = sym_free_symbols(P("x0 + 64*x1 + ModularIndexing(x0, s0, 4)"), fs, 8);
    ok(n == 3 && !strcmp(fs[0], "x0") && !strcmp(fs[1], "x1") && !strcmp(fs[2], "s0"), "free symbols x0 x1 s0");
    ok(sym_free_symbols(P("x0 + x1 + x2"), fs, 2) == 2, "free symbols capped at max");
}

/* Inductor's own index rules (core/base/sym_inductor.c) and FloorDiv / ModularIndexing by a
 * symbolic divisor (FloorDiv.eval / ModularIndexing.eval: the common factor cancels). */
static void test_inductor_rules(void) {
    is_str(STR(P("FloorDiv(48*s27*x + 48*s27, 48*s27)")), "x + 1", "FloorDiv by a symbolic product: the common factor cancels");
    is_str(STR(P("FloorDiv(s0*x, 2*s0)")), "(x//2)", "FloorDiv(s0*x, 2*s0) is x//2");
    is_str(STR(P("ModularIndexing(48*x, 48, s0*s1)")), "ModularIndexing(x, 1, s0*s1)", "ModularIndexing: gcd with the divisor");
    is_str(STR(P("ModularIndexing(x + 48*s0*y, 48, s0)")), "ModularIndexing(x, 48, s0)", "ModularIndexing drops a symbolic multiple of div*mod");
    is_str(STR(P("FloorDiv(FloorDiv(x, s0), s1)")), "(x//(s0*s1))", "nested FloorDiv by sizes merges");
    is_str(STR(P("FloorDiv(FloorDiv(x, u0), s1)")), "(((x//u0))//s1)", "nested FloorDiv by a maybe-negative symbol does not");
    /* join_dimensions: digits of one index join back, symbolic moduli too */
    is_str(STR(sym_join_dimensions(S, P("ModularIndexing(x, 1, 8) + 8*ModularIndexing(x, 8, 2) + 16*ModularIndexing(x, 16, 3)"))),
           "ModularIndexing(x, 1, 48)", "join_dimensions: three digits");
    is_str(STR(sym_join_dimensions(S, P("48*ModularIndexing(y, 1, s27) + 48*s27*ModularIndexing(y, s27, s77)"))),
           "48*ModularIndexing(y, 1, s27*s77)", "join_dimensions with symbolic digits");
    is_str(STR(sym_join_dimensions(S, P("ModularIndexing(y, 1, s0) + s0*FloorDiv(y, s0)"))), "y", "join_dimensions: digit + quotient");
    /* _simplify_with_ranges: what the loop ranges prove, no more */
    const char *v2[] = {"q0", "q1"};
    Expr *sz2[] = {P("48"), P("s27*s77")};
    is_str(STR(sym_simplify_inductor(S, P("48*s27*ModularIndexing(q1, s27, s77) + ModularIndexing(q0, 1, 8) + 8*ModularIndexing(q0, 8, 2) + "
                                          "16*ModularIndexing(q0, 16, 3) + 48*ModularIndexing(q1, 1, s27)"), v2, sz2, 2)),
           "q0 + 48*q1", "a dynamic reshape's index joins to q0 + 48*q1 (the axiom q1 < s27*s77)");
    const char *v4[] = {"u0", "u1", "u2", "u3"};
    Expr *sz4[] = {P("2"), P("4"), P("8"), P("8")};
    Expr *mha = P("64*ModularIndexing(32*u0 + 8*u1 + 64*u2 + u3, 64, 8) + 32*ModularIndexing(32*u0 + 8*u1 + u3, 32, 2) + ModularIndexing(8*u1 + u3, 1, 32)");
    Expr *ind = sym_simplify_inductor(S, mha, v4, sz4, 4);
    const SymRange r4[] = {{"u0", 0, 1}, {"u1", 0, 3}, {"u2", 0, 7}, {"u3", 0, 7}};
    ok(sym_coeff(S, ind, "u1") == NULL, "Inductor's rules leave FloorDiv(8*u1 + u3, 32): not linear (q is copied)");
    is_str(STR(sym_simplify(S, mha, r4, 4)), "32*u0 + 8*u1 + 64*u2 + u3", "our interval rules make it linear");
    const char *v1[] = {"x"};
    Expr *sz1[] = {P("16")};
    is_str(STR(sym_simplify_inductor(S, P("FloorDiv(64*y + x, 64)"), v1, sz1, 1)), "y", "remove_zero_terms: x < 64 drops out");
    is_str(STR(sym_simplify_inductor(S, P("FloorDiv(32*y + x, 64)"), v1, sz1, 1)), "((x + 32*y)//64)", "not when the rest is no multiple of 64");
}

/* ---- randomized differential check ----
 * A raw expression tree (no canonicalization) is evaluated directly; the same tree built
 * through the constructors, simplified under ranges, and printed/parsed back must give the
 * same values on random in-range assignments.  The simplified forms are also printed as C,
 * compiled, and run. */

enum { R_INT, R_SYM, R_ADD, R_SUB, R_MUL, R_NEG, R_FDIV, R_CDIV, R_MOD, R_MODIDX, R_MIN, R_MAX, R_DIGITS };
typedef struct Raw { int op; int64_t v; int sym; struct Raw *a, *b, *c; } Raw;

#define NSYM 6
static const SymRange rand_ranges[NSYM] = {
    {"x0", 0, 15}, {"x1", 0, 7}, {"r0_0", 0, 31}, {"s0", 1, 20}, {"s1", 1, 9}, {"u0", -10, 10},
};

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) {   /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static Raw pool[200000];
static int npool;

static Raw *gen(int depth) {
    Raw *r = &pool[npool++];
    memset(r, 0, sizeof *r);
    int k = depth <= 0 ? (int)(rnd() % 2) : (int)(rnd() % 15);
    if (k >= 13) k = (int)(rnd() % 5);   /* favour + - * among inner nodes */
    r->op = k;
    switch (k) {
    case R_INT: r->v = rnd() % 4 == 0 ? rnd_in(-70, 70) : rnd_in(-4, 8); break;
    case R_SYM: r->sym = (int)(rnd() % NSYM); break;
    case R_NEG: r->a = gen(depth - 1); break;
    case R_FDIV: case R_CDIV: case R_MOD:
        r->a = gen(depth - 1);
        if (rnd() % 3) { r->b = &pool[npool++]; memset(r->b, 0, sizeof *r->b); r->b->op = R_INT; r->b->v = rnd_in(-3, 16); }
        else r->b = gen(depth - 1);
        break;
    case R_MODIDX:
        r->a = gen(depth - 1);
        r->b = &pool[npool++]; memset(r->b, 0, sizeof *r->b); r->b->op = R_INT; r->b->v = rnd_in(1, 16);
        if (rnd() % 4 == 0) r->b = gen(depth - 1);
        r->c = &pool[npool++]; memset(r->c, 0, sizeof *r->c); r->c->op = R_INT; r->c->v = rnd_in(1, 16);
        break;
    case R_DIGITS:   /* c*ModularIndexing(a, d, m) + c*m*FloorDiv(a, d*m) [+ b]: merge_digits */
        r->a = gen(depth - 1);
        r->b = rnd() % 2 ? gen(depth - 1) : NULL;
        r->v = rnd_in(1, 4) * 100 + rnd_in(1, 8) * 10 + rnd_in(1, 3);   /* d, m, c packed */
        break;
    default: r->a = gen(depth - 1); r->b = gen(depth - 1); break;
    }
    return r;
}

static int64_t fdiv_py(int64_t a, int64_t b) { int64_t q = a / b; return (a % b && ((a < 0) != (b < 0))) ? q - 1 : q; }
static int64_t mod_py(int64_t a, int64_t b) { int64_t m = a % b; return (m && ((m < 0) != (b < 0))) ? m + b : m; }

/* 0 ok, -1 error (division by zero / overflow). */
static int raw_eval(const Raw *r, const int64_t *vals, int64_t *out) {
    int64_t a = 0, b = 0, c = 0;
    if (r->a && raw_eval(r->a, vals, &a)) return -1;
    if (r->b && raw_eval(r->b, vals, &b)) return -1;
    if (r->c && raw_eval(r->c, vals, &c)) return -1;
    switch (r->op) {
    case R_INT: *out = r->v; return 0;
    case R_SYM: *out = vals[r->sym]; return 0;
    case R_ADD: return __builtin_add_overflow(a, b, out) ? -1 : 0;
    case R_SUB: return __builtin_sub_overflow(a, b, out) ? -1 : 0;
    case R_MUL: return __builtin_mul_overflow(a, b, out) ? -1 : 0;
    case R_NEG: return __builtin_sub_overflow((int64_t)0, a, out) ? -1 : 0;
    case R_FDIV: if (!b || (b == -1 && a == INT64_MIN)) return -1; *out = fdiv_py(a, b); return 0;
    case R_CDIV: if (!b || (b == -1 && a == INT64_MIN)) return -1; *out = -fdiv_py(-a, b); return 0;
    case R_MOD: if (!b || b == -1) { if (!b) return -1; *out = 0; return 0; } *out = mod_py(a, b); return 0;
    case R_MODIDX: if (!b || !c || (b == -1 && a == INT64_MIN)) return -1; *out = mod_py(fdiv_py(a, b), c); return 0;
    case R_MIN: *out = a < b ? a : b; return 0;
    case R_MAX: *out = a > b ? a : b; return 0;
    case R_DIGITS: {
        int64_t d = r->v / 100, m = r->v / 10 % 10, c = r->v % 10;
        *out = c * mod_py(fdiv_py(a, d), m) + c * m * fdiv_py(a, d * m) + (r->b ? b : 0);
        return 0;
    }
    }
    return -1;
}

static Expr *raw_build(const Raw *r) {
    Expr *a = r->a ? raw_build(r->a) : NULL, *b = r->b ? raw_build(r->b) : NULL, *c = r->c ? raw_build(r->c) : NULL;
    switch (r->op) {
    case R_INT: return sym_int(S, r->v);
    case R_SYM: return sym_symbol(S, rand_ranges[r->sym].name);
    case R_ADD: return sym_add(S, a, b);
    case R_SUB: return sym_sub(S, a, b);
    case R_MUL: return sym_mul(S, a, b);
    case R_NEG: return sym_neg(S, a);
    case R_FDIV: return sym_floordiv(S, a, b);
    case R_CDIV: return sym_ceildiv(S, a, b);
    case R_MOD: return sym_mod(S, a, b);
    case R_MODIDX: return sym_modidx(S, a, b, c);
    case R_MIN: return sym_min(S, a, b);
    case R_MAX: return sym_max(S, a, b);
    case R_DIGITS: {
        int64_t d = r->v / 100, m = r->v / 10 % 10, c = r->v % 10;
        Expr *t = sym_add(S, sym_mul(S, sym_int(S, c), sym_modidx(S, a, sym_int(S, d), sym_int(S, m))),
                          sym_mul(S, sym_int(S, c * m), sym_floordiv(S, a, sym_int(S, d * m))));
        return b ? sym_add(S, t, b) : t;
    }
    }
    return NULL;
}

#define NEXPR 2000
#define NASSIGN 8
#define NC 400

static void test_random(void) {
    int bad_build = 0, bad_simp = 0, bad_parse = 0, bad_bound = 0, bad_idem = 0, compared = 0, simplified = 0;
    int bad_float = 0, float_compared = 0;
    static int64_t vals[NEXPR][NASSIGN][NSYM];
    static int64_t want[NEXPR][NASSIGN];
    static bool valid[NEXPR][NASSIGN];
    Expr *simp_of[NEXPR];
    for (int i = 0; i < NEXPR; i++) {
        npool = 0;
        Raw *r = gen(1 + i % 5);
        Expr *e = raw_build(r);
        Expr *s = sym_simplify(S, e, rand_ranges, NSYM);
        simp_of[i] = s;
        simplified += s != e;
        Expr *s2 = sym_simplify(S, s, rand_ranges, NSYM);
        if (s2 != s && bad_idem++ < 5) diag("simplify not idempotent: %s -> %s -> %s", STR(e), STR(s), STR(s2));
        char buf[4096];
        sym_str(e, buf, sizeof buf);
        Expr *pe = sym_parse(ctx, buf, NULL);
        if (pe != e && bad_parse++ < 5) diag("round trip: %s -> %s", buf, STR(pe));
        sym_str(s, buf, sizeof buf);
        Expr *ps = sym_parse(ctx, buf, NULL);
        if (ps != s && bad_parse++ < 5) diag("round trip: %s -> %s", buf, STR(ps));
        int64_t lo, hi;
        sym_bound(s, rand_ranges, NSYM, &lo, &hi);
        char sbuf[4096];
        sym_str(s, sbuf, sizeof sbuf);
        for (int k = 0; k < NASSIGN; k++) {
            SymBinding bind[NSYM];
            for (int j = 0; j < NSYM; j++) {
                vals[i][k][j] = rnd_in(rand_ranges[j].lo, rand_ranges[j].hi);
                bind[j].name = rand_ranges[j].name;
                bind[j].value = vals[i][k][j];
            }
            int64_t w, got;
            valid[i][k] = raw_eval(r, vals[i][k], &w) == 0;
            if (!valid[i][k]) continue;
            want[i][k] = w;
            compared++;
            if ((sym_eval(ctx, e, bind, NSYM, &got) || got != w) && bad_build++ < 5)
                diag("built %s: want %lld got %lld (%s)", STR(e), (long long)w, (long long)got, ctx->err.msg);
            if ((sym_eval(ctx, s, bind, NSYM, &got) || got != w) && bad_simp++ < 5)
                diag("simplified %s -> %s: want %lld got %lld", STR(e), STR(s), (long long)w, (long long)got);
            /* the same text under the SymFloat semantics of the one grammar: the same int */
            SymNum fv;
            MiTry t = mi_try(ctx);
            if (sym_eval(ctx, s, bind, NSYM, &got) == 0) {
                float_compared++;
                if ((symfloat_eval(ctx, sbuf, bind, NSYM, &fv) || !fv.is_int || fv.i != w) && bad_float++ < 5)
                    diag("symfloat_eval(%s) = %lld, want %lld (%s)", sbuf, (long long)fv.i, (long long)w, ctx->err.msg);
            }
            mi_try_end(&t);
            if ((w < lo || w > hi) && bad_bound++ < 5)
                diag("bound of %s = [%lld, %lld] misses %lld", STR(s), (long long)lo, (long long)hi, (long long)w);
        }
    }
    ok(compared > NEXPR * NASSIGN / 2, "random: %d evaluations compared", compared);
    ok(simplified > NEXPR / 20, "random: simplify changed %d of %d expressions", simplified, NEXPR);
    is_int(bad_build, 0, "random: constructors preserve values");
    is_int(bad_simp, 0, "random: simplify under ranges preserves values");
    is_int(bad_parse, 0, "random: parse(str(e)) == e for built and simplified expressions");
    is_int(bad_bound, 0, "random: sym_bound contains every value");
    is_int(bad_idem, 0, "random: simplify(simplify(e)) == simplify(e)");
    ok(float_compared > NEXPR * NASSIGN / 2, "random: %d printed expressions evaluated by symfloat_eval", float_compared);
    is_int(bad_float, 0, "random: symfloat_eval(str(e)) == sym_eval(e): one grammar, two semantics agree");

    /* C printing: compile the first NC simplified expressions and compare with the raw values. */
    char dir[] = "/tmp/test_sym_XXXXXX";
    if (!mkdtemp(dir)) { skip(1, "mkdtemp failed"); return; }
    char cpath[256], sopath[256], cmd[1024];
    snprintf(cpath, sizeof cpath, "%s/k.c", dir);
    snprintf(sopath, sizeof sopath, "%s/k.so", dir);
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "#include <stdint.h>\n");
    sb_put(&sb, sym_c_prelude());
    for (int i = 0; i < NC; i++) {
        sb_printf(&sb, "int64_t f%d(const int64_t *v) {\n", i);
        for (int j = 0; j < NSYM; j++) sb_printf(&sb, "    int64_t %s = v[%d]; (void)%s;\n", rand_ranges[j].name, j, rand_ranges[j].name);
        sb_put(&sb, "    return ");
        sym_c_sb(simp_of[i], &sb);
        sb_put(&sb, ";\n}\n");
    }
    mi_write_file(ctx, cpath, sb.s, sb.len);
    sb_free(&sb);
    snprintf(cmd, sizeof cmd, "cc -std=gnu11 -O0 -w -shared -fPIC -o %s %s 2>&1", sopath, cpath);
    int rc = system(cmd);
    void *h = rc == 0 ? dlopen(sopath, RTLD_NOW) : NULL;
    ok(h != NULL, "C printing of %d simplified expressions compiles", NC);
    if (h) {
        int bad_c = 0, ran = 0;
        for (int i = 0; i < NC; i++) {
            char fn[32];
            snprintf(fn, sizeof fn, "f%d", i);
            int64_t (*f)(const int64_t *) = (int64_t (*)(const int64_t *))dlsym(h, fn);
            for (int k = 0; f && k < NASSIGN; k++) {
                if (!valid[i][k]) continue;
                SymBinding bind[NSYM];
                for (int j = 0; j < NSYM; j++) { bind[j].name = rand_ranges[j].name; bind[j].value = vals[i][k][j]; }
                int64_t got;
                if (sym_eval(ctx, simp_of[i], bind, NSYM, &got)) continue;   /* C would trap too */
                ran++;
                int64_t c = f(vals[i][k]);
                if (c != want[i][k] && bad_c++ < 5)
                    diag("C %s = %lld, want %lld", CSTR(simp_of[i]), (long long)c, (long long)want[i][k]);
            }
        }
        ok(ran > NC, "C: %d evaluations", ran);
        is_int(bad_c, 0, "C printing agrees with evaluation");
        dlclose(h);
    }
    unlink(cpath);
    unlink(sopath);
    rmdir(dir);
}

int main(void) {
    ctx = mi_ctx_new();
    S = ctx->sym;
    test_canonical();
    test_printing();
    test_c_printing();
    test_degree_limit();
    test_parse_errors();
    test_one_grammar();
    test_fixture_roundtrip();
    test_sympy_fixture();
    test_simplify();
    test_bound();
    test_eval_subst();
    test_inductor_rules();
    test_random();
    mi_ctx_free(ctx);
    return done_testing();
}
