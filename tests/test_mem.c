/* test_mem.c — the storage allocator (core/base/mem.c) by what it does: small blocks are
 * 64-byte-aligned mallocs, large ones (from 32 MiB) 2 MiB-aligned mappings the kernel was asked to back with
 * huge pages (the VMA's "hg" flag in /proc/self/smaps), zero-filled on request, readable and
 * writable to their last byte, gone from the address space after mi_mem_free; the fallback to
 * malloc when madvise fails, when huge pages are off (mi_mem_set_huge, MINDUCTOR_HUGEPAGES=0)
 * or below the threshold; and that the runtime uses it: a large tensor, a compiled module's
 * outputs, its arena (mi_mem_hooks filled in at load) and rt_time's fresh outputs. The
 * session's cache of freed blocks (MiMemCache): a freed block comes back for the next request
 * of its size class, zero-filled when asked; small requests bypass it; its limit holds (oldest
 * kept blocks released first, a block larger than the limit released at once); trim and close
 * release what it keeps (huge blocks leave the address space); blocks out at close are released
 * when freed; a double free is ignored; threads share it; a session's fresh outputs and tensors
 * come from it. */
#include "tap.h"
#include "base/mem.h"
#include "compile_fx/compile_fx.h"
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MB ((size_t)1 << 20)

/* The kernel has transparent huge pages (then madvise(MADV_HUGEPAGE) succeeds). */
static bool have_thp(void) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    return access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0;
#else
    return false;
#endif
}

/* Is the page holding address a mapped? (mincore fails with ENOMEM on an unmapped range) */
static bool mapped(const void *a) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[1];
    void *pg = (void *)((uintptr_t)a & ~(uintptr_t)(page - 1));
    return mincore(pg, page, vec) == 0 || errno != ENOMEM;
}

/* The VmFlags line of the mapping in /proc/self/smaps that contains a ("" when none). */
static void vm_flags(const void *a, char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool in = false;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') == line + strspn(line, "0123456789abcdef"))
            in = (uintptr_t)a >= lo && (uintptr_t)a < hi;
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            snprintf(out, n, "%s", line + 8);
            out[strcspn(out, "\n")] = 0;
            break;
        }
    }
    if (f) fclose(f);
}

static bool all_zero(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Fill with a pattern and read it back: every byte of the block is ours. */
static bool pattern_holds(unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 131 + 7);
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 131 + 7)) return false;
    return true;
}

static void small_blocks(void) {
    size_t sizes[] = {0, 1, 63, 64, 1000, 100000, MI_MEM_HUGE_PAGE, MI_MEM_HUGE_MIN - 1};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        unsigned char *p = mi_mem_alloc(n, true);
        ok(p && (uintptr_t)p % 64 == 0, "%zu bytes: 64-byte aligned", n);
        is_int(mi_mem_kind(p), MI_MEM_MALLOC, "%zu bytes: a malloc block (below the 32 MiB threshold)", n);
        ok(p && all_zero(p, n), "%zu bytes: zero-filled when asked", n);
        ok(p && pattern_holds(p, n), "%zu bytes: writable and readable to the last byte", n);
        mi_mem_free(p);
    }
    mi_mem_free(NULL);
    is_int(mi_mem_kind(NULL), 0, "NULL is no block");
}

static void huge_blocks(void) {
    size_t n = MI_MEM_HUGE_MIN + 12345;   /* not a multiple of 2 MiB: the mapping is rounded up to 34 MiB */
    unsigned char *p = mi_mem_alloc(n, true);
    if (!have_thp()) {
        is_int(mi_mem_kind(p), MI_MEM_MALLOC, "no transparent huge pages here: a malloc block");
        mi_mem_free(p);
        skip(6, "no transparent huge pages in this kernel");
        return;
    }
    is_int(mi_mem_kind(p), MI_MEM_HUGE, "32 MiB + 12345 bytes with huge pages on: its own mapping");
    ok(p && (uintptr_t)p % MI_MEM_HUGE_PAGE == 0, "2 MiB-aligned (%p)", (void *)p);
    char flags[600];
    vm_flags(p, flags, sizeof flags);
    ok(strstr(flags, " hg") != NULL, "the kernel marked it MADV_HUGEPAGE (VmFlags:%s)", flags);
    ok(p && all_zero(p, n) && pattern_holds(p, n), "zero-filled, then writable and readable to the last byte");
    ok(p && mapped(p + 34 * MB - 1) && mapped(p - 1), "the last huge page and the header's page are mapped");
    mi_mem_free(p);
    ok(!mapped(p) && !mapped(p - 1) && !mapped(p + 34 * MB - 1), "freed: the whole mapping is gone");
}

