/* sched_kernels.c — from fused groups to generated kernels (Inductor's Scheduler._codegen loop
 * with its flush points, and the kernel names of codegen/common.py get_fused_kernel_name).
 *
 * The fusion rounds of core/scheduler/scheduler.c decide which nodes share one loop nest (a
 * group: Inductor's FusedSchedulerNode / OuterLoopFusedSchedulerNode). What one *generated
 * kernel* holds is a backend matter: Inductor's C++ backend appends every group it is handed to
 * its current kernel group and writes the kernel out (a "flush") only before an extern call or
 * a template, on a device change, or once the kernel has more than MAX_FUSED_KERNEL_ARGS_NUM
 * arguments; the Triton backend writes one kernel per group. So on cpu
 *     extern_mm · {op2} {op3} · extern_mm · {op5}   ->   extern_mm, cpp_fused_0, extern_mm, cpp_fused_1
 * with cpp_fused_0 running op2's loop nest and then op3's. On the GPU the subnodes of a foreach
 * node (core/scheduler/sched_foreach.c) are one combo kernel, cuda_for_fused_N as Triton's
 * triton_for_fused_N, split where ComboKernel's partition would pass 250 read/write
 * dependencies. Kernel names count generated kernels only (Inductor's
 * wrapper.next_kernel_suffix), externs keep their call names. */
#include "scheduler/scheduler.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FUSED_KERNEL_ARGS_NUM 500   /* CppScheduling.MAX_FUSED_KERNEL_ARGS_NUM */
#define COMBO_KERNEL_MAX_NUM_ARGS 250   /* config.combo_kernel_max_num_args (ComboKernel) */

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Distinct buffers the groups order[first..first+n) read or write, counted with a stamp per
 * buffer id (the kernel's argument count: Inductor counts in/out/inplace args the same way). */
static int kernel_args(const Schedule *s, int first, int n, int *stamp, int mark) {
    int na = 0;
    for (int k = first; k < first + n; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        for (int i = 0; i < g->n; i++) {
            const DepSet *d = &s->nodes[g->nodes[i]].deps;
            for (int q = 0; q < d->nreads + d->nwrites; q++) {
                const Buffer *b = q < d->nreads ? d->reads[q].buf : d->writes[q - d->nreads].buf;
                if (stamp[b->id] != mark) { stamp[b->id] = mark; na++; }
            }
        }
    }
    return na;
}

/* "cpp_fused_add_relu_3": the backend prefix, up to six sorted distinct origins, the index */
static const char *fused_name(Schedule *s, const SchedKernel *k, int index) {
    const char *names[64];
    int nn = 0;
    for (int p = k->first; p < k->first + k->n; p++) {
        const SchedGroup *g = &s->groups[s->order[p]];
        for (int i = 0; i < g->n; i++) {
            const Buffer *b = s->nodes[g->nodes[i]].buf;
            for (int o = 0; o < b->norigins; o++) {
                bool dup = false;
                for (int q = 0; q < nn; q++) dup |= strcmp(names[q], b->origins[o]) == 0;
                if (!dup && nn < 64) names[nn++] = b->origins[o];
            }
        }
    }
    qsort(names, nn, sizeof(char *), cmp_str);
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, ir_prefix(s->ir));
    /* CUDA kernels are named cuda_fused_... (core/codegen/codegen_cuda.c), C ones cpp_fused_... */
    sb_put(&sb, s->ir->ctx && s->ir->ctx->target == MI_DEV_CUDA ? "cuda_fused" : "cpp_fused");
    if (k->combo) {   /* a foreach node's kernel: Triton's triton_for_fused_N, no origins */
        sb_free(&sb);
        return arena_printf(&s->arena, "%scuda_for_fused_%d", ir_prefix(s->ir), index);
    }
    for (int i = 0; i < nn && i < 6; i++) {
        sb_putc(&sb, '_');
        for (const char *c = names[i]; *c; c++) sb_putc(&sb, (*c == '.' ? '_' : *c));
    }
    sb_printf(&sb, "_%d", index);
    const char *r = arena_strdup(&s->arena, sb.s);
    sb_free(&sb);
    return r;
}

