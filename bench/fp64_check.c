/* fp64_check.c — figure 1's numerical check: is the compiled module's output the reference
 * interpreter's up to float32 rounding, or an error? PyTorch's own accuracy rule decides,
 * torch._dynamo.utils.same(ref, res, fp64_ref) (what the Inductor benchmark harness and the
 * minifier's same_two_models use; core/base/same.h): allclose(rtol, atol) first; when it
 * fails, the graph runs again in float64 (interp_run_fp64) and the result passes when its RMSE
 * against that is at most 2x (float32's multiplier) the float32 interpreter's + tol / 10.
 * Rounding in a long reduction (a matmul over 512, a layer norm over 128) grows both errors
 * alike; a wrong kernel is far beyond 2x the interpreter's own rounding. */
#include "bench.h"
#include "base/same.h"
#include "ops/interp.h"

#include <math.h>
#include <string.h>

int bench_same(MiCtx *ctx, const Graph *g, const IValue *in, int nin, IValue *ref, IValue *res, int nout,
               double rtol, double atol, BenchSame *v) {
    memset(v, 0, sizeof *v);
    v->ok = true;
    IValue *o64 = NULL;
    int n64 = 0;
    bool tried64 = false;
    for (int j = 0; j < nout; j++) {
        if (res[j].kind != IV_TENSOR || ref[j].kind != IV_TENSOR) continue;
        SameResult r = tensor_same(ref[j].t, res[j].t, NULL, rtol, atol);
        if (r.want_fp64 && !tried64) {   /* allclose failed: the float64 reference, once */
            tried64 = true;
            if (interp_run_fp64(ctx, g, in, nin, &o64, &n64, NULL) != 0) { mi_clear_err(ctx); o64 = NULL; n64 = 0; }
        }
        if (r.want_fp64 && j < n64 && o64[j].kind == IV_TENSOR) r = tensor_same(ref[j].t, res[j].t, o64[j].t, rtol, atol);
        if (r.close.max_abs > v->max_abs) v->max_abs = r.close.max_abs;
        if (r.used_fp64) {
            v->fp64 = true;
            if (r.res_rmse > v->res_rmse) v->res_rmse = r.res_rmse;
            if (r.ref_rmse > v->ref_rmse) v->ref_rmse = r.ref_rmse;
        }
        v->ok &= r.ok;
    }
    if (o64) interp_free_outputs(o64, n64);
    return 0;
}
