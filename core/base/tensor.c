/* tensor.c — strided CPU tensors for the reference interpreter: allocation with size checks,
 * views, element access in every dtype, copies, deterministic random fill and allclose-style
 * comparison. Kernels of the interpreter (core/ops_*.c) read and write through these. */
#include "base/tensor.h"
#include "base/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- half / bfloat16 / float8 conversions ---- */

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float mi_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {                       /* zero / subnormal */
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t mi_f32_to_f16(float f) {
    uint32_t u = f32_bits(f), sign = (u >> 16) & 0x8000;
    float a = fabsf(f);
    if (isnan(f)) return (uint16_t)(sign | 0x7e00);
    if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00);          /* overflow -> inf */
    if (a < 6.103515625e-05f) {                                    /* subnormal range */
        return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f));
    }
    uint32_t exp = ((u >> 23) & 0xff) - 112, man = u & 0x7fffff;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1fff;                                  /* round to nearest even */
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float mi_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t mi_f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* mi_f8_to_f32: the value of float8 bits b of type dt. The trick: every float8 value is
 * (1 + m / 2^M) 2^(e - bias) (e > 0) or m 2^(1 - bias - M) (e == 0), exact in float; only the
 * special encodings differ per type. Example: e4m3fn 0x7e -> 448, 0x7f -> NaN; e4m3fnuz 0x80 -> NaN. */
float mi_f8_to_f32(DType dt, uint8_t b) {
    bool e5 = dt == DT_F8E5M2 || dt == DT_F8E5M2FNUZ, fnuz = dt == DT_F8E4M3FNUZ || dt == DT_F8E5M2FNUZ;
    int M = e5 ? 2 : 3, bias = e5 ? 15 : 7, emax = e5 ? 31 : 15;
    if (fnuz) bias++;
    int sign = b >> 7, e = (b & 0x7f) >> M, m = b & ((1 << M) - 1);
    if (fnuz && b == 0x80) return NAN;
    if (!fnuz && e5 && e == emax) return m ? NAN : sign ? -INFINITY : INFINITY;
    if (!fnuz && !e5 && e == emax && m == (1 << M) - 1) return NAN;
    float v = e == 0 ? ldexpf((float)m, 1 - bias - M) : ldexpf(1.0f + (float)m / (float)(1 << M), e - bias);
    return sign ? -v : v;
}

/* mi_f32_to_f8: c10's fp8e4m3fn / fp8e5m2 / fp8e4m3fnuz / fp8e5m2fnuz _from_fp32_value, bit
 * for bit. The trick: a number below the smallest normal is added to a magic float whose ulp is
 * the float8 subnormal step (the FPU rounds to nearest even), then the magic is subtracted from
 * the bits; a normal number gets its exponent rebiased and half an ulp minus one plus the odd
 * bit added before its low bits are dropped (round to nearest even). Example: e4m3fn 0.3 ->
 * 0x2a (0.3125), 470 -> 0x7f (NaN: over 464, the midpoint of 448 and 480). */
uint8_t mi_f32_to_f8(DType dt, float f) {
    bool e5 = dt == DT_F8E5M2 || dt == DT_F8E5M2FNUZ, fnuz = dt == DT_F8E4M3FNUZ || dt == DT_F8E5M2FNUZ;
    int M = e5 ? 2 : 3, bias = (e5 ? 15 : 7) + (fnuz ? 1 : 0);
    uint32_t u = f32_bits(f), sign = u & 0x80000000u, result;
    u ^= sign;
    /* the first magnitude out of range: 480 (e4m3fn), 65536 (e5m2), 256 (e4m3fnuz), 65536 (e5m2fnuz) */
    uint32_t max = e5 ? 143u << 23 : fnuz ? 0x87u << 23 : 1087u << 20;
    if (u >= max) {
        if (fnuz) return 0x80;
        if (e5) return (uint8_t)((u > 0x7f800000u ? 0x7f : 0x7c) | (sign >> 24));
        return (uint8_t)(0x7f | (sign >> 24));
    }
    uint32_t min_normal = (uint32_t)(127 - bias + 1) << 23;
    if (u < min_normal) {
        uint32_t magic = (uint32_t)((127 - bias) + (23 - M) + 1) << 23;
        result = f32_bits(bits_f32(u) + bits_f32(magic)) - magic;
        if (fnuz && result == 0) return 0;   /* no negative zero */
    } else {
        int drop = 23 - M;
        uint32_t odd = (u >> drop) & 1;
        u += ((uint32_t)(bias - 127) << 23) + ((1u << (drop - 1)) - 1);
        u += odd;
        result = u >> drop;
    }
    return (uint8_t)(result | (sign >> 24));
}

