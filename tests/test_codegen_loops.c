/* test_codegen_loops.c — the loop forms of core/codegen/codegen_kernel.c: one Welford for var and mean
 * with lanes and a scalar tail, vectorizable NaN-propagating amax, row-local intermediates,
 * column reductions in tiles, parallel full reductions, the shared row loop of a segment, a cat
 * along the innermost dim split into one loop per input (codegen_split.c), pow by an integer as
 * multiplications, the blocked flash attention (codegen_sdpa.c), division by a row value kept a
 * division, streamed row stores and the next row prefetched (codegen_stream.c). Each
 * graph is compiled and checked against the interpreter (random inputs, and NaNs where the
 * kernel form has a NaN path); sizes are chosen to leave partial lane blocks and tiles. */
#include "tap.h"
#include "tests/support/codegen_check.h"

#include <stdlib.h>
#include <string.h>

#define count cg_check_count
#define compile_check cg_check   /* one TAP point: agrees with the interpreter (nan_at >= 0: a NaN in input 0) */

static const char *var_mean_amax =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[37, 53][53, 1]cpu\"):\n"
    "        var_mean = torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 1, keepdim = True)\n"
    "        getitem: \"f32[37, 1][1, 1]cpu\" = var_mean[0]\n"
    "        getitem_1: \"f32[37, 1][1, 1]cpu\" = var_mean[1];  var_mean = None\n"
    "        sub: \"f32[37, 53][53, 1]cpu\" = torch.ops.aten.sub.Tensor(arg0_1, getitem_1)\n"
    "        add: \"f32[37, 1][1, 1]cpu\" = torch.ops.aten.add.Tensor(getitem, 1e-05)\n"
    "        sqrt: \"f32[37, 1][1, 1]cpu\" = torch.ops.aten.sqrt.default(add)\n"
    "        div: \"f32[37, 53][53, 1]cpu\" = torch.ops.aten.div.Tensor(sub, sqrt)\n"
    "        amax: \"f32[37, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [1], True)\n"
    "        add_1: \"f32[37, 53][53, 1]cpu\" = torch.ops.aten.add.Tensor(div, amax)\n"
    "        return (add_1,)\n";

static const char *softmax =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[9, 70][70, 1]cpu\"):\n"
    "        amax: \"f32[9, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [-1], True)\n"
    "        sub: \"f32[9, 70][70, 1]cpu\" = torch.ops.aten.sub.Tensor(arg0_1, amax)\n"
    "        exp: \"f32[9, 70][70, 1]cpu\" = torch.ops.aten.exp.default(sub)\n"
    "        sum_1: \"f32[9, 1][1, 1]cpu\" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)\n"
    "        div: \"f32[9, 70][70, 1]cpu\" = torch.ops.aten.div.Tensor(exp, sum_1)\n"
    "        return (div,)\n";

static const char *col_sum_max =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[45, 150][150, 1]cpu\"):\n"
    "        sum_1: \"f32[150][1]cpu\" = torch.ops.aten.sum.dim_IntList(arg0_1, [0])\n"
    "        amax: \"f32[150][1]cpu\" = torch.ops.aten.amax.default(arg0_1, [0])\n"
    "        return (sum_1, amax)\n";

static const char *full_sum =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[300, 7][7, 1]cpu\"):\n"
    "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg0_1)\n"
    "        amin: \"f32[][]cpu\" = torch.ops.aten.amin.default(arg0_1, [0, 1])\n"
    "        return (sum_1, amin)\n";

/* a cat of three along the last dim (21 + 7 + 4), each side with calls: one loop per input */
static const char *pad_right =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[6, 21][21, 1]cpu\"):\n"
    "        sin: \"f32[6, 21][21, 1]cpu\" = torch.ops.aten.sin.default(arg0_1)\n"
    "        pad: \"f32[6, 32][32, 1]cpu\" = torch.ops.aten.constant_pad_nd.default(sin, [0, 11], 0.0)\n"
    "        return (pad,)\n";

