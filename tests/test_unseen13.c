/* test_unseen13.c — the rules the thirteenth batch of unseen models needed, each checked on
 * computed values (hand values from PyTorch's definitions, the interpreter, the compiled C
 * module) or on the exact text a user reads:
 *   - prims.device_put (cuda_ntxent_loss_train: `torch.cat([arange, arange]).to(sim.device)`):
 *     its meta (TensorMeta(a, device=device)), its values (a.to(device)), and Inductor's lowering
 *     (lowering.py _device_put -> to_device(copy=True)): a clone onto the same device, a value
 *     that reads no buffer moved as it is (DeviceCopy.create's constant_to_device), anything else
 *     an ir.DeviceCopy (an ExternKernelOut with a contiguous layout on the new device);
 *     compiled C agrees with the interpreter, the CUDA source builds;
 *   - cascade summation (cuda_large_full_reductions run on the CPU: the compiled C's float32 sum
 *     of 1M squares was off by 2.8e-4 relative): a float32 sum over more than 4096 elements
 *     accumulates through Inductor's CascadeSumHelper (cpp.py need_use_acc_helper,
 *     cpp_prefix.h), in the scalar, lane and column loops; 4096 elements and float64 sums keep
 *     their plain accumulators. */
#include "tap.h"
#include "ir/ir.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "scheduler/scheduler.h"
#include "tests/support/codegen_check.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)
#define parsed(fx) cc_parsed(ctx, fx, "unseen13.py")

/* ---- prims.device_put ---- */

static const char device_put_fx[] =
    "class G(torch.nn.Module):\n"
    "    def forward(self, x: \"i64[10][1]cuda:0\", y: \"f32[2, 3][1, 2]cpu\"):\n"
    "        iota: \"i64[5][1]cpu\" = torch.ops.prims.iota.default(5, start = 5, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        iota_1: \"i64[5][1]cpu\" = torch.ops.prims.iota.default(5, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        cat: \"i64[10][1]cpu\" = torch.ops.aten.cat.default([iota, iota_1]);  iota = iota_1 = None\n"
    "        device_put: \"i64[10][1]cuda:0\" = torch.ops.prims.device_put.default(cat, device(type='cuda', index=0));  cat = None\n"
    "        add: \"i64[10][1]cuda:0\" = torch.ops.aten.add.Tensor(device_put, x);  device_put = None\n"
    "        device_put_1: \"f32[2, 3][1, 2]cuda:0\" = torch.ops.prims.device_put.default(y, device(type='cuda', index=0));  y = None\n"
    "        mul: \"f32[2, 3][1, 2]cuda:0\" = torch.ops.aten.mul.Tensor(device_put_1, 2.0);  device_put_1 = None\n"
    "        device_put_2: \"i64[10][1]cuda:0\" = torch.ops.prims.device_put.default(x, device(type='cuda', index=0));  x = None\n"
    "        return (add, mul, device_put_2)\n";

/* does the ir text hold text? */
static bool ir_has(const char *ir, const char *text) { return ir && strstr(ir, text); }

