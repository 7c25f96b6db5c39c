/* lowering_boxes.c — the machinery every lowering uses (Inductor's ir.py TensorBox/StorageBox
 * and lowering.py helpers): errors, origins, the define-by-run closures (IrFn kinds: storage
 * load, buffer load, reindex, constant, index_expr, to_dtype, math), TensorBoxes and their
 * realization into ComputedBuffers, argument access, and giving a node its value.
 * Declared in lowering_impl.h. */
#include "lowering/lowering_impl.h"
#include "base/symfloat.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int lw_err(Lower *L, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int lw_err(Lower *L, const Node *n, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return graph_node_err(L->ctx, L->g, n, "%s", msg);
}

void *lw_alloc(Lower *L, size_t n) { return arena_alloc(&L->m->arena, n); }

/* "aten.add.Tensor" -> "add" */
const char *lw_short_name(Lower *L, const char *target) {
    const char *a = strchr(target, '.');
    if (!a) return target;
    a++;
    const char *b = strchr(a, '.');
    return b ? arena_strndup(&L->m->arena, a, (size_t)(b - a)) : a;
}

/* ---- origins (op names folded into a kernel) ---- */
void lw_origins_add(Lower *L, const char ***o, int *n, const char *name) {
    for (int i = 0; i < *n; i++)
        if (strcmp((*o)[i], name) == 0) return;
    const char **nw = lw_alloc(L, sizeof(char *) * (*n + 1));
    if (*n) memcpy(nw, *o, sizeof(char *) * *n);
    nw[(*n)++] = name;
    *o = nw;
}
void lw_origins_of_node(Lower *L, Buffer *b, const Node *n) {
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    b->origins = o;
    b->norigins = no;
}
void lw_origins_merge(Lower *L, const char ***o, int *n, const IrTBox *t) {
    if (!t || (t->sb && t->sb->buf && !t->is_view)) return;
    for (int i = 0; i < t->norigins; i++) lw_origins_add(L, o, n, t->origins[i]);
}

/* ---- closures ---- */

IrFn *lw_fn(Lower *L, IrFnCall call, DType dt) {
    IrFn *f = lw_alloc(L, sizeof *f);
    f->call = call;
    f->dtype = dt;
    f->cost = 1;
    f->sym = L->s;
    return f;
}

/* ComputedBuffer.make_loader: a realized Pointwise that reads no buffer (a full, an arange, an
 * unrolled count over iota) and is not mutated is inlined into its readers rather than loaded
 * ("inline this op rather than generating ops.load()"): the buffer is still written where it
 * is an output, and each reader recomputes the value. Example: the nll_loss count saved for the
 * backward is its own kernel, and the loss divides by the count computed again. */
static bool inline_on_load(const IrStorage *sb) {
    const Buffer *b = sb->buf;
    if (!sb->fn0 || b->kind != BUF_COMPUTED || b->is_reduction || b->mutated || b->mutates || !b->body) return false;
    for (int i = 0; i < b->body->nops; i++)
        if (b->body->ops[i].kind == LOP_LOAD || b->body->ops[i].kind == LOP_BUCKETIZE) return false;   /* num_reads() */
    return true;
}

/* Run sb's inner function fn (its pending one or, realized, the one it had) as the function
 * that captured its own inputs' loaders when sb was made (IrModule.capture = its born). */
static IrVal run_captured(IrStorage *sb, const IrFn *fn, OpsHandler *h, Expr *const *idx) {
    IrModule *m = sb->m;
    if (!m) return fn->call(fn, h, idx);
    int cap = m->capture;
    m->capture = sb->born + 1;
    IrVal v = fn->call(fn, h, idx);
    m->capture = cap;
    return v;
}

