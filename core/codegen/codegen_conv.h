/* codegen_conv.h — convolutions in the generated C: oneDNN calls (core/codegen/codegen_conv.c)
 * when the build has oneDNN (configure: libdnnl-dev) and the tensors are f32, for
 * extern_kernels.convolution and for the FallbackKernel aten.convolution_backward. Each call
 * leaves its status in the module's mi_conv_status; nonzero (oneDNN refused the configuration)
 * and the module runs the node's reference through the fallback callback, as it does for every
 * convolution when the build has no oneDNN. */
#ifndef CODEGEN_CONV_H
#define CODEGEN_CONV_H

#include "scheduler/scheduler.h"

/* The module helpers: mi_conv_status, MiConvSite, mi_conv() / MiConvBwdSite, mi_conv_bwd()
 * ("" without oneDNN; the backward one needs the first). */
extern const char cg_conv_src[];
extern const char cg_conv_bwd_src[];

/* Does the C module try oneDNN for convolution buffer b / for the convolution_backward
 * FallbackKernel b? */
bool cg_conv_uses_dnnl(const Buffer *b);
bool cg_conv_bwd_uses_dnnl(const Buffer *b);

/* Append the call for b: `{ static MiConvSite site; ...; mi_conv_status = mi_conv(...); }`
 * (the caller follows it with `if (mi_conv_status)` and the reference call). */
void cg_emit_conv_call(StrBuf *sb, const Buffer *b);
void cg_emit_conv_bwd_call(StrBuf *sb, const Buffer *b);

#endif
