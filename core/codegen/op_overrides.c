/* op_overrides.c — the shared op -> C spelling of both code generators (see op_overrides.h):
 * math ops, literals, casts, reduction identities and the operand block of a cond call. The C
 * emitter (codegen_kernel.c) and the CUDA emitter (codegen_cuda_kernel.c) each pass their
 * CgOverrides, which overrides only the spellings its dialect changes. */
#include "codegen/op_overrides.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

IrVal cg_val_new(CgVals *v, const char *name, DType dt, int tag) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 32;
        v->names = mi_xrealloc(v->names, sizeof(*v->names) * v->cap);
        v->dts = mi_xrealloc(v->dts, sizeof(DType) * v->cap);
        v->tag = mi_xrealloc(v->tag, sizeof(int) * v->cap);
    }
    snprintf(v->names[v->n], CG_VAL_NAME, "%s", name);
    v->dts[v->n] = dt;
    v->tag[v->n] = tag;
    return v->n++;
}
const char *cg_val_name(const CgVals *v, IrVal x) { return x >= 0 && x < v->n ? v->names[x] : "0"; }
DType cg_val_dtype(const CgVals *v, IrVal x) { return x >= 0 && x < v->n ? v->dts[x] : DT_F32; }
int cg_val_tag(const CgVals *v, IrVal x) { return x >= 0 && x < v->n ? v->tag[x] : 0; }
void cg_vals_free(CgVals *v) {
    free(v->names);
    free(v->dts);
    free(v->tag);
    memset(v, 0, sizeof *v);
}

DType cg_compute_dtype(const CgOverrides *ov, DType t) {
    return ov->compute_dtype ? ov->compute_dtype(t) : t;
}

const char *cg_value_type(const CgOverrides *ov, DType t) {
    const char *ct = ov->storage_type(cg_compute_dtype(ov, t));
    return ct ? ct : "float";
}

/* ATen's shifts (CppOverrides.bitwise_left_shift / bitwise_right_shift): the count is checked
 * against the width of x's type, so no shift in C is out of range.
 *   int8 x << y  ->  ((int64_t)(y) < 0 || (int64_t)(y) >= 8 ? (int8_t)0 : (int8_t)((uint8_t)(x) << (y)))
 *   int8 x >> y  ->  (int8_t)((x) >> ((int64_t)(y) < 0 || (int64_t)(y) >= 7 ? 7 : (y))) */
static bool shift_spelling(const CgOverrides *ov, StrBuf *out, IrMathOp op, DType at, const char *x, const char *y) {
    static const char *const uns[] = {[DT_I64] = "uint64_t", [DT_I32] = "uint32_t", [DT_I16] = "uint16_t", [DT_I8] = "uint8_t",
                                      [DT_U8] = "uint8_t", [DT_U16] = "uint16_t", [DT_U32] = "uint32_t", [DT_U64] = "uint64_t"};
    if (!dtype_is_int(at) || (size_t)at >= sizeof uns / sizeof uns[0] || !uns[at]) return false;
    const char *t = ov->storage_type(at);
    int w = 8 * (int)dtype_size(at);
    bool u = at == DT_U8 || at == DT_U16 || at == DT_U32 || at == DT_U64;
    if (op == IOP_BITWISE_LEFT_SHIFT)
        sb_printf(out, "((int64_t)(%s) < 0 || (int64_t)(%s) >= %d ? (%s)0 : (%s)((%s)(%s) << (%s)))", y, y, w, t, t, uns[at], x, y);
    else if (u)
        sb_printf(out, "((int64_t)(%s) < 0 || (int64_t)(%s) >= %d ? (%s)0 : (%s)((%s) >> (%s)))", y, y, w, t, t, x, y);
    else sb_printf(out, "(%s)((%s) >> ((int64_t)(%s) < 0 || (int64_t)(%s) >= %d ? %d : (%s)))", t, x, y, y, w - 1, w - 1, y);
    return true;
}

/* The shared spellings (Inductor's OpOverrides / CppOverrides): libm names with an `f` suffix
 * on f32 operands, NaN-propagating maximum/minimum (torch.maximum and clamp propagate NaN;
 * on +0/-0 ties the second operand, as the reference interpreter gives it). */
