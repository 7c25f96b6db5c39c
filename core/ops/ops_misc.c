/* ops_misc.c — everything that is neither pointwise math, a view, a reduction, a matmul nor an
 * index op: constructors (full, zeros, arange, iota, *_like), copies and dtype conversions
 * (clone, _to_copy, convert_element_type, device_put, copy, copy_), resize/resize_/resize_as_, operator.getitem on tuples, the
 * higher-order cond (runs one of two subgraphs), SymInt helpers (sym_size, operator.add on
 * sizes) and the no-effect profiler/assert ops that passes remove. */
#include "ops/ops_impl.h"
#include "ops/interp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Device kw_device(ShapeArgs *sa, Device dflt) {
    if (sa->eval) return (Device){DEV_CPU, -1};
    return arg_device(sa_arg(sa, -1, "device"), dflt);
}

static DType fill_dtype(DType scalar_type) {
    return scalar_type == DT_BOOL || scalar_type == DT_I64 || dtype_is_complex(scalar_type) ? scalar_type : default_float();
}

/* ---- constructors ---- */

typedef struct CtorSpec { int kind; } CtorSpec;
enum { C_FULL, C_ZEROS, C_ONES, C_EMPTY, C_EMPTY_STRIDED, C_SCALAR, C_FULL_LIKE, C_ZEROS_LIKE, C_ONES_LIKE,
       C_EMPTY_LIKE, C_NEW_ZEROS, C_NEW_ONES, C_NEW_EMPTY, C_NEW_FULL, C_ARANGE, C_ARANGE_START, C_ARANGE_STEP, C_IOTA };

/* value to fill and the result meta */
/* fill_value: a number, or a Python complex (its imaginary part in *im, its type complex: full([],
 * 0j) is c64, as torch.full infers the default complex dtype) */
static int fill_arg(ShapeArgs *sa, ArgRef a, double *fill, double *im, DType *st) {
    *im = 0;
    if (a.v && a.v->kind == V_COMPLEX) {
        *fill = a.v->cx.re; *im = a.v->cx.im;
        *st = default_float() == DT_F64 ? DT_C128 : DT_C64;
        return 0;
    }
    return sa_scalar(sa, a, "fill_value", fill, st);
}

