/* tlparse.c — turns one TORCH_TRACE log into a tlparse-like report. Streams records from
 * log_reader.c and dispatches them by event kind through a table of handlers; each handler
 * files what the report needs under the record's compile id (artifact files are written as
 * they come, so memory stays bounded). tlparse_html.c renders the pages at the end. */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

TlCompile *tl_find(Tl *t, const char *cid) {
    if (!cid || !*cid) return &t->nocid;
    for (int i = t->n_c - 1; i >= 0; i--)
        if (strcmp(t->c[i].id, cid) == 0) return &t->c[i];
    return NULL;
}

/* Our compile id ("0/0", "0/0_1", "!1/0/0", "!1") as tlparse's key ("[0/0]", "[!1/-/-]"). */
static void key_of_id(const char *cid, char *key, size_t n) {
    if (!*cid) snprintf(key, n, "[-/-]");
    else if (cid[0] == '!' && !strchr(cid, '/')) snprintf(key, n, "[%s/-/-]", cid);
    else snprintf(key, n, "[%s]", cid);
}

static void compile_init(TlCompile *c, const char *cid, long line) {
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", cid);
    compile_id_dirname(cid, c->dir, sizeof c->dir);
    key_of_id(cid, c->key, sizeof c->key);
    const char *f = cid[0] == '!' ? strchr(cid, '/') : cid;
    c->frame_id = f && *f && sscanf(f + (*f == '/'), "%d/", &c->frame_id) == 1 ? c->frame_id : -1;
    c->first_line = line;
    c->cg_requested = -1;
    snprintf(c->status, sizeof c->status, "no compilation_metrics");
    sb_init(&c->coll);
}

TlCompile *tl_find_key(Tl *t, const char *key) {
    for (int i = t->n_c - 1; i >= 0; i--)
        if (strcmp(t->c[i].key, key) == 0) return &t->c[i];
    return NULL;
}

void tl_dir_name_of_key(const Tl *t, const TlDir *d, char *out, size_t n) {
    (void)t;
    snprintf(out, n, "%s", d->dirname);
}

TlBreak *tl_add_break(Tl *t, const char *key, const char *metrics_url) {
    t->breaks = mi_xrealloc(t->breaks, sizeof *t->breaks * (size_t)(t->n_breaks + 1));
    TlBreak *k = &t->breaks[t->n_breaks++];
    memset(k, 0, sizeof *k);
    snprintf(k->key, sizeof k->key, "%s", key);
    k->metrics_url = metrics_url ? mi_xstrdup(metrics_url) : NULL;
    return k;
}

static TlCompile *get_compile(Tl *t, const TraceRecord *r) {
    TlCompile *c = tl_find(t, r->compile_id);
    if (c) return c;
    if (t->n_c == t->cap_c) {
        t->cap_c = t->cap_c ? t->cap_c * 2 : 16;
        t->c = mi_xrealloc(t->c, sizeof *t->c * (size_t)t->cap_c);
    }
    c = &t->c[t->n_c++];
    compile_init(c, r->compile_id, r->line);
    return c;
}

void tl_write_mkdir(Tl *t, const char *rel, const char *data, size_t n) {
    const char *sl = strrchr(rel, '/');
    if (sl) {
        char dir[1600];
        snprintf(dir, sizeof dir, "%s/%.*s", t->out, (int)(sl - rel), rel);
        if (mkdir_p(t->ctx, dir) != 0) { t->write_failed = true; return; }
    }
    tl_write(t, rel, data, n);
}

void tl_write(Tl *t, const char *rel, const char *data, size_t n) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", t->out, rel);
    if (t->fq) { fq_put(t->fq, path, data, n); return; }
    FILE *f = fopen(path, "w");
    if (!f) {
        if (!t->write_failed) mi_err(t->ctx, path, 0, 0, "cannot write: %s", strerror(errno));
        t->write_failed = true;
        return;
    }
    if (fwrite(data, 1, n, f) != n) t->write_failed = true;
    if (fclose(f) != 0) t->write_failed = true;
    if (t->write_failed && !t->ctx->err.msg[0]) mi_err(t->ctx, path, 0, 0, "write failed");
}

