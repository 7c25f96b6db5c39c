/* ops_linalg_ext.c — more linear algebra over the last two dims (batched), as ATen computes it:
 *   linalg_matrix_exp   ATen's mexp (LinearAlgebra.cpp): the optimized Taylor polynomials of
 *                       Bader, Blanes & Casas (2019) of degree 1, 2, 4, 8, 12 or 18 picked by the
 *                       1-norm, degree 18 with scaling and squaring beyond (and for batches);
 *   linalg_ldl_factor_ex / linalg_ldl_solve
 *                       LAPACK sytrf / sytrs on the lower triangle (ATen's choice), through
 *                       LAPACKE; pivots are LAPACK's (1-based, negative for 2x2 blocks), as
 *                       torch returns them;
 *   linalg_eig          LAPACK geev (right eigenvectors), complex results as ATen builds them
 *                       from geev's real form (a conjugate pair shares two columns).
 * Matrices are read into row-major double arrays (the arithmetic is done in double); results
 * are written in PyTorch's layouts (the LAPACK outputs column-major). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LAPACKE
#include <lapacke.h>
#endif

enum { LX_MEXP, LX_LDL_FACTOR, LX_LDL_SOLVE, LX_EIG };
typedef struct LxSpec { int kind; } LxSpec;
#define LXKIND(sa) (((const LxSpec *)(sa)->op->data)->kind)

static int square(ShapeArgs *sa, const TensorMeta *a, const char *api, int64_t *n) {
    int64_t m;
    if (a->ndim < 2) return sa_err(sa, "%s: The input tensor A must have at least 2 dimensions.", api);
    if (!sym_is_int(a->size[a->ndim - 2], &m) || !sym_is_int(a->size[a->ndim - 1], n)) return sa_err(sa, "%s: symbolic matrix sizes are not supported", api);
    if (m != *n) return sa_err(sa, "%s: A must be batches of square matrices, but they are %lld by %lld matrices", api, (long long)m, (long long)*n);
    if (!dtype_is_float(a->dtype) || a->dtype == DT_F16 || a->dtype == DT_BF16)
        return sa_err(sa, "%s: Expected a floating point tensor of float32 or float64, got %s", api, dtype_abbrev(a->dtype));
    return 0;
}

static int shape_lx(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *a, *p, *b;
    int64_t n;
    *nout = 1;
    switch (LXKIND(sa)) {
    case LX_MEXP:
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a) || square(sa, a, "linalg.matrix_exp", &n)) return -1;
        linalg_mat_meta(sa, out, a, a->ndim - 2, a->size[a->ndim - 2], a->size[a->ndim - 1], a->dtype, false);
        return 0;
    case LX_LDL_FACTOR:
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a) || square(sa, a, "torch.linalg.ldl_factor_ex", &n)) return -1;
        linalg_mat_meta(sa, &out[0], a, a->ndim - 2, a->size[a->ndim - 2], a->size[a->ndim - 1], a->dtype, true);
        linalg_mat_meta(sa, &out[1], a, a->ndim - 2, a->size[a->ndim - 1], NULL, DT_I32, false);
        linalg_mat_meta(sa, &out[2], a, a->ndim - 2, NULL, NULL, DT_I32, false);
        *nout = 3;
        return 0;
    case LX_EIG: {
        if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a) || square(sa, a, "linalg.eig", &n)) return -1;
        DType cd = a->dtype == DT_F64 ? DT_C128 : DT_C64;
        linalg_mat_meta(sa, &out[0], a, a->ndim - 2, a->size[a->ndim - 1], NULL, cd, false);
        linalg_mat_meta(sa, &out[1], a, a->ndim - 2, a->size[a->ndim - 2], a->size[a->ndim - 1], cd, true);
        *nout = 2;
        return 0;
    }
    default:
        if (sa_tensor(sa, sa_arg(sa, 0, "LD"), "LD", &a) || sa_tensor(sa, sa_arg(sa, 1, "pivots"), "pivots", &p) ||
            sa_tensor(sa, sa_arg(sa, 2, "B"), "B", &b) || square(sa, a, "torch.linalg.ldl_solve", &n)) return -1;
        if (p->dtype != DT_I32) return sa_err(sa, "torch.linalg.ldl_solve: Expected pivots to be integers. Got %s", dtype_abbrev(p->dtype));
        if (p->ndim < 1 || !ex_eq_int(p->size[p->ndim - 1], n)) return sa_err(sa, "torch.linalg.ldl_solve: Expected LD.shape[-1] and pivots.shape[-1] to be the same");
        if (b->ndim < 2) return sa_err(sa, "torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, but it has %d dimensions instead", b->ndim);
        if (!ex_eq_int(b->size[b->ndim - 2], n)) return sa_err(sa, "torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B");
        if (b->dtype != a->dtype) return sa_err(sa, "torch.linalg.ldl_solve: LD dtype %s does not match b dtype %s", dtype_abbrev(a->dtype), dtype_abbrev(b->dtype));
        linalg_mat_meta(sa, out, b, b->ndim - 2, b->size[b->ndim - 2], b->size[b->ndim - 1], b->dtype, true);
        return 0;
    }
}

/* ---- matrix exponential ---- */

