/* tlparse_passes.c — minductor/passes_<dir>.html, one page per compile with every pass:
 *
 *   - minductor's own logs (the shell's `trace on`): each step minductor_pass_NN_<pass> with
 *     its time, op-count delta, lint/numerics, each pattern match (pattern, matched nodes with
 *     their FX lines, replacement), the change list, the graph before and after side by side
 *     and its picture; a checkbox hides the passes that changed nothing (Compiler Explorer's
 *     opt-pipeline viewer). The step info is the _info artifact the shell writes first.
 *   - real PyTorch logs: the three stages whose graphs the log holds before and after
 *     (pre_grad: before/after_pre_grad_graph, joint: before/after_joint_graph, post_grad:
 *     before_post_grad_graph -> inductor_post_grad_graph), each with its op counts, the ops
 *     added/removed by kind and the graphs side by side, and the passes of each stage with
 *     their times from the chromium spans pass.<stage>.<pass>.
 *
 * Sections are rendered while the log streams (a graph text is kept only until the text after
 * it arrives), so memory holds the page, not the log. */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const stage_before[3] = {"before_pre_grad_graph", "before_joint_graph", "before_post_grad_graph"};
static const char *const stage_after[3] = {"after_pre_grad_graph", "after_joint_graph", "inductor_post_grad_graph"};
static const char *const stage_name[3] = {"pre_grad_passes", "joint_graph_passes", "post_grad_passes"};

typedef struct TlSpan { char *name; double ts, dur; bool open; int run; } TlSpan;

struct TlPasses {
    StrBuf stages, steps;        /* rendered sections */
    char *before[3];             /* a stage's before text awaiting its after */
    int nstage[3];               /* stages rendered (forward, backward, ...) */
    char *prev;                  /* the graph before the next minductor step */
    cJSON *info;                 /* the pending step's _info */
    int nsteps, nchanged;
    TlSpan *sp; int nsp;
};

static TlPasses *get(TlCompile *c) {
    if (!c->passes) {
        c->passes = mi_xcalloc(1, sizeof *c->passes);
        sb_init(&c->passes->stages);
        sb_init(&c->passes->steps);
    }
    return c->passes;
}

void tl_passes_free(TlPasses *p) {
    if (!p) return;
    sb_free(&p->stages);
    sb_free(&p->steps);
    for (int i = 0; i < 3; i++) free(p->before[i]);
    free(p->prev);
    cJSON_Delete(p->info);
    for (int i = 0; i < p->nsp; i++) free(p->sp[i].name);
    free(p->sp);
    free(p);
}

/* The FX line defining node `name` in a graph text ("    relu: ... = torch.ops..."), or NULL. */
static const char *def_line(const char *text, const char *name, size_t *len) {
    size_t nl = strlen(name);
    for (const char *p = text ? text : ""; *p;) {
        size_t n = strcspn(p, "\n");
        const char *q = p;
        while (q < p + n && *q == ' ') q++;
        if ((size_t)(p + n - q) > nl && !strncmp(q, name, nl) && (q[nl] == ':' || !strncmp(q + nl, " = ", 3))) {
            *len = (size_t)(p + n - q);
            return q;
        }
        p += n + (p[n] == '\n');
    }
    return NULL;
}

static void node_list(StrBuf *b, const cJSON *names, const char *text) {
    const cJSON *x;
    sb_put(b, "<td>");
    cJSON_ArrayForEach(x, names) {
        if (!cJSON_IsString(x)) continue;
        size_t len;
        const char *l = def_line(text, x->valuestring, &len);
        sb_put(b, "<code>");
        if (l) html_escn(b, l, len > 300 ? 300 : len); else html_esc(b, x->valuestring);
        sb_put(b, "</code><br>");
    }
    sb_put(b, "</td>");
}

