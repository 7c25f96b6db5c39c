/* test_codegen_cuda.c — the CUDA backend (core/codegen/codegen_cuda.c) without a GPU: the generated text
 * for the recorded cuda cases (kernel names, __global__, grid-stride loop, float4 path, warp
 * shuffle block reductions, welford, column reductions, the call() wrapper), the runtime's
 * answer when it cannot run (nvcc missing / no GPU), and the shell's `--device cuda`,
 * `set device cuda`, `codegen` and TORCH_TRACE inductor_output_code. When nvcc and a GPU are
 * both present, the softmax case also runs and is compared with PyTorch's recorded output. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"
#include "tests/support/shell_harness.h"
#include "codegen/codegen_cuda.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *root = "tests/fixtures/torch-cases/cuda";

/* Lower + schedule + generate for target `dev`; the kernel names of the schedule in *names. */
static char *gen(MiCtx *ctx, Graph *g, MiDeviceKind dev, char *names, size_t nn) {
    ctx->target = dev;
    ops_resolve_graph(g);
    CgBuild b;
    cg_compile(ctx, g, &b, CG_SOURCE);
    const Schedule *s = b.s;
    names[0] = 0;
    for (int k = 0; s && k < s->norder; k++) {
        const SchedGroup *grp = &s->groups[s->order[k]];
        if (grp->kernel_name && strlen(names) + strlen(grp->kernel_name) + 2 < nn) {
            strcat(names, grp->kernel_name);
            strcat(names, " ");
        }
    }
    char *src = b.src;
    b.src = NULL;
    cg_free(&b);
    return src;
}

static char *gen_case(MiCtx *ctx, const char *name, char *names, size_t nn) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s/graph0/post_post_grad.py", root, name);
    Graph *g = graph_load_file(ctx, path);
    if (!g) return NULL;
    char *src = gen(ctx, g, MI_DEV_CUDA, names, nn);
    graph_free(g);
    return src;
}

/* A layer-norm-like graph over rows x cols (x - mean(x, 1)) * w, written into buf. */
static const char *ln_graph(char *buf, size_t n, int rows, int cols) {
    snprintf(buf, n, "class G(torch.nn.Module):\n    def forward(self, w: \"f32[%d][1]cuda:0\", x: \"f32[%d, %d][%d, 1]cuda:0\"):\n"
             "        var_mean = torch.ops.aten.var_mean.correction(x, [1], correction = 0, keepdim = True)\n"
             "        getitem: \"f32[%d, 1][1, 1]cuda:0\" = var_mean[0]\n        getitem_1: \"f32[%d, 1][1, 1]cuda:0\" = var_mean[1];  var_mean = None\n"
             "        sub: \"f32[%d, %d][%d, 1]cuda:0\" = torch.ops.aten.sub.Tensor(x, getitem_1)\n"
             "        mul: \"f32[%d, %d][%d, 1]cuda:0\" = torch.ops.aten.mul.Tensor(sub, w)\n        return (mul,)\n",
             cols, rows, cols, cols, rows, rows, rows, cols, cols, rows, cols, cols);
    return buf;
}

static char *gen_text(MiCtx *ctx, const char *text) {
    Graph *g = fx_parse(ctx, text, strlen(text), "inline.py", 1);
    if (!g) return NULL;
    char names[512];
    char *src = gen(ctx, g, MI_DEV_CUDA, names, sizeof names);
    graph_free(g);
    return src;
}

static bool has(const char *src, const char *needle) { return src && strstr(src, needle) != NULL; }

static bool have_nvcc(void) {
    const char *e = getenv("MINDUCTOR_NVCC");
    struct stat st;
    if (e && *e) return stat(e, &st) == 0 && S_ISREG(st.st_mode) && access(e, X_OK) == 0;
    return system("command -v nvcc >/dev/null 2>&1") == 0 || access("/usr/local/cuda/bin/nvcc", X_OK) == 0;
}

