/* same.h — deciding whether a computed tensor agrees with a reference, the way PyTorch's own
 * accuracy checker torch._dynamo.utils.same(ref, res, fp64_ref) decides it, plus the
 * statistical check for values drawn by random ops. Every numerics verdict of the product
 * (check, exec, the per-pass numerics, rt_check) comes from here (through core/ops/numerics.c,
 * which adds the float64 interpreter run and the report lines).
 *
 * The rule (same() in torch/_dynamo/utils.py):
 *   1. dtypes must be equal; bool and integer results must be equal element for element;
 *   2. allclose(ref, res, rtol, atol) with NaN == NaN passes;
 *   3. otherwise, given the reference computed in float64 (fp64): pass when
 *        RMSE(fp64, res) <= multiplier * RMSE(fp64, ref) + tol / 10
 *      multiplier 2 (3 for f16/bf16 results, and for results under 1 000 elements or of shape
 *      [.., .., 1, 1]), tol = max(rtol, atol). A result no further from the exact answer than
 *      about twice the reference's own rounding error is rounding, not a wrong kernel;
 *   4. same()'s NaN corner: the reference has NaNs, the result and fp64 have none and agree
 *      within 4e-2: the result is better than the reference, pass. */
#ifndef SAME_H
#define SAME_H

#include "base/tensor.h"

typedef enum { SAME_EXACT = 1, SAME_CLOSE, SAME_RMSE, SAME_NAN_CORNER } SameHow;

typedef struct SameResult {
    bool ok;
    bool shape_ok, dtype_ok;
    SameHow how;             /* the test that decided (ints/bools: SAME_EXACT) */
    CompareResult close;     /* the allclose step (ints: exact; mismatches = differing elements) */
    bool want_fp64;          /* allclose failed on a float/complex result and fp64 was NULL */
    bool used_fp64;          /* step 3 ran */
    double res_rmse, ref_rmse, multiplier, slack;
} SameResult;

/* Compare res against ref; fp64 (may be NULL) is the reference computed in float64, same
 * shape. Example: ref f32 {1, 2}, res f32 {1, 2.0001}, rtol = atol = 1e-4: ok by allclose. */
SameResult tensor_same(const Tensor *ref, const Tensor *res, const Tensor *fp64, double rtol, double atol);

/* What can be checked when both tensors come from random draws that cannot agree value by
 * value (our generator is not PyTorch's): shape and dtype; the rate of true (bool) or nonzero
 * (numeric) elements, two-sample within 5 standard deviations; the value range, each bound
 * within a quarter of the reference's span; no NaN/inf where the reference has none; and the
 * value distribution, two-sample Kolmogorov-Smirnov distance under its 0.1% critical value
 * 1.95 * sqrt((n + m) / (n m)). */
typedef struct RandomResult {
    bool ok, shape_ok, dtype_ok;
    bool numeric;                 /* not bool: range and distribution were checked */
    double rate_ref, rate_res, rate_tol; bool rate_ok;
    double lo_ref, hi_ref, lo_res, hi_res; bool range_ok;
    int64_t nonfinite_ref, nonfinite_res; bool finite_ok;
    double ks, ks_limit; bool ks_ok;
} RandomResult;
RandomResult tensor_random_compare(const Tensor *ref, const Tensor *res);

/* RMSE between two same-shaped tensors (complex: of |a - b|); NaN when any term is NaN/inf. */
double tensor_rmse(const Tensor *a, const Tensor *b);

#endif
