/* ops_fft.c — the three ATen FFT primitives every torch.fft function (and stft) is traced to:
 *   _fft_r2c(self, dim, normalization, onesided)      real -> complex, forward
 *   _fft_c2r(self, dim, normalization, last_dim_size) complex (one-sided) -> real, backward
 *   _fft_c2c(self, dim, normalization, forward)       complex -> complex
 * normalization is ATen's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n being the product
 * of the signal sizes of the transformed dims (SpectralOpsUtils.h). The reference
 * implementation calls FFTW's guru64 planner (libfftw3-dev; configure's HAVE_FFTW — without it
 * the ops are refused, naming the library) in double precision, as every reference op here
 * computes in double and rounds on store. Result layouts are those of ATen's CPU kernels
 * (aten/src/ATen/native/mkl/SpectralOps.cpp, _exec_fft): batch dims first in input-stride
 * order, the transformed dims after them, so e.g. a dim-1 transform of a contiguous [5, 10, 7]
 * gives strides [70, 1, 10]. The recorded OpInfo graphs carry exactly these strides.
 * In the compiled module these ops run as FallbackKernels (Inductor falls back to ATen for
 * them, and for every node that reads or writes a complex tensor: lowering.c). */
#include "ops/ops_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_FFTW
#include <fftw3.h>
#include <pthread.h>
#endif

enum { FFT_R2C, FFT_C2R, FFT_C2C };
typedef struct FftSpec { int kind; } FftSpec;
#define FFT_KIND(sa) (((const FftSpec *)(sa)->op->data)->kind)

/* The parsed arguments of one call: transformed dims in the order given, the norm mode and
 * the third argument (onesided / last_dim_size / forward). */
typedef struct FftArgs {
    TensorMeta *x;
    int64_t dims[MI_MAX_DIMS]; int ndims;
    int64_t norm, last_dim_size;
    bool onesided, forward;
} FftArgs;

static const char *const third_arg[] = {"onesided", "last_dim_size", "forward"};

/* Check and normalize the arguments; the error names the node and the reason
 * (e.g. "dim 3 out of range", "_fft_c2c needs a complex input, got f32"). */
static int fft_args(ShapeArgs *sa, FftArgs *a) {
    int kind = FFT_KIND(sa);
    memset(a, 0, sizeof *a);
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a->x)) return -1;
    DType dt = a->x->dtype;
    if (kind == FFT_R2C && dt != DT_F32 && dt != DT_F64)
        return sa_err(sa, "_fft_r2c needs a float32 or float64 input, got %s", dtype_abbrev(dt));
    if (kind != FFT_R2C && dt != DT_C64 && dt != DT_C128)
        return sa_err(sa, "%s needs a complex64 or complex128 input, got %s", kind == FFT_C2R ? "_fft_c2r" : "_fft_c2c", dtype_abbrev(dt));
    int64_t raw[OP_MAX_OUTS];
    int n = 0;
    if (sa_const_int_list(sa, sa_arg(sa, 1, "dim"), "dim", raw, &n, OP_MAX_OUTS)) return -1;
    if (n > a->x->ndim) return sa_err(sa, "%d dims to transform for a tensor of rank %d", n, a->x->ndim);
    if (n == 0 && kind != FFT_C2C) return sa_err(sa, "the dim list must not be empty");
    bool seen[MI_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        if (a->x->ndim == 0) return sa_err(sa, "a 0-d tensor has no dim %lld to transform", (long long)raw[i]);
        if (sa_dim(sa, raw[i], a->x->ndim, &a->dims[i])) return -1;
        if (seen[a->dims[i]]) return sa_err(sa, "dim %lld appears twice in the dim list", (long long)a->dims[i]);
        seen[a->dims[i]] = true;
    }
    a->ndims = n;
    Expr *e;
    if (sa_int(sa, sa_arg(sa, 2, "normalization"), "normalization", &e)) return -1;
    if (!sym_is_int(e, &a->norm) || a->norm < 0 || a->norm > 2)
        return sa_err(sa, "normalization must be 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n)");
    ArgRef t = sa_arg(sa, 3, third_arg[kind]);
    if (!arg_present(t)) return sa_err(sa, "missing argument '%s'", third_arg[kind]);
    if (kind == FFT_C2R) {
        if (sa_int(sa, t, "last_dim_size", &e)) return -1;
        if (!sym_is_int(e, &a->last_dim_size)) return sa_err(sa, "last_dim_size must be a constant int");
        if (a->last_dim_size < 1) return sa_err(sa, "Invalid number of data points (%lld) specified", (long long)a->last_dim_size);
    } else if (kind == FFT_R2C) a->onesided = arg_bool(t, true);
    else a->forward = arg_bool(t, true);
    return 0;
}