static bool ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* ---------------------------------------------------------------- handlers */

static void collectives_from(TlCompile *c, const TraceRecord *r) {
    int prio = 0;
    if (!strcmp(r->name, "inductor_collective_schedule")) prio = 3;
    else if (!strcmp(r->name, "inductor_post_grad_graph")) prio = 2;
    else if (r->kind == TRACE_EV_GRAPH || strstr(r->name, "graph")) prio = 1;
    if (!prio || prio < c->coll_prio || !r->md5_ok) return;
    if (!memmem(r->payload, r->payload_len, "_c10d_functional.", 17)) {
        if (prio > c->coll_prio && c->n_coll == 0) c->coll_prio = prio;
        return;
    }
    c->coll.len = 0;
    c->n_coll = collect_collectives(r->payload, &c->coll);
    c->coll_prio = prio;
    snprintf(c->coll_src, sizeof c->coll_src, "%s", r->name);
}

/* A payload-bearing record: listed under its compile with the file tlparse's rules made of it
 * (tl_layout_record ran first and left that in t->cur_url). */
static void h_artifact(Tl *t, const TraceRecord *r) {
    TlCompile *c = get_compile(t, r);
    if (!r->has_payload) return;
    if (c->n_arts == c->cap_arts) {
        c->cap_arts = c->cap_arts ? c->cap_arts * 2 : 16;
        c->arts = mi_xrealloc(c->arts, sizeof *c->arts * (size_t)c->cap_arts);
    }
    TlArtifact *a = &c->arts[c->n_arts++];
    memset(a, 0, sizeof *a);
    a->name = mi_xstrdup(r->name);
    a->line = r->line;
    a->md5_ok = r->md5_ok;
    a->url = t->cur_url ? mi_xstrdup(t->cur_url) : NULL;
    a->number = t->cur_number;
    a->role = trace_role_initial(r->name, &c->role);
    t->n_artifacts++;
    if (!strncmp(r->name, "minductor_pass_", 15) && !ends_with(r->name, "_diff") && !ends_with(r->name, "_svg") &&
        !ends_with(r->name, "_info"))
        c->n_pass_steps++;
    collectives_from(c, r);
    if (!t->opt->export_mode) tl_passes_record(t, c, r, trace_role_initial(r->name, &c->role));
    tl_prov_record(t, c, r, trace_role_initial(r->name, &c->role));
    tl_guards_record(c, r);
    if (!t->opt->export_mode) tl_why_record(c, r);
    /* cudagraphs: the fx cache key lists fx_kwargs[cudagraphs] */
    if (!strncmp(r->name, "fx_graph_cache_", 15)) {
        if (memmem(r->payload, r->payload_len, "fx_kwargs[cudagraphs]: BoxedBool(value=True)", 44)) c->cg_requested = 1;
        else if (memmem(r->payload, r->payload_len, "fx_kwargs[cudagraphs]: BoxedBool(value=False)", 45)) c->cg_requested = 0;
    }
    if (!strcmp(r->name, "recompile_reasons") && !c->recompile_reason) {
        cJSON *j = cJSON_ParseWithLength(r->payload, r->payload_len);
        cJSON *first = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, 0) : NULL;
        c->recompile_reason = mi_xstrdup(cJSON_IsString(first) ? first->valuestring : r->payload);
        cJSON_Delete(j);
    }
}

/* tlparse's simplify_filename: the part after "#link-tree/", or after a "<x>-seed-nspid<y>/"
 * directory (paths inside packaged binaries). */
static const char *simplify_filename(const char *f) {
    const char *lt = strstr(f, "#link-tree/");
    if (lt) return lt + 11;
    const char *sd = strstr(f, "-seed-nspid");
    if (sd) { const char *sl = strchr(sd, '/'); if (sl) return sl + 1; }
    return f;
}

