/* ir.c — the IR's building blocks: op-name tables, layouts, buffers, the recording handler that
 * turns an inner function into a LoopBody (ir_trace_body), body replay (loop_body_run), the
 * strided-view probe used for extern kernel operands, and freeing a module.
 * core/lowering/ builds modules with these; the scheduler and code generators read them. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static const struct { const char *name; int arity; } math_ops[IOP_COUNT] = {
    [IOP_NEG] = {"neg", 1}, [IOP_EXP] = {"exp", 1}, [IOP_LOG] = {"log", 1},
    [IOP_SQRT] = {"sqrt", 1}, [IOP_RSQRT] = {"rsqrt", 1}, [IOP_TANH] = {"tanh", 1},
    [IOP_SIGMOID] = {"sigmoid", 1}, [IOP_RELU] = {"relu", 1}, [IOP_ERF] = {"erf", 1},
    [IOP_SIN] = {"sin", 1}, [IOP_COS] = {"cos", 1}, [IOP_ABS] = {"abs", 1},
    [IOP_RECIPROCAL] = {"reciprocal", 1}, [IOP_EXPM1] = {"expm1", 1}, [IOP_LOG1P] = {"log1p", 1},
    [IOP_FLOOR] = {"floor", 1}, [IOP_CEIL] = {"ceil", 1}, [IOP_LOGICAL_NOT] = {"logical_not", 1},
    [IOP_SIGN] = {"sign", 1}, [IOP_TAN] = {"tan", 1}, [IOP_ROUND] = {"round", 1},
    [IOP_ASIN] = {"asin", 1}, [IOP_ACOS] = {"acos", 1}, [IOP_LGAMMA] = {"lgamma", 1},
    [IOP_ATAN] = {"atan", 1}, [IOP_SINH] = {"sinh", 1}, [IOP_COSH] = {"cosh", 1}, [IOP_ASINH] = {"asinh", 1},
    [IOP_ACOSH] = {"acosh", 1}, [IOP_ATANH] = {"atanh", 1}, [IOP_EXP2] = {"exp2", 1}, [IOP_LOG2] = {"log2", 1},
    [IOP_LOG10] = {"log10", 1}, [IOP_ERFC] = {"erfc", 1}, [IOP_TRUNC] = {"trunc", 1}, [IOP_SIGNBIT] = {"signbit", 1},
    [IOP_BITWISE_NOT] = {"bitwise_not", 1}, [IOP_FREXP_MANTISSA] = {"frexp_mantissa", 1}, [IOP_FREXP_EXPONENT] = {"frexp_exponent", 1},
    [IOP_ERFINV] = {"erfinv", 1}, [IOP_I0] = {"i0", 1}, [IOP_I0E] = {"i0e", 1}, [IOP_I1] = {"i1", 1}, [IOP_I1E] = {"i1e", 1},
    [IOP_DIGAMMA] = {"digamma", 1}, [IOP_ERFCX] = {"erfcx", 1}, [IOP_NDTRI] = {"ndtri", 1}, [IOP_LOG_NDTR] = {"log_ndtr", 1},
    [IOP_BESSEL_J0] = {"bessel_j0", 1}, [IOP_BESSEL_J1] = {"bessel_j1", 1}, [IOP_BESSEL_Y0] = {"bessel_y0", 1},
    [IOP_BESSEL_Y1] = {"bessel_y1", 1}, [IOP_MODIFIED_BESSEL_I0] = {"modified_bessel_i0", 1},
    [IOP_MODIFIED_BESSEL_I1] = {"modified_bessel_i1", 1}, [IOP_SPHERICAL_BESSEL_J0] = {"spherical_bessel_j0", 1},
    [IOP_ADD] = {"add", 2}, [IOP_SUB] = {"sub", 2}, [IOP_MUL] = {"mul", 2},
    [IOP_TRUEDIV] = {"truediv", 2}, [IOP_POW] = {"pow", 2}, [IOP_MAXIMUM] = {"maximum", 2},
    [IOP_MINIMUM] = {"minimum", 2}, [IOP_EQ] = {"eq", 2}, [IOP_NE] = {"ne", 2},
    [IOP_LT] = {"lt", 2}, [IOP_LE] = {"le", 2}, [IOP_GT] = {"gt", 2}, [IOP_GE] = {"ge", 2},
    [IOP_LOGICAL_AND] = {"logical_and", 2}, [IOP_LOGICAL_OR] = {"logical_or", 2},
    [IOP_FLOORDIV] = {"floordiv", 2}, [IOP_FMOD] = {"fmod", 2}, [IOP_ATAN2] = {"atan2", 2},
    [IOP_COPYSIGN] = {"copysign", 2}, [IOP_HYPOT] = {"hypot", 2}, [IOP_NEXTAFTER] = {"nextafter", 2},
    [IOP_BITWISE_AND] = {"bitwise_and", 2}, [IOP_BITWISE_OR] = {"bitwise_or", 2}, [IOP_BITWISE_XOR] = {"bitwise_xor", 2},
    [IOP_FMAX] = {"fmax", 2}, [IOP_FMIN] = {"fmin", 2}, [IOP_TRUNCDIV] = {"truncdiv", 2},
    [IOP_BITWISE_LEFT_SHIFT] = {"bitwise_left_shift", 2}, [IOP_BITWISE_RIGHT_SHIFT] = {"bitwise_right_shift", 2},
    [IOP_POLYGAMMA] = {"polygamma", 2}, [IOP_ZETA] = {"zeta", 2},
    [IOP_RAND] = {"rand", 2}, [IOP_RANDN] = {"randn", 2}, [IOP_RANDINT64] = {"randint64", 4},
    [IOP_WHERE] = {"where", 3}, [IOP_FMA] = {"fma", 3},
};

const char *ir_math_name(IrMathOp op) { return op >= 0 && op < IOP_COUNT ? math_ops[op].name : "?"; }
int ir_math_arity(IrMathOp op) { return op >= 0 && op < IOP_COUNT ? math_ops[op].arity : 0; }
bool ir_math_is_compare(IrMathOp op) {
    return (op >= IOP_EQ && op <= IOP_LOGICAL_OR) || op == IOP_LOGICAL_NOT || op == IOP_SIGNBIT;
}

static const char *red_names[RED_COUNT] = {
    [RED_SUM] = "sum", [RED_PROD] = "prod", [RED_MAX] = "max", [RED_MIN] = "min",
    [RED_ARGMAX] = "argmax", [RED_ARGMIN] = "argmin", [RED_WELFORD] = "welford_reduce",
    [RED_WELFORD_COMBINE] = "welford_combine",
};
const char *ir_scan_name(IrScanOp op) {
    static const char *const names[] = {"add", "mul", "logaddexp", "max", "min", "sort"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}
const char *ir_reduce_name(IrReduceType t) { return t >= 0 && t < RED_COUNT ? red_names[t] : "?"; }

/* ---- layouts ---- */

