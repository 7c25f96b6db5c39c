/* ops_attention.c — scaled dot-product attention in the op registry: the forward of the CPU
 * flash path (_scaled_dot_product_flash_attention_for_cpu) and of the GPU memory-efficient path
 * (_scaled_dot_product_efficient_attention), and both backwards. One reference computation
 * (in double, the softmax recomputed from Q and K) serves all four; the metas are PyTorch's
 * (torch/_meta_registrations.py): the efficient path's output is a [B, L, H, E] buffer seen as
 * [B, H, L, E], its logsumexp is padded to a multiple of 32, and the gradients of both
 * backwards are empty_permuted((B, H, L, E), (0, 2, 1, 3)). */
#include "ops/ops_impl.h"
#include "base/philox.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int same_dtype(ShapeArgs *sa, const TensorMeta *a, const TensorMeta *b) {
    if (a->dtype == b->dtype) return 0;
    return sa_err(sa, "query, key and value must have one dtype, got %s and %s", dtype_abbrev(a->dtype), dtype_abbrev(b->dtype));
}

/* The query/key/value checks shared by every variant; q, k, v set. */
static int qkv(ShapeArgs *sa, int first, TensorMeta **q, TensorMeta **k, TensorMeta **v) {
    if (sa_tensor(sa, sa_arg(sa, first, "query"), "query", q) || sa_tensor(sa, sa_arg(sa, first + 1, "key"), "key", k) ||
        sa_tensor(sa, sa_arg(sa, first + 2, "value"), "value", v)) return -1;
    if ((*q)->ndim != 4 || (*k)->ndim != 4 || (*v)->ndim != 4)
        return sa_err(sa, "expects 4-D query/key/value [batch, heads, seq, dim]");
    if (ex_cmp(sa, (*q)->size[3], (*k)->size[3]) != 0) return sa_err(sa, "query and key head dims differ");
    if (ex_cmp(sa, (*k)->size[2], (*v)->size[2]) != 0) return sa_err(sa, "key and value sequence lengths differ");
    if (ex_cmp(sa, (*q)->size[0], (*k)->size[0]) != 0 || ex_cmp(sa, (*q)->size[1], (*k)->size[1]) != 0 ||
        ex_cmp(sa, (*q)->size[0], (*v)->size[0]) != 0 || ex_cmp(sa, (*q)->size[1], (*v)->size[1]) != 0)
        return sa_err(sa, "query, key and value batch/head sizes differ");   /* the fused kernels do not broadcast them */
    return same_dtype(sa, *q, *k) || same_dtype(sa, *q, *v) ? -1 : 0;
}

/* A [B, H, L, E] meta laid out as empty_permuted(..., (0, 2, 1, 3)): memory order B, L, H, E. */
static void bhle_as_blhe(ShapeArgs *sa, TensorMeta *m, DType dt, Device dev, Expr *B, Expr *H, Expr *L, Expr *E) {
    SymCtx *S = sa->sym;
    meta_alloc(sa, m, dt, 4, dev);
    m->size[0] = B; m->size[1] = H; m->size[2] = L; m->size[3] = E;
    m->stride[3] = sym_int(S, 1);
    m->stride[1] = E;
    m->stride[2] = sym_mul(S, H, E);
    m->stride[0] = sym_mul(S, L, m->stride[2]);
}

/* flash (cpu): (output like query with value's head dim, logsumexp [B, L, H] seen as [B, H, L]) */
static int shape_sdpa(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *q, *k, *v;
    if (qkv(sa, 0, &q, &k, &v)) return -1;
    if (ex_cmp(sa, q->size[3], v->size[3]) == 0) {
        meta_like(sa, &out[0], q, q->dtype);
    } else {
        meta_alloc(sa, &out[0], q->dtype, 4, q->device);
        for (int i = 0; i < 3; i++) out[0].size[i] = q->size[i];
        out[0].size[3] = v->size[3];
        meta_contiguous_strides(sa, &out[0]);
    }
    meta_alloc(sa, &out[1], DT_F32, 3, q->device);
    out[1].size[0] = q->size[0]; out[1].size[1] = q->size[1]; out[1].size[2] = q->size[2];
    out[1].stride[2] = q->size[1];
    out[1].stride[1] = sym_int(sa->sym, 1);
    out[1].stride[0] = sym_mul(sa->sym, q->size[1], q->size[2]);
    *nout = 2;
    return 0;
}

