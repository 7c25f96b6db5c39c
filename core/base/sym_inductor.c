/* sym_inductor.c — Inductor's own index simplification, as weak as Inductor's: the rules of
 * torch/_inductor/sizevars.py (join_dimensions, SizeVarAllocator._simplify_with_ranges) on our
 * expressions, for the places where what Inductor can prove decides what it generates.
 *
 * How it fits: sym_simplify (sym.c) is our strong simplifier (interval bounds on every node);
 * code generation uses it. But ExternKernel.convert_to_reinterpret_view turns a chain of views
 * into a strided ReinterpretView only when the composed index, simplified by
 * _simplify_with_ranges, is literally linear in the index variables; otherwise the view is copied
 * by one more kernel. ir_probe_strided (core/ir/ir.c) asks this file, so that a copy is made
 * exactly where Inductor makes one. Example: q = select(clone, 0, 0).view(8, 8, 8) viewed as
 * [2, 4, 8, 8] composes to 64*ModularIndexing(..., 64, 8) + 32*ModularIndexing(32*u0 + 8*u1 +
 * u3, 32, 2) + ...; the terms left after ModularIndexing's own evaluation have different bases,
 * join_dimensions cannot merge them, and FloorDiv(8*u1 + u3, 32) stays (Inductor has no interval
 * rule for FloorDiv): not linear, so multi-head attention copies q, k and v before SDPA.
 *
 * The rules (each as sizevars.py writes it):
 *   join_dimensions: scale*ModularIndexing(b, d, m1) + scale*m1*ModularIndexing(b, d*m1, m2)
 *     -> scale*ModularIndexing(b, d, m1*m2); scale*ModularIndexing(b, d, m1) +
 *     scale*m1*FloorDiv(b, d*m1) -> scale*FloorDiv(b, d); symbolic d, m allowed;
 *   remove_zero_terms(base, divisor): a variable v appearing as a bare term (base = v + rest)
 *     is dropped when divisor divides rest and v < divisor is known;
 *   ModularIndexing(base, d, m) -> FloorDiv(base, d) when 0 <= base < m*d is known;
 *   FloorDiv(base, d) -> FloorDiv(remove_zero_terms(base, d), d);
 *   repeated until nothing changes.
 * "Known" is ShapeEnv._maybe_evaluate_static with the loop axioms: interval bounds (a variable
 * over a symbolic size is [0, oo), a size symbol [2, oo)) or the axiom v < size itself. */
#include "base/sym_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- FloorDiv / ModularIndexing evaluation with a symbolic divisor ---- */

/* term t = c * f[0] * ... * f[n-1] (no integer among the f); n factors, at most cap */
static int factors(Expr *t, int64_t *c, Expr **f, int cap) {
    *c = 1;
    if (t->kind == EX_INT) { *c = t->ival; return 0; }
    if (t->kind != EX_MUL) { f[0] = t; return 1; }
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->args[i]->kind == EX_INT) *c *= t->args[i]->ival;
        else if (n < cap) f[n++] = t->args[i];
    }
    return n;
}

static uint64_t gcd64(uint64_t a, uint64_t b) { while (b) { uint64_t t = a % b; a = b; b = t; } return a; }
static uint64_t abs64(int64_t v) { return v < 0 ? -(uint64_t)v : (uint64_t)v; }

#define MAXF 32

/* Inductor's simple_floordiv_gcd(p, q) for a product q: the gcd of the integer coefficients of
 * p's terms and q's, times every factor of q found in each term of p (counted with
 * multiplicity). NULL when that is 1. simple_floordiv_gcd(48*x*s27 + 48*s27, 48*s27) = 48*s27. */
Expr *symi_common_factor(SymCtx *s, Expr *p, Expr *q) {
    if (q->kind == EX_ADD) return NULL;
    Expr *fq[MAXF];
    int64_t cq;
    int nq = factors(q, &cq, fq, MAXF);
    uint64_t g = abs64(cq);
    int nt = p->kind == EX_ADD ? p->n : 1;
    bool keep[MAXF];
    for (int j = 0; j < nq; j++) keep[j] = true;
    for (int i = 0; i < nt; i++) {
        Expr *t = p->kind == EX_ADD ? p->args[i] : p, *ft[MAXF];
        int64_t ct;
        int n = factors(t, &ct, ft, MAXF);
        g = gcd64(g, abs64(ct));
        bool used[MAXF] = {0};
        for (int j = 0; j < nq; j++) {
            if (!keep[j]) continue;
            int at = -1;
            for (int k = 0; k < n && at < 0; k++) if (!used[k] && ft[k] == fq[j]) at = k;
            if (at < 0) keep[j] = false;
            else used[at] = true;
        }
    }
    if (g == 0 || g > INT64_MAX) return NULL;
    Expr *r = sym_int(s, (int64_t)g);
    for (int j = 0; j < nq; j++) if (keep[j]) r = sym_mul(s, r, fq[j]);
    int64_t one;
    return sym_is_int(r, &one) && one == 1 ? NULL : r;
}