/* ---- allocation ---- */

size_t tensor_max_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0) return (size_t)1 << 40;
    return (size_t)pages * (size_t)psize;
}

/* Memory the kernel could give us now (MemAvailable; else the free pages), 0 when unknown. */
static size_t avail_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb) return (size_t)kb * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : 0;
}

static void human_bytes(double b, char *buf, size_t n) {
    const char *unit[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (b >= 1000.0 && u < 6) { b /= 1000.0; u++; }
    if (u == 0) snprintf(buf, n, "%.0f bytes", b);
    else snprintf(buf, n, "%.1f %s", b, unit[u]);
}

static void type_str(DType dt, int ndim, const int64_t *size, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s[", dtype_abbrev(dt));
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)size[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

const char *tensor_type_str(const Tensor *t, char *buf, size_t n) {
    type_str(t->dtype, t->ndim, t->size, buf, n);
    return buf;
}

/* Number of storage elements needed for size/stride/offset; -1 on overflow or bad input. */
static int64_t storage_extent(int ndim, const int64_t *size, const int64_t *stride, int64_t offset) {
    int64_t hi = offset;
    for (int i = 0; i < ndim; i++) {
        if (size[i] == 0) return offset;
        int64_t d;
        if (__builtin_mul_overflow(size[i] - 1, stride[i], &d)) return -1;
        if (__builtin_add_overflow(hi, d, &hi)) return -1;
    }
    return hi + 1;
}

static Storage *storage_new(MiCtx *ctx, DType dt, int64_t elems, int ndim, const int64_t *size) {
    char ts[256], hb[64];
    size_t es = dtype_size(dt);
    double want = (double)elems * (double)es;
    type_str(dt, ndim, size, ts, sizeof ts);
    if (elems < 0 || want > (double)tensor_max_bytes()) {
        human_bytes(elems < 0 ? INFINITY : want, hb, sizeof hb);
        if (elems < 0) snprintf(hb, sizeof hb, "more than 9.2 EB");
        mi_err(ctx, NULL, 0, 0, "cannot allocate %s for %s (more than this machine's memory)", hb, ts);
        return NULL;
    }
    /* a big one must also fit in what is free now: the pages get written right away, and the
     * OOM killer gives no error message */
    size_t avail = want > (double)(256u << 20) ? avail_bytes() : 0;
    if (avail && want > (double)avail) {
        char ab[64];
        human_bytes(want, hb, sizeof hb);
        human_bytes((double)avail, ab, sizeof ab);
        mi_err(ctx, NULL, 0, 0, "cannot allocate %s for %s (only %s of memory available)", hb, ts, ab);
        return NULL;
    }
    Storage *s = calloc(1, sizeof *s);
    size_t nbytes = (size_t)elems * es;
    /* the session's cache of freed blocks, huge pages when large (base/mem.h) */
    void *data = mi_mem_cache_alloc(ctx ? ctx->mem_cache : NULL, nbytes, true);
    if (!s || !data) {
        free(s); mi_mem_free(data);
        human_bytes(want, hb, sizeof hb);
        mi_err(ctx, NULL, 0, 0, "cannot allocate %s for %s (out of memory)", hb, ts);
        return NULL;
    }
    s->refs = 1;
    s->nbytes = nbytes;
    s->data = data;
    return s;
}

static int check_dims(MiCtx *ctx, DType dt, int ndim, const int64_t *size) {
    if (dt < 0 || dt >= DT_COUNT) return mi_err(ctx, NULL, 0, 0, "invalid dtype %d", (int)dt);
    if (ndim < 0 || ndim > MI_MAX_DIMS)
        return mi_err(ctx, NULL, 0, 0, "tensor rank %d out of range (max %d)", ndim, MI_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        if (size[i] < 0) return mi_err(ctx, NULL, 0, 0, "negative size %lld in dimension %d", (long long)size[i], i);
    return 0;
}

Tensor *tensor_new_strided(MiCtx *ctx, DType dt, int ndim, const int64_t *size, const int64_t *stride, int64_t offset) {
    if (check_dims(ctx, dt, ndim, size)) return NULL;
    for (int i = 0; i < ndim; i++)
        if (stride[i] < 0) { mi_err(ctx, NULL, 0, 0, "negative stride in dimension %d", i); return NULL; }
    if (offset < 0) { mi_err(ctx, NULL, 0, 0, "negative storage offset"); return NULL; }
    int64_t elems = storage_extent(ndim, size, stride, offset);
    Storage *s = storage_new(ctx, dt, elems, ndim, size);
    if (!s) return NULL;
    Tensor *t = calloc(1, sizeof *t);
    if (!t) { mi_mem_free(s->data); free(s); mi_err(ctx, NULL, 0, 0, "out of memory"); return NULL; }
    t->refs = 1;
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) { t->size[i] = size[i]; t->stride[i] = stride[i]; }
    t->offset = offset;
    t->storage = s;
    return t;
}

Tensor *tensor_new(MiCtx *ctx, DType dt, int ndim, const int64_t *size) {
    if (check_dims(ctx, dt, ndim, size)) return NULL;
    int64_t stride[MI_MAX_DIMS], st = 1;
    bool overflow = false;
    for (int i = ndim - 1; i >= 0; i--) {
        stride[i] = st;
        if (__builtin_mul_overflow(st, size[i] > 1 ? size[i] : 1, &st)) { overflow = true; st = 1; }
    }
    if (overflow) {
        char ts[256];
        type_str(dt, ndim, size, ts, sizeof ts);
        mi_err(ctx, NULL, 0, 0, "cannot allocate more than 9.2 EB for %s (more than this machine's memory)", ts);
        return NULL;
    }
    return tensor_new_strided(ctx, dt, ndim, size, stride, 0);
}

Tensor *tensor_view(Tensor *base, int ndim, const int64_t *size, const int64_t *stride, int64_t offset) {
    Tensor *t = mi_xcalloc(1, sizeof *t);
    t->refs = 1;
    t->dtype = base->dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) { t->size[i] = size[i]; t->stride[i] = stride[i]; }
    t->offset = offset;
    t->storage = base->storage;
    base->storage->refs++;
    return t;
}

Tensor *tensor_ref(Tensor *t) { if (t) t->refs++; return t; }

/* ---- the session's tensor constants (MiCtx.consts): a short list searched by name ---- */

void mi_const_set(MiCtx *ctx, const char *name, Tensor *t) {
    for (int i = 0; i < ctx->nconsts; i++)
        if (!strcmp(ctx->consts[i].name, name)) {
            tensor_ref(t);
            tensor_unref(ctx->consts[i].t);
            ctx->consts[i].t = t;
            return;
        }
    ctx->consts = mi_xrealloc(ctx->consts, sizeof *ctx->consts * (size_t)(ctx->nconsts + 1));
    ctx->consts[ctx->nconsts++] = (MiConst){mi_xstrdup(name), tensor_ref(t)};
}

Tensor *mi_const_get(const MiCtx *ctx, const char *name) {
    for (int i = 0; ctx && name && i < ctx->nconsts; i++)
        if (!strcmp(ctx->consts[i].name, name)) return ctx->consts[i].t;
    return NULL;
}

void mi_consts_clear(MiCtx *ctx) {
    for (int i = 0; i < ctx->nconsts; i++) { free(ctx->consts[i].name); tensor_unref(ctx->consts[i].t); }
    free(ctx->consts);
    ctx->consts = NULL;
    ctx->nconsts = 0;
}

void tensor_unref(Tensor *t) {
    if (!t || --t->refs > 0) return;
    if (--t->storage->refs == 0) { mi_mem_free(t->storage->data); free(t->storage); }
    free(t);
}

int64_t tensor_numel(const Tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->size[i];
    return n;
}

bool tensor_is_contiguous(const Tensor *t) {
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->size[i] == 0) return true;
        if (t->size[i] != 1 && t->stride[i] != expect) return false;
        expect *= t->size[i];
    }
    return true;
}

