/* sym.c — symbolic integer expressions (our small SymPy) for sizes, strides and indexing.
 *
 * How it fits: the FX loader parses size annotations ("f32[s77, 2*s0]") with sym_parse, the
 * passes and the loop IR build index expressions with the constructors, sym_simplify uses
 * the ranges of index variables to drop wrap-arounds, and the code generator prints them
 * with sym_c.  Everything lives in a SymCtx (no global state).
 *
 * Representation.  Every Expr is hash-consed in the SymCtx table, so structural equality is
 * pointer equality.  Constructors keep a canonical form:
 *   - a sum (EX_ADD) is a flat list of terms c*m (m a monomial, c a nonzero coefficient),
 *     like terms collected, constant term (if any) last;
 *   - a product (EX_MUL) is a flat sorted list of factors, constant coefficient (if any)
 *     first; x*x is kept as two factors (printed x**2); products of sums are expanded
 *     (distributed) unless that would make more than MAX_EXPAND term pairs (then, and
 *     for anything multiplied with such a kept product, the sums stay whole factors);
 *   - FloorDiv/CeilDiv by a constant c > 0: gcd of all coefficients and c divided out,
 *     terms whose coefficient is a multiple of c pulled out (floor((c*q + r)/c) = q +
 *     floor(r/c) holds for every integer q, so this is always safe); nested FloorDiv by
 *     constants merged; negative constant divisors turned positive; constants folded with
 *     python semantics (floor toward -inf);
 *   - Mod(a, c) with a constant c > 0 is ModularIndexing(a, 1, c) (the same value), so
 *     there is one form; ModularIndexing drops terms that are multiples of div*mod and
 *     divides out a common gcd with div;
 *   - Min/Max flattened, constants folded, args sorted and deduplicated; an arg is
 *     dropped when it can never win: another arg differs from it by a constant that
 *     decides, absorption (Min(a, Max(a + k, ..)) = a for k >= 0), Max(Min(S1), Min(S2))
 *     with S1 a subset of S2, or interval bounds with no assumptions on the symbols.
 *
 * Order.  Factors of a product and args of Min/Max are sorted by cmp_sympy, sympy's
 * default_sort_key: numbers, then symbols by name (strcmp), then products, sums,
 * functions (CeilDiv, FloorDiv, Mod, ModularIndexing by name), Max, Min; a product's
 * coefficient is compared last and x*x compares as the power x**2.  Terms of a sum follow
 * sympy's default "lex" print order over generators in that order: comparing the sorted
 * factor lists position by position, the term whose factor sorts first comes first, a
 * term that extends another comes first (x*y before x), the constant is last — so
 * 64*x1 + x0 prints as "x0 + 64*x1", "10*d0 + d1", "d0*s27 + d1", "c0 + 128" exactly as
 * in Inductor's ir dumps.  Like sympy, "positive constant + negative multiple of one
 * factor or power" prints as "1 - x".  tests/fixtures/sym/sympy_str.tsv holds 800 random
 * expressions with sympy 1.14's str(); all print identically.
 *
 * Printing (sym_str) follows sympy's StrPrinter with torch's FloorDiv (precedence 35,
 * printed "(a//b)"), so FloorDiv inside sums and products gets doubled parentheses the
 * way Inductor prints it: "x1 + ((x0//64))", "16*((x0//16))".  sym_c prints C with the
 * helpers of sym_c_prelude() (core/base/sym_print.c).
 *
 * Canonical means: equal expressions built in any order are the same node, as long as no
 * product of sums hit the MAX_EXPAND cap (then the kept product depends on the grouping;
 * values are still right).  Size and index expressions never come near it.
 *
 * Simplification (sym_simplify) rebuilds bottom-up and applies range rules at each node,
 * using interval bounds (sym_bound): a node whose bound is one value becomes that constant
 * (FloorDiv(x, d) -> 0 when 0 <= x < d, ...); ModularIndexing(x, d, m) -> FloorDiv(x, d)
 * when x//d stays in [0, m), or -> ModularIndexing(x//d, 1, m) when that is smaller (so
 * ModularIndexing(x0 + 64*x1, 64, 4) -> x1 for x0 < 64, x1 < 4); Mod(a, b) -> a when
 * 0 <= a < b; Min/Max args that can never win are dropped; and in sums the digit
 * identities c*ModularIndexing(y, d, m) + c*m*FloorDiv(y, d*m) -> c*FloorDiv(y, d) and
 * c*ModularIndexing(y, d, m) + c*m*ModularIndexing(y, d*m, m2) -> c*ModularIndexing(y, d,
 * m*m2) re-merge split index variables.  Expressions are DAGs, so every walk memoizes.
 *
 * Integer overflow while folding constants wraps (two's complement, computed without UB)
 * and sets a sticky flag that sym_take_overflow() reads; sym_parse turns it into an error.
 * sym_eval checks every operation.
 *
 * Printing (sympy text, C) is core/base/sym_print.c, the parser core/base/sym_parse.c; both
 * use the internals of sym_internal.h. */
#include "base/sym_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPAND 256      /* most term pairs multiplied out when multiplying two sums */

struct SymCtx {
    Expr **tab;             /* open-addressing hash table of every Expr */
    size_t cap, cnt;
    char **names;           /* interned symbol names, open addressing */
    size_t ncap, ncnt;
    bool overflow;          /* sticky: constant folding overflowed */
    int max_degree;         /* products of sums are expanded up to this degree */
};

/* ---------------------------------------------------------------- table */

SymCtx *sym_ctx_new(void) {
    SymCtx *s = mi_xcalloc(1, sizeof *s);
    s->cap = 1024;
    s->tab = mi_xcalloc(s->cap, sizeof *s->tab);
    s->ncap = 64;
    s->names = mi_xcalloc(s->ncap, sizeof *s->names);
    s->max_degree = 32;
    return s;
}

void sym_set_max_degree(SymCtx *s, int d) { s->max_degree = d; }
int sym_max_degree(const SymCtx *s) { return s->max_degree; }

void sym_ctx_free(SymCtx *s) {
    if (!s) return;
    for (size_t i = 0; i < s->cap; i++) free(s->tab[i]);
    for (size_t i = 0; i < s->ncap; i++) free(s->names[i]);
    free(s->tab);
    free(s->names);
    free(s);
}

bool sym_take_overflow(SymCtx *s) {
    bool o = s->overflow;
    s->overflow = false;
    return o;
}

static uint64_t hash_str(const char *p) {
    uint64_t h = 1469598103934665603ull;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

static uint64_t hmix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static const char *intern_name(SymCtx *s, const char *n) {
    if ((s->ncnt + 1) * 2 > s->ncap) {
        size_t nc = s->ncap * 2;
        char **nt = mi_xcalloc(nc, sizeof *nt);
        for (size_t i = 0; i < s->ncap; i++) {
            if (!s->names[i]) continue;
            size_t j = hash_str(s->names[i]) & (nc - 1);
            while (nt[j]) j = (j + 1) & (nc - 1);
            nt[j] = s->names[i];
        }
        free(s->names);
        s->names = nt;
        s->ncap = nc;
    }
    size_t j = hash_str(n) & (s->ncap - 1);
    for (; s->names[j]; j = (j + 1) & (s->ncap - 1))
        if (!strcmp(s->names[j], n)) return s->names[j];
    s->ncnt++;
    return s->names[j] = mi_xstrdup(n);
}

/* The one place an Expr is made: returns the existing node when an equal one exists. */
static Expr *mk(SymCtx *s, ExprKind k, int64_t iv, const char *name, Expr *const *args, int n) {
    uint64_t h = hmix((uint64_t)k + 1, (uint64_t)iv);
    if (name) h = hmix(h, hash_str(name));
    for (int i = 0; i < n; i++) h = hmix(h, args[i]->hash);
    if ((s->cnt + 1) * 2 > s->cap) {
        size_t nc = s->cap * 2;
        Expr **nt = mi_xcalloc(nc, sizeof *nt);
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->tab[i]) continue;
            size_t j = s->tab[i]->hash & (nc - 1);
            while (nt[j]) j = (j + 1) & (nc - 1);
            nt[j] = s->tab[i];
        }
        free(s->tab);
        s->tab = nt;
        s->cap = nc;
    }
    size_t j = h & (s->cap - 1);
    for (; s->tab[j]; j = (j + 1) & (s->cap - 1)) {
        Expr *e = s->tab[j];
        if (e->hash == h && e->kind == k && e->ival == iv && e->name == name && e->n == n &&
            (n == 0 || !memcmp(e->args, args, (size_t)n * sizeof *args)))
            return e;
    }
    Expr *e = mi_xcalloc(1, sizeof *e + (size_t)n * sizeof(Expr *));
    e->kind = k;
    e->ival = iv;
    e->name = name;
    e->n = n;
    e->hash = h;
    e->args = (Expr **)(e + 1);
    if (n) memcpy(e->args, args, (size_t)n * sizeof *args);
    s->tab[j] = e;
    s->cnt++;
    return e;
}

