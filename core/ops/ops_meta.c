/* ops_meta.c — the shape-inference toolkit the op families share: reading arguments (from a
 * graph node or a runtime call), broadcasting, torch.result_type promotion, and PyTorch's
 * stride rules (contiguous, elementwise layout propagation, empty_like, view/reshape's
 * computeStride). Shape functions are written once on Expr sizes; at run time the sizes are
 * constants, so the interpreter and infer_meta agree by construction. */
#include "ops/ops_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- setup ---- */

void sa_from_node(ShapeArgs *sa, MiCtx *ctx, Graph *g, const Node *n, const OpDef *op) {
    memset(sa, 0, sizeof *sa);
    sa->ctx = ctx;
    sa->sym = ctx->sym;
    sa->arena = &g->arena;
    sa->node = n;
    sa->graph = g;
    sa->op = op;
    sa->args = n->args; sa->nargs = n->nargs;
    sa->kwargs = n->kwargs; sa->nkwargs = n->nkwargs;
}

int sa_err(ShapeArgs *sa, const char *fmt, ...) {
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const Node *n = sa->node;
    const char *file = sa->graph ? sa->graph->source : NULL;
    return mi_err(sa->ctx, file, n ? n->src_line : 0, 0, "node '%s' (%s): %s",
                  n && n->name ? n->name : "?", sa->op ? sa->op->name : (n && n->target ? n->target : "?"), msg);
}

/* ---- arguments ---- */

ArgRef sa_arg(ShapeArgs *sa, int pos, const char *name) {
    ArgRef r = {NULL, NULL};
    if (pos >= 0 && pos < sa->nargs) {
        r.v = &sa->args[pos];
        if (sa->argv) r.iv = &sa->argv[pos];
        return r;
    }
    if (name)
        for (int i = 0; i < sa->nkwargs; i++)
            if (!strcmp(sa->kwargs[i].name, name)) {
                r.v = &sa->kwargs[i].v;
                if (sa->kwargv) r.iv = &sa->kwargv[i];
                return r;
            }
    return r;
}

bool arg_present(ArgRef a) { return a.v && a.v->kind != V_NONE; }

int arg_list_len(ArgRef a) {
    if (!a.v || (a.v->kind != V_LIST && a.v->kind != V_TUPLE)) return -1;
    return a.v->list.n;
}

ArgRef arg_item(ArgRef a, int k) {
    ArgRef r = { &a.v->list.items[k], NULL };
    if (a.iv && a.iv->kind == IV_TUPLE && k < a.iv->n) r.iv = &a.iv->items[k];
    return r;
}

bool arg_is_tensor(ShapeArgs *sa, ArgRef a) {
    if (!a.v || a.v->kind != V_NODE) return false;
    if (sa->eval) return a.iv && a.iv->kind == IV_TENSOR;
    return !a.v->node->is_sym && !a.v->node->symbool && !a.v->node->symfloat;
}

static const char *value_kind_name(const Value *v) {
    switch (v->kind) {
    case V_NONE: return "None";
    case V_INT: return "an int";
    case V_FLOAT: return "a float";
    case V_COMPLEX: return "a complex";
    case V_BOOL: return "a bool";
    case V_STR: return "a string";
    case V_LIST: return "a list";
    case V_TUPLE: return "a tuple";
    case V_DTYPE: return "a dtype";
    case V_DEVICE: return "a device";
    case V_SYM: return "a symbolic int";
    default: return "a constant";
    }
}

