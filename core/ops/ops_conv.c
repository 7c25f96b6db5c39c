/* ops_conv.c — aten.convolution (1-, 2- and 3-D, stride, padding, dilation, groups, also
 * transposed) and aten.convolution_backward, the extern kernels CNN graphs keep after
 * decomposition. The reference implementation is three direct loops over one regular
 * convolution's geometry, accumulating in double: forward (x -> out), the input gradient
 * (grad_out -> grad_x, which is also a transposed convolution's forward) and the weight gradient.
 * Slow, simple, obviously right. */
#include "ops/ops_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct ConvArgs {
    TensorMeta *x, *w, *b;
    int nsp;                               /* spatial dims */
    int64_t stride[3], pad[3], dil[3], groups, outpad[3];
    bool transposed;
} ConvArgs;

int ops_conv_list(ShapeArgs *sa, ArgRef a, const char *what, int nsp, int64_t dflt, int64_t *out) {
    int64_t v[8];
    int n = 0;
    for (int i = 0; i < nsp; i++) out[i] = dflt;
    if (!arg_present(a)) return 0;
    if (sa_const_int_list(sa, a, what, v, &n, 8)) return -1;
    if (n != 1 && n != nsp) return sa_err(sa, "'%s' needs 1 or %d values, got %d", what, nsp, n);
    for (int i = 0; i < nsp; i++) out[i] = v[n == 1 ? 0 : i];
    return 0;
}

static int conv_parse(ShapeArgs *sa, ConvArgs *c) {
    memset(c, 0, sizeof *c);
    if (sa_tensor(sa, sa_arg(sa, 0, "input"), "input", &c->x) || sa_tensor(sa, sa_arg(sa, 1, "weight"), "weight", &c->w)) return -1;
    ArgRef ab = sa_arg(sa, 2, "bias");
    if (arg_present(ab) && sa_tensor(sa, ab, "bias", &c->b)) return -1;
    c->nsp = c->x->ndim - 2;
    if (c->nsp < 1 || c->nsp > 3) return sa_err(sa, "expects a 3-D, 4-D or 5-D input [N, C, ...], got %d-D", c->x->ndim);
    if (c->w->ndim != c->x->ndim) return sa_err(sa, "weight has rank %d but the input has rank %d", c->w->ndim, c->x->ndim);
    if (ops_conv_list(sa, sa_arg(sa, 3, "stride"), "stride", c->nsp, 1, c->stride) ||
        ops_conv_list(sa, sa_arg(sa, 4, "padding"), "padding", c->nsp, 0, c->pad) ||
        ops_conv_list(sa, sa_arg(sa, 5, "dilation"), "dilation", c->nsp, 1, c->dil)) return -1;
    c->groups = 1;
    ArgRef ag = sa_arg(sa, 8, "groups");
    if (arg_present(ag) && sa_const_int(sa, ag, "groups", &c->groups)) return -1;
    if (c->groups < 1) return sa_err(sa, "groups must be positive");
    for (int i = 0; i < c->nsp; i++)
        if (c->stride[i] < 1 || c->dil[i] < 1 || c->pad[i] < 0) return sa_err(sa, "stride/dilation must be >= 1 and padding >= 0");
    int64_t cin, cout, wcin;
    if (!sym_is_int(c->x->size[1], &cin) || !sym_is_int(c->w->size[0], &cout) || !sym_is_int(c->w->size[1], &wcin))
        return sa_err(sa, "channel counts must be constants");
    c->transposed = arg_bool(sa_arg(sa, 6, "transposed"), false);
    if (c->transposed) {          /* weight [Cin, Cout / groups, k...] */
        if (ops_conv_list(sa, sa_arg(sa, 7, "output_padding"), "output_padding", c->nsp, 0, c->outpad)) return -1;
        if (cin != cout || cin % c->groups) return sa_err(sa, "transposed: input has %lld channels but weight has %lld", (long long)cin, (long long)cout);
        if (c->b && (c->b->ndim != 1 || !ex_eq_int(c->b->size[0], wcin * c->groups))) return sa_err(sa, "bias must have %lld elements", (long long)(wcin * c->groups));
        if (c->w->dtype != c->x->dtype) return sa_err(sa, "input and weight dtypes differ");
        return 0;
    }
    if (cin != wcin * c->groups || cout % c->groups)
        return sa_err(sa, "input has %lld channels but weight expects %lld x %lld groups", (long long)cin, (long long)wcin,
                      (long long)c->groups);
    if (c->b && (c->b->ndim != 1 || !ex_eq_int(c->b->size[0], cout))) return sa_err(sa, "bias must have %lld elements", (long long)cout);
    if (c->w->dtype != c->x->dtype) return sa_err(sa, "input and weight dtypes differ");
    return 0;
}

