/* test_ops.c — the op registry one op at a time: hand-computed values, broadcasting, type
 * promotion with python scalars and 0-dim tensors, view layouts, in-place ops, and the error
 * messages for wrong shapes and arities. Small graphs are written as FX text. */
#include "ops/interp.h"
#include "tap.h"

#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

static MiCtx *ctx;
static bool expect_failure;     /* set around runs that are meant to fail */

/* Build "class G ... forward(self, <params>): <body> return (<ret>,)" and parse it. */
static Graph *graph_of(const char *params, const char *body, const char *ret) {
    char src[8192];
    snprintf(src, sizeof src,
             "class G(torch.nn.Module):\n    def forward(self, %s):\n%s        return (%s,)\n", params, body, ret);
    Graph *g = fx_parse(ctx, src, strlen(src), "test.py", 1);
    if (!g) { char e[2048]; diag("parse failed: %s\n%s", mi_err_str(ctx, e, sizeof e), src); return NULL; }
    ops_resolve_graph(g);
    return g;
}

static Tensor *T(DType dt, int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals ? vals[i] : (double)i);
    return t;
}

/* Run g on tensors (references are borrowed); returns output 0 (new reference) or NULL. */
static Tensor *run(Graph *g, Tensor **ts, int n) {
    IValue in[8] = {0}, *outs = NULL;
    int nouts = 0;
    for (int i = 0; i < n; i++) { in[i].kind = IV_TENSOR; in[i].t = tensor_ref(ts[i]); }
    Tensor *r = NULL;
    if (interp_run(ctx, g, in, n, &outs, &nouts) == 0 && nouts > 0 && outs[0].kind == IV_TENSOR) r = tensor_ref(outs[0].t);
    else if (nouts == 0 && !expect_failure) { char e[2048]; diag("run failed: %s", mi_err_str(ctx, e, sizeof e)); }
    interp_free_outputs(outs, nouts);
    for (int i = 0; i < n; i++) tensor_unref(in[i].t);
    return r;
}

static bool values_are(const Tensor *t, const double *want, int64_t n, double tol) {
    if (!t || tensor_numel(t) != n) { diag("wrong element count"); return false; }
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(tensor_get_f(t, i) - want[i]) <= tol * (1 + fabs(want[i])) || (isnan(want[i]) && isnan(tensor_get_f(t, i))))) {
            char b[256];
            diag("element %lld: got %.9g want %.9g (%s)", (long long)i, tensor_get_f(t, i), want[i], tensor_summary(t, b, sizeof b));
            return false;
        }
    return true;
}

/* One-op check: params/body/ret text, inputs, expected values */
static void check1(const char *name, const char *params, const char *body, Tensor **ins, int nin,
                   const double *want, int64_t n, double tol) {
    Graph *g = graph_of(params, body, "r");
    Tensor *r = g ? run(g, ins, nin) : NULL;
    ok(r && values_are(r, want, n, tol), "%s", name);
    tensor_unref(r);
    graph_free(g);
}

static const char *inferred(const char *params, const char *body) {
    static char buf[1100];
    Graph *g = graph_of(params, body, "r");
    if (!g) return "parse error";
    Node *n = graph_find(g, "r");
    if (op_infer_node_meta(ctx, g, n)) snprintf(buf, sizeof buf, "error: %s", ctx->err.msg);
    else meta_str(&n->meta, buf, sizeof buf);
    graph_free(g);
    return buf;
}

