/* codegen_kernel.c — the C emitter handler and the loop nests of one fused kernel.
 *
 * A kernel's nodes share the group's outer loops (parallel); inside, consecutive nodes with the
 * same inner loops form one *segment* that walks those loops once (Inductor's cpp kernel does
 * the same): var and mean, amax, a column of pointwise ops over the row, ... read the row once.
 *
 *   static void cpp_fused_..._N(bufs..., const int64_t *syms) {
 *       #pragma omp parallel for                       <- over the group's shared outer dims
 *       for (p0 ...) {
 *           { accumulators; #pragma omp simd reduction(..) for (p1 ...) { bodies } stores }
 *           { #pragma omp simd for (p1 ...) { bodies; stores } }
 *       }
 *   }
 *
 * Inside a segment, equal right-hand sides are computed once (value numbering over the text),
 * so var_mean's two Welford reductions become one. Reductions vectorize:
 *   - sum/prod: an omp simd reduction clause;
 *   - float max/min: `acc = x > acc ? x : acc` under reduction(max:) plus an OR-reduced NaN
 *     flag (torch propagates NaN; the omp combiner alone would drop a NaN lane);
 *   - Welford: 32 lanes of float running means with one reciprocal per block of 32 (no
 *     division per element), a scalar tail, lanes merged (Chan, closed form for their equal
 *     counts) in double at the end;
 *   - reductions over an outer dim (column sums: the inner reduction walks a stride while the
 *     last output dim is contiguous): the output dim is tiled by 64 and the reduction keeps
 *     a row of 64 partial accumulators, so the innermost loop is contiguous ("col" mode);
 *   - no outer loop (a full reduction): the reduction loop itself is `parallel for reduction`.
 * argmax/argmin stay scalar (first-index ties need the sequential order).
 * Costly values of the innermost var alone (a channels-last batch norm's 1 / sqrt(var[c] + eps))
 * are computed once per call into stack arrays before the nest (codegen_hoist.c); a transposing
 * copy whose innermost loop is shorter than a vector runs the next loop out as its simd loop
 * (codegen_tile.c). */
#include "codegen/codegen_kernel.h"
#include "codegen/codegen_f8.h"
#include "codegen/codegen_hoist.h"
#include "codegen/codegen_mem.h"
#include "codegen/codegen_split.h"
#include "codegen/codegen_csum.h"
#include "codegen/codegen_stream.h"
#include "codegen/codegen_tile.h"
#include "codegen/op_overrides.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WF_LANES 32   /* Welford lanes per block: 2 AVX-512 vectors, two independent chains */
#define COL_TILE 64   /* output elements per tile in col mode */

const char *cg_ctype(DType t) {
    switch (t) {
    case DT_F32: return "float";
    case DT_F64: return "double";
    case DT_I64: return "int64_t";
    case DT_I32: return "int32_t";
    case DT_I16: return "int16_t";
    case DT_I8: return "int8_t";
    case DT_U8: return "uint8_t";
    case DT_U16: return "uint16_t";   /* PyTorch's barebones unsigned types: stored, copied */
    case DT_U32: return "uint32_t";
    case DT_U64: return "uint64_t";   /* the CUDA flash attention's RNG state */
    case DT_BOOL: return "_Bool";
    case DT_F16: case DT_BF16: return "uint16_t";   /* the bits; values are computed in float */
    case DT_F8E4M3: case DT_F8E5M2: case DT_F8E4M3FNUZ: case DT_F8E5M2FNUZ: return "uint8_t";   /* the bits (codegen_f8.c) */
    /* storage only: complex buffers are written and read by FallbackKernels (lowering.c's
     * touches_complex, as Inductor), never by a generated kernel (cg_emit_kernel refuses) */
    case DT_C64: return "float _Complex";
    case DT_C128: return "double _Complex";
    default: return NULL;
    }
}

/* f16 / bf16 / float8 values are computed in float, as Inductor's cpp backend does: loads
 * convert to float, math runs in float, stores round (to nearest even) back. */
static bool half(DType t) { return t == DT_F16 || t == DT_BF16 || dtype_is_float8(t); }
static DType cpp_compute_dtype(DType t) { return half(t) ? DT_F32 : t; }

/* An explicit cast to f16 / bf16 / float8 rounds the float value to that precision (it stays a
 * float): to_dtype(x, bf16) -> mi_rbf((float)(x)), to_dtype(x, f8e4m3fn) -> mi_round_f8e4m3fn(...). */
static bool cpp_to_dtype(StrBuf *out, const char *x, DType dt, DType src) {
    char fn[32];
    /* float -> integer: C's conversion truncates toward zero, as truncf then the conversion of
     * the (now integral) value does, bit for bit; spelled (int8_t)truncf(x) because GCC 12 sinks
     * a bare (int8_t)(x) into the arms of the select that made x (clamp before a quantizing
     * cast: x = max(min(v, 127), -128)) and then calls the loop "control flow", scalar */
    if (dtype_is_float(src) && !dtype_is_float(dt) && dt != DT_BOOL && !dtype_is_complex(dt) && !dtype_is_complex(src) && cg_ctype(dt)) {
        sb_printf(out, "(%s)trunc%s(%s)", cg_ctype(dt), src == DT_F64 ? "" : "f", x);
        return true;
    }
    if (!half(dt)) return false;
    sb_printf(out, "%s((float)(%s))", dt == DT_F16 ? "mi_rh" : dt == DT_BF16 ? "mi_rbf" : cg_f8_fn(dt, 'r', fn, sizeof fn), x);
    return true;
}

/* f32 exp / sigmoid / erf through the module's vector-math layer (codegen_c.c: vecmath_src):
 * mi_expf(x) is Sleef's when the module is built with it (as ATen's Vectorized<float> calls
 * Sleef), glibc's expf otherwise; mi_erff is ATen's erf over it; integer x / 0: cg_zdiv_math. */
static bool cpp_math(StrBuf *out, IrMathOp op, DType at, const char *const *a) {
    if (dtype_is_int(at) && at != DT_U64) return cg_zdiv_math(out, op, a);   /* codegen_c.c: x / 0 */
    if (at != DT_F32) return false;
    switch (op) {
    case IOP_EXP: sb_printf(out, "mi_expf(%s)", a[0]); return true;
    case IOP_SIGMOID: sb_printf(out, "1.0f / (1.0f + mi_expf(-%s))", a[0]); return true;
    case IOP_ERF: sb_printf(out, "mi_erff(%s)", a[0]); return true;
    case IOP_SIN: sb_printf(out, "mi_sinf(%s)", a[0]); return true;
    case IOP_COS: sb_printf(out, "mi_cosf(%s)", a[0]); return true;
    case IOP_POW: sb_printf(out, "mi_powf(%s, %s)", a[0], a[1]); return true;
    default: return false;
    }
}

/* The C backend's dialect: the shared spellings of op_overrides.c (they are CppOverrides'),
 * f32 exp / sigmoid / erf through the vector-math layer, integer bool literals, half
 * precision computed in float. */
static const CgOverrides cpp_overrides = {"C", cg_ctype, cpp_compute_dtype, NULL, NULL, cpp_math, cpp_to_dtype};

/* The C type values of dtype t live in (float for f16 / bf16); NULL when none. */
static const char *value_ctype(DType t) { return dtype_is_complex(t) ? NULL : cg_ctype(cpp_compute_dtype(t)); }

/* The load of element `ix` of `bn` whose dtype is dt, as a value: bn[ix], mi_h2f(bn[ix]).
 * A bool element is read as its byte, ((const uint8_t *)bn)[ix], and converted to the _Bool
 * value (the same 0 / 1): GCC 12 leaves a simd loop scalar when it loads or stores through a
 * _Bool pointer in some loops (a relu mask `le` stored beside the relu; `where(le, 0, grad)`:
 * "no vectype for stmt"), and vectorizes the same loop through unsigned char. */
static void load_rhs(StrBuf *sb, DType dt, const char *bn, const char *ix) {
    char fn[32];
    if (half(dt)) sb_printf(sb, "%s(%s[%s])", dt == DT_F16 ? "mi_h2f" : dt == DT_BF16 ? "mi_bf2f" : cg_f8_fn(dt, 'l', fn, sizeof fn), bn, ix);
    else if (dt == DT_BOOL) sb_printf(sb, "((const uint8_t *)%s)[%s]", bn, ix);
    else sb_printf(sb, "%s[%s]", bn, ix);
}

/* The element `ix` of `bn` as a store's left-hand side: bn[ix]; a bool one through its byte,
 * ((uint8_t *)bn)[ix] (load_rhs says why). */
static void store_lhs(StrBuf *sb, DType dt, const char *bn, const char *ix) {
    if (dt == DT_BOOL) sb_printf(sb, "((uint8_t *)%s)[%s]", bn, ix);
    else sb_printf(sb, "%s[%s]", bn, ix);
}

/* Value v stored into a buffer of dtype dt: v, or mi_f2h(v) / mi_f2bf(v) rounding a float. */
static void store_rhs(StrBuf *sb, DType dt, const char *v) {
    char fn[32];
    if (half(dt)) sb_printf(sb, "%s(%s)", dt == DT_F16 ? "mi_f2h" : dt == DT_BF16 ? "mi_f2bf" : cg_f8_fn(dt, 's', fn, sizeof fn), v);
    else sb_put(sb, v);
}

/* ---- value numbering: right-hand side text -> value handle ---- */
typedef struct Cse { char **keys; int *vals; int cap, n; } Cse;

static uint64_t cse_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}
static int *cse_slot(Cse *c, const char *key) {
    if (2 * (c->n + 1) > c->cap) {
        Cse o = *c;
        c->cap = o.cap ? 2 * o.cap : 64;
        c->keys = mi_xcalloc(c->cap, sizeof(char *));
        c->vals = mi_xcalloc(c->cap, sizeof(int));
        c->n = 0;
        for (int i = 0; i < o.cap; i++)
            if (o.keys[i]) { *cse_slot(c, o.keys[i]) = o.vals[i]; free(o.keys[i]); }
        free(o.keys);
        free(o.vals);
    }
    size_t i = cse_hash(key) & (c->cap - 1);
    while (c->keys[i] && strcmp(c->keys[i], key) != 0) i = (i + 1) & (c->cap - 1);
    if (!c->keys[i]) { c->keys[i] = mi_xstrdup(key); c->vals[i] = -1; c->n++; }
    return &c->vals[i];
}
static void cse_free(Cse *c) {
    for (int i = 0; i < c->cap; i++) free(c->keys[i]);
    free(c->keys);
    free(c->vals);
    memset(c, 0, sizeof *c);
}
/* Does text s read buffer `name`: `name[` or `name)[` (a bool's byte: ((const uint8_t *)name)[),
 * name not part of a longer identifier? */
