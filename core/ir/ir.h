/* ir.h — the loop-level IR between the FX graph and the scheduler (Inductor's ir.py, small).
 *
 *   TensorBox (IrTBox)  ->  StorageBox (IrStorage)  ->  Buffer
 *
 * A TensorBox is what a graph node evaluates to: a dtype, a size, and a loader (IrFn) that
 * maps an index (one Expr per dim) to a value through the ops handler. Views (permute, select,
 * reshape, ...) are TensorBoxes whose loader re-indexes another TensorBox's loader (GenericView);
 * views over realized buffers reduce to a strided load (ReinterpretView, see ir_probe_strided).
 * A StorageBox holds an unrealized Pointwise inner function until it is realized into a
 * ComputedBuffer, whose body is recorded once into a LoopBody (SSA ops + index expressions over
 * loop variables p0, p1, ...). Buffers are InputBuffer (graph placeholders), ComputedBuffer
 * (Pointwise or Reduction body) and ExternKernel (mm/addmm/bmm/attention, cond, and FallbackKernel:
 * an op with a reference implementation but no lowering, run by calling it, core/ir/ir_fallback.c).
 *
 * Everything is owned by the IrModule's arena; expressions live in ctx->sym. */
#ifndef IR_H
#define IR_H

#include "fx/graph.h"
#include "ir/ops_handler.h"
#include "base/tensor.h"

/* ---- layouts ---- */
typedef struct Layout {
    bool fixed;           /* FixedLayout (inputs, outputs, extern results) vs FlexibleLayout */
    bool non_owning;      /* NonOwningLayout: a slice of another buffer's storage (Buffer.alias_of) */
    bool multi;           /* MultiOutputLayout: a FallbackKernel's (or the attention's) own
                             buffer, which holds no storage; its results are MultiOutput buffers
                             (Buffer.items). ndim 0; dtype the first result's */
    DType dtype;
    Device device;
    int ndim;
    Expr **size, **stride;
    Expr *offset;
} Layout;

/* ---- recorded loop bodies ---- */
typedef enum {
    LOP_LOAD, LOP_STORE, LOP_CONST, LOP_INDEX_EXPR, LOP_TO_DTYPE, LOP_MATH,
    LOP_REDUCTION, LOP_GETITEM, LOP_STORE_REDUCTION, LOP_INDIRECT, LOP_SCAN, LOP_BUCKETIZE
} LoopOpKind;

typedef struct LoopOp {
    LoopOpKind kind;
    DType dtype;          /* result dtype (store: the stored value's) */
    DType src_dtype;      /* to_dtype / reduction source */
    IrMathOp op;
    IrReduceType rtype;
    int args[4];          /* earlier op indices (4: ops.randint64) */
    int index;            /* into LoopBody.indexes (load/store/index_expr) */
    Buffer *buf;
    double cval;          /* constant */
    int item;             /* getitem */
    bool atomic_add;      /* store: mode "atomic_add" (a Scatter accumulating) */
    /* indirect_indexing: args[0] is the index value; `sym` the symbol ("indirect0") later
     * indexes use for it; `size` the extent of the indexed dim */
    Expr *sym, *size;
    bool check, wrap_neg;
    /* scan / sort: args[0..nargs) the values, dtype / src_dtype their dtypes */
    IrScanOp sop; int sflags, nargs;
    /* bucketize: args[0] the value, args[1] the run's offset */
    const IrBoundaries *bnd;
} LoopOp;

typedef struct LoopBody {
    int nvars;            /* loop variables p0..p(nvars-1): npoint pointwise then nred reduction */
    int npoint, nred;
    Expr **vars;          /* the symbols p0.. */
    Expr **ranges;        /* their sizes */
    int dim_of_var[MI_MAX_DIMS * 2];   /* which output / reduction dim each var walks */
    Expr **indexes; int nindexes;
    LoopOp *ops; int nops, capops;
    int cap_indexes;
    int nindirect;        /* indirect_indexing ops: symbols indirect0..indirect(n-1) */
    SymCtx *sym;          /* where the index expressions live (replay substitutes in it) */
} LoopBody;

/* Replay a recorded body against any handler; returns the handle of the last op. */
IrVal loop_body_run(const LoopBody *b, OpsHandler *h);
/* True when e uses an indirect index symbol (indirectK in bodies, tmpK in dependencies): the
 * element it names is known only at run time (Inductor's SymT.TMP / SymT.INDIRECT). */
