/* pipeline.c — the benchmark's driver of the whole compiler: FX text -> parse -> post-grad
 * passes -> lowering -> scheduling (+fusion) -> C code generation -> cc -> dlopen, timing each
 * stage. Stages whose headers are not in this tree yet make pipe_compile answer "n/a (...)"
 * so the figures that need them print that instead of failing. */
#include "bench.h"
#if HAVE_PASSES
#include "passes.h"
#endif

#include <stdlib.h>
#include <string.h>

#ifndef HAVE_PASSES
#define HAVE_PASSES 0
#endif
#ifndef HAVE_IR
#define HAVE_IR 0
#endif
#ifndef HAVE_BACKEND      /* scheduler + C code generator */
#define HAVE_BACKEND 0
#endif
#if HAVE_IR
#include "ir.h"
#endif

static double secs_since(uint64_t t0) { return (double)(mi_now_ns() - t0) * 1e-9; }

const char *pipe_available(void) {
    return HAVE_BACKEND ? "parse passes lower sched codegen cc load"
         : HAVE_IR ? "parse passes lower (no scheduler/codegen yet)"
         : HAVE_PASSES ? "parse passes (no lowering yet)" : "parse (no passes yet)";
}

void pipe_free(Compiled *c) {
    if (!c) return;
    rt_free(c->mod);
    graph_free(c->g);
    free(c->c_source);
    memset(c, 0, sizeof *c);
}

int pipe_compile(MiCtx *ctx, const char *text, size_t len, const char *name, bool stop_before_cc,
                 Compiled *out, char *why, size_t nwhy) {
    memset(out, 0, sizeof *out);
    char err[1200];
    uint64_t t0 = mi_now_ns();
    Graph *g = fx_parse(ctx, text, len, name, 1);
    if (!g) {
        snprintf(why, nwhy, "parse failed: %s", mi_err_str(ctx, err, sizeof err));
        return -1;
    }
    ops_resolve_graph(g);
    out->t.parse = secs_since(t0);

    t0 = mi_now_ns();
#if !HAVE_PASSES
    out->g = g;
    snprintf(why, nwhy, "n/a (the pass manager does not link yet)");
    return -1;
#else
    PassManager *pm = pm_new(ctx, g, NULL, 0);
    if (!pm || pm_run_all(pm) < 0) {
        snprintf(why, nwhy, "passes failed: %s", mi_err_str(ctx, err, sizeof err));
        pm_free(pm);
        graph_free(g);
        return -1;
    }
    out->g = graph_clone(pm_graph(pm));
    pm_free(pm);
    graph_free(g);
    out->t.passes = secs_since(t0);
#endif

#if HAVE_IR
    t0 = mi_now_ns();
    IrModule *ir = ir_lower(ctx, out->g);
    if (!ir) {
        snprintf(why, nwhy, "lowering failed: %s", mi_err_str(ctx, err, sizeof err));
        return -1;
    }
    out->t.lowering = secs_since(t0);
#if HAVE_BACKEND
#else
    (void)stop_before_cc;
    ir_free(ir);
    snprintf(why, nwhy, "n/a (scheduler / C code generator not in the library yet)");
    return -1;
#endif
#else
    (void)stop_before_cc;
    snprintf(why, nwhy, "n/a (lowering not in the library yet)");
    return -1;
#endif
}
