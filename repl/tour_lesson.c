/* tour_lesson.c — reading a lesson file of `tour` (repl/tour.h; format in
 * examples/tours/README.md) into steps and an exercise. Pure parsing: nothing runs here; every
 * rule a lesson must keep (an explanation before each step, an exercise last that can be
 * checked, regexes that compile) is checked now, so a broken lesson fails at `tour NAME` with
 * file:line instead of half way through a class. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tour.h"

/* Growing array of pointers-or-structs: append one element of `size` bytes. */
static void *grow(void *arr, int *n, size_t size) {
    arr = mi_xrealloc(arr, (size_t)(*n + 1) * size);
    memset((char *)arr + (size_t)*n * size, 0, size);
    (*n)++;
    return arr;
}

/* A copy of s[0..n) without leading and trailing blanks. */
static char *trim_dup(const char *s, size_t n) {
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    char *r = mi_xmalloc(n + 1);
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

/* "key: value" at the start of line -> value (trimmed, malloc'd), else NULL. */
static char *key_value(const char *line, size_t n, const char *key) {
    size_t k = strlen(key);
    if (n <= k || strncmp(line, key, k) || line[k] != ':') return NULL;
    return trim_dup(line + k + 1, n - k - 1);
}

/* Whether a lesson's regex compiles as answer checks will compile it; else ctx error at path:line. */
static bool regex_ok(MiCtx *ctx, const char *re, const char *path, int line) {
    regex_t r;
    int rc = regcomp(&r, re, REG_EXTENDED | REG_NEWLINE);
    if (rc) {
        char msg[200];
        regerror(rc, &r, msg, sizeof msg);
        mi_err(ctx, path, line, 0, "bad regular expression '%s': %s", re, msg);
        return false;
    }
    regfree(&r);
    return true;
}

/* Append a text line to the step's current paragraph (a new paragraph after a blank line or
 * a command). */
static void add_text(TourStep *st, const char *line, size_t n, int lineno, bool *para_open) {
    if (*para_open && st->nitems && st->items[st->nitems - 1].kind == TI_TEXT) {
        TourItem *it = &st->items[st->nitems - 1];
        size_t old = strlen(it->text);
        it->text = mi_xrealloc(it->text, old + n + 2);
        it->text[old] = '\n';
        memcpy(it->text + old + 1, line, n);
        it->text[old + 1 + n] = 0;
        return;
    }
    st->items = grow(st->items, &st->nitems, sizeof *st->items);
    TourItem *it = &st->items[st->nitems - 1];
    it->kind = TI_TEXT;
    it->text = trim_dup(line, n);
    it->line = lineno;
    *para_open = true;
}

/* Append s (taken) to a string array. */
static void add_line(char ***arr, int *n, char *s) {
    *arr = grow(*arr, n, sizeof **arr);
    (*arr)[*n - 1] = s;
}

/* One line of the exercise section. */
static int exercise_line(MiCtx *ctx, TourExercise *ex, const char *line, size_t n, const char *path, int lineno) {
    char *v;
    if ((v = key_value(line, n, "answer"))) {
        /* alternatives separated by " | " */
        char *p = v;
        for (;;) {
            char *bar = strstr(p, " | ");
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            char *alt = trim_dup(p, len);
            if (*alt) add_line(&ex->answers, &ex->nanswers, alt);
            else free(alt);
            if (!bar) break;
            p = bar + 3;
        }
        free(v);
        return 0;
    }
    if ((v = key_value(line, n, "answer-from"))) {
        char *tilde = strstr(v, " ~ ");
        if (!tilde || ex->from_cmd) {
            free(v);
            return mi_err(ctx, path, lineno, 0, ex->from_cmd ? "a second answer-from" : "answer-from needs 'COMMAND ~ REGEX'");
        }
        ex->from_cmd = trim_dup(v, (size_t)(tilde - v));
        ex->from_re = trim_dup(tilde + 3, strlen(tilde + 3));
        free(v);
        return regex_ok(ctx, ex->from_re, path, lineno) ? 0 : -1;
    }
    if ((v = key_value(line, n, "check"))) { add_line(&ex->checks, &ex->nchecks, v); return 0; }
    if ((v = key_value(line, n, "expect"))) {
        add_line(&ex->expects, &ex->nexpects, v);
        return regex_ok(ctx, v, path, lineno) ? 0 : -1;
    }
    if ((v = key_value(line, n, "hint"))) { free(ex->hint); ex->hint = v; return 0; }
    /* the question's text */
    size_t old = ex->question ? strlen(ex->question) : 0;
    ex->question = mi_xrealloc(ex->question, old + n + 2);
    if (old) ex->question[old++] = '\n';
    memcpy(ex->question + old, line, n);
    ex->question[old + n] = 0;
    return 0;
}

/* The rules a whole lesson must keep, checked after the last line. */
static int finish(MiCtx *ctx, Lesson *l, const char *path, int lines) {
    if (!l->title) return mi_err(ctx, path, 1, 0, "a lesson starts with 'title: ...'");
    if (!l->nsteps) return mi_err(ctx, path, lines, 0, "a lesson needs at least one step ('== TITLE' and its explanation)");
    for (int i = 0; i < l->nsteps; i++) {
        TourStep *st = &l->steps[i];
        if (!st->nitems || st->items[0].kind != TI_TEXT)
            return mi_err(ctx, path, st->line, 0, "step '%s' must start with its explanation (text before any '>' line)", st->title);
    }
    TourExercise *ex = &l->ex;
    if (!ex->line) return mi_err(ctx, path, lines, 0, "a lesson ends with an '== exercise' section");
    char *q = ex->question ? trim_dup(ex->question, strlen(ex->question)) : NULL;
    free(ex->question);
    ex->question = q;
    if (!q || !*q) return mi_err(ctx, path, ex->line, 0, "the exercise has no question text");
    if (!ex->nanswers && !ex->from_cmd && !ex->nchecks)
        return mi_err(ctx, path, ex->line, 0, "the exercise needs 'answer:', 'answer-from:' or 'check:'");
    if (ex->nexpects && !ex->nchecks) return mi_err(ctx, path, ex->line, 0, "'expect:' needs a 'check:' command");
    if (ex->nchecks && !ex->nexpects) return mi_err(ctx, path, ex->line, 0, "'check:' needs at least one 'expect:' regex");
    return 0;
}

/* "examples/tours/03-passes.tour" -> "passes" (see tour.h). */
char *lesson_name_of(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *p = base;
    while (isdigit((unsigned char)*p)) p++;
    if (p > base && *p == '-') base = p + 1;       /* "03-passes.tour" -> "passes.tour" */
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".tour")) n -= 5;
    char *r = mi_xmalloc(n + 1);
    memcpy(r, base, n);
    r[n] = 0;
    return r;
}

