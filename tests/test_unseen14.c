/* test_unseen14.c — the rules the fourteenth batch of unseen models needed, each checked on
 * computed values (hand values from PyTorch's definitions, the interpreter, the compiled C
 * module) or on the metas PyTorch gives:
 *   - aten.view.dtype (cpu_lru_complex_scan_train, cuda_s4d_vandermonde_kernel_train backward:
 *     `h.view(torch.float32)`, complex64 <-> float32): ATen's view_dtype (TensorConversions.cpp)
 *     sizes, strides and offset for equal, smaller and larger elements and its refusals; the
 *     values are the same bytes; in a float64 reference run c64 <-> f32 pairs stay pairs, other
 *     reinterpretations refuse; Inductor lowers a complex one as a ComplexView (a FallbackKernel),
 *     and the compiled C agrees; full([], 0j) (the LRU backward) is a c64 zero;
 *   - aten.cudnn_grid_sampler and its backward (cuda_perspective_warp_homography,
 *     cuda_superpoint_desc_sample: F.grid_sample on CUDA with bilinear, zeros, align_corners):
 *     grid_sampler_2d's values with those modes (hand values and the interpreter's
 *     grid_sampler_2d / grid_sampler_2d_backward), contiguous results, a FallbackKernel in
 *     compiled C and CUDA;
 *   - the inputs of an exported backward (cuda_entmax15_train backward failed on the GPU, every
 *     element: its scatter.src through the forward's sort indices got random int64 inputs, all
 *     zeros, so six writes per row hit one place and CUDA kept another than the interpreter's
 *     last; the first write's values are exactly the GPU's): cc_export_inputs, which
 *     cudabench's graphs mode uses, takes a backward's saved tensors from its forward file, so
 *     a sort's indices are a permutation. */
#include "tap.h"
#include "ops/interp.h"
#include "ops/ops.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define TD(...) cc_tensor(ctx, __VA_ARGS__)

/* the meta op_infer_meta gives node `name` of g, as annotation text ("f32[12][1]"), or the
 * error text; "" when the node is missing */
static const char *inferred(Graph *g, const char *name, char *buf, size_t n) {
    const Node *nd = g ? graph_find(g, name) : NULL;
    if (!nd) return "";
    TensorMeta out[4];
    int no = 4;
    MiTry t = mi_try(ctx);
    int rc = op_infer_meta(ctx, g, nd, out, &no);
    if (rc) snprintf(buf, n, "error: %.400s", ctx->err.msg);
    mi_try_end(&t);
    if (rc) return buf;
    meta_str(&out[0], buf, n);
    char *dev = strpbrk(buf, "]");    /* the layout only: cut after the strides' ']' */
    if (dev && (dev = strchr(dev + 1, ']'))) dev[1] = 0;
    return buf;
}

/* ---- view.dtype ---- */

