/* decomp_reduce.c — reductions and products PyTorch defines by decomposition (torch/_refs,
 * torch/_decomp/decompositions.py): vector norms (linalg_vector_norm, norm, dist, renorm),
 * count_nonzero, nansum, std_mean, aminmax, var.dim, trace, dot/vdot/mv/addmv/addr,
 * linalg_cross. */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <math.h>
#include <string.h>

static int one(Value *outs, int *nout, Node *x) { outs[0] = value_node(x); *nout = 1; return 0; }
#define RET(x) return one(outs, nout, (x))

/* dims argument: n >= 0 entries, or -1 for "all" (None or []) */
static int dims_arg(DecompB *b, int pos, const char *name, int64_t *dims) {
    int n = db_ints(b, pos, name, dims, MI_MAX_DIMS);
    return n <= 0 ? -1 : n;
}

static Node *reduce(DecompB *b, const char *target, Node *x, const int64_t *dims, int nd, bool keepdim) {
    if (nd < 0) {
        if (!strcmp(target, "aten.sum.dim_IntList")) return db_op(b, target, VN(x), VNONE, VB(keepdim));
        return db_op(b, target, VN(x), db_ilist(b, NULL, 0), VB(keepdim));
    }
    return db_op(b, target, VN(x), db_ilist(b, dims, nd), VB(keepdim));
}

