/* test_lowering_unroll.c — Reduction.create's unrolling (core/lowering/lowering_reductions.c
 * unroll): a reduction over fewer than 8 elements of static size becomes a Pointwise combining
 * them one after the other; 8 or more stay a Reduction, and so does a reduction to a single
 * element on the cpu (not on cuda); a small variance takes two unrolled sums (lowering.py
 * use_two_step_variance); readers made after an unrolled value was realized count it as one load
 * (lw_fn_cost). Each graph's IR interpreter run equals the graph
 * interpreter's, argmax with ties and NaN included (the first maximal index; NaN wins). */
#include "tap.h"
#include "lowering/lowering.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int count(const IrModule *m, bool reduction) {
    int n = 0;
    for (int i = 0; i < m->nbufs; i++)
        n += m->bufs[i]->kind == BUF_COMPUTED && m->bufs[i]->is_reduction == reduction;
    return n;
}

/* lower `body` over one input x of shape `shape` on dev; reductions / pointwise buffers counted;
 * the IR interpreter against the graph interpreter on x = vals */
static void check(MiCtx *ctx, const char *dev, const char *shape, const char *body, const double *vals, int nvals,
                  int want_red, int want_pw, const char *what) {
    char text[2048];
    snprintf(text, sizeof text, "class M(torch.nn.Module):\n    def forward(self, arg0_1: \"%s%s\"):\n%s", shape, dev, body);
    Graph *g = fx_parse(ctx, text, strlen(text), "<unroll>", 1);
    if (!ok(g != NULL, "%s: parses", what)) return;
    ops_resolve_graph(g);
    IrModule *m = ir_lower(ctx, g);
    if (!ok(m != NULL, "%s: lowers", what)) { graph_free(g); return; }
    is_int(count(m, true), want_red, "%s: %d reduction buffer(s)", what, want_red);
    is_int(count(m, false), want_pw, "%s: %d pointwise buffer(s)", what, want_pw);
    const Node *p = g->nodes[0];
    int64_t sz[MI_MAX_DIMS];
    for (int d = 0; d < p->meta.ndim; d++) sym_is_int(p->meta.size[d], &sz[d]);
    IValue a = {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, p->meta.ndim, sz)};
    IValue b = {.kind = IV_TENSOR, .t = tensor_new(ctx, DT_F32, p->meta.ndim, sz)};
    for (int64_t k = 0; k < tensor_numel(a.t); k++) {
        tensor_set_f(a.t, k, vals[k % nvals]);
        tensor_set_f(b.t, k, vals[k % nvals]);
    }
    IValue *o1 = NULL, *o2 = NULL;
    int n1 = 0, n2 = 0;
    bool same = ir_interp_run(ctx, m, &a, 1, &o1, &n1) == 0 && interp_run(ctx, g, &b, 1, &o2, &n2) == 0 && n1 == n2;
    for (int j = 0; same && j < n1; j++) same = tensor_compare(o1[j].t, o2[j].t, 1e-6, 1e-6).ok;
    ok(same, "%s: the IR interpreter equals the graph interpreter", what);
    if (o1) interp_free_outputs(o1, n1);
    if (o2) interp_free_outputs(o2, n2);
    tensor_unref(a.t);
    tensor_unref(b.t);
    ir_free(m);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    static const double v[] = {0.5, -1.25, 3.0, 3.0, 2.0, -0.75, 1.5};
    static const double nan_v[] = {1.0, NAN, 2.0, 2.0, -1.0, 5.0};
    static const double small[] = {-0.2, 0.1, -0.05, 0.15, 0.0};   /* (x + 1)^16 stays finite */
    check(ctx, "cpu", "f32[6, 4][4, 1]",
          "        sum_1: \"f32[6][1]cpu\" = torch.ops.aten.sum.dim_IntList(arg0_1, [1])\n        return (sum_1,)\n", v, 7, 0, 1,
          "sum over 4 elements (unrolled)");
    check(ctx, "cpu", "f32[6, 8][8, 1]",
          "        sum_1: \"f32[6][1]cpu\" = torch.ops.aten.sum.dim_IntList(arg0_1, [1])\n        return (sum_1,)\n", v, 7, 1, 0,
          "sum over 8 elements (a Reduction)");
    check(ctx, "cpu", "f32[4][1]",
          "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg0_1)\n        return (sum_1,)\n", v, 7, 1, 0,
          "sum to one element on the cpu (a Reduction)");
    check(ctx, "cuda:0", "f32[4][1]",
          "        sum_1: \"f32[][]cuda:0\" = torch.ops.aten.sum.default(arg0_1)\n        return (sum_1,)\n", v, 7, 0, 1,
          "sum to one element on cuda (unrolled)");
    check(ctx, "cpu", "f32[5, 3][3, 1]",
          "        amax: \"f32[5][1]cpu\" = torch.ops.aten.amax.default(arg0_1, [1])\n        return (amax,)\n", v, 7, 0, 1,
          "amax over 3 elements (unrolled)");
    check(ctx, "cpu", "f32[4, 3][3, 1]",
          "        argmax: \"i64[4][1]cpu\" = torch.ops.aten.argmax.default(arg0_1, 1)\n        return (argmax,)\n", nan_v, 6, 0, 1,
          "argmax over 3 elements with ties and NaN (unrolled)");
    /* use_two_step_variance: a variance over fewer than 8 elements is sum((x - mean)^2) / (N - c),
     * two unrolled sums (pointwise); var_mean realizes its mean; 8 or more stay Welford */
    check(ctx, "cpu", "f32[5, 7][7, 1]",
          "        var: \"f32[7][1]cpu\" = torch.ops.aten.var.correction(arg0_1, [0], correction = 1)\n        return (var,)\n", v, 7, 0, 1,
          "var over 5 rows (two steps, unrolled)");
    check(ctx, "cpu", "f32[6, 3][3, 1]",
          "        var_mean = torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 0)\n"
          "        getitem: \"f32[6][1]cpu\" = var_mean[0]\n        getitem_1: \"f32[6][1]cpu\" = var_mean[1];  var_mean = None\n"
          "        return (getitem, getitem_1)\n", v, 7, 0, 2, "var_mean over 3 columns (the mean realized, then the variance)");
    check(ctx, "cpu", "f32[4, 8][8, 1]",
          "        std: \"f32[4][1]cpu\" = torch.ops.aten.std.correction(arg0_1, [1], correction = 1)\n        return (std,)\n", v, 7, 1, 1,
          "std over 8 elements (Welford)");
    /* lw_fn_cost: a value realized at its node (amax and the log of the sum, both returned) is
     * one load for the readers made after it, so log_softmax's x - amax - log stays inline in
     * its reader (neg) as in Inductor's ArcFace kernel, not realized by our "too large" guard
     * on the 2 000 calls the two unrolled reductions had while pending: amax, the sum (over 30
     * ops: has_large_inner_fn), its log and neg -- 4 buffers, not 5 */
    check(ctx, "cuda:0", "f32[5, 6][6, 1]",
          "        add: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.add.Tensor(arg0_1, 1)\n"
          "        mul: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.mul.Tensor(add, add)\n"
          "        mul_1: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.mul.Tensor(mul, mul)\n"
          "        mul_2: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.mul.Tensor(mul_1, mul_1)\n"
          "        mul_3: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.mul.Tensor(mul_2, mul_2)\n"
          "        amax: \"f32[5, 1][1, 1]cuda:0\" = torch.ops.aten.amax.default(mul_3, [1], True)\n"
          "        sub: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.sub.Tensor(mul_3, amax)\n"
          "        mul_4: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.mul.Tensor(sub, 30.0)\n"
          "        exp: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.exp.default(mul_4)\n"
          "        sum_1: \"f32[5, 1][1, 1]cuda:0\" = torch.ops.aten.sum.dim_IntList(exp, [1], True)\n"
          "        log: \"f32[5, 1][1, 1]cuda:0\" = torch.ops.aten.log.default(sum_1)\n"
          "        sub_1: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.sub.Tensor(mul_4, log)\n"
          "        neg: \"f32[5, 6][6, 1]cuda:0\" = torch.ops.aten.neg.default(sub_1)\n"
          "        return (amax, log, neg)\n", small, 5, 0, 4,
          "log_softmax after two returned unrolled reductions (x - amax - log inline in its reader)");
    mi_ctx_free(ctx);
    return done_testing();
}
