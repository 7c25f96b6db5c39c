/* symfloat.c — check and evaluate symbolic float expressions ("IntTrueDiv(8*s0, 8) - 1.0");
 * see symfloat.h for the functions (torch/utils/_sympy/functions.py). One recursive-descent
 * pass parses and evaluates at once: with no bindings (check) symbols are unknown and the
 * arithmetic is skipped, so only the syntax and the arity of the functions are checked. */
#include "base/symfloat.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    MiCtx *ctx;
    const char *text, *p;
    const SymBinding *b;
    int nb;
    bool check;     /* no bindings: only the syntax counts */
    SymCtx *s;                     /* build mode (symfloat_build): s and bld set */
    const SymFloatBuilder *bld;
    bool failed;
    int depth;
} FP;

enum { MAX_DEPTH = 200, MAX_ARGS = 16 };

/* A parsed value; unknown when a symbol has no binding (check mode). */
typedef struct { SymNum v; bool unknown; Expr *ex; const void *fn; } FV;   /* ex / fn: build mode */

static FV fail(FP *p, const char *at, const char *fmt, const char *what) {
    if (!p->failed) mi_err(p->ctx, NULL, 0, (int)(at - p->text) + 1, fmt, what);
    p->failed = true;
    FV r = {{true, 0, 0}, true};
    return r;
}

static void ws(FP *p) { while (*p->p == ' ') p->p++; }

static FV num_i(int64_t i) { FV r = {{true, i, (double)i}, false}; return r; }
static FV num_f(double f) { FV r = {{false, 0, f}, false}; return r; }
static double fval(FV a) { return a.v.is_int ? (double)a.v.i : a.v.f; }

/* build mode: an integer part as an expression, a float part as the builder's value */
static FV b_int(Expr *e) { FV r = {{true, 0, 0}, false, e, NULL}; return r; }
static FV b_flt(const void *f) { FV r = {{false, 0, 0}, false, NULL, f}; return r; }
static const void *b_tofloat(FP *p, FV a) { return a.fn ? a.fn : p->bld->from_int(p->bld->ud, a.ex); }
static FV b_fbin(FP *p, char op, FV a, FV b) { return b_flt(p->bld->fbin(p->bld->ud, op, b_tofloat(p, a), b_tofloat(p, b))); }

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

static FV p_expr(FP *p);

/* Binary arithmetic with Python's int/float rules: int op int stays int except '/', which
 * sympy prints for rationals (a true division). */
