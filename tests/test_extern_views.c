/* test_extern_views.c — the lowering rules around extern kernels (issue #21), on small graphs of
 * tests/fixtures/extern_views through the shell: each case checks the exact lowering / `sched`
 * / generated-code lines the rule decides, then (CPU) `exec`, which compiles the C and compares
 * every output with the reference interpreter.
 *   - strided views as extern arguments (ExternKernel.realize_input: a reshape of a permuted and
 *     expanded q/k/v is one ReinterpretView, no clone kernel) and a graph output that is a view of
 *     an extern result (the extern writes the output: no clone kernel), on the CPU and for CUDA;
 *   - tuned_bmm on the CPU: an operand whose layout is open and not a preferred bmm layout is
 *     made contiguous (the copy fuses with its producer), and a memory-bound bmm (one row of
 *     mat1) is a sum reduction, no extern call;
 *   - identical kernel sources are defined once (src_to_kernel) and called with each kernel's
 *     buffers;
 *   - sdpa_constraint: the CPU flash attention's logsumexp (strides (L*H, 1, H)) is copied into
 *     contiguous order before the backward takes it, and the attention's results take the
 *     layouts of the graph's annotations (the backward's grads are outputs as they are); a
 *     view of a pending value is copied into the annotation's stride order;
 *   - a tuple fallback (topk) is a FallbackKernel node plus one MultiOutput node per result;
 *   - cat on the CPU is a ConcatKernel whose inputs store into NonOwningLayout slices. */
#include "tap.h"
#include "support/shell_harness.h"

#include <stdio.h>
#include <string.h>

#define DIR "tests/fixtures/extern_views/"

/* run `minductor -q [--device cuda] FILE -c CMDS`; the caller frees the result */
static ShResult run(const ShellEnv *env, const char *dev, const char *file, const char *cmds) {
    char opts[512];
    snprintf(opts, sizeof opts, "-q %s " DIR "%s", dev ? dev : "", file);
    return sh_run(env, opts, cmds, NULL);
}

static void bmm_strided_views(const ShellEnv *env) {
    ShResult r = run(env, NULL, "bmm_strided_views.py", "inputs random; lower; sched; codegen; exec");
    ok(sh_has_line(&r, "  buf0     ExternKernel   f32[8, 8, 8]         origins: bmm  -> output 0"),
       "cpu: the bmm is the only buffer and is the output (no clone of q or k, none of the result)");
    ok(sh_has_line(&r, "lowered to 3 buffers (2 inputs, 0 computed, 1 extern) in ") || sh_has(&r, "lowered to 3 buffers (2 inputs, 0 computed, 1 extern)"),
       "cpu: no computed buffer");
    ok(sh_has_line(&r, "            mi_gemm(8LL, 8LL, 4LL, arg1_1 + 0LL + bt * 32LL, 4LL, 1LL, arg0_1 + 0LL + bt * 32LL, 1LL, 4LL, buf0 + bt * 64LL, 8LL, NULL, 0, 0);"),
       "cpu: bmm reads k with strides [32, 4, 1] and the permuted q with [32, 1, 4]");
    ok(sh_has_line(&r, "exec: ok"), "cpu: the compiled module agrees with the interpreter");
    ok(!sh_sanitizer_report(&r), "cpu: no sanitizer report");
    sh_result_free(&r);

    r = run(env, "--device cuda", "bmm_strided_views.py", "lower; sched; codegen");
    ok(sh_has_line(&r, "                arg1_1 + 0LL, 4LL, 1LL, 32LL,") && sh_has_line(&r, "                arg0_1 + 0LL, 1LL, 4LL, 32LL,"),
       "cuda: the gemm kernel takes both views with their strides (row, column, batch)");
    ok(sh_has_line(&r, "1 kernel (fusion on), scheduled in ") || sh_has(&r, "1 kernel (fusion on)"), "cuda: one kernel, the extern");
    sh_result_free(&r);
}

static void bmm_cpu_rules(const ShellEnv *env) {
    ShResult r = run(env, NULL, "bmm_cpu_copy_rules.py", "inputs random; lower; sched; codegen; exec");
    ok(sh_has_line(&r, "  buf0     Pointwise      f32[4, 8, 8]         origins: bmm permute mul"),
       "the permuted product (strides (1, 32, 4): no unit stride in the last two dims) is copied contiguous, fused with its mul");
    ok(sh_has_line(&r, "            mi_gemm(8LL, 8LL, 8LL, buf0 + 0LL + bt * 64LL, 8LL, 1LL, arg1_1 + 0LL + bt * 64LL, 8LL, 1LL, buf1 + bt * 64LL, 8LL, NULL, 0, 0);"),
       "bmm reads the copy contiguously");
    ok(sh_has_line(&r, "  buf2     Reduction      f32[4, 1, 8]         origins: bmm  -> output 1"),
       "a bmm with one row of mat1 is a sum reduction (memory bound), not an extern");
    ok(sh_has_line(&r, "exec: ok"), "the compiled module agrees with the interpreter");
    sh_result_free(&r);
}