int sa_tensor(ShapeArgs *sa, ArgRef a, const char *what, TensorMeta **m) {
    if (!a.v) return sa_err(sa, "missing argument '%s'", what);
    if (a.v->kind != V_NODE) return sa_err(sa, "argument '%s' must be a tensor, got %s", what, value_kind_name(a.v));
    Node *src = a.v->node;
    if (sa->eval) {
        if ((!a.iv || a.iv->kind != IV_TENSOR) && src->kind == N_GET_ATTR)
            return sa_err(sa, "argument '%s' is the tensor constant '%s', whose value is not loaded ('inputs DIR' reads it from DIR/%s.npy)",
                          what, src->target, src->target);
        if (!a.iv || a.iv->kind != IV_TENSOR)
            return sa_err(sa, "argument '%s' (node '%s') is not a tensor at run time", what, src->name);
        Tensor *t = a.iv->t;
        TensorMeta *r = arena_alloc(sa->arena, sizeof *r);
        meta_alloc(sa, r, t->dtype, t->ndim, (Device){DEV_CPU, -1});
        for (int i = 0; i < t->ndim; i++) {
            r->size[i] = sym_int(sa->sym, t->size[i]);
            r->stride[i] = sym_int(sa->sym, t->stride[i]);
        }
        r->offset = sym_int(sa->sym, t->offset);
        *m = r;
        return 0;
    }
    if (src->is_sym) return sa_err(sa, "argument '%s' must be a tensor, got SymInt node '%s'", what, src->name);
    if (src->has_meta) {
        if (src->meta.ndim < 0 || src->meta.ndim > MI_MAX_DIMS || (src->meta.ndim && (!src->meta.size || !src->meta.stride)))
            return sa_err(sa, "argument '%s' (node '%s') has rank %d (supported: 0..%d)", what, src->name, src->meta.ndim, MI_MAX_DIMS);
        for (int i = 0; i < src->meta.ndim; i++)
            if (!src->meta.size[i] || !src->meta.stride[i])
                return sa_err(sa, "argument '%s' (node '%s') has incomplete sizes/strides", what, src->name);
        *m = &src->meta;
        return 0;
    }
    /* not annotated: infer it (a node built by a pass without meta), one level deep only, so
     * a long unannotated chain cannot recurse without bound */
    bool inputs_known = src->kind == N_CALL_FUNCTION;
    bool getitem = inputs_known && src->target && !strcmp(src->target, "operator.getitem");
    for (int i = 0; inputs_known && !getitem && i < src->nargs; i++) {
        const Value *v = &src->args[i];
        if (v->kind == V_NODE && !v->node->is_sym && !v->node->has_meta && v->node->kind == N_CALL_FUNCTION)
            inputs_known = false;
    }
    TensorMeta *outs = arena_alloc(sa->arena, OP_MAX_OUTS * sizeof *outs);
    int nout = OP_MAX_OUTS;
    if (!inputs_known || op_infer_meta(sa->ctx, (Graph *)sa->graph, src, outs, &nout) || nout != 1 ||
        outs[0].dtype == DT_INVALID)
        return sa_err(sa, "argument '%s' (node '%s') has no tensor metadata%s", what, src->name,
                      src->kind == N_PLACEHOLDER ? ": the input has no type annotation such as \"f32[4, 4][4, 1]cpu\"" : "");
    *m = &outs[0];
    return 0;
}

int sa_int(ShapeArgs *sa, ArgRef a, const char *what, Expr **out) {
    if (!a.v) return sa_err(sa, "missing argument '%s'", what);
    switch (a.v->kind) {
    case V_INT: *out = sym_int(sa->sym, a.v->i); return 0;
    case V_BOOL: *out = sym_int(sa->sym, a.v->b); return 0;
    case V_SYM:
        if (sa->eval) {
            int64_t v;
            if (sym_eval(sa->ctx, a.v->sym, sa->syms, sa->nsyms, &v)) return sa_err(sa, "argument '%s': %s", what, sa->ctx->err.msg);
            *out = sym_int(sa->sym, v);
        } else {
            *out = a.v->sym;
        }
        return 0;
    case V_NODE:
        if (sa->eval) {
            if (a.iv && (a.iv->kind == IV_INT || a.iv->kind == IV_BOOL)) { *out = sym_int(sa->sym, a.iv->i); return 0; }
            return sa_err(sa, "argument '%s' (node '%s') is not an int at run time", what, a.v->node->name);
        }
        if (a.v->node->is_sym && a.v->node->sym_val) { *out = a.v->node->sym_val; return 0; }
        return sa_err(sa, "argument '%s' must be an int, got node '%s'", what, a.v->node->name);
    default:
        return sa_err(sa, "argument '%s' must be an int, got %s", what, value_kind_name(a.v));
    }
}

int sa_const_int(ShapeArgs *sa, ArgRef a, const char *what, int64_t *out) {
    Expr *e;
    if (sa_int(sa, a, what, &e)) return -1;
    if (!sym_is_int(e, out)) {
        char buf[128];
        return sa_err(sa, "argument '%s' must be a constant int, got %s", what, sym_str(e, buf, sizeof buf));
    }
    return 0;
}

