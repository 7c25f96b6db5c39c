/* test_codegen_fallback.c — FallbackKernels: registry ops with a reference implementation but no
 * lowering where Inductor falls back (sparse embedding, scatter_add on a multi-threaded CPU,
 * native_layer_norm's tuple, cumsum, a random op)
 * lower to a fallback extern buffer, print as Inductor's FallbackKernel / MultiOutput, schedule
 * as unfused extern nodes, compile to C that calls back into minductor (module ABI call_fb),
 * and run in the IR interpreter (also inside cond branches); values are compared with the graph interpreter exactly. Also:
 * call() without the callback table, a run with the wrong graph and an op error fail cleanly, the CUDA backend runs the fallback on the host (explicit copies through call_fb), an op
 * with neither lowering nor reference implementation is still 'unsupported op', and the shell
 * prints the fallback through lower / ir / sched / exec. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/shell_harness.h"
#include "codegen/codegen_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMB "tests/fixtures/codegen/fallback_embedding_gather.py"
#define LND "tests/fixtures/codegen/fallback_layer_norm_div.py"

static bool has(const char *s, const char *pat) { return s && strstr(s, pat) != NULL; }

/* inputs of EMB: weight[16, 10] = r * 10 + c (+ 0.25), ids[4, 6] = (7 * i) % 16, gather index
 * [4, 6, 1] = (3 * i) % 10 */
static void emb_inputs(MiCtx *ctx, IValue *in) {
    int64_t ws[2] = {16, 10}, is[2] = {4, 6}, gs[3] = {4, 6, 1};
    Tensor *w = tensor_new(ctx, DT_F32, 2, ws), *ids = tensor_new(ctx, DT_I64, 2, is), *gi = tensor_new(ctx, DT_I64, 3, gs);
    for (int64_t k = 0; k < 160; k++) tensor_set_f(w, k, (double)k + 0.25 * (double)(k % 3));
    for (int64_t k = 0; k < 24; k++) tensor_set_f(ids, k, (double)((7 * k) % 16));
    for (int64_t k = 0; k < 24; k++) tensor_set_f(gi, k, (double)((3 * k) % 10));
    in[0] = (IValue){.kind = IV_TENSOR, .t = w};
    in[1] = (IValue){.kind = IV_TENSOR, .t = ids};
    in[2] = (IValue){.kind = IV_TENSOR, .t = gi};
}

static void lnd_inputs(MiCtx *ctx, IValue *in) {
    int64_t xs[2] = {6, 10}, vs[1] = {10};
    Tensor *x = tensor_new(ctx, DT_F32, 2, xs), *w = tensor_new(ctx, DT_F32, 1, vs), *b = tensor_new(ctx, DT_F32, 1, vs);
    for (int64_t k = 0; k < 60; k++) tensor_set_f(x, k, (double)((k * 37) % 23) * 0.125 - 1.0);
    for (int64_t k = 0; k < 10; k++) { tensor_set_f(w, k, 0.5 + 0.125 * (double)k); tensor_set_f(b, k, 0.75 + 0.25 * (double)(k % 4)); }
    in[0] = (IValue){.kind = IV_TENSOR, .t = x};
    in[1] = (IValue){.kind = IV_TENSOR, .t = w};
    in[2] = (IValue){.kind = IV_TENSOR, .t = b};
}

/* outputs of module run vs interpreter; `exact` outputs must match bit for bit */
static void compare(const char *what, IValue *want, IValue *got, int n, const bool *exact) {
    for (int j = 0; j < n; j++) {
        CompareResult c = tensor_compare(got[j].t, want[j].t, exact[j] ? 0 : 1e-5, exact[j] ? 0 : 1e-5);
        ok(c.ok, "%s: output %d %s the interpreter (max abs %g)", what, j, exact[j] ? "equals" : "agrees with", c.max_abs);
    }
}