static void test_pointwise(void) {
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4};
    Tensor *a = T(DT_F32, 2, s23, (double[]){1, 2, 3, 4, 5, 6}), *b = T(DT_F32, 1, s3, (double[]){10, 20, 30});
    Tensor *ab[2] = {a, b};
    const char *P = "a: \"f32[2, 3][3, 1]cpu\", b: \"f32[3][1]cpu\"";
    check1("add.Tensor broadcasts with alpha", P, "        r = torch.ops.aten.add.Tensor(a, b, alpha = 2)\n", ab, 2,
           (double[]){21, 42, 63, 24, 45, 66}, 6, 1e-6);
    check1("sub.Tensor", P, "        r = torch.ops.aten.sub.Tensor(b, a)\n", ab, 2, (double[]){9, 18, 27, 6, 15, 24}, 6, 1e-6);
    check1("mul.Tensor with a scalar", P, "        r = torch.ops.aten.mul.Tensor(a, 0.5)\n", ab, 2,
           (double[]){0.5, 1, 1.5, 2, 2.5, 3}, 6, 1e-6);
    check1("div.Tensor", P, "        r = torch.ops.aten.div.Tensor(a, b)\n", ab, 2,
           (double[]){0.1, 0.1, 0.1, 0.4, 0.25, 0.2}, 6, 1e-6);
    check1("rsub.Scalar", P, "        r = torch.ops.aten.rsub.Scalar(a, 1)\n", ab, 2, (double[]){0, -1, -2, -3, -4, -5}, 6, 0);
    check1("where.self with a scalar", P,
           "        gt = torch.ops.aten.gt.Scalar(a, 3)\n        r = torch.ops.aten.where.self(gt, a, 0.0)\n", ab, 2,
           (double[]){0, 0, 0, 4, 5, 6}, 6, 0);
    check1("where.ScalarOther", P,
           "        gt = torch.ops.aten.gt.Scalar(a, 3)\n        r = torch.ops.aten.where.ScalarOther(gt, a, -100.0)\n", ab, 2,
           (double[]){-100, -100, -100, 4, 5, 6}, 6, 0);
    check1("where.ScalarSelf", P,
           "        gt = torch.ops.aten.gt.Scalar(a, 3)\n        r = torch.ops.aten.where.ScalarSelf(gt, 7.0, b)\n", ab, 2,
           (double[]){10, 20, 30, 7, 7, 7}, 6, 0);
    check1("masked_fill.Scalar", P,
           "        le = torch.ops.aten.le.Scalar(a, 2)\n        r = torch.ops.aten.masked_fill.Scalar(a, le, -1.0)\n", ab, 2,
           (double[]){-1, -1, 3, 4, 5, 6}, 6, 0);
    check1("maximum broadcasts", P, "        r = torch.ops.aten.maximum.default(a, b)\n", ab, 2,
           (double[]){10, 20, 30, 10, 20, 30}, 6, 0);
    check1("clamp", P, "        r = torch.ops.aten.clamp.default(a, 2, 5)\n", ab, 2, (double[]){2, 2, 3, 4, 5, 5}, 6, 0);
    tensor_unref(a);
    tensor_unref(b);

    Tensor *x = T(DT_F32, 1, s4, (double[]){-1, 0, 0.5, 4});
    const char *X = "x: \"f32[4][1]cpu\"";
    struct { const char *op; double want[4]; } un[] = {
        {"relu.default", {0, 0, 0.5, 4}},
        {"neg.default", {1, 0, -0.5, -4}},
        {"abs.default", {1, 0, 0.5, 4}},
        {"exp.default", {exp(-1.0), 1, exp(0.5), exp(4.0)}},
        {"sigmoid.default", {1 / (1 + exp(1.0)), 0.5, 1 / (1 + exp(-0.5)), 1 / (1 + exp(-4.0))}},
        {"tanh.default", {tanh(-1.0), 0, tanh(0.5), tanh(4.0)}},
        {"erf.default", {-0.8427007929497149, 0, 0.5204998778130465, 0.9999999845827421}},
        {"sin.default", {sin(-1.0), 0, sin(0.5), sin(4.0)}},
        {"cos.default", {cos(-1.0), 1, cos(0.5), cos(4.0)}},
        {"gelu.default", {-0.15865525393145707, 0, 0.34573123063700656, 3.999873}},
        {"sign.default", {-1, 0, 1, 1}},
    };
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
        char body[256], name[64];
        snprintf(body, sizeof body, "        r = torch.ops.aten.%s(x)\n", un[i].op);
        snprintf(name, sizeof name, "%s values", un[i].op);
        check1(name, X, body, &x, 1, un[i].want, 4, 1e-6);
    }
    check1("gelu approximate='tanh'", X, "        r = torch.ops.aten.gelu.default(x, approximate = 'tanh')\n", &x, 1,
           (double[]){-0.15880800939172324, 0, 0.34571400982514394, 3.9999297}, 4, 1e-6);
    check1("pow.Tensor_Scalar", X, "        r = torch.ops.aten.pow.Tensor_Scalar(x, 2)\n", &x, 1, (double[]){1, 0, 0.25, 16}, 4, 0);
    Tensor *y = T(DT_F32, 1, s4, (double[]){4, 1, 0.25, 16});
    check1("sqrt / rsqrt / log", "x: \"f32[4][1]cpu\"",
           "        s = torch.ops.aten.sqrt.default(x)\n        q = torch.ops.aten.rsqrt.default(x)\n"
           "        m = torch.ops.aten.mul.Tensor(s, q)\n        l = torch.ops.aten.log.default(x)\n"
           "        r = torch.ops.aten.add.Tensor(m, l)\n", &y, 1,
           (double[]){1 + log(4.0), 1, 1 + log(0.25), 1 + log(16.0)}, 4, 1e-6);
    tensor_unref(y);
    Tensor *nanx = T(DT_F32, 1, s4, (double[]){NAN, 1, 2, 3});
    Tensor *xs[2] = {nanx, x};
    check1("maximum propagates nan", "a: \"f32[4][1]cpu\", x: \"f32[4][1]cpu\"", "        r = torch.ops.aten.maximum.default(a, x)\n",
           xs, 2, (double[]){NAN, 1, 2, 4}, 4, 0);
    tensor_unref(nanx);
    tensor_unref(x);

    /* integer arithmetic is exact int64 with python semantics */
    Tensor *i = T(DT_I64, 1, s4, (double[]){-7, 7, -8, 9}), *j = T(DT_I64, 1, s4, (double[]){2, -2, 3, 4});
    Tensor *ij[2] = {i, j};
    const char *I = "i: \"i64[4][1]cpu\", j: \"i64[4][1]cpu\"";
    check1("div floor on ints", I, "        r = torch.ops.aten.div.Tensor_mode(i, j, rounding_mode = 'floor')\n", ij, 2,
           (double[]){-4, -4, -3, 2}, 4, 0);
    check1("div trunc on ints", I, "        r = torch.ops.aten.div.Tensor_mode(i, j, rounding_mode = 'trunc')\n", ij, 2,
           (double[]){-3, -3, -2, 2}, 4, 0);
    check1("true div on ints gives floats", I, "        r = torch.ops.aten.div.Tensor(i, j)\n", ij, 2,
           (double[]){-3.5, -3.5, -8.0 / 3, 2.25}, 4, 1e-6);
    check1("remainder is python modulo", I, "        r = torch.ops.aten.remainder.Tensor(i, j)\n", ij, 2,
           (double[]){1, -1, 1, 1}, 4, 0);
    check1("floor_divide", I, "        r = torch.ops.aten.floor_divide.default(i, j)\n", ij, 2, (double[]){-4, -4, -3, 2}, 4, 0);
    check1("bitwise_not on ints", I, "        r = torch.ops.aten.bitwise_not.default(i)\n", ij, 2, (double[]){6, -8, 7, -10}, 4, 0);
    check1("pow on ints", I, "        r = torch.ops.aten.pow.Tensor_Scalar(j, 3)\n", ij, 2, (double[]){8, -8, 27, 64}, 4, 0);
    check1("eq.Tensor / logical_not", I,
           "        e = torch.ops.aten.ne.Scalar(i, 7)\n        r = torch.ops.aten.logical_not.default(e)\n", ij, 2,
           (double[]){0, 1, 0, 0}, 4, 0);
    tensor_unref(i);
    tensor_unref(j);
}

