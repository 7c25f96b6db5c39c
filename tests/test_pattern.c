/* test_pattern.c — the pattern matcher and the user pattern file: parsing (good file and
 * errors with file:line:col), matching with wildcards, inner-node liveness, device
 * constraints, meta guard for wildcard returns, retarget rules, Inductor-style names for new
 * nodes; and the built-in rewrites on small cuda graphs (addmm split, online softmax). */
#include "fx_passes/pattern.h"
#include "ops/ops.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static const char G[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 8][8, 1]DEV\", arg1_1: \"f32[4, 8][8, 1]DEV\"):\n"
    "        relu: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
    "        relu_1: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.relu.default(relu);  relu = None\n"
    "        neg: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.neg.default(arg1_1)\n"
    "        sub: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.sub.Tensor(relu_1, neg);  relu_1 = neg = None\n"
    "        neg_1: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.neg.default(sub)\n"
    "        neg_2: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.neg.default(neg_1);  neg_1 = None\n"
    "        _unsafe_view: \"f32[32][1]DEV\" = torch.ops.aten._unsafe_view.default(neg_2, [32]);  neg_2 = None\n"
    "        relu_2: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.relu.default(sub)\n"
    "        relu_3: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.relu.default(relu_2)\n"
    "        add: \"f32[4, 8][8, 1]DEV\" = torch.ops.aten.add.Tensor(relu_2, relu_3);  relu_2 = relu_3 = None\n"
    "        return (_unsafe_view, add, sub)\n";

static Graph *parse_dev(MiCtx *ctx, const char *dev) {
    StrBuf sb;
    sb_init(&sb);
    for (const char *p = G; *p;) {
        const char *d = strstr(p, "DEV");
        if (!d) { sb_put(&sb, p); break; }
        sb_putn(&sb, p, d - p);
        sb_put(&sb, dev);
        p = d + 3;
    }
    Graph *g = fx_parse(ctx, sb.s, sb.len, dev, 1);
    sb_free(&sb);
    if (g) ops_resolve_graph(g);
    return g;
}

static void user_file(MiCtx *ctx, const char *dev) {
    PatternSet ps;
    patternset_init(&ps);
    char err[2048];
    int rc = pattern_load_file(ctx, &ps, "tests/fixtures/patterns/user.pat");
    ok(rc == 0, "user.pat parses%s%s", rc ? ": " : "", rc ? mi_err_str(ctx, err, sizeof err) : "");
    is_int(ps.n, 4, "4 patterns");
    Graph *g = parse_dev(ctx, dev);
    ok(g != NULL, "graph parses (%s)", dev);
    if (!g) { patternset_free(&ps); return; }
    IValue *in = NULL;
    int nin = 0;
    interp_random_inputs(ctx, g, NULL, 0, &in, &nin);
    PassManager *pm = pm_new(ctx, g, in, nin);
    ok(pm_load_patterns(pm, "tests/fixtures/patterns/user.pat") == 0, "pm_load_patterns");
    pm_run_all(pm);
    ok(pm_first_failure(pm) < 0, "user patterns keep lint and numerics (%s)", dev);
    char *t = fx_print(pm_graph(pm), false);
    bool cuda = !strcmp(dev, "cuda:0");
    ok(strstr(t, "relu_default: ") != NULL && strstr(t, "aten.relu.default(arg0_1)") != NULL, "double_relu rewrote relu(relu(x)) with a new relu_default");
    ok(strstr(t, "aten.relu.default(relu)") == NULL, "the inner relu died with the match");
    ok(strstr(t, "relu_3: ") != NULL, "relu(relu) whose inner relu is used elsewhere is left alone");
    ok(strstr(t, "aten.neg.default(sub)") == NULL, "double_neg removed (wildcard return, same meta)");
    if (!ok(strstr(t, cuda ? "aten.reshape.default(add_tensor, [32])" : "aten.reshape.default(sub, [32])") != NULL,
            "retarget _unsafe_view -> reshape, users rewired")) diag("%s", t);
    if (cuda) ok(strstr(t, "add_tensor: ") != NULL && strstr(t, "aten.neg.default(arg1_1)") == NULL, "cuda-only pattern applies on cuda");
    else ok(strstr(t, "aten.neg.default(arg1_1)") != NULL, "cuda-only pattern skipped on cpu");
    {
        char *tc = fx_print(pm_graph(pm), true);
        const char *ns = strstr(tc, "# No stacktrace found for following nodes\n"), *rd = strstr(tc, "relu_default: ");
        if (!ok(ns && rd && ns < rd && !strchr(ns + 42, '#'), "new nodes print under '# No stacktrace found'"))
            diag("%s", tc);
        free(tc);
    }
    const PassStep *s = pm_step_record(pm, pm_find_pass(pm, "pass_pattern_2"));
    ok(s && strstr(s->changes_text, "pattern double_relu"), "changes name the pattern");
    if (s) diag("%s", s->changes_text);
    free(t);
    pm_free(pm);
    for (int i = 0; i < nin; i++) ivalue_clear(&in[i]);
    free(in);
    graph_free(g);
    patternset_free(&ps);
}

