/* test_functionalize.c — functionalization of in-place graphs (tests/fixtures/inplace/inplace_*.py):
 * the functional graph computes the same outputs and the same input mutations as
 * interpreting the in-place graph directly; the eager form of cpu/view_mutation and
 * cpu/input_mutation functionalizes to the same structure as AOTAutograd's graph and matches
 * the recorded outputs and inK_after.npy; the whole pipeline stays numerically clean after;
 * and the reinplace pass turns a dead-input index_put into index_put_. */
#include "ops/inputs.h"
#include "fx_passes/functionalize.h"
#include "fx/graph_diff.h"
#include "fx_passes/passes.h"
#include "ops/ops.h"
#include "tap.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static Graph *load(MiCtx *ctx, const char *path) {
    char err[2048];
    Graph *g = graph_load_file(ctx, path);
    if (!g) { diag("%s", mi_err_str(ctx, err, sizeof err)); return NULL; }
    ops_resolve_graph(g);
    return g;
}

static Tensor *clone_t(MiCtx *ctx, Tensor *t) {
    Tensor *c = tensor_new(ctx, t->dtype, t->ndim, t->size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(c, i, tensor_get_f(t, i));
    return c;
}

static IValue *copy_inputs(MiCtx *ctx, const IValue *in, int n) {
    IValue *c = calloc(n + 1, sizeof *c);
    for (int i = 0; i < n; i++) {
        c[i] = in[i];
        if (in[i].kind == IV_TENSOR) c[i].t = clone_t(ctx, in[i].t);
    }
    return c;
}

static void free_inputs(IValue *in, int n) { inputs_free(in, n); }

/* Run both graphs on copies of `in`; outputs and inputs after must agree. */
static bool same_semantics(MiCtx *ctx, const Graph *a, const Graph *b, const IValue *in, int n, const char *what) {
    char err[2048];
    IValue *ia = copy_inputs(ctx, in, n), *ib = copy_inputs(ctx, in, n);
    IValue *oa = NULL, *ob = NULL;
    int na = 0, nb = 0;
    bool good = true;
    if (interp_run(ctx, a, ia, n, &oa, &na) < 0) { diag("%s: in-place run: %s", what, mi_err_str(ctx, err, sizeof err)); good = false; }
    if (good && interp_run(ctx, b, ib, n, &ob, &nb) < 0) { diag("%s: functional run: %s", what, mi_err_str(ctx, err, sizeof err)); good = false; }
    if (good && na != nb) { diag("%s: %d vs %d outputs", what, na, nb); good = false; }
    for (int i = 0; good && i < na; i++) {
        if (oa[i].kind != IV_TENSOR) continue;
        CompareResult r = tensor_compare(oa[i].t, ob[i].t, 1e-5, 1e-6);
        if (!r.ok) { diag("%s: out%d differs (max_abs %g)", what, i, r.max_abs); good = false; }
    }
    for (int i = 0; good && i < n; i++) {
        if (ia[i].kind != IV_TENSOR) continue;
        CompareResult r = tensor_compare(ia[i].t, ib[i].t, 1e-5, 1e-6);
        if (!r.ok) { diag("%s: input %d after the run differs (max_abs %g)", what, i, r.max_abs); good = false; }
    }
    if (oa) interp_free_outputs(oa, na);
    if (ob) interp_free_outputs(ob, nb);
    free_inputs(ia, n);
    free_inputs(ib, n);
    return good;
}

/* Structure: per node kind, target, args with node refs as positions, meta (names ignored). */
static char *structure(const Graph *g) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        sb_printf(&sb, "%d %s(", (int)n->kind, n->target ? n->target : "");
        for (int a = 0; a < n->nargs; a++) {
            const Value *v = &n->args[a];
            if (v->kind == V_NODE) sb_printf(&sb, "%%%d,", v->node->id);
            else if (v->kind == V_LIST) {
                sb_putc(&sb, '[');
                for (int k = 0; k < v->list.n; k++) {
                    const Value *w = &v->list.items[k];
                    if (w->kind == V_NODE) sb_printf(&sb, "%%%d,", w->node->id);
                    else if (w->kind == V_INT) sb_printf(&sb, "%lld,", (long long)w->i);
                }
                sb_put(&sb, "],");
            } else if (v->kind == V_INT) sb_printf(&sb, "%lld,", (long long)v->i);
            else if (v->kind == V_FLOAT) sb_printf(&sb, "%g,", v->f);
        }
        char buf[256];
        sb_printf(&sb, ") %s\n", n->has_meta ? meta_str(&n->meta, buf, sizeof buf) : "-");
    }
    return sb_take(&sb);
}

