/* test_hop11.c — higher_order.while_loop (cuda_while_loop of the eleventh batch of unseen
 * models), on computed values:
 *   - the logged post-grad graph (tests/fixtures/hop/while_loop.py) loads and prints back exactly;
 *   - the interpreter (while_loop_dense) against hand values for 0 (n = 0, n < 0), 1, 3 and 7
 *     trips, the untaken loop's results cloned, additional inputs, a cond_fn that is not a bool;
 *   - the lowered IR (Inductor's ir.WhileLoop: each subgraph its own module) run by the IR
 *     interpreter, the compiled C module (a host loop around the subgraph functions) and the
 *     CUDA source (nvcc) against the interpreter;
 *   - Inductor's kernel count on the GPU: 1 (the zeros) + 1 (cond_fn) + 2 (body_fn) = 4;
 *   - the shell: enter / leave the two subgraphs, `sched` naming cond_fn and body_fn;
 *   - the bound on runaway loops (MiLimits.while_iterations; PyTorch has none): a cond_fn that
 *     never turns False stops in the interpreter, the IR interpreter and the compiled C module
 *     with the error naming the limit, a loop of exactly the limit's trips runs; a failure code
 *     of body_fn's function (ZeroDivisionError) reaches the runtime's message through the loop. */
#include "tap.h"
#include "compile_fx/compile_fx.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "tests/support/compiled_check.h"
#include "tests/support/shell_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

static const char *FIXTURE = "tests/fixtures/hop/while_loop.py";

static Graph *logged(void) {
    Graph *g = graph_load_file(ctx, FIXTURE);
    if (g) ops_resolve_graph(g);
    else { diag("%s", ctx->err.msg); mi_clear_err(ctx); }
    return g;
}

static Tensor *x45(void) {
    Tensor *x = tensor_new(ctx, DT_F32, 2, (int64_t[]){4, 5});
    for (int i = 0; i < 20; i++) tensor_set_f(x, i, sin(0.7 * i + 0.3) * 2.5);
    return x;
}

static Tensor *scalar_i64(int64_t v) {
    Tensor *t = tensor_new(ctx, DT_I64, 0, NULL);
    tensor_set_f(t, 0, (double)v);
    return t;
}

static void test_text(void) {
    Graph *g = logged();
    if (!ok(g != NULL, "the logged while_loop graph loads")) return;
    char *txt = fx_print(g, true), *file = NULL;
    FILE *f = fopen(FIXTURE, "rb");
    if (f) {
        file = calloc(1, 1 << 16);
        size_t n = fread(file, 1, (1 << 16) - 1, f);
        file[n] = 0;
        fclose(f);
    }
    ok(txt && file && !strcmp(txt, file), "it prints back exactly as PyTorch printed it");
    free(txt);
    free(file);
    graph_free(g);
}

/* (i, v) from (0, x) with bound n: i = max(n, 0) and v = f^i(x), f(v) = v * 0.5 + sin(v) in f32. */
static void test_values(int64_t n) {
    Graph *g = logged();
    if (!g) { ok(0, "graph"); return; }
    Tensor *x = x45(), *tn = scalar_i64(n);
    int no = 0;
    IValue *r = cc_interp(ctx, g, (Tensor *[]){x, tn}, 2, &no);
    int64_t trips = n > 0 ? n : 0;
    bool shape = r && no == 2 && r[0].kind == IV_TENSOR && r[1].kind == IV_TENSOR && r[0].t->ndim == 0 && r[0].t->dtype == DT_I64 &&
                 r[1].t->dtype == DT_F32 && tensor_numel(r[1].t) == 20;
    ok(shape && tensor_get_f(r[0].t, 0) == (double)trips, "n = %lld: the counter comes out as %lld", (long long)n, (long long)trips);
    double worst = shape ? 0 : INFINITY;
    for (int i = 0; i < 20 && shape; i++) {
        float v = (float)tensor_get_f(x, i);
        for (int64_t k = 0; k < trips; k++) v = v * 0.5f + sinf(v);
        worst = fmax(worst, fabs((double)v - tensor_get_f(r[1].t, i)));
    }
    ok(worst < 1e-6 * (1 + trips), "n = %lld: v = f^%lld(x), f(v) = v * 0.5 + sin(v) (max abs err %.3g)", (long long)n, (long long)trips, worst);
    if (trips == 0 && shape) ok(r[1].t != x && worst == 0, "n = %lld: the untaken loop gives a clone of x, equal to it", (long long)n);
    if (r) interp_free_outputs(r, no);
    ok(cc_c_agrees(ctx, g, (Tensor *[]){x, tn}, 2, 1e-6), "n = %lld: compiled C (host loop) = interpreter", (long long)n);
    tensor_unref(x);
    tensor_unref(tn);
    graph_free(g);
}

