/* test_lu_solve.c — aten.linalg_lu_solve as ATen defines it (BatchLinearAlgebra.cpp's meta
 * function and CPU kernel), on values derived by hand: A X = B, A^T X = B (adjoint), X A = B
 * (left=False), LU batches broadcast against B, the result's layout (column-major when left),
 * ATen's errors (pivots out of [1, n], shapes); and the producer of LU and pivots in a training
 * step: a backward graph's inputs made by running its forward (interp_random_inputs_from_forward),
 * as glow's invertible 1x1 convolution needs (slogdet saves LU and pivots, the backward solves). */
#include "ops/interp.h"
#include "ops/ops_impl.h"
#include "tap.h"
#include "tests/support/op_graph.h"

#include <string.h>

static MiCtx *ctx;

static Tensor *TD(DType dt, int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals[i]);
    return t;
}

/* output k of g on ins (borrowed): a new reference, or NULL with the error in err */
static Tensor *run_k(Graph *g, Tensor **ins, int n, int k, char *err, size_t nerr) {
    IValue in[8] = {0}, *outs = NULL;
    int nouts = 0;
    for (int i = 0; i < n; i++) { in[i].kind = IV_TENSOR; in[i].t = tensor_ref(ins[i]); }
    Tensor *r = NULL;
    err[0] = 0;
    if (g && interp_run(ctx, g, in, n, &outs, &nouts) == 0 && k < nouts && outs[k].kind == IV_TENSOR) r = tensor_ref(outs[k].t);
    else mi_err_str(ctx, err, nerr);
    mi_clear_err(ctx);
    interp_free_outputs(outs, nouts);
    for (int i = 0; i < n; i++) tensor_unref(in[i].t);
    return r;
}

#define FACTOR "        f = torch.ops.aten.linalg_lu_factor_ex.default(a)\n        lu = f[0]\n        piv = f[1]\n"

/* lu_factor then lu_solve with the given kwargs: A = [[4, 3], [6, 3]], B = [[1, 2], [3, 4]] */
static void solve2(const char *kw, const char *name, const double *want) {
    char body[512];
    snprintf(body, sizeof body, FACTOR "        r = torch.ops.aten.linalg_lu_solve.default(lu, piv, b%s)\n", kw);
    Graph *g = og_graph(ctx, "a: \"f32[2, 2][2, 1]cpu\", b: \"f32[2, 2][2, 1]cpu\"", body, "r");
    Tensor *a = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){4, 3, 6, 3}), *b = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    char e[2048];
    Tensor *r = run_k(g, (Tensor *[]){a, b}, 2, 0, e, sizeof e);
    if (!ok(r && og_values(r, want, 4, 1e-5), "%s", name) && !r) diag("%s", e);
    tensor_unref(r); tensor_unref(a); tensor_unref(b);
    graph_free(g);
}

static void test_values(void) {
    solve2("", "A X = B: X = A^-1 B = [[1, 1], [-1, -2/3]]", (double[]){1, 1, -1, -2.0 / 3});
    solve2(", adjoint = True", "adjoint: A^T X = B: X = [[5/2, 3], [-3/2, -5/3]]", (double[]){2.5, 3, -1.5, -5.0 / 3});
    solve2(", left = False", "left=False: X A = B: X = B A^-1 = [[3/2, -5/6], [5/2, -7/6]]", (double[]){1.5, -5.0 / 6, 2.5, -7.0 / 6});
    solve2(", left = False, adjoint = True", "left=False, adjoint: X A^T = B: X = [[1/2, -1/3], [1/2, 1/3]]",
           (double[]){0.5, -1.0 / 3, 0.5, 1.0 / 3});
}

/* LU of a batch {A, 2A} against one B: X broadcasts to the batch, X[1] = X[0] / 2; its layout
 * is column-major per matrix (ATen: batched_matrix_contiguous_strides(column_major=left)) */
