/* fuzz_trace.c — libFuzzer target: the TORCH_TRACE log reader (trace/log_reader.c) and the
 * compile listing built on it (trace/trace_extract.c) never crash, leak or hang on any bytes.
 *
 * The reader takes a path, so the input goes into an in-memory file (memfd) read through
 * /proc/self/fd/N: no disk traffic. Checked besides "no crash": every record's payload and
 * envelope are NUL-terminated at their lengths (and fit in the input), counts are consistent
 * (records returned == stats.records, every issue count >= 0, lines <= newlines + 1). */
#define _GNU_SOURCE
#include "trace/trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz_trace", 0);
    if (fd < 0) return 0;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) { close(fd); return 0; }
        off += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    long newlines = 0;
    for (size_t i = 0; i < size; i++) newlines += data[i] == '\n';

    MiCtx *ctx = mi_ctx_new();
    TraceReader *rd = trace_reader_open(ctx, path);
    if (!rd) abort();                      /* the file exists: opening must work */
    TraceRecord r;
    long records = 0;
    int rc;
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        records++;
        /* NUL-terminated at payload_len (a payload may hold NUL bytes of its own) */
        if (!r.payload || r.payload[r.payload_len] != 0 || r.payload_len > size) abort();
        if (r.envelope_len > size || (r.envelope && r.envelope[r.envelope_len] != 0)) abort();
        if (r.line < 1 || r.line > newlines + 1) abort();
        if (!r.key || !r.name) abort();
        (void)trace_reader_intern(rd, r.frame_id);
    }
    if (rc != 0) abort();                  /* a memfd never has read errors */
    const TraceReadStats *st = trace_reader_stats(rd);
    if (st->records != records || st->lines > newlines + 1 || trace_stats_failures(st) < 0) abort();
    for (int k = 0; k < TRACE_NKINDS; k++)
        if (st->issues[k] < 0 || !trace_issue_kind_name((TraceIssueKind)k)) abort();
    int nis = 0;
    const TraceIssue *is = trace_reader_issues(rd, &nis);
    for (int i = 0; i < nis; i++)
        if (is[i].line < 0 || memchr(is[i].detail, 0, sizeof is[i].detail) == NULL) abort();
    trace_reader_close(rd);

    TraceCompileList cl = {0};
    if (trace_list_compiles(ctx, path, &cl) == 0) {
        for (int i = 0; i < cl.n; i++)
            if (!memchr(cl.c[i].id, 0, sizeof cl.c[i].id) || cl.c[i].n_artifacts < 0) abort();
        if (cl.n > 0 && cl.c[0].n_artifacts > 0) {
            int first = 0;
            char *p = trace_extract_artifact(ctx, path, cl.c[0].id, cl.c[0].artifacts[0], &first);
            free(p);
        }
    }
    trace_compile_list_free(&cl);
    mi_ctx_free(ctx);
    close(fd);
    return 0;
}
