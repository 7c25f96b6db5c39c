/* codegen_stream.c — streaming row kernels on the CPU: two rules codegen_kernel.c applies to a
 * segment that is one inner loop (a row) inside the group's parallel outer loops.
 *
 * 1. Non-temporal stores. A buffer the segment writes once, contiguously along the row, that
 *    no other node of the group reads, and whose storage is larger than the last-level cache
 *    (llc_bytes below; MINDUCTOR_STREAM_BYTES=N overrides it, a negative N turns the rule off),
 *    in a segment that reads nothing new from memory (reads_cached_only: softmax's divide pass
 *    after its max and exp passes), cannot still be cached when anyone reads it again: a plain
 *    store first reads each line for ownership (a second memory stream beside the write-back)
 *    and evicts lines the kernel's inputs need. GCC ignores `#pragma omp simd nontemporal` and
 *    has no non-temporal store builtin, so the vectorized loop writes the row into a staging
 *    array on the stack (L1) and mi_stream_row copies it out with _mm512_stream_si512 (AVX /
 *    SSE2 forms below that, memcpy elsewhere); the group's threads run mi_stream_fence (SFENCE)
 *    before its parallel region ends, so the data is visible to the caller and later kernels.
 *        float mi_so_buf3[4096] __attribute__((aligned(64)));
 *        for (p1 ...) { ...; mi_so_buf3[p1] = tmp11; }
 *        mi_stream_row(&buf3[(4096LL*p0)], mi_so_buf3, 16384);
 *    softmax 4096x4096 (67 MB out), 1 thread, CPU time: the exp + divide passes with plain
 *    stores 7.4-7.8 ms, streamed 7.1-7.4 (bench/README.md "Streaming kernels").
 * 2. Prefetching the next row. A segment that reads again a row an earlier segment of the same
 *    outer iteration already read (softmax's exp pass after its max pass, a layer norm's
 *    normalize pass after its mean / variance) reads it from L1 and leaves the memory system
 *    idle while it computes; it prefetches the next outer iteration's row of that input, one
 *    cache line per 64 bytes, in chunks of CG_PF_CHUNK elements of its loop, so the next row's
 *    first pass finds it in cache. softmax, 1 thread: 7.4 -> 5.0-5.5 ms with rule 1 (the
 *    hardware prefetcher alone does not run a row ahead). MINDUCTOR_PREFETCH=0 turns it off. */
#include "codegen/codegen_stream.h"
#include "codegen/codegen_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAGE_MAX_BYTES (64 << 10)   /* one staging row on the stack */

const char *cg_stream_src =
    "/* streaming stores (core/codegen/codegen_stream.c): a staged row copied out around the cache */\n"
    "#if defined(__x86_64__) && defined(__SSE2__)\n#include <immintrin.h>\n#endif\n"
    "__attribute__((unused)) static inline void mi_stream_row(void *restrict dst, const void *restrict src, size_t n) {\n"
    "    char *d = (char *)dst;\n    const char *s = (const char *)src;\n"
    "#if defined(__x86_64__) && (defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__))\n"
    "#if defined(__AVX512F__)\n    enum { W = 64 };\n#elif defined(__AVX__)\n    enum { W = 32 };\n#else\n    enum { W = 16 };\n#endif\n"
    "    size_t h = (W - ((uintptr_t)d & (W - 1))) & (W - 1);   /* plain stores up to the first aligned vector */\n"
    "    if (h > n) h = n;\n    memcpy(d, s, h); d += h; s += h; n -= h;\n"
    "    for (; n >= W; n -= W, d += W, s += W)\n"
    "#if defined(__AVX512F__)\n        _mm512_stream_si512((__m512i *)d, _mm512_loadu_si512((const void *)s));\n"
    "#elif defined(__AVX__)\n        _mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));\n"
    "#else\n        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));\n#endif\n"
    "#endif\n    memcpy(d, s, n);\n}\n"
    "__attribute__((unused)) static inline void mi_stream_fence(void) {\n"
    "#if defined(__x86_64__) && defined(__SSE2__)\n    _mm_sfence();\n#endif\n}\n\n";