static int ctor_parse(ShapeArgs *sa, TensorMeta *out, double *fill, double *fill_im, double *start, double *step) {
    const CtorSpec *sp = sa->op->data;
    Expr *size[MI_MAX_DIMS];
    int n = 0;
    DType st = DT_F32, dt;
    Device cpu = {DEV_CPU, -1};
    TensorMeta *self = NULL;
    *fill = 0; *fill_im = 0; *start = 0; *step = 1;
    switch (sp->kind) {
    case C_FULL: case C_ZEROS: case C_ONES: case C_EMPTY: case C_EMPTY_STRIDED:
        if (sa_int_list(sa, sa_arg(sa, 0, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
        if (sp->kind == C_FULL && fill_arg(sa, sa_arg(sa, 1, "fill_value"), fill, fill_im, &st)) return -1;
        if (sp->kind == C_ONES) *fill = 1;
        dt = arg_dtype(sa_arg(sa, -1, "dtype"), sp->kind == C_FULL ? fill_dtype(st) : default_float());
        meta_alloc(sa, out, dt, n, kw_device(sa, cpu));
        for (int i = 0; i < n; i++) out->size[i] = size[i];
        meta_contiguous_strides(sa, out);
        if (sp->kind == C_EMPTY_STRIDED) {
            Expr *stride[MI_MAX_DIMS];
            int ns;
            if (sa_int_list(sa, sa_arg(sa, 1, "stride"), "stride", stride, &ns, MI_MAX_DIMS)) return -1;
            if (ns != n) return sa_err(sa, "empty_strided: %d sizes but %d strides", n, ns);
            for (int i = 0; i < n; i++) out->stride[i] = stride[i];
        }
        return 0;
    case C_SCALAR:
        if (sa_scalar(sa, sa_arg(sa, 0, "s"), "s", fill, &st)) return -1;
        meta_alloc(sa, out, arg_dtype(sa_arg(sa, -1, "dtype"), default_float()), 0, kw_device(sa, cpu));
        return 0;
    case C_FULL_LIKE: case C_ZEROS_LIKE: case C_ONES_LIKE: case C_EMPTY_LIKE:
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &self)) return -1;
        if (sp->kind == C_FULL_LIKE && fill_arg(sa, sa_arg(sa, 1, "fill_value"), fill, fill_im, &st)) return -1;
        if (sp->kind == C_ONES_LIKE) *fill = 1;
        meta_like(sa, out, self, arg_dtype(sa_arg(sa, -1, "dtype"), self->dtype));
        out->device = kw_device(sa, self->device);
        return 0;
    case C_NEW_ZEROS: case C_NEW_ONES: case C_NEW_EMPTY: case C_NEW_FULL:
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &self) ||
            sa_int_list(sa, sa_arg(sa, 1, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
        if (sp->kind == C_NEW_FULL && fill_arg(sa, sa_arg(sa, 2, "fill_value"), fill, fill_im, &st)) return -1;
        if (sp->kind == C_NEW_ONES) *fill = 1;
        meta_alloc(sa, out, arg_dtype(sa_arg(sa, -1, "dtype"), self->dtype), n, kw_device(sa, self->device));
        for (int i = 0; i < n; i++) out->size[i] = size[i];
        meta_contiguous_strides(sa, out);
        return 0;
    case C_ARANGE: case C_ARANGE_START: case C_ARANGE_STEP: {
        double end;
        DType t1 = DT_I64, t2 = DT_I64, t3 = DT_I64;
        if (sp->kind == C_ARANGE) {
            if (sa_scalar(sa, sa_arg(sa, 0, "end"), "end", &end, &t2)) return -1;
        } else {
            if (sa_scalar(sa, sa_arg(sa, 0, "start"), "start", start, &t1) ||
                sa_scalar(sa, sa_arg(sa, 1, "end"), "end", &end, &t2)) return -1;
            ArgRef as = sa_arg(sa, sp->kind == C_ARANGE_STEP ? 2 : -1, "step");
            if (arg_present(as) && sa_scalar(sa, as, "step", step, &t3)) return -1;
        }
        if (*step == 0) return sa_err(sa, "arange: step must be nonzero");
        bool ints = t1 != DT_F32 && t2 != DT_F32 && t3 != DT_F32;
        dt = arg_dtype(sa_arg(sa, -1, "dtype"), ints ? DT_I64 : default_float());
        meta_alloc(sa, out, dt, 1, kw_device(sa, cpu));
        /* symbolic end (arange(s0)): length is end when start 0, step 1 */
        ArgRef ae = sa_arg(sa, sp->kind == C_ARANGE ? 0 : 1, "end");
        Expr *e;
        if (!sa->eval && ae.v && (ae.v->kind == V_NODE || ae.v->kind == V_SYM) && *start == 0 && *step == 1 &&
            sa_int(sa, ae, "end", &e) == 0) {
            out->size[0] = e;
        } else {
            double len = ceil((end - *start) / *step);
            if (len < 0) len = 0;
            if (len > 1e15) return sa_err(sa, "arange: too many elements");
            out->size[0] = sym_int(sa->sym, (int64_t)len);
        }
        out->stride[0] = sym_int(sa->sym, 1);
        return 0;
    }
    case C_IOTA: {
        Expr *len;
        double s;
        DType t;
        if (sa_int(sa, sa_arg(sa, 0, "length"), "length", &len)) return -1;
        ArgRef as = sa_arg(sa, -1, "start"), ap = sa_arg(sa, -1, "step");
        if (arg_present(as) && sa_scalar(sa, as, "start", &s, &t) == 0) *start = s;
        if (arg_present(ap) && sa_scalar(sa, ap, "step", &s, &t) == 0) *step = s;
        meta_alloc(sa, out, arg_dtype(sa_arg(sa, -1, "dtype"), DT_I64), 1, kw_device(sa, cpu));
        out->size[0] = len;
        out->stride[0] = sym_int(sa->sym, 1);
        return 0;
    }
    }
    return sa_err(sa, "unknown constructor");
}

static int shape_ctor(ShapeArgs *sa, TensorMeta *out, int *nout) {
    double f, fi, s, st;
    *nout = 1;
    return ctor_parse(sa, out, &f, &fi, &s, &st);
}

static int ctor_fill(ShapeArgs *sa, Tensor *o) {
    TensorMeta m;
    double fill, fill_im, start, step;
    if (ctor_parse(sa, &m, &fill, &fill_im, &start, &step)) return -1;
    const CtorSpec *sp = sa->call->op->data;
    bool ramp = sp->kind == C_ARANGE || sp->kind == C_ARANGE_START || sp->kind == C_ARANGE_STEP || sp->kind == C_IOTA;
    int64_t n = tensor_numel(o);
    for (int64_t k = 0; k < n; k++) {
        if (ramp && ev_intlike(o->dtype)) tensor_set_f(o, k, (double)((int64_t)start + k * (int64_t)step));
        else if (!ramp && dtype_is_complex(o->dtype)) tensor_store_c(o, tensor_pos(o, k), fill, fill_im);
        else tensor_set_f(o, k, ramp ? start + (double)k * step : fill);
    }
    return 0;
}
static int ctor_eval(const OpCall *c, IValue *out) { return ev_run(c, out, ctor_fill); }

/* ---- copies and conversions ---- */

static bool wants_contiguous(ArgRef mf) {
    return mf.v && mf.v->kind == V_TORCH && mf.v->s && strstr(mf.v->s, "contiguous_format");
}

static int shape_convert(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, NULL), "self", &x)) return -1;
    const char *name = sa->op->name;
    DType dt = x->dtype;
    if (!strcmp(name, "prims.convert_element_type.default") || !strcmp(name, "aten.to.dtype")) {
        ArgRef ad = sa_arg(sa, 1, "dtype");
        if (!ad.v || ad.v->kind != V_DTYPE)
            return sa_err(sa, "argument 'dtype' must be a dtype, got %s",
                          !ad.v ? "nothing" : ad.v->kind == V_TORCH ? ad.v->s : ad.v->kind == V_NODE ? "a node" : "another constant");
        dt = ad.v->dtype;
    } else {
        dt = arg_dtype(sa_arg(sa, -1, "dtype"), dt);
    }
    meta_like(sa, out, x, dt);
    if (wants_contiguous(sa_arg(sa, -1, "memory_format"))) meta_contiguous_strides(sa, out);
    out->device = kw_device(sa, x->device);
    return 0;
}

static int convert_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    if (tensor_copy_into(c->ctx, o, ev_tensor(sa_arg(sa, 0, NULL)))) { sa_err(sa, "%s", c->ctx->err.msg); return -1; }
    return 0;
}
static int convert_eval(const OpCall *c, IValue *out) { return ev_run(c, out, convert_fill); }

/* prims.device_put(a, device, non_blocking=False) (torch/_prims/__init__.py): its meta is
 * TensorMeta(a, device=canonicalize_device(device)), a's sizes, strides and dtype on `device`;
 * its implementation a.to(device), a copy of the values (here one memory holds every device's
 * tensors, so the copy is the whole transfer). Example: device_put(cat_1 "i64[10][1]cpu",
 * cuda:0) -> "i64[10][1]cuda:0". */
static int shape_device_put(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "a"), "a", &x)) return -1;
    ArgRef ad = sa_arg(sa, 1, "device");
    if (!sa->eval && (!ad.v || ad.v->kind != V_DEVICE)) return sa_err(sa, "argument 'device' must be a device");
    meta_copy(sa, out, x);
    out->device = sa->eval ? (Device){DEV_CPU, -1} : arg_device(ad, x->device);   /* eval: host memory */
    out->has_device = true;
    return 0;
}

