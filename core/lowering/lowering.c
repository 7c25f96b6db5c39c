/* lowering.c — FX graph -> IR: one lowering per op (table at the bottom), the define-by-run
 * inner-function closures (IrFn kinds) they build, views as index remapping, reductions,
 * extern kernels, input mutation and the realization rules. See lowering.h and core/ir/ir.md. */
#include "lowering/lowering.h"
#include "fx_passes/functionalize.h"
#include "fx_passes/passes.h"
#include "base/symbool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values of graph nodes during lowering ---- */
typedef enum { LV_NONE, LV_TBOX, LV_TUPLE, LV_SYM } LValKind;
typedef struct LVal { LValKind kind; IrTBox *t; IrTBox **items; int n; Expr *sym; } LVal;

typedef struct Lower {
    MiCtx *ctx;
    SymCtx *s;
    IrModule *m;
    const Graph *g;
    LVal *vals;          /* per node position */
    int *nusers;         /* per node position */
    const Node *cur;
    Device dev;          /* the graph's device: for buffers whose node has no single meta */
} Lower;

static int lerr(Lower *L, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int lerr(Lower *L, const Node *n, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mi_err(L->ctx, L->g->source, n ? n->src_line : 0, 0, "%s (node '%s')", msg,
                  n ? n->name : "?");
}

static void *lalloc(Lower *L, size_t n) { return arena_alloc(&L->m->arena, n); }

/* "aten.add.Tensor" -> "add" */
static const char *short_name(Lower *L, const char *target) {
    const char *a = strchr(target, '.');
    if (!a) return target;
    a++;
    const char *b = strchr(a, '.');
    return b ? arena_strndup(&L->m->arena, a, (size_t)(b - a)) : a;
}

/* ---- origins (op names folded into a kernel) ---- */
static void origins_add(Lower *L, const char ***o, int *n, const char *name) {
    for (int i = 0; i < *n; i++)
        if (strcmp((*o)[i], name) == 0) return;
    const char **nw = lalloc(L, sizeof(char *) * (*n + 1));
    if (*n) memcpy(nw, *o, sizeof(char *) * *n);
    nw[(*n)++] = name;
    *o = nw;
}
static void origins_merge_arg(Lower *L, const char ***o, int *n, const IrTBox *t) {
    if (!t || (t->sb && t->sb->buf && !t->is_view)) return;
    for (int i = 0; i < t->norigins; i++) origins_add(L, o, n, t->origins[i]);
}

/* ---- closures ---- */

static IrFn *mkfn(Lower *L, IrFnCall call, DType dt) {
    IrFn *f = lalloc(L, sizeof *f);
    f->call = call;
    f->dtype = dt;
    f->cost = 1;
    f->sym = L->s;
    return f;
}

static IrVal call_buf_load(const IrFn *f, OpsHandler *h, Expr *const *idx);

static IrVal call_storage(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrStorage *sb = f->sb;
    if (sb->buf) {
        IrFn tmp = {.buf = sb->buf, .sym = f->sym};
        return call_buf_load(&tmp, h, idx);
    }
    return sb->fn->call(sb->fn, h, idx);
}

static SymCtx *fn_sym(const IrFn *f) { return f->sym; }

static IrVal call_buf_load(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    const Layout *l = f->view ? f->view : &f->buf->layout;
    return h->load(h, f->buf, layout_index(f->sym, l, idx));
}

static const IrFn *mk_storage_loader(Lower *L, IrStorage *sb) {
    IrFn *f = mkfn(L, call_storage, sb->dtype);
    f->sb = sb;
    f->cost = sb->buf ? 1 : sb->fn->cost;
    return f;
}

static IrVal call_reindex(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = fn_sym(f);
    const char *names[MI_MAX_DIMS * 2];
    Expr *in[MI_MAX_DIMS * 2];
    for (int k = 0; k < f->nin; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_v%d", k);
        names[k] = sym_symbol(s, nm)->name;
    }
    for (int k = 0; k < f->nmap; k++)
        in[k] = f->nin ? sym_subst(s, f->map[k], names, (Expr **)idx, f->nin) : f->map[k];
    return f->a[0]->call(f->a[0], h, in);
}

static Expr *vsym(Lower *L, int k) {
    char nm[16];
    snprintf(nm, sizeof nm, "_v%d", k);
    return sym_symbol(L->s, nm);
}

/* A reindexing view: out index (nin dims) -> inner index (nmap exprs over _v0.._v(nin-1)). */
static const IrFn *mk_reindex(Lower *L, const IrFn *inner, int nin, Expr **map, int nmap) {
    IrFn *f = mkfn(L, call_reindex, inner->dtype);
    f->a[0] = inner;
    f->na = 1;
    f->nin = nin;
    f->nmap = nmap;
    f->map = lalloc(L, sizeof(Expr *) * (nmap + 1));
    if (nmap) memcpy(f->map, map, sizeof(Expr *) * nmap);
    f->cost = inner->cost;
    return f;
}

static IrVal call_const(const IrFn *f, OpsHandler *h, Expr *const *idx) { return h->constant(h, f->c, f->dtype); }
static const IrFn *mk_const(Lower *L, double v, DType dt) {
    IrFn *f = mkfn(L, call_const, dt);
    f->c = v;
    return f;
}

static IrVal call_index_expr(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = fn_sym(f);
    const char *names[MI_MAX_DIMS];
    for (int k = 0; k < f->nin; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_v%d", k);
        names[k] = sym_symbol(s, nm)->name;
    }
    Expr *e = f->nin ? sym_subst(s, f->e, names, (Expr **)idx, f->nin) : f->e;
    return h->index_expr(h, e, f->dtype);
}
static const IrFn *mk_index_expr(Lower *L, Expr *e, int nin, DType dt) {
    IrFn *f = mkfn(L, call_index_expr, dt);
    f->e = e;
    f->nin = nin;
    return f;
}

static IrVal call_to_dtype(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrVal v = f->a[0]->call(f->a[0], h, idx);
    return h->to_dtype(h, v, f->dtype, f->a[0]->dtype);
}
static const IrFn *mk_to_dtype(Lower *L, const IrFn *a, DType dt) {
    if (a->dtype == dt) return a;
    IrFn *f = mkfn(L, call_to_dtype, dt);
    f->a[0] = a;
    f->na = 1;
    f->cost = a->cost + 1;
    return f;
}

static IrVal call_math(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrVal v[3];
    for (int i = 0; i < f->na; i++) v[i] = f->a[i]->call(f->a[i], h, idx);
    return h->math(h, (IrMathOp)f->op, v, f->dtype);
}
static const IrFn *mk_math(Lower *L, IrMathOp op, DType dt, const IrFn *a, const IrFn *b, const IrFn *c) {
    IrFn *f = mkfn(L, call_math, dt);
    f->op = op;
    f->a[0] = a; f->a[1] = b; f->a[2] = c;
    f->na = ir_math_arity(op);
    for (int i = 0; i < f->na; i++) f->cost += f->a[i]->cost;
    return f;
}

/* slice_scatter / select_scatter: where(index in range, src[...], base[...]) */
static IrVal call_scatter(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = fn_sym(f);
    Expr *i = idx[f->dim];
    IrVal cond;
    Expr *sidx[MI_MAX_DIMS];
    int ns = 0;
    if (f->op == 0) {   /* slice: lo <= i < hi, (i - lo) % step == 0 */
        IrVal zero = h->constant(h, 0, DT_I64);
        IrVal a = h->index_expr(h, sym_sub(s, i, f->lo), DT_I64);
        IrVal b = h->index_expr(h, sym_sub(s, f->hi, i), DT_I64);
        IrVal c1 = ops_binary(h, IOP_GE, a, zero, DT_BOOL);
        IrVal c2 = ops_binary(h, IOP_GT, b, zero, DT_BOOL);
        cond = ops_binary(h, IOP_LOGICAL_AND, c1, c2, DT_BOOL);
        int64_t st = 1;
        sym_is_int(f->step, &st);
        /* clamp the src index so the (discarded) load stays in bounds */
        Expr *j = sym_floordiv(s, sym_sub(s, i, f->lo), f->step);
        j = sym_max(s, sym_int(s, 0), sym_min(s, j, sym_sub(s, f->e, sym_int(s, 1))));
        if (st != 1) {
            IrVal md = h->index_expr(h, sym_mod(s, sym_sub(s, i, f->lo), f->step), DT_I64);
            cond = ops_binary(h, IOP_LOGICAL_AND, cond, ops_binary(h, IOP_EQ, md, zero, DT_BOOL), DT_BOOL);
        }
        for (int d = 0; d < f->nin; d++) sidx[ns++] = d == f->dim ? j : idx[d];
    } else {            /* select: i == lo */
        IrVal a = h->index_expr(h, i, DT_I64);
        IrVal b = h->index_expr(h, f->lo, DT_I64);
        cond = ops_binary(h, IOP_EQ, a, b, DT_BOOL);
        for (int d = 0; d < f->nin; d++)
            if (d != f->dim) sidx[ns++] = idx[d];
    }
    IrVal sv = f->a[1]->call(f->a[1], h, sidx);
    IrVal bv = f->a[0]->call(f->a[0], h, idx);
    return ops_where(h, cond, sv, bv, f->dtype);
}

/* ---- tensor boxes ---- */

static IrTBox *tbox_new(Lower *L, DType dt, int ndim, Expr **size, const IrFn *loader) {
    IrTBox *t = lalloc(L, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    t->size = lalloc(L, sizeof(Expr *) * (ndim + 1));
    if (ndim) memcpy(t->size, size, sizeof(Expr *) * ndim);
    t->loader = loader;
    return t;
}

static IrTBox *tbox_of_storage(Lower *L, IrStorage *sb) {
    IrTBox *t = tbox_new(L, sb->dtype, sb->ndim, sb->size, mk_storage_loader(L, sb));
    t->sb = sb;
    t->origins = sb->origins;
    t->norigins = sb->norigins;
    return t;
}

static IrTBox *tbox_of_buffer(Lower *L, Buffer *b) {
    IrStorage *sb = lalloc(L, sizeof *sb);
    sb->buf = b;
    sb->dtype = b->layout.dtype;
    sb->ndim = b->layout.ndim;
    sb->size = b->layout.size;
    sb->origins = b->origins;
    sb->norigins = b->norigins;
    return tbox_of_storage(L, sb);
}

static Buffer *new_buffer(Lower *L, BufKind k, const Layout *l) {
    Buffer *b = ir_new_buffer(L->m, k, l);
    b->origin = L->cur;
    return b;
}

static void loop_order_by_stride(const Layout *l, int *order) {
    int n = l->ndim;
    for (int i = 0; i < n; i++) order[i] = i;
    int64_t st[MI_MAX_DIMS];
    for (int i = 0; i < n; i++)
        if (!sym_is_int(l->stride[i], &st[i])) return;
    for (int i = 1; i < n; i++)       /* stable insertion sort by decreasing stride */
        for (int j = i; j > 0 && st[order[j]] > st[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
}

/* Realize a pending storage into a ComputedBuffer (layout: contiguous, or *fixed). */
static Buffer *realize_storage(Lower *L, IrStorage *sb, const Layout *fixed) {
    if (sb->buf) return sb->buf;
    Layout l = fixed ? *fixed : layout_contiguous(L->m, sb->dtype, L->dev, sb->ndim, sb->size);
    if (!fixed && L->cur && L->cur->has_meta) l.device = L->cur->meta.device;
    Buffer *b = new_buffer(L, BUF_COMPUTED, &l);
    b->origins = sb->origins;
    b->norigins = sb->norigins;
    int order[MI_MAX_DIMS];
    loop_order_by_stride(&l, order);
    b->body = ir_trace_body(L->m, b, sb->fn, sb->ndim, sb->size, order, 0, NULL, RED_SUM, 0);
    sb->buf = b;
    sb->fn = NULL;
    return b;
}

static IrStorage *storage_new(Lower *L, const IrFn *fn, DType dt, int ndim, Expr **size,
                              const char **origins, int norigins) {
    IrStorage *sb = lalloc(L, sizeof *sb);
    sb->fn = fn;
    sb->dtype = dt;
    sb->ndim = ndim;
    sb->size = lalloc(L, sizeof(Expr *) * (ndim + 1));
    if (ndim) memcpy(sb->size, size, sizeof(Expr *) * ndim);
    sb->origins = origins;
    sb->norigins = norigins;
    sb->node = L->cur;
    return sb;
}

/* A TensorBox as a buffer usable by an extern kernel or as an output: strided view of a
 * realized buffer when possible, else realized into a fresh contiguous buffer. */
static Buffer *tbox_as_strided(Lower *L, IrTBox *t, Layout *view) {
    if (t->sb && !t->is_view && !t->sb->buf) realize_storage(L, t->sb, NULL);
    Buffer *b;
    if (ir_probe_strided(L->m, t->loader, t->ndim, t->size, &b, view)) return b;
    IrStorage *sb = storage_new(L, t->loader, t->dtype, t->ndim, t->size, t->origins, t->norigins);
    b = realize_storage(L, sb, NULL);
    *view = b->layout;
    return b;
}

static void maybe_realize(Lower *L, IrTBox *t, int nusers) {
    if (!t->sb || t->sb->buf || t->is_view) return;
    if (nusers > 1 && t->sb->fn->cost > 1) realize_storage(L, t->sb, NULL);
    else if (t->sb->fn->cost > LOWER_MAX_INLINE_COST) realize_storage(L, t->sb, NULL);
}

/* ---- argument helpers ---- */

static LVal *node_val(Lower *L, const Node *n) {
    int i = graph_index_of(L->g, n);
    return i >= 0 ? &L->vals[i] : NULL;
}

static IrTBox *arg_tbox(Lower *L, const Node *n, int i) {
    const Value *v = i < n->nargs ? &n->args[i] : NULL;
    if (!v || v->kind != V_NODE) return NULL;
    LVal *lv = node_val(L, v->node);
    return lv && lv->kind == LV_TBOX ? lv->t : NULL;
}

static const Value *arg_or_kw(const Node *n, int i, const char *kw) {
    if (i >= 0 && i < n->nargs) return &n->args[i];
    const Kwarg *k = node_kwarg(n, kw);
    return k ? &k->v : NULL;
}

static bool arg_int(const Node *n, int i, const char *kw, int64_t *out) {
    const Value *v = arg_or_kw(n, i, kw);
    return v && value_as_int(v, out);
}

static Expr *value_expr(Lower *L, const Value *v) {
    int64_t x;
    if (value_as_int(v, &x)) return sym_int(L->s, x);
    if (v->kind == V_SYM) return v->sym;
    if (v->kind == V_NODE && v->node->is_sym) return v->node->sym_val;
    if (v->kind == V_NODE) {
        LVal *lv = node_val(L, v->node);
        if (lv && lv->kind == LV_SYM) return lv->sym;
    }
    return NULL;
}

/* int list argument (dims) into out; returns count or -1 */
static int arg_int_list(const Value *v, int64_t *out, int max) {
    if (!v) return -1;
    int64_t x;
    if (value_as_int(v, &x)) { out[0] = x; return 1; }
    if (v->kind != V_LIST && v->kind != V_TUPLE) return -1;
    int n = 0;
    for (int i = 0; i < v->list.n && n < max; i++) {
        if (!value_as_int(&v->list.items[i], &x)) return -1;
        out[n++] = x;
    }
    return n;
}

static const TensorMeta *out_meta(const Node *n) { return n->has_meta ? &n->meta : NULL; }

/* A loader for arg i broadcast to (ndim, size), converted to dt; scalars become constants. */
/* loader f of a tensor of shape (tnd, tsize) broadcast to (ndim, size); NULL when it cannot be */
static const IrFn *broadcast_loader(Lower *L, const IrFn *f, int tnd, Expr **tsize, int ndim, Expr **size) {
    if (tnd == ndim && (ndim == 0 || memcmp(tsize, size, sizeof(Expr *) * ndim) == 0)) return f;
    if (tnd > ndim) return NULL;
    Expr *map[MI_MAX_DIMS];
    for (int dd = 0; dd < tnd; dd++) {
        int od = dd + ndim - tnd;
        int64_t one;
        if (sym_is_int(tsize[dd], &one) && one == 1 && !(sym_is_int(size[od], &one) && one == 1))
            map[dd] = sym_int(L->s, 0);
        else {
            if (tsize[dd] != size[od]) {
                char a[64], b[64];
                ir_add_guard(L->m, "%s == %s", sym_str(tsize[dd], a, sizeof a), sym_str(size[od], b, sizeof b));
            }
            map[dd] = vsym(L, od);
        }
    }
    return mk_reindex(L, f, ndim, map, tnd);
}

static const IrFn *arg_loader(Lower *L, const Node *n, int i, int ndim, Expr **size, DType dt) {
    const Value *v = &n->args[i];
    double d;
    if (v->kind != V_NODE && value_as_double(v, &d)) return mk_const(L, d, dt);
    IrTBox *t = arg_tbox(L, n, i);
    if (!t) return NULL;
    const IrFn *f = broadcast_loader(L, t->loader, t->ndim, t->size, ndim, size);
    return f ? mk_to_dtype(L, f, dt) : NULL;
}

static DType arg_dtype(Lower *L, const Node *n, int i) {
    const Value *v = i < n->nargs ? &n->args[i] : NULL;
    if (!v) return DT_INVALID;
    if (v->kind == V_NODE) {
        IrTBox *t = arg_tbox(L, n, i);
        return t ? t->dtype : DT_INVALID;
    }
    if (v->kind == V_FLOAT) return DT_F32;
    if (v->kind == V_BOOL) return DT_BOOL;
    if (v->kind == V_INT) return DT_I64;
    return DT_INVALID;
}

/* Give node n a new pending storage computing fn over its meta's shape, realized at once when
 * its users call for it (maybe_realize). */
static int set_pending(Lower *L, const Node *n, const IrFn *fn, DType dt, const char **o, int no) {
    const TensorMeta *m = out_meta(n);
    IrTBox *t = tbox_of_storage(L, storage_new(L, fn, dt, m->ndim, m->size, o, no));
    LVal *lv = node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = t;
    maybe_realize(L, t, L->nusers[graph_index_of(L->g, n)]);
    return 0;
}

/* Give node n the pending pointwise value fn (shape from its meta). */
static int set_pointwise(Lower *L, const Node *n, const IrFn *fn, DType dt, int nin_args) {
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, short_name(L, n->target));
    for (int i = 0; i < nin_args && i < n->nargs; i++) origins_merge_arg(L, &o, &no, arg_tbox(L, n, i));
    return set_pending(L, n, fn, dt, o, no);
}

static int set_view(Lower *L, const Node *n, IrTBox *src, const IrFn *fn, int ndim, Expr **size) {
    IrTBox *t = tbox_new(L, src->dtype, ndim, size, fn);
    t->is_view = true;
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, short_name(L, n->target));
    origins_merge_arg(L, &o, &no, src);
    t->origins = o;
    t->norigins = no;
    LVal *lv = node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = t;
    /* a view of a pending storage with several users: realize the storage */
    if (src->sb && !src->is_view && !src->sb->buf && L->nusers[graph_index_of(L->g, n)] > 1)
        realize_storage(L, src->sb, NULL);
    return 0;
}

/* ---- pointwise ops ---- */

typedef struct PwDef { const char *name; IrMathOp op; int nt; /* tensor-ish args */ bool cmp; } PwDef;
static const PwDef pw_defs[] = {
    {"aten.add.Tensor", IOP_ADD, 2, 0}, {"aten.add.Scalar", IOP_ADD, 2, 0},
    {"aten.sub.Tensor", IOP_SUB, 2, 0}, {"aten.sub.Scalar", IOP_SUB, 2, 0},
    {"aten.mul.Tensor", IOP_MUL, 2, 0}, {"aten.mul.Scalar", IOP_MUL, 2, 0},
    {"aten.div.Tensor", IOP_TRUEDIV, 2, 0}, {"aten.div.Scalar", IOP_TRUEDIV, 2, 0},
    {"aten.pow.Tensor_Scalar", IOP_POW, 2, 0}, {"aten.pow.Tensor_Tensor", IOP_POW, 2, 0},
    {"aten.maximum.default", IOP_MAXIMUM, 2, 0}, {"aten.minimum.default", IOP_MINIMUM, 2, 0},
    {"aten.eq.Tensor", IOP_EQ, 2, 1}, {"aten.eq.Scalar", IOP_EQ, 2, 1},
    {"aten.ne.Tensor", IOP_NE, 2, 1}, {"aten.ne.Scalar", IOP_NE, 2, 1},
    {"aten.lt.Tensor", IOP_LT, 2, 1}, {"aten.lt.Scalar", IOP_LT, 2, 1},
    {"aten.le.Tensor", IOP_LE, 2, 1}, {"aten.le.Scalar", IOP_LE, 2, 1},
    {"aten.gt.Tensor", IOP_GT, 2, 1}, {"aten.gt.Scalar", IOP_GT, 2, 1},
    {"aten.ge.Tensor", IOP_GE, 2, 1}, {"aten.ge.Scalar", IOP_GE, 2, 1},
    {"aten.logical_and.default", IOP_LOGICAL_AND, 2, 1}, {"aten.logical_or.default", IOP_LOGICAL_OR, 2, 1},
    {"aten.logical_not.default", IOP_LOGICAL_NOT, 1, 1},
    {"aten.neg.default", IOP_NEG, 1, 0}, {"aten.exp.default", IOP_EXP, 1, 0},
    {"aten.log.default", IOP_LOG, 1, 0}, {"aten.sqrt.default", IOP_SQRT, 1, 0},
    {"aten.rsqrt.default", IOP_RSQRT, 1, 0}, {"aten.tanh.default", IOP_TANH, 1, 0},
    {"aten.sigmoid.default", IOP_SIGMOID, 1, 0}, {"aten.relu.default", IOP_RELU, 1, 0},
    {"aten.erf.default", IOP_ERF, 1, 0}, {"aten.sin.default", IOP_SIN, 1, 0},
    {"aten.cos.default", IOP_COS, 1, 0}, {"aten.tan.default", IOP_TAN, 1, 0},
    {"aten.abs.default", IOP_ABS, 1, 0}, {"aten.reciprocal.default", IOP_RECIPROCAL, 1, 0},
    {"aten.expm1.default", IOP_EXPM1, 1, 0}, {"aten.log1p.default", IOP_LOG1P, 1, 0},
    {"aten.floor.default", IOP_FLOOR, 1, 0}, {"aten.ceil.default", IOP_CEIL, 1, 0},
    {"aten.sign.default", IOP_SIGN, 1, 0}, {"aten.round.default", IOP_ROUND, 1, 0},
    {"aten.asin.default", IOP_ASIN, 1, 0}, {"aten.acos.default", IOP_ACOS, 1, 0}, {"aten.lgamma.default", IOP_LGAMMA, 1, 0},
    {"aten.fmod.Scalar", IOP_FMOD, 2, 0}, {"aten.fmod.Tensor", IOP_FMOD, 2, 0},
    {"aten.floor_divide.default", IOP_FLOORDIV, 2, 0}, {"aten.floor_divide.Scalar", IOP_FLOORDIV, 2, 0},
    {"aten.pow.Scalar", IOP_POW, 2, 0},
};

static int lower_pointwise(Lower *L, const Node *n, const PwDef *d) {
    const TensorMeta *m = out_meta(n);
    if (!m) return lerr(L, n, "pointwise op '%s' has no shape annotation", n->target);
    if (n->nargs < d->nt) return lerr(L, n, "op '%s' needs %d arguments", n->target, d->nt);
    DType cdt = m->dtype;
    if (d->cmp) {
        DType a = arg_dtype(L, n, 0), b = d->nt > 1 ? arg_dtype(L, n, 1) : a;
        if (a == DT_INVALID || b == DT_INVALID) return lerr(L, n, "bad arguments to '%s'", n->target);
        bool at = n->args[0].kind == V_NODE, bt = d->nt > 1 && n->args[1].kind == V_NODE;
        cdt = (at && !bt) ? (dtype_is_float(a) || !dtype_is_float(b) ? a : DT_F32)
            : (!at && bt) ? (dtype_is_float(b) || !dtype_is_float(a) ? b : DT_F32) : dtype_promote(a, b);
        if (d->op == IOP_LOGICAL_AND || d->op == IOP_LOGICAL_OR || d->op == IOP_LOGICAL_NOT) cdt = DT_BOOL;
    }
    const IrFn *a[2] = {0};
    for (int i = 0; i < d->nt; i++) {
        a[i] = arg_loader(L, n, i, m->ndim, m->size, cdt);
        if (!a[i]) return lerr(L, n, "argument %d of '%s' is not a tensor or number", i, n->target);
    }
    /* add/sub with alpha */
    const Kwarg *alpha = node_kwarg(n, "alpha");
    double al;
    if (alpha && value_as_double(&alpha->v, &al) && al != 1.0 && d->nt == 2)
        a[1] = mk_math(L, IOP_MUL, cdt, a[1], mk_const(L, al, cdt), NULL);
    const IrFn *f = d->nt == 1 ? mk_math(L, d->op, m->dtype, a[0], NULL, NULL)
                               : mk_math(L, d->op, m->dtype, a[0], a[1], NULL);
    return set_pointwise(L, n, f, m->dtype, d->nt);
}

static int lower_where(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    if (!m || n->nargs < 3) return lerr(L, n, "where needs 3 arguments and a shape");
    const IrFn *c = arg_loader(L, n, 0, m->ndim, m->size, DT_BOOL);
    const IrFn *a = arg_loader(L, n, 1, m->ndim, m->size, m->dtype);
    const IrFn *b = arg_loader(L, n, 2, m->ndim, m->size, m->dtype);
    if (!c || !a || !b) return lerr(L, n, "bad arguments to where");
    return set_pointwise(L, n, mk_math(L, IOP_WHERE, m->dtype, c, a, b), m->dtype, 3);
}

static int lower_clamp(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    if (!m) return lerr(L, n, "clamp needs a shape");
    const IrFn *f = arg_loader(L, n, 0, m->ndim, m->size, m->dtype);
    if (!f) return lerr(L, n, "bad argument to clamp");
    bool is_min = strstr(n->target, "clamp_min") != NULL, is_max = strstr(n->target, "clamp_max") != NULL;
    double lo, hi;
    const Value *vlo = arg_or_kw(n, 1, is_max ? "max" : "min");
    const Value *vhi = is_min || is_max ? NULL : arg_or_kw(n, 2, "max");
    if (is_max) { if (vlo && value_as_double(vlo, &hi)) f = mk_math(L, IOP_MINIMUM, m->dtype, f, mk_const(L, hi, m->dtype), NULL); }
    else {
        if (vlo && vlo->kind != V_NONE && value_as_double(vlo, &lo)) f = mk_math(L, IOP_MAXIMUM, m->dtype, f, mk_const(L, lo, m->dtype), NULL);
        if (vhi && vhi->kind != V_NONE && value_as_double(vhi, &hi)) f = mk_math(L, IOP_MINIMUM, m->dtype, f, mk_const(L, hi, m->dtype), NULL);
    }
    return set_pointwise(L, n, f, m->dtype, 1);
}

static int lower_convert(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    if (!m) return lerr(L, n, "'%s' needs a shape", n->target);
    const IrFn *f = arg_loader(L, n, 0, m->ndim, m->size, m->dtype);
    if (!f) return lerr(L, n, "bad argument to '%s'", n->target);
    return set_pointwise(L, n, f, m->dtype, 1);
}

static int lower_full(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    if (!m) return lerr(L, n, "'%s' needs a shape", n->target);
    double v = 0;   /* empty*, new_empty: zeros, as the interpreter */
    if (strstr(n->target, "ones")) v = 1;
    else if (strstr(n->target, "full")) {
        const Value *fv = arg_or_kw(n, strncmp(n->target, "aten.new_full", 13) == 0 ? 2 : 1, "fill_value");
        if (!fv || !value_as_double(fv, &v)) return lerr(L, n, "full needs a number fill value");
    }
    return set_pointwise(L, n, mk_const(L, v, m->dtype), m->dtype, 0);
}

/* ---- composite ops: decomposed into the IR's math ops, as Inductor's decompositions do ---- */

static const IrFn *softplus_fn(Lower *L, const IrFn *x, double beta, double th, DType dt) {
    const IrFn *bx = beta == 1 ? x : mk_math(L, IOP_MUL, dt, x, mk_const(L, beta, dt), NULL);
    const IrFn *sp = mk_math(L, IOP_LOG1P, dt, mk_math(L, IOP_EXP, dt, bx, NULL, NULL), NULL, NULL);
    if (beta != 1) sp = mk_math(L, IOP_TRUEDIV, dt, sp, mk_const(L, beta, dt), NULL);
    return mk_math(L, IOP_WHERE, dt, mk_math(L, IOP_GT, DT_BOOL, bx, mk_const(L, th, dt), NULL), x, sp);
}

static double arg_num(const Node *n, int i, const char *kw, double dflt) {
    const Value *v = arg_or_kw(n, i, kw);
    double d;
    return v && v->kind != V_NONE && value_as_double(v, &d) ? d : dflt;
}

static int lower_composite(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    if (!m) return lerr(L, n, "'%s' needs a shape annotation", n->target);
    DType dt = m->dtype;
    char op[64];
    snprintf(op, sizeof op, "%s", short_name(L, n->target));
    if (!strcmp(op, "isnan") || !strcmp(op, "isinf") || !strcmp(op, "logical_xor")) {   /* bool of another dtype */
        DType in = arg_dtype(L, n, 0);
        const IrFn *a = in == DT_INVALID ? NULL : arg_loader(L, n, 0, m->ndim, m->size, in), *f;
        if (!a) return lerr(L, n, "bad first argument to '%s'", n->target);
        if (!strcmp(op, "isnan")) f = mk_math(L, IOP_NE, DT_BOOL, a, a, NULL);
        else if (!strcmp(op, "isinf"))
            f = dtype_is_float(in) ? mk_math(L, IOP_EQ, DT_BOOL, mk_math(L, IOP_ABS, in, a, NULL, NULL), mk_const(L, INFINITY, in), NULL)
                                   : mk_const(L, 0, DT_BOOL);
        else {
            const IrFn *b = arg_loader(L, n, 1, m->ndim, m->size, DT_BOOL);
            if (!b) return lerr(L, n, "bad second argument to logical_xor");
            f = mk_math(L, IOP_NE, DT_BOOL, mk_to_dtype(L, a, DT_BOOL), b, NULL);
        }
        return set_pointwise(L, n, f, DT_BOOL, !strcmp(op, "logical_xor") ? 2 : 1);
    }
    const IrFn *x = arg_loader(L, n, 0, m->ndim, m->size, dt);
    if (!x) return lerr(L, n, "bad first argument to '%s'", n->target);
#define C(v) mk_const(L, (v), dt)
#define M1(o, a) mk_math(L, (o), dt, (a), NULL, NULL)
#define M2(o, a, b) mk_math(L, (o), dt, (a), (b), NULL)
#define GT0(a) mk_math(L, IOP_GT, DT_BOOL, (a), C(0), NULL)
    const IrFn *f = NULL;
    int nt = 1;
    /* the step order of PyTorch's CPU kernels, so that f32 rounding agrees step by step */
    if (!strcmp(op, "silu")) f = M2(IOP_TRUEDIV, x, M2(IOP_ADD, C(1), M1(IOP_EXP, M1(IOP_NEG, x))));
    else if (!strcmp(op, "softplus")) f = softplus_fn(L, x, arg_num(n, 1, "beta", 1), arg_num(n, 2, "threshold", 20), dt);
    else if (!strcmp(op, "mish")) f = M2(IOP_MUL, x, M1(IOP_TANH, M1(IOP_LOG1P, M1(IOP_EXP, x))));
    else if (!strcmp(op, "leaky_relu"))
        f = mk_math(L, IOP_WHERE, dt, GT0(x), x, M2(IOP_MUL, x, C(arg_num(n, 1, "negative_slope", 0.01))));
    else if (!strcmp(op, "elu")) {
        double alpha = arg_num(n, 1, "alpha", 1), scale = arg_num(n, 2, "scale", 1), iscale = arg_num(n, 3, "input_scale", 1);
        const IrFn *neg = M2(IOP_MUL, M1(IOP_EXPM1, iscale == 1 ? x : M2(IOP_MUL, x, C(iscale))), C(dt == DT_F32 ? (double)(float)(alpha * scale) : alpha * scale));
        f = mk_math(L, IOP_WHERE, dt, GT0(x), scale == 1 ? x : M2(IOP_MUL, x, C(scale)), neg);
    } else if (!strcmp(op, "hardsigmoid") || !strcmp(op, "hardswish")) {
        const IrFn *r6 = M2(IOP_MINIMUM, M2(IOP_MAXIMUM, M2(IOP_ADD, x, C(3)), C(0)), C(6));
        f = !strcmp(op, "hardsigmoid") ? M2(IOP_TRUEDIV, r6, C(6)) : M2(IOP_TRUEDIV, M2(IOP_MUL, x, r6), C(6));
    } else if (!strcmp(op, "gelu")) {
        const Value *ap = arg_or_kw(n, -1, "approximate");
        bool tanh_ = ap && ap->kind == V_STR && !strcmp(ap->s, "tanh");
        const IrFn *in = tanh_ ? M2(IOP_MUL, C(sqrt(2 / M_PI)), M2(IOP_ADD, x, M2(IOP_MUL, C(0.044715), M2(IOP_MUL, x, M2(IOP_MUL, x, x)))))
                               : M2(IOP_MUL, x, C(M_SQRT1_2));
        f = M2(IOP_MUL, M2(IOP_MUL, C(0.5), x), M2(IOP_ADD, C(1), M1(tanh_ ? IOP_TANH : IOP_ERF, in)));
    } else if (!strcmp(op, "rsub")) {
        const IrFn *o = arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!o) return lerr(L, n, "bad second argument to rsub");
        double al = arg_num(n, -1, "alpha", 1);
        f = M2(IOP_SUB, o, al == 1 ? x : M2(IOP_MUL, x, C(al)));
        nt = 2;
    } else if (!strcmp(op, "masked_fill")) {
        const IrFn *mask = arg_loader(L, n, 1, m->ndim, m->size, DT_BOOL), *v = arg_loader(L, n, 2, m->ndim, m->size, dt);
        if (!mask || !v) return lerr(L, n, "bad arguments to masked_fill");
        f = mk_math(L, IOP_WHERE, dt, mask, v, x);
        nt = 3;
    } else if (!strcmp(op, "fill")) {
        f = arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!f) return lerr(L, n, "bad fill value");
    } else if (!strcmp(op, "copy")) {         /* functional copy_: src broadcast into self's shape and dtype */
        f = arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!f) return lerr(L, n, "bad copy source");
        nt = 2;
    } else if (!strcmp(op, "hardtanh")) {     /* clamp: NaN propagates */
        f = M2(IOP_MINIMUM, M2(IOP_MAXIMUM, x, C(arg_num(n, 1, "min_val", -1))), C(arg_num(n, 2, "max_val", 1)));
    } else if (!strcmp(op, "remainder")) {    /* Python modulo, as torch's CPU kernel: fmod, then fix the sign */
        const IrFn *b = arg_loader(L, n, 1, m->ndim, m->size, dt);
        if (!b) return lerr(L, n, "bad second argument to remainder");
        const IrFn *r = M2(IOP_FMOD, x, b);
        const IrFn *fix = mk_math(L, IOP_LOGICAL_AND, DT_BOOL, mk_math(L, IOP_NE, DT_BOOL, r, C(0), NULL),
                                  mk_math(L, IOP_NE, DT_BOOL, mk_math(L, IOP_LT, DT_BOOL, r, C(0), NULL),
                                          mk_math(L, IOP_LT, DT_BOOL, b, C(0), NULL), NULL), NULL);
        f = mk_math(L, IOP_WHERE, dt, fix, M2(IOP_ADD, r, b), r);
        nt = 2;
    } else if (!strcmp(op, "trunc")) {
        f = dtype_is_float(dt) ? mk_math(L, IOP_WHERE, dt, mk_math(L, IOP_LT, DT_BOOL, x, C(0), NULL), M1(IOP_CEIL, x), M1(IOP_FLOOR, x)) : x;
    } else {
        return lerr(L, n, "no composite lowering for '%s'", n->target);
    }