int sa_int_list(ShapeArgs *sa, ArgRef a, const char *what, Expr **out, int *n, int max) {
    if (!a.v) return sa_err(sa, "missing argument '%s'", what);
    int len = arg_list_len(a);
    if (len < 0) {                      /* a single int stands for a one-element list */
        if (sa_int(sa, a, what, &out[0])) return -1;
        *n = 1;
        return 0;
    }
    if (len > max) return sa_err(sa, "argument '%s' has %d entries (at most %d supported)", what, len, max);
    for (int k = 0; k < len; k++)
        if (sa_int(sa, arg_item(a, k), what, &out[k])) return -1;
    *n = len;
    return 0;
}

int sa_const_int_list(ShapeArgs *sa, ArgRef a, const char *what, int64_t *out, int *n, int max) {
    Expr *e[OP_MAX_OUTS];
    if (max > OP_MAX_OUTS) max = OP_MAX_OUTS;
    if (sa_int_list(sa, a, what, e, n, max)) return -1;
    for (int k = 0; k < *n; k++)
        if (!sym_is_int(e[k], &out[k])) return sa_err(sa, "argument '%s' must be constant ints", what);
    return 0;
}

int sa_scalar(ShapeArgs *sa, ArgRef a, const char *what, double *out, DType *type) {
    if (!a.v) return sa_err(sa, "missing argument '%s'", what);
    switch (a.v->kind) {
    case V_INT: *out = (double)a.v->i; *type = DT_I64; return 0;
    case V_FLOAT: *out = a.v->f; *type = DT_F32; return 0;
    case V_BOOL: *out = a.v->b; *type = DT_BOOL; return 0;
    case V_SYM: {
        Expr *e;
        if (sa_int(sa, a, what, &e)) return -1;
        int64_t v = 0;
        sym_is_int(e, &v);
        *out = (double)v; *type = DT_I64;
        return 0;
    }
    case V_NODE:
        if (sa->eval) {
            if (a.iv && (a.iv->kind == IV_INT || a.iv->kind == IV_BOOL)) {
                *out = (double)a.iv->i; *type = a.iv->kind == IV_INT ? DT_I64 : DT_BOOL; return 0;
            }
            if (a.iv && a.iv->kind == IV_FLOAT) { *out = a.iv->f; *type = DT_F32; return 0; }
            return sa_err(sa, "argument '%s' (node '%s') is not a number at run time", what, a.v->node->name);
        }
        if (a.v->node->is_sym) { *out = 0; *type = DT_I64; return 0; }
        if (a.v->node->symbool) { *out = 1; *type = DT_BOOL; return 0; }   /* a SymBool condition */
        if (a.v->node->symfloat) { *out = 0; *type = DT_F32; return 0; }   /* a SymFloat (a Python float) */
        return sa_err(sa, "argument '%s' must be a number, got tensor node '%s'", what, a.v->node->name);
    default:
        return sa_err(sa, "argument '%s' must be a number, got %s", what, value_kind_name(a.v));
    }
}

bool arg_bool(ArgRef a, bool dflt) {
    if (!a.v) return dflt;
    if (a.v->kind == V_BOOL) return a.v->b;
    if (a.v->kind == V_INT) return a.v->i != 0;
    return dflt;
}

DType arg_dtype(ArgRef a, DType dflt) { return a.v && a.v->kind == V_DTYPE ? a.v->dtype : dflt; }
const char *arg_str(ArgRef a, const char *dflt) { return a.v && a.v->kind == V_STR ? a.v->s : dflt; }
Device arg_device(ArgRef a, Device dflt) { return a.v && a.v->kind == V_DEVICE ? a.v->device : dflt; }

int sa_dim(ShapeArgs *sa, int64_t dim, int ndim, int64_t *out) {
    int64_t r = ndim > 0 ? ndim : 1;
    if (dim < -r || dim >= r)
        return sa_err(sa, "dimension %lld out of range for a tensor of rank %d", (long long)dim, ndim);
    *out = dim < 0 ? dim + r : dim;
    return 0;
}

/* ---- metas ---- */