Layout layout_contiguous(IrModule *m, DType dt, Device dev, int ndim, Expr **size) {
    SymCtx *s = m->ctx->sym;
    Layout l = {0};
    l.dtype = dt;
    l.device = dev;
    l.ndim = ndim;
    l.size = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    l.stride = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    Expr *st = sym_int(s, 1);
    for (int d = ndim - 1; d >= 0; d--) {
        l.size[d] = size[d];
        l.stride[d] = st;
        st = sym_mul(s, st, size[d]);
    }
    l.offset = sym_int(s, 0);
    return l;
}

Expr *layout_numel(SymCtx *s, const Layout *l) {
    Expr *n = sym_int(s, 1);
    for (int d = 0; d < l->ndim; d++) n = sym_mul(s, n, l->size[d]);
    return n;
}

Expr *layout_storage_size(SymCtx *s, const Layout *l) {
    for (int d = 0; d < l->ndim; d++) {   /* an empty tensor needs no storage (c10's
                                             computeStorageNbytes); 1 + sum((n-1)*stride) is 0 or less */
        int64_t n;
        if (sym_is_int(l->size[d], &n) && n == 0) return sym_int(s, 0);
    }
    Expr *e = sym_add(s, l->offset, sym_int(s, 1));
    for (int d = 0; d < l->ndim; d++)
        e = sym_add(s, e, sym_mul(s, sym_sub(s, l->size[d], sym_int(s, 1)), l->stride[d]));
    return e;
}

Expr *layout_index(SymCtx *s, const Layout *l, Expr *const *idx) {
    Expr *e = sym_int(s, 0);
    for (int d = 0; d < l->ndim; d++) {
        int64_t one;
        if (sym_is_int(l->size[d], &one) && one == 1) continue;
        e = sym_add(s, e, sym_mul(s, l->stride[d], idx[d]));
    }
    return sym_add(s, e, l->offset);
}

/* ---- buffers ---- */

Buffer *ir_new_buffer(IrModule *m, BufKind kind, const Layout *l) {
    Buffer *b = arena_alloc(&m->arena, sizeof *b);
    b->kind = kind;
    b->layout = *l;
    b->output_index = -1;
    b->input_index = -1;
    if (kind != BUF_INPUT) b->name = arena_printf(&m->arena, "buf%d", m->next_buf++);
    if (m->nbufs == m->capbufs) {
        m->capbufs = m->capbufs ? 2 * m->capbufs : 16;
        m->bufs = mi_xrealloc(m->bufs, sizeof(Buffer *) * m->capbufs);
    }
    b->id = b->born = m->nbufs;
    m->bufs[m->nbufs++] = b;
    return b;
}

Buffer *ir_find_buffer(const IrModule *m, const char *name) {
    for (int i = 0; i < m->nbufs; i++)
        if (strcmp(m->bufs[i]->name, name) == 0) return m->bufs[i];
    return NULL;
}

bool ir_is_op(const Buffer *b) { return b->kind == BUF_COMPUTED || (b->kind == BUF_EXTERN && !b->extern_owner); }

