/* transcript.c — `save transcript FILE.html|FILE.md`: the session as a handout. Every command
 * typed is recorded with what it printed (stdout and stderr, in the order they came) and the
 * pictures it drew (`show ... --svg/--png FILE`; a `show` that printed DOT text gets its
 * picture drawn from that text when the page is saved), within fixed bounds so a long session
 * cannot exhaust memory.
 *
 * The trick: while a command runs, s->out and s->err are replaced by unbuffered stdio streams
 * (fopencookie) that write through to the real ones and append to the command's record, so no
 * command needs to know about the transcript. Commands a tour runs for the learner are part of
 * the `next` that ran them. The HTML is one self-contained file (CSS and SVG inline, PNG as a
 * data: URL). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "teach.h"
#include "viz/viz.h"

#define TR_MAX_BYTES (32u << 20)       /* everything recorded */
#define TR_MAX_OUTPUT (2u << 20)       /* one command's output */
#define TR_MAX_PICTURE (8u << 20)      /* one picture file */

typedef struct TSeg { bool err; char *text; size_t len; } TSeg;
typedef struct TPic { char *name; bool svg; char *data; size_t len; } TPic;
typedef struct TEntry {
    char *cmd;
    TSeg *segs; int nsegs;
    TPic *pics; int npics;
    size_t outlen;
    bool truncated;
    bool dot;                  /* a `show` that printed DOT: drawn when the transcript is saved */
    int rc;
} TEntry;

typedef struct Tee { Transcript *tr; FILE *real; bool err; } Tee;

struct Transcript {
    TEntry *e; int n, cap;
    bool open;                 /* e[n-1] belongs to the command running now */
    size_t bytes;
    int dropped;               /* commands not recorded (over TR_MAX_BYTES) */
    Tee tee_out, tee_err;
    FILE *out, *err;           /* the tee streams while a command runs */
    time_t started;
};

/* Append n bytes of a command's output to the open record (merging with the last segment of
 * the same stream). */
static void record(Transcript *tr, bool err, const char *buf, size_t n) {
    if (!tr->open || !n) return;
    TEntry *e = &tr->e[tr->n - 1];
    if (e->outlen + n > TR_MAX_OUTPUT || tr->bytes + n > TR_MAX_BYTES) { e->truncated = true; return; }
    TSeg *sg = e->nsegs ? &e->segs[e->nsegs - 1] : NULL;
    if (!sg || sg->err != err) {
        e->segs = mi_xrealloc(e->segs, (size_t)(e->nsegs + 1) * sizeof *e->segs);
        sg = &e->segs[e->nsegs++];
        sg->err = err;
        sg->text = NULL;
        sg->len = 0;
    }
    sg->text = mi_xrealloc(sg->text, sg->len + n + 1);
    memcpy(sg->text + sg->len, buf, n);
    sg->len += n;
    sg->text[sg->len] = 0;
    e->outlen += n;
    tr->bytes += n;
}

/* The tee stream's write: through to the real stream, and into the record. */
static ssize_t tee_write(void *cookie, const char *buf, size_t n) {
    Tee *t = cookie;
    fwrite(buf, 1, n, t->real);
    record(t->tr, t->err, buf, n);
    return (ssize_t)n;
}

/* An unbuffered stdio stream over a Tee (NULL when fopencookie fails). */
static FILE *tee_open(Tee *t) {
    cookie_io_functions_t io = {.write = tee_write};
    FILE *f = fopencookie(t, "w", io);
    if (f) setvbuf(f, NULL, _IONBF, 0);     /* keeps stdout and stderr in the order written */
    return f;
}

/* Free every record. */
void transcript_free(Transcript *tr) {
    if (!tr) return;
    for (int i = 0; i < tr->n; i++) {
        TEntry *e = &tr->e[i];
        for (int k = 0; k < e->nsegs; k++) free(e->segs[k].text);
        for (int k = 0; k < e->npics; k++) { free(e->pics[k].name); free(e->pics[k].data); }
        free(e->segs);
        free(e->pics);
        free(e->cmd);
    }
    free(tr->e);
    free(tr);
}

/* A command typed at the top level starts: open its record and put the tee streams in place of
 * s->out / s->err. Blank lines and commands past the 32 MB bound are not recorded. */
