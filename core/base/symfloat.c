/* symfloat.c — check and evaluate symbolic float expressions ("IntTrueDiv(8*s0, 8) - 1.0");
 * see symfloat.h for the functions (torch/utils/_sympy/functions.py). The text is read by the
 * one parser of sympy text (sym_parse.c); this file is its SymFloat semantics, three modes:
 * check (no bindings: symbols are unknown and the arithmetic is skipped, so only the syntax
 * and the arity of the functions count), eval (numbers under bindings) and build (integer
 * parts as sym.h Exprs, float parts as the caller's kernel values). */
#include "base/sym_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The semantics' state (SymParser.ud). */
typedef struct {
    const SymBinding *b;
    int nb;
    bool check;                    /* no bindings: only the syntax counts */
    SymCtx *s;                     /* build mode (symfloat_build): s and bld set */
    const SymFloatBuilder *bld;
} FS;

typedef SymParser FP;
typedef SymVal FV;   /* unknown when a symbol has no binding (check mode); ex / fn: build mode */
#define ST(p) ((FS *)(p)->ud)

static FV fail(FP *p, const char *at, const char *fmt, const char *what) { return symi_fail(p, at, fmt, what); }

static FV num_i(int64_t i) { FV r = {{true, i, (double)i}, false, NULL, NULL}; return r; }
static FV num_f(double f) { FV r = {{false, 0, f}, false, NULL, NULL}; return r; }
static FV unknown(void) { FV r = {{true, 0, 0}, true, NULL, NULL}; return r; }
static double fval(FV a) { return a.v.is_int ? (double)a.v.i : a.v.f; }

/* build mode: an integer part as an expression, a float part as the builder's value */
static FV b_int(Expr *e) { FV r = {{true, 0, 0}, false, e, NULL}; return r; }
static FV b_flt(const void *f) { FV r = {{false, 0, 0}, false, NULL, f}; return r; }
static const void *b_tofloat(FP *p, FV a) { return a.fn ? a.fn : ST(p)->bld->from_int(ST(p)->bld->ud, a.ex); }
static FV b_fbin(FP *p, char op, FV a, FV b) {
    const SymFloatBuilder *bld = ST(p)->bld;
    return b_flt(bld->fbin(bld->ud, op, b_tofloat(p, a), b_tofloat(p, b)));
}

/* Python's // and % on ints (floor semantics); b != 0, and not INT64_MIN // -1 (2**63: the
 * callers refuse it as an overflow). x % -1 is 0 (INT64_MIN % -1 traps in C). */
static int64_t py_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
static int64_t py_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

/* Binary arithmetic with Python's int/float rules: int op int stays int except '/', which
 * sympy prints for rationals (a true division). */
static FV arith(FP *p, const char *at, char op, FV a, FV b) {
    if (ST(p)->bld) {
        if (op == '/' || !a.ex || !b.ex) return b_fbin(p, op, a, b);
        return b_int(op == '+' ? sym_add(ST(p)->s, a.ex, b.ex) : op == '-' ? sym_sub(ST(p)->s, a.ex, b.ex) : sym_mul(ST(p)->s, a.ex, b.ex));
    }
    if (a.unknown || b.unknown) { a.unknown = true; return a; }
    if (op == '/') {
        if (fval(b) == 0) return fail(p, at, "division by zero in %s", "'/'");
        return num_f(fval(a) / fval(b));
    }
    if (a.v.is_int && b.v.is_int) {
        int64_t r;
        bool ovf = op == '+' ? __builtin_add_overflow(a.v.i, b.v.i, &r)
                 : op == '-' ? __builtin_sub_overflow(a.v.i, b.v.i, &r)
                             : __builtin_mul_overflow(a.v.i, b.v.i, &r);
        if (ovf) return fail(p, at, "integer overflow in '%s'", op == '+' ? "+" : op == '-' ? "-" : "*");
        return num_i(r);
    }
    double x = fval(a), y = fval(b);
    return num_f(op == '+' ? x + y : op == '-' ? x - y : x * y);
}

