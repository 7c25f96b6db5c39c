/* log_reader.c — streaming reader of TORCH_TRACE logs. Reads line by line (getline, one reused
 * buffer), parses only envelope lines as JSON (payload lines start with a tab and are only
 * collected and hashed), checks each payload's md5, classifies the event key through a table,
 * and records every malformed line as an issue (line number + kind) instead of stopping.
 * tlparse.c, trace_extract.c and multirank.c are built on it. */
#define _GNU_SOURCE
#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define MAX_ISSUES 10000

struct TraceReader {
    MiCtx *ctx;
    FILE *f;
    char path[512];
    char *lb; size_t lbcap; ssize_t lblen;     /* lookahead line */
    bool pending;                             /* lb holds an unprocessed line */
    char *eb; size_t ebcap;                   /* envelope line of the current record */
    long lineno;                              /* line number of lb */
    bool last_no_newline;                     /* the line just read ended at EOF without \n */
    StrBuf payload;
    cJSON *env;
    char **interned; long n_interned;
    TraceReadStats st;
    TraceIssue *issues; int n_issues;
    int rank;                                 /* the log's rank: the first one seen, -1 before */
};

static const char *const issue_names[TRACE_NKINDS] = {
    "bad_glog", "bad_json", "md5_mismatch", "truncated_payload", "unknown_event",
    "stray_payload", "bad_compile_id", "other_rank",
};

const char *trace_issue_kind_name(TraceIssueKind k) {
    return (unsigned)k < TRACE_NKINDS ? issue_names[k] : "?";
}

long trace_stats_failures(const TraceReadStats *st) {
    long n = 0;
    for (int i = 0; i < TRACE_NKINDS; i++) n += st->issues[i];
    return n;
}

/* The table of known event keys. */
static const struct { const char *key; TraceEventKind kind; } event_table[] = {
    {"str", TRACE_EV_STR},
    {"dynamo_start", TRACE_EV_DYNAMO_START},
    {"chromium_event", TRACE_EV_CHROMIUM},
    {"artifact", TRACE_EV_ARTIFACT},
    {"dynamo_output_graph", TRACE_EV_GRAPH},
    {"aot_inference_graph", TRACE_EV_GRAPH},
    {"aot_joint_graph", TRACE_EV_GRAPH},
    {"aot_forward_graph", TRACE_EV_GRAPH},
    {"aot_backward_graph", TRACE_EV_GRAPH},
    {"inductor_pre_grad_graph", TRACE_EV_GRAPH},
    {"inductor_post_grad_graph", TRACE_EV_GRAPH},
    {"optimize_ddp_split_graph", TRACE_EV_GRAPH},
    {"optimize_ddp_split_child", TRACE_EV_GRAPH},
    {"compiled_autograd_graph", TRACE_EV_GRAPH},
    {"graph_dump", TRACE_EV_GRAPH},
    {"inductor_output_code", TRACE_EV_OUTPUT_CODE},
    {"dynamo_cpp_guards_str", TRACE_EV_GUARDS},
    {"dynamo_guards", TRACE_EV_GUARDS},
    {"compilation_metrics", TRACE_EV_METRICS},
    {"bwd_compilation_metrics", TRACE_EV_METRICS},
    {"aot_autograd_backward_compilation_metrics", TRACE_EV_METRICS},
    {"compilation_metrics_runtime", TRACE_EV_METRICS_RUNTIME},
    {"bwd_compilation_metrics_runtime", TRACE_EV_METRICS_RUNTIME},
    {"create_symbol", TRACE_EV_SYMBOLIC},
    {"create_unbacked_symbol", TRACE_EV_SYMBOLIC},
    {"unbacked_symbol", TRACE_EV_SYMBOLIC},
    {"guard_added", TRACE_EV_SYMBOLIC},
    {"guard_added_fast", TRACE_EV_SYMBOLIC},
    {"symbolic_shape_specialization", TRACE_EV_SYMBOLIC},
    {"propagate_real_tensors", TRACE_EV_SYMBOLIC},
    {"propagate_real_tensors_provenance", TRACE_EV_SYMBOLIC},
    {"expression_created", TRACE_EV_SYMBOLIC},
    {"sym_expr_info", TRACE_EV_SYMBOLIC},
    {"describe_storage", TRACE_EV_DESCRIBE},
    {"describe_tensor", TRACE_EV_DESCRIBE},
    {"describe_source", TRACE_EV_DESCRIBE},
    {"missing_fake_kernel", TRACE_EV_OTHER},
    {"mismatched_fake_kernel", TRACE_EV_OTHER},
    {"exported_program", TRACE_EV_OTHER},
    {"link", TRACE_EV_OTHER},
    {"dump_file", TRACE_EV_OTHER},
    {"guard_failure", TRACE_EV_OTHER},
};

