/* test_decomp.c — decompositions written once (core/ops/decomp.h) and the ops added for issue
 * #14, on hand-computed values: an op implemented by its decomposition runs in the interpreter
 * and infers its meta through it; decompose_graph rewrites a graph so that no decomposed op
 * remains and the results stay the same; and a few reference kernels with known answers
 * (col2im of im2col counts the overlaps, scans, sort, special functions, linalg). */
#include "ops/decomp.h"
#include "ops/interp.h"
#include "ops/ops_impl.h"
#include "tap.h"
#include "tests/support/op_graph.h"

static MiCtx *ctx;

static Graph *graph_of(const char *params, const char *body, const char *ret) { return og_graph(ctx, params, body, ret); }

static Tensor *T(int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, DT_F32, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals ? vals[i] : (double)i);
    return t;
}

/* output k of g on the inputs (borrowed), a new reference or NULL */
static Tensor *run_k(Graph *g, Tensor **ts, int n, int k) {
    IValue in[8] = {0}, *outs = NULL;
    int nouts = 0;
    for (int i = 0; i < n; i++) { in[i].kind = IV_TENSOR; in[i].t = tensor_ref(ts[i]); }
    Tensor *r = NULL;
    if (interp_run(ctx, g, in, n, &outs, &nouts) == 0 && k < nouts && outs[k].kind == IV_TENSOR) r = tensor_ref(outs[k].t);
    else { char e[2048]; diag("run failed: %s", mi_err_str(ctx, e, sizeof e)); }
    interp_free_outputs(outs, nouts);
    for (int i = 0; i < n; i++) tensor_unref(in[i].t);
    return r;
}

static bool values(const Tensor *t, const double *want, int64_t n, double tol) { return og_values(t, want, n, tol); }

static int count_target(const Graph *g, const char *t) {
    int n = 0;
    for (int i = 0; i < g->n; i++) n += g->nodes[i]->target && !strcmp(g->nodes[i]->target, t);
    return n;
}

/* addcmul is implemented by its decomposition: values, meta, and the rewrite */
static void test_addcmul(void) {
    Graph *g = graph_of("s: \"f32[3][1]cpu\", a: \"f32[3][1]cpu\", b: \"f32[3][1]cpu\"",
                        "        r: \"f32[3][1]cpu\" = torch.ops.aten.addcmul.default(s, a, b, value = 2)\n", "r");
    int64_t n3[1] = {3};
    Tensor *s = T(1, n3, (double[]){1, 2, 3}), *a = T(1, n3, (double[]){4, 5, 6}), *b = T(1, n3, (double[]){7, 8, 9});
    Tensor *ins[3] = {s, a, b};
    Tensor *r = g ? run_k(g, ins, 3, 0) : NULL;
    ok(values(r, (double[]){57, 82, 111}, 3, 0), "addcmul(s, a, b, value=2) = s + 2 a b through its decomposition");
    tensor_unref(r);
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    const Node *node = g ? graph_find(g, "r") : NULL;
    ok(node && op_infer_meta(ctx, g, node, m, &nm) == 0 && nm == 1 && m[0].dtype == DT_F32 && m[0].ndim == 1 &&
       ex_eq_int(m[0].size[0], 3), "its meta is inferred through the decomposition: f32[3]");
    ok(g && decompose_graph(ctx, g) == 1 && count_target(g, "aten.addcmul.default") == 0 && count_target(g, "aten.mul.Tensor") == 2,
       "decompose_graph replaces the node by mul, mul, add (as torch._refs.addcmul)");
    r = g ? run_k(g, ins, 3, 0) : NULL;
    ok(values(r, (double[]){57, 82, 111}, 3, 0), "the decomposed graph computes the same values");
    tensor_unref(r);
    tensor_unref(s); tensor_unref(a); tensor_unref(b);
    graph_free(g);
}

/* a tuple op: std_mean = (sqrt(var), mean); getitem users are rewired by the pass */
static void test_std_mean(void) {
    Graph *g = graph_of("x: \"f32[4][1]cpu\"",
                        "        sm = torch.ops.aten.std_mean.correction(x, [0], correction = 1)\n"
                        "        s: \"f32[][]cpu\" = sm[0]\n        m: \"f32[][]cpu\" = sm[1]\n", "s, m");
    int64_t n4[1] = {4};
    Tensor *x = T(1, n4, (double[]){1, 2, 3, 4});
    Tensor *s = g ? run_k(g, &x, 1, 0) : NULL, *m = g ? run_k(g, &x, 1, 1) : NULL;
    ok(values(s, (double[]){sqrt(5.0 / 3)}, 1, 1e-6) && values(m, (double[]){2.5}, 1, 1e-6), "std_mean of 1..4 = (sqrt(5/3), 2.5)");
    tensor_unref(s); tensor_unref(m);
    ok(g && decompose_graph(ctx, g) == 1 && count_target(g, "aten.std_mean.correction") == 0 && count_target(g, "operator.getitem") == 2,
       "decompose_graph rewires the getitem users of a tuple op");
    s = g ? run_k(g, &x, 1, 0) : NULL;
    ok(values(s, (double[]){sqrt(5.0 / 3)}, 1, 1e-6), "same std after the rewrite");
    tensor_unref(s);
    tensor_unref(x);
    graph_free(g);
}

