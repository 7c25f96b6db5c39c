/* trace_writer.c — writes TORCH_TRACE structured logs exactly like PyTorch's structured
 * logging: glog prefix, a JSON envelope printed like json.dumps, then the payload with each
 * line prefixed by a tab, and the payload's md5 in "has_payload". The shell opens one writer
 * per session (ctx->trace); passes and codegen log their artifacts through it. */
#include "trace_internal.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct TraceWriter {
    MiCtx *ctx;
    FILE *f;
    char path[512];
    int frame_id, frame_compile_id, attempt, rank;
    int pid;
    uint64_t (*now_us)(void *);
    void *now_arg;
    char **interned;            /* id -> file name */
    int n_interned;
    bool failed;
    StrBuf line;                /* reused per event */
};

static uint64_t real_now_us(void *arg) {
    (void)arg;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

TraceWriter *trace_open(MiCtx *ctx, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) { mi_err(ctx, path, 0, 0, "cannot open trace log for writing: %s", strerror(errno)); return NULL; }
    TraceWriter *tw = mi_xcalloc(1, sizeof *tw);
    tw->ctx = ctx;
    tw->f = f;
    snprintf(tw->path, sizeof tw->path, "%s", path);
    tw->frame_id = -1;
    tw->rank = -1;
    tw->pid = (int)getpid();
    tw->now_us = real_now_us;
    sb_init(&tw->line);
    return tw;
}

int trace_close(TraceWriter *tw) {
    if (!tw) return 0;
    int rc = tw->failed ? -1 : 0;
    if (fclose(tw->f) != 0) rc = -1;
    if (rc) mi_err(tw->ctx, tw->path, 0, 0, "writing the trace log failed");
    for (int i = 0; i < tw->n_interned; i++) free(tw->interned[i]);
    free(tw->interned);
    sb_free(&tw->line);
    free(tw);
    return rc;
}

void trace_set_compile_id(TraceWriter *tw, int frame_id, int frame_compile_id, int attempt) {
    tw->frame_id = frame_id;
    tw->frame_compile_id = frame_compile_id;
    tw->attempt = attempt;
}

void trace_set_rank(TraceWriter *tw, int rank) { tw->rank = rank; }

void trace_set_clock(TraceWriter *tw, uint64_t (*now_us)(void *), void *arg, int pid) {
    tw->now_us = now_us ? now_us : real_now_us;
    tw->now_arg = arg;
    if (pid > 0) tw->pid = pid;
}

