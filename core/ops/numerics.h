/* numerics.h — the numerics verdict of check, exec, the per-pass numerics and rt_check: compare
 * what a graph (or its compiled code) computed with a reference, one value at a time, with
 * torch._dynamo.utils.same's rule (core/base/same.h). Where an allclose fails it runs the
 * reference interpreter once in float64 (interp_run_fp64) and decides by RMSE against that, so
 * float32 rounding in a deep graph passes while a wrong kernel fails. Values that depend on a
 * random op are compared statistically (rate, range, distribution), since no generator here
 * reproduces PyTorch's, and the report says so. Each comparison appends a line to a report:
 *
 *   output 0: f32[2, 64, 128] ok max abs err 4.77e-07 max rel err 0.000176
 *   output 1: f32[8, 8] ok max abs err 0.0003 max rel err 0.02 (float rounding: RMSE vs
 *     float64 1.2e-07 <= 2 x 1.1e-07 of the reference + 1e-05)
 *   output 2: b8[32, 64] random (values not comparable with PyTorch's RNG): true 90.1% vs
 *     89.6% (tolerance 4.7%): ok
 */
#ifndef NUMERICS_H
#define NUMERICS_H

#include "ops/interp.h"

/* The float64 run of a graph on given inputs, made the first time a comparison needs it. */
typedef struct NumRef NumRef;
NumRef *numref_new(MiCtx *ctx, const Graph *g, const IValue *inputs, int ninputs);
void numref_free(NumRef *r);

enum { NUM_OUT, NUM_IN_AFTER };   /* which float64 value a comparison uses */

typedef struct NumCheck {
    MiCtx *ctx;
    double rtol, atol;            /* the allclose step; same()'s tol is max(rtol, atol) */
    NumRef *fp64;                 /* NULL: allclose only */
    const char *random_why;       /* "not comparable with PyTorch's RNG" (default) */
    bool fp64_of_result;          /* the float64 run is the result's own implementation (our
                                     interpreter checked against PyTorch's recorded values): an op
                                     our interpreter gets wrong is wrong in both, so the RMSE rule
                                     may then only pass a reference that is itself within a few
                                     roundings of the coarsest precision PyTorch computes in (TF32
                                     cuDNN convolutions, f16: 2^-8 relative RMSE; bf16 2^-6) of the
                                     float64 run; a wrong formula is off by far more */
    StrBuf *report;               /* lines go here; NULL: none */
    int compared, bad;            /* counts so far */
    double worst_abs;             /* largest max abs err of the tensors compared */
} NumCheck;

/* Compare res against ref (the expected value) and append a line "LABEL: ...". which/index
 * pick the float64 value (output index or input-after index). random: the value depends on a
 * random op. Returns true when they agree. Example: num_check_value(&c, "output 0", &ro[0],
 * &co[0], NUM_OUT, 0, false). */
bool num_check_value(NumCheck *c, const char *label, const IValue *ref, const IValue *res, int which, int index,
                     bool random);
/* num_check_value on each of n outputs, labelled "output K" (random[k]: output k depends on a
 * random op). The trick: every output is compared (no stop at the first bad one), so the report
 * lists them all. Returns true when all agree. Example: num_check_outputs(&c, ro, co, nr, rnd). */
bool num_check_outputs(NumCheck *c, const IValue *ref, const IValue *res, int n, const bool *random);

/* Which results of g depend on a random op (rand, dropout, inductor_random, ...): outs[k] for
 * output k (nouts entries), ins[i] for placeholder i mutated in place by such a value (nins
 * entries; may be NULL). */
void num_random_outputs(const Graph *g, bool *outs, int nouts, bool *ins, int nins);

/* A recorded array as a reference for a result of dtype dt: .npy has no bf16/float8, so PyTorch's
 * bf16 outputs are recorded as f32 and read back here rounded to dt (exact for values that were
 * bf16). Returns a new reference (t itself when nothing changes). */
Tensor *num_recorded_as(MiCtx *ctx, Tensor *t, DType dt);

#endif
