/* test_multirank.c — reports over a directory of per-rank logs (two-rank torchrun, PyTorch 2.11):
 * compile ids and failures per rank against counts the test makes itself, the collective
 * sequence of the all_reduce graph, and planted problems: one compile deleted from one rank
 * (divergence) and a different collective on one rank (mismatch warning). */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "trace/trace.h"

#include <md5.h>
#include <sys/stat.h>
#include <unistd.h>

#define MR "tests/fixtures/logs/multirank/"

/* Independent counts: distinct compile ids (from frame ids) and failed compilation_metrics. */
static void count(const char *path, int *n_ids, int *n_failed) {
    FILE *f = fopen(path, "r");
    char *line = NULL, ids[64][32];
    size_t cap = 0;
    *n_ids = *n_failed = 0;
    while (f && getline(&line, &cap, f) > 0) {
        if (line[0] == '\t') continue;
        char *p = strstr(line, "\"frame_id\": ");
        char *q = strstr(line, "\"frame_compile_id\": ");
        char *a = strstr(line, "\"attempt\": ");
        if (p && q) {
            char id[32];
            int at = a ? atoi(a + 11) : 0;
            if (at) snprintf(id, sizeof id, "%d/%d_%d", atoi(p + 12), atoi(q + 20), at);
            else snprintf(id, sizeof id, "%d/%d", atoi(p + 12), atoi(q + 20));
            int k;
            for (k = 0; k < *n_ids; k++) if (!strcmp(ids[k], id)) break;
            if (k == *n_ids && k < 64) snprintf(ids[(*n_ids)++], 32, "%s", id);
        }
        if (strstr(line, "{\"compilation_metrics\": ") && strstr(line, "\"fail_type\": \"")) (*n_failed)++;
    }
    free(line);
    if (f) fclose(f);
}

/* Copy src to dst; drop_frame >= 0 removes every envelope of that frame (with its payload);
 * swap != NULL replaces text in the inductor_collective_schedule payload and fixes its md5. */
