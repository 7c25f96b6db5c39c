/* compile_fx.h — the pipeline driver (Inductor's compile_fx): a post-grad FX graph through
 * lowering (core/lowering), scheduling and fusion (core/scheduler), code generation
 * (core/codegen, C or CUDA by ctx->target) and compilation (core/runtime), keeping every
 * stage's result for inspection. The shell's lower/sched/codegen/exec, the benchmarks and the
 * tests all go through it, so the chain is written once.
 *
 *     CompiledFx c;
 *     compile_fx_init(&c, g);                       // g is borrowed, not copied
 *     if (compile_fx(ctx, &c, CFX_BUILT) < 0) ...   // ctx error: "scheduling: ..." etc.
 *     rt_run(ctx, c.mod, g, ...);  sched_print(c.sched);  puts(c.code);
 *     compile_fx_free(&c);
 *
 * Stages run in order and only once: asking for CFX_GENERATED after CFX_LOWERED runs
 * scheduling and codegen on the kept IR. compile_fx_drop(&c, CFX_SCHEDULED) forgets the
 * schedule and everything after it (the shell re-runs `sched` after `set fusion off`). */
#ifndef COMPILE_FX_H
#define COMPILE_FX_H

#include "lowering/lowering.h"
#include "scheduler/scheduler.h"
#include "runtime/runtime.h"

typedef enum {
    CFX_NONE = 0,
    CFX_LOWERED,      /* ir: the loop IR (ir_pre_fusion) */
    CFX_SCHEDULED,    /* sched: fusion groups, decisions, memory plan (ir_post_fusion) */
    CFX_GENERATED,    /* code: the C or CUDA source */
    CFX_BUILT         /* mod: compiled with cc/nvcc (or from the cache) and loaded */
} CfxStage;

typedef struct CompiledFx {
    const Graph *graph;       /* the post-grad graph (borrowed) */
    CfxStage done;            /* the last stage that ran */
    IrModule *ir;
    Schedule *sched;
    char *code;               /* malloc'd source */
    bool cuda;                /* code is CUDA (ctx->target when it was generated) */
    RtModule *mod;
    uint64_t ns[CFX_BUILT + 1];   /* wall time of each stage (ns[CFX_BUILT]: cc/nvcc + load) */
} CompiledFx;

/* An empty driver state for g. */
void compile_fx_init(CompiledFx *c, const Graph *g);

/* Run the stages after c->done up to `upto`. 0, or -1 with the ctx error prefixed by the stage
 * that failed ("lowering: ", "scheduling: ", "codegen: ", "compile: "); what ran before stays. */
int compile_fx(MiCtx *ctx, CompiledFx *c, CfxStage upto);

/* Forget `from` and every later stage (they re-run on the next compile_fx). */
void compile_fx_drop(CompiledFx *c, CfxStage from);

/* Free every stage's result (the graph is not freed); c is empty afterwards. */
void compile_fx_free(CompiledFx *c);

/* Name of a stage as the error prefix uses it: "lowering", "scheduling", "codegen", "compile". */
const char *compile_fx_stage_name(CfxStage s);

#endif
