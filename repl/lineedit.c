/* lineedit.c — line input for the shell (see lineedit.h). Readline's completion callback
 * takes no user data, so the session being completed is kept in one file-level pointer set by
 * le_open; a signal handler takes none either, so Ctrl-C's jump target is file-level too:
 * with repl/interrupt.c's flag the only such variables in the program, and only touched in
 * interactive mode. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lineedit.h"
#include "commands.h"

#if defined(HAVE_READLINE)
#include <readline/readline.h>
#include <readline/history.h>
#define HAVE_LINE_EDITING 1
#elif defined(HAVE_LIBEDIT)
#include <editline/readline.h>
#define HAVE_LINE_EDITING 1
#endif

struct LineEditor {
    Session *s;
    bool interactive;
    char history[1024];
};

static void add_unique(char ***list, int *n, int *cap, const char *w) {
    for (int i = 0; i < *n; i++) if (!strcmp((*list)[i], w)) return;
    if (*n + 2 > *cap) { *cap = *cap ? *cap * 2 : 16; *list = mi_xrealloc(*list, *cap * sizeof **list); }
    (*list)[(*n)++] = mi_xstrdup(w);
    (*list)[*n] = NULL;
}

static void add_all(char ***list, int *n, int *cap, char **names, const char *prefix) {
    if (!names) return;
    for (int i = 0; names[i]; i++) {
        if (!strncmp(names[i], prefix, strlen(prefix))) add_unique(list, n, cap, names[i]);
        free(names[i]);
    }
    free(names);
}

static void add_words(char ***list, int *n, int *cap, const char *const *words, const char *prefix) {
    for (int i = 0; words[i]; i++)
        if (!strncmp(words[i], prefix, strlen(prefix))) add_unique(list, n, cap, words[i]);
}

char **le_candidates(Session *s, const char *line, int start, const char *prefix) {
    char **list = NULL; int n = 0, cap = 0;
    /* the command is the first word of the current ';'-separated part */
    int seg = start;
    while (seg > 0 && line[seg - 1] != ';') seg--;
    while (line[seg] == ' ' || line[seg] == '\t') seg++;
    if (seg >= start) {
        int nc;
        const Command *t = command_table(&nc);
        for (int i = 0; i < nc; i++)
            if (!strncmp(t[i].name, prefix, strlen(prefix))) add_unique(&list, &n, &cap, t[i].name);
    } else {
        char cmd[64];
        int len = 0;
        while (line[seg + len] && line[seg + len] != ' ' && len < 63) { cmd[len] = line[seg + len]; len++; }
        cmd[len] = 0;
        const Command *c = command_find(cmd);
        if (!c) return mi_xcalloc(1, sizeof(char *));
        static const char *const show_words[] = {"fx", "ir", "fusion", "diff", "--svg", "--png", "--dot", "--collapse", "--lr", NULL};
        static const char *const set_words[] = {"device", "threads", "fusion", "seed", "errexit", "collapse", "tolerance", "timer",
                                                "cpu", "cuda", "on", "off", NULL};
        static const char *const save_words[] = {"session", "graph", NULL};
        static const char *const trace_words[] = {"on", "off", NULL};
        switch (c->complete) {
        case CPL_FILE:
            if (!strcmp(c->name, "load")) {     /* load LOG <compile id> <graph>: from the log */
                char *w[4] = {0};
                int nw = 0;
                for (int i = seg; i < start && nw < 4;) {
                    while (i < start && (line[i] == ' ' || line[i] == '\t')) i++;
                    int b = i;
                    while (i < start && line[i] != ' ' && line[i] != '\t') i++;
                    if (i > b) {
                        w[nw] = mi_xmalloc((size_t)(i - b) + 1);
                        memcpy(w[nw], line + b, (size_t)(i - b));
                        w[nw++][i - b] = 0;
                    }
                }
                char **names = (nw == 2 || nw == 3) ? load_log_names(s, w[1], nw == 3 ? w[2] : NULL) : NULL;
                for (int i = 0; i < nw; i++) free(w[i]);
                if (names) { add_all(&list, &n, &cap, names, prefix); break; }
            }
            if (!strcmp(c->name, "inputs")) { static const char *const w[] = {"random", NULL}; add_words(&list, &n, &cap, w, prefix); }
            if (!strcmp(c->name, "save")) add_words(&list, &n, &cap, save_words, prefix);
            if (!strcmp(c->name, "trace")) add_words(&list, &n, &cap, trace_words, prefix);
            if (!n) { free(list); return NULL; }
            break;
        case CPL_PASS: case CPL_STEP:
            if (!strcmp(c->name, "diff")) {     /* diff session A.mi B.mi: file names after "session" */
                const char *w = line + seg + len;
                while (*w == ' ' || *w == '\t') w++;
                if (!strncmp(w, "session", 7) && (w[7] == ' ' || w[7] == '\t')) { free(list); return NULL; }
                static const char *const diff_words[] = {"session", NULL};
                add_words(&list, &n, &cap, diff_words, prefix);
            }
            add_all(&list, &n, &cap, session_pass_names(s), prefix);
            break;
        case CPL_NODE:
            if (!strcmp(c->name, "codegen")) {     /* its argument is a kernel of the generated code */
                add_all(&list, &n, &cap, session_kernel_names(s), prefix);
                break;
            }
            add_all(&list, &n, &cap, session_node_names(s), prefix);
            add_all(&list, &n, &cap, s->cs ? compile_state_names(s->cs) : NULL, prefix);
            break;
        case CPL_CMD: {
            int nc;
            const Command *t = command_table(&nc);
            for (int i = 0; i < nc; i++)
                if (!strncmp(t[i].name, prefix, strlen(prefix))) add_unique(&list, &n, &cap, t[i].name);
            break;
        }
        case CPL_SHOW: add_words(&list, &n, &cap, show_words, prefix); break;
        case CPL_SET: add_words(&list, &n, &cap, set_words, prefix); break;
        case CPL_SUBGRAPH: add_all(&list, &n, &cap, session_subgraph_names(s), prefix); break;
        case CPL_TOUR: add_all(&list, &n, &cap, tour_completions(s), prefix); break;
        case CPL_NONE: break;
        }
    }
    if (!list) list = mi_xcalloc(1, sizeof(char *));
    return list;
}

