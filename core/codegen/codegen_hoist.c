/* codegen_hoist.c — per-nest precomputation of the values that depend only on the innermost
 * loop var (codegen_kernel.c records them while it emits a segment).
 *
 * A channels-last batch norm walks (n, h, w, c) with c innermost, 16 wide; its
 * 1 / sqrt(var[c] + eps) depends on c alone but was computed for every element (a division and
 * a square root per element: 0.13 ms of the fused BN + ReLU + max-pool loop at one thread). When
 * the innermost loop has a constant extent, each such costly value is computed once per call of
 * the kernel, before its parallel region, into a stack array, by the same statements:
 *
 *   float mi_h7[16];
 *   for (int64_t p3 = 0; p3 < 16LL; p3++) {
 *       float tmp3 = arg4_1[p3];  float tmp4 = 1e-05f;  float tmp5 = tmp3 + tmp4;
 *       float tmp6 = sqrtf(tmp5);  float tmp7 = 1.0f / tmp6;
 *       mi_h7[p3] = tmp7;
 *   }
 *   ... in the nest: float tmp7 = mi_h7[p3];
 *
 * The same expression on the same inputs: the same bits. Only values whose operands are
 * constants, loads at an index of the loop vars from buffers the nest does not write, and other
 * such values qualify (each with the mask of the vars it uses); a costly op of the innermost var
 * alone gets an array. So does one of the innermost var and one outer var when the nest repeats
 * it many times over the other vars: RoPE's cos / sin of position p1 times the frequency of p3,
 * in a (batch, position, head, 16) nest, is a table of 256 x 16 computed once per call (the simd
 * loop inside it uses the same vector functions as the nest), not 32 times per value:
 *
 *   float mi_h19[4096];   (a value of (p1, p3) alone)
 *   for (int64_t p1 = 0; p1 < 256LL; p1++) {
 *       #pragma omp simd
 *       for (int64_t p3 = 0; p3 < 16LL; p3++) { ... mi_h19[p1*16LL + p3] = tmp19; }
 *   }
 *   ... in the nest: float tmp19 = mi_h19[p1*16LL + p3]; */
#include "codegen/codegen_hoist.h"
#include "ir/ops_handler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void lane_grow(CgLane *L, int v) {
    if (v < L->cap) return;
    int n = v + 64;
    L->stmt = mi_xrealloc(L->stmt, sizeof *L->stmt * (size_t)n);
    L->deps = mi_xrealloc(L->deps, sizeof *L->deps * (size_t)n);
    L->mask = mi_xrealloc(L->mask, sizeof *L->mask * (size_t)n);
    L->arrays = mi_xrealloc(L->arrays, sizeof *L->arrays * (size_t)n);
    L->names = mi_xrealloc(L->names, sizeof *L->names * (size_t)n);
    for (int i = L->cap; i < n; i++) {
        L->stmt[i] = NULL;
        L->deps[i][0] = L->deps[i][1] = L->deps[i][2] = -1;
        L->mask[i] = CG_LANE_OTHER;
    }
    L->cap = n;
}

void cg_lane_set(CgLane *L, int v, int mask, const char *stmt, const int *deps, int ndeps) {
    if (v < 0 || mask == CG_LANE_OTHER) return;
    lane_grow(L, v);
    L->mask[v] = mask;
    free(L->stmt[v]);
    L->stmt[v] = mi_xstrdup(stmt);
    for (int i = 0; i < 3; i++) L->deps[v][i] = i < ndeps ? deps[i] : -1;
}

int cg_lane_kind(const CgLane *L, int v) {
    return v >= 0 && v < L->cap ? L->mask[v] : CG_LANE_OTHER;
}

/* The outer var of a two-var mask (its bit index), -1 when mask is not the innermost var and
 * exactly one other. */
static int lane_outer(const CgLane *L, int mask) {
    int in = 1 << (L->nvars - 1), rest = mask & ~in;
    if (mask < 0 || !(mask & in) || !rest || (rest & (rest - 1))) return -1;
    return __builtin_ctz((unsigned)rest);
}

