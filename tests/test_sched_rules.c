/* test_sched_rules.c — Inductor rules behind the kernel parity of issue #21, each on a small
 * graph with the exact text the shell shows (`lower` buffer kinds, `sched` kernels and
 * decisions):
 *   - foreach nodes (ForeachKernelSchedulerNode): a _foreach_* list on the GPU target is one
 *     combo kernel; two lists of one length fuse pairwise; lists of other lengths and
 *     reductions stay out, with Inductor's WhyNoFuse texts; the cpp backend has no FOREACH;
 *   - in-place foreach items are their own mutation (mutate_to with unsafe_alias): one node;
 *   - Reduction.create unrolls reductions of fewer than 8 static elements (pointwise);
 *   - tuned_bmm on cpu: a bmm of one row or one column is a sum reduction, no extern call;
 *   - GraphLowering.run_node realizes a returned value at its own node;
 *   - memory.py reorder_for_peak_memory: the fused kernels in LPMF's order when it peaks lower;
 *     tangents are no freeable inputs (utils.py is_nonfreeable_buffers); a fallback item's
 *     readers follow its MultiOutput node, not the call; symbolic sizes by their size hints;
 *   - index_put_ (reinplace's) scatters into its first argument's buffer;
 *   - score_fusion_memory on normalized deps for vertical pairs too; memory.py's get_numel sizes;
 *   - the loop order Inductor picks from a body's stores and loads (CPU);
 *   - as_strided as a ReinterpretView, unfold as a GenericView; channels-last realization of a
 *     pool near convolutions; the GPU's loop reorder on unnormalized deps and select_tiling;
 *   - no size hint (0 bytes shared) for a dependency over an unbacked size; an item() is a
 *     DynamicScalar extern node that flushes the cpp kernel group where it runs;
 *   - mm's matrices need a stride-1 dim (require_stride1), else a copy kernel;
 *   - layouts decided in creation order from current reads; a broadcast freezes a buffer;
 *   - ExternKernel.realize_input hands an extern a StorageBox's buffer itself;
 *   - a reader computes inline a value realized after it was lowered (make_loader's capture);
 *   - cpp.py compatible ranges into a fused node whose nodes share one buffer size;
 *   - diagonal_scatter as lowering.py's clone + mutate_to of the diagonal view;
 *   - split reductions on a GPU (Reduction.num_splits, create_multilayer);
 *   - convert_to_reinterpret_view by make_indexer (a returned view of a constant buffer);
 *   - decide_inplace_update: which GPU kernel writes over a buffer it reads (in_out_ptr).
 * Values of these graphs against the interpreter: tests/test_codegen.c (tests/fixtures/codegen:
 * unrolled_small_reductions, cpu_bmm_one_row, foreach_inplace_read_after). */
