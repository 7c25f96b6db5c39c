/* test_hop9.c — the higher-order ops of the ninth batch of unseen models, on computed values:
 *   - a cond whose branches name their placeholders as the outer graph does ("arg0_1"):
 *     fake_tensor_prop puts the example inputs' layouts on the top graph only
 *     (cpu_torch_cond failed with "example input 'arg0_1' has size 6 in dim 0, the placeholder 4");
 *   - dict literals in FX text (flex_attention's kernel_options): parse, print back exactly,
 *     JSON round trip, errors with file:line:col;
 *   - higher_order.flex_attention (cuda_flex_attention_causal): math_attention's values against
 *     hand-computed attention (a score_mod using b/h/q/kv, a causal mask_mod, GQA, a fully
 *     masked row), the fake impl's metas, the compiled C module (a FallbackKernel running the
 *     reference) against the interpreter, nvcc on the CUDA source. */
#include "tap.h"
#include "fx_passes/passes.h"
#include "ops/interp.h"
#include "tests/support/compiled_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MiCtx *ctx;

#define parsed(fx) cc_parsed(ctx, fx, "hop9.py")

/* ---- cond: the example inputs belong to the top graph ---- */

static const char *COND_FX =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[6, 6][6, 1]cpu\", arg1_1: \"f32[4, 6][6, 1]cpu\"):\n"
    "        permute: \"f32[6, 6][1, 6]cpu\" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None\n"
    "        mm: \"f32[4, 6][6, 1]cpu\" = torch.ops.aten.mm.default(arg1_1, permute);  arg1_1 = permute = None\n"
    "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(mm)\n"
    "        gt: \"b8[][]cpu\" = torch.ops.aten.gt.Scalar(sum_1, 0);  sum_1 = None\n"
    "        true_graph_0 = self.true_graph_0\n"
    "        false_graph_0 = self.false_graph_0\n"
    "        cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (mm,));  gt = true_graph_0 = false_graph_0 = mm = None\n"
    "        getitem: \"f32[4, 6][6, 1]cpu\" = cond[0];  cond = None\n"
    "        return (getitem,)\n"
    "\n"
    "    class true_graph_0(torch.nn.Module):\n"
    "        def forward(self, arg0_1: \"f32[4, 6][6, 1]cpu\"):\n"
    "            sin: \"f32[4, 6][6, 1]cpu\" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None\n"
    "            return (sin,)\n"
    "\n"
    "    class false_graph_0(torch.nn.Module):\n"
    "        def forward(self, arg0_1: \"f32[4, 6][6, 1]cpu\"):\n"
    "            cos: \"f32[4, 6][6, 1]cpu\" = torch.ops.aten.cos.default(arg0_1);  arg0_1 = None\n"
    "            return (cos,)\n";

static void test_cond_layouts(void) {
    Graph *g = parsed(COND_FX);
    if (!ok(g != NULL, "cond graph parses")) return;
    /* the example inputs as compile_fx gets them: arg0_1 is the outer f32[6, 6] */
    int64_t s0[2] = {6, 6}, t0[2] = {1, 6}, s1[2] = {4, 6}, t1[2] = {6, 1};
    InputLayout l[2] = {{"arg0_1", 2, s0, t0}, {"arg1_1", 2, s1, t1}};
    PassManager *pm = pm_new(ctx, g, NULL, 0);
    pm_set_input_layouts(pm, l, 2);
    int rc = pm_run_all(pm);
    if (rc < 0) diag("%s", ctx->err.msg);
    ok(rc == pm_num_passes(pm) && pm_first_failure(pm) < 0, "the passes run: the branches' arg0_1 f32[4, 6] is not matched with the outer example input f32[6, 6]");
    mi_clear_err(ctx);
    const Graph *r = pm_graph(pm);
    const Graph *tb = r ? graph_subgraph(r, "true_graph_0") : NULL;
    const Node *ph = tb ? graph_find(tb, "arg0_1") : NULL;
    int64_t st0 = -1;
    ok(ph && ph->meta.ndim == 2 && sym_is_int(ph->meta.stride[0], &st0) && st0 == 6, "the branch placeholder keeps its strides [6, 1] (got %lld)", (long long)st0);
    const Node *top = r ? graph_find(r, "arg0_1") : NULL;
    int64_t a0 = -1;
    ok(top && sym_is_int(top->meta.stride[0], &a0) && a0 == 1, "the outer arg0_1 takes the example input's strides [1, 6] (got %lld)", (long long)a0);
    pm_free(pm);
    graph_free(g);
}

/* ---- dict literals ---- */

