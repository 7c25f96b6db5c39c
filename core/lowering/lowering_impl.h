/* lowering_impl.h — internals shared by the lowering families (core/lowering/lowering_*.c):
 * the lowering state, the values graph nodes take during lowering, the closure builders
 * (IrFn kinds), TensorBox / StorageBox helpers and realization, argument access, and the
 * family tables the lowering table in core/lowering/lowering.c is made of. Not a public API
 * (as core/ops/ops_impl.h is for the op registry).
 *
 * Adding a lowering = a row {op name, lowering function, argument} in the family table that
 * fits it (pointwise, views, reductions, indexing, extern kernels, pooling); the argument selects a
 * variant of a shared function (the IrMathOp of a pointwise op, the ExternKind of a matmul,
 * the softmax mode). An op without a row lowers to a FallbackKernel when the registry has a
 * reference implementation for it (core/ir/ir_fallback.c). */
#ifndef LOWERING_IMPL_H
#define LOWERING_IMPL_H

#include "lowering/lowering.h"

/* ---- values of graph nodes during lowering ---- */
typedef enum { LV_NONE, LV_TBOX, LV_TUPLE, LV_SYM } LValKind;
typedef struct LVal { LValKind kind; IrTBox *t; IrTBox **items; int n; Expr *sym; } LVal;

typedef struct Lower {
    MiCtx *ctx;
    SymCtx *s;
    IrModule *m;
    const Graph *g;
    LVal *vals;          /* per node position */
    int *nusers;         /* per node position: distinct users (lw_users_init) */
    const Node ***users; /* per node position: those users */
    const Node *cur;
    Device dev;          /* the graph's device: for buffers whose node has no single meta */
    bool branch;         /* lowering a cond branch (lw_lower_branch) */
    int unroll_threshold;/* Inductor's config.unroll_reductions_threshold: reductions of fewer
                            static elements are unrolled pointwise (0: the default, 8; the
                            low-memory max pool patches it to 25) */
    bool scratch;        /* lowering a decomposition's scratch graph (lowering_decomp.c): no
                            FallbackKernel can name its nodes */
    bool relaid;         /* a realized buffer's layout changed after its readers were recorded
                            (require_stride_order): every body is recorded again at the end */
    bool layout_opt;     /* GraphLowering.layout_opt: convolutions run channels last (layout_opt.c) */
    bool *prefer_cl;     /* per node of prefer_g: nodes_prefer_channels_last */
    const Graph *prefer_g;
} Lower;

/* ---- the lowering table ---- */
/* Lower node n: give it a value (lw_set_*), or return -1 with ctx error (lw_err). `arg` is the
 * row's argument. */
typedef int (*LowerFn)(Lower *L, const Node *n, int arg);
typedef struct LoweringDef {
    const char *name;    /* "aten.add.Tensor" */
    LowerFn fn;
    int arg;             /* per-row variant: IrMathOp, ExternKind, mode, ... */
    bool gpu_only;       /* lowered for a GPU backend only (Inductor's BackendFeature.SCAN / SORT /
                            BUCKETIZE, which the cpp backend lacks); elsewhere a FallbackKernel */
} LoweringDef;
/* V.graph.has_feature(node's device, BackendFeature.SCAN...): the node's device is a GPU and the
 * session compiles for one (a cuda graph compiled for the CPU is C). */
bool lw_gpu_backend(Lower *L, const Node *n);

extern const LoweringDef lowering_pointwise_table[];  extern const int lowering_pointwise_count;
extern const LoweringDef lowering_views_table[];      extern const int lowering_views_count;
extern const LoweringDef lowering_reductions_table[]; extern const int lowering_reductions_count;
extern const LoweringDef lowering_indexing_table[];   extern const int lowering_indexing_count;
extern const LoweringDef lowering_extern_table[];     extern const int lowering_extern_count;
extern const LoweringDef lowering_pooling_table[];    extern const int lowering_pooling_count;
extern const LoweringDef lowering_gather_table[];     extern const int lowering_gather_count;
extern const LoweringDef lowering_scan_table[];       extern const int lowering_scan_count;
extern const LoweringDef lowering_random_table[];     extern const int lowering_random_count;
extern const LoweringDef lowering_decomp_table[];     extern const int lowering_decomp_count;
extern const LoweringDef lowering_foreach_row;   /* every "aten._foreach_*" op of the registry (lowering_decomp.c) */
/* n's op is one Inductor decomposes before lowering (its DecompDef is marked `inductor`) and
 * that is functional: lw_lower_decomposed lowers its decomposition inline (lowering_decomp.c). */