/* Line by line: the title, then sections ("== TITLE"); in a step text paragraphs and
 * > ! @ lines, in the exercise keys and question text (see tour.h). */
Lesson *lesson_parse(MiCtx *ctx, const char *text, size_t len, const char *path, const char *name) {
    Lesson *l = mi_xcalloc(1, sizeof *l);
    l->path = mi_xstrdup(path);
    l->name = name ? mi_xstrdup(name) : lesson_name_of(path);
    bool in_ex = false, para_open = false;
    int lineno = 0;
    const char *p = text, *end = text + len;
    if (memchr(text, 0, len)) { mi_err(ctx, path, 0, 0, "not a text file (NUL byte)"); goto fail; }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *line = p;
        p = nl ? nl + 1 : end;
        lineno++;
        if (n && line[n - 1] == '\r') n--;
        if (n && line[0] == '#') continue;                     /* a comment */
        size_t blank = 0;
        while (blank < n && isspace((unsigned char)line[blank])) blank++;
        if (blank == n) { para_open = false; if (in_ex) exercise_line(ctx, &l->ex, "", 0, path, lineno); continue; }
        if (n >= 2 && !strncmp(line, "==", 2)) {              /* a new section */
            char *title = trim_dup(line + 2, n - 2);
            if (!*title) { free(title); mi_err(ctx, path, lineno, 0, "'==' needs a title"); goto fail; }
            if (in_ex) { free(title); mi_err(ctx, path, lineno, 0, "the exercise must be the last section"); goto fail; }
            if (!strcasecmp(title, "exercise")) {
                free(title);
                in_ex = true;
                l->ex.line = lineno;
                continue;
            }
            l->steps = grow(l->steps, &l->nsteps, sizeof *l->steps);
            l->steps[l->nsteps - 1].title = title;
            l->steps[l->nsteps - 1].line = lineno;
            para_open = false;
            continue;
        }
        if (in_ex) {
            if (exercise_line(ctx, &l->ex, line, n, path, lineno) < 0) goto fail;
            continue;
        }
        if (!l->nsteps) {                                      /* the header */
            char *v = key_value(line, n, "title");
            if (!v) { mi_err(ctx, path, lineno, 0, "expected 'title: ...' or a step ('== TITLE')"); goto fail; }
            free(l->title);
            l->title = v;
            continue;
        }
        TourStep *st = &l->steps[l->nsteps - 1];
        if (line[0] == '>' || line[0] == '!' || line[0] == '@') {
            /* a directive keeps its '@': teach_run_line tells it from a shell line by it */
            char *cmd = line[0] == '@' ? trim_dup(line, n) : trim_dup(line + 1, n - 1);
            if (!cmd[line[0] == '@']) { free(cmd); mi_err(ctx, path, lineno, 0, "'%c' needs a command", line[0]); goto fail; }
            if (line[0] == '@' && strncmp(cmd, "@artifact ", 10)) {
                mi_err(ctx, path, lineno, 0, "unknown directive '%s' (known: @artifact LOG COMPILE_ID NAME)", cmd);
                free(cmd);
                goto fail;
            }
            st->items = grow(st->items, &st->nitems, sizeof *st->items);
            TourItem *it = &st->items[st->nitems - 1];
            it->kind = line[0] == '>' ? TI_RUN : line[0] == '!' ? TI_RUN_MAYFAIL : TI_DIRECTIVE;
            it->text = cmd;
            it->line = lineno;
            para_open = false;
            continue;
        }
        add_text(st, line, n, lineno, &para_open);
    }
    if (finish(ctx, l, path, lineno) < 0) goto fail;
    return l;