/* Op counts by kind: "+2 aten.mm.default, -1 aten.addmm.default" (after minus before). */
static void op_delta(StrBuf *b, const char *before, const char *after) {
    StrBuf ha, hb;
    sb_init(&ha);
    sb_init(&hb);
    tl_op_histogram(before, &ha);
    tl_op_histogram(after, &hb);
    /* both are sorted "op count" lines: merge */
    const char *p = ha.s ? ha.s : "", *q = hb.s ? hb.s : "";
    int shown = 0;
    while (*p || *q) {
        char oa[300] = "", ob[300] = "";
        int ca = 0, cb = 0;
        if (*p) sscanf(p, "%299s %d", oa, &ca);
        if (*q) sscanf(q, "%299s %d", ob, &cb);
        int c = !*p ? 1 : !*q ? -1 : strcmp(oa, ob);
        const char *op = c <= 0 ? oa : ob;
        int d = (c > 0 ? cb : c < 0 ? -ca : cb - ca);
        if (d) {
            sb_printf(b, "%s<span class=\"%s\">%+d</span> ", shown++ ? ", " : "", d > 0 ? "add" : "del", d);
            html_esc(b, op);
        }
        if (c <= 0) p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
        if (c >= 0) q += strcspn(q, "\n") + (q[strcspn(q, "\n")] == '\n');
    }
    if (!shown) sb_put(b, "no op added or removed");
    sb_free(&ha);
    sb_free(&hb);
}

static void stage_section(TlCompile *c, TlPasses *P, int st, const char *before, const char *after, char role) {
    StrBuf *b = &P->stages;
    int k = P->nstage[st]++;
    int ob = tl_count_ops(before), oa = tl_count_ops(after);
    const char *rn = role == 'b' ? " (backward)" : role == 'f' ? " (forward)" : "";
    sb_printf(b, "<div class=\"stage %s\" id=\"stage-%s-%d\">\n<h3>%s%s", ob == oa && !strcmp(before, after) ? "nochange" : "changed",
              stage_name[st], k, stage_name[st], rn);
    if (k && !*rn) sb_printf(b, " #%d", k + 1);
    sb_printf(b, ": %d &rarr; %d ops (%+d)</h3>\n<p>", ob, oa, oa - ob);
    op_delta(b, before, after);
    sb_put(b, "</p>\n<details><summary>");
    html_esc(b, stage_before[st]);
    sb_put(b, " | ");
    html_esc(b, stage_after[st]);
    sb_put(b, " side by side</summary>\n");
    tl_side_by_side(b, before, after, stage_before[st], stage_after[st], NULL, NULL);
    sb_put(b, "</details>\n</div>\n");
    (void)c;
}

