/* numerics.c — one verdict per computed value against its reference (torch._dynamo.utils.same
 * with a lazily made float64 run; random values compared statistically) and the report line
 * saying why; see numerics.h. Used by the shell's check and exec, the pass manager's numerics
 * after each pass and the runtime's rt_check. */
#include "ops/numerics.h"
#include "base/same.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct NumRef {
    MiCtx *ctx;
    const Graph *g;
    IValue *inputs; int ninputs;      /* borrowed references until the run */
    bool tried;
    IValue *outs; int nouts;
    IValue *ins_after;
    char *why;                        /* why there is no float64 run */
};

NumRef *numref_new(MiCtx *ctx, const Graph *g, const IValue *inputs, int ninputs) {
    NumRef *r = mi_xcalloc(1, sizeof *r);
    r->ctx = ctx;
    r->g = g;
    r->inputs = mi_xcalloc((size_t)(ninputs ? ninputs : 1), sizeof *r->inputs);
    r->ninputs = ninputs;
    for (int i = 0; i < ninputs; i++) {
        r->inputs[i] = inputs[i];
        if (inputs[i].kind == IV_TENSOR) tensor_ref(inputs[i].t);
        else if (inputs[i].kind == IV_TUPLE) r->inputs[i].kind = IV_NONE;
    }
    return r;
}

void numref_free(NumRef *r) {
    if (!r) return;
    interp_free_outputs(r->inputs, r->ninputs);
    interp_free_outputs(r->outs, r->nouts);
    interp_free_outputs(r->ins_after, r->ninputs);
    free(r->why);
    free(r);
}

/* The float64 value `which`/`index`, running the graph the first time; NULL (and r->why) when
 * the run failed or the value is not a tensor. The ctx error of a failed run is not kept: the
 * comparison goes on without it. */
static const Tensor *numref_get(NumRef *r, int which, int index) {
    if (!r) return NULL;
    if (!r->tried) {
        r->tried = true;
        MiError saved = r->ctx->err;
        if (interp_run_fp64(r->ctx, r->g, r->inputs, r->ninputs, &r->outs, &r->nouts, &r->ins_after) < 0) {
            char buf[1200];
            r->why = mi_xstrdup(mi_err_str(r->ctx, buf, sizeof buf));
            r->outs = r->ins_after = NULL;
            r->nouts = 0;
        }
        r->ctx->err = saved;
    }
    const IValue *v = which == NUM_OUT ? (index < r->nouts ? &r->outs[index] : NULL)
                      : which == NUM_IN_AFTER && r->ins_after && index < r->ninputs ? &r->ins_after[index] : NULL;
    return v && v->kind == IV_TENSOR ? v->t : NULL;
}

