/* cmd_tour.c — `tour`, `answer` and the tour's side of `next`/`back`: guided lessons run in the
 * learner's own session. Lessons are data (examples/tours/NN-NAME.tour, parsed by
 * repl/tour_lesson.c); this file shows a step's explanation, runs its lines through the
 * dispatcher as if typed (echoed after a prompt), and checks the exercise's answer.
 *
 * The interplay with pass stepping: while a lesson is active, `next` with no argument and
 * `back` move the lesson; `next N` still runs N passes and `tour next`/`tour back` always move
 * the lesson. While the tour itself runs a step's lines, `next`/`back` mean passes again
 * (Teach.tour_depth), so a lesson may step passes with them.
 *
 * `back` cannot undo commands, so it rebuilds: it replays the earlier steps' lines silently and
 * shows the previous step again (the learner's own commands in between are not replayed). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "teach.h"
#include "tour.h"

/* ---------------------------------------------------------------- where the lessons are */

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The lesson directory and the repository root the lessons' {root} stands for: $MINDUCTOR_TOURS
 * (root: two levels up), ./examples/tours (root: "."), else examples/tours next to the program
 * (build/minductor -> the checkout). False + ctx error when none exists. */
static bool tours_dir(Session *s, char *dir, size_t dn, char *root, size_t rn) {
    const char *env = getenv("MINDUCTOR_TOURS");
    if (env && *env) {
        if (!is_dir(env)) { mi_err(s->ctx, env, 0, 0, "MINDUCTOR_TOURS is not a directory"); return false; }
        snprintf(dir, dn, "%s", env);
        snprintf(root, rn, "%s/../..", env);
        return true;
    }
    if (is_dir("examples/tours")) {
        snprintf(dir, dn, "examples/tours");
        snprintf(root, rn, ".");
        return true;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        for (int up = 0; slash && up < 3; up++) {      /* build/minductor, ./minductor, ... */
            *slash = 0;
            char cand[PATH_MAX + 20];
            snprintf(cand, sizeof cand, "%s/examples/tours", exe);
            if (is_dir(cand) && strlen(cand) < dn) {
                memcpy(dir, cand, strlen(cand) + 1);
                snprintf(root, rn, "%s", exe);
                return true;
            }
            slash = strrchr(exe, '/');
        }
    }
    mi_err(s->ctx, "", 0, 0, "no lessons found: run the shell from the minductor checkout (examples/tours/) or set MINDUCTOR_TOURS");
    return false;
}

/* A lesson line with {root}/ and {tmp} filled in. malloc'd; NULL + ctx error. */
static char *expand(Session *s, const char *line, const char *answer) {
    char dir[PATH_MAX], root[PATH_MAX];
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    for (const char *p = line; *p;) {
        if (!strncmp(p, "{root}/", 7)) {
            if (!tours_dir(s, dir, sizeof dir, root, sizeof root)) { sb_free(&sb); return NULL; }
            if (strcmp(root, ".")) { sb_put(&sb, root); sb_putc(&sb, '/'); }
            p += 7;
        } else if (!strncmp(p, "{tmp}", 5)) {
            const char *t = teach_tmpdir(s);
            if (!t) { sb_free(&sb); return NULL; }
            sb_put(&sb, t);
            p += 5;
        } else if (answer && !strncmp(p, "{answer}", 8)) {
            /* one shell word, whatever the learner typed */
            sb_putc(&sb, '\'');
            for (const char *a = answer; *a; a++) {
                if (*a == '\'') sb_put(&sb, "'\\''");
                else sb_putc(&sb, *a);
            }
            sb_putc(&sb, '\'');
            p += 8;
        } else sb_putc(&sb, *p++);
    }
    return sb_take(&sb);
}

/* ---------------------------------------------------------------- showing steps */

/* Print a paragraph indented, as the explanation of a step. */
static void put_text(Session *s, const char *text) {
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(s->out, n ? "  %.*s\n" : "\n", n, p);
        p += n + (nl ? 1 : 0);
    }
}