/* ---- element access ---- */

double tensor_load_f(const Tensor *t, int64_t pos) {
    const void *d = t->storage->data;
    switch (t->dtype) {
    case DT_F32: return ((const float *)d)[pos];
    case DT_F64: return ((const double *)d)[pos];
    case DT_F16: return mi_f16_to_f32(((const uint16_t *)d)[pos]);
    case DT_BF16: return mi_bf16_to_f32(((const uint16_t *)d)[pos]);
    case DT_I64: return (double)((const int64_t *)d)[pos];
    case DT_I32: return ((const int32_t *)d)[pos];
    case DT_I16: return ((const int16_t *)d)[pos];
    case DT_I8: return ((const int8_t *)d)[pos];
    case DT_U8: return ((const uint8_t *)d)[pos];
    case DT_BOOL: return ((const uint8_t *)d)[pos] != 0;
    case DT_C64: return ((const float *)d)[2 * pos];
    case DT_C128: return ((const double *)d)[2 * pos];
    case DT_F8E4M3: case DT_F8E5M2: case DT_F8E4M3FNUZ: case DT_F8E5M2FNUZ: return mi_f8_to_f32(t->dtype, ((const uint8_t *)d)[pos]);
    case DT_U16: return ((const uint16_t *)d)[pos];
    case DT_U32: return ((const uint32_t *)d)[pos];
    case DT_U64: return (double)((const uint64_t *)d)[pos];
    default: return 0;
    }
}

