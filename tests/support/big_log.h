/* big_log.h — large TORCH_TRACE logs made from real ones, and tlparse run in a child process
 * so that its peak memory is its own (getrusage via wait4). Used by the tlparse memory test
 * (tests/test_tlparse_memory.c) and figure 4 of the benchmarks (bench/fig_tlparse.c). */
#ifndef BIG_LOG_H
#define BIG_LOG_H

#include "trace/trace.h"

/* Write a log of at least `target` bytes to path by concatenating the .log files found under
 * the first of dirs (NULL-terminated) that has any (multirank/ skipped), over and over,
 * shifting frame_id in every envelope so each copy has fresh compile ids (payloads and their
 * md5s unchanged). Returns its size, -1 when no source log was found or writing failed;
 * *src_dir / *nsrc: where the sources came from and how many. */
long big_log_build(const char *path, long target, const char *const *dirs, const char **src_dir, int *nsrc);

typedef struct TlparseChild { int ok; double seconds; long records, failures, compiles; char err[400]; } TlparseChild;
/* Run tlparse_run(log -> outdir, no artifact files) in a forked child; *res gets its result
 * and *maxrss_kb the child's peak resident memory in KB. 0, or -1 when fork/wait failed. */
int tlparse_in_child(const char *log, const char *outdir, TlparseChild *res, long *maxrss_kb);

#endif
