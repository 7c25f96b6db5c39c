/* fuzz_sym.c — libFuzzer target for core/base/sym.c, differential.
 *
 * The input is a size expression as text.  It is evaluated three ways on four assignments
 * of the symbols x0, x1, r0_0, s0, s1, u0 (drawn from their ranges by a hash of the input):
 *   1. directly from the text by the small evaluator below (no canonicalization at all),
 *   2. sym_eval(sym_parse(text))           — the canonicalizing constructors,
 *   3. sym_eval(sym_simplify(e, ranges))   — the range-based simplifier.
 * When (1) succeeds, (2) and (3) must give the same value (an overflow reported by (2)/(3)
 * is tolerated: expanding products can make intermediates larger than the text's; a
 * division by zero is not).  Also checked: parse(str(e)) == e and parse(str(simplified))
 * == simplified (pointer equality; skipped when a product too large to expand keeps a sum
 * as a factor), and sym_bound contains every value.  sym_parse must
 * never crash, leak or hit UB on any input.  Any mismatch aborts with a message.
 *
 * The same text also goes through the SymFloat layer (core/base/symfloat.c: IntTrueDiv,
 * FloatTrueDiv, ToFloat, TruncToInt, PowByNatural, ...), in its three modes: symfloat_check
 * (syntax only), symfloat_eval (under fixed values of the symbols) and symfloat_build with a builder
 * that evaluates the pieces it is given in doubles.  Checked: what evaluates also checks, and
 * where both eval and build give a value they agree (NaN equal to NaN; build's integer parts are
 * sym.h expressions, whose canonical forms may overflow where the text does not: skipped then);
 * symfloat_fast_str (symfloat_str.c, how the post-grad graph prints it) reads what check
 * reads and prints text check reads again.
 *
 * Build (not in the Makefile's fuzz rule yet):
 *   clang -std=gnu11 -O1 -g -I. -Icore -fsanitize=fuzzer,address,undefined \
 *         fuzz/fuzz_sym.c core/base/sym.c core/base/mi.c -o build-fuzz/fuzz_sym
 * Run:  build-fuzz/fuzz_sym -max_total_time=600 -max_len=256 fuzz/corpus-sym */
#include "base/sym.h"
#include "base/symfloat.h"

#include <math.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSYM 6
static const SymRange ranges[NSYM] = {
    {"x0", 0, 15}, {"x1", 0, 7}, {"r0_0", 0, 31}, {"s0", 1, 20}, {"s1", 1, 9}, {"u0", -10, 10},
};

/* ---- direct text evaluator (same grammar as sym_parse, values only) ---- */
typedef struct { const char *p; const int64_t *vals; int err; int depth; } Ev;

static int64_t fdiv_py(int64_t a, int64_t b) { int64_t q = a / b; return (a % b && ((a < 0) != (b < 0))) ? q - 1 : q; }
static int64_t mod_py(int64_t a, int64_t b) { if (b == -1) return 0; int64_t m = a % b; return (m && ((m < 0) != (b < 0))) ? m + b : m; }
static void ws(Ev *e) { while (*e->p == ' ' || *e->p == '\t' || *e->p == '\n' || *e->p == '\r') e->p++; }
static int64_t ev_expr(Ev *e);
static int64_t ev_unary(Ev *e);

static int64_t divide(Ev *e, int kind, int64_t a, int64_t b) {   /* 0 floor, 1 ceil, 2 mod */
    if (b == 0 || (b == -1 && a == INT64_MIN && kind != 2)) { e->err = 1; return 0; }
    if (kind == 0) return fdiv_py(a, b);
    if (kind == 2) return mod_py(a, b);
    int64_t q = a / b;
    return (a % b && ((a < 0) == (b < 0))) ? q + 1 : q;
}

