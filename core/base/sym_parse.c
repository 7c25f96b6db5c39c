/* sym_parse.c — the one parser of sympy expression text as PyTorch prints it: sizes
 * ("2*s0 + 1", "FloorDiv(x0, 64)") into the hash-consed Exprs of core/base/sym.c (what the FX
 * loader uses for the size annotations of a graph), and SymInt / SymFloat values
 * ("IntTrueDiv(8*s0, 8) - 1.0") under symfloat.c's semantics. A recursive-descent parser
 * with a grammar line above each rule; bounded in depth and size. The grammar builds nothing
 * itself: each literal, symbol, operator and call goes to the semantics (SymSem, sym_internal.h).
 *
 * Python precedence (sympy's str printer): unary minus binds looser than ** (-x**2 ==
 * -(x**2)); "-9223372036854775808" is one literal (how INT64_MIN prints). Functions are those
 * of torch/utils/_sympy/functions.py (table below); FloorDiv prints as "(a//b)", PythonMod as
 * "a % b". */
#include "base/sym_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARSE_DEPTH 200     /* deepest nesting the parser accepts */
#define PARSE_MAX_ARGS 1024 /* most args of one call; most terms/factors of one size node */

SymVal symi_fail(SymParser *p, const char *at, const char *fmt, ...) {
    SymVal r = {{true, 0, 0}, true, NULL, NULL};
    if (p->failed) return r;
    p->failed = true;
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int col = (int)(at - p->src) + 1;
    size_t len = strlen(p->src);
    if (!p->sem->sizes) mi_err(p->ctx, NULL, 0, col, "%s", why);
    else
        mi_err(p->ctx, NULL, 0, col, "%s at column %d of size expression \"%.*s%s\"", why, col,
               len > 80 ? 77 : (int)len, p->src, len > 80 ? "..." : "");
    return r;
}

