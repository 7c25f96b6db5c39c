/* test_view_bits.c — ATen's conjugate / negative bits in our metas (core/ops/ops_view_bits.c):
 * _conj sets the conjugate bit of a complex tensor, views keep it, ops that write a fresh tensor
 * clear it; op_infer_meta agrees with the derivation over a loaded graph; and remove_noop_ops
 * compares the bits as post_grad.py's same_meta does: in a backward whose saved input is the
 * forward's _conj (hyena's FFT convolution), clone(_conj) resolves the bit and stays, while the
 * same backward without its forward loses the clone. */
#include "fx_passes/passes.h"
#include "ops/interp.h"
#include "tap.h"
#include "tests/support/op_graph.h"

#include <string.h>

static MiCtx *ctx;

static bool conj_of(const Graph *g, const char *name) {
    const Node *n = graph_find((Graph *)g, name);
    return n && n->has_meta && n->meta.is_conj;
}
static bool neg_of(const Graph *g, const char *name) {
    const Node *n = graph_find((Graph *)g, name);
    return n && n->has_meta && n->meta.is_neg;
}

#define FWD_PARAMS "x: \"c64[2, 3][3, 1]cpu\", y: \"f32[2, 3][3, 1]cpu\""
#define FWD_BODY \
    "        _conj: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten._conj.default(x)\n" \
    "        p: \"c64[3, 2][1, 3]cpu\" = torch.ops.aten.permute.default(_conj, [1, 0])\n" \
    "        c: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten.clone.default(_conj)\n" \
    "        m: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten.mul.Tensor(c, c)\n" \
    "        cc: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten._conj.default(_conj)\n" \
    "        rc: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten._conj.default(y)\n"
#define NEG_BODY \
    "        ng: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten._neg_view.default(y)\n" \
    "        ngv: \"f32[6][1]cpu\" = torch.ops.aten.view.default(ng, [6])\n" \
    "        ngc: \"f32[6][1]cpu\" = torch.ops.aten.clone.default(ngv)\n"

static void test_derivation(void) {
    Graph *g = og_graph(ctx, FWD_PARAMS, FWD_BODY NEG_BODY, "m, _conj, p, cc, rc, ngv, ngc");
    ok(g && conj_of(g, "_conj") && !conj_of(g, "x"), "_conj of a c64 tensor has the conjugate bit, its input not");
    ok(g && conj_of(g, "p"), "a permute of it keeps the bit (a view)");
    ok(g && !conj_of(g, "c") && !conj_of(g, "m"), "clone resolves it; mul of the clone is plain");
    ok(g && !conj_of(g, "cc"), "_conj of a conjugate view clears the bit");
    ok(g && !conj_of(g, "rc") && !neg_of(g, "rc"), "_conj of a real tensor is the tensor itself: no bit");
    ok(g && neg_of(g, "ng") && neg_of(g, "ngv") && !neg_of(g, "ngc"), "_neg_view sets the negative bit, view keeps it, clone clears it");
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    const Node *p = g ? graph_find(g, "p") : NULL, *c = g ? graph_find(g, "c") : NULL;
    ok(p && op_infer_meta(ctx, g, p, m, &nm) == 0 && m[0].is_conj, "op_infer_meta gives the permute the bit");
    nm = OP_MAX_OUTS;
    ok(c && op_infer_meta(ctx, g, c, m, &nm) == 0 && !m[0].is_conj, "and the clone none");
    ok(p && c && !meta_equal(&graph_find(g, "_conj")->meta, &c->meta), "meta_equal tells _conj from its clone (same sizes, strides, dtype)");
    graph_free(g);
}

/* the backward's text after every post-grad pass, with or without its forward */
static char *backward_after_passes(bool link, IValue **in_out, int *nin_out) {
    Graph *fw = og_graph(ctx, FWD_PARAMS, FWD_BODY, "m, _conj, p, cc, rc");
    Graph *bw = og_graph(ctx, "_conj: \"c64[2, 3][3, 1]cpu\", tangents_1: \"c64[2, 3][3, 1]cpu\"",
                         "        clone: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten.clone.default(_conj)\n"
                         "        mul: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten.mul.Tensor(tangents_1, clone)\n", "mul");
    char *txt = NULL;
    if (fw && bw) {
        int bits = link ? ops_view_bits_from_forward(bw, fw) : 0;
        if (link) is_int(bits, 1, "one saved input is a conjugate view in the forward");
        IValue *in = NULL;
        int nin = 0, taken = 0;
        int rc = link ? interp_random_inputs_from_forward(ctx, bw, fw, &in, &nin, &taken) : interp_random_inputs(ctx, bw, NULL, 0, &in, &nin);
        if (rc == 0) {
            PassManager *pm = pm_new(ctx, bw, in, nin);
            pm_run_all(pm);
            const PassStep *last = pm_step_record(pm, pm_num_passes(pm) - 1);
            ok(last && last->checked && last->numerics_ok, "%s: the passes keep the numerics", link ? "linked" : "alone");
            txt = fx_print(pm_graph(pm), false);
            pm_free(pm);
            if (in_out) { *in_out = in; *nin_out = nin; }
            else interp_free_outputs(in, nin);
        }
    }
    graph_free(fw);
    graph_free(bw);
    return txt;
}

static void test_noop_keeps_resolving_clone(void) {
    IValue *in = NULL;
    int nin = 0;
    char *linked = backward_after_passes(true, &in, &nin);
    ok(linked && strstr(linked, "torch.ops.aten.clone.default(_conj)"), "with its forward: clone(_conj) stays (same_meta compares is_conj)");
    if (linked && !strstr(linked, "clone.default(_conj)")) diag("%s", linked);
    /* the saved input's value is the forward's conjugate: x's conjugate, element by element */
    ok(in && nin == 2 && in[0].kind == IV_TENSOR, "inputs from the forward");
    free(linked);
    interp_free_outputs(in, nin);
    char *alone = backward_after_passes(false, NULL, NULL);
    ok(alone && !strstr(alone, "aten.clone"), "without it: the clone is a no-op and goes");
    free(alone);
}

/* the saved tensor's value from the forward run is the conjugate of the forward's random input */
static void test_saved_value(void) {
    Graph *fw = og_graph(ctx, "y: \"f32[2, 3, 2][6, 2, 1]cpu\"",
                         "        x: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten.view_as_complex.default(y)\n"
                         "        _conj: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten._conj.default(x)\n", "_conj");
    Graph *bw = og_graph(ctx, "y: \"f32[2, 3, 2][6, 2, 1]cpu\", _conj: \"c64[2, 3][3, 1]cpu\"",
                         "        c: \"c64[2, 3][3, 1]cpu\" = torch.ops.aten.clone.default(_conj)\n", "c");
    IValue *in = NULL;
    int nin = 0, taken = 0;
    bool good = fw && bw && interp_random_inputs_from_forward(ctx, bw, fw, &in, &nin, &taken) == 0 && taken == 2;
    for (int64_t e = 0; good && e < 6; e++) {
        double cr, ci;
        tensor_get_c(in[1].t, e, &cr, &ci);
        good = cr == tensor_get_f(in[0].t, 2 * e) && ci == -tensor_get_f(in[0].t, 2 * e + 1) && ci != 0;
    }
    ok(good, "the saved _conj is the conjugate of the primal it was computed from");
    interp_free_outputs(in, nin);
    graph_free(fw);
    graph_free(bw);
}

int main(void) {
    ctx = mi_ctx_new();
    test_derivation();
    test_noop_keeps_resolving_clone();
    test_saved_value();
    mi_ctx_free(ctx);
    return done_testing();
}
