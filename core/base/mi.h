/* mi.h — the session context, error reporting and arena allocation shared by every module.
 *
 * The error contract (SQLite's: the error lives in the handle).
 *  - Every public function below repl/ that takes a MiCtx and can fail returns 0 / a pointer
 *    on success and -1 / NULL on failure; on failure, and only then, it OVERWRITES ctx->err
 *    (file, line, column, reason) through mi_err / mi_errf / graph_node_err (fx/graph.h).
 *    A success leaves ctx->err as it was, so a caller reads ctx->err only right after a
 *    failure; an old message may still sit there after successes.
 *  - Functions documented as "true/false" predicates (lowering_supported, symbool_looks_bool,
 *    ...) never touch ctx->err.
 *  - A call whose failure is an answer, not an error (is this text an expression? does this
 *    condition evaluate?), runs inside mi_try / mi_try_end, which puts ctx->err back as it
 *    was; the tentative failure's message is in ctx->err until mi_try_end.
 *  - Only repl/ prints the error (mi_err_str); nothing below repl/ prints or calls exit(),
 *    except mi_x* allocation failures, which abort like Lua's luaM_ (metadata only). */
#ifndef MI_H
#define MI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <signal.h>

typedef struct MiError {
    char file[256];   /* "" when not about a file */
    int line, col;    /* 1-based; 0 when unknown */
    char msg[1024];
} MiError;

typedef struct SymCtx SymCtx;
typedef struct TraceWriter TraceWriter;

typedef enum { MI_DEV_CPU, MI_DEV_CUDA } MiDeviceKind;

/* Bounds on work that grows with the input, so that no input hangs the session: work past a
 * bound stops with an error naming the limit and how to raise it ("set limit NAME N" in the
 * shell), or degrades in a stated way. The table of names, defaults and meanings is
 * mi_limit_info(); mi_limit_set changes one. */
typedef struct MiLimits {
    int sym_degree;        /* highest degree a size expression is multiplied out to: x**k with
                              k above it is refused by the parser, products of sums above it
                              stay unexpanded (same value) */
    int pattern_matches;   /* most rewrites one pattern pass applies to a graph */
    int fusion_rounds;     /* rounds of the scheduler's fusion loop (Inductor: 10) */
    int draw_nodes;        /* most boxes one picture draws (more: collapse, or an error) */
    int while_iterations;  /* most body_fn runs of one higher_order.while_loop (PyTorch has no
                              bound: a cond_fn that never turns False loops forever there); the
                              interpreter, the IR interpreter and the compiled module stop past it */
} MiLimits;

typedef struct MiLimitInfo { const char *name; size_t offset; int def, min, max; const char *what; } MiLimitInfo;
/* The limits, NULL-name terminated. */
const MiLimitInfo *mi_limit_info(void);
/* Set limit `name` to v. 0, or -1 + ctx error (unknown name, out of range). */
struct MiCtx;
int mi_limit_set(struct MiCtx *ctx, const char *name, long v);
/* "... (limit sym_degree = 32; raise it with 'set limit sym_degree N')": the suffix every
 * limit error ends with, into buf. */
const char *mi_limit_hint(const char *name, int value, char *buf, size_t n);