static void fixture(MiCtx *ctx, const char *path, int min_copies) {
    Graph *g = load(ctx, path);
    ok(g != NULL, "%s loads", path);
    if (!g) return;
    ok(functionalize_needed(g), "%s has mutations", path);
    Graph *f = functionalize(ctx, g);
    char err[2048];
    ok(f != NULL, "%s functionalizes%s%s", path, f ? "" : ": ", f ? "" : mi_err_str(ctx, err, sizeof err));
    if (!f) { graph_free(g); return; }
    ok(!functionalize_needed(f), "result is functional");
    StrBuf rep;
    sb_init(&rep);
    int nprob = graph_lint(ctx, f, &rep);
    ok(nprob == 0, "functional graph lints clean");
    if (nprob) diag("%s", rep.s);
    sb_free(&rep);
    int copies = 0;
    for (int i = 0; i < f->n; i++) copies += f->nodes[i]->target && !strcmp(f->nodes[i]->target, "aten.copy_.default");
    is_int(copies, min_copies, "copy_ epilogue count");
    for (int seed = 0; seed < 3; seed++) {
        IValue *in = NULL;
        int n = 0;
        ctx->seed = 1234 + seed;
        if (interp_random_inputs(ctx, g, NULL, 0, &in, &n) < 0) { ok(0, "random inputs"); break; }
        /* integer index inputs must be in range: clamp to 0..1 */
        for (int i = 0; i < n; i++)
            if (in[i].kind == IV_TENSOR && dtype_is_int(in[i].t->dtype))
                for (int64_t k = 0; k < tensor_numel(in[i].t); k++) tensor_set_f(in[i].t, k, (double)(k % 2));
        ok(same_semantics(ctx, g, f, in, n, path), "%s: functional == in-place (seed %d)", path, seed);
        free_inputs(in, n);
    }
    /* the whole pipeline, checked at every step */
    IValue *in = NULL;
    int n = 0;
    interp_random_inputs(ctx, g, NULL, 0, &in, &n);
    for (int i = 0; i < n; i++)
        if (in[i].kind == IV_TENSOR && dtype_is_int(in[i].t->dtype))
            for (int64_t k = 0; k < tensor_numel(in[i].t); k++) tensor_set_f(in[i].t, k, (double)(k % 2));
    PassManager *pm = pm_new(ctx, g, in, n);
    int rc = pm_run_all(pm);
    char *r = pm_report(pm);
    ok(rc == pm_num_passes(pm) && pm_first_failure(pm) < 0, "%s: pipeline clean at every step (%s)", path, r);
    const PassStep *s0 = pm_step_record(pm, 0);
    ok(s0 && s0->changed, "functionalize is a real step 0");
    free(r);
    pm_free(pm);
    free_inputs(in, n);
    graph_free(f);
    graph_free(g);
}