static bool math_spelling(const CgOverrides *ov, StrBuf *out, IrMathOp op, DType at, const char *const *a) {
    if (ov->math && ov->math(out, op, at, a)) return true;
    const char *x = a[0], *y = ir_math_arity(op) > 1 ? a[1] : "", *z = ir_math_arity(op) > 2 ? a[2] : "";
    bool f32 = at == DT_F32, fl = dtype_is_float(at);
    const char *sf = f32 ? "f" : "", *one = f32 ? "1.0f" : "1.0";
    switch (op) {
    case IOP_NEG: sb_printf(out, "-%s", x); return true;
    case IOP_EXP: sb_printf(out, "exp%s(%s)", sf, x); return true;
    case IOP_LOG: sb_printf(out, "log%s(%s)", sf, x); return true;
    case IOP_SQRT: sb_printf(out, "sqrt%s(%s)", sf, x); return true;
    case IOP_RSQRT: sb_printf(out, "%s / sqrt%s(%s)", one, sf, x); return true;
    case IOP_TANH: sb_printf(out, "tanh%s(%s)", sf, x); return true;
    case IOP_SIGMOID: sb_printf(out, "%s / (%s + exp%s(-%s))", one, one, sf, x); return true;
    case IOP_RELU: sb_printf(out, "%s < 0 ? 0 : %s", x, x); return true;
    case IOP_ERF: sb_printf(out, "erf%s(%s)", sf, x); return true;
    case IOP_SIN: sb_printf(out, "sin%s(%s)", sf, x); return true;
    case IOP_COS: sb_printf(out, "cos%s(%s)", sf, x); return true;
    case IOP_TAN: sb_printf(out, "tan%s(%s)", sf, x); return true;
    case IOP_ASIN: sb_printf(out, "asin%s(%s)", sf, x); return true;
    case IOP_ACOS: sb_printf(out, "acos%s(%s)", sf, x); return true;
    case IOP_LGAMMA: sb_printf(out, "lgamma%s(%s)", sf, x); return true;
    case IOP_ATAN: sb_printf(out, "atan%s(%s)", sf, x); return true;
    case IOP_SINH: sb_printf(out, "sinh%s(%s)", sf, x); return true;
    case IOP_COSH: sb_printf(out, "cosh%s(%s)", sf, x); return true;
    case IOP_ASINH: sb_printf(out, "asinh%s(%s)", sf, x); return true;
    case IOP_ACOSH: sb_printf(out, "acosh%s(%s)", sf, x); return true;
    case IOP_ATANH: sb_printf(out, "atanh%s(%s)", sf, x); return true;
    case IOP_EXP2: sb_printf(out, "exp2%s(%s)", sf, x); return true;
    case IOP_LOG2: sb_printf(out, "log2%s(%s)", sf, x); return true;
    case IOP_LOG10: sb_printf(out, "log10%s(%s)", sf, x); return true;
    case IOP_ERFC: sb_printf(out, "erfc%s(%s)", sf, x); return true;
    /* the special functions: double-precision ones of special_src.c (Inductor's cpp spellings
     * calc_erfinv, calc_i0, ...), libm's Bessel J / Y (ATen's bessel_j0_forward, ...) */
    case IOP_ERFINV: case IOP_I0: case IOP_I0E: case IOP_I1: case IOP_I1E: case IOP_DIGAMMA: case IOP_ERFCX:
    case IOP_NDTRI: case IOP_LOG_NDTR: case IOP_SPHERICAL_BESSEL_J0:
        sb_printf(out, "mi_sf_%s(%s)", ir_math_name(op), x);
        return true;
    case IOP_MODIFIED_BESSEL_I0: sb_printf(out, "mi_sf_i0(%s)", x); return true;
    case IOP_MODIFIED_BESSEL_I1: sb_printf(out, "mi_sf_i1(%s)", x); return true;
    case IOP_BESSEL_J0: case IOP_BESSEL_J1: case IOP_BESSEL_Y0: case IOP_BESSEL_Y1:
        sb_printf(out, "%s(%s)", ir_math_name(op) + 7, x);   /* "bessel_j0" -> j0 */
        return true;
    case IOP_POLYGAMMA: sb_printf(out, "mi_sf_polygamma(%s, %s)", x, y); return true;
    case IOP_ZETA: sb_printf(out, "mi_sf_zeta(%s, %s)", x, y); return true;
    case IOP_TRUNC: sb_printf(out, "trunc%s(%s)", sf, x); return true;
    /* std::frexp without the out-parameter (C and CUDA alike): ilogb's exponent + 1, the
     * mantissa scaled by it; 0, inf and NaN keep x and exponent 0 (glibc's frexp) */
    case IOP_FREXP_MANTISSA:
        sb_printf(out, "(%s == 0 || !isfinite(%s)) ? %s : scalbn%s(%s, -(ilogb%s(%s) + 1))", x, x, x, sf, x, sf, x);
        return true;
    case IOP_FREXP_EXPONENT:
        sb_printf(out, "(%s == 0 || !isfinite(%s)) ? %s : (%s)(ilogb%s(%s) + 1)", x, x, f32 ? "0.0f" : "0.0", f32 ? "float" : "double", sf, x);
        return true;
    case IOP_SIGNBIT: if (fl) sb_printf(out, "signbit(%s) != 0", x); else sb_printf(out, "%s < 0", x); return true;
    case IOP_BITWISE_NOT: if (at == DT_BOOL) sb_printf(out, "!%s", x); else sb_printf(out, "~%s", x); return true;
    case IOP_ABS:
        if (fl) sb_printf(out, "fabs%s(%s)", sf, x);
        else sb_printf(out, "%s < 0 ? -%s : %s", x, x, x);
        return true;
    case IOP_RECIPROCAL: sb_printf(out, "%s / %s", one, x); return true;
    case IOP_EXPM1: sb_printf(out, "expm1%s(%s)", sf, x); return true;
    case IOP_LOG1P: sb_printf(out, "log1p%s(%s)", sf, x); return true;
    case IOP_FLOOR: sb_printf(out, "floor%s(%s)", sf, x); return true;
    case IOP_CEIL: sb_printf(out, "ceil%s(%s)", sf, x); return true;
    case IOP_ROUND: sb_printf(out, "nearbyint%s(%s)", sf, x); return true;
    case IOP_SIGN: sb_printf(out, "(%s > 0) - (%s < 0)", x, x); return true;
    case IOP_LOGICAL_NOT: sb_printf(out, "!%s", x); return true;
    case IOP_ADD: sb_printf(out, "%s + %s", x, y); return true;
    case IOP_SUB: sb_printf(out, "%s - %s", x, y); return true;
    case IOP_MUL: sb_printf(out, "%s * %s", x, y); return true;
    case IOP_TRUEDIV: sb_printf(out, "%s / %s", x, y); return true;
    case IOP_POW: sb_printf(out, "pow%s(%s, %s)", sf, x, y); return true;
    case IOP_MAXIMUM: case IOP_MINIMUM: {
        const char *cmp = op == IOP_MAXIMUM ? ">" : "<";
        /* NaN propagates (x + y is a NaN of x or y). __builtin_isunordered, not `x != x || y != y`:
         * GCC 12 if-converts and vectorizes the one compare but leaves the `||` form scalar
         * inside a loop nest (max_pool2d's 2x2 window: 0.29 -> 0.07 ms per 4 MB at one thread). */
        if (fl) sb_printf(out, "__builtin_isunordered(%s, %s) ? %s + %s : (%s %s %s ? %s : %s)", x, y, x, y, x, cmp, y, x, y);
        else sb_printf(out, "%s %s %s ? %s : %s", x, cmp, y, x, y);
        return true;
    }
    case IOP_EQ: sb_printf(out, "%s == %s", x, y); return true;
    case IOP_NE: sb_printf(out, "%s != %s", x, y); return true;
    case IOP_LT: sb_printf(out, "%s < %s", x, y); return true;
    case IOP_LE: sb_printf(out, "%s <= %s", x, y); return true;
    case IOP_GT: sb_printf(out, "%s > %s", x, y); return true;
    case IOP_GE: sb_printf(out, "%s >= %s", x, y); return true;
    case IOP_LOGICAL_AND: sb_printf(out, "%s && %s", x, y); return true;
    case IOP_LOGICAL_OR: sb_printf(out, "%s || %s", x, y); return true;
    case IOP_FLOORDIV:
        if (fl) sb_printf(out, "floor%s(%s / %s)", sf, x, y);
        else sb_printf(out, "mi_floordiv(%s, %s)", x, y);
        return true;
    case IOP_FMOD:
        if (fl) sb_printf(out, "fmod%s(%s, %s)", sf, x, y);
        else sb_printf(out, "%s %% %s", x, y);
        return true;
    case IOP_ATAN2: sb_printf(out, "atan2%s(%s, %s)", sf, x, y); return true;
    case IOP_COPYSIGN: sb_printf(out, "copysign%s(%s, %s)", sf, x, y); return true;
    case IOP_HYPOT: sb_printf(out, "hypot%s(%s, %s)", sf, x, y); return true;
    case IOP_NEXTAFTER: sb_printf(out, "nextafter%s(%s, %s)", sf, x, y); return true;
    case IOP_BITWISE_AND: sb_printf(out, "%s & %s", x, y); return true;
    case IOP_BITWISE_OR: sb_printf(out, "%s | %s", x, y); return true;
    case IOP_BITWISE_XOR: sb_printf(out, "%s ^ %s", x, y); return true;
    case IOP_BITWISE_LEFT_SHIFT: case IOP_BITWISE_RIGHT_SHIFT: return shift_spelling(ov, out, op, at, x, y);
    case IOP_FMAX: sb_printf(out, "fmax%s(%s, %s)", sf, x, y); return true;   /* NaN only when both are */
    case IOP_FMIN: sb_printf(out, "fmin%s(%s, %s)", sf, x, y); return true;
    case IOP_TRUNCDIV:   /* C division truncates; an int division by zero gives 0, not a trap */
        if (fl) sb_printf(out, "trunc%s(%s / %s)", sf, x, y);
        else sb_printf(out, "(%s == 0 ? 0 : %s / %s)", y, x, y);
        return true;
    case IOP_WHERE: sb_printf(out, "%s ? %s : %s", x, y, z); return true;
    case IOP_FMA:   /* std::fma / libdevice fma: one rounding */
        if (fl) sb_printf(out, "fma%s(%s, %s, %s)", sf, x, y, z);
        else sb_printf(out, "%s * %s + %s", x, y, z);
        return true;
    case IOP_RAND: sb_printf(out, "mi_rand(%s, %s)", x, y); return true;     /* cg_rand_src */
    case IOP_RANDN: sb_printf(out, "mi_randn(%s, %s)", x, y); return true;
    case IOP_RANDINT64: sb_printf(out, "mi_randint64(%s, %s, %s, %s)", x, y, z, a[3]); return true;
    default: return false;
    }
}

