/* test_lowering_conv.c — convolution as Inductor's extern kernel (core/lowering/lowering_extern.c
 * lower_convolution, core/codegen/codegen_conv.c): every convolution lowers to an
 * ExternKernelAlloc `extern_kernels.convolution` whose result has the node's layout (channels
 * last from a channels-last input); the C module runs it with oneDNN when the build has it
 * (configure: libdnnl-dev), else the node's reference through the fallback callback. Values:
 * 1-, 2- (grouped, strided, dilated, padded, bias) and 3-d convolutions from the IR interpreter
 * and the compiled module equal the reference interpreter's; transposed ones (oneDNN
 * deconvolution, output_padding past the padding) equal the loops written out here; the
 * convolution_backward FallbackKernel (grouped, transposed) runs with oneDNN in the module and
 * its three gradients agree with the reference interpreter. */
#include "tap.h"
#include "tests/support/codegen_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CONV "tests/fixtures/lowering/conv.py"
#define CONVT "tests/fixtures/lowering/conv_transposed.py"
#define CONVB "tests/fixtures/lowering/conv_backward.py"

/* deterministic inputs: small distinct values */
static void fill_inputs(MiCtx *ctx, const Graph *g, IValue *in, int *nin) {
    *nin = 0;
    for (int i = 0; i < g->n; i++) {
        const Node *p = g->nodes[i];
        if (p->kind != N_PLACEHOLDER) continue;
        int64_t sz[MI_MAX_DIMS], st[MI_MAX_DIMS];
        for (int d = 0; d < p->meta.ndim; d++) { sym_is_int(p->meta.size[d], &sz[d]); sym_is_int(p->meta.stride[d], &st[d]); }
        Tensor *t = tensor_new_strided(ctx, DT_F32, p->meta.ndim, sz, st, 0);
        for (int64_t k = 0; k < tensor_numel(t); k++) tensor_set_f(t, k, (double)((k * 37 + *nin * 11) % 23) / 8.0 - 1.4);
        in[(*nin)++] = (IValue){.kind = IV_TENSOR, .t = t};
    }
}

static int count_conv(const IrModule *m) {
    int n = 0;
    for (int i = 0; i < m->nbufs; i++) n += m->bufs[i]->kind == BUF_EXTERN && m->bufs[i]->ext == EXT_CONV;
    return n;
}

static bool close_to(const Tensor *a, const Tensor *b, double tol, const char *what) {
    if (!a || !b || tensor_numel(a) != tensor_numel(b)) return false;
    for (int64_t k = 0; k < tensor_numel(a); k++)
        if (fabs(tensor_get_f(a, k) - tensor_get_f(b, k)) > tol * (1 + fabs(tensor_get_f(b, k)))) {
            diag("%s[%lld] = %g, want %g", what, (long long)k, tensor_get_f(a, k), tensor_get_f(b, k));
            return false;
        }
    return true;
}

/* transposed 2-d convolution by its definition: x[n, c, h, w] adds x * w[c, o % (O/G), a, b]
 * into y[n, o, h*s - p + a*d, w*s - p + b*d] for the O/G outputs o of c's group, plus bias */
static void ref_transposed(const Tensor *x, const Tensor *w, const Tensor *bias, int64_t G, const int64_t *s,
                           const int64_t *p, const int64_t *d, Tensor *y) {
    int64_t N = x->size[0], C = x->size[1], H = x->size[2], W = x->size[3], Og = w->size[1];
    int64_t KH = w->size[2], KW = w->size[3], O = y->size[1], OH = y->size[2], OW = y->size[3];
    for (int64_t k = 0; k < tensor_numel(y); k++) tensor_set_f(y, k, bias ? tensor_get_f(bias, (k / (OH * OW)) % O) : 0);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oc = 0; oc < Og; oc++)
                for (int64_t a = 0; a < KH; a++)
                    for (int64_t b = 0; b < KW; b++)
                        for (int64_t h = 0; h < H; h++)
                            for (int64_t ww = 0; ww < W; ww++) {
                                int64_t i = h * s[0] - p[0] + a * d[0], j = ww * s[1] - p[1] + b * d[1];
                                if (i < 0 || i >= OH || j < 0 || j >= OW) continue;
                                int64_t o = (c / (C / G)) * Og + oc, yk = ((n * O + o) * OH + i) * OW + j;
                                double v = tensor_get_f(x, ((n * C + c) * H + h) * W + ww) * tensor_get_f(w, ((c * Og + oc) * KH + a) * KW + b);
                                tensor_set_f(y, yk, tensor_get_f(y, yk) + v);
                            }
}

