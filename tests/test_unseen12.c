/* test_unseen12.c — the rules the twelfth batch of unseen models (tests/tools/survey_models12.py)
 * needed, each checked on computed values (hand values from PyTorch's definitions, the
 * interpreter, the compiled C module) or on the exact text a user reads:
 *   - Python complex scalars in a graph (cpu_complex_angle_ops: `aten.mul.Tensor(complex_1,
 *     (1+2j))`): read and printed back as repr() writes them (complexobject.c complex_repr), and
 *     a complex scalar operand of a pointwise op promoting to complex (c10's ScalarType of a
 *     Python complex is the default complex dtype) and computed with its imaginary part;
 *   - every FallbackKernel result sized by an unbacked symbol its call defines comes back
 *     allocated by the call (cpu_unique_counts_dynamic: _unique2's counts are [u0], u0 the size of
 *     its first result; the compiled module had allocated them with u0 still 0);
 *   - aten._transformer_encoder_layer_fwd (cpu_transformer_encoder_padmask_eval: nn.TransformerEncoder's
 *     fast path in eval): ATen's transformer_encoder_layer_forward, checked against the same layer
 *     written with the ops it is made of (addmm, bmm, masked softmax, native_layer_norm) and in
 *     compiled code;
 *   - move_constructors_to_cuda keeps a cpu scalar value of an index_put with a bool / int8
 *     index on the cpu (post_grad.py is_index_put_and_requires_h2d_sync_for_gpu_value;
 *     cuda_bool_mask_assign_train's `h[h < -0.5] = 0.0`);
 *   - an OpOverloadPacket target, `torch.ops.aten.clone(add_1)` (reinplace.py's clone of a
 *     diagonal scatter it does not reinplace, cpu_scatter_ops_train's backward): resolved, lowered
 *     and printed as the packet. */
#include "tap.h"
#include "fx_passes/passes.h"
#include "ir/ir.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)
#define parsed(fx) cc_parsed(ctx, fx, "unseen12.py")

/* the interpreter's output k of g on ins equals want[0..n) within tol */
static void interp_is(Graph *g, Tensor **ins, int nin, int k, const double *want, int64_t n, double tol, const char *what) {
    ok(cc_output_is(ctx, g, ins, nin, k, want, n, tol), "%s", what);
}

