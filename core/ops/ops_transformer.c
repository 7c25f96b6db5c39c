/* ops_transformer.c — nn.TransformerEncoderLayer's fused "fast path" op,
 * aten._transformer_encoder_layer_fwd, which nn.TransformerEncoder calls in eval mode without
 * gradients (torch/nn/modules/transformer.py) and which Dynamo keeps in the graph. Inductor has
 * no lowering for it: a FallbackKernel, so it reaches the scheduler as an extern call that runs
 * this reference. The arithmetic is ATen's (native/transformers/transformer.cpp
 * transformer_encoder_layer_forward, attention.cpp native_multi_head_attention), on [B, T, E]:
 *   x = src; if norm_first: x = LN1(x)
 *   qkv = x W_qkv^T; q = (qkv_q + b_q) / sqrt(E / H), k, v + their biases   (_transform_bias_rescale_qkv)
 *   p = masked_softmax(q k^T) per head: a mask element != 0 hides a key (a float mask is made
 *       bool first); mask_type 0: [T, T], 1: [B, T] key padding, else broadcast to [B, H, T, T];
 *       a row with every key hidden is 0 (_masked_softmax)
 *   x = (p v) W_proj^T + b_proj + src; if !norm_first: x = LN1(x)
 *   y = act(x W1^T + b1) W2^T + b2 + x (norm_first: the FFN reads LN2(x)); if !norm_first: y = LN2(y)
 * act is relu, or gelu when use_gelu: _addmm_activation's exact erf gelu on the CPU, its
 * cuBLASLt epilogue's tanh form on a GPU. Values are computed in double and rounded to the
 * tensor dtype at ATen's op boundaries (each matmul, norm and softmax). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { A_SRC, A_E, A_H, A_WQKV, A_BQKV, A_WP, A_BP, A_GELU, A_NFIRST, A_EPS, A_NW1, A_NB1, A_NW2, A_NB2,
       A_W1, A_B1, A_W2, A_B2, A_MASK, A_MTYPE, A_N };
static const char *const argn[A_N] = {"src", "embed_dim", "num_heads", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias",
    "use_gelu", "norm_first", "eps", "norm_weight_1", "norm_bias_1", "norm_weight_2", "norm_bias_2", "ffn_weight_1",
    "ffn_bias_1", "ffn_weight_2", "ffn_bias_2", "mask", "mask_type"};

/* src [B, T, E] with E == embed_dim and E divisible by num_heads; the result is a fresh
 * contiguous [B, T, E] of src's dtype (ATen's layer_norm / addmm results). */
static int shape_encoder(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *src;
    int64_t E, H;
    if (sa_tensor(sa, sa_arg(sa, A_SRC, argn[A_SRC]), argn[A_SRC], &src) ||
        sa_const_int(sa, sa_arg(sa, A_E, argn[A_E]), argn[A_E], &E) || sa_const_int(sa, sa_arg(sa, A_H, argn[A_H]), argn[A_H], &H)) return -1;
    if (src->ndim != 3) return sa_err(sa, "src must be 3-D [batch, seq, embed_dim] (\"batched input size should be 3\")");
    int64_t e = 0;
    if (!sym_is_int(src->size[2], &e) || e != E) return sa_err(sa, "src's last size must be embed_dim = %lld", (long long)E);
    if (H <= 0 || E % H) return sa_err(sa, "embed_dim %lld is not divisible by num_heads %lld", (long long)E, (long long)H);
    meta_alloc(sa, &out[0], src->dtype, 3, src->device);
    for (int i = 0; i < 3; i++) out[0].size[i] = src->size[i];
    meta_contiguous_strides(sa, &out[0]);
    *nout = 1;
    return 0;
}

/* all of t's elements in logical order, as doubles (malloc'd) */
static double *load(const Tensor *t) {
    int64_t n = tensor_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = tensor_get_f(t, i);
    return v;
}

/* v rounded to dtype dt as a tensor of dt stores it (f32: float; f64: itself) */
static double rnd(DType dt, double v) {
    if (dt == DT_F32) return (float)v;
    return v;
}

/* y[r, o] = sum_c x[r, c] w[o, c] + b[o]   (x [R, C], w [O, C]: a linear layer, addmm with w^T) */
static void linear(const double *x, const double *w, const double *b, double *y, int64_t R, int64_t C, int64_t O, DType dt) {
    for (int64_t r = 0; r < R; r++)
        for (int64_t o = 0; o < O; o++) {
            double s = b ? b[o] : 0;
            for (int64_t c = 0; c < C; c++) s += x[r * C + c] * w[o * C + c];
            y[r * O + o] = rnd(dt, s);
        }
}

