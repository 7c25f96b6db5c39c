/* decomp_nn.c — neural-network ops PyTorch defines by decomposition
 * (torch/_decomp/decompositions.py, torch/_refs/nn/functional): batch norm (all its
 * overloads, through native_batch_norm_helper), group norm and its backward, layer norm
 * backward, softmax backward, _safe_softmax, log_sigmoid_forward, prelu, glu, dropout
 * backward, embedding backward, _fused_rms_norm and its backward, and the losses (mse, huber, smooth_l1, soft_margin, bce,
 * bce_with_logits, nll_loss_forward, multi_margin, multilabel_margin). */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <math.h>
#include <string.h>

static int one(Value *outs, int *nout, Node *x) { outs[0] = value_node(x); *nout = 1; return 0; }
#define RET(x) return one(outs, nout, (x))

/* x unsqueezed at the end until it has `dim` dims (_unsqueeze_to_dim) */
static Node *unsqueeze_to(DecompB *b, Node *x, int dim) {
    for (int i = db_ndim(b, x); i < dim && !b->failed; i++) x = db_unsqueeze(b, x, -1);
    return x;
}

/* decompositions.native_batch_norm_helper: outputs out, save_mean, save_rstd (and the new
 * running stats in *rm, *rv when asked) */
static int batch_norm(DecompB *b, Node *input, Node *weight, Node *bias, Node *rmean, Node *rvar, bool training,
                      double momentum, double eps, Value *outs, Node **new_rm, Node **new_rv) {
    int nd = db_ndim(b, input);
    DType in = db_dtype(b, input), comp = db_opmath(in);
    int64_t red[MI_MAX_DIMS];
    int nr = 0;
    red[nr++] = 0;
    for (int i = 2; i < nd; i++) red[nr++] = i;
    Node *output, *save_mean, *save_rstd;
    if (new_rm) *new_rm = rmean;
    if (new_rv) *new_rv = rvar;
    if (training) {
        Node *acc = db_to(b, input, comp);
        Kwarg kw[2] = {{"correction", VI(0)}, {"keepdim", VB(true)}};
        Node *vm = db_call(b, "aten.var_mean.correction", DBV(VN(acc), db_ilist(b, red, nr)), kw, 2);
        Node *var = db_getitem(b, vm, 0), *mean = db_getitem(b, vm, 1);
        Node *rstd = db_unary(b, "aten.rsqrt.default", db_adds(b, var, eps));
        output = db_mul(b, db_sub(b, input, mean), rstd);
        save_mean = db_squeeze_dims(b, mean, red, nr);
        save_rstd = db_squeeze_dims(b, rstd, red, nr);
        if (rmean && new_rm) *new_rm = db_add(b, db_muls(b, save_mean, momentum), db_muls(b, rmean, 1 - momentum));
        if (rvar && new_rv) {
            int64_t numel = 1, c;
            for (int i = 0; i < nd; i++) { int64_t s; if (!db_size_const(b, input, i, &s)) return db_fail(b, "symbolic batch norm sizes"); numel *= s; }
            db_size_const(b, input, 1, &c);
            double n = (double)numel / (double)c;
            Node *unbiased = db_muls(b, db_squeeze_dims(b, var, red, nr), n / (n - 1));
            *new_rv = db_add(b, db_muls(b, unbiased, momentum), db_muls(b, rvar, 1 - momentum));
        }
    } else {
        if (!rmean || !rvar) return db_fail(b, "running_mean and running_var are needed when not training");
        Node *mean = db_to(b, rmean, comp), *var = db_to(b, rvar, comp);
        Node *invstd = db_op(b, "aten.reciprocal.default", VN(db_unary(b, "aten.sqrt.default", db_adds(b, var, eps))));
        Kwarg kw[1] = {{"dtype", VDT(in)}};
        save_mean = db_call(b, "aten.zeros.default", DBV(db_ilist(b, (int64_t[]){0}, 1)), kw, 1);
        save_rstd = db_call(b, "aten.zeros.default", DBV(db_ilist(b, (int64_t[]){0}, 1)), kw, 1);
        output = db_mul(b, db_sub(b, input, unsqueeze_to(b, mean, nd - 1)), unsqueeze_to(b, invstd, nd - 1));
    }
    if (weight) output = db_mul(b, output, unsqueeze_to(b, db_reshape(b, weight, db_ilist(b, (int64_t[]){-1}, 1)), nd - 1));
    if (bias) output = db_add(b, output, unsqueeze_to(b, db_reshape(b, bias, db_ilist(b, (int64_t[]){-1}, 1)), nd - 1));
    outs[0] = VN(db_to(b, output, in));
    outs[1] = VN(db_to(b, save_mean, in));
    outs[2] = VN(db_to(b, save_rstd, in));
    return b->failed ? -1 : 0;
}

/* native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps) and
 * _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
 * the legit form updates the running stats in place (copy_) */