static void test_promotion(void) {
    is_str(inferred("a: \"i64[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.add.Tensor(a, 2.5)\n"), "f32[2, 3][3, 1]cpu",
           "int tensor + float scalar -> f32");
    is_str(inferred("a: \"i32[2][1]cpu\"", "        r = torch.ops.aten.mul.Tensor(a, 3)\n"), "i32[2][1]cpu",
           "i32 tensor * int scalar stays i32");
    is_str(inferred("a: \"b8[2][1]cpu\"", "        r = torch.ops.aten.add.Tensor(a, 1)\n"), "i64[2][1]cpu",
           "bool tensor + int scalar -> i64");
    is_str(inferred("a: \"f16[2][1]cpu\", b: \"f32[][]cpu\"", "        r = torch.ops.aten.add.Tensor(a, b)\n"), "f16[2][1]cpu",
           "f16 tensor + f32 0-dim tensor stays f16");
    is_str(inferred("a: \"i64[2][1]cpu\", b: \"f64[][]cpu\"", "        r = torch.ops.aten.add.Tensor(a, b)\n"), "f64[2][1]cpu",
           "i64 tensor + f64 0-dim tensor -> f64 (higher category)");
    is_str(inferred("a: \"f16[2][1]cpu\", b: \"f32[2][1]cpu\"", "        r = torch.ops.aten.add.Tensor(a, b)\n"), "f32[2][1]cpu",
           "f16 + f32 -> f32");
    is_str(inferred("a: \"i64[2][1]cpu\"", "        r = torch.ops.aten.exp.default(a)\n"), "f32[2][1]cpu", "exp of ints -> f32");
    is_str(inferred("a: \"i64[2][1]cpu\"", "        r = torch.ops.aten.div.Tensor(a, 2)\n"), "f32[2][1]cpu", "int true division -> f32");
    is_str(inferred("a: \"f32[2][1]cpu\"", "        r = torch.ops.aten.lt.Scalar(a, 1)\n"), "b8[2][1]cpu", "comparison -> b8");
    is_str(inferred("c: \"b8[2][1]cpu\", a: \"i64[2][1]cpu\"", "        r = torch.ops.aten.where.self(c, a, 1.5)\n"), "f32[2][1]cpu",
           "where(cond, i64, 1.5) -> f32");
    is_str(inferred("a: \"i64[2][1]cpu\"", "        r = torch.ops.aten.sum.dim_IntList(a, [0])\n"), "i64[][]cpu", "sum of ints -> i64");
    is_str(inferred("a: \"b8[2][1]cpu\"", "        r = torch.ops.aten.sum.default(a)\n"), "i64[][]cpu", "sum of bools -> i64");
    is_str(inferred("a: \"f32[2][1]cpu\"",
                    "        r = torch.ops.prims.convert_element_type.default(a, torch.float16)\n"), "f16[2][1]cpu", "convert_element_type");
    is_str(inferred("a: \"f32[2][1]cuda:0\"", "        r = torch.ops.aten.add.Tensor(a, 1)\n"), "f32[2][1]cuda:0", "device follows input");
    is_str(inferred("", "        r = torch.ops.aten.full.default([3], 1)\n"), "i64[3][1]cpu", "full with an int fill -> i64");
    is_str(inferred("", "        r = torch.ops.aten.arange.start(0, 5, dtype = torch.float32)\n"), "f32[5][1]cpu", "arange with dtype");
}

/* Nodes without annotations (as passes build them): inference reads through one producer. */
static void test_unannotated_chain(void) {
    is_str(inferred("a: \"f32[4, 6][6, 1]cpu\"",
                    "        vm = torch.ops.aten.var_mean.correction(a, [1], correction = 0, keepdim = True)\n"
                    "        m = vm[1]\n        r = torch.ops.aten.sub.Tensor(a, m)\n"),
           "f32[4, 6][6, 1]cpu", "infer through an unannotated getitem of a tuple op");
    is_str(inferred("a: \"f32[4, 6][6, 1]cpu\"",
                    "        p = torch.ops.aten.permute.default(a, [1, 0])\n        r = torch.ops.aten.mul.Tensor(p, 2)\n"),
           "f32[6, 4][1, 6]cpu", "infer through an unannotated producer");
}

static void test_layouts(void) {
    /* memory formats (suggest_memory_format): convolution and pooling keep channels-last */
    const char *CL = "x: \"f32[2, 3, 4, 4][48, 1, 12, 3]cpu\", w: \"f32[5, 3, 3, 3][27, 9, 3, 1]cpu\"";
    is_str(inferred(CL, "        r = torch.ops.aten.convolution.default(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)\n"),
           "f32[2, 5, 4, 4][80, 1, 20, 5]cpu", "convolution of a channels-last input is channels-last");
    is_str(inferred("x: \"f32[2, 3, 4, 4][48, 16, 4, 1]cpu\", w: \"f32[5, 3, 3, 3][27, 9, 3, 1]cpu\"",
                    "        r = torch.ops.aten.convolution.default(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)\n"),
           "f32[2, 5, 4, 4][80, 16, 4, 1]cpu", "and of a contiguous one contiguous");
    is_str(inferred("x: \"f32[2, 3, 4, 4][48, 1, 12, 3]cpu\"", "        r = torch.ops.aten.avg_pool2d.default(x, [2, 2], [2, 2])\n"),
           "f32[2, 3, 2, 2][12, 1, 6, 3]cpu", "pooling keeps channels-last");
    is_str(inferred("x: \"f32[2, 1, 1, 1][1, 1, 1, 1]cpu\"", "        r = torch.ops.aten.avg_pool2d.default(x, [1, 1], [1, 1])\n"),
           "f32[2, 1, 1, 1][1, 1, 1, 1]cpu", "N111 is ambiguous and stays NCHW");
    const char *P = "a: \"f32[4, 6][6, 1]cpu\"";
    is_str(inferred(P, "        r = torch.ops.aten.permute.default(a, [1, 0])\n"), "f32[6, 4][1, 6]cpu", "permute strides");
    is_str(inferred(P, "        p = torch.ops.aten.permute.default(a, [1, 0])\n        r = torch.ops.aten.add.Tensor(p, 1)\n"),
           "f32[6, 4][1, 6]cpu", "pointwise result follows a permuted input's layout");
    is_str(inferred(P, "        p = torch.ops.aten.permute.default(a, [1, 0])\n        r = torch.ops.aten.clone.default(p)\n"),
           "f32[6, 4][1, 6]cpu", "clone keeps a dense layout");
    is_str(inferred(P, "        p = torch.ops.aten.permute.default(a, [1, 0])\n"
                       "        r = torch.ops.aten.clone.default(p, memory_format = torch.contiguous_format)\n"),
           "f32[6, 4][4, 1]cpu", "clone to contiguous_format");
    is_str(inferred(P, "        r = torch.ops.aten.slice.Tensor(a, 1, 2, 9223372036854775807, 2)\n"), "f32[4, 2][6, 2]cpu",
           "slice with step clamps end");
    is_str(inferred(P, "        r = torch.ops.aten.select.int(a, 1, -1)\n"), "f32[4][6]cpu", "select drops the dim");
    is_str(inferred(P, "        r = torch.ops.aten.unsqueeze.default(a, 1)\n"), "f32[4, 1, 6][6, 6, 1]cpu", "unsqueeze stride");
    is_str(inferred(P, "        u = torch.ops.aten.unsqueeze.default(a, 1)\n        r = torch.ops.aten.expand.default(u, [4, 5, 6])\n"),
           "f32[4, 5, 6][6, 0, 1]cpu", "expand gives stride 0");
    is_str(inferred(P, "        r = torch.ops.aten.view.default(a, [2, -1, 3])\n"), "f32[2, 4, 3][12, 3, 1]cpu", "view infers -1");
    is_str(inferred(P, "        p = torch.ops.aten.permute.default(a, [1, 0])\n        r = torch.ops.aten.reshape.default(p, [24])\n"),
           "f32[24][1]cpu", "reshape of a transposed tensor copies");
    is_str(inferred(P, "        r = torch.ops.aten.transpose.int(a, 0, 1)\n"), "f32[6, 4][1, 6]cpu", "transpose");
    is_str(inferred(P, "        r = torch.ops.aten.t.default(a)\n"), "f32[6, 4][1, 6]cpu", "t");
    is_str(inferred(P, "        r = torch.ops.aten.amax.default(a, [1], True)\n"), "f32[4, 1][1, 1]cpu", "keepdim reduction strides");
    is_str(inferred(P, "        r = torch.ops.aten.sum.dim_IntList(a, [0, 1])\n"), "f32[][]cpu", "full reduction");
    is_str(inferred("a: \"f32[s0, 6][6, 1]cpu\"", "        r = torch.ops.aten.view.default(a, [-1])\n"), "f32[6*s0][1]cpu",
           "view with a symbolic size");
    is_str(inferred("a: \"f32[s0, 6][6, 1]cpu\", b: \"f32[6][1]cpu\"", "        r = torch.ops.aten.mul.Tensor(a, b)\n"),
           "f32[s0, 6][6, 1]cpu", "broadcast with a symbolic size");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\", b: \"f32[2, 5][5, 1]cpu\"", "        r = torch.ops.aten.cat.default([a, b], 1)\n"),
           "f32[2, 8][8, 1]cpu", "cat sizes");
    is_str(inferred("a: \"f32[4][1]cpu\"", "        r = torch.ops.aten.as_strided.default(a, [2, 2], [1, 2])\n"), "f32[2, 2][1, 2]cpu",
           "as_strided");
}

