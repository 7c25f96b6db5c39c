/* tlparse_compare.c — two logs side by side (`minductor tlparse --compare A.log B.log`, the
 * shell's `compare`): two runs of one program, or two shell sessions traced with `trace on`.
 * Each log is read once into a summary per compile id (status, compile time, the graphs with
 * their op counts, the post-grad graph's text, pass times from the chromium spans
 * pass.*.<pass> / minductor's pass steps, kernels named in the output code); compile ids are
 * aligned by id (first-seen order of A, then those only in B), and every difference is shown:
 * text (returned) and compare.html (per compile: a table of graphs and op-count deltas, pass
 * times, kernels only in one run, and the post-grad graphs side by side). */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct CmpGraph { char *name; int ops; } CmpGraph;
typedef struct CmpPass { char *name; double us; int n; } CmpPass;
typedef struct CmpCompile {
    char id[64];
    char status[256];
    double secs; bool has_secs;
    CmpGraph *g; int ng;
    CmpPass *p; int np;
    char **k; int nk;               /* kernels in the output code */
    char *post;                     /* the last post-grad graph text */
    char *post_name;
    double open_ts[64]; char *open_name[64]; int nopen;   /* pass spans in flight */
} CmpCompile;
typedef struct CmpLog { CmpCompile *c; int n; } CmpLog;

static CmpCompile *cmp_get(CmpLog *l, const char *id) {
    for (int i = 0; i < l->n; i++) if (!strcmp(l->c[i].id, id)) return &l->c[i];
    l->c = mi_xrealloc(l->c, sizeof *l->c * (size_t)(l->n + 1));
    CmpCompile *c = &l->c[l->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->status, sizeof c->status, "no metrics");
    return c;
}

static void add_pass(CmpCompile *c, const char *name, double us) {
    for (int i = 0; i < c->np; i++)
        if (!strcmp(c->p[i].name, name)) { c->p[i].us += us; c->p[i].n++; return; }
    c->p = mi_xrealloc(c->p, sizeof *c->p * (size_t)(c->np + 1));
    c->p[c->np++] = (CmpPass){mi_xstrdup(name), us, 1};
}

/* Kernel names defined in an output code: Inductor's "NAME = async_compile.<kind>(" and the C
 * functions minductor generates ("void NAME(" at the start of a line, call excepted). */
static void note_kernels(CmpCompile *c, const char *code) {
    for (const char *p = code; *p;) {
        size_t n = strcspn(p, "\n");
        const char *ac = memmem(p, n, " = async_compile.", 17);
        const char *name = NULL;
        size_t nn = 0;
        if (ac && ac > p) { name = p; nn = (size_t)(ac - p); }
        else if (n > 5 && !memcmp(p, "void ", 5)) {
            const char *par = memchr(p + 5, '(', n - 5);
            if (par) { name = p + 5; nn = (size_t)(par - name); }
        } else if (n > 12 && !memcmp(p, "static void ", 12)) {
            const char *par = memchr(p + 12, '(', n - 12);
            if (par) { name = p + 12; nn = (size_t)(par - name); }
        }
        if (name && nn && nn < 200 && !memchr(name, ' ', nn) && strncmp(name, "call", nn)) {
            c->k = mi_xrealloc(c->k, sizeof *c->k * (size_t)(c->nk + 1));
            c->k[c->nk] = mi_xmalloc(nn + 1);
            memcpy(c->k[c->nk], name, nn);
            c->k[c->nk++][nn] = 0;
        }
        p += n + (p[n] == '\n');
    }
}

static void note_chromium(CmpLog *l, const TraceRecord *r) {
    if (!r->md5_ok || !memmem(r->payload, r->payload_len, "pass.", 5)) return;
    cJSON *ev = cJSON_ParseWithLength(r->payload, r->payload_len);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name"), *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    const cJSON *cid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), "compile_id");
    const char *id = cJSON_IsString(cid) ? cid->valuestring : r->compile_id;
    if (cJSON_IsString(nm) && !strncmp(nm->valuestring, "pass.", 5) && cJSON_IsString(ph) && cJSON_IsNumber(ts) && *id) {
        CmpCompile *c = cmp_get(l, id);
        if (ph->valuestring[0] == 'B' && c->nopen < 64) {
            c->open_name[c->nopen] = mi_xstrdup(nm->valuestring + 5);
            c->open_ts[c->nopen++] = ts->valuedouble;
        } else if (ph->valuestring[0] == 'E') {
            for (int i = c->nopen - 1; i >= 0; i--)
                if (!strcmp(c->open_name[i], nm->valuestring + 5)) {
                    add_pass(c, c->open_name[i], ts->valuedouble - c->open_ts[i]);
                    free(c->open_name[i]);
                    c->open_name[i] = c->open_name[--c->nopen];
                    c->open_ts[i] = c->open_ts[c->nopen];
                    break;
                }
        }
    }
    cJSON_Delete(ev);
}

