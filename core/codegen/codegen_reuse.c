/* codegen_reuse.c — kernels with identical source are defined once (Inductor's
 * PythonWrapperCodegen.src_to_kernel). Runs after scheduling (compile_fx's scheduling stage),
 * before codegen_c / codegen_cuda: each generated kernel is emitted by the backend of
 * ctx->target, its text made canonical (comments dropped, the kernel's name and the names of the
 * buffers it takes replaced by positions, as Inductor's kernels name them in_ptr0, out_ptr0),
 * and a kernel whose canonical text equals an earlier one's is linked to it (same_as). Inductor
 * compares the source with the kernel name still a placeholder and calls the earlier name: the
 * rotary embedding of q and of k in a LLaMA block is one cpp_fused_..._1 called twice. */
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

int codegen_reuse_kernels(MiCtx *ctx, Schedule *s) {
    int linked = 0;
    for (int i = 0; i < s->nbranches; i++)
        for (int b = 0; b < 2; b++)
            if (s->branches[i].s[b]) linked += codegen_reuse_kernels(ctx, s->branches[i].s[b]);
    char **canon = mi_xcalloc((size_t)s->nkernels + 1, sizeof(char *));
    CgMemPlan *mem = ctx->target == MI_DEV_CUDA ? NULL : cg_mem_plan(s);
    BufNames names;
    bufnames_init(&names, s->ir);
    for (int k = 0; k < s->nkernels; k++) {
        SchedKernel *kn = &s->kernels[k];
        kn->same_as = -1;
        if (kn->is_extern || kn->combo) continue;   /* a combo kernel is emitted whole (cu_emit_combo) */
        char *src = kernel_source(ctx, s, kn, mem);
        if (!src) continue;
        canon[k] = canonical(&names, src, kn->name);
        free(src);
        for (int j = 0; j < k && kn->same_as < 0; j++)
            if (canon[j] && s->kernels[j].same_as < 0 && !strcmp(canon[j], canon[k])) kn->same_as = j;
        linked += kn->same_as >= 0;
    }
    for (int k = 0; k < s->nkernels; k++) free(canon[k]);
    free(canon);
    bufnames_free(&names);
    cg_mem_plan_free(mem);
    sched_name_kernels(s);
    return linked;
}

int codegen_num_definitions(const Schedule *s) {
    int n = 0;
    for (int k = 0; k < s->nkernels; k++) n += !s->kernels[k].is_extern && s->kernels[k].same_as < 0;
    for (int i = 0; i < s->nbranches; i++)
        for (int b = 0; b < 2; b++)
            if (s->branches[i].s[b]) n += codegen_num_definitions(s->branches[i].s[b]);
    return n;
}