#undef C
#undef M1
#undef M2
#undef GT0
    return set_pointwise(L, n, f, dt, nt);
}

/* cat: out[i] = i < split ? left[i] : right[i - split] along dim; both loads stay in bounds
 * (the index is clamped; the load not taken is discarded). a[0] is the cat of the inputs
 * before the last one, a[1] the last input. */
static IrVal call_cat(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = fn_sym(f);
    Expr *i = idx[f->dim];
    Expr *li[MI_MAX_DIMS], *ri[MI_MAX_DIMS];
    for (int d = 0; d < f->nin; d++) li[d] = ri[d] = idx[d];
    Expr *one = sym_int(s, 1), *zero = sym_int(s, 0);
    li[f->dim] = sym_min(s, i, sym_sub(s, f->lo, one));
    ri[f->dim] = sym_max(s, zero, sym_min(s, sym_sub(s, i, f->lo), sym_sub(s, f->hi, one)));
    IrVal c = ops_binary(h, IOP_LT, h->index_expr(h, i, DT_I64), h->index_expr(h, f->lo, DT_I64), DT_BOOL);
    IrVal lv = f->a[0]->call(f->a[0], h, li);
    IrVal rv = f->a[1]->call(f->a[1], h, ri);
    return ops_where(h, c, lv, rv, f->dtype);
}