static void kernel_reuse(const ShellEnv *env) {
    /* On cpu the first sin overwrites the mm result it reads, in place (core/codegen/codegen_mem.c:
     * one argument, in_out_ptr); the second writes the graph output, which is the caller's
     * memory, so it keeps two arguments and is a source of its own. (Inductor would also hand
     * the second mm's buffer to the output, `buf3 = buf2  # reuse`, and link the two; the
     * module ABI does not do that yet.) */
    ShResult r = run(env, NULL, "reuse_identical_kernels.py", "inputs random; lower; sched; codegen; exec");
    ok(sh_has_line(&r, "static void cpp_fused_sin_0(float *restrict buf0, const int64_t *syms)") &&
       sh_has_line(&r, "    float *const buf1 = (float *)buf0;   /* in place of buf0 (in_out_ptr) */"),
       "the first sin writes buf1 in place of buf0");
    ok(sh_count(&r, "static void cpp_fused_sin_0(") == 1 && sh_count(&r, "static void cpp_fused_sin_1(") == 1, "the second sin is its own kernel");
    ok(sh_has_line(&r, "    cpp_fused_sin_0(buf0, syms);") && sh_has_line(&r, "    cpp_fused_sin_1(buf2, buf3, syms);"),
       "each called with its own buffers");
    ok(sh_has_line(&r, "exec: ok"), "the compiled module agrees with the interpreter");
    sh_result_free(&r);

    r = run(env, "--device cuda", "reuse_identical_kernels.py", "lower; sched; codegen");
    ok(sh_count(&r, "__global__ void __launch_bounds__(256) cuda_fused_sin_0(") == 1 && sh_count(&r, "cuda_fused_sin_0<<<") == 2,
       "cuda: one __global__ definition, launched twice");
    sh_result_free(&r);
}

static void sdpa_layouts(const ShellEnv *env) {
    ShResult r = run(env, NULL, "sdpa_cpu_lse_constraint.py", "inputs random; lower; sched; codegen; exec");
    ok(sh_has_line(&r, "  buf2     MultiOutput    f32[1, 2, 4]         origins: _scaled_dot_product_flash_attention_for_cpu = buf0[1]  -> output 1"),
       "the logsumexp is returned as the attention writes it (its annotation's strides (8, 1, 2))");
    ok(sh_has_line(&r, "  cpp_fused__scaled_dot_product_flash_attention_for_cpu_backward_0 buf3(op3)"),
       "sdpa_constraint: the logsumexp is copied into contiguous order for the backward (last dim not the fastest)");
    ok(sh_has_line(&r, "            {(void *)buf3, 0, 3, 0LL, {1LL, 2LL, 4LL}, {8LL, 4LL, 1LL}}};"),
       "the backward takes the copy, strides (8, 4, 1)");
    ok(sh_has(&r, "(const int64_t[3]){8LL, 1LL, 2LL}, 4LL"), "mi_sdpa writes the logsumexp with strides (8, 1, 2)");
    ok(!sh_has(&r, "origins: clone"), "the backward's grads are outputs as the fallback writes them: no clone kernel");
    ok(sh_has_line(&r, "exec: ok"), "the compiled module agrees with the interpreter");
    ok(!sh_sanitizer_report(&r), "no sanitizer report");
    sh_result_free(&r);
}

/* a permuted view of a pending add handed to the attention: a generic View in Inductor (no
 * storage and layout), so require_stride_order copies it (the add inlined into the copy) in the
 * annotation's stride order; the attention's result keeps that annotation's strides */
static void sdpa_view_of_pending(const ShellEnv *env) {
    ShResult r = run(env, NULL, "sdpa_view_of_pending.py", "inputs random; lower; sched; codegen; exec");
    ok(sh_has_line(&r, "  buf0     Pointwise      f32[1, 2, 4, 4]      origins: _scaled_dot_product_flash_attention_for_cpu permute add"),
       "the query is one copy kernel computing add through the permute");
    ok(sh_has_line(&r, "        const int64_t sq[4] = {32LL, 4LL, 8LL, 1LL};"), "in the stride order of the permute's annotation (32, 4, 8, 1)");
    ok(sh_has_line(&r, "  buf2     MultiOutput    f32[1, 2, 4, 4]      origins: _scaled_dot_product_flash_attention_for_cpu = buf1[0]  -> output 0"),
       "the attention writes the output in its annotated layout: no clone");
    ok(sh_has_line(&r, "exec: ok"), "the compiled module agrees with the interpreter");
    sh_result_free(&r);
}

/* ir.FallbackKernel.create: topk's node has a MultiOutputLayout and each result is a
 * MultiOutput node of its own, which runs nothing (the call filled its storage) */