/* copy(self, src): a tensor like self holding src's values; copy_ writes them into self */
static int shape_copy(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *src;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || sa_tensor(sa, sa_arg(sa, 1, "src"), "src", &src)) return -1;
    TensorMeta *ins[2] = {x, src};
    Expr *size[MI_MAX_DIMS];
    int nd;
    if (sa_broadcast(sa, ins, 2, size, &nd)) return -1;
    bool ok = nd == x->ndim;
    for (int i = 0; ok && i < nd; i++) ok = ex_cmp(sa, size[i], x->size[i]) == 0;
    if (!ok) return sa_err(sa, "src does not broadcast to the shape of self");
    if (sa->op->flags & OPF_INPLACE) meta_copy(sa, out, x);
    else meta_like(sa, out, x, x->dtype);
    return 0;
}

static int copy_fill(ShapeArgs *sa, Tensor *o) {
    if (tensor_copy_into(sa->ctx, o, ev_tensor(sa_arg(sa, 1, "src")))) return sa_err(sa, "%s", sa->ctx->err.msg);
    return 0;
}
static int copy_eval(const OpCall *c, IValue *out) { return ev_run(c, out, copy_fill); }

/* ---- operator.getitem ---- */

/* getitem(x, i): item i of tuple op x's result metas; getitem(getitem(op, 0), k) of an op whose
 * item 0 is a list (OPF_LIST_FIRST) is the list's item k; the list itself is no tensor
 * (DT_INVALID: PyTorch prints it unannotated). */
static int shape_getitem(ShapeArgs *sa, TensorMeta *out, int *nout) {
    ArgRef a = sa_arg(sa, 0, NULL);
    int64_t idx;
    *nout = 1;
    if (!a.v || a.v->kind != V_NODE) return sa_err(sa, "getitem expects a node producing a tuple");
    if (sa_const_int(sa, sa_arg(sa, 1, NULL), "index", &idx)) return -1;
    const Node *src = a.v->node;
    TensorMeta *outs = arena_alloc(sa->arena, OP_MAX_OUTS * sizeof *outs);
    int n = OP_MAX_OUTS, flat, first, count;
    if (src->kind != N_CALL_FUNCTION) return sa_err(sa, "getitem of '%s', which is not an op call", src->name);
    if (sa->eval) return sa_err(sa, "getitem has no shape at run time");
    const Node *op = op_getitem_source(sa->node, &flat);   /* an item of a list inside the tuple */
    if (op != sa->node) src = op;
    if (op_infer_meta(sa->ctx, (Graph *)sa->graph, src, outs, &n)) return -1;
    if (op != sa->node) idx = flat;
    else if (op_result_item(src, idx, &first, &count) && count >= 0) {   /* the list itself: no tensor */
        memset(out, 0, sizeof *out);
        out->dtype = DT_INVALID;
        return 0;
    }
    if (idx < 0) idx += n;
    if (idx < 0 || idx >= n) return sa_err(sa, "index %lld out of range for a tuple of %d", (long long)idx, n);
    *out = outs[idx];
    return 0;
}

static int getitem_body(ShapeArgs *sa, IValue *out) {
    int64_t idx;
    ArgRef a = sa_arg(sa, 0, NULL);
    if (sa_const_int(sa, sa_arg(sa, 1, NULL), "index", &idx)) return -1;
    if (!a.iv || a.iv->kind != IV_TUPLE) { sa_err(sa, "getitem expects a tuple value"); return -1; }
    if (idx < 0) idx += a.iv->n;
    if (idx < 0 || idx >= a.iv->n) { sa_err(sa, "index %lld out of range for a tuple of %d", (long long)idx, a.iv->n); return -1; }
    ivalue_copy(out, &a.iv->items[idx]);   /* a list inside the tuple comes out whole */
    return 0;
}
static int getitem_eval(const OpCall *c, IValue *out) { return ev_call(c, out, getitem_body); }

/* ---- higher_order.cond(pred, true_graph, false_graph, operands) ---- */

static Graph *branch(ShapeArgs *sa, int pos) {
    ArgRef a = sa_arg(sa, pos, NULL);
    if (!a.v || a.v->kind != V_NODE || a.v->node->kind != N_GET_ATTR) {
        sa_err(sa, "argument %d must be a get_attr node naming a subgraph", pos);
        return NULL;
    }
    Graph *g = graph_subgraph(sa->graph, a.v->node->target);
    if (!g) sa_err(sa, "subgraph '%s' not found", a.v->node->target);
    return g;
}

/* The result metas of a subgraph: the metas of what its output node returns. */
static int shape_of_subgraph(ShapeArgs *sa, Graph *g, TensorMeta *out, int *nout) {
    Node *o = graph_output(g);
    if (!o || o->nargs < 1) return sa_err(sa, "subgraph has no output");
    const Value *r = &o->args[0];
    int n = (r->kind == V_LIST || r->kind == V_TUPLE) ? r->list.n : 1;
    if (n > *nout) return sa_err(sa, "too many outputs");
    for (int k = 0; k < n; k++) {
        const Value *v = (r->kind == V_LIST || r->kind == V_TUPLE) ? &r->list.items[k] : r;
        if (v->kind != V_NODE || !v->node->has_meta) return sa_err(sa, "subgraph output %d has no tensor metadata", k);
        meta_copy(sa, &out[k], &v->node->meta);
        out[k].has_stride = v->node->meta.has_stride;
    }
    *nout = n;
    return 0;
}

static int shape_cond(ShapeArgs *sa, TensorMeta *out, int *nout) {
    Graph *g = branch(sa, 1);
    if (!g || !branch(sa, 2)) return -1;
    return shape_of_subgraph(sa, g, out, nout);
}

/* Run subgraph g on the arguments first..first+n-1 of the call (operands borrowed); the result
 * is the subgraph's output tuple. */
