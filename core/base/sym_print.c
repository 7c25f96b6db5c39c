/* sym_print.c — symbolic expressions as text: sympy's StrPrinter form with torch's FloorDiv
 * (what Inductor's IR dumps show; sym_str) and C (what the generated kernels index with;
 * sym_c, sym_c_sb). Part of the expression layer of core/base/sym.c. */
#include "base/sym_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- printing: sympy style */

enum { P_FLOORDIV = 35, P_ADD = 40, P_MUL = 50, P_POW = 60, P_FUNC = 70, P_ATOM = 1000 };

static int prec(const Expr *e) {
    switch (e->kind) {
    case EX_INT: return e->ival < 0 ? P_ADD : P_ATOM;
    case EX_ADD: return P_ADD;
    case EX_MUL: return (e->args[0]->kind == EX_INT && e->args[0]->ival < 0) ? P_ADD : P_MUL;
    case EX_FLOORDIV: return P_FLOORDIV;
    case EX_MODIDX: case EX_MOD: case EX_CEILDIV: return P_FUNC;
    default: return P_ATOM;
    }
}

static void pstr(const Expr *e, StrBuf *sb);

static void pstr_paren(const Expr *e, int level, StrBuf *sb) {
    if (prec(e) < level) {
        sb_putc(sb, '(');
        pstr(e, sb);
        sb_putc(sb, ')');
    } else {
        pstr(e, sb);
    }
}

static void pstr_call(const char *fn, const Expr *e, StrBuf *sb) {
    sb_put(sb, fn);
    sb_putc(sb, '(');
    for (int i = 0; i < e->n; i++) {
        if (i) sb_put(sb, ", ");
        pstr(e->args[i], sb);
    }
    sb_putc(sb, ')');
}

/* Factors from index i on, equal neighbours as powers: x*x*y -> x**2*y. */
static void pstr_factors(const Expr *e, int i, StrBuf *sb) {
    bool first = true;
    while (i < e->n) {
        int j = i + 1;
        while (j < e->n && e->args[j] == e->args[i]) j++;
        if (!first) sb_putc(sb, '*');
        first = false;
        if (j - i > 1) {
            pstr_paren(e->args[i], P_POW, sb);
            sb_printf(sb, "**%d", j - i);
        } else {
            pstr_paren(e->args[i], P_MUL, sb);
        }
        i = j;
    }
}

static void pstr_add(const Expr *e, StrBuf *sb) {
    int order[2] = {0, 1};
    if (symi_add_number_first(e)) {   /* sympy prints 1 - x, not -x + 1 */
        order[0] = 1;
        order[1] = 0;
    }
    StrBuf t;
    sb_init(&t);
    for (int k = 0; k < e->n; k++) {
        const Expr *term = e->args[k < 2 ? order[k] : k];
        t.len = 0;
        pstr(term, &t);
        sb_putc(&t, 0);
        const char *body = t.s;
        bool neg = body[0] == '-';
        if (neg) body++;
        if (k == 0) { if (neg) sb_putc(sb, '-'); }
        else sb_put(sb, neg ? " - " : " + ");
        if (prec(term) < P_ADD) sb_printf(sb, "(%s)", body);
        else sb_put(sb, body);
    }
    sb_free(&t);
}

static void pstr(const Expr *e, StrBuf *sb) {
    switch (e->kind) {
    case EX_INT: sb_printf(sb, "%lld", (long long)e->ival); return;
    case EX_SYM: sb_put(sb, e->name); return;
    case EX_ADD: pstr_add(e, sb); return;
    case EX_MUL: {
        int64_t c;
        if (sym_is_int(e->args[0], &c)) {
            if (c == -1) sb_putc(sb, '-');
            else sb_printf(sb, "%lld*", (long long)c);
            pstr_factors(e, 1, sb);
        } else {
            pstr_factors(e, 0, sb);
        }
        return;
    }
    case EX_FLOORDIV:
        sb_putc(sb, '(');
        pstr_paren(e->args[0], P_ATOM, sb);
        sb_put(sb, "//");
        pstr_paren(e->args[1], P_ATOM, sb);
        sb_putc(sb, ')');
        return;
    case EX_CEILDIV: pstr_call("CeilDiv", e, sb); return;
    case EX_MOD: pstr_call("Mod", e, sb); return;
    case EX_MODIDX: pstr_call("ModularIndexing", e, sb); return;
    case EX_MIN: pstr_call("Min", e, sb); return;
    case EX_MAX: pstr_call("Max", e, sb); return;
    }
}

