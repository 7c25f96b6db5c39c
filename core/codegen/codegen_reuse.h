/* codegen_reuse.h — one definition per distinct kernel source (Inductor's
 * PythonWrapperCodegen.src_to_kernel), between scheduling and code generation. */
#ifndef CODEGEN_REUSE_H
#define CODEGEN_REUSE_H

#include "scheduler/scheduler.h"

/* Generate every generated kernel of s (and of its cond branches) for ctx->target, and link
 * each one whose source equals an earlier one's, up to the kernel name and the names of the
 * buffers it takes, to that earlier kernel (SchedKernel.same_as); then rename the kernels
 * (sched_name_kernels), so a reused kernel carries the definition's name. codegen_c and
 * codegen_cuda define a linked kernel once and call it with each kernel's own buffers. A kernel
 * the backend cannot generate is left unlinked (codegen reports it). Returns the number of
 * kernels linked. */
int codegen_reuse_kernels(MiCtx *ctx, Schedule *s);

/* The number of kernel definitions of s and its branches (generated kernels minus the linked
 * ones): the cpp_fused_* / triton_* names output_code.py defines. */
int codegen_num_definitions(const Schedule *s);

#endif