bool ir_index_is_indirect(const Expr *e);
/* Number of math ops (a size measure). */
int loop_body_math_count(const LoopBody *b);

/* ---- inner functions (define-by-run closures) ---- */
typedef struct IrFn IrFn;
typedef IrVal (*IrFnCall)(const IrFn *fn, OpsHandler *h, Expr *const *index);
struct IrFn {
    IrFnCall call;
    DType dtype;
    int cost;             /* ops in this closure tree, for the "too large" realization rule */
    /* per-kind data (see core/lowering/lowering_boxes.c) */
    const IrFn *a[4];
    int na;
    int op;
    double c;
    Expr *e;
    Expr **map; int nmap; int nin;   /* reindex: in-index k = map[k](out index placeholders) */
    Expr *lo, *hi, *step; int dim;   /* scatter masks */
    struct IrStorage *sb;
    Buffer *buf;
    const Layout *view;   /* strided load: layout of the view over buf (NULL: buf's own) */
    SymCtx *sym;          /* for building index expressions at call time */
    /* indirect indexing (core/lowering/lowering_gather.c): per indexed dim k < nia, the index
     * tensor's loader ia[k] (NULL: that dim is walked as a slice) and the dim's extent isize[k];
     * rank: dims of the (broadcast) index tensors; start: output dim where they begin */
    const IrFn **ia; Expr **isize; int nia, rank, start;
    bool check, wrap_neg;
    /* bucketize (core/lowering/lowering_bucketize.c): the boundaries ops.bucketize searches */
    const IrBoundaries *bnd;
    /* an output indexer (Scatter): fills out[] with the element that iteration idx writes */
    void (*index_call)(const IrFn *f, OpsHandler *h, Expr *const *idx, Expr **out);
};

/* ---- buffers ---- */
typedef enum { BUF_INPUT, BUF_COMPUTED, BUF_EXTERN } BufKind;
typedef enum { EXT_MM, EXT_ADDMM, EXT_BMM, EXT_SDPA, EXT_COND, EXT_FALLBACK, EXT_CONV, EXT_MULTI_OUTPUT, EXT_CONCAT } ExternKind;
/* "mm", "addmm", "bmm", "sdpa", "cond", "fallback", "convolution", "multi_output", "concat"
 * ("?" for anything else) */
const char *ir_extern_kind_name(ExternKind k);

/* extern_kernels.convolution (Inductor's ir.Convolution, an ExternKernelAlloc): eargs are x,
 * weight and the optional bias; the parameters are the node's (static ints). Like a
 * FallbackKernel it carries `fb` (the node's reference implementation runs it where oneDNN is
 * not there: IR interpreter, a build without oneDNN, other dtypes, the GPU's host round trip);
 * the C module calls oneDNN (core/codegen/codegen_conv.c). */
typedef struct IrConv {
    int nd;                        /* spatial dims: 1, 2 or 3 */
    bool transposed;
    int64_t groups;
    int64_t stride[3], padding[3], dilation[3], output_padding[3];
} IrConv;

/* FallbackKernel (core/ir/ir_fallback.c): a registry op with a reference implementation but no
 * lowering, run at run time by calling that implementation (Inductor's FallbackKernel, which
 * calls the ATen op). eargs are the node's tensor arguments, realized, in the order
 * ir_fallback_eval meets node references (args then kwargs, depth first); SymInt node arguments
 * are evaluated from the size symbols. outs[k] is the buffer of result item k (NULL for an item
 * that is not a tensor): as ir.FallbackKernel.create's generate_output, every tensor item is a
 * MultiOutput buffers (see Buffer.items); the fallback's own buffer has a MultiOutputLayout. */
typedef struct IrFallback {
    const Node *node;              /* the graph node (its args, kwargs and op) */
    const char *kernel;            /* "aten.embedding.default" */
    bool tuple;                    /* the op returns a tuple: outs[k] is item k */
    bool on_clone;                 /* Inductor runs the in-place form on clone(argument 0)
                                      (ScatterFallback / IndexPutFallback: scatter_reduce ->
                                      scatter_reduce_(clone(x), ...)): the result is that
                                      clone's storage, mutated (memory.py: a rename, no cost) */
    struct Buffer **outs; int nouts;
} IrFallback;

/* higher_order.cond (core/ir/ir_cond.c): eargs[0] is the predicate (one element), eargs[1..] the
 * operands, laid out as the branches' inputs expect; the cond buffer is result 0 and owns the
 * other results (extern_owner). Each branch is its own IrModule, lowered on its own. */
