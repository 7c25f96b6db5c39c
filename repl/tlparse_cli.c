/* tlparse_cli.c — the command-line face of the report: `minductor tlparse LOG -o DIR` and
 * `minductor tlparse DIR --all-ranks -o DIR`. It sits at the CLI boundary, so it prints a
 * summary on stdout and errors on stderr, and returns an exit code (only repl/ prints). */
#include "trace/trace.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f) {
    fprintf(f, "usage: minductor tlparse LOG [-o DIR] [--no-artifacts]\n"
               "       minductor tlparse DIR --all-ranks [-o DIR]\n"
               "Writes an HTML report (default DIR: tl_out) like PyTorch's tlparse.\n");
}

static void print_stats(const TlparseSummary *s) {
    printf("  %ld lines, %ld envelopes (%ld ok), %ld MB, %d compile ids (%d failed, %d restarted), %d artifacts, "
           "%d chromium events, %.3f s\n",
           s->stats.lines, s->stats.envelopes, s->stats.ok, s->stats.bytes >> 20, s->n_compiles, s->n_failed,
           s->n_restarted, s->n_artifacts, s->n_chromium_events, s->seconds);
    long nf = trace_stats_failures(&s->stats);
    if (nf) {
        printf("  %ld log problem(s):", nf);
        for (int k = 0; k < TRACE_NKINDS; k++)
            if (s->stats.issues[k]) printf(" %s=%ld", trace_issue_kind_name((TraceIssueKind)k), s->stats.issues[k]);
        printf("\n");
    } else
        printf("  no log problems; %ld payload md5s verified\n", s->stats.md5_checked);
}

int tlparse_main(MiCtx *ctx, int argc, char **argv) {
    const char *in = NULL, *out = "tl_out";
    bool all_ranks = false;
    TlparseOptions opt = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) {
            if (++i >= argc) { usage(stderr); return 2; }
            out = argv[i];
        } else if (!strcmp(argv[i], "--all-ranks")) all_ranks = true;
        else if (!strcmp(argv[i], "--no-artifacts")) opt.no_artifact_files = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else if (argv[i][0] == '-' && argv[i][1]) { fprintf(stderr, "tlparse: unknown option %s\n", argv[i]); usage(stderr); return 2; }
        else if (!in) in = argv[i];
        else { usage(stderr); return 2; }
    }
    if (!in) { usage(stderr); return 2; }
    struct stat st;
    if (stat(in, &st) == 0 && !all_ranks && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tlparse: %s: is a directory; a directory of per-rank logs needs --all-ranks\n", in);
        return 1;
    }
    if (stat(in, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {    /* /dev/zero: endless */
        fprintf(stderr, "tlparse: %s: is a device, not a log\n", in);
        return 1;
    }
    char eb[1400];
    if (all_ranks) {
        TlparseMultiSummary ms;
        if (tlparse_all_ranks(ctx, in, out, &opt, &ms) != 0) {
            fprintf(stderr, "tlparse: %s\n", mi_err_str(ctx, eb, sizeof eb));
            return 1;
        }
        printf("tlparse: %d ranks -> %s/index.html\n", ms.n_ranks, out);
        for (int i = 0; i < ms.n_ranks; i++) {
            printf("rank %d (%s):\n", ms.ranks[i].rank, ms.ranks[i].log);
            print_stats(&ms.ranks[i].s);
        }
        printf("divergent compile ids: %d, collective mismatches: %d, failure mismatches: %d, "
               "recompile reason mismatches: %d\n", ms.n_divergent_compiles, ms.n_collective_mismatches,
               ms.n_failure_mismatches, ms.n_recompile_mismatches);
        tlparse_multi_summary_free(&ms);
        return 0;
    }
    TlparseSummary s;
    if (tlparse_run(ctx, in, out, &opt, &s) != 0) {
        fprintf(stderr, "tlparse: %s\n", mi_err_str(ctx, eb, sizeof eb));
        return 1;
    }
    printf("tlparse: %s -> %s/index.html\n", in, out);
    print_stats(&s);
    if (s.stats.envelopes == 0 && s.stats.lines > 0) {     /* a graph file, a text file, ... */
        fprintf(stderr, "tlparse: %s: not a TORCH_TRACE log (none of its %ld lines is a glog record line)\n",
                in, s.stats.lines);
        return 1;
    }
    return 0;
}
