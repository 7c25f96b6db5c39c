/* codegen_hoist.h — values of a loop nest that depend only on its innermost loop var (a small
 * constant extent), computed once per nest into a stack array (see codegen_hoist.c). */
#ifndef MI_CODEGEN_HOIST_H
#define MI_CODEGEN_HOIST_H

#include "base/mi.h"

/* What a value of the segment depends on: */
enum { CG_LANE_OTHER = 0,   /* an outer loop var, a reduction, a store: not hoistable */
       CG_LANE_NONE = 1,    /* no loop var (a constant, a load at a fixed index) */
       CG_LANE_VAR = 2 };   /* the innermost loop var only */

typedef struct CgLane {
    const char *var;   /* the innermost loop var */
    int64_t n;         /* its extent */
    int cap;           /* per value (IrVal index): */
    char **stmt;       /*   its C statement ("float tmp6 = sqrtf(tmp5);"), NULL unless kind > 0 */
    int (*deps)[3];    /*   the values it reads, -1 for none */
    signed char *kind; /*   CG_LANE_* */
    int *arrays, *names, narrays;   /* values computed into arrays mi_h<name> (of tmp<name>) */
} CgLane;

/* Record value v: its kind, statement and up to three values it reads (-1: none). */
void cg_lane_set(CgLane *L, int v, int kind, const char *stmt, const int *deps, int ndeps);
/* The kind recorded for v (CG_LANE_OTHER when none). */
int cg_lane_kind(const CgLane *L, int v);
/* v (of kind CG_LANE_VAR), the C variable tmp<name>, is computed once per nest into
 * mi_h<name>[]; the loop reads it there. */
void cg_lane_array(CgLane *L, int v, int name);
/* Does op cost more than a few cycles per element (a division, sqrt, exp, a transcendental)? */
bool cg_lane_costly(int op);
/* Drop the arrays the loop body does not read (a square root only its reciprocal uses): their
 * `tmpN = mi_hN[var];` line leaves `body`; the value is still computed in the prologue. */
void cg_lane_prune(CgLane *L, StrBuf *body);
/* The prologue: the arrays' declarations and one loop over var computing them (the values
 * they need, in order). Nothing when there are none. */
void cg_lane_emit(const CgLane *L, const char *ind, StrBuf *out);
void cg_lane_free(CgLane *L);

#endif
