/* bench.h — shared pieces of the benchmark program (bench/minibench): the pipeline driver that
 * turns FX text into a loaded kernel module with per-stage times, the STREAM reference, the
 * graph generator, the figures, and the JSON-lines / table output. See bench/README.md. */
#ifndef BENCH_H
#define BENCH_H

#include "base/mi.h"
#include "fx/graph.h"
#include "runtime/runtime.h"

#include <stdio.h>

/* ---- options shared by the figures ---- */
typedef struct BenchOpts {
    int threads;            /* OpenMP threads for kernels and STREAM; 0 = all cores */
    int reps, warmup;       /* timed calls per measurement / untimed calls before */
    bool quick;             /* smaller sizes for a smoke run */
    bool no_interp;         /* skip the reference-interpreter baseline (vs_torch.py) */
    bool fresh_outputs;     /* allocate outputs inside each timed call, like torch.compile */
    bool keep_denormals;    /* modules compute with denormals (ctx->flush_denormal off) */
    const char *graphs_dir; /* bench/graphs */
    const char *only;       /* run just one figure: "stream", "kernels", "pipeline", "tlparse" */
    const char *workload;   /* only this workload in figure 1/2 */
    FILE *json;             /* JSON-lines output, may be NULL */
    double stream_gbs;      /* filled by the STREAM figure (best of copy / triad) */
} BenchOpts;

/* ---- pipeline driver (bench/pipeline.c) ---- */
enum { PIPE_ALL, PIPE_TO_LOWERING, PIPE_TO_CODEGEN };
typedef struct StageTimes {
    double parse, passes, lowering, sched, codegen, cc, load;   /* seconds */
} StageTimes;

typedef struct Compiled {
    Graph *g;               /* the graph the module implements (after the passes) */
    RtModule *mod;
    char *c_source;         /* the generated C */
    double bytes_moved;     /* inputs + outputs + unfused intermediates; 0 = unknown */
    int nkernels;           /* kernels after scheduling; 0 = unknown */
    StageTimes t;
} Compiled;

/* Parse `text`, run the post-grad passes, lower, schedule (ctx->fusion decides fusion),
 * generate C and compile it. upto: PIPE_ALL, PIPE_TO_LOWERING (stop after lowering) or
 * PIPE_TO_CODEGEN (skip cc and load). 0 on success; -1 with
 * a one-line reason in `why` (e.g. "n/a (core/codegen/codegen_c.h not written yet)"). */
int pipe_compile(MiCtx *ctx, const char *text, size_t len, const char *name, int upto,
                 Compiled *out, char *why, size_t nwhy);
void pipe_free(Compiled *c);
/* MINDUCTOR_PROFILE_CLOCK=cpu: pipe_compile times parse .. codegen by the thread's CPU clock. */
bool pipe_cpu_clock(void);
/* One line saying which pipeline stages this build has ("parse passes lower sched codegen"). */
const char *pipe_available(void);

/* ---- the numerical check (bench/fp64_check.c) ---- */
typedef struct BenchSame { bool ok, fp64; double max_abs, res_rmse, ref_rmse; } BenchSame;
/* res (the compiled module's nout outputs) against ref (the float32 interpreter's) by
 * torch._dynamo.utils.same's rule (core/base/same.h): allclose(rtol, atol), else the float64
 * interpreter run of g on `in` decides by RMSE (v->fp64 set, the largest RMSEs kept). v->ok
 * when every output passes. Returns 0. */
int bench_same(MiCtx *ctx, const Graph *g, const IValue *in, int nin, IValue *ref, IValue *res, int nout,
               double rtol, double atol, BenchSame *v);

/* ---- figures ---- */
int fig_stream(BenchOpts *o);     /* STREAM copy / triad */
/* The triad again, beside a workload (bench/stream.c): arrays as fig_stream's, allocated once;
 * sample appends `reps` timed passes (seconds) to v[*nv] (64 at most); gbs is the triad of
 * their median (NAN when none). */
typedef struct BenchTriad BenchTriad;
BenchTriad *bench_triad_new(const BenchOpts *o);
void bench_triad_sample(BenchTriad *t, double *v, int *nv, int reps);
double bench_triad_gbs(const BenchTriad *t, double *v, int nv);
void bench_triad_free(BenchTriad *t);
int fig_kernels(BenchOpts *o);    /* figures 1 and 2 */
int fig_pipeline(BenchOpts *o);   /* figure 3 */
int fig_tlparse(BenchOpts *o);    /* figure 4 */
int touch_main(int argc, char **argv);   /* minibench touch huge|small [MB] [REPS] (bench/touch.c) */

/* ---- generator (bench/gen_graph.c) ---- */
/* FX text of a chain of layer-norm / gelu / residual blocks over f32[rows, cols] with about
 * `nodes` nodes (each block has 15). malloc'd. */
char *gen_graph(int nodes, int rows, int cols);

/* ---- helpers (bench/main.c) ---- */
double bench_median(double *v, int n);     /* sorts v */
const char *bench_date(char *buf, size_t n);  /* "2026-11-23T01:02:03Z" */
void json_str(StrBuf *b, const char *s);   /* JSON string literal */
void json_emit(BenchOpts *o, StrBuf *line);   /* write one line to o->json, free line */

#endif