/* cat / stack: the output meta, the tensor list (args[0]) and the dim (args[1], default 0,
 * negative counted from the output's rank). */
static int list_and_dim(Lower *L, const Node *n, const char *what, const TensorMeta **m, const Value **lst, int64_t *dim) {
    *m = out_meta(n);
    *lst = n->nargs > 0 ? &n->args[0] : NULL;
    if (!*m || !*lst || ((*lst)->kind != V_LIST && (*lst)->kind != V_TUPLE) || (*lst)->list.n < 1)
        return lerr(L, n, "%s needs a list of tensors and a shape", what);
    *dim = 0;
    arg_int(n, 1, "dim", dim);
    if (*dim < 0) *dim += (*m)->ndim;
    if (*dim < 0 || *dim >= (*m)->ndim) return lerr(L, n, "%s: bad dim", what);
    return 0;
}

/* stack(tensors, dim): cat of the tensors each seen with a size-1 dim inserted at dim. */
static int lower_stack(Lower *L, const Node *n) {
    const TensorMeta *m;
    const Value *lst;
    int64_t dim;
    if (list_and_dim(L, n, "stack", &m, &lst, &dim) < 0) return -1;
    const IrFn *acc = NULL;
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, "stack");
    for (int k = 0; k < lst->list.n; k++) {
        const Value *v = &lst->list.items[k];
        LVal *lv = v->kind == V_NODE ? node_val(L, v->node) : NULL;
        IrTBox *t = lv && lv->kind == LV_TBOX ? lv->t : NULL;
        if (!t || t->ndim + 1 != m->ndim) return lerr(L, n, "stack: item %d is not a tensor of rank %d", k, m->ndim - 1);
        origins_merge_arg(L, &o, &no, t);
        Expr *map[MI_MAX_DIMS];
        for (int d = 0, od = 0; od < m->ndim; od++)
            if (od != dim) map[d++] = vsym(L, od);
        const IrFn *ld = mk_to_dtype(L, mk_reindex(L, t->loader, m->ndim, map, t->ndim), m->dtype);
        if (!acc) { acc = ld; continue; }
        IrFn *f = mkfn(L, call_cat, m->dtype);
        f->a[0] = acc;
        f->a[1] = ld;
        f->na = 2;
        f->dim = (int)dim;
        f->nin = m->ndim;
        f->lo = sym_int(L->s, k);
        f->hi = sym_int(L->s, 1);
        f->cost = acc->cost + ld->cost + 4;
        acc = f;
    }
    return set_pending(L, n, acc, m->dtype, o, no);
}

/* arange / iota: start + step * i, in int64 when start and step are integers, else in double
 * (torch's CPU accumulate type for floats), cast to the output dtype. */
static int lower_arange(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    if (!m || m->ndim != 1) return lerr(L, n, "'%s' needs a 1-d shape", n->target);
    const char *t = n->target;
    double start = 0, step = 1;
    const Value *sv = NULL, *pv = NULL;
    if (strcmp(t, "aten.arange.start") == 0 || strcmp(t, "aten.arange.start_step") == 0) {
        sv = arg_or_kw(n, 0, "start");
        pv = arg_or_kw(n, strcmp(t, "aten.arange.start_step") == 0 ? 2 : -1, "step");
    } else if (strcmp(t, "prims.iota.default") == 0) {
        sv = arg_or_kw(n, -1, "start");
        pv = arg_or_kw(n, -1, "step");
    }
    if (sv && sv->kind != V_NONE && !value_as_double(sv, &start)) return lerr(L, n, "'%s': start must be a number", t);
    if (pv && pv->kind != V_NONE && !value_as_double(pv, &step)) return lerr(L, n, "'%s': step must be a number", t);
    const IrFn *f;
    if (start == (double)(int64_t)start && step == (double)(int64_t)step)
        f = mk_index_expr(L, sym_add(L->s, sym_int(L->s, (int64_t)start), sym_mul(L->s, sym_int(L->s, (int64_t)step), vsym(L, 0))), 1, DT_I64);
    else
        f = mk_math(L, IOP_ADD, DT_F64, mk_const(L, start, DT_F64),
                    mk_math(L, IOP_MUL, DT_F64, mk_const(L, step, DT_F64), mk_to_dtype(L, mk_index_expr(L, vsym(L, 0), 1, DT_I64), DT_F64), NULL), NULL);
    return set_pointwise(L, n, mk_to_dtype(L, f, m->dtype), m->dtype, 0);
}

/* constant_pad_nd(x, pad, value): pad = [left_last, right_last, left_prev, ...]; a read at
 * out - left, masked to x's extent (negative pads crop). */
static int lower_pad(Lower *L, const Node *n) {
    const TensorMeta *m = out_meta(n);
    IrTBox *x = arg_tbox(L, n, 0);
    int64_t pad[2 * MI_MAX_DIMS];
    int np = x ? arg_int_list(arg_or_kw(n, 1, "pad"), pad, 2 * MI_MAX_DIMS) : -1;
    if (!m || !x || np < 0 || np % 2 || np / 2 > x->ndim || m->ndim != x->ndim) return lerr(L, n, "constant_pad_nd: bad arguments");
    double value = 0;
    const Value *vv = arg_or_kw(n, 2, "value");
    if (vv && vv->kind != V_NONE && !value_as_double(vv, &value)) return lerr(L, n, "constant_pad_nd: value must be a number");
    SymCtx *s = L->s;
    Expr *map[MI_MAX_DIMS];
    const IrFn *mask = NULL;
    for (int d = 0; d < x->ndim; d++) {
        int k = x->ndim - 1 - d;   /* pad pair k applies to dim ndim-1-k */
        if (2 * k >= np || (pad[2 * k] == 0 && pad[2 * k + 1] == 0)) { map[d] = vsym(L, d); continue; }
        Expr *in = sym_sub(s, vsym(L, d), sym_int(s, pad[2 * k]));
        map[d] = sym_max(s, sym_int(s, 0), sym_min(s, in, sym_sub(s, x->size[d], sym_int(s, 1))));
        const IrFn *ie = mk_index_expr(L, in, x->ndim, DT_I64);
        const IrFn *ok = mk_math(L, IOP_LOGICAL_AND, DT_BOOL, mk_math(L, IOP_GE, DT_BOOL, ie, mk_const(L, 0, DT_I64), NULL),
                                 mk_math(L, IOP_LT, DT_BOOL, ie, mk_index_expr(L, x->size[d], x->ndim, DT_I64), NULL), NULL);
        mask = mask ? mk_math(L, IOP_LOGICAL_AND, DT_BOOL, mask, ok, NULL) : ok;
    }
    const IrFn *ld = mk_to_dtype(L, mk_reindex(L, x->loader, x->ndim, map, x->ndim), m->dtype);
    const IrFn *f = mask ? mk_math(L, IOP_WHERE, m->dtype, mask, ld, mk_const(L, value, m->dtype)) : ld;
    return set_pointwise(L, n, f, m->dtype, 1);
}