static void test_device_put_meta_values(void) {
    Graph *g = parsed(device_put_fx);
    ok(g != NULL, "a graph with prims.device_put loads");
    if (!g) return;
    const Node *dp = graph_find(g, "device_put_1");
    /* _device_put_meta: TensorMeta(a, device=...): a's sizes and strides, the new device */
    ok(dp && dp->has_meta && dp->meta.device.kind == DEV_CUDA && dp->meta.ndim == 2, "device_put's meta is on cuda with a's rank");
    Tensor *x = TD(DT_I64, 1, (int64_t[]){10}, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    Tensor *y = TD(DT_F32, 2, (int64_t[]){2, 3}, (double[]){0.5, -1, 2, 3.25, 4, -6});
    int no = 0;
    IValue *o = cc_interp(ctx, g, (Tensor *[]){x, y}, 2, &no);
    /* cat([5..9], [0..4]) + x */
    ok(o && no == 3 && og_values(o[0].t, (double[]){6, 8, 10, 12, 14, 6, 8, 10, 12, 14}, 10, 0), "device_put(cat(iota, iota)) + x");
    ok(o && no == 3 && og_values(o[1].t, (double[]){1, -2, 4, 6.5, 8, -12}, 6, 0), "device_put(y) * 2 keeps y's values");
    ok(o && no == 3 && og_values(o[2].t, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 0), "device_put onto x's own device: x's values");
    if (o) interp_free_outputs(o, no);
    ok(cc_c_agrees(ctx, g, (Tensor *[]){x, y}, 2, 0), "the compiled C module agrees with the interpreter");
    tensor_unref(x);
    tensor_unref(y);
    graph_free(g);
}

static void test_device_put_lowering(void) {
    Graph *g = parsed(device_put_fx);
    if (!g) { ok(0, "graph"); return; }
    IrModule *m = ir_lower(ctx, g);
    char *ir = m ? ir_print(m) : NULL;
    if (!ir) diag("%s", ctx->err.msg);
    /* the cat on the CPU is a ConcatKernel; its DeviceCopy to cuda:0 a contiguous ExternKernelOut */
    ok(ir_has(ir, "ExternKernelSchedulerNode(DeviceCopy)"), "a value read from buffers is copied by a DeviceCopy");
    ok(ir_has(ir, "buf3: DeviceCopy\n    buf3.layout = FixedLayout('cuda:0', torch.int64, size=[10], stride=[1])"),
       "the DeviceCopy of the cat: FixedLayout on cuda:0, contiguous");
    /* y's strides (1, 2): the copy is contiguous (FlexibleLayout of its size), mul reads it */
    ok(ir_has(ir, "DeviceCopy\n    buf5.layout = FixedLayout('cuda:0', torch.float32, size=[2, 3], stride=[3, 1])"),
       "the DeviceCopy of a strided input is contiguous on the new device");
    /* onto the same device: clone, no extern; two DeviceCopy in all */
    int n = 0;
    for (const char *p = ir; p && (p = strstr(p, ": DeviceCopy\n")); p++) n++;
    ok(n == 2, "device_put onto x's own device is a clone, no DeviceCopy (%d DeviceCopy)", n);
    free(ir);
    if (m) ir_free(m);
    graph_free(g);
    /* a value that reads no buffer moves as it is (constant_to_device): no DeviceCopy */
    Graph *g2 = parsed("class G(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[4][1]cuda:0\"):\n"
                       "        iota: \"i64[4][1]cpu\" = torch.ops.prims.iota.default(4, start = 1, step = 2, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
                       "        device_put: \"i64[4][1]cuda:0\" = torch.ops.prims.device_put.default(iota, device(type='cuda', index=0));  iota = None\n"
                       "        add: \"f32[4][1]cuda:0\" = torch.ops.aten.add.Tensor(x, device_put);  x = device_put = None\n"
                       "        return (add,)\n");
    IrModule *m2 = g2 ? ir_lower(ctx, g2) : NULL;
    char *ir2 = m2 ? ir_print(m2) : NULL;
    ok(ir2 && !strstr(ir2, "DeviceCopy") && !strstr(ir2, "ExternKernel"), "device_put of an iota: the iota computed on the new device, no copy");
    Tensor *x = TD(DT_F32, 1, (int64_t[]){4}, (double[]){0.5, 0.25, 0, -1});
    int no = 0;
    IValue *o = g2 ? cc_interp(ctx, g2, (Tensor *[]){x}, 1, &no) : NULL;
    ok(o && no == 1 && og_values(o[0].t, (double[]){1.5, 3.25, 5, 6}, 4, 0), "x + device_put(iota(4, start=1, step=2))");
    if (o) interp_free_outputs(o, no);
    ok(g2 && cc_c_agrees(ctx, g2, (Tensor *[]){x}, 1, 0), "compiled C agrees");
    tensor_unref(x);
    free(ir2);
    if (m2) ir_free(m2);
    graph_free(g2);
}

static void test_device_put_cuda(void) {
    Graph *g = parsed(device_put_fx);
    if (!g) { ok(0, "graph"); return; }
    ctx->target = MI_DEV_CUDA;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    int ext = 0;
    for (int k = 0; s && k < s->nkernels; k++)
        if (s->kernels[k].is_extern && strstr(s->kernels[k].name, "device_put")) ext++;
    ok(s && ext == 1, "on the GPU target the strided input's DeviceCopy is an extern call (%d)", ext);
    sched_free(s);
    if (m) ir_free(m);
    ctx->target = MI_DEV_CPU;
    CC_NVCC_POINT(ctx, "device_put", g);
    graph_free(g);
}

/* ---- cascade summation ---- */

/* the compiled C module's outputs of fx on ins, each output's values as doubles into got[k]
 * (n[k] values); the source into *src (malloc'd, may be NULL). false with a diagnostic. */
static bool run_c(const char *fx, Tensor **ins, int nin, double **got, int64_t *n, int nget, char **src) {
    Graph *g = parsed(fx);
    if (src) *src = NULL;
    if (!g) return false;
    CgBuild b;
    bool okk = cg_compile(ctx, g, &b, 0) == 0;
    if (!okk) diag("compile: %s", ctx->err.msg);
    IValue in[8];
    for (int i = 0; i < nin; i++) in[i] = (IValue){.kind = IV_TENSOR, .t = ins[i]};
    IValue *o = NULL;
    int no = 0;
    if (okk && rt_run(ctx, b.rt, g, in, nin, &o, &no, NULL) < 0) { diag("run: %s", ctx->err.msg); okk = false; }
    for (int k = 0; okk && k < nget; k++) {
        okk = k < no && o[k].kind == IV_TENSOR;
        if (!okk) break;
        n[k] = tensor_numel(o[k].t);
        got[k] = malloc(sizeof(double) * (size_t)(n[k] ? n[k] : 1));
        for (int64_t i = 0; i < n[k]; i++) got[k][i] = tensor_get_f(o[k].t, i);
    }
    if (o) interp_free_outputs(o, no);
    if (src && b.src) *src = strdup(b.src);
    cg_free(&b);
    graph_free(g);
    return okk;
}

/* x[i] = a deterministic value in [0, 0.05): squares around 8e-4, as randn * 0.03 */
static Tensor *small_values(int64_t n) {
    Tensor *t = TD(DT_F32, 1, (int64_t[]){n}, NULL);
    uint32_t r = 12345;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        tensor_set_f(t, i, (double)(float)((r >> 8) * (0.05 / 16777216.0)));
    }
    return t;
}

