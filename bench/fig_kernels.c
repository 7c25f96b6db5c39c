/* fig_kernels.c — figures 1 and 2: per workload of bench/graphs/, the compiled module's kernel
 * time (median of reps after warm-up), bytes moved and GB/s against the STREAM bandwidth of
 * the same run; its speed-up over the reference interpreter and over the same graph compiled
 * with fusion off; and a numerical check of the module against the interpreter. Workloads of
 * more than one kernel also get the module's per-kernel profile (rt_profile: which kernel or
 * extern call takes the time), printed after the table and kept in the JSON row. */
#include "bench.h"
#include "ops/interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const WORKLOADS[] = {
    "pointwise_chain", "softmax", "ln_gelu", "reductions", "seed_example", "mlp", "transformer_block",
    "llama_block", "cnn", NULL};

/* Bytes of every graph input and output tensor: the least any implementation must move. */
static double io_bytes(MiCtx *ctx, const Graph *g) {
    double total = 0;
    for (int i = 0; i < graph_num_placeholders(g); i++) {
        const Node *p = graph_placeholder(g, i);
        if (p->is_sym || !p->has_meta) continue;
        int64_t n = 0;
        if (sym_eval(ctx, meta_numel(ctx->sym, &p->meta), NULL, 0, &n) == 0)
            total += (double)n * dtype_size(p->meta.dtype);
    }
    const Node *o = graph_output(g);
    const Value *vals = o ? o->args : NULL;
    int nv = o ? o->nargs : 0;
    if (nv == 1 && (vals[0].kind == V_TUPLE || vals[0].kind == V_LIST)) {
        nv = vals[0].list.n;
        vals = vals[0].list.items;
    }
    for (int j = 0; j < nv; j++) {
        if (vals[j].kind != V_NODE || !vals[j].node->has_meta) continue;
        int64_t n = 0;
        if (sym_eval(ctx, meta_numel(ctx->sym, &vals[j].node->meta), NULL, 0, &n) == 0)
            total += (double)n * dtype_size(vals[j].node->meta.dtype);
    }
    mi_clear_err(ctx);
    return total;
}

typedef struct Row {
    const char *name;
    int nkernels;
    double t_fused, t_nofuse, t_interp, bytes, max_abs;
    double triad_gbs;        /* the STREAM triad measured right before and after the fused timing */
    bool bytes_exact, check_ok, checked;
    bool nofuse_same;        /* fusion off generated the very same C: one module timed twice */
    BenchSame same;          /* the check (fp64_check.c); same.fp64: decided by the float64 RMSE */
    char why[300];
    int nprof;               /* per-kernel profile (rt_profile), 0 when not taken */
    char prof_names[64][96];
    double prof_ms[64], prof_call_ms;
} Row;

static void free_inputs(IValue *in, int n) {
    if (in) interp_free_outputs(in, n);
}

