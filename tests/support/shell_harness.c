/* shell_harness.c — running the built `minductor` for the shell tests (see shell_harness.h):
 * a pipe for -c commands and stdin scripts, a pseudo-terminal for the interactive shell (typed
 * line by line, or an expect-style dialogue of "wait for this output, send these keys"). */
#define _GNU_SOURCE
#include "tests/support/shell_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int sh_init(ShellEnv *env, const char *tmp_template) {
    memset(env, 0, sizeof *env);
    const char *bin = getenv("MINDUCTOR_BIN");
    if (!bin || !*bin) bin = "./build/minductor";
    if (access(bin, X_OK) != 0) {
        printf("1..0 # SKIP no minductor binary at %s\n", bin);
        return -1;
    }
    /* absolute: some tests start the shell in another directory */
    env->bin = realpath(bin, env->bin_buf) ? env->bin_buf : bin;
    snprintf(env->tmpdir, sizeof env->tmpdir, "/tmp/%s", tmp_template);
    if (!mkdtemp(env->tmpdir)) {
        printf("1..0 # SKIP no temp dir\n");
        return -1;
    }
    char hist[600];
    snprintf(hist, sizeof hist, "%s/history", env->tmpdir);
    setenv("MINDUCTOR_HISTORY", hist, 1);
    setenv("MINDUCTOR_CACHE", env->tmpdir, 0);
    return 0;
}

void sh_cleanup(ShellEnv *env) {
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", env->tmpdir);
    if (system(rm) != 0) fprintf(stderr, "# could not remove %s\n", env->tmpdir);
}

FILE *sh_unseen_survey(const ShellEnv *env, const char *script) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/logs && tar xzf tests/fixtures/unseen/logs.tgz -C %s/logs", env->tmpdir, env->tmpdir);
    if (system(cmd) != 0) return NULL;
    snprintf(cmd, sizeof cmd, "sh tests/tools/%s %s/logs '%s' 2>&1", script, env->tmpdir, env->bin);
    return popen(cmd, "r");
}

void sh_result_free(ShResult *r) {
    free(r->out);
    r->out = NULL;
}

/* Read all of f into a malloc'd NUL-terminated string. */
static char *slurp(FILE *f) {
    size_t cap = 1 << 16, len = 0, n;
    char *out = malloc(cap);
    while (f && (n = fread(out + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 4096) { cap *= 2; out = realloc(out, cap); }
    }
    out[len] = 0;
    return out;
}

ShResult sh_run(const ShellEnv *env, const char *opts, const char *cmds, const char *input) {
    ShResult r = {0};
    char inpath[600];
    snprintf(inpath, sizeof inpath, "%s/stdin.txt", env->tmpdir);
    FILE *f = fopen(inpath, "w");
    if (f) {
        if (input) fputs(input, f);
        fclose(f);
    }
    if (cmds) setenv("MI_TEST_CMDS", cmds, 1);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s%s\"%s\" %s %s < %s 2>&1", env->workdir[0] ? "cd '" : "", env->workdir,
             env->workdir[0] ? "' && " : "", env->bin, opts ? opts : "", cmds ? "-c \"$MI_TEST_CMDS\"" : "", inpath);
    FILE *p = popen(cmd, "r");
    r.out = slurp(p);
    int st = p ? pclose(p) : -1;
    /* /bin/sh reports a child killed by signal N as exit status 128+N */
    if (st != -1 && WIFSIGNALED(st)) { r.signaled = true; r.sig = WTERMSIG(st); r.status = -1; }
    else {
        r.status = st == -1 ? -1 : WEXITSTATUS(st);
        if (r.status > 128 && r.status != 130) { r.signaled = true; r.sig = r.status - 128; }
    }
    return r;
}

/* Fork the shell on a new pseudo-terminal: *master gets our end. -1 when none can be made. */
static pid_t spawn_tty(const ShellEnv *env, const char *const *args, int *master) {
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) || unlockpt(m)) { if (m >= 0) close(m); return -1; }
    const char *sname = ptsname(m);
    pid_t pid = fork();
    if (pid < 0) { close(m); return -1; }
    if (pid == 0) {
        setsid();
        int sl = open(sname, O_RDWR);    /* becomes the controlling terminal: Ctrl-C reaches us */
        if (sl < 0) _exit(126);
        dup2(sl, 0); dup2(sl, 1); dup2(sl, 2);
        if (sl > 2) close(sl);
        close(m);
        if (env->workdir[0] && chdir(env->workdir) != 0) _exit(125);
        setenv("TERM", "dumb", 1);
        const char *argv[32];
        int n = 0;
        argv[n++] = env->bin;
        argv[n++] = "-q";
        for (int i = 0; args && args[i] && n < 31; i++) argv[n++] = args[i];
        argv[n] = NULL;
        execv(env->bin, (char *const *)argv);
        _exit(127);
    }
    fcntl(m, F_SETFL, O_NONBLOCK);
    *master = m;
    return pid;
}

/* Collect the shell's exit status after its terminal closed. */
static void reap(pid_t pid, ShResult *r) {
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) { r->signaled = true; r->sig = WTERMSIG(st); r->status = -1; }
    else r->status = WEXITSTATUS(st) == 126 ? -2 : WEXITSTATUS(st);   /* 126: the terminal did not open */
}