typedef struct IrCond {
    const char *names[2];          /* subgraph names: taken when pred is true / false */
    struct IrModule *branch[2];
    struct Buffer **outs; int nouts;   /* outs[0] is the cond buffer */
    /* higher_order.while_loop (Inductor's ir.WhileLoop) shares this: branch[0] is cond_fn (one
     * bool element), branch[1] body_fn; eargs[0..ncarried) are the carried inputs, laid out as
     * the carried results (outs), the rest the additional inputs; no predicate argument. */
    bool is_while;
    int ncarried;
} IrCond;

/* An extern kernel's tensor argument: the buffer and the view it is read through. follows: the
 * view is the whole of a buffer whose layout is still flexible (mm_args' realize_inputs does not
 * freeze it), so GraphLowering.finalize's decide_layout may still choose its strides and the view
 * takes them then (ir_extern_args_follow). */
typedef struct ExternArg { Buffer *buf; Layout view; bool follows; } ExternArg;

/* Inductor's ir.Scan / ir.Sort (core/lowering/lowering_scan.c): output `output_index` of the
 * scan (or sort) along dim `axis` of the n values fns[k] (of dtypes[k]): one buffer per output,
 * each recording the whole scan (the scheduler fuses them; the kernel computes it once). */
typedef struct IrScan {
    IrScanOp op; int flags;       /* SCAN_SORT: SCAN_STABLE | SCAN_DESCENDING */
    int n; const IrFn *fns[2]; DType dtypes[2];
    int axis, output_index;
} IrScan;

/* How a buffer's body was recorded (ir_trace_body / ir_trace_scatter keep it), so that it can be
 * recorded again once a layout is decided later than the body: Inductor records bodies after
 * GraphLowering.finalize (decide_layout) and after require_stride_order froze a FlexibleLayout;
 * we record at realization and replay the recipe (core/ir/ir_layout.c ir_retrace_all). */
typedef struct IrTrace {
    const IrFn *fn, *indexer;      /* inner function; a Scatter's output indexer */
    int ndim, nred;
    Expr **size, **rsize;
    IrReduceType rt;
    int welford_item;
    bool by_layout;                /* loop nesting from the layout's strides (pointwise) */
    bool scatter, atomic_add;
    const IrScan *scan;            /* a Scan / Sort body (ir_trace_scan) */
} IrTrace;

struct Buffer {
    int id;               /* position in IrModule.bufs */
    int born;             /* when its inner function captured its inputs' loaders: the buffer
                             count then (its storage's, lw_realize; else its id). A body records
                             a storage realized at or after it inlined (IrModule.capture) */
    const char *name;     /* "buf3", or the placeholder name for inputs */
    BufKind kind;
    Layout layout;
    const Node *origin;   /* node that realized it */
    const Node *producer; /* node whose value it holds (the origin, or for a pending value realized
                             by a consumer, the node that computed it); provenance: ir_origins.c */
    const char **origins; int norigins;   /* op short names of the nodes folded into it */
    /* BUF_INPUT */
    int input_index;      /* tensor-placeholder position */
    bool mutated;         /* some copy_ or Scatter writes it (V.graph.mutated_buffers) */
    /* BUF_COMPUTED */
    LoopBody *body;
    IrTrace *trace;       /* how body was recorded (NULL: not replayable) */
    bool is_reduction;
    IrReduceType rtype;
    const IrScan *scan;   /* ir.Scan / ir.Sort: the body's one reduction var is the scanned dim */
    Buffer *mutates;      /* stores go to this input buffer instead (copy_) */
    bool inplace_alias;   /* mutates: an in-place foreach item whose own buffer writes into the
                             input (Inductor's realize_into with unsafe_alias: the result's layout
                             becomes MutationLayout(input)); later readers of the item load it,
                             i.e. the input's storage after this node wrote it. Also an
                             index_put_ Scatter into an input (its readers: ir_deps.c) */
    /* BUF_EXTERN */
    ExternKind ext;
    ExternArg *eargs; int neargs;
    double scale;         /* sdpa */
    bool causal;          /* sdpa: key j attends query i only when j <= i; eargs[3]: the mask */
    /* sdpa: a MultiOutputLayout whose items are the attention's results: [0] out, [1] the
     * logsumexp (NULL: none), and the efficient kernel's [2] philox seed and [3] offset (i64
     * scalars, 0: no dropout; nitems 2 on the CPU flash kernel) */
    Buffer *extern_owner; /* set on cond results after the first */
    /* MultiOutput (Inductor's ir.MultiOutput): ext EXT_MULTI_OUTPUT, item `mo_index` of the
     * result of `mo_of` (a buffer with a MultiOutputLayout; eargs[0] is it): its own scheduler
     * node, which reads mo_of and runs nothing (the wrapper's `buf4 = buf3[0]`): mo_of's call
     * writes the item's storage. On mo_of: items[k] is the MultiOutput of item k (NULL: none) */
    Buffer *mo_of; int mo_index;
    Buffer **items; int nitems;
    /* ConcatKernel (ir.ConcatKernel, EXT_CONCAT, a NopKernelSchedulerNode: no code): eargs are
     * its inputs, each a buffer with alias_of = it whose NonOwningLayout is its slice (the
     * cat's strides, the slice's offset): they store straight into its storage (realize_into) */
    Buffer *alias_of;
    IrCond *cond;         /* EXT_COND */
    IrFallback *fb;       /* EXT_FALLBACK (set on the owner); EXT_CONV: its reference */
    IrConv *conv;         /* EXT_CONV */
    bool side_effect;     /* run for its effect (an error check: _linalg_check_errors): no result
                             anyone reads, never dead (Inductor's has_side_effects) */
    bool dead;            /* a ComputedBuffer no live node reads (ir_mark_dead: Inductor's
                             Scheduler.dead_node_elimination, before ir_pre_fusion.txt) */
    /* graph outputs */
    int output_index;     /* >= 0: this buffer is outputs[output_index] */
};

