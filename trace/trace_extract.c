/* trace_extract.c — pull graphs out of a TORCH_TRACE log for the shell's `load LOG COMPILE_ID`:
 * the payload of one artifact (e.g. "before_post_grad_graph", "aot_inference_graph") of one
 * compile id, and the list of compile ids with their artifact names and status. */
#define _GNU_SOURCE
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
    return trace_extract_artifact_nth(ctx, log_path, compile_id, artifact_name, 1, payload_first_line);
}

char *trace_extract_artifact_nth(MiCtx *ctx, const char *log_path, const char *compile_id,
                                 const char *artifact_name, int nth, int *payload_first_line) {
    TraceReader *rd = trace_reader_open(ctx, log_path);
    if (!rd) return NULL;
    TraceRecord r;
    int rc;
    char *out = NULL;
    bool any_cid = !compile_id || !*compile_id;
    bool saw_cid = false;
    int seen = 0;
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        if (!any_cid && strcmp(r.compile_id, compile_id) != 0) continue;
        saw_cid = true;
        if (!r.has_payload || strcmp(r.name, artifact_name) != 0) continue;
        if (++seen < nth) continue;
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
        else if (seen > 0)
            mi_err(ctx, log_path, 0, 0, "only %d \"%s\" artifact%s%s%s in this log, not %d", seen, artifact_name,
                   seen == 1 ? "" : "s", any_cid ? "" : " for compile id ", any_cid ? "" : compile_id, nth);
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

/* Per-compile bookkeeping while listing: artifact capacity and what the chromium events say
 * the artifacts being logged belong to. PyTorch compiles a training graph's forward inside
 * "compile_fx.<locals>.fw_compiler_base" and, lazily at the first backward call (after the
 * frame's compilation_metrics), its backward inside "entire_backward_compile" /
 * "compile_fx.<locals>.bw_compiler"; each inductor compile is an "inductor_compile" span whose
 * end event says "is_backward". Both are used: the span end decides, the enclosing span
 * covers logs cut before it. */
typedef struct { int cap; TraceRoleState role; } ListAux;

char trace_role_initial(const char *name, const TraceRoleState *st) {
    if (!strcmp(name, "aot_forward_graph")) return 'f';
    if (!strcmp(name, "aot_backward_graph")) return 'b';
    if (!strcmp(name, "aot_joint_graph")) return 'j';
    return st ? st->cur : 0;
}

static bool ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

bool trace_role_relevant(const char *payload, size_t n) {
    return memmem(payload, n, "inductor_compile", 16) || memmem(payload, n, "_compiler", 9) ||
           memmem(payload, n, "entire_backward_compile", 23);
}

char trace_role_event(TraceRoleState *st, const cJSON *ev, int n_artifacts, int *from) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name"), *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (!cJSON_IsString(nm) || !cJSON_IsString(ph)) return 0;
    const char *n = nm->valuestring;
    bool begin = !strcmp(ph->valuestring, "B"), end = !strcmp(ph->valuestring, "E");
    char res = 0;
    if (!strcmp(n, "entire_backward_compile") || ends_with(n, "bw_compiler")) {
        if (begin) st->cur = 'b';
        else if (end) st->cur = 0;
    } else if (ends_with(n, "fw_compiler_base") || ends_with(n, "fw_compiler")) {
        if (begin && st->cur != 'b') st->cur = 'f';
        else if (end && st->cur == 'f') st->cur = 0;
    } else if (!strcmp(n, "inductor_compile")) {
        if (begin) { st->span = n_artifacts; st->in_span = true; }
        const cJSON *ib = cJSON_GetObjectItemCaseSensitive(args, "is_backward");
        if (end && st->in_span && cJSON_IsBool(ib)) {
            *from = st->span;
            res = cJSON_IsTrue(ib) ? 'b' : 'f';
        }
        if (end) st->in_span = false;
    }
    return res;
}