#include "tap.h"
#include "lowering/lowering.h"
#include "ops/interp.h"
#include "scheduler/scheduler.h"
#include "codegen/codegen_reuse.h"
#include "codegen/codegen_c.h"
#include "codegen/codegen_cuda.h"
#include "runtime/runtime.h"
#include "tests/support/fixture_graph.h"
#include "fx_passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lower and schedule `path` for the device; *kern gets "name: op0 op1 | op2\n" per kernel,
 * *dec the decision text (both malloc'd). Returns the kernel count, -1 when it fails. */
/* "name: op0 op1 | op2\n" per kernel of s */
static char *kernels_text(const Schedule *s) {
    StrBuf sb;
    sb_init(&sb);
    for (int k = 0; k < s->nkernels; k++) {
        const SchedKernel *kn = &s->kernels[k];
        sb_printf(&sb, "%s:", kn->name);
        for (int p = 0; p < kn->n; p++) {
            const SchedGroup *gr = &s->groups[s->order[kn->first + p]];
            sb_printf(&sb, "%s", p ? " |" : "");
            for (int i = 0; i < gr->n; i++) sb_printf(&sb, " %s", s->nodes[gr->nodes[i]].name);
        }
        sb_putc(&sb, '\n');
    }
    return sb_take(&sb);
}

static int sched_text(MiCtx *ctx, const char *path, MiDeviceKind dev, char **kern, char **dec, char **ir) {
    *kern = *dec = NULL;
    if (ir) *ir = NULL;
    Graph *g = graph_load_file(ctx, path);
    if (!g) return -1;
    ops_resolve_graph(g);
    ctx->target = dev;
    ctx->fusion = true;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    int nk = -1;
    if (s) {
        *kern = kernels_text(s);
        *dec = sched_decisions_text(s);
        nk = s->nkernels;
    }
    if (ir && m) {
        StrBuf sb;
        sb_init(&sb);
        for (int i = 0; i < m->nbufs; i++) {
            const Buffer *b = m->bufs[i];
            if (b->kind == BUF_INPUT) continue;
            sb_printf(&sb, "%s %s%s%s\n", b->name, b->kind == BUF_EXTERN ? "extern" : b->is_reduction ? "reduction" : "pointwise",
                      b->mutates ? " mutates " : "", b->mutates ? b->mutates->name : "");
        }
        *ir = sb_take(&sb);
    }
    sched_free(s);
    ir_free(m);
    graph_free(g);
    ctx->target = MI_DEV_CPU;
    return nk;
}

static void foreach_lists(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/foreach_add_three.py", MI_DEV_CUDA, &k, &d, &ir);
    is_int(n, 1, "_foreach_add_ of 3 tensors on cuda: one kernel");
    is_str(k, "cuda_for_fused_0: op0 | op1 | op2\n", "the combo kernel runs the 3 items as sub-kernels");
    is_str(d, "combo op0 + op1_op2 score=0: foreach: the 3 items of aten._foreach_add_.Scalar are the subnodes of one "
              "ForeachKernelSchedulerNode (one combo kernel)\n", "the foreach grouping is a decision with its reason");
    is_str(ir, "buf0 pointwise mutates arg0_1\nbuf1 pointwise mutates arg1_1\nbuf2 pointwise mutates arg2_1\n",
           "each in-place item is one buffer writing its input (unsafe_alias: no copy)");
    free(k); free(d); free(ir);
    n = sched_text(ctx, "tests/fixtures/sched_rules/foreach_add_three.py", MI_DEV_CPU, &k, &d, NULL);
    is_int(n, 1, "on cpu: one cpp kernel");
    is_str(k, "cpp_fused_add_0: op0 | op1 | op2\n", "the cpp backend has no FOREACH feature: a kernel group, no combo");
    is_str(d, "", "no foreach decision on cpu");
    free(k); free(d);

    n = sched_text(ctx, "tests/fixtures/sched_rules/foreach_pairwise.py", MI_DEV_CUDA, &k, &d, NULL);
    is_int(n, 3, "two lists of 2 fused pairwise, a reduction, a list of 3: three kernels");
    is_str(k, "cuda_for_fused_0: op0 op2 | op1 op3\ncuda_fused_sum_1: op4\ncuda_for_fused_2: op5 | op6 | op7\n",
           "the pairs (op0, op2) and (op1, op3) are the sub-kernels of one combo kernel");
    ok(d && strstr(d, "fuse op0 + op2 score=2048: foreach: two foreach nodes of 2 subnodes fuse pairwise (vertical: producer into consumer)\n"),
       "pairwise foreach fusion is a decision");
    ok(d && strstr(d, "skip op1_op3 + op4 score=512: candidate consumer is a reduction, foreach ops cannot be fused with reductions currently\n"),
       "the sum of an item: Inductor's reason");
    free(k); free(d);
    n = sched_text(ctx, "tests/fixtures/sched_rules/foreach_lengths.py", MI_DEV_CUDA, &k, &d, NULL);
    is_str(k, "cuda_for_fused_0: op0 | op1\ncuda_for_fused_1: op2 | op3 | op4\n", "lists of 2 and 3: two combo kernels");
    ok(d && strstr(d, "skip op0 + op2 score=256: foreach do not have same length\n"), "refused: foreach do not have same length");
    if (d && !strstr(d, "foreach do not have same length")) diag("%s", d);
    free(k); free(d);
}

static void lowering_rules(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/codegen/unrolled_small_reductions.py", MI_DEV_CPU, &k, &d, &ir);
    ok(n >= 1, "small reductions lower and schedule");
    is_str(ir, "buf0 pointwise\nbuf1 pointwise\nbuf2 pointwise\nbuf3 pointwise\nbuf4 pointwise\nbuf5 pointwise\nbuf6 pointwise\nbuf7 reduction\n",
           "reductions of 4 and 2 x 3 elements are unrolled pointwise; the full sum stays a reduction");
    free(k); free(d); free(ir);
    n = sched_text(ctx, "tests/fixtures/codegen/cpu_bmm_one_row.py", MI_DEV_CPU, &k, &d, &ir);
    is_str(ir, "buf0 reduction\nbuf1 pointwise\nbuf2 extern\nbuf3 pointwise\n",
           "cpu bmm of one row: a reduction over K = 9; of one column with K = 5: unrolled; 7 x 7: extern");
    free(k); free(d); free(ir);
    n = sched_text(ctx, "tests/fixtures/sched_rules/output_before_copy.py", MI_DEV_CUDA, &k, &d, &ir);
    is_str(ir, "buf0 pointwise\nbuf1 pointwise\nbuf2 pointwise mutates arg0_1\n",
           "the returned add_1 is buf0 (realized at its node), the copy's source buf1, the copy buf2");
    free(k); free(d); free(ir);
    /* the recorded case: Inductor's kernels are [add_1 (op0), the copy's source (op5)] and [the copy (op6)] */
    n = sched_text(ctx, "tests/fixtures/torch-cases/cuda/view_mutation/graph0/post_post_grad.py", MI_DEV_CUDA, &k, &d, &ir);
    is_str(ir, "buf0 pointwise\nbuf1 pointwise\nbuf2 pointwise mutates arg0_1\n", "view_mutation: add_1 is buf0, the copy's source buf1");
    is_str(k, "cuda_fused_add_mul_permute_reshape_select_select_scatter_0: op0 op1\ncuda_fused_copy_1: op2\n",
           "view_mutation: kernels [add_1, source] and [copy], as Inductor's output_code.py");
    free(k); free(d); free(ir);
}

/* lowering.py index_put_ (index_put_impl_ on self): reinplace's in-place index_put_ into an
 * intermediate scatters into that buffer; no functionalize, no clone between the scatters */
static void index_put_inplace(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/index_put_inplace.py", MI_DEV_CUDA, &k, &d, &ir);
    is_str(ir, "buf0 pointwise\nbuf1 pointwise mutates buf0\nbuf2 pointwise mutates buf0\nbuf3 pointwise\n",
           "index_put_ chain: the zeros, two scatters into them, the add");
    is_int(n, 4, "four kernels: zeros, the scatter of zeros, the accumulating scatter, the add");
    free(k); free(d); free(ir);
}

/* memory.py reorder_for_peak_memory after fusion: LPMF's order wins when its peak is lower */
static void peak_memory(MiCtx *ctx) {
    char *k, *d;
    Graph *g = graph_load_file(ctx, "tests/fixtures/sched_rules/peak_memory_order.py");
    ops_resolve_graph(g);
    ctx->fusion = true;
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    /* estimate_peak_memory as memory.py computes it: a graph output has end_step -1, so its
     * size is taken off at step 0 (sum 256 B, exp 32 KiB, mm 16 KiB all outputs; relu 16 KiB
     * lives until the mm). Creation order relu/sum, exp, mm: -32768, 0, +16384, 0 -> peak
     * 16384; LPMF's relu/sum, mm, exp: -32768, -16384, 0 (relu freed), 0 -> peak 0 */
    is_str(s ? s->mem_note : NULL, "reordered for peak memory (lpmf): 16384 -> 0 bytes",
           "creation order peaks at 16 KiB (relu waits for the mm while exp is made); LPMF's at 0");
    sched_free(s); ir_free(m); graph_free(g);
    int n = sched_text(ctx, "tests/fixtures/sched_rules/peak_memory_order.py", MI_DEV_CPU, &k, &d, NULL);
    is_int(n, 3, "peak_memory_order: three kernels");
    /* relu has two users, one an mm (run_node's need_fixed_layout): it is realized at its node
     * in its eager stride order, so it is buf0 and the sum buf1 */
    /* (relu's contiguous loops merge to ((4096,), ()), the sum is ((64,), (64,)): two loop
     * nests of one C function, cpp.py's _why_fuse_nodes has no case for them) */
    is_str(k, "cpp_fused_relu_sum_0: op0 | op1\nextern_mm: op3\ncpp_fused_exp_1: op2\n",
           "the mm runs before exp, so the cpp kernel group is flushed there: relu/sum, mm, exp");
    free(k); free(d);
    /* utils.py is_nonfreeable_buffers: tangents_* are no freeable inputs (as primals_* / arg*),
     * so the creation order peaks at 0 and stays (cpu_mlp_mixer_train's backward: LPMF wins
     * there only without the tangent's bytes, 7 kernels as Inductor) */
    g = graph_load_file(ctx, "tests/fixtures/sched_rules/peak_memory_tangents.py");
    ops_resolve_graph(g);
    m = g ? ir_lower(ctx, g) : NULL;
    s = m ? sched_run(ctx, m) : NULL;
    ok(s && !s->mem_note[0], "tangents_1 left out: the creation order (peak 0) is kept (no note)");
    if (s && s->mem_note[0]) diag("%s", s->mem_note);
    sched_free(s); ir_free(m); graph_free(g);
    n = sched_text(ctx, "tests/fixtures/sched_rules/peak_memory_tangents.py", MI_DEV_CPU, &k, &d, NULL);
    is_str(k, "cpp_fused_add_exp_0: op0 op5\nextern_mm: op1\ncpp_fused_exp_sum_1: op2 | op3\nextern_mm: op4\n",
           "a tangent's bytes count for no order: four kernels in creation order");
    free(k); free(d);
    /* memory.py's predecessors are the makers of the buffers a node reads: a reader of a
     * fallback's item follows the item's MultiOutput node, not the call (BFS ranks it by the
     * item's step), so the sums of svd / pinv results run after all seven items (Inductor's
     * cpp_fused_add_amax_div_eq_linalg_vector_norm_..._2, one kernel) */
    n = sched_text(ctx, "tests/fixtures/sched_rules/multi_output_items.py", MI_DEV_CPU, &k, &d, NULL);
    is_str(k, "extern_mm: op0\ncpp_fused_pow_sum_0: op1\nfallback__linalg_svd: op2\nfallback_linalg_pinv: op8\n"
              "fallback__linalg_svd: op11\ncpp_fused_pow_1: op17\nextern_multi_output_buf2: op3\nextern_multi_output_buf2: op4\n"
              "extern_multi_output_buf2: op5\nextern_multi_output_buf8: op9\nextern_multi_output_buf11: op12\n"
              "extern_multi_output_buf11: op13\nextern_multi_output_buf11: op14\n"
              "cpp_fused_add_amax_div_eq_pow_reshape_2: op6 op7 | op16 | op10 | op18 | op15\n",
           "BFS: the items first, then the reductions of them in one kernel");
    free(k); free(d);
    /* sizevars.size_hint: a symbolic size counts with its example value (the log's
     * fx_graph_runnable: reader.symint(6) for arg0_1: "Sym(s77)") */
    for (int hinted = 0; hinted < 2; hinted++) {
        g = graph_load_file(ctx, "tests/fixtures/sched_rules/size_hints_dynamic.py");
        if (hinted) is_int(g ? input_size_hints("    reader.symint(6)  # arg0_1\n    reader.symint(4)  # arg1_1\n"
                                                "    buf0 = reader.storage(None, 4*s27*(s77 - 1) + 4*s27)\n"
                                                "    reader.symint(20)  # arg3_1\n", g) : -1, 3, "three size hints: s77, s27, s17");
        ops_resolve_graph(g);
        ctx->target = MI_DEV_CPU;
        m = g ? ir_lower(ctx, g) : NULL;
        s = m ? sched_run(ctx, m) : NULL;
        k = s ? kernels_text(s) : NULL;
        if (!hinted) is_str(k, "cpp_fused_add_clone_convert_element_type_div_expand_full_0: op1 | op0 op2 | op3\n"
                               "fallback_cumsum: op4\nextern_multi_output_buf4: op5\nextern_mm: op6\n",
                            "no hints: symbolic sizes keep the creation order (one kernel before cumsum)");
        else {
            is_str(s ? s->mem_note : NULL, "reordered for peak memory (dfs): 192 -> 168 bytes", "s77 = 6: DFS peaks at 168 bytes, the creation order at 192");
            is_str(k, "cpp_fused_full_iota_le_sub_unsqueeze_where_0: op3\nfallback_cumsum: op4\nextern_multi_output_buf4: op5\n"
                      "cpp_fused_add_clone_convert_element_type_div_expand_iota_1: op1 | op0 op2\nextern_mm: op6\n",
                   "with hints: the tril kernel, cumsum, the sums, mm (Inductor's two kernels)");
        }
        free(k);
        sched_free(s); ir_free(m); graph_free(g);
    }
}

/* The eighth unseen batch's cumprod / diff / trapezoid forward (cumprod_diff_trapz.py):
 * score_fusion_memory is one rule for both kinds of pair on the CPU (normalized MemoryDeps both
 * sides have; a vertical pair sharing none is refused by choices.py can_fuse), and memory.py
 * sizes buffers by get_numel() (a cat slice [5, 1] of stride 9: 5 elements) with a fallback's
 * MultiOutputLayout buffer allocating its item: LPMF runs both fallbacks after the cpp kernel,
 * so the kernel group is one function, as Inductor's cpp_fused_add_cat_mul_select_sigmoid_slice_sub_sum_0. */
static void cumprod_forward(MiCtx *ctx) {
    char *k, *d;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/cumprod_diff_trapz.py", MI_DEV_CPU, &k, &d, NULL);
    is_int(n, 7, "cumprod forward: mm, one cpp kernel, the cat (nop), cumsum and cumprod with their items");
    is_str(k, "extern_mm: op0\n"
              "cpp_fused_add_mul_select_sigmoid_slice_sub_0: op1 op5 op8 | op4 op9 | op7 | op10\n"
              "nop_concat_buf6: op6\n"
              "fallback_cumsum: op11\nextern_multi_output_buf11: op12\n"
              "fallback_cumprod: op2\nextern_multi_output_buf2: op3\n",
           "sigmoid + add, the cat slice and the row sum in one loop nest; the [5] epilogue beside it");
    /* (the pointwise pair first, a _why_fuse_nodes fusion; the sum joins by outer-loop fusion) */
    ok(d && strstr(d, "fuse op1 + op5 score=160: vertical: producer into consumer\n") &&
       strstr(d, "fuse op1_op5 + op8 score=160: vertical: producer into consumer\n") &&
       strstr(d, "skip op1_op5_op8 + op4_op9 score=20: memory deps did not match; buf1 read at a different index than op1 writes it\n"),
       "the sum joins its producer on 160 shared bytes before the epilogue (20 bytes) could take it");
    free(k); free(d);
    Graph *g = graph_load_file(ctx, "tests/fixtures/sched_rules/cumprod_diff_trapz.py");
    ops_resolve_graph(g);
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    /* creation order: cumprod's 160-byte result (an output, counted from step 0 as memory.py
     * does) is made early, so cumsum's step, with its 128-byte input and result, peaks at 128;
     * LPMF runs cumsum before cumprod: 0 */
    is_str(s ? s->mem_note : NULL, "reordered for peak memory (lpmf): 128 -> 0 bytes", "cumprod forward: LPMF's order peaks lower");
    sched_free(s); ir_free(m); graph_free(g);
}

/* ComputedBuffer.simplify_and_reorder (_apply_loop_reordering: pick_loop_order over the stores
 * and the loads) on the CPU: the NCHW clone of a channels-last sum walks (n, h, w, c), and the
 * mean over all of a channels-last product reduces in that order too (the start tree walked
 * both in the store's / the dims' order, [2, 3, 4, 4]). */
static void loop_order(MiCtx *ctx) {
    Graph *g = graph_load_file(ctx, "tests/fixtures/codegen/loop_order_channels_last.py");
    ops_resolve_graph(g);
    ctx->target = MI_DEV_CPU;
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; m && i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->kind != BUF_COMPUTED || !b->body) continue;
        sb_printf(&sb, "%s:", b->name);   /* the loop ranges, outermost first; '|' before the reduced ones */
        for (int k = 0; k < b->body->nvars; k++) {
            char t[32];
            sb_printf(&sb, "%s %s", k == b->body->npoint ? " |" : "", sym_str(b->body->ranges[k], t, sizeof t));
        }
        sb_putc(&sb, '\n');
    }
    char *got = sb_take(&sb);
    is_str(got, "buf0: 2 4 4 3\nbuf1: | 2 4 4 3\nbuf2:\n",
           "the clone walks (n, h, w, c); the mean reduces in (n, h, w, c)");
    free(got);
    ir_free(m); graph_free(g);
}

