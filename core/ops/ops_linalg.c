/* ops_linalg.c — linear algebra over the last two dims (batched over the leading ones), as
 * ATen's CPU kernels do it: with LAPACK, here through LAPACKE (liblapacke-dev; configure's
 * HAVE_LAPACKE — without it every op here is refused, naming the library). Results keep
 * PyTorch's layouts (LAPACK outputs are column-major matrices), info outputs are int32 and
 * _linalg_check_errors turns a nonzero info into PyTorch's message.
 *   _linalg_svd, linalg_qr, _linalg_eigh, linalg_lu_factor_ex, linalg_lu, lu_unpack,
 *   linalg_lu_solve, linalg_inv_ex, _linalg_solve_ex, linalg_cholesky_ex, cholesky,
 *   cholesky_solve, cholesky_inverse, _linalg_det, _linalg_slogdet, linalg_solve_triangular,
 *   triangular_solve, geqrf, linalg_householder_product, ormqr, linalg_lstsq, linalg_pinv */
#include "ops/ops_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LAPACKE
#include <lapacke.h>
#endif

enum { LA_SVD, LA_QR, LA_EIGH, LA_LU_FACTOR, LA_LU, LA_LU_UNPACK, LA_LU_SOLVE, LA_INV, LA_SOLVE, LA_CHOL_EX, LA_CHOL,
       LA_CHOL_SOLVE, LA_CHOL_INV, LA_DET, LA_SLOGDET, LA_SOLVE_TRI, LA_TRI_SOLVE, LA_GEQRF, LA_HOUSEHOLDER, LA_ORMQR,
       LA_LSTSQ, LA_PINV, LA_CHECK };
typedef struct LaSpec { int kind; } LaSpec;
#define KIND(sa) (((const LaSpec *)(sa)->op->data)->kind)

/* ---- metas ---- */

/* batch dims of x plus (r, c), column-major in the last two dims (LAPACK's layout) */
void linalg_mat_meta(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, int nb, Expr *r, Expr *c, DType dt, bool colmajor) {
    int nd = nb + (r ? 1 : 0) + (c ? 1 : 0);
    meta_alloc(sa, out, dt, nd, x->device);
    for (int i = 0; i < nb; i++) out->size[i] = x->size[i];
    int k = nb;
    if (r) out->size[k++] = r;
    if (c) out->size[k++] = c;
    meta_contiguous_strides(sa, out);
    if (colmajor && r && c) {
        SymCtx *S = sa->sym;
        Expr *one = sym_int(S, 1);
        out->stride[nb] = one;
        out->stride[nb + 1] = sym_max(S, r, one);
        Expr *st = sym_mul(S, sym_max(S, r, one), sym_max(S, c, one));
        for (int i = nb - 1; i >= 0; i--) { out->stride[i] = st; st = sym_mul(S, st, sym_max(S, out->size[i], one)); }
    }
}

static Expr *E(ShapeArgs *sa, int64_t v) { return sym_int(sa->sym, v); }

static int dims2(ShapeArgs *sa, const TensorMeta *x, int64_t *m, int64_t *n) {
    if (x->ndim < 2) return sa_err(sa, "expected a tensor with 2 or more dimensions, got %d", x->ndim);
    if (!sym_is_int(x->size[x->ndim - 2], m) || !sym_is_int(x->size[x->ndim - 1], n)) return sa_err(sa, "symbolic matrix sizes are not supported");
    return 0;
}

/* linalg_lu_solve(LU, pivots, B, *, left, adjoint) as ATen's meta function checks it
 * (BatchLinearAlgebra.cpp, TORCH_META_FUNC(linalg_lu_solve)): B of LU's dtype, int32 pivots of
 * shape LU.shape[:-1], B a matrix whose rows (left) or columns (right) match LU's n; X has the
 * batch dims of B and LU broadcast (_linalg_broadcast_batch_dims) and B's matrix dims,
 * column-major when left, row-major otherwise. LU is square (checked by the caller).
 * Example: LU [2, 4, 4], pivots [2, 4], B [4, 3] -> X [2, 4, 3] strides [12, 1, 4]. */