static int run_subgraph(const OpCall *c, ShapeArgs *sa, Graph *g, const char *what, ArgRef *items, int n, IValue *out) {
    IValue *ins = mi_xcalloc((size_t)(n ? n : 1), sizeof *ins);
    for (int k = 0; k < n; k++) {
        if (items[k].iv) ins[k] = *items[k].iv;     /* borrowed: interp_run takes its own references */
        else if (items[k].v && items[k].v->kind == V_INT) { ins[k].kind = IV_INT; ins[k].i = items[k].v->i; }
    }
    IValue *outs = NULL;
    int nouts = 0;
    int rc = interp_run_sub(c, g, ins, n, &outs, &nouts);
    free(ins);
    if (rc) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%.900s", c->ctx->err.msg);
        return sa_err(sa, "in %s: %s", what, msg);
    }
    out->kind = IV_TUPLE;
    out->n = nouts;
    out->items = outs;
    return 0;
}

/* ---- higher_order.tag_activation_checkpoint(body, *operands, **kwargs) ----
 * (torch.utils.checkpoint in Dynamo graphs): numerically it is a call of the body. */
static int shape_tac(ShapeArgs *sa, TensorMeta *out, int *nout) {
    Graph *g = branch(sa, 0);
    return g ? shape_of_subgraph(sa, g, out, nout) : -1;
}

static int tac_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    int rc = -1;
    Graph *g = branch(sa, 0);
    if (g) {
        int n = c->nargs - 1;
        ArgRef *items = mi_xcalloc((size_t)(n > 0 ? n : 1), sizeof *items);
        for (int k = 0; k < n; k++) items[k] = sa_arg(sa, k + 1, NULL);
        char what[300];
        snprintf(what, sizeof what, "body '%s'", c->args[0].node->target);
        rc = run_subgraph(c, sa, g, what, items, n, out);
        free(items);
    }
    return rc;
}
static int tac_eval(const OpCall *c, IValue *out) { return ev_call(c, out, tac_body); }

static int cond_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    ArgRef ap = sa_arg(sa, 0, "pred");
    bool pred;
    if (arg_is_tensor(sa, ap)) {
        Tensor *t = ev_tensor(ap);
        if (tensor_numel(t) != 1) { sa_err(sa, "predicate must have exactly one element"); return -1; }
        pred = tensor_get_f(t, 0) != 0;
    } else {
        double v;
        DType t;
        if (sa_scalar(sa, ap, "pred", &v, &t)) return -1;
        pred = v != 0;
    }
    Graph *g = branch(sa, pred ? 1 : 2);
    if (!g) return -1;
    ArgRef ops = sa_arg(sa, 3, "operands");
    int n = arg_list_len(ops);
    if (n < 0) { sa_err(sa, "operands must be a tuple"); return -1; }
    IValue *ins = mi_xcalloc((size_t)(n ? n : 1), sizeof *ins);
    for (int k = 0; k < n; k++) {
        ArgRef it = arg_item(ops, k);
        if (it.iv) ins[k] = *it.iv;             /* borrowed: interp_run takes its own references */
        else if (it.v->kind == V_INT) { ins[k].kind = IV_INT; ins[k].i = it.v->i; }
    }
    IValue *outs = NULL;
    int nouts = 0;
    if (interp_run_sub(c, g, ins, n, &outs, &nouts)) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%.900s", c->ctx->err.msg);
        free(ins);
        sa_err(sa, "in branch '%s': %s", pred ? "true" : "false", msg);
        return -1;
    }
    free(ins);
    out->kind = IV_TUPLE;
    out->n = nouts;
    out->items = outs;
    return 0;
}
static int cond_eval(const OpCall *c, IValue *out) { return ev_call(c, out, cond_body); }

/* ---- higher_order.while_loop(cond_fn, body_fn, carried_inputs, additional_inputs) ----
 * torch/_higher_order_ops/while_loop.py while_loop_dense: should_loop = cond_fn(*carried,
 * *additional) (a bool scalar tensor or a bool, else "cond_fn must return a boolean scalar tensor
 * or a boolean"); not taken at all: the carried values are cloned; else while should_loop:
 * carried = body_fn(*carried, *additional) (as many results as carried inputs), should_loop =
 * cond_fn again. The result metas are the body's (while_loop_fake_tensor_mode runs the body once).
 * PyTorch has no bound on the trips; here body_fn runs at most ctx->limits.while_iterations times
 * (then an error naming the limit) and Ctrl-C stops the loop between trips.
 * Example: cond (i < n), body (i + 1, v * 0.5 + v.sin()) from (0, x) with n = 3: (3, f(f(f(x)))). */
static int shape_while_loop(ShapeArgs *sa, TensorMeta *out, int *nout) {
    Graph *b = branch(sa, 1);
    if (!branch(sa, 0) || !b) return -1;
    return shape_of_subgraph(sa, b, out, nout);
}

/* The truth of cond_fn's result r, as while_loop_dense's _validate_cond_output accepts it. */
static int while_pred(ShapeArgs *sa, const IValue *r, int nr, bool *pred) {
    if (nr == 1 && r[0].kind == IV_TENSOR && r[0].t->ndim == 0 && r[0].t->dtype == DT_BOOL) { *pred = tensor_get_f(r[0].t, 0) != 0; return 0; }
    if (nr == 1 && r[0].kind == IV_BOOL) { *pred = r[0].i != 0; return 0; }
    return sa_err(sa, "cond_fn must return a boolean scalar tensor or a boolean");
}