/* The frames of a dynamo_start stack, without the trailing convert_frame wrappers tlparse drops
 * (maybe_remove_convert_frame_suffixes): catch_errors/_convert_frame/_convert_frame_assert or
 * three __call__ of torch/_dynamo/convert_frame.py. */
static int stack_frames(Tl *t, const cJSON *stack, const char **files, int *lines, const char **names, int max) {
    int n = 0;
    const cJSON *fr;
    cJSON_ArrayForEach(fr, stack) {
        if (n == max) break;
        cJSON *fn = cJSON_GetObjectItemCaseSensitive(fr, "filename");
        cJSON *ln = cJSON_GetObjectItemCaseSensitive(fr, "line");
        cJSON *nm = cJSON_GetObjectItemCaseSensitive(fr, "name");
        const char *file = cJSON_IsNumber(fn) ? trace_reader_intern(t->rd, (long)fn->valuedouble)
                           : cJSON_IsString(fn) ? fn->valuestring : NULL;
        files[n] = file ? simplify_filename(file) : "(unknown)";
        lines[n] = cJSON_IsNumber(ln) ? (int)ln->valuedouble : 0;
        names[n] = cJSON_IsString(nm) ? nm->valuestring : "?";
        n++;
    }
    static const char *const tails[2][3] = {{"catch_errors", "_convert_frame", "_convert_frame_assert"},
                                            {"__call__", "__call__", "__call__"}};
    for (int k = 0; k < 2 && n >= 3; k++) {
        bool all = true;
        for (int i = 0; i < 3; i++)
            all &= !strcmp(files[n - 3 + i], "torch/_dynamo/convert_frame.py") && !strcmp(names[n - 3 + i], tails[k][i]);
        if (all) n -= 3;
    }
    return n;
}

static void h_dynamo_start(Tl *t, const TraceRecord *r) {
    TlCompile *c = get_compile(t, r);
    cJSON *stack = cJSON_GetObjectItemCaseSensitive(r->meta, "stack");
    enum { MAXF = 512 };
    const char *files[MAXF], *names[MAXF];
    int lines[MAXF];
    int nf = stack_frames(t, stack, files, lines, names, MAXF);
    TlTrie *node = &t->trie;
    StrBuf sh;
    sb_init(&sh);
    for (int f = 0; f < nf; f++) {
        char label[700];
        snprintf(label, sizeof label, "%s:%d in %s", files[f], lines[f], names[f]);
        sb_put(&sh, "<li>");
        html_esc(&sh, label);
        sb_put(&sh, "</li>\n");
        TlTrie *kid = NULL;
        for (int i = 0; i < node->n_kids; i++)
            if (!strcmp(node->kids[i]->label, label)) { kid = node->kids[i]; break; }
        if (!kid) {
            kid = mi_xcalloc(1, sizeof *kid);
            kid->label = mi_xstrdup(label);
            sb_init(&kid->cids);
            node->kids = mi_xrealloc(node->kids, sizeof *node->kids * (size_t)(node->n_kids + 1));
            node->kids[node->n_kids++] = kid;
        }
        node = kid;
    }
    free(c->stack_html);
    c->stack_html = sb_take(&sh);
    if (node->cids.len) sb_putc(&node->cids, ' ');
    sb_put(&node->cids, c->id[0] ? c->id : "(none)");
}

static char *json_text(const cJSON *j) {
    if (!j || cJSON_IsNull(j)) return NULL;
    if (cJSON_IsString(j)) return mi_xstrdup(j->valuestring);
    StrBuf b;
    sb_init(&b);
    json_dump_py(&b, j);
    return sb_take(&b);
}

