/* interp.c — the reference interpreter: runs a Graph node by node with the registry's eval
 * functions on strided CPU tensors. It binds size symbols (s77) from SymInt inputs and from
 * the shapes of tensor inputs, checks inputs against the placeholders' annotations, frees
 * every intermediate after its last use, lets in-place ops mutate the caller's input tensors
 * as PyTorch does, and returns the output tuple (None entries allowed). Higher-order ops
 * (cond) call back into interp_run for their subgraphs. */
#include "ops/interp.h"
#include "base/symbool.h"
#include "base/symfloat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Interp {
    MiCtx *ctx;
    const Graph *g;
    IValue *vals;            /* one per node, by position */
    int *last_use;           /* position of the last node that reads each node */
    const Node **keys;       /* pointer -> position hash */
    int *slots;
    int cap;
    SymBinding *syms;
    int nsyms, symcap;
    bool fp64;               /* float64 reference run (interp_run_fp64) */
    bool bcast;              /* interp_run_sub_bcast: placeholders take tensors of any shape */
} Interp;

/* ---- node positions ---- */

static size_t ptr_hash(const void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull); }

static void map_build(Interp *in) {
    int cap = 16;
    while (cap < 2 * in->g->n) cap *= 2;
    in->cap = cap;
    in->keys = mi_xcalloc((size_t)cap, sizeof *in->keys);
    in->slots = mi_xcalloc((size_t)cap, sizeof *in->slots);
    for (int i = 0; i < in->g->n; i++) {
        size_t h = ptr_hash(in->g->nodes[i]) & (size_t)(cap - 1);
        while (in->keys[h]) h = (h + 1) & (size_t)(cap - 1);
        in->keys[h] = in->g->nodes[i];
        in->slots[h] = i;
    }
}

static int pos_of(const Interp *in, const Node *n) {
    size_t h = ptr_hash(n) & (size_t)(in->cap - 1);
    while (in->keys[h]) {
        if (in->keys[h] == n) return in->slots[h];
        h = (h + 1) & (size_t)(in->cap - 1);
    }
    return -1;
}

typedef struct { Interp *in; int user; } UseCtx;

static void note_use(Node *n, void *ud) {
    UseCtx *u = ud;
    int p = pos_of(u->in, n);
    if (p >= 0 && u->in->last_use[p] < u->user) u->in->last_use[p] = u->user;
}

static void compute_last_use(Interp *in) {
    in->last_use = mi_xcalloc((size_t)(in->g->n ? in->g->n : 1), sizeof *in->last_use);
    for (int i = 0; i < in->g->n; i++) in->last_use[i] = -1;
    for (int i = 0; i < in->g->n; i++) {
        const Node *n = in->g->nodes[i];
        UseCtx u = {in, i};
        for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], note_use, &u);
        for (int k = 0; k < n->nkwargs; k++) value_for_each_node(&n->kwargs[k].v, note_use, &u);
    }
}

/* ---- symbols ---- */

static const SymBinding *sym_find(const Interp *in, const char *name) {
    for (int i = 0; i < in->nsyms; i++)
        if (in->syms[i].name == name || !strcmp(in->syms[i].name, name)) return &in->syms[i];
    return NULL;
}

static int sym_bind(Interp *in, const Node *where, const char *name, int64_t v) {
    const SymBinding *b = sym_find(in, name);
    if (b) {
        if (b->value != v)
            return mi_err(in->ctx, in->g->source, where ? where->src_line : 0, 0,
                          "input '%s': size symbol %s is %lld here but %lld elsewhere",
                          where ? where->name : "?", name, (long long)v, (long long)b->value);
        return 0;
    }
    if (in->nsyms == in->symcap) {
        in->symcap = in->symcap ? 2 * in->symcap : 8;
        in->syms = mi_xrealloc(in->syms, (size_t)in->symcap * sizeof *in->syms);
    }
    in->syms[in->nsyms].name = name;
    in->syms[in->nsyms].value = v;
    in->nsyms++;
    return 0;
}

