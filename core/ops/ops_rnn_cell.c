/* ops_rnn_cell.c — the fused RNN cells of nn.GRUCell / nn.LSTMCell on a GPU, as AOT autograd
 * leaves them in forward and backward graphs (Dynamo refuses nn.GRU / nn.LSTM, but compiles the
 * cells): _thnn_fused_gru_cell, _thnn_fused_gru_cell_backward, _thnn_fused_lstm_cell and
 * _thnn_fused_lstm_cell_backward_impl. Inductor runs them as fallbacks, so they reach the
 * scheduler as extern calls that run these reference implementations. The arithmetic and the
 * workspace layouts are ATen's kernels' (native/cuda/RNN.cu gru_cell_forward / backward,
 * lstm_cell_forward / backward), per batch row b and hidden unit j, H hidden units:
 *   GRU: gates [B, 3H] = (r, i, n); r = σ(ir + hr + b1r + b2r), i = σ(ii + hi + b1i + b2i),
 *        n = tanh(in + b1n + r (hn + b2n)), hy = n + i (hx - n);
 *        workspace [B, 5H] = (r, i, n, hx, hn + b2n).
 *   LSTM: gates [B, 4H] = (i, f, c, o), all biases added; cy = f cx + i c, hy = o tanh(cy);
 *        workspace [B, 4H] = (i, f, c, o) after their activations.
 * The backwards return the gates' gradients and, when has_bias, their sums over the batch (the
 * biases' gradients; None otherwise), as ATen's host functions. */
#include "ops/ops_impl.h"

#include <math.h>
#include <string.h>

enum { RNN_GRU, RNN_GRU_BWD, RNN_LSTM, RNN_LSTM_BWD };
typedef struct RnnSpec { int kind; } RnnSpec;
static const RnnSpec gru = {RNN_GRU}, gru_bwd = {RNN_GRU_BWD}, lstm = {RNN_LSTM}, lstm_bwd = {RNN_LSTM_BWD};
#define RSPEC(sa) ((const RnnSpec *)(sa)->op->data)

static double sigm(double x) { return 1 / (1 + exp(-x)); }

/* A [B, k*H] meta like ATen's at::empty({B, k * H}) on x's device. */
static void gates_meta(ShapeArgs *sa, TensorMeta *m, const TensorMeta *hx, int k, DType dt) {
    meta_alloc(sa, m, dt, 2, hx->device);
    m->size[0] = hx->size[0];
    m->size[1] = sym_mul(sa->sym, hx->size[1], sym_int(sa->sym, k));
    meta_contiguous_strides(sa, m);
}

static void bias_meta(ShapeArgs *sa, TensorMeta *m, const TensorMeta *g, bool present) {
    meta_alloc(sa, m, g->dtype, 1, g->device);
    m->size[0] = g->size[1];
    meta_contiguous_strides(sa, m);
    if (!present) m->dtype = DT_INVALID;
}

/* Both gate tensors [B, k*H] with hx [B, H]; biases absent or [k*H]. */
static int check_gates(ShapeArgs *sa, TensorMeta *ig, TensorMeta *hg, TensorMeta *hx, int k) {
    if (ig->ndim != 2 || hg->ndim != 2 || hx->ndim != 2) return sa_err(sa, "input_gates, hidden_gates and the previous state must be 2-D");
    if (ex_cmp(sa, ig->size[0], hg->size[0]) || ex_cmp(sa, ig->size[1], hg->size[1])) return sa_err(sa, "input_gates and hidden_gates differ in size");
    if (ex_cmp(sa, ig->size[0], hx->size[0]) || ex_cmp(sa, ig->size[1], sym_mul(sa->sym, hx->size[1], sym_int(sa->sym, k))))
        return sa_err(sa, "the gates must be [batch, %d * hidden] for a [batch, hidden] state", k);
    for (int i = 3; i <= 4; i++) {
        ArgRef b = sa_arg(sa, i, i == 3 ? "input_bias" : "hidden_bias");
        TensorMeta *bm;
        if (!arg_present(b)) continue;
        if (sa_tensor(sa, b, "bias", &bm)) return -1;
        if (bm->ndim != 1 || ex_cmp(sa, bm->size[0], ig->size[1])) return sa_err(sa, "a bias must be 1-D with %d * hidden entries", k);
    }
    return 0;
}

