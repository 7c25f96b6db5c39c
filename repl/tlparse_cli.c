/* tlparse_cli.c — the command-line face of the report, with real tlparse's flags so habits and
 * scripts carry over: `minductor tlparse LOG [-o DIR] [--overwrite] [--latest] [--strict]
 * [--strict-compile-id] [-p] [-e] [-i] [--custom-header-html HTML] [--no-browser]
 * [--all-ranks-html] [--serve[=LO-HI]]`, and `minductor tlparse --compare A.log B.log`. It sits
 * at the CLI boundary: it prints a summary on stdout and errors on stderr, and returns an exit
 * code (only repl/ prints). The report itself is trace/tlparse*.c. */
#define _GNU_SOURCE
#include "commands.h"
#include "trace/http_serve.h"
#include "trace/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: minductor tlparse LOG [options]              one log -> DIR/index.html\n"
            "       minductor tlparse LOGDIR --latest [options]  the newest file of LOGDIR\n"
            "       minductor tlparse LOGDIR --all-ranks-html    dedicated_log_torch_trace_rank_N*.log files\n"
            "       minductor tlparse --compare A.log B.log [-o DIR]  two runs side by side\n"
            "Writes the report tlparse writes (same files and names; minductor's own pages under\n"
            "DIR/minductor/). Options (as tlparse's):\n"
            "  -o DIR                 output directory (default tl_out)\n"
            "  --overwrite            replace DIR when it exists (without it an existing DIR is refused)\n"
            "  --latest               LOG is a directory: parse its most recently modified file\n"
            "  --all-ranks-html       one report per rank + a landing page (alias: --all-ranks)\n"
            "  --strict               exit 1 when lines were malformed (glog, JSON, md5, other rank, parser)\n"
            "  --strict-compile-id    exit 1 when some record's compile id is malformed\n"
            "  -p, --plain-text       inductor_output_code as .txt instead of highlighted HTML\n"
            "  -e, --export           a torch.export log (exported program, export failures)\n"
            "  -i, --inductor-provenance  provenance_tracking_<dir>.html for every compile directory\n"
            "  --custom-header-html HTML  put HTML at the top of index.html\n"
            "  --no-browser           do not open a browser (one is opened only on a desktop terminal)\n"
            "  -v, --verbose          list every log problem on stderr\n"
            "minductor's own:\n"
            "  --serve[=LO-HI]        then serve DIR at http://127.0.0.1:PORT/ (first free port of LO-HI,\n"
            "                         default 8000-8099; loopback only) until Ctrl-C\n"
            "  --no-artifacts         only index.html, raw.jsonl, chromium_events.json (fast)\n");
}

static void print_stats(const TlparseSummary *s) {
    printf("  %ld lines, %ld envelopes (%ld ok), %ld MB, %d compile ids (%d failed, %d restarted), %d artifacts, "
           "%d chromium events, %d files, %.3f s\n",
           s->stats.lines, s->stats.envelopes, s->stats.ok, s->stats.bytes >> 20, s->n_compiles, s->n_failed,
           s->n_restarted, s->n_artifacts, s->n_chromium_events, s->n_files, s->seconds);
    long nf = trace_stats_failures(&s->stats);
    if (nf) {
        printf("  %ld log problem(s):", nf);
        for (int k = 0; k < TRACE_NKINDS; k++)
            if (s->stats.issues[k]) printf(" %s=%ld", trace_issue_kind_name((TraceIssueKind)k), s->stats.issues[k]);
        printf("\n");
    } else
        printf("  no log problems; %ld payload md5s verified\n", s->stats.md5_checked);
    if (s->n_parser_failures) printf("  %d payload(s) no parser could render (kept in payloads/)\n", s->n_parser_failures);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    return remove(p);
}

/* tlparse's setup_output_directory: an existing DIR is an error unless --overwrite, which
 * removes it; refused when DIR is "/", the current directory or above it, or holds the log. */
static int setup_out(const char *out, bool overwrite, const char *log) {
    struct stat st;
    if (lstat(out, &st) != 0) return 0;
    if (!overwrite) {
        fprintf(stderr, "tlparse: Directory %s already exists; pass --overwrite to replace it or use -o OUTDIR\n", out);
        return -1;
    }
    char ro[PATH_MAX], rc[PATH_MAX], rl[PATH_MAX];
    if (!realpath(out, ro) || !getcwd(rc, sizeof rc)) { fprintf(stderr, "tlparse: %s: %s\n", out, strerror(errno)); return -1; }
    size_t n = strlen(ro);
    if (!strcmp(ro, "/") || (!strncmp(rc, ro, n) && (rc[n] == '/' || rc[n] == 0))) {
        fprintf(stderr, "tlparse: refusing to remove %s (it holds the current directory)\n", out);
        return -1;
    }
    if (log && realpath(log, rl) && !strncmp(rl, ro, n) && rl[n] == '/') {
        fprintf(stderr, "tlparse: refusing to remove %s: it holds the log %s\n", out, log);
        return -1;
    }
    if (nftw(out, rm_one, 32, FTW_DEPTH | FTW_PHYS) != 0) {
        fprintf(stderr, "tlparse: cannot remove %s: %s\n", out, strerror(errno));
        return -1;
    }
    return 0;
}