#ifdef HAVE_LINE_EDITING
#include <setjmp.h>
#include <signal.h>
/* Ctrl-C at the prompt drops the line being typed and gives a fresh prompt (as bash and
 * python do) instead of killing the shell and its loaded graph. The handler is installed only
 * while readline waits for input (le_read); during a command repl/interrupt.c's handler sets
 * the session's interrupt flag instead. The jump target has to be file-level: a signal handler
 * gets no user data. */
static sigjmp_buf at_prompt;
static void on_sigint(int sig) { (void)sig; siglongjmp(at_prompt, 1); }

static Session *completing;    /* see the comment at the top */
static char **cand;
static int cand_i;

static char *next_candidate(const char *text, int state) {
    (void)text;
    if (!cand) return NULL;
    if (cand[cand_i]) return cand[cand_i++];     /* readline frees it */
    free(cand); cand = NULL;
    return NULL;
}

static char **complete(const char *text, int start, int end) {
    (void)end;
    if (cand) { for (int i = cand_i; cand[i]; i++) free(cand[i]); free(cand); cand = NULL; }
    cand = le_candidates(completing, rl_line_buffer, start, text);
    cand_i = 0;
    if (!cand) return NULL;          /* file names: readline's default */
    rl_attempted_completion_over = 1;
    return rl_completion_matches(text, next_candidate);
}
#endif

LineEditor *le_open(Session *s, bool interactive) {
    LineEditor *le = mi_xcalloc(1, sizeof *le);
    le->s = s;
    le->interactive = interactive;
#ifdef HAVE_LINE_EDITING
    if (interactive) {
        const char *h = getenv("MINDUCTOR_HISTORY"), *home = getenv("HOME");
        if (h && *h) snprintf(le->history, sizeof le->history, "%s", h);
        else if (home) snprintf(le->history, sizeof le->history, "%s/.minductor_history", home);
        completing = s;
        rl_readline_name = "minductor";
        rl_attempted_completion_function = complete;
        using_history();
        stifle_history(2000);
        if (le->history[0]) read_history(le->history);
    }
#endif
    return le;
}

char *le_read(LineEditor *le, const char *prompt) {
#ifdef HAVE_LINE_EDITING
    if (le->interactive) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigint;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old);
        if (sigsetjmp(at_prompt, 1)) fputc('\n', stdout);    /* back here after Ctrl-C */
        char *line = readline(prompt);
        sigaction(SIGINT, &old, NULL);
        if (!line) return NULL;
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p) {
            HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
            if (!last || strcmp(last->line, line)) add_history(line);
        }
        return line;
    }
#endif
    if (le->interactive) { fputs(prompt, stdout); fflush(stdout); }
    char *buf = NULL; size_t cap = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    if (n < 0) { free(buf); return NULL; }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    return buf;
}

void le_close(LineEditor *le) {
    if (!le) return;
#ifdef HAVE_LINE_EDITING
    if (le->interactive) {
        if (le->history[0]) write_history(le->history);
        completing = NULL;
        if (cand) { for (int i = cand_i; cand[i]; i++) free(cand[i]); free(cand); cand = NULL; }
    }
#endif
    free(le);
}