static void cg_fields(TlCompile *c, const cJSON *m) {
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(m, "cudagraph_skip_reason");
    if (cJSON_IsString(sr) && !c->cg_skip_reason) c->cg_skip_reason = mi_xstrdup(sr->valuestring);
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(m, "runtime_cudagraphify_time_us");
    if (cJSON_IsNumber(rt)) { c->cg_runtime_us += rt->valuedouble; c->n_cg_runtime++; }
}

static void h_metrics(Tl *t, const TraceRecord *r) {
    TraceRecord rr = *r;
    if (!rr.compile_id[0]) {        /* fall back on the compile_id field of the metrics */
        cJSON *id = cJSON_GetObjectItemCaseSensitive(r->meta, "compile_id");
        if (cJSON_IsString(id)) snprintf(rr.compile_id, sizeof rr.compile_id, "%s", id->valuestring);
    }
    TlCompile *c = get_compile(t, &rr);
    cg_fields(c, r->meta);
    if (!strcmp(r->key, "compilation_metrics")) {
        c->has_metrics = true;
        int attempt = r->attempt;
        if (attempt < 0 || rr.compile_id[0] == '!') attempt = 0;
        trace_metrics_status(r->meta, attempt, &c->failed, &c->restarted, c->status, sizeof c->status);
        free(c->fail_type); free(c->fail_reason); free(c->co_name);
        c->fail_type = json_text(cJSON_GetObjectItemCaseSensitive(r->meta, "fail_type"));
        c->fail_reason = json_text(cJSON_GetObjectItemCaseSensitive(r->meta, "fail_reason"));
        c->co_name = json_text(cJSON_GetObjectItemCaseSensitive(r->meta, "co_name"));
        cJSON *d = cJSON_GetObjectItemCaseSensitive(r->meta, "entire_frame_compile_time_s");
        if (cJSON_IsNumber(d)) { c->duration_s = d->valuedouble; c->has_duration = true; }
        cJSON *rs = cJSON_GetObjectItemCaseSensitive(r->meta, "restart_reasons");
        int nrs = cJSON_GetArraySize(rs);
        if (nrs > 0) {
            /* the restarted attempts are the ones before the stamped one (or itself when 0) */
            int upto = attempt > 0 ? attempt : 1;
            for (int a = 0; a < upto; a++) {
                TraceRecord ra = rr;
                if (attempt > 0) trace_attempt_id(rr.compile_id, a, ra.compile_id, sizeof ra.compile_id);
                TlCompile *e = get_compile(t, &ra);
                c = tl_find(t, rr.compile_id);          /* get_compile may have moved the array */
                if (attempt > 0) {
                    e->restarted = true;
                    trace_restart_reason(r->meta, a, e->status, sizeof e->status);
                }
                cJSON *x = cJSON_GetArrayItem(rs, a < nrs ? a : nrs - 1);
                free(e->restart_reasons);
                e->restart_reasons = json_text(x);
            }
        }
    }
    if (!strcmp(r->key, "compilation_metrics") && t->cur_url) {
        free(c->metrics_url);
        c->metrics_url = mi_xstrdup(t->cur_url);
    }
}

static void h_metrics_runtime(Tl *t, const TraceRecord *r) {
    TraceRecord rr = *r;
    if (!rr.compile_id[0]) {
        cJSON *id = cJSON_GetObjectItemCaseSensitive(r->meta, "compile_id");
        if (cJSON_IsString(id)) snprintf(rr.compile_id, sizeof rr.compile_id, "%s", id->valuestring);
    }
    cg_fields(get_compile(t, &rr), r->meta);
}

static bool has_cudagraph(const char *s) { return s && strcasestr(s, "cudagraph") != NULL; }