static int shape_conv(ShapeArgs *sa, TensorMeta *out, int *nout) {
    ConvArgs c;
    *nout = 1;
    if (conv_parse(sa, &c)) return -1;
    SymCtx *S = sa->sym;
    meta_alloc(sa, out, c.x->dtype, c.x->ndim, c.x->device);
    out->size[0] = c.x->size[0];
    out->size[1] = c.w->size[0];
    if (c.transposed) {           /* (in - 1) s - 2p + d (k - 1) + output_padding + 1 */
        out->size[1] = sym_mul(S, c.w->size[1], sym_int(S, c.groups));
        for (int i = 0; i < c.nsp; i++) {
            Expr *k = c.w->size[2 + i];
            out->size[2 + i] = sym_add(S, sym_sub(S, sym_mul(S, sym_sub(S, c.x->size[2 + i], sym_int(S, 1)), sym_int(S, c.stride[i])), sym_int(S, 2 * c.pad[i])),
                                       sym_add(S, sym_mul(S, sym_int(S, c.dil[i]), sym_sub(S, k, sym_int(S, 1))), sym_int(S, c.outpad[i] + 1)));
        }
        meta_suggested_strides(sa, out, meta_is_channels_last(c.w) ? c.w : c.x);   /* backend memory format */
        return 0;
    }
    for (int i = 0; i < c.nsp; i++) {
        /* (in + 2p - d*(k-1) - 1) // s + 1 */
        Expr *k = c.w->size[2 + i];
        Expr *num = sym_sub(S, sym_add(S, c.x->size[2 + i], sym_int(S, 2 * c.pad[i])),
                            sym_add(S, sym_mul(S, sym_int(S, c.dil[i]), sym_sub(S, k, sym_int(S, 1))), sym_int(S, 1)));
        int64_t v;
        if (sym_is_int(num, &v) && v < 0) return sa_err(sa, "kernel is larger than the padded input in spatial dim %d", i);
        out->size[2 + i] = sym_add(S, sym_floordiv(S, num, sym_int(S, c.stride[i])), sym_int(S, 1));
    }
    meta_suggested_strides(sa, out, meta_is_channels_last(c.w) ? c.w : c.x);   /* backend memory format */
    return 0;
}

/* The geometry of one regular convolution: x [N, G*Cg, X...] * w [G*Og, Cg, K...] -> o [N, G*Og, O...]
 * (3 spatial dims, unused ones of size 1); tensors as contiguous double arrays. */
typedef struct Geo { int64_t N, G, Cg, Og, X[3], K[3], O[3], st[3], pd[3], dl[3]; } Geo;

enum { CV_FWD, CV_GRAD_X, CV_GRAD_W };