/* Run one item's line as typed (echoed after the prompt when shown). */
static int run_item(Session *s, const TourItem *it, bool quiet) {
    Teach *t = teach_of(s);
    char *line = expand(s, it->text, NULL);
    if (!line) return -1;
    int rc;
    t->tour_depth++;
    if (quiet) free(teach_capture(s, line, &rc));
    else {
        fprintf(s->out, "minductor> %s\n", line + (line[0] == '@'));   /* @artifact: the `artifact` command */
        fflush(s->out);
        rc = teach_run_line(s, line);
    }
    t->tour_depth--;
    if (rc < 0 && it->kind != TI_RUN_MAYFAIL) {     /* its error is printed already */
        mi_err(s->ctx, t->lesson->path, it->line, 0, "the lesson stopped: '%s' failed (see above)", line);
        free(line);
        return -1;
    }
    mi_clear_err(s->ctx);
    free(line);
    return 0;
}

/* The exercise of the running lesson: its question and how to answer. */
static void show_exercise(Session *s) {
    Lesson *l = teach_of(s)->lesson;
    fprintf(s->out, "--- exercise (%s) ---\n", l->name);
    put_text(s, l->ex.question);
    fprintf(s->out, "(answer with 'answer TEXT'%s; 'tour off' leaves the lesson)\n", l->ex.hint ? "; 'tour hint' for a hint" : "");
}

/* Show step i (its explanation, its lines run); i == nsteps shows the exercise. */
static int show_step(Session *s, int i) {
    Teach *t = teach_of(s);
    Lesson *l = t->lesson;
    t->step = i;
    if (i == l->nsteps) { show_exercise(s); return 0; }
    const TourStep *st = &l->steps[i];
    fprintf(s->out, "--- %s, step %d/%d: %s ---\n", l->name, i + 1, l->nsteps, st->title);
    for (int k = 0; k < st->nitems; k++) {
        const TourItem *it = &st->items[k];
        if (it->kind == TI_TEXT) put_text(s, it->text);
        else if (run_item(s, it, false) < 0) return -1;
    }
    fprintf(s->out, "(next: go on%s; tour off: leave)\n", i ? "; back: the previous step" : "");
    return 0;
}

/* Run the lines of steps [0, upto) without showing them: the state `back` returns to. */
static int replay(Session *s, int upto) {
    Lesson *l = teach_of(s)->lesson;
    for (int i = 0; i < upto; i++)
        for (int k = 0; k < l->steps[i].nitems; k++)
            if (l->steps[i].items[k].kind != TI_TEXT && run_item(s, &l->steps[i].items[k], true) < 0) return -1;
    return 0;
}

/* `next` / `tour next`: the following step, or the exercise after the last one (shown again
 * when it is already up). */
static int tour_next(Session *s) {
    Teach *t = teach_of(s);
    if (!t->lesson) return mi_err(s->ctx, "", 0, 0, "no tour is running ('tour' lists the lessons)");
    if (t->step >= t->lesson->nsteps) {
        show_exercise(s);
        return 0;
    }
    return show_step(s, t->step + 1);
}

/* `back` / `tour back`: the previous step, after replaying the steps before it silently (the
 * state a step expects is rebuilt, not undone). Example: at step 3, replays step 1, shows 2. */
static int tour_back(Session *s) {
    Teach *t = teach_of(s);
    if (!t->lesson) return mi_err(s->ctx, "", 0, 0, "no tour is running ('tour' lists the lessons)");
    if (t->step == 0) { fprintf(s->out, "at the first step of %s\n", t->lesson->name); return 0; }
    int to = t->step - 1;
    if (to > 0) fprintf(s->err, "replaying steps 1..%d of %s...\n", to, t->lesson->name);
    if (replay(s, to) < 0) return -1;
    return show_step(s, to);
}

/* ---------------------------------------------------------------- the list, starting */

static bool is_done(Teach *t, const char *name) {
    for (int i = 0; i < t->ndone; i++)
        if (!strcmp(t->done[i], name)) return true;
    return false;
}