static void test_reductions(void) {
    int64_t s24[2] = {2, 4};
    Tensor *a = T(DT_F32, 2, s24, (double[]){1, 2, 3, 4, 1, 1, 1, 5});
    const char *P = "a: \"f32[2, 4][4, 1]cpu\"";
    check1("sum.dim_IntList keepdim", P, "        r = torch.ops.aten.sum.dim_IntList(a, [1], True)\n", &a, 1, (double[]){10, 8}, 2, 0);
    check1("sum.default", P, "        r = torch.ops.aten.sum.default(a)\n", &a, 1, (double[]){18}, 1, 0);
    check1("mean.dim over dim 0", P, "        r = torch.ops.aten.mean.dim(a, [0])\n", &a, 1, (double[]){1, 1.5, 2, 4.5}, 4, 1e-6);
    check1("amax", P, "        r = torch.ops.aten.amax.default(a, [-1])\n", &a, 1, (double[]){4, 5}, 2, 0);
    check1("amin", P, "        r = torch.ops.aten.amin.default(a, [0])\n", &a, 1, (double[]){1, 1, 1, 4}, 4, 0);
    check1("argmax", P, "        r = torch.ops.aten.argmax.default(a, 1)\n", &a, 1, (double[]){3, 3}, 2, 0);
    check1("var_mean correction 1", P,
           "        vm = torch.ops.aten.var_mean.correction(a, [1], correction = 1, keepdim = True)\n"
           "        v = vm[0]\n        m = vm[1]\n        r = torch.ops.aten.add.Tensor(v, m)\n", &a, 1,
           (double[]){5.0 / 3 + 2.5, 4 + 2}, 2, 1e-6);
    check1("var correction 0", P, "        r = torch.ops.aten.var.correction(a, [1], correction = 0)\n", &a, 1,
           (double[]){1.25, 3}, 2, 1e-6);
    double e1 = exp(-3.0), e2 = exp(-2.0), e3 = exp(-1.0), s1 = e1 + e2 + e3 + 1, f = exp(-4.0), s2 = 3 * f + 1;
    check1("_softmax", P, "        r = torch.ops.aten._softmax.default(a, 1, False)\n", &a, 1,
           (double[]){e1 / s1, e2 / s1, e3 / s1, 1 / s1, f / s2, f / s2, f / s2, 1 / s2}, 8, 1e-6);
    check1("_log_softmax", P, "        r = torch.ops.aten._log_softmax.default(a, 1, False)\n", &a, 1,
           (double[]){-3 - log(s1), -2 - log(s1), -1 - log(s1), -log(s1), -4 - log(s2), -4 - log(s2), -4 - log(s2), -log(s2)}, 8, 1e-6);
    check1("prepare_softmax_online", P,
           "        p = torch.ops.prims.prepare_softmax_online.default(a, 1)\n        m = p[0]\n        s = p[1]\n"
           "        r = torch.ops.aten.mul.Tensor(m, s)\n", &a, 1,
           (double[]){4 * (exp(-3.0) + exp(-2.0) + exp(-1.0) + 1), 5 * (3 * exp(-4.0) + 1)}, 2, 1e-5);
    check1("native_layer_norm", P,
           "        ln = torch.ops.aten.native_layer_norm.default(a, [4], None, None, 0.0)\n        r = ln[0]\n", &a, 1,
           (double[]){-1.3416408, -0.4472136, 0.4472136, 1.3416408, -1 / sqrt(3.0), -1 / sqrt(3.0), -1 / sqrt(3.0), 3 / sqrt(3.0)}, 8, 1e-5);
    tensor_unref(a);
}