/* efficient (cuda): (output [B, H, L, Ev] over a [B, L, H, Ev] buffer, logsumexp [B, H,
 * ceil(L / 32) * 32] or [B, H, 0], philox seed and offset as 0-d int64) */
static int shape_sdpa_eff(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *q, *k, *v;
    if (qkv(sa, 0, &q, &k, &v)) return -1;
    bool lse = arg_bool(sa_arg(sa, 4, "compute_log_sumexp"), false);
    SymCtx *S = sa->sym;
    bhle_as_blhe(sa, &out[0], q->dtype, q->device, q->size[0], q->size[1], q->size[2], v->size[3]);
    Expr *padded = sym_mul(S, sym_floordiv(S, sym_add(S, q->size[2], sym_int(S, 31)), sym_int(S, 32)), sym_int(S, 32));
    meta_alloc(sa, &out[1], DT_F32, 3, q->device);
    out[1].size[0] = q->size[0]; out[1].size[1] = q->size[1]; out[1].size[2] = lse ? padded : sym_int(S, 0);
    meta_contiguous_strides(sa, &out[1]);
    for (int i = 2; i < 4; i++) meta_alloc(sa, &out[i], DT_I64, 0, q->device);
    *nout = 4;
    return 0;
}

/* The tuple items of the CUDA flash and cuDNN forwards that are not tensors (cum_seq_q,
 * cum_seq_k: None; max_q, max_k: ints; cuDNN's debug mask: None) */
static void not_tensor(ShapeArgs *sa, TensorMeta *m, Device dev) { meta_alloc(sa, m, DT_F32, 0, dev); m->dtype = DT_INVALID; }

/* flash (cuda): (output = empty_like(query), logsumexp [B, H, L] f32, None, None, max_q,
 * max_k, rng state u64[2], unused u64[], debug mask [0]) (meta__scaled_dot_product_flash_attention) */
static int shape_sdpa_flash(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *q, *k, *v;
    if (qkv(sa, 0, &q, &k, &v)) return -1;
    if (arg_bool(sa_arg(sa, 5, "return_debug_mask"), false)) return sa_err(sa, "return_debug_mask=True is not supported");
    meta_like(sa, &out[0], q, q->dtype);
    meta_alloc(sa, &out[1], DT_F32, 3, q->device);
    for (int i = 0; i < 3; i++) out[1].size[i] = q->size[i];
    meta_contiguous_strides(sa, &out[1]);
    for (int i = 2; i < 6; i++) not_tensor(sa, &out[i], q->device);
    meta_alloc(sa, &out[6], DT_U64, 1, q->device);
    out[6].size[0] = sym_int(sa->sym, 2);
    meta_contiguous_strides(sa, &out[6]);
    meta_alloc(sa, &out[7], DT_U64, 0, q->device);
    meta_alloc(sa, &out[8], q->dtype, 1, q->device);
    out[8].size[0] = sym_int(sa->sym, 0);
    meta_contiguous_strides(sa, &out[8]);
    *nout = 9;
    return 0;
}

/* cudnn (cuda): (output [B, H, L, Ev] laid out like query (alloc_with_matching_layout: same
 * shape -> empty_like(query.transpose(1, 2)).transpose(1, 2), else query's stride order),
 * logsumexp [B, H, L, 1] f32, None, None, max_q, max_k, philox seed and offset i64[], None) */
