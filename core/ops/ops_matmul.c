/* ops_matmul.c — the extern-kernel family: mm, addmm, bmm, baddbmm and CPU flash attention
 * (aten._scaled_dot_product_flash_attention_for_cpu), and _trilinear (bilinear's contraction). Matrix products go to cblas_sgemm /
 * cblas_dgemm when configure found a CBLAS (HAVE_CBLAS), otherwise to a plain blocked loop
 * that accumulates in double. */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

/* ---- shapes ---- */

static int check_same_dtype(ShapeArgs *sa, const TensorMeta *a, const TensorMeta *b) {
    if (a->dtype != b->dtype)
        return sa_err(sa, "expected both operands to have the same dtype, got %s and %s",
                      dtype_abbrev(a->dtype), dtype_abbrev(b->dtype));
    return 0;
}

/* [n, k] x [k, m] (batch: [b, n, k] x [b, k, m]) */
static int mm_dims(ShapeArgs *sa, TensorMeta *a, TensorMeta *b, int rank, TensorMeta *out) {
    char x[64], y[64];
    if (a->ndim != rank || b->ndim != rank)
        return sa_err(sa, "expects %d-D operands, got %d-D and %d-D", rank, a->ndim, b->ndim);
    if (ex_cmp(sa, a->size[rank - 1], b->size[rank - 2]) != 0)
        return sa_err(sa, "shapes cannot be multiplied: inner sizes %s and %s differ",
                      sym_str(a->size[rank - 1], x, sizeof x), sym_str(b->size[rank - 2], y, sizeof y));
    if (rank == 3 && ex_cmp(sa, a->size[0], b->size[0]) != 0)
        return sa_err(sa, "batch sizes %s and %s differ", sym_str(a->size[0], x, sizeof x), sym_str(b->size[0], y, sizeof y));
    if (check_same_dtype(sa, a, b)) return -1;
    meta_alloc(sa, out, a->dtype, rank, sa->eval ? a->device : sa_first_device(sa));
    if (rank == 3) out->size[0] = a->size[0];
    out->size[rank - 2] = a->size[rank - 2];
    out->size[rank - 1] = b->size[rank - 1];
    meta_contiguous_strides(sa, out);
    return 0;
}

static int shape_mm(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *a, *b;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a) || sa_tensor(sa, sa_arg(sa, 1, "mat2"), "mat2", &b)) return -1;
    return mm_dims(sa, a, b, 2, out);
}

static int shape_bmm(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *a, *b;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a) || sa_tensor(sa, sa_arg(sa, 1, "mat2"), "mat2", &b)) return -1;
    return mm_dims(sa, a, b, 3, out);
}

/* addmm(self, mat1, mat2) / baddbmm(self, batch1, batch2): self broadcasts to the product */
static int shape_addmm_rank(ShapeArgs *sa, TensorMeta *out, int rank) {
    TensorMeta *c, *a, *b;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &c) ||
        sa_tensor(sa, sa_arg(sa, 1, rank == 2 ? "mat1" : "batch1"), rank == 2 ? "mat1" : "batch1", &a) ||
        sa_tensor(sa, sa_arg(sa, 2, rank == 2 ? "mat2" : "batch2"), rank == 2 ? "mat2" : "batch2", &b)) return -1;
    if (mm_dims(sa, a, b, rank, out)) return -1;
    TensorMeta *ins[2] = {c, out};
    Expr *size[MI_MAX_DIMS];
    int nd;
    if (sa_broadcast(sa, ins, 2, size, &nd)) return -1;
    if (nd != rank) return sa_err(sa, "'self' does not broadcast to the product's shape");
    for (int i = 0; i < rank; i++)
        if (ex_cmp(sa, size[i], out->size[i]) != 0) return sa_err(sa, "'self' does not broadcast to the product's shape");
    return check_same_dtype(sa, c, a);
}

static int shape_addmm(ShapeArgs *sa, TensorMeta *out, int *nout) { *nout = 1; return shape_addmm_rank(sa, out, 2); }
static int shape_baddbmm(ShapeArgs *sa, TensorMeta *out, int *nout) { *nout = 1; return shape_addmm_rank(sa, out, 3); }

/* ---- kernel: C[b] = alpha * A[b] @ B[b] + beta * C[b], C contiguous ---- */

static int gemm(ShapeArgs *sa, Tensor *A, Tensor *B, Tensor *C, int batch, double alpha, double beta) {
    int r = A->ndim;
    int64_t n = A->size[r - 2], k = A->size[r - 1], m = B->size[r - 1];
    Tensor *a = tensor_contiguous(sa->ctx, A), *b = a ? tensor_contiguous(sa->ctx, B) : NULL;
    if (!a || !b) { tensor_unref(a); return sa_err(sa, "%s", sa->ctx->err.msg); }
#ifdef HAVE_CBLAS
    if ((C->dtype == DT_F32 || C->dtype == DT_F64) && a->dtype == C->dtype && b->dtype == C->dtype &&
        n < INT32_MAX && m < INT32_MAX && k < INT32_MAX) {
        for (int bi = 0; bi < batch; bi++) {
            if (C->dtype == DT_F32)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)m, (int)k, (float)alpha,
                            (const float *)a->storage->data + bi * n * k, (int)(k ? k : 1),
                            (const float *)b->storage->data + bi * k * m, (int)(m ? m : 1), (float)beta,
                            (float *)C->storage->data + bi * n * m, (int)(m ? m : 1));
            else
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)m, (int)k, alpha,
                            (const double *)a->storage->data + bi * n * k, (int)(k ? k : 1),
                            (const double *)b->storage->data + bi * k * m, (int)(m ? m : 1), beta,
                            (double *)C->storage->data + bi * n * m, (int)(m ? m : 1));
        }
        tensor_unref(a);
        tensor_unref(b);
        return 0;
    }