/* The C backend's integer division of values (ops.floordiv / truncdiv / fmod of an integer
 * dtype): through helpers that check the divisor (codegen_c.c: zdiv_src), since ATen's CPU
 * kernels raise ZeroDivisionError on b == 0 (BinaryOpsKernel.cpp: TORCH_CHECK(b != 0,
 * "ZeroDivisionError")) where Inductor's C++ (`a / b`, cpp_prefix.h's mod) traps with SIGFPE.
 *   int64 floordiv(x, y) -> mi_zdiv_floor(x, y);  fmod -> mi_zdiv_mod(x, y)
 * A constant divisor folds the check away. false for other ops. */
bool cg_zdiv_math(StrBuf *out, IrMathOp op, const char *const *a) {
    const char *fn = op == IOP_FLOORDIV ? "mi_zdiv_floor" : op == IOP_TRUNCDIV ? "mi_zdiv_trunc" : op == IOP_FMOD ? "mi_zdiv_mod" : NULL;
    if (!fn) return false;
    sb_printf(out, "%s(%s, %s)", fn, a[0], a[1]);
    return true;
}

void cg_rand_src(StrBuf *out, bool cuda) {
    /* the same Philox-4x32-10 as core/base/philox.c's mi_philox_rand; MI_RF is "static inline" in C
     * and "__host__ __device__ __forceinline__" in CUDA */
    static const char c_src[] = "#define MI_RF static inline\n", cu_src[] = "#define MI_RF __host__ __device__ __forceinline__\n";
    static const char body[] =
        "/* ops.rand / ops.randn(seed, offset): Philox-4x32-10, counter (offset, 0, 0, 0), key (seed) */\n"
        "MI_RF void mi_philox(uint64_t seed, uint64_t offset, uint32_t o[4]) {\n"
        "    uint32_t c0 = (uint32_t)offset, c1 = (uint32_t)(offset >> 32), c2 = 0, c3 = 0, k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);\n"
        "    for (int r = 0; r < 10; r++) {\n"
        "        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;\n"
        "        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;\n"
        "        c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2; k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;\n"
        "    }\n"
        "    o[0] = c0; o[1] = c1; o[2] = c2; o[3] = c3;\n}\n"
        "MI_RF float mi_rand(int64_t seed, int64_t offset) {\n"
        "    uint32_t o[4]; mi_philox((uint64_t)seed, (uint64_t)offset, o);\n"
        "    return (float)(o[0] >> 8) * (1.0f / 16777216.0f);\n}\n"
        "MI_RF float mi_randn(int64_t seed, int64_t offset) {\n"
        "    uint32_t o[4]; mi_philox((uint64_t)seed, (uint64_t)offset, o);\n"
        "    float u1 = (float)((o[0] >> 8) + 1) * (1.0f / 16777216.0f), u2 = (float)(o[1] >> 8) * (1.0f / 16777216.0f);\n"
        "    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853071795864f * u2);\n}\n"
        "/* ops.randint64(seed, offset, low, high): the first two words as 64 bits, mod (high - low), + low */\n"
        "MI_RF int64_t mi_randint64(int64_t seed, int64_t offset, int64_t low, int64_t high) {\n"
        "    uint32_t o[4]; mi_philox((uint64_t)seed, (uint64_t)offset, o);\n"
        "    uint64_t r = (uint64_t)o[0] | ((uint64_t)o[1] << 32), span = (uint64_t)(high - low);\n"
        "    return span ? (int64_t)(r % span) + low : low;\n}\n\n";
    sb_put(out, cuda ? cu_src : c_src);
    sb_put(out, body);
}