const Buffer *ir_store_target(const Buffer *b) { return b->mutates ? b->mutates : b->alias_of ? b->alias_of : b; }

void ir_add_guard(IrModule *m, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int i = 0; i < m->nguards; i++)
        if (strcmp(m->guards[i], buf) == 0) return;
    if (m->nguards == m->capguards) {
        m->capguards = m->capguards ? 2 * m->capguards : 8;
        m->guards = mi_xrealloc(m->guards, sizeof(char *) * m->capguards);
    }
    m->guards[m->nguards++] = arena_strdup(&m->arena, buf);
}

/* The definition of unbacked symbol `name` in m, or NULL (a backed symbol, or none). */
const IrUnbacked *ir_unbacked_find(const IrModule *m, const char *name) {
    for (int i = 0; name && i < m->nunbacked; i++)
        if (!strcmp(m->unbacked[i].name, name)) return &m->unbacked[i];
    return NULL;
}

/* Does e name an unbacked symbol of m; `late`: only those a kernel or fallback of the module
 * defines (not an item() of a graph input, which is known on entry)? */
static bool names_unbacked(const IrModule *m, const Expr *e, bool late) {
    const char *names[16];
    int k = e ? sym_free_symbols(e, names, 16) : 0;
    for (int i = 0; i < k && i < 16; i++) {
        const IrUnbacked *u = ir_unbacked_find(m, names[i]);
        if (u && (!late || u->buf->kind != BUF_INPUT)) return true;
    }
    return false;
}

bool ir_expr_unbacked(const IrModule *m, const Expr *e) { return m->nunbacked && names_unbacked(m, e, false); }

bool ir_defines_unbacked_size(const IrModule *m, const Buffer *b) {
    for (int i = 0; b && i < m->nunbacked; i++)
        if (m->unbacked[i].buf == b && m->unbacked[i].dim >= 0) return true;
    return false;
}

bool ir_call_sizes_result(const IrModule *m, const Buffer *b) {
    if (!b || !m->nunbacked) return false;
    if (ir_defines_unbacked_size(m, b)) return true;
    if (!b->mo_of) return false;
    for (int i = 0; i < m->nunbacked; i++) {
        const IrUnbacked *u = &m->unbacked[i];
        if (u->dim < 0 || u->buf->mo_of != b->mo_of) continue;
        for (int d = 0; d < b->layout.ndim; d++) {
            const char *names[16];
            int k = sym_free_symbols(b->layout.size[d], names, 16);
            for (int j = 0; j < k && j < 16; j++)
                if (!strcmp(names[j], u->name)) return true;
        }
    }
    return false;
}

bool ir_layout_unbacked(const IrModule *m, const Layout *l, bool late) {
    if (!m->nunbacked) return false;
    for (int d = 0; d < l->ndim; d++)
        if (names_unbacked(m, l->size[d], late) || names_unbacked(m, l->stride[d], late)) return true;
    return names_unbacked(m, l->offset, late);
}

void ir_free(IrModule *m) {
    if (!m) return;
    for (int i = 0; i < m->nbufs; i++) {
        LoopBody *b = m->bufs[i]->body;
        if (b) { free(b->ops); free(b->indexes); }
        if (m->bufs[i]->cond) ir_cond_free(m->bufs[i]->cond);
    }
    ir_scatter_index_free(m);
    free(m->bufs);
    free(m->inputs);
    free(m->outputs);
    free(m->out_views);
    free(m->sym_names);
    free(m->guards);
    arena_free(&m->arena);
    if (m->owned_graph) graph_free(m->owned_graph);
    for (int i = 0; i < m->nscratch; i++) graph_free(m->scratch[i]);
    free(m->scratch);
    free(m);
}

/* ---- simplification under loop ranges ---- */

Expr *ir_simplify(IrModule *m, Expr *e, const LoopBody *b) {
    SymRange r[MI_MAX_DIMS * 2];
    int nr = 0;
    for (int i = 0; b && i < b->nvars && nr < MI_MAX_DIMS * 2; i++) {
        int64_t n;
        r[nr].name = b->vars[i]->name;
        r[nr].lo = 0;
        r[nr].hi = sym_is_int(b->ranges[i], &n) ? n - 1 : INT64_MAX / 4;
        nr++;
    }
    return sym_simplify(m->ctx->sym, e, r, nr);
}

/* ---- the recording handler ---- */

typedef struct Recorder { OpsHandler h; IrModule *m; LoopBody *b; } Recorder;

static int rec_push(Recorder *r, LoopOp op) {
    LoopBody *b = r->b;
    if (b->nops == b->capops) {
        b->capops = b->capops ? 2 * b->capops : 16;
        b->ops = mi_xrealloc(b->ops, sizeof(LoopOp) * b->capops);
    }
    b->ops[b->nops] = op;
    return b->nops++;
}

