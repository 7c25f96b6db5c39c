/* tlparse_provenance.c — tlparse -i: provenance_tracking_<dir>.html for every compile
 * directory, a linked view of FX before the passes, FX after them, the IR buffers and the
 * generated code, where clicking a line highlights the lines it became or came from in the
 * other panes. Unlike tlparse's (one graph per directory, the last), every graph of the log
 * gets its view: each inductor_provenance_tracking_node_mappings record closes one section with
 * the texts logged before it in that compile (a training compile: forward, then backward).
 *
 * Line mappings follow tlparse's convert_node_mappings_to_line_numbers (lib.rs): a node's line
 * is the last line "NAME: ..." / "NAME = ..." of a graph text; a kernel "NAME:K" maps to the
 * first line after its "[Provenance debug handles] NAME:K" comment that names the kernel, else
 * to every line that names it; minductor also maps the kernel's definition and, through
 * irToPost, the IR block ("opN: ..." to the blank line) holding each buffer. */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <stdlib.h>
#include <string.h>

enum { P_PRE, P_POST, P_IR, P_CODE, P_N };
static const char *const pane_name[P_N] = {"pre", "post", "ir", "code"};

struct TlProv {
    char *text[P_N];
    char *title[P_N];
    StrBuf html;
    int nsec;
};

void tl_prov_free(TlProv *p) {
    if (!p) return;
    for (int i = 0; i < P_N; i++) { free(p->text[i]); free(p->title[i]); }
    sb_free(&p->html);
    free(p);
}

/* Lines of a text as (start, length) pairs; count returned. */
typedef struct Ln { const char *s; size_t n; } Ln;
static int split(const char *t, Ln **out) {
    int n = 0, cap = 0;
    Ln *v = NULL;
    for (const char *p = t ? t : ""; *p;) {
        size_t len = strcspn(p, "\n");
        if (n == cap) { cap = cap ? 2 * cap : 256; v = mi_xrealloc(v, sizeof *v * (size_t)cap); }
        v[n++] = (Ln){p, len};
        p += len + (p[len] == '\n');
    }
    *out = v;
    return n;
}

/* tlparse extract_node_name: before '=', then before ':', trimmed; not for comment lines. */
static bool node_of_line(Ln l, char *name, size_t nn) {
    const char *p = l.s, *e = l.s + l.n;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (p == e || *p == '#') return false;
    const char *eq = memchr(p, '=', (size_t)(e - p));
    const char *end = eq ? eq : e;
    const char *co = memchr(p, ':', (size_t)(end - p));
    if (co) end = co;
    while (end > p && end[-1] == ' ') end--;
    if (end == p || (size_t)(end - p) >= nn) return false;
    snprintf(name, nn, "%.*s", (int)(end - p), p);
    return true;
}

static int node_line(const Ln *v, int n, const char *name) {
    int line = 0;
    char nm[256];
    for (int i = 0; i < n; i++)
        if (node_of_line(v[i], nm, sizeof nm) && !strcmp(nm, name)) line = i + 1;
    return line;
}

static bool has(Ln l, const char *s) { return memmem(l.s, l.n, s, strlen(s)) != NULL; }

/* Lines of kernel "NAME:K" in the code (1-based; count returned, into out). */
static int kernel_lines(const Ln *v, int n, const char *handle, int *out, int max) {
    char pure[300];
    const char *colon = strrchr(handle, ':');
    snprintf(pure, sizeof pure, "%.*s", (int)(colon ? colon - handle : (long)strlen(handle)), handle);
    int k = 0;
    for (int i = 0; i < n && colon; i++) {
        if (!has(v[i], handle) || !has(v[i], "debug handles")) continue;
        for (int j = i + 1; j < n && j < i + 40; j++)
            if (has(v[j], pure)) { out[k++] = j + 1; break; }
        if (!k) out[k++] = i + 1;          /* an extern call that does not name it: the comment */
        break;
    }
    if (!k)
        for (int i = 0; i < n && k < max; i++)
            if (has(v[i], pure)) out[k++] = i + 1;
    /* the kernel's definition: "static void NAME(" (C) / "NAME = async_compile." (Python) */
    char d1[320], d2[320];
    snprintf(d1, sizeof d1, "static void %s(", pure);
    snprintf(d2, sizeof d2, "%s = async_compile.", pure);
    for (int i = 0; i < n && k < max; i++)
        if (has(v[i], d1) || (v[i].n >= strlen(d2) && !memcmp(v[i].s, d2, strlen(d2)))) { out[k++] = i + 1; break; }
    return k;
}