/* The lowered module run by the IR interpreter agrees with the graph interpreter. */
static void test_ir(void) {
    Graph *g = logged();
    if (!g) { ok(0, "graph"); return; }
    Tensor *x = x45(), *tn = scalar_i64(3);
    IrModule *m = ir_lower(ctx, g);
    if (!m) diag("%s", ctx->err.msg);
    IValue in[2] = {{.kind = IV_TENSOR, .t = x}, {.kind = IV_TENSOR, .t = tn}}, *outs = NULL;
    int nouts = 0, no = 0;
    int rc = m ? ir_interp_run(ctx, m, in, 2, &outs, &nouts) : -1;
    if (rc) diag("%s", ctx->err.msg);
    IValue *r = cc_interp(ctx, g, (Tensor *[]){x, tn}, 2, &no);
    double worst = !rc && r && nouts == 2 && no == 2 ? 0 : INFINITY;
    for (int k = 0; k < 2 && worst < INFINITY; k++)
        for (int64_t i = 0; i < tensor_numel(r[k].t); i++) worst = fmax(worst, fabs(tensor_get_f(outs[k].t, i) - tensor_get_f(r[k].t, i)));
    ok(worst < 1e-6, "IR interpreter (cond_fn / body_fn modules in turn) = graph interpreter (max abs err %.3g)", worst);
    char *txt = m ? ir_print(m) : NULL;
    /* op1 / buf1: the loop takes the zeros buffer itself (realize_input), as Inductor's
     * buf0 = zeros, buf1 = the while_loop's outputs */
    ok(txt && strstr(txt, "op1.node.kernel = torch.ops.higher_order.while_loop\n") &&
       strstr(txt, "op1.node.subgraphs = ['while_loop_cond_graph_0', 'while_loop_body_graph_0']"), "ir names the op and its subgraphs");
    free(txt);
    if (r) interp_free_outputs(r, no);
    if (outs) interp_free_outputs(outs, nouts);
    ir_free(m);
    mi_clear_err(ctx);
    tensor_unref(x);
    tensor_unref(tn);
    graph_free(g);
}

/* Kernels on the GPU, counted as survey_kernels.sh counts Inductor's (every triton_* definition
 * of the output code, the subgraphs' included; extern calls not). */
static int generated(const Schedule *s) {
    int n = 0;
    for (int k = 0; k < s->nkernels; k++) n += !s->kernels[k].is_extern;
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) n += generated(s->branches[i].s[k]);
    return n;
}

static void test_kernels(void) {
    Graph *g = logged();
    if (!g) { ok(0, "graph"); return; }
    CompiledFx c;
    compile_fx_init(&c, g);
    ctx->target = MI_DEV_CUDA;
    int rc = compile_fx(ctx, &c, CFX_SCHEDULED);
    ctx->target = MI_DEV_CPU;
    if (rc < 0) diag("%s", ctx->err.msg);
    ok(rc == 0 && c.sched->nbranches == 1, "the GPU schedule has one while_loop with its two subgraphs");
    if (rc == 0 && c.sched->nbranches == 1) {
        const SchedBranch *b = &c.sched->branches[0];
        is_int(generated(b->s[0]), 1, "cond_fn: one kernel (lt), as Inductor's triton_poi_fused_lt_zeros_1");
        is_int(generated(b->s[1]), 2, "body_fn: two kernels (i + 1; v * 0.5 + sin(v)), sizes 1 and 20 do not fuse");
        is_int(generated(c.sched), 4, "4 kernels in all, as Inductor generated for cuda_while_loop");
        is_str(b->fn[0], "while_loop_cond_graph_0", "cond_fn's function is named after its subgraph");
    }
    mi_clear_err(ctx);
    compile_fx_free(&c);
    CC_NVCC_POINT(ctx, "while_loop", g);
    graph_free(g);
}