static void test_view_dtype_meta(void) {
    char b[512];
    Graph *g = og_graph(ctx, "x: \"c64[6][1]cpu\", y: \"f32[3, 4][4, 1]cpu\", z: \"f32[4, 3][1, 4]cpu\", w: \"f32[3, 5][5, 1]cpu\", u: \"f32[2, 3][3, 1]cpu\", c: \"c128[2, 3][1, 2]cpu\"",
                         "        a = torch.ops.aten.view.dtype(x, torch.float32)\n"
                         "        b = torch.ops.aten.view.dtype(y, torch.complex64)\n"
                         "        d = torch.ops.aten.view.dtype(z, torch.complex64)\n"
                         "        e = torch.ops.aten.view.dtype(w, torch.complex64)\n"
                         "        f = torch.ops.aten.view.dtype(u, torch.int32)\n"
                         "        h = torch.ops.aten.view.dtype(u, torch.int16)\n"
                         "        k = torch.ops.aten.view.dtype(c, torch.float32)\n"
                         "        s = torch.ops.aten.slice.Tensor(y, 1, 2, 4)\n"
                         "        m = torch.ops.aten.view.dtype(s, torch.complex64)\n"
                         "        s1 = torch.ops.aten.slice.Tensor(y, 1, 1, 3)\n"
                         "        m1 = torch.ops.aten.view.dtype(s1, torch.complex64)\n",
                         "a, b, d, e, f, h, k, m, m1");
    ok(g != NULL, "a graph of view.dtype calls loads");
    /* downsize: c64 -> f32 doubles the last size (the log's c64[6][1] -> f32[12][1]) */
    is_str(inferred(g, "a", b, sizeof b), "f32[12][1]", "c64[6] as f32: f32[12][1]");
    /* upsize: f32 -> c64 halves the last size and the other strides */
    is_str(inferred(g, "b", b, sizeof b), "c64[3, 2][2, 1]", "f32[3, 4][4, 1] as c64: c64[3, 2][2, 1]");
    ok(strstr(inferred(g, "d", b, sizeof b), "self.stride(-1) must be 1 to view f32 as c64") != NULL, "a transposed f32 cannot be viewed as c64: %s", b);
    ok(strstr(inferred(g, "e", b, sizeof b), "self.size(-1) must be divisible by 2") != NULL, "an odd last size cannot be viewed as c64: %s", b);
    is_str(inferred(g, "f", b, sizeof b), "i32[2, 3][3, 1]", "equal element sizes keep the layout");
    is_str(inferred(g, "h", b, sizeof b), "i16[2, 6][6, 1]", "f32 as i16: the last size doubles");
    ok(strstr(inferred(g, "k", b, sizeof b), "self.stride(-1) must be 1 to view c128 as f32") != NULL, "c128 with stride(-1) 2 refuses a smaller dtype: %s", b);
    /* an offset: y[:, 2:4] starts at element 2, c64 element 1 */
    is_str(inferred(g, "m", b, sizeof b), "c64[3, 1][2, 1]", "y[:, 2:4] as c64: c64[3, 1][2, 1]");
    ok(strstr(inferred(g, "m1", b, sizeof b), "self.storage_offset() must be divisible by 2") != NULL, "y[:, 1:3] (odd offset) refuses c64: %s", b);
    graph_free(g);
}

static void test_view_dtype_values(void) {
    /* x: f32[3, 2] as c64[3, 1], squared (complex), back as f32[3, 2] */
    Graph *g = og_graph(ctx, "x: \"f32[3, 2][2, 1]cpu\"",
                        "        a: \"c64[3, 1][1, 1]cpu\" = torch.ops.aten.view.dtype(x, torch.complex64)\n"
                        "        b: \"c64[3, 1][1, 1]cpu\" = torch.ops.aten.mul.Tensor(a, a);  a = None\n"
                        "        r: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.view.dtype(b, torch.float32);  b = None\n"
                        "        s: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.add.Tensor(r, x);  r = x = None\n",
                        "s");
    Tensor *x = TD(DT_F32, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
    /* (1+2j)^2 = -3+4j, (3+4j)^2 = -7+24j, (5+6j)^2 = -11+60j; plus x */
    ok(cc_output_is(ctx, g, (Tensor *[]){x}, 1, 0, (double[]){-2, 6, -4, 28, -6, 66}, 6, 0), "x viewed as c64, squared, viewed as f32, plus x");
    IValue in = {.kind = IV_TENSOR, .t = x}, *o = NULL;
    int no = 0;
    bool r64 = g && interp_run_fp64(ctx, g, &in, 1, &o, &no, NULL) == 0;
    ok(r64 && no == 1 && o[0].t->dtype == DT_F64 && og_values(o[0].t, (double[]){-2, 6, -4, 28, -6, 66}, 6, 0),
       "the float64 reference run views c128 <-> f64 pairs");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x}, 1, 0), "the compiled C module (view.dtype a ComplexView fallback) agrees");
    CC_NVCC_POINT(ctx, "view.dtype c64 <-> f32", g);
    graph_free(g);
    tensor_unref(x);
    /* equal sizes: the bits of 1.0f, -2.0f as int32; no float64 meaning */
    Graph *h = og_graph(ctx, "y: \"f32[2][1]cpu\"", "        i: \"i32[2][1]cpu\" = torch.ops.aten.view.dtype(y, torch.int32);  y = None\n", "i");
    Tensor *y = TD(DT_F32, 1, (int64_t[]){2}, (double[]){1, -2});
    ok(cc_output_is(ctx, h, (Tensor *[]){y}, 1, 0, (double[]){1065353216, -1073741824}, 2, 0), "1.0f, -2.0f as int32: 0x3f800000, 0xc0000000");
    in.t = y;
    ok(h && interp_run_fp64(ctx, h, &in, 1, &o, &no, NULL) < 0 && strstr(ctx->err.msg, "no float64 reference run"),
       "a float64 run refuses to reinterpret f32 bits as i32");
    ok(h && cc_c_agrees(ctx, h, (Tensor *[]){y}, 1, 0), "compiled C agrees on the int32 bits");
    graph_free(h);
    tensor_unref(y);
}

