/* test_perf_policy.c — the runtime's performance policies, by their observable effects: the
 * denormal policy of generated modules (ctx->flush_denormal: FTZ/DAZ inside call(), the
 * caller's floating-point mode untouched), the per-kernel profile (rt_profile: one entry per
 * kernel, named, adding up to the call), the OpenBLAS core decision (rt_blas_choose) and the
 * vector math of exp / sigmoid / erf (Sleef when configured, glibc otherwise) within the error
 * bounds bench/README.md states. */
#include "tap.h"
#include "compile_fx/compile_fx.h"
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

/* y = x * 1e-30 (denormal results for |x| ~ 1e-10), z = x * 1e10 (a denormal x reads as 0
 * under DAZ) */
static const char *SCALE_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 4][4, 1]cpu\"):\n"
    "        mul: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 1e-30)\n"
    "        mul_1: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 10000000000.0);  arg0_1 = None\n"
    "        return (mul, mul_1)\n";

/* three kernels: a fused pointwise kernel, an extern mm, a fused pointwise kernel */
static const char *MM_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[64, 64][64, 1]cpu\", arg1_1: \"f32[64, 64][64, 1]cpu\"):\n"
    "        relu: \"f32[64, 64][64, 1]cpu\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
    "        mm: \"f32[64, 64][64, 1]cpu\" = torch.ops.aten.mm.default(relu, arg1_1);  relu = arg1_1 = None\n"
    "        tanh: \"f32[64, 64][64, 1]cpu\" = torch.ops.aten.tanh.default(mm);  mm = None\n"
    "        return (tanh,)\n";

/* exp, sigmoid and erf over 4096 values: vectorized loops with a remainder */
static const char *MATH_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4099][1]cpu\"):\n"
    "        exp: \"f32[4099][1]cpu\" = torch.ops.aten.exp.default(arg0_1)\n"
    "        sigmoid: \"f32[4099][1]cpu\" = torch.ops.aten.sigmoid.default(arg0_1)\n"
    "        erf: \"f32[4099][1]cpu\" = torch.ops.aten.erf.default(arg0_1);  arg0_1 = None\n"
    "        return (exp, sigmoid, erf)\n";

static Graph *parse(MiCtx *ctx, const char *text) {
    Graph *g = fx_parse(ctx, text, strlen(text), "test.py", 1);
    if (g) ops_resolve_graph(g);
    return g;
}

/* the control bits of MXCSR (rounding, FTZ, DAZ, masks), not the sticky exception flags */
static unsigned fp_mode(void) {
#if defined(__SSE__)
    return _mm_getcsr() & ~0x3fu;
#else
    return 0;
#endif
}

/* run SCALE_GRAPH on x = {1e-10 ..., 1e-40 ...} with the policy on or off */
static void denormals(MiCtx *ctx, bool flush) {
    char err[1200];
    ctx->flush_denormal = flush;
    Graph *g = parse(ctx, SCALE_GRAPH);
    if (!ok(g != NULL, "parse the scaling graph")) { diag("%s", mi_err_str(ctx, err, sizeof err)); return; }
    CompiledFx c;
    compile_fx_init(&c, g);
    if (!ok(compile_fx(ctx, &c, CFX_BUILT) == 0, "compile (flush_denormal %s)", flush ? "on" : "off")) {
        diag("%s", mi_err_str(ctx, err, sizeof err));
        compile_fx_free(&c);
        graph_free(g);
        return;
    }
    ok((strstr(c.code, "mi_fp_enter(saved);") != NULL) == flush, "call() %s the denormal mode", flush ? "sets" : "leaves");
    int64_t size[2] = {4, 4};
    IValue in = {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, 2, size)};
    for (int i = 0; i < 16; i++) tensor_set_f(in.t, i, i < 8 ? 1e-10f : 1e-40f);
    unsigned before = fp_mode();
    IValue *outs = NULL;
    int nouts = 0;
    int rc = rt_run(ctx, c.mod, g, &in, 1, &outs, &nouts, NULL);
    is_int(rc, 0, "run");
    is_int((int)fp_mode(), (int)before, "the caller's floating-point mode is unchanged after call()");
    if (rc == 0) {
        double y = tensor_get_f(outs[0].t, 0), z = tensor_get_f(outs[1].t, 8);
        if (flush) {
            ok(y == 0.0, "1e-10 * 1e-30 flushes to 0 (got %g)", y);
            ok(z == 0.0, "a denormal input 1e-40 reads as 0: * 1e10 = 0 (got %g)", z);
        } else {
            ok(y > 9e-41 && y < 1.1e-40, "1e-10 * 1e-30 stays the denormal 1e-40 (got %g)", y);
            ok(z > 9e-31 && z < 1.1e-30, "1e-40 * 1e10 = 1e-30 (got %g)", z);
        }
        ok(tensor_get_f(outs[1].t, 0) > 0.99f && tensor_get_f(outs[1].t, 0) < 1.01f, "normal values are unaffected");
        interp_free_outputs(outs, nouts);
    }
    tensor_unref(in.t);
    compile_fx_free(&c);
    graph_free(g);
    ctx->flush_denormal = true;
}