void meta_alloc(ShapeArgs *sa, TensorMeta *m, DType dt, int ndim, Device dev) {
    memset(m, 0, sizeof *m);
    m->dtype = dt;
    m->ndim = ndim;
    m->size = arena_alloc(sa->arena, (size_t)(ndim ? ndim : 1) * sizeof(Expr *));
    m->stride = arena_alloc(sa->arena, (size_t)(ndim ? ndim : 1) * sizeof(Expr *));
    m->offset = sym_int(sa->sym, 0);
    m->device = dev;
    m->has_stride = true;
    m->has_device = true;
}

void meta_copy(ShapeArgs *sa, TensorMeta *dst, const TensorMeta *src) {
    meta_alloc(sa, dst, src->dtype, src->ndim, src->device);
    for (int i = 0; i < src->ndim; i++) { dst->size[i] = src->size[i]; dst->stride[i] = src->stride[i]; }
    dst->offset = src->offset ? src->offset : sym_int(sa->sym, 0);
    dst->has_device = src->has_device;
}

bool ex_eq_int(const Expr *e, int64_t v) {
    int64_t x;
    return sym_is_int(e, &x) && x == v;
}

/* size as it counts for strides: max(size, 1) */
static Expr *size1(ShapeArgs *sa, Expr *e) {
    int64_t v;
    if (sym_is_int(e, &v)) return sym_int(sa->sym, v < 1 ? 1 : v);
    return e;
}

void meta_contiguous_strides(ShapeArgs *sa, TensorMeta *m) {
    Expr *st = sym_int(sa->sym, 1);
    for (int i = m->ndim - 1; i >= 0; i--) {
        m->stride[i] = st;
        st = sym_mul(sa->sym, st, size1(sa, m->size[i]));
    }
}

/* c10's is_channels_last_strides_2d/3d (suggest_memory_format): the strides visited in the
 * order C, W, H, (D), N never decrease, size-1 dims not counting; the ambiguous N111 and
 * stride-0 C cases stay NCHW. Symbolic sizes or strides: false. */
bool meta_is_channels_last(const TensorMeta *m) {
    static const int o4[] = {1, 3, 2, 0}, o5[] = {1, 4, 3, 2, 0};
    if (m->ndim != 4 && m->ndim != 5) return false;
    const int *ord = m->ndim == 4 ? o4 : o5;
    int64_t sz[5], st[5], min = 0;
    for (int i = 0; i < m->ndim; i++)
        if (!m->stride[i] || !sym_is_int(m->size[i], &sz[i]) || !sym_is_int(m->stride[i], &st[i])) return false;
    if (st[1] == 0) return false;
    for (int k = 0; k < m->ndim; k++) {
        int d = ord[k];
        if (sz[d] == 0 || st[d] < min) return false;
        if (d == 0 && min == st[1]) return false;
        min = st[d];
        if (sz[d] > 1) min *= sz[d];
    }
    return true;
}

void meta_channels_last_strides(ShapeArgs *sa, TensorMeta *m) {
    static const int o4[] = {1, 3, 2, 0}, o5[] = {1, 4, 3, 2, 0};
    if (m->ndim != 4 && m->ndim != 5) { meta_contiguous_strides(sa, m); return; }
    const int *ord = m->ndim == 4 ? o4 : o5;
    Expr *st = sym_int(sa->sym, 1);
    for (int k = 0; k < m->ndim; k++) {
        m->stride[ord[k]] = st;
        st = sym_mul(sa->sym, st, size1(sa, m->size[ord[k]]));
    }
}

void meta_suggested_strides(ShapeArgs *sa, TensorMeta *m, const TensorMeta *like) {
    if (like && meta_is_channels_last(like)) meta_channels_last_strides(sa, m);
    else meta_contiguous_strides(sa, m);
}

static int64_t hint_of(ShapeArgs *sa, const char *name) {
    for (int i = 0; i < sa->nsyms; i++)
        if (!strcmp(sa->syms[i].name, name)) return sa->syms[i].value;
    return 8192;     /* unknown sizes are assumed large, like PyTorch's size-oblivious guards */
}

