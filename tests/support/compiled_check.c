/* compiled_check.c — interpreter, compiled C and nvcc checks of one graph on the test's inputs
 * (see compiled_check.h). */
#include "tests/support/compiled_check.h"
#include "tests/support/codegen_check.h"
#include "tests/support/fixture_graph.h"
#include "tests/support/op_graph.h"
#include "compile_fx/compile_fx.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(const char *what, MiCtx *ctx) {
    char e[2048];
    fprintf(stderr, "# %s: %s\n", what, mi_err_str(ctx, e, sizeof e));
    mi_clear_err(ctx);
}

/* fresh copies of ins as interpreter inputs (a run may mutate them) */
static void copies(MiCtx *ctx, Tensor **ins, int n, IValue *in) {
    for (int i = 0; i < n && i < CC_MAX_IN; i++) {
        in[i].kind = IV_TENSOR;
        in[i].t = tensor_clone(ctx, ins[i]);
    }
}

static void drop(IValue *in, int n) {
    for (int i = 0; i < n && i < CC_MAX_IN; i++) tensor_unref(in[i].t);
}

IValue *cc_interp(MiCtx *ctx, Graph *g, Tensor **ins, int n, int *nout) {
    IValue in[CC_MAX_IN] = {0}, *outs = NULL;
    *nout = 0;
    if (n > CC_MAX_IN) { fprintf(stderr, "# cc_interp: more than %d inputs\n", CC_MAX_IN); return NULL; }
    copies(ctx, ins, n, in);
    if (!g || interp_run(ctx, g, in, n, &outs, nout) != 0) {
        say("run failed", ctx);
        outs = NULL;
    }
    drop(in, n);
    return outs;
}

bool cc_output_is(MiCtx *ctx, Graph *g, Tensor **ins, int n, int k, const double *want, int64_t nwant, double tol) {
    int no = 0;
    IValue *o = g ? cc_interp(ctx, g, ins, n, &no) : NULL;
    bool same = o && no > k && o[k].kind == IV_TENSOR && og_values(o[k].t, want, nwant, tol);
    if (o) interp_free_outputs(o, no);
    return same;
}

bool cc_c_agrees(MiCtx *ctx, Graph *g, Tensor **ins, int n, double tol) {
    int ni = 0, nc = 0;
    if (n > CC_MAX_IN) { fprintf(stderr, "# cc_c_agrees: more than %d inputs\n", CC_MAX_IN); return false; }
    IValue *io = cc_interp(ctx, g, ins, n, &ni), *co = NULL, in[CC_MAX_IN] = {0};
    copies(ctx, ins, n, in);
    CompiledFx c;
    compile_fx_init(&c, g);
    int rc = compile_fx(ctx, &c, CFX_BUILT);
    if (rc == 0) rc = rt_run(ctx, c.mod, g, in, n, &co, &nc, NULL);
    if (rc) say("compiled", ctx);
    bool same = rc == 0 && io && nc == ni;
    for (int k = 0; same && k < nc; k++) {
        if (co[k].kind != IV_TENSOR) continue;
        CompareResult cr = tensor_compare(co[k].t, io[k].t, tol, tol);
        if (!cr.ok) { fprintf(stderr, "# output %d differs by %g\n", k, cr.max_abs); same = false; }
    }
    if (co) interp_free_outputs(co, nc);
    if (io) interp_free_outputs(io, ni);
    drop(in, n);
    compile_fx_free(&c);
    return same;
}

int cc_cuda_builds(MiCtx *ctx, Graph *g) {
    MiDeviceKind target = ctx->target;
    ctx->target = MI_DEV_CUDA;
    CgBuild b;
    cg_compile(ctx, g, &b, CG_SOURCE);
    ctx->target = target;
    if (!b.src) say("CUDA source", ctx);
    int rc = b.src ? tf_nvcc_compiles(b.src) : 0;
    cg_free(&b);
    return rc;
}

int cc_export_inputs(MiCtx *ctx, const Graph *g, const char *dir, const char *name, IValue **in, int *nin, bool *from_fw) {
    static const char tail[] = "_backward.py";
    size_t ln = strlen(name), lt = sizeof tail - 1;
    *from_fw = false;
    if (ln > lt && !strcmp(name + ln - lt, tail)) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%.*s.py", dir, (int)(ln - lt), name);
        MiTry t = mi_try(ctx);
        Graph *fw = graph_load_file(ctx, path);
        int taken = 0, rc = -1;
        if (fw) {
            ops_resolve_graph(fw);
            rc = interp_random_inputs_from_forward(ctx, g, fw, in, nin, &taken);
        }
        mi_try_end(&t);
        graph_free(fw);
        if (rc == 0) { *from_fw = taken > 0; return 0; }
    }
    return interp_random_inputs(ctx, g, NULL, 0, in, nin);
}

Graph *cc_parsed(MiCtx *ctx, const char *fx, const char *file) {
    Graph *g = fx_parse(ctx, fx, strlen(fx), file, 1);
    if (g) ops_resolve_graph(g);
    else say("parse", ctx);
    return g;
}

Graph *cc_parsed_file(MiCtx *ctx, const char *path) {
    Graph *g = graph_load_file(ctx, path);
    if (g) ops_resolve_graph(g);
    else say("load", ctx);
    return g;
}

Tensor *cc_tensor(MiCtx *ctx, DType dt, int ndim, const int64_t *size, const double *vals) {
    Tensor *t = tensor_new(ctx, dt, ndim, size);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_set_f(t, i, vals ? vals[i] : (double)i);
    return t;
}