static void run_case(MiCtx *ctx, const char *path, void (*mk)(MiCtx *, IValue *), const bool *exact,
                     const char *const *ir_has, const char *const *src_has) {
    Graph *g = graph_load_file(ctx, path);
    if (!ok(g != NULL, "%s loads", path)) return;
    ops_resolve_graph(g);
    char why[300];
    ok(lowering_supported(g, why, sizeof why), "%s: lowering_supported (fallbacks count)", path);
    IValue in[3], *want = NULL;
    int nwant = 0;
    mk(ctx, in);
    ok(interp_run(ctx, g, in, 3, &want, &nwant) == 0, "%s: graph interpreter runs", path);
    for (int f = 1; f >= 0; f--) {
        ctx->fusion = f;
        char what[200];
        snprintf(what, sizeof what, "%s fusion=%s", strrchr(path, '/') + 1, f ? "on" : "off");
        CgBuild b;
        cg_compile(ctx, g, &b, 0);
        IrModule *m = b.m;
        if (!ok(m != NULL, "%s: lowers", what)) { diag("%s", ctx->err.msg); cg_free(&b); continue; }
        char *ir = ir_print(m);
        for (int i = 0; ir_has[i]; i++) ok(has(ir, ir_has[i]), "%s: IR shows '%s'", what, ir_has[i]);
        free(ir);
        /* IR interpreter */
        IValue *got = NULL;
        int ngot = 0;
        if (ok(ir_interp_run(ctx, m, in, 3, &got, &ngot) == 0 && ngot == nwant, "%s: IR interpreter runs", what))
            compare(what, want, got, nwant, exact);
        interp_free_outputs(got, ngot);
        Schedule *s = b.s;
        ok(s != NULL, "%s: schedules", what);
        int nfb = 0, nfused = 0;
        for (int k = 0; s && k < s->norder; k++) {
            const SchedGroup *gr = &s->groups[s->order[k]];
            if (gr->is_extern && s->nodes[gr->nodes[0]].buf->ext == EXT_FALLBACK) { nfb++; nfused += gr->n > 1; }
        }
        ok(nfb > 0 && nfused == 0, "%s: %d fallback kernels, each alone in its group", what, nfb);
        char *src = b.src;
        ok(src != NULL, "%s: C generated", what);
        for (int i = 0; src_has[i]; i++) ok(has(src, src_has[i]), "%s: C has '%s'", what, src_has[i]);
        ok(!has(src, "minductor.h") && !has(src, "#include \"ir.h\""), "%s: the module includes nothing of minductor", what);
        RtModule *rt = b.rt;
        if (!ok(rt != NULL && rt->call_fb != NULL, "%s: compiles, exports call_fb", what)) diag("%s", ctx->err.msg);
        got = NULL;
        ngot = 0;
        if (rt && ok(rt_run(ctx, rt, g, in, 3, &got, &ngot, NULL) == 0 && ngot == nwant, "%s: runs", what))
            compare(what, want, got, nwant, exact);
        else if (rt) diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        if (rt && f) {
            /* call() without the callback table: MI_FALLBACK_FAILED, nothing crashes */
            void *ip[3] = {in[0].t->storage->data, in[1].t->storage->data, in[2].t->storage->data};
            float scratch[3][256];
            void *op[3] = {scratch[0], scratch[1], scratch[2]};
            ok(rt->call(ip, op, NULL) == 2000, "%s: call() without callbacks returns MI_FALLBACK_FAILED", what);
            /* a module run with another graph: the node is not found, a clear error */
            Graph *other = graph_load_file(ctx, strcmp(path, EMB) == 0 ? LND : EMB);
            IValue oin[3], *oo = NULL;
            int no = 0;
            if (other) {
                ops_resolve_graph(other);
                (strcmp(path, EMB) == 0 ? lnd_inputs : emb_inputs)(ctx, oin);
                int rc = rt_run(ctx, rt, other, oin, 3, &oo, &no, NULL);
                ok(rc < 0 && has(ctx->err.msg, "is not in the graph it was run with"), "%s: a module run with the wrong graph fails: %s", what, ctx->err.msg);
                interp_free_outputs(oo, no);
                for (int i = 0; i < 3; i++) ivalue_clear(&oin[i]);
                graph_free(other);
            }
        }
        /* CUDA backend: the fallback runs on the host, the copies explicit (a host round trip
         * through call_fb; call() has no callback table) */
        if (s) {
            MiDeviceKind t = ctx->target;
            ctx->target = MI_DEV_CUDA;
            char *cu = codegen_cuda(ctx, s);
            ok(cu && has(cu, "runs on the host (C reference)") && has(cu, "cudaMemcpyDeviceToHost") && has(cu, "cudaMemcpyHostToDevice") &&
               has(cu, "MI_CK(cudaStreamSynchronize(mi_st));\n        int mi_fr = 0;") && has(cu, "if (!mi_fr && (!fb || !fb->run || fb->run(fb->ctx, \"") &&
               has(cu, "extern \"C\" int call_fb(void *const *inputs, void *const *outputs, const int64_t *syms, const MiFb *fb)") &&
               has(cu, "    return call_fb(inputs, outputs, syms, NULL);") && has(cu, "rc = mi_launch(g.d_in, g.d_out, syms, 0, fb);"),
               "%s: CUDA runs the fallback on the host (round trip through call_fb)", what);
            free(cu);
            ctx->target = t;
        }
        cg_free(&b);
    }
    interp_free_outputs(want, nwant);
    for (int i = 0; i < 3; i++) ivalue_clear(&in[i]);
    graph_free(g);
}

