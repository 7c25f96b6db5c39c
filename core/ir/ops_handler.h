/* ops_handler.h — the `ops` vtable that loop bodies are written against (define-by-run).
 *
 * A loop body (an inner function of a Pointwise/Reduction, or a recorded LoopBody) never
 * computes anything itself: it calls ops->load, ops->add, ops->store, ... on whatever handler it
 * is given. Running the same body against different handlers gives different products:
 *   - the recorder (core/ir/ir.c)        -> a LoopBody (SSA list of ops + index expressions)
 *   - the printer  (core/ir/ir_print.c)  -> ir_pre_fusion.txt-style text
 *   - the deps collector (core/ir/ir_deps.c) -> MemoryDep reads/writes for the scheduler
 *   - the C emitter (core/codegen/codegen_c.c) -> C statements
 *   - the interpreter (core/ir/ir_interp.c) -> values
 * Values are opaque handles (IrVal) that only the handler that returned them understands. */
#ifndef OPS_HANDLER_H
#define OPS_HANDLER_H

#include "base/sym.h"
#include "base/dtype.h"

typedef int IrVal;                 /* handler-defined handle; -1 = no value */
typedef struct Buffer Buffer;

/* The math ops. Arity is given by ir_math_arity(). Names are Inductor's ops.* names. */
typedef enum {
    /* unary */
    IOP_NEG, IOP_EXP, IOP_LOG, IOP_SQRT, IOP_RSQRT, IOP_TANH, IOP_SIGMOID, IOP_RELU, IOP_ERF,
    IOP_SIN, IOP_COS, IOP_ABS, IOP_RECIPROCAL, IOP_EXPM1, IOP_LOG1P, IOP_FLOOR, IOP_CEIL,
    IOP_LOGICAL_NOT, IOP_SIGN, IOP_TAN, IOP_ROUND, IOP_ASIN, IOP_ACOS, IOP_LGAMMA,
    IOP_ATAN, IOP_SINH, IOP_COSH, IOP_ASINH, IOP_ACOSH, IOP_ATANH, IOP_EXP2, IOP_LOG2, IOP_LOG10,
    IOP_ERFC, IOP_TRUNC, IOP_SIGNBIT, IOP_BITWISE_NOT,
    /* the two results of ops.frexp(x) (std::frexp): the mantissa in [0.5, 1) and the exponent
     * (in x's float dtype, exact); 0, inf and NaN give (x, 0) */
    IOP_FREXP_MANTISSA, IOP_FREXP_EXPONENT,
    /* the special functions of Inductor's pointwise_overrides_data (codegen/common.py) and
     * erfinv: C kernels call codegen/special_src.c's functions, CUDA ones libdevice's */
    IOP_ERFINV, IOP_I0, IOP_I0E, IOP_I1, IOP_I1E, IOP_DIGAMMA, IOP_ERFCX, IOP_NDTRI, IOP_LOG_NDTR,
    IOP_BESSEL_J0, IOP_BESSEL_J1, IOP_BESSEL_Y0, IOP_BESSEL_Y1, IOP_MODIFIED_BESSEL_I0, IOP_MODIFIED_BESSEL_I1,
    IOP_SPHERICAL_BESSEL_J0,
    /* binary */
    IOP_ADD, IOP_SUB, IOP_MUL, IOP_TRUEDIV, IOP_POW, IOP_MAXIMUM, IOP_MINIMUM,
    IOP_EQ, IOP_NE, IOP_LT, IOP_LE, IOP_GT, IOP_GE, IOP_LOGICAL_AND, IOP_LOGICAL_OR,
    IOP_FLOORDIV, IOP_FMOD, IOP_ATAN2, IOP_COPYSIGN, IOP_HYPOT, IOP_NEXTAFTER, IOP_BITWISE_AND,
    IOP_BITWISE_OR, IOP_BITWISE_XOR, IOP_FMAX, IOP_FMIN, IOP_TRUNCDIV,
    IOP_BITWISE_LEFT_SHIFT, IOP_BITWISE_RIGHT_SHIFT,   /* ATen's: out-of-range counts give 0 / the sign */
    IOP_POLYGAMMA, IOP_ZETA,   /* polygamma(n, x), Hurwitz zeta(x, q) */
    IOP_RAND, IOP_RANDN,   /* ops.rand / ops.randn(seed, offset): Philox-4x32-10, float32 */
    IOP_RANDINT64,         /* ops.randint64(seed, offset, low, high): int64 in [low, high), 4 arguments */
    /* ternary */
    IOP_WHERE,
    IOP_FMA,   /* fma(a, b, c) = a * b + c, rounded once (prims.fma) */
    IOP_COUNT
} IrMathOp;