static int lower_cat(Lower *L, const Node *n) {
    const TensorMeta *m;
    const Value *lst;
    int64_t dim;
    if (list_and_dim(L, n, "cat", &m, &lst, &dim) < 0) return -1;
    const IrFn *acc = NULL;
    Expr *off = sym_int(L->s, 0);
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, "cat");
    for (int k = 0; k < lst->list.n; k++) {
        const Value *v = &lst->list.items[k];
        LVal *lv = v->kind == V_NODE ? node_val(L, v->node) : NULL;
        IrTBox *t = lv && lv->kind == LV_TBOX ? lv->t : NULL;
        if (!t) return lerr(L, n, "cat: item %d is not a tensor", k);
        if (t->ndim != m->ndim) return lerr(L, n, "cat: legacy empty inputs are not supported");
        origins_merge_arg(L, &o, &no, t);
        const IrFn *ld = mk_to_dtype(L, t->loader, m->dtype);
        if (!acc) { acc = ld; off = t->size[dim]; continue; }
        IrFn *f = mkfn(L, call_cat, m->dtype);
        f->a[0] = acc;
        f->a[1] = ld;
        f->na = 2;
        f->dim = (int)dim;
        f->nin = m->ndim;
        f->lo = off;
        f->hi = t->size[dim];
        f->cost = acc->cost + ld->cost + 4;
        acc = f;
        off = sym_add(L->s, off, t->size[dim]);
    }
    return set_pending(L, n, acc, m->dtype, o, no);
}

/* ---- views ---- */

static int lower_view_op(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    const TensorMeta *m = out_meta(n);
    if (!x) return lerr(L, n, "view op '%s' needs a tensor argument", n->target);
    if (!m) return lerr(L, n, "view op '%s' needs a shape annotation", n->target);
    const char *t = n->target;
    SymCtx *s = L->s;
    Expr *map[MI_MAX_DIMS];
    int nd = m->ndim;
    if (strncmp(t, "aten.permute.", 13) == 0) {
        int64_t perm[MI_MAX_DIMS];
        int np = arg_int_list(arg_or_kw(n, 1, "dims"), perm, MI_MAX_DIMS);
        if (np != x->ndim) return lerr(L, n, "permute: bad dims");
        for (int k = 0; k < np; k++) {
            int64_t d = perm[k] < 0 ? perm[k] + np : perm[k];
            if (d < 0 || d >= np) return lerr(L, n, "permute: bad dim %lld", (long long)perm[k]);
            map[d] = vsym(L, k);
        }
    } else if (strcmp(t, "aten.t.default") == 0 || strcmp(t, "aten.transpose.int") == 0) {
        int64_t d0 = 0, d1 = 1;
        if (strcmp(t, "aten.transpose.int") == 0 && (!arg_int(n, 1, "dim0", &d0) || !arg_int(n, 2, "dim1", &d1))) return lerr(L, n, "transpose: bad dims");
        int r = x->ndim ? x->ndim : 1;
        if (d0 < 0) d0 += r;
        if (d1 < 0) d1 += r;
        for (int k = 0; k < x->ndim; k++) map[k] = vsym(L, k);
        if (x->ndim >= 2 || (d0 < x->ndim && d1 < x->ndim)) {
            if (d0 < 0 || d1 < 0 || d0 >= x->ndim || d1 >= x->ndim) { if (x->ndim) return lerr(L, n, "transpose: bad dims"); }
            else { map[d0] = vsym(L, (int)d1); map[d1] = vsym(L, (int)d0); }
        }
    } else if (strncmp(t, "aten.select.", 12) == 0) {
        int64_t dim, idx;
        if (!arg_int(n, 1, "dim", &dim) || !arg_int(n, 2, "index", &idx)) return lerr(L, n, "select: bad args");
        if (dim < 0) dim += x->ndim;
        Expr *ie = sym_int(s, idx);
        if (idx < 0) ie = sym_add(s, x->size[dim], ie);
        for (int d = 0, k = 0; d < x->ndim; d++) map[d] = d == dim ? ie : vsym(L, k++);
    } else if (strncmp(t, "aten.slice.", 11) == 0) {
        int64_t dim = 0, start = 0, step = 1;
        arg_int(n, 1, "dim", &dim);
        if (dim < 0) dim += x->ndim;
        const Value *sv = arg_or_kw(n, 2, "start");
        Expr *st = sv && sv->kind != V_NONE ? value_expr(L, sv) : sym_int(s, 0);
        if (!st) return lerr(L, n, "slice: bad start");
        if (sym_is_int(st, &start) && start < 0) st = sym_add(s, x->size[dim], st);
        arg_int(n, 4, "step", &step);
        for (int d = 0; d < x->ndim; d++)
            map[d] = d == dim ? sym_add(s, st, sym_mul(s, sym_int(s, step), vsym(L, d))) : vsym(L, d);
    } else if (strncmp(t, "aten.narrow.", 12) == 0) {
        int64_t dim = 0, start = 0;
        if (!arg_int(n, 1, "dim", &dim) || !arg_int(n, 2, "start", &start)) return lerr(L, n, "narrow: bad args");
        if (dim < 0) dim += x->ndim;
        if (dim < 0 || dim >= x->ndim) return lerr(L, n, "narrow: bad dim");
        Expr *st = start < 0 ? sym_add(s, x->size[dim], sym_int(s, start)) : sym_int(s, start);
        for (int d = 0; d < x->ndim; d++) map[d] = d == dim ? sym_add(s, st, vsym(L, d)) : vsym(L, d);
    } else if (strncmp(t, "aten.expand.", 12) == 0 || strncmp(t, "aten.broadcast_to", 17) == 0) {
        int64_t one;
        for (int d = 0; d < x->ndim; d++) {
            int od = d + nd - x->ndim;
            map[d] = sym_is_int(x->size[d], &one) && one == 1 && !(sym_is_int(m->size[od], &one) && one == 1)
                         ? sym_int(s, 0) : vsym(L, od);
        }
    } else if (strncmp(t, "aten.unsqueeze.", 15) == 0) {
        int64_t dim;
        if (!arg_int(n, 1, "dim", &dim)) return lerr(L, n, "unsqueeze: bad dim");
        if (dim < 0) dim += nd;
        for (int d = 0, k = 0; k < nd; k++)
            if (k != dim) map[d++] = vsym(L, k);
    } else if (strncmp(t, "aten.squeeze.", 13) == 0 || strncmp(t, "aten.view.", 10) == 0 ||
               strncmp(t, "aten.reshape.", 13) == 0 || strncmp(t, "aten._unsafe_view.", 18) == 0 ||
               strncmp(t, "aten.alias.", 11) == 0 || strncmp(t, "aten.detach.", 12) == 0 ||
               strncmp(t, "aten.lift_fresh.", 16) == 0) {
        /* same non-1 sizes in the same order: map dims one to one */
        int64_t one;
        int xi = 0, k = 0;
        bool simple = true;
        for (int d = 0; d < x->ndim; d++) {
            if (sym_is_int(x->size[d], &one) && one == 1) { map[d] = sym_int(s, 0); continue; }
            while (k < nd && sym_is_int(m->size[k], &one) && one == 1) k++;
            if (k >= nd || m->size[k] != x->size[d]) { simple = false; break; }
            map[d] = vsym(L, k++);
            xi++;
        }
        while (simple && k < nd) {
            if (!(sym_is_int(m->size[k], &one) && one == 1)) simple = false;
            k++;
        }
        if (!simple) {
            /* contiguous buffer: reinterpret; else generic flat re-indexing */
            Buffer *b;
            Layout v;
            if (ir_probe_strided(L->m, x->loader, x->ndim, x->size, &b, &v)) {
                Layout c = layout_contiguous(L->m, x->dtype, v.device, x->ndim, x->size);
                bool contig = true;
                for (int d = 0; d < x->ndim; d++)
                    if (!(sym_is_int(x->size[d], &one) && one == 1) && c.stride[d] != v.stride[d]) contig = false;
                if (contig) {
                    Layout nl = layout_contiguous(L->m, x->dtype, v.device, nd, m->size);
                    nl.offset = v.offset;
                    IrFn *f = mkfn(L, call_buf_load, x->dtype);   /* a ReinterpretView */
                    Layout *vl = lalloc(L, sizeof *vl);
                    *vl = nl;
                    f->buf = b;
                    f->view = vl;
                    return set_view(L, n, x, f, nd, m->size);
                }
            }
            Expr *flat = sym_int(s, 0), *st = sym_int(s, 1);
            for (int k2 = nd - 1; k2 >= 0; k2--) {
                flat = sym_add(s, flat, sym_mul(s, st, vsym(L, k2)));
                st = sym_mul(s, st, m->size[k2]);
            }
            st = sym_int(s, 1);
            for (int d = x->ndim - 1; d >= 0; d--) {
                map[d] = d == 0 ? sym_floordiv(s, flat, st) : sym_modidx(s, flat, st, x->size[d]);
                st = sym_mul(s, st, x->size[d]);
            }
        }
    } else {
        return lerr(L, n, "unsupported view op '%s'", t);
    }
    return set_view(L, n, x, mk_reindex(L, x->loader, nd, map, x->ndim), nd, m->size);
}

/* ---- scatters and mutation ---- */

static int lower_scatter(Lower *L, const Node *n, bool is_slice) {
    IrTBox *base = arg_tbox(L, n, 0), *src = arg_tbox(L, n, 1);
    const TensorMeta *m = out_meta(n);
    if (!base || !src || !m) return lerr(L, n, "'%s' needs two tensors and a shape", n->target);
    SymCtx *s = L->s;
    int64_t dim = 0;
    arg_int(n, 2, "dim", &dim);
    if (dim < 0) dim += m->ndim;
    IrFn *f = mkfn(L, call_scatter, m->dtype);
    f->a[0] = mk_to_dtype(L, base->loader, m->dtype);
    f->a[1] = mk_to_dtype(L, src->loader, m->dtype);
    f->na = 2;
    f->cost = base->loader->cost + src->loader->cost + 6;
    f->dim = (int)dim;
    f->nin = m->ndim;
    if (is_slice) {
        int64_t step = 1, v;
        const Value *sv = arg_or_kw(n, 3, "start"), *ev = arg_or_kw(n, 4, "end");
        Expr *st = sv && sv->kind != V_NONE ? value_expr(L, sv) : sym_int(s, 0);
        Expr *en = ev && ev->kind != V_NONE ? value_expr(L, ev) : m->size[dim];
        if (!st || !en) return lerr(L, n, "slice_scatter: bad start/end");
        if (sym_is_int(st, &v) && v < 0) st = sym_add(s, m->size[dim], st);
        if (sym_is_int(en, &v) && v < 0) en = sym_add(s, m->size[dim], en);
        int64_t es, sz;
        if (sym_is_int(en, &es) && sym_is_int(m->size[dim], &sz) && es > sz) en = m->size[dim];
        arg_int(n, 5, "step", &step);
        f->op = 0;
        f->step = sym_int(s, step);
        f->hi = en;
        f->e = src->size[dim];
        f->lo = st;
    } else {
        int64_t idx;
        if (!arg_int(n, 3, "index", &idx)) return lerr(L, n, "select_scatter: bad index");
        f->op = 1;
        f->lo = idx < 0 ? sym_add(s, m->size[dim], sym_int(s, idx)) : sym_int(s, idx);
    }
    return set_pointwise(L, n, f, m->dtype, 2);
}

static int lower_copy_(Lower *L, const Node *n) {
    const Value *dv = &n->args[0];
    if (n->nargs < 2 || dv->kind != V_NODE || dv->node->kind != N_PLACEHOLDER)
        return lerr(L, n, "copy_ is only supported into graph inputs");
    if (!functionalize_copy_is_epilogue(L->g, n))   /* the input would be read after it: functionalize first */
        return lerr(L, n, "copy_ into '%s' is read after it (run functionalize first)", dv->node->name);
    IrTBox *dst = arg_tbox(L, n, 0), *src = arg_tbox(L, n, 1);
    if (!dst || !src || !dst->sb || !dst->sb->buf) return lerr(L, n, "copy_: bad arguments");
    Buffer *in = dst->sb->buf;
    /* realize the new value first: its computation may read the input at other positions */
    Layout v;
    Buffer *sbuf = tbox_as_strided(L, src, &v);
    const IrFn *f = src->loader;
    if (ir_store_target(sbuf) == in) {   /* src reads the input being overwritten: copy it out first */
        IrStorage *cp = storage_new(L, src->loader, src->dtype, src->ndim, src->size, src->origins, src->norigins);
        realize_storage(L, cp, NULL);
        f = tbox_of_storage(L, cp)->loader;
    }
    Layout lay = in->layout;
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, "copy");
    Buffer *b = new_buffer(L, BUF_COMPUTED, &lay);
    b->mutates = in;
    in->mutated = true;
    b->origins = o;
    b->norigins = no;
    f = broadcast_loader(L, f, src->ndim, src->size, lay.ndim, lay.size);   /* copy_ broadcasts src */
    if (!f) return lerr(L, n, "copy_: source of rank %d does not broadcast to rank %d", src->ndim, lay.ndim);
    f = mk_to_dtype(L, f, lay.dtype);
    int order[MI_MAX_DIMS];
    loop_order_by_stride(&lay, order);
    b->body = ir_trace_body(L->m, b, f, lay.ndim, lay.size, order, 0, NULL, RED_SUM, 0);
    LVal *lv = node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = dst;
    return 0;
}

/* ---- reductions ---- */

static int norm_dims(const Node *n, int argi, const char *kw, int ndim, bool *red) {
    for (int d = 0; d < ndim; d++) red[d] = false;
    const Value *v = arg_or_kw(n, argi, kw);
    int64_t dims[MI_MAX_DIMS];
    int nd = (!v || v->kind == V_NONE) ? -1 : arg_int_list(v, dims, MI_MAX_DIMS);
    if (nd == -1 && v && v->kind != V_NONE) return -1;
    if (nd <= 0) { for (int d = 0; d < ndim; d++) red[d] = true; return ndim; }
    for (int i = 0; i < nd; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + ndim : dims[i];
        if (ndim == 0 && (d == 0 || d == -1)) continue;
        if (d < 0 || d >= ndim) return -1;
        red[d] = true;
    }
    int c = 0;
    for (int d = 0; d < ndim; d++) c += red[d];
    return c;
}

/* Reduce x over dims red[] into a realized buffer; out size keepdim or not. */
static IrStorage *make_reduction(Lower *L, const Node *n, IrTBox *x, const bool *red, bool keepdim,
                                 IrReduceType rt, DType out_dt, int welford_item, const char *oname) {
    SymCtx *s = L->s;
    Expr *osize[MI_MAX_DIMS], *rsize[MI_MAX_DIMS], *map[MI_MAX_DIMS];
    int no = 0, nr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d]) {
            if (keepdim) osize[no++] = sym_int(s, 1);
        } else osize[no++] = x->size[d];
    }
    for (int d = 0; d < x->ndim; d++)
        if (red[d]) rsize[nr++] = x->size[d];
    int ko = 0, kr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d]) { map[d] = vsym(L, no + kr++); if (keepdim) ko++; }
        else map[d] = vsym(L, ko++);
    }
    const IrFn *f = mk_reindex(L, x->loader, no + nr, map, x->ndim);
    if (rt != RED_ARGMAX && rt != RED_ARGMIN && rt != RED_WELFORD) f = mk_to_dtype(L, f, out_dt);
    Layout l = layout_contiguous(L->m, out_dt, n->has_meta ? n->meta.device : L->dev, no, osize);
    if (keepdim) {   /* as Inductor's decide_layout: kept size-1 dims go outermost ([64, 1]: strides [1, 64]) */
        Expr *outer = sym_int(s, 1);
        for (int d = 0; d < no; d++) {
            int64_t one;
            if (!(sym_is_int(osize[d], &one) && one == 1)) outer = sym_mul(s, outer, osize[d]);
        }
        for (int d = 0; d < no; d++) {
            int64_t one;
            if (sym_is_int(osize[d], &one) && one == 1) l.stride[d] = outer;
        }
    }
    Buffer *b = new_buffer(L, BUF_COMPUTED, &l);
    const char **o = NULL;
    int nor = 0;
    origins_add(L, &o, &nor, oname ? oname : short_name(L, n->target));
    origins_merge_arg(L, &o, &nor, x);
    b->origins = o;
    b->norigins = nor;
    b->is_reduction = true;
    b->rtype = rt;
    b->body = ir_trace_body(L->m, b, f, no, osize, NULL, nr, rsize, rt, welford_item);
    IrStorage *sb = storage_new(L, NULL, out_dt, no, osize, o, nor);
    sb->buf = b;
    return sb;
}

