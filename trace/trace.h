/* trace.h — TORCH_TRACE structured logs: write them, read them back, and turn them into a
 * tlparse-like HTML report (one log, or one directory of per-rank logs).
 *
 * The log format is PyTorch's (torch/_logging/structured.py): one glog-prefixed line
 *     V1122 18:41:45.357000 445 torch/_dynamo/convert_frame.py:276] {"dynamo_start": {...},
 *         "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "<md5>"}
 * followed, when "has_payload" is present, by the payload with every line prefixed by a tab.
 * The md5 is over the payload text (lines without the tab, joined by "\n"). The first key of
 * the JSON envelope is the event ("artifact", "chromium_event", "compilation_metrics", ...);
 * frame_id / frame_compile_id / attempt (and compiled_autograd_id) name the compile, written
 * "0/0", "0/0_1" (attempt 1), "!2/0/0" (compiled autograd 2). {"str": [filename, id]} lines
 * intern file names that dynamo_start stacks refer to by id.
 *
 * Artifacts minductor emits (the shell and the passes should use exactly these names; the
 * report renders them specially):
 *   "minductor_pass_<NN>_<pass>"        payload: FX graph text (print_readable) after pass NN
 *   "minductor_pass_<NN>_<pass>_diff"   payload: unified diff before -> after (colored)
 *   "minductor_pass_<NN>_<pass>_svg"    payload: SVG picture of the graph (shown as <img>)
 *   "minductor_graph_svg"               payload: SVG of the loaded graph
 *   "before_post_grad_graph", "inductor_post_grad_graph", "inductor_output_code" as PyTorch;
 *   "ir_pre_fusion", "ir_post_fusion" (the texts of TORCH_COMPILE_DEBUG's files of that name).
 * trace_pass_step() writes the first three in one call. NN is two digits; the shell numbers
 * them like its steps (01 = the first pass).
 *
 * Reading streams line by line: memory depends on the largest payload, not the log size. */
#ifndef TRACE_H
#define TRACE_H

#include "base/mi.h"
#include <stdio.h>

typedef struct cJSON cJSON;

/* ---------------------------------------------------------------- writer */

/* Open (truncate) a log at path; NULL + ctx->err on failure. Uses the real pid and clock. */
TraceWriter *trace_open(MiCtx *ctx, const char *path);
/* Flush and close; NULL is fine. Returns -1 if a write failed at any point. */
int trace_close(TraceWriter *tw);

/* The compile id stamped on following events; frame_id < 0 clears it (no compile id). */
void trace_set_compile_id(TraceWriter *tw, int frame_id, int frame_compile_id, int attempt);
/* Add "rank": N to every envelope (N < 0: none, the default). */
void trace_set_rank(TraceWriter *tw, int rank);
/* For tests: a fixed clock (microseconds since the epoch) and pid. now_us NULL = real clock. */
void trace_set_clock(TraceWriter *tw, uint64_t (*now_us)(void *arg), void *arg, int pid);

/* Write one event: envelope {event_key: metadata or {}} + compile id + has_payload md5, then
 * the payload lines. metadata is borrowed (not freed). file/line form the glog prefix
 * "minductor/<file>:<line>"; the macros below pass the caller's __FILE__/__LINE__. */
int trace_event_at(TraceWriter *tw, const char *file, int line, const char *event_key,
                   const cJSON *metadata, const char *payload);
/* {"artifact": {"name": name, "encoding": encoding}} + payload ("string" or "json"). */
int trace_artifact_at(TraceWriter *tw, const char *file, int line, const char *name,
                      const char *encoding, const char *payload);
/* chromium_event with payload {"name","ts"(µs),"args":{"compile_id"},"ph":"B"/"E","cat",...}.
 * cat NULL = "minductor". */
int trace_chromium_at(TraceWriter *tw, const char *file, int line, const char *name,
                      const char *cat, char ph);
/* A finished span of dur_us microseconds that ends now: a "B" event at now - dur_us and an
 * "E" event at now (for work timed before it is logged, like a pass step). */
