/* sched_memory.h — Inductor's reorder_for_peak_memory over the fused kernels (sched_memory.c). */
#ifndef SCHED_MEMORY_H
#define SCHED_MEMORY_H

#include "scheduler/scheduler.h"

/* The scheduling units (a group, or a foreach node's groups) are s->order[ustart[u] ..
 * ustart[u + 1]) for u < nu, in the baseline order; ss/su their successor edges (CSR over unit
 * indices, every dependency). Returns the order with the lowest peak-memory estimate as a
 * malloc'd permutation of unit indices, or NULL when the baseline is as good (or sizes are
 * symbolic); `note` says which method won and the two peaks ("" when NULL). */
int *sched_peak_memory_order(const Schedule *s, int nu, const int *ustart, const int *ss, const int *su,
                             char *note, size_t notelen);

#endif
