/* test_sched.c — scheduling and fusion: kernel counts with fusion on and off, the recorded
 * fusion decisions, dead buffer removal, post-fusion text. */
#include "tap.h"

/* the refusal of a vertical pair that shares no normalized MemoryDep (scheduler.c pair_score) */
#define NO_SHARED "no shared data; every buffer of the producer is read at other (normalized) indexes than it is written (choices.py can_fuse: shared_data_score 0)"
#include "scheduler/scheduler.h"
#include "lowering/lowering.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_mem.h"

static Schedule *sched(MiCtx *ctx, const char *rel, bool fusion, Graph **g, IrModule **m) {
    char path[512];
    snprintf(path, sizeof path, "tests/fixtures/torch-cases/%s/post_post_grad.py", rel);
    *g = graph_load_file(ctx, path);
    *m = NULL;
    if (!*g) return NULL;
    ops_resolve_graph(*g);
    *m = ir_lower(ctx, *g);
    if (!*m) return NULL;
    ctx->fusion = fusion;
    return sched_run(ctx, *m);
}

static Schedule *sched_file(MiCtx *ctx, const char *path, bool fusion, Graph **g, IrModule **m) {
    *g = graph_load_file(ctx, path);
    *m = NULL;
    if (!*g) return NULL;
    ops_resolve_graph(*g);
    *m = ir_lower(ctx, *g);
    if (!*m) return NULL;
    ctx->fusion = fusion;
    return sched_run(ctx, *m);
}

static int last_groups;   /* fused groups (scheduler nodes) of the last kernels*() call */

/* kernels of a graph file (not a torch-case), with the decision text */
static int kernels_file(MiCtx *ctx, const char *path, bool fusion, char **decisions) {
    Graph *g;
    IrModule *m;
    Schedule *s = sched_file(ctx, path, fusion, &g, &m);
    int k = s ? sched_num_kernels(s) : -1;
    last_groups = s ? s->norder : -1;
    if (s && decisions) *decisions = sched_decisions_text(s);
    sched_free(s);
    ir_free(m);
    graph_free(g);
    return k;
}

/* Outer loops that differ by a split of contiguous dims (core/scheduler/sched_reshape.c): counts with
 * fusion on and off and the decision text; values against the interpreter are checked for these
 * fixtures by tests/test_codegen.c (regressions, fusion on and off). */