static int shape_rnn(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *a, *b, *c;
    switch (RSPEC(sa)->kind) {
    case RNN_GRU: case RNN_LSTM: {
        int k = RSPEC(sa)->kind == RNN_GRU ? 3 : 4;
        if (sa_tensor(sa, sa_arg(sa, 0, "input_gates"), "input_gates", &a) || sa_tensor(sa, sa_arg(sa, 1, "hidden_gates"), "hidden_gates", &b) ||
            sa_tensor(sa, sa_arg(sa, 2, k == 3 ? "hx" : "cx"), k == 3 ? "hx" : "cx", &c) || check_gates(sa, a, b, c, k)) return -1;
        meta_alloc(sa, &out[0], c->dtype, 2, c->device);
        out[0].size[0] = c->size[0]; out[0].size[1] = c->size[1];
        meta_contiguous_strides(sa, &out[0]);
        if (k == 3) { gates_meta(sa, &out[1], c, 5, a->dtype); *nout = 2; }
        else { meta_copy(sa, &out[1], &out[0]); gates_meta(sa, &out[2], c, 4, a->dtype); *nout = 3; }
        return 0;
    }
    case RNN_GRU_BWD:   /* (grad_hy, workspace, has_bias) -> (grad_input_gates, grad_hidden_gates, grad_hx, grad_ib, grad_hb) */
        if (sa_tensor(sa, sa_arg(sa, 0, "grad_hy"), "grad_hy", &a) || sa_tensor(sa, sa_arg(sa, 1, "workspace"), "workspace", &b)) return -1;
        if (a->ndim != 2 || b->ndim != 2 || ex_cmp(sa, b->size[1], sym_mul(sa->sym, a->size[1], sym_int(sa->sym, 5))))
            return sa_err(sa, "the workspace must be [batch, 5 * hidden] for a [batch, hidden] grad_hy");
        gates_meta(sa, &out[0], a, 3, a->dtype);
        gates_meta(sa, &out[1], a, 3, a->dtype);
        meta_copy(sa, &out[2], a);
        meta_contiguous_strides(sa, &out[2]);
        bias_meta(sa, &out[3], &out[0], arg_bool(sa_arg(sa, 2, "has_bias"), false));
        bias_meta(sa, &out[4], &out[0], arg_bool(sa_arg(sa, 2, "has_bias"), false));
        *nout = 5;
        return 0;
    case RNN_LSTM_BWD:  /* (grad_hy?, grad_cy?, cx, cy, workspace, has_bias) -> (grad_gates, grad_cx, grad_bias) */
        if (sa_tensor(sa, sa_arg(sa, 2, "cx"), "cx", &a) || sa_tensor(sa, sa_arg(sa, 4, "workspace"), "workspace", &b)) return -1;
        if (a->ndim != 2 || b->ndim != 2 || ex_cmp(sa, b->size[1], sym_mul(sa->sym, a->size[1], sym_int(sa->sym, 4))))
            return sa_err(sa, "the workspace must be [batch, 4 * hidden] for a [batch, hidden] cx");
        gates_meta(sa, &out[0], a, 4, b->dtype);
        meta_copy(sa, &out[1], a);
        meta_contiguous_strides(sa, &out[1]);
        bias_meta(sa, &out[2], &out[0], arg_bool(sa_arg(sa, 5, "has_bias"), false));
        *nout = 3;
        return 0;
    }
    return sa_err(sa, "unknown RNN cell");
}

