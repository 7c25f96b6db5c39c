/* codegen_mem.c — the C module's memory plan: which storage each intermediate gets, and where
 * that storage lies in one block per compiled module (the arena), reused across calls.
 *
 * Inductor's wrapper (torch/_inductor/codegen/wrapper.py) allocates each buffer at its first
 * writer (AllocateLine), frees it after its last reader (FreeIfNotReusedLine) and hands a freed
 * buffer to a later one with the same reuse key — device, dtype, storage size — (ReuseLine:
 * "buf3 = buf0; del buf0  # reuse"); a kernel whose input dies in it and that writes an output
 * of the same key at the same index takes the input's storage (SchedulerNode.
 * decide_inplace_update; the kernel argument becomes `in_out_ptr0`). Its memory_planning.py
 * then puts the buffers of a call into pools by lifetime. Here: the same two reuse rules give
 * storage slots; each slot's lifetime is the kernels from its first writer to the last reader
 * of its last holder; slots of integer size get byte offsets at compile time (largest first,
 * each at the lowest offset free over its lifetime: slots live at different times share
 * bytes), symbolic ones lie end to end at run time. call() takes the block once per call from
 * a static arena (cg_arena_src) that grows to the largest call and is kept across calls, so a
 * call no longer mallocs, page-faults and frees every intermediate.
 *
 * Example (mlp, batch 4096): buf0 = addmm (2 MB), buf1 = relu(buf0) in place of buf0 (relu
 * reads buf0 at the element it writes and buf0 dies there), buf2 is the output: one 2 MB slot,
 * the arena is 2 MB, and cpp_fused_relu_0(float *restrict buf0) writes buf1 = buf0. */
#include "codegen/codegen_mem.h"

#include <stdlib.h>
#include <string.h>

/* an intermediate with storage of its own in the arena; one whose size an unbacked symbol
 * defined inside the module gives is allocated once it is known (codegen_c.c), not here */
static bool is_intermediate(const IrModule *m, const Buffer *b) {
    return ((b->kind == BUF_COMPUTED && !b->mutates && b->output_index < 0) ||
            (b->kind == BUF_EXTERN && b->output_index < 0 && !b->layout.multi)) &&   /* MultiOutputLayout: no storage */
           !ir_layout_unbacked(m, &b->layout, true);
}

/* Nodes of kernel k, in order (pointer array, malloc'd; count in *nn). */
static const SchedNode **kernel_nodes(const Schedule *s, const SchedKernel *k, int *nn) {
    int n = 0;
    for (int p = 0; p < k->n; p++) n += s->groups[s->order[k->first + p]].n;
    const SchedNode **v = malloc(sizeof *v * (size_t)(n + 1));
    n = 0;
    for (int p = 0; p < k->n; p++) {
        const SchedGroup *g = &s->groups[s->order[k->first + p]];
        for (int i = 0; i < g->n; i++) v[n++] = &s->nodes[g->nodes[i]];
    }
    *nn = n;
    return v;
}

/* May b (first written by node n of cpp kernel k, whose nodes are v[0..nv)) take a's storage in
 * place? a is read only by n in this kernel, always at the element n writes b, a dies here,
 * same dtype and storage size (Inductor: buffer_reuse_key equal and the read dep's index equal
 * to the write dep's). */
static bool can_inplace(const Schedule *s, const SchedNode **v, int nv, const SchedNode *n, const Buffer *b,
                        const Buffer *a, SymCtx *sy) {
    if (a->layout.dtype != b->layout.dtype || layout_storage_size(sy, &a->layout) != layout_storage_size(sy, &b->layout))
        return false;
    const Dep *w = NULL;
    for (int j = 0; j < n->deps.nwrites; j++)
        if (n->deps.writes[j].buf == b) {
            if (w || n->deps.writes[j].kind != DEP_MEMORY || n->deps.writes[j].scatter) return false;
            w = &n->deps.writes[j];
        }
    if (!w) return false;
    for (int i = 0; i < nv; i++) {
        const DepSet *d = &v[i]->deps;
        for (int j = 0; j < d->nwrites; j++)
            if (d->writes[j].buf == a) return false;
        for (int j = 0; j < d->nreads; j++)
            if (d->reads[j].buf == a && (v[i] != n || d->reads[j].kind != DEP_MEMORY || d->reads[j].index != w->index))
                return false;
    }
    (void)s;
    return true;
}

/* Offsets for slots of integer size: largest first, each at the lowest offset where it meets no
 * placed slot live at the same time (a first fit over the placed slots sorted by offset). */