static int shape_lu_solve(ShapeArgs *sa, TensorMeta *out, const TensorMeta *lu) {
    TensorMeta *p, *b;
    if (sa_tensor(sa, sa_arg(sa, 1, "pivots"), "pivots", &p) || sa_tensor(sa, sa_arg(sa, 2, "B"), "B", &b)) return -1;
    if (b->dtype != lu->dtype)
        return sa_err(sa, "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type %s and B of type %s instead",
                      dtype_abbrev(lu->dtype), dtype_abbrev(b->dtype));
    if (p->dtype != DT_I32) return sa_err(sa, "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
    if (b->ndim < 2) return sa_err(sa, "linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
    bool left = arg_bool(sa_arg(sa, -1, "left"), true);
    int nl = lu->ndim, nb = b->ndim;
    if (left ? b->size[nb - 2] != lu->size[nl - 2] : b->size[nb - 1] != lu->size[nl - 1]) {
        char ls[64], br[64], bc[64];
        return sa_err(sa, "linalg.lu_solve: Incompatible shapes of A and B for the equation %s (%sx%s and %sx%s)",
                      left ? "AX = B" : "XA = B", sym_str(lu->size[nl - 2], ls, sizeof ls), ls,
                      sym_str(b->size[nb - 2], br, sizeof br), sym_str(b->size[nb - 1], bc, sizeof bc));
    }
    if (p->ndim < 1 || p->size[p->ndim - 1] != lu->size[nl - 1])
        return sa_err(sa, "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
    bool same = p->ndim == nl - 1;
    for (int i = 0; same && i < nl - 1; i++) same = p->size[i] == lu->size[i];
    if (!same) return sa_err(sa, "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same");
    TensorMeta bb = *b, bl = *lu, bat = *b;
    bb.ndim = nb - 2;
    bl.ndim = nl - 2;
    Expr *size[MI_MAX_DIMS];
    int nd = 0;
    if (sa_broadcast(sa, (TensorMeta *const[]){&bb, &bl}, 2, size, &nd)) return -1;
    bat.size = size;
    linalg_mat_meta(sa, out, &bat, nd, b->size[nb - 2], b->size[nb - 1], b->dtype, left);
    return 0;
}

static int shape_linalg(ShapeArgs *sa, TensorMeta *out, int *nout) {
    int kind = KIND(sa);
    TensorMeta *a, *b;
    int64_t m, n;
    *nout = 1;
    if (kind == LA_CHECK) { meta_alloc(sa, out, DT_INVALID, 0, (Device){DEV_CPU, -1}); return 0; }
    if (sa_tensor(sa, sa_arg(sa, 0, "A"), "A", &a) || dims2(sa, a, &m, &n)) return -1;
    int nb = a->ndim - 2;
    int64_t k = m < n ? m : n;
    DType dt = a->dtype;
    if (!dtype_is_float(dt) || dt == DT_F16 || dt == DT_BF16)
        return sa_err(sa, "linear algebra needs a float32 or float64 tensor, got %s", dtype_abbrev(dt));
    Expr *M = a->size[nb], *N = a->size[nb + 1], *K = E(sa, k);
    bool square = kind == LA_CHOL || kind == LA_CHOL_INV || kind == LA_DET || kind == LA_SLOGDET || kind == LA_SOLVE ||
                  kind == LA_LU_SOLVE || kind == LA_SOLVE_TRI || (kind == LA_PINV && arg_bool(sa_arg(sa, 3, "hermitian"), false));
    if (square && m != n) return sa_err(sa, "A must be batches of square matrices, but they are %lld by %lld matrices", (long long)m, (long long)n);
    if (kind == LA_LU_SOLVE) return shape_lu_solve(sa, out, a);
    if (kind == LA_LU_UNPACK || kind == LA_HOUSEHOLDER || kind == LA_ORMQR) {
        /* pivots / tau: an int / float vector per matrix, at least min(m, n) (tau: its own length) long */
        TensorMeta *p;
        if (sa_tensor(sa, sa_arg(sa, 1, kind == LA_HOUSEHOLDER ? "tau" : kind == LA_ORMQR ? "input2" : "pivots"), "pivots", &p)) return -1;
        int64_t pn, need = kind == LA_HOUSEHOLDER || kind == LA_ORMQR ? 0 : k, nbat = 1, pb = 1;
        if (p->ndim < 1 || !sym_is_int(p->size[p->ndim - 1], &pn) || pn < need) return sa_err(sa, "pivots/tau must have at least %lld entries per matrix", (long long)need);
        for (int i = 0; i < nb; i++) { int64_t v; if (sym_is_int(a->size[i], &v)) nbat *= v; }
        for (int i = 0; i < p->ndim - 1; i++) { int64_t v; if (sym_is_int(p->size[i], &v)) pb *= v; }
        if (pb < nbat) return sa_err(sa, "pivots/tau have fewer batches than the matrices");
        if ((kind == LA_HOUSEHOLDER || kind == LA_ORMQR) && pn > k) return sa_err(sa, "tau has more entries than min(m, n)");
    }
    switch (kind) {
    case LA_SVD: {
        bool full = arg_bool(sa_arg(sa, 1, "full_matrices"), false), uv = arg_bool(sa_arg(sa, 2, "compute_uv"), true);
        if (uv) { linalg_mat_meta(sa, &out[0], a, nb, M, full ? M : K, dt, true); linalg_mat_meta(sa, &out[2], a, nb, full ? N : K, N, dt, true); }
        else { linalg_mat_meta(sa, &out[0], a, 0, E(sa, 0), NULL, dt, false); linalg_mat_meta(sa, &out[2], a, 0, E(sa, 0), NULL, dt, false); }
        linalg_mat_meta(sa, &out[1], a, nb, K, NULL, dt, false);
        *nout = 3;
        return 0;
    }
    case LA_QR: {
        const char *mode = arg_str(sa_arg(sa, 1, "mode"), "reduced");
        bool complete = !strcmp(mode, "complete"), ronly = !strcmp(mode, "r");
        if (ronly) linalg_mat_meta(sa, &out[0], a, 0, E(sa, 0), NULL, dt, false);
        else linalg_mat_meta(sa, &out[0], a, nb, M, complete ? M : K, dt, true);
        linalg_mat_meta(sa, &out[1], a, nb, complete || ronly ? (complete ? M : K) : K, N, dt, true);
        *nout = 2;
        return 0;
    }
    case LA_EIGH:
        if (m != n) return sa_err(sa, "A must be batches of square matrices, but they are %lld by %lld matrices", (long long)m, (long long)n);
        linalg_mat_meta(sa, &out[0], a, nb, N, NULL, dt, false);
        if (arg_bool(sa_arg(sa, 2, "compute_v"), true)) linalg_mat_meta(sa, &out[1], a, nb, N, N, dt, true);
        else linalg_mat_meta(sa, &out[1], a, 0, E(sa, 0), NULL, dt, false);
        *nout = 2;
        return 0;
    case LA_LU_FACTOR:
        linalg_mat_meta(sa, &out[0], a, nb, M, N, dt, true);
        linalg_mat_meta(sa, &out[1], a, nb, K, NULL, DT_I32, false);
        linalg_mat_meta(sa, &out[2], a, nb, NULL, NULL, DT_I32, false);
        *nout = 3;
        return 0;
    case LA_LU: case LA_LU_UNPACK:
        linalg_mat_meta(sa, &out[0], a, nb, M, M, dt, false);
        linalg_mat_meta(sa, &out[1], a, nb, M, K, dt, false);
        linalg_mat_meta(sa, &out[2], a, nb, K, N, dt, false);
        *nout = 3;
        return 0;
    case LA_INV: case LA_CHOL_EX:
        if (m != n) return sa_err(sa, "A must be batches of square matrices, but they are %lld by %lld matrices", (long long)m, (long long)n);
        linalg_mat_meta(sa, &out[0], a, nb, M, N, dt, true);
        linalg_mat_meta(sa, &out[1], a, nb, NULL, NULL, DT_I32, false);
        *nout = 2;
        return 0;
    case LA_CHOL: case LA_CHOL_INV:
        linalg_mat_meta(sa, &out[0], a, nb, M, N, dt, kind == LA_CHOL);
        return 0;
    case LA_DET: case LA_SLOGDET: {
        int s = kind == LA_SLOGDET;
        linalg_mat_meta(sa, &out[0], a, nb, NULL, NULL, dt, false);
        if (s) linalg_mat_meta(sa, &out[1], a, nb, NULL, NULL, dt, false);
        linalg_mat_meta(sa, &out[1 + s], a, nb, M, N, dt, true);
        linalg_mat_meta(sa, &out[2 + s], a, nb, K, NULL, DT_I32, false);
        *nout = 3 + s;
        return 0;
    }
    case LA_GEQRF:
        linalg_mat_meta(sa, &out[0], a, nb, M, N, dt, true);
        linalg_mat_meta(sa, &out[1], a, nb, K, NULL, dt, false);
        *nout = 2;
        return 0;
    case LA_HOUSEHOLDER:
        linalg_mat_meta(sa, &out[0], a, nb, M, N, dt, true);
        return 0;
    case LA_PINV:
        linalg_mat_meta(sa, &out[0], a, nb, N, M, dt, false);
        return 0;
    default: break;
    }
    /* ops with a right-hand side B (argument 1, or 2 for ormqr) */
    int bpos = kind == LA_ORMQR ? 2 : 1;
    if (sa_tensor(sa, sa_arg(sa, bpos, "B"), "B", &b)) return -1;
    if (kind == LA_TRI_SOLVE || kind == LA_CHOL_SOLVE) {   /* (B, A) order: A is the second argument */
        TensorMeta *t = a; a = b; b = t;
        if (dims2(sa, a, &m, &n)) return -1;
        nb = a->ndim - 2;
        k = m < n ? m : n;
        M = a->size[nb]; N = a->size[nb + 1]; K = E(sa, k);
    }
    if (b->ndim < 1) return sa_err(sa, "B must have at least one dimension");
    bool vec = kind == LA_SOLVE && b->ndim == a->ndim - 1;
    if (vec) { linalg_mat_meta(sa, &out[0], b, b->ndim - 1, b->size[b->ndim - 1], NULL, dt, false); }
    else if (b->ndim < 2) return sa_err(sa, "B must be a matrix (or a batch of them)");
    else {
        int bb = b->ndim - 2;
        Expr *R = b->size[bb], *C = b->size[bb + 1];
        if (kind == LA_LSTSQ) R = N;
        linalg_mat_meta(sa, &out[0], b, bb, R, C, dt, kind != LA_ORMQR);
    }
    switch (kind) {
    case LA_SOLVE:
        linalg_mat_meta(sa, &out[1], a, nb, M, N, dt, true);
        linalg_mat_meta(sa, &out[2], a, nb, K, NULL, DT_I32, false);
        linalg_mat_meta(sa, &out[3], a, nb, NULL, NULL, DT_I32, false);
        *nout = 4;
        break;
    case LA_TRI_SOLVE:
        linalg_mat_meta(sa, &out[1], a, nb, M, N, dt, true);
        *nout = 2;
        break;
    case LA_LSTSQ: {
        const char *drv = arg_str(sa_arg(sa, -1, "driver"), "gelsy");
        linalg_mat_meta(sa, &out[1], a, 0, E(sa, 0), NULL, dt, false);
        if (!strcmp(drv, "gels")) linalg_mat_meta(sa, &out[2], a, 0, E(sa, 0), NULL, DT_I64, false);   /* gels computes no rank */
        else linalg_mat_meta(sa, &out[2], a, nb, NULL, NULL, DT_I64, false);
        linalg_mat_meta(sa, &out[3], a, 0, E(sa, 0), NULL, dt, false);
        *nout = 4;
        break;
    }
    default: break;
    }
    return 0;
}

/* ---- matrices in and out ---- */

typedef struct Mat { int64_t r, c; double *v; } Mat;     /* row-major */

/* matrix `bi` of t (batch index over the leading dims; broadcast when t has fewer batches) */
static Mat mat_get(const Tensor *t, int64_t bi, bool vec) {
    Mat M;
    M.r = vec ? t->size[t->ndim - 1] : t->size[t->ndim - 2];
    M.c = vec ? 1 : t->size[t->ndim - 1];
    int64_t per = M.r * M.c, nb = per ? tensor_numel(t) / per : 0;
    M.v = mi_xcalloc((size_t)(per ? per : 1), sizeof *M.v);
    if (nb) bi %= nb;
    for (int64_t e = 0; e < per; e++) M.v[e] = tensor_get_f(t, bi * per + e);
    return M;
}
static void mat_put(Tensor *t, int64_t bi, const double *v, int64_t r, int64_t c) {
    for (int64_t e = 0; e < r * c; e++) tensor_set_f(t, bi * r * c + e, v[e]);
}
static int64_t batches(const Tensor *t, int dims) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim - dims; i++) n *= t->size[i];
    return n;
}

#ifdef HAVE_LAPACKE
static void triangle(double *a, int64_t r, int64_t c, bool keep_upper, bool unit) {
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) {
            if (keep_upper ? j < i : j > i) a[i * c + j] = 0;
            if (unit && i == j) a[i * c + j] = 1;
        }
}

