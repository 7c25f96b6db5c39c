/* test_unseen_kernels.c — scheduler fidelity (issue #21) on graphs the project was not developed
 * on: tests/tools/survey_kernels.sh over the real torch.compile logs of tests/fixtures/unseen
 * compares, per compiled graph, the kernels Inductor generated (cpp_fused_* / triton_* in the
 * log's inductor_output_code) with the non-extern kernels of our `sched` (extern and fallback
 * calls excluded on both sides). Asserted: the number of graphs (at least those of the batches
 * measured; new logs may join), a floor on the equal ones (the
 * figure reached; raise it as rules land, never lower it), and the exact lines of a few graphs
 * each fixed by one Inductor rule, so a regression names its graph. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "tests/support/shell_harness.h"

/* graphs whose line is fixed, and the rule that fixed each */
static const char *const fixed[] = {
    /* f16 mm / addmm are extern kernels (kernel/mm.py tuned_mm: aten_mm for any dtype) */
    "same     cuda_swiglu_f16 0/0 (1)",
    "same     cuda_swiglu_rmsnorm_bf16_train 0/0 backward (2)",
    "same     cuda_layernorm_nobias_bf16 0/0 backward (1)",
    "same     cuda_autocast_fp16_train 0/0 backward (5)",
    /* a FallbackKernel is no generated kernel (Inductor's torch.ops.aten.* calls) */
    "same     cpu_embedding_bag 0/0 (0)",
    "same     cpu_droppath_train 0/0 (2)",
    /* the GPU refuses a pointwise kernel whose numel is neither the reduction's numel nor
     * numel * rnumel (simd.py can_fuse); diagonal is a view (lowering.py diagonal) */
    "same     cuda_argmax_onehot 0/0 (2)",
    "same     cuda_einsum 0/0 (2)",
    /* channels-last layout optimization (graph.py decide_layout_opt) and the convolution's bias
     * peeled off on the GPU (kernel/conv.py) */
    "same     cpu_conv_bn_eval 0/0 (3)",
    "same     cuda_conv1d_gelu 0/0 (2)",
    "same     cuda_unet_skip 0/0 (2)",
    /* index_put_ into a graph input is a Scatter into it (lowering.py index_put_ ->
     * index_put_impl_ without the clone), not a clone, a scatter and a copy back */
    "same     cpu_kv_cache_decode 0/0 (1)",
    /* a returned view is a ReinterpretView of its storage, no copy kernel (graph.py output:
     * ExternKernel.realize_input -> convert_to_reinterpret_view): of an input, of an extern's
     * result returned twice at two offsets, of a buffer already returned */
    "same     cuda_neox_rotate_half_train 0/0 (1)",
    "same     cuda_perceiver_cross_attn_train 0/0 (1)",
    "same     cuda_resblock_groupnorm_train 0/0 (8)",
    /* split / chunk realize nothing: each piece is a slice_ view (lowering.py split); the
     * RMSNorm's scaled value is recomputed in both halves of the rotation's cat */
    "same     cuda_rmsnorm_rope_bf16 0/0 (1)",
    /* a realized value that reads no buffer is inlined into its readers (ir.py
     * ComputedBuffer.make_loader), and a horizontal pair must share 10 bytes of equal
     * dependencies (scheduler.py score_fusion_memory, can_fuse_horizontal) */
    "same     cuda_clip_loss_train 0/0 (6)",
    "same     cuda_groupnorm_upsample 0/0 (7)",
    "same     cuda_swin_window_attn 0/0 (7)",
    "same     cuda_vit_patch_train 0/0 backward (6)",
    /* the GPU's loop reordering (shared_data_after_reordering_loop) over a symbolic range: the
     * SiLU backward walks [s33, 32] in the column sum's order [32, s33] and joins it */
    "same     cuda_dynamic_mlp 0/0 backward (2)",
    /* two reductions fuse on the GPU only with equal (numel, rnumel) (simd.py can_fuse) */
    "same     cuda_pools 0/0 (3)",
    /* special functions are pointwise (pointwise_overrides_data): one C kernel */
    "same     cpu_special_fns 0/0 (1)",
    /* reorder_for_peak_memory (memory.py): the mm calls move after the cpp kernels */
    "same     cpu_encoder_layer 0/0 backward (4)",
    /* reinplace's index_put_ chain scatters into the intermediate (lowering.py index_put_) */
    "same     cuda_scatter_reduce_amax 0/0 (5)",
    /* a variance over fewer than 8 rows takes two unrolled sums (lowering.py
     * use_two_step_variance) and joins the argmin over the same rows in one pointwise kernel */
    "same     cuda_std_logsumexp 0/0 (2)",
    /* GPU re-tiling of a producer into a reduction kernel (simd.py can_fuse /
     * SIMDKernel.is_compatible: the pointwise [2, 4, 8, 8] splits into the group-norm sum's
     * [2, 4] x [64]; scheduler.py fusable_read_and_write: unnormalized GPU deps compared as
     * they are when both have as many vars, so [2, 4, 4, 64] does not join the sum of its view
     * [2, 16] x [8, 8]); the loop reorder tried before the split when no dep is shared exactly
     * (shared_data_after_reordering_loop), so convnext's [2, 8, 8, 16] walks [16] x [128] */
    "same     cuda_unet_up_concat_train 0/0 backward (5)",
    "same     cuda_unet_block 0/0 backward (6)",
    "same     cuda_resblock_groupnorm_train 0/0 backward (8)",
    "same     cuda_convnext_block_train 0/0 backward (6)",
    /* cpp fuses nodes over differently split loops only where Inductor's simplify_loops
     * would merge them (sched_reshape.c mergeable): the channels-last read keeps [2, 4] */
    "same     cpu_instance_norm_train 0/0 backward (2)",
    /* View.dynamic_reshape_indexer pairs [s77, s27, 48] with [s27*s77, 48]; join_dimensions
     * with symbolic digits makes mm's operand a ReinterpretView of the clone (no copy) */
    "same     cpu_dynamic_sdpa 0/0 backward (3)",
    /* cumsum / cumprod / logcumsumexp / cummax / sort are ir.Scan / ir.Sort on the GPU, fused
     * with their pointwise producers and consumers like reductions (ir.py Scan.create,
     * Sort.create; lowering.py cumsum & co.) */
    "same     cuda_scans 0/0 (1)",
    "same     cuda_tril_mask_diag 0/0 (1)",
    "same     cuda_top_p_sampling 0/0 (2)",
    "same     cuda_sort_cumsum 0/0 (2)",
    "same     cuda_giou_loss_train 0/0 backward (5)",
    /* the sixth batch: TensorBox.mark_reuse before a broadcast (lowering.py expand) realizes the
     * unrolled column count of vector_norm(ord=0, dim=0); _cdist_forward is a FallbackKernel */
    "same     cuda_renorm_vector_norm 0/0 (3)",
    "same     cuda_topk_gather 0/0 (3)",
    "same     cuda_cosine_pairwise_train 0/0 (2)",
    /* the GPU's cat: pointwise_cat or a ConcatKernel by lowering.py's rule (the three gradients
     * of mish/hardswish, one already realized, written into the cat's slices by one kernel;
     * selective_scan's stacked steps into its output) */
    "same     cuda_mish_hardswish_train 0/0 backward (2)",
    "same     cuda_selective_scan 0/0 (5)",
    /* GPU merge_loops after fusion (Scheduler.merge_loops): the f32 -> f16 copies of [16, 32]
     * and [8, 64] both walk 512 elements, one kernel source defined once and called twice */
    "same     cuda_autocast_fp16_train 0/0 (6)",
    /* MemoryDep normalization merges loops in loop order only (dependencies.py _normalize:
     * index_prevent_reordering), and shared_data_after_reordering_loop reorders a pointwise
     * side only: a column sum and a row sum of one tensor share no dependency and stay two
     * kernels; a 2-D tiled pointwise group stays out of the mean reductions */
    "same     cuda_bf16_mlp_gelu_train 0/0 backward (5)",
    "same     cuda_vq_vae_quantize_train 0/0 (5)",
    /* GraphLowering.run_node's need_fixed_layout: a value with several users, one an mm, is
     * required in its eager stride order (ExternKernel.require_stride_order), so the reshape of
     * a pending clone read by two mms and a sum is copied into one [16, 32] buffer, which the
     * column sum then reads in its own order (a pointwise reordered into the reduction) */
    "same     cuda_mha_train 0/0 backward (3)",
    /* the eighth batch (kern8): score_fusion_memory on normalized deps for a vertical pair on the
     * CPU (cumprod's row sum joins sigmoid + add before the [5] epilogue), memory.py's element
     * counts and a scatter fallback on a clone in the peak-memory order (cumsum, then cumprod),
     * simplify_and_reorder's pick_loop_order over stores and loads on the CPU (ssim's backward) */
    "same     cpu_cumprod_diff_trapz_train 0/0 (1)",
    "same     cpu_linalg_inv_det_solve_train 0/0 (3)",
    "same     cpu_ssim_loss_train 0/0 backward (3)",
    /* with cpp's outer-loop fusion of pointwise nodes (kern14) and slice_scatter / select_scatter
     * lowered op by op as lowering.py's inner functions (cpuk13: inner_fn_opcount 30, the chain of
     * scatters into zeros stays pending and is realized once), Inductor's 9 kernels */
    "same     cpu_cumprod_diff_trapz_train 0/0 backward (9)",
    /* fixtures already equal before */
    "same     cuda_embed_ln_train 0/0 backward (5)",
    /* the GradScaler ops and prims.normal are FallbackKernels (no lowering in Inductor): the
     * kernels around them are Inductor's */
    "same     cuda_amp_unscale_update 0/0 (5)",
    "same     cuda_sampling_ops 0/0 (3)",
    /* the ninth session (kern9): unfold is a GenericView (lowering.py unfold), and
     * convert_to_reinterpret_view freezes the buffer under a view before it tries the view
     * (contiguous, not laid out after its read): pow's buffer and mm's copy of its permuted
     * reshape stay two kernels, as Inductor's (with unfold a view and no freeze: 3) */
    "same     cuda_mel_spectrogram 0/0 (4)",
    /* kern9: as_strided is a ReinterpretView (lowering.py as_strided), so the bf16 group norm's
     * statistics are not a fallback's copy; run_node's maybe_apply_channels_last_stride_order
     * before a value is realized (the 3x3 max pool channels-last, fused with the avg pool);
     * unfold a GenericView; on the GPU, the loop reorder judged on the nodes' own dependencies
     * and simd.py's tiling_prevents_reduction_fusion (the u8 image's permuted output one kernel) */
    "same     cpu_groupnorm_bf16_train 0/0 (2)",
    "same     cpu_groupnorm_bf16_train 0/0 backward (1)",
    "same     cpu_inception_branches_eval 0/0 (4)",
    "same     cpu_tensor_unfold_windows_train 0/0 (1)",
    "same     cuda_uint8_image_normalize 0/0 (1)",
    /* hop9: a cond's branch kernels are defined in the same output code (ir.py Conditional:
     * each branch a subgraph compiled on its own); freezing's ops lowered as
     * mkldnn_lowerings.py (the convolution's input required channels-last, the packed linear's
     * bias added after it) */
    "same     cpu_torch_cond 0/0 (4)",
    "same     cpu_freezing_conv_bn_eval 0/0 (3)",
    /* kern10: a dependency over an unbacked size has no size hint (Scheduler.dep_size_hint 0):
     * the sum and the max over masked_select's f32[u0] share nothing, two kernels */
    "same     cuda_masked_select_unbacked 0/0 (5)",
    /* kern10: mm_args' realize_inputs (ExternKernel.require_stride1): an mm operand without a
     * stride-1 dim is copied first (the stride-0 expand of a scalar gradient; the linalg
     * backward's transposed expand) */
    "same     cuda_random_masking_randint_train 0/0 backward (4)",
    "same     cpu_linalg_inv_det_solve_train 0/0 backward (3)",
    /* kern10: an item() is Inductor's DynamicScalar, an ExternKernelSchedulerNode at its
     * min_order: it flushes the cpp kernel group before the first group using u1 */
    "same     cpu_item_capture_scalar 0/0 (2)",
    /* sched10: an extern's argument that is no view is its StorageBox's buffer (realize_input):
     * the zeros state two cells' addmm read is one buffer */
    "same     cpu_rnn_cell_train 0/0 (4)",
    /* sched10: a reader computes inline a value realized after it was lowered (make_loader's
     * capture): the sum of neg(tangents * rsqrt) joins the rsqrt kernel; the normalize recomputes
     * rsqrt from var_mean's m2 */
    "same     cuda_float64_var_mean 0/0 backward (3)",
    "same     cpu_conv_transpose3d_train 0/0 (1)",
    "same     cpu_norm_variants_train 0/0 (1)",
    /* sched11: diagonal_scatter as lowering.py's clone + mutate_to of the diagonal view (no
     * fallback splitting the cpp kernel group) */
    "same     cpu_inplace_view_mutation 0/0 (1)",
    "same     cpu_infonce_train 0/0 backward (4)",
    /* kern12: tangents are no freeable inputs of memory.py's estimate (utils.py
     * is_nonfreeable_buffers), so LPMF's order wins: the mms between Inductor's seven kernels */
    "same     cpu_mlp_mixer_train 0/0 backward (7)",
    /* kern12: memory.py links a fallback item's readers to its MultiOutput node only, so BFS
     * runs the seven items of svd / pinv / svd before the reductions: one kernel after them */
    "same     cpu_linalg_norms_pinv_train 0/0 (3)",
    /* sched11: ir.py's Reduction.num_splits / create_multilayer on the GPU: the channels-last
     * conv's bias and weight-norm sums split into [*ranges, split] partials and a second step */
    "same     cuda_channels_last_3d_conv_train 0/0 backward (6)",
    /* sched12: mm_args' realize_inputs leaves an mm operand flexible: decide_layout lays the
     * padded transpose out (1, 8) and it has the other pad's source (Inductor's mm_t_2, twice) */
    "same     cuda_logaddexp_xlogy_train 0/0 backward (3)",
    /* unseen12: a complex scalar (`(1+2j)`), the fused encoder layer as a FallbackKernel, and a
     * cpp_wrapper module's extern "C" kernels counted */
    "same     cpu_complex_angle_ops 0/0 (2)",
    "same     cpu_transformer_encoder_padmask_eval 0/0 (1)",
    "same     cpu_cpp_wrapper_block 0/0 (1)",
    /* kern12: memory.py sizes symbolic buffers by their size hints (the log's example inputs):
     * DFS runs the tril kernel and cumsum before the sums, two kernels as Inductor */
    "same     cpu_dynamic_arange_view 0/0 (2)",
    /* kern13: a GPU kernel writing over the buffer it reads (scheduler.py decide_inplace_update,
     * Triton's in_out_ptr0) is another source than the same kernel into a fresh buffer: the
     * hopfield update's mul of the graph input and its mul over an mm's result, two kernels */
    "same     cuda_hopfield_update 0/0 (4)",
    /* sched13: ir.py WelfordReduction.create_multilayer on the GPU: var_mean's mean, m2 and
     * weight partials over [*ranges, split], then their welford_combine (layer norm of 16384,
     * a full var of 1M, a channels-last batch norm's statistics) */
    "same     cuda_wide_layernorm_train 0/0 (3)",
    "same     cuda_large_full_reductions 0/0 (7)",
    "same     cuda_channels_last_3d_conv_train 0/0 (5)",
    /* kern13: MockHandler.indirect_indexing names the index symbol after the value, so
     * inner_fn_opcount counts two gathers through one index value once: SAM's interpolated
     * relative positions (31 -> 30 ops) stay pending, inlined into the constant_pad_nd kernel
     * (graph.py run_node, has_exceeded_max_reads) */
    "same     cuda_sam_decomposed_relpos 0/0 (4)",
    /* kern13: lowering.py inplace_constant_pad_nd up to where it gives up (a 2-d pad whose only
     * user is an mm realizes its input and freezes its layout): the cross layer's pad is a kernel
     * of its own, called twice; normfirst's clone realized before the pad_mm pad */
    "same     cuda_fm_dcn_crossnet 0/0 (5)",
    "same     cuda_deformable_attn_train 0/0 backward (11)",
    "same     cuda_transformer_decoder_normfirst_train 0/0 backward (18)",
    /* kern13: kernel/conv.py peels the convolution's bias off the GPU extern in f16 too: the
     * bias add is a kernel of its own after each of the two convolutions */
    "same     cuda_fp16_groupnorm_conv_train 0/0 (4)",
};
/* unseen10: the tenth batch adds 69 graphs with a kernel count, 63 equal (survey_kernels: 432 of 449);
 * sched10: 436 (66 of the tenth batch's 69, 370 of the others' 380); sched11's diagonal_scatter
 * lowering: 437; kern12's non-freeable tangents: 486, item readers
 * after the MultiOutput node: 487; sched11's split reductions: 488; unseen12: the twelfth batch
 * adds 58 graphs with a kernel count, 52 equal: 540 of 561; kern12's size hints: 541; unseen13:
 * the thirteenth batch adds 51 graphs with a kernel count, 46 equal: 587 of 612; the fourteenth
 * batch, as found, adds 67 graphs with a kernel count, 52 equal: 639 of 679; kern13's in-place
 * GPU buffers: 640; sched13's split Welford: 643; kern13's opcount of indirect reads: 645;
 * inplace_constant_pad_nd's realization: 647; f16 convolution bias peeled: 648;
 * kern14's cpp outer-loop fusion of pointwise nodes: 650; unseen14's view.dtype and
 * cudnn_grid_sampler graphs (s4d backward, perspective warp, SuperPoint): + 3; cpuk13's
 * slice_scatter / select_scatter ops as lowering.py's (inner_fn_opcount): + 1, 654 */
enum { FLOOR = 654, GRAPHS = 679 };

int main(void) {
    ShellEnv env;
    if (sh_init(&env, "minductor_unseenkXXXXXX") < 0) return 0;
    FILE *p = sh_unseen_survey(&env, "survey_kernels.sh");
    if (!ok(p != NULL, "the logs unpack")) { sh_cleanup(&env); return done_testing(); }
    char line[4096];
    int graphs = 0, same = 0;
    bool seen[sizeof fixed / sizeof *fixed] = {0};
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "same     ", 9)) { graphs++; same++; }
        else if (!strncmp(line, "differs  ", 9)) { graphs++; diag("%s", line); }
        else if (line[0]) diag("%s", line);
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
            if (!strcmp(line, fixed[i])) seen[i] = true;
    }
    pclose(p);
    ok(graphs >= GRAPHS, "at least %d compiled graphs in the logs (%d): none stops loading", GRAPHS, graphs);
    ok(same >= FLOOR, "at least %d of them have Inductor's kernel count (%d)", FLOOR, same);
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) ok(seen[i], "%s", fixed[i]);
    sh_cleanup(&env);
    return done_testing();
}
