/* test_cuda_gemm_plan.c — the cuBLAS call plan of the CUDA backend's GEMMs
 * (core/codegen/codegen_cuda_gemm_plan.h, the same text the generated modules carry), checked on
 * the CPU: for row-major strided operands (contiguous, transposed, padded rows, size-1 dims with
 * odd strides, a transposed C), the plan's column-major call is run by a reference of cuBLAS's
 * gemm semantics (op N / op T, lda / ldb / ldc) and must give exactly the row-major product;
 * broadcast operands (stride 0) must have no plan. Then the generated CUDA text: which extern
 * runs where (cuBLAS GEMM with its fallback, the flash attention kernel for a causal and a masked
 * attention, convolution as im2col + GEMM instead of a host round trip). */
#include "tap.h"
#include "codegen/codegen_cuda.h"
#include "codegen/codegen_cuda_gemm_plan.h"
#include "compile_fx/compile_fx.h"

#include <stdint.h>
#include <string.h>

MI_GEMM_PLAN_SRC

/* cuBLAS's gemm, column-major: C'(i,j) = sum_k op(X)(i,k) op(Y)(k,j), i < m, j < n */
static void colmajor_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double *X, int64_t ldx,
                          const double *Y, int64_t ldy, double *C, int64_t ldc) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t q = 0; q < k; q++)
                s += (ta ? X[q + i * ldx] : X[i + q * ldx]) * (tb ? Y[j + q * ldy] : Y[q + j * ldy]);
            C[i + j * ldc] = s;
        }
}

typedef struct Case { const char *what; int64_t M, N, K, sa0, sa1, sb0, sb1, sc0, sc1; int want_ok; } Case;

/* Fill A and B through their strides, run the plan's call, compare every C element with the
 * row-major product. */
static void one(const Case *c) {
    MiGemmPlan p = mi_gemm_plan(c->M, c->N, c->K, c->sa0, c->sa1, c->sb0, c->sb1, c->sc0, c->sc1);
    if (!c->want_ok) { ok(!p.ok, "%s: no plan (the templated GEMM runs)", c->what); return; }
    if (!ok(p.ok, "%s: has a plan", c->what)) return;
    enum { CAP = 4096 };
    static double A[CAP], B[CAP], C[CAP];
    for (int i = 0; i < CAP; i++) { A[i] = (double)((i * 7) % 13) - 6; B[i] = (double)((i * 5) % 11) - 5; C[i] = 1e9; }
    double ref[256];
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++) {
            double s = 0;
            for (int64_t q = 0; q < c->K; q++) s += A[i * c->sa0 + q * c->sa1] * B[q * c->sb0 + j * c->sb1];
            ref[i * c->N + j] = s;
        }
    /* cuBLAS's argument checks (cublasSgemm: lda >= max(1, op N ? m : k), ldb >= max(1, op N ? k : n), ldc >= max(1, m)) */
    int64_t la = p.ta ? c->K : p.m, lb = p.tb ? p.n : c->K;
    ok(p.lda >= (la > 1 ? la : 1) && p.ldb >= (lb > 1 ? lb : 1) && p.ldc >= (p.m > 1 ? p.m : 1), "%s: leading dims cuBLAS accepts", c->what);
    /* cuBLAS's first operand is B (A when swapped), its second A (B when swapped) */
    colmajor_gemm(p.ta, p.tb, p.m, p.n, c->K, p.swap ? A : B, p.lda, p.swap ? B : A, p.ldb, C, p.ldc);
    int bad = 0;
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++)
            if (C[i * c->sc0 + j * c->sc1] != ref[i * c->N + j]) bad++;
    ok(bad == 0, "%s: the column-major call gives A @ B (ta %d tb %d lda %lld ldb %lld ldc %lld swap %d; %d wrong)", c->what, p.ta, p.tb,
       (long long)p.lda, (long long)p.ldb, (long long)p.ldc, p.swap, bad);
}

static bool has(const char *s, const char *needle) { return s && strstr(s, needle); }