/* One fixture: the graph, its inputs, the lowered module and the compiled one. */
typedef struct Case { Graph *g; IValue in[16]; int nin; CgBuild b; } Case;

static bool case_open(MiCtx *ctx, Case *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->g = graph_load_file(ctx, path);
    if (!ok(c->g != NULL, "%s loads", path)) { diag("%s", ctx->err.msg); return false; }
    ops_resolve_graph(c->g);
    fill_inputs(ctx, c->g, c->in, &c->nin);
    cg_compile(ctx, c->g, &c->b, 0);
    if (!ok(c->b.m != NULL, "%s lowers", path)) { diag("%s", ctx->err.msg); return true; }
    if (!ok(c->b.rt != NULL, "%s compiles", path)) diag("%s", ctx->err.msg);
    return true;
}
static void case_close(Case *c) {
    cg_free(&c->b);
    for (int i = 0; i < c->nin; i++) ivalue_clear(&c->in[i]);
    graph_free(c->g);
}
/* the module's outputs against the reference interpreter's (n of them, within tol) */
static void against_interp(MiCtx *ctx, Case *c, int n, double tol, const char *what) {
    IValue *ref = NULL, *got = NULL;
    int nref = 0, ngot = 0;
    ok(interp_run(ctx, c->g, c->in, c->nin, &ref, &nref) == 0 && nref == n, "%s: the reference interpreter runs", what);
    if (c->b.rt && ok(rt_run(ctx, c->b.rt, c->g, c->in, c->nin, &got, &ngot, NULL) == 0 && ngot == n, "%s: the module runs", what))
        for (int j = 0; j < n && j < nref; j++) ok(close_to(got[j].t, ref[j].t, tol, what), "%s: output %d agrees with the interpreter", what, j);
    else if (c->b.rt) diag("%s", ctx->err.msg);
    if (c->b.m && nref == n) {
        interp_free_outputs(got, ngot);
        got = NULL;
        ngot = 0;
        if (ok(ir_interp_run(ctx, c->b.m, c->in, c->nin, &got, &ngot) == 0 && ngot == n, "%s: IR interpreter runs", what))
            for (int j = 0; j < n; j++) ok(close_to(got[j].t, ref[j].t, 1e-5, "IR interp"), "%s: IR interpreter output %d", what, j);
        else diag("%s", ctx->err.msg);
    }
    interp_free_outputs(got, ngot);
    interp_free_outputs(ref, nref);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
#ifdef HAVE_DNNL
    const bool dnnl = true;
#else
    const bool dnnl = false;
#endif
    Case c;
    if (case_open(ctx, &c, CONV) && c.b.m) {
        ok(count_conv(c.b.m) == 4, "four extern convolutions (%d)", count_conv(c.b.m));
        char *txt = ir_print(c.b.m);
        /* on the cpu a graph with convolutions runs them channels last (decide_layout_opt): the
         * 2-d convolution's contiguous input and weight are copied channels last first (op0, op1),
         * its result is channels last; the returned relu (buf3) has its annotated strides; the 1-d
         * and 3-d ones keep their layouts */
        ok(txt && strstr(txt, "op2: ExternKernelSchedulerNode(ExternKernelAlloc)") && strstr(txt, "op2.node.kernel = extern_kernels.convolution") &&
               strstr(txt, "buf0.layout = FixedLayout('cpu', torch.float32, size=[2, 4, 9, 9], stride=[324, 1, 36, 4])") &&
               strstr(txt, "buf1.layout = FixedLayout('cpu', torch.float32, size=[6, 2, 3, 3], stride=[18, 1, 6, 2])") &&
               strstr(txt, "buf2.layout = FixedLayout('cpu', torch.float32, size=[2, 6, 3, 5], stride=[90, 1, 30, 6])") &&
               strstr(txt, "buf3.layout = FixedLayout('cpu', torch.float32, size=[2, 6, 3, 5], stride=[90, 15, 5, 1])") &&
               strstr(txt, "buf4.layout = FixedLayout('cpu', torch.float32, size=[2, 5, 10], stride=[50, 10, 1])") &&
               strstr(txt, "buf7.layout = FixedLayout('cpu', torch.float32, size=[2, 6, 3, 5], stride=[90, 1, 30, 6])"),
           "the IR shows ExternKernelAlloc / extern_kernels.convolution, the channels-last copies and results");
        free(txt);
        ok(c.b.src && (dnnl ? strstr(c.b.src, "mi_conv(&site, 3, 0, 1LL") != NULL : strstr(c.b.src, "the reference") != NULL),
           "the module calls %s", dnnl ? "oneDNN" : "the reference");
        against_interp(ctx, &c, 4, 1e-5, "convolution");
        against_interp(ctx, &c, 4, 1e-5, "again (the kept primitives)");
    }
    case_close(&c);

    /* transposed: against the definition written out above */
    if (case_open(ctx, &c, CONVT) && c.b.m) {
        ok(count_conv(c.b.m) == 2, "transposed: two extern convolutions");
        IValue *got = NULL;
        int ngot = 0;
        if (c.b.rt && ok(rt_run(ctx, c.b.rt, c.g, c.in, c.nin, &got, &ngot, NULL) == 0 && ngot == 2, "transposed: the module runs")) {
            int64_t s0[2] = {2, 2}, p0[2] = {0, 1}, d0[2] = {1, 1}, s1[2] = {1, 1}, p1[2] = {0, 0}, d1[2] = {2, 1};
            int64_t y0s[4] = {2, 3, 20, 18}, y1s[4] = {2, 6, 11, 10};
            Tensor *y0 = tensor_new(ctx, DT_F32, 4, y0s), *y1 = tensor_new(ctx, DT_F32, 4, y1s);
            ref_transposed(c.in[0].t, c.in[1].t, NULL, 1, s0, p0, d0, y0);
            ref_transposed(c.in[0].t, c.in[3].t, c.in[2].t, 2, s1, p1, d1, y1);
            ok(close_to(got[0].t, y0, 1e-5, "transposed"), "transposed, output_padding past the padding: equals the definition");
            ok(close_to(got[1].t, y1, 1e-5, "transposed grouped"), "transposed, grouped with bias and dilation: equals the definition");
            tensor_unref(y0);
            tensor_unref(y1);
        } else diag("%s", ctx->err.msg);
        interp_free_outputs(got, ngot);
        against_interp(ctx, &c, 2, 1e-4, "transposed");
    }
    case_close(&c);

    /* convolution_backward: a FallbackKernel (as Inductor's), run by oneDNN in the module */
    if (case_open(ctx, &c, CONVB) && c.b.m) {
        ok(c.b.src && (dnnl ? strstr(c.b.src, "mi_conv_status = mi_conv_bwd(&site, 2, 1, 1LL") != NULL
                          : strstr(c.b.src, "FallbackKernel: torch.ops.aten.convolution_backward") != NULL),
           "convolution_backward: the module calls %s", dnnl ? "oneDNN (the reference if it refuses)" : "the reference");
        against_interp(ctx, &c, 5, 1e-4, "convolution_backward");
    }
    case_close(&c);
    mi_ctx_free(ctx);
    return exit_status();
}
