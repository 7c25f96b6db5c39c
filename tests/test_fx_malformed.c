/* test_fx_malformed.c — broken FX texts: each gives one clear error naming the file, the line
 * (and column where it means something) and what was expected; nothing crashes. Also the
 * structural problems the parser accepts but graph_lint reports. */
#include "fx/graph.h"
#include "ops/ops.h"
#include "tap.h"

#define HEAD "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, 4][4, 1]cpu\"):\n"
#define SIN "        sin: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.sin.default(x);  x = None\n"
#define RET "        return (sin,)\n"

static MiCtx *ctx;

/* Parse `text`; expect failure at line/col (col 0: not checked) with `substr` in the message. */
static void bad(const char *name, const char *text, size_t len, int line, int col, const char *substr) {
    mi_clear_err(ctx);
    Graph *g = fx_parse(ctx, text, len, "bad.py", 1);
    ok(g == NULL, "%s: rejected", name);
    graph_free(g);
    bool has = strstr(ctx->err.msg, substr) != NULL;
    ok(has && strcmp(ctx->err.file, "bad.py") == 0 && ctx->err.line == line && (col == 0 || ctx->err.col == col),
       "%s: bad.py:%d:%d '%s'", name, line, col, substr);
    if (!has || ctx->err.line != line || (col && ctx->err.col != col))
        diag("got %s:%d:%d: %s", ctx->err.file, ctx->err.line, ctx->err.col, ctx->err.msg);
}
#define BAD(name, text, line, col, substr) bad(name, text, sizeof(text) - 1, line, col, substr)

/* Parses fine; graph_lint must report `substr`. */
static void lint_bad(const char *name, const char *text, const char *substr) {
    mi_clear_err(ctx);
    Graph *g = fx_parse(ctx, text, strlen(text), "lint.py", 1);
    if (!g) {
        char eb[1400];
        ok(0, "%s: parses", name);
        diag("%s", mi_err_str(ctx, eb, sizeof eb));
        return;
    }
    StrBuf rep;
    sb_init(&rep);
    int n = graph_lint(ctx, g, &rep);
    ok(n >= 1 && rep.s && strstr(rep.s, substr), "%s: lint reports '%s'", name, substr);
    if (!(n >= 1 && rep.s && strstr(rep.s, substr))) diag("lint said (%d): %s", n, rep.s ? rep.s : "");
    ok(strstr(ctx->err.msg, substr) != NULL, "%s: ctx error holds the first problem", name);
    sb_free(&rep);
    graph_free(g);
}