/* `tour`: every lesson of the lesson directory with its title and step count, [done] for those
 * answered right this session, and where the running one stands. A file that does not parse
 * is listed with its error, so one bad lesson does not hide the others. */
static int list_lessons(Session *s) {
    Teach *t = teach_of(s);
    char dir[PATH_MAX], root[PATH_MAX];
    if (!tours_dir(s, dir, sizeof dir, root, sizeof root)) return -1;
    int n;
    char **files = lesson_files(s->ctx, dir, &n);
    if (!files) return -1;
    fprintf(s->out, "lessons in %s ('tour NAME' starts one):\n", dir);
    for (int i = 0; i < n; i++) {
        MiTry tt = mi_try(s->ctx);
        Lesson *l = lesson_load(s->ctx, files[i]);
        char why[1200] = "";
        if (!l) mi_err_str(s->ctx, why, sizeof why);
        mi_try_end(&tt);
        char *name = lesson_name_of(files[i]);
        bool active = t->lesson && !strcmp(t->lesson->name, name);
        if (l) fprintf(s->out, "%c %2d %-14s %s (%d step%s)%s\n", active ? '>' : ' ', i + 1, name, l->title, l->nsteps,
                       l->nsteps == 1 ? "" : "s", is_done(t, name) ? "  [done]" : "");
        else fprintf(s->out, "  %2d %-14s (cannot be read: %s)\n", i + 1, name, why);
        free(name);
        lesson_free(l);
        free(files[i]);
    }
    free(files);
    if (t->lesson) {
        if (t->step < t->lesson->nsteps) fprintf(s->out, "running: %s, step %d/%d (next, back, tour off)\n", t->lesson->name, t->step + 1, t->lesson->nsteps);
        else fprintf(s->out, "running: %s, at its exercise (answer TEXT, tour hint, tour off)\n", t->lesson->name);
    }
    return 0;
}

/* The lesson NAME ("passes"), number ("3") or FILE.tour. NULL + ctx error. */
static Lesson *find_lesson(Session *s, const char *arg) {
    size_t al = strlen(arg);
    if (strchr(arg, '/') || (al > 5 && !strcmp(arg + al - 5, ".tour"))) return lesson_load(s->ctx, arg);
    char dir[PATH_MAX], root[PATH_MAX];
    if (!tours_dir(s, dir, sizeof dir, root, sizeof root)) return NULL;
    int n;
    char **files = lesson_files(s->ctx, dir, &n);
    if (!files) return NULL;
    char *end;
    long num = strtol(arg, &end, 10);
    Lesson *l = NULL;
    StrBuf names;
    sb_init(&names);
    sb_put(&names, "");
    bool found = false;
    for (int i = 0; i < n; i++) {
        char *name = lesson_name_of(files[i]);
        if (!found && (!strcmp(name, arg) || (!*end && num == i + 1))) {
            l = lesson_load(s->ctx, files[i]);
            found = true;
        }
        sb_printf(&names, "%s%s", i ? ", " : "", name);
        free(name);
        free(files[i]);
    }
    free(files);
    if (!found) mi_err(s->ctx, "", 0, 0, "no lesson '%s' (lessons: %s)", arg, names.s);
    sb_free(&names);
    return l;
}

/* `tour NAME`: make the lesson the running one and show its first step. */
static int tour_start(Session *s, const char *arg) {
    Teach *t = teach_of(s);
    Lesson *l = find_lesson(s, arg);
    if (!l) return -1;
    lesson_free(t->lesson);
    t->lesson = l;
    t->step = 0;
    fprintf(s->out, "=== %s: %s (%d steps and an exercise) ===\n", l->name, l->title, l->nsteps);
    return show_step(s, 0);
}

/* End the running lesson (print why first, when given): next/back step passes again. */
static void tour_stop(Session *s, const char *why) {
    Teach *t = teach_of(s);
    if (why) fprintf(s->out, "%s\n", why);
    lesson_free(t->lesson);
    t->lesson = NULL;
    t->step = 0;
}