static void test_matmul(void) {
    int64_t s22[2] = {2, 2}, s2[1] = {2}, s122[3] = {1, 2, 2};
    Tensor *a = T(DT_F32, 2, s22, (double[]){1, 2, 3, 4}), *b = T(DT_F32, 2, s22, (double[]){5, 6, 7, 8});
    Tensor *c = T(DT_F32, 1, s2, (double[]){1, 1});
    Tensor *ab[2] = {a, b}, *cab[3] = {c, a, b};
    const char *P = "a: \"f32[2, 2][2, 1]cpu\", b: \"f32[2, 2][2, 1]cpu\"";
    check1("mm", P, "        r = torch.ops.aten.mm.default(a, b)\n", ab, 2, (double[]){19, 22, 43, 50}, 4, 1e-5);
    check1("mm with a transposed operand", P,
           "        t = torch.ops.aten.permute.default(b, [1, 0])\n        r = torch.ops.aten.mm.default(a, t)\n", ab, 2,
           (double[]){17, 23, 39, 53}, 4, 1e-5);
    check1("addmm beta/alpha", "c: \"f32[2][1]cpu\", a: \"f32[2, 2][2, 1]cpu\", b: \"f32[2, 2][2, 1]cpu\"",
           "        r = torch.ops.aten.addmm.default(c, a, b, beta = 0.5, alpha = 2)\n", cab, 3,
           (double[]){38.5, 44.5, 86.5, 100.5}, 4, 1e-5);
    Tensor *a3 = T(DT_F32, 3, s122, (double[]){1, 2, 3, 4}), *b3 = T(DT_F32, 3, s122, (double[]){5, 6, 7, 8});
    Tensor *ab3[2] = {a3, b3};
    check1("bmm", "a: \"f32[1, 2, 2][4, 2, 1]cpu\", b: \"f32[1, 2, 2][4, 2, 1]cpu\"", "        r = torch.ops.aten.bmm.default(a, b)\n",
           ab3, 2, (double[]){19, 22, 43, 50}, 4, 1e-5);
    Tensor *i = T(DT_I64, 2, s22, (double[]){1, 2, 3, 4});
    check1("mm on ints", "a: \"i64[2, 2][2, 1]cpu\"", "        r = torch.ops.aten.mm.default(a, a)\n", &i, 1,
           (double[]){7, 10, 15, 22}, 4, 0);
    /* attention on [1, 1, 2, 2]: softmax(q k^T * scale) v */
    int64_t s4d[4] = {1, 1, 2, 2};
    Tensor *q = T(DT_F32, 4, s4d, (double[]){1, 0, 0, 1}), *k = T(DT_F32, 4, s4d, (double[]){1, 0, 0, 1});
    Tensor *v = T(DT_F32, 4, s4d, (double[]){1, 2, 3, 4});
    Tensor *qkv[3] = {q, k, v};
    double e = exp(0.5), w0 = e / (e + 1), w1 = 1 / (e + 1);
    check1("_scaled_dot_product_flash_attention_for_cpu",
           "q: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", k: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", v: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\"",
           "        s = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, scale = 0.5)\n        r = s[0]\n",
           qkv, 3, (double[]){w0 * 1 + w1 * 3, w0 * 2 + w1 * 4, w1 * 1 + w0 * 3, w1 * 2 + w0 * 4}, 4, 1e-6);
    check1("sdpa is_causal", "q: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", k: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\", v: \"f32[1, 1, 2, 2][4, 4, 2, 1]cpu\"",
           "        s = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.0, True, scale = 0.5)\n        r = s[0]\n",
           qkv, 3, (double[]){1, 2, w1 * 1 + w0 * 3, w1 * 2 + w0 * 4}, 4, 1e-6);
    Tensor *all[] = {a, b, c, a3, b3, i, q, k, v};
    for (size_t n = 0; n < sizeof all / sizeof all[0]; n++) tensor_unref(all[n]);
}

