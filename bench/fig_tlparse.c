/* fig_tlparse.c — figure 4: tlparse throughput and peak memory on a large TORCH_TRACE log.
 * The log is built at bench time in /dev/shm (else /tmp) by concatenating the real logs (../shared/torch-cases,
 * else tests/fixtures) over and over, shifting frame_id in every envelope so each copy has
 * fresh compile ids (payloads, and so their md5s, are unchanged). tlparse runs in a child
 * process so its peak RSS (getrusage via wait4) is its own; two log sizes show whether memory
 * stays bounded as the log grows. */
#define _GNU_SOURCE
#include "bench.h"
#include "trace.h"
#include "tests/support/big_log.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


int fig_tlparse(BenchOpts *o) {
    long sizes_mb[2] = {o->quick ? 20 : 50, o->quick ? 60 : 200};
    char log[256], outdir[256];
    /* on tmpfs when there is one: the figure measures tlparse, not the disk's inode allocation
     * (the report is hundreds of small HTML files) */
    struct stat shm;
    const char *tmp = stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(log, sizeof log, "%s/minductor-bench-%d.log", tmp, (int)getpid());
    snprintf(outdir, sizeof outdir, "%s/minductor-bench-tlparse-%d", tmp, (int)getpid());
    printf("\nFigure 4: tlparse on concatenated real logs (fresh compile ids)\n");
    printf("%10s %10s %10s %10s %12s %10s\n", "log MB", "seconds", "MB/s", "records", "peak RSS MB", "failures");
    StrBuf j;
    sb_init(&j);
    sb_printf(&j, "{\"figure\": 4, \"name\": \"tlparse throughput\", \"rows\": [");
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        const char *src = NULL;
        int nsrc = 0;
        static const char *const dirs[] = {"../shared/torch-cases", "tests/fixtures/logs", "tests/fixtures", NULL};
        long bytes = big_log_build(log, sizes_mb[k] << 20, dirs, &src, &nsrc);
        if (bytes < 0) {
            printf("n/a (no source logs found under ../shared/torch-cases or tests/fixtures)\n");
            rc = -1;
            break;
        }
        TlparseChild r;
        memset(&r, 0, sizeof r);
        long rss = 0;
        if (tlparse_in_child(log, outdir, &r, &rss) != 0 || !r.ok) {
            printf("%10.1f  n/a (%s)\n", bytes / 1048576.0, r.err[0] ? r.err : "fork failed");
            sb_printf(&j, "%s{\"log_bytes\": %ld, \"note\": ", k ? ", " : "", bytes);
            json_str(&j, r.err);
            sb_put(&j, "}");
        } else {
            double mbs = bytes / 1048576.0 / r.seconds;
            printf("%10.1f %10.3f %10.1f %10ld %12.1f %10ld\n", bytes / 1048576.0, r.seconds, mbs, r.records,
                   rss / 1024.0, r.failures);
            sb_printf(&j, "%s{\"log_bytes\": %ld, \"source_logs\": %d, \"seconds\": %.4f, \"mb_per_s\": %.1f, "
                          "\"records\": %ld, \"compiles\": %ld, \"failures\": %ld, \"peak_rss_kb\": %ld}",
                      k ? ", " : "", bytes, nsrc, r.seconds, mbs, r.records, r.compiles, r.failures, rss);
        }
        if (k == 0) printf("(built from %d logs under %s)\n", nsrc, src);
        unlink(log);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", outdir);
        if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", outdir);
    }
    sb_put(&j, "]}");
    json_emit(o, &j);
    return rc;
}
