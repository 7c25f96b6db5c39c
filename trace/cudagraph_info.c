/* cudagraph_info.c — what a TORCH_TRACE log says about CUDA graphs for one compile id, for the
 * shell's compile listing (`load LOG`): requested (fx_kwargs[cudagraphs] in the FX graph cache
 * key artifact), cudagraph_skip_reason and runtime_cudagraphify_time_us from the (runtime)
 * compilation metrics, and chromium events about cudagraphs (CUDAGraphNode.record,
 * cudagraphify.get_container, ...). The tlparse report gathers the same facts per compile
 * (trace/tlparse.c) and shows them with the events' durations. */
#define _GNU_SOURCE
#include "trace_internal.h"

#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>

/* The compile id a record is about: its own, else the metrics' compile_id field, else the
 * chromium event's args.compile_id. False when none. */
bool trace_cudagraph_compile_id(const TraceRecord *r, char *id, size_t n) {
    if (r->compile_id[0]) { snprintf(id, n, "%s", r->compile_id); return true; }
    const cJSON *cid = NULL;
    if (r->kind == TRACE_EV_METRICS || r->kind == TRACE_EV_METRICS_RUNTIME)
        cid = cJSON_GetObjectItemCaseSensitive(r->meta, "compile_id");
    if (cJSON_IsString(cid) && cid->valuestring[0]) { snprintf(id, n, "%s", cid->valuestring); return true; }
    if (r->kind == TRACE_EV_CHROMIUM && r->has_payload && r->md5_ok && strcasestr(r->payload, "cudagraph")) {
        cJSON *ev = cJSON_Parse(r->payload);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), "compile_id");
        bool ok = cJSON_IsString(c) && c->valuestring[0];
        if (ok) snprintf(id, n, "%s", c->valuestring);
        cJSON_Delete(ev);
        return ok;
    }
    return false;
}

void trace_cudagraph_note(const TraceRecord *r, TraceCompileInfo *c) {
    if (r->kind == TRACE_EV_METRICS || r->kind == TRACE_EV_METRICS_RUNTIME) {
        const cJSON *sr = cJSON_GetObjectItemCaseSensitive(r->meta, "cudagraph_skip_reason");
        if (cJSON_IsString(sr) && !c->cg_skip_reason[0]) snprintf(c->cg_skip_reason, sizeof c->cg_skip_reason, "%s", sr->valuestring);
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(r->meta, "runtime_cudagraphify_time_us");
        if (cJSON_IsNumber(rt)) { c->cg_runtime_us += rt->valuedouble; c->n_cg_runtime++; }
    } else if (r->name && !strncmp(r->name, "fx_graph_cache_", 15) && r->has_payload) {
        if (strstr(r->payload, "fx_kwargs[cudagraphs]: BoxedBool(value=True)")) c->cg_requested = 1;
        else if (strstr(r->payload, "fx_kwargs[cudagraphs]: BoxedBool(value=False)")) c->cg_requested = 0;
    } else if (r->kind == TRACE_EV_CHROMIUM && r->has_payload && r->md5_ok && strcasestr(r->payload, "cudagraph")) {
        cJSON *ev = cJSON_Parse(r->payload);
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name"), *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        /* count each event once: its begin (or an instant / complete event) */
        if (cJSON_IsString(nm) && strcasestr(nm->valuestring, "cudagraph") &&
            !(cJSON_IsString(ph) && !strcmp(ph->valuestring, "E"))) {
            c->n_cg_events++;
            const char *names = c->cg_event_names, *hit = strstr(names, nm->valuestring);
            size_t ln = strlen(nm->valuestring);
            bool seen = hit && (hit == names || hit[-1] == ' ') && (hit[ln] == 0 || hit[ln] == ',');
            size_t used = strlen(names);
            if (!seen && used + ln + 3 < sizeof c->cg_event_names)
                snprintf(c->cg_event_names + used, sizeof c->cg_event_names - used, "%s%s", used ? ", " : "", nm->valuestring);
        }
        cJSON_Delete(ev);
    }
}

const char *trace_cudagraph_summary(const TraceCompileInfo *c, char *buf, size_t n) {
    buf[0] = 0;
    if (c->cg_requested != 1 && !c->cg_skip_reason[0] && !c->n_cg_runtime && !c->n_cg_events) return buf;
    size_t k = 0;
#define PUT(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    if (c->cg_requested >= 0) PUT("%s", c->cg_requested ? "requested" : "not requested");
    if (c->cg_skip_reason[0]) PUT("%sskipped: %s", k ? "; " : "", c->cg_skip_reason);
    else if (c->cg_requested == 1) PUT("; not skipped");
    if (c->n_cg_runtime) PUT("%sruntime cudagraphify %.0f us over %d record%s", k ? "; " : "", c->cg_runtime_us, c->n_cg_runtime,
                             c->n_cg_runtime == 1 ? "" : "s");
    if (c->n_cg_events) PUT("%s%d cudagraph event%s (%s)", k ? "; " : "", c->n_cg_events, c->n_cg_events == 1 ? "" : "s", c->cg_event_names);
#undef PUT
    return buf;
}
