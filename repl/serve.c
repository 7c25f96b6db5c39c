/* serve.c — `serve`: a live page of the session for the projector. The loopback server of
 * trace/http_serve.h (shared with `minductor tlparse --serve`) answers from its own thread; the
 * shell thread rebuilds the page after every command the teacher types (live_refresh, called
 * from the dispatcher) and hands it over under a mutex, so the server never touches the session.
 * The page polls /gen once a second and swaps in /live when the generation moved.
 *
 * What the page shows: the command just typed and its output, the FX graph picture (or the
 * entered subgraph), the pass list with the last step's diff, the loop IR after `lower`, and the
 * fusion picture after `sched`. Pictures are redrawn only when their text changed (the FX print,
 * the IR print), so typing `passes` does not lay out the graph again. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "teach.h"
#include "trace/http_serve.h"
#include "viz/viz.h"

struct LiveView {
    HttpServer *srv;
    pthread_mutex_t mu;
    char *body;              /* the #live fragment, owned under mu */
    long gen;                /* bumped when body changes */
    /* the shell thread's caches */
    uint64_t fx_hash, ir_hash;
    char *fx_svg, *fusion_svg;
};

/* FNV-1a of a text: tells whether a picture's source changed since it was drawn. */
static uint64_t hash_text(const char *s) {
    uint64_t h = 1469598103934665603ull;       /* FNV-1a */
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A picture as inline SVG text (malloc'd), or a note saying why there is none. */
static char *render_svg(Session *s, VizGraph *vg) {
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    VizRenderer *vr = vg ? session_renderer(s) : NULL;
    size_t len = 0;
    char *svg = vr ? viz_render_data(s->ctx, vr, vg, "svg", &len) : NULL;
    if (svg) html_svg_inline(&sb, svg, len);
    else {
        char buf[1200];
        sb_put(&sb, "<p class=\"note\">no picture: ");
        const char *m = mi_err_str(s->ctx, buf, sizeof buf);
        html_escape(&sb, m, strlen(m));
        sb_put(&sb, "</p>");
    }
    free(svg);
    viz_free(vg);
    mi_clear_err(s->ctx);
    return sb_take(&sb);
}

/* <section> with a title, an optional HTML lead, an optional text (shown as <pre>, diff lines
 * coloured) and optional HTML after it. */
static void section(StrBuf *sb, const char *cls, const char *title, const char *lead, const char *pre_text, const char *html) {
    sb_printf(sb, "<section class=\"%s\"><h2>%s</h2>", cls, title);
    if (lead) sb_put(sb, lead);
    if (pre_text) {
        sb_put(sb, "<pre>");
        for (const char *p = pre_text; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
            const char *c = (p[0] == '+' && p[1] != '+') ? "add" : (p[0] == '-' && p[1] != '-') ? "del" : NULL;
            if (c) sb_printf(sb, "<span class=\"%s\">", c);
            html_escape(sb, p, n);
            if (c) sb_put(sb, "</span>");
            p += n;
        }
        sb_put(sb, "</pre>");
    }
    if (html) sb_put(sb, html);
    sb_put(sb, "</section>\n");
}

/* Cut a text to its first max bytes (at a line end) with a note. In place. */
static void cap_text(char *t, size_t max) {
    if (!t || strlen(t) <= max) return;
    char *nl = memrchr(t, '\n', max);
    strcpy(nl ? nl + 1 : t + max, "... (cut; the shell has it all)\n");
}

/* Rebuild the fragment from the session (shell thread). */
static char *build_body(Session *s, LiveView *lv) {
    StrBuf sb;
    sb_init(&sb);
    int rc;
    const Graph *g = session_view(s);
    char *cmd = NULL, *last = transcript_last(s, &cmd);
    /* the header: what is loaded, where the pass cursor is */
    sb_put(&sb, "<header><b>minductor live</b> &mdash; ");
    if (!g) sb_put(&sb, "no graph loaded");
    else {
        html_escape(&sb, s->load_args ? s->load_args : "(graph)", strlen(s->load_args ? s->load_args : "(graph)"));
        if (s->pm) {
            int k = pm_cursor(s->pm), n = pm_num_passes(s->pm);
            sb_printf(&sb, " &middot; step %d/%d%s", k, n, k ? " after " : " (the loaded graph)");
            if (k) html_escape(&sb, pm_pass_name(s->pm, k - 1), strlen(pm_pass_name(s->pm, k - 1)));
        }
        if (s->scope) { sb_put(&sb, " &middot; in "); html_escape(&sb, s->scope, strlen(s->scope)); }
    }
    sb_put(&sb, "</header>\n");
    if (cmd) {
        StrBuf h;
        sb_init(&h);
        sb_put(&h, "<div class=\"prompt\">minductor&gt; ");
        html_escape(&h, cmd, strlen(cmd));
        sb_put(&h, "</div>");
        cap_text(last, 6000);
        section(&sb, "last", "last command", h.s, last && *last ? last : NULL, NULL);
        sb_free(&h);
    }
    free(cmd);
    free(last);
    if (g) {
        char *fx = fx_print(g, false);
        uint64_t hh = hash_text(fx) ^ (uint64_t)s->collapse_over;
        if (!lv->fx_svg || hh != lv->fx_hash) {
            free(lv->fx_svg);
            VizOptions vo;
            viz_default_options(&vo);
            vo.collapse_over = s->collapse_over;
            lv->fx_svg = render_svg(s, viz_fx(s->ctx, g, &vo));
            lv->fx_hash = hh;
        }
        free(fx);
        section(&sb, "graph", s->scope ? "subgraph" : "FX graph", NULL, NULL, lv->fx_svg);
        char *passes = teach_capture(s, "passes", &rc);
        /* the diff of the last applied step that changed something (a run's last steps rarely do) */
        char *diff = NULL;
        int k = s->pm ? pm_cursor(s->pm) : 0;
        while (k > 0 && !(pm_step_record(s->pm, k - 1) && pm_step_record(s->pm, k - 1)->changed)) k--;
        if (k > 0) {
            char line[40];
            snprintf(line, sizeof line, "diff %d", k);
            diff = teach_capture(s, line, &rc);
        } else if (s->pm && pm_cursor(s->pm) > 0) diff = mi_xstrdup("(no applied pass changed the graph)\n");
        cap_text(diff, 20000);
        StrBuf both;
        sb_init(&both);
        sb_put(&both, passes);
        if (diff) { sb_put(&both, "\n"); sb_put(&both, diff); }
        section(&sb, "passes", "passes and the last diff", NULL, both.s, NULL);
        sb_free(&both);
        free(passes);
        free(diff);
    }
    if (g && s->cs) {
        char *ir = teach_capture(s, "ir", &rc);
        uint64_t hh = hash_text(ir) ^ (compile_state_scheduled(s->cs) ? 1 : 2);
        if (hh != lv->ir_hash) {
            free(lv->fusion_svg);
            lv->fusion_svg = NULL;
            VizBufGraph bg = {0};
            if (compile_state_scheduled(s->cs) && compile_state_bufgraph(s, &bg, true) == 0) {
                VizOptions vo;
                viz_default_options(&vo);
                vo.collapse_over = s->collapse_over;
                lv->fusion_svg = render_svg(s, viz_fusion(s->ctx, &bg, &vo));
            }
            compile_bufgraph_free(&bg);
            mi_clear_err(s->ctx);
            lv->ir_hash = hh;
        }
        if (lv->fusion_svg) section(&sb, "fusion", "fusion (kernels)", NULL, NULL, lv->fusion_svg);
        cap_text(ir, 60000);
        section(&sb, "ir", "loop IR (ir_pre_fusion)", NULL, ir, NULL);
        free(ir);
    } else {
        free(lv->fusion_svg);
        lv->fusion_svg = NULL;
        lv->ir_hash = 0;
    }
    mi_clear_err(s->ctx);
    return sb_take(&sb);
}

/* Build the page from the session and publish it (gen + 1) when it differs from the last one. */
void live_refresh(Session *s) {
    LiveView *lv = s->teach ? s->teach->live : NULL;
    if (!lv) return;
    char *body = build_body(s, lv);
    pthread_mutex_lock(&lv->mu);
    if (!lv->body || strcmp(lv->body, body)) {
        free(lv->body);
        lv->body = body;
        body = NULL;
        lv->gen++;
    }
    pthread_mutex_unlock(&lv->mu);
    free(body);
}

static const char live_js[] =
    "let gen=document.body.dataset.gen;"
    "async function poll(){try{const r=await fetch('/gen',{cache:'no-store'});const g=(await r.text()).trim();"
    "if(g!==gen){const b=await fetch('/live',{cache:'no-store'});document.getElementById('live').innerHTML=await b.text();gen=g;}"
    "document.getElementById('state').textContent='live';}"
    "catch(e){document.getElementById('state').textContent='the shell has stopped serving';}"
    "setTimeout(poll,1000);}setTimeout(poll,1000);";

/* The server thread's handler: "/" the page, "/live" the fragment, "/gen" its generation. */
int live_handler(void *ud, const char *path, char **body, size_t *len, const char **ctype) {
    LiveView *lv = ud;
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    pthread_mutex_lock(&lv->mu);
    const char *frag = lv->body ? lv->body : "<p>waiting for the first command...</p>";
    int status = 200;
    if (!strcmp(path, "/") || !strcmp(path, "/index.html")) {
        sb_printf(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>minductor live</title>\n"
                       "<style>%s body{max-width:none;margin:1em} header{font-size:18px;margin-bottom:.6em}"
                       "main{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1em}"
                       "section{border:1px solid #ddd;border-radius:6px;padding:.5em .8em;min-width:0}"
                       "section.last,section.ir,section.fusion{grid-column:1/-1}section.ir pre{max-height:40em;overflow:auto}h2{font-size:15px;margin:.2em 0;color:#456}"
                       ".add{color:#070}.del{color:#b00}#state{color:#999;font-size:12px;float:right}</style></head>\n"
                       "<body data-gen=\"%ld\"><span id=\"state\">live</span><main id=\"live\">%s</main>\n"
                       "<script>%s</script></body></html>\n",
                  html_page_css(), lv->gen, frag, live_js);
        *ctype = "text/html; charset=utf-8";
    } else if (!strcmp(path, "/live")) {
        sb_put(&sb, frag);
        *ctype = "text/html; charset=utf-8";
    } else if (!strcmp(path, "/gen")) {
        sb_printf(&sb, "%ld\n", lv->gen);
        *ctype = "text/plain; charset=utf-8";
    } else {
        sb_put(&sb, "not found\n");
        *ctype = "text/plain; charset=utf-8";
        status = 404;
    }
    pthread_mutex_unlock(&lv->mu);
    *len = sb.len;
    *body = sb_take(&sb);
    return status;
}

/* An empty live view (no page, no server). */
LiveView *live_new(void) {
    LiveView *lv = mi_xcalloc(1, sizeof *lv);
    pthread_mutex_init(&lv->mu, NULL);
    return lv;
}

/* Stop the server (joining its thread), then free the page and the picture caches. */
void live_free(LiveView *lv) {
    if (!lv) return;
    http_serve_stop(lv->srv);          /* joins the thread: nothing reads lv afterwards */
    pthread_mutex_destroy(&lv->mu);
    free(lv->body);
    free(lv->fx_svg);
    free(lv->fusion_svg);
    free(lv);
}

/* "8000-8099" -> lo, hi */
static int parse_range(Session *s, const char *a, int *lo, int *hi) {
    char *end;
    long l = strtol(a, &end, 10), h = l;
    if (*end == '-') h = strtol(end + 1, &end, 10);
    if (*end || l < 1 || h > 65535 || l > h || h - l >= 1000)
        return mi_err(s->ctx, "", 0, 0, "port range '%s': give LO-HI within 1..65535, at most 1000 ports (e.g. 8000-8099)", a);
    *lo = (int)l;
    *hi = (int)h;
    return 0;
}

/* serve [LO-HI | off]: start the live view on the first free port of the range (default
 * 8000-8099), stop it, or say where it runs. */
int cmd_serve(Session *s, int argc, char **argv) {
    Teach *t = teach_of(s);
    if (argc > 2) return usage_error(s, "serve");
    if (argc == 2 && (!strcmp(argv[1], "off") || !strcmp(argv[1], "stop"))) {
        if (!t->live) { fprintf(s->out, "not serving\n"); return 0; }
        int port = http_serve_port(t->live->srv);
        live_free(t->live);
        t->live = NULL;
        fprintf(s->out, "stopped serving on http://127.0.0.1:%d/\n", port);
        return 0;
    }
    if (t->live) {
        if (argc == 2) return mi_err(s->ctx, "", 0, 0, "already serving on http://127.0.0.1:%d/ ('serve off' first)", http_serve_port(t->live->srv));
        fprintf(s->out, "serving the live view on http://127.0.0.1:%d/ (%ld requests so far)\n", http_serve_port(t->live->srv),
                http_serve_requests(t->live->srv));
        return 0;
    }
    HttpServeOptions o = {.port_lo = 8000, .port_hi = 8099, .max_request = 8192, .timeout_ms = 3000};
    if (argc == 2 && parse_range(s, argv[1], &o.port_lo, &o.port_hi) < 0) return -1;
    LiveView *lv = live_new();
    o.handler = live_handler;
    o.ud = lv;
    lv->srv = http_serve_start(s->ctx, &o);
    if (!lv->srv) { live_free(lv); return -1; }
    t->live = lv;
    fprintf(s->out, "serving the live view on http://127.0.0.1:%d/ (this machine only; 'serve off' or leaving the shell stops it)\n",
            http_serve_port(lv->srv));
    return 0;
}
