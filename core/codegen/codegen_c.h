/* codegen_c.h — Schedule -> one self-contained C/OpenMP source file implementing the module
 * ABI of core/runtime/runtime.h: `int call(void *const *inputs, void *const *outputs, const int64_t
 * *syms)`, `const char *mi_sym_names[]`, `const int mi_num_outputs`. One static function per
 * fused kernel (named like Inductor's cpp_fused_<ops>_<n>), extern matmul via cblas when
 * MI_HAVE_CBLAS is defined else an emitted blocked kernel, a naive CPU attention kernel, and
 * call() allocating / reusing / freeing intermediates. */
#ifndef CODEGEN_C_H
#define CODEGEN_C_H

#include "scheduler/scheduler.h"

/* malloc'd C source, or NULL + ctx error (unsupported dtype, ...). */
char *codegen_c(MiCtx *ctx, const Schedule *s);

#endif