static void line(NumCheck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(NumCheck *c, const char *fmt, ...) {
    if (!c->report) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sb_put(c->report, buf);
}

static void elem_str(const Tensor *t, int64_t k, char *buf, size_t n) {
    if (dtype_is_int(t->dtype) || t->dtype == DT_BOOL) snprintf(buf, n, "%lld", (long long)tensor_get_i(t, k));
    else if (dtype_is_complex(t->dtype)) {
        double re, im;
        tensor_load_c(t, tensor_pos(t, k), &re, &im);
        snprintf(buf, n, "%.9g%+.9gj", re, im);
    } else snprintf(buf, n, "%.9g", tensor_get_f(t, k));
}

static bool check_random(NumCheck *c, const char *label, const char *ty, const Tensor *ref, const Tensor *res) {
    RandomResult r = tensor_random_compare(ref, res);
    char got[128];
    const char *why = c->random_why ? c->random_why : "not comparable with PyTorch's RNG";
    if (!r.shape_ok || !r.dtype_ok) {
        line(c, "%s: %s random (values %s): %s MISMATCH, got %s\n", label, ty, why, r.shape_ok ? "DTYPE" : "SHAPE",
             tensor_type_str(res, got, sizeof got));
        return false;
    }
    if (tensor_numel(ref) <= 1) {    /* one draw (or a generator's seed/offset): nothing to measure */
        line(c, "%s: %s random (values %s): a single value; shape and dtype agree: ok\n", label, ty, why);
        return true;
    }
    line(c, "%s: %s random (values %s): %s %.1f%% vs %.1f%% (tolerance %.1f%%)", label, ty, why,
         r.numeric ? "nonzero" : "true", 100 * r.rate_ref, 100 * r.rate_res, 100 * r.rate_tol);
    if (r.numeric) {
        line(c, ", range [%.4g, %.4g] vs [%.4g, %.4g]", r.lo_ref, r.hi_ref, r.lo_res, r.hi_res);
        if (r.ks_limit > 0) line(c, ", distribution distance %.3g (limit %.3g)", r.ks, r.ks_limit);
        if (!r.finite_ok) line(c, ", %lld NaN/inf where the reference has none", (long long)r.nonfinite_res);
    }
    line(c, ": %s\n", r.ok ? "ok" : !r.rate_ok ? "MISMATCH (rate)" : !r.range_ok ? "MISMATCH (range)"
                                   : !r.finite_ok ? "MISMATCH (NaN/inf)" : "MISMATCH (distribution)");
    return r.ok;
}

/* Root mean square of t (complex: of |t|). */
static double rms(const Tensor *t) {
    int64_t n = tensor_numel(t);
    double sum = 0;
    for (int64_t k = 0; k < n; k++) {
        double re, im;
        tensor_get_c(t, k, &re, &im);
        sum += re * re + im * im;
    }
    return n ? sqrt(sum / (double)n) : 0;
}

static bool check_tensor(NumCheck *c, const char *label, const Tensor *ref, const Tensor *res, int which, int index,
                         bool random) {
    char ty[160], got[160];
    tensor_type_str(ref, ty, sizeof ty);
    SameResult s = tensor_same(ref, res, NULL, c->rtol, c->atol);
    double plausible = -1;   /* >= 0: the reference's RMSE the float64 run could vouch for */
    if (s.want_fp64 && !random) {
        const Tensor *f = numref_get(c->fp64, which, index);
        if (f) s = tensor_same(ref, res, f, c->rtol, c->atol);
        if (f && s.ok && s.how == SAME_RMSE && c->fp64_of_result) {
            plausible = ldexp(rms(f), ref->dtype == DT_BF16 ? -6 : -8) + s.slack;   /* see numerics.h */
            if (!(s.ref_rmse <= plausible)) s.ok = false;
        }
    }
    if (!s.ok && random) return check_random(c, label, ty, ref, res);
    if (!s.shape_ok || !s.dtype_ok) {
        line(c, "%s: %s %s MISMATCH, got %s\n", label, ty, s.shape_ok ? "DTYPE" : "SHAPE", tensor_type_str(res, got, sizeof got));
        return false;
    }
    if (s.close.max_abs > c->worst_abs) c->worst_abs = s.close.max_abs;
    if (s.how == SAME_EXACT) {
        line(c, "%s: %s %s", label, ty, s.ok ? "ok (exact)" : "MISMATCH");
    } else {
        line(c, "%s: %s %s max abs err %.3g max rel err %.3g", label, ty, s.ok ? "ok" : "MISMATCH", s.close.max_abs,
             s.close.max_rel);
        if (s.how == SAME_NAN_CORNER)
            line(c, " (the reference has NaNs; this result and the float64 run agree without any)");
        else if (plausible >= 0 && !s.ok)
            line(c, " (the reference is %.3g RMSE from our float64 run, more than float rounding explains (%.3g); that run "
                    "is this result's own implementation, so it cannot vouch for it)", s.ref_rmse, plausible);
        else if (s.used_fp64)
            line(c, " (%s: RMSE vs float64 %.3g %s %g x %.3g of the reference + %.0e)", s.ok ? "float rounding" : "beyond rounding",
                 s.res_rmse, s.ok ? "<=" : ">", s.multiplier, s.ref_rmse, s.slack);
        else if (!s.ok && c->fp64)
            line(c, " (no float64 reference: %s)", c->fp64->why ? c->fp64->why : "not a float result");
    }
    line(c, "\n");
    if (!s.ok && s.close.worst_index >= 0) {
        char a[64], b[64];
        elem_str(res, s.close.worst_index, a, sizeof a);
        elem_str(ref, s.close.worst_index, b, sizeof b);
        line(c, "  %lld of %lld elements differ, %s at index %lld: got %s, want %s\n", (long long)s.close.mismatches,
             (long long)tensor_numel(ref), s.how == SAME_EXACT ? "first" : "worst", (long long)s.close.worst_index, a, b);
    }
    return s.ok;
}

static const char *kind_name(IValueKind k) {
    static const char *names[] = {"None", "tensor", "int", "float", "bool", "tuple", "other"};
    return k >= 0 && k <= IV_OTHER ? names[k] : "?";
}

bool num_check_value(NumCheck *c, const char *label, const IValue *ref, const IValue *res, int which, int index,
                     bool random) {
    bool ok;
    c->compared++;
    if (ref->kind == IV_TENSOR && res->kind == IV_TENSOR) {
        ok = check_tensor(c, label, ref->t, res->t, which, index, random);
    } else if (ref->kind != res->kind) {
        line(c, "%s: MISMATCH (a %s, expected a %s)\n", label, kind_name(res->kind), kind_name(ref->kind));
        ok = false;
    } else if (ref->kind == IV_TUPLE) {
        ok = ref->n == res->n;
        if (!ok) line(c, "%s: MISMATCH (a tuple of %d, expected %d)\n", label, res->n, ref->n);
        for (int i = 0; ok && i < ref->n; i++) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%d]", label, i);
            ok = num_check_value(c, sub, &ref->items[i], &res->items[i], -1, 0, random);
        }
    } else {
        ok = ref->kind != IV_INT && ref->kind != IV_BOOL ? (ref->kind != IV_FLOAT || ref->f == res->f ||
                                                           (isnan(ref->f) && isnan(res->f)))
                                                         : ref->i == res->i;
        if (ok) line(c, "%s: ok (%s)\n", label, kind_name(ref->kind));
        else if (ref->kind == IV_FLOAT) line(c, "%s: MISMATCH (%.9g, expected %.9g)\n", label, res->f, ref->f);
        else line(c, "%s: MISMATCH (%lld, expected %lld)\n", label, (long long)res->i, (long long)ref->i);
    }
    if (!ok) c->bad++;
    return ok;
}

