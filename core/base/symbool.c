/* symbool.c — parse, evaluate and guard symbolic booleans ("Sym(s0 >= 2)", "Sym(Eq(s0, s1))");
 * see symbool.h for the grammar. Relation sides are parsed by sym_parse. */
#include "base/symbool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { MiCtx *ctx; const char *text, *p; bool failed; int depth; } BP;

enum { MAX_DEPTH = 200 };   /* nesting of ( ~ And( ...: deeper input is refused, not a stack overflow */

static SymBool *bnew(SymBoolKind k) {
    SymBool *b = mi_xcalloc(1, sizeof *b);
    b->kind = k;
    return b;
}

void symbool_free(SymBool *b) {
    if (!b) return;
    for (int i = 0; i < b->n; i++) symbool_free(b->args[i]);
    free(b->args);
    free(b);
}

static void ws(BP *p) { while (*p->p == ' ') p->p++; }

static SymBool *berr(BP *p, const char *at, const char *fmt, const char *what) {
    if (!p->failed) mi_err(p->ctx, NULL, 0, (int)(at - p->text) + 1, fmt, what);
    p->failed = true;
    return NULL;
}

static bool word(BP *p, const char *w) {
    size_t n = strlen(w);
    if (strncmp(p->p, w, n)) return false;
    char c = p->p[n];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') return false;
    p->p += n;
    return true;
}

static int rel_at(const char *s, SymBoolKind *k) {
    static const struct { const char *t; SymBoolKind k; } r[] = {
        {"==", SB_EQ}, {"!=", SB_NE}, {">=", SB_GE}, {"<=", SB_LE}, {">", SB_GT}, {"<", SB_LT}};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (!strncmp(s, r[i].t, strlen(r[i].t))) { *k = r[i].k; return (int)strlen(r[i].t); }
    return 0;
}

static Expr *int_side(BP *p) {
    const char *end = NULL, *at = p->p;
    Expr *e = sym_parse(p->ctx, p->p, &end);
    if (!e) {
        char why[600];
        snprintf(why, sizeof why, "%.500s", p->ctx->err.msg);
        berr(p, at, "bad integer expression in condition: %s", why);
        return NULL;
    }
    p->p = end;
    ws(p);
    return e;
}

static SymBool *p_or(BP *p);

static SymBool *add_arg(SymBool *b, SymBool *a) {
    b->args = mi_xrealloc(b->args, sizeof(SymBool *) * (b->n + 1));
    b->args[b->n++] = a;
    return b;
}

/* Eq(a, b) / Ne(a, b) */
static SymBool *p_eqne(BP *p, SymBoolKind k) {
    ws(p);
    Expr *a = int_side(p);
    if (!a) return NULL;
    if (*p->p != ',') return berr(p, p->p, "expected ',' between the two sides of %s(", k == SB_EQ ? "Eq" : "Ne");
    p->p++;
    ws(p);
    Expr *c = int_side(p);
    if (!c) return NULL;
    if (*p->p != ')') return berr(p, p->p, "expected ')' closing %s(", k == SB_EQ ? "Eq" : "Ne");
    p->p++;
    SymBool *b = bnew(k);
    b->lhs = a;
    b->rhs = c;
    return b;
}

/* And(x, y, ...) / Or(...) / Not(x) */
static SymBool *p_call(BP *p, SymBoolKind k, const char *name) {
    SymBool *b = bnew(k);
    for (;;) {
        ws(p);
        SymBool *a = p_or(p);
        if (!a) { symbool_free(b); return NULL; }
        add_arg(b, a);
        ws(p);
        if (*p->p == ',' && k != SB_NOT) { p->p++; continue; }
        if (*p->p == ')') { p->p++; break; }
        symbool_free(b);
        return berr(p, p->p, "expected ',' or ')' in %s(", name);
    }
    if (k != SB_NOT && b->n < 2) { symbool_free(b); return berr(p, p->p, "%s( needs at least two conditions", name); }
    return b;
}