static void skip_ws(SymParser *p) {
    while (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r') p->p++;
}

/* What was found, for messages. */
static const char *found(const char *at, char *buf, size_t n) {
    if (!*at) return "end of text";
    if (isprint((unsigned char)*at)) snprintf(buf, n, "'%c'", *at);
    else snprintf(buf, n, "byte 0x%02x", (unsigned char)*at);
    return buf;
}

/* The end of a float literal's fraction and exponent after its digits at q ("1.0",
 * "0.100000000000000", "1.00000000000000e-5"), or q itself when none follows (an int). */
static const char *float_tail(const char *q) {
    const char *r = q;
    if (*r == '.') {
        r++;
        while (isdigit((unsigned char)*r)) r++;
    }
    if ((*r == 'e' || *r == 'E') && (isdigit((unsigned char)r[1]) ||
                                     ((r[1] == '+' || r[1] == '-') && isdigit((unsigned char)r[2])))) {
        r += 2;
        while (isdigit((unsigned char)*r)) r++;
    }
    return r;
}

/* The functions of torch/utils/_sympy/functions.py PyTorch prints; size expressions take
 * those sym.c builds (size). */
static const SymFn fns[] = {
    {"FloorDiv", 2, 2, true, NULL}, {"CleanDiv", 2, 2, true, NULL}, {"CeilDiv", 2, 2, true, NULL},
    {"ModularIndexing", 3, 3, true, NULL}, {"Mod", 2, 2, true, NULL}, {"PythonMod", 2, 2, true, NULL},
    {"Min", 1, PARSE_MAX_ARGS, true, NULL}, {"Max", 1, PARSE_MAX_ARGS, true, NULL},
    {"Identity", 1, 1, true, NULL},
    {"IntTrueDiv", 2, 2, false, NULL}, {"FloatTrueDiv", 2, 2, false, NULL}, {"ToFloat", 1, 1, false, NULL},
    {"TruncToFloat", 1, 1, false, NULL}, {"TruncToInt", 1, 1, false, NULL}, {"RoundToInt", 1, 1, false, NULL},
    {"RoundDecimal", 2, 2, false, NULL}, {"FloorToInt", 1, 1, false, NULL}, {"CeilToInt", 1, 1, false, NULL},
    {"PowByNatural", 2, 2, false, NULL}, {"FloatPow", 2, 2, false, NULL}, {"LShift", 2, 2, false, NULL},
    {"RShift", 2, 2, false, NULL}, {"BitwiseFn_bitwise_and", 2, 2, false, NULL},
    {"BitwiseFn_bitwise_or", 2, 2, false, NULL}, {"BitwiseFn_bitwise_xor", 2, 2, false, NULL},
    {"OpaqueUnaryFn_sqrt", 1, 1, false, sqrt}, {"OpaqueUnaryFn_exp", 1, 1, false, exp},
    {"OpaqueUnaryFn_log", 1, 1, false, log}, {"OpaqueUnaryFn_log2", 1, 1, false, log2},
    {"OpaqueUnaryFn_cos", 1, 1, false, cos}, {"OpaqueUnaryFn_sin", 1, 1, false, sin},
    {"OpaqueUnaryFn_tan", 1, 1, false, tan}, {"OpaqueUnaryFn_cosh", 1, 1, false, cosh},
    {"OpaqueUnaryFn_sinh", 1, 1, false, sinh}, {"OpaqueUnaryFn_tanh", 1, 1, false, tanh},
    {"OpaqueUnaryFn_asin", 1, 1, false, asin}, {"OpaqueUnaryFn_acos", 1, 1, false, acos},
    {"OpaqueUnaryFn_atan", 1, 1, false, atan},
};

static SymVal p_expr(SymParser *p);
static SymVal p_unary(SymParser *p);

/* number := DIGITS ('.' DIGITS*)? (('e' | 'E') ('+' | '-')? DIGITS)?
 * An int unless it has a fraction or an exponent (size expressions refuse those). negate:
 * the literal after a '-' (so -9223372036854775808 fits). */
static SymVal p_number(SymParser *p, bool negate) {
    const char *at = p->p;
    uint64_t v = 0;
    bool big = false;
    while (isdigit((unsigned char)*p->p)) {
        unsigned d = (unsigned)(*p->p - '0');
        if (v > (UINT64_MAX - d) / 10) big = true;
        else v = v * 10 + d;
        p->p++;
    }
    const char *tail = p->sem->sizes ? p->p : float_tail(p->p);
    SymNum lit = {true, 0, 0};
    if (tail != p->p) {
        lit.is_int = false;
        lit.f = strtod(at, NULL);
        if (negate) lit.f = -lit.f;
        p->p = tail;
    }
    if (isalpha((unsigned char)*p->p) || *p->p == '_' || *p->p == '.')
        return symi_fail(p, p->p, "unexpected '%c' after the number", *p->p);
    if (lit.is_int) {
        uint64_t limit = negate ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        if (big || v > limit) return symi_fail(p, at, "integer literal out of the int64 range");
        lit.i = negate ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
        lit.f = (double)lit.i;
    }
    return p->sem->num(p, at, lit);
}

/* call := NAME '(' expr (',' expr)* ')'    (p->p at the '(') */
static SymVal p_call(SymParser *p, const char *name, const char *at) {
    const SymFn *f = NULL;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(fns[i].name, name)) f = &fns[i];
    if (!f) return symi_fail(p, at, "unknown function '%s'", name);
    if (p->sem->sizes && !f->size) return symi_fail(p, at, "%s is not supported in size expressions", name);
    const char *open = p->p;
    p->p++;   /* '(' */
    SymVal *a = NULL, r;
    int n = 0;
    char fb[16];
    for (;;) {
        skip_ws(p);
        const char *arg_at = p->p;
        SymVal x = p_expr(p);
        if (p->failed) { r = x; goto out; }
        if (n >= f->max) { r = symi_fail(p, arg_at, "%s takes at most %d arguments", name, f->max); goto out; }
        if ((n & (n - 1)) == 0) a = mi_xrealloc(a, sizeof *a * (size_t)(n ? 2 * n : 1));
        a[n++] = x;
        skip_ws(p);
        if (*p->p == ',') { p->p++; continue; }
        if (*p->p == ')') { p->p++; break; }
        r = symi_fail(p, p->p, "expected ',' or ')' to close '(' at column %d, found %s", (int)(open - p->src) + 1,
                      found(p->p, fb, sizeof fb));
        goto out;
    }
    if (n < f->min) r = symi_fail(p, at, "%s takes %d argument%s, got %d", name, f->min, f->min == 1 ? "" : "s", n);
    else r = p->sem->call(p, at, f, a, n);
out:
    free(a);
    return r;
}

/* atom := number | NAME | call | '(' expr ')' */
static SymVal p_atom(SymParser *p) {
    char fb[16];
    skip_ws(p);
    const char *at = p->p;
    if (isdigit((unsigned char)*p->p)) {
        bool neg = p->neg_literal;
        p->neg_literal = false;
        return p_number(p, neg);
    }
    if (*p->p == '(') {
        p->p++;
        SymVal e = p_expr(p);
        if (p->failed) return e;
        skip_ws(p);
        if (*p->p != ')')
            return symi_fail(p, p->p, "expected ')' to close '(' at column %d, found %s", (int)(at - p->src) + 1,
                             found(p->p, fb, sizeof fb));
        p->p++;
        return e;
    }
    if (isalpha((unsigned char)*p->p) || *p->p == '_') {
        char name[64];
        size_t n = 0;
        while (isalnum((unsigned char)*p->p) || *p->p == '_') {
            if (n + 1 >= sizeof name) return symi_fail(p, at, "name too long (more than %d characters)", (int)sizeof name - 1);
            name[n++] = *p->p++;
        }
        name[n] = 0;
        skip_ws(p);
        if (*p->p == '(') return p_call(p, name, at);
        return p->sem->name(p, at, name);
    }
    return symi_fail(p, at, "expected an expression, found %s", found(p->p, fb, sizeof fb));
}