#endif
    double *row = malloc((size_t)(m ? m : 1) * sizeof *row);
    if (!row) { tensor_unref(a); tensor_unref(b); return sa_err(sa, "out of memory"); }
    bool ints = ev_intlike(C->dtype);
    for (int bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < n; i++) {
            memset(row, 0, (size_t)m * sizeof *row);
            for (int64_t kk = 0; kk < k; kk++) {
                double av = tensor_load_f(a, (bi * n + i) * k + kk);
                if (av == 0) continue;
                int64_t boff = (bi * k + kk) * m;
                for (int64_t j = 0; j < m; j++) row[j] += av * tensor_load_f(b, boff + j);
            }
            int64_t coff = (bi * n + i) * m;
            for (int64_t j = 0; j < m; j++) {
                double prev = beta != 0 ? tensor_load_f(C, coff + j) : 0;
                double v = alpha * row[j] + beta * prev;
                if (ints) tensor_store_i(C, coff + j, (int64_t)llround(v));
                else tensor_store_f(C, coff + j, v);
            }
        }
    free(row);
    tensor_unref(a);
    tensor_unref(b);
    return 0;
}

static int mm_fill(ShapeArgs *sa, Tensor *o) {
    const OpCall *c = sa->call;
    bool add = !strncmp(c->op->name, "aten.addmm", 10) || !strncmp(c->op->name, "aten.baddbmm", 12);
    int first = add ? 1 : 0;
    Tensor *A = ev_tensor(sa_arg(sa, first, NULL)), *B = ev_tensor(sa_arg(sa, first + 1, NULL));
    double alpha = 1, beta = 0;
    if (add) {
        DType t;
        ArgRef aa = sa_arg(sa, 4, "alpha"), ab = sa_arg(sa, 3, "beta");
        beta = 1;
        if (arg_present(aa) && sa_scalar(sa, aa, "alpha", &alpha, &t)) return -1;
        if (arg_present(ab) && sa_scalar(sa, ab, "beta", &beta, &t)) return -1;
        /* C = broadcast(self); beta == 0 ignores self entirely (even nan), as PyTorch does */
        if (beta != 0 && tensor_copy_into(c->ctx, o, ev_tensor(sa_arg(sa, 0, "self")))) { sa_err(sa, "%s", c->ctx->err.msg); return -1; }
    }
    int batch = A->ndim == 3 ? (int)A->size[0] : 1;
    if (gemm(sa, A, B, o, batch, alpha, beta)) return -1;
    return 0;
}
static int mm_eval(const OpCall *c, IValue *out) { return ev_run(c, out, mm_fill); }

/* ---- _trilinear (nn.functional.bilinear) ---- */

/* _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim) (ATen Linear.cpp):
 * each input gets size-1 dims inserted at its expand positions, so all three span total_dim =
 * i1.dim() + len(expand1) dims; the result is sum over `sumdim` of i1 * i2 * i3, the summed dims
 * dropped. bilinear(x1 [B, I], x2 [B, J], W [O, I, J]) is _trilinear(x1, W, x2, [1, 3], [0],
 * [1, 2], [2, 3]): out[b, o] = sum_ij x1[b, i] W[o, i, j] x2[b, j].
 * TriMap: for each input and total dim, the input's own dim or -1 where it was expanded. */
typedef struct TriMap { int total; int own[3][MI_MAX_DIMS]; bool sum[MI_MAX_DIMS]; int64_t size[MI_MAX_DIMS]; } TriMap;