Expr *sym_int(SymCtx *s, int64_t v) { return mk(s, EX_INT, v, NULL, NULL, 0); }

Expr *sym_symbol(SymCtx *s, const char *name) {
    return mk(s, EX_SYM, 0, intern_name(s, name), NULL, 0);
}

bool sym_is_int(const Expr *e, int64_t *v) {
    if (!e || e->kind != EX_INT) return false;
    if (v) *v = e->ival;
    return true;
}

static bool has_syms(const Expr *e, void *memo);

bool sym_has_symbols(const Expr *e) {
    if (e->kind == EX_SYM) return true;
    if (e->n == 0) return false;
    return has_syms(e, NULL);
}

/* ---------------------------------------------------------------- small vectors */

typedef struct { int64_t c; Expr *m; } Term;   /* c*m; m == NULL for the constant term */
typedef struct { Term *v; int n, cap; } TVec;

void symi_ev_push(EVec *a, Expr *e) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 8;
        a->v = mi_xrealloc(a->v, (size_t)a->cap * sizeof *a->v);
    }
    a->v[a->n++] = e;
}

static void tv_push(TVec *a, int64_t c, Expr *m) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 8;
        a->v = mi_xrealloc(a->v, (size_t)a->cap * sizeof *a->v);
    }
    a->v[a->n].c = c;
    a->v[a->n].m = m;
    a->n++;
}

/* ---------------------------------------------------------------- memo tables
 * Expressions are DAGs (hash-consing shares subexpressions), so every walk that may meet
 * a node twice remembers what it computed per node; a plain tree walk can be exponential. */


void symi_memo_init(Memo *m) {
    memset(m->inl, 0, sizeof m->inl);
    m->t = m->inl;
    m->cap = 16;
    m->cnt = 0;
}

void symi_memo_free(Memo *m) {
    if (m->t != m->inl) free(m->t);
}

MemoEnt *symi_memo_get(Memo *m, const Expr *k) {
    for (size_t j = k->hash & (m->cap - 1); m->t[j].k; j = (j + 1) & (m->cap - 1))
        if (m->t[j].k == k) return &m->t[j];
    return NULL;
}

/* Slot for k (new or existing); valid until the next memo_put. */
MemoEnt *symi_memo_put(Memo *m, const Expr *k) {
    if ((m->cnt + 1) * 2 > m->cap) {
        size_t nc = m->cap * 2;
        MemoEnt *nt = mi_xcalloc(nc, sizeof *nt);
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->t[i].k) continue;
            size_t j = m->t[i].k->hash & (nc - 1);
            while (nt[j].k) j = (j + 1) & (nc - 1);
            nt[j] = m->t[i];
        }
        symi_memo_free(m);
        m->t = nt;
        m->cap = nc;
    }
    size_t j = k->hash & (m->cap - 1);
    for (; m->t[j].k; j = (j + 1) & (m->cap - 1))
        if (m->t[j].k == k) return &m->t[j];
    m->t[j].k = k;
    m->cnt++;
    return &m->t[j];
}

/* true when k was already visited (marks it otherwise) */
static bool memo_seen(Memo *m, const Expr *k) {
    if (symi_memo_get(m, k)) return true;
    symi_memo_put(m, k);
    return false;
}

static bool has_syms_rec(const Expr *e, Memo *m) {
    if (e->kind == EX_SYM) return true;
    if (e->n == 0 || memo_seen(m, e)) return false;
    for (int i = 0; i < e->n; i++)
        if (has_syms_rec(e->args[i], m)) return true;
    return false;
}

static bool has_syms(const Expr *e, void *unused) {
    (void)unused;
    Memo m;
    symi_memo_init(&m);
    bool r = has_syms_rec(e, &m);
    symi_memo_free(&m);
    return r;
}

/* ---------------------------------------------------------------- integer helpers */

static int64_t ov_add(SymCtx *s, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) s->overflow = true;
    return r;
}

static int64_t ov_mul(SymCtx *s, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) s->overflow = true;
    return r;
}

/* Python a // b, b != 0.  INT64_MIN // -1 overflows (flagged when s != NULL). */
int64_t symi_py_floordiv(SymCtx *s, int64_t a, int64_t b) {
    if (b == -1) {
        if (a == INT64_MIN) { if (s) s->overflow = true; return INT64_MIN; }
        return -a;
    }
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}

int64_t symi_py_ceildiv(SymCtx *s, int64_t a, int64_t b) {
    if (b == -1) {
        if (a == INT64_MIN) { if (s) s->overflow = true; return INT64_MIN; }
        return -a;
    }
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) == (b < 0))) q++;
    return q;
}