static int read_log(MiCtx *ctx, const char *path, CmpLog *l) {
    memset(l, 0, sizeof *l);
    TraceReader *rd = trace_reader_open(ctx, path);
    if (!rd) return -1;
    TraceRecord r;
    int rc;
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        if (r.kind == TRACE_EV_CHROMIUM) { note_chromium(l, &r); continue; }
        if (!r.compile_id[0]) continue;
        CmpCompile *c = cmp_get(l, r.compile_id);
        if (r.kind == TRACE_EV_METRICS && !strcmp(r.key, "compilation_metrics")) {
            bool failed, restarted;
            trace_metrics_status(r.meta, r.attempt, &failed, &restarted, c->status, sizeof c->status);
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(r.meta, "entire_frame_compile_time_s");
            if (cJSON_IsNumber(d)) { c->secs = d->valuedouble; c->has_secs = true; }
        }
        if (!r.has_payload || !r.md5_ok) continue;
        if (trace_is_graph_name(r.name) || (!strncmp(r.name, "minductor_pass_", 15) && !strstr(r.name + 15, "_diff") &&
                                            !strstr(r.name + 15, "_svg") && !strstr(r.name + 15, "_info"))) {
            c->g = mi_xrealloc(c->g, sizeof *c->g * (size_t)(c->ng + 1));
            c->g[c->ng++] = (CmpGraph){mi_xstrdup(r.name), tl_count_ops(r.payload)};
            if (!strcmp(r.name, "inductor_post_grad_graph") || !strcmp(r.name, "after_post_grad_graph")) {
                free(c->post);
                free(c->post_name);
                c->post = mi_xstrdup(r.payload);
                c->post_name = mi_xstrdup(r.name);
            }
        }
        if (r.kind == TRACE_EV_OUTPUT_CODE) note_kernels(c, r.payload);
    }
    trace_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

static void free_log(CmpLog *l) {
    for (int i = 0; i < l->n; i++) {
        CmpCompile *c = &l->c[i];
        for (int k = 0; k < c->ng; k++) free(c->g[k].name);
        for (int k = 0; k < c->np; k++) free(c->p[k].name);
        for (int k = 0; k < c->nk; k++) free(c->k[k]);
        for (int k = 0; k < c->nopen; k++) free(c->open_name[k]);
        free(c->g); free(c->p); free(c->k); free(c->post); free(c->post_name);
    }
    free(l->c);
}

static CmpCompile *find(CmpLog *l, const char *id) {
    for (int i = 0; i < l->n; i++) if (!strcmp(l->c[i].id, id)) return &l->c[i];
    return NULL;
}

/* The n-th graph of that name in c (graphs repeat: forward then backward). */
static const CmpGraph *graph_nth(const CmpCompile *c, const char *name, int nth) {
    for (int i = 0; c && i < c->ng; i++)
        if (!strcmp(c->g[i].name, name) && nth-- == 0) return &c->g[i];
    return NULL;
}

static bool has_kernel(const CmpCompile *c, const char *k) {
    for (int i = 0; c && i < c->nk; i++) if (!strcmp(c->k[i], k)) return true;
    return false;
}

static const char *CSS =
    "table.sbs{width:100%;table-layout:fixed}table.sbs td{font-family:monospace;font-size:12px;white-space:pre-wrap}"
    "td.del{background:#fdd}td.add{background:#dfd}td.none{background:#f4f4f4}td.same{color:#444}"
    ".only{color:#b00}";