/* A storage's loader. Inductor's readers capture x.make_loader() when they are lowered: a
 * pending value's inner_fn, which they keep calling after the value is realized. So a storage
 * realized at or after the birth of the function now running (IrModule.capture, set by the
 * body being recorded and by each pending storage run on the way) is computed inline, as that
 * function captured it; one realized before is a load of its buffer. Example: var_mean's
 * backward sums neg(tangent * rsqrt) before the mm realizes tangent * rsqrt: the sum reads the
 * tangent (one kernel with the rsqrt), the later sum of the product reads its buffer. */
static IrVal call_storage(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrStorage *sb = f->sb;
    IrModule *m = sb->m;
    if (sb->buf && sb->fn0 && m && m->capture && sb->buf->id + 1 >= m->capture)
        return run_captured(sb, sb->fn0, h, idx);
    if (sb->buf && inline_on_load(sb) && !(m && m->probe_loads)) return run_captured(sb, sb->fn0, h, idx);
    if (sb->buf) {
        IrFn tmp = {.buf = sb->buf, .sym = f->sym};
        return lw_call_buf_load(&tmp, h, idx);
    }
    return run_captured(sb, sb->fn, h, idx);
}

SymCtx *lw_fn_sym(const IrFn *f) { return f->sym; }

IrVal lw_call_buf_load(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    const Layout *l = f->view ? f->view : &f->buf->layout;
    return h->load(h, f->buf, layout_index(f->sym, l, idx));
}

/* What calling f costs a reader made now, for the "too large" realization rule: a view costs
 * what it looks at, and a storage realized by now is one load for a reader made after it
 * (call_storage: a reader born after the realization loads the buffer), whatever it cost while
 * pending, unless it is inlined on load. The cost a loader got when made stays right for the
 * readers made before the realization, which inline it. Example: an ArcFace loss returns the
 * unrolled amax and the log of the unrolled sum, each realized at its node: log_softmax's sub
 * made after them reads two loads, not the 2 000 calls of their pending functions, so it stays
 * inline in the gather of the target class (Inductor's kernel recomputes it there). */
static IrVal call_reindex(const IrFn *f, OpsHandler *h, Expr *const *idx);
int lw_fn_cost(const IrFn *f) {
    while (f->call == call_reindex && f->na == 1) f = f->a[0];
    if (f->call == call_storage && f->sb->buf)
        return inline_on_load(f->sb) ? f->sb->fn0->cost : 1;
    return f->cost;
}

static const IrFn *mk_storage_loader(Lower *L, IrStorage *sb) {
    IrFn *f = lw_fn(L, call_storage, sb->dtype);
    f->sb = sb;
    f->cost = sb->buf ? 1 : sb->fn->cost;
    return f;
}

