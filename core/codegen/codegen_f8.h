/* codegen_f8.h — float8 storage in generated code (core/codegen/codegen_f8.c): the conversion
 * functions the C and CUDA modules carry when a buffer or a cast is float8, and their names. */
#ifndef CODEGEN_F8_H
#define CODEGEN_F8_H

#include "scheduler/scheduler.h"

/* The conversion function of float8 dtype dt in generated code: kind 'l' (load: bits -> float),
 * 's' (store: float -> bits), 'r' (to_dtype: the float rounded to dt, still a float), e.g.
 * cg_f8_fn(DT_F8E4M3, 's') = "mi_to_f8e4m3fn". */
const char *cg_f8_fn(DType dt, char kind, char *buf, size_t n);
/* Append the float8 conversions for a module: cuda false = C (c10's conversions: round to
 * nearest even, overflow to NaN / inf); cuda true = CUDA device functions, where e4m3fn and
 * e5m2 stores saturate to the largest finite value (cvt.rn.satfinite, as Triton converts) and
 * the fnuz kinds keep c10's conversion (Triton has none for them on NVIDIA GPUs). */
void cg_f8_src(StrBuf *out, bool cuda);
/* Does s (or a cond branch of it) have a float8 buffer or a cast to float8 (a to_dtype whose
 * value stays in a float, as in x.to(float8).to(float32) fused into one kernel)? */
bool cg_uses_f8(const Schedule *s);

#endif