/* CUDA source of an FX graph (post-grad form, device cuda) */
static char *cuda_of(MiCtx *ctx, const char *body) {
    char src[4096] = "class GraphModule(torch.nn.Module):\n";
    for (const char *l = body; *l;) {   /* the body indented under the class */
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l + 1) : strlen(l);
        strcat(src, "    ");
        strncat(src, l, n);
        l += n;
    }
    Graph *g = fx_parse(ctx, src, strlen(src), "t.py", 1);
    if (!g) return NULL;
    ops_resolve_graph(g);
    ctx->target = MI_DEV_CUDA;
    CompiledFx c;
    compile_fx_init(&c, g);
    char *out = compile_fx(ctx, &c, CFX_GENERATED) == 0 && c.code ? strdup(c.code) : NULL;
    compile_fx_free(&c);
    graph_free(g);
    return out;
}

/* A graph's CUDA source must hold every `want` text and none of the `absent` ones. */
typedef struct TextCase { const char *what, *graph; const char *want[8], *absent[4]; } TextCase;

static void text_case(MiCtx *ctx, const TextCase *t) {
    char *src = cuda_of(ctx, t->graph);
    bool good = src != NULL;
    for (int k = 0; k < 8 && t->want[k]; k++)
        if (!has(src, t->want[k])) { good = false; diag("missing: %s", t->want[k]); }
    for (int k = 0; k < 4 && t->absent[k]; k++)
        if (has(src, t->absent[k])) { good = false; diag("present: %s", t->absent[k]); }
    ok(good, "%s", t->what);
    if (!src) diag("%s", ctx->err.msg);
    free(src);
}

