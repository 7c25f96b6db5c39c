/* symfloat.h — symbolic floats (SymFloat) and mixed expressions as PyTorch prints them in FX
 * annotations: "Sym(IntTrueDiv(8*s27*s77, 8))", "Sym((IntTrueDiv(8*s0, 8)) - 1.0)",
 * "Sym(FloatTrueDiv(1.0, IntTrueDiv(s0, 8)))", "Sym(0.100000000000000)".
 *
 * Graphs traced with dynamic shapes hold Python floats computed from sizes (the unbiased
 * variance factor n / (n - 1) of batch norm's running_var, 1 / numel of a mean's backward).
 * Their annotations use the functions of torch/utils/_sympy/functions.py, which our integer
 * layer (sym.h) has no place for. Like a SymBool (symbool.h), a node keeps the text inside
 * "Sym(...)" verbatim (Node.symfloat), so printing is byte-identical; this module checks that
 * text and evaluates it under size bindings, with the semantics of functions.py:
 *   IntTrueDiv(a, b)   float(a) / float(b) of ints     FloatTrueDiv(a, b)  a / b of floats
 *   ToFloat(a)         float(a)                        TruncToFloat(a)     float(trunc(a))
 *   TruncToInt(a)      int(trunc(a))                   RoundToInt(a)       round(a) (half to even)
 *   RoundDecimal(a, n) round(a, n)                     FloorToInt / CeilToInt (a)
 *   PowByNatural(a, b) a ** b of ints, b >= 0          FloatPow(a, b)      a ** b of floats
 *   OpaqueUnaryFn_<f>(a)  math.<f>(a): sqrt exp log log2 cos sin tan cosh sinh tanh asin acos atan
 *   Identity(a), FloorDiv, CleanDiv, CeilDiv, ModularIndexing, Mod, PythonMod, Min, Max,
 *   LShift, RShift, BitwiseFn_bitwise_and / _or / _xor
 * with + - * / ** and parentheses (sympy's str printing), int and float literals. */
#ifndef SYMFLOAT_H
#define SYMFLOAT_H

#include "base/sym.h"

/* A value of such an expression: an int (Python int) or a float (Python float). */
typedef struct { bool is_int; int64_t i; double f; } SymNum;

/* Check the text (the inside of "Sym(...)") without bindings: 0, or -1 with a ctx error whose
 * col is the offset + 1 of the fault. *end (if non-NULL) receives the first unconsumed char,
 * else the whole text must be consumed. */
int symfloat_check(MiCtx *ctx, const char *text, const char **end);
/* Evaluate under bindings: 0 and *out, or -1 with a ctx error (unbound symbol, division by
 * zero, bad syntax). */
int symfloat_eval(MiCtx *ctx, const char *text, const SymBinding *b, int nb, SymNum *out);
/* Build the expression's value with the caller's pieces (the lowering: Inductor prints it into
 * the kernel, CppPrinter's static_cast<double>(a) / static_cast<double>(b) for IntTrueDiv):
 * integer parts become sym.h expressions in s, turned into floats by from_int (ops.index_expr
 * in float64), float literals by fconst, and + - * / of floats by fbin (op one of "+-* /").
 * Handles literals, symbols, + - * /, IntTrueDiv, FloatTrueDiv, ToFloat, Identity and the
 * integer functions; anything else fails naming the function. NULL with a ctx error. */
typedef struct {
    void *ud;
    const void *(*from_int)(void *ud, Expr *e);
    const void *(*fconst)(void *ud, double v);
    const void *(*fbin)(void *ud, char op, const void *a, const void *b);
} SymFloatBuilder;
const void *symfloat_build(MiCtx *ctx, SymCtx *s, const char *text, const SymFloatBuilder *b);

/* The text (sympy's str of the expression) as Inductor prints it in its post-grad graph:
 * print_readable(fast_sympy_print=True), torch/_inductor/utils.py sympy_str of the same
 * expression: "(IntTrueDiv(8*s0, 8)) - 1.0" -> "-1.00000000000000 + IntTrueDiv(8*s0, 8)"
 * (symfloat_str.c). Appended to sb; false (sb untouched) when the text does not parse. */
bool symfloat_fast_str(const char *text, StrBuf *sb);

/* Does the text need this module (it is no integer expression sym_parse accepts, but a
 * float literal or one of the float functions above occurs in it)? */
bool symfloat_looks_float(const char *text);

#endif
