/* dtype.h — tensor element types and devices, with the names PyTorch prints for them. */
#ifndef DTYPE_H
#define DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    DT_F32, DT_F64, DT_F16, DT_BF16,
    DT_I64, DT_I32, DT_I16, DT_I8, DT_U8, DT_BOOL,
    DT_C64, DT_C128,
    DT_F8E4M3, DT_F8E5M2,
    DT_U16, DT_U32, DT_U64,     /* PyTorch's "barebones" unsigned types: storage, casts, few ops */
    DT_F8E4M3FNUZ, DT_F8E5M2FNUZ,   /* the AMD float8 kinds (no -0, no inf, NaN = 0x80) */
    DT_COUNT,
    DT_INVALID = -1
} DType;

const char *dtype_abbrev(DType t);       /* "f32", "b8", "c64" (FX annotation form) */
const char *dtype_torch_name(DType t);   /* "torch.float32" */
const char *dtype_c_type(DType t);       /* "float", "double", "int64_t", "bool", ... */
const char *dtype_npy_descr(DType t);    /* "<f4", "|b1", ... ; NULL if none */
size_t dtype_size(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);              /* integer incl. bool? no: bool excluded */
bool dtype_is_complex(DType t);
DType dtype_from_abbrev(const char *s, size_t n);        /* DT_INVALID if unknown */
DType dtype_from_torch_name(const char *s, size_t n);    /* accepts "torch.float32", "torch.float", "torch.long", ... */
DType dtype_from_npy_descr(const char *s);
/* Type promotion as torch.result_type for two tensors / tensor and python scalar (c10's
 * promoteTypes). DT_INVALID where PyTorch refuses: u16/u32/u64 with another integer type, a
 * float8 type with any other type ("Promotion for Float8 Types is not supported"). */
DType dtype_promote(DType a, DType b);
/* One of the four float8 storage types (float8_e4m3fn, _e5m2, _e4m3fnuz, _e5m2fnuz). */
bool dtype_is_float8(DType t);
/* Integer arithmetic as ATen does it in dtype t (values held in int64): v wrapped to t's width;
 * and the shifts of BinaryOpsKernel.cpp (lshift_kernel / rshift_kernel): a count below 0 or
 * not below t's width gives 0 (left) or shifts by width - 1 (right, signed: the sign fill;
 * unsigned: 0). Example: int8 1 << 7 = -128, int8 -8 >> 9 = -1, int32 1 << 40 = 0. */
int64_t dtype_int_wrap(DType t, int64_t v);
int64_t dtype_shift_left(DType t, int64_t a, int64_t b);
int64_t dtype_shift_right(DType t, int64_t a, int64_t b);

typedef enum { DEV_CPU, DEV_CUDA, DEV_META } DevKind;
typedef struct Device { DevKind kind; int index; /* -1 = none given */ } Device;

/* "cpu", "cuda:0" (annotation form); returns buf */
const char *device_str(Device d, char *buf, size_t n);
/* "device(type='cuda', index=0)" (argument form) */
const char *device_repr(Device d, char *buf, size_t n);
bool device_eq(Device a, Device b);

#endif