static int while_loop_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    Graph *cg = branch(sa, 0), *bg = branch(sa, 1);
    if (!cg || !bg) return -1;
    ArgRef car = sa_arg(sa, 2, "carried_inputs"), add = sa_arg(sa, 3, "additional_inputs");
    int nc = arg_list_len(car), na = add.v || add.iv ? arg_list_len(add) : 0;
    if (nc < 0) return sa_err(sa, "carried_inputs must be a tuple or list");
    if (na < 0) return sa_err(sa, "additional_inputs must be a tuple or list");
    ArgRef *items = mi_xcalloc((size_t)(nc + na + 1), sizeof *items);
    IValue *vals = mi_xcalloc((size_t)(nc + 1), sizeof *vals);   /* the carried values, owned */
    for (int k = 0; k < nc; k++) {
        ArgRef it = arg_item(car, k);
        if (it.iv) ivalue_copy(&vals[k], it.iv);
        else if (it.v && it.v->kind == V_INT) { vals[k].kind = IV_INT; vals[k].i = it.v->i; }
    }
    for (int k = 0; k < na; k++) items[nc + k] = arg_item(add, k);
    int rc = 0, iters = 0;
    bool pred = false;
    for (;;) {
        for (int k = 0; k < nc; k++) items[k] = (ArgRef){.iv = &vals[k]};
        IValue r = {0};
        char what[300];
        snprintf(what, sizeof what, "cond_fn '%s' (iteration %d)", c->args[0].node->target, iters);
        if ((rc = run_subgraph(c, sa, cg, what, items, nc + na, &r))) break;
        rc = while_pred(sa, r.items, r.n, &pred);
        interp_free_outputs(r.items, r.n);
        if (rc || !pred) break;
        if (iters >= c->ctx->limits.while_iterations) {   /* PyTorch loops on; we stop (MiLimits) */
            char hint[160];
            rc = sa_err(sa, "cond_fn '%s' still gives True after %d iterations of body_fn '%s' (%s)", c->args[0].node->target,
                        iters, c->args[1].node->target, mi_limit_hint("while_iterations", iters, hint, sizeof hint));
            break;
        }
        if (mi_interrupted(c->ctx)) {
            rc = mi_err_interrupted(c->ctx, "in while_loop '%s' after %d iterations", sa->node ? sa->node->name : "?", iters);
            break;
        }
        snprintf(what, sizeof what, "body_fn '%s' (iteration %d)", c->args[1].node->target, iters);
        if ((rc = run_subgraph(c, sa, bg, what, items, nc + na, &r))) break;
        if (r.n != nc) {
            interp_free_outputs(r.items, r.n);
            rc = sa_err(sa, "body_fn should return the same number of elements as carried_inputs, got %d vs %d", r.n, nc);
            break;
        }
        interp_free_outputs(vals, nc);
        vals = r.items;
        iters++;
    }
    free(items);
    if (rc) { interp_free_outputs(vals, nc); return -1; }
    for (int k = 0; k < nc && iters == 0; k++)   /* not taken: clones, never the inputs themselves */
        if (vals[k].kind == IV_TENSOR) {
            Tensor *t = tensor_clone(c->ctx, vals[k].t);
            if (!t) { interp_free_outputs(vals, nc); return -1; }
            tensor_unref(vals[k].t);
            vals[k].t = t;
        }
    out->kind = IV_TUPLE;
    out->n = nc;
    out->items = vals;
    return 0;
}
static int while_loop_eval(const OpCall *c, IValue *out) { return ev_call(c, out, while_loop_body); }

/* ---- SymInt helpers ---- */

static int shape_none(ShapeArgs *sa, TensorMeta *out, int *nout) {
    meta_alloc(sa, out, DT_INVALID, 0, (Device){DEV_CPU, -1});
    *nout = 1;
    return 0;
}

static int sym_size_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    Tensor *t = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t d = 0;
    if (!t) return sa_err(sa, "argument 'self' is not a tensor");
    bool numel = strstr(c->op->name, "sym_numel") != NULL;
    if (strstr(c->op->name, "sym_storage_offset")) { out->kind = IV_INT; out->i = t->offset; return 0; }
    if (strstr(c->op->name, "sym_is_contiguous")) { out->kind = IV_BOOL; out->i = tensor_is_contiguous(t); return 0; }
    if (!numel && (sa_const_int(sa, sa_arg(sa, 1, "dim"), "dim", &d) || sa_dim(sa, d, t->ndim, &d))) return -1;
    out->kind = IV_INT;
    out->i = numel ? tensor_numel(t) : strstr(c->op->name, "sym_stride") ? t->stride[d] : t->size[d];
    return 0;
}
static int sym_size_eval(const OpCall *c, IValue *out) { return ev_call(c, out, sym_size_body); }

static int sym_arith_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    double a, b = 0;
    DType ta, tb = DT_I64;
    const char *op = c->op->name + strlen("operator.");
    if (sa_scalar(sa, sa_arg(sa, 0, NULL), "a", &a, &ta)) return -1;
    if (strcmp(op, "neg") && sa_scalar(sa, sa_arg(sa, 1, NULL), "b", &b, &tb)) return -1;
    bool ints = ta != DT_F32 && tb != DT_F32;
    double r;
    if (!strcmp(op, "add")) r = a + b;
    else if (!strcmp(op, "sub")) r = a - b;
    else if (!strcmp(op, "mul")) r = a * b;
    else if (!strcmp(op, "neg")) r = -a;
    else if (!strcmp(op, "truediv")) { r = a / b; ints = false; }
    else if (b == 0) { sa_err(sa, "division by zero"); return -1; }
    else if (!strcmp(op, "floordiv")) r = floor(a / b);
    else r = a - b * floor(a / b);           /* mod */
    if (ints) { out->kind = IV_INT; out->i = (int64_t)r; }
    else { out->kind = IV_FLOAT; out->f = r; }
    return 0;
}
static int sym_arith_eval(const OpCall *c, IValue *out) { return ev_call(c, out, sym_arith_body); }

/* ---- SymBool helpers: comparisons of SymInts (operator.ge ... ne), and_ / or_ / sym_not on
 * SymBools, sym_max / sym_min, and .item() (aten._local_scalar_dense, an unbacked SymInt) ---- */

