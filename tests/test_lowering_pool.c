/* test_lowering_pool.c — the pooling lowerings (core/lowering/lowering_pooling.c): max pooling
 * with indices (padding, ceil_mode), the low-memory offsets pair, avg pooling without padded
 * positions, uneven adaptive avg pooling and the max pooling backward lower to Reductions and
 * Pointwise kernels (no FallbackKernel), and their values — from the IR interpreter and from the
 * compiled C module, fusion on and off — equal PyTorch's definitions, computed here directly
 * (ATen's CPU pooling loops: first maximum wins, indices flat over the input plane). */
#include "tap.h"
#include "tests/support/codegen_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POOL "tests/fixtures/lowering/pooling.py"
#define B 2
#define C 3
#define H 8
#define W 8

/* x[k] = ((k * 193) % 389) / 4 - 40: distinct values (no ties), some negative (relu) */
static double xval(int64_t k) { return (double)((k * 193) % 389) / 4.0 - 40.0; }
/* grad[k] = (k % 7) - 3: small integers, so every sum is exact */
static double gval(int64_t k) { return (double)(k % 7) - 3.0; }

/* max pooling of plane p (H x W) with kernel k, stride s, padding pd, output oh x ow: values and
 * flat indices (first maximum wins) */
static void ref_max_pool(const double *p, int k, int s, int pd, int oh, int ow, double *v, int64_t *ix) {
    for (int i = 0; i < oh; i++)
        for (int j = 0; j < ow; j++) {
            double best = -INFINITY;
            int64_t bi = -1;
            for (int a = 0; a < k; a++)
                for (int b = 0; b < k; b++) {
                    int h = i * s - pd + a, w = j * s - pd + b;
                    if (h < 0 || h >= H || w < 0 || w >= W) continue;
                    if (p[h * W + w] > best) { best = p[h * W + w]; bi = h * W + w; }
                }
            v[i * ow + j] = best;
            ix[i * ow + j] = bi;
        }
}

