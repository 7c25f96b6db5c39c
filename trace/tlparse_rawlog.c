/* tlparse_rawlog.c — raw.log and raw.jsonl as tlparse writes them (lib.rs parse_path):
 *   raw.log    the log, copied;
 *   raw.jsonl  first line {"string_table": [...]} (the interned file names, null for ids never
 *              interned), then one line per envelope (not `str`, not chromium_event): the
 *              envelope with "timestamp" (ISO 8601, this year: glog has none), "thread" (the
 *              glog pid field), "pathname" (glog's file, with the leading space tlparse's regex
 *              keeps), "lineno" (glog's source line) and "payload_filename" (the file holding
 *              the payload) added, keys sorted, no spaces (serde_json's to_string of a
 *              BTreeMap). An envelope that already has one of those keys is left out, as
 *              tlparse does.
 * Numbers are printed in their shortest round-trip form (1.0 prints as 1: cJSON keeps no
 * int/float distinction). */
#define _GNU_SOURCE
#include "tlparse_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A JSON string as serde writes it: UTF-8 kept, control characters, quote and backslash
 * escaped. */
static void str_serde(StrBuf *b, const char *s) { json_str_esc(b, s, false); }

static void num_serde(StrBuf *b, double d) {
    if (!isfinite(d)) { sb_put(b, "null"); return; }
    if (d == floor(d) && fabs(d) < 9.007199254740992e15) { sb_printf(b, "%.0f", d); return; }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    sb_put(b, buf);
}

static int cmp_key(const void *a, const void *b) {
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* Compact JSON with every object's keys sorted. */
static void json_sorted(StrBuf *b, const cJSON *j) {
    if (cJSON_IsObject(j)) {
        int n = 0;
        for (const cJSON *c = j->child; c; c = c->next) n++;
        const cJSON **kids = mi_xmalloc(sizeof *kids * (size_t)(n + 1));
        n = 0;
        for (const cJSON *c = j->child; c; c = c->next) kids[n++] = c;
        qsort(kids, (size_t)n, sizeof *kids, cmp_key);
        sb_putc(b, '{');
        for (int i = 0; i < n; i++) {
            if (i) sb_putc(b, ',');
            str_serde(b, kids[i]->string);
            sb_putc(b, ':');
            json_sorted(b, kids[i]);
        }
        sb_putc(b, '}');
        free(kids);
    } else if (cJSON_IsArray(j)) {
        sb_putc(b, '[');
        for (const cJSON *c = j->child; c; c = c->next) {
            if (c != j->child) sb_putc(b, ',');
            json_sorted(b, c);
        }
        sb_putc(b, ']');
    } else if (cJSON_IsString(j)) str_serde(b, j->valuestring);
    else if (cJSON_IsNumber(j)) num_serde(b, j->valuedouble);
    else if (cJSON_IsTrue(j)) sb_put(b, "true");
    else if (cJSON_IsFalse(j)) sb_put(b, "false");
    else sb_put(b, "null");
}

void tl_rawjsonl_line(StrBuf *b, const TraceRecord *r, const char *payload_filename) {
    static const char *const added[] = {"timestamp", "thread", "pathname", "lineno", "payload_filename"};
    for (size_t i = 0; i < sizeof added / sizeof *added; i++)
        if (cJSON_GetObjectItemCaseSensitive(r->env, added[i]) && (i < 4 || payload_filename)) return;
    cJSON *e = r->env;
    /* the added fields go in, the line is printed, they come out again (the reader owns e) */
    int month = 0, day = 0, hh = 0, mm = 0, ss = 0, us = 0;
    sscanf(r->glog_time, "%2d%2d %d:%d:%d.%d", &month, &day, &hh, &mm, &ss, &us);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char ts[64], path[220];
    snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tmv.tm_year + 1900, month, day, hh, mm, ss, us);
    snprintf(path, sizeof path, " %s", r->glog_file);
    cJSON_AddItemToObject(e, "timestamp", cJSON_CreateString(ts));
    cJSON_AddItemToObject(e, "thread", cJSON_CreateNumber(r->pid));
    cJSON_AddItemToObject(e, "pathname", cJSON_CreateString(path));
    cJSON_AddItemToObject(e, "lineno", cJSON_CreateNumber(r->glog_line));
    if (payload_filename) cJSON_AddItemToObject(e, "payload_filename", cJSON_CreateString(payload_filename));
    json_sorted(b, e);
    sb_putc(b, '\n');
    for (size_t i = 0; i < sizeof added / sizeof *added; i++) cJSON_DeleteItemFromObjectCaseSensitive(e, added[i]);
}

/* Append the file at src to the open descriptor fd. */
static int copy_into(int fd, const char *src) {
    int in = open(src, O_RDONLY);
    if (in < 0) return -1;
    char buf[1 << 16];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w <= 0) { rc = -1; break; }
            off += w;
        }
        if (rc) break;
    }
    if (n < 0) rc = -1;
    close(in);
    return rc;
}

int tl_finish_raw(Tl *t, const char *log_path) {
    if (!t->raw_body_path) return 0;
    char path[1200];
    /* the string table: index -> interned name, null where none */
    StrBuf *b = &t->strtab;
    b->len = 0;
    sb_put(b, "{\"string_table\":[");
    long n = trace_reader_n_interned(t->rd);
    for (long i = 0; i < n; i++) {
        if (i) sb_putc(b, ',');
        const char *s = trace_reader_intern(t->rd, i);
        if (s) str_serde(b, s); else sb_put(b, "null");
    }
    sb_put(b, "]}\n");
    snprintf(path, sizeof path, "%s/raw.jsonl", t->out);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = fd < 0 ? -1 : 0;
    if (fd >= 0 && write(fd, b->s, b->len) != (ssize_t)b->len) rc = -1;
    if (fd >= 0 && copy_into(fd, t->raw_body_path) != 0) rc = -1;
    if (fd >= 0 && close(fd) != 0) rc = -1;
    if (rc != 0) return mi_err(t->ctx, path, 0, 0, "cannot write: %s", strerror(errno));
    unlink(t->raw_body_path);
    free(t->raw_body_path);
    t->raw_body_path = NULL;
    if (t->opt->export_mode) {      /* tlparse's export mode returns before raw.log/raw.jsonl */
        unlink(path);
        return 0;
    }
    snprintf(path, sizeof path, "%s/raw.log", t->out);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    rc = fd < 0 || copy_into(fd, log_path) != 0 ? -1 : 0;
    if (fd >= 0 && close(fd) != 0) rc = -1;
    if (rc != 0) return mi_err(t->ctx, path, 0, 0, "cannot write: %s", strerror(errno));
    return 0;
}