static int bn_common(DecompB *b, Value *outs, int *nout, bool inplace_stats) {
    Node *in = db_tensor(b, 0, "input"), *w = db_opt_tensor(b, 1, "weight"), *bi = db_opt_tensor(b, 2, "bias");
    Node *rm = db_opt_tensor(b, 3, "running_mean"), *rv = db_opt_tensor(b, 4, "running_var");
    bool training = db_bool(b, 5, "training", false);
    Node *nrm = NULL, *nrv = NULL;
    if (batch_norm(b, in, w, bi, rm, rv, training, db_float(b, 6, "momentum", 0.1), db_float(b, 7, "eps", 1e-5), outs,
                   inplace_stats ? &nrm : NULL, inplace_stats ? &nrv : NULL)) return -1;
    if (inplace_stats && training) {
        if (rm && nrm != rm) db_op(b, "aten.copy_.default", VN(rm), VN(nrm));
        if (rv && nrv != rv) db_op(b, "aten.copy_.default", VN(rv), VN(nrv));
    }
    *nout = 3;
    return b->failed ? -1 : 0;
}
static int dc_native_batch_norm(DecompB *b, Value *o, int *n) { return bn_common(b, o, n, true); }
static int dc_bn_legit(DecompB *b, Value *o, int *n) { return bn_common(b, o, n, true); }

/* _native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps) */
static int dc_bn_no_stats(DecompB *b, Value *outs, int *nout) {
    Node *in = db_tensor(b, 0, "input"), *w = db_opt_tensor(b, 1, "weight"), *bi = db_opt_tensor(b, 2, "bias");
    if (batch_norm(b, in, w, bi, NULL, NULL, db_bool(b, 3, "training", true), db_float(b, 4, "momentum", 0.1),
                   db_float(b, 5, "eps", 1e-5), outs, NULL, NULL)) return -1;
    *nout = 3;
    return 0;
}

/* _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps) */
static int dc_bn_no_training(DecompB *b, Value *outs, int *nout) {
    Node *in = db_tensor(b, 0, "input"), *w = db_opt_tensor(b, 1, "weight"), *bi = db_opt_tensor(b, 2, "bias");
    Node *rm = db_tensor(b, 3, "running_mean"), *rv = db_tensor(b, 4, "running_var");
    if (batch_norm(b, in, w, bi, rm, rv, false, db_float(b, 5, "momentum", 0.1), db_float(b, 6, "eps", 1e-5), outs, NULL, NULL)) return -1;
    *nout = 3;
    return 0;
}

/* _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
 * training batch norm updating the stats in place; a 4th output, the empty reserve */
static int dc_bn_with_update(DecompB *b, Value *outs, int *nout) {
    Node *in = db_tensor(b, 0, "input"), *w = db_opt_tensor(b, 1, "weight"), *bi = db_opt_tensor(b, 2, "bias");
    Node *rm = db_tensor(b, 3, "running_mean"), *rv = db_tensor(b, 4, "running_var");
    Node *nrm, *nrv;
    if (batch_norm(b, in, w, bi, rm, rv, true, db_float(b, 5, "momentum", 0.1), db_float(b, 6, "eps", 1e-5), outs, &nrm, &nrv)) return -1;
    db_op(b, "aten.copy_.default", VN(rm), VN(nrm));
    db_op(b, "aten.copy_.default", VN(rv), VN(nrv));
    Kwarg kw[1] = {{"dtype", VDT(DT_U8)}};
    outs[3] = VN(db_call(b, "aten.zeros.default", DBV(db_ilist(b, (int64_t[]){0}, 1)), kw, 1));
    *nout = 4;
    return b->failed ? -1 : 0;
}

/* decompositions.native_group_norm: normalize over (C/group * HxW) per (N, group) */
static int dc_group_norm(DecompB *b, Value *outs, int *nout) {
    Node *in = db_tensor(b, 0, "input"), *w = db_opt_tensor(b, 1, "weight"), *bi = db_opt_tensor(b, 2, "bias");
    int64_t N = db_int(b, 3, "N", 0), C = db_int(b, 4, "C", 0), HxW = db_int(b, 5, "HxW", 0), G = db_int(b, 6, "group", 1);
    double eps = db_float(b, 7, "eps", 1e-5);
    if (G <= 0 || C % G) return db_fail(b, "Expected number of channels in input to be divisible by num_groups");
    int nd = db_ndim(b, in);
    DType dt = db_dtype(b, in), comp = db_opmath(dt);
    Node *x = db_view(b, in, db_ilist(b, (int64_t[]){N, G, (C / G) * HxW}, 3));
    Node *acc = db_to(b, x, comp);
    Kwarg kw[2] = {{"correction", VI(0)}, {"keepdim", VB(true)}};
    Node *vm = db_call(b, "aten.var_mean.correction", DBV(VN(acc), db_ilist(b, (int64_t[]){2}, 1)), kw, 2);
    Node *var = db_getitem(b, vm, 0), *mean = db_getitem(b, vm, 1);
    Node *rstd = db_unary(b, "aten.rsqrt.default", db_adds(b, var, eps));
    Node *out = db_mul(b, db_sub(b, x, mean), rstd);
    out = db_view(b, out, db_shape_val(b, in));
    /* weight / bias over the channel dim: [C] -> [C, 1, ...] */
    if (w) out = db_mul(b, out, unsqueeze_to(b, w, nd - 1));
    if (bi) out = db_add(b, out, unsqueeze_to(b, bi, nd - 1));
    int64_t last = 2;
    outs[0] = VN(db_to(b, out, dt));
    outs[1] = VN(db_to(b, db_squeeze_dims(b, mean, &last, 1), dt));
    outs[2] = VN(db_to(b, db_squeeze_dims(b, rstd, &last, 1), dt));
    *nout = 3;
    return b->failed ? -1 : 0;
}