static TraceEventKind classify(const char *key) {
    for (size_t i = 0; i < sizeof event_table / sizeof event_table[0]; i++)
        if (strcmp(event_table[i].key, key) == 0) return event_table[i].kind;
    return TRACE_EV_UNKNOWN;
}

static void add_issue(TraceReader *rd, long line, TraceIssueKind k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_issue(TraceReader *rd, long line, TraceIssueKind k, const char *fmt, ...) {
    rd->st.issues[k]++;
    if (rd->n_issues >= MAX_ISSUES) return;
    if (!rd->issues) rd->issues = mi_xcalloc(64, sizeof *rd->issues);
    else if ((rd->n_issues & (rd->n_issues - 1)) == 0 && rd->n_issues >= 64)
        rd->issues = mi_xrealloc(rd->issues, sizeof *rd->issues * (size_t)rd->n_issues * 2);
    TraceIssue *is = &rd->issues[rd->n_issues++];
    is->line = line;
    is->kind = k;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(is->detail, sizeof is->detail, fmt, ap);
    va_end(ap);
}

TraceReader *trace_reader_open(MiCtx *ctx, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) { mi_err(ctx, path, 0, 0, "cannot open trace log: %s", strerror(errno)); return NULL; }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    TraceReader *rd = mi_xcalloc(1, sizeof *rd);
    rd->ctx = ctx;
    rd->f = f;
    rd->rank = -1;
    snprintf(rd->path, sizeof rd->path, "%s", path);
    sb_init(&rd->payload);
    return rd;
}

void trace_reader_close(TraceReader *rd) {
    if (!rd) return;
    fclose(rd->f);
    free(rd->lb);
    free(rd->eb);
    sb_free(&rd->payload);
    cJSON_Delete(rd->env);
    for (long i = 0; i < rd->n_interned; i++) free(rd->interned[i]);
    free(rd->interned);
    free(rd->issues);
    free(rd);
}

const char *trace_reader_intern(const TraceReader *rd, long id) {
    return id >= 0 && id < rd->n_interned ? rd->interned[id] : NULL;
}
long trace_reader_n_interned(const TraceReader *rd) { return rd->n_interned; }
const TraceReadStats *trace_reader_stats(const TraceReader *rd) { return &rd->st; }
const TraceIssue *trace_reader_issues(const TraceReader *rd, int *n) {
    *n = rd->n_issues;
    return rd->issues;
}

/* Read the next non-empty line into lb (strip the newline). 1 ok, 0 EOF, -1 error. */
static int read_line(TraceReader *rd) {
    if (rd->pending) return 1;
    for (;;) {
        errno = 0;
        ssize_t n = getline(&rd->lb, &rd->lbcap, rd->f);
        if (n < 0) {
            if (ferror(rd->f)) return mi_err(rd->ctx, rd->path, (int)rd->lineno, 0, "read error: %s", strerror(errno));
            return 0;
        }
        rd->lineno++;
        rd->st.lines++;
        rd->st.bytes += n;
        rd->last_no_newline = !(n > 0 && rd->lb[n - 1] == '\n');
        if (n > 0 && rd->lb[n - 1] == '\n') rd->lb[--n] = 0;
        if (n > 0 && rd->lb[n - 1] == '\r') rd->lb[--n] = 0;
        if (n == 0) continue;       /* blank lines are never valid; skip them like tlparse */
        rd->lblen = n;
        rd->pending = true;
        return 1;
    }
}