/* cpp.py CppScheduling on the groups simplify_and_reorder leaves (ir_cpp_group), and
 * scheduler.py's order of the fused nodes */
static void cpp_rules(MiCtx *ctx) {
    char *k, *d;
    /* ln_gelu (Inductor's ir_post_fusion.txt: OuterLoopFusedSchedulerNode(op0, op1, op3, op4)):
     * first the pairs of _why_fuse_nodes (priority 0): the two var_mean reductions side by side
     * (SAME_VARS_REDUCE) and the normalize ((64, 256),) with the gelu, flattened to ((16384,),)
     * but of the same buffer size (COMPATIBLE_RANGES_NO_REDUCTION); only then the outer-loop
     * fusion of the two (priority 1, get_fusion_pair_priority) */
    int n = sched_text(ctx, "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/post_post_grad.py", MI_DEV_CPU, &k, &d, NULL);
    is_int(n, 1, "ln_gelu: one kernel");
    is_str(d, "fuse op0 + op1 score=65536: horizontal: shared reads\n"
              "fuse op2 + op3 score=65536: vertical: producer into consumer\n"
              "fuse op0_op1 + op2_op3 score=66048: vertical: producer into consumer\n",
           "ln_gelu: the reductions and the two pointwise nodes pair first, the outer-loop fusion last");
    free(k); free(d);
    /* a pointwise node whose contiguous loops merge ((4096,),) and its row sum ((64,), (64,))
     * share no loop: two loop nests of one kernel */
    sched_text(ctx, "tests/fixtures/sched_rules/peak_memory_order.py", MI_DEV_CPU, &k, &d, NULL);
    ok(d && strstr(d, "skip op0 + op1 score=16384: cpp: ((4096,), ()) vs ((64,), (64,)) (no shared outer loop)\n"),
       "relu and its row sum: refused in cpp.py's terms");
    free(k); free(d);
    /* _can_fuse_nodes_with_compatible_ranges with a fused ref: exp ((18,),) into div + mul
     * ((6, 3),), whose nodes all have exp's buffer size (cpu_distributions_logprob_train's
     * backward: the softplus into the fused nodes that read the broadcast row) */
    n = sched_text(ctx, "tests/fixtures/sched_rules/compatible_ranges_fused.py", MI_DEV_CPU, &k, &d, NULL);
    is_str(k, "cpp_fused_div_exp_expand_mul_unsqueeze_0: op0 op1 op2\n", "compatible ranges: one fused node, one loop nest");
    is_str(d, "fuse op1 + op2 score=96: horizontal: shared reads\n"
              "fuse op0 + op1_op2 score=72: vertical: producer into consumer\n",
           "compatible ranges: the flat exp re-split as the fused pair of one buffer size");
    free(k); free(d);
    /* the fused sums (min_order 0) are visited first and pull in the mm they wait for */
    n = sched_text(ctx, "tests/fixtures/sched_rules/topo_pull.py", MI_DEV_CPU, &k, &d, NULL);
    is_int(n, 2, "topo_pull: two kernels");
    is_str(k, "extern_mm: op2\ncpp_fused_mul_relu_sum_0: op0 op3 | op1\n",
           "topological_sort_schedule: mm, then the fused sums and the relu in one cpp kernel");
    free(k); free(d);
}

