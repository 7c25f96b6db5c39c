/* codegen_conv.h — extern_kernels.convolution in the generated C: a oneDNN call (core/codegen/
 * codegen_conv.c) when the build has oneDNN (configure: libdnnl-dev) and the tensors are f32;
 * otherwise codegen_c calls the node's reference through the FallbackKernel callback. */
#ifndef CODEGEN_CONV_H
#define CODEGEN_CONV_H

#include "scheduler/scheduler.h"

/* The module helper: MI_CONV_FAILED, mi_conv_status, MiConvSite and mi_conv() ("" without
 * oneDNN). */
extern const char cg_conv_src[];

/* Does the C module run convolution buffer b with oneDNN (else: the reference callback)? */
bool cg_conv_uses_dnnl(const Buffer *b);

/* Append the call for b (`{ static MiConvSite site; ... mi_conv(...) }`); on failure it frees
 * what `cleanup` names and returns MI_CONV_FAILED. */
void cg_emit_conv_call(StrBuf *sb, const Buffer *b, const char *cleanup);

#endif
