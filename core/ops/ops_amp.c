/* ops_amp.c — the two ops of a mixed-precision step's GradScaler (torch/amp/grad_scaler.py), in
 * their functional forms as AOTAutograd leaves them for Inductor, which runs both as
 * FallbackKernels (no lowering, no decomposition):
 *   _amp_foreach_non_finite_check_and_unscale(Tensor[] self, found_inf, inv_scale)
 *       -> (Tensor[] self_out, found_inf_out)   each grad times inv_scale; found_inf set to 1
 *          when any grad holds an inf or a NaN (ATen's AmpKernels: the product is taken always,
 *          also of a non-finite value; inv_scale == 1 leaves the values as they are);
 *   _amp_update_scale(self, growth_tracker, found_inf, growth_factor, backoff_factor,
 *                     growth_interval) -> (scale_out, growth_tracker_out)   ATen's
 *          amp_update_scale kernel: a step with an inf backs the scale off and resets the
 *          tracker; growth_interval clean steps in a row grow it (not past a finite float).
 * The first returns a list inside its tuple: OPF_LIST_FIRST, read by getitem(getitem(op, 0), k)
 * (op_result_item in core/ops/ops_meta.c maps the nesting to the flat results). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>

/* ---- _amp_foreach_non_finite_check_and_unscale ---- */

static int shape_unscale(ShapeArgs *sa, TensorMeta *out, int *nout) {
    ArgRef self = sa_arg(sa, 0, "self");
    int n = arg_list_len(self);
    TensorMeta *found, *inv, *x;
    if (n < 0) return sa_err(sa, "self must be a list of tensors");
    if (n + 1 > OP_MAX_OUTS) return sa_err(sa, "%d tensors is too many (at most %d)", n, OP_MAX_OUTS - 1);
    if (sa_tensor(sa, sa_arg(sa, 1, "found_inf"), "found_inf", &found) || sa_tensor(sa, sa_arg(sa, 2, "inv_scale"), "inv_scale", &inv))
        return -1;
    if (found->ndim > 1 || inv->ndim > 1) return sa_err(sa, "found_inf and inv_scale must be 1-element tensors");
    if (found->dtype != DT_F32 || inv->dtype != DT_F32) return sa_err(sa, "found_inf and inv_scale must be float tensors");
    for (int k = 0; k < n; k++) {
        if (sa_tensor(sa, arg_item(self, k), "self", &x)) return -1;
        if (!dtype_is_float(x->dtype)) return sa_err(sa, "tensor %d of self is %s, not a floating tensor", k, dtype_abbrev(x->dtype));
        meta_like(sa, &out[k], x, x->dtype);
    }
    meta_like(sa, &out[n], found, found->dtype);
    *nout = n + 1;
    return 0;
}

static int unscale_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[OP_MAX_OUTS];
    int n;
    if (ev_shape(sa, m, &n)) return -1;
    ArgRef self = sa_arg(sa, 0, "self");
    Tensor *found = ev_tensor(sa_arg(sa, 1, "found_inf")), *inv = ev_tensor(sa_arg(sa, 2, "inv_scale"));
    double s = tensor_get_f(inv, 0), f = tensor_get_f(found, 0);
    IValue *grads = mi_xcalloc((size_t)n, sizeof *grads);
    for (int k = 0; k + 1 < n; k++) {
        Tensor *x = ev_tensor(arg_item(self, k)), *o = ev_new(sa, &m[k]);
        if (!o) { for (int j = 0; j < k; j++) ivalue_clear(&grads[j]); free(grads); return -1; }
        for (int64_t e = 0; e < tensor_numel(x); e++) {
            double v = tensor_get_f(x, e);
            if (!isfinite(v)) f = 1;
            tensor_set_f(o, e, s == 1 ? v : v * s);
        }
        ev_out_tensor(&grads[k], o);
    }
    Tensor *fo = ev_new(sa, &m[n - 1]);
    if (!fo) { for (int j = 0; j + 1 < n; j++) ivalue_clear(&grads[j]); free(grads); return -1; }
    for (int64_t e = 0; e < tensor_numel(fo); e++) tensor_set_f(fo, e, f);
    out->kind = IV_TUPLE;
    out->n = 2;
    out->items = mi_xcalloc(2, sizeof(IValue));
    out->items[0].kind = IV_TUPLE;   /* self_out: the list */
    out->items[0].n = n - 1;
    out->items[0].items = grads;
    ev_out_tensor(&out->items[1], fo);
    return 0;
}
static int unscale_eval(const OpCall *c, IValue *out) { return ev_call(c, out, unscale_body); }

/* ---- _amp_update_scale ---- */

static int shape_update_scale(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *scale, *tracker, *found;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &scale) || sa_tensor(sa, sa_arg(sa, 1, "growth_tracker"), "growth_tracker", &tracker) ||
        sa_tensor(sa, sa_arg(sa, 2, "found_inf"), "found_inf", &found))
        return -1;
    if (scale->dtype != DT_F32) return sa_err(sa, "current_scale must be a float tensor");
    if (tracker->dtype != DT_I32) return sa_err(sa, "growth_tracker must be an int tensor");
    meta_like(sa, &out[0], scale, scale->dtype);
    meta_like(sa, &out[1], tracker, tracker->dtype);
    *nout = 2;
    return 0;
}

static int update_scale_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    Tensor *scale = ev_tensor(sa_arg(sa, 0, "self")), *tracker = ev_tensor(sa_arg(sa, 1, "growth_tracker"));
    Tensor *found = ev_tensor(sa_arg(sa, 2, "found_inf"));
    double growth, backoff, interval;
    DType t;
    if (n != 2 || sa_scalar(sa, sa_arg(sa, 3, "scale_growth_factor"), "scale_growth_factor", &growth, &t) ||
        sa_scalar(sa, sa_arg(sa, 4, "scale_backoff_factor"), "scale_backoff_factor", &backoff, &t) ||
        sa_scalar(sa, sa_arg(sa, 5, "growth_interval"), "growth_interval", &interval, &t))
        return -1;
    float cur = (float)tensor_get_f(scale, 0);
    int64_t steps = tensor_get_i(tracker, 0);
    if (tensor_get_f(found, 0) != 0) {
        cur = cur * (float)backoff;
        steps = 0;
    } else if (steps + 1 == (int64_t)interval) {
        float grown = cur * (float)growth;
        if (isfinite(grown)) cur = grown;
        steps = 0;
    } else {
        steps = steps + 1;
    }
    tensor_set_f(res[0], 0, cur);
    tensor_set_f(res[1], 0, (double)steps);
    return 0;
}
static int update_scale_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, update_scale_fill); }

const OpDef ops_amp_table[] = {
    {"aten._amp_foreach_non_finite_check_and_unscale.default", OPF_TUPLE | OPF_LIST_FIRST, op_infer_generic, unscale_eval,
     "(grads * inv_scale, found_inf set to 1 if any grad is inf/nan)", shape_unscale, NULL},
    {"aten._amp_update_scale.default", OPF_TUPLE, op_infer_generic, update_scale_eval,
     "(scale backed off after an inf, grown after growth_interval clean steps; the step count)", shape_update_scale, NULL},
};
const int ops_amp_count = sizeof ops_amp_table / sizeof ops_amp_table[0];
