/* symfloat_str.c — a SymFloat annotation as Inductor prints its post-grad graph: compile_fx.py
 * prints inductor_post_grad_graph with print_readable(fast_sympy_print=True), whose Sym(...)
 * annotations are torch/_inductor/utils.py sympy_str(expr.node.expr), not sympy's str. The
 * text we keep (Node.symfloat, as the AOT graph printed it with str) is read by the one parser
 * of sympy text (sym_parse.c) into sympy's canonical tree — Add and Mul flattened, the number
 * coefficient first, the other args sorted by Basic.compare (sympy/core/basic.py) — and
 * printed by sympy_str's rules:
 *   "(IntTrueDiv(8*s27*s77, 8)) - 1.0"  ->  "-1.00000000000000 + IntTrueDiv(8*s27*s77, 8)"
 * (a sum's args joined by " + ", "a - b" for two args the second -1*b, a product's by " * ",
 * "-a" for -1*a, atoms by str(): a float at full precision, a call as sympy printed it).
 * Not modelled: '/' and '**' terms are kept as printed (sorted as Mul / Pow by their text), and
 * symbols compare by name (sympy compares their assumptions first; PyTorch's size symbols share
 * theirs). */
#include "base/sym_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_INT, T_FLOAT, T_NAME, T_CALL, T_ADD, T_MUL, T_VERB } TKind;

/* A node of sympy's tree: numbers, a symbol, a call (args, and its text as sympy printed it),
 * a sum or product (args in sympy's order: the number first), or text kept as printed. */
typedef struct TNode TNode;
struct TNode {
    TKind k;
    int64_t i;             /* T_INT */
    double f;              /* T_FLOAT */
    const char *b, *e;     /* the source text [b, e) (T_NAME, T_CALL, T_VERB print it) */
    const char *cls;       /* T_CALL: the function's name; T_VERB: "Mul" ('/') or "Pow" ('**') */
    bool floor_mod;        /* T_VERB of '//' or '%': a factor after another (or negated) needs
                              parentheses, since c * a % b reads as (c * a) % b */
    int n;
    TNode **a;             /* T_CALL, T_ADD, T_MUL args */
};

/* The semantics' state: every node made, to free. */
typedef struct { TNode **all; int n, cap; } TS;

static TNode *tnew(SymParser *p, TKind k, const char *b, const char *e) {
    TS *st = p->ud;
    TNode *t = mi_xcalloc(1, sizeof *t);
    t->k = k;
    t->b = b;
    t->e = e;
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 32;
        st->all = mi_xrealloc(st->all, sizeof *st->all * (size_t)st->cap);
    }
    st->all[st->n++] = t;
    return t;
}

static void targs_push(TNode *t, TNode *x) {
    t->a = mi_xrealloc(t->a, sizeof *t->a * (size_t)(t->n + 1));
    t->a[t->n++] = x;
}

static SymVal tv(TNode *t) {
    SymVal v = {{true, 0, 0}, false, NULL, t};
    return v;
}
#define TN(v) ((TNode *)(v).fn)

static bool is_num(const TNode *t) { return t->k == T_INT || t->k == T_FLOAT; }
static double num_val(const TNode *t) { return t->k == T_INT ? (double)t->i : t->f; }

/* ---- Basic.compare ---- */

/* sympy/core/basic.py ordering_of_classes, the classes these trees hold */
static int class_rank(const char *c) {
    static const char *order[] = {"Zero", "One", "Half", "Infinity", "NaN", "NegativeOne", "NegativeInfinity",
                                  "Integer", "Rational", "Float", "Exp1", "Pi", "ImaginaryUnit", "Symbol", "Wild",
                                  "Pow", "Mul", "Add"};
    for (int k = 0; k < (int)(sizeof order / sizeof order[0]); k++)
        if (!strcmp(order[k], c)) return k;
    return 1000;   /* not listed (IntTrueDiv, ToFloat, ...): after, and by name among themselves */
}