/* Check a tensor input against its placeholder's annotation; bind plain symbols. */
static int bind_tensor_input(Interp *in, const Node *ph, const Tensor *t, int k) {
    if (!ph->has_meta || in->bcast) return 0;
    const TensorMeta *m = &ph->meta;
    char want[256], got[256];
    DType want_dt = m->dtype;
    if (in->fp64 && want_dt != DT_INVALID)
        want_dt = dtype_is_complex(want_dt) ? DT_C128 : dtype_is_float(want_dt) ? DT_F64 : want_dt;
    if (m->ndim != t->ndim || (want_dt != DT_INVALID && want_dt != t->dtype)) {
        meta_str(m, want, sizeof want);
        return mi_err(in->ctx, in->g->source, ph->src_line, 0, "input %d ('%s'): expected %s, got %s", k, ph->name, want,
                      tensor_type_str(t, got, sizeof got));
    }
    for (int i = 0; i < m->ndim; i++) {
        const Expr *e = m->size[i];
        int64_t v;
        if (e->kind == EX_SYM) {
            if (sym_bind(in, ph, e->name, t->size[i])) return -1;
        } else if (sym_is_int(e, &v) && v != t->size[i]) {
            meta_str(m, want, sizeof want);
            return mi_err(in->ctx, in->g->source, ph->src_line, 0, "input %d ('%s'): expected %s, got %s", k, ph->name, want,
                          tensor_type_str(t, got, sizeof got));
        }
    }
    return 0;
}

/* ---- values ---- */

void ivalue_copy(IValue *dst, const IValue *src) {
    *dst = *src;
    if (src->kind == IV_TENSOR) tensor_ref(src->t);
    if (src->kind == IV_TUPLE) {
        dst->items = mi_xcalloc((size_t)(src->n ? src->n : 1), sizeof(IValue));
        for (int i = 0; i < src->n; i++) ivalue_copy(&dst->items[i], &src->items[i]);
    }
}

static bool has_nodes(const Value *v) {
    if (v->kind == V_NODE) return true;
    if (v->kind == V_LIST || v->kind == V_TUPLE)
        for (int i = 0; i < v->list.n; i++) if (has_nodes(&v->list.items[i])) return true;
    return false;
}

int interp_resolve_arg(MiCtx *ctx, const Value *v, IValue *out, bool nested, const SymBinding *syms, int nsyms,
                       InterpNodeValueFn node_value, void *env) {
    memset(out, 0, sizeof *out);
    out->kind = IV_NONE;
    switch (v->kind) {
    case V_NODE: return node_value(env, v->node, out);
    case V_LIST: case V_TUPLE:
        if (!has_nodes(v) && !nested) return 0;
        out->kind = IV_TUPLE;
        out->n = v->list.n;
        out->items = mi_xcalloc((size_t)(v->list.n ? v->list.n : 1), sizeof(IValue));
        for (int i = 0; i < v->list.n; i++)
            if (interp_resolve_arg(ctx, &v->list.items[i], &out->items[i], true, syms, nsyms, node_value, env)) {
                ivalue_clear(out);
                return -1;
            }
        return 0;
    case V_INT: if (nested) { out->kind = IV_INT; out->i = v->i; } return 0;
    case V_BOOL: if (nested) { out->kind = IV_BOOL; out->i = v->b; } return 0;
    case V_FLOAT: if (nested) { out->kind = IV_FLOAT; out->f = v->f; } return 0;
    case V_SYM:
        if (nested) {
            out->kind = IV_INT;
            if (sym_eval(ctx, v->sym, syms, nsyms, &out->i)) return -1;
        }
        return 0;
    default: return 0;
    }
}

/* A node reference's value: the interpreter's value of that node (a new reference). */
typedef struct NodeEnv { Interp *in; const Node *user; } NodeEnv;
static int interp_node_value(void *env, const Node *ref, IValue *out) {
    const NodeEnv *e = env;
    int p = pos_of(e->in, ref);
    if (p < 0)
        return mi_err(e->in->ctx, e->in->g->source, e->user->src_line, 0, "node '%s' uses '%s', which is not in the graph",
                      e->user->name, ref->name);
    ivalue_copy(out, &e->in->vals[p]);
    return 0;
}