/* Python a % b, b != 0 (result has the sign of b). */
int64_t symi_py_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static uint64_t uabs64(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

static uint64_t ugcd(uint64_t a, uint64_t b) {
    while (b) { uint64_t t = a % b; a = b; b = t; }
    return a;
}

/* ---------------------------------------------------------------- order */

static int kind_rank(ExprKind k) {
    switch (k) {
    case EX_INT: return 0;
    case EX_SYM: return 1;
    case EX_CEILDIV: return 2;
    case EX_FLOORDIV: return 3;
    case EX_MAX: return 4;
    case EX_MIN: return 5;
    case EX_MOD: return 6;
    case EX_MODIDX: return 7;
    case EX_MUL: return 8;
    case EX_ADD: return 9;
    }
    return 10;
}

/* Total order on expressions; 0 only for the same node. */
static int cmp_expr(const Expr *a, const Expr *b) {
    if (a == b) return 0;
    int ra = kind_rank(a->kind), rb = kind_rank(b->kind);
    if (ra != rb) return ra < rb ? -1 : 1;
    if (a->kind == EX_INT) return a->ival < b->ival ? -1 : 1;
    if (a->kind == EX_SYM) return strcmp(a->name, b->name);
    for (int i = 0; i < a->n && i < b->n; i++) {
        int c = cmp_expr(a->args[i], b->args[i]);
        if (c) return c;
    }
    return a->n < b->n ? -1 : a->n > b->n ? 1 : 0;
}

/* sympy's sort_key order (default_sort_key), which sympy uses for the args of Min/Max,
 * the factors of a product and the generators of a sum's print order.  A key is
 * (class_key, args, exponent, coefficient): the coefficient of a product is split off and
 * compared last, x*x is the power x**2 (compared as x, then by exponent), classes rank
 * Number < Symbol < Mul < Add < functions (CeilDiv, FloorDiv, Mod, ModularIndexing, by
 * name) < Max < Min, and args compare by count first, then one by one.  Ties fall back to
 * cmp_expr so the order stays total. */
/* sympy prints Add(positive number, negative number * one factor or power) number first:
 * "1 - x", "5 - 2*x", "27946 - c1**2" (Expr.as_ordered_terms special case). */
bool symi_add_number_first(const Expr *e) {
    if (e->kind != EX_ADD || e->n != 2) return false;
    const Expr *c = e->args[1], *t = e->args[0];
    if (c->kind != EX_INT || c->ival <= 0 || t->kind != EX_MUL || t->args[0]->kind != EX_INT ||
        t->args[0]->ival >= 0)
        return false;
    for (int i = 2; i < t->n; i++)
        if (t->args[i] != t->args[1]) return false;
    return true;
}

static int class_rank(const Expr *e) {
    switch (e->kind) {
    case EX_INT: return 0;
    case EX_SYM: return 1;
    case EX_MUL: return 2;
    case EX_ADD: return 3;
    case EX_CEILDIV: return 4;
    case EX_FLOORDIV: return 5;
    case EX_MOD: return 6;
    case EX_MODIDX: return 7;
    case EX_MAX: return 8;
    case EX_MIN: return 9;
    }
    return 10;
}

static int cmp_sympy(const Expr *a, const Expr *b);

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

/* Key of the product of factors f[0..n) (no coefficient) times coefficient c. */
static int cmp_key(Expr *const *fa, int na, int64_t ca, Expr *const *fb, int nb, int64_t cb) {
    bool pa = true, pb = true;   /* all factors equal: a power */
    for (int i = 1; i < na; i++) pa &= fa[i] == fa[0];
    for (int i = 1; i < nb; i++) pb &= fb[i] == fb[0];
    int ra = pa ? class_rank(fa[0]) : 2, rb = pb ? class_rank(fb[0]) : 2;
    if (ra != rb) return ra < rb ? -1 : 1;
    int c = 0;
    if (!pa) {   /* both products of distinct factors: compare the power groups */
        int ga = 0, gb = 0;
        for (int i = 0; i < na; i++) ga += i == 0 || fa[i] != fa[i - 1];
        for (int i = 0; i < nb; i++) gb += i == 0 || fb[i] != fb[i - 1];
        if (ga != gb) return ga < gb ? -1 : 1;
        int i = 0, j = 0;
        while (i < na && j < nb && !c) {
            int ki = i, kj = j;
            while (ki < na && fa[ki] == fa[i]) ki++;
            while (kj < nb && fb[kj] == fb[j]) kj++;
            c = cmp_key(fa + i, ki - i, 1, fb + j, kj - j, 1);
            i = ki;
            j = kj;
        }
        if (c) return c;
        return cmp_i64(ca, cb);
    }
    const Expr *x = fa[0], *y = fb[0];
    if (x != y) {
        if (x->kind == EX_SYM) {
            c = strcmp(x->name, y->name);
        } else {
            /* Add, functions, Min/Max: (number of args, args) */
            if (x->n != y->n) return x->n < y->n ? -1 : 1;
            bool sx = symi_add_number_first(x), sy = symi_add_number_first(y);   /* Add args in print order */
            for (int i = 0; i < x->n && !c; i++)
                c = cmp_sympy(x->args[sx ? 1 - i : i], y->args[sy ? 1 - i : i]);
        }
        if (c) return c;
    }
    if (na != nb) return na < nb ? -1 : 1;   /* exponent */
    return cmp_i64(ca, cb);
}

static int cmp_sympy(const Expr *a, const Expr *b) {
    if (a == b) return 0;
    if (a->kind == EX_INT || b->kind == EX_INT) {
        if (a->kind == EX_INT && b->kind == EX_INT) return cmp_i64(a->ival, b->ival);
        return a->kind == EX_INT ? -1 : 1;
    }
    int64_t ca = 1, cb = 1;
    Expr *const *fa = (Expr *const *)&a, *const *fb = (Expr *const *)&b;
    int na = 1, nb = 1;
    if (a->kind == EX_MUL) {
        fa = a->args; na = a->n;
        if (fa[0]->kind == EX_INT) { ca = fa[0]->ival; fa++; na--; }
    }
    if (b->kind == EX_MUL) {
        fb = b->args; nb = b->n;
        if (fb[0]->kind == EX_INT) { cb = fb[0]->ival; fb++; nb--; }
    }
    int c = cmp_key(fa, na, ca, fb, nb, cb);
    return c ? c : cmp_expr(a, b);
}

static int cmp_sympy_q(const void *x, const void *y) {
    return cmp_sympy(*(Expr *const *)x, *(Expr *const *)y);
}

/* Factors of a monomial (a product without coefficient, or a single factor). */
static int mono_nf(const Expr *m) { return m->kind == EX_MUL ? m->n : 1; }
static Expr *mono_f(const Expr *m, int i) { return m->kind == EX_MUL ? m->args[i] : (Expr *)m; }

/* sympy's lex order of terms (see the top of the file); NULL (the constant) last. */
static int cmp_mono(const Expr *a, const Expr *b) {
    if (a == b) return 0;
    if (!a) return 1;
    if (!b) return -1;
    int na = mono_nf(a), nb = mono_nf(b);
    for (int i = 0; i < na && i < nb; i++) {
        Expr *fa = mono_f(a, i), *fb = mono_f(b, i);
        if (fa != fb) return cmp_sympy(fa, fb);
    }
    return na > nb ? -1 : 1;
}

static int cmp_term_q(const void *x, const void *y) {
    return cmp_mono(((const Term *)x)->m, ((const Term *)y)->m);
}

/* ---------------------------------------------------------------- sums and products */

/* t = c*m split into coefficient and monomial (NULL for a constant). */
static Expr *split_term(SymCtx *s, Expr *t, int64_t *c) {
    if (t->kind == EX_INT) { *c = t->ival; return NULL; }
    if (t->kind == EX_MUL && t->args[0]->kind == EX_INT) {
        *c = t->args[0]->ival;
        if (t->n == 2) return t->args[1];
        return mk(s, EX_MUL, 0, NULL, t->args + 1, t->n - 1);
    }
    *c = 1;
    return t;
}

static void push_terms(SymCtx *s, TVec *tv, Expr *e) {
    int64_t c;
    if (e->kind == EX_ADD) {
        for (int i = 0; i < e->n; i++) {
            Expr *m = split_term(s, e->args[i], &c);
            tv_push(tv, c, m);
        }
    } else {
        Expr *m = split_term(s, e, &c);
        tv_push(tv, c, m);
    }
}

/* c*m as one canonical term. */
static Expr *make_term(SymCtx *s, int64_t c, Expr *m) {
    if (!m || c == 0) return sym_int(s, m ? 0 : c);
    if (c == 1) return m;
    int nf = mono_nf(m);
    Expr *buf[8], **args = nf + 1 <= 8 ? buf : mi_xmalloc((size_t)(nf + 1) * sizeof *args);
    args[0] = sym_int(s, c);
    for (int i = 0; i < nf; i++) args[i + 1] = mono_f(m, i);
    Expr *r = mk(s, EX_MUL, 0, NULL, args, nf + 1);
    if (args != buf) free(args);
    return r;
}

/* Sort, collect like terms and build the canonical sum; frees tv. */
static Expr *build_sum(SymCtx *s, TVec *tv) {
    if (tv->n > 1) qsort(tv->v, (size_t)tv->n, sizeof *tv->v, cmp_term_q);
    EVec out = {0};
    for (int i = 0; i < tv->n;) {
        Expr *m = tv->v[i].m;
        int64_t c = tv->v[i].c;
        int j = i + 1;
        for (; j < tv->n && tv->v[j].m == m; j++) c = ov_add(s, c, tv->v[j].c);
        if (c != 0) symi_ev_push(&out, make_term(s, c, m));
        i = j;
    }
    free(tv->v);
    Expr *r;
    if (out.n == 0) r = sym_int(s, 0);
    else if (out.n == 1) r = out.v[0];
    else r = mk(s, EX_ADD, 0, NULL, out.v, out.n);
    free(out.v);
    return r;
}

Expr *sym_add(SymCtx *s, Expr *a, Expr *b) {
    int64_t x, y;
    bool ia = sym_is_int(a, &x), ib = sym_is_int(b, &y);
    if (ia && ib) return sym_int(s, ov_add(s, x, y));
    if (ia && x == 0) return b;
    if (ib && y == 0) return a;
    TVec tv = {0};
    push_terms(s, &tv, a);
    push_terms(s, &tv, b);
    return build_sum(s, &tv);
}

/* Product of two non-sums (or sums kept whole as factors). */
static Expr *mul_mono(SymCtx *s, Expr *a, Expr *b) {
    int64_t ca, cb;
    Expr *ma = split_term(s, a, &ca), *mb = split_term(s, b, &cb);
    int64_t c = ov_mul(s, ca, cb);
    if (c == 0) return sym_int(s, 0);
    if (!ma || !mb) {
        Expr *m = ma ? ma : mb;
        if (m && m->kind == EX_ADD) {   /* c*(sum): always distributed, never a MUL[c, sum] */
            TVec tv = {0};
            push_terms(s, &tv, m);
            for (int i = 0; i < tv.n; i++) tv.v[i].c = ov_mul(s, tv.v[i].c, c);
            return build_sum(s, &tv);
        }
        return make_term(s, c, m);
    }
    int na = mono_nf(ma), nb = mono_nf(mb), n = 0;
    Expr **f = mi_xmalloc((size_t)(na + nb + 1) * sizeof *f);
    f[n++] = c == 1 ? NULL : sym_int(s, c);
    if (!f[0]) n = 0;
    int i = 0, j = 0;
    while (i < na || j < nb) {
        if (j >= nb || (i < na && cmp_sympy(mono_f(ma, i), mono_f(mb, j)) <= 0))
            f[n++] = mono_f(ma, i++);
        else
            f[n++] = mono_f(mb, j++);
    }
    Expr *r = mk(s, EX_MUL, 0, NULL, f, n);
    free(f);
    return r;
}

/* A term with a sum kept whole as a factor (left by the MAX_EXPAND cap). */
static bool has_sum_factor(const Expr *t) {
    if (t->kind != EX_MUL) return false;
    for (int i = 0; i < t->n; i++)
        if (t->args[i]->kind == EX_ADD) return true;
    return false;
}

static bool any_sum_factor(const Expr *e) {
    if (e->kind != EX_ADD) return has_sum_factor(e);
    for (int i = 0; i < e->n; i++)
        if (has_sum_factor(e->args[i])) return true;
    return false;
}

/* Degree of a polynomial term structure: factors of a product (x*x is 2), the largest term of
 * a sum; 0 for a constant, 1 for a symbol or a function call (FloorDiv(...) is one factor). */
int symi_degree(const Expr *e) {
    if (e->kind == EX_INT) return 0;
    if (e->kind == EX_MUL) {
        int d = 0;
        for (int i = 0; i < e->n; i++) d += e->args[i]->kind == EX_INT ? 0 : e->args[i]->kind == EX_ADD ? symi_degree(e->args[i]) : 1;
        return d;
    }
    if (e->kind == EX_ADD) {
        int d = 0;
        for (int i = 0; i < e->n; i++) { int t = symi_degree(e->args[i]); if (t > d) d = t; }
        return d;
    }
    return 1;
}

Expr *sym_mul(SymCtx *s, Expr *a, Expr *b) {
    int64_t x, y;
    bool ia = sym_is_int(a, &x), ib = sym_is_int(b, &y);
    if (ia && ib) return sym_int(s, ov_mul(s, x, y));
    if ((ia && x == 0) || (ib && y == 0)) return sym_int(s, 0);
    if (ia && x == 1) return b;
    if (ib && y == 1) return a;
    int na = a->kind == EX_ADD ? a->n : 1, nb = b->kind == EX_ADD ? b->n : 1;
    if (na == 1 && nb == 1) return mul_mono(s, a, b);
    /* distributing over a term that already holds a whole sum would copy that sum into
     * every term: the tree (not the DAG) would grow exponentially with repeated products */
    if ((na > 1 && nb > 1 && na * nb > MAX_EXPAND) || any_sum_factor(a) || any_sum_factor(b))
        return mul_mono(s, a, b);
    /* past the degree limit the product stays a product: (s0 + 2)**240 is not multiplied out */
    if (symi_degree(a) + symi_degree(b) > s->max_degree) return mul_mono(s, a, b);
    TVec tv = {0};
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) {
            Expr *ta = na > 1 ? a->args[i] : a, *tb = nb > 1 ? b->args[j] : b;
            push_terms(s, &tv, mul_mono(s, ta, tb));
        }
    return build_sum(s, &tv);
}