static void multi_output(const ShellEnv *env) {
    ShResult r = run(env, NULL, "topk_multi_output.py", "inputs random; lower; ir; sched; codegen; exec");
    ok(sh_has_line(&r, "  buf1     FallbackKernel MultiOutputLayout    origins: topk") &&
       sh_has_line(&r, "  buf3     MultiOutput    i64[8, 3]            origins: topk = buf1[1]  -> output 1"),
       "topk: a FallbackKernel, then one MultiOutput per result (buf2 = buf1[0], buf3 = buf1[1])");
    ok(sh_has_line(&r, "op1.writes = [StarDep(name='buf1', mode=None)]") && sh_has_line(&r, "    buf1.layout = MultiOutputLayout(device=device(type='cpu'))") &&
       sh_has_line(&r, "op1.node.kernel = torch.ops.aten.topk.default"),
       "the FallbackKernel's text: its own StarDep write, MultiOutputLayout, the ATen kernel");
    ok(sh_has_line(&r, "op3: ExternKernelSchedulerNode(MultiOutput)") && sh_has_line(&r, "op3.writes = [StarDep(name='buf3', mode=None)]") &&
       sh_has_line(&r, "op3.unmet_dependencies = [StarDep(name='buf1', mode=None)]") && sh_has_line(&r, "op3.node.kernel = None"),
       "a MultiOutput node reads the FallbackKernel and writes its item");
    ok(sh_has_line(&r, "        MiFbTensor fo[] = {{(void *)buf2, 0, 2, 0LL, {8LL, 3LL}, {3LL, 1LL}},") &&
       sh_has_line(&r, "    /* buf3 = buf1[1]: MultiOutput, filled by buf1's call */"),
       "the call writes the items' storage; the MultiOutput nodes are comments");
    ok(sh_has_line(&r, "exec: ok"), "the compiled module agrees with the interpreter");
    ok(!sh_sanitizer_report(&r), "no sanitizer report");
    sh_result_free(&r);
}

/* lowering.py cat on the CPU: ir.ConcatKernel, inputs realized into NonOwningLayout slices (a
 * pending value in place, anything else by a copy), the ConcatKernel a nop that does not split
 * the cpp kernel group */
static void concat_kernel(const ShellEnv *env) {
    ShResult r = run(env, NULL, "cat_cpu.py", "inputs random; lower; ir; sched; codegen; exec");
    ok(sh_has_line(&r, "  buf0     Pointwise      f32[4, 6]            origins: sin slice of buf3") &&
       sh_has_line(&r, "  buf1     Pointwise      f32[4, 3]            slice of buf3") &&
       sh_has_line(&r, "  buf3     ConcatKernel   f32[4, 15]           origins: cat"),
       "the pending sin is realized into its slice, the graph input copied into its own; the ConcatKernel comes after them");
    ok(sh_has_line(&r, "    buf1.layout = NonOwningLayout('cpu', torch.float32, size=[4, 3], stride=[15, 1], offset=6)") &&
       sh_has_line(&r, "    buf1.aliases = ['buf3']") && sh_has_line(&r, "op1.writes = [MemoryDep('buf1', 15*c0 + c1 + 6, {c0: 4, c1: 3})]"),
       "a slice's NonOwningLayout: the cat's strides, the slice's offset");
    ok(sh_has_line(&r, "op3: NopKernelSchedulerNode(ConcatKernel)") && sh_has_line(&r, "op3.writes = [StarDep(name='buf3', mode=None)]"),
       "the ConcatKernel is a NopKernelSchedulerNode writing its buffer");
    ok(sh_has_line(&r, "  cpp_fused_cos_mul_permute_relu_sin_sum_0 buf0(op0) | buf1(op1) | buf2(op2) | buf4(op4) | buf5(op5) | buf6(op6) buf7(op7)"),
       "the nops do not split the cpp kernel group: one kernel, the relu reading the cat included");
    ok(sh_has_line(&r, "    /* buf3: ConcatKernel, no code: its 3 inputs stored their slices of it (NonOwningLayout) */") &&
       sh_has(&r, "buf3[((15LL*p0) + p1 + 6LL)] = "),
       "the slices store into the cat's storage at their offset; the ConcatKernel runs nothing");
    ok(sh_has_line(&r, "exec: ok"), "the compiled module agrees with the interpreter");
    ok(!sh_sanitizer_report(&r), "no sanitizer report");
    sh_result_free(&r);
}

int main(void) {
    ShellEnv env;
    if (sh_init(&env, "minductor_externXXXXXX") < 0) return 0;
    bmm_strided_views(&env);
    bmm_cpu_rules(&env);
    kernel_reuse(&env);
    sdpa_layouts(&env);
    sdpa_view_of_pending(&env);
    multi_output(&env);
    concat_kernel(&env);
    sh_cleanup(&env);
    return done_testing();
}