/* ---- tensor boxes ---- */
typedef struct IrStorage {
    Buffer *buf;          /* realized (or input) */
    const IrFn *fn;       /* pending pointwise inner function */
    const IrFn *fn0;      /* the inner function it had before it was realized: a function that
                             captured this storage's loader before then computes it inline
                             (Inductor's make_loader returned the Pointwise's inner_fn) */
    int born;             /* IrModule.nbufs when it was made (its inner function's capture) */
    struct IrModule *m;
    DType dtype;
    int ndim; Expr **size;
    int nusers;           /* graph users of the node that produced it */
    const char **origins; int norigins;
    const Node *node;
} IrStorage;

typedef struct IrTBox {
    DType dtype;
    int ndim; Expr **size;
    const IrFn *loader;   /* index -> value */
    IrStorage *sb;        /* the storage when this box is not a view */
    IrStorage *view_of;   /* a view: the storage it looks at (NULL when unknown) */
    const char **origins; int norigins;
    bool is_view;
    bool generic;         /* a view Inductor keeps as a generic View (a reindexing of a value
                             that was no storage with a layout when viewed: a pending value or
                             another generic View), not a ReinterpretView */
} IrTBox;

/* One foreach op's realized items, in item order (arena memory). */
typedef struct IrList { Buffer **bufs; int n; const Node *node; } IrList;

/* An unbacked SymInt (u0) and where its value comes from (Inductor's unbacked_bindings): the
 * one element of `buf` (dim -1: `.item()`, aten._local_scalar_dense, Inductor's DynamicScalar)
 * or buf's size along `dim` after the FallbackKernel that writes it ran (nonzero,
 * masked_select). Generated code defines it there, as codegen_unbacked_symbol_defs does
 * (core/lowering/lowering_unbacked.c). */
typedef struct IrUnbacked {
    const char *name; Buffer *buf; int dim; Expr *offset;
    int order;   /* dim -1: the buffers made before the DynamicScalar (its min_order in the
                    scheduler's node order: core/scheduler/sched_kernels.c) */
} IrUnbacked;