static int set_tbox(Lower *L, const Node *n, IrTBox *t) {
    LVal *lv = node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = t;
    return 0;
}

static Expr *red_numel(Lower *L, IrTBox *x, const bool *red) {
    Expr *e = sym_int(L->s, 1);
    for (int d = 0; d < x->ndim; d++)
        if (red[d]) e = sym_mul(L->s, e, x->size[d]);
    return e;
}

/* pointwise over a realized storage: load(buf) op constant-or-index-expr */
static IrTBox *pw_scale(Lower *L, IrStorage *sb, IrMathOp op, Expr *by, DType dt, const char *oname) {
    IrTBox *t = tbox_of_storage(L, sb);
    int64_t v;
    const IrFn *c = sym_is_int(by, &v) ? mk_const(L, (double)v, dt)
                                       : mk_to_dtype(L, mk_index_expr(L, by, 0, DT_I64), dt);
    const IrFn *f = mk_math(L, op, dt, mk_to_dtype(L, t->loader, dt), c, NULL);
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, oname);
    IrStorage *ns = storage_new(L, f, dt, sb->ndim, sb->size, o, no);
    return tbox_of_storage(L, ns);
}

static int lower_reduction(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "'%s' needs a tensor argument", n->target);
    const char *t = n->target;
    bool red[MI_MAX_DIMS];
    bool keepdim = false;
    int64_t kd = 0;
    IrReduceType rt = RED_SUM;
    bool mean = false;
    bool all = strcmp(t, "aten.sum.default") == 0 || strcmp(t, "aten.mean.default") == 0 ||
               strcmp(t, "aten.max.default") == 0 || strcmp(t, "aten.min.default") == 0 ||
               strcmp(t, "aten.prod.default") == 0;
    if (all) { for (int d = 0; d < x->ndim; d++) red[d] = true; }
    else {
        if (strncmp(t, "aten.argmax", 11) == 0 || strncmp(t, "aten.argmin", 11) == 0) {
            const Value *dv = arg_or_kw(n, 1, "dim");
            if (!dv || dv->kind == V_NONE) return lerr(L, n, "argmax/argmin without dim is not supported");
        }
        if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lerr(L, n, "'%s': bad dims", t);
        if (arg_int(n, 2, "keepdim", &kd)) keepdim = kd != 0;
    }
    if (strncmp(t, "aten.amax", 9) == 0 || strncmp(t, "aten.max.", 9) == 0) rt = RED_MAX;
    else if (strncmp(t, "aten.amin", 9) == 0 || strncmp(t, "aten.min.", 9) == 0) rt = RED_MIN;
    else if (strncmp(t, "aten.prod", 9) == 0) rt = RED_PROD;
    else if (strncmp(t, "aten.argmax", 11) == 0) rt = RED_ARGMAX;
    else if (strncmp(t, "aten.argmin", 11) == 0) rt = RED_ARGMIN;
    else if (strncmp(t, "aten.mean", 9) == 0) mean = true;
    DType odt = n->has_meta ? n->meta.dtype : x->dtype;
    IrStorage *sb = make_reduction(L, n, x, red, keepdim, rt, mean ? odt : odt, 0, NULL);
    if (mean) return set_tbox(L, n, pw_scale(L, sb, IOP_TRUEDIV, red_numel(L, x, red), odt, "mean"));
    return set_tbox(L, n, tbox_of_storage(L, sb));
}

static int set_tuple(Lower *L, const Node *n, IrTBox **items, int k) {
    LVal *lv = node_val(L, n);
    lv->kind = LV_TUPLE;
    lv->items = lalloc(L, sizeof(IrTBox *) * k);
    if (k) memcpy(lv->items, items, sizeof(IrTBox *) * k);
    lv->n = k;
    return 0;
}

/* A pending pointwise TensorBox (not realized) computing f over `size`. */
static IrTBox *pw_box(Lower *L, const IrFn *f, DType dt, int ndim, Expr **size, const char *oname) {
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, oname);
    return tbox_of_storage(L, storage_new(L, f, dt, ndim, size, o, no));
}

/* max.dim / min.dim: (values, indices) as two reductions over the same row (they fuse). */
static int lower_max_dim(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    int64_t dim, kd = 0;
    if (!x || !arg_int(n, 1, "dim", &dim)) return lerr(L, n, "'%s' needs a tensor and a dim", n->target);
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lerr(L, n, "'%s': bad dim", n->target);
    bool keepdim = arg_int(n, 2, "keepdim", &kd) && kd;
    bool mx = strncmp(n->target, "aten.max", 8) == 0;
    const char *nm = mx ? "max" : "min";
    IrStorage *v = make_reduction(L, n, x, red, keepdim, mx ? RED_MAX : RED_MIN, x->dtype, 0, nm);
    IrStorage *i = make_reduction(L, n, x, red, keepdim, mx ? RED_ARGMAX : RED_ARGMIN, DT_I64, 0, nm);
    IrTBox *items[2] = {tbox_of_storage(L, v), tbox_of_storage(L, i)};
    return set_tuple(L, n, items, 2);
}

/* any / all: an int64 count of nonzero (any) or zero (all) elements, compared with 0 (so an
 * empty reduction gives False / True, as torch). */
static int lower_any_all(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "'%s' needs a tensor argument", n->target);
    bool any = strncmp(n->target, "aten.any", 8) == 0, red[MI_MAX_DIMS];
    bool whole = strcmp(n->target, "aten.any.default") == 0 || strcmp(n->target, "aten.all.default") == 0;
    int64_t kd = 0;
    if (whole) for (int d = 0; d < x->ndim; d++) red[d] = true;
    else if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lerr(L, n, "'%s': bad dims", n->target);
    bool keepdim = !whole && arg_int(n, 2, "keepdim", &kd) && kd;
    const char *nm = any ? "any" : "all";
    const IrFn *hit = mk_math(L, any ? IOP_NE : IOP_EQ, DT_BOOL, x->loader, mk_const(L, 0, x->dtype), NULL);
    IrTBox *cnt = pw_box(L, mk_to_dtype(L, hit, DT_I64), DT_I64, x->ndim, x->size, nm);
    IrStorage *sb = make_reduction(L, n, cnt, red, keepdim, RED_SUM, DT_I64, 0, nm);
    IrTBox *c = tbox_of_storage(L, sb);
    const IrFn *out = mk_math(L, any ? IOP_GT : IOP_EQ, DT_BOOL, c->loader, mk_const(L, 0, DT_I64), NULL);
    return set_tbox(L, n, pw_box(L, out, DT_BOOL, c->ndim, c->size, nm));
}

/* var.correction / std.correction: welford m2 / (N - correction), sqrt for std. */
static int lower_var_std(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "'%s' needs a tensor", n->target);
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lerr(L, n, "'%s': bad dims", n->target);
    int64_t kd = 0;
    bool keepdim = arg_int(n, -1, "keepdim", &kd) && kd;
    double corr = 1;
    const Kwarg *c = node_kwarg(n, "correction");
    if (c && c->v.kind != V_NONE) value_as_double(&c->v, &corr);
    bool sd = strncmp(n->target, "aten.std", 8) == 0;
    const char *nm = sd ? "std" : "var";
    DType dt = x->dtype;
    IrStorage *m2 = make_reduction(L, n, x, red, keepdim, RED_WELFORD, dt, 1, nm);
    Expr *N = sym_sub(L->s, red_numel(L, x, red), sym_int(L->s, (int64_t)corr));
    IrTBox *v = pw_scale(L, m2, IOP_TRUEDIV, N, dt, nm);
    if (sd) v = pw_box(L, mk_math(L, IOP_SQRT, dt, v->loader, NULL, NULL), dt, v->ndim, v->size, nm);
    return set_tbox(L, n, v);
}

/* logsumexp as torch computes it: m = amax(x) with infinities replaced by 0,
 * log(sum(exp(x - m))) + m. */
static int lower_logsumexp(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "logsumexp needs a tensor");
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lerr(L, n, "logsumexp: bad dims");
    int64_t kd = 0;
    bool keepdim = arg_int(n, 2, "keepdim", &kd) && kd;
    const TensorMeta *om = out_meta(n);
    DType dt = om ? om->dtype : x->dtype;
    if (dt != x->dtype) x = pw_box(L, mk_to_dtype(L, x->loader, dt), dt, x->ndim, x->size, "logsumexp");
    IrTBox *mt = tbox_of_storage(L, make_reduction(L, n, x, red, true, RED_MAX, dt, 0, "logsumexp"));
    const IrFn *isinf = mk_math(L, IOP_EQ, DT_BOOL, mk_math(L, IOP_ABS, dt, mt->loader, NULL, NULL), mk_const(L, INFINITY, dt), NULL);
    const IrFn *m = mk_math(L, IOP_WHERE, dt, isinf, mk_const(L, 0, dt), mt->loader);
    Expr *map[MI_MAX_DIMS], *omap[MI_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < x->ndim; d++) {
        map[d] = red[d] ? sym_int(L->s, 0) : vsym(L, d);
        omap[d] = red[d] ? sym_int(L->s, 0) : vsym(L, keepdim ? d : k);
        k += !red[d];
    }
    const IrFn *e = mk_math(L, IOP_EXP, dt, mk_math(L, IOP_SUB, dt, x->loader, mk_reindex(L, m, x->ndim, map, x->ndim), NULL), NULL, NULL);
    IrTBox *st = tbox_of_storage(L, make_reduction(L, n, pw_box(L, e, dt, x->ndim, x->size, "logsumexp"), red, keepdim, RED_SUM, dt, 0, "logsumexp"));
    const IrFn *out = mk_math(L, IOP_ADD, dt, mk_math(L, IOP_LOG, dt, st->loader, NULL, NULL), mk_reindex(L, m, st->ndim, omap, x->ndim), NULL);
    return set_tbox(L, n, pw_box(L, out, dt, st->ndim, st->size, "logsumexp"));
}

/* split / split_with_sizes / chunk / unbind: a tuple of views of x along dim (sizes must be
 * known: a symbolic split dim is refused). */
static int lower_split(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "'%s' needs a tensor argument", n->target);
    const char *t = n->target;
    bool unbind = strncmp(t, "aten.unbind", 11) == 0, chunk = strncmp(t, "aten.chunk", 10) == 0;
    bool with_sizes = strncmp(t, "aten.split_with_sizes", 21) == 0;
    int64_t dim = 0, total, sizes[256], k = 0;
    arg_int(n, unbind ? 1 : 2, "dim", &dim);
    if (dim < 0) dim += x->ndim;
    if (dim < 0 || dim >= x->ndim) return lerr(L, n, "'%s': bad dim", t);
    if (!sym_is_int(x->size[dim], &total)) return lerr(L, n, "'%s' along a symbolic size is not supported", t);
    if (unbind) {
        if (total > 256) return lerr(L, n, "unbind into %lld pieces (max 256)", (long long)total);
        for (k = 0; k < total; k++) sizes[k] = 1;
    } else if (with_sizes) {
        k = arg_int_list(arg_or_kw(n, 1, "split_sizes"), sizes, 256);
        int64_t sum = 0;
        for (int i = 0; i < k; i++) sum += sizes[i] < 0 ? -1000000 : sizes[i];
        if (k < 0 || sum != total) return lerr(L, n, "split_with_sizes: sizes do not add up to %lld", (long long)total);
    } else {
        int64_t c = 0;
        if (!arg_int(n, 1, chunk ? "chunks" : "split_size", &c) || (c <= 0 && (chunk || total > 0)))
            return lerr(L, n, "'%s': bad %s", t, chunk ? "chunks" : "split_size");
        int64_t ss = chunk ? (total + c - 1) / c : c;
        if (ss == 0 || total == 0) sizes[k++] = 0;
        for (int64_t off = 0; ss > 0 && off < total; off += ss) {
            if (k == 256) return lerr(L, n, "'%s' into more than 256 pieces", t);
            sizes[k++] = total - off < ss ? total - off : ss;
        }
    }
    if (k > 1 && x->sb && !x->is_view && !x->sb->buf) realize_storage(L, x->sb, NULL);   /* several pieces read it */
    IrTBox **items = lalloc(L, sizeof(IrTBox *) * (k ? k : 1));
    int64_t off = 0;
    for (int i = 0; i < k; i++) {
        Expr *psize[MI_MAX_DIMS], *map[MI_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < x->ndim; d++) {
            if (d == dim) {
                map[d] = unbind ? sym_int(L->s, off) : sym_add(L->s, sym_int(L->s, off), vsym(L, nd));
                if (!unbind) psize[nd++] = sym_int(L->s, sizes[i]);
            } else {
                map[d] = vsym(L, nd);
                psize[nd++] = x->size[d];
            }
        }
        IrTBox *v = tbox_new(L, x->dtype, nd, psize, mk_reindex(L, x->loader, nd, map, x->ndim));
        v->is_view = true;
        const char **o = NULL;
        int no = 0;
        origins_add(L, &o, &no, short_name(L, t));
        origins_merge_arg(L, &o, &no, x);
        v->origins = o;
        v->norigins = no;
        items[i] = v;
        off += sizes[i];
    }
    return set_tuple(L, n, items, (int)k);
}

static int lower_var_mean(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "var_mean needs a tensor");
    bool red[MI_MAX_DIMS];
    if (norm_dims(n, 1, "dim", x->ndim, red) < 0) return lerr(L, n, "var_mean: bad dims");
    int64_t kd = 0;
    bool keepdim = arg_int(n, -1, "keepdim", &kd) && kd;
    double corr = 1;
    const Kwarg *c = node_kwarg(n, "correction");
    if (c && c->v.kind != V_NONE) value_as_double(&c->v, &corr);
    const Kwarg *ub = node_kwarg(n, "unbiased");
    int64_t u;
    if (ub && value_as_int(&ub->v, &u)) corr = u ? 1 : 0;
    DType dt = x->dtype;
    IrStorage *mean = make_reduction(L, n, x, red, keepdim, RED_WELFORD, dt, 0, "var_mean");
    IrStorage *m2 = make_reduction(L, n, x, red, keepdim, RED_WELFORD, dt, 1, "var_mean");
    Expr *N = sym_sub(L->s, red_numel(L, x, red), sym_int(L->s, (int64_t)corr));
    IrTBox *items[2] = {pw_scale(L, m2, IOP_TRUEDIV, N, dt, "var_mean"), tbox_of_storage(L, mean)};
    return set_tuple(L, n, items, 2);
}