/* ---- complex scalars ---- */
static void test_complex_repr(void) {
    char b[64];
    struct { double re, im; const char *want; } c[] = {
        {1, 2, "(1+2j)"}, {0, 2, "2j"}, {0, -1.5, "-1.5j"}, {-0.0, -1, "(-0-1j)"}, {1e-05, -2.5, "(1e-05-2.5j)"},
        {0.1, 1e16, "(0.1+1e+16j)"}, {NAN, INFINITY, "(nan+infj)"}, {2, -INFINITY, "(2-infj)"}, {0, 0, "0j"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        is_str(fx_complex_repr(c[i].re, c[i].im, b, sizeof b), c[i].want, "repr(complex(%g, %g))", c[i].re, c[i].im);
}

static void test_complex_scalar(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, re: \"f32[3][1]cpu\", im: \"f32[3][1]cpu\"):\n"
        "        z: \"c64[3][1]cpu\" = torch.ops.aten.complex.default(re, im)\n"
        "        mul: \"c64[3][1]cpu\" = torch.ops.aten.mul.Tensor(z, (1+2j))\n"
        "        add: \"c64[3][1]cpu\" = torch.ops.aten.add.Tensor(mul, -1.5j)\n"
        "        sub: \"c64[3][1]cpu\" = torch.ops.aten.sub.Tensor(add, (-0-1j))\n"
        "        mul_1: \"c64[3][1]cpu\" = torch.ops.aten.mul.Tensor(re, (1e-05+2j))\n"
        "        view_as_real: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.view_as_real.default(sub)\n"
        "        view_as_real_1: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.view_as_real.default(mul_1)\n"
        "        return (view_as_real, view_as_real_1)\n";
    Graph *g = parsed(fx);
    char *text = g ? fx_print(g, false) : NULL;
    ok(text && strstr(text, "aten.mul.Tensor(z, (1+2j))") && strstr(text, "aten.add.Tensor(mul, -1.5j)") &&
       strstr(text, "aten.sub.Tensor(add, (-0-1j))") && strstr(text, "aten.mul.Tensor(re, (1e-05+2j))"),
       "complex scalars print back as Python's repr() wrote them");
    if (!text || !strstr(text, "(-0-1j)")) diag("%s", text ? text : "(no graph)");
    free(text);
    Tensor *re = TD(DT_F32, 1, (int64_t[]){3}, (double[]){1, 0, -2});
    Tensor *im = TD(DT_F32, 1, (int64_t[]){3}, (double[]){0, 1, 0.5});
    Tensor *ins[] = {re, im};
    /* (a+bi)(1+2i) = (a - 2b) + (2a + b)i; then - 1.5i; then - (-0 - 1i) = + 1i
     * 1+0i -> 1+2i -> 1+0.5i -> 1+1.5i;  0+1i -> -2+1i -> -2-0.5i -> -2+0.5i;  -2+0.5i -> -3-3.5i -> -3-5i -> -3-4i */
    interp_is(g, ins, 2, 0, (double[]){1, 1.5, -2, 0.5, -3, -4}, 6, 1e-6, "z * (1+2j) - 1.5j - (-0-1j): the imaginary parts count");
    /* a real tensor times a complex scalar promotes to c64: re * (1e-05+2j) */
    interp_is(g, ins, 2, 1, (double[]){1e-05, 2, 0, 0, -2e-05, -4}, 6, 1e-9, "f32 tensor * (1e-05+2j) is c64 (the default complex dtype)");
    ok(g && cc_c_agrees(ctx, g, ins, 2, 1e-6), "complex scalars: the compiled C module agrees with the interpreter");
    graph_free(g);
    tensor_unref(re); tensor_unref(im);
}

/* ---- _unique2: results sized by a sibling's unbacked size ---- */
static void test_unique_counts(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, ids: \"i64[6][1]cpu\", w: \"f32[6, 2][2, 1]cpu\"):\n"
        "        _unique2 = torch.ops.aten._unique2.default(ids, True, True, True)\n"
        "        getitem: \"i64[u0][1]cpu\" = _unique2[0]\n"
        "        getitem_1: \"i64[6][1]cpu\" = _unique2[1]\n"
        "        getitem_2: \"i64[u0][1]cpu\" = _unique2[2]\n"
        "        index: \"i64[6][1]cpu\" = torch.ops.aten.index.Tensor(getitem_2, [getitem_1])\n"
        "        convert_element_type: \"f32[6][1]cpu\" = torch.ops.prims.convert_element_type.default(index, torch.float32)\n"
        "        unsqueeze: \"f32[6, 1][1, 1]cpu\" = torch.ops.aten.unsqueeze.default(convert_element_type, 1)\n"
        "        mul: \"f32[6, 2][2, 1]cpu\" = torch.ops.aten.mul.Tensor(w, unsqueeze)\n"
        "        convert_element_type_1: \"f32[u0][1]cpu\" = torch.ops.prims.convert_element_type.default(getitem, torch.float32)\n"
        "        mean: \"f32[][]cpu\" = torch.ops.aten.mean.default(convert_element_type_1)\n"
        "        sum_1: \"i64[][]cpu\" = torch.ops.aten.sum.default(getitem_2)\n"
        "        return (mul, mean, sum_1)\n";
    Graph *g = parsed(fx);
    Tensor *ids = TD(DT_I64, 1, (int64_t[]){6}, (double[]){3, 1, 3, 0, 1, 3});
    Tensor *w = TD(DT_F32, 2, (int64_t[]){6, 2}, (double[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1});
    Tensor *ins[] = {ids, w};
    /* unique [0, 1, 3], inverse [2, 1, 2, 0, 1, 2], counts [1, 2, 3]: each row times its id's count */
    interp_is(g, ins, 2, 0, (double[]){3, 3, 2, 2, 3, 3, 1, 1, 2, 2, 3, -3}, 12, 0, "w * counts[inverse]");
    interp_is(g, ins, 2, 1, (double[]){4.0 / 3}, 1, 1e-6, "mean of the unique values [0, 1, 3]");
    interp_is(g, ins, 2, 2, (double[]){6}, 1, 0, "the counts sum to the number of ids");
    ok(g && cc_c_agrees(ctx, g, ins, 2, 0), "_unique2's [u0] counts come back from its call: the compiled C module agrees");
    graph_free(g);
    tensor_unref(ids); tensor_unref(w);
}

/* ---- the fused encoder layer ---- */
/* a [n] f32 tensor of varied values in [-scale, scale] (deterministic) */
static Tensor *vals(int ndim, const int64_t *size, int seed, double scale) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= size[i];
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = scale * sin(1.7 * (double)i + 0.37 * seed + 0.1 * seed * seed);
    Tensor *t = TD(DT_F32, ndim, size, v);
    free(v);
    return t;
}

#define ENC_INPUTS \
    "x: \"f32[2, 3, 4][12, 4, 1]cpu\", wqkv: \"f32[12, 4][4, 1]cpu\", bqkv: \"f32[12][1]cpu\", wp: \"f32[4, 4][4, 1]cpu\", " \
    "bp: \"f32[4][1]cpu\", nw1: \"f32[4][1]cpu\", nb1: \"f32[4][1]cpu\", nw2: \"f32[4][1]cpu\", nb2: \"f32[4][1]cpu\", " \
    "w1: \"f32[6, 4][4, 1]cpu\", b1: \"f32[6][1]cpu\", w2: \"f32[4, 6][6, 1]cpu\", b2: \"f32[4][1]cpu\""

static void test_encoder_layer(void) {
    const char *fused =
        "class G(torch.nn.Module):\n"
        "    def forward(self, " ENC_INPUTS ", mf: \"f32[2, 3][3, 1]cpu\"):\n"
        "        enc: \"f32[2, 3, 4][12, 4, 1]cpu\" = torch.ops.aten._transformer_encoder_layer_fwd.default(x, 4, 2, wqkv, bqkv, wp, bp, False, False, 1e-05, nw1, nb1, nw2, nb2, w1, b1, w2, b2, mf, 1)\n"
        "        return (enc,)\n";
    /* the same layer as ATen computes it, op by op (heads 2 x 2; key padding mask True = hidden) */
    const char *ref =
        "class G(torch.nn.Module):\n"
        "    def forward(self, " ENC_INPUTS ", m: \"b8[2, 3][3, 1]cpu\"):\n"
        "        xv: \"f32[6, 4][4, 1]cpu\" = torch.ops.aten.view.default(x, [6, 4])\n"
        "        tq: \"f32[4, 12][1, 4]cpu\" = torch.ops.aten.t.default(wqkv)\n"
        "        qkv: \"f32[6, 12][12, 1]cpu\" = torch.ops.aten.addmm.default(bqkv, xv, tq)\n"
        "        qkv5: \"f32[2, 3, 3, 2, 2][36, 12, 4, 2, 1]cpu\" = torch.ops.aten.view.default(qkv, [2, 3, 3, 2, 2])\n"
        "        perm: \"f32[3, 2, 2, 3, 2][4, 36, 2, 12, 1]cpu\" = torch.ops.aten.permute.default(qkv5, [2, 0, 3, 1, 4])\n"
        "        q: \"f32[2, 2, 3, 2][36, 2, 12, 1]cpu\" = torch.ops.aten.select.int(perm, 0, 0)\n"
        "        k: \"f32[2, 2, 3, 2][36, 2, 12, 1]cpu\" = torch.ops.aten.select.int(perm, 0, 1)\n"
        "        v: \"f32[2, 2, 3, 2][36, 2, 12, 1]cpu\" = torch.ops.aten.select.int(perm, 0, 2)\n"
        "        qc: \"f32[2, 2, 3, 2][12, 6, 2, 1]cpu\" = torch.ops.aten.clone.default(q, memory_format = torch.contiguous_format)\n"
        "        qs: \"f32[2, 2, 3, 2][12, 6, 2, 1]cpu\" = torch.ops.aten.mul.Tensor(qc, 0.7071067811865476)\n"
        "        qv: \"f32[4, 3, 2][6, 2, 1]cpu\" = torch.ops.aten.view.default(qs, [4, 3, 2])\n"
        "        kt: \"f32[2, 2, 2, 3][36, 2, 1, 12]cpu\" = torch.ops.aten.permute.default(k, [0, 1, 3, 2])\n"
        "        ktc: \"f32[2, 2, 2, 3][12, 6, 3, 1]cpu\" = torch.ops.aten.clone.default(kt, memory_format = torch.contiguous_format)\n"
        "        ktv: \"f32[4, 2, 3][6, 3, 1]cpu\" = torch.ops.aten.view.default(ktc, [4, 2, 3])\n"
        "        s: \"f32[4, 3, 3][9, 3, 1]cpu\" = torch.ops.aten.bmm.default(qv, ktv)\n"
        "        s4: \"f32[2, 2, 3, 3][18, 9, 3, 1]cpu\" = torch.ops.aten.view.default(s, [2, 2, 3, 3])\n"
        "        mk: \"b8[2, 1, 1, 3][3, 3, 3, 1]cpu\" = torch.ops.aten.view.default(m, [2, 1, 1, 3])\n"
        "        sm: \"f32[2, 2, 3, 3][18, 9, 3, 1]cpu\" = torch.ops.aten.masked_fill.Scalar(s4, mk, -inf)\n"
        "        p: \"f32[2, 2, 3, 3][18, 9, 3, 1]cpu\" = torch.ops.aten._softmax.default(sm, -1, False)\n"
        "        pv: \"f32[4, 3, 3][9, 3, 1]cpu\" = torch.ops.aten.view.default(p, [4, 3, 3])\n"
        "        vc: \"f32[2, 2, 3, 2][12, 6, 2, 1]cpu\" = torch.ops.aten.clone.default(v, memory_format = torch.contiguous_format)\n"
        "        vv: \"f32[4, 3, 2][6, 2, 1]cpu\" = torch.ops.aten.view.default(vc, [4, 3, 2])\n"
        "        a: \"f32[4, 3, 2][6, 2, 1]cpu\" = torch.ops.aten.bmm.default(pv, vv)\n"
        "        a4: \"f32[2, 2, 3, 2][12, 6, 2, 1]cpu\" = torch.ops.aten.view.default(a, [2, 2, 3, 2])\n"
        "        ap: \"f32[2, 3, 2, 2][12, 2, 6, 1]cpu\" = torch.ops.aten.permute.default(a4, [0, 2, 1, 3])\n"
        "        ac: \"f32[2, 3, 2, 2][12, 4, 2, 1]cpu\" = torch.ops.aten.clone.default(ap, memory_format = torch.contiguous_format)\n"
        "        av: \"f32[6, 4][4, 1]cpu\" = torch.ops.aten.view.default(ac, [6, 4])\n"
        "        tp: \"f32[4, 4][1, 4]cpu\" = torch.ops.aten.t.default(wp)\n"
        "        proj: \"f32[6, 4][4, 1]cpu\" = torch.ops.aten.addmm.default(bp, av, tp)\n"
        "        pr: \"f32[2, 3, 4][12, 4, 1]cpu\" = torch.ops.aten.view.default(proj, [2, 3, 4])\n"
        "        r1: \"f32[2, 3, 4][12, 4, 1]cpu\" = torch.ops.aten.add.Tensor(pr, x)\n"
        "        ln1 = torch.ops.aten.native_layer_norm.default(r1, [4], nw1, nb1, 1e-05)\n"
        "        y1: \"f32[2, 3, 4][12, 4, 1]cpu\" = ln1[0]\n"
        "        y1v: \"f32[6, 4][4, 1]cpu\" = torch.ops.aten.view.default(y1, [6, 4])\n"
        "        t1: \"f32[4, 6][1, 4]cpu\" = torch.ops.aten.t.default(w1)\n"
        "        h: \"f32[6, 6][6, 1]cpu\" = torch.ops.aten.addmm.default(b1, y1v, t1)\n"
        "        hr: \"f32[6, 6][6, 1]cpu\" = torch.ops.aten.relu.default(h)\n"
        "        t2: \"f32[6, 4][1, 6]cpu\" = torch.ops.aten.t.default(w2)\n"
        "        o2: \"f32[6, 4][4, 1]cpu\" = torch.ops.aten.addmm.default(b2, hr, t2)\n"
        "        o2v: \"f32[2, 3, 4][12, 4, 1]cpu\" = torch.ops.aten.view.default(o2, [2, 3, 4])\n"
        "        r2: \"f32[2, 3, 4][12, 4, 1]cpu\" = torch.ops.aten.add.Tensor(o2v, y1)\n"
        "        ln2 = torch.ops.aten.native_layer_norm.default(r2, [4], nw2, nb2, 1e-05)\n"
        "        y2: \"f32[2, 3, 4][12, 4, 1]cpu\" = ln2[0]\n"
        "        return (y2,)\n";
    Graph *gf = parsed(fused), *gr = parsed(ref);
    const int64_t sz[][2] = {{12, 4}, {12, 0}, {4, 4}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {6, 4}, {6, 0}, {4, 6}, {4, 0}};
    Tensor *ins[14];
    ins[0] = vals(3, (int64_t[]){2, 3, 4}, 1, 1.5);
    for (int i = 0; i < 12; i++) ins[1 + i] = vals(sz[i][1] ? 2 : 1, sz[i], i + 2, 0.8);
    Tensor *mf = TD(DT_F32, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, -INFINITY, 0});
    Tensor *mb = TD(DT_BOOL, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, 1, 0});
    int nf = 0, nr = 0;
    ins[13] = mf;
    IValue *of = gf ? cc_interp(ctx, gf, ins, 14, &nf) : NULL;
    ins[13] = mb;
    IValue *orf = gr ? cc_interp(ctx, gr, ins, 14, &nr) : NULL;
    bool same = of && orf && of[0].kind == IV_TENSOR && orf[0].kind == IV_TENSOR;
    double maxd = 0;
    for (int64_t e = 0; same && e < 24; e++) {
        double d = fabs(tensor_get_f(of[0].t, e) - tensor_get_f(orf[0].t, e));
        if (!(d <= maxd)) maxd = d;
    }
    ok(same && maxd < 1e-5, "the fused encoder layer (float key padding mask, -inf hides key 1 of batch 1) equals its ops one by one");
    if (!(same && maxd < 1e-5)) diag("max difference %g: %s", maxd, ctx->err.msg);
    /* a hidden key changes the other rows of its batch only: batch 0 without the mask is the same */
    Tensor *m0 = TD(DT_F32, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 0, 0, 0});
    ins[13] = m0;
    int n0 = 0;
    IValue *o0 = gf ? cc_interp(ctx, gf, ins, 14, &n0) : NULL;
    bool b0 = o0 && of, b1 = false;
    for (int64_t e = 0; b0 && e < 12; e++) b0 = tensor_get_f(o0[0].t, e) == tensor_get_f(of[0].t, e);
    for (int64_t e = 12; o0 && of && e < 24; e++) b1 |= tensor_get_f(o0[0].t, e) != tensor_get_f(of[0].t, e);
    ok(b0 && b1, "mask_type 1 is a key padding mask per batch: batch 0 unchanged, batch 1 changed");
    ins[13] = mf;
    ok(gf && cc_c_agrees(ctx, gf, ins, 14, 1e-6), "the fused encoder layer: the compiled C module (a FallbackKernel) agrees");
    if (of) interp_free_outputs(of, nf);
    if (orf) interp_free_outputs(orf, nr);
    if (o0) interp_free_outputs(o0, n0);
    graph_free(gf); graph_free(gr);
    for (int i = 0; i < 13; i++) tensor_unref(ins[i]);
    tensor_unref(mf); tensor_unref(mb); tensor_unref(m0);
}