static void pack(CgMemPlan *p) {
    int n = p->nslots, *ord = malloc(sizeof(int) * (size_t)(n + 1)), *placed = malloc(sizeof(int) * (size_t)(n + 1)), np = 0;
    int64_t *sz = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        sym_is_int(p->size[i], &sz[i]);
        sz[i] = (sz[i] + 63) / 64 * 64;
        ord[i] = i;
    }
    for (int i = 1; i < n; i++)   /* insertion sort: size descending, then slot order */
        for (int j = i; j > 0 && sz[ord[j]] > sz[ord[j - 1]]; j--) { int t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t; }
    p->total = 0;
    for (int i = 0; i < n; i++) {
        int x = ord[i];
        int64_t at = 0;
        for (int j = 0; j < np; j++) {   /* placed is kept sorted by offset */
            int y = placed[j];
            if (p->last[y] < p->first[x] || p->last[x] < p->first[y]) continue;   /* never live together */
            if (at + sz[x] <= p->offset[y]) break;
            if (p->offset[y] + sz[y] > at) at = p->offset[y] + sz[y];
        }
        p->offset[x] = at;
        int j = np++;
        while (j > 0 && p->offset[placed[j - 1]] > at) { placed[j] = placed[j - 1]; j--; }
        placed[j] = x;
        if (at + sz[x] > p->total) p->total = at + sz[x];
    }
    free(ord);
    free(placed);
    free(sz);
}

CgMemPlan *cg_mem_plan(const Schedule *s) {
    const IrModule *m = s->ir;
    SymCtx *sy = m->ctx->sym;
    int nb = m->nbufs;
    CgMemPlan *p = calloc(1, sizeof *p);
    p->nbufs = nb;
    p->slot = malloc(sizeof(int) * (size_t)(nb + 1));
    p->inplace_of = malloc(sizeof(int) * (size_t)(nb + 1));
    p->reuse_of = malloc(sizeof(int) * (size_t)(nb + 1));
    int *last = malloc(sizeof(int) * (size_t)(nb + 1)), *holder = malloc(sizeof(int) * (size_t)(nb + 1));
    for (int i = 0; i < nb; i++) { p->slot[i] = p->inplace_of[i] = p->reuse_of[i] = -1; last[i] = -1; }
    /* lifetimes in kernels: a kernel's groups share one function of restrict pointers, so
     * storage passes on only between kernels (or in place, with one argument for both) */
    for (int k = 0; k < s->nkernels; k++) {
        int nv;
        const SchedNode **v = kernel_nodes(s, &s->kernels[k], &nv);
        for (int i = 0; i < nv; i++) {
            /* a NonOwningLayout slice lives in its ConcatKernel's storage (ir_store_target) */
            for (int r = 0; r < v[i]->deps.nreads; r++) last[ir_store_target(v[i]->deps.reads[r].buf)->id] = k;
            for (int w = 0; w < v[i]->deps.nwrites; w++) last[ir_store_target(v[i]->deps.writes[w].buf)->id] = k;
        }
        free(v);
    }
    int cap = 16, *freed = malloc(sizeof(int) * (size_t)(nb + 1)), nfreed = 0;
    p->size = malloc(sizeof(Expr *) * (size_t)cap);
    p->first = malloc(sizeof(int) * (size_t)cap);
    p->last = malloc(sizeof(int) * (size_t)cap);
    DType *sdt = malloc(sizeof(DType) * (size_t)cap);
    Expr **selems = malloc(sizeof(Expr *) * (size_t)cap);
    for (int k = 0; k < s->nkernels; k++) {
        const SchedKernel *kn = &s->kernels[k];
        int nv;
        const SchedNode **v = kernel_nodes(s, kn, &nv);
        for (int i = 0; i < nv; i++)
            for (int w = 0; w < v[i]->deps.nwrites; w++) {
                const Buffer *b = v[i]->deps.writes[w].buf;
                if (b->alias_of) b = b->alias_of;   /* a slice: allocate the cat's storage here */
                if (!is_intermediate(m, b) || p->slot[b->id] >= 0) continue;
                int sl = -1;
                if (!kn->is_extern)   /* in place of an input that dies in this kernel */
                    for (int r = 0; r < v[i]->deps.nreads && sl < 0; r++) {
                        const Buffer *a = v[i]->deps.reads[r].buf;
                        if (a != b && p->slot[a->id] >= 0 && holder[p->slot[a->id]] == a->id && last[a->id] == k &&
                            can_inplace(s, v, nv, v[i], b, a, sy)) {
                            sl = p->slot[a->id];
                            p->inplace_of[b->id] = a->id;
                        }
                    }
                Expr *el = layout_storage_size(sy, &b->layout);
                for (int f = 0; f < nfreed && sl < 0; f++)   /* a dead buffer's storage, same key */
                    if (sdt[freed[f]] == b->layout.dtype && selems[freed[f]] == el) {
                        sl = freed[f];
                        p->reuse_of[b->id] = holder[sl];
                        freed[f] = freed[--nfreed];
                    }
                if (sl < 0) {   /* fresh storage */
                    if (p->nslots == cap) {
                        cap *= 2;
                        p->size = realloc(p->size, sizeof(Expr *) * (size_t)cap);
                        p->first = realloc(p->first, sizeof(int) * (size_t)cap);
                        p->last = realloc(p->last, sizeof(int) * (size_t)cap);
                        sdt = realloc(sdt, sizeof(DType) * (size_t)cap);
                        selems = realloc(selems, sizeof(Expr *) * (size_t)cap);
                    }
                    sl = p->nslots++;
                    sdt[sl] = b->layout.dtype;
                    selems[sl] = el;
                    /* + 1 byte: a zero-element buffer still gets an address of its own */
                    p->size[sl] = sym_add(sy, sym_mul(sy, el, sym_int(sy, dtype_size(b->layout.dtype))), sym_int(sy, 1));
                    p->first[sl] = k;
                }
                p->slot[b->id] = sl;
                holder[sl] = b->id;
            }
        free(v);
        for (int i = 0; i < nb; i++)   /* storage whose holder died in this kernel is free again */
            if (last[i] == k && p->slot[i] >= 0 && holder[p->slot[i]] == i) {
                p->last[p->slot[i]] = k;
                freed[nfreed++] = p->slot[i];
            }
    }
    p->offset = calloc((size_t)p->nslots + 1, sizeof(int64_t));
    p->packed = p->nslots <= 4096;
    for (int i = 0; i < p->nslots && p->packed; i++) p->packed = sym_is_int(p->size[i], NULL);
    if (p->packed) pack(p);
    free(last);
    free(holder);
    free(freed);
    free(sdt);
    free(selems);
    return p;
}

