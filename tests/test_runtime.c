/* test_runtime.c — the runtime: compile a hand-written module following the ABI with the
 * system cc, cache hits, running with symbolic sizes, strided inputs, checking against the
 * interpreter, timing, and the errors (compiler error, missing export, bad inputs); a generated
 * module returning a graph input as it is (mi_output_alias), and one returning views of an
 * input and of its buffers (mi_output_view). */
#include "tap.h"
#include "runtime/runtime.h"
#include "compile_fx/compile_fx.h"
#include "fx/graph.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* out = a * 2 + b over s77 x s27 elements (contiguous), with an OpenMP loop. */
static const char *ADD_SRC =
    "#include <stdint.h>\n"
    "const char *mi_sym_names[] = {\"s77\", \"s27\", 0};\n"
    "const int mi_num_outputs = 1;\n"
    "int call(void *const *in, void *const *out, const int64_t *syms) {\n"
    "    const float *a = in[0], *b = in[1];\n"
    "    float *o = out[0];\n"
    "    int64_t n = syms[0] * syms[1];\n"
    "    #pragma omp parallel for\n"
    "    for (int64_t i = 0; i < n; i++) o[i] = a[i] * 2.0f + b[i];\n"
    "    return 0;\n"
    "}\n";

static const char *ADD_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"Sym(s77)\", arg1_1: \"Sym(s27)\", arg2_1: \"f32[s77, s27][s27, 1]cpu\", arg3_1: \"f32[s77, s27][s27, 1]cpu\"):\n"
    "        mul: \"f32[s77, s27][s27, 1]cpu\" = torch.ops.aten.mul.Tensor(arg2_1, 2);  arg2_1 = None\n"
    "        add: \"f32[s77, s27][s27, 1]cpu\" = torch.ops.aten.add.Tensor(mul, arg3_1);  mul = arg3_1 = None\n"
    "        return (add,)\n";

/* Rows of `a` plus a transposed second operand, written with strides: exercises staging. */
static const char *TRANSPOSED_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 3][3, 1]cpu\", arg1_1: \"f32[4, 3][1, 4]cpu\"):\n"
    "        add: \"f32[4, 3][3, 1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None\n"
    "        return (add, None)\n";

/* Reads b with strides (1, 4) as the graph meta says. */
static const char *TRANSPOSED_SRC =
    "#include <stdint.h>\n"
    "const char *mi_sym_names[] = {0};\n"
    "const int mi_num_outputs = 2;\n"
    "int call(void *const *in, void *const *out, const int64_t *syms) {\n"
    "    const float *a = in[0], *b = in[1]; float *o = out[0];\n"
    "    if (out[1]) return 7;\n"
    "    for (int i = 0; i < 4; i++) for (int j = 0; j < 3; j++) o[i*3+j] = a[i*3+j] + b[i + j*4];\n"
    "    return 0;\n"
    "}\n";

/* A forward that saves its weight for backward: the second output is the input w itself. */
static const char *ALIAS_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[4, 3][3, 1]cpu\", w: \"f32[4, 3][3, 1]cpu\"):\n"
    "        add: \"f32[4, 3][3, 1]cpu\" = torch.ops.aten.add.Tensor(x, w);  x = None\n"
    "        return (add, w, w)\n";

/* outputs that are views (Inductor's reinterpret_tensor): of an input, of another output's
 * buffer, of a buffer at an offset */
static const char *VIEW_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[4, 3][3, 1]cpu\", w: \"f32[4, 3][3, 1]cpu\"):\n"
    "        add: \"f32[4, 3][3, 1]cpu\" = torch.ops.aten.add.Tensor(x, w)\n"
    "        view: \"f32[12][1]cpu\" = torch.ops.aten.reshape.default(w, [12]);  w = None\n"
    "        permute: \"f32[3, 4][1, 3]cpu\" = torch.ops.aten.permute.default(add, [1, 0])\n"
    "        mul: \"f32[4, 3][3, 1]cpu\" = torch.ops.aten.mul.Tensor(x, 2);  x = None\n"
    "        slice_1: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten.slice.Tensor(mul, 0, 1, 3);  mul = None\n"
    "        return (add, view, permute, slice_1)\n";

