/* codegen_unbacked.h — unbacked SymInts in the generated call() (core/codegen/codegen_unbacked.c):
 * their definitions after the buffer that holds them, the storage of buffers whose size they
 * give (allocated once known, freed at the end of the call), the C helpers for both. Used by
 * core/codegen/codegen_c.c. */
#ifndef CODEGEN_UNBACKED_H
#define CODEGEN_UNBACKED_H

#include "codegen/codegen_mem.h"
#include "base/mi.h"

/* mi_ub_alloc / mi_ub_free (C text), for a module with unbacked symbols. */
extern const char cg_unbacked_src[];
/* Per buffer id, the mi_ub slot of an intermediate allocated once its unbacked size is known
 * (-1: none; malloc'd, *n the count). */
int *cg_unbacked_slots(const Schedule *s, const CgMemPlan *mem, int *n);
/* Position of name in m's syms (-1: none). */
int cg_sym_index(const IrModule *m, const char *name);
/* `u1 = (int64_t)(buf[off]); syms[k] = u1;` for each item() defined by buffer b. */
void cg_unbacked_item_defs(const IrModule *m, const Buffer *b, StrBuf *out);
/* After FallbackKernel b's call: its data-dependent results' storage (fo[k].data, kept in
 * mi_ub) and the symbols their sizes define (`u0 = fo[k].size[0]`). */
void cg_unbacked_fresh_results(const IrModule *m, const Buffer *b, const int *ub_of, StrBuf *out);

#endif
