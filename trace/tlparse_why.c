/* tlparse_why.c — minductor/why_<dir>.html: why the scheduler fused or refused each pair, one
 * page per compile of a shell session's log (`trace on FILE` ... `sched`), linked from the
 * compile page and the index.
 *
 * The shell writes, after each schedule, minductor_fusion_svg (the fusion picture, refused
 * edges labelled) and then minductor_fusion_decisions (core/scheduler/sched_explain.c
 * sched_decisions_json: every decision the fusion rounds recorded, the nodes of both sides with
 * their FX nodes, and the text the shell's `why X Y` prints for a representative pair). This file
 * only renders them, so the page says what `sched` and `why` say:
 *
 *   #  decision  group a                       group b                   score  rule
 *   4  refused   buf0 (op0): var_mean          buf2 (op2): clone, view   1152   memory deps did not match; ...
 *                buf1 (op1): var_mean                                         > why buf0 buf2
 *
 * Each schedule of the compile is one section (the shell may schedule again after `set fusion
 * off`); the picture is inline SVG, so its edges' tooltips (Inductor's full text) work. */
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

struct TlWhy {
    StrBuf sections;
    char *svg;           /* the picture awaiting its decisions */
    int n;               /* schedules rendered */
};

void tl_why_free(TlWhy *w) {
    if (!w) return;
    sb_free(&w->sections);
    free(w->svg);
    free(w);
}

bool tl_has_why(const TlCompile *c) { return c->why && c->why->n; }