/* in-place layer norm over the last E of R rows (biased variance, eps inside the sqrt) */
static void layer_norm(double *x, const double *w, const double *b, int64_t R, int64_t E, double eps, DType dt) {
    for (int64_t r = 0; r < R; r++) {
        double *row = x + r * E, mean = 0, var = 0;
        for (int64_t e = 0; e < E; e++) mean += row[e];
        mean /= (double)E;
        for (int64_t e = 0; e < E; e++) var += (row[e] - mean) * (row[e] - mean);
        double inv = 1 / sqrt(var / (double)E + eps);
        for (int64_t e = 0; e < E; e++) row[e] = rnd(dt, (row[e] - mean) * inv * (w ? w[e] : 1) + (b ? b[e] : 0));
    }
}

/* Is key j hidden from query i of head h in batch b? (mask != 0; see the file comment) */
static bool hidden(const Tensor *m, const double *mv, int64_t mtype, int64_t b, int64_t h, int64_t i, int64_t j, int64_t H, int64_t T) {
    if (!m) return false;
    if (mtype == 0) return mv[i * T + j] != 0;
    if (mtype == 1) return mv[b * T + j] != 0;
    int64_t idx[4] = {b, h, i, j}, lin = 0;
    for (int d = 0; d < m->ndim; d++) {
        int64_t k = idx[4 - m->ndim + d];
        lin = lin * m->size[d] + (m->size[d] == 1 ? 0 : k);
    }
    (void)H;
    return mv[lin] != 0;
}

