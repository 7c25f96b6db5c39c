/* test_unseen10.c — what the tenth batch of unseen models needed, each checked on computed values
 * (hand values from PyTorch's definitions, the interpreter, the compiled C module) and on the
 * shell surviving:
 *   - integer remainder / fmod / div(floor|trunc) by zero (cpu_remainder_fmod_floordiv: random
 *     integer inputs are 0, as rand_strided's): ATen's CPU kernels raise ZeroDivisionError
 *     (BinaryOpsKernel.cpp: TORCH_CHECK(b != 0, "ZeroDivisionError")); the interpreter raises it
 *     naming the node, the compiled module reports it naming the kernel instead of dying of
 *     SIGFPE (Inductor's C++ `a / b` traps), and check / exec agree when both sides raise it;
 *   - a 0-d pointwise kernel (cuda_adaptive_pool3d_train: sum + sum of the two adaptive pools'
 *     FallbackKernels) no longer reads vars[-1] of its loop body in the C emitter;
 *   - the runtime's guard (rt_guard.c): a module whose call() faults (SIGSEGV, SIGFPE, inside an
 *     OpenMP region) fails the run with an error; the process, its FP environment and the next
 *     call are intact. */
#define _GNU_SOURCE
#include "tap.h"
#include "compile_fx/compile_fx.h"
#include "ops/interp.h"
#include "runtime/runtime.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"
#include "tests/support/shell_harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)
#define parsed(fx) cc_parsed(ctx, fx, "unseen10.py")

static const char *div_fx =
    "class G(torch.nn.Module):\n"
    "    def forward(self, a: \"i64[6][1]cpu\", b: \"i64[6][1]cpu\", c: \"i32[3][1]cpu\"):\n"
    "        remainder: \"i64[6][1]cpu\" = torch.ops.aten.remainder.Tensor(a, b)\n"
    "        fmod: \"i64[6][1]cpu\" = torch.ops.aten.fmod.Tensor(a, b)\n"
    "        div: \"i64[6][1]cpu\" = torch.ops.aten.div.Tensor_mode(a, b, rounding_mode = 'floor')\n"
    "        div_1: \"i64[6][1]cpu\" = torch.ops.aten.div.Tensor_mode(a, b, rounding_mode = 'trunc')\n"
    "        remainder_1: \"i32[3][1]cpu\" = torch.ops.aten.remainder.Scalar(c, 4)\n"
    "        return (remainder, fmod, div, div_1, remainder_1)\n";

/* the error text of ctx (cleared) into buf */
static const char *take_err(char *buf, size_t n) {
    mi_err_str(ctx, buf, n);
    mi_clear_err(ctx);
    return buf;
}

/* ---- integer division: values, and ZeroDivisionError in the interpreter ---- */
static void test_int_division_interp(void) {
    Graph *g = parsed(div_fx);
    /* python semantics: remainder takes the divisor's sign, fmod the dividend's; floor rounds to
     * -inf, trunc to 0; INT64_MIN / -1 wraps to INT64_MIN (C's a / -1 would trap there) */
    Tensor *a = TD(DT_I64, 1, (int64_t[]){6}, (double[]){-7, 7, -7, 7, 5, (double)INT64_MIN});
    Tensor *b = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, -3, -3, 2, 1, -1});
    Tensor *c = TD(DT_I32, 1, (int64_t[]){3}, (double[]){-5, 6, 9});
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, (Tensor *[]){a, b, c}, 3, &no) : NULL;
    ok(o && no == 5, "the interpreter runs the integer divisions");
    if (o && no == 5) {
        ok(og_values(o[0].t, (double[]){2, -2, -1, 1, 0, 0}, 6, 0), "remainder: the divisor's sign (-7 %% 3 = 2, 7 %% -3 = -2)");
        ok(og_values(o[1].t, (double[]){-1, 1, -1, 1, 0, 0}, 6, 0), "fmod: the dividend's sign (-7 fmod 3 = -1)");
        ok(og_values(o[2].t, (double[]){-3, -3, 2, 3, 5, (double)INT64_MIN}, 6, 0), "div floor: toward -inf; INT64_MIN // -1 wraps");
        ok(og_values(o[3].t, (double[]){-2, -2, 2, 3, 5, (double)INT64_MIN}, 6, 0), "div trunc: toward 0");
        ok(og_values(o[4].t, (double[]){3, 2, 1}, 3, 0), "i32 remainder.Scalar(c, 4): 3, 2, 1");
    } else skip(5, "no outputs");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){a, b, c}, 3, 0), "... the compiled C module (mi_zdiv_* helpers) gives the same, exactly");

    /* a zero divisor: the first integer division (node 'remainder') raises */
    Tensor *z = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, 0, -3, 2, 1, -1});
    IValue in[3] = {{.kind = IV_TENSOR, .t = a}, {.kind = IV_TENSOR, .t = z}, {.kind = IV_TENSOR, .t = c}}, *outs = NULL;
    int nout = 0;
    char e[2048] = "";
    int rc = g ? interp_run(ctx, g, in, 3, &outs, &nout) : 0;
    if (rc == 0 && outs) interp_free_outputs(outs, nout);
    if (rc) take_err(e, sizeof e);
    ok(rc < 0 && strstr(e, "ZeroDivisionError") && strstr(e, "node 'remainder'"),
       "a zero divisor: ZeroDivisionError naming the node (ATen's TORCH_CHECK(b != 0)): %s", e);
    tensor_unref(z);
    tensor_unref(a);
    tensor_unref(b);
    tensor_unref(c);
    graph_free(g);
}