/* one loop for the three products: i = o * stride - pad + k * dilation links x, w and o */
static void conv_run(const Geo *g, int mode, double *x, double *w, double *o) {
    int64_t Xn = g->X[0] * g->X[1] * g->X[2], On = g->O[0] * g->O[1] * g->O[2], Kn = g->K[0] * g->K[1] * g->K[2];
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t gg = 0; gg < g->G; gg++)
            for (int64_t co = 0; co < g->Og; co++)
                for (int64_t ci = 0; ci < g->Cg; ci++) {
                    double *xp = x + (n * g->G * g->Cg + gg * g->Cg + ci) * Xn;
                    double *op = o + (n * g->G * g->Og + gg * g->Og + co) * On;
                    double *wp = w + ((gg * g->Og + co) * g->Cg + ci) * Kn;
                    for (int64_t o0 = 0; o0 < g->O[0]; o0++)
                        for (int64_t o1 = 0; o1 < g->O[1]; o1++)
                            for (int64_t o2 = 0; o2 < g->O[2]; o2++) {
                                int64_t oq = (o0 * g->O[1] + o1) * g->O[2] + o2;
                                for (int64_t k0 = 0; k0 < g->K[0]; k0++) {
                                    int64_t i0 = o0 * g->st[0] - g->pd[0] + k0 * g->dl[0];
                                    if (i0 < 0 || i0 >= g->X[0]) continue;
                                    for (int64_t k1 = 0; k1 < g->K[1]; k1++) {
                                        int64_t i1 = o1 * g->st[1] - g->pd[1] + k1 * g->dl[1];
                                        if (i1 < 0 || i1 >= g->X[1]) continue;
                                        for (int64_t k2 = 0; k2 < g->K[2]; k2++) {
                                            int64_t i2 = o2 * g->st[2] - g->pd[2] + k2 * g->dl[2];
                                            if (i2 < 0 || i2 >= g->X[2]) continue;
                                            int64_t xq = (i0 * g->X[1] + i1) * g->X[2] + i2, kq = (k0 * g->K[1] + k1) * g->K[2] + k2;
                                            if (mode == CV_FWD) op[oq] += xp[xq] * wp[kq];
                                            else if (mode == CV_GRAD_X) xp[xq] += op[oq] * wp[kq];
                                            else wp[kq] += xp[xq] * op[oq];
                                        }
                                    }
                                }
                            }
                }
}

static double *to_doubles(const Tensor *t) {
    int64_t n = tensor_numel(t);
    double *v = mi_xcalloc((size_t)(n ? n : 1), sizeof *v);
    for (int64_t e = 0; e < n; e++) v[e] = tensor_get_f(t, e);
    return v;
}
static double *zeros(int64_t n) { return mi_xcalloc((size_t)(n ? n : 1), sizeof(double)); }
static void from_doubles(Tensor *t, const double *v) { for (int64_t e = 0; e < tensor_numel(t); e++) tensor_set_f(t, e, v[e]); }

/* the regular convolution's geometry: xs = its input (x space), os = its output space */
static void geo_of(Geo *g, const ConvArgs *c, const Tensor *xs, const Tensor *w, const Tensor *os) {
    memset(g, 0, sizeof *g);
    int off = 3 - c->nsp;
    for (int i = 0; i < 3; i++) { g->X[i] = g->K[i] = g->O[i] = g->st[i] = g->dl[i] = 1; g->pd[i] = 0; }
    for (int i = 0; i < c->nsp; i++) {
        g->X[off + i] = xs->size[2 + i]; g->K[off + i] = w->size[2 + i]; g->O[off + i] = os->size[2 + i];
        g->st[off + i] = c->stride[i]; g->pd[off + i] = c->pad[i]; g->dl[off + i] = c->dil[i];
    }
    g->N = xs->size[0];
    g->G = c->groups;
    g->Cg = w->size[1];
    g->Og = w->size[0] / c->groups;
}