static bool reads_buf(const char *s, const char *name, size_t L) {
    for (const char *p = strstr(s, name); p; p = strstr(p + 1, name)) {
        bool start = p == s || !(p[-1] == '_' || isalnum((unsigned char)p[-1]));
        if (start && (p[L] == '[' || (p[L] == ')' && p[L + 1] == '['))) return true;
    }
    return false;
}
/* a store to buffer `name` makes earlier loads of it stale (bn[..], mi_h2f(bn[..]), a bool's
 * ((const uint8_t *)bn)[..]) */
static void cse_forget_loads(Cse *c, const char *name) {
    size_t L = strlen(name);
    for (int i = 0; i < c->cap; i++) {
        const char *k = c->keys[i];
        if (!k) continue;
        const char *rhs = strchr(k, ' ');   /* "ctype rhs" */
        if (rhs && reads_buf(rhs + 1, name, L)) c->vals[i] = -1;
    }
}

/* ---- the emitting handler ---- */
enum { EM_ROW, EM_LANES, EM_COL };
#define EM_NAME CG_VAL_NAME

typedef struct Em {
    OpsHandler h;
    StrBuf *pre, *body, *fin, *post;  /* before the inner loops, inside, after (merge lanes), stores */
    const char *indent;            /* body lines */
    const char *oindent;           /* lines before / after the inner loops */
    CgVals v;                      /* the values made so far (tag: loop invariant) */
    int *tmp;                      /* kernel-wide temp counter */
    int mode;                      /* EM_ROW: scalar accumulators + simd clauses; EM_LANES / EM_COL:
                                      accumulators are arrays indexed by mi_l (WF_LANES / COL_TILE) */
    bool simd_ok;                  /* the innermost loop may be `omp simd` */
    bool welford;                  /* a Welford accumulator exists (MI_WF in the body) */
    bool only_clauses;             /* every reduction is expressible as an omp reduction clause */
    /* cascade summation (codegen_csum.c): the helper's range as C text (NULL: no float32 sum
     * here takes one), its stack levels, and the lines run once per step */
    const char *csum_steps; int64_t csum_k; StrBuf *step;
    /* loop-invariant hoisting: values that use no inner loop var and read no buffer the segment
     * writes go to `hoist` (before the loops); GCC's PRE otherwise may leave them in the loop
     * latch, which stops vectorization */
    StrBuf *hoist;                 /* NULL: no hoisting (no inner loops) */
    bool next_inv;                 /* the value em_tmp is about to make is invariant */
    Expr *const *inner; int ninner;/* the inner loop vars */
    const Buffer **written; int nwritten;   /* buffers the segment writes */
    const Buffer **local; int nlocal;       /* ... that only this segment reads: never stored */
    /* row-local buffers: written and read only inside this kernel at the same element, so
     * each outer iteration keeps its row in a stack array loc_<name>[inner offset] */
    const Buffer *const *rowloc; int nrowloc;
    SymCtx *sy;
    const char **outer_names; Expr **zeros; int mo;
    StrBuf *clauses;               /* " reduction(+:acc0) ..." */
    Cse cse;
    Expr *varind[64]; int nvarind; /* indirect index variables that change in the inner loops */
    /* a piece of a split innermost loop (codegen_split.c): its variable lies in prange; indexes
     * are simplified under it and integer values get ranges (vr), so the comparisons, selects
     * and clamps it decides fold */
    const SymRange *prange;
    struct VRange { int64_t lo, hi; bool known; } *vr; int nvr;
    /* a streaming row (codegen_stream.c): its stores that go through a staging row */
    const CgRowPlan *plan;
    bool stream_hit[CG_STREAM_MAX], stream_bad[CG_STREAM_MAX];
    /* values of the innermost var alone (codegen_hoist.c); NULL: not tracked. The value em_tmp
     * is about to make: its kind lk, operands ldeps, and larr: computed into an array */
    CgLane *lane;
    int lk, lnd, ldeps[3];
    bool larr;
    Expr *const *others; int nothers;   /* the loop vars other than the innermost */
    const Schedule *s; const SchedGroup *g;
    bool bad;
    char err[160];
} Em;

static IrVal em_new(Em *e, const char *name, DType dt) { return cg_val_new(&e->v, name, dt, 0); }
static IrVal em_tmp(Em *e, DType dt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static IrVal em_tmp(Em *e, DType dt, const char *fmt, ...) {
    const char *ct = value_ctype(dt);
    if (!ct) { e->bad = true; snprintf(e->err, sizeof e->err, "dtype %s is not supported by the C code generator", dtype_abbrev(dt)); ct = "float"; }
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t cl = strlen(ct);
    char *key = mi_xmalloc(cl + 1 + (size_t)len + 1);
    memcpy(key, ct, cl);
    key[cl] = ' ';
    va_start(ap, fmt);
    vsnprintf(key + cl + 1, (size_t)len + 1, fmt, ap);
    va_end(ap);
    bool inv = e->next_inv && e->hoist;
    int lk = e->lk;
    bool larr = e->larr;
    e->next_inv = false;
    e->lk = CG_LANE_OTHER;
    e->larr = false;
    int *slot = cse_slot(&e->cse, key);
    if (*slot >= 0) { free(key); return *slot; }
    char nm[32];
    int id = (*e->tmp)++;
    snprintf(nm, sizeof nm, "tmp%d", id);
    char lix[64] = "";
    if (larr) cg_lane_index(e->lane, lk, lix, sizeof lix);
    if (larr) sb_printf(e->body, "%s    %s %s = mi_h%d[%s];\n", e->indent, ct, nm, id, lix);
    else sb_printf(inv ? e->hoist : e->body, "%s    %s %s = %s;\n", inv ? e->oindent : e->indent, ct, nm, key + cl + 1);
    IrVal v = em_new(e, nm, dt);
    if (e->lane && lk != CG_LANE_OTHER) {   /* the statement, for the per-nest prologue */
        StrBuf st;
        sb_init(&st);
        sb_printf(&st, "%s %s = %s;", ct, nm, key + cl + 1);
        cg_lane_set(e->lane, v, lk, st.s, e->ldeps, e->lnd);
        sb_free(&st);
        if (larr) cg_lane_array(e->lane, v, id, dt == DT_F64 ? 8 : 4);
    }
    free(key);
    e->v.tag[v] = inv;
    *slot = v;
    return v;
}
static const char *nm(Em *e, IrVal v) { return cg_val_name(&e->v, v); }
static DType dtv(Em *e, IrVal v) { return cg_val_dtype(&e->v, v); }

static bool expr_uses(const Expr *x, Expr *const *vars, int n) {
    if (x->kind == EX_SYM) {
        for (int i = 0; i < n; i++)
            if (vars[i] == x) return true;
        return false;
    }
    for (int i = 0; i < x->n; i++)
        if (expr_uses(x->args[i], vars, n)) return true;
    return false;
}
/* Does index x change inside the inner loops (an inner loop var, or an indirect variable
 * computed there)? */
static bool em_varies(const Em *e, const Expr *x) {
    return expr_uses(x, e->inner, e->ninner) || expr_uses(x, e->varind, e->nvarind);
}
static bool em_writes(const Em *e, const Buffer *b) {
    for (int i = 0; i < e->nwritten; i++)
        if (e->written[i] == b || e->written[i] == ir_store_target(b)) return true;
    return false;
}

/* Mask m, or CG_LANE_OTHER when it uses two or more outer vars: no value made from it can get
 * an array (cg_lane_hoistable takes the innermost var and at most one other), so its statement
 * is not recorded. */
static int em_lane_clip(const Em *e, int m) {
    int outer = m & ~(1 << e->nothers);
    return outer & (outer - 1) ? CG_LANE_OTHER : m;
}
/* The lane mask (codegen_hoist.h) of an index: the nest's loop vars it uses (bit i: var i, the
 * innermost last), CG_LANE_OTHER when it uses an indirect variable. */
static int em_index_lane(const Em *e, const Expr *x) {
    if (!e->lane || expr_uses(x, e->varind, e->nvarind)) return CG_LANE_OTHER;
    int m = 0;
    for (int i = 0; i <= e->nothers; i++)   /* others[nothers] is the innermost var */
        if (expr_uses(x, e->others + i, 1)) m |= 1 << i;
    return em_lane_clip(e, m);
}
/* The lane mask of a value made from operands a[0..n): each must be computable before the nest;
 * the union of theirs. Sets e->ldeps for em_tmp. */
static int em_lane_of(Em *e, const IrVal *a, int n) {
    if (!e->lane || n > 3) return CG_LANE_OTHER;
    int k = CG_LANE_NONE;
    e->lnd = 0;
    for (int i = 0; i < n && i < 3; i++) {
        int ki = cg_lane_kind(e->lane, a[i]);
        if (ki == CG_LANE_OTHER) return CG_LANE_OTHER;
        k |= ki;
        e->ldeps[e->lnd++] = a[i];
    }
    return em_lane_clip(e, k);
}

/* ---- value ranges inside a piece of a split loop ---- */
/* Record that integer value v lies in [lo, hi] (only inside a piece; the array grows by 64).
 * Example: index_expr(p3) in the piece [16, 32) -> [16, 31]. */
static void vr_set(Em *e, IrVal v, int64_t lo, int64_t hi) {
    if (!e->prange || v < 0) return;
    if (v >= e->nvr) {
        int n = v + 64;
        e->vr = realloc(e->vr, sizeof *e->vr * (size_t)n);
        for (int i = e->nvr; i < n; i++) e->vr[i].known = false;
        e->nvr = n;
    }
    e->vr[v] = (struct VRange){lo, hi, true};
}
/* The range recorded for v: true and *lo, *hi set, false when none is known. */
static bool vr_get(const Em *e, IrVal v, int64_t *lo, int64_t *hi) {
    if (!e->prange || v < 0 || v >= e->nvr || !e->vr[v].known) return false;
    *lo = e->vr[v].lo;
    *hi = e->vr[v].hi;
    return true;
}
/* an index as the piece sees it: Min(15, p3) is p3 on [0, 15] */
static Expr *em_index(Em *e, Expr *x) { return e->prange ? sym_simplify(e->sy, x, e->prange, 1) : x; }

/* the name a load / store uses: the buffer's, or loc_<name> at the offset within the row */
static const char *em_ref(Em *e, const Buffer *buf, Expr **index, char *nbuf, size_t n) {
    for (int i = 0; i < e->nrowloc; i++)
        if (e->rowloc[i] == buf) {
            snprintf(nbuf, n, "loc_%s", buf->name);
            *index = sym_subst(e->sy, *index, e->outer_names, e->zeros, e->mo);
            return nbuf;
        }
    return ir_store_target(buf)->name;
}

static IrVal c_load(OpsHandler *h, Buffer *buf, Expr *index) {
    Em *e = h->self;
    index = em_index(e, index);
    char lb[96];
    const char *bn = em_ref(e, buf, &index, lb, sizeof lb);
    StrBuf ix;
    sb_init(&ix);
    sym_c_sb(index, &ix);
    e->next_inv = !em_varies(e, index) && !em_writes(e, buf) && !em_writes(e, ir_store_target(buf));
    if (e->lane && bn != lb && !ir_index_is_indirect(index) && !cg_group_writes(e->s, e->g, ir_store_target(buf))) {
        e->lk = em_index_lane(e, index);   /* a buffer the nest does not write */
        e->lnd = 0;
    }
    StrBuf rhs;
    sb_init(&rhs);
    load_rhs(&rhs, buf->layout.dtype, bn, ix.s);
    IrVal v = em_tmp(e, buf->layout.dtype, "%s", rhs.s);
    sb_free(&rhs);
    sb_free(&ix);
    return v;
}
static void c_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Em *e = h->self;
    index = em_index(e, index);
    if (ir_index_is_indirect(index)) e->simd_ok = false;   /* a Scatter: lanes may collide */
    cse_forget_loads(&e->cse, buf->name);
    cse_forget_loads(&e->cse, ir_store_target(buf)->name);
    char lb[96];
    const char *bn = em_ref(e, buf, &index, lb, sizeof lb);
    bool rowloc = bn == lb;
    if (rowloc) cse_forget_loads(&e->cse, bn);
    for (int k = 0; e->plan && k < e->plan->nstream; k++) {   /* a streamed row: into its staging array */
        if (e->plan->stream[k] != buf) continue;
        Expr *at = sym_add(e->sy, e->plan->stream_base[k], sym_symbol(e->sy, e->plan->inner));
        if (sym_simplify(e->sy, index, NULL, 0) != sym_simplify(e->sy, at, NULL, 0)) { e->stream_bad[k] = true; break; }
        snprintf(lb, sizeof lb, "mi_so_%s", buf->name);
        bn = lb;
        index = sym_symbol(e->sy, e->plan->inner);
        e->stream_hit[k] = true;
    }
    StrBuf ix;
    sb_init(&ix);
    sym_c_sb(index, &ix);
    bool local = false;
    for (int i = 0; i < e->nlocal; i++) local |= e->local[i] == buf;
    const char *ct = cg_ctype(buf->layout.dtype);
    if (!local || !ct || dtv(e, v) != buf->layout.dtype) {
        StrBuf r;
        sb_init(&r);
        store_rhs(&r, buf->layout.dtype, nm(e, v));
        sb_printf(e->body, "%s    ", e->indent);   /* a slice: its cat's storage */
        store_lhs(e->body, buf->layout.dtype, bn, ix.s);
        sb_printf(e->body, " = %s;\n", r.s);
        sb_free(&r);
    }
    if (ct && dtv(e, v) == buf->layout.dtype) {   /* a later load of the element is this value */
        StrBuf k;
        sb_init(&k);
        sb_printf(&k, "%s ", value_ctype(buf->layout.dtype));
        load_rhs(&k, buf->layout.dtype, bn, ix.s);
        *cse_slot(&e->cse, k.s) = v;
        sb_free(&k);
    }
    sb_free(&ix);
}
/* buf[index] += v from any thread (Inductor's cpp atomic_add): mi_atomic_add_<ctype>. Stores
 * at run-time indexes keep the loop scalar (two lanes may hit one element). */