char *cg_math(const CgOverrides *ov, IrMathOp op, DType at, const char *const *a) {
    StrBuf out;
    sb_init(&out);
    if (math_spelling(ov, &out, op, at, a)) return sb_take(&out);
    sb_free(&out);
    return NULL;
}

char *cg_constant(const CgOverrides *ov, double v, DType dt) {
    StrBuf sb, *out = &sb;
    sb_init(out);
    if (isnan(v)) sb_put(out, "NAN");
    else if (isinf(v)) sb_put(out, v > 0 ? "INFINITY" : "-INFINITY");
    else if (dt == DT_BOOL && ov->bool_true) sb_put(out, v != 0 ? ov->bool_true : ov->bool_false);
    else if (dtype_is_float(dt)) {
        char b[64];
        snprintf(b, sizeof b, "%.17g", v);
        if (!strpbrk(b, ".eEn")) strcat(b, ".0");
        sb_printf(out, "%s%s", b, cg_compute_dtype(ov, dt) == DT_F32 ? "f" : "");
    } else sb_printf(out, "%lldLL", (long long)v);
    return sb_take(out);
}

char *cg_to_dtype(const CgOverrides *ov, const char *x, DType dt, DType src) {
    StrBuf out;
    sb_init(&out);
    if (!ov->to_dtype || !ov->to_dtype(&out, x, dt, src)) sb_printf(&out, "(%s)(%s)", cg_value_type(ov, dt), x);
    return sb_take(&out);
}