/* --latest: the most recently modified regular file of dir (tlparse's rule). */
static int newest_file(const char *dir, char *out, size_t n) {
    DIR *d = opendir(dir);
    if (!d) { fprintf(stderr, "tlparse: Input path %s is not a directory (required with --latest)\n", dir); return -1; }
    struct dirent *e;
    struct timespec best = {0, 0};
    out[0] = 0;
    while ((e = readdir(d))) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (!out[0] || st.st_mtim.tv_sec > best.tv_sec ||
            (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec)) {
            best = st.st_mtim;
            snprintf(out, n, "%s", p);
        }
    }
    closedir(d);
    if (!out[0]) { fprintf(stderr, "tlparse: No files found in directory %s\n", dir); return -1; }
    return 0;
}

/* Open DIR/index.html in a browser, as tlparse does, but only on a desktop terminal. */
static void open_browser(const char *out) {
    if (!isatty(1) || (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY") && !getenv("BROWSER"))) return;
    char page[PATH_MAX];
    snprintf(page, sizeof page, "%s/index.html", out);
    const char *prog = getenv("BROWSER") ? getenv("BROWSER") : "xdg-open";
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) { dup2(nul, 1); dup2(nul, 2); }
        execlp(prog, prog, page, (char *)NULL);
        _exit(127);
    }
}

static volatile sig_atomic_t stop_serving;
static void on_signal(int sig) { (void)sig; stop_serving = 1; }

/* --serve: serve out on 127.0.0.1 until SIGINT/SIGTERM. */
static int serve(MiCtx *ctx, const char *out, int lo, int hi) {
    HttpServeOptions o = {.root = out, .port_lo = lo, .port_hi = hi};
    HttpServer *s = http_serve_start(ctx, &o);
    char eb[1400];
    if (!s) { fprintf(stderr, "tlparse: --serve: %s\n", mi_err_str(ctx, eb, sizeof eb)); return 1; }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    printf("serving %s on http://127.0.0.1:%d/ (Ctrl-C stops)\n", out, http_serve_port(s));
    fflush(stdout);
    while (!stop_serving) pause();
    http_serve_stop(s);
    printf("stopped serving\n");
    return 0;
}

static bool parse_range(const char *s, int *lo, int *hi) {
    char *e;
    long a = strtol(s, &e, 10), b = a;
    if (e == s) return false;
    if (*e == '-') { const char *f = e + 1; b = strtol(f, &e, 10); if (e == f) return false; }
    if (*e) return false;
    *lo = (int)a;
    *hi = (int)b;
    return true;
}