int main(void) {
    ctx = mi_ctx_new();
    /* the base text is fine */
    const char *good = HEAD "        # File: m.py:1 in f, code: y = x.sin()\n" SIN RET;
    Graph *g = fx_parse(ctx, good, strlen(good), "good.py", 1);
    ok(g != NULL, "the base text parses");
    graph_free(g);

    BAD("empty file", "", 1, 1, "empty input");
    BAD("only blank lines", "\n\n   \n", 4, 1, "empty input");
    BAD("garbage", "hello world\n", 1, 1, "expected 'class <name>(torch.nn.Module):'");
    BAD("binary junk", "\x7f" "ELF\x02\x01\x01\x00\x00\x00\xff\xfe", 1, 8, "NUL byte");
    BAD("binary junk without NUL", "\x89PNG\r\n\x1a\n\xff\xd8", 1, 1, "expected 'class");
    BAD("bad class line", "class GraphModule(nn.Module):\n", 1, 18, "'(torch.nn.Module):'");
    BAD("no forward", "class GraphModule(torch.nn.Module):\n    def backward(self):\n", 2, 5, "expected 'def forward");
    BAD("truncated in the signature", "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4",
        2, 26, "unterminated annotation string");
    BAD("truncated in a call", HEAD "        sin: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.sin.default(x", 3, 0,
        "expected ')' after arguments");
    BAD("truncated before return", HEAD SIN, 4, 1, "missing 'return'");
    BAD("unknown dtype", "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f33[4, 4][4, 1]cpu\"):\n" SIN RET,
        2, 27, "unknown dtype 'f33'");
    BAD("annotation missing ']'", "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, 4\"):\n" SIN RET,
        2, 35, "']' in annotation");
    BAD("bad size expression", "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, @][4, 1]cpu\"):\n" SIN RET,
        2, 34, "bad size expression");
    BAD("sizes vs strides", "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, 4][1]cpu\"):\n" SIN RET,
        2, 27, "2 sizes but 1 strides");
    BAD("unknown device", "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4][1]tpu\"):\n" SIN RET,
        2, 36, "unknown device 'tpu'");
    BAD("undefined name", HEAD "        sin: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.sin.default(y)\n" RET, 3, 64,
        "use of undefined name 'y'");
    BAD("use before def", HEAD "        a = torch.ops.aten.sin.default(b)\n        b = torch.ops.aten.cos.default(x)\n"
        "        return (a,)\n", 3, 40, "use of undefined name 'b'");
    BAD("unbalanced parens", HEAD "        sin: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.sin.default(x;  x = None\n" RET,
        3, 65, "expected ')' after arguments");
    BAD("unbalanced list", HEAD "        v = torch.ops.aten.view.default(x, [16)\n" RET, 3, 47, "expected ',' or ']' in list");
    BAD("duplicate name", HEAD SIN "        sin: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.cos.default(sin)\n" RET, 4, 9,
        "duplicate name 'sin' (first defined on line 3)");
    BAD("statement after return", HEAD SIN RET "        cos = torch.ops.aten.cos.default(sin)\n", 5, 9,
        "statement after 'return'");
    BAD("bad indentation", HEAD "          sin = torch.ops.aten.sin.default(x)\n" RET, 3, 11, "unexpected indentation");
    BAD("missing '='", HEAD "        sin: \"f32[4, 4][4, 1]cpu\" torch.ops.aten.sin.default(x)\n" RET, 3, 35, "expected '='");
    BAD("unsupported callee", HEAD "        y = foo(x)\n" RET, 3, 13, "unsupported call target 'foo'");
    BAD("torch.ops. before a non-namespace", HEAD "        y = torch.ops.operator.add(x, x)\n" RET, 3, 13,
        "'torch.ops.operator.add' names no op namespace");
    BAD("method on an undefined name", HEAD "        y = z.sin()\n" RET, 3, 13, "use of undefined name 'z'");
    BAD("positional after keyword", HEAD "        y = torch.ops.aten.sum.dim_IntList(x, dim = [0], True)\n" RET, 3, 58,
        "positional argument after keyword");
    BAD("integer out of range", HEAD "        y = torch.ops.aten.mul.Tensor(x, 99999999999999999999999)\n" RET, 3, 42,
        "out of range");
    BAD("malformed number", HEAD "        y = torch.ops.aten.mul.Tensor(x, 1.5.2)\n" RET, 3, 0, "expected ',' or ')'");
    BAD("unterminated string", HEAD "        y = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = 'floor)\n" RET, 3, 66,
        "unterminated string");
    BAD("bad device()", HEAD "        y = torch.ops.aten.full.default([4], 0.0, device = device(type='tpu'))\n" RET, 3, 0,
        "unknown device type 'tpu'");
    BAD("return without value", HEAD SIN "        return\n", 4, 15, "expected a value after 'return'");
    BAD("text after the graph", HEAD SIN RET "print('hi')\n", 5, 1, "unexpected text after the graph");
    BAD("duplicate subgraph", HEAD SIN RET "\n    class t(torch.nn.Module):\n        def forward(self, a):\n            return (a,)\n"
        "\n    class t(torch.nn.Module):\n        def forward(self, a):\n            return (a,)\n", 10, 0, "duplicate subgraph class 't'");

    /* hand edits: forms Python accepts are accepted (and print back canonical), typos and
     * forms we do not take are one error each */
    {
        static const char *const fine[] = {
            "class GraphModule (torch.nn.Module) :\n    def forward( self ,  x : \"f32[4][1]cpu\" ) :\n"
            "        sin :  \"f32[4][1]cpu\"  =  torch.ops.aten.sin.default( x )\n        return ( sin , )\n",
            "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4][1]cpu\"):\n"
            "        sin: \"f32[4][1]cpu\" = torch.ops.aten.sin.default(x)  # my note\n        return (sin,)  # done\n",
            "class GraphModule(torch.nn.Module):\n    def forward(self, x: 'f32[4][1]cpu'):\n"
            "        sin: 'f32[4][1]cpu' = torch.ops.aten.sin.default(x)\n        return (sin,)\n",
            "class GraphModule(torch.nn.Module):\r\n    def forward(self, x: \"f32[4][1]cpu\",):\r\n"
            "        sin: \"f32[4][1]cpu\" = torch.ops.aten.sin.default(x, );  x = None  # x dies\r\n        return (sin,)\r\n",
        };
        const char *canon = "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4][1]cpu\"):\n"
                            "        sin: \"f32[4][1]cpu\" = torch.ops.aten.sin.default(x);  x = None\n        return (sin,)\n";
        for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
            mi_clear_err(ctx);
            Graph *h = fx_parse(ctx, fine[i], strlen(fine[i]), "edit.py", 1);
            char *pr = h ? fx_print(h, false) : NULL;
            char eb[1400];
            if (!h) diag("%s", mi_err_str(ctx, eb, sizeof eb));
            ok(pr && !strcmp(pr, canon) && graph_lint(ctx, h, NULL) == 0, "hand edit %zu loads, lints, prints canonical", i);
            free(pr);
            graph_free(h);
        }
    }
    BAD("an fx_graph_runnable.py", "\nimport os\nimport torch\nclass Repro(torch.nn.Module):\n    def forward(self, arg0_1):\n", 2, 1,
        "found 'import os' (this is an fx_graph_runnable.py repro script: load fx_graph_readable.py");
    BAD("an output_code.py", "# AOT ID: ['0_inference']\nfrom ctypes import c_void_p\nasync_compile = AsyncCompile()\n", 1, 1,
        "(this is Inductor's generated output_code.py, not an FX graph");
    /* SymBool annotations load (tests/test_symbool.c); broken conditions say where and why */
    BAD("SymBool without a right side", HEAD "        ge: \"Sym(s0 >= )\" = x >= 2\n" RET, 3, 24,
        "bad symbolic condition in annotation \"Sym(s0 >= )\": bad integer expression in condition");
    BAD("SymBool Eq without comma", HEAD "        eq: \"Sym(Eq(s0 5))\" = x == 2\n" RET, 3, 24,
        "bad symbolic condition in annotation \"Sym(Eq(s0 5))\": expected ',' between the two sides of Eq(");
    BAD("SymBool with junk after it", HEAD "        ge: \"Sym(s0 >= 2 s1)\" = x >= 2\n" RET, 3, 26,
        "unexpected 's' in symbolic condition \"Sym(s0 >= 2 s1)\"");
    BAD("SymBool not closed", HEAD "        ge: \"Sym(s0 >= 2\" = x >= 2\n" RET, 3, 14, "expected ')' closing Sym(");
    BAD("class line typo", "class GraphModule (torch.nn.Modul) :\n", 1, 18, "expected '(torch.nn.Module):'");
    BAD("tabs for indentation", "class GraphModule(torch.nn.Module):\n\tdef forward(self):\n", 2, 1,
        "expected 'def forward' indented by 4 spaces");
    BAD("mixed quotes in an annotation", "class GraphModule(torch.nn.Module):\n    def forward(self, x: 'f32[4][1]cpu\"):\n", 2, 26,
        "unterminated annotation string");
    BAD("dtype typo in a kwarg", HEAD "        c = torch.ops.aten.full.default([4], 0.0, dtype = torch.float17)\n" RET, 3, 59,
        "unknown dtype 'torch.float17'");
    BAD("dtype typo in an argument", HEAD "        c = torch.ops.prims.convert_element_type.default(x, torch.float61)\n" RET, 3, 61,
        "unknown dtype 'torch.float61'");
    BAD("dtype typo in a dtype kwarg", HEAD "        c = torch.ops.aten.ones.default([4], dtype = torch.flaot32)\n" RET, 3, 54,
        "unknown dtype 'torch.flaot32'");
    BAD("expression in a size list", HEAD "        v = torch.ops.aten.view.default(x, [4*4])\n" RET, 3, 46, "expected ',' or ']' in list");
    {
        /* layout / memory_format constants stay verbatim */
        const char *t = HEAD "        c: \"f32[4][1]cpu\" = torch.ops.aten.full.default([4], 0.0, dtype = torch.float32, layout = torch.strided, "
                        "device = device(type='cpu'), pin_memory = False)\n        return (c,)\n";
        Graph *h = fx_parse(ctx, t, strlen(t), "edit.py", 1);
        Node *c = h ? graph_find(h, "c") : NULL;
        ok(c && c->nkwargs == 4 && c->kwargs[1].v.kind == V_TORCH && !strcmp(c->kwargs[1].v.s, "torch.strided"),
           "torch.strided stays a constant");
        graph_free(h);
    }
    lint_bad("a typo no parser check can see",
             HEAD "        c: \"f32[4, 4][4, 1]cpu\" = torch.ops.prims.convert_element_type.default(x, torch.bflaot16)\n"
             "        return (c,)\n",
             "node 'c': prims.convert_element_type.default: argument 'dtype' must be a dtype, got torch.bflaot16");
    lint_bad("missing annotations",
             "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n"
             "        sin = torch.ops.aten.sin.default(x)\n        return (sin,)\n",
             "node 'sin': aten.sin.default: argument 'self' (node 'x') has no tensor metadata: the input has no type annotation");
    lint_bad("negative dim out of range", HEAD "        s: \"f32[][]cpu\" = torch.ops.aten.sum.dim_IntList(x, [-3])\n        return (s,)\n",
             "node 's': aten.sum.dim_IntList: dimension -3 out of range for a tensor of rank 2");

    /* deep nesting and a long line: errors, not crashes */
    {
        StrBuf sb;
        sb_init(&sb);
        sb_put(&sb, HEAD "        y = torch.ops.aten.view.default(x, ");
        for (int i = 0; i < 5000; i++) sb_putc(&sb, '[');
        sb_put(&sb, "\n");
        bad("deep nesting", sb.s, sb.len, 3, 0, "nested too deeply");
        sb_free(&sb);
    }
    /* a payload inside a log: line numbers point into the log */
    {
        const char *t = HEAD "        y = torch.ops.aten.sin.default(zz)\n" RET;
        mi_clear_err(ctx);
        Graph *h = fx_parse(ctx, t, strlen(t), "trace.log", 1281);
        ok(!h && ctx->err.line == 1283 && strcmp(ctx->err.file, "trace.log") == 0, "payload errors point into the log (line %d)",
           ctx->err.line);
        graph_free(h);
    }
    /* every prefix of a real file is either a graph or a clean error */
    {
        size_t len;
        char *text = mi_read_file(ctx, "tests/fixtures/torch-cases/cuda/hop_cond/graph0/pre_post_grad.py", &len);
        int graphs = 0, errors = 0, bad_errors = 0;
        for (size_t n = 0; text && n <= len; n += 7) {
            mi_clear_err(ctx);
            Graph *h = fx_parse(ctx, text, n, "prefix.py", 1);
            if (h) graphs++;
            else if (ctx->err.msg[0] && ctx->err.line > 0) errors++;
            else bad_errors++;
            graph_free(h);
        }
        ok(text && bad_errors == 0 && errors > 100, "prefixes: %d graphs, %d clean errors, %d bad", graphs, errors, bad_errors);
        free(text);
    }

    /* problems the parser accepts and lint reports */
    lint_bad("cond arity",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[][]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.t\n"
             "        f = self.t\n"
             "        cond = torch.ops.higher_order.cond(p, t, f, (x, x))\n"
             "        getitem: \"f32[4][1]cpu\" = cond[0]\n"
             "        return (getitem,)\n"
             "\n"
             "    class t(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            return (a,)\n",
             "subgraph 't' takes 1 inputs but cond passes 2 operands");
    lint_bad("cond branches return different metas",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[][]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.t\n"
             "        f = self.f\n"
             "        cond = torch.ops.higher_order.cond(p, t, f, (x,))\n"
             "        getitem: \"f32[4][1]cpu\" = cond[0]\n"
             "        return (getitem,)\n"
             "\n"
             "    class t(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            return (a,)\n"
             "\n"
             "    class f(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(a)\n"
             "            return (sum_1,)\n",
             "branches return different metas for result 0: 't' gives f32[4][1]cpu, 'f' gives f32[][]cpu");
    lint_bad("cond branches return different counts",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[][]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.t\n"
             "        f = self.f\n"
             "        cond = torch.ops.higher_order.cond(p, t, f, (x,))\n"
             "        getitem: \"f32[4][1]cpu\" = cond[0]\n"
             "        return (getitem,)\n"
             "\n"
             "    class t(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            return (a,)\n"
             "\n"
             "    class f(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            return (a, a)\n",
             "branches return different numbers of results: 't' 1, 'f' 2");
    lint_bad("cond operand meta differs from the placeholder",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[][]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.t\n"
             "        cond = torch.ops.higher_order.cond(p, t, t, (x,))\n"
             "        getitem: \"f32[8][1]cpu\" = cond[0]\n"
             "        return (getitem,)\n"
             "\n"
             "    class t(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[8][1]cpu\"):\n"
             "            return (a,)\n",
             "subgraph 't' input 0 ('a') is f32[8][1]cpu but cond passes 'x' of f32[4][1]cpu");
    lint_bad("cond predicate with many elements",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[2][1]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.t\n"
             "        cond = torch.ops.higher_order.cond(p, t, t, (x,))\n"
             "        getitem: \"f32[4][1]cpu\" = cond[0]\n"
             "        return (getitem,)\n"
             "\n"
             "    class t(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            return (a,)\n",
             "cond predicate 'p' has 2 elements (expected 1)");
    /* a problem inside a branch names the subgraph */
    lint_bad("problem inside a branch",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[][]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.t\n"
             "        cond = torch.ops.higher_order.cond(p, t, t, (x,))\n"
             "        getitem: \"f32[8][1]cpu\" = cond[0]\n"
             "        return (getitem,)\n"
             "\n"
             "    class t(torch.nn.Module):\n"
             "        def forward(self, a: \"f32[4][1]cpu\"):\n"
             "            sin: \"f32[8][1]cpu\" = torch.ops.aten.sin.default(a)\n"
             "            return (sin,)\n",
             "subgraph t: node 'sin': annotation f32[8][1]cpu but aten.sin.default infers f32[4][1]cpu");
    lint_bad("cond branch not a subgraph",
             "class GraphModule(torch.nn.Module):\n"
             "    def forward(self, p: \"b8[][]cpu\", x: \"f32[4][1]cpu\"):\n"
             "        t = self.nope\n"
             "        cond = torch.ops.higher_order.cond(p, t, t, (x,))\n"
             "        return (cond,)\n",
             "names no subgraph");
    lint_bad("getitem of a constant",
             HEAD "        g = operator.getitem(1, 0)\n        return (g,)\n",
             "getitem expects (node, index)");
    const OpDef *sin = op_lookup("aten.sin.default");
    if (sin && sin->infer_meta) {
        lint_bad("wrong arity for a known op", HEAD "        sin: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.sin.default()\n" RET,
                 "aten.sin.default");
        lint_bad("annotation disagrees with the op",
                 HEAD "        sin: \"f32[2, 4][4, 1]cpu\" = torch.ops.aten.sin.default(x)\n" RET, "infers f32[4, 4]");
    } else skip(4, "op registry without aten.sin.default meta inference");

    mi_ctx_free(ctx);
    return done_testing();
}