const char *cg_red_init(DType t, bool mx) {
    switch (t) {
    case DT_F32: case DT_F64: case DT_F16: case DT_BF16:
    case DT_F8E4M3: case DT_F8E5M2: case DT_F8E4M3FNUZ: case DT_F8E5M2FNUZ: return mx ? "-INFINITY" : "INFINITY";
    case DT_I32: return mx ? "INT32_MIN" : "INT32_MAX";
    case DT_I16: return mx ? "INT16_MIN" : "INT16_MAX";
    case DT_I8: return mx ? "INT8_MIN" : "INT8_MAX";
    case DT_U8: return mx ? "0" : "UINT8_MAX";
    case DT_BOOL: return mx ? "0" : "1";
    default: return mx ? "INT64_MIN" : "INT64_MAX";
    }
}

/* Each subgraph of c takes its own size symbols, by name from the caller m's: -1 + ctx error
 * when one is not the caller's. */
static int check_syms(MiCtx *ctx, const IrModule *m, const IrCond *c) {
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < c->branch[k]->nsyms; i++) {
            bool have = false;
            for (int j = 0; j < m->nsyms; j++) have |= strcmp(m->sym_names[j], c->branch[k]->sym_names[i]) == 0;
            if (!have) return mi_err(ctx, NULL, 0, 0, "subgraph '%s' (%s) uses size symbol %s that its caller does not have", c->names[k], ir_cond_role(c, k), c->branch[k]->sym_names[i]);
        }
    return 0;
}