/* decompositions.native_group_norm_backward */
static int dc_group_norm_backward(DecompB *b, Value *outs, int *nout) {
    Node *go = db_tensor(b, 0, "grad_out"), *in = db_tensor(b, 1, "input"), *mean = db_tensor(b, 2, "mean"), *rstd = db_tensor(b, 3, "rstd");
    Node *gamma = db_opt_tensor(b, 4, "weight");
    int64_t N = db_int(b, 5, "N", 0), C = db_int(b, 6, "C", 0), HxW = db_int(b, 7, "HxW", 0), G = db_int(b, 8, "group", 1);
    int64_t mask[3] = {1, 1, 1};
    db_ints(b, 9, "output_mask", mask, 3);
    if (G <= 0 || C % G) return db_fail(b, "Expect number of channels %lld to be evenly-divisible by number of groups %lld", (long long)C, (long long)G);
    int64_t cpg = C / G, two = 2, zero = 0;
    Node *ds = db_sum(b, db_view(b, db_mul(b, go, in), db_ilist(b, (int64_t[]){N, C, HxW}, 3)), &two, 1, false);
    Node *dbb = db_sum(b, db_view(b, go, db_ilist(b, (int64_t[]){N, C, HxW}, 3)), &two, 1, false);
    outs[0] = outs[1] = outs[2] = VNONE;
    if (mask[0]) {
        double s = 1.0 / (double)(HxW * cpg);
        Node *ds_val, *db_val, *c1;
        if (gamma) {
            Node *g0 = db_unsqueeze(b, gamma, 0);
            ds_val = db_sum(b, db_reshape(b, db_mul(b, ds, g0), db_ilist(b, (int64_t[]){N, G, cpg}, 3)), &two, 1, false);
            db_val = db_sum(b, db_reshape(b, db_mul(b, dbb, g0), db_ilist(b, (int64_t[]){N, G, cpg}, 3)), &two, 1, false);
            c1 = db_mul(b, db_unsqueeze(b, rstd, -1), db_reshape(b, gamma, db_ilist(b, (int64_t[]){1, G, cpg}, 3)));
        } else {
            ds_val = db_sum(b, db_reshape(b, ds, db_ilist(b, (int64_t[]){N, G, cpg}, 3)), &two, 1, false);
            db_val = db_sum(b, db_reshape(b, dbb, db_ilist(b, (int64_t[]){N, G, cpg}, 3)), &two, 1, false);
            Kwarg kw[1] = {{"dtype", VDT(db_dtype(b, rstd))}};
            Node *ones = db_call(b, "aten.ones.default", DBV(db_ilist(b, (int64_t[]){1, G, cpg}, 3)), kw, 1);
            c1 = db_mul(b, db_unsqueeze(b, rstd, -1), ones);
        }
        Node *c2 = db_muls(b, db_mul(b, db_mul(b, db_mul(b, db_sub(b, db_mul(b, db_val, mean), ds_val), rstd), rstd), rstd), s);
        Node *c3 = db_sub(b, db_mul(b, db_unary(b, "aten.neg.default", c2), mean), db_muls(b, db_mul(b, db_val, rstd), s));
        c1 = db_unsqueeze(b, c1, -1);
        c2 = unsqueeze_to(b, c2, 4);
        c3 = unsqueeze_to(b, c3, 4);
        Node *d = db_add(b, db_add(b, db_mul(b, db_reshape(b, go, db_ilist(b, (int64_t[]){N, G, cpg, HxW}, 4)), c1),
                                    db_mul(b, db_reshape(b, in, db_ilist(b, (int64_t[]){N, G, cpg, HxW}, 4)), c2)), c3);
        outs[0] = VN(db_to(b, db_reshape(b, d, db_shape_val(b, in)), db_dtype(b, in)));
    }
    if (mask[1]) {
        Node *t = db_mul(b, db_sub(b, db_view(b, ds, db_ilist(b, (int64_t[]){N, G, cpg}, 3)),
                                   db_mul(b, db_view(b, dbb, db_ilist(b, (int64_t[]){N, G, cpg}, 3)), db_unsqueeze(b, mean, -1))),
                         db_unsqueeze(b, rstd, -1));
        outs[1] = VN(db_reshape(b, db_sum(b, t, &zero, 1, false), db_ilist(b, &C, 1)));
    }
    if (mask[2]) outs[2] = VN(db_sum(b, dbb, &zero, 1, false));
    *nout = 3;
    return b->failed ? -1 : 0;
}

/* decompositions.native_layer_norm_backward */
static int dc_layer_norm_backward(DecompB *b, Value *outs, int *nout) {
    Node *go = db_tensor(b, 0, "grad_out"), *in = db_tensor(b, 1, "input");
    int64_t ns[MI_MAX_DIMS];
    int nn = db_ints(b, 2, "normalized_shape", ns, MI_MAX_DIMS);
    Node *mean = db_tensor(b, 3, "mean"), *rstd = db_tensor(b, 4, "rstd"), *w = db_opt_tensor(b, 5, "weight"), *bi = db_opt_tensor(b, 6, "bias");
    int64_t mask[3] = {1, 1, 1};
    db_ints(b, 7, "output_mask", mask, 3);
    int nd = db_ndim(b, in), axis = nd - (nn < 0 ? 0 : nn);
    DType dt = db_dtype(b, in), comp = db_opmath(dt);
    int64_t inner[MI_MAX_DIMS], outer[MI_MAX_DIMS], N = 1;
    int ni = 0, no = 0;
    for (int i = 0; i < nd; i++) {
        if (i >= axis) { inner[ni++] = i; int64_t s; if (db_size_const(b, in, i, &s)) N *= s; }
        else outer[no++] = i;
    }
    Node *goc = db_to(b, go, comp), *inc = db_to(b, in, comp), *wc = w ? db_to(b, w, comp) : NULL;
    Node *x_hat = db_mul(b, db_sub(b, inc, mean), rstd);
    Node *gxh = wc ? db_mul(b, goc, wc) : goc;
    Node *a = db_muls(b, gxh, (double)N);
    Node *bb = db_sum(b, gxh, inner, ni, true);
    Node *c2 = db_sum(b, db_mul(b, gxh, x_hat), inner, ni, true);
    Node *inner_t = db_sub(b, db_sub(b, a, bb), db_mul(b, x_hat, c2));
    outs[0] = outs[1] = outs[2] = VNONE;
    if (mask[0]) outs[0] = VN(db_to(b, db_mul(b, db_muls(b, rstd, 1.0 / (double)N), inner_t), dt));
    if (mask[1] && wc) outs[1] = VN(db_to(b, no ? db_sum(b, db_mul(b, goc, x_hat), outer, no, false) : db_mul(b, goc, x_hat), dt));
    if (mask[2] && bi) outs[2] = VN(db_to(b, no ? db_sum(b, goc, outer, no, false) : db_clone(b, goc), dt));
    *nout = 3;
    return b->failed ? -1 : 0;
}