static bool isdig(char c) { return c >= '0' && c <= '9'; }

/* Parse "V1122 18:41:45.352000 445 path/file.py:123] " — returns the offset of the JSON. */
static long parse_glog(const char *s, long n, TraceRecord *r) {
    if (n < 30) return -1;
    if (!strchr("VIWEC", s[0])) return -1;
    for (int i = 1; i <= 4; i++) if (!isdig(s[i])) return -1;
    if (s[5] != ' ') return -1;
    static const char pat[] = "dd:dd:dd.dddddd";
    for (int i = 0; i < 15; i++) {
        char c = s[6 + i];
        if (pat[i] == 'd' ? !isdig(c) : c != pat[i]) return -1;
    }
    if (s[21] != ' ') return -1;
    memcpy(r->glog_time, s + 1, 20);
    r->glog_time[20] = 0;
    long i = 22;
    while (i < n && s[i] == ' ') i++;
    long pid = 0, st = i;
    while (i < n && isdig(s[i])) pid = pid * 10 + (s[i++] - '0');
    if (i == st || i >= n || s[i] != ' ') return -1;
    r->pid = (int)pid;
    i++;
    /* path up to "] " ; the line number is the digits before it after the last ':' */
    const char *close = memmem(s + i, (size_t)(n - i), "] ", 2);
    if (!close) return -1;
    long ce = close - s;
    long colon = ce - 1;
    while (colon > i && isdig(s[colon])) colon--;
    if (colon <= i || s[colon] != ':' || colon == ce - 1) return -1;
    long plen = colon - i;
    if (plen >= (long)sizeof r->glog_file) plen = sizeof r->glog_file - 1;
    memcpy(r->glog_file, s + i, (size_t)plen);
    r->glog_file[plen] = 0;
    r->glog_line = atoi(s + colon + 1);
    return ce + 2;
}

static bool is_id_key(const char *k) {
    return !strcmp(k, "frame_id") || !strcmp(k, "frame_compile_id") || !strcmp(k, "attempt") ||
           !strcmp(k, "compiled_autograd_id") || !strcmp(k, "has_payload") || !strcmp(k, "rank");
}

static int int_field(cJSON *env, const char *k, bool *bad) {
    cJSON *j = cJSON_GetObjectItemCaseSensitive(env, k);
    if (!j || cJSON_IsNull(j)) return -1;
    if (!cJSON_IsNumber(j) || j->valuedouble < 0) { *bad = true; return -1; }
    return (int)j->valuedouble;
}

/* Skip payload lines (after a bad line); returns how many. */
static long skip_payload(TraceReader *rd) {
    long n = 0;
    while (read_line(rd) == 1 && rd->lb[0] == '\t') { rd->pending = false; n++; rd->st.payload_lines++; }
    return n;
}

/* Python's json.dumps writes NaN / Infinity / -Infinity, which cJSON rejects: copy the text
 * with those tokens (outside strings) turned into null. Returns NULL when there are none. */
static char *python_nonfinite_to_null(const char *s, size_t n) {
    if (!memmem(s, n, "NaN", 3) && !memmem(s, n, "Infinity", 8)) return NULL;
    StrBuf b;
    sb_init(&b);
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            sb_putc(&b, c);
            if (c == '\\' && i + 1 < n) sb_putc(&b, s[++i]);
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        if (c == 'N' && i + 3 <= n && !memcmp(s + i, "NaN", 3)) { sb_put(&b, "null"); i += 2; continue; }
        if (c == '-' && i + 9 <= n && !memcmp(s + i, "-Infinity", 9)) { sb_put(&b, "null"); i += 8; continue; }
        if (c == 'I' && i + 8 <= n && !memcmp(s + i, "Infinity", 8)) { sb_put(&b, "null"); i += 7; continue; }
        sb_putc(&b, c);
    }
    return sb_take(&b);
}

