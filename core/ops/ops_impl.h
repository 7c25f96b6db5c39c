/* ops_impl.h — internals shared by the op families (core/ops_*.c): argument access that works
 * the same on a graph node (symbolic metas, for infer_meta) and on a runtime call (concrete
 * tensors, for eval), meta builders (broadcasting, type promotion, PyTorch's stride rules) and
 * the family tables the registry in core/ops/ops.c is made of. Not a public API. */
#ifndef OPS_IMPL_H
#define OPS_IMPL_H

#include "ops/ops.h"

struct ShapeArgs {
    MiCtx *ctx;
    SymCtx *sym;
    Arena *arena;                  /* where result metas live */
    Arena own;                     /* eval mode: a scratch arena the eval scaffold frees */
    const Node *node;
    const Graph *graph;
    const OpDef *op;
    const Value *args; int nargs;
    const Kwarg *kwargs; int nkwargs;
    const IValue *argv, *kwargv;   /* NULL when inferring from a node */
    const SymBinding *syms; int nsyms;
    const OpCall *call;            /* eval mode */
    bool eval;
};

/* One argument: its Value in the graph and, when running, its runtime value. */
typedef struct ArgRef { const Value *v; const IValue *iv; } ArgRef;

/* ---- setup ---- */
void sa_from_node(ShapeArgs *sa, MiCtx *ctx, Graph *g, const Node *n, const OpDef *op);