static void transpose(double *dst, const double *src, int64_t r, int64_t c) {
    for (int64_t i = 0; i < r; i++) for (int64_t j = 0; j < c; j++) dst[j * r + i] = src[i * c + j];
}

/* P, L, U of an LU factorization (getrf's 1-based row swaps in piv) */
static void lu_unpack(const double *lu, const int *piv, int64_t m, int64_t n, double *P, double *L, double *U) {
    int64_t k = m < n ? m : n;
    int64_t *perm = mi_xcalloc((size_t)(m ? m : 1), sizeof *perm);
    for (int64_t i = 0; i < m; i++) perm[i] = i;
    for (int64_t i = 0; i < k; i++) { int64_t j = piv[i] - 1, t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    if (P) { memset(P, 0, sizeof *P * (size_t)(m * m)); for (int64_t i = 0; i < m; i++) P[perm[i] * m + i] = 1; }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) L[i * k + j] = i == j ? 1 : i > j ? lu[i * n + j] : 0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++) U[i * n + j] = j >= i ? lu[i * n + j] : 0;
    free(perm);
}
#endif

#ifdef HAVE_LAPACKE
/* Linear index of the batch of `in` (batch dims right-aligned, size-1 dims broadcast) that batch
 * ob of out (nbo batch dims) reads. Example: out batches [2, 3], in [3]: ob 4 -> 1. */