static int symbool_op_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    double a, b = 0;
    DType ta, tb = DT_I64;
    const char *name = c->op->name, *dot = strrchr(name, '.');
    const char *op = dot ? dot + 1 : name;
    bool unary = !strcmp(op, "sym_not");
    if (sa_scalar(sa, sa_arg(sa, 0, NULL), "a", &a, &ta)) return -1;
    if (!unary && sa_scalar(sa, sa_arg(sa, 1, NULL), "b", &b, &tb)) return -1;
    out->kind = IV_BOOL;
    if (unary) out->i = a == 0;
    else if (!strcmp(op, "ge")) out->i = a >= b;
    else if (!strcmp(op, "gt")) out->i = a > b;
    else if (!strcmp(op, "le")) out->i = a <= b;
    else if (!strcmp(op, "lt")) out->i = a < b;
    else if (!strcmp(op, "eq")) out->i = a == b;
    else if (!strcmp(op, "ne")) out->i = a != b;
    else if (!strcmp(op, "and_") || !strcmp(op, "or_")) {
        bool bools = ta == DT_BOOL && tb == DT_BOOL;
        int64_t x = (int64_t)a, y = (int64_t)b;
        out->i = op[0] == 'a' ? (bools ? (x && y) : (x & y)) : (bools ? (x || y) : (x | y));
        if (!bools) out->kind = IV_INT;
    } else {                                   /* sym_max / sym_min */
        bool ints = ta != DT_F32 && tb != DT_F32;
        double r = !strcmp(op, "sym_max") ? (a > b ? a : b) : (a < b ? a : b);
        if (ints) { out->kind = IV_INT; out->i = (int64_t)r; }
        else { out->kind = IV_FLOAT; out->f = r; }
    }
    return 0;
}
static int symbool_op_eval(const OpCall *c, IValue *out) { return ev_call(c, out, symbool_op_body); }

static int local_scalar_body(ShapeArgs *sa, IValue *out) {
    Tensor *t = ev_tensor(sa_arg(sa, 0, "self"));
    if (!t) { sa_err(sa, "argument 'self' is not a tensor"); return -1; }
    if (tensor_numel(t) != 1) { sa_err(sa, "item() of a tensor with %lld elements (needs exactly one)", (long long)tensor_numel(t)); return -1; }
    double v = tensor_get_f(t, 0);
    if (dtype_is_float(t->dtype)) { out->kind = IV_FLOAT; out->f = v; }
    else if (t->dtype == DT_BOOL) { out->kind = IV_BOOL; out->i = v != 0; }
    else { out->kind = IV_INT; out->i = (int64_t)v; }
    return 0;
}
static int local_scalar_eval(const OpCall *c, IValue *out) { return ev_call(c, out, local_scalar_body); }

/* ---- no-effect ops: asserts check their condition, profiler ops do nothing ---- */

static int noeffect_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    int rc = 0;
    out->kind = IV_NONE;
    if (strstr(c->op->name, "_assert_async") || strstr(c->op->name, "_assert_scalar")) {
        ArgRef a = sa_arg(sa, 0, NULL);
        double v = 1;
        DType t;
        if (arg_is_tensor(sa, a)) v = tensor_numel(ev_tensor(a)) ? tensor_get_f(ev_tensor(a), 0) : 1;
        else if (a.v && sa_scalar(sa, a, "cond", &v, &t)) v = 1;
        if (v == 0) {
            const char *msg = arg_str(sa_arg(sa, 1, "assert_msg"), "assertion failed");
            rc = sa_err(sa, "runtime assertion failed: %s", msg);
        }
    }
    return rc;
}
static int noeffect_eval(const OpCall *c, IValue *out) { return ev_call(c, out, noeffect_body); }

static const CtorSpec c_full = {C_FULL}, c_zeros = {C_ZEROS}, c_ones = {C_ONES}, c_empty = {C_EMPTY},
    c_empty_strided = {C_EMPTY_STRIDED}, c_scalar = {C_SCALAR}, c_full_like = {C_FULL_LIKE},
    c_zeros_like = {C_ZEROS_LIKE}, c_ones_like = {C_ONES_LIKE}, c_empty_like = {C_EMPTY_LIKE},
    c_new_zeros = {C_NEW_ZEROS}, c_new_ones = {C_NEW_ONES}, c_new_empty = {C_NEW_EMPTY}, c_new_full = {C_NEW_FULL},
    c_arange = {C_ARANGE}, c_arange_start = {C_ARANGE_START}, c_arange_step = {C_ARANGE_STEP}, c_iota = {C_IOTA};

#define CTOR(name, spec, doc) {name, OPF_CONSTRUCTOR, op_infer_generic, ctor_eval, doc, shape_ctor, &spec}
#define LIKE(name, spec, doc) {name, 0, op_infer_generic, ctor_eval, doc, shape_ctor, &spec}
#define NOEFF(name, doc) {name, OPF_NOEFFECT, op_infer_generic, noeffect_eval, doc, shape_none, NULL}
#define SYMOP(name, doc) {name, 0, op_infer_generic, sym_arith_eval, doc, shape_none, NULL}
#define BOOLOP(name, doc) {name, 0, op_infer_generic, symbool_op_eval, doc, shape_none, NULL}

/* prims.rev(a, dims) -> empty_like(a, preserve_format) holding a reversed along dims (torch.flip
 * after the refs: _rev_meta). dims are canonical (0 <= d < ndim) and distinct. */
static int rev_args(ShapeArgs *sa, TensorMeta **x, bool *flip) {
    int64_t dims[MI_MAX_DIMS];
    int nd;
    if (sa_tensor(sa, sa_arg(sa, 0, "a"), "a", x) || sa_const_int_list(sa, sa_arg(sa, 1, "dims"), "dims", dims, &nd, MI_MAX_DIMS)) return -1;
    memset(flip, 0, sizeof(bool) * MI_MAX_DIMS);
    for (int k = 0; k < nd; k++) {
        if (dims[k] < 0 || dims[k] >= (*x)->ndim) return sa_err(sa, "dim %lld is out of range for a %d-dim tensor (prims.rev takes canonical dims)", (long long)dims[k], (*x)->ndim);
        if (flip[dims[k]]) return sa_err(sa, "dim %lld appears twice in dims", (long long)dims[k]);
        flip[dims[k]] = true;
    }
    return 0;
}

