/* stream.c — the machine's memory bandwidth, measured in the same run as the kernels so the
 * "% of bandwidth" column compares like with like: STREAM-style copy (c = a) and triad
 * (a = b + s*c) over float arrays far larger than the caches, OpenMP-parallel, median of the
 * repeats. Bytes counted as STREAM does (no write-allocate traffic): copy 8 B/elem, triad 12.
 * BenchTriad measures the triad again beside each workload of figure 1 (a shared machine's
 * bandwidth changes from one minute to the next: see bench_triad_new). */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double stream_copy(float *restrict c, const float *restrict a, long n) {
    uint64_t t0 = mi_now_ns();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) c[i] = a[i];
    return (double)(mi_now_ns() - t0) * 1e-9;
}

static double stream_triad(float *restrict a, const float *restrict b, const float *restrict c, float s, long n) {
    uint64_t t0 = mi_now_ns();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    return (double)(mi_now_ns() - t0) * 1e-9;
}

int fig_stream(BenchOpts *o) {
#ifdef _OPENMP
    if (o->threads > 0) omp_set_num_threads(o->threads);
#endif
    long n = o->quick ? (1L << 23) : (1L << 25);   /* 32 MB / 128 MB per array */
    float *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
    if (!a || !b || !c) {
        free(a); free(b); free(c);
        printf("STREAM: n/a (cannot allocate %ld MB)\n", 3 * n * 4 >> 20);
        return -1;
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.0f; }
    int reps = o->reps < 5 ? 5 : o->reps;
    double tc[64], tt[64];
    if (reps > 64) reps = 64;
    stream_copy(c, a, n);          /* warm-up */
    stream_triad(a, b, c, 3.0f, n);
    for (int r = 0; r < reps; r++) {
        tc[r] = stream_copy(c, a, n);
        tt[r] = stream_triad(a, b, c, 3.0f, n);
    }
    double mc = bench_median(tc, reps), mt = bench_median(tt, reps);
    double copy_gbs = 8.0 * n / mc * 1e-9, triad_gbs = 12.0 * n / mt * 1e-9;
    volatile float sink = a[n / 2] + c[n / 3];
    (void)sink;
    free(a); free(b); free(c);
    o->stream_gbs = copy_gbs > triad_gbs ? copy_gbs : triad_gbs;
    int threads = 1;
#ifdef _OPENMP
    threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#endif
    printf("STREAM (%ld MB arrays, %d threads): copy %.1f GB/s, triad %.1f GB/s\n", n * 4 >> 20, threads,
           copy_gbs, triad_gbs);
    StrBuf j;
    sb_init(&j);
    sb_printf(&j, "{\"figure\": \"stream\", \"threads\": %d, \"array_mb\": %ld, \"copy_gbs\": %.2f, "
                  "\"triad_gbs\": %.2f, \"copy_s\": %.6f, \"triad_s\": %.6f}", threads, n * 4 >> 20,
              copy_gbs, triad_gbs, mc, mt);
    json_emit(o, &j);
    return 0;
}

/* The triad beside a kernel's timing. On the 2-core machine other agents share, the bandwidth a
 * kernel can reach changes within seconds (a build on the other core halved it: triad 42.1 GB/s
 * in one run, 22.4 GB/s in the next): a kernel timed while it was 42 and one timed while it was
 * 22 were both held against the figure of the run's first second (pointwise_chain 78% in the
 * quiet run, 118% in the loaded one; its unfused copy, the same loop, 102% a second later).
 * Measured right before and right after the kernel's timed calls, the triad sees what the
 * kernel saw. */
struct BenchTriad { float *a, *b, *c; long n; };

BenchTriad *bench_triad_new(const BenchOpts *o) {
    BenchTriad *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n = o->quick ? (1L << 23) : (1L << 25);
    t->a = malloc((size_t)t->n * sizeof(float));
    t->b = malloc((size_t)t->n * sizeof(float));
    t->c = malloc((size_t)t->n * sizeof(float));
    if (!t->a || !t->b || !t->c) { bench_triad_free(t); return NULL; }
    float *a = t->a, *b = t->b, *c = t->c;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < t->n; i++) { a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.0f; }
    return t;
}

void bench_triad_sample(BenchTriad *t, double *v, int *nv, int reps) {
    if (!t) return;
    stream_triad(t->a, t->b, t->c, 3.0f, t->n);   /* its arrays back in the TLB / page tables */
    for (int r = 0; r < reps && *nv < 64; r++) v[(*nv)++] = stream_triad(t->a, t->b, t->c, 3.0f, t->n);
}

double bench_triad_gbs(const BenchTriad *t, double *v, int nv) {
    return t && nv > 0 ? 12.0 * t->n / bench_median(v, nv) * 1e-9 : NAN;
}

void bench_triad_free(BenchTriad *t) {
    if (!t) return;
    free(t->a); free(t->b); free(t->c);
    free(t);
}