void cg_mem_plan_free(CgMemPlan *p) {
    if (!p) return;
    free(p->slot);
    free(p->inplace_of);
    free(p->reuse_of);
    free(p->size);
    free(p->first);
    free(p->last);
    free(p->offset);
    free(p);
}

bool cg_mem_inplace_here(const CgMemPlan *p, int b, const int *ids, int nids) {
    if (!p || p->inplace_of[b] < 0) return false;
    for (int q = 0; q < nids; q++)
        if (ids[q] == p->inplace_of[b]) return true;
    return false;
}

/* The arena a call() takes its intermediates from: one block, grown to the largest request,
 * kept across calls, freed when the module is unloaded. A call made while another holds it
 * (two threads calling one module) gets a block of its own, freed on return. The blocks come
 * from the runtime's allocator (base/mem.h: 2 MiB pages for a large arena) through
 * `mi_mem_hooks`, which the runtime fills in when it loads the module; a module loaded by
 * anyone else finds them empty and uses aligned_alloc / free. */
const char *cg_arena_src =
    "/* the module's arena (core/codegen/codegen_mem.c): intermediates live in one block reused across calls */\n"
    "typedef struct mi_mem_hooks_t { void *(*alloc)(size_t); void (*free)(void *); } mi_mem_hooks_t;\n"
    "mi_mem_hooks_t mi_mem_hooks;   /* the runtime's allocator (base/mem.h), set at load */\n"
    "__attribute__((unused)) static char *mi_big_alloc(size_t n) {\n"
    "    return mi_mem_hooks.alloc ? (char *)mi_mem_hooks.alloc(n) : (char *)aligned_alloc(64, n);\n}\n"
    "__attribute__((unused)) static void mi_big_free(void *p) {\n"
    "    if (mi_mem_hooks.free) mi_mem_hooks.free(p); else free(p);\n}\n"
    "typedef struct mi_arena { char *p; size_t cap; int busy; } mi_arena;\n"
    "__attribute__((unused)) static char *mi_arena_take(mi_arena *a, size_t need) {\n"
    "    need = (need + 63) / 64 * 64 + 64;\n"
    "    if (__atomic_exchange_n(&a->busy, 1, __ATOMIC_ACQUIRE)) return mi_big_alloc(need);\n"
    "    if (a->cap < need) {\n"
    "        mi_big_free(a->p);\n"
    "        a->p = mi_big_alloc(need);\n"
    "        a->cap = a->p ? need : 0;\n"
    "        if (!a->p) { __atomic_store_n(&a->busy, 0, __ATOMIC_RELEASE); return NULL; }\n"
    "    }\n"
    "    return a->p;\n}\n"
    "__attribute__((unused)) static void mi_arena_give(mi_arena *a, char *p) {\n"
    "    if (p == a->p) __atomic_store_n(&a->busy, 0, __ATOMIC_RELEASE);\n"
    "    else mi_big_free(p);\n}\n\n";
