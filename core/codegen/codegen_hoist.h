/* codegen_hoist.h — values of a loop nest that depend only on its innermost loop var (a small
 * constant extent), or on it and one outer var, computed once per nest into a stack array (see
 * codegen_hoist.c). */
#ifndef MI_CODEGEN_HOIST_H
#define MI_CODEGEN_HOIST_H

#include "base/mi.h"

/* What a value of the segment depends on: a mask of the nest's loop vars it uses (bit i: the
 * nest's var i, the innermost last), or CG_LANE_OTHER: it cannot be computed before the nest (a
 * store, a reduction, an indirect variable, a buffer the nest writes). */
enum { CG_LANE_OTHER = -1,   /* not hoistable */
       CG_LANE_NONE = 0 };   /* no loop var (a constant, a load at a fixed index) */
#define CG_LANE_VARS 30      /* nests with more vars track none */

typedef struct CgLane {
    const char *var;   /* the innermost loop var */
    int64_t n;         /* its extent */
    int nvars;                          /* the nest's vars, the innermost last: */
    const char *vname[CG_LANE_VARS];    /*   their names */
    int64_t ext[CG_LANE_VARS];          /*   their constant extents (0: not constant) */
    int64_t total;                      /* the product of the extents (0: one is not constant) */
    int64_t bytes2;                     /* stack bytes of the two-var arrays so far */
    int cap;           /* per value (IrVal index): */
    char **stmt;       /*   its C statement ("float tmp6 = sqrtf(tmp5);"), NULL unless mask >= 0 */
    int (*deps)[3];    /*   the values it reads, -1 for none */
    int *mask;         /*   the vars it uses, CG_LANE_OTHER */
    int *arrays, *names, narrays;   /* values computed into arrays mi_h<name> (of tmp<name>) */
} CgLane;

/* Record value v: its mask, statement and up to three values it reads (-1: none). */
void cg_lane_set(CgLane *L, int v, int mask, const char *stmt, const int *deps, int ndeps);
/* The mask recorded for v (CG_LANE_OTHER when none). */
int cg_lane_kind(const CgLane *L, int v);
/* May a costly value of `mask` of `elem` bytes get an array? The innermost var alone (as
 * before), or it and one outer var X when X's extent times the innermost's is at most
 * CG_LANE2_MAX, the nest runs at least 8 times as many iterations, and the two-var arrays stay
 * within CG_LANE2_BYTES of stack. Example: RoPE's cos(p1 * inv_freq[p3]) in an (8, 256, 4, 16)
 * nest: a 256 x 16 table, 32 times fewer cosines. */
#define CG_LANE2_MAX 8192
#define CG_LANE2_BYTES 65536
bool cg_lane_hoistable(const CgLane *L, int mask, int elem);
/* The array index of `mask` ("p3", or "p1*16LL + p3") into buf. */
void cg_lane_index(const CgLane *L, int mask, char *buf, size_t n);
/* v (of a hoistable mask), the C variable tmp<name>, is computed once per nest into
 * mi_h<name>[]; the loop reads it there. elem: its size in bytes. */
void cg_lane_array(CgLane *L, int v, int name, int elem);
/* Does op cost more than a few cycles per element (a division, sqrt, exp, a transcendental)? */
bool cg_lane_costly(int op);
/* Drop the arrays the loop body does not read (a square root only its reciprocal uses): their
 * `tmpN = mi_hN[...];` line leaves `body`; the value is still computed in the prologue. */
void cg_lane_prune(CgLane *L, StrBuf *body);
/* The prologue: the arrays' declarations and, per set of vars, one loop (nest) computing them
 * (the values they need, in order). Nothing when there are none. */
void cg_lane_emit(const CgLane *L, const char *ind, StrBuf *out);
void cg_lane_free(CgLane *L);

#endif