static const char *cat3 =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[6, 21][21, 1]cpu\", arg1_1: \"f32[6, 7][7, 1]cpu\", arg2_1: \"f32[6, 4][4, 1]cpu\"):\n"
    "        sin: \"f32[6, 21][21, 1]cpu\" = torch.ops.aten.sin.default(arg0_1)\n"
    "        cos: \"f32[6, 7][7, 1]cpu\" = torch.ops.aten.cos.default(arg1_1)\n"
    "        exp: \"f32[6, 4][4, 1]cpu\" = torch.ops.aten.exp.default(arg2_1)\n"
    "        cat: \"f32[6, 32][32, 1]cpu\" = torch.ops.aten.cat.default([sin, cos, exp], -1)\n"
    "        return (cat,)\n";

/* pow by integers (multiplications), by 0.5 (sqrt) and by 2.5 (pow) */
static const char *pows =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[5, 12][12, 1]cpu\"):\n"
    "        pow_1: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(arg0_1, 3)\n"
    "        abs_1: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.abs.default(arg0_1)\n"
    "        pow_2: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(abs_1, 2.5)\n"
    "        add: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.add.Scalar(abs_1, 1)\n"
    "        pow_3: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(add, -2)\n"
    "        pow_4: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(abs_1, 0.5)\n"
    "        return (pow_1, pow_2, pow_3, pow_4)\n";

/* a select on the innermost index (iota < 5) between two sides with calls */
static const char *where_pow =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[5, 12][12, 1]cpu\"):\n"
    "        iota: \"i64[12][1]cpu\" = torch.ops.prims.iota.default(12, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        lt: \"b8[12][1]cpu\" = torch.ops.aten.lt.Scalar(iota, 5)\n"
    "        pow_1: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(arg0_1, 3)\n"
    "        abs_1: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.abs.default(arg0_1)\n"
    "        pow_2: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(abs_1, 2.5)\n"
    "        where: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.where.self(lt, pow_1, pow_2)\n"
    "        add: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.add.Scalar(abs_1, 1)\n"
    "        pow_3: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(add, -2)\n"
    "        pow_4: \"f32[5, 12][12, 1]cpu\" = torch.ops.aten.pow.Tensor_Scalar(abs_1, 0.5)\n"
    "        return (where, pow_3, pow_4)\n";

/* attention with several query blocks (64 rows from 192 queries on) and two key blocks (512 +
 * 88): plain, causal, and with a bool mask that hides every key of query 3 (a row of 0) */
#define SDPA_ARGS "arg0_1: \"f32[2, 3, 200, 24][14400, 4800, 24, 1]cpu\", arg1_1: \"f32[2, 3, 600, 24][43200, 14400, 24, 1]cpu\", arg2_1: \"f32[2, 3, 600, 20][36000, 12000, 20, 1]cpu\""
static const char *sdpa_plain =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, " SDPA_ARGS "):\n"
    "        s = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, scale = 0.2)\n"
    "        getitem: \"f32[2, 3, 200, 20][12000, 4000, 20, 1]cpu\" = s[0]\n"
    "        getitem_1: \"f32[2, 3, 200][600, 200, 1]cpu\" = s[1];  s = None\n"
    "        return (getitem, getitem_1)\n";
static const char *sdpa_causal =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, " SDPA_ARGS "):\n"
    "        s = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True, scale = 0.2)\n"
    "        getitem: \"f32[2, 3, 200, 20][12000, 4000, 20, 1]cpu\" = s[0]\n"
    "        return (getitem,)\n";
static const char *sdpa_mask =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, " SDPA_ARGS "):\n"
    "        iota: \"i64[200][1]cpu\" = torch.ops.prims.iota.default(200, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        unsqueeze: \"i64[200, 1][1, 1]cpu\" = torch.ops.aten.unsqueeze.default(iota, 1)\n"
    "        iota_1: \"i64[600][1]cpu\" = torch.ops.prims.iota.default(600, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        ne: \"b8[200, 600][600, 1]cpu\" = torch.ops.aten.ne.Tensor(unsqueeze, iota_1)\n"
    "        ne_1: \"b8[200, 1][1, 1]cpu\" = torch.ops.aten.ne.Scalar(unsqueeze, 3)\n"
    "        logical_and: \"b8[200, 600][600, 1]cpu\" = torch.ops.aten.logical_and.default(ne, ne_1)\n"
    "        s = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, attn_mask = logical_and, scale = 0.2)\n"
    "        getitem: \"f32[2, 3, 200, 20][12000, 4000, 20, 1]cpu\" = s[0]\n"
    "        return (getitem,)\n";