Expr *sym_neg(SymCtx *s, Expr *a) { return sym_mul(s, sym_int(s, -1), a); }
Expr *sym_sub(SymCtx *s, Expr *a, Expr *b) { return sym_add(s, a, sym_neg(s, b)); }

/* gcd of g and every coefficient of e's terms (constant term included). */
static uint64_t terms_gcd(SymCtx *s, Expr *e, uint64_t g) {
    int64_t c;
    if (e->kind == EX_ADD) {
        for (int i = 0; i < e->n && g != 1; i++) {
            split_term(s, e->args[i], &c);
            g = ugcd(g, uabs64(c));
        }
        return g;
    }
    split_term(s, e, &c);
    return ugcd(g, uabs64(c));
}

/* e with every coefficient divided by g (g divides them all; g <= INT64_MAX). */
static Expr *terms_div(SymCtx *s, Expr *e, int64_t g) {
    TVec tv = {0};
    push_terms(s, &tv, e);
    for (int i = 0; i < tv.n; i++) tv.v[i].c /= g;
    return build_sum(s, &tv);
}

/* Split e's terms: coefficients divisible by c go (divided by c) to *q, the rest to *r.
 * Returns false when nothing is divisible. */
static bool terms_split_multiple(SymCtx *s, Expr *e, int64_t c, Expr **q, Expr **r) {
    TVec tv = {0}, tq = {0}, tr = {0};
    push_terms(s, &tv, e);
    for (int i = 0; i < tv.n; i++) {
        if (tv.v[i].c % c == 0) tv_push(&tq, tv.v[i].c / c, tv.v[i].m);
        else tv_push(&tr, tv.v[i].c, tv.v[i].m);
    }
    free(tv.v);
    if (tq.n == 0) { free(tr.v); return false; }
    *q = build_sum(s, &tq);
    *r = build_sum(s, &tr);
    return true;
}

static Expr *bin(SymCtx *s, ExprKind k, Expr *a, Expr *b) {
    Expr *args[2] = {a, b};
    return mk(s, k, 0, NULL, args, 2);
}

/* a // c and ceil(a / c) for a constant c > 0. */
static Expr *div_const(SymCtx *s, ExprKind k, Expr *a, int64_t c) {
    int64_t x;
    if (c == 1) return a;
    if (sym_is_int(a, &x)) return sym_int(s, k == EX_FLOORDIV ? symi_py_floordiv(s, x, c) : symi_py_ceildiv(s, x, c));
    int64_t d, dc;
    if (k == EX_FLOORDIV && a->kind == EX_FLOORDIV && sym_is_int(a->args[1], &d) && d > 0 &&
        !__builtin_mul_overflow(d, c, &dc))
        return div_const(s, k, a->args[0], dc);
    uint64_t g = terms_gcd(s, a, (uint64_t)c);
    if (g > 1) return div_const(s, k, terms_div(s, a, (int64_t)g), c / (int64_t)g);
    Expr *q, *r;
    if (terms_split_multiple(s, a, c, &q, &r)) return sym_add(s, q, div_const(s, k, r, c));
    return bin(s, k, a, sym_int(s, c));
}

static Expr *div_any(SymCtx *s, ExprKind k, Expr *a, Expr *b) {
    int64_t x, y;
    if (sym_is_int(b, &y)) {
        if (y > 0) return div_const(s, k, a, y);
        if (y == 0) return bin(s, k, a, b);
        if (sym_is_int(a, &x)) return sym_int(s, k == EX_FLOORDIV ? symi_py_floordiv(s, x, y) : symi_py_ceildiv(s, x, y));
        if (y == INT64_MIN) return bin(s, k, a, b);
        return div_const(s, k, sym_neg(s, a), -y);   /* a // -c == (-a) // c */
    }
    if (sym_is_int(a, &x) && x == 0) return a;
    if (k == EX_FLOORDIV) {   /* FloorDiv.eval by a symbol: nested divisions merge, gcd cancels */
        int64_t lo1 = 0, lo2 = 0;   /* (a // b) // c == a // (b*c) for positive b, c (sizes) */
        if (a->kind == EX_FLOORDIV && (sym_bound(a->args[1], NULL, 0, &lo1, NULL), lo1 >= 1) &&
            (sym_bound(b, NULL, 0, &lo2, NULL), lo2 >= 1))
            return div_any(s, k, a->args[0], sym_mul(s, a->args[1], b));
        Expr *g = symi_common_factor(s, a, b);
        if (g) return div_any(s, k, symi_exact_div(s, a, g), symi_exact_div(s, b, g));
    }
    return bin(s, k, a, b);
}

Expr *sym_floordiv(SymCtx *s, Expr *a, Expr *b) { return div_any(s, EX_FLOORDIV, a, b); }
Expr *sym_ceildiv(SymCtx *s, Expr *a, Expr *b) { return div_any(s, EX_CEILDIV, a, b); }

