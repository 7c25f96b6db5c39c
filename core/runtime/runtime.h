/* runtime.h — turn generated C source into a running kernel: compile it with the system C
 * compiler into a shared object kept in an on-disk cache, dlopen it, bind sizes, call it, time
 * it and check it against the reference interpreter. The last stage of the pipeline
 * (codegen_c -> runtime).
 *
 * The module ABI (what core/codegen/codegen_c.c emits; a file is self-contained):
 *     int call(void *const *inputs, void *const *outputs, const int64_t *syms);
 *     const char *mi_sym_names[];     NULL-terminated; the order of syms
 *     const int mi_num_outputs;
 *     const char *mi_guards[];        NULL-terminated size guards (IrModule.guards, "s1 == s0");
 *                                     optional; call returns 1000 + k when guard k fails
 *     const int mi_output_alias[];    optional; per output, the index of the tensor input it is
 *                                     (a graph input returned as it is), else -1: the caller
 *                                     returns that input tensor itself and outputs[j] is NULL
 *     int mi_output_strides(int j, const int64_t *syms, int64_t *out);
 *                                     optional; 1 and output j's strides in out when the module
 *                                     lays it out other than its annotation (channels last)
 *     int mi_output_view(int j, const int64_t *syms, int64_t *v);
 *                                     optional; 1 when output j is a view of a storage (Inductor's
 *                                     reinterpret_tensor): v = {owner, numel, offset, size[nd],
 *                                     stride[nd]}; owner -1: the storage of the input that
 *                                     mi_output_alias names; owner j: the module writes a buffer
 *                                     of numel elements into outputs[j]; another owner k: output
 *                                     k's storage (outputs[j] is NULL)
 *     int mi_profile; int64_t mi_prof_ns[]; const char *mi_prof_names[];
 *                                     optional per-kernel profile (rt_profile): while
 *                                     mi_profile is set, call adds kernel k's ns to mi_prof_ns[k]
 * call() of a CPU module runs with flush-to-zero / denormals-are-zero on its OpenMP threads
 * unless generated with ctx->flush_denormal off (core/codegen/codegen_c.c: denormal_src).
 * inputs[i]  = data pointer of the i-th TENSOR placeholder (SymInt placeholders skipped; their
 *              values and every size symbol arrive in syms, in the order of mi_sym_names);
 * outputs[j] = data pointer of the j-th graph output, preallocated by the caller with the output
 *              meta's sizes/strides (NULL for None / SymInt outputs).
 * call returns 0 on success; 3000 (MI_INDEX_OOB) when a kernel met an index loaded from a tensor
 * outside its dim (the module then exports int64_t mi_index_oob_info[3] = {1, index, size});
 * 3001 (MI_ZERO_DIV) when a kernel divided an integer by zero (ATen's ZeroDivisionError; the
 * module exports const char *mi_zero_div_kernel, the kernel's name); 3002 (MI_WHILE_LIMIT) when a
 * while_loop's body_fn ran ctx->limits.while_iterations times (the value when the source was
 * generated) and cond_fn still gave True (the module exports const char *mi_while_limit_loop,
 * the loop's buffer). A cond branch's or a loop's subgraph's code passes through to call().
 * The source may use OpenMP and, when compiled with -DMI_HAVE_CBLAS,
 * cblas.
 *
 * Fallbacks: a module with FallbackKernels (ops without a lowering, core/ir/ir_fallback.c) also
 * exports
 *     int call_fb(void *const *inputs, void *const *outputs, const int64_t *syms, const MiFb *fb);
 * and its call() is call_fb(..., NULL), which fails with MI_FALLBACK_FAILED (2000) at the first
 * fallback. MiFb (declared in the generated source) is {void *ctx; int (*run)(ctx, node, nargs,
 * args, nouts, outs, nsyms, sym_names, syms)}: `node` is the graph node's name, args/outs are
 * MiFbTensor {data, dtype (a DType value), ndim, offset, size[16], stride[16]} describing the
 * argument buffers (in the order the node references tensors) and the result buffers (data NULL:
 * result not wanted; offset -1: allocate it, see rt_fallback_run); run returns 0 on success.
 * A module with an output whose size is an unbacked SymInt (u1 = x.item(), defined inside the
 * call) leaves outputs[j] unused and asks alloc_out(ctx, j, nsyms, mi_sym_names, syms) for the
 * storage once u1 is known (syms: the call's own, with the unbacked values set).
 * The .so never links libminductor: rt_run / rt_time / rt_check pass a table whose run() finds the node in the graph they were given (or
 * one of its subgraphs, by name) and runs its reference implementation on
 * tensors wrapping those pointers (rt_fallback_run). A node of a cond branch is named by its path,
 * as its buffers are: "true_graph_0_embedding".
 *
 * Compiler: $MINDUCTOR_CC or "cc", flags "-O3 -march=native -fopenmp -fno-math-errno
 * -fno-trapping-math -D__FAST_MATH__ -shared -fPIC" (the macro only makes glibc declare the
 * vectorized libmvec math functions; no -ffast-math semantics) plus
 * $MINDUCTOR_CFLAGS (extra, split on spaces), plus -DMI_HAVE_CBLAS and the BLAS include/link
 * flags when the library was built with BLAS (see runtime.c: MI_RT_BLAS_FLAGS).
 * Cache directory: ctx->cache_dir, else $MINDUCTOR_CACHE, else $XDG_CACHE_HOME/minductor, else
 * ~/.cache/minductor. Files are named by a 64-bit FNV-1a hash of compiler + flags + source:
 * mi_<hash>.c, mi_<hash>.so (written to a temp name and renamed, so concurrent processes are
 * safe), mi_<hash>.err (cc's stderr of the last failed build). */
