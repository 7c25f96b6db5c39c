/* compile_fx.c — the pipeline driver: lower -> schedule -> codegen -> compile, one stage at a
 * time, keeping each result (see compile_fx.h). Inductor's compile_fx_inner / GraphLowering
 * .compile_to_module, small. */
#include "compile_fx/compile_fx.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_cuda.h"
#include "codegen/codegen_reuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void compile_fx_init(CompiledFx *c, const Graph *g) {
    memset(c, 0, sizeof *c);
    c->graph = g;
}

const char *compile_fx_stage_name(CfxStage s) {
    switch (s) {
    case CFX_LOWERED: return "lowering";
    case CFX_SCHEDULED: return "scheduling";
    case CFX_GENERATED: return "codegen";
    case CFX_BUILT: return "compile";
    default: return "?";
    }
}

/* Prefix the ctx error with the stage's name ("codegen: unsupported dtype ..."); returns -1. */
static int stage_failed(MiCtx *ctx, CfxStage s) {
    char msg[sizeof ctx->err.msg];
    const char *stage = compile_fx_stage_name(s);
    size_t sl = strlen(stage);
    memcpy(msg, stage, sl);
    memcpy(msg + sl, ": ", 2);
    size_t room = sizeof msg - sl - 3, ml = strnlen(ctx->err.msg, room);
    memcpy(msg + sl + 2, ctx->err.msg, ml);
    msg[sl + 2 + ml] = 0;
    memcpy(ctx->err.msg, msg, sizeof msg);
    return -1;
}

/* A graph that fails lint is not lowered: its annotations disagree with what its ops compute
 * (add of [4, 4] and [3, 5], a view of 20 elements of 16), and lowering trusts them; PyTorch
 * never hands Inductor such a graph (its fake tensors are the annotations), a hand-written one
 * can. The first problem (ctx's error: file, line, node) is kept, prefixed. Returns -1. */
static int lint_refused(MiCtx *ctx, int problems) {
    char head[96], *msg = ctx->err.msg;
    size_t hl = (size_t)snprintf(head, sizeof head, "the graph fails lint (%d problem%s; 'lint' lists them): ", problems,
                                 problems == 1 ? "" : "s");
    size_t ml = strnlen(msg, sizeof ctx->err.msg - hl - 1);
    memmove(msg + hl, msg, ml);
    memcpy(msg, head, hl);
    msg[hl + ml] = 0;
    return -1;
}

/* Run one stage on the results of the previous one. 0 / -1 + ctx error. */
static int run_stage(MiCtx *ctx, CompiledFx *c, CfxStage s) {
    switch (s) {
    case CFX_LOWERED: {
        int problems = graph_lint(ctx, (Graph *)c->graph, NULL);   /* users are a cache */
        if (problems) return lint_refused(ctx, problems);
        c->ir = ir_lower(ctx, c->graph);
        return c->ir ? 0 : -1;
    }
    case CFX_SCHEDULED:
        c->sched = sched_run(ctx, c->ir);
        if (c->sched) codegen_reuse_kernels(ctx, c->sched);   /* src_to_kernel: one definition each */
        return c->sched ? 0 : -1;
    case CFX_GENERATED:
        c->cuda = ctx->target == MI_DEV_CUDA;
        c->code = c->cuda ? codegen_cuda(ctx, c->sched) : codegen_c(ctx, c->sched);
        return c->code ? 0 : -1;
    case CFX_BUILT:
        c->mod = rt_compile(ctx, c->code);
        return c->mod ? 0 : -1;
    default:
        return 0;
    }
}

int compile_fx(MiCtx *ctx, CompiledFx *c, CfxStage upto) {
    if (!c->graph) return mi_err(ctx, NULL, 0, 0, "compile_fx: no graph");
    for (CfxStage s = c->done + 1; s <= upto; s++) {
        uint64_t t0 = mi_now_ns();
        if (run_stage(ctx, c, s) < 0) return stage_failed(ctx, s);
        c->ns[s] = mi_now_ns() - t0;
        c->done = s;
    }
    return 0;
}

void compile_fx_drop(CompiledFx *c, CfxStage from) {
    if (from <= CFX_BUILT && c->mod) { rt_free(c->mod); c->mod = NULL; }
    if (from <= CFX_GENERATED) { free(c->code); c->code = NULL; }
    if (from <= CFX_SCHEDULED && c->sched) { sched_free(c->sched); c->sched = NULL; }
    if (from <= CFX_LOWERED && c->ir) { ir_free(c->ir); c->ir = NULL; }
    for (CfxStage s = from; s <= CFX_BUILT; s++) if (s > CFX_NONE) c->ns[s] = 0;
    if (c->done >= from) c->done = from > CFX_NONE ? from - 1 : CFX_NONE;
}

void compile_fx_free(CompiledFx *c) {
    const Graph *g = c->graph;
    compile_fx_drop(c, CFX_LOWERED);
    compile_fx_init(c, g);
    c->graph = NULL;
}
