/* tlparse_guards.c — minductor/frame_<F>.html: the guards and recompiles of one frame. For
 * every compile of the frame (F/0, F/1, ...): why it was (re)compiled — the recompile_reasons
 * artifact in full —, its guards (dynamo_cpp_guards_str: the guard tree; dynamo_guards: the
 * guard code list), and what changed in the guards since the frame's previous compile, side by
 * side with added/removed counts (a recompile for a new size shows the size guard that moved). */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

/* The guard text of a record: dynamo_cpp_guards_str as it is; dynamo_guards' "code" strings,
 * one per line. NULL when neither. */
static char *guard_text(const TraceRecord *r) {
    if (!strcmp(r->name, "dynamo_cpp_guards_str")) return mi_xstrdup(r->payload);
    if (strcmp(r->name, "dynamo_guards")) return NULL;
    cJSON *j = cJSON_ParseWithLength(r->payload, r->payload_len), *g;
    StrBuf b;
    sb_init(&b);
    cJSON_ArrayForEach(g, j) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(g, "code");
        if (cJSON_IsString(code)) { sb_put(&b, code->valuestring); sb_putc(&b, '\n'); }
    }
    cJSON_Delete(j);
    sb_put(&b, "");
    return sb_take(&b);
}

void tl_guards_record(TlCompile *c, const TraceRecord *r) {
    if (!r->md5_ok) return;
    char *g = guard_text(r);
    if (g) {
        bool cpp = !strcmp(r->name, "dynamo_cpp_guards_str");
        if (cpp || !c->guards) { free(c->guards); c->guards = g; c->guards_cpp = cpp; }   /* the C++ tree wins */
        else free(g);
        return;
    }
    if (!strcmp(r->name, "recompile_reasons")) {
        cJSON *j = cJSON_ParseWithLength(r->payload, r->payload_len), *x;
        StrBuf b;
        sb_init(&b);
        if (cJSON_IsArray(j)) cJSON_ArrayForEach(x, j) {
            if (cJSON_IsString(x)) { sb_put(&b, x->valuestring); sb_putc(&b, '\n'); }
        }
        else sb_putn(&b, r->payload, r->payload_len);
        cJSON_Delete(j);
        free(c->recompile_full);
        c->recompile_full = sb_take(&b);
    }
}

/* Guard lines added and removed between two guard texts (a set difference, comments and the
 * tree's indentation kept: a guard that moved in the tree counts as changed). */
static void count_changes(const char *a, const char *b, int *added, int *removed) {
    StrBuf x;
    sb_init(&x);
    tl_side_by_side(&x, a, b, "", "", added, removed);
    sb_free(&x);
}

void tl_guards_pages(Tl *t) {
    if (t->opt->no_artifact_files) return;
    for (int i = 0; i < t->n_c; i++) {
        const TlCompile *first = &t->c[i];
        if (first->frame_id < 0 || first->id[0] == '!') continue;
        bool done = false;          /* one page per frame: made at its first compile */
        for (int k = 0; k < i && !done; k++) done = t->c[k].frame_id == first->frame_id && t->c[k].id[0] != '!';
        if (done) continue;
        StrBuf b;
        sb_init(&b);
        char title[100];
        snprintf(title, sizeof title, "Frame %d: guards and recompiles", first->frame_id);
        tl_page_begin(&b, title);
        sb_put(&b, "<style>table.sbs{width:100%;table-layout:fixed}table.sbs td{font-family:monospace;font-size:11px;"
                   "white-space:pre-wrap}td.del{background:#fdd}td.add{background:#dfd}td.none{background:#f6f6f6}"
                   "td.same{color:#555}</style>\n<p><a href=\"../index.html\">index</a></p>\n");
        const TlCompile *prev = NULL;
        int ncomp = 0;
        for (int k = i; k < t->n_c; k++) {
            const TlCompile *c = &t->c[k];
            if (c->frame_id != first->frame_id || c->id[0] == '!') continue;
            ncomp++;
            sb_printf(&b, "<h2 id=\"c-%s\">compile %s</h2>\n<p>status: ", c->dir, c->id);
            html_esc(&b, c->status);
            sb_printf(&b, " · <a href=\"compile_%s.html\">compile page</a></p>\n", c->dir);
            if (c->recompile_full) {
                sb_put(&b, "<h3>Recompile reasons</h3>\n<pre class=\"recompile\">");
                html_esc(&b, c->recompile_full);
                sb_put(&b, "</pre>\n");
            } else if (prev) sb_put(&b, "<p>No recompile_reasons in the log for this compile.</p>\n");
            if (c->guards) {
                sb_printf(&b, "<details><summary>Guards (%s)</summary><pre class=\"guards\">",
                          c->guards_cpp ? "dynamo_cpp_guards_str" : "dynamo_guards");
                html_esc(&b, c->guards);
                sb_put(&b, "</pre></details>\n");
            } else sb_put(&b, "<p>No guards in the log for this compile.</p>\n");
            if (prev && prev->guards && c->guards) {
                int add = 0, del = 0;
                count_changes(prev->guards, c->guards, &add, &del);
                sb_printf(&b, "<h3 class=\"guard-diff\">Guards changed since compile %s: %d line(s) added, %d removed</h3>\n",
                          prev->id, add, del);
                if (add || del) {
                    char tl[80], tr[80];
                    snprintf(tl, sizeof tl, "compile %s", prev->id);
                    snprintf(tr, sizeof tr, "compile %s", c->id);
                    sb_put(&b, "<details open><summary>side by side</summary>\n");
                    tl_side_by_side(&b, prev->guards, c->guards, tl, tr, NULL, NULL);
                    sb_put(&b, "</details>\n");
                }
            }
            prev = c;
        }
        sb_printf(&b, "<p>%d compile(s) of frame %d.</p>\n", ncomp, first->frame_id);
        tl_page_end(&b);
        char rel[100];
        snprintf(rel, sizeof rel, "minductor/frame_%d.html", first->frame_id);
        tl_write_mkdir(t, rel, b.s, b.len);
        sb_free(&b);
    }
}