/* power := atom ('**' unary)? */
static SymVal p_power(SymParser *p) {
    skip_ws(p);
    const char *lhs = p->p;
    SymVal base = p_atom(p);
    if (p->failed) return base;
    skip_ws(p);
    if (p->p[0] != '*' || p->p[1] != '*') return base;
    const char *at = p->p;
    p->p += 2;
    SymVal ex = p_unary(p);
    if (p->failed) return ex;
    p->lhs = lhs;
    return p->sem->op(p, at, '^', base, ex);
}

/* unary := ('-' | '+') unary | '-' number    (a number not raised by '**': -2**2 == -(2**2))
 *        | power */
static SymVal p_unary(SymParser *p) {
    skip_ws(p);
    if (++p->depth > PARSE_DEPTH) return symi_fail(p, p->p, "expression nested too deeply (limit %d)", PARSE_DEPTH);
    SymVal r;
    const char *at = p->p;
    if (*p->p == '-' || *p->p == '+') {
        bool minus = *p->p == '-';
        p->p++;
        skip_ws(p);
        const char *q = p->p;
        while (isdigit((unsigned char)*q)) q++;
        if (!p->sem->sizes) q = float_tail(q);
        while (*q == ' ' || *q == '\t') q++;
        if (minus && isdigit((unsigned char)*p->p) && !(q[0] == '*' && q[1] == '*')) {
            r = p_number(p, true);
        } else {
            r = p_unary(p);
            if (!p->failed && minus) r = p->sem->op(p, at, 'n', r, r);
        }
    } else {
        r = p_power(p);
    }
    p->depth--;
    return r;
}

/* term := unary (('*' | '/' | '//' | '%') unary)*    (sizes: no '/') */
static SymVal p_term(SymParser *p) {
    skip_ws(p);
    const char *lhs = p->p;
    SymVal a = p_unary(p);
    while (!p->failed) {
        skip_ws(p);
        const char *at = p->p;
        char op;
        if (p->only_mul == p->depth && (at[0] == '%' || at[0] == '/'))
            return symi_fail(p, at, "integer literal out of the int64 range");
        if (at[0] == '/' && at[1] == '/') { op = 'F'; p->p += 2; }
        else if (at[0] == '/' && p->sem->sizes)
            return symi_fail(p, at, "true division '/' is not supported in size expressions; use '//'");
        else if (at[0] == '/' || at[0] == '%' || (at[0] == '*' && at[1] != '*')) { op = at[0]; p->p++; }
        else break;
        SymVal b = p_unary(p);
        if (p->failed) return b;
        p->lhs = lhs;
        a = p->sem->op(p, at, op, a, b);
    }
    return a;
}

/* expr := term (('+' | '-') term)*
 * "x - 9223372036854775808" (how sympy prints an INT64_MIN term) adds the negated literal. */
static SymVal p_expr(SymParser *p) {
    if (++p->depth > PARSE_DEPTH) return symi_fail(p, p->p, "expression nested too deeply (limit %d)", PARSE_DEPTH);
    SymVal a = p_term(p);
    while (!p->failed) {
        skip_ws(p);
        const char *at = p->p;
        if (*at != '+' && *at != '-') break;
        p->p++;
        const char *q = p->p;
        while (*q == ' ' || *q == '\t') q++;
        bool neg = *at == '-' && !strncmp(q, "9223372036854775808", 19) && !isdigit((unsigned char)q[19]);
        if (neg) {
            const char *r = q + 19;
            while (*r == ' ' || *r == '\t') r++;
            neg = !(r[0] == '*' && r[1] == '*');
        }
        p->neg_literal = neg;
        p->only_mul = neg ? p->depth : 0;
        SymVal b = p_term(p);
        p->neg_literal = false;
        p->only_mul = 0;
        if (p->failed) return b;
        a = p->sem->op(p, at, (*at == '+' || neg) ? '+' : '-', a, b);
    }
    p->depth--;
    return a;
}

int symi_parse(SymParser *p, SymVal *out, const char **end) {
    SymVal v = p_expr(p);
    if (!p->failed) {
        skip_ws(p);
        if (!end && *p->p) {
            char fb[16];
            symi_fail(p, p->p, "unexpected %s after the expression", found(p->p, fb, sizeof fb));
        }
    }
    if (end) *end = p->p;
    if (p->failed) return -1;
    if (out) *out = v;
    return 0;
}

/* ---------------------------------------------------------------- size semantics
 * Every value is an Expr; each built node passes checked(). */