/* "V1122 18:41:45.352000 445 minductor/core/fx_passes/passes.c:123] " */
static void glog_prefix(TraceWriter *tw, StrBuf *b, const char *file, int line, uint64_t us) {
    time_t secs = (time_t)(us / 1000000u);
    struct tm tm;
    localtime_r(&secs, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%m%d %H:%M:%S", &tm);
    const char *f = file ? file : "?";
    while (f[0] == '.' && f[1] == '/') f += 2;
    sb_printf(b, "V%s.%06u %d %s%s:%d] ", ts, (unsigned)(us % 1000000u), tw->pid,
              strncmp(f, "minductor/", 10) == 0 ? "" : "minductor/", f, line);
}

static void compile_id_str(const TraceWriter *tw, char *out, size_t n) {
    if (tw->frame_id < 0) { out[0] = 0; return; }
    if (tw->attempt) snprintf(out, n, "%d/%d_%d", tw->frame_id, tw->frame_compile_id, tw->attempt);
    else snprintf(out, n, "%d/%d", tw->frame_id, tw->frame_compile_id);
}

static int emit(TraceWriter *tw, const char *file, int line, const char *key, const char *meta_json,
                const char *payload, bool with_compile_id) {
    StrBuf *b = &tw->line;
    b->len = 0;
    if (b->s) b->s[0] = 0;
    glog_prefix(tw, b, file, line, tw->now_us(tw->now_arg));
    sb_putc(b, '{');
    json_str_py(b, key);
    sb_put(b, ": ");
    sb_put(b, meta_json ? meta_json : "{}");
    if (with_compile_id) {
        if (tw->rank >= 0) sb_printf(b, ", \"rank\": %d", tw->rank);
        if (tw->frame_id >= 0)
            sb_printf(b, ", \"frame_id\": %d, \"frame_compile_id\": %d, \"attempt\": %d", tw->frame_id,
                      tw->frame_compile_id, tw->attempt);
    }
    if (payload) {
        char hex[33];
        md5_hex(payload, strlen(payload), hex);
        sb_printf(b, ", \"has_payload\": \"%s\"", hex);
    }
    sb_putc(b, '}');
    if (payload) {
        /* every payload line, including an empty last one, gets "\n\t" before it */
        const char *p = payload;
        for (;;) {
            const char *nl = strchr(p, '\n');
            sb_put(b, "\n\t");
            if (!nl) { sb_put(b, p); break; }
            sb_putn(b, p, (size_t)(nl - p));
            p = nl + 1;
        }
    }
    sb_putc(b, '\n');
    if (fwrite(b->s, 1, b->len, tw->f) != b->len) tw->failed = true;
    return tw->failed ? mi_err(tw->ctx, tw->path, 0, 0, "write failed") : 0;
}

int trace_event_at(TraceWriter *tw, const char *file, int line, const char *event_key,
                   const cJSON *metadata, const char *payload) {
    if (!tw) return 0;
    StrBuf m;
    sb_init(&m);
    if (metadata) json_dump_py(&m, metadata);
    int rc = emit(tw, file, line, event_key, metadata ? m.s : "{}", payload, true);
    sb_free(&m);
    return rc;
}

int trace_artifact_at(TraceWriter *tw, const char *file, int line, const char *name,
                      const char *encoding, const char *payload) {
    if (!tw) return 0;
    StrBuf m;
    sb_init(&m);
    sb_put(&m, "{\"name\": ");
    json_str_py(&m, name);
    sb_put(&m, ", \"encoding\": ");
    json_str_py(&m, encoding ? encoding : "string");
    sb_putc(&m, '}');
    int rc = emit(tw, file, line, "artifact", m.s, payload ? payload : "", true);
    sb_free(&m);
    return rc;
}

static int chromium_at_ts(TraceWriter *tw, const char *file, int line, const char *name,
                          const char *cat, char ph, uint64_t us) {
    char cid[48];
    compile_id_str(tw, cid, sizeof cid);
    /* payload printed like json.dumps(event, indent=0) */
    StrBuf p;
    sb_init(&p);
    sb_put(&p, "{\n\"name\": ");
    json_str_py(&p, name);
    sb_printf(&p, ",\n\"ts\": %llu.0,\n\"args\": {\n\"compile_id\": ", (unsigned long long)us);
    if (cid[0]) json_str_py(&p, cid); else sb_put(&p, "null");
    sb_printf(&p, "\n},\n\"ph\": \"%c\",\n\"cat\": ", ph == 'E' ? 'E' : 'B');
    json_str_py(&p, cat ? cat : "minductor");
    sb_put(&p, ",\n\"tid\": 0,\n\"pid\": 0\n}");
    int rc = emit(tw, file, line, "chromium_event", "{}", p.s, true);
    sb_free(&p);
    return rc;
}

int trace_chromium_at(TraceWriter *tw, const char *file, int line, const char *name,
                      const char *cat, char ph) {
    if (!tw) return 0;
    return chromium_at_ts(tw, file, line, name, cat, ph, tw->now_us(tw->now_arg));
}

int trace_chromium_span_at(TraceWriter *tw, const char *file, int line, const char *name,
                           const char *cat, uint64_t dur_us) {
    if (!tw) return 0;
    uint64_t end = tw->now_us(tw->now_arg);
    uint64_t start = end > dur_us ? end - dur_us : 0;
    int rc = chromium_at_ts(tw, file, line, name, cat, 'B', start);
    return rc ? rc : chromium_at_ts(tw, file, line, name, cat, 'E', end);
}

int trace_compilation_metrics_at(TraceWriter *tw, const char *file, int line,
                                 const char *co_name, double duration_s, const char *fail_type,
                                 const char *fail_reason, const char *restart_reason,
                                 const cJSON *extra) {
    if (!tw) return 0;
    char cid[48];
    compile_id_str(tw, cid, sizeof cid);
    cJSON *m = cJSON_CreateObject();
    if (cid[0]) cJSON_AddStringToObject(m, "compile_id", cid); else cJSON_AddNullToObject(m, "compile_id");
    if (co_name) cJSON_AddStringToObject(m, "co_name", co_name); else cJSON_AddNullToObject(m, "co_name");
    cJSON_AddNumberToObject(m, "entire_frame_compile_time_s", duration_s);
    if (fail_type) cJSON_AddStringToObject(m, "fail_type", fail_type); else cJSON_AddNullToObject(m, "fail_type");
    if (fail_reason) cJSON_AddStringToObject(m, "fail_reason", fail_reason); else cJSON_AddNullToObject(m, "fail_reason");
    cJSON *rr = cJSON_AddArrayToObject(m, "restart_reasons");
    if (restart_reason) cJSON_AddItemToArray(rr, cJSON_CreateString(restart_reason));
    if (extra)
        for (const cJSON *c = extra->child; c; c = c->next)
            if (c->string && !cJSON_HasObjectItem(m, c->string))
                cJSON_AddItemToObject(m, c->string, cJSON_Duplicate(c, 1));
    int rc = trace_event_at(tw, file, line, "compilation_metrics", m, NULL);
    cJSON_Delete(m);
    return rc;
}

int trace_intern(TraceWriter *tw, const char *filename) {
    if (!tw) return -1;
    for (int i = 0; i < tw->n_interned; i++)
        if (strcmp(tw->interned[i], filename) == 0) return i;
    int id = tw->n_interned++;
    tw->interned = mi_xrealloc(tw->interned, sizeof(char *) * (size_t)tw->n_interned);
    tw->interned[id] = mi_xstrdup(filename);
    StrBuf m;
    sb_init(&m);
    sb_putc(&m, '[');
    json_str_py(&m, filename);
    sb_printf(&m, ", %d]", id);
    /* PyTorch logs interned strings from structured.py, without a compile id */
    emit(tw, "minductor/trace/trace_writer.c", __LINE__, "str", m.s, NULL, false);
    sb_free(&m);
    return id;
}

int trace_dynamo_start_at(TraceWriter *tw, const char *file, int line, const TraceFrame *frames,
                          int n) {
    if (!tw) return 0;
    StrBuf m;
    sb_init(&m);
    int *ids = mi_xcalloc((size_t)(n > 0 ? n : 1), sizeof(int));
    for (int i = 0; i < n; i++) ids[i] = trace_intern(tw, frames[i].filename ? frames[i].filename : "?");
    sb_put(&m, "{\"stack\": [");
    for (int i = 0; i < n; i++) {
        sb_printf(&m, "%s{\"line\": %d, \"name\": ", i ? ", " : "", frames[i].line);
        json_str_py(&m, frames[i].name ? frames[i].name : "?");
        sb_printf(&m, ", \"filename\": %d", ids[i]);
        if (frames[i].loc) { sb_put(&m, ", \"loc\": "); json_str_py(&m, frames[i].loc); }
        sb_putc(&m, '}');
    }
    sb_put(&m, "]}");
    int rc = emit(tw, file, line, "dynamo_start", m.s, NULL, true);
    free(ids);
    sb_free(&m);
    return rc;
}

int trace_pass_step_at(TraceWriter *tw, const char *file, int line, int step, const char *pass,
                       const char *graph_text, const char *diff, const char *svg) {
    if (!tw) return 0;
    char name[256];
    snprintf(name, sizeof name, "minductor_pass_%02d_%s", step, pass ? pass : "pass");
    int rc = trace_artifact_at(tw, file, line, name, "string", graph_text ? graph_text : "");
    if (rc == 0 && diff) {
        char dn[300];
        snprintf(dn, sizeof dn, "%s_diff", name);
        rc = trace_artifact_at(tw, file, line, dn, "string", diff);
    }
    if (rc == 0 && svg) {
        char sn[300];
        snprintf(sn, sizeof sn, "%s_svg", name);
        rc = trace_artifact_at(tw, file, line, sn, "string", svg);
    }
    return rc;
}