static int rec_index(Recorder *r, Expr *e) {
    LoopBody *b = r->b;
    e = ir_simplify(r->m, e, b);
    for (int i = 0; i < b->nindexes; i++)
        if (b->indexes[i] == e) return i;
    if (b->nindexes == b->cap_indexes) {
        b->cap_indexes = b->cap_indexes ? 2 * b->cap_indexes : 8;
        b->indexes = mi_xrealloc(b->indexes, sizeof(Expr *) * b->cap_indexes);
    }
    b->indexes[b->nindexes] = e;
    return b->nindexes++;
}

static DType rec_dtype(Recorder *r, IrVal v) { return v >= 0 && v < r->b->nops ? r->b->ops[v].dtype : DT_F32; }

static IrVal rec_load(OpsHandler *h, Buffer *buf, Expr *index) {
    Recorder *r = h->self;
    LoopOp op = {.kind = LOP_LOAD, .buf = buf, .dtype = buf->layout.dtype};
    op.index = rec_index(r, index);
    return rec_push(r, op);
}
static void rec_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Recorder *r = h->self;
    LoopOp op = {.kind = LOP_STORE, .buf = buf, .dtype = rec_dtype(r, v), .args = {v}};
    op.index = rec_index(r, index);
    rec_push(r, op);
}
static IrVal rec_constant(OpsHandler *h, double v, DType dt) {
    return rec_push(h->self, (LoopOp){.kind = LOP_CONST, .cval = v, .dtype = dt});
}
static IrVal rec_index_expr(OpsHandler *h, Expr *e, DType dt) {
    Recorder *r = h->self;
    LoopOp op = {.kind = LOP_INDEX_EXPR, .dtype = dt};
    op.index = rec_index(r, e);
    return rec_push(r, op);
}
static IrVal rec_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    return rec_push(h->self, (LoopOp){.kind = LOP_TO_DTYPE, .dtype = dt, .src_dtype = src, .args = {v}});
}
static IrVal rec_math(OpsHandler *h, IrMathOp op, const IrVal *args, DType dt) {
    LoopOp o = {.kind = LOP_MATH, .op = op, .dtype = dt};
    for (int i = 0; i < ir_math_arity(op); i++) o.args[i] = args[i];
    return rec_push(h->self, o);
}
static IrVal rec_reduction(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) {
    LoopOp o = {.kind = LOP_REDUCTION, .dtype = dt, .src_dtype = src, .rtype = rt, .args = {v[0]}};
    for (int k = 1; k < ir_reduce_arity(rt); k++) o.args[k] = v[k];
    return rec_push(h->self, o);
}
static IrVal rec_getitem(OpsHandler *h, IrVal v, int k) {
    Recorder *r = h->self;
    DType dt = rec_dtype(r, v);
    if (k == 1 && v >= 0 && v < r->b->nops && r->b->ops[v].kind == LOP_SCAN) dt = r->b->ops[v].src_dtype;
    return rec_push(r, (LoopOp){.kind = LOP_GETITEM, .dtype = dt, .args = {v}, .item = k});
}
static IrVal rec_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dtypes, const IrVal *vals, int n) {
    LoopOp o = {.kind = LOP_SCAN, .sop = op, .sflags = flags, .nargs = n, .dtype = dtypes[0],
                .src_dtype = n > 1 ? dtypes[1] : dtypes[0], .args = {-1, -1, -1}};
    for (int k = 0; k < n && k < 2; k++) o.args[k] = vals[k];
    return rec_push(h->self, o);
}
static IrVal rec_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal offset) {
    return rec_push(h->self, (LoopOp){.kind = LOP_BUCKETIZE, .dtype = b->index_dtype, .bnd = b, .args = {v, offset, -1}});
}
static void rec_store_reduction(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Recorder *r = h->self;
    LoopOp op = {.kind = LOP_STORE_REDUCTION, .buf = buf, .dtype = rec_dtype(r, v), .args = {v}};
    op.index = rec_index(r, index);
    rec_push(r, op);
}

/* A fresh symbol indirectK per body (Inductor's LoopBody.indirect_vars naming); the index
 * value and the dim's extent are kept on the op. */
static Expr *rec_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    Recorder *r = h->self;
    if (!sym) {
        char nm[24];
        snprintf(nm, sizeof nm, "indirect%d", r->b->nindirect++);
        sym = sym_symbol(r->m->ctx->sym, nm);
    }
    rec_push(r, (LoopOp){.kind = LOP_INDIRECT, .dtype = DT_I64, .args = {x}, .sym = sym, .size = size,
                         .check = check, .wrap_neg = wrap_neg});
    return sym;
}
static void rec_store_atomic_add(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Recorder *r = h->self;
    LoopOp op = {.kind = LOP_STORE, .buf = buf, .dtype = rec_dtype(r, v), .args = {v}, .atomic_add = true};
    op.index = rec_index(r, index);
    rec_push(r, op);
}

static void recorder_init(Recorder *r, IrModule *m, LoopBody *b) {
    r->m = m;
    r->b = b;
    b->sym = m->ctx->sym;
    r->h = (OpsHandler){r, rec_load, rec_store, rec_constant, rec_index_expr, rec_to_dtype,
                        rec_math, rec_reduction, rec_getitem, rec_store_reduction, rec_indirect,
                        rec_store_atomic_add, rec_scan, rec_bucketize};
}