/* Integer power a ** b, b >= 0 (PowByNatural), with overflow refused. */
static FV ipow(FP *p, const char *at, int64_t a, int64_t b) {
    if (b < 0) return fail(p, at, "%s: negative exponent", "PowByNatural");
    if (b == 0) return num_i(1);
    if (a == 0 || a == 1) return num_i(a);
    if (a == -1) return num_i(b % 2 ? -1 : 1);
    int64_t r = 1;
    for (int64_t k = 0; k < b; k++)   /* |a| >= 2: overflows within 63 steps */
        if (__builtin_mul_overflow(r, a, &r)) return fail(p, at, "integer overflow in %s", "**");
    return num_i(r);
}

/* Python's round() of a float: to nearest, ties to even. */
static double round_even(double x) { return x - remainder(x, 1.0); }

/* Apply function name to args (all known; OpaqueUnaryFn_<f> are sf_call's). Example:
 * IntTrueDiv(6, 4) is 1.5, FloorDiv(-7, 2) is -4 (Python floor semantics). */
static FV apply(FP *p, const char *at, const char *name, FV *a, int n) {
    if (ST(p)->bld) {
        if (!strcmp(name, "IntTrueDiv") || !strcmp(name, "FloatTrueDiv")) return b_fbin(p, '/', a[0], a[1]);
        if (!strcmp(name, "ToFloat")) return b_flt(b_tofloat(p, a[0]));
        if (!strcmp(name, "Identity")) return a[0];
        bool ints = true;
        for (int k = 0; k < n; k++) ints = ints && a[k].ex;
        if (ints && (!strcmp(name, "FloorDiv") || !strcmp(name, "CleanDiv"))) return b_int(sym_floordiv(ST(p)->s, a[0].ex, a[1].ex));
        if (ints && !strcmp(name, "CeilDiv")) return b_int(sym_ceildiv(ST(p)->s, a[0].ex, a[1].ex));
        if (ints && (!strcmp(name, "Mod") || !strcmp(name, "PythonMod"))) return b_int(sym_mod(ST(p)->s, a[0].ex, a[1].ex));
        if (ints && !strcmp(name, "ModularIndexing")) return b_int(sym_modidx(ST(p)->s, a[0].ex, a[1].ex, a[2].ex));
        if (ints && n == 2 && (!strcmp(name, "Min") || !strcmp(name, "Max")))
            return b_int(name[1] == 'i' ? sym_min(ST(p)->s, a[0].ex, a[1].ex) : sym_max(ST(p)->s, a[0].ex, a[1].ex));
        return fail(p, at, "%s is not lowered into kernels yet", name);
    }
    bool ints = true;
    for (int k = 0; k < n; k++) ints = ints && a[k].v.is_int;
    if (!strcmp(name, "IntTrueDiv") || !strcmp(name, "FloatTrueDiv")) {
        if (fval(a[1]) == 0) return fail(p, at, "division by zero in %s", name);
        return num_f(fval(a[0]) / fval(a[1]));
    }
    if (!strcmp(name, "ToFloat")) return num_f(fval(a[0]));
    if (!strcmp(name, "TruncToFloat")) return num_f(trunc(fval(a[0])));
    if (!strcmp(name, "Identity")) return a[0];
    if (!strcmp(name, "TruncToInt") || !strcmp(name, "RoundToInt") || !strcmp(name, "FloorToInt") ||
        !strcmp(name, "CeilToInt")) {
        if (a[0].v.is_int) return a[0];
        double x = fval(a[0]);
        double r = name[0] == 'T' ? trunc(x) : name[0] == 'R' ? round_even(x) : name[0] == 'F' ? floor(x) : ceil(x);
        if (!(r >= -9.2e18 && r <= 9.2e18)) return fail(p, at, "%s: value out of the int64 range", name);
        return num_i((int64_t)r);
    }
    if (!strcmp(name, "RoundDecimal")) {
        if (!a[1].v.is_int) return fail(p, at, "%s: the number of digits must be an int", name);
        double s = pow(10.0, (double)a[1].v.i);
        return num_f(round_even(fval(a[0]) * s) / s);
    }
    if (!strcmp(name, "FloatPow")) return num_f(pow(fval(a[0]), fval(a[1])));
    if (!strcmp(name, "Min") || !strcmp(name, "Max")) {
        FV r = a[0];
        for (int k = 1; k < n; k++)
            if (name[1] == 'i' ? fval(a[k]) < fval(r) : fval(a[k]) > fval(r)) r = a[k];
        return r;
    }
    if (!ints) return fail(p, at, "%s takes integer arguments", name);
    int64_t x = a[0].v.i, y = n > 1 ? a[1].v.i : 0;
    if (!strcmp(name, "PowByNatural")) return ipow(p, at, x, y);
    if (!strcmp(name, "LShift")) {
        int64_t r;
        if (y < 0 || y > 62) return fail(p, at, "%s: shift out of range", name);
        if (__builtin_mul_overflow(x, (int64_t)1 << y, &r)) return fail(p, at, "integer overflow in %s", name);
        return num_i(r);
    }
    if (!strcmp(name, "RShift")) return y < 0 ? fail(p, at, "%s: negative shift", name) : num_i(y > 62 ? (x < 0 ? -1 : 0) : x >> y);
    if (!strcmp(name, "BitwiseFn_bitwise_and")) return num_i(x & y);
    if (!strcmp(name, "BitwiseFn_bitwise_or")) return num_i(x | y);
    if (!strcmp(name, "BitwiseFn_bitwise_xor")) return num_i(x ^ y);
    if (y == 0 || (n == 3 && a[2].v.i == 0)) return fail(p, at, "division by zero in %s", name);
    bool is_mod = !strcmp(name, "Mod") || !strcmp(name, "PythonMod");
    if (x == INT64_MIN && y == -1 && !is_mod) return fail(p, at, "integer overflow in %s", name);   /* 2**63 */
    if (!strcmp(name, "FloorDiv") || !strcmp(name, "CleanDiv")) return num_i(py_floordiv(x, y));
    if (!strcmp(name, "CeilDiv")) {   /* -((-x) // y) without negating x (INT64_MIN) */
        int64_t q = x / y;
        return num_i(x % y != 0 && (x < 0) == (y < 0) ? q + 1 : q);
    }
    if (!strcmp(name, "Mod") || !strcmp(name, "PythonMod")) return num_i(py_mod(x, y));
    return num_i(py_mod(py_floordiv(x, y), a[2].v.i));   /* ModularIndexing */
}