void sym_str_sb(const Expr *e, StrBuf *sb) { pstr(e, sb); }

const char *sym_str(const Expr *e, char *buf, size_t n) {
    StrBuf sb;
    sb_init(&sb);
    pstr(e, &sb);
    if (n) snprintf(buf, n, "%s", sb.s ? sb.s : "");
    sb_free(&sb);
    return buf;
}

/* ---------------------------------------------------------------- printing: C
 *
 * The one C printer of index expressions: what both code generators index with. int64_t
 * arithmetic, every integer literal with LL; sums and products parenthesized; FloorDiv,
 * CeilDiv, Mod, ModularIndexing, Min and Max through the helpers of sym_c_prelude() (python
 * semantics: the quotient rounds toward -inf, the remainder takes the divisor's sign).
 *   x0 + 64*x1               (x0 + 64LL*x1)
 *   ModularIndexing(x0, 16, 4)  mi_modidx(x0, 16LL, 4LL)
 *   Min(x0, s0, 7)           mi_min(7LL, mi_min(s0, x0)) */

static const char c_prelude[] =
    "static inline int64_t mi_floordiv(int64_t a, int64_t b) { int64_t q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q--; return q; }\n"
    "static inline int64_t mi_mod(int64_t a, int64_t b) { int64_t r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
    "static inline int64_t mi_modidx(int64_t x, int64_t d, int64_t m) { return mi_mod(mi_floordiv(x, d), m); }\n"
    "static inline int64_t mi_ceildiv(int64_t a, int64_t b) { return -mi_floordiv(-a, b); }\n"
    "static inline int64_t mi_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "static inline int64_t mi_max(int64_t a, int64_t b) { return a > b ? a : b; }\n";

const char *sym_c_prelude(void) { return c_prelude; }

void sym_c_sb(const Expr *e, StrBuf *sb) {
    switch (e->kind) {
    case EX_INT:
        if (e->ival == INT64_MIN) sb_put(sb, "(-9223372036854775807LL - 1)");
        else sb_printf(sb, "%lldLL", (long long)e->ival);
        return;
    case EX_SYM: sb_put(sb, e->name); return;
    case EX_ADD: case EX_MUL:
        sb_putc(sb, '(');
        for (int i = 0; i < e->n; i++) {
            if (i) sb_put(sb, e->kind == EX_ADD ? " + " : "*");
            sym_c_sb(e->args[i], sb);
        }
        sb_putc(sb, ')');
        return;
    case EX_FLOORDIV: sb_put(sb, "mi_floordiv("); break;
    case EX_CEILDIV: sb_put(sb, "mi_ceildiv("); break;
    case EX_MOD: sb_put(sb, "mi_mod("); break;
    case EX_MODIDX: sb_put(sb, "mi_modidx("); break;
    case EX_MIN: case EX_MAX:   /* the helpers take two: Min(a, b, c) nests */
        for (int i = 0; i < e->n - 1; i++) {
            sb_put(sb, e->kind == EX_MIN ? "mi_min(" : "mi_max(");
            sym_c_sb(e->args[i], sb);
            sb_put(sb, ", ");
        }
        sym_c_sb(e->args[e->n - 1], sb);
        for (int i = 0; i < e->n - 1; i++) sb_putc(sb, ')');
        return;
    }
    for (int i = 0; i < e->n; i++) {
        if (i) sb_put(sb, ", ");
        sym_c_sb(e->args[i], sb);
    }
    sb_putc(sb, ')');
}

const char *sym_c(const Expr *e, char *buf, size_t n) {
    StrBuf sb;
    sb_init(&sb);
    sym_c_sb(e, &sb);
    if (n) snprintf(buf, n, "%s", sb.s ? sb.s : "");
    sb_free(&sb);
    return buf;
}