/* tour [NAME|FILE.tour | next | back | hint | off] (repl/commands.c's table). */
int cmd_tour(Session *s, int argc, char **argv) {
    Teach *t = teach_of(s);
    if (argc == 1) return list_lessons(s);
    if (argc != 2) return usage_error(s, "tour");
    const char *a = argv[1];
    if (!strcmp(a, "next")) return tour_next(s);
    if (!strcmp(a, "back")) return tour_back(s);
    if (!strcmp(a, "hint")) {
        if (!t->lesson) return mi_err(s->ctx, "", 0, 0, "no tour is running ('tour' lists the lessons)");
        fprintf(s->out, "hint: %s\n", t->lesson->ex.hint ? t->lesson->ex.hint : "(this exercise has none: read the last steps again with 'back')");
        return 0;
    }
    if (!strcmp(a, "off") || !strcmp(a, "stop") || !strcmp(a, "end")) {
        if (!t->lesson) { fprintf(s->out, "no tour is running\n"); return 0; }
        char msg[200];
        snprintf(msg, sizeof msg, "left the lesson %s (next/back step passes again)", t->lesson->name);
        tour_stop(s, msg);
        return 0;
    }
    return tour_start(s, a);
}

/* What `tour <Tab>` offers: the lesson names, then the subcommands. */
char **tour_completions(Session *s) {
    static const char *const words[] = {"next", "back", "hint", "off"};
    char dir[PATH_MAX], root[PATH_MAX];
    int n = 0;
    MiTry tt = mi_try(s->ctx);
    char **files = tours_dir(s, dir, sizeof dir, root, sizeof root) ? lesson_files(s->ctx, dir, &n) : NULL;
    mi_try_end(&tt);
    if (!files) n = 0;
    char **out = mi_xcalloc((size_t)n + 5, sizeof *out);
    for (int i = 0; i < n; i++) {
        out[i] = lesson_name_of(files[i]);
        free(files[i]);
    }
    free(files);
    for (int i = 0; i < 4; i++) out[n + i] = mi_xstrdup(words[i]);
    return out;
}

/* ---------------------------------------------------------------- answers */

static bool same_answer(const char *a, const char *b) {
    char *x = lesson_normalize(a), *y = lesson_normalize(b);
    bool eq = !strcmp(x, y);
    free(x);
    free(y);
    return eq;
}

/* The answer the session computes for answer-from (group 1 of the regex, else the whole match)
 * into *want. -1 + ctx error when the lesson's command or regex finds nothing. */
static int answer_from(Session *s, const TourExercise *ex, char **want) {
    Lesson *l = teach_of(s)->lesson;
    char *line = expand(s, ex->from_cmd, NULL);
    if (!line) return -1;
    int rc;
    teach_of(s)->tour_depth++;
    char *out = teach_capture(s, line, &rc);
    teach_of(s)->tour_depth--;
    mi_clear_err(s->ctx);
    regex_t re;
    regmatch_t m[2];
    int r = -1;
    if (regcomp(&re, ex->from_re, REG_EXTENDED | REG_NEWLINE) == 0) {
        if (regexec(&re, out, 2, m, 0) == 0) {
            int g = m[1].rm_so >= 0 ? 1 : 0;
            size_t n = (size_t)(m[g].rm_eo - m[g].rm_so);
            *want = mi_xmalloc(n + 1);
            memcpy(*want, out + m[g].rm_so, n);
            (*want)[n] = 0;
            r = 0;
        }
        regfree(&re);
    }
    if (r < 0) mi_err(s->ctx, l->path, ex->line, 0, "the lesson's check found nothing: '%s' printed no match for /%s/", line, ex->from_re);
    free(out);
    free(line);
    return r;
}

/* check: lines run with the answer (output shown: the learner watches it work); every expect
 * regex must match what they printed. */