static int resolve(Interp *in, const Node *user, const Value *v, IValue *out, bool nested) {
    NodeEnv e = {in, user};
    return interp_resolve_arg(in->ctx, v, out, nested, in->syms, in->nsyms, interp_node_value, &e);
}

/* The node whose tensor object n's value is: through in-place ops (their result is self).
 * Example: a = add_(c, 1); t = transpose_(a, 0, 1) -> c for a, t and c. */
static const Node *same_object_root(const Node *n) {
    for (int hops = 0; hops < 1 << 16 && n->kind == N_CALL_FUNCTION && n->op && (n->op->flags & OPF_INPLACE) &&
                       n->nargs && n->args[0].kind == V_NODE; hops++)
        n = n->args[0].node;
    return n;
}

static int run_call(Interp *in, int i) {
    const Node *n = in->g->nodes[i];
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    if (!op || !op->eval)
        return op_unsupported_err(in->ctx, in->g, n);
    IValue *argv = mi_xcalloc((size_t)(n->nargs + n->nkwargs + 1), sizeof(IValue));
    IValue *kwargv = argv + n->nargs;
    int rc = 0;
    for (int a = 0; a < n->nargs && rc == 0; a++) rc = resolve(in, n, &n->args[a], &argv[a], false);
    for (int k = 0; k < n->nkwargs && rc == 0; k++) rc = resolve(in, n, &n->kwargs[k].v, &kwargv[k], false);
    if (rc == 0) {
        OpCall call = {
            .ctx = in->ctx, .node = n, .graph = in->g, .args = n->args, .nargs = n->nargs, .argv = argv,
            .kwargs = n->kwargs, .nkwargs = n->nkwargs, .kwargv = kwargv, .syms = in->syms, .nsyms = in->nsyms,
            .interp = in, .op = op, .fp64 = in->fp64,
        };
        rc = op->eval(&call, &in->vals[i]);
    }
    for (int a = 0; a < n->nargs + n->nkwargs; a++) ivalue_clear(&argv[a]);
    free(argv);
    /* an in-place view op (transpose_, squeeze_, ...) changes self's sizes and strides: later
     * readers of self, or of any in-place result that is self, see its result, as they see
     * the mutated Python tensor */
    if (rc == 0 && (op->flags & OPF_VIEW) && (op->flags & OPF_INPLACE) && in->vals[i].kind == IV_TENSOR) {
        const Node *root = same_object_root(n);
        for (int k = 0; k < i; k++)
            if (in->vals[k].kind == IV_TENSOR && same_object_root(in->g->nodes[k]) == root) {
                ivalue_clear(&in->vals[k]);
                ivalue_copy(&in->vals[k], &in->vals[i]);
            }
    }
    /* a SymInt-valued node defines its symbol for later size expressions */
    if (rc == 0 && n->is_sym && n->sym_val && n->sym_val->kind == EX_SYM && in->vals[i].kind == IV_INT)
        rc = sym_bind(in, n, n->sym_val->name, in->vals[i].i);
    /* a SymBool node ("Sym(s0 >= 2)"): its annotation, evaluated with the bound sizes, must
     * agree with the computed value (skipped when it names a symbol not bound yet) */
    if (rc == 0 && n->symbool && (in->vals[i].kind == IV_BOOL || in->vals[i].kind == IV_INT)) {
        MiTry tentative = mi_try(in->ctx);
        bool want;
        if (symbool_eval_text(in->ctx, n->symbool, in->syms, in->nsyms, &want) == 0) {
            if (want != (in->vals[i].i != 0))
                rc = mi_err(in->ctx, in->g->source, n->src_line, 0,
                            "node '%s': computed %s but its annotation Sym(%s) is %s for these sizes", n->name,
                            in->vals[i].i ? "True" : "False", n->symbool, want ? "True" : "False");
        } else mi_try_end(&tentative);
    }
    /* a SymFloat node ("Sym(IntTrueDiv(8*s0, 8))"): its annotation, evaluated with the bound
     * sizes, must agree with the computed value (to rounding; skipped while a symbol is unbound) */
    if (rc == 0 && n->symfloat && (in->vals[i].kind == IV_FLOAT || in->vals[i].kind == IV_INT)) {
        MiTry tentative = mi_try(in->ctx);
        SymNum want;
        if (symfloat_eval(in->ctx, n->symfloat, in->syms, in->nsyms, &want) == 0) {
            double got = in->vals[i].kind == IV_FLOAT ? in->vals[i].f : (double)in->vals[i].i;
            double w = want.is_int ? (double)want.i : want.f;
            if (!(fabs(got - w) <= 1e-9 * fmax(1.0, fabs(w))) && !(isnan(got) && isnan(w)))
                rc = mi_err(in->ctx, in->g->source, n->src_line, 0,
                            "node '%s': computed %.17g but its annotation Sym(%s) is %.17g for these sizes", n->name,
                            got, n->symfloat, w);
        } else mi_try_end(&tentative);
    }
    return rc;
}

