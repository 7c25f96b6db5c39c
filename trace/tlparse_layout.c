/* tlparse_layout.c — the files tlparse writes for each record, named exactly as its parsers
 * name them (meta-pytorch/tlparse src/parsers.rs, lib.rs), so that scripts written against
 * tlparse's output directory work on ours. tlparse.c calls tl_layout_record() once per record;
 * what the rules are (directory names, the running output number, which event gives which
 * file, payloads/<md5>.txt, cache marks) is listed in trace/README.md, "Output layout".
 *
 * Differences, on purpose: names from the log (artifact names, has_payload) are made safe for
 * the file system first (tlparse would create subdirectories for a "/" in them). */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- keys and directories */

/* CompileId's Display and as_directory_name (tlparse types.rs). A record whose id fields do not
 * deserialize has no compile id there: key "unknown", directory unknown_<line>. The key
 * collapses a missing attempt to 0 when frame_compile_id is present; the directory does not. */
void tl_key_dir(const TraceRecord *r, char *key, size_t kn, char *dir, size_t dn) {
    if (r->bad_compile_id) {
        snprintf(key, kn, "unknown");
        snprintf(dir, dn, "unknown_%ld", r->line);
        return;
    }
    char ca[16] = "-", fr[16] = "-", fc[16] = "-", at[16] = "-";
    if (r->compiled_autograd_id >= 0) snprintf(ca, sizeof ca, "%d", r->compiled_autograd_id);
    if (r->frame_id >= 0) snprintf(fr, sizeof fr, "%d", r->frame_id);
    if (r->frame_compile_id >= 0) snprintf(fc, sizeof fc, "%d", r->frame_compile_id);
    if (r->attempt >= 0) snprintf(at, sizeof at, "%d", r->attempt);
    snprintf(dir, dn, "%s_%s_%s_%s", ca, fr, fc, at);
    int attempt = r->attempt >= 0 ? r->attempt : 0;
    char pre[24] = "", suf[16] = "";
    if (r->compiled_autograd_id >= 0) snprintf(pre, sizeof pre, "!%d/", r->compiled_autograd_id);
    if (attempt != 0) snprintf(suf, sizeof suf, "_%d", attempt);
    snprintf(key, kn, "[%s%s/%s%s]", pre, fr, fc, suf);
}

TlDir *tl_dir_get(Tl *t, const char *key, const char *dirname) {
    if (t->n_dirs && t->last_dir < t->n_dirs && !strcmp(t->dirs[t->last_dir].key, key))
        return &t->dirs[t->last_dir];
    for (int i = t->n_dirs - 1; i >= 0; i--)
        if (!strcmp(t->dirs[i].key, key)) { t->last_dir = i; return &t->dirs[i]; }
    if (t->n_dirs == t->cap_dirs) {
        t->cap_dirs = t->cap_dirs ? 2 * t->cap_dirs : 16;
        t->dirs = mi_xrealloc(t->dirs, sizeof *t->dirs * (size_t)t->cap_dirs);
    }
    TlDir *d = &t->dirs[t->n_dirs];
    memset(d, 0, sizeof *d);
    snprintf(d->key, sizeof d->key, "%s", key);
    snprintf(d->dirname, sizeof d->dirname, "%s", dirname);
    t->last_dir = t->n_dirs++;
    return d;
}

void tl_dirs_free(Tl *t) {
    for (int i = 0; i < t->n_dirs; i++) {
        for (int k = 0; k < t->dirs[i].n; k++) {
            TlFile *f = &t->dirs[i].f[k];
            free(f->url); free(f->name); free(f->readable_url);
        }
        free(t->dirs[i].f);
    }
    free(t->dirs);
    t->dirs = NULL;
    t->n_dirs = t->cap_dirs = 0;
}

const char *tl_cache_suffix(const char *name) {
    if (strstr(name, "cache_miss")) return "\xe2\x9d\x8c";          /* ❌ */
    if (strstr(name, "cache_hit")) return "\xe2\x9c\x85";           /* ✅ */
    if (strstr(name, "cache_bypass")) return "\xe2\x9d\x93";        /* ❓ */
    return "";
}

