/* test_graph_edit.c — graph construction and editing: unique FX-style names, insert/remove/move
 * keeping ids in program order, users, replace_all_uses, deep and independent clones,
 * deletion lists for printing, values and metas built by hand printing as PyTorch would. */
#include "fx/graph.h"
#include "tap.h"

static bool ids_ok(const Graph *g) {
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i]->id != i) return false;
    return true;
}

static Node *call(Graph *g, const char *name, const char *target, Node *a, Node *b) {
    Node *n = graph_add_node(g, N_CALL_FUNCTION, graph_unique_name(g, name), target);
    Value args[2] = {value_node(a), b ? value_node(b) : value_int(2)};
    graph_set_args(g, n, args, 2);
    return n;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    SymCtx *s = ctx->sym;
    Graph *g = graph_new("GraphModule");
    Node *x = graph_add_node(g, N_PLACEHOLDER, "x", "x");
    Expr *sz[2] = {sym_int(s, 8), sym_symbol(s, "s0")};
    Device cpu = {DEV_CPU, -1};
    meta_init_contiguous(s, &x->meta, &g->arena, DT_F32, 2, sz, cpu);
    x->has_meta = x->annotated = true;
    char buf[256];
    is_str(meta_str(&x->meta, buf, sizeof buf), "f32[8, s0][s0, 1]cpu", "contiguous meta with a symbol");
    SymBinding bind = {sym_symbol(s, "s0")->name, 3};
    int64_t numel = 0;
    ok(sym_eval(ctx, meta_numel(s, &x->meta), &bind, 1, &numel) == 0 && numel == 24, "numel 8*s0 at s0=3");

    Node *add = call(g, "add", "aten.add.Tensor", x, x);
    Node *add1 = call(g, "add", "aten.add.Tensor", add, NULL);
    Node *mul = call(g, "mul", "aten.mul.Tensor", add1, add);
    is_str(add->name, "add", "first name is the base");
    is_str(add1->name, "add_1", "second gets _1");
    is_str(graph_unique_name(g, "add"), "add_2", "then _2");
    is_str(graph_unique_name(g, "add_1"), "add_2", "add_1 taken: add_2");
    is_str(graph_unique_name(g, "mul_7"), "mul_7", "unused suffixed name kept");
    is_str(graph_unique_name(g, "sum"), "sum_1", "builtin names get a suffix like FX (sum_1)");
    is_str(graph_unique_name(g, "slice"), "slice_1", "slice_1");
    Node *out = graph_add_node(g, N_OUTPUT, "output", "output");
    Value ov[1] = {value_node(mul)};
    Value tup = value_tuple(g, ov, 1);
    graph_set_args(g, out, &tup, 1);
    ok(ids_ok(g) && g->n == 5, "ids in order");
    is_int(graph_lint(ctx, g, NULL), 0, "built graph lints clean");

    graph_compute_users(g);
    is_int(x->nusers, 1, "x has one user (add uses it twice)");
    is_int(add->nusers, 2, "add has two users");
    ok(add->users[0] == add1 && add->users[1] == mul, "users in program order");

    char *txt = fx_print(g, false);
    const char *want =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[8, s0][s0, 1]cpu\"):\n"
        "        add = torch.ops.aten.add.Tensor(x, x);  x = None\n"
        "        add_1 = torch.ops.aten.add.Tensor(add, 2)\n"
        "        mul = torch.ops.aten.mul.Tensor(add_1, add);  add_1 = add = None\n"
        "        return (mul,)\n";
    is_str(txt, want, "printed with deletion lists");
    free(txt);

    /* insert before, with a float and kwargs */
    Node *neg = graph_insert_before(g, mul, N_CALL_FUNCTION, graph_unique_name(g, "neg"), "aten.neg.default");
    Value a1[1] = {value_node(add1)};
    graph_set_args(g, neg, a1, 1);
    Kwarg kw[2] = {{"alpha", value_float(1e-05)}, {"dtype", {.kind = V_DTYPE, .dtype = DT_BF16}}};
    graph_set_kwargs(g, neg, kw, 2);
    ok(ids_ok(g) && neg->id == 3 && mul->id == 4, "insert_before renumbers");
    is_int(graph_replace_all_uses(g, add1, neg), 1, "replace_all_uses: one use (not inside neg itself)");
    ok(mul->args[0].node == neg && neg->args[0].node == add1, "uses rewired, neg still reads add_1");
    graph_compute_users(g);
    ok(add1->nusers == 1 && add1->users[0] == neg, "users follow the rewrite");
    txt = fx_print(g, false);
    ok(strstr(txt, "neg = torch.ops.aten.neg.default(add_1, alpha = 1e-05, dtype = torch.bfloat16);  add_1 = None\n") != NULL,
       "kwargs and float repr printed");
    free(txt);

    /* move: put neg before add_1 -> lint finds use before def */
    graph_move_before(g, neg, add1);
    ok(ids_ok(g) && neg->id == 2 && add1->id == 3, "move_before renumbers");
    StrBuf rep;
    sb_init(&rep);
    ok(graph_lint(ctx, g, &rep) >= 1 && strstr(rep.s, "uses 'add_1' before it is defined"), "lint: use before def");
    sb_free(&rep);
    graph_move_before(g, neg, mul);
    is_int(graph_lint(ctx, g, NULL), 0, "moved back: clean");

    /* clone independence */
    Graph *c = graph_clone(g);
    ok(c && c->n == g->n && ids_ok(c), "clone has the same nodes");
    Node *cmul = graph_find(c, "mul");
    ok(cmul && cmul != mul && cmul->args[0].node == graph_find(c, "neg"), "clone's args point into the clone");
    char *t1 = fx_print(g, true), *t2 = fx_print(c, true);
    is_str(t2, t1, "clone prints the same");
    free(t2);
    cmul->name = "renamed";
    graph_remove_node(c, graph_find(c, "output"));
    graph_free(g);   /* the clone must survive its original */
    t2 = fx_print(c, false);
    ok(strstr(t2, "renamed = torch.ops.aten.mul.Tensor(neg, add)") != NULL, "clone independent of the freed original");
    free(t2);
    free(t1);
    sb_init(&rep);
    ok(graph_lint(ctx, c, &rep) == 1 && strstr(rep.s, "no output node"), "lint: no output");
    sb_free(&rep);

    /* remove a node still in use -> lint reports the dangling use */
    Node *cneg = graph_find(c, "neg");
    graph_remove_node(c, cneg);
    ok(ids_ok(c) && cneg->id == -1 && graph_index_of(c, cneg) == -1, "removed node leaves the order");
    sb_init(&rep);
    ok(graph_lint(ctx, c, &rep) >= 2 && strstr(rep.s, "uses 'neg', which is not in the graph"), "lint: dangling use");
    sb_free(&rep);
    graph_free(c);

    /* duplicate names and two outputs */
    g = graph_new("GraphModule");
    graph_add_node(g, N_PLACEHOLDER, "a", "a");
    graph_add_node(g, N_PLACEHOLDER, "a", "a");
    Node *o1 = graph_add_node(g, N_OUTPUT, "output", "output");
    Value none = value_none();
    graph_set_args(g, o1, &none, 1);
    Node *o2 = graph_add_node(g, N_OUTPUT, "output_1", "output");
    graph_set_args(g, o2, &none, 1);
    sb_init(&rep);
    int np = graph_lint(ctx, g, &rep);
    ok(np >= 3 && strstr(rep.s, "duplicate name") && strstr(rep.s, "2 output nodes") && strstr(rep.s, "not the last"),
       "lint: duplicate names, two outputs, output not last (%d problems)", np);
    sb_free(&rep);
    graph_free(g);

    /* subgraphs are cloned deeply */
    g = fx_load_file(ctx, "tests/fixtures/torch-cases/cuda/hop_cond/graph0/post_post_grad.py");
    ok(g != NULL, "hop_cond loads");
    if (g) {
        c = graph_clone(g);
        Graph *ts = graph_subgraph(c, "true_graph_0");
        ok(ts && ts != graph_subgraph(g, "true_graph_0") && ts->parent == c, "subgraph cloned, parent set");
        t1 = fx_print(g, true);
        graph_free(g);
        t2 = fx_print(c, true);
        is_str(t2, t1, "clone with subgraphs prints the same");
        free(t1);
        free(t2);
        graph_free(c);
    }

    /* values */
    Graph *vg = graph_new("V");
    Value items[3] = {value_int(1), value_float(0.5), value_str(vg, "it's")};
    Value l = value_list(vg, items, 3), l2 = value_copy(vg, &l);
    ok(value_equal(&l, &l2) && l.list.items != l2.list.items, "value_copy deep and equal");
    StrBuf sb;
    sb_init(&sb);
    value_print_sb(&l, &sb);
    is_str(sb.s, "[1, 0.5, \"it's\"]", "list repr");
    sb_free(&sb);
    double d;
    int64_t iv;
    ok(value_as_double(&items[0], &d) && d == 1.0 && value_as_int(&items[0], &iv) && iv == 1, "value_as_*");
    struct { double v; const char *s; } fl[] = {
        {1.0, "1.0"}, {0.5, "0.5"}, {1e-05, "1e-05"}, {0.7071067811865476, "0.7071067811865476"}, {1e16, "1e+16"},
        {1e15, "1000000000000000.0"}, {0.0001, "0.0001"}, {-2.5e-7, "-2.5e-07"}, {1.0 / 0.0, "inf"},
        {-1.0 / 0.0, "-inf"}, {0.1, "0.1"}, {123456789.125, "123456789.125"}, {-0.0, "-0.0"}, {3e300, "3e+300"},
    };
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) is_str(fx_float_repr(fl[i].v, buf, sizeof buf), fl[i].s, "repr %s", fl[i].s);
    graph_free(vg);

    /* dtype table */
    is_int(dtype_from_abbrev("bf16", 4), DT_BF16, "bf16");
    is_int(dtype_from_torch_name("torch.long", 10), DT_I64, "torch.long alias");
    is_int(dtype_promote(DT_F16, DT_BF16), DT_F32, "f16+bf16 -> f32");
    is_int(dtype_promote(DT_U8, DT_I8), DT_I16, "u8+i8 -> i16");
    is_int(dtype_promote(DT_BOOL, DT_I32), DT_I32, "bool+i32 -> i32");
    is_int(dtype_promote(DT_I64, DT_F16), DT_F16, "int+f16 -> f16");
    is_int(dtype_from_npy_descr("<f4"), DT_F32, "npy <f4");
    is_str(dtype_abbrev(DT_F8E4M3), "f8e4m3fn", "float8 abbrev");
    Device cu = {DEV_CUDA, 0};
    is_str(device_repr(cu, buf, sizeof buf), "device(type='cuda', index=0)", "device repr");
    is_str(device_str(cu, buf, sizeof buf), "cuda:0", "device str");

    mi_ctx_free(ctx);
    return done_testing();
}
