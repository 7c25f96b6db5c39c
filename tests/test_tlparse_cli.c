/* test_tlparse_cli.c — `minductor tlparse` with real tlparse's flags, each checked on what it
 * writes or how it exits: --overwrite (an existing DIR refused, then replaced), --latest,
 * --strict / --strict-compile-id, -p, -e (a torch.export log), -i (linked provenance panes),
 * --custom-header-html, --serve (a real GET on 127.0.0.1, stopped by SIGINT), --compare; and
 * the pages a shell session's log gives: the pass page (steps, pattern matches, hide
 * checkbox) and the provenance of the session's own node mappings. */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "trace/trace.h"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOGS "tests/fixtures/logs/"

static const char *bin;
static char dir[] = "/tmp/mi_tlcli_XXXXXX";

/* Run `BIN ARGS` through the shell; exit status, stdout+stderr into *out (malloc'd). */
static int run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run(char **out, const char *fmt, ...) {
    char args[4096], cmd[4500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
    int st;
    char *buf = sh_pipe(cmd, &st);
    if (out) *out = buf; else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *slurp(const char *fmt, ...) {
    char path[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    return sh_read_file(path);
}

static bool exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool exists(const char *fmt, ...) {
    char path[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    struct stat st;
    return stat(path, &st) == 0;
}

static int count(const char *s, const char *pat) {
    int n = 0;
    for (const char *q = s; q && (q = strstr(q, pat)); q++) n++;
    return n;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

int main(void) {
    bin = getenv("MINDUCTOR_BIN");
    if (!bin) { skip(1, "MINDUCTOR_BIN not set"); return done_testing(); }
    ok(mkdtemp(dir) != NULL, "temp dir");
    char *o = NULL;

    /* --overwrite */
    is_int(run(NULL, "tlparse " LOGS "cpu_recompile.log -o %s/a --no-browser", dir), 0, "first run writes DIR");
    write_file("/dev/null", "");
    char stale[600];
    snprintf(stale, sizeof stale, "%s/a/stale.txt", dir);
    write_file(stale, "old");
    is_int(run(&o, "tlparse " LOGS "cpu_recompile.log -o %s/a", dir), 1, "an existing DIR is refused");
    ok(strstr(o, "already exists; pass --overwrite to replace it or use -o OUTDIR") != NULL, "with tlparse's message");
    free(o);
    is_int(run(NULL, "tlparse " LOGS "cpu_recompile.log -o %s/a --overwrite", dir), 0, "--overwrite replaces it");
    ok(!exists("%s", stale) && exists("%s/a/index.html", dir), "the old contents are gone, the new report is there");

    /* --latest: the newest file of a directory */
    char ld[600];
    snprintf(ld, sizeof ld, "%s/logs", dir);
    mkdir(ld, 0755);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp " LOGS "cpu_recompile.log %s/old.log && touch -d '2001-01-01' %s/old.log && "
             "cp " LOGS "cpu_graph_break.log %s/new.log", ld, ld, ld);
    ok(system(cmd) == 0, "two logs, one older");
    is_int(run(&o, "tlparse %s --latest -o %s/latest", ld, dir), 0, "--latest");
    ok(strstr(o, "new.log") != NULL, "parses the newest file (new.log)");
    free(o);
    is_int(run(NULL, "tlparse %s --latest --all-ranks-html -o %s/x", ld, dir), 2, "--latest with --all-ranks-html is refused");

    /* --strict / --strict-compile-id */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.log", dir);
    snprintf(cmd, sizeof cmd, "cp " LOGS "cpu_recompile.log %s && echo 'garbage line' >> %s", bad, bad);
    ok(system(cmd) == 0, "a log with a bad line");
    is_int(run(NULL, "tlparse %s -o %s/s1", bad, dir), 0, "without --strict: exit 0");
    is_int(run(&o, "tlparse %s -o %s/s2 --strict", bad, dir), 1, "--strict: exit 1");
    ok(strstr(o, "--strict: 1 malformed") != NULL, "--strict names the count");
    free(o);
    is_int(run(NULL, "tlparse " LOGS "cpu_recompile.log -o %s/s3 --strict --strict-compile-id", dir), 0, "a clean log passes both");
    char badid[600];
    snprintf(badid, sizeof badid, "%s/badid.log", dir);
    write_file(badid, "V1122 18:41:45.352000 445 x.py:1] {\"artifact\": {\"name\": \"a\", \"encoding\": \"string\"}, \"frame_id\": \"x\", "
                      "\"frame_compile_id\": 0, \"has_payload\": \"5d41402abc4b2a76b9719d911017c592\"}\n\thello\n");
    is_int(run(NULL, "tlparse %s -o %s/s4 --strict-compile-id", badid, dir), 1, "--strict-compile-id: a malformed id fails");
    ok(exists("%s/s4/unknown_1/a_0.txt", dir), "its file sits in unknown_<line>/ (tlparse's rule)");
    char *cd = slurp("%s/s4/compile_directory.json", dir);
    ok(cd && strstr(cd, "\"unknown\": {") && strstr(cd, "\"url\": \"unknown_1/a_0.txt\""), "keyed \"unknown\" in compile_directory.json");
    free(cd);

    /* -p and the highlighted output code */
    is_int(run(NULL, "tlparse " LOGS "cpu_seed_example.log -o %s/p -p", dir), 0, "-p");
    char *ls = NULL;
    run(&ls, "tlparse --help >/dev/null; ls %s/p/-_0_0_0 %s/a/-_0_0_0", dir, dir);
    ok(strstr(ls, "inductor_output_code_cnmzbo2cxz44ljgqop5goqnhsula52p5ei4rv3nk36ufxt5dg6mc_12.txt") != NULL,
       "-p: the output code as .txt");
    free(ls);
    char *code = slurp("%s/p/-_0_0_0/inductor_output_code_cnmzbo2cxz44ljgqop5goqnhsula52p5ei4rv3nk36ufxt5dg6mc_12.txt", dir);
    ok(code && !strncmp(code, "# AOT ID:", 9), "-p: the payload as it is");
    free(code);
    is_int(run(NULL, "tlparse " LOGS "cpu_seed_example.log -o %s/h", dir), 0, "default: highlighted HTML");
    code = slurp("%s/h/-_0_0_0/inductor_output_code_cnmzbo2cxz44ljgqop5goqnhsula52p5ei4rv3nk36ufxt5dg6mc_12.html", dir);
    ok(code && strstr(code, "<span class=\"ln\" id=\"L1\"><span class=\"c\"># AOT ID:") &&
           strstr(code, "<span class=\"k\">def</span> <span class=\"f\">call</span>") && strstr(code, "<span class=\"s\">r&#39;&#39;&#39;"),
       "highlighted: comments, keywords, def names, strings; lines anchored");
    free(code);
    char *idx = slurp("%s/h/index.html", dir);
    ok(idx && strstr(idx, "fx_graph_cache_miss_16.json</a> \xe2\x9d\x8c (16)"), "index lists files with cache marks and numbers");
    free(idx);

    /* the long forms; every page linked: the backward compile's bwd_compilation_metrics from the index */
    is_int(run(NULL, "tlparse " LOGS "cpu_mlp_train.log -o %s/bw --plain-text --no-browser", dir), 0, "--plain-text");
    ok(exists("%s/bw/-_0_0_0/bwd_compilation_metrics_27.html", dir), "bwd_compilation_metrics written (tlparse's name)");
    idx = slurp("%s/bw/index.html", dir);
    ok(idx && strstr(idx, "<li><a href=\"-_0_0_0/bwd_compilation_metrics_27.html\">bwd_compilation_metrics_27.html</a>  (27)"),
       "index.html links bwd_compilation_metrics");
    free(idx);
    char *lsb = NULL;
    run(&lsb, "tlparse --help >/dev/null; ls %s/bw/-_0_0_0", dir);
    ok(lsb && strstr(lsb, "inductor_output_code_cbr4uh56q62shpqtnau2ttfzjcvfw74c5e2tji7u3j35zv63wibv_12.txt\n") &&
           strstr(lsb, "inductor_output_code_c3bwawjyh65trmhq5vz7h4rbxlauu6vx2oy4bqu66les2pka7btv_22.txt\n") && !strstr(lsb, "_12.html"),
       "--plain-text: both graphs' output code as .txt");
    free(lsb);

    /* guards and recompiles per frame */
    char *fr = slurp("%s/a/minductor/frame_0.html", dir);
    ok(fr && strstr(fr, "<pre class=\"recompile\">0/0: tensor &#39;x&#39; size mismatch at index 0. expected 16, actual 32"),
       "frame page: the recompile reason in full");
    ok(fr && strstr(fr, "Guards changed since compile 0/0: 3 line(s) added, 2 removed") &&
           strstr(fr, "<td class=\"add\">+- LAMBDA_GUARD: 2 &lt;= L[&#39;x&#39;].size()[0]"),
       "frame page: the guard differences between the recompiles (the new size guard)");
    free(fr);
    idx = slurp("%s/a/index.html", dir);
    ok(idx && strstr(idx, "<a href=\"minductor/frame_0.html\">frame 0</a>: 2 compile(s), 1 with recompile reasons"),
       "index links the frame page");
    free(idx);

    /* --custom-header-html */
    is_int(run(NULL, "tlparse " LOGS "cpu_seed_example.log -o %s/c --custom-header-html '<div id=\"hdr\">team X</div>'", dir), 0,
           "--custom-header-html");
    idx = slurp("%s/c/index.html", dir);
    ok(idx && strstr(idx, "<div id=\"hdr\">team X</div>"), "put verbatim atop index.html");
    free(idx);

    /* -e: a torch.export log */
    char ex[600];
    snprintf(ex, sizeof ex, "%s/export.log", dir);
    write_file(ex,
               "V1122 18:41:45.352000 445 x.py:1] {\"exported_program\": {}, \"has_payload\": \"5d41402abc4b2a76b9719d911017c592\"}\n\thello\n"
               "V1122 18:41:45.353000 445 x.py:2] {\"missing_fake_kernel\": {\"op\": \"mylib.foo\"}}\n"
               "V1122 18:41:45.354000 445 x.py:3] {\"guard_added\": {\"expr\": \"Eq(s0, 3)\", \"prefix\": \"eval\", "
               "\"user_stack\": [{\"filename\": \"model.py\", \"line\": 7, \"name\": \"forward\"}], \"stack\": []}}\n");
    is_int(run(NULL, "tlparse %s -e -o %s/e", ex, dir), 0, "-e");
    is_int(run(NULL, "tlparse %s --export -o %s/e2", ex, dir), 0, "--export");
    ok(exists("%s/e2/-_-_-_-/exported_program_0.txt", dir) && !exists("%s/e2/raw.jsonl", dir), "--export is -e");
    idx = slurp("%s/e/index.html", dir);
    ok(idx && strstr(idx, "Export failed: 2 problem(s)") && strstr(idx, "Missing Fake Kernel") &&
           strstr(idx, "<code>torch.ops.mylib.foo</code> is missing a fake kernel") && strstr(idx, "Guard Evaluated") &&
           strstr(idx, "<code>Eq(s0, 3)</code>"), "-e: the export index lists the failures");
    ok(exists("%s/e/-_-_-_-/exported_program_0.txt", dir) && exists("%s/e/-_-_-_-/symbolic_guard_information_1.html", dir) &&
           !exists("%s/e/raw.jsonl", dir) && !exists("%s/e/compile_directory.json", dir),
       "-e: tlparse's export files (exported_program, symbolic guard page), no raw.jsonl");
    char *sg = slurp("%s/e/-_-_-_-/symbolic_guard_information_1.html", dir);
    ok(sg && strstr(sg, "Eq(s0, 3)") && strstr(sg, "model.py:7 in forward"), "the guard page: expression and user stack");
    free(sg);
    free(idx);

    /* --compare */
    is_int(run(&o, "tlparse --compare " LOGS "cpu_recompile.log " LOGS "cpu_graph_break.log -o %s/cmp", dir), 0, "--compare");
    ok(strstr(o, "compile 0/1:\n  only in A") && strstr(o, "difference(s)"), "text: compile ids aligned, differences listed");
    free(o);
    char *cmp = slurp("%s/cmp/compare.html", dir);
    ok(cmp && strstr(cmp, "<h2 id=\"0/0\">compile 0/0</h2>") && strstr(cmp, "<table class=\"sbs\">") &&
           strstr(cmp, "only in run A"), "compare.html: per compile, post-grad graphs side by side");
    free(cmp);

    /* a shell session's log: pass page with pattern matches, provenance panes */
    char slog[600], cmds[2000];
    snprintf(slog, sizeof slog, "%s/session.log", dir);
    snprintf(cmds, sizeof cmds, "-c 'patterns tests/fixtures/patterns/user.pat; load tests/fixtures/patterns/double_relu.py; "
                                "trace on %s; run; codegen; trace off' >/dev/null", slog);
    is_int(run(NULL, "%s", cmds), 0, "a traced session");
    is_int(run(NULL, "tlparse %s -i -o %s/sess", slog, dir), 0, "tlparse -i on the session's log");
    char *pp = slurp("%s/sess/minductor/passes_-_0_0_0.html", dir);
    ok(pp && strstr(pp, "hide passes that changed nothing") && strstr(pp, "class=\"step changed\"") &&
           count(pp, "class=\"step nochange\"") >= 10, "pass page: every step, changed ones marked, a hide checkbox");
    const char *p2 = pp ? strstr(pp, "_pass_pattern_2 &mdash; ") : NULL;
    ok(p2 && strstr(p2, " ms &mdash; 2 &rarr; 1 ops (-1) &mdash; changed</h3>"),
       "pass_pattern_2's step: its time, 2 -> 1 ops, changed");
    ok(pp && strstr(pp, "<tr class=\"match\"><td>1</td><td>double_relu</td><td><code>relu_1: ") &&
           strstr(pp, "= torch.ops.aten.relu.default(relu)") && strstr(pp, "<code>relu_default: "),
       "the match: pattern, matched nodes and replacement with their FX lines");
    free(pp);
    char *pv = slurp("%s/sess/provenance_tracking_-_0_0_0.html", dir);
    ok(pv && count(pv, "<pre data-pane=") == 4 && strstr(pv, "\"post>code\":{") && strstr(pv, "debug handles"),
       "provenance: four panes, post -> code line map from the session's node mappings");
    free(pv);

    /* --serve: a real request on 127.0.0.1, then SIGINT stops it */
    char sv[600];
    snprintf(sv, sizeof sv, "exec '%s' tlparse " LOGS "cpu_seed_example.log -o %s/srv --serve=18900-18950", bin, dir);
    int fds[2];
    ok(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl("/bin/sh", "sh", "-c", sv, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *pf = fdopen(fds[0], "r");
    char line[600];
    int port = 0;
    while (fgets(line, sizeof line, pf)) {
        const char *u = strstr(line, "http://127.0.0.1:");
        if (u) { port = atoi(u + 17); break; }
    }
    ok(port >= 18900 && port <= 18950, "--serve prints its URL (port %d in the range)", port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char resp[4096] = "";
    if (port && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        const char *rq = "GET /compile_directory.json HTTP/1.0\r\n\r\n";
        send(fd, rq, strlen(rq), 0);
        ssize_t n, tot = 0;
        while ((n = recv(fd, resp + tot, sizeof resp - 1 - (size_t)tot, 0)) > 0) tot += n;
        resp[tot] = 0;
    }
    close(fd);
    ok(!strncmp(resp, "HTTP/1.1 200 OK", 15) && strstr(resp, "\"[0/0]\": {"), "GET /compile_directory.json over loopback");
    kill(pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGINT stops the server; exit 0");
    fclose(pf);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ok(system(cmd) == 0, "cleanup");
    return done_testing();
}
