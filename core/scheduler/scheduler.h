/* scheduler.h — IR buffers -> ordered, fused kernels (Inductor's scheduler.py, small).
 *
 * Every computed/extern buffer becomes a SchedNode with its MemoryDep/StarDep reads and writes.
 * Groups start as one node each; fusion rounds try the pairs of groups that share a buffer, best
 * score first (score = bytes of buffers the two share), merging every legal one, until a round
 * merges nothing (work ~ deps, not nodes^2: 10 000 nodes schedule in ~0.1 s). A group is one
 * kernel: an outer loop nest over `nouter` shared dims, inside which the nodes run their inner
 * loops (pointwise elements or a reduction over the row; nodes with equal inner loops share one,
 * see core/codegen/codegen_kernel.c). Groups whose outer loops split the same rows differently
 * ([8, 256] vs [2048]) are first rewritten over one common shape (core/scheduler/sched_reshape.c).
 * Decisions (the first MAX_DECISIONS) are kept for the shell. */
#ifndef SCHEDULER_H
#define SCHEDULER_H

#include "ir/ir.h"

typedef struct SchedNode {
    int id;
    const char *name;          /* "op0" */
    Buffer *buf;
    DepSet deps;
    int group;
    bool dead;                 /* result never used: removed */
    /* sched_score.c's normalized deps (one per entry of deps.reads then deps.writes; [0]
     * dep_normalize, [1] sched_dep_canon), made on first use and dropped by
     * sched_node_forget_ndeps whenever deps is collected again (a reshaped body) */
    struct NDep *ndeps[2];
} SchedNode;

typedef struct SchedGroup {
    int *nodes; int n;         /* node ids in execution order */
    int nouter;                /* shared outer loop dims (p0..p(nouter-1) of every body) */
    bool is_extern;
    bool alive;
    int merged_into;           /* the group it was fused into (-1: none), at fusion number merged_at: */
    int merged_at;             /* the groups a decision saw are recoverable (sched_group_at) */
    char *kernel_name;         /* "cpp_fused_add_relu_0" (set by sched_run) */
} SchedGroup;

/* A generated kernel. On cpu every run of fused groups between extern calls is ONE cpp kernel
 * (Inductor's CppScheduling kernel group: Scheduler._codegen flushes it only at an extern or
 * template call, a device change, or once it has more than MAX_FUSED_KERNEL_ARGS_NUM = 500
 * arguments), whose groups run one after the other, each its own loop nest; on cuda every
 * fused group is its own kernel (a Triton kernel); an extern group is its own call. */
typedef struct SchedKernel {
    int first, n;              /* its groups: order[first .. first + n) */
    bool is_extern;
    const char *name;          /* "cpp_fused_add_relu_0" (counted over generated kernels), "extern_mm" */
    bool combo;                /* GPU: the subnodes of a foreach node, one combo kernel whose
                                  blocks each run one group ("cuda_for_fused_1") */
    int same_as;               /* -1, or the earlier kernel whose source this one's equals: it is
                                  not defined again but calls that one's definition, by that name
                                  (codegen_reuse_kernels: Inductor's src_to_kernel) */
    const struct Schedule *same_sched;   /* NULL, or the other schedule (a cond branch, the graph
                                  around one) whose kernel same_as is: a subgraph is generated into
                                  its parent's wrapper, one src_to_kernel for all (graph.py
                                  codegen_subgraph) */
    bool shared;               /* its definition is called from another schedule too (either end
                                  of a same_sched link) */
} SchedKernel;

typedef struct FusionDecision {
    const char *verb;          /* NULL: "fuse" / "skip"; "combo": a foreach list made one combo kernel */
    const char *a, *b;         /* group names ("op0_op1"; long groups abbreviated "op0_..(20 nodes).._op9") */
    int ga, gb;                /* the two groups as they stood: sched_group_at(s, node, at) == ga */
    int at;                    /* fusions done before this decision (Schedule.nmerges then) */
    bool accepted;
    int64_t score;             /* bytes saved (shared buffer bytes; -1 when symbolic) */
    char reason[256];
} FusionDecision;

/* A cond buffer's two branches, each scheduled on its own (core/ir/ir_cond.c). */
typedef struct SchedBranch {
    const Buffer *cond;
    struct Schedule *s[2];
    char fn[2][128];           /* C function of each branch: "true_graph_0" */
} SchedBranch;

/* A foreach node (Inductor's ForeachKernelSchedulerNode, core/scheduler/sched_foreach.c): its
 * subnodes, groups that keep their own loops and run as one combo kernel, in list order. */