static int64_t f2i(double v) {
    if (isnan(v) || v >= 0x1p63 || v < -0x1p63) return INT64_MIN;   /* x86's "integer indefinite" */
    return (int64_t)v;
}

/* float -> int as PyTorch's CPU kernels (static_cast on x86) give it: truncation; NaN and
 * out-of-range values become the type's minimum (cvttsd2si), narrower ints go through int32. */
int64_t tensor_float_to_int(double v, DType dt) {
    if (dt == DT_I64) return f2i(v);
    if (dt == DT_BOOL) return v != 0;
    int32_t w = isnan(v) || v >= 0x1p31 || v <= -0x1p31 - 1 ? INT32_MIN : (int32_t)v;
    switch (dt) {
    case DT_I16: return (int16_t)w;
    case DT_I8: return (int8_t)w;
    case DT_U8: return (uint8_t)w;
    case DT_U16: return (uint16_t)w;
    case DT_U32: return (int64_t)f2i(v) & 0xffffffff;
    case DT_U64: return v >= 0x1p63 && v < 0x1p64 ? (int64_t)(uint64_t)v : f2i(v);
    default: return w;
    }
}

void tensor_store_f(Tensor *t, int64_t pos, double v) {
    void *d = t->storage->data;
    switch (t->dtype) {
    case DT_F32: ((float *)d)[pos] = (float)v; break;
    case DT_F64: ((double *)d)[pos] = v; break;
    case DT_F16: ((uint16_t *)d)[pos] = mi_f32_to_f16((float)v); break;
    case DT_BF16: ((uint16_t *)d)[pos] = mi_f32_to_bf16((float)v); break;
    case DT_I64: ((int64_t *)d)[pos] = f2i(v); break;
    case DT_I32: ((int32_t *)d)[pos] = (int32_t)tensor_float_to_int(v, DT_I32); break;
    case DT_I16: ((int16_t *)d)[pos] = (int16_t)tensor_float_to_int(v, DT_I16); break;
    case DT_I8: ((int8_t *)d)[pos] = (int8_t)tensor_float_to_int(v, DT_I8); break;
    case DT_U8: ((uint8_t *)d)[pos] = (uint8_t)tensor_float_to_int(v, DT_U8); break;
    case DT_U16: ((uint16_t *)d)[pos] = (uint16_t)tensor_float_to_int(v, DT_U16); break;
    case DT_U32: ((uint32_t *)d)[pos] = (uint32_t)tensor_float_to_int(v, DT_U32); break;
    case DT_U64: ((uint64_t *)d)[pos] = (uint64_t)tensor_float_to_int(v, DT_U64); break;
    case DT_BOOL: ((uint8_t *)d)[pos] = v != 0; break;
    case DT_C64: ((float *)d)[2 * pos] = (float)v; ((float *)d)[2 * pos + 1] = 0; break;
    case DT_C128: ((double *)d)[2 * pos] = v; ((double *)d)[2 * pos + 1] = 0; break;
    case DT_F8E4M3: case DT_F8E5M2: case DT_F8E4M3FNUZ: case DT_F8E5M2FNUZ: ((uint8_t *)d)[pos] = mi_f32_to_f8(t->dtype, (float)v); break;
    default: break;
    }
}