static void test_views_and_index(void) {
    int64_t s23[2] = {2, 3}, s2[1] = {2}, s3[1] = {3};
    Tensor *a = T(DT_F32, 2, s23, (double[]){0, 1, 2, 3, 4, 5});
    const char *P = "a: \"f32[2, 3][3, 1]cpu\"";
    check1("permute values", P, "        r = torch.ops.aten.permute.default(a, [1, 0])\n", &a, 1, (double[]){0, 3, 1, 4, 2, 5}, 6, 0);
    check1("slice values", P, "        r = torch.ops.aten.slice.Tensor(a, 1, 1, 3)\n", &a, 1, (double[]){1, 2, 4, 5}, 4, 0);
    check1("select values", P, "        r = torch.ops.aten.select.int(a, 0, 1)\n", &a, 1, (double[]){3, 4, 5}, 3, 0);
    check1("reshape of a transposed tensor", P,
           "        p = torch.ops.aten.permute.default(a, [1, 0])\n        r = torch.ops.aten.reshape.default(p, [6])\n", &a, 1,
           (double[]){0, 3, 1, 4, 2, 5}, 6, 0);
    check1("_unsafe_view of a transposed tensor copies", P,
           "        p = torch.ops.aten.permute.default(a, [1, 0])\n        r = torch.ops.aten._unsafe_view.default(p, [3, 2])\n", &a, 1,
           (double[]){0, 3, 1, 4, 2, 5}, 6, 0);
    check1("expand values", "a: \"f32[2, 3][3, 1]cpu\"",
           "        s = torch.ops.aten.select.int(a, 0, 1)\n        r = torch.ops.aten.expand.default(s, [2, 3])\n", &a, 1,
           (double[]){3, 4, 5, 3, 4, 5}, 6, 0);
    check1("split.Tensor", P, "        s = torch.ops.aten.split.Tensor(a, 2, 1)\n        r = s[1]\n", &a, 1, (double[]){2, 5}, 2, 0);
    check1("cat", P, "        r = torch.ops.aten.cat.default([a, a], 0)\n", &a, 1, (double[]){0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}, 12, 0);
    check1("cat along dim 1", P, "        r = torch.ops.aten.cat.default([a, a], 1)\n", &a, 1,
           (double[]){0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, 12, 0);
    check1("slice_scatter", "a: \"f32[2, 3][3, 1]cpu\"",
           "        z = torch.ops.aten.full.default([2, 1], 9.0)\n        r = torch.ops.aten.slice_scatter.default(a, z, 1, 1, 2)\n",
           &a, 1, (double[]){0, 9, 2, 3, 9, 5}, 6, 0);
    check1("select_scatter", "a: \"f32[2, 3][3, 1]cpu\"",
           "        z = torch.ops.aten.full.default([3], 7.0)\n        r = torch.ops.aten.select_scatter.default(a, z, 0, 0)\n",
           &a, 1, (double[]){7, 7, 7, 3, 4, 5}, 6, 0);
    Tensor *idx = T(DT_I64, 1, s2, (double[]){2, 0});
    Tensor *ai[2] = {a, idx};
    const char *PI = "a: \"f32[2, 3][3, 1]cpu\", i: \"i64[2][1]cpu\"";
    check1("index.Tensor with a None", PI, "        r = torch.ops.aten.index.Tensor(a, [None, i])\n", ai, 2,
           (double[]){2, 0, 5, 3}, 4, 0);
    check1("embedding", "a: \"f32[2, 3][3, 1]cpu\", i: \"i64[2][1]cpu\"",
           "        j = torch.ops.aten.sub.Tensor(i, 1)\n        k = torch.ops.aten.clamp.default(j, 0)\n"
           "        r = torch.ops.aten.embedding.default(a, k)\n", ai, 2, (double[]){3, 4, 5, 0, 1, 2}, 6, 0);
    check1("index_select", PI, "        r = torch.ops.aten.index_select.default(a, 1, i)\n", ai, 2, (double[]){2, 0, 5, 3}, 4, 0);
    int64_t s22[2] = {2, 2};
    Tensor *gi = T(DT_I64, 2, s22, (double[]){0, 2, 1, 1});
    Tensor *ag[2] = {a, gi};
    const char *PG = "a: \"f32[2, 3][3, 1]cpu\", i: \"i64[2, 2][2, 1]cpu\"";
    check1("gather", PG, "        r = torch.ops.aten.gather.default(a, 1, i)\n", ag, 2, (double[]){0, 2, 4, 4}, 4, 0);
    check1("scatter_add", PG,
           "        s = torch.ops.aten.full.default([2, 2], 1.0)\n        r = torch.ops.aten.scatter_add.default(a, 1, i, s)\n", ag, 2,
           (double[]){1, 1, 3, 3, 6, 5}, 6, 0);
    Tensor *vals = T(DT_F32, 1, s2, (double[]){10, 20});
    Tensor *aiv[3] = {a, idx, vals};
    check1("index_put accumulate", "a: \"f32[2, 3][3, 1]cpu\", i: \"i64[2][1]cpu\", v: \"f32[2][1]cpu\"",
           "        r = torch.ops.aten.index_put.default(a, [None, i], v, True)\n", aiv, 3, (double[]){20, 1, 12, 23, 4, 15}, 6, 0);
    Tensor *bad = T(DT_I64, 1, s2, (double[]){3, 0});
    Tensor *abad[2] = {a, bad};
    Graph *g = graph_of(PI, "        r = torch.ops.aten.index.Tensor(a, [None, i])\n", "r");
    expect_failure = true;
    ok(run(g, abad, 2) == NULL, "out-of-range index fails");
    expect_failure = false;
    is_str(ctx->err.msg, "node 'r' (aten.index.Tensor): index 3 is out of bounds for dimension 1 with size 3", "index error message");
    graph_free(g);
    check1("constant_pad_nd", P, "        r = torch.ops.aten.constant_pad_nd.default(a, [1, -1, 0, 1], 9.0)\n", &a, 1,
           (double[]){9, 0, 1, 9, 3, 4, 9, 9, 9}, 9, 0);
    {
        int64_t xs[4] = {1, 2, 3, 3}, ws[4] = {2, 1, 2, 2};
        double xv[18], wv[8] = {1, 0, 0, 1, 0, 1, 1, 0};
        for (int q = 0; q < 18; q++) xv[q] = q;
        Tensor *cx = T(DT_F32, 4, xs, xv), *cw = T(DT_F32, 4, ws, wv), *cb = T(DT_F32, 1, s2, (double[]){0.5, -1});
        Tensor *cin[3] = {cx, cw, cb};
        /* groups=2: out channel 0 sees input channel 0 with [[1,0],[0,1]], channel 1 sees channel 1 with [[0,1],[1,0]] */
        check1("convolution with groups and bias", "x: \"f32[1, 2, 3, 3][18, 9, 3, 1]cpu\", w: \"f32[2, 1, 2, 2][4, 4, 2, 1]cpu\", b: \"f32[2][1]cpu\"",
               "        r = torch.ops.aten.convolution.default(x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 2)\n", cin, 3,
               (double[]){4.5, 6.5, 10.5, 12.5, 21, 23, 27, 29}, 8, 0);
        is_str(inferred("x: \"f32[2, 3, 32, 32][3072, 1024, 32, 1]cpu\", w: \"f32[8, 3, 3, 3][27, 9, 3, 1]cpu\"",
                        "        r = torch.ops.aten.convolution.default(x, w, None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1)\n"),
               "f32[2, 8, 16, 16][2048, 256, 16, 1]cpu", "convolution output shape");
        tensor_unref(cx); tensor_unref(cw); tensor_unref(cb);
    }
    {
        int64_t s5[1] = {5};
        Tensor *h = T(DT_F32, 1, s5, (double[]){-4, -1, 0, 1, 4});
        check1("hardtanh defaults", "x: \"f32[5][1]cpu\"", "        r = torch.ops.aten.hardtanh.default(x)\n", &h, 1,
               (double[]){-1, -1, 0, 1, 1}, 5, 0);
        check1("hardswish", "x: \"f32[5][1]cpu\"", "        r = torch.ops.aten.hardswish.default(x)\n", &h, 1,
               (double[]){0, -1.0 / 3, 0, 2.0 / 3, 4}, 5, 1e-6);
        check1("softplus beta 2", "x: \"f32[5][1]cpu\"", "        r = torch.ops.aten.softplus.default(x, 2)\n", &h, 1,
               (double[]){log1p(exp(-8.0)) / 2, log1p(exp(-2.0)) / 2, log(2.0) / 2, log1p(exp(2.0)) / 2, log1p(exp(8.0)) / 2}, 5, 1e-6);
        tensor_unref(h);
    }
    check1("arange", "", "        r = torch.ops.aten.arange.start_step(1, 8, 3)\n", NULL, 0, (double[]){1, 4, 7}, 3, 0);
    check1("iota", "", "        r = torch.ops.prims.iota.default(3, start = 2, step = 2, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n",
           NULL, 0, (double[]){2, 4, 6}, 3, 0);
    Tensor *three = T(DT_F32, 1, s3, NULL);
    check1("ones / zeros_like", "a: \"f32[3][1]cpu\"",
           "        o = torch.ops.aten.ones.default([3])\n        z = torch.ops.aten.zeros_like.default(a)\n        r = torch.ops.aten.add.Tensor(o, z)\n",
           &three, 1, (double[]){1, 1, 1}, 3, 0);
    Tensor *all[] = {a, idx, gi, vals, bad, three};
    for (size_t n = 0; n < sizeof all / sizeof all[0]; n++) tensor_unref(all[n]);
}

static void test_inplace(void) {
    int64_t s3[1] = {3};
    Tensor *a = T(DT_F32, 1, s3, (double[]){1, 2, 3}), *b = T(DT_F32, 1, s3, (double[]){10, 10, 10});
    Tensor *ab[2] = {a, b};
    Graph *g = graph_of("a: \"f32[3][1]cpu\", b: \"f32[3][1]cpu\"",
                        "        m = torch.ops.aten.mul_.Tensor(a, 2)\n        r = torch.ops.aten.add_.Tensor(a, b)\n", "r");
    Tensor *r = run(g, ab, 2);
    ok(r && values_are(r, (double[]){12, 14, 16}, 3, 0), "add_ returns the updated self");
    ok(values_are(a, (double[]){12, 14, 16}, 3, 0), "mul_ and add_ mutate the input");
    ok(r && r->storage == a->storage, "the result aliases the input");
    tensor_unref(r);
    graph_free(g);
    g = graph_of("a: \"f32[3][1]cpu\", b: \"f32[3][1]cpu\"", "        r = torch.ops.aten.copy_.default(a, b)\n", "r");
    r = run(g, ab, 2);
    ok(values_are(a, (double[]){10, 10, 10}, 3, 0), "copy_ writes src into self");
    tensor_unref(r);
    graph_free(g);
    /* the rest of the in-place family is computed and written back */
    g = graph_of("a: \"f32[3][1]cpu\"", "        r = torch.ops.aten.relu_.default(a)\n", "r");
    Tensor *n = T(DT_F32, 1, s3, (double[]){-1, 0, 1});
    r = run(g, &n, 1);
    ok(values_are(n, (double[]){0, 0, 1}, 3, 0), "relu_ in place");
    tensor_unref(r);
    tensor_unref(n);
    graph_free(g);
    tensor_unref(a);
    tensor_unref(b);
}

static void test_random(void) {
    int64_t s[1] = {4000};
    Tensor *x = T(DT_F32, 1, s, NULL);
    for (int i = 0; i < 4000; i++) tensor_set_f(x, i, 1);
    const char *P = "x: \"f32[4000][1]cpu\"";
    Graph *g = graph_of(P, "        d = torch.ops.aten.native_dropout.default(x, 0.25, True)\n        r = d[0]\n", "r");
    Tensor *a = run(g, &x, 1), *b = run(g, &x, 1);
    ok(a && b && tensor_compare(a, b, 0, 0).ok, "dropout is repeatable for a seed");
    int kept = 0;
    bool scaled = true;
    for (int i = 0; a && i < 4000; i++) {
        double v = tensor_get_f(a, i);
        kept += v != 0;
        scaled &= v == 0 || fabs(v - 4.0 / 3) < 1e-6;
    }
    ok(kept > 2800 && kept < 3200 && scaled, "dropout keeps about 75%% (%d of 4000), scaled by 1/(1-p)", kept);
    tensor_unref(a); tensor_unref(b);
    graph_free(g);
    g = graph_of(P, "        r = torch.ops.aten.randn_like.default(x)\n", "r");
    a = run(g, &x, 1);
    double mean = 0, var = 0;
    for (int i = 0; a && i < 4000; i++) mean += tensor_get_f(a, i) / 4000;
    for (int i = 0; a && i < 4000; i++) var += pow(tensor_get_f(a, i) - mean, 2) / 4000;
    ok(fabs(mean) < 0.1 && fabs(var - 1) < 0.1, "randn_like mean %.3f variance %.3f", mean, var);
    tensor_unref(a);
    graph_free(g);
    tensor_unref(x);
}

static void test_errors(void) {
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\", b: \"f32[2, 4][4, 1]cpu\"", "        r = torch.ops.aten.add.Tensor(a, b)\n"),
           "error: node 'r' (aten.add.Tensor): shapes do not broadcast: size 3 vs 4 at dimension 1", "broadcast error");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.add.Tensor(a)\n"),
           "error: node 'r' (aten.add.Tensor): expected 2 arguments, got 1", "arity error");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        p = torch.ops.aten.permute.default(a, [1, 0])\n"
                                                 "        r = torch.ops.aten.view.default(p, [6])\n"),
           "error: node 'r' (aten.view.default): view size is not compatible with input tensor's size and stride "
           "(at least one dimension spans across two contiguous subspaces); use reshape", "view of a transposed tensor");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.view.default(a, [4, 2])\n"),
           "error: node 'r' (aten.view.default): shape of 8 elements is invalid for input of size 6", "view numel error");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.permute.default(a, [0])\n"),
           "error: node 'r' (aten.permute.default): permute needs 2 dims for a tensor of rank 2, got 1", "permute arity");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.select.int(a, 0, 2)\n"),
           "error: node 'r' (aten.select.int): select(): index 2 out of range for dimension 0 of size 2", "select range");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.sum.dim_IntList(a, [2])\n"),
           "error: node 'r' (aten.sum.dim_IntList): dimension 2 out of range for a tensor of rank 2", "reduction dim range");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.mm.default(a, a)\n"),
           "error: node 'r' (aten.mm.default): shapes cannot be multiplied: inner sizes 3 and 2 differ", "mm shapes");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.bmm.default(a, a)\n"),
           "error: node 'r' (aten.bmm.default): expects 3-D operands, got 2-D and 2-D", "bmm rank");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\", b: \"f32[3][1]cpu\"", "        r = torch.ops.aten.cat.default([a, b])\n"),
           "error: node 'r' (aten.cat.default): tensors must have the same rank: 2 vs 1 (tensor 1)", "cat rank");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.expand.default(a, [4, 3])\n"),
           "error: node 'r' (aten.expand.default): expand: size 2 at dimension 0 cannot be expanded to 4 (only size 1 can)",
           "expand error");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.add.Tensor(a, [1, 2])\n"),
           "error: node 'r' (aten.add.Tensor): argument 'other' must be a number, got a list", "argument type error");
    is_str(inferred("a: \"f32[2, 3][3, 1]cpu\"", "        r = torch.ops.aten.bogus.default(a)\n"),
           "error: unsupported op 'aten.bogus.default' (node 'r')", "unknown op in infer");
}