/* A loop with an additional input: acc = acc * w + 1 while i < n (the body ignores n, cond_fn w). */
static const char *ACC_FX =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, w: \"f32[3][1]cpu\", n: \"i64[][]cpu\"):\n"
    "        zero: \"i64[][]cpu\" = torch.ops.aten.full.default([], 0, dtype = torch.int64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
    "        acc: \"f32[3][1]cpu\" = torch.ops.aten.full.default([3], 0.5, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
    "        while_loop_cond_graph_0 = self.while_loop_cond_graph_0\n"
    "        while_loop_body_graph_0 = self.while_loop_body_graph_0\n"
    "        while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (zero, acc), (w, n));  zero = acc = w = n = None\n"
    "        getitem: \"i64[][]cpu\" = while_loop[0]\n"
    "        getitem_1: \"f32[3][1]cpu\" = while_loop[1];  while_loop = None\n"
    "        return (getitem, getitem_1)\n"
    "\n"
    "    class while_loop_cond_graph_0(torch.nn.Module):\n"
    "        def forward(self, arg0_1: \"i64[][]cpu\", arg1_1: \"f32[3][1]cpu\", arg2_1: \"f32[3][1]cpu\", arg3_1: \"i64[][]cpu\"):\n"
    "            lt: \"COND\" = torch.ops.aten.OP(arg0_1, arg3_1);  arg0_1 = arg3_1 = None\n"
    "            return lt\n"
    "\n"
    "    class while_loop_body_graph_0(torch.nn.Module):\n"
    "        def forward(self, arg0_1: \"i64[][]cpu\", arg1_1: \"f32[3][1]cpu\", arg2_1: \"f32[3][1]cpu\", arg3_1: \"i64[][]cpu\"):\n"
    "            add: \"i64[][]cpu\" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None\n"
    "            mul: \"f32[3][1]cpu\" = torch.ops.aten.mul.Tensor(arg1_1, arg2_1);  arg1_1 = arg2_1 = None\n"
    "            add_1: \"f32[3][1]cpu\" = torch.ops.aten.add.Tensor(mul, 1);  mul = None\n"
    "            return (add, add_1)\n";

static Graph *acc_graph(const char *cond_meta, const char *op) {
    StrBuf b;
    sb_init(&b);
    const char *p = ACC_FX, *c = strstr(p, "COND"), *o = strstr(p, "OP(");
    sb_printf(&b, "%.*s%s%.*s%s%s", (int)(c - p), p, cond_meta, (int)(o - (c + 4)), c + 4, op, o + 2);
    Graph *g = cc_parsed(ctx, b.s, "hop11.py");
    sb_free(&b);
    return g;
}