/* The eager form of a real case functionalizes like AOTAutograd and matches the recordings. */
static void real(MiCtx *ctx, const char *eager, const char *dir) {
    char path[600];
    Graph *g = NULL;
    if (strstr(dir, "/cuda/")) {
        /* the cuda case: the same eager program with cuda:0 annotations (run on the CPU) */
        size_t len;
        char *text = mi_read_file(ctx, eager, &len);
        StrBuf sb;
        sb_init(&sb);
        for (const char *p = text; p && *p;) {
            const char *q = strstr(p, "]cpu\"");
            if (!q) { sb_put(&sb, p); break; }
            sb_putn(&sb, p, q - p);
            sb_put(&sb, "]cuda:0\"");
            p = q + 5;
        }
        free(text);
        g = sb.s ? fx_parse(ctx, sb.s, sb.len, eager, 1) : NULL;
        sb_free(&sb);
        if (g) ops_resolve_graph(g);
        ok(g && graph_device(g).kind == DEV_CUDA, "%s as a cuda graph", eager);
    } else g = load(ctx, eager);
    snprintf(path, sizeof path, "%s/pre_post_grad.py", dir);
    Graph *want = load(ctx, path);
    if (!g || !want) { ok(0, "load %s", dir); return; }
    Graph *f = functionalize(ctx, g);
    ok(f != NULL, "%s functionalizes", eager);
    if (!f) return;
    char *a = structure(f), *b = structure(want);
    ok(strcmp(a, b) == 0, "%s: same structure as AOTAutograd's %s", eager, path);
    if (strcmp(a, b)) { char *d = text_diff(b, a, "aotautograd", "ours", 1); diag("%s", d); free(d); }
    free(a); free(b);
    int nph = 0, nph2 = 0;
    IValue *in = NULL, *in2 = NULL;
    if (!ok(inputs_from_dir(ctx, g, dir, &in, &nph) == 0 && inputs_from_dir(ctx, g, dir, &in2, &nph2) == 0,
            "recorded inputs load")) return;
    IValue *outs = NULL, *outs2 = NULL;
    int no = 0, no2 = 0;
    ok(interp_run(ctx, f, in, nph, &outs, &no) == 0, "functional graph runs on recorded inputs");
    ok(interp_run(ctx, g, in2, nph, &outs2, &no2) == 0, "in-place graph runs on recorded inputs");
    snprintf(path, sizeof path, "%s/out0.npy", dir);
    Tensor *o = npy_load(ctx, path);
    ok(no >= 1 && tensor_compare(outs[0].t, o, 1e-5, 1e-6).ok, "functional out0 == out0.npy");
    ok(no2 >= 1 && tensor_compare(outs2[0].t, o, 1e-5, 1e-6).ok, "in-place out0 == out0.npy (interpreter in-place ops)");
    tensor_unref(o);
    for (int k = 0; k < nph; k++) {
        snprintf(path, sizeof path, "%s/in%d_after.npy", dir, k);
        Tensor *t = npy_load(ctx, path);
        ok(t && tensor_compare(in[k].t, t, 1e-5, 1e-6).ok, "functional: input %d after == in%d_after.npy", k, k);
        ok(t && tensor_compare(in2[k].t, t, 1e-5, 1e-6).ok, "in-place: input %d after == in%d_after.npy", k, k);
        tensor_unref(t);
    }
    interp_free_outputs(outs, no);
    interp_free_outputs(outs2, no2);
    free_inputs(in, nph);
    free_inputs(in2, nph);
    graph_free(f);
    graph_free(g);
    graph_free(want);
}