/* ---- the semantics (SymSem) the grammar of sym_parse.c calls ---- */

/* A literal: build mode makes an int an Expr and a float the builder's constant. */
static FV sf_num(FP *p, const char *at, SymNum lit) {
    (void)at;
    const SymFloatBuilder *bld = ST(p)->bld;
    if (bld) return lit.is_int ? b_int(sym_int(ST(p)->s, lit.i)) : b_flt(bld->fconst(bld->ud, lit.f));
    FV r = {lit, false, NULL, NULL};
    return r;
}

/* A symbol: its binding (eval), unknown (check), an Expr (build); oo / nan / zoo are
 * sympy's infinity and not-a-number. */
static FV sf_name(FP *p, const char *at, const char *name) {
    FS *st = ST(p);
    bool special = !strcmp(name, "oo") || !strcmp(name, "nan") || !strcmp(name, "zoo");
    if (st->bld) return special ? fail(p, at, "'%s' is not lowered into kernels", name) : b_int(sym_symbol(st->s, name));
    if (special) return !strcmp(name, "oo") ? num_f(INFINITY) : num_f(NAN);
    if (st->check) return unknown();
    for (int k = 0; k < st->nb; k++)
        if (!strcmp(st->b[k].name, name)) return num_i(st->b[k].value);
    return fail(p, at, "symbol '%s' has no value", name);
}

