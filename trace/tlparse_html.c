/* tlparse_html.c — renders the report pages from the model tlparse.c built: index.html (stack
 * trie of compile sites, compile ids with status, artifacts, log problems), one index.html per
 * compile directory (artifacts, metrics, cudagraphs, collectives, minductor pass steps),
 * failures_and_restarts.html and compile_directory.json. Everything from the log is escaped. */
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

static const char CSS[] =
    "body{font-family:sans-serif;margin:1.5em;max-width:110em}"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}"
    ".ok{color:#080}.bad{color:#b00}.warn{color:#a60}"
    ".add{background:#dfd}.del{background:#fdd}.hunk{color:#66a}"
    "ul.trie{font-family:monospace;font-size:13px}img{max-width:100%;border:1px solid #ddd}";

void tl_page_begin(StrBuf *b, const char *title) {
    sb_put(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    html_esc(b, title);
    sb_printf(b, "</title><style>%s</style></head><body>\n<h2>", CSS);
    html_esc(b, title);
    sb_put(b, "</h2>\n");
}

void tl_page_end(StrBuf *b) { sb_put(b, "</body></html>\n"); }

static void link(StrBuf *b, const char *href, const char *text) {
    sb_put(b, "<a href=\"");
    html_esc(b, href);
    sb_put(b, "\">");
    html_esc(b, text);
    sb_put(b, "</a>");
}

static const char *status_class(const TlCompile *c) {
    return c->failed ? "bad" : c->restarted ? "warn" : c->has_metrics ? "ok" : "warn";
}

static void trie_html(StrBuf *b, const Tl *t, const TlTrie *n) {
    sb_put(b, "<ul class=\"trie\">\n");
    for (int i = 0; i < n->n_kids; i++) {
        const TlTrie *k = n->kids[i];
        sb_put(b, "<li>");
        html_esc(b, k->label);
        if (k->cids.len) {
            /* links to the compile ids starting at this frame */
            const char *p = k->cids.s;
            while (*p) {
                size_t len = strcspn(p, " ");
                char id[64];
                snprintf(id, sizeof id, "%.*s", (int)(len < 63 ? len : 63), p);
                const TlCompile *c = tl_find((Tl *)t, id);
                sb_put(b, " ");
                if (c) {
                    char href[200];
                    snprintf(href, sizeof href, "%s/index.html", c->dir);
                    sb_printf(b, "<span class=\"%s\">[", status_class(c));
                    link(b, href, id);
                    sb_put(b, "]</span>");
                } else {
                    sb_put(b, "[");
                    html_esc(b, id);
                    sb_put(b, "]");
                }
                p += len;
                while (*p == ' ') p++;
            }
        }
        if (k->n_kids) trie_html(b, t, k);
        sb_put(b, "</li>\n");
    }
    sb_put(b, "</ul>\n");
}

/* Durations of cudagraph chromium events: pair each E with the latest open B of that name. */
static void cudagraph_html(StrBuf *b, const TlCompile *c) {
    bool any = c->cg_requested >= 0 || c->cg_skip_reason || c->n_cg_runtime || c->n_cg;
    sb_put(b, "<h3>CUDA graphs</h3>\n");
    if (!any) { sb_put(b, "<p>The log says nothing about CUDA graphs for this compile.</p>\n"); return; }
    sb_put(b, "<ul>\n");
    if (c->cg_requested >= 0)
        sb_printf(b, "<li>requested (fx_kwargs[cudagraphs] in the FX graph cache key): <b>%s</b></li>\n",
                  c->cg_requested ? "yes" : "no");
    if (c->cg_skip_reason) {
        sb_put(b, "<li class=\"warn\">skipped: ");
        html_esc(b, c->cg_skip_reason);
        sb_put(b, "</li>\n");
    } else if (c->cg_requested == 1 || c->n_cg)
        sb_put(b, "<li>no cudagraph_skip_reason in the metrics</li>\n");
    if (c->n_cg_runtime)
        sb_printf(b, "<li>runtime_cudagraphify_time_us: %.0f (summed over %d runtime metric record%s)</li>\n",
                  c->cg_runtime_us, c->n_cg_runtime, c->n_cg_runtime == 1 ? "" : "s");
    sb_put(b, "</ul>\n");
    if (c->n_cg) {
        sb_put(b, "<table><tr><th>event</th><th>start ts (µs)</th><th>duration (µs)</th></tr>\n");
        for (int i = 0; i < c->n_cg; i++) {
            if (c->cg[i].ph != 'B') continue;
            double dur = -1;
            for (int j = i + 1; j < c->n_cg; j++)
                if (c->cg[j].ph == 'E' && !strcmp(c->cg[j].name, c->cg[i].name)) { dur = c->cg[j].ts - c->cg[i].ts; break; }
            sb_put(b, "<tr><td>");
            html_esc(b, c->cg[i].name);
            sb_printf(b, "</td><td>%.1f</td><td>", c->cg[i].ts);
            if (dur >= 0) sb_printf(b, "%.1f", dur); else sb_put(b, "(no end)");
            sb_put(b, "</td></tr>\n");
        }
        sb_put(b, "</table>\n");
    }
}

static void compile_page(Tl *t, const TlCompile *c) {
    StrBuf b;
    sb_init(&b);
    char title[200], path[300];
    snprintf(title, sizeof title, "Compile %s", c->id[0] ? c->id : "(no compile id)");
    tl_page_begin(&b, title);
    sb_put(&b, "<p><a href=\"../index.html\">index</a></p>\n");
    sb_printf(&b, "<p>status: <span class=\"%s\">", status_class(c));
    html_esc(&b, c->status);
    sb_put(&b, "</span>");
    if (c->co_name) { sb_put(&b, " · function "); html_esc(&b, c->co_name); }
    if (c->has_duration) sb_printf(&b, " · %.3f s", c->duration_s);
    if (c->metrics_url) { sb_put(&b, " · "); link(&b, c->metrics_url, "compilation_metrics"); }
    sb_put(&b, "</p>\n");
    if (c->fail_reason || c->fail_type) {
        sb_put(&b, "<h3>Failure</h3><pre>");
        html_esc(&b, c->fail_type);
        sb_put(&b, ": ");
        html_esc(&b, c->fail_reason);
        sb_put(&b, "</pre>\n");
    }
    if (c->restart_reasons) { sb_put(&b, "<h3>Restart reasons</h3><pre>"); html_esc(&b, c->restart_reasons); sb_put(&b, "</pre>\n"); }
    if (c->recompile_reason) { sb_put(&b, "<h3>Recompile reason</h3><pre>"); html_esc(&b, c->recompile_reason); sb_put(&b, "</pre>\n"); }
    for (int i = 0; i < c->n_arts; i++)     /* the loaded graph's picture, when logged */
        if (!strcmp(c->arts[i].name, "minductor_graph_svg") && c->arts[i].url) {
            sb_put(&b, "<h3>Graph</h3><img src=\"");
            html_esc(&b, c->arts[i].url);
            sb_put(&b, "\" alt=\"graph\">\n");
        }
    sb_put(&b, "<h3>Artifacts</h3>\n<ol>\n");
    for (int i = 0; i < c->n_arts; i++) {
        const TlArtifact *a = &c->arts[i];
        sb_put(&b, "<li>");
        if (a->html) link(&b, a->html, a->name); else html_esc(&b, a->name);
        if (a->url) { sb_put(&b, " ("); link(&b, a->url, "raw"); sb_put(&b, ")"); }
        if (!a->md5_ok) sb_put(&b, " <span class=\"bad\">damaged payload</span>");
        sb_printf(&b, " <small>line %ld</small></li>\n", a->line);
    }
    sb_put(&b, "</ol>\n");
    if (c->n_pass_steps) {
        sb_printf(&b, "<h3>minductor pass steps (%d)</h3>\n", c->n_pass_steps);
        for (int i = 0; i < c->n_arts; i++) {
            const TlArtifact *a = &c->arts[i];
            if (strncmp(a->name, "minductor_pass_", 15) != 0 || !a->html) continue;
            size_t n = strlen(a->name);
            bool svg = n > 4 && !strcmp(a->name + n - 4, "_svg");
            bool diff = n > 5 && !strcmp(a->name + n - 5, "_diff");
            if (svg) {
                sb_put(&b, "<p>");
                html_esc(&b, a->name);
                sb_put(&b, "</p><img src=\"");
                html_esc(&b, a->url);
                sb_put(&b, "\" alt=\"");
                html_esc(&b, a->name);
                sb_put(&b, "\">\n");
            } else {
                sb_put(&b, "<p>");
                link(&b, a->html, a->name);
                sb_put(&b, diff ? " (diff)</p>\n" : "</p>\n");
            }
        }
    }
    if (c->n_coll) {
        sb_printf(&b, "<h3>Collectives (%d, from ", c->n_coll);
        html_esc(&b, c->coll_src);
        sb_put(&b, ")</h3><pre>");
        html_esc(&b, c->coll.s);
        sb_put(&b, "</pre>\n");
    }
    cudagraph_html(&b, c);
    tl_page_end(&b);
    snprintf(path, sizeof path, "%s/index.html", c->dir);
    char dirpath[1200];
    snprintf(dirpath, sizeof dirpath, "%s/%s", t->out, c->dir);
    if (mkdir_p(t->ctx, dirpath) == 0) tl_write(t, path, b.s, b.len);
    else t->write_failed = true;
    sb_free(&b);
}

static void compile_directory_json(Tl *t) {
    StrBuf b;
    sb_init(&b);
    sb_put(&b, "{");
    int nc = 0;
    for (int i = -1; i < t->n_c; i++) {
        const TlCompile *c = i < 0 ? &t->nocid : &t->c[i];
        if (i < 0 && c->n_arts == 0) continue;
        sb_put(&b, nc++ ? ",\n" : "\n");
        json_str_py(&b, c->id[0] ? c->id : "unknown");
        sb_put(&b, ": {\"status\": ");
        json_str_py(&b, c->status);
        sb_put(&b, ", \"artifacts\": [");
        for (int j = 0; j < c->n_arts; j++) {
            const TlArtifact *a = &c->arts[j];
            sb_put(&b, j ? ", " : "");
            sb_put(&b, "{\"name\": ");
            json_str_py(&b, a->name);
            sb_put(&b, ", \"url\": ");
            if (a->url) {
                char u[300];
                snprintf(u, sizeof u, "%s/%s", c->dir, a->url);
                json_str_py(&b, u);
            } else sb_put(&b, "null");
            sb_printf(&b, ", \"number\": %d, \"md5_ok\": %s}", a->number, a->md5_ok ? "true" : "false");
        }
        sb_put(&b, "]}");
    }
    sb_put(&b, "\n}\n");
    tl_write(t, "compile_directory.json", b.s, b.len);
    sb_free(&b);
}

static void failures_page(Tl *t) {
    StrBuf b;
    sb_init(&b);
    tl_page_begin(&b, "Failures and restarts");
    sb_put(&b, "<p><a href=\"index.html\">index</a></p>\n<table><tr><th>compile id</th><th>kind</th><th>reason</th></tr>\n");
    int n = 0;
    for (int i = 0; i < t->n_c; i++) {
        const TlCompile *c = &t->c[i];
        if (!c->failed && !c->restarted) continue;
        n++;
        char href[200];
        snprintf(href, sizeof href, "%s/index.html", c->dir);
        sb_put(&b, "<tr><td>");
        link(&b, href, c->id);
        sb_printf(&b, "</td><td class=\"%s\">%s</td><td><pre>", c->failed ? "bad" : "warn",
                  c->failed ? "Failure" : "Restart");
        if (c->failed) { html_esc(&b, c->fail_type); sb_put(&b, ": "); html_esc(&b, c->fail_reason); }
        else html_esc(&b, c->restart_reasons);
        sb_put(&b, "</pre></td></tr>\n");
    }
    sb_put(&b, "</table>\n");
    if (!n) sb_put(&b, "<p class=\"ok\">No failures or restarts.</p>\n");
    tl_page_end(&b);
    tl_write(t, "failures_and_restarts.html", b.s, b.len);
    sb_free(&b);
}

int tl_render(Tl *t, const char *log_path) {
    for (int i = 0; i < t->n_c; i++) compile_page(t, &t->c[i]);
    if (t->nocid.n_arts) compile_page(t, &t->nocid);
    compile_directory_json(t);
    failures_page(t);

    const TraceReadStats *st = trace_reader_stats(t->rd);
    StrBuf b;
    sb_init(&b);
    tl_page_begin(&b, "tlparse report");
    sb_put(&b, "<p>log: <code>");
    html_esc(&b, log_path);
    sb_printf(&b, "</code>%s", t->rank >= 0 ? "" : "");
    if (t->rank >= 0) sb_printf(&b, " · rank %d", t->rank);
    sb_printf(&b, "</p>\n<p>%ld lines, %ld envelopes (%ld ok), %ld payload lines, %ld md5 checked, %ld problems · ",
              st->lines, st->envelopes, st->ok, st->payload_lines, st->md5_checked, trace_stats_failures(st));
    link(&b, "raw.jsonl", "raw.jsonl");
    sb_put(&b, " · ");
    link(&b, "chromium_events.json", "chromium_events.json");
    sb_put(&b, " (load in Perfetto) · ");
    link(&b, "failures_and_restarts.html", "failures and restarts");
    sb_put(&b, " · ");
    link(&b, "compile_directory.json", "compile_directory.json");
    sb_put(&b, "</p>\n");

    sb_put(&b, "<h3>Stack trie (where compiles started)</h3>\n");
    if (t->trie.n_kids) trie_html(&b, t, &t->trie);
    else sb_put(&b, "<p>No dynamo_start events.</p>\n");

    sb_put(&b, "<h3>Compile ids</h3>\n<table><tr><th>compile id</th><th>status</th><th>function</th>"
               "<th>time (s)</th><th>artifacts</th><th>recompile reason</th><th>cudagraphs</th><th>collectives</th></tr>\n");
    for (int i = 0; i < t->n_c; i++) {
        const TlCompile *c = &t->c[i];
        char href[200];
        snprintf(href, sizeof href, "%s/index.html", c->dir);
        sb_put(&b, "<tr><td>");
        link(&b, href, c->id[0] ? c->id : "(none)");
        sb_printf(&b, "</td><td class=\"%s\">", status_class(c));
        html_esc(&b, c->status);
        sb_put(&b, "</td><td>");
        html_esc(&b, c->co_name);
        sb_put(&b, "</td><td>");
        if (c->has_duration) sb_printf(&b, "%.3f", c->duration_s);
        sb_printf(&b, "</td><td>%d</td><td>", c->n_arts);
        if (c->recompile_reason) html_esc(&b, c->recompile_reason);
        sb_put(&b, "</td><td>");
        if (c->cg_skip_reason) { sb_put(&b, "skipped: "); html_esc(&b, c->cg_skip_reason); }
        else if (c->n_cg || c->cg_requested == 1) sb_printf(&b, "yes (%d events)", c->n_cg);
        sb_put(&b, "</td><td>");
        if (c->n_coll) sb_printf(&b, "%d", c->n_coll);
        sb_put(&b, "</td></tr>\n");
    }
    sb_put(&b, "</table>\n");

    sb_put(&b, "<h3>Artifacts by compile id</h3>\n<ul>\n");
    for (int i = -1; i < t->n_c; i++) {
        const TlCompile *c = i < 0 ? &t->nocid : &t->c[i];
        if (i < 0 && !c->n_arts) continue;
        sb_put(&b, "<li>");
        html_esc(&b, c->id[0] ? c->id : "(no compile id)");
        sb_put(&b, "<ul>\n");
        for (int j = 0; j < c->n_arts; j++) {
            const TlArtifact *a = &c->arts[j];
            sb_put(&b, "<li>");
            if (a->html) {
                char href[400];
                snprintf(href, sizeof href, "%s/%s", c->dir, a->html);
                link(&b, href, a->name);
            } else html_esc(&b, a->name);
            if (!a->md5_ok) sb_put(&b, " <span class=\"bad\">damaged</span>");
            sb_put(&b, "</li>\n");
        }
        sb_put(&b, "</ul></li>\n");
    }
    sb_put(&b, "</ul>\n");

    int ni;
    const TraceIssue *is = trace_reader_issues(t->rd, &ni);
    int maxl = t->opt->max_failures_listed > 0 ? t->opt->max_failures_listed : 10000;
    sb_printf(&b, "<h3 id=\"failures\">Log problems (%ld)</h3>\n", trace_stats_failures(st));
    if (ni == 0) sb_put(&b, "<p class=\"ok\">No malformed lines; every payload md5 matched.</p>\n");
    else {
        sb_put(&b, "<p>");
        for (int k = 0; k < TRACE_NKINDS; k++)
            if (st->issues[k]) sb_printf(&b, "%s: %ld · ", trace_issue_kind_name((TraceIssueKind)k), st->issues[k]);
        sb_put(&b, "</p>\n<table class=\"failures\"><tr><th>line</th><th>kind</th><th>detail</th></tr>\n");
        for (int i = 0; i < ni && i < maxl; i++) {
            sb_printf(&b, "<tr class=\"failure\"><td>%ld</td><td>%s</td><td>", is[i].line,
                      trace_issue_kind_name(is[i].kind));
            html_esc(&b, is[i].detail);
            sb_put(&b, "</td></tr>\n");
        }
        sb_put(&b, "</table>\n");
        if (ni > maxl || trace_stats_failures(st) > ni) sb_put(&b, "<p>(list cut; counts above are complete)</p>\n");
    }
    tl_page_end(&b);
    tl_write(t, "index.html", b.s, b.len);
    sb_free(&b);
    return t->write_failed ? -1 : 0;
}