/* IR block lines of buffer `buf` in ir_post_fusion text: from the "opN:" header above its
 * "    bufN: " line to the blank line after. */
static int ir_lines(const Ln *v, int n, const char *buf, int *out, int max) {
    char pat[200];
    snprintf(pat, sizeof pat, "%s: ", buf);
    for (int i = 0; i < n; i++) {
        const char *p = v[i].s;
        size_t off = 0;
        while (off < v[i].n && p[off] == ' ') off++;
        if (v[i].n - off < strlen(pat) || memcmp(p + off, pat, strlen(pat))) continue;
        int a = i, b = i, k = 0;
        while (a > 0 && v[a - 1].n) a--;
        while (b + 1 < n && v[b + 1].n) b++;
        for (int x = a; x <= b && k < max; x++) out[k++] = x + 1;
        return k;
    }
    return 0;
}

/* Add "from": [to...] line pairs to a JSON map (string keys). */
static void link_lines(cJSON *map, int from, const int *to, int nto) {
    if (from <= 0 || nto <= 0) return;
    char key[16];
    snprintf(key, sizeof key, "%d", from);
    cJSON *a = cJSON_GetObjectItemCaseSensitive(map, key);
    if (!a) a = cJSON_AddArrayToObject(map, key);
    for (int i = 0; i < nto; i++) {
        bool dup = false;
        cJSON *x;
        cJSON_ArrayForEach(x, a) dup |= (int)x->valuedouble == to[i];
        if (!dup) cJSON_AddItemToArray(a, cJSON_CreateNumber(to[i]));
    }
}

/* The line maps between the panes from a node mappings JSON: "pre>post", "post>pre",
 * "post>code", "code>post", "post>ir", "ir>post". */
static cJSON *line_maps(TlProv *P, const cJSON *nm) {
    Ln *v[P_N];
    int n[P_N];
    for (int i = 0; i < P_N; i++) n[i] = split(P->text[i], &v[i]);
    cJSON *out = cJSON_CreateObject();
    cJSON *pp = cJSON_AddObjectToObject(out, "pre>post"), *qp = cJSON_AddObjectToObject(out, "post>pre");
    cJSON *pc = cJSON_AddObjectToObject(out, "post>code"), *cp = cJSON_AddObjectToObject(out, "code>post");
    cJSON *pi = cJSON_AddObjectToObject(out, "post>ir"), *ip = cJSON_AddObjectToObject(out, "ir>post");
    const cJSON *e, *x;
    enum { MAXL = 64 };
    int tl[MAXL];
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(nm, "preToPost")) {
        int from = node_line(v[P_PRE], n[P_PRE], e->string);
        cJSON_ArrayForEach(x, e) if (cJSON_IsString(x)) {
            int to = node_line(v[P_POST], n[P_POST], x->valuestring);
            if (to) { link_lines(pp, from, &to, 1); link_lines(qp, to, &from, 1); }
        }
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(nm, "postToPre")) {
        int from = node_line(v[P_POST], n[P_POST], e->string);
        cJSON_ArrayForEach(x, e) if (cJSON_IsString(x)) {
            int to = node_line(v[P_PRE], n[P_PRE], x->valuestring);
            if (to) { link_lines(qp, from, &to, 1); link_lines(pp, to, &from, 1); }
        }
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(nm, "cppCodeToPost")) {
        int nk = kernel_lines(v[P_CODE], n[P_CODE], e->string, tl, MAXL);
        cJSON_ArrayForEach(x, e) if (cJSON_IsString(x)) {
            int to = node_line(v[P_POST], n[P_POST], x->valuestring);
            if (!to) continue;
            link_lines(pc, to, tl, nk);
            for (int k = 0; k < nk; k++) link_lines(cp, tl[k], &to, 1);
        }
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(nm, "irToPost")) {
        int nb = ir_lines(v[P_IR], n[P_IR], e->string, tl, MAXL);
        cJSON_ArrayForEach(x, e) if (cJSON_IsString(x)) {
            int to = node_line(v[P_POST], n[P_POST], x->valuestring);
            if (!to) continue;
            link_lines(pi, to, tl, nb);
            for (int k = 0; k < nb; k++) link_lines(ip, tl[k], &to, 1);
        }
    }
    for (int i = 0; i < P_N; i++) free(v[i]);
    return out;
}

