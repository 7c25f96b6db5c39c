/* test_tensor_npy.c — strided tensors and .npy files: allocation limits, views, copies,
 * half-precision conversions, comparison, deterministic random fill; .npy round trips of every
 * dtype, Fortran order, format versions 1-3, big-endian data, and malformed files (each must
 * give a clear error, never a crash). */
#include "base/tensor.h"
#include "tap.h"

#include <unistd.h>

static MiCtx *ctx;

/* Build a .npy image: magic, version, header length (or an override), header text, data. */
static unsigned char *make_npy(int major, const char *header, const void *data, size_t dlen, long hlen_override, size_t *len) {
    size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
    unsigned char *b = calloc(1, pre + hl + dlen + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    size_t h = hlen_override >= 0 ? (size_t)hlen_override : hl;
    b[8] = (unsigned char)(h & 0xff);
    b[9] = (unsigned char)(h >> 8);
    if (major != 1) { b[10] = (unsigned char)(h >> 16); b[11] = (unsigned char)(h >> 24); }
    memcpy(b + pre, header, hl);
    if (dlen) memcpy(b + pre + hl, data, dlen);
    *len = pre + hl + dlen;
    return b;
}

static void test_alloc(void) {
    int64_t huge[2] = {1000000, 1000000};
    Tensor *t = tensor_new(ctx, DT_F32, 2, huge);
    ok(t == NULL, "a 4 TB tensor is refused");
    is_str(ctx->err.msg, "cannot allocate 4.0 TB for f32[1000000, 1000000] (more than this machine's memory)", "absurd size message");
    int64_t over[3] = {INT64_MAX / 2, 4, 4};
    ok(tensor_new(ctx, DT_F64, 3, over) == NULL, "an overflowing size is refused");
    ok(strstr(ctx->err.msg, "cannot allocate") && strstr(ctx->err.msg, "f64[4611686018427387903, 4, 4]"), "overflow message: %s", ctx->err.msg);
    int64_t neg[1] = {-3};
    ok(tensor_new(ctx, DT_F32, 1, neg) == NULL, "negative size refused");
    is_str(ctx->err.msg, "negative size -3 in dimension 0", "negative size message");
    int64_t s[2] = {2, 3}, st[2] = {1, 2};
    t = tensor_new_strided(ctx, DT_F32, 2, s, st, 1);
    ok(t && t->storage->nbytes == 7 * 4, "strided tensor gets offset + extent storage");
    ok(t && !tensor_is_contiguous(t), "column-major is not contiguous");
    tensor_unref(t);
    int64_t z[2] = {0, 5};
    t = tensor_new(ctx, DT_F32, 2, z);
    ok(t && tensor_numel(t) == 0, "empty tensor");
    tensor_unref(t);
}

static void test_views_copies(void) {
    int64_t s[2] = {2, 3};
    Tensor *a = tensor_new(ctx, DT_F32, 2, s);
    for (int i = 0; i < 6; i++) tensor_set_f(a, i, i);
    int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
    Tensor *t = tensor_view(a, 2, ts, tst, 0);
    is_int(a->storage->refs, 2, "view shares storage");
    is_double(tensor_get_f(t, 1), 3, 0, "transposed view element (0,1)");
    Tensor *c = tensor_contiguous(ctx, t);
    ok(tensor_is_contiguous(c) && c->storage != a->storage, "contiguous copies a transposed view");
    is_double(tensor_get_f(c, 2), 1, 0, "copied element order");
    Tensor *h = tensor_to_dtype(ctx, c, DT_F16);
    ok(h && h->dtype == DT_F16 && tensor_get_f(h, 5) == 5, "to f16");
    int64_t rs[1] = {3};
    Tensor *row = tensor_new(ctx, DT_I64, 1, rs);
    for (int i = 0; i < 3; i++) tensor_set_f(row, i, 10 * i);
    ok(tensor_copy_into(ctx, a, row) == 0, "copy_into broadcasts a row");
    is_double(tensor_get_f(a, 4), 10, 0, "broadcast value");
    int64_t bs[1] = {4};
    Tensor *bad = tensor_new(ctx, DT_F32, 1, bs);
    ok(tensor_copy_into(ctx, a, bad) != 0, "non-broadcastable copy fails");
    is_str(ctx->err.msg, "cannot copy f32[4] into f32[2, 3]: shapes do not broadcast", "copy error message");
    char buf[128];
    is_str(tensor_summary(row, buf, sizeof buf), "i64[3] {0, 10, 20}", "summary text");
    tensor_unref(t); tensor_unref(c); tensor_unref(h); tensor_unref(row); tensor_unref(bad); tensor_unref(a);
}

static void test_conversions(void) {
    is_int(mi_f32_to_f16(1.0f), 0x3c00, "f16 1.0");
    is_int(mi_f32_to_f16(-2.5f), 0xc100, "f16 -2.5");
    is_int(mi_f32_to_f16(65504.0f), 0x7bff, "f16 max");
    is_int(mi_f32_to_f16(1e6f), 0x7c00, "f16 overflow -> inf");
    is_double(mi_f16_to_f32(0x0001), 5.960464477539063e-08, 0, "f16 smallest subnormal");
    is_double(mi_f16_to_f32(mi_f32_to_f16(0.1f)), 0.0999755859375, 0, "f16 rounding of 0.1");
    is_int(mi_f32_to_bf16(1.0f), 0x3f80, "bf16 1.0");
    is_double(mi_bf16_to_f32(mi_f32_to_bf16(3.14159f)), 3.140625, 0, "bf16 rounding of pi");
    int64_t s[1] = {4};
    Tensor *t = tensor_new(ctx, DT_F8E4M3, 1, s);
    tensor_set_f(t, 0, 1.0); tensor_set_f(t, 1, 448); tensor_set_f(t, 2, 0.3); tensor_set_f(t, 3, -3);
    ok(tensor_get_f(t, 0) == 1 && tensor_get_f(t, 1) == 448 && tensor_get_f(t, 3) == -3, "f8e4m3 exact values");
    is_double(tensor_get_f(t, 2), 0.3125, 0, "f8e4m3 rounds 0.3 to 0.3125");
    tensor_unref(t);
}

static void test_compare_random(void) {
    int64_t s[1] = {4};
    Tensor *a = tensor_new(ctx, DT_F32, 1, s), *b = tensor_new(ctx, DT_F64, 1, s);
    double av[4] = {1, NAN, INFINITY, 100}, bv[4] = {1.00001, NAN, INFINITY, 100.02};
    for (int i = 0; i < 4; i++) { tensor_set_f(a, i, av[i]); tensor_set_f(b, i, bv[i]); }
    CompareResult r = tensor_compare(a, b, 1e-4, 1e-5);
    ok(!r.ok && r.mismatches == 1 && r.worst_index == 3, "one mismatch at index 3 (nan == nan, inf == inf)");
    r = tensor_compare(a, b, 1e-3, 1e-5);
    ok(r.ok, "within rtol 1e-3");
    is_double(r.max_abs, 0.02, 1e-5, "max abs error");
    int64_t s2[2] = {2, 2};
    Tensor *c = tensor_new(ctx, DT_F32, 2, s2);
    ok(!tensor_compare(a, c, 1, 1).shape_ok, "shape mismatch detected");
    uint64_t seed1 = 42, seed2 = 42;
    Tensor *x = tensor_new(ctx, DT_F32, 2, s2), *y = tensor_new(ctx, DT_F32, 2, s2);
    tensor_fill_random(x, &seed1);
    tensor_fill_random(y, &seed2);
    ok(tensor_compare(x, y, 0, 0).ok, "random fill is deterministic per seed");
    bool in_range = true;
    for (int i = 0; i < 4; i++) in_range &= tensor_get_f(x, i) >= -1 && tensor_get_f(x, i) < 1;
    ok(in_range && tensor_get_f(x, 0) != tensor_get_f(x, 1), "random floats in [-1, 1) and varied");
    tensor_unref(a); tensor_unref(b); tensor_unref(c); tensor_unref(x); tensor_unref(y);
}

static void test_npy_roundtrip(void) {
    char dir[] = "/tmp/minductor_npy_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    DType all[] = {DT_F32, DT_F64, DT_F16, DT_I64, DT_I32, DT_I16, DT_I8, DT_U8, DT_BOOL, DT_C64, DT_C128};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        int64_t s[3] = {2, 3, 2};
        Tensor *t = tensor_new(ctx, all[k], 3, s);
        for (int i = 0; i < 12; i++) tensor_set_f(t, i, all[k] == DT_BOOL ? (i % 3 == 0) : (i * 3 % 7) - (all[k] == DT_U8 ? 0 : 2));
        /* save a transposed view: the file must hold the logical (C) order */
        int64_t vs[3] = {2, 2, 3}, vst[3] = {6, 1, 2};
        Tensor *v = tensor_view(t, 3, vs, vst, 0);
        char path[256];
        snprintf(path, sizeof path, "%s/t%zu.npy", dir, k);
        int rc = npy_save(ctx, path, v);
        Tensor *back = rc == 0 ? npy_load(ctx, path) : NULL;
        ok(back && back->dtype == all[k] && back->ndim == 3 && back->size[1] == 2 && tensor_compare(back, v, 0, 0).ok,
           "round trip %s", dtype_abbrev(all[k]));
        size_t len;
        char *text = mi_read_file(ctx, path, &len);
        ok(text && (10 + (unsigned char)text[8]) % 64 == 0, "%s header is 64-byte aligned", dtype_abbrev(all[k]));
        free(text);
        unlink(path);
        tensor_unref(back); tensor_unref(v); tensor_unref(t);
    }
    /* 0-d and 1-d shapes print as () and (n,) */
    Tensor *sc = tensor_new(ctx, DT_F32, 0, NULL);
    tensor_set_f(sc, 0, 2.5);
    char path[256];
    snprintf(path, sizeof path, "%s/scalar.npy", dir);
    npy_save(ctx, path, sc);
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    ok(text && strstr(text + 10, "'shape': (), "), "0-d header has shape ()");
    Tensor *back = npy_load(ctx, path);
    ok(back && back->ndim == 0 && tensor_get_f(back, 0) == 2.5, "0-d round trip");
    free(text); tensor_unref(back); tensor_unref(sc); unlink(path);
    rmdir(dir);
}