/* ---- move_constructors_to_cuda and index_put's cpu scalar value ---- */
/* the device of node `name` after move_constructors_to_cuda on fx: "cpu" or "cuda" */
static const char *moved_to(const char *fx, const char *name) {
    Graph *g = parsed(fx);
    PassCtx pc = {.ctx = ctx};
    const char *r = "(fails)";
    if (g && pass_move_constructors_to_cuda(&pc, g) == 0) {
        Node *n = graph_find(g, name);
        r = !n ? "(no node)" : n->meta.device.kind == DEV_CUDA ? "cuda" : "cpu";
    }
    for (int k = 0; k < pc.nchanges; k++) { free(pc.changes[k].node); free(pc.changes[k].reason); }
    free(pc.changes);
    graph_free(g);
    return r;
}

static void test_index_put_cpu_value(void) {
    const char *fx_bool =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[5, 6][6, 1]cuda:0\"):\n"
        "        lt: \"b8[5, 6][6, 1]cuda:0\" = torch.ops.aten.lt.Scalar(x, -0.5)\n"
        "        full_default: \"f32[][]cpu\" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        index_put: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.index_put.default(x, [lt], full_default)\n"
        "        return (index_put,)\n";
    is_str(moved_to(fx_bool, "full_default"), "cpu", "index_put with a bool mask keeps its cpu scalar value on the cpu (masked_fill_, no nonzero sync)");
    const char *fx_long =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[5, 6][6, 1]cuda:0\", i: \"i64[3][1]cuda:0\"):\n"
        "        full_default: \"f32[][]cpu\" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        index_put: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.index_put.default(x, [i], full_default)\n"
        "        return (index_put,)\n";
    is_str(moved_to(fx_long, "full_default"), "cuda", "with an int64 index the cpu scalar value moves to cuda (allow_cpu_device)");
    const char *fx_vec =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[5, 6][6, 1]cuda:0\"):\n"
        "        lt: \"b8[5, 6][6, 1]cuda:0\" = torch.ops.aten.lt.Scalar(x, -0.5)\n"
        "        full_default: \"f32[2][1]cpu\" = torch.ops.aten.full.default([2], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
        "        index_put: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.index_put.default(x, [lt], full_default)\n"
        "        return (index_put,)\n";
    is_str(moved_to(fx_vec, "full_default"), "cuda", "a two-element cpu value is no scalar: it moves");
}