/* element (b, j) of an optional [k*H] bias, 0 when absent */
static double bias_at(const Tensor *t, int64_t j) { return t ? tensor_get_f(t, j) : 0; }
static double opt_at(const Tensor *t, int64_t e) { return t ? tensor_get_f(t, e) : 0; }

static void sum_rows(Tensor *dst, const Tensor *src, int64_t B, int64_t W) {
    for (int64_t j = 0; j < W; j++) {
        double s = 0;
        for (int64_t b = 0; b < B; b++) s += tensor_get_f(src, b * W + j);
        tensor_set_f(dst, j, s);
    }
}

static int rnn_body(ShapeArgs *sa, IValue *out) {
    TensorMeta m[5];
    Tensor *o[5] = {0};
    int n = 0, rc = -1, kind = RSPEC(sa)->kind;
    if (ev_shape(sa, m, &n)) goto done;
    for (int i = 0; i < n; i++) if (m[i].dtype != DT_INVALID && !(o[i] = ev_new(sa, &m[i]))) goto done;
    Tensor *a0 = ev_tensor(sa_arg(sa, 0, NULL)), *a1 = ev_tensor(sa_arg(sa, 1, NULL));
    if (kind == RNN_GRU || kind == RNN_LSTM) {
        Tensor *st = ev_tensor(sa_arg(sa, 2, NULL));
        ArgRef r1 = sa_arg(sa, 3, "input_bias"), r2 = sa_arg(sa, 4, "hidden_bias");
        Tensor *b1 = arg_present(r1) ? ev_tensor(r1) : NULL, *b2 = arg_present(r2) ? ev_tensor(r2) : NULL;
        int64_t B = st->size[0], H = st->size[1];
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t e = b * H + j;
                if (kind == RNN_GRU) {
                    int64_t g = b * 3 * H + j, w = b * 5 * H + j;
                    double rg = sigm(tensor_get_f(a0, g) + tensor_get_f(a1, g) + bias_at(b1, j) + bias_at(b2, j));
                    double ig = sigm(tensor_get_f(a0, g + H) + tensor_get_f(a1, g + H) + bias_at(b1, j + H) + bias_at(b2, j + H));
                    double hn = tensor_get_f(a1, g + 2 * H) + bias_at(b2, j + 2 * H);
                    double ng = tanh(tensor_get_f(a0, g + 2 * H) + bias_at(b1, j + 2 * H) + rg * hn), hx = tensor_get_f(st, e);
                    tensor_set_f(o[0], e, ng + ig * (hx - ng));
                    double ws[5] = {rg, ig, ng, hx, hn};
                    for (int k = 0; k < 5; k++) tensor_set_f(o[1], w + k * H, ws[k]);
                } else {
                    int64_t g = b * 4 * H + j;
                    double v[4];
                    for (int k = 0; k < 4; k++) v[k] = tensor_get_f(a0, g + k * H) + tensor_get_f(a1, g + k * H) + bias_at(b1, j + k * H) + bias_at(b2, j + k * H);
                    double ig = sigm(v[0]), fg = sigm(v[1]), cg = tanh(v[2]), og = sigm(v[3]);
                    double cy = fg * tensor_get_f(st, e) + ig * cg;
                    tensor_set_f(o[0], e, og * tanh(cy));
                    tensor_set_f(o[1], e, cy);
                    double ws[4] = {ig, fg, cg, og};
                    for (int k = 0; k < 4; k++) tensor_set_f(o[2], g + k * H, ws[k]);
                }
            }
    } else if (kind == RNN_GRU_BWD) {
        int64_t B = a0->size[0], H = a0->size[1];
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t e = b * H + j, w = b * 5 * H + j, g = b * 3 * H + j;
                double rg = tensor_get_f(a1, w), ig = tensor_get_f(a1, w + H), ng = tensor_get_f(a1, w + 2 * H);
                double hx = tensor_get_f(a1, w + 3 * H), hn = tensor_get_f(a1, w + 4 * H), go = tensor_get_f(a0, e);
                double gig = go * (hx - ng) * (1 - ig) * ig, ghx = go * ig, gin = go * (1 - ig) * (1 - ng * ng);
                double ghn = gin * rg, grg = gin * hn * (1 - rg) * rg;
                double gi[3] = {grg, gig, gin}, gh[3] = {grg, gig, ghn};
                for (int k = 0; k < 3; k++) { tensor_set_f(o[0], g + k * H, gi[k]); tensor_set_f(o[1], g + k * H, gh[k]); }
                tensor_set_f(o[2], e, ghx);
            }
        if (o[3]) { sum_rows(o[3], o[0], B, 3 * H); sum_rows(o[4], o[1], B, 3 * H); }
    } else {
        ArgRef ghr = sa_arg(sa, 0, "grad_hy"), gcr = sa_arg(sa, 1, "grad_cy");
        Tensor *ghy = arg_present(ghr) ? a0 : NULL, *gcy = arg_present(gcr) ? a1 : NULL;
        Tensor *cx = ev_tensor(sa_arg(sa, 2, NULL)), *cy = ev_tensor(sa_arg(sa, 3, NULL)), *ws = ev_tensor(sa_arg(sa, 4, NULL));
        int64_t B = cx->size[0], H = cx->size[1];
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t e = b * H + j, g = b * 4 * H + j;
                double ig = tensor_get_f(ws, g), fg = tensor_get_f(ws, g + H), cg = tensor_get_f(ws, g + 2 * H), og = tensor_get_f(ws, g + 3 * H);
                double go = opt_at(ghy, e), goc = opt_at(gcy, e), t = tanh(tensor_get_f(cy, e));
                double gog = go * t, gcx = go * og * (1 - t * t) + goc;
                double gr[4] = {gcx * cg * (1 - ig) * ig, gcx * tensor_get_f(cx, e) * (1 - fg) * fg, gcx * ig * (1 - cg * cg), gog * (1 - og) * og};
                for (int k = 0; k < 4; k++) tensor_set_f(o[0], g + k * H, gr[k]);
                tensor_set_f(o[1], e, gcx * fg);
            }
        if (o[2]) sum_rows(o[2], o[0], B, 4 * H);
    }
    ev_out_tuple(out, o, n);
    memset(o, 0, sizeof o);
    rc = 0;