/* Stable sort of dims[lo, hi) by stride, largest first (ATen's _sort_dims comparator). */
static void sort_by_stride(ShapeArgs *sa, int64_t *dims, int lo, int hi, Expr *const *stride) {
    for (int i = lo + 1; i < hi; i++)
        for (int j = i; j > lo && ex_cmp(sa, stride[dims[j - 1]], stride[dims[j]]) < 0; j--) {
            int64_t t = dims[j]; dims[j] = dims[j - 1]; dims[j - 1] = t;
        }
}

/* out's strides as _exec_fft leaves them: the batch dims (those not in fft_dims) sorted by the
 * input's strides, largest first, collapsed into one leading batch dim of a contiguous
 * [batch, out_size[fft_dims[0]], ...] buffer, then the permutation undone. Example: input
 * [5, 10, 7] strides [70, 7, 1], fft_dims {1} -> buffer [35, 10] -> strides [70, 1, 10]. */
static void exec_fft_strides(ShapeArgs *sa, TensorMeta *out, Expr *const *in_stride, const int64_t *fft_dims, int nfft) {
    SymCtx *S = sa->sym;
    int nd = out->ndim, nb = 0;
    int64_t perm[MI_MAX_DIMS];
    bool tr[MI_MAX_DIMS] = {0};
    for (int i = 0; i < nfft; i++) tr[fft_dims[i]] = true;
    for (int d = 0; d < nd; d++) if (!tr[d]) perm[nb++] = d;
    sort_by_stride(sa, perm, 0, nb, in_stride);
    for (int i = 0; i < nfft; i++) perm[nb + i] = fft_dims[i];
    Expr *one = sym_int(S, 1), *sig[MI_MAX_DIMS + 1], *acc = one;
    for (int i = nfft - 1; i >= 0; i--) { sig[i + 1] = acc; acc = sym_mul(S, acc, sym_max(S, out->size[fft_dims[i]], one)); }
    Expr *batch_stride = acc, *batch_numel = one;
    for (int i = nb - 1; i >= 0; i--) {
        out->stride[perm[i]] = sym_mul(S, batch_numel, batch_stride);
        batch_numel = sym_mul(S, batch_numel, out->size[perm[i]]);
    }
    for (int i = 0; i < nfft; i++) out->stride[perm[nb + i]] = sig[i + 1];
}

/* meta of _fft_c2c(x, dims) (its dims sorted by x's strides, as _fft_c2c_mkl does) */
static void c2c_meta(ShapeArgs *sa, TensorMeta *out, const TensorMeta *x, const int64_t *dims, int n) {
    meta_alloc(sa, out, x->dtype, x->ndim, x->device);
    for (int d = 0; d < x->ndim; d++) out->size[d] = x->size[d];
    if (n == 0) { meta_like(sa, out, x, x->dtype); return; }   /* ATen's meta: self.clone() */
    int64_t sorted[MI_MAX_DIMS];
    memcpy(sorted, dims, sizeof *dims * (size_t)n);
    sort_by_stride(sa, sorted, 0, n, x->stride);
    exec_fft_strides(sa, out, x->stride, sorted, n);
}

