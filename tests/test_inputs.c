/* test_inputs.c — graph inputs from .npy files (core/ops/inputs.c): recorded inputs of a real
 * case load with SymInts inferred; a file of the wrong dtype, rank or size is refused at load
 * with a message naming the file, the input and both types; symbolic sizes must agree across
 * inputs; recorded_check compares a run with outK.npy and fails on a wrong value. */
#include "tap.h"
#include "ops/inputs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DYN "tests/fixtures/torch-cases/cpu/dynamic_pointwise/graph0"
#define SOFTMAX "tests/fixtures/torch-cases/cpu/softmax/graph0"

static Graph *load(MiCtx *ctx, const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s/post_post_grad.py", dir);
    Graph *g = graph_load_file(ctx, p);
    if (g) ops_resolve_graph(g);
    return g;
}

/* A float32 tensor of the given sizes filled with k, written to path. */
static void write_f32(MiCtx *ctx, const char *path, int ndim, const int64_t *size, float k) {
    Tensor *t = tensor_new(ctx, DT_F32, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, k);
    npy_save(ctx, path, t);
    tensor_unref(t);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char tmp[] = "/tmp/mi_test_inputs_XXXXXX";
    if (!mkdtemp(tmp)) { ok(0, "mkdtemp"); return done_testing(); }

    /* dynamic_pointwise: (Sym(s77), Sym(s27), f32[s77, s27], f32[s77, s27]); in2/in3 only */
    Graph *g = load(ctx, DYN);
    if (!ok(g != NULL, "dynamic_pointwise loads")) return done_testing();
    IValue *in = NULL;
    int n = 0;
    is_int(inputs_from_dir(ctx, g, DYN, &in, &n), 0, "recorded inputs of dynamic_pointwise load");
    is_int(n, 4, "one value per placeholder");
    ok(in[0].kind == IV_INT && in[1].kind == IV_INT && in[2].kind == IV_TENSOR, "SymInts inferred, tensors loaded");
    ok(in[0].i == in[2].t->size[0] && in[1].i == in[2].t->size[1], "s77, s27 read off the tensor sizes (%lld, %lld)",
       (long long)in[0].i, (long long)in[1].i);
    IValue *outs = NULL;
    int nout = 0;
    char why[256] = "";
    if (interp_run(ctx, g, in, n, &outs, &nout) == 0) {
        is_int(recorded_check(ctx, g, DYN, outs, nout, in, n, 1e-4, 1e-5, NULL, why, sizeof why), 1,
               "the interpreter's output agrees with out0.npy");
        tensor_set_f(outs[0].t, 0, tensor_get_f(outs[0].t, 0) + 1.0);
        is_int(recorded_check(ctx, g, DYN, outs, nout, in, n, 1e-4, 1e-5, NULL, why, sizeof why), -1,
               "a changed value is a difference");
        ok(strstr(why, "output 0: f32[77, 33] MISMATCH max abs err 1 ") && strstr(why, "(beyond rounding: RMSE vs float64 ") &&
           strstr(why, "1 of 2541 elements differ, worst at index 0"), "the difference is named: %s", why);
        interp_free_outputs(outs, nout);
    } else ok(0, "interpreter runs: %s", ctx->err.msg);
    inputs_free(in, n);

    /* symbolic sizes must agree: x is [3, 5], y [3, 6] for f32[s77, s27] both */
    char px[600], py[600];
    snprintf(px, sizeof px, "%s/x.npy", tmp);
    snprintf(py, sizeof py, "%s/y.npy", tmp);
    write_f32(ctx, px, 2, (int64_t[]){3, 5}, 1);
    write_f32(ctx, py, 2, (int64_t[]){3, 6}, 1);
    char *two[] = {px, py};
    in = NULL;
    is_int(inputs_from_npy(ctx, g, two, 2, &in, &n), -1, "inputs disagreeing on s27 are refused at load");
    ok(strstr(ctx->err.file, "y.npy") && strstr(ctx->err.msg, "input 3 ('arg3_1') should be f32[s77, s27]") &&
       strstr(ctx->err.msg, "size 1 is 6, not 5"), "the error names the file, the input and the size: %s", ctx->err.msg);
    write_f32(ctx, py, 2, (int64_t[]){3, 5}, 1);
    is_int(inputs_from_npy(ctx, g, two, 2, &in, &n), 0, "agreeing sizes load");
    inputs_free(in, n);
    char *one[] = {px};
    is_int(inputs_from_npy(ctx, g, one, 1, &in, &n), -1, "too few files");
    ok(strstr(ctx->err.msg, "the graph has 4 inputs (2 tensors) but 1 .npy files were given") != NULL, "%s",
       ctx->err.msg);
    graph_free(g);

    /* softmax: a static f32[...] placeholder */
    g = load(ctx, SOFTMAX);
    if (!ok(g != NULL, "softmax loads")) return done_testing();
    const TensorMeta *m = &graph_placeholder(g, 0)->meta;
    int64_t size[8];
    for (int d = 0; d < m->ndim; d++) sym_is_int(m->size[d], &size[d]);
    size[m->ndim - 1] += 1;
    write_f32(ctx, px, m->ndim, size, 0.5f);
    is_int(inputs_from_npy(ctx, g, one, 1, &in, &n), -1, "a static size that differs is refused at load");
    ok(strstr(ctx->err.msg, "input 0 ('arg0_1') should be f32[") && strstr(ctx->err.msg, "the file holds f32["),
       "both types named: %s", ctx->err.msg);
    write_f32(ctx, px, 1, size, 0.5f);
    is_int(inputs_from_npy(ctx, g, one, 1, &in, &n), -1, "a different rank is refused");
    size[m->ndim - 1] -= 1;
    write_f32(ctx, px, m->ndim, size, 0.5f);
    is_int(inputs_from_npy(ctx, g, one, 1, &in, &n), 0, "the right shape loads");
    ok(n == 1 && tensor_get_f(in[0].t, 0) == 0.5, "with its values");
    inputs_free(in, n);
    is_int(inputs_from_dir(ctx, g, tmp, &in, &n), -1, "a directory without in0.npy");
    is_str(ctx->err.msg, "no in0.npy for input 0 ('arg0_1')", "names the missing file and input");
    bool missing = false;
    ok(recorded_tensor(ctx, tmp, "out", 0, "", &missing) == NULL && missing, "a missing recorded tensor is no error");
    graph_free(g);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) diag("cleanup failed");
    mi_ctx_free(ctx);
    return done_testing();
}