static int64_t ev_atom(Ev *e) {
    ws(e);
    if (isdigit((unsigned char)*e->p)) {
        uint64_t v = 0;
        while (isdigit((unsigned char)*e->p)) {
            if (v > (UINT64_MAX - 9) / 10) e->err = 1;
            else v = v * 10 + (uint64_t)(*e->p - '0');
            e->p++;
        }
        if (v > INT64_MAX) e->err = 1;
        return (int64_t)v;
    }
    if (*e->p == '(') {
        e->p++;
        int64_t v = ev_expr(e);
        ws(e);
        if (*e->p == ')') e->p++; else e->err = 1;
        return v;
    }
    char name[64];
    size_t n = 0;
    while ((isalnum((unsigned char)*e->p) || *e->p == '_') && n < 63) name[n++] = *e->p++;
    name[n] = 0;
    if (!n) { e->err = 1; return 0; }
    ws(e);
    if (*e->p != '(') {
        for (int i = 0; i < NSYM; i++)
            if (!strcmp(name, ranges[i].name)) return e->vals[i];
        e->err = 1;
        return 0;
    }
    e->p++;
    int64_t a[64];
    int na = 0;
    for (;;) {
        int64_t v = ev_expr(e);
        if (na < 64) a[na++] = v; else e->err = 1;
        ws(e);
        if (*e->p == ',') { e->p++; continue; }
        if (*e->p == ')') { e->p++; break; }
        e->err = 1;
        return 0;
    }
    if (!strcmp(name, "FloorDiv") || !strcmp(name, "CleanDiv")) return na == 2 ? divide(e, 0, a[0], a[1]) : (e->err = 1, 0);
    if (!strcmp(name, "CeilDiv")) return na == 2 ? divide(e, 1, a[0], a[1]) : (e->err = 1, 0);
    if (!strcmp(name, "Mod") || !strcmp(name, "PythonMod")) return na == 2 ? divide(e, 2, a[0], a[1]) : (e->err = 1, 0);
    if (!strcmp(name, "ModularIndexing")) {
        if (na != 3) { e->err = 1; return 0; }
        int64_t q = divide(e, 0, a[0], a[1]);
        return e->err ? 0 : divide(e, 2, q, a[2]);
    }
    if (!strcmp(name, "Identity")) return na == 1 ? a[0] : (e->err = 1, 0);
    if (!strcmp(name, "Min") || !strcmp(name, "Max")) {
        int64_t r = a[0];
        for (int i = 1; i < na; i++)
            if (name[1] == 'i' ? a[i] < r : a[i] > r) r = a[i];
        return r;
    }
    e->err = 1;
    return 0;
}

static int64_t ev_power(Ev *e) {
    int64_t b = ev_atom(e);
    ws(e);
    if (e->p[0] != '*' || e->p[1] != '*') return b;
    e->p += 2;
    int64_t k = ev_unary(e), r = 1;
    if (k < 0 || k > 1024) { e->err = 1; return 0; }
    for (int64_t i = 0; i < k; i++)
        if (__builtin_mul_overflow(r, b, &r)) e->err = 1;
    return r;
}

static int64_t ev_unary(Ev *e) {
    ws(e);
    if (++e->depth > 300) { e->err = 1; return 0; }
    int64_t r;
    if (*e->p == '-' || *e->p == '+') {
        bool minus = *e->p++ == '-';
        ws(e);
        const char *q = e->p;
        while (isdigit((unsigned char)*q)) q++;
        while (*q == ' ' || *q == '\t') q++;
        if (minus && isdigit((unsigned char)*e->p) && !(q[0] == '*' && q[1] == '*')) {
            uint64_t v = 0;   /* -9223372036854775808 */
            while (isdigit((unsigned char)*e->p)) {
                if (v > (UINT64_MAX - 9) / 10) e->err = 1;
                else v = v * 10 + (uint64_t)(*e->p - '0');
                e->p++;
            }
            if (v > (uint64_t)INT64_MAX + 1) e->err = 1;
            r = (int64_t)(0 - v);
        } else {
            r = ev_unary(e);
            if (minus && __builtin_sub_overflow((int64_t)0, r, &r)) e->err = 1;
        }
    } else {
        r = ev_power(e);
    }
    e->depth--;
    return r;
}

static int64_t ev_term(Ev *e) {
    int64_t a = ev_unary(e);
    for (;;) {
        ws(e);
        if (e->err) return 0;
        if (e->p[0] == '/' && e->p[1] == '/') { e->p += 2; a = divide(e, 0, a, ev_unary(e)); }
        else if (e->p[0] == '*' && e->p[1] != '*') { e->p++; int64_t b = ev_unary(e); if (__builtin_mul_overflow(a, b, &a)) e->err = 1; }
        else if (e->p[0] == '%') { e->p++; a = divide(e, 2, a, ev_unary(e)); }
        else return a;
    }
}

