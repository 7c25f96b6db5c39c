/* trace_util.c — small helpers for trace/: Python-style JSON printing (the writer must produce
 * envelopes byte-compatible with PyTorch's json.dumps), md5 digests via libmd, HTML escaping,
 * directory creation and the names tlparse gives to compile directories. */
#define _GNU_SOURCE
#include "trace_internal.h"

#include <errno.h>
#include <math.h>
#include <md5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void put_u16(StrBuf *b, unsigned u) { sb_printf(b, "\\u%04x", u & 0xffff); }

/* The two JSON writers' string rules differ only past ASCII: Python's json.dumps
 * (ensure_ascii) escapes DEL and every non-ASCII code point as \uXXXX (UTF-16 surrogates past
 * U+FFFF, U+FFFD for an invalid byte); serde_json (tlparse's raw.jsonl) keeps them as they are.
 * Both escape the quote, the backslash and the control characters (\n \r \t \b \f by name).
 * Example: "a\u00e9" with ensure_ascii is "a\\u00e9", without it "a\u00e9". */
void json_str_esc(StrBuf *b, const char *s, bool ensure_ascii) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    sb_putc(b, '"');
    while (*p) {
        unsigned c = *p;
        if (c == '"') sb_put(b, "\\\"");
        else if (c == '\\') sb_put(b, "\\\\");
        else if (c == '\n') sb_put(b, "\\n");
        else if (c == '\r') sb_put(b, "\\r");
        else if (c == '\t') sb_put(b, "\\t");
        else if (c == '\b') sb_put(b, "\\b");
        else if (c == '\f') sb_put(b, "\\f");
        else if (c < 0x20 || (c == 0x7f && ensure_ascii)) put_u16(b, c);
        else if (c < 0x80 || !ensure_ascii) { sb_putc(b, (char)c); p++; continue; }
        else {
            /* decode UTF-8; invalid bytes become U+FFFD */
            unsigned cp = 0xfffd; int len = 1;
            if ((c & 0xe0) == 0xc0 && (p[1] & 0xc0) == 0x80) { cp = ((c & 0x1f) << 6) | (p[1] & 0x3f); len = 2; }
            else if ((c & 0xf0) == 0xe0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80) {
                cp = ((c & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f); len = 3;
            } else if ((c & 0xf8) == 0xf0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 &&
                       (p[3] & 0xc0) == 0x80) {
                cp = ((c & 0x07) << 18) | ((p[1] & 0x3f) << 12) | ((p[2] & 0x3f) << 6) | (p[3] & 0x3f);
                len = 4;
            }
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u16(b, 0xd800 + (cp >> 10));
                put_u16(b, 0xdc00 + (cp & 0x3ff));
            } else put_u16(b, cp);
            p += len;
            continue;
        }
        p++;
    }
    sb_putc(b, '"');
}

void json_str_py(StrBuf *b, const char *s) { json_str_esc(b, s, true); }

static void num_py(StrBuf *b, double d) {
    if (isnan(d)) { sb_put(b, "NaN"); return; }
    if (isinf(d)) { sb_put(b, d > 0 ? "Infinity" : "-Infinity"); return; }
    if (d == floor(d) && fabs(d) < 9.007199254740992e15) { sb_printf(b, "%.0f", d); return; }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {     /* shortest repr that round-trips */
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    sb_put(b, buf);
}

void json_dump_py(StrBuf *b, const cJSON *j) {
    if (!j) { sb_put(b, "null"); return; }
    switch (j->type & 0xff) {
    case cJSON_False: sb_put(b, "false"); break;
    case cJSON_True: sb_put(b, "true"); break;
    case cJSON_NULL: sb_put(b, "null"); break;
    case cJSON_Number: num_py(b, j->valuedouble); break;
    case cJSON_String: json_str_py(b, j->valuestring); break;
    case cJSON_Raw: sb_put(b, j->valuestring ? j->valuestring : ""); break;
    case cJSON_Array: {
        sb_putc(b, '[');
        for (const cJSON *c = j->child; c; c = c->next) {
            json_dump_py(b, c);
            if (c->next) sb_put(b, ", ");
        }
        sb_putc(b, ']');
        break;
    }
    case cJSON_Object: {
        sb_putc(b, '{');
        for (const cJSON *c = j->child; c; c = c->next) {
            json_str_py(b, c->string);
            sb_put(b, ": ");
            json_dump_py(b, c);
            if (c->next) sb_put(b, ", ");
        }
        sb_putc(b, '}');
        break;
    }
    default: sb_put(b, "null");
    }
}

void md5_hex(const char *data, size_t n, char hex[33]) {
    MD5_CTX m;
    uint8_t d[16];
    MD5Init(&m);
    MD5Update(&m, (const uint8_t *)data, n);
    MD5Final(d, &m);
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) { hex[2 * i] = hx[d[i] >> 4]; hex[2 * i + 1] = hx[d[i] & 15]; }
    hex[32] = 0;
}

