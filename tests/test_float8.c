/* test_float8.c — the four float8 storage types (float8_e4m3fn, _e5m2, _e4m3fnuz, _e5m2fnuz):
 * the conversions against c10's Float8_* rules on values derived by hand (round to nearest even,
 * subnormals, the tie at the top of the range, overflow to NaN / inf, the fnuz kinds' single NaN
 * and missing -0), every encoding's round trip, PyTorch's refusal to promote float8 with other
 * types, the interpreter's casts, the compiled C module against the interpreter bit for bit
 * (a cast that fuses x.to(f8).to(f32) into one kernel, and a float8 output buffer), and the
 * CUDA module's text: Triton's saturating e4m3fn / e5m2 stores, c10's for the fnuz kinds, built
 * by nvcc when it is installed (a real model: the sixth survey batch's scaled fp8 cast). */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "compile_fx/compile_fx.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "ops/ops_impl.h"
#include "runtime/runtime.h"

#include <unistd.h>

static MiCtx *ctx;
static const DType f8s[4] = {DT_F8E4M3, DT_F8E5M2, DT_F8E4M3FNUZ, DT_F8E5M2FNUZ};

/* bits of f in dt, checked against want */
static void enc(DType dt, float f, unsigned want, const char *why) {
    unsigned got = mi_f32_to_f8(dt, f);
    ok(got == want, "%s(%.9g) = 0x%02x (%s)%s", dtype_abbrev(dt), (double)f, want, why, got == want ? "" : " -- got other bits");
    if (got != want) diag("got 0x%02x", got);
}