/* ---- the module ---- */
typedef struct IrModule {
    MiCtx *ctx;
    const Graph *graph;
    Arena arena;
    Buffer **bufs; int nbufs, capbufs;          /* inputs first, then in creation order */
    Buffer **inputs; int ninputs;               /* tensor placeholders */
    Buffer **outputs; int noutputs;             /* NULL for None outputs */
    Layout **out_views;                         /* per output: the layout the caller sees when the
                                                   output is a view of a computed buffer written in
                                                   place (bias grad [1, 128] returned as [128]); NULL
                                                   entries: the buffer's own layout */
    const char **sym_names; int nsyms;          /* order of the syms argument */
    IrUnbacked *unbacked; int nunbacked;        /* the unbacked ones among them (also in
                                                   sym_names: kernels read them from syms) */
    const char **guards; int nguards, capguards;/* what the compiled module assumes */
    int next_buf;                               /* bufN counter */
    const char *name_prefix;                    /* cond branch: "true_graph_0_" (buffers, ops,
                                                   kernels are named with it); NULL at top */
    Graph *owned_graph;                         /* the functionalized copy `graph` points to, when
                                                   ir_lower had to make one; freed with m */
    Graph **scratch; int nscratch;              /* graphs lowered inline (a foreach op's
                                                   per-item decomposition); freed with m */
    IrList *lists; int nlists;                  /* Inductor's V.graph.lists: per _foreach_* op
                                                   whose items a GPU target realizes, its item
                                                   buffers (register_operation_list); the
                                                   scheduler makes each a combo kernel */
    int capture;                                /* 1 + the born of the inner function being
                                                   run (0: none): a realized storage whose buffer
                                                   is that new or newer is computed inline, as
                                                   the loader the function captured did */
    bool probe_loads;                           /* lw_probe_view is running: a realized
                                                   storage is read through its buffer (as
                                                   make_indexer does), never computed inline */
    struct IrScatterIndex *scatter_index;       /* ir_deps.c's cache: per input, the in-place
                                                   Scatters into it (built on first use, again
                                                   after buffers were added) */
} IrModule;

/* The definition of unbacked symbol `name` in m, or NULL (a backed symbol, or none). */
const IrUnbacked *ir_unbacked_find(const IrModule *m, const char *name);
/* Does layout l (of a buffer of m) name an unbacked symbol; `late`: one defined inside the
 * module (its storage is allocated once it is known, not from the arena taken on entry)?
 * Example: masked_select's f32[u0], full([u0]) after it. */
bool ir_layout_unbacked(const IrModule *m, const Layout *l, bool late);
/* Does expression e (a size, a numel) name an unbacked symbol of m, wherever defined (an item()
 * of a graph input too)? Inductor's free_unbacked_symbols(e) is not empty: no size hint. */
bool ir_expr_unbacked(const IrModule *m, const Expr *e);
/* Is b a FallbackKernel result whose size its call decides (it defines an unbacked u0)? */
bool ir_defines_unbacked_size(const IrModule *m, const Buffer *b);
/* Is b a FallbackKernel result its call allocates: one defining an unbacked size, or one sized by
 * a symbol a sibling result of the same call defines (_unique2's counts are [u0], u0 the size
 * of its first result)? The compiled module cannot allocate it before the call. */
bool ir_call_sizes_result(const IrModule *m, const Buffer *b);

/* Some buffer body of m (not its cond branches) uses math op `op` (codegen emits helpers only
 * for what is used: the Philox generator of ops.rand). */
bool ir_module_uses_math(const IrModule *m, IrMathOp op);

/* n is a tensor constant of g: an annotated get_attr that names no subgraph
 * (self._tensor_constant0). The lowering makes each an input after the placeholders, in graph
 * order, and the runtime passes the session's value (mi_const_get) there. */
bool ir_is_tensor_constant(const Graph *g, const Node *n);

/* What subgraph k of c is, for headers: "true branch" / "false branch", or "cond_fn" / "body_fn"
 * of a while_loop. */
const char *ir_cond_role(const IrCond *c, int k);
/* Free a cond's branch modules (idempotent; ir_free calls it). */
void ir_cond_free(IrCond *c);
/* Name a lowered branch `prefix` + its names, as Inductor does ("true_graph_0_buf0"); nested
 * branches get the prefix too. */
void ir_cond_set_prefix(IrModule *branch, const char *prefix);
/* The IR of every cond branch of m (recursively), each under a "subgraph NAME:" header. */
void ir_print_branches(const IrModule *m, StrBuf *sb);
/* "" or m->name_prefix */
const char *ir_prefix(const IrModule *m);

void ir_free(IrModule *m);

/* Text in the style of Inductor's ir_pre_fusion.txt (one block per computed/extern buffer). */
char *ir_print(const IrModule *m);

/* Provenance (core/ir/ir_origins.c). The FX nodes buffer b was made from (Inductor's origins):
 * b->origin and the nodes inlined into it, graph order; *out malloc'd, count returned. */
