/* ops_matmul.c — the extern-kernel family: mm, addmm, bmm, baddbmm and CPU flash attention
 * (aten._scaled_dot_product_flash_attention_for_cpu). Matrix products go to cblas_sgemm /
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

static int mm_eval(const OpCall *c, IValue *out) {
    ShapeArgs sa;
    sa_from_call(&sa, c);
    TensorMeta m;
    int n, rc = -1;
    Tensor *o = NULL;
    if (ev_shape(&sa, &m, &n) || !(o = ev_new(&sa, &m))) goto done;
    bool add = !strncmp(c->op->name, "aten.addmm", 10) || !strncmp(c->op->name, "aten.baddbmm", 12);
    int first = add ? 1 : 0;
    Tensor *A = ev_tensor(sa_arg(&sa, first, NULL)), *B = ev_tensor(sa_arg(&sa, first + 1, NULL));
    double alpha = 1, beta = 0;
    if (add) {
        DType t;
        ArgRef aa = sa_arg(&sa, 4, "alpha"), ab = sa_arg(&sa, 3, "beta");
        beta = 1;
        if (arg_present(aa) && sa_scalar(&sa, aa, "alpha", &alpha, &t)) goto done;
        if (arg_present(ab) && sa_scalar(&sa, ab, "beta", &beta, &t)) goto done;
        /* C = broadcast(self); beta == 0 ignores self entirely (even nan), as PyTorch does */
        if (beta != 0 && tensor_copy_into(c->ctx, o, ev_tensor(sa_arg(&sa, 0, "self")))) { sa_err(&sa, "%s", c->ctx->err.msg); goto done; }
    }
    int batch = A->ndim == 3 ? (int)A->size[0] : 1;
    if (gemm(&sa, A, B, o, batch, alpha, beta)) goto done;
    ev_out_tensor(out, o);
    o = NULL;
    rc = 0;
done:
    tensor_unref(o);
    ev_end(&sa);
    return rc;
}

const OpDef ops_matmul_table[] = {
    {"aten.mm.default", OPF_EXTERN, op_infer_generic, mm_eval, "matrix product [n,k] @ [k,m]", shape_mm, NULL},
    {"aten.addmm.default", OPF_EXTERN, op_infer_generic, mm_eval, "beta * self + alpha * (mat1 @ mat2)", shape_addmm, NULL},
    {"aten.bmm.default", OPF_EXTERN, op_infer_generic, mm_eval, "batched matrix product [b,n,k] @ [b,k,m]", shape_bmm, NULL},
    {"aten.baddbmm.default", OPF_EXTERN, op_infer_generic, mm_eval, "beta * self + alpha * (batch1 @ batch2)", shape_baddbmm, NULL},
};
const int ops_matmul_count = sizeof ops_matmul_table / sizeof ops_matmul_table[0];