bool num_check_outputs(NumCheck *c, const IValue *ref, const IValue *res, int n, const bool *random) {
    bool all = true;
    for (int i = 0; i < n; i++) {
        char label[32];
        snprintf(label, sizeof label, "output %d", i);
        all &= num_check_value(c, label, &ref[i], &res[i], NUM_OUT, i, random[i]);
    }
    return all;
}

/* ---- which values depend on random ops ---- */

static bool graph_has_random(const Graph *g) {
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        const OpDef *op = n->op ? n->op : (n->kind == N_CALL_FUNCTION && n->target ? op_lookup(n->target) : NULL);
        if (op && (op->flags & OPF_RANDOM)) return true;
    }
    for (int k = 0; k < g->nsubs; k++)
        if (graph_has_random(g->subs[k].g)) return true;
    return false;
}

typedef struct Taint { const bool *t; bool any; bool skip_rng; } Taint;
static bool rng_state_item(const Node *n);
static void taint_arg(Node *n, void *ud) {
    Taint *t = ud;
    if (t->skip_rng && rng_state_item(n)) return;
    if (n->id >= 0 && t->t[n->id]) t->any = true;
}

static const Graph *sub_named(const Graph *g, const char *name) {
    for (int k = 0; name && k < g->nsubs; k++)
        if (g->subs[k].name && !strcmp(g->subs[k].name, name)) return g->subs[k].g;
    return NULL;
}

/* The placeholder a (chain of views of a) node starts from, or NULL. */
static const Node *view_root(const Node *n) {
    for (int hops = 0; n && hops < 64; hops++) {
        if (n->kind == N_PLACEHOLDER) return n;
        const OpDef *op = n->op;
        if (!op || !(op->flags & (OPF_VIEW | OPF_INPLACE)) || n->nargs < 1 || n->args[0].kind != V_NODE) return NULL;
        n = n->args[0].node;
    }
    return NULL;
}

/* getitem(x, i) of an attention op's RNG state: the efficient attention returns (out,
 * logsumexp, philox_seed, philox_offset), the CUDA flash and cuDNN ones the state as items 6
 * and 7; they are the generator's state when the call ran (items 4 and 5 are ints). */