/* c = a @ b (n x n, row-major) */
static void mm(const double *a, const double *b, double *c, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

/* out = sum_k w[k] * P[k] over the first np powers */
static void combo(double *out, double *const *P, const double *w, int np, int64_t n) {
    for (int64_t e = 0; e < n * n; e++) {
        double s = 0;
        for (int k = 0; k < np; k++) s += w[k] * P[k][e];
        out[e] = s;
    }
}

/* compute_T{1,2,4,8,12,18}: the degree-d polynomial of A (P = {I, A, A^2, A^3, A^6} as needed) */
static void mexp_poly(int deg, const double *A, double *R, int64_t n) {
    size_t sz = (size_t)(n * n);
    double *P[5], *t1 = calloc(sz, sizeof(double)), *t2 = calloc(sz, sizeof(double)), *t3 = calloc(sz, sizeof(double));
    for (int k = 0; k < 5; k++) P[k] = calloc(sz, sizeof(double));
    for (int64_t i = 0; i < n; i++) P[0][i * n + i] = 1;
    memcpy(P[1], A, sz * sizeof(double));
    mm(P[1], P[1], P[2], n);
    mm(P[1], P[2], P[3], n);
    mm(P[3], P[3], P[4], n);
    if (deg == 1) combo(R, P, (const double[]){1, 1}, 2, n);
    else if (deg == 2) combo(R, P, (const double[]){1, 1, 0.5}, 3, n);
    else if (deg == 4) {        /* I + A + A^2 (I/2 + A/6 + A^2/24) */
        combo(t1, P, (const double[]){1 / 2.0, 1 / 6.0, 1 / 24.0}, 3, n);
        mm(P[2], t1, t2, n);
        combo(R, P, (const double[]){1, 1}, 2, n);
        for (size_t e = 0; e < sz; e++) R[e] += t2[e];
    } else if (deg == 8) {
        const double s177 = 0.1330413469565007072504e+2, x3 = 2. / 3., x1 = x3 * ((1. + s177) / 88.), x2 = x3 * ((1. + s177) / 352.);
        const double x4 = (-271. + 29. * s177) / (315. * x3), x5 = (-11. + 11. * s177) / (1260. * x3);
        const double x6 = (-99. + 11. * s177) / (5040. * x3), x7 = (89. - s177) / (5040. * x3), y2 = (857. - 58. * s177) / 630.;
        double *Q[4] = {P[0], P[1], P[2], t3};
        combo(t1, P + 1, (const double[]){x1, x2}, 2, n);
        mm(P[2], t1, t3, n);                                 /* A4 = A2 (x1 A + x2 A2) */
        combo(t1, Q + 2, (const double[]){x3, 1}, 2, n);     /* x3 A2 + A4 */
        combo(t2, Q, (const double[]){x4, x5, x6, x7}, 4, n);
        mm(t1, t2, R, n);                                    /* A8 */
        combo(t1, P, (const double[]){1, 1, y2}, 3, n);
        for (size_t e = 0; e < sz; e++) R[e] += t1[e];
    } else {
        static const double b12[4][4] = {
            {9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740},
            {5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989},
            {0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230},
            {-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359}};
        static const double b18[5][5] = {
            {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.},
            {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01, -6.37898194594723280150e-04},
            {-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02, -6.98210122488052056106e-03, 3.34975017086070470649e-05},
            {-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02, 2.95552570429315521194e-02, -1.39180257516060693404e-05},
            {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05}};
        int np = deg == 12 ? 4 : 5;
        double *B[5];
        for (int k = 0; k < np; k++) { B[k] = calloc(sz, sizeof(double)); combo(B[k], P, deg == 12 ? b12[k] : b18[k], np, n); }
        if (deg == 12) {         /* B2 += B3 B3; R = B0 + (B1 + B2) B2 */
            mm(B[3], B[3], t1, n);
            for (size_t e = 0; e < sz; e++) { B[2][e] += t1[e]; B[1][e] += B[2][e]; }
            mm(B[1], B[2], t1, n);
            for (size_t e = 0; e < sz; e++) R[e] = B[0][e] + t1[e];
        } else {                 /* B3 += B0 B4; R = B1 + (B2 + B3) B3 */
            mm(B[0], B[4], t1, n);
            for (size_t e = 0; e < sz; e++) { B[3][e] += t1[e]; B[2][e] += B[3][e]; }
            mm(B[2], B[3], t1, n);
            for (size_t e = 0; e < sz; e++) R[e] = B[1][e] + t1[e];
        }
        for (int k = 0; k < np; k++) free(B[k]);
    }
    for (int k = 0; k < 5; k++) free(P[k]);
    free(t1); free(t2); free(t3);
}

/* mexp of one matrix: with `batched` (more than one matrix) always T18 with scaling and squaring,
 * else the lowest degree whose theta bounds the 1-norm (NaN norm -> NaN result).
 * Example: A = [[0, 1], [0, 0]] (norm 1 <= theta12 for f32) gives [[1, 1], [0, 1]]. */
static void mexp_one(const double *A, double *R, int64_t n, bool f32, bool batched) {
    static const double th32[6] = {1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                   5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00};
    static const double th64[6] = {2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                                   4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00};
    static const int degs[5] = {1, 2, 4, 8, 12};
    const double *th = f32 ? th32 : th64;
    double norm = 0;
    for (int64_t j = 0; j < n; j++) {   /* operator 1-norm: the largest column sum of |a| */
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += fabs(A[i * n + j]);
        if (s > norm || isnan(s)) norm = isnan(norm) ? norm : s;
    }
    if (!batched) {
        for (int64_t e = 0; e < n * n; e++) R[e] = NAN;
        for (int i = 0; i < 5; i++)
            if ((i == 0 ? -1.0 : th[i - 1]) < norm && norm <= th[i] && !(i == 4 && norm >= th[4])) { mexp_poly(degs[i], A, R, n); return; }
        if (!(norm >= th[4])) return;
    }
    double s = ceil(log2(norm / th[5]));
    if (!(s > 0)) s = isnan(s) ? s : 0;
    double scale = pow(2, -s), *As = malloc(sizeof(double) * (size_t)(n * n)), *T = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t e = 0; e < n * n; e++) As[e] = A[e] * scale;
    mexp_poly(18, As, R, n);
    for (int64_t k = 0; isfinite(s) && k < (int64_t)s; k++) { mm(R, R, T, n); memcpy(R, T, sizeof(double) * (size_t)(n * n)); }
    free(As);
    free(T);
}