/* decompositions._fused_rms_norm(input, normalized_shape, weight, eps) -> (out, rstd): in the
 * computation dtype, rstd = rsqrt(mean(x^2 over the normalized dims, listed last first) + eps)
 * (eps None: float32's or float64's machine epsilon), out = x * rstd (* weight), cast back.
 * Example: x [4, 3, 12], normalized_shape [12] -> mean.dim(pow(x, 2), [2], True). */
static int dc_fused_rms_norm(DecompB *b, Value *outs, int *nout) {
    Node *in = db_tensor(b, 0, "input"), *w = db_opt_tensor(b, 2, "weight");
    int64_t ns[MI_MAX_DIMS], dims[MI_MAX_DIMS];
    int nn = db_ints(b, 1, "normalized_shape", ns, MI_MAX_DIMS), nd = db_ndim(b, in);
    if (nn < 0 || nn > nd) return db_fail(b, "normalized_shape has %d entries for a %dD input", nn, nd);
    for (int i = 0; i < nn; i++) dims[i] = nd - i - 1;
    DType dt = db_dtype(b, in), comp = db_opmath(dt);
    const Value *ev = db_arg(b, 3, "eps");
    double eps = comp == DT_F32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
    if (ev && ev->kind != V_NONE) eps = db_float(b, 3, "eps", eps);
    Node *x = db_to(b, in, comp);
    Node *ms = db_op(b, "aten.mean.dim", VN(db_op(b, "aten.pow.Tensor_Scalar", VN(x), VI(2))), db_ilist(b, dims, nn), VB(true));
    Node *rstd = db_unary(b, "aten.rsqrt.default", db_op(b, "aten.add.Scalar", VN(ms), VF(eps)));
    Node *r = db_mul(b, x, rstd);
    if (w) r = db_mul(b, r, w);
    outs[0] = VN(db_to(b, r, dt));
    outs[1] = VN(rstd);
    *nout = 2;
    return b->failed ? -1 : 0;
}

/* decompositions._fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight,
 * output_mask) -> (grad_input, grad_weight): x_hat = x * rstd, g = grad_out (* weight),
 * grad_input = (g - x_hat / N * sum(x_hat * g over the normalized dims)) * rstd, grad_weight =
 * sum(grad_out * x_hat over the other dims), both cast to input's dtype. */
static int dc_fused_rms_norm_backward(DecompB *b, Value *outs, int *nout) {
    Node *go = db_tensor(b, 0, "grad_out"), *in = db_tensor(b, 1, "input"), *rstd = db_tensor(b, 3, "rstd"), *w = db_opt_tensor(b, 4, "weight");
    int64_t ns[MI_MAX_DIMS], mask[2] = {1, 1}, inner[MI_MAX_DIMS], outer[MI_MAX_DIMS], N = 1;
    int nn = db_ints(b, 2, "normalized_shape", ns, MI_MAX_DIMS), nd = db_ndim(b, in), ni = 0, no = 0;
    db_ints(b, 5, "output_mask", mask, 2);
    if (nn < 0 || nn > nd) return db_fail(b, "normalized_shape has %d entries for a %dD input", nn, nd);
    for (int i = 0; i < nd; i++) {
        if (i < nd - nn) { outer[no++] = i; continue; }
        int64_t s;
        if (!db_size_const(b, in, i, &s)) return db_fail(b, "symbolic normalized sizes");
        inner[ni++] = i;
        N *= s;
    }
    DType dt = db_dtype(b, in), comp = db_opmath(dt);
    Node *goc = db_to(b, go, comp), *x = db_to(b, in, comp), *wc = w ? db_to(b, w, comp) : NULL;
    rstd = unsqueeze_to(b, rstd, nd);
    Node *gxh = wc ? db_mul(b, goc, wc) : goc, *x_hat = db_mul(b, x, rstd);
    outs[0] = outs[1] = VNONE;
    if (mask[0]) {
        Node *sum = db_sum(b, db_mul(b, x_hat, gxh), inner, ni, true);
        Node *t = db_mul(b, db_op(b, "aten.div.Tensor", VN(x_hat), VI(N)), sum);
        outs[0] = VN(db_to(b, db_mul(b, db_sub(b, gxh, t), rstd), dt));
    }
    if (mask[1] && wc) {
        Node *full = db_mul(b, goc, x_hat);
        outs[1] = VN(db_to(b, no ? db_sum(b, full, outer, no, false) : full, dt));
    }
    *nout = 2;
    return b->failed ? -1 : 0;
}