static void *g_refused;
static int refuse_advise(void *addr, size_t len, int advice) {
    (void)len; (void)advice;
    g_refused = addr;
    errno = EINVAL;
    return -1;
}

static void fallbacks(void) {
    size_t n = 4 * MB;
    mi_mem_set_huge(true, MI_MEM_HUGE_PAGE);   /* 4 MB blocks would be huge */
    /* madvise refused (a kernel without THP): the mapping is undone, the block is a malloc */
    mi_mem_set_advise(refuse_advise);
    unsigned char *p = mi_mem_alloc(n, true);
    mi_mem_set_advise(NULL);
    is_int(mi_mem_kind(p), MI_MEM_MALLOC, "madvise fails: a malloc block");
    ok(p && (uintptr_t)p % 64 == 0 && all_zero(p, n) && pattern_holds(p, n), "64-byte aligned, zero-filled, usable");
    if (have_thp()) ok(g_refused && !mapped(g_refused), "the refused mapping was unmapped");
    else skip(1, "no transparent huge pages in this kernel");
    mi_mem_free(p);
    /* huge pages off */
    bool was = mi_mem_set_huge(false, 0);
    ok(was, "huge pages are on by default");
    p = mi_mem_alloc(n, false);
    is_int(mi_mem_kind(p), MI_MEM_MALLOC, "huge pages off: 4 MB is a malloc block");
    mi_mem_set_huge(true, 0);
    mi_mem_free(p);   /* made as a malloc, freed as one though huge pages are on again */
    /* a lower threshold */
    mi_mem_set_huge(true, MB);
    p = mi_mem_alloc(MB + MB / 2, false);
    is_int(mi_mem_kind(p), have_thp() ? MI_MEM_HUGE : MI_MEM_MALLOC, "threshold 1 MiB: 1.5 MiB is huge");
    mi_mem_set_huge(true, MI_MEM_HUGE_MIN);
    mi_mem_free(p);
}

/* The kind of a block of n bytes made first thing in a child whose environment has NAME=VALUE
 * (the allocator reads it on first use). */
static int kind_in_child(const char *name, const char *value, size_t n) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv(name, value, 1);
        void *p = mi_mem_alloc(n, false);
        int kind = mi_mem_kind(p);
        mi_mem_free(p);
        _exit(kind);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void environment(void) {
    is_int(kind_in_child("MINDUCTOR_HUGEPAGES", "0", 40 * MB), MI_MEM_MALLOC, "MINDUCTOR_HUGEPAGES=0: 40 MB is a malloc block");
    is_int(kind_in_child("MINDUCTOR_HUGEPAGES", "1", 40 * MB), have_thp() ? MI_MEM_HUGE : MI_MEM_MALLOC,
           "MINDUCTOR_HUGEPAGES=1: 40 MB is huge");
    is_int(kind_in_child("MINDUCTOR_HUGEPAGE_MIN", "4194304", 5 * MB), have_thp() ? MI_MEM_HUGE : MI_MEM_MALLOC,
           "MINDUCTOR_HUGEPAGE_MIN=4194304: 5 MB is huge");
    is_int(kind_in_child("MINDUCTOR_HUGEPAGE_MIN", "4194304", 3 * MB), MI_MEM_MALLOC, "MINDUCTOR_HUGEPAGE_MIN=4194304: 3 MB is not");
}