static void h_chromium(Tl *t, const TraceRecord *r) {
    if (!r->has_payload || !r->md5_ok) return;
    /* the payload is one JSON object (its md5 matched): copy it into the array as it is, and
     * parse it only when it may be about cudagraphs */
    const char *p = r->payload;
    size_t n = r->payload_len;
    while (n && (*p == ' ' || *p == '\n')) p++, n--;
    if (!n || *p != '{') return;
    fputs(t->n_chrome++ ? ",\n" : "\n", t->chrome);
    fwrite(p, 1, n, t->chrome);
    bool cg = memmem(p, n, "udagraph", 8) || memmem(p, n, "UDAGraph", 8);
    bool role = trace_role_relevant(p, n);
    bool pass = memmem(p, n, "\"pass.", 6) != NULL;
    if (!cg && !role && !pass) return;
    cJSON *ev = cJSON_ParseWithLength(r->payload, r->payload_len);
    if (!ev) return;
    if (pass) {      /* pass.<stage>.<pass> spans time the passes of a compile */
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name"), *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
        const cJSON *cid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), "compile_id");
        TlCompile *c = cJSON_IsString(cid) ? tl_find(t, cid->valuestring) : r->compile_id[0] ? tl_find(t, r->compile_id) : NULL;
        if (c && cJSON_IsString(nm) && !strncmp(nm->valuestring, "pass.", 5) && cJSON_IsString(ph) && cJSON_IsNumber(ts))
            tl_passes_span(c, nm->valuestring + 5, ph->valuestring[0], ts->valuedouble);
    }
    if (role) {
        const cJSON *cid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), "compile_id");
        TlCompile *c = cJSON_IsString(cid) ? tl_find(t, cid->valuestring) : NULL;
        int from = 0;
        char rl = c ? trace_role_event(&c->role, ev, c->n_arts, &from) : 0;
        for (int a = from; rl && a < c->n_arts; a++)
            if (trace_role_initial(c->arts[a].name, NULL) == 0) c->arts[a].role = rl;
    }
    cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
    if (cJSON_IsString(nm) && has_cudagraph(nm->valuestring)) {
        cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        cJSON *cid = cJSON_GetObjectItemCaseSensitive(args, "compile_id");
        TraceRecord rr = *r;
        if (cJSON_IsString(cid)) snprintf(rr.compile_id, sizeof rr.compile_id, "%s", cid->valuestring);
        TlCompile *c = get_compile(t, &rr);
        if (c->n_cg == c->cap_cg) {
            c->cap_cg = c->cap_cg ? c->cap_cg * 2 : 8;
            c->cg = mi_xrealloc(c->cg, sizeof *c->cg * (size_t)c->cap_cg);
        }
        cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
        TlCgEvent *e = &c->cg[c->n_cg++];
        e->name = mi_xstrdup(nm->valuestring);
        e->ph = cJSON_IsString(ph) && ph->valuestring[0] ? ph->valuestring[0] : '?';
        e->ts = cJSON_IsNumber(ts) ? ts->valuedouble : 0;
    }
    cJSON_Delete(ev);
}

static void h_other(Tl *t, const TraceRecord *r) {
    if (r->has_payload) h_artifact(t, r);
    else if (r->compile_id[0]) get_compile(t, r);
}

typedef void (*TlHandler)(Tl *, const TraceRecord *);
static const TlHandler handlers[TRACE_EV_NKINDS] = {
    [TRACE_EV_UNKNOWN] = h_other,
    [TRACE_EV_STR] = NULL,
    [TRACE_EV_DYNAMO_START] = h_dynamo_start,
    [TRACE_EV_CHROMIUM] = h_chromium,
    [TRACE_EV_ARTIFACT] = h_artifact,
    [TRACE_EV_GRAPH] = h_artifact,
    [TRACE_EV_OUTPUT_CODE] = h_artifact,
    [TRACE_EV_GUARDS] = h_artifact,
    [TRACE_EV_METRICS] = h_metrics,
    [TRACE_EV_METRICS_RUNTIME] = h_metrics_runtime,
    [TRACE_EV_SYMBOLIC] = h_other,
    [TRACE_EV_DESCRIBE] = NULL,
    [TRACE_EV_OTHER] = h_other,
};