bool ir_index_is_indirect(const Expr *e) {
    if (e->kind == EX_SYM) {
        const char *n = e->name;
        int k = strncmp(n, "indirect", 8) == 0 ? 8 : strncmp(n, "tmp", 3) == 0 ? 3 : 0;
        return k && n[k] >= '0' && n[k] <= '9';
    }
    for (int i = 0; i < e->n; i++)
        if (ir_index_is_indirect(e->args[i])) return true;
    return false;
}

/* A copy of n expressions in m's arena (a recipe outlives its caller's arrays). */
static Expr **arena_dup_exprs(IrModule *m, Expr **e, int n) {
    Expr **c = arena_alloc(&m->arena, sizeof(Expr *) * (n + 1));
    if (n > 0) memcpy(c, e, sizeof(Expr *) * n);
    return c;
}

/* The loop variable p<k> (k = the body's next) over `size`, walking dim `dim`; a size-1 dim
 * gets none: its index is 0. */
static Expr *body_var(IrModule *m, LoopBody *b, Expr *size, int dim) {
    int64_t one;
    if (sym_is_int(size, &one) && one == 1) return sym_int(m->ctx->sym, 0);
    char nm[16];
    snprintf(nm, sizeof nm, "p%d", b->nvars);
    Expr *v = b->vars[b->nvars] = sym_symbol(m->ctx->sym, nm);
    b->ranges[b->nvars] = size;
    b->dim_of_var[b->nvars++] = dim;
    return v;
}

LoopBody *ir_trace_scatter(IrModule *m, Buffer *buf, const IrFn *fn, const IrFn *indexer, int ndim,
                           Expr **size, bool atomic_add) {
    SymCtx *s = m->ctx->sym;
    LoopBody *b = arena_alloc(&m->arena, sizeof *b);
    b->vars = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    b->ranges = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    Expr *idx[MI_MAX_DIMS];
    for (int d = 0; d < ndim; d++) idx[d] = body_var(m, b, size[d], d);
    b->npoint = b->nvars;
    IrTrace *t = arena_alloc(&m->arena, sizeof *t);
    *t = (IrTrace){.fn = fn, .indexer = indexer, .ndim = ndim, .size = arena_dup_exprs(m, size, ndim), .scatter = true,
                   .atomic_add = atomic_add};
    buf->trace = t;
    Recorder r;
    recorder_init(&r, m, b);
    Buffer *target = buf->mutates ? buf->mutates : buf;
    Expr *out[MI_MAX_DIMS + 1];
    indexer->index_call(indexer, &r.h, idx, out);
    Expr *at = layout_index(s, &target->layout, out);
    int cap = m->capture;
    m->capture = buf->born + 1;
    IrVal v = fn->call(fn, &r.h, idx);
    m->capture = cap;
    if (atomic_add) r.h.store_atomic_add(&r.h, target, at, v);
    else r.h.store(&r.h, target, at, v);
    return b;
}

static LoopBody *trace_body(IrModule *m, Buffer *buf, const IrFn *fn, int ndim, Expr **size, const int *order,
                            int nred, Expr **rsize, const int *rorder, IrReduceType rt, int welford_item);

/* A body is recorded again in the loop order Inductor picks from all its memory accesses
 * (ComputedBuffer.simplify_and_reorder's _apply_loop_reordering, ir_pick_dims_order) when that
 * differs from the one it was recorded in: the output dims (a pointwise body's store order,
 * `order`; a reduction's dims in order) and, separately, a reduction's reduced dims (in order).
 * argmax / argmin keep their reduced dims in order: their index is the loop's row-major count.
 * Example: a pointwise [2, 3, 10, 10] storing NCHW from channels-last loads walks (n, h, w, c);
 * the mean over all of a channels-last [2, 3, 10, 10] reduces in (n, h, w, c) order too.
 * CPU only: the GPU keeps the store order, its scheduler reorders and re-tiles loops at fusion
 * (sched_reshape.c, for shared_data_after_reordering_loop), tuned on that order. */
LoopBody *ir_trace_body(IrModule *m, Buffer *buf, const IrFn *fn, int ndim, Expr **size,
                        const int *order, int nred, Expr **rsize, IrReduceType rt, int welford_item) {
    LoopBody *b = trace_body(m, buf, fn, ndim, size, order, nred, rsize, NULL, rt, welford_item);
    if (ndim > MI_MAX_DIMS || nred > MI_MAX_DIMS || buf->layout.device.kind == DEV_CUDA) return b;
    int po[MI_MAX_DIMS], ro[MI_MAX_DIMS];
    bool pick_p = (order || nred) && ndim >= 2 && ir_pick_dims_order(m, b, 0, ndim, 0, b->npoint, size, po);
    bool pick_r = nred >= 2 && rt != RED_ARGMAX && rt != RED_ARGMIN && ir_pick_dims_order(m, b, ndim, nred, b->npoint, b->nvars, rsize, ro);
    bool same = true;
    for (int k = 0; pick_p && k < ndim; k++) same &= po[k] == (order ? order[k] : k);
    for (int k = 0; pick_r && k < nred; k++) same &= ro[k] == k;
    if (same) return b;
    free(b->ops);       /* the first recording is dropped (the arena keeps the rest, as retrace's) */
    free(b->indexes);
    b = trace_body(m, buf, fn, ndim, size, pick_p ? po : order, nred, rsize, pick_r ? ro : NULL, rt, welford_item);
    buf->trace->by_layout = order != NULL;   /* a retrace starts from the caller's order again */
    return b;
}

