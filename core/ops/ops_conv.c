/* ops_conv.c — aten.convolution (1-, 2- and 3-D, stride, padding, dilation, groups; not
 * transposed), the extern kernel CNN graphs keep after decomposition. The reference
 * implementation is a direct loop accumulating in double: slow, simple, obviously right. */
#include "ops/ops_impl.h"

#include <string.h>

typedef struct ConvArgs {
    TensorMeta *x, *w, *b;
    int nsp;                               /* spatial dims */
    int64_t stride[3], pad[3], dil[3], groups;
} ConvArgs;

static int conv_list(ShapeArgs *sa, ArgRef a, const char *what, int nsp, int64_t dflt, int64_t *out) {
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
    if (arg_bool(sa_arg(sa, 6, "transposed"), false)) return sa_err(sa, "transposed convolution is not supported");
    if (conv_list(sa, sa_arg(sa, 3, "stride"), "stride", c->nsp, 1, c->stride) ||
        conv_list(sa, sa_arg(sa, 4, "padding"), "padding", c->nsp, 0, c->pad) ||
        conv_list(sa, sa_arg(sa, 5, "dilation"), "dilation", c->nsp, 1, c->dil)) return -1;
    c->groups = 1;
    ArgRef ag = sa_arg(sa, 8, "groups");
    if (arg_present(ag) && sa_const_int(sa, ag, "groups", &c->groups)) return -1;
    if (c->groups < 1) return sa_err(sa, "groups must be positive");
    for (int i = 0; i < c->nsp; i++)
        if (c->stride[i] < 1 || c->dil[i] < 1 || c->pad[i] < 0) return sa_err(sa, "stride/dilation must be >= 1 and padding >= 0");
    int64_t cin, cout, wcin;
    if (!sym_is_int(c->x->size[1], &cin) || !sym_is_int(c->w->size[0], &cout) || !sym_is_int(c->w->size[1], &wcin))
        return sa_err(sa, "channel counts must be constants");
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
    for (int i = 0; i < c.nsp; i++) {
        /* (in + 2p - d*(k-1) - 1) // s + 1 */
        Expr *k = c.w->size[2 + i];
        Expr *num = sym_sub(S, sym_add(S, c.x->size[2 + i], sym_int(S, 2 * c.pad[i])),
                            sym_add(S, sym_mul(S, sym_int(S, c.dil[i]), sym_sub(S, k, sym_int(S, 1))), sym_int(S, 1)));
        int64_t v;
        if (sym_is_int(num, &v) && v < 0) return sa_err(sa, "kernel is larger than the padded input in spatial dim %d", i);
        out->size[2 + i] = sym_add(S, sym_floordiv(S, num, sym_int(S, c.stride[i])), sym_int(S, 1));
    }
    meta_contiguous_strides(sa, out);
    return 0;
}

static int conv_eval(const OpCall *call, IValue *out) {
    ShapeArgs sa;
    sa_from_call(&sa, call);
    ConvArgs c;
    TensorMeta m;
    int n, rc = -1;
    Tensor *o = NULL;
    if (conv_parse(&sa, &c) || ev_shape(&sa, &m, &n) || !(o = ev_new(&sa, &m))) goto done;
    Tensor *x = ev_tensor(sa_arg(&sa, 0, "input")), *w = ev_tensor(sa_arg(&sa, 1, "weight"));
    Tensor *b = c.b ? ev_tensor(sa_arg(&sa, 2, "bias")) : NULL;
    /* pad everything to 3 spatial dims of size 1 */
    int64_t X[3] = {1, 1, 1}, K[3] = {1, 1, 1}, O[3] = {1, 1, 1}, st[3] = {1, 1, 1}, pd[3] = {0}, dl[3] = {1, 1, 1};
    int64_t xs[3] = {0}, ws[3] = {0}, os[3] = {0};
    int off = 3 - c.nsp;
    for (int i = 0; i < c.nsp; i++) {
        X[off + i] = x->size[2 + i]; K[off + i] = w->size[2 + i]; O[off + i] = o->size[2 + i];
        st[off + i] = c.stride[i]; pd[off + i] = c.pad[i]; dl[off + i] = c.dil[i];
        xs[off + i] = x->stride[2 + i]; ws[off + i] = w->stride[2 + i]; os[off + i] = o->stride[2 + i];
    }
    int64_t N = x->size[0], Cout = w->size[0], Cg = w->size[1], G = c.groups, Og = Cout / G;
    for (int64_t bn = 0; bn < N; bn++)
        for (int64_t co = 0; co < Cout; co++) {
            int64_t g = co / Og;
            double bias = b ? tensor_get_f(b, co) : 0;
            for (int64_t o0 = 0; o0 < O[0]; o0++)
                for (int64_t o1 = 0; o1 < O[1]; o1++)
                    for (int64_t o2 = 0; o2 < O[2]; o2++) {
                        double acc = bias;
                        for (int64_t ci = 0; ci < Cg; ci++) {
                            int64_t xc = x->offset + bn * x->stride[0] + (g * Cg + ci) * x->stride[1];
                            int64_t wc = w->offset + co * w->stride[0] + ci * w->stride[1];
                            for (int64_t k0 = 0; k0 < K[0]; k0++) {
                                int64_t i0 = o0 * st[0] - pd[0] + k0 * dl[0];
                                if (i0 < 0 || i0 >= X[0]) continue;
                                for (int64_t k1 = 0; k1 < K[1]; k1++) {
                                    int64_t i1 = o1 * st[1] - pd[1] + k1 * dl[1];
                                    if (i1 < 0 || i1 >= X[1]) continue;
                                    for (int64_t k2 = 0; k2 < K[2]; k2++) {
                                        int64_t i2 = o2 * st[2] - pd[2] + k2 * dl[2];
                                        if (i2 < 0 || i2 >= X[2]) continue;
                                        acc += tensor_load_f(x, xc + i0 * xs[0] + i1 * xs[1] + i2 * xs[2]) *
                                               tensor_load_f(w, wc + k0 * ws[0] + k1 * ws[1] + k2 * ws[2]);
                                    }
                                }
                            }
                        }
                        tensor_store_f(o, o->offset + bn * o->stride[0] + co * o->stride[1] + o0 * os[0] + o1 * os[1] + o2 * os[2], acc);
                    }
        }
    ev_out_tensor(out, o);
    o = NULL;
    rc = 0;
done:
    tensor_unref(o);
    ev_end(&sa);
    return rc;
}

const OpDef ops_conv_table[] = {
    {"aten.convolution.default", OPF_EXTERN, op_infer_generic, conv_eval,
     "N-d convolution (stride, padding, dilation, groups; not transposed)", shape_conv, NULL},
};
const int ops_conv_count = sizeof ops_conv_table / sizeof ops_conv_table[0];
