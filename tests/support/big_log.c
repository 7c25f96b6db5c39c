/* big_log.c — large logs from real ones and tlparse in a child process (see big_log.h). */
#define _GNU_SOURCE
#include "big_log.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct LogList { char **paths; int n, cap; } LogList;

static void find_logs(const char *dir, LogList *l, int depth) {
    DIR *d = opendir(dir);
    if (!d || depth > 4) {
        if (d) closedir(d);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        /* per-rank logs stay out: one log holding two ranks is what tlparse reports as
         * interleaved ranks (other_rank problems), not what a single-rank job writes */
        if (S_ISDIR(st.st_mode)) {
            if (strcmp(e->d_name, "multirank") != 0) find_logs(p, l, depth + 1);
        }
        else if (strlen(e->d_name) > 4 && strcmp(e->d_name + strlen(e->d_name) - 4, ".log") == 0) {
            if (l->n == l->cap) {
                l->cap = l->cap ? 2 * l->cap : 64;
                l->paths = mi_xrealloc(l->paths, (size_t)l->cap * sizeof *l->paths);
            }
            l->paths[l->n++] = mi_xstrdup(p);
        }
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Append `src` to out with frame ids shifted by `shift`. Returns bytes written. */
static long append_shifted(FILE *out, const char *src, size_t len, long shift) {
    long written = 0;
    const char *p = src, *end = src + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl + 1 : end;
        const char *fid = NULL;
        if (*p != '\t') {
            const char *key = "\"frame_id\": ";
            fid = memmem(p, (size_t)(le - p), key, strlen(key));
            if (fid) fid += strlen(key);
        }
        if (fid && fid < le && *fid >= '0' && *fid <= '9') {
            char *num_end;
            long v = strtol(fid, &num_end, 10);
            fwrite(p, 1, (size_t)(fid - p), out);
            written += fid - p;
            written += fprintf(out, "%ld", v + shift);
            fwrite(num_end, 1, (size_t)(le - num_end), out);
            written += le - num_end;
        } else {
            fwrite(p, 1, (size_t)(le - p), out);
            written += le - p;
        }
        p = le;
    }
    return written;
}

long big_log_build(const char *path, long target, const char *const *dirs, const char **src_dir, int *nsrc) {
    LogList l = {0};
    for (int i = 0; dirs[i] && l.n == 0; i++) {
        find_logs(dirs[i], &l, 0);
        *src_dir = dirs[i];
    }
    *nsrc = l.n;
    if (l.n == 0) return -1;
    qsort(l.paths, (size_t)l.n, sizeof *l.paths, cmp_str);
    char **texts = mi_xcalloc((size_t)l.n, sizeof *texts);
    size_t *lens = mi_xcalloc((size_t)l.n, sizeof *lens);
    MiCtx *ctx = mi_ctx_new();
    for (int i = 0; i < l.n; i++) texts[i] = mi_read_file(ctx, l.paths[i], &lens[i]);
    FILE *out = fopen(path, "wb");
    long total = 0;
    if (out) {
        for (long copy = 0; total < target; copy++)
            for (int i = 0; i < l.n && total < target; i++)
                if (texts[i]) total += append_shifted(out, texts[i], lens[i], (copy * l.n + i) * 100);
        if (fclose(out) != 0) total = -1;
    } else {
        total = -1;
    }
    for (int i = 0; i < l.n; i++) { free(texts[i]); free(l.paths[i]); }
    free(texts); free(lens); free(l.paths);
    mi_ctx_free(ctx);
    return total;
}


int tlparse_in_child(const char *log, const char *outdir, TlparseChild *res, long *maxrss_kb) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fd[0]);
        TlparseChild r = {0};
        MiCtx *ctx = mi_ctx_new();
        TlparseOptions opt = {.no_artifact_files = true};
        TlparseSummary sum;
        memset(&sum, 0, sizeof sum);
        uint64_t t0 = mi_now_ns();
        if (tlparse_run(ctx, log, outdir, &opt, &sum) == 0) {
            r.ok = 1;
            r.seconds = (double)(mi_now_ns() - t0) * 1e-9;
            r.records = sum.stats.records;
            r.failures = trace_stats_failures(&sum.stats);
            r.compiles = sum.n_compiles;
        } else {
            mi_err_str(ctx, r.err, sizeof r.err);
        }
        mi_ctx_free(ctx);
        ssize_t w = write(fd[1], &r, sizeof r);
        (void)w;
        _exit(0);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], res, sizeof *res);
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    *maxrss_kb = ru.ru_maxrss;
    if (got != (ssize_t)sizeof *res) {
        snprintf(res->err, sizeof res->err, "tlparse child died (status %d)", status);
        res->ok = 0;
    }
    return 0;
}