static int shape_sdpa_cudnn(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *q, *k, *v;
    if (qkv(sa, 0, &q, &k, &v)) return -1;
    SymCtx *S = sa->sym;
    int order[4] = {0, 1, 2, 3};
    if (ex_cmp(sa, q->size[3], v->size[3]) == 0) { order[1] = 2; order[2] = 1; }   /* transpose(1, 2): [B, L, H, E] */
    else
        for (int i = 1; i < 4; i++)   /* stable sort by stride, largest first */
            for (int j = i; j > 0 && ex_cmp(sa, q->stride[order[j]], q->stride[order[j - 1]]) > 0; j--) {
                int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
            }
    meta_alloc(sa, &out[0], q->dtype, 4, q->device);
    Expr *sz[4] = {q->size[0], q->size[1], q->size[2], v->size[3]};
    for (int i = 0; i < 4; i++) out[0].size[i] = sz[i];
    if (order[1] == 2 && order[2] == 1 && ex_cmp(sa, q->size[3], v->size[3]) == 0) {
        /* empty_like(query.transpose(1, 2)): dense in query.transpose(1, 2)'s stride order */
        TensorMeta qt = *q;
        Expr *tsz[4] = {q->size[0], q->size[2], q->size[1], q->size[3]}, *tst[4] = {q->stride[0], q->stride[2], q->stride[1], q->stride[3]};
        qt.size = tsz; qt.stride = tst;
        TensorMeta like;
        meta_like(sa, &like, &qt, q->dtype);
        out[0].stride[0] = like.stride[0]; out[0].stride[2] = like.stride[1]; out[0].stride[1] = like.stride[2]; out[0].stride[3] = like.stride[3];
    } else {
        Expr *st = sym_int(S, 1);
        for (int i = 3; i >= 0; i--) { out[0].stride[order[i]] = st; st = sym_mul(S, st, sz[order[i]]); }
    }
    meta_alloc(sa, &out[1], DT_F32, 4, q->device);
    for (int i = 0; i < 3; i++) out[1].size[i] = q->size[i];
    out[1].size[3] = sym_int(S, 1);
    meta_contiguous_strides(sa, &out[1]);
    for (int i = 2; i < 6; i++) not_tensor(sa, &out[i], q->device);
    meta_alloc(sa, &out[6], DT_I64, 0, q->device);
    meta_alloc(sa, &out[7], DT_I64, 0, q->device);
    not_tensor(sa, &out[8], q->device);
    *nout = 9;
    return 0;
}

/* grad_out must be [B, H, L, Ev] of the query and value (the backward reads it at every one). */
static int check_grad_out(ShapeArgs *sa, const TensorMeta *go, const TensorMeta *q, const TensorMeta *v) {
    if (go->ndim != 4 || ex_cmp(sa, go->size[0], q->size[0]) || ex_cmp(sa, go->size[1], q->size[1]) ||
        ex_cmp(sa, go->size[2], q->size[2]) || ex_cmp(sa, go->size[3], v->size[3]))
        return sa_err(sa, "grad_out must have the output's shape [batch, heads, query length, value dim]");
    return 0;
}

/* gradients of the CUDA flash and cuDNN backwards: empty_like(query), empty_like(key),
 * empty_like(value) (a query that is not dense gets dense strides in its stride order) */
static int shape_sdpa_bwd_like(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *q, *k, *v, *go;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_out"), "grad_out", &go) || qkv(sa, 1, &q, &k, &v) || check_grad_out(sa, go, q, v)) return -1;
    meta_like(sa, &out[0], q, q->dtype);
    meta_like(sa, &out[1], k, k->dtype);
    meta_like(sa, &out[2], v, v->dtype);
    *nout = 3;
    return 0;
}

/* gradients of query, key, value as empty_permuted((B, H, L, E), (0, 2, 1, 3)); the efficient
 * backward's fourth result (grad of attn_bias) only when asked for and a bias exists */