/* x * 2 over 1024 x 1024 floats (a 4 MB output), and a relu -> mm -> neg chain whose relu
 * (2 MB) lives in the module's arena */
static const char *BIG_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[1024, 1024][1024, 1]cpu\"):\n"
    "        mul: \"f32[1024, 1024][1024, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 2.0);  arg0_1 = None\n"
    "        return (mul,)\n";
static const char *ARENA_GRAPH =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[512, 1024][1024, 1]cpu\", arg1_1: \"f32[1024, 48][48, 1]cpu\"):\n"
    "        relu: \"f32[512, 1024][1024, 1]cpu\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
    "        mm: \"f32[512, 48][48, 1]cpu\" = torch.ops.aten.mm.default(relu, arg1_1);  relu = arg1_1 = None\n"
    "        neg: \"f32[512, 48][48, 1]cpu\" = torch.ops.aten.neg.default(mm);  mm = None\n"
    "        return (neg,)\n";

static bool compile_text(MiCtx *ctx, const char *text, Graph **g, CompiledFx *c) {
    char err[1200];
    *g = fx_parse(ctx, text, strlen(text), "test.py", 1);
    if (!*g) { diag("%s", mi_err_str(ctx, err, sizeof err)); return false; }
    ops_resolve_graph(*g);
    compile_fx_init(c, *g);
    if (compile_fx(ctx, c, CFX_BUILT) != 0) { diag("%s", mi_err_str(ctx, err, sizeof err)); return false; }
    return true;
}

static void runtime_uses_it(MiCtx *ctx) {
    mi_mem_set_huge(true, MI_MEM_HUGE_PAGE);   /* so that 4 MB blocks are huge */
    int64_t size[2] = {1024, 1024};
    Tensor *t = tensor_new(ctx, DT_F32, 2, size);
    is_int(t ? mi_mem_kind(t->storage->data) : 0, have_thp() ? MI_MEM_HUGE : MI_MEM_MALLOC, "a 4 MB tensor's storage");
    ok(t && all_zero(t->storage->data, t->storage->nbytes), "tensor_new is zero-filled");
    for (int i = 0; t && i < 1024 * 1024; i++) tensor_set_f(t, i, (float)(i % 1000));

    Graph *g = NULL;
    CompiledFx c;
    if (!ok(compile_text(ctx, BIG_GRAPH, &g, &c), "compile x * 2 over f32[1024, 1024]")) return;
    IValue in = {.kind = IV_TENSOR, .t = t}, *outs = NULL;
    int nouts = 0;
    int rc = rt_run(ctx, c.mod, g, &in, 1, &outs, &nouts, NULL);
    is_int(rc, 0, "run");
    if (rc == 0) {
        Tensor *o = outs[0].t;
        is_int(mi_mem_kind(o->storage->data), have_thp() ? MI_MEM_HUGE : MI_MEM_MALLOC, "the module's 4 MB output storage");
        bool same = true;
        for (int i = 0; i < 1024 * 1024 && same; i++) same = tensor_get_f(o, i) == 2.0f * (float)(i % 1000);
        ok(same, "the output holds x * 2 at every element");
        interp_free_outputs(outs, nouts);
    }
    /* rt_time with outputs allocated per call (the allocator's alloc / free in every call),
     * from the session's cache: every call after the first reuses the 4 MB block */
    ctx->time_fresh_outputs = true;
    double med = -1;
    MiMemCacheStats before = mi_mem_cache_stats(ctx->mem_cache);
    ok(rt_time(ctx, c.mod, g, &in, 1, 1, 3, &med, NULL) == 0 && med >= 0, "rt_time with fresh outputs runs");
    MiMemCacheStats after = mi_mem_cache_stats(ctx->mem_cache);
    ok(ctx->mem_cache && after.hits - before.hits >= 3, "its 4 calls took the output from the session's cache (>= 3 hits)");
    ctx->time_fresh_outputs = false;
    /* rt_run's output storage too: freed, the next run's output is the same block, same values */
    void *first = NULL;
    for (int k = 0; k < 2; k++) {
        if (rt_run(ctx, c.mod, g, &in, 1, &outs, &nouts, NULL) != 0) break;
        Tensor *o = outs[0].t;
        bool same = true;
        for (int i = 0; i < 1024 * 1024 && same; i++) same = tensor_get_f(o, i) == 2.0f * (float)(i % 1000);
        if (k == 0) first = o->storage->data;
        else {
            ok(o->storage->data == first, "a second run's output reuses the first's freed block");
            ok(same, "and holds x * 2 at every element");
        }
        interp_free_outputs(outs, nouts);
    }
    compile_fx_free(&c);
    graph_free(g);
    tensor_unref(t);

    if (!ok(compile_text(ctx, ARENA_GRAPH, &g, &c), "compile relu -> mm -> neg")) return;
    ok(strstr(c.code, "mi_arena_take(") && strstr(c.code, "mi_big_alloc"), "the module has an arena from mi_big_alloc");
    const MiMemHooks *h = dlsym(c.mod->handle, "mi_mem_hooks");
    ok(h && h->alloc == mi_mem_alloc_raw && h->free == mi_mem_free, "the runtime filled in the module's mi_mem_hooks");
    IValue *ins = NULL;
    int nin = 0;
    if (interp_random_inputs(ctx, g, NULL, 0, &ins, &nin) == 0) {
        ok(rt_check(ctx, c.mod, g, ins, nin, 1e-4, 1e-5, NULL) == 1, "the arena's module agrees with the interpreter");
        interp_free_outputs(ins, nin);
    }
    compile_fx_free(&c);
    graph_free(g);
    mi_mem_set_huge(true, MI_MEM_HUGE_MIN);
}