bool lw_lowers_by_decomposition(const Node *n);
int lw_lower_decomposed(Lower *L, const Node *n);

/* The row for op `name`, NULL when no family has one. */
const LoweringDef *lowering_find(const char *name);
/* Lower one call_function node through its row, else as a FallbackKernel (lowering.c;
 * tag_activation_checkpoint lowers its body's nodes with it). */
int lw_lower_node(Lower *L, const Node *n);
/* ir_lower for a cond branch's body: results that are its inputs are copied too (lowering.c). */
IrModule *lw_lower_branch(MiCtx *ctx, const Graph *g);
/* An op with a reference implementation but no lowering: a FallbackKernel (lowering_extern.c):
 * one node of MultiOutputLayout, then one MultiOutput node per tensor result. */
bool lw_custom_fallback_ok(const Node *n);   /* a user's torch.library op with its meta: a FallbackKernel */
int lw_fallback(Lower *L, const Node *n);
/* lw_fallback with argument `skip` not passed (its run sees None there: a bias the lowering adds
 * as a pointwise op; ir_fallback_eval knows which ops peel which argument) and argument 0
 * required in stride order `order0` (NULL: as it is). */
int lw_fallback_with(Lower *L, const Node *n, int skip, const int *order0);
/* lw_fallback for scatter / index_put, which Inductor runs in place on clone(x) (IrFallback.on_clone) */
int lw_fallback_on_clone(Lower *L, const Node *n);
/* aten.cat on the CPU: ir.ConcatKernel, its inputs realized into slices of its buffer
 * (lowering_concat.c); m the output meta, lst the list argument, dim normalized. */
int lw_concat_kernel(Lower *L, const Node *n, const TensorMeta *m, const Value *lst, int64_t dim);
/* lowering.py cat's choice on a GPU: true for pointwise_cat (one pending value), false for a
 * ConcatKernel (lowering_concat.c). */
bool lw_cat_pointwise_gpu(Lower *L, const Node *n, const Value *lst);
/* The same call as an ExternKernelOut: one result, held by the kernel's own buffer (what
 * Inductor lowers to an ATen out= kernel: RandomSeeds -> aten.randint.low_out). */
int lw_extern_out(Lower *L, const Node *n);

