/* shell_harness.h — what the shell tests (tests/test_shell*.c, test_unseen_*) share to drive
 * the built `minductor` binary: finding it and a temporary directory, running it with -c
 * commands or a script on stdin through a pipe, and running it interactively on a
 * pseudo-terminal, either typing a script line by line or as an expect-style dialogue (wait for
 * some output, then send keys: Tab, Ctrl-C, Ctrl-P ...); the survey scripts over the unseen
 * logs. Plus the few predicates every test uses on the output.
 *
 *     ShellEnv env;
 *     if (sh_init(&env, "minductor_uxXXXXXX") < 0) return 0;     // printed "1..0 # SKIP ..."
 *     ShResult r = sh_run(&env, "-k", "load g.py; lint", NULL);
 *     ok(sh_has(&r, "lint: ok"), "...");
 *     sh_result_free(&r);
 *     sh_cleanup(&env);
 *
 * Test support only (tests/support/ -> libtestsupport.a); nothing here is part of the product. */
#ifndef SHELL_HARNESS_H
#define SHELL_HARNESS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct ShellEnv {
    const char *bin;          /* absolute path of the binary ($MINDUCTOR_BIN, else ./build/minductor) */
    char bin_buf[4096];
    char tmpdir[64];          /* a fresh directory under /tmp, removed by sh_cleanup */
    char workdir[64];         /* when set, commands start there (else the repository root) */
} ShellEnv;

/* Find the binary and make the temp dir from `tmp_template` ("minductor_uxXXXXXX", under /tmp);
 * set MINDUCTOR_HISTORY (tmpdir/history) and MINDUCTOR_CACHE (tmpdir, unless set). -1 after
 * printing a TAP skip plan when there is no binary or no temp dir. */
int sh_init(ShellEnv *env, const char *tmp_template);
/* Remove the temp dir. */
void sh_cleanup(ShellEnv *env);

typedef struct ShResult {
    int status;               /* exit status; -1 when killed by a signal; -2 no terminal */
    bool signaled;
    int sig;
    char *out;                /* stdout and stderr together (a terminal's echo included) */
} ShResult;
void sh_result_free(ShResult *r);

/* `bin OPTS [-c CMDS] < input` through a pipe (CMDS passed through the environment, so any
 * quoting survives; OPTS is shell text; input may be NULL = empty stdin). */
ShResult sh_run(const ShellEnv *env, const char *opts, const char *cmds, const char *input);

/* The interactive shell on a pseudo-terminal (TERM=dumb, `bin -q ARGS...`), typing `input` a
 * line at a time as the terminal accepts it; killed after limit_s seconds. */
ShResult sh_tty_type(const ShellEnv *env, const char *const *args, const char *input, int limit_s);

/* One step of a terminal dialogue: wait until `expect` appears in the output after the previous
 * step's (NULL: until the output has been quiet for 300 ms, i.e. readline waits at the prompt),
 * then write `send` (may be NULL). */
typedef struct ShStep { const char *expect; const char *send; } ShStep;
/* Run the dialogue; after the last step, read until the shell exits or limit_s passes (then
 * it is killed). r.status is -3 when an `expect` never came (the output so far is in r.out). */
ShResult sh_tty_dialogue(const ShellEnv *env, const char *const *args, const ShStep *steps, int nsteps, int limit_s);

/* stdout and stderr of `bin -k -c CMDS` (malloc'd; the caller frees it); *status (may be NULL):
 * its exit status. */
char *sh_output(const ShellEnv *env, const char *cmds, int *status);
/* Whether text holds pat; when not, a TAP diagnostic "# missing: PAT" on stderr. */
bool sh_text_has(const char *text, const char *pat);

/* The survey scripts over the real logs of tests/fixtures/unseen (test_unseen_logs,
 * test_unseen_kernels): logs.tgz unpacked into tmpdir/logs, then `sh tests/tools/SCRIPT
 * tmpdir/logs BIN 2>&1` started. The trick: the output is a pipe, read line by line as each
 * graph finishes (pclose it). NULL when the logs do not unpack or the script does not start.
 * Example: FILE *p = sh_unseen_survey(&env, "survey_logs.sh"); */
FILE *sh_unseen_survey(const ShellEnv *env, const char *script);

/* Predicates on the output. */
bool sh_has(const ShResult *r, const char *s);
bool sh_has_line(const ShResult *r, const char *line);     /* a whole line equal to `line` */
int sh_count(const ShResult *r, const char *s);
bool sh_file_has(const char *path, const char *s);
/* The whole standard output of a shell command line (popen: add 2>&1 for stderr too), malloc'd
 * (the caller frees it; "" when it printed nothing or did not start); *status (may be NULL):
 * pclose's wait status, -1 when it did not start. The trick: no ShellEnv needed, for tests
 * that run the binary with options of their own. Example: sh_pipe("./minductor --help", &st). */
char *sh_pipe(const char *cmdline, int *status);
/* The whole text of a file (malloc'd; the caller frees it); NULL when it cannot be opened.
 * Example: char *page = sh_read_file("build/html-check/index.html"); */
char *sh_read_file(const char *path);
/* Offset of the first `s` in the output at or after `from`, -1 when absent. */
long sh_pos(const ShResult *r, const char *s, long from);
/* A sanitizer (ASan/LSan/UBSan) report in the output. */
bool sh_sanitizer_report(const ShResult *r);

#endif
