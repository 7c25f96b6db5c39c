/* ops.h — the registry of ATen (and prims/higher-order) operators: one row per op with its
 * flags, meta inference and reference implementation. Adding an op = adding a row.
 *
 * Graphs load even when they use ops not in the registry (node->op == NULL); every place that
 * needs such an op reports "unsupported op 'aten.foo.default' (node 'foo')".
 *
 * The rows live in family tables: core/ops/ops_pointwise.c (+ special.c's special functions),
 * ops_view.c, ops_reduce.c, ops_matmul.c, ops_conv.c, ops_index.c, ops_scatter.c, ops_scan.c,
 * ops_pool.c, ops_linalg.c and ops_linalg_ext.c (LAPACKE), ops_random.c, ops_misc.c, ops_embedding_bag.c,
 * ops_sample.c (grid_sampler_3d, antialiased resize, fractional max pool), ops_grid_backward.c,
 * ops_upsample_backward.c, ops_lowp_mm.c (_scaled_mm, _int_mm, _weight_int8pack_mm), ops_segment.c, ops_ctc.c,
 * ops_embedding_bag_backward.c, ops_pool_backward.c (adaptive / fractional max pool and replication
 * pad gradients), ops_repeat_interleave.c, ops_amp.c (GradScaler's unscale and scale update),
 * ops_histogram.c, ops_unique.c (data-dependent sizes), and the ops implemented by their
 * PyTorch decomposition, written once in decomp_pointwise.c, decomp_shape.c, decomp_reduce.c,
 * decomp_nn.c, decomp_foreach.c, decomp_range.c (core/ops/decomp.h: the interpreter, meta inference and
 * decompose_graph use the same function). core/ops/ops.c joins them.
 * Adding an op = a row {name, flags, op_infer_generic, eval, doc, shape, data}: `shape`
 * computes the result metas from a ShapeArgs (core/ops/ops_impl.h), which reads arguments the same
 * way from a graph node (symbolic sizes) and from a runtime call (concrete sizes), so
 * infer_meta and eval share one shape computation. */
#ifndef OPS_H
#define OPS_H

#include "fx/graph.h"
#include "base/tensor.h"

enum {
    OPF_POINTWISE   = 1 << 0,   /* elementwise with broadcasting */
    OPF_REDUCTION   = 1 << 1,
    OPF_VIEW        = 1 << 2,   /* result aliases its first argument */
    OPF_INPLACE     = 1 << 3,   /* mutates its first argument (add_, copy_) */
    OPF_EXTERN      = 1 << 4,   /* matmul family, attention: an extern kernel */
    OPF_TUPLE       = 1 << 5,   /* returns a tuple (read with getitem) */
    OPF_CONSTRUCTOR = 1 << 6,   /* full, zeros, iota: no tensor inputs */
    OPF_RANDOM      = 1 << 7,
    OPF_SCATTER     = 1 << 8,   /* functional scatter: slice_scatter, select_scatter, index_put */
    OPF_HOP         = 1 << 9,   /* higher-order op with subgraph arguments */
    OPF_NOEFFECT    = 1 << 10,  /* profiler / assert ops removed by passes */
    OPF_LIST_FIRST  = 1 << 11,  /* a tuple whose item 0 is a list, one tensor per tensor of
                                   argument 0 (_amp_foreach_non_finite_check_and_unscale) */
};

/* A runtime value in the interpreter. */
typedef enum { IV_NONE, IV_TENSOR, IV_INT, IV_FLOAT, IV_BOOL, IV_TUPLE, IV_OTHER } IValueKind;
typedef struct IValue IValue;
struct IValue {
    IValueKind kind;
    Tensor *t;                    /* IV_TENSOR (owned reference) */
    int64_t i;                    /* IV_INT, IV_BOOL */
    double f;                     /* IV_FLOAT */
    int n; IValue *items;         /* IV_TUPLE (owned) */
};
void ivalue_clear(IValue *v);     /* releases references, sets IV_NONE */

/* Arguments of one call, resolved: node refs replaced by their runtime values, constants kept.
 * `args`/`kwargs` are the node's Values; `argv` parallels args with IValues for node refs
 * (IV_NONE for constants). A V_LIST/V_TUPLE argument that contains node refs gets an IV_TUPLE
 * whose items parallel the list's items (so cat([a, b]) sees both tensors). */
typedef struct OpCall {
    MiCtx *ctx;
    const Node *node;
    const Graph *graph;
    const Value *args; int nargs;
    const IValue *argv;            /* nargs entries */
    const Kwarg *kwargs; int nkwargs;
    const IValue *kwargv;          /* nkwargs entries */
    const SymBinding *syms; int nsyms;   /* current values of size symbols */
    void *interp;                  /* the interpreter (for higher-order ops) */
    const struct OpDef *op;        /* the registry row being run */
    bool fp64;                     /* float64 reference run: float results are made f64 (ev_new) */
} OpCall;