Expr *sym_modidx(SymCtx *s, Expr *x, Expr *d, Expr *m) {
    int64_t xv, dv = 0, mv = 0;
    bool dc = sym_is_int(d, &dv), mc = sym_is_int(m, &mv);
    if ((mc && mv == 1) || (sym_is_int(x, &xv) && xv == 0)) return sym_int(s, 0);
    if (dc && mc && dv != 0 && mv != 0 && sym_is_int(x, &xv))
        return sym_int(s, symi_py_mod(symi_py_floordiv(s, xv, dv), mv));
    if (dc && mc && dv > 0 && mv > 0) {
        int64_t e, k, ed, dm;
        if (x->kind == EX_FLOORDIV && sym_is_int(x->args[1], &e) && e > 0 &&
            !__builtin_mul_overflow(e, dv, &ed))
            return sym_modidx(s, x->args[0], sym_int(s, ed), m);
        if (x->kind == EX_MODIDX && dv == 1 && sym_is_int(x->args[2], &k) && k > 0 && k % mv == 0)
            return sym_modidx(s, x->args[0], x->args[1], m);
        uint64_t g = terms_gcd(s, x, (uint64_t)dv);
        if (g > 1) return sym_modidx(s, terms_div(s, x, (int64_t)g), sym_int(s, dv / (int64_t)g), m);
        Expr *q, *r;
        if (!__builtin_mul_overflow(dv, mv, &dm) && terms_split_multiple(s, x, dm, &q, &r))
            return sym_modidx(s, r, d, m);
    }
    if (!(dc && mc) && !sym_is_int(x, &xv)) {   /* ModularIndexing.eval, symbolic d or m */
        Expr *g = dc && dv == 1 ? NULL : symi_common_factor(s, x, d), *md = sym_mul(s, d, m);
        if (g) return sym_modidx(s, symi_exact_div(s, x, g), symi_exact_div(s, d, g), m);
        if (x->kind == EX_ADD && md->kind != EX_ADD) {   /* terms that are multiples of d*m */
            Expr *kept = sym_int(s, 0);
            int nk = 0;
            bool neg = false;
            for (int i = 0; i < x->n; i++) {
                if (symi_common_factor(s, x->args[i], md) == md) continue;
                int64_t c = 1;
                split_term(s, x->args[i], &c);
                neg |= c < 0;
                kept = sym_add(s, kept, x->args[i]);
                nk++;
            }
            if (nk < x->n && !neg) return sym_modidx(s, kept, d, m);
        }
        int64_t lo1 = 0, lo2 = 0;
        if (x->kind == EX_FLOORDIV && (sym_bound(x->args[1], NULL, 0, &lo1, NULL), lo1 >= 1) &&
            (sym_bound(d, NULL, 0, &lo2, NULL), lo2 >= 1))
            return sym_modidx(s, x->args[0], sym_mul(s, x->args[1], d), m);
    }
    Expr *args[3] = {x, d, m};
    return mk(s, EX_MODIDX, 0, NULL, args, 3);
}

Expr *sym_mod(SymCtx *s, Expr *a, Expr *b) {
    int64_t x, y;
    if (sym_is_int(b, &y) && y != 0) {
        if (y > 0) return sym_modidx(s, a, sym_int(s, 1), b);
        if (sym_is_int(a, &x)) return sym_int(s, symi_py_mod(x, y));
        if (y != INT64_MIN)   /* a % -c == -((-a) % c) */
            return sym_neg(s, sym_modidx(s, sym_neg(s, a), sym_int(s, 1), sym_int(s, -y)));
    }
    if (sym_is_int(a, &x) && x == 0) return a;
    return bin(s, EX_MOD, a, b);
}

/* e = rest + k with k the constant term (rest NULL when e is a constant). */
static Expr *split_const(SymCtx *s, Expr *e, int64_t *k) {
    if (e->kind == EX_INT) { *k = e->ival; return NULL; }
    if (e->kind == EX_ADD && e->args[e->n - 1]->kind == EX_INT) {
        *k = e->args[e->n - 1]->ival;
        return e->n == 2 ? e->args[0] : mk(s, EX_ADD, 0, NULL, e->args, e->n - 1);
    }
    *k = 0;
    return e;
}

static bool always_wins(const Expr *a, const Expr *b, ExprKind k);
static int node_size(const Expr *e, int cap);

/* Every arg of Min/Max x is also an arg of y (x's arg list is a subset of y's). */
static bool args_subset(const Expr *x, const Expr *y) {
    for (int i = 0; i < x->n; i++) {
        bool found = false;
        for (int j = 0; j < y->n && !found; j++) found = y->args[j] == x->args[i];
        if (!found) return false;
    }
    return true;
}

/* Min/Max of n args (k is EX_MIN or EX_MAX). */
Expr *symi_minmax(SymCtx *s, ExprKind k, Expr *const *in, int n) {
    EVec a = {0};
    bool have_c = false;
    int64_t cv = 0;
    for (int i = 0; i < n; i++) {
        Expr *const *src = in[i]->kind == k ? in[i]->args : &in[i];
        int sn = in[i]->kind == k ? in[i]->n : 1;
        for (int j = 0; j < sn; j++) {
            int64_t v;
            if (sym_is_int(src[j], &v)) {
                if (!have_c || (k == EX_MIN ? v < cv : v > cv)) cv = v;
                have_c = true;
            } else {
                symi_ev_push(&a, src[j]);
            }
        }
    }
    if (have_c) symi_ev_push(&a, sym_int(s, cv));
    if (a.n > 1) qsort(a.v, (size_t)a.n, sizeof *a.v, cmp_sympy_q);
    /* drop duplicates and args decided by a constant difference */
    bool *dead = mi_xcalloc((size_t)a.n + 1, sizeof *dead);
    for (int i = 0; i < a.n; i++) {
        if (dead[i]) continue;
        int64_t ki, kj;
        Expr *ri = split_const(s, a.v[i], &ki);
        for (int j = i + 1; j < a.n && !dead[i]; j++) {
            if (dead[j]) continue;
            Expr *rj = split_const(s, a.v[j], &kj);
            if (ri != rj) continue;
            bool i_wins = k == EX_MIN ? ki <= kj : ki >= kj;
            dead[i_wins ? j : i] = true;
        }
    }
    /* absorption: Min(a, Max(b, ...)) = a when b >= a is known (b == a, or b = a + k, k >= 0);
     * dually for Max(a, Min(b, ...)) */
    ExprKind dual = k == EX_MIN ? EX_MAX : EX_MIN;
    for (int i = 0; i < a.n; i++) {
        if (dead[i] || a.v[i]->kind != dual) continue;
        for (int j = 0; j < a.n && !dead[i]; j++) {
            if (j == i || dead[j]) continue;
            int64_t kj, ke;
            Expr *rj = split_const(s, a.v[j], &kj);
            for (int t = 0; t < a.v[i]->n; t++) {
                Expr *re = split_const(s, a.v[i]->args[t], &ke);
                if (re == rj && (k == EX_MIN ? ke >= kj : ke <= kj)) { dead[i] = true; break; }
            }
        }
    }
    /* Max(Min(S1), Min(S2)) with S1 a subset of S2: Min(S2) <= Min(S1) never wins (dually
     * for Min of Maxes); and an arg that interval bounds (no assumptions on symbols) show
     * can never win is dropped: Min(-4, Min(0, x) - 329) = Min(0, x) - 329 */
    for (int i = 0; i < a.n; i++)
        for (int j = 0; j < a.n && !dead[i]; j++) {
            if (j == i || dead[j]) continue;
            if (a.v[i]->kind == dual && a.v[j]->kind == dual && a.v[i]->n > a.v[j]->n &&
                args_subset(a.v[j], a.v[i]))
                dead[i] = true;
            else if (always_wins(a.v[j], a.v[i], k))
                dead[i] = true;
        }
    int m = 0;
    for (int i = 0; i < a.n; i++)
        if (!dead[i]) a.v[m++] = a.v[i];
    free(dead);
    Expr *r = m == 1 ? a.v[0] : mk(s, k, 0, NULL, a.v, m);
    free(a.v);
    return r;
}

Expr *sym_min(SymCtx *s, Expr *a, Expr *b) { Expr *v[2] = {a, b}; return symi_minmax(s, EX_MIN, v, 2); }
Expr *sym_max(SymCtx *s, Expr *a, Expr *b) { Expr *v[2] = {a, b}; return symi_minmax(s, EX_MAX, v, 2); }

/* Rebuild a node of e's kind from new args through the constructors. */
static Expr *rebuild(SymCtx *s, const Expr *e, Expr **a) {
    Expr *r;
    switch (e->kind) {
    case EX_INT: case EX_SYM: return (Expr *)e;
    case EX_ADD:
        r = a[0];
        for (int i = 1; i < e->n; i++) r = sym_add(s, r, a[i]);
        return r;
    case EX_MUL:
        r = a[0];
        for (int i = 1; i < e->n; i++) r = sym_mul(s, r, a[i]);
        return r;
    case EX_FLOORDIV: return sym_floordiv(s, a[0], a[1]);
    case EX_CEILDIV: return sym_ceildiv(s, a[0], a[1]);
    case EX_MOD: return sym_mod(s, a[0], a[1]);
    case EX_MODIDX: return sym_modidx(s, a[0], a[1], a[2]);
    case EX_MIN: case EX_MAX: return symi_minmax(s, e->kind, a, e->n);
    }
    return (Expr *)e;
}