static void test_additional(void) {
    Graph *g = acc_graph("b8[][]cpu", "lt.Tensor");
    if (!ok(g != NULL, "a loop with additional inputs parses")) return;
    double wv[3] = {0.5, -1.25, 2.0};
    Tensor *w = cc_tensor(ctx, DT_F32, 1, (int64_t[]){3}, wv);
    for (int64_t n = 0; n <= 4; n += 2) {
        Tensor *tn = scalar_i64(n);
        int no = 0;
        IValue *r = cc_interp(ctx, g, (Tensor *[]){w, tn}, 2, &no);
        double worst = r && no == 2 ? fabs(tensor_get_f(r[0].t, 0) - (double)n) : INFINITY;
        for (int i = 0; i < 3 && r && no == 2; i++) {
            double a = 0.5;
            for (int64_t k = 0; k < n; k++) a = a * wv[i] + 1;
            worst = fmax(worst, fabs(a - tensor_get_f(r[1].t, i)));
        }
        ok(worst == 0, "n = %lld: i = n and acc = acc * w + 1 n times from 0.5 (max abs err %.3g)", (long long)n, worst);
        if (r) interp_free_outputs(r, no);
        ok(cc_c_agrees(ctx, g, (Tensor *[]){w, tn}, 2, 0), "n = %lld: compiled C = interpreter exactly", (long long)n);
        tensor_unref(tn);
    }
    graph_free(g);
    /* cond_fn giving an integer: while_loop_dense's _validate_cond_output refuses it */
    g = acc_graph("i64[][]cpu", "sub.Tensor");
    Tensor *tn = scalar_i64(2);
    int no = 0;
    IValue in[2] = {{.kind = IV_TENSOR, .t = w}, {.kind = IV_TENSOR, .t = tn}}, *r = NULL;
    if (g && interp_run(ctx, g, in, 2, &r, &no) != 0) r = NULL;
    char msg[1200];
    mi_err_str(ctx, msg, sizeof msg);
    ok(!r && strstr(msg, "cond_fn must return a boolean scalar tensor or a boolean"), "an i64 cond_fn result is an error: %s", msg);
    if (r) interp_free_outputs(r, no);
    mi_clear_err(ctx);
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    mi_err_str(ctx, msg, sizeof msg);
    ok(!m && strstr(msg, "hop11.py:") && strstr(msg, "while_loop: cond_fn must return a boolean scalar tensor"), "and a lowering error: %s", msg);
    ir_free(m);
    mi_clear_err(ctx);
    tensor_unref(tn);
    tensor_unref(w);
    graph_free(g);
}

/* lint: body_fn's results against the carried inputs (check_meta_consistency) */
static void test_lint(void) {
    Graph *g = acc_graph("b8[][]cpu", "lt.Tensor");
    StrBuf r;
    sb_init(&r);
    ok(g && graph_lint(ctx, g, &r) == 0, "the loop lints clean");
    sb_free(&r);
    graph_free(g);
    g = acc_graph("b8[][]cpu", "lt.Tensor");
    Node *o = g ? graph_output(graph_subgraph(g, "while_loop_body_graph_0")) : NULL;
    if (o) {   /* return (add_1, add): the results swapped */
        Value t = o->args[0].list.items[0];
        o->args[0].list.items[0] = o->args[0].list.items[1];
        o->args[0].list.items[1] = t;
    }
    sb_init(&r);
    int np = g ? graph_lint(ctx, g, &r) : 0;
    ok(np > 0 && r.s && strstr(r.s, "body_fn result 0 is f32[3][1]cpu but carried input 'zero' is i64[][]cpu"),
       "lint: body_fn's result 0 (f32[3]) does not match carried input 0 (i64[])");
    if (np <= 0 || !r.s) diag("lint gave %d problems", np);
    sb_free(&r);
    graph_free(g);
    mi_clear_err(ctx);
}

/* The three runs of g on (w, n): the interpreter, the IR interpreter, the compiled C module.
 * Each error message into msg[k] ("" when it ran). */
static void three_runs(Graph *g, Tensor *w, Tensor *tn, char msg[3][1200]) {
    IValue in[2] = {{.kind = IV_TENSOR, .t = w}, {.kind = IV_TENSOR, .t = tn}}, *r = NULL;
    int no = 0;
    for (int k = 0; k < 3; k++) msg[k][0] = 0;
    if (interp_run(ctx, g, in, 2, &r, &no) != 0) mi_err_str(ctx, msg[0], 1200);
    else interp_free_outputs(r, no);
    mi_clear_err(ctx);
    IrModule *m = ir_lower(ctx, g);
    IValue in2[2] = {{.kind = IV_TENSOR, .t = tensor_clone(ctx, w)}, {.kind = IV_TENSOR, .t = tensor_clone(ctx, tn)}};
    if (!m || ir_interp_run(ctx, m, in2, 2, &r, &no) != 0) mi_err_str(ctx, msg[1], 1200);
    else interp_free_outputs(r, no);
    mi_clear_err(ctx);
    ir_free(m);
    CompiledFx c;
    compile_fx_init(&c, g);
    if (compile_fx(ctx, &c, CFX_BUILT) != 0 || rt_run(ctx, c.mod, g, in2, 2, &r, &no, NULL) != 0) mi_err_str(ctx, msg[2], 1200);
    else interp_free_outputs(r, no);
    mi_clear_err(ctx);
    compile_fx_free(&c);
    tensor_unref(in2[0].t);
    tensor_unref(in2[1].t);
}