/* Shape functions see their arguments through ShapeArgs (core/ops/ops_impl.h), which works both on
 * a graph node (symbolic metas from annotations) and on a runtime call (concrete tensors). */
typedef struct ShapeArgs ShapeArgs;
#define OP_MAX_OUTS 64

typedef struct OpDef {
    const char *name;              /* "aten.add.Tensor" */
    unsigned flags;
    /* Fill node->meta from the argument metas (node->has_meta etc.); for tuple-returning ops
     * fills `out[0..*nout)`. Return -1 with ctx error on bad shapes/arity. May be NULL. */
    int (*infer_meta)(MiCtx *ctx, Graph *g, const Node *n, TensorMeta *out, int *nout);
    /* On entry *nout is the capacity of out (<= 0 counts as 1); on return it is the number
     * of results, which may exceed the capacity (then only the first entries were written).
     * OP_MAX_OUTS is always enough. */
    /* Reference implementation: set *out. -1 with ctx error. */
    int (*eval)(const OpCall *call, IValue *out);
    const char *doc;               /* one line */
    /* The shape function behind infer_meta (and used by eval to size its result). */
    int (*shape)(ShapeArgs *sa, TensorMeta *out, int *nout);
    const void *data;              /* per-op parameters for shared implementations */
} OpDef;

const OpDef *op_lookup(const char *name);      /* NULL when unknown; a packet "aten.clone" finds .default */
/* An OpOverloadPacket target ("aten.clone", as reinplace.py's graph_call_function(graph,
 * aten.clone, inp) writes it) -> its default overload "aten.clone.default" in buf; NULL for an
 * overload or another namespace. The packet resolves like the overload (op_lookup, lowering_find),
 * as Inductor's register_lowering registers a packet with its overloads. */
const char *op_packet_default(const char *name, char *buf, size_t n);
/* The error for a node whose target is not in the registry: "unsupported op 'aten.foo.default'
 * (node 'foo')" at the node's line. Returns -1. */
bool op_is_custom(const char *target);   /* a torch.library op of the user's own namespace */
int op_unsupported_err(MiCtx *ctx, const Graph *g, const Node *n);
int op_count(void);
const OpDef *op_at(int i);
/* Resolve node->op for every node of g (and subgraphs). Returns number of unknown ops. */
int ops_resolve_graph(Graph *g);
/* ATen's conjugate / negative bits (core/ops/ops_view_bits.c): of n's result from its inputs'
 * metas; over every op node of g in program order (ops_resolve_graph calls it); and for a
 * backward graph from its forward's same-named nodes (the saved tensors), then derived over
 * bw. The last returns how many placeholders got a bit. */
void op_view_bits(const Node *n, bool *conj, bool *neg);
void ops_view_bits_graph(Graph *g);
int ops_view_bits_from_forward(Graph *bw, const Graph *fw);
/* Infer the meta of node n from its args (used by passes when they create nodes).
 * Sets n->meta/has_meta/annotated. For tuple-returning ops (var_mean, cond) has_meta and
 * annotated are left false, as PyTorch prints them. */
int op_infer_node_meta(MiCtx *ctx, Graph *g, Node *n);
/* Infer without touching n: out[0..*nout) receive the result metas (arrays in g's arena);
 * on entry *nout is the capacity of out (use OP_MAX_OUTS). Tuple ops give one meta per item
 * (an item that is not a tensor gets dtype DT_INVALID). -1 with ctx error naming the node. */
int op_infer_meta(MiCtx *ctx, Graph *g, const Node *n, TensorMeta *out, int *nout);
/* Where item idx of tuple op n's result lies among its flat results (the metas op_infer_meta
 * gives, the tensors a FallbackKernel writes): *first, and *count for a list item (-1 for a
 * tensor item). Flat ops: idx itself. An OPF_LIST_FIRST op: item 0 is results [0, L) (L the
 * length of argument 0's list), item i > 0 is result L + i - 1. False for an index out of range. */
bool op_result_item(const Node *n, int64_t idx, int *first, int *count);
/* The getitem chain of n down to its op: getitem(getitem(op, 0), k) -> op, with its flat result
 * index in *flat; n itself with *flat = -1 when n is no getitem of a tuple op's item. */
const Node *op_getitem_source(const Node *n, int *flat);
/* A deep copy of src into dst (tensors referenced, tuples copied item by item). */
void ivalue_copy(IValue *dst, const IValue *src);
/* 1 when n is a reshape/_unsafe_view that has to copy (its input's strides allow no view),
 * 0 for every other node, -1 with ctx error when its meta cannot be inferred. */
int op_reshape_copies(MiCtx *ctx, Graph *g, const Node *n);

#endif