int tlparse_main(MiCtx *ctx, int argc, char **argv) {
    const char *in = NULL, *out = "tl_out", *cmp_b = NULL;
    bool all_ranks = false, latest = false, overwrite = false, strict = false, strict_cid = false, verbose = false;
    bool no_browser = false, compare = false;
    int serve_lo = -1, serve_hi = -1;
    TlparseOptions opt = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            if (++i >= argc) { fprintf(stderr, "tlparse: -o needs a directory\n"); return 2; }
            out = argv[i];
        } else if (!strcmp(a, "--all-ranks-html") || !strcmp(a, "--all-ranks")) all_ranks = true;
        else if (!strcmp(a, "--latest")) latest = true;
        else if (!strcmp(a, "--overwrite")) overwrite = true;
        else if (!strcmp(a, "--strict")) strict = true;
        else if (!strcmp(a, "--strict-compile-id")) strict_cid = true;
        else if (!strcmp(a, "-p") || !strcmp(a, "--plain-text")) opt.plain_text = true;
        else if (!strcmp(a, "-e") || !strcmp(a, "--export")) opt.export_mode = true;
        else if (!strcmp(a, "-i") || !strcmp(a, "--inductor-provenance")) opt.provenance = true;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) verbose = true;
        else if (!strcmp(a, "--no-browser")) no_browser = true;
        else if (!strcmp(a, "--no-artifacts")) opt.no_artifact_files = true;
        else if (!strcmp(a, "--custom-header-html")) {
            if (++i >= argc) { fprintf(stderr, "tlparse: --custom-header-html needs the HTML\n"); return 2; }
            opt.custom_header_html = argv[i];
        } else if (!strcmp(a, "--serve")) { serve_lo = 8000; serve_hi = 8099; }
        else if (!strncmp(a, "--serve=", 8)) {
            if (!parse_range(a + 8, &serve_lo, &serve_hi)) { fprintf(stderr, "tlparse: --serve=LO-HI: ports, e.g. 8000-8099\n"); return 2; }
        } else if (!strcmp(a, "--compare")) {
            if (i + 2 >= argc) { fprintf(stderr, "tlparse: --compare needs two logs\n"); return 2; }
            compare = true;
            in = argv[++i];
            cmp_b = argv[++i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "tlparse: unknown option %s\n", a); usage(stderr); return 2; }
        else if (!in) in = a;
        else { fprintf(stderr, "tlparse: one log at a time ('%s', '%s')\n", in, a); usage(stderr); return 2; }
    }
    if (!in) { usage(stderr); return 2; }
    if (all_ranks && latest) { fprintf(stderr, "tlparse: --latest cannot be used with --all-ranks-html\n"); return 2; }
    char eb[1400], newest[PATH_MAX];
    if (compare) {
        if (setup_out(out, overwrite, NULL) != 0) return 1;
        char *text = tlparse_compare(ctx, in, cmp_b, out);
        if (!text) { fprintf(stderr, "tlparse: --compare: %s\n", mi_err_str(ctx, eb, sizeof eb)); return 1; }
        fputs(text, stdout);
        printf("tlparse: comparison -> %s/compare.html\n", out);
        free(text);
        return serve_lo >= 0 ? serve(ctx, out, serve_lo, serve_hi) : 0;
    }
    if (latest) {
        if (newest_file(in, newest, sizeof newest) != 0) return 1;
        in = newest;
        printf("tlparse: newest file of the directory: %s\n", in);
    }
    struct stat st;
    if (stat(in, &st) == 0 && !all_ranks && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tlparse: %s: is a directory; use --latest (its newest log) or --all-ranks-html (per-rank logs)\n", in);
        return 1;
    }
    if (stat(in, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {    /* /dev/zero: endless */
        fprintf(stderr, "tlparse: %s: is a device, not a log\n", in);
        return 1;
    }
    if (stat(in, &st) != 0) { fprintf(stderr, "tlparse: %s: %s\n", in, strerror(errno)); return 1; }
    if (setup_out(out, overwrite, all_ranks ? NULL : in) != 0) return 1;
    if (all_ranks) {
        TlparseMultiSummary ms;
        if (tlparse_all_ranks(ctx, in, out, &opt, &ms) != 0) {
            fprintf(stderr, "tlparse: %s\n", mi_err_str(ctx, eb, sizeof eb));
            return 1;
        }
        printf("tlparse: %d ranks -> %s/index.html\n", ms.n_ranks, out);
        long bad = 0;
        for (int i = 0; i < ms.n_ranks; i++) {
            printf("rank %d (%s):\n", ms.ranks[i].rank, ms.ranks[i].log);
            print_stats(&ms.ranks[i].s);
            bad += strict ? tlparse_strict_failures(&ms.ranks[i].s) : 0;
            bad += strict_cid && ms.ranks[i].s.unknown_compile_id;
        }
        printf("divergent compile ids: %d, collective mismatches: %d, failure mismatches: %d, "
               "recompile reason mismatches: %d\n", ms.n_divergent_compiles, ms.n_collective_mismatches,
               ms.n_failure_mismatches, ms.n_recompile_mismatches);
        tlparse_multi_summary_free(&ms);
        if (bad) { fprintf(stderr, "tlparse: --strict: some rank's log has problems (listed above)\n"); return 1; }
        if (!no_browser && serve_lo < 0) open_browser(out);
        return serve_lo >= 0 ? serve(ctx, out, serve_lo, serve_hi) : 0;
    }
    TlparseSummary s;
    if (tlparse_run(ctx, in, out, &opt, &s) != 0) {
        fprintf(stderr, "tlparse: %s\n", mi_err_str(ctx, eb, sizeof eb));
        return 1;
    }
    printf("tlparse: %s -> %s/index.html\n", in, out);
    print_stats(&s);
    if (verbose && trace_stats_failures(&s.stats))
        fprintf(stderr, "tlparse: the log problems are listed with their lines in %s/index.html#failures\n", out);
    if (s.stats.envelopes == 0 && s.stats.lines > 0) {     /* a graph file, a text file, ... */
        fprintf(stderr, "tlparse: %s: not a TORCH_TRACE log (none of its %ld lines is a glog record line)\n",
                in, s.stats.lines);
        return 1;
    }
    if (strict && tlparse_strict_failures(&s)) {
        fprintf(stderr, "tlparse: --strict: %ld malformed or unparsed record(s) (see %s/index.html#failures)\n",
                tlparse_strict_failures(&s), out);
        return 1;
    }
    if (strict_cid && s.unknown_compile_id) {
        fprintf(stderr, "tlparse: --strict-compile-id: some log entries did not have a valid compile id\n");
        return 1;
    }
    if (!no_browser && serve_lo < 0) open_browser(out);
    return serve_lo >= 0 ? serve(ctx, out, serve_lo, serve_hi) : 0;
}