/* a ** b: PowByNatural on ints with b >= 0, else float pow. */
static FV sf_pow(FP *p, const char *at, FV base, FV ex) {
    if (ST(p)->bld) return fail(p, at, "%s is not lowered into kernels yet", "**");
    if (base.unknown || ex.unknown) { base.unknown = true; return base; }
    if (base.v.is_int && ex.v.is_int && ex.v.i >= 0) return ipow(p, at, base.v.i, ex.v.i);
    return num_f(pow(fval(base), fval(ex)));
}

/* -a: build mode negates an Expr, or multiplies a float by -1.0; -INT64_MIN is an overflow. */
static FV sf_neg(FP *p, const char *at, FV a) {
    const SymFloatBuilder *bld = ST(p)->bld;
    if (bld) return a.ex ? b_int(sym_neg(ST(p)->s, a.ex)) : b_fbin(p, '*', b_flt(bld->fconst(bld->ud, -1.0)), a);
    if (a.unknown) return a;
    if (a.v.is_int && a.v.i == INT64_MIN) return fail(p, at, "integer overflow in %s", "unary '-'");
    return a.v.is_int ? num_i(-a.v.i) : num_f(-a.v.f);
}

static FV sf_call(FP *p, const char *at, const SymFn *f, FV *a, int n);

/* The operators: + - * / by Python's rules, // and % as FloorDiv and PythonMod. */
static FV sf_op(FP *p, const char *at, char op, FV a, FV b) {
    static const SymFn floordiv = {"FloorDiv", 2, 2, true, NULL}, pymod = {"PythonMod", 2, 2, true, NULL};
    if (op == 'n') return sf_neg(p, at, a);
    if (op == '^') return sf_pow(p, at, a, b);
    if (op == 'F' || op == '%') return sf_call(p, at, op == 'F' ? &floordiv : &pymod, (FV[]){a, b}, 2);
    return arith(p, at, op, a, b);
}

/* A function call; unknown when an argument is (check mode). */
static FV sf_call(FP *p, const char *at, const SymFn *f, FV *a, int n) {
    for (int k = 0; k < n; k++)
        if (a[k].unknown) return a[0].unknown ? a[0] : unknown();
    if (f->unary && !ST(p)->bld) return num_f(f->unary(fval(a[0])));
    return apply(p, at, f->name, a, n);
}

static const SymSem floats = {false, sf_num, sf_name, sf_op, sf_call};

/* Parse text under st: 0 and *out (the value; out may be NULL), or -1 with a ctx error. */
static int run(MiCtx *ctx, const char *text, FS *st, const char **end, FV *out) {
    SymParser p = {.ctx = ctx, .src = text, .p = text, .sem = &floats, .ud = st};
    return symi_parse(&p, out, end);
}

int symfloat_check(MiCtx *ctx, const char *text, const char **end) {
    FS st = {.check = true};
    return run(ctx, text, &st, end, NULL);
}

int symfloat_eval(MiCtx *ctx, const char *text, const SymBinding *b, int nb, SymNum *out) {
    FS st = {.b = b, .nb = nb};
    FV v;
    if (run(ctx, text, &st, NULL, &v) != 0) return -1;
    *out = v.v;
    return 0;
}

const void *symfloat_build(MiCtx *ctx, SymCtx *s, const char *text, const SymFloatBuilder *b) {
    FS st = {.s = s, .bld = b};
    FV v;
    if (run(ctx, text, &st, NULL, &v) != 0) return NULL;
    SymParser p = {.ctx = ctx, .sem = &floats, .ud = &st};
    return b_tofloat(&p, v);
}

bool symfloat_looks_float(const char *text) {
    static const char *words[] = {"IntTrueDiv", "FloatTrueDiv", "ToFloat", "TruncTo", "RoundToInt",
                                  "RoundDecimal", "FloatPow", "PowByNatural", "OpaqueUnaryFn_",
                                  "FloorToInt", "CeilToInt", "LShift", "RShift", "BitwiseFn_"};
    for (const char *q = text; *q; q++)
        if (*q == '.' && q > text && isdigit((unsigned char)q[-1])) return true;
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strstr(text, words[k])) return true;
    return false;
}