static int shape_sdpa_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    const OpDef *op = sa->op;
    bool eff = op && strstr(op->name, "efficient");
    TensorMeta *q, *k, *v, *go;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_out"), "grad_out", &go) || qkv(sa, 1, &q, &k, &v) || check_grad_out(sa, go, q, v)) return -1;
    bhle_as_blhe(sa, &out[0], q->dtype, q->device, q->size[0], q->size[1], q->size[2], q->size[3]);
    bhle_as_blhe(sa, &out[1], k->dtype, k->device, k->size[0], k->size[1], k->size[2], k->size[3]);
    bhle_as_blhe(sa, &out[2], v->dtype, v->device, v->size[0], v->size[1], v->size[2], v->size[3]);
    *nout = 3;
    if (eff) {
        TensorMeta *bias = NULL;
        ArgRef ab = sa_arg(sa, 4, "attn_bias"), am = sa_arg(sa, 10, "grad_input_mask");
        bool want = arg_present(am) && arg_list_len(am) > 3 && arg_bool(arg_item(am, 3), false);
        if (arg_present(ab) && arg_is_tensor(sa, ab) && sa_tensor(sa, ab, "attn_bias", &bias)) return -1;
        if (bias && want) meta_like(sa, &out[3], bias, bias->dtype);
        else { meta_alloc(sa, &out[3], q->dtype, 0, q->device); out[3].dtype = DT_INVALID; }
        *nout = 4;
    }
    return 0;
}

typedef struct Attn {
    Tensor *Q, *K, *V, *mask;     /* mask broadcast to [B, H, L, S] (bool: keep; float: added) */
    bool causal;
    double scale;
    double dropout;               /* dropout_p: probabilities dropped by a Philox mask */
    int64_t seed, offset;         /* the mask's Philox key and first counter */
    int64_t B, H, L, E, S, Ev;
} Attn;

static void set_i(Tensor *t, int64_t k, int64_t v) { tensor_store_i(t, tensor_pos(t, k), v); }   /* exact for int64 */

/* A forward's dropout seed: the session seed mixed with the node's name (as the random ops of
 * core/ops/ops_random.c draw), offset 0; returned to the caller so the backward can use it. */
static void forward_seed(ShapeArgs *sa, Attn *a) {
    uint64_t h = sa->ctx->seed ^ 0xa77e0d5eedull;
    for (const char *p = sa->node && sa->node->name ? sa->node->name : ""; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    a->seed = (int64_t)(h >> 1);
    a->offset = 0;
}

/* A backward's seed and offset from the forward's outputs it is passed: two 0-d tensors
 * (efficient, cuDNN) or one [seed, offset] tensor (the CUDA flash rng state; offset_pos < 0). */
static int backward_seed(ShapeArgs *sa, Attn *a, int seed_pos, int offset_pos) {
    if (a->dropout <= 0) return 0;
    Tensor *st = ev_tensor(sa_arg(sa, seed_pos, "philox_seed"));
    Tensor *ot = offset_pos >= 0 ? ev_tensor(sa_arg(sa, offset_pos, "philox_offset")) : NULL;
    if (!st || tensor_numel(st) < (offset_pos < 0 ? 2 : 1) || (offset_pos >= 0 && (!ot || tensor_numel(ot) < 1)))
        return sa_err(sa, "dropout needs the forward's philox seed and offset");
    a->seed = tensor_get_i(st, 0);
    a->offset = offset_pos < 0 ? tensor_get_i(st, 1) : tensor_get_i(ot, 0);
    return 0;
}

/* The dropout factor of probability (b, h, i, j): 0 when dropped, else 1 / (1 - p). The mask is
 * a function of (seed, offset, position), so the backward, handed the forward's seed and offset,
 * drops the same probabilities (PyTorch's kernels do the same with their Philox state). */
static double keep(const Attn *a, int64_t b, int64_t h, int64_t i, int64_t j) {
    if (a->dropout <= 0) return 1;
    double u = mi_philox_rand(a->seed, a->offset + ((b * a->H + h) * a->L + i) * a->S + j, false);
    return u < a->dropout ? 0 : 1 / (1 - a->dropout);
}

static double at4(const Tensor *t, int64_t a, int64_t b, int64_t c, int64_t d) {
    return tensor_load_f(t, t->offset + a * t->stride[0] + b * t->stride[1] + c * t->stride[2] + d * t->stride[3]);
}
static void put4(Tensor *t, int64_t a, int64_t b, int64_t c, int64_t d, double v) {
    tensor_store_f(t, t->offset + a * t->stride[0] + b * t->stride[1] + c * t->stride[2] + d * t->stride[3], v);
}

/* Row i of softmax(Q K^T * scale + mask) for (b, h) into p[0..S) (zeros when every score is
 * masked); returns max + log(sum), the row's logsumexp. */
static double attn_row(const Attn *a, int64_t b, int64_t h, int64_t i, double *p) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < a->S; j++) {
        double acc = 0;
        for (int64_t e = 0; e < a->E; e++) acc += at4(a->Q, b, h, i, e) * at4(a->K, b, h, j, e);
        acc *= a->scale;
        if (a->causal && j > i) acc = -INFINITY;
        if (a->mask) {
            double mv = tensor_load_f(a->mask, ((b * a->H + h) * a->L + i) * a->S + j);
            if (a->mask->dtype == DT_BOOL) { if (mv == 0) acc = -INFINITY; }
            else acc += mv;
        }
        p[j] = acc;
        if (acc > mx) mx = acc;
    }
    double sum = 0;
    for (int64_t j = 0; j < a->S; j++) { p[j] = isinf(mx) ? 0 : exp(p[j] - mx); sum += p[j]; }
    for (int64_t j = 0; j < a->S; j++) p[j] = sum > 0 ? p[j] / sum : 0;
    return isinf(mx) ? mx : mx + log(sum);
}

