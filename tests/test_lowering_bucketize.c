/* test_lowering_bucketize.c — bucketize.Tensor / searchsorted.Tensor (core/lowering/
 * lowering_bucketize.c): FallbackKernels for the CPU (Inductor's cpp backend has no
 * BackendFeature.BUCKETIZE), Pointwise kernels calling ops.bucketize for a GPU, realized at once;
 * the IR interpreter's values equal the reference interpreter's (ATen's lower / upper bound:
 * ties on both sides, a NaN past the end, an N-d sorted_sequence with out_int32) and a few
 * worked by hand; the iota of a ragged repeat_interleave fuses into the search; the CUDA source
 * compiles with nvcc. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"
#include "codegen/codegen_c.h"

#include <math.h>
#include <string.h>

#define BK "tests/fixtures/lowering/bucketize_cuda.py"
#define NIN 5
#define NOUT 4

/* FallbackKernels of bucketize / searchsorted in m */
static int count_fallbacks(const IrModule *m) {
    int n = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        n += b->kind == BUF_EXTERN && b->ext == EXT_FALLBACK && b->fb &&
             (strstr(b->fb->kernel, "bucketize") || strstr(b->fb->kernel, "searchsorted"));
    }
    return n;
}

/* x [7, 9]: k / 4 - 4 (every boundary hit exactly), one NaN; e = 1 (boundaries 1..9); c = 1, 3,
 * 0, 2 (cumsum 1, 4, 4, 6); s2 [7, 5] = 0.5 (rows 0.5 .. 2.5); v2 [7, 3] = k / 8 */
static void make_inputs(MiCtx *ctx, IValue *in) {
    int64_t sx[2] = {7, 9}, se[1] = {9}, sc[1] = {4}, ss[2] = {7, 5}, sv[2] = {7, 3};
    Tensor *x = tensor_new(ctx, DT_F32, 2, sx), *e = tensor_new(ctx, DT_F32, 1, se), *c = tensor_new(ctx, DT_I64, 1, sc),
           *s2 = tensor_new(ctx, DT_F32, 2, ss), *v2 = tensor_new(ctx, DT_F32, 2, sv);
    for (int k = 0; k < 63; k++) tensor_set_f(x, k, k / 4.0 - 4.0);
    tensor_set_f(x, 20, NAN);
    for (int k = 0; k < 9; k++) tensor_set_f(e, k, 1);
    static const double cv[4] = {1, 3, 0, 2};
    for (int k = 0; k < 4; k++) tensor_set_f(c, k, cv[k]);
    for (int k = 0; k < 35; k++) tensor_set_f(s2, k, 0.5);
    for (int k = 0; k < 21; k++) tensor_set_f(v2, k, k / 8.0);
    Tensor *ts[NIN] = {x, e, c, s2, v2};
    for (int i = 0; i < NIN; i++) in[i] = (IValue){.kind = IV_TENSOR, .t = ts[i]};
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    IValue in[NIN], *ref = NULL;
    make_inputs(ctx, in);
    Graph *g = tf_load_ref(ctx, BK, in, NIN, &ref, NOUT);
    if (!ok(g != NULL, "%s loads and the reference interpreter runs", BK)) { diag("%s", ctx->err.msg); return exit_status(); }
    /* ATen's definitions by hand: x = 3 (k = 28) sits on boundary 3 (index 2) */
    ok(tensor_get_f(ref[3].t, 28) == 2, "bucketize(3, [1..9]) = 2 (right=False: boundaries < 3)");
    ok(tensor_get_f(ref[3].t, 20) == 9, "bucketize(NaN) = 9: past every boundary");
    static const double rs[10] = {0, 1, 1, 1, 3, 3, 4, 4, 4, 4};   /* searchsorted([1, 4, 4, 6], i, right=True) */
    int bad = 0;
    for (int k = 0; k < 10; k++) bad += tensor_get_f(ref[1].t, k) != rs[k];
    ok(bad == 0, "searchsorted(cumsum, iota, right=True) = 0 1 1 1 3 3 4 4 4 4 (the ragged repeat_interleave's rows)");

    /* the CPU: FallbackKernels, as Inductor's cpp backend */
    ctx->target = MI_DEV_CPU;
    IrModule *m = ir_lower(ctx, g);
    ok(m && count_fallbacks(m) == 4, "cpu: bucketize and the three searchsorted are FallbackKernels (%d)", m ? count_fallbacks(m) : -1);
    ir_free(m);

    ctx->target = MI_DEV_CUDA;
    CgBuild b;
    cg_compile(ctx, g, &b, CG_SOURCE);
    m = b.m;
    if (!ok(m != NULL, "cuda: lowers")) { diag("%s", ctx->err.msg); return exit_status(); }
    ok(count_fallbacks(m) == 0, "cuda: no FallbackKernel");
    IValue *got = NULL;
    int ngot = 0;
    if (ok(ir_interp_run(ctx, m, in, NIN, &got, &ngot) == 0 && ngot == NOUT, "cuda: the IR interpreter runs")) {
        static const char *names[NOUT] = {"bucketize + searchsorted(right=True) * x", "searchsorted(cumsum, iota)",
                                          "searchsorted N-d, out_int32, side='right'", "bucketize"};
        for (int j = 0; j < NOUT; j++) {
            CompareResult cr = tensor_compare(got[j].t, ref[j].t, 0, 0);
            ok(cr.ok && got[j].t->dtype == ref[j].t->dtype, "cuda: %s equals the reference interpreter", names[j]);
        }
    } else diag("%s", ctx->err.msg);
    interp_free_outputs(got, ngot);
    char *txt = ir_print(m);
    ok(txt && strstr(txt, "bucketize = ops.bucketize(load, ('buf0', 9, 9, 1), index_expr, torch.int64, False)") &&
           strstr(txt, "ops.bucketize(load, ('buf6', 5, 5, 1), index_expr, torch.int32, True)") &&
           strstr(txt, "StarDep(name='buf4', mode=None)"),
       "cuda: the IR shows ops.bucketize (the boundaries, the run's offset, the dtype, right) and the StarDep on the boundaries");
    free(txt);
    const Schedule *s = b.s;
    bool fused = false;
    for (int k = 0; s && k < s->nkernels; k++) fused |= s->kernels[k].name && !strcmp(s->kernels[k].name, "cuda_fused_iota_searchsorted_4");
    ok(fused, "cuda: the iota fuses into its search (Inductor's triton_poi_fused_repeat_interleave kernel)");
    ok(b.src && strstr(b.src, "(int64_t)mi_bucketize(buf4, (int64_t)") && strstr(b.src, "(int32_t)mi_bucketize(buf6, (int64_t)"),
       "cuda: the kernels call mi_bucketize on the boundaries buffer");
    tf_nvcc_ok("cuda", b.src);
    cg_free(&b);
    /* the C code generator names the GPU-only op */
    m = ir_lower(ctx, g);
    ctx->target = MI_DEV_CPU;
    Schedule *cs = m ? sched_run(ctx, m) : NULL;
    char *csrc = cs ? codegen_c(ctx, cs) : NULL;
    ok(!csrc && strstr(ctx->err.msg, "is not supported by the C code generator (a GPU lowering: lower the graph for the CPU)"),
       "C of a GPU lowering: %s", ctx->err.msg);
    free(csrc);
    sched_free(cs);
    ir_free(m);
    interp_free_outputs(ref, NOUT);
    for (int i = 0; i < NIN; i++) ivalue_clear(&in[i]);
    graph_free(g);
    mi_ctx_free(ctx);
    return done_testing();
}