static SymBool *p_prim(BP *p) {
    ws(p);
    if (word(p, "True")) return bnew(SB_TRUE);
    if (word(p, "False")) return bnew(SB_FALSE);
    if (!strncmp(p->p, "Eq(", 3)) { p->p += 3; return p_eqne(p, SB_EQ); }
    if (!strncmp(p->p, "Ne(", 3)) { p->p += 3; return p_eqne(p, SB_NE); }
    if (!strncmp(p->p, "And(", 4)) { p->p += 4; return p_call(p, SB_AND, "And"); }
    if (!strncmp(p->p, "Or(", 3)) { p->p += 3; return p_call(p, SB_OR, "Or"); }
    if (!strncmp(p->p, "Not(", 4)) { p->p += 4; return p_call(p, SB_NOT, "Not"); }
    /* an integer side followed by a relation; "(" may open either "(s0 + 1) >= 2" or a condition */
    const char *start = p->p, *end = NULL;
    MiTry tentative = mi_try(p->ctx);
    Expr *e = sym_parse(p->ctx, p->p, &end);
    if (e) {
        const char *r = end + strspn(end, " ");
        SymBoolKind k;
        int len = rel_at(r, &k);
        if (len) {
            p->p = r + len;
            ws(p);
            Expr *c = int_side(p);
            if (!c) return NULL;
            SymBool *b = bnew(k);
            b->lhs = e;
            b->rhs = c;
            return b;
        }
    }
    mi_try_end(&tentative);
    if (*start == '(') {
        p->p = start + 1;
        SymBool *b = p_or(p);
        if (!b) return NULL;
        ws(p);
        if (*p->p != ')') { symbool_free(b); return berr(p, p->p, "expected ')' in condition%s", ""); }
        p->p++;
        return b;
    }
    if (e) return berr(p, end + strspn(end, " "), "expected a comparison (== != >= <= > <) after the integer "
                       "expression%s", "");
    return berr(p, start, "expected a condition (a comparison, Eq(, Ne(, And(, Or(, Not(, True, False)%s", "");
}

static SymBool *p_not(BP *p) {
    ws(p);
    if (*p->p == '~') {
        if (++p->depth > MAX_DEPTH) return berr(p, p->p, "condition nested too deeply%s", "");
        p->p++;
        SymBool *a = p_not(p);
        p->depth--;
        return a ? add_arg(bnew(SB_NOT), a) : NULL;
    }
    return p_prim(p);
}

static SymBool *p_bin(BP *p, char op, SymBoolKind k, SymBool *(*sub)(BP *)) {
    if (p->depth > MAX_DEPTH) return berr(p, p->p, "condition nested too deeply%s", "");
    SymBool *a = sub(p);
    if (!a) return NULL;
    SymBool *b = NULL;
    for (;;) {
        ws(p);
        if (*p->p != op) break;
        p->p++;
        SymBool *c = sub(p);
        if (!c) { symbool_free(a); symbool_free(b); return NULL; }
        if (!b) b = add_arg(bnew(k), a);
        add_arg(b, c);
    }
    return b ? b : a;
}

static SymBool *p_and(BP *p) { return p_bin(p, '&', SB_AND, p_not); }
static SymBool *p_or(BP *p) {
    p->depth++;
    SymBool *b = p_bin(p, '|', SB_OR, p_and);
    p->depth--;
    return b;
}

SymBool *symbool_parse(MiCtx *ctx, const char *text, const char **end) {
    BP p = {ctx, text, text, false, 0};
    SymBool *b = p_or(&p);
    if (b) {
        ws(&p);
        if (!end && *p.p) { symbool_free(b); b = berr(&p, p.p, "unexpected '%.1s' after the condition", p.p); }
    }
    if (end) *end = p.p;
    return b;
}