static const char *row_div =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[6, 40][40, 1]cpu\", arg1_1: \"f32[6, 1][1, 1]cpu\", arg2_1: \"f32[6, 40][40, 1]cpu\"):\n"
    "        div: \"f32[6, 40][40, 1]cpu\" = torch.ops.aten.div.Tensor(arg0_1, arg1_1)\n"
    "        div_1: \"f32[6, 40][40, 1]cpu\" = torch.ops.aten.div.Tensor(arg0_1, arg2_1)\n"
    "        return (div, div_1)\n";
/* rows of 1000 floats: not a multiple of a vector, row starts not 64-byte aligned */
static const char *softmax_1000 =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[5, 1000][1000, 1]cpu\"):\n"
    "        amax: \"f32[5, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [1], True)\n"
    "        sub: \"f32[5, 1000][1000, 1]cpu\" = torch.ops.aten.sub.Tensor(arg0_1, amax)\n"
    "        exp: \"f32[5, 1000][1000, 1]cpu\" = torch.ops.aten.exp.default(sub)\n"
    "        sum_1: \"f32[5, 1][1, 1]cpu\" = torch.ops.aten.sum.dim_IntList(exp, [1], True)\n"
    "        div: \"f32[5, 1000][1000, 1]cpu\" = torch.ops.aten.div.Tensor(exp, sum_1)\n"
    "        return (div,)\n";