static int conv_fill(ShapeArgs *sa, Tensor *o) {
    ConvArgs c;
    if (conv_parse(sa, &c)) return -1;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "input")), *w = ev_tensor(sa_arg(sa, 1, "weight"));
    Tensor *b = c.b ? ev_tensor(sa_arg(sa, 2, "bias")) : NULL;
    if (!c.transposed) {
        ops_conv_forward(x, w, b, c.nsp, c.stride, c.pad, c.dil, c.groups, o);
        return 0;
    }
    /* transposed: the input gradient of the regular conv whose output space is x */
    Geo g;
    double *xv = to_doubles(x), *wv = to_doubles(w), *ov = zeros(tensor_numel(o));
    geo_of(&g, &c, o, w, x);
    conv_run(&g, CV_GRAD_X, ov, wv, xv);
    if (b) {
        int64_t C = o->size[1], sp = C ? tensor_numel(o) / (o->size[0] ? o->size[0] : 1) / C : 0;
        for (int64_t e = 0; e < tensor_numel(o); e++) ov[e] += tensor_get_f(b, (e / sp) % C);
    }
    from_doubles(o, ov);
    free(xv); free(wv); free(ov);
    return 0;
}
static int conv_eval(const OpCall *call, IValue *out) { return ev_run(call, out, conv_fill); }

void ops_conv_forward(const Tensor *x, const Tensor *w, const Tensor *b, int nsp, const int64_t *stride, const int64_t *pad,
                      const int64_t *dil, int64_t groups, Tensor *o) {
    ConvArgs c = {.nsp = nsp, .groups = groups};
    for (int i = 0; i < nsp; i++) { c.stride[i] = stride[i]; c.pad[i] = pad[i]; c.dil[i] = dil[i]; }
    Geo g;
    geo_of(&g, &c, x, w, o);
    double *xv = to_doubles(x), *wv = to_doubles(w), *ov = zeros(tensor_numel(o));
    conv_run(&g, CV_FWD, xv, wv, ov);
    if (b) {
        int64_t C = o->size[1], sp = C ? tensor_numel(o) / (o->size[0] ? o->size[0] : 1) / C : 0;
        for (int64_t e = 0; e < tensor_numel(o); e++) ov[e] += tensor_get_f(b, (e / sp) % C);
    }
    from_doubles(o, ov);
    free(xv); free(wv); free(ov);
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
 * transposed, output_padding, groups, output_mask) -> (grad_input, grad_weight, grad_bias) */
static int conv_bwd_args(ShapeArgs *sa, ConvArgs *c, TensorMeta **go, bool mask[3]) {
    /* the forward's arguments sit one position later; parse them through a shifted view */
    ShapeArgs s2 = *sa;
    s2.args = sa->args + 1; s2.nargs = sa->nargs - 1;
    if (sa->argv) s2.argv = sa->argv + 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "grad_output"), "grad_output", go)) return -1;
    memset(c, 0, sizeof *c);
    if (sa_tensor(&s2, sa_arg(&s2, 0, "input"), "input", &c->x) || sa_tensor(&s2, sa_arg(&s2, 1, "weight"), "weight", &c->w)) return -1;
    c->nsp = c->x->ndim - 2;
    if (c->nsp < 1 || c->nsp > 3 || c->w->ndim != c->x->ndim || (*go)->ndim != c->x->ndim)
        return sa_err(sa, "expects 3-D to 5-D input, weight and grad_output of the same rank");
    if (ops_conv_list(&s2, sa_arg(&s2, 3, "stride"), "stride", c->nsp, 1, c->stride) ||
        ops_conv_list(&s2, sa_arg(&s2, 4, "padding"), "padding", c->nsp, 0, c->pad) ||
        ops_conv_list(&s2, sa_arg(&s2, 5, "dilation"), "dilation", c->nsp, 1, c->dil) ||
        ops_conv_list(&s2, sa_arg(&s2, 7, "output_padding"), "output_padding", c->nsp, 0, c->outpad)) return -1;
    c->transposed = arg_bool(sa_arg(&s2, 6, "transposed"), false);
    c->groups = 1;
    ArgRef ag = sa_arg(&s2, 8, "groups");
    if (arg_present(ag) && sa_const_int(&s2, ag, "groups", &c->groups)) return -1;
    if (c->groups < 1) return sa_err(sa, "groups must be positive");
    for (int i = 0; i < c->nsp; i++)
        if (c->stride[i] < 1 || c->dil[i] < 1 || c->pad[i] < 0) return sa_err(sa, "stride/dilation must be >= 1 and padding >= 0");
    int64_t mk[3] = {1, 1, 1}, nm = 0;
    int nn = 0;
    ArgRef am = sa_arg(&s2, 9, "output_mask");
    if (arg_present(am)) {
        for (int i = 0; i < 3 && i < arg_list_len(am); i++) { ArgRef it = arg_item(am, i); mk[i] = arg_bool(it, true); nn++; }
    }
    (void)nm; (void)nn;
    for (int i = 0; i < 3; i++) mask[i] = mk[i] != 0;
    int64_t cx, cw0, cw1, cg;
    if (!sym_is_int(c->x->size[1], &cx) || !sym_is_int(c->w->size[0], &cw0) || !sym_is_int(c->w->size[1], &cw1) || !sym_is_int((*go)->size[1], &cg))
        return sa_err(sa, "channel counts must be constants");
    if (c->transposed ? (cx != cw0 || cg != cw1 * c->groups) : (cx != cw1 * c->groups || cg != cw0 || cw0 % c->groups))
        return sa_err(sa, "channel counts of input, weight and grad_output do not match");
    return 0;
}