static void test_broadcast_and_layout(void) {
    Graph *g = og_graph(ctx, "a: \"f32[2, 2, 2][4, 2, 1]cpu\", b: \"f32[2, 2][2, 1]cpu\"",
                        FACTOR "        r = torch.ops.aten.linalg_lu_solve.default(lu, piv, b)\n"
                               "        q = torch.ops.aten.linalg_lu_solve.default(lu, piv, b, left = False)\n", "r, q");
    Tensor *a = TD(DT_F32, 3, (int64_t[]){2, 2, 2}, (double[]){4, 3, 6, 3, 8, 6, 12, 6});
    Tensor *b = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    char e[2048];
    Tensor *r = run_k(g, (Tensor *[]){a, b}, 2, 0, e, sizeof e);
    ok(r && r->ndim == 3 && r->size[0] == 2 && og_values(r, (double[]){1, 1, -1, -2.0 / 3, 0.5, 0.5, -0.5, -1.0 / 3}, 8, 1e-5),
       "LU batch [2] against B without batch: X [2, 2, 2], X[1] = X[0] / 2");
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    const Node *rn = g ? graph_find(g, "r") : NULL, *qn = g ? graph_find(g, "q") : NULL;
    int64_t st[3];
    bool colmajor = rn && op_infer_meta(ctx, g, rn, m, &nm) == 0 && m[0].ndim == 3 && sym_is_int(m[0].stride[0], &st[0]) &&
                    sym_is_int(m[0].stride[1], &st[1]) && sym_is_int(m[0].stride[2], &st[2]) && st[0] == 4 && st[1] == 1 && st[2] == 2;
    ok(colmajor, "left: X is laid out [4, 1, 2] (column-major matrices)");
    nm = OP_MAX_OUTS;
    bool rowmajor = qn && op_infer_meta(ctx, g, qn, m, &nm) == 0 && m[0].ndim == 3 && sym_is_int(m[0].stride[0], &st[0]) &&
                    sym_is_int(m[0].stride[1], &st[1]) && sym_is_int(m[0].stride[2], &st[2]) && st[0] == 4 && st[1] == 2 && st[2] == 1;
    ok(rowmajor, "left=False: X is laid out [4, 2, 1] (row-major)");
    tensor_unref(r); tensor_unref(a); tensor_unref(b);
    graph_free(g);
}

/* ATen's checks: pivots in [1, n] (the CPU kernel's messages), B's rows, pivots' shape */
static void test_errors(void) {
    Graph *g = og_graph(ctx, "lu: \"f32[2, 2][1, 2]cpu\", piv: \"i32[2][1]cpu\", b: \"f32[2, 2][2, 1]cpu\"",
                        "        r = torch.ops.aten.linalg_lu_solve.default(lu, piv, b)\n", "r");
    Tensor *lu = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){6, 3, 2.0 / 3, 1}), *b = TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    Tensor *zero = TD(DT_I32, 1, (int64_t[]){2}, (double[]){0, 0}), *big = TD(DT_I32, 1, (int64_t[]){2}, (double[]){2, 3});
    char e[2048];
    Tensor *r = run_k(g, (Tensor *[]){lu, zero, b}, 3, 0, e, sizeof e);
    ok(!r && strstr(e, "Pivots given to lu_solve must all be greater or equal to 1"), "pivots 0 (rand_strided's ints): ATen's error: %s", e);
    r = run_k(g, (Tensor *[]){lu, big, b}, 3, 0, e, sizeof e);
    ok(!r && strstr(e, "Pivots given to lu_solve must all be smaller or equal to LU.size(-2)"), "pivot 3 of a 2x2: ATen's error: %s", e);
    graph_free(g);
    g = og_graph(ctx, "lu: \"f32[2, 2][1, 2]cpu\", piv: \"i32[2][1]cpu\", b: \"f32[3, 2][2, 1]cpu\"",
                 "        r = torch.ops.aten.linalg_lu_solve.default(lu, piv, b)\n", "r");
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    const Node *rn = g ? graph_find(g, "r") : NULL;
    ok(rn && op_infer_meta(ctx, g, rn, m, &nm) < 0 && strstr(mi_err_str(ctx, e, sizeof e), "Incompatible shapes of A and B for the equation AX = B (2x2 and 3x2)"),
       "B with 3 rows for a 2x2 LU: %s", e);
    mi_clear_err(ctx);
    graph_free(g);
    g = og_graph(ctx, "lu: \"f32[2, 2][1, 2]cpu\", piv: \"i32[3][1]cpu\", b: \"f32[2, 2][2, 1]cpu\"",
                 "        r = torch.ops.aten.linalg_lu_solve.default(lu, piv, b)\n", "r");
    rn = g ? graph_find(g, "r") : NULL;
    nm = OP_MAX_OUTS;
    ok(rn && op_infer_meta(ctx, g, rn, m, &nm) < 0 && strstr(mi_err_str(ctx, e, sizeof e), "Number of pivots per batch"), "3 pivots for n = 2: %s", e);
    mi_clear_err(ctx);
    graph_free(g);
    tensor_unref(lu); tensor_unref(b); tensor_unref(zero); tensor_unref(big);
}