/* A chromium event that marks forward/backward compilation: update the compile's state. */
static void note_role_event(const TraceRecord *r, TraceCompileList *out, ListAux *aux) {
    if (!r->has_payload || !r->md5_ok || !trace_role_relevant(r->payload, r->payload_len)) return;
    cJSON *ev = cJSON_Parse(r->payload);
    const cJSON *cid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), "compile_id");
    int ci = -1;
    if (cJSON_IsString(cid))
        for (int i = 0; i < out->n; i++)
            if (!strcmp(out->c[i].id, cid->valuestring)) { ci = i; break; }
    if (ci >= 0) {
        TraceCompileInfo *c = &out->c[ci];
        int from = 0;
        char role = trace_role_event(&aux[ci].role, ev, c->n_artifacts, &from);
        for (int a = from; role && a < c->n_artifacts; a++)
            if (trace_role_initial(c->artifacts[a], NULL) == 0) c->roles[a] = role;
    }
    cJSON_Delete(ev);
}

static TraceCompileInfo *find_or_add_aux(TraceCompileList *l, const char *id, int *cap, ListAux **aux) {
    int before = l->n;
    TraceCompileInfo *c = find_or_add(l, id, cap);
    if (l->n != before) {
        *aux = mi_xrealloc(*aux, sizeof **aux * (size_t)*cap);
        memset(&(*aux)[l->n - 1], 0, sizeof **aux);
    }
    return c;
}

int trace_list_compiles(MiCtx *ctx, const char *log_path, TraceCompileList *out) {
    memset(out, 0, sizeof *out);
    TraceReader *rd = trace_reader_open(ctx, log_path);
    if (!rd) return -1;
    TraceRecord r;
    int rc, cap = 0;
    ListAux *aux = NULL;
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        char cgid[64];
        if (!r.compile_id[0]) {
            /* runtime metrics and chromium events name their compile in the payload */
            if ((r.kind == TRACE_EV_METRICS_RUNTIME || r.kind == TRACE_EV_CHROMIUM || r.kind == TRACE_EV_METRICS) &&
                trace_cudagraph_compile_id(&r, cgid, sizeof cgid)) {
                for (int i = 0; i < out->n; i++)      /* only compiles the log already named */
                    if (!strcmp(out->c[i].id, cgid)) { trace_cudagraph_note(&r, &out->c[i]); break; }
            }
            if (r.kind == TRACE_EV_CHROMIUM) note_role_event(&r, out, aux);
            continue;
        }
        TraceCompileInfo *c = find_or_add_aux(out, r.compile_id, &cap, &aux);
        trace_cudagraph_note(&r, c);
        if (r.kind == TRACE_EV_CHROMIUM) note_role_event(&r, out, aux);
        int idx = (int)(c - out->c);
        if (is_listed_artifact(&r)) {
            if (c->n_artifacts == aux[idx].cap) {
                aux[idx].cap = aux[idx].cap ? aux[idx].cap * 2 : 8;
                c->artifacts = mi_xrealloc(c->artifacts, sizeof(char *) * (size_t)aux[idx].cap);
                c->roles = mi_xrealloc(c->roles, (size_t)aux[idx].cap);
            }
            c->roles[c->n_artifacts] = trace_role_initial(r.name, &aux[idx].role);
            c->artifacts[c->n_artifacts++] = mi_xstrdup(r.name);
        }
        if (r.kind == TRACE_EV_METRICS && strcmp(r.key, "compilation_metrics") == 0) {
            c->has_metrics = true;
            trace_metrics_status(r.meta, r.attempt, &c->failed, &c->restarted, c->status, sizeof c->status);
            int nrs = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.meta, "restart_reasons"));
            for (int a = 0; nrs > 0 && a < r.attempt; a++) {       /* earlier attempts restarted */
                char id[64];
                trace_attempt_id(r.compile_id, a, id, sizeof id);
                TraceCompileInfo *e = find_or_add_aux(out, id, &cap, &aux);
                e->restarted = true;
                trace_restart_reason(r.meta, a, e->status, sizeof e->status);
            }
        }
    }
    free(aux);
    /* roles only mean something where the log shows a backward: an inference compile also
     * goes through fw_compiler_base */
    for (int i = 0; i < out->n; i++) {
        TraceCompileInfo *c = &out->c[i];
        bool bwd = false;
        for (int a = 0; a < c->n_artifacts; a++) bwd |= c->roles[a] == 'b';
        if (!bwd && c->n_artifacts) memset(c->roles, 0, (size_t)c->n_artifacts);
    }
    out->n_issues = trace_stats_failures(trace_reader_stats(rd));
    int nis = 0;
    const TraceIssue *is = trace_reader_issues(rd, &nis);
    if (nis > 0) out->first_issue = is[0];
    trace_reader_close(rd);
    if (rc < 0) { trace_compile_list_free(out); return -1; }
    return 0;
}

