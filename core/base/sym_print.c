/* sym_print.c — symbolic expressions as text: sympy's StrPrinter form with torch's FloorDiv
 * (what Inductor's IR dumps show; sym_str) and C (what the generated kernels index with;
 * sym_c, sym_c_sb, sym_c_sb_ranges). Part of the expression layer of core/base/sym.c. */
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
 * int64_t arithmetic: every symbol is an int64_t variable, so literals need no suffix
 * except outside the int range (LL).  Division and modulo use C's / and % only when the
 * operands are provably nonnegative (divisor positive); otherwise the helpers of
 * sym_c_prelude() with python semantics.  sym_c_sb assumes every symbol is >= 0 (sizes
 * and index variables are); sym_c_sb_ranges uses explicit ranges instead.
 *   FloorDiv(a, b)           (a / b)            c10_div_floor(a, b)
 *   CeilDiv(a, c) (c const)  ((a + (c-1)) / c)  c10_div_ceil(a, b)
 *   ModularIndexing(a, b, c) ((a / b) % c)      c10_mod_floor(c10_div_floor(a, b), c)
 *   Mod(a, b)                (a % b)            c10_mod_floor(a, b)
 *   Min/Max                  c10_min(a, c10_min(b, c)) / c10_max(...) */

static const char c_prelude[] =
    "static inline int64_t c10_div_floor(int64_t a, int64_t b) {\n"
    "    int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
    "static inline int64_t c10_div_ceil(int64_t a, int64_t b) {\n"
    "    int64_t q = a / b; return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;\n}\n"
    "static inline int64_t c10_mod_floor(int64_t a, int64_t b) {\n"
    "    int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"
    "static inline int64_t c10_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "static inline int64_t c10_max(int64_t a, int64_t b) { return a > b ? a : b; }\n";

const char *sym_c_prelude(void) { return c_prelude; }

static void pc(const Expr *e, const RangeCx *rc, StrBuf *sb);

static bool c_atomic(const Expr *e) {
    return (e->kind == EX_INT && e->ival >= 0) || e->kind == EX_SYM || e->kind == EX_FLOORDIV ||
           e->kind == EX_CEILDIV || e->kind == EX_MOD || e->kind == EX_MODIDX || e->kind == EX_MIN ||
           e->kind == EX_MAX;
}

static void pc_operand(const Expr *e, const RangeCx *rc, StrBuf *sb) {
    if (c_atomic(e)) { pc(e, rc, sb); return; }
    sb_putc(sb, '(');
    pc(e, rc, sb);
    sb_putc(sb, ')');
}

static void pc_int(int64_t v, StrBuf *sb) {
    if (v == INT64_MIN) sb_put(sb, "(-9223372036854775807LL - 1)");
    else if (v > INT32_MAX || v < INT32_MIN) sb_printf(sb, "%lldLL", (long long)v);
    else sb_printf(sb, "%lld", (long long)v);
}

static void pc_call(const char *fn, const Expr *a, const Expr *b, const RangeCx *rc, StrBuf *sb) {
    sb_printf(sb, "%s(", fn);
    pc(a, rc, sb);
    sb_put(sb, ", ");
    pc(b, rc, sb);
    sb_putc(sb, ')');
}