static const char *var_mean_97 =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 97][97, 1]cpu\"):\n"
    "        var_mean = torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 0, keepdim = True)\n"
    "        getitem: \"f32[4, 1][1, 1]cpu\" = var_mean[0]\n"
    "        getitem_1: \"f32[4, 1][1, 1]cpu\" = var_mean[1];  var_mean = None\n"
    "        return (getitem, getitem_1)\n";

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char *src = compile_check(ctx, "var_mean_amax", var_mean_amax, -1);
    if (src) {
        is_int(count(src, "mi_wf_lanes_float(&") + count(src, "mi_wf_merge(&"), 2,
               "var and mean share one Welford (lanes merged, then the tail)");
        ok(count(src, "MI_WF(acc") == 2, "the Welford update is in the lane loop and in the scalar tail");
        ok(strstr(src, "mi_wf_merge") != NULL, "lanes are merged");
        ok(strstr(src, "_nan") != NULL, "amax tracks NaN beside the vectorized max");
        ok(count(src, "#pragma omp simd") >= 2, "the row loops are omp simd");
    }
    free(src);
    free(compile_check(ctx, "var_mean_amax", var_mean_amax, 5 * 53 + 52));   /* NaN in the tail */
    free(compile_check(ctx, "var_mean_amax", var_mean_amax, 7 * 53 + 3));    /* NaN in a lane block */

    src = compile_check(ctx, "softmax", softmax, -1);
    if (src) {
        ok(strstr(src, "loc_") != NULL, "softmax keeps exp in a row-local array");
        ok(strstr(src, "reduction(max:") && strstr(src, "reduction(|:"), "amax is an omp simd max reduction with a NaN flag");
    }
    free(src);
    free(compile_check(ctx, "softmax", softmax, 2 * 70 + 69));

    src = compile_check(ctx, "col_sum_max", col_sum_max, -1);
    if (src) ok(strstr(src, "mi_t") && strstr(src, "mi_n"), "column reductions walk tiles of the output dim");
    free(src);
    free(compile_check(ctx, "col_sum_max", col_sum_max, 44 * 150 + 149));

    src = compile_check(ctx, "full_sum", full_sum, -1);
    if (src) ok(strstr(src, "parallel for reduction(+:") || strstr(src, "parallel for simd reduction(+:"), "a full reduction is a parallel reduction");
    free(src);
    free(compile_check(ctx, "full_sum", full_sum, 123));

    src = compile_check(ctx, "cat3", cat3, -1);
    if (src) {
        /* on the CPU a cat is a ConcatKernel (lowering.py): each input stores its own slice
         * (NonOwningLayout), one loop per input with no select; codegen_split's split of a
         * masked loop is checked on constant_pad_nd and where below */
        ok(strstr(src, "p1 = 0; p1 < 21LL") && strstr(src, "p1 = 0; p1 < 7LL") && strstr(src, "p1 = 0; p1 < 4LL") &&
           strstr(src, "buf3[((32LL*p0) + p1 + 21LL)]") && strstr(src, "buf3[((32LL*p0) + p1 + 28LL)]"),
           "the cat is one loop per input, each storing its slice of the cat's buffer");
        is_int(count(src, "mi_min(20LL") + count(src, "mi_max(0LL"), 0, "no clamped index is left");
    }
    free(src);

    src = compile_check(ctx, "pad_right", pad_right, -1);
    if (src) ok(strstr(src, "p1 = 0LL; p1 < 21LL") && strstr(src, "p1 = 21LL; p1 < 32LL"), "a pad's mask splits the loop at 21");
    free(src);

    src = compile_check(ctx, "where_pow", where_pow, -1);
    if (src) {
        ok(strstr(src, "p1 = 0LL; p1 < 5LL") && strstr(src, "p1 = 5LL; p1 < 12LL"), "the select on the index splits the loop at 5");
    }
    free(src);
    src = compile_check(ctx, "pows", pows, -1);
    if (src) {
        is_int(count(src, "mi_powf(tmp"), 1, "pow by 3 and by -2 are multiplications (and a reciprocal); 2.5 stays pow");
        ok(strstr(src, "sqrtf(tmp") != NULL, "pow by 0.5 is sqrt");
    }
    free(src);

    src = compile_check(ctx, "sdpa_plain", sdpa_plain, -1);
    if (src) ok(strstr(src, "mi_sdpa_gemm(fast, 1,") != NULL, "attention is the blocked flash kernel");
    free(src);
    free(compile_check(ctx, "sdpa_causal", sdpa_causal, -1));
    free(compile_check(ctx, "sdpa_mask", sdpa_mask, -1));

    src = compile_check(ctx, "var_mean_97", var_mean_97, -1);   /* 3 blocks of 32 lanes + a tail of 1 */
    if (src) is_int(count(src, "mi_wf_lanes_float(&"), 1, "the lanes merge in closed form, once");
    free(src);

    /* x / y[row] stays a division, as Inductor emits it: the same expression recomputed in
     * another kernel (where y is not loop-invariant) must give the same bits; a reciprocal
     * multiply here broke hard Gumbel-softmax's y_hard - y_soft + y_soft == y_hard (the unseen
     * log cuda_gumbel_softmax) and measured no faster (bench/README.md "Streaming kernels") */
    src = compile_check(ctx, "row_div", row_div, -1);
    if (src) ok(strstr(src, "float tmp2 = tmp0 / tmp1;") && strstr(src, "float tmp4 = tmp0 / tmp3;"), "divisions by a row value and by an element stay divisions");
    free(src);

    src = compile_check(ctx, "softmax_1000", softmax_1000, -1);   /* 20 kB: below any LLC */
    if (src) ok(!strstr(src, "mi_stream_row(&") && strstr(src, "__builtin_prefetch(&arg0_1[(mi_k + (1000LL*p0) + 1000LL)], 0, 3);"),
                "a small output is stored plainly; the exp pass prefetches the next row of the input its max pass read");
    free(src);
    setenv("MINDUCTOR_STREAM_BYTES", "1", 1);
    src = compile_check(ctx, "softmax_1000", softmax_1000, -1);
    if (src) {
        ok(strstr(src, "float mi_so_buf3[1000] __attribute__((aligned(64)));") && strstr(src, "mi_so_buf3[p1] = ") &&
           strstr(src, "mi_stream_row(&buf3[(1000LL*p0)], mi_so_buf3, 4000);"),
           "an output over the threshold is staged per row and streamed out");
        ok(strstr(src, "#pragma omp for nowait") && strstr(src, "    mi_stream_fence();\n    }\n}"),
           "each thread fences its streamed stores before the parallel region ends");
    }
    free(src);
    free(compile_check(ctx, "softmax_1000", softmax_1000, 3 * 1000 + 999));
    setenv("MINDUCTOR_PREFETCH", "0", 1);
    src = compile_check(ctx, "softmax_1000", softmax_1000, -1);
    if (src) ok(!strstr(src, "__builtin_prefetch(&") && strstr(src, "mi_stream_row(&"), "MINDUCTOR_PREFETCH=0: streamed, no prefetch");
    free(src);
    unsetenv("MINDUCTOR_PREFETCH");
    unsetenv("MINDUCTOR_STREAM_BYTES");

    mi_ctx_free(ctx);
    return exit_status();
}
