/* tlparse_internal.h — the in-memory model tlparse.c builds while streaming a log and
 * tlparse_html.c renders at the end; multirank.c reads it to line ranks up. Only what the
 * report shows is kept: names, statuses, small summaries — never whole payloads. */
#ifndef TLPARSE_INTERNAL_H
#define TLPARSE_INTERNAL_H

#include "trace_internal.h"

typedef struct TlArtifact {
    char *name;             /* artifact name or event key */
    char *url;              /* the file tlparse's rules made of it, relative to the output
                               directory ("-_0_0_0/inductor_post_grad_graph_5.txt",
                               "payloads/<md5>.txt"); NULL when none was written */
    long line;              /* envelope line */
    bool md5_ok;
    int number;             /* tlparse's output number of its file (-1 when none) */
    char role;              /* 'f' forward, 'b' backward, 'j' joint, 0 not said (trace_role_*) */
} TlArtifact;

/* A row of failures_and_restarts.html. */
typedef struct TlBreak {
    char key[80];
    char *metrics_url;
    bool restart;
    char *type, *reason, *source;
} TlBreak;

/* One entry of compile_directory.json: a file (or link) under a compile directory key. */
typedef struct TlFile {
    char *url;              /* relative to the output directory, or a link's URL */
    char *name;             /* base name (a link: its name) */
    int number;             /* tlparse's running output number */
    const char *suffix;     /* cache mark: "✅" hit, "❌" miss, "❓" bypass, or "" */
    char *readable_url;     /* stack-traces JSON: its readable HTML; else NULL */
    bool damaged;           /* minductor: written from a payload whose md5 did not match */
    long line;              /* log line of the record */
} TlFile;

/* A compile_directory.json key ("[0/0]", "[-/-]", "unknown") with its files, first-seen order. */
typedef struct TlDir {
    char key[80];
    char dirname[96];       /* the key's directory name ("-_0_0_0"; "(unknown)") */
    TlFile *f; int n, cap;
} TlDir;

typedef struct TlPasses TlPasses;     /* trace/tlparse_passes.c */
typedef struct TlProv TlProv;         /* trace/tlparse_provenance.c */
typedef struct TlWhy TlWhy;           /* trace/tlparse_why.c */

typedef struct TlCgEvent { char *name; char ph; double ts; } TlCgEvent;