const char *ir_math_name(IrMathOp op);     /* "add", "truediv", "where" */
int ir_math_arity(IrMathOp op);
bool ir_math_is_compare(IrMathOp op);      /* result is bool */

typedef enum {
    RED_SUM, RED_PROD, RED_MAX, RED_MIN, RED_ARGMAX, RED_ARGMIN, RED_WELFORD,
    /* welford_combine: Welford triples (mean, m2, weight) merged (Chan et al.), the second
     * stage of a split Welford (ir.py WelfordReduction.create_multilayer) */
    RED_WELFORD_COMBINE,
    RED_COUNT
} IrReduceType;
const char *ir_reduce_name(IrReduceType t);   /* "sum", "welford_reduce", ... */
/* the values a reduction of type t takes: 3 for welford_combine (mean, m2, weight), else 1 */
static inline int ir_reduce_arity(IrReduceType t) { return t == RED_WELFORD_COMBINE ? 3 : 1; }
/* a reduction whose result is a Welford triple (read with getitem 0 mean, 1 m2, 2 weight) */
static inline bool ir_reduce_is_welford(IrReduceType t) { return t == RED_WELFORD || t == RED_WELFORD_COMBINE; }

/* The combine functions of Inductor's scan lowerings (lowering.py: cumsum's ops.add, cumprod's
 * ops.mul, logcumsumexp's log_add_exp_helper, cummax / cummin's argmax / argmin combine with
 * arg_break_ties_left=False over (value, index)) and ir.Sort's ops.sort (key, index). */
typedef enum { SCAN_SUM, SCAN_PROD, SCAN_LOGADDEXP, SCAN_MAX, SCAN_MIN, SCAN_SORT } IrScanOp;
const char *ir_scan_name(IrScanOp op);        /* "add", "mul", "logaddexp", "max", "min", "sort" */
enum { SCAN_STABLE = 1, SCAN_DESCENDING = 2 };  /* ops.sort's flags */

/* The boundaries of ops.bucketize (Inductor's (name, size[-1], numel, stride[-1]) tuple and the
 * op's other constants): runs of `len` sorted elements of buffer `buf`, `stride` apart; the
 * result (of dtype index_dtype) counts the elements < v (right: <= v), as ATen's
 * cus_lower_bound / cus_upper_bound (a NaN v counts them all). */
typedef struct IrBoundaries { Buffer *buf; Expr *len, *stride; DType index_dtype; bool right; } IrBoundaries;