static void cache_reuse(void) {
    MiMemCache *c = mi_mem_cache_new(64 * MB);
    unsigned char *p = mi_mem_cache_alloc(c, MB, false);
    if (!ok(p != NULL, "a 1 MiB block from a cache")) return;
    memset(p, 0xab, MB);
    mi_mem_free(p);
    MiMemCacheStats st = mi_mem_cache_stats(c);
    ok(st.kept_blocks == 1 && st.kept_bytes == MB && st.misses == 1 && st.hits == 0 && st.out_blocks == 0,
       "freed, it is kept (1 block, 1 MiB, 1 miss, none out)");
    unsigned char *q = mi_mem_cache_alloc(c, MB - 100, true);
    ok(q == p, "a request of the same size class gets the same block back");
    ok(q && all_zero(q, MB - 100), "zero-filled when asked, though it held 0xab");
    st = mi_mem_cache_stats(c);
    ok(st.hits == 1 && st.kept_blocks == 0 && st.out_blocks == 1, "1 hit, nothing kept, 1 out");
    unsigned char *r = mi_mem_cache_alloc(c, MB + 100, false);
    ok(r != NULL && r != q, "1 MiB + 100 bytes is the next class: a new block");
    mi_mem_free(q);
    mi_mem_free(q);   /* twice: ignored */
    is_int(mi_mem_cache_stats(c).kept_blocks, 1, "a block freed twice is kept once");
    void *s = mi_mem_cache_alloc(c, 1000, false);
    st = mi_mem_cache_stats(c);
    ok(s && st.misses == 2 && st.hits == 1, "a request under 256 KiB bypasses the cache");
    mi_mem_free(s);
    is_int(mi_mem_cache_stats(c).kept_blocks, 1, "and its free does not reach it");
    is_int((int)(mi_mem_cache_trim(c, 0) / 1024), 1024, "trim(0) releases the kept 1 MiB");
    is_int(mi_mem_cache_stats(c).kept_blocks, 0, "nothing kept after trim");
    mi_mem_free(r);
    mi_mem_cache_close(c);
    MiMemCache *off = mi_mem_cache_new(0);
    void *o = mi_mem_cache_alloc(off, MB, false);
    mi_mem_free(o);
    ok(mi_mem_cache_stats(off).kept_blocks == 0 && mi_mem_cache_stats(off).misses == 0, "a cache of limit 0 keeps nothing");
    mi_mem_cache_close(off);
    mi_mem_cache_close(NULL);
    void *z = mi_mem_cache_alloc(NULL, MB, false);
    ok(z && mi_mem_kind(z) == MI_MEM_MALLOC, "no cache: a plain mi_mem_alloc block");
    mi_mem_free(z);
}