int ir_origin_nodes(const IrModule *m, const Buffer *b, const Node ***out);
/* The same for many buffers of one module: the module's producers are counted once
 * (ir_origins_new), each ir_origins_of then costs the nodes its walk visits. */
typedef struct IrOrigins IrOrigins;
IrOrigins *ir_origins_new(const IrModule *m);
int ir_origins_of(IrOrigins *w, const Buffer *b, const Node ***out);
void ir_origins_free(IrOrigins *w);
/* For a kernel made of bufs: the source node names ("add, relu") into names and the ATen
 * overload packets ("aten.add, aten.relu") into aten, as Inductor's "Topologically Sorted
 * Source Nodes: [...], Original ATen: [...]" comment lists them. */
void ir_source_nodes_comment(const IrModule *m, const Buffer *const *bufs, int nb, StrBuf *names, StrBuf *aten);
/* One buffer's block. */
void ir_print_buffer(const IrModule *m, const Buffer *b, const char *opname, StrBuf *sb);
/* ir_print_buffer with the group lines chosen: cpp_group prints the C++ backend's simplified
 * group (ir_cpp_group; ir_pre_fusion.txt), false the body's own loops (a fused node's members
 * in ir_post_fusion.txt, whose loops the fusion may have re-split) */
void ir_print_buffer_as(const IrModule *m, const Buffer *b, const char *opname, bool cpp_group, StrBuf *sb);
void ir_print_layout(const Layout *l, StrBuf *sb);
/* Dependency texts as Inductor's pformat prints a set (sorts and dedups `items` in place). */
void ir_print_dep_list(char **items, int n, StrBuf *sb);
/* A buffer's lines inside "opN.outputs = [...]": kind, layout, mutations, users. */
void ir_print_buffer_output(const IrModule *m, const Buffer *b, StrBuf *sb);
/* The body as "class opN_loop_body: ..." text. */
void ir_print_body(const LoopBody *b, const char *opname, StrBuf *sb);

/* Module queries */
Buffer *ir_find_buffer(const IrModule *m, const char *name);
bool ir_is_op(const Buffer *b);                 /* computed or extern (a scheduler node) */
/* Name a loaded/stored buffer goes by in generated code (mutations store to the input, a
 * NonOwningLayout slice to its ConcatKernel's buffer): the buffer whose storage it is. */
const Buffer *ir_store_target(const Buffer *b);
Expr *layout_numel(SymCtx *s, const Layout *l);
Expr *layout_storage_size(SymCtx *s, const Layout *l);   /* offset + extent */
Expr *layout_index(SymCtx *s, const Layout *l, Expr *const *idx);

/* ---- dependencies (core/ir/ir_deps.c) ---- */
typedef enum { DEP_MEMORY, DEP_STAR } DepKind;
typedef struct Dep {
    DepKind kind;
    Buffer *buf;          /* the storage read/written (mutation stores: the input) */
    Expr *index;          /* DEP_MEMORY: over the body's loop vars */
    bool inner;           /* index uses a var past the first `split` vars (see ir_deps_collect) */
    bool scatter;         /* a Scatter's store (index_put, scatter): the element is one a loaded
                             index names, even where size-1 dims dropped the symbol */
    bool fill;            /* a MultiOutputLayout node's write of one of its items' storage (the
                             call fills it; Inductor lists the write under the MultiOutput node,
                             so the IR text leaves it out; memory planning allocates the item
                             here, where its data is made) */
} Dep;
typedef struct DepSet { Dep *reads; int nreads; Dep *writes; int nwrites; } DepSet;
/* Collect reads and writes of a buffer's op (extern: StarDeps). Caller frees with dep_set_free. */
void ir_deps_collect(const IrModule *m, const Buffer *b, DepSet *out);
/* Free the in-place Scatter index ir_deps_collect keeps in m (ir_free calls it). */
void ir_scatter_index_free(IrModule *m);
void dep_set_free(DepSet *d);
/* Scheduler.dead_node_elimination on the lowered module: a ComputedBuffer that is no output,
 * mutates nothing, has no side effect and that no live op reads gets b->dead (lowering
 * realizes such values: GraphLowering.mark_buffer_mutated realizes every pending reader of a
 * mutated buffer, used or not). ir_print, the IR interpreter and the scheduler skip them. */
void ir_mark_dead(IrModule *m);
/* "MemoryDep('buf0', c0, {c0: 64})" / "StarDep(name='buf0', mode=None)": the index normalized
 * as Inductor prints it (dep_normalize: size-1 vars dropped, contiguous vars merged, c0.. names). */