static int run_workload(BenchOpts *o, MiCtx *ctx, BenchTriad *bt, const char *name, Row *r) {
    memset(r, 0, sizeof *r);
    r->name = name;
    r->t_fused = r->t_nofuse = r->t_interp = r->triad_gbs = NAN;
    char path[600], err[1200];
    snprintf(path, sizeof path, "%s/%s.py", o->graphs_dir, name);
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    if (!text) {
        snprintf(r->why, sizeof r->why, "n/a (%s)", mi_err_str(ctx, err, sizeof err));
        return -1;
    }
    Graph *g = fx_parse(ctx, text, len, path, 1);
    if (!g) {
        snprintf(r->why, sizeof r->why, "n/a (parse: %s)", mi_err_str(ctx, err, sizeof err));
        free(text);
        return -1;
    }
    ops_resolve_graph(g);
    r->bytes = io_bytes(ctx, g);
    IValue *in = NULL;
    int nin = 0;
    if (interp_random_inputs(ctx, g, NULL, 0, &in, &nin) != 0) {
        snprintf(r->why, sizeof r->why, "n/a (inputs: %s)", mi_err_str(ctx, err, sizeof err));
        graph_free(g);
        free(text);
        return -1;
    }

    /* the reference interpreter, once (it is the slow baseline) */
    IValue *ref = NULL;
    int nref = 0;
    if (!o->no_interp) {
        uint64_t t0 = mi_now_ns();
        if (interp_run(ctx, g, in, nin, &ref, &nref) == 0) r->t_interp = (double)(mi_now_ns() - t0) * 1e-9;
        else snprintf(r->why, sizeof r->why, "interp: %s", mi_err_str(ctx, err, sizeof err));
    }

    /* fused */
    Compiled c;
    ctx->fusion = true;
    if (pipe_compile(ctx, text, len, path, PIPE_ALL, &c, r->why, sizeof r->why) == 0) {
        r->nkernels = c.nkernels;
        if (c.bytes_moved > 0) { r->bytes = c.bytes_moved; r->bytes_exact = true; }
        double mn, tv[64];
        int ntv = 0;
        bench_triad_sample(bt, tv, &ntv, 3);
        int trc = rt_time(ctx, c.mod, c.g, in, nin, o->warmup, o->reps, &r->t_fused, &mn);
        bench_triad_sample(bt, tv, &ntv, 3);
        r->triad_gbs = bench_triad_gbs(bt, tv, ntv);
        if (trc != 0) {
            snprintf(r->why, sizeof r->why, "run: %s", mi_err_str(ctx, err, sizeof err));
            r->t_fused = NAN;
        } else if (c.nkernels > 1) {
            RtProfile pf;
            if (rt_profile(ctx, c.mod, c.g, in, nin, 1, o->reps, &pf) == 0) {
                for (int k = 0; k < pf.n && k < 64; k++) {
                    snprintf(r->prof_names[k], sizeof r->prof_names[k], "%s", pf.names[k]);
                    r->prof_ms[k] = pf.ms[k];
                }
                r->nprof = pf.n < 64 ? pf.n : 64;
                r->prof_call_ms = pf.call_ms;
                rt_profile_free(&pf);
            } else mi_clear_err(ctx);
        }
        if (!isnan(r->t_fused) && ref) {
            IValue *outs = NULL;
            int nouts = 0;
            if (rt_run(ctx, c.mod, c.g, in, nin, &outs, &nouts, NULL) == 0) {
                r->checked = true;
                bench_same(ctx, g, in, nin, ref, outs, nouts < nref ? nouts : nref, 1e-3, 1e-4, &r->same);
                r->check_ok = nouts == nref && r->same.ok;
                r->max_abs = r->same.max_abs;
                interp_free_outputs(outs, nouts);
            }
        }
        char *fused_src = c.c_source ? strdup(c.c_source) : NULL;
        pipe_free(&c);
        /* fusion off */
        ctx->fusion = false;
        char why2[300];
        if (pipe_compile(ctx, text, len, path, PIPE_ALL, &c, why2, sizeof why2) == 0) {
            double mn2;
            r->nofuse_same = fused_src && c.c_source && !strcmp(fused_src, c.c_source);
            if (rt_time(ctx, c.mod, c.g, in, nin, o->warmup, o->reps, &r->t_nofuse, &mn2) != 0) r->t_nofuse = NAN;
            pipe_free(&c);
        }
        free(fused_src);
        ctx->fusion = true;
    }
    if (ref) interp_free_outputs(ref, nref);
    free_inputs(in, nin);
    graph_free(g);
    free(text);
    return 0;
}

static void fmt_ms(char *buf, size_t n, double s) {
    if (isnan(s)) snprintf(buf, n, "n/a");
    else snprintf(buf, n, "%.3f", s * 1e3);
}

static void json_num(StrBuf *b, const char *key, double v) {
    if (isnan(v) || isinf(v)) sb_printf(b, ", \"%s\": null", key);
    else sb_printf(b, ", \"%s\": %.6g", key, v);
}