static void cache_bound(void) {
    mi_mem_set_huge(true, MI_MEM_HUGE_PAGE);   /* blocks from 2 MiB are huge */
    MiMemCache *c = mi_mem_cache_new(3 * MB);
    void *a = mi_mem_cache_alloc(c, MB, false), *b = mi_mem_cache_alloc(c, MB, false);
    unsigned char *h = mi_mem_cache_alloc(c, 2 * MB, false), *big = mi_mem_cache_alloc(c, 4 * MB, false);
    if (!ok(a && b && h && big, "four blocks of 1, 1, 2 and 4 MiB")) return;
    memset(h, 1, 2 * MB);
    memset(big, 1, 4 * MB);
    mi_mem_free(a);
    mi_mem_free(b);
    mi_mem_free(h);
    MiMemCacheStats st = mi_mem_cache_stats(c);
    ok(st.kept_bytes == 3 * MB && st.kept_blocks == 2 && st.trimmed_bytes == MB,
       "limit 3 MiB: keeping the 2 MiB block released the oldest 1 MiB one");
    mi_mem_free(big);
    st = mi_mem_cache_stats(c);
    ok(st.kept_bytes == 3 * MB && st.kept_blocks == 2, "a 4 MiB block, over the limit, is not kept");
    if (have_thp()) ok(!mapped(big), "and is released (its mapping is gone)");
    ok(mi_mem_cache_alloc(c, MB, false) == b, "the kept 1 MiB block is the second one");
    mi_mem_free(b);
    if (have_thp()) ok(mapped(h) && mi_mem_kind(h) == MI_MEM_HUGE, "the kept 2 MiB block is a huge mapping");
    unsigned char *out = mi_mem_cache_alloc(c, 2 * MB, true);
    ok(out == h && all_zero(out, 2 * MB), "it comes back zero-filled");
    mi_mem_cache_close(c);   /* releases b; out is still in use */
    memset(out, 2, 2 * MB);
    ok(out[2 * MB - 1] == 2, "a block out at close stays usable");
    mi_mem_free(out);        /* released now, and the cache with it (ASan: no leak) */
    if (have_thp()) ok(!mapped(out), "freed after close, it is released");
    mi_mem_set_huge(true, MI_MEM_HUGE_MIN);
}

/* four threads allocating and freeing through one cache */
static void *churn(void *arg) {
    MiMemCache *c = arg;
    for (int i = 0; i < 200; i++) {
        size_t n = (size_t)(1 + i % 3) * 300 * 1024;
        unsigned char *p = mi_mem_cache_alloc(c, n, true);
        if (!p || p[n - 1] != 0) return (void *)1;
        p[0] = p[n - 1] = 7;
        mi_mem_free(p);
    }
    return NULL;
}

static void cache_threads(void) {
    MiMemCache *c = mi_mem_cache_new(4 * MB);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, churn, c);
    bool good = true;
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(t[i], &r);
        good = good && r == NULL;
    }
    MiMemCacheStats st = mi_mem_cache_stats(c);
    ok(good && st.hits + st.misses == 800 && st.out_blocks == 0 && st.kept_bytes <= 4 * MB,
       "4 threads x 200 requests: every block zero-filled, all counted, none out, limit kept");
    mi_mem_cache_close(c);
}

int main(void) {
    environment();   /* first: each child has made no block yet */
    small_blocks();
    huge_blocks();
    fallbacks();
    cache_reuse();
    cache_bound();
    cache_threads();
    MiCtx *ctx = mi_ctx_new();
    runtime_uses_it(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
