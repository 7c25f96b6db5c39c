/* main.c — minibench: runs the benchmark figures of issue 5 in one process so their ratios
 * hold on a noisy machine, prints a table per figure and appends one JSON line per figure.
 *
 *   minibench [--quick] [--threads N] [--reps N] [--warmup N] [--only FIGURE]
 *             [--workload NAME] [--no-interp] [--fresh-outputs] [--keep-denormals] [--graphs DIR] [--json FILE]
 *   minibench gen NODES [ROWS COLS]      print a synthetic graph (bench/gen_graph.c)
 *   minibench touch huge|small [MB] [REPS]   first touch of a fresh block (bench/touch.c)
 *
 * FIGURE is stream, kernels (figures 1 and 2), pipeline (3) or tlparse (4). Run from the
 * repository root (paths are relative to it). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const char *bench_date(char *buf, size_t n) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void json_str(StrBuf *b, const char *s) {
    sb_putc(b, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { sb_putc(b, '\\'); sb_putc(b, (char)c); }
        else if (c == '\n') sb_put(b, "\\n");
        else if (c == '\t') sb_put(b, "\\t");
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_putc(b, (char)c);
    }
    sb_putc(b, '"');
}

void json_emit(BenchOpts *o, StrBuf *line) {
    if (o->json && line->s) {
        fputs(line->s, o->json);
        fputc('\n', o->json);
        fflush(o->json);
    }
    sb_free(line);
}

static void usage(void) {
    fprintf(stderr, "usage: minibench [--quick] [--threads N] [--reps N] [--warmup N] [--only stream|kernels|pipeline|tlparse]\n"
                    "                 [--workload NAME] [--no-interp] [--fresh-outputs] [--keep-denormals] [--graphs DIR] [--json FILE]\n"
                    "       minibench gen NODES [ROWS COLS]\n"
                    "       minibench touch huge|small [MB] [REPS]\n");
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "gen") == 0) {
        int rows = argc >= 5 ? atoi(argv[3]) : 64, cols = argc >= 5 ? atoi(argv[4]) : 256;
        char *t = gen_graph(atoi(argv[2]), rows, cols);
        fputs(t, stdout);
        free(t);
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "touch") == 0) return touch_main(argc, argv);
    BenchOpts o = {.reps = 10, .warmup = 2, .graphs_dir = "bench/graphs"};
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) o.quick = true;
        else if (!strcmp(a, "--no-interp")) o.no_interp = true;
        else if (!strcmp(a, "--fresh-outputs")) o.fresh_outputs = true;
        else if (!strcmp(a, "--keep-denormals")) o.keep_denormals = true;
        else if (!strcmp(a, "--threads") && v) { o.threads = atoi(v); i++; }
        else if (!strcmp(a, "--reps") && v) { o.reps = atoi(v); i++; }
        else if (!strcmp(a, "--warmup") && v) { o.warmup = atoi(v); i++; }
        else if (!strcmp(a, "--only") && v) { o.only = v; i++; }
        else if (!strcmp(a, "--workload") && v) { o.workload = v; i++; }
        else if (!strcmp(a, "--graphs") && v) { o.graphs_dir = v; i++; }
        else if (!strcmp(a, "--json") && v) { json_path = v; i++; }
        else { usage(); return 2; }
    }
    if (o.reps < 1) o.reps = 1;
    if (json_path) {
        o.json = fopen(json_path, "w");
        if (!o.json) { perror(json_path); return 1; }
    }
#ifdef _OPENMP
    if (o.threads > 0) omp_set_num_threads(o.threads);
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    char date[40];
    struct utsname un;
    uname(&un);
    const char *blas = rt_blas_tune();
    printf("minibench %s on %s %s, %d threads%s; pipeline: %s\nBLAS: %s\n", bench_date(date, sizeof date), un.nodename,
           un.machine, threads, o.quick ? " (quick)" : "", pipe_available(), blas);
    StrBuf j;
    sb_init(&j);
    sb_printf(&j, "{\"figure\": \"run\", \"date\": \"%s\", \"machine\": ", date);
    json_str(&j, un.machine);
    sb_printf(&j, ", \"threads\": %d, \"quick\": %s, \"pipeline\": ", threads, o.quick ? "true" : "false");
    json_str(&j, pipe_available());
    sb_put(&j, ", \"blas\": ");
    json_str(&j, blas);
    sb_put(&j, "}");
    json_emit(&o, &j);

    uint64_t t0 = mi_now_ns();
    const char *only = o.only;
    if (!only || !strcmp(only, "stream") || !strcmp(only, "kernels")) fig_stream(&o);
    if (!only || !strcmp(only, "kernels")) fig_kernels(&o);
    if (!only || !strcmp(only, "pipeline")) fig_pipeline(&o);
    if (!only || !strcmp(only, "tlparse")) fig_tlparse(&o);
    printf("\nminibench done in %.1f s\n", (double)(mi_now_ns() - t0) * 1e-9);
    if (o.json) fclose(o.json);
    return 0;
}
