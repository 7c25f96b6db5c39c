/* tlparse_rules.c — tlparse's output file list for a log, computed independently of trace/
 * (see tlparse_rules.h). Each rule names the tlparse source it follows. */
#define _GNU_SOURCE
#include "tlparse_rules.h"

#include <cJSON.h>
#include <dirent.h>
#include <md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct Acc {
    TlrLayout *l;
    int count;                       /* lib.rs output_count */
    bool plain, export_mode;
    char **dirnames; int ndirnames;  /* per key, its directory name (for -i) */
} Acc;

static char *xstrdup(const char *s) { char *r = strdup(s ? s : ""); if (!r) abort(); return r; }
static void *xrealloc(void *p, size_t n) { void *r = realloc(p, n ? n : 1); if (!r) abort(); return r; }

static void add_file(TlrLayout *l, const char *rel) {
    for (int i = 0; i < l->nfiles; i++) if (!strcmp(l->files[i], rel)) return;
    l->files = xrealloc(l->files, sizeof *l->files * (size_t)(l->nfiles + 1));
    l->files[l->nfiles++] = xstrdup(rel);
}

static TlrDir *dir_of(Acc *a, const char *key, const char *dirname) {
    for (int i = 0; i < a->l->n; i++) if (!strcmp(a->l->d[i].key, key)) return &a->l->d[i];
    a->l->d = xrealloc(a->l->d, sizeof *a->l->d * (size_t)(a->l->n + 1));
    a->dirnames = xrealloc(a->dirnames, sizeof *a->dirnames * (size_t)(a->l->n + 1));
    a->dirnames[a->l->n] = xstrdup(dirname);
    TlrDir *d = &a->l->d[a->l->n++];
    memset(d, 0, sizeof *d);
    d->key = xstrdup(key);
    return d;
}

/* parsers.rs add_file_output: the entry, its cache mark (lib.rs), its number. */
static TlrFile *entry(Acc *a, TlrDir *d, const char *url, const char *name, bool file) {
    d->f = xrealloc(d->f, sizeof *d->f * (size_t)(d->n + 1));
    TlrFile *f = &d->f[d->n++];
    memset(f, 0, sizeof *f);
    f->url = xstrdup(url);
    f->name = xstrdup(name);
    f->number = a->count++;
    f->suffix = strstr(url, "cache_miss") ? "\xe2\x9d\x8c" : strstr(url, "cache_hit") ? "\xe2\x9c\x85"
              : strstr(url, "cache_bypass") ? "\xe2\x9d\x93" : "";
    if (file) add_file(a->l, url);
    return f;
}

/* ParserOutput::File / PayloadFile: "<dir>/<stem>_<N>.<ext>" (add_unique_suffix). */
static TlrFile *numbered(Acc *a, TlrDir *d, const char *dir, const char *stem, const char *ext) {
    char url[1200];
    snprintf(url, sizeof url, "%s/%s_%d%s", dir, stem, a->count, ext);
    TlrFile *f = entry(a, d, url, strrchr(url, '/') + 1, true);
    /* lib.rs add_stack_traces_html: a readable page, one more number */
    if (!strncmp(f->name, "inductor_provenance_tracking_kernel_stack_traces", 48) && !strcmp(ext, ".json")) {
        char rd[1300];
        snprintf(rd, sizeof rd, "%.*s_readable.html", (int)(strlen(url) - 5), url);
        add_file(a->l, rd);
        f->readable = true;
        a->count++;
    }
    return f;
}

/* The documented deviation (trace/README.md): names from the log keep [A-Za-z0-9._-]. */
static void safe(const char *s, char *out, size_t n) {
    size_t j = 0;
    for (; *s && j + 1 < n; s++)
        out[j++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                    *s == '.' || *s == '_' || *s == '-') ? *s : '_';
    if (!j) out[j++] = '_';
    if (out[0] == '.') out[0] = '_';
    out[j] = 0;
}

static const char *jstr(const cJSON *o, const char *k) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* types.rs CompileId: one id field; false when present but not a u32 (the id is then None). */
static bool id_field(const cJSON *env, const char *k, long *v) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(env, k);
    *v = -1;
    if (!j || cJSON_IsNull(j)) return true;
    if (!cJSON_IsNumber(j) || j->valuedouble < 0 || j->valuedouble != (double)(long)j->valuedouble) return false;
    *v = (long)j->valuedouble;
    return true;
}