/* lowering.py as_strided: a ReinterpretView of the realized storage under its input, no
 * fallback (cpu_groupnorm_bf16_train's forward: 2 kernels as Inductor, was 3); run_node's
 * maybe_apply_channels_last_stride_order: a max pool with more reads than
 * realize_acc_reads_threshold near convolutions is realized channels-last and fuses with the
 * avg pool beside it (cpu_inception_branches_eval: 4 kernels as Inductor, was 5) */
static void view_and_layout_rules(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/codegen/as_strided_group_norm_bf16.py", MI_DEV_CPU, &k, &d, &ir);
    is_int(n, 3, "bf16 group norm: 3 kernels (2 cpp + the convolution)");
    is_str(ir, "buf0 pointwise\nbuf1 pointwise\nbuf2 extern\nbuf3 reduction\nbuf4 reduction\nbuf5 pointwise\n"
               "buf6 pointwise\nbuf7 pointwise\nbuf8 pointwise\n",
           "as_strided of mul / add_1 is no buffer: a strided read of theirs");
    is_str(k, "cpp_fused_0: op0 | op1\nextern_convolution: op2\n"
              "cpp_fused_add_as_strided_convert_element_type_div_exp_mul_1: op3 op4 | op5 | op6 op7 | op8\n",
           "group norm: one cpp kernel after the convolution, as Inductor's output code");
    free(k); free(d); free(ir);
    n = sched_text(ctx, "tests/fixtures/codegen/inception_pool_channels_last.py", MI_DEV_CPU, &k, &d, NULL);
    ok(k && !strncmp(k, "cpp_fused__low_memory_max_pool_with_offsets_avg_pool2d_convolution_0: op0 op10 | op1 op3\n", 87),
       "inception: max pool and avg pool fused in the first kernel with the two input copies");
    ok(d && strstr(d, "fuse op0 + op10 score="), "the channels-last max pool and avg pool fuse (same loops)");
    is_int(n, 10, "inception: 4 cpp kernels, 5 convolutions, the concat's nop");
    free(k); free(d);
    /* lowering.py unfold: a GenericView, no fallback (cpu_tensor_unfold_windows_train: 1 kernel
     * as Inductor's cpp_fused_amax_mul_sum_unfold_0, was 2 and three fallback calls) */
    n = sched_text(ctx, "tests/fixtures/codegen/unfold_windows.py", MI_DEV_CPU, &k, &d, &ir);
    is_int(n, 1, "unfold windows: one kernel");
    is_str(k, "cpp_fused_amax_mul_sum_unfold_0: op0 | op1\n", "the windowed sum and the amax in one cpp kernel");
    is_str(ir, "buf0 pointwise\nbuf1 pointwise\n", "unfold is no buffer: the two results read the input through it");
    free(k); free(d); free(ir);
    /* the GPU: a permuted output of a channels-last value is a view of its buffer; the normalize
     * joins the per-channel sum after a loop reorder, its tiling being the sum's (6, 30) */
    n = sched_text(ctx, "tests/fixtures/sched_rules/uint8_normalize_cuda.py", MI_DEV_CUDA, &k, &d, &ir);
    is_int(n, 1, "uint8 normalize on cuda: one kernel");
    is_str(ir, "buf0 pointwise\nbuf1 pointwise\nbuf2 reduction\n", "no copy for the permuted u8 output");
    is_str(d, "fuse op0 + op1 score=744: vertical: producer into consumer\n"
              "fuse op0_op1 + op2 score=180: horizontal: shared reads; loops of op0 reordered to [2, 3, 5, 6]\n",
           "the normalize and the sum fuse after the pointwise loops are reordered");
    free(k); free(d); free(ir);
}