static TlFile *add_entry(TlDir *d, const char *url, const char *name, int number) {
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 8;
        d->f = mi_xrealloc(d->f, sizeof *d->f * (size_t)d->cap);
    }
    TlFile *f = &d->f[d->n++];
    memset(f, 0, sizeof *f);
    f->url = mi_xstrdup(url);
    f->name = mi_xstrdup(name);
    f->number = number;
    f->suffix = tl_cache_suffix(url);
    return f;
}

/* ---------------------------------------------------------------- which file for which record */

typedef enum {
    OUT_NONE,
    OUT_PAYLOAD,        /* the payload as it is (tlparse PayloadFile) */
    OUT_JSON,           /* the payload pretty-printed with sorted keys (PayloadReformatFile) */
    OUT_GUARDS,         /* dynamo_guards.html, rendered from the payload's JSON list */
    OUT_CODE,           /* inductor_output_code_<stem>.html, highlighted */
    OUT_METRICS,        /* <event>.html: the metrics as a table */
    OUT_DUMP,           /* dump_file/<name>.html, no output number (GlobalFile) */
    OUT_LINK,           /* a link entry, no file */
    OUT_FAIL            /* a parser error (fail_parser): no file */
} OutKind;

static const char *const sentinel_graphs[] = {
    "optimize_ddp_split_graph", "compiled_autograd_graph", "aot_forward_graph", "aot_backward_graph",
    "aot_inference_graph", "aot_joint_graph", "inductor_post_grad_graph", "inductor_pre_grad_graph",
    "dynamo_cpp_guards_str", "dynamo_output_graph",
};

static const char *meta_str(const TraceRecord *r, const char *k) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(r->meta, k);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* The parser tlparse runs for the record (export mode: only exported_program) and the file
 * name it asks for, before the "_<N>" suffix: stem + ext. */
static OutKind rule_for(const Tl *t, const TraceRecord *r, char *stem, size_t sn, const char **ext) {
    const char *k = r->key;
    char safe[256];
    *ext = ".txt";
    if (t->opt->export_mode) {
        if (strcmp(k, "exported_program")) return OUT_NONE;
        snprintf(stem, sn, "exported_program");
        return OUT_PAYLOAD;
    }
    for (size_t i = 0; i < sizeof sentinel_graphs / sizeof *sentinel_graphs; i++)
        if (!strcmp(k, sentinel_graphs[i])) { snprintf(stem, sn, "%s", k); return OUT_PAYLOAD; }
    if (!strcmp(k, "graph_dump") || !strcmp(k, "optimize_ddp_split_child")) {
        const char *nm = meta_str(r, "name");
        if (!nm) return OUT_FAIL;
        safe_filename(nm, safe, sizeof safe);
        if (!strcmp(k, "graph_dump")) snprintf(stem, sn, "%s", safe);
        else snprintf(stem, sn, "optimize_ddp_split_child_%s", safe);
        return OUT_PAYLOAD;
    }
    if (!strcmp(k, "dynamo_guards")) { snprintf(stem, sn, "dynamo_guards"); *ext = ".html"; return OUT_GUARDS; }
    if (!strcmp(k, "inductor_output_code")) {
        const char *fn = meta_str(r, "filename");
        const char *base = fn ? strrchr(fn, '/') : NULL;
        base = base ? base + 1 : fn;
        if (base && *base) {        /* Path::file_stem: the name without its last extension */
            const char *dot = strrchr(base, '.');
            size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
            char b[256];
            snprintf(b, sizeof b, "%.*s", (int)(len < 250 ? len : 250), base);
            safe_filename(b, safe, sizeof safe);
            snprintf(stem, sn, "inductor_output_code_%s", safe);
        } else snprintf(stem, sn, "inductor_output_code");
        if (t->opt->plain_text) return OUT_PAYLOAD;
        *ext = ".html";
        return OUT_CODE;
    }
    if (!strcmp(k, "aot_autograd_backward_compilation_metrics") || !strcmp(k, "bwd_compilation_metrics")) {
        snprintf(stem, sn, "%s", k);
        *ext = ".html";
        return OUT_METRICS;
    }
    if (!strcmp(k, "link")) return meta_str(r, "name") && meta_str(r, "url") ? OUT_LINK : OUT_FAIL;
    if (!strcmp(k, "artifact")) {
        const char *nm = meta_str(r, "name"), *enc = meta_str(r, "encoding");
        if (!nm || !enc) return OUT_FAIL;
        safe_filename(nm, safe, sizeof safe);
        snprintf(stem, sn, "%s", safe);
        if (!strcmp(enc, "string")) return OUT_PAYLOAD;
        if (!strcmp(enc, "json")) { *ext = ".json"; return OUT_JSON; }
        return OUT_FAIL;                /* "Unsupported encoding" */
    }
    if (!strcmp(k, "dump_file")) {
        const char *nm = meta_str(r, "name");
        if (!nm) return OUT_FAIL;
        const char *ek = strstr(nm, "<eval_with_key>.");
        if (ek && ek[16] >= '0' && ek[16] <= '9') snprintf(stem, sn, "dump_file/eval_with_key_%ld", atol(ek + 16));
        else {
            safe_filename(nm, safe, sizeof safe);
            snprintf(stem, sn, "dump_file/%s", safe);
        }
        *ext = ".html";
        return OUT_DUMP;
    }
    return OUT_NONE;
}