int64_t tensor_load_i(const Tensor *t, int64_t pos) {
    const void *d = t->storage->data;
    switch (t->dtype) {
    case DT_I64: return ((const int64_t *)d)[pos];
    case DT_I32: return ((const int32_t *)d)[pos];
    case DT_I16: return ((const int16_t *)d)[pos];
    case DT_I8: return ((const int8_t *)d)[pos];
    case DT_U8: return ((const uint8_t *)d)[pos];
    case DT_U16: return ((const uint16_t *)d)[pos];
    case DT_U32: return ((const uint32_t *)d)[pos];
    case DT_U64: return (int64_t)((const uint64_t *)d)[pos];     /* the bits; >= 2^63 reads negative */
    case DT_BOOL: return ((const uint8_t *)d)[pos] != 0;
    default: return f2i(tensor_load_f(t, pos));
    }
}

void tensor_store_i(Tensor *t, int64_t pos, int64_t v) {
    void *d = t->storage->data;
    switch (t->dtype) {
    case DT_I64: ((int64_t *)d)[pos] = v; break;
    case DT_I32: ((int32_t *)d)[pos] = (int32_t)v; break;
    case DT_I16: ((int16_t *)d)[pos] = (int16_t)v; break;
    case DT_I8: ((int8_t *)d)[pos] = (int8_t)v; break;
    case DT_U8: ((uint8_t *)d)[pos] = (uint8_t)v; break;
    case DT_U16: ((uint16_t *)d)[pos] = (uint16_t)v; break;
    case DT_U32: ((uint32_t *)d)[pos] = (uint32_t)v; break;
    case DT_U64: ((uint64_t *)d)[pos] = (uint64_t)v; break;
    case DT_BOOL: ((uint8_t *)d)[pos] = v != 0; break;
    default: tensor_store_f(t, pos, (double)v); break;
    }
}

/* Complex element access: real types read as (v, 0) and store the real part (PyTorch's
 * complex -> real copy drops the imaginary part). Example: c64 {1+2i} loads re 1, im 2. */
void tensor_load_c(const Tensor *t, int64_t pos, double *re, double *im) {
    const void *d = t->storage->data;
    if (t->dtype == DT_C64) { *re = ((const float *)d)[2 * pos]; *im = ((const float *)d)[2 * pos + 1]; }
    else if (t->dtype == DT_C128) { *re = ((const double *)d)[2 * pos]; *im = ((const double *)d)[2 * pos + 1]; }
    else { *re = tensor_load_f(t, pos); *im = 0; }
}

void tensor_store_c(Tensor *t, int64_t pos, double re, double im) {
    void *d = t->storage->data;
    if (t->dtype == DT_C64) { ((float *)d)[2 * pos] = (float)re; ((float *)d)[2 * pos + 1] = (float)im; }
    else if (t->dtype == DT_C128) { ((double *)d)[2 * pos] = re; ((double *)d)[2 * pos + 1] = im; }
    else tensor_store_f(t, pos, re);
}

/* Copy one element between tensors of any dtypes, converting as PyTorch's copy_ does: ints
 * stay exact (no trip through double), complex keeps its imaginary part, floats round to the
 * destination type. The one primitive element-moving kernels (pad, gather, cat, ...) need. */
