/* ops_window.c — the window factories of torch.stft / istft users: hann_window, hamming_window,
 * blackman_window, bartlett_window and kaiser_window, as ATen's TensorFactories.cpp defines them
 * (Inductor neither lowers nor decomposes them: an implicit FallbackKernel runs this reference).
 * Each is periodic by default: a periodic window of N is the symmetric window of N + 1 without its
 * last point. Computed in double, stored in the dtype (default float32). */
#include "ops/ops_impl.h"
#include "ops/special.h"

#include <math.h>
#include <string.h>

enum { W_HANN, W_HAMMING, W_BLACKMAN, W_BARTLETT, W_KAISER };
typedef struct WindowSpec { int kind; } WindowSpec;

/* the arguments: window_length, then (overload by overload) periodic, alpha, beta — hamming's
 * alpha/beta or kaiser's beta (default 12) */
typedef struct WinArgs { int64_t n; bool periodic; double alpha, beta; } WinArgs;

static int win_args(ShapeArgs *sa, WinArgs *w) {
    const WindowSpec *sp = sa->op->data;
    if (sa_const_int(sa, sa_arg(sa, 0, "window_length"), "window_length", &w->n)) return -1;
    if (w->n < 0) return sa_err(sa, "window_length must be non-negative, got %lld", (long long)w->n);
    w->periodic = arg_bool(sa_arg(sa, 1, "periodic"), true);
    w->alpha = sp->kind == W_HAMMING ? 0.54 : 0.5;
    w->beta = sp->kind == W_HAMMING ? 0.46 : sp->kind == W_KAISER ? 12.0 : 0.5;
    DType t;
    ArgRef a = sa_arg(sa, 2, sp->kind == W_KAISER ? "beta" : "alpha"), b = sa_arg(sa, 3, "beta");
    if (sp->kind == W_HAMMING && arg_present(a) && sa_scalar(sa, a, "alpha", &w->alpha, &t)) return -1;
    if (sp->kind == W_HAMMING && arg_present(b) && sa_scalar(sa, b, "beta", &w->beta, &t)) return -1;
    if (sp->kind == W_KAISER && arg_present(a) && sa_scalar(sa, a, "beta", &w->beta, &t)) return -1;
    return 0;
}

static int shape_window(ShapeArgs *sa, TensorMeta *out, int *nout) {
    WinArgs w;
    if (win_args(sa, &w)) return -1;
    DType dt = arg_dtype(sa_arg(sa, -1, "dtype"), default_float());
    if (!dtype_is_float(dt)) return sa_err(sa, "expected a floating point dtype, got %s", dtype_abbrev(dt));
    meta_alloc(sa, out, dt, 1, sa->eval ? (Device){DEV_CPU, -1} : arg_device(sa_arg(sa, -1, "device"), (Device){DEV_CPU, -1}));
    out->size[0] = sym_int(sa->sym, w.n);
    out->stride[0] = sym_int(sa->sym, 1);
    *nout = 1;
    return 0;
}

/* point k of the symmetric window of m points (m >= 2). Examples (m = 5): hann 0, .5, 1, .5, 0;
 * bartlett 0, .5, 1, .5, 0; blackman 0.42 - 0.5 cos(2 pi k / 4) + 0.08 cos(4 pi k / 4). */
static double win_point(int kind, const WinArgs *w, int64_t k, int64_t m) {
    double x = (double)k, d = (double)(m - 1);
    switch (kind) {
    case W_HANN: case W_HAMMING: return w->alpha - w->beta * cos(x * (2 * M_PI / d));
    case W_BLACKMAN: return 0.08 * cos(4 * x * (M_PI / d)) - 0.5 * cos(2 * x * (M_PI / d)) + 0.42;
    case W_BARTLETT: {   /* 2k / (m - 1) rising, 2 - 2k / (m - 1) from ((m - 1) >> 1) + 1 on */
        double r = x * (2 / d);
        return k >= ((m - 1) >> 1) + 1 ? 2 - r : r;
    }
    default: {           /* I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (m - 1) / 2 */
        double a = d / 2, u = (x - a) / a;
        return sf_i0(w->beta * sqrt(fmax(0, 1 - u * u))) / sf_i0(w->beta);
    }
    }
}

static int window_fill(ShapeArgs *sa, Tensor *o) {
    WinArgs w;
    if (win_args(sa, &w)) return -1;
    const WindowSpec *sp = sa->call->op->data;
    if (w.n == 1) { tensor_set_f(o, 0, 1); return 0; }   /* ATen: ones(1) */
    int64_t m = w.periodic ? w.n + 1 : w.n;
    for (int64_t k = 0; k < w.n; k++) tensor_set_f(o, k, win_point(sp->kind, &w, k, m));
    return 0;
}
static int window_eval(const OpCall *c, IValue *out) { return ev_run(c, out, window_fill); }

#define W(name, kind, doc) {name, OPF_CONSTRUCTOR, op_infer_generic, window_eval, doc, shape_window, &(const WindowSpec){kind}}
const OpDef ops_window_table[] = {
    W("aten.hann_window.default", W_HANN, "periodic Hann window: 0.5 - 0.5 cos(2 pi k / N)"),
    W("aten.hann_window.periodic", W_HANN, "Hann window, periodic or symmetric"),
    W("aten.hamming_window.default", W_HAMMING, "periodic Hamming window: 0.54 - 0.46 cos(2 pi k / N)"),
    W("aten.hamming_window.periodic", W_HAMMING, "Hamming window, periodic or symmetric"),
    W("aten.hamming_window.periodic_alpha", W_HAMMING, "Hamming window alpha - 0.46 cos(2 pi k / N)"),
    W("aten.hamming_window.periodic_alpha_beta", W_HAMMING, "generalized Hamming window alpha - beta cos(2 pi k / N)"),
    W("aten.blackman_window.default", W_BLACKMAN, "periodic Blackman window"),
    W("aten.blackman_window.periodic", W_BLACKMAN, "Blackman window, periodic or symmetric"),
    W("aten.bartlett_window.default", W_BARTLETT, "periodic Bartlett (triangular) window"),
    W("aten.bartlett_window.periodic", W_BARTLETT, "Bartlett window, periodic or symmetric"),
    W("aten.kaiser_window.default", W_KAISER, "periodic Kaiser window, beta 12"),
    W("aten.kaiser_window.periodic", W_KAISER, "Kaiser window, periodic or symmetric, beta 12"),
    W("aten.kaiser_window.beta", W_KAISER, "Kaiser window I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta)"),
};
const int ops_window_count = sizeof ops_window_table / sizeof ops_window_table[0];
