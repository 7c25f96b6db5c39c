/* session_trace.c — what a shell session writes to its TORCH_TRACE log (`trace on FILE`), with
 * the event names PyTorch uses where the meaning is the same, so that tlparse-like reports read
 * it like a real compile:
 *   - each loaded graph is one compile, frame_id 0, 1, 2, ... (compile ids "0/0", "1/0"): a
 *     dynamo_start whose stack names the loaded file, then before_post_grad_graph;
 *   - each applied pass: chromium_event span "pass.post_grad_passes.<pass>" (cat dynamo_timed)
 *     with the pass's own time, plus the minductor_pass_NN_* artifacts (repl/cmd_passes.c);
 *   - lower: inductor_post_grad_graph, ir_pre_fusion and span "GraphLowering.run"; sched:
 *     ir_post_fusion, "Scheduler.__init__", minductor_fusion_decisions (every decision with its
 *     FX nodes and `why` text: the report's why page) and minductor_fusion_svg (the fusion
 *     picture with the refusals on its edges); codegen: inductor_output_code and
 *     "GraphLowering.codegen" (repl/cmd_compile.c);
 *   - when the compile ends (another load, `trace off`, `report`, quit): compilation_metrics
 *     with co_name, the summed time of the steps above, and the first failure as fail_type /
 *     fail_reason. */
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "session.h"
#include "scheduler/scheduler.h"
#include "trace/trace.h"
#include "viz/viz.h"
#include <cJSON.h>

void strace_begin_compile(Session *s) {
    TraceWriter *tw = s->ctx->trace;
    if (!tw) return;
    strace_end_compile(s);
    const Graph *g = s->graph;
    if (!g) return;
    trace_set_compile_id(tw, s->trace_frame++, 0, 0);
    s->trace_in_compile = true;
    s->trace_ns = 0;
    free(s->trace_fail);
    s->trace_fail = NULL;
    /* the "frame": the loaded file (the first word of the load arguments) */
    char file[512] = "(graph)";
    if (s->load_args) {
        const char *a = s->load_args;
        size_t n = 0;
        if (*a == '"') { a++; while (a[n] && a[n] != '"' && n + 1 < sizeof file) n++; }
        else while (a[n] && a[n] != ' ' && n + 1 < sizeof file) n++;
        memcpy(file, a, n);
        file[n] = 0;
    }
    TraceFrame fr = { file, g->class_name ? g->class_name : "forward", NULL, 1 };
    trace_dynamo_start(tw, &fr, 1);
    char *text = fx_print(g, true);
    trace_artifact(tw, "before_post_grad_graph", "string", text);
    free(text);
}

void strace_end_compile(Session *s) {
    TraceWriter *tw = s->ctx->trace;
    if (!tw || !s->trace_in_compile) return;
    s->trace_in_compile = false;
    const char *co = s->graph && s->graph->class_name ? s->graph->class_name : "forward";
    const char *reason = s->trace_fail;
    trace_compilation_metrics(tw, co, s->trace_ns / 1e9, reason ? "MinductorError" : NULL, reason, NULL, NULL);
    free(s->trace_fail);
    s->trace_fail = NULL;
}

void strace_span(Session *s, const char *name, uint64_t ns) {
    if (!s->ctx->trace || !s->trace_in_compile) return;
    s->trace_ns += ns;
    trace_chromium_span(s->ctx->trace, name, "dynamo_timed", ns / 1000);
}

void strace_fail(Session *s, const char *what, const char *reason) {
    if (!s->ctx->trace || !s->trace_in_compile || s->trace_fail) return;
    size_t n = strlen(what ? what : "") + strlen(reason ? reason : "") + 3;
    s->trace_fail = mi_xcalloc(1, n);
    snprintf(s->trace_fail, n, "%s%s%s", what ? what : "", what ? ": " : "", reason ? reason : "");
}

void strace_artifact(Session *s, const char *name, const char *text) {
    if (!s->ctx->trace || !s->trace_in_compile || !text) return;
    trace_artifact(s->ctx->trace, name, "string", text);
}

