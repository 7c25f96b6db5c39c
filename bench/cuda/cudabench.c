/* cudabench.c — the CUDA backend's driver for the device machine (bench/README.md, CUDA).
 *
 *   cudabench cases ROOT [--compile-only]
 *       every ROOT/CASE/graphN/post_post_grad.py: lower, schedule, generate CUDA, build with nvcc,
 *       run on inK.npy and compare with PyTorch's outK.npy (and inK_after.npy) at rtol 1e-4,
 *       atol 1e-5. One line per graph; --compile-only stops after nvcc (no GPU needed).
 *   cudabench bench GRAPHDIR [--reps N] [--only NAME] [--no-check]
 *       each workload GRAPHDIR/NAME.py (bench/graphs): passes for device cuda, CUDA code, check
 *       against the reference interpreter on random inputs, then kernel time (CUDA events, median
 *       of N after 5 warm-ups) and GB/s over the graph's input+output bytes.
 *   cudabench random FIRST_SEED COUNT [--compile-only]
 *       random graphs (tests/support/graph_random.h, same seeds give the same graphs): passes, CUDA code,
 *       nvcc, then compare with the reference interpreter (rt_check, rtol 1e-3 atol 1e-4); a
 *       failing graph is printed as FX text.
 *   cudabench graphs DIR [--compile-only] [--shard K/N]
 *       every DIR/*.py (graphs of real logs: tests/tools/export_log_graphs.sh) as `random` does
 *       (passes for cuda, CUDA code, nvcc, the interpreter on random inputs; NAME_backward.py's
 *       drawn from its forward NAME.py, as a training step hands them over); --shard K/N takes
 *       every N-th file from the K-th, for N processes in parallel (bench/cuda/run_unseen.sh).
 *   --json FILE appends one JSON object per line.
 * Exit status 1 when some graph failed. */
#include "codegen/codegen_cuda.h"
#include "tests/support/graph_random.h"
#include "tests/support/compiled_check.h"
#include "compile_fx/compile_fx.h"
#include "fx_passes/passes.h"
#include "runtime/runtime.h"
#include "ops/inputs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const WORKLOADS[] = {
    "pointwise_chain", "softmax", "ln_gelu", "reductions", "seed_example", "mlp", "transformer_block",
    "llama_block", "cnn", NULL};

static FILE *json;

/* Lower + schedule + CUDA source of g; NULL + why. */
static char *cuda_source(MiCtx *ctx, const Graph *g, int *nkernels, char *why, size_t wn) {
    char e[1200];
    MiDeviceKind saved = ctx->target;
    ctx->target = MI_DEV_CUDA;
    CompiledFx c;
    compile_fx_init(&c, g);
    if (compile_fx(ctx, &c, CFX_GENERATED) < 0) snprintf(why, wn, "%s", mi_err_str(ctx, e, sizeof e));
    if (c.sched) *nkernels = sched_num_kernels(c.sched);
    char *src = c.code;
    c.code = NULL;
    compile_fx_free(&c);
    ctx->target = saved;
    return src;
}