/* Append what the terminal has to out; false at EOF/EIO (the shell has gone). */
static bool read_some(int m, char **out, size_t *len, size_t *cap) {
    if (*cap - *len < 4096) { *cap *= 2; *out = realloc(*out, *cap); }
    ssize_t n = read(m, *out + *len, *cap - *len - 1);
    if (n > 0) { *len += (size_t)n; (*out)[*len] = 0; return true; }
    return n < 0 && (errno == EAGAIN || errno == EINTR);
}

ShResult sh_tty_type(const ShellEnv *env, const char *const *args, const char *input, int limit_s) {
    ShResult r = {0};
    size_t len = 0, cap = 1 << 16, at = 0, total = strlen(input);
    r.out = calloc(1, cap);
    int m;
    pid_t pid = spawn_tty(env, args, &m);
    if (pid < 0) { r.status = -2; return r; }
    time_t t0 = time(NULL);
    for (;;) {
        struct pollfd pfd = {m, POLLIN | (at < total ? POLLOUT : 0), 0};
        if (poll(&pfd, 1, 1000) < 0 && errno != EINTR) break;
        if (time(NULL) - t0 > limit_s) { kill(pid, SIGKILL); fprintf(stderr, "# interactive session: timed out\n"); break; }
        if (pfd.revents & POLLIN) {
            if (!read_some(m, &r.out, &len, &cap)) break;
        } else if (pfd.revents & (POLLHUP | POLLERR)) break;
        if ((pfd.revents & POLLOUT) && at < total) {
            /* a line at a time, so readline sees keys the way a person types them */
            size_t n = strcspn(input + at, "\n") + 1;
            if (at + n > total) n = total - at;
            ssize_t w = write(m, input + at, n);
            if (w > 0) at += (size_t)w;
        }
    }
    close(m);
    reap(pid, &r);
    return r;
}

ShResult sh_tty_dialogue(const ShellEnv *env, const char *const *args, const ShStep *steps, int nsteps, int limit_s) {
    ShResult r = {0};
    size_t len = 0, cap = 1 << 16, mark = 0;
    r.out = calloc(1, cap);
    int m;
    pid_t pid = spawn_tty(env, args, &m);
    if (pid < 0) { r.status = -2; return r; }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int k = 0;
    bool missed = false;
    for (;;) {
        struct pollfd pfd = {m, POLLIN, 0};
        int pr = poll(&pfd, 1, 300);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > limit_s) {
            kill(pid, SIGKILL);
            if (k < nsteps) missed = true;
            fprintf(stderr, "# terminal dialogue: timed out at step %d of %d\n", k + 1, nsteps);
            break;
        }
        if (pr < 0 && errno != EINTR) break;
        if (pr > 0 && (pfd.revents & POLLIN)) {
            if (!read_some(m, &r.out, &len, &cap)) break;
        } else if (pr > 0 && (pfd.revents & (POLLHUP | POLLERR))) break;
        if (k >= nsteps) continue;
        /* the step's condition: its text after the previous step's, or 300 ms of quiet */
        const char *hit = steps[k].expect ? strstr(r.out + mark, steps[k].expect) : NULL;
        if (steps[k].expect ? hit != NULL : pr == 0) {
            mark = hit ? (size_t)(hit - r.out) + strlen(steps[k].expect) : len;
            if (steps[k].send && write(m, steps[k].send, strlen(steps[k].send)) < 0) break;
            k++;
        }
    }
    close(m);
    reap(pid, &r);
    if (missed) r.status = -3;
    return r;
}

char *sh_output(const ShellEnv *env, const char *cmds, int *status) {
    ShResult r = sh_run(env, "-k", cmds, NULL);
    if (status) *status = r.status;
    return r.out;
}

bool sh_text_has(const char *text, const char *pat) {
    bool y = text && strstr(text, pat);
    if (!y) fprintf(stderr, "# missing: %s\n", pat);
    return y;
}

bool sh_has(const ShResult *r, const char *s) { return r->out && strstr(r->out, s) != NULL; }

bool sh_has_line(const ShResult *r, const char *line) {
    size_t n = strlen(line);
    for (const char *p = r->out; p && (p = strstr(p, line)); p += n)
        if ((p == r->out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\r' || p[n] == 0)) return true;
    return false;
}

int sh_count(const ShResult *r, const char *s) {
    int c = 0;
    for (const char *p = r->out; p && (p = strstr(p, s)); p += strlen(s)) c++;
    return c;
}

long sh_pos(const ShResult *r, const char *s, long from) {
    if (!r->out || from < 0 || (size_t)from > strlen(r->out)) return -1;
    const char *p = strstr(r->out + from, s);
    return p ? p - r->out : -1;
}

char *sh_pipe(const char *cmdline, int *status) {
    FILE *p = popen(cmdline, "r");
    char *out = slurp(p);
    int st = p ? pclose(p) : -1;
    if (status) *status = st;
    return out;
}

char *sh_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = slurp(f);
    fclose(f);
    return buf;
}

bool sh_file_has(const char *path, const char *s) {
    char *buf = sh_read_file(path);
    bool found = buf && strstr(buf, s) != NULL;
    free(buf);
    return found;
}

bool sh_sanitizer_report(const ShResult *r) {
    return r->out && (strstr(r->out, "AddressSanitizer") || strstr(r->out, "LeakSanitizer") || strstr(r->out, "runtime error:"));
}