/* while i >= n: i + 1 (n = -1: cond_fn never turns False). PyTorch loops forever; here each
 * run stops after limit while_iterations trips with the error naming it. */
static void test_bound(void) {
    Graph *g = acc_graph("b8[][]cpu", "ge.Tensor");
    if (!ok(g != NULL, "a loop whose cond_fn never turns False parses")) return;
    Tensor *w = cc_tensor(ctx, DT_F32, 1, (int64_t[]){3}, (double[]){0.5, 0.25, -0.5}), *tn = scalar_i64(-1);
    is_int(ctx->limits.while_iterations, 1000000, "the default bound: 1000000 trips of body_fn");
    ok(mi_limit_set(ctx, "while_iterations", 0) < 0 && strstr(ctx->err.msg, "limit while_iterations must be between 1 and 2000000000, got 0"),
       "set limit while_iterations 0 is refused: %s", ctx->err.msg);
    mi_clear_err(ctx);
    is_int(mi_limit_set(ctx, "while_iterations", 40), 0, "set limit while_iterations 40");
    char msg[3][1200];
    three_runs(g, w, tn, msg);
    ok(strstr(msg[0], "hop11.py:7: node 'while_loop' (higher_order.while_loop): cond_fn 'while_loop_cond_graph_0' still gives True "
                      "after 40 iterations of body_fn 'while_loop_body_graph_0' (limit while_iterations = 40; raise it with "
                      "'set limit while_iterations N')") != NULL, "interpreter: %s", msg[0]);
    ok(strstr(msg[1], "IR interpreter: while_loop 'buf2': cond_fn 'while_loop_cond_graph_0' still gives True after 40 iterations "
                      "of body_fn 'while_loop_body_graph_0' (limit while_iterations = 40; raise it with 'set limit while_iterations N')") != NULL,
       "IR interpreter: %s", msg[1]);
    ok(strstr(msg[2], "compiled module: while_loop 'buf2': cond_fn 'while_loop_cond_graph_0' still gives True after 40 iterations "
                      "of body_fn 'while_loop_body_graph_0' (limit while_iterations = 40; raise it with 'set limit while_iterations N', "
                      "when generated)") != NULL, "compiled C: %s", msg[2]);
    graph_free(g);
    /* while i < n with n = 40: exactly the limit's trips run; n = 41 is one too many */
    g = acc_graph("b8[][]cpu", "lt.Tensor");
    tensor_unref(tn);
    tn = scalar_i64(40);
    three_runs(g, w, tn, msg);
    ok(!msg[0][0] && !msg[1][0] && !msg[2][0], "n = 40 with the limit 40: all three run (%s%s%s)", msg[0], msg[1], msg[2]);
    ok(cc_c_agrees(ctx, g, (Tensor *[]){w, tn}, 2, 0), "and the compiled C agrees with the interpreter");
    tensor_unref(tn);
    tn = scalar_i64(41);
    three_runs(g, w, tn, msg);
    ok(strstr(msg[0], "after 40 iterations") && strstr(msg[1], "after 40 iterations") && strstr(msg[2], "after 40 iterations"),
       "n = 41: all three stop after 40 iterations");
    mi_limit_set(ctx, "while_iterations", 1000000);
    graph_free(g);
    tensor_unref(tn);
    tensor_unref(w);
}