int fig_kernels(BenchOpts *o) {
    MiCtx *ctx = mi_ctx_new();
    ctx->threads = o->threads;
    ctx->time_fresh_outputs = o->fresh_outputs;
    ctx->flush_denormal = !o->keep_denormals;
    int threads = 1;
#ifdef _OPENMP
    threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#endif
    Row rows[16];
    int nrows = 0;
    BenchTriad *bt = bench_triad_new(o);
    for (int i = 0; WORKLOADS[i]; i++) {
        if (o->workload && strcmp(o->workload, WORKLOADS[i]) != 0) continue;
        run_workload(o, ctx, bt, WORKLOADS[i], &rows[nrows++]);
        fflush(stdout);
    }
    bench_triad_free(bt);
    printf("\nFigure 1+2: compiled kernels (%d threads, median of %d after %d warm-up; STREAM %.1f GB/s)\n",
           threads, o->reps, o->warmup, o->stream_gbs);
    printf("%%BW: against the run's STREAM above; %%triad: against the triad measured right before and after\n"
           "the workload's timed calls (the triad column), what the machine gave while the kernel ran\n");
    printf("%-18s %4s %10s %9s %7s %6s %6s %6s | %10s %8s | %10s %8s | %s\n", "workload", "kern", "time ms", "MB moved",
           "GB/s", "%BW", "triad", "%triad", "interp ms", "x interp", "nofuse ms", "x fusion", "check");
    StrBuf j1, j2;
    sb_init(&j1);
    sb_init(&j2);
    sb_printf(&j1, "{\"figure\": 1, \"name\": \"kernel time and bandwidth\", \"threads\": %d, \"reps\": %d, "
                   "\"stream_gbs\": %.2f, \"rows\": [", threads, o->reps, o->stream_gbs);
    sb_printf(&j2, "{\"figure\": 2, \"name\": \"speed-up over interpreter and over fusion off\", \"threads\": %d, "
                   "\"rows\": [", threads);
    for (int i = 0; i < nrows; i++) {
        Row *r = &rows[i];
        double gbs = isnan(r->t_fused) ? NAN : r->bytes / r->t_fused * 1e-9;
        double pct = o->stream_gbs > 0 ? 100.0 * gbs / o->stream_gbs : NAN;
        double pct_t = r->triad_gbs > 0 ? 100.0 * gbs / r->triad_gbs : NAN;
        double xi = r->t_interp / r->t_fused, xf = r->t_nofuse / r->t_fused;
        char a[32], b[32], c[32], kern[16], sg[16], sp[16], sxi[16], sxf[16], st[16], spt[16];
        fmt_ms(a, sizeof a, r->t_fused);
        fmt_ms(b, sizeof b, r->t_interp);
        fmt_ms(c, sizeof c, r->t_nofuse);
        snprintf(kern, sizeof kern, r->nkernels ? "%d" : "?", r->nkernels);
        snprintf(sg, sizeof sg, isnan(gbs) ? "n/a" : "%.1f", gbs);
        snprintf(sp, sizeof sp, isnan(pct) ? "n/a" : "%.0f%%", pct);
        snprintf(st, sizeof st, isnan(r->triad_gbs) ? "n/a" : "%.1f", r->triad_gbs);
        snprintf(spt, sizeof spt, isnan(pct_t) ? "n/a" : "%.0f%%", pct_t);
        snprintf(sxi, sizeof sxi, isnan(xi) ? "n/a" : "%.1fx", xi);
        snprintf(sxf, sizeof sxf, isnan(xf) ? "n/a" : "%.2fx", xf);
        char check[120];
        if (r->checked && r->same.fp64)   /* rounding (ok) or not, by the float64 RMSEs */
            snprintf(check, sizeof check, "%s (max abs %.1e; fp64 rmse %.1e vs interp %.1e)", r->check_ok ? "ok" : "MISMATCH",
                     r->max_abs, r->same.res_rmse, r->same.ref_rmse);
        else if (r->checked) snprintf(check, sizeof check, "%s (max abs %.1e)", r->check_ok ? "ok" : "MISMATCH", r->max_abs);
        else snprintf(check, sizeof check, "-");
        printf("%-18s %4s %10s %8.1f%s %7s %6s %6s %6s | %10s %8s | %10s %8s | %s\n", r->name, kern, a, r->bytes / 1e6,
               r->bytes_exact ? " " : "*", sg, sp, st, spt, b, sxi, c, sxf, check);
        if (r->why[0]) printf("    %s\n", r->why);
        if (r->nofuse_same)   /* e.g. pointwise_chain: lowering inlines the whole chain into one buffer */
            printf("    fusion off generates the same C: 'nofuse' times the same module again (x fusion is the machine's noise)\n");
        sb_printf(&j1, "%s{\"workload\": ", i ? ", " : "");
        json_str(&j1, r->name);
        sb_printf(&j1, ", \"kernels\": %d", r->nkernels);
        json_num(&j1, "time_s", r->t_fused);
        json_num(&j1, "bytes", r->bytes);
        sb_printf(&j1, ", \"bytes_exact\": %s", r->bytes_exact ? "true" : "false");
        json_num(&j1, "gbs", gbs);
        json_num(&j1, "pct_of_stream", pct);
        json_num(&j1, "triad_beside_gbs", r->triad_gbs);
        json_num(&j1, "pct_of_triad_beside", pct_t);
        sb_printf(&j1, ", \"checked\": %s, \"check_ok\": %s", r->checked ? "true" : "false", r->check_ok ? "true" : "false");
        json_num(&j1, "max_abs", r->max_abs);
        if (r->same.fp64) {
            json_num(&j1, "fp64_rmse", r->same.res_rmse);
            json_num(&j1, "fp64_ref_rmse", r->same.ref_rmse);
        }
        if (r->nprof) {
            sb_put(&j1, ", \"profile_ms\": [");
            for (int k = 0; k < r->nprof; k++) {
                sb_printf(&j1, "%s{\"kernel\": ", k ? ", " : "");
                json_str(&j1, r->prof_names[k]);
                json_num(&j1, "ms", r->prof_ms[k]);
                sb_put(&j1, "}");
            }
            sb_put(&j1, "]");
            json_num(&j1, "profile_call_ms", r->prof_call_ms);
        }
        sb_put(&j1, ", \"note\": ");
        json_str(&j1, r->why);
        sb_put(&j1, "}");
        sb_printf(&j2, "%s{\"workload\": ", i ? ", " : "");
        json_str(&j2, r->name);
        json_num(&j2, "time_s", r->t_fused);
        json_num(&j2, "interp_s", r->t_interp);
        json_num(&j2, "nofuse_s", r->t_nofuse);
        json_num(&j2, "speedup_interp", xi);
        json_num(&j2, "speedup_fusion", xf);
        sb_printf(&j2, ", \"nofuse_same_source\": %s", r->nofuse_same ? "true" : "false");
        sb_put(&j2, "}");
    }
    for (int i = 0; i < nrows; i++) {   /* where each module's time goes */
        Row *r = &rows[i];
        if (!r->nprof) continue;
        RtProfile pf = {r->nprof, mi_xcalloc((size_t)r->nprof, sizeof(char *)), r->prof_ms, r->prof_call_ms};
        for (int k = 0; k < r->nprof; k++) pf.names[k] = r->prof_names[k];
        StrBuf t;
        sb_init(&t);
        rt_profile_format(&pf, &t);
        printf("\n%s per kernel (median of %d profiled calls):\n%s", r->name, o->reps, t.s);
        sb_free(&t);
        free(pf.names);
    }
    bool any_estimate = false;
    for (int i = 0; i < nrows; i++) any_estimate |= !rows[i].bytes_exact;
    if (any_estimate) printf("(* bytes = graph inputs + outputs only: the schedule was not available)\n");
    sb_put(&j1, "]}");
    sb_put(&j2, "]}");
    json_emit(o, &j1);
    json_emit(o, &j2);
    mi_ctx_free(ctx);
    return 0;
}
