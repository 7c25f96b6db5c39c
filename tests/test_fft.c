/* test_fft.c — the FFT primitives (_fft_r2c, _fft_c2r, _fft_c2c; core/ops/ops_fft.c) and complex
 * tensors through the pipeline: values against small DFTs derived by hand (x = [1, 2, 3, 4]:
 * X = [10, -2+2j, -2, -2-2j]), the three norm modes, one-sided c2r with an odd last_dim_size,
 * the result layouts of ATen's CPU kernels (the strides the recorded OpInfo graphs carry),
 * errors naming the node and the reason, complex nodes lowered as FallbackKernels (as
 * Inductor does) on both backends (CUDA: float2 storage filled through the host). */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "ops/interp.h"
#include "tests/support/codegen_check.h"
#include "fx_passes/functionalize.h"

static MiCtx *ctx;

static Graph *graph_of(const char *params, const char *body) {
    char src[4096];
    snprintf(src, sizeof src, "class G(torch.nn.Module):\n    def forward(self, %s):\n%s        return (r,)\n", params, body);
    Graph *g = fx_parse(ctx, src, strlen(src), "fft.py", 1);
    if (!g) { char e[1024]; diag("parse failed: %s", mi_err_str(ctx, e, sizeof e)); return NULL; }
    ops_resolve_graph(g);
    return g;
}

/* A 1-d (or n-d) tensor of dtype dt from interleaved (re, im) pairs (real dtypes: re only). */
static Tensor *T(DType dt, int ndim, const int64_t *size, const double *reim) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_store_c(t, tensor_pos(t, i), reim[2 * i], reim[2 * i + 1]);
    return t;
}

/* Run the one-op graph on x; output 0 (a new reference) or NULL with the error in ctx. */
static Tensor *run1(Graph *g, Tensor *x) {
    IValue in[1] = {{.kind = IV_TENSOR, .t = tensor_ref(x)}}, *outs = NULL;
    int nouts = 0;
    Tensor *r = NULL;
    if (g && interp_run(ctx, g, in, 1, &outs, &nouts) == 0 && nouts > 0 && outs[0].kind == IV_TENSOR) r = tensor_ref(outs[0].t);
    interp_free_outputs(outs, nouts);
    tensor_unref(in[0].t);
    return r;
}

/* r's elements (row-major) equal the interleaved (re, im) pairs of want within tol */
static bool cvalues(const Tensor *r, const double *want, int64_t n, double tol) {
    if (!r || tensor_numel(r) != n) { diag("got %lld elements, want %lld", r ? (long long)tensor_numel(r) : -1LL, (long long)n); return false; }
    for (int64_t i = 0; i < n; i++) {
        double re, im;
        tensor_get_c(r, i, &re, &im);
        if (fabs(re - want[2 * i]) > tol || fabs(im - want[2 * i + 1]) > tol) {
            diag("element %lld: got %.9g%+.9gj want %.9g%+.9gj", (long long)i, re, im, want[2 * i], want[2 * i + 1]);
            return false;
        }
    }
    return true;
}

