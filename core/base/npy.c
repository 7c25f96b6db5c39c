/* npy.c — NumPy .npy files (format versions 1.0, 2.0, 3.0): the inputs and outputs recorded
 * from real PyTorch runs, and what the shell saves. The header is a Python dict literal; every
 * length in it is checked against the bytes actually present, so a malformed or hostile file
 * gives an error naming the file and the problem, never a crash. */
#include "base/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *descr; DType dt; } npy_types[] = {
    {"f4", DT_F32}, {"f8", DT_F64}, {"f2", DT_F16}, {"i8", DT_I64}, {"i4", DT_I32},
    {"i2", DT_I16}, {"i1", DT_I8}, {"u1", DT_U8}, {"b1", DT_BOOL}, {"c8", DT_C64},
    {"c16", DT_C128}, {"u2", DT_U16}, {"u4", DT_U32}, {"u8", DT_U64},
};

static DType descr_dtype(const char *s, bool *swap) {
    *swap = false;
    char order = s[0];
    if (order == '<' || order == '|' || order == '=') s++;
    else if (order == '>') { s++; *swap = true; }
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (!strcmp(s, npy_types[i].descr)) {
            if (dtype_size(npy_types[i].dt) == 1 || npy_types[i].dt == DT_BOOL) *swap = false;
            return npy_types[i].dt;
        }
    return DT_INVALID;
}

static const char *dtype_descr(DType dt) {
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (npy_types[i].dt == dt) return npy_types[i].descr;
    return NULL;
}

/* ---- a tiny parser for the header dict ---- */

typedef struct {
    const char *p, *end;
    MiCtx *ctx;
    const char *src;
} HP;

static void skip_ws(HP *h) { while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n')) h->p++; }

static int hp_err(HP *h, const char *what) {
    return mi_err(h->ctx, h->src, 0, 0, "malformed .npy header: %s", what);
}

static int parse_str(HP *h, char *out, size_t n) {
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return hp_err(h, "expected a quoted string");
    char q = *h->p++;
    size_t k = 0;
    while (h->p < h->end && *h->p != q) {
        if (k + 1 >= n) return hp_err(h, "string too long");
        out[k++] = *h->p++;
    }
    if (h->p >= h->end) return hp_err(h, "unterminated string");
    h->p++;
    out[k] = 0;
    return 0;
}

static bool accept(HP *h, char c) {
    skip_ws(h);
    if (h->p < h->end && *h->p == c) { h->p++; return true; }
    return false;
}

static int parse_header(HP *h, char *descr, size_t dn, bool *fortran, int *ndim, int64_t *shape) {
    bool got_d = false, got_f = false, got_s = false;
    if (!accept(h, '{')) return hp_err(h, "expected '{'");
    while (!accept(h, '}')) {
        char key[64];
        if (parse_str(h, key, sizeof key)) return -1;
        if (!accept(h, ':')) return hp_err(h, "expected ':' after key");
        skip_ws(h);
        if (!strcmp(key, "descr")) {
            if (parse_str(h, descr, dn)) return -1;
            got_d = true;
        } else if (!strcmp(key, "fortran_order")) {
            if (h->end - h->p >= 4 && !strncmp(h->p, "True", 4)) { *fortran = true; h->p += 4; }
            else if (h->end - h->p >= 5 && !strncmp(h->p, "False", 5)) { *fortran = false; h->p += 5; }
            else return hp_err(h, "fortran_order must be True or False");
            got_f = true;
        } else if (!strcmp(key, "shape")) {
            if (!accept(h, '(')) return hp_err(h, "shape must be a tuple");
            *ndim = 0;
            while (!accept(h, ')')) {
                skip_ws(h);
                if (h->p >= h->end || *h->p < '0' || *h->p > '9') return hp_err(h, "shape entries must be non-negative integers");
                int64_t v = 0;
                while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
                    if (v > (INT64_MAX - 9) / 10) return hp_err(h, "shape entry too large");
                    v = v * 10 + (*h->p++ - '0');
                }
                if (h->p < h->end && *h->p == 'L') h->p++;
                if (*ndim >= MI_MAX_DIMS) return hp_err(h, "too many dimensions");
                shape[(*ndim)++] = v;
                if (!accept(h, ',')) {
                    if (!accept(h, ')')) return hp_err(h, "expected ',' or ')' in shape");
                    break;
                }
            }
            got_s = true;
        } else {
            return mi_err(h->ctx, h->src, 0, 0, "malformed .npy header: unknown key '%s'", key);
        }
        if (!accept(h, ',')) {
            if (!accept(h, '}')) return hp_err(h, "expected ',' or '}'");
            break;
        }
    }
    if (!got_d) return hp_err(h, "missing 'descr'");
    if (!got_f) return hp_err(h, "missing 'fortran_order'");
    if (!got_s) return hp_err(h, "missing 'shape'");
    return 0;
}

static void byteswap(unsigned char *p, size_t n, size_t es) {
    for (size_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) { unsigned char t = p[a]; p[a] = p[b]; p[b] = t; }
}