/* mode 0: softmax, 1: prepare_softmax_online (max, sum), 2: log_softmax. softmax.int and
 * log_softmax.int with a dtype compute in that dtype. */
static int lower_softmax(Lower *L, const Node *n, int mode) {
    bool online = mode == 1;
    IrTBox *x = arg_tbox(L, n, 0);
    int64_t dim;
    if (!x || !arg_int(n, 1, "dim", &dim)) return lerr(L, n, "'%s' needs a tensor and a dim", n->target);
    if (x->ndim == 0) return lerr(L, n, "'%s' of a 0-dim tensor is not supported", n->target);
    if (dim < 0) dim += x->ndim;
    if (dim < 0 || dim >= x->ndim) return lerr(L, n, "'%s': bad dim", n->target);
    bool red[MI_MAX_DIMS] = {0};
    red[dim] = true;
    const TensorMeta *om = out_meta(n);
    DType dt = online || !om ? x->dtype : om->dtype;
    const char *nm = online ? "prepare_softmax_online" : mode == 2 ? "_log_softmax" : "_softmax";
    if (dt != x->dtype) {   /* softmax(x, dim, dtype): cast first */
        const char **co = NULL;
        int nco = 0;
        origins_add(L, &co, &nco, nm);
        x = tbox_of_storage(L, storage_new(L, mk_to_dtype(L, x->loader, dt), dt, x->ndim, x->size, co, nco));
    }
    IrStorage *mx = make_reduction(L, n, x, red, true, RED_MAX, dt, 0, nm);
    IrTBox *mxt = tbox_of_storage(L, mx);
    /* e = exp(x - max) */
    Expr *map[MI_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) map[d] = d == dim ? sym_int(L->s, 0) : vsym(L, d);
    const IrFn *mb = mk_reindex(L, mxt->loader, x->ndim, map, x->ndim);
    const IrFn *xs = mk_math(L, IOP_SUB, dt, x->loader, mb, NULL);
    const IrFn *e = mk_math(L, IOP_EXP, dt, xs, NULL, NULL);
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, nm);
    IrTBox *et = tbox_of_storage(L, storage_new(L, e, dt, x->ndim, x->size, o, no));
    IrStorage *sm = make_reduction(L, n, et, red, true, RED_SUM, dt, 0, nm);
    IrTBox *smt = tbox_of_storage(L, sm);
    if (online) {
        IrTBox *items[2] = {mxt, smt};
        return set_tuple(L, n, items, 2);
    }
    const IrFn *sbf = mk_reindex(L, smt->loader, x->ndim, map, x->ndim);
    const IrFn *out = mode == 2 ? mk_math(L, IOP_SUB, dt, xs, mk_math(L, IOP_LOG, dt, sbf, NULL, NULL), NULL)
                                : mk_math(L, IOP_TRUEDIV, dt, e, sbf, NULL);
    return set_tbox(L, n, tbox_of_storage(L, storage_new(L, out, dt, x->ndim, x->size, o, no)));
}

/* ---- extern kernels ---- */

static int extern_arg(Lower *L, IrTBox *t, ExternArg *a) {
    a->buf = tbox_as_strided(L, t, &a->view);
    return 0;
}

/* mm / addmm / bmm in a dtype the extern kernels do not take (f64): a sum reduction over K of
 * a[.., i, k] * b[.., k, j] (+ bias), as Inductor lowers small matmuls. */
static int lower_matmul_loops(Lower *L, const Node *n, ExternKind k) {
    const TensorMeta *m = out_meta(n);
    int ia = k == EXT_ADDMM ? 1 : 0;
    IrTBox *a = arg_tbox(L, n, ia), *b = arg_tbox(L, n, ia + 1);
    int nb = k == EXT_BMM ? 1 : 0;   /* batch dims */
    if (!a || !b || a->ndim != 2 + nb || b->ndim != 2 + nb || m->ndim != 2 + nb) return lerr(L, n, "'%s': bad operands", n->target);
    DType dt = m->dtype;
    double beta = 1, alpha = 1;
    const Kwarg *kb = node_kwarg(n, "beta"), *ka = node_kwarg(n, "alpha");
    if ((kb && value_as_double(&kb->v, &beta) && beta != 1) || (ka && value_as_double(&ka->v, &alpha) && alpha != 1))
        return lerr(L, n, "addmm with alpha/beta != 1 is not supported");
    Expr *size[MI_MAX_DIMS], *am[3], *bm[3];
    int nd = 3 + nb;   /* [batch,] i, j, k */
    for (int d = 0; d < 2 + nb; d++) size[d] = m->size[d];
    size[2 + nb] = a->size[1 + nb];
    if (nb) { am[0] = bm[0] = vsym(L, 0); }
    am[nb] = vsym(L, nb); am[nb + 1] = vsym(L, nb + 2);
    bm[nb] = vsym(L, nb + 2); bm[nb + 1] = vsym(L, nb + 1);
    const IrFn *fa = mk_to_dtype(L, mk_reindex(L, a->loader, nd, am, a->ndim), dt);
    const IrFn *fb = mk_to_dtype(L, mk_reindex(L, b->loader, nd, bm, b->ndim), dt);
    IrTBox *prod = tbox_new(L, dt, nd, size, mk_math(L, IOP_MUL, dt, fa, fb, NULL));
    prod->origins = NULL;
    prod->norigins = 0;
    bool red[MI_MAX_DIMS] = {0};
    red[nd - 1] = true;
    IrStorage *sb = make_reduction(L, n, prod, red, false, RED_SUM, dt, 0, short_name(L, n->target));
    if (k != EXT_ADDMM) return set_tbox(L, n, tbox_of_storage(L, sb));
    const IrFn *bias = arg_loader(L, n, 0, m->ndim, m->size, dt);
    if (!bias) return lerr(L, n, "addmm: bad bias");
    return set_pointwise(L, n, mk_math(L, IOP_ADD, dt, bias, tbox_of_storage(L, sb)->loader, NULL), dt, 3);
}

static int lower_matmul(Lower *L, const Node *n, ExternKind k) {
    const TensorMeta *m = out_meta(n);
    if (!m) return lerr(L, n, "'%s' needs a shape annotation", n->target);
    if (m->dtype != DT_F32) return lower_matmul_loops(L, n, k);
    int nt = k == EXT_ADDMM ? 3 : 2;
    Buffer *b;
    Layout l = layout_contiguous(L->m, m->dtype, m->device, m->ndim, m->size);
    ExternArg *ea = lalloc(L, sizeof(ExternArg) * nt);
    for (int i = 0; i < nt; i++) {
        IrTBox *t = arg_tbox(L, n, i);
        if (!t) return lerr(L, n, "argument %d of '%s' must be a tensor", i, n->target);
        if (t->dtype != DT_F32 && t->dtype != DT_F64) return lerr(L, n, "'%s': dtype %s not supported", n->target, dtype_abbrev(t->dtype));
        extern_arg(L, t, &ea[i]);
    }
    double beta = 1, alpha = 1;
    const Kwarg *kb = node_kwarg(n, "beta"), *ka = node_kwarg(n, "alpha");
    if ((kb && value_as_double(&kb->v, &beta) && beta != 1) || (ka && value_as_double(&ka->v, &alpha) && alpha != 1))
        return lerr(L, n, "addmm with alpha/beta != 1 is not supported");
    b = new_buffer(L, BUF_EXTERN, &l);
    b->layout.fixed = true;
    b->ext = k;
    b->eargs = ea;
    b->neargs = nt;
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, short_name(L, n->target));
    b->origins = o;
    b->norigins = no;
    return set_tbox(L, n, tbox_of_buffer(L, b));
}

static int lower_sdpa(Lower *L, const Node *n) {
    IrTBox *q = arg_tbox(L, n, 0), *k = arg_tbox(L, n, 1), *v = arg_tbox(L, n, 2);
    if (!q || !k || !v || q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        return lerr(L, n, "attention needs 4-d query, key and value");
    double dp = 0;
    const Value *dv = arg_or_kw(n, 3, "dropout_p");
    if (dv) value_as_double(dv, &dp);
    int64_t causal = 0;
    arg_int(n, 4, "is_causal", &causal);
    const Kwarg *mask = node_kwarg(n, "attn_mask");
    if (dp != 0 || causal || (mask && mask->v.kind != V_NONE) || (n->nargs > 5 && n->args[5].kind != V_NONE))
        return lerr(L, n, "attention with dropout, causal mask or attn_mask is not supported");
    if (q->dtype != DT_F32) return lerr(L, n, "attention: only f32 is supported");
    double scale = 0;
    const Kwarg *sk = node_kwarg(n, "scale");
    int64_t E;
    if (sk && sk->v.kind != V_NONE) value_as_double(&sk->v, &scale);
    else if (sym_is_int(q->size[3], &E)) scale = 1.0 / sqrt((double)E);
    else return lerr(L, n, "attention: symbolic head size needs an explicit scale");
    ExternArg *ea = lalloc(L, sizeof(ExternArg) * 3);
    extern_arg(L, q, &ea[0]);
    extern_arg(L, k, &ea[1]);
    extern_arg(L, v, &ea[2]);
    Expr *osz[4] = {q->size[0], q->size[1], q->size[2], v->size[3]};
    Layout l = layout_contiguous(L->m, DT_F32, q->sb && q->sb->buf ? q->sb->buf->layout.device : L->dev, 4, osz);
    l.fixed = true;
    Buffer *b = new_buffer(L, BUF_EXTERN, &l);
    b->ext = EXT_SDPA;
    b->eargs = ea;
    b->neargs = 3;
    b->scale = scale;
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, short_name(L, n->target));
    b->origins = o;
    b->norigins = no;
    Layout ll = layout_contiguous(L->m, DT_F32, l.device, 3, osz);
    ll.fixed = true;
    Buffer *lse = new_buffer(L, BUF_EXTERN, &ll);
    lse->ext = EXT_SDPA;
    lse->extern_owner = b;
    b->extra_out = lse;
    IrTBox *items[2] = {tbox_of_buffer(L, b), tbox_of_buffer(L, lse)};
    return set_tuple(L, n, items, 2);
}

static int lower_getitem(Lower *L, const Node *n) {
    int64_t k;
    if (n->nargs < 2 || n->args[0].kind != V_NODE || !value_as_int(&n->args[1], &k))
        return lerr(L, n, "getitem needs a node and an index");
    LVal *src = node_val(L, n->args[0].node);
    if (!src || src->kind != LV_TUPLE || k < 0 || k >= src->n || !src->items[k])
        return lerr(L, n, "getitem of something that is not a tuple of tensors");
    return set_tbox(L, n, src->items[k]);
}

static int lower_clone(Lower *L, const Node *n) {
    IrTBox *x = arg_tbox(L, n, 0);
    if (!x) return lerr(L, n, "'%s' needs a tensor", n->target);
    return set_pointwise(L, n, x->loader, x->dtype, 1);
}

/* ---- FallbackKernel: an op with a reference implementation but no lowering ---- */

typedef struct FbArgs { Lower *L; const Node *n; ExternArg *ea; int nea, cap; int rc; } FbArgs;

/* node references in the order ir_fallback_eval resolves them (args then kwargs, depth first) */
static void fb_collect(FbArgs *a, const Value *v) {
    if (a->rc) return;
    if (v->kind == V_LIST || v->kind == V_TUPLE) {
        for (int i = 0; i < v->list.n; i++) fb_collect(a, &v->list.items[i]);
        return;
    }
    if (v->kind != V_NODE) return;
    if (v->node->is_sym && v->node->sym_val) return;   /* a SymInt: evaluated at run time */
    LVal *lv = node_val(a->L, v->node);
    if (!lv || lv->kind != LV_TBOX || !lv->t) {
        a->rc = lerr(a->L, a->n, "fallback '%s': argument '%s' is not a tensor", a->n->target, v->node->name);
        return;
    }
    if (a->nea == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 4;
        ExternArg *nw = lalloc(a->L, sizeof(ExternArg) * a->cap);
        if (a->nea) memcpy(nw, a->ea, sizeof(ExternArg) * a->nea);
        a->ea = nw;
    }
    extern_arg(a->L, lv->t, &a->ea[a->nea++]);
}

static int lower_fallback(Lower *L, const Node *n) {
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    TensorMeta metas[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    if (op_infer_meta(L->ctx, (Graph *)L->g, n, metas, &nm) < 0) return -1;
    if (nm > OP_MAX_OUTS) return lerr(L, n, "fallback '%s': %d results is too many", n->target, nm);
    bool tuple = (op->flags & OPF_TUPLE) != 0;
    if (!tuple && nm != 1) return lerr(L, n, "fallback '%s': %d results for an op that returns one", n->target, nm);
    FbArgs a = {L, n, NULL, 0, 0, 0};
    for (int i = 0; i < n->nargs; i++) fb_collect(&a, &n->args[i]);
    for (int i = 0; i < n->nkwargs; i++) fb_collect(&a, &n->kwargs[i].v);
    if (a.rc) return a.rc;
    IrFallback *fb = lalloc(L, sizeof *fb);
    fb->node = n;
    fb->kernel = n->target;
    fb->tuple = tuple;
    fb->nouts = nm;
    fb->outs = lalloc(L, sizeof(Buffer *) * (nm + 1));
    IrTBox **items = lalloc(L, sizeof(IrTBox *) * (nm + 1));
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, short_name(L, n->target));
    Buffer *owner = NULL;
    for (int k = 0; k < nm; k++) {
        const TensorMeta *m = &metas[k];
        if (m->dtype == DT_INVALID) continue;   /* a non-tensor item */
        Layout l = layout_contiguous(L->m, m->dtype, m->device, m->ndim, m->size);
        if (m->stride && !(op->flags & OPF_VIEW))   /* a view's strides may overlap: contiguous */
            for (int d = 0; d < l.ndim; d++) if (m->stride[d]) l.stride[d] = m->stride[d];
        l.offset = sym_int(L->s, 0);
        l.fixed = true;
        Buffer *b = new_buffer(L, BUF_EXTERN, &l);
        b->ext = EXT_FALLBACK;
        b->origins = o;
        b->norigins = no;
        if (!owner) {
            owner = b;
            b->fb = fb;
            b->eargs = a.ea;
            b->neargs = a.nea;
        } else b->extern_owner = owner;
        fb->outs[k] = b;
        items[k] = tbox_of_buffer(L, b);
    }
    if (!owner) return lerr(L, n, "fallback '%s' without tensor results is not supported", n->target);
    if (!tuple) return set_tbox(L, n, items[0]);
    return set_tuple(L, n, items, nm);
}

