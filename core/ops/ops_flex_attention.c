/* ops_flex_attention.c — torch.ops.higher_order.flex_attention in the op registry: the metas of
 * flex_attention_fake_impl and the values of sdpa_dense / math_attention
 * (torch/_higher_order_ops/flex_attention.py), PyTorch's own reference for the HOP.
 *
 *   flex_attention(q, k, v, score_mod, block_mask, scale, kernel_options,
 *                  score_mod_other_buffers, mask_mod_other_buffers) -> (out, lse, max_scores)
 *
 * score_mod and block_mask[-1] (the mask_mod) are subgraphs of the caller (get_attr nodes:
 * sdpa_score0, sdpa_mask0). The math reference uses only the mask_mod of the block mask (the
 * kv_num_blocks / kv_indices tensors only let the GPU kernel skip blocks the mask_mod empties);
 * scores are q @ k^T * scale in the working precision (f64 for f64 queries, else f32), the
 * score_mod runs on each (score, b, h, q_idx, kv_idx), masked entries become -inf, rows
 * soft-maxed with _safe_softmax (a fully masked row gives zeros), and lse / max_scores are
 * returned divided by ln 2 (the kernel works in base 2). GQA: query heads share key/value head
 * h / (Hq / Hkv); a key/value batch of 1 broadcasts.
 * The subgraphs run once over broadcast index tensors (interp_run_sub_bcast), which is
 * _vmap_for_bhqkv's result for pointwise score / mask mods. Lowered as a FallbackKernel that
 * calls this eval (core/lowering/lowering_extern.c), where Inductor instantiates its Triton /
 * C++ flex_attention template. */
#include "ops/ops_impl.h"
#include "ops/interp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The subgraph a get_attr argument names ("sdpa_score0"); NULL + error otherwise. */
static const Graph *sub_of(ShapeArgs *sa, const Value *v, const char *what) {
    if (!v || v->kind != V_NODE || v->node->kind != N_GET_ATTR) {
        sa_err(sa, "%s must be a get_attr node naming a subgraph", what);
        return NULL;
    }
    const Graph *g = graph_subgraph(sa->graph, v->node->target);
    if (!g) sa_err(sa, "%s: subgraph '%s' not found", what, v->node->target);
    return g;
}

/* _permute_strides(out, query.stride()): out's strides follow the query's fill order (the
 * dims sorted by stride, innermost first, ties in dim order), with the last dim moved innermost
 * when that order would not give it stride 1. Symbolic strides: contiguous. */
static void permuted_strides(ShapeArgs *sa, TensorMeta *m, const TensorMeta *q) {
    int64_t st[4];
    int order[4] = {0, 1, 2, 3};
    for (int d = 0; d < 4; d++)
        if (!sym_is_int(q->stride[d], &st[d])) { meta_contiguous_strides(sa, m); return; }
    for (int i = 1; i < 4; i++)   /* stable insertion sort by stride */
        for (int j = i; j > 0 && st[order[j - 1]] > st[order[j]]; j--) { int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t; }
    if (order[0] != 3) {          /* the last dim first, the others in their order */
        int k = 0, o2[4];
        o2[k++] = 3;
        for (int i = 0; i < 4; i++) if (order[i] != 3) o2[k++] = order[i];
        memcpy(order, o2, sizeof order);
    }
    Expr *cur = sym_int(sa->sym, 1);
    for (int i = 0; i < 4; i++) {
        m->stride[order[i]] = cur;
        cur = sym_mul(sa->sym, cur, m->size[order[i]]);
    }
}

/* flex_attention_fake_impl: out like the query with value's head dim (permuted strides),
 * logsumexp and max_scores f32 [B, Hq, M]. */
