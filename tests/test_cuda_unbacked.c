/* test_cuda_unbacked.c — unbacked SymInts on the CUDA backend (core/codegen/codegen_cuda_unbacked.c):
 * the generated source defines each symbol where Inductor's wrapper does (after the host round
 * trip of masked_select / nonzero from the size the call gives back, after the kernel that
 * writes an item()'s tensor by reading one element back), allocates what they size at its
 * first writer, and builds with nvcc; running it needs a GPU (the lead's GPU run: bench/cuda).
 * The same graphs on the C backend agree with the interpreter on values by hand, so the GPU run
 * has a reference. An output sized by an unbacked symbol is refused by name. */
#include "tap.h"
#include "ops/interp.h"
#include "tests/support/codegen_check.h"
#include "tests/support/compiled_check.h"
#include "tests/support/op_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

/* g's CUDA source (NULL with a diagnostic when it is refused); free() it */
static char *cuda_source(Graph *g) {
    ctx->target = MI_DEV_CUDA;
    CgBuild b;
    char *src = NULL;
    if (g && cg_compile(ctx, g, &b, CG_SOURCE) == 0 && b.src) src = strdup(b.src);
    else diag("cuda source: %s", ctx->err.msg);
    if (g) cg_free(&b);
    ctx->target = MI_DEV_CPU;
    return src;
}

/* text a comes before text b in src (both present), searching from the launch function */
static bool before(const char *src, const char *a, const char *b) {
    const char *from = src ? strstr(src, "static int mi_launch(") : NULL;
    const char *pa = from ? strstr(from, a) : NULL, *pb = from ? strstr(from, b) : NULL;
    return pa && pb && pa < pb;
}

/* cuda_masked_select_unbacked (ninth unseen batch): u0 / u1 from masked_select / nonzero */
static void test_masked_select(void) {
    Graph *g = graph_load_file(ctx, "tests/fixtures/sched_rules/masked_select_unbacked_cuda.py");
    if (g) ops_resolve_graph(g);
    char *src = cuda_source(g);
    ok(src != NULL, "cuda_masked_select_unbacked: the CUDA backend generates it");
    ok(before(src, "fb->run(fb->ctx, \"masked_select\"", "u0 = fo[0].size[0]; mi_sy.v[0] = u0;") &&
           before(src, "u0 = fo[0].size[0]; mi_sy.v[0] = u0;", "fb->run(fb->ctx, \"nonzero\"") &&
           before(src, "fb->run(fb->ctx, \"nonzero\"", "u1 = fo[0].size[0]; mi_sy.v[1] = u1;"),
       "u0 and u1 are defined from the sizes masked_select's and nonzero's calls give back, in order");
    ok(src && strstr(src, "cudaMallocAsync((void **)&buf2, mi_fb + 16, mi_st)") &&
           strstr(src, "cudaMemcpyAsync(buf2, fo[0].data, mi_fb, cudaMemcpyHostToDevice, mi_st)") &&
           strstr(src, "cudaFreeAsync(mi_ub[mi_i], mi_st)"),
       "the data-dependent result goes to device storage allocated then, freed when mi_launch returns");
    ok(src && strstr(src, "    int64_t u0 = 0;") && !strstr(src, "const int64_t u0 = syms[0]; mi_sy.v[0]"),
       "mi_launch keeps u0 as a local it sets, not an entry of syms");
    free(src);
    if (g) CC_NVCC_POINT(ctx, "cuda_masked_select_unbacked", g);
    graph_free(g);
}