/* embedding's result is the weight rows, checked directly, not only against the interpreter */
static void embedding_values(MiCtx *ctx) {
    Graph *g = graph_load_file(ctx, EMB);
    if (!g) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    RtModule *rt = b.rt;
    IValue in[3], *got = NULL;
    int ngot = 0;
    emb_inputs(ctx, in);
    if (rt && rt_run(ctx, rt, g, in, 3, &got, &ngot, NULL) == 0) {
        int bad = 0;
        for (int64_t i = 0; i < 24; i++)
            for (int64_t c = 0; c < 10; c++) {
                int64_t r = (7 * i) % 16, k = r * 10 + c;
                if (tensor_get_f(got[0].t, i * 10 + c) != (float)((double)k + 0.25 * (double)(k % 3))) bad++;
            }
        ok(bad == 0, "compiled embedding output is weight[ids] (%d wrong)", bad);
    } else ok(0, "compiled embedding runs: %s", ctx->err.msg);
    interp_free_outputs(got, ngot);
    got = NULL;
    ngot = 0;
    /* the op's own error reaches the caller (and the module frees its buffers: ASan) */
    tensor_set_f(in[1].t, 5, 99);
    ok(rt && rt_run(ctx, rt, g, in, 3, &got, &ngot, NULL) < 0 && has(ctx->err.msg, "embedding") && has(ctx->err.msg, "99"),
       "an out-of-range id fails with the op's error: %s", ctx->err.msg);
    interp_free_outputs(got, ngot);
    for (int i = 0; i < 3; i++) ivalue_clear(&in[i]);
    cg_free(&b);
    graph_free(g);
}

static Graph *parse(MiCtx *ctx, const char *name, const char *fx) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), name, 1);
    if (g) ops_resolve_graph(g);
    return g;
}

/* a random op falls back too: the reference implementation draws from the session seed and the
 * node's name, so the compiled module gives the interpreter's values */
static void random_op(MiCtx *ctx) {
    Graph *g = parse(ctx, "rand.py",
                     "class <lambda>(torch.nn.Module):\n"
                     "    def forward(self, arg0_1: \"f32[5, 7][7, 1]cpu\"):\n"
                     "        rand_like: \"f32[5, 7][7, 1]cpu\" = torch.ops.aten.rand_like.default(arg0_1)\n"
                     "        add: \"f32[5, 7][7, 1]cpu\" = torch.ops.aten.add.Tensor(rand_like, arg0_1)\n"
                     "        return (add,)\n");
    if (!ok(g != NULL, "random graph parses")) return;
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    RtModule *rt = b.rt;
    ok(has(b.src, "torch.ops.aten.rand_like.default"), "rand_like is a FallbackKernel");
    IValue *in = NULL;
    int nin = 0;
    StrBuf rep;
    sb_init(&rep);
    int r = rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0 ? rt_check(ctx, rt, g, in, nin, 0, 0, &rep) : -1;
    ok(r == 1, "compiled rand_like + x equals the interpreter's (same seed, same node)");
    if (r != 1) diag("%s %s", rep.s ? rep.s : "", ctx->err.msg);
    sb_free(&rep);
    interp_free_outputs(in, nin);
    cg_free(&b);
    graph_free(g);
}

/* fallbacks inside cond branches: the module calls back with the node's path
 * ("true_graph_0_cumsum"); both branches taken, each equal to the interpreter */
