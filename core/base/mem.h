/* mem.h — the one allocator of tensor storage: every CPU tensor's data (tensor.c), a compiled
 * module's per-call outputs (core/runtime/runtime.c) and its arena of intermediates (the module
 * calls back through mi_mem_hooks, set when the runtime loads it) come from mi_mem_alloc.
 *
 * Large blocks (>= the threshold, 32 MiB by default) are their own mmap, 2 MiB-aligned and
 * rounded up to whole 2 MiB pages, with madvise(MADV_HUGEPAGE), as c10's alloc_cpu does under
 * THP_MEM_ALLOC_ENABLE: a kernel writing a fresh 64 MB output then faults 32 huge pages instead
 * of 16 384 small ones (the time a fresh output costs is mostly these faults). Why 32 MiB and
 * not c10's 2 MiB: it is glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
 * Below it, once a block of that size was freed, glibc's malloc serves the next one from its
 * heap, pages already faulted in, which costs nothing; a mapping of its own would fault (and the
 * kernel zero) every page on every call (reductions' 16 MB output allocated per call: 0.62 ms
 * through malloc, 1.25 ms through huge pages, 2 threads). From 32 MiB on glibc maps fresh 4 KiB
 * pages every time. Below the threshold, where huge pages are turned off (MINDUCTOR_HUGEPAGES=0,
 * mi_mem_set_huge) or where mmap / madvise fail (no THP in the kernel, not Linux), the block is a
 * plain 64-byte-aligned malloc. Either way mi_mem_free(p) frees it: a small header before p
 * says which it is. MINDUCTOR_HUGEPAGE_MIN=BYTES sets the threshold.
 *
 * A session (MiCtx.mem_cache) also keeps the blocks of 256 KiB and more that it freed, up to a
 * limit of bytes (MiMemCache below), and gives one back for the next request of its size: what
 * PyTorch's caching allocators do, and glibc's heap for blocks under its mmap threshold. A
 * compiled module's outputs are allocated again on every call (rt_run's tensors, rt_time's
 * fresh outputs); without the cache each call faulted in fresh pages and had the kernel zero
 * them (64 MB: 2.5-10 ms at 2 threads on the device's Xeon, bench/README.md), with it a call
 * after the first writes pages already mapped. */
#ifndef MI_MEM_H
#define MI_MEM_H

#include <stdbool.h>
#include <stddef.h>

#define MI_MEM_HUGE_PAGE ((size_t)2 << 20)
#define MI_MEM_HUGE_MIN ((size_t)32 << 20)   /* the default threshold */

typedef enum { MI_MEM_MALLOC = 1, MI_MEM_HUGE = 2 } MiMemKind;

/* n bytes, 64-byte aligned (2 MiB-aligned when huge), zero-filled when `zero`; NULL when out of
 * memory. mi_mem_alloc(0, ...) returns a valid block of 0 usable bytes. */
void *mi_mem_alloc(size_t n, bool zero);
/* Frees a block of mi_mem_alloc (NULL: nothing); a block of a cache goes back to it. */
void mi_mem_free(void *p);
/* How block p was made (MI_MEM_MALLOC or MI_MEM_HUGE), 0 for NULL. */
MiMemKind mi_mem_kind(const void *p);
/* Huge pages on or off and the size from which they are used (0: keep the current one). The
 * default is on from MI_MEM_HUGE_MIN, unless the environment says MINDUCTOR_HUGEPAGES=0 or
 * MINDUCTOR_HUGEPAGE_MIN=BYTES (read once, on the first allocation or call here). Returns whether huge pages were on before. Blocks already made
 * are freed the way they were made. */
bool mi_mem_set_huge(bool on, size_t threshold);
/* For tests: replaces madvise (NULL restores it), so that the fallback path of a failing
 * madvise can be exercised on a machine where it succeeds. */
void mi_mem_set_advise(int (*advise)(void *addr, size_t len, int advice));

/* A cache of freed blocks, one per session (no global state): mi_mem_cache_alloc(c, n, zero)
 * takes a kept block of n's size class (whole 2 MiB pages for huge blocks, 64 KiB otherwise)
 * or makes one with mi_mem_alloc; mi_mem_free of such a block gives it back to c, which keeps
 * it while c is open and the kept bytes stay within the limit (the oldest kept blocks are
 * released first to make room), else releases it. Requests under MI_MEM_CACHE_MIN (glibc's heap
 * reuses those itself) and a cache of limit 0 go straight to mi_mem_alloc. Thread-safe. A
 * block made through c may outlive it: mi_mem_cache_close releases the kept blocks, and the
 * blocks still out are released when freed; the cache's memory goes with the last of them.
 * Example: two calls of a module writing a 64 MB output: the first maps it, the second gets the
 * same block back (stats: 1 miss, 1 hit). */
#define MI_MEM_CACHE_MIN ((size_t)256 << 10)
#define MI_MEM_CACHE_LIMIT ((size_t)1 << 30)   /* the default limit: 1 GiB */
typedef struct MiMemCache MiMemCache;
typedef struct MiMemCacheStats {
    size_t hits, misses;       /* requests served from kept blocks / made fresh */
    size_t trimmed_bytes;      /* bytes released to make room, by trim or close */
    size_t kept_bytes, limit;
    int kept_blocks;
    long out_blocks;           /* blocks of the cache in use */
} MiMemCacheStats;
/* A cache keeping at most limit bytes; NULL when out of memory. */
MiMemCache *mi_mem_cache_new(size_t limit);
/* MINDUCTOR_MEM_CACHE=BYTES when set (0: no caching), else MI_MEM_CACHE_LIMIT or an eighth of
 * the machine's memory, whichever is less. */
size_t mi_mem_cache_default_limit(void);
/* n bytes as mi_mem_alloc(n, zero) gives them (a kept block is memset when zero); c NULL:
 * mi_mem_alloc. */
void *mi_mem_cache_alloc(MiMemCache *c, size_t n, bool zero);
/* Releases the oldest kept blocks until at most keep bytes stay; returns the bytes released. */
size_t mi_mem_cache_trim(MiMemCache *c, size_t keep);
MiMemCacheStats mi_mem_cache_stats(MiMemCache *c);
/* The session's end: releases the kept blocks; later frees release theirs. NULL: nothing. */
void mi_mem_cache_close(MiMemCache *c);

/* What a generated module exports as `mi_mem_hooks` (core/codegen/codegen_mem.c): the runtime
 * fills it in at load so the module's arena comes from mi_mem_alloc; left empty (a module loaded
 * by someone else), the module uses aligned_alloc / free. */
typedef struct MiMemHooks {
    void *(*alloc)(size_t n);
    void (*free)(void *p);
} MiMemHooks;
/* mi_mem_alloc(n, false): the form MiMemHooks.alloc takes. */
void *mi_mem_alloc_raw(size_t n);

#endif