/* The size of the last-level cache this core uses: the highest level under
 * /sys/devices/system/cpu/cpu0/cache (what lscpu reports: 32 MiB on this EPYC VM), else
 * sysconf(_SC_LEVEL3_CACHE_SIZE) (glibc's cpuid answer: 384 MiB on the same VM, the whole
 * package's), else -1. */
static int64_t llc_bytes(void) {
    int64_t best = -1;
    int best_level = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[32];
        int level = 0;
        long long size = 0;
        char unit = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) level = atoi(buf);
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!(f = fopen(path, "r"))) continue;
        if (fgets(buf, sizeof buf, f) && sscanf(buf, "%lld%c", &size, &unit) >= 1) {
            int64_t b = size * (unit == 'K' ? 1024 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1);
            if (level > best_level && b > 0) { best_level = level; best = b; }
        }
        fclose(f);
    }
    if (best > 0) return best;
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? l3 : -1;
}

/* Bytes above which a store streams: MINDUCTOR_STREAM_BYTES, else the LLC's size (read once
 * per session into ctx->llc_bytes); -1: never. */
static int64_t stream_threshold(MiCtx *ctx) {
    const char *e = getenv("MINDUCTOR_STREAM_BYTES");
    if (e && *e) return strtoll(e, NULL, 10);
    if (!ctx) return llc_bytes();
    if (!ctx->llc_bytes) ctx->llc_bytes = llc_bytes();
    return ctx->llc_bytes;
}

static bool is_one(Expr *e) {
    int64_t v;
    return e && sym_is_int(e, &v) && v == 1;
}

/* index == base + inner with base free of inner: base, else NULL. Example: 4096*p0 + p1 -> 4096*p0. */
static Expr *row_base(SymCtx *sy, Expr *index, const char *inner) {
    if (!index || !is_one(sym_coeff(sy, index, inner))) return NULL;
    Expr *zero = sym_int(sy, 0);
    Expr *base = sym_simplify(sy, sym_subst(sy, index, &inner, &zero, 1), NULL, 0);
    if (sym_simplify(sy, sym_add(sy, base, sym_symbol(sy, inner)), NULL, 0) != sym_simplify(sy, index, NULL, 0)) return NULL;
    return base;
}

/* Does a live node of group gi read b / how many live nodes of gi write it? */
static bool read_in_group(const Schedule *s, int gi, const Buffer *b) {
    for (int u = s->rd_start[b->id]; u < s->rd_start[b->id + 1]; u++)
        if (!s->nodes[s->rd[u]].dead && s->nodes[s->rd[u]].group == gi) return true;
    return false;
}
static int writers_in_group(const Schedule *s, int gi, const Buffer *b) {
    int n = 0;
    for (int u = s->wr_start[b->id]; u < s->wr_start[b->id + 1]; u++)
        n += !s->nodes[s->wr[u]].dead && s->nodes[s->wr[u]].group == gi;
    return n;
}

static bool skipped(const Buffer *b, const Buffer *const *skip, int nskip) {
    for (int i = 0; i < nskip; i++)
        if (skip[i] == b) return true;
    return false;
}
/* Did a node of the group before position a read d's buffer at d's index (the same row), or
 * (writes too) write it at that index (a reduction's result of this row)? */
