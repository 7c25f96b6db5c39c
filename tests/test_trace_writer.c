/* test_trace_writer.c — the TORCH_TRACE writer: exact envelope text (fixed clock and pid),
 * payload lines and md5, interned strings, compile ids, chromium events, metrics and
 * minductor pass steps; then reads the log back with the reader and renders it with tlparse. */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "trace/trace.h"

#include <cJSON.h>
#include <md5.h>
#include <time.h>
#include <unistd.h>

static uint64_t fixed_clock(void *arg) {
    uint64_t *t = arg;
    uint64_t now = *t;
    *t += 1500;                 /* 1.5 ms per event */
    return now;
}

static const char *nth_line(const char *s, int n, char *out, size_t cap) {
    for (int i = 1; i < n && s; i++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s) return NULL;
    size_t len = strcspn(s, "\n");
    if (len >= cap) len = cap - 1;
    memcpy(out, s, len);
    out[len] = 0;
    return out;
}

int main(void) {
    setenv("TZ", "UTC", 1);
    tzset();
    MiCtx *ctx = mi_ctx_new();
    char dir[] = "/tmp/mi_trace_writer_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    char path[256];
    snprintf(path, sizeof path, "%s/trace.log", dir);

    TraceWriter *tw = trace_open(ctx, path);
    ok(tw != NULL, "trace_open");
    uint64_t clock = 1795374105352000ull;   /* 2026-11-22 19:01:45.352 UTC */
    trace_set_clock(tw, fixed_clock, &clock, 445);

    TraceFrame frames[] = {{"examples/seed_example.py", "<module>", "main()", 12},
                           {"minductor/repl/shell.c", "cmd_compile", NULL, 88}};
    trace_set_compile_id(tw, 0, 0, 0);
    is_int(trace_dynamo_start(tw, frames, 2), 0, "dynamo_start");
    is_int(trace_chromium_begin(tw, "compile", "minductor"), 0, "chromium begin");
    const char *graph = "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        return (x,)\n";
    is_int(trace_artifact_at(tw, "core/fx_passes/passes.c", 123, "before_post_grad_graph", "string", graph), 0, "artifact");
    is_int(trace_pass_step(tw, 1, "remove_noop", graph, "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new", "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"), 0, "pass step");
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "note", "caf\xc3\xa9 \"q\"\n");
    cJSON_AddNumberToObject(meta, "n", 3);
    cJSON_AddNumberToObject(meta, "x", 0.25);
    is_int(trace_event_at(tw, "core/lowering/lowering.c", 7, "minductor_lowering", meta, NULL), 0, "custom event without payload");
    cJSON_Delete(meta);
    is_int(trace_chromium_end(tw, "compile", NULL), 0, "chromium end");
    is_int(trace_compilation_metrics(tw, "seed_example", 0.5, NULL, NULL, NULL, NULL), 0, "metrics ok");
    trace_set_compile_id(tw, 0, 0, 1);
    is_int(trace_artifact(tw, "empty_payload", "string", ""), 0, "empty payload");
    is_int(trace_compilation_metrics(tw, "seed_example", 0.1, "TypeError", "bad <thing> & more", NULL, NULL), 0, "metrics failed");
    trace_set_rank(tw, 3);
    trace_set_compile_id(tw, 1, 0, 0);
    is_int(trace_intern(tw, "examples/seed_example.py"), 0, "interned id is reused");
    is_int(trace_artifact(tw, "json_thing", "json", "{\"a\": 1}"), 0, "json artifact with rank");
    is_int(trace_close(tw), 0, "trace_close");

    char *text = sh_read_file(path);
    ok(text != NULL, "log written");
    char line[2048];
    /* line 1: the interned file name; line 3: dynamo_start */
    nth_line(text, 1, line, sizeof line);
    const char *pre = "V1122 19:01:45.352000 445 minductor/trace/trace_writer.c:";
    ok(strncmp(line, pre, strlen(pre)) == 0 &&
           strstr(line, "] {\"str\": [\"examples/seed_example.py\", 0]}") && line[strlen(line) - 1] == '}',
       "exact str line (glog prefix of the writer)");
    if (strncmp(line, "V1122", 5)) diag("line 1: %s", line);
    ok(strstr(nth_line(text, 3, line, sizeof line),
              "] {\"dynamo_start\": {\"stack\": [{\"line\": 12, \"name\": \"<module>\", \"filename\": 0, \"loc\": \"main()\"}, "
              "{\"line\": 88, \"name\": \"cmd_compile\", \"filename\": 1}]}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}") != NULL,
       "dynamo_start envelope text");
    /* find the artifact line written from core/fx_passes/passes.c:123 */
    char want[512];
    char hex[33];
    MD5Data((const uint8_t *)graph, strlen(graph), hex);
    snprintf(want, sizeof want,
             "V1122 19:01:45.359500 445 minductor/core/fx_passes/passes.c:123] {\"artifact\": {\"name\": \"before_post_grad_graph\", "
             "\"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"%s\"}\n"
             "\tclass GraphModule(torch.nn.Module):\n\t    def forward(self, x):\n\t        return (x,)\n\t\n",
             hex);
    ok(strstr(text, want) != NULL, "exact artifact envelope + payload lines (trailing newline gives an empty '\\t' line)");
    if (!strstr(text, want)) diag("wanted:\n%s\nlog:\n%.1500s", want, text);
    ok(strstr(text, "{\"minductor_lowering\": {\"note\": \"caf\\u00e9 \\\"q\\\"\\n\", \"n\": 3, \"x\": 0.25}, \"frame_id\": 0") != NULL,
       "metadata printed like json.dumps (ensure_ascii, separators)");
    ok(strstr(text, "{\"artifact\": {\"name\": \"empty_payload\", \"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, "
                    "\"attempt\": 1, \"has_payload\": \"d41d8cd98f00b204e9800998ecf8427e\"}\n\t\n") != NULL,
       "empty payload: md5 of \"\" and one tab line");
    ok(strstr(text, "\"rank\": 3, \"frame_id\": 1, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\"") != NULL,
       "rank before compile id like PyTorch");
    ok(strstr(text, "\t\"ts\": 1795374105356500.0,\n") != NULL, "chromium ts in microseconds");

    /* read back */
    TraceReader *rd = trace_reader_open(ctx, path);
    ok(rd != NULL, "reader opens");
    TraceRecord r;
    int n = 0, n_art = 0, n_chrome = 0, n_metrics = 0;
    char names[1024] = "";
    bool saw_attempt = false, saw_rank = false, payload_ok = false;
    while (trace_reader_next(rd, &r) == 1) {
        n++;
        if (r.kind == TRACE_EV_ARTIFACT) {
            n_art++;
            strcat(names, r.name);
            strcat(names, ",");
            if (!strcmp(r.name, "before_post_grad_graph")) payload_ok = strcmp(r.payload, graph) == 0 && r.md5_ok;
        }
        if (r.kind == TRACE_EV_CHROMIUM) n_chrome++;
        if (r.kind == TRACE_EV_METRICS) n_metrics++;
        if (!strcmp(r.compile_id, "0/0_1")) saw_attempt = true;
        if (r.rank == 3 && !strcmp(r.compile_id, "1/0")) saw_rank = true;
    }
    const TraceReadStats *st = trace_reader_stats(rd);
    is_int(trace_stats_failures(st), 1, "one issue: the custom event is unknown to the reader");
    is_int(st->issues[TRACE_UNKNOWN_EVENT], 1, "unknown_event counted");
    is_int(st->md5_checked, 8, "every payload md5 checked");
    is_int(n, 14, "records read back");
    is_int(n_art, 6, "artifacts read back");
    is_str(names, "before_post_grad_graph,minductor_pass_01_remove_noop,minductor_pass_01_remove_noop_diff,"
                  "minductor_pass_01_remove_noop_svg,empty_payload,json_thing,",
           "artifact names in order");
    ok(payload_ok, "payload text and md5 round-trip");
    is_int(n_chrome, 2, "chromium events");
    is_int(n_metrics, 2, "compilation_metrics");
    ok(saw_attempt, "compile id with attempt reads as 0/0_1");
    ok(saw_rank, "rank read back");
    is_str(trace_reader_intern(rd, 1), "minductor/repl/shell.c", "intern table");
    trace_reader_close(rd);
    free(text);

    /* the compile list and the report */
    TraceCompileList cl;
    is_int(trace_list_compiles(ctx, path, &cl), 0, "list compiles");
    is_int(cl.n, 3, "three compile ids");
    if (cl.n == 3) {
        is_str(cl.c[0].id, "0/0", "first id");
        is_str(cl.c[0].status, "ok", "0/0 ok");
        is_str(cl.c[1].id, "0/0_1", "second id");
        is_str(cl.c[1].status, "failed: TypeError: bad <thing> & more", "0/0_1 failed with reason");
        is_int(cl.c[0].n_artifacts, 4, "0/0 artifacts");
    }
    trace_compile_list_free(&cl);

    char out[300];
    snprintf(out, sizeof out, "%s/report", dir);
    TlparseSummary s;
    is_int(tlparse_run(ctx, path, out, NULL, &s), 0, "tlparse on our own log");
    is_int(s.n_compiles, 3, "report compiles");
    is_int(s.n_failed, 1, "report failures");
    char p2[400];
    snprintf(p2, sizeof p2, "%s/minductor/passes_-_0_0_0.html", out);
    char *page = sh_read_file(p2);
    ok(page && strstr(page, "<h2>Pass steps (1, "), "the pass page lists the step");
    ok(page && strstr(page, "<img src=\"-_0_0_0_01_remove_noop_svg.svg\""), "svg shown as an image");
    free(page);
    snprintf(p2, sizeof p2, "%s/failures_and_restarts.html", out);
    page = sh_read_file(p2);
    ok(page && strstr(page, "bad &lt;thing&gt; &amp; more"), "failure reason escaped");
    free(page);

    /* a span timed before it is logged: B at now - dur, E at now (exact payload text) */
    snprintf(p2, sizeof p2, "%s/span.log", dir);
    tw = trace_open(ctx, p2);
    clock = 1795374105352000ull;
    trace_set_clock(tw, fixed_clock, &clock, 445);
    trace_set_compile_id(tw, 2, 0, 0);
    is_int(trace_chromium_span(tw, "pass.post_grad_passes.dce", "dynamo_timed", 2500), 0, "span");
    trace_close(tw);
    page = sh_read_file(p2);
    ok(page && strstr(page, "\t\"name\": \"pass.post_grad_passes.dce\",\n\t\"ts\": 1795374105349500.0,\n\t\"args\": {\n"
                            "\t\"compile_id\": \"2/0\"\n\t},\n\t\"ph\": \"B\",\n\t\"cat\": \"dynamo_timed\""),
       "span begins dur before the clock's now");
    ok(page && strstr(page, "\"ts\": 1795374105352000.0,\n\t\"args\": {\n\t\"compile_id\": \"2/0\"\n\t},\n\t\"ph\": \"E\""),
       "and ends at now");
    free(page);

    /* errors */
    mi_clear_err(ctx);
    ok(trace_open(ctx, "/nonexistent-dir/x.log") == NULL && strstr(ctx->err.msg, "cannot open"), "open error message");

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    mi_ctx_free(ctx);
    return done_testing();
}