static Graph *parse(MiCtx *ctx, const char *text) {
    Graph *g = fx_parse(ctx, text, strlen(text), "test.py", 1);
    if (g) ops_resolve_graph(g);
    return g;
}

static Tensor *ramp(MiCtx *ctx, int64_t r, int64_t c, float scale) {
    int64_t size[2] = {r, c};
    Tensor *t = tensor_new(ctx, DT_F32, 2, size);
    for (int64_t i = 0; i < r * c; i++) tensor_set_f(t, i, scale * (float)i);
    return t;
}

static char cache_root[256];

static void rm_rf(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    snprintf(cache_root, sizeof cache_root, "/tmp/mi-test-runtime-XXXXXX");
    if (!mkdtemp(cache_root)) { diag("mkdtemp failed"); return 1; }
    snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/nested/cache", cache_root);
    ctx->threads = 2;
    char err[2048];

    /* 1. compile, creating the nested cache directory */
    RtModule *m = rt_compile(ctx, ADD_SRC);
    if (!ok(m != NULL, "compile the pointwise module")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (!m) return done_testing();
    ok(!m->cache_hit, "first compile is a cache miss");
    ok(m->compile_s > 0, "compile time recorded (%.3f s)", m->compile_s);
    is_int(m->nsyms, 2, "two size symbols");
    is_str(m->sym_names[0], "s77", "first symbol");
    is_int(m->num_outputs, 1, "one output");
    ok(access(m->so_path, R_OK) == 0, "shared object in the cache");
    ok(strstr(m->so_path, cache_root) == m->so_path, "cache under ctx->cache_dir");
    is_int((int)strlen(m->key), 16, "64-bit hex key");

    /* 2. second compile of the same source: loaded from the cache, cc not run */
    RtModule *m2 = rt_compile(ctx, ADD_SRC);
    ok(m2 && m2->cache_hit, "second compile is a cache hit");
    ok(m2 && m2->compile_s == 0, "no compiler time on a hit");
    is_str(m2 ? m2->key : NULL, m->key, "same key");
    rt_free(m2);

    /* 3. run with symbols bound from SymInt inputs; values checked */
    Graph *g = parse(ctx, ADD_GRAPH);
    if (!ok(g != NULL, "parse the graph")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (g) {
        IValue in[4] = {{0}};
        in[0].kind = IV_INT; in[0].i = 5;
        in[1].kind = IV_INT; in[1].i = 7;
        in[2].kind = IV_TENSOR; in[2].t = ramp(ctx, 5, 7, 1.0f);
        in[3].kind = IV_TENSOR; in[3].t = ramp(ctx, 5, 7, 0.5f);
        IValue *outs = NULL;
        int nouts = 0;
        double secs = -1;
        int rc = rt_run(ctx, m, g, in, 4, &outs, &nouts, &secs);
        is_int(rc, 0, "rt_run") ;
        if (rc) diag("%s", mi_err_str(ctx, err, sizeof err));
        if (rc == 0) {
            is_int(nouts, 1, "one output value");
            ok(outs[0].kind == IV_TENSOR && outs[0].t->size[0] == 5 && outs[0].t->size[1] == 7, "output shape 5x7");
            int bad = 0;
            for (int i = 0; i < 35; i++) bad += tensor_get_f(outs[0].t, i) != 2.0 * i + 0.5 * i;
            is_int(bad, 0, "a*2+b computed by the module");
            ok(secs >= 0, "call time reported");
            interp_free_outputs(outs, nouts);
        }

        /* 4. against the interpreter */
        StrBuf rep;
        sb_init(&rep);
        rc = rt_check(ctx, m, g, in, 4, 1e-5, 1e-6, &rep);
        is_int(rc, 1, "rt_check agrees with the interpreter");
        if (rc != 1) diag("%s\n%s", rep.s ? rep.s : "", mi_err_str(ctx, err, sizeof err));
        ok(rep.s && strstr(rep.s, "output 0: f32[5, 7] ok max abs err 0"), "report line for output 0");
        ok(rep.s && strstr(rep.s, "interp ") && strstr(rep.s, "compiled "), "report has both times");
        sb_free(&rep);

        /* 5. timing */
        double med = -1, mn = -1;
        rc = rt_time(ctx, m, g, in, 4, 2, 5, &med, &mn);
        ok(rc == 0 && med >= mn && mn >= 0, "rt_time median %.2g s >= min %.2g s", med, mn);
        /* timing with outputs allocated inside each call (like torch.compile's wrapper), and the
         * module still computes the same values afterwards */
        ctx->time_fresh_outputs = true;
        rc = rt_time(ctx, m, g, in, 4, 1, 3, &med, &mn);
        ctx->time_fresh_outputs = false;
        ok(rc == 0 && med >= mn && mn >= 0, "rt_time with fresh outputs: median %.2g s >= min %.2g s", med, mn);
        sb_init(&rep);
        is_int(rt_check(ctx, m, g, in, 4, 1e-5, 1e-6, &rep), 1, "still agrees with the interpreter after fresh-output timing");
        sb_free(&rep);

        /* 6. bad inputs: a shape that contradicts the SymInt, and a wrong input count */
        in[0].i = 6;
        rc = rt_run(ctx, m, g, in, 4, &outs, &nouts, NULL);
        ok(rc == -1 && strstr(ctx->err.msg, "size of dim 0 is 5"), "shape mismatch reported: %s", ctx->err.msg);
        in[0].i = 5;
        rc = rt_run(ctx, m, g, in, 3, &outs, &nouts, NULL);
        ok(rc == -1 && strstr(ctx->err.msg, "takes 4 inputs, got 3"), "input count reported: %s", ctx->err.msg);
        /* 7. a module asking for a symbol no input binds */
        RtModule *ms = rt_compile(ctx, "#include <stdint.h>\nconst char *mi_sym_names[] = {\"s99\", 0};\n"
                                       "const int mi_num_outputs = 1;\n"
                                       "int call(void *const *i, void *const *o, const int64_t *s) { return 0; }\n");
        rc = ms ? rt_run(ctx, ms, g, in, 4, &outs, &nouts, NULL) : 0;
        ok(rc == -1 && strstr(ctx->err.msg, "size symbol 's99'"), "unbound symbol reported: %s", ctx->err.msg);
        rt_free(ms);
        for (int i = 0; i < 4; i++) ivalue_clear(&in[i]);
        graph_free(g);
    } else {
        skip(12, "fx_parse unavailable");
    }

    /* 8. strided placeholder: a contiguous input is restaged with the meta's strides (1, 4);
     *    a None output gets a NULL pointer */
    RtModule *mt = rt_compile(ctx, TRANSPOSED_SRC);
    Graph *gt = parse(ctx, TRANSPOSED_GRAPH);
    if (!ok(mt && gt, "transposed module and graph")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (mt && gt) {
        IValue in[2] = {{0}};
        in[0].kind = IV_TENSOR; in[0].t = ramp(ctx, 4, 3, 1.0f);
        in[1].kind = IV_TENSOR; in[1].t = ramp(ctx, 4, 3, 100.0f);   /* logical [i][j] = 100*(3i+j) */
        IValue *outs = NULL;
        int nouts = 0;
        int rc = rt_run(ctx, mt, gt, in, 2, &outs, &nouts, NULL);
        is_int(rc, 0, "run with restaged input");
        if (rc) diag("%s", mi_err_str(ctx, err, sizeof err));
        if (rc == 0) {
            is_int(nouts, 2, "two outputs");
            int bad = 0;
            for (int i = 0; i < 12; i++) bad += tensor_get_f(outs[0].t, i) != 101.0 * i;
            is_int(bad, 0, "values read through the expected strides");
            is_int(outs[1].kind, IV_NONE, "None output");
            interp_free_outputs(outs, nouts);
        }
        for (int i = 0; i < 2; i++) ivalue_clear(&in[i]);
    } else {
        skip(4, "no transposed module");
    }
    graph_free(gt);
    rt_free(mt);

    /* 9. compiler error: message carries cc's stderr and the cached source path */
    RtModule *bad = rt_compile(ctx, "int call(void) { return undeclared_thing; }\n");
    ok(bad == NULL, "compile error fails");
    ok(strstr(ctx->err.msg, "C compiler failed"), "says the compiler failed");
    if (!ok(strstr(ctx->err.msg, "undeclared_thing"), "carries cc's message")) diag("%s", ctx->err.msg);
    ok(strstr(ctx->err.msg, "\nmi_") != NULL, "cc's lines name the file without the cache directory");
    ok(strstr(ctx->err.file, ".c") && strstr(ctx->err.file, cache_root), "error names the source: %s", ctx->err.file);
    rt_free(bad);

    /* 10. missing export */
    bad = rt_compile(ctx, "#include <stdint.h>\nconst char *mi_sym_names[] = {0};\n"
                          "int call(void *const *i, void *const *o, const int64_t *s) { return 0; }\n");
    ok(bad == NULL && strstr(ctx->err.msg, "does not export 'mi_num_outputs'"), "missing symbol: %s", ctx->err.msg);
    rt_free(bad);

    /* 11. a corrupt cached .so is rebuilt, not trusted */
    const char *tiny = "#include <stdint.h>\nconst char *mi_sym_names[] = {0};\nconst int mi_num_outputs = 0;\n"
                       "int call(void *const *i, void *const *o, const int64_t *s) { return 0; }\n";
    RtModule *t1 = rt_compile(ctx, tiny);
    char so[1024] = "";
    if (t1) snprintf(so, sizeof so, "%s", t1->so_path);
    rt_free(t1);
    FILE *f = so[0] ? fopen(so, "w") : NULL;
    if (f) { fputs("not an ELF file", f); fclose(f); }
    RtModule *t2 = rt_compile(ctx, tiny);
    ok(t2 && !t2->cache_hit && t2->call, "corrupt cache entry rebuilt");
    if (!t2) diag("%s", mi_err_str(ctx, err, sizeof err));
    rt_free(t2);

    /* 12. default cache directory from $MINDUCTOR_CACHE */
    MiCtx *c2 = mi_ctx_new();
    char envdir[400], got[600];
    snprintf(envdir, sizeof envdir, "%s/envcache", cache_root);
    setenv("MINDUCTOR_CACHE", envdir, 1);
    is_str(rt_cache_dir(c2, got, sizeof got), envdir, "$MINDUCTOR_CACHE honoured");
    unsetenv("MINDUCTOR_CACHE");
    mi_ctx_free(c2);

    /* 13. a graph input returned as it is: no copy kernel, the module says which input each
     *     output is, and the caller gets that input tensor back (Inductor's `return (buf0, w)`) */
    Graph *ga = parse(ctx, ALIAS_GRAPH);
    CompiledFx cf;
    compile_fx_init(&cf, ga);
    if (!ok(ga && compile_fx(ctx, &cf, CFX_BUILT) == 0, "aliasing graph compiles")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (cf.done == CFX_BUILT) {
        is_int(cf.sched->nkernels, 1, "one kernel: the add, no clone of w");
        ok(strstr(cf.code, "const int mi_output_alias[] = {-1, 1, 1, -1};") != NULL, "alias table in the module");
        IValue in[2] = {{0}};
        in[0].kind = IV_TENSOR; in[0].t = ramp(ctx, 4, 3, 1.0f);
        in[1].kind = IV_TENSOR; in[1].t = ramp(ctx, 4, 3, 10.0f);
        IValue *outs = NULL;
        int nouts = 0;
        int rc = rt_run(ctx, cf.mod, ga, in, 2, &outs, &nouts, NULL);
        if (!ok(rc == 0, "aliasing module runs")) diag("%s", mi_err_str(ctx, err, sizeof err));
        if (rc == 0) {
            ok(outs[1].t == in[1].t && outs[2].t == in[1].t, "outputs 1 and 2 are the caller's w");
            is_int((int)tensor_get_f(outs[0].t, 5), 55, "add computed");
            interp_free_outputs(outs, nouts);
        }
        is_int(rt_check(ctx, cf.mod, ga, in, 2, 1e-5, 1e-5, NULL), 1, "agrees with the interpreter");
        for (int i = 0; i < 2; i++) ivalue_clear(&in[i]);
    } else skip(5, "no aliasing module");
    compile_fx_free(&cf);
    graph_free(ga);

    /* 14. outputs returned as views, no copy kernel: the module names each one's storage
     *     (mi_output_view) and the caller builds the view over it */
    Graph *gv = parse(ctx, VIEW_GRAPH);
    compile_fx_init(&cf, gv);
    if (!ok(gv && compile_fx(ctx, &cf, CFX_BUILT) == 0, "view-returning graph compiles")) diag("%s", mi_err_str(ctx, err, sizeof err));
    if (cf.done == CFX_BUILT) {
        is_int(cf.sched->nkernels, 1, "one kernel (add and mul), no copy of a returned view");
        ok(strstr(cf.code, "case 1: v[0] = -1; v[1] = 12LL; v[2] = 0LL; v[3] = 12LL; v[4] = 1LL; return 1;") != NULL,
           "output 1 is a [12] view of input w");
        ok(strstr(cf.code, "case 2: v[0] = 0; v[1] = 12LL; v[2] = 0LL; v[3] = 3LL; v[4] = 4LL; v[5] = 1LL; v[6] = 3LL; return 1;") != NULL,
           "output 2 is a transposed view of output 0's buffer");
        ok(strstr(cf.code, "case 3: v[0] = 3; v[1] = 12LL; v[2] = 3LL;") != NULL, "output 3 is rows 1..2 of a 12-element buffer, offset 3");
        IValue in[2] = {{0}};
        in[0].kind = IV_TENSOR; in[0].t = ramp(ctx, 4, 3, 1.0f);
        in[1].kind = IV_TENSOR; in[1].t = ramp(ctx, 4, 3, 10.0f);
        IValue *outs = NULL;
        int nouts = 0;
        int rc = rt_run(ctx, cf.mod, gv, in, 2, &outs, &nouts, NULL);
        if (!ok(rc == 0, "view-returning module runs")) diag("%s", mi_err_str(ctx, err, sizeof err));
        if (rc == 0) {
            ok(outs[1].t->storage == in[1].t->storage && outs[1].t->ndim == 1 && outs[1].t->size[0] == 12, "output 1 shares w's storage");
            ok(outs[2].t->storage == outs[0].t->storage && outs[2].t->stride[0] == 1 && outs[2].t->stride[1] == 3,
               "output 2 shares output 0's storage, transposed");
            is_int((int)tensor_get_f(outs[2].t, 1), 33, "permute[0][1] = add[1][0] = 3 + 30");
            is_int((int)outs[3].t->offset, 3, "output 3 starts at element 3 of its storage");
            is_int((int)tensor_get_f(outs[3].t, 0), 6, "slice[0][0] = 2 * x[1][0]");
            interp_free_outputs(outs, nouts);
        }
        is_int(rt_check(ctx, cf.mod, gv, in, 2, 1e-5, 1e-5, NULL), 1, "agrees with the interpreter");
        for (int i = 0; i < 2; i++) ivalue_clear(&in[i]);
    } else skip(10, "no view-returning module");
    compile_fx_free(&cf);
    graph_free(gv);

    rt_free(m);
    mi_ctx_free(ctx);
    rm_rf(cache_root);
    return done_testing();
}