#ifndef RUNTIME_H
#define RUNTIME_H

#include "ops/interp.h"

typedef int (*RtCallFn)(void *const *inputs, void *const *outputs, const int64_t *syms);
/* The fallback callback table and tensor of the module ABI (same layout as the generated C). */
typedef struct RtFbTensor { void *data; int32_t dtype, ndim; int64_t offset; int64_t size[16], stride[16]; } RtFbTensor;
typedef struct RtFb {
    void *ctx;
    int (*run)(void *ctx, const char *node, int nargs, const RtFbTensor *args, int nouts, RtFbTensor *outs,
               int nsyms, const char *const *sym_names, const int64_t *syms);
    void *(*alloc_out)(void *ctx, int j, int nsyms, const char *const *sym_names, const int64_t *syms);
} RtFb;
typedef int (*RtCallFbFn)(void *const *inputs, void *const *outputs, const int64_t *syms, const RtFb *fb);
/* What rt_fallback_run needs: the session and the graph the module was generated from. */
/* g: the graph the module was run with; fg: its functional form, made on the first fallback node
 * g lacks (ir_lower lowers a graph with in-place ops through functionalize, whose new nodes,
 * 'bitwise_and' for 'bitwise_and_', are the ones the module names); freed after the call. */
/* pp / mod: the call's prepared outputs and its module, for alloc_out (runtime.c). */
typedef struct RtFbCtx { MiCtx *ctx; const Graph *g; bool failed; Graph *fg; void *pp; const struct RtModule *mod; } RtFbCtx;
/* The `run` of the table: ctx is an RtFbCtx. 0, or -1 with its ctx error set. A result marked
 * data NULL, offset -1 (its size is an unbacked u0 only the call knows) comes back in storage
 * malloc'd here, laid out as the node's annotation says, described in outs[k] (the module
 * frees it). */
int rt_fallback_run(void *ctx, const char *node, int nargs, const RtFbTensor *args, int nouts, RtFbTensor *outs,
                    int nsyms, const char *const *sym_names, const int64_t *syms);