static void test_full_complex(void) {
    Graph *g = og_graph(ctx, "x: \"c64[3][1]cpu\", m: \"b8[3][1]cpu\"",
                        "        z: \"c64[][]cpu\" = torch.ops.aten.full.default([], 0j, dtype = torch.complex64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
                        "        o: \"c64[][]cpu\" = torch.ops.aten.full.default([], (1+2j), layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
                        "        w: \"c64[3][1]cpu\" = torch.ops.aten.where.self(m, z, x);  m = z = x = None\n"
                        "        a: \"c64[3][1]cpu\" = torch.ops.aten.add.Tensor(w, o);  w = o = None\n"
                        "        r: \"f32[3, 2][2, 1]cpu\" = torch.ops.aten.view_as_real.default(a);  a = None\n",
                        "r");
    char b[256];
    is_str(inferred(g, "o", b, sizeof b), "c64[][]", "full([], 1+2j) without a dtype is c64");
    /* x = 0, 1, 2 as real parts (cc_tensor), where m zero it, plus 1+2j */
    Tensor *x = TD(DT_C64, 1, (int64_t[]){3}, (double[]){5, 6, 7});
    Tensor *m = TD(DT_BOOL, 1, (int64_t[]){3}, (double[]){1, 0, 1});
    ok(cc_output_is(ctx, g, (Tensor *[]){x, m}, 2, 0, (double[]){1, 2, 7, 2, 1, 2}, 6, 0), "where(m, full([], 0j), x) + (1+2j)");
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x, m}, 2, 0), "compiled C agrees");
    graph_free(g);
    tensor_unref(x);
    tensor_unref(m);
}

/* ---- cudnn_grid_sampler ---- */

#define GRID_PARAMS "x: \"f32[1, 1, 2, 3][6, 6, 3, 1]cuda:0\", grid: \"f32[1, 1, 4, 2][8, 8, 2, 1]cuda:0\", go: \"f32[1, 1, 1, 4][4, 4, 4, 1]cuda:0\""