static void interp_free(Interp *in) {
    if (in->vals)
        for (int i = 0; i < in->g->n; i++) ivalue_clear(&in->vals[i]);
    free(in->vals);
    free(in->last_use);
    free(in->keys);
    free(in->slots);
    free(in->syms);
}

static int run_graph(MiCtx *ctx, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts, bool fp64,
                     bool bcast) {
    *outs = NULL;
    *nouts = 0;
    Interp in = {.ctx = ctx, .g = g, .fp64 = fp64, .bcast = bcast};
    int nph = graph_num_placeholders(g);
    if (ninputs != nph)
        return mi_err(ctx, g->source, 0, 0, "graph has %d placeholders but %d inputs were given", nph, ninputs);
    map_build(&in);
    compute_last_use(&in);
    in.vals = mi_xcalloc((size_t)(g->n ? g->n : 1), sizeof(IValue));
    int rc = 0;
    /* placeholders: tensors first (they bind symbols), then SymInts */
    int k = 0;
    for (int i = 0; i < g->n && rc == 0; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_PLACEHOLDER) continue;
        IValue *v = &inputs[k];
        if (v->kind == IV_TENSOR) rc = bind_tensor_input(&in, n, v->t, k);
        else if (!n->is_sym && n->has_meta && v->kind != IV_TENSOR)
            rc = mi_err(ctx, g->source, n->src_line, 0, "input %d ('%s') must be a tensor", k, n->name);
        k++;
    }
    k = 0;
    for (int i = 0; i < g->n && rc == 0; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_PLACEHOLDER) continue;
        IValue *v = &inputs[k++];
        if (n->is_sym && n->sym_val && n->sym_val->kind == EX_SYM) {
            if (v->kind == IV_INT) {
                rc = sym_bind(&in, n, n->sym_val->name, v->i);
            } else if (v->kind == IV_NONE) {
                /* derive from a tensor input's shape */
                const SymBinding *b = sym_find(&in, n->sym_val->name);
                if (!b) { rc = mi_err(ctx, g->source, n->src_line, 0, "input %d ('%s'): value of %s is not given and no tensor input determines it", k - 1, n->name, n->sym_val->name); break; }
                in.vals[i].kind = IV_INT;
                in.vals[i].i = b->value;
                continue;
            }
        }
        ivalue_copy(&in.vals[i], v);
    }
    int out_pos = -1;
    for (int i = 0; i < g->n && rc == 0; i++) {
        const Node *n = g->nodes[i];
        switch (n->kind) {
        case N_PLACEHOLDER: break;
        case N_GET_ATTR: {   /* a tensor constant of the session (self._tensor_constant0), else a subgraph */
            Tensor *t = mi_const_get(ctx, n->target);
            if (!t) { in.vals[i].kind = IV_OTHER; break; }
            DType dt = fp64 ? (dtype_is_complex(t->dtype) ? DT_C128 : dtype_is_float(t->dtype) ? DT_F64 : t->dtype) : t->dtype;
            in.vals[i].kind = IV_TENSOR;
            in.vals[i].t = dt == t->dtype ? tensor_clone(ctx, t) : tensor_to_dtype(ctx, t, dt);   /* ops may not write it */
            if (!in.vals[i].t) rc = -1;
            break;
        }
        case N_OUTPUT: out_pos = i; break;
        case N_CALL_FUNCTION:
            if (mi_interrupted(ctx)) { rc = mi_err_interrupted(ctx, "in the interpreter at node '%s' (%d of %d)", n->name, i + 1, g->n); break; }
            mi_progress(ctx, "interpreting", i + 1, g->n);
            rc = run_call(&in, i);
            break;
        }
        if (rc || n->kind == N_OUTPUT) break;
        /* free values whose last reader has run (unused results are freed at once) */
        if (n->kind == N_CALL_FUNCTION && in.last_use[i] < 0) ivalue_clear(&in.vals[i]);
        for (int j = 0; j < i; j++)
            if (in.last_use[j] == i) ivalue_clear(&in.vals[j]);
    }
    if (rc == 0 && out_pos < 0) rc = mi_err(ctx, g->source, 0, 0, "graph has no output node");
    if (rc == 0) {
        const Node *o = g->nodes[out_pos];
        int n;
        const Value *leaves = graph_output_flat(g, &n);   /* a nested return is flattened (pytree) */
        IValue *res = mi_xcalloc((size_t)(n ? n : 1), sizeof(IValue));
        for (int j = 0; j < n && rc == 0; j++) rc = resolve(&in, o, &leaves[j], &res[j], true);
        if (rc) interp_free_outputs(res, n);
        else { *outs = res; *nouts = n; }
    }
    interp_free(&in);
    return rc;
}