static int shape_fft(ShapeArgs *sa, TensorMeta *out, int *nout) {
    FftArgs a;
    *nout = 1;
    if (fft_args(sa, &a)) return -1;
    const TensorMeta *x = a.x;
    SymCtx *S = sa->sym;
    int64_t last = a.ndims ? a.dims[a.ndims - 1] : 0;
    switch (FFT_KIND(sa)) {
    case FFT_R2C: {
        meta_alloc(sa, out, x->dtype == DT_F64 ? DT_C128 : DT_C64, x->ndim, x->device);
        for (int d = 0; d < x->ndim; d++) out->size[d] = x->size[d];
        if (a.onesided) out->size[last] = sym_add(S, sym_floordiv(S, x->size[last], sym_int(S, 2)), sym_int(S, 1));
        int64_t sorted[MI_MAX_DIMS];
        memcpy(sorted, a.dims, sizeof a.dims);
        sort_by_stride(sa, sorted, 0, a.ndims - 1, x->stride);   /* exclude_last: the halved dim stays last */
        exec_fft_strides(sa, out, x->stride, sorted, a.ndims);
        return 0;
    }
    case FFT_C2C:
        c2c_meta(sa, out, x, a.dims, a.ndims);
        return 0;
    default: {   /* C2R: a c2c over all but the last dim, then a 1-d c2r over the last */
        TensorMeta mid;
        const TensorMeta *in = x;
        if (a.ndims > 1) { c2c_meta(sa, &mid, x, a.dims, a.ndims - 1); in = &mid; }
        meta_alloc(sa, out, x->dtype == DT_C128 ? DT_F64 : DT_F32, x->ndim, x->device);
        for (int d = 0; d < x->ndim; d++) out->size[d] = x->size[d];
        out->size[last] = sym_int(S, a.last_dim_size);
        exec_fft_strides(sa, out, in->stride, &last, 1);
        return 0;
    }
    }
}

#ifdef HAVE_FFTW
/* FFTW's planner is not reentrant (only fftw_execute is); the interpreter may run in several
 * threads of one process (the shell's server), so planning is serialized. */
static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

/* Row-major element strides of a dense array of the given sizes. */
static void dense_strides(const int64_t *size, int nd, int64_t *st) {
    int64_t acc = 1;
    for (int d = nd - 1; d >= 0; d--) { st[d] = acc; acc *= size[d] > 1 ? size[d] : 1; }
}

/* Guru dims: the transformed dims (in the order given: FFTW halves the last of them) and the
 * rest as the batch ("howmany") dims, with the element strides of the dense in / out arrays. */
static void guru_dims(const int64_t *isz, const int64_t *ist, const int64_t *ost, int nd, const int64_t *dims, int nfft,
                      fftw_iodim64 *tdims, fftw_iodim64 *bdims, int *nbatch) {
    bool tr[MI_MAX_DIMS] = {0};
    for (int i = 0; i < nfft; i++) {
        int64_t d = dims[i];
        tr[d] = true;
        tdims[i] = (fftw_iodim64){isz[d], ist[d], ost[d]};
    }
    *nbatch = 0;
    for (int d = 0; d < nd; d++)
        if (!tr[d]) bdims[(*nbatch)++] = (fftw_iodim64){isz[d], ist[d], ost[d]};
}

/* One transform over `dims` of a dense array (sizes `sz`, the logical sizes of the signal):
 * c2c in place on buf (sign -1 forward, +1 backward), r2c from rin into buf, or c2r from buf
 * (half sizes in `sz`, full last size `nlast`) into rout. */
static int run_plan(ShapeArgs *sa, int kind, const int64_t *sz, int nd, const int64_t *dims, int nfft, int64_t nlast,
                    fftw_complex *buf, double *real, int sign) {
    int64_t csz[MI_MAX_DIMS], rsz[MI_MAX_DIMS], cst[MI_MAX_DIMS], rst[MI_MAX_DIMS];
    memcpy(csz, sz, sizeof *sz * (size_t)nd);
    memcpy(rsz, sz, sizeof *sz * (size_t)nd);
    int64_t last = dims[nfft - 1];
    if (kind == FFT_R2C) csz[last] = sz[last] / 2 + 1;
    if (kind == FFT_C2R) { rsz[last] = nlast; csz[last] = nlast / 2 + 1; }
    dense_strides(csz, nd, cst);
    dense_strides(rsz, nd, rst);
    fftw_iodim64 tdims[MI_MAX_DIMS], bdims[MI_MAX_DIMS];
    int nb;
    fftw_plan p = NULL;
    pthread_mutex_lock(&planner_lock);
    if (kind == FFT_C2C) {
        guru_dims(sz, cst, cst, nd, dims, nfft, tdims, bdims, &nb);
        p = fftw_plan_guru64_dft(nfft, tdims, nb, bdims, buf, buf, sign, FFTW_ESTIMATE);
    } else if (kind == FFT_R2C) {
        guru_dims(rsz, rst, cst, nd, dims, nfft, tdims, bdims, &nb);
        p = fftw_plan_guru64_dft_r2c(nfft, tdims, nb, bdims, real, buf, FFTW_ESTIMATE);
    } else {
        guru_dims(rsz, cst, rst, nd, dims, nfft, tdims, bdims, &nb);   /* n: the real (full) sizes */
        p = fftw_plan_guru64_dft_c2r(nfft, tdims, nb, bdims, buf, real, FFTW_ESTIMATE);
    }
    pthread_mutex_unlock(&planner_lock);
    if (!p) return sa_err(sa, "FFTW could not plan this transform");
    fftw_execute(p);
    pthread_mutex_lock(&planner_lock);
    fftw_destroy_plan(p);
    pthread_mutex_unlock(&planner_lock);
    return 0;
}