static void c_store_atomic_add(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Em *e = h->self;
    cse_forget_loads(&e->cse, buf->name);
    cse_forget_loads(&e->cse, ir_store_target(buf)->name);
    e->simd_ok = false;
    const char *ct = cg_ctype(buf->layout.dtype);
    if (!ct || buf->layout.dtype == DT_BOOL || dtype_is_float8(buf->layout.dtype)) {
        e->bad = true;
        snprintf(e->err, sizeof e->err, "atomic_add of dtype %s is not supported by the C code generator", dtype_abbrev(buf->layout.dtype));
        return;
    }
    sb_printf(e->body, "%s    mi_atomic_add_%s(&%s[", e->indent, half(buf->layout.dtype) ? dtype_abbrev(buf->layout.dtype) : ct,
              ir_store_target(buf)->name);
    sym_c_sb(index, e->body);
    sb_printf(e->body, "], %s);\n", nm(e, v));
}
/* ops.indirect_indexing: the value as int64, wrapped (x < 0: x + size), checked against the
 * dim (a bad index is recorded for call() to report, and 0 used so the kernel stays in
 * bounds), then a C variable that the following indexes use by name:
 *     int64_t tmp5 = tmp4 < 0 ? tmp4 + 64LL : tmp4;
 *     if (!(0 <= tmp5 && tmp5 < 64LL)) { mi_index_oob(tmp5, 64LL); tmp5 = 0; }
 * Inside a simd loop (row mode with inner loops) the check is branch-free, as Inductor's
 * CppVecKernel.indirect_assert checks a whole vector of indexes at once: the smallest bad
 * index is a min reduction of the loop (a clause beside the accumulators'), reported after
 * the loops, and the index is clamped with a select; GCC left every loop with the `if`
 * (a call on one path) scalar:
 *     int64_t mi_oob5 = INT64_MAX;                                         (before the loops)
 *     int64_t tmp5 = tmp4 < 0 ? tmp4 + 64LL : tmp4;
 *     mi_oob5 = mi_oob_min(mi_oob5, tmp5, 64LL); tmp5 = mi_oob_ok(tmp5, 64LL) ? tmp5 : 0;
 *     if (mi_oob5 != INT64_MAX) mi_index_oob(mi_oob5, 64LL);               (after them)
 * Inductor checks only check=True indexes (TORCH_CHECK); here every one is checked: an
 * _unsafe_index past its dim must not crash the session. */
static Expr *c_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    Em *e = h->self;
    StrBuf sz;
    sb_init(&sz);
    sym_c_sb(size, &sz);
    const char *xv = nm(e, x);
    int before = *e->tmp;
    e->next_inv = cg_val_tag(&e->v, x) != 0;
    IrVal v = wrap_neg ? em_tmp(e, DT_I64, "%s < 0 ? (int64_t)%s + %s : (int64_t)%s", xv, xv, sz.s, xv)
                       : em_tmp(e, DT_I64, "(int64_t)%s", xv);
    bool inv = cg_val_tag(&e->v, v) != 0;
    const char *t = nm(e, v);
    if (*e->tmp != before && !inv && e->hoist && e->mode == EM_ROW) {   /* inside the simd loop */
        sb_printf(e->pre, "%s    int64_t mi_oob%s = INT64_MAX;\n", e->oindent, t + 3);
        sb_printf(e->clauses, " reduction(min:mi_oob%s)", t + 3);
        sb_printf(e->body, "%s    mi_oob%s = mi_oob_min(mi_oob%s, %s, %s); %s = mi_oob_ok(%s, %s) ? %s : 0;\n",
                  e->indent, t + 3, t + 3, t, sz.s, t, t, sz.s, t);
        sb_printf(e->fin, "%s    if (mi_oob%s != INT64_MAX) mi_index_oob(mi_oob%s, %s);\n", e->oindent, t + 3, t + 3, sz.s);
    } else if (*e->tmp != before)   /* a new variable (not a value numbered earlier): check it */
        sb_printf(inv ? e->hoist : e->body, "%s    if (!(0 <= %s && %s < %s)) { mi_index_oob(%s, %s); %s = 0; }\n",
                  inv ? e->oindent : e->indent, t, t, sz.s, t, sz.s, t);
    sb_free(&sz);
    Expr *r = sym_symbol(e->sy, t);
    if (!inv && e->nvarind < 64) e->varind[e->nvarind++] = r;
    return r;
}
static IrVal c_constant(OpsHandler *h, double v, DType dt) {
    Em *e = h->self;
    char *s = cg_constant(&cpp_overrides, v, dt);
    e->next_inv = true;
    e->lk = e->lane ? CG_LANE_NONE : CG_LANE_OTHER;
    e->lnd = 0;
    IrVal r = em_tmp(e, dt, "%s", s);
    free(s);
    if (!dtype_is_float(dt) && v == (double)(int64_t)v) vr_set(e, r, (int64_t)v, (int64_t)v);
    return r;
}
static IrVal c_index_expr(OpsHandler *h, Expr *x, DType dt) {
    Em *e = h->self;
    x = em_index(e, x);
    StrBuf s;
    sb_init(&s);
    sym_c_sb(x, &s);
    e->next_inv = !em_varies(e, x);
    e->lk = em_index_lane(e, x);
    e->lnd = 0;
    IrVal r = em_tmp(e, dt, "%s", s.s);
    sb_free(&s);
    int64_t lo, hi;
    if (e->prange && !dtype_is_float(dt) && dt != DT_BOOL && sym_bound(x, e->prange, 1, &lo, &hi)) vr_set(e, r, lo, hi);
    return r;
}
static IrVal c_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    Em *e = h->self;
    e->next_inv = cg_val_tag(&e->v, v);
    e->lk = em_lane_of(e, &v, 1);
    char *x = cg_to_dtype(&cpp_overrides, nm(e, v), dt, src);
    IrVal r = em_tmp(e, dt, "%s", x);
    free(x);
    int64_t lo, hi;   /* an integer kept in a type that holds it */
    if (vr_get(e, v, &lo, &hi) && (dt == DT_I64 || (dt == DT_I32 && lo >= INT32_MIN && hi <= INT32_MAX))) vr_set(e, r, lo, hi);
    return r;
}

/* Inside a piece of a split loop: a comparison of two integer values whose ranges decide it is
 * a constant; logical and / or / not of decided values fold; a select on a decided condition is
 * the side taken (the other side's code is dead: the C compiler drops it). -1: no fold. */