/* ---- the IR interpreter (ir_interp.c): the same values from the lowered IR (the divisions
 * run in int64, not through a double quotient), and a zero divisor an error naming the graph
 * file, the line and node of the buffer (was: 0 or NaN stored, and INT64_MIN / -1 a trap) ---- */
static void test_int_division_ir_interp(void) {
    Graph *g = parsed(div_fx);
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    /* INT64_MIN / -1 wraps (C's a / b would trap there, as on a zero divisor) */
    Tensor *a = TD(DT_I64, 1, (int64_t[]){6}, (double[]){-7, 7, -7, 7, 5, (double)INT64_MIN});
    Tensor *b = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, -3, -3, 2, 1, -1});
    Tensor *c = TD(DT_I32, 1, (int64_t[]){3}, (double[]){-5, 6, 9});
    IValue in[3] = {{.kind = IV_TENSOR, .t = a}, {.kind = IV_TENSOR, .t = b}, {.kind = IV_TENSOR, .t = c}}, *o = NULL;
    int no = 0;
    char e[2048] = "";
    int rc = m ? ir_interp_run(ctx, m, in, 3, &o, &no) : -1;
    if (!ok(rc == 0 && no == 5, "the IR interpreter runs the lowered integer divisions")) diag("%s", take_err(e, sizeof e));
    if (rc == 0 && no == 5) {
        ok(og_values(o[0].t, (double[]){2, -2, -1, 1, 0, 0}, 6, 0), "IR remainder: the divisor's sign");
        ok(og_values(o[1].t, (double[]){-1, 1, -1, 1, 0, 0}, 6, 0), "IR fmod: the dividend's sign");
        ok(og_values(o[2].t, (double[]){-3, -3, 2, 3, 5, (double)INT64_MIN}, 6, 0), "IR div floor: toward -inf; INT64_MIN // -1 wraps");
        ok(og_values(o[3].t, (double[]){-2, -2, 2, 3, 5, (double)INT64_MIN}, 6, 0), "IR div trunc: toward 0");
        ok(og_values(o[4].t, (double[]){3, 2, 1}, 3, 0), "IR i32 remainder.Scalar(c, 4)");
    } else skip(5, "no outputs");
    if (o) interp_free_outputs(o, no);
    o = NULL;
    Tensor *z = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, 0, -3, 2, 1, -1});
    in[1].t = z;
    rc = m ? ir_interp_run(ctx, m, in, 3, &o, &no) : 0;
    if (rc == 0 && o) interp_free_outputs(o, no);
    e[0] = 0;
    if (rc) take_err(e, sizeof e);
    ok(rc < 0 && strstr(e, "unseen10.py:") && strstr(e, "IR interpreter: buffer 'buf") && strstr(e, "(node '") &&
       strstr(e, "ZeroDivisionError: an integer remainder or fmod by zero (ATen's CPU kernels: TORCH_CHECK(b != 0, \"ZeroDivisionError\"))"),
       "a zero divisor in the IR interpreter: ZeroDivisionError naming file, line, buffer and node: %s", e);
    tensor_unref(z);
    tensor_unref(a);
    tensor_unref(b);
    tensor_unref(c);
    ir_free(m);
    graph_free(g);
}

