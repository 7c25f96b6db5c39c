/* symbool.h — symbolic booleans (SymBool) as PyTorch prints them in FX annotations.
 *
 * Graphs compiled with dynamic shapes carry conditions on sizes: "Sym(s0 >= 2)",
 * "Sym(Eq(s0, s1))", "Sym(Ne(u0, 1))", "Sym((s0 >= 2) & (s1 < 8))", "Sym(~(u0 > 4))", the
 * inputs of aten._assert_scalar. A node keeps its annotation text verbatim (Node.symbool, the
 * part inside "Sym(...)", so printing is byte-identical); this module parses that text into a
 * small tree whose relation sides are our symbolic integer expressions (sym.h), and evaluates
 * it or turns it into the "LHS OP RHS" size guards the C wrapper checks.
 *
 * Grammar (sympy's str printing, plus the function forms):
 *   or   := and ('|' and)*          and := not ('&' not)*          not := '~' not | prim
 *   prim := '(' or ')' | True | False | Eq(int, int) | Ne(int, int) | And(or, ...) |
 *           Or(or, ...) | Not(or) | int REL int        REL := == != >= <= > <
 * where int is sym_parse's integer expression ("s0", "2*s1 + 1", "Max(1, s0)"). */
#ifndef SYMBOOL_H
#define SYMBOOL_H

#include "base/sym.h"

typedef enum { SB_TRUE, SB_FALSE, SB_EQ, SB_NE, SB_LT, SB_LE, SB_GT, SB_GE, SB_AND, SB_OR, SB_NOT } SymBoolKind;

typedef struct SymBool SymBool;
struct SymBool {
    SymBoolKind kind;
    Expr *lhs, *rhs;       /* relations SB_EQ..SB_GE */
    int n;                 /* SB_AND / SB_OR: n >= 2 operands; SB_NOT: 1 */
    SymBool **args;
};

/* Parse text (the inside of "Sym(...)"); *end (if non-NULL) receives the first unconsumed
 * char, else the whole text must be consumed. NULL with a ctx error (col = offset+1). */
SymBool *symbool_parse(MiCtx *ctx, const char *text, const char **end);
void symbool_free(SymBool *b);
/* Does the text inside "Sym(" start a condition rather than an integer expression? */
bool symbool_looks_bool(MiCtx *ctx, const char *text);
/* Evaluate under bindings: 0 and *out, or -1 with a ctx error (unbound symbol, ...). */
int symbool_eval(MiCtx *ctx, const SymBool *b, const SymBinding *bind, int nb, bool *out);
/* Parse and evaluate in one go. */
int symbool_eval_text(MiCtx *ctx, const char *text, const SymBinding *bind, int nb, bool *out);
/* The condition as a conjunction of relations "LHS OP RHS" (sym_str sides, OP one of
 * == != >= <= > <), appended to sb one per line; negations are pushed into the relations.
 * Returns the number of relations, or -1 when the condition is no such conjunction (Or). */
int symbool_guards(const SymBool *b, StrBuf *sb);

#endif
