/* codegen_mem.h — the C module's memory plan (core/codegen/codegen_mem.c): which storage each
 * intermediate buffer of a schedule gets, and where that storage lies in the module's arena.
 * Used by core/codegen/codegen_c.c (call()) and core/codegen/codegen_kernel.c (in-place
 * kernel arguments). */
#ifndef CODEGEN_MEM_H
#define CODEGEN_MEM_H

#include "scheduler/scheduler.h"

typedef struct CgMemPlan {
    int nbufs;
    int *slot;          /* per buffer id: its storage slot, -1 when call() does not allocate it */
    int *inplace_of;    /* per buffer id: the buffer whose storage it takes inside the same cpp
                           kernel (Inductor's in_out_ptr), else -1 */
    int *reuse_of;      /* per buffer id: the dead buffer whose storage it reuses (ReuseLine), else -1 */
    int nslots;
    Expr **size;        /* per slot: bytes (storage size x element size, + 1 so 0 is no size) */
    int *first, *last;  /* per slot: the kernels it is live over */
    int64_t *offset;    /* per slot: byte offset in the arena when `packed`, else unused */
    bool packed;        /* every size is an integer: offsets packed at compile time by lifetime */
    int64_t total;      /* packed: the arena's bytes */
} CgMemPlan;

/* Plan the intermediates of s: Inductor's wrapper rules (a buffer takes the storage of a dead
 * one of the same dtype and size, or an input it overwrites element for element in place),
 * then the slots laid in one block. cg_mem_plan_free frees it. */
CgMemPlan *cg_mem_plan(const Schedule *s);
void cg_mem_plan_free(CgMemPlan *p);
/* Is buffer id b passed to kernel k under the name of the buffer it takes in place (its
 * kernel argument is the other one's)? ids: the kernel's buffers (cg_kernel_bufs). */
bool cg_mem_inplace_here(const CgMemPlan *p, int b, const int *ids, int nids);
/* The arena statics and helpers every module with intermediates gets (C text). */
extern const char *cg_arena_src;

#endif
