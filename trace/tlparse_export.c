/* tlparse_export.c — tlparse -e: the report of a torch.export log (lib.rs, config.export).
 * Only exported_program becomes a file (exported_program_<N>.txt); the index says whether the
 * export succeeded and lists its problems:
 *   guard_added with prefix "eval"       "Guard Evaluated" (a guard export evaluated: may have
 *                                         caused a constraint violation)
 *   propagate_real_tensors_provenance    "Data Dependent Error" (an expression export could not
 *                                         decide was specialized and asserted)
 *   missing_fake_kernel                  "Missing Fake Kernel"
 *   mismatched_fake_kernel               "Mismatched Fake Kernel"
 * The first two also get symbolic_guard_information_<N>.html (the expression, user and framework
 * stacks, frame locals) in the record's compile directory. No raw.log, raw.jsonl,
 * compile_directory.json, failures_and_restarts.html or chromium_events.json, as in tlparse. */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mstr(const cJSON *m, const char *k) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(m, k);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static void add_failure(Tl *t, const char *type, const char *reason_html, const char *info_html) {
    TlBreak *k = tl_add_break(t, "", NULL);
    k->type = mi_xstrdup(type);
    k->reason = mi_xstrdup(reason_html);
    k->source = mi_xstrdup(info_html);
}

/* A stack (list of frames {filename (interned id or name), line, name}) as list items. */
static void stack_items(Tl *t, StrBuf *b, const cJSON *stack) {
    const cJSON *fr;
    sb_put(b, "<ul>\n");
    cJSON_ArrayForEach(fr, stack) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(fr, "filename");
        const cJSON *ln = cJSON_GetObjectItemCaseSensitive(fr, "line");
        const char *file = cJSON_IsNumber(fn) ? trace_reader_intern(t->rd, (long)fn->valuedouble)
                           : cJSON_IsString(fn) ? fn->valuestring : NULL;
        char line[800];
        snprintf(line, sizeof line, "%s:%d in %s", file ? file : "(unknown)", cJSON_IsNumber(ln) ? (int)ln->valuedouble : 0,
                 mstr(fr, "name") ? mstr(fr, "name") : "?");
        sb_put(b, "<li>");
        html_esc(b, line);
        sb_put(b, "</li>\n");
    }
    sb_put(b, "</ul>\n");
}

/* symbolic_guard_information_<N>.html for a guard record; returns its path (malloc'd). */
static char *guard_page(Tl *t, const TraceRecord *r) {
    char key[80], dir[96];
    tl_key_dir(r, key, sizeof key, dir, sizeof dir);
    StrBuf b;
    sb_init(&b);
    sb_put(&b, "<html><head><meta charset=\"utf-8\"><title>Symbolic guard information</title></head><body>\n<h2>");
    html_esc(&b, mstr(r->meta, "expr") ? mstr(r->meta, "expr") : "(no expression)");
    sb_put(&b, "</h2>\n<h3>User Stack</h3>\n");
    stack_items(t, &b, cJSON_GetObjectItemCaseSensitive(r->meta, "user_stack"));
    sb_put(&b, "<h3>Framework Stack</h3>\n");
    stack_items(t, &b, cJSON_GetObjectItemCaseSensitive(r->meta, "stack"));
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(r->meta, "frame_locals");
    for (const char *part = "locals"; part; part = strcmp(part, "locals") ? NULL : "symbols") {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(fl, part);
        if (!cJSON_IsObject(m)) continue;
        sb_printf(&b, "<h3>%s</h3><pre>\n", !strcmp(part, "locals") ? "Locals" : "Symbols");
        for (const cJSON *x = m->child; x; x = x->next) {
            if (!cJSON_IsString(x)) continue;
            sb_put(&b, "    ");
            html_esc(&b, x->string);
            sb_put(&b, ": ");
            html_esc(&b, x->valuestring);
            sb_putc(&b, '\n');
        }
        sb_put(&b, "</pre>\n");
    }
    sb_put(&b, "</body></html>\n");
    char rel[300];
    snprintf(rel, sizeof rel, "%s/symbolic_guard_information_%d.html", dir, t->output_count);
    tl_write_mkdir(t, rel, b.s, b.len);
    sb_free(&b);
    TlDir *d = tl_dir_get(t, key, dir);
    d->f = mi_xrealloc(d->f, sizeof *d->f * (size_t)(d->n + 1));
    d->cap = d->n + 1;
    TlFile *f = &d->f[d->n++];
    memset(f, 0, sizeof *f);
    f->url = mi_xstrdup(rel);
    f->name = mi_xstrdup(strrchr(rel, '/') + 1);
    f->number = t->output_count++;
    f->suffix = "";
    f->line = r->line;
    t->n_files++;
    return mi_xstrdup(rel);
}