static Expr *subst_rec(SymCtx *s, Expr *e, const char **names, Expr **repl, int n, Memo *m) {
    if (e->kind == EX_SYM) {
        for (int i = 0; i < n; i++)
            if (!strcmp(names[i], e->name)) return repl[i];
        return e;
    }
    if (e->kind == EX_INT) return e;
    MemoEnt *me = symi_memo_get(m, e);
    if (me) return me->v.e;
    Expr **a = mi_xmalloc((size_t)e->n * sizeof *a);
    bool changed = false;
    for (int i = 0; i < e->n; i++) {
        a[i] = subst_rec(s, e->args[i], names, repl, n, m);
        changed |= a[i] != e->args[i];
    }
    Expr *r = changed ? rebuild(s, e, a) : e;
    free(a);
    symi_memo_put(m, e)->v.e = r;
    return r;
}

Expr *sym_subst(SymCtx *s, Expr *e, const char **names, Expr **repl, int n) {
    Memo m;
    symi_memo_init(&m);
    Expr *r = subst_rec(s, e, names, repl, n, &m);
    symi_memo_free(&m);
    return r;
}

static bool mentions_rec(const Expr *e, const char *name, Memo *m) {
    if (e->kind == EX_SYM) return e->name == name;
    if (e->n == 0 || memo_seen(m, e)) return false;
    for (int i = 0; i < e->n; i++)
        if (mentions_rec(e->args[i], name, m)) return true;
    return false;
}

static bool mentions(const Expr *e, const char *name) {
    Memo m;
    symi_memo_init(&m);
    bool r = mentions_rec(e, name, &m);
    symi_memo_free(&m);
    return r;
}

Expr *sym_coeff(SymCtx *s, Expr *e, const char *var) {
    const char *name = intern_name(s, var);
    Expr *sum = sym_int(s, 0);
    int nt = e->kind == EX_ADD ? e->n : 1;
    for (int t = 0; t < nt; t++) {
        Expr *term = e->kind == EX_ADD ? e->args[t] : e;
        int nf = term->kind == EX_MUL ? term->n : 1, hits = 0;
        Expr *rest = sym_int(s, 1);
        for (int i = 0; i < nf; i++) {
            Expr *f = term->kind == EX_MUL ? term->args[i] : term;
            if (f->kind == EX_SYM && f->name == name) hits++;
            else if (mentions(f, name)) return NULL;   /* inside FloorDiv, Min, ... */
            else rest = sym_mul(s, rest, f);
        }
        if (hits > 1) return NULL;
        if (hits == 1) sum = sym_add(s, sum, rest);
    }
    return sum;
}

static int free_syms(const Expr *e, const char **out, int cnt, int max, Memo *m) {
    if (e->kind == EX_SYM) {
        for (int i = 0; i < cnt; i++)
            if (out[i] == e->name) return cnt;
        if (cnt < max) out[cnt++] = e->name;
        return cnt;
    }
    if (e->n == 0 || memo_seen(m, e)) return cnt;
    for (int i = 0; i < e->n; i++) cnt = free_syms(e->args[i], out, cnt, max, m);
    return cnt;
}

int sym_free_symbols(const Expr *e, const char **out, int max) {
    Memo m;
    symi_memo_init(&m);
    int n = free_syms(e, out, 0, max, &m);
    symi_memo_free(&m);
    return n;
}

/* ---------------------------------------------------------------- ranges (interval arithmetic) */

/* Bounds are 128-bit; anything beyond +-2^63 becomes +-BINF ("unbounded"). */
#define BINF (((I128)1) << 100)
#define BLIM (((I128)1) << 63)

static I128 clampv(I128 v) { return v > BLIM ? BINF : v < -BLIM ? -BINF : v; }
static bool is_inf(I128 v) { return v >= BINF || v <= -BINF; }
static Iv iv_all(void) { return (Iv){-BINF, BINF}; }

static I128 add_lo(I128 a, I128 b) {
    if (a <= -BINF || b <= -BINF) return -BINF;
    if (a >= BINF || b >= BINF) return BINF;
    return clampv(a + b);
}

static I128 add_hi(I128 a, I128 b) {
    if (a >= BINF || b >= BINF) return BINF;
    if (a <= -BINF || b <= -BINF) return -BINF;
    return clampv(a + b);
}

static I128 mul_c(I128 a, I128 b) {
    if (a == 0 || b == 0) return 0;
    if (is_inf(a) || is_inf(b)) return ((a < 0) != (b < 0)) ? -BINF : BINF;
    return clampv(a * b);
}

static I128 floordiv128(I128 a, I128 b) {   /* b != 0, both finite */
    I128 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}