static void test_conversions(void) {
    /* e4m3fn: bias 7, max 448 = 0x7e, 0x7f NaN, no inf */
    enc(DT_F8E4M3, 448, 0x7e, "the largest finite");
    enc(DT_F8E4M3, 464, 0x7e, "midpoint of 448 and 480 rounds to even 448");
    enc(DT_F8E4M3, 465, 0x7f, "over the midpoint: NaN, c10 does not saturate");
    enc(DT_F8E4M3, INFINITY, 0x7f, "inf: NaN");
    enc(DT_F8E4M3, -INFINITY, 0xff, "-inf: NaN with the sign");
    enc(DT_F8E4M3, NAN, 0x7f, "NaN");
    enc(DT_F8E4M3, 0.3f, 0x2a, "0.3 -> 0.3125 (1.25 * 2^-2), nearer than 0.28125");
    enc(DT_F8E4M3, 0x1p-9f, 0x01, "the smallest subnormal 2^-9");
    enc(DT_F8E4M3, 0x1p-10f, 0x00, "half the smallest subnormal: a tie, to even 0");
    enc(DT_F8E4M3, 0x1.8p-10f, 0x01, "0.75 of a subnormal step rounds up");
    enc(DT_F8E4M3, 0x1.8p-9f, 0x02, "1.5 steps: a tie, to even 2");
    enc(DT_F8E4M3, -0.0f, 0x80, "-0 keeps its sign");
    enc(DT_F8E4M3, 1.0625f, 0x38, "1 + 1/16: a tie between 1 and 1.125, to even 1");
    enc(DT_F8E4M3, 1.1875f, 0x3a, "1 + 3/16: a tie between 1.125 and 1.25, to even 1.25");
    /* e5m2: bias 15, max 57344 = 0x7b, inf 0x7c */
    enc(DT_F8E5M2, 57344, 0x7b, "the largest finite");
    enc(DT_F8E5M2, 60000, 0x7b, "below the midpoint 61440");
    enc(DT_F8E5M2, 61440, 0x7c, "midpoint of 57344 and 65536: a tie, to even (inf)");
    enc(DT_F8E5M2, 1e6f, 0x7c, "overflow: inf");
    enc(DT_F8E5M2, -INFINITY, 0xfc, "-inf");
    enc(DT_F8E5M2, NAN, 0x7f, "NaN");
    enc(DT_F8E5M2, 0x1p-16f, 0x01, "the smallest subnormal 2^-16");
    enc(DT_F8E5M2, 1.125f, 0x3c, "1 + 1/8: a tie between 1 and 1.25, to even 1");
    /* e4m3fnuz: bias 8, max 240 = 0x7f, 0x80 the only NaN, no -0 */
    enc(DT_F8E4M3FNUZ, 240, 0x7f, "the largest finite");
    enc(DT_F8E4M3FNUZ, 248, 0x80, "midpoint of 240 and 256: a tie, to even, which is the NaN");
    enc(DT_F8E4M3FNUZ, 1000, 0x80, "overflow: NaN");
    enc(DT_F8E4M3FNUZ, -1000, 0x80, "negative overflow: the same NaN");
    enc(DT_F8E4M3FNUZ, NAN, 0x80, "NaN");
    enc(DT_F8E4M3FNUZ, -0.0f, 0x00, "no negative zero");
    enc(DT_F8E4M3FNUZ, -0x1p-12f, 0x00, "a negative number rounding to 0 is +0");
    enc(DT_F8E4M3FNUZ, 0x1p-10f, 0x01, "the smallest subnormal 2^-10");
    enc(DT_F8E4M3FNUZ, 1.0f, 0x40, "1.0: exponent field 8");
    /* e5m2fnuz: bias 16, max 57344 = 0x7f */
    enc(DT_F8E5M2FNUZ, 57344, 0x7f, "the largest finite");
    enc(DT_F8E5M2FNUZ, INFINITY, 0x80, "inf: NaN");
    enc(DT_F8E5M2FNUZ, 0x1p-17f, 0x01, "the smallest subnormal 2^-17");
    enc(DT_F8E5M2FNUZ, -1.5f, 0xc2, "-1.5");

    ok(mi_f8_to_f32(DT_F8E4M3, 0x7e) == 448 && isnan(mi_f8_to_f32(DT_F8E4M3, 0xff)) && mi_f8_to_f32(DT_F8E4M3, 0x08) == 0x1p-6f,
       "e4m3fn decodes 0x7e = 448, 0xff = NaN, 0x08 = 2^-6 (the smallest normal)");
    ok(mi_f8_to_f32(DT_F8E5M2, 0x7c) == INFINITY && isnan(mi_f8_to_f32(DT_F8E5M2, 0x7d)) && mi_f8_to_f32(DT_F8E5M2, 0x03) == 3 * 0x1p-16f,
       "e5m2 decodes 0x7c = inf, 0x7d = NaN, 0x03 = 3 * 2^-16");
    ok(isnan(mi_f8_to_f32(DT_F8E4M3FNUZ, 0x80)) && mi_f8_to_f32(DT_F8E4M3FNUZ, 0xff) == -240 && mi_f8_to_f32(DT_F8E4M3FNUZ, 0x08) == 0x1p-7f,
       "e4m3fnuz decodes 0x80 = NaN, 0xff = -240, 0x08 = 2^-7");
    ok(isnan(mi_f8_to_f32(DT_F8E5M2FNUZ, 0x80)) && mi_f8_to_f32(DT_F8E5M2FNUZ, 0x7c) == 32768,
       "e5m2fnuz decodes 0x80 = NaN, 0x7c = 32768 (no inf)");
    for (int t = 0; t < 4; t++) {
        int bad = -1;
        for (int b = 0; b < 256 && bad < 0; b++) {
            float v = mi_f8_to_f32(f8s[t], (uint8_t)b);
            if (isnan(v)) continue;
            if (mi_f32_to_f8(f8s[t], v) != b) bad = b;
        }
        ok(bad < 0, "%s: every non-NaN encoding decodes and encodes back to itself", dtype_abbrev(f8s[t]));
        if (bad >= 0) diag("0x%02x", bad);
    }
}

static Graph *graph_text(const char *src) {
    Graph *g = fx_parse(ctx, src, strlen(src), "f8.py", 1);
    if (!g) { char e[1024]; diag("parse: %s", mi_err_str(ctx, e, sizeof e)); return NULL; }
    ops_resolve_graph(g);
    return g;
}

/* x.to(dt).to(f32), and x.to(dt) itself as a second output, for each float8 type */
static char *cast_graph(DType dt, char *buf, size_t n) {
    snprintf(buf, n, "class G(torch.nn.Module):\n    def forward(self, x: \"f32[12][1]cpu\"):\n"
             "        s: \"f32[12][1]cpu\" = torch.ops.aten.mul.Tensor(x, 2.0)\n"
             "        c: \"%s[12][1]cpu\" = torch.ops.prims.convert_element_type.default(s, %s)\n"
             "        b: \"f32[12][1]cpu\" = torch.ops.prims.convert_element_type.default(c, torch.float32)\n"
             "        r: \"f32[12][1]cpu\" = torch.ops.aten.add.Tensor(b, 1.0)\n"
             "        return (r, c)\n", dtype_abbrev(dt), dtype_torch_name(dt));
    return buf;
}