/* Q, K, V, scale, dropout (must be 0), causal and the mask of one call. 0 / -1 + error. */
static int attn_args(ShapeArgs *sa, MiCtx *ctx, int first, int pos_mask, int pos_dropout, int pos_causal, Attn *a) {
    memset(a, 0, sizeof *a);
    a->Q = ev_tensor(sa_arg(sa, first, "query"));
    a->K = ev_tensor(sa_arg(sa, first + 1, "key"));
    a->V = ev_tensor(sa_arg(sa, first + 2, "value"));
    a->B = a->Q->size[0]; a->H = a->Q->size[1]; a->L = a->Q->size[2]; a->E = a->Q->size[3];
    a->S = a->K->size[2]; a->Ev = a->V->size[3];
    a->scale = 1 / sqrt((double)(a->E ? a->E : 1));
    double dropout = 0;
    DType t;
    ArgRef as = sa_arg(sa, -1, "scale"), ad = sa_arg(sa, pos_dropout, "dropout_p");
    if (arg_present(as) && sa_scalar(sa, as, "scale", &a->scale, &t)) return -1;
    if (arg_present(ad) && sa_scalar(sa, ad, "dropout_p", &dropout, &t)) return -1;
    if (dropout < 0 || dropout >= 1) return sa_err(sa, "dropout_p %g is outside [0, 1)", dropout);
    a->dropout = dropout;
    a->causal = arg_bool(sa_arg(sa, pos_causal, "is_causal"), false);
    ArgRef am = sa_arg(sa, pos_mask, pos_mask < 0 ? "attn_mask" : "attn_bias");
    if (arg_present(am) && arg_is_tensor(sa, am)) {
        int64_t full[4] = {a->B, a->H, a->L, a->S};
        a->mask = tensor_new(ctx, ev_tensor(am)->dtype, 4, full);
        if (!a->mask || tensor_copy_into(ctx, a->mask, ev_tensor(am))) return sa_err(sa, "attention mask: %s", ctx->err.msg);
    }
    return 0;
}