/* ---- eval ---- */

static void get_mat(const Tensor *t, int64_t bi, int64_t r, int64_t c, double *v) {
    int64_t per = r * c, nb = per ? tensor_numel(t) / per : 0;
    if (nb) bi %= nb;
    for (int64_t e = 0; e < per; e++) v[e] = tensor_get_f(t, bi * per + e);
}

static int lx_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[3];
    Tensor *o[3] = {0};
    int nm, rc = -1, kind = LXKIND(sa);
    double *a = NULL, *r = NULL;
    if (ev_shape(sa, m, &nm)) goto done;
    for (int k = 0; k < nm; k++) if (!(o[k] = ev_new(sa, &m[k]))) goto done;
    Tensor *A = ev_tensor(sa_arg(sa, 0, NULL));
    int64_t n = A->size[A->ndim - 1], nb = n ? tensor_numel(A) / (n * n) : 0;
    a = malloc(sizeof(double) * (size_t)(n * n + 1));
    r = malloc(sizeof(double) * (size_t)(n * n + 1));
    if (!a || !r) { sa_err(sa, "out of memory"); goto done; }
    if (kind == LX_MEXP) {
        for (int64_t bi = 0; bi < nb; bi++) {
            get_mat(A, bi, n, n, a);
            if (n == 1) r[0] = exp(a[0]);
            else mexp_one(a, r, n, A->dtype != DT_F64, nb > 1);
            for (int64_t e = 0; e < n * n; e++) tensor_set_f(o[0], bi * n * n + e, r[e]);
        }
    } else {
#ifndef HAVE_LAPACKE
        sa_err(sa, "needs LAPACKE, which configure did not find (apt-get install liblapacke-dev, then ./configure)");
        goto done;
#else
        lapack_int *ip = malloc(sizeof(lapack_int) * (size_t)(n + 1));
        if (!ip) { sa_err(sa, "out of memory"); goto done; }
        if (kind == LX_EIG) {
            double *wr = malloc(sizeof(double) * (size_t)(3 * n + 1)), *wi = wr + n, *vr = malloc(sizeof(double) * (size_t)(n * n + 1));
            for (int64_t bi = 0; wr && vr && bi < nb; bi++) {
                get_mat(A, bi, n, n, r);
                for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < n; j++) a[j * n + i] = r[i * n + j];
                lapack_int info = n ? LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'V', (lapack_int)n, a, (lapack_int)n, wr, wi, NULL, 1, vr, (lapack_int)n) : 0;
                if (info > 0) { free(wr); free(vr); free(ip); sa_err(sa, "linalg.eig: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: %d).", (int)info); goto done; }
                for (int64_t j = 0; j < n; j++) {
                    tensor_store_c(o[0], tensor_pos(o[0], bi * n + j), wr[j], wi[j]);
                    /* a pair wi[j] > 0, wi[j+1] < 0 holds re in column j and im in column j+1 */
                    bool pair_first = wi[j] > 0 && j + 1 < n, pair_second = wi[j] < 0 && j > 0;
                    for (int64_t i = 0; i < n; i++) {
                        double re = vr[(pair_second ? j - 1 : j) * n + i], im = 0;
                        if (pair_first) im = vr[(j + 1) * n + i];
                        if (pair_second) im = -vr[j * n + i];
                        tensor_store_c(o[1], tensor_pos(o[1], bi * n * n + i * n + j), re, im);
                    }
                }
            }
            free(wr);
            free(vr);
        } else if (kind == LX_LDL_FACTOR) {
            for (int64_t bi = 0; bi < nb; bi++) {
                get_mat(A, bi, n, n, r);
                for (int64_t i = 0; i < n; i++)            /* column-major lower triangle: tril(self) */
                    for (int64_t j = 0; j < n; j++) a[j * n + i] = i >= j ? r[i * n + j] : 0;
                lapack_int info = n ? LAPACKE_dsytrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, a, (lapack_int)n, ip) : 0;
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < n; j++) tensor_set_f(o[0], bi * n * n + i * n + j, i >= j ? a[j * n + i] : 0);
                for (int64_t i = 0; i < n; i++) tensor_store_i(o[1], tensor_pos(o[1], bi * n + i), ip[i]);
                tensor_store_i(o[2], tensor_pos(o[2], bi), info);
            }
        } else {
            Tensor *P = ev_tensor(sa_arg(sa, 1, "pivots")), *B = ev_tensor(sa_arg(sa, 2, "B"));
            int64_t k = B->size[B->ndim - 1], nbb = n * k != 0 ? tensor_numel(B) / (n * k) : 0, np = tensor_numel(P) / (n ? n : 1);
            double *bv = malloc(sizeof(double) * (size_t)(n * k + 1)), *bc = malloc(sizeof(double) * (size_t)(n * k + 1));
            for (int64_t bi = 0; bv && bc && bi < nbb; bi++) {
                get_mat(A, bi, n, n, r);
                for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < n; j++) a[j * n + i] = r[i * n + j];
                for (int64_t i = 0; i < n; i++) {
                    int64_t pv = tensor_get_i(P, (np ? bi % np : 0) * n + i);
                    if (pv == 0 || pv > n || pv < -n) { free(bv); free(bc); free(ip); sa_err(sa, "torch.linalg.ldl_solve: pivot %lld is out of range for a %lld x %lld matrix", (long long)pv, (long long)n, (long long)n); goto done; }
                    ip[i] = (lapack_int)pv;
                }
                for (int64_t i = 0; i < n; i++) {   /* a 2x2 block (negative pivot) takes two rows with the same pivot */
                    if (ip[i] > 0) continue;
                    if (i + 1 >= n || ip[i + 1] != ip[i]) { free(bv); free(bc); free(ip); sa_err(sa, "torch.linalg.ldl_solve: pivots are not an LDL factorization's (a negative pivot at %lld without its pair)", (long long)i); goto done; }
                    i++;
                }
                get_mat(B, bi, n, k, bv);
                for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < k; j++) bc[j * n + i] = bv[i * k + j];
                if (n && k) LAPACKE_dsytrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, (lapack_int)k, a, (lapack_int)n, ip, bc, (lapack_int)n);
                for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < k; j++) tensor_set_f(o[0], bi * n * k + i * k + j, bc[j * n + i]);
            }
            free(bv);
            free(bc);
        }
        free(ip);
