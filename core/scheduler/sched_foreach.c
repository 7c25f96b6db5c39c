/* sched_foreach.c — foreach (combo) kernels: Inductor's ForeachKernelSchedulerNode.
 *
 * On a backend with the FOREACH feature (the GPU target: Triton's; the cpp backend has none),
 * the lowering of a _foreach_* op whose items it realizes registers their buffers as one list
 * (V.graph.lists, IrModule.lists). Scheduler.create_foreach_nodes turns each list into a
 * ForeachKernelSchedulerNode before fusion: its subnodes keep their own loops but run as ONE
 * kernel (triton_for_fused_N: the block index picks the sub-kernel). Fusion then treats the
 * foreach node as a unit (ForeachKernelSchedulerNode.can_fuse):
 *   - foreach + foreach: same length, and every pair of subnodes (in list order) can fuse;
 *     then they fuse pairwise ("foreach do not have same length" otherwise);
 *   - a node into the foreach node: only into the subnode that reads its result (it is the
 *     producer) or that it alone reads from (it is the consumer); never a reduction
 *     ("candidate producer is a reduction, ..."), never a node that only shares reads.
 * Here a combo is the list of groups (SchedGroup ids) that are its subnodes; the scheduler
 * (core/scheduler/scheduler.c) asks sched_foreach_pair before scoring a pair, keeps the combo
 * up to date after each merge, orders a combo's groups together, and sched_kernels.c makes one
 * kernel of them (split where Inductor's ComboKernel would pass combo_kernel_max_num_args).
 *   _foreach_add_([s0, s1, s2, s3], 1)  ->  combo {op0, op1, op2, op3}: one kernel, 4 sub-kernels */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Free every combo of s (sched_free, and before init_groups makes them again). */
void sched_foreach_free(Schedule *s) {
    for (int c = 0; c < s->ncombos; c++) free(s->combos[c].groups);
    free(s->combos);
    free(s->combo_of);
    s->combos = NULL;
    s->combo_of = NULL;
    s->ncombos = 0;
}

/* The node of buffer b (-1: none, or dead). */
static int node_of_buf(const Schedule *s, const Buffer *b) {
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].buf == b) return s->nodes[i].dead ? -1 : i;
    return -1;
}

/* Scheduler.create_foreach_nodes: one combo per list of s->ir whose items survived dead-code
 * removal, each item its own group (groups are one node each when this runs); the grouping
 * is recorded as a decision ("combo op0 + op1_op2_op3: ..."). Only for the GPU target. */
void sched_foreach_init(Schedule *s) {
    sched_foreach_free(s);
    const IrModule *m = s->ir;
    if (!m->nlists || !m->ctx || m->ctx->target != MI_DEV_CUDA) return;
    s->combo_of = mi_xmalloc(sizeof(int) * (size_t)(s->ngroups + 1));
    for (int g = 0; g < s->ngroups; g++) s->combo_of[g] = -1;
    s->combos = mi_xcalloc((size_t)m->nlists + 1, sizeof(SchedCombo));
    for (int l = 0; l < m->nlists; l++) {
        const IrList *L = &m->lists[l];
        SchedCombo *c = &s->combos[s->ncombos];
        c->groups = mi_xmalloc(sizeof(int) * (size_t)(L->n + 1));
        c->n = 0;
        for (int k = 0; k < L->n; k++) {
            int u = node_of_buf(s, L->bufs[k]);
            if (u < 0 || s->combo_of[s->nodes[u].group] >= 0) continue;
            c->groups[c->n++] = s->nodes[u].group;
            s->combo_of[s->nodes[u].group] = s->ncombos;
        }
        if (!c->n) { free(c->groups); continue; }   /* all items eliminated */
        c->alive = true;
        c->op = L->node ? L->node->target : "_foreach";
        StrBuf rest;
        sb_init(&rest);
        for (int k = 1; k < c->n; k++) sb_printf(&rest, "%s%s", k > 1 ? "_" : "", s->nodes[s->groups[c->groups[k]].nodes[0]].name);
        char why[200];
        snprintf(why, sizeof why, "foreach: the %d items of %s are the subnodes of one ForeachKernelSchedulerNode (one combo kernel)",
                 c->n, c->op);
        sched_record(s, "combo", c->groups[0], c->groups[c->n > 1 ? 1 : 0], s->nodes[s->groups[c->groups[0]].nodes[0]].name,
                     arena_strdup(&s->arena, rest.s ? rest.s : "-"), true, 0, why);
        sb_free(&rest);
        s->ncombos++;
    }
}

/* Does group x read a buffer that group y writes? */
static bool group_reads_from(const Schedule *s, int x, int y) {
    const SchedGroup *X = &s->groups[x], *Y = &s->groups[y];
    for (int i = 0; i < X->n; i++) {
        const DepSet *d = &s->nodes[X->nodes[i]].deps;
        for (int r = 0; r < d->nreads; r++)
            for (int j = 0; j < Y->n; j++) {
                const DepSet *w = &s->nodes[Y->nodes[j]].deps;
                for (int q = 0; q < w->nwrites; q++)
                    if (w->writes[q].buf == d->reads[r].buf) return true;
            }
    }
    return false;
}

