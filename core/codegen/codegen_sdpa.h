/* codegen_sdpa.h — the C source of the attention kernel mi_sdpa (core/codegen/codegen_sdpa.c),
 * put into CPU modules with an attention extern by core/codegen/codegen_c.c. */
#ifndef CODEGEN_SDPA_H
#define CODEGEN_SDPA_H

/* mi_sdpa(B, H, L, S, E, Ev, scale, q, sq, k, sk, v, sv, out, so, lse, sl, lsel, causal, mask,
 * mb, sm): ATen's blocked flash attention over strided f32 tensors. Needs the module prelude
 * (<math.h>, <omp.h>, cblas.h under MI_HAVE_CBLAS) and the vector-math layer (mi_expf). */
extern const char *cg_sdpa_src;

#endif