static int shape_flex(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *q, *k, *v;
    if (sa_tensor(sa, sa_arg(sa, 0, "query"), "query", &q) || sa_tensor(sa, sa_arg(sa, 1, "key"), "key", &k) ||
        sa_tensor(sa, sa_arg(sa, 2, "value"), "value", &v)) return -1;
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4) return sa_err(sa, "expects 4-D query/key/value [batch, heads, seq, dim]");
    if (*nout < 3) { *nout = 3; return 0; }
    meta_alloc(sa, &out[0], q->dtype, 4, q->device);
    for (int d = 0; d < 3; d++) out[0].size[d] = q->size[d];
    out[0].size[3] = v->size[3];
    permuted_strides(sa, &out[0], q);
    for (int r = 1; r < 3; r++) {
        meta_alloc(sa, &out[r], DT_F32, 3, q->device);
        for (int d = 0; d < 3; d++) out[r].size[d] = q->size[d];
        meta_contiguous_strides(sa, &out[r]);
    }
    *nout = 3;
    return 0;
}

/* Element (b, h, m, n) of t broadcast against [B, H, M, N] (t's dims aligned on the right). */
static double bget(const Tensor *t, const int64_t *idx) {
    int64_t pos = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        int a = 4 - t->ndim + d;
        if (a >= 0 && t->size[d] != 1) pos += idx[a] * t->stride[d];
    }
    return tensor_load_f(t, pos);
}

/* [1.., n, ..1] int32 tensor holding 0..n-1 along dim `at` of 4: b, h, q_idx, kv_idx */
static Tensor *index_tensor(MiCtx *ctx, int64_t n, int at) {
    int64_t size[4] = {1, 1, 1, 1};
    size[at] = n;
    Tensor *t = tensor_new(ctx, DT_I32, 4, size);
    for (int64_t i = 0; t && i < n; i++) tensor_set_f(t, i, (double)i);
    return t;
}

/* Run subgraph g on ins (borrowed) broadcast; its single tensor result (a new reference). */
static Tensor *run_mod(ShapeArgs *sa, const Graph *g, const char *what, IValue *ins, int n) {
    IValue *outs = NULL;
    int nouts = 0;
    if (interp_run_sub_bcast(sa->call, g, ins, n, &outs, &nouts)) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%.900s", sa->ctx->err.msg);
        sa_err(sa, "in %s: %s", what, msg);
        return NULL;
    }
    Tensor *t = nouts >= 1 && outs[0].kind == IV_TENSOR ? tensor_ref(outs[0].t) : NULL;
    interp_free_outputs(outs, nouts);
    if (!t) sa_err(sa, "%s must return one tensor", what);
    return t;
}

/* The buffers of a tuple argument (score_mod_other_buffers / mask_mod_other_buffers) after the
 * fixed inputs of a mod: ins[first..) borrowed; returns how many, -1 on error. */
static int other_buffers(ShapeArgs *sa, int pos, IValue *ins, int first, int max) {
    ArgRef a = sa_arg(sa, pos, NULL);
    if (!arg_present(a)) return 0;
    int n = arg_list_len(a);
    if (n < 0) return sa_err(sa, "argument %d must be a tuple of buffers", pos);
    if (first + n > max) return sa_err(sa, "too many captured buffers (%d)", n);
    for (int k = 0; k < n; k++) {
        ArgRef it = arg_item(a, k);
        if (it.iv) ins[first + k] = *it.iv;
        else if (it.v && it.v->kind == V_INT) { ins[first + k].kind = IV_INT; ins[first + k].i = it.v->i; }
        else if (it.v && it.v->kind == V_FLOAT) { ins[first + k].kind = IV_FLOAT; ins[first + k].f = it.v->f; }
    }
    return n;
}

#define FLEX_MAX_INS 64