static void profile(MiCtx *ctx) {
    char err[1200];
    Graph *g = parse(ctx, MM_GRAPH);
    if (!ok(g != NULL, "parse the mm graph")) return;
    CompiledFx c;
    compile_fx_init(&c, g);
    if (!ok(compile_fx(ctx, &c, CFX_BUILT) == 0, "compile the mm graph")) {
        diag("%s", mi_err_str(ctx, err, sizeof err));
        compile_fx_free(&c);
        graph_free(g);
        return;
    }
    IValue *in = NULL;
    int nin = 0;
    if (!ok(interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0, "inputs")) return;
    RtProfile p;
    int rc = rt_profile(ctx, c.mod, g, in, nin, 1, 5, &p);
    if (!ok(rc == 0, "rt_profile")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (rc == 0) {
        is_int(p.n, sched_num_kernels(c.sched), "one entry per kernel of the schedule");
        is_int(p.n, 3, "pointwise, mm, pointwise");
        ok(p.n == 3 && strstr(p.names[1], "(mm -> ") != NULL, "the extern call is named with its op and buffer: %s",
           p.n > 1 ? p.names[1] : "?");
        ok(p.n == 3 && !strncmp(p.names[0], "cpp_fused_", 10) && !strncmp(p.names[2], "cpp_fused_", 10),
           "fused kernels by their names (%s, %s)", p.n ? p.names[0] : "?", p.n > 2 ? p.names[2] : "?");
        double sum = 0;
        bool nonneg = true;
        for (int k = 0; k < p.n; k++) sum += p.ms[k], nonneg &= p.ms[k] >= 0;
        ok(nonneg && p.call_ms > 0, "times are non-negative, the call took time");
        StrBuf sb;
        sb_init(&sb);
        rt_profile_format(&p, &sb);
        ok(sb.s && strstr(sb.s, "whole call") && strstr(sb.s, "sum of the kernels"), "the table has the sum and the call");
        sb_free(&sb);
        rt_profile_free(&p);
    }
    /* the profile leaves the module as it was: plain runs still compute */
    IValue *outs = NULL;
    int nouts = 0;
    ok(rt_run(ctx, c.mod, g, in, nin, &outs, &nouts, NULL) == 0 && *c.mod->profile == 0, "profiling is off again after rt_profile");
    if (outs) interp_free_outputs(outs, nouts);
    interp_free_outputs(in, nin);
    compile_fx_free(&c);
    graph_free(g);
}

/* the vector math, with MINDUCTOR_VECMATH = vm (NULL: the configured default) */
static void vecmath(MiCtx *ctx, const char *vm) {
    char err[1200];
    if (vm) setenv("MINDUCTOR_VECMATH", vm, 1); else unsetenv("MINDUCTOR_VECMATH");
    Graph *g = parse(ctx, MATH_GRAPH);
    CompiledFx c;
    compile_fx_init(&c, g);
    int rc = g ? compile_fx(ctx, &c, CFX_BUILT) : -1;
    if (!ok(rc == 0, "compile exp / sigmoid / erf (vector math %s)", vm ? vm : "default")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (rc == 0) {
        ok(strstr(c.code, "mi_expf(") && strstr(c.code, "mi_erff("), "the kernel calls the vector-math layer");
        int64_t n = 4099;
        IValue in = {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, 1, &n)};
        for (int i = 0; i < n; i++) tensor_set_f(in.t, i, -120.0 + 125.0 * i / (n - 1));   /* [-120, 5] */
        IValue *outs = NULL;
        int nouts = 0;
        if (ok(rt_run(ctx, c.mod, g, &in, 1, &outs, &nouts, NULL) == 0, "run")) {
            double e_exp = 0, e_sig = 0, e_erf = 0;
            for (int i = 0; i < n; i++) {
                double x = (float)tensor_get_f(in.t, i), ex = exp(x);
                if (ex >= 1.2e-38) e_exp = fmax(e_exp, fabs(tensor_get_f(outs[0].t, i) - ex) / ex);   /* normal results */
                e_sig = fmax(e_sig, fabs(tensor_get_f(outs[1].t, i) - 1 / (1 + exp(-x))));
                e_erf = fmax(e_erf, fabs(tensor_get_f(outs[2].t, i) - erf(x)));
            }
            ok(e_exp <= 2.4e-7, "exp within 2 ULP over [-87, 5] (max rel err %.2e)", e_exp);
            ok(e_sig <= 2.4e-7, "sigmoid within 2.4e-7 (max abs err %.2e)", e_sig);
            ok(e_erf <= 4e-7, "erf within ATen's bound: 1.5e-7 of the formula + float rounding (max abs err %.2e)", e_erf);
            interp_free_outputs(outs, nouts);
        }
        tensor_unref(in.t);
    }
    compile_fx_free(&c);
    if (g) graph_free(g);
    unsetenv("MINDUCTOR_VECMATH");
}

static void blas_choice(void) {
    char why[160];
    is_str(rt_blas_choose("Haswell", NULL, NULL, "Cooperlake", why, sizeof why), "Cooperlake",
           "an AVX2 core on an AVX-512 CPU is upgraded");
    is_str(why, "chosen from cpuid; OpenBLAS detected Haswell", "  and says why");
    is_str(rt_blas_choose("Prescott", NULL, NULL, "SkylakeX", why, sizeof why), "SkylakeX", "the SSE3 fallback is upgraded");
    ok(rt_blas_choose("SkylakeX", NULL, NULL, "SkylakeX", why, sizeof why) == NULL, "the right core is kept");
    ok(rt_blas_choose("Cooperlake", NULL, NULL, "SkylakeX", why, sizeof why) == NULL, "a better core than cpuid's pick is kept");
    ok(rt_blas_choose("Haswell", "Haswell", NULL, "Cooperlake", why, sizeof why) == NULL, "the user's OPENBLAS_CORETYPE is kept");
    is_str(why, "OPENBLAS_CORETYPE=Haswell; cpuid offers Cooperlake", "  and the better choice is named");
    is_str(rt_blas_choose("Haswell", "Haswell", "cpuid", "Cooperlake", why, sizeof why), "Cooperlake",
           "MINDUCTOR_BLAS_CORETYPE=cpuid overrides it");
    is_str(rt_blas_choose("Cooperlake", NULL, "Haswell", "Cooperlake", why, sizeof why), "Haswell",
           "MINDUCTOR_BLAS_CORETYPE=NAME forces a core");
    ok(rt_blas_choose("Haswell", NULL, NULL, NULL, why, sizeof why) == NULL, "no cpuid answer: no change");
    const char *note = rt_blas_tune();
    ok(note && *note, "rt_blas_tune reports: %s", note ? note : "?");
}

/* addmm with a transposed weight (a bias broadcast over rows) and a plain mm, large enough for
 * the BLAS path (M * N * K >= 2^21) */
static const char *GEMM_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[256, 96][96, 1]cpu\", arg1_1: \"f32[130, 96][96, 1]cpu\", arg2_1: \"f32[130][1]cpu\", arg3_1: \"f32[130, 70][70, 1]cpu\"):\n"
    "        permute: \"f32[96, 130][1, 96]cpu\" = torch.ops.aten.permute.default(arg1_1, [1, 0]);  arg1_1 = None\n"
    "        addmm: \"f32[256, 130][130, 1]cpu\" = torch.ops.aten.addmm.default(arg2_1, arg0_1, permute);  arg2_1 = arg0_1 = permute = None\n"
    "        mm: \"f32[256, 70][70, 1]cpu\" = torch.ops.aten.mm.default(addmm, arg3_1);  arg3_1 = None\n"
    "        return (addmm, mm)\n";

/* the same with 255 rows (another module, so it reads MINDUCTOR_GEMM afresh) */
static const char *GEMM_GRAPH_255 =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[255, 96][96, 1]cpu\", arg1_1: \"f32[130, 96][96, 1]cpu\", arg2_1: \"f32[130][1]cpu\", arg3_1: \"f32[130, 70][70, 1]cpu\"):\n"
    "        permute: \"f32[96, 130][1, 96]cpu\" = torch.ops.aten.permute.default(arg1_1, [1, 0]);  arg1_1 = None\n"
    "        addmm: \"f32[255, 130][130, 1]cpu\" = torch.ops.aten.addmm.default(arg2_1, arg0_1, permute);  arg2_1 = arg0_1 = permute = None\n"
    "        mm: \"f32[255, 70][70, 1]cpu\" = torch.ops.aten.mm.default(addmm, arg3_1);  arg3_1 = None\n"
    "        return (addmm, mm)\n";

/* causal attention, 4 query blocks of 64, keys in one block of 600 */
static const char *SDPA_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[2, 3, 200, 24][14400, 4800, 24, 1]cpu\", arg1_1: \"f32[2, 3, 600, 24][43200, 14400, 24, 1]cpu\", arg2_1: \"f32[2, 3, 600, 20][36000, 12000, 20, 1]cpu\"):\n"
    "        s = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True, scale = 0.2)\n"
    "        getitem: \"f32[2, 3, 200, 20][12000, 4000, 20, 1]cpu\" = s[0]\n"
    "        return (getitem,)\n";

/* The GEMMs of a module (read MINDUCTOR_GEMM at its first GEMM: unset, oneDNN's sgemm when the
 * library has oneDNN; "blas": the BLAS) compute what the interpreter computes, in mi_gemm (bias
 * included) and in mi_sdpa's blocks, and oneDNN computed at least min_calls of them (0 with
 * "blas": none). A module's setting lives in its .so: each case is a graph of its own. */
static void gemm_dnnl(MiCtx *ctx, const char *what, const char *text, const char *env, long min_calls) {
    char err[1200];
    if (env) setenv("MINDUCTOR_GEMM", env, 1);
    else unsetenv("MINDUCTOR_GEMM");
    Graph *g = parse(ctx, text);
    CompiledFx c;
    compile_fx_init(&c, g);
    if (!ok(g && compile_fx(ctx, &c, CFX_BUILT) == 0, "compile %s", what)) {
        diag("%s", mi_err_str(ctx, err, sizeof err));
        compile_fx_free(&c);
        graph_free(g);
        unsetenv("MINDUCTOR_GEMM");
        return;
    }
#ifdef HAVE_DNNL
    ok(strstr(c.code, "dnnl_sgemm(") != NULL, "%s: built with oneDNN, the module can call dnnl_sgemm", what);
#else
    ok(strstr(c.code, "dnnl_sgemm(") == NULL, "%s: built without oneDNN, no dnnl_sgemm", what);
#endif
    IValue *in = NULL;
    int nin = 0;
    if (ok(interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0, "inputs")) {
        StrBuf rep;
        sb_init(&rep);
        int rc = rt_check(ctx, c.mod, g, in, nin, 1e-4, 1e-5, &rep);
        if (!ok(rc == 1, "%s agrees with the interpreter", what)) diag("%s", rep.s ? rep.s : mi_err_str(ctx, err, sizeof err));
#ifdef HAVE_DNNL
        const long *calls = dlsym(c.mod->handle, "mi_gemm_dnnl_calls");
        if (min_calls) ok(calls && *calls >= min_calls, "%s: oneDNN computed the GEMMs (%ld calls)", what, calls ? *calls : -1L);
        else ok(calls && *calls == 0, "%s: oneDNN computed none of them (%ld calls)", what, calls ? *calls : -1L);
#else
        (void)min_calls;
#endif
        sb_free(&rep);
        interp_free_outputs(in, nin);
    }
    compile_fx_free(&c);
    graph_free(g);
    unsetenv("MINDUCTOR_GEMM");
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char tmpl[] = "/tmp/mi-test-perf-XXXXXX";
    if (!mkdtemp(tmpl)) { diag("mkdtemp failed"); return 1; }
    snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", tmpl);
    ctx->threads = 2;
    ok(ctx->flush_denormal, "the denormal policy is on by default");
    denormals(ctx, true);
    denormals(ctx, false);
    profile(ctx);
    vecmath(ctx, NULL);
    vecmath(ctx, "libmvec");
    blas_choice();
    gemm_dnnl(ctx, "addmm + mm", GEMM_GRAPH, NULL, 2);
    gemm_dnnl(ctx, "causal attention", SDPA_GRAPH, NULL, 2 * 3 * 4 * 2);
    gemm_dnnl(ctx, "MINDUCTOR_GEMM=blas: addmm + mm (batch 255)", GEMM_GRAPH_255, "blas", 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    if (system(cmd) != 0) diag("could not remove %s", tmpl);
    mi_ctx_free(ctx);
    return done_testing();
}
