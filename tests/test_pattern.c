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
    ok(strstr(t, "mm_default: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.mm.default(arg1_1, arg2_1)") != NULL, "addmm -> mm_default");
    ok(strstr(t, "add_tensor: \"f32[4, 16][16, 1]cuda:0\" = torch.ops.aten.add.Tensor(arg0_1, mm_default)") != NULL, "+ add_tensor of the bias");
    ok(strstr(t, "prepare_softmax_online_default = torch.ops.prims.prepare_softmax_online.default(add_tensor, -1)") != NULL,
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

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    user_file(ctx, "cpu");
    user_file(ctx, "cuda:0");
    bad_files(ctx);
    builtins(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