typedef struct RtModule {
    char key[17];            /* hex FNV-1a 64 of compiler, flags and source */
    char src_path[1024];     /* cached copy of the source */
    char so_path[1024];      /* the shared object */
    bool cache_hit;          /* the .so was already in the cache: cc did not run */
    double compile_s;        /* seconds spent in cc (0 on a hit) */
    double load_s;           /* seconds spent in dlopen + dlsym */
    void *handle;            /* dlopen handle */
    RtCallFn call;
    RtCallFbFn call_fb;      /* modules with fallbacks (NULL otherwise) */
    const char *const *sym_names;   /* mi_sym_names */
    int nsyms;
    int num_outputs;         /* mi_num_outputs */
    const int *output_alias; /* mi_output_alias (NULL when the module has none) */
    int (*output_strides)(int j, const int64_t *syms, int64_t *out);   /* mi_output_strides or NULL */
    int (*output_view)(int j, const int64_t *syms, int64_t *v);        /* mi_output_view or NULL */
    const char *const *guards;   /* mi_guards (NULL when the module has none) */
    int nguards;
    /* the per-kernel profile (CPU modules; NULL when the module has none): */
    int *profile;                      /* mi_profile: call() times its kernels while set */
    int64_t *prof_ns;                  /* mi_prof_ns[k]: ns summed over the timed calls */
    const char *const *prof_names;     /* mi_prof_names: kernel k's name, NULL-terminated */
    int nprof;
    /* CUDA modules (core/codegen/codegen_cuda.h; rt_compile builds them with nvcc): */
    bool is_cuda;
    bool keep_mapped;   /* a fault left an OpenMP team inside this module: never dlclose it (rt_guard.c) */
    int (*cuda_time)(void *const *inputs, void *const *outputs, const int64_t *syms, int warmup,
                     int reps, double *ms);    /* mi_cuda_time: device-only timing */
    const char *(*cuda_error)(void);           /* mi_cuda_error */
    const char *(*cuda_libs)(void);            /* mi_cuda_libs (modules with GEMMs or convolutions):
                                                  "cuBLAS (path)" or "templated GEMM (why)"; else NULL */
} RtModule;

/* Compile (or fetch from the cache) and load. NULL + ctx error: on a compiler error the
 * message holds the first lines of cc's stderr and the error's file is the cached source.
 * CUDA source (codegen_cuda) is built with nvcc instead ($MINDUCTOR_NVCC, else nvcc on PATH,
 * else /usr/local/cuda/bin/nvcc; flags "-O3 -shared -Xcompiler -fPIC -x cu" plus
 * $MINDUCTOR_NVCC_FLAGS, default "-arch=sm_90"); without nvcc, or when loading finds no GPU
 * ("no CUDA GPU available"), it fails with a clear message. rt_run/rt_check then work unchanged
 * (call() copies to and from the GPU); rt_time times the kernels alone with CUDA events. */
RtModule *rt_compile(MiCtx *ctx, const char *c_source);

/* Tune the process's BLAS once (core/runtime/blas_core.c; rt_compile calls it): an OpenBLAS
 * whose load-time detection chose an older kernel set than cpuid offers (0.3.21: Haswell on an
 * AVX-512 Zen 5) is switched to the best one it has (SkylakeX: 2x the sgemm GFLOP/s), unless
 * the user set OPENBLAS_CORETYPE (MINDUCTOR_BLAS_CORETYPE=cpuid chooses from cpuid anyway;
 * =NAME forces core NAME). Returns what the BLAS runs, for reports:
 * "OpenBLAS core SkylakeX (chosen from cpuid; OpenBLAS detected Haswell)". */
const char *rt_blas_tune(void);
/* The decision alone: the core to switch to (NULL: keep `detected`) given OpenBLAS's detected
 * core, $OPENBLAS_CORETYPE, $MINDUCTOR_BLAS_CORETYPE and the best core cpuid offers (NULL:
 * none); `why` gets the reason ("OPENBLAS_CORETYPE=Haswell; cpuid offers Cooperlake"). */
const char *rt_blas_choose(const char *detected, const char *openblas_env, const char *mi_env, const char *best,
                           char *why, size_t n);
/* The best OpenBLAS core cpuid offers that the loaded OpenBLAS has ("Cooperlake"), or NULL. */
const char *rt_blas_cpuid_core(void);
void rt_free(RtModule *m);

/* The cache directory rt_compile uses (created if missing); NULL + ctx error. Returns buf. */
const char *rt_cache_dir(MiCtx *ctx, char *buf, size_t n);

/* Run the module once on inputs (one per placeholder of g, as interp_run takes them): binds
 * size symbols from SymInt inputs and input shapes, allocates the outputs from g's output metas,
 * calls the module with ctx->threads OpenMP threads (0: rt_default_threads). *outs is malloc'd (free with
 * interp_free_outputs). *seconds (may be NULL) gets the time of the call alone. Inputs whose
 * strides differ from their placeholder's meta are passed through a copy with the expected
 * layout (copied back afterwards, so in-place updates reach the caller's tensors). */
