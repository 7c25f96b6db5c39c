/* mem.c — the one allocator of tensor storage (see mem.h): 2 MiB-aligned mmap with
 * madvise(MADV_HUGEPAGE) for large blocks, a 64-byte-aligned malloc for the rest and as the
 * fallback. Every block carries a 32-byte header just before its first byte (in the page before
 * a huge block, which is the mapping's first page), so mi_mem_free needs only the pointer. */
#include "base/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define MEM_MAGIC 0x6d696d656d626c6bULL   /* "mimemblk" */
#define HDR 32

typedef struct MemHdr {
    uint64_t magic;
    uint32_t kind;      /* MiMemKind */
    uint32_t pad;
    void *base;         /* what malloc returned / where the mapping starts */
    size_t len;         /* the mapping's length (huge blocks) */
} MemHdr;

_Static_assert(sizeof(MemHdr) == HDR, "the header is 32 bytes");

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
 * (malloc aligns to 16, so p - base is 32..80); calloc keeps glibc's zero-page shortcut. */
static void *small_alloc(size_t n, bool zero) {
    if (n > SIZE_MAX - 128) return NULL;
    char *base = zero ? calloc(1, n + 96) : malloc(n + 96);
    if (!base) return NULL;
    char *p = (char *)(((uintptr_t)base + HDR + 63) & ~(uintptr_t)63);
    *hdr_of(p) = (MemHdr){MEM_MAGIC, MI_MEM_MALLOC, 0, base, 0};
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
    *hdr_of(p) = (MemHdr){MEM_MAGIC, MI_MEM_HUGE, 0, start, (size_t)(end - start)};
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

void mi_mem_free(void *p) {
    if (!p) return;
    MemHdr h = *hdr_of(p);
    if (h.magic != MEM_MAGIC) return;   /* not ours: leaking beats freeing a stranger */
    if (h.kind == MI_MEM_MALLOC) {
        hdr_of(p)->magic = 0;           /* a second free finds no header */
        free(h.base);
    }
#if defined(__linux__)
    else if (h.kind == MI_MEM_HUGE)
        munmap(h.base, h.len);
#endif
}