/* _softmax_backward_data(grad_output, output, dim, input_dtype) */
static int dc_softmax_backward(DecompB *b, Value *outs, int *nout) {
    Node *g = db_tensor(b, 0, "grad_output"), *y = db_tensor(b, 1, "output");
    int64_t dim = db_int(b, 2, "dim", -1);
    const Value *idt = db_arg(b, 3, "input_dtype");
    DType comp = db_opmath(db_dtype(b, g));
    Node *gc = db_to(b, g, comp), *yc = db_to(b, y, comp);
    Node *ng = db_mul(b, gc, yc);
    Node *r = db_sub(b, ng, db_mul(b, yc, db_sum(b, ng, &dim, 1, true)));
    if (idt && idt->kind == V_DTYPE && db_dtype(b, g) != idt->dtype) r = db_to(b, r, idt->dtype);
    RET(db_op(b, "aten.clone.default", VN(r)));
}

/* _log_softmax_backward_data(grad_output, output, dim, input_dtype) */
static int dc_log_softmax_backward(DecompB *b, Value *outs, int *nout) {
    Node *g = db_tensor(b, 0, "grad_output"), *y = db_tensor(b, 1, "output");
    int64_t dim = db_int(b, 2, "dim", -1);
    const Value *idt = db_arg(b, 3, "input_dtype");
    Node *r = db_sub(b, g, db_mul(b, db_unary(b, "aten.exp.default", y), db_sum(b, g, &dim, 1, true)));
    if (idt && idt->kind == V_DTYPE && db_dtype(b, g) != idt->dtype) r = db_to(b, r, idt->dtype);
    RET(r);
}

/* _safe_softmax: softmax, 0 on rows that are entirely -inf */
static int dc_safe_softmax(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t dim = db_int(b, 1, "dim", -1);
    const Value *dt = db_arg(b, 2, "dtype");
    Node *out = dt && dt->kind == V_DTYPE ? db_op(b, "aten._softmax.default", VN(db_to(b, x, dt->dtype)), VI(dim), VB(false))
                                         : db_op(b, "aten._softmax.default", VN(x), VI(dim), VB(false));
    Node *masked = db_op(b, "aten.eq.Scalar", VN(x), VF(-INFINITY));
    Node *rows = db_op(b, "aten.all.dim", VN(masked), VI(dim), VB(true));
    RET(db_where(b, rows, db_full_like(b, out, 0, DT_INVALID), out));
}

/* log_sigmoid_forward: (min(0, x) - log1p(exp(-|x|)), buffer exp(-|x|)) */
static int dc_log_sigmoid_forward(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    Node *mn = db_op(b, "aten.clamp_max.default", VN(x), VI(0));
    Node *z = db_unary(b, "aten.exp.default", db_unary(b, "aten.neg.default", db_unary(b, "aten.abs.default", x)));
    outs[0] = VN(db_sub(b, mn, db_unary(b, "aten.log1p.default", z)));
    outs[1] = VN(z);
    *nout = 2;
    return b->failed ? -1 : 0;
}

/* _prelu_kernel: where(self > 0, self, weight * self) */
static int dc_prelu(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *w = db_tensor(b, 1, "weight");
    RET(db_where(b, db_op(b, "aten.gt.Scalar", VN(x), VI(0)), x, db_mul(b, w, x)));
}

/* glu: first half * sigmoid(second half) along dim */
static int dc_glu(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int nd = db_ndim(b, x), d = db_wrap_dim(b, db_int(b, 1, "dim", -1), nd);
    int64_t n;
    if (!db_size_const(b, x, d, &n)) return db_fail(b, "glu of a symbolic size");
    if (n % 2) return db_fail(b, "Halving dimension must be even, but dimension %d is size %lld", d, (long long)n);
    Node *a = db_slice(b, x, d, VI(0), VI(n / 2), 1), *c = db_slice(b, x, d, VI(n / 2), VI(n), 1);
    RET(db_mul(b, a, db_unary(b, "aten.sigmoid.default", c)));
}

/* native_dropout_backward(grad, mask, scale) = grad * (mask * scale) */
static int dc_dropout_backward(DecompB *b, Value *outs, int *nout) {
    Node *g = db_tensor(b, 0, "grad_output"), *m = db_tensor(b, 1, "mask");
    RET(db_clone(b, db_mul(b, g, db_muls(b, db_to(b, m, db_dtype(b, g)), db_float(b, 2, "scale", 1)))));
}

/* embedding_dense_backward: index_put-accumulate of the grads into num_weights rows */
static int dc_embedding_backward(DecompB *b, Value *outs, int *nout) {
    Node *g = db_tensor(b, 0, "grad_output"), *idx = db_tensor(b, 1, "indices");
    int64_t nw = db_int(b, 2, "num_weights", 0), pad = db_int(b, 3, "padding_idx", -1);
    if (db_bool(b, 4, "scale_grad_by_freq", false)) return db_fail(b, "scale_grad_by_freq is not supported");
    DType dt = db_dtype(b, g), comp = db_opmath(dt);
    Node *gc = db_to(b, g, comp);
    idx = db_to(b, idx, DT_I64);
    Node *mask = unsqueeze_to(b, db_op(b, "aten.eq.Scalar", VN(idx), VI(pad)), db_ndim(b, gc));
    Node *grad = db_op(b, "aten.masked_fill.Scalar", VN(gc), VN(mask), VI(0));
    Value shape[MI_MAX_DIMS];
    int ni = db_ndim(b, idx), ng = db_ndim(b, gc), n = 0;
    shape[n++] = VI(nw);
    for (int i = ni; i < ng; i++) shape[n++] = db_size_val(b, gc, i);
    Kwarg kw[1] = {{"dtype", VDT(comp)}};
    Node *z = db_call(b, "aten.zeros.default", DBV(db_vlist(b, shape, n)), kw, 1);
    Value items[1] = {VN(idx)};
    RET(db_to(b, db_op(b, "aten._unsafe_index_put.default", VN(z), db_vlist(b, items, 1), VN(grad), VB(true)), dt));
}