int interp_run(MiCtx *ctx, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts) {
    return run_graph(ctx, g, inputs, ninputs, outs, nouts, false, false);
}

int interp_run_sub(const OpCall *c, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts) {
    return run_graph(c->ctx, g, inputs, ninputs, outs, nouts, c->fp64, false);
}

/* vmap by broadcasting: the subgraph's 0-dim placeholders take tensors of any shape, so its
 * pointwise ops run once over all of them (flex_attention's score_mod over [B, H, M, N] scores
 * and [B,1,1,1] / [1,H,1,1] / ... index tensors, as _vmap_for_bhqkv maps it per element). */
int interp_run_sub_bcast(const OpCall *c, const Graph *g, IValue *inputs, int ninputs, IValue **outs, int *nouts) {
    return run_graph(c->ctx, g, inputs, ninputs, outs, nouts, c->fp64, true);
}

/* Float inputs are cloned up to f64 (complex to c128), the others cloned as they are, keeping
 * strides: in-place ops then mutate the clones, returned in *inputs_after. */
int interp_run_fp64(MiCtx *ctx, const Graph *g, const IValue *inputs, int ninputs, IValue **outs, int *nouts,
                    IValue **inputs_after) {
    IValue *in = mi_xcalloc((size_t)(ninputs ? ninputs : 1), sizeof *in);
    int rc = 0;
    for (int i = 0; i < ninputs && rc == 0; i++) {
        in[i] = inputs[i];
        if (inputs[i].kind == IV_TENSOR) {
            const Tensor *t = inputs[i].t;
            DType dt = dtype_is_complex(t->dtype) ? DT_C128 : dtype_is_float(t->dtype) ? DT_F64 : t->dtype;
            in[i].t = tensor_new_strided(ctx, dt, t->ndim, t->size, t->stride, t->offset);
            if (!in[i].t || tensor_copy_into(ctx, in[i].t, t)) { in[i].kind = IV_NONE; rc = -1; }
        } else if (inputs[i].kind == IV_TUPLE) {
            in[i].kind = IV_NONE;            /* graph inputs are never tuples */
        }
    }
    if (rc == 0) rc = run_graph(ctx, g, in, ninputs, outs, nouts, true, false);
    if (rc == 0 && inputs_after) *inputs_after = in;
    else interp_free_outputs(in, ninputs);
    return rc;
}