/* 1 ok, 0 skipped (ops not covered), -1 failed */
static int run_case(MiCtx *ctx, const char *dir, bool compile_only, char *why, size_t wn, double *worst) {
    char path[1200], e[1200];
    snprintf(path, sizeof path, "%s/post_post_grad.py", dir);
    Graph *g = graph_load_file(ctx, path);
    if (!g) { snprintf(why, wn, "load: %s", mi_err_str(ctx, e, sizeof e)); return -1; }
    ops_resolve_graph(g);
    if (!lowering_supported(g, why, wn)) { graph_free(g); return 0; }
    int rc = -1, nk = 0, nin = 0, nout = 0;
    RtModule *rt = NULL;
    IValue *in = NULL, *outs = NULL;
    char *src = cuda_source(ctx, g, &nk, why, wn);
    if (!src) {
        if (strstr(why, "not supported by the CUDA backend")) rc = 0;   /* ops not covered */
        goto done;
    }
    rt = rt_compile(ctx, src);
    if (!rt) {
        mi_err_str(ctx, e, sizeof e);
        if (compile_only && strstr(e, "no CUDA GPU available")) { snprintf(why, wn, "%d kernels, nvcc ok (no GPU here)", nk); rc = 1; }
        else snprintf(why, wn, "compile: %s", e);
        goto done;
    }
    if (compile_only) { snprintf(why, wn, "%d kernels, nvcc ok", nk); rc = 1; goto done; }
    if (inputs_from_dir(ctx, g, dir, &in, &nin) < 0) { snprintf(why, wn, "inputs: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    if (rt_run(ctx, rt, g, in, nin, &outs, &nout, NULL) < 0) { snprintf(why, wn, "run: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    int ncmp = recorded_check(ctx, g, dir, outs, nout, in, nin, 1e-4, 1e-5, worst, why, wn);
    rc = ncmp < 0 ? -1 : 1;
    if (rc == 1) snprintf(why, wn, "%d kernels, %d tensors match PyTorch (max abs err %.3g)%s%.*s", nk, ncmp, *worst,
                          rt->cuda_libs ? "; GEMM: " : "", rt->cuda_libs ? (int)strcspn(rt->cuda_libs(), " ") : 0, rt->cuda_libs ? rt->cuda_libs() : "");
done:
    if (outs) interp_free_outputs(outs, nout);
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    free(src);
    graph_free(g);
    return rc;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *t) { size_t a = strlen(s), b = strlen(t); return a >= b && !strcmp(s + a - b, t); }

/* The entries of root not starting with '.' (ending in `suffix` when given), sorted; NULL with a
 * message when root cannot be opened. The caller frees each name and the array. */
static char **list_dir(const char *root, const char *suffix, int *n) {
    DIR *d = opendir(root);
    if (!d) { fprintf(stderr, "cudabench: cannot open %s\n", root); return NULL; }
    char **names = NULL;
    int cap = 0;
    struct dirent *de;
    *n = 0;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' && (!suffix || ends_with(de->d_name, suffix))) {
            if (*n == cap) { cap = cap ? 2 * cap : 64; names = realloc(names, sizeof *names * (size_t)cap); }
            names[(*n)++] = strdup(de->d_name);
        }
    closedir(d);
    if (*n) qsort(names, *n, sizeof *names, cmp_name);
    return names ? names : calloc(1, sizeof *names);
}

static int cases(MiCtx *ctx, const char *root, bool compile_only) {
    int n;
    char **names = list_dir(root, NULL, &n);
    if (!names) return 1;
    int ok = 0, bad = 0, skip = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 8; k++) {
            char dir[1100], p[1200];
            snprintf(dir, sizeof dir, "%s/%s/graph%d", root, names[i], k);
            snprintf(p, sizeof p, "%s/post_post_grad.py", dir);
            struct stat st;
            if (stat(p, &st) != 0) continue;
            char why[1500] = "";
            double worst = 0;
            int rc = run_case(ctx, dir, compile_only, why, sizeof why, &worst);
            const char *res = rc > 0 ? "ok" : rc == 0 ? "skip" : "FAIL";
            if (rc > 0) ok++; else if (rc == 0) skip++; else bad++;
            for (char *c = why; *c; c++) if (*c == '\n' || *c == '"') *c = ' ';
            printf("%-18s graph%d  %-4s %s\n", names[i], k, res, why);
            if (rc < 0 && getenv("MI_DUMP_FAILED")) {   /* the CUDA source of a failing graph */
                char p2[1200];
                snprintf(p2, sizeof p2, "%s/post_post_grad.py", dir);
                Graph *g = graph_load_file(ctx, p2);
                int nk2 = 0;
                char w2[200];
                char *src = g ? cuda_source(ctx, g, &nk2, w2, sizeof w2) : NULL;
                if (src) printf("%s\n", src);
                free(src);
                graph_free(g);
            }
            fflush(stdout);
            if (json) fprintf(json, "{\"case\": \"%s\", \"graph\": %d, \"result\": \"%s\", \"max_abs\": %g, \"detail\": \"%s\"}\n",
                              names[i], k, res, worst, why);
        }
        free(names[i]);
    }
    free(names);
    printf("cases: %d ok, %d failed, %d skipped (ops not covered)\n", ok, bad, skip);
    return bad ? 1 : 0;
}

