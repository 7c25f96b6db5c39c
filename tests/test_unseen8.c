/* test_unseen8.c — the rules the eighth batch of unseen models needed, each checked on computed
 * values (hand values, the interpreter, the compiled C module, nvcc on the CUDA source):
 *   - a SymInt operand of a pointwise op lowers as Inductor's IndexingConstant (ops.index_expr):
 *     div(arange(n), n) with a dynamic n (cpu_dynamic_arange_view);
 *   - GraphLowering.mark_buffer_mutated: values read before an in-place index_put_ keep the old
 *     values, whether the mutated tensor was still pending (a zeros) or already a buffer (an mm),
 *     (cuda_adv_indexing_train's backward read its own scatter twice);
 *   - a copy_ epilogue the graph also returns needs no functionalization
 *     (cuda_input_buffer_mutation);
 *   - prims.normal (cuda_sampling_ops): normal(mean, std) of the shape, dtype and device given;
 *   - _amp_foreach_non_finite_check_and_unscale / _amp_update_scale (cuda_amp_unscale_update):
 *     ATen's AmpKernels on hand values, a list inside the result tuple read by
 *     getitem(getitem(op, 0), k), run as FallbackKernels in compiled C and CUDA;
 *   - FX's namespace in an inference graph: getitem_1 there means `getitem` was taken;
 *   - decompose_auto_functionalized's clean-up: a get_attr nobody reads is erased. */
#include "tap.h"
#include "fx_passes/passes.h"
#include "ir/ir.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "tests/support/codegen_check.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)

/* g's CUDA source built by nvcc (a skip without nvcc) */
#define nvcc_builds(name, g) CC_NVCC_POINT(ctx, name, g)

/* the graph of FX text fx, its ops resolved (NULL, diagnosed, when it does not parse) */
#define parsed(fx) cc_parsed(ctx, fx, "unseen8.py")

/* output k of the interpreter's run of g on ins, as a new reference */
static Tensor *out_k(Graph *g, Tensor **ins, int n, int k) {
    int no = 0;
    IValue *o = cc_interp(ctx, g, ins, n, &no);
    Tensor *r = o && k < no && o[k].kind == IV_TENSOR ? tensor_ref(o[k].t) : NULL;
    if (o) interp_free_outputs(o, no);
    return r;
}

/* ---- a SymInt operand ---- */
static void test_sym_operand(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, s0: \"Sym(s0)\", x: \"f32[s0][1]cpu\"):\n"
        "        iota: \"i64[s0][1]cpu\" = torch.ops.prims.iota.default(s0, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
        "        f: \"f32[s0][1]cpu\" = torch.ops.prims.convert_element_type.default(iota, torch.float32)\n"
        "        div: \"f32[s0][1]cpu\" = torch.ops.aten.div.Tensor(f, s0)\n"
        "        mul: \"f32[s0][1]cpu\" = torch.ops.aten.mul.Tensor(x, s0)\n"
        "        add: \"f32[s0][1]cpu\" = torch.ops.aten.add.Tensor(div, mul)\n"
        "        return (add,)\n";
    Graph *g = parsed(fx);
    IValue in[2] = {{.kind = IV_INT, .i = 4}, {.kind = IV_TENSOR, .t = TD(DT_F32, 1, (int64_t[]){4}, (double[]){1, -2, 0.5, 3})}};
    IValue *o = NULL;
    int no = 0;
    bool ran = g && interp_run(ctx, g, in, 2, &o, &no) == 0 && no == 1;
    /* add[i] = i / 4 + x[i] * 4 */
    ok(ran && og_values(o[0].t, (double[]){4, -7.75, 2.5, 12.75}, 4, 1e-6), "div / mul by a SymInt: i / n + x * n by hand");
    if (o) interp_free_outputs(o, no);
    tensor_unref(in[1].t);
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char *ir = m ? ir_print(m) : NULL;
    if (!m) { diag("lowering: %s", ctx->err.msg); mi_clear_err(ctx); }
    ok(ir && strstr(ir, "index1 = s0") && strstr(ir, "ops.index_expr(get_index_1, torch.float32)"),
       "the SymInt is ops.index_expr(s0, torch.float32) in the loop body (IndexingConstant)");
    free(ir);
    ir_free(m);
    graph_free(g);
    free(cg_check(ctx, "div(arange(n), n) compiled", fx, -1));
}

