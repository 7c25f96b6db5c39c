/* graph.h — the FX graph: nodes in program order, typed argument values, tensor metadata.
 *
 * A Graph owns everything it points to in its arena (names, values, metas), except
 * expressions, which are interned in the session's SymCtx and shared. graph_clone() makes an
 * independent deep copy, which is how the pass manager snapshots steps.
 *
 * Targets are stored without the "torch.ops." prefix: "aten.add.Tensor",
 * "prims.convert_element_type.default", "higher_order.cond"; plus "operator.getitem".
 * Placeholders of SymInt type ("Sym(s77)") have is_sym set and sym_val = the symbol. */
#ifndef GRAPH_H
#define GRAPH_H

#include "base/mi.h"
#include "base/sym.h"
#include "base/dtype.h"

typedef struct Node Node;
typedef struct Graph Graph;
struct OpDef;

typedef struct TensorMeta {
    DType dtype;
    int ndim;
    Expr **size;           /* ndim entries */
    Expr **stride;         /* ndim entries; when !has_stride, contiguous strides */
    Expr *offset;          /* storage offset (never printed); sym_int(0) by default */
    Device device;
    bool has_stride;       /* annotation carried "[..]" strides */
    bool has_device;       /* annotation carried a device */
    bool is_conj, is_neg;  /* ATen's conjugate / negative bits (is_conj(), is_neg()): set by
                              _conj / _neg_view, kept by views, cleared by ops that write a
                              fresh tensor (core/ops/ops_view_bits.c); never printed */
} TensorMeta;

typedef enum {
    V_NONE, V_NODE, V_INT, V_FLOAT, V_BOOL, V_STR,
    V_DTYPE, V_DEVICE,
    V_TORCH,     /* another torch constant printed verbatim: "torch.strided", "torch.contiguous_format" */
    V_LIST,      /* [a, b] */
    V_TUPLE,     /* (a, b) */
    V_SYM,       /* symbolic integer expression (built by passes; the text form uses nodes) */
    V_DICT,      /* {'k': v, ...}: list.items alternates key, value (list.n = 2 x pairs), in the
                    printed order; flex_attention's kernel_options */
    V_COMPLEX,   /* a Python complex scalar, printed as repr() does: "(1+2j)", "2j" (cx.re, cx.im) */
} ValueKind;

/* A value holding other values in list.items: a list, a tuple or a dict (whose keys sit between
 * its values; walkers looking for node references may visit the keys too, they are constants). */
#define VALUE_IS_SEQ(v) ((v)->kind == V_LIST || (v)->kind == V_TUPLE || (v)->kind == V_DICT)

typedef struct Value Value;
struct Value {
    ValueKind kind;
    union {
        Node *node;
        int64_t i;
        double f;
        bool b;
        const char *s;     /* V_STR (unquoted content), V_TORCH (full text) */
        DType dtype;
        Device device;
        Expr *sym;
        struct { int n; Value *items; } list;   /* V_LIST, V_TUPLE */
        struct { double re, im; } cx;           /* V_COMPLEX */
    };
};

typedef struct Kwarg { const char *name; Value v; } Kwarg;

typedef enum { N_PLACEHOLDER, N_CALL_FUNCTION, N_GET_ATTR, N_OUTPUT } NodeKind;

struct Node {
    int id;                 /* position in g->nodes (kept up to date by graph_* editors) */
    NodeKind kind;
    const char *name;
    const char *target;     /* call_function: op name; get_attr: attribute ("true_graph_0") */
    const struct OpDef *op; /* registry entry or NULL = unsupported op (still loads) */
    int nargs;
    Value *args;
    int nkwargs;
    Kwarg *kwargs;
    bool annotated;         /* printed with a type annotation */
    bool has_meta;          /* meta below is valid (a single tensor result) */
    TensorMeta meta;
    bool is_sym;            /* SymInt-valued node ("Sym(s77)") */
    Expr *sym_val;
    const char *symbool;    /* SymBool-valued node ("Sym(s0 >= 2)", the input of _assert_scalar):
                               the condition text inside "Sym(...)", kept verbatim (symbool.h
                               parses it); NULL otherwise. is_sym is false for these */
    const char *symfloat;   /* SymFloat-valued node ("Sym(IntTrueDiv(8*s0, 8))"): the text inside
                               "Sym(...)", kept verbatim (symfloat.h checks and evaluates it);
                               NULL otherwise. is_sym is false for these */
    const char *stack;      /* text after "# File: " of the comment block it sits under, or NULL;
                               "" when under "# No stacktrace found for following nodes" */
    int src_line;           /* line in the source text it was parsed from (0 if built) */
    /* Printing details kept so that parse -> print reproduces the text (added by fx): */
    const char *comment;    /* full text of the "# ..." group comment above it (after "# "), or
                               NULL: derived from stack ("File: <stack>" / "No stacktrace ...") */
    bool group_start;       /* a comment line was printed right above it even if the text
                               equals the previous group's (PyTorch compares whole stacks) */
    const char *ph_comment; /* placeholder in a multi-line forward(): "PlainAOTInput(idx=0)" */
    const char *fused_unary;/* a lowering pattern's handler node (register_lowering_pattern prints it
                               as its function, "torch__inductor_fx_passes_mkldnn_fusion_fn", with
                               the matched arguments): the unary attr its lowering passes to the
                               computation op ("relu", "gelu|tanh": name|algorithm). Set by
                               core/fx_passes/mkldnn_fusion.c, not printed: NULL when loaded from text */
    bool pytree_leaf;       /* placeholder declared as a leaf of a pytree parameter */
    bool is_method;         /* call_method (Dynamo-level graphs): target is the method name,
                               args[0] the object ("x.transpose(-2, -1)") */
    /* derived by graph_compute_users(): */
    int nusers;
    Node **users;
};