int tl_parse(Tl *t, MiCtx *ctx, const char *log_path, const char *out_dir, const TlparseOptions *opt) {
    static const TlparseOptions defaults;
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->opt = opt ? opt : &defaults;
    t->rank = -1;
    snprintf(t->out, sizeof t->out, "%s", out_dir);
    compile_init(&t->nocid, "", 0);
    sb_init(&t->tmp);
    sb_init(&t->trie.cids);
    if (mkdir_p(ctx, out_dir) != 0) return -1;
    t->fq = fq_new((size_t)32 << 20);
    t->rd = trace_reader_open(ctx, log_path);
    if (!t->rd) return -1;
    char path[1200];
    snprintf(path, sizeof path, "%s/raw.jsonl.part", out_dir);
    t->raw_body_path = mi_xstrdup(path);
    t->raw = fopen(path, "w");
    snprintf(path, sizeof path, "%s/chromium_events.json", out_dir);
    t->chrome = fopen(path, "w");
    if (!t->raw || !t->chrome) return mi_err(ctx, path, 0, 0, "cannot write: %s", strerror(errno));
    setvbuf(t->raw, NULL, _IOFBF, 1 << 20);
    setvbuf(t->chrome, NULL, _IOFBF, 1 << 20);
    fputc('[', t->chrome);
    TraceRecord r;
    int rc;
    struct stat st;
    long total_mb = stat(log_path, &st) == 0 ? (long)(st.st_size >> 20) : 0;
    const TraceReadStats *rs = trace_reader_stats(t->rd);
    while ((rc = trace_reader_next(t->rd, &r)) == 1) {
        /* a log of hundreds of MB takes seconds: progress in the shell, and Ctrl-C stops it */
        if (mi_interrupted(ctx)) {
            rc = mi_err_interrupted(ctx, "while reading %s (%ld of %ld MB read; %s holds an unfinished report)", log_path,
                                    rs->bytes >> 20, total_mb, out_dir);
            break;
        }
        mi_progress(ctx, "reading the log (MB)", rs->bytes >> 20, total_mb);
        if (r.rank >= 0 && t->rank < 0) t->rank = r.rank;
        if (r.kind == TRACE_EV_STR) continue;      /* interned names: the string table */
        /* tlparse's files first (the handlers list the artifact with its file), then ours */
        const char *main_url;
        const char *pf = tl_layout_record(t, &r, &main_url);
        t->cur_url = main_url;
        t->cur_number = -1;
        TlHandler h = handlers[r.kind];
        if (h) h(t, &r);
        if (t->opt->export_mode) tl_export_record(t, &r);
        t->cur_url = NULL;
        if (r.kind != TRACE_EV_CHROMIUM) {
            StrBuf *b = &t->tmp;
            b->len = 0;
            tl_rawjsonl_line(b, &r, pf);
            fwrite(b->s, 1, b->len, t->raw);
        }
    }
    fputs("\n]\n", t->chrome);
    /* roles only mean something where the log shows a backward: an inference compile also
     * goes through fw_compiler_base */
    for (int i = 0; i < t->n_c; i++) {
        bool bwd = false;
        for (int a = 0; a < t->c[i].n_arts; a++) bwd |= t->c[i].arts[a].role == 'b';
        for (int a = 0; !bwd && a < t->c[i].n_arts; a++) t->c[i].arts[a].role = 0;
    }
    if (ferror(t->raw) || ferror(t->chrome)) t->write_failed = true;
    if (fclose(t->raw) != 0) t->write_failed = true;
    if (fclose(t->chrome) != 0) t->write_failed = true;
    t->raw = t->chrome = NULL;
    if (rc < 0) return -1;
    if (t->write_failed) {
        if (!ctx->err.msg[0]) mi_err(ctx, out_dir, 0, 0, "writing the report failed");
        return -1;
    }
    return 0;
}