static double io_bytes(MiCtx *ctx, const Graph *g) {
    double total = 0;
    for (int i = 0; i < graph_num_placeholders(g); i++) {
        const Node *p = graph_placeholder(g, i);
        if (p->is_sym || !p->has_meta) continue;
        int64_t n = 0;
        if (sym_eval(ctx, meta_numel(ctx->sym, &p->meta), NULL, 0, &n) == 0) total += (double)n * dtype_size(p->meta.dtype);
    }
    const Node *o = graph_output(g);
    const Value *vals = o ? o->args : NULL;
    int nv = o ? o->nargs : 0;
    if (nv == 1 && (vals[0].kind == V_TUPLE || vals[0].kind == V_LIST)) { nv = vals[0].list.n; vals = vals[0].list.items; }
    for (int j = 0; j < nv; j++) {
        if (vals[j].kind != V_NODE || !vals[j].node->has_meta) continue;
        int64_t n = 0;
        if (sym_eval(ctx, meta_numel(ctx->sym, &vals[j].node->meta), NULL, 0, &n) == 0)
            total += (double)n * dtype_size(vals[j].node->meta.dtype);
    }
    mi_clear_err(ctx);
    return total;
}

static int bench_one(MiCtx *ctx, const char *dirp, const char *name, int reps, bool check) {
    char path[1200], why[1500] = "", e[1200];
    snprintf(path, sizeof path, "%s/%s.py", dirp, name);
    Graph *g0 = graph_load_file(ctx, path);
    if (!g0) { printf("%-18s FAIL load: %s\n", name, mi_err_str(ctx, e, sizeof e)); return -1; }
    ops_resolve_graph(g0);
    PassManager *pm = pm_new(ctx, g0, NULL, 0);
    Device dev = {DEV_CUDA, 0};
    if (pm) pm_set_device(pm, dev);
    if (!pm || pm_run_all(pm) < 0) { printf("%-18s FAIL passes: %s\n", name, mi_err_str(ctx, e, sizeof e)); pm_free(pm); graph_free(g0); return -1; }
    Graph *g = graph_clone(pm_graph(pm));
    pm_free(pm);
    graph_free(g0);
    int nk = 0, rc = -1, nin = 0;
    RtModule *rt = NULL;
    IValue *in = NULL;
    double med = 0, best = 0, bytes = io_bytes(ctx, g);
    const char *chk = "not checked";
    char *src = cuda_source(ctx, g, &nk, why, sizeof why);
    if (!src) goto done;
    rt = rt_compile(ctx, src);
    if (!rt) { snprintf(why, sizeof why, "compile: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    if (interp_random_inputs(ctx, g, NULL, 0, &in, &nin) < 0) { snprintf(why, sizeof why, "inputs: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    if (check) {
        StrBuf rep;
        sb_init(&rep);
        int ok = rt_check(ctx, rt, g, in, nin, 1e-3, 1e-4, &rep);
        chk = ok == 1 ? "matches interpreter" : "MISMATCH vs interpreter";
        if (ok != 1) printf("%s", rep.s ? rep.s : mi_err_str(ctx, e, sizeof e));
        sb_free(&rep);
        if (ok < 0) { snprintf(why, sizeof why, "%s", chk); goto done; }   /* a mismatch is still timed */
    }
    if (rt_time(ctx, rt, g, in, nin, 5, reps, &med, &best) < 0) { snprintf(why, sizeof why, "time: %s", mi_err_str(ctx, e, sizeof e)); goto done; }
    rc = 0;
    printf("%-18s %2d kernels  median %8.4f ms  min %8.4f ms  %8.1f MB  %7.1f GB/s  %s\n", name, nk, med * 1e3, best * 1e3,
           bytes / 1e6, bytes / med * 1e-9, chk);
    if (rt->cuda_libs) printf("%-18s GEMM: %s\n", "", rt->cuda_libs());   /* mi_cuda_libs: cuBLAS, or why not */
    if (json) fprintf(json, "{\"workload\": \"%s\", \"kernels\": %d, \"median_ms\": %.5f, \"min_ms\": %.5f, \"bytes\": %.0f, \"gbs\": %.1f, \"check\": \"%s\"}\n",
                      name, nk, med * 1e3, best * 1e3, bytes, bytes / med * 1e-9, chk);
done:
    if (rc < 0) {
        for (char *c = why; *c; c++) if (*c == '\n' || *c == '"') *c = ' ';
        printf("%-18s FAIL %s\n", name, why);
        if (json) fprintf(json, "{\"workload\": \"%s\", \"error\": \"%s\"}\n", name, why);
    }
    fflush(stdout);
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    free(src);
    graph_free(g);
    return rc;
}

/* One graph (taken: freed here) through the passes for device cuda, CUDA code, nvcc, and a
 * comparison with the reference interpreter on random inputs, an exported graph's file dir/label
 * (dir NULL: none) those of cc_export_inputs (a backward's saved tensors from its forward) (rt_check,
 * rtol 1e-3 atol 1e-4, else the numerics verdict). 1 ok, 0 skipped (ops not lowered / not
 * supported), -1 failed; a failing graph is printed as FX text under `label`. */
static int check_graph(MiCtx *ctx, Graph *g, const char *dir, const char *label, bool compile_only, char *why, size_t wn) {
    char e[1200];
    IValue *in = NULL;
    int nin = 0, rc = -1, nk = 0;
    Graph *h = NULL;
    RtModule *rt = NULL;
    char *src = NULL;
    bool from_fw = false;
    if ((dir ? cc_export_inputs(ctx, g, dir, label, &in, &nin, &from_fw) : interp_random_inputs(ctx, g, NULL, 0, &in, &nin)) < 0) { snprintf(why, wn, "inputs: %s", mi_err_str(ctx, e, sizeof e)); rc = 0; goto done; }
    PassManager *pm = pm_new(ctx, g, in, nin);
    Device dev = {DEV_CUDA, 0};
    if (pm) pm_set_device(pm, dev);
    if (!pm || pm_run_all(pm) < 0) { snprintf(why, wn, "passes: %s", mi_err_str(ctx, e, sizeof e)); pm_free(pm); rc = 0; goto done; }
    h = graph_clone(pm_graph(pm));
    pm_free(pm);
    if (!lowering_supported(h, why, wn)) { rc = 0; goto done; }
    src = cuda_source(ctx, h, &nk, why, wn);
    if (!src) { if (strstr(why, "not supported")) rc = 0; goto done; }
    rt = rt_compile(ctx, src);
    if (!rt) {
        mi_err_str(ctx, e, sizeof e);
        if (compile_only && strstr(e, "no CUDA GPU available")) { snprintf(why, wn, "%d kernels, nvcc ok", nk); rc = 1; }
        else snprintf(why, wn, "compile: %s", e);
        goto done;
    }
    if (compile_only) { snprintf(why, wn, "%d kernels, nvcc ok", nk); rc = 1; goto done; }
    StrBuf r;
    sb_init(&r);
    int ok = rt_check(ctx, rt, h, in, nin, 1e-3, 1e-4, &r);
    if (ok == 1) { snprintf(why, wn, "%d kernels, match the interpreter%s", nk, from_fw ? " (saved tensors from the forward)" : ""); rc = 1; }
    else snprintf(why, wn, "%s", ok < 0 ? mi_err_str(ctx, e, sizeof e) : r.s ? r.s : "mismatch");
    sb_free(&r);
done:
    if (rc < 0) {
        char *fx = fx_print(h ? h : g, false);
        printf("---- %s fails: %s\n%s\n", label, why, fx ? fx : "");
        if (src && getenv("MI_DUMP_FAILED")) printf("%s\n", src);
        free(fx);
    }
    if (in) interp_free_outputs(in, nin);
    rt_free(rt);
    free(src);
    graph_free(h);
    graph_free(g);
    return rc;
}

/* 1 ok, 0 skipped, -1 failed */
static int random_one(MiCtx *ctx, uint64_t seed, bool compile_only, char *why, size_t wn) {
    char e[1200], label[64];
    Graph *g = graph_random(ctx, seed, NULL);
    if (!g) { snprintf(why, wn, "graph_random: %s", mi_err_str(ctx, e, sizeof e)); return -1; }
    snprintf(label, sizeof label, "seed %llu", (unsigned long long)seed);
    return check_graph(ctx, g, NULL, label, compile_only, why, wn);
}

/* cudabench graphs DIR: every DIR/*.py (FX text; tests/tools/export_log_graphs.sh writes the
 * graphs of real torch.compile logs so) through check_graph; with --shard K/N only the files
 * whose sorted position is K mod N, so N processes share a directory. */
static int graphs(MiCtx *ctx, const char *root, bool compile_only, int shard, int nshards) {
    int n;
    char **names = list_dir(root, ".py", &n);
    if (!names) return 1;
    int ok = 0, bad = 0, skip = 0;
    for (int i = 0; i < n; i++) {
        if (nshards > 1 && i % nshards != shard) { free(names[i]); continue; }
        char path[1200], why[1500] = "", e[1200];
        snprintf(path, sizeof path, "%s/%s", root, names[i]);
        Graph *g = graph_load_file(ctx, path);
        int rc;
        if (!g) { snprintf(why, sizeof why, "load: %s", mi_err_str(ctx, e, sizeof e)); rc = -1; }
        else { ops_resolve_graph(g); rc = check_graph(ctx, g, root, names[i], compile_only, why, sizeof why); }
        const char *res = rc > 0 ? "ok" : rc == 0 ? "skip" : "FAIL";
        if (rc > 0) ok++; else if (rc == 0) skip++; else bad++;
        for (char *c = why; *c; c++) if (*c == '\n' || *c == '"') *c = ' ';
        printf("%-48s %-4s %.300s\n", names[i], res, why);
        fflush(stdout);
        if (json) fprintf(json, "{\"graph\": \"%s\", \"result\": \"%s\", \"detail\": \"%.300s\"}\n", names[i], res, why);
        mi_clear_err(ctx);
        free(names[i]);
    }
    free(names);
    printf("graphs: %d ok, %d failed, %d skipped (ops not lowered / not supported)\n", ok, bad, skip);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: cudabench cases ROOT [--compile-only] | graphs DIR [--compile-only] [--shard K/N] | random FIRST_SEED COUNT | bench GRAPHDIR [--reps N] [--only NAME] [--no-check]  [--json FILE]\n");
        return 2;
    }
    bool compile_only = false, check = true;
    int reps = 50, shard = 0, nshards = 1;
    const char *only = NULL;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--compile-only")) compile_only = true;
        else if (!strcmp(argv[i], "--no-check")) check = false;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = fopen(argv[++i], "a");
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc) { if (sscanf(argv[++i], "%d/%d", &shard, &nshards) != 2 || nshards < 1) nshards = 1; }
        else if (!strcmp(argv[1], "random") && i <= 3) continue;   /* FIRST_SEED COUNT */
    }
    MiCtx *ctx = mi_ctx_new();
    ctx->target = MI_DEV_CUDA;
    int rc = 0;
    if (!strcmp(argv[1], "cases")) rc = cases(ctx, argv[2], compile_only);
    else if (!strcmp(argv[1], "graphs")) rc = graphs(ctx, argv[2], compile_only, shard, nshards);
    else if (!strcmp(argv[1], "random") && argc >= 4) {
        uint64_t first = strtoull(argv[2], NULL, 10);
        int count = atoi(argv[3]), ok = 0, bad = 0, skip = 0;
        for (int i = 0; i < count; i++) {
            char why[4000] = "";
            int r = random_one(ctx, first + (uint64_t)i, compile_only, why, sizeof why);
            if (r > 0) ok++; else if (r == 0) skip++; else bad++;
            fflush(stdout);
        }
        printf("random: %d ok, %d failed, %d skipped (ops not lowered / not supported)\n", ok, bad, skip);
        if (json) fprintf(json, "{\"random_first_seed\": %llu, \"count\": %d, \"ok\": %d, \"failed\": %d, \"skipped\": %d}\n",
                          (unsigned long long)first, count, ok, bad, skip);
        rc = bad ? 1 : 0;
    }
    else if (!strcmp(argv[1], "bench")) {
        for (int i = 0; WORKLOADS[i]; i++)
            if (!only || !strcmp(only, WORKLOADS[i]))
                if (bench_one(ctx, argv[2], WORKLOADS[i], reps, check) < 0) rc = 1;
    } else { fprintf(stderr, "cudabench: unknown mode '%s'\n", argv[1]); rc = 2; }
    if (json) fclose(json);
    mi_ctx_free(ctx);
    return rc;
}