static bool touched_before(const Schedule *s, const SchedGroup *g, int a, const Dep *d, bool writes) {
    for (int j = 0; j < a; j++) {
        const DepSet *e = &s->nodes[g->nodes[j]].deps;
        for (int q = 0; q < e->nreads; q++)
            if (e->reads[q].buf == d->buf && e->reads[q].index == d->index) return true;
        for (int q = 0; writes && q < e->nwrites; q++)
            if (e->writes[q].buf == d->buf && e->writes[q].index == d->index) return true;
    }
    return false;
}
/* Does segment [a, b) read nothing new from memory? Each load is a row-local array or register,
 * the same row an earlier segment read or wrote, or an index free of the outer loop variables (the same
 * elements every row: a layer norm's weight), so the rows it writes are its only memory stream.
 * Only then did non-temporal stores pay here: softmax's divide pass, 2 threads, 3.05 -> 2.77 ms;
 * a pointwise chain reading two inputs, 1 thread, 8.2 -> 12.0 ms (slower). */
static bool reads_cached_only(const Schedule *s, const SchedGroup *g, int a, int b, int mo, const Buffer *const *skip, int nskip) {
    const LoopBody *lb = s->nodes[g->nodes[a]].buf->body;
    for (int i = a; i < b; i++) {
        const DepSet *ds = &s->nodes[g->nodes[i]].deps;
        for (int r = 0; r < ds->nreads; r++) {
            const Dep *d = &ds->reads[r];
            if (skipped(d->buf, skip, nskip) || touched_before(s, g, a, d, true)) continue;
            if (d->kind != DEP_MEMORY || !d->index) return false;
            for (int v = 0; v < mo; v++)
                if (sym_coeff(s->ir->ctx->sym, d->index, lb->vars[v]->name) != sym_int(s->ir->ctx->sym, 0)) return false;
        }
    }
    return true;
}

/* A store of the segment that streams (rule 1): its row start, else NULL. */
static Expr *stream_store(const Schedule *s, int gi, const Dep *d, const char *inner, int64_t n, int64_t limit,
                          const Buffer *const *skip, int nskip) {
    const Buffer *b = d->buf;
    SymCtx *sy = s->ir->ctx->sym;
    if (d->kind != DEP_MEMORY || !d->index || b->kind != BUF_COMPUTED || ir_store_target(b) != b || !cg_ctype(b->layout.dtype)) return NULL;
    if (skipped(b, skip, nskip)) return NULL;
    int64_t numel, es = dtype_size(b->layout.dtype);
    if (!sym_is_int(layout_storage_size(sy, &b->layout), &numel) || numel * es <= limit) return NULL;
    if (n * es > STAGE_MAX_BYTES || n * es < 64) return NULL;
    if (read_in_group(s, gi, b) || writers_in_group(s, gi, b) != 1) return NULL;
    return row_base(sy, d->index, inner);
}

void cg_row_plan(MiCtx *ctx, const Schedule *s, const SchedGroup *g, int a, int b, int mo,
                 const Buffer *const *skip, int nskip, CgRowPlan *p) {
    memset(p, 0, sizeof *p);
    const LoopBody *lb = s->nodes[g->nodes[a]].buf->body;
    if (mo < 1 || lb->nvars != mo + 1 || !sym_is_int(lb->ranges[mo], &p->n)) return;
    SymCtx *sy = s->ir->ctx->sym;
    int gi = (int)(g - s->groups);
    p->inner = lb->vars[mo]->name;
    p->outer = lb->vars[mo - 1]->name;
    p->outer_range = lb->ranges[mo - 1];
    int64_t limit = reads_cached_only(s, g, a, b, mo, skip, nskip) ? stream_threshold(ctx) : -1;
    for (int i = a; i < b && limit >= 0; i++) {
        const SchedNode *nd = &s->nodes[g->nodes[i]];
        for (int w = 0; w < nd->deps.nwrites && p->nstream < CG_STREAM_MAX; w++) {
            Expr *base = stream_store(s, gi, &nd->deps.writes[w], p->inner, p->n, limit, skip, nskip);
            if (!base) continue;
            p->stream[p->nstream] = nd->deps.writes[w].buf;
            p->stream_base[p->nstream++] = base;
        }
    }
    const char *pf = getenv("MINDUCTOR_PREFETCH");
    if ((pf && !strcmp(pf, "0")) || p->n < CG_PF_CHUNK) return;
    const char *names[2] = {p->outer, p->inner};
    Expr *repl[2] = {sym_add(sy, sym_symbol(sy, p->outer), sym_int(sy, 1)), sym_symbol(sy, "mi_k")};
    for (int i = a; i < b; i++) {
        const SchedNode *nd = &s->nodes[g->nodes[i]];
        for (int r = 0; r < nd->deps.nreads && p->npf < CG_STREAM_MAX; r++) {
            const Dep *d = &nd->deps.reads[r];
            bool dup = false;
            if (skipped(d->buf, skip, nskip) || d->kind != DEP_MEMORY || !row_base(sy, d->index, p->inner) || writers_in_group(s, gi, ir_store_target(d->buf)))
                continue;
            Expr *next = sym_simplify(sy, sym_subst(sy, d->index, names, repl, 2), NULL, 0);
            for (int k = 0; k < p->npf; k++) dup |= p->pf[k] == d->buf && p->pf_next[k] == next;
            if (dup || !touched_before(s, g, a, d, false)) continue;   /* the row an earlier segment read */
            p->pf[p->npf] = d->buf;
            p->pf_next[p->npf++] = next;
        }
    }
}

