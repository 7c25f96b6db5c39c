/* mem.c — the one allocator of tensor storage (see mem.h): 2 MiB-aligned mmap with
 * madvise(MADV_HUGEPAGE) for large blocks, a 64-byte-aligned malloc for the rest and as the
 * fallback, and a session's cache of freed blocks (MiMemCache). Every block carries a 64-byte
 * header just before its first byte (in the page before a huge block, which is the mapping's
 * first page), so mi_mem_free needs only the pointer: it says how the block was made and, for a
 * block of a cache, which cache takes it back. */
#include "base/mem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define MEM_MAGIC 0x6d696d656d626c6bULL   /* "mimemblk" */
#define HDR 64
#define KEPT 0x6b657074u   /* MemHdr.pad of a block a cache keeps ("kept") */

typedef struct MemHdr {
    uint64_t magic;
    uint32_t kind;      /* MiMemKind */
    uint32_t pad;
    void *base;         /* what malloc returned / where the mapping starts */
    size_t len;         /* the mapping's length (huge blocks) */
    size_t cap;         /* usable bytes (blocks of a cache: the size class it is kept under) */
    struct MiMemCache *cache;   /* the cache mi_mem_free gives it back to, NULL: none */
    uint64_t spare[2];
} MemHdr;

_Static_assert(sizeof(MemHdr) == HDR, "the header is 64 bytes");

static int g_huge = -1;                          /* -1: not read from the environment yet */
static size_t g_threshold = MI_MEM_HUGE_MIN;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
static int (*g_advise)(void *, size_t, int) = madvise;
#else
static int (*g_advise)(void *, size_t, int) = NULL;
#endif

/* Huge pages on? Reads MINDUCTOR_HUGEPAGES ("0": off) and MINDUCTOR_HUGEPAGE_MIN (the
 * threshold in bytes) once. */
static bool huge_on(void) {
    int h = __atomic_load_n(&g_huge, __ATOMIC_RELAXED);
    if (h < 0) {
        const char *e = getenv("MINDUCTOR_HUGEPAGES"), *m = getenv("MINDUCTOR_HUGEPAGE_MIN");
        char *end = NULL;
        unsigned long long min = m ? strtoull(m, &end, 10) : 0;
        if (min > 0 && end && *end == '\0') g_threshold = (size_t)min;
        h = !(e && e[0] == '0' && e[1] == '\0');
        __atomic_store_n(&g_huge, h, __ATOMIC_RELAXED);
    }
    return h;
}

bool mi_mem_set_huge(bool on, size_t threshold) {
    bool was = huge_on();   /* reads the environment first, so it cannot undo this later */
    __atomic_store_n(&g_huge, on ? 1 : 0, __ATOMIC_RELAXED);
    if (threshold) g_threshold = threshold;
    return was;
}

void mi_mem_set_advise(int (*advise)(void *, size_t, int)) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    g_advise = advise ? advise : madvise;
#else
    g_advise = advise;
#endif
}

static MemHdr *hdr_of(const void *p) { return (MemHdr *)((char *)p - HDR); }

/* malloc'd block: p is the first 64-byte boundary at least HDR bytes past what malloc gave
 * (malloc aligns to 16, so p - base is 64..112); calloc keeps glibc's zero-page shortcut. */
static void *small_alloc(size_t n, bool zero) {
    if (n > SIZE_MAX - 256) return NULL;
    char *base = zero ? calloc(1, n + HDR + 64) : malloc(n + HDR + 64);
    if (!base) return NULL;
    char *p = (char *)(((uintptr_t)base + HDR + 63) & ~(uintptr_t)63);
    *hdr_of(p) = (MemHdr){.magic = MEM_MAGIC, .kind = MI_MEM_MALLOC, .base = base, .cap = n};
    return p;
}

/* Huge block: a mapping of 2 MiB pages, page-aligned at p, one small page before it for the
 * header; what mmap gave beyond that is unmapped again. NULL when mmap or madvise fails. The
 * pages are the kernel's zero pages until written, so `zero` costs nothing. Example: n = 64 MB
 * maps 64 MB + 4 MiB, keeps [p - 4 KiB, p + 64 MB), madvises [p, p + 64 MB). */