static bool same_bits(const Tensor *a, const Tensor *b) {
    if (!a || !b || a->dtype != b->dtype || tensor_numel(a) != tensor_numel(b)) return false;
    for (int64_t i = 0; i < tensor_numel(a); i++) {
        double x = tensor_get_f(a, i), y = tensor_get_f(b, i);
        if (!(x == y || (isnan(x) && isnan(y))) || signbit(x) != signbit(y)) { diag("element %lld: %g vs %g", (long long)i, x, y); return false; }
    }
    return true;
}

/* the interpreter against hand values, then the compiled C module against the interpreter */
static void test_cast_graphs(void) {
    static const double xs[12] = {0.15, 224, 232, 240, -0.0, 1e-4, 30000, 3e5, -7.3, 0.5625, NAN, INFINITY};
    /* 2x, cast to e4m3fn, + 1: 0.3 -> 0.3125, 448, 464 -> 448 (tie to even), 480 -> NaN, -0, 2e-4 -> 0
     * (a tenth of the subnormal step), 6e4 and 6e5 -> NaN, -14.6 -> -15 (step 1 in [8, 16)), 1.125 exact */
    static const double want_e4m3fn[12] = {0.3125 + 1, 448 + 1, 448 + 1, NAN, 1, 0 + 1, NAN, NAN, -15 + 1, 1.125 + 1, NAN, NAN};
    Tensor *x = tensor_new(ctx, DT_F32, 1, (int64_t[]){12});
    for (int i = 0; i < 12; i++) tensor_set_f(x, i, xs[i]);
    for (int t = 0; t < 4; t++) {
        char src[1024];
        Graph *g = graph_text(cast_graph(f8s[t], src, sizeof src));
        IValue in = {.kind = IV_TENSOR, .t = tensor_ref(x)}, *io = NULL, *co = NULL;
        int nio = 0, nco = 0;
        int irc = g ? interp_run(ctx, g, &in, 1, &io, &nio) : -1;
        if (irc) { char e[1024]; diag("interp: %s", mi_err_str(ctx, e, sizeof e)); }
        bool vals = irc == 0 && nio == 2 && io[1].t->dtype == f8s[t];
        for (int i = 0; vals && i < 12; i++) {
            float s = (float)(xs[i] * 2);
            double want = (double)mi_f8_to_f32(f8s[t], mi_f32_to_f8(f8s[t], s)) + 1;
            double got = tensor_get_f(io[0].t, i);
            if (!(got == want || (isnan(got) && isnan(want)))) { diag("element %d: %g want %g", i, got, want); vals = false; }
            if (f8s[t] == DT_F8E4M3 && !(got == want_e4m3fn[i] || (isnan(got) && isnan(want_e4m3fn[i])))) {
                diag("e4m3fn element %d: %g, by hand %g", i, got, want_e4m3fn[i]);
                vals = false;
            }
        }
        ok(vals, "interpreter: x.to(%s).to(f32) rounds as c10 (e4m3fn also against hand values)", dtype_abbrev(f8s[t]));
        CompiledFx c;
        compile_fx_init(&c, g);
        int crc = g ? compile_fx(ctx, &c, CFX_BUILT) : -1;
        if (crc == 0) crc = rt_run(ctx, c.mod, g, &in, 1, &co, &nco, NULL);
        if (crc) { char e[1024]; diag("compiled: %s", mi_err_str(ctx, e, sizeof e)); mi_clear_err(ctx); }
        ok(crc == 0 && nco == 2 && irc == 0 && same_bits(co[0].t, io[0].t) && same_bits(co[1].t, io[1].t),
           "compiled C: the fused cast and the %s output buffer agree with the interpreter bit for bit", dtype_abbrev(f8s[t]));
        ok(c.code && strstr(c.code, "mi_round_") && strstr(c.code, "mi_to_") && strstr(c.code, "mi_f8_enc(f, "),
           "the C module rounds through c10's conversion (mi_round_%s, mi_to_%s)", dtype_abbrev(f8s[t]), dtype_abbrev(f8s[t]));
        if (co) interp_free_outputs(co, nco);
        if (io) interp_free_outputs(io, nio);
        tensor_unref(in.t);
        compile_fx_free(&c);
        graph_free(g);
    }
    tensor_unref(x);
}