/* 1 for the bytes HTML escaping replaces */
static const unsigned char html_special[256] = {['&'] = 1, ['<'] = 1, ['>'] = 1, ['"'] = 1, ['\''] = 1};

static const char *html_rep(char c) {
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    default: return "&#39;";
    }
}

void html_escn(StrBuf *b, const char *s, size_t n) {
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (!html_special[(unsigned char)s[i]]) continue;
        if (i > start) sb_putn(b, s + start, i - start);
        sb_put(b, html_rep(s[i]));
        start = i + 1;
    }
    if (n > start) sb_putn(b, s + start, n - start);
}

void html_esc(StrBuf *b, const char *s) { if (s) html_escn(b, s, strlen(s)); }

void html_esc_file(FILE *f, const char *s, size_t n) {
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (!html_special[(unsigned char)s[i]]) continue;
        if (i > start) fwrite(s + start, 1, i - start, f);
        fputs(html_rep(s[i]), f);
        start = i + 1;
    }
    if (n > start) fwrite(s + start, 1, n - start, f);
}

int mkdir_p(MiCtx *ctx, const char *path) {
    char buf[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return mi_err(ctx, path, 0, 0, "bad directory path");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return mi_err(ctx, buf, 0, 0, "cannot create directory: %s", strerror(errno));
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return mi_err(ctx, path, 0, 0, "not a directory");
    return 0;
}

void compile_id_dirname(const char *cid, char *out, size_t n) {
    if (!cid || !*cid) { snprintf(out, n, "unknown"); return; }
    /* "!A/F/C_T" -> "A_F_C_T"; "F/C" -> "-_F_C_0" */
    int ca = -1, f = 0, c = 0, t = 0;
    if (cid[0] == '!') {
        if (sscanf(cid, "!%d/%d/%d_%d", &ca, &f, &c, &t) < 3) { safe_filename(cid, out, n); return; }
        snprintf(out, n, "%d_%d_%d_%d", ca, f, c, t);
        return;
    }
    if (sscanf(cid, "%d/%d_%d", &f, &c, &t) < 2) { safe_filename(cid, out, n); return; }
    snprintf(out, n, "-_%d_%d_%d", f, c, t);
}

void safe_filename(const char *name, char *out, size_t n) {
    size_t j = 0;
    for (const char *p = name; *p && j + 1 < n; p++) {
        char c = *p;
        bool okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
        out[j++] = okc ? c : '_';
    }
    if (j == 0 && n > 1) out[j++] = '_';
    if (j > 0 && out[0] == '.') out[0] = '_';
    out[j] = 0;
}

bool is_collective_op(const char *s, size_t n) {
    if (memmem(s, n, "_c10d_functional.", 17)) return true;
    if (memmem(s, n, "wait_tensor", 11)) return true;
    return false;
}

/* Scan an FX graph text: for each line containing "_c10d_functional.<op>" (or
 * "torch.ops._c10d_functional.<op>"), record "<op>" without overload suffix noise. */
int collect_collectives(const char *text, StrBuf *b) {
    int count = 0;
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *hit = memmem(p, len, "_c10d_functional.", 17);
        /* skip comments ("# File: ...") */
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t')) q++;
        if (hit && *q != '#') {
            const char *op = hit + 17, *e = op;
            while (e < p + len && (((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
                                    (*e >= '0' && *e <= '9') || *e == '_' || *e == '.')))
                e++;
            if (e > op && e[-1] == '.') e--;
            sb_putn(b, op, (size_t)(e - op));
            sb_putc(b, '\n');
            count++;
        }
        p = nl ? nl + 1 : NULL;
    }
    return count;
}