bool cg_lane_hoistable(const CgLane *L, int mask, int elem) {
    if (L->nvars < 1 || mask < 0) return false;
    if (mask == 1 << (L->nvars - 1)) return true;
    int x = lane_outer(L, mask);
    if (x < 0 || L->ext[x] <= 0 || L->total <= 0) return false;
    int64_t cells = L->ext[x] * L->n;
    return cells <= CG_LANE2_MAX && L->total >= 8 * cells && L->bytes2 + cells * elem <= CG_LANE2_BYTES;
}

void cg_lane_index(const CgLane *L, int mask, char *buf, size_t n) {
    int x = lane_outer(L, mask);
    if (x < 0) snprintf(buf, n, "%s", L->var);
    else snprintf(buf, n, "%s*%lldLL + %s", L->vname[x], (long long)L->n, L->var);
}

void cg_lane_array(CgLane *L, int v, int name, int elem) {
    lane_grow(L, v);
    int x = lane_outer(L, L->mask[v]);
    if (x >= 0) L->bytes2 += L->ext[x] * L->n * elem;
    L->names[L->narrays] = name;
    L->arrays[L->narrays++] = v;
}

bool cg_lane_costly(int op) {
    switch (op) {
    case IOP_NEG: case IOP_RELU: case IOP_ABS: case IOP_FLOOR: case IOP_CEIL: case IOP_LOGICAL_NOT:
    case IOP_SIGN: case IOP_ROUND: case IOP_TRUNC: case IOP_SIGNBIT: case IOP_BITWISE_NOT:
    case IOP_ADD: case IOP_SUB: case IOP_MUL: case IOP_MAXIMUM: case IOP_MINIMUM:
    case IOP_EQ: case IOP_NE: case IOP_LT: case IOP_LE: case IOP_GT: case IOP_GE:
    case IOP_LOGICAL_AND: case IOP_LOGICAL_OR: case IOP_BITWISE_AND: case IOP_BITWISE_OR:
    case IOP_BITWISE_XOR: case IOP_FMAX: case IOP_FMIN: case IOP_COPYSIGN: case IOP_NEXTAFTER:
    case IOP_WHERE: case IOP_FMA:
        return false;
    default:
        return true;   /* divisions, sqrt / rsqrt, exp / log / pow, trigonometric, special */
    }
}

/* Occurrences of the variable `name` in text s (not as part of a longer name). */
static int word_count(const char *s, const char *name) {
    int n = 0;
    size_t L = strlen(name);
    for (const char *p = s ? strstr(s, name) : NULL; p; p = strstr(p + 1, name)) {
        char b = p == s ? ' ' : p[-1], a = p[L];
        bool inb = b == '_' || (b >= '0' && b <= '9') || ((b | 32) >= 'a' && (b | 32) <= 'z');
        bool ina = a == '_' || (a >= '0' && a <= '9') || ((a | 32) >= 'a' && (a | 32) <= 'z');
        n += !inb && !ina;
    }
    return n;
}

void cg_lane_prune(CgLane *L, StrBuf *body) {
    for (int i = L->narrays - 1; i >= 0; i--) {
        char nm[32], ln[128];
        snprintf(nm, sizeof nm, "tmp%d", L->names[i]);
        if (word_count(body->s, nm) != 1) continue;   /* read in the loop: keep */
        char ix[64];
        cg_lane_index(L, L->mask[L->arrays[i]], ix, sizeof ix);
        snprintf(ln, sizeof ln, " %s = mi_h%d[%s];\n", nm, L->names[i], ix);
        char *at = body->s ? strstr(body->s, ln) : NULL;
        if (!at) continue;
        char *start = at, *end = at + strlen(ln);
        while (start > body->s && start[-1] != '\n') start--;
        memmove(start, end, body->len - (size_t)(end - body->s) + 1);
        body->len -= (size_t)(end - start);
        L->arrays[i] = L->arrays[L->narrays - 1];   /* its statement stays in the prologue */
        L->names[i] = L->names[--L->narrays];
    }
}