int ex_cmp(ShapeArgs *sa, Expr *a, Expr *b) {
    if (a == b) return 0;
    int64_t x, y;
    if (sym_is_int(a, &x) && sym_is_int(b, &y)) return x < y ? -1 : x > y;
    Expr *d = sym_sub(sa->sym, a, b);
    if (sym_is_int(d, &x)) return x < 0 ? -1 : x > 0;
    const char *names[16];
    int n = sym_free_symbols(d, names, 16);
    SymBinding bind[16];
    for (int i = 0; i < n; i++) { bind[i].name = names[i]; bind[i].value = hint_of(sa, names[i]); }
    MiTry tentative = mi_try(sa->ctx);
    int rc = sym_eval(sa->ctx, d, bind, n, &x);
    mi_try_end(&tentative);
    if (rc) return 0;
    return x < 0 ? -1 : x > 0;
}

bool meta_is_contiguous(ShapeArgs *sa, const TensorMeta *m) {
    Expr *expect = sym_int(sa->sym, 1);
    for (int i = m->ndim - 1; i >= 0; i--) {
        int64_t sz;
        if (sym_is_int(m->size[i], &sz)) {
            if (sz == 0) return true;
            if (sz == 1) continue;
        }
        if (ex_cmp(sa, m->stride[i], expect) != 0) return false;
        expect = sym_mul(sa->sym, expect, m->size[i]);
    }
    return true;
}

/* Non-overlapping and dense: the dims sorted by stride tile the storage exactly. */
static bool meta_dense(ShapeArgs *sa, const TensorMeta *m) {
    int perm[MI_MAX_DIMS], n = 0;
    if (m->ndim > MI_MAX_DIMS) return false;
    for (int i = 0; i < m->ndim; i++) perm[n++] = i;
    for (int i = 1; i < n; i++)            /* insertion sort by stride */
        for (int j = i; j > 0 && ex_cmp(sa, m->stride[perm[j - 1]], m->stride[perm[j]]) > 0; j--) {
            int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t;
        }
    Expr *expect = sym_int(sa->sym, 1);
    for (int k = 0; k < n; k++) {
        int d = perm[k];
        if (ex_eq_int(m->size[d], 1)) continue;
        if (ex_cmp(sa, m->stride[d], expect) != 0) return false;
        expect = sym_mul(sa->sym, expect, m->size[d]);
    }
    return true;
}

void meta_elementwise_strides(ShapeArgs *sa, TensorMeta *m, TensorMeta *const *ins, int nin) {
    int nd = m->ndim;
    if (nd > MI_MAX_DIMS) { meta_contiguous_strides(sa, m); return; }
    if (nd == 0) return;
    if (nd == 1) { m->stride[0] = sym_int(sa->sym, 1); return; }
    /* inputs' strides broadcast to the result shape (0 where broadcast); 0-dim inputs carry
     * no layout and are left out, like CPU scalars in PyTorch */
    Expr *st[8][MI_MAX_DIMS];
    int nt = 0;
    bool all_contig = true;
    Expr *zero = sym_int(sa->sym, 0);
    for (int k = 0; k < nin && nt < 8; k++) {
        const TensorMeta *t = ins[k];
        if (!t || t->ndim == 0 || t->ndim > nd) continue;
        for (int i = 0; i < nd; i++) {
            int j = i - (nd - t->ndim);
            if (j < 0) st[nt][i] = zero;
            else if (ex_eq_int(t->size[j], 1) && !ex_eq_int(m->size[i], 1)) st[nt][i] = zero;
            else st[nt][i] = t->stride[j];
        }
        TensorMeta tmp = *m;
        tmp.stride = st[nt];
        if (!meta_is_contiguous(sa, &tmp)) all_contig = false;
        nt++;
    }
    if (nt == 0 || all_contig) { meta_contiguous_strides(sa, m); return; }
    int perm[MI_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
    for (int i = 1; i < nd; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int a = perm[dim0], b = perm[dim1], cmp = 0;
            for (int k = 0; k < nt; k++) {
                Expr *sa_ = st[k][a], *sb_ = st[k][b];
                if (ex_eq_int(sa_, 0) || ex_eq_int(sb_, 0)) continue;
                int c = ex_cmp(sa, sa_, sb_);
                if (c) { cmp = c; break; }
                if (ex_cmp(sa, m->size[a], m->size[b]) > 0) { cmp = 1; break; }
            }
            if (cmp > 0) {
                int t = perm[dim0]; perm[dim0] = perm[dim1]; perm[dim1] = t;
                dim1 = dim0;
            } else if (cmp < 0) {
                break;
            }
        }
    }
    /* perm[0] is the innermost dimension */
    Expr *s = sym_int(sa->sym, 1);
    for (int k = 0; k < nd; k++) {
        m->stride[perm[k]] = s;
        s = sym_mul(sa->sym, s, size1(sa, m->size[perm[k]]));
    }
}

