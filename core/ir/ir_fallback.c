/* ir_fallback.c — FallbackKernel at run time: run one graph node's reference implementation
 * (core/ops/ops*.c) on tensors that wrap buffers owned by someone else (the IR interpreter's
 * storage, or the raw pointers a compiled module passes back through its callback table, see
 * core/runtime/runtime.c), and copy each result into the fallback's output buffers. This is how
 * registry ops without a lowering (embedding, gather, index.Tensor, native_layer_norm, ...)
 * still lower, schedule, compile and run, as Inductor calls the ATen op for a FallbackKernel. */
#include "ops/interp.h"
#include "ir/ir.h"
#include "base/symfloat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ir_fallback_ok(const OpDef *op) {
    return op && op->eval && !(op->flags & (OPF_INPLACE | OPF_HOP));
}

/* What ir_fallback_eval can run: ir_fallback_ok's ops, and the higher-order ops a lowering row
 * sends to a FallbackKernel explicitly (flex_attention: its subgraphs are the graph's). */
static bool fallback_runnable(const OpDef *op) {
    return op && op->eval && !(op->flags & OPF_INPLACE);
}

Tensor *ir_fallback_wrap(void *data, DType dt, int ndim, const int64_t *size, const int64_t *stride, int64_t offset) {
    Storage *s = mi_xcalloc(1, sizeof *s);
    s->refs = 2;             /* one is ours: tensor_unref never frees the caller's memory */
    s->data = data;
    int64_t hi = offset;
    for (int d = 0; d < ndim; d++)
        if (size[d] > 0) hi += (size[d] - 1) * stride[d];
    s->nbytes = (size_t)(hi + 1) * dtype_size(dt);
    Tensor *t = mi_xcalloc(1, sizeof *t);
    t->refs = 1;
    t->dtype = dt;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) { t->size[d] = size[d]; t->stride[d] = stride[d]; }
    t->offset = offset;
    t->storage = s;
    return t;
}

void ir_fallback_unwrap(Tensor *t) {
    if (!t) return;
    Storage *s = t->storage;
    if (--t->refs > 0) return;          /* still referenced (cannot happen: results are dropped) */
    free(t);
    if (--s->refs == 1) free(s);        /* only our reference is left */
}

typedef struct Resolver {
    MiCtx *ctx;
    const Graph *g;
    const Node *n;
    Tensor *const *args; int nargs, next;
    const SymBinding *syms; int nsyms;
} Resolver;

/* A node reference of a fallback's arguments: SymInt nodes their expression's value, SymFloat
 * nodes theirs (a Python float, or an int where the expression gives one: Inductor's wrapper
 * passes the sympy expression printed as Python, e.g. histc(x, 10, 0, (1/2)*s0)), tensors the
 * next of the tensors passed (in eargs order). */
static int fallback_node_value(void *env, const Node *x, IValue *out) {
    Resolver *r = env;
    if (x->is_sym && x->sym_val) {
        out->kind = IV_INT;
        return sym_eval(r->ctx, x->sym_val, r->syms, r->nsyms, &out->i) ? -1 : 0;
    }
    if (x->symfloat) {
        SymNum v;
        if (symfloat_eval(r->ctx, x->symfloat, r->syms, r->nsyms, &v) != 0) {
            char why[512];
            snprintf(why, sizeof why, "%.500s", r->ctx->err.msg);
            return mi_err(r->ctx, r->g ? r->g->source : NULL, r->n->src_line, 0, "fallback '%s': SymFloat '%s', Sym(%s): %s",
                          r->n->target, x->name, x->symfloat, why);
        }
        if (v.is_int) { out->kind = IV_INT; out->i = v.i; }
        else { out->kind = IV_FLOAT; out->f = v.f; }
        return 0;
    }
    if (x->kind == N_GET_ATTR && r->g && graph_subgraph(r->g, x->target)) { out->kind = IV_OTHER; return 0; }   /* a subgraph */
    if (r->next >= r->nargs)
        return mi_err(r->ctx, r->g ? r->g->source : NULL, r->n->src_line, 0,
                      "fallback '%s': more tensor arguments than the %d passed (node '%s')", r->n->target, r->nargs, r->n->name);
    out->kind = IV_TENSOR;
    out->t = tensor_ref(r->args[r->next++]);
    return 0;
}

static int resolve(Resolver *r, const Value *v, IValue *out) {
    return interp_resolve_arg(r->ctx, v, out, false, r->syms, r->nsyms, fallback_node_value, r);
}

static int copy_out(MiCtx *ctx, const Node *n, Tensor *dst, const IValue *v, int k) {
    if (!dst) return 0;
    if (v->kind != IV_TENSOR || !v->t)
        return mi_err(ctx, NULL, n->src_line, 0, "fallback '%s': result %d is not a tensor (node '%s')", n->target, k, n->name);
    if (v->t->ndim != dst->ndim || memcmp(v->t->size, dst->size, sizeof(int64_t) * (size_t)dst->ndim) != 0) {
        char a[128], b[128];
        return mi_err(ctx, NULL, n->src_line, 0, "fallback '%s': result %d is %s but its buffer is %s (node '%s')", n->target, k,
                      tensor_type_str(v->t, a, sizeof a), tensor_type_str(dst, b, sizeof b), n->name);
    }
    return tensor_copy_into(ctx, dst, v->t);
}