typedef struct SchedCombo { int *groups; int n; bool alive; const char *op; } SchedCombo;

typedef struct Schedule {
    IrModule *ir;
    SchedBranch *branches; int nbranches;   /* one per cond buffer of ir */
    SchedNode *nodes; int nnodes;
    SchedGroup *groups; int ngroups;
    int *order; int norder;    /* alive groups in execution order */
    SchedKernel *kernels; int nkernels;   /* the generated kernels, in order (core/scheduler/sched_kernels.c) */
    FusionDecision *decisions; int ndecisions, capdecisions;
    bool decisions_full;       /* more decisions were made than the list keeps */
    int nmerges;               /* fusions done (each stamps the absorbed group's merged_at) */
    SchedCombo *combos; int ncombos;   /* foreach nodes (GPU target); a dead one has n == 0 */
    int *combo_of;             /* per group: the combo it is a subnode of, -1; NULL: no combos */
    int *okey;                 /* per node: its place in a topological order that keeps creation
                                  order where the edges allow (sched_order_key) */
    char mem_note[128];        /* "reordered for peak memory (lpmf): A -> B bytes" (sched_memory.c), or "" */
    int *reuse_of;             /* per buffer id: buffer id whose memory it reuses, or -1 */
    int *inplace_of;           /* per buffer id: the buffer its kernel reads and writes it over
                                  (Inductor's in_out_ptr: sched_inplace.c), or -1 */
    int *rd_start, *rd;        /* buffer id -> nodes reading it: rd[rd_start[id] .. rd_start[id+1]) */
    int *wr_start, *wr;        /* ... writing it (node ids ascending, dead nodes included) */
    struct SchedReshape **reshapes; int nreshapes;   /* kept outer-loop splits (core/scheduler/sched_reshape.c):
                                  they rewrite the buffers' bodies while the schedule lives;
                                  sched_free puts the lowered bodies back */
    struct SchedCpp *cpp;      /* cpu: the C++ backend's view of each group (core/scheduler/sched_cpp.c); NULL on cuda */
    Arena arena;
} Schedule;

Schedule *sched_run(MiCtx *ctx, IrModule *m);
/* Branch schedules (core/ir/ir_cond.c): made / freed by sched_run / sched_free; lookup by buffer. */
void sched_run_branches(MiCtx *ctx, Schedule *s);
void sched_free_branches(Schedule *s);
const SchedBranch *sched_branch_of(const Schedule *s, const Buffer *cond);
/* Post-fusion text of every branch, under "subgraph NAME:" headers. */
void sched_print_branches(const Schedule *s, StrBuf *sb);
void sched_free(Schedule *s);
/* Post-fusion text (one block per kernel) and the decision list. malloc'd. */
char *sched_print(const Schedule *s);
char *sched_decisions_text(const Schedule *s);
/* Number of kernels (generated kernels incl. extern calls: SchedKernel). */
int sched_num_kernels(const Schedule *s);
/* Kernels of s (core/scheduler/sched_kernels.c): group the ordered groups into kernels (cpu
 * kernel groups, see SchedKernel) and name them; every group gets its kernel's name. */
void sched_make_kernels(Schedule *s);
/* (Re)name the kernels of s by their same_as links (sched_kernels.c). */
void sched_name_kernels(Schedule *s);
/* Decide s->inplace_of (core/scheduler/sched_inplace.c: Inductor's decide_inplace_update). */
void sched_decide_inplace(Schedule *s);
/* Index into s->kernels of the kernel that runs group position k of s->order. */
int sched_kernel_of_pos(const Schedule *s, int k);
const char *sched_group_name(const Schedule *s, int g, char *buf, size_t n);
/* Execution position of node n inside its kernel (the order of a group's nodes): a topological
 * order keeping creation order where it can, except that a copy_ into a graph input (a
 * mutation that is no in-place foreach item) runs after everything else. */
long sched_order_key(const Schedule *s, int n);

/* Scheduler internals (core/scheduler/sched_reshape.c): re-express the nodes of two would-be-fused groups
 * over one common refinement of their outer loop ranges ([8, 256] vs [2048] -> [8, 256]) and,
 * on the GPU where a reduction is involved, of their inner loops too ([8, 8] vs [64] -> [8, 8]:
 * simd.py's pointwise in a reduction kernel), after checking that the reads across the pair
 * are the writes' elements as Scheduler.fusable_read_and_write sees unnormalized GPU deps; red*
 * is a group's number of reduction outer dims, -1 when it is pointwise only. Returns the undo
 * record (NULL: no common shape, nothing changed; a nonempty note then says which read the
 * deps refused) and a "; outer loops ... split to ..." note for the decision text. A kept one
 * goes to s->reshapes (undone, newest first, by sched_free). */