static const char *DICT_FX =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[4][1]cpu\"):\n"
    "        y: \"f32[4][1]cpu\" = torch.ops.aten.relu.default(x);  x = None\n"
    "        z: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(y, 2, opts = {'BACKEND': 'AUTO', 'N': 3, 1: -0.5, 'L': [1, (2,)], 'E': {}})\n"
    "        return (z,)\n";

static void test_dict(void) {
    Graph *g = parsed(DICT_FX);
    if (!ok(g != NULL, "a call with a dict literal parses")) return;
    const Node *z = graph_find(g, "z");
    const Value *d = z && z->nkwargs == 1 ? &z->kwargs[0].v : NULL;
    ok(d && d->kind == V_DICT && d->list.n == 10, "the value is a dict of 5 pairs");
    const Value *n = value_dict_get(d, "N"), *b = value_dict_get(d, "BACKEND");
    ok(n && n->kind == V_INT && n->i == 3 && b && b->kind == V_STR && !strcmp(b->s, "AUTO"), "value_dict_get: 'N' -> 3, 'BACKEND' -> 'AUTO'");
    ok(value_dict_get(d, "nope") == NULL, "value_dict_get of a missing key -> NULL");
    char *txt = fx_print(g, true);
    ok(txt && strstr(txt, "opts = {'BACKEND': 'AUTO', 'N': 3, 1: -0.5, 'L': [1, (2,)], 'E': {}})"), "printed back as Python's dict repr");
    char *js = graph_to_json(g);
    Graph *g2 = js ? graph_from_json(ctx, js, strlen(js), "hop9.json") : NULL;
    char *txt2 = g2 ? fx_print(g2, true) : NULL;
    ok(txt && txt2 && !strcmp(txt, txt2), "JSON round trip keeps the dict");
    free(txt); free(txt2); free(js);
    graph_free(g2);
    graph_free(g);
    static const struct { const char *arg, *msg; } bad[] = {
        {"{'a': 1", "hop9.py:4:75: expected ',' or '}' in dict, found ')'"},
        {"{'a' 1}", "hop9.py:4:73: expected ':' after a dict key, found '1})'"},
        {"{'a': 1 'b': 2}", "hop9.py:4:76: expected ',' or '}' in dict, found ''b': 2})'"},
        {"{'a': 1, 'a': 2}", "hop9.py:4:77: repeated key in a dict"},
        {"{y: 1}", "hop9.py:4:69: a dict key must be a constant (a string or a number)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char fx[1024];
        snprintf(fx, sizeof fx,
                 "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4][1]cpu\"):\n"
                 "        y: \"f32[4][1]cpu\" = torch.ops.aten.relu.default(x)\n"
                 "        z: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(y, 2, opts = %s)\n        return (z,)\n", bad[i].arg);
        Graph *e = fx_parse(ctx, fx, strlen(fx), "hop9.py", 1);
        char msg[1200];
        mi_err_str(ctx, msg, sizeof msg);
        ok(!e && strstr(msg, bad[i].msg), "%s -> %s", bad[i].arg, bad[i].msg);
        if (!strstr(msg, bad[i].msg)) diag("got: %s", msg);
        graph_free(e);
        mi_clear_err(ctx);
    }
}

/* ---- flex_attention ---- */

/* q [1, 2, 4, 3], k [1, 1, 5, 3], v [1, 1, 5, 2] (GQA: both query heads read kv head 0);
 * score_mod: score + (q_idx - kv_idx) * (h + 1) * 0.25; mask_mod: kv_idx <= q_idx + OFF. */
static const char *FLEX_FX =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[1, 2, 4, 3][24, 12, 3, 1]cpu\", arg1_1: \"f32[1, 1, 5, 3][15, 15, 3, 1]cpu\", arg2_1: \"f32[1, 1, 5, 2][10, 10, 2, 1]cpu\"):\n"
    "        sdpa_score0 = self.sdpa_score0\n"
    "        sdpa_mask0 = self.sdpa_mask0\n"
    "        flex_attention = torch.ops.higher_order.flex_attention(arg0_1, arg1_1, arg2_1, sdpa_score0, (4, 5, None, None, None, None, None, None, None, None, 128, 128, sdpa_mask0), 0.5, {'BACKEND': 'AUTO', 'PRESCALE_QK': False, 'OUTPUT_LOGSUMEXP': True}, (), ());  arg0_1 = arg1_1 = arg2_1 = sdpa_score0 = sdpa_mask0 = None\n"
    "        getitem: \"f32[1, 2, 4, 2][16, 8, 2, 1]cpu\" = flex_attention[0]\n"
    "        getitem_1: \"f32[1, 2, 4][8, 4, 1]cpu\" = flex_attention[1];  flex_attention = None\n"
    "        return (getitem, getitem_1)\n"
    "\n"
    "    class sdpa_score0(torch.nn.Module):\n"
    "        def forward(self, arg0_1: \"f32[][]cpu\", arg1_1: \"i32[][]cpu\", arg2_1: \"i32[][]cpu\", arg3_1: \"i32[][]cpu\", arg4_1: \"i32[][]cpu\"):\n"
    "            sub: \"i32[][]cpu\" = torch.ops.aten.sub.Tensor(arg3_1, arg4_1);  arg3_1 = arg4_1 = None\n"
    "            add: \"i32[][]cpu\" = torch.ops.aten.add.Tensor(arg2_1, 1);  arg2_1 = None\n"
    "            mul: \"i32[][]cpu\" = torch.ops.aten.mul.Tensor(sub, add);  sub = add = None\n"
    "            mul_1: \"f32[][]cpu\" = torch.ops.aten.mul.Tensor(mul, 0.25);  mul = None\n"
    "            add_1: \"f32[][]cpu\" = torch.ops.aten.add.Tensor(arg0_1, mul_1);  arg0_1 = mul_1 = None\n"
    "            return add_1\n"
    "\n"
    "    class sdpa_mask0(torch.nn.Module):\n"
    "        def forward(self, arg0_1: \"i32[][]cpu\", arg1_1: \"i32[][]cpu\", arg2_1: \"i32[][]cpu\", arg3_1: \"i32[][]cpu\"):\n"
    "            add: \"i32[][]cpu\" = torch.ops.aten.add.Tensor(arg2_1, OFF);  arg2_1 = None\n"
    "            le: \"b8[][]cpu\" = torch.ops.aten.le.Tensor(arg3_1, add);  arg3_1 = add = None\n"
    "            return le\n";

static Tensor *filled(DType dt, int ndim, const int64_t *size, double a, double b) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, sin(a * (double)i + b));
    return t;
}