/* Scheduler.dep_size_hint: a dependency whose numel names an unbacked symbol has size hint 0,
 * so two reductions over masked_select's f32[u0] share nothing and stay two kernels
 * (cuda_masked_select_unbacked: 5 kernels as Inductor's output code, was 4) */
static void unbacked_rules(MiCtx *ctx) {
    char *k, *d;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/masked_select_unbacked_cuda.py", MI_DEV_CUDA, &k, &d, NULL);
    is_int(n, 9, "masked_select / nonzero on cuda: 5 generated kernels, 2 fallbacks, 2 MultiOutputs");
    is_str(k, "cuda_fused_gt_0: op0\nfallback_masked_select: op1\nextern_multi_output_buf1: op2\ncuda_fused_gt_1: op3\n"
              "fallback_nonzero: op4\nextern_multi_output_buf4: op5\ncuda_fused_add_sum_2: op6 op10\n"
              "cuda_fused_convert_element_type_mean_3: op7 op8\ncuda_fused_max_mul_sigmoid_4: op9\n",
           "the sum and the max over f32[u0] are two kernels; each fuses its vertical epilogue");
    is_str(d, "fuse op7 + op8 score=4104: vertical: producer into consumer\n"
              "fuse op6 + op10 score=4100: vertical: producer into consumer\n",
           "no horizontal pair over the unbacked reads");
    free(k); free(d);
    /* an item() is Inductor's DynamicScalar, an extern node between the groups before it in
     * node order and the first that uses its symbol: it flushes the cpp kernel group
     * (cpu_item_capture_scalar: 2 kernels as Inductor's output code, was 1) */
    n = sched_text(ctx, "tests/fixtures/sched_rules/item_dynamic_scalar.py", MI_DEV_CPU, &k, &d, NULL);
    is_int(n, 2, "item() of an input between two cpu kernel groups: two kernels");
    is_str(k, "cpp_fused_abs_convert_element_type_div_max_0: op0 | op1\n"
              "cpp_fused_convert_element_type_full_mul_slice_sum_1: op2 | op3\n",
           "the max and x / s, then (after u1 = n.item()) ones(u1) * s and the slice's sum");
    free(k); free(d);
}

/* select_algorithm's realize_inputs (ExternKernel.require_stride1) on mm_args' two matrices:
 * the permuted expand of a scalar gradient, strides (0, 0), is copied before the mm
 * (cuda_random_masking_randint_train's backward: 4 kernels as Inductor, was 3) */
static void mm_operand_rules(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/mm_stride1_cuda.py", MI_DEV_CUDA, &k, &d, &ir);
    is_int(n, 5, "random masking backward on cuda: 4 generated kernels and the mm");
    is_str(ir, "buf0 pointwise\nbuf1 pointwise mutates buf0\nbuf2 pointwise\nbuf3 extern\nbuf4 reduction\n",
           "buf2: the copy of mm's stride-0 operand");
    is_str(k, "cuda_fused_expand_reshape_sum_0: op4\ncuda_fused_expand_mm_permute_reshape_1: op2\nextern_mm: op3\n"
              "cuda_fused_full_2: op0\ncuda_fused_index_put__3: op1\n",
           "the copy is a kernel of its own right before the mm, as Inductor's output code");
    free(k); free(d); free(ir);
}

/* The strides of buffer `name` of m as "(a, b, c)", or "" when there is none. */
static void strides_of(const IrModule *m, const char *name, char *out, size_t n) {
    out[0] = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (strcmp(b->name, name)) continue;
        size_t k = 0;
        k += (size_t)snprintf(out + k, n - k, "(");
        for (int d = 0; d < b->layout.ndim && k < n; d++) {
            char e[64];
            k += (size_t)snprintf(out + k, n - k, "%s%s", d ? ", " : "", sym_str(b->layout.stride[d], e, sizeof e));
        }
        if (k < n) snprintf(out + k, n - k, ")");
    }
}

