/* dtype.c — the table of tensor element types (names PyTorch prints, C types, .npy codes,
 * sizes) and devices, plus torch.result_type-style promotion. Used by the FX parser/printer,
 * the interpreter, .npy I/O and the code generators. */
#include "base/dtype.h"

#include <stdio.h>
#include <string.h>

typedef struct DTypeInfo {
    const char *abbrev, *torch, *ctype, *npy;
    size_t size;
    char cat;               /* 'b' bool, 'i' int, 'f' float, 'c' complex */
} DTypeInfo;

static const DTypeInfo dtypes[DT_COUNT] = {
    [DT_F32]    = {"f32",  "torch.float32",  "float",    "<f4", 4, 'f'},
    [DT_F64]    = {"f64",  "torch.float64",  "double",   "<f8", 8, 'f'},
    [DT_F16]    = {"f16",  "torch.float16",  "uint16_t", "<f2", 2, 'f'},
    [DT_BF16]   = {"bf16", "torch.bfloat16", "uint16_t", NULL,  2, 'f'},
    [DT_I64]    = {"i64",  "torch.int64",    "int64_t",  "<i8", 8, 'i'},
    [DT_I32]    = {"i32",  "torch.int32",    "int32_t",  "<i4", 4, 'i'},
    [DT_I16]    = {"i16",  "torch.int16",    "int16_t",  "<i2", 2, 'i'},
    [DT_I8]     = {"i8",   "torch.int8",     "int8_t",   "|i1", 1, 'i'},
    [DT_U8]     = {"u8",   "torch.uint8",    "uint8_t",  "|u1", 1, 'i'},
    [DT_BOOL]   = {"b8",   "torch.bool",     "bool",     "|b1", 1, 'b'},
    [DT_C64]    = {"c64",  "torch.complex64",  "float _Complex",  "<c8",  8, 'c'},
    [DT_C128]   = {"c128", "torch.complex128", "double _Complex", "<c16", 16, 'c'},
    [DT_F8E4M3] = {"f8e4m3fn", "torch.float8_e4m3fn", "uint8_t", NULL, 1, 'f'},
    [DT_F8E5M2] = {"f8e5m2",   "torch.float8_e5m2",   "uint8_t", NULL, 1, 'f'},
    [DT_U16]    = {"u16",  "torch.uint16",   "uint16_t", "<u2", 2, 'i'},
    [DT_U32]    = {"u32",  "torch.uint32",   "uint32_t", "<u4", 4, 'i'},
    [DT_U64]    = {"u64",  "torch.uint64",   "uint64_t", "<u8", 8, 'i'},
    [DT_F8E4M3FNUZ] = {"f8e4m3fnuz", "torch.float8_e4m3fnuz", "uint8_t", NULL, 1, 'f'},
    [DT_F8E5M2FNUZ] = {"f8e5m2fnuz", "torch.float8_e5m2fnuz", "uint8_t", NULL, 1, 'f'},
};

static bool valid(DType t) { return t >= 0 && t < DT_COUNT; }

const char *dtype_abbrev(DType t) { return valid(t) ? dtypes[t].abbrev : "?"; }
const char *dtype_torch_name(DType t) { return valid(t) ? dtypes[t].torch : "torch.invalid"; }
const char *dtype_c_type(DType t) { return valid(t) ? dtypes[t].ctype : "void"; }
const char *dtype_npy_descr(DType t) { return valid(t) ? dtypes[t].npy : NULL; }
size_t dtype_size(DType t) { return valid(t) ? dtypes[t].size : 0; }
bool dtype_is_float(DType t) { return valid(t) && dtypes[t].cat == 'f'; }
bool dtype_is_int(DType t) { return valid(t) && dtypes[t].cat == 'i'; }
bool dtype_is_complex(DType t) { return valid(t) && dtypes[t].cat == 'c'; }
bool dtype_is_float8(DType t) { return t == DT_F8E4M3 || t == DT_F8E5M2 || t == DT_F8E4M3FNUZ || t == DT_F8E5M2FNUZ; }

int64_t dtype_int_wrap(DType t, int64_t v) {
    switch (t) {
    case DT_I32: return (int32_t)v;
    case DT_I16: return (int16_t)v;
    case DT_I8: return (int8_t)v;
    case DT_U8: return (uint8_t)v;
    case DT_U16: return (uint16_t)v;
    case DT_U32: return (uint32_t)v;
    case DT_BOOL: return v != 0;
    default: return v;
    }
}

/* the width in bits of integer dtype t (64 for anything else) */
static int int_bits(DType t) { return valid(t) && dtypes[t].cat == 'i' && dtypes[t].size < 8 ? 8 * (int)dtypes[t].size : 64; }
static bool int_unsigned(DType t) { return t == DT_U8 || t == DT_U16 || t == DT_U32 || t == DT_U64; }