static void bad_files(MiCtx *ctx) {
    PatternSet ps;
    patternset_init(&ps);
    char err[2048];
    ok(pattern_load_file(ctx, &ps, "tests/fixtures/patterns/bad_undefined.pat") < 0, "undefined name in replace is an error");
    mi_err_str(ctx, err, sizeof err);
    ok(strstr(err, "bad_undefined.pat:5:") && strstr(err, "'y'") == NULL && strstr(err, "y"), "error names file:line: %s", err);
    ok(pattern_load_file(ctx, &ps, "tests/fixtures/patterns/bad_syntax.pat") < 0, "syntax error");
    mi_err_str(ctx, err, sizeof err);
    ok(strstr(err, "bad_syntax.pat:3:") != NULL, "syntax error names line 3: %s", err);
    ok(pattern_load_file(ctx, &ps, "tests/fixtures/patterns/missing.pat") < 0, "missing file is an error");
    is_int(ps.n, 0, "failed loads add no patterns");
    ok(pattern_parse(ctx, &ps, "pattern p\n  match:\n    m = aten.mul.Tensor(x, 1)\n", "inline") < 0, "missing end");
    ok(pattern_parse(ctx, &ps, "pattern p device=tpu\nend\n", "inline") < 0 && strstr(ctx->err.msg, "device"), "bad device");
    patternset_free(&ps);
}