static FV arith(FP *p, const char *at, char op, FV a, FV b) {
    if (p->bld) {
        if (op == '/' || !a.ex || !b.ex) return b_fbin(p, op, a, b);
        return b_int(op == '+' ? sym_add(p->s, a.ex, b.ex) : op == '-' ? sym_sub(p->s, a.ex, b.ex) : sym_mul(p->s, a.ex, b.ex));
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

typedef struct { const char *name; int min, max; } Fn;
static const Fn fns[] = {
    {"IntTrueDiv", 2, 2}, {"FloatTrueDiv", 2, 2}, {"ToFloat", 1, 1}, {"TruncToFloat", 1, 1},
    {"TruncToInt", 1, 1}, {"RoundToInt", 1, 1}, {"RoundDecimal", 2, 2}, {"FloorToInt", 1, 1},
    {"CeilToInt", 1, 1}, {"PowByNatural", 2, 2}, {"FloatPow", 2, 2}, {"Identity", 1, 1},
    {"FloorDiv", 2, 2}, {"CleanDiv", 2, 2}, {"CeilDiv", 2, 2}, {"ModularIndexing", 3, 3},
    {"Mod", 2, 2}, {"PythonMod", 2, 2}, {"Min", 1, MAX_ARGS}, {"Max", 1, MAX_ARGS},
    {"LShift", 2, 2}, {"RShift", 2, 2}, {"BitwiseFn_bitwise_and", 2, 2},
    {"BitwiseFn_bitwise_or", 2, 2}, {"BitwiseFn_bitwise_xor", 2, 2},
};

typedef struct { const char *name; double (*f)(double); } Unary;
static const Unary unaries[] = {
    {"sqrt", sqrt}, {"exp", exp}, {"log", log}, {"log2", log2}, {"cos", cos}, {"sin", sin},
    {"tan", tan}, {"cosh", cosh}, {"sinh", sinh}, {"tanh", tanh}, {"asin", asin}, {"acos", acos},
    {"atan", atan},
};

/* Python's round() of a float: to nearest, ties to even. */
static double round_even(double x) { return x - remainder(x, 1.0); }

/* Apply function name to args (all known). */
static FV apply(FP *p, const char *at, const char *name, FV *a, int n) {
    if (p->bld) {
        if (!strcmp(name, "IntTrueDiv") || !strcmp(name, "FloatTrueDiv")) return b_fbin(p, '/', a[0], a[1]);
        if (!strcmp(name, "ToFloat")) return b_flt(b_tofloat(p, a[0]));
        if (!strcmp(name, "Identity")) return a[0];
        bool ints = true;
        for (int k = 0; k < n; k++) ints = ints && a[k].ex;
        if (ints && (!strcmp(name, "FloorDiv") || !strcmp(name, "CleanDiv"))) return b_int(sym_floordiv(p->s, a[0].ex, a[1].ex));
        if (ints && !strcmp(name, "CeilDiv")) return b_int(sym_ceildiv(p->s, a[0].ex, a[1].ex));
        if (ints && (!strcmp(name, "Mod") || !strcmp(name, "PythonMod"))) return b_int(sym_mod(p->s, a[0].ex, a[1].ex));
        if (ints && !strcmp(name, "ModularIndexing")) return b_int(sym_modidx(p->s, a[0].ex, a[1].ex, a[2].ex));
        if (ints && n == 2 && (!strcmp(name, "Min") || !strcmp(name, "Max")))
            return b_int(name[1] == 'i' ? sym_min(p->s, a[0].ex, a[1].ex) : sym_max(p->s, a[0].ex, a[1].ex));
        return fail(p, at, "%s is not lowered into kernels yet", name);
    }
    if (!strncmp(name, "OpaqueUnaryFn_", 14)) {
        for (size_t k = 0; k < sizeof unaries / sizeof unaries[0]; k++)
            if (!strcmp(unaries[k].name, name + 14)) return num_f(unaries[k].f(fval(a[0])));
        return fail(p, at, "unknown function '%s'", name);
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

static FV p_call(FP *p, const char *name, const char *at) {
    const Fn *f = NULL;
    static const Fn unary = {"OpaqueUnaryFn_", 1, 1};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(fns[i].name, name)) f = &fns[i];
    if (!f && !strncmp(name, "OpaqueUnaryFn_", 14)) {
        bool known = false;
        for (size_t k = 0; k < sizeof unaries / sizeof unaries[0]; k++) known |= !strcmp(unaries[k].name, name + 14);
        if (known) f = &unary;
    }
    if (!f) return fail(p, at, "unknown function '%s'", name);
    p->p++;   /* '(' */
    FV a[MAX_ARGS];
    int n = 0;
    bool unknown = false;
    for (;;) {
        ws(p);
        const char *arg_at = p->p;
        FV x = p_expr(p);
        if (p->failed) return x;
        if (n >= f->max) return fail(p, arg_at, "%s takes too many arguments", name);
        unknown |= x.unknown;
        a[n++] = x;
        ws(p);
        if (*p->p == ',') { p->p++; continue; }
        if (*p->p == ')') { p->p++; break; }
        return fail(p, p->p, "expected ',' or ')' in the arguments of %s", name);
    }
    if (n < f->min) return fail(p, at, "%s takes more arguments", name);
    if (unknown) return a[0].unknown ? a[0] : (FV){{true, 0, 0}, true};
    return apply(p, at, name, a, n);
}

/* A number: digits with an optional fraction and exponent ("8", "1.0", "0.100000000000000",
 * "1.0e-5"); an int when it has neither. */
static FV p_number(FP *p) {
    const char *at = p->p;
    char *end;
    bool is_float = false;
    const char *q = p->p;
    while (isdigit((unsigned char)*q)) q++;
    if (*q == '.' || *q == 'e' || *q == 'E') is_float = true;
    if (is_float) {
        double d = strtod(p->p, &end);
        p->p = end;
        return p->bld ? b_flt(p->bld->fconst(p->bld->ud, d)) : num_f(d);
    }
    errno = 0;
    long long v = strtoll(p->p, &end, 10);
    if (errno) return fail(p, at, "integer literal out of the %s range", "int64");
    p->p = end;
    return p->bld ? b_int(sym_int(p->s, v)) : num_i(v);
}

static FV p_atom(FP *p) {
    ws(p);
    const char *at = p->p;
    if (isdigit((unsigned char)*p->p)) return p_number(p);
    if (*p->p == '(') {
        p->p++;
        FV e = p_expr(p);
        if (p->failed) return e;
        ws(p);
        if (*p->p != ')') return fail(p, p->p, "expected %s", "')'");
        p->p++;
        return e;
    }
    if (isalpha((unsigned char)*p->p) || *p->p == '_') {
        char name[64];
        size_t n = 0;
        while (isalnum((unsigned char)*p->p) || *p->p == '_') {
            if (n + 1 >= sizeof name) return fail(p, at, "name too long%s", "");
            name[n++] = *p->p++;
        }
        name[n] = 0;
        ws(p);
        if (*p->p == '(') return p_call(p, name, at);
        if (p->bld) {
            if (!strcmp(name, "oo") || !strcmp(name, "nan") || !strcmp(name, "zoo"))
                return fail(p, at, "'%s' is not lowered into kernels", name);
            return b_int(sym_symbol(p->s, name));
        }
        if (!strcmp(name, "oo") || !strcmp(name, "nan") || !strcmp(name, "zoo"))
            return !strcmp(name, "oo") ? num_f(INFINITY) : num_f(NAN);
        if (p->check) { FV r = {{true, 0, 0}, true}; return r; }
        for (int k = 0; k < p->nb; k++)
            if (!strcmp(p->b[k].name, name)) return num_i(p->b[k].value);
        return fail(p, at, "symbol '%s' has no value", name);
    }
    return fail(p, at, "expected an expression%s", "");
}

static FV p_unary(FP *p);

static FV p_power(FP *p) {
    FV base = p_atom(p);
    if (p->failed) return base;
    ws(p);
    if (p->p[0] != '*' || p->p[1] != '*') return base;
    const char *at = p->p;
    p->p += 2;
    if (++p->depth > MAX_DEPTH) return fail(p, at, "expression nested too deeply%s", "");
    FV ex = p_unary(p);
    p->depth--;
    if (p->failed) return ex;
    if (p->bld) return fail(p, at, "%s is not lowered into kernels yet", "**");
    if (base.unknown || ex.unknown) { base.unknown = true; return base; }
    if (base.v.is_int && ex.v.is_int && ex.v.i >= 0) return ipow(p, at, base.v.i, ex.v.i);
    return num_f(pow(fval(base), fval(ex)));
}

static FV p_unary(FP *p) {
    ws(p);
    if (*p->p == '-') {
        const char *at = p->p;
        p->p++;
        if (++p->depth > MAX_DEPTH) return fail(p, at, "expression nested too deeply%s", "");
        FV a = p_unary(p);
        p->depth--;
        if (p->failed) return a;
        if (p->bld) return a.ex ? b_int(sym_neg(p->s, a.ex)) : b_fbin(p, '*', b_flt(p->bld->fconst(p->bld->ud, -1.0)), a);
        if (a.unknown) return a;
        if (a.v.is_int && a.v.i == INT64_MIN) return fail(p, at, "integer overflow in %s", "unary '-'");
        return a.v.is_int ? num_i(-a.v.i) : num_f(-a.v.f);
    }
    return p_power(p);
}

static FV p_term(FP *p) {
    FV a = p_unary(p);
    for (;;) {
        if (p->failed) return a;
        ws(p);
        char c = *p->p;
        if (!((c == '*' && p->p[1] != '*') || c == '/')) return a;
        const char *at = p->p++;
        FV b = p_unary(p);
        if (p->failed) return b;
        a = arith(p, at, c, a, b);
    }
}

static FV p_expr(FP *p) {
    if (++p->depth > MAX_DEPTH) return fail(p, p->p, "expression nested too deeply%s", "");
    FV a = p_term(p);
    for (;;) {
        if (p->failed) break;
        ws(p);
        char c = *p->p;
        if (c != '+' && c != '-') break;
        const char *at = p->p++;
        FV b = p_term(p);
        if (p->failed) { a = b; break; }
        a = arith(p, at, c, a, b);
    }
    p->depth--;
    return a;
}

/* Parse (and evaluate unless check) text; the rest must be empty unless end is given. */
static int run(FP *p, const char **end, SymNum *out) {
    FV v = p_expr(p);
    if (p->failed) return -1;
    ws(p);
    if (end) *end = p->p;
    else if (*p->p) {
        fail(p, p->p, "unexpected text '%s'", p->p);
        return -1;
    }
    if (out) *out = v.v;
    return 0;
}

int symfloat_check(MiCtx *ctx, const char *text, const char **end) {
    FP p = {.ctx = ctx, .text = text, .p = text, .check = true};
    return run(&p, end, NULL);
}

int symfloat_eval(MiCtx *ctx, const char *text, const SymBinding *b, int nb, SymNum *out) {
    FP p = {.ctx = ctx, .text = text, .p = text, .b = b, .nb = nb};
    return run(&p, NULL, out);
}

const void *symfloat_build(MiCtx *ctx, SymCtx *s, const char *text, const SymFloatBuilder *b) {
    FP p = {.ctx = ctx, .text = text, .p = text, .s = s, .bld = b};
    FV v = p_expr(&p);
    if (p.failed) return NULL;
    ws(&p);
    if (*p.p) { fail(&p, p.p, "unexpected text '%s'", p.p); return NULL; }
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