static int shape_conv_bwd(ShapeArgs *sa, TensorMeta *out, int *nout) {
    ConvArgs c;
    TensorMeta *go;
    bool mask[3];
    if (conv_bwd_args(sa, &c, &go, mask)) return -1;
    /* grad_input and grad_weight in the backend's memory format (ATen's
     * _conv_determine_backend_memory_format: channels-last when input or weight is) */
    const TensorMeta *fmt = meta_is_channels_last(c.w) ? c.w : c.x;
    meta_like(sa, &out[0], c.x, c.x->dtype);
    meta_suggested_strides(sa, &out[0], fmt);
    meta_like(sa, &out[1], c.w, c.w->dtype);
    meta_suggested_strides(sa, &out[1], fmt);
    meta_alloc(sa, &out[2], go->dtype, 1, go->device);
    out[2].size[0] = go->size[1];
    meta_contiguous_strides(sa, &out[2]);
    for (int i = 0; i < 3; i++) if (!mask[i]) out[i].dtype = DT_INVALID;
    *nout = 3;
    return 0;
}

static int conv_bwd_body(ShapeArgs *sa, IValue *out) {
    ConvArgs c;
    TensorMeta *gm, m[3];
    bool mask[3];
    int n, rc = -1;
    Tensor *res[3] = {0};
    if (conv_bwd_args(sa, &c, &gm, mask) || ev_shape(sa, m, &n)) goto done;
    Tensor *go = ev_tensor(sa_arg(sa, 0, "grad_output")), *x = ev_tensor(sa_arg(sa, 1, "input")), *w = ev_tensor(sa_arg(sa, 2, "weight"));
    for (int i = 0; i < 3; i++) if (mask[i] && !(res[i] = ev_new(sa, &m[i]))) goto done;
    Geo g;
    double *gv = to_doubles(go), *xv = to_doubles(x), *wv = to_doubles(w);
    /* regular conv: x space = input, o space = grad_output; transposed: the roles swap */
    Tensor *xs = c.transposed ? go : x, *os = c.transposed ? x : go;
    double *xsv = c.transposed ? gv : xv, *osv = c.transposed ? xv : gv;
    geo_of(&g, &c, xs, w, os);
    if (mask[0]) {
        double *r = zeros(tensor_numel(res[0]));
        if (c.transposed) conv_run(&g, CV_FWD, xsv, wv, r);     /* grad of x (o space) = forward conv of grad_out */
        else conv_run(&g, CV_GRAD_X, r, wv, osv);
        from_doubles(res[0], r);
        free(r);
    }
    if (mask[1]) {
        double *r = zeros(tensor_numel(res[1]));
        conv_run(&g, CV_GRAD_W, xsv, r, osv);
        from_doubles(res[1], r);
        free(r);
    }
    if (mask[2]) {
        int64_t C = go->size[1], per = go->size[0] ? tensor_numel(go) / go->size[0] / (C ? C : 1) : 0;
        for (int64_t ch = 0; ch < C; ch++) {
            double s = 0;
            for (int64_t b = 0; b < go->size[0]; b++) for (int64_t e = 0; e < per; e++) s += gv[(b * C + ch) * per + e];
            tensor_set_f(res[2], ch, s);
        }
    }
    free(gv); free(xv); free(wv);
    ev_out_tuple(out, res, 3);
    memset(res, 0, sizeof res);
    rc = 0;
done:
    for (int i = 0; i < 3; i++) tensor_unref(res[i]);
    return rc;
}
static int conv_bwd_eval(const OpCall *call, IValue *out) { return ev_call(call, out, conv_bwd_body); }