int trace_chromium_span_at(TraceWriter *tw, const char *file, int line, const char *name,
                           const char *cat, uint64_t dur_us);
/* compilation_metrics for the current compile id: co_name, duration, fail_type/fail_reason
 * (NULL = success), restart_reason (NULL = none). extra (borrowed, may be NULL): more fields. */
int trace_compilation_metrics_at(TraceWriter *tw, const char *file, int line,
                                 const char *co_name, double duration_s, const char *fail_type,
                                 const char *fail_reason, const char *restart_reason,
                                 const cJSON *extra);
/* Intern a file name: writes {"str": [name, id]} the first time; returns the id. */
int trace_intern(TraceWriter *tw, const char *filename);
/* dynamo_start with a stack of frames (outermost first); filenames get interned. */
typedef struct TraceFrame { const char *filename, *name, *loc; int line; } TraceFrame;
int trace_dynamo_start_at(TraceWriter *tw, const char *file, int line, const TraceFrame *frames,
                          int n);
/* One pass step: artifacts minductor_pass_<NN>_<pass>[, _diff, _svg] (diff/svg may be NULL). */
int trace_pass_step_at(TraceWriter *tw, const char *file, int line, int step, const char *pass,
                       const char *graph_text, const char *diff, const char *svg);

#define trace_event(tw, key, meta, payload) trace_event_at(tw, __FILE__, __LINE__, key, meta, payload)
#define trace_artifact(tw, name, enc, payload) trace_artifact_at(tw, __FILE__, __LINE__, name, enc, payload)
#define trace_chromium_begin(tw, name, cat) trace_chromium_at(tw, __FILE__, __LINE__, name, cat, 'B')
#define trace_chromium_end(tw, name, cat) trace_chromium_at(tw, __FILE__, __LINE__, name, cat, 'E')
#define trace_chromium_span(tw, name, cat, dur_us) trace_chromium_span_at(tw, __FILE__, __LINE__, name, cat, dur_us)
#define trace_compilation_metrics(tw, co, dur, ft, fr, rr, extra) \
    trace_compilation_metrics_at(tw, __FILE__, __LINE__, co, dur, ft, fr, rr, extra)
#define trace_dynamo_start(tw, frames, n) trace_dynamo_start_at(tw, __FILE__, __LINE__, frames, n)
#define trace_pass_step(tw, step, pass, g, diff, svg) \
    trace_pass_step_at(tw, __FILE__, __LINE__, step, pass, g, diff, svg)

/* ---------------------------------------------------------------- reader */

/* What can be wrong with a line. Every problem is counted and listed (line number, kind). */
typedef enum {
    TRACE_BAD_GLOG,          /* line is neither a glog-prefixed envelope nor a payload line */
    TRACE_BAD_JSON,          /* envelope JSON does not parse / is not an object (its payload
                                lines, if any, are skipped with it) */
    TRACE_MD5_MISMATCH,      /* payload md5 differs from has_payload (record still kept) */
    TRACE_TRUNCATED_PAYLOAD, /* has_payload but no payload line follows, or the file ends
                                in the middle of the payload's last line */
    TRACE_UNKNOWN_EVENT,     /* event key not known (record still kept) */
    TRACE_STRAY_PAYLOAD,     /* payload lines after an envelope without has_payload */
    TRACE_BAD_COMPILE_ID,    /* frame_id etc. present but not integers */
    TRACE_OTHER_RANK,        /* "rank" differs from the log's rank (the first rank seen):
                                interleaved ranks; the record and its payload are skipped */
    TRACE_NKINDS
} TraceIssueKind;
const char *trace_issue_kind_name(TraceIssueKind k);   /* "bad_glog", "md5_mismatch", ... */

typedef struct TraceIssue { long line; TraceIssueKind kind; char detail[160]; } TraceIssue;