/* p / g, g dividing every term of p (symi_common_factor's answer) */
Expr *symi_exact_div(SymCtx *s, Expr *p, Expr *g) {
    Expr *fg[MAXF];
    int64_t cg;
    int ng = factors(g, &cg, fg, MAXF);
    int nt = p->kind == EX_ADD ? p->n : 1;
    Expr *r = sym_int(s, 0);
    for (int i = 0; i < nt; i++) {
        Expr *t = p->kind == EX_ADD ? p->args[i] : p, *ft[MAXF];
        int64_t ct;
        int n = factors(t, &ct, ft, MAXF);
        bool used[MAXF] = {0};
        for (int j = 0; j < ng; j++)
            for (int k = 0; k < n; k++) if (!used[k] && ft[k] == fg[j]) { used[k] = true; break; }
        Expr *q = sym_int(s, cg ? ct / cg : ct);
        for (int k = 0; k < n; k++) if (!used[k]) q = sym_mul(s, q, ft[k]);
        r = sym_add(s, r, q);
    }
    return r;
}

typedef struct {
    SymCtx *s;
    const char **vars;
    Expr **sizes;
    int n;
    SymRange *r;       /* numeric ranges of the vars whose size is a number */
    int nr;
} Ind;

/* Rebuild node e over new args a (the constructors evaluate, as sympy's func(*args) does). */
static Expr *rebuild_with(SymCtx *s, const Expr *e, Expr **a) {
    Expr *r;
    switch (e->kind) {
    case EX_ADD: r = a[0]; for (int i = 1; i < e->n; i++) r = sym_add(s, r, a[i]); return r;
    case EX_MUL: r = a[0]; for (int i = 1; i < e->n; i++) r = sym_mul(s, r, a[i]); return r;
    case EX_MIN: r = a[0]; for (int i = 1; i < e->n; i++) r = sym_min(s, r, a[i]); return r;
    case EX_MAX: r = a[0]; for (int i = 1; i < e->n; i++) r = sym_max(s, r, a[i]); return r;
    case EX_FLOORDIV: return sym_floordiv(s, a[0], a[1]);
    case EX_CEILDIV: return sym_ceildiv(s, a[0], a[1]);
    case EX_MOD: return sym_mod(s, a[0], a[1]);
    case EX_MODIDX: return sym_modidx(s, a[0], a[1], a[2]);
    default: return (Expr *)e;
    }
}

/* term = scale * f with f its k-th factor of kind `kind` (term itself when it is such a
 * node): the scale, or NULL when there is no k-th such factor. */
static Expr *factor_of(SymCtx *s, Expr *term, ExprKind kind, int k, Expr **f) {
    if (term->kind == kind) { if (k) return NULL; *f = term; return sym_int(s, 1); }
    if (term->kind != EX_MUL) return NULL;
    for (int i = 0, seen = 0; i < term->n; i++) {
        if (term->args[i]->kind != kind || seen++ != k) continue;
        Expr *scale = sym_int(s, 1);
        for (int j = 0; j < term->n; j++)
            if (j != i) scale = sym_mul(s, scale, term->args[j]);
        *f = term->args[i];
        return scale;
    }
    return NULL;
}

/* One join_dimensions step on sum e (pass 0: the ModularIndexing pair, pass 1: the FloorDiv
 * pair); NULL when no pair matches. */
static Expr *join_once(SymCtx *s, Expr *e, int pass) {
    for (int i = 0; i < e->n; i++) {
        Expr *m1, *scale;
        for (int k1 = 0; (scale = factor_of(s, e->args[i], EX_MODIDX, k1, &m1)); k1++) {
            Expr *base = m1->args[0], *div = m1->args[1], *mod1 = m1->args[2];
            Expr *want_scale = sym_mul(s, scale, mod1), *want_div = sym_mul(s, div, mod1);
            for (int j = 0; j < e->n; j++) {
                if (j == i) continue;
                Expr *m2, *sc2;
                ExprKind kind = pass ? EX_FLOORDIV : EX_MODIDX;
                for (int k2 = 0; (sc2 = factor_of(s, e->args[j], kind, k2, &m2)); k2++) {
                    if (sc2 != want_scale || m2->args[0] != base || m2->args[1] != want_div) continue;
                    Expr *joined = pass ? sym_floordiv(s, base, div) : sym_modidx(s, base, div, sym_mul(s, mod1, m2->args[2]));
                    Expr *r = sym_mul(s, scale, joined);
                    for (int t = 0; t < e->n; t++)
                        if (t != i && t != j) r = sym_add(s, r, e->args[t]);
                    return r;
                }
            }
        }
    }
    return NULL;
}

Expr *sym_join_dimensions(SymCtx *s, Expr *e) {
    for (int guard = 0; guard < 64 && e->kind == EX_ADD; guard++) {
        Expr *r = join_once(s, e, 0);
        if (!r) r = join_once(s, e, 1);
        if (!r) break;
        e = r;
    }
    return e;
}