/* ---- mark_buffer_mutated ---- */
static void test_mutation_order(void) {
    /* zeros still pending when index_put_ writes it: a = zeros + t read before, b after */
    Graph *g = og_graph(ctx, "i: \"i64[4][1]cpu\", v: \"f32[4][1]cpu\", t: \"f32[6][1]cpu\"",
        "        full: \"f32[6][1]cpu\" = torch.ops.aten.full.default([6], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        a: \"f32[6][1]cpu\" = torch.ops.aten.add.Tensor(full, t)\n"
        "        ip: \"f32[6][1]cpu\" = torch.ops.aten.index_put_.default(full, [i], v, True)\n"
        "        r: \"f32[6][1]cpu\" = torch.ops.aten.mul.Tensor(a, ip)\n", "r");
    Tensor *ins[3] = {TD(DT_I64, 1, (int64_t[]){4}, (double[]){1, 1, 4, 0}), TD(DT_F32, 1, (int64_t[]){4}, (double[]){2, 3, -1, 0.5}),
                      TD(DT_F32, 1, (int64_t[]){6}, (double[]){1, 2, 3, 4, 5, 6})};
    /* scatter: [0.5, 5, 0, 0, -1, 0]; a = t; r = t * scatter */
    Tensor *r = out_k(g, ins, 3, 0);
    ok(og_values(r, (double[]){0.5, 10, 0, 0, -5, 0}, 6, 1e-6), "index_put_ into a pending zeros: a read before it keeps t (hand values)");
    tensor_unref(r);
    ok(cc_c_agrees(ctx, g, ins, 3, 1e-6), "... and the compiled C module agrees (the reader keeps the zeros' function)");
    nvcc_builds("index_put_ into a pending zeros", g);
    graph_free(g);
    /* an mm result (a buffer already) read by a pending add, then scattered into */
    g = og_graph(ctx, "i: \"i64[4][1]cpu\", v: \"f32[4, 1][1, 1]cpu\", a: \"f32[6, 2][2, 1]cpu\", b: \"f32[2, 1][1, 1]cpu\"",
        "        mm: \"f32[6, 1][1, 1]cpu\" = torch.ops.aten.mm.default(a, b)\n"
        "        c: \"f32[6, 1][1, 1]cpu\" = torch.ops.aten.add.Tensor(mm, 1)\n"
        "        ip: \"f32[6, 1][1, 1]cpu\" = torch.ops.aten.index_put_.default(mm, [i], v, True)\n"
        "        r: \"f32[6, 1][1, 1]cpu\" = torch.ops.aten.sub.Tensor(c, ip)\n", "r");
    Tensor *x = TD(DT_F32, 2, (int64_t[]){6, 2}, NULL), *w = TD(DT_F32, 2, (int64_t[]){2, 1}, (double[]){1, 1});
    Tensor *v2 = TD(DT_F32, 2, (int64_t[]){4, 1}, (double[]){2, 3, -1, 0.5}), *ins2[4] = {ins[0], v2, x, w};
    /* m = [1, 5, 9, 13, 17, 21]; c - (m + scatter) = 1 - scatter */
    r = out_k(g, ins2, 4, 0);
    ok(og_values(r, (double[]){0.5, -4, 1, 1, 2, 1}, 6, 1e-6), "index_put_ into an mm's buffer: its pending reader reads the old values (hand values)");
    tensor_unref(r);
    ok(cc_c_agrees(ctx, g, ins2, 4, 1e-5), "... and the compiled C module agrees (the reader is realized before the scatter)");
    graph_free(g);
    tensor_unref(v2);
    tensor_unref(x);
    tensor_unref(w);
    for (int k = 0; k < 3; k++) tensor_unref(ins[k]);
}