void interp_free_outputs(IValue *outs, int n) {
    if (!outs) return;
    for (int i = 0; i < n; i++) ivalue_clear(&outs[i]);
    free(outs);
}

/* ---- random inputs ---- */

static int64_t binding_or_default(const SymBinding *syms, int nsyms, const char *name) {
    for (int i = 0; i < nsyms; i++)
        if (syms[i].name == name || !strcmp(syms[i].name, name)) return syms[i].value;
    return 8;
}

static int eval_with_defaults(MiCtx *ctx, const Expr *e, const SymBinding *syms, int nsyms, int64_t *out) {
    const char *names[32];
    SymBinding b[32];
    int n = sym_free_symbols(e, names, 32);
    for (int i = 0; i < n; i++) { b[i].name = names[i]; b[i].value = binding_or_default(syms, nsyms, names[i]); }
    return sym_eval(ctx, e, b, n, out);
}

/* A placeholder that some LAPACK-style solve reads as its pivots (linalg_lu_solve, lu_unpack,
 * linalg_ldl_solve: argument 1; a backward graph gets them from its forward's factorization) gets
 * the identity pivots 1, 2, ..., n along its last dim: zeros, valid as any index, are no valid
 * 1-based pivots. Example: pivots i32[4] -> [1, 2, 3, 4]. */
static void identity_pivots(const Graph *g, const Node *ph, Tensor *t) {
    static const char *const solves[] = {"aten.linalg_lu_solve.default", "aten.lu_unpack.default", "aten.linalg_ldl_solve.default"};
    bool used = false;
    for (int i = 0; i < g->n && !used; i++) {
        const Node *c = g->nodes[i];
        if (c->kind != N_CALL_FUNCTION || c->nargs < 2 || c->args[1].kind != V_NODE || c->args[1].node != ph) continue;
        for (size_t k = 0; k < sizeof solves / sizeof solves[0]; k++) used |= !strcmp(c->target, solves[k]);
    }
    if (!used || t->ndim < 1 || t->size[t->ndim - 1] <= 0) return;
    for (int64_t k = 0; k < tensor_numel(t); k++) tensor_set_f(t, k, (double)(k % t->size[t->ndim - 1] + 1));
}

int interp_random_inputs(MiCtx *ctx, const Graph *g, const SymBinding *syms, int nsyms, IValue **inputs, int *ninputs) {
    int n = graph_num_placeholders(g);
    IValue *in = mi_xcalloc((size_t)(n ? n : 1), sizeof(IValue));
    uint64_t seed = ctx->seed;
    for (int k = 0; k < n; k++) {
        const Node *ph = graph_placeholder(g, k);
        if (ph->is_sym) {
            in[k].kind = IV_INT;
            in[k].i = ph->sym_val && ph->sym_val->kind == EX_SYM ? binding_or_default(syms, nsyms, ph->sym_val->name) : 8;
            if (ph->sym_val && ph->sym_val->kind != EX_SYM && eval_with_defaults(ctx, ph->sym_val, syms, nsyms, &in[k].i)) goto fail;
            continue;
        }
        if (!ph->has_meta) {
            mi_err(ctx, g->source, ph->src_line, 0, "placeholder '%s' has no type annotation; cannot make an input", ph->name);
            goto fail;
        }
        const TensorMeta *m = &ph->meta;
        int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS];
        if (m->ndim > MI_MAX_DIMS) { mi_err(ctx, g->source, ph->src_line, 0, "rank too large"); goto fail; }
        for (int i = 0; i < m->ndim; i++) {
            if (eval_with_defaults(ctx, m->size[i], syms, nsyms, &size[i])) goto fail;
            if (m->has_stride && eval_with_defaults(ctx, m->stride[i], syms, nsyms, &stride[i])) goto fail;
        }
        Tensor *t = m->has_stride ? tensor_new_strided(ctx, m->dtype, m->ndim, size, stride, 0)
                                  : tensor_new(ctx, m->dtype, m->ndim, size);
        if (!t) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%.900s", ctx->err.msg);
            mi_err(ctx, g->source, ph->src_line, 0, "input '%s': %s", ph->name, msg);
            goto fail;
        }
        tensor_fill_random(t, &seed);
        if (dtype_is_int(t->dtype)) identity_pivots(g, ph, t);
        in[k].kind = IV_TENSOR;
        in[k].t = t;
    }
    for (int i = 0; i < g->n; i++) {   /* tensor constants without a value: random too */
        const Node *c = g->nodes[i];
        if (c->kind != N_GET_ATTR || !c->has_meta || graph_subgraph(g, c->target) || mi_const_get(ctx, c->target)) continue;
        int64_t size[MI_MAX_DIMS];
        for (int d = 0; d < c->meta.ndim && d < MI_MAX_DIMS; d++)
            if (eval_with_defaults(ctx, c->meta.size[d], syms, nsyms, &size[d])) goto fail;
        Tensor *t = c->meta.ndim <= MI_MAX_DIMS ? tensor_new(ctx, c->meta.dtype, c->meta.ndim, size) : NULL;
        if (!t) { mi_err(ctx, g->source, c->src_line, 0, "tensor constant '%s': cannot make a value", c->target); goto fail; }
        tensor_fill_random(t, &seed);
        mi_const_set(ctx, c->target, t);
        tensor_unref(t);
    }
    *inputs = in;
    *ninputs = n;
    return 0;
