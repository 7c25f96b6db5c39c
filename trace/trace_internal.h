/* trace_internal.h — helpers shared by the files of trace/ (not part of the public API):
 * Python-style JSON printing, md5 hex digests, HTML escaping, paths and compile-id helpers. */
#ifndef TRACE_INTERNAL_H
#define TRACE_INTERNAL_H

#include "trace.h"
#include <cJSON.h>

/* Append j as Python's json.dumps would (", " and ": " separators, ensure_ascii). */
void json_dump_py(StrBuf *b, const cJSON *j);
/* Append s as a JSON string literal (with quotes), ensure_ascii like Python. */
void json_str_py(StrBuf *b, const char *s);
/* The same, ensure_ascii or not (serde_json keeps DEL and UTF-8 as they are). */
void json_str_esc(StrBuf *b, const char *s, bool ensure_ascii);

/* md5 of data as 32 lowercase hex digits + NUL into hex[33]. */
void md5_hex(const char *data, size_t n, char hex[33]);

/* HTML escaping of text (&<>"') appended to b, or written to f. */
void html_esc(StrBuf *b, const char *s);
void html_escn(StrBuf *b, const char *s, size_t n);
void html_esc_file(FILE *f, const char *s, size_t n);

/* mkdir -p; 0 or -1 + ctx->err. */
int mkdir_p(MiCtx *ctx, const char *path);
/* "0/0_1" -> "-_0_0_1" (tlparse's directory name), "" -> "unknown". */
void compile_id_dirname(const char *cid, char *out, size_t n);
/* Safe file-name form of an artifact name (letters, digits, ._- kept). */
void safe_filename(const char *name, char *out, size_t n);

/* compilation_metrics -> status text "ok" / "failed: T: R" / "restarted: R" (trace_extract.c);
 * attempt is the stamped attempt: earlier attempts are the restarted ones. */
void trace_metrics_status(const cJSON *m, int attempt, bool *failed, bool *restarted, char *status, size_t n);
void trace_restart_reason(const cJSON *m, int i, char *status, size_t n);
void trace_attempt_id(const char *cid, int attempt, char *out, size_t n);
/* CUDA graph facts per compile for the compile listing (trace/cudagraph_info.c). */
bool trace_cudagraph_compile_id(const TraceRecord *r, char *id, size_t n);
void trace_cudagraph_note(const TraceRecord *r, TraceCompileInfo *c);

/* Forward/backward attribution of a compile's artifacts from its chromium events (PyTorch
 * compiles a training graph's forward inside fw_compiler_base and its backward inside
 * entire_backward_compile / bw_compiler; each inductor compile is an "inductor_compile" span
 * whose end says is_backward). trace_extract.c; shared by `load LOG` and the report. */
typedef struct TraceRoleState { char cur; int span; bool in_span; } TraceRoleState;
/* Role of an artifact named `name` logged now: aot_forward/backward/joint_graph by name, else
 * the enclosing compiler span's ('f', 'b' or 0). */
char trace_role_initial(const char *name, const TraceRoleState *st);
/* A chromium event of the compile (parsed payload) with n artifacts listed so far. When an
 * inductor_compile span ends with is_backward, returns 'b' or 'f' and *from gets the first
 * artifact index inside the span (those without a role by name get it); else 0. */
char trace_role_event(TraceRoleState *st, const cJSON *ev, int n_artifacts, int *from);
/* Might this chromium payload change roles? (cheap text test before parsing) */
bool trace_role_relevant(const char *payload, size_t n);

/* Is this a collective op name (_c10d_functional.*, wait_tensor)? */
bool is_collective_op(const char *s, size_t n);
/* Collective ops in an FX graph text, in order, one per line "op" into b; returns count. */
int collect_collectives(const char *text, StrBuf *b);

/* Background file writer (file_queue.c): put() copies the bytes; finish() drains, joins and
 * frees, returning -1 with the first error text in err when a write failed. */
typedef struct FileQueue FileQueue;
FileQueue *fq_new(size_t max_bytes);
void fq_put(FileQueue *q, const char *path, const char *data, size_t n);
int fq_finish(FileQueue *q, char *err, size_t errn);

#endif