static const char *const sentinels[] = {
    "optimize_ddp_split_graph", "compiled_autograd_graph", "aot_forward_graph", "aot_backward_graph",
    "aot_inference_graph", "aot_joint_graph", "inductor_post_grad_graph", "inductor_pre_grad_graph",
    "dynamo_cpp_guards_str", "dynamo_output_graph",
};

static bool hex32(const char *s) {
    if (!s || strlen(s) != 32) return false;
    for (int i = 0; i < 32; i++) if (!strchr("0123456789abcdefABCDEF", s[i])) return false;
    return true;
}

/* One envelope with its payload (lib.rs parse_path's loop body, after the rank check). */
static void record(Acc *a, long lineno, cJSON *env, const char *payload, bool has_payload) {
    long ca, fr, fc, at;
    bool okid = id_field(env, "compiled_autograd_id", &ca) & id_field(env, "frame_id", &fr) &
                id_field(env, "frame_compile_id", &fc) & id_field(env, "attempt", &at);
    char key[96], dir[96], dn[96];
    if (!okid) {
        snprintf(key, sizeof key, "unknown");
        snprintf(dir, sizeof dir, "unknown_%ld", lineno);
        snprintf(dn, sizeof dn, "(unknown)");
        a->l->unknown_key = true;
    } else {
        char s[4][24];
        long v[4] = {ca, fr, fc, at};
        for (int i = 0; i < 4; i++) { if (v[i] >= 0) snprintf(s[i], 24, "%ld", v[i]); else strcpy(s[i], "-"); }
        snprintf(dir, sizeof dir, "%s_%s_%s_%s", s[0], s[1], s[2], s[3]);
        long att = at >= 0 ? at : (fc >= 0 ? 0 : -1);      /* lib.rs: attempt None -> 0 */
        snprintf(dn, sizeof dn, "%s_%s_%s_%s", s[0], s[1], s[2], att >= 0 ? (att == at ? s[3] : "0") : "-");
        char pre[32] = "", suf[32] = "";
        if (ca >= 0) snprintf(pre, sizeof pre, "!%ld/", ca);
        if (att > 0) snprintf(suf, sizeof suf, "_%ld", att);
        snprintf(key, sizeof key, "[%s%s/%s%s]", pre, s[1], s[2], suf);
    }
    TlrDir *d = dir_of(a, key, dn);
    bool payload_taken = false;
    char stem[700], sn[512];
    const cJSON *m;
    if (a->export_mode) {
        if (cJSON_GetObjectItemCaseSensitive(env, "exported_program")) {
            numbered(a, d, dir, "exported_program", ".txt");
            payload_taken = true;
        }
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(env, "guard_added");
        const char *pf = g ? jstr(g, "prefix") : NULL;
        if ((g && pf && !strcmp(pf, "eval")) || cJSON_GetObjectItemCaseSensitive(env, "propagate_real_tensors_provenance"))
            numbered(a, d, dir, "symbolic_guard_information", ".html");
    } else {
        for (size_t i = 0; i < sizeof sentinels / sizeof *sentinels; i++)
            if (cJSON_GetObjectItemCaseSensitive(env, sentinels[i])) {
                numbered(a, d, dir, sentinels[i], ".txt");
                payload_taken = true;
            }
        if ((m = cJSON_GetObjectItemCaseSensitive(env, "graph_dump")) && jstr(m, "name")) {
            safe(jstr(m, "name"), sn, sizeof sn);
            numbered(a, d, dir, sn, ".txt");
            payload_taken = true;
        }
        if (cJSON_GetObjectItemCaseSensitive(env, "dynamo_guards")) {
            cJSON *g = cJSON_Parse(payload), *x;
            bool okg = cJSON_IsArray(g);
            cJSON_ArrayForEach(x, g) okg &= cJSON_IsString(cJSON_GetObjectItemCaseSensitive(x, "code"));
            if (okg) numbered(a, d, dir, "dynamo_guards", ".html"); else a->l->n_parser++;
            cJSON_Delete(g);
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(env, "inductor_output_code"))) {
            const char *fn = jstr(m, "filename");
            const char *base = fn ? (strrchr(fn, '/') ? strrchr(fn, '/') + 1 : fn) : NULL;
            if (base && *base) {
                char b[300];
                const char *dot = strrchr(base, '.');
                snprintf(b, sizeof b, "%.*s", (int)(dot && dot != base ? dot - base : (long)strlen(base)), base);
                safe(b, sn, sizeof sn);
                snprintf(stem, sizeof stem, "inductor_output_code_%s", sn);
            } else snprintf(stem, sizeof stem, "inductor_output_code");
            numbered(a, d, dir, stem, a->plain ? ".txt" : ".html");
            payload_taken = a->plain;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(env, "optimize_ddp_split_child")) && jstr(m, "name")) {
            safe(jstr(m, "name"), sn, sizeof sn);
            snprintf(stem, sizeof stem, "optimize_ddp_split_child_%s", sn);
            numbered(a, d, dir, stem, ".txt");
            payload_taken = true;
        }
        if (cJSON_GetObjectItemCaseSensitive(env, "aot_autograd_backward_compilation_metrics"))
            numbered(a, d, dir, "aot_autograd_backward_compilation_metrics", ".html");
        if (cJSON_GetObjectItemCaseSensitive(env, "bwd_compilation_metrics"))
            numbered(a, d, dir, "bwd_compilation_metrics", ".html");
        if ((m = cJSON_GetObjectItemCaseSensitive(env, "link")) && jstr(m, "name") && jstr(m, "url"))
            entry(a, d, jstr(m, "url"), jstr(m, "name"), false);
        if ((m = cJSON_GetObjectItemCaseSensitive(env, "artifact"))) {
            const char *nm = jstr(m, "name"), *enc = jstr(m, "encoding");
            if (nm && enc && (!strcmp(enc, "string") || !strcmp(enc, "json"))) {
                safe(nm, sn, sizeof sn);
                numbered(a, d, dir, sn, !strcmp(enc, "json") ? ".json" : ".txt");
                payload_taken = true;
            } else a->l->n_parser++;
        }
        if ((m = cJSON_GetObjectItemCaseSensitive(env, "dump_file")) && jstr(m, "name")) {
            const char *nm = jstr(m, "name"), *k = strstr(nm, "<eval_with_key>.");
            if (k && k[16] >= '0' && k[16] <= '9') snprintf(stem, sizeof stem, "dump_file/eval_with_key_%ld.html", atol(k + 16));
            else { safe(nm, sn, sizeof sn); snprintf(stem, sizeof stem, "dump_file/%s.html", sn); }
            entry(a, d, stem, strrchr(stem, '/') + 1, true);      /* GlobalFile: no suffix */
        }
        if (cJSON_GetObjectItemCaseSensitive(env, "compilation_metrics"))
            numbered(a, d, dir, "compilation_metrics", ".html");
    }
    /* lib.rs: the payload no parser wrote goes to payloads/<has_payload>.txt */
    if (!payload_taken && has_payload && *payload && !cJSON_GetObjectItemCaseSensitive(env, "chromium_event")) {
        const char *hp = jstr(env, "has_payload");
        char h[33], rel[64];
        if (hex32(hp)) snprintf(h, sizeof h, "%s", hp); else MD5Data((const uint8_t *)payload, strlen(payload), h);
        snprintf(rel, sizeof rel, "payloads/%s.txt", h);
        add_file(a->l, rel);
    }
}