/* ---------------------------------------------------------------- renderers */

/* Sort an object's members by key (serde_json's Map is a BTreeMap), recursively. */
static void sort_keys(cJSON *j) {
    if (!j) return;
    for (cJSON *c = j->child; c; c = c->next) sort_keys(c);
    if (!cJSON_IsObject(j) || !j->child) return;
    /* insertion sort on the linked list (objects are small) */
    cJSON *sorted = NULL;
    for (cJSON *c = j->child, *next; c; c = next) {
        next = c->next;
        c->prev = c->next = NULL;
        if (!sorted || strcmp(c->string, sorted->string) < 0) { c->next = sorted; sorted = c; continue; }
        cJSON *p = sorted;
        while (p->next && strcmp(p->next->string, c->string) <= 0) p = p->next;
        c->next = p->next;
        p->next = c;
    }
    j->child = sorted;
    cJSON *last = NULL;
    for (cJSON *c = sorted; c; c = c->next) { c->prev = last; last = c; }
    sorted->prev = last;                 /* cJSON keeps the tail in child->prev */
}

/* serde_json::to_string_pretty of a value: 2-space indent, "key": value. */
static void json_pretty(StrBuf *b, const cJSON *j, int ind) {
    if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        bool obj = cJSON_IsObject(j);
        if (!j->child) { sb_put(b, obj ? "{}" : "[]"); return; }
        sb_putc(b, obj ? '{' : '[');
        for (const cJSON *c = j->child; c; c = c->next) {
            sb_putc(b, '\n');
            for (int i = 0; i < ind + 2; i++) sb_putc(b, ' ');
            if (obj) { json_str_py(b, c->string); sb_put(b, ": "); }
            json_pretty(b, c, ind + 2);
            if (c->next) sb_putc(b, ',');
        }
        sb_putc(b, '\n');
        for (int i = 0; i < ind; i++) sb_putc(b, ' ');
        sb_putc(b, obj ? '}' : ']');
        return;
    }
    char *s = cJSON_PrintUnformatted(j);
    sb_put(b, s ? s : "null");
    free(s);
}

/* format_json_pretty: the payload's JSON pretty-printed with sorted keys; the payload as it is
 * when it does not parse. */
static void reformat_json(StrBuf *b, const TraceRecord *r) {
    cJSON *j = cJSON_ParseWithLength(r->payload, r->payload_len);
    if (!j) { sb_putn(b, r->payload, r->payload_len); return; }
    sort_keys(j);
    json_pretty(b, j, 0);
    cJSON_Delete(j);
}

/* dynamo_guards.html: the guards' code, one per item (tlparse TEMPLATE_DYNAMO_GUARDS). False
 * when the payload is not a JSON list of objects with a "code" string. */
static bool render_guards(StrBuf *b, const TraceRecord *r) {
    cJSON *j = cJSON_ParseWithLength(r->payload, r->payload_len);
    bool okp = cJSON_IsArray(j);
    cJSON *g;
    cJSON_ArrayForEach(g, j) if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "code"))) okp = false;
    if (okp) {
        sb_put(b, "<html>\n<head><meta charset=\"utf-8\"></head>\n<body>\n<h2>Guards</h2>\n<ul>\n");
        cJSON_ArrayForEach(g, j) {
            sb_put(b, "    <li><code>");
            html_esc(b, cJSON_GetObjectItemCaseSensitive(g, "code")->valuestring);
            sb_put(b, "</code></li>\n");
        }
        sb_put(b, "</ul>\n</body>\n</html>\n");
    }
    cJSON_Delete(j);
    return okp;
}