void dep_print(const Dep *d, const LoopBody *body, SymCtx *S, StrBuf *sb);
Expr *dep_normalize(SymCtx *S, Expr *index, const LoopBody *b, Expr **vars, Expr **sizes, int *nv);
/* dep_print into a malloc'd string. */
char *ir_dep_text(const Dep *d, const LoopBody *body, SymCtx *S);

/* ---- interpreter (core/ir/ir_interp.c) ---- */
#include "ops/interp.h"
/* Run the IR (buffers in creation order) on inputs as interp_run takes them, tensor constants
 * from the session (mi_const_get). A module with a complex buffer is refused (one double per
 * element here). */
int ir_interp_run(MiCtx *ctx, IrModule *m, IValue *inputs, int ninputs, IValue **outs, int *nouts);

/* ---- scans and sorts on one row (core/ir/ir_scan.c) ---- */
/* Scan (or sort) one row: in[k][0..len) value k of each element (k < n), results into out[k]. */
void ir_scan_row(IrScanOp op, int flags, DType dt, int n, double *const *in, int64_t len, double *const *out);
double ir_scan_logaddexp(double a, double b);
bool ir_scan_arg_keeps(bool is_min, bool is_float, double av, double ai, double bv, double bi);

/* ---- fallback kernels (core/ir/ir_fallback.c) ---- */
/* True when op (a registry row) may run as a FallbackKernel: it has a reference implementation
 * and is not in-place or a higher-order op (an effect-only op runs as one with no result:
 * _linalg_check_errors raises). */
bool ir_fallback_ok(const struct OpDef *op);
/* Run node n's reference implementation: its tensor arguments are args[0..nargs) in eargs order
 * (wrapping caller memory is fine: nothing is kept), SymInt nodes and symbolic constants are
 * evaluated with syms; result item k (or the single result, k = 0) is copied into outs[k] (NULL:
 * not wanted). -1 + ctx error naming the node. */
int ir_fallback_eval(MiCtx *ctx, const Graph *g, const Node *n, Tensor *const *args, int nargs,
                     Tensor *const *outs, int nouts, const SymBinding *syms, int nsyms);
/* The same, and each result k with no buffer (outs[k] NULL) handed back in fresh[k] (a new
 * reference; fresh may be NULL): a result whose size only the call knows (nonzero's u0). */
int ir_fallback_eval_fresh(MiCtx *ctx, const Graph *g, const Node *n, Tensor *const *args, int nargs,
                           Tensor *const *outs, int nouts, const SymBinding *syms, int nsyms, Tensor **fresh);
/* A tensor over caller memory (not freed by tensor_unref; the caller frees it with
 * ir_fallback_unwrap, which reports -1 + ctx error if the op kept a reference). */
Tensor *ir_fallback_wrap(void *data, DType dt, int ndim, const int64_t *size, const int64_t *stride, int64_t offset);
void ir_fallback_unwrap(Tensor *t);