static void test_npy_variants(void) {
    float data[6] = {0, 1, 2, 3, 4, 5};
    size_t len;
    /* Fortran order: column-major data of a 2x3 matrix [[0,2,4],[1,3,5]] */
    unsigned char *b = make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", data, sizeof data, -1, &len);
    Tensor *t = npy_parse(ctx, b, len, "f.npy");
    double want[6] = {0, 2, 4, 1, 3, 5};
    bool good = t && t->size[0] == 2 && t->size[1] == 3;
    for (int i = 0; good && i < 6; i++) good = tensor_get_f(t, i) == want[i];
    ok(good, "Fortran-order file reads in logical order");
    tensor_unref(t); free(b);
    b = make_npy(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }\n", data, sizeof data, -1, &len);
    t = npy_parse(ctx, b, len, "v2.npy");
    ok(t && t->ndim == 1 && tensor_get_f(t, 5) == 5, "format version 2.0");
    tensor_unref(t); free(b);
    b = make_npy(3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3, 2)}", data, sizeof data, -1, &len);
    t = npy_parse(ctx, b, len, "v3.npy");
    ok(t && t->size[0] == 3 && tensor_get_f(t, 3) == 3, "format version 3.0, double quotes, no trailing comma");
    tensor_unref(t); free(b);
    unsigned char be[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};    /* 1.0f, 2.0f big-endian */
    b = make_npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be, sizeof be, -1, &len);
    t = npy_parse(ctx, b, len, "be.npy");
    ok(t && tensor_get_f(t, 0) == 1 && tensor_get_f(t, 1) == 2, "big-endian data is byte-swapped");
    tensor_unref(t); free(b);
    unsigned char bools[3] = {1, 0, 1};
    b = make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bools, 3, -1, &len);
    t = npy_parse(ctx, b, len, "b.npy");
    ok(t && t->dtype == DT_BOOL && tensor_get_i(t, 2) == 1 && tensor_get_i(t, 1) == 0, "bool |b1");
    tensor_unref(t); free(b);
}