/* 1, 1/sqrt(n) or 1/n for the signal of `n` points (fft_norm_mode) */
static double norm_scale(int64_t mode, double n) { return mode == 0 ? 1.0 : mode == 1 ? 1.0 / sqrt(n) : 1.0 / n; }

/* Row-major linear index -> per-dim index */
static void unravel(int64_t e, const int64_t *size, int nd, int64_t *idx) {
    for (int d = nd - 1; d >= 0; d--) { idx[d] = size[d] ? e % size[d] : 0; e = size[d] ? e / size[d] : 0; }
}

/* Run the transform: input gathered into a dense double array in logical order, FFTW, then
 * scaled and stored into o (whose strides are the meta's). r2c with onesided=false fills the
 * other half by conjugate symmetry, X[(N - k) mod N] = conj(X[k]) over every transformed dim
 * (NOTE [ Fourier Transform Conjugate Symmetry ] in SpectralOpsUtils.h). */
static int fft_compute(ShapeArgs *sa, const FftArgs *a, const Tensor *x, Tensor *o) {
    int kind = FFT_KIND(sa), nd = x->ndim;
    int64_t nx = tensor_numel(x), no = tensor_numel(o);
    if (no == 0) return 0;
    for (int i = 0; i < a->ndims; i++)
        if (x->size[a->dims[i]] == 0) return sa_err(sa, "Invalid number of data points (0) specified");
    if (a->ndims == 0) {   /* c2c over no dims: a copy, scaled by 1 */
        for (int64_t e = 0; e < no; e++) tensor_move_elem(o, tensor_pos(o, e), x, tensor_pos(x, e));
        return 0;
    }
    int64_t last = a->dims[a->ndims - 1], half[MI_MAX_DIMS], idx[MI_MAX_DIMS];
    memcpy(half, x->size, sizeof *half * (size_t)nd);
    if (kind == FFT_R2C) half[last] = x->size[last] / 2 + 1;
    int64_t nhalf = 1;
    for (int d = 0; d < nd; d++) nhalf *= half[d];
    double signal = 1;
    for (int i = 0; i < a->ndims; i++) signal *= (double)(kind == FFT_C2R && a->dims[i] == last ? a->last_dim_size : x->size[a->dims[i]]);
    double scale = norm_scale(a->norm, signal);
    int rc = -1;
    fftw_complex *buf = fftw_alloc_complex((size_t)(kind == FFT_R2C ? nhalf : nx));
    double *real = kind == FFT_C2C ? NULL : fftw_alloc_real((size_t)(kind == FFT_R2C ? nx : no));
    if (!buf || (kind != FFT_C2C && !real)) { sa_err(sa, "out of memory for the FFT buffers"); goto done; }
    for (int64_t e = 0; e < nx; e++) {
        double re, im;
        tensor_get_c(x, e, &re, &im);
        if (kind == FFT_R2C) real[e] = re;
        else { buf[e][0] = re; buf[e][1] = im; }
    }
    if (kind == FFT_C2C) {
        if (run_plan(sa, FFT_C2C, x->size, nd, a->dims, a->ndims, 0, buf, NULL, a->forward ? FFTW_FORWARD : FFTW_BACKWARD)) goto done;
        for (int64_t e = 0; e < no; e++) tensor_store_c(o, tensor_pos(o, e), buf[e][0] * scale, buf[e][1] * scale);
    } else if (kind == FFT_C2R) {
        if (x->size[last] < a->last_dim_size / 2 + 1) {
            sa_err(sa, "the input's last transformed dim has %lld points, fewer than last_dim_size / 2 + 1 = %lld",
                   (long long)x->size[last], (long long)(a->last_dim_size / 2 + 1));
            goto done;
        }
        /* ATen's CPU kernel: a backward c2c over all but the last dim, then a 1-d c2r */
        if (a->ndims > 1 && run_plan(sa, FFT_C2C, x->size, nd, a->dims, a->ndims - 1, 0, buf, NULL, FFTW_BACKWARD)) goto done;
        /* a longer input row keeps its dense strides: c2r reads its first last_dim_size/2+1 points */
        fftw_complex *in = buf;
        int64_t hsz[MI_MAX_DIMS];
        memcpy(hsz, x->size, sizeof *hsz * (size_t)nd);
        int64_t need = a->last_dim_size / 2 + 1;
        fftw_complex *cut = NULL;
        if (x->size[last] != need) {   /* copy into a dense array of exactly `need` points */
            hsz[last] = need;
            int64_t nc = 1;
            for (int d = 0; d < nd; d++) nc *= hsz[d];
            cut = fftw_alloc_complex((size_t)(nc ? nc : 1));
            if (!cut) { sa_err(sa, "out of memory for the FFT buffers"); goto done; }
            int64_t st[MI_MAX_DIMS];
            dense_strides(x->size, nd, st);
            for (int64_t e = 0; e < nc; e++) {
                unravel(e, hsz, nd, idx);
                int64_t src = 0;
                for (int d = 0; d < nd; d++) src += idx[d] * st[d];
                cut[e][0] = buf[src][0]; cut[e][1] = buf[src][1];
            }
            in = cut;
        }
        int64_t full[MI_MAX_DIMS];
        memcpy(full, hsz, sizeof *full * (size_t)nd);
        full[last] = a->last_dim_size;
        int prc = run_plan(sa, FFT_C2R, full, nd, &last, 1, a->last_dim_size, in, real, 0);
        if (cut) fftw_free(cut);
        if (prc) goto done;
        for (int64_t e = 0; e < no; e++) tensor_store_f(o, tensor_pos(o, e), real[e] * scale);
    } else {
        if (run_plan(sa, FFT_R2C, x->size, nd, a->dims, a->ndims, 0, buf, real, 0)) goto done;
        int64_t hst[MI_MAX_DIMS];
        dense_strides(half, nd, hst);
        bool tr[MI_MAX_DIMS] = {0};
        for (int i = 0; i < a->ndims; i++) tr[a->dims[i]] = true;
        for (int64_t e = 0; e < no; e++) {
            unravel(e, o->size, nd, idx);
            bool mirror = idx[last] >= half[last];
            int64_t src = 0;
            for (int d = 0; d < nd; d++) {
                int64_t k = idx[d];
                if (mirror && tr[d]) k = (o->size[d] - k) % o->size[d];
                src += k * hst[d];
            }
            tensor_store_c(o, tensor_pos(o, e), buf[src][0] * scale, (mirror ? -buf[src][1] : buf[src][1]) * scale);
        }
    }
    rc = 0;
done:
    if (buf) fftw_free(buf);
    if (real) fftw_free(real);
    return rc;
}
#endif