done:
    for (int i = 0; i < 5; i++) tensor_unref(o[i]);
    return rc;
}
static int rnn_eval(const OpCall *c, IValue *out) { return ev_call(c, out, rnn_body); }

const OpDef ops_rnn_cell_table[] = {
    {"aten._thnn_fused_gru_cell.default", OPF_TUPLE, op_infer_generic, rnn_eval,
     "(hy, workspace) of a GRU cell from its gate pre-activations (ATen's fused CUDA cell)", shape_rnn, &gru},
    {"aten._thnn_fused_gru_cell_backward.default", OPF_TUPLE, op_infer_generic, rnn_eval,
     "gradients of the fused GRU cell: gates, hx, and the biases' (summed over the batch)", shape_rnn, &gru_bwd},
    {"aten._thnn_fused_lstm_cell.default", OPF_TUPLE, op_infer_generic, rnn_eval,
     "(hy, cy, workspace) of an LSTM cell from its gate pre-activations (ATen's fused CUDA cell)", shape_rnn, &lstm},
    {"aten._thnn_fused_lstm_cell_backward_impl.default", OPF_TUPLE, op_infer_generic, rnn_eval,
     "gradients of the fused LSTM cell: gates, cx, and the bias (summed over the batch)", shape_rnn, &lstm_bwd},
};
const int ops_rnn_cell_count = sizeof ops_rnn_cell_table / sizeof ops_rnn_cell_table[0];