typedef struct SchedReshape SchedReshape;
SchedReshape *sched_reshape_pair(Schedule *s, const int *na, int nA, int redA, const int *nb, int nB, int redB,
                                 char *note, size_t nn);
/* GPU loop reordering (Inductor's shared_data_after_reordering_loop; not on cpu, as Inductor):
 * the pointwise group np[] (all nodes over the same loops) and the group nq[] touch one buffer
 * in different loop orders (a [32, 64] pointwise writes what a column sum reads as [64] x [32]):
 * permute np's loops to nq's order, chosen by the largest such buffer whose two index
 * expressions have the same distinct strides. Returns the undo record (NULL: no such buffer,
 * nothing changed) and a "; loops of op1 reordered to [64, 32]" note. */
SchedReshape *sched_reorder_pair(Schedule *s, const int *np, int nP, const int *nq, int nQ, char *note, size_t nn);
/* GPU merge_loops after fusion (Scheduler.merge_loops -> LoopBody.merge_loops): the adjacent
 * loops of a pointwise group that every index walks as one ([16, 32] -> [512] for a copy) are
 * merged, so two copies of 512 elements over [16, 32] and [8, 64] are one kernel's source
 * (code reuse). Returns the undo record (NULL: nothing merged). */
SchedReshape *sched_merge_loops(Schedule *s, const int *nodes, int n);
/* The group node n belonged to after the first `at` fusions (each node starts in group n;
 * follows merged_into, at most log2(nodes) steps: the larger group survives a fusion). */
int sched_group_at(const Schedule *s, int n, int at);
/* Which side of decision d node n was on: 0 group a, 1 group b, -1 neither. */
int sched_decision_side(const Schedule *s, const FusionDecision *d, int n);

/* Explanations from the recorded decisions (core/scheduler/sched_explain.c); the shell's `why`,
 * the fusion picture's edge labels and the report's why page all read them through these. */
/* The last refusal to fuse the groups of buffers x and y (on opposite sides of it), or NULL
 * when none was recorded or they ended in one group. */
const FusionDecision *sched_refusal(const Schedule *s, const Buffer *x, const Buffer *y);
/* The head of a WhyNoFuse text for an edge label: up to "; ", at most 48 characters with "…"
 * ("memory deps did not match; outer sizes differ: ..." -> "memory deps did not match"). */
void sched_reason_short(const char *reason, char *out, size_t n);
/* `why` for scheduler nodes a and b (indices into s->nodes): the FX nodes of each, fused or
 * not, and the decision (rule, score, Inductor's words) or rule that decided; appended to sb. */
void sched_explain(const Schedule *s, int a, int b, StrBuf *sb);
/* The representative pair of decision d: a producer in group a and its consumer in group b
 * when one reads what the other writes, else the first node of each. */
void sched_decision_pair(const Schedule *s, const FusionDecision *d, int *x, int *y);
/* Every decision as JSON for the report's why page (the minductor_fusion_decisions artifact):
 * {"device", "kernels": [{name, buffers}], "truncated", "decisions": [{n, verdict, a, b, score,
 * reason, a_nodes/b_nodes: [{buf, op, fx: [...]}] (first 16 each), a_count, b_count, why: [X, Y],
 * explain}]}; malloc'd. */
char *sched_decisions_json(const Schedule *s);

/* A refused fusion of node lists na[] and nb[] in Inductor's WhyNoFuse words, our finding `raw`
 * kept after "; " (core/scheduler/sched_why.c). */
void sched_why_no_fuse(const Schedule *s, const int *na, int nA, const int *nb, int nB, const char *raw, char *out, size_t n);
/* Record a decision on groups ga + gb (verb NULL: fuse / skip; a, b: names to show instead of
 * the groups', or NULL). */
void sched_record(Schedule *s, const char *verb, int ga, int gb, const char *a, const char *b, bool acc, int64_t score,
                  const char *why);
