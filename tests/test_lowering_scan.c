/* test_lowering_scan.c — scans and sort (core/lowering/lowering_scan.c, ir_trace_scan, the IR
 * interpreter's rows in core/ir/ir_scan.c, the CUDA block scan of codegen_cuda_scan.c) on
 * tests/fixtures/lowering/scans_cuda.py: for the CPU target every cumsum / cumprod /
 * logcumsumexp / cummax / cummin / sort is a FallbackKernel (the cpp backend has no
 * BackendFeature.SCAN / SORT); for `set device cuda` none is, the IR interpreter's values equal
 * the reference interpreter's (ties in cummax / cummin, a NaN, int64 over a non-last dim, a row
 * of 1500 elements, a descending sort), the IR text shows Inductor's scan / sort calls, the
 * scheduler makes Inductor's kernels (scans fuse with their pointwise producer and consumer like
 * reductions of the same numel and rnumel), and the CUDA source compiles where nvcc exists. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCANS "tests/fixtures/lowering/scans_cuda.py"
#define NIN 3
#define NOUT 9

static void make_inputs(MiCtx *ctx, IValue *in) {
    int64_t s0[2] = {4, 40}, s1[2] = {6, 5}, s2[2] = {3, 1500};
    Tensor *a = tensor_new(ctx, DT_F32, 2, s0), *b = tensor_new(ctx, DT_I64, 2, s1), *c = tensor_new(ctx, DT_F32, 2, s2);
    for (int k = 0; k < 160; k++) tensor_set_f(a, k, ((k * 7) % 11) * 0.5 - 2.5);   /* ties in every row and column */
    tensor_set_f(a, 2 * 40 + 17, NAN);
    for (int k = 0; k < 30; k++) tensor_set_f(b, k, (k * 13) % 9 - 4);
    for (int k = 0; k < 4500; k++) tensor_set_f(c, k, ((k * 31) % 17) * 0.125 - 1);
    in[0] = (IValue){.kind = IV_TENSOR, .t = a};
    in[1] = (IValue){.kind = IV_TENSOR, .t = b};
    in[2] = (IValue){.kind = IV_TENSOR, .t = c};
}

static int count_ext(const IrModule *m, ExternKind k) {
    int n = 0;
    for (int i = 0; i < m->nbufs; i++) n += m->bufs[i]->kind == BUF_EXTERN && m->bufs[i]->ext == k;
    return n;
}

int main(void) {
    static const char *names[NOUT] = {"cumprod(sigmoid) + logcumsumexp", "cummax values", "cummax indices", "cummin values (dim 0)",
                                      "cummin indices (dim 0)", "cumsum int64 (dim 0)", "cumsum of 1500", "sort values", "sort indices"};
    MiCtx *ctx = mi_ctx_new();
    IValue in[NIN], *ref = NULL;
    make_inputs(ctx, in);
    int nref = NOUT;
    Graph *g = tf_load_ref(ctx, SCANS, in, NIN, &ref, NOUT);
    if (!ok(g != NULL, "%s loads and the reference interpreter runs", SCANS)) { diag("%s", ctx->err.msg); return exit_status(); }
    /* torch's definitions on a few elements */
    ok(tensor_get_f(ref[2].t, 1) == 1 && tensor_get_f(ref[1].t, 1) == tensor_get_f(in[0].t, 1), "cummax: row 0 rises at element 1");
    ok(isnan(tensor_get_f(ref[1].t, 2 * 40 + 39)) && tensor_get_f(ref[2].t, 2 * 40 + 39) == 17, "cummax: the NaN of row 2 holds to the end, with its index");

    /* the CPU target: fallbacks, as Inductor's cpp backend */
    IrModule *m = ir_lower(ctx, g);
    if (ok(m != NULL, "cpu: lowers"))
        ok(count_ext(m, EXT_FALLBACK) == 7, "cpu: every scan and the sort are FallbackKernels (%d)", count_ext(m, EXT_FALLBACK));
    else diag("%s", ctx->err.msg);
    ir_free(m);

    ctx->target = MI_DEV_CUDA;
    CgBuild cb;
    cg_compile(ctx, g, &cb, CG_SOURCE);
    m = cb.m;
    if (!ok(m != NULL, "cuda: lowers")) { diag("%s", ctx->err.msg); return exit_status(); }
    ok(count_ext(m, EXT_FALLBACK) == 0, "cuda: no FallbackKernel");
    IValue *got = NULL;
    int ngot = 0;
    if (ok(ir_interp_run(ctx, m, in, NIN, &got, &ngot) == 0 && ngot == NOUT, "cuda: the IR interpreter runs")) {
        for (int j = 0; j < NOUT; j++) {
            const Tensor *a = ref[j].t, *b = got[j].t;
            int bad = !a || !b || tensor_numel(a) != tensor_numel(b);
            for (int64_t k = 0; !bad && k < tensor_numel(a); k++) {
                double x = tensor_get_f(a, k), y = tensor_get_f(b, k);
                if (!(isnan(x) && isnan(y)) && !(fabs(x - y) <= 1e-4 * (1 + fabs(x)))) {
                    diag("%s[%lld] = %g, reference %g", names[j], (long long)k, y, x);
                    bad = 1;
                }
            }
            ok(!bad, "cuda: %s agrees with the reference interpreter", names[j]);
        }
    } else diag("%s", ctx->err.msg);
    interp_free_outputs(got, ngot);

    char *txt = ir_print(m);
    ok(txt && strstr(txt, "        scan = self.scan((torch.float32, torch.int64), (load, index_expr))\n"
                          "        getitem = scan[0]\n        getitem_1 = scan[1]\n") &&
           strstr(txt, "        scan = self.scan((torch.float32,), (sigmoid,))\n") &&
           strstr(txt, "        sort = ops.sort((torch.float32, torch.int16), (load, index_expr), False, True)\n"),
       "cuda: the IR shows the scan submodule calls and ops.sort, as Inductor's LoopBody");
    free(txt);

    Schedule *s = cb.s;
    if (ok(s != NULL, "cuda: schedules")) {
        static const char *want[] = {"cuda_fused_add_cummax_cumprod_logcumsumexp_sigmoid_sort_0", "cuda_fused_cummin_1",
                                     "cuda_fused_cumsum_2", "cuda_fused_cumsum_3"};
        bool all = sched_num_kernels(s) == 4;
        for (int k = 0; all && k < 4; k++) {
            all &= s->kernels[k].name && !strcmp(s->kernels[k].name, want[k]);
            if (!all) diag("kernel %d: %s, want %s", k, s->kernels[k].name ? s->kernels[k].name : "?", want[k]);
        }
        ok(all, "cuda: 4 kernels (%d): the row-0 scans, sort and add in one; cummin over dim 0 (numel 40, rnumel 4) and each cumsum apart",
           sched_num_kernels(s));
        const char *src = cb.src;
        ok(src && strstr(src, "mi_scan_chunk(MiSP<float>{") && strstr(src, "MiScanArg<1>()") && strstr(src, "MiScanLogAddExp()") &&
               strstr(src, "mi_block_sort<float>(") && strstr(src, "MiSP<int64_t>"),
           "cuda: the kernels scan in block chunks and sort in shared memory");
        tf_nvcc_ok("cuda", src);
    }
    cg_free(&cb);
    interp_free_outputs(ref, nref);
    for (int i = 0; i < NIN; i++) ivalue_clear(&in[i]);
    graph_free(g);
    mi_ctx_free(ctx);
    return done_testing();
}
