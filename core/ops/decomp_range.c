/* decomp_range.c — the range factories Inductor decomposes (torch/_refs linspace / logspace,
 * registered for every overload: default, Tensor_Tensor, Tensor_Scalar, Scalar_Tensor):
 * an int64 arange and one where(), so the reference interpreter, meta inference and the
 * lowering (decompose_graph) all see the same few pointwise ops. A start or end given as a 0-d
 * tensor stays a tensor (refs convert it to float64), so nothing here needs .item(). */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <math.h>
#include <string.h>

/* An end point of the range: a python number (scalar) or a 0-d tensor (node). */
typedef struct RangeEnd { Node *t; Value s; } RangeEnd;

/* Reads end point `pos`: a tensor must be 0-d (refs' torch._check); it is converted to
 * float64 as refs.linspace does (`to_f64`), or to `dt` for logspace's integer dtypes. */
static RangeEnd range_end(DecompB *b, int pos, const char *name, DType to) {
    RangeEnd e = {NULL, value_int(0)};
    const Value *v = db_arg(b, pos, name);
    if (v && v->kind == V_NODE && !v->node->is_sym) {
        e.t = v->node;
        if (db_ndim(b, e.t) != 0) { db_fail(b, "linspace only supports 0-dimensional start and end tensors, but got %s with %d dimension(s)", name, db_ndim(b, e.t)); return e; }
        e.t = db_to(b, e.t, to);
        return e;
    }
    e.s = db_scalar(b, pos, name, value_int(0));
    return e;
}

static double range_num(const RangeEnd *e) {
    double d = 0;
    value_as_double(&e->s, &d);
    return d;
}

/* x + e (x a tensor), e - x */
static Node *add_end(DecompB *b, Node *x, const RangeEnd *e) {
    return e->t ? db_add(b, x, e->t) : db_op(b, "aten.add.Tensor", VN(x), e->s);
}
static Node *end_sub(DecompB *b, const RangeEnd *e, Node *x) {
    return e->t ? db_sub(b, e->t, x) : db_op(b, "aten.rsub.Scalar", VN(x), e->s);
}

static DType range_dtype(DecompB *b, int pos, DType dflt) {
    const Value *v = db_arg(b, pos, "dtype");
    return v && v->kind == V_DTYPE ? v->dtype : dflt;
}

/* refs.linspace(start, end, steps, dtype):
 *     step = (end - start) / (steps - 1)
 *     out  = where(rg < steps / 2, start + step * rg, end - step * ((steps - 1) - rg))
 * with rg = arange(steps) in int64, cast to the computation dtype (f16/bf16 -> f32; integer
 * dtypes compute in int64 and the float step promotes). Counting from both ends keeps
 * out[0] == start and out[-1] == end exactly. Example: linspace(0, 1, 5) = [0, .25, .5, .75, 1]. */
static Node *linspace_build(DecompB *b, const RangeEnd *s, const RangeEnd *e, int64_t steps, DType dt) {
    if (steps < 0) { db_fail(b, "number of steps must be non-negative"); return NULL; }
    if (steps == 0) {
        Kwarg kw[1] = {{"dtype", VDT(dt)}};
        return db_call(b, "aten.full.default", DBV(db_ilist(b, (int64_t[]){0}, 1), VI(0)), kw, 1);
    }
    if (steps == 1) {
        Kwarg kw[1] = {{"dtype", VDT(dt)}};
        if (!s->t) return db_call(b, "aten.full.default", DBV(db_ilist(b, (int64_t[]){1}, 1), s->s), kw, 1);
        Node *empty = db_call(b, "aten.empty.memory_format", DBV(db_ilist(b, (int64_t[]){1}, 1)), kw, 1);
        return db_op(b, "aten.copy.default", VN(empty), VN(s->t));
    }
    bool intlike = dt == DT_BOOL || ev_intlike(dt);
    DType comp = intlike ? DT_I64 : db_opmath(dt);
    Node *rg = db_arange(b, VI(steps), DT_I64);
    Node *step;                                   /* (end - start) / (steps - 1) */
    Value stepv = VNONE;
    if (!s->t && !e->t) stepv = VF((range_num(e) - range_num(s)) / (double)(steps - 1));
    else {
        Node *diff = s->t ? end_sub(b, e, s->t) : db_op(b, "aten.sub.Tensor", VN(e->t), s->s);
        step = db_op(b, "aten.div.Tensor", VN(diff), VI(steps - 1));
        stepv = VN(step);
    }
    Node *lo = db_op(b, "aten.mul.Tensor", VN(db_to(b, rg, comp)), stepv);
    Node *back = db_op(b, "aten.rsub.Scalar", VN(rg), VI(steps - 1));    /* (steps - 1) - rg, int64 */
    Node *hi = db_op(b, "aten.mul.Tensor", VN(db_to(b, back, comp)), stepv);
    Node *cond = db_op(b, "aten.lt.Scalar", VN(rg), VF((double)steps / 2));
    Node *out = db_where(b, cond, add_end(b, lo, s), end_sub(b, e, hi));
    return db_to(b, out, dt);
}

