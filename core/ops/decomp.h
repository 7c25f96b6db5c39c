/* decomp.h — Inductor's decompositions, written once as graph builders.
 *
 * A decomposition rewrites one call node into a few simpler ATen calls, as
 * torch/_decomp/decompositions.py, torch/_refs and torch/_inductor/decomposition.py do:
 *     addcmul(self, t1, t2, value=v)  ->  add(self, mul(mul(t1, t2), v))
 * It is written as a C function against a small builder (DecompB): it reads the node's
 * arguments and their metas and emits new nodes with db_call(), each meta-inferred by the op
 * registry, and returns the replacement value(s). Every stage uses the same function:
 *   - the reference interpreter (decomp_eval): a registry row whose implementation is a
 *     decomposition runs it on a tiny graph built from the call's runtime tensors;
 *   - meta inference (decomp_shape): the same on the node's argument metas;
 *   - decompose_graph(): the pass that replaces nodes Inductor decomposes before lowering,
 *     as aot_autograd(decompositions=select_decomp_table()) does.
 * The families live in core/ops/decomp_*.c. */
#ifndef DECOMP_H
#define DECOMP_H

#include "ops/ops.h"

typedef struct DecompB {
    MiCtx *ctx;
    Graph *g;
    Node *anchor;            /* new nodes go right before it */
    const Node *n;           /* the node being decomposed */
    bool failed;             /* sticky: after the first error every db_call returns NULL */
} DecompB;

/* Fills outs[0..*nout) (V_NODE, or V_NONE for an absent tuple item; a decomposition may also
 * return one of its inputs) and returns 0; -1 with ctx error; DECOMP_SKIP when it does not
 * apply to these arguments (Inductor's NotImplemented: the op's own implementation runs). */
#define DECOMP_SKIP 1
typedef int (*DecompFn)(DecompB *b, Value *outs, int *nout);

/* A registry row's `data` for ops implemented by a decomposition (DECOMP_ROW below), and the
 * rows of decomp_extra_table for ops that also have their own kernel. `inductor`: Inductor's
 * table decomposes this op (opsets.json inductor_decomps), so decompose_graph rewrites it. */
typedef struct DecompDef { const char *name; DecompFn fn; bool inductor; } DecompDef;

int decomp_eval(const OpCall *c, IValue *out);
int decomp_shape(ShapeArgs *sa, TensorMeta *out, int *nout);
#define DECOMP_ROW(name, flags, fn, inductor, doc) \
    {name, flags, op_infer_generic, decomp_eval, doc, decomp_shape, &(const DecompDef){name, fn, inductor}}

/* The decomposition of op `name` (a DECOMP_ROW row or decomp_extra_table), or NULL. */
const DecompDef *decomp_find(const char *name);

/* Replace, in g and its subgraphs, every call whose op Inductor decomposes by its
 * decomposition (repeatedly: a decomposition may emit decomposable ops). Returns the number of
 * nodes replaced, -1 with ctx error. */
int decompose_graph(MiCtx *ctx, Graph *g);