static const char *class_of(const TNode *t) {
    switch (t->k) {
    case T_INT: return t->i == 0 ? "Zero" : t->i == 1 ? "One" : t->i == -1 ? "NegativeOne" : "Integer";
    case T_FLOAT: return "Float";
    case T_NAME: return "Symbol";
    case T_ADD: return "Add";
    case T_MUL: return "Mul";
    default: return t->cls;
    }
}

/* A Float's _mpf_ (sign, man, exp, bc): |x| = man * 2**exp with man odd, bc its bit length. */
static void mpf_of(double x, int64_t out[4]) {
    out[0] = x < 0;
    int ex;
    double m = frexp(fabs(x), &ex);
    int64_t man = (int64_t)ldexp(m, 53);
    ex -= 53;
    while (man && !(man & 1)) { man >>= 1; ex++; }
    int bc = 0;
    for (int64_t q = man; q; q >>= 1) bc++;
    out[1] = man; out[2] = ex; out[3] = bc;
}

static int cmp3(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* Basic.compare: the class (ordering_of_classes, else the name), then the length of the
 * hashable content, then its items in order. */
static int tcompare(const TNode *x, const TNode *y) {
    if (x == y) return 0;
    const char *c1 = class_of(x), *c2 = class_of(y);
    if (strcmp(c1, c2)) {
        int r1 = class_rank(c1), r2 = class_rank(c2);
        if (r1 == 1000 && r2 == 1000) return strcmp(c1, c2) > 0 ? 1 : -1;
        return cmp3(r1, r2);
    }
    if (x->k != y->k) return cmp3(x->k, y->k);   /* a kept '/' term against a Mul: any fixed order */
    switch (x->k) {
    case T_INT: return cmp3(x->i, y->i);
    case T_FLOAT: {
        int64_t a[4], b[4];
        mpf_of(x->f, a);
        mpf_of(y->f, b);
        for (int k = 0; k < 4; k++)
            if (a[k] != b[k]) return cmp3(a[k], b[k]);
        return 0;
    }
    case T_NAME: case T_VERB: {
        size_t la = (size_t)(x->e - x->b), lb = (size_t)(y->e - y->b);
        int c = memcmp(x->b, y->b, la < lb ? la : lb);
        return c ? (c > 0 ? 1 : -1) : cmp3((int64_t)la, (int64_t)lb);
    }
    default:
        if (x->n != y->n) return cmp3(x->n, y->n);
        for (int k = 0; k < x->n; k++) {
            int c = tcompare(x->a[k], y->a[k]);
            if (c) return c;
        }
        return 0;
    }
}

/* Sort args [from, n) by Basic.compare (insertion sort: few args). */
static void tsort(TNode *t, int from) {
    for (int i = from + 1; i < t->n; i++)
        for (int j = i; j > from && tcompare(t->a[j - 1], t->a[j]) > 0; j--) {
            TNode *s = t->a[j]; t->a[j] = t->a[j - 1]; t->a[j - 1] = s;
        }
}

/* ---- sympy's Add / Mul flattening ---- */

static TNode *tnum(SymParser *p, bool is_int, int64_t i, double f) {
    TNode *t = tnew(p, is_int ? T_INT : T_FLOAT, NULL, NULL);
    t->i = i;
    t->f = f;
    return t;
}

/* a + b or a * b of numbers (ints past int64, unbounded in sympy, become floats here) */
static TNode *num_op(SymParser *p, char op, const TNode *a, const TNode *b) {
    int64_t r;
    if (a->k == T_INT && b->k == T_INT &&
        !(op == '+' ? __builtin_add_overflow(a->i, b->i, &r) : __builtin_mul_overflow(a->i, b->i, &r)))
        return tnum(p, true, r, 0);
    double x = num_val(a), y = num_val(b);
    return tnum(p, false, 0, op == '+' ? x + y : x * y);
}

/* a + b (k T_ADD) or a * b (T_MUL) as Add.flatten / Mul.flatten build them: sums (products)
 * flattened, numbers summed (multiplied) into the coefficient, which is dropped when the
 * integer 0 (1), the other args sorted by Basic.compare, the coefficient first; a product with
 * the integer 0 is 0. Printed text comes from canonical trees, where an integer times one sum
 * was already distributed: "-(a + b)*c" is Mul(-1, a + b, c), so nothing is distributed here. */
static TNode *assoc(SymParser *p, TKind k, TNode *a, TNode *b) {
    char op = k == T_ADD ? '+' : '*';
    int64_t unit_v = k == T_ADD ? 0 : 1;
    TNode *coef = tnum(p, true, unit_v, 0), *t = tnew(p, k, a->b, b->e);
    TNode *in[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        int n = in[s]->k == k ? in[s]->n : 1;
        for (int j = 0; j < n; j++) {
            TNode *x = in[s]->k == k ? in[s]->a[j] : in[s];
            if (is_num(x)) coef = num_op(p, op, coef, x);
            else targs_push(t, x);
        }
    }
    bool unit = coef->k == T_INT && coef->i == unit_v;
    if (t->n == 0 || (k == T_MUL && coef->k == T_INT && coef->i == 0)) return coef;
    if (t->n == 1 && unit) return t->a[0];
    tsort(t, 0);
    if (!unit) {
        targs_push(t, coef);
        memmove(t->a + 1, t->a, sizeof *t->a * (size_t)(t->n - 1));
        t->a[0] = coef;
    }
    return t;
}
static TNode *tadd(SymParser *p, TNode *a, TNode *b) { return assoc(p, T_ADD, a, b); }
static TNode *tmul(SymParser *p, TNode *a, TNode *b) { return assoc(p, T_MUL, a, b); }

/* ---- the semantics (SymSem) ---- */

static SymVal ts_num(SymParser *p, const char *at, SymNum lit) {
    TNode *t = tnum(p, lit.is_int, lit.i, lit.f);
    t->b = at;
    t->e = p->p;
    return tv(t);
}

static SymVal ts_name(SymParser *p, const char *at, const char *name) {
    return tv(tnew(p, T_NAME, at, at + strlen(name)));
}

/* the text of a '/' or '**' term as printed, from its left operand (p->lhs) to here */
static TNode *verbatim(SymParser *p, const char *cls) {
    const char *e = p->p;
    while (e > p->lhs && e[-1] == ' ') e--;
    TNode *t = tnew(p, T_VERB, p->lhs, e);
    t->cls = cls;
    return t;
}

static SymVal ts_op(SymParser *p, const char *at, char op, SymVal a, SymVal b) {
    (void)at;
    TNode *x = TN(a), *y = TN(b);
    switch (op) {
    case '+': return tv(tadd(p, x, y));
    case '-': return tv(tadd(p, x, tmul(p, tnum(p, true, -1, 0), y)));
    case '*': return tv(tmul(p, x, y));
    case 'n': return tv(tmul(p, tnum(p, true, -1, 0), x));
    case '^': return tv(verbatim(p, "Pow"));
    default: {   /* '/', '//', '%' */
        TNode *v = verbatim(p, "Mul");
        v->floor_mod = op != '/';
        return tv(v);
    }
    }
}

static SymVal ts_call(SymParser *p, const char *at, const SymFn *f, SymVal *a, int n) {
    TNode *t = tnew(p, T_CALL, at, p->p);
    t->cls = f->name;
    for (int k = 0; k < n; k++) targs_push(t, TN(a[k]));
    return tv(t);
}

static const SymSem tree = {false, ts_num, ts_name, ts_op, ts_call};

/* ---- sympy_str ---- */

/* str(Float) at the top level: mpmath's to_str with 15 digits, zeros kept ("-1.00000000000000",
 * "0.100000000000000", "1.00000000000000e-5", "123456.500000000"). */
static void put_float(double x, StrBuf *sb) {
    if (x == 0) { sb_put(sb, "0.0"); return; }
    if (isinf(x)) { sb_put(sb, x > 0 ? "oo" : "-oo"); return; }
    if (isnan(x)) { sb_put(sb, "nan"); return; }
    char buf[64];
    snprintf(buf, sizeof buf, "%.14e", x);   /* d.dddddddddddddde[+-]X */
    const char *m = buf[0] == '-' ? buf + 1 : buf;
    char digits[16];
    int nd = 0;
    for (const char *q = m; *q && *q != 'e'; q++) if (*q != '.') digits[nd++] = *q;
    digits[nd] = 0;
    int ex = atoi(strchr(buf, 'e') + 1);
    if (x < 0) sb_putc(sb, '-');
    if (-5 < ex && ex < 15) {   /* mpmath's fixed range: min(-(dps // 3), -5) < exp < dps */
        if (ex < 0) {
            sb_put(sb, "0.");
            for (int k = 0; k < -ex - 1; k++) sb_putc(sb, '0');
            sb_put(sb, digits);
        } else {
            sb_printf(sb, "%.*s.%s", ex + 1, digits, digits + ex + 1);
        }
        return;
    }
    sb_printf(sb, "%c.%se%s%d", digits[0], digits + 1, ex >= 0 ? "+" : "", ex);
}

static void str_add(const TNode *t, StrBuf *sb);

static bool neg_lead(const TNode *t) {
    return t->k == T_MUL && t->n == 2 && t->a[0]->k == T_INT && t->a[0]->i == -1;   /* Float(-1.0) != -1 in sympy */
}

static void str_atom(const TNode *t, StrBuf *sb) {
    switch (t->k) {
    case T_INT: sb_printf(sb, "%lld", (long long)t->i); break;
    case T_FLOAT: put_float(t->f, sb); break;
    case T_ADD: case T_MUL:
        sb_putc(sb, '(');
        str_add(t, sb);
        sb_putc(sb, ')');
        break;
    case T_CALL:
        if (!strcmp(t->cls, "ModularIndexing") || !strcmp(t->cls, "CleanDiv") || !strcmp(t->cls, "FloorDiv") ||
            !strcmp(t->cls, "Identity")) {
            sb_printf(sb, "%s(", t->cls);
            for (int k = 0; k < t->n; k++) {
                if (k) sb_put(sb, ", ");
                str_add(t->a[k], sb);
            }
            sb_putc(sb, ')');
        } else {
            sb_printf(sb, "%.*s", (int)(t->e - t->b), t->b);   /* str(expr), as sympy printed it */
        }
        break;
    default: sb_printf(sb, "%.*s", (int)(t->e - t->b), t->b);
    }
}

/* A factor of a product; a '//' or '%' term kept as text in parentheses where it follows another
 * factor or a '-' (fuzz_sym: "(A) % 8*oo" printed "oo * (A) % 8", which reads (oo * A) % 8). */
static void str_factor(const TNode *t, bool after, StrBuf *sb) {
    bool paren = after && t->k == T_VERB && t->floor_mod;
    if (paren) sb_putc(sb, '(');
    str_atom(t, sb);
    if (paren) sb_putc(sb, ')');
}

static void str_mul(const TNode *t, StrBuf *sb) {
    if (t->k != T_MUL) { str_atom(t, sb); return; }
    if (neg_lead(t)) { sb_putc(sb, '-'); str_factor(t->a[1], true, sb); return; }
    for (int k = 0; k < t->n; k++) {
        if (k) sb_put(sb, " * ");
        str_factor(t->a[k], k > 0, sb);
    }
}

static void str_add(const TNode *t, StrBuf *sb) {
    if (t->k != T_ADD) { str_mul(t, sb); return; }
    if (t->n == 2 && neg_lead(t->a[1])) {
        str_mul(t->a[0], sb);
        sb_put(sb, " - ");
        str_mul(t->a[1]->a[1], sb);
        return;
    }
    for (int k = 0; k < t->n; k++) {
        if (k) sb_put(sb, " + ");
        str_mul(t->a[k], sb);
    }
}

bool symfloat_fast_str(const char *text, StrBuf *sb) {
    TS st = {0};
    SymParser p = {.src = text, .p = text, .sem = &tree, .ud = &st};
    SymVal v;
    bool ok = symi_parse(&p, &v, NULL) == 0;
    if (ok) str_add(TN(v), sb);
    for (int k = 0; k < st.n; k++) { free(st.all[k]->a); free(st.all[k]); }
    free(st.all);
    return ok;
}