/* GraphLowering.finalize: layouts decided in creation order from the reads as they are then
 * (the m2 of the second layer norm fills (1, 2, 12) from its reads of the residual add, decided
 * (16, 32, 1) just before), and ExpandView.create's freeze of a realized buffer a pointwise op
 * broadcasts (the mean, read by sub(x, mean), stays contiguous): Inductor's buf34 and getitem_17 */
static void layout_rules(MiCtx *ctx) {
    Graph *g = graph_load_file(ctx, "tests/fixtures/sched_rules/decoder_layer_layouts_cuda.py");
    if (g) ops_resolve_graph(g);
    ctx->target = MI_DEV_CUDA;
    IrModule *m = g ? ir_lower(ctx, g) : NULL;
    char a[128] = "", b[128] = "", c[128] = "";
    if (m) { strides_of(m, "buf30", a, sizeof a); strides_of(m, "buf31", b, sizeof b); strides_of(m, "buf32", c, sizeof c); }
    is_str(a, "(16, 32, 1)", "the residual add: strides from its reads");
    is_str(b, "(6, 1, 12)", "var_mean's mean, broadcast into sub: frozen contiguous");
    is_str(c, "(1, 2, 12)", "var_mean's m2: filled from its reads of the add, as decided before it");
    ir_free(m);
    graph_free(g);
    ctx->target = MI_DEV_CPU;
}

/* An extern's argument is the realized buffer itself, never a constant inlined by
 * ComputedBuffer.make_loader: the zeros state two addmm read is one buffer (cpu_rnn_cell_train's
 * forward: 4 kernels as Inductor's output code, was 5: a second zeros kernel fused with the tanh
 * gave the later cells' kernels another source) */
static void extern_arg_rules(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/zeros_two_addmm.py", MI_DEV_CPU, &k, &d, &ir);
    is_int(n, 4, "zeros read by two addmm: 4 kernels");
    is_str(ir, "buf0 pointwise\nbuf1 extern\nbuf2 extern\nbuf3 pointwise\n", "one zeros buffer for both addmm");
    is_str(k, "cpp_fused_full_0: op0\nextern_mm: op1\nextern_mm: op2\ncpp_fused_add_tanh_1: op3\n",
           "the zeros kernel, the two addmm, the tanh");
    free(k); free(d); free(ir);
}

/* A reader captures its inputs' loaders when it is lowered (make_loader: a pending value's
 * inner_fn): a value realized later is still computed inline in it. var_mean's backward sums
 * neg(tangents_1 * rsqrt) before the mm realizes the product: the sum joins the rsqrt kernel;
 * the later sum of the product reads its buffer (cuda_float64_var_mean_train's backward: 3
 * kernels as Inductor, was 5: the first sum read the product's buffer, a cycle kept it apart).
 * sum_4 of add_1 (realized at its node: mark_reuse, 5 reads) costs 6 loads (lw_fn_cost), so it
 * stays inline in add_2 as in Inductor's triton_poi_fused_add_sum_view_2, one store */
static void capture_rules(MiCtx *ctx) {
    char *k, *d;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/var_mean_capture_cuda.py", MI_DEV_CUDA, &k, &d, NULL);
    is_int(n, 5, "var_mean backward on cuda: 3 kernels, the mm and the addmm");
    is_str(k, "cuda_fused_add_mean_mul_neg_rsqrt_sub_0: op0 op1 op2 op5 op6\n"
              "cuda_fused_add_div_expand_mul_neg_pow_1: op3 op7\nextern_mm: op4\n"
              "cuda_fused_add_reshape_sum_2: op8\nextern_mm: op9\n",
           "sum_2 (op6) with the rsqrt and the means; the product (op3) with add_1 (op7)");
    ok(d && strstr(d, "fuse op0_op1_op2_op5 + op6 score=392: vertical: producer into consumer\n"),
       "sum_2 reads the rsqrt it recomputes the product from, not the product's buffer");
    free(k); free(d);
}

/* ExternKernel.convert_to_reinterpret_view indexes a view by make_indexer: a returned view of
 * a realized causal mask (a buffer that reads nothing, which its loading readers compute
 * inline) is a ReinterpretView of that buffer, no copy (cpu_tiny_gpt_2layer_train's
 * unsqueeze(unsqueeze(where)), saved for the backward and SDPA's attn_mask) */
static void reinterpret_rules(MiCtx *ctx) {
    char *k, *d, *ir;
    sched_text(ctx, "tests/fixtures/sched_rules/returned_view_of_constant.py", MI_DEV_CPU, &k, &d, &ir);
    is_str(ir, "buf0 pointwise\nbuf1 extern\nbuf2 pointwise\n", "the where, mm, the add: no [1, 8, 8] copy of the mask");
    is_str(k, "cpp_fused_full_ge_iota_sub_unsqueeze_where_0: op0\nextern_mm: op1\ncpp_fused_add_full_ge_iota_sub_unsqueeze_1: op2\n",
           "the mask is written once (returned through its view); the add recomputes it inline");
    free(k); free(d); free(ir);
}

/* lowering.py diagonal_scatter: clone(x) realized, src stored through the diagonal view into
 * the clone's buffer (a mutation, no fallback): the infonce backward's zeros with the diagonal
 * set stay in the cpp kernel group (cpu_infonce_train's backward: 4 kernels as Inductor). Values:
 * tests/fixtures/codegen/diagonal_scatter_offset.py in tests/test_codegen.c. */
static void diagonal_scatter_rule(MiCtx *ctx) {
    char *k, *d, *ir;
    int n = sched_text(ctx, "tests/fixtures/codegen/diagonal_scatter_offset.py", MI_DEV_CPU, &k, &d, &ir);
    is_int(n, 1, "diagonal_scatter: one cpp kernel");
    is_str(ir, "buf0 pointwise\nbuf1 pointwise mutates buf0\nbuf2 pointwise\n",
           "diagonal_scatter: the clone, the diagonal store into it, the add reading it");
    is_str(k, "cpp_fused_add_diagonal_scatter_0: op0 | op1 | op2\n", "diagonal_scatter: three loop nests of one kernel");
    free(k); free(d); free(ir);
}