bool symbool_looks_bool(MiCtx *ctx, const char *text) {
    MiTry tentative = mi_try(ctx);
    const char *end = NULL;
    SymBool *b = symbool_parse(ctx, text, &end);
    mi_try_end(&tentative);
    bool r = b != NULL;
    symbool_free(b);
    if (r) return true;
    /* not a valid condition, but clearly meant as one: a relation or a boolean function */
    static const char *const pre[] = {"Eq(", "Ne(", "And(", "Or(", "Not(", "~", "True", "False"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (!strncmp(text, pre[i], strlen(pre[i]))) return true;
    for (const char *s = text; *s; s++)
        if (*s == '<' || *s == '>' || (s[0] == '=' && s[1] == '=') || (s[0] == '!' && s[1] == '=')) return true;
    return false;
}

int symbool_eval(MiCtx *ctx, const SymBool *b, const SymBinding *bind, int nb, bool *out) {
    int64_t x = 0, y = 0;
    bool v;
    switch (b->kind) {
    case SB_TRUE: *out = true; return 0;
    case SB_FALSE: *out = false; return 0;
    case SB_NOT:
        if (symbool_eval(ctx, b->args[0], bind, nb, &v)) return -1;
        *out = !v;
        return 0;
    case SB_AND: case SB_OR:
        *out = b->kind == SB_AND;
        for (int i = 0; i < b->n; i++) {
            if (symbool_eval(ctx, b->args[i], bind, nb, &v)) return -1;
            if (b->kind == SB_AND) *out = *out && v;
            else *out = *out || v;
        }
        return 0;
    default: break;
    }
    if (sym_eval(ctx, b->lhs, bind, nb, &x) || sym_eval(ctx, b->rhs, bind, nb, &y)) return -1;
    switch (b->kind) {
    case SB_EQ: *out = x == y; break;
    case SB_NE: *out = x != y; break;
    case SB_LT: *out = x < y; break;
    case SB_LE: *out = x <= y; break;
    case SB_GT: *out = x > y; break;
    default: *out = x >= y; break;
    }
    return 0;
}

int symbool_eval_text(MiCtx *ctx, const char *text, const SymBinding *bind, int nb, bool *out) {
    SymBool *b = symbool_parse(ctx, text, NULL);
    if (!b) return -1;
    int rc = symbool_eval(ctx, b, bind, nb, out);
    symbool_free(b);
    return rc;
}

static int guards(const SymBool *b, bool neg, StrBuf *sb) {
    static const char *const tok[] = {[SB_EQ] = "==", [SB_NE] = "!=", [SB_LT] = "<", [SB_LE] = "<=",
                                      [SB_GT] = ">", [SB_GE] = ">="};
    static const SymBoolKind flip[] = {[SB_EQ] = SB_NE, [SB_NE] = SB_EQ, [SB_LT] = SB_GE, [SB_LE] = SB_GT,
                                       [SB_GT] = SB_LE, [SB_GE] = SB_LT};
    switch (b->kind) {
    case SB_TRUE: case SB_FALSE:
        return (b->kind == SB_TRUE) != neg ? 0 : -1;   /* "always false" is no size guard */
    case SB_NOT: return guards(b->args[0], !neg, sb);
    case SB_AND: case SB_OR: {
        if ((b->kind == SB_AND) == neg) return -1;      /* a disjunction */
        int n = 0;
        for (int i = 0; i < b->n; i++) {
            int k = guards(b->args[i], neg, sb);
            if (k < 0) return -1;
            n += k;
        }
        return n;
    }
    default: {
        SymBoolKind k = neg ? flip[b->kind] : b->kind;
        sym_str_sb(b->lhs, sb);
        sb_printf(sb, " %s ", tok[k]);
        sym_str_sb(b->rhs, sb);
        sb_putc(sb, '\n');
        return 1;
    }
    }
}

int symbool_guards(const SymBool *b, StrBuf *sb) {
    StrBuf tmp;
    sb_init(&tmp);
    int n = guards(b, false, &tmp);
    if (n > 0) sb_putn(sb, tmp.s, tmp.len);
    sb_free(&tmp);
    return n;
}