static void pane(StrBuf *b, int sec, int p, const char *title, const char *text) {
    sb_printf(b, "<div class=\"pane\"><div class=\"ph\">%s: ", pane_name[p]);
    html_esc(b, title ? title : "(not in the log)");
    sb_printf(b, "</div><pre data-pane=\"%s\">", pane_name[p]);
    Ln *v;
    int n = split(text, &v);
    for (int i = 0; i < n; i++) {
        sb_printf(b, "<span class=\"l\" id=\"s%d-%s-%d\" data-l=\"%d\">", sec, pane_name[p], i + 1, i + 1);
        html_escn(b, v[i].s, v[i].n);
        sb_put(b, "</span>");            /* block spans: no newline between them */
    }
    free(v);
    sb_put(b, "</pre></div>\n");
}

/* One section: the four panes and the line maps of one node mappings record (NULL: none). */
static void section(TlProv *P, const cJSON *nm, char role) {
    StrBuf *b = &P->html;
    int sec = ++P->nsec;
    sb_printf(b, "<h2 id=\"graph-%d\">graph %d%s</h2>\n", sec, sec, role == 'b' ? " (backward)" : role == 'f' ? " (forward)" : "");
    if (!nm) sb_put(b, "<p class=\"warn\">No inductor_provenance_tracking_node_mappings for this graph: the panes are not linked.</p>\n");
    cJSON *maps = nm ? line_maps(P, nm) : cJSON_CreateObject();
    char *mj = cJSON_PrintUnformatted(maps);
    /* JSON in a script element: "</" must not appear inside it */
    sb_printf(b, "<div class=\"sec\" data-sec=\"%d\"><script type=\"application/json\" class=\"maps\">", sec);
    for (const char *c = mj; *c; c++) {
        if (c[0] == '<' && c[1] == '/') sb_put(b, "<\\/"), c++;
        else sb_putc(b, *c);
    }
    sb_put(b, "</script>\n<div class=\"panes\">\n");
    for (int p = 0; p < P_N; p++) pane(b, sec, p, P->title[p], P->text[p]);
    sb_put(b, "</div></div>\n");
    free(mj);
    cJSON_Delete(maps);
}

static TlProv *prov(TlCompile *c) {
    if (!c->prov) { c->prov = mi_xcalloc(1, sizeof *c->prov); sb_init(&c->prov->html); }
    return c->prov;
}

static void set_text(TlProv *P, int p, const char *name, const TraceRecord *r) {
    free(P->text[p]);
    free(P->title[p]);
    P->text[p] = mi_xstrdup(r->payload);
    P->title[p] = mi_xstrdup(name);
}

void tl_prov_record(Tl *t, TlCompile *c, const TraceRecord *r, char role) {
    if (!t->opt->provenance || !r->md5_ok) return;
    const char *n = r->name;
    if (!strcmp(n, "before_pre_grad_graph") || !strcmp(n, "inductor_pre_grad_graph")) set_text(prov(c), P_PRE, n, r);
    else if (!strcmp(n, "before_post_grad_graph")) {     /* minductor's sessions start from it */
        TlProv *P = prov(c);
        if (!P->text[P_PRE] || !strcmp(P->title[P_PRE], n)) set_text(P, P_PRE, n, r);
    } else if (!strcmp(n, "after_post_grad_graph") || !strcmp(n, "inductor_post_grad_graph")) set_text(prov(c), P_POST, n, r);
    else if (!strcmp(n, "ir_post_fusion") || (!strcmp(n, "ir_pre_fusion") && !(c->prov && c->prov->text[P_IR])))
        set_text(prov(c), P_IR, n, r);
    else if (!strcmp(n, "inductor_output_code") || !strcmp(n, "inductor_aot_wrapper_code")) set_text(prov(c), P_CODE, n, r);
    else if (!strcmp(n, "inductor_provenance_tracking_node_mappings")) {
        TlProv *P = prov(c);
        cJSON *nm = cJSON_ParseWithLength(r->payload, r->payload_len);
        section(P, nm, role);
        cJSON_Delete(nm);
        for (int i = 0; i < P_N; i++) { free(P->text[i]); free(P->title[i]); P->text[i] = P->title[i] = NULL; }
    }
}