void transcript_begin(Session *s, const char *text) {
    Teach *t = teach_of(s);
    while (*text == ' ' || *text == '\t') text++;
    if (!*text) return;                       /* an empty line is not a command */
    if (!t->tr) {
        t->tr = mi_xcalloc(1, sizeof *t->tr);
        t->tr->started = time(NULL);
    }
    Transcript *tr = t->tr;
    if (tr->bytes >= TR_MAX_BYTES) { tr->dropped++; return; }
    tr->tee_out = (Tee){tr, s->out, false};
    tr->tee_err = (Tee){tr, s->err, true};
    FILE *o = tee_open(&tr->tee_out), *e = tee_open(&tr->tee_err);
    if (!o || !e) {                           /* no recording: the command runs as always */
        if (o) fclose(o);
        if (e) fclose(e);
        return;
    }
    if (tr->n == tr->cap) {
        tr->cap = tr->cap ? 2 * tr->cap : 64;
        tr->e = mi_xrealloc(tr->e, (size_t)tr->cap * sizeof *tr->e);
    }
    TEntry *en = &tr->e[tr->n++];
    memset(en, 0, sizeof *en);
    en->cmd = mi_xstrdup(text);
    tr->bytes += strlen(text);
    fflush(s->out);
    fflush(s->err);
    tr->out = o;
    tr->err = e;
    s->out = o;
    s->err = e;
    tr->open = true;
}

/* Attach a picture (takes data) to the open record, within the size bounds. */
static void add_picture(Transcript *tr, const char *name, bool svg, char *data, size_t len) {
    TEntry *e = &tr->e[tr->n - 1];
    if (len > TR_MAX_PICTURE || tr->bytes + len > TR_MAX_BYTES) { free(data); e->truncated = true; return; }
    e->pics = mi_xrealloc(e->pics, (size_t)(e->npics + 1) * sizeof *e->pics);
    e->pics[e->npics++] = (TPic){mi_xstrdup(name), svg, data, len};
    tr->bytes += len;
}

/* The pictures a successful command drew: the files named after --svg/--png. A `show` that
 * printed DOT (no file option) at the top level is marked to be drawn when saved. */
static void keep_pictures(Session *s, Transcript *tr, int argc, char **argv, bool top) {
    bool file_option = false;
    for (int i = 1; i + 1 < argc; i++) {
        bool svg = !strcmp(argv[i], "--svg"), png = !strcmp(argv[i], "--png");
        if (!strcmp(argv[i], "--dot")) file_option = true;
        if (!svg && !png) continue;
        file_option = true;
        size_t len;
        MiTry tt = mi_try(s->ctx);
        char *data = mi_read_file(s->ctx, argv[i + 1], &len);
        mi_try_end(&tt);
        if (data) add_picture(tr, argv[i + 1], svg, data, len);
        i++;
    }
    if (top && !file_option && !strcmp(argv[0], "show")) tr->e[tr->n - 1].dot = true;
}

/* A command ends (any depth): keep its pictures; at the top level close the record and give
 * s->out / s->err back. */
void transcript_end(Session *s, int argc, char **argv, int rc) {
    Teach *t = s->teach;
    Transcript *tr = t ? t->tr : NULL;
    if (!tr || !tr->open) return;
    if (!t->capturing && rc == 0 && argc > 0) keep_pictures(s, tr, argc, argv, t->depth == 1);
    if (t->depth != 1) return;                /* a command inside another one (a tour step) */
    fflush(tr->out);
    fflush(tr->err);
    s->out = tr->tee_out.real;
    s->err = tr->tee_err.real;
    fclose(tr->out);
    fclose(tr->err);
    tr->out = tr->err = NULL;
    tr->e[tr->n - 1].rc = rc;
    tr->open = false;
}

/* The last finished record's command and output (the live page's "last command"). */
char *transcript_last(Session *s, char **cmd) {
    Transcript *tr = s->teach ? s->teach->tr : NULL;
    *cmd = NULL;
    int i = tr ? tr->n - 1 - (tr->open ? 1 : 0) : -1;
    if (i < 0) return NULL;
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    for (int k = 0; k < tr->e[i].nsegs; k++) sb_putn(&sb, tr->e[i].segs[k].text, tr->e[i].segs[k].len);
    *cmd = mi_xstrdup(tr->e[i].cmd);
    return sb_take(&sb);
}

/* ---------------------------------------------------------------- writing */

static const char base64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* RFC 4648 base64 of n bytes (PNG pictures as data: URLs). */
static void put_base64(StrBuf *sb, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        sb_putc(sb, base64_chars[v >> 18 & 63]);
        sb_putc(sb, base64_chars[v >> 12 & 63]);
        sb_putc(sb, i + 1 < n ? base64_chars[v >> 6 & 63] : '=');
        sb_putc(sb, i + 2 < n ? base64_chars[v & 63] : '=');
    }
}