static I128 mod128(I128 a, I128 b) {
    I128 r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

/* floor(a / b) for a corner, b != 0; *unknown set when the limit is undefined. */
static I128 fdiv_corner(I128 a, I128 b, bool *unknown) {
    if (is_inf(b)) {
        if (is_inf(a)) { *unknown = true; return 0; }
        if (a == 0) return 0;
        return ((a < 0) == (b < 0)) ? 0 : -1;
    }
    if (is_inf(a)) return ((a < 0) != (b < 0)) ? -BINF : BINF;
    return floordiv128(a, b);
}

static Iv iv_floordiv(Iv a, Iv b) {
    if (!(b.lo >= 1 || b.hi <= -1)) return iv_all();   /* divisor may be 0 */
    bool unk = false;
    I128 c[4] = {fdiv_corner(a.lo, b.lo, &unk), fdiv_corner(a.lo, b.hi, &unk),
                 fdiv_corner(a.hi, b.lo, &unk), fdiv_corner(a.hi, b.hi, &unk)};
    if (unk) return iv_all();
    Iv r = {c[0], c[0]};
    for (int i = 1; i < 4; i++) {
        if (c[i] < r.lo) r.lo = c[i];
        if (c[i] > r.hi) r.hi = c[i];
    }
    return r;
}

static Iv iv_neg(Iv a) { return (Iv){-a.hi, -a.lo}; }

static Iv iv_mod(Iv a, Iv m) {
    if (m.lo >= 1) {
        if (a.lo >= 0 && a.hi < m.lo) return a;
        if (m.lo == m.hi && !is_inf(m.lo) && !is_inf(a.lo) && !is_inf(a.hi) &&
            floordiv128(a.lo, m.lo) == floordiv128(a.hi, m.lo))
            return (Iv){mod128(a.lo, m.lo), mod128(a.hi, m.lo)};
        I128 hi = m.hi >= BINF ? BINF : m.hi - 1;
        if (a.lo >= 0 && a.hi < hi) hi = a.hi;
        return (Iv){0, hi};
    }
    if (m.hi <= -1) return (Iv){m.lo <= -BINF ? -BINF : m.lo + 1, 0};
    return iv_all();
}

static bool is_size_name(const char *n) {
    if (n[0] == 'k' && n[1] == 's') n++;
    if (n[0] != 's' || !n[1]) return false;
    for (n++; *n; n++)
        if (!isdigit((unsigned char)*n)) return false;
    return true;
}

static Iv bound_node(const Expr *e, const RangeCx *rc);

Iv symi_bound(const Expr *e, const RangeCx *rc) {
    if (e->n == 0) return bound_node(e, rc);
    MemoEnt *me = symi_memo_get(rc->bounds, e);
    if (me) return me->v.iv;
    Iv r = bound_node(e, rc);
    symi_memo_put(rc->bounds, e)->v.iv = r;
    return r;
}

static Iv bound_node(const Expr *e, const RangeCx *rc) {
    Iv r, t;
    switch (e->kind) {
    case EX_INT: return (Iv){e->ival, e->ival};
    case EX_SYM:
        for (int i = 0; i < rc->nr; i++)
            if (rc->r[i].name && !strcmp(rc->r[i].name, e->name)) {
                if (rc->r[i].lo > rc->r[i].hi) return iv_all();
                I128 lo = rc->r[i].lo == INT64_MIN ? -BINF : rc->r[i].lo;
                I128 hi = rc->r[i].hi == INT64_MAX ? BINF : rc->r[i].hi;
                return (Iv){lo, hi};
            }
        if (rc->no_defaults) return iv_all();
        if (is_size_name(e->name)) return (Iv){1, BINF};
        return iv_all();
    case EX_ADD:
        r = symi_bound(e->args[0], rc);
        for (int i = 1; i < e->n; i++) {
            t = symi_bound(e->args[i], rc);
            r.lo = add_lo(r.lo, t.lo);
            r.hi = add_hi(r.hi, t.hi);
        }
        return r;
    case EX_MUL:
        r = symi_bound(e->args[0], rc);
        for (int i = 1; i < e->n; i++) {
            t = symi_bound(e->args[i], rc);
            I128 c[4] = {mul_c(r.lo, t.lo), mul_c(r.lo, t.hi), mul_c(r.hi, t.lo), mul_c(r.hi, t.hi)};
            r.lo = r.hi = c[0];
            for (int j = 1; j < 4; j++) {
                if (c[j] < r.lo) r.lo = c[j];
                if (c[j] > r.hi) r.hi = c[j];
            }
        }
        return r;
    case EX_FLOORDIV: return iv_floordiv(symi_bound(e->args[0], rc), symi_bound(e->args[1], rc));
    case EX_CEILDIV: return iv_neg(iv_floordiv(iv_neg(symi_bound(e->args[0], rc)), symi_bound(e->args[1], rc)));
    case EX_MOD: return iv_mod(symi_bound(e->args[0], rc), symi_bound(e->args[1], rc));
    case EX_MODIDX:
        return iv_mod(iv_floordiv(symi_bound(e->args[0], rc), symi_bound(e->args[1], rc)), symi_bound(e->args[2], rc));
    case EX_MIN: case EX_MAX:
        r = symi_bound(e->args[0], rc);
        for (int i = 1; i < e->n; i++) {
            t = symi_bound(e->args[i], rc);
            if (e->kind == EX_MIN) {
                if (t.lo < r.lo) r.lo = t.lo;
                if (t.hi < r.hi) r.hi = t.hi;
            } else {
                if (t.lo > r.lo) r.lo = t.lo;
                if (t.hi > r.hi) r.hi = t.hi;
            }
        }
        return r;
    }
    return iv_all();
}

/* For Min (k) / Max: a is never worse than b whatever the symbols' values, so b can go.
 * Only for small args (constructors must stay cheap). */
static bool always_wins(const Expr *a, const Expr *b, ExprKind k) {
    if (node_size(a, 64) >= 64 || node_size(b, 64) >= 64) return false;
    Memo mb;
    symi_memo_init(&mb);
    RangeCx rc = {NULL, 0, true, &mb, NULL, NULL};
    Iv ia = symi_bound(a, &rc), ib = symi_bound(b, &rc);
    symi_memo_free(&mb);
    return k == EX_MIN ? ia.hi <= ib.lo : ia.lo >= ib.hi;
}

bool sym_bound(const Expr *e, const SymRange *r, int nr, int64_t *lo, int64_t *hi) {
    Memo mb;
    symi_memo_init(&mb);
    RangeCx rc = {r, nr, false, &mb, NULL, NULL};
    Iv b = symi_bound(e, &rc);
    symi_memo_free(&mb);
    int64_t l = b.lo <= INT64_MIN ? INT64_MIN : b.lo >= INT64_MAX ? INT64_MAX : (int64_t)b.lo;
    int64_t h = b.hi >= INT64_MAX ? INT64_MAX : b.hi <= INT64_MIN ? INT64_MIN : (int64_t)b.hi;
    if (lo) *lo = l;
    if (hi) *hi = h;
    return l != INT64_MIN && h != INT64_MAX;
}

/* ---------------------------------------------------------------- simplification */

static int node_size(const Expr *e, int cap) {
    int n = 1;
    for (int i = 0; i < e->n && n < cap; i++) n += node_size(e->args[i], cap - n);
    return n;
}

static bool is_point(Iv b) { return b.lo == b.hi && b.lo >= INT64_MIN && b.lo <= INT64_MAX; }

/* Identities that undo a split of one index into digits (no ranges needed), in a sum:
 *   c*ModularIndexing(y, d, m) + c*m*FloorDiv(y, d*m)            -> c*FloorDiv(y, d)
 *   c*ModularIndexing(y, d, m) + c*m*ModularIndexing(y, d*m, m2) -> c*ModularIndexing(y, d, m*m2)
 * since (y//d) % m + m*((y//d)//m) == y//d.  Returns e when no pair matches. */
static Expr *merge_digits(SymCtx *s, Expr *e) {
    if (e->kind != EX_ADD) return e;
    for (int i = 0; i < e->n; i++) {
        int64_t ci, cj, d, m, dm, cm, m2, mm;
        Expr *mi = split_term(s, e->args[i], &ci);
        if (!mi || mi->kind != EX_MODIDX || !sym_is_int(mi->args[1], &d) || !sym_is_int(mi->args[2], &m) ||
            d <= 0 || m <= 0 || __builtin_mul_overflow(d, m, &dm) || __builtin_mul_overflow(ci, m, &cm))
            continue;
        for (int j = 0; j < e->n; j++) {
            Expr *mj = split_term(s, e->args[j], &cj);
            if (j == i || !mj || cj != cm || mj->args == NULL || mj->n < 2 || mj->args[0] != mi->args[0]) continue;
            Expr *merged = NULL;
            if (mj->kind == EX_FLOORDIV && sym_is_int(mj->args[1], &dm) && dm == d * m)
                merged = sym_floordiv(s, mi->args[0], mi->args[1]);
            else if (mj->kind == EX_MODIDX && sym_is_int(mj->args[1], &dm) && dm == d * m &&
                     sym_is_int(mj->args[2], &m2) && m2 > 0 && !__builtin_mul_overflow(m, m2, &mm))
                merged = sym_modidx(s, mi->args[0], mi->args[1], sym_int(s, mm));
            if (!merged) continue;
            Expr *r = sym_mul(s, sym_int(s, ci), merged);
            for (int k = 0; k < e->n; k++)
                if (k != i && k != j) r = sym_add(s, r, e->args[k]);
            return merge_digits(s, r);
        }
    }
    return e;
}

static Expr *refine_node(SymCtx *s, Expr *e, const RangeCx *rc);

static Expr *refine(SymCtx *s, Expr *e, const RangeCx *rc) {
    if (e->kind == EX_INT || e->kind == EX_SYM) return e;
    MemoEnt *me = symi_memo_get(rc->refined, e);
    if (me) return me->v.e;
    Expr *r = refine_node(s, e, rc);
    symi_memo_put(rc->refined, e)->v.e = r;
    return r;
}

/* Range rules at the top of e, whose args are already simplified. */
/* FloorDiv(g*A + r, D) with g | D and 0 <= r < g is FloorDiv(A, D/g): the terms of r are
 * below one step of g and never carry into the quotient. (Inductor's _simplify_with_ranges
 * removes such terms when the rest is a multiple of D itself — remove_zero_terms; this is the
 * general form: floor((g*A + r)/(g*k)) = floor(floor((g*A + r)/g)/k) = floor(A/k).) The
 * largest such g wins. Example, x0 < 512: FloorDiv(512*x1 + x0, 131072) -> FloorDiv(x1, 256),
 * which the digit rules then merge with its ModularIndexing partner (512*x1 + x0 as a whole
 * index). NULL when nothing applies. */
static Expr *drop_small_terms(SymCtx *s, Expr *num, int64_t D, const RangeCx *rc) {
    if (num->kind != EX_ADD || D <= 1) return NULL;
    int n = num->n;
    int64_t *c = mi_xmalloc((size_t)n * sizeof *c);
    for (int i = 0; i < n; i++) split_term(s, num->args[i], &c[i]);
    int64_t best = 1;
    Expr *best_a = NULL;
    for (int i = 0; i < n; i++) {
        uint64_t g = ugcd(c[i] < 0 ? -(uint64_t)c[i] : (uint64_t)c[i], (uint64_t)D);
        if (g <= (uint64_t)best) continue;
        TVec big = {0}, small = {0};
        for (int j = 0; j < n; j++) {
            Expr *m = split_term(s, num->args[j], &(int64_t){0});
            int64_t cj = c[j];
            tv_push(cj % (int64_t)g == 0 ? &big : &small, cj, m);
        }
        if (big.n == 0 || small.n == 0) { free(big.v); free(small.v); continue; }
        Expr *r = build_sum(s, &small);
        Iv br = symi_bound(r, rc);
        if (br.lo >= 0 && br.hi < (I128)g) {
            best = (int64_t)g;
            best_a = build_sum(s, &big);
        } else free(big.v);
    }
    free(c);
    if (!best_a) return NULL;
    return sym_floordiv(s, terms_div(s, best_a, best), sym_int(s, D / best));
}

static Expr *refine_node(SymCtx *s, Expr *e, const RangeCx *rc) {
    Iv be = symi_bound(e, rc);
    if (is_point(be)) return sym_int(s, (int64_t)be.lo);
    int64_t d, m;
    switch (e->kind) {
    case EX_ADD: case EX_MUL: {
        /* constructors may have made new FloorDiv terms (q + FloorDiv(r, c)) */
        Expr **a = mi_xmalloc((size_t)e->n * sizeof *a);
        bool changed = false;
        for (int i = 0; i < e->n; i++) {
            a[i] = refine(s, e->args[i], rc);
            changed |= a[i] != e->args[i];
        }
        Expr *r = changed ? rebuild(s, e, a) : e;
        free(a);
        return merge_digits(s, r);
    }
    case EX_MODIDX: {
        Expr *x = e->args[0], *dv = e->args[1], *mv = e->args[2];
        Iv bm = symi_bound(mv, rc);
        Expr *f = refine(s, sym_floordiv(s, x, dv), rc);
        Iv bf = symi_bound(f, rc);
        if (bm.lo >= 1 && bf.lo >= 0 && bf.hi < bm.lo) return f;   /* cannot wrap */
        if (!sym_is_int(dv, &d) || !sym_is_int(mv, &m) || d <= 0 || m <= 0) return e;
        if (!is_inf(bf.lo) && !is_inf(bf.hi) && floordiv128(bf.lo, m) == floordiv128(bf.hi, m)) {
            I128 off = floordiv128(bf.lo, m) * m;   /* |off| <= 2^63: fits */
            if (off >= INT64_MIN && off <= INT64_MAX) return sym_sub(s, f, sym_int(s, (int64_t)off));
        }
        Expr *alt = sym_modidx(s, f, sym_int(s, 1), mv);
        if (alt->kind == EX_MODIDX && alt->args[1] == sym_int(s, 1)) {
            Iv ba = symi_bound(alt->args[0], rc);
            if (ba.lo >= 0 && ba.hi < m) return alt->args[0];
        }
        if (alt != e && node_size(alt, 1000) < node_size(e, 1000)) return alt;
        return e;
    }
    case EX_FLOORDIV: {
        if (!sym_is_int(e->args[1], &d)) return e;
        Expr *r = drop_small_terms(s, e->args[0], d, rc);
        return r ? refine(s, r, rc) : e;
    }
    case EX_MOD: {
        Iv ba = symi_bound(e->args[0], rc), bb = symi_bound(e->args[1], rc);
        if (bb.lo >= 1 && ba.lo >= 0 && ba.hi < bb.lo) return e->args[0];
        return e;
    }
    case EX_MIN: case EX_MAX: {
        int n = e->n, k = 0;
        Iv *b = mi_xmalloc((size_t)n * sizeof *b);
        bool *dead = mi_xcalloc((size_t)n, sizeof *dead);
        for (int i = 0; i < n; i++) b[i] = symi_bound(e->args[i], rc);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n && !dead[i]; j++) {
                if (j == i || dead[j]) continue;
                if (e->kind == EX_MIN ? b[j].hi <= b[i].lo : b[j].lo >= b[i].hi) dead[i] = true;
            }
        Expr **a = mi_xmalloc((size_t)n * sizeof *a);
        for (int i = 0; i < n; i++)
            if (!dead[i]) a[k++] = e->args[i];
        Expr *r = k == n ? e : symi_minmax(s, e->kind, a, k);
        free(a);
        free(dead);
        free(b);
        return r;
    }
    default:
        return e;
    }
}