void tl_export_record(Tl *t, const TraceRecord *r) {
    StrBuf reason;
    sb_init(&reason);
    if (!strcmp(r->key, "guard_added") || !strcmp(r->key, "propagate_real_tensors_provenance")) {
        bool guard = !strcmp(r->key, "guard_added");
        const char *prefix = mstr(r->meta, "prefix");
        if (guard && (!prefix || strcmp(prefix, "eval"))) { sb_free(&reason); return; }
        const char *expr = mstr(r->meta, "expr");
        if (guard) {
            sb_put(&reason, "When exporting, the following guard was evaluated <code>");
            html_esc(&reason, expr ? expr : "?");
            sb_put(&reason, "</code>. This might've resulted in a constraint violation error.");
        } else {
            sb_put(&reason, "When exporting, we were unable to figure out if the expression <code>");
            html_esc(&reason, expr ? expr : "?");
            sb_put(&reason, "</code> always holds.<br> As a result, it was specialized to evaluate to <code>");
            html_esc(&reason, mstr(r->meta, "result") ? mstr(r->meta, "result") : "?");
            sb_put(&reason, "</code>, and asserts were inserted into the graph.");
        }
        char *page = guard_page(t, r);
        StrBuf info;
        sb_init(&info);
        sb_put(&info, "Please click <a href='");
        html_esc(&info, page);
        sb_put(&info, "'>here</a> for more information.");
        add_failure(t, guard ? "Guard Evaluated" : "Data Dependent Error", reason.s, info.s);
        sb_free(&info);
        free(page);
    } else if (!strcmp(r->key, "missing_fake_kernel") || !strcmp(r->key, "mismatched_fake_kernel")) {
        bool missing = r->key[1] == 'i';
        sb_put(&reason, "<code>torch.ops.");
        html_esc(&reason, mstr(r->meta, "op") ? mstr(r->meta, "op") : "?");
        if (missing) sb_put(&reason, "</code> is missing a fake kernel implementation");
        else {
            sb_put(&reason, "</code> has a fake kernel implementation, but it has incorrect behavior, based on the "
                            "real kernel.<br> The reason for the mismatch is: ");
            html_esc(&reason, mstr(r->meta, "reason") ? mstr(r->meta, "reason") : "?");
        }
        add_failure(t, missing ? "Missing Fake Kernel" : "Mismatched Fake Kernel", reason.s,
                    "Write a fake (meta) kernel for the op: torch.library.register_fake.");
    }
    sb_free(&reason);
}

int tl_render_export(Tl *t, const char *log_path) {
    StrBuf b;
    sb_init(&b);
    tl_page_begin(&b, "Exported program report");
    if (t->opt->custom_header_html) sb_put(&b, t->opt->custom_header_html);
    sb_put(&b, "<p>log: <code>");
    html_esc(&b, log_path);
    sb_put(&b, "</code></p>\n");
    const char *ep = NULL;
    for (int i = 0; i < t->n_dirs && !ep; i++)
        for (int k = 0; k < t->dirs[i].n && !ep; k++)
            if (strstr(t->dirs[i].f[k].url, "exported_program")) ep = t->dirs[i].f[k].url;
    if (!t->n_breaks) sb_put(&b, "<h2 class=\"ok\">Export succeeded</h2>\n");
    else sb_printf(&b, "<h2 class=\"bad\">Export failed: %d problem(s)</h2>\n", t->n_breaks);
    if (ep) { sb_put(&b, "<p><a href=\""); html_esc(&b, ep); sb_put(&b, "\">exported program</a></p>\n"); }
    if (t->n_breaks) {
        sb_put(&b, "<table>\n<tr><th>Failure Type</th><th>Reason</th><th>Additional Info</th></tr>\n");
        for (int i = 0; i < t->n_breaks; i++) {
            /* reason and info were built from escaped log text (HTML on purpose, as tlparse) */
            sb_put(&b, "<tr class=\"export-failure\"><td>");
            html_esc(&b, t->breaks[i].type);
            sb_printf(&b, "</td><td><pre>%s</pre></td><td><pre>%s</pre></td></tr>\n", t->breaks[i].reason,
                      t->breaks[i].source);
        }
        sb_put(&b, "</table>\n");
    }
    sb_put(&b, "<h2>Files</h2>\n<ul>\n");
    for (int i = 0; i < t->n_dirs; i++) {
        sb_put(&b, "<li>");
        html_esc(&b, t->dirs[i].key);
        sb_put(&b, "<ul>\n");
        for (int k = 0; k < t->dirs[i].n; k++) {
            sb_put(&b, "<li><a href=\"");
            html_esc(&b, t->dirs[i].f[k].url);
            sb_put(&b, "\">");
            html_esc(&b, t->dirs[i].f[k].name);
            sb_printf(&b, "</a> (%d)</li>\n", t->dirs[i].f[k].number);
        }
        sb_put(&b, "</ul></li>\n");
    }
    sb_put(&b, "</ul>\n");
    tl_page_end(&b);
    tl_write(t, "index.html", b.s, b.len);
    sb_free(&b);
    char p[1200];
    snprintf(p, sizeof p, "%s/chromium_events.json", t->out);
    unlink(p);
    return t->write_failed ? -1 : 0;
}