/* One compile of the aligned list, into text and html. */
static void one(StrBuf *t, StrBuf *h, const char *id, CmpCompile *a, CmpCompile *b, int *ndiff) {
    sb_printf(t, "compile %s:\n", id);
    sb_put(h, "<h2 id=\"");
    html_esc(h, id);
    sb_put(h, "\">compile ");
    html_esc(h, id);
    sb_put(h, "</h2>\n");
    if (!a || !b) {
        sb_printf(t, "  only in %s\n", a ? "A" : "B");
        sb_printf(h, "<p class=\"only\">only in run %s</p>\n", a ? "A" : "B");
        (*ndiff)++;
        return;
    }
    bool same_status = !strcmp(a->status, b->status);
    sb_printf(t, "  status: %s%s%s\n", a->status, same_status ? "" : "  |  B: ", same_status ? "" : b->status);
    *ndiff += !same_status;
    sb_put(h, "<table><tr><th></th><th>A</th><th>B</th></tr>\n<tr><td>status</td><td>");
    html_esc(h, a->status);
    sb_put(h, "</td><td>");
    html_esc(h, b->status);
    sb_put(h, "</td></tr>\n");
    if (a->has_secs || b->has_secs) {
        sb_printf(t, "  compile time: %.3f s | %.3f s\n", a->secs, b->secs);
        sb_printf(h, "<tr><td>compile time (s)</td><td>%.3f</td><td>%.3f</td></tr>\n", a->secs, b->secs);
    }
    sb_put(h, "</table>\n<h3>Graphs</h3>\n<table><tr><th>graph</th><th>ops A</th><th>ops B</th><th>&Delta;</th></tr>\n");
    /* graphs: A's in order (n-th occurrence matched), then B's extra ones */
    for (int pass = 0; pass < 2; pass++) {
        CmpCompile *x = pass ? b : a, *y = pass ? a : b;
        for (int i = 0; i < x->ng; i++) {
            int nth = 0;
            for (int k = 0; k < i; k++) nth += !strcmp(x->g[k].name, x->g[i].name);
            const CmpGraph *o = graph_nth(y, x->g[i].name, nth);
            if (pass && o) continue;
            int oa = pass ? -1 : x->g[i].ops, ob = pass ? x->g[i].ops : o ? o->ops : -1;
            if (!pass && !o) ob = -1;
            if (oa != ob) {
                (*ndiff)++;
                char sa[24] = "absent", sb2[24] = "absent", nt[16] = "";
                if (oa >= 0) snprintf(sa, sizeof sa, "%d", oa);
                if (ob >= 0) snprintf(sb2, sizeof sb2, "%d", ob);
                if (nth) snprintf(nt, sizeof nt, "#%d", nth + 1);
                sb_printf(t, "  %s%s: ops %s -> %s\n", x->g[i].name, nt, sa, sb2);
            }
            sb_put(h, "<tr><td>");
            html_esc(h, x->g[i].name);
            if (nth) sb_printf(h, " #%d", nth + 1);
            if (oa >= 0) sb_printf(h, "</td><td>%d", oa); else sb_put(h, "</td><td>-");
            if (ob >= 0) sb_printf(h, "</td><td>%d", ob); else sb_put(h, "</td><td>-");
            if (oa >= 0 && ob >= 0) sb_printf(h, "</td><td>%+d</td></tr>\n", ob - oa);
            else sb_put(h, "</td><td class=\"only\">only in one</td></tr>\n");
        }
    }
    sb_put(h, "</table>\n");
    if (a->np || b->np) {
        sb_put(h, "<h3>Passes (time from the pass.* spans)</h3>\n<table><tr><th>pass</th><th>A (ms)</th><th>B (ms)</th></tr>\n");
        for (int pass = 0; pass < 2; pass++) {
            CmpCompile *x = pass ? b : a, *y = pass ? a : b;
            for (int i = 0; i < x->np; i++) {
                const CmpPass *o = NULL;
                for (int k = 0; k < y->np; k++) if (!strcmp(y->p[k].name, x->p[i].name)) o = &y->p[k];
                if (pass && o) continue;
                double ua = pass ? -1 : x->p[i].us, ub = pass ? x->p[i].us : o ? o->us : -1;
                sb_put(h, "<tr><td>");
                html_esc(h, x->p[i].name);
                if (ua >= 0) sb_printf(h, "</td><td>%.3f", ua / 1000); else sb_put(h, "</td><td>-");
                if (ub >= 0) sb_printf(h, "</td><td>%.3f</td></tr>\n", ub / 1000); else sb_put(h, "</td><td>-</td></tr>\n");
                if (ua < 0 || ub < 0) { (*ndiff)++; sb_printf(t, "  pass %s only in %s\n", x->p[i].name, ua < 0 ? "B" : "A"); }
            }
        }
        sb_put(h, "</table>\n");
    }
    sb_printf(t, "  kernels: %d | %d\n", a->nk, b->nk);
    sb_printf(h, "<h3>Kernels (%d | %d)</h3>\n<ul>\n", a->nk, b->nk);
    for (int pass = 0; pass < 2; pass++) {
        CmpCompile *x = pass ? b : a, *y = pass ? a : b;
        for (int i = 0; i < x->nk; i++) {
            bool both = has_kernel(y, x->k[i]);
            if (both && pass) continue;
            if (!both) { (*ndiff)++; sb_printf(t, "  kernel %s only in %s\n", x->k[i], pass ? "B" : "A"); }
            sb_put(h, "<li>");
            html_esc(h, x->k[i]);
            sb_printf(h, both ? "</li>\n" : " <span class=\"only\">only in %s</span></li>\n", pass ? "B" : "A");
        }
    }
    sb_put(h, "</ul>\n");
    if (a->post || b->post) {
        int na = 0, nd = 0;
        sb_put(h, "<h3>Post-grad graph, A | B</h3>\n");
        tl_side_by_side(h, a->post, b->post, "A", "B", &na, &nd);
        if (na || nd) { (*ndiff)++; sb_printf(t, "  post-grad graph: %d line(s) removed, %d added\n", nd, na); }
    }
}