static int64_t bcast_batch(const Tensor *out, int nbo, const Tensor *in, int64_t ob) {
    int nbi = in->ndim - 2;
    int64_t idx = 0, mul = 1;
    for (int d = nbo - 1; d >= 0; d--) {
        int64_t k = ob % out->size[d];
        ob /= out->size[d];
        int di = d - (nbo - nbi);
        if (di < 0) continue;
        idx += (in->size[di] == 1 ? 0 : k) * mul;
        mul *= in->size[di];
    }
    return idx;
}

/* X of linalg_lu_solve into X (laid out by shape_lu_solve): for each batch of X, getrs with
 * the LU and pivots of the LU batch it broadcasts from, on the B batch it broadcasts from;
 * adjoint solves LU^T; left=False solves X op(A) = B as op(A)^T X^T = B^T. The pivots are
 * checked first, as ATen's CPU kernel does (lu_solve_kernel: LAPACK would write out of
 * bounds), with its messages. Example: LU, pivots = lu_factor(A); B = A @ X0 gives X0. */
static int lu_solve_eval(ShapeArgs *sa, Tensor *X) {
    Tensor *LU = ev_tensor(sa_arg(sa, 0, "LU")), *pv = ev_tensor(sa_arg(sa, 1, "pivots")), *B = ev_tensor(sa_arg(sa, 2, "B"));
    bool adj = arg_bool(sa_arg(sa, -1, "adjoint"), false), left = arg_bool(sa_arg(sa, -1, "left"), true);
    int64_t n = LU->size[LU->ndim - 1];
    for (int64_t e = 0; e < tensor_numel(pv); e++) {
        int64_t v = tensor_get_i(pv, e);
        if (v < 1) return sa_err(sa, "Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the result of lu_factor?");
        if (v > n) return sa_err(sa, "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly pass the result of lu_factor?");
    }
    int nbo = X->ndim - 2;
    int64_t r = X->size[nbo], c = X->size[nbo + 1], nout = batches(X, 2);
    lapack_int *ip = mi_xcalloc((size_t)(n + 1), sizeof *ip);
    double *bt = mi_xcalloc((size_t)(r * c + 1), sizeof *bt);
    for (int64_t ob = 0; ob < nout; ob++) {
        int64_t li = bcast_batch(X, nbo, LU, ob);
        Mat a = mat_get(LU, li, false), bm = mat_get(B, bcast_batch(X, nbo, B, ob), false);
        for (int64_t i = 0; i < n; i++) ip[i] = (lapack_int)tensor_get_i(pv, li * n + i);
        if (n && r && c) {
            if (left) LAPACKE_dgetrs(LAPACK_ROW_MAJOR, adj ? 'T' : 'N', n, c, a.v, n, ip, bm.v, c);
            else {
                transpose(bt, bm.v, r, c);
                LAPACKE_dgetrs(LAPACK_ROW_MAJOR, adj ? 'N' : 'T', n, r, a.v, n, ip, bt, r);
                transpose(bm.v, bt, c, r);
            }
        }
        mat_put(X, ob, bm.v, r, c);
        free(a.v);
        free(bm.v);
    }
    free(ip);
    free(bt);
    return 0;
}
#endif