static const char *str_of(const cJSON *o, const char *k) {
    const cJSON *x = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(x) ? x->valuestring : "";
}
static double num_of(const cJSON *o, const char *k) {
    const cJSON *x = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

/* One side's nodes: "buf0 (op0): var_mean" per line, "and N more" past the list. */
static void side_cell(StrBuf *b, const cJSON *d, const char *key, const char *count) {
    const cJSON *x, *arr = cJSON_GetObjectItem(d, key);
    int shown = 0;
    sb_put(b, "<td class=\"side\">");
    cJSON_ArrayForEach(x, arr) {
        if (shown++) sb_put(b, "<br>");
        html_esc(b, str_of(x, "buf"));
        sb_put(b, " (");
        html_esc(b, str_of(x, "op"));
        sb_put(b, "): ");
        const cJSON *fx = cJSON_GetObjectItem(x, "fx"), *f;
        int k = 0;
        cJSON_ArrayForEach(f, fx) if (cJSON_IsString(f)) { if (k++) sb_put(b, ", "); sb_printf(b, "<b>"); html_esc(b, f->valuestring); sb_put(b, "</b>"); }
        if (!k) sb_put(b, "<i>no FX node</i>");
    }
    int n = (int)num_of(d, count);
    if (n > shown) sb_printf(b, "<br><i>and %d more node(s)</i>", n - shown);
    sb_put(b, "</td>");
}

/* The picture logged just before the decisions (inline SVG: its edge tooltips work). */
static void picture(TlWhy *w) {
    StrBuf *b = &w->sections;
    if (w->svg) {
        const char *svg = strstr(w->svg, "<svg");
        sb_put(b, "<details open><summary>fusion picture (a refused pair's edge in red with Inductor's reason; "
                  "hover it for the whole text)</summary>\n<div class=\"pic\">");
        sb_put(b, svg ? svg : "");
        sb_put(b, "</div></details>\n");
        free(w->svg);
        w->svg = NULL;
    }
}

/* A schedule's section from its decisions JSON: kernels, decisions, then the picture. */
static void section(TlWhy *w, const TraceRecord *r, const cJSON *j) {
    StrBuf *b = &w->sections;
    const cJSON *ds = cJSON_GetObjectItem(j, "decisions"), *ks = cJSON_GetObjectItem(j, "kernels"), *d, *k;
    int nd = cJSON_GetArraySize(ds), nf = 0;
    cJSON_ArrayForEach(d, ds) nf += !strcmp(str_of(d, "verdict"), "fused");
    w->n++;
    sb_printf(b, "<h2 id=\"s%d\">Schedule %d (log line %ld, %s): %d kernel(s), %d decision(s): %d fused, %d refused</h2>\n", w->n,
              w->n, r->line, str_of(j, "device"), cJSON_GetArraySize(ks), nd, nf, nd - nf);
    if (cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")))
        sb_put(b, "<p class=\"note\">The scheduler made more decisions than it keeps: these are the first ones.</p>\n");
    sb_put(b, "<table class=\"kernels\"><tr><th>kernel</th><th>buffers</th></tr>\n");
    cJSON_ArrayForEach(k, ks) {
        sb_put(b, "<tr><td>");
        html_esc(b, str_of(k, "name"));
        sb_put(b, cJSON_IsTrue(cJSON_GetObjectItem(k, "extern")) ? " (extern call)</td><td>" : "</td><td>");
        const cJSON *x;
        int i = 0;
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(k, "buffers")) if (cJSON_IsString(x)) { if (i++) sb_put(b, " "); html_esc(b, x->valuestring); }
        sb_put(b, "</td></tr>\n");
    }
    sb_put(b, "</table>\n");
    if (!nd) {
        sb_put(b, "<p>No pair was tried (fusion off, or no two groups share a buffer).</p>\n");
        picture(w);
        return;
    }
    sb_put(b, "<table class=\"why\"><tr><th>#</th><th>decision</th><th>group a: buffer (node): FX nodes</th>"
              "<th>group b</th><th>score (bytes)</th><th>rule (Inductor's words for a refusal) and the shell's <code>why</code></th></tr>\n");
    cJSON_ArrayForEach(d, ds) {
        bool fused = !strcmp(str_of(d, "verdict"), "fused");
        sb_printf(b, "<tr id=\"s%d-d%d\" class=\"%s\"><td>%d</td><td>%s</td>", w->n, (int)num_of(d, "n"), fused ? "fused" : "refused",
                  (int)num_of(d, "n"), fused ? "fused" : "refused");
        side_cell(b, d, "a_nodes", "a_count");
        side_cell(b, d, "b_nodes", "b_count");
        sb_printf(b, "<td>%.0f</td><td>", num_of(d, "score"));
        html_esc(b, str_of(d, "reason"));
        const cJSON *why = cJSON_GetObjectItem(d, "why");
        if (cJSON_GetArraySize(why) == 2) {
            const cJSON *x = cJSON_GetArrayItem(why, 0), *y = cJSON_GetArrayItem(why, 1);
            sb_put(b, "<details><summary>why ");
            html_esc(b, cJSON_IsString(x) ? x->valuestring : "");
            sb_put(b, " ");
            html_esc(b, cJSON_IsString(y) ? y->valuestring : "");
            sb_put(b, "</summary><pre>");
            html_esc(b, str_of(d, "explain"));
            sb_put(b, "</pre></details>");
        }
        sb_put(b, "</td></tr>\n");
    }
    sb_put(b, "</table>\n");
    picture(w);
}

void tl_why_record(TlCompile *c, const TraceRecord *r) {
    bool svg = !strcmp(r->name, "minductor_fusion_svg"), dec = !strcmp(r->name, "minductor_fusion_decisions");
    if ((!svg && !dec) || !r->md5_ok) return;
    if (!c->why) {
        c->why = mi_xcalloc(1, sizeof *c->why);
        sb_init(&c->why->sections);
    }
    TlWhy *w = c->why;
    if (svg) {
        free(w->svg);
        w->svg = mi_xstrdup(r->payload);
        return;
    }
    cJSON *j = cJSON_ParseWithLength(r->payload, r->payload_len);
    if (cJSON_IsObject(j)) section(w, r, j);
    else sb_printf(&w->sections, "<p class=\"note\">log line %ld: minductor_fusion_decisions is not a JSON object</p>\n", r->line);
    cJSON_Delete(j);
}

static const char PAGE_CSS[] =
    "table.why td{vertical-align:top;font-size:12px}table.why{width:100%}td.side{font-family:monospace;max-width:26em;overflow-wrap:anywhere}"
    "tr.fused td:nth-child(2){color:#080;font-weight:bold}tr.refused td:nth-child(2){color:#cc4125;font-weight:bold}"
    "body.only-refused tr.fused{display:none}div.pic{overflow:auto;max-height:80vh;border:1px solid #ddd}div.pic svg{max-width:100%;height:auto}"
    "table.kernels td{font-family:monospace;font-size:12px}p.note{color:#a60}";

void tl_why_pages(Tl *t) {
    for (int i = 0; i < t->n_c; i++) {
        TlCompile *c = &t->c[i];
        if (!c->why || !c->why->n) continue;
        StrBuf b;
        sb_init(&b);
        char title[200];
        snprintf(title, sizeof title, "Why: fusion decisions of compile %s", c->id[0] ? c->id : "(none)");
        tl_page_begin(&b, title);
        sb_printf(&b, "<style>%s</style>\n<p><a href=\"../index.html\">index</a> · <a href=\"compile_%s.html\">compile page</a>", PAGE_CSS,
                  c->dir);
        if (c->n_pass_steps || c->n_stage_graphs) sb_printf(&b, " · <a href=\"passes_%s.html\">passes</a>", c->dir);
        sb_put(&b, "</p>\n<p>Every pair of groups the scheduler tried to fuse, in the order it tried them (best score first "
                   "in each round), as the shell's <code>sched</code> lists them: fused, or refused with Inductor's WhyNoFuse "
                   "text (scheduler.py; minductor's own finding after \";\"), naming the FX nodes of both sides. Under each "
                   "rule, what the shell's <code>why</code> prints for the pair.</p>\n<p><label><input type=\"checkbox\" "
                   "onchange=\"document.body.classList.toggle('only-refused', this.checked)\"> show only refusals</label></p>\n");
        sb_put(&b, c->why->sections.s ? c->why->sections.s : "");
        tl_page_end(&b);
        char rel[300];
        snprintf(rel, sizeof rel, "minductor/why_%s.html", c->dir);
        tl_write_mkdir(t, rel, b.s, b.len);
        sb_free(&b);
    }
}
