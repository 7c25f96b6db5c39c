/* tlparse_html.c — renders the report pages from the model tlparse.c built: index.html
 * (tlparse's sections: stack trie, failures, IR dumps by compile directory with cache marks,
 * chromium events, provenance; then minductor's: compile ids with status, log problems),
 * failures_and_restarts.html and compile_directory.json as tlparse writes them, the
 * compilation_metrics pages, and one page per compile under minductor/ (artifacts, metrics,
 * cudagraphs, collectives, pass steps). Everything from the log is escaped. */
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

static const char CSS[] =
    "body{font-family:sans-serif;margin:1.5em;max-width:110em}"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}"
    ".ok{color:#080}.bad{color:#b00}.warn{color:#a60}"
    ".add{background:#dfd}.del{background:#fdd}.hunk{color:#66a}"
    "ul.trie{font-family:monospace;font-size:13px}img{max-width:100%;border:1px solid #ddd}"
    ".status-missing{background:purple;color:#fff}.status-error{background:red;color:#fff}"
    ".status-empty{background:#fff;color:#000}.status-ok{background:green;color:#fff}"
    ".status-break{background:lime;color:#000}.stack-trie a{text-decoration:none}"
    ".role-f{color:#06c}.role-b{color:#a0a}small{color:#666}";

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

/* tlparse's stack-trie colours: error, break (restarted), ok, missing metrics. */
const char *tl_status_class(const TlCompile *c) {
    return c->failed ? "status-error" : c->restarted ? "status-break" : c->has_metrics ? "status-ok" : "status-missing";
}