/* An extern group's call name: "extern_mm", "fallback_embedding" */
static const char *extern_name(Schedule *s, const SchedGroup *g) {
    const Buffer *eb = s->nodes[g->nodes[0]].buf;
    if (eb->ext == EXT_FALLBACK)
        return arena_printf(&s->arena, "%sfallback_%s", ir_prefix(s->ir), eb->norigins ? eb->origins[0] : "op");
    if (eb->ext == EXT_CONCAT)   /* a NopKernelSchedulerNode: no call */
        return arena_printf(&s->arena, "%snop_concat_%s", ir_prefix(s->ir), eb->name);
    if (eb->ext == EXT_MULTI_OUTPUT)   /* "buf4 = buf3[0]": no call, a name for `sched` */
        return arena_printf(&s->arena, "%sextern_multi_output_%s", ir_prefix(s->ir), eb->mo_of->name);
    return arena_printf(&s->arena, "%sextern_%s", ir_prefix(s->ir),
                        eb->ext == EXT_SDPA ? "sdpa" : eb->ext == EXT_COND ? (eb->cond->is_while ? "while_loop" : "cond") : eb->ext == EXT_CONV ? "convolution" : "mm");
}

static bool is_nop_group(const Schedule *s, const SchedGroup *g) {
    const Buffer *b = s->nodes[g->nodes[0]].buf;
    return g->is_extern && b->kind == BUF_EXTERN && b->ext == EXT_CONCAT;
}

/* A NopKernelSchedulerNode (a ConcatKernel) does not flush the open cpp kernel group
 * (Scheduler._codegen flushes only at an extern or template node, and marks a nop run): each
 * nop moves past the kernel groups that follow it, up to the next extern call, so that they
 * stay one kernel (llama's rotary cats: op4, op5 | op6 | op7, op8 is one cpp kernel, then the
 * two nops). It runs no code, and its readers read the storage its inputs wrote in place,
 * earlier in the same kernel function (one pointer: ir_store_target). */
static void defer_nops(Schedule *s) {
    int *held = mi_xmalloc(sizeof(int) * ((size_t)s->norder + 1)), nh = 0, w = 0;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        if (is_nop_group(s, g)) { held[nh++] = s->order[k]; continue; }
        if (g->is_extern)   /* an extern call flushes: the held nops run before it */
            for (int h = 0; h < nh; h++) s->order[w++] = held[h];
        if (g->is_extern) nh = 0;
        s->order[w++] = s->order[k];
    }
    for (int h = 0; h < nh; h++) s->order[w++] = held[h];
    free(held);
}

/* Does expression e name symbol `name`? */
static bool expr_names(const Expr *e, const char *name) {
    const char *used[32];
    int k = e ? sym_free_symbols(e, used, 32) : 0;
    for (int i = 0; i < k && i < 32; i++) if (!strcmp(used[i], name)) return true;
    return false;
}

/* Does group g use symbol `name` (a size, stride or offset of what it writes, a loop range or
 * an index of its bodies): Inductor's get_unbacked_symbol_uses, which orders the node after
 * the one defining the symbol? */
static bool group_uses_sym(const Schedule *s, const SchedGroup *g, const char *name) {
    for (int i = 0; i < g->n; i++) {
        const Buffer *b = s->nodes[g->nodes[i]].buf;
        for (int d = 0; d < b->layout.ndim; d++)
            if (expr_names(b->layout.size[d], name) || expr_names(b->layout.stride[d], name)) return true;
        if (expr_names(b->layout.offset, name)) return true;
        for (int k = 0; b->body && k < b->body->nvars; k++) if (expr_names(b->body->ranges[k], name)) return true;
        for (int k = 0; b->body && k < b->body->nindexes; k++) if (expr_names(b->body->indexes[k], name)) return true;
    }
    return false;
}

/* Per position k of s->order: does a DynamicScalar run right before the group there? An item()
 * defining an unbacked symbol is Inductor's DynamicScalar, an ExternKernelSchedulerNode of its
 * own, which flushes the open cpp kernel. Its place in the order is where fuse_nodes leaves it:
 * nodes sorted by min_order (the DynamicScalar's: the buffers made before it), then
 * topological_sort_schedule; so it runs after the group writing its tensor (if computed here)
 * and before the first group that uses its symbol or that comes later in node order. Example:
 * `s = x.abs().max(); k = n.item(); ones(k) * s` on cpu: the max and x / s form one kernel,
 * k = n.item(), then ones(k) * s and the slice's sum the next (cpu_item_capture_scalar). */
