/* test_tlparse_memory.c — tlparse's memory stays flat as the log grows (issue #20 item 3):
 * logs of 4 MB and 48 MB are made from the real logs in tests/fixtures/logs (fresh compile
 * ids in every copy, tests/support/big_log.c), tlparse runs on each in a child process, and
 * the peak resident memory of the large run may exceed the small run's by at most 16 MB
 * (a reader that kept the log, or every payload, would need 44 MB more). Both reports must
 * account for every record. */
#include "tap.h"
#include "tests/support/big_log.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    static const char *const dirs[] = {"tests/fixtures/logs", NULL};
    char dir[] = "/tmp/mi_tlparse_mem_XXXXXX";
    if (!mkdtemp(dir)) { ok(0, "mkdtemp"); return done_testing(); }
    long sizes[2] = {4L << 20, 48L << 20}, rss[2] = {0, 0};
    TlparseChild r[2];
    for (int k = 0; k < 2; k++) {
        char log[600], out[600];
        snprintf(log, sizeof log, "%s/big%d.log", dir, k);
        snprintf(out, sizeof out, "%s/out%d", dir, k);
        const char *src = NULL;
        int nsrc = 0;
        long bytes = big_log_build(log, sizes[k], dirs, &src, &nsrc);
        ok(bytes >= sizes[k] && nsrc > 0, "a %ld MB log from %d real logs", bytes >> 20, nsrc);
        memset(&r[k], 0, sizeof r[k]);
        ok(tlparse_in_child(log, out, &r[k], &rss[k]) == 0 && r[k].ok, "tlparse reads the %ld MB log%s%s", bytes >> 20,
           r[k].err[0] ? ": " : "", r[k].err);
        diag("%ld MB: %ld records, %ld compiles, %.2f s, peak RSS %.1f MB", bytes >> 20, r[k].records, r[k].compiles,
             r[k].seconds, rss[k] / 1024.0);
        unlink(log);
    }
    ok(r[1].records > 8 * r[0].records, "the large log has proportionally more records (%ld vs %ld)", r[1].records,
       r[0].records);
    ok(r[1].compiles > 8 * r[0].compiles, "and compile ids (%ld vs %ld)", r[1].compiles, r[0].compiles);
#if defined(__SANITIZE_ADDRESS__)
    /* ASan keeps freed memory in quarantine (up to 256 MB), so the peak grows with the work
     * done, not with what is live: the bound is checked by the plain build only */
    skip(1, "peak RSS under ASan measures its quarantine (checked by `make check`)");
#else
    ok(rss[1] <= rss[0] + 16 * 1024, "peak memory stays flat: %.1f MB for 48 MB, %.1f MB for 4 MB", rss[1] / 1024.0,
       rss[0] / 1024.0);
#endif
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    return done_testing();
}