/* ---- higher_order.cond: each branch lowered as its own module (core/ir/ir_cond.c) ---- */

static bool layouts_same(const Layout *a, const Layout *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->offset != b->offset) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->size[d] != b->size[d] || a->stride[d] != b->stride[d]) return false;
    return true;
}

static Layout layout_copy(Lower *L, const Layout *src) {
    Layout l = layout_contiguous(L->m, src->dtype, src->device, src->ndim, src->size);
    for (int d = 0; d < l.ndim; d++) l.stride[d] = src->stride[d];
    l.offset = src->offset;
    l.fixed = true;
    return l;
}

static int lower_cond(Lower *L, const Node *n) {
    if (n->nargs != 4) return lerr(L, n, "cond takes (pred, true_graph, false_graph, operands)");
    IrTBox *pred = arg_tbox(L, n, 0);
    if (!pred) return lerr(L, n, "cond with a predicate that is not a tensor is not supported");
    const Value *ops = &n->args[3];
    if (ops->kind != V_TUPLE && ops->kind != V_LIST) return lerr(L, n, "cond operands must be a tuple");
    IrCond *c = lalloc(L, sizeof *c);
    for (int b = 0; b < 2; b++) {
        const Value *v = &n->args[1 + b];
        Graph *sub = v->kind == V_NODE && v->node->kind == N_GET_ATTR ? graph_subgraph(L->g, v->node->target) : NULL;
        if (!sub) return lerr(L, n, "cond branch %d is not a subgraph", b + 1);
        c->names[b] = v->node->target;
        c->branch[b] = ir_lower(L->ctx, sub);
        if (!c->branch[b]) {
            char msg[1100];
            snprintf(msg, sizeof msg, "%.1000s", L->ctx->err.msg);
            ir_cond_free(c);
            return lerr(L, n, "in subgraph '%s': %s", c->names[b], msg);
        }
        char prefix[300];
        snprintf(prefix, sizeof prefix, "%s_", c->names[b]);
        ir_cond_set_prefix(c->branch[b], prefix);
    }
    IrModule *t = c->branch[0], *f = c->branch[1];
    int nops = ops->list.n;
    if (t->ninputs != nops || f->ninputs != nops || t->noutputs != f->noutputs) {
        ir_cond_free(c);
        return lerr(L, n, "cond: branches take %d/%d tensors and return %d/%d results for %d operands", t->ninputs,
                    f->ninputs, t->noutputs, f->noutputs, nops);
    }
    ExternArg *ea = lalloc(L, sizeof(ExternArg) * (nops + 1));
    extern_arg(L, pred, &ea[0]);
    for (int k = 0; k < nops; k++) {
        const Value *ov = &ops->list.items[k];
        LVal *lv = ov->kind == V_NODE ? node_val(L, ov->node) : NULL;
        if (!lv || lv->kind != LV_TBOX) { ir_cond_free(c); return lerr(L, n, "cond operand %d is not a tensor", k); }
        const Layout *want = &t->inputs[k]->layout;
        extern_arg(L, lv->t, &ea[k + 1]);
        if (!layouts_same(&ea[k + 1].view, want) || !layouts_same(want, &f->inputs[k]->layout)) {
            /* copy it into the layout the branches take */
            Layout l = layout_copy(L, want);
            IrStorage *sb = storage_new(L, lv->t->loader, lv->t->dtype, lv->t->ndim, lv->t->size, lv->t->origins, lv->t->norigins);
            ea[k + 1].buf = realize_storage(L, sb, &l);
            ea[k + 1].view = ea[k + 1].buf->layout;
        }
    }
    int nout = t->noutputs;
    if (nout == 0) { ir_cond_free(c); return lerr(L, n, "cond without results is not supported"); }
    for (int k = 0; k < nout; k++)
        if (!t->outputs[k] || !f->outputs[k]) { ir_cond_free(c); return lerr(L, n, "cond result %d is not a tensor", k); }
    c->nouts = nout;
    c->outs = lalloc(L, sizeof(Buffer *) * (nout + 1));
    IrTBox **items = lalloc(L, sizeof(IrTBox *) * (nout + 1));
    const char **o = NULL;
    int no = 0;
    origins_add(L, &o, &no, "cond");
    for (int k = 0; k < nout; k++) {
        Layout l = layout_copy(L, t->out_views[k] ? t->out_views[k] : &t->outputs[k]->layout);
        l.offset = sym_int(L->s, 0);
        Buffer *b = new_buffer(L, BUF_EXTERN, &l);
        b->ext = EXT_COND;
        b->origins = o;
        b->norigins = no;
        if (k == 0) {
            b->cond = c;
            b->eargs = ea;
            b->neargs = nops + 1;
        } else b->extern_owner = c->outs[0];
        c->outs[k] = b;
        items[k] = tbox_of_buffer(L, b);
    }
    return set_tuple(L, n, items, nout);
}

/* ---- the table ---- */

typedef enum {
    K_VIEW, K_WHERE, K_CLAMP, K_CONVERT, K_FULL, K_RED, K_VAR_MEAN, K_SOFTMAX, K_SOFTMAX_ONLINE,
    K_MM, K_ADDMM, K_BMM, K_SDPA, K_GETITEM, K_CLONE, K_COPY, K_SLICE_SCATTER, K_SELECT_SCATTER, K_COND, K_COMPOSITE, K_CAT, K_LOG_SOFTMAX,
    K_CHECKPOINT, K_MAX_DIM, K_ANY_ALL, K_VAR_STD, K_LOGSUMEXP, K_SPLIT, K_ARANGE, K_PAD, K_STACK
} LowerKind;

static const struct { const char *name; LowerKind k; } lower_defs[] = {
    {"aten.permute.default", K_VIEW}, {"aten.select.int", K_VIEW}, {"aten.slice.Tensor", K_VIEW},
    {"aten.expand.default", K_VIEW}, {"aten.unsqueeze.default", K_VIEW},
    {"aten.squeeze.dim", K_VIEW}, {"aten.squeeze.dims", K_VIEW}, {"aten.squeeze.default", K_VIEW},
    {"aten.view.default", K_VIEW}, {"aten.reshape.default", K_VIEW}, {"aten._unsafe_view.default", K_VIEW},
    {"aten.alias.default", K_VIEW}, {"aten.detach.default", K_VIEW},
    {"aten.where.self", K_WHERE},
    {"aten.clamp.default", K_CLAMP}, {"aten.clamp_min.default", K_CLAMP}, {"aten.clamp_max.default", K_CLAMP},
    {"prims.convert_element_type.default", K_CONVERT}, {"aten._to_copy.default", K_CONVERT},
    {"aten.full.default", K_FULL}, {"aten.zeros.default", K_FULL}, {"aten.ones.default", K_FULL},
    {"aten.scalar_tensor.default", K_FULL}, {"aten.full_like.default", K_FULL},
    {"aten.zeros_like.default", K_FULL}, {"aten.ones_like.default", K_FULL},
    {"aten.empty.memory_format", K_FULL}, {"aten.empty_strided.default", K_FULL}, {"aten.empty_like.default", K_FULL},
    {"aten.new_zeros.default", K_FULL}, {"aten.new_ones.default", K_FULL}, {"aten.new_empty.default", K_FULL},
    {"aten.new_full.default", K_FULL},
    {"aten.arange.default", K_ARANGE}, {"aten.arange.start", K_ARANGE}, {"aten.arange.start_step", K_ARANGE},
    {"prims.iota.default", K_ARANGE}, {"aten.constant_pad_nd.default", K_PAD}, {"aten.stack.default", K_STACK},
    {"aten.sum.dim_IntList", K_RED}, {"aten.sum.default", K_RED}, {"aten.amax.default", K_RED},
    {"aten.amin.default", K_RED}, {"aten.mean.dim", K_RED}, {"aten.prod.dim_int", K_RED},
    {"aten.argmax.default", K_RED}, {"aten.argmin.default", K_RED},
    {"aten.mean.default", K_RED}, {"aten.max.default", K_RED}, {"aten.min.default", K_RED},
    {"aten.prod.default", K_RED},
    {"aten.max.dim", K_MAX_DIM}, {"aten.min.dim", K_MAX_DIM},
    {"aten.any.dim", K_ANY_ALL}, {"aten.any.dims", K_ANY_ALL}, {"aten.any.default", K_ANY_ALL},
    {"aten.all.dim", K_ANY_ALL}, {"aten.all.default", K_ANY_ALL},
    {"aten.var.correction", K_VAR_STD}, {"aten.std.correction", K_VAR_STD},
    {"aten.logsumexp.default", K_LOGSUMEXP},
    {"aten.var_mean.correction", K_VAR_MEAN},
    {"aten._softmax.default", K_SOFTMAX}, {"prims.prepare_softmax_online.default", K_SOFTMAX_ONLINE},
    {"aten.softmax.int", K_SOFTMAX}, {"aten._log_softmax.default", K_LOG_SOFTMAX}, {"aten.log_softmax.int", K_LOG_SOFTMAX},
    {"aten.silu.default", K_COMPOSITE}, {"aten.softplus.default", K_COMPOSITE}, {"aten.mish.default", K_COMPOSITE},
    {"aten.leaky_relu.default", K_COMPOSITE}, {"aten.elu.default", K_COMPOSITE}, {"aten.gelu.default", K_COMPOSITE},
    {"aten.hardsigmoid.default", K_COMPOSITE}, {"aten.hardswish.default", K_COMPOSITE},
    {"aten.rsub.Scalar", K_COMPOSITE}, {"aten.rsub.Tensor", K_COMPOSITE},
    {"aten.masked_fill.Scalar", K_COMPOSITE}, {"aten.masked_fill.Tensor", K_COMPOSITE},
    {"aten.fill.Scalar", K_COMPOSITE}, {"aten.copy.default", K_COMPOSITE}, {"aten.trunc.default", K_COMPOSITE},
    {"aten.isnan.default", K_COMPOSITE}, {"aten.isinf.default", K_COMPOSITE}, {"aten.logical_xor.default", K_COMPOSITE},
    {"aten.hardtanh.default", K_COMPOSITE}, {"aten.remainder.Tensor", K_COMPOSITE}, {"aten.remainder.Scalar", K_COMPOSITE},
    {"aten.split.Tensor", K_SPLIT}, {"aten.split_with_sizes.default", K_SPLIT}, {"aten.chunk.default", K_SPLIT},
    {"aten.unbind.int", K_SPLIT}, {"aten.narrow.default", K_VIEW}, {"aten.lift_fresh.default", K_VIEW},
    {"aten.lift_fresh_copy.default", K_CLONE}, {"aten.to.dtype", K_CONVERT},
    {"aten.cat.default", K_CAT}, {"aten.t.default", K_VIEW}, {"aten.transpose.int", K_VIEW},
    {"aten.mm.default", K_MM}, {"aten.addmm.default", K_ADDMM}, {"aten.bmm.default", K_BMM},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", K_SDPA},
    {"operator.getitem", K_GETITEM},
    {"aten.clone.default", K_CLONE}, {"aten.contiguous.default", K_CLONE},
    {"aten.copy_.default", K_COPY},
    {"aten.slice_scatter.default", K_SLICE_SCATTER}, {"aten.select_scatter.default", K_SELECT_SCATTER},
    {"higher_order.cond", K_COND},
    {"higher_order.tag_activation_checkpoint", K_CHECKPOINT},
};

int lowering_count(void) {
    return (int)(sizeof lower_defs / sizeof lower_defs[0] + sizeof pw_defs / sizeof pw_defs[0]);
}
const char *lowering_name(int i) {
    int nl = (int)(sizeof lower_defs / sizeof lower_defs[0]);
    if (i < 0 || i >= lowering_count()) return NULL;
    return i < nl ? lower_defs[i].name : pw_defs[i - nl].name;
}

static const PwDef *find_pw(const char *t) {
    for (size_t i = 0; i < sizeof pw_defs / sizeof pw_defs[0]; i++)
        if (strcmp(pw_defs[i].name, t) == 0) return &pw_defs[i];
    return NULL;
}
static int find_kind(const char *t) {
    for (size_t i = 0; i < sizeof lower_defs / sizeof lower_defs[0]; i++)
        if (strcmp(lower_defs[i].name, t) == 0) return (int)lower_defs[i].k;
    return -1;
}

/* aten._assert_scalar and the range hints of unbacked SymInts: no kernel; the assert becomes
 * size guards of the module (checked by the C wrapper) */
static bool is_sym_check(const char *t) {
    return t && (!strcmp(t, "aten._assert_scalar.default") || !strcmp(t, "aten.sym_constrain_range.default") ||
                 !strcmp(t, "aten.sym_constrain_range_for_size.default") ||
                 !strcmp(t, "aten._functional_sym_constrain_range.default"));
}

/* _assert_scalar(cond, msg) with cond a SymBool node "Sym(s0 >= 2)": each relation of the
 * condition (a conjunction) over the module's size symbols becomes a guard "s0 >= 2". A
 * condition that is no conjunction (Or) or names other symbols (unbacked u0) is not checked. */
static void lower_assert_scalar(IrModule *m, MiCtx *ctx, const Node *n) {
    if (strcmp(n->target, "aten._assert_scalar.default") || n->nargs < 1 || n->args[0].kind != V_NODE ||
        !n->args[0].node->symbool)
        return;
    MiError saved = ctx->err;
    SymBool *b = symbool_parse(ctx, n->args[0].node->symbool, NULL);
    ctx->err = saved;
    StrBuf sb;
    sb_init(&sb);
    if (b && symbool_guards(b, &sb) > 0) {
        for (char *line = sb.s, *nl; line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            *nl = 0;
            SymBool *r = symbool_parse(ctx, line, NULL);
            const char *names[16];
            int k = r ? sym_free_symbols(r->lhs, names, 8) : 0;
            k += r ? sym_free_symbols(r->rhs, names + k, 8) : 0;
            bool known = r != NULL;
            for (int i = 0; i < k && known; i++) {
                known = false;
                for (int j = 0; j < m->nsyms; j++)
                    if (!strcmp(m->sym_names[j], names[i])) known = true;
            }
            ctx->err = saved;
            symbool_free(r);
            if (known) ir_add_guard(m, "%s", line);
        }
    }
    sb_free(&sb);
    symbool_free(b);
}

bool lowering_supported(const Graph *g, char *why, size_t n) {
    for (int i = 0; i < g->n; i++) {
        const Node *nd = g->nodes[i];
        if (nd->kind == N_GET_ATTR) {
            /* a subgraph (cond branch): lowered with the cond, so it must be lowerable too */
            const Graph *sub = nd->target ? graph_subgraph(g, nd->target) : NULL;
            if (!sub) {
                if (why) snprintf(why, n, "get_attr '%s' (subgraphs / higher-order ops) is not supported (node '%s')", nd->target, nd->name);
                return false;
            }
            if (!lowering_supported(sub, why, n)) return false;
            continue;
        }
        if (nd->kind != N_CALL_FUNCTION) continue;
        if (nd->is_sym && nd->sym_val) continue;   /* SymInt arithmetic: its value is the annotation */
        if (nd->symbool || is_sym_check(nd->target)) continue;   /* SymBools and their asserts: guards */
        if (!find_pw(nd->target) && find_kind(nd->target) < 0 && !ir_fallback_ok(nd->op ? nd->op : op_lookup(nd->target))) {
            if (why) snprintf(why, n, "unsupported op '%s' (node '%s')", nd->target, nd->name);
            return false;
        }
    }
    return true;
}