static IrVal call_reindex(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = lw_fn_sym(f);
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

Expr *lw_var(Lower *L, int k) {
    char nm[16];
    snprintf(nm, sizeof nm, "_v%d", k);
    return sym_symbol(L->s, nm);
}

/* A reindexing view: out index (nin dims) -> inner index (nmap exprs over _v0.._v(nin-1)). */
const IrFn *lw_reindex(Lower *L, const IrFn *inner, int nin, Expr **map, int nmap) {
    IrFn *f = lw_fn(L, call_reindex, inner->dtype);
    f->a[0] = inner;
    f->na = 1;
    f->nin = nin;
    f->nmap = nmap;
    f->map = lw_alloc(L, sizeof(Expr *) * (nmap + 1));
    if (nmap) memcpy(f->map, map, sizeof(Expr *) * nmap);
    f->cost = lw_fn_cost(inner);
    return f;
}

static IrVal call_const(const IrFn *f, OpsHandler *h, Expr *const *idx) { return h->constant(h, f->c, f->dtype); }
const IrFn *lw_const(Lower *L, double v, DType dt) {
    IrFn *f = lw_fn(L, call_const, dt);
    f->c = v;
    return f;
}

static IrVal call_index_expr(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    SymCtx *s = lw_fn_sym(f);
    const char *names[MI_MAX_DIMS];
    for (int k = 0; k < f->nin; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_v%d", k);
        names[k] = sym_symbol(s, nm)->name;
    }
    Expr *e = f->nin ? sym_subst(s, f->e, names, (Expr **)idx, f->nin) : f->e;
    return h->index_expr(h, e, f->dtype);
}
const IrFn *lw_index_expr(Lower *L, Expr *e, int nin, DType dt) {
    IrFn *f = lw_fn(L, call_index_expr, dt);
    f->e = e;
    f->nin = nin;
    return f;
}

static IrVal call_to_dtype(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrVal v = f->a[0]->call(f->a[0], h, idx);
    return h->to_dtype(h, v, f->dtype, f->a[0]->dtype);
}
const IrFn *lw_to_dtype(Lower *L, const IrFn *a, DType dt) {
    if (a->dtype == dt) return a;
    IrFn *f = lw_fn(L, call_to_dtype, dt);
    f->a[0] = a;
    f->na = 1;
    f->cost = lw_cost_add(lw_fn_cost(a), 1);
    return f;
}

static IrVal call_math(const IrFn *f, OpsHandler *h, Expr *const *idx) {
    IrVal v[4];
    for (int i = 0; i < f->na; i++) v[i] = f->a[i]->call(f->a[i], h, idx);
    return h->math(h, (IrMathOp)f->op, v, f->dtype);
}
const IrFn *lw_math(Lower *L, IrMathOp op, DType dt, const IrFn *a, const IrFn *b, const IrFn *c) {
    IrFn *f = lw_fn(L, call_math, dt);
    f->op = op;
    f->a[0] = a; f->a[1] = b; f->a[2] = c;
    f->na = ir_math_arity(op);
    for (int i = 0; i < f->na; i++) f->cost = lw_cost_add(f->cost, lw_fn_cost(f->a[i]));
    return f;
}
const IrFn *lw_math4(Lower *L, IrMathOp op, DType dt, const IrFn *a, const IrFn *b, const IrFn *c, const IrFn *d) {
    IrFn *f = lw_fn(L, call_math, dt);
    f->op = op;
    f->a[0] = a; f->a[1] = b; f->a[2] = c; f->a[3] = d;
    f->na = ir_math_arity(op);
    for (int i = 0; i < f->na; i++) f->cost = lw_cost_add(f->cost, lw_fn_cost(f->a[i]));
    return f;
}

/* ---- tensor boxes ---- */

IrTBox *lw_tbox_new(Lower *L, DType dt, int ndim, Expr **size, const IrFn *loader) {
    IrTBox *t = lw_alloc(L, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    t->size = lw_alloc(L, sizeof(Expr *) * (ndim + 1));
    if (ndim) memcpy(t->size, size, sizeof(Expr *) * ndim);
    t->loader = loader;
    return t;
}

IrTBox *lw_tbox_of_storage(Lower *L, IrStorage *sb) {
    IrTBox *t = lw_tbox_new(L, sb->dtype, sb->ndim, sb->size, mk_storage_loader(L, sb));
    t->sb = sb;
    t->origins = sb->origins;
    t->norigins = sb->norigins;
    return t;
}

IrTBox *lw_tbox_of_buffer(Lower *L, Buffer *b) {
    IrStorage *sb = lw_alloc(L, sizeof *sb);
    sb->buf = b;
    sb->dtype = b->layout.dtype;
    sb->ndim = b->layout.ndim;
    sb->size = b->layout.size;
    sb->origins = b->origins;
    sb->norigins = b->norigins;
    return lw_tbox_of_storage(L, sb);
}

Buffer *lw_new_buffer(Lower *L, BufKind k, const Layout *l) {
    Buffer *b = ir_new_buffer(L->m, k, l);
    b->origin = b->producer = L->cur;
    return b;
}

void lw_loop_order(const Layout *l, int *order) { ir_layout_loop_order(l, order); }

/* Realize a pending storage into a ComputedBuffer (layout: contiguous, or *fixed). */
Buffer *lw_realize(Lower *L, IrStorage *sb, const Layout *fixed) {
    if (sb->buf) return sb->buf;
    Layout l = fixed ? *fixed : layout_contiguous(L->m, sb->dtype, L->dev, sb->ndim, sb->size);
    if (!fixed && L->cur && L->cur->has_meta) l.device = L->cur->meta.device;
    Buffer *b = lw_new_buffer(L, BUF_COMPUTED, &l);
    b->born = sb->born;                         /* its body inlines what sb's function captured */
    if (sb->node) b->producer = sb->node;       /* provenance: the node that computed the value */
    b->origins = sb->origins;
    b->norigins = sb->norigins;
    int order[MI_MAX_DIMS];
    lw_loop_order(&l, order);
    b->body = ir_trace_body(L->m, b, sb->fn, sb->ndim, sb->size, order, 0, NULL, RED_SUM, 0);
    sb->buf = b;
    sb->fn0 = sb->fn;
    sb->fn = NULL;
    return b;
}

IrStorage *lw_storage_new(Lower *L, const IrFn *fn, DType dt, int ndim, Expr **size,
                              const char **origins, int norigins) {
    IrStorage *sb = lw_alloc(L, sizeof *sb);
    sb->fn = fn;
    sb->dtype = dt;
    sb->ndim = ndim;
    sb->size = lw_alloc(L, sizeof(Expr *) * (ndim + 1));
    if (ndim) memcpy(sb->size, size, sizeof(Expr *) * ndim);
    sb->origins = origins;
    sb->norigins = norigins;
    sb->node = L->cur;
    sb->m = L->m;
    sb->born = L->m->nbufs;
    return sb;
}

/* A TensorBox as a buffer usable by an extern kernel or as an output: strided view of a
 * realized buffer when possible, else realized into a fresh contiguous buffer. A view of a
 * pending value realizes that value first, then is read through it (ExternKernel.realize_input:
 * x.realize() on the view, then convert_to_reinterpret_view, else copy_input): the transpose
 * of where(...) handed to mm is a ReinterpretView of where's buffer, which sum(where) reads too. */
/* convert_to_reinterpret_view's first step on the buffer under a view: its FlexibleLayout is
 * frozen as it stands (contiguous), or channels-last when the producing node's eager value is
 * channels-last contiguous (freeze_layout_with_same_order) -- whether or not the view then
 * turns out to be strided. Example: mm of reshape(permute(pow)) freezes pow's buffer
 * contiguous and copies the non-strided view; pow is not laid out after its own read. */
void lw_freeze_under_view(Lower *L, Buffer *b) {
    if (b->layout.fixed || b->kind != BUF_COMPUTED || b->mutates) return;
    const Node *o = b->producer;
    int nd = b->layout.ndim;
    if (o && o->has_meta && o->meta.ndim == nd && (nd == 4 || nd == 5)) {
        static const int cl4[4] = {3, 0, 2, 1}, cl5[5] = {4, 0, 3, 2, 1};
        Expr *st[5];
        int64_t one;
        ir_strides_for_order(L->s, o->meta.size, nd, nd == 4 ? cl4 : cl5, st);
        bool cl = true;
        for (int d = 0; d < nd; d++)
            cl &= (sym_is_int(o->meta.size[d], &one) && one == 1) || o->meta.stride[d] == st[d];
        bool contig = true;
        Layout c = layout_contiguous(L->m, b->layout.dtype, b->layout.device, nd, b->layout.size);
        for (int d = 0; d < nd; d++) contig &= (sym_is_int(o->meta.size[d], &one) && one == 1) || o->meta.stride[d] == c.stride[d];
        if (cl && !contig) {
            ir_strides_for_order(L->s, b->layout.size, nd, nd == 4 ? cl4 : cl5, st);
            ir_relayout(L->m, b, st);
        }
    }
    b->layout.fixed = true;
}

/* ExternKernel.convert_to_reinterpret_view of view t: its index from x.make_indexer(), the
 * view chain's index arithmetic down to the buffer, so a realized buffer that reads nothing
 * (a causal mask's where, which its readers' loaders compute inline: inline_on_load) is still
 * the buffer under the view. True with *b and *view the ReinterpretView when that index is
 * strided (ir_probe_strided). Example: unsqueeze(unsqueeze(where)) returned and handed to
 * SDPA as attn_mask: reinterpret_tensor(buf, (1, 1, 8, 8), (0, 0, 8, 1)), no copy kernel. */
bool lw_probe_view(Lower *L, IrTBox *t, Buffer **b, Layout *view) {
    bool probing = L->m->probe_loads;
    L->m->probe_loads = true;
    bool ok = ir_probe_strided(L->m, t->loader, t->ndim, t->size, b, view);
    L->m->probe_loads = probing;
    return ok;
}

Buffer *lw_as_strided(Lower *L, IrTBox *t, Layout *view) {
    IrStorage *base = t->is_view ? t->view_of : t->sb;
    if (base && !base->buf && base->fn) lw_realize(L, base, NULL);
    if (t->is_view && base && base->buf) lw_freeze_under_view(L, base->buf);
    Buffer *b;
    if (!t->is_view && t->sb && t->sb->buf) {
        /* ExternKernel.realize_input of a StorageBox: the buffer itself, whatever its readers'
         * loaders do (a realized constant inlines into them: inline_on_load). Example: an RNN's
         * zeros state read by two cells' addmm is one buffer, realized by the first addmm */
        b = t->sb->buf;
        b->layout.fixed = true;
        *view = b->layout;
        return b;
    }
    if (lw_probe_view(L, t, &b, view)) {
        b->layout.fixed = true;   /* a ReinterpretView freezes the layout it reads through */
        return b;
    }
    IrStorage *sb = lw_storage_new(L, t->loader, t->dtype, t->ndim, t->size, t->origins, t->norigins);
    b = lw_realize(L, sb, NULL);
    b->layout.fixed = true;
    *view = b->layout;
    return b;
}

/* ---- argument helpers ---- */

LVal *lw_node_val(Lower *L, const Node *n) {
    int i = graph_index_of(L->g, n);
    return i >= 0 ? &L->vals[i] : NULL;
}

IrTBox *lw_arg_tbox(Lower *L, const Node *n, int i) {
    const Value *v = i >= 0 && i < n->nargs ? &n->args[i] : NULL;
    if (!v || v->kind != V_NODE) return NULL;
    LVal *lv = lw_node_val(L, v->node);
    return lv && lv->kind == LV_TBOX ? lv->t : NULL;
}

const Value *lw_arg_or_kw(const Node *n, int i, const char *kw) {
    if (i >= 0 && i < n->nargs) return &n->args[i];
    const Kwarg *k = node_kwarg(n, kw);
    return k ? &k->v : NULL;
}

bool lw_arg_int(const Node *n, int i, const char *kw, int64_t *out) {
    const Value *v = lw_arg_or_kw(n, i, kw);
    return v && value_as_int(v, out);
}

Expr *lw_value_expr(Lower *L, const Value *v) {
    int64_t x;
    if (value_as_int(v, &x)) return sym_int(L->s, x);
    if (v->kind == V_SYM) return v->sym;
    if (v->kind == V_NODE && v->node->is_sym) return v->node->sym_val;
    if (v->kind == V_NODE) {
        LVal *lv = lw_node_val(L, v->node);
        if (lv && lv->kind == LV_SYM) return lv->sym;
    }
    return NULL;
}

/* int list argument (dims) into out; returns count or -1 */
int lw_int_list(const Value *v, int64_t *out, int max) {
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

const TensorMeta *lw_out_meta(const Node *n) { return n->has_meta ? &n->meta : NULL; }

/* The meta of item k of tuple-valued node n: the annotation of a getitem(n, k) user (the FX
 * graph annotates the items, not the tuple). NULL when no annotated getitem uses item k. */
const TensorMeta *lw_item_meta(Lower *L, const Node *n, int k) {
    int i = graph_index_of(L->g, n);
    for (int u = 0; i >= 0 && u < L->nusers[i]; u++) {
        const Node *g = L->users[i][u];
        int64_t idx;
        if (g->kind == N_CALL_FUNCTION && g->target && !strcmp(g->target, "operator.getitem") && g->nargs == 2 &&
            value_as_int(&g->args[1], &idx) && idx == k && g->has_meta)
            return &g->meta;
    }
    return NULL;
}

/* An extern kernel's result layout: meta's strides when meta has ndim dims of these sizes (the
 * fake tensor's layout, as FallbackKernel / MultiOutput take it: the CPU flash attention's
 * logsumexp is [B, H, L] with strides (L*H, 1, H)), else contiguous. Fixed. */
Layout lw_extern_layout(Lower *L, const TensorMeta *meta, DType dt, Device dev, int ndim, Expr **size) {
    Layout l = layout_contiguous(L->m, dt, dev, ndim, size);
    bool same = meta && meta->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = meta->size[d] == size[d] && meta->stride[d];
    for (int d = 0; same && d < ndim; d++) l.stride[d] = meta->stride[d];
    l.fixed = true;
    return l;
}

/* A loader for arg i broadcast to (ndim, size), converted to dt; scalars become constants. */
/* loader f of a tensor of shape (tnd, tsize) broadcast to (ndim, size); NULL when it cannot be */
const IrFn *lw_broadcast(Lower *L, const IrFn *f, int tnd, Expr **tsize, int ndim, Expr **size) {
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
            map[dd] = lw_var(L, od);
        }
    }
    return lw_reindex(L, f, ndim, map, tnd);
}

/* broadcast_tensors expands an operand whose sizes differ from the target's (another rank,
 * or a 1 against a non-1), and ExpandView.create over a realized buffer calls
 * as_storage_and_layout(x) with freeze=True: the buffer's layout is fixed (contiguous) from
 * then on, before decide_layout could pick a fill order from its reads. Example: the decoder
 * layer's var_mean mean [2, 6, 1] broadcast into sub(x, mean) stays contiguous, while its m2,
 * read only by pointwise ops of the same shape, takes (1, 2, 12) from the strides it reads. */
void lw_freeze_on_expand(Lower *L, IrTBox *t, int ndim, Expr *const *size) {
    (void)L;
    if (t->is_view || !t->sb || !t->sb->buf || t->sb->buf->kind != BUF_COMPUTED) return;
    bool expand = t->ndim != ndim;
    for (int d = 0; !expand && d < ndim; d++) {
        int64_t a, b;
        bool a1 = sym_is_int(t->size[d], &a) && a == 1, b1 = sym_is_int(size[d], &b) && b == 1;
        expand = a1 != b1;
    }
    if (expand) t->sb->buf->layout.fixed = true;
}

/* The loader of argument i broadcast to `size`, in dtype dt: a number is a constant, a SymInt
 * (a placeholder Sym(s0) or a sym expression node) Inductor's IndexingConstant (promote_constants:
 * ops.index_expr(s0, dtype) expanded to the output), a tensor its loader broadcast.
 * Example: div(arange(n).float(), n) reads ops.index_expr(s77, float32) as its divisor. */
/* SymFloat pieces for symfloat_build: integer parts ops.index_expr(e, float64), constants and
 * + - * / in float64, as Inductor's CppPrinter prints the expression into the kernel
 * (static_cast<double>(8L*ks0*ks1) / static_cast<double>(8L)) */
typedef struct { Lower *L; int ndim; } SfB;
static const void *sf_from_int(void *ud, Expr *e) { SfB *b = ud; return lw_index_expr(b->L, e, b->ndim, DT_F64); }
static const void *sf_const(void *ud, double v) { SfB *b = ud; return lw_const(b->L, v, DT_F64); }
static const void *sf_bin(void *ud, char op, const void *x, const void *y) {
    SfB *b = ud;
    IrMathOp o = op == '+' ? IOP_ADD : op == '-' ? IOP_SUB : op == '*' ? IOP_MUL : IOP_TRUEDIV;
    return lw_math(b->L, o, DT_F64, x, y, NULL);
}

/* A SymFloat node's value ("Sym(FloatTrueDiv(IntTrueDiv(8*s0, 8), ...))") as a loader of ndim
 * index variables in dtype dt: its expression computed in float64 inside the kernel, then
 * converted (Inductor: the sympy expression through ops.index_expr, CppPrinter's doubles). */
static const IrFn *symfloat_loader(Lower *L, const Node *src, int ndim, DType dt) {
    SfB b = {L, ndim};
    SymFloatBuilder sb = {&b, sf_from_int, sf_const, sf_bin};
    const IrFn *f = symfloat_build(L->ctx, L->s, src->symfloat, &sb);
    if (!f) {
        char why[512];
        snprintf(why, sizeof why, "%.500s", L->ctx->err.msg);
        lw_err(L, src, "SymFloat '%s', Sym(%s): %s", src->name, src->symfloat, why);
        return NULL;
    }
    return lw_to_dtype(L, f, dt);
}

const IrFn *lw_scalar_loader(Lower *L, const Node *user, const Value *v, int ndim, DType dt) {
    double d;
    if (v->kind != V_NODE && value_as_double(v, &d)) return lw_const(L, d, dt);
    if (v->kind == V_NODE && v->node->symfloat) return symfloat_loader(L, v->node, ndim, dt);
    if (v->kind != V_SYM && v->kind != V_NODE) return NULL;
    Expr *e = lw_value_expr(L, v);
    if (e) return lw_index_expr(L, e, ndim, dt);
    if (v->kind == V_NODE) lw_err(L, user, "argument '%s' is not a number", v->node->name);
    return NULL;
}

const IrFn *lw_arg_loader(Lower *L, const Node *n, int i, int ndim, Expr **size, DType dt) {
    const Value *v = &n->args[i];
    if (v->kind != V_NODE || v->node->symfloat || !lw_arg_tbox(L, n, i)) return lw_scalar_loader(L, n, v, ndim, dt);
    IrTBox *t = lw_arg_tbox(L, n, i);
    if (!t) return NULL;
    lw_mark_reuse(L, t, ndim, size);   /* broadcast_tensors -> expand -> mark_reuse */
    lw_freeze_on_expand(L, t, ndim, size);
    const IrFn *f = lw_broadcast(L, t->loader, t->ndim, t->size, ndim, size);
    return f ? lw_to_dtype(L, f, dt) : NULL;
}

DType lw_arg_dtype(Lower *L, const Node *n, int i) {
    const Value *v = i < n->nargs ? &n->args[i] : NULL;
    if (!v) return DT_INVALID;
    if (v->kind == V_NODE && v->node->symfloat) return DT_F32;   /* a Python float */
    if (v->kind == V_NODE) {
        IrTBox *t = lw_arg_tbox(L, n, i);
        return t ? t->dtype : lw_value_expr(L, v) ? DT_I64 : DT_INVALID;
    }
    if (v->kind == V_SYM) return DT_I64;
    if (v->kind == V_FLOAT) return DT_F32;
    if (v->kind == V_BOOL) return DT_BOOL;
    if (v->kind == V_INT) return DT_I64;
    return DT_INVALID;
}

/* Give node n a new pending storage computing fn over its meta's shape (lw_after_node decides
 * whether it is realized). */
int lw_set_pending(Lower *L, const Node *n, const IrFn *fn, DType dt, const char **o, int no) {
    const TensorMeta *m = lw_out_meta(n);
    IrTBox *t = lw_tbox_of_storage(L, lw_storage_new(L, fn, dt, m->ndim, m->size, o, no));
    LVal *lv = lw_node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = t;
    return 0;
}

/* Give node n the pending pointwise value fn (shape from its meta). */
int lw_set_pointwise(Lower *L, const Node *n, const IrFn *fn, DType dt, int nin_args) {
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    for (int i = 0; i < nin_args && i < n->nargs; i++) lw_origins_merge(L, &o, &no, lw_arg_tbox(L, n, i));
    return lw_set_pending(L, n, fn, dt, o, no);
}

int lw_set_view(Lower *L, const Node *n, IrTBox *src, const IrFn *fn, int ndim, Expr **size) {
    /* a view of a realized buffer is a ReinterpretView in Inductor (PermuteView.create, View.create,
     * SliceView.create, ExpandView.create call as_storage_and_layout(x, freeze=True)): the
     * buffer's layout is fixed from here on */
    if (!src->is_view && src->sb && src->sb->buf) src->sb->buf->layout.fixed = true;
    IrTBox *t = lw_tbox_new(L, src->dtype, ndim, size, fn);
    t->is_view = true;
    t->view_of = src->is_view ? src->view_of : src->sb;
    t->generic = src->is_view ? src->generic : !(src->sb && src->sb->buf);
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    lw_origins_merge(L, &o, &no, src);
    t->origins = o;
    t->norigins = no;
    LVal *lv = lw_node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = t;
    return 0;
}

int lw_set_tbox(Lower *L, const Node *n, IrTBox *t) {
    LVal *lv = lw_node_val(L, n);
    lv->kind = LV_TBOX;
    lv->t = t;
    return 0;
}

int lw_set_tuple(Lower *L, const Node *n, IrTBox **items, int k) {
    LVal *lv = lw_node_val(L, n);
    lv->kind = LV_TUPLE;
    lv->items = lw_alloc(L, sizeof(IrTBox *) * k);
    if (k) memcpy(lv->items, items, sizeof(IrTBox *) * k);
    lv->n = k;
    return 0;
}

/* A pending pointwise TensorBox (not realized) computing f over `size`. */
IrTBox *lw_pw_box(Lower *L, const IrFn *f, DType dt, int ndim, Expr **size, const char *oname) {
    const char **o = NULL;
    int no = 0;
    lw_origins_add(L, &o, &no, oname);
    return lw_tbox_of_storage(L, lw_storage_new(L, f, dt, ndim, size, o, no));
}

/* max.dim / min.dim: (values, indices) as two reductions over the same row (they fuse). */
double lw_arg_num(const Node *n, int i, const char *kw, double dflt) {
    const Value *v = lw_arg_or_kw(n, i, kw);
    double d;
    return v && v->kind != V_NONE && value_as_double(v, &d) ? d : dflt;
}

bool lw_arg_symbolic(const Node *n, int i, const char *kw) {
    const Value *v = lw_arg_or_kw(n, i, kw);
    return v && (v->kind == V_NODE || v->kind == V_SYM);
}

const IrFn *lw_num_loader(Lower *L, const Node *n, int i, const char *kw, double dflt, int ndim, DType dt) {
    if (lw_arg_symbolic(n, i, kw)) return lw_scalar_loader(L, n, lw_arg_or_kw(n, i, kw), ndim, dt);
    return lw_const(L, lw_arg_num(n, i, kw, dflt), dt);
}

int lw_extern_arg(Lower *L, IrTBox *t, ExternArg *a) {
    a->buf = lw_as_strided(L, t, &a->view);
    return 0;
}

/* mm / addmm / bmm in a dtype the extern kernels do not take (f64): a sum reduction over K of
 * a[.., i, k] * b[.., k, j] (+ bias), as Inductor lowers small matmuls. */
Layout lw_layout_copy(Lower *L, const Layout *src) {
    Layout l = layout_contiguous(L->m, src->dtype, src->device, src->ndim, src->size);
    for (int d = 0; d < l.ndim; d++) l.stride[d] = src->stride[d];
    l.offset = src->offset;
    l.fixed = true;
    return l;
}
