/* codegen_stream.h — streaming row kernels on the CPU (core/codegen/codegen_stream.c): which
 * stores of a row segment go around the cache (non-temporal) and which loads of the next row
 * are prefetched, decided per segment by codegen_kernel.c's emit_segment. */
#ifndef CODEGEN_STREAM_H
#define CODEGEN_STREAM_H

#include "scheduler/scheduler.h"

#define CG_STREAM_MAX 4
#define CG_PF_CHUNK 256   /* elements of the inner loop between two groups of prefetches */

/* What one segment of a row kernel (one inner loop of static extent n inside the group's outer
 * loops) streams. */
typedef struct CgRowPlan {
    int64_t n;                                /* the inner loop's extent */
    const char *inner;                        /* its variable */
    /* stores written through a staging row mi_so_<name>[n] and copied out with non-temporal
     * stores after the loop (mi_stream_row): the buffer and the index of the row's start */
    int nstream;
    const Buffer *stream[CG_STREAM_MAX];
    Expr *stream_base[CG_STREAM_MAX];
    /* loads of the next outer iteration's row, prefetched in chunks of CG_PF_CHUNK elements:
     * the buffer and its index there with the inner variable renamed mi_k */
    int npf;
    const Buffer *pf[CG_STREAM_MAX];
    Expr *pf_next[CG_STREAM_MAX];
    const char *outer;                        /* the innermost outer variable ... */
    Expr *outer_range;                        /* ... and its extent (no prefetch past its end) */
} CgRowPlan;

/* The plan of segment [a, b) of group g (mo outer loops): zeroed (nothing streamed) unless it is
 * one inner loop of static extent. skip[0..nskip): buffers the segment
 * never stores (row-local arrays, register values). */
void cg_row_plan(MiCtx *ctx, const Schedule *s, const SchedGroup *g, int a, int b, int mo,
                 const Buffer *const *skip, int nskip, CgRowPlan *p);
/* Is b one of the plan's streamed stores? */
bool cg_row_streams(const CgRowPlan *p, const Buffer *b);
/* The staging arrays, one line each at indent `ind`. */
void cg_row_decls(const CgRowPlan *p, const char *ind, StrBuf *out);
/* Before the inner loop header: the chunk loop and its prefetches (closed by one "}" after the
 * inner loop); the inner loop then runs over [mi_c, mi_c + chunk). Nothing when npf == 0. */
void cg_row_prefetch_open(const CgRowPlan *p, const char *ind, StrBuf *out);
/* The inner loop header of a chunked loop: "for (int64_t p1 = mi_c; p1 < mi_ce; p1++)". */
void cg_row_chunk_header(const CgRowPlan *p, const char *ind, StrBuf *out);
/* After the inner loop: one mi_stream_row per streamed store. */
void cg_row_stream_out(const CgRowPlan *p, const char *ind, StrBuf *out);

/* The module prelude's mi_stream_row / mi_stream_fence (non-temporal copy of a staged row,
 * SFENCE; plain memcpy on other targets). */
extern const char *cg_stream_src;

#endif