/* Known events; TRACE_EV_UNKNOWN for any other key. */
typedef enum {
    TRACE_EV_UNKNOWN, TRACE_EV_STR, TRACE_EV_DYNAMO_START, TRACE_EV_CHROMIUM, TRACE_EV_ARTIFACT,
    TRACE_EV_GRAPH,          /* dynamo_output_graph, aot_*_graph, optimize_ddp_*, ...: FX text */
    TRACE_EV_OUTPUT_CODE,    /* inductor_output_code */
    TRACE_EV_GUARDS,         /* dynamo_cpp_guards_str, dynamo_guards */
    TRACE_EV_METRICS,        /* compilation_metrics, bwd_compilation_metrics, ... */
    TRACE_EV_METRICS_RUNTIME,/* compilation_metrics_runtime, bwd_..._runtime */
    TRACE_EV_SYMBOLIC,       /* create_symbol, guard_added_fast, symbolic_shape_*, ... */
    TRACE_EV_DESCRIBE,       /* describe_storage / describe_tensor / describe_source */
    TRACE_EV_OTHER,          /* other known events without special treatment */
    TRACE_EV_NKINDS
} TraceEventKind;

/* One envelope (+ payload) as handed out by the reader; valid until the next call. */
typedef struct TraceRecord {
    long line;                  /* 1-based line of the envelope */
    TraceEventKind kind;
    const char *key;            /* event key, e.g. "artifact" */
    const char *name;           /* artifact name, else the event key */
    cJSON *env;                 /* the parsed envelope */
    cJSON *meta;                /* env[key] */
    char compile_id[64];        /* "0/0", "0/0_1", "!1/0/0"; "" when none */
    int frame_id, frame_compile_id, attempt, rank;   /* -1 when absent */
    int compiled_autograd_id;   /* -1 when absent */
    bool bad_compile_id;        /* an id field is present but not a non-negative integer */
    char glog_time[24];         /* "1122 18:41:45.352000" (month day time) */
    char glog_file[200];        /* "torch/_dynamo/utils.py" */
    int glog_line, pid;
    const char *envelope;       /* JSON text of the envelope (no prefix, no newline) */
    size_t envelope_len;
    bool has_payload, md5_ok;   /* md5_ok false only when has_payload and it did not match */
    const char *payload;        /* NUL-terminated payload text ("" when none) */
    size_t payload_len;
    long payload_lines;
} TraceRecord;

typedef struct TraceReader TraceReader;
/* Open a log for reading ("-" is not special). NULL + ctx->err when it cannot be opened. */
TraceReader *trace_reader_open(MiCtx *ctx, const char *path);
/* Next record: 1 and *r filled, 0 at end, -1 on a read error (ctx->err). Malformed lines are
 * skipped and recorded as issues; records with md5 mismatch or unknown keys are returned. */
int trace_reader_next(TraceReader *rd, TraceRecord *r);
/* Interned file name for id, or NULL. */
const char *trace_reader_intern(const TraceReader *rd, long id);
/* 1 + the largest id interned so far (0 when none). */
long trace_reader_n_interned(const TraceReader *rd);
/* Counts so far. Issues are kept in order (the first 10000; counts are always exact). */
typedef struct TraceReadStats {
    long lines, envelopes, payload_lines, records, md5_checked;
    long ok;                    /* records returned without any problem */
    long issues[TRACE_NKINDS];
    long bytes;
} TraceReadStats;
const TraceReadStats *trace_reader_stats(const TraceReader *rd);
const TraceIssue *trace_reader_issues(const TraceReader *rd, int *n);
void trace_reader_close(TraceReader *rd);
/* Total of the issue counts. */
long trace_stats_failures(const TraceReadStats *st);

/* ---------------------------------------------------------------- extraction (shell `load`) */

/* Payload of the first artifact named artifact_name (an artifact's name or an event key such
 * as "aot_inference_graph", "inductor_output_code") in compile compile_id (NULL or "" = any).
 * Returns malloc'd text; *payload_first_line (may be NULL) gets the log line of the payload's
 * first line. NULL + ctx->err naming the log when not found. */
char *trace_extract_artifact(MiCtx *ctx, const char *log_path, const char *compile_id,
                             const char *artifact_name, int *payload_first_line);