/* Foreach nodes (core/scheduler/sched_foreach.c). init: one combo per list of s->ir (GPU
 * target), after the groups are made; free: drop them. pair: may groups ga and gb be
 * considered at all -- 0: no foreach node involved; 1: a node into the one subnode it feeds or
 * alone reads from (check the pair as usual); 2: two foreach nodes of one length (fuse them
 * pairwise); -1: refused (why: Inductor's WhyNoFuse text); -2: both in one foreach node (no
 * pair). merged: after groups merged (gone into survivor), keep the combo's subnode list.
 * join: after the pairwise fusion of combos keep and drop into survivors[] (keep's order). */
void sched_foreach_init(Schedule *s);
void sched_foreach_free(Schedule *s);
int sched_foreach_pair(const Schedule *s, int ga, int gb, char *why, size_t n);
void sched_foreach_merged(Schedule *s, int survivor, int gone);
void sched_foreach_join(Schedule *s, int keep, int drop, const int *survivors);
/* A subnode's read/write dependency count (Inductor's combo partition: combo_kernel_max_num_args). */
int sched_foreach_rw_count(const Schedule *s, int g);
/* Undo (bodies, and the nodes' deps when `deps`) and free u. */
void sched_reshape_undo(Schedule *s, SchedReshape *u, bool deps);

/* The C++ backend's fusion rule (core/scheduler/sched_cpp.c, cpp.py CppScheduling) on the
 * groups' simplified loop sizes (ir_cpp_group). init: one state per group (cpu target; s->cpp
 * stays NULL on cuda), after the groups are made; free: drop it. priority: may groups ga and gb
 * fuse (vertical: one reads what the other writes, a_feeds_b: ga is the producer), and at which
 * CppScheduling.get_fusion_pair_priority: 0 a FusedSchedulerNode, 1 an outer-loop fusion, -1
 * refused with Inductor's view in why (always 0 on cuda). prepare / commit: before merging the
 * pair, after it into survivor. */
typedef struct SchedCpp SchedCpp;
void sched_cpp_init(Schedule *s);
void sched_cpp_free(Schedule *s);
int sched_cpp_priority(const Schedule *s, int ga, int gb, bool vertical, bool a_feeds_b, char *why, size_t wl);
void sched_cpp_prepare(Schedule *s, int ga, int gb, bool vertical, bool a_feeds_b);
void sched_cpp_commit(Schedule *s, int survivor);

/* Scheduler.fuse_nodes_once's order of the fused groups in s->order (already a topological
 * order): by first node, then topological_sort_schedule's depth-first walk over the node
 * dependency edges succ[succ_start[n] .. succ_start[n + 1]) (core/scheduler/sched_order.c). */
void sched_inductor_order(Schedule *s, const int *succ_start, const int *succ);
/* Ordering units: a group, or a foreach node (ncombos after the groups) whose subnodes stay
 * together (Inductor orders the ForeachKernelSchedulerNode as one node); a unit's key is its
 * smallest first node (min_order). */
int sched_unit_of(const Schedule *s, int g);
int sched_unit_key(const Schedule *s, int u);

/* Bytes of the normalized MemoryDeps that nodes a[] and b[] both read or write (Inductor's
 * score_fusion_memory, core/scheduler/sched_score.c); *reorderable when some buffer is read
 * by both at indexes that differ only by loop order (normalize_with_stride_order). */
/* Inductor's stride_vars for pointwise loop var v of body b in index f: f(v = 1, other vars 0)
 * - f(all 0) (sched_reshape.c). Example: 90*p0 + p1 + 18*p2 + 3*p3 gives 18 for v = 2. */
Expr *sched_var_stride(SymCtx *S, const LoopBody *b, Expr *f, int v);
/* simd.py can_fuse, tiling_prevents_reduction_fusion (sched_tiling.c): may the pointwise nodes
 * pw[0..npw) (numel * rnumel elements) join a reduction kernel of (numel, rnumel)? Their
 * select_tiling must be 1-d or exactly (numel, rnumel). */
bool sched_reduction_tiling_ok(const Schedule *s, const int *pw, int npw, int64_t numel, int64_t rnumel);
int64_t sched_shared_dep_bytes(const Schedule *s, const int *a, int na, const int *b, int nb, bool canon, bool *reorderable);
/* A MemoryDep as GPU nodes carry it (canon: not normalized, sched_score.c): the index over the
 * body's vars of range > 1 renamed c0.., *nv and sizes[] their ranges. */
Expr *sched_dep_canon(SymCtx *S, Expr *index, const LoopBody *b, Expr **sizes, int *nv);
/* Drop node n's normalized deps (SchedNode.ndeps): call it before n->deps is freed or
 * collected again. */
void sched_node_forget_ndeps(SchedNode *n);

#endif