static int64_t ev_expr(Ev *e) {
    if (++e->depth > 300) { e->err = 1; return 0; }
    int64_t a = ev_term(e);
    for (;;) {
        ws(e);
        if (e->err) break;
        if (*e->p == '+') { e->p++; int64_t b = ev_term(e); if (__builtin_add_overflow(a, b, &a)) e->err = 1; }
        else if (*e->p == '-') { e->p++; int64_t b = ev_term(e); if (__builtin_sub_overflow(a, b, &a)) e->err = 1; }
        else break;
    }
    e->depth--;
    return a;
}

/* A product that keeps a sum as a factor: left by the expansion cap (MAX_EXPAND in sym.c),
 * where the canonical form depends on how the product was grouped, so parse(str(e)) may
 * legitimately build a different (equal-valued) expression. */
static bool has_kept_product(const Expr *e, long *budget) {
    if (--*budget < 0) return true;   /* huge (shared) tree: don't walk it all */
    if (e->kind == EX_MUL)
        for (int i = 0; i < e->n; i++)
            if (e->args[i]->kind == EX_ADD) return true;
    for (int i = 0; i < e->n; i++)
        if (has_kept_product(e->args[i], budget)) return true;
    return false;
}

/* The printed form may be past the parser's limits although the input was not: a chain of
 * `%` (read in a loop) prints as nested Mod(...), deeper than the nesting limit
 * (crashers/sym_printed_deeper_than_parse_limit.sym). The parser must say so. */
static bool past_parse_limits(const MiCtx *ctx) {
    return strstr(ctx->err.msg, "too large") || strstr(ctx->err.msg, "nested too deeply");
}

static void fail(const char *what, const char *text, const Expr *a, const Expr *b) {
    char sa[2048] = "", sb[2048] = "";
    if (a) sym_str(a, sa, sizeof sa);
    if (b) sym_str(b, sb, sizeof sb);
    fprintf(stderr, "fuzz_sym: %s\n  text: %s\n  a: %s\n  b: %s\n", what, text, sa, sb);
    abort();
}

/* ---- SymFloat: a builder that evaluates (symfloat_build's pieces as doubles) ---- */
typedef struct {
    MiCtx *ctx;
    const SymBinding *b;
    int nb;
    double *vals;      /* every piece handed out, freed at the end */
    int n, cap;
    bool int_overflow; /* a sym.h part could not be evaluated (overflow of a canonical form) */
} FBuild;

static const void *fb_put(FBuild *f, double v) {
    if (f->n == f->cap) return NULL;   /* cap reached: build sees a NULL piece, the run is skipped */
    f->vals[f->n] = v;
    return &f->vals[f->n++];
}
static const void *fb_from_int(void *ud, Expr *e) {
    FBuild *f = ud;
    int64_t v = 0;
    MiTry t = mi_try(f->ctx);
    if (!e || sym_eval(f->ctx, e, f->b, f->nb, &v)) f->int_overflow = true;
    mi_try_end(&t);
    return fb_put(f, (double)v);
}
static const void *fb_const(void *ud, double v) { return fb_put(ud, v); }
static const void *fb_bin(void *ud, char op, const void *a, const void *b) {
    FBuild *f = ud;
    if (!a || !b) { f->int_overflow = true; return fb_put(f, 0); }
    double x = *(const double *)a, y = *(const double *)b;
    return fb_put(f, op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y);
}