/* every op any fixture graph uses is in the registry */
static int scan_ops(const char *path, int *missing) {
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    int found = 0;
    if (!text) return 0;
    for (char *p = strstr(text, "torch.ops."); p; p = strstr(p + 1, "torch.ops.")) {
        char name[128];
        size_t n = 0;
        const char *q = p + 10;
        while (n + 1 < sizeof name && (isalnum((unsigned char)q[n]) || q[n] == '_' || q[n] == '.')) { name[n] = q[n]; n++; }
        while (n && name[n - 1] == '.') n--;
        name[n] = 0;
        found++;
        if (!op_lookup(name)) { diag("%s: op %s not in the registry", path, name); (*missing)++; }
    }
    free(text);
    return found;
}

static void walk_fixtures(const char *dir, int *files, int *uses, int *missing) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[2048];
        struct stat st;
        snprintf(p, sizeof p, "%.1500s/%.255s", dir, e->d_name);
        if (strstr(e->d_name, "_grad.py") || !strcmp(e->d_name, "fx_graph_readable.py")) {
            (*files)++;
            *uses += scan_ops(p, missing);
        } else if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            walk_fixtures(p, files, uses, missing);
        }
    }
    closedir(d);
}

static void test_registry(void) {
    int files = 0, uses = 0, missing = 0;
    walk_fixtures("tests/fixtures/torch-cases", &files, &uses, &missing);
    ok(files >= 100 && uses >= 700, "scanned %d fixture graph files with %d op uses", files, uses);
    is_int(missing, 0, "every op used by the fixtures is registered");
    ok(op_count() >= 200, "registry has %d ops", op_count());
    const char *must[] = {"aten.add.Tensor", "aten.div.Tensor_mode", "aten.gelu.default", "aten.pow.Tensor_Tensor",
                          "aten.where.self", "aten.bitwise_not.default", "aten.copy.default", "aten._to_copy.default",
                          "aten.to.dtype", "aten._unsafe_view.default", "aten.squeeze.dims", "aten.split_with_sizes.default",
                          "aten.mean.dim", "aten.amin.default", "aten.var.correction", "aten.softmax.int",
                          "aten.native_layer_norm.default", "aten.zeros.default", "aten.arange.default", "aten.index_put.default",
                          "aten.masked_fill.Scalar", "aten.remainder.Tensor", "aten.floor_divide.default", "aten.alias.default",
                          "aten._assert_async.msg", "aten.mul_.Tensor", "operator.getitem", "higher_order.cond", "prims.iota.default"};
    int have = 0;
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        if (op_lookup(must[i])) have++;
        else diag("missing %s", must[i]);
    }
    is_int(have, (int)(sizeof must / sizeof must[0]), "the required ops are registered");
    const OpDef *d = op_lookup("aten.copy_.default");
    ok(d && (d->flags & OPF_INPLACE), "copy_ is in-place");
    d = op_lookup("higher_order.cond");
    ok(d && (d->flags & OPF_HOP) && (d->flags & OPF_TUPLE), "cond is a tuple-returning HOP");
    d = op_lookup("aten._assert_async.msg");
    ok(d && (d->flags & OPF_NOEFFECT), "assert is no-effect");
    ok(op_lookup("torch.ops.aten.mm.default") == op_lookup("aten.mm.default"), "lookup accepts the torch.ops. prefix");
    ok(op_lookup("aten.nope.default") == NULL, "unknown name gives NULL");
    int named = 0;
    for (int i = 0; i < op_count(); i++) named += op_at(i)->name && op_at(i)->doc && op_at(i)->eval && op_at(i)->infer_meta;
    is_int(named, op_count(), "every row has a name, doc, eval and infer_meta");
}