void tl_compile_page_rel(const TlCompile *c, char *out, size_t n) {
    snprintf(out, n, "minductor/compile_%s.html", c->dir);
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
                if (c) {      /* to the compile's entry in the listing, as tlparse links */
                    char href[200];
                    snprintf(href, sizeof href, "#%s", c->key);
                    sb_printf(b, "<span class=\"%s\">", tl_status_class(c));
                    link(b, href, c->key);
                    sb_put(b, "</span>");
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

/* A link from a page under minductor/ to a file of the report. */
static void link_up(StrBuf *b, const char *url, const char *text) {
    char href[1400];
    snprintf(href, sizeof href, "../%s", url);
    link(b, href, text);
}

static const char *role_name(char r) {
    return r == 'f' ? "forward" : r == 'b' ? "backward" : r == 'j' ? "joint" : NULL;
}

/* minductor/compile_<dir>.html: status, failure, restarts, recompile reason, the artifacts (with
 * forward/backward labels where the log says), pass steps, collectives, CUDA graphs. */
static void compile_page(Tl *t, const TlCompile *c) {
    StrBuf b;
    sb_init(&b);
    char title[200], path[300];
    snprintf(title, sizeof title, "Compile %s", c->id[0] ? c->id : "(no compile id)");
    tl_page_begin(&b, title);
    sb_put(&b, "<p><a href=\"../index.html\">index</a>");
    if (c->n_pass_steps || c->n_stage_graphs) {
        sb_printf(&b, " · <a href=\"passes_%s.html\">passes</a>", c->dir);
    }
    if (tl_has_why(c)) sb_printf(&b, " · <a href=\"why_%s.html\">why (fusion decisions)</a>", c->dir);
    if (c->frame_id >= 0) sb_printf(&b, " · <a href=\"frame_%d.html\">guards and recompiles of frame %d</a>", c->frame_id, c->frame_id);
    if (t->opt->provenance) {
        sb_put(&b, " · ");
        char href[200];
        snprintf(href, sizeof href, "../provenance_tracking_%s.html", c->dir);
        link(&b, href, "provenance");
    }
    sb_put(&b, "</p>\n");
    sb_printf(&b, "<p>status: <span class=\"%s\">", status_class(c));
    html_esc(&b, c->status);
    sb_put(&b, "</span>");
    if (c->co_name) { sb_put(&b, " · function "); html_esc(&b, c->co_name); }
    if (c->has_duration) sb_printf(&b, " · %.3f s", c->duration_s);
    if (c->metrics_url) { sb_put(&b, " · "); link_up(&b, c->metrics_url, "compilation_metrics"); }
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
            sb_put(&b, "<h3>Graph</h3><img src=\"../");
            html_esc(&b, c->arts[i].url);
            sb_put(&b, "\" alt=\"graph\">\n");
        }
    sb_put(&b, "<h3>Artifacts</h3>\n<ol>\n");
    for (int i = 0; i < c->n_arts; i++) {
        const TlArtifact *a = &c->arts[i];
        sb_put(&b, "<li>");
        if (a->url) link_up(&b, a->url, a->name); else html_esc(&b, a->name);
        const char *rn = role_name(a->role);
        if (rn) sb_printf(&b, " <span class=\"role-%c\">(%s)</span>", a->role, rn);
        if (!a->md5_ok) sb_put(&b, " <span class=\"bad\">damaged payload</span>");
        sb_printf(&b, " <small>line %ld</small></li>\n", a->line);
    }
    sb_put(&b, "</ol>\n");
    if (c->n_coll) {
        sb_printf(&b, "<h3>Collectives (%d, from ", c->n_coll);
        html_esc(&b, c->coll_src);
        sb_put(&b, ")</h3><pre>");
        html_esc(&b, c->coll.s);
        sb_put(&b, "</pre>\n");
    }
    cudagraph_html(&b, c);
    tl_page_end(&b);
    tl_compile_page_rel(c, path, sizeof path);
    tl_write_mkdir(t, path, b.s, b.len);
    sb_free(&b);
}

/* compile_directory.json as tlparse writes it: keys sorted ("[0/0]", "[0/1]", ...), each
 * {"artifacts": [{"name", "number", "readable_url", "suffix", "url"}]}, 2-space indent. */
static int cmp_dir_key(const void *a, const void *b) {
    return strcmp((*(const TlDir *const *)a)->key, (*(const TlDir *const *)b)->key);
}

static void compile_directory_json(Tl *t) {
    StrBuf b;
    sb_init(&b);
    const TlDir **d = mi_xmalloc(sizeof *d * (size_t)(t->n_dirs + 1));
    for (int i = 0; i < t->n_dirs; i++) d[i] = &t->dirs[i];
    qsort(d, (size_t)t->n_dirs, sizeof *d, cmp_dir_key);
    sb_put(&b, t->n_dirs ? "{" : "{}");
    for (int i = 0; i < t->n_dirs; i++) {
        sb_put(&b, i ? ",\n  " : "\n  ");
        json_str_py(&b, d[i]->key);
        sb_put(&b, ": {\n    \"artifacts\": ");
        if (!d[i]->n) sb_put(&b, "[]");
        for (int k = 0; k < d[i]->n; k++) {
            const TlFile *f = &d[i]->f[k];
            sb_put(&b, k ? ",\n      {\n" : "[\n      {\n");
            sb_put(&b, "        \"name\": ");
            json_str_py(&b, f->name);
            sb_printf(&b, ",\n        \"number\": %d,\n        \"readable_url\": ", f->number);
            if (f->readable_url) json_str_py(&b, f->readable_url); else sb_put(&b, "null");
            sb_put(&b, ",\n        \"suffix\": ");
            json_str_py(&b, f->suffix);
            sb_put(&b, ",\n        \"url\": ");
            json_str_py(&b, f->url);
            sb_put(&b, "\n      }");
        }
        if (d[i]->n) sb_put(&b, "\n    ]");
        sb_put(&b, "\n  }");
    }
    sb_put(&b, t->n_dirs ? "\n}" : "");
    free(d);
    tl_write(t, "compile_directory.json", b.s, b.len);
    sb_free(&b);
}

/* failures_and_restarts.html (tlparse TEMPLATE_FAILURES_AND_RESTARTS): one row per restart reason
 * and per failure of every compilation_metrics record, the compile id linking to its metrics. */
static void failures_page(Tl *t) {
    StrBuf b;
    sb_init(&b);
    tl_page_begin(&b, "Failures and Restarts");
    sb_put(&b, "<p><a href=\"index.html\">index</a></p>\n<table>\n<tr> <th> Compile Id </th> <th> Failure Type </th> "
               "<th> Failure Description </th> <th> Failure Source (compilation failures only) </th> </tr>\n");
    for (int i = 0; i < t->n_breaks; i++) {
        const TlBreak *k = &t->breaks[i];
        sb_put(&b, "<tr> <td> ");
        if (k->metrics_url) {
            link(&b, k->metrics_url, k->key);
        } else html_esc(&b, k->key);
        sb_put(&b, " </td>");
        if (k->restart) {
            sb_put(&b, "<td> RestartAnalysis </td><td><pre>");
            html_esc(&b, k->reason);
            sb_put(&b, "</pre></td><td>Not availble for restarts(yet)!</td>");
        } else {
            sb_put(&b, "<td><pre>");
            html_esc(&b, k->type);
            sb_put(&b, "</pre></td><td><pre>");
            html_esc(&b, k->reason);
            sb_put(&b, "</pre></td><td><pre>");
            html_esc(&b, k->source);
            sb_put(&b, "</pre></td>");
        }
        sb_put(&b, "</tr>\n");
    }
    sb_put(&b, "</table>\n");
    if (!t->n_breaks) sb_put(&b, "<p class=\"ok\">No failures or restarts.</p>\n");
    tl_page_end(&b);
    tl_write(t, "failures_and_restarts.html", b.s, b.len);
    sb_free(&b);
}

void tl_metrics_page(Tl *t, const TraceRecord *r, TlDir *d, const char *dir, const char *key) {
    StrBuf b;
    sb_init(&b);
    const TlCompile *c = r->compile_id[0] ? tl_find(t, r->compile_id) : NULL;
    sb_put(&b, "<html>\n<head><meta charset=\"utf-8\"><title>Compilation Metrics</title>");
    sb_printf(&b, "<style>%s</style></head>\n<body>\n<h1>Compilation Info for ", CSS);
    html_esc(&b, key);
    sb_put(&b, "</h1>\n<h2>Output files:</h2>\n<ul>\n");
    for (int k = 0; k < d->n; k++) {
        const TlFile *f = &d->f[k];
        const char *sl = strrchr(f->url, '/');
        sb_put(&b, "<li>");
        link(&b, sl && !strncmp(f->url, dir, strlen(dir)) ? sl + 1 : f->url, f->name);
        sb_printf(&b, " (%d)</li>\n", f->number);
    }
    sb_put(&b, "</ul>\n<h2>Stack</h2>\n<ul class=\"trie\">\n");
    if (c && c->stack_html) sb_put(&b, c->stack_html);
    sb_put(&b, "</ul>\n<h2>Compile Time(seconds)</h2>\n<table>\n");
    static const char *const times[] = {"entire_frame_compile_time_s", "backend_compile_time_s",
                                        "inductor_compile_time_s", "code_gen_time_s", "dynamo_time_before_restart_s"};
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->meta, times[i]);
        if (!cJSON_IsNumber(v)) continue;
        sb_printf(&b, "<tr><td>%s</td><td>%g</td></tr>\n", times[i], v->valuedouble);
    }
    sb_put(&b, "</table>\n<h2>Restarts and Failures</h2>\n");
    const cJSON *ft = cJSON_GetObjectItemCaseSensitive(r->meta, "fail_type");
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(r->meta, "fail_reason");
    if (cJSON_IsString(ft)) {
        sb_put(&b, "<p>Failure Exception: <pre>");
        html_esc(&b, ft->valuestring);
        sb_put(&b, "</pre></p>\n<p>Failure Reason: <pre>");
        html_esc(&b, cJSON_IsString(fr) ? fr->valuestring : "");
        sb_put(&b, "</pre></p>\n");
    } else sb_put(&b, "<p> No failures! </p>\n");
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(r->meta, "restart_reasons"), *x;
    if (cJSON_GetArraySize(rr) > 0) {
        sb_put(&b, "<p>Restart Reasons:</p>\n<ul>\n");
        cJSON_ArrayForEach(x, rr) {
            sb_put(&b, "<li><code>");
            html_esc(&b, cJSON_IsString(x) ? x->valuestring : "?");
            sb_put(&b, "</code></li>\n");
        }
        sb_put(&b, "</ul>\n");
    } else sb_put(&b, "<p> No restarts! </p>\n");
    sb_put(&b, "<h2>All fields</h2>\n<table>\n");
    for (const cJSON *f = r->meta ? r->meta->child : NULL; f; f = f->next) {
        sb_put(&b, "<tr><td>");
        html_esc(&b, f->string);
        sb_put(&b, "</td><td>");
        if (cJSON_IsNull(f)) sb_put(&b, "<i>null</i>");
        else {
            StrBuf v;
            sb_init(&v);
            if (cJSON_IsString(f)) sb_put(&v, f->valuestring); else json_dump_py(&v, f);
            bool pre = v.len > 120 || (v.s && strchr(v.s, '\n'));
            if (pre) sb_put(&b, "<pre>");
            html_esc(&b, v.s);
            if (pre) sb_put(&b, "</pre>");
            sb_free(&v);
        }
        sb_put(&b, "</td></tr>\n");
    }
    sb_put(&b, "</table>\n</body>\n</html>\n");
    char rel[300];
    snprintf(rel, sizeof rel, "%s/compilation_metrics_%d.html", dir, t->output_count);
    if (!t->opt->no_artifact_files) tl_write_mkdir(t, rel, b.s, b.len);
    sb_free(&b);
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 8;
        d->f = mi_xrealloc(d->f, sizeof *d->f * (size_t)d->cap);
    }
    TlFile *f = &d->f[d->n++];
    memset(f, 0, sizeof *f);
    f->url = mi_xstrdup(rel);
    f->name = mi_xstrdup(strrchr(rel, '/') + 1);
    f->number = t->output_count++;
    f->suffix = "";
    f->line = r->line;
    t->n_files++;
    /* failures_and_restarts.html rows (lib.rs: restart reasons, then the failure) */
    cJSON_ArrayForEach(x, rr) {
        TlBreak *k = tl_add_break(t, key, f->url);
        k->restart = true;
        k->reason = mi_xstrdup(cJSON_IsString(x) ? x->valuestring : "?");
    }
    if (cJSON_IsString(ft)) {
        TlBreak *k = tl_add_break(t, key, f->url);
        k->type = mi_xstrdup(ft->valuestring);
        k->reason = mi_xstrdup(cJSON_IsString(fr) ? fr->valuestring : "");
        const cJSON *uf = cJSON_GetObjectItemCaseSensitive(r->meta, "fail_user_frame_filename");
        const cJSON *ul = cJSON_GetObjectItemCaseSensitive(r->meta, "fail_user_frame_lineno");
        char src[600];
        snprintf(src, sizeof src, "%s:%d", cJSON_IsString(uf) ? uf->valuestring : "N/A",
                 cJSON_IsNumber(ul) ? (int)ul->valuedouble : 0);
        k->source = mi_xstrdup(src);
    }
}