/* The forward: o[b, h, i] = P_i V and lse[b, h, i] (when lse is given). */
static int attn_forward(ShapeArgs *sa, const Attn *a, Tensor *o, Tensor *lse) {
    double *p = malloc((size_t)(a->S ? a->S : 1) * sizeof *p);
    if (!p) return sa_err(sa, "out of memory");
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t h = 0; h < a->H; h++)
            for (int64_t i = 0; i < a->L; i++) {
                double l = attn_row(a, b, h, i, p);
                if (lse && (lse->ndim == 3 || lse->ndim == 4) && i < lse->size[2])   /* cudnn's is [B, H, L, 1] */
                    tensor_store_f(lse, lse->offset + b * lse->stride[0] + h * lse->stride[1] + i * lse->stride[2], l);
                if (a->dropout > 0)
                    for (int64_t j = 0; j < a->S; j++) p[j] *= keep(a, b, h, i, j);
                for (int64_t e = 0; e < a->Ev; e++) {
                    double acc = 0;
                    for (int64_t j = 0; j < a->S; j++) acc += p[j] * at4(a->V, b, h, j, e);
                    put4(o, b, h, i, e, acc);
                }
            }
    free(p);
    return 0;
}

/* The backward, from scratch (P recomputed): dV = P^T dO, dP = dO V^T, dS = P * (dP -
 * rowsum(P * dP)), dQ = scale dS K, dK = scale dS^T Q. Any of dq, dk, dv may be NULL. */
static int attn_backward(ShapeArgs *sa, const Attn *a, const Tensor *dO, Tensor *dq, Tensor *dk, Tensor *dv) {
    int64_t S = a->S ? a->S : 1;
    double *p = malloc((size_t)S * sizeof *p), *dp = malloc((size_t)S * sizeof *dp);
    double *gk = calloc((size_t)(a->S * a->E + 1), sizeof *gk), *gv = calloc((size_t)(a->S * a->Ev + 1), sizeof *gv);
    int rc = 0;
    if (!p || !dp || !gk || !gv) { rc = sa_err(sa, "out of memory"); goto done; }
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t h = 0; h < a->H; h++) {
            memset(gk, 0, (size_t)(a->S * a->E) * sizeof *gk);
            memset(gv, 0, (size_t)(a->S * a->Ev) * sizeof *gv);
            for (int64_t i = 0; i < a->L; i++) {
                attn_row(a, b, h, i, p);
                double dsum = 0;
                for (int64_t j = 0; j < a->S; j++) {   /* O = (P * Z) V, Z the dropout factors */
                    double acc = 0, z = keep(a, b, h, i, j);
                    for (int64_t e = 0; e < a->Ev; e++) {
                        double g = at4(dO, b, h, i, e);
                        acc += g * at4(a->V, b, h, j, e);
                        gv[j * a->Ev + e] += p[j] * z * g;
                    }
                    dp[j] = acc * z;
                    dsum += p[j] * dp[j];
                }
                for (int64_t j = 0; j < a->S; j++) dp[j] = p[j] * (dp[j] - dsum) * a->scale;   /* dS * scale */
                for (int64_t e = 0; e < a->E; e++) {
                    double acc = 0;
                    for (int64_t j = 0; j < a->S; j++) {
                        acc += dp[j] * at4(a->K, b, h, j, e);
                        gk[j * a->E + e] += dp[j] * at4(a->Q, b, h, i, e);
                    }
                    if (dq) put4(dq, b, h, i, e, acc);
                }
            }
            for (int64_t j = 0; j < a->S; j++) {
                for (int64_t e = 0; dk && e < a->E; e++) put4(dk, b, h, j, e, gk[j * a->E + e]);
                for (int64_t e = 0; dv && e < a->Ev; e++) put4(dv, b, h, j, e, gv[j * a->Ev + e]);
            }
        }
done:
    free(p); free(dp); free(gk); free(gv);
    return rc;
}

/* flash (cpu) forward: (query, key, value, dropout_p, is_causal, *, attn_mask, scale) */
static int sdpa_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    const OpCall *c = sa->call;
    int rc = -1;
    Attn a = {0};
    if (attn_args(sa, c->ctx, 0, -1, 3, 4, &a)) goto done;
    if (a.dropout > 0) { sa_err(sa, "dropout in the CPU flash attention is not supported (it returns no seed for its backward)"); goto done; }
    if (attn_forward(sa, &a, res[0], res[1])) goto done;
    rc = 0;
done:
    tensor_unref(a.mask);
    return rc;
}
static int sdpa_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, sdpa_fill); }