static int shape_rev(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x;
    bool flip[MI_MAX_DIMS];
    if (rev_args(sa, &x, flip)) return -1;
    meta_like(sa, out, x, x->dtype);
    *nout = 1;
    return 0;
}

/* Element by element through multi-indices, so any dtype and any strides work: out[i] = a[i']
 * with i'[d] = size[d] - 1 - i[d] on the reversed dims. */
static int rev_fill(ShapeArgs *sa, Tensor *o) {
    TensorMeta *x;
    bool flip[MI_MAX_DIMS];
    if (rev_args(sa, &x, flip)) return -1;
    Tensor *a = ev_tensor(sa_arg(sa, 0, NULL));
    size_t es = dtype_size(o->dtype);
    if (dtype_size(a->dtype) != es) return sa_err(sa, "the result's dtype differs from the input's");
    int64_t idx[MI_MAX_DIMS] = {0}, src[MI_MAX_DIMS], total = tensor_numel(o);
    for (int64_t e = 0; e < total; e++) {
        for (int d = 0; d < o->ndim; d++) src[d] = flip[d] ? o->size[d] - 1 - idx[d] : idx[d];
        memcpy(tensor_elem_ptr(o, idx), tensor_elem_ptr(a, src), es);
        for (int d = o->ndim - 1; d >= 0 && ++idx[d] == o->size[d]; d--) idx[d] = 0;
    }
    return 0;
}
static int rev_eval(const OpCall *c, IValue *out) { return ev_run(c, out, rev_fill); }

/* ---- resize ---- */

/* resize_(self, size, memory_format) / resize(...) / resize_as_(self, the_template): self's
 * storage read flat from its offset as a contiguous tensor of the new size (Inductor's resize
 * lowering: as_strided(x, [numel], [1]) masked by the old numel), new elements 0 (what empty
 * gives Inductor). The in-place forms return the resized tensor; functionalize turns them into
 * resize / resize_as. Example: resize_([5, 5, 5] clone, [25, 5]) keeps the 125 values in order. */
static int shape_resize(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *x, *tmpl;
    Expr *size[MI_MAX_DIMS];
    int n;
    *nout = 1;
    bool as = strstr(sa->op->name, "resize_as") != NULL;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x)) return -1;
    if (as) {
        if (sa_tensor(sa, sa_arg(sa, 1, "the_template"), "the_template", &tmpl)) return -1;
        n = tmpl->ndim;
        for (int i = 0; i < n; i++) size[i] = tmpl->size[i];
    } else if (sa_int_list(sa, sa_arg(sa, 1, "size"), "size", size, &n, MI_MAX_DIMS)) return -1;
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (sym_is_int(size[i], &v) && v < 0) return sa_err(sa, "Trying to create tensor with negative dimension %lld", (long long)v);
    }
    const char *mf = NULL;
    ArgRef am = sa_arg(sa, 2, "memory_format");
    if (arg_present(am) && am.v && am.v->kind == V_TORCH) mf = am.v->s;
    if (mf && strstr(mf, "preserve_format")) return sa_err(sa, "unsupported memory format for resize: torch.preserve_format");
    meta_alloc(sa, out, x->dtype, n, x->device);
    for (int i = 0; i < n; i++) out->size[i] = size[i];
    if (mf && strstr(mf, "channels_last") && n == 4) meta_channels_last_strides(sa, out);
    else meta_contiguous_strides(sa, out);
    return 0;
}

static int resize_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    TensorMeta m;
    int nm, rc = -1;
    Tensor *o = NULL;
    if (ev_shape(sa, &m, &nm) || !(o = ev_new(sa, &m))) goto done;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    int64_t old = tensor_numel(x), n = tensor_numel(o);
    int64_t avail = (int64_t)(x->storage->nbytes / dtype_size(x->dtype)) - x->offset;   /* never past the storage */
    for (int64_t k = 0; k < n && k < old && k < avail; k++) tensor_move_elem(o, tensor_pos(o, k), x, x->offset + k);
    if ((c->op->flags & OPF_INPLACE) && o->dtype == x->dtype) {
        /* self itself changes shape, as the TensorImpl does: it keeps its storage when that is
         * large enough (its views still alias it), else it takes the new one */
        x->ndim = o->ndim;
        memcpy(x->size, o->size, sizeof x->size);
        memcpy(x->stride, o->stride, sizeof x->stride);
        if (n > avail) {
            Storage *st = x->storage;
            x->storage = o->storage;
            o->storage = st;
            x->offset = 0;
        }
        tensor_unref(o);
        o = tensor_ref(x);
    }
    ev_out_tensor(out, o);
    o = NULL;
    rc = 0;
done:
    tensor_unref(o);
    return rc;
}
static int resize_eval(const OpCall *c, IValue *out) { return ev_call(c, out, resize_body); }