/* ---- errors: "node 'x' (aten.foo.default): reason" with the node's file and line ---- */
int sa_err(ShapeArgs *sa, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- arguments ---- */
ArgRef sa_arg(ShapeArgs *sa, int pos, const char *name);   /* {NULL,NULL} when absent */
bool arg_present(ArgRef a);                                  /* given and not None */
int arg_list_len(ArgRef a);                                  /* -1 if not a list */
ArgRef arg_item(ArgRef a, int k);
bool arg_is_tensor(ShapeArgs *sa, ArgRef a);
int sa_tensor(ShapeArgs *sa, ArgRef a, const char *what, TensorMeta **m);
int sa_int(ShapeArgs *sa, ArgRef a, const char *what, Expr **out);
int sa_const_int(ShapeArgs *sa, ArgRef a, const char *what, int64_t *out);
int sa_int_list(ShapeArgs *sa, ArgRef a, const char *what, Expr **out, int *n, int max);
int sa_const_int_list(ShapeArgs *sa, ArgRef a, const char *what, int64_t *out, int *n, int max);
/* A python scalar: value as double, and its type (DT_F32 float, DT_I64 int, DT_BOOL). */
int sa_scalar(ShapeArgs *sa, ArgRef a, const char *what, double *out, DType *type);
bool arg_bool(ArgRef a, bool dflt);
DType arg_dtype(ArgRef a, DType dflt);
const char *arg_str(ArgRef a, const char *dflt);
Device arg_device(ArgRef a, Device dflt);
/* The traced (annotated) size `dim` of result k of the node being inferred (k < 0: the node's
 * own meta; k >= 0: its getitem user k's), for data-dependent sizes; NULL when none. */
Expr *sa_traced_size(ShapeArgs *sa, int k, int dim);
/* Normalize a dim against rank (dim may be negative); error when out of range. */
int sa_dim(ShapeArgs *sa, int64_t dim, int ndim, int64_t *out);

/* ---- metas ---- */
void meta_alloc(ShapeArgs *sa, TensorMeta *m, DType dt, int ndim, Device dev);
void meta_contiguous_strides(ShapeArgs *sa, TensorMeta *m);     /* from m->size */
/* PyTorch's memory formats: is m channels-last (suggest_memory_format)? channels-last strides
 * from m->size ((N, C, H, W) -> [H*W*C, 1, W*C, C]); and "like's suggested format" (ATen's
 * pooling outputs and gradients, convolution outputs). */
bool meta_is_channels_last(const TensorMeta *m);
void meta_channels_last_strides(ShapeArgs *sa, TensorMeta *m);
void meta_suggested_strides(ShapeArgs *sa, TensorMeta *m, const TensorMeta *like);
/* Strides PyTorch gives an elementwise result of shape m->size whose inputs are `ins`
 * (prims' compute_elementwise_output_strides: follow the inputs' layout). */
void meta_elementwise_strides(ShapeArgs *sa, TensorMeta *m, TensorMeta *const *ins, int nin);
/* empty_like(x) layout: dense tensors keep their strides, others get elementwise strides. */
void meta_like(ShapeArgs *sa, TensorMeta *m, const TensorMeta *x, DType dt);
void meta_copy(ShapeArgs *sa, TensorMeta *dst, const TensorMeta *src);
bool meta_is_contiguous(ShapeArgs *sa, const TensorMeta *m);
/* Broadcast shapes of metas; error names the sizes. */
int sa_broadcast(ShapeArgs *sa, TensorMeta *const *ins, int nin, Expr **size, int *ndim);
/* Compare two sizes: -1/0/1, with symbols replaced by their bindings or a large hint. */
int ex_cmp(ShapeArgs *sa, Expr *a, Expr *b);
bool ex_eq_int(const Expr *e, int64_t v);
/* PyTorch's computeStride for view/reshape: strides of `newsize` viewing `m`, or false when the
 * shape change cannot be a view. */
bool view_strides(ShapeArgs *sa, const TensorMeta *m, Expr **newsize, int nnew, Expr **out);
/* Resolve a shape list with at most one -1 against numel. */
int sa_infer_shape(ShapeArgs *sa, Expr *numel, Expr **size, int n);
Device sa_first_device(ShapeArgs *sa);

/* ---- type promotion (torch.result_type) ---- */
typedef struct PromoteState { DType dim, zero, wrapped; } PromoteState;
void promote_init(PromoteState *p);
void promote_tensor(PromoteState *p, const TensorMeta *m);
void promote_scalar(PromoteState *p, DType scalar_type);
DType promote_result(const PromoteState *p);
DType default_float(void);

/* ---- eval helpers ---- */
Tensor *ev_tensor(ArgRef a);                                 /* runtime tensor of an argument */
int ev_sizes(ShapeArgs *sa, const TensorMeta *m, int64_t *size, int64_t *stride);
/* Fresh tensor with m's layout. Every result tensor of an eval must come from here: in a
 * float64 reference run (OpCall.fp64) it makes floating results f64 whatever m names. */
Tensor *ev_new(ShapeArgs *sa, const TensorMeta *m);
int ev_out_tensor(IValue *out, Tensor *t);                    /* wrap (takes the reference) */
/* a tuple of n tensors (takes the references; a NULL entry is None): max_pool's (values, indices) */
int ev_out_tuple(IValue *out, Tensor *const *ts, int n);
bool ev_intlike(DType d);
/* Run the op's shape function in eval mode. */
int ev_shape(ShapeArgs *sa, TensorMeta *out, int *nout);

/* ---- the eval scaffold (core/ops/ops_eval.c): each eval of the families below runs in one ----
 * A body/fill returns 0, or -1 after sa_err; it frees only what it made itself. The call is
 * sa->call. */
typedef int (*EvBody)(ShapeArgs *sa, IValue *out);
typedef int (*EvFill)(ShapeArgs *sa, Tensor *o);
typedef int (*EvFillN)(ShapeArgs *sa, Tensor *const *res, int n);
/* the frame only: body sets *out itself (scalars, views, in-place results, optional outputs) */
int ev_call(const OpCall *c, IValue *out, EvBody body);
/* one tensor result, sized by the op's shape function and allocated before fill writes it
 * (self itself for an in-place op) */
int ev_run(const OpCall *c, IValue *out, EvFill fill);
/* every result of the shape function allocated, filled, returned as a tuple (n == 1: a tensor) */
int ev_run_n(const OpCall *c, IValue *out, EvFillN fill);
/* the scaffold's own steps (an eval calls the three above instead): the ShapeArgs of a runtime
 * call, and its scratch arena freed */
void sa_from_call(ShapeArgs *sa, const OpCall *c);
void ev_end(ShapeArgs *sa);

/* A convolution's int list argument (stride, padding, ...): 1 or nsp values, dflt when absent. */
int ops_conv_list(ShapeArgs *sa, ArgRef a, const char *what, int nsp, int64_t dflt, int64_t *out);
/* o = x (*) w (+ b), a regular convolution of concrete tensors with nsp spatial dims, computed
 * in double (core/ops/ops_conv.c; the mkldnn convolutions of core/ops/ops_mkldnn.c share it). */
void ops_conv_forward(const Tensor *x, const Tensor *w, const Tensor *b, int nsp, const int64_t *stride, const int64_t *pad,
                      const int64_t *dil, int64_t groups, Tensor *o);

/* ---- family tables ---- */
extern const OpDef ops_pointwise_table[]; extern const int ops_pointwise_count;
extern const OpDef ops_view_table[];      extern const int ops_view_count;
extern const OpDef ops_reduce_table[];    extern const int ops_reduce_count;
extern const OpDef ops_matmul_table[];    extern const int ops_matmul_count;
extern const OpDef ops_attention_table[]; extern const int ops_attention_count;
extern const OpDef ops_misc_table[];      extern const int ops_misc_count;
extern const OpDef ops_index_table[];     extern const int ops_index_count;
extern const OpDef ops_conv_table[];      extern const int ops_conv_count;
extern const OpDef ops_complex_table[];   extern const int ops_complex_count;
extern const OpDef ops_random_table[];    extern const int ops_random_count;
extern const OpDef ops_scan_table[];      extern const int ops_scan_count;
extern const OpDef ops_pool_table[];      extern const int ops_pool_count;
extern const OpDef ops_linalg_table[];    extern const int ops_linalg_count;
extern const OpDef ops_fft_table[];       extern const int ops_fft_count;
extern const OpDef ops_distance_table[];  extern const int ops_distance_count;
extern const OpDef ops_amp_table[];       extern const int ops_amp_count;
extern const OpDef ops_scatter_table[];   extern const int ops_scatter_count;
extern const OpDef ops_embedding_bag_table[]; extern const int ops_embedding_bag_count;
extern const OpDef ops_embedding_bag_backward_table[]; extern const int ops_embedding_bag_backward_count;
extern const OpDef ops_pool_backward_table[]; extern const int ops_pool_backward_count;
extern const OpDef ops_repeat_interleave_table[]; extern const int ops_repeat_interleave_count;
extern const OpDef ops_weight_norm_table[];   extern const int ops_weight_norm_count;
extern const OpDef ops_fake_quant_table[];    extern const int ops_fake_quant_count;
extern const OpDef ops_rnn_cell_table[];      extern const int ops_rnn_cell_count;
extern const OpDef ops_transformer_table[];   extern const int ops_transformer_count;
extern const OpDef ops_sample_table[];    extern const int ops_sample_count;
extern const OpDef ops_grid_backward_table[]; extern const int ops_grid_backward_count;
extern const OpDef ops_lowp_mm_table[];   extern const int ops_lowp_mm_count;
extern const OpDef ops_upsample_backward_table[]; extern const int ops_upsample_backward_count;
extern const OpDef ops_segment_table[];   extern const int ops_segment_count;
extern const OpDef ops_ctc_table[];       extern const int ops_ctc_count;
extern const OpDef ops_flex_attention_table[]; extern const int ops_flex_attention_count;
extern const OpDef ops_mkldnn_table[];      extern const int ops_mkldnn_count;
extern const OpDef ops_histogram_table[]; extern const int ops_histogram_count;
extern const OpDef ops_unique_table[];    extern const int ops_unique_count;
extern const OpDef ops_linalg_ext_table[]; extern const int ops_linalg_ext_count;
extern const OpDef ops_window_table[];    extern const int ops_window_count;
/* ops implemented by their decomposition (core/ops/decomp_*.c, see decomp.h) */
extern const OpDef ops_decomp_pointwise_table[]; extern const int ops_decomp_pointwise_count;
extern const OpDef ops_decomp_shape_table[];     extern const int ops_decomp_shape_count;
extern const OpDef ops_decomp_reduce_table[];    extern const int ops_decomp_reduce_count;
extern const OpDef ops_decomp_nn_table[];        extern const int ops_decomp_nn_count;
extern const OpDef ops_decomp_foreach_table[];   extern const int ops_decomp_foreach_count;
extern const OpDef ops_decomp_range_table[];     extern const int ops_decomp_range_count;

/* complex math of the elementwise ops (core/ops/ops_complex.c): the element function of op (a
 * registry name; NULL when op has no complex math), and whether its result is real (abs) */
typedef struct MiCx { double re, im; } MiCx;
typedef MiCx (*ComplexFn)(const MiCx *z, int nin, double alpha);
ComplexFn complex_pointwise_fn(const char *op);
bool complex_to_real(const char *op);

/* the meta of a linear-algebra result (core/ops/ops_linalg.c): x's first nb (batch) dims, then
 * r and c (either may be NULL: a vector or one value per matrix), column-major in the last two
 * when asked (LAPACK's layout, as ATen returns its factors) */
void linalg_mat_meta(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, int nb, Expr *r, Expr *c, DType dt, bool colmajor);

/* grid_sampler's compute_source_index (core/ops/ops_pool.c): grid coordinate c in [-1, 1] to a
 * pixel coordinate of a dim of `size`, with padding 0 zeros / 1 border / 2 reflection */
double grid_coord(double c, int64_t size, int pad, bool align);
/* ... and its padding step alone, on a pixel coordinate (compute_coordinates) */
double grid_pad(double c, int64_t size, int pad, bool align);
/* grid_sampler_2d's kernel (core/ops/ops_pool.c): o [N, C, H', W'] = x [N, C, H, W] sampled at
 * grid [N, H', W', 2]; mode 0 bilinear / 1 nearest / 2 bicubic, pad as grid_coord */
void grid_sample_2d(const Tensor *x, const Tensor *grid, Tensor *o, int mode, int pad, bool align);

/* The source taps of output coordinate dst along one resampled dim of in -> out elements
 * (core/ops/ops_pool.c, ATen's UpSample.h: area_pixel_compute_scale with the given scale factor
 * (0: none), area_pixel_compute_source_index): linear gives 2 (index, weight) taps, the upper
 * clamped to in - 1; cubic gives 4 taps at floor(src) - 1 .. + 2 clamped into [0, in - 1] with
 * the A = -0.75 coefficients. Returns the count. Example: linear 2 -> 4, dst 1, no align:
 * src 0.25 -> (0, 0.75), (1, 0.25). */
int resample_taps(bool cubic, int64_t in, int64_t out, bool align, double scale, int64_t dst, int64_t *idx, double *w);

/* generic infer_meta used by every row: runs row->shape on the node's arguments */
int op_infer_generic(MiCtx *ctx, Graph *g, const Node *n, TensorMeta *out, int *nout);

#endif