/* ---- the compiled module: a zero divisor is an error naming the kernel, not SIGFPE ---- */
static void test_int_division_compiled(void) {
    Graph *g = parsed(div_fx);
    CompiledFx cf;
    compile_fx_init(&cf, g);
    int rc = g ? compile_fx(ctx, &cf, CFX_BUILT) : -1;
    char e[2048] = "";
    if (!ok(rc == 0, "the module builds")) { diag("%s", take_err(e, sizeof e)); compile_fx_free(&cf); graph_free(g); return; }
    ok(strstr(cf.code, "mi_zdiv_mod(") && strstr(cf.code, "mi_zdiv_floor(") && strstr(cf.code, "mi_zdiv_trunc("),
       "integer fmod / floordiv / truncdiv of values go through the checked helpers");
    Tensor *a = TD(DT_I64, 1, (int64_t[]){6}, (double[]){-7, 7, -7, 7, 5, 1});
    Tensor *z = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, -3, 0, 2, 1, -1});
    Tensor *b = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, -3, -3, 2, 1, -1});
    Tensor *c = TD(DT_I32, 1, (int64_t[]){3}, (double[]){-5, 6, 9});
    IValue in[3] = {{.kind = IV_TENSOR, .t = a}, {.kind = IV_TENSOR, .t = z}, {.kind = IV_TENSOR, .t = c}}, *co = NULL;
    int nc = 0;
    rc = rt_run(ctx, cf.mod, g, in, 3, &co, &nc, NULL);
    if (rc == 0) interp_free_outputs(co, nc);
    else take_err(e, sizeof e);
    ok(rc < 0 && strstr(e, "ZeroDivisionError") && strstr(e, "kernel 'cpp_fused_"),
       "a zero divisor in the compiled module: ZeroDivisionError naming the kernel: %s", e);
    /* the module's flag is reset per call: the next call on good inputs runs */
    in[1].t = b;
    co = NULL;
    rc = rt_run(ctx, cf.mod, g, in, 3, &co, &nc, NULL);
    ok(rc == 0 && nc == 5 && og_values(co[2].t, (double[]){-3, -3, 2, 3, 5, -1}, 6, 0),
       "... and the next call, divisors nonzero, computes floor division (-7 // 3 = -3)");
    if (rc == 0) interp_free_outputs(co, nc);
    else diag("%s", take_err(e, sizeof e));
    tensor_unref(a);
    tensor_unref(z);
    tensor_unref(b);
    tensor_unref(c);
    compile_fx_free(&cf);
    graph_free(g);
}

/* The shell (-q -k) on FX text fx written to a file: `load FILE; inputs random; run; check;
 * exec 1` then `more` commands. r.status -9 (and a skip of nskip points) without a binary. */
static ShResult shell_on(const char *fx, const char *more, int nskip) {
    ShellEnv env;
    ShResult r = {.status = -9};
    const char *cache = getenv("MINDUCTOR_CACHE");   /* sh_init sets it to its temp dir, when unset */
    char keep[1024] = "";
    if (cache) snprintf(keep, sizeof keep, "%s", cache);
    if (sh_init(&env, "minductor_unseen10XXXXXX") < 0) { skip(nskip, "no binary"); return r; }
    char path[256], cmds[1024];
    snprintf(path, sizeof path, "%s/g.py", env.tmpdir);
    FILE *f = fopen(path, "w");
    if (f) { fputs(fx, f); fclose(f); }
    snprintf(cmds, sizeof cmds, "load %s; inputs random; run; check; exec 1%s", path, more);
    r = sh_run(&env, "-q -k", cmds, NULL);
    sh_cleanup(&env);
    if (keep[0]) setenv("MINDUCTOR_CACHE", keep, 1);
    else unsetenv("MINDUCTOR_CACHE");
    return r;
}

/* ---- the shell: random integer inputs are 0; check and exec report, the session goes on ---- */
static void test_shell_survives(void) {
    ShResult r = shell_on(div_fx, "; lower; graph", 4);
    if (r.status == -9) return;
    ok(!r.signaled && r.status == 0, "the shell neither crashes nor fails (status %d, signal %d)", r.status, r.sig);
    ok(sh_has(&r, "check: ok (both raise ZeroDivisionError") && sh_has(&r, "node 'remainder'"),
       "check: the loaded and the current graph both raise ZeroDivisionError at node 'remainder'");
    ok(sh_has(&r, "exec: ok (both raise ZeroDivisionError") && sh_has(&r, "kernel 'cpp_fused_"),
       "exec: the interpreter and the compiled module (naming its kernel) both raise it");
    ok(sh_has(&r, "lowered to") && sh_has(&r, "class G(torch.nn.Module):"), "later commands (lower, graph) still run in the session");
    sh_result_free(&r);
}

