/* codegen_reuse.c — kernels with identical source are defined once (Inductor's
 * PythonWrapperCodegen.src_to_kernel). Runs after scheduling (compile_fx's scheduling stage),
 * before codegen_c / codegen_cuda: each generated kernel is emitted by the backend of
 * ctx->target, its text made canonical (comments dropped, the kernel's name and the names of the
 * buffers it takes replaced by positions, as Inductor's kernels name them in_ptr0, out_ptr0),
 * and a kernel whose canonical text equals an earlier one's is linked to it (same_as). Inductor
 * compares the source with the kernel name still a placeholder and calls the earlier name: the
 * rotary embedding of q and of k in a LLaMA block is one cpp_fused_..._1 called twice. A cond's
 * branches are generated into the same wrapper (graph.py codegen_subgraph), so the link crosses
 * schedules: the gradient sums both branches of a cond's backward compute are one kernel. */
#include "codegen/codegen_reuse.h"
#include "codegen/codegen_cuda_kernel.h"
#include "codegen/codegen_kernel.h"
#include "codegen/codegen_mem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The module's buffer names in an open-addressing table (FNV-1a over the name's bytes), so that
 * canonical() finds the buffer an identifier names in O(1) instead of a scan of every buffer
 * per identifier (which made codegen_reuse_kernels O(source x buffers): 9 s of a 10 000-node
 * chain's scheduling stage). slot[h] = buffer index + 1 (0: empty); pos[b] = buffer b's
 * position in the kernel being made canonical (-1: not used yet), reset after each kernel. */
typedef struct BufNames {
    const IrModule *m;
    int *slot, cap;
    int *pos;
} BufNames;

static uint64_t name_hash(const char *w, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)w[i]) * 1099511628211ull;
    return h;
}

/* The table of m's buffers; a name that two buffers share maps to the first (as the scan did). */
static void bufnames_init(BufNames *t, const IrModule *m) {
    t->m = m;
    t->cap = 16;
    while (t->cap < 2 * m->nbufs + 16) t->cap *= 2;
    t->slot = mi_xcalloc((size_t)t->cap, sizeof *t->slot);
    t->pos = mi_xcalloc((size_t)m->nbufs + 1, sizeof *t->pos);
    for (int i = 0; i < m->nbufs; i++) {
        const char *b = m->bufs[i]->name;
        size_t n = strlen(b);
        t->pos[i] = -1;
        for (size_t h = name_hash(b, n) & (size_t)(t->cap - 1);; h = (h + 1) & (size_t)(t->cap - 1)) {
            if (!t->slot[h]) { t->slot[h] = i + 1; break; }
            if (!strcmp(m->bufs[t->slot[h] - 1]->name, b)) break;
        }
    }
}

static void bufnames_free(BufNames *t) {
    free(t->slot);
    free(t->pos);
}

/* The buffer named w[0..n), -1 when none is. */
static int bufnames_find(const BufNames *t, const char *w, size_t n) {
    for (size_t h = name_hash(w, n) & (size_t)(t->cap - 1); t->slot[h]; h = (h + 1) & (size_t)(t->cap - 1)) {
        const char *b = t->m->bufs[t->slot[h] - 1]->name;
        if (!strncmp(b, w, n) && b[n] == 0) return t->slot[h] - 1;
    }
    return -1;
}

/* The position of identifier w[0..n) among the buffers the kernel used so far, in order of
 * first use (used[0..*nn), a new one added while *nn < max); -1 when it is no buffer's name,
 * or a new one past max. */
static int buffer_pos(BufNames *t, const char *w, size_t n, int *used, int *nn, int max) {
    int b = bufnames_find(t, w, n);
    if (b < 0) return -1;
    if (t->pos[b] >= 0) return t->pos[b];
    if (*nn >= max) return -1;
    used[*nn] = b;
    return t->pos[b] = (*nn)++;
}