static void in_cond_branches(MiCtx *ctx) {
    const char *path = "tests/fixtures/codegen/fallback_in_cond_branches.py";
    Graph *g = graph_load_file(ctx, path);
    if (!ok(g != NULL, "%s loads", path)) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    IrModule *m = b.m;
    RtModule *rt = b.rt;
    ok(has(b.src, "fb->run(fb->ctx, \"true_graph_0_cumsum\"") && has(b.src, "fb->run(fb->ctx, \"false_graph_0_cumprod\"") &&
       has(b.src, "csyms0, fb)"), "branch fallbacks are called by path, the table passed down");
    for (int sign = 1; sign >= -1; sign -= 2) {
        int64_t sz[2] = {4, 4};
        IValue in[2];
        for (int i = 0; i < 2; i++) {
            Tensor *t = tensor_new(ctx, DT_F32, 2, sz);
            for (int64_t k = 0; k < 16; k++) tensor_set_f(t, k, sign * (0.125 * (double)(k % 5) + 0.25) + 0.0625 * i);
            in[i] = (IValue){.kind = IV_TENSOR, .t = t};
        }
        StrBuf rep;
        sb_init(&rep);
        int r = rt ? rt_check(ctx, rt, g, in, 2, 0, 0, &rep) : -1;
        ok(r == 1, "cond with fallbacks, %s branch: equals the interpreter", sign > 0 ? "true" : "false");
        if (r != 1) diag("%s %s", rep.s ? rep.s : "", ctx->err.msg);
        sb_free(&rep);
        IValue *got = NULL, *want = NULL;
        int ngot = 0, nwant = 0;
        if (m && ir_interp_run(ctx, m, in, 2, &got, &ngot) == 0 && interp_run(ctx, g, in, 2, &want, &nwant) == 0 && ngot == 2 && nwant == 2)
            ok(tensor_compare(got[1].t, want[1].t, 0, 0).ok, "IR interpreter, %s branch: fallback result equals", sign > 0 ? "true" : "false");
        else ok(0, "IR interpreter runs the cond: %s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        interp_free_outputs(want, nwant);
        for (int i = 0; i < 2; i++) ivalue_clear(&in[i]);
    }
    cg_free(&b);
    graph_free(g);
}

/* an op the registry does not know: still 'unsupported op', naming it */
static void unsupported(MiCtx *ctx) {
    Graph *g = parse(ctx, "bad.py",
                     "class <lambda>(torch.nn.Module):\n"
                     "    def forward(self, arg0_1: \"f32[4][1]cpu\"):\n"
                     "        frob: \"f32[4][1]cpu\" = torch.ops.aten.frobnicate.default(arg0_1)\n"
                     "        return (frob,)\n");
    if (!ok(g != NULL, "graph with an unknown op parses")) return;
    char why[300] = "";
    ok(!lowering_supported(g, why, sizeof why) && has(why, "unsupported op 'aten.frobnicate.default' (node 'frob')"),
       "lowering_supported: %s", why);
    IrModule *m = ir_lower(ctx, g);
    ok(m == NULL && has(ctx->err.msg, "unsupported op 'aten.frobnicate.default'"), "ir_lower: %s", ctx->err.msg);
    ir_free(m);
    graph_free(g);
}

/* the shell: lower; ir; sched; exec show the fallback and check it */
static void shell(void) {
    const char *bin = getenv("MINDUCTOR_BIN");
    if (!bin) bin = "./build/minductor";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "printf 'load %s\\nlower\\nir\\nsched\\nexec\\n' | %s 2>&1", LND, bin);
    int st;
    char *out = sh_pipe(cmd, &st);
    if (!ok(st != -1, "shell starts")) { free(out); return; }
    ok(st == 0, "shell exits 0");
    ok(has(out, "op0: ExternKernelSchedulerNode(FallbackKernel)") && has(out, "buf1: MultiOutput") &&
       has(out, "op0.node.python_kernel_name = aten.native_layer_norm.default"), "shell 'ir' shows the FallbackKernel");
    ok(has(out, "fallback_native_layer_norm") && has(out, "fallback_cumsum"), "shell 'sched' names the fallback kernels");
    ok(has(out, "exec: ok") && has(out, "output 1: f32[6, 1] ok max abs err 0"), "shell 'exec' checks the fallback outputs");
    if (!has(out, "exec: ok")) diag("%s", out);
    free(out);
}

/* an op run for its effect: _linalg_check_errors returns None and raises on a singular matrix;
 * it lowers to a FallbackKernel with no result that is never dead, so the compiled module
 * reports the singular matrix as PyTorch does (needs LAPACKE for linalg_inv_ex) */
