/* codegen_check.c — the compile-and-compare step of the C code generator's tests (see
 * codegen_check.h): FX text -> IR -> schedule -> C -> module, checked against the interpreter. */
#include "tests/support/codegen_check.h"
#include "codegen/codegen_c.h"
#include "lowering/lowering.h"
#include "runtime/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cg_check_count(const char *s, const char *pat) {
    int n = 0;
    for (const char *p = s ? strstr(s, pat) : NULL; p; p = strstr(p + 1, pat)) n++;
    return n;
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
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    char *src = s ? codegen_c(ctx, s) : NULL;
    RtModule *rt = src ? rt_compile(ctx, src) : NULL;
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
    rt_free(rt);
    sched_free(s);
    ir_free(m);
    graph_free(g);
    return src;
}
