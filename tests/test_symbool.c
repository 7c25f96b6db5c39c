/* test_symbool.c — SymBool nodes and runtime asserts of graphs compiled with dynamic shapes
 * ("ge: \"Sym(s0 >= 2)\" = arg0_1 >= 2", aten._assert_scalar, Eq/Ne/&/sym_not, .item()'s u0):
 * they load, print back byte-identical, lint clean, round-trip through JSON; the interpreter
 * evaluates them with the bound sizes and a false _assert_scalar fails naming its message;
 * the post-grad passes keep the asserts (DCE and remove_assert_ops), and lowering turns them
 * into size guards the generated C wrapper checks. Fixture:
 * tests/fixtures/fx/cpu_symbool_asserts_post_grad_graph.py (hand-written in print_readable form). */
#include "ops/interp.h"
#include "fx_passes/passes.h"
#include "base/symbool.h"
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "tests/support/shell_harness.h"

#define FIX "tests/fixtures/fx/cpu_symbool_asserts_post_grad_graph.py"

static bool symbol_deep_refused(MiCtx *ctx, const char *text) {
    SymBool *b = symbool_parse(ctx, text, NULL);
    symbool_free(b);
    return !b && strstr(ctx->err.msg, "nested too deeply");
}

/* the expression module on its own */
static void parse_eval(MiCtx *ctx) {
    SymBinding b[] = {{"s0", 5}, {"s1", 9}, {"u0", 0}};
    static const struct { const char *text; bool want; } cases[] = {
        {"s0 >= 2", true}, {"s0 > 5", false}, {"s0 <= 5", true}, {"s1 < s0", false}, {"Eq(s0, 5)", true},
        {"Eq(2*s0 - 1, s1)", true}, {"Ne(s1, 9)", false}, {"(s1 <= 64) & (s0 < s1)", true},
        {"(s0 >= 6) | (s1 >= 9)", true}, {"~(s0 >= 6)", true}, {"And(s0 >= 1, Ne(u0, 0))", false},
        {"Or(s0 >= 6, Eq(u0, 0))", true}, {"Not(Eq(s0, 5))", false}, {"(s0 + 1) >= 6", true},
        {"Max(s0, s1) >= 9", true}, {"True", true}, {"False", false}, {"s0 + s1 == 14", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool v = !cases[i].want;
        int rc = symbool_eval_text(ctx, cases[i].text, b, 3, &v);
        ok(rc == 0 && v == cases[i].want, "%s is %s (s0=5, s1=9, u0=0)%s%s", cases[i].text,
           cases[i].want ? "True" : "False", rc ? ": " : "", rc ? ctx->err.msg : "");
    }
    bool v;
    ok(symbool_eval_text(ctx, "s7 >= 2", b, 3, &v) < 0 && strstr(ctx->err.msg, "s7"), "unbound symbol: %s", ctx->err.msg);
    ok(symbool_parse(ctx, "s0 >=", NULL) == NULL, "missing right side refused: %s", ctx->err.msg);
    ok(symbool_parse(ctx, "Eq(s0 5)", NULL) == NULL && strstr(ctx->err.msg, "expected ','"), "Eq without comma: %s", ctx->err.msg);
    ok(symbool_parse(ctx, "s0 + 1", NULL) == NULL && strstr(ctx->err.msg, "expected a comparison"), "integer is no condition: %s", ctx->err.msg);
    char deep[1200];
    memset(deep, '(', 600);
    memset(deep + 600, '~', 500);
    strcpy(deep + 1100, "s0 >= 2");
    ok(symbol_deep_refused(ctx, deep), "deep nesting refused, no stack overflow: %s", ctx->err.msg);
    /* guards: conjunctions of relations, negations pushed in, disjunctions refused */
    SymBool *g = symbool_parse(ctx, "(s1 <= 64) & ~(s0 >= s1) & Eq(s0, 2*s1)", NULL);
    StrBuf sb;
    sb_init(&sb);
    is_int(symbool_guards(g, &sb), 3, "three guard relations");
    is_str(sb.s, "s1 <= 64\ns0 < s1\ns0 == 2*s1\n", "guard text");
    symbool_free(g);
    g = symbool_parse(ctx, "(s0 >= 2) | (s1 >= 2)", NULL);
    is_int(symbool_guards(g, &sb), -1, "a disjunction is no conjunction of guards");
    symbool_free(g);
    sb_free(&sb);
}

/* load, print byte-identical, lint, JSON */
static Graph *load_print(MiCtx *ctx) {
    char *text = sh_read_file(FIX);
    if (!ok(text != NULL, "fixture present")) return NULL;
    Graph *g = fx_load_file(ctx, FIX);
    if (!ok(g != NULL, "symbool fixture loads: %s", g ? "" : ctx->err.msg)) { free(text); return NULL; }
    ops_resolve_graph(g);
    char *p = fx_print(g, true);
    is_str(p, text, "prints back byte-identical");
    Node *ge = graph_find(g, "ge"), *and_ = graph_find(g, "and_"), *eq = graph_find(g, "eq");
    ok(ge && ge->symbool && !strcmp(ge->symbool, "s0 >= 2") && !ge->is_sym && !strcmp(ge->target, "operator.ge"),
       "ge: SymBool 's0 >= 2', target operator.ge");
    ok(and_ && and_->symbool && !strcmp(and_->symbool, "(s1 <= 64) & (s0 < s1)") && !strcmp(and_->target, "operator.and_"),
       "and_: SymBool conjunction, target operator.and_");
    ok(eq && eq->symbool && !strcmp(eq->symbool, "Eq(u0, s0)"), "eq: Eq(u0, s0)");
    Node *sn = graph_find(g, "sym_not");
    ok(sn && sn->op && !strcmp(sn->target, "torch.sym_not"), "torch.sym_not resolves in the registry");
    StrBuf rep;
    sb_init(&rep);
    is_int(graph_lint(ctx, g, &rep), 0, "lints clean%s%s", rep.s ? ": " : "", rep.s ? rep.s : "");
    sb_free(&rep);
    char *j = graph_to_json(g);
    ok(strstr(j, "\"symbool\": \"(s1 <= 64) & (s0 < s1)\"") || strstr(j, "\"symbool\":\t\"(s1 <= 64) & (s0 < s1)\""),
       "JSON carries the condition text");
    Graph *h = graph_from_json(ctx, j, strlen(j), "sb.json");
    if (ok(h != NULL, "JSON loads back: %s", h ? "" : ctx->err.msg)) {
        char *p2 = fx_print(h, true);
        is_str(p2, text, "JSON round trip prints the same text");
        free(p2);
        graph_free(h);
    }
    /* a bad condition in JSON is refused naming the node */
    char *bad = strstr(j, "(s1 <= 64) & (s0 < s1)");
    if (bad) {
        memcpy(bad, "(s1 <= 64) & (s0 < )) ", 22);   /* same length */
        h = graph_from_json(ctx, j, strlen(j), "sb.json");
        ok(!h && strstr(ctx->err.msg, "node 'and_': bad \"symbool\""), "bad JSON condition refused: %s", ctx->err.msg);
        graph_free(h);
    }
    free(j);
    free(p);
    free(text);
    return g;
}

static int run_fixture(MiCtx *ctx, const Graph *g, int64_t s0, int64_t s1, int64_t item, IValue **outs, int *nout) {
    IValue in[4] = {{.kind = IV_INT, .i = s0}, {.kind = IV_TENSOR}, {.kind = IV_TENSOR}, {.kind = IV_TENSOR}};
    int64_t sz[2] = {s0, 4};
    in[1].t = tensor_new(ctx, DT_F32, 2, sz);
    for (int64_t k = 0; k < s0 * 4; k++) tensor_set_f(in[1].t, k, (double)k);
    in[2].t = tensor_new(ctx, DT_F32, 1, &s1);
    in[3].t = tensor_new(ctx, DT_I64, 0, NULL);
    tensor_set_f(in[3].t, 0, (double)item);
    mi_clear_err(ctx);
    int rc = interp_run(ctx, g, in, 4, outs, nout);
    for (int k = 1; k < 4; k++) tensor_unref(in[k].t);
    return rc;
}

static void interpret(MiCtx *ctx, const Graph *g) {
    IValue *outs = NULL;
    int nout = 0;
    int rc = run_fixture(ctx, g, 3, 9, 3, &outs, &nout);
    if (ok(rc == 0 && nout == 3, "s0=3, s1=9, item 3: runs%s%s", rc ? ": " : "", rc ? ctx->err.msg : "")) {
        is_double(tensor_get_f(outs[0].t, 11), 22.0, 0, "mul[2][3] = 2*11");
        ok(outs[1].kind == IV_BOOL && outs[1].i == 1, "eq (u0 == s0) is True");
        ok(outs[2].kind == IV_INT && outs[2].i == 9, "sym_max(s0, s1) = 9");
    }
    if (outs) interp_free_outputs(outs, nout);
    outs = NULL;
    rc = run_fixture(ctx, g, 4, 9, 3, &outs, &nout);
    ok(rc == 0 && nout == 3 && outs[1].kind == IV_BOOL && outs[1].i == 0, "s0=4, item 3: eq is False");
    if (outs) interp_free_outputs(outs, nout);
    outs = NULL;
    /* false assertions: the error names the node and PyTorch's message */
    rc = run_fixture(ctx, g, 1, 9, 3, &outs, &nout);
    ok(rc < 0 && strstr(ctx->err.msg, "node '_assert_scalar'") &&
       strstr(ctx->err.msg, "runtime assertion failed: Runtime assertion failed for expression 2 <= s0 on node 'ge'"),
       "s0=1: 2 <= s0 fails: %s", ctx->err.msg);
    ok(outs == NULL, "no outputs after a failed assert");
    rc = run_fixture(ctx, g, 3, 7, 3, &outs, &nout);
    ok(rc < 0 && strstr(ctx->err.msg, "Ne(s1, 7) on node 'ne'"), "s1=7: Ne(s1, 7) fails: %s", ctx->err.msg);
    rc = run_fixture(ctx, g, 9, 9, 3, &outs, &nout);
    ok(rc < 0 && strstr(ctx->err.msg, "(s1 <= 64) & (s0 < s1) on node 'and_'"), "s0=s1=9: s0 < s1 fails: %s", ctx->err.msg);
    rc = run_fixture(ctx, g, 3, 9, -1, &outs, &nout);
    ok(rc < 0 && strstr(ctx->err.msg, "u0 >= 0 on node 'ge_1'"), "item -1: u0 >= 0 fails: %s", ctx->err.msg);
    /* an annotation that disagrees with the computed value is reported */
    Graph *w = graph_clone(g);
    graph_find(w, "ge")->symbool = "s0 >= 3";
    rc = run_fixture(ctx, w, 2, 9, 3, &outs, &nout);
    ok(rc < 0 && strstr(ctx->err.msg, "node 'ge': computed True but its annotation Sym(s0 >= 3) is False"),
       "annotation checked against the value: %s", ctx->err.msg);
    graph_free(w);
}

static void passes_keep_asserts(MiCtx *ctx, const Graph *g) {
    PassManager *pm = pm_new(ctx, g, NULL, 0);
    ok(pm_run_all(pm) == pm_num_passes(pm), "all post-grad passes run");
    const Graph *after = pm_graph(pm);
    int asserts = 0;
    for (int i = 0; i < after->n; i++)
        if (after->nodes[i]->target && !strcmp(after->nodes[i]->target, "aten._assert_scalar.default")) asserts++;
    is_int(asserts, 5, "the five _assert_scalar survive DCE and remove_assert_ops");
    ok(graph_find(after, "ge") && graph_find(after, "sym_constrain_range_for_size"), "their conditions and the range hint stay");
    IValue *outs = NULL;
    int nout = 0;
    int rc = run_fixture(ctx, after, 1, 9, 3, &outs, &nout);
    ok(rc < 0 && strstr(ctx->err.msg, "2 <= s0"), "the graph after the passes still fails s0=1");
    pm_free(pm);
}

/* lowering: the asserts over input sizes become guards the C wrapper checks */
static void lowered(MiCtx *ctx) {
    const char *text =
        "class <lambda>(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"Sym(s0)\", arg1_1: \"f32[s0][1]cpu\", arg2_1: \"Sym(s1)\", arg3_1: \"f32[s1][1]cpu\"):\n"
        "        ge: \"Sym(s0 >= 2)\" = arg0_1 >= 2\n"
        "        _assert_scalar = torch.ops.aten._assert_scalar.default(ge, \"Runtime assertion failed for expression 2 <= s0 on node 'ge'\");  ge = _assert_scalar = None\n"
        "        le: \"Sym(s1 <= 64)\" = arg2_1 <= 64;  arg2_1 = None\n"
        "        ne: \"Sym(Ne(s0, 5))\" = arg0_1 != 5;  arg0_1 = None\n"
        "        and_: \"Sym((s1 <= 64) & Ne(s0, 5))\" = le & ne;  le = ne = None\n"
        "        _assert_scalar_1 = torch.ops.aten._assert_scalar.default(and_, \"Runtime assertion failed for expression (s1 <= 64) & Ne(s0, 5) on node 'and_'\");  and_ = _assert_scalar_1 = None\n"
        "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg3_1);  arg3_1 = None\n"
        "        mul: \"f32[s0][1]cpu\" = torch.ops.aten.mul.Tensor(arg1_1, sum_1);  arg1_1 = sum_1 = None\n"
        "        return (mul,)\n";
    Graph *g = fx_parse(ctx, text, strlen(text), "assert.py", 1);
    if (!ok(g != NULL, "assert graph parses: %s", g ? "" : ctx->err.msg)) return;
    ops_resolve_graph(g);
    char why[512] = "";
    ok(lowering_supported(g, why, sizeof why), "lowering accepts SymBools and _assert_scalar %s", why);
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    RtModule *rt = b.rt;
    const char *src = b.src;
    if (ok(rt != NULL, "assert graph compiles: %s", rt ? "" : ctx->err.msg)) {
        ok(strstr(src, "const char *mi_guards[] = {\"s0 >= 1\", \"s1 >= 1\", \"s0 >= 2\", \"s1 <= 64\", \"s0 != 5\", NULL};") != NULL,
           "the asserts are module guards");
        ok(strstr(src, "if (!(s0 >= 2LL)) return MI_GUARD_FAILED + 2;") || strstr(src, "if (!(s0 >= 2)) return MI_GUARD_FAILED + 2;"),
           "call() checks s0 >= 2");
        static const struct { int64_t s0, s1; const char *err; } runs[] = {
            {4, 3, NULL}, {1, 3, "size guard 's0 >= 2'"}, {4, 65, "size guard 's1 <= 64'"}, {5, 3, "size guard 's0 != 5'"}};
        for (int r = 0; r < 4; r++) {
            int64_t n0 = runs[r].s0, n1 = runs[r].s1;
            IValue in[4] = {{.kind = IV_INT, .i = n0}, {.kind = IV_TENSOR}, {.kind = IV_INT, .i = n1}, {.kind = IV_TENSOR}};
            in[1].t = tensor_new(ctx, DT_F32, 1, &n0);
            in[3].t = tensor_new(ctx, DT_F32, 1, &n1);
            for (int64_t k = 0; k < n0; k++) tensor_set_f(in[1].t, k, (double)k);
            for (int64_t k = 0; k < n1; k++) tensor_set_f(in[3].t, k, 1.0);
            IValue *outs = NULL;
            int nout = 0;
            mi_clear_err(ctx);
            int rc = rt_run(ctx, rt, g, in, 4, &outs, &nout, NULL);
            if (!runs[r].err)
                ok(rc == 0 && nout == 1 && tensor_get_f(outs[0].t, 3) == 9.0, "s0=4, s1=3: runs, out[3] = 3*3");
            else
                ok(rc < 0 && strstr(ctx->err.msg, runs[r].err), "s0=%lld, s1=%lld refused: %s", (long long)n0,
                   (long long)n1, ctx->err.msg);
            if (outs) interp_free_outputs(outs, nout);
            tensor_unref(in[1].t);
            tensor_unref(in[3].t);
        }
    }
    cg_free(&b);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    parse_eval(ctx);
    Graph *g = load_print(ctx);
    if (g) {
        interpret(ctx, g);
        passes_keep_asserts(ctx, g);
        graph_free(g);
    }
    lowered(ctx);
    mi_ctx_free(ctx);
    return exit_status();
}