/* One IR-dumps entry as tlparse lists it: link, readable link, cache mark, number. */
static void file_item(StrBuf *b, const TlFile *f) {
    sb_put(b, "<li>");
    link(b, f->url, f->name);
    if (f->readable_url) { sb_put(b, " ("); link(b, f->readable_url, "readable_html"); sb_put(b, ")"); }
    sb_printf(b, " %s (%d)", f->suffix, f->number);
    if (f->damaged) sb_put(b, " <span class=\"bad\">damaged payload</span>");
    sb_put(b, "</li>\n");
}

int tl_render(Tl *t, const char *log_path) {
    if (t->opt->export_mode) return tl_render_export(t, log_path);
    for (int i = 0; i < t->n_c; i++) compile_page(t, &t->c[i]);
    compile_directory_json(t);
    failures_page(t);
    tl_render_extras(t);

    const TraceReadStats *st = trace_reader_stats(t->rd);
    StrBuf b;
    sb_init(&b);
    tl_page_begin(&b, "tlparse report");
    if (t->opt->custom_header_html) sb_put(&b, t->opt->custom_header_html);   /* verbatim, as tlparse */
    sb_put(&b, "<p>log: <code>");
    html_esc(&b, log_path);
    sb_put(&b, "</code>");
    if (t->rank >= 0) sb_printf(&b, " · rank %d", t->rank);
    sb_printf(&b, "</p>\n<p>%ld lines, %ld envelopes (%ld ok), %ld payload lines, %ld md5 checked, %ld problems · ",
              st->lines, st->envelopes, st->ok, st->payload_lines, st->md5_checked, trace_stats_failures(st));
    link(&b, "raw.log", "raw.log");
    sb_put(&b, " · ");
    link(&b, "raw.jsonl", "raw.jsonl");
    sb_put(&b, " · ");
    link(&b, "compile_directory.json", "compile_directory.json");
    sb_put(&b, "</p>\n");

    sb_put(&b, "<h2>Stack trie</h2>\n<p>Where compilations started; compile ids coloured by status: "
               "<span class=\"status-ok\">[Success]</span> <span class=\"status-break\">[Success with restart]</span> "
               "<span class=\"status-error\">[Error]</span> <span class=\"status-missing\">[Metrics were missing]</span></p>\n"
               "<div class=\"stack-trie\">\n");
    if (t->trie.n_kids) trie_html(&b, t, &t->trie);
    else sb_put(&b, "<p>No dynamo_start events.</p>\n");
    sb_put(&b, "</div>\n");
    if (t->n_breaks)
        sb_printf(&b, "<h2>Failures and Restarts</h2>\n<p>This run had <strong><a href=\"failures_and_restarts.html\">%d "
                      "restart(s) and/or compilation failure(s)</a></strong>.</p>\n", t->n_breaks);
    else sb_put(&b, "<p><a href=\"failures_and_restarts.html\">failures and restarts</a>: none</p>\n");

    sb_put(&b, "<h2>Compile ids</h2>\n<table><tr><th>compile id</th><th>graphs</th><th>status</th><th>function</th>"
               "<th>time (s)</th><th>artifacts</th><th>passes</th><th>recompile reason</th><th>cudagraphs</th>"
               "<th>collectives</th></tr>\n");
    for (int i = 0; i < t->n_c; i++) {
        const TlCompile *c = &t->c[i];
        char href[200];
        tl_compile_page_rel(c, href, sizeof href);
        sb_put(&b, "<tr><td>");
        link(&b, href, c->id[0] ? c->id : "(none)");
        sb_put(&b, "</td><td>");
        bool fw = false, bw = false;
        for (int j = 0; j < c->n_arts; j++) { fw |= c->arts[j].role == 'f'; bw |= c->arts[j].role == 'b'; }
        sb_put(&b, fw && bw ? "forward + backward" : bw ? "backward" : fw ? "forward" : c->n_arts ? "inference" : "");
        sb_printf(&b, "</td><td class=\"%s\">", status_class(c));
        html_esc(&b, c->status);
        sb_put(&b, "</td><td>");
        html_esc(&b, c->co_name);
        sb_put(&b, "</td><td>");
        if (c->has_duration) sb_printf(&b, "%.3f", c->duration_s);
        sb_printf(&b, "</td><td>%d</td><td>", c->n_arts);
        if (c->n_pass_steps || c->n_stage_graphs) sb_printf(&b, "<a href=\"minductor/passes_%s.html\">passes</a>", c->dir);
        if (tl_has_why(c)) sb_printf(&b, "%s<a href=\"minductor/why_%s.html\">why</a>", c->n_pass_steps || c->n_stage_graphs ? " · " : "", c->dir);
        sb_put(&b, "</td><td>");
        if (c->recompile_reason) html_esc(&b, c->recompile_reason);
        sb_put(&b, "</td><td>");
        if (c->cg_skip_reason) { sb_put(&b, "skipped: "); html_esc(&b, c->cg_skip_reason); }
        else if (c->n_cg || c->cg_requested == 1) sb_printf(&b, "yes (%d events)", c->n_cg);
        sb_put(&b, "</td><td>");
        if (c->n_coll) sb_printf(&b, "%d", c->n_coll);
        sb_put(&b, "</td></tr>\n");
    }
    sb_put(&b, "</table>\n");
    tl_index_extras(t, &b);

    sb_put(&b, "<h2>IR dumps</h2>\n<p>The files of every compile directory, in the order the log produced them "
               "(cache marks: \xe2\x9c\x85 hit, \xe2\x9d\x8c miss, \xe2\x9d\x93 bypass).</p>\n<ul>\n");
    for (int i = 0; i < t->n_dirs; i++) {
        const TlDir *d = &t->dirs[i];
        sb_put(&b, "<li><a id=\"");
        html_esc(&b, d->key);
        sb_put(&b, "\">");
        html_esc(&b, d->key);
        sb_put(&b, "</a>");
        const TlCompile *c = tl_find_key(t, d->key);
        if (c) {
            char href[200];
            tl_compile_page_rel(c, href, sizeof href);
            sb_put(&b, " · ");
            link(&b, href, "compile page");
        }
        sb_put(&b, "\n<ul>\n");
        for (int k = 0; k < d->n; k++) file_item(&b, &d->f[k]);
        sb_put(&b, "</ul>\n</li>\n");
    }
    sb_put(&b, "</ul>\n");
    if (t->n_chrome)
        sb_put(&b, "<h2>Chromium Events</h2>\n<p>PT2 generates <a href=\"chromium_events.json\">Chromium Trace Events</a> "
                   "in JSON on specific events during compilation; view them in Perfetto or chrome://tracing.</p>\n");
    if (t->opt->provenance) {
        sb_put(&b, "<h2>Provenance Tracking</h2>\n<ul>\n");
        for (int i = 0; i < t->n_dirs; i++) {
            char dn[200];
            tl_dir_name_of_key(t, &t->dirs[i], dn, sizeof dn);
            sb_printf(&b, "<li><a href='provenance_tracking_%s.html'>provenance_tracking_%s</a></li>\n", dn, dn);
        }
        sb_put(&b, "</ul>\n");
    }

    int ni;
    const TraceIssue *is = trace_reader_issues(t->rd, &ni);
    int maxl = t->opt->max_failures_listed > 0 ? t->opt->max_failures_listed : 10000;
    sb_printf(&b, "<h2 id=\"failures\">Log problems (%ld)</h2>\n", trace_stats_failures(st));
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