static const char PROV_CSS[] =
    ".panes{display:grid;grid-template-columns:repeat(4,1fr);gap:6px}.pane{min-width:0}"
    ".ph{font-weight:bold;font-size:13px;margin:4px 0}pre{height:32em;overflow:auto;margin:0;font-size:11px;"
    "background:#fafafa;border:1px solid #ddd}span.l{display:block;cursor:pointer;white-space:pre}"
    "span.l:hover{background:#eef}span.l.hl{background:#ffe066}span.l.src{background:#ffb347}";

/* Click a line: it and every line reachable through the maps light up (post is the hub). */
static const char PROV_JS[] =
    "document.querySelectorAll('.sec').forEach(function(sec){"
    "var m=JSON.parse(sec.querySelector('script.maps').textContent);var id=sec.dataset.sec;"
    "function el(p,l){return document.getElementById('s'+id+'-'+p+'-'+l);}"
    "function get(k,l){return (m[k]&&m[k][l])||[];}"
    "function mark(p,l,cls){var e=el(p,l);if(e){e.classList.add(cls);return e;}return null;}"
    "sec.addEventListener('click',function(ev){var t=ev.target.closest('span.l');if(!t)return;"
    "sec.querySelectorAll('span.hl,span.src').forEach(function(e){e.classList.remove('hl','src');});"
    "var p=t.parentNode.dataset.pane,l=t.dataset.l;t.classList.add('src');"
    "var posts=p==='post'?[l]:get(p+'>post',l);var first={};"
    "posts.forEach(function(q){if(p!=='post'){var e=mark('post',q,'hl');if(e&&!first.post)first.post=e;}"
    "['pre','code','ir'].forEach(function(o){if(o===p)return;get('post>'+o,q).forEach(function(x){"
    "var e=mark(o,x,'hl');if(e&&!first[o])first[o]=e;});});});"
    "Object.keys(first).forEach(function(k){var e=first[k],pre=e.parentNode;pre.scrollTop=e.offsetTop-pre.offsetTop-60;});"
    "});});"
    /* #s<sec>-<pane>-<line> in the address: that line is clicked on load (links, screenshots) */
    "if(location.hash){var e=document.getElementById(location.hash.slice(1));if(e){e.click();e.scrollIntoView();}}";

void tl_prov_pages(Tl *t) {
    if (!t->opt->provenance || t->opt->no_artifact_files) return;
    for (int i = 0; i < t->n_dirs; i++) {
        const TlDir *d = &t->dirs[i];
        TlCompile *c = tl_find_key(t, d->key);
        if (c && c->prov && (c->prov->text[P_POST] || c->prov->text[P_CODE])) section(c->prov, NULL, 0);
        StrBuf b;
        sb_init(&b);
        char title[200];
        snprintf(title, sizeof title, "Provenance %s", d->key);
        tl_page_begin(&b, title);
        sb_printf(&b, "<style>%s</style>\n<p><a href=\"index.html\">index</a>", PROV_CSS);
        if (c) {
            char href[200];
            tl_compile_page_rel(c, href, sizeof href);
            sb_printf(&b, " · <a href=\"%s\">compile page</a>", href);
        }
        sb_put(&b, "</p>\n<p>Click a line: the FX nodes before the passes (pre), after them (post), the IR buffers (ir) and "
                   "the generated code (code) that it became or came from light up.</p>\n");
        if (c && c->prov && c->prov->nsec) {
            sb_put(&b, "<p>");
            for (int k = 1; k <= c->prov->nsec; k++) sb_printf(&b, "<a href=\"#graph-%d\">graph %d</a> ", k, k);
            sb_put(&b, "</p>\n");
            sb_put(&b, c->prov->html.s);
        } else sb_put(&b, "<p>No graphs with provenance in this compile directory.</p>\n");
        sb_printf(&b, "<script>%s</script>\n", PROV_JS);
        tl_page_end(&b);
        char rel[300];
        snprintf(rel, sizeof rel, "provenance_tracking_%s.html", d->dirname);
        tl_write(t, rel, b.s, b.len);
        sb_free(&b);
    }
}