static void pc(const Expr *e, const RangeCx *rc, StrBuf *sb) {
    switch (e->kind) {
    case EX_INT: pc_int(e->ival, sb); return;
    case EX_SYM: sb_put(sb, e->name); return;
    case EX_ADD: {
        StrBuf t;
        sb_init(&t);
        for (int k = 0; k < e->n; k++) {
            const Expr *term = e->args[k];
            t.len = 0;
            if (term->kind == EX_INT && term->ival == INT64_MIN) sb_put(&t, "-9223372036854775807LL - 1");
            else pc(term, rc, &t);
            sb_putc(&t, 0);
            const char *body = t.s;
            bool neg = body[0] == '-';
            if (neg) body++;
            if (k == 0) { if (neg) sb_putc(sb, '-'); }
            else sb_put(sb, neg ? " - " : " + ");
            sb_put(sb, body);
        }
        sb_free(&t);
        return;
    }
    case EX_MUL: {
        int i = 0;
        if (e->args[0]->kind == EX_INT) {
            if (e->args[0]->ival == -1) sb_putc(sb, '-');
            else { pc_int(e->args[0]->ival, sb); sb_putc(sb, '*'); }
            i = 1;
        }
        for (int first = i; i < e->n; i++) {
            if (i > first) sb_putc(sb, '*');
            pc_operand(e->args[i], rc, sb);
        }
        return;
    }
    case EX_FLOORDIV: case EX_CEILDIV: case EX_MOD: {
        Iv a = symi_bound(e->args[0], rc), b = symi_bound(e->args[1], rc);
        bool plain = a.lo >= 0 && b.lo >= 1;
        int64_t c;
        if (!plain) {
            pc_call(e->kind == EX_FLOORDIV ? "c10_div_floor" : e->kind == EX_CEILDIV ? "c10_div_ceil" : "c10_mod_floor",
                    e->args[0], e->args[1], rc, sb);
        } else if (e->kind == EX_CEILDIV) {
            if (sym_is_int(e->args[1], &c)) {
                sb_put(sb, "((");
                pc(e->args[0], rc, sb);
                sb_printf(sb, " + %lld) / %lld)", (long long)(c - 1), (long long)c);
            } else {
                pc_call("c10_div_ceil", e->args[0], e->args[1], rc, sb);
            }
        } else {
            sb_putc(sb, '(');
            pc_operand(e->args[0], rc, sb);
            sb_put(sb, e->kind == EX_FLOORDIV ? " / " : " % ");
            pc_operand(e->args[1], rc, sb);
            sb_putc(sb, ')');
        }
        return;
    }
    case EX_MODIDX: {
        Iv a = symi_bound(e->args[0], rc), b = symi_bound(e->args[1], rc), m = symi_bound(e->args[2], rc);
        if (a.lo >= 0 && b.lo >= 1 && m.lo >= 1) {
            sb_putc(sb, '(');
            if (e->args[1]->kind == EX_INT && e->args[1]->ival == 1) {
                pc_operand(e->args[0], rc, sb);
            } else {
                sb_putc(sb, '(');
                pc_operand(e->args[0], rc, sb);
                sb_put(sb, " / ");
                pc_operand(e->args[1], rc, sb);
                sb_putc(sb, ')');
            }
            sb_put(sb, " % ");
            pc_operand(e->args[2], rc, sb);
            sb_putc(sb, ')');
        } else {
            sb_put(sb, "c10_mod_floor(");
            if (e->args[1]->kind == EX_INT && e->args[1]->ival == 1) pc(e->args[0], rc, sb);
            else pc_call("c10_div_floor", e->args[0], e->args[1], rc, sb);
            sb_put(sb, ", ");
            pc(e->args[2], rc, sb);
            sb_putc(sb, ')');
        }
        return;
    }
    case EX_MIN: case EX_MAX: {
        const char *fn = e->kind == EX_MIN ? "c10_min(" : "c10_max(";
        for (int i = 0; i < e->n - 1; i++) {
            sb_put(sb, fn);
            pc(e->args[i], rc, sb);
            sb_put(sb, ", ");
        }
        pc(e->args[e->n - 1], rc, sb);
        for (int i = 0; i < e->n - 1; i++) sb_putc(sb, ')');
        return;
    }
    }
}

void sym_c_sb(const Expr *e, StrBuf *sb) {
    Memo mb;
    symi_memo_init(&mb);
    RangeCx rc = {NULL, 0, true, false, &mb, NULL, NULL};
    pc(e, &rc, sb);
    symi_memo_free(&mb);
}

void sym_c_sb_ranges(const Expr *e, const SymRange *r, int nr, StrBuf *sb) {
    Memo mb;
    symi_memo_init(&mb);
    RangeCx rc = {r, nr, false, false, &mb, NULL, NULL};
    pc(e, &rc, sb);
    symi_memo_free(&mb);
}

const char *sym_c(const Expr *e, char *buf, size_t n) {
    StrBuf sb;
    sb_init(&sb);
    sym_c_sb(e, &sb);
    if (n) snprintf(buf, n, "%s", sb.s ? sb.s : "");
    sb_free(&sb);
    return buf;
}