int main(void) {
    const Case cases[] = {
        {"contiguous A, B, C", 5, 7, 3, 3, 1, 7, 1, 7, 1, 1},
        {"B transposed (a linear weight)", 5, 7, 3, 3, 1, 1, 3, 7, 1, 1},
        {"A transposed", 5, 7, 3, 1, 5, 7, 1, 7, 1, 1},
        {"both transposed, padded rows", 4, 6, 5, 1, 9, 1, 8, 6, 1, 1},
        {"A with padded rows (a slice)", 4, 6, 5, 11, 1, 6, 1, 6, 1, 1},
        {"C with padded rows", 4, 6, 5, 5, 1, 6, 1, 10, 1, 1},
        {"C transposed (channels-last output)", 4, 6, 5, 5, 1, 6, 1, 1, 4, 1},
        {"C transposed, A and B transposed", 4, 6, 5, 1, 4, 1, 5, 1, 4, 1},
        {"M = 1, C row of odd stride", 1, 6, 5, 5, 1, 6, 1, 999, 1, 1},
        {"M = 1, C along a strided dim", 1, 6, 5, 5, 1, 6, 1, 1, 3, 1},
        {"N = 1, K = 1, odd strides", 4, 1, 1, 7, 3, 5, 9, 2, 17, 1},
        {"K = 1 (outer product)", 4, 6, 1, 1, 4, 6, 1, 6, 1, 1},
        {"A broadcast over rows (stride 0)", 4, 6, 5, 0, 1, 6, 1, 6, 1, 0},
        {"B gathered (no unit stride)", 4, 6, 5, 5, 1, 12, 2, 6, 1, 0},
        {"K = 0", 4, 6, 0, 1, 1, 6, 1, 6, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) one(&cases[i]);

    const TextCase texts[] = {
        {"addmm: the module loads cuBLAS at run time, plans the call, keeps the templated GEMM as fallback; the weight's "
         "transpose goes by its strides (1, 32), no copy",
         "def forward(self, arg0_1: \"f32[64, 32]\", arg1_1: \"f32[16, 32]\", arg2_1: \"f32[16]\"):\n"
         "    permute: \"f32[32, 16]\" = torch.ops.aten.permute.default(arg1_1, [1, 0])\n"
         "    addmm: \"f32[64, 16]\" = torch.ops.aten.addmm.default(arg2_1, arg0_1, permute)\n"
         "    return (addmm,)\n",
         {"dlopen(names[i], RTLD_NOW | RTLD_LOCAL)", "\"cublasSgemmStridedBatched\"", "static MiGemmPlan mi_gemm_plan(",
          "mi_gemm_kernel<T, Acc><<<", "extern \"C\" const char *mi_cuda_libs(void)",
          "mi_gemm<float, float>(mi_st, 1, 64LL, 16LL, 32LL,\n                arg0_1 + 0LL, 32LL, 1LL, 0,\n"
          "                arg1_1 + 0LL, 1LL, 32LL, 0,\n                buf0, 16LL, 1LL, 0, 1);"},
         {NULL}},
        {"causal attention with a logsumexp padded to 64 rows: the flash kernel for heads <= 32, on the GPU",
         "def forward(self, arg0_1: \"f32[2, 4, 40, 16]\", arg1_1: \"f32[2, 4, 40, 16]\", arg2_1: \"f32[2, 4, 40, 16]\"):\n"
         "    _scaled_dot_product_efficient_attention = torch.ops.aten._scaled_dot_product_efficient_attention.default(arg0_1, arg1_1, arg2_1, None, True, 0.0, True)\n"
         "    getitem: \"f32[2, 4, 40, 16]\" = _scaled_dot_product_efficient_attention[0]\n"
         "    getitem_1: \"f32[2, 4, 64]\" = _scaled_dot_product_efficient_attention[1]\n"
         "    return (getitem, getitem_1)\n",
         {"mi_sdpa<32>(mi_st, 2LL, 4LL, 40LL, 40LL, 16LL, 16LL, 0.25f,", "64LL,\n            1, NULL, 0,"},
         {"host round trip", "runs on the host"}},
        {"a boolean mask broadcast over batch and heads: strides (0, 0, 8, 1), the kernel for heads <= 128",
         "def forward(self, arg0_1: \"f32[2, 4, 8, 80]\", arg1_1: \"f32[2, 4, 8, 80]\", arg2_1: \"f32[2, 4, 8, 80]\", arg3_1: \"b8[8, 8]\"):\n"
         "    _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, False, attn_mask = arg3_1)\n"
         "    getitem: \"f32[2, 4, 8, 80]\" = _scaled_dot_product_flash_attention_for_cpu[0]\n"
         "    return (getitem,)\n",
         {"mi_sdpa<128>(mi_st, 2LL, 4LL, 8LL, 8LL, 80LL, 80LL,", "0, arg3_1 + 0LL, 1, MiStrides4{{0, 0, 8LL, 1LL}});"},
         {"runs on the host"}},
        {"convolution: im2col + GEMM on the GPU, stride and padding in the geometry",
         "def forward(self, arg0_1: \"f32[4, 3, 9, 9]\", arg1_1: \"f32[6, 3, 3, 3]\"):\n"
         "    convolution: \"f32[4, 6, 5, 5]\" = torch.ops.aten.convolution.default(arg0_1, arg1_1, None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1)\n"
         "    return (convolution,)\n",
         {"extern_kernels.convolution: im2col + GEMM", "mi_g.st[1] = 2LL;", "mi_g.pd[2] = 1LL;",
          "if (mi_conv<float, float>(mi_st, mi_sms, 4LL, 3LL, 6LL, 1LL, mi_g,"},
         {"runs on the host"}},
        {"a transposed convolution still runs on the host",
         "def forward(self, arg0_1: \"f32[4, 3, 9, 9]\", arg1_1: \"f32[3, 6, 3, 3]\"):\n"
         "    convolution: \"f32[4, 6, 11, 11]\" = torch.ops.aten.convolution.default(arg0_1, arg1_1, None, [1, 1], [0, 0], [1, 1], True, [0, 0], 1)\n"
         "    return (convolution,)\n",
         {"runs on the host"}, {"mi_conv<"}},
    };
    MiCtx *ctx = mi_ctx_new();
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) text_case(ctx, &texts[i]);
    mi_ctx_free(ctx);
    return done_testing();
}
