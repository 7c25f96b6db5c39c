/* pipeline.c — the benchmark's driver of the whole compiler: FX text -> parse -> post-grad
 * passes -> lowering -> scheduling (+fusion) -> C code generation -> cc -> dlopen, timing each
 * stage. */
#include "bench.h"
#include "codegen/codegen_c.h"
#include "compile_fx/compile_fx.h"
#include "fx_passes/passes.h"
#include "scheduler/scheduler.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double buf_bytes(MiCtx *ctx, const Buffer *b) {
    int64_t n = 0;
    if (sym_eval(ctx, layout_storage_size(ctx->sym, &b->layout), NULL, 0, &n) != 0) {
        mi_clear_err(ctx);
        return 0;
    }
    return (double)n * dtype_size(b->layout.dtype);
}

/* Bytes the scheduled kernels move: per kernel, each distinct buffer it reads from outside
 * itself, plus each buffer it writes that something outside the kernel needs (another kernel,
 * a graph output, a mutated input). Buffers produced and consumed inside one fused kernel are
 * not counted: fusion removed them. */
static double sched_bytes(MiCtx *ctx, const Schedule *s) {
    const IrModule *ir = s->ir;
    int *writer_group = mi_xcalloc((size_t)ir->nbufs + 1, sizeof *writer_group);
    bool *read_elsewhere = mi_xcalloc((size_t)ir->nbufs + 1, sizeof *read_elsewhere);
    int *seen = mi_xcalloc((size_t)ir->nbufs + 1, sizeof *seen);
    for (int i = 0; i < ir->nbufs; i++) writer_group[i] = -1;
    for (int i = 0; i < s->nnodes; i++)
        if (!s->nodes[i].dead && s->nodes[i].buf) writer_group[s->nodes[i].buf->id] = s->nodes[i].group;
    for (int i = 0; i < s->nnodes; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->dead) continue;
        for (int r = 0; r < n->deps.nreads; r++) {
            const Buffer *b = n->deps.reads[r].buf;
            if (b && writer_group[b->id] != n->group) read_elsewhere[b->id] = true;
        }
    }
    double total = 0;
    for (int k = 0; k < s->norder; k++) {
        int g = s->order[k];
        const SchedGroup *grp = &s->groups[g];
        for (int j = 0; j < grp->n; j++) {
            const SchedNode *n = &s->nodes[grp->nodes[j]];
            if (n->dead) continue;
            for (int r = 0; r < n->deps.nreads; r++) {
                const Buffer *b = n->deps.reads[r].buf;
                if (!b || writer_group[b->id] == g || seen[b->id] == g + 1) continue;
                seen[b->id] = g + 1;
                total += buf_bytes(ctx, b);
            }
            const Buffer *w = n->buf;
            if (w && (w->output_index >= 0 || w->mutates || read_elsewhere[w->id]))
                total += buf_bytes(ctx, w->mutates ? w->mutates : w);
        }
    }
    free(writer_group);
    free(read_elsewhere);
    free(seen);
    return total;
}

/* The stages' clock: wall time, or with MINDUCTOR_PROFILE_CLOCK=cpu the compiling thread's CPU
 * time (the stages before cc run on one thread; on a machine shared with other jobs the wall
 * clock also counts the time others held the core). cc and load keep the runtime's wall time
 * (cc is a child process). */
bool pipe_cpu_clock(void) {
    const char *e = getenv("MINDUCTOR_PROFILE_CLOCK");
    return e && !strcmp(e, "cpu");
}
static uint64_t stage_ns(void) {
    if (!pipe_cpu_clock()) return mi_now_ns();
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static double secs_since(uint64_t t0) { return (double)(stage_ns() - t0) * 1e-9; }

const char *pipe_available(void) { return "parse passes lower sched codegen cc load"; }

void pipe_free(Compiled *c) {
    if (!c) return;
    rt_free(c->mod);
    graph_free(c->g);
    free(c->c_source);
    memset(c, 0, sizeof *c);
}

int pipe_compile(MiCtx *ctx, const char *text, size_t len, const char *name, int upto,
                 Compiled *out, char *why, size_t nwhy) {
    memset(out, 0, sizeof *out);
    char err[1200];
    uint64_t t0 = stage_ns();
    Graph *g = fx_parse(ctx, text, len, name, 1);
    if (!g) {
        snprintf(why, nwhy, "parse failed: %s", mi_err_str(ctx, err, sizeof err));
        return -1;
    }
    ops_resolve_graph(g);
    out->t.parse = secs_since(t0);

    t0 = stage_ns();
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

    /* lower -> schedule -> codegen (-> cc), timed stage by stage by the driver */
    CompiledFx c;
    compile_fx_init(&c, out->g);
    CfxStage last = upto == PIPE_TO_LOWERING ? CFX_LOWERED : upto == PIPE_TO_CODEGEN ? CFX_GENERATED : CFX_BUILT;
    int rc = 0;
    double cpu_s[CFX_BUILT + 1] = {0};
    for (CfxStage st = CFX_LOWERED; st <= last && rc == 0; st++) {   /* stage by stage: each its own clock reading */
        t0 = stage_ns();
        rc = compile_fx(ctx, &c, st);
        cpu_s[st] = secs_since(t0);
    }
    bool cpu = pipe_cpu_clock();
    out->t.lowering = cpu ? cpu_s[CFX_LOWERED] : c.ns[CFX_LOWERED] * 1e-9;
    out->t.sched = cpu ? cpu_s[CFX_SCHEDULED] : c.ns[CFX_SCHEDULED] * 1e-9;
    out->t.codegen = cpu ? cpu_s[CFX_GENERATED] : c.ns[CFX_GENERATED] * 1e-9;
    if (c.sched) {
        out->nkernels = sched_num_kernels(c.sched);
        out->bytes_moved = sched_bytes(ctx, c.sched);
    }
    out->c_source = c.code;
    out->mod = c.mod;
    c.code = NULL;
    c.mod = NULL;
    compile_fx_free(&c);
    if (rc < 0) {
        snprintf(why, nwhy, "%s failed", mi_err_str(ctx, err, sizeof err));
        return -1;
    }
    if (upto != PIPE_ALL) return 0;
    out->t.cc = out->mod->compile_s;
    out->t.load = out->mod->load_s;
    return 0;
}