static void *huge_alloc(size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    size_t page = (size_t)sysconf(_SC_PAGESIZE), H = MI_MEM_HUGE_PAGE;
    if (page < HDR || page > H || n > SIZE_MAX - 3 * H || !g_advise) return NULL;
    size_t body = (n + H - 1) / H * H, len = body + 2 * H;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    char *p = (char *)(((uintptr_t)base + page + H - 1) & ~(uintptr_t)(H - 1));
    char *start = p - page, *end = p + body;
    if (start > base) munmap(base, (size_t)(start - base));
    if (base + len > end) munmap(end, (size_t)(base + len - end));
    if (g_advise(p, body, MADV_HUGEPAGE) != 0) {
        munmap(start, (size_t)(end - start));
        return NULL;
    }
    *hdr_of(p) = (MemHdr){.magic = MEM_MAGIC, .kind = MI_MEM_HUGE, .base = start, .len = (size_t)(end - start), .cap = body};
    return p;
#else
    (void)n;
    return NULL;
#endif
}

void *mi_mem_alloc(size_t n, bool zero) {
    void *p = huge_on() && n >= g_threshold ? huge_alloc(n) : NULL;
    return p ? p : small_alloc(n, zero);
}

void *mi_mem_alloc_raw(size_t n) { return mi_mem_alloc(n, false); }

MiMemKind mi_mem_kind(const void *p) {
    if (!p || hdr_of(p)->magic != MEM_MAGIC) return 0;
    return (MiMemKind)hdr_of(p)->kind;
}

static void cache_put(MiMemCache *c, void *p);

/* The block back to the system, whatever cache it came from. */
static void release(void *p) {
    MemHdr h = *hdr_of(p);
    if (h.kind == MI_MEM_MALLOC) {
        hdr_of(p)->magic = 0;           /* a second free finds no header */
        free(h.base);
    }
#if defined(__linux__)
    else if (h.kind == MI_MEM_HUGE)
        munmap(h.base, h.len);
#endif
}

void mi_mem_free(void *p) {
    if (!p) return;
    MemHdr *h = hdr_of(p);
    if (h->magic != MEM_MAGIC) return;   /* not ours: leaking beats freeing a stranger */
    if (h->cache) cache_put(h->cache, p);
    else release(p);
}

/* ---- a session's cache of freed blocks ----
 * Free blocks are kept in an array, most recently freed last; a request takes the most recent
 * free block of its size class (exact match: the same shapes come back call after call). refs
 * counts the session's hold (until mi_mem_cache_close) plus every block made through the cache,
 * out or kept, so the last of them frees the cache, whichever comes last. */
struct MiMemCache {
    pthread_mutex_t mu;
    size_t limit;        /* most bytes kept */
    size_t kept;         /* bytes in the free list */
    void **free;         /* kept blocks, oldest first */
    int nfree, capfree;
    long refs;
    bool closed;
    MiMemCacheStats st;
};

MiMemCache *mi_mem_cache_new(size_t limit) {
    MiMemCache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->limit = limit;
    c->refs = 1;
    return c;
}

size_t mi_mem_cache_default_limit(void) {
    const char *e = getenv("MINDUCTOR_MEM_CACHE");
    char *end = NULL;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
    if (e && *e && end && *end == '\0') return (size_t)v;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t eighth = pages > 0 && psz > 0 ? (size_t)pages / 8 * (size_t)psz : MI_MEM_CACHE_LIMIT;
    return eighth < MI_MEM_CACHE_LIMIT ? eighth : MI_MEM_CACHE_LIMIT;
}

static void cache_destroy(MiMemCache *c) {
    pthread_mutex_destroy(&c->mu);
    free(c->free);
    free(c);
}

/* Drops one reference (c->mu held); true when that was the last and c must be destroyed. */
static bool cache_unref_locked(MiMemCache *c) { return --c->refs == 0 && c->closed; }

