/* test_log_reader.c — the streaming TORCH_TRACE reader on real PyTorch 2.11 logs: record and
 * md5 counts against an independent line count, compile ids (with restart attempts), the intern
 * table, graph extraction byte-identical to the recorded graph files, the compile list with
 * statuses, and every kind of malformed line on small hand-made logs. */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "trace/trace.h"

#include <cJSON.h>
#include <unistd.h>

#define LOGS "tests/fixtures/logs/"

/* Independent counts by plain line inspection. */
static void count_lines(const char *path, long *envelopes, long *with_payload) {
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    *envelopes = *with_payload = 0;
    while (f && getline(&line, &cap, f) > 0) {
        if (line[0] == '\t' || line[0] == '\n') continue;
        (*envelopes)++;
        if (strstr(line, "\"has_payload\": \"")) (*with_payload)++;
    }
    free(line);
    if (f) fclose(f);
}

static void write_text(const char *path, const char *s) {
    FILE *f = fopen(path, "w");
    fputs(s, f);
    fclose(f);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    const char *logs[] = {LOGS "cpu_seed_example.log", LOGS "cpu_recompile.log", LOGS "cpu_graph_break.log",
                          LOGS "cuda_hop_cond.log", LOGS "cuda_reduce_overhead.log"};
    for (int i = 0; i < 5; i++) {
        long env, wp;
        count_lines(logs[i], &env, &wp);
        TraceReader *rd = trace_reader_open(ctx, logs[i]);
        ok(rd != NULL, "open %s", logs[i]);
        if (!rd) continue;
        TraceRecord r;
        long n = 0, bad_md5 = 0;
        while (trace_reader_next(rd, &r) == 1) {
            n++;
            if (!r.md5_ok) bad_md5++;
        }
        const TraceReadStats *st = trace_reader_stats(rd);
        is_int(n, env, "%s: one record per envelope line", logs[i]);
        is_int(st->md5_checked, wp, "%s: every has_payload checked", logs[i]);
        is_int(bad_md5, 0, "%s: all md5s match", logs[i]);
        is_int(trace_stats_failures(st), 0, "%s: no problems", logs[i]);
        is_int(st->ok, env, "%s: every record ok", logs[i]);
        trace_reader_close(rd);
    }

    /* interned file names and dynamo_start stacks */
    TraceReader *rd = trace_reader_open(ctx, LOGS "cpu_seed_example.log");
    TraceRecord r;
    bool stack_ok = false;
    while (trace_reader_next(rd, &r) == 1)
        if (r.kind == TRACE_EV_DYNAMO_START) {
            cJSON *stack = cJSON_GetObjectItem(r.meta, "stack");
            cJSON *last = cJSON_GetArrayItem(stack, cJSON_GetArraySize(stack) - 1);
            const char *fn = trace_reader_intern(rd, (long)cJSON_GetObjectItem(last, "filename")->valuedouble);
            stack_ok = fn && !strcmp(fn, "/home/user/torchgen/models.py") && !strcmp(r.compile_id, "0/0") &&
                       !strcmp(r.glog_file, "torch/_dynamo/convert_frame.py") && r.glog_line == 276 && r.pid == 445;
            break;
        }
    ok(stack_ok, "dynamo_start frame filename resolves through the intern table; glog fields parsed");
    trace_reader_close(rd);

    /* extraction matches the graph files recorded from the same run */
    const char *cases[][3] = {
        {"0/0", "before_post_grad_graph", "tests/fixtures/torch-cases/cpu/recompile/graph0/pre_post_grad.py"},
        {"0/1", "before_post_grad_graph", "tests/fixtures/torch-cases/cpu/recompile/graph1/pre_post_grad.py"},
        {"0/1", "inductor_post_grad_graph", "tests/fixtures/torch-cases/cpu/recompile/graph1/post_post_grad.py"},
    };
    for (int i = 0; i < 3; i++) {
        int first = 0;
        char *g = trace_extract_artifact(ctx, LOGS "cpu_recompile.log", cases[i][0], cases[i][1], &first);
        char *want = sh_read_file(cases[i][2]);
        ok(g && want && !strcmp(g, want), "extract %s %s equals %s", cases[i][0], cases[i][1], cases[i][2]);
        ok(first > 1, "payload first line %d", first);
        free(g);
        free(want);
    }
    char *aot = trace_extract_artifact(ctx, LOGS "cpu_seed_example.log", "0/0", "aot_inference_graph", NULL);
    ok(aot && !strncmp(aot, "class <lambda>(torch.nn.Module):", 32), "extract by event key (aot_inference_graph)");
    free(aot);
    mi_clear_err(ctx);
    ok(trace_extract_artifact(ctx, LOGS "cpu_seed_example.log", "7/7", "before_post_grad_graph", NULL) == NULL &&
           strstr(ctx->err.msg, "no compile id 7/7"), "unknown compile id: clear error");
    mi_clear_err(ctx);
    ok(trace_extract_artifact(ctx, LOGS "cpu_seed_example.log", "0/0", "no_such_graph", NULL) == NULL &&
           strstr(ctx->err.msg, "no artifact \"no_such_graph\""), "unknown artifact: clear error (%s)", ctx->err.msg);
    mi_clear_err(ctx);
    ok(trace_reader_open(ctx, "tests/fixtures/logs/nope.log") == NULL && strstr(ctx->err.file, "nope.log"),
       "missing file: error names it");

    /* compile list: restarts, recompiles, failures */
    TraceCompileList cl;
    is_int(trace_list_compiles(ctx, LOGS "cpu_graph_break.log", &cl), 0, "list graph_break");
    is_int(cl.n, 3, "graph_break: 3 compile ids");
    if (cl.n == 3) {
        is_str(cl.c[0].id, "0/0", "0/0");
        ok(cl.c[0].restarted && !strncmp(cl.c[0].status, "restarted: Call to `torch._dynamo.graph_break()`", 48),
           "0/0 restarted with its reason (%s)", cl.c[0].status);
        is_str(cl.c[1].id, "0/0_1", "attempt 1 is 0/0_1");
        is_str(cl.c[1].status, "ok", "0/0_1 ok");
        is_str(cl.c[2].id, "1/0", "1/0");
        bool has = false;
        for (int j = 0; j < cl.c[1].n_artifacts; j++) has |= !strcmp(cl.c[1].artifacts[j], "inductor_post_grad_graph");
        ok(has, "0/0_1 lists inductor_post_grad_graph");
    }
    trace_compile_list_free(&cl);
    is_int(trace_list_compiles(ctx, LOGS "multirank/compiler_collectives_failure/dedicated_log_torch_trace_rank_0_zxb1ue1g.log", &cl), 0,
           "list failure log");
    is_int(cl.n, 2, "2 compile ids");
    if (cl.n == 2)
        is_str(cl.c[0].status, "failed: TypeError: sequence item 0: expected str instance, torch.device found",
               "failure status from compilation_metrics");
    trace_compile_list_free(&cl);
    /* what the log says about CUDA graphs, per compile id, in one line (the shell's listing) */
    is_int(trace_list_compiles(ctx, LOGS "cuda_reduce_overhead.log", &cl), 0, "list reduce_overhead");
    if (ok(cl.n == 1, "reduce_overhead: one compile")) {
        const TraceCompileInfo *c = &cl.c[0];
        is_int(c->cg_requested, 1, "cudagraphs requested in the FX cache key");
        is_str(c->cg_skip_reason, "", "no skip reason");
        ok(c->n_cg_runtime == 2 && c->cg_runtime_us == 10720 + 1353, "runtime_cudagraphify_time_us summed over the 2 runtime metrics");
        is_int(c->n_cg_events, 2, "2 cudagraph chromium events (begin/end pairs counted once)");
        char buf[600];
        is_str(trace_cudagraph_summary(c, buf, sizeof buf),
               "requested; not skipped; runtime cudagraphify 12073 us over 2 records; 2 cudagraph events "
               "(cudagraphify.get_container, CUDAGraphNode.record)", "summary line");
    }
    trace_compile_list_free(&cl);
    is_int(trace_list_compiles(ctx, LOGS "cpu_recompile.log", &cl), 0, "list recompile");
    for (int i = 0; i < cl.n; i++) {
        char buf[600];
        ok(cl.c[i].cg_requested == 0 && !*trace_cudagraph_summary(&cl.c[i], buf, sizeof buf), "cpu compile %s: not requested, no line", cl.c[i].id);
    }
    trace_compile_list_free(&cl);

    /* malformed logs */
    char dir[] = "/tmp/mi_log_reader_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    char p[256];
    snprintf(p, sizeof p, "%s/bad.log", dir);
    const char *H = "V1122 18:41:45.352000 445 x.py:1] ";
    char buf[4096];
    snprintf(buf, sizeof buf,
             "%s{\"artifact\": {\"name\": \"a\", \"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"0cc175b9c0f1b6a831c399e269772661\"}\n"
             "\ta\n"                                                         /* 1-2 ok (md5("a")) */
             "garbage here\n"                                                /* 3 bad_glog */
             "%s{\"artifact\": {\"name\": \"b\"}, \"has_payload\": \"zz\"}\n" /* 4 md5 not hex */
             "\tb\n"
             "%s{\"artifact\": {\"name\": \"c\"}, \"frame_id\": 0, \"has_payload\": \"0cc175b9c0f1b6a831c399e269772661\"}\n" /* 6 truncated */
             "%s{\"dynamo_start\": {\"stack\": []}}\n"                        /* 7 */
             "\tstray\n"                                                     /* 8 stray */
             "%s{\"artifact\": \n"                                           /* 9 bad json */
             "\tskipped with it\n"
             "%s{\"weird_event\": {}, \"frame_id\": \"x\"}\n"                /* 11 unknown + bad id */
             "\n"
             "%s{\"artifact\": {\"name\": \"d\"}, \"has_payload\": \"0cc175b9c0f1b6a831c399e269772661\"}\n" /* 13 */
             "\ta partial",                                                 /* 14: cut, no newline */
             H, H, H, H, H, H, H);
    write_text(p, buf);
    rd = trace_reader_open(ctx, p);
    long n = 0;
    while (trace_reader_next(rd, &r) == 1) n++;
    const TraceReadStats *st = trace_reader_stats(rd);
    is_int(n, 6, "records kept: a, b, c, dynamo_start, weird_event, d");
    is_int(trace_reader_stats(rd)->ok, 1, "only record a is ok");
    int ni;
    const TraceIssue *is = trace_reader_issues(rd, &ni);
    char got[512] = "";
    for (int i = 0; i < ni; i++) {
        char one[64];
        snprintf(one, sizeof one, "%ld:%s ", is[i].line, trace_issue_kind_name(is[i].kind));
        strcat(got, one);
    }
    is_str(got, "3:bad_glog 4:md5_mismatch 6:truncated_payload 8:stray_payload 9:bad_json 11:bad_compile_id "
                "11:unknown_event 13:truncated_payload ",
           "every problem with its line and kind");
    is_int(st->lines, 14, "line count includes the blank line");
    is_int(trace_stats_failures(st), 8, "failure total");
    trace_reader_close(rd);

    snprintf(buf, sizeof buf, "%s{\"dynamo_start\": {\"stack\": []}} trailing junk\n%s{\"dynamo_start\": {}}  \n", H, H);
    write_text(p, buf);
    rd = trace_reader_open(ctx, p);
    n = 0;
    while (trace_reader_next(rd, &r) == 1) n++;
    is_int(n, 1, "trailing junk after the envelope: dropped; trailing spaces: fine");
    is_int(trace_reader_stats(rd)->issues[TRACE_BAD_JSON], 1, "trailing junk is bad_json");
    trace_reader_close(rd);
    snprintf(buf, sizeof buf, "%s{\"compilation_metrics\": {\"a\": NaN, \"b\": -Infinity, \"s\": \"NaN \\\" Infinity\"}}\n", H);
    write_text(p, buf);
    rd = trace_reader_open(ctx, p);
    ok(trace_reader_next(rd, &r) == 1 && cJSON_IsNull(cJSON_GetObjectItem(r.meta, "a")) &&
           cJSON_IsNull(cJSON_GetObjectItem(r.meta, "b")) &&
           !strcmp(cJSON_GetObjectItem(r.meta, "s")->valuestring, "NaN \" Infinity"),
       "Python's NaN/-Infinity read as null; strings untouched");
    is_int(trace_stats_failures(trace_reader_stats(rd)), 0, "no problem reported for NaN");
    trace_reader_close(rd);

    /* robustness: prefixes cut at arbitrary bytes, and random byte flips */
    size_t full_len = 0;
    char *full = mi_read_file(ctx, LOGS "cuda_hop_cond.log", &full_len);
    ok(full != NULL, "read hop_cond whole");
    uint64_t seed = 12345;
    bool cuts_ok = true;
    for (int k = 0; k < 25 && full; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t cut = (size_t)(seed >> 33) % full_len;
        FILE *f = fopen(p, "w");
        fwrite(full, 1, cut, f);
        fclose(f);
        rd = trace_reader_open(ctx, p);
        long recs = 0;
        int rc;
        while ((rc = trace_reader_next(rd, &r)) == 1) recs++;
        st = trace_reader_stats(rd);
        /* a cut inside a payload is reported as truncated; at most one problem in total */
        if (rc != 0 || trace_stats_failures(st) > 1) {
            cuts_ok = false;
            diag("cut at %zu: rc %d, %ld problems", cut, rc, trace_stats_failures(st));
        }
        trace_reader_close(rd);
    }
    ok(cuts_ok, "logs cut at 25 random bytes read to the end with at most one problem");
    if (full) {
        for (int k = 0; k < 300; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            full[(seed >> 33) % full_len] = (char)(seed >> 20);
        }
        FILE *f = fopen(p, "w");
        fwrite(full, 1, full_len, f);
        fclose(f);
        rd = trace_reader_open(ctx, p);
        long recs = 0;
        int rc;
        while ((rc = trace_reader_next(rd, &r)) == 1) recs++;
        st = trace_reader_stats(rd);
        is_int(rc, 0, "300 random byte flips: read to the end");
        ok(trace_stats_failures(st) > 0 && trace_stats_failures(st) <= 300 + 300,
           "flips are reported (%ld problems, %ld records)", trace_stats_failures(st), recs);
        trace_reader_close(rd);
        char out2[300];
        snprintf(out2, sizeof out2, "%s/flipped_report", dir);
        TlparseSummary ts;
        is_int(tlparse_run(ctx, p, out2, NULL, &ts), 0, "tlparse renders the flipped log");
    }
    free(full);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    mi_ctx_free(ctx);
    return done_testing();
}