int64_t dtype_shift_left(DType t, int64_t a, int64_t b) {
    int w = int_bits(t);
    if (int_unsigned(t) ? (uint64_t)b >= (uint64_t)w : (b < 0 || b >= w)) return 0;
    return dtype_int_wrap(t, (int64_t)((uint64_t)a << b));
}

int64_t dtype_shift_right(DType t, int64_t a, int64_t b) {
    int w = int_bits(t);
    if (int_unsigned(t)) return (uint64_t)b >= (uint64_t)w ? 0 : (int64_t)((uint64_t)a >> b);
    return a >> (b < 0 || b >= w - 1 ? w - 1 : b);
}

static bool eqn(const char *s, size_t n, const char *lit) {
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

DType dtype_from_abbrev(const char *s, size_t n) {
    if (!s) return DT_INVALID;
    for (int t = 0; t < DT_COUNT; t++)
        if (eqn(s, n, dtypes[t].abbrev)) return (DType)t;
    return DT_INVALID;
}

/* Aliases torch accepts besides the canonical names. */
static const struct { const char *name; DType t; } torch_aliases[] = {
    {"torch.float", DT_F32}, {"torch.double", DT_F64}, {"torch.half", DT_F16},
    {"torch.long", DT_I64}, {"torch.int", DT_I32}, {"torch.short", DT_I16},
    {"torch.cfloat", DT_C64}, {"torch.cdouble", DT_C128},
};

DType dtype_from_torch_name(const char *s, size_t n) {
    if (!s) return DT_INVALID;
    for (int t = 0; t < DT_COUNT; t++)
        if (eqn(s, n, dtypes[t].torch)) return (DType)t;
    for (size_t i = 0; i < sizeof torch_aliases / sizeof torch_aliases[0]; i++)
        if (eqn(s, n, torch_aliases[i].name)) return torch_aliases[i].t;
    return DT_INVALID;
}

DType dtype_from_npy_descr(const char *s) {
    if (!s) return DT_INVALID;
    for (int t = 0; t < DT_COUNT; t++) {
        const char *d = dtypes[t].npy;
        if (!d) continue;
        if (strcmp(s, d) == 0) return (DType)t;
        /* "=f4", "<f4" and "|f4" name the same type on a little-endian machine */
        if ((s[0] == '=' || s[0] == '<' || s[0] == '|') && strcmp(s + 1, d + 1) == 0) return (DType)t;
    }
    return DT_INVALID;
}

static int cat_rank(char c) { return c == 'b' ? 0 : c == 'i' ? 1 : c == 'f' ? 2 : 3; }

DType dtype_promote(DType a, DType b) {
    if (!valid(a)) return b;
    if (!valid(b) || a == b) return a;
    if (dtype_is_float8(a) || dtype_is_float8(b)) return DT_INVALID;   /* c10: not supported */
    int ca = cat_rank(dtypes[a].cat), cb = cat_rank(dtypes[b].cat);
    if (ca != cb) {
        DType hi = ca > cb ? a : b, lo = ca > cb ? b : a;
        /* complex wins over float; keep the precision of a double operand */
        if (dtypes[hi].cat == 'c' && lo == DT_F64) return DT_C128;
        return hi;
    }
    /* c10: the barebones unsigned types promote only with bool and with floats (which win) */
    bool ua = a == DT_U16 || a == DT_U32 || a == DT_U64, ub = b == DT_U16 || b == DT_U32 || b == DT_U64;
    if (ua || ub) return a == DT_BOOL ? b : b == DT_BOOL ? a : DT_INVALID;
    switch (dtypes[a].cat) {
    case 'i':
        if ((a == DT_U8 && b == DT_I8) || (a == DT_I8 && b == DT_U8)) return DT_I16;
        if (a == DT_U8) return b;
        if (b == DT_U8) return a;
        return dtypes[a].size >= dtypes[b].size ? a : b;
    case 'f':
        if ((a == DT_F16 && b == DT_BF16) || (a == DT_BF16 && b == DT_F16)) return DT_F32;
        return dtypes[a].size > dtypes[b].size ? a : b;
    case 'c':
        return dtypes[a].size >= dtypes[b].size ? a : b;
    default:
        return a;
    }
}

const char *device_str(Device d, char *buf, size_t n) {
    const char *k = d.kind == DEV_CUDA ? "cuda" : d.kind == DEV_META ? "meta" : "cpu";
    if (d.index >= 0) snprintf(buf, n, "%s:%d", k, d.index);
    else snprintf(buf, n, "%s", k);
    return buf;
}

const char *device_repr(Device d, char *buf, size_t n) {
    const char *k = d.kind == DEV_CUDA ? "cuda" : d.kind == DEV_META ? "meta" : "cpu";
    if (d.index >= 0) snprintf(buf, n, "device(type='%s', index=%d)", k, d.index);
    else snprintf(buf, n, "device(type='%s')", k);
    return buf;
}

bool device_eq(Device a, Device b) { return a.kind == b.kind && a.index == b.index; }
