/* tensor.h — strided CPU tensors with reference-counted storage, for the reference
 * interpreter, .npy I/O, random inputs and comparing results. Sizes are concrete here. */
#ifndef TENSOR_H
#define TENSOR_H

#include "base/mi.h"
#include "base/dtype.h"

#define MI_MAX_DIMS 16

typedef struct Storage { int refs; size_t nbytes; void *data; } Storage;

typedef struct Tensor {
    int refs;
    DType dtype;
    int ndim;
    int64_t size[MI_MAX_DIMS];
    int64_t stride[MI_MAX_DIMS];   /* in elements */
    int64_t offset;                /* in elements */
    Storage *storage;
} Tensor;

/* New contiguous tensor, zero-filled. NULL + ctx error when the size is absurd or malloc fails
 * ("cannot allocate 1.2 TB for f32[...]"). */
Tensor *tensor_new(MiCtx *ctx, DType dt, int ndim, const int64_t *size);
/* New tensor with explicit strides over fresh storage big enough for them. */
Tensor *tensor_new_strided(MiCtx *ctx, DType dt, int ndim, const int64_t *size, const int64_t *stride, int64_t offset);
/* A view sharing storage. */
Tensor *tensor_view(Tensor *base, int ndim, const int64_t *size, const int64_t *stride, int64_t offset);
/* Tensor constants of the loaded graph, held by the session context (MiCtx.consts): set takes a
 * new reference (replacing one of the same name), get borrows (NULL when absent), clear drops
 * them all (a new graph is loaded; mi_ctx_free). */
typedef struct MiConst { char *name; Tensor *t; } MiConst;
void mi_const_set(MiCtx *ctx, const char *name, Tensor *t);
Tensor *mi_const_get(const MiCtx *ctx, const char *name);
void mi_consts_clear(MiCtx *ctx);

Tensor *tensor_ref(Tensor *t);
void tensor_unref(Tensor *t);

int64_t tensor_numel(const Tensor *t);
bool tensor_is_contiguous(const Tensor *t);
Tensor *tensor_contiguous(MiCtx *ctx, Tensor *t);   /* new ref; copies if needed */
Tensor *tensor_to_dtype(MiCtx *ctx, Tensor *t, DType dt);
/* A copy with its own storage and the same sizes, strides and offset (a transposed input stays
 * transposed). NULL + ctx error when it cannot be allocated. */
Tensor *tensor_clone(MiCtx *ctx, const Tensor *t);

/* Element access by linear (row-major logical) index, converted to double / int64. */
double tensor_get_f(const Tensor *t, int64_t linear);
void tensor_set_f(Tensor *t, int64_t linear, double v);
int64_t tensor_get_i(const Tensor *t, int64_t linear);
/* Pointer to the element at a multi-index. */
void *tensor_elem_ptr(const Tensor *t, const int64_t *idx);

/* Floats uniform in [-1, 1), bools 0/1 at random, integers 0 (as torch._dynamo.testing.rand_strided
 * makes the inputs of output_code.py's benchmark: an int input is often an index). */
void tensor_fill_random(Tensor *t, uint64_t *seed);

/* Compare like torch.allclose(a, b, rtol, atol) (nan == nan counts as equal, shapes must
 * match; dtypes may differ). Reports the worst absolute and relative error. */
typedef struct CompareResult {
    bool ok; bool shape_ok;
    double max_abs, max_rel;
    int64_t mismatches, worst_index;
} CompareResult;
CompareResult tensor_compare(const Tensor *a, const Tensor *b, double rtol, double atol);

/* Short text "f32[4, 8] {0.1, 0.2, ...}" for messages; returns buf. */
const char *tensor_summary(const Tensor *t, char *buf, size_t n);

/* Raw element access by storage index (elements from the start of the storage, i.e. the
 * offset already applied): load/store converting from/to double or int64. Complex types read
 * and write the real part. */
double tensor_load_f(const Tensor *t, int64_t pos);
void tensor_store_f(Tensor *t, int64_t pos, double v);
/* float -> integer dtype dt the way PyTorch's CPU kernels convert (NaN, inf -> the minimum). */
int64_t tensor_float_to_int(double v, DType dt);
int64_t tensor_load_i(const Tensor *t, int64_t pos);
void tensor_store_i(Tensor *t, int64_t pos, int64_t v);
/* Complex access: real dtypes load as (v, 0) and store the real part. */
void tensor_load_c(const Tensor *t, int64_t pos, double *re, double *im);
void tensor_store_c(Tensor *t, int64_t pos, double re, double im);
/* tensor_load_c by row-major linear index. */
void tensor_get_c(const Tensor *t, int64_t linear, double *re, double *im);
/* Copy the element at storage index spos of src to dpos of dst, converting the dtype as
 * copy_ does (ints exact, complex whole, floats rounded to dst's type). */
void tensor_move_elem(Tensor *dst, int64_t dpos, const Tensor *src, int64_t spos);
/* Storage index of the element at a row-major linear index. */
int64_t tensor_pos(const Tensor *t, int64_t linear);
/* Copy src into dst elementwise (src broadcast to dst's shape, dtype converted). -1 + error when
 * the shapes do not broadcast. */
int tensor_copy_into(MiCtx *ctx, Tensor *dst, const Tensor *src);
/* Upper limit (bytes) for one tensor's storage: the machine's physical memory. A storage over
 * 256 MB must also fit in the memory available when it is made (else an error, not the OOM killer). */
size_t tensor_max_bytes(void);
/* Half-precision conversions used for f16/bf16/f8 storage. */
float mi_f16_to_f32(uint16_t h);
uint16_t mi_f32_to_f16(float f);
float mi_bf16_to_f32(uint16_t h);
uint16_t mi_f32_to_bf16(float f);
/* float8 <-> float32 as c10's Float8_* types convert (PyTorch 2.11): round to nearest even;
 * e4m3fn: no inf, overflow (>= 480) and NaN -> NaN 0x7f; e5m2: overflow (>= 65536) -> inf,
 * NaN -> 0x7f; the fnuz kinds: no -0, overflow and NaN -> 0x80 (their only NaN).
 * dt is DT_F8E4M3, DT_F8E5M2, DT_F8E4M3FNUZ or DT_F8E5M2FNUZ. */
float mi_f8_to_f32(DType dt, uint8_t b);
uint8_t mi_f32_to_f8(DType dt, float f);
/* "f32[4, 8]" (dtype and sizes); returns buf. */
const char *tensor_type_str(const Tensor *t, char *buf, size_t n);

/* .npy read/write (core/base/npy.c): C-order and Fortran-order, little-endian, all dtypes in
 * dtype.h that numpy has. Errors name the file and what is wrong. */
Tensor *npy_load(MiCtx *ctx, const char *path);
Tensor *npy_parse(MiCtx *ctx, const void *data, size_t len, const char *source);
/* bf16 and float8 tensors (no numpy type) are saved as float32, exactly. */
int npy_save(MiCtx *ctx, const char *path, const Tensor *t);

#endif