void strace_schedule(Session *s, const Schedule *sc) {
    if (!s->ctx->trace || !s->trace_in_compile || !sc) return;
    /* the picture first: the report's why page puts it above the decisions that follow it */
    VizBufGraph bg;
    VizOptions vo;
    viz_default_options(&vo);
    vo.collapse_over = s->collapse_over;
    if (!mi_interrupted(s->ctx) && compile_state_bufgraph(s, &bg, true) == 0) {   /* after Ctrl-C: no picture */
        VizGraph *vg = viz_fusion(s->ctx, &bg, &vo);
        VizRenderer *vr = vg ? session_renderer(s) : NULL;
        char *svg = vr ? viz_render_data(s->ctx, vr, vg, "svg", NULL) : NULL;   /* NULL past limit draw_nodes */
        if (svg) trace_artifact(s->ctx->trace, "minductor_fusion_svg", "string", svg);
        free(svg);
        viz_free(vg);
        compile_bufgraph_free(&bg);
    }
    mi_clear_err(s->ctx);      /* a picture too large to draw is not the schedule's failure */
    char *j = sched_decisions_json(sc);
    trace_artifact(s->ctx->trace, "minductor_fusion_decisions", "json", j);
    free(j);
}

int strace_close(Session *s) {
    int rc = 0;
    if (!s->ctx->trace) return 0;
    strace_end_compile(s);
    rc = trace_close(s->ctx->trace);
    s->ctx->trace = NULL;
    s->trace_on = false;
    s->trace_frame = 0;
    return rc;
}

/* "pattern NAME ..." -> NAME; a reason without the word is the name itself ("view_to_reshape"). */
static void pattern_of(const char *reason, char *out, size_t n) {
    const char *r = !strncmp(reason, "pattern ", 8) ? reason + 8 : reason;
    size_t len = strcspn(r, " :");
    snprintf(out, n, "%.*s", (int)len, r);
}

char *strace_step_info(Session *s, int i) {
    const PassStep *st = pm_step_record(s->pm, i);
    if (!st) return NULL;
    const Graph *before = pm_graph_at(s->pm, i), *after = pm_graph_at(s->pm, i + 1);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "pass", pm_pass_name(s->pm, i));
    cJSON_AddNumberToObject(j, "step", i + 1);
    cJSON_AddNumberToObject(j, "ms", st->ns / 1e6);
    cJSON_AddBoolToObject(j, "changed", st->changed);
    if (before) cJSON_AddNumberToObject(j, "nodes_before", before->n);
    if (after) cJSON_AddNumberToObject(j, "nodes_after", after->n);
    cJSON_AddBoolToObject(j, "lint_ok", st->lint_ok);
    if (st->checked) {
        char num[600];
        snprintf(num, sizeof num, "%s%s%s", st->numerics_ok ? "ok" : "mismatch", st->numerics_detail ? ": " : "",
                 st->numerics_detail ? st->numerics_detail : "");
        cJSON_AddStringToObject(j, "numerics", num);
    }
    if (st->error) cJSON_AddStringToObject(j, "error", st->error);
    cJSON *ch = cJSON_AddArrayToObject(j, "changes"), *ms = cJSON_AddArrayToObject(j, "matches");
    for (int k = 0; k < st->nchanges; k++) {
        const PassChange *c = &st->changes[k];
        cJSON *o = cJSON_CreateObject();
        char kind[2] = {c->kind, 0};
        cJSON_AddStringToObject(o, "kind", kind);
        cJSON_AddStringToObject(o, "node", c->node);
        cJSON_AddStringToObject(o, "reason", c->reason);
        cJSON_AddNumberToObject(o, "match", c->match);
        cJSON_AddItemToArray(ch, o);
        if (!c->match) continue;
        /* the match's entry: pattern, matched nodes ('-' and '~'), replacement ('+') */
        cJSON *m = NULL, *x;
        cJSON_ArrayForEach(x, ms)
            if ((int)cJSON_GetObjectItem(x, "match")->valuedouble == c->match) m = x;
        if (!m) {
            m = cJSON_CreateObject();
            char pat[200];
            pattern_of(c->reason, pat, sizeof pat);
            cJSON_AddNumberToObject(m, "match", c->match);
            cJSON_AddStringToObject(m, "pattern", pat);
            cJSON_AddArrayToObject(m, "matched");
            cJSON_AddArrayToObject(m, "replacement");
            cJSON_AddItemToArray(ms, m);
        }
        cJSON_AddItemToArray(cJSON_GetObjectItem(m, c->kind == '+' ? "replacement" : "matched"), cJSON_CreateString(c->node));
        if (c->kind == '~') cJSON_AddItemToArray(cJSON_GetObjectItem(m, "replacement"), cJSON_CreateString(c->node));
    }
    char *txt = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return txt;
}
