/* op_overrides.h — the one op -> C spelling shared by both code generators, as Inductor's
 * OpOverrides (torch/_inductor/codegen/common.py) is shared by CppOverrides and TritonOverrides.
 *
 * A loop body's math op (IrMathOp) becomes a C expression over the names of its operands. The
 * spelling is written once here (cg_math); a backend describes itself with a CgOverrides and
 * overrides only what differs in its dialect:
 *     C (core/codegen/codegen_kernel.c)        rsqrt `1.0f / sqrtf(x)`, maximum/minimum as a
 *                                              ternary after the NaN test
 *     CUDA (core/codegen/codegen_cuda_kernel.c) `rsqrtf(x)`, fmaxf/fminf, `true`/`false`,
 *                                              __half / __nv_bfloat16 storage computed in float
 * Also shared: literals (cg_constant), reduction identities (cg_red_init), casts (cg_to_dtype)
 * and the operand part of a torch.ops.higher_order.cond call (cg_emit_cond_call). Index
 * expressions print with sym_c_sb (core/base/sym_print.c), the one expression printer. */
#ifndef OP_OVERRIDES_H
#define OP_OVERRIDES_H

#include "scheduler/scheduler.h"

typedef struct CgOverrides CgOverrides;
struct CgOverrides {
    const char *backend;                   /* "C", "CUDA": named in messages */
    /* the type a buffer of this dtype is stored as; NULL when the backend has none */
    const char *(*storage_type)(DType t);
    /* the dtype values of this dtype are computed in (f16/bf16 -> f32 on CUDA); NULL: itself */
    DType (*compute_dtype)(DType t);
    const char *bool_true, *bool_false;    /* bool literals; NULL: printed as integers */
    /* the backend's own spelling of op over operands a (dtype at): true when written to out,
     * false to use the shared one */
    bool (*math)(StrBuf *out, IrMathOp op, DType at, const char *const *a);
    /* the backend's own cast of value x (of dtype src) to dt; false to use the shared one */
    bool (*to_dtype)(StrBuf *out, const char *x, DType dt, DType src);
};

/* The values an emitting handler has made (its IrVals): each one's C text (a temporary's name or
 * an expression such as "acc3[mi_l]"), dtype, and one int the backend keeps per value (the C
 * emitter: loop invariant; CUDA: the row-cache slot it was loaded through). */
#define CG_VAL_NAME 112
typedef struct CgVals { char (*names)[CG_VAL_NAME]; DType *dts; int *tag; int n, cap; } CgVals;
/* Append a value; returns its IrVal. */
IrVal cg_val_new(CgVals *v, const char *name, DType dt, int tag);
/* Its text ("0" for an unknown value), dtype (f32) and tag (0). */
const char *cg_val_name(const CgVals *v, IrVal x);
DType cg_val_dtype(const CgVals *v, IrVal x);
int cg_val_tag(const CgVals *v, IrVal x);
void cg_vals_free(CgVals *v);

/* The dtype values of dtype t are computed in under ov (t itself unless overridden). */
DType cg_compute_dtype(const CgOverrides *ov, DType t);
/* The C type of values of dtype t (its compute dtype's storage type); "float" when none. */
const char *cg_value_type(const CgOverrides *ov, DType t);

/* The C expression of op over operand names a[0..arity) whose first operand has (compute)
 * dtype at: `expf(tmp3)`, `tmp1 + tmp2` (malloc'd). NULL when no spelling exists; the caller
 * reports "op X has no <backend> lowering". Example: IOP_SIGMOID, f32, {"tmp5"} ->
 * "1.0f / (1.0f + expf(-tmp5))". */
char *cg_math(const CgOverrides *ov, IrMathOp op, DType at, const char *const *a);
/* The C backend's checked integer floordiv / truncdiv / fmod of values a[0], a[1] (an int dtype):
 * mi_zdiv_floor(x, y) ...; false for other ops. */
bool cg_zdiv_math(StrBuf *out, IrMathOp op, const char *const *a);
/* The helpers of ops.rand / ops.randn (mi_rand, mi_randn: Philox-4x32-10) in C or CUDA, for a
 * module that uses them (ir_module_uses_math). */
void cg_rand_src(StrBuf *out, bool cuda);

/* A literal of dtype dt (malloc'd): 0.5f (f32), 0.5 (f64), 3LL (ints), NAN / INFINITY /
 * -INFINITY, and the backend's bool literals. */
char *cg_constant(const CgOverrides *ov, double v, DType dt);

/* Value x (of dtype src) cast to dt (malloc'd): `(int64_t)(tmp2)`. */
char *cg_to_dtype(const CgOverrides *ov, const char *x, DType dt, DType src);

/* The identity of a max (is_max) or min reduction over dtype t: -INFINITY, INT32_MIN, ... */
const char *cg_red_init(DType t, bool is_max);

/* The predicate of a cond call, as the backend reads it. pred_buf[pred_index] is its element. */
typedef void (*CgCondTail)(void *arg, const char *pred_buf, const char *pred_index, const char *fn_true,
                           const char *fn_false, StrBuf *out);
/* torch.ops.higher_order.cond buffer b: open a block with the operand pointers (cin), results
 * (cout) and each branch's size symbols (csyms0/1), then let `tail` read the predicate and call
 * one branch function (s's SchedBranch fn[0] / fn[1]) and close the block. -1 + ctx error. */
int cg_emit_cond_call(MiCtx *ctx, const Schedule *s, const Buffer *b, CgCondTail tail, void *arg, StrBuf *out);

/* How a backend runs a while_loop's host loop: on the device (cuda: cudaMalloc / cudaMemcpyAsync
 * on mi_st, the launch functions take the stream) or in C (malloc / memcpy); fb: the subgraph
 * functions take the callback table; cleanup: what an early return runs (it returns the code of
 * the failure). */
typedef struct CgWhileHow { bool cuda, fb; const char *cleanup; } CgWhileHow;
/* torch.ops.higher_order.while_loop buffer b (Inductor's wrapper codegen_while_loop): the
 * carried inputs copied into the loop's results, then cond_fn on them (and the additional
 * inputs), its bool read on the host, body_fn into temporaries copied back, until it is false.
 * -1 + ctx error. */
int cg_emit_while_call(MiCtx *ctx, const Schedule *s, const Buffer *b, const CgWhileHow *how, StrBuf *out);
/* Does s (or a subgraph of it, recursively) hold a while_loop? Then the module's source starts
 * with cg_while_src: MI_WHILE_LIMIT (3002, runtime.h's RT_WHILE_LIMIT), which call() returns
 * when a loop ran ctx->limits.while_iterations trips of body_fn and cond_fn still gave True,
 * and mi_while_limit_loop, the loop's buffer name then. A subgraph's failure code passes
 * through the loop and the cond to the caller. */
bool cg_has_while(const Schedule *s);
extern const char *const cg_while_src;

#endif
