/* ops_repeat_interleave.c — repeat_interleave.Tensor(repeats, *, output_size=None): the index
 * array [0] * repeats[0] + [1] * repeats[1] + ..., whose length is data-dependent (sum of
 * repeats). torch.repeat_interleave(x, tensor_repeats, dim) is CompositeImplicit: ATen turns it
 * into this op and an index_select, so graphs of variable-length batching (MoE token routing,
 * ragged sequences) carry it.
 * Inductor decomposes it only when output_size is a python int (decomposition.py
 * repeat_interleave_Tensor):
 *     cumsum = repeats.cumsum(0); pos = arange(output_size)
 *     clamp(searchsorted(cumsum, pos, out_int32=(repeats is int32), right=True), max=n - 1)
 * which traces to cumsum, prims.iota, searchsorted and clamp_max (Inductor's clamp
 * decomposition); otherwise it falls back to ATen (make_fallback), a FallbackKernel whose size
 * is the traced (unbacked) one. Here the reference kernel (sizes computed at run time, the traced
 * size from a node's annotation) and the decomposition decompose_graph applies. Example:
 * repeats [2, 0, 3] -> [0, 0, 2, 2, 2]; with output_size 4 the decomposition gives [0, 0, 2, 2]. */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

static int shape_repeat_interleave(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *r;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "repeats"), "repeats", &r)) return -1;
    if (r->ndim != 1) return sa_err(sa, "repeat_interleave only accept 1D vector as repeat, got %dD", r->ndim);
    if (r->dtype != DT_I64 && r->dtype != DT_I32) return sa_err(sa, "repeats has to be Long or Int tensor, got %s", dtype_abbrev(r->dtype));
    ArgRef os = sa_arg(sa, 1, "output_size");
    Expr *n = NULL;
    if (arg_present(os)) { if (sa_int(sa, os, "output_size", &n)) return -1; }
    else if (sa->eval) {
        Tensor *t = ev_tensor(sa_arg(sa, 0, "repeats"));
        int64_t sum = 0;
        for (int64_t i = 0; i < tensor_numel(t); i++) sum += tensor_get_i(t, i);
        n = sym_int(sa->sym, sum);
    } else if (!(n = sa_traced_size(sa, -1, 0))) n = sym_symbol(sa->sym, "u0");
    meta_alloc(sa, out, r->dtype, 1, r->device);
    out->size[0] = n;
    meta_contiguous_strides(sa, out);
    return 0;
}

static int repeat_interleave_fill(ShapeArgs *sa, Tensor *o) {
    Tensor *r = ev_tensor(sa_arg(sa, 0, "repeats"));
    int64_t at = 0, n = tensor_numel(o);
    for (int64_t i = 0; i < tensor_numel(r); i++) {
        int64_t k = tensor_get_i(r, i);
        if (k < 0) return sa_err(sa, "repeats can not be negative (repeats[%lld] = %lld)", (long long)i, (long long)k);
        for (int64_t j = 0; j < k; j++, at++)
            if (at < n) tensor_set_f(o, at, (double)i);
    }
    if (at != n) return sa_err(sa, "allocated size %lld does not match required size %lld (the sum of repeats)", (long long)n, (long long)at);
    return 0;
}
static int repeat_interleave_eval(const OpCall *c, IValue *out) { return ev_run(c, out, repeat_interleave_fill); }

int decomp_repeat_interleave_tensor(DecompB *b, Value *outs, int *nout) {
    Node *r = db_tensor(b, 0, "repeats");
    const Value *os = db_arg(b, 1, "output_size");
    if (!r || !os || os->kind != V_INT) return DECOMP_SKIP;   /* None or a SymInt: the fallback */
    const TensorMeta *m = db_meta(b, r);
    if (!m) return -1;
    if (m->ndim != 1 || (m->dtype != DT_I64 && m->dtype != DT_I32)) return DECOMP_SKIP;
    Node *cum = db_op(b, "aten.cumsum.default", VN(r), VI(0));
    Value dev = {.kind = V_DEVICE};
    dev.device = m->device;
    Kwarg ik[5] = {{"start", VI(0)}, {"step", VI(1)}, {"dtype", VDT(DT_I64)}, {"device", dev}, {"requires_grad", VB(false)}};
    Node *pos = db_call(b, "prims.iota.default", DBV(VI(os->i)), ik, 5);
    Kwarg sk[2] = {{"out_int32", VB(true)}, {"right", VB(true)}};
    bool i32 = m->dtype == DT_I32;   /* keyword arguments at their default are not recorded */
    Node *ix = db_call(b, "aten.searchsorted.Tensor", DBV(VN(cum), VN(pos)), i32 ? sk : sk + 1, i32 ? 2 : 1);
    Value last = db_expr_val(b, sym_add(b->ctx->sym, db_size(b, r, 0), sym_int(b->ctx->sym, -1)));
    outs[0] = VN(db_op(b, "aten.clamp_max.default", VN(ix), last));
    *nout = 1;
    return b->failed ? -1 : 0;
}

const OpDef ops_repeat_interleave_table[] = {
    {"aten.repeat_interleave.Tensor", 0, op_infer_generic, repeat_interleave_eval,
     "i repeated repeats[i] times, for each i (output_size: the sum, when known)", shape_repeat_interleave, NULL},
};
const int ops_repeat_interleave_count = sizeof ops_repeat_interleave_table / sizeof ops_repeat_interleave_table[0];