/* One minductor step: its info (may be NULL), the graph before and after, the svg link. */
static void step_section(Tl *t, TlCompile *c, TlPasses *P, const char *name, const char *after, const char *svg_rel) {
    StrBuf *b = &P->steps;
    const cJSON *info = P->info;
    const char *before = P->prev ? P->prev : "";
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(info, "changed");
    int nadd = 0, ndel = 0;
    StrBuf sbs;
    sb_init(&sbs);
    tl_side_by_side(&sbs, before, after, "before", "after", &nadd, &ndel);
    bool changed = cJSON_IsBool(ch) ? cJSON_IsTrue(ch) : (nadd || ndel);
    P->nsteps++;
    P->nchanged += changed;
    int ob = tl_count_ops(before), oa = tl_count_ops(after);
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(info, "ms");
    sb_printf(b, "<div class=\"step %s\">\n<h3>", changed ? "changed" : "nochange");
    html_esc(b, name + 15);
    if (cJSON_IsNumber(ms)) sb_printf(b, " &mdash; %.3f ms", ms->valuedouble);
    sb_printf(b, " &mdash; %d &rarr; %d ops (%+d) &mdash; %s</h3>\n", ob, oa, oa - ob, changed ? "changed" : "no change");
    const cJSON *lint = cJSON_GetObjectItemCaseSensitive(info, "lint_ok"), *num = cJSON_GetObjectItemCaseSensitive(info, "numerics");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(info, "error");
    if (info) {
        sb_printf(b, "<p>lint: <span class=\"%s\">%s</span>", cJSON_IsFalse(lint) ? "bad" : "ok", cJSON_IsFalse(lint) ? "failed" : "ok");
        if (cJSON_IsString(num)) {
            sb_printf(b, " · numerics: <span class=\"%s\">", strncmp(num->valuestring, "ok", 2) ? "bad" : "ok");
            html_esc(b, num->valuestring);
            sb_put(b, "</span>");
        }
        if (cJSON_IsString(err)) { sb_put(b, " · <span class=\"bad\">"); html_esc(b, err->valuestring); sb_put(b, "</span>"); }
        sb_put(b, "</p>\n");
    }
    const cJSON *matches = cJSON_GetObjectItemCaseSensitive(info, "matches"), *m;
    if (cJSON_GetArraySize(matches) > 0) {
        sb_printf(b, "<h4>Pattern matches (%d)</h4>\n<table class=\"matches\"><tr><th>#</th><th>pattern</th>"
                     "<th>matched nodes (before)</th><th>replacement (after)</th></tr>\n", cJSON_GetArraySize(matches));
        cJSON_ArrayForEach(m, matches) {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(m, "match");
            sb_printf(b, "<tr class=\"match\"><td>%d</td><td>", cJSON_IsNumber(k) ? (int)k->valuedouble : 0);
            const cJSON *pn = cJSON_GetObjectItemCaseSensitive(m, "pattern");
            html_esc(b, cJSON_IsString(pn) ? pn->valuestring : "?");
            sb_put(b, "</td>");
            node_list(b, cJSON_GetObjectItemCaseSensitive(m, "matched"), before);
            const cJSON *rep = cJSON_GetObjectItemCaseSensitive(m, "replacement");
            if (cJSON_GetArraySize(rep) > 0) node_list(b, rep, after);
            else sb_put(b, "<td><i>uses redirected to an existing value</i></td>");
            sb_put(b, "</tr>\n");
        }
        sb_put(b, "</table>\n");
    }
    const cJSON *chs = cJSON_GetObjectItemCaseSensitive(info, "changes"), *x;
    if (cJSON_GetArraySize(chs) > 0) {
        sb_put(b, "<details><summary>changes</summary><pre>");
        cJSON_ArrayForEach(x, chs) {
            const cJSON *kd = cJSON_GetObjectItemCaseSensitive(x, "kind"), *nd = cJSON_GetObjectItemCaseSensitive(x, "node");
            const cJSON *rs = cJSON_GetObjectItemCaseSensitive(x, "reason");
            html_esc(b, cJSON_IsString(kd) ? kd->valuestring : "?");
            sb_putc(b, ' ');
            html_esc(b, cJSON_IsString(nd) ? nd->valuestring : "?");
            sb_put(b, " (");
            html_esc(b, cJSON_IsString(rs) ? rs->valuestring : "");
            sb_put(b, ")\n");
        }
        sb_put(b, "</pre></details>\n");
    }
    sb_printf(b, "<details%s><summary>before | after (%d line(s) removed, %d added)</summary>\n", changed ? " open" : "", ndel, nadd);
    sb_put(b, sbs.s ? sbs.s : "");
    sb_put(b, "</details>\n");
    if (svg_rel) {
        sb_put(b, "<details><summary>picture</summary><img src=\"");
        html_esc(b, svg_rel);
        sb_put(b, "\" alt=\"graph after the pass\"></details>\n");
    }
    sb_put(b, "</div>\n");
    sb_free(&sbs);
    cJSON_Delete(P->info);
    P->info = NULL;
    free(P->prev);
    P->prev = mi_xstrdup(after);
    (void)t;
    (void)c;
}

static bool ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

void tl_passes_record(Tl *t, TlCompile *c, const TraceRecord *r, char role) {
    const char *n = r->name;
    if (!r->md5_ok) return;
    for (int st = 0; st < 3; st++) {
        if (!strcmp(n, stage_before[st])) {
            TlPasses *P = get(c);
            free(P->before[st]);
            P->before[st] = mi_xstrdup(r->payload);
            if (st == 2) { free(P->prev); P->prev = mi_xstrdup(r->payload); }   /* minductor's steps start here */
            c->n_stage_graphs++;
            return;
        }
        if (!strcmp(n, stage_after[st]) || (st == 2 && !strcmp(n, "after_post_grad_graph"))) {
            TlPasses *P = get(c);
            if (!P->before[st] || P->nsteps) return;   /* minductor logs: the steps say it all */
            stage_section(c, P, st, P->before[st], r->payload, role);
            free(P->before[st]);
            P->before[st] = NULL;
            return;
        }
    }
    if (strncmp(n, "minductor_pass_", 15)) return;
    TlPasses *P = get(c);
    if (ends_with(n, "_info")) {
        cJSON_Delete(P->info);
        P->info = cJSON_ParseWithLength(r->payload, r->payload_len);
    } else if (ends_with(n, "_svg")) {
        /* the picture of the step just rendered: a file beside the page, shown as <img> */
        char rel[400], img[300];
        snprintf(img, sizeof img, "%s_%s.svg", c->dir, n + 15);
        snprintf(rel, sizeof rel, "minductor/%s", img);
        tl_write_mkdir(t, rel, r->payload, r->payload_len);
        StrBuf *b = &P->steps;
        if (b->len >= 7 && !memcmp(b->s + b->len - 7, "</div>\n", 7)) {     /* inside the last step */
            b->len -= 7;
            sb_put(b, "<details><summary>picture</summary><img src=\"");
            html_esc(b, img);
            sb_put(b, "\" alt=\"graph after the pass\"></details>\n</div>\n");
        }
    } else if (!ends_with(n, "_diff")) {
        step_section(t, c, P, n, r->payload, NULL);
        c->n_pass_steps = P->nsteps;
    }
}