/* efficient (cuda) forward: (query, key, value, attn_bias, compute_log_sumexp, dropout_p,
 * is_causal, *, scale) -> (output, logsumexp, philox_seed, philox_offset); the seed and offset
 * are the dropout mask's (0 without dropout) */
static int sdpa_eff_fill(ShapeArgs *sa, Tensor *const *res, int n) {
    const OpCall *c = sa->call;
    int rc = -1;
    Attn a = {0};
    if (attn_args(sa, c->ctx, 0, 3, 5, 6, &a)) goto done;
    forward_seed(sa, &a);
    if (attn_forward(sa, &a, res[0], res[1])) goto done;
    set_i(res[2], 0, a.dropout > 0 ? a.seed : 0);   /* philox seed and offset, as the kernel returns them */
    set_i(res[3], 0, a.dropout > 0 ? a.offset : 0);
    for (int64_t k = 0; k < tensor_numel(res[1]); k++)      /* the padding past L holds -inf */
        if (k % (res[1]->size[2] ? res[1]->size[2] : 1) >= a.L) tensor_set_f(res[1], k, -INFINITY);
    rc = 0;
done:
    tensor_unref(a.mask);
    return rc;
}
static int sdpa_eff_eval(const OpCall *c, IValue *out) { return ev_run_n(c, out, sdpa_eff_fill); }

/* Argument positions of an attention op: the first of query/key/value, the mask or bias (-1:
 * the attn_mask keyword), dropout_p and is_causal; for a backward, its philox seed and offset
 * (offset -1: the seed argument holds both, the CUDA flash rng state). */
typedef struct AttnPos { int first, mask, dropout, causal, seed, offset; } AttnPos;   /* seed/offset: backwards */

/* CUDA flash (query, key, value, dropout_p, is_causal, return_debug_mask, *, scale) and cuDNN
 * (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, return_debug_mask,
 * *, scale) forwards: 9 items, the None / int ones as PyTorch returns them, seeds 0 */
static int sdpa_cuda_fwd_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    const AttnPos *pos = c->op->data;
    TensorMeta m[9];
    int n, rc = -1;
    Tensor *res[9] = {0};
    Attn a = {0};
    if (ev_shape(sa, m, &n)) goto done;
    for (int i = 0; i < 9; i++) if (m[i].dtype != DT_INVALID && !(res[i] = ev_new(sa, &m[i]))) goto done;
    if (attn_args(sa, c->ctx, pos->first, pos->mask, pos->dropout, pos->causal, &a)) goto done;
    forward_seed(sa, &a);
    if (attn_forward(sa, &a, res[0], res[1])) goto done;
    int64_t sd = a.dropout > 0 ? a.seed : 0, of = a.dropout > 0 ? a.offset : 0;
    if (res[6] && tensor_numel(res[6]) == 2) { set_i(res[6], 0, sd); set_i(res[6], 1, of); if (res[7]) set_i(res[7], 0, 0); }
    else { if (res[6]) set_i(res[6], 0, sd); if (res[7]) set_i(res[7], 0, of); }   /* cuDNN: seed, offset */
    memset(out, 0, sizeof *out);
    out->kind = IV_TUPLE;
    out->n = 9;
    out->items = mi_xcalloc(9, sizeof(IValue));
    for (int i = 0; i < 9; i++) {
        if (res[i]) { out->items[i].kind = IV_TENSOR; out->items[i].t = res[i]; res[i] = NULL; }
        else if (i == 4 || i == 5) { out->items[i].kind = IV_INT; out->items[i].i = i == 4 ? a.L : a.S; }
    }
    rc = 0;
done:
    for (int i = 0; i < 9; i++) tensor_unref(res[i]);
    tensor_unref(a.mask);
    return rc;
}
static int sdpa_cuda_fwd_eval(const OpCall *c, IValue *out) { return ev_call(c, out, sdpa_cuda_fwd_body); }

/* Both backwards: flash (cpu) (grad_out, query, key, value, out, logsumexp, dropout_p,
 * is_causal, *, attn_mask, scale); efficient (cuda) (grad_out, query, key, value, attn_bias,
 * out, logsumexp, philox_seed, philox_offset, dropout_p, grad_input_mask, is_causal, *, scale).
 * The bias gradient of the efficient backward is not computed (refused when asked for). */