static void test_cudnn_grid_sampler(void) {
    Graph *g = og_graph(ctx, GRID_PARAMS,
                        "        s: \"f32[1, 1, 1, 4][4, 4, 4, 1]cuda:0\" = torch.ops.aten.cudnn_grid_sampler.default(x, grid)\n"
                        "        t: \"f32[1, 1, 1, 4][4, 4, 4, 1]cuda:0\" = torch.ops.aten.grid_sampler_2d.default(x, grid, 0, 0, True)\n"
                        "        b = torch.ops.aten.cudnn_grid_sampler_backward.default(x, grid, go)\n"
                        "        gi: \"f32[1, 1, 2, 3][6, 6, 3, 1]cuda:0\" = b[0]\n"
                        "        gg: \"f32[1, 1, 4, 2][8, 8, 2, 1]cuda:0\" = b[1];  b = None\n"
                        "        c = torch.ops.aten.grid_sampler_2d_backward.default(go, x, grid, 0, 0, True, [True, True]);  go = x = grid = None\n"
                        "        ci: \"f32[1, 1, 2, 3][6, 6, 3, 1]cuda:0\" = c[0]\n"
                        "        cg: \"f32[1, 1, 4, 2][8, 8, 2, 1]cuda:0\" = c[1];  c = None\n",
                        "s, t, gi, gg, ci, cg");
    ok(g != NULL, "a graph with cudnn_grid_sampler and its backward loads");
    char b[256];
    is_str(inferred(g, "s", b, sizeof b), "f32[1, 1, 1, 4][4, 4, 4, 1]", "output [N, C, H', W'], contiguous");
    /* input [[0, 1, 2], [3, 4, 5]]; grid points (x, y): (0, 0) (-1, -1) (1, 1) (1.5, 0) */
    Tensor *x = TD(DT_F32, 4, (int64_t[]){1, 1, 2, 3}, NULL);
    Tensor *grid = TD(DT_F32, 4, (int64_t[]){1, 1, 4, 2}, (double[]){0, 0, -1, -1, 1, 1, 1.5, 0});
    Tensor *go = TD(DT_F32, 4, (int64_t[]){1, 1, 1, 4}, (double[]){1, 1, 1, 1});
    Tensor *ins[3] = {x, grid, go};
    int no = 0;
    IValue *o = cc_interp(ctx, g, ins, 3, &no);
    /* align_corners: (0, 0) -> pixel (1, 0.5): (1 + 4) / 2; (1.5, 0) -> (2.5, 0.5): half of
     * column 2, half outside (zeros) */
    ok(o && no == 6 && og_values(o[0].t, (double[]){2.5, 0, 5, 1.75}, 4, 1e-6), "bilinear, zeros, align_corners: 2.5, 0, 5, 1.75");
    ok(o && no == 6 && og_values(o[1].t, (double[]){2.5, 0, 5, 1.75}, 4, 1e-6), "grid_sampler_2d(x, grid, 0, 0, True) gives the same");
    /* grad_output ones: each point scatters its weights */
    ok(o && no == 6 && og_values(o[2].t, (double[]){1, 0.5, 0.25, 0, 0.5, 1.25}, 6, 1e-6), "grad_self: the bilinear weights scattered");
    bool same = o && no == 6;
    for (int k = 0; same && k < 2; k++) {
        Tensor *c = o[4 + k].t;
        double want[8];
        for (int64_t i = 0; i < tensor_numel(c); i++) want[i] = tensor_get_f(c, i);
        same = og_values(o[2 + k].t, want, tensor_numel(c), 0);
    }
    ok(same, "the backward equals grid_sampler_2d_backward with those modes");
    /* grad_grid of (0, 0): d/dx = (W - 1) / 2 * (mean of column 2 - column 1) = 1, d/dy = 1 / 2 * 3 */
    ok(o && no == 6 && fabs(tensor_get_f(o[3].t, 0) - 1) < 1e-6 && fabs(tensor_get_f(o[3].t, 1) - 1.5) < 1e-6, "grad_grid at (0, 0): (1, 1.5)");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, ins, 3, 1e-6), "compiled C (FallbackKernels) agrees");
    CC_NVCC_POINT(ctx, "cudnn_grid_sampler", g);
    graph_free(g);
    /* cond_cudnn_grid_sampler / check_grid_sampler_common */
    Graph *bad = og_graph(ctx, "x: \"f32[1, 1, 2, 3][6, 6, 3, 1]cuda:0\", grid: \"f32[2, 1, 4, 2][8, 8, 2, 1]cuda:0\", g3: \"f32[1, 1, 4, 3][12, 12, 3, 1]cuda:0\"",
                          "        s = torch.ops.aten.cudnn_grid_sampler.default(x, grid)\n"
                          "        t = torch.ops.aten.cudnn_grid_sampler.default(x, g3)\n", "s, t");
    ok(strstr(inferred(bad, "s", b, sizeof b), "same batch size") != NULL, "grid and input of different batch sizes refuse: %s", b);
    ok(strstr(inferred(bad, "t", b, sizeof b), "size 2 in last dimension") != NULL, "a grid of 3 coordinates refuses: %s", b);
    graph_free(bad);
    tensor_unref(x); tensor_unref(grid); tensor_unref(go);
}

/* ---- the inputs of an exported backward ---- */