/* src without comments, `kname` as KERNEL_NAME and each buffer name (also as the tail of a
 * local's name: vo_buf4) as arg<position of first use>: "static void cpp_fused_add_1(const float *restrict buf3, float *restrict buf4, ...)"
 * and the same kernel over buf5, buf6 both become "static void KERNEL_NAME(const float
 * *restrict arg0, float *restrict arg1, ...)". malloc'd. */
static char *canonical(BufNames *t, const char *src, const char *kname) {
    StrBuf sb;
    sb_init(&sb);
    int used[512];
    int nn = 0;
    size_t kl = strlen(kname);
    for (const char *p = src; *p;) {
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
            continue;
        }
        if (ident_char(*p) && (p == src || !ident_char(p[-1]))) {
            size_t n = 0;
            while (ident_char(p[n])) n++;
            int pos = -1;
            size_t cut = 0;   /* a local named after a buffer: vo_buf4, loc_buf7 */
            if (n == kl && !memcmp(p, kname, n)) { sb_put(&sb, "KERNEL_NAME"); p += n; continue; }
            for (size_t c = 0; c < n && pos < 0; c++)
                if ((c == 0 || p[c - 1] == '_') && (pos = buffer_pos(t, p + c, n - c, used, &nn, 512)) >= 0) cut = c;
            if (pos >= 0) {   /* plain appends: sb_printf's "%.*s" was a third of this function */
                char num[16];
                snprintf(num, sizeof num, "arg%d", pos);
                sb_putn(&sb, p, cut);
                sb_put(&sb, num);
            } else sb_putn(&sb, p, n);
            p += n;
            continue;
        }
        sb_putc(&sb, *p++);
    }
    for (int i = 0; i < nn; i++) t->pos[used[i]] = -1;
    return sb_take(&sb);
}

/* Drop the lines with a CUDA kernel's PDL instructions (MI_GDC_LAUNCH, MI_PDL_WAIT): they depend
 * on the kernel's neighbours in the launch order, and a kernel defined once for several groups
 * gets those of all of them (codegen_cuda_kernel.c, pdl_neighbours). */
static void strip_pdl_lines(StrBuf *sb) {
    if (!sb->s) return;
    char *w = sb->s;
    for (const char *p = sb->s; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        bool pdl = false;
        for (const char *q = p; q < p + n && !pdl; q++) pdl = !strncmp(q, "MI_GDC_LAUNCH();", 16) || !strncmp(q, "MI_PDL_WAIT", 11);
        if (!pdl) { memmove(w, p, n); w += n; }
        p += n;
    }
    *w = 0;
    sb->len = (size_t)(w - sb->s);
}

/* Kernel k of s as the backend writes it; NULL when it cannot (the ctx error is cleared:
 * codegen reports it). mem: the C module's memory plan (its in-place arguments are part of the
 * source), NULL on CUDA. */
static char *kernel_source(MiCtx *ctx, const Schedule *s, const SchedKernel *k, const CgMemPlan *mem) {
    StrBuf sb;
    sb_init(&sb);
    int rc = 0;
    if (ctx->target == MI_DEV_CUDA) {
        for (int p = 0; p < k->n && rc == 0; p++) rc = cu_emit_kernel(ctx, s, &s->groups[s->order[k->first + p]], &sb);
        if (rc == 0) strip_pdl_lines(&sb);
    }
    else rc = cg_emit_kernel(ctx, s, k, mem, &sb);
    if (rc < 0) {
        mi_clear_err(ctx);
        sb_free(&sb);
        return NULL;
    }
    return sb_take(&sb);
}

/* The distinct kernel sources met so far, over the schedule and its cond branches. */
typedef struct ReuseDefs {
    struct { char *canon; Schedule *s; int k; } *d;
    int n, cap;
    int linked;
} ReuseDefs;

/* The branch schedules of the cond (or while loop) that extern kernel k of s calls, NULL when
 * it calls none. */
static const SchedBranch *branch_of_kernel(const Schedule *s, const SchedKernel *k) {
    if (!k->is_extern) return NULL;
    const SchedGroup *g = &s->groups[s->order[k->first]];
    return sched_branch_of(s, s->nodes[g->nodes[0]].buf);
}

