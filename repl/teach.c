/* teach.c — the session's teaching state (repl/teach.h) and the two things every teaching tool
 * needs from the dispatcher: a bracket around each command (the transcript records and the live
 * view refreshes there) and a way to run a shell line with its output captured instead of
 * shown (answer checks, the live page's texts). */
#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "teach.h"
#include "tour.h"
#include "trace/trace.h"

/* nftw callback: remove one entry of the scratch directory (deepest first). */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

/* The session's teaching state, made on first use (see teach.h). */
Teach *teach_of(Session *s) {
    if (!s->teach) s->teach = mi_xcalloc(1, sizeof *s->teach);
    return s->teach;
}

/* The live view first (its server thread reads the page), then the rest; the scratch
 * directory is removed. */
void teach_free(Session *s) {
    Teach *t = s->teach;
    if (!t) return;
    live_free(t->live);          /* first: the server thread reads the page, not the session */
    transcript_free(t->tr);
    lesson_free(t->lesson);
    for (int i = 0; i < t->ndone; i++) free(t->done[i]);
    free(t->done);
    if (t->tmpdir) nftw(t->tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);   /* scratch files end with the shell */
    free(t->tmpdir);
    free(t);
    s->teach = NULL;
}

/* Before a command (repl/commands.c): the top level one starts a transcript record. */
void teach_cmd_begin(Session *s, const char *text) {
    Teach *t = teach_of(s);
    if (t->depth++ == 0) transcript_begin(s, text);
}

/* After a command: the transcript keeps its pictures; back at the top level the live page is
 * rebuilt. */
void teach_cmd_end(Session *s, int argc, char **argv, int rc) {
    Teach *t = teach_of(s);
    transcript_end(s, argc, argv, rc);
    if (t->depth > 0 && --t->depth == 0) live_refresh(s);
}

/* "@artifact LOG COMPILE_ID NAME": the shell's `artifact` command (repl/cmd_graph.c), kept as a
 * directive so that the lesson files say which lines are not the learner's to type. */
static int directive(Session *s, const char *line) {
    int argc;
    char **argv = split_words(line + 1, &argc);
    int rc = argc == 4 && !strcmp(argv[0], "artifact") ? cmd_artifact(s, argc, argv)
                                                       : mi_err(s->ctx, "", 0, 0, "usage: @artifact LOG COMPILE_ID NAME");
    free_words(argv, argc);
    return rc;
}

/* A lesson line: a directive, or a shell line for run_line (see teach.h). */
int teach_run_line(Session *s, const char *line) {
    if (line[0] == '@') {
        int rc = directive(s, line);
        if (rc < 0) session_print_error(s);
        return rc;
    }
    return run_line(s, line);
}

/* Run a line into a memory stream (see teach.h); the depth is raised so nothing records or
 * refreshes, and `set timer` is muted. */
char *teach_capture(Session *s, const char *line, int *rc) {
    Teach *t = teach_of(s);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) { *rc = mi_err(s->ctx, "", 0, 0, "out of memory"); return mi_xstrdup(""); }
    FILE *out = s->out, *err = s->err;
    s->out = s->err = mem;
    bool timer = s->timer;       /* "(cmd: 0.1 ms)" lines are not part of a captured text */
    s->timer = false;
    t->depth++;                  /* nested: nothing recorded, no refresh */
    t->capturing++;
    *rc = teach_run_line(s, line);
    t->capturing--;
    t->depth--;
    s->timer = timer;
    fflush(mem);
    s->out = out;
    s->err = err;
    fclose(mem);
    return buf ? buf : mi_xstrdup("");
}

/* HTML text: & < > " ' as entities, NUL bytes dropped. Example: "a<b" -> "a&lt;b". */
void html_escape(StrBuf *sb, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': sb_put(sb, "&amp;"); break;
        case '<': sb_put(sb, "&lt;"); break;
        case '>': sb_put(sb, "&gt;"); break;
        case '"': sb_put(sb, "&quot;"); break;
        case '\'': sb_put(sb, "&#39;"); break;
        case 0: break;
        default: sb_putc(sb, s[i]);
        }
    }
}

/* $TMPDIR/minductor-teach-XXXXXX, made once per session (removed by teach_free). */
const char *teach_tmpdir(Session *s) {
    Teach *t = teach_of(s);
    if (t->tmpdir) return t->tmpdir;
    const char *base = getenv("TMPDIR");
    char tmpl[1024];
    snprintf(tmpl, sizeof tmpl, "%s/minductor-teach-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl)) { mi_err(s->ctx, tmpl, 0, 0, "cannot make a scratch directory"); return NULL; }
    t->tmpdir = mi_xstrdup(tmpl);
    return t->tmpdir;
}