bool cg_row_streams(const CgRowPlan *p, const Buffer *b) {
    for (int i = 0; i < p->nstream; i++)
        if (p->stream[i] == b) return true;
    return false;
}

void cg_row_decls(const CgRowPlan *p, const char *ind, StrBuf *out) {
    for (int i = 0; i < p->nstream; i++)
        sb_printf(out, "%s%s mi_so_%s[%lld] __attribute__((aligned(64)));\n", ind, cg_ctype(p->stream[i]->layout.dtype),
                  p->stream[i]->name, (long long)p->n);
}

void cg_row_prefetch_open(const CgRowPlan *p, const char *ind, StrBuf *out) {
    if (!p->npf) return;
    sb_printf(out, "%sfor (int64_t mi_c = 0; mi_c < %lldLL; mi_c += %d) {   /* prefetch the next row meanwhile */\n", ind,
              (long long)p->n, CG_PF_CHUNK);
    sb_printf(out, "%s    const int64_t mi_ce = mi_c + %d < %lldLL ? mi_c + %d : %lldLL;\n", ind, CG_PF_CHUNK, (long long)p->n,
              CG_PF_CHUNK, (long long)p->n);
    sb_printf(out, "%s    if (%s + 1 < ", ind, p->outer);
    sym_c_sb(p->outer_range, out);
    sb_put(out, ") {\n");
    for (int i = 0; i < p->npf; i++) {
        int64_t step = 64 / dtype_size(p->pf[i]->layout.dtype);
        sb_printf(out, "%s        for (int64_t mi_k = mi_c; mi_k < mi_ce; mi_k += %lld) __builtin_prefetch(&%s[", ind,
                  (long long)(step > 0 ? step : 1), ir_store_target(p->pf[i])->name);
        sym_c_sb(p->pf_next[i], out);
        sb_put(out, "], 0, 3);\n");
    }
    sb_printf(out, "%s    }\n", ind);
}

void cg_row_chunk_header(const CgRowPlan *p, const char *ind, StrBuf *out) {
    sb_printf(out, "%sfor (int64_t %s = mi_c; %s < mi_ce; %s++)\n", ind, p->inner, p->inner, p->inner);
}

void cg_row_stream_out(const CgRowPlan *p, const char *ind, StrBuf *out) {
    for (int i = 0; i < p->nstream; i++) {
        sb_printf(out, "%smi_stream_row(&%s[", ind, p->stream[i]->name);
        sym_c_sb(p->stream_base[i], out);
        sb_printf(out, "], mi_so_%s, %lld);\n", p->stream[i]->name, (long long)(p->n * dtype_size(p->stream[i]->layout.dtype)));
    }
}
