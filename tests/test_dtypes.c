/* test_dtypes.c — the dtype layer against PyTorch's documented behaviour: result dtypes by
 * torch.result_type / _prims_common.elementwise_dtypes (dim tensors before zero-dim tensors
 * before python scalars, categories bool < int < float < complex, u8 + i8 = i16, f16 + bf16 =
 * f32), integer arithmetic that wraps as the C types do, float -> int casts as x86's
 * cvttss2si (truncation, NaN -> the minimum), bool arithmetic, sums of small ints in int64,
 * half math in float32 rounded once (round to nearest even), and .npy for dtypes numpy lacks. */
#include "ops/numerics.h"
#include "base/same.h"
#include "tap.h"

#include <complex.h>
#include <math.h>
#include <unistd.h>

/* Run "r = torch.ops.OP(a[, b])" on tensors of the given dtypes filled with vals; returns the
 * result (caller unrefs) or NULL. An "x" in B makes b a python scalar written as SCALAR. */
static Tensor *run_op(MiCtx *ctx, const char *op, DType da, const double *va, DType db, const double *vb,
                      int64_t n, int64_t nb, const char *scalar) {
    char src[1024];
    const char *ta = dtype_abbrev(da), *tb = dtype_abbrev(db);
    if (scalar)
        snprintf(src, sizeof src, "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, a: \"%s[%lld][1]cpu\"):\n"
                 "        r = torch.ops.%s(a, %s)\n"
                 "        return (r,)\n", ta, (long long)n, op, scalar);
    else if (db == DT_INVALID)
        snprintf(src, sizeof src, "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, a: \"%s[%lld][1]cpu\"):\n"
                 "        r = torch.ops.%s(a)\n"
                 "        return (r,)\n", ta, (long long)n, op);
    else if (nb == 0)
        snprintf(src, sizeof src, "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, a: \"%s[%lld][1]cpu\", b: \"%s[][]cpu\"):\n"
                 "        r = torch.ops.%s(a, b)\n"
                 "        return (r,)\n", ta, (long long)n, tb, op);
    else
        snprintf(src, sizeof src, "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, a: \"%s[%lld][1]cpu\", b: \"%s[%lld][1]cpu\"):\n"
                 "        r = torch.ops.%s(a, b)\n"
                 "        return (r,)\n", ta, (long long)n, tb, (long long)nb, op);
    Graph *g = fx_parse(ctx, src, strlen(src), "dtypes.py", 1);
    if (!g) { diag("%s", ctx->err.msg); return NULL; }
    ops_resolve_graph(g);
    IValue in[2] = {{0}};
    int nin = scalar || db == DT_INVALID ? 1 : 2;
    in[0].kind = IV_TENSOR;
    in[0].t = tensor_new(ctx, da, 1, &n);
    for (int64_t i = 0; i < n; i++) tensor_set_f(in[0].t, i, va[i]);
    if (nin == 2) {
        in[1].kind = IV_TENSOR;
        in[1].t = tensor_new(ctx, db, nb ? 1 : 0, &nb);
        for (int64_t i = 0; i < (nb ? nb : 1); i++) tensor_set_f(in[1].t, i, vb[i]);
    }
    IValue *outs = NULL;
    int nouts = 0;
    Tensor *r = NULL;
    if (interp_run(ctx, g, in, nin, &outs, &nouts) == 0 && nouts == 1 && outs[0].kind == IV_TENSOR) r = tensor_ref(outs[0].t);
    else diag("%s: %s", op, ctx->err.msg);
    interp_free_outputs(outs, nouts);
    ivalue_clear(&in[0]);
    ivalue_clear(&in[1]);
    graph_free(g);
    return r;
}