static bool group_is_reduction(const Schedule *s, int g) {
    for (int i = 0; i < s->groups[g].n; i++) {
        const Buffer *b = s->nodes[s->groups[g].nodes[i]].buf;
        if (b->kind == BUF_COMPUTED && b->body && b->body->nred) return true;
    }
    return false;
}

int sched_foreach_pair(const Schedule *s, int ga, int gb, char *why, size_t n) {
    int ca = s->combo_of ? s->combo_of[ga] : -1, cb = s->combo_of ? s->combo_of[gb] : -1;
    if (ca < 0 && cb < 0) return 0;
    if (ca == cb) return -2;   /* two subnodes of one foreach node: one node to Inductor, no pair */
    if (ca >= 0 && cb >= 0) {
        if (s->combos[ca].n != s->combos[cb].n) { snprintf(why, n, "foreach do not have same length"); return -1; }
        return 2;
    }
    int p = ca < 0 ? ga : gb, sub = ca < 0 ? gb : ga;   /* p: the plain group; sub: a subnode */
    const SchedCombo *c = &s->combos[ca < 0 ? cb : ca];
    if (group_reads_from(s, sub, p)) {   /* p is the producer, the foreach node the consumer */
        if (group_is_reduction(s, p)) {
            snprintf(why, n, "candidate producer is a reduction, foreach ops cannot be fused with reductions currently");
            return -1;
        }
        return 1;
    }
    if (group_reads_from(s, p, sub)) {   /* the foreach node is the producer */
        if (group_is_reduction(s, p)) {
            snprintf(why, n, "candidate consumer is a reduction, foreach ops cannot be fused with reductions currently");
            return -1;
        }
        int producers = 0;   /* get_producer_subnode_for: exactly one subnode it reads from */
        for (int k = 0; k < c->n; k++) producers += group_reads_from(s, p, c->groups[k]);
        if (producers == 1) return 1;
        snprintf(why, n, "candidate consumer has no dep in any foreach producer");
        return -1;
    }
    snprintf(why, n, "candidate producer is not dep of any foreach consumer");
    return -1;
}

void sched_foreach_merged(Schedule *s, int survivor, int gone) {
    if (!s->combo_of) return;
    int c = s->combo_of[gone];
    if (c < 0) return;
    SchedCombo *C = &s->combos[c];
    for (int k = 0; k < C->n; k++)
        if (C->groups[k] == gone) C->groups[k] = survivor;
    s->combo_of[survivor] = c;
    s->combo_of[gone] = -1;
}

void sched_foreach_join(Schedule *s, int keep, int drop, const int *survivors) {
    SchedCombo *K = &s->combos[keep], *D = &s->combos[drop];
    for (int k = 0; k < K->n; k++) {
        s->combo_of[K->groups[k]] = -1;
        s->combo_of[D->groups[k]] = -1;
    }
    for (int k = 0; k < K->n; k++) {
        K->groups[k] = survivors[k];
        s->combo_of[survivors[k]] = keep;
    }
    D->alive = false;
    D->n = 0;
}

/* The Triton combo kernel's argument count of one subnode: Inductor counts the fused node's
 * read_writes (its reads that no node of it writes, plus its writes; a dependency per buffer
 * and index), as ComboKernel._base_horizontal_partition does. */
int sched_foreach_rw_count(const Schedule *s, int g) {
    const SchedGroup *G = &s->groups[g];
    int n = 0;
    for (int i = 0; i < G->n; i++) {
        const DepSet *d = &s->nodes[G->nodes[i]].deps;
        for (int q = 0; q < d->nreads + d->nwrites; q++) {
            bool w = q >= d->nreads;
            const Dep *x = w ? &d->writes[q - d->nreads] : &d->reads[q];
            if (w && x->buf != ir_store_target(x->buf) && x->buf->inplace_alias) continue;   /* our alias self-write */
            bool seen = false;
            for (int j = 0; j <= i && !seen; j++) {   /* the same dependency earlier, or (a read) written here */
                const DepSet *e = &s->nodes[G->nodes[j]].deps;
                int lim = j < i ? e->nreads + e->nwrites : q;
                for (int r = 0; r < lim && !seen; r++) {
                    bool ew = r >= e->nreads;
                    const Dep *y = ew ? &e->writes[r - e->nreads] : &e->reads[r];
                    seen = y->buf == x->buf && y->index == x->index && ew == w;
                }
            }
            for (int j = 0; !w && j < G->n && !seen; j++) {
                const DepSet *e = &s->nodes[G->nodes[j]].deps;
                for (int r = 0; r < e->nwrites && !seen; r++) seen = e->writes[r].buf == x->buf;
            }
            n += !seen;
        }
    }
    return n;
}