static int lower_checkpoint(Lower *L, const Node *n);

static int lower_node(Lower *L, const Node *n) {
    const PwDef *pw = find_pw(n->target);
    if (pw) return lower_pointwise(L, n, pw);
    int k = find_kind(n->target);
    switch (k) {
    case K_VIEW: return lower_view_op(L, n);
    case K_WHERE: return lower_where(L, n);
    case K_CLAMP: return lower_clamp(L, n);
    case K_CONVERT: return lower_convert(L, n);
    case K_FULL: return lower_full(L, n);
    case K_RED: return lower_reduction(L, n);
    case K_VAR_MEAN: return lower_var_mean(L, n);
    case K_MAX_DIM: return lower_max_dim(L, n);
    case K_ANY_ALL: return lower_any_all(L, n);
    case K_VAR_STD: return lower_var_std(L, n);
    case K_LOGSUMEXP: return lower_logsumexp(L, n);
    case K_SPLIT: return lower_split(L, n);
    case K_ARANGE: return lower_arange(L, n);
    case K_PAD: return lower_pad(L, n);
    case K_STACK: return lower_stack(L, n);
    case K_SOFTMAX: return lower_softmax(L, n, 0);
    case K_SOFTMAX_ONLINE: return lower_softmax(L, n, 1);
    case K_LOG_SOFTMAX: return lower_softmax(L, n, 2);
    case K_COMPOSITE: return lower_composite(L, n);
    case K_CAT: return lower_cat(L, n);
    case K_MM: return lower_matmul(L, n, EXT_MM);
    case K_ADDMM: return lower_matmul(L, n, EXT_ADDMM);
    case K_BMM: return lower_matmul(L, n, EXT_BMM);
    case K_SDPA: return lower_sdpa(L, n);
    case K_GETITEM: return lower_getitem(L, n);
    case K_CLONE: return lower_clone(L, n);
    case K_COPY: return lower_copy_(L, n);
    case K_SLICE_SCATTER: return lower_scatter(L, n, true);
    case K_SELECT_SCATTER: return lower_scatter(L, n, false);
    case K_COND: return lower_cond(L, n);
    case K_CHECKPOINT: return lower_checkpoint(L, n);
    default:
        /* no lowering: a FallbackKernel calling the reference implementation at run time */
        if (ir_fallback_ok(n->op ? n->op : op_lookup(n->target))) return lower_fallback(L, n);
        return lerr(L, n, "unsupported op '%s'", n->target);
    }
}

/* ---- symbols, inputs, outputs ---- */

static void add_sym(IrModule *m, const char *name) {
    for (int i = 0; i < m->nsyms; i++)
        if (strcmp(m->sym_names[i], name) == 0) return;
    m->sym_names = mi_xrealloc(m->sym_names, sizeof(char *) * (m->nsyms + 1));
    m->sym_names[m->nsyms++] = arena_strdup(&m->arena, name);
    ir_add_guard(m, "%s >= 1", name);
}
static void add_syms_of(IrModule *m, const Expr *e) {
    const char *names[16];
    int k = sym_free_symbols(e, names, 16);
    for (int i = 0; i < k; i++) add_sym(m, names[i]);
}

static void count_use(Node *n, void *ud) {
    Lower *L = ud;
    int i = graph_index_of(L->g, n);
    if (i >= 0) L->nusers[i]++;
}

static int lower_output(Lower *L, const Node *out) {
    IrModule *m = L->m;
    const Value *v = out->nargs ? &out->args[0] : NULL;
    int nout = 0;
    const Value *items = v;
    if (v && (v->kind == V_TUPLE || v->kind == V_LIST)) { nout = v->list.n; items = v->list.items; }
    else if (v) nout = 1;
    m->noutputs = nout;
    m->outputs = mi_xcalloc(nout ? nout : 1, sizeof(Buffer *));
    m->out_views = mi_xcalloc(nout ? nout : 1, sizeof(Layout *));
    for (int j = 0; j < nout; j++) {
        const Value *it = &items[j];
        if (it->kind == V_NONE) continue;
        if (it->kind != V_NODE) return lerr(L, out, "output %d is not a tensor", j);
        const Node *src = it->node;
        LVal *lv = node_val(L, src);
        if (!lv || lv->kind != LV_TBOX) {
            if (lv && lv->kind == LV_SYM) return lerr(L, out, "SymInt outputs are not supported");
            return lerr(L, out, "output %d ('%s') is not a tensor", j, src->name);
        }
        IrTBox *t = lv->t;
        Layout l;
        if (src->has_meta) {
            l = layout_contiguous(m, src->meta.dtype, src->meta.device, src->meta.ndim, src->meta.size);
            for (int d = 0; d < l.ndim; d++) l.stride[d] = src->meta.stride[d];
        } else l = layout_contiguous(m, t->dtype, L->dev, t->ndim, t->size);
        l.fixed = true;
        L->cur = src;
        Buffer *b = NULL;
        if (t->sb && !t->is_view && !t->sb->buf) {
            b = realize_storage(L, t->sb, &l);
        } else if (t->sb && !t->is_view && t->sb->buf && t->sb->buf->kind != BUF_INPUT &&
                   t->sb->buf->output_index < 0 && !t->sb->buf->mutates &&
                   (!t->sb->buf->extern_owner || t->sb->buf->extern_owner->ext == EXT_COND || t->sb->buf->extern_owner->ext == EXT_FALLBACK)) {
            Buffer *c = t->sb->buf;
            bool same = c->layout.ndim == l.ndim;
            for (int d = 0; same && d < l.ndim; d++) {
                int64_t one;
                if (sym_is_int(l.size[d], &one) && one == 1) continue;
                if (c->layout.stride[d] != l.stride[d]) same = false;
            }
            if (same) { b = c; b->layout.fixed = true; }
        } else if (t->is_view) {
            /* a view covering a computed buffer's whole storage with the output's strides (a
             * keepdim reduction returned through view/squeeze): the buffer is written straight
             * into the output memory instead of being copied by one more kernel, as Inductor
             * returns reinterpret_tensor(buf) */
            Buffer *c = NULL;
            Layout v;
            SymCtx *s = L->s;
            int64_t off;
            if (ir_probe_strided(m, t->loader, t->ndim, t->size, &c, &v) && c->kind == BUF_COMPUTED &&
                c->output_index < 0 && !c->mutates && v.ndim == l.ndim && sym_is_int(v.offset, &off) && off == 0 &&
                (!l.offset || (sym_is_int(l.offset, &off) && off == 0)) && v.dtype == l.dtype &&
                layout_storage_size(s, &v) == layout_storage_size(s, &c->layout) &&
                layout_storage_size(s, &l) == layout_storage_size(s, &c->layout)) {
                bool same = true;
                for (int d = 0; same && d < l.ndim; d++) {
                    int64_t one;
                    if (v.size[d] != l.size[d]) same = false;
                    else if (!(sym_is_int(l.size[d], &one) && one == 1) && v.stride[d] != l.stride[d]) same = false;
                }
                if (same) {
                    b = c;
                    m->out_views[j] = lalloc(L, sizeof(Layout));
                    *m->out_views[j] = layout_copy(L, &l);
                }
            }
        }
        if (!b) {
            const char **o = NULL;
            int no = 0;
            origins_add(L, &o, &no, "clone");
            IrStorage *sb = storage_new(L, mk_to_dtype(L, t->loader, l.dtype), l.dtype, l.ndim, l.size, o, no);
            b = realize_storage(L, sb, &l);
        }
        b->output_index = j;
        m->outputs[j] = b;
    }
    return 0;
}

/* tag_activation_checkpoint(body, *operands): only a recompute hint, so the body is lowered
 * inline into the caller's module (its placeholders take the operands' values), as the AOT
 * graphs Inductor sees have it inlined already. */
static int lower_checkpoint(Lower *L, const Node *n) {
    const Value *bv = n->nargs ? &n->args[0] : NULL;
    const Graph *sub = bv && bv->kind == V_NODE && bv->node->kind == N_GET_ATTR ? graph_subgraph(L->g, bv->node->target) : NULL;
    if (!sub) return lerr(L, n, "the checkpointed body is not a subgraph");
    if (graph_num_placeholders(sub) != n->nargs - 1) return lerr(L, n, "the body takes %d inputs, %d given", graph_num_placeholders(sub), n->nargs - 1);
    Lower S = *L;
    S.g = sub;
    S.vals = mi_xcalloc(sub->n ? sub->n : 1, sizeof(LVal));
    S.nusers = mi_xcalloc(sub->n ? sub->n : 1, sizeof(int));
    for (int i = 0; i < sub->n; i++) {
        const Node *x = sub->nodes[i];
        for (int a = 0; a < x->nargs; a++) value_for_each_node(&x->args[a], count_use, &S);
        for (int a = 0; a < x->nkwargs; a++) value_for_each_node(&x->kwargs[a].v, count_use, &S);
    }
    int rc = 0, k = 0;
    for (int i = 0; i < sub->n && rc == 0; i++) {
        const Node *x = sub->nodes[i];
        S.cur = x;
        if (x->kind == N_PLACEHOLDER) {
            const Value *o = &n->args[1 + k++];
            LVal *src = o->kind == V_NODE ? node_val(L, o->node) : NULL;
            if (!src) { rc = lerr(L, n, "checkpoint operand %d is not a node", k - 1); break; }
            S.vals[i] = *src;
        } else if (x->kind == N_CALL_FUNCTION) {
            rc = lower_node(&S, x);
        } else if (x->kind == N_OUTPUT) {
            const Value *r = x->nargs ? &x->args[0] : NULL;
            int nout = !r ? 0 : (r->kind == V_TUPLE || r->kind == V_LIST) ? r->list.n : 1;
            IrTBox **items = lalloc(L, sizeof(IrTBox *) * (nout + 1));
            for (int j = 0; j < nout && rc == 0; j++) {
                const Value *it = (r->kind == V_TUPLE || r->kind == V_LIST) ? &r->list.items[j] : r;
                LVal *lv = it->kind == V_NODE ? node_val(&S, it->node) : NULL;
                if (!lv || lv->kind != LV_TBOX) rc = lerr(L, n, "checkpoint result %d is not a tensor", j);
                else items[j] = lv->t;
            }
            if (rc == 0) rc = set_tuple(L, n, items, nout);
        }
    }
    free(S.vals);
    free(S.nusers);
    L->cur = n;
    return rc;
}

IrModule *ir_lower(MiCtx *ctx, const Graph *g) {
    char why[512];
    if (functionalize_needed(g)) {
        /* in-place ops other than the copy_ epilogue (reinplace's copy_ into a view of an
         * intermediate, say): lower the functional form of g, which computes the same values */
        Graph *f = functionalize(ctx, g);
        if (!f) return NULL;
        ops_resolve_graph(f);
        IrModule *m = functionalize_needed(f) ? NULL : ir_lower(ctx, f);
        if (!m) {
            if (functionalize_needed(f)) mi_err(ctx, g->source, 0, 0, "ir_lower: the graph stays non-functional after functionalize");
            graph_free(f);
            return NULL;
        }
        m->owned_graph = f;
        return m;
    }
    if (!lowering_supported(g, why, sizeof why)) {
        const Node *bad = NULL;
        for (int i = 0; i < g->n && !bad; i++)
            if ((g->nodes[i]->kind == N_CALL_FUNCTION && !find_pw(g->nodes[i]->target) && find_kind(g->nodes[i]->target) < 0 &&
                 !ir_fallback_ok(g->nodes[i]->op ? g->nodes[i]->op : op_lookup(g->nodes[i]->target))) ||
                (g->nodes[i]->kind == N_GET_ATTR && !graph_subgraph(g, g->nodes[i]->target)))
                bad = g->nodes[i];
        mi_err(ctx, g->source, bad ? bad->src_line : 0, 0, "%s", why);
        return NULL;
    }
    IrModule *m = mi_xcalloc(1, sizeof *m);
    m->ctx = ctx;
    m->graph = g;
    arena_init(&m->arena);
    Lower L = {ctx, ctx->sym, m, g, NULL, NULL, NULL, graph_device(g)};
    L.vals = mi_xcalloc(g->n ? g->n : 1, sizeof(LVal));
    L.nusers = mi_xcalloc(g->n ? g->n : 1, sizeof(int));
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], count_use, &L);
        for (int a = 0; a < n->nkwargs; a++) value_for_each_node(&n->kwargs[a].v, count_use, &L);
    }
    /* placeholders: symbols first (in order of appearance), then tensor inputs */
    int ninputs = 0;
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_PLACEHOLDER) continue;
        if (n->is_sym) { if (n->sym_val) add_syms_of(m, n->sym_val); continue; }
        if (!n->has_meta) { mi_err(ctx, g->source, n->src_line, 0, "placeholder '%s' has no tensor annotation", n->name); goto fail; }
        for (int d = 0; d < n->meta.ndim; d++) { add_syms_of(m, n->meta.size[d]); add_syms_of(m, n->meta.stride[d]); }
        ninputs++;
    }
    m->inputs = mi_xcalloc(ninputs ? ninputs : 1, sizeof(Buffer *));
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        L.cur = n;
        if (n->kind == N_PLACEHOLDER) {
            if (n->is_sym) { L.vals[i].kind = LV_SYM; L.vals[i].sym = n->sym_val; continue; }
            Layout l = layout_contiguous(m, n->meta.dtype, n->meta.device, n->meta.ndim, n->meta.size);
            for (int d = 0; d < l.ndim; d++) l.stride[d] = n->meta.stride[d];
            if (n->meta.offset) l.offset = n->meta.offset;
            l.fixed = true;
            Buffer *b = new_buffer(&L, BUF_INPUT, &l);
            b->name = arena_strdup(&m->arena, n->name);
            b->input_index = m->ninputs;
            m->inputs[m->ninputs++] = b;
            L.vals[i].kind = LV_TBOX;
            L.vals[i].t = tbox_of_buffer(&L, b);
            continue;
        }
        if (n->kind == N_OUTPUT) { if (lower_output(&L, n) < 0) goto fail; continue; }
        if (n->kind != N_CALL_FUNCTION) continue;
        /* sym_size / operator.mul ... on sizes: the annotation ("Sym(2*s0)") is the value; views
         * and factories read sizes from their own annotations */
        if (n->is_sym && n->sym_val) { L.vals[i].kind = LV_SYM; L.vals[i].sym = n->sym_val; continue; }
        if (n->symbool) continue;
        if (is_sym_check(n->target)) { lower_assert_scalar(m, ctx, n); continue; }
        if (lower_node(&L, n) < 0) goto fail;
    }
    free(L.vals);
    free(L.nusers);
    return m;
fail:
    free(L.vals);
    free(L.nusers);
    ir_free(m);
    return NULL;
}