static IrVal fold_decided(Em *e, IrMathOp op, const IrVal *a, DType dt) {
    int64_t al = 0, ah = 0, bl = 0, bh = 0;
    int d = -1;   /* decided value of a comparison / logical op */
    bool ka = vr_get(e, a[0], &al, &ah), kb = ir_math_arity(op) > 1 && vr_get(e, a[1], &bl, &bh);
    switch (op) {
    case IOP_LT: if (ka && kb) d = ah < bl ? 1 : al >= bh ? 0 : -1; break;
    case IOP_LE: if (ka && kb) d = ah <= bl ? 1 : al > bh ? 0 : -1; break;
    case IOP_GT: if (ka && kb) d = al > bh ? 1 : ah <= bl ? 0 : -1; break;
    case IOP_GE: if (ka && kb) d = al >= bh ? 1 : ah < bl ? 0 : -1; break;
    case IOP_EQ: if (ka && kb) d = al == ah && bl == bh && al == bl ? 1 : ah < bl || bh < al ? 0 : -1; break;
    case IOP_NE: if (ka && kb) d = al == ah && bl == bh && al == bl ? 0 : ah < bl || bh < al ? 1 : -1; break;
    case IOP_LOGICAL_NOT: if (ka && al == ah) d = al == 0; break;
    case IOP_LOGICAL_AND:
        if ((ka && al == 0 && ah == 0) || (kb && bl == 0 && bh == 0)) d = 0;
        else if (ka && al > 0 && dtv(e, a[1]) == dt) return a[1];
        else if (kb && bl > 0 && dtv(e, a[0]) == dt) return a[0];
        break;
    case IOP_LOGICAL_OR:
        if ((ka && al > 0) || (kb && bl > 0)) d = 1;
        else if (ka && al == 0 && ah == 0 && dtv(e, a[1]) == dt) return a[1];
        else if (kb && bl == 0 && bh == 0 && dtv(e, a[0]) == dt) return a[0];
        break;
    case IOP_WHERE:
        if (ka && (al > 0 || ah < 0) && dtv(e, a[1]) == dt) return a[1];
        if (ka && al == 0 && ah == 0 && dtv(e, a[2]) == dt) return a[2];
        return -1;
    default: return -1;
    }
    if (d < 0 || dt != DT_BOOL) return -1;
    return c_constant(&e->h, d, DT_BOOL);
}

static IrVal c_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) {
    Em *e = h->self;
    if (e->prange) {
        IrVal f = fold_decided(e, op, a, dt);
        if (f >= 0) return f;
    }
    e->next_inv = true;   /* invariant when every argument is */
    for (int i = 0; i < ir_math_arity(op); i++) e->next_inv &= cg_val_tag(&e->v, a[i]) != 0;
    e->lk = em_lane_of(e, a, ir_math_arity(op));   /* a costly value of the innermost var (and one outer): once per nest */
    e->larr = (dt == DT_F32 || dt == DT_F64) && cg_lane_costly(op) && e->lane && cg_lane_hoistable(e->lane, e->lk, dt == DT_F64 ? 8 : 4);
    const char *args[4];
    for (int i = 0; i < ir_math_arity(op) && i < 4; i++) args[i] = nm(e, a[i]);
    char *x = cg_math(&cpp_overrides, op, cpp_compute_dtype(dtv(e, a[0])), args);
    if (!x) {
        e->bad = true;
        snprintf(e->err, sizeof e->err, "op %s has no C lowering", ir_math_name(op));
    }
    IrVal r = em_tmp(e, dt, "%s", x ? x : "0");
    free(x);
    return r;
}


/* ---- reductions ---- */
static int em_width(const Em *e) { return e->mode == EM_COL ? COL_TILE : WF_LANES; }
/* an accumulator: a scalar (row mode) or one per lane / tile column */
static void acc_decl(Em *e, const char *ct, const char *a, const char *init) {
    if (e->mode == EM_ROW) sb_printf(e->pre, "%s    %s %s = %s;\n", e->oindent, ct, a, init);
    else sb_printf(e->pre, "%s    %s %s[%d]; for (int mi_q = 0; mi_q < %d; mi_q++) %s[mi_q] = %s;\n",
                   e->oindent, ct, a, em_width(e), em_width(e), a, init);
}

static IrVal c_reduction(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) {
    Em *e = h->self;
    const char *x = nm(e, v[0]);
    char key[3 * EM_NAME + 40];
    snprintf(key, sizeof key, "reduce %d %d %s", (int)rt, (int)dt, x);
    for (int k = 1; k < ir_reduce_arity(rt); k++) snprintf(key + strlen(key), sizeof key - strlen(key), " %s", nm(e, v[k]));
    int *slot = cse_slot(&e->cse, key);   /* var and mean of one input: one Welford */
    if (*slot >= 0) return *slot;
    char A[32];
    snprintf(A, sizeof A, "acc%d", (*e->tmp)++);
    const char *ct = value_ctype(dt) ? value_ctype(dt) : "float";
    bool fl = dtype_is_float(dt);
    bool row = e->mode == EM_ROW, lanes = e->mode == EM_LANES;
    const char *L = row ? "" : "[mi_l]";
    const char *fi = e->oindent;
    char val[EM_NAME];
    if (e->mode == EM_COL) snprintf(val, sizeof val, "%s[mi_l]", A);
    else if (lanes) snprintf(val, sizeof val, "%s_r", A);
    else snprintf(val, sizeof val, "%s", A);
    switch (rt) {
    case RED_SUM: case RED_PROD: {
        const char *op = rt == RED_SUM ? "+" : "*";
        acc_decl(e, ct, A, rt == RED_SUM ? "0" : "1");
        sb_printf(e->body, "%s    %s%s %s= %s;\n", e->indent, A, L, op, x);
        if (rt == RED_SUM && dt == DT_F32 && e->csum_steps) {   /* Inductor's CascadeSumHelper */
            int w = row ? 1 : em_width(e);
            cg_csum_decl(e->pre, fi, A, w, e->csum_steps, e->csum_k);
            cg_csum_step(e->step, A, w);
            cg_csum_final(e->fin, fi, A, w, e->mode != EM_COL);
            e->simd_ok &= !row;        /* a scalar helper folds between elements */
            e->only_clauses &= !row;
        } else if (row) sb_printf(e->clauses, " reduction(%s:%s)", op, A);
        if (lanes) sb_printf(e->fin, "%s    %s %s_r = %s[0]; for (int mi_q = 1; mi_q < %d; mi_q++) %s_r %s= %s[mi_q];\n",
                             fi, ct, A, A, WF_LANES, A, op, A);
        break;
    }
    case RED_MAX: case RED_MIN: {
        const char *cmp = rt == RED_MAX ? ">" : "<";
        acc_decl(e, ct, A, cg_red_init(dt, rt == RED_MAX));
        sb_printf(e->body, "%s    %s%s = %s %s %s%s ? %s : %s%s;\n", e->indent, A, L, x, cmp, A, L, x, A, L);
        if (row) sb_printf(e->clauses, " reduction(%s:%s)", rt == RED_MAX ? "max" : "min", A);
        if (lanes) sb_printf(e->fin, "%s    %s %s_r = %s[0]; for (int mi_q = 1; mi_q < %d; mi_q++) %s_r = %s[mi_q] %s %s_r ? %s[mi_q] : %s_r;\n",
                             fi, ct, A, A, WF_LANES, A, A, cmp, A, A, A);
        if (fl) {   /* torch.amax/amin propagate NaN: a flag ORed over the lanes */
            char An[40];
            snprintf(An, sizeof An, "%s_nan", A);
            acc_decl(e, "int", An, "0");
            sb_printf(e->body, "%s    %s%s |= %s != %s;\n", e->indent, An, L, x, x);
            if (row) sb_printf(e->clauses, " reduction(|:%s)", An);
            if (lanes) sb_printf(e->fin, "%s    int %s_r = %s[0]; for (int mi_q = 1; mi_q < %d; mi_q++) %s_r |= %s[mi_q];\n",
                                 fi, An, An, WF_LANES, An, An);
            if (e->mode == EM_COL) snprintf(val, sizeof val, "(%s[mi_l] ? NAN : %s[mi_l])", An, A);
            else if (lanes) snprintf(val, sizeof val, "(%s_r ? NAN : %s_r)", An, A);
            else snprintf(val, sizeof val, "(%s ? NAN : %s)", An, A);
        }
        break;
    }
    case RED_ARGMAX: case RED_ARGMIN: {   /* scalar: the segment planner keeps these in row mode */
        bool mx = rt == RED_ARGMAX;
        const char *st = value_ctype(src) ? value_ctype(src) : "float";
        sb_printf(e->pre, "%s    %s %s_v = %s; int64_t %s = 0; int64_t %s_i = 0;\n", fi, st, A,
                  cg_red_init(src, mx), A, A);
        /* like torch: the first NaN is the arg-extremum */
        sb_printf(e->body, "%s    if (%s_v == %s_v && (%s != %s || %s %s %s_v)) { %s_v = %s; %s = %s_i; }\n%s    %s_i++;\n", e->indent,
                  A, A, x, x, x, mx ? ">" : "<", A, A, x, A, A, e->indent, A);
        e->simd_ok = false;
        e->only_clauses = false;
        snprintf(val, sizeof val, "%s", A);
        break;
    }
    case RED_WELFORD: {
        /* lanes: <a>_wm/<a>_wm2[WF_LANES] (MI_WF in the lane loop); scalar part <a>_tm/_tm2/_tn */
        bool dbl = dt == DT_F64 || src == DT_F64;
        e->welford = true;
        e->only_clauses = false;
        if (lanes) sb_printf(e->pre, "%s    %s %s_wm[%d] = {0}, %s_wm2[%d] = {0};\n", fi, dbl ? "double" : "float", A, WF_LANES, A, WF_LANES);
        sb_printf(e->pre, "%s    double %s_tm = 0, %s_tm2 = 0, %s_tn = 0;\n", fi, A, A, A);
        sb_printf(e->body, "%s    %s(%s, %s);\n", e->indent, dbl ? "MI_WFD" : "MI_WF", A, x);
        sb_printf(e->fin, "%s    double %s_mean = 0, %s_m2 = 0, %s_n = 0;\n", fi, A, A, A);
        if (lanes) sb_printf(e->fin, "%s    mi_wf_lanes_%s(&%s_n, &%s_mean, &%s_m2, (double)mi_wk, %s_wm, %s_wm2, %d);\n",
                             fi, dbl ? "double" : "float", A, A, A, A, A, WF_LANES);
        sb_printf(e->fin, "%s    mi_wf_merge(&%s_n, &%s_mean, &%s_m2, %s_tn, %s_tm, %s_tm2);\n", fi, A, A, A, A, A, A);
        snprintf(val, sizeof val, "%s", A);
        break;
    }
    case RED_WELFORD_COMBINE: {   /* scalar, as argmax: partial triples merged in order (mi_wf_merge) */
        e->simd_ok = false;
        e->only_clauses = false;
        sb_printf(e->pre, "%s    double %s_n = 0, %s_mean = 0, %s_m2 = 0;\n", fi, A, A, A);
        sb_printf(e->body, "%s    mi_wf_merge(&%s_n, &%s_mean, &%s_m2, (double)%s, (double)%s, (double)%s);\n", e->indent, A, A, A,
                  nm(e, v[2]), x, nm(e, v[1]));
        snprintf(val, sizeof val, "%s", A);
        break;
    }
    default:
        e->bad = true;
        snprintf(e->err, sizeof e->err, "reduction %s has no C lowering", ir_reduce_name(rt));
        break;
    }
    IrVal r = em_new(e, val, dt);
    *cse_slot(&e->cse, key) = r;
    return r;
}
static IrVal c_getitem(OpsHandler *h, IrVal v, int k) {
    Em *e = h->self;
    char n2[EM_NAME];
    static const char *sfx[3] = {"_mean", "_m2", "_n"};
    const char *ct = value_ctype(dtv(e, v)) ? value_ctype(dtv(e, v)) : "float";
    snprintf(n2, sizeof n2, "((%s)%s%s)", ct, nm(e, v), sfx[k < 3 && k >= 0 ? k : 0]);
    return em_new(e, n2, dtv(e, v));
}
/* ops.scan / ops.sort: only the GPU lowers ir.Scan / ir.Sort (the cpp backend has no
 * BackendFeature.SCAN / SORT: those ops are FallbackKernels on the CPU), so a C kernel never
 * meets one; a module lowered for cuda and compiled for the CPU is refused here. */
