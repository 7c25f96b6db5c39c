/* trace_extract.c — pull graphs out of a TORCH_TRACE log for the shell's `load LOG COMPILE_ID`:
 * the payload of one artifact (e.g. "before_post_grad_graph", "aot_inference_graph") of one
 * compile id, and the list of compile ids with their artifact names and status. */
#include "trace_internal.h"

#include <stdlib.h>
#include <string.h>

/* Artifacts worth listing: payload-bearing events other than chromium/str/describe/metrics. */
static bool is_listed_artifact(const TraceRecord *r) {
    if (!r->has_payload) return false;
    switch (r->kind) {
    case TRACE_EV_ARTIFACT: case TRACE_EV_GRAPH: case TRACE_EV_OUTPUT_CODE: case TRACE_EV_GUARDS:
    case TRACE_EV_OTHER: case TRACE_EV_UNKNOWN: case TRACE_EV_SYMBOLIC:
        return true;
    default:
        return false;
    }
}

char *trace_extract_artifact(MiCtx *ctx, const char *log_path, const char *compile_id,
                             const char *artifact_name, int *payload_first_line) {
    TraceReader *rd = trace_reader_open(ctx, log_path);
    if (!rd) return NULL;
    TraceRecord r;
    int rc;
    char *out = NULL;
    bool any_cid = !compile_id || !*compile_id;
    bool saw_cid = false;
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        if (!any_cid && strcmp(r.compile_id, compile_id) != 0) continue;
        saw_cid = true;
        if (!r.has_payload || strcmp(r.name, artifact_name) != 0) continue;
        if (!r.md5_ok) {
            mi_err(ctx, log_path, (int)r.line, 0, "payload of %s (compile %s) is damaged (md5 mismatch or truncated)",
                   artifact_name, r.compile_id[0] ? r.compile_id : "none");
            break;
        }
        out = mi_xmalloc(r.payload_len + 1);
        memcpy(out, r.payload, r.payload_len + 1);
        if (payload_first_line) *payload_first_line = (int)r.line + 1;
        break;
    }
    if (!out && rc == 0) {
        if (!any_cid && !saw_cid)
            mi_err(ctx, log_path, 0, 0, "no compile id %s in this log", compile_id);
        else if (ctx->err.msg[0] == 0 || rc == 0)
            mi_err(ctx, log_path, 0, 0, "no artifact \"%s\"%s%s in this log", artifact_name,
                   any_cid ? "" : " for compile id ", any_cid ? "" : compile_id);
    }
    trace_reader_close(rd);
    return out;
}

static TraceCompileInfo *find_or_add(TraceCompileList *l, const char *id, int *cap) {
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->c[i].id, id) == 0) return &l->c[i];
    if (l->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        l->c = mi_xrealloc(l->c, sizeof *l->c * (size_t)*cap);
    }
    TraceCompileInfo *c = &l->c[l->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->status, sizeof c->status, "no metrics");
    c->cg_requested = -1;
    return c;
}

/* Status of the compile a compilation_metrics record is stamped with. PyTorch logs the metrics
 * of a restarted frame once, from the last attempt ("0/0_1"), with restart_reasons listing why the
 * earlier attempts ("0/0", ...) restarted: those earlier attempts get the restart status (see
 * trace_restart_reason); the stamped attempt is ok unless fail_type is set. */
void trace_metrics_status(const cJSON *m, int attempt, bool *failed, bool *restarted, char *status, size_t n) {
    const cJSON *ft = cJSON_GetObjectItemCaseSensitive(m, "fail_type");
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(m, "fail_reason");
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(m, "restart_reasons");
    *failed = cJSON_IsString(ft);
    *restarted = attempt <= 0 && cJSON_IsArray(rr) && cJSON_GetArraySize(rr) > 0;
    if (*failed)
        snprintf(status, n, "failed: %s: %s", ft->valuestring, cJSON_IsString(fr) ? fr->valuestring : "");
    else if (*restarted)
        trace_restart_reason(m, 0, status, n);
    else
        snprintf(status, n, "ok");
}

