/* test_numerics.c — the numerics verdict (core/base/same.c, core/ops/numerics.c) in both
 * directions: rounding passes, wrong values fail. torch._dynamo.utils.same's rule on tensors
 * (exact ints, allclose, RMSE against float64 with its multipliers, the NaN corner, complex),
 * the statistical check of random draws, the float64 interpreter run, a deep float32 graph
 * rewritten with other roundings (passes) against a wrong constant (fails), and loading a
 * float32 .npy for a bf16 placeholder with the placeholder's strides. */
#include "ops/numerics.h"
#include "ops/inputs.h"
#include "base/same.h"
#include "tap.h"

#include <math.h>

/* deterministic noise in [-1, 1) */
static double noise(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

static Tensor *vec(MiCtx *ctx, DType dt, int64_t n) { return tensor_new(ctx, dt, 1, &n); }

static void test_same_rule(MiCtx *ctx) {
    /* integers: element for element */
    Tensor *a = vec(ctx, DT_I8, 5), *b = vec(ctx, DT_I8, 5);
    for (int i = 0; i < 5; i++) { tensor_set_f(a, i, i - 2); tensor_set_f(b, i, i - 2); }
    SameResult s = tensor_same(a, b, NULL, 1e-4, 1e-4);
    ok(s.ok && s.how == SAME_EXACT, "equal int8 tensors agree exactly");
    tensor_set_f(b, 3, 2);
    s = tensor_same(a, b, NULL, 0.5, 0.5);
    ok(!s.ok && s.close.mismatches == 1 && s.close.worst_index == 3, "one differing int8 element fails, whatever the tolerance");
    tensor_unref(a); tensor_unref(b);
    a = vec(ctx, DT_F32, 4); b = vec(ctx, DT_F64, 4);
    s = tensor_same(a, b, NULL, 1e-4, 1e-4);
    ok(!s.ok && !s.dtype_ok, "f32 against f64 is a dtype mismatch");
    tensor_unref(a); tensor_unref(b);

    /* rounding-sized noise on both sides: allclose fails, the RMSE rule passes */
    int64_t n = 4096;
    Tensor *f64 = vec(ctx, DT_F64, n), *ref = vec(ctx, DT_F32, n), *res = vec(ctx, DT_F32, n), *bad = vec(ctx, DT_F32, n);
    uint64_t s1 = 1, s2 = 2;
    for (int64_t i = 0; i < n; i++) {
        double v = 0.01 * sin((double)i);
        tensor_set_f(f64, i, v);
        tensor_set_f(ref, i, v + 1e-3 * noise(&s1));
        tensor_set_f(res, i, v + 1e-3 * noise(&s2));
        tensor_set_f(bad, i, tensor_get_f(res, i) + (i == 17 ? 0.5 : 0));
    }
    s = tensor_same(ref, res, NULL, 1e-4, 1e-4);
    ok(!s.ok && s.want_fp64 && !s.close.ok, "without a float64 run, rounding noise fails allclose");
    s = tensor_same(ref, res, f64, 1e-4, 1e-4);
    ok(s.ok && s.how == SAME_RMSE && s.multiplier == 2.0, "with it, RMSE %.3g <= 2 x %.3g + 1e-5: rounding", s.res_rmse, s.ref_rmse);
    is_double(s.slack, 1e-5, 1e-12, "slack is tol / 10");
    s = tensor_same(ref, bad, f64, 1e-4, 1e-4);
    ok(!s.ok && s.used_fp64 && s.res_rmse > 2 * s.ref_rmse, "one element off by 0.5 in 4096 fails (RMSE %.3g vs %.3g)", s.res_rmse, s.ref_rmse);
    for (int64_t i = 0; i < n; i++) tensor_set_f(bad, i, 1.5 * tensor_get_f(f64, i));
    s = tensor_same(ref, bad, f64, 1e-4, 1e-4);
    ok(!s.ok, "a result 50%% too large fails (RMSE %.3g vs %.3g)", s.res_rmse, s.ref_rmse);

    /* same()'s multipliers: 3 for bf16 results and for tensors under 1000 elements */
    Tensor *hr = tensor_to_dtype(ctx, ref, DT_BF16), *hs = tensor_to_dtype(ctx, res, DT_BF16);
    for (int64_t i = 0; i < n; i++) tensor_set_f(hs, i, tensor_get_f(hs, i) + 0.004);
    s = tensor_same(hr, hs, f64, 1e-4, 1e-4);
    ok(s.used_fp64 && s.multiplier == 3.0, "bf16 results get multiplier 3");
    tensor_unref(hr); tensor_unref(hs);
    int64_t small = 100;
    Tensor *sr = tensor_new(ctx, DT_F32, 1, &small), *ss = tensor_new(ctx, DT_F32, 1, &small), *sf = tensor_new(ctx, DT_F64, 1, &small);
    for (int i = 0; i < 100; i++) { tensor_set_f(sr, i, 1 + 1e-3 * noise(&s1)); tensor_set_f(ss, i, 1 + 2.5e-3 * noise(&s2)); tensor_set_f(sf, i, 1); }
    s = tensor_same(sr, ss, sf, 1e-4, 1e-4);
    ok(s.multiplier == 3.0 && s.ok, "100 elements: multiplier 3 (RMSE %.3g vs %.3g)", s.res_rmse, s.ref_rmse);

    /* NaN corner: the reference has a NaN, the result and float64 agree without any */
    tensor_set_f(sr, 5, NAN);
    for (int i = 0; i < 100; i++) tensor_set_f(ss, i, 1.0);
    s = tensor_same(sr, ss, sf, 1e-4, 1e-4);
    ok(s.ok && s.how == SAME_NAN_CORNER, "a NaN only in the reference: the better result passes");
    tensor_unref(sr); tensor_unref(ss); tensor_unref(sf);
    tensor_unref(f64); tensor_unref(ref); tensor_unref(res); tensor_unref(bad);

    /* complex: both parts count, and copies keep the imaginary part */
    Tensor *c1 = vec(ctx, DT_C64, 3), *c2 = vec(ctx, DT_C128, 3);
    for (int i = 0; i < 3; i++) tensor_store_c(c1, i, i, -2.5 * i);
    ok(tensor_copy_into(ctx, c2, c1) == 0, "c64 copies into c128");
    double re, im;
    tensor_load_c(c2, 2, &re, &im);
    ok(re == 2 && im == -5, "the copy keeps the imaginary part (%g%+gj)", re, im);
    Tensor *c3 = tensor_to_dtype(ctx, c2, DT_C64);
    ok(tensor_same(c1, c3, NULL, 1e-4, 1e-4).ok, "equal complex tensors agree");
    tensor_store_c(c3, 1, 1, -2.4);
    s = tensor_same(c1, c3, NULL, 1e-4, 1e-4);
    ok(!s.ok && s.close.worst_index == 1, "a differing imaginary part fails");
    tensor_unref(c1); tensor_unref(c2); tensor_unref(c3);
}

static Tensor *draws(MiCtx *ctx, int64_t n, uint64_t seed, double p_true, double scale) {
    Tensor *t = vec(ctx, p_true >= 0 ? DT_BOOL : DT_F32, n);
    for (int64_t i = 0; i < n; i++) {
        double u = (noise(&seed) + 1) / 2;
        tensor_set_f(t, i, p_true >= 0 ? u < p_true : scale * u);
    }
    return t;
}

static void test_random_compare(MiCtx *ctx) {
    Tensor *m1 = draws(ctx, 2048, 11, 0.9, 0), *m2 = draws(ctx, 2048, 12, 0.9, 0), *m3 = draws(ctx, 2048, 13, 0.5, 0);
    RandomResult r = tensor_random_compare(m1, m2);
    ok(r.ok && !r.numeric && fabs(r.rate_ref - 0.9) < 0.03, "two dropout masks of p = 0.1 agree in rate (%.3f vs %.3f)", r.rate_ref, r.rate_res);
    r = tensor_random_compare(m1, m3);
    ok(!r.ok && !r.rate_ok, "a mask of p = 0.5 against p = 0.1 fails the rate (%.3f vs %.3f)", r.rate_ref, r.rate_res);
    Tensor *u1 = draws(ctx, 2048, 21, -1, 1), *u2 = draws(ctx, 2048, 22, -1, 1), *u3 = draws(ctx, 2048, 23, -1, 1.5);
    r = tensor_random_compare(u1, u2);
    ok(r.ok && r.ks < r.ks_limit, "two rand() draws agree in range and distribution (KS %.3f < %.3f)", r.ks, r.ks_limit);
    r = tensor_random_compare(u1, u3);
    ok(!r.ok && (!r.range_ok || !r.ks_ok), "rand() * 1.5 fails (range [%g, %g], KS %.3f)", r.lo_res, r.hi_res, r.ks);
    /* randint replacing 3 of 20 tokens (where(mask, randint(0, 50), tok)): the draws are not the
     * reference's, so the result's largest value may be far below the reference's */
    Tensor *t1 = vec(ctx, DT_I64, 20), *t2 = vec(ctx, DT_I64, 20);
    for (int64_t i = 0; i < 20; i++) { tensor_set_f(t1, i, (double)((i * 7) % 30)); tensor_set_f(t2, i, (double)((i * 7) % 30)); }
    tensor_set_f(t1, 3, 48); tensor_set_f(t1, 11, 40); tensor_set_f(t1, 17, 2);
    tensor_set_f(t2, 3, 34); tensor_set_f(t2, 11, 5); tensor_set_f(t2, 17, 21);
    r = tensor_random_compare(t1, t2);
    ok(r.ok && r.hi_res == 34 && r.hi_ref == 48, "3 random ints of 20: a narrower range within the KS limit agrees ([%g, %g] vs [%g, %g])",
       r.lo_res, r.hi_res, r.lo_ref, r.hi_ref);
    r = tensor_random_compare(t2, t1);
    ok(r.ok, "and the other way round: a wider range from 3 draws agrees ([%g, %g] vs [%g, %g])", r.lo_res, r.hi_res, r.lo_ref, r.hi_ref);
    tensor_set_f(t2, 5, 1000);
    r = tensor_random_compare(t1, t2);
    ok(!r.ok && !r.range_ok, "one value far beyond the reference's range fails (an outlier, max %g)", r.hi_res);
    tensor_unref(t1); tensor_unref(t2);
    tensor_set_f(u2, 7, NAN);
    r = tensor_random_compare(u1, u2);
    ok(!r.ok && !r.finite_ok, "a NaN the reference does not have fails");
    Tensor *sh = draws(ctx, 1024, 21, -1, 1);
    r = tensor_random_compare(u1, sh);
    ok(!r.ok && !r.shape_ok, "different shapes fail");
    tensor_unref(m1); tensor_unref(m2); tensor_unref(m3);
    tensor_unref(u1); tensor_unref(u2); tensor_unref(u3); tensor_unref(sh);
}

static Graph *parse(MiCtx *ctx, const char *src) {
    Graph *g = fx_parse(ctx, src, strlen(src), "test.py", 1);
    if (g) ops_resolve_graph(g);
    else diag("%s", ctx->err.msg);
    return g;
}

/* interp_run_fp64: casts to bf16 inside the graph round nothing */
static void test_fp64_run(MiCtx *ctx) {
    Graph *g = parse(ctx,
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[64][1]cpu\"):\n"
        "        mul: \"f32[64][1]cpu\" = torch.ops.aten.mul.Tensor(x, 3.0)\n"
        "        b: \"bf16[64][1]cpu\" = torch.ops.prims.convert_element_type.default(mul, torch.bfloat16)\n"
        "        f: \"f32[64][1]cpu\" = torch.ops.prims.convert_element_type.default(b, torch.float32)\n"
        "        div: \"f32[64][1]cpu\" = torch.ops.aten.div.Tensor(f, 3.0)\n"
        "        return (div, b)\n");
    if (!ok(g != NULL, "bf16 round trip parses")) return;
    IValue *in = NULL, *o32 = NULL, *o64 = NULL, *after = NULL;
    int nin = 0, n32 = 0, n64 = 0;
    ok(interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0, "random inputs");
    ok(interp_run(ctx, g, in, nin, &o32, &n32) == 0 && n32 == 2, "float32 run");
    ok(interp_run_fp64(ctx, g, in, nin, &o64, &n64, &after) == 0 && n64 == 2, "float64 run");
    if (n32 == 2 && n64 == 2) {
        ok(o64[0].t->dtype == DT_F64 && o64[1].t->dtype == DT_F64 && o32[1].t->dtype == DT_BF16,
           "the float64 run makes f64 where the graph names f32 and bf16");
        double e32 = 0, e64 = 0;
        for (int i = 0; i < 64; i++) {
            double x = tensor_get_f(in[0].t, i);
            e32 = fmax(e32, fabs(tensor_get_f(o32[0].t, i) - x));
            e64 = fmax(e64, fabs(tensor_get_f(o64[0].t, i) - x));
        }
        ok(e32 > 1e-4 && e64 < 1e-7, "bf16 rounds in the float32 run (%.3g), not in the float64 run (%.3g)", e32, e64);
        ok(after && after[0].t->dtype == DT_F64, "the float64 run's inputs are f64 copies");
        ok(in[0].t->dtype == DT_F32, "the caller's inputs are untouched");
    }
    interp_free_outputs(in, nin); interp_free_outputs(o32, n32); interp_free_outputs(o64, n64); interp_free_outputs(after, nin);
    graph_free(g);
}

/* A deep float32 graph: six blocks rounding x to a coarse grid ((x*k + B) - B). Rewritten to
 * round differently ((x*k - B) + B) it disagrees with allclose, and the RMSE rule accepts it;
 * with one constant wrong it fails. */
static char *deep_graph(const char *order, double k_last) {
    static char buf[8192];
    size_t len = (size_t)snprintf(buf, sizeof buf, "class GraphModule(torch.nn.Module):\n"
                                  "    def forward(self, x0: \"f32[64, 64][64, 1]cpu\"):\n");
    for (int b = 0; b < 6; b++) {
        double k = b == 5 ? k_last : 1.1, B = 65536.0;
        len += (size_t)snprintf(buf + len, sizeof buf - len,
            "        m%d: \"f32[64, 64][64, 1]cpu\" = torch.ops.aten.mul.Tensor(x%d, %.17g)\n"
            "        a%d: \"f32[64, 64][64, 1]cpu\" = torch.ops.aten.%s.Tensor(m%d, %.1f)\n"
            "        x%d: \"f32[64, 64][64, 1]cpu\" = torch.ops.aten.%s.Tensor(a%d, %.1f)\n",
            b, b, k, b, order[0] == '+' ? "add" : "sub", b, B, b + 1, order[0] == '+' ? "sub" : "add", b, B);
    }
    snprintf(buf + len, sizeof buf - len, "        return (x6,)\n");
    return buf;
}

static void test_deep_graph(MiCtx *ctx) {
    Graph *ga = parse(ctx, deep_graph("+", 1.1)), *gb = parse(ctx, deep_graph("-", 1.1)), *gc = parse(ctx, deep_graph("+", 1.2));
    if (!ok(ga && gb && gc, "deep graphs parse")) return;
    IValue *in = NULL, *oa = NULL, *ob = NULL, *oc = NULL;
    int nin = 0, na = 0, nb = 0, nc = 0;
    ctx->seed = 7;
    interp_random_inputs(ctx, ga, NULL, 0, &in, &nin);
    IValue *i1 = NULL, *i2 = NULL, *i3 = NULL;
    int n1, n2, n3;
    interp_random_inputs(ctx, ga, NULL, 0, &i1, &n1);
    interp_random_inputs(ctx, ga, NULL, 0, &i2, &n2);
    interp_random_inputs(ctx, ga, NULL, 0, &i3, &n3);
    ok(interp_run(ctx, ga, i1, 1, &oa, &na) == 0 && interp_run(ctx, gb, i2, 1, &ob, &nb) == 0 &&
       interp_run(ctx, gc, i3, 1, &oc, &nc) == 0, "the three graphs run");
    StrBuf rep;
    sb_init(&rep);
    NumCheck c = {.ctx = ctx, .rtol = 1e-4, .atol = 1e-4, .report = &rep, .fp64 = numref_new(ctx, ga, in, nin)};
    ok(!tensor_same(oa[0].t, ob[0].t, NULL, 1e-4, 1e-4).close.ok, "allclose alone calls the rewritten graph a mismatch");
    ok(num_check_value(&c, "output 0", &oa[0], &ob[0], NUM_OUT, 0, false), "the verdict: float rounding");
    ok(rep.s && strstr(rep.s, "output 0: f32[64, 64] ok max abs err ") && strstr(rep.s, "(float rounding: RMSE vs float64 "),
       "the report says why");
    if (rep.s) diag("%s", rep.s);
    sb_free(&rep);
    sb_init(&rep);
    ok(!num_check_value(&c, "output 0", &oa[0], &oc[0], NUM_OUT, 0, false), "a wrong constant in the last block fails");
    ok(rep.s && strstr(rep.s, "output 0: f32[64, 64] MISMATCH") && strstr(rep.s, "(beyond rounding: RMSE vs float64 ") &&
       strstr(rep.s, "elements differ, worst at index "), "the report names the RMSE and the worst element");
    if (rep.s) diag("%s", rep.s);
    is_int(c.bad, 1, "one of two comparisons failed");
    sb_free(&rep);
    numref_free(c.fp64);
    interp_free_outputs(in, nin); interp_free_outputs(i1, n1); interp_free_outputs(i2, n2); interp_free_outputs(i3, n3);
    interp_free_outputs(oa, na); interp_free_outputs(ob, nb); interp_free_outputs(oc, nc);
    graph_free(ga); graph_free(gb); graph_free(gc);
}

/* Against PyTorch's values our float64 run cannot vouch for our own result: a reference with
 * TF32-sized noise passes by the RMSE rule, one 5% off fails however close we are to float64. */
static void test_self_vouching(MiCtx *ctx) {
    Graph *g = parse(ctx,
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4096][1]cpu\"):\n"
        "        mul: \"f32[4096][1]cpu\" = torch.ops.aten.mul.Tensor(x, 3.0)\n"
        "        return (mul,)\n");
    if (!ok(g != NULL, "graph parses")) return;
    IValue *in = NULL, *o = NULL;
    int nin = 0, no = 0;
    interp_random_inputs(ctx, g, NULL, 0, &in, &nin);
    interp_run(ctx, g, in, nin, &o, &no);
    int64_t n = 4096;
    IValue tf32 = {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, 1, &n)}, off = {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, 1, &n)};
    uint64_t seed = 5;
    for (int64_t i = 0; i < n; i++) {
        double v = tensor_get_f(o[0].t, i);
        tensor_set_f(tf32.t, i, v * (1 + 5e-4 * noise(&seed)));
        tensor_set_f(off.t, i, v * 1.05);
    }
    NumCheck c = {.ctx = ctx, .rtol = 1e-4, .atol = 1e-4, .fp64 = numref_new(ctx, g, in, nin), .fp64_of_result = true};
    ok(num_check_value(&c, "output 0", &tf32, &o[0], NUM_OUT, 0, false), "a reference with TF32-sized noise: rounding");
    StrBuf rep;
    sb_init(&rep);
    c.report = &rep;
    ok(!num_check_value(&c, "output 0", &off, &o[0], NUM_OUT, 0, false) && rep.s && strstr(rep.s, "cannot vouch for it"),
       "a reference 5%% off fails: the float64 run is the result's own implementation");
    sb_free(&rep);
    c.report = NULL;
    c.fp64_of_result = false;
    ok(num_check_value(&c, "output 0", &off, &o[0], NUM_OUT, 0, false), "(with an independent float64 run, the better result would pass)");
    numref_free(c.fp64);
    ivalue_clear(&tf32); ivalue_clear(&off);
    interp_free_outputs(in, nin); interp_free_outputs(o, no);
    graph_free(g);
}