static int flex_body(ShapeArgs *sa, IValue *out) {
    MiCtx *ctx = sa->ctx;
    Tensor *q = ev_tensor(sa_arg(sa, 0, NULL)), *k = ev_tensor(sa_arg(sa, 1, NULL)), *v = ev_tensor(sa_arg(sa, 2, NULL));
    if (!q || !k || !v || q->ndim != 4 || k->ndim != 4 || v->ndim != 4) { sa_err(sa, "expects 4-D query/key/value tensors"); return -1; }
    ArgRef bm = sa_arg(sa, 4, "block_mask");
    int nbm = arg_list_len(bm);
    if (nbm < 1) { sa_err(sa, "block_mask must be a tuple ending in the mask_mod subgraph"); return -1; }
    const Graph *score_g = sub_of(sa, sa_arg(sa, 3, NULL).v, "score_mod");
    const Graph *mask_g = score_g ? sub_of(sa, arg_item(bm, nbm - 1).v, "block_mask's mask_mod") : NULL;
    double scale;
    DType st;
    if (!mask_g || sa_scalar(sa, sa_arg(sa, 5, "scale"), "scale", &scale, &st)) return -1;
    int64_t B = q->size[0], H = q->size[1], M = q->size[2], E = q->size[3];
    int64_t Bkv = k->size[0], Hkv = k->size[1], N = k->size[2], Ev = v->size[3];
    if (k->size[3] != E || v->size[2] != N || v->size[0] != Bkv || v->size[1] != Hkv)
        return sa_err(sa, "key %lldx%lldx%lldx%lld and value %lldx%lldx%lldx%lld do not fit query head dim %lld",
                      (long long)k->size[0], (long long)k->size[1], (long long)k->size[2], (long long)k->size[3],
                      (long long)v->size[0], (long long)v->size[1], (long long)v->size[2], (long long)v->size[3], (long long)E);
    if (Hkv <= 0 || H % Hkv) return sa_err(sa, "query heads %lld are not a multiple of key/value heads %lld", (long long)H, (long long)Hkv);
    if (!(Bkv == B || Bkv == 1)) return sa_err(sa, "Bq and Bkv must broadcast. Got Bq=%lld and Bkv=%lld", (long long)B, (long long)Bkv);
    int64_t G = H / Hkv;
    DType wd = q->dtype == DT_F64 || sa->call->fp64 ? DT_F64 : DT_F32;   /* working precision */

    TensorMeta metas[3];
    int nm = 3;
    if (ev_shape(sa, metas, &nm)) return -1;
    Tensor *res[3] = {ev_new(sa, &metas[0]), ev_new(sa, &metas[1]), ev_new(sa, &metas[2])};
    int64_t ssz[4] = {B, H, M, N};
    Tensor *scores = tensor_new(ctx, wd, 4, ssz);
    Tensor *ix[4] = {index_tensor(ctx, B, 0), index_tensor(ctx, H, 1), index_tensor(ctx, M, 2), index_tensor(ctx, N, 3)};
    Tensor *smod = NULL, *mask = NULL;
    int rc = -1;
    if (!res[0] || !res[1] || !res[2] || !scores || !ix[0] || !ix[1] || !ix[2] || !ix[3]) goto done;
    /* scores = (q @ k^T) in the working precision, then * scale */
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++) {
                    int64_t bk = Bkv == 1 ? 0 : b, hk = h / G;
                    double acc = 0;
                    for (int64_t e = 0; e < E; e++) {
                        int64_t qi[4] = {b, h, m, e}, ki[4] = {bk, hk, n, e};
                        acc += tensor_load_f(q, q->offset + qi[0] * q->stride[0] + qi[1] * q->stride[1] + qi[2] * q->stride[2] + qi[3] * q->stride[3]) *
                               tensor_load_f(k, k->offset + ki[0] * k->stride[0] + ki[1] * k->stride[1] + ki[2] * k->stride[2] + ki[3] * k->stride[3]);
                    }
                    int64_t lin = ((b * H + h) * M + m) * N + n;
                    tensor_set_f(scores, lin, acc);                          /* rounded to wd */
                    tensor_set_f(scores, lin, tensor_get_f(scores, lin) * scale);
                }
    {
        IValue ins[FLEX_MAX_INS];
        memset(ins, 0, sizeof ins);
        ins[0].kind = IV_TENSOR; ins[0].t = scores;
        for (int d = 0; d < 4; d++) { ins[1 + d].kind = IV_TENSOR; ins[1 + d].t = ix[d]; }
        int nb = other_buffers(sa, 7, ins, 5, FLEX_MAX_INS);
        if (nb < 0 || !(smod = run_mod(sa, score_g, "score_mod", ins, 5 + nb))) goto done;
        memset(ins, 0, sizeof ins);
        for (int d = 0; d < 4; d++) { ins[d].kind = IV_TENSOR; ins[d].t = ix[d]; }
        nb = other_buffers(sa, 8, ins, 4, FLEX_MAX_INS);
        if (nb < 0 || !(mask = run_mod(sa, mask_g, "mask_mod", ins, 4 + nb))) goto done;
    }
    if (smod->ndim > 4 || mask->ndim > 4) { sa_err(sa, "score_mod / mask_mod results must broadcast to [B, H, M, N]"); goto done; }
    for (int d = 0; d < smod->ndim; d++)
        if (smod->size[d] != 1 && smod->size[d] != ssz[4 - smod->ndim + d]) { sa_err(sa, "score_mod's result does not broadcast to the scores"); goto done; }
    for (int d = 0; d < mask->ndim; d++)
        if (mask->size[d] != 1 && mask->size[d] != ssz[4 - mask->ndim + d]) { sa_err(sa, "mask_mod's result does not broadcast to the scores"); goto done; }
    {
        double *row = mi_xmalloc(sizeof(double) * (size_t)(N ? N : 1));
        double *acc = mi_xmalloc(sizeof(double) * (size_t)(Ev ? Ev : 1));
        Tensor *o = res[0];
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t m = 0; m < M; m++) {
                    double mx = -INFINITY;
                    for (int64_t n = 0; n < N; n++) {
                        int64_t idx[4] = {b, h, m, n};
                        double s = bget(mask, idx) != 0 ? bget(smod, idx) : -INFINITY;
                        if (wd == DT_F32) s = (double)(float)s;
                        row[n] = s;
                        if (s > mx) mx = s;
                    }
                    double sum = 0;
                    if (mx != -INFINITY)
                        for (int64_t n = 0; n < N; n++) sum += exp(row[n] - mx);
                    double lse = mx == -INFINITY ? -INFINITY : mx + log(sum);   /* masked rows: -inf */
                    int64_t r3 = (b * H + h) * M + m;
                    tensor_set_f(res[1], r3, lse / M_LN2);
                    tensor_set_f(res[2], r3, mx / M_LN2);
                    for (int64_t e = 0; e < Ev; e++) acc[e] = 0;
                    int64_t bk = Bkv == 1 ? 0 : b, hk = h / G;
                    for (int64_t n = 0; n < N && mx != -INFINITY; n++) {
                        double p = exp(row[n] - mx) / sum;   /* _safe_softmax; .to(query.dtype) below */
                        if (q->dtype == DT_F32) p = (double)(float)p;
                        if (p == 0) continue;
                        for (int64_t e = 0; e < Ev; e++)
                            acc[e] += p * tensor_load_f(v, v->offset + bk * v->stride[0] + hk * v->stride[1] + n * v->stride[2] + e * v->stride[3]);
                    }
                    for (int64_t e = 0; e < Ev; e++)
                        tensor_store_f(o, o->offset + b * o->stride[0] + h * o->stride[1] + m * o->stride[2] + e * o->stride[3], acc[e]);
                }
        free(row);
        free(acc);
    }
    rc = ev_out_tuple(out, res, 3);
    res[0] = res[1] = res[2] = NULL;
done:
    for (int i = 0; i < 3; i++) tensor_unref(res[i]);
    for (int d = 0; d < 4; d++) tensor_unref(ix[d]);
    tensor_unref(scores);
    tensor_unref(smod);
    tensor_unref(mask);
    return rc;
}
static int flex_eval(const OpCall *c, IValue *out) { return ev_call(c, out, flex_body); }

const OpDef ops_flex_attention_table[] = {
    {"higher_order.flex_attention", OPF_HOP | OPF_TUPLE, op_infer_generic, flex_eval,
     "attention with a score_mod and a mask_mod subgraph (math_attention: out, logsumexp / ln 2, max / ln 2)", shape_flex, NULL},
};
const int ops_flex_attention_count = sizeof ops_flex_attention_table / sizeof ops_flex_attention_table[0];