/* one op on x: its output meets want */
static void check_op(const char *name, const char *param, const char *call, Tensor *x, const double *want, int64_t n) {
    char body[1024];
    snprintf(body, sizeof body, "        r = %s\n", call);
    Graph *g = graph_of(param, body);
    Tensor *r = run1(g, x);
    if (!r) { char e[1024]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    ok(cvalues(r, want, n, 1e-5), "%s", name);
    tensor_unref(r);
    graph_free(g);
}

/* the meta the registry infers for r, as FX prints it ("c64[5, 10, 7][70, 1, 10]cpu"), or the error */
static const char *meta_of(const char *param, const char *call) {
    static char buf[1200];
    char body[1024];
    snprintf(body, sizeof body, "        r = %s\n", call);
    Graph *g = graph_of(param, body);
    Node *n = g ? graph_find(g, "r") : NULL;
    if (!n) snprintf(buf, sizeof buf, "no graph");
    else if (op_infer_node_meta(ctx, g, n)) snprintf(buf, sizeof buf, "error: %s", ctx->err.msg);
    else meta_str(&n->meta, buf, sizeof buf);
    graph_free(g);
    return buf;
}

static void test_values(void) {
    int64_t s4 = 4, s2 = 2, s3 = 3;
    const char *R4 = "x: \"f32[4][1]cpu\"", *C4 = "x: \"c64[4][1]cpu\"";
    Tensor *x = T(DT_F32, 1, &s4, (double[]){1, 0, 2, 0, 3, 0, 4, 0});
    /* X_k = sum_n x_n e^{-2 pi i k n / 4}: X_1 = 1 - 2i - 3 + 4i */
    check_op("rfft [1,2,3,4], norm none: [10, -2+2j, -2]", R4, "torch.ops.aten._fft_r2c.default(x, [0], 0, True)", x,
             (double[]){10, 0, -2, 2, -2, 0}, 3);
    check_op("rfft, norm by 1/sqrt(n) (\"ortho\"): halved", R4, "torch.ops.aten._fft_r2c.default(x, [0], 1, True)", x,
             (double[]){5, 0, -1, 1, -1, 0}, 3);
    check_op("rfft, norm by 1/n (\"forward\"): quartered", R4, "torch.ops.aten._fft_r2c.default(x, [0], 2, True)", x,
             (double[]){2.5, 0, -0.5, 0.5, -0.5, 0}, 3);
    check_op("r2c onesided=False: the other half by conjugate symmetry", R4, "torch.ops.aten._fft_r2c.default(x, [0], 0, False)", x,
             (double[]){10, 0, -2, 2, -2, 0, -2, -2}, 4);
    tensor_unref(x);

    /* x_n = e^{2 pi i n / 4} = [1, i, -1, -i]: forward gives 4 at k = 1, backward at k = 3 */
    Tensor *z = T(DT_C64, 1, &s4, (double[]){1, 0, 0, 1, -1, 0, 0, -1});
    check_op("c2c forward of e^{i pi n / 2}: 4 at k = 1", C4, "torch.ops.aten._fft_c2c.default(x, [0], 0, True)", z,
             (double[]){0, 0, 4, 0, 0, 0, 0, 0}, 4);
    check_op("c2c backward, norm by 1/n (ifft \"backward\"): 1 at k = 3", C4, "torch.ops.aten._fft_c2c.default(x, [0], 2, False)", z,
             (double[]){0, 0, 0, 0, 0, 0, 1, 0}, 4);
    check_op("c2c over no dims: a copy", C4, "torch.ops.aten._fft_c2c.default(x, [], 2, True)", z,
             (double[]){1, 0, 0, 1, -1, 0, 0, -1}, 4);
    tensor_unref(z);

    /* irfft: the inverse of the first test; odd n = 3 from X = [10, -2+2j]:
     * x_n = (10 + 2 Re((-2+2j) e^{2 pi i n / 3})) / 3 = 2, 4 - 2/sqrt(3), 4 + 2/sqrt(3) */
    Tensor *h = T(DT_C64, 1, &s3, (double[]){10, 0, -2, 2, -2, 0});
    check_op("c2r, last_dim_size 4, by 1/n: back to [1, 2, 3, 4]", "x: \"c64[3][1]cpu\"", "torch.ops.aten._fft_c2r.default(x, [0], 2, 4)", h,
             (double[]){1, 0, 2, 0, 3, 0, 4, 0}, 4);
    tensor_unref(h);
    Tensor *h2 = T(DT_C64, 1, &s2, (double[]){10, 0, -2, 2});
    double r3 = 2 / sqrt(3);
    check_op("c2r with odd last_dim_size 3 (one-sided input of 2 points)", "x: \"c64[2][1]cpu\"", "torch.ops.aten._fft_c2r.default(x, [0], 2, 3)", h2,
             (double[]){2, 0, 4 - r3, 0, 4 + r3, 0}, 3);
    tensor_unref(h2);

    /* 2-d: X[k0, k1] = sum x[n0, n1] (-1)^(k0 n0 + k1 n1) for [[1, 2], [3, 4]] */
    int64_t s22[2] = {2, 2};
    Tensor *m = T(DT_F64, 2, s22, (double[]){1, 0, 2, 0, 3, 0, 4, 0});
    check_op("rfft2 of [[1, 2], [3, 4]]: [[10, -2], [-4, 0]] (f64 -> c128)", "x: \"f64[2, 2][2, 1]cpu\"",
             "torch.ops.aten._fft_r2c.default(x, [0, 1], 0, True)", m, (double[]){10, 0, -2, 0, -4, 0, 0, 0}, 4);
    tensor_unref(m);
    /* irfftn = c2c over the leading dims, then c2r over the last (ATen's CPU order) */
    Tensor *k = T(DT_C64, 2, s22, (double[]){10, 0, -2, 0, -4, 0, 0, 0});
    check_op("irfft2 of it, by 1/n: [[1, 2], [3, 4]]", "x: \"c64[2, 2][2, 1]cpu\"", "torch.ops.aten._fft_c2r.default(x, [0, 1], 2, 2)", k,
             (double[]){1, 0, 2, 0, 3, 0, 4, 0}, 4);
    tensor_unref(k);
}

/* Layouts as ATen's CPU kernels leave them (recorded in the OpInfo graphs fft_fft_0,
 * fft_ihfftn_1, fft_irfftn_0, fft_hfft2_1, stft_0). */
static void test_layouts(void) {
    is_str(meta_of("x: \"f32[5, 10, 7][70, 7, 1]cpu\"", "torch.ops.aten._fft_r2c.default(x, [1], 1, False)"),
           "c64[5, 10, 7][70, 1, 10]cpu", "r2c over dim 1: batch dims first, the transformed dim innermost");
    is_str(meta_of("x: \"c64[5, 6, 4][24, 4, 1]cpu\"", "torch.ops.aten._fft_c2c.default(x, [0, 1], 1, False)"),
           "c64[5, 6, 4][6, 1, 30]cpu", "c2c over dims 0, 1: the batch dim 2 outermost");
    is_str(meta_of("x: \"c64[5, 3, 6][42, 7, 1]cpu\"", "torch.ops.aten._fft_c2r.default(x, [1, 2], 1, 10)"),
           "f32[5, 3, 10][30, 10, 1]cpu", "c2r over dims 1, 2 with last_dim_size 10");
    is_str(meta_of("x: \"c64[5, 6, 7][42, 7, 1]cpu\"", "torch.ops.aten._fft_c2c.default(x, [1], 1, True)"),
           "c64[5, 6, 7][42, 1, 6]cpu", "c2c over dim 1");
    is_str(meta_of("x: \"f32[1, 51, 10][110, 2, 1]cpu\"", "torch.ops.aten._fft_r2c.default(x, [2], 0, True)"),
           "c64[1, 51, 6][306, 6, 1]cpu", "stft's r2c of overlapping frames: onesided 10 -> 6");
    is_str(meta_of("x: \"f64[4, 9][9, 1]cpu\"", "torch.ops.aten._fft_r2c.default(x, [0, 1], 2, True)"),
           "c128[4, 5][5, 1]cpu", "f64 -> c128, last dim 9 -> 5");
}

static void test_errors(void) {
    const char *R = "x: \"f32[4, 3][3, 1]cpu\"", *C = "x: \"c64[4, 3][3, 1]cpu\"";
    struct { const char *param, *call, *want; } cases[] = {
        {R, "torch.ops.aten._fft_c2c.default(x, [0], 0, True)", "_fft_c2c needs a complex64 or complex128 input, got f32"},
        {R, "torch.ops.aten._fft_c2r.default(x, [0], 0, 4)", "_fft_c2r needs a complex64 or complex128 input, got f32"},
        {C, "torch.ops.aten._fft_r2c.default(x, [0], 0, True)", "_fft_r2c needs a float32 or float64 input, got c64"},
        {R, "torch.ops.aten._fft_r2c.default(x, [2], 0, True)", "dimension 2 out of range for a tensor of rank 2"},
        {R, "torch.ops.aten._fft_r2c.default(x, [1, -1], 0, True)", "dim 1 appears twice in the dim list"},
        {R, "torch.ops.aten._fft_r2c.default(x, [], 0, True)", "the dim list must not be empty"},
        {C, "torch.ops.aten._fft_c2c.default(x, [0], 5, True)", "normalization must be 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n)"},
        {C, "torch.ops.aten._fft_c2r.default(x, [1], 0, 0)", "Invalid number of data points (0) specified"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *m = meta_of(cases[i].param, cases[i].call);
        ok(strstr(m, "node 'r'") && strstr(m, cases[i].want), "error: %s", cases[i].want);
        if (!strstr(m, cases[i].want)) diag("got: %s", m);
    }
    /* a one-sided input shorter than last_dim_size / 2 + 1: refused when run */
    int64_t s2 = 2;
    Tensor *h = T(DT_C64, 1, &s2, (double[]){1, 0, 2, 0});
    Graph *g = graph_of("x: \"c64[2][1]cpu\"", "        r = torch.ops.aten._fft_c2r.default(x, [0], 0, 8)\n");
    Tensor *r = run1(g, h);
    char e[1024];
#ifdef HAVE_FFTW
    ok(!r && strstr(mi_err_str(ctx, e, sizeof e), "fewer than last_dim_size / 2 + 1 = 5"), "c2r: a too-short one-sided input is an error");
#else
    ok(!r && strstr(mi_err_str(ctx, e, sizeof e), "needs FFTW, which configure did not find (apt-get install libfftw3-dev"), "without FFTW: refused, naming the library");
#endif
    tensor_unref(r);
    tensor_unref(h);
    graph_free(g);
}

/* Lower + schedule + generate for dev; NULL with the error in ctx. */
static char *gen(Graph *g, MiDeviceKind dev, IrModule **keep) {
    ctx->target = dev;
    CgBuild b;
    cg_compile(ctx, g, &b, CG_SOURCE);
    char *src = b.src;
    b.src = NULL;
    if (keep) { *keep = b.m; b.m = NULL; }
    cg_free(&b);
    return src;
}

/* Inductor's rule: every node reading or writing a complex tensor is a FallbackKernel; the
 * real pointwise work around them stays generated code. */
static void test_lowering(void) {
    const char *P = "x: \"f32[8, 6][6, 1]cpu\"";
    const char *body =
        "        mul: \"f32[8, 6][6, 1]cpu\" = torch.ops.aten.mul.Tensor(x, 2.0)\n"
        "        f: \"c64[8, 4][4, 1]cpu\" = torch.ops.aten._fft_r2c.default(mul, [1], 0, True)\n"
        "        c: \"c64[8, 4][4, 1]cpu\" = torch.ops.aten._conj_physical.default(f)\n"
        "        v: \"f32[8, 4, 2][8, 2, 1]cpu\" = torch.ops.aten.view_as_real.default(c)\n"
        "        r: \"f32[8, 4, 2][8, 2, 1]cpu\" = torch.ops.aten.add.Tensor(v, 1.0)\n";
    Graph *g = graph_of(P, body);
    IrModule *m = NULL;
    char *src = gen(g, MI_DEV_CPU, &m);
    int nfb = 0, npw = 0;
    bool complex_kernel = false;
    for (int i = 0; m && i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->kind == BUF_INPUT) continue;
        if (b->ext == EXT_MULTI_OUTPUT) continue;   /* a FallbackKernel's result item */
        if (b->ext == EXT_FALLBACK) nfb++;
        else if (dtype_is_complex(b->layout.dtype)) complex_kernel = true;
        else npw++;
    }
    if (!src) { char e[1024]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    ok(src && nfb == 3 && npw == 2 && !complex_kernel, "r2c, conj, view_as_real: FallbackKernels; mul and add: generated (%d fallbacks, %d computed)", nfb, npw);
    ok(src && strstr(src, "float _Complex *buf") && !strstr(src, "float _Complex tmp"), "c64 buffers are storage (float _Complex *), no complex math in a kernel");
    free(src);
    ir_free(m);
    /* CUDA: complex buffers are device storage (cuComplex's float2) that the FallbackKernels
     * fill through the host; no __global__ kernel takes one */
    char *cu = gen(g, MI_DEV_CUDA, NULL);
    bool kernel_float2 = false;
    for (const char *k = cu; k && (k = strstr(k, "__global__")); k++) {
        const char *end = strstr(k, "MiSyms mi_sy)");
        const char *f2 = strstr(k, "float2");
        if (end && f2 && f2 < end) kernel_float2 = true;
    }
    if (!cu) { char e[1024]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    ok(cu && strstr(cu, "float2 *buf") && strstr(cu, "fb->run(fb->ctx, \"f\", ") && !kernel_float2,
       "CUDA backend: c64 buffers as float2 storage, filled by host fallbacks, no kernel reads one");
    free(cu);
    ctx->target = MI_DEV_CPU;
    graph_free(g);
}

/* stft's in-place view ops: after transpose_(c), every later reader of c sees the transposed
 * tensor, in the interpreter and after functionalize (which makes it transpose). */
static void test_inplace_views(void) {
    const char *body =
        "        c = torch.ops.aten.clone.default(x)\n"
        "        t = torch.ops.aten.transpose_.default(c, 0, 1)\n"
        "        a = torch.ops.aten.add_.Tensor(c, 10.0)\n"
        "        s = torch.ops.aten.unsqueeze_.default(t, 0)\n"
        "        r = torch.ops.aten.mul.Tensor(c, 2.0)\n";
    Graph *g = graph_of("x: \"f32[2, 3][3, 1]cpu\"", body);
    int64_t s23[2] = {2, 3};
    Tensor *x = T(DT_F32, 2, s23, (double[]){0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0});
    /* (x^T + 10) * 2, with a leading 1 from unsqueeze_ */
    double want[] = {20, 0, 26, 0, 22, 0, 28, 0, 24, 0, 30, 0};
    Tensor *r = run1(g, x);
    ok(r && r->ndim == 3 && r->size[0] == 1 && r->size[1] == 3 && cvalues(r, want, 6, 0), "interpreter: transpose_ / unsqueeze_ rebind self");
    tensor_unref(r);
    Graph *f = g ? functionalize(ctx, g) : NULL;
    if (!f) { char e[1024]; diag("%s", mi_err_str(ctx, e, sizeof e)); }
    bool inplace_left = false;
    for (int i = 0; f && i < f->n; i++)
        if (f->nodes[i]->kind == N_CALL_FUNCTION && strstr(f->nodes[i]->target, "_.")) inplace_left = true;
    r = f ? run1(f, x) : NULL;
    ok(f && !inplace_left && r && r->ndim == 3 && cvalues(r, want, 6, 0), "functionalize: the view ops, same values, no in-place op left");
    tensor_unref(r);
    tensor_unref(x);
    graph_free(f);
    graph_free(g);
}

/* tests/fixtures/lowering/fft_complex.py (also a seed of the FX fuzz targets): the three FFT
 * primitives, polar, complex, view_as_real and transpose_ around generated pointwise kernels,
 * through the shell: lint clean, the passes keep the numerics, compiled C agrees with the interpreter. */
static void test_shell_fixture(void) {
    const char *bin = getenv("MINDUCTOR_BIN");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "{ \"%s\" -c 'load tests/fixtures/lowering/fft_complex.py; inputs random 3; run; check; exec 1'; } 2>&1",
             bin ? bin : "./build/minductor");
    char *o = sh_pipe(cmd, NULL);
    ok(strstr(o, "check: ok (3 outputs") && strstr(o, "(2 inputs, 2 computed, 16 extern)") && strstr(o, "over 3 outputs") && strstr(o, "exec: ok"),
       "fft_complex fixture: 8 FallbackKernels (each with its MultiOutput) around 2 generated kernels; check and exec ok");
    if (!strstr(o, "exec: ok")) diag("%s", o);
    free(o);
}

int main(void) {
    ctx = mi_ctx_new();
#ifdef HAVE_FFTW
    test_values();
#else
    skip(11, "configure found no FFTW (libfftw3-dev): the fft ops are refused");
#endif
    test_layouts();
    test_errors();
    test_lowering();
    test_inplace_views();
#ifdef HAVE_FFTW
    test_shell_fixture();
#else
    skip(1, "configure found no FFTW (libfftw3-dev): the fft ops are refused");
#endif
    mi_ctx_free(ctx);
    return exit_status();
}