/* ---- losses ---- */

static Node *apply_reduction(DecompB *b, Node *loss, int64_t r) {
    if (r == 1) return db_op(b, "aten.mean.default", VN(loss));
    if (r == 2) return db_op(b, "aten.sum.default", VN(loss));
    return loss;
}

static int dc_mse_loss(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target");
    Node *d = db_sub(b, x, t);
    RET(apply_reduction(b, db_op(b, "aten.pow.Tensor_Scalar", VN(d), VI(2)), db_int(b, 2, "reduction", 1)));
}

/* refs.huber_loss: where(|d| < delta, 0.5 d^2, delta (|d| - 0.5 delta)) */
static int dc_huber_loss(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target");
    double delta = db_float(b, 3, "delta", 1.0);
    Node *z = db_unary(b, "aten.abs.default", db_sub(b, x, t));
    Node *l = db_where(b, db_op(b, "aten.lt.Scalar", VN(z), VF(delta)), db_muls(b, db_mul(b, z, z), 0.5),
                       db_muls(b, db_adds(b, z, -0.5 * delta), delta));
    RET(apply_reduction(b, l, db_int(b, 2, "reduction", 1)));
}

/* decompositions.smooth_l1_loss: where(|d| < beta, 0.5 d^2 / beta, |d| - 0.5 beta) */
static int dc_smooth_l1_loss(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target");
    double beta = db_float(b, 3, "beta", 1.0);
    Node *l = db_unary(b, "aten.abs.default", db_sub(b, x, t));
    if (beta == 0) RET(apply_reduction(b, l, db_int(b, 2, "reduction", 1)));
    Node *sq = db_op(b, "aten.div.Tensor", VN(db_muls(b, db_op(b, "aten.pow.Tensor_Scalar", VN(l), VI(2)), 0.5)), VF(beta));
    l = db_where(b, db_op(b, "aten.lt.Scalar", VN(l), VF(beta)), sq, db_adds(b, l, -0.5 * beta));
    RET(apply_reduction(b, l, db_int(b, 2, "reduction", 1)));
}

/* soft_margin_loss: log1p(exp(-input * target)) */
static int dc_soft_margin_loss(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "input"), *t = db_tensor(b, 1, "target");
    Node *l = db_unary(b, "aten.log1p.default", db_unary(b, "aten.exp.default", db_mul(b, db_unary(b, "aten.neg.default", x), t)));
    RET(apply_reduction(b, l, db_int(b, 2, "reduction", 1)));
}

/* binary_cross_entropy: (t - 1) max(log1p(-x), -100) - t max(log(x), -100), times weight */
static int dc_bce(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target"), *w = db_opt_tensor(b, 2, "weight");
    Node *m100 = db_full_like(b, db_op(b, "aten.sum.default", VN(x)), -100, DT_INVALID);
    Node *l1 = db_binary(b, "aten.maximum.default", db_unary(b, "aten.log1p.default", db_unary(b, "aten.neg.default", x)), m100);
    Node *l2 = db_binary(b, "aten.maximum.default", db_unary(b, "aten.log.default", x), m100);
    Node *l = db_sub(b, db_mul(b, db_op(b, "aten.sub.Tensor", VN(t), VI(1)), l1), db_mul(b, t, l2));
    if (w) l = db_mul(b, l, w);
    RET(apply_reduction(b, l, db_int(b, 3, "reduction", 1)));
}

/* decompositions.binary_cross_entropy_with_logits */
static int dc_bce_logits(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target");
    Node *w = db_opt_tensor(b, 2, "weight"), *pw = db_opt_tensor(b, 3, "pos_weight");
    Node *maxv = db_op(b, "aten.clamp_min.default", VN(db_unary(b, "aten.neg.default", x)), VI(0));
    Node *lse = db_unary(b, "aten.log.default", db_add(b, db_unary(b, "aten.exp.default", db_unary(b, "aten.neg.default", maxv)),
                                                     db_unary(b, "aten.exp.default", db_sub(b, db_unary(b, "aten.neg.default", x), maxv))));
    Node *l;
    if (pw) {
        Node *lw = db_adds(b, db_mul(b, db_op(b, "aten.sub.Tensor", VN(pw), VI(1)), t), 1);
        l = db_add(b, db_mul(b, db_rsubs(b, 1, t), x), db_mul(b, lw, db_add(b, lse, maxv)));
    } else {
        l = db_add(b, db_add(b, db_mul(b, db_rsubs(b, 1, t), x), maxv), lse);
    }
    if (w) l = db_mul(b, l, w);
    RET(apply_reduction(b, l, db_int(b, 4, "reduction", 1)));
}