/* The type of array element for value v: the statement's first word ("float tmp7 = ..."). */
static void stmt_type(const char *stmt, char *buf, size_t n) {
    size_t k = strcspn(stmt, " ");
    snprintf(buf, n, "%.*s", (int)(k < n ? k : n - 1), stmt);
}

/* One prologue loop (nest) for the arrays of `mask`: their declarations, then the values they
 * need (operands have lower ids than their users) in a loop over the innermost var, inside a
 * loop over the outer var for a two-var mask. */
static void emit_group(const CgLane *L, int mask, const char *ind, StrBuf *out) {
    char *need = mi_xcalloc((size_t)L->cap + 1, 1);
    for (int i = 0; i < L->narrays; i++)
        if (L->mask[L->arrays[i]] == mask) need[L->arrays[i]] = 1;
    for (int v = L->cap - 1; v >= 0; v--)
        for (int d = 0; need[v] && d < 3; d++)
            if (L->deps[v][d] >= 0) need[L->deps[v][d]] = 1;
    int x = lane_outer(L, mask);
    int64_t cells = x < 0 ? L->n : L->ext[x] * L->n;
    char ix[64];
    cg_lane_index(L, mask, ix, sizeof ix);
    for (int i = 0; i < L->narrays; i++) {
        if (L->mask[L->arrays[i]] != mask) continue;
        char ct[32];
        stmt_type(L->stmt[L->arrays[i]], ct, sizeof ct);
        if (x < 0)
            sb_printf(out, "%s%s mi_h%d[%lld];   /* a value of %s alone: computed once per call */\n", ind, ct,
                      L->names[i], (long long)cells, L->var);
        else
            sb_printf(out, "%s%s mi_h%d[%lld];   /* a value of (%s, %s) alone: computed once per call */\n", ind, ct,
                      L->names[i], (long long)cells, L->vname[x], L->var);
    }
    const char *in = ind;
    char deeper[64];
    if (x >= 0) {
        sb_printf(out, "%sfor (int64_t %s = 0; %s < %lldLL; %s++) {\n", ind, L->vname[x], L->vname[x],
                  (long long)L->ext[x], L->vname[x]);
        snprintf(deeper, sizeof deeper, "%s    ", ind);
        in = deeper;
        sb_printf(out, "%s#pragma omp simd\n", in);
    }
    sb_printf(out, "%sfor (int64_t %s = 0; %s < %lldLL; %s++) {\n", in, L->var, L->var, (long long)L->n, L->var);
    for (int v = 0; v < L->cap; v++)
        if (need[v] && L->stmt[v]) sb_printf(out, "%s    %s\n", in, L->stmt[v]);
    for (int i = 0; i < L->narrays; i++)
        if (L->mask[L->arrays[i]] == mask) sb_printf(out, "%s    mi_h%d[%s] = tmp%d;\n", in, L->names[i], ix, L->names[i]);
    sb_printf(out, "%s}\n", in);
    if (x >= 0) sb_printf(out, "%s}\n", ind);
    free(need);
}

void cg_lane_emit(const CgLane *L, const char *ind, StrBuf *out) {
    for (int i = 0; i < L->narrays; i++) {   /* each mask once, in the order of its first array */
        int m = L->mask[L->arrays[i]], seen = 0;
        for (int j = 0; j < i; j++) seen |= L->mask[L->arrays[j]] == m;
        if (!seen) emit_group(L, m, ind, out);
    }
}

void cg_lane_free(CgLane *L) {
    for (int i = 0; i < L->cap; i++) free(L->stmt[i]);
    free(L->stmt);
    free(L->deps);
    free(L->mask);
    free(L->arrays);
    free(L->names);
    memset(L, 0, sizeof *L);
}