/* body_fn's i64 remainder n % i with i = 0 on the first trip: ATen's ZeroDivisionError in the
 * interpreter (the IR interpreter, in doubles, does not check integer divisors), and in the compiled module the kernel's MI_ZERO_DIV passes out of body_fn's
 * function through the host loop to the runtime's message (it was "compiled module returned 1").
 * tests/fixtures/hop/while_body_zero_div.py (also a fuzz_exec seed). */
static void test_body_error(void) {
    Graph *g = graph_load_file(ctx, "tests/fixtures/hop/while_body_zero_div.py");
    if (g) ops_resolve_graph(g);
    else diag("%s", ctx->err.msg);
    if (!ok(g != NULL, "a loop whose body_fn takes n %% i parses")) return;
    Tensor *w = cc_tensor(ctx, DT_F32, 1, (int64_t[]){3}, (double[]){0.5, 0.25, -0.5}), *tn = scalar_i64(3);
    char msg[3][1200];
    three_runs(g, w, tn, msg);
    ok(strstr(msg[0], "ZeroDivisionError") != NULL, "interpreter: %s", msg[0]);
    ok(strstr(msg[2], "compiled module: kernel '") && strstr(msg[2], "': ZeroDivisionError: an integer division, remainder or fmod by zero"),
       "compiled C: %s", msg[2]);
    graph_free(g);
    tensor_unref(tn);
    tensor_unref(w);
}

static void test_shell(void) {
    ShellEnv env;
    if (sh_init(&env, "minductor_h11XXXXXX") < 0) return;
    ShResult res = sh_run(&env, "-q -k", "load tests/fixtures/hop/while_loop.py; enter nope; enter while_loop_body_graph_0; graph; leave; "
                                         "enter while_loop_cond_graph_0; leave; set device cuda; sched", NULL);
    const char *out = res.out ? res.out : "";
    ok(strstr(out, "error: no subgraph 'nope' here (subgraphs: while_loop_cond_graph_0, while_loop_body_graph_0)") != NULL,
       "enter names the loop's two subgraphs");
    ok(strstr(out, "in subgraph while_loop_body_graph_0: 8 nodes (3 inputs, 4 ops)") != NULL, "enter body_fn says where it is");
    ok(strstr(out, "    class while_loop_body_graph_0(torch.nn.Module):\n        def forward(self, arg0_1: \"i64[][]cuda:0\"") ||
       strstr(out, "class while_loop_body_graph_0(torch.nn.Module):\n    def forward(self, arg0_1: \"i64[][]cuda:0\""),
       "graph prints body_fn");
    ok(strstr(out, "in subgraph while_loop_cond_graph_0: 5 nodes (3 inputs, 1 ops)") != NULL, "enter cond_fn says where it is");
    ok(strstr(out, "at the top-level graph: 9 nodes (2 inputs, 4 ops); subgraphs: while_loop_cond_graph_0 while_loop_body_graph_0") != NULL,
       "leave goes back up");
    ok(strstr(out, "subgraph while_loop_cond_graph_0 (cond_fn of buf1, function while_loop_cond_graph_0): 1 kernel") &&
       strstr(out, "subgraph while_loop_body_graph_0 (body_fn of buf1, function while_loop_body_graph_0): 2 kernels"),
       "sched lists cond_fn's and body_fn's kernels");
    ok(strstr(out, "  extern_while_loop                buf1(op1)  [extern]") != NULL, "the loop's own call is an extern node, not a kernel");
    if (!strstr(out, "body_fn of buf1")) diag("%s", out);
    sh_result_free(&res);
    sh_cleanup(&env);
}

int main(void) {
    ctx = mi_ctx_new();
    test_text();
    for (int64_t n = -2; n <= 7; n++)
        if (n == -2 || n == 0 || n == 1 || n == 3 || n == 7) test_values(n);
    test_ir();
    test_kernels();
    test_additional();
    test_lint();
    test_bound();
    test_body_error();
    test_shell();
    mi_ctx_free(ctx);
    return done_testing();
}