static LoopBody *trace_body(IrModule *m, Buffer *buf, const IrFn *fn, int ndim, Expr **size, const int *order,
                            int nred, Expr **rsize, const int *rorder, IrReduceType rt, int welford_item) {
    SymCtx *s = m->ctx->sym;
    LoopBody *b = arena_alloc(&m->arena, sizeof *b);
    b->vars = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + nred + 1));
    b->ranges = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + nred + 1));
    Expr *idx[MI_MAX_DIMS * 2];
    for (int k = 0; k < ndim; k++) {
        int d = order ? order[k] : k;
        idx[d] = body_var(m, b, size[d], d);
    }
    b->npoint = b->nvars;
    for (int k = 0; k < nred; k++) {
        int d = rorder ? rorder[k] : k;
        idx[ndim + d] = body_var(m, b, rsize[d], ndim + d);
    }
    if (nred > 0 && b->nvars == b->npoint) {
        /* every reduced dim has size 1: keep one reduction loop of range 1, so the body is
         * still a reduction (its accumulator is per output element, not across the outer loop) */
        char nm[16];
        snprintf(nm, sizeof nm, "p%d", b->nvars);
        b->vars[b->nvars] = sym_symbol(s, nm);
        b->ranges[b->nvars] = sym_int(s, 1);
        b->dim_of_var[b->nvars] = ndim;
        b->nvars++;
    }
    b->nred = b->nvars - b->npoint;
    IrTrace *t = arena_alloc(&m->arena, sizeof *t);
    *t = (IrTrace){.fn = fn, .ndim = ndim, .size = arena_dup_exprs(m, size, ndim), .nred = nred,
                   .rsize = arena_dup_exprs(m, rsize, nred), .rt = rt,
                   .welford_item = welford_item, .by_layout = order != NULL};
    buf->trace = t;
    Recorder r;
    recorder_init(&r, m, b);
    int cap = m->capture;
    m->capture = buf->born + 1;   /* what buf's inner function captured (call_storage) */
    /* welford_combine reduces the three inner functions of a tuple fn (lw_tuple3): mean, m2, weight */
    IrVal v[3];
    if (rt == RED_WELFORD_COMBINE)
        for (int k = 0; k < 3; k++) v[k] = fn->a[k]->call(fn->a[k], &r.h, idx);
    else v[0] = fn->call(fn, &r.h, idx);
    m->capture = cap;
    Buffer *target = buf->mutates ? buf->mutates : buf;
    Expr *out = layout_index(s, &target->layout, idx);
    if (nred == 0) {
        r.h.store(&r.h, target, out, v[0]);
    } else {
        DType src = rec_dtype(&r, v[0]);
        IrVal red = r.h.reduction(&r.h, buf->layout.dtype, src, rt, v);
        if (ir_reduce_is_welford(rt)) {
            IrVal it[3];
            for (int k = 0; k < 3; k++) it[k] = r.h.getitem(&r.h, red, k);
            red = it[welford_item];
        }
        r.h.store_reduction(&r.h, target, out, red);
    }
    return b;
}