fail:
    interp_free_outputs(in, n);
    *inputs = NULL;
    *ninputs = 0;
    return -1;
}

/* The value a graph placeholder of bw named `name` gets from a run of its forward fw: the
 * forward's input of that name (a primal) or the output of that name (a saved tensor). */
static const IValue *forward_value(const Graph *fw, const char *name, const IValue *fin, int nfin, const IValue *fout, int nfout) {
    for (int j = 0; j < graph_num_placeholders(fw) && j < nfin; j++)
        if (!strcmp(graph_placeholder(fw, j)->name, name)) return &fin[j];
    int n = 0;
    const Value *leaves = graph_output_flat(fw, &n);
    for (int k = 0; k < n && k < nfout; k++)
        if (leaves[k].kind == V_NODE && !strcmp(leaves[k].node->name, name)) return &fout[k];
    return NULL;
}

int interp_random_inputs_from_forward(MiCtx *ctx, const Graph *bw, const Graph *fw, IValue **inputs, int *ninputs, int *taken) {
    *taken = 0;
    if (interp_random_inputs(ctx, bw, NULL, 0, inputs, ninputs) < 0) return -1;
    IValue *fin = NULL, *fout = NULL;
    int nfin = 0, nfout = 0;
    if (interp_random_inputs(ctx, fw, NULL, 0, &fin, &nfin) < 0 || interp_run(ctx, fw, fin, nfin, &fout, &nfout) < 0) {
        interp_free_outputs(fin, nfin);
        interp_free_outputs(*inputs, *ninputs);
        *inputs = NULL;
        *ninputs = 0;
        return -1;
    }
    IValue *in = *inputs;
    for (int i = 0; i < *ninputs; i++) {
        const IValue *v = forward_value(fw, graph_placeholder(bw, i)->name, fin, nfin, fout, nfout);
        if (!v) continue;
        if (in[i].kind == IV_INT && v->kind == IV_INT) { in[i].i = v->i; ++*taken; continue; }
        if (in[i].kind != IV_TENSOR || v->kind != IV_TENSOR || in[i].t->dtype != v->t->dtype || in[i].t->ndim != v->t->ndim) continue;
        bool same = true;
        for (int d = 0; d < v->t->ndim; d++) same &= in[i].t->size[d] == v->t->size[d];
        if (same && tensor_copy_into(ctx, in[i].t, v->t) == 0) ++*taken;   /* the placeholder's layout, the forward's values */
    }
    interp_free_outputs(fin, nfin);
    interp_free_outputs(fout, nfout);
    return 0;
}