#endif
    }
    if (nm == 1) ev_out_tensor(out, o[0]);
    else ev_out_tuple(out, o, nm);
    o[0] = o[1] = o[2] = NULL;
    rc = 0;
done:
    for (int k = 0; k < 3; k++) tensor_unref(o[k]);
    free(a);
    free(r);
    return rc;
}
static int lx_eval(const OpCall *c, IValue *out) { return ev_call(c, out, lx_body); }

#define LX(name, kind, flags, doc) {name, (flags), op_infer_generic, lx_eval, doc, shape_lx, &(const LxSpec){kind}}
const OpDef ops_linalg_ext_table[] = {
    LX("aten.linalg_matrix_exp.default", LX_MEXP, OPF_EXTERN, "matrix exponential (ATen's Taylor degrees 1-18, scaling and squaring)"),
    LX("aten.linalg_ldl_factor_ex.default", LX_LDL_FACTOR, OPF_TUPLE | OPF_EXTERN, "(LD, pivots, info) of a symmetric matrix (sytrf, lower)"),
    LX("aten.linalg_eig.default", LX_EIG, OPF_TUPLE | OPF_EXTERN, "(eigenvalues, right eigenvectors), complex (geev)"),
    LX("aten.linalg_ldl_solve.default", LX_LDL_SOLVE, OPF_EXTERN, "X of A X = B from A's LDL factorization (sytrs)"),
};
const int ops_linalg_ext_count = sizeof ops_linalg_ext_table / sizeof ops_linalg_ext_table[0];