static bool write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static void test_export_inputs(void) {
    char dir[] = "/tmp/minductor_u14XXXXXX", fwp[128], bwp[128], lonep[128];
    if (!mkdtemp(dir)) { ok(0, "a temporary directory"); return; }
    snprintf(fwp, sizeof fwp, "%s/m_0_0.py", dir);
    snprintf(bwp, sizeof bwp, "%s/m_0_0_backward.py", dir);
    snprintf(lonep, sizeof lonep, "%s/lone_0_0_backward.py", dir);
    static const char fw[] =
        "class G(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[2, 4][4, 1]cuda:0\"):\n"
        "        sort = torch.ops.aten.sort.default(x, -1);  x = None\n"
        "        getitem: \"f32[2, 4][4, 1]cuda:0\" = sort[0]\n"
        "        getitem_1: \"i64[2, 4][4, 1]cuda:0\" = sort[1];  sort = None\n"
        "        return (getitem, getitem_1)\n";
    static const char bw[] =
        "class G(torch.nn.Module):\n"
        "    def forward(self, getitem_1: \"i64[2, 4][4, 1]cuda:0\", tangents_1: \"f32[2, 4][4, 1]cuda:0\"):\n"
        "        full: \"f32[2, 4][4, 1]cuda:0\" = torch.ops.aten.full.default([2, 4], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)\n"
        "        scatter: \"f32[2, 4][4, 1]cuda:0\" = torch.ops.aten.scatter.src(full, -1, getitem_1, tangents_1);  full = getitem_1 = tangents_1 = None\n"
        "        return (scatter,)\n";
    bool files = write_file(fwp, fw) && write_file(bwp, bw) && write_file(lonep, bw);
    Graph *g = files ? cc_parsed_file(ctx, bwp) : NULL;
    ok(g != NULL, "an exported forward / backward pair");
    IValue *in = NULL, *o = NULL;
    int nin = 0, no = 0;
    bool from_fw = false;
    ok(g && cc_export_inputs(ctx, g, dir, "m_0_0_backward.py", &in, &nin, &from_fw) == 0 && nin == 2 && from_fw,
       "the backward's saved tensor comes from its forward");
    /* sort's indices: each row a permutation of 0..3, so the scatter writes each place once */
    bool perm = in && nin == 2 && in[0].kind == IV_TENSOR;
    for (int r = 0; perm && r < 2; r++) {
        int seen = 0;
        for (int k = 0; k < 4; k++) seen |= 1 << tensor_get_i(in[0].t, r * 4 + k);
        perm = seen == 15;
    }
    ok(perm, "the indices are the forward sort's: a permutation in each row");
    bool none_lost = perm && interp_run(ctx, g, in, nin, &o, &no) == 0 && no == 1;
    for (int r = 0; none_lost && r < 2; r++)
        for (int k = 0; k < 4; k++)
            none_lost = none_lost && tensor_get_f(o[0].t, r * 4 + tensor_get_i(in[0].t, r * 4 + k)) == tensor_get_f(in[1].t, r * 4 + k);
    ok(none_lost, "scatter.src puts every tangent at its index (no write lost to a duplicate)");
    if (o) interp_free_outputs(o, no);
    if (in) interp_free_outputs(in, nin);
    /* without its forward: random inputs, an int64 input is zeros (every write to place 0) */
    in = NULL;
    ok(g && cc_export_inputs(ctx, g, dir, "lone_0_0_backward.py", &in, &nin, &from_fw) == 0 && !from_fw && nin == 2 &&
       tensor_get_i(in[0].t, 5) == 0, "a backward without its forward file gets random inputs (int64 zeros)");
    if (in) interp_free_outputs(in, nin);
    graph_free(g);
    unlink(fwp); unlink(bwp); unlink(lonep); rmdir(dir);
}

int main(void) {
    ctx = mi_ctx_new();
    test_view_dtype_meta();
    test_view_dtype_values();
    test_full_complex();
    test_cudnn_grid_sampler();
    test_export_inputs();
    mi_ctx_free(ctx);
    return done_testing();
}