static IrVal c_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dtypes, const IrVal *v, int n) {
    Em *e = h->self;
    (void)flags; (void)v; (void)n;
    e->bad = true;
    snprintf(e->err, sizeof e->err, "ops.%s is not supported by the C code generator (a GPU lowering: lower the graph for the CPU)",
             op == SCAN_SORT ? "sort" : "scan");
    return em_new(e, "0", dtypes[0]);
}
/* ops.bucketize: lowered for GPUs only (BackendFeature.BUCKETIZE: Inductor's cpp backend calls
 * ATen's bucketize / searchsorted), as ops.scan */
static IrVal c_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) {
    Em *e = h->self;
    e->bad = true;
    snprintf(e->err, sizeof e->err, "ops.bucketize is not supported by the C code generator (a GPU lowering: lower the graph for the CPU)");
    return em_new(e, "0", b->index_dtype);
}
static void c_store_red(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Em *e = h->self;
    StrBuf ix;
    sb_init(&ix);
    sym_c_sb(index, &ix);
    sb_printf(e->post, "%s    ", e->oindent);
    store_lhs(e->post, buf->layout.dtype, ir_store_target(buf)->name, ix.s);
    sb_free(&ix);
    sb_put(e->post, " = ");
    store_rhs(e->post, buf->layout.dtype, nm(e, v));
    sb_put(e->post, ";\n");
}

/* ---- kernels ---- */

bool cg_group_writes(const Schedule *s, const SchedGroup *g, const Buffer *b) {
    for (int i = 0; i < g->n; i++) {
        const DepSet *d = &s->nodes[g->nodes[i]].deps;
        for (int w = 0; w < d->nwrites; w++)
            if (ir_store_target(d->writes[w].buf) == b) return true;
    }
    return false;
}
static int cmp_int2(const void *a, const void *b) {
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] < y[1]) - (x[1] > y[1]);   /* writes first */
}
/* The buffers the groups gs[0..ng) touch, ids ascending, writes first among equal ids. */
static int groups_bufs(const Schedule *s, const SchedGroup *const *gs, int ng, int **ids, bool **writes) {
    int nd = 0;
    for (int j = 0; j < ng; j++)
        for (int i = 0; i < gs[j]->n; i++) nd += s->nodes[gs[j]->nodes[i]].deps.nreads + s->nodes[gs[j]->nodes[i]].deps.nwrites;
    int *pr = mi_xmalloc(sizeof(int) * 2 * (nd + 1)), k = 0;
    for (int j = 0; j < ng; j++)
        for (int i = 0; i < gs[j]->n; i++) {
            const DepSet *d = &s->nodes[gs[j]->nodes[i]].deps;
            /* (the storage: an in-place foreach item's buffer is its input) */
            for (int r = 0; r < d->nreads; r++) { pr[2 * k] = ir_store_target(d->reads[r].buf)->id; pr[2 * k + 1] = 0; k++; }
            for (int w = 0; w < d->nwrites; w++) { pr[2 * k] = ir_store_target(d->writes[w].buf)->id; pr[2 * k + 1] = 1; k++; }
        }
    qsort(pr, k, 2 * sizeof(int), cmp_int2);
    *ids = mi_xmalloc(sizeof(int) * (k + 1));
    *writes = mi_xmalloc(k + 1);
    int n = 0;
    for (int i = 0; i < k; i++) {
        if (n && (*ids)[n - 1] == pr[2 * i]) continue;
        (*ids)[n] = pr[2 * i];
        (*writes)[n] = pr[2 * i + 1];
        n++;
    }
    free(pr);
    return n;
}
int cg_group_bufs(const Schedule *s, const SchedGroup *g, int **ids, bool **writes) {
    return groups_bufs(s, &g, 1, ids, writes);
}
int cg_kernel_bufs(const Schedule *s, const SchedKernel *k, int **ids, bool **writes) {
    const SchedGroup **gs = mi_xmalloc(sizeof *gs * (size_t)(k->n + 1));
    for (int p = 0; p < k->n; p++) gs[p] = &s->groups[s->order[k->first + p]];
    int n = groups_bufs(s, gs, k->n, ids, writes);
    free(gs);
    return n;
}
bool cg_group_touches(const Schedule *s, const SchedGroup *g, const Buffer *b) {
    for (int i = 0; i < g->n; i++) {
        const DepSet *d = &s->nodes[g->nodes[i]].deps;
        for (int w = 0; w < d->nwrites; w++) if (ir_store_target(d->writes[w].buf) == b) return true;
        for (int r = 0; r < d->nreads; r++) if (ir_store_target(d->reads[r].buf) == b) return true;
    }
    return false;
}

static void emit_loop_header(StrBuf *sb, const char *ind, const LoopBody *b, int v) {
    sb_printf(sb, "%sfor (int64_t %s = 0; %s < ", ind, b->vars[v]->name, b->vars[v]->name);
    sym_c_sb(b->ranges[v], sb);
    sb_printf(sb, "; %s++)\n", b->vars[v]->name);
}

static const SchedNode *gnode(const Schedule *s, const SchedGroup *g, int i) { return &s->nodes[g->nodes[i]]; }
static bool dep_has(const Dep *d, int n, const Buffer *b) {
    for (int i = 0; i < n; i++)
        if (d[i].buf == b) return true;
    return false;
}

/* Can node j share the inner loops of nodes [a, j)? Same inner ranges, and no value it needs
 * is finished only after those loops (a reduction's result), and no write-after-read. Element-
 * local producer -> consumer pairs are fine: the producer's store comes first in the body. */
static bool seg_join(const Schedule *s, const SchedGroup *g, int a, int j, int mo) {
    const LoopBody *x = gnode(s, g, a)->buf->body, *y = gnode(s, g, j)->buf->body;
    if (x->nvars != y->nvars) return false;
    for (int v = mo; v < x->nvars; v++)
        if (x->ranges[v] != y->ranges[v]) return false;
    const SchedNode *J = gnode(s, g, j);
    for (int k = a; k < j; k++) {
        const SchedNode *K = gnode(s, g, k);
        for (int w = 0; w < K->deps.nwrites; w++) {
            const Buffer *b = K->deps.writes[w].buf;
            if (K->buf->body->nred && dep_has(J->deps.reads, J->deps.nreads, b)) return false;
            if (dep_has(J->deps.writes, J->deps.nwrites, b)) return false;
        }
        for (int r = 0; r < K->deps.nreads; r++)
            if (dep_has(J->deps.writes, J->deps.nwrites, K->deps.reads[r].buf)) return false;
    }
    return true;
}

static bool is_one(Expr *e) {
    int64_t v;
    return e && sym_is_int(e, &v) && v == 1;
}

/* Column mode: the group is segments of sum/prod/max/min reductions whose loads are
 * contiguous along the last output dim and not along the innermost reduction dim, and
 * pointwise nodes at the output's index (a mean's division: Inductor's cpp kernel
 * vectorizes such a channels-last mean along the channels, its outer-loop tiling). */
static bool col_mode(const Schedule *s, const SchedGroup *g, int mo) {
    if (mo < 1) return false;
    SymCtx *sy = s->ir->ctx->sym;
    const LoopBody *b0 = gnode(s, g, 0)->buf->body;
    if (!b0->nred) return false;
    bool found = false;
    for (int i = 0; i < g->n; i++) {
        const SchedNode *n = gnode(s, g, i);
        const LoopBody *b = n->buf->body;
        if (!b->nred && b->nvars == mo) continue;   /* an epilogue: one tile of its own */
        if (!b->nred || b->npoint != mo) return false;
        IrReduceType rt = n->buf->rtype;
        if (rt != RED_SUM && rt != RED_PROD && rt != RED_MAX && rt != RED_MIN) return false;
        /* each segment (reductions with equal loops) runs its own loops inside the tile */
        const char *vo = b->vars[mo - 1]->name, *vi = b->vars[b->nvars - 1]->name;
        for (int r = 0; r < n->deps.nreads; r++) {
            const Dep *d = &n->deps.reads[r];
            if (d->kind != DEP_MEMORY || !d->index) continue;
            Expr *ci = sym_coeff(sy, d->index, vi);
            if (is_one(ci)) return false;   /* contiguous along the reduction: row mode */
            if (is_one(sym_coeff(sy, d->index, vo))) found = true;
        }
    }
    return found;
}

#define ROWLOC_MAX 16384         /* elements of one row-local array (on the stack) */
#define ROWLOC_BYTES (192 << 10) /* all of a kernel's row-local arrays */
#define ROWLOC_N 16
#define LANE_MAX 1024            /* the largest innermost extent whose values get per-nest arrays */

static bool intermediate(const Buffer *b) {
    return b->kind == BUF_COMPUTED && !b->mutates && b->output_index < 0 && !b->extern_owner;
}

/* Row-local buffers of a kernel: intermediates written by a pointwise node of the group and
 * touched by no other kernel, always at the writer's index, whose offset within the outer
 * iteration (outer vars set to 0) is bounded: softmax's exp row, a layer norm's centered row.
 * Each outer iteration keeps them in a stack array instead of a full-size buffer in memory. */
