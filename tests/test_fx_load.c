/* test_fx_load.c — every real FX text under tests/fixtures (PyTorch 2.11's pre/post post-grad
 * graphs, TORCH_COMPILE_DEBUG fx_graph_readable.py files, and graph payloads copied from
 * TORCH_TRACE logs into tests/fixtures/fx/) loads, lints clean, and prints back to exactly the
 * same text, with and without the "# File:" comments. The same for every distinct FX-graph
 * payload of all 33 real logs (cpu, cuda, multirank), kept in tests/fixtures/fx/graph_payloads*.log. */
#include "fx/graph.h"
#include "../trace/trace.h"
#include "tap.h"
#include "tests/support/fx_files.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The text without group comment lines (and the blank line PyTorch puts before each). */
static char *strip_comments(const char *text) {
    size_t n = strlen(text);
    char *out = malloc(n + 1);
    size_t o = 0;
    const char *s = text;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
        const char *t = s;
        while (*t == ' ') t++;
        bool comment = *t == '#' && t - s >= 8;
        bool blank = *t == '\n' || *t == 0;
        bool next_is_comment = false;
        if (blank && nl) {
            const char *u = nl + 1;
            while (*u == ' ') u++;
            next_is_comment = *u == '#' && u - (nl + 1) >= 8;
        }
        if (!comment && !(blank && next_is_comment)) { memcpy(out + o, s, len); o += len; }
        s += len;
    }
    out[o] = 0;
    return out;
}

static void first_diff(const char *a, const char *b) {
    int line = 1;
    const char *ls = a;
    for (size_t i = 0;; i++) {
        if (a[i] != b[i]) {
            const char *la = ls, *lb = b + (ls - a);
            diag("first difference at line %d:\n  printed: %.160s\n  file:    %.160s", line, la, lb);
            return;
        }
        if (!a[i]) return;
        if (a[i] == '\n') { line++; ls = a + i + 1; }
    }
}


/* Every FX-graph record of a filtered TORCH_TRACE log: md5 intact, loads (errors point into
 * the log), lints clean, JSON round trip, prints back byte-identical. Counts by event name. */
static int check_log_payloads(MiCtx *ctx, const char *path, char *names, size_t cap) {
    TraceReader *rd = trace_reader_open(ctx, path);
    char eb[1400];
    if (!rd) { ok(0, "open %s", path); diag("%s", mi_err_str(ctx, eb, sizeof eb)); return 0; }
    TraceRecord r;
    int n = 0, good = 0;
    while (trace_reader_next(rd, &r) == 1) {
        n++;
        char where[600];
        snprintf(where, sizeof where, "%s:%ld (%s %s)", path, r.line, r.name, r.compile_id);
        if (!r.has_payload || !r.md5_ok) { ok(0, "%s: payload with a good md5", where); continue; }
        if (!strstr(names, r.name) && strlen(names) + strlen(r.name) + 2 < cap) { strcat(names, r.name); strcat(names, " "); }
        Graph *g = fx_parse(ctx, r.payload, r.payload_len, path, (int)r.line + 1);
        if (!g) { ok(0, "load %s", where); diag("%s", mi_err_str(ctx, eb, sizeof eb)); continue; }
        StrBuf rep;
        sb_init(&rep);
        bool fine = true;
        if (graph_lint(ctx, g, &rep)) { ok(0, "lint %s", where); diag("%s", rep.s); fine = false; }
        sb_free(&rep);
        char *printed = fx_print(g, true);
        if (strcmp(printed, r.payload)) { ok(0, "round trip %s", where); first_diff(printed, r.payload); fine = false; }
        char *json = graph_to_json(g);
        Graph *h = graph_from_json(ctx, json, strlen(json), "mem.json");
        char *back = h ? fx_print(h, true) : NULL;
        if (!back || strcmp(back, r.payload)) { ok(0, "JSON round trip %s", where); fine = false; }
        free(back);
        graph_free(h);
        free(json);
        free(printed);
        graph_free(g);
        good += fine;
    }
    const TraceReadStats *st = trace_reader_stats(rd);
    is_int((int)trace_stats_failures(st), 0, "%s: read without issues", path);
    trace_reader_close(rd);
    is_int(good, n, "%s: all %d graph payloads load, lint, print back and go through JSON", path, n);
    return n;
}