/* ---- a returned copy_ epilogue ---- */
static void test_returned_epilogue(void) {
    Graph *g = og_graph(ctx, "a: \"f32[4][1]cpu\"",
        "        add: \"f32[4][1]cpu\" = torch.ops.aten.add.Tensor(a, 1)\n"
        "        mul: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(add, 2)\n"
        "        copy_: \"f32[4][1]cpu\" = torch.ops.aten.copy_.default(a, add)\n", "mul, copy_");
    ok(g && !graph_has_mutations(g), "copy_(input, value) returned by the graph is an epilogue: no functionalization");
    Tensor *a = TD(DT_F32, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    IValue in = {.kind = IV_TENSOR, .t = tensor_clone(ctx, a)}, *o = NULL;
    int no = 0;
    bool ran = g && interp_run(ctx, g, &in, 1, &o, &no) == 0 && no == 2;
    ok(ran && og_values(o[1].t, (double[]){2, 3, 4, 5}, 4, 0) && og_values(in.t, (double[]){2, 3, 4, 5}, 4, 0),
       "the returned copy_ and the input both hold a + 1");
    if (o) interp_free_outputs(o, no);
    tensor_unref(in.t);
    ok(cc_c_agrees(ctx, g, &a, 1, 1e-6), "the compiled C module agrees");
    tensor_unref(a);
    graph_free(g);
}

/* ---- prims.normal ---- */
static void test_prims_normal(void) {
    Graph *g = og_graph(ctx, "x: \"f32[40, 100][100, 1]cpu\"",
        "        n: \"f32[40, 100][100, 1]cpu\" = torch.ops.prims.normal.default([40, 100], mean = 3.0, std = 0.5, dtype = torch.float32, device = device(type='cpu'), requires_grad = False)\n"
        "        r: \"f32[40, 100][100, 1]cpu\" = torch.ops.aten.add.Tensor(n, x)\n", "r");
    Tensor *x = TD(DT_F32, 2, (int64_t[]){40, 100}, NULL);
    for (int64_t i = 0; i < 4000; i++) tensor_set_f(x, i, 0);
    Tensor *r = out_k(g, &x, 1, 0);
    double s = 0, s2 = 0;
    for (int64_t i = 0; r && i < 4000; i++) { double v = tensor_get_f(r, i); s += v; s2 += v * v; }
    double mean = s / 4000, sd = sqrt(s2 / 4000 - mean * mean);
    ok(r && r->dtype == DT_F32 && fabs(mean - 3) < 0.05 && fabs(sd - 0.5) < 0.05,
       "prims.normal(mean 3, std 0.5) of 4000 draws: mean %.4f, std %.4f", mean, sd);
    tensor_unref(r);
    ok(cc_c_agrees(ctx, g, &x, 1, 1e-6), "prims.normal is a FallbackKernel: the compiled C module draws the interpreter's values");
    nvcc_builds("prims.normal", g);
    graph_free(g);
    tensor_unref(x);
    g = og_graph(ctx, "x: \"f32[3][1]cpu\"",
        "        r: \"f32[3][1]cpu\" = torch.ops.prims.normal.default([3], mean = 0.0, std = -1.0, dtype = torch.float32, device = device(type='cpu'), requires_grad = False)\n", "r");
    x = TD(DT_F32, 1, (int64_t[]){3}, NULL);
    int no = 0;
    IValue *o = cc_interp(ctx, g, &x, 1, &no);
    ok(!o, "a negative std is an error, as ATen's normal says");
    if (o) interp_free_outputs(o, no);
    graph_free(g);
    tensor_unref(x);
}

/* ---- the GradScaler ops ---- */
static const char *amp_params = "g1: \"f32[2, 2][2, 1]cpu\", g2: \"f32[3][1]cpu\", inv: \"f32[1][1]cpu\", scale: \"f32[1][1]cpu\", growth: \"i32[1][1]cpu\"";
static const char *amp_body =
    "        found: \"f32[1][1]cpu\" = torch.ops.aten.full.default([1], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
    "        u = torch.ops.aten._amp_foreach_non_finite_check_and_unscale.default([g1, g2], found, inv)\n"
    "        lst = u[0]\n"
    "        o1: \"f32[2, 2][2, 1]cpu\" = lst[0]\n"
    "        o2: \"f32[3][1]cpu\" = lst[1]\n"
    "        f: \"f32[1][1]cpu\" = u[1]\n"
    "        us = torch.ops.aten._amp_update_scale.default(scale, growth, f, 2.0, 0.5, 3)\n"
    "        s: \"f32[1][1]cpu\" = us[0]\n"
    "        t: \"i32[1][1]cpu\" = us[1]\n"
    "        m: \"f32[2, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(o1, 2)\n";

/* t holds exactly want[0..n) (NaN equal to NaN) */
static bool exactly(const Tensor *t, const double *want, int64_t n) {
    bool same = t && tensor_numel(t) == n;
    for (int64_t i = 0; same && i < n; i++) {
        double v = tensor_get_f(t, i);
        same = v == want[i] || (isnan(v) && isnan(want[i]));
        if (!same) diag("element %lld: got %.9g want %.9g", (long long)i, v, want[i]);
    }
    return same;
}

static void amp_case(Graph *g, const double *g2, double tracker, const double *want_o2, double want_found, double want_scale,
                     double want_tracker, const char *what) {
    Tensor *ins[5] = {TD(DT_F32, 2, (int64_t[]){2, 2}, (double[]){1, -2, 4, 8}), TD(DT_F32, 1, (int64_t[]){3}, g2),
                      TD(DT_F32, 1, (int64_t[]){1}, (double[]){0.25}), TD(DT_F32, 1, (int64_t[]){1}, (double[]){1024}),
                      TD(DT_I32, 1, (int64_t[]){1}, (double[]){tracker})};
    int no = 0;
    IValue *o = cc_interp(ctx, g, ins, 5, &no);
    bool good = o && no == 6 && exactly(o[0].t, (double[]){0.25, -0.5, 1, 2}, 4) && exactly(o[1].t, want_o2, 3) &&
                exactly(o[2].t, &want_found, 1) && exactly(o[3].t, &want_scale, 1) && exactly(o[4].t, &want_tracker, 1) &&
                exactly(o[5].t, (double[]){0.5, -1, 2, 4}, 4);
    ok(good, "%s (hand values)", what);
    if (o) interp_free_outputs(o, no);
    ok(cc_c_agrees(ctx, g, ins, 5, 0), "%s: the compiled C module (two FallbackKernels) agrees", what);
    for (int k = 0; k < 5; k++) tensor_unref(ins[k]);
}

static void test_amp(void) {
    Graph *g = og_graph(ctx, amp_params, amp_body, "o1, o2, f, s, t, m");
    TensorMeta metas[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    Node *u = g ? graph_find(g, "u") : NULL, *lst = g ? graph_find(g, "lst") : NULL, *o2 = g ? graph_find(g, "o2") : NULL;
    bool inferred = u && op_infer_meta(ctx, g, u, metas, &nm) == 0;
    ok(inferred && nm == 3 && metas[1].ndim == 1 && metas[2].dtype == DT_F32, "the unscale op's results: two grads and found_inf, flat (%d)", nm);
    ok(lst && op_infer_node_meta(ctx, g, lst) == 0 && !lst->has_meta, "getitem(op, 0) is the list: no tensor meta, as PyTorch prints it");
    nm = OP_MAX_OUTS;
    int64_t n3 = 0;
    ok(o2 && op_infer_meta(ctx, g, o2, metas, &nm) == 0 && nm == 1 && metas[0].ndim == 1 && sym_is_int(metas[0].size[0], &n3) && n3 == 3,
       "getitem(getitem(op, 0), 1) is the second grad's meta f32[3]");
    mi_clear_err(ctx);
    /* finite grads: * inv_scale, found stays 0; the tracker 1 -> 2 of interval 3, the scale kept */
    amp_case(g, (double[]){4, 0, -8}, 1, (double[]){1, 0, -2}, 0, 1024, 2, "finite grads, tracker 1 of 3");
    /* the third clean step: the scale grows by 2, the tracker restarts */
    amp_case(g, (double[]){4, 0, -8}, 2, (double[]){1, 0, -2}, 0, 2048, 0, "finite grads, tracker 2 of 3: the scale grows");
    /* an inf: found_inf 1, the product is still taken, the scale backs off by 0.5 */
    amp_case(g, (double[]){INFINITY, 0, -8}, 2, (double[]){INFINITY, 0, -2}, 1, 512, 0, "an inf grad: found_inf, the scale backs off");
    amp_case(g, (double[]){NAN, 1, 1}, 0, (double[]){NAN, 0.25, 0.25}, 1, 512, 0, "a NaN grad counts as non-finite");
    nvcc_builds("the GradScaler ops", g);
    graph_free(g);
}

/* ---- FX names ---- */
static void test_traced_names(void) {
    Graph *g = og_graph(ctx, "x: \"f32[4][1]cpu\"",
        "        sort = torch.ops.aten.sort.default(x)\n"
        "        getitem_1: \"i64[4][1]cpu\" = sort[1]\n", "getitem_1");
    NameSet *a = nameset_new(), *b = nameset_new();
    nameset_add_graph(a, g);
    nameset_add_graph(b, g);
    nameset_add_traced_stems(b, g);
    is_str(nameset_fresh(a, g, "getitem"), "getitem", "a copied graph (training): getitem is free beside getitem_1");
    is_str(nameset_fresh(b, g, "getitem"), "getitem_2", "a traced graph (inference): getitem_1 means getitem was taken -> getitem_2");
    is_str(nameset_fresh(b, g, "getitem"), "getitem_3", "... and the next is getitem_3");
    is_str(nameset_fresh(b, g, "sort"), "sort_1", "a name in use counts on from it");
    nameset_free(a);
    nameset_free(b);
    graph_free(g);
}

/* ---- unread get_attr ---- */
static void test_unread_get_attr(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[2][1]cpu\"):\n"
        "        _tensor_constant0: \"f32[][]cpu\" = self._tensor_constant0;  _tensor_constant0 = None\n"
        "        _tensor_constant1: \"f32[2][1]cpu\" = self._tensor_constant1\n"
        "        add: \"f32[2][1]cpu\" = torch.ops.aten.add.Tensor(x, _tensor_constant1);  x = _tensor_constant1 = None\n"
        "        return (add,)\n";
    Graph *g = parsed(fx);
    PassCtx pc = {.ctx = ctx};
    ok(g && pass_decompose_auto_functionalized(&pc, g) == 0 && !graph_find(g, "_tensor_constant0") && graph_find(g, "_tensor_constant1"),
       "decompose_auto_functionalized erases the get_attr nobody reads, keeps the one add reads");
    is_int(pc.nchanges, 1, "one change noted");
    for (int i = 0; i < pc.nchanges; i++) { free(pc.changes[i].node); free(pc.changes[i].reason); }
    free(pc.changes);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_sym_operand();
    test_mutation_order();
    test_returned_epilogue();
    test_prims_normal();
    test_amp();
    test_traced_names();
    test_unread_get_attr();
    mi_ctx_free(ctx);
    return done_testing();
}