void meta_like(ShapeArgs *sa, TensorMeta *m, const TensorMeta *x, DType dt) {
    meta_alloc(sa, m, dt, x->ndim, x->device);
    for (int i = 0; i < x->ndim; i++) m->size[i] = x->size[i];
    if (meta_dense(sa, x)) {
        for (int i = 0; i < x->ndim; i++) m->stride[i] = x->stride[i];
    } else {
        TensorMeta *in[1] = {(TensorMeta *)x};
        meta_elementwise_strides(sa, m, in, 1);
    }
}

int sa_broadcast(ShapeArgs *sa, TensorMeta *const *ins, int nin, Expr **size, int *ndim) {
    int nd = 0;
    for (int k = 0; k < nin; k++) if (ins[k] && ins[k]->ndim > nd) nd = ins[k]->ndim;
    if (nd > MI_MAX_DIMS) return sa_err(sa, "rank %d exceeds the supported maximum %d", nd, MI_MAX_DIMS);
    for (int i = 0; i < nd; i++) {
        Expr *r = NULL;
        for (int k = 0; k < nin; k++) {
            const TensorMeta *t = ins[k];
            if (!t) continue;
            int j = i - (nd - t->ndim);
            if (j < 0) continue;
            Expr *s = t->size[j];
            if (!r || ex_eq_int(r, 1)) { r = s; continue; }
            if (ex_eq_int(s, 1) || s == r) continue;
            int64_t a, b;
            if ((sym_is_int(r, &a) && sym_is_int(s, &b)) || ex_cmp(sa, r, s) != 0) {
                char x[64], y[64];
                return sa_err(sa, "shapes do not broadcast: size %s vs %s at dimension %d",
                              sym_str(r, x, sizeof x), sym_str(s, y, sizeof y), i);
            }
            if (sym_is_int(r, &a)) r = s;     /* prefer the symbolic spelling */
        }
        size[i] = r;
    }
    *ndim = nd;
    return 0;
}

bool view_strides(ShapeArgs *sa, const TensorMeta *m, Expr **newsize, int nnew, Expr **out) {
    SymCtx *S = sa->sym;
    if (m->ndim == 0) {
        for (int i = 0; i < nnew; i++) out[i] = sym_int(S, 1);
        return true;
    }
    Expr *numel = sym_int(S, 1);
    for (int i = 0; i < m->ndim; i++) numel = sym_mul(S, numel, m->size[i]);
    if (ex_eq_int(numel, 0)) {
        /* empty: any shape is a view; use contiguous strides */
        Expr *st = sym_int(S, 1);
        for (int i = nnew - 1; i >= 0; i--) { out[i] = st; st = sym_mul(S, st, size1(sa, newsize[i])); }
        return true;
    }
    int view_d = nnew - 1;
    Expr *chunk_base = m->stride[m->ndim - 1];
    Expr *tnumel = sym_int(S, 1), *vnumel = sym_int(S, 1);
    for (int td = m->ndim - 1; td >= 0; td--) {
        tnumel = sym_mul(S, tnumel, m->size[td]);
        if (td == 0 || (!ex_eq_int(m->size[td - 1], 1) &&
                        ex_cmp(sa, m->stride[td - 1], sym_mul(S, tnumel, chunk_base)) != 0)) {
            while (view_d >= 0 && (ex_cmp(sa, vnumel, tnumel) < 0 || ex_eq_int(newsize[view_d], 1))) {
                out[view_d] = sym_mul(S, vnumel, chunk_base);
                vnumel = sym_mul(S, vnumel, newsize[view_d]);
                view_d--;
            }
            if (ex_cmp(sa, vnumel, tnumel) != 0) return false;
            if (td > 0) {
                chunk_base = m->stride[td - 1];
                tnumel = sym_int(S, 1);
                vnumel = sym_int(S, 1);
            }
        }
    }
    return view_d == -1;
}

