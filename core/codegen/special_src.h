/* special_src.h — the special functions' C source for generated modules (special_src.c). */
#ifndef SPECIAL_SRC_H
#define SPECIAL_SRC_H

#include "ir/ir.h"

/* Append the functions module m's kernels call (mi_sf_erfinv, mi_sf_i0, ...; nothing when none). */
void cg_special_src(StrBuf *out, const IrModule *m);
/* Append all of them (tests compile them on their own). */
void cg_special_src_all(StrBuf *out);

#endif