static Expr *simp(SymCtx *s, Expr *e, const RangeCx *rc) {
    if (e->kind == EX_INT || e->kind == EX_SYM) return e;
    MemoEnt *me = symi_memo_get(rc->simplified, e);
    if (me) return me->v.e;
    Expr **a = mi_xmalloc((size_t)e->n * sizeof *a);
    bool changed = false;
    for (int i = 0; i < e->n; i++) {
        a[i] = simp(s, e->args[i], rc);
        changed |= a[i] != e->args[i];
    }
    Expr *r = changed ? rebuild(s, e, a) : e;
    free(a);
    r = refine(s, r, rc);
    symi_memo_put(rc->simplified, e)->v.e = r;
    return r;
}

Expr *sym_simplify(SymCtx *s, Expr *e, const SymRange *r, int nr) {
    Memo mb, ms, mr;
    symi_memo_init(&mb);
    symi_memo_init(&ms);
    symi_memo_init(&mr);
    RangeCx rc = {r, nr, false, &mb, &ms, &mr};
    bool before = s->overflow;
    s->overflow = false;
    /* a second round catches rules enabled by the first (rarely needed) */
    Expr *x = simp(s, e, &rc);
    if (x != e) x = simp(s, x, &rc);
    /* a constant folded past int64 while simplifying (Max(s0, 22*s5, 16)**24 * 5610 once s5's
     * range made the Max its second argument: 22**24 wraps): keep e, which is exact; the flag is
     * left as the caller had it, so a later sym_parse does not report this overflow as its own */
    if (s->overflow) x = e;
    s->overflow = before;
    symi_memo_free(&mb);
    symi_memo_free(&ms);
    symi_memo_free(&mr);
    return x;
}

/* ---------------------------------------------------------------- evaluation */

typedef struct { MiCtx *ctx; const SymBinding *b; int nb; Memo *memo; } EvalCx;

static int eval_fail(EvalCx *ec, const Expr *e, const char *what) {
    char buf[160];
    sym_str(e, buf, sizeof buf);
    return mi_err(ec->ctx, NULL, 0, 0, "%s while evaluating %s", what, buf);
}

static int ev_node(EvalCx *ec, const Expr *e, int64_t *out);

static int ev(EvalCx *ec, const Expr *e, int64_t *out) {
    if (e->n == 0) return ev_node(ec, e, out);
    MemoEnt *me = symi_memo_get(ec->memo, e);
    if (me) { *out = me->v.i; return 0; }
    if (ev_node(ec, e, out)) return -1;
    symi_memo_put(ec->memo, e)->v.i = *out;
    return 0;
}

static int ev_node(EvalCx *ec, const Expr *e, int64_t *out) {
    int64_t v[3] = {0}, acc, x;
    switch (e->kind) {
    case EX_INT: *out = e->ival; return 0;
    case EX_SYM:
        for (int i = 0; i < ec->nb; i++)
            if (ec->b[i].name && !strcmp(ec->b[i].name, e->name)) { *out = ec->b[i].value; return 0; }
        return mi_err(ec->ctx, NULL, 0, 0, "unbound symbol '%s'", e->name);
    case EX_ADD: case EX_MUL: case EX_MIN: case EX_MAX:
        if (ev(ec, e->args[0], &acc)) return -1;
        for (int i = 1; i < e->n; i++) {
            if (ev(ec, e->args[i], &x)) return -1;
            if (e->kind == EX_ADD) {
                if (__builtin_add_overflow(acc, x, &acc)) return eval_fail(ec, e, "integer overflow");
            } else if (e->kind == EX_MUL) {
                if (__builtin_mul_overflow(acc, x, &acc)) return eval_fail(ec, e, "integer overflow");
            } else if (e->kind == EX_MIN ? x < acc : x > acc) {
                acc = x;
            }
        }
        *out = acc;
        return 0;
    default: break;
    }
    for (int i = 0; i < e->n && i < 3; i++)
        if (ev(ec, e->args[i], &v[i])) return -1;
    switch (e->kind) {
    case EX_FLOORDIV: case EX_CEILDIV: case EX_MOD:
        if (v[1] == 0) return eval_fail(ec, e, "division by zero");
        if (v[1] == -1 && v[0] == INT64_MIN && e->kind != EX_MOD) return eval_fail(ec, e, "integer overflow");
        *out = e->kind == EX_FLOORDIV ? symi_py_floordiv(NULL, v[0], v[1])
             : e->kind == EX_CEILDIV ? symi_py_ceildiv(NULL, v[0], v[1]) : symi_py_mod(v[0], v[1]);
        return 0;
    case EX_MODIDX:
        if (v[1] == 0 || v[2] == 0) return eval_fail(ec, e, "division by zero");
        if (v[1] == -1 && v[0] == INT64_MIN) return eval_fail(ec, e, "integer overflow");
        *out = symi_py_mod(symi_py_floordiv(NULL, v[0], v[1]), v[2]);
        return 0;
    default: break;
    }
    return mi_err(ec->ctx, NULL, 0, 0, "cannot evaluate expression kind %d", (int)e->kind);
}

int sym_eval(MiCtx *ctx, const Expr *e, const SymBinding *b, int nb, int64_t *out) {
    Memo m;
    symi_memo_init(&m);
    EvalCx ec = {ctx, b, nb, &m};
    int64_t v;
    int rc = ev(&ec, e, &v);
    symi_memo_free(&m);
    if (rc) return -1;
    *out = v;
    return 0;
}