/* Graphviz's SVG file text as an inline <svg> element (see teach.h). */
void html_svg_inline(StrBuf *sb, const char *svg, size_t len) {
    /* drop the XML prolog, DOCTYPE and comments before <svg: they are not allowed inline */
    const char *start = NULL;
    for (size_t i = 0; i + 4 <= len; i++)
        if (!memcmp(svg + i, "<svg", 4)) { start = svg + i; break; }
    if (!start) { sb_put(sb, "<p class=\"note\">(not an SVG picture)</p>"); return; }
    size_t n = len - (size_t)(start - svg);
    /* our pictures are Graphviz's; refuse anything that could run code in the handout */
    for (size_t i = 0; i + 7 <= n; i++)
        if (!strncasecmp(start + i, "<script", 7) || !strncasecmp(start + i, "onload=", 7)) {
            sb_put(sb, "<p class=\"note\">(picture left out: it holds a script)</p>");
            return;
        }
    sb_putn(sb, start, n);
}

/* The text of one output segment; stderr lines that are errors stand out. */
static void html_segment(StrBuf *sb, const TSeg *sg) {
    if (!sg->err) { html_escape(sb, sg->text, sg->len); return; }
    const char *p = sg->text, *end = sg->text + sg->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        bool error = n >= 6 && (!strncmp(p, "error:", 6) || !strncmp(p, "warning:", 8));
        sb_put(sb, error ? "<span class=\"x\">" : "<span class=\"e\">");
        html_escape(sb, p, n);
        sb_put(sb, "</span>");
        p += n;
    }
}

/* The stylesheet of the transcript page, shared with the live page. */
const char *html_page_css(void) {
    return "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}"
           "h1{font-size:1.5em}.meta{color:#666}"
           ".cmd{margin:1.2em 0;border-left:4px solid #4a7;padding-left:.8em}"
           ".cmd.fail{border-left-color:#c44}"
           ".prompt{font:600 14px/1.4 ui-monospace,monospace;color:#264}"
           "pre{font:13px/1.35 ui-monospace,monospace;background:#f6f6f3;padding:.6em;overflow-x:auto;margin:.3em 0;white-space:pre-wrap}"
           ".e{color:#667}.x{color:#b00;font-weight:600}"
           "figure{margin:.5em 0;overflow-x:auto}figure svg,figure img{max-width:100%;height:auto}"
           "figcaption{color:#666;font-size:12px}.note{color:#a60}";
}

/* The picture of a `show` entry's DOT text as inline SVG (drawn now), or a note. */
static void html_dot_picture(Session *s, StrBuf *sb, const TEntry *e) {
    StrBuf dot;
    sb_init(&dot);
    sb_put(&dot, "");
    for (int k = 0; k < e->nsegs; k++)
        if (!e->segs[k].err) sb_putn(&dot, e->segs[k].text, e->segs[k].len);
    /* the DOT text runs from its "digraph" line to the last '}' (progress lines may precede it) */
    char *start = dot.s;
    while (start && strncmp(start, "digraph", 7) && strncmp(start, "strict digraph", 14)) {
        start = strchr(start, '\n');
        if (start) start++;
    }
    char *close = start ? strrchr(start, '}') : NULL;
    if (close) close[1] = 0;
    MiTry tt = mi_try(s->ctx);
    VizGraph *vg = viz_from_dot(s->ctx, close ? start : NULL);
    VizRenderer *vr = vg ? session_renderer(s) : NULL;
    size_t len = 0;
    char *svg = vr ? viz_render_data(s->ctx, vr, vg, "svg", &len) : NULL;
    char why[1200];
    if (!svg) mi_err_str(s->ctx, why, sizeof why);
    mi_try_end(&tt);
    viz_free(vg);
    sb_free(&dot);
    sb_put(sb, "<figure>");
    if (svg) html_svg_inline(sb, svg, len);
    else {
        sb_put(sb, "<p class=\"note\">(no picture: ");
        html_escape(sb, why, strlen(why));
        sb_put(sb, ")</p>");
    }
    sb_put(sb, "<figcaption>");
    html_escape(sb, e->cmd, strlen(e->cmd));
    sb_put(sb, "</figcaption></figure>\n");
    free(svg);
}

