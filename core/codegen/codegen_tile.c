/* codegen_tile.c — the loop order of a transposing copy (Inductor's cpp backend tiles such
 * kernels in 2-D, codegen/cpp.py `tiling2d` / `transpose_mxn`).
 *
 * The channels-last copy of a conv's input, buf0[n, h, w, c] = x[n, c, h, w] with 3 channels,
 * comes out of the scheduler as outer loops (n, h, w) and an innermost loop over c of extent 3
 * whose load has stride h*w: nothing to vectorize (0.064 ms for 786 KB at one thread). With w
 * as the simd loop and c inside it (unrolled: a constant extent below a vector), the loads are
 * contiguous along w and the stores an interleaved group of 3 that GCC writes with permutes
 * (0.015 ms): the 2-D tile of Inductor, w-vector x c, in the compiler's hands. */
#include "codegen/codegen_tile.h"

/* innermost extents up to this stay inside the simd loop, unrolled by GCC before it vectorizes
 * (at 12 it no longer was: the unseen log cuda_sliding_window_attn's copy stayed scalar) */
#define TILE_MAX_INNER 8
#define TILE_MIN_OUTER 8    /* the simd loop needs this many iterations at least */

static bool is_int_eq(Expr *e, int64_t v) {
    int64_t x;
    return e && sym_is_int(e, &x) && x == v;
}

bool cg_tile_transposed(const Schedule *s, const SchedGroup *g, int mo) {
    SymCtx *sy = s->ir->ctx->sym;
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    int nv = b0->nvars;
    int64_t ni, no;
    if (mo < 2 || nv != mo + 1 || !sym_is_int(b0->ranges[nv - 1], &ni) || ni < 2 || ni > TILE_MAX_INNER) return false;
    if (sym_is_int(b0->ranges[nv - 2], &no) && no < TILE_MIN_OUTER) return false;
    bool transposed = false;
    for (int i = 0; i < g->n; i++) {
        const SchedNode *n = &s->nodes[g->nodes[i]];
        const LoopBody *b = n->buf->body;
        if (b->nred || b->nvars != nv || b->ranges[nv - 1] != b0->ranges[nv - 1] || b->ranges[nv - 2] != b0->ranges[nv - 2]) return false;
        const char *vi = b->vars[nv - 1]->name, *vo = b->vars[nv - 2]->name;
        for (int r = 0; r < n->deps.nreads + n->deps.nwrites; r++) {
            const Dep *d = r < n->deps.nreads ? &n->deps.reads[r] : &n->deps.writes[r - n->deps.nreads];
            if (d->kind != DEP_MEMORY || !d->index) continue;
            if (ir_index_is_indirect(d->index)) return false;
            Expr *ci = sym_coeff(sy, d->index, vi), *co = sym_coeff(sy, d->index, vo);
            if (!ci || !co) return false;   /* not linear in them */
            if (!is_int_eq(ci, 0) && !is_int_eq(ci, 1) && is_int_eq(co, 1)) transposed = true;
        }
    }
    return transposed;
}