/* The three SymFloat modes on text under bindings b (see the top comment). */
static void symfloat_modes(MiCtx *ctx, const char *text, const SymBinding *b, int nb) {
    MiTry t = mi_try(ctx);
    int chk = symfloat_check(ctx, text, NULL);
    SymNum want;
    int ev = symfloat_eval(ctx, text, b, nb, &want);
    if (ev == 0 && chk != 0) { fprintf(stderr, "fuzz_sym: symfloat_eval accepts what symfloat_check refuses\n  text: %s\n", text); abort(); }
    mi_try_end(&t);
    /* symfloat_fast_str (the post-grad graph's form) reads what check reads (check also
     * refuses constant faults such as 2/0, fast_str only parses), and prints text check reads */
    StrBuf fs;
    sb_init(&fs);
    bool fast = symfloat_fast_str(text, &fs);
    if (!fast && chk == 0) { fprintf(stderr, "fuzz_sym: symfloat_fast_str refuses what symfloat_check accepts\n  text: %s\n", text); abort(); }
    t = mi_try(ctx);
    if (fast && chk == 0 && symfloat_check(ctx, fs.s ? fs.s : "", NULL) != 0) { fprintf(stderr, "fuzz_sym: symfloat_fast_str printed text check refuses\n  text: %s\n  printed: %s\n", text, fs.s); abort(); }
    mi_try_end(&t);
    sb_free(&fs);
    FBuild f = {ctx, b, nb, calloc(65536, sizeof(double)), 0, 65536, false};
    SymFloatBuilder bld = {&f, fb_from_int, fb_const, fb_bin};
    t = mi_try(ctx);
    const void *got = symfloat_build(ctx, ctx->sym, text, &bld);
    mi_try_end(&t);
    if (got && ev == 0 && !f.int_overflow) {
        double g = *(const double *)got, w = want.is_int ? (double)want.i : want.f;
        bool same = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= 1e-12 * fmax(fabs(g), fabs(w));
        if (!same) { fprintf(stderr, "fuzz_sym: symfloat_build gives %.17g, symfloat_eval %.17g\n  text: %s\n", g, w, text); abort(); }
    }
    free(f.vals);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    MiCtx *ctx = mi_ctx_new();
    if (strlen(text) == size) {   /* SymFloat: under fixed values of the symbols */
        static const SymBinding fb[NSYM] = {{"x0", 3}, {"x1", 5}, {"r0_0", 7}, {"s0", 4}, {"s1", 9}, {"u0", -2}};
        symfloat_modes(ctx, text, fb, NSYM);
    }
    Expr *e = sym_parse(ctx, text, NULL);
    if (e && strlen(text) == size) {
        SymCtx *s = ctx->sym;
        Expr *simp = sym_simplify(s, e, ranges, NSYM);
        long budget = 100000, budget2 = 100000;
        bool exact = !has_kept_product(e, &budget) && !has_kept_product(simp, &budget2);
        char *buf = malloc(1 << 16);
        sym_str(e, buf, 1 << 16);
        Expr *back;
        if (exact && strlen(buf) < (1 << 16) - 1 && (back = sym_parse(ctx, buf, NULL)) != e &&
            (back || !past_parse_limits(ctx)))
            fail("parse(str(e)) != e", text, e, back);
        sym_str(simp, buf, 1 << 16);
        if (exact && strlen(buf) < (1 << 16) - 1 && (back = sym_parse(ctx, buf, NULL)) != simp &&
            (back || !past_parse_limits(ctx)))
            fail("parse(str(simplified)) != simplified", text, simp, back);
        free(buf);
        int64_t lo, hi;
        sym_bound(simp, ranges, NSYM, &lo, &hi);
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
        for (int k = 0; k < 4; k++) {
            int64_t vals[NSYM];
            SymBinding b[NSYM];
            for (int j = 0; j < NSYM; j++) {
                h = h * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t span = (uint64_t)(ranges[j].hi - ranges[j].lo) + 1;
                vals[j] = ranges[j].lo + (int64_t)((h >> 33) % span);
                b[j].name = ranges[j].name;
                b[j].value = vals[j];
            }
            Ev ev = {text, vals, 0, 0};
            int64_t want = ev_expr(&ev);
            if (ev.err) continue;
            int64_t got;
            if (sym_eval(ctx, e, b, NSYM, &got)) {
                if (!strstr(ctx->err.msg, "overflow")) fail(ctx->err.msg, text, e, NULL);
            } else if (got != want) {
                fail("canonical form changes the value", text, e, NULL);
            }
            if (sym_eval(ctx, simp, b, NSYM, &got)) {
                if (!strstr(ctx->err.msg, "overflow")) fail(ctx->err.msg, text, e, simp);
            } else if (got != want) {
                fail("simplify changes the value", text, e, simp);
            }
            if (want < lo || want > hi) fail("sym_bound misses a value", text, simp, NULL);
        }
    }
    mi_ctx_free(ctx);
    free(text);
    return 0;
}