static int answer_check(Session *s, const TourExercise *ex, const char *answer, bool *ok) {
    StrBuf all;
    sb_init(&all);
    sb_put(&all, "");
    for (int i = 0; i < ex->nchecks; i++) {
        char *line = expand(s, ex->checks[i], answer);
        if (!line) { sb_free(&all); return -1; }
        fprintf(s->out, "minductor> %s\n", line + (line[0] == '@'));
        int rc;
        teach_of(s)->tour_depth++;
        char *out = teach_capture(s, line, &rc);
        teach_of(s)->tour_depth--;
        fputs(out, s->out);
        sb_put(&all, out);
        free(out);
        free(line);
    }
    mi_clear_err(s->ctx);
    *ok = true;
    for (int i = 0; i < ex->nexpects && *ok; i++) {
        regex_t re;
        if (regcomp(&re, ex->expects[i], REG_EXTENDED | REG_NEWLINE | REG_NOSUB) != 0) { *ok = false; break; }
        *ok = regexec(&re, all.s, 0, NULL, 0) == 0;
        regfree(&re);
    }
    sb_free(&all);
    return 0;
}

/* answer TEXT: check it against the exercise (literal answers first, then answer-from, then the
 * check: lines); a wrong answer is an error with the hint, a right one ends the lesson. */
int cmd_answer(Session *s, int argc, char **argv) {
    Teach *t = teach_of(s);
    if (argc < 2) return usage_error(s, "answer");
    if (!t->lesson) return mi_err(s->ctx, "", 0, 0, "no question is open: start a lesson with 'tour NAME' and follow it with 'next'");
    Lesson *l = t->lesson;
    if (t->step < l->nsteps)
        return mi_err(s->ctx, "", 0, 0, "the exercise of %s comes after step %d: 'next' until it shows", l->name, l->nsteps);
    StrBuf sb;
    sb_init(&sb);
    for (int i = 1; i < argc; i++) sb_printf(&sb, "%s%s", i > 1 ? " " : "", argv[i]);
    char *given = sb_take(&sb);
    const TourExercise *ex = &l->ex;
    bool ok = false;
    int rc = 0;
    for (int i = 0; i < ex->nanswers && !ok; i++) ok = same_answer(given, ex->answers[i]);
    if (!ok && ex->from_cmd) {
        char *want = NULL;
        rc = answer_from(s, ex, &want);
        if (rc == 0) ok = same_answer(given, want);
        free(want);
    }
    if (!ok && rc == 0 && ex->nchecks) rc = answer_check(s, ex, given, &ok);
    if (rc < 0) { free(given); return -1; }
    if (!ok) {
        rc = mi_err(s->ctx, "", 0, 0, "'%s' is not right%s%s (try again, or 'tour off')", given, ex->hint ? "; hint: " : "",
                    ex->hint ? ex->hint : "");
        free(given);
        return rc;
    }
    free(given);
    if (!is_done(t, l->name)) {
        t->done = mi_xrealloc(t->done, (size_t)(t->ndone + 1) * sizeof *t->done);
        t->done[t->ndone++] = mi_xstrdup(l->name);
    }
    char msg[300];
    snprintf(msg, sizeof msg, "right! lesson %s done ('tour' lists the others; next/back step passes again)", l->name);
    tour_stop(s, msg);
    return 0;
}

/* ---------------------------------------------------------------- next / back */

/* `next`: the tour's next step while a lesson runs and no count is given (not inside the
 * lesson's own lines), else run passes. */
int cmd_next_or_tour(Session *s, int argc, char **argv) {
    Teach *t = teach_of(s);
    if (argc == 1 && t->lesson && !t->tour_depth) return tour_next(s);
    return cmd_next(s, argc, argv);
}

/* `back`: the tour's previous step while a lesson runs (not inside the lesson's own lines),
 * else undo a pass. */
int cmd_back_or_tour(Session *s, int argc, char **argv) {
    Teach *t = teach_of(s);
    if (argc == 1 && t->lesson && !t->tour_depth) return tour_back(s);
    return cmd_back(s, argc, argv);
}