void tensor_move_elem(Tensor *dst, int64_t dpos, const Tensor *src, int64_t spos) {
    if (dst->dtype == src->dtype) {
        size_t es = dtype_size(dst->dtype);
        memcpy((char *)dst->storage->data + dpos * (int64_t)es, (const char *)src->storage->data + spos * (int64_t)es, es);
    } else if (dtype_is_complex(dst->dtype) || dtype_is_complex(src->dtype)) {
        double re, im;
        tensor_load_c(src, spos, &re, &im);
        tensor_store_c(dst, dpos, re, im);
    } else if ((dtype_is_int(dst->dtype) || dst->dtype == DT_BOOL) && (dtype_is_int(src->dtype) || src->dtype == DT_BOOL)) {
        tensor_store_i(dst, dpos, tensor_load_i(src, spos));
    } else {
        tensor_store_f(dst, dpos, tensor_load_f(src, spos));
    }
}

int64_t tensor_pos(const Tensor *t, int64_t linear) {
    int64_t pos = t->offset;
    for (int i = t->ndim - 1; i >= 0; i--) {
        int64_t s = t->size[i];
        if (s <= 0) break;
        pos += (linear % s) * t->stride[i];
        linear /= s;
    }
    return pos;
}

double tensor_get_f(const Tensor *t, int64_t linear) { return tensor_load_f(t, tensor_pos(t, linear)); }
void tensor_get_c(const Tensor *t, int64_t linear, double *re, double *im) { tensor_load_c(t, tensor_pos(t, linear), re, im); }
void tensor_set_f(Tensor *t, int64_t linear, double v) { tensor_store_f(t, tensor_pos(t, linear), v); }
int64_t tensor_get_i(const Tensor *t, int64_t linear) { return tensor_load_i(t, tensor_pos(t, linear)); }

void *tensor_elem_ptr(const Tensor *t, const int64_t *idx) {
    int64_t pos = t->offset;
    for (int i = 0; i < t->ndim; i++) pos += idx[i] * t->stride[i];
    return (char *)t->storage->data + pos * (int64_t)dtype_size(t->dtype);
}

int tensor_copy_into(MiCtx *ctx, Tensor *dst, const Tensor *src) {
    /* broadcast src against dst: align trailing dims */
    int64_t sstride[MI_MAX_DIMS];
    if (src->ndim > dst->ndim) goto bad;
    for (int i = 0; i < dst->ndim; i++) {
        int j = i - (dst->ndim - src->ndim);
        if (j < 0) { sstride[i] = 0; continue; }
        if (src->size[j] == dst->size[i]) sstride[i] = src->stride[j];
        else if (src->size[j] == 1) sstride[i] = 0;
        else goto bad;
    }
    int64_t n = tensor_numel(dst), idx[MI_MAX_DIMS] = {0};
    int64_t dp = dst->offset, sp = src->offset;
    /* a copy from an overlapping storage (copy_ of a view of itself) reads a snapshot first */
    Tensor *snap = NULL;
    if (src->storage == dst->storage) {
        snap = tensor_contiguous(ctx, (Tensor *)src);
        if (!snap) return -1;
        Tensor *tmp = snap;
        for (int i = 0; i < dst->ndim; i++) {
            int j = i - (dst->ndim - src->ndim);
            sstride[i] = j < 0 || tmp->size[j] == 1 ? 0 : tmp->stride[j];
        }
        src = tmp;
        sp = 0;
    }
    for (int64_t k = 0; k < n; k++) {
        tensor_move_elem(dst, dp, src, sp);
        for (int d = dst->ndim - 1; d >= 0; d--) {
            idx[d]++;
            dp += dst->stride[d];
            sp += sstride[d];
            if (idx[d] < dst->size[d]) break;
            dp -= dst->stride[d] * idx[d];
            sp -= sstride[d] * idx[d];
            idx[d] = 0;
        }
    }
    tensor_unref(snap);
    return 0;
bad:;
    char a[256], b[256];
    return mi_err(ctx, NULL, 0, 0, "cannot copy %s into %s: shapes do not broadcast",
                  tensor_type_str(src, a, sizeof a), tensor_type_str(dst, b, sizeof b));
}