static bool *dynamic_scalar_flushes(const Schedule *s) {
    const IrModule *m = s->ir;
    bool *flush = mi_xcalloc((size_t)s->norder + 1, 1);
    for (int u = 0; u < m->nunbacked; u++) {
        const IrUnbacked *ub = &m->unbacked[u];
        if (ub->dim >= 0) continue;
        int k = 0;
        if (ub->buf->kind != BUF_INPUT)   /* after the group writing its tensor */
            for (int p = 0; p < s->norder; p++) {
                const SchedGroup *g = &s->groups[s->order[p]];
                for (int i = 0; i < g->n; i++)
                    if (s->nodes[g->nodes[i]].buf == ub->buf || ir_store_target(s->nodes[g->nodes[i]].buf) == ub->buf) k = p + 1;
            }
        for (; k < s->norder; k++) {
            const SchedGroup *g = &s->groups[s->order[k]];
            int first = INT32_MAX;
            for (int i = 0; i < g->n; i++) if (s->nodes[g->nodes[i]].buf->id < first) first = s->nodes[g->nodes[i]].buf->id;
            if (first >= ub->order || group_uses_sym(s, g, ub->name)) break;
        }
        if (k < s->norder) flush[k] = true;
    }
    return flush;
}

void sched_make_kernels(Schedule *s) {
    bool cpp = !(s->ir->ctx && s->ir->ctx->target == MI_DEV_CUDA);
    if (cpp) defer_nops(s);
    s->kernels = mi_xcalloc((size_t)s->norder + 1, sizeof(SchedKernel));
    s->nkernels = 0;
    int *stamp = mi_xcalloc((size_t)s->ir->nbufs + 1, sizeof(int)), mark = 0, combo_rw = 0;
    bool *ds_flush = cpp ? dynamic_scalar_flushes(s) : NULL;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        SchedKernel *cur = s->nkernels ? &s->kernels[s->nkernels - 1] : NULL;
        /* join the open cpp kernel group unless it was flushed: an extern on either side, or
         * the group before pushed it past the argument limit */
        bool join = cpp && cur && !cur->is_extern && !g->is_extern && !ds_flush[k] &&
                    kernel_args(s, cur->first, cur->n, stamp, ++mark) <= MAX_FUSED_KERNEL_ARGS_NUM;
        /* GPU: the subnodes of one foreach node are one combo kernel, split where the next
         * would pass the argument limit (ComboKernel._base_horizontal_partition) */
        int c = !cpp && s->combo_of ? s->combo_of[s->order[k]] : -1, rw = c >= 0 ? sched_foreach_rw_count(s, s->order[k]) : 0;
        if (c >= 0 && cur && cur->combo && s->combo_of[s->order[cur->first]] == c && combo_rw + rw <= COMBO_KERNEL_MAX_NUM_ARGS) {
            cur->n++;
            combo_rw += rw;
            continue;
        }
        combo_rw = rw;
        if (join) { cur->n++; continue; }
        s->kernels[s->nkernels++] = (SchedKernel){k, 1, g->is_extern, NULL, c >= 0, -1};
    }
    free(stamp);
    free(ds_flush);
    sched_name_kernels(s);
}

/* Name every kernel: a generated one "cpp_fused_<origins>_<n>" with n counting definitions
 * (wrapper.next_kernel_suffix runs only for a source not seen before), one that reuses an
 * earlier definition (same_as, in same_sched when that is another schedule: NULL until that
 * schedule is named) that kernel's name; the groups take their kernel's name. After
 * codegen_reuse_kernels: cpp_fused_..._1 called twice, then cpp_fused_clone_2. */
void sched_name_kernels(Schedule *s) {
    int index = 0;
    for (int i = 0; i < s->nkernels; i++) {
        SchedKernel *k = &s->kernels[i];
        k->name = k->is_extern ? extern_name(s, &s->groups[s->order[k->first]])
                  : k->same_sched ? k->same_sched->kernels[k->same_as].name
                  : k->same_as >= 0 && k->same_as < i ? s->kernels[k->same_as].name : fused_name(s, k, index++);
        for (int p = k->first; p < k->first + k->n; p++) s->groups[s->order[p]].kernel_name = (char *)k->name;
    }
}

int sched_kernel_of_pos(const Schedule *s, int k) {
    int lo = 0, hi = s->nkernels - 1;
    while (lo < hi) {   /* the last kernel whose first group is at or before k */
        int mid = (lo + hi + 1) / 2;
        if (s->kernels[mid].first <= k) lo = mid; else hi = mid - 1;
    }
    return lo;
}