void tl_passes_span(TlCompile *c, const char *name, char ph, double ts) {
    TlPasses *P = get(c);
    if (ph == 'B') {
        int run = 0;
        for (int i = 0; i < P->nsp; i++) if (!strcmp(P->sp[i].name, name)) run++;
        P->sp = mi_xrealloc(P->sp, sizeof *P->sp * (size_t)(P->nsp + 1));
        P->sp[P->nsp++] = (TlSpan){mi_xstrdup(name), ts, 0, true, run};
    } else if (ph == 'E') {
        for (int i = P->nsp - 1; i >= 0; i--)
            if (P->sp[i].open && !strcmp(P->sp[i].name, name)) { P->sp[i].dur = ts - P->sp[i].ts; P->sp[i].open = false; break; }
    }
}

static const char PAGE_CSS[] =
    "table.sbs{width:100%;table-layout:fixed;border-collapse:collapse}table.sbs td{font-family:monospace;font-size:11px;"
    "white-space:pre-wrap;border:none;border-bottom:1px solid #f0f0f0}td.del{background:#fdd}td.add{background:#dfd}"
    "td.none{background:#f6f6f6}td.same{color:#555}.step,.stage{border-left:4px solid #88a;padding-left:.8em;margin:1em 0}"
    ".nochange{border-left-color:#ccc;color:#666}body.hide-same .nochange{display:none}"
    "span.add{color:#080}span.del{color:#b00}table.matches td{font-size:12px}";

void tl_passes_page(Tl *t, TlCompile *c) {
    TlPasses *P = c->passes;
    if (!P || (!P->nsteps && !P->stages.len && !P->nsp)) return;
    StrBuf b;
    sb_init(&b);
    char title[200];
    snprintf(title, sizeof title, "Passes of compile %s", c->id[0] ? c->id : "(none)");
    tl_page_begin(&b, title);
    sb_printf(&b, "<style>%s</style>\n<p><a href=\"../index.html\">index</a> · <a href=\"compile_%s.html\">compile page</a>%s%s%s</p>\n",
              PAGE_CSS, c->dir, tl_has_why(c) ? " · <a href=\"why_" : "", tl_has_why(c) ? c->dir : "",
              tl_has_why(c) ? ".html\">why (fusion decisions)</a>" : "");
    sb_put(&b, "<p><label><input type=\"checkbox\" id=\"hide\" onchange=\"document.body.classList.toggle('hide-same', this.checked)\">"
               " hide passes that changed nothing</label></p>\n");
    if (P->nsteps) {
        sb_printf(&b, "<h2>Pass steps (%d, %d changed the graph)</h2>\n", P->nsteps, P->nchanged);
        sb_put(&b, P->steps.s);
    }
    if (P->stages.len) {
        sb_put(&b, "<h2>Stages (graphs before and after each group of passes)</h2>\n");
        sb_put(&b, P->stages.s);
    }
    if (P->nsp) {
        sb_put(&b, "<h2>Pass times (chromium spans)</h2>\n<table><tr><th>pass</th><th>run</th><th>ms</th></tr>\n");
        for (int i = 0; i < P->nsp; i++) {
            sb_put(&b, "<tr><td>");
            html_esc(&b, P->sp[i].name);
            if (P->sp[i].open) sb_printf(&b, "</td><td>%d</td><td>(no end)</td></tr>\n", P->sp[i].run + 1);
            else sb_printf(&b, "</td><td>%d</td><td>%.3f</td></tr>\n", P->sp[i].run + 1, P->sp[i].dur / 1000.0);
        }
        sb_put(&b, "</table>\n");
    }
    tl_page_end(&b);
    char rel[300];
    snprintf(rel, sizeof rel, "minductor/passes_%s.html", c->dir);
    tl_write_mkdir(t, rel, b.s, b.len);
    sb_free(&b);
}