int rt_run(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
           IValue **outs, int *nouts, double *seconds);

/* Time the module: outputs are allocated once, `warmup` untimed calls, then `reps` timed calls.
 * *median_s / *min_s (may be NULL) receive the median and the fastest call. */
int rt_time(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
            int warmup, int reps, double *median_s, double *min_s);

/* What rt_time_stats measured (seconds). spread = (p90 - p10) / median: how far apart the
 * usual calls are; above RT_SPREAD_WIDE the median is not to be trusted (the machine was busy,
 * or threads waited for each other). */
typedef struct RtTiming {
    double median, min, max, p10, p90, spread;
    int reps;            /* timed calls */
    int warmup;          /* untimed calls before them */
    int threads;         /* OpenMP threads the calls ran with */
} RtTiming;
#define RT_SPREAD_WIDE 0.5
/* rt_time with statistics. Warm-up: at least `warmup` calls and at least 20 ms of calls (caches,
 * page faults of the outputs, the OpenMP team's start), at most `reps` calls. Ctrl-C
 * (ctx->interrupt) stops it with an error naming how many calls ran; ctx->progress hears of
 * long loops. */
int rt_time_stats(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
                  int warmup, int reps, RtTiming *out);

/* OpenMP threads of the kernels when ctx->threads is 0 (core/runtime/rt_threads.c):
 * $OMP_NUM_THREADS when set, else the physical cores this process may run on (hyper-threads
 * counted once, capped by a cgroup CPU quota), as PyTorch picks its intra-op threads. `why`
 * (may be NULL) gets where the number came from ("physical cores"). */
int rt_default_threads(char *why, size_t n);

/* Where a module's time goes: `warmup` untimed calls, then `reps` calls with the module's
 * per-kernel clock on (mi_profile). Per kernel (a fused cpp kernel or an extern / fallback
 * call, in call order) the median over the calls, and the median of the whole call.
 * MINDUCTOR_PROFILE_CLOCK=cpu: CPU time instead of wall time (the calling thread's per kernel,
 * the process's per call): with ctx->threads == 1 it leaves out the time other processes of a
 * shared machine took the core.
 * Fails with a clear error for a module without the profile (CUDA). */
typedef struct RtProfile {
    int n;
    const char **names;      /* the module's names (valid while the module is loaded) */
    double *ms;              /* median ms per call of kernel k */
    double call_ms;          /* median ms of the whole call */
} RtProfile;
int rt_profile(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
               int warmup, int reps, RtProfile *out);
/* The table: one line per kernel, slowest first ("  12.345 ms  45.6%  cpp_fused_div_2"), then
 * the sum and the whole call (the rest: allocation, the denormal mode, calls' overhead). */
void rt_profile_format(const RtProfile *p, StrBuf *sb);
void rt_profile_free(RtProfile *p);

/* Run the reference interpreter and the module on the same inputs and compare every output and
 * mutated input by torch._dynamo.utils.same's rule (core/ops/numerics.h: allclose(rtol, atol),
 * else RMSE against a float64 interpreter run). Appends a report to `report` (may be NULL):
 *   "output 0: f32[8, 16] ok max abs err 1.2e-07 max rel err 3.1e-07\n" ... "interp 1.234 ms,
 *   compiled 0.012 ms (102.8x)\n". Inputs are cloned for each side, so in-place graphs compare
 * fairly. Returns 1 when all agree, 0 when some differ, -1 on error (ctx error set). */
int rt_check(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
             double rtol, double atol, StrBuf *report);


/* A fault stopped a guarded call (core/runtime/rt_guard.c): the signal, the faulting address
 * (SIGSEGV / SIGBUS: the data address; SIGFPE: the instruction), and whether the calling thread
 * was inside an OpenMP parallel region (its team then still waits: run one thread after it). */
typedef struct RtFault { int sig; void *addr; bool omp_broken; } RtFault;
/* Run fn(arg) with SIGSEGV / SIGBUS / SIGFPE on the calling thread turned into a return: 0 when
 * fn returned (its result in *rc), else the signal, with *f filled. A fault on another thread
 * ends the process as without the guard. rt_run / rt_time / rt_profile call modules through it. */
int rt_guarded_call(int (*fn)(void *), void *arg, int *rc, RtFault *f);

#endif