int sa_infer_shape(ShapeArgs *sa, Expr *numel, Expr **size, int n) {
    SymCtx *S = sa->sym;
    int infer = -1;
    Expr *prod = sym_int(S, 1);
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (sym_is_int(size[i], &v) && v == -1) {
            if (infer >= 0) return sa_err(sa, "only one dimension can be inferred (-1)");
            infer = i;
        } else if (sym_is_int(size[i], &v) && v < 0) {
            return sa_err(sa, "invalid shape dimension %lld", (long long)v);
        } else {
            prod = sym_mul(S, prod, size[i]);
        }
    }
    char nb[64], pb[64];
    if (infer >= 0) {
        int64_t a, b;
        if (sym_is_int(numel, &a) && sym_is_int(prod, &b)) {
            if (b == 0 || a % b != 0)
                return sa_err(sa, "shape with -1 is invalid for input of size %lld", (long long)a);
            size[infer] = sym_int(S, a / b);
        } else {
            size[infer] = sym_floordiv(S, numel, prod);
        }
    } else if (ex_cmp(sa, prod, numel) != 0) {
        return sa_err(sa, "shape of %s elements is invalid for input of size %s",
                      sym_str(prod, pb, sizeof pb), sym_str(numel, nb, sizeof nb));
    }
    return 0;
}

Device sa_first_device(ShapeArgs *sa) {
    Device first = {DEV_CPU, -1};
    bool have = false;
    for (int i = 0; i < sa->nargs; i++) {
        ArgRef a = sa_arg(sa, i, NULL);
        int n = arg_list_len(a);
        for (int k = n < 0 ? -1 : 0; k < (n < 0 ? 0 : n); k++) {
            ArgRef x = k < 0 ? a : arg_item(a, k);
            if (!x.v || x.v->kind != V_NODE || x.v->node->is_sym || !x.v->node->has_meta) continue;
            const TensorMeta *m = &x.v->node->meta;
            if (m->ndim > 0 || m->device.kind != DEV_CPU) return m->device;
            if (!have) { first = m->device; have = true; }
        }
    }
    return first;
}

/* ---- type promotion ---- */

DType default_float(void) { return DT_F32; }

void promote_init(PromoteState *p) { p->dim = p->zero = p->wrapped = DT_INVALID; }

static DType promote_skip(DType a, DType b) {
    if (a == DT_INVALID) return b;
    if (b == DT_INVALID) return a;
    return dtype_promote(a, b);
}

void promote_tensor(PromoteState *p, const TensorMeta *m) {
    if (m->ndim > 0) p->dim = promote_skip(p->dim, m->dtype);
    else p->zero = promote_skip(p->zero, m->dtype);
}

void promote_scalar(PromoteState *p, DType t) {
    if (dtype_is_float(t)) t = default_float();
    else if (dtype_is_complex(t)) t = DT_C64;
    p->wrapped = promote_skip(p->wrapped, t);
}

static DType to_complex(DType t) { return t == DT_F64 ? DT_C128 : DT_C64; }

static DType combine(DType higher, DType lower) {
    if (higher != DT_INVALID && dtype_is_complex(higher)) return higher;
    if (lower != DT_INVALID && dtype_is_complex(lower))
        return higher != DT_INVALID && dtype_is_float(higher) ? to_complex(higher) : lower;
    if (higher != DT_INVALID && dtype_is_float(higher)) return higher;
    if (higher == DT_BOOL || (lower != DT_INVALID && dtype_is_float(lower))) return promote_skip(higher, lower);
    if (higher != DT_INVALID) return higher;
    return lower;
}

DType promote_result(const PromoteState *p) { return combine(p->dim, combine(p->zero, p->wrapped)); }

/* ---- eval helpers ---- */

Tensor *ev_tensor(ArgRef a) { return a.iv && a.iv->kind == IV_TENSOR ? a.iv->t : NULL; }

int ev_sizes(ShapeArgs *sa, const TensorMeta *m, int64_t *size, int64_t *stride) {
    for (int i = 0; i < m->ndim; i++) {
        if (sym_eval(sa->ctx, m->size[i], sa->syms, sa->nsyms, &size[i]))
            return sa_err(sa, "cannot compute result size: %s", sa->ctx->err.msg);
        if (stride && sym_eval(sa->ctx, m->stride[i], sa->syms, sa->nsyms, &stride[i]))
            return sa_err(sa, "cannot compute result stride: %s", sa->ctx->err.msg);
    }
    return 0;
}