/* One session. No other global mutable state exists in the program. */
typedef struct MiCtx {
    MiError err;
    SymCtx *sym;            /* interning table for symbolic sizes, shared by all graphs */
    TraceWriter *trace;     /* NULL when tracing is off */
    MiDeviceKind target;    /* codegen target: cpu (default) or cuda */
    int threads;            /* OpenMP threads for generated kernels; 0 = default */
    bool fusion;            /* scheduler fusion on (default) */
    bool flush_denormal;    /* generated CPU modules run with flush-to-zero and denormals-are-
                             * zero on every OpenMP thread (default on; codegen_c.c) */
    bool time_fresh_outputs;/* rt_time: allocate the outputs inside every timed call, as
                             * torch.compile's wrapper does (empty_strided per call) */
    uint64_t seed;          /* for random inputs */
    char cache_dir[512];    /* compiled-kernel cache; "" = default */
    MiLimits limits;        /* bounds on runaway work (mi_limit_set) */
    /* Ctrl-C: the shell points this at the flag its SIGINT handler sets (the handler does
     * nothing else); long loops below repl/ poll it with mi_interrupted() and stop with
     * mi_err_interrupted(). NULL (tests, bench): never interrupted. */
    volatile sig_atomic_t *interrupt;
    /* Progress of long work (may be NULL): mi_progress() calls it at most about once a second
     * with what is running ("interpreting", "timing"), how far and out of how much. */
    void (*progress)(void *ud, const char *what, long done, long total);
    void *progress_ud;
    uint64_t progress_last_ns;   /* mi_progress's rate limit */
    int64_t llc_bytes;      /* the last-level cache's size as codegen_stream.c read it from /sys
                             * once (16 files a read: it was 12% of codegen's time); 0 = not yet */
    /* The loaded graph's tensor constants (get_attr targets such as self._tensor_constant0, the
     * GraphModule attributes PyTorch keeps beside the code), by name: mi_const_* in
     * core/base/tensor.c; the interpreter and the compiled module's call read them. */
    struct MiConst *consts;
    int nconsts;
    /* The session's cache of freed tensor storage (base/mem.h: blocks of 256 KiB and more, up
     * to mi_mem_cache_default_limit() bytes): every tensor's storage and a compiled module's
     * per-call outputs come from it, so a module's outputs after its first call reuse pages
     * already faulted in. Closed by mi_ctx_free. */
    struct MiMemCache *mem_cache;
} MiCtx;

MiCtx *mi_ctx_new(void);
void mi_ctx_free(MiCtx *ctx);

/* Fill ctx->err; always returns -1 so callers can `return mi_err(...)`. */
int mi_err(MiCtx *ctx, const char *file, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int mi_verr(MiCtx *ctx, const char *file, int line, int col, const char *fmt, va_list ap);
/* mi_err without a location: "reason" alone (file "", line 0). Returns -1. */
int mi_errf(MiCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mi_clear_err(MiCtx *ctx);

/* A tentative call (see the contract above):
 *     MiTry t = mi_try(ctx);
 *     Expr *e = sym_parse(ctx, text, NULL);     // may fail: then e == NULL, reason in ctx->err
 *     mi_try_end(&t);                           // ctx->err is what it was before mi_try */
typedef struct MiTry { MiCtx *ctx; MiError saved; } MiTry;
MiTry mi_try(MiCtx *ctx);
void mi_try_end(MiTry *t);
/* "file:line:col: msg" (parts omitted when unknown) into buf; returns buf. */
const char *mi_err_str(const MiCtx *ctx, char *buf, size_t n);

/* Allocation of small metadata: aborts with a message on out-of-memory (like Lua's luaM_).
 * Large tensor storage never goes through these; it uses malloc and reports failure. */
void *mi_xmalloc(size_t n);
void *mi_xcalloc(size_t n, size_t size);
void *mi_xrealloc(void *p, size_t n);
char *mi_xstrdup(const char *s);

/* Arena: bump allocator; everything a Graph owns lives in its arena. */
typedef struct ArenaBlock ArenaBlock;
typedef struct Arena { ArenaBlock *head; size_t total; } Arena;
void arena_init(Arena *a);
void *arena_alloc(Arena *a, size_t n);            /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(Arena *a);

/* Growable byte buffer used by printers and code generators. */
typedef struct StrBuf { char *s; size_t len, cap; } StrBuf;
void sb_init(StrBuf *b);
void sb_put(StrBuf *b, const char *s);
void sb_putn(StrBuf *b, const char *s, size_t n);
void sb_putc(StrBuf *b, char c);
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_take(StrBuf *b);      /* returns malloc'd string, resets b */
void sb_free(StrBuf *b);

/* Read a whole file (for graphs; logs are streamed). NUL-terminated; *len excludes the NUL. */
char *mi_read_file(MiCtx *ctx, const char *path, size_t *len);
int mi_write_file(MiCtx *ctx, const char *path, const char *data, size_t len);

/* Has Ctrl-C been pressed since the shell started the current command? */
static inline bool mi_interrupted(const MiCtx *ctx) { return ctx && ctx->interrupt && *ctx->interrupt; }
/* Set the error "interrupted (Ctrl-C) <where>" (printf-style); returns -1. */
int mi_err_interrupted(MiCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report progress of long work through ctx->progress, rate-limited to about once a second
 * (cheap to call in a loop: one clock read). Example: mi_progress(ctx, "timing", i, reps). */
void mi_progress(MiCtx *ctx, const char *what, long done, long total);

/* Monotonic clock in nanoseconds. */
uint64_t mi_now_ns(void);

#endif