static int find_rowlocals(const Schedule *s, const SchedGroup *g, int mo, const Buffer **out, int64_t *sizes) {
    if (mo < 1) return 0;
    SymCtx *sy = s->ir->ctx->sym;
    const LoopBody *b0 = gnode(s, g, 0)->buf->body;
    int gi = (int)(g - s->groups), n = 0;
    int64_t total = 0;
    const char *on[MI_MAX_DIMS * 2];
    Expr *zeros[MI_MAX_DIMS * 2];
    /* zeros[] serves both substitutions below: b0's first mo vars, and a writer's inner vars,
     * of which a writer of higher rank than b0 has more than b0 has vars */
    for (int v = 0; v < MI_MAX_DIMS * 2; v++) { on[v] = v < b0->nvars ? b0->vars[v]->name : ""; zeros[v] = sym_int(sy, 0); }
    for (int i = 0; i < g->n && n < ROWLOC_N; i++) {
        const SchedNode *wn = gnode(s, g, i);
        const LoopBody *wb = wn->buf->body;
        if (wb->nred || wb->nvars <= mo || wb->nvars > MI_MAX_DIMS * 2) continue;
        for (int w = 0; w < wn->deps.nwrites && n < ROWLOC_N; w++) {
            const Dep *wd = &wn->deps.writes[w];
            const Buffer *b = wd->buf;
            if (!intermediate(b) || wd->kind != DEP_MEMORY || !wd->index || !cg_ctype(b->layout.dtype)) continue;
            bool ok = true;
            int nu = s->rd_start[b->id + 1] - s->rd_start[b->id], nw = s->wr_start[b->id + 1] - s->wr_start[b->id];
            for (int x = 0; x < nu + nw && ok; x++) {
                int k = x < nu ? s->rd[s->rd_start[b->id] + x] : s->wr[s->wr_start[b->id] + x - nu];
                const SchedNode *kn = &s->nodes[k];
                if (kn->dead) continue;
                for (int r = 0; r < kn->deps.nreads + kn->deps.nwrites && ok; r++) {
                    const Dep *d = r < kn->deps.nreads ? &kn->deps.reads[r] : &kn->deps.writes[r - kn->deps.nreads];
                    if (d->buf != b) continue;
                    if (kn->group != gi || d->kind != DEP_MEMORY || d->index != wd->index) ok = false;
                }
            }
            if (!ok) continue;
            const char *in[MI_MAX_DIMS * 2];
            SymRange rg[MI_MAX_DIMS * 2];
            int nin = 0;
            for (int v = mo; v < wb->nvars; v++) {
                int64_t hi;
                if (!sym_is_int(wb->ranges[v], &hi)) { ok = false; break; }
                in[nin] = wb->vars[v]->name;
                rg[nin] = (SymRange){wb->vars[v]->name, 0, hi - 1};
                nin++;
            }
            if (!ok) continue;
            Expr *loc = sym_subst(sy, wd->index, on, zeros, mo);
            Expr *outer = sym_subst(sy, wd->index, in, zeros, nin);
            if (sym_simplify(sy, sym_add(sy, outer, loc), NULL, 0) != sym_simplify(sy, wd->index, NULL, 0)) continue;
            int64_t lo, hi;
            if (!sym_bound(loc, rg, nin, &lo, &hi) || lo < 0 || hi >= ROWLOC_MAX) continue;
            int64_t bytes = (hi + 1) * (int64_t)dtype_size(b->layout.dtype);
            if (total + bytes > ROWLOC_BYTES) continue;
            total += bytes;
            out[n] = b;
            sizes[n] = hi + 1;
            n++;
        }
    }
    return n;
}

typedef struct Seg {
    const Schedule *s;
    const SchedGroup *g;
    int a, b;            /* nodes [a, b) */
    int mo;
    const char *ind;     /* indentation of the kernel's outer body */
    int mode;
    int *tmp;
    const Buffer *const *rowloc; int nrowloc;
    bool piece;          /* the innermost loop runs [lo, hi) only (a piece of a split loop) */
    int64_t lo, hi;
    bool *streamed;      /* set when a store of the segment streams (the group then fences) */
    StrBuf *pro;         /* before the group's parallel region: arrays of values of the innermost var */
    bool simd_outer;     /* the simd loop is the next-to-innermost (a transposition: codegen_tile.c) */
} Seg;

static void put_ind(StrBuf *sb, int depth) {
    for (int i = 0; i < depth; i++) sb_put(sb, "    ");
}
/* Parallel loops get an if() clause: run on one thread unless every thread gets at least
 * MI_PAR_MIN_CHUNK iterations of the body (Inductor's C++ backend also keeps small kernels
 * serial). On tiny loops waking the team costs more than the loop, and on a loaded machine a
 * descheduled team member turns a microsecond kernel into a millisecond one. */
#define MI_PAR_MIN_CHUNK 4096
static void par_if(StrBuf *out, const LoopBody *lb) {
    sb_put(out, " if(");
    for (int v = 0; v < lb->nvars; v++) { sb_putc(out, '('); sym_c_sb(lb->ranges[v], out); sb_put(out, ") * "); }
    sb_printf(out, "(int64_t)1 >= (int64_t)%d * omp_get_max_threads())", MI_PAR_MIN_CHUNK);
}