/* A float32 array for a bf16 placeholder: rounded, with a note; the annotated strides kept. */
static void test_conform_input(MiCtx *ctx) {
    Graph *g = parse(ctx,
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"bf16[2, 3][1, 2]cpu\", y: \"f16[3][1]cpu\"):\n"
        "        t: \"bf16[3, 2][2, 1]cpu\" = torch.ops.aten.t.default(x)\n"
        "        return (t,)\n");
    if (!ok(g != NULL, "graph parses")) return;
    int64_t size[2] = {2, 3};
    Tensor *f = tensor_new(ctx, DT_F32, 2, size);
    for (int i = 0; i < 6; i++) tensor_set_f(f, i, i % 2 ? 1.001 * i : i);
    char note[256];
    Tensor *t = inputs_conform(ctx, g, 0, f, "x.npy", note, sizeof note);
    ok(t && t->dtype == DT_BF16 && t->stride[0] == 1 && t->stride[1] == 2, "a bf16 tensor with the annotated strides [1, 2]");
    is_str(note, "input 0 ('x') is bf16; the file holds f32 (.npy has no bf16): rounded, 3 of 6 values changed",
           "the one-line note counts the values rounding changed");
    ok(t && tensor_get_f(t, 5) == (double)mi_bf16_to_f32(mi_f32_to_bf16(5.005f)), "values are rounded to nearest even bf16");
    int64_t n3 = 3;
    Tensor *f3 = tensor_new(ctx, DT_F32, 1, &n3);
    ok(inputs_conform(ctx, g, 1, f3, "y.npy", note, sizeof note) == NULL &&
       strstr(ctx->err.msg, "input 1 ('y') should be f16[3][1]cpu, the file holds f32[3]"),
       "f16 has a .npy type: a float32 file for it is an error: %s", ctx->err.msg);
    tensor_unref(f); tensor_unref(f3); tensor_unref(t);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    test_same_rule(ctx);
    test_random_compare(ctx);
    test_fp64_run(ctx);
    test_deep_graph(ctx);
    test_self_vouching(ctx);
    test_conform_input(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