char *tlparse_compare(MiCtx *ctx, const char *log_a, const char *log_b, const char *out_dir) {
    CmpLog A, B;
    if (read_log(ctx, log_a, &A) != 0) return NULL;
    if (read_log(ctx, log_b, &B) != 0) { free_log(&A); return NULL; }
    StrBuf t, h;
    sb_init(&t);
    sb_init(&h);
    sb_printf(&t, "A: %s (%d compile ids)\nB: %s (%d compile ids)\n", log_a, A.n, log_b, B.n);
    tl_page_begin(&h, "Two runs compared");
    sb_printf(&h, "<style>%s</style>\n<p>A: <code>", CSS);
    html_esc(&h, log_a);
    sb_put(&h, "</code><br>B: <code>");
    html_esc(&h, log_b);
    sb_put(&h, "</code></p>\n<h2>Compile ids</h2>\n<table><tr><th>compile id</th><th>A</th><th>B</th></tr>\n");
    const char **ids = mi_xmalloc(sizeof *ids * (size_t)(A.n + B.n + 1));
    int n = 0;
    for (int i = 0; i < A.n; i++) ids[n++] = A.c[i].id;
    for (int i = 0; i < B.n; i++) if (!find(&A, B.c[i].id)) ids[n++] = B.c[i].id;
    for (int i = 0; i < n; i++) {
        CmpCompile *a = find(&A, ids[i]), *b = find(&B, ids[i]);
        sb_put(&h, "<tr><td><a href=\"#");
        html_esc(&h, ids[i]);
        sb_put(&h, "\">");
        html_esc(&h, ids[i]);
        sb_put(&h, "</a></td><td>");
        html_esc(&h, a ? a->status : "-");
        sb_put(&h, "</td><td>");
        html_esc(&h, b ? b->status : "-");
        sb_put(&h, "</td></tr>\n");
    }
    sb_put(&h, "</table>\n");
    int ndiff = 0;
    for (int i = 0; i < n; i++) one(&t, &h, ids[i], find(&A, ids[i]), find(&B, ids[i]), &ndiff);
    sb_printf(&t, "%d difference(s)\n", ndiff);
    sb_printf(&h, "<p><b>%d difference(s)</b></p>\n", ndiff);
    tl_page_end(&h);
    free(ids);
    free_log(&A);
    free_log(&B);
    int rc = 0;
    if (out_dir) {
        char p[1200];
        snprintf(p, sizeof p, "%s/compare.html", out_dir);
        if (mkdir_p(ctx, out_dir) != 0) rc = -1;
        else {
            FILE *f = fopen(p, "w");
            if (!f || fwrite(h.s, 1, h.len, f) != h.len) rc = mi_err(ctx, p, 0, 0, "cannot write");
            if (f && fclose(f) != 0) rc = mi_err(ctx, p, 0, 0, "cannot write");
        }
    }
    sb_free(&h);
    if (rc) { sb_free(&t); return NULL; }
    return sb_take(&t);
}
