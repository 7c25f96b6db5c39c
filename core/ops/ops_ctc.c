/* ops_ctc.c — _ctc_loss (both overloads: lengths as int lists or as tensors), the forward of
 * the Connectionist Temporal Classification loss as ATen's LossCTC.cpp computes it on the CPU:
 * the alpha recursion of Graves et al. (2006) eq. (6)-(8) in log space, per batch item.
 * Inductor has no lowering for it (ctc_loss decomposes to _ctc_loss, which falls back), so
 * compiled code calls this reference kernel. */
#include "ops/ops_impl.h"

#include <math.h>
#include <string.h>

/* the lengths argument `pos` as values: an int list, or (Tensor overload, eval) a 1-D tensor */
static int ctc_lengths(ShapeArgs *sa, int pos, const char *name, int64_t *v, int64_t batch) {
    ArgRef a = sa_arg(sa, pos, name);
    if (arg_is_tensor(sa, a)) {
        TensorMeta *m;
        if (sa_tensor(sa, a, name, &m)) return -1;
        if (m->ndim != 1 || !ex_eq_int(m->size[0], batch) || !dtype_is_int(m->dtype))
            return sa_err(sa, "%s must be a 1-D integer tensor of %lld lengths", name, (long long)batch);
        if (!sa->eval) return 1;                 /* values known at run time only */
        Tensor *t = ev_tensor(a);
        for (int64_t b = 0; b < batch; b++) v[b] = tensor_get_i(t, b);
        return 0;
    }
    int n;
    if (sa_const_int_list(sa, a, name, v, &n, (int)batch + 1)) return -1;
    if (n != batch) return sa_err(sa, "%s must have %lld entries (the batch size), got %d", name, (long long)batch, n);
    return 0;
}

#define CTC_MAX_BATCH 4096

/* _ctc_loss(log_probs [T, B, C], targets [B, S] or [sum(target_lengths)], input_lengths,
 * target_lengths, blank, zero_infinity) -> (neg_log_likelihood [B], log_alpha [B, T, 2 * max
 * target length + 1]) */
static int shape_ctc(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *lp, *tg;
    int64_t T, B, il[CTC_MAX_BATCH], tl[CTC_MAX_BATCH];
    *nout = 2;
    if (sa_tensor(sa, sa_arg(sa, 0, "log_probs"), "log_probs", &lp) || sa_tensor(sa, sa_arg(sa, 1, "targets"), "targets", &tg)) return -1;
    if (lp->ndim != 3) return sa_err(sa, "log_probs must be 3-D [input length, batch, classes], got %d-D", lp->ndim);
    if (!dtype_is_float(lp->dtype)) return sa_err(sa, "log_probs must be floating point, got %s", dtype_abbrev(lp->dtype));
    if (!dtype_is_int(tg->dtype)) return sa_err(sa, "targets must be an integer tensor, got %s", dtype_abbrev(tg->dtype));
    if (tg->ndim != 1 && tg->ndim != 2) return sa_err(sa, "targets must be 1-D (concatenated) or 2-D [batch, max target length]");
    if (!sym_is_int(lp->size[0], &T) || !sym_is_int(lp->size[1], &B)) return sa_err(sa, "symbolic sizes are not supported");
    if (B > CTC_MAX_BATCH) return sa_err(sa, "batch size %lld is larger than %d", (long long)B, CTC_MAX_BATCH);
    if (tg->ndim == 2 && !ex_eq_int(tg->size[0], B)) return sa_err(sa, "targets has batch size different from log_probs");
    int ri = ctc_lengths(sa, 2, "input_lengths", il, B), rt = ctc_lengths(sa, 3, "target_lengths", tl, B);
    if (ri < 0 || rt < 0) return -1;
    Expr *width = NULL;
    if (rt == 0) {
        int64_t mx = 0, S = 0;
        for (int64_t b = 0; b < B; b++) {
            if (tl[b] < 0) return sa_err(sa, "target_lengths must be non-negative, got %lld", (long long)tl[b]);
            if (tl[b] > mx) mx = tl[b];
        }
        if (tg->ndim == 2 && sym_is_int(tg->size[1], &S) && S < mx)
            return sa_err(sa, "Expected tensor to have size at least %lld at dimension 1, but got size %lld for targets", (long long)mx, (long long)S);
        width = sym_int(sa->sym, 2 * mx + 1);
    } else if (!(width = sa_traced_size(sa, 1, 2))) width = sym_symbol(sa->sym, "u0");
    if (ri == 0)
        for (int64_t b = 0; b < B; b++)
            if (il[b] < 0 || il[b] > T) return sa_err(sa, "Expected input_lengths to have value at most %lld, but got value %lld", (long long)T, (long long)il[b]);
    meta_alloc(sa, &out[0], lp->dtype, 1, lp->device);
    out[0].size[0] = lp->size[1];
    meta_contiguous_strides(sa, &out[0]);
    meta_alloc(sa, &out[1], lp->dtype, 3, lp->device);
    out[1].size[0] = lp->size[1]; out[1].size[1] = lp->size[0]; out[1].size[2] = width;
    meta_contiguous_strides(sa, &out[1]);
    return 0;
}

