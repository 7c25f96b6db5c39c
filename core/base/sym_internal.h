/* sym_internal.h — internals shared by core/base/sym.c (construction, simplification,
 * ranges), sym_print.c (sympy and C text), sym_parse.c (the one parser of sympy text) and
 * symfloat.c (its SymFloat semantics). Nothing outside core/base/sym*.c includes this; the
 * public API is sym.h and symfloat.h. Names carry the symi_ prefix. */
#ifndef SYM_INTERNAL_H
#define SYM_INTERNAL_H

#include "base/sym.h"
#include "base/symfloat.h"

/* A growable vector of expressions (args being collected). */
typedef struct { Expr **v; int n, cap; } EVec;
void symi_ev_push(EVec *a, Expr *e);

/* Memo tables: expressions are DAGs (hash-consing shares subexpressions), so every walk that
 * may meet a node twice remembers what it computed per node. */
typedef __int128 I128;
typedef struct { I128 lo, hi; } Iv;
typedef struct { const Expr *k; union { Iv iv; Expr *e; int64_t i; } v; } MemoEnt;
typedef struct { MemoEnt *t; size_t cap, cnt; MemoEnt inl[16]; } Memo;
void symi_memo_init(Memo *m);
void symi_memo_free(Memo *m);
MemoEnt *symi_memo_get(Memo *m, const Expr *k);
MemoEnt *symi_memo_put(Memo *m, const Expr *k);   /* slot valid until the next put */

/* What interval arithmetic knows about the symbols of one sym_bound/sym_simplify call. */
typedef struct {
    const SymRange *r;
    int nr;
    bool no_defaults;  /* symbols without a range are unbounded (even s0) */
    Memo *bounds;      /* Expr -> Iv for this call */
    Memo *simplified;  /* Expr -> simp() result */
    Memo *refined;     /* Expr -> refine() result */
} RangeCx;
/* Interval bound of e under rc (memoized in rc->bounds). */
Iv symi_bound(const Expr *e, const RangeCx *rc);

/* Degree of e: factors of a product (x*x is 2), the largest term of a sum, 0 for a constant. */
int symi_degree(const Expr *e);
/* Min (k == EX_MIN) or Max of n args, flattened, folded and pruned. */
Expr *symi_minmax(SymCtx *s, ExprKind k, Expr *const *in, int n);
/* sympy prints a sum with its number first ("1 - x") when this holds. */
bool symi_add_number_first(const Expr *e);
/* Python's // and % and ceil division on int64 (overflow sets the sticky flag). */
int64_t symi_py_floordiv(SymCtx *s, int64_t a, int64_t b);
int64_t symi_py_ceildiv(SymCtx *s, int64_t a, int64_t b);
int64_t symi_py_mod(int64_t a, int64_t b);

/* sympy.gcd of p and a product q as Inductor's simple_floordiv_gcd finds it (integer gcd times
 * q's factors common to every term of p), NULL when 1; and p divided by such a factor
 * (core/base/sym_inductor.c). FloorDiv / ModularIndexing by a symbolic divisor use them. */
Expr *symi_common_factor(SymCtx *s, Expr *p, Expr *q);
Expr *symi_exact_div(SymCtx *s, Expr *p, Expr *g);

/* ---- the one parser of sympy expression text (sym_parse.c)
 *
 * PyTorch prints sizes ("2*s0 + 1", "(s0//2)") and SymInt / SymFloat values
 * ("IntTrueDiv(8*s0, 8) - 1.0", "PowByNatural(s0, 2)") with sympy's str printer and the
 * _sympystr of torch/utils/_sympy/functions.py. One grammar reads all of it; what a parse
 * builds is the semantics' (SymSem): sym_parse's hash-consed Exprs for sizes, symfloat.c's
 * numbers (check, eval) or caller-built kernel values (build). */

/* A value under some semantics: a number (v; unknown in a check without bindings), an integer
 * expression (ex) or a caller-built float (fn). Sizes use ex only. */
typedef struct { SymNum v; bool unknown; Expr *ex; const void *fn; } SymVal;

/* A function the grammar knows: arity, whether size expressions may use it, and the C
 * function of an OpaqueUnaryFn_<f> (math.<f>). */
typedef struct { const char *name; int min, max; bool size; double (*unary)(double); } SymFn;

typedef struct SymParser SymParser;
typedef struct {
    bool sizes;   /* size expressions: '/', float literals and float functions are refused */
    SymVal (*num)(SymParser *p, const char *at, SymNum lit);              /* a literal */
    SymVal (*name)(SymParser *p, const char *at, const char *name);       /* a symbol */
    /* a op b for op in "+-* /%" and 'F' (//), '^' (**), 'n' (-a; b unused) */
    SymVal (*op)(SymParser *p, const char *at, char op, SymVal a, SymVal b);
    SymVal (*call)(SymParser *p, const char *at, const SymFn *f, SymVal *a, int n);
} SymSem;

struct SymParser {
    MiCtx *ctx;
    const char *src, *p;
    const SymSem *sem;
    void *ud;           /* the semantics' state */
    int depth;
    bool failed;
    bool neg_literal;   /* the next literal is negated (term after a binary '-' with 2^63) */
    int only_mul;       /* depth at which that term may use '*' only (-(a//b) != (-a)//b); 0 none */
    const char *lhs;    /* in SymSem.op for '*', '/', '//', '%', '**': where the left operand's
                           text starts (for semantics that keep text, symfloat_str.c) */
};

/* Fail at `at` (the first failure wins): ctx error with col = offset + 1; sizes add "at
 * column N of size expression "TEXT"" to the reason. Returns an unknown value. */
SymVal symi_fail(SymParser *p, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Parse p->src under p->sem: 0 and *out, or -1 with the ctx error. *end (if non-NULL)
 * receives the first unconsumed char, else the whole text must be consumed. */
int symi_parse(SymParser *p, SymVal *out, const char **end);

#endif