/* decompositions._nll_loss_forward: (loss, total_weight) */
static int dc_nll_loss_forward(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target"), *w = db_opt_tensor(b, 2, "weight");
    int64_t red = db_int(b, 3, "reduction", 1), ign = db_int(b, 4, "ignore_index", -100);
    int nd = db_ndim(b, x), cd = nd < 2 ? 0 : 1;
    Node *wv = NULL;
    if (w) {
        if (nd > 1) {
            Value shape[MI_MAX_DIMS];
            for (int i = 0; i < nd; i++) shape[i] = i == cd ? db_size_val(b, w, 0) : VI(1);
            wv = db_view(b, w, db_vlist(b, shape, nd));
        } else wv = w;
        x = db_mul(b, x, wv);
    }
    Node *valid = db_op(b, "aten.ne.Scalar", VN(t), VI(ign));
    Node *safe = db_op(b, "aten.where.ScalarOther", VN(valid), VN(t), VI(0));
    Node *safe_ = db_unsqueeze(b, safe, cd);
    Node *res = db_unary(b, "aten.neg.default", db_op(b, "aten.squeeze.dim", VN(db_op(b, "aten.gather.default", VN(x), VI(cd), VN(safe_))), VI(cd)));
    res = db_op(b, "aten.where.ScalarOther", VN(valid), VN(res), VI(0));
    if (red == 0 && nd > 1) {
        outs[0] = VN(res);
        outs[1] = VN(db_full_like(b, db_op(b, "aten.sum.default", VN(x)), 0, DT_INVALID));
        *nout = 2;
        return b->failed ? -1 : 0;
    }
    Node *tw;
    if (w) {
        Node *we = db_expand(b, wv, db_shape_val(b, x));
        Node *ws = db_op(b, "aten.squeeze.dim", VN(db_op(b, "aten.gather.default", VN(we), VI(cd), VN(safe_))), VI(cd));
        tw = db_op(b, "aten.sum.default", VN(db_op(b, "aten.where.ScalarOther", VN(valid), VN(ws), VI(0))));
    } else tw = db_to(b, db_op(b, "aten.sum.default", VN(valid)), db_dtype(b, x));
    if (red == 2) res = db_op(b, "aten.sum.default", VN(res));
    else if (red == 1) res = db_div(b, db_op(b, "aten.sum.default", VN(res)), tw);
    outs[0] = VN(res);
    outs[1] = VN(tw);
    *nout = 2;
    return b->failed ? -1 : 0;
}

/* decompositions.multi_margin_loss */
static int dc_multi_margin_loss(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target"), *w = db_opt_tensor(b, 4, "weight");
    int64_t p = db_int(b, 2, "p", 1), red = db_int(b, 5, "reduction", 1);
    double margin = db_float(b, 3, "margin", 1);
    if (p != 1 && p != 2) return db_fail(b, "only p == 1 and p == 2 supported");
    if (db_ndim(b, x) < 2) x = db_view(b, x, db_ilist(b, (int64_t[]){1, -1}, 2));
    if (db_ndim(b, t) < 1) t = db_view(b, t, db_ilist(b, (int64_t[]){1}, 1));
    int64_t dim;
    if (!db_size_const(b, x, 1, &dim)) return db_fail(b, "symbolic class count");
    t = db_unsqueeze(b, t, 1);
    Node *u = db_op(b, "aten.gather.default", VN(x), VI(1), VN(t));
    Node *z = db_add(b, db_rsubs(b, margin, u), x);
    z = db_op(b, "aten.clamp_min.default", VN(z), VI(0));
    if (p == 2) z = db_mul(b, z, z);
    if (w) { Value it[1] = {VN(t)}; z = db_mul(b, z, db_op(b, "aten.index.Tensor", VN(w), db_vlist(b, it, 1))); }
    Node *idx = db_arange(b, VI(dim), DT_I64);
    z = db_op(b, "aten.where.ScalarOther", VN(db_binary(b, "aten.ne.Tensor", idx, t)), VN(z), VI(0));
    if (red == 1) RET(db_op(b, "aten.mean.default", VN(z)));
    if (red == 2) RET(db_op(b, "aten.div.Tensor", VN(db_op(b, "aten.sum.default", VN(z))), VI(dim)));
    RET(db_op(b, "aten.mean.dim", VN(z), db_ilist(b, (int64_t[]){1}, 1)));
}