static double exact_sumsq(const Tensor *t, int64_t lo, int64_t n, int64_t step) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) { double v = tensor_get_f(t, lo + i * step); s += v * v; }
    return s;
}

static void test_cascade_sum_accuracy(void) {
    const int64_t N = 1048576;
    Tensor *x = small_values(N);
    double want = exact_sumsq(x, 0, N, 1);
    /* with an argmax in the loop the kernel stays scalar (one accumulator over 1M elements):
     * straight float32 summation is off by ~3e-4 relative there */
    const char *fx_row =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[1048576][1]cpu\"):\n"
        "        mul: \"f32[1048576][1]cpu\" = torch.ops.aten.mul.Tensor(x, x)\n"
        "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(mul);  mul = None\n"
        "        argmax: \"i64[][]cpu\" = torch.ops.aten.argmax.default(x);  x = None\n"
        "        return (sum_1, argmax)\n";
    double *got[2] = {0};
    int64_t n[2];
    char *src = NULL;
    bool r = run_c(fx_row, &x, 1, got, n, 1, &src);
    double rel = r ? fabs(got[0][0] - want) / want : 1;
    ok(r && rel < 2e-6, "scalar loop: the float32 sum of 1M squares within 2e-6 of float64 (rel %.2g)", rel);
    ok(src && strstr(src, "_ci == 4096") && strstr(src, "mi_csum_depth(1048576LL)"), "its accumulator takes the cascade helper (256 chunks)");
    free(got[0]); free(src);
    /* a plain full sum: per-lane helpers */
    const char *fx_lanes =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[1048576][1]cpu\"):\n"
        "        mul: \"f32[1048576][1]cpu\" = torch.ops.aten.mul.Tensor(x, x);  x = None\n"
        "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(mul);  mul = None\n"
        "        return (sum_1,)\n";
    r = run_c(fx_lanes, &x, 1, got, n, 1, &src);
    rel = r ? fabs(got[0][0] - want) / want : 1;
    ok(r && rel < 2e-6, "lane loop: the float32 sum of 1M squares within 2e-6 of float64 (rel %.2g)", rel);
    ok(src && strstr(src, "mi_csum_fold(acc"), "the lanes fold their chunks");
    free(got[0]); free(src);
    /* column sums of [65536, 16]: each column's helper over 65536 rows */
    Tensor *y = small_values(65536 * 16);
    y->ndim = 2; y->size[0] = 65536; y->size[1] = 16; y->stride[0] = 16; y->stride[1] = 1;
    const char *fx_col =
        "class G(torch.nn.Module):\n"
        "    def forward(self, y: \"f32[65536, 16][16, 1]cpu\"):\n"
        "        mul: \"f32[65536, 16][16, 1]cpu\" = torch.ops.aten.mul.Tensor(y, y);  y = None\n"
        "        sum_1: \"f32[16][1]cpu\" = torch.ops.aten.sum.dim_IntList(mul, [0]);  mul = None\n"
        "        return (sum_1,)\n";
    r = run_c(fx_col, &y, 1, got, n, 1, &src);
    double worst = 0;
    for (int c = 0; r && c < 16; c++) {
        double w = exact_sumsq(y, c, 65536, 16);
        worst = fmax(worst, fabs(got[0][c] - w) / w);
    }
    ok(r && n[0] == 16 && worst < 2e-6, "column sums over 65536 rows within 2e-6 of float64 (worst rel %.2g)", worst);
    ok(src && strstr(src, "_ci == 4096"), "each column takes the helper");
    free(got[0]); free(src);
    tensor_unref(y);
    tensor_unref(x);
}

