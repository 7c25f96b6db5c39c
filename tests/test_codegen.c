/* test_codegen.c — end to end over the recorded PyTorch cases: lower every
 * tests/fixtures/torch-cases{,-b2}/{cpu,cuda}/CASE/graphN/{pre,post}_post_grad.py, schedule
 * (fusion on and off), generate C, compile and run it through core/runtime/runtime.h on inK.npy,
 * compare with outK.npy and inK_after.npy by the numerics verdict (allclose rtol 1e-4 atol 1e-5,
 * else float rounding against a float64 run; random draws statistically; bf16 recorded as f32).
 * Also: dynamic_pointwise compiles once and runs at 3 sizes. */
#include "tap.h"
#include "codegen/codegen_c.h"
#include "compile_fx/compile_fx.h"
#include "ops/inputs.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const roots[2] = {"tests/fixtures/torch-cases", "tests/fixtures/torch-cases-b2"};

/* gpu: schedule with the GPU's fusion decisions (loop reordering, one kernel per group), then
 * generate C as usual: the rewritten loop bodies must compute the same values */
static int run_case(MiCtx *ctx, const char *dir, const char *file, bool fusion, bool gpu, int *nkernels, char *why, size_t wn) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    Graph *g = graph_load_file(ctx, path);
    if (!g) { char e[1200]; snprintf(why, wn, "load: %s", mi_err_str(ctx, e, sizeof e)); return -1; }
    ops_resolve_graph(g);
    if (!lowering_supported(g, why, wn)) { graph_free(g); return 0; }
    ctx->fusion = fusion;
    int rc = -1;
    CompiledFx c;
    compile_fx_init(&c, g);
    IValue *in = NULL, *outs = NULL;
    int nin = 0, nout = 0;
    char e[1200];
    if (gpu) ctx->target = MI_DEV_CUDA;
    int sr = compile_fx(ctx, &c, CFX_SCHEDULED);
    ctx->target = MI_DEV_CPU;
    if (sr < 0 || compile_fx(ctx, &c, CFX_BUILT) < 0) { snprintf(why, wn, "%s", mi_err_str(ctx, e, sizeof e)); goto done; }
    *nkernels = sched_num_kernels(c.sched);
    if (inputs_from_dir(ctx, g, dir, &in, &nin) < 0) { snprintf(why, wn, "inputs: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    if (rt_run(ctx, c.mod, g, in, nin, &outs, &nout, NULL) < 0) { snprintf(why, wn, "run: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    int compared = recorded_check(ctx, g, dir, outs, nout, in, nin, 1e-4, 1e-5, NULL, why, wn);
    /* a graph with no recorded tensor to compare must not pass */
    rc = compared > 0 ? 1 : -1;
    if (compared == 0) snprintf(why, wn, "no recorded outK.npy / inK_after.npy was compared");
done:
    if (rc < 0 && c.code && getenv("MI_DUMP")) fprintf(stderr, "%s\n", c.code);
    if (outs) interp_free_outputs(outs, nout);
    inputs_free(in, nin);
    compile_fx_free(&c);
    graph_free(g);
    return rc;
}

/* dynamic_pointwise: one compiled module, three sizes, checked against the interpreter */
static void dynamic_sizes(MiCtx *ctx) {
    Graph *g = graph_load_file(ctx, "tests/fixtures/torch-cases/cpu/dynamic_pointwise/graph0/post_post_grad.py");
    if (!ok(g != NULL, "dynamic_pointwise loads")) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    /* a fresh cache: the first compile must run cc, later ones (any size) must hit */
    char saved[sizeof ctx->cache_dir], tmpl[] = "/tmp/mi_test_codegen_XXXXXX";
    memcpy(saved, ctx->cache_dir, sizeof saved);
    if (mkdtemp(tmpl)) snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", tmpl);
    CompiledFx c;
    compile_fx_init(&c, g);
    RtModule *rt = compile_fx(ctx, &c, CFX_BUILT) == 0 ? c.mod : NULL;
    int builds = rt && !rt->cache_hit;
    if (ok(rt != NULL, "dynamic_pointwise compiles")) {
        is_int(rt->nsyms, 2, "module exports two symbols");
        int64_t sizes[3][2] = {{3, 5}, {17, 33}, {64, 129}};
        for (int k = 0; k < 3; k++) {
            /* what a user does per call: lower, schedule, generate, compile; all from the cache */
            CompiledFx c2;
            compile_fx_init(&c2, g);
            RtModule *rt2 = compile_fx(ctx, &c2, CFX_BUILT) == 0 ? c2.mod : NULL;
            ok(rt2 && strcmp(rt2->key, rt->key) == 0, "size [%lld, %lld]: same source, same module key",
               (long long)sizes[k][0], (long long)sizes[k][1]);
            builds += rt2 && !rt2->cache_hit;
            compile_fx_free(&c2);
            SymBinding b[2] = {{"s77", sizes[k][0]}, {"s27", sizes[k][1]}};
            IValue *in = NULL;
            int nin = 0;
            if (interp_random_inputs(ctx, g, b, 2, &in, &nin) < 0) { ok(0, "random inputs"); continue; }
            StrBuf rep;
            sb_init(&rep);
            int r = rt_check(ctx, rt, g, in, nin, 1e-4, 1e-5, &rep);
            ok(r == 1, "dynamic_pointwise at [%lld, %lld] agrees with the interpreter", (long long)sizes[k][0], (long long)sizes[k][1]);
            if (r != 1) diag("%s", rep.s ? rep.s : ctx->err.msg);
            sb_free(&rep);
            interp_free_outputs(in, nin);
        }
        is_int(builds, 1, "dynamic_pointwise: cc ran once for three sizes (one cache miss)");
    }
    memcpy(ctx->cache_dir, saved, sizeof saved);
    DIR *cd = opendir(tmpl);
    for (struct dirent *e; cd && (e = readdir(cd));) {
        char f[600];
        snprintf(f, sizeof f, "%s/%.300s", tmpl, e->d_name);
        if (e->d_name[0] != '.') unlink(f);
    }
    if (cd) closedir(cd);
    rmdir(tmpl);
    compile_fx_free(&c);
    graph_free(g);
}

/* Size guards travel with the compiled module: x[s0] + y[s1] was traced with s1 == s0; calling
 * it with s0 = 8, s1 = 3 must fail with the guard named instead of reading y out of bounds. */
static void guards_checked(MiCtx *ctx) {
    const char *text =
        "class <lambda>(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"Sym(s0)\", arg1_1: \"f32[s0][1]cpu\", arg2_1: \"Sym(s1)\", arg3_1: \"f32[s1][1]cpu\"):\n"
        "        add: \"f32[s0][1]cpu\" = torch.ops.aten.add.Tensor(arg1_1, arg3_1);  arg1_1 = arg3_1 = None\n"
        "        return (add,)\n";
    Graph *g = fx_parse(ctx, text, strlen(text), "guard.py", 1);
    if (!ok(g != NULL, "guard graph parses")) return;
    ops_resolve_graph(g);
    CompiledFx c;
    compile_fx_init(&c, g);
    RtModule *rt = compile_fx(ctx, &c, CFX_BUILT) == 0 ? c.mod : NULL;
    if (ok(rt != NULL, "guard graph compiles")) {
        ok(strstr(c.code, "const char *mi_guards[] = {\"s0 >= 1\", \"s1 >= 1\", \"s1 == s0\", NULL};") != NULL, "guards exported");
        ok(strstr(c.code, "if (!(s1 == s0)) return MI_GUARD_FAILED + 2;") != NULL, "call() checks s1 == s0");
        ok(!strstr(c.code, "s0 >= 1LL"), "s0 >= 1 is recorded, not checked: empty tensors still run");
        is_int(rt->nguards, 3, "runtime sees three guards");
        for (int bad = 0; bad < 2; bad++) {
            int64_t n0 = 8, n1 = bad ? 3 : 8;
            IValue in[4] = {{.kind = IV_INT, .i = n0}, {.kind = IV_TENSOR}, {.kind = IV_INT, .i = n1}, {.kind = IV_TENSOR}};
            in[1].t = tensor_new(ctx, DT_F32, 1, &n0);
            in[3].t = tensor_new(ctx, DT_F32, 1, &n1);
            for (int64_t k = 0; k < n0; k++) tensor_set_f(in[1].t, k, (double)k);
            for (int64_t k = 0; k < n1; k++) tensor_set_f(in[3].t, k, 10.0 * (double)k);
            IValue *outs = NULL;
            int nout = 0;
            mi_clear_err(ctx);
            int r = rt_run(ctx, rt, g, in, 4, &outs, &nout, NULL);
            if (bad) {
                ok(r < 0, "s0=8, s1=3: the module refuses to run");
                ok(strstr(ctx->err.msg, "size guard 's1 == s0'") && strstr(ctx->err.msg, "s0=8, s1=3"), "error names the guard and the sizes: %s", ctx->err.msg);
            } else {
                ok(r == 0 && nout == 1 && tensor_get_f(outs[0].t, 7) == 77.0, "s0=s1=8: runs, out[7] = 7 + 70");
            }
            if (outs) interp_free_outputs(outs, nout);
            tensor_unref(in[1].t);
            tensor_unref(in[3].t);
        }
    }
    compile_fx_free(&c);
    graph_free(g);
}

/* tests/fixtures/codegen/NAME.py: small repros (from tests/test_random_graphs.c) that once broke
 * lowering or codegen; each must compile and agree with the interpreter on random inputs. */
static void regressions(MiCtx *ctx) {
    const char *dir = "tests/fixtures/codegen";
    DIR *dd = opendir(dir);
    if (!ok(dd != NULL, "%s exists", dir)) return;
    struct dirent *e;
    while ((e = readdir(dd))) {
        size_t L = strlen(e->d_name);
        if (L < 4 || strcmp(e->d_name + L - 3, ".py") != 0) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%.300s", dir, e->d_name);
        Graph *g = graph_load_file(ctx, path);
        if (!ok(g != NULL, "%s loads", e->d_name)) continue;
        ops_resolve_graph(g);
        for (int f = 1; f >= 0; f--) {
            ctx->fusion = f;
            CompiledFx c;
            compile_fx_init(&c, g);
            RtModule *rt = compile_fx(ctx, &c, CFX_BUILT) == 0 ? c.mod : NULL;
            IValue *in = NULL;
            int nin = 0, r = -1;
            StrBuf rep;
            sb_init(&rep);
            if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0)
                r = rt_check(ctx, rt, g, in, nin, 1e-4, 1e-5, &rep);
            ok(r == 1, "regression %s fusion=%s agrees with the interpreter", e->d_name, f ? "on" : "off");
            if (r != 1) diag("%s", rep.s ? rep.s : ctx->err.msg);
            ok(c.code && !strstr(c.code, "256f") && !strstr(c.code, " 256;"), "%s: float literals are valid C", e->d_name);
            sb_free(&rep);
            if (in) interp_free_outputs(in, nin);
            compile_fx_free(&c);
        }
        graph_free(g);
    }
    closedir(dd);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    regressions(ctx);
    dynamic_sizes(ctx);
    guards_checked(ctx);
    const char *devs[2] = {"cpu", "cuda"};
    int npass = 0, nskip = 0, ngpu = 0;
    for (int rd = 0; rd < 4; rd++) {
        int dv = rd % 2;
        char d1[300];
        snprintf(d1, sizeof d1, "%s/%s", roots[rd / 2], devs[dv]);
        DIR *dd = opendir(d1);
        if (!dd) continue;
        struct dirent *ce;
        char names[64][256];
        int nc = 0;
        while ((ce = readdir(dd)) && nc < 64)
            if (ce->d_name[0] != '.') snprintf(names[nc++], 256, "%s", ce->d_name);
        closedir(dd);
        for (int a = 0; a < nc; a++)
            for (int b = a + 1; b < nc; b++)
                if (strcmp(names[a], names[b]) > 0) { char t[256]; memcpy(t, names[a], 256); memcpy(names[a], names[b], 256); memcpy(names[b], t, 256); }
        for (int c = 0; c < nc; c++)
            for (int gi = 0; gi < 4; gi++) {
                char dir[700], path[800];
                snprintf(dir, sizeof dir, "%.290s/%.250s/graph%d", d1, names[c], gi);
                snprintf(path, sizeof path, "%s/post_post_grad.py", dir);
                struct stat st;
                if (stat(path, &st) != 0) continue;
                for (int fi = 0; fi < 2; fi++)
                for (int f = 1; f >= 0; f--) {
                    const char *file = fi ? "pre_post_grad.py" : "post_post_grad.py";
                    char why[1500] = "";
                    int nk = 0;
                    int rc = run_case(ctx, dir, file, f, false, &nk, why, sizeof why);
                    if (rc == 0) { if (f) { diag("skip %s/%s/graph%d/%s: %s", devs[dv], names[c], gi, file, why); nskip++; } break; }
                    ok(rc == 1, "%s/%s/graph%d/%s fusion=%s (%d kernels)%s%s", devs[dv], names[c], gi, file, f ? "on" : "off", nk, rc == 1 ? "" : ": ", rc == 1 ? "" : why);
                    if (rc == 1) npass++;
                    if (rc == 1 && f) {   /* exact counts, as Inductor's output_code.py has them */
                        if (strcmp(names[c], "seed_example") == 0) is_int(nk, 1, "%s seed_example %s fuses into one kernel", devs[dv], file);
                        if (strcmp(names[c], "ln_gelu") == 0) is_int(nk, 1, "%s ln_gelu %s fuses into one kernel", devs[dv], file);
                        if (strcmp(names[c], "softmax") == 0) is_int(nk, 1, "%s softmax %s fuses into one kernel", devs[dv], file);
                        if (dv == 1) {   /* the GPU's own decisions, run as C */
                            rc = run_case(ctx, dir, file, true, true, &nk, why, sizeof why);
                            ok(rc == 1, "%s/%s/graph%d/%s GPU fusion decisions (%d kernels)%s%s", devs[dv], names[c], gi, file, nk, rc == 1 ? "" : ": ", rc == 1 ? "" : why);
                            ngpu += rc == 1;
                        }
                    }
                }
            }
    }
    diag("%d runs passed, %d graphs skipped, %d with GPU fusion decisions", npass, nskip, ngpu);
    is_int(nskip, 0, "every recorded graph (pre and post grad, cpu and cuda) is covered by the lowerings");
    is_int(npass, 2 * 2 * 59, "59 graphs x {pre, post} x {fusion on, off} agree with PyTorch");
    mi_ctx_free(ctx);
    return done_testing();
}