static void effect_only(MiCtx *ctx) {
    Graph *g = parse(ctx, "inv.py",
                     "class <lambda>(torch.nn.Module):\n"
                     "    def forward(self, arg0_1: \"f32[3, 3][3, 1]cpu\"):\n"
                     "        linalg_inv_ex = torch.ops.aten.linalg_inv_ex.default(arg0_1)\n"
                     "        getitem: \"f32[3, 3][1, 3]cpu\" = linalg_inv_ex[0]\n"
                     "        getitem_1: \"i32[][]cpu\" = linalg_inv_ex[1];  linalg_inv_ex = None\n"
                     "        _linalg_check_errors = torch.ops.aten._linalg_check_errors.default(getitem_1, 'linalg.inv', is_matrix = True)\n"
                     "        mul: \"f32[3, 3][3, 1]cpu\" = torch.ops.aten.mul.Tensor(getitem, 2)\n"
                     "        return (mul,)\n");
    if (!ok(g != NULL, "linalg graph parses")) return;
    int64_t sz[2] = {3, 3};
    Tensor *x = tensor_new(ctx, DT_F32, 2, sz);
    for (int k = 0; k < 9; k++) tensor_set_f(x, k, k % 4 == 0 ? 2.0 : 0.5);   /* invertible */
    IValue in[1] = {{.kind = IV_TENSOR, .t = x}}, *want = NULL, *got = NULL;
    int nwant = 0, ngot = 0;
    if (interp_run(ctx, g, in, 1, &want, &nwant) < 0) {   /* no LAPACKE: the op says so */
        ok(has(ctx->err.msg, "LAPACK"), "linalg_inv_ex without LAPACKE: %s", ctx->err.msg);
        ivalue_clear(&in[0]);
        graph_free(g);
        return;
    }
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    IrModule *m = b.m;
    int nfx = 0;
    for (int i = 0; m && i < m->nbufs; i++) nfx += m->bufs[i]->side_effect;
    ok(m && nfx == 1, "_linalg_check_errors lowers to a FallbackKernel run for its effect");
    Schedule *s = b.s;
    int alive = 0;
    for (int i = 0; s && i < s->nnodes; i++) alive += !s->nodes[i].dead && s->nodes[i].buf->side_effect;
    ok(alive == 1, "the check is not dead code");
    RtModule *rt = b.rt;
    ok(rt && rt_run(ctx, rt, g, in, 1, &got, &ngot, NULL) == 0 && ngot == 1 &&
       tensor_compare(got[0].t, want[0].t, 1e-5, 1e-5).ok, "an invertible matrix: the module agrees with the interpreter");
    interp_free_outputs(got, ngot);
    got = NULL;
    ngot = 0;
    for (int k = 0; k < 9; k++) tensor_set_f(x, k, 1.0);   /* singular */
    ok(rt && rt_run(ctx, rt, g, in, 1, &got, &ngot, NULL) < 0 && has(ctx->err.msg, "singular"),
       "a singular matrix: the module fails with the check's error: %s", ctx->err.msg);
    interp_free_outputs(got, ngot);
    interp_free_outputs(want, nwant);
    cg_free(&b);
    ivalue_clear(&in[0]);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    static const bool emb_exact[3] = {true, false, false}, lnd_exact[3] = {true, true, true};
    static const char *const emb_ir[] = {
        "op0: ExternKernelSchedulerNode(FallbackKernel)", "buf0: FallbackKernel",
        "op0.node.kernel = torch.ops.aten.embedding.default", "op0.node.python_kernel_name = aten.embedding.default",
        "node.kernel = torch.ops.aten.scatter_add.default", "set_indirect0 = self.set_indirect0(load)",
        "op0.met_dependencies = [StarDep(name='arg0_1', mode=None), StarDep(name='arg1_1', mode=None)]", NULL};
    static const char *const emb_src[] = {"FallbackKernel: torch.ops.aten.embedding.default (node 'embedding')",
                                          "fb->run(fb->ctx, \"scatter_add\", 3, fa, 1, fo", "int call_fb(", NULL};
    static const char *const lnd_ir[] = {
        "op0.writes = [StarDep(name='buf0', mode=None)]", "    buf0: FallbackKernel\n    buf0.layout = MultiOutputLayout(device=device(type='cpu'))",
        "op2: ExternKernelSchedulerNode(MultiOutput)\nop2.writes = [StarDep(name='buf2', mode=None)]\nop2.unmet_dependencies = [StarDep(name='buf0', mode=None)]",
        "    buf2: MultiOutput\n    buf2.layout = FixedLayout('cpu', torch.float32, size=[6, 1], stride=[1, 1])", "op2.node.kernel = None",
        "op0.node.kernel = torch.ops.aten.native_layer_norm.default", "node.kernel = torch.ops.aten.cumsum.default", NULL};
    static const char *const lnd_src[] = {"fb->run(fb->ctx, \"native_layer_norm\", 3, fa, 3, fo", NULL};
    run_case(ctx, EMB, emb_inputs, emb_exact, emb_ir, emb_src);
    run_case(ctx, LND, lnd_inputs, lnd_exact, lnd_ir, lnd_src);
    embedding_values(ctx);
    random_op(ctx);
    in_cond_branches(ctx);
    effect_only(ctx);
    unsupported(ctx);
    shell();
    mi_ctx_free(ctx);
    return done_testing();
}