/* the C source of fx (CG_SOURCE), malloc'd */
static char *c_source(const char *fx) {
    Graph *g = parsed(fx);
    if (!g) return NULL;
    CgBuild b;
    char *src = cg_compile(ctx, g, &b, CG_SOURCE) == 0 && b.src ? strdup(b.src) : NULL;
    if (!src) diag("%s", ctx->err.msg);
    cg_free(&b);
    graph_free(g);
    return src;
}

static void test_cascade_sum_threshold(void) {
    /* need_use_acc_helper: reduction size > 4096 -- 4096 keeps the plain accumulator and its
     * omp clause, 4097 takes the helper */
    char *at = c_source("class G(torch.nn.Module):\n"
                        "    def forward(self, x: \"f32[8, 4096][4096, 1]cpu\"):\n"
                        "        sum_1: \"f32[8][1]cpu\" = torch.ops.aten.sum.dim_IntList(x, [1]);  x = None\n"
                        "        return (sum_1,)\n");
    ok(at && !strstr(at, "_ci == 4096") && strstr(at, "#pragma omp simd reduction(+:acc"), "a sum over 4096 elements keeps its code");
    char *past = c_source("class G(torch.nn.Module):\n"
                          "    def forward(self, x: \"f32[8, 4097][4097, 1]cpu\"):\n"
                          "        sum_1: \"f32[8][1]cpu\" = torch.ops.aten.sum.dim_IntList(x, [1]);  x = None\n"
                          "        return (sum_1,)\n");
    ok(past && strstr(past, "_ci == 4096") && !strstr(past, "reduction(+:acc"), "a sum over 4097 elements takes the helper");
    /* only torch.float: a float64 sum, and a float32 max, stay as they are */
    char *dbl = c_source("class G(torch.nn.Module):\n"
                         "    def forward(self, x: \"f64[8, 8192][8192, 1]cpu\"):\n"
                         "        sum_1: \"f64[8][1]cpu\" = torch.ops.aten.sum.dim_IntList(x, [1]);  x = None\n"
                         "        return (sum_1,)\n");
    ok(dbl && !strstr(dbl, "_ci == 4096"), "a float64 sum keeps its accumulator");
    char *mx = c_source("class G(torch.nn.Module):\n"
                        "    def forward(self, x: \"f32[8, 8192][8192, 1]cpu\"):\n"
                        "        amax: \"f32[8][1]cpu\" = torch.ops.aten.amax.default(x, [1]);  x = None\n"
                        "        return (amax,)\n");
    ok(mx && !strstr(mx, "_ci == 4096"), "a float32 max keeps its accumulator");
    free(at); free(past); free(dbl); free(mx);
}

int main(void) {
    ctx = mi_ctx_new();
    test_device_put_meta_values();
    test_device_put_lowering();
    test_device_put_cuda();
    test_cascade_sum_accuracy();
    test_cascade_sum_threshold();
    mi_ctx_free(ctx);
    return done_testing();
}