static const char ADDMM[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[16][1]cuda:0\", arg1_1: \"f32[4, 8][8, 1]cuda:0\", arg2_1: \"f32[8, 16][16, 1]cuda:0\"):\n"
    "        addmm: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.addmm.default(arg0_1, arg1_1, arg2_1);  arg0_1 = arg1_1 = arg2_1 = None\n"
    "        amax: \"f32[4, 1][1, 1]cuda:0\" = torch.ops.aten.amax.default(addmm, [-1], True)\n"
    "        sub: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.sub.Tensor(addmm, amax);  addmm = amax = None\n"
    "        exp: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.exp.default(sub);  sub = None\n"
    "        sum_1: \"f32[4, 1][1, 1]cuda:0\" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)\n"
    "        div: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.div.Tensor(exp, sum_1);  exp = sum_1 = None\n"
    "        return (div,)\n";

static void builtins(MiCtx *ctx) {
    Graph *g = fx_parse(ctx, ADDMM, strlen(ADDMM), "addmm", 1);
    ok(g != NULL, "addmm graph parses");
    if (!g) return;
    ops_resolve_graph(g);
    IValue *in = NULL;
    int nin = 0;
    interp_random_inputs(ctx, g, NULL, 0, &in, &nin);
    PassManager *pm = pm_new(ctx, g, in, nin);
    pm_run_all(pm);
    char *r = pm_report(pm);
    ok(pm_first_failure(pm) < 0, "cuda builtins keep numerics: %s", r);
    free(r);
    char *t = fx_print(pm_graph(pm), true);
    /* pass_patterns[1] runs first: prepare_softmax_online reads the addmm, and it is no
     * pointwise use, so should_prefer_unfused_addmm keeps the addmm fused */
    ok(strstr(t, "addmm: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.addmm.default(arg0_1, arg1_1, arg2_1)") && !strstr(t, "mm_default"),
       "addmm read by the online softmax stays fused");
    ok(strstr(t, "prepare_softmax_online_default = torch.ops.prims.prepare_softmax_online.default(addmm, -1)") != NULL,
       "softmax -> prepare_softmax_online_default (untyped tuple)");
    ok(strstr(t, "getitem_1: \"f32[4, 1][1, 1]cuda:0\" = prepare_softmax_online_default[1]") != NULL, "sum read with getitem_1");
    ok(strstr(t, "div: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.div.Tensor(exp_default, getitem_1)") != NULL, "div reads the new nodes");
    ok(strstr(t, "# No stacktrace found for following nodes") != NULL, "new nodes print under No stacktrace");
    free(t);
    pm_free(pm);
    /* the same graph on cpu: no cuda-only rewrites */
    pm = pm_new(ctx, g, in, nin);
    Device cpu = {DEV_CPU, -1};
    pm_set_device(pm, cpu);
    pm_run_all(pm);
    t = fx_print(pm_graph(pm), false);
    ok(strstr(t, "addmm") && strstr(t, "amax") && !strstr(t, "mm_default"), "device cpu: addmm and softmax kept");
    free(t);
    pm_free(pm);
    for (int i = 0; i < nin; i++) ivalue_clear(&in[i]);
    free(in);
    graph_free(g);
}

/* Run the whole pipeline on graph text with random inputs; every step must keep lint and
 * numerics. Returns the final print (malloc'd) or NULL. */
static char *run_passes(MiCtx *ctx, const char *text, const char *what) {
    Graph *g = fx_parse(ctx, text, strlen(text), what, 1);
    if (!ok(g != NULL, "%s parses", what)) return NULL;
    ops_resolve_graph(g);
    IValue *in = NULL;
    int nin = 0;
    interp_random_inputs(ctx, g, NULL, 0, &in, &nin);
    PassManager *pm = pm_new(ctx, g, in, nin);
    pm_run_all(pm);
    char *r = pm_report(pm);
    ok(pm_first_failure(pm) < 0, "%s: every step keeps lint and numerics (%s)", what, r);
    free(r);
    char *t = fx_print(pm_graph(pm), true);
    pm_free(pm);
    for (int i = 0; i < nin; i++) ivalue_clear(&in[i]);
    free(in);
    graph_free(g);
    return t;
}

#define HDR(dev) "class GraphModule(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[16][1]" dev "\", " \
    "arg1_1: \"f32[4, 8][8, 1]" dev "\", arg2_1: \"f32[8, 16][16, 1]" dev "\"):\n"
#define ADDMM_LINE(dev) "        # File: model.py:3 in forward, code: return F.linear(x, w, b)\n" \
    "        addmm: \"f32[4, 16][16, 1]" dev "\" = torch.ops.aten.addmm.default(arg0_1, arg1_1, arg2_1);  arg0_1 = arg1_1 = arg2_1 = None\n"

/* unfuse_bias_add_to_pointwise: on a GPU, only when ALL uses are pointwise, looking through
 * views and getitem (should_prefer_unfused_addmm / is_pointwise_use); the replacement keeps
 * the addmm's stack (one matched node). */
static void addmm_rules(MiCtx *ctx) {
    char *t = run_passes(ctx, HDR("cuda:0") ADDMM_LINE("cuda:0")
        "        view: \"f32[64][1]cuda:0\" = torch.ops.aten.view.default(addmm, [64]);  addmm = None\n"
        "        relu: \"f32[64][1]cuda:0\" = torch.ops.aten.relu.default(view);  view = None\n"
        "        return (relu,)\n", "addmm -> view -> relu");
    ok(t && strstr(t, "        # File: model.py:3 in forward, code: return F.linear(x, w, b)\n"
                      "        mm_default: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.mm.default(arg1_1, arg2_1);  arg1_1 = arg2_1 = None\n"
                      "        add_tensor: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.add.Tensor(arg0_1, mm_default);  arg0_1 = mm_default = None\n"),
       "every use pointwise through a view: mm + add, under the addmm's stack");
    free(t);
    t = run_passes(ctx, HDR("cuda:0") ADDMM_LINE("cuda:0")
        "        relu: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.relu.default(addmm)\n"
        "        sum_1: \"f32[16][1]cuda:0\" = torch.ops.aten.sum.dim_IntList(addmm, [0]);  addmm = None\n"
        "        return (relu, sum_1)\n", "addmm -> relu, sum");
    ok(t && strstr(t, "torch.ops.aten.addmm.default(arg0_1, arg1_1, arg2_1)") && !strstr(t, "mm_default"),
       "one use is a reduction: the addmm stays");
    free(t);
    t = run_passes(ctx, HDR("cuda:0") ADDMM_LINE("cuda:0") "        return (addmm,)\n", "addmm returned");
    ok(t && strstr(t, "aten.addmm.default") && !strstr(t, "mm_default"), "returned as an output: the addmm stays");
    free(t);
    t = run_passes(ctx, HDR("cpu") ADDMM_LINE("cpu")
        "        relu: \"f32[4, 16][16, 1]cpu\" = torch.ops.aten.relu.default(addmm);  addmm = None\n"
        "        return (relu,)\n", "addmm -> relu on cpu");
    ok(t && strstr(t, "aten.addmm.default") && !strstr(t, "mm_default"), "on the cpu: the addmm stays");
    free(t);
    t = run_passes(ctx, HDR("cuda:0")
        "        addmm: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.addmm.default(arg0_1, arg1_1, arg2_1, beta = 2, alpha = 0.5);  arg0_1 = arg1_1 = arg2_1 = None\n"
        "        relu: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.relu.default(addmm);  addmm = None\n"
        "        return (relu,)\n", "addmm beta=2 alpha=0.5");
    ok(t && strstr(t, "mul_tensor: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.mul.Tensor(mm_default, 0.5)") &&
       strstr(t, "mul_tensor_1: \"f32[16][1]cuda:0\" = torch.ops.aten.mul.Tensor(arg0_1, 2)") &&
       strstr(t, "torch.ops.aten.add.Tensor(mul_tensor_1, mul_tensor)"), "alpha and beta become multiplications");
    free(t);
    /* the other direction (pattern addmm): mm + add of an expandable bias -> addmm, no stack */
    const char *mm_add =
        "        mm: \"f32[4, 16][16, 1]%s\" = torch.ops.aten.mm.default(arg1_1, arg2_1);  arg1_1 = arg2_1 = None\n"
        "        add: \"f32[4, 16][16, 1]%s\" = torch.ops.aten.add.Tensor(mm, arg0_1);  mm = arg0_1 = None\n"
        "        relu: \"f32[4, 16][16, 1]%s\" = torch.ops.aten.relu.default(add);  add = None\n"
        "        return (relu,)\n";
    const char *devs[] = {"cpu", "cuda:0"};
    for (int d = 0; d < 2; d++) {
        char text[2048], body[1024];
        snprintf(body, sizeof body, mm_add, devs[d], devs[d], devs[d]);
        snprintf(text, sizeof text, d ? HDR("cuda:0") "%s" : HDR("cpu") "%s", body);
        t = run_passes(ctx, text, d ? "mm + add on cuda" : "mm + add on cpu");
        if (d == 0)
            ok(t && strstr(t, "        # No stacktrace found for following nodes\n"
                              "        addmm_default: \"f32[4, 16][16, 1]cpu\" = torch.ops.aten.addmm.default(arg0_1, arg1_1, arg2_1)"),
               "cpu: mm + add fuse into addmm_default");
        else
            ok(t && !strstr(t, "addmm") && strstr(t, "aten.mm.default"), "cuda with a pointwise use: mm + add stay apart");
        free(t);
    }
}

/* PatternMatcherPass visits the anchors last first: of six softmaxes the last one gets
 * prepare_softmax_online_default and the first prepare_softmax_online_default_5. */
static void softmax_order(MiCtx *ctx) {
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "class GraphModule(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[4, 16][16, 1]cuda:0\"):\n");
    for (int k = 0; k < 6; k++) {
        char prev[16];
        if (k) snprintf(prev, sizeof prev, "d%d", k - 1);
        else snprintf(prev, sizeof prev, "arg0_1");
        sb_printf(&sb, "        m%d: \"f32[4, 1][1, 1]cuda:0\" = torch.ops.aten.amax.default(%s, [-1], True)\n", k, prev);
        sb_printf(&sb, "        s%d: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.sub.Tensor(%s, m%d)\n", k, prev, k);
        sb_printf(&sb, "        e%d: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.exp.default(s%d)\n", k, k);
        sb_printf(&sb, "        t%d: \"f32[4, 1][1, 1]cuda:0\" = torch.ops.aten.sum.dim_IntList(e%d, [-1], True)\n", k, k);
        sb_printf(&sb, "        d%d: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.div.Tensor(e%d, t%d)\n", k, k, k);
    }
    const char *prev = "d5";
    sb_printf(&sb, "        return (%s,)\n", prev);
    char *t = run_passes(ctx, sb.s, "six softmaxes");
    ok(t && strstr(t, "prepare_softmax_online_default_5 = torch.ops.prims.prepare_softmax_online.default(arg0_1, -1)") &&
       strstr(t, "prepare_softmax_online_default = torch.ops.prims.prepare_softmax_online.default(d4, -1)"),
       "the first softmax gets _5, the last none");
    free(t);
    sb_free(&sb);
    /* a mutation between its nodes puts a match in two mutation regions: not rewritten */
    t = run_passes(ctx, "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"f32[4, 16][16, 1]cuda:0\", arg1_1: \"f32[4, 16][16, 1]cuda:0\"):\n"
        "        amax: \"f32[4, 1][1, 1]cuda:0\" = torch.ops.aten.amax.default(arg0_1, [-1], True)\n"
        "        sub: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.sub.Tensor(arg0_1, amax);  amax = None\n"
        "        exp: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.exp.default(sub);  sub = None\n"
        "        copy_: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.copy_.default(arg1_1, exp);  arg1_1 = copy_ = None\n"
        "        sum_1: \"f32[4, 1][1, 1]cuda:0\" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)\n"
        "        div: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.div.Tensor(exp, sum_1);  exp = sum_1 = None\n"
        "        return (div,)\n", "softmax across a copy_");
    ok(t && !strstr(t, "prepare_softmax_online") && strstr(t, "aten.amax.default"), "a match across a mutation is dropped");
    free(t);
}