static void split_outer(MiCtx *ctx) {
    static const struct { const char *file; int on, off; const char *dec; } cases[] = {
        /* (the two reductions fuse first: a fusion of _why_fuse_nodes is tried before outer-loop
         * fusions, CppScheduling.get_fusion_pair_priority) */
        {"sched_split_outer_ln_view", 1, 3,
         "fuse op0 + op1 score=960: horizontal: shared reads\n"
         "fuse op0_op1 + op2 score=1152: vertical: producer into consumer; outer loops [24] split to [4, 6]\n"},
        /* the C++ backend compares simplified loops (cpp.py _why_fuse_nodes): the contiguous
         * product is one loop of 240, the sum ((24,), (10,)): two loop nests of one kernel, as
         * the gelu backward (576) and its column sum in the MLP-Mixer's Inductor code */
        {"sched_split_outer_sum_of_view", 2, 2,
         "skip op0 + op1 score=960: cpp: ((240,), ()) vs ((24,), (10,)) (no shared outer loop)\n"},
        {"sched_split_outer_horizontal", 1, 2,
         "fuse op0 + op1 score=960: horizontal: shared reads; outer loops [4, 6, 10] and [2, 12, 10] both split to [2, 2, 6, 10]\n"},
        /* same total, other elements (the rows of a transpose): refused, the split undone */
        {"sched_split_outer_permuted_view", 2, 3,
         "fuse op0 + op1 score=960: horizontal: shared reads\n"
         "skip op0_op1 + op2 score=0: " NO_SHARED "\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256], *dec = NULL;
        snprintf(path, sizeof path, "tests/fixtures/codegen/%s.py", cases[i].file);
        is_int(kernels_file(ctx, path, true, &dec), 1, "%s: one cpp kernel", cases[i].file);
        is_int(last_groups, cases[i].on, "%s: %d loop nest(s) with fusion", cases[i].file, cases[i].on);
        is_str(dec, cases[i].dec, "%s: the decisions", cases[i].file);
        free(dec);
        kernels_file(ctx, path, false, NULL);   /* one cpp kernel either way: count its loop nests */
        is_int(last_groups, cases[i].off, "%s: %d loop nests without fusion", cases[i].file, cases[i].off);
    }
    /* the split lives as long as the schedule: sched_free puts the lowered body back, and a
     * second schedule of the same IR decides alike */
    Graph *g;
    IrModule *m;
    Schedule *s = sched_file(ctx, "tests/fixtures/codegen/sched_split_outer_ln_view.py", true, &g, &m);
    Buffer *b2 = m ? ir_find_buffer(m, "buf2") : NULL;
    if (ok(s && b2 && b2->body, "ln_view schedules")) {
        int64_t r0 = 0, r1 = 0;
        ok(b2->body->nvars == 3 && sym_is_int(b2->body->ranges[0], &r0) && r0 == 4 && sym_is_int(b2->body->ranges[1], &r1) && r1 == 6,
           "while scheduled, buf2 loops over [4, 6, 10]");
        char *d1 = sched_decisions_text(s);
        sched_free(s);
        ok(b2->body->nvars == 2 && sym_is_int(b2->body->ranges[0], &r0) && r0 == 24 && sym_is_int(b2->body->ranges[1], &r1) && r1 == 10,
           "after sched_free, buf2 loops over [24, 10] again");
        s = sched_run(ctx, m);
        char *d2 = s ? sched_decisions_text(s) : NULL;
        is_str(d2, d1, "a second schedule of the same IR records the same decisions (split included)");
        free(d1); free(d2);
    }
    sched_free(s); ir_free(m); graph_free(g);
    /* the bench's transformer block (the layer norm's two reductions op13 + op14 first, a
     * _why_fuse_nodes pair before any outer-loop one): the second layer norm and the normalize that feeds the
     * MLP's addmm in one kernel (the residual add is recomputed in both: Inductor's
     * store-or-recompute rules keep it inline; it was a [2048, 128] buffer the split joined) */
    char *dec = NULL;
    is_int(kernels_file(ctx, "bench/graphs/transformer_block.py", true, &dec), 13, "transformer_block: 13 kernels");
    ok(dec && strstr(dec, "fuse op13_op14 + op15 score=2113536: vertical: producer into consumer\n"),
       "transformer_block: layer norm statistics and normalize fuse");
    ok(dec && !strstr(dec, "outer sizes differ"), "transformer_block: no fusion refused for outer sizes");
    free(dec);
}

static int kernels(MiCtx *ctx, const char *rel, bool fusion, char **decisions, char **post) {
    Graph *g;
    IrModule *m;
    Schedule *s = sched(ctx, rel, fusion, &g, &m);
    int k = s ? sched_num_kernels(s) : -1;
    last_groups = s ? s->norder : -1;
    if (s && decisions) *decisions = sched_decisions_text(s);
    if (s && post) *post = sched_print(s);
    sched_free(s);
    ir_free(m);
    graph_free(g);
    return k;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char *dec = NULL, *post = NULL;
    is_int(kernels(ctx, "cpu/seed_example/graph0", true, NULL, NULL), 1, "seed_example: one kernel");
    int k = kernels(ctx, "cpu/ln_gelu/graph0", true, &dec, &post);
    is_int(k, 1, "ln_gelu: one kernel, as Inductor's cpp_fused_..._0");
    ok(dec && strstr(dec, "fuse ") != NULL, "ln_gelu: accepted fusions are listed");
    ok(dec && strstr(dec, "vertical") != NULL, "ln_gelu: a vertical fusion");
    ok(post && strstr(post, "FusedSchedulerNode") && strstr(post, "cpp_fused_"), "post-fusion text names the fused kernel");
    free(dec); free(post); dec = post = NULL;
    /* without fusion every node is its own loop nest, all of them in the one cpp kernel */
    is_int(kernels(ctx, "cpu/ln_gelu/graph0", false, &dec, NULL), 1, "ln_gelu: one cpp kernel without fusion too");
    ok(last_groups > 2, "ln_gelu: more loop nests without fusion");
    ok(dec && dec[0] == 0, "no decisions when fusion is off");
    free(dec); dec = NULL;
    k = kernels(ctx, "cpu/softmax/graph0", true, &dec, NULL);
    is_int(k, 1, "softmax: one kernel");
    /* every decision with its reason and score, in the order they were taken */
    is_str(dec, "skip op1 + op3 score=256000: will create cycle (through another kernel)\n"
                "fuse op1 + op2 score=256000: vertical: producer into consumer\n"
                "fuse op0 + op1_op2 score=256256: vertical: producer into consumer\n"
                "fuse op0_op1_op2 + op3 score=256256: vertical: producer into consumer\n", "softmax: the decisions");
    free(dec); dec = NULL;
    k = kernels(ctx, "cuda/softmax/graph0", true, NULL, NULL);
    is_int(k, 1, "softmax via prepare_softmax_online: one kernel");
    /* reductions: x.sum(dim=0) walks the columns ([96] outer, [128] inner), the row kernel the
     * rows: no split makes them one loop nest. Inductor does not fuse them either (two nodes in
     * its ir_post_fusion.txt); its single cpp kernel is CppScheduling's kernel group, which puts
     * consecutive nodes' loop nests into one C function */
    k = kernels(ctx, "cpu/reductions/graph0", true, &dec, NULL);
    is_int(k, 1, "reductions: one cpp kernel, as Inductor's cpp_fused_add_amax_div_sqrt_sub_sum_var_mean_0");
    is_int(last_groups, 2, "reductions: row loop nest + column sum loop nest");
    /* the column sum (buf3, written at c0 over [96]) is read by the row kernel at c1 over
     * [128, 96]: no normalized MemoryDep in common, so choices.py can_fuse refuses the pair
     * (shared_data_score 0) before CppScheduling is asked */
    ok(dec && strstr(dec, "skip op0_op1_op2_op4 + op3 score=0: " NO_SHARED "\n") != NULL,
       "reductions: the rejected fusion is recorded with its reason");
    free(dec); dec = NULL;
    ctx->target = MI_DEV_CUDA;   /* Triton: simd.py's numel/rnumel text */
    kernels(ctx, "cuda/reductions/graph0", true, &dec, NULL);
    ctx->target = MI_DEV_CPU;
    ok(dec && strstr(dec, "skip op0_op1_op2_op4 + op3 score=49536: numel/rnumel mismatch (reduce) (128, 96), (96, 128); one Triton kernel has one (numel, rnumel)\n") != NULL,
       "cuda reductions: refused as numel/rnumel mismatch (reduce)");
    free(dec); dec = NULL;
    /* GPU loop reordering: the relu grad [32, 64] is walked as [64, 32] to fuse into the column sum */
    ctx->target = MI_DEV_CUDA;
    k = kernels(ctx, "cuda/checkpoint_train/graph1", true, &dec, NULL);
    ctx->target = MI_DEV_CPU;
    is_int(k, 3, "checkpoint_train backward on cuda: mm, the fused kernel, mm (as output_code.py)");
    ok(dec && strstr(dec, "fuse op1 + op3 score=8192: vertical: producer into consumer; loops of op1 reordered to [64, 32]\n"), "the reordering is named");
    free(dec); dec = NULL;
    k = kernels(ctx, "cuda/checkpoint_train/graph1", true, &dec, NULL);
    is_int(k, 4, "the same graph on cpu: no reordering (Inductor's cpu backend does not reorder): mm, relu grad, mm, sum");
    ok(dec && strstr(dec, "skip op1 + op3") && !strstr(dec, "reordered"), "cpu: op1 + op3 refused");
    free(dec); dec = NULL;
    /* extern kernels never fuse; relu fuses... into nothing (its producer is extern) */
    is_int(kernels(ctx, "cpu/mlp/graph0", true, NULL, NULL), 3, "mlp: addmm, relu, addmm");
    /* memory planning, fusion off, on cuda (one kernel per group): softmax's sum (buf2,
     * f32[64, 1]) takes the storage of the max (buf0), dead once exp(x - max) is computed; buf1 is
     * still read by the division, which writes the output over it. On cpu the four loop nests are one cpp kernel whose arguments
     * are restrict pointers: no storage changes hands inside it */
    Graph *g0;
    IrModule *m0;
    ctx->target = MI_DEV_CUDA;
    Schedule *s0 = sched(ctx, "cpu/softmax/graph0", false, &g0, &m0);
    ctx->target = MI_DEV_CPU;
    if (ok(s0 != NULL, "softmax schedules with fusion off")) {
        Buffer *b0 = ir_find_buffer(m0, "buf0"), *b1 = ir_find_buffer(m0, "buf1"), *b2 = ir_find_buffer(m0, "buf2");
        ok(b0 && b1 && b2 && s0->reuse_of[b2->id] == b0->id, "buf2 reuses buf0");
        Buffer *b3 = ir_find_buffer(m0, "buf3");
        ok(b0 && s0->reuse_of[b0->id] < 0, "buf0 gets its own storage");
        /* the division reads buf1 where it writes and is its last reader: it writes the output in
         * place of buf1 (scheduler.py decide_inplace_update), so buf1 lives in the output */
        ok(b1 && b3 && b3->output_index >= 0 && s0->inplace_of[b3->id] == b1->id && s0->reuse_of[b1->id] == b3->id,
           "buf1 lives in the output buf3, which the division writes in place of it");
    }
    sched_free(s0); ir_free(m0); graph_free(g0);
    s0 = sched(ctx, "cpu/softmax/graph0", false, &g0, &m0);
    if (ok(s0 != NULL, "softmax schedules with fusion off (cpu)")) {
        is_int(sched_num_kernels(s0), 1, "cpu: one kernel of %d loop nests", s0->norder);
        char *src = codegen_c(ctx, s0);
        ok(src && !strstr(src, "reuses") && !strstr(src, "in place of") && strstr(src, "float *buf2 = (float *)(mi_ar + "),
           "cpu: no storage handed on inside the kernel; buf2 lies in the arena");
        CgMemPlan *mp = cg_mem_plan(s0);
        Buffer *b0 = ir_find_buffer(m0, "buf0"), *b1 = ir_find_buffer(m0, "buf1"), *b2 = ir_find_buffer(m0, "buf2");
        ok(mp->packed && b0 && b1 && b2 && mp->slot[b0->id] >= 0 && mp->slot[b1->id] >= 0 && mp->slot[b2->id] >= 0 &&
           mp->offset[mp->slot[b0->id]] != mp->offset[mp->slot[b1->id]] && mp->offset[mp->slot[b1->id]] != mp->offset[mp->slot[b2->id]] &&
           mp->offset[mp->slot[b0->id]] != mp->offset[mp->slot[b2->id]], "cpu: the three intermediates live together: three offsets");
        cg_mem_plan_free(mp);
        free(src);
    }
    sched_free(s0); ir_free(m0); graph_free(g0);
    /* mlp: relu overwrites the addmm result it reads at the same element, and that dies there:
     * Inductor's in_out_ptr (its output_code.py: `buf1 = buf0; del buf0  # reuse`,
     * cpp_fused_relu_0(buf1)). One 2 KB-ish slot (f32[32, 128] + 1 byte), the kernel has one argument */
    s0 = sched(ctx, "cpu/mlp/graph0", true, &g0, &m0);
    if (ok(s0 != NULL, "mlp schedules")) {
        CgMemPlan *mp = cg_mem_plan(s0);
        Buffer *b0 = ir_find_buffer(m0, "buf0"), *b1 = ir_find_buffer(m0, "buf1");
        ok(b0 && b1 && mp->inplace_of[b1->id] == b0->id && mp->slot[b1->id] == mp->slot[b0->id], "mlp: buf1 in place of buf0");
        is_int(mp->nslots, 1, "mlp: one slot");
        ok(mp->packed && mp->total == (32 * 128 * 4 + 1 + 63) / 64 * 64, "mlp: the arena is that slot, 64-byte rounded (%lld)", (long long)mp->total);
        char *src = codegen_c(ctx, s0);
        ok(src && strstr(src, "static void cpp_fused_relu_0(float *restrict buf0, const int64_t *syms)") &&
           strstr(src, "float *const buf1 = (float *)buf0;") && strstr(src, "cpp_fused_relu_0(buf0, syms);"),
           "mlp: the relu kernel takes buf0 and writes buf1 through it");
        free(src);
        cg_mem_plan_free(mp);
    }
    sched_free(s0); ir_free(m0); graph_free(g0);
    /* mlp_train backward: the bias grads (sum keepdim, then view to [128] / [10]) are written
     * straight into the outputs, as Inductor's reinterpret_tensor: no copy kernels */
    Graph *g1;
    IrModule *m1;
    Schedule *s1 = sched(ctx, "cpu/mlp_train/graph1", true, &g1, &m1);
    if (ok(s1 != NULL, "mlp_train backward schedules")) {
        is_int(s1->nnodes, 6, "mlp_train backward: 3 mm + 2 sums + relu grad, no copies");
        ok(m1->outputs[1] && m1->out_views[1] && m1->outputs[1]->layout.ndim == 2 && m1->out_views[1]->ndim == 1,
           "output 1 is the [1, 128] sum seen as [128]");
    }
    sched_free(s1); ir_free(m1); graph_free(g1);
    /* dead buffer removal: var_mean's unused parts / getitem chains */
    Graph *g;
    IrModule *m;
    Schedule *s = sched(ctx, "cpu/view_mutation/graph0", true, &g, &m);
    ok(s != NULL, "view_mutation schedules");
    if (s) {
        int dead = 0;
        for (int i = 0; i < s->nnodes; i++) dead += s->nodes[i].dead;
        ok(s->norder >= 2, "mutation through a transposed view is not fused with its reads (%d kernels)", s->norder);
        diag("view_mutation: %d nodes, %d dead, %d kernels", s->nnodes, dead, s->norder);
    }
    sched_free(s); ir_free(m); graph_free(g);
    split_outer(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