static void test_npy_malformed(void) {
    float data[4] = {0};
    struct { const char *name; int major; const char *hdr; size_t dlen; long hlen; const char *want; } cases[] = {
        {"bad magic", 0, NULL, 0, -1, "not a .npy file (missing \\x93NUMPY magic)"},
        {"version 9", 9, "{}", 0, -1, "unsupported .npy format version 9.0"},
        {"header length past the end", 1, "{'descr': '<f4'}", 0, 60000, "truncated .npy header: header length 60000 but only 16 bytes follow"},
        {"huge v2 header length", 2, "{}", 0, 0x7fffffff, "truncated .npy header: header length 2147483647 but only 2 bytes follow"},
        {"not a dict", 1, "['descr']", 0, -1, "malformed .npy header: expected '{'"},
        {"missing shape", 1, "{'descr': '<f4', 'fortran_order': False}", 0, -1, "malformed .npy header: missing 'shape'"},
        {"missing descr", 1, "{'fortran_order': False, 'shape': (1,)}", 4, -1, "malformed .npy header: missing 'descr'"},
        {"unknown key", 1, "{'descr': '<f4', 'color': 1}", 0, -1, "malformed .npy header: unknown key 'color'"},
        {"bad fortran_order", 1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': ()}", 0, -1,
         "malformed .npy header: fortran_order must be True or False"},
        {"negative shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 0, -1,
         "malformed .npy header: shape entries must be non-negative integers"},
        {"unterminated string", 1, "{'descr': '<f4", 0, -1, "malformed .npy header: unterminated string"},
        {"unsupported dtype", 1, "{'descr': '<U8', 'fortran_order': False, 'shape': (1,)}", 0, -1, "unsupported .npy dtype '<U8'"},
        {"data shorter than shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}", 16, -1,
         "truncated .npy data: shape needs 20 bytes but the file has 16"},
        {"absurd shape", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000)}", 16, -1,
         "truncated .npy data: shape needs 8000000000000000000 bytes but the file has 16"},
        {"overflowing shape", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", 0, -1,
         ".npy shape is too large (element count overflows)"},
        {"too many dims", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 4, -1,
         "malformed .npy header: too many dimensions"},
        {"shape entry too large", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0, -1,
         "malformed .npy header: shape entry too large"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        unsigned char *b;
        if (cases[i].major == 0) { static const char zip[16] = "PK\x03\x04 zip file"; b = calloc(1, 16); memcpy(b, zip, 16); len = 16; }
        else b = make_npy(cases[i].major, cases[i].hdr, data, cases[i].dlen, cases[i].hlen, &len);
        Tensor *t = npy_parse(ctx, b, len, "bad.npy");
        ok(t == NULL, "malformed: %s fails", cases[i].name);
        is_str(ctx->err.msg, cases[i].want, "malformed: %s message", cases[i].name);
        is_str(ctx->err.file, "bad.npy", "malformed: %s names the file", cases[i].name);
        tensor_unref(t);
        free(b);
    }
    /* every truncation of a good file fails cleanly */
    size_t len;
    unsigned char *b = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", data, sizeof data, -1, &len);
    int clean = 0;
    for (size_t cut = 0; cut < len; cut++) {
        Tensor *t = npy_parse(ctx, b, cut, "cut.npy");
        clean += t == NULL && ctx->err.msg[0];
        tensor_unref(t);
    }
    is_int(clean, (int)len, "all %zu truncations give an error", len);
    free(b);
    ok(npy_load(ctx, "/nonexistent/x.npy") == NULL && strstr(ctx->err.msg, "cannot open"), "missing file error");
}

int main(void) {
    ctx = mi_ctx_new();
    test_alloc();
    test_views_copies();
    test_conversions();
    test_compare_random();
    test_npy_roundtrip();
    test_npy_variants();
    test_npy_malformed();
    mi_ctx_free(ctx);
    return done_testing();
}
