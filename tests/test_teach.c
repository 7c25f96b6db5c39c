/* test_teach.c — the teaching tools of the shell (repl/teach.h), driven through the built
 * `minductor` ($MINDUCTOR_BIN, else ./build/minductor):
 *   tour       every lesson of examples/tours (at least 10) runs from start to finish from a
 *              script; its exercise rejects a wrong answer and accepts the right one; `next`/
 *              `back` move the tour while `next N` still steps passes; malformed lesson files
 *              are refused naming file:line
 *   transcript `save transcript` writes one self-contained HTML page (commands, outputs,
 *              inline SVG pictures, errors marked) and a plain .md
 *   serve      the live page answers on 127.0.0.1 only (the listening socket read back from
 *              /proc/net/tcp, a non-loopback address of this machine refused), follows the
 *              session (/gen moves, /live shows the new state), refuses a foreign Host and an
 *              oversized request, and the port closes when the shell quits. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tap.h"
#include "support/shell_harness.h"

static ShellEnv env;

typedef ShResult Result;

static int sanitizer_reports;         /* runs whose output holds an ASan/LSan/UBSan report */

/* `minductor -k -c CMDS`, stdout and stderr together. */
static Result run(const char *cmds) {
    Result r = sh_run(&env, "-k", cmds, NULL);
    if (sh_sanitizer_report(&r)) { sanitizer_reports++; diag("sanitizer report running: %s\n%s", cmds, r.out); }
    return r;
}
static bool has(const Result *r, const char *s) { return sh_has(r, s); }
static int count_of(const char *text, const char *s) {
    int c = 0;
    for (const char *p = text; (p = strstr(p, s)); p += strlen(s)) c++;
    return c;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* ---------------------------------------------------------------- tour */

/* Every lesson with a wrong and a right answer; {pat} is a pattern file the test writes. */
static const struct { const char *name; int steps; const char *wrong, *right; } lessons[] = {
    {"fx", 4, "64, 1", "1, 64"},
    {"functionalize", 4, "slice_scatter", "select_scatter"},
    {"passes", 5, "view", "slice_1"},
    {"patterns", 3, "examples/tours/double_relu.pat", "{pat}"},
    {"loopir", 4, "13", "10"},
    {"fusion", 5, "op0", "op3"},
    {"codegen", 4, "4096", "16384"},
    {"dynamic", 4, "32", "16"},
    {"cond", 4, "2", "1"},
    {"cudagraphs", 4, "1", "2"},
    {"trace", 4, "1/0", "0/0_1"},
    {"ranks", 3, "0", "2"},
};

static void test_tour_list(void) {
    Result r = run("tour");
    is_int(r.status, 0, "tour lists the lessons");
    int n = 0;
    for (size_t i = 0; i < sizeof lessons / sizeof *lessons; i++) {
        char want[64];
        snprintf(want, sizeof want, " %s ", lessons[i].name);
        if (has(&r, want)) n++;
        else diag("the list lacks %s", lessons[i].name);
    }
    ok(n >= 10 && n == (int)(sizeof lessons / sizeof *lessons), "tour lists %d lessons (at least 10), each of them", n);
    ok(!has(&r, "cannot be read"), "every lesson file parses");
    sh_result_free(&r);
}

/* One lesson start to finish: every step shown and run, the wrong answer refused, the right
 * one accepted. */
static void test_lesson(int i, const char *patfile) {
    const char *name = lessons[i].name;
    char right[600];
    snprintf(right, sizeof right, "%s", strcmp(lessons[i].right, "{pat}") ? lessons[i].right : patfile);
    char cmds[2000];
    int k = snprintf(cmds, sizeof cmds, "answer %s; tour %s", right, name);
    for (int s = 0; s < lessons[i].steps; s++) k += snprintf(cmds + k, sizeof cmds - (size_t)k, "; next");
    snprintf(cmds + k, sizeof cmds - (size_t)k, "; answer %s; answer %s; tour", lessons[i].wrong, right);
    Result r = run(cmds);
    int shown = 0;
    for (int s = 1; s <= lessons[i].steps; s++) {
        char want[200];
        snprintf(want, sizeof want, "--- %s, step %d/%d: ", name, s, lessons[i].steps);
        shown += has(&r, want);
    }
    is_int(shown, lessons[i].steps, "%s: all %d steps shown", name, lessons[i].steps);
    ok(!has(&r, "the lesson stopped"), "%s: every step's commands ran", name);
    char want[200];
    snprintf(want, sizeof want, "--- exercise (%s) ---", name);
    ok(has(&r, want), "%s: the exercise is shown after the last step", name);
    ok(has(&r, "no question is open"), "%s: an answer before the tour is refused", name);
    snprintf(want, sizeof want, "error: '%s' is not right", lessons[i].wrong);
    ok(has(&r, want), "%s: the wrong answer '%s' is rejected", name, lessons[i].wrong);
    snprintf(want, sizeof want, "right! lesson %s done", name);
    ok(has(&r, want), "%s: the right answer is accepted", name);
    /* listed as done afterwards, and no tour running */
    snprintf(want, sizeof want, " %s ", name);
    const char *line = strstr(r.out, "lessons in ");
    const char *entry = line ? strstr(line, want) : NULL;
    const char *eol = entry ? strchr(entry, '\n') : NULL;
    ok(entry && eol && memmem(entry, (size_t)(eol - entry), "[done]", 6), "%s: marked done in the list", name);
    if (!has(&r, "right! lesson")) diag("%s", r.out);
    sh_result_free(&r);
}

static void test_tour_moves(void) {
    /* while the tour runs: next/back move it, `next N` steps passes; after `tour off`, back undoes a pass */
    Result r = run("tour passes; next; back; next 2; tour next; next; back; tour back; tour off; step; back; tour nosuch");
    ok(count_of(r.out, "--- passes, step 1/5") == 3 && count_of(r.out, "--- passes, step 2/5") == 3 &&
       count_of(r.out, "--- passes, step 3/5") == 1,
       "back and tour back show the earlier step again, next and tour next the later one");
    ok(has(&r, "replaying steps 1..1 of passes..."), "back from step 3 replays step 1");
    ok(has(&r, "minductor> passes\n") && has(&r, "\nstep 1/19 functionalize") && count_of(r.out, "at step 2/19 after view_to_reshape") == 3,
       "next 2 ran two passes during the tour; the lesson's goto 2 then holds the state");
    ok(has(&r, "left the lesson passes"), "tour off leaves");
    ok(has(&r, "back to step 0 (undid functionalize)"), "after tour off, back undoes a pass again");
    ok(has(&r, "no lesson 'nosuch' (lessons: fx, functionalize"), "an unknown lesson names the lessons");
    sh_result_free(&r);
    r = run("tour fx; next; answer 1, 64; tour hint");
    ok(has(&r, "the exercise of fx comes after step 4"), "answering before the exercise is refused");
    ok(has(&r, "hint: the second pair of brackets"), "tour hint shows the hint");
    sh_result_free(&r);
    /* from another directory the lessons are found next to the program, paths made absolute */
    snprintf(env.workdir, sizeof env.workdir, "%s", env.tmpdir);
    r = run("tour fx; next; next; next; next; answer 1, 64");
    env.workdir[0] = 0;
    ok(has(&r, "/examples/seed_example.py\nloaded ") && has(&r, "right! lesson fx done"), "a lesson runs from another directory");
    sh_result_free(&r);
    r = run("tour 3; tour off");
    ok(has(&r, "=== passes: The post-grad passes"), "a lesson starts by number");
    sh_result_free(&r);
}

/* On a terminal: Tab completes lesson names after `tour`, and the lesson runs. */
static void test_tour_tty(void) {
    const char *const args[] = {NULL};
    const ShStep steps[] = {
        {"minductor> ", "tour functi\t\n"},
        {"(next: go on; tour off: leave)", "quit\n"},
    };
    ShResult r = sh_tty_dialogue(&env, args, steps, (int)(sizeof steps / sizeof steps[0]), 60);
    if (r.status == -2) skip(1, "no pseudo-terminal");
    else ok(sh_has(&r, "=== functionalize: Functionalization"), "Tab completes a lesson name; the lesson starts");
    sh_result_free(&r);
}

static void test_lesson_errors(void) {
    static const struct { const char *text, *want; } bad[] = {
        {"== step\ntext\n", "bad.tour:1: a lesson starts with 'title: ...'"},
        {"title: t\n== step\n> graph\n== exercise\nq?\nanswer: 1\n", "bad.tour:2: step 'step' must start with its explanation"},
        {"title: t\n== step\ntext\n", "bad.tour:3: a lesson ends with an '== exercise' section"},
        {"title: t\n== step\ntext\n== exercise\nq?\n", "bad.tour:4: the exercise needs 'answer:', 'answer-from:' or 'check:'"},
        {"title: t\n== step\ntext\n== exercise\nq?\nanswer-from: graph ~ ([\n", "bad.tour:6: bad regular expression '(['"},
        {"title: t\n== step\ntext\n@nope x\n== exercise\nq\nanswer: 1\n", "bad.tour:4: unknown directive '@nope x'"},
        {"title: t\n== step\ntext\n== exercise\nq\ncheck: graph\n", "bad.tour:4: 'check:' needs at least one 'expect:' regex"},
        {"title: t\n== step\ntext\n== exercise\nq\nanswer: 1\n== more\n", "bad.tour:7: the exercise must be the last section"},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/bad.tour", env.tmpdir);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text(path, bad[i].text);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "tour %s", path);
        Result r = run(cmd);
        ok(r.status == 1 && has(&r, bad[i].want), "malformed lesson %zu refused: %s", i + 1, bad[i].want);
        if (!has(&r, bad[i].want)) diag("%s", r.out);
        sh_result_free(&r);
    }
    /* a lesson file of one's own: `tour FILE`, with answer normalization */
    write_text(path, "title: mine\n== one\nLoad it.\n> load examples/seed_example.py\n== exercise\nStrides?\nanswer: [1, 64]\n");
    char cmd[800];
    snprintf(cmd, sizeof cmd, "tour %s; next; answer ( 1 ,64 ).", path);
    Result r = run(cmd);
    ok(r.status == 0 && has(&r, "right! lesson bad done"), "an own lesson file runs; answers compare without blanks, brackets and a final dot");
    sh_result_free(&r);
}

/* ---------------------------------------------------------------- transcript */

static void test_transcript(void) {
    char cmds[4000], html[600], md[600], svg[600];
    snprintf(html, sizeof html, "%s/t.html", env.tmpdir);
    snprintf(md, sizeof md, "%s/t.md", env.tmpdir);
    snprintf(svg, sizeof svg, "%s/fx.svg", env.tmpdir);
    snprintf(cmds, sizeof cmds,
             "load examples/seed_example.py; graph; nosuchcmd <b>; show fx --svg %s; show ir; lower; show ir; tour fx; next; "
             "save transcript %s; save transcript %s; save transcript %s/t.pdf", svg, html, md, env.tmpdir);
    Result r = run(cmds);
    ok(has(&r, "saved the transcript to") && has(&r, "(9 commands, 3 pictures"), "save transcript: 9 commands, 3 pictures");
    ok(has(&r, "save transcript FILE.html (a page with the pictures) or FILE.md (plain text), got"), "an unknown extension is refused");
    sh_result_free(&r);
    char *h = sh_read_file(html), *m = sh_read_file(md);
    ok(h && !strncmp(h, "<!DOCTYPE html>", 15) && strstr(h, "</html>"), "the HTML page is complete");
    ok(h && strstr(h, "minductor&gt; load examples/seed_example.py") && strstr(h, "loaded examples/seed_example.py: 5 nodes"),
       "each command with its output");
    ok(h && strstr(h, "<span class=\"x\">error: unknown command &#39;nosuchcmd&#39;"), "errors are marked, text escaped");
    ok(h && !strstr(h, "<b>;") && strstr(h, "nosuchcmd &lt;b&gt;"), "the command text is escaped");
    ok(h && count_of(h, "<svg") == 3 && !strstr(h, "<?xml") && count_of(h, "<figcaption>show ir</figcaption>") == 2 && !strstr(h, "(no picture") &&
       strstr(h, "fx.svg</figcaption>") && strstr(h, "<details><summary>DOT text</summary><pre>digraph"),
       "the pictures are inline SVG: the --svg file and the drawn `show ir` (its DOT text folded)");
    ok(h && count_of(h, "class=\"cmd fail\"") == 1, "the failed command is marked");
    ok(h && strstr(h, "--- fx, step 1/4: A graph as PyTorch prints it") && strstr(h, "minductor&gt; load examples/seed_example.py\nloaded"),
       "a tour's steps are in the `tour` command's output");
    ok(h && !strstr(h, "src=\"http") && !strstr(h, "href=\"http") && !strstr(h, "src=\"/") && !strstr(h, "<link") &&
       !strstr(h, "<script") && !strstr(h, "url("),
       "self-contained: nothing loaded from elsewhere");
    ok(m && strstr(m, "```\nminductor> graph\nclass <lambda>(torch.nn.Module):") && strstr(m, "![" ) &&
       strstr(m, "(the picture of this DOT text is in the HTML transcript)"), "the .md transcript: code blocks and picture references");
    ok(m && strstr(m, "recorded ") && strstr(m, ", 10 commands\n"), "the .md has the commands before it (the .html save too)");
    free(h);
    free(m);
}

/* ---------------------------------------------------------------- serve */

typedef struct Shell { pid_t pid; int in; char out[600]; } Shell;

static Shell shell_start(void) {
    static int nshells;
    Shell sh = {0};
    snprintf(sh.out, sizeof sh.out, "%s/serve_out%d.txt", env.tmpdir, ++nshells);   /* a fresh file: no stale text */
    int p[2];
    if (pipe(p) != 0) return sh;
    sh.pid = fork();
    if (sh.pid == 0) {
        dup2(p[0], 0);
        int fd = open(sh.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        close(p[1]);
        execl(env.bin, env.bin, "-k", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    sh.in = p[1];
    return sh;
}

static void shell_type(Shell *sh, const char *line) {
    ssize_t w = write(sh->in, line, strlen(line));
    w += write(sh->in, "\n", 1);
    (void)w;
}

/* Wait (at most ~20 s) until the shell's output holds `s`; the output (malloc'd) or NULL. */
static char *shell_wait(Shell *sh, const char *s) {
    for (int i = 0; i < 400; i++) {
        char *t = sh_read_file(sh->out);
        if (t && strstr(t, s)) return t;
        free(t);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int connect_to(struct in_addr addr, int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr = addr;
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    close(fd);
    return rc == 0 ? 0 : e;
}

static char *http(int port, const char *req) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { close(fd); return strdup("(connect failed)"); }
    for (size_t off = 0, n = strlen(req); off < n;) {
        ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap + 1);
    ssize_t r;
    while (len < cap && (r = recv(fd, buf + len, cap - len, 0)) > 0) len += (size_t)r;
    buf[len] = 0;
    close(fd);
    return buf;
}

static char *get(int port, const char *path) {
    char req[300];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
    return http(port, req);
}

static long gen_of(int port) {
    char *r = get(port, "/gen");
    char *body = strstr(r, "\r\n\r\n");
    long g = body ? atol(body + 4) : -1;
    free(r);
    return g;
}

/* The local address of the listening socket on `port` from /proc/net/tcp ("0100007F" is
 * 127.0.0.1), or "" when none listens. */
static void listen_addr(int port, char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f) return;
    char line[512], addr[16];
    unsigned p, st;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, " %*d: %8[0-9A-F]:%X %*8[0-9A-F]:%*X %X", addr, &p, &st) == 3 && (int)p == port && st == 0x0A)
            snprintf(out, n, "%s", addr);
    fclose(f);
}

static void test_serve(void) {
    Shell sh = shell_start();
    shell_type(&sh, "serve 8400-8499; load examples/seed_example.py");
    char *t = shell_wait(&sh, "loaded examples/seed_example.py");
    char *url = t ? strstr(t, "http://127.0.0.1:") : NULL;
    int port = url ? atoi(url + 17) : 0;
    ok(port >= 8400 && port <= 8499, "serve: a port of the range (%d)", port);
    free(t);
    if (!port) { kill(sh.pid, SIGKILL); waitpid(sh.pid, NULL, 0); return; }
    char addr[16];
    listen_addr(port, addr, sizeof addr);
    is_str(addr, "0100007F", "the socket listens on 127.0.0.1 only (/proc/net/tcp)");
    /* a non-loopback address of this machine does not answer */
    struct ifaddrs *ifs = NULL, *i;
    struct in_addr other = {0};
    if (getifaddrs(&ifs) == 0)
        for (i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
                struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
                if ((ntohl(a.s_addr) >> 24) != 127) { other = a; break; }
            }
    if (ifs) freeifaddrs(ifs);
    if (other.s_addr) {
        int e = connect_to(other, port);
        ok(e == ECONNREFUSED, "a connection to %s:%d is refused (%s)", inet_ntoa(other), port, e ? strerror(e) : "connected");
    } else skip(1, "no non-loopback IPv4 address on this machine");
    /* the page is rebuilt after the command's output is printed: wait for it */
    char *page = get(port, "/");
    for (int k = 0; k < 500 && !strstr(page, "<svg"); k++) { free(page); usleep(20000); page = get(port, "/"); }
    ok(strstr(page, "HTTP/1.1 200 OK") && strstr(page, "<title>minductor live</title>") &&
       strstr(page, "examples/seed_example.py &middot; step 0/19") && strstr(page, "<svg"),
       "the page shows the loaded graph with its picture");
    free(page);
    long g0 = gen_of(port);
    shell_type(&sh, "run; lower; sched");
    free(shell_wait(&sh, "cpp_fused_add_permute_select_0"));
    long g1 = -1;
    for (int k = 0; k < 500 && (g1 = gen_of(port)) == g0; k++) usleep(20000);
    ok(g1 > g0, "the generation moves as the teacher types (%ld -> %ld)", g0, g1);
    char *live = get(port, "/live");
    for (int k = 0; k < 500 && !strstr(live, "minductor&gt; sched"); k++) { free(live); usleep(20000); live = get(port, "/live"); }
    ok(strstr(live, "step 19/19 after post_grad_custom_post_pass") && strstr(live, "all 19 passes applied") &&
       strstr(live, "loop IR") && strstr(live, "op0_loop_body") && strstr(live, "fusion (kernels)") &&
       strstr(live, "minductor&gt; run; lower; sched") == NULL && strstr(live, "minductor&gt; sched"),
       "/live follows: passes, IR, fusion picture, the last command");
    free(live);
    char req[9000];
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n", port);
    char *r = http(port, req);
    ok(!strncmp(r, "HTTP/1.1 403", 12), "a foreign Host header is refused (403)");
    free(r);
    memset(req, 'a', sizeof req - 1);
    memcpy(req, "GET /", 5);
    req[sizeof req - 1] = 0;
    r = http(port, req);
    ok(!strncmp(r, "HTTP/1.1 413", 12), "an oversized request is refused (413)");
    free(r);
    r = get(port, "/../../etc/passwd");
    ok(!strncmp(r, "HTTP/1.1 404", 12), "nothing but the page is served (404)");
    free(r);
    /* Ctrl-C interrupts commands, not the shell: the page still answers and the shell goes on */
    kill(sh.pid, SIGINT);
    usleep(100000);
    ok(gen_of(port) >= g1, "after a Ctrl-C the page still answers");
    shell_type(&sh, "serve");
    free(shell_wait(&sh, "requests so far"));
    shell_type(&sh, "quit");
    close(sh.in);
    int st;
    waitpid(sh.pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the shell quits while serving (exit 0: no sanitizer report either)");
    struct in_addr lo = {htonl(INADDR_LOOPBACK)};
    is_int(connect_to(lo, port), ECONNREFUSED, "after quit the port is closed");
    listen_addr(port, addr, sizeof addr);
    is_str(addr, "", "nothing listens on the port any more");
    /* the end of the input ends the shell and the server with it */
    sh = shell_start();
    shell_type(&sh, "serve 8400-8499");
    t = shell_wait(&sh, "serving the live view");
    url = t ? strstr(t, "http://127.0.0.1:") : NULL;
    int port2 = url ? atoi(url + 17) : 0;
    free(t);
    ok(port2 && gen_of(port2) >= 0, "a second shell serves on %d", port2);
    close(sh.in);
    waitpid(sh.pid, &st, 0);
    ok(port2 && connect_to(lo, port2) == ECONNREFUSED, "end of input: the shell ends and the port closes");
    /* serve off stops it too, and the shell goes on */
    Result res = run("serve 8400-8499; serve off; serve 8400-8499; serve off; serve off; serve 99999-1");
    ok(count_of(res.out, "stopped serving on http://127.0.0.1:") == 2 && has(&res, "not serving") &&
       has(&res, "port range '99999-1'"), "serve off stops; a bad range is refused");
    sh_result_free(&res);
}

int main(void) {
    if (sh_init(&env, "minductor_teachXXXXXX") < 0) return 0;
    signal(SIGPIPE, SIG_IGN);
    test_tour_list();
    char pat[600];
    snprintf(pat, sizeof pat, "%s/negneg.pat", env.tmpdir);
    write_text(pat, "pattern double_neg\n  match:\n    n1 = aten.neg.default(y)\n    n2 = aten.neg.default(n1)\n"
                    "  replace:\n    return y\nend\n");
    for (size_t i = 0; i < sizeof lessons / sizeof *lessons; i++) test_lesson((int)i, pat);
    test_tour_moves();
    test_tour_tty();
    test_lesson_errors();
    test_transcript();
    test_serve();
    is_int(sanitizer_reports, 0, "no run printed a sanitizer report");
    sh_cleanup(&env);
    return exit_status();
}