/* The fixture at path lowered for the GPU target: the IR interpreter's nout outputs agree with
 * the reference interpreter's within tol (max abs error); what says which test it is. The
 * module, its graph and inputs are returned for more checks (NULL module: none). */
static IrModule *cuda_ir_agrees(MiCtx *ctx, const char *path, const char *what, int nout, double tol, Graph **gout,
                                IValue **in, int *nin) {
    Graph *g = graph_load_file(ctx, path);
    IValue *ref = NULL, *got = NULL;
    int nref = 0, ngot = 0;
    *gout = g;
    *in = NULL;
    *nin = 0;
    if (!ok(g != NULL, "%s: the fixture loads", what)) return NULL;
    ops_resolve_graph(g);
    ok(interp_random_inputs(ctx, g, NULL, 0, in, nin) == 0 && interp_run(ctx, g, *in, *nin, &ref, &nref) == 0 && nref == nout,
       "%s: the reference interpreter runs", what);
    ctx->target = MI_DEV_CUDA;
    ctx->fusion = true;
    IrModule *m = ir_lower(ctx, g);
    if (!ok(m && ir_interp_run(ctx, m, *in, *nin, &got, &ngot) == 0 && ngot == nout, "%s: the IR interpreter runs", what))
        diag("%s", ctx->err.msg);
    for (int j = 0; j < nout && got && ref; j++) {
        double worst = 0;
        for (int64_t e = 0; e < tensor_numel(ref[j].t); e++) {
            double a = tensor_get_f(ref[j].t, e), b = tensor_get_f(got[j].t, e);
            if (fabs(a - b) > worst) worst = fabs(a - b);
        }
        ok(tensor_numel(ref[j].t) == tensor_numel(got[j].t) && worst < tol, "%s: output %d agrees (max abs err %g)", what, j, worst);
    }
    ctx->target = MI_DEV_CPU;
    interp_free_outputs(got, ngot);
    interp_free_outputs(ref, nref);
    return m;
}

/* ir.py Reduction.num_splits / create_multilayer on the GPU target: each reduction of
 * tests/fixtures/sched_rules/split_reductions_cuda.py is two (a [*ranges, split] intermediate,
 * then the split partials), and the IR interpreter's values agree with the reference
 * interpreter (the masked tail of the amax's last block included) */
static void split_reductions(MiCtx *ctx) {
    char *k, *d, *ir;
    const char *path = "tests/fixtures/sched_rules/split_reductions_cuda.py";
    int n = sched_text(ctx, path, MI_DEV_CUDA, &k, &d, &ir);
    is_int(n, 6, "split reductions: two kernels per reduction");
    is_str(d, "skip op2 + op3 score=72: numel/rnumel mismatch (reduce) (18, 6), (86, 3); one Triton kernel has one (numel, rnumel)\n"
              "skip op0 + op1 score=48: numel/rnumel mismatch (reduce) (12, 6), (120, 2); one Triton kernel has one (numel, rnumel)\n"
              "skip op4 + op5 score=8: numel/rnumel mismatch (reduce) (2, 1), (5000, 2); one Triton kernel has one (numel, rnumel)\n",
           "split reductions: [6, 2] x 120, [6, 3] x 86 (masked), [2] x 5000, each then over its splits");
    free(k); free(d); free(ir);
    Graph *g;
    IValue *in;
    int nin;
    ir_free(cuda_ir_agrees(ctx, path, "split reductions", 3, 1e-3, &g, &in, &nin));
    interp_free_outputs(in, nin);
    graph_free(g);
}

/* ir.py WelfordReduction.create / create_multilayer on the GPU target: each Welford of
 * tests/fixtures/sched_rules/split_welford_cuda.py is two kernels (the [*ranges, split] mean,
 * m2 and weight partials, then their welford_combine), masked blocks weigh nothing (the
 * welford_combine of (x, 0, 1)), and the values agree with the reference interpreter in the IR
 * interpreter and in the C code of the CUDA-lowered module (its welford_combine merges partial
 * triples); nvcc compiles the CUDA source */
static void split_welford(MiCtx *ctx) {
    char *k, *d, *ir;
    const char *path = "tests/fixtures/sched_rules/split_welford_cuda.py";
    int n = sched_text(ctx, path, MI_DEV_CUDA, &k, &d, &ir);
    is_int(n, 6, "split Welford: two kernels per statistic");
    ok(d && strstr(d, "skip op0_op1_op2 + op3_op4 score=96: numel/rnumel mismatch (reduce) (8, 4), (8192, 2); one Triton kernel has one (numel, rnumel)\n") &&
       strstr(d, "skip op6_op7_op8 + op9_op10 score=216: numel/rnumel mismatch (reduce) (18, 6), (86, 3); one Triton kernel has one (numel, rnumel)\n") &&
       strstr(d, "skip op12_op13_op14 + op15 score=24: numel/rnumel mismatch (reduce) (2, 1), (5001, 2); one Triton kernel has one (numel, rnumel)\n"),
       "split Welford: [4, 1, 2] x 8192, [6, 3] x 86 (masked), [2] x 5001 (masked), each then over its splits");
    is_str(ir, "buf0 reduction\nbuf1 reduction\nbuf2 reduction\nbuf3 reduction\nbuf4 reduction\nbuf5 pointwise\n"
               "buf6 reduction\nbuf7 reduction\nbuf8 reduction\nbuf9 reduction\nbuf10 reduction\nbuf11 pointwise\n"
               "buf12 reduction\nbuf13 reduction\nbuf14 reduction\nbuf15 reduction\nbuf16 pointwise\n",
           "split Welford: mean, m2 and weight partials, then the combined mean and m2 (var: the m2 alone)");
    free(k); free(d); free(ir);
    Graph *g;
    IValue *in;
    int nin;
    IrModule *m = cuda_ir_agrees(ctx, path, "split Welford", 5, 1e-5, &g, &in, &nin);
    ctx->target = MI_DEV_CUDA;
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    char *c = s ? codegen_c(ctx, s) : NULL, *cu = s ? codegen_cuda(ctx, s) : NULL;
    RtModule *rt = c ? rt_compile(ctx, c) : NULL;
    StrBuf rep;
    sb_init(&rep);
    if (!ok(rt && rt_check(ctx, rt, g, in, nin, 1e-4, 1e-5, &rep) == 1, "split Welford: the C kernels' welford_combine agrees"))
        diag("%s", rep.s ? rep.s : ctx->err.msg);
    ok(cu && strstr(cu, "MiWelfordOp()(") != NULL, "split Welford: the CUDA kernels merge the partial triples");
    tf_nvcc_ok("split Welford", cu);
    ctx->target = MI_DEV_CPU;
    sb_free(&rep);
    rt_free(rt);
    free(c);
    free(cu);
    sched_free(s);
    interp_free_outputs(in, nin);
    ir_free(m);
    graph_free(g);
}

