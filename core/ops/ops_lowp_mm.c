/* ops_lowp_mm.c — the matrix products of quantized and float8 models, which Inductor lowers to
 * its own GEMM templates or runs as extern kernels (lowering.py: tuned_scaled_mm, tuned_int_mm,
 * _weight_int8pack_mm): here reference kernels, FallbackKernels in compiled code.
 *   _scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum): float8 (or
 *     other) operands dequantized by tensorwise ([] / [1]) or rowwise (a: [M, 1], b: [1, N])
 *     scales, multiplied in float, + bias, times scale_result (the D scale of cuBLASLt, for a
 *     float8 result), rounded to out_dtype (default a's dtype);
 *   _int_mm(a int8 [M, K], b int8 [K, N]) -> int32, exact;
 *   _weight_int8pack_mm(x [M, K], w int8 [N, K], scales [N]) -> x @ w^T * scales in x's dtype
 *     (int8 weight-only quantization on the CPU). */
#include "ops/ops_impl.h"

#include <math.h>

enum { LM_SCALED, LM_INT, LM_W8 };
#define LKIND(sa) (*(const int *)(sa)->op->data)

static int shape_lowp_mm(ShapeArgs *sa, TensorMeta *out, int *nout) {
    TensorMeta *a, *b;
    int kind = LKIND(sa);
    *nout = 1;
    if (sa_tensor(sa, sa_arg(sa, 0, "self"), "self", &a) || sa_tensor(sa, sa_arg(sa, 1, "mat2"), "mat2", &b)) return -1;
    if (a->ndim != 2 || b->ndim != 2) return sa_err(sa, "expected 2-D operands, got %dD and %dD", a->ndim, b->ndim);
    Expr *n = kind == LM_W8 ? b->size[0] : b->size[1], *kb = kind == LM_W8 ? b->size[1] : b->size[0];
    if (ex_cmp(sa, a->size[1], kb) != 0) return sa_err(sa, "mat1 and mat2 shapes cannot be multiplied");
    DType dt = a->dtype;
    if (kind == LM_INT) {
        if (a->dtype != DT_I8 || b->dtype != DT_I8) return sa_err(sa, "_int_mm expects int8 operands, got %s and %s", dtype_abbrev(a->dtype), dtype_abbrev(b->dtype));
        dt = DT_I32;
    } else if (kind == LM_W8) {
        if (b->dtype != DT_I8) return sa_err(sa, "_weight_int8pack_mm expects an int8 weight, got %s", dtype_abbrev(b->dtype));
    } else {
        dt = arg_dtype(sa_arg(sa, 6, "out_dtype"), a->dtype);
    }
    meta_alloc(sa, out, dt, 2, a->device);
    out->size[0] = a->size[0];
    out->size[1] = n;
    meta_contiguous_strides(sa, out);
    return 0;
}

/* a scale's value for row i / column j: one value (tensorwise) or one per row / column */
static double scale_at(const Tensor *s, int64_t k) { return !s ? 1 : tensor_numel(s) == 1 ? tensor_get_f(s, 0) : tensor_get_f(s, k); }

static int lowp_mm_fill(ShapeArgs *sa, Tensor *o) {
    int kind = LKIND(sa);
    Tensor *a = ev_tensor(sa_arg(sa, 0, "self")), *b = ev_tensor(sa_arg(sa, 1, "mat2"));
    int64_t M = a->size[0], K = a->size[1], N = o->size[1];
    Tensor *sA = NULL, *sB = NULL, *bias = NULL, *sR = NULL;
    if (kind == LM_SCALED) {
        sA = ev_tensor(sa_arg(sa, 2, "scale_a"));
        sB = ev_tensor(sa_arg(sa, 3, "scale_b"));
        if (!sA || !sB) return sa_err(sa, "_scaled_mm needs scale_a and scale_b tensors");
        if ((tensor_numel(sA) != 1 && tensor_numel(sA) != M) || (tensor_numel(sB) != 1 && tensor_numel(sB) != N))
            return sa_err(sa, "scale_a must have 1 or %lld (rowwise) elements and scale_b 1 or %lld", (long long)M, (long long)N);
        ArgRef ab = sa_arg(sa, 4, "bias"), ar = sa_arg(sa, 5, "scale_result");
        if (arg_present(ab)) bias = ev_tensor(ab);
        if (arg_present(ar)) sR = ev_tensor(ar);
        if (bias && tensor_numel(bias) != N) return sa_err(sa, "bias must have %lld elements", (long long)N);
    } else if (kind == LM_W8) {
        sB = ev_tensor(sa_arg(sa, 2, "scales"));
        if (!sB || tensor_numel(sB) != N) return sa_err(sa, "scales must have %lld elements", (long long)N);
    }
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            if (kind == LM_INT) {
                int64_t acc = 0;
                for (int64_t k = 0; k < K; k++) acc += tensor_get_i(a, i * K + k) * tensor_get_i(b, k * N + j);
                tensor_set_f(o, i * N + j, (double)(int32_t)acc);   /* wraps as the int32 accumulator */
                continue;
            }
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += tensor_get_f(a, i * K + k) * tensor_get_f(b, kind == LM_W8 ? j * K + k : k * N + j);
            if (kind == LM_W8) acc *= scale_at(sB, j);
            else {
                acc = acc * scale_at(sA, i) * scale_at(sB, j);
                if (bias) acc += tensor_get_f(bias, j);
                if (sR) acc *= tensor_get_f(sR, 0);
            }
            tensor_set_f(o, i * N + j, acc);
        }
    return 0;
}
static int lowp_mm_eval(const OpCall *c, IValue *out) { return ev_run(c, out, lowp_mm_fill); }

#define LM(name, kind, doc) {name, OPF_EXTERN, op_infer_generic, lowp_mm_eval, doc, shape_lowp_mm, &(const int){kind}}
const OpDef ops_lowp_mm_table[] = {
    LM("aten._scaled_mm.default", LM_SCALED, "(a * scale_a) @ (b * scale_b) + bias in float, rounded to out_dtype (float8 GEMM)"),
    LM("aten._int_mm.default", LM_INT, "int8 @ int8 -> int32"),
    LM("aten._weight_int8pack_mm.default", LM_W8, "x @ int8 weight^T * per-channel scales"),
};
const int ops_lowp_mm_count = sizeof ops_lowp_mm_table / sizeof ops_lowp_mm_table[0];