static bool is_hex32(const char *s) {
    if (!s || strlen(s) != 32) return false;
    for (int i = 0; i < 32; i++)
        if (!(isdig(s[i]) || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F'))) return false;
    return true;
}

int trace_reader_next(TraceReader *rd, TraceRecord *r) {
    for (;;) {
        int rc = read_line(rd);
        if (rc <= 0) return rc;
        rd->pending = false;
        long line = rd->lineno;
        if (rd->lb[0] == '\t') {
            rd->st.payload_lines++;
            long extra = skip_payload(rd);
            add_issue(rd, line, TRACE_STRAY_PAYLOAD, "%ld payload line(s) without an envelope that has has_payload",
                      extra + 1);
            continue;
        }
        memset(r, 0, sizeof *r);
        long off = parse_glog(rd->lb, rd->lblen, r);
        if (off < 0) {
            add_issue(rd, line, TRACE_BAD_GLOG, "not a glog-prefixed line: %.60s", rd->lb);
            skip_payload(rd);
            continue;
        }
        rd->st.envelopes++;
        /* keep the envelope text while payload lines are read into lb */
        char *t = rd->eb; size_t tc = rd->ebcap;
        rd->eb = rd->lb; rd->ebcap = rd->lbcap;
        rd->lb = t; rd->lbcap = tc;
        const char *js = rd->eb + off;
        size_t jlen = (size_t)(rd->lblen - off);
        cJSON_Delete(rd->env);
        const char *ep = NULL;      /* error position (thread-safe, unlike cJSON_GetErrorPtr) */
        /* the line buffer is NUL-terminated: including the NUL makes cJSON reject trailing junk */
        rd->env = cJSON_ParseWithLengthOpts(js, jlen + 1, &ep, 1);
        if (!rd->env) {
            char *fixed = python_nonfinite_to_null(js, jlen);
            if (fixed) {
                const char *ep2 = NULL;
                rd->env = cJSON_ParseWithLengthOpts(fixed, strlen(fixed) + 1, &ep2, 1);
                free(fixed);
            }
        }
        if (!rd->env || !cJSON_IsObject(rd->env)) {
            long col = (rd->env == NULL && ep && ep >= js && ep <= js + jlen) ? (long)(ep - rd->eb) + 1 : 0;
            cJSON_Delete(rd->env);
            rd->env = NULL;
            long skipped = skip_payload(rd);
            add_issue(rd, line, TRACE_BAD_JSON, "envelope is not a JSON object%s%ld%s",
                      col ? " (error near column " : "", col, col ? ")" : "");
            (void)skipped;
            continue;
        }
        cJSON *env = rd->env;
        cJSON *keyj = NULL;
        for (cJSON *c = env->child; c; c = c->next)
            if (c->string && !is_id_key(c->string)) { keyj = c; break; }
        r->line = line;
        r->env = env;
        r->meta = keyj;
        r->key = keyj ? keyj->string : "";
        r->kind = keyj ? classify(keyj->string) : TRACE_EV_UNKNOWN;
        r->name = r->key;
        if (r->kind == TRACE_EV_ARTIFACT) {
            cJSON *nm = cJSON_GetObjectItemCaseSensitive(keyj, "name");
            if (cJSON_IsString(nm)) r->name = nm->valuestring;
        }
        r->envelope = js;
        r->envelope_len = jlen;
        bool bad = false;
        r->frame_id = int_field(env, "frame_id", &bad);
        r->frame_compile_id = int_field(env, "frame_compile_id", &bad);
        r->attempt = int_field(env, "attempt", &bad);
        bool bad_rank = false;     /* a malformed rank is treated as no rank */
        r->rank = int_field(env, "rank", &bad_rank);
        int ca = int_field(env, "compiled_autograd_id", &bad);
        r->compiled_autograd_id = ca;
        r->bad_compile_id = bad;
        if (bad) add_issue(rd, line, TRACE_BAD_COMPILE_ID, "compile id fields are not non-negative integers");
        if (r->rank >= 0 && rd->rank < 0) rd->rank = r->rank;
        if (r->rank >= 0 && r->rank != rd->rank) {
            /* another process wrote into this log: its compile ids would mix with ours */
            skip_payload(rd);
            add_issue(rd, line, TRACE_OTHER_RANK, "%s of rank %d in the log of rank %d (interleaved ranks; "
                      "give each rank its own log and use --all-ranks)", r->name, r->rank, rd->rank);
            continue;
        }
        if (!bad && r->frame_id >= 0 && r->frame_compile_id >= 0) {
            int att = r->attempt < 0 ? 0 : r->attempt;
            char base[40];
            if (att) snprintf(base, sizeof base, "%d/%d_%d", r->frame_id, r->frame_compile_id, att);
            else snprintf(base, sizeof base, "%d/%d", r->frame_id, r->frame_compile_id);
            if (ca >= 0) snprintf(r->compile_id, sizeof r->compile_id, "!%d/%s", ca, base);
            else snprintf(r->compile_id, sizeof r->compile_id, "%s", base);
        } else if (!bad && ca >= 0) {
            snprintf(r->compile_id, sizeof r->compile_id, "!%d", ca);
        }
        long issues_before = trace_stats_failures(&rd->st);
        /* payload */
        rd->payload.len = 0;
        if (!rd->payload.s) sb_putc(&rd->payload, 0), rd->payload.len = 0;
        rd->payload.s[0] = 0;
        cJSON *hp = cJSON_GetObjectItemCaseSensitive(env, "has_payload");
        r->has_payload = hp != NULL;
        r->md5_ok = true;
        long np = 0;
        bool cut = false;
        while (read_line(rd) == 1 && rd->lb[0] == '\t') {
            rd->pending = false;
            if (np) sb_putc(&rd->payload, '\n');
            sb_putn(&rd->payload, rd->lb + 1, (size_t)rd->lblen - 1);
            np++;
            cut = rd->last_no_newline;
        }
        rd->st.payload_lines += np;
        if (!rd->payload.s) sb_putc(&rd->payload, 0), rd->payload.len = 0;
        r->payload = rd->payload.s;
        r->payload_len = rd->payload.len;
        r->payload_lines = np;
        if (hp) {
            const char *want = cJSON_IsString(hp) ? hp->valuestring : NULL;
            if (np == 0) {
                r->md5_ok = false;
                add_issue(rd, line, TRACE_TRUNCATED_PAYLOAD, "%s: has_payload but no payload lines follow", r->name);
            } else {
                char hex[33];
                md5_hex(rd->payload.s, rd->payload.len, hex);
                rd->st.md5_checked++;
                if (!is_hex32(want) || strcasecmp(hex, want) != 0) {
                    r->md5_ok = false;
                    if (cut)
                        add_issue(rd, line, TRACE_TRUNCATED_PAYLOAD, "%s: log ends inside the payload", r->name);
                    else
                        add_issue(rd, line, TRACE_MD5_MISMATCH, "%s: payload md5 %s, has_payload %.40s", r->name,
                                  hex, want ? want : "(not a string)");
                }
            }
        } else if (np > 0) {
            add_issue(rd, line + 1, TRACE_STRAY_PAYLOAD, "%ld payload line(s) after %s, which has no has_payload", np,
                      r->key);
        }
        if (r->kind == TRACE_EV_UNKNOWN)
            add_issue(rd, line, TRACE_UNKNOWN_EVENT, "unknown event type \"%.60s\"", r->key);
        if (r->kind == TRACE_EV_STR && cJSON_IsArray(keyj)) {
            cJSON *s = cJSON_GetArrayItem(keyj, 0), *id = cJSON_GetArrayItem(keyj, 1);
            if (cJSON_IsString(s) && cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble < 1e6) {
                long k = (long)id->valuedouble;
                if (k >= rd->n_interned) {
                    rd->interned = mi_xrealloc(rd->interned, sizeof(char *) * (size_t)(k + 1));
                    for (long i = rd->n_interned; i <= k; i++) rd->interned[i] = NULL;
                    rd->n_interned = k + 1;
                }
                free(rd->interned[k]);
                rd->interned[k] = mi_xstrdup(s->valuestring);
            }
        }
        rd->st.records++;
        if (trace_stats_failures(&rd->st) == issues_before) rd->st.ok++;
        return 1;
    }
}