/* ---- errors and memory ---- */
/* "msg (node 'x')" at the node's source line into ctx->err; returns -1. */
int lw_err(Lower *L, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Memory that lives as long as the module (its arena). */
void *lw_alloc(Lower *L, size_t n);
/* "aten.add.Tensor" -> "add" (the origin name Inductor prints). */
const char *lw_short_name(Lower *L, const char *target);

/* ---- origins: op names folded into a kernel ---- */
void lw_origins_add(Lower *L, const char ***o, int *n, const char *name);
/* b's origins: node n's op alone ("convolution") */
void lw_origins_of_node(Lower *L, Buffer *b, const Node *n);
/* The origins of a pending (not yet realized) argument join the consumer's. */
void lw_origins_merge(Lower *L, const char ***o, int *n, const IrTBox *t);

/* ---- closures (inner functions) ---- */
IrFn *lw_fn(Lower *L, IrFnCall call, DType dt);
SymCtx *lw_fn_sym(const IrFn *f);
/* The loader of a buffer (through f->view when set: a ReinterpretView). */
IrVal lw_call_buf_load(const IrFn *f, OpsHandler *h, Expr *const *idx);
/* The index placeholder _vK of output dim k (substituted by the caller's index). */
Expr *lw_var(Lower *L, int k);
/* View._dynamic_reshape_indexer(old, new) with new's dims at vars[]: map[d] (old dim d); false
 * where Inductor's optimistic pairing fails (core/lowering/lowering_views.c). */
bool lw_reshape_indexer(Lower *L, Expr **old, int no, Expr **nw, Expr **vars, int nn, Expr **map);
/* Reduction.num_splits on a GPU (core/lowering/lowering_split.c): the split of a reduction of
 * f over nd dims (red[d]: reduced), 1 for none; *outer: ReductionHint.OUTER. */
int64_t lw_num_splits_dims(Lower *L, const IrFn *f, int nd, Expr **size, const bool *red, IrReduceType rt, bool *outer);
/* the same for f over no output dims osize, then nr reduced dims rsize */
int64_t lw_num_splits(Lower *L, const IrFn *f, int no, Expr **osize, int nr, Expr **rsize, IrReduceType rt, bool *outer);
/* A re-indexing view: out index (nin dims) -> inner index (nmap exprs over _v0.._v(nin-1)). */
const IrFn *lw_reindex(Lower *L, const IrFn *inner, int nin, Expr **map, int nmap);
const IrFn *lw_const(Lower *L, double v, DType dt);
/* ops.index_expr(e) with e over _v0.._v(nin-1). */
const IrFn *lw_index_expr(Lower *L, Expr *e, int nin, DType dt);
/* ops.to_dtype(a, dt); a itself when it has dtype dt already. */
const IrFn *lw_to_dtype(Lower *L, const IrFn *a, DType dt);
/* ops.<op>(a, b, c) (as many as the op's arity). */
const IrFn *lw_math(Lower *L, IrMathOp op, DType dt, const IrFn *a, const IrFn *b, const IrFn *c);
/* ... of a four-argument op (ops.randint64(seed, offset, low, high)) */
const IrFn *lw_math4(Lower *L, IrMathOp op, DType dt, const IrFn *a, const IrFn *b, const IrFn *c, const IrFn *d);

/* ---- boxes, buffers and realization ---- */
IrTBox *lw_tbox_new(Lower *L, DType dt, int ndim, Expr **size, const IrFn *loader);
IrTBox *lw_tbox_of_storage(Lower *L, IrStorage *sb);
IrTBox *lw_tbox_of_buffer(Lower *L, Buffer *b);
Buffer *lw_new_buffer(Lower *L, BufKind k, const Layout *l);
/* Loop nesting of a layout's dims by decreasing stride (stable; identity if symbolic). */
void lw_loop_order(const Layout *l, int *order);
/* Realize a pending storage into a ComputedBuffer (layout: contiguous, or *fixed). */
Buffer *lw_realize(Lower *L, IrStorage *sb, const Layout *fixed);
IrStorage *lw_storage_new(Lower *L, const IrFn *fn, DType dt, int ndim, Expr **size,
                          const char **origins, int norigins);
/* A TensorBox as a buffer an extern kernel or an output can take: a strided view of a realized
 * buffer when possible, else realized into a fresh contiguous buffer (*view: its layout). */
Buffer *lw_as_strided(Lower *L, IrTBox *t, Layout *view);
/* convert_to_reinterpret_view's index of view t (make_indexer: loads of realized buffers, no
 * inlining): true with the buffer and the strided view when it is one. */
bool lw_probe_view(Lower *L, IrTBox *t, Buffer **b, Layout *view);
/* ExternKernel.convert_to_reinterpret_view's freeze of the computed buffer under a view: its
 * current (contiguous) layout, or channels-last when its producer's eager value is */
void lw_freeze_under_view(Lower *L, Buffer *b);
/* Write src into graph input dst (copy_ into an input, an in-place foreach op): a buffer that
 * mutates the input (lowering_indexing.c). -1 with ctx error naming n. */
int lw_mutate_input(Lower *L, const Node *n, IrTBox *dst, IrTBox *src);
/* An in-place foreach item: the pending src itself becomes the buffer that writes input dst
 * (Inductor's unsafe_alias mutation, no copy); false when src cannot be (lowering_indexing.c). */
bool lw_alias_into_input(Lower *L, IrTBox *dst, IrTBox *src);
/* Is t a pending value (or a view of one) whose inner function loads no buffer (iota, full)?
 * DeviceCopy.create's "all reads are constants" test (lowering_realize.c). */
bool lw_reads_no_buffer(Lower *L, IrTBox *t);
/* Inductor's realize_hint: realize the pending storage of t (a view's: the one it looks at)
 * when it reads more than one buffer at a non-constant index (lowering_realize.c). */
void lw_realize_hint(Lower *L, IrTBox *t);
/* GraphLowering.mark_buffer_mutated: pending values that load b are realized before the
 * mutation of b is recorded (lowering_realize.c). */
void lw_mark_buffer_mutated(Lower *L, const Buffer *b);
/* TensorBox.mark_reuse before broadcasting t to size[ndim] (expand, broadcast_tensors). */
void lw_mark_reuse(Lower *L, IrTBox *t, int ndim, Expr *const *size);
/* ExpandView.create's freeze: a realized buffer broadcast by a pointwise op gets a fixed layout */
void lw_freeze_on_expand(Lower *L, IrTBox *t, int ndim, Expr *const *size);
/* mark_reuse with the number of reads of each element given */
void lw_mark_reuse_users(Lower *L, IrTBox *t, int64_t users);
/* inner_fn_opcount().num_ops of a pending storage, and whether it loads a realized reduction's
 * buffer (lowering_realize.c). */
int lw_pending_opcount(Lower *L, const IrStorage *sb, bool *reads_reduction);
/* Inductor's store-or-recompute rules after lowering node n (GraphLowering.run_node: users that
 * need realized inputs, the output, mark_reuse, too many reads, too many ops). */
void lw_after_node(Lower *L, const Node *n);
/* L->nusers / L->users: each node's distinct users, as fx's Node.users; lw_users_free. */
void lw_users_init(Lower *L);
void lw_users_free(Lower *L);
/* A layout with src's sizes, strides and offset, fixed. */
Layout lw_layout_copy(Lower *L, const Layout *src);
/* An extern kernel's argument: t realized or viewed as a strided buffer. */
int lw_extern_arg(Lower *L, IrTBox *t, ExternArg *a);
/* ExternKernel.require_stride_order for a returned view (lowering_extern.c): t itself, now a
 * ReinterpretView, when it is one in the order of `stride`; else a copy realized in it. */
IrTBox *lw_require_stride_order_box(Lower *L, IrTBox *t, Expr *const *stride);

/* ---- arguments ---- */
LVal *lw_node_val(Lower *L, const Node *n);
/* The TensorBox of positional argument i (NULL when it is not a tensor node). */
IrTBox *lw_arg_tbox(Lower *L, const Node *n, int i);
/* Unbacked SymInts (lowering_unbacked.c): `.item()` of a tensor (1 recorded, 0 not such a
 * node, -1 error), and the fresh sizes a FallbackKernel's result defines (node at `pos`). */
int lw_unbacked_item(Lower *L, const Node *n);
void lw_unbacked_sizes(Lower *L, const Node *n, int pos);
/* Positional argument i, else keyword kw (i < 0: keyword only); NULL when absent. */
const Value *lw_arg_or_kw(const Node *n, int i, const char *kw);
bool lw_arg_int(const Node *n, int i, const char *kw, int64_t *out);
/* A number argument (default dflt when absent or None). Not for one known only at run time
 * (a SymFloat / SymInt node, a size expression): lw_arg_symbolic says so, lw_num_loader
 * computes it. */
double lw_arg_num(const Node *n, int i, const char *kw, double dflt);
/* Is the argument a value known only at run time (a node: SymFloat, SymInt; a size expression)? */
bool lw_arg_symbolic(const Node *n, int i, const char *kw);
/* A number argument as a loader in dt: a constant, or a symbolic one's value (lw_scalar_loader:
 * "Sym(IntTrueDiv(s0, 2))" computed in float64). NULL with an error when it is no number. */
const IrFn *lw_num_loader(Lower *L, const Node *n, int i, const char *kw, double dflt, int ndim, DType dt);
/* An int, SymInt node or symbolic size argument as an expression; NULL if none. */
Expr *lw_value_expr(Lower *L, const Value *v);
/* An int or int list (dims) into out; the count, or -1. */
int lw_int_list(const Value *v, int64_t *out, int max);
const TensorMeta *lw_out_meta(const Node *n);
/* Item k's meta of a tuple-valued node (its getitem user's annotation); NULL when none. */
const TensorMeta *lw_item_meta(Lower *L, const Node *n, int k);
/* An extern result's fixed layout: meta's strides when its sizes are these, else contiguous. */
Layout lw_extern_layout(Lower *L, const TensorMeta *meta, DType dt, Device dev, int ndim, Expr **size);
/* Loader f of a tensor of shape (tnd, tsize) broadcast to (ndim, size); NULL when it cannot be. */
const IrFn *lw_broadcast(Lower *L, const IrFn *f, int tnd, Expr **tsize, int ndim, Expr **size);
/* A scalar argument v of node user as a loader of ndim index variables in dt: a number a
 * constant, a SymFloat node its expression computed in float64, a SymInt (node or size
 * expression) ops.index_expr; NULL when v is none of these (a node: with an error). Example:
 * addmm(b, x, w, alpha=truediv) with truediv "Sym(IntTrueDiv(s0, 2))" multiplies by s0 / 2.0. */
const IrFn *lw_scalar_loader(Lower *L, const Node *user, const Value *v, int ndim, DType dt);
/* Argument i broadcast to (ndim, size) and converted to dt; numbers become constants. */
const IrFn *lw_arg_loader(Lower *L, const Node *n, int i, int ndim, Expr **size, DType dt);
/* Dtype of argument i: the tensor's, or f32 / bool / i64 for a python number. */
DType lw_arg_dtype(Lower *L, const Node *n, int i);

/* ---- giving a node its value ---- */
/* A new pending storage computing fn over n's meta shape (realized at once when its users
 * call for it). */
int lw_set_pending(Lower *L, const Node *n, const IrFn *fn, DType dt, const char **o, int no);
/* The pending pointwise value fn; origins: n's op and its first nin_args arguments'. */
int lw_set_pointwise(Lower *L, const Node *n, const IrFn *fn, DType dt, int nin_args);
/* A view of src through fn with the given size. */
int lw_set_view(Lower *L, const Node *n, IrTBox *src, const IrFn *fn, int ndim, Expr **size);
int lw_set_tbox(Lower *L, const Node *n, IrTBox *t);
int lw_set_tuple(Lower *L, const Node *n, IrTBox **items, int k);
/* A pending pointwise TensorBox (not realized) computing f over `size`. */
IrTBox *lw_pw_box(Lower *L, const IrFn *f, DType dt, int ndim, Expr **size, const char *oname);

/* ---- layout optimization and stride requirements (layout_opt.c) ---- */
/* GraphLowering.decide_layout_opt: whether graph g (an inference graph or not) runs its
 * convolutions channels last: always on cpu (oneDNN); on other devices unless the graph is
 * mostly not convolutions, has dynamic shapes, or (inference) the flop-weighted benchmark
 * factors say slower, or (training) it has grouped, in>out-channel or only small convolutions. */
bool lw_decide_layout_opt(const Graph *g, bool inference);
/* L->layout_opt and L->prefer_cl for L->g (a cond branch never: its layouts are the caller's). */
void lw_layout_opt_init(Lower *L);
/* The channels-last strides node n is returned with (into stride[4]) when layout_opt prefers
 * channels last for it, it is a dense 4-d tensor and not one of the model's own outputs. */
bool lw_output_channels_last(Lower *L, const Node *n, Expr **stride);
/* GraphLowering.run_node's output rule under layout_opt: such a node's value is required in
 * those strides at once (a placeholder saved for the backward is copied there, once). */
void lw_layout_opt_output_rule(Lower *L, const Node *n);
/* ExternKernel.require_stride_order (order as ir_stride_order gives it) / require_exact_strides:
 * t itself when its layout fits or was still flexible (then fixed that way, bodies recorded
 * again), else a new kernel copying it (fixed layouts: graph inputs, extern results). */
IrTBox *lw_require_stride_order(Lower *L, IrTBox *t, const int *order);
IrTBox *lw_require_exact_strides(Lower *L, IrTBox *t, Expr *const *stride);

/* ---- reductions (lowering_reductions.c) ---- */
/* Reduce x over dims red[] into a realized buffer; out size keepdim or not. A small reduction
 * (Reduction.create's unroll rule) is a pending Pointwise instead. */
IrStorage *lw_reduction(Lower *L, const Node *n, IrTBox *x, const bool *red, bool keepdim,
                        IrReduceType rt, DType out_dt, int welford_item, const char *oname);

/* ---- pooling (lowering_pooling.c; its backwards: lowering_pooling_backward.c) ---- */
#define LW_POOL_MAX_WINDOW 25   /* Inductor's limit for inlined windows */
/* The pooling arguments, each padded to n entries as pad_listlike does. */
typedef struct PoolArgs {
    int n;                                  /* spatial dims (2 or 3) */
    int64_t k[3], s[3], p[3], d[3];         /* kernel, stride, padding, dilation */
    bool ceil;
} PoolArgs;
/* max_pool_checks / _avg_poolnd's argument normalization of n's arguments from position argi:
 * kernel_size, stride (default: the kernel), padding (0), [dilation (1),] ceil_mode. */
int lw_pool_args(Lower *L, const Node *n, int argi, int nd, bool has_dilation, PoolArgs *pa);
/* pooling_size: the pooled extent of spatial dim i of extent x (*ceil: ceil_mode added a window). */
Expr *lw_pool_out_size(Lower *L, Expr *x, const PoolArgs *pa, int i, bool *ceil);
/* The most pooled positions along one dim whose windows (kernel k, stride s) cover one input
 * position (the h_window_size of the pooling backwards). */
int64_t lw_pool_cover(int64_t k, int64_t s);
/* _avg_poolnd: x (batch dims, then pa->n spatial) average-pooled; divisor 0: the window size or
 * the covered count (cip: count_include_pad). A pending value with n's origins. */
IrTBox *lw_avg_pool(Lower *L, const Node *n, IrTBox *x, const PoolArgs *pa, bool cip, double divisor);
/* Window position (a, b) of adaptive pooling of the last two dims (sizes in[] -> os[]): the
 * mask "inside the window", map[] the (clamped) index read, at[] the unclamped row / column;
 * ceil: CeilDiv windows (upsample_nearest2d_backward) instead of the floor / ceil ones. */
const IrFn *lw_adaptive_pos(Lower *L, int nd, const int64_t *in, const int64_t *os, int64_t a, int64_t b, bool ceil,
                            Expr **map, Expr **at);
extern const LoweringDef lowering_pooling_backward_table[]; extern const int lowering_pooling_backward_count;
extern const LoweringDef lowering_bucketize_table[]; extern const int lowering_bucketize_count;   /* lowering_bucketize.c */
extern const LoweringDef lowering_mkldnn_table[]; extern const int lowering_mkldnn_count;   /* lowering_mkldnn.c */

/* Closure costs add up over a DAG (a value used twice counts twice), so they can grow
 * exponentially with the graph: saturate instead of overflowing. Any cost past
 * LOWER_MAX_INLINE_COST realizes the storage anyway. */
#define LW_COST_MAX (1 << 28)
/* The cost of calling f for a reader made now (lowering_boxes.c): a realized storage is a load. */
int lw_fn_cost(const IrFn *f);
static inline int lw_cost_add(int a, int b) { return a >= LW_COST_MAX - b ? LW_COST_MAX : a + b; }

#endif