/* decompositions.multilabel_margin_loss_forward: (loss, is_target) */
static int dc_multilabel_margin_loss(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "target");
    int64_t red = db_int(b, 2, "reduction", 1);
    int ond = db_ndim(b, x);
    Value oshape = db_shape_val(b, t);
    if (ond < 2) { x = db_view(b, x, db_ilist(b, (int64_t[]){1, -1}, 2)); t = db_view(b, t, db_ilist(b, (int64_t[]){1, -1}, 2)); }
    int64_t dim;
    if (!db_size_const(b, x, 1, &dim)) return db_fail(b, "symbolic class count");
    Node *idx = db_arange(b, VI(dim), DT_I64);
    Node *is_end = db_op(b, "aten.eq.Scalar", VN(t), VI(-1));
    Node *end_idx = db_op(b, "aten.amin.default", VN(db_op(b, "aten.where.ScalarOther", VN(is_end), VN(idx), VI(dim))),
                          db_ilist(b, (int64_t[]){-1}, 1), VB(true));
    Node *tmask = db_binary(b, "aten.lt.Tensor", idx, end_idx);
    Node *tidx0 = db_op(b, "aten.where.ScalarOther", VN(tmask), VN(t), VI(0));
    Node *u = db_op(b, "aten.gather.default", VN(x), VI(-1), VN(tidx0));
    Node *tidx1 = db_op(b, "aten.where.ScalarOther", VN(tmask), VN(t), VI(-1));
    Node *is_target = db_op(b, "aten.any.dim", VN(db_binary(b, "aten.eq.Tensor", idx, db_unsqueeze(b, tidx1, -1))), VI(1));
    Node *ut = db_unsqueeze(b, db_op(b, "aten.permute.default", VN(u), db_ilist(b, (int64_t[]){1, 0}, 2)), -1);
    Node *z = db_add(b, db_rsubs(b, 1.0, ut), x);
    z = db_muls(b, db_op(b, "aten.clamp_min.default", VN(z), VI(0)), 1.0 / (double)dim);
    z = db_op(b, "aten.where.ScalarSelf", VN(is_target), VI(0), VN(z));
    Node *loss;
    if (red == 1) loss = db_op(b, "aten.mean.default", VN(db_op(b, "aten.sum.dim_IntList", VN(z), db_ilist(b, (int64_t[]){0, -1}, 2))));
    else if (red == 2) loss = db_op(b, "aten.sum.default", VN(z));
    else {
        loss = db_op(b, "aten.sum.dim_IntList", VN(z), db_ilist(b, (int64_t[]){0, -1}, 2));
        if (ond < 2) loss = db_op(b, "aten.squeeze.dim", VN(loss), VI(0));
    }
    is_target = db_to(b, is_target, db_dtype(b, t));
    outs[0] = VN(loss);
    outs[1] = VN(db_reshape(b, is_target, oshape));
    *nout = 2;
    return b->failed ? -1 : 0;
}

#define D(name, flags, fn, ind, doc) DECOMP_ROW(name, flags, fn, ind, doc)
#define DT(name, fn, ind, doc) {name, OPF_TUPLE, op_infer_generic, decomp_eval, doc, decomp_shape, &(const DecompDef){name, fn, ind}}
const OpDef ops_decomp_nn_table[] = {
    DT("aten.native_batch_norm.default", dc_native_batch_norm, true, "(out, save_mean, save_invstd); running stats updated when training"),
    DT("aten._native_batch_norm_legit.default", dc_bn_legit, true, "(out, save_mean, save_rstd); running stats updated in place"),
    DT("aten._native_batch_norm_legit.no_stats", dc_bn_no_stats, true, "(out, save_mean, save_rstd) without running stats"),
    DT("aten._native_batch_norm_legit_no_training.default", dc_bn_no_training, true, "inference batch norm with running stats"),
    DT("aten._batch_norm_with_update.default", dc_bn_with_update, true, "training batch norm updating running stats"),
    DT("aten.native_group_norm.default", dc_group_norm, true, "(out, mean, rstd) over channel groups"),
    DT("aten.native_group_norm_backward.default", dc_group_norm_backward, true, "(grad_input, grad_weight, grad_bias) of group norm"),
    DT("aten.native_layer_norm_backward.default", dc_layer_norm_backward, true, "(grad_input, grad_weight, grad_bias) of layer norm"),
    DT("aten._fused_rms_norm.default", dc_fused_rms_norm, true, "(x * rsqrt(mean(x^2) + eps) * weight, rstd) over the normalized dims"),
    DT("aten._fused_rms_norm_backward.default", dc_fused_rms_norm_backward, true, "(grad_input, grad_weight) of rms norm"),
    D("aten._softmax_backward_data.default", 0, dc_softmax_backward, false, "grad of softmax"),
    D("aten._log_softmax_backward_data.default", 0, dc_log_softmax_backward, true, "grad of log_softmax"),
    D("aten._safe_softmax.default", 0, dc_safe_softmax, true, "softmax, 0 on all -inf rows"),
    DT("aten.log_sigmoid_forward.default", dc_log_sigmoid_forward, true, "(log sigmoid, buffer)"),
    D("aten._prelu_kernel.default", OPF_POINTWISE, dc_prelu, true, "x > 0 ? x : weight * x"),
    D("aten.glu.default", 0, dc_glu, false, "first half * sigmoid(second half)"),
    D("aten.native_dropout_backward.default", OPF_POINTWISE, dc_dropout_backward, true, "grad * mask * scale"),
    D("aten.embedding_dense_backward.default", 0, dc_embedding_backward, true, "grad of embedding: rows summed into num_weights"),
    D("aten.mse_loss.default", 0, dc_mse_loss, true, "mean squared error"),
    D("aten.huber_loss.default", 0, dc_huber_loss, true, "Huber loss"),
    D("aten.smooth_l1_loss.default", 0, dc_smooth_l1_loss, true, "smooth L1 loss"),
    D("aten.soft_margin_loss.default", 0, dc_soft_margin_loss, true, "log(1 + exp(-x y))"),
    D("aten.binary_cross_entropy.default", 0, dc_bce, true, "binary cross entropy of probabilities"),
    D("aten.binary_cross_entropy_with_logits.default", 0, dc_bce_logits, true, "binary cross entropy of logits"),
    DT("aten.nll_loss_forward.default", dc_nll_loss_forward, true, "(loss, total_weight)"),
    DT("aten.nll_loss2d_forward.default", dc_nll_loss_forward, true, "(loss, total_weight) over images"),
    D("aten.multi_margin_loss.default", 0, dc_multi_margin_loss, true, "multi-class hinge loss"),
    DT("aten.multilabel_margin_loss_forward.default", dc_multilabel_margin_loss, true, "(loss, is_target)"),
};
const int ops_decomp_nn_count = sizeof ops_decomp_nn_table / sizeof ops_decomp_nn_table[0];