/* "restarted: <first line of restart_reasons[i]>" (the last reason when i is past the end). */
void trace_restart_reason(const cJSON *m, int i, char *status, size_t n) {
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(m, "restart_reasons");
    int k = cJSON_GetArraySize(rr);
    const cJSON *r0 = k ? cJSON_GetArrayItem(rr, i < k ? i : k - 1) : NULL;
    const char *s = cJSON_IsString(r0) ? r0->valuestring : "?";
    size_t len = strcspn(s, "\n");
    snprintf(status, n, "restarted: %.*s", (int)(len > 200 ? 200 : len), s);
}

/* The compile id of an earlier attempt: ("0/0_2", 1) -> "0/0_1", ("0/0_1", 0) -> "0/0". */
void trace_attempt_id(const char *cid, int attempt, char *out, size_t n) {
    size_t base = strcspn(cid, "_");
    if (attempt > 0) snprintf(out, n, "%.*s_%d", (int)base, cid, attempt);
    else snprintf(out, n, "%.*s", (int)base, cid);
}

int trace_list_compiles(MiCtx *ctx, const char *log_path, TraceCompileList *out) {
    memset(out, 0, sizeof *out);
    TraceReader *rd = trace_reader_open(ctx, log_path);
    if (!rd) return -1;
    TraceRecord r;
    int rc, cap = 0;
    int *acap = NULL;
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        char cgid[64];
        if (!r.compile_id[0]) {
            /* runtime metrics and chromium events name their compile in the payload */
            if ((r.kind == TRACE_EV_METRICS_RUNTIME || r.kind == TRACE_EV_CHROMIUM || r.kind == TRACE_EV_METRICS) &&
                trace_cudagraph_compile_id(&r, cgid, sizeof cgid)) {
                for (int i = 0; i < out->n; i++)      /* only compiles the log already named */
                    if (!strcmp(out->c[i].id, cgid)) { trace_cudagraph_note(&r, &out->c[i]); break; }
            }
            continue;
        }
        int before = out->n;
        TraceCompileInfo *c = find_or_add(out, r.compile_id, &cap);
        trace_cudagraph_note(&r, c);
        if (out->n != before) {
            acap = mi_xrealloc(acap, sizeof(int) * (size_t)cap);
            acap[out->n - 1] = 0;
        }
        int idx = (int)(c - out->c);
        if (is_listed_artifact(&r)) {
            if (c->n_artifacts == acap[idx]) {
                acap[idx] = acap[idx] ? acap[idx] * 2 : 8;
                c->artifacts = mi_xrealloc(c->artifacts, sizeof(char *) * (size_t)acap[idx]);
            }
            c->artifacts[c->n_artifacts++] = mi_xstrdup(r.name);
        }
        if (r.kind == TRACE_EV_METRICS && strcmp(r.key, "compilation_metrics") == 0) {
            c->has_metrics = true;
            trace_metrics_status(r.meta, r.attempt, &c->failed, &c->restarted, c->status, sizeof c->status);
            int nrs = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.meta, "restart_reasons"));
            for (int a = 0; nrs > 0 && a < r.attempt; a++) {       /* earlier attempts restarted */
                char id[64];
                trace_attempt_id(r.compile_id, a, id, sizeof id);
                int before2 = out->n;
                TraceCompileInfo *e = find_or_add(out, id, &cap);
                if (out->n != before2) {
                    acap = mi_xrealloc(acap, sizeof(int) * (size_t)cap);
                    acap[out->n - 1] = 0;
                }
                e->restarted = true;
                trace_restart_reason(r.meta, a, e->status, sizeof e->status);
            }
        }
    }
    free(acap);
    out->n_issues = trace_stats_failures(trace_reader_stats(rd));
    int nis = 0;
    const TraceIssue *is = trace_reader_issues(rd, &nis);
    if (nis > 0) out->first_issue = is[0];
    trace_reader_close(rd);
    if (rc < 0) { trace_compile_list_free(out); return -1; }
    return 0;
}

void trace_compile_list_free(TraceCompileList *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) {
        for (int j = 0; j < l->c[i].n_artifacts; j++) free(l->c[i].artifacts[j]);
        free(l->c[i].artifacts);
    }
    free(l->c);
    memset(l, 0, sizeof *l);
}