/* The same for the nth (1-based) artifact of that name in the compile: a training compile
 * logs before_post_grad_graph twice, the forward's then the backward's. */
char *trace_extract_artifact_nth(MiCtx *ctx, const char *log_path, const char *compile_id,
                                 const char *artifact_name, int nth, int *payload_first_line);

typedef struct TraceCompileInfo {
    char id[64];
    int n_artifacts;
    char **artifacts;           /* names in log order (artifact name or event key) */
    char *roles;                /* per artifact, what the log says it belongs to: 'f' forward,
                                   'b' backward, 'j' joint, 0 not said (set only for compiles
                                   with a backward; see trace_extract.c) */
    bool has_metrics, failed, restarted;
    char status[256];           /* "ok", "failed: TypeError: ...", "restarted: ...", "no metrics" */
    /* what the log says about CUDA graphs for this compile (trace/cudagraph_info.c) */
    int cg_requested;           /* fx_kwargs[cudagraphs] in the FX cache key: -1 unknown, 0, 1 */
    char cg_skip_reason[256];   /* cudagraph_skip_reason of the metrics, "" when none */
    double cg_runtime_us; int n_cg_runtime;   /* runtime_cudagraphify_time_us, summed */
    int n_cg_events;            /* chromium events about cudagraphs (CUDAGraphNode.record, ...) */
    char cg_event_names[200];   /* their distinct names, ", "-separated */
} TraceCompileInfo;
typedef struct TraceCompileList {
    int n; TraceCompileInfo *c;
    long n_issues;              /* malformed/truncated lines the reader skipped or flagged */
    TraceIssue first_issue;     /* the first of them (line 0 when none) */
} TraceCompileList;
/* Every compile id of a log, in first-seen order, with its payload-bearing artifacts. */
int trace_list_compiles(MiCtx *ctx, const char *log_path, TraceCompileList *out);
void trace_compile_list_free(TraceCompileList *l);
/* An FX graph artifact (dynamo_output_graph, aot_*_graph, before_post_grad_graph, ...)? */
bool trace_is_graph_name(const char *name);
/* The graph artifacts of a compile as `load LOG ID SPEC` names them, in log order: "NAME", or
 * "NAME#N" when the name repeats (N-th occurrence); with_role appends " (forward)" /
 * " (backward)" / " (joint)" where the log says. NULL-terminated, malloc'd (free each). */
char **trace_graph_specs(const TraceCompileInfo *c, bool with_role);
/* Resolve SPEC for compile c: "NAME", "NAME#N", "forward" / "backward" (the first of
 * before_post_grad_graph, aot_forward/backward_graph, inductor_post_grad_graph the log marks
 * so). Sets *name (one of c->artifacts) and *nth; false (and *name NULL) when none matches. */
bool trace_resolve_graph_spec(const TraceCompileInfo *c, const char *spec, const char **name, int *nth);
/* The graph Inductor's post-grad passes start from (trace/prepass.c). On entry *name, *nth name
 * the artifact picked for compile c (before_post_grad_graph, an aot graph, ...). When it is a
 * before_post_grad_graph whose payload equals the inductor_post_grad_graph after it (torch
 * 2.11 logs it after view_to_reshape and the example inputs' meta propagation), *name and *nth
 * change to aot_forward_graph / aot_backward_graph / after_joint_graph / aot_inference_graph
 * and note (size nnote) says so; otherwise note is "". *runnable_nth gets the fx_graph_runnable
 * occurrence holding that compilation's example inputs (0: none). -1 with ctx error when a
 * payload cannot be read. */
int trace_prepass_graph(MiCtx *ctx, const char *log, const TraceCompileInfo *c, const char **name, int *nth,
                        int *runnable_nth, char *note, size_t nnote);
/* The fx_graph_runnable occurrence (1-based; 0 none) of the Inductor compilation the nth
 * artifact `name` of c belongs to: its example inputs. */
