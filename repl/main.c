/* main.c — the `minductor` program: argument handling and the read-eval-print loop.
 *
 *   minductor                     interactive shell (or a script on stdin when it is not a tty)
 *   minductor FILE                load FILE (graph or TORCH_TRACE log) first
 *   minductor -c 'cmd; cmd'       run commands and exit (status 1 at the first error)
 *   minductor -k ...              keep going after errors (non-interactive), exit 1 if any failed
 *   minductor --device cuda ...   start with `set device cuda` (CUDA passes and code generation)
 *   minductor tlparse LOG -o DIR  the tlparse-like report (trace/tlparse_main)
 *
 * Interactive: an error is printed and the shell goes on. Non-interactive (-c, or commands from
 * a pipe/file): the first error stops the program with exit status 1 (unless -k or
 * `set errexit off`). Errors never lose the loaded graph. Ctrl-C stops the running command and
 * comes back to the prompt with the session intact (repl/interrupt.c); it ends a script with
 * status 130. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "lineedit.h"
#include "trace/trace.h"
#include "base/lsan_defaults.h"   /* LeakSanitizer's options and suppressions, as the tests' */

static void usage(FILE *f) {
    fprintf(f,
            "usage: minductor [-k] [-q] [--device cpu|cuda] [FILE] [-c 'COMMANDS']\n"
            "       minductor tlparse LOG -o DIR | DIR --all-ranks -o DIR\n"
            "  FILE      graph (FX text .py/.txt, .json) or TORCH_TRACE log to load first\n"
            "  -c CMDS   run ';'-separated commands and exit\n"
            "  -k        keep going after errors (exit status 1 if any command failed)\n"
            "  -q        no banner\n"
            "  --device  cpu (default) or cuda: the target of passes, codegen and exec\n"
            "In the shell, 'help' lists the commands.\n");
}

static int repl(Session *s, bool interactive, bool quiet) {
    LineEditor *le = le_open(s, interactive);
    if (interactive && !quiet)
        fprintf(s->out, "minductor shell — 'help' for commands, 'quit' to leave\n");
    int failed = 0;
    for (;;) {
        char prompt[300];   /* inside a subgraph: "minductor:true_graph_0> " */
        snprintf(prompt, sizeof prompt, "minductor%s%.250s> ", s->scope ? ":" : "", s->scope ? s->scope : "");
        char *line = le_read(le, prompt);
        if (!line) break;
        s->script_line++;              /* errors of a script name its line */
        if (run_line(s, line) < 0) {
            failed = 1;
            if (!interactive && (s->errexit || s->interrupted)) { free(line); break; }
        }
        free(line);
        if (s->quit) break;
    }
    if (interactive && !s->quit) fputc('\n', s->out);
    le_close(le);
    return failed;
}

int main(int argc, char **argv) {
    /* progress and errors go to stderr (unbuffered): line-buffer stdout so that the two stay
     * in order when both are piped into one file or a pager */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "tlparse")) {
        MiCtx *ctx = mi_ctx_new();
        int rc = tlparse_main(ctx, argc - 1, argv + 1);
        mi_ctx_free(ctx);
        return rc;
    }
    const char *commands = NULL, *file = NULL;
    bool keep_going = false, quiet = false;
    const char *device = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-c")) {
            if (i + 1 >= argc) { fprintf(stderr, "minductor: -c needs commands\n"); usage(stderr); return 2; }
            commands = argv[++i];
        } else if (!strcmp(a, "--device") || !strncmp(a, "--device=", 9)) {
            if (a[8] == '=') device = a + 9;
            else if (i + 1 < argc) device = argv[++i];
            else { fprintf(stderr, "minductor: --device needs cpu or cuda\n"); usage(stderr); return 2; }
            if (strcmp(device, "cpu") && strcmp(device, "cuda")) {
                fprintf(stderr, "minductor: --device must be cpu or cuda, got '%s'\n", device);
                return 2;
            }
        } else if (!strcmp(a, "-k")) keep_going = true;
        else if (!strcmp(a, "-q")) quiet = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "minductor: unknown option '%s'\n", a); usage(stderr); return 2; }
        else if (!file) file = a;
        else { fprintf(stderr, "minductor: only one FILE may be given ('%s', '%s')\n", file, a); return 2; }
    }
    Session *s = session_new();
    bool tty = isatty(0) && isatty(1);
    s->interactive = !commands && tty;
    s->errexit = !keep_going;
    interrupt_install(s);          /* Ctrl-C stops a command, not the shell */
    int failed = 0;
    if (device && !strcmp(device, "cuda")) s->ctx->target = MI_DEV_CUDA;   /* before load: passes follow it */
    if (file) {
        char *argv_load[] = {"load", (char *)file, NULL};
        /* with -c, what the commands print is the output (`minductor g.py -c codegen > k.c`):
         * the "loaded ..." note goes to stderr; a log's listing of its compiles stays */
        FILE *out = s->out;
        if (commands && !looks_like_trace_log(file)) s->out = s->err;
        int rc = cmd_load(s, 2, argv_load);
        s->out = out;
        if (rc < 0) {
            session_print_error(s);
            failed = 1;
            if (!s->interactive && s->errexit) { session_free(s); return 1; }
        }
    }
    if (!s->interactive) s->script = commands ? "-c" : "<stdin>";
    if (commands) {
        s->script_line = 1;
        if (run_line(s, commands) < 0) failed = 1;
    } else {
        if (repl(s, s->interactive, quiet)) failed = 1;
    }
    int code = s->interactive ? 0 : s->interrupted ? 130 : failed;   /* 130: as a shell reports SIGINT */
    session_free(s);
    return code;
}