static int sdpa_bwd_body(ShapeArgs *sa, IValue *out) {
    const OpCall *c = sa->call;
    bool eff = strstr(c->op->name, "efficient") != NULL;
    TensorMeta m[4];
    int n, rc = -1;
    Tensor *res[4] = {0};
    Attn a = {0};
    if (ev_shape(sa, m, &n)) goto done;
    for (int i = 0; i < 3; i++) if (!(res[i] = ev_new(sa, &m[i]))) goto done;
    if (eff && m[3].dtype != DT_INVALID) { sa_err(sa, "the gradient of attn_bias is not implemented"); goto done; }
    const AttnPos *pos = c->op->data;   /* every backward row says where its arguments are */
    if (attn_args(sa, c->ctx, pos->first, pos->mask, pos->dropout, pos->causal, &a)) goto done;
    if (pos->seed < 0 && a.dropout > 0) { sa_err(sa, "dropout in the CPU flash attention is not supported"); goto done; }
    if (pos->seed >= 0 && backward_seed(sa, &a, pos->seed, pos->offset)) goto done;
    if (attn_backward(sa, &a, ev_tensor(sa_arg(sa, 0, "grad_out")), res[0], res[1], res[2])) goto done;
    ev_out_tuple(out, res, n);
    memset(res, 0, sizeof res);
    rc = 0;
done:
    for (int i = 0; i < 4; i++) tensor_unref(res[i]);
    tensor_unref(a.mask);
    return rc;
}
static int sdpa_bwd_eval(const OpCall *c, IValue *out) { return ev_call(c, out, sdpa_bwd_body); }

const OpDef ops_attention_table[] = {
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, sdpa_eval,
     "(softmax(Q K^T * scale) V, logsumexp) on [batch, heads, seq, dim]", shape_sdpa, NULL},
    {"aten._scaled_dot_product_efficient_attention.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, sdpa_eff_eval,
     "(softmax(Q K^T * scale + bias) V, logsumexp padded to 32, philox seed, offset): the GPU memory-efficient path",
     shape_sdpa_eff, NULL},
    {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic,
     sdpa_bwd_eval, "gradients of query, key, value of the CPU flash attention", shape_sdpa_bwd, &(const AttnPos){1, -1, 6, 7, -1, -1}},
    {"aten._scaled_dot_product_efficient_attention_backward.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic,
     sdpa_bwd_eval, "gradients of query, key, value (and attn_bias) of the memory-efficient attention", shape_sdpa_bwd,
     &(const AttnPos){1, 4, 9, 11, 7, 8}},
    {"aten._scaled_dot_product_flash_attention.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, sdpa_cuda_fwd_eval,
     "(softmax(Q K^T * scale) V, logsumexp, ..., rng state): the GPU flash path (f16/bf16)", shape_sdpa_flash,
     &(const AttnPos){0, -2, 3, 4, -1, -1}},
    {"aten._scaled_dot_product_cudnn_attention.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, sdpa_cuda_fwd_eval,
     "(softmax(Q K^T * scale + bias) V, logsumexp [B, H, L, 1], ..., philox seed, offset): the cuDNN path", shape_sdpa_cudnn,
     &(const AttnPos){0, 3, 5, 6, -1, -1}},
    {"aten._scaled_dot_product_flash_attention_backward.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, sdpa_bwd_eval,
     "gradients of query, key, value of the GPU flash attention", shape_sdpa_bwd_like, &(const AttnPos){1, -2, 10, 11, 12, -1}},
    {"aten._scaled_dot_product_cudnn_attention_backward.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, sdpa_bwd_eval,
     "gradients of query, key, value of the cuDNN attention", shape_sdpa_bwd_like, &(const AttnPos){1, 8, 13, 14, 6, 7}},
};
const int ops_attention_count = sizeof ops_attention_table / sizeof ops_attention_table[0];