/* ---- im2col / col2im: sliding blocks of a [N,] C, H, W image as columns, and back (summed) ---- */

typedef struct Fold { int64_t k[2], d[2], p[2], s[2], out[2], blocks[2]; } Fold;

/* im2col(input, kernel_size, dilation, padding, stride); col2im(input, output_size, kernel_size,
 * dilation, padding, stride): the block counts 1 + (size + 2p - d(k-1) - 1) / s per spatial dim */
static int fold_args(ShapeArgs *sa, bool col2im, const TensorMeta *x, Fold *f) {
    int b = col2im ? 1 : 0;
    if ((col2im && ops_conv_list(sa, sa_arg(sa, 1, "output_size"), "output_size", 2, 0, f->out)) ||
        ops_conv_list(sa, sa_arg(sa, 1 + b, "kernel_size"), "kernel_size", 2, 0, f->k) ||
        ops_conv_list(sa, sa_arg(sa, 2 + b, "dilation"), "dilation", 2, 1, f->d) ||
        ops_conv_list(sa, sa_arg(sa, 3 + b, "padding"), "padding", 2, 0, f->p) ||
        ops_conv_list(sa, sa_arg(sa, 4 + b, "stride"), "stride", 2, 1, f->s)) return -1;
    if (!col2im) {
        if (x->ndim != 3 && x->ndim != 4) return sa_err(sa, "Expected 3D or 4D (batch mode) tensor for input, got %dD", x->ndim);
        for (int i = 0; i < 2; i++) if (!sym_is_int(x->size[x->ndim - 2 + i], &f->out[i])) return sa_err(sa, "symbolic image size");
    } else if (x->ndim != 2 && x->ndim != 3) return sa_err(sa, "Expected 2D or 3D (batch mode) tensor for input, got %dD", x->ndim);
    for (int i = 0; i < 2; i++) {
        if (f->k[i] < 1 || f->d[i] < 1 || f->s[i] < 1 || f->p[i] < 0) return sa_err(sa, "kernel_size, dilation, stride must be positive and padding non-negative");
        f->blocks[i] = 1 + (f->out[i] + 2 * f->p[i] - f->d[i] * (f->k[i] - 1) - 1) / f->s[i];
        if (f->blocks[i] < 1) return sa_err(sa, "the calculated shape of the array of sliding blocks is non-positive");
    }
    return 0;
}