/* ---- an OpOverloadPacket target ---- */
static void test_packet_target(void) {
    const char *fx =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[3][1]cpu\"):\n"
        "        clone: \"f32[3][1]cpu\" = torch.ops.aten.clone(x)\n"
        "        add: \"f32[3][1]cpu\" = torch.ops.aten.add.Tensor(clone, 1)\n"
        "        return (add,)\n";
    Graph *g = parsed(fx);
    ok(g && g->nodes[1]->op && !strcmp(g->nodes[1]->op->name, "aten.clone.default"), "torch.ops.aten.clone resolves to its default overload");
    char *text = g ? fx_print(g, false) : NULL;
    ok(text && strstr(text, "= torch.ops.aten.clone(x)"), "and prints back as the packet");
    free(text);
    Tensor *x = TD(DT_F32, 1, (int64_t[]){3}, (double[]){1, -2, 0.5});
    interp_is(g, (Tensor *[]){x}, 1, 0, (double[]){2, -1, 1.5}, 3, 0, "clone(x) + 1");
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char *ir = m ? ir_print(m) : NULL;
    ok(ir && !strstr(ir, "Fallback"), "the packet lowers as clone does (a Pointwise, no FallbackKernel)");
    if (ir && strstr(ir, "Fallback")) diag("%s", ir);
    free(ir);
    if (m) ir_free(m);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x}, 1, 0), "the packet: the compiled C module agrees");
    graph_free(g);
    tensor_unref(x);
}

int main(void) {
    ctx = mi_ctx_new();
    test_complex_repr();
    test_complex_scalar();
    test_unique_counts();
    test_encoder_layer();
    test_index_put_cpu_value();
    test_packet_target();
    mi_ctx_free(ctx);
    return done_testing();
}
