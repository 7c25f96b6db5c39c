/* test_lowering_frexp.c — frexp.Tensor lowered as Inductor's lowering.py lowers it (two Pointwise
 * values of ops.frexp's items; core/lowering/lowering_pointwise.c) instead of a FallbackKernel:
 * the mantissa and exponent of zeros, normal, tiny, huge, infinite and NaN values in float32 and
 * float64 from the IR interpreter and the compiled C module equal the reference interpreter's
 * (std::frexp) and values worked by hand; both results fuse into one kernel with their reader;
 * the CUDA source compiles with nvcc. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"

#include <math.h>
#include <string.h>

#define FX "tests/fixtures/lowering/frexp.py"

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    int64_t sx = 12, sy = 6;
    static const double xv[12] = {0, -0.0, 1, -1, 12, 0.1, 1e-30, INFINITY, -INFINITY, NAN, 3.0e38, -7.25};
    static const double yv[6] = {1e-300, -3.0, 1e300, 0.5, 0, NAN};
    Tensor *x = tensor_new(ctx, DT_F32, 1, &sx), *y = tensor_new(ctx, DT_F64, 1, &sy);
    for (int k = 0; k < 12; k++) tensor_set_f(x, k, xv[k]);
    for (int k = 0; k < 6; k++) tensor_set_f(y, k, yv[k]);
    IValue in[2] = {{.kind = IV_TENSOR, .t = x}, {.kind = IV_TENSOR, .t = y}}, *ref = NULL;
    Graph *g = tf_load_ref(ctx, FX, in, 2, &ref, 5);
    if (!ok(g != NULL, "%s loads and the reference interpreter runs", FX)) { diag("%s", ctx->err.msg); return exit_status(); }
    /* by hand: 12 = 0.75 * 2^4, -7.25 = -0.90625 * 2^3, 1e-30 = m * 2^-99. No subnormals: the
     * compiled modules run with denormals flushed to zero (README, Performance), as every kernel */
    ok(tensor_get_f(ref[0].t, 4) == 0.75 && tensor_get_f(ref[1].t, 4) == 4 && tensor_get_f(ref[0].t, 11) == -0.90625 &&
           tensor_get_f(ref[1].t, 11) == 3 && tensor_get_f(ref[1].t, 6) == -99 && tensor_get_f(ref[1].t, 0) == 0,
       "frexp(12) = (0.75, 4), frexp(-7.25) = (-0.90625, 3), 1e-30 has exponent -99, frexp(0) = (0, 0)");
    char why[300] = "";
    ok(lowering_supported(g, why, sizeof why), "frexp has a lowering (%s)", why);
    CgBuild b;
    if (!ok(cg_compile(ctx, g, &b, 0) == 0, "lowers, schedules and compiles")) diag("%s", ctx->err.msg);
    int next = 0;
    for (int i = 0; b.m && i < b.m->nbufs; i++) next += b.m->bufs[i]->kind == BUF_EXTERN;
    ok(b.s && next == 0 && sched_num_kernels(b.s) == 1, "no FallbackKernel; one kernel (%d) computes both frexps and the add",
       b.s ? sched_num_kernels(b.s) : -1);
    for (int pass = 0; pass < 2; pass++) {
        IValue *got = NULL;
        int ngot = 0;
        int rc = pass ? (b.rt ? rt_run(ctx, b.rt, g, in, 2, &got, &ngot, NULL) : -1) : (b.m ? ir_interp_run(ctx, b.m, in, 2, &got, &ngot) : -1);
        bool same = rc == 0 && ngot == 5;
        for (int k = 0; same && k < 5; k++) {
            const Tensor *r = ref[k].t, *o = got[k].t;
            same = o->dtype == r->dtype && tensor_numel(o) == tensor_numel(r);
            for (int64_t i = 0; same && i < tensor_numel(r); i++) {
                double u = tensor_get_f(r, i), v = tensor_get_f(o, i);
                if (!(u == v || (isnan(u) && isnan(v)))) { diag("output %d [%lld]: %g, reference %g", k, (long long)i, v, u); same = false; }
            }
        }
        ok(same, "%s: mantissas and exponents (zeros, tiny and huge values, inf, NaN; f32 and f64) equal the reference interpreter's",
           pass ? "the compiled C module" : "the IR interpreter");
        if (rc) diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
    }
    cg_free(&b);
    ctx->target = MI_DEV_CUDA;
    cg_compile(ctx, g, &b, CG_SOURCE);
    ctx->target = MI_DEV_CPU;
    ok(b.src && strstr(b.src, "ilogbf("), "CUDA source generated (ilogb / scalbn)");
    tf_nvcc_ok("frexp", b.src);
    cg_free(&b);
    interp_free_outputs(ref, 5);
    ivalue_clear(&in[0]);
    ivalue_clear(&in[1]);
    graph_free(g);
    mi_ctx_free(ctx);
    return done_testing();
}