/* `const int64_t csyms0[] = {s0, 0};` and csyms1: each subgraph's symbols, in its order. */
static void emit_csyms(const IrCond *c, StrBuf *out) {
    for (int k = 0; k < 2; k++) {
        const IrModule *bm = c->branch[k];
        sb_printf(out, "        const int64_t csyms%d[] = {", k);
        for (int i = 0; i < bm->nsyms; i++) sb_printf(out, "%s, ", bm->sym_names[i]);
        sb_printf(out, "0}; (void)csyms%d;\n", k);
    }
}

int cg_emit_cond_call(MiCtx *ctx, const Schedule *s, const Buffer *b, CgCondTail tail, void *arg, StrBuf *out) {
    const IrCond *c = b->cond;
    const SchedBranch *br = sched_branch_of(s, b);
    if (!c || !br) return mi_err(ctx, NULL, 0, 0, "cond '%s' has no scheduled branches", b->name);
    if (check_syms(ctx, s->ir, c) < 0) return -1;
    sb_printf(out, "    {   /* torch.ops.higher_order.cond: %s if %s else %s */\n", c->names[0], b->eargs[0].buf->name, c->names[1]);
    sb_put(out, "        void *const cin[] = {");
    for (int i = 1; i < b->neargs; i++) {
        sb_printf(out, "%s(void *)(%s + ", i > 1 ? ", " : "", b->eargs[i].buf->name);
        sym_c_sb(b->eargs[i].view.offset, out);
        sb_put(out, ")");
    }
    if (b->neargs == 1) sb_put(out, "NULL");
    sb_put(out, "};\n        void *const cout[] = {");
    for (int k = 0; k < c->nouts; k++) sb_printf(out, "%s%s", k ? ", " : "", c->outs[k]->name);
    sb_put(out, "};\n");
    emit_csyms(c, out);
    StrBuf off;
    sb_init(&off);
    sym_c_sb(b->eargs[0].view.offset, &off);
    tail(arg, b->eargs[0].buf->name, off.s, br->fn[0], br->fn[1], out);
    sb_free(&off);
    return 0;
}

/* The C expression of buffer b's storage in bytes (offset + extent, times the element size). */
static void storage_bytes(const IrModule *m, const Buffer *b, StrBuf *out) {
    sb_put(out, "(size_t)(");
    sym_c_sb(layout_storage_size(m->ctx->sym, &b->layout), out);
    sb_printf(out, ") * %zu", dtype_size(b->layout.dtype));
}

bool cg_has_while(const Schedule *s) {
    for (int i = 0; i < s->nbranches; i++) {
        if (s->branches[i].cond->cond->is_while) return true;
        for (int k = 0; k < 2; k++)
            if (cg_has_while(s->branches[i].s[k])) return true;
    }
    return false;
}

const char *const cg_while_src =
    "#define MI_WHILE_LIMIT 3002\n"
    "const char *mi_while_limit_loop;   /* the while_loop that ran past its bound */\n\n";