/* reuse_partial: amax over some dims and over everything of the same input share the
 * partial result once the input has 4096 elements. */
static void partial_reductions(MiCtx *ctx) {
    const char *fmt = "class GraphModule(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[%d, 64][64, 1]cpu\"):\n"
        "        amax: \"f32[%d, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [1], True)\n"
        "        amax_1: \"f32[][]cpu\" = torch.ops.aten.amax.default(arg0_1);  arg0_1 = None\n"
        "        return (amax, amax_1)\n";
    char text[1024];
    snprintf(text, sizeof text, fmt, 64, 64);
    char *t = run_passes(ctx, text, "amax partial + full, 4096 elements");
    ok(t && strstr(t, "amax_default: \"f32[64, 1][1, 1]cpu\" = torch.ops.aten.amax.default(arg0_1, [1], True)") &&
       strstr(t, "amax_default_1: \"f32[][]cpu\" = torch.ops.aten.amax.default(amax_default)"),
       "the full amax reads the partial one");
    free(t);
    snprintf(text, sizeof text, fmt, 8, 8);
    t = run_passes(ctx, text, "amax partial + full, 512 elements");
    ok(t && !strstr(t, "amax_default"), "below 4096 elements nothing changes");
    free(t);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    user_file(ctx, "cpu");
    user_file(ctx, "cuda:0");
    bad_files(ctx);
    builtins(ctx);
    addmm_rules(ctx);
    softmax_order(ctx);
    partial_reductions(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