/* ---- reading the node's arguments (by schema position, or keyword) ---- */
const Value *db_arg(DecompB *b, int pos, const char *name);       /* NULL when absent */
Node *db_tensor(DecompB *b, int pos, const char *name);            /* required tensor */
Node *db_opt_tensor(DecompB *b, int pos, const char *name);        /* NULL when None/absent */
int64_t db_int(DecompB *b, int pos, const char *name, int64_t dflt);
double db_float(DecompB *b, int pos, const char *name, double dflt);
bool db_bool(DecompB *b, int pos, const char *name, bool dflt);
const char *db_str(DecompB *b, int pos, const char *name, const char *dflt);
/* an int list argument (a single int counts as [int]); returns its length or -1 when absent */
int db_ints(DecompB *b, int pos, const char *name, int64_t *out, int max);
/* Python scalar argument as a Value (int/float/bool kept), `dflt` when absent */
Value db_scalar(DecompB *b, int pos, const char *name, Value dflt);
int db_fail(DecompB *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- metas ---- */
const TensorMeta *db_meta(DecompB *b, Node *x);     /* NULL (and failed) when unknown */
int db_ndim(DecompB *b, Node *x);
DType db_dtype(DecompB *b, Node *x);
Expr *db_size(DecompB *b, Node *x, int dim);        /* dim may be negative */
bool db_size_const(DecompB *b, Node *x, int dim, int64_t *v);
Value db_size_val(DecompB *b, Node *x, int dim);    /* V_INT or V_SYM */
Value db_expr_val(DecompB *b, Expr *e);
Value db_shape_val(DecompB *b, Node *x);            /* [sizes] as a list Value */
int db_wrap_dim(DecompB *b, int64_t dim, int ndim);

/* ---- emitting ---- */
Node *db_call(DecompB *b, const char *target, const Value *args, int nargs, const Kwarg *kw, int nkw);
#define DBV(...) ((const Value[]){__VA_ARGS__}), (int)(sizeof((const Value[]){__VA_ARGS__}) / sizeof(Value))
#define db_op(b, target, ...) db_call(b, target, DBV(__VA_ARGS__), NULL, 0)
#define VN(x) value_node(x)
#define VI(x) value_int(x)
#define VF(x) value_float(x)
#define VB(x) value_bool(x)
#define VNONE value_none()
Value VDT(DType dt);
Value db_ilist(DecompB *b, const int64_t *v, int n);
Value db_vlist(DecompB *b, const Value *v, int n);
Node *db_getitem(DecompB *b, Node *tuple, int k);

/* ---- the torch functions decompositions are written with ---- */
Node *db_add(DecompB *b, Node *x, Node *y);
Node *db_sub(DecompB *b, Node *x, Node *y);
Node *db_mul(DecompB *b, Node *x, Node *y);
Node *db_div(DecompB *b, Node *x, Node *y);
Node *db_adds(DecompB *b, Node *x, double s);       /* x + s */
Node *db_muls(DecompB *b, Node *x, double s);       /* x * s */
Node *db_rsubs(DecompB *b, double s, Node *x);      /* s - x */
Node *db_unary(DecompB *b, const char *target, Node *x);
Node *db_binary(DecompB *b, const char *target, Node *x, Node *y);
Node *db_where(DecompB *b, Node *c, Node *x, Node *y);
Node *db_where_s(DecompB *b, Node *c, Node *x, double s);    /* where(c, x, s) */
Node *db_to(DecompB *b, Node *x, DType dt);         /* convert_element_type (no-op when same) */
Node *db_full_like(DecompB *b, Node *x, double v, DType dt);
Node *db_scalar_tensor(DecompB *b, double v, DType dt);
Node *db_sum(DecompB *b, Node *x, const int64_t *dims, int ndims, bool keepdim);   /* ndims < 0: all */
Node *db_amax(DecompB *b, Node *x, const int64_t *dims, int ndims, bool keepdim);
Node *db_unsqueeze(DecompB *b, Node *x, int64_t dim);
Node *db_squeeze_dims(DecompB *b, Node *x, const int64_t *dims, int n);
Node *db_view(DecompB *b, Node *x, Value shape);
Node *db_reshape(DecompB *b, Node *x, Value shape);
Node *db_permute(DecompB *b, Node *x, const int64_t *perm, int n);
Node *db_expand(DecompB *b, Node *x, Value shape);
Node *db_clone(DecompB *b, Node *x);
Node *db_arange(DecompB *b, Value end, DType dt);
Node *db_slice(DecompB *b, Node *x, int64_t dim, Value start, Value end, int64_t step);
Node *db_cat(DecompB *b, Node **xs, int n, int64_t dim);
/* the compute dtype of pw_cast_for_opmath: f16/bf16 -> f32, ints -> themselves */
DType db_opmath(DType dt);
/* the result dtype of an elementwise op on x (and y, when given) with INT_TO_FLOAT promotion */
DType db_float_dtype(DecompB *b, Node *x, Node *y);

/* The plain op a _foreach_* op applies to each item ("aten._foreach_add_.List" ->
 * "aten.add.Tensor", written into buf when built), NULL for other ops or an overload without
 * one; *inplace (when given) tells the in-place forms (core/ops/decomp_foreach.c). */
const char *foreach_plain_op(const char *target, char *buf, size_t n, bool *inplace);

/* ---- decompositions of ops that also have their own kernel (decomp_extra_table) ---- */
int decomp_repeat_interleave_tensor(DecompB *b, Value *outs, int *nout);   /* core/ops/ops_repeat_interleave.c */
int decomp_randint_default(DecompB *b, Value *outs, int *nout);            /* core/ops/ops_random.c */

/* ---- decomposition tables (core/ops/decomp_*.c) ---- */
extern const DecompDef decomp_extra_table[]; extern const int decomp_extra_count;

#endif