Tensor *tensor_contiguous(MiCtx *ctx, Tensor *t) {
    if (tensor_is_contiguous(t) && t->offset == 0) return tensor_ref(t);
    Tensor *r = tensor_new(ctx, t->dtype, t->ndim, t->size);
    if (!r) return NULL;
    int64_t n = tensor_numel(t);
    size_t es = dtype_size(t->dtype);
    for (int64_t k = 0; k < n; k++)
        memcpy((char *)r->storage->data + k * es, (char *)t->storage->data + tensor_pos(t, k) * es, es);
    return r;
}

Tensor *tensor_clone(MiCtx *ctx, const Tensor *t) {
    Tensor *c = tensor_new_strided(ctx, t->dtype, t->ndim, t->size, t->stride, t->offset);
    if (c && tensor_copy_into(ctx, c, t)) { tensor_unref(c); return NULL; }
    return c;
}

Tensor *tensor_to_dtype(MiCtx *ctx, Tensor *t, DType dt) {
    if (t->dtype == dt) return tensor_ref(t);
    Tensor *r = tensor_new(ctx, dt, t->ndim, t->size);
    if (!r) return NULL;
    if (tensor_copy_into(ctx, r, t)) { tensor_unref(r); return NULL; }
    return r;
}

/* ---- random ---- */

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void tensor_fill_random(Tensor *t, uint64_t *seed) {
    int64_t n = tensor_numel(t);
    for (int64_t k = 0; k < n; k++) {
        uint64_t r = splitmix64(seed);
        int64_t pos = tensor_pos(t, k);
        if (t->dtype == DT_BOOL) tensor_store_i(t, pos, (int64_t)(r & 1));
        else if (dtype_is_int(t->dtype)) tensor_store_i(t, pos, 0);   /* as torch._dynamo.testing.rand_strided: valid as any index */
        else tensor_store_f(t, pos, (double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
    }
}

/* ---- comparison ---- */

CompareResult tensor_compare(const Tensor *a, const Tensor *b, double rtol, double atol) {
    CompareResult r = {0};
    r.worst_index = -1;
    r.shape_ok = a->ndim == b->ndim;
    for (int i = 0; r.shape_ok && i < a->ndim; i++) r.shape_ok = a->size[i] == b->size[i];
    if (!r.shape_ok) return r;
    int64_t n = tensor_numel(a);
    double worst = -1;
    bool cplx = dtype_is_complex(a->dtype) || dtype_is_complex(b->dtype);
    for (int64_t k = 0; k < n; k++) {
        double x, y, xi = 0, yi = 0;
        if (cplx) {
            tensor_get_c(a, k, &x, &xi);
            tensor_get_c(b, k, &y, &yi);
            if ((isnan(x) || isnan(xi)) && (isnan(y) || isnan(yi))) continue;
            if (x == y && xi == yi) continue;
        } else {
            x = tensor_get_f(a, k);
            y = tensor_get_f(b, k);
            if (isnan(x) && isnan(y)) continue;
            if (x == y) continue;                       /* also equal infinities */
        }
        double d = cplx ? hypot(x - y, xi - yi) : fabs(x - y), ay = cplx ? hypot(y, yi) : fabs(y);
        bool good = !isnan(d) && !isinf(d) && d <= atol + rtol * ay;
        if (isnan(d) || isinf(d)) d = INFINITY;
        double rel = ay != 0 ? d / ay : (d > 0 ? INFINITY : 0);
        if (d > r.max_abs) r.max_abs = d;
        if (rel > r.max_rel) r.max_rel = rel;
        if (!good) {
            r.mismatches++;
            if (d > worst) { worst = d; r.worst_index = k; }
        }
    }
    r.ok = r.mismatches == 0;
    return r;
}

const char *tensor_summary(const Tensor *t, char *buf, size_t n) {
    tensor_type_str(t, buf, n);
    size_t k = strlen(buf);
    int64_t ne = tensor_numel(t);
    k += (size_t)snprintf(buf + k, k < n ? n - k : 0, " {");
    for (int64_t i = 0; i < ne && i < 6 && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%.6g", i ? ", " : "", tensor_get_f(t, i));
    if (k < n) snprintf(buf + k, n - k, "%s}", ne > 6 ? ", ..." : "");
    return buf;
}