/* Every op with a spread of wrong or odd argument lists: inference and evaluation must either
 * succeed or fail with a message; never crash (this runs under ASan/UBSan too). */
static void test_fuzz_arguments(void) {
    const char *pats[] = {
        "", "a", "a, a", "a, 1", "a, [0]", "a, -5", "a, 1, 2", "a, a, a", "a, [a, a]", "1.5, a", "a, None, a",
        "a, [0, 1], True", "a, 0, i", "i, a", "a, [100000000000, 100000000000]", "a, [-1, -1]", "a, 'abc'",
        "a, 2, 3, 4, 5, 6", "b, a", "a, b", "i, [i]", "a, [None, i]", "a, 1, i, a", "s, s", "a, [2, 3], [3, 1]",
        "a, [4, 3]", "a, 7, 0, 9", "b, b, b", "a, 0, 3", "a, [3]", "[a, b], 0", "a, 1, 0, 2, 1",
    };
    int runs = 0, failures_without_message = 0, succeeded = 0;
    for (int k = 0; k < op_count(); k++) {
        const OpDef *d = op_at(k);
        if (!strcmp(d->name, "higher_order.cond")) continue;
        for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
            char body[512];
            snprintf(body, sizeof body, "        r = torch.ops.%s(%s)\n", d->name, pats[p]);
            if (!strncmp(d->name, "operator.", 9)) snprintf(body, sizeof body, "        r = %s(%s)\n", d->name, pats[p]);
            Graph *g = graph_of("a: \"f32[2, 3][3, 1]cpu\", b: \"f32[3][1]cpu\", i: \"i64[2, 3][3, 1]cpu\", s: \"Sym(s0)\"",
                                body, "r");
            if (!g) continue;
            Node *n = graph_find(g, "r");
            mi_clear_err(ctx);
            if (n && op_infer_node_meta(ctx, g, n) && !ctx->err.msg[0]) failures_without_message++;
            IValue *in = NULL, *outs = NULL;
            int nin = 0, nouts = 0;
            SymBinding sb = {"s0", 3};
            if (interp_random_inputs(ctx, g, &sb, 1, &in, &nin) == 0) {
                for (int t = 0; t < nin; t++)    /* small ints so index-like ops sometimes succeed */
                    if (in[t].kind == IV_TENSOR && in[t].t->dtype == DT_I64)
                        for (int e = 0; e < 6; e++) tensor_set_f(in[t].t, e, e % 2);
                mi_clear_err(ctx);
                int rc = interp_run(ctx, g, in, nin, &outs, &nouts);
                if (rc && !ctx->err.msg[0]) failures_without_message++;
                if (!rc) succeeded++;
                runs++;
                interp_free_outputs(outs, nouts);
                interp_free_outputs(in, nin);
            }
            graph_free(g);
        }
    }
    ok(runs > 5000, "ran %d odd calls (%d succeeded) without a crash", runs, succeeded);
    is_int(failures_without_message, 0, "every failure has a message");
}

int main(void) {
    ctx = mi_ctx_new();
    test_pointwise();
    test_promotion();
    test_unannotated_chain();
    test_layouts();
    test_reductions();
    test_matmul();
    test_views_and_index();
    test_inplace();
    test_random();
    test_errors();
    test_registry();
    test_fuzz_arguments();
    mi_ctx_free(ctx);
    return done_testing();
}
