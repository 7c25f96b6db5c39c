/* scheduler.h — IR buffers -> ordered, fused kernels (Inductor's scheduler.py, small).
 *
 * Every computed/extern buffer becomes a SchedNode with its MemoryDep/StarDep reads and writes.
 * Groups start as one node each; fusion rounds merge the best-scoring legal pair (score = bytes
 * of buffers the two share) until nothing changes. A group is one kernel: an outer loop nest over
 * `nouter` shared dims, inside which each node runs its own inner loop (pointwise elements or a
 * reduction over the row). Every decision is kept in `decisions` for the shell. */
#ifndef SCHEDULER_H
#define SCHEDULER_H

#include "ir.h"

typedef struct SchedNode {
    int id;
    const char *name;          /* "op0" */
    Buffer *buf;
    DepSet deps;
    int group;
    bool dead;                 /* result never used: removed */
} SchedNode;

typedef struct SchedGroup {
    int *nodes; int n;         /* node ids in execution order */
    int nouter;                /* shared outer loop dims (p0..p(nouter-1) of every body) */
    bool is_extern;
    bool alive;
    char *kernel_name;         /* "cpp_fused_add_relu_0" (set by sched_run) */
} SchedGroup;

typedef struct FusionDecision {
    const char *a, *b;         /* group names ("op0_op1") */
    bool accepted;
    int64_t score;             /* bytes saved (shared buffer bytes; -1 when symbolic) */
    char reason[160];
} FusionDecision;

typedef struct Schedule {
    IrModule *ir;
    SchedNode *nodes; int nnodes;
    SchedGroup *groups; int ngroups;
    int *order; int norder;    /* alive groups in execution order */
    FusionDecision *decisions; int ndecisions, capdecisions;
    int *reuse_of;             /* per buffer id: buffer id whose memory it reuses, or -1 */
    Arena arena;
} Schedule;

Schedule *sched_run(MiCtx *ctx, IrModule *m);
void sched_free(Schedule *s);
/* Post-fusion text (one block per kernel) and the decision list. malloc'd. */
char *sched_print(const Schedule *s);
char *sched_decisions_text(const Schedule *s);
/* Number of kernels (fused groups incl. extern calls). */
int sched_num_kernels(const Schedule *s);
const char *sched_group_name(const Schedule *s, int g, char *buf, size_t n);

#endif