static void copy_log(const char *src, const char *dst, int drop_frame, const char *from, const char *to) {
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    char *line = NULL;
    size_t cap = 0;
    bool dropping = false, in_sched = false;
    char pat[40];
    snprintf(pat, sizeof pat, "\"frame_id\": %d,", drop_frame);
    char *held = NULL;      /* the schedule envelope, written once its payload is known */
    char payload[4096] = "";
    while (getline(&line, &cap, in) > 0) {
        if (line[0] != '\t') {
            if (in_sched) {
                /* finish the schedule record with the new md5 */
                char hex[33];
                MD5Data((const uint8_t *)payload, strlen(payload) ? strlen(payload) - 1 : 0, hex);
                char *h = strstr(held, "\"has_payload\": \"") + 16;
                memcpy(h, hex, 32);
                fputs(held, out);
                for (char *p = payload; *p;) {
                    size_t n = strcspn(p, "\n");
                    fprintf(out, "\t%.*s\n", (int)n, p);
                    p += n + (p[n] == '\n');
                }
                free(held);
                held = NULL;
                in_sched = false;
            }
            dropping = drop_frame >= 0 && strstr(line, pat) != NULL;
            if (from && strstr(line, "\"name\": \"inductor_collective_schedule\"")) {
                in_sched = true;
                held = strdup(line);
                payload[0] = 0;
                continue;
            }
        } else if (in_sched) {
            char *s = line + 1, *hit = strstr(s, from);
            if (hit) {
                char tmp[512];
                snprintf(tmp, sizeof tmp, "%.*s%s%s", (int)(hit - s), s, to, hit + strlen(from));
                strcat(payload, tmp);
            } else strcat(payload, s);
            continue;
        }
        if (!dropping) fputs(line, out);
    }
    free(line);
    fclose(in);
    fclose(out);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char dir[] = "/tmp/mi_multirank_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    const char *ok_logs[2] = {MR "ok/dedicated_log_torch_trace_rank_0_oyubhhb6.log",
                              MR "ok/dedicated_log_torch_trace_rank_1_1pd_sfaa.log"};
    const char *fail_logs[2] = {MR "compiler_collectives_failure/dedicated_log_torch_trace_rank_0_zxb1ue1g.log",
                                MR "compiler_collectives_failure/dedicated_log_torch_trace_rank_1_u3zg6d0p.log"};
    char out[300], p[600];

    /* ok: recompile on both ranks, one all_reduce graph */
    snprintf(out, sizeof out, "%s/ok", dir);
    TlparseMultiSummary ms;
    is_int(tlparse_all_ranks(ctx, MR "ok", out, NULL, &ms), 0, "ok: all ranks");
    is_int(ms.n_ranks, 2, "ok: two ranks");
    for (int r = 0; r < ms.n_ranks && r < 2; r++) {
        int ids, failed;
        count(ok_logs[r], &ids, &failed);
        is_int(ms.ranks[r].rank, r, "rank order");
        is_int(ms.ranks[r].s.n_compiles, ids, "ok rank %d: %d compile ids", r, ids);
        is_int(ms.ranks[r].s.n_failed, failed, "ok rank %d: failures", r);
        is_int(ms.ranks[r].s.rank, r, "ok rank %d: rank read from the envelopes", r);
        is_int(ms.ranks[r].n_collective_graphs, 1, "ok rank %d: one compile with collectives", r);
        is_int(trace_stats_failures(&ms.ranks[r].s.stats), 0, "ok rank %d: clean log", r);
        snprintf(p, sizeof p, "%s/rank_%d/index.html", out, r);
        ok(access(p, R_OK) == 0, "rank_%d/index.html", r);
    }
    is_int(ms.n_divergent_compiles, 0, "ok: no divergence");
    is_int(ms.n_collective_mismatches, 0, "ok: same collectives");
    snprintf(p, sizeof p, "%s/index.html", out);
    char *page = sh_read_file(p);
    ok(page && strstr(page, "compile 1/0 — same sequence on every rank") &&
           strstr(page, "all_reduce_.default\nwait_tensor.default\nfrom inductor_collective_schedule"),
       "ok: landing page shows the collective sequence per rank");
    ok(page && strstr(page, "0/1: 0/0: tensor &#39;x&#39; size mismatch at index 0. expected 8, actual 32") &&
           strstr(page, "expected 12, actual 32"),
       "ok: recompile reasons per rank");
    /* 0/1 recompiled on both ranks, but rank 0 had seen 8 rows and rank 1 twelve */
    is_int(ms.n_recompile_mismatches, 1, "ok: the recompile of 0/1 has a different reason on each rank");
    const char *row = page ? strstr(page, "<tr><td>0/1</td>") : NULL;
    const char *end = row ? strstr(row, "</tr>") : NULL;
    const char *note = row ? strstr(row, "recompile reasons differ (the ranks saw different inputs).") : NULL;
    ok(note && note < end, "ok: the 0/1 row says so");
    free(page);
    tlparse_multi_summary_free(&ms);

    /* failures on both ranks */
    snprintf(out, sizeof out, "%s/fail", dir);
    is_int(tlparse_all_ranks(ctx, MR "compiler_collectives_failure", out, NULL, &ms), 0, "failure: all ranks");
    for (int r = 0; r < ms.n_ranks && r < 2; r++) {
        int ids, failed;
        count(fail_logs[r], &ids, &failed);
        is_int(ms.ranks[r].s.n_compiles, ids, "failure rank %d: %d compile ids", r, ids);
        is_int(ms.ranks[r].s.n_failed, failed, "failure rank %d: %d failed", r, failed);
    }
    is_int(ms.n_failure_mismatches, 0, "failure: same failures on every rank");
    is_int(ms.n_recompile_mismatches, 0, "failure: no recompiles");
    snprintf(p, sizeof p, "%s/index.html", out);
    page = sh_read_file(p);
    ok(page && strstr(page, "failed: TypeError: sequence item 0: expected str instance, torch.device found"),
       "failure: reason on the landing page");
    free(page);
    tlparse_multi_summary_free(&ms);

    /* planted divergence: compile 1/0 deleted from rank 1 */
    char dd[300], dst[600];
    snprintf(dd, sizeof dd, "%s/div", dir);
    mkdir(dd, 0777);
    snprintf(dst, sizeof dst, "%s/dedicated_log_torch_trace_rank_0_a.log", dd);
    copy_log(ok_logs[0], dst, -1, NULL, NULL);
    snprintf(dst, sizeof dst, "%s/dedicated_log_torch_trace_rank_1_b.log", dd);
    copy_log(ok_logs[1], dst, 1, NULL, NULL);
    snprintf(out, sizeof out, "%s/div_out", dir);
    is_int(tlparse_all_ranks(ctx, dd, out, NULL, &ms), 0, "divergence: all ranks");
    is_int(ms.ranks[1].s.n_compiles, 2, "divergence: rank 1 lost a compile");
    is_int(ms.n_divergent_compiles, 1, "divergence reported");
    is_int(ms.n_collective_mismatches, 1, "the lost compile's collectives are missing on rank 1");
    snprintf(p, sizeof p, "%s/index.html", out);
    page = sh_read_file(p);
    ok(page && strstr(page, "DIVERGENCE: present on 1 of 2 ranks") && strstr(page, "<b>missing</b>") &&
           strstr(page, "rank 1 diverges from rank 0 at compile #3: 1/0 on rank 0, (end) on rank 1"),
       "divergence: landing page marks it");
    free(page);
    tlparse_multi_summary_free(&ms);

    /* planted collective mismatch: rank 1 schedules an all_gather instead */
    snprintf(dd, sizeof dd, "%s/coll", dir);
    mkdir(dd, 0777);
    snprintf(dst, sizeof dst, "%s/dedicated_log_torch_trace_rank_0_a.log", dd);
    copy_log(ok_logs[0], dst, -1, NULL, NULL);
    snprintf(dst, sizeof dst, "%s/dedicated_log_torch_trace_rank_1_b.log", dd);
    copy_log(ok_logs[1], dst, -1, "all_reduce_.default", "all_gather_into_tensor.default");
    snprintf(out, sizeof out, "%s/coll_out", dir);
    is_int(tlparse_all_ranks(ctx, dd, out, NULL, &ms), 0, "mismatch: all ranks");
    is_int(trace_stats_failures(&ms.ranks[1].s.stats), 0, "mismatch: rewritten log is clean (md5 fixed)");
    is_int(ms.n_divergent_compiles, 0, "mismatch: same compile ids");
    is_int(ms.n_collective_mismatches, 1, "mismatch reported");
    snprintf(p, sizeof p, "%s/index.html", out);
    page = sh_read_file(p);
    ok(page && strstr(page, "WARNING: collective sequences differ across ranks") &&
           strstr(page, "all_gather_into_tensor.default"),
       "mismatch: warning and both sequences on the landing page");
    free(page);
    tlparse_multi_summary_free(&ms);

    mi_clear_err(ctx);
    is_int(tlparse_all_ranks(ctx, "tests/fixtures/logs", out, NULL, NULL), -1, "a directory without rank logs fails");
    ok(strstr(ctx->err.msg, "no dedicated_log_torch_trace_rank_") != NULL, "clear message");

    /* the shell: report --all-ranks LOGDIR DIR */
    const char *bin = getenv("MINDUCTOR_BIN");
    if (bin) {
        char sh[1400], got[4096] = "";
        snprintf(sh, sizeof sh, "'%s' -q -c 'report --all-ranks " MR "ok %s/shell' 2>/dev/null", bin, dir);
        FILE *p = popen(sh, "r");
        size_t n = p ? fread(got, 1, sizeof got - 1, p) : 0;
        got[n] = 0;
        int st = p ? pclose(p) : -1;
        ok(st == 0 && strstr(got, "(2 ranks; 0 divergent compile ids, 0 collective mismatches, 0 failure mismatches)") &&
           strstr(got, "rank 1: 3 compiles, 0 failed, 1 with collectives"), "shell: report --all-ranks");
        char pg[1300];
        snprintf(pg, sizeof pg, "%s/shell/rank_1/index.html", dir);
        ok(access(pg, R_OK) == 0, "shell: rank_1/index.html written");
    } else skip(2, "MINDUCTOR_BIN not set");

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    mi_ctx_free(ctx);
    return done_testing();
}