static int tri_map(ShapeArgs *sa, TensorMeta **in, TriMap *tm) {
    int64_t ex[3][MI_MAX_DIMS], sd[MI_MAX_DIMS];
    int nex[3], nsd;
    static const char *names[3] = {"expand1", "expand2", "expand3"};
    memset(tm, 0, sizeof *tm);
    for (int k = 0; k < 3; k++)
        if (sa_const_int_list(sa, sa_arg(sa, 3 + k, names[k]), names[k], ex[k], &nex[k], MI_MAX_DIMS)) return -1;
    if (sa_const_int_list(sa, sa_arg(sa, 6, "sumdim"), "sumdim", sd, &nsd, MI_MAX_DIMS)) return -1;
    int total = in[0]->ndim + nex[0];
    if (total > MI_MAX_DIMS) return sa_err(sa, "too many dimensions");
    tm->total = total;
    for (int k = 0; k < 3; k++) {
        if (in[k]->ndim + nex[k] != total) return sa_err(sa, "number of dimensions of input %d plus %s must be %d", k + 1, names[k], total);
        bool e[MI_MAX_DIMS] = {0};
        for (int j = 0; j < nex[k]; j++) {
            if (ex[k][j] < 0 || ex[k][j] >= total || e[ex[k][j]]) return sa_err(sa, "%s has an invalid or repeated dim", names[k]);
            e[ex[k][j]] = true;
        }
        for (int i = 0, d = 0; i < total; i++) tm->own[k][i] = e[i] ? -1 : d++;
    }
    for (int j = 0; j < nsd; j++) {
        if (sd[j] < 0 || sd[j] >= total) return sa_err(sa, "sumdim %lld out of range", (long long)sd[j]);
        tm->sum[sd[j]] = true;
    }
    for (int i = 0; i < total; i++) {
        tm->size[i] = 1;
        bool set = false;
        for (int k = 0; k < 3; k++) {
            int d = tm->own[k][i];
            if (d < 0) continue;
            int64_t v;
            if (!sym_is_int(in[k]->size[d], &v)) return sa_err(sa, "symbolic sizes are not supported");
            if (set && v != tm->size[i]) return sa_err(sa, "inputs disagree in size at dim %d (%lld and %lld)", i, (long long)tm->size[i], (long long)v);
            tm->size[i] = v;
            set = true;
        }
    }
    return 0;
}

static int shape_trilinear(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *in[3];
    TriMap tm;
    *nout = 1;
    for (int k = 0; k < 3; k++)
        if (sa_tensor(sa, sa_arg(sa, k, k == 0 ? "i1" : k == 1 ? "i2" : "i3"), "input", &in[k])) return -1;
    if (in[1]->dtype != in[0]->dtype || in[2]->dtype != in[0]->dtype) return sa_err(sa, "expected i1, i2 and i3 to have the same dtype");
    if (tri_map(sa, in, &tm)) return -1;
    int nd = 0;
    for (int i = 0; i < tm.total; i++) nd += !tm.sum[i];
    meta_alloc(sa, out, in[0]->dtype, nd, in[0]->device);
    for (int i = 0, j = 0; i < tm.total; i++) if (!tm.sum[i]) out->size[j++] = sym_int(sa->sym, tm.size[i]);
    meta_contiguous_strides(sa, out);
    return 0;
}

/* the reference: every (output, summed) index of the total_dim space, products summed in double */
static int trilinear_fill(ShapeArgs *sa, Tensor *o) {
    TensorMeta *in[3];
    TriMap tm;
    Tensor *t[3];
    for (int k = 0; k < 3; k++) { t[k] = ev_tensor(sa_arg(sa, k, NULL)); sa_tensor(sa, sa_arg(sa, k, NULL), "input", &in[k]); }
    if (tri_map(sa, in, &tm)) return -1;
    int64_t nout = tensor_numel(o), nsum = 1;
    for (int i = 0; i < tm.total; i++) if (tm.sum[i]) nsum *= tm.size[i];
    for (int64_t q = 0; q < nout; q++) {
        double acc = 0;
        for (int64_t r = 0; r < nsum; r++) {
            int64_t idx[MI_MAX_DIMS], qq = q, rr = r;
            for (int i = tm.total - 1; i >= 0; i--) {
                if (tm.sum[i]) { idx[i] = rr % tm.size[i]; rr /= tm.size[i]; }
                else { idx[i] = qq % tm.size[i]; qq /= tm.size[i]; }
            }
            double prod = 1;
            for (int k = 0; k < 3; k++) {
                int64_t lin = 0;
                for (int i = 0; i < tm.total; i++) if (tm.own[k][i] >= 0) lin = lin * t[k]->size[tm.own[k][i]] + idx[i];
                prod *= tensor_get_f(t[k], lin);
            }
            acc += prod;
        }
        tensor_set_f(o, q, acc);
    }
    return 0;
}
static int trilinear_eval(const OpCall *c, IValue *out) { return ev_run(c, out, trilinear_fill); }

const OpDef ops_matmul_table[] = {
    {"aten.mm.default", OPF_EXTERN, op_infer_generic, mm_eval, "matrix product [n,k] @ [k,m]", shape_mm, NULL},
    {"aten.addmm.default", OPF_EXTERN, op_infer_generic, mm_eval, "beta * self + alpha * (mat1 @ mat2)", shape_addmm, NULL},
    {"aten.bmm.default", OPF_EXTERN, op_infer_generic, mm_eval, "batched matrix product [b,n,k] @ [b,k,m]", shape_bmm, NULL},
    {"aten.baddbmm.default", OPF_EXTERN, op_infer_generic, mm_eval, "beta * self + alpha * (batch1 @ batch2)", shape_baddbmm, NULL},
    {"aten._trilinear.default", 0, op_infer_generic, trilinear_eval, "sum over sumdim of i1 * i2 * i3 after inserting the expand dims (bilinear)", shape_trilinear, NULL},
};
const int ops_matmul_count = sizeof ops_matmul_table / sizeof ops_matmul_table[0];
