/* mi.c — session context, error reporting, arenas, string buffers and file helpers.
 * The base every other module of core/, trace/ and viz/ builds on. */
#include "base/mi.h"
#include "base/mem.h"
#include "base/sym.h"
#include "base/tensor.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const MiLimitInfo limit_info[] = {
    {"sym_degree", offsetof(MiLimits, sym_degree), 32, 1, 4096,
     "highest degree a size expression is multiplied out to"},
    {"pattern_matches", offsetof(MiLimits, pattern_matches), 100000, 1, 100000000,
     "most rewrites one pattern pass applies"},
    {"fusion_rounds", offsetof(MiLimits, fusion_rounds), 10, 1, 1000,
     "rounds of the scheduler's fusion loop"},
    {"draw_nodes", offsetof(MiLimits, draw_nodes), 5000, 1, 10000000,
     "most boxes one picture draws"},
    {"while_iterations", offsetof(MiLimits, while_iterations), 1000000, 1, 2000000000,
     "most body_fn runs of one while_loop"},
    {NULL, 0, 0, 0, 0, NULL},
};

const MiLimitInfo *mi_limit_info(void) { return limit_info; }

const char *mi_limit_hint(const char *name, int value, char *buf, size_t n) {
    snprintf(buf, n, "limit %s = %d; raise it with 'set limit %s N'", name, value, name);
    return buf;
}

int mi_limit_set(MiCtx *ctx, const char *name, long v) {
    for (const MiLimitInfo *l = limit_info; l->name; l++) {
        if (strcmp(l->name, name)) continue;
        if (v < l->min || v > l->max)
            return mi_errf(ctx, "limit %s must be between %d and %d, got %ld", name, l->min, l->max, v);
        *(int *)((char *)&ctx->limits + l->offset) = (int)v;
        if (!strcmp(name, "sym_degree")) sym_set_max_degree(ctx->sym, (int)v);
        return 0;
    }
    StrBuf sb;
    sb_init(&sb);
    for (const MiLimitInfo *l = limit_info; l->name; l++) sb_printf(&sb, "%s%s", l == limit_info ? "" : ", ", l->name);
    mi_errf(ctx, "unknown limit '%s' (limits: %s)", name, sb.s);
    sb_free(&sb);
    return -1;
}

MiCtx *mi_ctx_new(void) {
    MiCtx *ctx = mi_xcalloc(1, sizeof *ctx);
    ctx->sym = sym_ctx_new();
    ctx->target = MI_DEV_CPU;
    ctx->fusion = true;
    ctx->flush_denormal = true;
    ctx->seed = 0x5eed;
    for (const MiLimitInfo *l = limit_info; l->name; l++) *(int *)((char *)&ctx->limits + l->offset) = l->def;
    sym_set_max_degree(ctx->sym, ctx->limits.sym_degree);
    ctx->mem_cache = mi_mem_cache_new(mi_mem_cache_default_limit());   /* NULL: no caching */
    return ctx;
}

void mi_ctx_free(MiCtx *ctx) {
    if (!ctx) return;
    sym_ctx_free(ctx->sym);
    mi_consts_clear(ctx);
    mi_mem_cache_close(ctx->mem_cache);
    free(ctx);
}

int mi_verr(MiCtx *ctx, const char *file, int line, int col, const char *fmt, va_list ap) {
    if (!ctx) return -1;
    MiError *e = &ctx->err;
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    e->line = line;
    e->col = col;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    return -1;
}