static int la_body(ShapeArgs *sa, IValue *out) {
    int kind = KIND(sa), rc = -1, nm = 0;
    TensorMeta m[OP_MAX_OUTS];
    Tensor *o[4] = {0};
    if (kind == LA_CHECK) {
        Tensor *info = ev_tensor(sa_arg(sa, 0, "info"));
        const char *api = arg_str(sa_arg(sa, 1, "api_name"), "linalg");
        for (int64_t e = 0; info && e < tensor_numel(info); e++) {
            int64_t v = tensor_get_i(info, e);
            if (v < 0) { sa_err(sa, "%s: argument %lld has an illegal value", api, (long long)-v); goto done; }
            if (v > 0) {
                sa_err(sa, "%s: %s", api, strstr(api, "cholesky") ? "The factorization could not be completed because the input is not positive-definite"
                                                                : "The diagonal element of the factorization is zero, the matrix is singular");
                goto done;
            }
        }
        out->kind = IV_NONE;
        rc = 0;
        goto done;
    }
#ifndef HAVE_LAPACKE
    sa_err(sa, "needs LAPACKE, which configure did not find (apt-get install liblapacke-dev, then ./configure)");
    goto done;
#else
    if (ev_shape(sa, m, &nm)) goto done;
    for (int k = 0; k < nm; k++) if (!(o[k] = ev_new(sa, &m[k]))) goto done;
    if (kind == LA_LU_SOLVE) {
        if (lu_solve_eval(sa, o[0]) < 0) goto done;
        ev_out_tensor(out, o[0]);
        o[0] = NULL;
        rc = 0;
        goto done;
    }
    Tensor *A = ev_tensor(sa_arg(sa, 0, "A"));
    int64_t nbat = batches(A, 2), ar = A->size[A->ndim - 2], ac = A->size[A->ndim - 1], k = ar < ac ? ar : ac;
    for (int64_t bi = 0; bi < nbat || (bi == 0 && kind == LA_SOLVE && nbat == 0); bi++) {
        Mat a = mat_get(A, bi, false);
        double *w = mi_xcalloc((size_t)(ar * ar + ac * ac + ar * ac + 8 * (ar + ac) + 8), sizeof *w);
        lapack_int *ip = mi_xcalloc((size_t)(ar + ac + 8), sizeof *ip);
        lapack_int info = 0;
        switch (kind) {
        case LA_SVD: {
            bool full = arg_bool(sa_arg(sa, 1, "full_matrices"), false), uv = arg_bool(sa_arg(sa, 2, "compute_uv"), true);
            int64_t uc = full ? ar : k, vr = full ? ac : k;
            double *U = mi_xcalloc((size_t)(ar * ar + 1), sizeof *U), *VT = mi_xcalloc((size_t)(ac * ac + 1), sizeof *VT);
            if (ar && ac) info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, uv ? (full ? 'A' : 'S') : 'N', ar, ac, a.v, ac, w, U, uv ? uc : 1, VT, ac);
            mat_put(o[1], bi, w, k, 1);
            if (uv) { mat_put(o[0], bi, U, ar, uc); mat_put(o[2], bi, VT, vr, ac); }
            free(U); free(VT);
            break;
        }
        case LA_QR: case LA_GEQRF: case LA_HOUSEHOLDER: {
            const char *mode = kind == LA_QR ? arg_str(sa_arg(sa, 1, "mode"), "reduced") : "reduced";
            bool complete = !strcmp(mode, "complete"), ronly = !strcmp(mode, "r");
            double *tau = w;
            if (kind == LA_HOUSEHOLDER) {
                Tensor *T = ev_tensor(sa_arg(sa, 1, "tau"));
                int64_t nt = T->size[T->ndim - 1];
                for (int64_t i = 0; i < nt; i++) tau[i] = tensor_get_f(T, bi * nt + i);
                if (ar && ac) info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, ar, ac, nt, a.v, ac, tau);
                mat_put(o[0], bi, a.v, ar, ac);
                break;
            }
            if (ar && ac) info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, ar, ac, a.v, ac, tau);
            if (kind == LA_GEQRF) { mat_put(o[0], bi, a.v, ar, ac); mat_put(o[1], bi, tau, k, 1); break; }
            int64_t rr = complete ? ar : k;
            double *R = mi_xcalloc((size_t)(rr * ac + 1), sizeof *R);
            for (int64_t i = 0; i < rr; i++) for (int64_t j = i; j < ac; j++) if (i < ar) R[i * ac + j] = a.v[i * ac + j];
            mat_put(o[1], bi, R, rr, ac);
            free(R);
            if (!ronly) {
                int64_t qc = complete ? ar : k;
                double *Q = mi_xcalloc((size_t)(ar * (ar > ac ? ar : ac) + 1), sizeof *Q);
                for (int64_t i = 0; i < ar; i++) for (int64_t j = 0; j < qc && j < ac; j++) Q[i * qc + j] = a.v[i * ac + j];
                if (ar && qc) info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, ar, qc, k, Q, qc, tau);
                mat_put(o[0], bi, Q, ar, qc);
                free(Q);
            }
            break;
        }
        case LA_EIGH: {
            const char *uplo = arg_str(sa_arg(sa, 1, "UPLO"), "L");
            bool v = arg_bool(sa_arg(sa, 2, "compute_v"), true);
            if (ar) info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, v ? 'V' : 'N', uplo[0] == 'U' ? 'U' : 'L', ar, a.v, ac, w);
            mat_put(o[0], bi, w, ar, 1);
            if (v) mat_put(o[1], bi, a.v, ar, ac);
            break;
        }
        case LA_LU_FACTOR: case LA_LU: case LA_LU_UNPACK: case LA_INV: case LA_DET: case LA_SLOGDET: {
            if (kind == LA_LU_UNPACK) {      /* the factorization is given: LU_data, LU_pivots */
                Tensor *pv = ev_tensor(sa_arg(sa, 1, "LU_pivots"));
                for (int64_t i = 0; i < k; i++) ip[i] = (lapack_int)tensor_get_i(pv, bi * k + i);
                for (int64_t i = 0; i < k; i++)
                    if (ip[i] < 1 || ip[i] > ar) { sa_err(sa, "pivot %d is out of range [1, %lld]", (int)ip[i], (long long)ar); free(a.v); free(w); free(ip); goto done; }
            } else if (ar && ac) info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, ar, ac, a.v, ac, ip);
            if (kind == LA_LU_FACTOR) {
                mat_put(o[0], bi, a.v, ar, ac);
                for (int64_t i = 0; i < k; i++) tensor_store_i(o[1], tensor_pos(o[1], bi * k + i), ip[i]);
                tensor_store_i(o[2], tensor_pos(o[2], bi), info);
            } else if (kind == LA_LU || kind == LA_LU_UNPACK) {
                double *P = mi_xcalloc((size_t)(ar * ar + 1), sizeof *P), *L = mi_xcalloc((size_t)(ar * k + 1), sizeof *L),
                       *U = mi_xcalloc((size_t)(k * ac + 1), sizeof *U);
                lu_unpack(a.v, ip, ar, ac, P, L, U);
                mat_put(o[0], bi, P, ar, ar); mat_put(o[1], bi, L, ar, k); mat_put(o[2], bi, U, k, ac);
                free(P); free(L); free(U);
            } else if (kind == LA_INV) {
                if (info == 0 && ar) info = LAPACKE_dgetri(LAPACK_ROW_MAJOR, ar, a.v, ac, ip);
                mat_put(o[0], bi, a.v, ar, ac);
                tensor_store_i(o[1], tensor_pos(o[1], bi), info);
            } else {
                double det = 1, logabs = 0, sign = 1;
                for (int64_t i = 0; i < ar; i++) {
                    double d = a.v[i * ac + i];
                    det *= d * (ip[i] != i + 1 ? -1 : 1);
                    if (ip[i] != i + 1) sign = -sign;
                    sign *= d < 0 ? -1 : d > 0 ? 1 : 0;
                    logabs += log(fabs(d));
                }
                int s = kind == LA_SLOGDET;
                tensor_set_f(o[0], bi, s ? sign : det);
                if (s) tensor_set_f(o[1], bi, sign == 0 ? -INFINITY : logabs);
                mat_put(o[1 + s], bi, a.v, ar, ac);
                for (int64_t i = 0; i < k; i++) tensor_store_i(o[2 + s], tensor_pos(o[2 + s], bi * k + i), ip[i]);
                info = 0;
            }
            break;
        }
        case LA_CHOL_EX: case LA_CHOL: case LA_CHOL_INV: {
            bool upper = arg_bool(sa_arg(sa, kind == LA_CHOL_EX ? -1 : 1, "upper"), false);
            if (kind == LA_CHOL_INV) {
                triangle(a.v, ar, ac, upper, false);
                if (ar) info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, upper ? 'U' : 'L', ar, a.v, ac);
                for (int64_t i = 0; i < ar; i++) for (int64_t j = 0; j < ac; j++)   /* symmetric: fill the other triangle */
                    if (upper ? j < i : j > i) a.v[i * ac + j] = a.v[j * ac + i];
            } else {
                if (ar) info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, upper ? 'U' : 'L', ar, a.v, ac);
                triangle(a.v, ar, ac, upper, false);
            }
            mat_put(o[0], bi, a.v, ar, ac);
            if (kind == LA_CHOL_EX) tensor_store_i(o[1], tensor_pos(o[1], bi), info);
            else if (info > 0) { sa_err(sa, "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite)", (int)info); free(a.v); free(w); free(ip); goto done; }
            info = 0;
            break;
        }
        case LA_PINV: {
            if (arg_bool(sa_arg(sa, 3, "hermitian"), false)) {   /* eigh: V diag(1/l) V^T over |l| > threshold */
                if (ar) info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', ar, a.v, ac, w);
                double atol = 0, rtol = -1, lmax = 0;
                Tensor *ta = ev_tensor(sa_arg(sa, 1, "atol")), *tr = ev_tensor(sa_arg(sa, 2, "rtol"));
                if (ta) atol = tensor_get_f(ta, tensor_numel(ta) > 1 ? bi : 0);
                if (tr) rtol = tensor_get_f(tr, tensor_numel(tr) > 1 ? bi : 0);
                if (rtol < 0) rtol = ta && atol > 0 ? 0 : (A->dtype == DT_F32 ? FLT_EPSILON : DBL_EPSILON) * (double)ar;
                for (int64_t i = 0; i < ar; i++) if (fabs(w[i]) > lmax) lmax = fabs(w[i]);
                double th = atol > rtol * lmax ? atol : rtol * lmax;
                double *P = mi_xcalloc((size_t)(ar * ar + 1), sizeof *P);
                for (int64_t i = 0; i < ar; i++)
                    for (int64_t j = 0; j < ar; j++) {
                        double sum = 0;
                        for (int64_t q = 0; q < ar; q++) if (fabs(w[q]) > th) sum += a.v[i * ac + q] / w[q] * a.v[j * ac + q];
                        P[i * ar + j] = sum;
                    }
                mat_put(o[0], bi, P, ar, ar);
                free(P);
                break;
            }
            double *U = mi_xcalloc((size_t)(ar * k + 1), sizeof *U), *VT = mi_xcalloc((size_t)(k * ac + 1), sizeof *VT);
            if (ar && ac) info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', ar, ac, a.v, ac, w, U, k, VT, ac);
            double atol = 0, rtol = -1, smax = 0;
            Tensor *ta = ev_tensor(sa_arg(sa, 1, "atol")), *tr = ev_tensor(sa_arg(sa, 2, "rtol"));
            if (ta) atol = tensor_get_f(ta, tensor_numel(ta) > 1 ? bi : 0);
            if (tr) rtol = tensor_get_f(tr, tensor_numel(tr) > 1 ? bi : 0);
            if (rtol < 0) rtol = ta && atol > 0 ? 0 : (A->dtype == DT_F32 ? FLT_EPSILON : DBL_EPSILON) * (double)(ar > ac ? ar : ac);
            for (int64_t i = 0; i < k; i++) if (w[i] > smax) smax = w[i];
            double th = atol > rtol * smax ? atol : rtol * smax;
            double *P = mi_xcalloc((size_t)(ac * ar + 1), sizeof *P);
            for (int64_t i = 0; i < ac; i++)
                for (int64_t j = 0; j < ar; j++) {
                    double s = 0;
                    for (int64_t q = 0; q < k; q++) if (w[q] > th) s += VT[q * ac + i] / w[q] * U[j * k + q];
                    P[i * ar + j] = s;
                }
            mat_put(o[0], bi, P, ac, ar);
            free(U); free(VT); free(P);
            break;
        }
        default: {   /* with a right-hand side */
            int bpos = kind == LA_ORMQR ? 2 : 1;
            Tensor *B = ev_tensor(sa_arg(sa, bpos, "B"));
            Mat A2 = a;
            if (kind == LA_TRI_SOLVE || kind == LA_CHOL_SOLVE) {   /* triangular_solve(b, A) / cholesky_solve(b, L): A is arg 1 */
                Tensor *t = B; B = A; A = t;
                free(a.v);
                A2 = mat_get(A, bi, false);
            }
            bool vec = kind == LA_SOLVE && B->ndim == A->ndim - 1;
            int64_t bb = batches(B, vec ? 1 : 2);
            for (int64_t q = 0; q < (bb > nbat ? bb : 1) && (q == 0 || bb > nbat); q++) {
                int64_t which = bb > nbat ? q : bi;
                Mat bm = mat_get(B, which, vec);
                int64_t n2 = A2.r, nrhs = bm.c;
                /* the right-hand side must fit the matrix (LAPACK would read past the buffers) */
                bool left_ = kind == LA_SOLVE || kind == LA_SOLVE_TRI ? arg_bool(sa_arg(sa, -1, "left"), true)
                           : kind == LA_ORMQR ? arg_bool(sa_arg(sa, 3, "left"), true) : true;
                bool square = kind != LA_ORMQR && kind != LA_LSTSQ;
                int64_t along = left_ || vec ? bm.r : bm.c;
                if ((square && A2.r != A2.c) || along != A2.r) {
                    sa_err(sa, "incompatible shapes: A is %lld x %lld, B is %lld x %lld", (long long)A2.r, (long long)A2.c, (long long)bm.r, (long long)bm.c);
                    free(bm.v); free(A2.v); free(w); free(ip); goto done;
                }
                switch (kind) {
                case LA_SOLVE: {
                    bool left = arg_bool(sa_arg(sa, -1, "left"), true);
                    double *At = NULL;
                    if (!left) { At = mi_xcalloc((size_t)(n2 * n2 + 1), sizeof *At); transpose(At, A2.v, n2, n2); memcpy(A2.v, At, sizeof *At * (size_t)(n2 * n2)); }
                    double *bt = NULL;
                    if (!left) { bt = mi_xcalloc((size_t)(bm.r * bm.c + 1), sizeof *bt); transpose(bt, bm.v, bm.r, bm.c); free(bm.v); bm.v = bt; int64_t t = bm.r; bm.r = bm.c; bm.c = t; nrhs = bm.c; }
                    if (n2) info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, n2, nrhs, A2.v, n2, ip, bm.v, nrhs);
                    if (!left) { double *r = mi_xcalloc((size_t)(bm.r * bm.c + 1), sizeof *r); transpose(r, bm.v, bm.r, bm.c); free(bm.v); bm.v = r; int64_t t = bm.r; bm.r = bm.c; bm.c = t; }
                    free(At);
                    mat_put(o[0], which, bm.v, bm.r, bm.c);
                    if (which == bi) {
                        mat_put(o[1], bi, A2.v, n2, n2);
                        for (int64_t i = 0; i < n2; i++) tensor_store_i(o[2], tensor_pos(o[2], bi * n2 + i), ip[i]);
                        tensor_store_i(o[3], tensor_pos(o[3], bi), info);
                    }
                    break;
                }
                case LA_SOLVE_TRI: case LA_TRI_SOLVE: {
                    bool upper = arg_bool(sa_arg(sa, kind == LA_SOLVE_TRI ? -1 : 2, "upper"), true);
                    bool trans = kind == LA_TRI_SOLVE && arg_bool(sa_arg(sa, 3, "transpose"), false);
                    bool unit = arg_bool(sa_arg(sa, kind == LA_SOLVE_TRI ? -1 : 4, "unitriangular"), false);
                    bool left = kind == LA_TRI_SOLVE || arg_bool(sa_arg(sa, -1, "left"), true);
                    if (left) {
                        if (n2) info = LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, upper ? 'U' : 'L', trans ? 'T' : 'N', unit ? 'U' : 'N', n2, nrhs, A2.v, n2, bm.v, nrhs);
                    } else {   /* X A = B  <=>  A^T X^T = B^T */
                        double *bt = mi_xcalloc((size_t)(bm.r * bm.c + 1), sizeof *bt);
                        transpose(bt, bm.v, bm.r, bm.c);
                        if (n2) info = LAPACKE_dtrtrs(LAPACK_ROW_MAJOR, upper ? 'U' : 'L', 'T', unit ? 'U' : 'N', n2, bm.r, A2.v, n2, bt, bm.r);
                        transpose(bm.v, bt, bm.c, bm.r);
                        free(bt);
                    }
                    mat_put(o[0], which, bm.v, bm.r, bm.c);
                    if (kind == LA_TRI_SOLVE && which == bi) mat_put(o[1], bi, A2.v, n2, n2);
                    info = 0;
                    break;
                }
                case LA_CHOL_SOLVE: {
                    bool upper = arg_bool(sa_arg(sa, 2, "upper"), false);
                    if (n2) info = LAPACKE_dpotrs(LAPACK_ROW_MAJOR, upper ? 'U' : 'L', n2, nrhs, A2.v, n2, bm.v, nrhs);
                    mat_put(o[0], which, bm.v, bm.r, bm.c);
                    break;
                }
                case LA_ORMQR: {
                    Tensor *T = ev_tensor(sa_arg(sa, 1, "input2"));
                    int64_t nt = T->size[T->ndim - 1];
                    for (int64_t i = 0; i < nt; i++) w[i] = tensor_get_f(T, bi * nt + i);
                    bool left = arg_bool(sa_arg(sa, 3, "left"), true), trans = arg_bool(sa_arg(sa, 4, "transpose"), false);
                    if (bm.r && bm.c) info = LAPACKE_dormqr(LAPACK_ROW_MAJOR, left ? 'L' : 'R', trans ? 'T' : 'N', bm.r, bm.c, nt, A2.v, A2.c, w, bm.v, bm.c);
                    mat_put(o[0], which, bm.v, bm.r, bm.c);
                    break;
                }
                case LA_LSTSQ: {
                    int64_t mm = A2.r, nn = A2.c, ld = mm > nn ? mm : nn;
                    double *X = mi_xcalloc((size_t)(ld * nrhs + 1), sizeof *X);
                    memcpy(X, bm.v, sizeof *X * (size_t)(bm.r * bm.c));
                    lapack_int rank = 0;
                    double rcond = -1;
                    ArgRef rc_ = sa_arg(sa, 2, "rcond");
                    DType t;
                    if (arg_present(rc_)) sa_scalar(sa, rc_, "rcond", &rcond, &t);
                    if (rcond < 0) rcond = (A->dtype == DT_F32 ? FLT_EPSILON : DBL_EPSILON) * (double)ld;
                    lapack_int *jp = mi_xcalloc((size_t)(nn + 1), sizeof *jp);
                    if (mm && nn) info = LAPACKE_dgelsy(LAPACK_ROW_MAJOR, mm, nn, nrhs, A2.v, nn, X, nrhs, jp, rcond, &rank);
                    mat_put(o[0], which, X, nn, nrhs);
                    if (which == bi && tensor_numel(o[2]) > bi) tensor_store_i(o[2], tensor_pos(o[2], bi), rank);
                    free(X); free(jp);
                    break;
                }
                }
                free(bm.v);
            }
            free(A2.v);
            a.v = NULL;
            break;
        }
        }
        free(a.v);
        free(w);
        free(ip);
        if (info < 0) { sa_err(sa, "LAPACK reported an illegal argument %d", (int)-info); goto done; }
    }
    if (nm == 1) ev_out_tensor(out, o[0]);
    else ev_out_tuple(out, o, nm);
    memset(o, 0, sizeof o);
    rc = 0;