/* dump_file: the source with one anchored line per row (tlparse anchor_source), so stack
 * frames of <eval_with_key>.N link to dump_file/eval_with_key_N.html#L<line>. */
static void render_dump(StrBuf *b, const TraceRecord *r) {
    sb_put(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"UTF-8\">\n<title>Source Code</title>\n"
              "<style>pre{counter-reset:line}pre span{display:block}pre span:before{counter-increment:line;"
              "content:counter(line);display:inline-block;padding:0 .5em;margin-right:.5em;color:#888}"
              "pre span:target{background-color:#ffff00}</style>\n</head>\n<body>\n<pre>");
    const char *p = r->payload, *end = p + r->payload_len;
    int ln = 1;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        sb_printf(b, "<span id=\"L%d\">", ln++);
        html_escn(b, p, len);
        sb_put(b, "</span>");
        p += len + 1;
    }
    sb_put(b, "</pre>\n</body></html>\n");
}

/* <event>.html for the backward metrics events: every field in a table. */
static void render_metrics(StrBuf *b, const TraceRecord *r, const char *key) {
    sb_printf(b, "<html>\n<head><meta charset=\"utf-8\"><title>%s</title></head>\n<body>\n<h1>", r->key);
    html_esc(b, r->key);
    sb_put(b, " for ");
    html_esc(b, key);
    sb_put(b, "</h1>\n<table border=\"1\">\n");
    for (const cJSON *f = r->meta ? r->meta->child : NULL; f; f = f->next) {
        sb_put(b, "<tr><td>");
        html_esc(b, f->string);
        sb_put(b, "</td><td><pre>");
        if (cJSON_IsString(f)) html_esc(b, f->valuestring);
        else { char *v = cJSON_PrintUnformatted(f); html_esc(b, v); free(v); }
        sb_put(b, "</pre></td></tr>\n");
    }
    sb_put(b, "</table>\n</body>\n</html>\n");
}

/* inductor_provenance_tracking_kernel_stack_traces*.json: "<stem>_readable.html" with each
 * kernel's stack traces (tlparse add_stack_traces_html). */
static char *stack_traces_html(Tl *t, const char *json_rel, const char *content) {
    cJSON *j = cJSON_Parse(content);
    if (!cJSON_IsObject(j)) { cJSON_Delete(j); return mi_xstrdup(""); }
    StrBuf b;
    sb_init(&b);
    sb_put(&b, "<html><body>\n");
    for (cJSON *k = j->child; k; k = k->next) {
        sb_put(&b, "<h3>");
        html_esc(&b, k->string);
        sb_put(&b, "</h3>\n");
        cJSON *tr;
        cJSON_ArrayForEach(tr, k) {
            if (!cJSON_IsString(tr)) continue;
            size_t n = strlen(tr->valuestring);
            while (n && tr->valuestring[n - 1] == '\n') n--;
            sb_put(&b, "<pre>");
            html_escn(&b, tr->valuestring, n);
            sb_put(&b, "</pre>\n");
        }
    }
    sb_put(&b, "</body></html>\n");
    cJSON_Delete(j);
    char rel[1200];
    const char *dot = strrchr(json_rel, '.');
    snprintf(rel, sizeof rel, "%.*s_readable.html", (int)(dot ? dot - json_rel : (long)strlen(json_rel)), json_rel);
    tl_write_mkdir(t, rel, b.s ? b.s : "", b.len);
    sb_free(&b);
    t->output_count++;
    t->n_files++;
    return mi_xstrdup(rel);
}

/* ---------------------------------------------------------------- the record */

/* Write one output file of the record: "<dir>/<stem>_<N><ext>" (GlobalFile: no suffix). */
static TlFile *emit(Tl *t, TlDir *d, const char *dir, const char *stem, const char *ext, bool global,
                    const char *data, size_t n, const TraceRecord *r) {
    char rel[1200];
    if (global) snprintf(rel, sizeof rel, "%s%s", stem, ext);
    else snprintf(rel, sizeof rel, "%s/%s_%d%s", dir, stem, t->output_count, ext);
    if (!t->opt->no_artifact_files) tl_write_mkdir(t, rel, data, n);
    const char *base = strrchr(rel, '/');
    TlFile *f = add_entry(d, rel, base ? base + 1 : rel, t->output_count);
    f->damaged = r->has_payload && !r->md5_ok;
    f->line = r->line;
    t->output_count++;
    t->n_files++;
    if (!strncmp(f->name, "inductor_provenance_tracking_kernel_stack_traces", 48) && !strcmp(ext, ".json") &&
        !t->opt->no_artifact_files)
        f->readable_url = stack_traces_html(t, rel, data);
    return f;
}

