/* touch.c — `minibench touch huge|small [MB] [REPS]`: what a fresh output costs before any
 * kernel math, the first touch of its pages. Each rep takes MB megabytes from the runtime's
 * allocator (core/base/mem.c; `small` turns its huge pages off, as MINDUCTOR_HUGEPAGES=0),
 * writes every float once from the OpenMP team (static schedule, as a pointwise kernel does),
 * and frees it; it prints every rep, so the first call of a fresh process (where the kernel
 * may have to compact memory to find 2 MiB pages) shows apart from the later ones. Example:
 * `minibench touch huge 64 8` on the dev VM, 2 threads: rep 0 ... ms, rep 1 ... ms. */
#include "bench.h"
#include "base/mem.h"

#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

/* The kernel's THP modes ("[madvise]" of /sys/kernel/mm/transparent_hugepage/enabled). */
static void thp_line(const char *name, char *out, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "/sys/kernel/mm/transparent_hugepage/%s", name);
    FILE *f = fopen(path, "r");
    out[0] = 0;
    if (!f || !fgets(out, (int)n, f)) snprintf(out, n, "(none)\n");
    if (f) fclose(f);
}

int touch_main(int argc, char **argv) {
    const char *mode = argc > 2 ? argv[2] : "huge";
    size_t mb = argc > 3 ? (size_t)atol(argv[3]) : 64;
    int reps = argc > 4 ? atoi(argv[4]) : 8;
    bool huge = strcmp(mode, "small") != 0;
    mi_mem_set_huge(huge, 0);
    char en[128], df[128];
    thp_line("enabled", en, sizeof en);
    thp_line("defrag", df, sizeof df);
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    printf("touch %s: %zu MB, %d threads; THP enabled %s     defrag %s", mode, mb, threads, en, df);
    size_t n = mb << 18;   /* floats */
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = mi_now_ns();
        float *p = mi_mem_alloc(n * sizeof(float), false);
        if (!p) { printf("out of memory\n"); return 1; }
        int kind = mi_mem_kind(p);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) p[i] = 1.0f;
        uint64_t t1 = mi_now_ns();
        mi_mem_free(p);
        uint64_t t2 = mi_now_ns();
        printf("  rep %d: %s block, alloc + first touch %.2f ms, free %.2f ms\n", r,
               kind == MI_MEM_HUGE ? "huge" : "malloc", (double)(t1 - t0) * 1e-6, (double)(t2 - t1) * 1e-6);
    }
    return 0;
}