/* col2im(im2col(ones)) counts how many 2x2 blocks cover each pixel of a 3x3 image */
static void test_fold(void) {
    Graph *g = graph_of("x: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\"",
                        "        a: \"f32[1, 4, 4][16, 4, 1]cpu\" = torch.ops.aten.im2col.default(x, [2, 2], [1, 1], [0, 0], [1, 1])\n"
                        "        b: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\" = torch.ops.aten.col2im.default(a, [3, 3], [2, 2], [1, 1], [0, 0], [1, 1])\n", "b");
    int64_t sz[4] = {1, 1, 3, 3};
    Tensor *x = T(4, sz, (double[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    Tensor *r = g ? run_k(g, &x, 1, 0) : NULL;
    ok(values(r, (double[]){1, 2, 1, 2, 4, 2, 1, 2, 1}, 9, 0), "col2im(im2col(ones)) = block overlap counts");
    tensor_unref(r); tensor_unref(x);
    graph_free(g);
}

/* one-op value checks */
static void check1(const char *name, const char *params, const char *body, Tensor **ins, int nin, int k,
                   const double *want, int64_t n, double tol) {
    Graph *g = graph_of(params, body, "r");
    Tensor *r = g ? run_k(g, ins, nin, k) : NULL;
    ok(values(r, want, n, tol), "%s", name);
    tensor_unref(r);
    graph_free(g);
}

static void test_values(void) {
    int64_t n4[1] = {4}, m22[2] = {2, 2};
    Tensor *v = T(1, n4, (double[]){3, 1, 4, 1}), *A = T(2, m22, (double[]){4, 2, 2, 3});
    check1("cumsum([3, 1, 4, 1]) = [3, 4, 8, 9]", "x: \"f32[4][1]cpu\"",
           "        r: \"f32[4][1]cpu\" = torch.ops.aten.cumsum.default(x, 0)\n", &v, 1, 0, (double[]){3, 4, 8, 9}, 4, 0);
    check1("sort values ascending, stable", "x: \"f32[4][1]cpu\"",
           "        t = torch.ops.aten.sort.default(x)\n        r: \"f32[4][1]cpu\" = t[0]\n", &v, 1, 0, (double[]){1, 1, 3, 4}, 4, 0);
    check1("sort indices keep the order of ties", "x: \"f32[4][1]cpu\"",
           "        t = torch.ops.aten.sort.default(x)\n        r: \"i64[4][1]cpu\" = t[1]\n", &v, 1, 0, (double[]){1, 3, 0, 2}, 4, 0);
    check1("topk(2) = [4, 3]", "x: \"f32[4][1]cpu\"",
           "        t = torch.ops.aten.topk.default(x, 2)\n        r: \"f32[2][1]cpu\" = t[0]\n", &v, 1, 0, (double[]){4, 3}, 2, 0);
    Tensor *one = T(1, (int64_t[]){1}, (double[]){1});
    check1("digamma(1) = -0.5772156649", "x: \"f32[1][1]cpu\"",
           "        r: \"f32[1][1]cpu\" = torch.ops.aten.digamma.default(x)\n", &one, 1, 0, (double[]){-0.5772156649}, 1, 1e-6);
    Tensor *two = T(1, (int64_t[]){1}, (double[]){2});
    check1("Hurwitz zeta(2, 1) = pi^2 / 6", "x: \"f32[1][1]cpu\"",
           "        r: \"f32[1][1]cpu\" = torch.ops.aten.special_zeta.other_scalar(x, 1.0)\n", &two, 1, 0, (double[]){M_PI * M_PI / 6}, 1, 1e-6);
    Tensor *half = T(1, (int64_t[]){1}, (double[]){0.5});
    check1("Chebyshev T_3(0.5) = 4 x^3 - 3 x = -1", "x: \"f32[1][1]cpu\"",
           "        r: \"f32[1][1]cpu\" = torch.ops.aten.special_chebyshev_polynomial_t.default(x, 3)\n",
           &half, 1, 0, (double[]){-1}, 1, 1e-6);
    check1("linalg_inv_ex([[4, 2], [2, 3]]) = [[3, -2], [-2, 4]] / 8", "a: \"f32[2, 2][2, 1]cpu\"",
           "        t = torch.ops.aten.linalg_inv_ex.default(a)\n        r: \"f32[2, 2][1, 2]cpu\" = t[0]\n", &A, 1, 0,
           (double[]){0.375, -0.25, -0.25, 0.5}, 4, 1e-6);
    check1("cholesky([[4, 2], [2, 3]]) = [[2, 0], [1, sqrt 2]]", "a: \"f32[2, 2][2, 1]cpu\"",
           "        r: \"f32[2, 2][1, 2]cpu\" = torch.ops.aten.cholesky.default(a)\n", &A, 1, 0, (double[]){2, 0, 1, sqrt(2.0)}, 4, 1e-6);
    check1("scatter_reduce amax keeps self (include_self)", "x: \"f32[4][1]cpu\"",
           "        i: \"i64[4][1]cpu\" = torch.ops.aten.full.default([4], 1, dtype = torch.int64)\n"
           "        r: \"f32[4][1]cpu\" = torch.ops.aten.scatter_reduce.two(x, 0, i, x, 'amax')\n", &v, 1, 0, (double[]){3, 4, 4, 1}, 4, 0);
    tensor_unref(v); tensor_unref(A); tensor_unref(one); tensor_unref(two); tensor_unref(half);
}

/* _foreach_* ops: item k is the plain op on item k of each list (core/ops/decomp_foreach.c);
 * the in-place form writes into its first list's tensors */
static void test_foreach(void) {
    Graph *g = graph_of("a: \"f32[2][1]cpu\", b: \"f32[3][1]cpu\", c: \"f32[2][1]cpu\", d: \"f32[3][1]cpu\"",
                        "        fa = torch.ops.aten._foreach_add.List([a, b], [c, d], alpha = 2)\n"
                        "        g0: \"f32[2][1]cpu\" = fa[0]\n"
                        "        g1: \"f32[3][1]cpu\" = fa[1]\n"
                        "        fp = torch.ops.aten._foreach_pow.ScalarAndTensor(2.0, [g0, g1])\n"
                        "        p1: \"f32[3][1]cpu\" = fp[1]\n"
                        "        fm = torch.ops.aten._foreach_mul_.Scalar([a, b], 3)\n"
                        "        m0: \"f32[2][1]cpu\" = fm[0]\n",
                        "g0, g1, p1, m0");
    int64_t n2[1] = {2}, n3[1] = {3};
    Tensor *a = T(1, n2, (double[]){1, 2}), *b = T(1, n3, (double[]){0, 1, -1}), *c = T(1, n2, (double[]){0.5, 1}),
           *d = T(1, n3, (double[]){1, 0, 0.5});
    Tensor *ins[4] = {a, b, c, d};
    Tensor *g1 = g ? run_k(g, ins, 4, 1) : NULL;
    ok(values(g1, (double[]){2, 1, 0}, 3, 0), "_foreach_add.List(alpha=2): item 1 = b + 2 d");
    ok(values(b, (double[]){0, 3, -3}, 3, 0), "_foreach_mul_.Scalar wrote b * 3 into b");
    tensor_set_f(a, 0, 1); tensor_set_f(a, 1, 2);   /* undo the in-place update for the next run */
    for (int k = 0; k < 3; k++) tensor_set_f(b, k, (double[]){0, 1, -1}[k]);
    Tensor *p1 = g ? run_k(g, ins, 4, 2) : NULL;
    ok(values(p1, (double[]){4, 2, 1}, 3, 0), "_foreach_pow.ScalarAndTensor(2, [..]) = 2 ** item");
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    const Node *fa = g ? graph_find(g, "fa") : NULL;
    ok(fa && op_infer_meta(ctx, g, fa, m, &nm) == 0 && nm == 2 && m[0].ndim == 1 && m[1].ndim == 1 &&
       sym_is_int(m[1].size[0], &(int64_t){0}), "meta of a foreach op: one per item");
    tensor_unref(g1);
    tensor_unref(p1);
    for (int i = 0; i < 4; i++) tensor_unref(ins[i]);
    graph_free(g);
    g = graph_of("a: \"f32[2][1]cpu\", c: \"f32[3][1]cpu\"",
                 "        fa = torch.ops.aten._foreach_add.List([a], [c])\n        g0: \"f32[2][1]cpu\" = fa[0]\n", "g0");
    Tensor *x = T(1, n2, NULL), *y = T(1, n3, NULL);
    Tensor *in2[2] = {x, y};
    Tensor *r = g ? run_k(g, in2, 2, 0) : NULL;
    char e[2048];
    ok(!r && strstr(mi_err_str(ctx, e, sizeof e), "fa"), "a size mismatch between items is an error naming the node: %s", e);
    tensor_unref(r);
    graph_free(g);
    g = graph_of("a: \"f32[2][1]cpu\", c: \"f32[3][1]cpu\"",
                 "        fa = torch.ops.aten._foreach_add.List(a, [a])\n        g0: \"f32[2][1]cpu\" = fa[0]\n", "g0");
    r = g ? run_k(g, in2, 2, 0) : NULL;
    ok(!r && strstr(mi_err_str(ctx, e, sizeof e), "argument 0 (self) must be a list of tensors"), "self that is not a list: %s", e);
    tensor_unref(r);
    tensor_unref(x);
    tensor_unref(y);
    graph_free(g);
}

/* Attention dropout: the forward returns its Philox seed and offset, the backward regenerates the
 * same mask from them. The output is linear in V, out = (P * Z) V, so d<out, dO>/dV (a finite
 * difference of two forwards, same node name: same seed) equals the backward's dV exactly. */
static void test_attention_dropout(void) {
    const char *ann = "\"f32[1, 1, 4, 2][8, 8, 2, 1]cpu\"";
    char params[512], body[2048];
    snprintf(params, sizeof params, "q: %s, k: %s, v: %s, go: %s", ann, ann, ann, ann);
    snprintf(body, sizeof body,
             "        fw = torch.ops.aten._scaled_dot_product_efficient_attention.default(q, k, v, None, True, 0.5)\n"
             "        o: %s = fw[0]\n"
             "        lse: \"f32[1, 1, 32][32, 32, 1]cpu\" = fw[1]\n"
             "        sd: \"i64[][]cpu\" = fw[2]\n"
             "        of: \"i64[][]cpu\" = fw[3]\n"
             "        bw = torch.ops.aten._scaled_dot_product_efficient_attention_backward.default(go, q, k, v, None, o, lse, sd, of, 0.5, [True, True, True, False])\n"
             "        dv: %s = bw[2]\n", ann, ann);
    Graph *g = graph_of(params, body, "o, dv");
    int64_t sz[4] = {1, 1, 4, 2};
    Tensor *q = T(4, sz, (double[]){0.1, -0.4, 0.3, 0.2, -0.5, 0.7, 0.9, -0.1}), *k = T(4, sz, (double[]){0.2, 0.1, -0.3, 0.5, 0.4, -0.2, 0.6, 0.3});
    Tensor *v = T(4, sz, (double[]){1, 2, 3, 4, 5, 6, 7, 8}), *go = T(4, sz, (double[]){0.5, -1, 0.25, 2, -0.75, 1, 1.5, -0.5});
    Tensor *ins[4] = {q, k, v, go};
    Tensor *o = g ? run_k(g, ins, 4, 0) : NULL, *dv = g ? run_k(g, ins, 4, 1) : NULL;
    bool same = o && dv;
    for (int e = 0; same && e < 8; e++) {
        double old = tensor_get_f(v, e);
        tensor_set_f(v, e, old + 1);
        Tensor *o2 = run_k(g, ins, 4, 0);
        tensor_set_f(v, e, old);
        double d = 0;
        for (int i = 0; o2 && i < 8; i++) d += (tensor_get_f(o2, i) - tensor_get_f(o, i)) * tensor_get_f(go, i);
        if (!o2 || fabs(d - tensor_get_f(dv, e)) > 1e-4) { diag("dV[%d]: backward %g, finite difference %g", e, o2 ? tensor_get_f(dv, e) : 0, d); same = false; }
        tensor_unref(o2);
    }
    ok(same, "attention dropout: the backward's dV equals the finite difference of the forward (one mask, fwd and bwd)");
    char *nod = strstr(body, "True, 0.5)");   /* the same graph without dropout must differ */
    if (nod) memcpy(nod, "True, 0.0)", 10);
    Graph *g0 = graph_of(params, body, "o, dv");
    Tensor *o0 = g0 ? run_k(g0, ins, 4, 0) : NULL;
    double diff = 0;
    for (int i = 0; o && o0 && i < 8; i++) diff += fabs(tensor_get_f(o, i) - tensor_get_f(o0, i));
    ok(diff > 0.1, "dropout 0.5 changes the output (sum |difference| %g)", diff);
    tensor_unref(o0);
    graph_free(g0);
    tensor_unref(o);
    tensor_unref(dv);
    for (int i = 0; i < 4; i++) tensor_unref(ins[i]);
    graph_free(g);
}

/* fuzz_patterns' crasher: a value tensor with another batch than query and key read past it
 * (the reference attention indexed V by the query's batch). Now an error naming the sizes. */
static void test_attention_batch_mismatch(void) {
    static const char *const cases[2][2] = {
        {"tests/fixtures/crashers/attention_value_batch_mismatch.py", "query, key and value batch/head sizes differ"},
        /* fuzz_passes: a backward's grad_out shorter than the query was read past its end */
        {"tests/fixtures/crashers/attention_backward_grad_out_shape.py", "grad_out must have the output's shape"}};
    for (int i = 0; i < 2; i++) {
        Graph *g = graph_load_file(ctx, cases[i][0]);
        if (g) ops_resolve_graph(g);
        IValue *in = NULL, *outs = NULL;
        int nin = 0, nouts = 0;
        int rc = g && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0 ? interp_run(ctx, g, in, nin, &outs, &nouts) : 0;
        char e[2048];
        ok(g && rc < 0 && strstr(mi_err_str(ctx, e, sizeof e), cases[i][1]), "%s: %s", cases[i][0] + 24, e);
        interp_free_outputs(outs, nouts);
        interp_free_outputs(in, nin);
        graph_free(g);
        mi_clear_err(ctx);
    }
}

/* _weight_norm_interface_backward (a fallback in Inductor) on a hand-derived case: w = g v / |v|
 * with v = [[3, 4], [0, 2]], g = [2, 1] (dim 0), norms = [5, 2], grad_w = [[1, 0], [1, 1]]:
 * s = [3, 2]; grad_g = s / norms = [0.6, 1]; grad_v = (g / n)(grad_w - v s / n^2) =
 * [[0.4 * 0.64, 0.4 * -0.48], [0.5 * 1, 0.5 * (1 - 1)]]. dim 1 of a 3-dim weight is refused. */
static void test_weight_norm_backward(void) {
    const char *params = "gw: \"f32[2, 2][2, 1]cpu\", v: \"f32[2, 2][2, 1]cpu\", g: \"f32[2, 1][1, 1]cpu\", n: \"f32[2, 1][1, 1]cpu\"";
    Graph *gr = graph_of(params,
                         "        wn = torch.ops.aten._weight_norm_interface_backward.default(gw, v, g, n, 0)\n"
                         "        gv: \"f32[2, 2][2, 1]cpu\" = wn[0]\n        gg: \"f32[2, 1][1, 1]cpu\" = wn[1]\n", "gv, gg");
    int64_t s22[2] = {2, 2}, s21[2] = {2, 1};
    Tensor *ins[4] = {T(2, s22, (double[]){1, 0, 1, 1}), T(2, s22, (double[]){3, 4, 0, 2}), T(2, s21, (double[]){2, 1}), T(2, s21, (double[]){5, 2})};
    Tensor *gv = gr ? run_k(gr, ins, 4, 0) : NULL, *gg = gr ? run_k(gr, ins, 4, 1) : NULL;
    ok(values(gv, (double[]){0.256, -0.192, 0.5, 0}, 4, 1e-6), "_weight_norm_interface_backward: grad_v as ATen's formula");
    ok(values(gg, (double[]){0.6, 1}, 2, 1e-6), "_weight_norm_interface_backward: grad_g = sum(grad_w * v) / norms per row");
    tensor_unref(gv); tensor_unref(gg);
    graph_free(gr);
    Graph *bad = graph_of("gw: \"f32[2, 2, 2][4, 2, 1]cpu\", v: \"f32[2, 2, 2][4, 2, 1]cpu\", g: \"f32[1, 2, 1][2, 1, 1]cpu\", n: \"f32[1, 2, 1][2, 1, 1]cpu\"",
                          "        wn = torch.ops.aten._weight_norm_interface_backward.default(gw, v, g, n, 1)\n", "wn");
    int64_t s222[3] = {2, 2, 2}, s121[3] = {1, 2, 1};
    Tensor *bins[4] = {T(3, s222, NULL), T(3, s222, NULL), T(3, s121, NULL), T(3, s121, NULL)};
    Tensor *r = bad ? run_k(bad, bins, 4, 0) : NULL;
    char e[2048] = "";
    ok(bad && !r && strstr(mi_err_str(ctx, e, sizeof e), "first or last dim"), "dim 1 of a 3-dim weight: %s", e);
    tensor_unref(r);
    for (int i = 0; i < 4; i++) tensor_unref(bins[i]);
    mi_clear_err(ctx);
    graph_free(bad);
    for (int i = 0; i < 4; i++) tensor_unref(ins[i]);
}

/* prims.rev (torch.flip as the refs leave it in post-grad graphs): values by hand, and the same
 * as aten.flip's decomposition on a non-contiguous input; a repeated dim is refused. */
static void test_rev(void) {
    Graph *g = graph_of("x: \"f32[2, 3][3, 1]cpu\"",
                        "        t: \"f32[3, 2][1, 3]cpu\" = torch.ops.aten.permute.default(x, [1, 0])\n"
                        "        r: \"f32[3, 2][1, 3]cpu\" = torch.ops.prims.rev.default(t, [0, 1])\n"
                        "        f: \"f32[3, 2][1, 3]cpu\" = torch.ops.aten.flip.default(t, [0, 1])\n"
                        "        c: \"f32[2, 3][3, 1]cpu\" = torch.ops.prims.rev.default(x, [1])\n", "r, f, c");
    int64_t sz[2] = {2, 3};
    Tensor *x = T(2, sz, NULL);   /* [[0, 1, 2], [3, 4, 5]] */
    Tensor *r = g ? run_k(g, &x, 1, 0) : NULL, *f = g ? run_k(g, &x, 1, 1) : NULL, *c = g ? run_k(g, &x, 1, 2) : NULL;
    ok(values(r, (double[]){5, 2, 4, 1, 3, 0}, 6, 0), "prims.rev of a transposed input along both dims");
    ok(values(f, (double[]){5, 2, 4, 1, 3, 0}, 6, 0), "aten.flip's decomposition agrees");
    ok(values(c, (double[]){2, 1, 0, 5, 4, 3}, 6, 0), "prims.rev along the last dim");
    tensor_unref(r); tensor_unref(f); tensor_unref(c);
    graph_free(g);
    Graph *bad = graph_of("x: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.prims.rev.default(x, [1, 1])\n", "r");
    Tensor *rb = bad ? run_k(bad, &x, 1, 0) : NULL;
    char e[2048] = "";
    ok(bad && !rb && strstr(mi_err_str(ctx, e, sizeof e), "appears twice"), "a repeated dim: %s", e);
    mi_clear_err(ctx);
    graph_free(bad);
    tensor_unref(x);
}

/* The fused GRU cell (a fallback on GPUs): hy and the workspace on a hand-computed case (B = H
 * = 1, no biases), and its backward against central finite differences of hy computed
 * independently (python, step 1e-6): d hy / d input_gates = (0.0530635, 0.0275599, 0.376331),
 * d hy / d hidden_gates = (0.0530635, 0.0275599, 0.234251), d hy / d hx = 0.425557. */
static void test_gru_cell(void) {
    Graph *g = graph_of("ig: \"f32[1, 3][3, 1]cuda:0\", hg: \"f32[1, 3][3, 1]cuda:0\", hx: \"f32[1, 1][1, 1]cuda:0\", go: \"f32[1, 1][1, 1]cuda:0\"",
                        "        c = torch.ops.aten._thnn_fused_gru_cell.default(ig, hg, hx)\n"
                        "        hy: \"f32[1, 1][1, 1]cuda:0\" = c[0]\n        ws: \"f32[1, 5][5, 1]cuda:0\" = c[1]\n"
                        "        b = torch.ops.aten._thnn_fused_gru_cell_backward.default(go, ws, False)\n"
                        "        gi: \"f32[1, 3][3, 1]cuda:0\" = b[0]\n        gh: \"f32[1, 3][3, 1]cuda:0\" = b[1]\n        gx: \"f32[1, 1][1, 1]cuda:0\" = b[2]\n",
                        "hy, ws, gi, gh, gx");
    int64_t s13[2] = {1, 3}, s11[2] = {1, 1};
    Tensor *in[4] = {T(2, s13, (double[]){0.1, 0.2, 0.3}), T(2, s13, (double[]){0.4, -0.5, 0.6}), T(2, s11, (double[]){0.7}), T(2, s11, (double[]){1})};
    Tensor *r[5] = {0};
    for (int k = 0; k < 5 && g; k++) r[k] = run_k(g, in, 4, k);
    ok(values(r[0], (double[]){0.6352382}, 1, 1e-6), "_thnn_fused_gru_cell: hy = n + i (hx - n)");
    ok(values(r[1], (double[]){0.6224593, 0.4255575, 0.5872615, 0.7, 0.6}, 5, 1e-6), "workspace = (r, i, n, hx, hn + b2n), as ATen's kernel");
    ok(values(r[2], (double[]){0.0530635, 0.0275599, 0.376331}, 3, 1e-5), "backward: grad of the input gates = finite differences");
    ok(values(r[3], (double[]){0.0530635, 0.0275599, 0.234251}, 3, 1e-5), "backward: grad of the hidden gates = finite differences");
    ok(values(r[4], (double[]){0.425557}, 1, 1e-5), "backward: grad of hx = finite differences");
    for (int k = 0; k < 5; k++) tensor_unref(r[k]);
    for (int k = 0; k < 4; k++) tensor_unref(in[k]);
    graph_free(g);
}

/* The fused LSTM cell: hy, cy, the workspace, and the backward of L = hy + 0.5 cy (grad_hy 1,
 * grad_cy 0.5) against central finite differences computed independently (python, step 1e-6):
 * d L / d gates = (0.123504, 0.153270, 0.192201, 0.166401), d L / d cx = 0.284455. */
static void test_lstm_cell(void) {
    Graph *g = graph_of("ig: \"f32[1, 4][4, 1]cuda:0\", hg: \"f32[1, 4][4, 1]cuda:0\", cx: \"f32[1, 1][1, 1]cuda:0\", gh: \"f32[1, 1][1, 1]cuda:0\", gc: \"f32[1, 1][1, 1]cuda:0\"",
                        "        c = torch.ops.aten._thnn_fused_lstm_cell.default(ig, hg, cx)\n"
                        "        hy: \"f32[1, 1][1, 1]cuda:0\" = c[0]\n        cy: \"f32[1, 1][1, 1]cuda:0\" = c[1]\n        ws: \"f32[1, 4][4, 1]cuda:0\" = c[2]\n"
                        "        b = torch.ops.aten._thnn_fused_lstm_cell_backward_impl.default(gh, gc, cx, cy, ws, False)\n"
                        "        gg: \"f32[1, 4][4, 1]cuda:0\" = b[0]\n        gx: \"f32[1, 1][1, 1]cuda:0\" = b[1]\n",
                        "hy, cy, ws, gg, gx");
    int64_t s14[2] = {1, 4}, s11[2] = {1, 1};
    Tensor *in[5] = {T(2, s14, (double[]){0.1, 0.2, 0.3, 0.4}), T(2, s14, (double[]){0.5, -0.6, 0.7, -0.8}), T(2, s11, (double[]){0.9}),
                     T(2, s11, (double[]){1}), T(2, s11, (double[]){0.5})};
    Tensor *r[5] = {0};
    for (int k = 0; k < 5 && g; k++) r[k] = run_k(g, in, 5, k);
    ok(values(r[0], (double[]){0.2779434}, 1, 1e-6) && values(r[1], (double[]){0.8529092}, 1, 1e-6), "_thnn_fused_lstm_cell: hy and cy");
    ok(values(r[2], (double[]){0.6456563, 0.4013123, 0.7615942, 0.4013123}, 4, 1e-6), "workspace = (i, f, c, o) after their activations");
    ok(values(r[3], (double[]){0.123504, 0.153270, 0.192201, 0.166401}, 4, 1e-5), "backward_impl: grad of the gates = finite differences");
    ok(values(r[4], (double[]){0.284455}, 1, 1e-5), "backward_impl: grad of cx = finite differences");
    for (int k = 0; k < 5; k++) tensor_unref(r[k]);
    for (int k = 0; k < 5; k++) tensor_unref(in[k]);
    graph_free(g);
}

/* a tensor of dtype dt with the given values */
static Tensor *TD(DType dt, int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals[i]);
    return t;
}

/* the graph fails at run time with an error naming a node and containing `why` */
static void check_err(const char *name, const char *params, const char *body, Tensor **ins, int nin, const char *why) {
    Graph *g = graph_of(params, body, "r");
    IValue in[8] = {0}, *outs = NULL;
    int nouts = 0;
    for (int i = 0; i < nin; i++) { in[i].kind = IV_TENSOR; in[i].t = tensor_ref(ins[i]); }
    int rc = g ? interp_run(ctx, g, in, nin, &outs, &nouts) : 0;
    char e[2048];
    mi_err_str(ctx, e, sizeof e);
    ok(g && rc != 0 && strstr(e, "node '") && strstr(e, why), "%s: %s", name, e);
    if (rc == 0) interp_free_outputs(outs, nouts);
    for (int i = 0; i < nin; i++) tensor_unref(in[i].t);
    mi_clear_err(ctx);
    graph_free(g);
}

/* the ops added for the last OpInfo cases (#14), on values derived by hand */
static void test_coverage_values(void) {
    Tensor *m1 = TD(DT_F32, 0, NULL, (double[]){-1}), *zero = TD(DT_F32, 0, NULL, (double[]){0});
    check1("linspace.Tensor_Scalar(-1, 2, 4) = [-1, 0, 1, 2]", "a: \"f32[][]cpu\"",
           "        r: \"f32[4][1]cpu\" = torch.ops.aten.linspace.Tensor_Scalar(a, 2, 4, dtype = torch.float32)\n", &m1, 1, 0,
           (double[]){-1, 0, 1, 2}, 4, 1e-7);
    check1("linspace(0, 10, 4, int64) truncates [0, 3.33, 6.67, 10] to [0, 3, 6, 10]", "a: \"f32[][]cpu\"",
           "        r: \"i64[4][1]cpu\" = torch.ops.aten.linspace.default(0, 10, 4, dtype = torch.int64)\n", &m1, 1, 0,
           (double[]){0, 3, 6, 10}, 4, 0);
    check1("logspace.Tensor_Scalar(0, 2, 3, base 2) = [1, 2, 4]", "a: \"f32[][]cpu\"",
           "        r: \"f32[3][1]cpu\" = torch.ops.aten.logspace.Tensor_Scalar(a, 2, 3, 2.0, dtype = torch.float32)\n", &zero, 1, 0,
           (double[]){1, 2, 4}, 3, 1e-7);
    Graph *lg = graph_of("a: \"f32[][]cpu\"", "        r: \"f32[5][1]cpu\" = torch.ops.aten.linspace.Tensor_Scalar(a, 1, 5, dtype = torch.float32)\n", "r");
    ok(lg && decompose_graph(ctx, lg) >= 1 && count_target(lg, "aten.linspace.Tensor_Scalar") == 0 && count_target(lg, "aten.where.self") == 1,
       "decompose_graph rewrites linspace into arange + where, as refs.linspace (no .item() on the 0-d start)");
    Tensor *lr = lg ? run_k(lg, &m1, 1, 0) : NULL;
    ok(values(lr, (double[]){-1, -0.5, 0, 0.5, 1}, 5, 1e-7), "the decomposed linspace(-1, 1, 5) = [-1, -.5, 0, .5, 1]");
    tensor_unref(lr);
    graph_free(lg);
    Tensor *seven = TD(DT_F32, 0, NULL, (double[]){7}), *i0 = TD(DT_I64, 1, (int64_t[]){1}, (double[]){0});
    check1("index_select of a 0-d self with index [0] is self", "x: \"f32[][]cpu\", i: \"i64[1][1]cpu\"",
           "        r: \"f32[][]cpu\" = torch.ops.aten.index_select.default(x, 0, i)\n", (Tensor *[]){seven, i0}, 2, 0, (double[]){7}, 1, 0);
    int64_t s32[2] = {3, 2}, n3[1] = {3};
    Tensor *x32 = T(2, s32, NULL), *mask = TD(DT_BOOL, 1, n3, (double[]){1, 0, 1});
    check1("x[mask] with mask [T, F, T] picks rows 0 and 2", "x: \"f32[3, 2][2, 1]cpu\", m: \"b8[3][1]cpu\"",
           "        r: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.index.Tensor(x, [m])\n", (Tensor *[]){x32, mask}, 2, 0,
           (double[]){0, 1, 4, 5}, 4, 0);
    Tensor *z3 = T(1, n3, (double[]){0, 0, 0}), *five = TD(DT_F32, 1, (int64_t[]){1}, (double[]){5});
    check1("index_put(zeros, [mask], [5]) sets the masked elements", "x: \"f32[3][1]cpu\", m: \"b8[3][1]cpu\", v: \"f32[1][1]cpu\"",
           "        r: \"f32[3][1]cpu\" = torch.ops.aten.index_put.default(x, [m], v)\n", (Tensor *[]){z3, mask, five}, 3, 0,
           (double[]){5, 0, 5}, 3, 0);
    Tensor *b1 = T(2, (int64_t[]){1, 2}, (double[]){1, 2}), *w = T(3, (int64_t[]){1, 2, 2}, (double[]){1, 2, 3, 4}),
           *b2 = T(2, (int64_t[]){1, 2}, (double[]){5, 6});
    check1("bilinear via _trilinear: x1 W x2 = 1*(5+12) + 2*(15+24) = 95", "a: \"f32[1, 2][2, 1]cpu\", w: \"f32[1, 2, 2][4, 2, 1]cpu\", b: \"f32[1, 2][2, 1]cpu\"",
           "        r: \"f32[1, 1][1, 1]cpu\" = torch.ops.aten._trilinear.default(a, w, b, [1, 3], [0], [1, 2], [2, 3])\n",
           (Tensor *[]){b1, w, b2}, 3, 0, (double[]){95}, 1, 1e-6);
    Tensor *data = T(1, (int64_t[]){4}, (double[]){1, 5, 2, 3}), *lens = TD(DT_I64, 1, n3, (double[]){2, 0, 2}),
           *offs = TD(DT_I64, 1, (int64_t[]){4}, (double[]){0, 2, 2, 4});
    check1("segment_reduce max with lengths [2, 0, 2], initial 0 = [5, 0, 3]", "d: \"f32[4][1]cpu\", l: \"i64[3][1]cpu\"",
           "        r: \"f32[3][1]cpu\" = torch.ops.aten.segment_reduce.default(d, 'max', lengths = l, initial = 0)\n",
           (Tensor *[]){data, lens}, 2, 0, (double[]){5, 0, 3}, 3, 0);
    check1("segment_reduce sum with offsets [0, 2, 2, 4] = [6, 0, 5]", "d: \"f32[4][1]cpu\", o: \"i64[4][1]cpu\"",
           "        r: \"f32[3][1]cpu\" = torch.ops.aten.segment_reduce.default(d, 'sum', offsets = o)\n",
           (Tensor *[]){data, offs}, 2, 0, (double[]){6, 0, 5}, 3, 0);
    /* two frames of p(blank) = 0.25, p(1) = 0.75, target [1]: paths 11, 01, 10 -> 0.9375 */
    Tensor *lp = T(3, (int64_t[]){2, 1, 2}, (double[]){log(0.25), log(0.75), log(0.25), log(0.75)}),
           *tg = TD(DT_I64, 2, (int64_t[]){1, 1}, (double[]){1});
    check1("ctc loss of target [1] over 2 frames = -log(0.9375)", "lp: \"f32[2, 1, 2][2, 2, 1]cpu\", t: \"i64[1, 1][1, 1]cpu\"",
           "        c = torch.ops.aten._ctc_loss.default(lp, t, [2], [1], 0, False)\n        r: \"f32[1][1]cpu\" = c[0]\n",
           (Tensor *[]){lp, tg}, 2, 0, (double[]){-log(0.9375)}, 1, 1e-6);
    Tensor *h = T(1, n3, (double[]){0, 0.5, 1});
    check1("histogram of [0, .5, 1] in 2 bins = [1, 2] (the last bin keeps its right edge)", "x: \"f32[3][1]cpu\"",
           "        hh = torch.ops.aten.histogram.bin_ct(x, 2)\n        r: \"f32[2][1]cpu\" = hh[0]\n", &h, 1, 0, (double[]){1, 2}, 2, 0);
    check1("histogram bin edges = [0, .5, 1]", "x: \"f32[3][1]cpu\"",
           "        hh = torch.ops.aten.histogram.bin_ct(x, 2)\n        r: \"f32[3][1]cpu\" = hh[1]\n", &h, 1, 0, (double[]){0, 0.5, 1}, 3, 0);
    Tensor *onetwo = T(1, (int64_t[]){2}, (double[]){1, 2});
    check1("hash_tensor([1., 2.]) = bits(1.0) ^ bits(2.0) = 0x7ff0000000000000", "x: \"f32[2][1]cpu\"",
           "        r: \"u64[][]cpu\" = torch.ops.aten.hash_tensor.default(x)\n", &onetwo, 1, 0, (double[]){(double)0x7ff0000000000000ULL}, 1, 0);
    Tensor *u = T(1, (int64_t[]){4}, (double[]){2, 1, 2, 2});
    check1("unique([2, 1, 2, 2]) = [1, 2]", "x: \"f32[4][1]cpu\"",
           "        q = torch.ops.aten._unique2.default(x, True, True, True)\n        r: \"f32[2][1]cpu\" = q[0]\n", &u, 1, 0, (double[]){1, 2}, 2, 0);
    check1("unique counts = [1, 3]", "x: \"f32[4][1]cpu\"",
           "        q = torch.ops.aten._unique2.default(x, True, True, True)\n        r: \"i64[2][1]cpu\" = q[2]\n", &u, 1, 0, (double[]){1, 3}, 2, 0);
    check1("unique inverse = [1, 0, 1, 1]", "x: \"f32[4][1]cpu\"",
           "        q = torch.ops.aten._unique2.default(x, True, True, True)\n        r: \"i64[4][1]cpu\" = q[1]\n", &u, 1, 0, (double[]){1, 0, 1, 1}, 4, 0);
    check1("unique_consecutive inverse = [0, 1, 2, 2]", "x: \"f32[4][1]cpu\"",
           "        q = torch.ops.aten.unique_consecutive.default(x, True)\n        r: \"i64[4][1]cpu\" = q[1]\n", &u, 1, 0, (double[]){0, 1, 2, 2}, 4, 0);
    Tensor *nz = T(1, (int64_t[]){4}, (double[]){0, 3, 0, 5});
    check1("nonzero_static([0, 3, 0, 5], size=3) = [[1], [3], [-1]]", "x: \"f32[4][1]cpu\"",
           "        r: \"i64[3, 1][1, 1]cpu\" = torch.ops.aten.nonzero_static.default(x, size = 3)\n", &nz, 1, 0, (double[]){1, 3, -1}, 3, 0);
    Tensor *x23 = T(2, (int64_t[]){2, 3}, NULL);
    check1("resize_ of a [2, 3] clone to [8]: the 6 values, then zeros", "x: \"f32[2, 3][3, 1]cpu\"",
           "        c: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten.clone.default(x)\n"
           "        r: \"f32[8][1]cpu\" = torch.ops.aten.resize_.default(c, [8])\n", &x23, 1, 0, (double[]){0, 1, 2, 3, 4, 5, 0, 0}, 8, 0);
    check1("after resize_, self itself has the new shape (TensorImpl semantics)", "x: \"f32[2, 3][3, 1]cpu\"",
           "        c: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten.clone.default(x)\n"
           "        z: \"f32[4][1]cpu\" = torch.ops.aten.resize_.default(c, [4])\n"
           "        r: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(c, 2)\n", &x23, 1, 0, (double[]){0, 2, 4, 6}, 4, 0);
    Tensor *nil = T(2, (int64_t[]){2, 2}, (double[]){0, 1, 0, 0}), *dg = T(2, (int64_t[]){2, 2}, (double[]){1, 0, 0, 2});
    check1("matrix_exp([[0, 1], [0, 0]]) = [[1, 1], [0, 1]]", "a: \"f32[2, 2][2, 1]cpu\"",
           "        r: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.linalg_matrix_exp.default(a)\n", &nil, 1, 0, (double[]){1, 1, 0, 1}, 4, 1e-6);
    check1("matrix_exp(diag(1, 2)) = diag(e, e^2) (degree 18, scaled and squared)", "a: \"f32[2, 2][2, 1]cpu\"",
           "        r: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.linalg_matrix_exp.default(a)\n", &dg, 1, 0,
           (double[]){exp(1.0), 0, 0, exp(2.0)}, 4, 1e-6);
    Tensor *spd = T(2, (int64_t[]){2, 2}, (double[]){4, 2, 2, 3}), *rhs = T(2, (int64_t[]){2, 1}, (double[]){8, 7});
    check1("ldl_factor([[4, 2], [2, 3]]): LD = [[4, 0], [0.5, 2]]", "a: \"f32[2, 2][2, 1]cpu\"",
           "        f = torch.ops.aten.linalg_ldl_factor_ex.default(a)\n        r: \"f32[2, 2][1, 2]cpu\" = f[0]\n", &spd, 1, 0,
           (double[]){4, 0, 0.5, 2}, 4, 1e-6);
    check1("ldl pivots = [1, 2] (1x1 blocks, no interchange)", "a: \"f32[2, 2][2, 1]cpu\"",
           "        f = torch.ops.aten.linalg_ldl_factor_ex.default(a)\n        r: \"i32[2][1]cpu\" = f[1]\n", &spd, 1, 0,
           (double[]){1, 2}, 2, 0);
    check1("ldl_solve: [[4, 2], [2, 3]] x = [8, 7] -> x = [1.25, 1.5]", "a: \"f32[2, 2][2, 1]cpu\", b: \"f32[2, 1][1, 1]cpu\"",
           "        f = torch.ops.aten.linalg_ldl_factor_ex.default(a)\n        ld: \"f32[2, 2][1, 2]cpu\" = f[0]\n"
           "        p: \"i32[2][1]cpu\" = f[1]\n        r: \"f32[2, 1][1, 2]cpu\" = torch.ops.aten.linalg_ldl_solve.default(ld, p, b)\n",
           (Tensor *[]){spd, rhs}, 2, 0, (double[]){1.25, 1.5}, 2, 1e-6);
    Tensor *vol = T(5, (int64_t[]){1, 1, 2, 2, 2}, NULL), *gr = T(5, (int64_t[]){1, 1, 1, 3, 3},
                 (double[]){0, 0, 0, -1, -1, -1, 1, 1, 1});
    check1("grid_sampler_3d (align_corners): centre = mean 3.5, corners = voxels 0 and 7", "x: \"f32[1, 1, 2, 2, 2][8, 8, 4, 2, 1]cpu\", g: \"f32[1, 1, 1, 3, 3][9, 9, 9, 3, 1]cpu\"",
           "        r: \"f32[1, 1, 1, 1, 3][3, 3, 3, 3, 1]cpu\" = torch.ops.aten.grid_sampler_3d.default(x, g, 0, 0, True)\n",
           (Tensor *[]){vol, gr}, 2, 0, (double[]){3.5, 0, 7}, 3, 1e-6);
    Tensor *row = T(4, (int64_t[]){1, 1, 1, 4}, (double[]){0, 1, 2, 3});
    check1("antialiased bilinear 4 -> 2: triangle taps [.75 .75 .25] / 1.75 -> [5/7, 16/7]", "x: \"f32[1, 1, 1, 4][4, 4, 4, 1]cpu\"",
           "        r: \"f32[1, 1, 1, 2][2, 2, 2, 1]cpu\" = torch.ops.aten._upsample_bilinear2d_aa.default(x, [1, 2], False)\n",
           &row, 1, 0, (double[]){5.0 / 7, 16.0 / 7}, 2, 1e-6);
    Tensor *img = T(4, (int64_t[]){1, 1, 5, 5}, NULL), *rs = T(3, (int64_t[]){1, 1, 2}, (double[]){0.5, 0.5});
    check1("fractional_max_pool2d 5x5 -> 2x2 (kernel 2, u = 0.5): windows start at 0 and 3 -> [6, 9, 21, 24]",
           "x: \"f32[1, 1, 5, 5][25, 25, 5, 1]cpu\", u: \"f32[1, 1, 2][2, 2, 1]cpu\"",
           "        f = torch.ops.aten.fractional_max_pool2d.default(x, [2, 2], [2, 2], u)\n        r: \"i64[1, 1, 2, 2][4, 4, 2, 1]cpu\" = f[1]\n",
           (Tensor *[]){img, rs}, 2, 0, (double[]){6, 9, 21, 24}, 4, 0);

    Tensor *rot = T(2, (int64_t[]){2, 2}, (double[]){0, -1, 1, 0});
    Graph *eg = graph_of("a: \"f32[2, 2][2, 1]cpu\"", "        e = torch.ops.aten.linalg_eig.default(a)\n        r: \"c64[2][1]cpu\" = e[0]\n", "r");
    Tensor *ev = eg ? run_k(eg, &rot, 1, 0) : NULL;
    double re0 = 1, im0 = 0, re1 = 1, im1 = 0;
    if (ev && ev->dtype == DT_C64 && tensor_numel(ev) == 2) { tensor_get_c(ev, 0, &re0, &im0); tensor_get_c(ev, 1, &re1, &im1); }
    ok(fabs(re0) < 1e-6 && fabs(im0 - 1) < 1e-6 && fabs(re1) < 1e-6 && fabs(im1 + 1) < 1e-6,
       "linalg_eig of the 90-degree rotation: eigenvalues [i, -i] (geev's conjugate pair, positive imaginary part first)");
    tensor_unref(ev);
    tensor_unref(rot);
    graph_free(eg);

    /* bad input: errors name the node and the reason */
    check_err("segment_reduce with an unknown reduction", "d: \"f32[4][1]cpu\", l: \"i64[3][1]cpu\"",
              "        r: \"f32[3][1]cpu\" = torch.ops.aten.segment_reduce.default(d, 'median', lengths = l)\n",
              (Tensor *[]){data, lens}, 2, "reduction 'median' is not supported");
    check_err("segment_reduce whose lengths cover more than the data", "d: \"f32[4][1]cpu\", l: \"i64[4][1]cpu\"",
              "        r: \"f32[4][1]cpu\" = torch.ops.aten.segment_reduce.default(d, 'sum', lengths = l)\n",
              (Tensor *[]){data, offs}, 2, "segments cover 8 elements but data has 4");
    check_err("linspace with negative steps", "a: \"f32[][]cpu\"",
              "        r: \"f32[0][1]cpu\" = torch.ops.aten.linspace.Tensor_Scalar(a, 2, -1)\n", &m1, 1, "number of steps must be non-negative");
    check_err("a mask that does not match the indexed shape", "x: \"f32[4][1]cpu\", m: \"b8[3][1]cpu\"",
              "        r: \"f32[2][1]cpu\" = torch.ops.aten.index.Tensor(x, [m])\n", (Tensor *[]){data, mask}, 2, "does not match the shape of the indexed tensor");
    check_err("fractional_max_pool2d with a window too large", "x: \"f32[1, 1, 5, 5][25, 25, 5, 1]cpu\", u: \"f32[1, 1, 2][2, 2, 1]cpu\"",
              "        f = torch.ops.aten.fractional_max_pool2d.default(x, [4, 4], [3, 3], u)\n        r: \"f32[1, 1, 3, 3][9, 9, 3, 1]cpu\" = f[0]\n",
              (Tensor *[]){img, rs}, 2, "too large relative to input size");
    Tensor *p64 = TD(DT_I64, 1, (int64_t[]){2}, (double[]){1, 2}), *tg5 = TD(DT_I64, 2, (int64_t[]){1, 1}, (double[]){5});
    check_err("ldl_solve with int64 pivots", "a: \"f32[2, 2][2, 1]cpu\", p: \"i64[2][1]cpu\", b: \"f32[2, 1][1, 1]cpu\"",
              "        r: \"f32[2, 1][1, 2]cpu\" = torch.ops.aten.linalg_ldl_solve.default(a, p, b)\n",
              (Tensor *[]){spd, p64, rhs}, 3, "Expected pivots to be integers");
    check_err("ctc loss with a target id outside the classes", "lp: \"f32[2, 1, 2][2, 2, 1]cpu\", t: \"i64[1, 1][1, 1]cpu\"",
              "        c = torch.ops.aten._ctc_loss.default(lp, t, [2], [1], 0, False)\n        r: \"f32[1][1]cpu\" = c[0]\n",
              (Tensor *[]){lp, tg5}, 2, "target 5 is outside the 2 classes");
    Tensor *rs2 = T(3, (int64_t[]){1, 1, 2}, (double[]){0.5, 1.5}), *badp = TD(DT_I32, 1, (int64_t[]){2}, (double[]){1, -1}),
           *btrue = TD(DT_BOOL, 0, NULL, (double[]){1});
    check_err("fractional_max_pool2d with a sample outside [0, 1)", "x: \"f32[1, 1, 5, 5][25, 25, 5, 1]cpu\", u: \"f32[1, 1, 2][2, 2, 1]cpu\"",
              "        f = torch.ops.aten.fractional_max_pool2d.default(x, [2, 2], [2, 2], u)\n        r: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\" = f[0]\n",
              (Tensor *[]){img, rs2}, 2, "random_samples must lie in [0, 1), got 1.5");
    check_err("ldl_solve with a 2x2 pivot that has no pair", "a: \"f32[2, 2][2, 1]cpu\", p: \"i32[2][1]cpu\", b: \"f32[2, 1][1, 1]cpu\"",
              "        r: \"f32[2, 1][1, 2]cpu\" = torch.ops.aten.linalg_ldl_solve.default(a, p, b)\n",
              (Tensor *[]){spd, badp, rhs}, 3, "a negative pivot at 1 without its pair");
    check_err("a 0-d boolean index", "x: \"f32[4][1]cpu\", m: \"b8[][]cpu\"",
              "        r: \"f32[1, 4][4, 1]cpu\" = torch.ops.aten.index.Tensor(x, [m])\n", (Tensor *[]){data, btrue}, 2,
              "0-dimensional boolean index");
    tensor_unref(rs2); tensor_unref(badp); tensor_unref(btrue);
    check_err("nonzero_static with a negative size", "x: \"f32[4][1]cpu\"",
              "        r: \"i64[0, 1][1, 1]cpu\" = torch.ops.aten.nonzero_static.default(x, size = -1)\n", &nz, 1, "must be an non-negative integer");
    Tensor *all[] = {m1, zero, seven, i0, x32, mask, z3, five, b1, w, b2, data, lens, offs, lp, tg, h, onetwo, u, nz, x23, nil, dg, spd, rhs, vol, gr, row, img, rs, p64, tg5};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tensor_unref(all[k]);
}

/* The fake-quantization fallbacks on hand-derived cases (ATen's kernels: q = zp + nearbyint(x / s),
 * out = (clamp(q) - zp) * s, mask = q in range). Per tensor, s = 0.05, zp 0, [-128, 127]:
 * 0.37 -> 7 -> 0.35; -0.024 -> -0 -> 0; 7 -> 140 -> 127 -> 6.35 (mask 0); -7 -> -128 -> -6.4
 * (mask 0); 0.125 -> 2.5 -> 2 (half to even) -> 0.1. Per channel (axis 0, s = [0.1, 0.2],
 * zp = [0, 1], [0, 5]): row 0 [0.3, 0.5, -1] -> q [3, 5, -10]; row 1 [0.5, 1.3, -1] ->
 * q [1 + 2 (2.5 to even), 1 + 6, 1 - 5] -> out [0.4, 0.8, -0.2]. */
static void test_fake_quant(void) {
    int64_t n5[1] = {5}, m23[2] = {2, 3}, n2[1] = {2};
    Tensor *x = T(1, n5, (double[]){0.37, -0.024, 7, -7, 0.125});
    check1("fake_quantize_per_tensor_affine_cachemask: output", "x: \"f32[5][1]cpu\"",
           "        t = torch.ops.aten.fake_quantize_per_tensor_affine_cachemask.default(x, 0.05, 0, -128, 127)\n        r: \"f32[5][1]cpu\" = t[0]\n",
           &x, 1, 0, (double[]){0.35, 0, 6.35, -6.4, 0.1}, 5, 1e-6);
    check1("fake_quantize_per_tensor_affine_cachemask: mask", "x: \"f32[5][1]cpu\"",
           "        t = torch.ops.aten.fake_quantize_per_tensor_affine_cachemask.default(x, 0.05, 0, -128, 127)\n        r: \"b8[5][1]cpu\" = t[1]\n",
           &x, 1, 0, (double[]){1, 1, 0, 0, 1}, 5, 0);
    Tensor *pc[3] = {T(2, m23, (double[]){0.3, 0.5, -1, 0.5, 1.3, -1}), T(1, n2, (double[]){0.1, 0.2}), TD(DT_I32, 1, n2, (double[]){0, 1})};
    const char *params = "x: \"f32[2, 3][3, 1]cpu\", s: \"f32[2][1]cpu\", z: \"i32[2][1]cpu\"";
    check1("fake_quantize_per_channel_affine_cachemask: output", params,
           "        t = torch.ops.aten.fake_quantize_per_channel_affine_cachemask.default(x, s, z, 0, 0, 5)\n        r: \"f32[2, 3][3, 1]cpu\" = t[0]\n",
           pc, 3, 0, (double[]){0.3, 0.5, 0, 0.4, 0.8, -0.2}, 6, 1e-6);
    check1("fake_quantize_per_channel_affine_cachemask: mask", params,
           "        t = torch.ops.aten.fake_quantize_per_channel_affine_cachemask.default(x, s, z, 0, 0, 5)\n        r: \"b8[2, 3][3, 1]cpu\" = t[1]\n",
           pc, 3, 0, (double[]){1, 1, 0, 1, 0, 0}, 6, 0);
    tensor_unref(x);
    for (int i = 0; i < 3; i++) tensor_unref(pc[i]);
}

int main(void) {
    ctx = mi_ctx_new();
    test_attention_batch_mismatch();
    test_foreach();
    test_attention_dropout();
    test_addcmul();
    test_std_mean();
    test_fold();
    test_values();
    test_weight_norm_backward();
    test_fake_quant();
    test_rev();
    test_gru_cell();
    test_lstm_cell();
    test_coverage_values();
    mi_ctx_free(ctx);
    return done_testing();
}