static SymVal sz(Expr *e) {
    SymVal v = {{true, 0, 0}, false, e, NULL};
    return v;
}

/* Checks after building a node: folding overflow, size limit. The terms of a sum count too:
 * multiplying out a power of a sum builds them without passing here, and (a**1000 + b)**60
 * would otherwise grow terms of 60000 factors, seconds of work (fuzz_sym timeout). */
static SymVal checked(SymParser *p, Expr *e, const char *at) {
    SymCtx *s = p->ud;
    if (sym_take_overflow(s)) return symi_fail(p, at, "integer overflow while folding constants");
    int most = e->n;
    for (int i = 0; e->kind == EX_ADD && i < e->n; i++)
        if (e->args[i]->n > most) most = e->args[i]->n;
    if (most > PARSE_MAX_ARGS) return symi_fail(p, at, "expression too large (more than %d terms)", PARSE_MAX_ARGS);
    /* the degree limit holds for products written out too (x*x*...*x), not only for x**k, so
     * that whatever parses prints as text that parses again */
    int deg = symi_degree(e);
    if (deg > sym_max_degree(s)) {
        char hint[160];
        return symi_fail(p, at, "degree %d is over the degree limit (%s)", deg,
                         mi_limit_hint("sym_degree", sym_max_degree(s), hint, sizeof hint));
    }
    return sz(e);
}

static SymVal sz_num(SymParser *p, const char *at, SymNum lit) {
    (void)at;
    return sz(sym_int(p->ud, lit.i));
}

static SymVal sz_name(SymParser *p, const char *at, const char *name) {
    (void)at;
    return sz(sym_symbol(p->ud, name));
}

/* base ** k for a constant 0 <= k <= the degree limit, multiplied out. */
static SymVal sz_pow(SymParser *p, const char *at, Expr *base, Expr *ex) {
    SymCtx *s = p->ud;
    int64_t k;
    if (!sym_is_int(ex, &k) || k < 0)
        return symi_fail(p, at, "exponent must be a non-negative integer constant");
    if (k > sym_max_degree(s)) {
        char hint[160];
        return symi_fail(p, at, "exponent %lld is over the degree limit (%s)", (long long)k,
                         mi_limit_hint("sym_degree", sym_max_degree(s), hint, sizeof hint));
    }
    SymVal r = sz(sym_int(s, 1));
    for (int64_t i = 0; i < k && !p->failed; i++) r = checked(p, sym_mul(s, r.ex, base), at);
    return r;
}

static SymVal sz_op(SymParser *p, const char *at, char op, SymVal a, SymVal b) {
    SymCtx *s = p->ud;
    switch (op) {
    case '+': return checked(p, sym_add(s, a.ex, b.ex), at);
    case '-': return checked(p, sym_sub(s, a.ex, b.ex), at);
    case '*': return checked(p, sym_mul(s, a.ex, b.ex), at);
    case 'F': return checked(p, sym_floordiv(s, a.ex, b.ex), at);
    case '%': return checked(p, sym_mod(s, a.ex, b.ex), at);
    case 'n': return checked(p, sym_neg(s, a.ex), at);
    default: return sz_pow(p, at, a.ex, b.ex);   /* '^' ('/' is refused by the grammar) */
    }
}

static SymVal sz_call(SymParser *p, const char *at, const SymFn *f, SymVal *a, int n) {
    SymCtx *s = p->ud;
    const char *name = f->name;
    Expr *r;
    if (!strcmp(name, "FloorDiv") || !strcmp(name, "CleanDiv")) r = sym_floordiv(s, a[0].ex, a[1].ex);
    else if (!strcmp(name, "CeilDiv")) r = sym_ceildiv(s, a[0].ex, a[1].ex);
    else if (!strcmp(name, "ModularIndexing")) r = sym_modidx(s, a[0].ex, a[1].ex, a[2].ex);
    else if (!strcmp(name, "Mod") || !strcmp(name, "PythonMod")) r = sym_mod(s, a[0].ex, a[1].ex);
    else if (!strcmp(name, "Identity")) r = a[0].ex;
    else {
        Expr **v = mi_xmalloc(sizeof *v * (size_t)n);
        for (int i = 0; i < n; i++) v[i] = a[i].ex;
        r = symi_minmax(s, !strcmp(name, "Min") ? EX_MIN : EX_MAX, v, n);
        free(v);
    }
    return checked(p, r, at);
}

static const SymSem sizes = {true, sz_num, sz_name, sz_op, sz_call};

Expr *sym_parse(MiCtx *ctx, const char *text, const char **end) {
    SymParser p = {.ctx = ctx, .src = text, .p = text, .sem = &sizes, .ud = ctx->sym};
    sym_take_overflow(ctx->sym);
    SymVal v;
    return symi_parse(&p, &v, end) == 0 ? v.ex : NULL;
}