static void compile_free(TlCompile *c) {
    for (int j = 0; j < c->n_arts; j++) { free(c->arts[j].name); free(c->arts[j].url); }
    free(c->arts);
    free(c->stack_html);
    tl_passes_free(c->passes);
    tl_prov_free(c->prov);
    tl_why_free(c->why);
    free(c->guards); free(c->recompile_full);
    for (int j = 0; j < c->n_cg; j++) free(c->cg[j].name);
    free(c->cg);
    free(c->fail_type); free(c->fail_reason); free(c->restart_reasons); free(c->co_name);
    free(c->metrics_url); free(c->recompile_reason); free(c->cg_skip_reason);
    sb_free(&c->coll);
}

static void trie_free(TlTrie *n, bool self) {
    for (int i = 0; i < n->n_kids; i++) trie_free(n->kids[i], true);
    free(n->kids);
    free(n->label);
    sb_free(&n->cids);
    if (self) free(n);
}

int tl_finish_files(Tl *t) {
    if (!t->fq) return t->write_failed ? -1 : 0;
    char err[600];
    int rc = fq_finish(t->fq, err, sizeof err);
    t->fq = NULL;
    if (rc != 0) {
        t->write_failed = true;
        mi_err(t->ctx, NULL, 0, 0, "%s", err);
    }
    return t->write_failed ? -1 : 0;
}

void tl_free(Tl *t) {
    if (t->fq) fq_finish(t->fq, NULL, 0);
    for (int i = 0; i < t->n_c; i++) compile_free(&t->c[i]);
    free(t->c);
    compile_free(&t->nocid);
    trie_free(&t->trie, false);
    for (int i = 0; i < t->n_breaks; i++) {
        free(t->breaks[i].metrics_url); free(t->breaks[i].type); free(t->breaks[i].reason); free(t->breaks[i].source);
    }
    free(t->breaks);
    if (t->raw) fclose(t->raw);
    if (t->chrome) fclose(t->chrome);
    trace_reader_close(t->rd);
    sb_free(&t->tmp);
    sb_free(&t->strtab);
    tl_dirs_free(t);
    if (t->raw_body_path) unlink(t->raw_body_path);   /* left only when the run failed */
    free(t->raw_body_path);
    free(t->last_payload_file);
    memset(t, 0, sizeof *t);
}

void tl_fill_summary(const Tl *t, TlparseSummary *s) {
    memset(s, 0, sizeof *s);
    if (t->rd) s->stats = *trace_reader_stats(t->rd);
    s->n_compiles = t->n_c;
    for (int i = 0; i < t->n_c; i++) {
        if (t->c[i].failed) s->n_failed++;
        if (t->c[i].restarted) s->n_restarted++;
    }
    s->n_artifacts = t->n_artifacts;
    s->n_chromium_events = (int)t->n_chrome;
    s->rank = t->rank;
    s->n_files = t->n_files;
    s->n_parser_failures = t->n_parser_failures;
    s->unknown_compile_id = t->unknown_compile_id;
}

int tlparse_run(MiCtx *ctx, const char *log_path, const char *out_dir, const TlparseOptions *opt,
                TlparseSummary *out) {
    uint64_t t0 = mi_now_ns();
    Tl t;
    int rc = tl_parse(&t, ctx, log_path, out_dir, opt);
    if (rc == 0) rc = tl_render(&t, log_path);
    if (rc == 0) rc = tl_finish_raw(&t, log_path);
    if (tl_finish_files(&t) != 0) rc = -1;
    if (out) {
        tl_fill_summary(&t, out);
        out->seconds = (double)(mi_now_ns() - t0) / 1e9;
    }
    tl_free(&t);
    return rc;
}

long tlparse_strict_failures(const TlparseSummary *s) {
    const long *k = s->stats.issues;
    return k[TRACE_BAD_GLOG] + k[TRACE_BAD_JSON] + k[TRACE_MD5_MISMATCH] + k[TRACE_TRUNCATED_PAYLOAD] +
           k[TRACE_STRAY_PAYLOAD] + k[TRACE_OTHER_RANK] + s->n_parser_failures;
}
