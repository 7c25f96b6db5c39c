/* sym_parse.c — size expressions from text ("2*s0 + 1", "FloorDiv(x0, 64)") into hash-consed
 * Exprs of core/base/sym.c: what the FX loader uses for the size annotations of a graph.
 * A recursive-descent parser with a grammar line above each rule; bounded in depth and size. */
#include "base/sym_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARSE_DEPTH 200     /* deepest nesting sym_parse accepts */
#define PARSE_MAX_ARGS 1024 /* most terms/factors/args of one node sym_parse builds */

/* ---------------------------------------------------------------- parsing
 *
 *   expr   := term (('+' | '-') term)*
 *   term   := unary (('*' | '//' | '%') unary)*
 *   unary  := ('-' | '+') unary | power
 *   power  := atom ('**' unary)?            exponent: an integer constant 0..PARSE_MAX_ARGS
 *   atom   := INT | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 * Functions: FloorDiv, CleanDiv, CeilDiv, ModularIndexing, Mod, PythonMod, Min, Max,
 * Identity.  Python precedence: unary minus binds looser than ** (-x**2 == -(x**2)). */

typedef struct {
    MiCtx *ctx;
    SymCtx *s;
    const char *src, *p;
    int depth;
    bool failed;
    bool neg_literal;   /* the next literal is negated (term after a binary '-' with 2^63) */
    int only_mul;       /* depth at which that term may use '*' only (-(a//b) != (-a)//b); 0 none */
} Parser;

