/* test_lowering_gather.c — indirect indexing (core/lowering/lowering_gather.c and the
 * indirect_indexing / atomic_add handler ops of core/ir): embedding, index (negative indexes,
 * broadcast and non-adjacent index tensors), gather, index_select, index_put (plain and
 * accumulating over duplicate indexes), scatter (src / value), scatter_add and scatter_reduce
 * lower to Pointwise / Scatter kernels as Inductor's lowerings do; their values from the IR
 * interpreter and from the compiled C module equal the reference interpreter's and, for a few
 * elements, ATen's definitions worked out here; the IR text shows set_indirect0 and the
 * atomic_add store; an index past its dim is an error naming it, in both runners; nearest
 * upsampling lowers to Pointwise kernels with one indirect index per resized dim. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GATHER "tests/fixtures/lowering/gather.py"
#define NIN 8
#define NOUT 12

static Tensor *tnew(MiCtx *ctx, DType dt, int nd, int64_t a, int64_t b, int64_t c) {
    int64_t s[3] = {a, b, c};
    return tensor_new(ctx, dt, nd, s);
}

/* inputs: x [6, 5], ids [4] = {3, -1, 0, 3} (a negative and a duplicate), idx [6, 3] (distinct
 * columns per row), v [4, 5], x3 [3, 4, 5], rows [2, 1] = {{1}, {2}}, src [6, 3], val [5] */
static void make_inputs(MiCtx *ctx, IValue *in) {
    Tensor *t[NIN];
    t[0] = tnew(ctx, DT_F32, 2, 6, 5, 0);
    t[1] = tnew(ctx, DT_I64, 1, 4, 0, 0);
    t[2] = tnew(ctx, DT_I64, 2, 6, 3, 0);
    t[3] = tnew(ctx, DT_F32, 2, 4, 5, 0);
    t[4] = tnew(ctx, DT_F32, 3, 3, 4, 5);
    t[5] = tnew(ctx, DT_I64, 2, 2, 1, 0);
    t[6] = tnew(ctx, DT_F32, 2, 6, 3, 0);
    t[7] = tnew(ctx, DT_F32, 1, 5, 0, 0);
    for (int k = 0; k < 30; k++) tensor_set_f(t[0], k, (k * 7) % 11 - 5.5);
    static const int ids[4] = {3, -1, 0, 3};
    for (int k = 0; k < 4; k++) tensor_set_f(t[1], k, ids[k]);
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 3; c++) tensor_set_f(t[2], r * 3 + c, (r + 2 * c) % 5);
    for (int k = 0; k < 20; k++) tensor_set_f(t[3], k, k * 0.25);
    for (int k = 0; k < 60; k++) tensor_set_f(t[4], k, k);
    tensor_set_f(t[5], 0, 1);
    tensor_set_f(t[5], 1, 2);
    for (int k = 0; k < 18; k++) tensor_set_f(t[6], k, 100 + k);
    for (int k = 0; k < 5; k++) tensor_set_f(t[7], k, -k);
    for (int i = 0; i < NIN; i++) in[i] = (IValue){.kind = IV_TENSOR, .t = t[i]};
}

static int count_kind(const IrModule *m, BufKind k) {
    int n = 0;
    for (int i = 0; i < m->nbufs; i++) n += m->bufs[i]->kind == k && ir_is_op(m->bufs[i]);
    return n;
}

