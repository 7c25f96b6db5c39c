/* interrupt.c — Ctrl-C during a command, and progress of long commands.
 *
 * Ctrl-C must stop the running command (interpreter, passes, lowering, cc, the timing loop,
 * drawing) and come back to the prompt with the session as it was. A signal handler gets no
 * user data, so the flag it sets is the one file-level variable here; the session's context
 * points at it (MiCtx.interrupt) and every long loop below repl/ polls it through
 * mi_interrupted() and returns an "interrupted (Ctrl-C) ..." error, leaving its inputs
 * untouched. The dispatcher (repl/commands.c) clears the flag before each command, and after an
 * interrupted one skips the rest of the line. At the prompt, repl/lineedit.c's own handler drops
 * the line being typed instead.
 *
 * Progress: long loops call mi_progress(); when stderr is a terminal the shell prints a line
 * per second of work: "[3 s] timing runs: 120000 of 2000000". */
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"

/* The only state a SIGINT handler may touch: a volatile sig_atomic_t. */
static volatile sig_atomic_t sigint_seen;

static void on_sigint(int sig) {
    (void)sig;
    sigint_seen = 1;
}

/* One progress line on stderr (a terminal only: scripts and pipes stay as they were). */
static void print_progress(void *ud, const char *what, long done, long total) {
    Session *s = ud;
    double sec = (mi_now_ns() - s->cmd_start_ns) / 1e9;
    if (total > 0)
        fprintf(s->err, "[%.0f s] %s: %ld of %ld (Ctrl-C stops)\n", sec, what, done, total);
    else
        fprintf(s->err, "[%.0f s] %s: %ld (Ctrl-C stops)\n", sec, what, done);
    fflush(s->err);
}

void interrupt_install(Session *s) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;      /* reads of stdin and the like go on; loops poll the flag */
    sigaction(SIGINT, &sa, NULL);
    s->ctx->interrupt = &sigint_seen;
    if (isatty(fileno(s->err))) {
        s->ctx->progress = print_progress;
        s->ctx->progress_ud = s;
    }
}

void interrupt_arm(Session *s) {
    sigint_seen = 0;
    s->cmd_start_ns = mi_now_ns();
    s->ctx->progress_last_ns = s->cmd_start_ns;
}