LoopBody *ir_trace_scan(IrModule *m, Buffer *buf, const IrScan *sc, int ndim, Expr **size) {
    SymCtx *s = m->ctx->sym;
    LoopBody *b = arena_alloc(&m->arena, sizeof *b);
    b->vars = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    b->ranges = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    Expr *idx[MI_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        if (d != sc->axis) idx[d] = body_var(m, b, size[d], d);
    b->npoint = b->nvars;
    char nm[16];   /* the scan var, even over a dim of size 1 (the lowering copies those instead) */
    snprintf(nm, sizeof nm, "p%d", b->nvars);
    idx[sc->axis] = b->vars[b->nvars] = sym_symbol(s, nm);
    b->ranges[b->nvars] = size[sc->axis];
    b->dim_of_var[b->nvars++] = sc->axis;
    b->nred = 1;
    IrTrace *t = arena_alloc(&m->arena, sizeof *t);
    *t = (IrTrace){.ndim = ndim, .size = arena_dup_exprs(m, size, ndim), .scan = sc};
    buf->trace = t;
    Recorder r;
    recorder_init(&r, m, b);
    IrVal v[2], items[2];
    int cap = m->capture;
    m->capture = buf->born + 1;
    for (int k = 0; k < sc->n; k++) v[k] = sc->fns[k]->call(sc->fns[k], &r.h, idx);
    m->capture = cap;
    IrVal tup = r.h.scan(&r.h, sc->op, sc->flags, sc->dtypes, v, sc->n);
    for (int k = 0; k < sc->n; k++) items[k] = r.h.getitem(&r.h, tup, k);
    r.h.store(&r.h, buf, layout_index(s, &buf->layout, idx), items[sc->output_index]);
    return b;
}

/* ---- replay ---- */

/* The index of op o with the indirect symbols replaced by what the handler returned for them
 * (nothing to do when it kept the symbols). */
static Expr *replay_index(const LoopBody *b, const LoopOp *o, const char **from, Expr **to, int n) {
    Expr *e = b->indexes[o->index];
    return n ? sym_subst(b->sym, e, from, to, n) : e;
}

IrVal loop_body_run(const LoopBody *b, OpsHandler *h) {
    IrVal stack[256];
    IrVal *vals = b->nops <= 256 ? stack : mi_xmalloc(sizeof(IrVal) * b->nops);
    IrVal last = -1;
    const char *from[64];   /* a body has at most MI_MAX_DIMS indirect symbols per load */
    Expr *to[64];
    int nsub = 0;
    for (int i = 0; i < b->nops; i++) {
        const LoopOp *o = &b->ops[i];
        IrVal a[4] = {-1, -1, -1, -1};
        for (int k = 0; k < 4; k++)
            if (o->kind != LOP_CONST && o->kind != LOP_LOAD && o->kind != LOP_INDEX_EXPR &&
                o->args[k] >= 0 && o->args[k] < i)
                a[k] = vals[o->args[k]];
        switch (o->kind) {
        case LOP_LOAD: vals[i] = h->load(h, o->buf, replay_index(b, o, from, to, nsub)); break;
        case LOP_STORE:
            if (o->atomic_add) h->store_atomic_add(h, o->buf, replay_index(b, o, from, to, nsub), a[0]);
            else h->store(h, o->buf, replay_index(b, o, from, to, nsub), a[0]);
            vals[i] = -1;
            break;
        case LOP_INDIRECT: {
            Expr *r = h->indirect_indexing(h, a[0], o->size, o->check, o->wrap_neg, o->sym);
            if (r && r != o->sym && nsub < 64) { from[nsub] = o->sym->name; to[nsub++] = r; }
            vals[i] = -1;
            break;
        }
        case LOP_CONST: vals[i] = h->constant(h, o->cval, o->dtype); break;
        case LOP_INDEX_EXPR: vals[i] = h->index_expr(h, replay_index(b, o, from, to, nsub), o->dtype); break;
        case LOP_TO_DTYPE: vals[i] = h->to_dtype(h, a[0], o->dtype, o->src_dtype); break;
        case LOP_MATH: vals[i] = h->math(h, o->op, a, o->dtype); break;
        case LOP_REDUCTION: vals[i] = h->reduction(h, o->dtype, o->src_dtype, o->rtype, a); break;
        case LOP_GETITEM: vals[i] = h->getitem(h, a[0], o->item); break;
        case LOP_SCAN: {
            DType dts[2] = {o->dtype, o->src_dtype};
            vals[i] = h->scan ? h->scan(h, o->sop, o->sflags, dts, a, o->nargs) : -1;
            break;
        }
        case LOP_BUCKETIZE: vals[i] = h->bucketize(h, a[0], o->bnd, a[1]); break;
        case LOP_STORE_REDUCTION:
            h->store_reduction(h, o->buf, replay_index(b, o, from, to, nsub), a[0]);
            vals[i] = -1;
            break;
        }
        last = vals[i];
    }
    if (vals != stack) free(vals);
    return last;
}

int loop_body_math_count(const LoopBody *b) {
    int n = 0;
    for (int i = 0; i < b->nops; i++) n += b->ops[i].kind == LOP_MATH;
    return n;
}

/* ---- strided-view probe: is a loader exactly one affine load of a buffer? ---- */

typedef struct Probe { OpsHandler h; int nops; Buffer *buf; Expr *index; bool bad; } Probe;

static IrVal pr_load(OpsHandler *h, Buffer *buf, Expr *index) {
    Probe *p = h->self;
    p->nops++;
    p->buf = buf;
    p->index = index;
    return 0;
}
static void pr_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) { ((Probe *)h->self)->bad = true; }
static IrVal pr_constant(OpsHandler *h, double v, DType dt) { ((Probe *)h->self)->bad = true; return 1; }
static IrVal pr_index_expr(OpsHandler *h, Expr *e, DType dt) { ((Probe *)h->self)->bad = true; return 1; }
static IrVal pr_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) { ((Probe *)h->self)->bad = true; return 1; }
static IrVal pr_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) { ((Probe *)h->self)->bad = true; return 1; }
static IrVal pr_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) { ((Probe *)h->self)->bad = true; return 1; }
static IrVal pr_getitem(OpsHandler *h, IrVal v, int k) { ((Probe *)h->self)->bad = true; return 1; }
static void pr_store_red(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) { ((Probe *)h->self)->bad = true; }
static IrVal pr_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dt, const IrVal *v, int n) { ((Probe *)h->self)->bad = true; return 1; }
static IrVal pr_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) { ((Probe *)h->self)->bad = true; return 1; }
static Expr *pr_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    Probe *p = h->self;
    p->bad = true;
    return sym ? sym : size;   /* any expression: the probe's answer is "not strided" */
}

