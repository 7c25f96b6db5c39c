/* sym.h — symbolic integer expressions (our small SymPy) for sizes, strides and indexing.
 *
 * Expressions are hash-consed in a SymCtx: building the same expression twice yields the same
 * pointer, so `a == b` is structural equality. Constructors canonicalize (constant folding,
 * flattening and sorting of sums/products, collecting like terms), so x+1+x becomes 2*x + 1.
 * sym_simplify() additionally uses known ranges of symbols (index variables have 0 <= i < n),
 * e.g. dropping ModularIndexing that cannot wrap and FloorDiv that is always 0.
 *
 * Printing: sym_str() prints as PyTorch prints sizes in FX annotations ("s77", "2*s0",
 * "s0 + 1"); sym_c() prints as C code, the one index printer of both code generators
 * (helpers for FloorDiv/ModularIndexing from sym_c_prelude()). */
#ifndef SYM_H
#define SYM_H

#include "base/mi.h"

typedef enum {
    EX_INT,       /* ival */
    EX_SYM,       /* name: "s0", "s77", "x0", "r0_0", "u0" */
    EX_ADD,       /* args[0..n): sum, n >= 2; constant term (if any) last */
    EX_MUL,       /* args[0..n): product, n >= 2; constant coefficient (if any) first */
    EX_FLOORDIV,  /* args[0] // args[1] (python floor division) */
    EX_MODIDX,    /* ModularIndexing(args[0], args[1], args[2]) = (args[0] // args[1]) % args[2] */
    EX_MOD,       /* python modulo args[0] % args[1] */
    EX_MIN,       /* min(args...) */
    EX_MAX,       /* max(args...) */
    EX_CEILDIV,   /* ceil(args[0] / args[1]) */
} ExprKind;

typedef struct Expr Expr;
struct Expr {
    ExprKind kind;
    int n;               /* number of args */
    int64_t ival;        /* EX_INT */
    const char *name;    /* EX_SYM (interned) */
    Expr **args;
    uint64_t hash;
};

SymCtx *sym_ctx_new(void);
/* The highest degree products of sums are multiplied out to (MiLimits.sym_degree, default 32):
 * past it a product stays unexpanded (the same value), and the parser refuses x**k with k
 * above it. Bounds the work of x**240-style inputs. */
void sym_set_max_degree(SymCtx *s, int d);
int sym_max_degree(const SymCtx *s);
void sym_ctx_free(SymCtx *s);

Expr *sym_int(SymCtx *s, int64_t v);
Expr *sym_symbol(SymCtx *s, const char *name);
Expr *sym_add(SymCtx *s, Expr *a, Expr *b);
Expr *sym_sub(SymCtx *s, Expr *a, Expr *b);
Expr *sym_neg(SymCtx *s, Expr *a);
Expr *sym_mul(SymCtx *s, Expr *a, Expr *b);
Expr *sym_floordiv(SymCtx *s, Expr *a, Expr *b);
Expr *sym_ceildiv(SymCtx *s, Expr *a, Expr *b);
Expr *sym_mod(SymCtx *s, Expr *a, Expr *b);
Expr *sym_modidx(SymCtx *s, Expr *x, Expr *div, Expr *mod);
Expr *sym_min(SymCtx *s, Expr *a, Expr *b);
Expr *sym_max(SymCtx *s, Expr *a, Expr *b);

bool sym_is_int(const Expr *e, int64_t *v);   /* true when e is a constant; *v set if v */
bool sym_has_symbols(const Expr *e);

/* Symbol value bindings and ranges. */
typedef struct SymBinding { const char *name; int64_t value; } SymBinding;
typedef struct SymRange { const char *name; int64_t lo, hi; } SymRange;   /* lo <= sym <= hi */

/* Evaluate with the given bindings; -1 (and ctx error) if a symbol is unbound or a division
 * by zero happens. */
int sym_eval(MiCtx *ctx, const Expr *e, const SymBinding *b, int nb, int64_t *out);
/* Replace symbols by expressions. */
Expr *sym_subst(SymCtx *s, Expr *e, const char **names, Expr **repl, int n);
/* Simplify under ranges (NULL/0 = none known beyond sizes being >= 1 for s* symbols). */
Expr *sym_simplify(SymCtx *s, Expr *e, const SymRange *r, int nr);
/* Collect the distinct symbol names in e (interned pointers); returns count (<= max). */
int sym_free_symbols(const Expr *e, const char **out, int max);

/* Text. Both return buf. */
const char *sym_str(const Expr *e, char *buf, size_t n);
const char *sym_c(const Expr *e, char *buf, size_t n);
void sym_str_sb(const Expr *e, StrBuf *sb);
void sym_c_sb(const Expr *e, StrBuf *sb);

/* Parse the text PyTorch prints for sizes: integers, symbols, + - * //, parentheses,
 * FloorDiv(a, b), ModularIndexing(a, b, c), Min(..), Max(..), CeilToInt(IntTrueDiv(..)) is
 * not needed. *end (if non-NULL) receives the first unconsumed char. Returns NULL with an
 * error (col = offset+1) on bad input. */
Expr *sym_parse(MiCtx *ctx, const char *text, const char **end);

/* ---- additions (helper "sym") ---- */

/* Interval bound of e given symbol ranges (symbols not listed: s<N>/ks<N> are >= 1, others
 * unbounded).  *lo = INT64_MIN / *hi = INT64_MAX mean unbounded on that side.  Returns true
 * when both sides are finite.  Sound: every value e takes lies in [*lo, *hi]. */
bool sym_bound(const Expr *e, const SymRange *r, int nr, int64_t *lo, int64_t *hi);

/* Constant folding in the constructors wraps on int64 overflow and sets a sticky flag;
 * this returns it and clears it (sym_parse reports it as an error). */
bool sym_take_overflow(SymCtx *s);

/* sym_c / sym_c_sb print C as the code generators index with it: int64_t arithmetic, LL
 * literals, FloorDiv/CeilDiv/Mod/ModularIndexing/Min/Max through the helpers mi_floordiv,
 * mi_ceildiv, mi_mod, mi_modidx, mi_min, mi_max (python semantics). sym_c_prelude() returns
 * their definitions (static inline functions; include <stdint.h> first). */
const char *sym_c_prelude(void);

/* Inductor's own index simplification (core/base/sym_inductor.c), as weak as Inductor's:
 * sym_join_dimensions is sizevars.join_dimensions (c*ModularIndexing(x, d, m) +
 * c*m*FloorDiv(x, d*m) -> c*FloorDiv(x, d), symbolic d and m too); sym_simplify_inductor is
 * SizeVarAllocator._simplify_with_ranges with vars[i] in [0, sizes[i]). Used where what
 * Inductor can prove decides what it generates (convert_to_reinterpret_view). */
Expr *sym_join_dimensions(SymCtx *s, Expr *e);
Expr *sym_simplify_inductor(SymCtx *s, Expr *e, const char **vars, Expr **sizes, int n);

/* Coefficient of symbol var in e when e is linear in var (e = coeff*var + rest, with var
 * not in coeff or rest): sym_coeff(x0 + 64*x1, "x1") == 64, sym_coeff(s0*x0 + 1, "x0") ==
 * s0, 0 when var does not occur.  NULL when var occurs nonlinearly (x0**2, x0//4, Min). */
Expr *sym_coeff(SymCtx *s, Expr *e, const char *var);

#endif