static void promotion(MiCtx *ctx) {
    static const double one[4] = {1, 1, 1, 1};
    struct { DType a, b; int64_t nb; const char *scalar; DType want; const char *why; } t[] = {
        {DT_U8, DT_I8, 4, NULL, DT_I16, "u8 + i8 = i16"},
        {DT_I8, DT_I16, 4, NULL, DT_I16, "i8 + i16 = i16"},
        {DT_U8, DT_I64, 4, NULL, DT_I64, "u8 + i64 = i64"},
        {DT_BOOL, DT_U8, 4, NULL, DT_U8, "bool + u8 = u8"},
        {DT_I32, DT_F16, 4, NULL, DT_F16, "i32 + f16 = f16"},
        {DT_F16, DT_BF16, 4, NULL, DT_F32, "f16 + bf16 = f32"},
        {DT_BF16, DT_F32, 4, NULL, DT_F32, "bf16 + f32 = f32"},
        {DT_F32, DT_F64, 0, NULL, DT_F32, "a zero-dim f64 does not widen an f32 tensor"},
        {DT_I32, DT_F64, 0, NULL, DT_F64, "a zero-dim f64 of a higher category decides: i32 + f64[] = f64"},
        {DT_I8, DT_I64, 0, NULL, DT_I8, "a zero-dim i64 does not widen an i8 tensor"},
        {DT_F16, DT_INVALID, 0, "2.5", DT_F16, "f16 + python float = f16"},
        {DT_I64, DT_INVALID, 0, "2.5", DT_F32, "i64 + python float = the default dtype f32"},
        {DT_U8, DT_INVALID, 0, "1000", DT_U8, "u8 + python int = u8"},
        {DT_BOOL, DT_INVALID, 0, "True", DT_BOOL, "bool + python bool = bool"},
        {DT_BOOL, DT_INVALID, 0, "3", DT_I64, "bool + python int = i64"},
        {DT_C64, DT_F64, 4, NULL, DT_C128, "c64 + f64 = c128"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        Tensor *r = run_op(ctx, t[i].scalar ? "aten.add.Scalar" : "aten.add.Tensor", t[i].a, one, t[i].b ? t[i].b : DT_F32, one,
                           4, t[i].nb, t[i].scalar);
        ok(r && r->dtype == t[i].want, "%s (got %s)", t[i].why, r ? dtype_abbrev(r->dtype) : "an error");
        tensor_unref(r);
    }
    /* division of ints is true division into the default dtype; comparisons give bool */
    static const double seven[2] = {7, -7}, two[2] = {2, 2};
    Tensor *r = run_op(ctx, "aten.div.Tensor", DT_I32, seven, DT_I32, two, 2, 2, NULL);
    ok(r && r->dtype == DT_F32 && tensor_get_f(r, 0) == 3.5 && tensor_get_f(r, 1) == -3.5, "i32 / i32 = f32 3.5");
    tensor_unref(r);
    r = run_op(ctx, "aten.lt.Tensor", DT_U8, seven, DT_I8, two, 2, 2, NULL);
    ok(r && r->dtype == DT_BOOL, "u8 < i8 is bool");
    tensor_unref(r);
}

static void integer_math(MiCtx *ctx) {
    static const double hundred[2] = {100, 127}, zero[2] = {0, 5}, one1[2] = {1, 1}, big[2] = {300, -300};
    Tensor *r = run_op(ctx, "aten.add.Tensor", DT_I8, hundred, DT_I8, hundred, 2, 2, NULL);
    ok(r && r->dtype == DT_I8 && tensor_get_i(r, 0) == -56 && tensor_get_i(r, 1) == -2, "int8 100 + 100 wraps to -56, 127 + 127 to -2");
    tensor_unref(r);
    r = run_op(ctx, "aten.sub.Tensor", DT_U8, zero, DT_U8, one1, 2, 2, NULL);
    ok(r && tensor_get_i(r, 0) == 255 && tensor_get_i(r, 1) == 4, "uint8 0 - 1 wraps to 255");
    tensor_unref(r);
    r = run_op(ctx, "aten.mul.Tensor", DT_I16, big, DT_I16, big, 2, 2, NULL);
    ok(r && tensor_get_i(r, 0) == 24464 && tensor_get_i(r, 1) == 24464, "int16 300 * 300 wraps to 24464");
    tensor_unref(r);
    static const double neg7[2] = {-7, 7}, two[2] = {2, -2};
    r = run_op(ctx, "aten.floor_divide.default", DT_I32, neg7, DT_I32, two, 2, 2, NULL);
    ok(r && r->dtype == DT_I32 && tensor_get_i(r, 0) == -4 && tensor_get_i(r, 1) == -4, "floor_divide(-7, 2) = -4");
    tensor_unref(r);
    r = run_op(ctx, "aten.remainder.Tensor", DT_I32, neg7, DT_I32, two, 2, 2, NULL);
    ok(r && tensor_get_i(r, 0) == 1 && tensor_get_i(r, 1) == -1, "remainder takes the divisor's sign (1, -1)");
    tensor_unref(r);
    r = run_op(ctx, "aten.fmod.Tensor", DT_I32, neg7, DT_I32, two, 2, 2, NULL);
    ok(r && tensor_get_i(r, 0) == -1 && tensor_get_i(r, 1) == 1, "fmod takes the dividend's sign (-1, 1)");
    tensor_unref(r);
    /* bool arithmetic stays bool; sums of small ints are int64 */
    static const double tf[2] = {1, 1};
    r = run_op(ctx, "aten.add.Tensor", DT_BOOL, tf, DT_BOOL, tf, 2, 2, NULL);
    ok(r && r->dtype == DT_BOOL && tensor_get_i(r, 0) == 1, "True + True = True (bool)");
    tensor_unref(r);
    r = run_op(ctx, "aten.sum.default", DT_I8, hundred, DT_INVALID, NULL, 2, 0, NULL);
    ok(r && r->dtype == DT_I64 && tensor_get_i(r, 0) == 227, "sum of int8 {100, 127} is int64 227, not wrapped");
    tensor_unref(r);
    r = run_op(ctx, "aten.sum.default", DT_BOOL, tf, DT_INVALID, NULL, 2, 0, NULL);
    ok(r && r->dtype == DT_I64 && tensor_get_i(r, 0) == 2, "sum of bools counts them (int64)");
    tensor_unref(r);
    static const double i64big[2] = {9007199254740993.0, -3};
    r = run_op(ctx, "aten.neg.default", DT_I64, i64big, DT_INVALID, NULL, 2, 0, NULL);
    ok(r && tensor_get_i(r, 1) == 3, "neg of int64");
    tensor_unref(r);
    r = run_op(ctx, "aten.bitwise_not.default", DT_U8, zero, DT_INVALID, NULL, 2, 0, NULL);
    ok(r && tensor_get_i(r, 0) == 255 && tensor_get_i(r, 1) == 250, "bitwise_not of uint8 0 is 255");
    tensor_unref(r);
}

/* Conversions as PyTorch's CPU kernels make them (static_cast on x86). */
static void casts(MiCtx *ctx) {
    int64_t n = 5;
    Tensor *f = tensor_new(ctx, DT_F32, 1, &n);
    double v[5] = {300.7, -1.5, -1.0, NAN, 2.5};
    for (int i = 0; i < 5; i++) tensor_set_f(f, i, v[i]);
    Tensor *i8 = tensor_to_dtype(ctx, f, DT_I8), *u8 = tensor_to_dtype(ctx, f, DT_U8), *i64 = tensor_to_dtype(ctx, f, DT_I64);
    ok(tensor_get_i(i8, 0) == 44 && tensor_get_i(i8, 1) == -1 && tensor_get_i(i8, 3) == 0,
       "f32 -> int8 truncates through int32 (300.7 -> 44, -1.5 -> -1, NaN -> 0)");
    ok(tensor_get_i(u8, 2) == 255, "f32 -1.0 -> uint8 is 255");
    ok(tensor_get_i(i64, 3) == INT64_MIN && tensor_get_i(i64, 4) == 2, "f32 NaN -> int64 is the minimum, 2.5 -> 2");
    /* bf16 and f16: round to nearest even */
    ok(mi_f32_to_bf16(1.00390625f) == 0x3f80 && mi_f32_to_bf16(1.01171875f) == 0x3f82,
       "bf16 rounds ties to even (1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6)");
    ok(mi_f32_to_f16(1.00048828125f) == 0x3c00 && mi_f32_to_f16(1.00146484375f) == 0x3c02,
       "f16 rounds ties to even");
    ok(mi_f32_to_f16(65520.0f) == 0x7c00 && mi_f32_to_f16(65519.0f) == 0x7bff, "f16 overflows to inf from 65520");
    ok(mi_f16_to_f32(0x0001) == ldexpf(1, -24), "f16 subnormals");
    ok(isnan(mi_bf16_to_f32(mi_f32_to_bf16(NAN))), "bf16 keeps NaN");
    tensor_unref(f); tensor_unref(i8); tensor_unref(u8); tensor_unref(i64);
}

/* Half math: computed in float32, rounded once (PyTorch's CPU kernels widen f16/bf16). */
static void half_math(MiCtx *ctx) {
    double x[3] = {1.5, -0.375, 3.0};
    Tensor *r = run_op(ctx, "aten.gelu.default", DT_BF16, x, DT_INVALID, NULL, 3, 0, NULL);
    bool good = r && r->dtype == DT_BF16;
    for (int i = 0; good && i < 3; i++) {
        float a = (float)x[i];
        float want = a * 0.5f * (1.0f + erff(a * (float)M_SQRT1_2));
        good = tensor_get_f(r, i) == (double)mi_bf16_to_f32(mi_f32_to_bf16(want));
    }
    ok(good, "bf16 gelu = f32 gelu of the widened input, rounded once to bf16");
    tensor_unref(r);
    double h[2] = {0.1, 3.3};
    r = run_op(ctx, "aten.mul.Scalar", DT_F16, h, DT_INVALID, NULL, 2, 0, "0.3");
    float a = mi_f16_to_f32(mi_f32_to_f16(0.1f));
    ok(r && r->dtype == DT_F16 && tensor_get_f(r, 0) == (double)mi_f16_to_f32(mi_f32_to_f16(a * 0.3f)),
       "f16 * 0.3: the scalar stays a float (opmath), one rounding to f16");
    tensor_unref(r);
}

/* .npy: bf16 has no numpy type; it is written as float32 (exact) and read back for a bf16 input. */
static void npy_bf16(MiCtx *ctx) {
    int64_t n = 3;
    Tensor *b = tensor_new(ctx, DT_BF16, 1, &n);
    for (int i = 0; i < 3; i++) tensor_set_f(b, i, 1.0 + i / 3.0);
    char path[] = "/tmp/mi-dtypes-XXXXXX.npy";
    int fd = mkstemps(path, 4);
    if (fd >= 0) close(fd);
    ok(npy_save(ctx, path, b) == 0, "a bf16 tensor saves");
    Tensor *back = npy_load(ctx, path);
    ok(back && back->dtype == DT_F32, "as float32 (.npy has no bf16)");
    Tensor *as = back ? num_recorded_as(ctx, back, DT_BF16) : NULL;
    ok(as && tensor_same(b, as, NULL, 0, 0).ok, "every value exactly");
    tensor_unref(as);
    unlink(path);
    tensor_unref(b);
    tensor_unref(back);
}

/* PyTorch's barebones unsigned types: storage, .npy, casts, and the promotions it allows. */
static void unsigned_types(MiCtx *ctx) {
    ok(dtype_from_abbrev("u64", 3) == DT_U64 && dtype_from_torch_name("torch.uint32", 12) == DT_U32, "u16/u32/u64 are known");
    int64_t n = 2;
    Tensor *u = tensor_new(ctx, DT_U64, 1, &n);
    tensor_store_i(u, 0, (int64_t)0xfedcba9876543210ull);
    tensor_set_f(u, 1, 65536.0 * 65536.0 * 3);
    char path[] = "/tmp/mi-dtypes-u-XXXXXX.npy";
    int fd = mkstemps(path, 4);
    if (fd >= 0) close(fd);
    Tensor *back = npy_save(ctx, path, u) == 0 ? npy_load(ctx, path) : NULL;
    ok(back && back->dtype == DT_U64 && (uint64_t)tensor_get_i(back, 0) == 0xfedcba9876543210ull && tensor_get_f(back, 1) == 12884901888.0,
       "uint64 round-trips through .npy ('<u8') bit for bit");
    unlink(path);
    Tensor *u32 = tensor_new(ctx, DT_U32, 1, &n), *f = tensor_new(ctx, DT_F32, 1, &n);
    tensor_set_f(f, 0, -1.0);
    tensor_set_f(f, 1, 4000000000.0);
    ok(tensor_copy_into(ctx, u32, f) == 0 && tensor_get_i(u32, 0) == 4294967295ll && tensor_get_i(u32, 1) == 4000000000ll,
       "f32 -> uint32: -1 wraps to 4294967295, 4e9 is exact");
    static const double one[2] = {1, 1};
    Tensor *r = run_op(ctx, "aten.add.Tensor", DT_U16, one, DT_F32, one, 2, 2, NULL);
    ok(r && r->dtype == DT_F32, "u16 + f32 = f32");
    tensor_unref(r);
    r = run_op(ctx, "aten.add.Tensor", DT_U32, one, DT_BOOL, one, 2, 2, NULL);
    ok(r && r->dtype == DT_U32 && tensor_get_i(r, 0) == 2, "u32 + bool = u32");
    tensor_unref(r);
    r = run_op(ctx, "aten.add.Tensor", DT_U64, one, DT_I64, one, 2, 2, NULL);
    ok(!r && strstr(ctx->err.msg, "no type promotion for u64 and i64"), "u64 + i64 is refused as PyTorch refuses it: %s", ctx->err.msg);
    tensor_unref(u); tensor_unref(back); tensor_unref(u32); tensor_unref(f);
}

/* complex64: the elementwise math that allows it, views between complex and real, conj. */
static void complex_ops(MiCtx *ctx) {
    const char *src =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, a: \"c64[3][1]cpu\", b: \"c64[3][1]cpu\", x: \"f32[3, 2][2, 1]cpu\"):\n"
        "        mul = torch.ops.aten.mul.Tensor(a, b)\n"
        "        add = torch.ops.aten.add.Tensor(mul, 2.0)\n"
        "        exp = torch.ops.aten.exp.default(a)\n"
        "        abs_1 = torch.ops.aten.abs.default(b)\n"
        "        vr = torch.ops.aten.view_as_real.default(a)\n"
        "        vc = torch.ops.aten.view_as_complex.default(x)\n"
        "        im = torch.ops.aten.imag.default(a)\n"
        "        cj = torch.ops.aten._conj_physical.default(b)\n"
        "        div = torch.ops.aten.div.Tensor(a, cj)\n"
        "        return (add, exp, abs_1, vr, vc, im, div)\n";
    Graph *g = fx_parse(ctx, src, strlen(src), "complex.py", 1);
    if (!ok(g != NULL && ops_resolve_graph(g) == 0, "complex graph loads with every op known")) return;
    int64_t n = 3, sz[2] = {3, 2};
    IValue in[3] = {{.kind = IV_TENSOR, .t = tensor_new(ctx, DT_C64, 1, &n)}, {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_C64, 1, &n)},
                    {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, 2, sz)}};
    double complex za[3] = {1 + 2 * I, -0.5 + 0.25 * I, 3}, zb[3] = {2 - I, 0.5 * I, -1 + I};
    for (int i = 0; i < 3; i++) {
        tensor_store_c(in[0].t, i, creal(za[i]), cimag(za[i]));
        tensor_store_c(in[1].t, i, creal(zb[i]), cimag(zb[i]));
        tensor_set_f(in[2].t, 2 * i, i);
        tensor_set_f(in[2].t, 2 * i + 1, -i);
    }
    IValue *o = NULL;
    int no = 0;
    if (!ok(interp_run(ctx, g, in, 3, &o, &no) == 0 && no == 7, "it runs: %s", ctx->err.msg)) { graph_free(g); return; }
    double re, im;
    bool good = o[0].t->dtype == DT_C64;
    for (int i = 0; i < 3 && good; i++) {
        double complex w = za[i] * zb[i] + 2, e = cexp(za[i]), q = za[i] / conj(zb[i]);
        tensor_load_c(o[0].t, i, &re, &im);
        good = fabs(re - creal(w)) < 1e-6 && fabs(im - cimag(w)) < 1e-6;
        tensor_load_c(o[1].t, i, &re, &im);
        good = good && fabs(re - creal(e)) < 1e-4 * cabs(e) && fabs(im - cimag(e)) < 1e-4 * cabs(e);
        good = good && fabs(tensor_get_f(o[2].t, i) - cabs(zb[i])) < 1e-6;
        tensor_load_c(o[6].t, i, &re, &im);
        good = good && fabs(re - creal(q)) < 1e-5 && fabs(im - cimag(q)) < 1e-5;
    }
    ok(good, "a * b + 2, exp(a), |b| and a / conj(b) as C's complex math gives them");
    ok(o[2].t->dtype == DT_F32, "abs of c64 is f32 (COMPLEX_TO_FLOAT)");
    ok(o[3].t->dtype == DT_F32 && o[3].t->ndim == 2 && o[3].t->size[1] == 2 && o[3].t->storage == in[0].t->storage &&
       tensor_get_f(o[3].t, 1) == 2 && tensor_get_f(o[3].t, 2) == -0.5, "view_as_real is a [3, 2] f32 view of a's storage");
    tensor_load_c(o[4].t, 2, &re, &im);
    ok(o[4].t->dtype == DT_C64 && o[4].t->storage == in[2].t->storage && re == 2 && im == -2, "view_as_complex views x as c64");
    ok(o[5].t->dtype == DT_F32 && tensor_get_f(o[5].t, 0) == 2 && tensor_get_f(o[5].t, 1) == 0.25, "imag views the imaginary parts");
    interp_free_outputs(o, no);
    /* the float64 reference run makes c128 */
    IValue *f = NULL, *after = NULL;
    int nf = 0;
    ok(interp_run_fp64(ctx, g, in, 3, &f, &nf, &after) == 0 && f[0].t->dtype == DT_C128 && f[3].t->dtype == DT_F64,
       "the float64 run computes in c128 (views in f64)");
    interp_free_outputs(f, nf);
    interp_free_outputs(after, 3);
    for (int i = 0; i < 3; i++) ivalue_clear(&in[i]);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    promotion(ctx);
    integer_math(ctx);
    casts(ctx);
    half_math(ctx);
    npy_bf16(ctx);
    unsigned_types(ctx);
    complex_ops(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