/* glow's invertible 1x1 convolution: the forward's slogdet saves LU and pivots, the backward
 * solves with them (d logabsdet / dW = W^-T: lu_solve(LU, piv, g I, adjoint)). The backward's
 * inputs from a run of the forward: pivots in [1, n], and the gradient is W^-T. */
static void test_inputs_from_forward(void) {
    Graph *fw = og_graph(ctx, "primals_1: \"f32[2, 2][2, 1]cpu\"",
                         "        s = torch.ops.aten._linalg_slogdet.default(primals_1)\n        getitem_1 = s[1]\n"
                         "        getitem_2 = s[2]\n        getitem_3 = s[3]\n", "getitem_1, primals_1, getitem_2, getitem_3");
    Graph *bw = og_graph(ctx, "primals_1: \"f32[2, 2][2, 1]cpu\", getitem_2: \"f32[2, 2][1, 2]cpu\", getitem_3: \"i32[2][1]cpu\", tangents_1: \"f32[2, 2][2, 1]cpu\"",
                         "        r = torch.ops.aten.linalg_lu_solve.default(getitem_2, getitem_3, tangents_1, adjoint = True)\n"
                         "", "r");
    IValue *in = NULL, *outs = NULL;
    int n = 0, nouts = 0, taken = -1;
    int rc = fw && bw ? interp_random_inputs_from_forward(ctx, bw, fw, &in, &n, &taken) : -1;
    ok(rc == 0 && n == 4 && taken == 3, "primals_1, LU and pivots come from the forward, the tangent is random (%d taken)", taken);
    bool piv_ok = rc == 0 && in[2].kind == IV_TENSOR;
    for (int i = 0; piv_ok && i < 2; i++) piv_ok = tensor_get_i(in[2].t, i) >= 1 && tensor_get_i(in[2].t, i) <= 2;
    ok(piv_ok, "the saved pivots are getrf's, in [1, 2]");
    ok(rc == 0 && in[1].t->stride[0] == 1 && in[1].t->stride[1] == 2, "the saved LU keeps the placeholder's layout [1, 2]");
    if (rc == 0 && interp_run(ctx, bw, in, n, &outs, &nouts) == 0 && nouts == 1) {
        const Tensor *W = in[0].t, *T = in[3].t, *X = outs[0].t;
        double worst = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                double s = 0;
                for (int k = 0; k < 2; k++) s += tensor_get_f(W, k * 2 + i) * tensor_get_f(X, k * 2 + j);   /* (W^T X)[i][j] */
                double d = s - tensor_get_f(T, i * 2 + j);
                if (d < 0) d = -d;
                if (d > worst) worst = d;
            }
        ok(worst < 1e-4, "the backward solves W^T X = tangent with the forward's LU (residual %g)", worst);
    } else {
        char e[2048];
        ok(0, "the backward runs on the forward's LU and pivots: %s", mi_err_str(ctx, e, sizeof e));
        mi_clear_err(ctx);
    }
    interp_free_outputs(outs, nouts);
    interp_free_outputs(in, n);
    graph_free(fw);
    graph_free(bw);
}

int main(void) {
    ctx = mi_ctx_new();
    test_values();
    test_broadcast_and_layout();
    test_errors();
    test_inputs_from_forward();
    mi_ctx_free(ctx);
    return done_testing();
}