static double lse3(double a, double b, double c) {
    double m = a > b ? a : b;
    if (c > m) m = c;
    if (m == -INFINITY) m = 0;
    return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

/* the alpha recursion over the extended target l' = (blank, l1, blank, l2, ..., blank):
 * alpha[t][s] = lse(alpha[t-1][s], alpha[t-1][s-1], alpha[t-1][s-2] when l'[s] != l'[s-2])
 * + log_probs[t][l'[s]]; the loss is -lse of the last two alphas at t = input_length - 1.
 * Example: one frame, one class besides blank, target [1]: loss = -log_probs[0][1]. */
static int ctc_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    Tensor *nll = res[0], *la = res[1];
    int64_t il[CTC_MAX_BATCH], tl[CTC_MAX_BATCH];
    Tensor *lp = ev_tensor(sa_arg(sa, 0, "log_probs")), *tg = ev_tensor(sa_arg(sa, 1, "targets"));
    int64_t T = lp->size[0], B = lp->size[1], C = lp->size[2], W = la->size[2], blank = 0;
    ArgRef ab = sa_arg(sa, 4, "blank");
    if ((arg_present(ab) && sa_const_int(sa, ab, "blank", &blank)) ||
        ctc_lengths(sa, 2, "input_lengths", il, B) || ctc_lengths(sa, 3, "target_lengths", tl, B)) return -1;
    if (blank < 0 || blank >= C) { sa_err(sa, "blank must be in label range [0, %lld), got %lld", (long long)C, (long long)blank); return -1; }
    for (int64_t e = 0; e < tensor_numel(la); e++) tensor_set_f(la, e, -INFINITY);
    int64_t off = 0;
    for (int64_t b = 0; b < B; b++) {
        int64_t base = tg->ndim == 2 ? b * tg->size[1] : off, L = tl[b], I = il[b];
        off += L;
        if (2 * L + 1 > W || (tg->ndim == 1 && off > tg->size[0])) { sa_err(sa, "target_lengths exceed the targets"); return -1; }
        #define LP(t, k) tensor_get_f(lp, ((t) * B + b) * C + (k))
        #define AL(t, s) ((b * T + (t)) * W + (s))
        #define PRIME(s) ((s) % 2 == 0 ? blank : tensor_get_i(tg, base + (s) / 2))
        for (int64_t s = 1; s < 2 * L + 1; s += 2)
            if (PRIME(s) < 0 || PRIME(s) >= C) { sa_err(sa, "target %lld is outside the %lld classes", (long long)PRIME(s), (long long)C); return -1; }
        if (I == 0) { tensor_set_f(nll, b, L == 0 ? 0 : INFINITY); continue; }
        tensor_set_f(la, AL(0, 0), LP(0, blank));
        if (L > 0) tensor_set_f(la, AL(0, 1), LP(0, PRIME(1)));
        for (int64_t t = 1; t < I; t++)
            for (int64_t s = 0; s < 2 * L + 1; s++) {
                int64_t cur = PRIME(s);
                double a1 = tensor_get_f(la, AL(t - 1, s));
                double a2 = s > 0 ? tensor_get_f(la, AL(t - 1, s - 1)) : -INFINITY;
                double a3 = s > 1 && PRIME(s - 2) != cur ? tensor_get_f(la, AL(t - 1, s - 2)) : -INFINITY;
                tensor_set_f(la, AL(t, s), lse3(a1, a2, a3) + LP(t, cur));
            }
        double ll = L == 0 ? tensor_get_f(la, AL(I - 1, 0))
                           : lse3(tensor_get_f(la, AL(I - 1, 2 * L)), tensor_get_f(la, AL(I - 1, 2 * L - 1)), -INFINITY);
        tensor_set_f(nll, b, -ll);
        #undef LP
        #undef AL
        #undef PRIME
    }
    return 0;
}
static int ctc_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, ctc_fill); }

const OpDef ops_ctc_table[] = {
    {"aten._ctc_loss.default", OPF_TUPLE, op_infer_generic, ctc_eval, "(CTC negative log likelihood per batch item, log alpha)", shape_ctc, NULL},
    {"aten._ctc_loss.Tensor", OPF_TUPLE, op_infer_generic, ctc_eval, "_ctc_loss with the lengths given as tensors", shape_ctc, NULL},
};
const int ops_ctc_count = sizeof ops_ctc_table / sizeof ops_ctc_table[0];