static Expr *perr(Parser *p, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static Expr *perr(Parser *p, const char *at, const char *fmt, ...) {
    if (p->failed) return NULL;
    p->failed = true;
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int col = (int)(at - p->src) + 1;
    size_t len = strlen(p->src);
    mi_err(p->ctx, NULL, 0, col, "%s at column %d of size expression \"%.*s%s\"", why, col,
           len > 80 ? 77 : (int)len, p->src, len > 80 ? "..." : "");
    return NULL;
}

static void skip_ws(Parser *p) {
    while (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r') p->p++;
}

/* What was found, for messages. */
static const char *found(const char *at, char *buf, size_t n) {
    if (!*at) return "end of text";
    if (isprint((unsigned char)*at)) snprintf(buf, n, "'%c'", *at);
    else snprintf(buf, n, "byte 0x%02x", (unsigned char)*at);
    return buf;
}

/* Checks after building a node: folding overflow, size limit. The terms of a sum count too:
 * multiplying out a power of a sum builds them without passing here, and (a**1000 + b)**60
 * would otherwise grow terms of 60000 factors, seconds of work (fuzz_sym timeout). */
static Expr *checked(Parser *p, Expr *e, const char *at) {
    if (!e) return NULL;
    if (sym_take_overflow(p->s)) return perr(p, at, "integer overflow while folding constants");
    int most = e->n;
    for (int i = 0; e->kind == EX_ADD && i < e->n; i++)
        if (e->args[i]->n > most) most = e->args[i]->n;
    if (most > PARSE_MAX_ARGS) return perr(p, at, "expression too large (more than %d terms)", PARSE_MAX_ARGS);
    /* the degree limit holds for products written out too (x*x*...*x), not only for x**k, so
     * that whatever parses prints as text that parses again */
    int deg = symi_degree(e);
    if (deg > sym_max_degree(p->s)) {
        char hint[160];
        return perr(p, at, "degree %d is over the degree limit (%s)", deg,
                    mi_limit_hint("sym_degree", sym_max_degree(p->s), hint, sizeof hint));
    }
    return e;
}

static Expr *p_expr(Parser *p);
static Expr *p_unary(Parser *p);

static Expr *p_number(Parser *p, bool negate) {
    const char *at = p->p;
    uint64_t v = 0;
    bool big = false;
    while (isdigit((unsigned char)*p->p)) {
        unsigned d = (unsigned)(*p->p - '0');
        if (v > (UINT64_MAX - d) / 10) big = true;
        else v = v * 10 + d;
        p->p++;
    }
    if (isalpha((unsigned char)*p->p) || *p->p == '_' || *p->p == '.')
        return perr(p, p->p, "unexpected '%c' after the number", *p->p);
    uint64_t limit = negate ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (big || v > limit) return perr(p, at, "integer literal out of the int64 range");
    if (negate) return sym_int(p->s, v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
    return sym_int(p->s, (int64_t)v);
}

typedef struct { const char *name; int min, max; } FnSpec;
static const FnSpec fns[] = {
    {"FloorDiv", 2, 2}, {"CleanDiv", 2, 2}, {"CeilDiv", 2, 2}, {"ModularIndexing", 3, 3},
    {"Mod", 2, 2}, {"PythonMod", 2, 2}, {"Min", 1, PARSE_MAX_ARGS}, {"Max", 1, PARSE_MAX_ARGS},
    {"Identity", 1, 1},
};

static Expr *p_call(Parser *p, const char *name, const char *at) {
    const FnSpec *f = NULL;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(fns[i].name, name)) f = &fns[i];
    if (!f) return perr(p, at, "unknown function '%s'", name);
    const char *open = p->p;
    p->p++;   /* '(' */
    EVec a = {0};
    Expr *r = NULL;
    char fb[16];
    for (;;) {
        skip_ws(p);
        const char *arg_at = p->p;
        Expr *x = p_expr(p);
        if (!x) goto out;
        if (a.n >= f->max) { perr(p, arg_at, "%s takes at most %d arguments", name, f->max); goto out; }
        symi_ev_push(&a, x);
        skip_ws(p);
        if (*p->p == ',') { p->p++; continue; }
        if (*p->p == ')') { p->p++; break; }
        perr(p, p->p, "expected ',' or ')' to close '(' at column %d, found %s", (int)(open - p->src) + 1,
             found(p->p, fb, sizeof fb));
        goto out;
    }
    if (a.n < f->min) {
        perr(p, at, "%s takes %d argument%s, got %d", name, f->min, f->min == 1 ? "" : "s", a.n);
        goto out;
    }
    if (!strcmp(name, "FloorDiv") || !strcmp(name, "CleanDiv")) r = sym_floordiv(p->s, a.v[0], a.v[1]);
    else if (!strcmp(name, "CeilDiv")) r = sym_ceildiv(p->s, a.v[0], a.v[1]);
    else if (!strcmp(name, "ModularIndexing")) r = sym_modidx(p->s, a.v[0], a.v[1], a.v[2]);
    else if (!strcmp(name, "Mod") || !strcmp(name, "PythonMod")) r = sym_mod(p->s, a.v[0], a.v[1]);
    else if (!strcmp(name, "Identity")) r = a.v[0];
    else r = symi_minmax(p->s, !strcmp(name, "Min") ? EX_MIN : EX_MAX, a.v, a.n);
    r = checked(p, r, at);
out:
    free(a.v);
    return r;
}

static Expr *p_atom(Parser *p) {
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
        Expr *e = p_expr(p);
        if (!e) return NULL;
        skip_ws(p);
        if (*p->p != ')')
            return perr(p, p->p, "expected ')' to close '(' at column %d, found %s", (int)(at - p->src) + 1,
                        found(p->p, fb, sizeof fb));
        p->p++;
        return e;
    }
    if (isalpha((unsigned char)*p->p) || *p->p == '_') {
        char name[64];
        size_t n = 0;
        while (isalnum((unsigned char)*p->p) || *p->p == '_') {
            if (n + 1 >= sizeof name) return perr(p, at, "name too long (more than %d characters)", (int)sizeof name - 1);
            name[n++] = *p->p++;
        }
        name[n] = 0;
        skip_ws(p);
        if (*p->p == '(') return p_call(p, name, at);
        return sym_symbol(p->s, name);
    }
    if (*p->p == '/' ) return perr(p, at, "expected an expression, found '/'");
    return perr(p, at, "expected an expression, found %s", found(p->p, fb, sizeof fb));
}

static Expr *p_power(Parser *p) {
    Expr *base = p_atom(p);
    if (!base) return NULL;
    skip_ws(p);
    if (p->p[0] != '*' || p->p[1] != '*') return base;
    const char *at = p->p;
    p->p += 2;
    Expr *ex = p_unary(p);
    if (!ex) return NULL;
    int64_t k;
    if (!sym_is_int(ex, &k) || k < 0)
        return perr(p, at, "exponent must be a non-negative integer constant");
    if (k > sym_max_degree(p->s)) {
        char hint[160];
        return perr(p, at, "exponent %lld is over the degree limit (%s)", (long long)k,
                    mi_limit_hint("sym_degree", sym_max_degree(p->s), hint, sizeof hint));
    }
    Expr *r = sym_int(p->s, 1);
    for (int64_t i = 0; i < k; i++) {
        r = checked(p, sym_mul(p->s, r, base), at);
        if (!r) return NULL;
    }
    return r;
}

static Expr *p_unary(Parser *p) {
    skip_ws(p);
    if (++p->depth > PARSE_DEPTH) return perr(p, p->p, "expression nested too deeply (limit %d)", PARSE_DEPTH);
    Expr *r;
    const char *at = p->p;
    if (*p->p == '-' || *p->p == '+') {
        bool minus = *p->p == '-';
        p->p++;
        skip_ws(p);
        const char *q = p->p;
        while (isdigit((unsigned char)*q)) q++;
        while (*q == ' ' || *q == '\t') q++;
        if (minus && isdigit((unsigned char)*p->p) && !(q[0] == '*' && q[1] == '*')) {
            r = p_number(p, true);   /* -9223372036854775808 is a literal */
        } else {
            r = p_unary(p);
            if (r && minus) r = checked(p, sym_neg(p->s, r), at);
        }
    } else {
        r = p_power(p);
    }
    p->depth--;
    return r;
}

static Expr *p_term(Parser *p) {
    Expr *a = p_unary(p);
    while (a) {
        skip_ws(p);
        const char *at = p->p;
        int op;
        if (p->only_mul == p->depth && (at[0] == '%' || at[0] == '/'))
            return perr(p, at, "integer literal out of the int64 range");
        if (at[0] == '/' && at[1] == '/') { op = '/'; p->p += 2; }
        else if (at[0] == '/') return perr(p, at, "true division '/' is not supported in size expressions; use '//'");
        else if (at[0] == '*' && at[1] != '*') { op = '*'; p->p++; }
        else if (at[0] == '%') { op = '%'; p->p++; }
        else break;
        Expr *b = p_unary(p);
        if (!b) return NULL;
        a = op == '*' ? sym_mul(p->s, a, b) : op == '/' ? sym_floordiv(p->s, a, b) : sym_mod(p->s, a, b);
        a = checked(p, a, at);
    }
    return a;
}

static Expr *p_expr(Parser *p) {
    if (++p->depth > PARSE_DEPTH) return perr(p, p->p, "expression nested too deeply (limit %d)", PARSE_DEPTH);
    Expr *a = p_term(p);
    while (a) {
        skip_ws(p);
        const char *at = p->p;
        if (*at != '+' && *at != '-') break;
        p->p++;
        /* "x - 9223372036854775808" (how INT64_MIN terms print): parse the term negated */
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
        Expr *b = p_term(p);
        p->neg_literal = false;
        p->only_mul = 0;
        if (!b) return NULL;
        a = checked(p, (*at == '+' || neg) ? sym_add(p->s, a, b) : sym_sub(p->s, a, b), at);
    }
    p->depth--;
    return a;
}

Expr *sym_parse(MiCtx *ctx, const char *text, const char **end) {
    Parser p = {ctx, ctx->sym, text, text, 0, false, false, 0};
    sym_take_overflow(p.s);
    Expr *e = p_expr(&p);
    if (e) {
        skip_ws(&p);
        if (!end && *p.p) {
            char fb[16];
            e = perr(&p, p.p, "unexpected %s after the expression", found(p.p, fb, sizeof fb));
        }
    }
    if (end) *end = p.p;
    return e;
}