bool trace_is_graph_name(const char *name) {
    return (ends_with(name, "_graph") && strncmp(name, "minductor_", 10) != 0) ||
           !strcmp(name, "optimize_ddp_split_child") || !strcmp(name, "graph_dump");
}

static int count_name(const TraceCompileInfo *c, const char *name, int upto) {
    int k = 0;
    for (int a = 0; a < upto; a++) k += !strcmp(c->artifacts[a], name);
    return k;
}

char **trace_graph_specs(const TraceCompileInfo *c, bool with_role) {
    char **v = mi_xcalloc((size_t)c->n_artifacts + 1, sizeof *v);
    int n = 0;
    for (int a = 0; a < c->n_artifacts; a++) {
        const char *nm = c->artifacts[a];
        if (!trace_is_graph_name(nm)) continue;
        char buf[300];
        int len = count_name(c, nm, c->n_artifacts) > 1
                  ? snprintf(buf, sizeof buf, "%s#%d", nm, count_name(c, nm, a) + 1)
                  : snprintf(buf, sizeof buf, "%s", nm);
        char role = c->roles ? c->roles[a] : 0;
        if (with_role && role && len > 0 && (size_t)len < sizeof buf)
            snprintf(buf + len, sizeof buf - (size_t)len, " (%s)", role == 'f' ? "forward" : role == 'b' ? "backward" : "joint");
        v[n++] = mi_xstrdup(buf);
    }
    return v;
}

bool trace_resolve_graph_spec(const TraceCompileInfo *c, const char *spec, const char **name, int *nth) {
    *name = NULL;
    *nth = 1;
    if (!strcmp(spec, "forward") || !strcmp(spec, "backward")) {
        static const char *const pref[] = {"before_post_grad_graph", "aot_forward_graph", "aot_backward_graph",
                                           "inductor_post_grad_graph", NULL};
        char want = spec[0];
        for (int p = 0; pref[p]; p++)
            for (int a = 0; a < c->n_artifacts; a++)
                if (c->roles && c->roles[a] == want && !strcmp(c->artifacts[a], pref[p])) {
                    *name = c->artifacts[a];
                    *nth = count_name(c, pref[p], a) + 1;
                    return true;
                }
        return false;
    }
    const char *hash = strchr(spec, '#');
    size_t len = hash ? (size_t)(hash - spec) : strlen(spec);
    if (hash) {
        char *end;
        long k = strtol(hash + 1, &end, 10);
        if (end == hash + 1 || *end || k < 1 || k > 100000) return false;
        *nth = (int)k;
    }
    int seen = 0;
    for (int a = 0; a < c->n_artifacts; a++)
        if (strlen(c->artifacts[a]) == len && !strncmp(c->artifacts[a], spec, len) && ++seen == *nth) {
            *name = c->artifacts[a];
            return true;
        }
    return false;
}

void trace_compile_list_free(TraceCompileList *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) {
        for (int j = 0; j < l->c[i].n_artifacts; j++) free(l->c[i].artifacts[j]);
        free(l->c[i].artifacts);
        free(l->c[i].roles);
    }
    free(l->c);
    memset(l, 0, sizeof *l);
}