static int encoder_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m;
    int n = 0;
    if (ev_shape(sa, &m, &n)) return -1;
    Tensor *src = ev_tensor(sa_arg(sa, A_SRC, NULL)), *t[A_N] = {0};
    for (int a = A_WQKV; a <= A_B2; a++)
        if (a != A_GELU && a != A_NFIRST && a != A_EPS) {
            ArgRef r = sa_arg(sa, a, argn[a]);
            if (arg_present(r) && !(t[a] = ev_tensor(r))) return sa_err(sa, "argument '%s' must be a tensor", argn[a]);
        }
    ArgRef mr = sa_arg(sa, A_MASK, argn[A_MASK]), tr = sa_arg(sa, A_MTYPE, argn[A_MTYPE]);
    Tensor *mask = arg_present(mr) ? ev_tensor(mr) : NULL;
    int64_t mtype = -1, E = src->size[2], B = src->size[0], T = src->size[1], H;
    if (arg_present(tr) && sa_const_int(sa, tr, argn[A_MTYPE], &mtype)) return -1;
    if (sa_const_int(sa, sa_arg(sa, A_H, argn[A_H]), argn[A_H], &H)) return -1;
    double eps;
    DType et;
    if (sa_scalar(sa, sa_arg(sa, A_EPS, argn[A_EPS]), argn[A_EPS], &eps, &et)) return -1;
    bool gelu = arg_bool(sa_arg(sa, A_GELU, argn[A_GELU]), false), nfirst = arg_bool(sa_arg(sa, A_NFIRST, argn[A_NFIRST]), false);
    bool cuda = sa->node && sa->node->has_meta && sa->node->meta.device.kind == DEV_CUDA;
    if (mask && mtype == 0 && (mask->ndim != 2 || mask->size[0] != T || mask->size[1] != T))
        return sa_err(sa, "a mask of mask_type 0 must be [seq, seq]");
    if (mask && mtype == 1 && (mask->ndim != 2 || mask->size[0] != B || mask->size[1] != T))
        return sa_err(sa, "a mask of mask_type 1 (key padding) must be [batch, seq]");
    if (mask && mask->ndim > 4) return sa_err(sa, "the mask must broadcast to [batch, heads, seq, seq]");
    DType dt = m.dtype;
    int64_t R = B * T, D = E / H, F = t[A_W1] ? t[A_W1]->size[0] : 0;
    double *v[A_N] = {0};
    for (int a = A_WQKV; a <= A_B2; a++) if (t[a]) v[a] = load(t[a]);
    double *src_v = load(src), *x = malloc(sizeof(double) * (size_t)(R * E + 1)), *qkv = malloc(sizeof(double) * (size_t)(R * 3 * E + 1));
    double *ctxv = malloc(sizeof(double) * (size_t)(R * E + 1)), *p = malloc(sizeof(double) * (size_t)(T + 1));
    double *hid = malloc(sizeof(double) * (size_t)(R * F + 1)), *mv = mask ? load(mask) : NULL;
    memcpy(x, src_v, sizeof(double) * (size_t)(R * E));
    if (nfirst) layer_norm(x, v[A_NW1], v[A_NB1], R, E, eps, dt);
    linear(x, v[A_WQKV], NULL, qkv, R, E, 3 * E, dt);
    double scale = sqrt((double)D);
    for (int64_t r = 0; r < R; r++)   /* _transform_bias_rescale_qkv */
        for (int64_t c = 0; c < 3 * E; c++) {
            double y = qkv[r * 3 * E + c] + (v[A_BQKV] ? v[A_BQKV][c] : 0);
            qkv[r * 3 * E + c] = rnd(dt, c < E ? y / scale : y);
        }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < T; i++) {
                const double *q = qkv + (b * T + i) * 3 * E + h * D;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < T; j++) {
                    const double *k = qkv + (b * T + j) * 3 * E + E + h * D;
                    double s = 0;
                    for (int64_t d = 0; d < D; d++) s += q[d] * k[d];
                    p[j] = hidden(mask, mv, mtype, b, h, i, j, H, T) ? NAN : rnd(dt, s);
                    if (!isnan(p[j]) && p[j] > mx) mx = p[j];
                }
                for (int64_t j = 0; j < T; j++) { p[j] = isnan(p[j]) || mx == -INFINITY ? 0 : exp(p[j] - mx); sum += p[j]; }
                for (int64_t j = 0; j < T; j++) p[j] = sum > 0 ? rnd(dt, p[j] / sum) : 0;
                for (int64_t d = 0; d < D; d++) {
                    double s = 0;
                    for (int64_t j = 0; j < T; j++) s += p[j] * qkv[(b * T + j) * 3 * E + 2 * E + h * D + d];
                    ctxv[(b * T + i) * E + h * D + d] = rnd(dt, s);
                }
            }
    linear(ctxv, v[A_WP], v[A_BP], x, R, E, E, dt);
    for (int64_t e = 0; e < R * E; e++) x[e] = rnd(dt, x[e] + src_v[e]);
    if (!nfirst) layer_norm(x, v[A_NW1], v[A_NB1], R, E, eps, dt);
    memcpy(src_v, x, sizeof(double) * (size_t)(R * E));   /* pre_ffn_res */
    if (nfirst) layer_norm(x, v[A_NW2], v[A_NB2], R, E, eps, dt);
    linear(x, v[A_W1], v[A_B1], hid, R, E, F, dt);
    for (int64_t e = 0; e < R * F; e++) {
        double y = hid[e];
        y = !gelu ? (y > 0 ? y : 0) : cuda ? 0.5 * y * (1 + tanh(sqrt(2 / M_PI) * (y + 0.044715 * y * y * y))) : 0.5 * y * (1 + erf(y / sqrt(2)));
        hid[e] = rnd(dt, y);
    }
    linear(hid, v[A_W2], v[A_B2], x, R, F, E, dt);
    for (int64_t e = 0; e < R * E; e++) x[e] = rnd(dt, x[e] + src_v[e]);
    if (!nfirst) layer_norm(x, v[A_NW2], v[A_NB2], R, E, eps, dt);
    Tensor *o = ev_new(sa, &m);
    if (o) for (int64_t e = 0; e < R * E; e++) tensor_set_f(o, e, x[e]);
    for (int a = 0; a < A_N; a++) free(v[a]);
    free(src_v); free(x); free(qkv); free(ctxv); free(p); free(hid); free(mv);
    if (!o) return -1;
    return ev_out_tensor(out, o);
}
static int encoder_eval(const OpCall *c, IValue *out) { return ev_call(c, out, encoder_body); }

const OpDef ops_transformer_table[] = {
    {"aten._transformer_encoder_layer_fwd.default", 0, op_infer_generic, encoder_eval,
     "nn.TransformerEncoderLayer's fused fast path (eval, no grad): self-attention with an optional mask, the FFN, both residuals and layer norms",
     shape_encoder, NULL},
};
const int ops_transformer_count = sizeof ops_transformer_table / sizeof ops_transformer_table[0];