static bool is_hex32(const char *s) {
    if (!s || strlen(s) != 32) return false;
    for (int i = 0; i < 32; i++)
        if (!strchr("0123456789abcdefABCDEF", s[i])) return false;
    return true;
}

const char *tl_layout_record(Tl *t, const TraceRecord *r, const char **main_url) {
    char key[80], dir[96], stem[600];
    tl_key_dir(r, key, sizeof key, dir, sizeof dir);
    if (r->bad_compile_id) t->unknown_compile_id = true;
    /* the key's own directory name: the attempt collapsed to 0 as in the key (lib.rs) */
    char dn[96];
    if (r->bad_compile_id) snprintf(dn, sizeof dn, "(unknown)");
    else if (r->frame_compile_id >= 0 && r->attempt < 0) snprintf(dn, sizeof dn, "%.*s0", (int)strlen(dir) - 1, dir);
    else snprintf(dn, sizeof dn, "%s", dir);
    TlDir *d = tl_dir_get(t, key, dn);
    *main_url = NULL;
    const char *payload_file = NULL;
    const char *ext;
    OutKind k = rule_for(t, r, stem, sizeof stem, &ext);
    StrBuf *b = &t->tmp;
    b->len = 0;
    TlFile *f = NULL;
    switch (k) {
    case OUT_NONE: break;
    case OUT_FAIL: t->n_parser_failures++; break;
    case OUT_PAYLOAD:
        f = emit(t, d, dir, stem, ext, false, r->payload, r->payload_len, r);
        payload_file = f->url;
        break;
    case OUT_JSON:
        reformat_json(b, r);
        f = emit(t, d, dir, stem, ext, false, b->s ? b->s : "", b->len, r);
        payload_file = f->url;
        break;
    case OUT_GUARDS:
        if (render_guards(b, r)) f = emit(t, d, dir, stem, ext, false, b->s, b->len, r);
        else t->n_parser_failures++;        /* fail_dynamo_guards_json */
        break;
    case OUT_CODE:
        hl_python_page(b, "inductor_output_code", r->payload, r->payload_len);
        f = emit(t, d, dir, stem, ext, false, b->s, b->len, r);
        break;
    case OUT_METRICS:
        render_metrics(b, r, key);
        f = emit(t, d, dir, stem, ext, false, b->s, b->len, r);
        break;
    case OUT_DUMP:
        render_dump(b, r);
        f = emit(t, d, dir, stem, ext, true, b->s, b->len, r);
        break;
    case OUT_LINK:
        f = add_entry(d, meta_str(r, "url"), meta_str(r, "name"), t->output_count++);
        f->suffix = "";
        f->line = r->line;
        break;
    }
    if (f && k != OUT_LINK) *main_url = f->url;
    /* compilation_metrics runs after the other parsers (lib.rs) */
    if (!t->opt->export_mode && !strcmp(r->key, "compilation_metrics")) {
        tl_metrics_page(t, r, d, dir, key);
        if (!*main_url && d->n) *main_url = d->f[d->n - 1].url;
    }
    /* a payload no parser took goes to payloads/<has_payload>.txt (chromium events excepted) */
    if (!payload_file && r->has_payload && r->payload_len > 0 && r->kind != TRACE_EV_CHROMIUM) {
        const cJSON *hp = cJSON_GetObjectItemCaseSensitive(r->env, "has_payload");
        char hex[33];
        if (cJSON_IsString(hp) && is_hex32(hp->valuestring)) snprintf(hex, sizeof hex, "%s", hp->valuestring);
        else md5_hex(r->payload, r->payload_len, hex);
        char rel[64];
        snprintf(rel, sizeof rel, "payloads/%s.txt", hex);
        if (!t->opt->no_artifact_files) tl_write_mkdir(t, rel, r->payload, r->payload_len);
        free(t->last_payload_file);
        t->last_payload_file = mi_xstrdup(rel);
        payload_file = t->last_payload_file;
        if (!*main_url) *main_url = payload_file;
    }
    return payload_file;
}