static int shape_fold(ShapeArgs *sa, TensorMeta *out, int *nout) {
    bool col2im = !strcmp(sa->op->name, "aten.col2im.default");
    TensorMeta *x;
    Fold f;
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &x) || fold_args(sa, col2im, x, &f)) return -1;
    int batched = x->ndim == (col2im ? 3 : 4), nd = col2im ? 2 + batched + 1 : 1 + batched + 1;
    int64_t C;
    if (!sym_is_int(x->size[batched], &C)) return sa_err(sa, "symbolic channel count");
    meta_alloc(sa, out, x->dtype, nd, x->device);
    if (batched) out->size[0] = x->size[0];
    int64_t kk = f.k[0] * f.k[1];
    if (col2im) {
        if (C % kk) return sa_err(sa, "Expected size of input's first non-batch dimension to be divisible by the product of kernel_size, but got %lld", (long long)C);
        int64_t L;
        if (!sym_is_int(x->size[batched + 1], &L) || L != f.blocks[0] * f.blocks[1])
            return sa_err(sa, "expected input.size(-1) to be %lld", (long long)(f.blocks[0] * f.blocks[1]));
        out->size[batched] = sym_int(sa->sym, C / kk);
        out->size[batched + 1] = sym_int(sa->sym, f.out[0]);
        out->size[batched + 2] = sym_int(sa->sym, f.out[1]);
    } else {
        out->size[batched] = sym_int(sa->sym, C * kk);
        out->size[batched + 1] = sym_int(sa->sym, f.blocks[0] * f.blocks[1]);
    }
    meta_contiguous_strides(sa, out);
    return 0;
}

static int fold_fill(ShapeArgs *sa, Tensor *o) {
    bool col2im = !strcmp(sa->call->op->name, "aten.col2im.default");
    TensorMeta *xm;
    Fold f;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &xm) || fold_args(sa, col2im, xm, &f)) return -1;
    Tensor *x = ev_tensor(sa_arg(sa, 0, "self"));
    Tensor *img = col2im ? o : x, *cols = col2im ? x : o;
    int batched = img->ndim == 4;
    int64_t N = batched ? img->size[0] : 1, C = img->size[batched], H = f.out[0], W = f.out[1];
    int64_t BH = f.blocks[0], BW = f.blocks[1], KH = f.k[0], KW = f.k[1];
    if (col2im) for (int64_t e = 0; e < tensor_numel(o); e++) tensor_set_f(o, e, 0);
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
                for (int64_t kj = 0; kj < KW; kj++)
                    for (int64_t bh = 0; bh < BH; bh++)
                        for (int64_t bw = 0; bw < BW; bw++) {
                            int64_t h = bh * f.s[0] - f.p[0] + ki * f.d[0], w = bw * f.s[1] - f.p[1] + kj * f.d[1];
                            int64_t ci = ((b * C + c) * KH * KW + ki * KW + kj) * BH * BW + bh * BW + bw;
                            bool in = h >= 0 && h < H && w >= 0 && w < W;
                            int64_t ii = ((b * C + c) * H + h) * W + w;
                            if (col2im) { if (in) tensor_set_f(o, ii, tensor_get_f(o, ii) + tensor_get_f(cols, ci)); }
                            else tensor_set_f(o, ci, in ? tensor_get_f(img, ii) : 0);
                        }
    return 0;
}
static int fold_eval(const OpCall *call, IValue *out) { return ev_run(call, out, fold_fill); }

const OpDef ops_conv_table[] = {
    {"aten.im2col.default", 0, op_infer_generic, fold_eval, "sliding blocks of an image as columns (unfold)", shape_fold, NULL},
    {"aten.col2im.default", 0, op_infer_generic, fold_eval, "columns summed back into an image (fold)", shape_fold, NULL},
    {"aten.convolution.default", OPF_EXTERN, op_infer_generic, conv_eval,
     "N-d convolution (stride, padding, dilation, groups, transposed)", shape_conv, NULL},
    {"aten.convolution_backward.default", OPF_EXTERN | OPF_TUPLE, op_infer_generic, conv_bwd_eval,
     "(grad_input, grad_weight, grad_bias) of a convolution, as output_mask asks", shape_conv_bwd, NULL},
};
const int ops_conv_count = sizeof ops_conv_table / sizeof ops_conv_table[0];