/* The results of a tuple in the order of the fallback's outputs: a list inside the tuple
 * (_amp_foreach_non_finite_check_and_unscale's self_out) gives its items in place. */
static void flatten(const IValue *v, const IValue **out, int max, int *n) {
    if (v->kind == IV_TUPLE) {
        for (int i = 0; i < v->n; i++) flatten(&v->items[i], out, max, n);
        return;
    }
    if (*n < max) out[*n] = v;
    (*n)++;
}

/* A result nobody gave a buffer for, kept for the caller (fresh[k], a new reference) when it
 * asked: a data-dependent size the call decides (nonzero). */
static void keep_fresh(Tensor **fresh, int k, const IValue *v) {
    if (fresh && v && v->kind == IV_TENSOR && v->t) fresh[k] = tensor_ref(v->t);
}

int ir_fallback_eval(MiCtx *ctx, const Graph *g, const Node *n, Tensor *const *args, int nargs,
                     Tensor *const *outs, int nouts, const SymBinding *syms, int nsyms) {
    return ir_fallback_eval_fresh(ctx, g, n, args, nargs, outs, nouts, syms, nsyms, NULL);
}

int ir_fallback_eval_fresh(MiCtx *ctx, const Graph *g, const Node *n, Tensor *const *args, int nargs,
                           Tensor *const *outs, int nouts, const SymBinding *syms, int nsyms, Tensor **fresh) {
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    if (!fallback_runnable(op))
        return op_unsupported_err(ctx, g, n);
    /* a bias the lowering adds as a pointwise op instead: fewer tensors are passed than the node
     * references, and the node runs with None there. extern_kernels.convolution off the cpu
     * (kernel/conv.py, lowering_extern.c) and mkl._mkl_linear (mkldnn_lowerings.py
     * mkl_packed_linear: MKLPackedLinear without the bias, then add) */
    static const struct { const char *target; int pos, passed; } peel[] = {
        {"aten.convolution.default", 2, 2}, {"mkl._mkl_linear", 3, 3},
    };
    Node peeled;
    Value pargs[16];
    for (size_t k = 0; n->target && k < sizeof peel / sizeof peel[0]; k++)
        if (!strcmp(n->target, peel[k].target) && nargs == peel[k].passed && n->nargs > peel[k].pos && n->nargs <= 16 &&
            n->args[peel[k].pos].kind == V_NODE) {
            peeled = *n;
            memcpy(pargs, n->args, sizeof(Value) * (size_t)n->nargs);
            pargs[peel[k].pos] = (Value){.kind = V_NONE};
            peeled.args = pargs;
            n = &peeled;
            break;
        }
    Resolver r = {ctx, g, n, args, nargs, 0, syms, nsyms};
    IValue *argv = mi_xcalloc((size_t)(n->nargs + n->nkwargs + 1), sizeof(IValue));
    IValue *kwargv = argv + n->nargs;
    int rc = 0;
    for (int a = 0; a < n->nargs && rc == 0; a++) rc = resolve(&r, &n->args[a], &argv[a]);
    for (int k = 0; k < n->nkwargs && rc == 0; k++) rc = resolve(&r, &n->kwargs[k].v, &kwargv[k]);
    IValue res = {0};
    if (rc == 0) {
        OpCall call = {
            .ctx = ctx, .node = n, .graph = g, .args = n->args, .nargs = n->nargs, .argv = argv,
            .kwargs = n->kwargs, .nkwargs = n->nkwargs, .kwargv = kwargv, .syms = syms, .nsyms = nsyms, .op = op,
        };
        rc = op->eval(&call, &res);
    }
    if (rc == 0) {
        if (res.kind == IV_TUPLE) {
            const IValue **flat = mi_xcalloc((size_t)(nouts + 1), sizeof *flat);
            int nflat = 0;
            for (int i = 0; i < res.n; i++) flatten(&res.items[i], flat, nouts, &nflat);
            for (int k = 0; k < nouts && rc == 0; k++)
                if (outs[k]) rc = k < nflat ? copy_out(ctx, n, outs[k], flat[k], k)
                                            : mi_err(ctx, NULL, n->src_line, 0, "fallback '%s': no result %d (node '%s')", n->target, k, n->name);
                else if (k < nflat) keep_fresh(fresh, k, flat[k]);
            free(flat);
        } else if (nouts > 0 && outs[0]) rc = copy_out(ctx, n, outs[0], &res, 0);
        else if (nouts > 0) keep_fresh(fresh, 0, &res);
    }
    ivalue_clear(&res);
    for (int a = 0; a < n->nargs + n->nkwargs; a++) ivalue_clear(&argv[a]);
    free(argv);
    return rc ? -1 : 0;
}
