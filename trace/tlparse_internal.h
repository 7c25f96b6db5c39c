/* tlparse_internal.h — the in-memory model tlparse.c builds while streaming a log and
 * tlparse_html.c renders at the end; multirank.c reads it to line ranks up. Only what the
 * report shows is kept: names, statuses, small summaries — never whole payloads. */
#ifndef TLPARSE_INTERNAL_H
#define TLPARSE_INTERNAL_H

#include "trace_internal.h"

typedef struct TlArtifact {
    char *name;             /* artifact name or event key */
    char *url;              /* relative to the compile directory; NULL when not written */
    char *html;             /* its HTML page, relative to the compile directory */
    long line;              /* envelope line */
    bool md5_ok;
    int number;             /* running output number (unique suffix, like tlparse) */
} TlArtifact;

typedef struct TlCgEvent { char *name; char ph; double ts; } TlCgEvent;

typedef struct TlCompile {
    char id[64];
    char dir[96];           /* directory name, e.g. "-_0_0_0" */
    long first_line;
    TlArtifact *arts; int n_arts, cap_arts;
    bool has_metrics, failed, restarted;
    char status[256];
    char *fail_type, *fail_reason, *restart_reasons;   /* full texts */
    char *co_name; double duration_s; bool has_duration;
    char *metrics_url;
    char *recompile_reason;
    /* cudagraphs: what the log says about them */
    int cg_requested;       /* fx_kwargs[cudagraphs]: -1 unknown, 0 no, 1 yes */
    char *cg_skip_reason;
    double cg_runtime_us; int n_cg_runtime;
    TlCgEvent *cg; int n_cg, cap_cg;
    /* collectives: sequence of ops of the best graph (schedule > post-grad > any graph) */
    StrBuf coll; int n_coll, coll_prio; char coll_src[64];
    /* minductor pass steps */
    int n_pass_steps;
} TlCompile;

typedef struct TlTrie {
    char *label;
    struct TlTrie **kids; int n_kids;
    StrBuf cids;            /* compile ids starting here, space separated */
} TlTrie;

typedef struct Tl {
    MiCtx *ctx;
    const TlparseOptions *opt;
    char out[1024];
    TraceReader *rd;
    FILE *raw, *chrome;
    long n_chrome;
    TlCompile *c; int n_c, cap_c;
    TlCompile nocid;        /* records without a compile id */
    TlTrie trie;
    int output_count;
    int rank;
    int n_artifacts;
    bool write_failed;
    FileQueue *fq;          /* artifact files are written in the background */
    StrBuf tmp;
} Tl;

/* Parse a log into *t (writes raw.jsonl, chromium_events.json and artifact files on the way). */
int tl_parse(Tl *t, MiCtx *ctx, const char *log_path, const char *out_dir, const TlparseOptions *opt);
/* Render index.html, compile pages, failures_and_restarts.html, compile_directory.json. */
int tl_render(Tl *t, const char *log_path);
void tl_fill_summary(const Tl *t, TlparseSummary *s);
/* Wait for the background writes; -1 + t->ctx->err when one failed. */
int tl_finish_files(Tl *t);
void tl_free(Tl *t);
TlCompile *tl_find(Tl *t, const char *cid);

/* Write a whole file under t->out (path relative); records failure in t->write_failed. */
void tl_write(Tl *t, const char *rel, const char *data, size_t n);
/* Page header/footer with a title (escaped) and the shared CSS. */
void tl_page_begin(StrBuf *b, const char *title);
void tl_page_end(StrBuf *b);

#endif