static void reuse_walk(MiCtx *ctx, Schedule *s, ReuseDefs *r);

/* Both branches of b, true then false, as codegen_subgraph generates them. */
static void reuse_branches(MiCtx *ctx, const SchedBranch *b, ReuseDefs *r) {
    for (int k = 0; k < 2; k++)
        if (b->s[k]) reuse_walk(ctx, b->s[k], r);
}

/* Link the kernels of s in the order Inductor generates them into one wrapper: s's kernels in
 * order, a cond's branches at the cond's call (graph.py codegen_subgraph: the subgraph's
 * scheduler generates into the parent's wrapper_code, whose src_to_kernel it shares). A kernel
 * whose canonical source equals an earlier one's is linked to it (same_as, and same_sched when
 * that one is another schedule's). */
static void reuse_walk(MiCtx *ctx, Schedule *s, ReuseDefs *r) {
    CgMemPlan *mem = ctx->target == MI_DEV_CUDA ? NULL : cg_mem_plan(s);
    BufNames names;
    bufnames_init(&names, s->ir);
    bool *seen = mi_xcalloc((size_t)s->nbranches + 1, sizeof *seen);
    for (int k = 0; k < s->nkernels; k++) {
        SchedKernel *kn = &s->kernels[k];
        kn->same_as = -1;
        kn->same_sched = NULL;
        kn->shared = false;
        const SchedBranch *b = branch_of_kernel(s, kn);
        if (b) {
            seen[b - s->branches] = true;
            reuse_branches(ctx, b, r);
        }
        if (kn->is_extern || kn->combo) continue;   /* a combo kernel is emitted whole (cu_emit_combo) */
        char *src = kernel_source(ctx, s, kn, mem);
        if (!src) continue;
        char *canon = canonical(&names, src, kn->name);
        free(src);
        int j = 0;
        while (j < r->n && strcmp(r->d[j].canon, canon)) j++;
        if (j < r->n) {
            free(canon);
            kn->same_as = r->d[j].k;
            if (r->d[j].s != s) {
                kn->same_sched = r->d[j].s;
                kn->shared = r->d[j].s->kernels[r->d[j].k].shared = true;
            }
            r->linked++;
            continue;
        }
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 16;
            r->d = mi_xrealloc(r->d, sizeof *r->d * (size_t)r->cap);
        }
        r->d[r->n].canon = canon;
        r->d[r->n].s = s;
        r->d[r->n++].k = k;
    }
    for (int i = 0; i < s->nbranches; i++)   /* a cond no extern kernel calls (not expected) */
        if (!seen[i]) reuse_branches(ctx, &s->branches[i], r);
    free(seen);
    bufnames_free(&names);
    cg_mem_plan_free(mem);
}

/* sched_name_kernels over s and its branches. A kernel linked to a schedule named after its
 * own (a parent's kernel after the cond, linked to a branch's) is named on a second call. */
static void name_tree(Schedule *s) {
    sched_name_kernels(s);
    for (int i = 0; i < s->nbranches; i++)
        for (int b = 0; b < 2; b++)
            if (s->branches[i].s[b]) name_tree(s->branches[i].s[b]);
}

int codegen_reuse_kernels(MiCtx *ctx, Schedule *s) {
    ReuseDefs r = {0};
    reuse_walk(ctx, s, &r);
    for (int i = 0; i < r.n; i++) free(r.d[i].canon);
    free(r.d);
    name_tree(s);
    name_tree(s);   /* the definitions are named now: the links to later schedules take their names */
    return r.linked;
}

int codegen_num_definitions(const Schedule *s) {
    int n = 0;
    for (int k = 0; k < s->nkernels; k++) n += !s->kernels[k].is_extern && s->kernels[k].same_as < 0;
    for (int i = 0; i < s->nbranches; i++)
        for (int b = 0; b < 2; b++)
            if (s->branches[i].s[b]) n += codegen_num_definitions(s->branches[i].s[b]);
    return n;
}