static int fft_body(ShapeArgs *sa, IValue *out) {
#ifndef HAVE_FFTW
    return sa_err(sa, "needs FFTW, which configure did not find (apt-get install libfftw3-dev, then ./configure)");
#else
    TensorMeta m;
    FftArgs a;
    int nm = 0;
    if (ev_shape(sa, &m, &nm) || fft_args(sa, &a)) return -1;
    Tensor *o = ev_new(sa, &m), *x = ev_tensor(sa_arg(sa, 0, "self"));
    if (!o) return -1;
    if (!x || fft_compute(sa, &a, x, o)) { tensor_unref(o); return -1; }
    ev_out_tensor(out, o);
    return 0;
#endif
}
static int fft_eval(const OpCall *c, IValue *out) { return ev_call(c, out, fft_body); }

static const FftSpec fft_r2c = {FFT_R2C}, fft_c2r = {FFT_C2R}, fft_c2c = {FFT_C2C};
#define FFT(name, spec, doc) {name, OPF_EXTERN, op_infer_generic, fft_eval, doc, shape_fft, &spec}

const OpDef ops_fft_table[] = {
    FFT("aten._fft_r2c.default", fft_r2c, "real -> complex FFT over dims (onesided: the last dim halved, n/2+1) (FFTW)"),
    FFT("aten._fft_c2r.default", fft_c2r, "one-sided complex -> real inverse FFT over dims, last dim last_dim_size (FFTW)"),
    FFT("aten._fft_c2c.default", fft_c2c, "complex -> complex FFT over dims, forward or inverse (FFTW)"),
};
const int ops_fft_count = sizeof ops_fft_table / sizeof ops_fft_table[0];
