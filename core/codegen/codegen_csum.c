/* codegen_csum.c — cascade summation of large float32 sums in the C kernels, as Inductor's C++
 * backend accumulates them (torch/_inductor/codegen/cpp.py need_use_acc_helper and
 * _use_acc_helper; codegen/cpp_prefix.h CascadeSumHelper, cascade_sum_combine,
 * cascade_sum_final).
 *
 * A float32 sum over more than 4096 elements does not add every element into one accumulator:
 * the accumulator (level 0) takes 4096 steps (a chunk), then the chunk sums are combined as a
 * binary counter combines carries: when chunk number c ends, level j takes level j - 1 for each
 * low zero bit of c, so level j holds the sum of 2^j chunks, and the levels are added at the
 * end. The rounding error grows with log2(chunks) instead of with the element count: 1M squares
 * summed in float32 are off by 2.8e-4 relative straight, by ~1e-7 this way
 * (cuda_large_full_reductions). Each accumulator has its own helper: a scalar one, or one per
 * lane (Inductor's vector kernel gives each Vectorized lane its own; here blocks of lanes, or a
 * tile of columns, share one step count). The helper's depth is ceil(log2(chunks)) of its own
 * range: the element count for a scalar, the number of steps for lanes.
 *
 * Example (a scalar accumulator over 1048576 elements, 256 chunks, depth 8):
 *     float acc2 = 0;
 *     float acc2_s[7] = {0}; int64_t acc2_ci = 0; uint64_t acc2_nc = 0; const int64_t acc2_d = mi_csum_depth(1048576LL);
 *     for (...) { acc2 += tmp1; if (++acc2_ci == 4096) { acc2_ci = 0; mi_csum_fold(&acc2, acc2_s, acc2_d, ++acc2_nc, 1); } }
 *     acc2 = mi_csum_final(acc2, acc2_s, acc2_d, 1, 0); */
#include "codegen/codegen_csum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cg_csum_prelude[] =
    "/* Inductor's CascadeSumHelper<float, 4096> (cpp_prefix.h): depth = ceil(log2(chunks)) of n steps */\n"
    "static inline int64_t mi_csum_depth(int64_t n) {\n"
    "    int64_t m = (n + 4095) / 4096, d = 0;\n"
    "    while (d < 62 && ((int64_t)1 << d) < m) d++;\n"
    "    return d;\n}\n"
    "/* cascade_sum_combine's fold when chunk nc ends: level j (stk + (j - 1) * w; level 0: acc) takes\n"
    "   level j - 1 for each low zero bit of nc, over w lanes */\n"
    "static inline void mi_csum_fold(float *acc, float *stk, int64_t depth, uint64_t nc, int w) {\n"
    "    float *lo = acc;\n"
    "    for (int64_t j = 1; j < depth && !(nc & 1); j++, nc >>= 1) {\n"
    "        float *hi = stk + (j - 1) * w;\n"
    "        for (int l = 0; l < w; l++) { hi[l] += lo[l]; lo[l] = 0; }\n"
    "        lo = hi;\n"
    "    }\n}\n"
    "/* cascade_sum_final: level 0 of lane l plus each level above */\n"
    "static inline float mi_csum_final(float acc, const float *stk, int64_t depth, int w, int l) {\n"
    "    for (int64_t j = 1; j < depth; j++) acc += stk[(j - 1) * w + l];\n"
    "    return acc;\n}\n\n";

/* the reduction element count of b: the product of its reduction ranges */
static Expr *red_size(SymCtx *sy, const LoopBody *b) {
    Expr *n = sym_int(sy, 1);
    for (int v = b->npoint; v < b->nvars; v++) n = sym_mul(sy, n, b->ranges[v]);
    return n;
}

bool cg_csum_needed(const LoopBody *b) {
    if (!b || !b->nred) return false;
    bool sum = false;
    for (int i = 0; i < b->nops && !sum; i++)
        sum = b->ops[i].kind == LOP_REDUCTION && b->ops[i].rtype == RED_SUM && b->ops[i].dtype == DT_F32;
    int64_t n;
    return sum && (!sym_is_int(red_size(b->sym, b), &n) || n > CG_CSUM_CHUNK);
}

char *cg_csum_steps(SymCtx *sy, const LoopBody *b, bool lanes, int w, int64_t *k) {
    Expr *r = red_size(sy, b), *in = b->ranges[b->nvars - 1];
    StrBuf sb;
    sb_init(&sb);
    int64_t rv, iv, n = -1;
    if (lanes) {
        sb_put(&sb, "(");
        sym_c_sb(r, &sb);
        sb_put(&sb, ") / (");
        sym_c_sb(in, &sb);
        sb_put(&sb, ") * ((");
        sym_c_sb(in, &sb);
        sb_printf(&sb, ") / %d + 1)", w);
        if (sym_is_int(r, &rv) && sym_is_int(in, &iv) && iv > 0) n = rv / iv * (iv / w + 1);
    } else {
        sym_c_sb(r, &sb);
        if (!sym_is_int(r, &n)) n = -1;
    }
    int64_t d = 62;   /* mi_csum_depth's bound */
    if (n >= 0) {
        int64_t m = (n + CG_CSUM_CHUNK - 1) / CG_CSUM_CHUNK;
        for (d = 0; d < 62 && ((int64_t)1 << d) < m; d++) {}
    }
    *k = d > 1 ? d - 1 : 1;
    return sb_take(&sb);
}

void cg_csum_decl(StrBuf *pre, const char *ind, const char *a, int w, const char *steps, int64_t k) {
    sb_printf(pre, "%s    float %s_s[%lld] = {0}; int64_t %s_ci = 0; uint64_t %s_nc = 0; const int64_t %s_d = mi_csum_depth(%s);\n",
              ind, a, (long long)(k * w), a, a, a, steps);
}

void cg_csum_step(StrBuf *step, const char *a, int w) {
    sb_printf(step, "if (++%s_ci == %d) { %s_ci = 0; mi_csum_fold(%s%s, %s_s, %s_d, ++%s_nc, %d); }\n",
              a, CG_CSUM_CHUNK, a, w == 1 ? "&" : "", a, a, a, a, w);
}

void cg_csum_final(StrBuf *fin, const char *ind, const char *a, int w, bool each_lane) {
    if (w == 1) sb_printf(fin, "%s    %s = mi_csum_final(%s, %s_s, %s_d, 1, 0);\n", ind, a, a, a, a);
    else if (each_lane)   /* before the lanes are combined */
        sb_printf(fin, "%s    for (int mi_q = 0; mi_q < %d; mi_q++) %s[mi_q] = mi_csum_final(%s[mi_q], %s_s, %s_d, %d, mi_q);\n",
                  ind, w, a, a, a, a, w);
    else sb_printf(fin, "%s    %s[mi_l] = mi_csum_final(%s[mi_l], %s_s, %s_d, %d, (int)mi_l);\n", ind, a, a, a, a, w);
}

void cg_csum_put_steps(StrBuf *out, int depth, const char *steps) {
    for (const char *p = steps; p && *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        for (int i = 0; i < depth; i++) sb_put(out, "    ");
        sb_printf(out, "%.*s\n", n, p);
        p = nl ? nl + 1 : p + n;
    }
}