static int check_out(const Tensor *t, int64_t n, const double *want, const char *what, const char *name) {
    int bad = 0;
    for (int64_t k = 0; k < n && bad < 3; k++) {
        double g = tensor_get_f(t, k);
        if (fabs(g - want[k]) > 1e-5 * (1 + fabs(want[k]))) {
            diag("%s: %s[%lld] = %g, want %g", what, name, (long long)k, g, want[k]);
            bad++;
        }
    }
    return ok(bad == 0, "%s: %s equals PyTorch's definition", what, name);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = graph_load_file(ctx, POOL);
    if (!ok(g != NULL, "%s loads", POOL)) { diag("%s", ctx->err.msg); return exit_status(); }
    ops_resolve_graph(g);
    char why[300];
    ok(lowering_supported(g, why, sizeof why), "pooling ops have lowerings (%s)", why);

    /* inputs and the expected outputs */
    int64_t xs[4] = {B, C, H, W}, gs[4] = {B, C, 5, 5};
    Tensor *x = tensor_new(ctx, DT_F32, 4, xs), *gr = tensor_new(ctx, DT_F32, 4, gs);
    for (int64_t k = 0; k < B * C * H * W; k++) tensor_set_f(x, k, xval(k));
    for (int64_t k = 0; k < B * C * 25; k++) tensor_set_f(gr, k, gval(k));
    IValue in[2] = {{.kind = IV_TENSOR, .t = x}, {.kind = IV_TENSOR, .t = gr}};
    static double mp_v[B * C * 25], mp_i[B * C * 25], lm_v[B * C * 16], lm_i[B * C * 16], avg[B * C * 16],
        ad[B * C * 9], bw[B * C * H * W];
    for (int bc = 0; bc < B * C; bc++) {
        double plane[H * W], relu[H * W], v[25];
        int64_t ix[25];
        for (int k = 0; k < H * W; k++) { plane[k] = xval(bc * H * W + k); relu[k] = plane[k] < 0 ? 0 : plane[k]; }
        /* relu has ties (the zeros): ATen's loop takes the first, as the argmax does */
        ref_max_pool(relu, 3, 2, 1, 5, 5, v, ix);   /* ceil_mode: 5 x 5 */
        for (int k = 0; k < 25; k++) { mp_v[bc * 25 + k] = v[k]; mp_i[bc * 25 + k] = (double)ix[k]; }
        for (int k = 0; k < 25; k++) bw[bc * H * W + ix[k]] += gval(bc * 25 + k);
        ref_max_pool(plane, 2, 2, 0, 4, 4, v, ix);
        for (int k = 0; k < 16; k++) { lm_v[bc * 16 + k] = v[k]; lm_i[bc * 16 + k] = (double)ix[k]; }
        for (int i = 0; i < 4; i++)   /* avg_pool2d 3x3 / 2, padding 1, count_include_pad=False */
            for (int j = 0; j < 4; j++) {
                double s = 0;
                int n = 0;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        int h = i * 2 - 1 + a, w = j * 2 - 1 + b;
                        if (h >= 0 && h < H && w >= 0 && w < W) { s += plane[h * W + w]; n++; }
                    }
                avg[bc * 16 + i * 4 + j] = s / n;
            }
        for (int i = 0; i < 3; i++)   /* adaptive 8 -> 3: rows [i*8/3, ceil((i+1)*8/3)) */
            for (int j = 0; j < 3; j++) {
                int h0 = i * H / 3, h1 = ((i + 1) * H + 2) / 3, w0 = j * W / 3, w1 = ((j + 1) * W + 2) / 3;
                double s = 0;
                for (int h = h0; h < h1; h++)
                    for (int w = w0; w < w1; w++) s += plane[h * W + w];
                ad[bc * 9 + i * 3 + j] = s / ((h1 - h0) * (w1 - w0));
            }
    }
    const double *want[7] = {mp_v, mp_i, lm_v, lm_i, avg, ad, bw};
    const int64_t numel[7] = {B * C * 25, B * C * 25, B * C * 16, B * C * 16, B * C * 16, B * C * 9, B * C * H * W};
    static const char *names[7] = {"max_pool2d values", "max_pool2d indices", "low-memory max values",
                                   "offsets_to_indices", "avg_pool2d", "adaptive_avg_pool2d", "max_pool2d backward"};

    for (int f = 1; f >= 0; f--) {
        ctx->fusion = f;
        char what[64];
        snprintf(what, sizeof what, "fusion %s", f ? "on" : "off");
        CgBuild b;
        cg_compile(ctx, g, &b, 0);
        IrModule *m = b.m;
        if (!ok(m != NULL, "%s: lowers", what)) { diag("%s", ctx->err.msg); cg_free(&b); continue; }
        int nred = 0, nfb = 0;
        for (int i = 0; i < m->nbufs; i++) {
            nred += m->bufs[i]->is_reduction;
            nfb += m->bufs[i]->kind == BUF_EXTERN;
        }
        /* windows of 9 and 4 elements: max / argmax unrolled pointwise (the low-memory max pool
         * patches unroll_reductions_threshold to 25), avg_pool's sum too (_avg_poolnd sums
         * windows of up to 25 in one pointwise) */
        ok(nred == 0 && nfb == 0, "%s: %d reductions (max + argmax twice, avg: all unrolled), %d extern kernels (no fallback)", what, nred, nfb);
        IValue *got = NULL;
        int ngot = 0;
        if (ok(ir_interp_run(ctx, m, in, 2, &got, &ngot) == 0 && ngot == 7, "%s: IR interpreter runs", what))
            for (int j = 0; j < 7; j++) check_out(got[j].t, numel[j], want[j], what, names[j]);
        else diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        RtModule *rt = b.rt;
        if (!ok(rt != NULL, "%s: compiles", what)) diag("%s", ctx->err.msg);
        got = NULL;
        ngot = 0;
        if (rt && ok(rt_run(ctx, rt, g, in, 2, &got, &ngot, NULL) == 0 && ngot == 7, "%s: the module runs", what)) {
            ok(got[1].t->dtype == DT_I64 && got[3].t->dtype == DT_I64, "%s: indices are int64", what);
            for (int j = 0; j < 7; j++) check_out(got[j].t, numel[j], want[j], what, names[j]);
        } else if (rt) diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        cg_free(&b);
    }
    ivalue_clear(&in[0]);
    ivalue_clear(&in[1]);
    graph_free(g);
    mi_ctx_free(ctx);
    return exit_status();
}