/* ---- what the loop axioms make known ---- */

static int var_index(const Ind *c, const Expr *e) {
    if (e->kind != EX_SYM) return -1;
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->vars[i], e->name)) return i;
    return -1;
}

static bool known_nonneg(const Ind *c, Expr *e) {
    int64_t lo;
    sym_bound(e, c->r, c->nr, &lo, NULL);
    return lo >= 0;
}

/* a < b: the axiom v < size(v) itself, or interval bounds of b - a at least 1 */
static bool known_lt(const Ind *c, Expr *a, Expr *b) {
    int v = var_index(c, a);
    if (v >= 0 && c->sizes[v] == b) return true;
    int64_t lo;
    sym_bound(sym_sub(c->s, b, a), c->r, c->nr, &lo, NULL);
    return lo >= 1;
}

/* sympy.gcd(rest, d) == d: d divides every term of rest (0 included). d is a number or a
 * monomial; a symbolic divisor that is a sum divides only 0. */
static bool divides(SymCtx *s, Expr *d, Expr *rest) {
    int64_t v;
    if (sym_is_int(rest, &v) && v == 0) return true;
    int nt = rest->kind == EX_ADD ? rest->n : 1;
    for (int i = 0; i < nt; i++) {
        Expr *t = rest->kind == EX_ADD ? rest->args[i] : rest;
        int64_t dv;
        if (sym_is_int(d, &dv)) {
            int64_t c = 1;
            if (sym_is_int(t, &c)) { if (dv == 0 || c % dv) return false; continue; }
            if (t->kind == EX_MUL && sym_is_int(t->args[0], &c)) { if (dv == 0 || c % dv) return false; continue; }
            if (dv != 1 && dv != -1) return false;
            continue;
        }
        if (d->kind == EX_ADD) return false;
        /* t / d exact: t's integer coefficient divisible by d's, d's factors among t's */
        Expr *q = sym_floordiv(s, t, d);
        if (sym_mul(s, q, d) != t) return false;
    }
    return true;
}

static Expr *remove_zero_terms(const Ind *c, Expr *base, Expr *divisor) {
    if (!known_nonneg(c, base)) return base;
    for (int v = 0; v < c->n; v++) {
        Expr *var = sym_symbol(c->s, c->vars[v]);
        Expr *rest;
        if (base == var) rest = sym_int(c->s, 0);
        else if (base->kind == EX_ADD) {
            int at = -1;
            for (int i = 0; i < base->n; i++)
                if (base->args[i] == var) at = i;
            if (at < 0) continue;
            rest = sym_sub(c->s, base, var);
            if (sym_coeff(c->s, rest, c->vars[v]) != sym_int(c->s, 0)) continue;   /* v not in rest */
        } else continue;
        if (divides(c->s, divisor, rest) && known_lt(c, var, divisor)) base = rest;
    }
    return base;
}

/* sympy's replace: bottom up, the matching nodes of `kind` rewritten */
static Expr *visit(const Ind *c, Expr *e, ExprKind kind) {
    if (e->n == 0) return e;
    Expr **a = mi_xmalloc(sizeof(Expr *) * (size_t)e->n);
    bool changed = false;
    for (int i = 0; i < e->n; i++) {
        a[i] = visit(c, e->args[i], kind);
        changed |= a[i] != e->args[i];
    }
    Expr *r = changed ? rebuild_with(c->s, e, a) : e;
    free(a);
    if (r->kind != kind) return r;
    if (kind == EX_MODIDX) {
        Expr *base = remove_zero_terms(c, r->args[0], r->args[1]);
        if (known_nonneg(c, base) && known_lt(c, base, sym_mul(c->s, r->args[2], r->args[1])))
            return sym_floordiv(c->s, base, r->args[1]);
        return sym_modidx(c->s, base, r->args[1], r->args[2]);
    }
    return sym_floordiv(c->s, remove_zero_terms(c, r->args[0], r->args[1]), r->args[1]);
}

Expr *sym_simplify_inductor(SymCtx *s, Expr *e, const char **vars, Expr **sizes, int n) {
    Ind c = {s, vars, sizes, n, mi_xcalloc((size_t)n + 1, sizeof(SymRange)), 0};
    for (int i = 0; i < n; i++) {
        int64_t v;
        /* a variable over a symbolic size: [0, oo), only its axiom bounds it */
        c.r[c.nr++] = (SymRange){vars[i], 0, sym_is_int(sizes[i], &v) ? (v > 0 ? v - 1 : 0) : INT64_MAX / 4};
    }
    for (int round = 0; round < 16; round++) {
        e = sym_join_dimensions(s, e);
        Expr *orig = e;
        e = visit(&c, e, EX_MODIDX);
        e = visit(&c, e, EX_FLOORDIV);
        if (e == orig) break;
    }
    free(c.r);
    return e;
}