typedef struct Subgraph { const char *name; Graph *g; } Subgraph;

struct Graph {
    Arena arena;
    const char *class_name;   /* "GraphModule", "<lambda>", "true_graph_0" */
    Node **nodes;             /* program order; last is the output node */
    int n, cap;
    Subgraph *subs;           /* nested classes (higher-order op branches) */
    int nsubs;
    Graph *parent;
    const char *source;       /* file name it was loaded from, for messages; may be NULL */
    bool users_valid;
    /* Printing details (added by fx): */
    bool expanded_def;        /* forward( one placeholder per line ) and return ( one per line ) */
    bool fast_sympy_print;    /* SymFloat annotations as print_readable(fast_sympy_print=True)
                                 prints them (sympy_str, symfloat_fast_str): Inductor's post-grad
                                 graph; else as kept (sympy's str) */
    const char **out_comments;/* per returned item "# ..." comment in the expanded form (NULL
                                 entries for none); only used when nout_comments equals the
                                 output tuple length */
    int nout_comments;
    const char **pytree_args; /* AOT joint graphs: forward(self, primals, tangents) takes pytrees
                                 flattened into the placeholders by fx_pytree.tree_flatten_spec;
                                 the result goes through pytree.tree_unflatten */
    int npytree_args;
    const char *trailer;      /* text after the class, e.g. "\n\n # graph id: 1406..." (verbatim) */
    SymBinding *size_hints;   /* ShapeEnv's var_to_val: the example value of each backed symbol
                                 ("s77" = 6, from a log's fx_graph_runnable: reader.symint(6) for
                                 the placeholder typed Sym(s77)); names and array in the arena */
    int nsize_hints;
};

Graph *graph_new(const char *class_name);
void graph_free(Graph *g);
Graph *graph_clone(const Graph *g);             /* deep copy incl. subgraphs */
/* Record the example value of the symbol placeholder `ph` is typed with (Sym(s77)): Inductor's
 * size hint for it (V.graph.sizevars.size_hint). False when ph is no placeholder of a bare
 * symbol. */
bool graph_add_size_hint(Graph *g, const char *ph, int64_t value);

/* Construction / editing. All keep node ids in order and invalidate users. */
Node *graph_add_node(Graph *g, NodeKind kind, const char *name, const char *target);  /* appended */
Node *graph_insert_before(Graph *g, Node *anchor, NodeKind kind, const char *name, const char *target);
void graph_remove_node(Graph *g, Node *n);     /* caller ensures it has no users */
void graph_move_before(Graph *g, Node *n, Node *anchor);
void graph_set_args(Graph *g, Node *n, const Value *args, int nargs);
void graph_set_kwargs(Graph *g, Node *n, const Kwarg *kw, int nkw);
void graph_set_meta(Graph *g, Node *n, const TensorMeta *m);   /* deep copies arrays */
/* Replace every use of `from` by `to` (not inside `to` itself); returns uses replaced. */
int graph_replace_all_uses(Graph *g, Node *from, Node *to);
/* A fresh name based on base ("add" -> "add", "add_1", ...) unique in g. */
const char *graph_unique_name(Graph *g, const char *base);
Node *graph_find(const Graph *g, const char *name);
Node *graph_output(const Graph *g);
/* the output node's values flattened as pytree leaves (`return (a, (b, c))` -> a, b, c); *n of them */
const Value *graph_output_flat(const Graph *g, int *n);
int graph_num_placeholders(const Graph *g);
Node *graph_placeholder(const Graph *g, int i);  /* i-th placeholder */
Graph *graph_subgraph(const Graph *g, const char *name);
Graph *graph_add_subgraph(Graph *parent, const char *name);
/* Position of n in g->nodes, or -1 when n is not (any more) in g. */
int graph_index_of(const Graph *g, const Node *n);
/* Nodes whose value dies at node `user` in PyTorch's codegen order (the "x = y = None" suffix):
 * inputs whose last use is `user`, then `user` itself when it has no users. Placeholders and
 * the output node get none. Needs users (computed on demand). Returns count, fills out (max). */
int graph_dead_after(Graph *g, const Node *user, Node **out, int max);

void graph_compute_users(Graph *g);