int cg_emit_while_call(MiCtx *ctx, const Schedule *s, const Buffer *b, const CgWhileHow *how, StrBuf *out) {
    const IrCond *c = b->cond;
    const SchedBranch *br = sched_branch_of(s, b);
    if (!c || !c->is_while || !br) return mi_err(ctx, NULL, 0, 0, "while_loop '%s' has no scheduled subgraphs", b->name);
    const IrModule *m = s->ir;
    if (check_syms(ctx, m, c) < 0) return -1;
    int nc = c->ncarried;
    const char *dev = how->cuda ? ", mi_st" : "", *fb = how->fb ? ", fb" : "";
    sb_printf(out, "    {   /* torch.ops.higher_order.while_loop: %s while %s */\n", c->names[1], c->names[0]);
    /* the carried values live in the loop's results; cond_fn and body_fn read them there */
    sb_put(out, "        void *const cin[] = {");
    for (int k = 0; k < b->neargs; k++) {
        if (k < nc) sb_printf(out, "%s(void *)%s", k ? ", " : "", c->outs[k]->name);
        else {
            sb_printf(out, "%s(void *)(%s + ", k ? ", " : "", b->eargs[k].buf->name);
            sym_c_sb(b->eargs[k].view.offset, out);
            sb_put(out, ")");
        }
    }
    sb_printf(out, "};\n        size_t wsz[%d];\n        void *wtmp[%d] = {0};\n        int mi_wrc = 0;\n", nc, nc);
    for (int k = 0; k < nc; k++) {
        sb_printf(out, "        wsz[%d] = ", k);
        storage_bytes(m, c->outs[k], out);
        sb_put(out, ";\n");
    }
    emit_csyms(c, out);
    if (how->cuda) {   /* the body's results and cond_fn's bool on the device */
        sb_put(out, "        bool mi_wpred = false, *mi_dpred = NULL;\n        MI_CK(cudaMalloc((void **)&mi_dpred, 1));\n");
        sb_printf(out, "        for (int k = 0; k < %d; k++) MI_CK(cudaMalloc(&wtmp[k], wsz[k] ? wsz[k] : 1));\n", nc);
    } else {
        sb_put(out, "        _Bool mi_wpred = 0, *mi_dpred = &mi_wpred;\n");
        sb_printf(out, "        for (int k = 0; k < %d && !mi_wrc; k++) mi_wrc = !(wtmp[k] = malloc(wsz[k] ? wsz[k] : 1));\n", nc);
    }
    sb_put(out, "        void *const wpred[] = {mi_dpred};\n");
    /* buf1[k] = carried input k: a copy, so that the inputs are never the results (the wrapper's
     * clone() when the loop is not taken) */
    for (int k = 0; k < nc; k++) {
        sb_printf(out, "        %s(%s, (const char *)(%s + ", how->cuda ? "MI_CK(cudaMemcpyAsync" : "if (!mi_wrc) memcpy", c->outs[k]->name, b->eargs[k].buf->name);
        sym_c_sb(b->eargs[k].view.offset, out);
        sb_printf(out, "), wsz[%d]%s);\n", k, how->cuda ? ", cudaMemcpyDeviceToDevice, mi_st)" : "");
    }
    /* a subgraph's failure code passes through (MI_ZERO_DIV, MI_INDEX_OOB, a nested loop's
     * MI_WHILE_LIMIT), so that the runtime can say what failed; past ctx->limits.while_iterations
     * trips of body_fn (PyTorch has no bound) the loop names itself in mi_while_limit_loop */
    sb_printf(out, "        long long mi_witer = 0;\n        while (!mi_wrc) {\n            if ((mi_wrc = %s(cin, wpred, csyms0%s%s)) != 0) break;\n", br->fn[0], dev, fb);
    if (how->cuda)   /* should_loop = cond_result: the bool read back to the host */
        sb_put(out, "            MI_CK(cudaMemcpyAsync(&mi_wpred, mi_dpred, 1, cudaMemcpyDeviceToHost, mi_st));\n"
                    "            MI_CK(cudaStreamSynchronize(mi_st));\n");
    int lim = ctx->limits.while_iterations;
    char hint[160];
    sb_printf(out, "            if (!mi_wpred) break;\n"
                   "            if (mi_witer++ == %dLL) {\n                mi_wrc = MI_WHILE_LIMIT;\n"
                   "                mi_while_limit_loop = \"'%s': cond_fn '%s' still gives True after %d iterations of body_fn '%s' (%s, when generated)\";\n"
                   "                break;\n            }\n"
                   "            if ((mi_wrc = %s(cin, wtmp, csyms1%s%s)) != 0) break;\n", lim, b->name, c->names[0], lim, c->names[1],
              mi_limit_hint("while_iterations", lim, hint, sizeof hint), br->fn[1], dev, fb);
    sb_printf(out, "            for (int k = 0; k < %d; k++) %s(cin[k], wtmp[k], wsz[k]%s);\n        }\n", nc,
              how->cuda ? "MI_CK(cudaMemcpyAsync" : "memcpy", how->cuda ? ", cudaMemcpyDeviceToDevice, mi_st)" : "");
    if (how->cuda) sb_printf(out, "        for (int k = 0; k < %d; k++) MI_CK(cudaFree(wtmp[k]));\n        MI_CK(cudaFree(mi_dpred));\n", nc);
    else sb_printf(out, "        for (int k = 0; k < %d; k++) free(wtmp[k]);\n", nc);
    sb_printf(out, "        if (mi_wrc) {%s return mi_wrc; }\n    }\n", how->cleanup ? how->cleanup : "");
    return 0;
}