static bool rng_state_item(const Node *n) {
    if (n->kind != N_CALL_FUNCTION || !n->target || strcmp(n->target, "operator.getitem") || n->nargs < 2 ||
        n->args[0].kind != V_NODE || n->args[1].kind != V_INT || n->args[1].i < 2 ||
        (n->args[1].i < 6 && !strstr(n->args[0].node->target ? n->args[0].node->target : "", "efficient")))
        return false;
    const Node *src = n->args[0].node;
    return src->target && (strstr(src->target, "_scaled_dot_product_efficient_attention.") ||
                           strstr(src->target, "_scaled_dot_product_flash_attention.") ||
                           strstr(src->target, "_scaled_dot_product_cudnn_attention."));
}

void num_random_outputs(const Graph *g, bool *outs, int nouts, bool *ins, int nins) {
    for (int k = 0; k < nouts; k++) outs[k] = false;
    for (int k = 0; ins && k < nins; k++) ins[k] = false;
    bool *t = mi_xcalloc((size_t)(g->n ? g->n : 1), sizeof *t);
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        const OpDef *op = n->op ? n->op : (n->kind == N_CALL_FUNCTION && n->target ? op_lookup(n->target) : NULL);
        if (n->kind == N_GET_ATTR) {
            const Graph *sg = sub_named(g, n->target);
            t[i] = sg && graph_has_random(sg);
            continue;
        }
        /* an attention backward without dropout reads the RNG state it is passed but its
         * gradients do not depend on it */
        double dp = 1;
        const Value *dv = NULL;
        if (n->target && strstr(n->target, "_attention_backward.")) {
            static const struct { const char *op; int pos; } dropout_at[] = {
                {"_scaled_dot_product_efficient_attention_backward.", 9}, {"_scaled_dot_product_flash_attention_backward.", 10},
                {"_scaled_dot_product_cudnn_attention_backward.", 13}};
            for (size_t k = 0; k < sizeof dropout_at / sizeof dropout_at[0]; k++)
                if (strstr(n->target, dropout_at[k].op) && dropout_at[k].pos < n->nargs) dv = &n->args[dropout_at[k].pos];
        }
        if (dv && !value_as_double(dv, &dp)) dp = 1;
        /* an attention forward that drops probabilities draws a random mask */
        static const struct { const char *op; int pos; } fwd_dropout_at[] = {
            {"_scaled_dot_product_efficient_attention.", 5}, {"_scaled_dot_product_flash_attention.", 3},
            {"_scaled_dot_product_cudnn_attention.", 5}, {"_scaled_dot_product_flash_attention_for_cpu.", 3}};
        bool drops = false;
        for (size_t k = 0; n->target && k < sizeof fwd_dropout_at / sizeof fwd_dropout_at[0]; k++) {
            double fp;
            if (strstr(n->target, fwd_dropout_at[k].op) && fwd_dropout_at[k].pos < n->nargs &&
                value_as_double(&n->args[fwd_dropout_at[k].pos], &fp) && fp != 0)
                drops = true;
        }
        Taint tt = {t, (op && (op->flags & OPF_RANDOM)) || rng_state_item(n) || drops, dv && dp == 0};
        for (int a = 0; a < n->nargs; a++) value_for_each_node(&n->args[a], taint_arg, &tt);
        for (int a = 0; a < n->nkwargs; a++) value_for_each_node(&n->kwargs[a].v, taint_arg, &tt);
        t[i] = tt.any;
        if (n->kind == N_OUTPUT && n->nargs) {
            int cnt;
            const Value *leaves = graph_output_flat(g, &cnt);
            for (int k = 0; k < cnt && k < nouts; k++) {
                Taint one = {t, false};
                value_for_each_node(&leaves[k], taint_arg, &one);
                outs[k] = one.any;
            }
        }
        /* an in-place op writing a random value into (a view of) an input */
        if (ins && tt.any && op && (op->flags & OPF_INPLACE) && n->nargs && n->args[0].kind == V_NODE) {
            const Node *ph = view_root(n->args[0].node);
            for (int k = 0; ph && k < nins; k++)
                if (graph_placeholder(g, k) == ph) ins[k] = true;
        }
    }
    free(t);
}

Tensor *num_recorded_as(MiCtx *ctx, Tensor *t, DType dt) {
    if (t->dtype == dt || dtype_npy_descr(dt) || !dtype_is_float(dt) || !dtype_is_float(t->dtype)) return tensor_ref(t);
    return tensor_to_dtype(ctx, t, dt);
}