int trace_runnable_of(const TraceCompileInfo *c, const char *name, int nth);
/* One line about CUDA graphs for a compile ("requested; not skipped; runtime cudagraphify
 * 12073 us over 2 records; 2 cudagraph events (a, b)"), or "" when the log says nothing beyond
 * "not requested". Returns buf. */
const char *trace_cudagraph_summary(const TraceCompileInfo *c, char *buf, size_t n);

/* ---------------------------------------------------------------- tlparse report */

typedef struct TlparseOptions {
    bool no_artifact_files;     /* only index/raw/chromium (faster; for benchmarks) */
    int max_failures_listed;    /* 0 = 10000 */
    bool plain_text;            /* tlparse -p: inductor_output_code as .txt, not highlighted HTML */
    bool export_mode;           /* tlparse -e: torch.export logs (exported_program + export index) */
    bool provenance;            /* tlparse -i: provenance_tracking_<dir>.html for every directory */
    const char *custom_header_html;   /* tlparse --custom-header-html: put verbatim atop index.html */
} TlparseOptions;

typedef struct TlparseSummary {
    TraceReadStats stats;
    int n_compiles, n_failed, n_restarted, n_artifacts, n_chromium_events;
    int rank;                   /* -1 when the log has no rank */
    double seconds;
    int n_files;                /* files written as tlparse names them (not counting minductor/) */
    int n_parser_failures;      /* tlparse's fail_parser + fail_dynamo_guards_json: a payload a
                                   parser could not turn into its file (bad guards JSON, unknown
                                   artifact encoding); it went to payloads/ instead */
    bool unknown_compile_id;    /* some record's compile id fields were malformed (the "unknown"
                                   entry of compile_directory.json; tlparse --strict-compile-id) */
} TlparseSummary;
/* tlparse --strict: the problems that make the real tlparse fail under --strict (glog, JSON,
 * md5/truncation, stray payload lines, other rank, parser failures); 0 = none. */
long tlparse_strict_failures(const TlparseSummary *s);

/* Parse log_path and write out_dir/ (created): index.html, raw.jsonl, chromium_events.json,
 * failures_and_restarts.html, compile_directory.json and one directory per compile id with
 * every artifact as a file + an HTML page. 0 on success (even with malformed lines: those are
 * listed in the report and counted in out->stats), -1 + ctx->err when it cannot read/write. */
int tlparse_run(MiCtx *ctx, const char *log_path, const char *out_dir, const TlparseOptions *opt,
                TlparseSummary *out);

typedef struct TlparseRankSummary {
    int rank;
    char log[1024];
    TlparseSummary s;
    int n_collective_graphs;
} TlparseRankSummary;
typedef struct TlparseMultiSummary {
    int n_ranks;
    TlparseRankSummary *ranks;
    int n_divergent_compiles;   /* compile ids not present on every rank */
    int n_collective_mismatches;/* compile ids whose collective sequences differ across ranks */
    int n_failure_mismatches;   /* compile ids failing on some ranks only */
    int n_recompile_mismatches; /* compile ids recompiled for different reasons on different ranks
                                   (the ranks saw different inputs: shapes diverge) */
} TlparseMultiSummary;
/* dir holds dedicated_log_torch_trace_rank_<N>_*.log files: parse them in parallel (one thread
 * per rank, at most 8 at once), write out_dir/rank_<N>/ reports and out_dir/index.html lining
 * the ranks up. out may be NULL; free with tlparse_multi_summary_free. */
int tlparse_all_ranks(MiCtx *ctx, const char *dir, const char *out_dir, const TlparseOptions *opt,
                      TlparseMultiSummary *out);
void tlparse_multi_summary_free(TlparseMultiSummary *s);

/* Compare two logs (two runs of one program, two sessions): compile ids aligned, per compile
 * the status, time, graphs (op counts, the post-grad graphs side by side), pass times and
 * kernels. Writes out_dir/compare.html (out_dir created) when out_dir is not NULL; returns the
 * text summary (malloc'd), NULL + ctx->err when a log cannot be read. trace/tlparse_compare.c */
char *tlparse_compare(MiCtx *ctx, const char *log_a, const char *log_b, const char *out_dir);

#endif