fail:
    lesson_free(l);
    return NULL;
}

/* lesson_parse of a file. */
Lesson *lesson_load(MiCtx *ctx, const char *path) {
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    if (!text) return NULL;
    Lesson *l = lesson_parse(ctx, text, len, path, NULL);
    free(text);
    return l;
}

/* Free an array of n strings. */
static void free_strs(char **a, int n) {
    for (int i = 0; i < n; i++) free(a[i]);
    free(a);
}

/* Free a lesson (NULL is fine). */
void lesson_free(Lesson *l) {
    if (!l) return;
    for (int i = 0; i < l->nsteps; i++) {
        for (int k = 0; k < l->steps[i].nitems; k++) free(l->steps[i].items[k].text);
        free(l->steps[i].items);
        free(l->steps[i].title);
    }
    free(l->steps);
    TourExercise *ex = &l->ex;
    free(ex->question);
    free_strs(ex->answers, ex->nanswers);
    free(ex->from_cmd);
    free(ex->from_re);
    free_strs(ex->checks, ex->nchecks);
    free_strs(ex->expects, ex->nexpects);
    free(ex->hint);
    free(l->name);
    free(l->path);
    free(l->title);
    free(l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* dir's *.tour files, sorted (see tour.h). */
char **lesson_files(MiCtx *ctx, const char *dir, int *n) {
    DIR *d = opendir(dir);
    if (!d) { mi_err(ctx, dir, 0, 0, "cannot read the lesson directory: %s", strerror(errno)); return NULL; }
    char **files = NULL;
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".tour") || e->d_name[0] == '.') continue;
        files = grow(files, &k, sizeof *files);
        size_t pl = strlen(dir) + len + 2;
        files[k - 1] = mi_xmalloc(pl);
        snprintf(files[k - 1], pl, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (k) qsort(files, (size_t)k, sizeof *files, cmp_str);
    files = mi_xrealloc(files, (size_t)(k + 1) * sizeof *files);
    files[k] = NULL;
    *n = k;
    return files;
}

/* An answer as compared (see tour.h): "[1, 64]." -> "1,64". */
char *lesson_normalize(const char *s) {
    size_t n = strlen(s);
    char *r = mi_xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i])) r[k++] = (char)tolower((unsigned char)s[i]);
    r[k] = 0;
    /* strip a final '.', then matching outer brackets/quotes, repeatedly */
    for (bool again = true; again;) {
        again = false;
        if (k && r[k - 1] == '.') { r[--k] = 0; again = true; }
        static const char pairs[][2] = {{'[', ']'}, {'(', ')'}, {'{', '}'}, {'"', '"'}, {'\'', '\''}, {'`', '`'}};
        for (size_t j = 0; k >= 2 && j < sizeof pairs / sizeof *pairs; j++)
            if (r[0] == pairs[j][0] && r[k - 1] == pairs[j][1]) {
                memmove(r, r + 1, k - 2);
                k -= 2;
                r[k] = 0;
                again = true;
                break;
            }
    }
    return r;
}