#endif
done:
    for (int k2 = 0; k2 < 4; k2++) tensor_unref(o[k2]);
    return rc;
}
static int la_eval(const OpCall *c, IValue *out) { return ev_call(c, out, la_body); }

#define LA(name, kind, flags, doc) {name, (flags), op_infer_generic, la_eval, doc, shape_linalg, &(const LaSpec){kind}}
const OpDef ops_linalg_table[] = {
    LA("aten._linalg_svd.default", LA_SVD, OPF_TUPLE | OPF_EXTERN, "(U, S, Vh) singular value decomposition (LAPACK gesdd)"),
    LA("aten.linalg_qr.default", LA_QR, OPF_TUPLE | OPF_EXTERN, "(Q, R) QR decomposition (geqrf + orgqr)"),
    LA("aten._linalg_eigh.default", LA_EIGH, OPF_TUPLE | OPF_EXTERN, "(eigenvalues, eigenvectors) of a symmetric matrix (syevd)"),
    LA("aten.linalg_lu_factor_ex.default", LA_LU_FACTOR, OPF_TUPLE | OPF_EXTERN, "(LU, pivots, info) (getrf)"),
    LA("aten.linalg_lu.default", LA_LU, OPF_TUPLE | OPF_EXTERN, "(P, L, U) (getrf, unpacked)"),
    LA("aten.lu_unpack.default", LA_LU_UNPACK, OPF_TUPLE | OPF_EXTERN, "(P, L, U) of an LU factorization and its pivots"),
    LA("aten.linalg_inv_ex.default", LA_INV, OPF_TUPLE | OPF_EXTERN, "(inverse, info) (getrf + getri)"),
    LA("aten._linalg_solve_ex.default", LA_SOLVE, OPF_TUPLE | OPF_EXTERN, "(X, LU, pivots, info) of A X = B (gesv)"),
    LA("aten.linalg_lu_solve.default", LA_LU_SOLVE, OPF_EXTERN, "X of A X = B from A's LU factorization (getrs)"),
    LA("aten.linalg_cholesky_ex.default", LA_CHOL_EX, OPF_TUPLE | OPF_EXTERN, "(L, info) Cholesky factor (potrf)"),
    LA("aten.cholesky.default", LA_CHOL, OPF_EXTERN, "Cholesky factor (potrf)"),
    LA("aten.cholesky_solve.default", LA_CHOL_SOLVE, OPF_EXTERN, "X of A X = B from A's Cholesky factor (potrs)"),
    LA("aten.cholesky_inverse.default", LA_CHOL_INV, OPF_EXTERN, "inverse from a Cholesky factor (potri)"),
    LA("aten._linalg_det.default", LA_DET, OPF_TUPLE | OPF_EXTERN, "(det, LU, pivots) (getrf)"),
    LA("aten._linalg_slogdet.default", LA_SLOGDET, OPF_TUPLE | OPF_EXTERN, "(sign, log|det|, LU, pivots) (getrf)"),
    LA("aten.linalg_solve_triangular.default", LA_SOLVE_TRI, OPF_EXTERN, "X of a triangular system (trtrs)"),
    LA("aten.triangular_solve.default", LA_TRI_SOLVE, OPF_TUPLE | OPF_EXTERN, "(X, A) of a triangular system (trtrs)"),
    LA("aten.geqrf.default", LA_GEQRF, OPF_TUPLE | OPF_EXTERN, "(a, tau) Householder QR (geqrf)"),
    LA("aten.linalg_householder_product.default", LA_HOUSEHOLDER, OPF_EXTERN, "Q from Householder reflectors (orgqr)"),
    LA("aten.ormqr.default", LA_ORMQR, OPF_EXTERN, "Q C or C Q from Householder reflectors (ormqr)"),
    LA("aten.linalg_lstsq.default", LA_LSTSQ, OPF_TUPLE | OPF_EXTERN, "(solution, residuals, rank, singular_values) least squares (gelsy)"),
    LA("aten.linalg_pinv.atol_rtol_tensor", LA_PINV, OPF_EXTERN, "pseudo-inverse from the SVD"),
    LA("aten._linalg_check_errors.default", LA_CHECK, OPF_NOEFFECT, "fails when a LAPACK info is nonzero"),
};
const int ops_linalg_count = sizeof ops_linalg_table / sizeof ops_linalg_table[0];