Tensor *ev_new(ShapeArgs *sa, const TensorMeta *m) {
    int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS];
    if (m->ndim > MI_MAX_DIMS) { sa_err(sa, "rank %d exceeds %d", m->ndim, MI_MAX_DIMS); return NULL; }
    if (ev_sizes(sa, m, size, stride)) return NULL;
    DType dt = m->dtype;
    if (sa->call && sa->call->fp64) dt = dtype_is_complex(dt) ? DT_C128 : dtype_is_float(dt) ? DT_F64 : dt;
    Tensor *t = tensor_new_strided(sa->ctx, dt, m->ndim, size, stride, 0);
    if (!t) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", sa->ctx->err.msg);
        sa_err(sa, "%s", msg);
    }
    return t;
}

int ev_out_tensor(IValue *out, Tensor *t) {
    out->kind = IV_TENSOR;
    out->t = t;
    return 0;
}

int ev_out_tuple(IValue *out, Tensor *const *ts, int n) {
    memset(out, 0, sizeof *out);
    out->kind = IV_TUPLE;
    out->n = n;
    out->items = mi_xcalloc((size_t)(n ? n : 1), sizeof(IValue));
    for (int k = 0; k < n; k++)
        if (ts[k]) ev_out_tensor(&out->items[k], ts[k]);
    return 0;
}

bool ev_intlike(DType d) { return dtype_is_int(d) || d == DT_BOOL; }

int ev_shape(ShapeArgs *sa, TensorMeta *out, int *nout) {
    *nout = OP_MAX_OUTS;
    if (!sa->op || !sa->op->shape) return sa_err(sa, "no shape function");
    return sa->op->shape(sa, out, nout);
}

/* The traced size of item k of a tuple-returning node: the annotation of its getitem user
 * (a data-dependent size: unique's count, log_alpha's width for lengths given as tensors);
 * k < 0: the node's own annotation. NULL when there is none (or when not inferring from a node). */
Expr *sa_traced_size(ShapeArgs *sa, int k, int dim) {
    const Graph *g = sa->graph;
    if (!g || !sa->node) return NULL;
    if (k < 0) return sa->node->has_meta && dim < sa->node->meta.ndim ? sa->node->meta.size[dim] : NULL;
    for (int i = 0; i < g->n; i++) {
        const Node *u = g->nodes[i];
        int64_t idx;
        if (u->kind != N_CALL_FUNCTION || !u->target || strcmp(u->target, "operator.getitem") || u->nargs < 2) continue;
        if (u->args[0].kind != V_NODE || u->args[0].node != sa->node || !value_as_int(&u->args[1], &idx) || idx != k) continue;
        if (u->has_meta && dim < u->meta.ndim) return u->meta.size[dim];
    }
    return NULL;
}

static bool is_getitem(const Node *n) {
    return n && n->kind == N_CALL_FUNCTION && n->target && !strcmp(n->target, "operator.getitem") && n->nargs >= 2 &&
           n->args[0].kind == V_NODE;
}

bool op_result_item(const Node *n, int64_t idx, int *first, int *count) {
    const OpDef *op = n->op ? n->op : (n->kind == N_CALL_FUNCTION && n->target ? op_lookup(n->target) : NULL);
    *count = -1;
    if (idx < 0) return false;
    if (!op || !(op->flags & OPF_LIST_FIRST)) { *first = (int)idx; return true; }
    int len = n->nargs > 0 && (n->args[0].kind == V_LIST || n->args[0].kind == V_TUPLE) ? n->args[0].list.n : 0;
    if (idx == 0) { *first = 0; *count = len; return true; }
    *first = len + (int)idx - 1;
    return true;
}

const Node *op_getitem_source(const Node *n, int *flat) {
    int64_t i, k;
    int first, count;
    *flat = -1;
    if (!is_getitem(n) || !value_as_int(&n->args[1], &k)) return n;
    const Node *src = n->args[0].node;
    if (is_getitem(src) && value_as_int(&src->args[1], &i)) {   /* getitem(getitem(op, i), k): item k of a list */
        const Node *op = src->args[0].node;
        if (!op_result_item(op, i, &first, &count) || count < 0 || k < 0 || k >= count) return n;
        *flat = first + (int)k;
        return op;
    }
    if (!op_result_item(src, k, &first, &count) || count >= 0) return n;
    *flat = first;
    return src;
}