/* refs.linalg_vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None) */
static Node *vector_norm(DecompB *b, Node *x, double ord, const int64_t *dims, int nd, bool keepdim, DType dtype) {
    DType in = db_dtype(b, x);
    if (ev_intlike(in) && dtype == DT_INVALID) { db_fail(b, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s", dtype_abbrev(in)); return NULL; }
    DType result = dtype != DT_INVALID ? dtype : in, compute = db_opmath(result);
    if (ord == 0.0) {
        Node *ne = db_op(b, "aten.ne.Scalar", VN(x), VI(0));
        return db_to(b, db_to(b, reduce(b, "aten.sum.dim_IntList", ne, dims, nd, keepdim), compute), result);
    }
    if (isinf(ord)) {
        Node *m = reduce(b, ord > 0 ? "aten.amax.default" : "aten.amin.default", db_unary(b, "aten.abs.default", x), dims, nd, keepdim);
        return db_to(b, m, result);
    }
    x = db_to(b, x, compute);
    bool even = fmod(ord, 2.0) == 0.0;
    if (!even) x = db_unary(b, "aten.abs.default", x);
    if (ord == 1.0) return db_to(b, reduce(b, "aten.sum.dim_IntList", x, dims, nd, keepdim), result);
    if (ord == 2.0) {
        Node *s = reduce(b, "aten.sum.dim_IntList", db_mul(b, x, x), dims, nd, keepdim);
        return db_to(b, db_unary(b, "aten.sqrt.default", s), result);
    }
    Node *p = db_op(b, "aten.pow.Tensor_Scalar", VN(x), VF(ord));
    Node *s = reduce(b, "aten.sum.dim_IntList", p, dims, nd, keepdim);
    return db_to(b, db_op(b, "aten.pow.Tensor_Scalar", VN(s), VF(1.0 / ord)), result);
}

static DType dtype_kw(DecompB *b, int pos) {
    const Value *v = db_arg(b, pos, "dtype");
    return v && v->kind == V_DTYPE ? v->dtype : DT_INVALID;
}

static int dc_vector_norm(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    double ord = db_float(b, 1, "ord", 2.0);
    int64_t dims[MI_MAX_DIMS];
    int nd = dims_arg(b, 2, "dim", dims);
    RET(vector_norm(b, x, ord, dims, nd, db_bool(b, 3, "keepdim", false), dtype_kw(b, -1)));
}

/* norm.ScalarOpt_dim(self, p, dim, keepdim) / norm.Scalar / norm.ScalarOpt_dim_dtype */
static int dc_norm(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    double p = db_float(b, 1, "p", 2.0);
    int64_t dims[MI_MAX_DIMS];
    int nd = dims_arg(b, 2, "dim", dims);
    RET(vector_norm(b, x, p, dims, nd, db_bool(b, 3, "keepdim", false), dtype_kw(b, 4)));
}

/* dist(a, b, p=2) = norm(a - b, p) */
static int dc_dist(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *y = db_tensor(b, 1, "other");
    RET(vector_norm(b, db_sub(b, x, y), db_float(b, 2, "p", 2.0), NULL, -1, false, DT_INVALID));
}

/* refs.renorm: rows (slices along dim) whose p-norm exceeds maxnorm scaled to maxnorm */
static int dc_renorm(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    double p = db_float(b, 1, "p", 2), maxnorm = db_float(b, 3, "maxnorm", 1);
    int nd = db_ndim(b, x), d = db_wrap_dim(b, db_int(b, 2, "dim", 0), nd);
    int64_t rd[MI_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < nd; i++) if (i != d) rd[n++] = i;
    DType in = db_dtype(b, x), acc = db_opmath(in);
    Node *norm = vector_norm(b, x, p, rd, n, true, acc);
    Node *q = db_op(b, "aten.reciprocal.default", VN(db_op(b, "aten.div.Tensor", VN(db_adds(b, norm, 1e-7)), VF(maxnorm))));
    Node *f = db_op(b, "aten.where.ScalarOther", VN(db_op(b, "aten.gt.Scalar", VN(norm), VF(maxnorm))), VN(q), VF(1.0));
    RET(db_clone(b, db_mul(b, x, db_to(b, f, in))));
}

/* refs.count_nonzero: sum(self != 0, dim) (int64) */
static int dc_count_nonzero(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t dims[MI_MAX_DIMS];
    int nd = dims_arg(b, 1, "dim", dims);
    RET(reduce(b, "aten.sum.dim_IntList", db_op(b, "aten.ne.Scalar", VN(x), VI(0)), dims, nd, false));
}

/* nansum: sum(where(isnan(x), 0, x), dim, keepdim, dtype) */
static int dc_nansum(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t dims[MI_MAX_DIMS];
    int nd = dims_arg(b, 1, "dim", dims);
    Node *z = db_op(b, "aten.where.ScalarSelf", VN(db_unary(b, "aten.isnan.default", x)), VI(0), VN(x));
    Value d = nd < 0 ? VNONE : db_ilist(b, dims, nd);
    DType dt = dtype_kw(b, -1);
    Kwarg kw[1] = {{"dtype", VDT(dt)}};
    RET(db_call(b, "aten.sum.dim_IntList", DBV(VN(z), d, VB(db_bool(b, 2, "keepdim", false))), kw, dt != DT_INVALID));
}

/* std_mean.correction: (sqrt(var), mean) of var_mean */
static int dc_std_mean(DecompB *b, Value *outs, int *nout) {
    Node *vm = db_call(b, "aten.var_mean.correction", b->n->args, b->n->nargs, b->n->kwargs, b->n->nkwargs);
    outs[0] = VN(db_unary(b, "aten.sqrt.default", db_getitem(b, vm, 0)));
    outs[1] = VN(db_getitem(b, vm, 1));
    *nout = 2;
    return b->failed ? -1 : 0;
}

/* aminmax(self, dim=None, keepdim=False) = (amin, amax) */
static int dc_aminmax(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    const Value *dv = db_arg(b, -1, "dim");
    bool keep = db_bool(b, -1, "keepdim", false);
    int64_t d[1];
    int nd = dv && dv->kind != V_NONE ? 1 : -1;
    if (nd == 1) d[0] = db_int(b, -1, "dim", 0);
    outs[0] = VN(reduce(b, "aten.amin.default", x, d, nd, keep));
    outs[1] = VN(reduce(b, "aten.amax.default", x, d, nd, keep));
    *nout = 2;
    return b->failed ? -1 : 0;
}

/* var.dim(self, dim, unbiased=True, keepdim=False) = var.correction with correction 1 or 0 */
static int dc_var_dim(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    const Value *d = db_arg(b, 1, "dim");
    Kwarg kw[2] = {{"correction", VI(db_bool(b, 2, "unbiased", true) ? 1 : 0)}, {"keepdim", VB(db_bool(b, 3, "keepdim", false))}};
    RET(db_call(b, "aten.var.correction", DBV(VN(x), d ? *d : VNONE), kw, 2));
}

/* refs.trace: sum(diagonal(self)) */
static int dc_trace(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    if (db_ndim(b, x) != 2) return db_fail(b, "expected a matrix, got a %d-D tensor", db_ndim(b, x));
    RET(db_op(b, "aten.sum.default", VN(db_op(b, "aten.diagonal.default", VN(x)))));
}

/* decompositions.dot / mv: (self * other).sum() / (self * vec).sum(dim=1); vdot on reals = dot */
static int dc_dot(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *y = db_tensor(b, 1, "other");
    if (db_ndim(b, x) != 1 || db_ndim(b, y) != 1)
        return db_fail(b, "1D tensors expected, but got %dD and %dD tensors", db_ndim(b, x), db_ndim(b, y));
    if (db_dtype(b, x) != db_dtype(b, y))
        return db_fail(b, "dot : expected both vectors to have same dtype, but found %s and %s", dtype_torch_name(db_dtype(b, x)),
                       dtype_torch_name(db_dtype(b, y)));
    RET(db_op(b, "aten.sum.default", VN(db_mul(b, x, y))));
}
static Node *mv(DecompB *b, Node *m, Node *v) {
    int64_t one_[1] = {1};
    return db_sum(b, db_mul(b, m, v), one_, 1, false);
}
static int dc_mv(DecompB *b, Value *outs, int *nout) {
    Node *m = db_tensor(b, 0, "self"), *v = db_tensor(b, 1, "vec");
    if (db_ndim(b, m) != 2 || db_ndim(b, v) != 1) return db_fail(b, "matrix @ vector expected, got %d, %d", db_ndim(b, m), db_ndim(b, v));
    RET(mv(b, m, v));
}

/* addmv(self, mat, vec, beta=1, alpha=1) = alpha * mv(mat, vec) (+ beta * self unless beta == 0) */
static int dc_addmv(DecompB *b, Value *outs, int *nout) {
    Node *s = db_tensor(b, 0, "self"), *m = db_tensor(b, 1, "mat"), *v = db_tensor(b, 2, "vec");
    Value beta = db_scalar(b, -1, "beta", VI(1)), alpha = db_scalar(b, -1, "alpha", VI(1));
    Node *out = db_op(b, "aten.mul.Tensor", VN(mv(b, m, v)), alpha);
    double bv;
    if (value_as_double(&beta, &bv) && bv == 0) RET(out);
    RET(db_add(b, out, db_op(b, "aten.mul.Tensor", VN(s), beta)));
}

/* refs.addr: beta * self + alpha * outer(vec1, vec2) (outer = vec1.reshape(-1, 1) * vec2) */
static int dc_addr(DecompB *b, Value *outs, int *nout) {
    Node *s = db_tensor(b, 0, "self"), *v1 = db_tensor(b, 1, "vec1"), *v2 = db_tensor(b, 2, "vec2");
    Value beta = db_scalar(b, -1, "beta", VI(1)), alpha = db_scalar(b, -1, "alpha", VI(1));
    Node *outer = db_mul(b, db_view(b, v1, db_ilist(b, (int64_t[]){-1, 1}, 2)), v2);
    Node *r = db_op(b, "aten.mul.Tensor", VN(outer), alpha);
    double bv;
    if (value_as_double(&beta, &bv) && bv == 0) RET(db_expand(b, r, db_shape_val(b, s)));
    RET(db_add(b, db_op(b, "aten.mul.Tensor", VN(s), beta), r));
}

/* addbmm(self, batch1, batch2, beta=1, alpha=1) = beta * self + alpha * sum(bmm(batch1, batch2), 0) */
static int dc_addbmm(DecompB *b, Value *outs, int *nout) {
    Node *s = db_tensor(b, 0, "self"), *b1 = db_tensor(b, 1, "batch1"), *b2 = db_tensor(b, 2, "batch2");
    Value beta = db_scalar(b, -1, "beta", VI(1)), alpha = db_scalar(b, -1, "alpha", VI(1));
    int64_t zero = 0;
    Node *r = db_op(b, "aten.mul.Tensor", VN(db_sum(b, db_binary(b, "aten.bmm.default", b1, b2), &zero, 1, false)), alpha);
    double bv;
    if (value_as_double(&beta, &bv) && bv == 0) RET(r);
    RET(db_add(b, db_op(b, "aten.mul.Tensor", VN(s), beta), r));
}

/* _cdist_forward(x1, x2, p, compute_mode): p-norms of x1[..., i, :] - x2[..., j, :] */
static int dc_cdist(DecompB *b, Value *outs, int *nout) {
    Node *x1 = db_tensor(b, 0, "x1"), *x2 = db_tensor(b, 1, "x2");
    double p = db_float(b, 2, "p", 2);
    if (b->failed) return -1;
    if (db_ndim(b, x1) < 2 || db_ndim(b, x2) < 2) return db_fail(b, "cdist only supports at least 2D tensors");
    int64_t last = -1;
    Node *d = db_sub(b, db_unsqueeze(b, x1, -2), db_unsqueeze(b, x2, -3));
    RET(vector_norm(b, d, p, &last, 1, false, DT_INVALID));
}

/* atan2.out(self, other, *, out): out.copy_(atan2(self, other)) */
static int dc_atan2_out(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *y = db_tensor(b, 1, "other"), *o = db_tensor(b, -1, "out");
    RET(db_op(b, "aten.copy_.default", VN(o), VN(db_binary(b, "aten.atan2.default", x, y))));
}

/* refs.linalg_cross: a[(i+1)%3] * b[(i+2)%3] - a[(i+2)%3] * b[(i+1)%3] along dim */
static int dc_cross(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *y = db_tensor(b, 1, "other");
    int nd = db_ndim(b, x) > db_ndim(b, y) ? db_ndim(b, x) : db_ndim(b, y);
    int d = db_wrap_dim(b, db_int(b, 2, "dim", -1), nd);
    Node *ar = db_arange(b, VI(3), DT_I64);
    /* (idx + 1) % 3 in int64, as refs (db_adds adds a float: a float index) */
    Node *p1 = db_op(b, "aten.remainder.Scalar", VN(db_op(b, "aten.add.Tensor", VN(ar), VI(1))), VI(3));
    Node *p2 = db_op(b, "aten.remainder.Scalar", VN(db_op(b, "aten.add.Tensor", VN(ar), VI(2))), VI(3));
    int dx = d - (nd - db_ndim(b, x)), dy = d - (nd - db_ndim(b, y));
    Node *ax1 = db_op(b, "aten.index_select.default", VN(x), VI(dx), VN(p1));
    Node *by2 = db_op(b, "aten.index_select.default", VN(y), VI(dy), VN(p2));
    Node *ax2 = db_op(b, "aten.index_select.default", VN(x), VI(dx), VN(p2));
    Node *by1 = db_op(b, "aten.index_select.default", VN(y), VI(dy), VN(p1));
    RET(db_sub(b, db_mul(b, ax1, by2), db_mul(b, ax2, by1)));
}

#define D(name, flags, fn, ind, doc) DECOMP_ROW(name, flags, fn, ind, doc)
#define DT(name, fn, doc) {name, OPF_TUPLE, op_infer_generic, decomp_eval, doc, decomp_shape, &(const DecompDef){name, fn, true}}
const OpDef ops_decomp_reduce_table[] = {
    D("aten.linalg_vector_norm.default", OPF_REDUCTION, dc_vector_norm, true, "p-norm over dims"),
    D("aten.norm.ScalarOpt_dim", OPF_REDUCTION, dc_norm, true, "p-norm over dims"),
    D("aten.norm.ScalarOpt_dim_dtype", OPF_REDUCTION, dc_norm, true, "p-norm over dims"),
    D("aten.norm.Scalar", OPF_REDUCTION, dc_norm, true, "p-norm of all elements"),
    D("aten.norm.ScalarOpt_dtype", OPF_REDUCTION, dc_norm, true, "p-norm of all elements"),
    D("aten.dist.default", OPF_REDUCTION, dc_dist, true, "p-norm of self - other"),
    D("aten.renorm.default", 0, dc_renorm, true, "slices with p-norm over maxnorm scaled down to it"),
    D("aten.count_nonzero.default", OPF_REDUCTION, dc_count_nonzero, true, "number of nonzero elements"),
    D("aten.count_nonzero.dim_IntList", OPF_REDUCTION, dc_count_nonzero, true, "number of nonzero elements along dims"),
    D("aten.nansum.default", OPF_REDUCTION, dc_nansum, true, "sum treating nan as 0"),
    DT("aten.std_mean.correction", dc_std_mean, "(std, mean)"),
    DT("aten.aminmax.default", dc_aminmax, "(amin, amax)"),
    D("aten.var.dim", OPF_REDUCTION, dc_var_dim, true, "variance over dims (unbiased flag)"),
    D("aten.trace.default", OPF_REDUCTION, dc_trace, true, "sum of the diagonal"),
    D("aten.dot.default", OPF_REDUCTION, dc_dot, true, "inner product of two vectors"),
    D("aten.vdot.default", OPF_REDUCTION, dc_dot, true, "inner product (conjugating self; real here)"),
    D("aten.mv.default", OPF_REDUCTION, dc_mv, true, "matrix @ vector"),
    D("aten.addmv.default", 0, dc_addmv, true, "beta * self + alpha * mat @ vec"),
    D("aten.addr.default", 0, dc_addr, true, "beta * self + alpha * outer(vec1, vec2)"),
    D("aten.linalg_cross.default", 0, dc_cross, true, "cross product of 3-vectors along dim"),
    D("aten.addbmm.default", 0, dc_addbmm, true, "beta * self + alpha * sum of the batch matmuls"),
    D("aten._cdist_forward.default", 0, dc_cdist, false, "p-distances between the rows of x1 and x2"),
    D("aten.atan2.out", OPF_INPLACE, dc_atan2_out, true, "atan2 written into out"),
};
const int ops_decomp_reduce_count = sizeof ops_decomp_reduce_table / sizeof ops_decomp_reduce_table[0];
