/* codegen_check.c — a graph's compile chain in one call, and the compile-and-compare step of
 * the C code generator's tests (see codegen_check.h): FX text -> IR -> schedule -> C -> module,
 * checked against the interpreter. */
#include "tests/support/codegen_check.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_cuda.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"
#include "scheduler/scheduler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cg_check_count(const char *s, const char *pat) {
    int n = 0;
    for (const char *p = s ? strstr(s, pat) : NULL; p; p = strstr(p + 1, pat)) n++;
    return n;
}

int cg_compile(MiCtx *ctx, const Graph *g, CgBuild *b, unsigned flags) {
    *b = (CgBuild){0};
    b->m = g ? ir_lower(ctx, g) : NULL;
    b->s = b->m ? sched_run(ctx, b->m) : NULL;
    bool cuda = ctx->target == MI_DEV_CUDA;
    b->src = !b->s ? NULL : cuda ? codegen_cuda(ctx, b->s) : codegen_c(ctx, b->s);
    if (!b->src) return -1;
    if (cuda || (flags & CG_SOURCE)) return 0;
    b->rt = rt_compile(ctx, b->src);
    return b->rt ? 0 : -1;
}

void cg_free(CgBuild *b) {
    rt_free(b->rt);
    free(b->src);
    sched_free(b->s);
    ir_free(b->m);
    *b = (CgBuild){0};
}

char *cg_check_compile(MiCtx *ctx, const char *fx, long nan_at, int *agree, char **report) {
    *agree = 0;
    *report = NULL;
    Graph *g = fx_parse(ctx, fx, strlen(fx), "test", 1);
    if (!g) {
        char e[600];
        *report = mi_xstrdup(mi_err_str(ctx, e, sizeof e));
        return NULL;
    }
    ops_resolve_graph(g);
    ctx->fusion = true;
    CgBuild b;
    cg_compile(ctx, g, &b, 0);
    RtModule *rt = b.rt;
    char *src = b.src;
    b.src = NULL;   /* the caller's */
    IValue *in = NULL;
    int nin = 0, r = -1;
    StrBuf rep;
    sb_init(&rep);
    if (rt && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) {
        if (nan_at >= 0) ((float *)in[0].t->storage->data)[in[0].t->offset + nan_at] = NAN;
        r = rt_check(ctx, rt, g, in, nin, 1e-4, 1e-5, &rep);
    }
    *agree = r == 1;
    if (r != 1) {
        char e[600];
        StrBuf w;
        sb_init(&w);
        sb_printf(&w, "%s\n%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e), src ? src : "");
        *report = sb_take(&w);
    }
    sb_free(&rep);
    if (in) interp_free_outputs(in, nin);
    cg_free(&b);
    graph_free(g);
    return src;
}