int mi_err(MiCtx *ctx, const char *file, int line, int col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mi_verr(ctx, file, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

void mi_clear_err(MiCtx *ctx) { memset(&ctx->err, 0, sizeof ctx->err); }

int mi_errf(MiCtx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mi_verr(ctx, NULL, 0, 0, fmt, ap);
    va_end(ap);
    return -1;
}

MiTry mi_try(MiCtx *ctx) {
    MiTry t;
    t.ctx = ctx;
    t.saved = ctx->err;
    return t;
}

void mi_try_end(MiTry *t) { t->ctx->err = t->saved; }

const char *mi_err_str(const MiCtx *ctx, char *buf, size_t n) {
    const MiError *e = &ctx->err;
    if (e->file[0] && e->line && e->col)
        snprintf(buf, n, "%s:%d:%d: %s", e->file, e->line, e->col, e->msg);
    else if (e->file[0] && e->line)
        snprintf(buf, n, "%s:%d: %s", e->file, e->line, e->msg);
    else if (e->file[0])
        snprintf(buf, n, "%s: %s", e->file, e->msg);
    else
        snprintf(buf, n, "%s", e->msg);
    return buf;
}

static void oom(size_t n) {
    fprintf(stderr, "minductor: out of memory allocating %zu bytes\n", n);
    abort();
}

void *mi_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *mi_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *mi_xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *mi_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = mi_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

/* ---- arena ---- */

struct ArenaBlock {
    ArenaBlock *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void arena_init(Arena *a) { a->head = NULL; a->total = 0; }

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    ArenaBlock *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        b = mi_xmalloc(sizeof *b + cap);
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return s ? arena_strndup(a, s, strlen(s)) : NULL; }

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void arena_free(Arena *a) {
    for (ArenaBlock *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
    a->total = 0;
}

/* ---- string buffer ---- */

void sb_init(StrBuf *b) { b->s = NULL; b->len = b->cap = 0; }

static void sb_grow(StrBuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    b->s = mi_xrealloc(b->s, cap);
    b->cap = cap;
}

void sb_putn(StrBuf *b, const char *s, size_t n) {
    sb_grow(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void sb_put(StrBuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

void sb_putc(StrBuf *b, char c) { sb_putn(b, &c, 1); }

/* Formats straight into the free room (at least 64 bytes made first) and again only when the
 * text did not fit: one vsnprintf per call, not a sizing pass then the real one (formatting
 * was a third of code generation's time). The arguments must not point into b itself. */
void sb_printf(StrBuf *b, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    sb_grow(b, 64);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->s + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->s[b->len] = 0;
        va_end(ap2);
        return;
    }
    if ((size_t)n >= room) {
        sb_grow(b, (size_t)n);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    b->len += (size_t)n;
}

char *sb_take(StrBuf *b) {
    char *s = b->s ? b->s : mi_xstrdup("");
    sb_init(b);
    return s;
}

void sb_free(StrBuf *b) {
    free(b->s);
    sb_init(b);
}

/* ---- files ---- */

char *mi_read_file(MiCtx *ctx, const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        mi_err(ctx, path, 0, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    StrBuf b;
    sb_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_putn(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        sb_free(&b);
        mi_err(ctx, path, 0, 0, "read error");
        return NULL;
    }
    if (len) *len = b.len;
    return sb_take(&b);
}

int mi_write_file(MiCtx *ctx, const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return mi_err(ctx, path, 0, 0, "cannot write: %s", strerror(errno));
    size_t w = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || w != len) return mi_err(ctx, path, 0, 0, "write failed: %s", strerror(errno));
    return 0;
}

int mi_err_interrupted(MiCtx *ctx, const char *fmt, ...) {
    char where[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(where, sizeof where, fmt, ap);
    va_end(ap);
    return mi_err(ctx, NULL, 0, 0, "interrupted (Ctrl-C) %s", where);
}

void mi_progress(MiCtx *ctx, const char *what, long done, long total) {
    if (!ctx || !ctx->progress) return;
    uint64_t now = mi_now_ns();
    if (!ctx->progress_last_ns) { ctx->progress_last_ns = now; return; }   /* first call: start the clock */
    if (now - ctx->progress_last_ns < 1000000000ull) return;
    ctx->progress_last_ns = now;
    ctx->progress(ctx->progress_ud, what, done, total);
}

uint64_t mi_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