static void test_promotion(void) {
    const char *src = "class G(torch.nn.Module):\n    def forward(self, a: \"f8e4m3fn[4][1]cpu\", b: \"f32[4][1]cpu\"):\n"
                      "        m = torch.ops.aten.mul.Tensor(a, 2.0)\n        r = torch.ops.aten.add.Tensor(a, b)\n        return (m, r)\n";
    Graph *g = graph_text(src);
    TensorMeta out[OP_MAX_OUTS];
    int n = OP_MAX_OUTS;
    Node *m = g ? graph_find(g, "m") : NULL, *r = g ? graph_find(g, "r") : NULL;
    ok(m && op_infer_meta(ctx, g, m, out, &n) == 0 && out[0].dtype == DT_F8E4M3, "f8e4m3fn * 2.0 stays f8e4m3fn (a wrapped scalar does not promote)");
    n = OP_MAX_OUTS;
    int rc = r ? op_infer_meta(ctx, g, r, out, &n) : 0;
    ok(rc < 0 && strstr(ctx->err.msg, "no type promotion for f8e4m3fn and f32") && strstr(ctx->err.msg, "float8"),
       "f8e4m3fn + f32 is refused as c10's promoteTypes refuses it: %s", ctx->err.msg);
    mi_clear_err(ctx);
    ok(dtype_from_torch_name("torch.float8_e5m2fnuz", 21) == DT_F8E5M2FNUZ && !strcmp(dtype_abbrev(DT_F8E4M3FNUZ), "f8e4m3fnuz"),
       "torch.float8_e4m3fnuz / _e5m2fnuz parse and print as PyTorch names them");
    graph_free(g);
}

/* The CUDA module: saturating stores for e4m3fn / e5m2 (Triton), c10's for the fnuz kinds; nvcc
 * builds it when present (without a GPU the runtime then answers "no CUDA GPU available"). */
static void test_cuda_text(void) {
    for (int t = 0; t < 4; t++) {
        char src[1024];
        Graph *g = graph_text(cast_graph(f8s[t], src, sizeof src));
        ctx->target = MI_DEV_CUDA;
        CgBuild b;
        cg_compile(ctx, g, &b, CG_SOURCE);
        const char *code = b.src;
        ctx->target = MI_DEV_CPU;
        char want[160];
        bool fnuz = f8s[t] == DT_F8E4M3FNUZ || f8s[t] == DT_F8E5M2FNUZ;
        if (fnuz) snprintf(want, sizeof want, "mi_to_%s(float f) { return mi_f8_enc(f, %d, 1); }", dtype_abbrev(f8s[t]), f8s[t] == DT_F8E5M2FNUZ);
        else snprintf(want, sizeof want, "__nv_cvt_float_to_fp8(f, __NV_SATFINITE, %s)", f8s[t] == DT_F8E5M2 ? "__NV_E5M2" : "__NV_E4M3");
        ok(code && strstr(code, "#include <cuda_fp8.h>") && strstr(code, want) && strstr(code, "const uint8_t") == NULL
           && strstr(code, "uint8_t *buf") && strstr(code, "mi_round_"),
           "CUDA %s: uint8_t storage, casts round in registers, stores %s", dtype_abbrev(f8s[t]), fnuz ? "as c10 (no Triton type)" : "saturate as Triton");
        if (!code) diag("%s", ctx->err.msg);
        if (code && t == 0 && (access("/usr/local/cuda/bin/nvcc", X_OK) == 0 || system("command -v nvcc >/dev/null 2>&1") == 0)) {
            RtModule *rm = rt_compile(ctx, code);
            ok(rm || strstr(ctx->err.msg, "no CUDA GPU available"), "nvcc builds the float8 CUDA module (%s)", rm ? "and a GPU runs it" : ctx->err.msg);
            if (rm) rt_free(rm);
            mi_clear_err(ctx);
        }
        cg_free(&b);
        graph_free(g);
    }
}

int main(void) {
    ctx = mi_ctx_new();
    test_conversions();
    test_promotion();
    test_cast_graphs();
    test_cuda_text();
    mi_ctx_free(ctx);
    return done_testing();
}