/* Frees the oldest kept blocks until at most `keep` bytes stay (c->mu held). */
static void cache_shrink_locked(MiMemCache *c, size_t keep) {
    int drop = 0;
    while (drop < c->nfree && c->kept > keep) {
        void *p = c->free[drop++];
        c->kept -= hdr_of(p)->cap;
        c->st.trimmed_bytes += hdr_of(p)->cap;
        release(p);
        c->refs--;
    }
    if (drop) memmove(c->free, c->free + drop, (size_t)(c->nfree - drop) * sizeof *c->free);
    c->nfree -= drop;
}

/* The size class of a request of n bytes: whole 2 MiB pages where the block will be huge,
 * whole 64 KiB otherwise (nearby sizes share blocks; a class wastes under 64 KiB / 2 MiB). */
static size_t size_class(size_t n) {
    size_t g = huge_on() && n >= g_threshold ? MI_MEM_HUGE_PAGE : ((size_t)64 << 10);
    return n > SIZE_MAX - g ? n : (n + g - 1) / g * g;
}

void *mi_mem_cache_alloc(MiMemCache *c, size_t n, bool zero) {
    if (!c || n < MI_MEM_CACHE_MIN || c->limit == 0) return mi_mem_alloc(n, zero);
    size_t cls = size_class(n);
    void *p = NULL;
    pthread_mutex_lock(&c->mu);
    for (int i = c->nfree - 1; i >= 0; i--)
        if (hdr_of(c->free[i])->cap == cls) {
            p = c->free[i];
            memmove(c->free + i, c->free + i + 1, (size_t)(c->nfree - i - 1) * sizeof *c->free);
            c->nfree--;
            c->kept -= cls;
            break;
        }
    if (p) c->st.hits++;
    else c->st.misses++;
    pthread_mutex_unlock(&c->mu);
    if (p) {
        hdr_of(p)->pad = 0;   /* out again */
        if (zero) memset(p, 0, n);
        return p;
    }
    p = mi_mem_alloc(cls, zero);
    if (!p) return NULL;
    hdr_of(p)->cap = cls;
    hdr_of(p)->cache = c;
    pthread_mutex_lock(&c->mu);
    c->refs++;
    pthread_mutex_unlock(&c->mu);
    return p;
}

/* mi_mem_free of a block of cache c: kept when c is open and the block fits its limit (the
 * oldest kept blocks go to make room), else released. */
static void cache_put(MiMemCache *c, void *p) {
    size_t cap = hdr_of(p)->cap;
    bool destroy = false;
    pthread_mutex_lock(&c->mu);
    if (hdr_of(p)->pad == KEPT) {   /* freed twice: it is kept already */
        pthread_mutex_unlock(&c->mu);
        return;
    }
    if (!c->closed && cap <= c->limit) {
        if (c->nfree == c->capfree) {
            int nc = c->capfree ? 2 * c->capfree : 16;
            void **nf = realloc(c->free, (size_t)nc * sizeof *nf);
            if (nf) { c->free = nf; c->capfree = nc; }
        }
        if (c->nfree < c->capfree) {
            cache_shrink_locked(c, c->limit - cap);
            hdr_of(p)->pad = KEPT;
            c->free[c->nfree++] = p;
            c->kept += cap;
            p = NULL;
        }
    }
    if (p) {
        release(p);
        destroy = cache_unref_locked(c);
    }
    pthread_mutex_unlock(&c->mu);
    if (destroy) cache_destroy(c);
}

size_t mi_mem_cache_trim(MiMemCache *c, size_t keep) {
    if (!c) return 0;
    pthread_mutex_lock(&c->mu);
    size_t before = c->kept;
    cache_shrink_locked(c, keep);
    size_t freed = before - c->kept;
    pthread_mutex_unlock(&c->mu);
    return freed;
}

MiMemCacheStats mi_mem_cache_stats(MiMemCache *c) {
    MiMemCacheStats s = {0};
    if (!c) return s;
    pthread_mutex_lock(&c->mu);
    s = c->st;
    s.kept_bytes = c->kept;
    s.kept_blocks = c->nfree;
    s.limit = c->limit;
    s.out_blocks = c->refs - c->nfree - (c->closed ? 0 : 1);
    pthread_mutex_unlock(&c->mu);
    return s;
}

void mi_mem_cache_close(MiMemCache *c) {
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    cache_shrink_locked(c, 0);
    c->closed = true;
    bool destroy = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (destroy) cache_destroy(c);
}