const OpDef ops_misc_table[] = {
    {"prims.rev.default", 0, op_infer_generic, rev_eval, "reverse the order along dims (torch.flip after the refs)", shape_rev, NULL},
    CTOR("aten.full.default", c_full, "tensor of size filled with fill_value"),
    CTOR("aten.zeros.default", c_zeros, "zeros"),
    CTOR("aten.ones.default", c_ones, "ones"),
    CTOR("aten.empty.memory_format", c_empty, "uninitialized (zeros here)"),
    CTOR("aten.empty_strided.default", c_empty_strided, "uninitialized with strides (zeros here)"),
    CTOR("aten.scalar_tensor.default", c_scalar, "0-dim tensor holding s"),
    CTOR("aten.arange.default", c_arange, "0, 1, ..., end-1"),
    CTOR("aten.arange.start", c_arange_start, "start, start+1, ..., end-1"),
    CTOR("aten.arange.start_step", c_arange_step, "start, start+step, ... < end"),
    CTOR("prims.iota.default", c_iota, "start + step * i for i < length"),
    LIKE("aten.full_like.default", c_full_like, "like self, filled with fill_value"),
    LIKE("aten.zeros_like.default", c_zeros_like, "like self, zeros"),
    LIKE("aten.ones_like.default", c_ones_like, "like self, ones"),
    LIKE("aten.empty_like.default", c_empty_like, "like self, uninitialized (zeros here)"),
    LIKE("aten.new_zeros.default", c_new_zeros, "zeros of size with self's dtype"),
    LIKE("aten.new_ones.default", c_new_ones, "ones of size with self's dtype"),
    LIKE("aten.new_empty.default", c_new_empty, "uninitialized of size with self's dtype"),
    LIKE("aten.new_full.default", c_new_full, "fill_value of size with self's dtype"),
    {"aten.clone.default", OPF_POINTWISE, op_infer_generic, convert_eval, "copy (keeps a dense layout)", shape_convert, NULL},   /* tags: [core, pointwise] */
    {"aten.lift_fresh_copy.default", 0, op_infer_generic, convert_eval, "copy of a constant", shape_convert, NULL},
    {"aten._to_copy.default", 0, op_infer_generic, convert_eval, "copy with another dtype/device", shape_convert, NULL},
    {"aten.to.dtype", 0, op_infer_generic, convert_eval, "copy with another dtype", shape_convert, NULL},
    {"prims.convert_element_type.default", OPF_POINTWISE, op_infer_generic, convert_eval, "cast to dtype", shape_convert, NULL},
    {"prims.device_put.default", 0, op_infer_generic, convert_eval, "copy onto another device (a.to(device))", shape_device_put, NULL},
    {"aten.copy.default", 0, op_infer_generic, copy_eval, "tensor like self with src's values", shape_copy, NULL},
    {"aten.copy_.default", OPF_INPLACE, op_infer_generic, copy_eval, "write src into self (in place)", shape_copy, NULL},
    {"operator.getitem", 0, op_infer_generic, getitem_eval, "item of a tuple result", shape_getitem, NULL},
    {"aten.resize_.default", OPF_INPLACE, op_infer_generic, resize_eval, "self's elements (storage order) as a tensor of size, new ones 0 (in place)", shape_resize, NULL},
    {"aten.resize.default", 0, op_infer_generic, resize_eval, "self's elements (storage order) as a tensor of size, new ones 0", shape_resize, NULL},
    {"aten.resize_as_.default", OPF_INPLACE, op_infer_generic, resize_eval, "resize_ to the template's size (in place)", shape_resize, NULL},
    {"higher_order.cond", OPF_HOP | OPF_TUPLE, op_infer_generic, cond_eval, "run true_graph or false_graph on operands", shape_cond, NULL},
    {"higher_order.while_loop", OPF_HOP | OPF_TUPLE, op_infer_generic, while_loop_eval,
     "run body_fn on the carried values while cond_fn gives True", shape_while_loop, NULL},
    {"higher_order.tag_activation_checkpoint", OPF_HOP | OPF_TUPLE, op_infer_generic, tac_eval,
     "torch.utils.checkpoint region: run the body subgraph on the operands", shape_tac, NULL},
    {"aten.sym_size.int", 0, op_infer_generic, sym_size_eval, "size of a dimension (SymInt)", shape_none, NULL},
    {"aten.sym_stride.int", 0, op_infer_generic, sym_size_eval, "stride of a dimension (SymInt)", shape_none, NULL},
    {"aten.sym_numel.default", 0, op_infer_generic, sym_size_eval, "number of elements (SymInt)", shape_none, NULL},
    {"aten.sym_storage_offset.default", 0, op_infer_generic, sym_size_eval, "storage offset (SymInt)", shape_none, NULL},
    {"aten.sym_is_contiguous.default", 0, op_infer_generic, sym_size_eval, "is the tensor contiguous (SymBool)", shape_none, NULL},
    SYMOP("operator.add", "SymInt a + b"), SYMOP("operator.sub", "SymInt a - b"),
    SYMOP("operator.mul", "SymInt a * b"), SYMOP("operator.floordiv", "SymInt a // b"),
    SYMOP("operator.mod", "SymInt a % b"), SYMOP("operator.neg", "SymInt -a"),
    SYMOP("operator.truediv", "a / b"),
    BOOLOP("operator.ge", "SymBool a >= b"), BOOLOP("operator.gt", "SymBool a > b"),
    BOOLOP("operator.le", "SymBool a <= b"), BOOLOP("operator.lt", "SymBool a < b"),
    BOOLOP("operator.eq", "SymBool a == b"), BOOLOP("operator.ne", "SymBool a != b"),
    BOOLOP("operator.and_", "SymBool a & b"), BOOLOP("operator.or_", "SymBool a | b"),
    BOOLOP("torch.sym_not", "SymBool not a"), BOOLOP("torch.sym_max", "SymInt max(a, b)"),
    BOOLOP("torch.sym_min", "SymInt min(a, b)"),
    {"aten._local_scalar_dense.default", 0, op_infer_generic, local_scalar_eval,
     "item(): the one element as a number (an unbacked SymInt u0)", shape_none, NULL},
    NOEFF("aten._assert_async.msg", "runtime assert on a tensor (removed by passes)"),
    NOEFF("aten._assert_async.default", "runtime assert on a tensor (removed by passes)"),
    NOEFF("aten._assert_scalar.default", "runtime assert on a SymBool (kept by passes; checked at run time)"),
    NOEFF("aten._assert_tensor_metadata.default", "metadata assert (removed by passes)"),
    NOEFF("aten.sym_constrain_range.default", "range hint for an unbacked SymInt"),
    NOEFF("aten.sym_constrain_range_for_size.default", "range hint for an unbacked SymInt"),
    NOEFF("aten._functional_sym_constrain_range.default", "range hint for an unbacked SymInt"),
    NOEFF("profiler._record_function_enter.default", "profiler range start"),
    NOEFF("profiler._record_function_enter_new.default", "profiler range start"),
    NOEFF("profiler._record_function_exit._RecordFunction", "profiler range end"),
    NOEFF("aten._print.default", "debug print (ignored)"),
};
const int ops_misc_count = sizeof ops_misc_table / sizeof ops_misc_table[0];