static const char *item_fx =
    "class G(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[4, 8][8, 1]DEV\", n: \"i64[][]DEV\", k: \"i64[3][1]DEV\"):\n"
    "        u1: \"Sym(u1)\" = torch.ops.aten._local_scalar_dense.default(n)\n"
    "        sl: \"f32[4, u1][8, 1]DEV\" = torch.ops.aten.slice.Tensor(x, 1, 0, u1)\n"
    "        s: \"f32[][]DEV\" = torch.ops.aten.sum.default(sl)\n"
    "        ks: \"i64[][]DEV\" = torch.ops.aten.sum.default(k)\n"
    "        u2: \"Sym(u2)\" = torch.ops.aten._local_scalar_dense.default(ks)\n"
    "        f2: \"f32[u2][1]DEV\" = torch.ops.aten.full.default([u2], 1.5, dtype = torch.float32, layout = torch.strided, device = device(type='DEVT'), pin_memory = False)\n"
    "        e: \"f32[u2][1]DEV\" = torch.ops.aten.exp.default(f2)\n"
    "        s2a: \"f32[][]DEV\" = torch.ops.aten.sum.default(e)\n"
    "        srt = torch.ops.aten.sort.default(e)\n"
    "        srt0: \"f32[u2][1]DEV\" = srt[0]\n"
    "        s2b: \"f32[][]DEV\" = torch.ops.aten.amax.default(srt0, [0])\n"
    "        s2: \"f32[][]DEV\" = torch.ops.aten.add.Tensor(s2a, s2b)\n"
    "        return (s, s2)\n";

/* item_fx with DEV / DEVT replaced */
static Graph *item_graph(const char *dev, const char *devt) {
    char buf[4096], *o = buf;
    for (const char *p = item_fx; *p && o < buf + sizeof buf - 16;) {
        if (!strncmp(p, "DEVT", 4)) { o += sprintf(o, "%s", devt); p += 4; }
        else if (!strncmp(p, "DEV", 3)) { o += sprintf(o, "%s", dev); p += 3; }
        else *o++ = *p++;
    }
    *o = 0;
    return cc_parsed(ctx, buf, "cuda_unbacked.py");
}

/* item() of an input (u1) and of a computed sum (u2), u2 sizing intermediates and a sort */
static void test_item(void) {
    Graph *g = item_graph("cpu", "cpu");
    double xv[32];
    for (int i = 0; i < 32; i++) xv[i] = i % 8;
    Tensor *x = cc_tensor(ctx, DT_F32, 2, (int64_t[]){4, 8}, xv), *n = cc_tensor(ctx, DT_I64, 0, NULL, (double[]){5}),
           *k = cc_tensor(ctx, DT_I64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, (Tensor *[]){x, n, k}, 3, &no) : NULL;
    /* u1 = 5: 4 rows of 0+1+2+3+4 = 40; u2 = 6: sum(exp(1.5) x 6) + max = 7 e^1.5 */
    ok(o && no == 2 && og_values(o[0].t, (double[]){40}, 1, 1e-5) && og_values(o[1].t, (double[]){7 * exp(1.5)}, 1, 1e-4),
       "the reference on the CPU: u1 = 5, u2 = 6 by hand");
    if (o) interp_free_outputs(o, no);
    ok(g && cc_c_agrees(ctx, g, (Tensor *[]){x, n, k}, 3, 1e-5), "the C backend agrees (the reference for the GPU run)");
    graph_free(g);
    tensor_unref(x); tensor_unref(n); tensor_unref(k);
    g = item_graph("cuda:0", "cuda");
    char *src = cuda_source(g);
    ok(src && strstr(src, "/* u1 = n.item(): one element to the host */") && before(src, "u1 = (int64_t)mi_it;", "<<<"),
       "u1 = n.item() is read back on entry, before the first launch");
    ok(src && before(src, "u2 = (int64_t)mi_it; mi_sy.v[1] = u2;", "cudaMallocAsync((void **)&") &&
           strstr(src, "sizeof(float) * (size_t)(u2) + 16, mi_st));   /* sized by an unbacked symbol, known now */"),
       "u2 is read back after the kernel summing k, then the buffers it sizes are allocated");
    free(src);
    if (g) CC_NVCC_POINT(ctx, "item() on cuda", g);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_masked_select();
    test_item();
    mi_ctx_free(ctx);
    return done_testing();
}