static void line(StrBuf *sb, int depth, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(StrBuf *sb, int depth, const char *fmt, ...) {
    put_ind(sb, depth);
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *t = mi_xmalloc((size_t)len + 1);
    va_start(ap, fmt);
    vsnprintf(t, (size_t)len + 1, fmt, ap);
    va_end(ap);
    sb_put(sb, t);
    sb_putc(sb, '\n');
    free(t);
}

static const char *wf_lane_macros =
    "#define MI_WF(a, x) do { float d_ = (x) - a##_wm[mi_l]; a##_wm[mi_l] += d_ * mi_rn; a##_wm2[mi_l] += d_ * ((x) - a##_wm[mi_l]); } while (0)\n"
    "#define MI_WFD(a, x) do { double d_ = (double)(x) - a##_wm[mi_l]; a##_wm[mi_l] += d_ * mi_rnd; a##_wm2[mi_l] += d_ * ((double)(x) - a##_wm[mi_l]); } while (0)\n";
static const char *wf_scalar_macros =
    "#define MI_WF(a, x) do { double d_ = (double)(x) - a##_tm; a##_tn += 1; a##_tm += d_ / a##_tn; a##_tm2 += d_ * ((double)(x) - a##_tm); } while (0)\n"
    "#define MI_WFD(a, x) MI_WF(a, x)\n";
static const char *wf_undef = "#undef MI_WF\n#undef MI_WFD\n";

/* An intermediate that a pointwise node of the segment writes and only nodes of the segment
 * read (at the same element: the scheduler fused them) lives in a register: its store is left
 * out and the loads get the stored value (the wrapper's allocation stays, untouched). */
static bool seg_local(const Seg *sg, const Buffer *b) {
    if (b->kind != BUF_COMPUTED || b->mutates || b->output_index >= 0 || b->extern_owner) return false;
    const Schedule *s = sg->s;
    int gi = (int)(sg->g - s->groups);
    for (int u = s->rd_start[b->id]; u < s->rd_start[b->id + 1]; u++) {
        int i = s->rd[u];
        const SchedNode *n = &s->nodes[i];
        if (n->dead) continue;
        if (n->group != gi) return false;
        /* the group's nodes are sorted by (mutation, id): the segment is a key range */
        long key = sched_order_key(s, i);
        int fa = sg->g->nodes[sg->a], fb = sg->g->nodes[sg->b - 1];
        if (key < sched_order_key(s, fa) || key > sched_order_key(s, fb)) return false;
    }
    return true;
}

static int emit_segment(MiCtx *ctx, const Seg *sg, StrBuf *out) {
    const Schedule *s = sg->s;
    const SchedGroup *g = sg->g;
    const LoopBody *lb = gnode(s, g, sg->a)->buf->body;
    int mo = sg->mo, nv = lb->nvars;
    bool has_red = false, has_arg = false, has_wf = false;
    const LoopBody *csb = NULL;   /* a body whose float32 sum takes the cascade helper */
    for (int i = sg->a; i < sg->b; i++) {
        const Buffer *bf = gnode(s, g, i)->buf;
        if (!bf->body->nred) continue;
        has_red = true;
        has_arg |= bf->rtype == RED_ARGMAX || bf->rtype == RED_ARGMIN || bf->rtype == RED_WELFORD_COMBINE;
        has_wf |= bf->rtype == RED_WELFORD;
        if (!csb && cg_csum_needed(bf->body)) csb = bf->body;
    }
    int mode = sg->mode;   /* Welford and cascade sums accumulate per lane */
    if (mode == EM_ROW && (has_wf || csb) && !has_arg && nv > mo) mode = EM_LANES;
    int d0 = (int)strlen(sg->ind) / 4 + 1;              /* segment block depth */
    int din = d0 + 1 + (nv - mo) + (mode == EM_LANES ? 2 : mode == EM_COL ? 1 : 0);   /* body depth */
    char bind[256], oind[256];
    snprintf(bind, sizeof bind, "%*s", 4 * (din - 1) > 250 ? 250 : 4 * (din - 1), "");
    snprintf(oind, sizeof oind, "%*s", 4 * d0 > 250 ? 250 : 4 * d0, "");
    StrBuf pre, body, fin, post, clauses, step;
    sb_init(&pre); sb_init(&body); sb_init(&fin); sb_init(&post); sb_init(&clauses); sb_init(&step);
    Em e = {0};
    e.lk = CG_LANE_OTHER;   /* no value is hoistable until an op says so (0 would be CG_LANE_NONE: a
                             * segment opening with a load of a buffer the kernel writes was hoisted) */
    e.pre = &pre; e.body = &body; e.fin = &fin; e.post = &post; e.clauses = &clauses; e.step = &step;
    char cind[256];   /* a column-mode epilogue's body: inside its tile loop */
    snprintf(cind, sizeof cind, "%*s", 4 * (d0 + 1) > 250 ? 250 : 4 * (d0 + 1), "");
    e.indent = nv > mo ? bind : mode == EM_COL ? cind : oind;
    e.oindent = oind;
    e.tmp = sg->tmp;
    e.mode = mode;
    char *csteps = csb ? cg_csum_steps(s->ir->ctx->sym, csb, mode == EM_LANES, em_width(&e), &e.csum_k) : NULL;
    e.csum_steps = csteps;
    e.simd_ok = true;
    e.only_clauses = true;
    e.rowloc = sg->rowloc;
    e.nrowloc = sg->nrowloc;
    e.sy = s->ir->ctx->sym;
    e.mo = mo;
    const char *on[MI_MAX_DIMS * 2];
    Expr *zeros[MI_MAX_DIMS * 2];
    for (int v = 0; v < mo && v < MI_MAX_DIMS * 2; v++) { on[v] = lb->vars[v]->name; zeros[v] = sym_int(e.sy, 0); }
    e.outer_names = on;
    e.zeros = zeros;
    SymRange pr = {sg->piece ? lb->vars[nv - 1]->name : NULL, sg->lo, sg->hi - 1};   /* a 0-d body has no vars[-1] */
    if (sg->piece) e.prange = &pr;
    StrBuf hoist;
    sb_init(&hoist);
    const Buffer *written[64];
    if (nv > mo) {
        e.hoist = &hoist;
        int thr = mode == EM_COL ? mo - 1 : mo;
        e.inner = lb->vars + thr;
        e.ninner = nv - thr;
        for (int i = sg->a; i < sg->b; i++) {
            const SchedNode *n = gnode(s, g, i);
            for (int w = 0; w < n->deps.nwrites; w++) {
                if (e.nwritten == 64) { e.hoist = NULL; break; }   /* unusual: no hoisting */
                written[e.nwritten++] = n->deps.writes[w].buf;
            }
        }
        e.written = written;
    }
    /* values of the innermost var alone, when its extent is a small constant and other loops
     * enclose it: the costly ones are computed once per nest (codegen_hoist.c) */
    CgLane lane = {0};
    int64_t ln;
    if (e.hoist && mode == EM_ROW && !sg->piece && sg->pro && (mo >= 1 || nv - mo >= 2) &&
        sym_is_int(lb->ranges[nv - 1], &ln) && ln > 1 && ln <= LANE_MAX && nv <= CG_LANE_VARS) {
        lane.var = lb->vars[nv - 1]->name;
        lane.n = ln;
        lane.nvars = nv;
        lane.total = 1;
        for (int v = 0; v < lane.nvars; v++) {
            lane.vname[v] = lb->vars[v]->name;
            if (!sym_is_int(lb->ranges[v], &lane.ext[v]) || lane.ext[v] <= 0) lane.ext[v] = 0, lane.total = 0;
            else if (lane.total) lane.total = lane.ext[v] > INT64_MAX / lane.total ? 0 : lane.total * lane.ext[v];
        }
        e.lane = &lane;
        e.others = lb->vars;
        e.nothers = nv - 1;
        e.s = s;
        e.g = g;
    }
    const Buffer *local[64];
    e.local = local;
    for (int i = sg->a; i < sg->b; i++) {
        const SchedNode *n = gnode(s, g, i);
        if (n->buf->body->nred) continue;
        for (int w = 0; w < n->deps.nwrites && e.nlocal < 64; w++)
            if (seg_local(sg, n->deps.writes[w].buf)) local[e.nlocal++] = n->deps.writes[w].buf;
    }
    CgRowPlan plan = {0};   /* a row over pointwise nodes: streamed stores, prefetch of the next row */
    if (mode == EM_ROW && nv == mo + 1 && !sg->piece) {
        const Buffer *skip[ROWLOC_N + 64];
        int nskip = 0;
        for (int i = 0; i < sg->nrowloc; i++) skip[nskip++] = sg->rowloc[i];
        for (int i = 0; i < e.nlocal; i++) skip[nskip++] = local[i];
        cg_row_plan(ctx, s, g, sg->a, sg->b, mo, skip, nskip, &plan);
        e.plan = &plan;
    }
    e.h = (OpsHandler){&e, c_load, c_store, c_constant, c_index_expr, c_to_dtype, c_math,
                       c_reduction, c_getitem, c_store_red, c_indirect, c_store_atomic_add, c_scan, c_bucketize};
    for (int i = sg->a; i < sg->b && !e.bad; i++) loop_body_run(gnode(s, g, i)->buf->body, &e.h);
    for (int k = plan.nstream - 1; k >= 0; k--) {   /* keep the streamed stores the body made */
        if (e.stream_hit[k] && e.stream_bad[k] && !e.bad) {
            e.bad = true;
            snprintf(e.err, sizeof e.err, "stores of '%s' at two different rows", plan.stream[k]->name);
        }
        if (e.stream_hit[k]) continue;
        plan.stream[k] = plan.stream[plan.nstream - 1];
        plan.stream_base[k] = plan.stream_base[--plan.nstream];
    }
    if (plan.nstream && sg->streamed) *sg->streamed = true;
    cg_vals_free(&e.v);
    cse_free(&e.cse);
    free(e.vr);
    int rc = 0;
    if (e.bad) {
        rc = mi_err(ctx, NULL, 0, 0, "%s (buffer '%s')", e.err, gnode(s, g, sg->a)->buf->name);
        goto done;
    }
    cg_lane_prune(&lane, &body);
    cg_lane_emit(&lane, "    ", sg->pro);
    const char *cl = clauses.s ? clauses.s : "";
    /* comment: the nodes and buffers of the segment */
    put_ind(out, d0);
    sb_put(out, "/*");
    for (int i = sg->a; i < sg->b; i++) sb_printf(out, " %s", gnode(s, g, i)->name);
    sb_put(out, ":");
    for (int i = sg->a; i < sg->b; i++) sb_printf(out, " %s", gnode(s, g, i)->buf->name);
    sb_put(out, " */\n");
    line(out, d0, "{");
    if (mode == EM_LANES && e.welford) line(out, d0 + 1, "int64_t mi_wk = 0;   /* Welford blocks of %d lanes */", WF_LANES);
    if (pre.s) sb_put(out, pre.s);
    if (hoist.s) sb_put(out, hoist.s);
    { char si[256]; snprintf(si, sizeof si, "%*s", 4 * (d0 + 1) > 250 ? 250 : 4 * (d0 + 1), ""); cg_row_decls(&plan, si, out); }
    const char *B = body.s ? body.s : "";
    if (nv > mo) {
        if (e.welford && mode == EM_ROW) sb_put(out, wf_scalar_macros);
        int d = d0 + 1;
        for (int v = mo; v < nv; v++) {
            bool innermost = v == nv - 1;
            const char *vn = lb->vars[v]->name;
            if (innermost && mode == EM_COL) {   /* reduction loops outside, the tile inside */
                { char li[256]; snprintf(li, sizeof li, "%*s", 4 * d > 250 ? 250 : 4 * d, ""); emit_loop_header(out, li, lb, v); }
                line(out, d, "{");
                line(out, d + 1, "#pragma omp simd");
                line(out, d + 1, "for (int64_t mi_l = 0; mi_l < mi_n; mi_l++) {");
                line(out, d + 2, "const int64_t %s = mi_t * %d + mi_l;", lb->vars[mo - 1]->name, COL_TILE);
                sb_put(out, B);
                line(out, d + 1, "}");
                cg_csum_put_steps(out, d + 1, step.s);   /* one step per reduction iteration */
                line(out, d, "}");
                break;
            }
            if (innermost && mode == EM_LANES) {   /* blocks of WF_LANES lanes, then a scalar tail */
                StrBuf r;
                sb_init(&r);
                sym_c_sb(lb->ranges[v], &r);
                line(out, d, "{");
                line(out, d + 1, "const int64_t mi_nb = %s / %d;", r.s, WF_LANES);
                int64_t ext;   /* a constant extent below one block: the tail alone */
                if (!sym_is_int(lb->ranges[v], &ext) || ext >= WF_LANES) {
                    line(out, d + 1, "for (int64_t mi_b = 0; mi_b < mi_nb; mi_b++) {");
                    if (e.welford)
                        line(out, d + 2, "mi_wk += 1; const float mi_rn = 1.0f / (float)mi_wk; const double mi_rnd = 1.0 / (double)mi_wk; (void)mi_rn; (void)mi_rnd;");
                    if (e.welford) sb_put(out, wf_lane_macros);
                    line(out, d + 2, "#pragma omp simd");
                    line(out, d + 2, "for (int64_t mi_l = 0; mi_l < %d; mi_l++) {", WF_LANES);
                    line(out, d + 3, "const int64_t %s = mi_b * %d + mi_l;", vn, WF_LANES);
                    sb_put(out, B);
                    line(out, d + 2, "}");
                    cg_csum_put_steps(out, d + 2, step.s);   /* one step per block */
                    line(out, d + 1, "}");
                    if (e.welford) sb_put(out, wf_undef);
                }
                if (e.welford) sb_put(out, wf_scalar_macros);
                line(out, d + 1, "for (int64_t %s = mi_nb * %d; %s < %s; %s++) {", vn, WF_LANES, vn, r.s, vn);
                line(out, d + 2, "const int64_t mi_l = 0; (void)mi_l;");
                sb_put(out, B);
                line(out, d + 1, "}");
                cg_csum_put_steps(out, d + 1, step.s);   /* and one for the tail */
                if (e.welford) sb_put(out, wf_undef);
                line(out, d, "}");
                sb_free(&r);
                break;
            }
            char li[256];
            snprintf(li, sizeof li, "%*s", 4 * d > 250 ? 250 : 4 * d, "");
            bool prag = false;
            if (mode == EM_ROW && mo == 0 && v == 0) {   /* no outer loop: parallelize this one */
                if (!has_red) { sb_printf(out, "%s#pragma omp parallel for%s%s", li, nv == 1 ? " simd" : "", cl); par_if(out, lb); sb_putc(out, '\n'); prag = true; }
                else if (e.only_clauses && e.simd_ok) { sb_printf(out, "%s#pragma omp parallel for%s%s", li, nv == 1 ? " simd" : "", cl); par_if(out, lb); sb_putc(out, '\n'); prag = true; }
            }
            if (innermost && plan.npf) cg_row_prefetch_open(&plan, li, out);
            bool simd_here = sg->simd_outer ? v == nv - 2 : innermost;
            if (!prag && simd_here && mode == EM_ROW && e.simd_ok) sb_printf(out, "%s#pragma omp simd%s\n", li, cl);
            if (innermost && plan.npf) cg_row_chunk_header(&plan, li, out);
            else if (innermost && sg->piece)
                sb_printf(out, "%sfor (int64_t %s = %lldLL; %s < %lldLL; %s++)\n", li, vn, (long long)sg->lo, vn, (long long)sg->hi, vn);
            else emit_loop_header(out, li, lb, v);
            line(out, d, "{");
            d++;
            if (innermost) sb_put(out, B);
            if (innermost && mode == EM_ROW) cg_csum_put_steps(out, d, step.s);   /* one step per element */
        }
        for (int v = nv - 1; v >= mo; v--) {
            if (v == nv - 1 && mode != EM_ROW) continue;   /* closed above */
            line(out, --d, "}");
            if (v == nv - 1 && plan.npf) line(out, d, "}");   /* the prefetch chunks */
        }
        { char si[256]; snprintf(si, sizeof si, "%*s", 4 * d > 250 ? 250 : 4 * d, ""); cg_row_stream_out(&plan, si, out); }
        if (e.welford && mode == EM_ROW) sb_put(out, wf_undef);
    } else if (mode == EM_COL) {   /* a pointwise epilogue of column mode: the tile as its simd loop */
        line(out, d0 + 1, "#pragma omp simd");
        line(out, d0 + 1, "for (int64_t mi_l = 0; mi_l < mi_n; mi_l++) {");
        line(out, d0 + 2, "const int64_t %s = mi_t * %d + mi_l;", lb->vars[mo - 1]->name, COL_TILE);
        sb_put(out, B);
        if (fin.s) sb_put(out, fin.s);
        if (post.s) sb_put(out, post.s);
        line(out, d0 + 1, "}");
    } else sb_put(out, B);
    if (mode == EM_COL && nv > mo) {
        line(out, d0 + 1, "for (int64_t mi_l = 0; mi_l < mi_n; mi_l++) {");
        line(out, d0 + 2, "const int64_t %s = mi_t * %d + mi_l;", lb->vars[mo - 1]->name, COL_TILE);
        if (fin.s) sb_put(out, fin.s);
        if (post.s) sb_put(out, post.s);
        line(out, d0 + 1, "}");
    } else if (mode != EM_COL) {
        if (fin.s) sb_put(out, fin.s);
        if (post.s) sb_put(out, post.s);
    }
    line(out, d0, "}");
    (void)has_red;
done:
    sb_free(&pre); sb_free(&body); sb_free(&fin); sb_free(&post); sb_free(&clauses); sb_free(&hoist); sb_free(&step);
    free(csteps);
    cg_lane_free(&lane);
    return rc;
}

void cg_source_comment(const Schedule *s, const SchedKernel *k, const char *indent, StrBuf *out) {
    int nb = 0;
    for (int p = 0; p < k->n; p++) nb += s->groups[s->order[k->first + p]].n;
    const Buffer **bufs = mi_xmalloc(sizeof *bufs * (size_t)(nb + 1));
    nb = 0;
    for (int p = 0; p < k->n; p++) {
        const SchedGroup *g = &s->groups[s->order[k->first + p]];
        for (int i = 0; i < g->n; i++) bufs[nb++] = s->nodes[g->nodes[i]].buf;
    }
    StrBuf names, aten;
    sb_init(&names);
    sb_init(&aten);
    ir_source_nodes_comment(s->ir, bufs, nb, &names, &aten);
    if (names.len)
        sb_printf(out, "%s/* Topologically Sorted Source Nodes: [%s], Original ATen: [%s] */\n", indent, names.s, aten.s ? aten.s : "");
    sb_free(&names);
    sb_free(&aten);
    free(bufs);
}

/* Where a pointwise segment's one inner loop splits (codegen_split.c: a cat along it, a
 * select or a clamp on its variable): the points, ascending; 0 when it stays whole (reductions,
 * more than one inner loop, a symbolic extent, no point, or more than MAX_PIECES pieces). */
#define MAX_PIECES 16
static int split_points(const Seg *sg, int64_t *pts) {
    const Schedule *s = sg->s;
    const LoopBody *lb = gnode(s, sg->g, sg->a)->buf->body;
    int64_t n;
    if (lb->nvars != sg->mo + 1 || !sym_is_int(lb->ranges[lb->nvars - 1], &n)) return 0;
    const LoopBody *bodies[64];
    int nb = 0;
    for (int i = sg->a; i < sg->b; i++) {
        const LoopBody *b = gnode(s, sg->g, i)->buf->body;
        if (b->nred || nb == 64) return 0;
        bodies[nb++] = b;
    }
    int np = cg_split_points(s->ir->ctx->sym, bodies, nb, lb->vars[lb->nvars - 1], n, pts, MAX_PIECES - 1);
    return np > MAX_PIECES - 1 ? 0 : np;
}

/* One group's loop nest inside its kernel's function: the outer loops shared by its nodes
 * (parallel), then each segment of nodes with equal inner loops. */
static int emit_group(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out) {
    int tmp = 0;
    int mo = g->nouter;
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    bool tr = cg_tile_transposed(s, g, mo);   /* the last outer loop runs inside, as the simd loop */
    if (tr) mo--;
    bool col = col_mode(s, g, mo);
    const Buffer *rowloc[ROWLOC_N];
    int64_t rowsz[ROWLOC_N];
    int nrowloc = col ? 0 : find_rowlocals(s, g, mo, rowloc, rowsz);
    char ind[256] = "    ";
    StrBuf *final = out, nest, pro;   /* the loop nest is written after its parallel pragma is known */
    sb_init(&nest);
    sb_init(&pro);
    out = &nest;
    bool streamed = false;
    if (mo > 0) {
        for (int v = 0; v < mo; v++) {
            if (col && v == mo - 1) {
                StrBuf r;
                sb_init(&r);
                sym_c_sb(b0->ranges[v], &r);
                sb_printf(out, "%sfor (int64_t mi_t = 0; mi_t < (%s + %d) / %d; mi_t++)\n", ind, r.s, COL_TILE - 1, COL_TILE);
                sb_printf(out, "%s{\n%s    const int64_t mi_n = %s - mi_t * %d < %d ? %s - mi_t * %d : %d;\n", ind, ind, r.s, COL_TILE, COL_TILE, r.s, COL_TILE, COL_TILE);
                sb_free(&r);
                break;
            }
            emit_loop_header(out, ind, b0, v);
            if (v + 1 < mo) strcat(ind, "    ");
        }
        if (!col) sb_printf(out, "%s{\n", ind);
    } else sb_printf(out, "%s{\n", ind);
    for (int i = 0; i < nrowloc; i++)
        sb_printf(out, "%s    %s loc_%s[%lld];\n", ind, cg_ctype(rowloc[i]->layout.dtype), rowloc[i]->name, (long long)rowsz[i]);
    for (int a = 0; a < g->n;) {
        int b = a + 1;
        while (b < g->n && seg_join(s, g, a, b, mo)) b++;
        Seg sg = {s, g, a, b, mo, ind, col ? EM_COL : EM_ROW, &tmp, rowloc, nrowloc, false, 0, 0, &streamed, &pro, tr};
        int64_t pts[MAX_PIECES];
        int np = col ? 0 : split_points(&sg, pts);
        if (np == 0 && emit_segment(ctx, &sg, out) < 0) { sb_free(&nest); sb_free(&pro); return -1; }
        for (int p = 0; p <= np && np > 0; p++) {   /* one loop per piece: [0, pts[0]), ..., [pts[np-1], n) */
            sg.piece = true;
            sg.lo = p == 0 ? 0 : pts[p - 1];
            if (!sym_is_int(s->nodes[g->nodes[a]].buf->body->ranges[s->nodes[g->nodes[a]].buf->body->nvars - 1], &sg.hi) ||
                (p < np && (sg.hi = pts[p], false)) || emit_segment(ctx, &sg, out) < 0) {
                sb_free(&nest);
                sb_free(&pro);
                return -1;
            }
        }
        a = b;
    }
    sb_printf(out, "%s}\n", ind);
    out = final;
    if (pro.s) sb_printf(out, "    {\n%s", pro.s);   /* the per-nest arrays, in a block of their own */
    if (mo > 0) {   /* streamed stores: each thread fences its non-temporal stores before the region ends */
        sb_put(out, streamed ? "    #pragma omp parallel" : "    #pragma omp parallel for");
        if (!streamed && mo > 1) sb_printf(out, " collapse(%d)", mo);
        par_if(out, b0);
        sb_putc(out, '\n');
        if (streamed) {
            sb_put(out, "    {\n    #pragma omp for");
            if (mo > 1) sb_printf(out, " collapse(%d)", mo);
            sb_put(out, " nowait\n");
        }
    }
    sb_put(out, nest.s ? nest.s : "");
    if (streamed && mo > 0) sb_put(out, "    mi_stream_fence();\n    }\n");
    if (pro.s) sb_put(out, "    }\n");
    sb_free(&nest);
    sb_free(&pro);
    return 0;
}

int cg_emit_kernel(MiCtx *ctx, const Schedule *s, const SchedKernel *k, const CgMemPlan *mem, StrBuf *out) {
    const IrModule *m = s->ir;
    cg_source_comment(s, k, "", out);
    sb_printf(out, "static void %s(", k->name);
    int na = 0, *ids;
    bool *wr;
    int nid = cg_kernel_bufs(s, k, &ids, &wr);
    StrBuf alias;   /* in-place outputs: pointers to the storage of the input they overwrite */
    sb_init(&alias);
    sb_put(&alias, "");
    for (int q = 0; q < nid; q++) {
        const Buffer *b = m->bufs[ids[q]];
        const char *ct = cg_ctype(b->layout.dtype);
        if (!ct || dtype_is_complex(b->layout.dtype)) {
            free(ids); free(wr); sb_free(&alias);
            return mi_err(ctx, NULL, 0, 0, "dtype %s of buffer '%s' is not supported by the C code generator%s", dtype_abbrev(b->layout.dtype), b->name,
                          ct ? " in a generated kernel (complex tensors are read and written by FallbackKernels only, as in Inductor)" : "");
        }
        if (cg_mem_inplace_here(mem, ids[q], ids, nid)) {
            sb_printf(&alias, "    %s *const %s = (%s *)%s;   /* in place of %s (in_out_ptr) */\n", ct, b->name, ct,
                      m->bufs[mem->inplace_of[ids[q]]]->name, m->bufs[mem->inplace_of[ids[q]]]->name);
            continue;
        }
        bool written = wr[q];
        for (int j = 0; j < nid && !written; j++) written = mem && mem->inplace_of[ids[j]] == ids[q];
        sb_printf(out, "%s%s%s *restrict %s", na++ ? ", " : "", written ? "" : "const ", ct, b->name);
    }
    free(ids);
    free(wr);
    sb_printf(out, "%sconst int64_t *syms)\n{\n%s", na ? ", " : "", alias.s ? alias.s : "");
    sb_free(&alias);
    for (int i = 0; i < m->nsyms; i++) sb_printf(out, "    const int64_t %s = syms[%d];\n", m->sym_names[i], i);
    sb_put(out, "    (void)syms;\n");
    /* the groups one after the other, each its own loop nest (a cpp kernel group) */
    for (int p = 0; p < k->n; p++)
        if (emit_group(ctx, s, &s->groups[s->order[k->first + p]], out) < 0) return -1;
    sb_put(out, "}\n\n");
    return 0;
}