/* ---- a 0-d kernel after two FallbackKernels: cuda_adaptive_pool3d_train's forward ---- */
static void test_zero_dim_segment(void) {
    const char *fx =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, primals_1: \"f32[4, 2, 1, 1, 1][2, 1, 1, 1, 1]cuda:0\", primals_2: \"f32[4][1]cuda:0\", primals_3: \"f32[2, 2, 5, 7, 4][280, 140, 28, 4, 1]cuda:0\"):\n"
        "        convolution: \"f32[2, 4, 5, 7, 4][560, 140, 28, 4, 1]cuda:0\" = torch.ops.aten.convolution.default(primals_3, primals_1, primals_2, [1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0], 1);  primals_2 = None\n"
        "        _adaptive_avg_pool3d: \"f32[2, 4, 2, 3, 2][48, 12, 6, 2, 1]cuda:0\" = torch.ops.aten._adaptive_avg_pool3d.default(convolution, [2, 3, 2])\n"
        "        sum_1: \"f32[][]cuda:0\" = torch.ops.aten.sum.default(_adaptive_avg_pool3d);  _adaptive_avg_pool3d = None\n"
        "        adaptive_max_pool3d = torch.ops.aten.adaptive_max_pool3d.default(convolution, [3, 2, 2])\n"
        "        getitem: \"f32[2, 4, 3, 2, 2][48, 12, 4, 2, 1]cuda:0\" = adaptive_max_pool3d[0]\n"
        "        getitem_1: \"i64[2, 4, 3, 2, 2][48, 12, 4, 2, 1]cuda:0\" = adaptive_max_pool3d[1];  adaptive_max_pool3d = None\n"
        "        pow_1: \"f32[2, 4, 3, 2, 2][48, 12, 4, 2, 1]cuda:0\" = torch.ops.aten.pow.Tensor_Scalar(getitem, 2)\n"
        "        sum_2: \"f32[][]cuda:0\" = torch.ops.aten.sum.default(pow_1);  pow_1 = None\n"
        "        add: \"f32[][]cuda:0\" = torch.ops.aten.add.Tensor(sum_1, sum_2);  sum_1 = sum_2 = None\n"
        "        pow_2: \"f32[2, 4, 3, 2, 2][48, 12, 4, 2, 1]cuda:0\" = torch.ops.aten.pow.Tensor_Scalar(getitem, 1.0);  getitem = None\n"
        "        mul: \"f32[2, 4, 3, 2, 2][48, 12, 4, 2, 1]cuda:0\" = torch.ops.aten.mul.Scalar(pow_2, 2.0);  pow_2 = None\n"
        "        return (add, primals_1, primals_3, convolution, getitem_1, mul)\n";
    Graph *g = parsed(fx);
    /* weights 1 (a 1x1x1 conv summing the 2 channels), bias 0, x = i / 100: convolution[n, o, d,
     * h, w] = x[n, 0, d, h, w] + x[n, 1, d, h, w] */
    double w[8], bias[4] = {0}, x[560];
    for (int i = 0; i < 8; i++) w[i] = 1;
    for (int i = 0; i < 560; i++) x[i] = i / 100.0;
    Tensor *tw = TD(DT_F32, 5, (int64_t[]){4, 2, 1, 1, 1}, w), *tb = TD(DT_F32, 1, (int64_t[]){4}, bias);
    Tensor *tx = TD(DT_F32, 5, (int64_t[]){2, 2, 5, 7, 4}, x);
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, (Tensor *[]){tw, tb, tx}, 3, &no) : NULL;
    /* the adaptive max over a window of a conv increasing in every index is its last element, the
     * index of the window end; check one: getitem_1[0, 0, 0, 0, 0] = the window d [0, 2), h [0, 4),
     * w [0, 2): its max at (1, 3, 1) = 1*28 + 3*4 + 1 = 41 */
    ok(o && no == 6 && o[4].kind == IV_TENSOR && tensor_get_i(o[4].t, 0) == 41, "adaptive_max_pool3d's index: the window's last element (41)");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){tw, tb, tx}, 3, 1e-4),
       "the compiled C module (a 0-d kernel: sum_1 + sum_2) agrees with the interpreter");
    tensor_unref(tw);
    tensor_unref(tb);
    tensor_unref(tx);
    graph_free(g);
    /* through the shell, after the passes (where the emitter read the word before the 0-d
     * body's vars: NULL there, so it died of SIGSEGV) */
    ShResult r = shell_on(fx, "", 1);
    if (r.status == -9) return;
    ok(!r.signaled && r.status == 0 && sh_has(&r, "check: ok") && sh_has(&r, "exec: ok"),
       "the shell: load; run; check; exec 1 of the forward: ok (status %d, signal %d)", r.status, r.sig);
    sh_result_free(&r);
}