/* lib.rs's glog regex, anchored: level, MMDD, time with 6-digit fraction, thread, path:line] */
static const char *after_glog(const char *s) {
    if (!strchr("VIWEC", s[0]) || !*s) return NULL;
    int i = 1;
    for (int k = 0; k < 4; k++, i++) if (s[i] < '0' || s[i] > '9') return NULL;
    if (s[i++] != ' ') return NULL;
    const char *pat = "dd:dd:dd.dddddd ";
    for (int k = 0; pat[k]; k++, i++)
        if (pat[k] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != pat[k]) return NULL;
    int d0 = i;
    while (s[i] >= '0' && s[i] <= '9') i++;
    if (i == d0) return NULL;
    const char *colon = strchr(s + i, ':');
    if (!colon || colon == s + i) return NULL;
    const char *p = colon + 1, *q = p;
    while (*q >= '0' && *q <= '9') q++;
    if (q == p || q[0] != ']' || q[1] != ' ' || !q[2]) return NULL;
    return q + 2;
}

int tlr_expect(const char *log, bool plain_text, bool export_mode, bool provenance, TlrLayout *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(log, "r");
    if (!f) return -1;
    Acc a = {out, 0, plain_text, export_mode, NULL, 0};
    char **lines = NULL;
    long n = 0, cap = 0;
    char *line = NULL;
    size_t lc = 0;
    ssize_t len;
    while ((len = getline(&line, &lc, f)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (n == cap) { cap = cap ? 2 * cap : 1024; lines = xrealloc(lines, sizeof *lines * (size_t)cap); }
        lines[n++] = xstrdup(line);
    }
    free(line);
    fclose(f);
    bool rank_known = false;
    long rank = -2;
    for (long i = 0; i < n; i++) {
        if (!lines[i][0]) continue;                  /* blank lines are filtered out */
        const char *js = after_glog(lines[i]);
        if (!js) { out->n_glog++; continue; }
        cJSON *env = cJSON_Parse(js);
        if (!cJSON_IsObject(env)) { out->n_json++; cJSON_Delete(env); continue; }
        if (cJSON_GetObjectItemCaseSensitive(env, "str")) { cJSON_Delete(env); continue; }
        const char *hp = jstr(env, "has_payload");
        bool has = cJSON_GetObjectItemCaseSensitive(env, "has_payload") != NULL;
        size_t plen = 0;
        char *payload = xstrdup("");
        long at_line = i + 1;
        if (has) {
            for (long j = i + 1, first = 1; j < n; j++) {
                if (!lines[j][0]) { i = j; continue; }          /* blank lines are dropped */
                if (lines[j][0] != '\t') break;
                size_t l = strlen(lines[j] + 1);
                payload = xrealloc(payload, plen + l + 2);
                if (!first) payload[plen++] = '\n';
                first = 0;
                memcpy(payload + plen, lines[j] + 1, l + 1);
                plen += l;
                i = j;
            }
            char h[33];
            MD5Data((const uint8_t *)payload, plen, h);
            if (!hp || strcasecmp(h, hp)) out->n_md5++;
        }
        long r;
        bool rok = id_field(env, "rank", &r);
        if (!rok) r = -1;
        if (rank_known && r != rank) { out->n_other_rank++; free(payload); cJSON_Delete(env); continue; }
        if (!rank_known && r >= 0) { rank_known = true; rank = r; }
        record(&a, at_line, env, payload, has);
        free(payload);
        cJSON_Delete(env);
    }
    for (long i = 0; i < n; i++) free(lines[i]);
    free(lines);
    if (!export_mode) {
        static const char *const top[] = {"index.html", "compile_directory.json", "failures_and_restarts.html",
                                          "chromium_events.json", "raw.log", "raw.jsonl"};
        for (size_t k = 0; k < sizeof top / sizeof *top; k++) add_file(out, top[k]);
        for (int k = 0; provenance && k < out->n; k++) {
            char p[200];
            snprintf(p, sizeof p, "provenance_tracking_%s.html", a.dirnames[k]);
            add_file(out, p);
        }
    } else add_file(out, "index.html");
    for (int k = 0; k < out->n; k++) free(a.dirnames[k]);
    free(a.dirnames);
    return 0;
}

void tlr_free(TlrLayout *l) {
    for (int i = 0; i < l->n; i++) {
        for (int k = 0; k < l->d[i].n; k++) { free(l->d[i].f[k].url); free(l->d[i].f[k].name); }
        free(l->d[i].f);
        free(l->d[i].key);
    }
    free(l->d);
    for (int i = 0; i < l->nfiles; i++) free(l->files[i]);
    free(l->files);
    memset(l, 0, sizeof *l);
}

static void walk(const char *root, const char *rel, char ***v, int *nv) {
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *dd = opendir(path);
    if (!dd) return;
    struct dirent *e;
    while ((e = readdir(dd))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (!*rel && !strcmp(e->d_name, "minductor")) continue;
        char r2[2048], p2[4096];
        snprintf(r2, sizeof r2, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        snprintf(p2, sizeof p2, "%s/%s", root, r2);
        struct stat st;
        if (stat(p2, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) walk(root, r2, v, nv);
        else { *v = xrealloc(*v, sizeof **v * (size_t)(*nv + 1)); (*v)[(*nv)++] = xstrdup(r2); }
    }
    closedir(dd);
}

static int cmps(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

#define WHY(...) do { if (nd++ < 4) { size_t l_ = strlen(why); snprintf(why + l_, n - l_, __VA_ARGS__); } } while (0)

int tlr_check(const char *out_dir, const TlrLayout *want, char *why, size_t n) {
    int nd = 0;
    why[0] = 0;
    char p[1200];
    snprintf(p, sizeof p, "%s/compile_directory.json", out_dir);
    FILE *f = fopen(p, "r");
    char *txt = NULL;
    size_t tl = 0;
    if (f) { txt = malloc(1 << 24); tl = fread(txt, 1, (1 << 24) - 1, f); txt[tl] = 0; fclose(f); }
    cJSON *cd = txt ? cJSON_Parse(txt) : NULL;
    free(txt);
    if (!want->files || !cJSON_IsObject(cd)) {
        if (cJSON_GetArraySize(cd) || want->n) WHY("compile_directory.json missing or not an object; ");
    } else {
        /* keys sorted, as serde writes them */
        const char *prev = "";
        int nk = 0;
        for (cJSON *k = cd->child; k; k = k->next, nk++) {
            if (strcmp(prev, k->string) > 0) WHY("keys not sorted at %s; ", k->string);
            prev = k->string;
            const TlrDir *d = NULL;
            for (int i = 0; i < want->n; i++) if (!strcmp(want->d[i].key, k->string)) d = &want->d[i];
            if (!d) { WHY("unexpected key %s; ", k->string); continue; }
            cJSON *arts = cJSON_GetObjectItemCaseSensitive(k, "artifacts");
            if (cJSON_GetArraySize(arts) != d->n) WHY("%s: %d entries, want %d; ", k->string, cJSON_GetArraySize(arts), d->n);
            int i = 0;
            cJSON *x;
            cJSON_ArrayForEach(x, arts) {
                if (i >= d->n) break;
                const TlrFile *w = &d->f[i++];
                const char *u = jstr(x, "url"), *nm = jstr(x, "name"), *sf = jstr(x, "suffix");
                const cJSON *num = cJSON_GetObjectItemCaseSensitive(x, "number");
                const cJSON *ru = cJSON_GetObjectItemCaseSensitive(x, "readable_url");
                if (!u || strcmp(u, w->url)) WHY("%s: url %s, want %s; ", k->string, u ? u : "?", w->url);
                else if (!nm || strcmp(nm, w->name)) WHY("%s: name %s, want %s; ", k->string, nm ? nm : "?", w->name);
                else if (!cJSON_IsNumber(num) || (int)num->valuedouble != w->number)
                    WHY("%s: %s number %d, want %d; ", k->string, u, cJSON_IsNumber(num) ? (int)num->valuedouble : -1, w->number);
                else if (!sf || strcmp(sf, w->suffix)) WHY("%s: %s suffix '%s', want '%s'; ", k->string, u, sf ? sf : "?", w->suffix);
                else if (cJSON_IsString(ru) != w->readable) WHY("%s: %s readable_url; ", k->string, u);
            }
        }
        if (nk != want->n) WHY("%d keys, want %d; ", nk, want->n);
    }
    cJSON_Delete(cd);
    char **got = NULL;
    int ng = 0;
    walk(out_dir, "", &got, &ng);
    qsort(got, (size_t)ng, sizeof *got, cmps);
    char **w = malloc(sizeof *w * (size_t)(want->nfiles + 1));
    memcpy(w, want->files, sizeof *w * (size_t)want->nfiles);
    qsort(w, (size_t)want->nfiles, sizeof *w, cmps);
    for (int i = 0, j = 0; i < ng || j < want->nfiles;) {
        int c = i >= ng ? 1 : j >= want->nfiles ? -1 : strcmp(got[i], w[j]);
        if (c < 0) { WHY("extra file %s; ", got[i]); i++; }
        else if (c > 0) { WHY("missing file %s; ", w[j]); j++; }
        else { i++; j++; }
    }
    for (int i = 0; i < ng; i++) free(got[i]);
    free(got);
    free(w);
    return nd;
}