static const char REINPLACE_OK[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[5, 3][3, 1]cpu\", arg1_1: \"i64[2][1]cpu\", arg2_1: \"f32[2, 3][3, 1]cpu\"):\n"
    "        exp: \"f32[5, 3][3, 1]cpu\" = torch.ops.aten.exp.default(arg0_1);  arg0_1 = None\n"
    "        index_put: \"f32[5, 3][3, 1]cpu\" = torch.ops.aten.index_put.default(exp, [arg1_1], arg2_1);  exp = arg1_1 = arg2_1 = None\n"
    "        mul: \"f32[5, 3][3, 1]cpu\" = torch.ops.aten.mul.Tensor(index_put, 2);  index_put = None\n"
    "        return (mul,)\n";

static void reinplace(MiCtx *ctx) {
    for (int variant = 0; variant < 2; variant++) {
        /* variant 1: exp is read after the index_put, so it must stay functional */
        StrBuf sb;
        sb_init(&sb);
        const char *ret = strstr(REINPLACE_OK, "        return (mul,)");
        sb_putn(&sb, REINPLACE_OK, ret - REINPLACE_OK);
        if (variant == 1) sb_put(&sb, "        add: \"f32[5, 3][3, 1]cpu\" = torch.ops.aten.add.Tensor(exp, mul)\n        return (add,)\n");
        else sb_put(&sb, ret);
        Graph *g = fx_parse(ctx, sb.s, sb.len, "reinplace", 1);
        sb_free(&sb);
        ok(g != NULL, "reinplace graph %d parses", variant);
        if (!g) continue;
        ops_resolve_graph(g);
        IValue *in = NULL;
        int n = 0;
        interp_random_inputs(ctx, g, NULL, 0, &in, &n);
        for (int64_t k = 0; k < 2; k++) tensor_set_f(in[1].t, k, (double)(k * 3));
        PassManager *pm = pm_new(ctx, g, in, n);
        pm_goto(pm, pm_find_pass(pm, "reinplace_inplaceable_ops") + 1);
        char *t = fx_print(pm_graph(pm), false);
        if (variant == 0) ok(strstr(t, "aten.index_put_.default(exp,") != NULL, "index_put on a dead input is reinplaced");
        else ok(strstr(t, "aten.index_put.default(exp,") != NULL, "index_put whose input is read later stays functional");
        free(t);
        ok(pm_first_failure(pm) < 0, "reinplace keeps numerics");
        pm_free(pm);
        free_inputs(in, n);
        graph_free(g);
    }
}

static void errors(MiCtx *ctx) {
    static const char BAD[] =
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(self, arg0_1: \"f32[4][1]cpu\"):\n"
        "        expand: \"f32[3, 4][0, 1]cpu\" = torch.ops.aten.expand.default(arg0_1, [3, 4])\n"
        "        add_: \"f32[3, 4][0, 1]cpu\" = torch.ops.aten.add_.Tensor(expand, 1)\n"
        "        return (add_,)\n";
    Graph *g = fx_parse(ctx, BAD, strlen(BAD), "bad_expand", 1);
    if (!g) { ok(0, "bad graph parses"); return; }
    ops_resolve_graph(g);
    Graph *f = functionalize(ctx, g);
    ok(f == NULL && strstr(ctx->err.msg, "expand"), "mutation through expand is refused: %s", ctx->err.msg);
    graph_free(f);
    graph_free(g);
}

/* 10,000 nodes of in-place writes through views: functionalize and the pipeline stay fast. */
static void big(MiCtx *ctx) {
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "class GraphModule(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[8, 8][8, 1]cpu\"):\n");
    int k = 3333;
    for (int i = 0; i < k; i++)
        sb_printf(&sb, "        slice_%d: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.slice.Tensor(arg0_1, 0, 0, 4)\n"
                       "        add_%d: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.add_.Tensor(slice_%d, 1)\n"
                       "        mul_%d: \"f32[8, 8][8, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 2)\n", i, i, i, i);
    sb_printf(&sb, "        return (mul_%d,)\n", k - 1);
    Graph *g = fx_parse(ctx, sb.s, sb.len, "big_inplace", 1);
    sb_free(&sb);
    ok(g != NULL, "10k-node in-place graph parses");
    if (!g) return;
    ops_resolve_graph(g);
    uint64_t t0 = mi_now_ns();
    Graph *f = functionalize(ctx, g);
    uint64_t t1 = mi_now_ns();
    ok(f != NULL, "functionalizes");
    int nsc = 0;
    for (int i = 0; f && i < f->n; i++) nsc += f->nodes[i]->target && !strcmp(f->nodes[i]->target, "aten.slice_scatter.default");
    is_int(nsc, k, "one slice_scatter per mutation");
    PassManager *pm = pm_new(ctx, f, NULL, 0);
    int rc = pm_run_all(pm);
    uint64_t t2 = mi_now_ns();
    ok(rc == pm_num_passes(pm) && pm_first_failure(pm) < 0, "pipeline runs clean (lint at every step)");
    diag("functionalize %d nodes: %.1f ms; pipeline on %d nodes: %.1f ms", g->n, (t1 - t0) / 1e6, f ? f->n : 0, (t2 - t1) / 1e6);
    pm_free(pm);
    graph_free(f);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    fixture(ctx, "tests/fixtures/inplace/inplace_view_mutation.py", 1);
    fixture(ctx, "tests/fixtures/inplace/inplace_input_mutation.py", 2);
    fixture(ctx, "tests/fixtures/inplace/inplace_copy_chain.py", 1);
    fixture(ctx, "tests/fixtures/inplace/inplace_index_put.py", 1);
    real(ctx, "tests/fixtures/inplace/inplace_view_mutation.py", "tests/fixtures/torch-cases/cpu/view_mutation/graph0");
    real(ctx, "tests/fixtures/inplace/inplace_input_mutation.py", "tests/fixtures/torch-cases/cpu/input_mutation/graph0");
    real(ctx, "tests/fixtures/inplace/inplace_view_mutation.py", "tests/fixtures/torch-cases/cuda/view_mutation/graph0");
    real(ctx, "tests/fixtures/inplace/inplace_input_mutation.py", "tests/fixtures/torch-cases/cuda/input_mutation/graph0");
    reinplace(ctx);
    errors(ctx);
    big(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