Tensor *npy_parse(MiCtx *ctx, const void *data, size_t len, const char *source) {
    const unsigned char *d = data;
    const char *src = source ? source : "<npy>";
    if (len < 10 || memcmp(d, "\x93NUMPY", 6) != 0) {
        mi_err(ctx, src, 0, 0, "not a .npy file (missing \\x93NUMPY magic)");
        return NULL;
    }
    int major = d[6];
    size_t hlen, hstart;
    if (major == 1) { hlen = d[8] | (size_t)d[9] << 8; hstart = 10; }
    else if (major == 2 || major == 3) {
        if (len < 12) { mi_err(ctx, src, 0, 0, "truncated .npy header"); return NULL; }
        hlen = d[8] | (size_t)d[9] << 8 | (size_t)d[10] << 16 | (size_t)d[11] << 24;
        hstart = 12;
    } else {
        mi_err(ctx, src, 0, 0, "unsupported .npy format version %d.%d", major, d[7]);
        return NULL;
    }
    if (hlen > len - hstart) {
        mi_err(ctx, src, 0, 0, "truncated .npy header: header length %zu but only %zu bytes follow", hlen, len - hstart);
        return NULL;
    }
    HP h = { (const char *)d + hstart, (const char *)d + hstart + hlen, ctx, src };
    char descr[32];
    bool fortran = false;
    int ndim = 0;
    int64_t shape[MI_MAX_DIMS];
    if (parse_header(&h, descr, sizeof descr, &fortran, &ndim, shape)) return NULL;
    bool swap;
    DType dt = descr_dtype(descr, &swap);
    if (dt == DT_INVALID) {
        mi_err(ctx, src, 0, 0, "unsupported .npy dtype '%s'", descr);
        return NULL;
    }
    size_t es = dtype_size(dt);
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(numel, shape[i], &numel)) {
            mi_err(ctx, src, 0, 0, ".npy shape is too large (element count overflows)");
            return NULL;
        }
    size_t avail = len - hstart - hlen;
    if ((double)numel * (double)es > (double)avail) {
        mi_err(ctx, src, 0, 0, "truncated .npy data: shape needs %.0f bytes but the file has %zu",
               (double)numel * (double)es, avail);
        return NULL;
    }
    Tensor *t;
    if (fortran) {
        int64_t stride[MI_MAX_DIMS], st = 1;
        for (int i = 0; i < ndim; i++) { stride[i] = st; st *= shape[i] > 1 ? shape[i] : 1; }
        t = tensor_new_strided(ctx, dt, ndim, shape, stride, 0);
    } else {
        t = tensor_new(ctx, dt, ndim, shape);
    }
    if (!t) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", ctx->err.msg);
        mi_err(ctx, src, 0, 0, "%s", buf);
        return NULL;
    }
    memcpy(t->storage->data, d + hstart + hlen, (size_t)numel * es);
    if (swap) byteswap(t->storage->data, (size_t)numel * (dtype_is_complex(dt) ? 2 : 1), dtype_is_complex(dt) ? es / 2 : es);
    if (fortran) {
        Tensor *c = tensor_contiguous(ctx, t);
        tensor_unref(t);
        t = c;
    }
    return t;
}

Tensor *npy_load(MiCtx *ctx, const char *path) {
    size_t len;
    char *data = mi_read_file(ctx, path, &len);
    if (!data) return NULL;
    Tensor *t = npy_parse(ctx, data, len, path);
    free(data);
    return t;
}

int npy_save(MiCtx *ctx, const char *path, const Tensor *t) {
    /* numpy has no bf16/float8: their values are written as float32, which holds them exactly
     * (as the torch-cases recorded PyTorch's bf16 tensors) */
    if (!dtype_descr(t->dtype) && dtype_is_float(t->dtype)) {
        Tensor *f = tensor_to_dtype(ctx, (Tensor *)t, DT_F32);
        if (!f) return -1;
        int rc = npy_save(ctx, path, f);
        tensor_unref(f);
        return rc;
    }
    const char *descr = dtype_descr(t->dtype);
    if (!descr) return mi_err(ctx, path, 0, 0, "dtype %s has no .npy equivalent", dtype_abbrev(t->dtype));
    char dict[512];
    size_t k = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s%s', 'fortran_order': False, 'shape': (",
                                (t->dtype == DT_BOOL || dtype_size(t->dtype) == 1) ? "|" : "<", descr);
    for (int i = 0; i < t->ndim; i++)
        k += (size_t)snprintf(dict + k, sizeof dict - k, "%lld,%s", (long long)t->size[i],
                              i + 1 < t->ndim ? " " : "");
    if (t->ndim > 1) k--;                         /* "(2, 3)" not "(2, 3,)"; keep "(5,)" */
    k += (size_t)snprintf(dict + k, sizeof dict - k, "), }");
    size_t total = 10 + k + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = k + pad + 1;
    size_t es = dtype_size(t->dtype);
    int64_t n = tensor_numel(t);
    size_t nbytes = 10 + hlen + (size_t)n * es;
    char *buf = malloc(nbytes);
    if (!buf) return mi_err(ctx, path, 0, 0, "out of memory writing .npy");
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, k);
    memset(buf + 10 + k, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    char *out = buf + 10 + hlen;
    for (int64_t i = 0; i < n; i++)
        memcpy(out + i * es, (char *)t->storage->data + tensor_pos(t, i) * es, es);
    int rc = mi_write_file(ctx, path, buf, nbytes);
    free(buf);
    return rc;
}