typedef struct TlCompile {
    char id[64];
    char dir[96];           /* directory name, e.g. "-_0_0_0" (minductor/compile_<dir>.html) */
    long first_line;
    TlArtifact *arts; int n_arts, cap_arts;
    bool has_metrics, failed, restarted;
    char status[256];
    char *fail_type, *fail_reason, *restart_reasons;   /* full texts */
    char *co_name; double duration_s; bool has_duration;
    char *stack_html;       /* the dynamo_start stack, as list items (for its metrics page) */
    char key[80];           /* compile_directory.json key, "[0/0]" */
    char *metrics_url;
    char *recompile_reason;
    /* cudagraphs: what the log says about them */
    int cg_requested;       /* fx_kwargs[cudagraphs]: -1 unknown, 0 no, 1 yes */
    char *cg_skip_reason;
    double cg_runtime_us; int n_cg_runtime;
    TlCgEvent *cg; int n_cg, cap_cg;
    /* collectives: sequence of ops of the best graph (schedule > post-grad > any graph) */
    StrBuf coll; int n_coll, coll_prio; char coll_src[64];
    /* minductor pass steps; graphs before/after a stage of passes (real logs) */
    int n_pass_steps, n_stage_graphs;
    int frame_id;           /* -1 when the id has none */
    TraceRoleState role;    /* forward/backward tracking over its chromium events */
    TlPasses *passes;       /* its pass page under construction, or NULL */
    TlProv *prov;           /* its provenance sections (tlparse -i), or NULL */
    TlWhy *why;             /* its fusion decisions (a shell session's `sched`), or NULL */
    char *guards;           /* its guard text (dynamo_cpp_guards_str, else dynamo_guards' code) */
    bool guards_cpp;
    char *recompile_full;   /* every recompile reason, one per line */
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
    int output_count;       /* tlparse's running output number */
    TlBreak *breaks; int n_breaks;
    TlDir *dirs; int n_dirs, cap_dirs, last_dir;
    int n_files;            /* files written by tlparse's rules */
    int n_parser_failures;
    bool unknown_compile_id;
    StrBuf strtab;          /* raw.jsonl's string table line, built at the end */
    char *raw_body_path;    /* raw.jsonl is written after its string table: body goes here first */
    char *last_payload_file;
    const char *cur_url;    /* the record being handled: its main file (tl_layout_record) */
    int cur_number;
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
/* The compile listed under a compile_directory.json key ("[0/0]"), or NULL. */
TlCompile *tl_find_key(Tl *t, const char *key);
void tl_dir_name_of_key(const Tl *t, const TlDir *d, char *out, size_t n);
TlBreak *tl_add_break(Tl *t, const char *key, const char *metrics_url);
const char *tl_status_class(const TlCompile *c);
/* "minductor/compile_<dir>.html" */
void tl_compile_page_rel(const TlCompile *c, char *out, size_t n);
/* minductor's pages beyond tlparse's (passes, frames, provenance) and their index sections
 * (trace/tlparse_extras.c); the export-mode index (trace/tlparse_export.c). */
void tl_render_extras(Tl *t);
/* Pass pages: a graph/pass-step artifact or a pass.* chromium span of compile c; the page;
 * free. role: 'f'/'b' when the log says which graph is being compiled. */
void tl_passes_record(Tl *t, TlCompile *c, const TraceRecord *r, char role);
void tl_passes_span(TlCompile *c, const char *name, char ph, double ts);
void tl_passes_page(Tl *t, TlCompile *c);
void tl_passes_free(TlPasses *p);
/* Provenance (-i): a record of compile c; the provenance_tracking_<dir>.html pages; free. */
void tl_prov_record(Tl *t, TlCompile *c, const TraceRecord *r, char role);
void tl_prov_pages(Tl *t);
void tl_prov_free(TlProv *p);
/* Why pages (trace/tlparse_why.c): a minductor_fusion_svg / _decisions record of compile c;
 * minductor/why_<dir>.html per compile that has one; free. */
void tl_why_record(TlCompile *c, const TraceRecord *r);
void tl_why_pages(Tl *t);
void tl_why_free(TlWhy *w);
bool tl_has_why(const TlCompile *c);
/* Guards and recompiles (trace/tlparse_guards.c): a record of compile c; minductor/frame_<F>.html. */
void tl_guards_record(TlCompile *c, const TraceRecord *r);
void tl_guards_pages(Tl *t);
void tl_index_extras(Tl *t, StrBuf *b);
int tl_render_export(Tl *t, const char *log_path);
void tl_export_record(Tl *t, const TraceRecord *r);

/* Write a whole file under t->out (path relative); records failure in t->write_failed. */
void tl_write(Tl *t, const char *rel, const char *data, size_t n);
/* The same, creating the file's directories first. */
void tl_write_mkdir(Tl *t, const char *rel, const char *data, size_t n);

/* tlparse's layout (trace/tlparse_layout.c). The compile_directory.json key and directory of a
 * record: "[0/0]" / "-_0_0_0", "[0/0_1]" / "-_0_0_1", "[!0/0/0]" / "0_0_0_0", no id fields:
 * "[-/-]" / "-_-_-_-", malformed id fields: "unknown" / "unknown_<line>". */
void tl_key_dir(const TraceRecord *r, char *key, size_t kn, char *dir, size_t dn);
/* The directory entry of a key (created at the end when new). */
TlDir *tl_dir_get(Tl *t, const char *key, const char *dirname);
/* Run tlparse's parsers over one record: write the files its rules name, add them to the
 * directory entry, write payloads/<md5>.txt when no parser took the payload. Returns the path
 * (relative to t->out) of the file holding the record's payload, or NULL; *main_url gets the
 * first file made for the record (may be NULL). Strings are owned by the directory entry. */
const char *tl_layout_record(Tl *t, const TraceRecord *r, const char **main_url);
/* "✅" / "❌" / "❓" / "" for a file name (tlparse marks FX graph cache hits, misses, bypasses). */
const char *tl_cache_suffix(const char *name);
void tl_dirs_free(Tl *t);
/* compilation_metrics_<N>.html in the record's directory (tlparse's metrics page: output files
 * of the compile so far, stack, times, failure, restarts, every field). */
void tl_metrics_page(Tl *t, const TraceRecord *r, TlDir *d, const char *dir, const char *key);
/* raw.jsonl line of a record as tlparse writes it (sorted keys, compact, the glog fields and
 * payload_filename added); appended to b. trace/tlparse_rawlog.c. */
void tl_rawjsonl_line(StrBuf *b, const TraceRecord *r, const char *payload_filename);
/* raw.jsonl = string table line + the body written so far; raw.log = copy of the log. */
int tl_finish_raw(Tl *t, const char *log_path);

/* Two texts side by side (trace/side_by_side.c): a two-column table, removed lines red on the
 * left, added lines green on the right, unchanged lines on both; *nadd / *ndel (may be NULL)
 * get the counts. Texts up to ~2000 lines each are aligned line by line (LCS); longer ones
 * fall back to whole blocks. */
void tl_side_by_side(StrBuf *b, const char *left, const char *right, const char *title_l, const char *title_r,
                     int *nadd, int *ndel);
/* FX graph text: number of call nodes ("= torch.ops." lines, minductor's "= aten." too). */
int tl_count_ops(const char *text);
/* Per op: "aten.add.Tensor 3\n..." sorted by name, into b (op-count deltas). */
void tl_op_histogram(const char *text, StrBuf *b);

/* HTML of Python source with syntax classes and one <span id="L<n>"> per line (highlight.c). */
void hl_python_html(StrBuf *b, const char *src, size_t n);
/* A whole page around it (tlparse's highlighted inductor_output_code). */
void hl_python_page(StrBuf *b, const char *title, const char *src, size_t n);
/* Page header/footer with a title (escaped) and the shared CSS. */
void tl_page_begin(StrBuf *b, const char *title);
void tl_page_end(StrBuf *b);

#endif
