/* teach.h — the shell's teaching tools (issue #19), kept out of the pipeline's commands:
 *
 *   tour      built-in lessons (examples/tours/NN-NAME.tour, parsed by repl/tour_lesson.c and
 *             run by repl/cmd_tour.c): an explanation before every step, the step's commands
 *             run in the learner's session, an exercise at the end that `answer` checks
 *   serve     a live page for the projector (repl/serve.c over trace/http_serve.c): the graph
 *             picture, the pass list with the last diff, the IR and the fusion picture,
 *             rebuilt after every command that changed them
 *   save transcript FILE.html|FILE.md   the session so far, each command with its output and
 *             the pictures it drew (repl/transcript.c)
 *
 * All of it hangs off Session.teach (made on first use, freed by session_free). The dispatcher
 * (repl/commands.c) brackets every command with teach_cmd_begin / teach_cmd_end: the
 * transcript records there and the live view refreshes there. */
#ifndef REPL_TEACH_H
#define REPL_TEACH_H

#include "commands.h"

typedef struct Lesson Lesson;
typedef struct Transcript Transcript;
typedef struct LiveView LiveView;

typedef struct Teach {
    /* tour (repl/cmd_tour.c) */
    Lesson *lesson;          /* the active lesson, NULL when no tour runs */
    int step;                /* index of the step shown; lesson->nsteps = the exercise */
    int tour_depth;          /* > 0 while the tour runs its own commands: next/back step passes */
    char **done;             /* names of lessons answered right this session */
    int ndone;
    char *tmpdir;            /* {tmp} of the lessons, made on first use */
    /* transcript (repl/transcript.c) */
    Transcript *tr;
    int depth;               /* command nesting: 1 = a command the user typed */
    int capturing;           /* > 0 inside teach_capture: pictures are not kept */
    /* live view (repl/serve.c) */
    LiveView *live;
} Teach;

/* The session's teaching state, made on first use. */
Teach *teach_of(Session *s);
/* Stop the server, drop the transcript and the tour (session_free calls it). */
void teach_free(Session *s);

/* Around each command of run_line (repl/commands.c): begin swaps s->out/s->err for streams
 * that also record into the transcript (top level only); end restores them, keeps the
 * pictures the command drew (argv: its words) and refreshes the live view. */
void teach_cmd_begin(Session *s, const char *text);
void teach_cmd_end(Session *s, int argc, char **argv, int rc);

/* Run one shell line with its output (stdout and stderr) captured instead of shown and not
 * recorded: tours' answer checks, the live view's texts. Tour directives (@artifact) work
 * here too. malloc'd text; *rc gets 0 or -1. */
char *teach_capture(Session *s, const char *line, int *rc);

/* transcript.c */
void transcript_free(Transcript *t);
void transcript_begin(Session *s, const char *text);
void transcript_end(Session *s, int argc, char **argv, int rc);
int transcript_save(Session *s, const char *path);
/* The last finished command and its output (malloc'd both; NULL when none). */
char *transcript_last(Session *s, char **cmd);
/* An SVG file's text inline in HTML (prolog dropped; refused if it holds a script). */
void html_svg_inline(StrBuf *sb, const char *svg, size_t len);
/* The stylesheet the transcript and the live page share. */
const char *html_page_css(void);

/* serve.c */
LiveView *live_new(void);                 /* no server yet: cmd_serve starts one */
void live_free(LiveView *lv);             /* stops its server first */
/* Rebuild the page from the session when a server (or a test's LiveView) is attached. */
void live_refresh(Session *s);
/* The server thread's handler (HttpHandler; ud is the LiveView): "/" the page, "/live" the
 * fragment the page polls, "/gen" its generation, anything else 404. */
int live_handler(void *ud, const char *path, char **body, size_t *len, const char **ctype);

/* A line as a tour step runs it: '@artifact LOG CID NAME' is a tour directive, anything else
 * goes to run_line. 0 or -1 (the error is printed). */
int teach_run_line(Session *s, const char *line);
/* A directory for the session's scratch files ({tmp} of the lessons, pictures the transcript
 * draws), made on first use under $TMPDIR; NULL + ctx error. */
const char *teach_tmpdir(Session *s);

/* HTML escaping into sb (&, <, >, ", '). */
void html_escape(StrBuf *sb, const char *s, size_t n);

#endif