/* every output of got equals ref's */
static void agree(const IValue *ref, const IValue *got, const char *what) {
    static const char *names[NOUT] = {"embedding", "index (slice, index)", "index (broadcast)", "index (apart)",
                                      "gather", "index_select", "index_put", "index_put accumulate",
                                      "scatter src", "scatter value", "scatter_add", "scatter_reduce sum"};
    for (int j = 0; j < NOUT; j++) {
        const Tensor *a = ref[j].t, *b = got[j].t;
        int bad = !a || !b || tensor_numel(a) != tensor_numel(b);
        for (int64_t k = 0; !bad && k < tensor_numel(a); k++)
            if (fabs(tensor_get_f(a, k) - tensor_get_f(b, k)) > 1e-5) {
                diag("%s: %s[%lld] = %g, reference %g", what, names[j], (long long)k, tensor_get_f(b, k), tensor_get_f(a, k));
                bad = 1;
            }
        ok(!bad, "%s: %s agrees with the reference interpreter", what, names[j]);
    }
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    IValue in[NIN], *ref = NULL;
    make_inputs(ctx, in);
    int nref = NOUT;
    Graph *g = tf_load_ref(ctx, GATHER, in, NIN, &ref, NOUT);
    if (!ok(g != NULL, "%s loads and the reference interpreter runs", GATHER)) { diag("%s", ctx->err.msg); return exit_status(); }
    /* ATen's definitions on a few elements */
    ok(tensor_get_f(ref[0].t, 5) == tensor_get_f(in[0].t, 25), "embedding: id -1 reads row 5");
    ok(fabs(tensor_get_f(ref[7].t, 15) - fmax(0, tensor_get_f(in[0].t, 15) + 0 + 3.75)) < 1e-6,
       "index_put accumulate: row 3 gets both values of the duplicate id (relu(x + v[0] + v[3]))");
    ok(tensor_get_f(ref[8].t, 0 * 5 + 2) == 101, "scatter: x[0, idx[0, 1] = 2] = src[0, 1]");

    /* threads 0: Inductor's CPU rule sends scatter_add / scatter_reduce sum to ATen (two
     * FallbackKernels); one thread: every op lowers */
    for (int th = 0; th <= 1; th++) {
        ctx->threads = th;
        char what[64];
        snprintf(what, sizeof what, "threads %s", th ? "1" : "default");
        CgBuild b;
        cg_compile(ctx, g, &b, 0);
        IrModule *m = b.m;
        if (!ok(m != NULL, "%s: lowers", what)) { diag("%s", ctx->err.msg); cg_free(&b); continue; }
        ok(count_kind(m, BUF_EXTERN) == (th ? 0 : 4), "%s: %d extern buffers (FallbackKernels and their MultiOutputs)", what, count_kind(m, BUF_EXTERN));
        IValue *got = NULL;
        int ngot = 0;
        if (ok(ir_interp_run(ctx, m, in, NIN, &got, &ngot) == 0 && ngot == NOUT, "%s: IR interpreter runs", what))
            agree(ref, got, what);
        else diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        if (th == 1) {
            char *txt = ir_print(m);
            ok(txt && strstr(txt, "set_indirect0 = self.set_indirect0(load)") && strstr(txt, "'atomic_add')") &&
                   strstr(txt, "MemoryDep('arg0_1', c1 + 5*tmp0, {c0: 4, c1: 5})") && strstr(txt, "buf7.mutations = ['buf6']"),
               "%s: the IR shows the indirect index, the dependency on tmp0 and the Scatter's mutation", what);
            free(txt);
        }
        char *src = b.src;
        RtModule *rt = b.rt;
        if (!ok(rt != NULL, "%s: compiles", what)) diag("%s", ctx->err.msg);
        if (th == 1 && src)
            ok(strstr(src, "mi_atomic_add_float(&") && strstr(src, "mi_index_oob("), "%s: atomic adds and index checks in the C", what);
        got = NULL;
        ngot = 0;
        if (rt && ok(rt_run(ctx, rt, g, in, NIN, &got, &ngot, NULL) == 0 && ngot == NOUT, "%s: the module runs", what))
            agree(ref, got, what);
        else if (rt) diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        if (rt && th == 1) {   /* an id past the 6 rows */
            tensor_set_f(in[1].t, 1, 7);
            got = NULL;
            ngot = 0;
            int rc = rt_run(ctx, rt, g, in, NIN, &got, &ngot, NULL);
            /* id 7 is past embedding's 6 rows and index_1's 5 columns: the kernel that runs first says so */
            ok(rc < 0 && (strstr(ctx->err.msg, "index 7 is out of bounds for dimension with size 6") ||
                          strstr(ctx->err.msg, "index 7 is out of bounds for dimension with size 5")),
               "an index past its dim: the module reports it (%s)", ctx->err.msg);
            interp_free_outputs(got, ngot);
            rc = ir_interp_run(ctx, m, in, NIN, &got, &ngot);
            ok(rc < 0 && strstr(ctx->err.msg, "out of bounds for dimension with size 6"), "... and the IR interpreter (%s)", ctx->err.msg);
            tensor_set_f(in[1].t, 1, -1);
        }
        cg_free(&b);
    }
    interp_free_outputs(ref, nref);
    for (int i = 0; i < NIN; i++) ivalue_clear(&in[i]);
    graph_free(g);

    /* nearest upsampling reads through indirect indexes too: Pointwise kernels, no fallback
     * (its values against the interpreter: tests/fixtures/codegen/upsample_nearest.py) */
    g = graph_load_file(ctx, "tests/fixtures/codegen/upsample_nearest.py");
    if (g) {
        ops_resolve_graph(g);
        IrModule *m = ir_lower(ctx, g);
        char *txt = m ? ir_print(m) : NULL;
        ok(m && count_kind(m, BUF_EXTERN) == 0 && count_kind(m, BUF_COMPUTED) == 4 && strstr(txt, "set_indirect1 = self.set_indirect1("),
           "upsample_nearest 1/2/3-d and exact: four Pointwise kernels, one indirect index per resized dim");
        free(txt);
        ir_free(m);
        graph_free(g);
    } else ok(0, "upsample fixture loads: %s", ctx->err.msg);
    mi_ctx_free(ctx);
    return exit_status();
}