/* linspace.{default,Tensor_Tensor,Tensor_Scalar,Scalar_Tensor}(start, end, steps, *, dtype) */
static int dc_linspace(DecompB *b, Value *outs, int *nout) {
    RangeEnd s = range_end(b, 0, "start", DT_F64), e = range_end(b, 1, "end", DT_F64);
    int64_t steps = db_int(b, 2, "steps", 0);
    if (b->failed) return -1;
    Node *r = linspace_build(b, &s, &e, steps, range_dtype(b, 3, default_float()));
    if (!r || b->failed) return -1;
    outs[0] = VN(r);
    *nout = 1;
    return 0;
}

/* refs.logspace(start, end, steps, base, *, dtype): pow(base, linspace(start, end, steps,
 * dtype=float64)) converted to dtype; for an integer dtype the end points are first truncated
 * to it (NumPy does not). Example: logspace(0, 2, 3) = [1, 10, 100]. */
static int dc_logspace(DecompB *b, Value *outs, int *nout) {
    DType dt = range_dtype(b, 4, default_float());
    bool intlike = ev_intlike(dt);
    RangeEnd s = range_end(b, 0, "start", intlike ? dt : DT_F64), e = range_end(b, 1, "end", intlike ? dt : DT_F64);
    int64_t steps = db_int(b, 2, "steps", 100);
    Value base = db_scalar(b, 3, "base", VF(10.0));
    if (b->failed) return -1;
    if (intlike) {
        if (!s.t && s.s.kind == V_FLOAT) s.s = VI((int64_t)s.s.f);
        if (!e.t && e.s.kind == V_FLOAT) e.s = VI((int64_t)e.s.f);
    }
    Node *r = linspace_build(b, &s, &e, steps, DT_F64);
    r = db_op(b, "aten.pow.Scalar", base, VN(r));
    r = db_to(b, r, dt);
    if (!r || b->failed) return -1;
    outs[0] = VN(r);
    *nout = 1;
    return 0;
}

#define D(name, fn, doc) DECOMP_ROW(name, 0, fn, true, doc)
const OpDef ops_decomp_range_table[] = {
    DECOMP_ROW("aten.linspace.default", OPF_CONSTRUCTOR, dc_linspace, true, "steps evenly spaced values from start to end"),
    D("aten.linspace.Tensor_Tensor", dc_linspace, "linspace with 0-d tensor start and end"),
    D("aten.linspace.Tensor_Scalar", dc_linspace, "linspace with a 0-d tensor start"),
    D("aten.linspace.Scalar_Tensor", dc_linspace, "linspace with a 0-d tensor end"),
    DECOMP_ROW("aten.logspace.default", OPF_CONSTRUCTOR, dc_logspace, true, "base ** linspace(start, end, steps)"),
    D("aten.logspace.Tensor_Tensor", dc_logspace, "logspace with 0-d tensor start and end"),
    D("aten.logspace.Tensor_Scalar", dc_logspace, "logspace with a 0-d tensor start"),
    D("aten.logspace.Scalar_Tensor", dc_logspace, "logspace with a 0-d tensor end"),
};
const int ops_decomp_range_count = sizeof ops_decomp_range_table / sizeof ops_decomp_range_table[0];