/* attention by hand in double, with the same score_mod / mask_mod */
static void expected(const Tensor *q, const Tensor *k, const Tensor *v, int off, double *out, double *lse) {
    for (int h = 0; h < 2; h++)
        for (int m = 0; m < 4; m++) {
            double s[5], mx = -INFINITY, sum = 0;
            for (int n = 0; n < 5; n++) {
                double d = 0;
                for (int e = 0; e < 3; e++) d += tensor_get_f(q, (h * 4 + m) * 3 + e) * tensor_get_f(k, n * 3 + e);
                s[n] = n <= m + off ? d * 0.5 + (m - n) * (h + 1) * 0.25 : -INFINITY;
                if (s[n] > mx) mx = s[n];
            }
            for (int n = 0; n < 5 && mx > -INFINITY; n++) sum += exp(s[n] - mx);
            lse[h * 4 + m] = mx == -INFINITY ? -INFINITY : (mx + log(sum)) / M_LN2;
            for (int e = 0; e < 2; e++) {
                double a = 0;
                for (int n = 0; n < 5 && mx > -INFINITY; n++) a += exp(s[n] - mx) / sum * tensor_get_f(v, n * 2 + e);
                out[(h * 4 + m) * 2 + e] = a;
            }
        }
}

static void test_flex(int off) {
    char *fx = strdup(FLEX_FX);
    char *p = strstr(fx, "OFF");
    char o[4];
    snprintf(o, sizeof o, "%2d", off);   /* "OFF" -> " 0" / "-1" */
    memcpy(p, " ", 1);
    memcpy(p + 1, o, 2);
    Graph *g = parsed(fx);
    free(fx);
    if (!ok(g != NULL, "flex_attention graph parses (mask kv <= q %+d)", off)) return;
    Node *fa = graph_find(g, "flex_attention");
    TensorMeta metas[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    bool mok = fa && op_infer_meta(ctx, g, fa, metas, &nm) == 0 && nm == 3;
    char m0[128] = "", m1[128] = "";
    if (mok) { meta_str(&metas[0], m0, sizeof m0); meta_str(&metas[1], m1, sizeof m1); }
    ok(mok && !strcmp(m0, "f32[1, 2, 4, 2][16, 8, 2, 1]cpu") && !strcmp(m1, "f32[1, 2, 4][8, 4, 1]cpu"),
       "fake impl metas: out %s, lse %s", m0, m1);
    mi_clear_err(ctx);
    Tensor *q = filled(DT_F32, 4, (int64_t[]){1, 2, 4, 3}, 0.7, 0.1), *k = filled(DT_F32, 4, (int64_t[]){1, 1, 5, 3}, 1.3, 0.4),
           *v = filled(DT_F32, 4, (int64_t[]){1, 1, 5, 2}, 0.9, -0.2);
    double eo[16], el[8];
    expected(q, k, v, off, eo, el);
    int no = 0;
    IValue *r = cc_interp(ctx, g, (Tensor *[]){q, k, v}, 3, &no);
    double dout = INFINITY, dlse = INFINITY;
    if (r && no == 2 && r[0].kind == IV_TENSOR && r[1].kind == IV_TENSOR) {
        dout = dlse = 0;
        for (int i = 0; i < 16; i++) dout = fmax(dout, fabs(tensor_get_f(r[0].t, i) - eo[i]));
        for (int i = 0; i < 8; i++) {
            double a = tensor_get_f(r[1].t, i);
            dlse = fmax(dlse, isinf(el[i]) ? (isinf(a) && a < 0 ? 0 : INFINITY) : fabs(a - el[i]));
        }
    }
    ok(dout < 2e-6, "out = softmax(score_mod(q k^T * 0.5) masked) @ v (max abs err %.3g)", dout);
    ok(dlse < 2e-6, "lse = logsumexp / ln 2%s (max abs err %.3g)", off < 0 ? ", -inf on the fully masked row" : "", dlse);
    if (off < 0 && r && no == 2)
        ok(tensor_get_f(r[0].t, 0) == 0 && tensor_get_f(r[0].t, 1) == 0 && tensor_get_f(r[0].t, 8) == 0,
           "a fully masked row gives zeros (_safe_softmax)");
    if (r) interp_free_outputs(r, no);
    ok(cc_c_agrees(ctx, g, (Tensor *[]){q, k, v}, 3, 0), "compiled C (FallbackKernel) = interpreter exactly");
    int nb = cc_cuda_builds(ctx, g);
    if (nb < 0) skip(1, "nvcc not found");
    else ok(nb == 1, "the CUDA source (host round trip of the FallbackKernel) builds with nvcc");
    tensor_unref(q); tensor_unref(k); tensor_unref(v);
    graph_free(g);
}

/* The real post-grad graph of cuda_flex_attention_causal (tests/fixtures/hop/): causal through
 * a score_mod (where(q_idx >= kv_idx, score, -inf)), the noop mask_mod, scale 0.25, the dense
 * block mask built in the graph; on the CPU here. */
static void test_flex_logged(void) {
    const char *path = "tests/fixtures/hop/flex_attention_causal.py";
    Graph *g = graph_load_file(ctx, path);
    if (!ok(g != NULL, "the logged flex_attention graph loads")) { diag("%s", ctx->err.msg); mi_clear_err(ctx); return; }
    ops_resolve_graph(g);
    char *txt = fx_print(g, true), *file = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    if (f) { file = malloc(1 << 16); len = fread(file, 1, (1 << 16) - 1, f); file[len] = 0; fclose(f); }
    ok(txt && file && !strcmp(txt, file), "it prints back exactly (dict, subgraphs returning one value)");
    free(txt); free(file);
    int64_t sz[4] = {1, 2, 128, 16};
    Tensor *q = filled(DT_F32, 4, sz, 0.37, 0.0), *k = filled(DT_F32, 4, sz, 0.53, 1.0), *v = filled(DT_F32, 4, sz, 0.71, 2.0);
    int no = 0;
    IValue *r = cc_interp(ctx, g, (Tensor *[]){q, k, v}, 3, &no);
    double worst = r && no == 1 && r[0].kind == IV_TENSOR ? 0 : INFINITY;
    for (int h = 0; h < 2 && worst < INFINITY; h++)
        for (int m = 0; m < 128; m += 9) {   /* every 9th row, by hand: causal softmax(q k^T / 4) v */
            double s[128], mx = -INFINITY, sum = 0;
            for (int n = 0; n <= m; n++) {
                double d = 0;
                for (int e = 0; e < 16; e++) d += tensor_get_f(q, (h * 128 + m) * 16 + e) * tensor_get_f(k, (h * 128 + n) * 16 + e);
                s[n] = d * 0.25;
                mx = fmax(mx, s[n]);
            }
            for (int n = 0; n <= m; n++) sum += exp(s[n] - mx);
            for (int e = 0; e < 16; e++) {
                double a = 0;
                for (int n = 0; n <= m; n++) a += exp(s[n] - mx) / sum * tensor_get_f(v, (h * 128 + n) * 16 + e);
                worst = fmax(worst, fabs(a - tensor_get_f(r[0].t, (h * 128 + m) * 16 + e)));
            }
        }
    ok(worst < 1e-5, "causal attention by hand on 30 rows (max abs err %.3g)", worst);
    if (r) interp_free_outputs(r, no);
    ok(cc_c_agrees(ctx, g, (Tensor *[]){q, k, v}, 3, 0), "compiled C = interpreter exactly");
    tensor_unref(q); tensor_unref(k); tensor_unref(v);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    test_cond_layouts();
    test_dict();
    test_flex(0);
    test_flex(-1);
    test_flex_logged();
    mi_ctx_free(ctx);
    return done_testing();
}