/* mm_args' realize_inputs (ExternKernel.realize_input of a StorageBox, require_stride1) leaves
 * an mm operand's FlexibleLayout unfrozen: finalize's decide_layout lays the padded transpose
 * of tests/fixtures/sched_rules/mm_operand_layout_cuda.py out (1, 8) from its read, the extern
 * reads it through those strides, and the two pads have one source (one kernel, called twice) */
static void mm_operand_layout(MiCtx *ctx) {
    const char *path = "tests/fixtures/sched_rules/mm_operand_layout_cuda.py";
    Graph *g = graph_load_file(ctx, path);
    if (!ok(g != NULL, "mm operand layout: the fixture loads")) return;
    ops_resolve_graph(g);
    ctx->target = MI_DEV_CUDA;
    ctx->fusion = true;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    is_int(s ? codegen_reuse_kernels(ctx, s) : -1, 1, "mm operand layout: the second pad is linked to the first's source");
    is_int(s ? codegen_num_definitions(s) : -1, 1, "mm operand layout: one kernel defined for the two pads");
    sched_free(s);
    const Buffer *mm = NULL;
    for (int i = 0; m && i < m->nbufs; i++) if (m->bufs[i]->kind == BUF_EXTERN) mm = m->bufs[i];
    int64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    bool got = mm && mm->neargs == 2 && sym_is_int(mm->eargs[0].view.stride[0], &a0) && sym_is_int(mm->eargs[0].view.stride[1], &a1) &&
               sym_is_int(mm->eargs[0].buf->layout.stride[0], &b0) && sym_is_int(mm->eargs[0].buf->layout.stride[1], &b1);
    ok(got && a0 == 1 && a1 == 8 && b0 == 1 && b1 == 8, "mm operand layout: f32[8, 4] decided (1, 8), the mm reads it so (%lld, %lld)",
       (long long)a0, (long long)a1);
    ctx->target = MI_DEV_CPU;
    ir_free(m);
    graph_free(g);
}

/* Scheduler.shared_data_after_reordering_loop on the GPU with sizevars.stride_hints: the row
 * sum and the doubled copy of tests/fixtures/sched_rules/reorder_stride_hints_cuda.py read the
 * permuted input through FloorDiv / ModularIndexing in other loop orders; their stride hints
 * match (normalize_with_stride_order, decide_loop_order_to_match), the copy's loops are
 * reordered and both run in one kernel */
static void reorder_stride_hints(MiCtx *ctx) {
    char *k, *d;
    int n = sched_text(ctx, "tests/fixtures/sched_rules/reorder_stride_hints_cuda.py", MI_DEV_CUDA, &k, &d, NULL);
    is_int(n, 3, "reorder by stride hints: three kernels");
    is_str(k, "cuda_fused_clone_mul_permute_pow_reshape_sum_0: op0 op1\nextern_mm: op2\ncuda_fused_sub_1: op3\n",
           "reorder by stride hints: the sum and the copy in one kernel");
    is_str(d, "fuse op0 + op1 score=4096: horizontal: shared reads; loops of op1 reordered to [128, 8]\n"
              "skip op0_op1 + op3 score=512: will create cycle (through another kernel)\n",
           "reorder by stride hints: the copy's loops reordered to the sum's");
    free(k); free(d);
}

/* scheduler.py decide_inplace_update on the GPU: a kernel writes its buffer in the storage of a
 * read one that dies there, at the index it writes (tests/fixtures/sched_rules/inplace_cuda.py:
 * no input, no returned buffer, no buffer two nodes of one kernel read; a returned value may
 * take an intermediate's storage); the CUDA kernel takes it once (Triton's in_out_ptr0) */
static void inplace_rules(MiCtx *ctx) {
    Graph *g = graph_load_file(ctx, "tests/fixtures/sched_rules/inplace_cuda.py");
    if (!ok(g != NULL, "inplace_cuda.py loads")) return;
    ops_resolve_graph(g);
    ctx->target = MI_DEV_CUDA;
    ctx->fusion = true;
    IrModule *m = ir_lower(ctx, g);
    Schedule *s = m ? sched_run(ctx, m) : NULL;
    StrBuf sb;
    sb_init(&sb);
    sb_put(&sb, "");
    for (int i = 0; s && i < m->nbufs; i++)
        if (s->inplace_of[i] >= 0) sb_printf(&sb, "%s in place of %s; ", m->bufs[i]->name, m->bufs[s->inplace_of[i]]->name);
    is_str(sb.s, "buf2 in place of buf1; buf10 in place of buf7; ", "relu over the mm's result, the returned mul over mm_3's");
    const char *lives = NULL;
    for (int i = 0; s && i < m->nbufs; i++)
        if (!strcmp(m->bufs[i]->name, "buf7")) lives = s->reuse_of[i] >= 0 ? m->bufs[s->reuse_of[i]]->name : "own storage";
    is_str(lives, "buf10", "mm_3's result lives in the returned buffer's storage");
    sb_free(&sb);
    sched_free(s);
    ir_free(m);
    graph_free(g);
    ctx->target = MI_DEV_CPU;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    cpp_rules(ctx);
    foreach_lists(ctx);
    lowering_rules(ctx);
    peak_memory(ctx);
    index_put_inplace(ctx);
    cumprod_forward(ctx);
    loop_order(ctx);
    view_and_layout_rules(ctx);
    unbacked_rules(ctx);
    mm_operand_rules(ctx);
    layout_rules(ctx);
    extern_arg_rules(ctx);
    capture_rules(ctx);
    diagonal_scatter_rule(ctx);
    split_reductions(ctx);
    split_welford(ctx);
    mm_operand_layout(ctx);
    reorder_stride_hints(ctx);
    reinterpret_rules(ctx);
    inplace_rules(ctx);
    mi_ctx_free(ctx);
    return done_testing();
}