typedef struct OpsHandler OpsHandler;
struct OpsHandler {
    void *self;
    /* index is over the body's loop variables; dt is the buffer's dtype */
    IrVal (*load)(OpsHandler *h, Buffer *buf, Expr *index);
    void (*store)(OpsHandler *h, Buffer *buf, Expr *index, IrVal v);
    IrVal (*constant)(OpsHandler *h, double v, DType dt);
    IrVal (*index_expr)(OpsHandler *h, Expr *e, DType dt);
    IrVal (*to_dtype)(OpsHandler *h, IrVal v, DType dt, DType src);
    /* args: ir_math_arity(op) values; dt: result dtype (bool for comparisons) */
    IrVal (*math)(OpsHandler *h, IrMathOp op, const IrVal *args, DType dt);
    /* v: ir_reduce_arity(rt) values (welford_combine: the mean, m2 and weight of a partial) */
    IrVal (*reduction)(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v);
    IrVal (*getitem)(OpsHandler *h, IrVal v, int k);           /* welford: 0 mean, 1 m2, 2 n */
    void (*store_reduction)(OpsHandler *h, Buffer *buf, Expr *index, IrVal v);
    /* Inductor's ops.indirect_indexing(x, size, check, wrap_neg): the integer value x (loaded
     * from an index tensor) becomes an index symbol that later load/store/index_expr indexes
     * use ("64*indirect0 + p1" for embedding). wrap_neg: a negative x counts from the end
     * (x + size); check: 0 <= x < size is asserted. `sym` is the symbol the recorded body
     * uses ("indirect0"; NULL while recording from an inner function: the recorder makes it).
     * Returns what stands for it in this handler's later indexes: the same symbol, or e.g. the
     * C variable holding the wrapped value ("tmp4"); loop_body_run substitutes it. */
    Expr *(*indirect_indexing)(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym);
    /* ops.store(name, index, value, mode="atomic_add"): buf[index] += v, safe when several
     * iterations hit one element (Inductor's Scatter with scatter_mode "atomic_add"). */
    void (*store_atomic_add)(OpsHandler *h, Buffer *buf, Expr *index, IrVal v);
    /* ops.scan(dtypes, combine_fn, values) / ops.sort(dtypes, values, stable, descending)
     * (Inductor's ir.Scan / ir.Sort bodies): the n values (1, or 2: a value and its index) of
     * this element, combined with those of the earlier elements along the body's scan var (its
     * one reduction var) / sorted along it; a tuple, read with getitem k. flags: SCAN_STABLE,
     * SCAN_DESCENDING (sort only). */
    IrVal (*scan)(OpsHandler *h, IrScanOp op, int flags, const DType *dtypes, const IrVal *vals, int n);
    /* ops.bucketize(v, boundaries, boundary_indices, indexing_dtype, right) (Inductor's, for
     * bucketize / searchsorted on a GPU): the insertion point of v in the run of b that starts
     * at element `offset` (an int64 value) of b->buf. */
    IrVal (*bucketize)(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal offset);
};

/* Short forms used by lowerings. */
static inline IrVal ops_unary(OpsHandler *h, IrMathOp op, IrVal a, DType dt) {
    IrVal v[1] = {a};
    return h->math(h, op, v, dt);
}
static inline IrVal ops_binary(OpsHandler *h, IrMathOp op, IrVal a, IrVal b, DType dt) {
    IrVal v[2] = {a, b};
    return h->math(h, op, v, dt);
}
static inline IrVal ops_add(OpsHandler *h, IrVal a, IrVal b, DType dt) { return ops_binary(h, IOP_ADD, a, b, dt); }
static inline IrVal ops_sub(OpsHandler *h, IrVal a, IrVal b, DType dt) { return ops_binary(h, IOP_SUB, a, b, dt); }
static inline IrVal ops_mul(OpsHandler *h, IrVal a, IrVal b, DType dt) { return ops_binary(h, IOP_MUL, a, b, dt); }
static inline IrVal ops_div(OpsHandler *h, IrVal a, IrVal b, DType dt) { return ops_binary(h, IOP_TRUEDIV, a, b, dt); }
static inline Expr *ops_indirect_indexing(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg) {
    return h->indirect_indexing(h, x, size, check, wrap_neg, NULL);
}
static inline IrVal ops_where(OpsHandler *h, IrVal c, IrVal a, IrVal b, DType dt) {
    IrVal v[3] = {c, a, b};
    return h->math(h, IOP_WHERE, v, dt);
}

#endif