/* ---- the runtime's guard: a module that faults fails the call, not the process ---- */
static const char *fault_src =
    "#include <signal.h>\n#include <stdint.h>\n#include <omp.h>\n"
    "#if defined(__x86_64__)\n#include <xmmintrin.h>\n#endif\n"
    "const char *mi_sym_names[] = {0};\nconst int mi_num_outputs = 1;\n"
    "int call(void *const *inputs, void *const *outputs, const int64_t *syms) {\n"
    "    (void)syms;\n"
    "    const float *x = inputs[0];\n    float *o = outputs[0];\n"
    "#if defined(__x86_64__)\n"
    "    _mm_setcsr(_mm_getcsr() | 0x8040);   /* flush-to-zero + denormals-are-zero, as call() sets */\n"
    "#endif\n"
    "    if (x[0] == 1) { volatile int *p = 0; *p = 1; }\n"
    "    if (x[0] == 2) raise(SIGFPE);\n"
    "    if (x[0] == 3) {\n"
    "        #pragma omp parallel num_threads(2)\n"
    "        { if (omp_get_thread_num() == 0) { volatile int *p = 0; *p = 1; } }\n"
    "    }\n"
    "    for (int i = 0; i < 4; i++) o[i] = x[i] + 1;\n"
    "    return 0;\n}\n";

static void test_fault_guard(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4][1]cpu\"):\n"
        "        add: \"f32[4][1]cpu\" = torch.ops.aten.add.Tensor(x, 1)\n"
        "        return (add,)\n";
    Graph *g = parsed(fx);
    RtModule *m = g ? rt_compile(ctx, fault_src) : NULL;
    char e[2048] = "";
    if (!ok(m != NULL, "a module whose call() faults on request builds")) { diag("%s", take_err(e, sizeof e)); graph_free(g); return; }
    static const char *const want[] = {"", "stopped by SIGSEGV", "stopped by SIGFPE", "inside an OpenMP parallel region"};
    for (int k = 1; k <= 3; k++) {
        Tensor *x = TD(DT_F32, 1, (int64_t[]){4}, (double[]){k, 5, 6, 7});
        IValue in = {.kind = IV_TENSOR, .t = x}, *o = NULL;
        int no = 0;
        int rc = rt_run(ctx, m, g, &in, 1, &o, &no, NULL);
        if (rc == 0) interp_free_outputs(o, no);
        else take_err(e, sizeof e);
        ok(rc < 0 && strstr(e, want[k]) && strstr(e, "the session goes on"), "call() faulting (%s): an error, the process goes on: %s", want[k], e);
        tensor_unref(x);
    }
    ok(ctx->threads == 1, "after the fault inside a parallel region, later runs use 1 thread");
    /* the calling thread's floating-point environment is the one before the call: a denormal
     * survives (the module set flush-to-zero before faulting) */
    volatile float d = 1e-40f, one = 1.0f;
    ok(d * one != 0.0f, "the floating-point environment is restored (a denormal is no 0)");
    Tensor *x = TD(DT_F32, 1, (int64_t[]){4}, (double[]){0, 5, 6, 7});
    IValue in = {.kind = IV_TENSOR, .t = x}, *o = NULL;
    int no = 0;
    int rc = rt_run(ctx, m, g, &in, 1, &o, &no, NULL);
    ok(rc == 0 && no == 1 && og_values(o[0].t, (double[]){1, 6, 7, 8}, 4, 0), "the same module's next call computes x + 1");
    if (rc == 0) interp_free_outputs(o, no);
    tensor_unref(x);
    rt_free(m);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_int_division_interp();
    test_int_division_ir_interp();
    test_int_division_compiled();
    test_zero_dim_segment();
    test_shell_survives();
    test_fault_guard();   /* last: its fault inside a parallel region leaves an OpenMP team waiting */
    mi_ctx_free(ctx);
    return done_testing();
}