static char *run_shell(const char *args) {
    const char *bin = getenv("MINDUCTOR_BIN");
    if (!bin) bin = "./build/minductor";
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "{ \"%s\" %s; } 2>&1", bin, args);
    return sh_pipe(cmd, NULL);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char tmp[] = "/tmp/mi_cuda_test_XXXXXX";
    if (!mkdtemp(tmp)) { printf("Bail out! mkdtemp\n"); return 1; }
    snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/cache", tmp);
    char names[1024], lng[2048];

    /* A graph input named x (or v, k) is a kernel parameter: the flat kernel's own index and
     * lane variables live in the mi_ namespace (found by a device run: `x[...]` indexed the loop
     * counter instead of the input, and nvcc refused the kernel). */
    char *xs = gen_text(ctx, "class G(torch.nn.Module):\n    def forward(self, x: \"f32[64][1]cuda:0\", v: \"f32[64][1]cuda:0\"):\n"
                             "        a: \"f32[64][1]cuda:0\" = torch.ops.aten.add.Tensor(x, v)\n        return (a,)\n");
    ok(has(xs, "const float *__restrict__ x") && has(xs, "const float *__restrict__ v") && !has(xs, "int64_t x ") && !has(xs, "int64_t v ") &&
       has(xs, "for (int64_t mi_x = "), "inputs named x and v keep their names; the loop variables are mi_x and mi_v");
    free(xs);

    /* pointwise: flat grid-stride loop with a float4 path, named like the C backend's kernels */
    char *pw = gen_case(ctx, "pointwise_chain", names, sizeof names);
    ok(pw && codegen_is_cuda_source(pw), "pointwise_chain: CUDA source with the marker line");
    is_str(names, "cuda_fused_add_mul_relu_sigmoid_sub_tanh_0 ", "kernel named cuda_fused_<origins>_<n>");
    ok(has(pw, "__global__ void __launch_bounds__(256) cuda_fused_add_mul_relu_sigmoid_sub_tanh_0(const float *__restrict__ arg0_1, "
               "const float *__restrict__ arg1_1, float *buf0, MiSyms mi_sy)"), "the kernel's __global__ signature (__restrict__ on what it only reads)");
    /* 128 x 256 elements: a multiple of 1024 below 2^31, so the grid covers the float4s exactly
     * (Inductor: no mask where xnumel % XBLOCK == 0, int32 indices where numel fits) */
    ok(has(pw, "    {\n        const int mi_v = (int)blockIdx.x * 256 + (int)threadIdx.x;\n        {\n") &&
       !has(pw, "mi_step") && !has(pw, "mi_start") && !has(pw, "for (int64_t mi_x") &&
       has(pw, "float vi_arg0_1[4]; *reinterpret_cast<float4 *>(vi_arg0_1) = *reinterpret_cast<const float4 *>(arg0_1 + 4 * mi_v);") &&
       has(pw, "*reinterpret_cast<float4 *>(buf0 + 4 * mi_v) = *reinterpret_cast<const float4 *>(vo_buf0);"),
       "an exact static size: a float4 per thread, 32-bit index, no loop, guard or scalar tail");
    /* 1000 x 4: not a multiple of 1024, so the block-strided float4 loop and the scalar tail */
    char *pt = gen_text(ctx, "class G(torch.nn.Module):\n    def forward(self, a: \"f32[1000, 4][4, 1]cuda:0\", b: \"f32[1000, 4][4, 1]cuda:0\"):\n"
                             "        c: \"f32[1000, 4][4, 1]cuda:0\" = torch.ops.aten.add.Tensor(a, b)\n        return (c,)\n");
    ok(has(pt, "    const int64_t mi_start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n") &&
       has(pt, "    for (int64_t mi_x = mi_nv * 4 + mi_start; mi_x < mi_n; mi_x += mi_step) {\n"), "4000 elements: grid-stride loop (scalar tail)");
    ok(has(pt, "    for (int64_t mi_t = mi_start - threadIdx.x; mi_t < mi_nv; mi_t += mi_step) {\n"
               "        const int64_t mi_v = mi_t + threadIdx.x;\n        if (mi_v < mi_nv) {\n") &&
       has(pt, "*reinterpret_cast<const float4 *>(a + 4 * mi_v)") && !has(pt, "const int mi_v"),
       "4000 elements: float4 loads and stores in a loop whose condition is the block's");
    free(pt);
    ok(has(pw, "                float tmp6 = 1.0f / (1.0f + expf(-tmp5));\n"), "sigmoid in f32 math");
    ok(has(pw, "extern \"C\" int call(void *const *inputs, void *const *outputs, const int64_t *syms)") &&
       has(pw, "cudaMemcpyHostToDevice") && has(pw, "extern \"C\" int mi_cuda_time(") &&
       has(pw, "extern \"C\" int mi_cuda_probe(char *msg, int n)"), "host wrapper with the module ABI and the CUDA exports");
    ok(has(pw, "mi_blocks((mi_n / 4 + 255) / 256, 2147483647LL), 256, 0, mi_st>>>(arg0_1, arg1_1, buf0, mi_sy);"),
       "launch: 256 threads, a block per 1024 elements");

    /* the same graph for the CPU keeps the C backend's names and code */
    Graph *g = graph_load_file(ctx, "tests/fixtures/torch-cases/cuda/pointwise_chain/graph0/post_post_grad.py");
    char *c = g ? gen(ctx, g, MI_DEV_CPU, names, sizeof names) : NULL;
    ok(c && !codegen_is_cuda_source(c) && has(c, "static void cpp_fused_add_mul_relu_sigmoid_sub_tanh_0(") && !has(c, "__global__"),
       "device cpu: C source, cpp_fused names");
    free(c);
    graph_free(g);

    /* softmax (64 rows of 1000): fewer than 1024 rows, so a block per row (Inductor's
     * persistent_reduction: xnumel // 8 < 128 -> XBLOCK 1), 128 threads x 8 slots */
    char *sm = gen_case(ctx, "softmax", names, sizeof names);
    ok(has(sm, "/* persistent rows: one block per row, the row stays in registers */\n"
               "__global__ void __launch_bounds__(128, 16) cuda_fused_div_exp_prepare_softmax_online_sub_0("), "softmax: persistent row kernel, a block per row of 1000 columns");
    ok(has(sm, "for (int64_t mi_row = blockIdx.x; mi_row < mi_rows; mi_row += gridDim.x) {") &&
       has(sm, "const int64_t mi_r = threadIdx.x + (int64_t)mi_j * 128;") && has(sm, "if (mi_r < mi_inner) {") && !has(sm, "float4 groups") &&
       !has(sm, "_blk("), "block b takes row b; 1000 is not 128 x 8: scalar slots, the last ones guarded; no twin");
    ok(has(sm, "for (int o = 16; o > 0; o >>= 1) v = op(v, mi_shfl(v, o));") && has(sm, "__shfl_xor_sync(0xffffffffu, v, o)"),
       "warp shuffle reduction");
    ok(has(sm, "acc1 = mi_block_reduce(acc1, MiMax(), mi_shared);") && has(sm, "mi_block_reduce(acc6, MiSum(), mi_shared);"),
       "max and sum finish with mi_block_reduce");
    ok(has(sm, "                    float tmp2 = mi_c0[mi_j];\n"), "the row is read once: later nodes use registers");
    ok(has(sm, "<<<mi_blocks(mi_rows, 65535LL * 32), 128, 0, mi_st>>>") && !has(sm, "mi_rows_by_block(mi_rows"), "launch: a block per row, 128 threads");
    ok(!has(sm, "MI_GDC_LAUNCH();\n") && !has(sm, "MI_PDL_WAIT(mi_sy") && !has(sm, "MI_PDL_WAIT_WARP(mi_sy"),
       "a module of one kernel: no PDL instruction in it");

    /* var_mean: welford (two passes over registers in a persistent row), column sum */
    char *rd = gen_case(ctx, "reductions", names, sizeof names);
    ok(has(rd, "const MiWelford acc") && has(rd, "= mi_block_reduce(acc1_q, MiSum(), mi_shared);"), "reductions: var_mean as welford (mean, m2, n)");
    ok(has(rd, "mi_col_reduce(") && has(rd, "dim3(8, 128)") && !has(rd, "float4: 128 outputs"), "reductions: sum over dim 0 as a column reduction (8 x 128 blocks)");
    {   /* PDL: the first kernel lets the second start early, the second waits (per warp) */
        const char *k1 = rd ? strstr(rd, "cuda_fused_add_amax_div_sqrt_sub_var_mean_1(const") : NULL;
        const char *k0 = rd ? strstr(rd, "cuda_fused_sum_0(const") : NULL;
        const char *w0 = k0 ? strstr(k0, "MI_PDL_WAIT(mi_sy") : NULL;
        ok(k0 && k1 && k0 < k1 && strstr(k0, "MI_GDC_LAUNCH();\n") < k1 && !strstr(k1, "MI_GDC_LAUNCH();\n") &&
           strstr(k1, "MI_PDL_WAIT_WARP(mi_sy, 1);") && w0 > k1,
           "PDL: launch_dependents in the first kernel only, the wait in the second only");
    }
    ok(has(rd, "= mi_red0.m2;") || has(rd, "= mi_red1.m2;"), "the second welford output reuses the first reduction");

    /* rows of 1024 (ln_gelu): float4 slot groups, one 16-byte load per group of 4 slots and one
     * 16-byte store; the weight, read by the column alone, too */
    char *ln = gen_text(ctx, ln_graph(lng, sizeof lng, 64, 1024));
    ok(has(ln, "/* persistent rows: one block per row, the row stays in registers */\n__global__ void __launch_bounds__(128, 16) ") &&
       has(ln, "const int64_t mi_r = 4 * (threadIdx.x + (int64_t)(mi_j >> 2) * 128) + (mi_j & 3);   /* float4 groups */") &&
       has(ln, "<<<mi_blocks(mi_rows, 65535LL * 32), 128, 0, mi_st>>>") && !has(ln, "_blk(") && !has(ln, "mi_rows_by_block(mi_rows"),
       "64 rows of 1024 (fewer than 1024 rows): a block of 128 per row (registers for 16 blocks per SM), no warp twin");
    ok(has(ln, "if ((mi_j & 3) == 0) { const float4 mi_q = *reinterpret_cast<const float4 *>(&x[((1024LL*p0) + p1)]); mi_c0[mi_j] = mi_q.x;") &&
       has(ln, "*reinterpret_cast<const float4 *>(&w[p1]);") && has(ln, "if ((mi_j & 3) == 3) *reinterpret_cast<float4 *>(&buf"),
       "rows of 1024: float4 loads (x and the weight) and float4 stores of slot groups");
    ok(has(ln, "/* buf0 is only read inside this kernel, from registers: not stored */") &&
       has(ln, "    float *buf0 = NULL;   /* only in registers of its kernel, never stored */\n") && !has(ln, "cudaMallocAsync((void **)&buf0"),
       "the mean, read only in its own kernel's registers: neither stored nor allocated");
    free(ln);
    /* 4096 rows of 1024: Inductor gives each row a warp; the block-per-row twin is generated too
     * and the launch takes the one whose last wave of rows is fuller (resident blocks per SM
     * from cudaOccupancyMaxActiveBlocksPerMultiprocessor) */
    ln = gen_text(ctx, ln_graph(lng, sizeof lng, 4096, 1024));
    const char *kw = ln ? strstr(ln, "/* persistent rows: a warp per row (blockDim.y rows per block), the row stays in registers */\n__global__ void __launch_bounds__(128) cuda_fused_") : NULL;
    const char *kb = ln ? strstr(ln, "/* persistent rows: one block per row, the row stays in registers */\n__global__ void __launch_bounds__(128, 16) cuda_fused_") : NULL;
    ok(kw && kb && kw < kb && strstr(kw, "const int64_t mi_r = 4 * (threadIdx.x + (int64_t)(mi_j >> 2) * 32) + (mi_j & 3);   /* float4 groups */") < kb &&
       strstr(kb, "_0_blk(") && strstr(kb, "const int64_t mi_r = 4 * (threadIdx.x + (int64_t)(mi_j >> 2) * 128) + (mi_j & 3);"),
       "4096 rows of 1024: a warp-per-row kernel (32 x 32 slots) and its block-per-row twin _blk (128 x 8)");
    ok(has(ln, "static int mi_occ_w = -1, mi_occ_b = -1;") &&
       has(ln, "MI_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&mi_occ_b, cuda_fused_mul_sub_var_mean_0_blk, 128, 0));") &&
       has(ln, "        if (mi_rows_by_block(mi_rows, mi_sms, 4 * mi_occ_w, mi_occ_b))\n"
               "        cuda_fused_mul_sub_var_mean_0_blk<<<mi_blocks(mi_rows, 65535LL * 32), 128, 0, mi_st>>>(") &&
       has(ln, "        else\n        cuda_fused_mul_sub_var_mean_0<<<mi_blocks((mi_rows + 3) / 4, 65535LL * 32), dim3(32, 4), 0, mi_st>>>("),
       "the launch picks one of the two by occupancy");
    ok(has(ln, "    float *buf0 = NULL;   /* only in registers of its kernel, never stored */\n"), "the mean stays in registers in both");
    tf_nvcc_ok("the two row kernels and the occupancy choice", ln);
    free(ln);
    ln = gen_text(ctx, ln_graph(lng, sizeof lng, 4096, 256));
    ok(has(ln, "__global__ void __launch_bounds__(128) cuda_fused_") && !has(ln, "_blk(") && !has(ln, "mi_rows_by_block(mi_rows"),
       "rows of 256: a warp per row alone (a block of ~8 elements per thread would be one warp too)");
    free(ln);
    ln = gen_text(ctx, ln_graph(lng, sizeof lng, 4096, 2048));
    ok(has(ln, "__global__ void __launch_bounds__(256, 8) cuda_fused_") && !has(ln, "_blk(") && has(ln, "<<<mi_blocks(mi_rows, 65535LL * 32), 256, 0, mi_st>>>"),
       "rows of 2048: a block of 256 per row alone (Inductor: rows over 1024 elements take XBLOCK 1)");
    free(ln);

    /* seed_example (x.permute(1, 0) + x[2, :]): the float4 path splits its index once per float4,
     * so the broadcast load is one load per 4 lanes */
    char *se = gen_case(ctx, "seed_example", names, sizeof names);
    ok(has(se, "const int mi_q = (4 * mi_v) / 64, mi_l0 = 4 * mi_v - mi_q * 64;") && has(se, "= mi_l0 + mi_k;"),
       "seed_example: the outer index once per float4, the inner one + lane");
    free(se);

    /* a persistent row's slots reduce into 4 partial accumulators (slot j into j % 4), combined
     * pairwise: chains of slots / 4 (the recorded softmax: its max and its sum of exp) */
    char *sm4 = gen_case(ctx, "softmax", names, sizeof names);
    ok(has(sm4, "float acc1_p[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};\n") &&
       has(sm4, "acc1_p[mi_j & 3] = mi_max_nan(acc1_p[mi_j & 3], tmp0);\n") &&
       has(sm4, "float acc1 = mi_max_nan(mi_max_nan(acc1_p[0], acc1_p[1]), mi_max_nan(acc1_p[2], acc1_p[3]));\n") &&
       has(sm4, "acc6_p[mi_j & 3] += tmp5;\n") && has(sm4, "float acc6 = (acc6_p[0] + acc6_p[1]) + (acc6_p[2] + acc6_p[3]);\n"),
       "softmax: max and sum over 4 partial accumulators per thread, combined pairwise");
    free(sm4);
    /* ... and welford's sum and squared deviations (4096 rows of 1024: the warp-per-row kernel) */
    char *wl4 = gen_text(ctx, ln_graph(lng, sizeof lng, 4096, 1024));
    ok(has(wl4, "acc1_s4[mi_j & 3] += (float)tmp0; acc1_x[mi_j] = (float)tmp0;") &&
       has(wl4, "float acc1_s = (acc1_s4[0] + acc1_s4[1]) + (acc1_s4[2] + acc1_s4[3]);") &&
       has(wl4, "acc1_q4[mi_j & 3] += d_ * d_; }") && has(wl4, "float acc1_q = (acc1_q4[0] + acc1_q4[1]) + (acc1_q4[2] + acc1_q4[3]);"),
       "var_mean rows: the two passes over 4 partial accumulators");
    free(wl4);

    /* intermediates in the launch function's workspace (one allocation kept between calls, as
     * Inductor's caching allocator does), no stream-ordered allocation per call: the recorded
     * reductions case's column sums (96 floats) at offset 0 of it */
    char *wsr = gen_case(ctx, "reductions", names, sizeof names);
    ok(has(wsr, "    size_t mi_ws_need = 0;\n    const size_t mi_o_buf3 = mi_ws_need; mi_ws_need += (sizeof(float) * (size_t)(96LL) + 16 + 255) & ~(size_t)255;\n"
               "    static void *mi_ws = NULL;\n    static size_t mi_ws_cap = 0;\n    MI_CK(mi_workspace(&mi_ws, &mi_ws_cap, mi_ws_need));\n"
               "    float *buf3 = (float *)((char *)mi_ws + mi_o_buf3);\n") &&
       !has(wsr, "cudaMallocAsync((void") && !has(wsr, "cudaFreeAsync(buf") && has(wsr, "extern \"C\" void mi_cuda_release(void) {"),
       "reductions: the column sums in the module's workspace, no cudaMallocAsync / cudaFreeAsync per call");
    free(wsr);

    /* higher_order.cond: branch launch functions, the predicate read back from the GPU */
    char *cd = gen_case(ctx, "hop_cond", names, sizeof names);
    ok(has(cd, "static int true_graph_0(void *const *d_in, void *const *d_out, const int64_t *syms, cudaStream_t mi_st)") &&
       has(cd, "true_graph_0_cuda_fused_mul_sin_0<<<") && has(cd, "false_graph_0_cuda_fused_add_cos_0<<<"),
       "cond: each branch is a launch function with its own kernels");
    ok(has(cd, "MI_CK(cudaMemcpyAsync(&mi_pred, buf1 + 0LL, sizeof mi_pred, cudaMemcpyDeviceToHost, mi_st));") &&
       has(cd, "int mi_brc = mi_pred ? true_graph_0(cin, cout, csyms0, mi_st) : false_graph_0(cin, cout, csyms1, mi_st);\n"
               "        if (mi_brc) return mi_brc;"),
       "cond: the predicate is copied to the host and picks the branch; the branch's failure code is call()'s");
    free(cd);

    /* symbolic row length: the generic block-per-row kernel with per-element welford */
    char *dyn = gen_text(ctx,
        "class <lambda>(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"Sym(s0)\", arg1_1: \"f32[4, s0][s0, 1]cuda:0\"):\n"
        "        var_mean = torch.ops.aten.var_mean.correction(arg1_1, [1], correction = 0, keepdim = True)\n"
        "        getitem: \"f32[4, 1][1, 1]cuda:0\" = var_mean[0]\n"
        "        getitem_1: \"f32[4, 1][1, 1]cuda:0\" = var_mean[1];  var_mean = None\n"
        "        return (getitem, getitem_1)\n");
    ok(has(dyn, "/* one block per row */") && has(dyn, "mi_welford_add(acc1, (float)tmp0);") &&
       has(dyn, "acc1 = mi_block_reduce(acc1, MiWelfordOp(), mi_shared);") && has(dyn, "mi_row_threads(mi_inner)"),
       "symbolic rows: welford per element, MiWelford block reduction, threads chosen at run time");
    ok(has(dyn, "const int64_t s0 = mi_sy.v[0];") && has(dyn, "extern \"C\" const char *mi_sym_names[] = {\"s0\", NULL};"),
       "size symbols reach the kernels by value");
    if (!dyn) diag("%s", ctx->err.msg);

    /* a reduction over two dims: its index splits in 32 bits when the sizes fit (Triton's int32
     * index dtype; nvcc 13.0's cicc crashed on the 64-bit form in an unseen model's backward),
     * in 64 bits when a size is symbolic */
    char *r2 = gen_text(ctx,
        "class G(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[24, 2, 20][40, 20, 1]cuda:0\"):\n"
        "        sum_1: \"f32[24][1]cuda:0\" = torch.ops.aten.sum.dim_IntList(arg0_1, [1, 2])\n        return (sum_1,)\n");
    ok(has(r2, "int mi_rem = (int)(mi_r);") && has(r2, "= mi_rem % (int)(20LL); mi_rem /= (int)(20LL);"),
       "static sizes: the reduction index splits with 32-bit division");
    free(r2);
    char *r2d = gen_text(ctx,
        "class G(torch.nn.Module):\n    def forward(self, arg0_1: \"Sym(s0)\", arg1_1: \"f32[24, 2, s0][2*s0, s0, 1]cuda:0\"):\n"
        "        sum_1: \"f32[24][1]cuda:0\" = torch.ops.aten.sum.dim_IntList(arg1_1, [1, 2])\n        return (sum_1,)\n");
    ok(has(r2d, "int64_t mi_rem = mi_r;"), "a symbolic size: 64-bit");
    if (!r2d) diag("%s", ctx->err.msg);
    free(r2d);

    /* int reductions start from their dtype's identity; f16 loads to float, rounded on store */
    char *ir = gen_text(ctx,
        "class <lambda>(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"i32[8, 64][64, 1]cuda:0\", arg1_1: \"f16[8, 64][64, 1]cuda:0\"):\n"
        "        amax: \"i32[8][1]cuda:0\" = torch.ops.aten.amax.default(arg0_1, [1])\n"
        "        amin: \"i32[8][1]cuda:0\" = torch.ops.aten.amin.default(arg0_1, [1])\n"
        "        mul: \"f16[8, 64][64, 1]cuda:0\" = torch.ops.aten.mul.Tensor(arg1_1, 2.0)\n"
        "        return (amax, amin, mul)\n");
    ok(has(ir, "int32_t acc") && has(ir, " = INT32_MIN;\n") && has(ir, " = INT32_MAX;\n") && !has(ir, "INT64_MIN"),
       "i32 amax/amin start from INT32_MIN/INT32_MAX");
    ok(has(ir, "#include <cuda_fp16.h>") && has(ir, "const __half *__restrict__ arg1_1") && has(ir, "float tmp") &&
       has(ir, "= __half2float(arg1_1[") && has(ir, "] = __float2half_rn(tmp"), "f16: __half storage, float math, rounded store");
    if (!ir) diag("%s", ctx->err.msg);
    free(ir);

    /* building and running */
    RtModule *m = sm ? rt_compile(ctx, sm) : NULL;
    if (!have_nvcc()) {
        ok(!m && strstr(ctx->err.msg, "nvcc not found"), "no nvcc: a clear error (%s)", ctx->err.msg);
    } else if (!m) {
        ok(strstr(ctx->err.msg, "no CUDA GPU available") != NULL, "nvcc builds it; without a GPU: %s", ctx->err.msg);
    } else {
        ok(m->is_cuda && m->cuda_time, "nvcc built it and a GPU is here");
    }
    if (m) {   /* a GPU: run softmax on the recorded input */
        Graph *gs = graph_load_file(ctx, "tests/fixtures/torch-cases/cuda/softmax/graph0/post_post_grad.py");
        ops_resolve_graph(gs);
        IValue in = {0};
        in.kind = IV_TENSOR;
        in.t = npy_load(ctx, "tests/fixtures/torch-cases/cuda/softmax/graph0/in0.npy");
        IValue *outs = NULL;
        int nout = 0;
        Tensor *want = npy_load(ctx, "tests/fixtures/torch-cases/cuda/softmax/graph0/out0.npy");
        int rc = rt_run(ctx, m, gs, &in, 1, &outs, &nout, NULL);
        CompareResult cr = {0};
        if (rc == 0 && want) cr = tensor_compare(outs[0].t, want, 1e-4, 1e-5);
        ok(rc == 0 && cr.ok, "softmax on the GPU matches PyTorch (max abs %g)", cr.max_abs);
        if (outs) interp_free_outputs(outs, nout);
        if (want) tensor_unref(want);
        tensor_unref(in.t);
        graph_free(gs);
        rt_free(m);
    }

    /* the shell: --device cuda, set device cuda, codegen KERNEL, trace -> inductor_output_code */
    char args[2048];
    snprintf(args, sizeof args, "--device cuda %s/softmax/graph0/post_post_grad.py -c 'sched; codegen cuda_fused_div_exp_prepare_softmax_online_sub_0'", root);
    char *out = run_shell(args);
    ok(has(out, "cuda_fused_div_exp_prepare_softmax_online_sub_0 buf0(op0) buf1(op1) buf2(op2)") &&
       has(out, "__global__ void __launch_bounds__(128, 16) cuda_fused_div_exp_prepare_softmax_online_sub_0(") &&
       !has(out, "extern \"C\" int call("), "--device cuda: sched names and codegen KERNEL show the CUDA kernel alone");
    free(out);
    snprintf(args, sizeof args, "-k %s/softmax/graph0/post_post_grad.py -c 'set device cuda; codegen; set device cpu; codegen'", root);
    out = run_shell(args);
    ok(has(out, "generated by minductor (cuda)") && has(out, "static void cpp_fused_div_exp_prepare_softmax_online_sub_0("),
       "set device cuda / cpu switches the generated code");
    free(out);
    out = run_shell("--device gpu -c 'quit'");
    ok(has(out, "--device must be cpu or cuda, got 'gpu'"), "--device rejects other values");
    free(out);
    snprintf(args, sizeof args, "-k --device cuda %s/pointwise_chain/graph0/post_post_grad.py -c 'trace on %s/t.log; exec 1; trace off; report %s/rep' "
             "; grep -l '__global__ void __launch_bounds__(256) cuda_fused_add_mul_relu_sigmoid_sub_tanh_0' %s/rep/*/inductor_output_code*", root, tmp, tmp, tmp);
    setenv("MINDUCTOR_CACHE", ctx->cache_dir, 1);
    setenv("MINDUCTOR_NVCC", "/nonexistent/nvcc", 1);   /* the code is traced before it is built */
    out = run_shell(args);
    ok(has(out, "inductor_output_code"), "a CUDA exec is in the trace as inductor_output_code, shown by the report");
    if (!has(out, "inductor_output_code")) diag("%s", out ? out : "");
    free(out);

    free(pw); free(sm); free(rd); free(dyn);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
    if (system(rm) != 0) diag("could not remove %s", tmp);
    mi_ctx_free(ctx);
    return done_testing();
}