/* The first n records as one self-contained HTML page; *npics counts the pictures. */
static char *to_html(Session *s, const Transcript *tr, int n, int *npics) {
    StrBuf sb;
    sb_init(&sb);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&tr->started));
    sb_printf(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<title>minductor session, %s</title>\n<style>%s</style></head>\n<body>\n"
                   "<h1>minductor session</h1>\n<p class=\"meta\">recorded %s, %d command%s</p>\n",
              when, html_page_css(), when, n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
        const TEntry *e = &tr->e[i];
        sb_printf(&sb, "<div class=\"cmd%s\" id=\"c%d\"><div class=\"prompt\">minductor&gt; ", e->rc ? " fail" : "", i + 1);
        html_escape(&sb, e->cmd, strlen(e->cmd));
        sb_put(&sb, "</div>\n");
        if (e->nsegs) {
            if (e->dot) sb_put(&sb, "<details><summary>DOT text</summary>");
            sb_put(&sb, "<pre>");
            for (int k = 0; k < e->nsegs; k++) html_segment(&sb, &e->segs[k]);
            sb_put(&sb, "</pre>");
            if (e->dot) sb_put(&sb, "</details>");
            sb_putc(&sb, '\n');
        }
        if (e->truncated) sb_put(&sb, "<p class=\"note\">(output cut: the transcript keeps at most 2 MB per command)</p>\n");
        if (e->dot && !e->truncated) {
            html_dot_picture(s, &sb, e);
            (*npics)++;
        }
        for (int k = 0; k < e->npics; k++) {
            const TPic *p = &e->pics[k];
            sb_put(&sb, "<figure>");
            if (p->svg) html_svg_inline(&sb, p->data, p->len);
            else {
                sb_put(&sb, "<img alt=\"picture\" src=\"data:image/png;base64,");
                put_base64(&sb, (const unsigned char *)p->data, p->len);
                sb_put(&sb, "\">");
            }
            sb_put(&sb, "<figcaption>");
            html_escape(&sb, p->name, strlen(p->name));
            sb_put(&sb, "</figcaption></figure>\n");
            (*npics)++;
        }
        sb_put(&sb, "</div>\n");
    }
    if (tr->dropped)
        sb_printf(&sb, "<p class=\"note\">%d later command%s not recorded: the transcript holds at most %u MB.</p>\n",
                  tr->dropped, tr->dropped == 1 ? " was" : "s were", TR_MAX_BYTES >> 20);
    sb_put(&sb, "</body></html>\n");
    return sb_take(&sb);
}

/* The first n records as Markdown: a fenced block per command, pictures as links. */
static char *to_markdown(const Transcript *tr, int n, int *npics) {
    StrBuf sb;
    sb_init(&sb);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&tr->started));
    sb_printf(&sb, "# minductor session\n\nrecorded %s, %d command%s\n", when, n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
        const TEntry *e = &tr->e[i];
        /* a fence longer than any run of backticks inside */
        int fence = 3;
        for (int k = 0; k < e->nsegs; k++)
            for (size_t j = 0, run = 0; j < e->segs[k].len; j++) {
                run = e->segs[k].text[j] == '`' ? run + 1 : 0;
                if ((int)run >= fence) fence = (int)run + 1;
            }
        sb_printf(&sb, "\n%.*s\nminductor> %s\n", fence, "````````````````````````````````", e->cmd);
        for (int k = 0; k < e->nsegs; k++) sb_putn(&sb, e->segs[k].text, e->segs[k].len);
        if (e->outlen && e->segs[e->nsegs - 1].text[e->segs[e->nsegs - 1].len - 1] != '\n') sb_putc(&sb, '\n');
        sb_printf(&sb, "%.*s\n", fence, "````````````````````````````````");
        if (e->truncated) sb_put(&sb, "\n(output cut: the transcript keeps at most 2 MB per command)\n");
        if (e->dot) sb_put(&sb, "\n(the picture of this DOT text is in the HTML transcript)\n");
        for (int k = 0; k < e->npics; k++) {
            sb_printf(&sb, "\n![%s](%s)\n", e->pics[k].name, e->pics[k].name);
            (*npics)++;
        }
    }
    if (tr->dropped) sb_printf(&sb, "\n%d later command%s not recorded (the transcript holds at most %u MB).\n",
                               tr->dropped, tr->dropped == 1 ? " was" : "s were", TR_MAX_BYTES >> 20);
    return sb_take(&sb);
}

/* save transcript FILE.html|FILE.md: everything recorded before this command. */
int transcript_save(Session *s, const char *path) {
    const char *dot = strrchr(path, '.');
    bool html = dot && (!strcasecmp(dot, ".html") || !strcasecmp(dot, ".htm"));
    bool md = dot && (!strcasecmp(dot, ".md") || !strcasecmp(dot, ".txt"));
    if (!html && !md) return mi_err(s->ctx, "", 0, 0, "save transcript FILE.html (a page with the pictures) or FILE.md (plain text), got '%s'", path);
    Teach *t = teach_of(s);
    if (!t->tr) {                             /* only possible when driven without the dispatcher */
        t->tr = mi_xcalloc(1, sizeof *t->tr);
        t->tr->started = time(NULL);
    }
    Transcript *tr = t->tr;
    int n = tr->n - (tr->open ? 1 : 0);       /* not the `save transcript` running now */
    int npics = 0;
    char *text = html ? to_html(s, tr, n, &npics) : to_markdown(tr, n, &npics);
    int rc = mi_write_file(s->ctx, path, text, strlen(text));
    if (rc == 0)
        fprintf(s->out, "saved the transcript to %s (%d command%s, %d picture%s, %zu bytes)\n", path, n, n == 1 ? "" : "s",
                npics, npics == 1 ? "" : "s", strlen(text));
    free(text);
    return rc;
}