/* Linear in the probe variables: sums/products of ints and symbols, each product holding at
 * most one probe variable. */
static bool is_probe_var(const Expr *e) { return e->kind == EX_SYM && strncmp(e->name, "_q", 2) == 0; }
static bool has_probe_var(const Expr *e) {
    if (is_probe_var(e)) return true;
    for (int i = 0; i < e->n; i++)
        if (has_probe_var(e->args[i])) return true;
    return false;
}
static bool is_linear(const Expr *e) {
    switch (e->kind) {
    case EX_INT: case EX_SYM: return true;
    case EX_ADD:
        for (int i = 0; i < e->n; i++)
            if (!is_linear(e->args[i])) return false;
        return true;
    case EX_MUL: {
        int nv = 0;
        for (int i = 0; i < e->n; i++) {
            if (has_probe_var(e->args[i])) {
                nv++;
                if (!is_linear(e->args[i])) return false;
            }
        }
        return nv <= 1;
    }
    default: return !has_probe_var(e);
    }
}

bool ir_probe_strided(IrModule *m, const IrFn *loader, int ndim, Expr **size, Buffer **buf, Layout *view) {
    SymCtx *s = m->ctx->sym;
    Probe p = {0};
    p.h = (OpsHandler){&p, pr_load, pr_store, pr_constant, pr_index_expr, pr_to_dtype, pr_math,
                       pr_red, pr_getitem, pr_store_red, pr_indirect, pr_store, pr_scan, pr_bucketize};
    Expr *q[MI_MAX_DIMS];
    const char *names[MI_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_q%d", d);
        q[d] = sym_symbol(s, nm);
        names[d] = q[d]->name;
    }
    loader->call(loader, &p.h, q);
    if (p.bad || p.nops != 1 || !p.buf) return false;
    /* convert_to_reinterpret_view: the index over index_vars_squeeze's variables (0 for a dim
       of size 1), simplified as Inductor does (sizevars._simplify_with_ranges: a reshape's
       digits join back, 8192*(i//4) + 2048*(i%4) with i < 8 is 2048*i; no more), must be
       linear, else the view is copied */
    Expr *zero[MI_MAX_DIMS], *sq[MI_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        int64_t one;
        zero[d] = sym_int(s, 0);
        sq[d] = sym_is_int(size[d], &one) && one == 1 ? zero[d] : q[d];
    }
    Expr *e = sym_simplify_inductor(s, sym_subst(s, p.index, names, sq, ndim), names, size, ndim);
    if (!is_linear(e)) return false;
    Expr *off = sym_simplify(s, sym_subst(s, e, names, zero, ndim), NULL, 0);
    *buf = p.buf;
    p.buf->layout.fixed = true;   /* a ReinterpretView freezes the layout it reads through */
    *view = (Layout){.fixed = true, .dtype = p.buf->layout.dtype, .device = p.buf->layout.device, .ndim = ndim};
    view->size = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    view->stride = arena_alloc(&m->arena, sizeof(Expr *) * (ndim + 1));
    view->offset = off;
    /* a size-1 dim's variable is 0 under its range: its stride comes from the index as written
       (any stride is right there; the written one keeps a BLAS operand's leading dimension) */
    Expr *raw = sym_simplify(s, p.index, NULL, 0), *roff = NULL;
    if (is_linear(raw)) roff = sym_simplify(s, sym_subst(s, raw, names, zero, ndim), NULL, 0);
    for (int d = 0; d < ndim; d++) {
        Expr *rep[MI_MAX_DIMS];
        int64_t one;
        bool unit = sym_is_int(size[d], &one) && one == 1 && roff;
        for (int k = 0; k < ndim; k++) rep[k] = sym_int(s, k == d ? 1 : 0);
        view->size[d] = size[d];
        view->stride[d] = sym_simplify(s, sym_sub(s, sym_subst(s, unit ? raw : e, names, rep, ndim), unit ? roff : off), NULL, 0);
    }
    return true;
}

const char *ir_extern_kind_name(ExternKind k) {
    static const char *const names[] = {"mm", "addmm", "bmm", "sdpa", "cond", "fallback", "convolution", "multi_output", "concat"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

bool ir_is_tensor_constant(const Graph *g, const Node *n) {
    return n->kind == N_GET_ATTR && n->has_meta && n->target && !graph_subgraph(g, n->target);
}

bool ir_module_uses_math(const IrModule *m, IrMathOp op) {
    for (int i = 0; i < m->nbufs; i++) {
        const LoopBody *b = m->bufs[i]->body;
        for (int k = 0; b && k < b->nops; k++)
            if (b->ops[k].kind == LOP_MATH && b->ops[k].op == op) return true;
    }
    return false;
}