int main(void) {
    FxFiles f = {0};
    fx_files_walk("tests/fixtures/torch-cases", &f, false);
    int from_cases = f.n;
    fx_files_walk("tests/fixtures/fx", &f, true);
    qsort(f.v, f.n, sizeof *f.v, cmp_str);
    is_int(from_cases, 106, "found all 106 FX texts of the torch-cases fixtures");
    is_int(f.n - from_cases, 7, "found the 6 log payload fixtures and the SymBool one in tests/fixtures/fx");

    MiCtx *ctx = mi_ctx_new();
    int loaded = 0, linted = 0, same = 0, same_nostack = 0, subgraphs = 0;
    for (int i = 0; i < f.n; i++) {
        size_t len;
        char *text = mi_read_file(ctx, f.v[i], &len);
        Graph *g = text ? fx_parse(ctx, text, len, f.v[i], 1) : NULL;
        char eb[1400];
        if (!g) {
            ok(0, "load %s", f.v[i]);
            diag("%s", mi_err_str(ctx, eb, sizeof eb));
            free(text);
            continue;
        }
        loaded++;
        subgraphs += g->nsubs;
        StrBuf rep;
        sb_init(&rep);
        int problems = graph_lint(ctx, g, &rep);
        if (problems == 0) linted++;
        else { ok(0, "lint %s", f.v[i]); diag("%s", rep.s); }
        sb_free(&rep);
        char *printed = fx_print(g, true);
        if (strcmp(printed, text) == 0) same++;
        else { ok(0, "round trip %s", f.v[i]); first_diff(printed, text); }
        char *bare = fx_print(g, false), *want = strip_comments(text);
        if (strcmp(bare, want) == 0) same_nostack++;
        else { ok(0, "round trip without comments %s", f.v[i]); first_diff(bare, want); }
        /* a clone prints the same */
        Graph *c = graph_clone(g);
        char *cp = fx_print(c, true);
        if (strcmp(cp, printed) != 0) ok(0, "clone prints the same: %s", f.v[i]);
        free(cp);
        graph_free(c);
        free(bare);
        free(want);
        free(printed);
        graph_free(g);
        free(text);
    }
    is_int(loaded, f.n, "all %d files load", f.n);
    is_int(linted, f.n, "all files lint clean");
    is_int(same, f.n, "all files print back byte-identical (with comments)");
    is_int(same_nostack, f.n, "all files print back identical without comments");
    ok(subgraphs >= 8, "subgraphs found (%d)", subgraphs);

    /* spot checks on one graph */
    Graph *g = fx_load_file(ctx, "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/post_post_grad.py");
    ok(g != NULL, "ln_gelu loads");
    if (g) {
        Node *vm = graph_find(g, "var_mean");
        ok(vm && !vm->annotated && vm->nkwargs == 2, "var_mean: untyped, two kwargs");
        Node *gi = graph_find(g, "getitem_1");
        ok(gi && strcmp(gi->target, "operator.getitem") == 0 && gi->args[0].node == vm && gi->args[1].i == 1,
           "getitem_1 = var_mean[1]");
        Node *add = graph_find(g, "add");
        ok(add && add->args[1].kind == V_FLOAT && add->args[1].f == 1e-05, "1e-05 parsed as a float");
        char buf[128];
        is_str(add ? meta_str(&add->meta, buf, sizeof buf) : "", "f32[64, 1][1, 1]cpu", "meta_str");
        is_int(graph_num_placeholders(g), 3, "3 placeholders");
        is_str(g->class_name, "<lambda>", "class name");
        ok(add && add->stack && strstr(add->stack, "models.py:34"), "stack comment kept");
        graph_free(g);
    }
    g = fx_load_file(ctx, "tests/fixtures/torch-cases/cuda/hop_cond/graph0/pre_post_grad.py");
    if (g) {
        is_int(g->nsubs, 2, "hop_cond: 2 subgraphs");
        Graph *t = graph_subgraph(g, "true_graph_0");
        ok(t && t->parent == g && graph_num_placeholders(t) == 1, "true_graph_0 has one input");
        Node *cond = graph_find(g, "cond");
        ok(cond && strcmp(cond->target, "higher_order.cond") == 0 && cond->args[3].kind == V_TUPLE, "cond node");
        Node *sum = graph_find(g, "sum_1");
        ok(sum && sum->meta.ndim == 0 && sum->meta.device.kind == DEV_CUDA && sum->meta.device.index == 0,
           "0-d cuda:0 meta");
        graph_free(g);
    } else ok(0, "hop_cond loads");
    g = fx_load_file(ctx, "tests/fixtures/torch-cases/cpu/dynamic_pointwise/graph0/pre_post_grad.py");
    if (g) {
        Node *a0 = graph_placeholder(g, 0);
        char buf[64];
        ok(a0 && a0->is_sym && a0->sym_val, "Sym placeholder");
        is_str(a0 && a0->sym_val ? sym_str(a0->sym_val, buf, sizeof buf) : "", "s77", "Sym(s77)");
        Node *a2 = graph_placeholder(g, 2);
        is_str(a2 ? meta_str(&a2->meta, buf, sizeof buf) : "", "f32[s77, s27][s27, 1]cpu", "symbolic meta");
        graph_free(g);
    } else ok(0, "dynamic_pointwise loads");

    /* edge forms print back exactly */
    static const char *const edge[] = {
        "class GraphModule(torch.nn.Module):\n    def forward(self):\n        return ()\n",
        "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[2][1]cpu\"):\n        return x\n",
        "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[2][1]cpu\"):\n        return [x, None]\n",
        "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[2][1]cpu\"):\n"
        "        full: \"f32[2][1]cpu\" = torch.ops.aten.full.default([2], -inf, dtype = torch.float32, device = device(type='cpu'))\n"
        "        clamp: \"f32[2][1]cpu\" = torch.ops.aten.clamp.default(x, -0.5, 1e+20);  x = None\n"
        "        where: \"f32[2][1]cpu\" = torch.ops.aten.where.ScalarOther(clamp, full, nan);  clamp = full = None\n"
        "        div: \"f32[2][1]cpu\" = torch.ops.aten.div.Tensor_mode(where, 2, rounding_mode = 'floor');  where = None\n"
        "        copy: \"f32[2][1]cpu\" = torch.ops.aten.clone.default(div, memory_format = torch.contiguous_format)\n"
        "        return (div, copy, [[1, (2,)], ()], True, \"a'b\", 'x\\\\y')\n",
        "class GraphModule(torch.nn.Module):\n    def forward(self, s0: \"Sym(s0)\", x: \"bf16[s0, 2*s0, s0 + 1][2*s0**2 + 2*s0, s0 + 1, 1]cuda:1\"):\n"
        "        sym_size_int: \"Sym(s0)\" = torch.ops.aten.sym_size.int(x, 0);  x = None\n"
        "        mul: \"Sym(2*s0)\" = sym_size_int * 2;  sym_size_int = None\n"
        "        return (mul,)\n",
    };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        Graph *e = fx_parse(ctx, edge[i], strlen(edge[i]), "edge.py", 1);
        char *pr = e ? fx_print(e, false) : NULL;
        char eb[1400];
        if (!e) diag("%s", mi_err_str(ctx, eb, sizeof eb));
        ok(pr && strcmp(pr, edge[i]) == 0, "edge form %zu prints back exactly", i);
        if (pr && strcmp(pr, edge[i])) first_diff(pr, edge[i]);
        ok(e && graph_lint(ctx, e, NULL) == 0, "edge form %zu lints clean", i);
        free(pr);
        graph_free(e);
    }
    {
        const char *t = "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[2][1]cpu\"):\n"
                        "        m = torch.ops.aten.mul.Tensor(x, float('-inf'))\n        return (m,)\n";
        Graph *e = fx_parse(ctx, t, strlen(t), "edge.py", 1);
        Node *m = e ? graph_find(e, "m") : NULL;
        ok(m && m->args[1].kind == V_FLOAT && isinf(m->args[1].f) && m->args[1].f < 0, "float('-inf') accepted");
        graph_free(e);
    }

    /* AOT joint graph: pytree parameters flattened into placeholders */
    g = fx_load_file(ctx, "tests/fixtures/fx/cuda_mlp_train_aot_joint_graph.py");
    if (g) {
        is_int(g->npytree_args, 2, "joint graph: 2 pytree parameters");
        is_str(g->npytree_args == 2 ? g->pytree_args[1] : "", "tangents", "second is tangents");
        is_int(graph_num_placeholders(g), 6, "6 leaves are the placeholders");
        Node *t1 = graph_placeholder(g, 5);
        ok(t1 && strcmp(t1->name, "tangents_1") == 0 && t1->ph_comment && strstr(t1->ph_comment, "TangentAOTInput"),
           "leaf with its descriptor comment");
        Node *out = graph_output(g);
        ok(out && out->args[0].kind == V_LIST && out->args[0].list.n == 6 && out->args[0].list.items[3].kind == V_NONE,
           "6 results, one None");
        graph_free(g);
    } else ok(0, "joint graph loads");
    /* Dynamo-level graph: placeholder aliases, method calls, operators, slices, trailer */
    g = fx_load_file(ctx, "tests/fixtures/fx/cpu_view_mutation_before_pre_grad_graph.py");
    if (g) {
        Node *lx = graph_placeholder(g, 0);
        ok(lx && strcmp(lx->name, "l_x_") == 0 && strcmp(lx->target, "L_x_") == 0, "placeholder l_x_ for parameter L_x_");
        Node *v = graph_find(g, "v");
        ok(v && v->is_method && strcmp(v->target, "view") == 0 && v->nargs == 2 && v->args[0].node == lx &&
           v->args[1].i == -1, "v = l_x_.view(-1) is a method call");
        Node *add = graph_find(g, "add");
        ok(add && strcmp(add->target, "operator.add") == 0 && add->args[1].i == 1, "l_x_ + 1 is operator.add");
        Node *gi = graph_find(g, "getitem");
        ok(gi && gi->args[1].kind == V_TORCH && strcmp(gi->args[1].s, "slice(0, 4, None)") == 0, "slice index kept");
        ok(g->trailer && strstr(g->trailer, "# graph id: 139682343039584"), "trailer kept");
        graph_free(g);
    } else ok(0, "dynamo graph loads");

    /* every distinct graph payload of every real log (first occurrence of each md5) */
    {
        char names[1024] = "";
        int a = check_log_payloads(ctx, "tests/fixtures/fx/graph_payloads.log", names, sizeof names);
        int b = check_log_payloads(ctx, "tests/fixtures/fx/graph_payloads_rank0.log", names, sizeof names);
        int c = check_log_payloads(ctx, "tests/fixtures/fx/graph_payloads_rank1.log", names, sizeof names);
        is_int(a, 154, "154 distinct graph payloads in the cpu and cuda logs");
        is_int(b + c, 20, "20 more in the multirank logs (14 rank 0, 6 rank 1)");
        static const char *const want[] = {"dynamo_output_graph", "aot_inference_graph", "aot_joint_graph",
                                           "aot_forward_graph", "aot_backward_graph", "before_pre_grad_graph",
                                           "before_joint_graph", "after_joint_graph", "before_post_grad_graph",
                                           "inductor_post_grad_graph"};
        int seen = 0;
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) seen += strstr(names, want[i]) != NULL;
        is_int(seen, 10, "payloads of all 10 graph events are among them (%s)", names);
    }

    fx_files_free(&f);
    mi_ctx_free(ctx);
    return done_testing();
}