/* ---- internals shared by lowering/ir.c ---- */
Buffer *ir_new_buffer(IrModule *m, BufKind kind, const Layout *l);
void ir_add_guard(IrModule *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record a body: ranges of the output (`ndim` sizes, with `order` giving loop nesting of output
 * dims by decreasing stride) and reduction ranges; fn gets the concatenated index. */
/* Inductor's loop order of a pointwise body (pick_loop_order over its stores and loads):
 * order[k] the output dim at nesting level k; false when it has no memory access. */
bool ir_pick_loop_order(IrModule *m, const LoopBody *b, int ndim, Expr *const *size, int *order);
/* The same over the dims d0.. d0 + ndim - 1 walked by the vars k0 <= k < k1 (a reduction's
 * reduced dims: d0 its output rank, the vars after npoint). */
bool ir_pick_dims_order(IrModule *m, const LoopBody *b, int d0, int ndim, int k0, int k1, Expr *const *size, int *order);
LoopBody *ir_trace_body(IrModule *m, Buffer *buf, const IrFn *fn, int ndim, Expr **size,
                        const int *order, int nred, Expr **rsize, IrReduceType rt, int welford_item);
/* Record a Scatter body (Inductor's ir.Scatter store_output): for each point p of `size`
 * (natural loop order), the index indexer->index_call(p) into buf's store target is computed
 * first, then the value fn(p), then ops.store (atomic_add: ops.store(..., mode="atomic_add")). */
LoopBody *ir_trace_scatter(IrModule *m, Buffer *buf, const IrFn *fn, const IrFn *indexer, int ndim,
                           Expr **size, bool atomic_add);
/* Record a Scan / Sort body (Inductor's Scan.store_reduction): loop vars over the dims of
 * `size` but sc->axis (in order), then the scanned dim as the one reduction var; the values
 * sc->fns at that index, ops.scan / ops.sort, getitem of each item, then ops.store of item
 * sc->output_index at the element (every element is written, unlike a reduction). */
LoopBody *ir_trace_scan(IrModule *m, Buffer *buf, const IrScan *sc, int ndim, Expr **size);
/* If loader is a plain strided read of a buffer, fill *buf and *view (size from `size`). */
bool ir_probe_strided(IrModule *m, const IrFn *loader, int ndim, Expr **size, Buffer **buf, Layout *view);
Layout layout_contiguous(IrModule *m, DType dt, Device dev, int ndim, Expr **size);

/* ---- stride orders and layout decisions (core/ir/ir_layout.c) ---- */
/* Inductor's get_stride_order: order[d] = rank of dim d's stride (0 = smallest; equal strides:
 * the later dim ranks lower, as utils.argsort). False when a stride is symbolic. */
bool ir_stride_order(Expr *const *stride, int n, int *order);
/* FlexibleLayout.stride_ordered(size, order) into stride[] (channels last: order [3, 0, 2, 1]
 * gives [H*W*C, 1, W*C, C]). */
void ir_strides_for_order(SymCtx *s, Expr *const *size, int n, const int *order, Expr **stride);
/* Layout.is_stride_ordered: strides follow `order`, size-1 dims ignored (symbolic: false). */
bool ir_layout_stride_ordered(const Layout *l, const int *order);
/* Loop nesting of a layout's dims by decreasing stride (stable; identity if symbolic). */
void ir_layout_loop_order(const Layout *l, int *order);
/* Give computed buffer b the strides `stride` (fixed from now on) and record its body again. */
void ir_relayout(IrModule *m, Buffer *b, Expr *const *stride);
/* Record every replayable body again, in creation order (after layouts changed). */
void ir_retrace_all(IrModule *m);
/* GraphLowering.finalize: each computed buffer whose layout is still flexible takes the stride
 * order of its reads (ComputedBuffer.decide_layout: get_fill_order with pick_loop_order), then
 * every layout is fixed. True when some layout changed (bodies need ir_retrace_all). */
bool ir_decide_layouts(IrModule *m);
/* ComputedBuffer.decide_layout of one buffer now (fill order from its reads); true when relaid */
bool ir_decide_layout(IrModule *m, Buffer *b);
/* After the layouts are decided: every extern argument that follows its buffer's layout
 * (ExternArg.follows) takes the strides decide_layout gave the buffer. */
void ir_extern_args_follow(IrModule *m);
Expr *ir_simplify(IrModule *m, Expr *e, const LoopBody *b);

/* A C++ scheduler node's loop sizes as Inductor sees them (SchedulerNode.group after
 * ComputedBuffer.simplify_and_reorder: each loop set reordered by pick_loop_order, then
 * neighbours the indexes walk as one merged; core/ir/ir_loop_order.c). A sum over [2, 9] x [16]
 * whose indexes are 144*p0 + 16*p1 + p2 and 9*p0 + p1 is ((18,), (16,)). */
typedef struct IrGroup { int nv, nr; Expr *v[MI_MAX_DIMS * 2], *r[MI_MAX_DIMS * 2]; } IrGroup;
bool ir_cpp_group(SymCtx *S, const LoopBody *b, IrGroup *g);
/* scheduler.pick_loop_order: the n dims (0..n-1) fastest first into v, by the absolute stride
 * hints sl[a][dim] of na memory accesses (the dim with the smaller stride in more accesses
 * first, size-1 dims last, ties the later dim first), sorted as CPython's list.sort does. */
void ir_pick_loop_sort(int *v, int n, int64_t (*sl)[MI_MAX_DIMS * 2], int na, Expr *const *sizes);
/* two size lists equal (interned expressions) */
bool ir_group_eq(const Expr *const *a, int na, const Expr *const *b, int nb);
/* "((18,), (16,))" as ir_pre_fusion.txt prints a group's iteration */
void ir_group_print(const IrGroup *g, StrBuf *sb);

#endif