/* Values */
Value value_none(void);
Value value_node(Node *n);
Value value_int(int64_t i);
Value value_float(double f);
Value value_complex(double re, double im);
Value value_bool(bool b);
Value value_str(Graph *g, const char *s);
Value value_list(Graph *g, const Value *items, int n);  /* copies items */
Value value_tuple(Graph *g, const Value *items, int n);
Value value_dict(Graph *g, const Value *kv, int n);     /* n = 2 x pairs: key, value, key, ... (copied) */
const Value *value_dict_get(const Value *d, const char *key);  /* the value of a string key, NULL if absent */
Value value_copy(Graph *g, const Value *v);             /* deep copy into g's arena */
bool value_equal(const Value *a, const Value *b);       /* structural; nodes by pointer */
/* Calls fn for every node referenced by v (recursing into lists). */
void value_for_each_node(const Value *v, void (*fn)(Node *, void *), void *ud);
const Kwarg *node_kwarg(const Node *n, const char *name);   /* NULL if absent */
bool value_as_int(const Value *v, int64_t *out);            /* V_INT or V_BOOL */
bool value_as_double(const Value *v, double *out);          /* V_INT, V_FLOAT, V_BOOL */

/* TensorMeta helpers */
void meta_init_contiguous(SymCtx *s, TensorMeta *m, Arena *a, DType dt, int ndim, Expr **size, Device dev);
bool meta_equal(const TensorMeta *a, const TensorMeta *b);  /* dtype, sizes, strides, device, conj/neg bits */
/* Number of elements as an expression. */
Expr *meta_numel(SymCtx *s, const TensorMeta *m);
/* Annotation text as PyTorch prints it: "f32[8, 16][16, 1]cpu"; returns buf. */
const char *meta_str(const TensorMeta *m, char *buf, size_t n);
void meta_str_sb(const TensorMeta *m, StrBuf *sb);
/* Annotation text of a node ("f32[8][1]cpu", "Sym(s0)") into sb; false when not annotated. */
bool node_annotation_sb(const Node *n, StrBuf *sb);
/* Python repr of a float as FX prints it: "1e-05", "0.5", "1.0", "inf", "-inf", "nan". */
const char *fx_float_repr(double f, char *buf, size_t n);
const char *fx_complex_repr(double re, double im, char *buf, size_t n);
/* A value as it appears in an FX call: node names, ints, "[1, 0]", "torch.float32", ... */
void value_print_sb(const Value *v, StrBuf *sb);
/* The infix token FX prints for an operator target ("operator.add" -> "+"), or NULL. */
const char *fx_binop_token(const char *target);
/* The "# ..." comment text for a node (without "# "): its comment, else from its stack. */
void node_comment_sb(const Node *n, StrBuf *sb);

/* Lint (core/fx/lint.c): use-before-def, dangling uses (a node used that is not in the graph),
 * duplicate names, meta consistency (rank/size/stride arity; meta matches what the op registry
 * infers where the op is known), exactly one output node and it is last, subgraph arity.
 * Returns the number of problems; each is appended to `report` (may be NULL) as
 * "line N: node 'x': reason\n". When >0 problems, ctx->err holds the first. */
int graph_lint(MiCtx *ctx, Graph *g, StrBuf *report);

/* FX text (core/fx/fx_parse.c, core/fx/fx_print.c) */
/* Parse print_readable text. `source` names the file for messages; `first_line` is the line
 * number of text[0] in that file (1 for a file; >1 for a payload inside a log). */
Graph *fx_parse(MiCtx *ctx, const char *text, size_t len, const char *source, int first_line);
/* A call target FX prints as a bare global ("torch__inductor_fx_passes_mkldnn_fusion_fn"). */
bool fx_is_global_fn(const char *target);
Graph *fx_load_file(MiCtx *ctx, const char *path);
/* Print as print_readable would (with "# File:" comments when with_stack). malloc'd. */
char *fx_print(const Graph *g, bool with_stack);
/* g printed in form's print form (its expanded_def and fast_sympy_print), not g's own: what a
 * diff of two steps prints its "before" graph with, so that only the pass's changes show. */
char *fx_print_as(const Graph *g, const Graph *form, bool with_stack);

/* JSON (core/fx/graph_json.c); format in core/fx/graph-format.md */
Graph *graph_from_json(MiCtx *ctx, const char *text, size_t len, const char *source);
Graph *graph_load_json_file(MiCtx *ctx, const char *path);
char *graph_to_json(const Graph *g);     /* malloc'd, pretty-printed */

/* Load any supported graph file: FX text (.py/.txt), JSON (.json). */
Graph *graph_load_file(MiCtx *ctx, const char *path);

/* The error about one node (mi.h's contract): ctx->err gets the graph's file, the node's
 * source line and "MSG (node 'NAME')", e.g. "unsupported op 'aten.foo.default' (node 'foo')".
 * n may be NULL ("(node '?')"). Returns -1. */
int graph_node_err(MiCtx *ctx, const Graph *g, const Node *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Device of the graph: the first node meta with a device; cpu if none. */
Device graph_device(const Graph *g);
/* True for an AOT joint/forward/backward graph (primals_* / tangents_* placeholders). */
bool graph_is_training(const Graph *g);

#endif
