/* codegen_c.c — the C file around the kernels: prelude, extern matmul / attention helpers,
 * and call() (allocation, reuse, kernel calls). The kernels themselves (the emitting handler
 * and the loop nests) are in core/codegen/codegen_kernel.c. */
#include "codegen/codegen_c.h"
#include "codegen/codegen_kernel.h"
#include "codegen/codegen_csum.h"
#include "codegen/codegen_f8.h"
#include "codegen/codegen_stream.h"
#include "codegen/codegen_mem.h"
#include "codegen/codegen_unbacked.h"
#include "codegen/codegen_fallback.h"
#include "codegen/codegen_conv.h"
#include "codegen/codegen_gemm.h"
#include "codegen/codegen_sdpa.h"
#include "codegen/op_overrides.h"
#include "codegen/special_src.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prelude =
    "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include <time.h>\n#include <omp.h>\n"
    "#ifdef MI_HAVE_CBLAS\n#include <cblas.h>\n#endif\n\n"
    "#define MI_GUARD_FAILED 1000   /* call() returns this + k when size guard k does not hold */\n";
/* after the index helpers of sym_c_prelude() */
static const char *prelude_welford =
    "/* Welford: merge (nb, mb, m2b) into (n, mean, m2) (Chan et al.) */\n"
    "static inline void mi_wf_merge(double *n, double *mean, double *m2, double nb, double mb, double m2b) {\n"
    "    if (nb <= 0) return;\n"
    "    double t = *n + nb, d = mb - *mean;\n"
    "    *mean += d * (nb / t); *m2 += m2b + d * d * (*n * nb / t); *n = t;\n}\n"
    "/* L Welford lanes of nk values each into (n, mean, m2), which are empty: Chan's merge for equal\n"
    "   weights, in closed form (mean of the lane means; m2 = sum m2_l + nk sum (mean_l - mean)^2),\n"
    "   no division per lane */\n"
    "#define MI_WF_LANES(T) \\\n"
    "static inline void mi_wf_lanes_##T(double *n, double *mean, double *m2, double nk, const T *lm, const T *lm2, int L) { \\\n"
    "    if (nk <= 0) return; \\\n"
    "    double mu = 0, q = 0; \\\n"
    "    for (int l = 0; l < L; l++) mu += lm[l]; \\\n"
    "    mu /= L; \\\n"
    "    for (int l = 0; l < L; l++) { double d = lm[l] - mu; q += lm2[l] + nk * d * d; } \\\n"
    "    *n = nk * L; *mean = mu; *m2 = q; \\\n"
    "}\n"
    "MI_WF_LANES(float)\nMI_WF_LANES(double)\n\n";

/* The vector-math layer of f32 exp and erf (the C dialect's spellings in codegen_kernel.c:
 * mi_expf, mi_erff; sigmoid is 1 / (1 + mi_expf(-x))). Built with Sleef (the runtime passes
 * -DMI_HAVE_SLEEF -lsleef when configure found it):
 * - mi_expf is Sleef's expf u10 (1.0 ULP, what ATen's Vectorized<float>::exp calls) written out
 *   as plain arithmetic where the target has FMA: y = q ln2 + s (q = rint(y log2 e), Cody-Waite
 *   in two FMAs), e^s by Sleef's degree-7 polynomial, 2^q as two exponent-field multiplies, below
 *   -104 zero, above 100 infinity. The constants and the order of operations are those of
 *   Sleef_expf16_u10 (libsleef 3.5, its AVX-512 code), so every lane is bit-identical to it
 *   (checked on all 2^32 inputs); GCC inlines it into the loop instead of calling Sleef 16 lanes
 *   at a time, which saved a call, its register spills and half the cost of a softmax's exp
 *   pass (4096x4096 softmax, 1 thread: 7.0 -> 6.0 ms). A scalar remainder now gets the same
 *   bits as the vector lanes (Sleef's scalar expf_u10, without FMA, differed by 1 ulp on 0.04%
 *   of inputs). Without FMA mi_expf stays a function whose vector variants, named by the x86
 *   vector-function ABI (_ZGVeN16v_mi_expf: AVX-512, 16 lanes), call Sleef_expf16_u10.
 *   sin / cos / pow go through Sleef that way (glibc's vector expf leaves its fast path below
 *   -87: 5.4 ns/element on [-120, 0] against Sleef's 0.5).
 * - mi_erff is erf(x) = x P(x^2) / Q(x^2) on |x| <= 3.925 (beyond it erf rounds to +-1 in
 *   float), P of degree 6 and Q of degree 4 in x^2, coefficients fitted here (weighted least
 *   squares with Lawson's reweighting toward minimax relative error: 5.2e-8 in exact
 *   arithmetic). Evaluated in float, every float in [0, 6] against double erf: max abs error
 *   3.9e-7 (6.5 ulp, at x = 3.907), max relative 3.9e-7. ATen's Vectorized<float>::erf (the
 *   Abramowitz-Stegun 7.1.26 formula 1 - (p(t)) t e^(-x^2), t = 1/(1 + 0.3275911|x|), what this
 *   layer used before) measured the same way: max abs 5.6e-7 (at x = 0.042) and no relative
 *   accuracy near 0, where 1 - p(t) t e^(-x^2) cancels. One division and 11 FMAs instead of a
 *   division, an exp and 12 more operations: ln_gelu (8192x1024), 1 thread, 3.65 -> 3.1 ms.
 *   NaN propagates (the clamp compares), erf(+-inf) = +-1, erf(-0) = -0.
 * tanh and log stay glibc's: its vector tanhf / logf measured faster than Sleef's (0.20 ns
 * against 0.29-1.0 and 0.27) at 1-3e-7 relative error. Without Sleef mi_expf / mi_erff are
 * glibc's expf / erff: the code of before. */
static const char *vecmath_src =
    "#if defined(MI_HAVE_SLEEF) && defined(__x86_64__)\n"
    "#include <immintrin.h>\n#include <sleef.h>\n"
    "#define MI_VH __attribute__((visibility(\"hidden\")))\n"
    "#ifdef __AVX512F__\n"
    "#define MI_VM16(f, v16) MI_VH __m512 _ZGVeN16v_mi_##f(__m512 x) { return v16(x); }\n"
    "#else\n#define MI_VM16(f, v16)\n#endif\n"
    "#ifdef __AVX__\n"
    "#define MI_VM8(f, v8) MI_VH __m256 _ZGVcN8v_mi_##f(__m256 x) { return v8(x); } MI_VH __m256 _ZGVdN8v_mi_##f(__m256 x) { return v8(x); }\n"
    "#else\n#define MI_VM8(f, v8)\n#endif\n"
    "/* mi_F: the scalar Sleef function under an assembler alias (a definition here would make GCC\n"
    "   clone it), its vector variants by the vector-function ABI's names */\n"
    "#define MI_VM(f, v16, v8, v4, v1) \\\n"
    "    float mi_##f(float) __attribute__((simd(\"notinbranch\"), const, nothrow)); \\\n"
    "    MI_VH float mi_##f##_1(float x) { return v1(x); } \\\n"
    "    __asm__(\".globl mi_\" #f \"\\n.hidden mi_\" #f \"\\n.set mi_\" #f \", mi_\" #f \"_1\"); \\\n"
    "    MI_VH __m128 _ZGVbN4v_mi_##f(__m128 x) { return v4(x); } MI_VM8(f, v8) MI_VM16(f, v16)\n"
    "#ifdef __FMA__\n"
    "/* Sleef_expf16_u10's arithmetic, inline (see codegen_c.c): bit-identical to it */\n"
    "static inline float mi_expf(float d) {\n"
    "    float q = __builtin_rintf(d * 1.44269502f);\n"
    "    int32_t qi = (int32_t)q, h = qi >> 1;\n"
    "    float s = __builtin_fmaf(q, -0.693145752f, d);\n"
    "    s = __builtin_fmaf(q, -1.42860677e-06f, s);\n"
    "    float u = 0.000198527618f;\n"
    "    u = __builtin_fmaf(u, s, 0.00139304355f);\n"
    "    u = __builtin_fmaf(u, s, 0.00833336078f);\n"
    "    u = __builtin_fmaf(u, s, 0.0416664854f);\n"
    "    u = __builtin_fmaf(u, s, 0.166666672f);\n"
    "    u = __builtin_fmaf(u, s, 0.5f);\n"
    "    u = __builtin_fmaf(s * s, u, s) + 1.0f;\n"
    "    union { uint32_t i; float f; } a, b;\n"
    "    a.i = ((uint32_t)h << 23) + 0x3f800000u;\n"
    "    b.i = ((uint32_t)(qi - h) << 23) + 0x3f800000u;\n"
    "    float r = (u * a.f) * b.f;\n"
    "    r = d < -104.0f ? 0.0f : r;\n"
    "    return d > 100.0f ? INFINITY : r;\n}\n"
    "#else\n"
    "MI_VM(expf, Sleef_expf16_u10, Sleef_expf8_u10, Sleef_expf4_u10, Sleef_expf_u10)\n"
    "#endif\n"
    "MI_VM(sinf, Sleef_sinf16_u10, Sleef_sinf8_u10, Sleef_sinf4_u10, Sleef_sinf_u10)\n"
    "MI_VM(cosf, Sleef_cosf16_u10, Sleef_cosf8_u10, Sleef_cosf4_u10, Sleef_cosf_u10)\n"
    "/* two arguments: the vector variants take two vectors (\"vv\") */\n"
    "#ifdef __AVX512F__\n"
    "#define MI_VM2_16(f, v16) MI_VH __m512 _ZGVeN16vv_mi_##f(__m512 x, __m512 y) { return v16(x, y); }\n"
    "#else\n#define MI_VM2_16(f, v16)\n#endif\n"
    "#ifdef __AVX__\n"
    "#define MI_VM2_8(f, v8) MI_VH __m256 _ZGVcN8vv_mi_##f(__m256 x, __m256 y) { return v8(x, y); } MI_VH __m256 _ZGVdN8vv_mi_##f(__m256 x, __m256 y) { return v8(x, y); }\n"
    "#else\n#define MI_VM2_8(f, v8)\n#endif\n"
    "#define MI_VM2(f, v16, v8, v4, v1) \\\n"
    "    float mi_##f(float, float) __attribute__((simd(\"notinbranch\"), const, nothrow)); \\\n"
    "    MI_VH float mi_##f##_1(float x, float y) { return v1(x, y); } \\\n"
    "    __asm__(\".globl mi_\" #f \"\\n.hidden mi_\" #f \"\\n.set mi_\" #f \", mi_\" #f \"_1\"); \\\n"
    "    MI_VH __m128 _ZGVbN4vv_mi_##f(__m128 x, __m128 y) { return v4(x, y); } MI_VM2_8(f, v8) MI_VM2_16(f, v16)\n"
    "MI_VM2(powf, Sleef_powf16_u10, Sleef_powf8_u10, Sleef_powf4_u10, Sleef_powf_u10)\n"
    "#else\n#define mi_expf expf\n#define mi_sinf sinf\n#define mi_cosf cosf\n#define mi_powf powf\n#endif\n"
"#if defined(MI_HAVE_SLEEF) && defined(__x86_64__)\n"
    "/* erf(x) = x P(x^2) / Q(x^2), |x| clamped to 3.925 (max abs error 3.9e-7; codegen_c.c) */\n"
    "static inline float mi_erff(float x) {\n"
    "    x = x > 3.925f ? 3.925f : x < -3.925f ? -3.925f : x;\n"
    "    float y = x * x;\n"
    "    float p = 1.986951339e-08f;\n"
    "    p = p * y - 1.956556786e-06f;\n"
    "    p = p * y + 1.421647471e-04f;\n"
    "    p = p * y + 3.718928661e-03f;\n"
    "    p = p * y + 5.063044064e-02f;\n"
    "    p = p * y + 2.003593372e-01f;\n"
    "    p = p * y + 1.128379108e+00f;\n"
    "    float q = 9.599048173e-04f;\n"
    "    q = q * y + 1.438952562e-02f;\n"
    "    q = q * y + 1.151775779e-01f;\n"
    "    q = q * y + 5.108954734e-01f;\n"
    "    q = q * y + 1.0f;\n"
    "    return x * p / q;\n}\n"
    "#else\n#define mi_erff erff\n#endif\n\n";

/* The denormal policy (ctx->flush_denormal, on by default): call() runs with flush-to-zero
 * (a denormal result becomes 0) and denormals-are-zero (a denormal operand reads as 0) on every
 * thread of the OpenMP team: the MXCSR bits 0x8040 that torch.set_flush_denormal(True) sets
 * (FPCR.FZ on AArch64). An x86 core takes a ~100-cycle microcode assist per denormal operand:
 * 5% of a softmax's probabilities below 1.2e-38 made the P@V matmul after it 30x slower.
 * Kernels split work over the same team, and BLAS runs single-threaded inside it (mi_gemm), so
 * every thread doing the module's arithmetic has the mode; each thread's own mode comes back
 * when call() returns, and a fallback kernel (the reference interpreter) runs in the caller's. */
static const char *denormal_src =
    "#if defined(__SSE__)\n#include <xmmintrin.h>\n"
    "typedef unsigned mi_fpmode;\n"
    "static inline mi_fpmode mi_fp_get(void) { return _mm_getcsr(); }\n"
    "static inline void mi_fp_set(mi_fpmode c) { _mm_setcsr(c); }\n"
    "#define MI_FP_FLUSH 0x8040u\n"
    "#elif defined(__aarch64__)\n"
    "typedef uint64_t mi_fpmode;\n"
    "static inline mi_fpmode mi_fp_get(void) { uint64_t c; __asm__ volatile(\"mrs %0, fpcr\" : \"=r\"(c)); return c; }\n"
    "static inline void mi_fp_set(mi_fpmode c) { __asm__ volatile(\"msr fpcr, %0\" :: \"r\"(c)); }\n"
    "#define MI_FP_FLUSH (1ull << 24)\n"
    "#else\n"
    "typedef unsigned mi_fpmode;\n"
    "static inline mi_fpmode mi_fp_get(void) { return 0; }\nstatic inline void mi_fp_set(mi_fpmode c) { (void)c; }\n"
    "#define MI_FP_FLUSH 0u\n"
    "#endif\n"
    "/* every thread of the team the kernels will use: its own mode saved in saved[thread] (the\n"
    " * caller's stack; no thread-local storage in a module that gets unloaded) */\n"
    "#define MI_FP_MAX_THREADS 1024\n"
    "static void mi_fp_enter(mi_fpmode *saved) {\n"
    "    #pragma omp parallel\n"
    "    { int t = omp_get_thread_num(); mi_fpmode c = mi_fp_get(); if (t < MI_FP_MAX_THREADS) saved[t] = c; mi_fp_set(c | MI_FP_FLUSH); }\n}\n"
    "static void mi_fp_leave(const mi_fpmode *saved) {\n"
    "    #pragma omp parallel\n"
    "    { int t = omp_get_thread_num(); mi_fp_set(t < MI_FP_MAX_THREADS ? saved[t] : mi_fp_get() & ~(mi_fpmode)MI_FP_FLUSH); }\n}\n\n";

/* f16 / bf16 buffers hold the bits; values are floats (round to nearest even on the way back,
 * as c10::Half / c10::BFloat16 and core/base/tensor.c convert) */
static const char *half_src =
    "static inline float mi_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline uint32_t mi_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
    /* branch-free, so loops over f16 data vectorize: every case computed, one selected (the
     * earlier if/return forms gave the same bits for all 2^16 halves and all 2^32 floats, with
     * and without FTZ/DAZ, checked exhaustively; a subnormal half is m * 2^-24, a normal float).
     * No fminf and no _Bool arithmetic in mi_f2h: GCC 12 vectorizes neither (fminf's NaN rule
     * has no instruction; `(r == 0x1000) & (h & 1)` is bit-precision), which left every f16
     * round-then-store loop scalar; these forms gave the old bits for all 2^32 floats, with
     * and without FTZ/DAZ. */
    "static inline float mi_h2f(uint16_t h) {\n"
    "    uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;\n"
    "    uint32_t sub = mi_f2u((float)m * 5.9604644775390625e-08f) | s;\n"
    "    uint32_t big = s | 0x7f800000u | (m << 13), nrm = s | ((e + 112) << 23) | (m << 13);\n"
    "    return mi_u2f(e == 0 ? sub : e == 31 ? big : nrm);\n}\n"
    "static inline uint16_t mi_f2h(float f) {\n"
    "    uint32_t u = mi_f2u(f), s = (u >> 16) & 0x8000; float a = fabsf(f);\n"
    "    uint32_t sub = s | (uint32_t)(int32_t)nearbyintf((a < 6.103515625e-05f ? a : 6.103515625e-05f) * 16777216.0f);\n"
    "    uint32_t e = ((u >> 23) & 0xff) - 112, m = u & 0x7fffff, h = (e << 10) | (m >> 13), r = m & 0x1fff;\n"
    "    h += (uint32_t)(r + (h & 1) > 0x1000);   /* to nearest even: r > half, or r == half and h odd */\n"
    "    return (uint16_t)(f != f ? s | 0x7e00 : a >= 65520.0f ? s | 0x7c00 : a < 6.103515625e-05f ? sub : s | h);\n}\n"
    "static inline float mi_bf2f(uint16_t h) { return mi_u2f((uint32_t)h << 16); }\n"
    "static inline uint16_t mi_f2bf(float f) {\n"
    "    uint32_t u = mi_f2u(f);\n"
    "    if (f != f) return (uint16_t)((u >> 16) | 0x40);\n"
    "    u += 0x7fff + ((u >> 16) & 1);\n"
    "    return (uint16_t)(u >> 16);\n}\n"
    "static inline float mi_rh(float f) { return mi_h2f(mi_f2h(f)); }      /* to_dtype(f16) */\n"
    "static inline float mi_rbf(float f) { return mi_bf2f(mi_f2bf(f)); }   /* to_dtype(bf16) */\n\n";

/* indirect indexing (index, embedding, gather, scatter, upsampling): the first index found
 * outside its dim; the kernels record it (and go on at index 0, in bounds), call() returns
 * MI_INDEX_OOB after the kernel and the runtime reads mi_index_oob_info for the message */
static const char *indirect_src =
    "#define MI_INDEX_OOB 3000\n"
    "int64_t mi_index_oob_info[3];   /* {found, index, size} */\n"
    "static void mi_index_oob(int64_t i, int64_t n) {\n"
    "    int64_t z = 0;\n"
    "    if (__atomic_compare_exchange_n(&mi_index_oob_info[0], &z, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {\n"
    "        mi_index_oob_info[1] = i; mi_index_oob_info[2] = n;\n    }\n}\n"
    /* the branch-free check of a simd loop (codegen_kernel.c c_indirect): is i in [0, n), and
     * the running minimum of the bad ones (INT64_MAX: none; an index of INT64_MAX counts as
     * INT64_MAX - 1, out of bounds as well) */
    "static inline int mi_oob_ok(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }\n"
    "static inline int64_t mi_oob_min(int64_t m, int64_t i, int64_t n) {\n"
    "    int64_t k = mi_oob_ok(i, n) ? INT64_MAX : i < INT64_MAX ? i : INT64_MAX - 1;\n"
    "    return k < m ? k : m;\n}\n\n";
/* integer division of values (op_overrides.c: cg_zdiv_math): a zero divisor is recorded in
 * mi_zero_div (from any thread; the kernel goes on with 0), call() returns MI_ZERO_DIV after the
 * kernel, naming it in mi_zero_div_kernel, and the runtime reports ATen's ZeroDivisionError.
 * x / -1 is -x wrapping (INT64_MIN / -1 traps in C as x / 0 does) */
static const char *zdiv_src =
    "#define MI_ZERO_DIV 3001\n"
    "int mi_zero_div;\nconst char *mi_zero_div_kernel;\n"
    "static inline int mi_zdiv_bad(int64_t b) {\n"
    "    if (__builtin_expect(b != 0, 1)) return 0;\n"
    "    __atomic_store_n(&mi_zero_div, 1, __ATOMIC_RELAXED);\n    return 1;\n}\n"
    "static inline int64_t mi_zdiv_trunc(int64_t a, int64_t b) { return mi_zdiv_bad(b) ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; }\n"
    "static inline int64_t mi_zdiv_mod(int64_t a, int64_t b) { return mi_zdiv_bad(b) || b == -1 ? 0 : a % b; }\n"
    "static inline int64_t mi_zdiv_floor(int64_t a, int64_t b) {\n"
    "    if (mi_zdiv_bad(b)) return 0;\n    if (b == -1) return (int64_t)(0 - (uint64_t)a);\n"
    "    int64_t q = a / b;\n    return (a % b != 0) && ((a < 0) != (b < 0)) ? q - 1 : q;\n}\n\n";

/* Does body b divide integer values (the ops cg_zdiv_math spells with a checked helper)? */
static bool body_has_zdiv(const LoopBody *b) {
    for (int k = 0; b && k < b->nops; k++) {
        const LoopOp *o = &b->ops[k];
        if (o->kind == LOP_MATH && (o->op == IOP_FLOORDIV || o->op == IOP_TRUNCDIV || o->op == IOP_FMOD) &&
            dtype_is_int(o->dtype) && o->dtype != DT_U64)
            return true;
    }
    return false;
}
/* ... any body of s or of its cond branches? */
static bool has_zdiv(const Schedule *s) {
    for (int i = 0; i < s->ir->nbufs; i++)
        if (body_has_zdiv(s->ir->bufs[i]->body)) return true;
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (has_zdiv(s->branches[i].s[k])) return true;
    return false;
}

/* ops.store(..., mode="atomic_add") from any thread: a compare-and-swap loop on the bits for
 * floats (as Inductor's cpp atomic_add), fetch_add for ints; f16/bf16 add in float and round */
static const char *atomic_src =
    "static inline void mi_atomic_add_float(float *p, float v) {\n"
    "    uint32_t *q = (uint32_t *)p, o = __atomic_load_n(q, __ATOMIC_RELAXED), n;\n"
    "    do { float x; memcpy(&x, &o, 4); x += v; memcpy(&n, &x, 4); }\n"
    "    while (!__atomic_compare_exchange_n(q, &o, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n}\n"
    "static inline void mi_atomic_add_double(double *p, double v) {\n"
    "    uint64_t *q = (uint64_t *)p, o = __atomic_load_n(q, __ATOMIC_RELAXED), n;\n"
    "    do { double x; memcpy(&x, &o, 8); x += v; memcpy(&n, &x, 8); }\n"
    "    while (!__atomic_compare_exchange_n(q, &o, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n}\n"
    "#define MI_ATOMIC_INT(T) static inline void mi_atomic_add_##T(T *p, T v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }\n"
    "MI_ATOMIC_INT(int64_t) MI_ATOMIC_INT(int32_t) MI_ATOMIC_INT(int16_t) MI_ATOMIC_INT(int8_t) MI_ATOMIC_INT(uint8_t)\n\n";
static const char *atomic_half_src =
    "static inline void mi_atomic_add_f16(uint16_t *p, float v) {\n"
    "    uint16_t o = __atomic_load_n(p, __ATOMIC_RELAXED);\n"
    "    while (!__atomic_compare_exchange_n(p, &o, mi_f2h(mi_h2f(o) + v), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}\n}\n"
    "static inline void mi_atomic_add_bf16(uint16_t *p, float v) {\n"
    "    uint16_t o = __atomic_load_n(p, __ATOMIC_RELAXED);\n"
    "    while (!__atomic_compare_exchange_n(p, &o, mi_f2bf(mi_bf2f(o) + v), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}\n}\n\n";

/* Does a body of s (or of a cond branch) use an indirect index / an atomic_add store? */
static void scan_indirect(const Schedule *s, bool *ind, bool *atomic) {
    for (int i = 0; i < s->ir->nbufs; i++) {
        const LoopBody *b = s->ir->bufs[i]->body;
        for (int k = 0; b && k < b->nops; k++) {
            *ind |= b->ops[k].kind == LOP_INDIRECT;
            *atomic |= b->ops[k].kind == LOP_STORE && b->ops[k].atomic_add;
        }
    }
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) scan_indirect(s->branches[i].s[k], ind, atomic);
}
/* Does kernel kn check indirect indexes (call() looks at mi_index_oob_info after it) / divide
 * integer values (call() looks at mi_zero_div after it)? */
static bool kernel_has(const Schedule *s, const SchedKernel *kn, bool zdiv) {
    for (int p = 0; p < kn->n; p++) {
        const SchedGroup *g = &s->groups[s->order[kn->first + p]];
        for (int i = 0; i < g->n; i++) {
            const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
            if (zdiv && body_has_zdiv(b)) return true;
            for (int k = 0; !zdiv && b && k < b->nops; k++)
                if (b->ops[k].kind == LOP_INDIRECT) return true;
        }
    }
    return false;
}

/* true when s or one of its cond branches has a buffer of dtype a or b */
static bool has_dtype(const Schedule *s, DType a, DType b) {
    for (int i = 0; i < s->ir->nbufs; i++)
        if (s->ir->bufs[i]->layout.dtype == a || s->ir->bufs[i]->layout.dtype == b) return true;
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (has_dtype(s->branches[i].s[k], a, b)) return true;
    return false;
}
static bool has_half(const Schedule *s) { return has_dtype(s, DT_F16, DT_BF16); }

/* oneDNN's sgemm for mi_gemm and mi_sdpa's blocks (modules of a library built with oneDNN,
 * where the machine compiling them has its header): one call over the whole product, threaded by
 * oneDNN over the OpenMP team (its jit AVX-512 / AVX2 kernels), instead of one single-threaded
 * BLAS call per block of rows; MINDUCTOR_GEMM=blas keeps the BLAS. Measured on the device's
 * 16-core Xeon (bench/results/vs_torch-2026-11-26T0612-diag.log), the same run, BLAS ->
 * oneDNN: llama_block 1.91 -> 1.41 ms at 16 threads and 8.13 -> 7.48 ms at 2, transformer_block
 * 2.70 -> 1.73 and 7.35 -> 6.83, mlp 0.166 -> 0.139 and 0.585 -> 0.495; on the dev VM's EPYC,
 * 1 thread, llama_block's seven GEMMs 7.7 -> 3.7 ms. */
static const char *gemm_dnnl_src =
    "#if __has_include(<oneapi/dnnl/dnnl.h>)   /* a machine without oneDNN's headers: the BLAS */\n"
    "#include <oneapi/dnnl/dnnl.h>\n#define MI_HAVE_DNNL_GEMM 1\n"
    "long mi_gemm_dnnl_calls;   /* GEMMs oneDNN computed (the others went to the BLAS or the loop) */\n"
    "static int mi_gemm_dnnl(void) {   /* unless MINDUCTOR_GEMM=blas */\n"
    "    static int v = -1;\n"
    "    if (v < 0) { const char *e = getenv(\"MINDUCTOR_GEMM\"); v = !(e && !strcmp(e, \"blas\")); }\n"
    "    return v;\n}\n"
    "#endif\n";

static const char *gemm_src =
    "/* C[M,N] = bias + A[M,K] @ B[K,N]; A, B strided; C row-major with leading dim ldc; bias (addmm,\n"
    "   NULL for mm) element (i, j) at bias[i * bsi + j * bsj] (0 strides broadcast). Each thread writes\n"
    "   the bias into its own block of rows, then accumulates into it (beta 1), as ATen's addmm does,\n"
    "   inside the one parallel region: the rows are in its cache when the GEMM reads them */\n"
    "static void mi_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t sa0, int64_t sa1,\n"
    "                    const float *B, int64_t sb0, int64_t sb1, float *C, int64_t ldc,\n"
    "                    const float *bias, int64_t bsi, int64_t bsj)\n{\n"
    "    int ta = -1, tb = -1; int64_t lda = 0, ldb = 0;\n"
    "    if (sa1 == 1 && sa0 >= (K > 1 ? K : 1)) { ta = 0; lda = sa0; } else if (sa0 == 1 && sa1 >= (M > 1 ? M : 1)) { ta = 1; lda = sa1; }\n"
    "    if (sb1 == 1 && sb0 >= (N > 1 ? N : 1)) { tb = 0; ldb = sb0; } else if (sb0 == 1 && sb1 >= (K > 1 ? K : 1)) { tb = 1; ldb = sb1; }\n"
    "    (void)lda; (void)ldb;\n"
    "    int big = ta >= 0 && tb >= 0 && M > 0 && N > 0 && K > 0 && M * N * K >= (1 << 21);   /* small: the loop below wins */\n"
    "#ifdef MI_HAVE_DNNL_GEMM\n"
    "    if (big && mi_gemm_dnnl()) {\n"
    "        if (bias) {\n"
    "            #pragma omp parallel for\n"
    "            for (int64_t i = 0; i < M; i++)\n"
    "                for (int64_t j = 0; j < N; j++) C[i * ldc + j] = bias[i * bsi + j * bsj];\n"
    "        }\n"
    "        if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, bias ? 1.0f : 0.0f, C, ldc) == dnnl_success) {\n"
    "            __atomic_fetch_add(&mi_gemm_dnnl_calls, 1, __ATOMIC_RELAXED);\n"
    "            return;\n"
    "        }\n"
    "    }\n"
    "#endif\n"
    "#ifdef MI_HAVE_CBLAS\n"
    "    /* the BLAS runs one thread per OpenMP thread on a block of rows: its own thread pool\n"
    "       would fight the OpenMP team. Weak symbols: whichever BLAS is linked, if any */\n"
    "    extern void openblas_set_num_threads(int) __attribute__((weak));\n"
    "    extern void bli_thread_set_num_threads(int64_t) __attribute__((weak));\n"
    "    extern int mkl_get_max_threads(void) __attribute__((weak));\n"
    "    /* the reference BLAS (netlib) is slower than the loop below: BLAS only when it is a fast one */\n"
    "    int fast = openblas_set_num_threads || bli_thread_set_num_threads || mkl_get_max_threads;\n"
    "    if (fast && big) {\n"
    "        int nt = omp_get_max_threads();\n"
    "        if (openblas_set_num_threads) openblas_set_num_threads(1);\n"
    "        if (bli_thread_set_num_threads) bli_thread_set_num_threads(1);\n"
    "        omp_set_num_threads(nt);   /* an OpenMP build of OpenBLAS sets the team size too */\n"
    "        int64_t rows = (M + nt - 1) / nt;\n"
    "        if (rows < 32) rows = 32;\n"
    "        #pragma omp parallel for\n"
    "        for (int64_t m0 = 0; m0 < M; m0 += rows) {\n"
    "            int64_t m1 = M - m0 < rows ? M : m0 + rows;\n"
    "            if (bias)\n"
    "                for (int64_t i = m0; i < m1; i++)\n"
    "                    for (int64_t j = 0; j < N; j++) C[i * ldc + j] = bias[i * bsi + j * bsj];\n"
    "            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,\n"
    "                        (int)(m1 - m0), (int)N, (int)K, 1.0f, A + m0 * sa0, (int)lda, B, (int)ldb,\n"
    "                        bias ? 1.0f : 0.0f, C + m0 * ldc, (int)ldc);\n"
    "        }\n"
    "        return;\n    }\n#endif\n"
    "    /* B with strided rows (a transposed weight): a contiguous copy, so the j loop vectorizes */\n"
    "    float *pack = sb1 != 1 && K * N > 0 && M >= 16 ? malloc(sizeof(float) * (size_t)(K * N)) : NULL;\n"
    "    if (pack) {\n"
    "        #pragma omp parallel for\n"
    "        for (int64_t k = 0; k < K; k++)\n"
    "            for (int64_t j = 0; j < N; j++) pack[k * N + j] = B[k * sb0 + j * sb1];\n"
    "        B = pack; sb0 = N; sb1 = 1;\n"
    "    }\n"
    "    #pragma omp parallel for\n"
    "    for (int64_t i = 0; i < M; i++) {\n"
    "        float *c = C + i * ldc;\n"
    "        for (int64_t j = 0; j < N; j++) c[j] = bias ? bias[i * bsi + j * bsj] : 0;\n"
    "        for (int64_t k0 = 0; k0 < K; k0 += 64) {\n"
    "            int64_t k1 = k0 + 64 < K ? k0 + 64 : K;\n"
    "            for (int64_t k = k0; k < k1; k++) {\n"
    "                float a = A[i * sa0 + k * sa1];\n"
    "                const float *b = B + k * sb0;\n"
    "                if (sb1 == 1) {\n"
    "                    #pragma omp simd\n"
    "                    for (int64_t j = 0; j < N; j++) c[j] += a * b[j];\n"
    "                } else {\n"
    "                    #pragma omp simd\n"
    "                    for (int64_t j = 0; j < N; j++) c[j] += a * b[j * sb1];\n"
    "                }\n"
    "            }\n        }\n    }\n"
    "    free(pack);\n}\n\n";

static void ex(StrBuf *sb, Expr *e) { sym_c_sb(e, sb); }

/* A FallbackKernel: describe the argument and result buffers, call back into minductor
 * (core/codegen/codegen_fallback.h). */
static void emit_fallback_call(const Schedule *s, const Buffer *b, const char *cleanup, bool flush, const int *ub_of, StrBuf *sb) {
    sb_printf(sb, "    {   /* %s: torch.ops.%s (node '%s')%s */\n", b->ext == EXT_CONV ? "extern_kernels.convolution" : "FallbackKernel",
              b->fb->kernel, b->fb->node->name, b->ext == EXT_CONV ? ", the reference (no oneDNN, or it refused)" : "");
    cg_emit_fallback_descs(sb, s->ir, b, NULL, NULL);
    /* the reference implementation runs without flush-to-zero, as the interpreter does */
    if (flush) sb_put(sb, "        mi_fpmode mi_fp_k = mi_fp_get();\n        mi_fp_set(mi_fp_k & ~(mi_fpmode)MI_FP_FLUSH);\n");
    /* a node of a cond branch goes by its path: "true_graph_0_" + name (ir_prefix) */
    sb_put(sb, "        if (");
    cg_emit_fallback_run(sb, s->ir, b);
    sb_printf(sb, ") {%s return MI_FALLBACK_FAILED; }\n", cleanup);
    if (ub_of) cg_unbacked_fresh_results(s->ir, b, ub_of, sb);
    sb_put(sb, flush ? "        mi_fp_set(mi_fp_k);\n    }\n" : "    }\n");
}

/* mi_sdpa's result arguments: "out, (const int64_t[4]){strides}, lse, (const int64_t[3]){..}, L'"
 * (NULL, NULL, 0 without a logsumexp) */
static void emit_sdpa_results(const Buffer *b, StrBuf *sb) {
    const Buffer *o = b->items[0], *l = b->items[1];
    sb_printf(sb, "%s, (const int64_t[4]){", o->name);
    for (int d = 0; d < 4; d++) { if (d) sb_put(sb, ", "); ex(sb, o->layout.stride[d]); }
    if (!l) { sb_put(sb, "}, NULL, NULL, 0"); return; }
    sb_printf(sb, "}, %s, (const int64_t[3]){", l->name);
    for (int d = 0; d < 3; d++) { if (d) sb_put(sb, ", "); ex(sb, l->layout.stride[d]); }
    sb_put(sb, "}, ");
    ex(sb, l->layout.size[2]);
}

static void emit_extern_call(const Schedule *s, const Buffer *b, StrBuf *sb) {
    const ExternArg *a = b->eargs;
    if (b->ext == EXT_SDPA) {
        sb_put(sb, "    {\n");
        const char *nmq[3] = {"sq", "sk", "sv"};
        for (int i = 0; i < 3; i++) {
            sb_printf(sb, "        const int64_t %s[4] = {", nmq[i]);
            for (int d = 0; d < 4; d++) { if (d) sb_put(sb, ", "); ex(sb, a[i].view.stride[d]); }
            sb_put(sb, "};\n");
        }
        sb_put(sb, "        mi_sdpa(");
        ex(sb, a[0].view.size[0]); sb_put(sb, ", "); ex(sb, a[0].view.size[1]); sb_put(sb, ", ");
        ex(sb, a[0].view.size[2]); sb_put(sb, ", "); ex(sb, a[1].view.size[2]); sb_put(sb, ", ");
        ex(sb, a[0].view.size[3]); sb_put(sb, ", "); ex(sb, a[2].view.size[3]);
        sb_printf(sb, ", %.9gf,\n                ", b->scale);
        for (int i = 0; i < 3; i++) {
            sb_printf(sb, "%s + ", a[i].buf->name); ex(sb, a[i].view.offset); sb_printf(sb, ", %s, ", nmq[i]);
        }
        emit_sdpa_results(b, sb);
        sb_printf(sb, ",\n                %d, ", b->causal);
        cg_emit_sdpa_mask(sb, b, "(const int64_t[4]){", "}", "NULL, 0, NULL");
        sb_put(sb, "    }\n");
        for (int k = 2; k < b->nitems; k++)   /* the philox seed and offset: no dropout, 0 */
            if (b->items[k]) sb_printf(sb, "    %s[0] = 0;\n", b->items[k]->name);
        return;
    }
    const ExternArg *A = b->ext == EXT_ADDMM ? &a[1] : &a[0], *Bm = b->ext == EXT_ADDMM ? &a[2] : &a[1];
    int off = b->ext == EXT_BMM ? 1 : 0;
    sb_put(sb, "    {\n");
    if (b->ext == EXT_BMM) {
        sb_put(sb, "        for (int64_t bt = 0; bt < ");
        ex(sb, b->layout.size[0]);
        sb_put(sb, "; bt++)\n    ");
    }
    DType dt = b->layout.dtype;
    sb_put(sb, dt == DT_F64 ? "        mi_gemm_f64(" : dt == DT_F16 ? "        mi_gemm_f16(" : dt == DT_BF16 ? "        mi_gemm_bf16(" : "        mi_gemm(");
    ex(sb, b->layout.size[off]); sb_put(sb, ", "); ex(sb, b->layout.size[off + 1]); sb_put(sb, ", ");
    ex(sb, A->view.size[off + 1]);
    sb_printf(sb, ", %s + ", A->buf->name); ex(sb, A->view.offset);
    if (off) { sb_put(sb, " + bt * "); ex(sb, A->view.stride[0]); }
    sb_put(sb, ", "); ex(sb, A->view.stride[off]); sb_put(sb, ", "); ex(sb, A->view.stride[off + 1]);
    sb_printf(sb, ", %s + ", Bm->buf->name); ex(sb, Bm->view.offset);
    if (off) { sb_put(sb, " + bt * "); ex(sb, Bm->view.stride[0]); }
    sb_put(sb, ", "); ex(sb, Bm->view.stride[off]); sb_put(sb, ", "); ex(sb, Bm->view.stride[off + 1]);
    sb_printf(sb, ", %s", b->name);
    if (off) { sb_put(sb, " + bt * "); ex(sb, b->layout.stride[0]); }
    sb_put(sb, ", "); ex(sb, b->layout.stride[off]);
    if (b->ext == EXT_ADDMM) {   /* the bias, folded into the GEMM (mi_gemm) */
        const Layout *bl = &a[0].view;
        sb_printf(sb, ", %s + ", a[0].buf->name);
        ex(sb, bl->offset);
        if (bl->ndim == 2) { sb_put(sb, ", "); ex(sb, bl->stride[0]); sb_put(sb, ", "); ex(sb, bl->stride[1]); }
        else if (bl->ndim == 1) { sb_put(sb, ", 0, "); ex(sb, bl->stride[0]); }
        else sb_put(sb, ", 0, 0");
        sb_put(sb, ");\n    }\n");
    } else sb_put(sb, ", NULL, 0, 0);\n    }\n");
}

/* has_mm / has_sdpa / has_fb / has_conv (oneDNN) over s and its cond branches; -1 + ctx error
 * on a non-f32 extern */
static int scan_externs(MiCtx *ctx, const Schedule *s, bool *has_mm, bool *has_sdpa, bool *has_fb, bool *has_conv, bool *has_conv_bwd) {
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        if (!g->is_extern) continue;
        const Buffer *b = s->nodes[g->nodes[0]].buf;
        if (b->ext == EXT_CONV) {   /* oneDNN, else (or when it refuses) the node's reference */
            *has_conv |= cg_conv_uses_dnnl(b);
            *has_fb = true;
            continue;
        }
        if (b->ext == EXT_FALLBACK) *has_fb = true;
        if (cg_conv_bwd_uses_dnnl(b)) *has_conv = *has_conv_bwd = true;
        if (b->ext == EXT_COND || b->ext == EXT_FALLBACK || b->ext == EXT_MULTI_OUTPUT || b->ext == EXT_CONCAT) continue;
        if (b->ext == EXT_SDPA) *has_sdpa = true; else *has_mm = true;
        /* mm / addmm / bmm in f32, f64, f16 or bf16 (operands of the output's dtype); attention f32 */
        DType want = b->ext == EXT_SDPA ? DT_F32 : b->layout.dtype;
        if (want != DT_F32 && want != DT_F64 && want != DT_F16 && want != DT_BF16)
            return mi_err(ctx, NULL, 0, 0, "extern kernel '%s': dtype %s is not supported", b->name, dtype_abbrev(want));
        for (int i = 0; i < b->neargs; i++)
            if (b->eargs[i].buf->layout.dtype != want && !(b->ext == EXT_SDPA && i == 3 && b->eargs[i].buf->layout.dtype == DT_BOOL))
                return mi_err(ctx, NULL, 0, 0, "extern kernel '%s': operand %d is %s, not %s", b->name, i, dtype_abbrev(b->eargs[i].buf->layout.dtype), dtype_abbrev(want));
    }
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (scan_externs(ctx, s->branches[i].s[k], has_mm, has_sdpa, has_fb, has_conv, has_conv_bwd) < 0) return -1;
    return 0;
}

/* The kernels of every branch (recursively), defined before any function that calls one: a
 * kernel linked to another schedule's (codegen_reuse: same_sched) calls a definition emitted
 * for a branch or for the graph around it. */
static int emit_call_fn(MiCtx *ctx, const Schedule *s, const CgMemPlan *mem, const char *fname, bool fb, StrBuf *out);
static void emit_profile_tables(const Schedule *s, StrBuf *out);

static int emit_branch_kernels(MiCtx *ctx, const Schedule *s, StrBuf *out) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            const Schedule *bs = s->branches[i].s[k];
            if (emit_branch_kernels(ctx, bs, out) < 0) return -1;
            CgMemPlan *mem = cg_mem_plan(bs);
            int rc = 0;
            for (int j = 0; j < bs->nkernels && rc == 0; j++)
                if (!bs->kernels[j].is_extern && bs->kernels[j].same_as < 0) rc = cg_emit_kernel(ctx, bs, &bs->kernels[j], mem, out);
            cg_mem_plan_free(mem);
            if (rc < 0) return -1;
        }
    return 0;
}

/* Each branch (recursively) as a function with the module ABI, so that the caller's `if` can
 * call them (after emit_branch_kernels). */
static int emit_branches(MiCtx *ctx, const Schedule *s, bool fb, StrBuf *out) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            const Schedule *bs = s->branches[i].s[k];
            if (emit_branches(ctx, bs, fb, out) < 0) return -1;
            CgMemPlan *mem = cg_mem_plan(bs);
            sb_printf(out, "/* subgraph %s */\n", s->branches[i].cond->cond->names[k]);
            int rc = emit_call_fn(ctx, bs, mem, s->branches[i].fn[k], fb, out);
            cg_mem_plan_free(mem);
            if (rc < 0) return -1;
            sb_put(out, "\n");
        }
    return 0;
}

/* if (pred) true_graph_0(operands, results, syms) else false_graph_0(...): the predicate is
 * host memory; with fallbacks each branch gets the callback table and a failure frees what is
 * allocated (cleanup) and returns the branch's code (MI_ZERO_DIV, MI_INDEX_OOB, ... reach the
 * runtime, which names the failure) */
typedef struct CondHow { bool fb; const char *cleanup; } CondHow;
static void cond_tail(void *arg, const char *pred, const char *index, const char *f0, const char *f1, StrBuf *out) {
    const CondHow *h = arg;
    const char *fb = h->fb ? ", fb" : "";
    sb_printf(out, "        int mi_brc = %s[%s] ? %s(cin, cout, csyms0%s) : %s(cin, cout, csyms1%s);\n        if (mi_brc) {%s return mi_brc; }\n    }\n",
              pred, index, f0, fb, f1, fb, h->cleanup);
}

char *codegen_c(MiCtx *ctx, const Schedule *s) {
    const IrModule *m = s->ir;
    StrBuf out;
    sb_init(&out);
    sb_put(&out, "/* generated by minductor: one function per kernel (on cpu a kernel runs the fused groups\n * between two extern calls, one loop nest each), then call() */\n");
    sb_put(&out, prelude);
    sb_put(&out, sym_c_prelude());
    sb_put(&out, prelude_welford);
    sb_put(&out, cg_csum_prelude);
    if (ir_module_uses_math(m, IOP_RAND) || ir_module_uses_math(m, IOP_RANDN) || ir_module_uses_math(m, IOP_RANDINT64)) cg_rand_src(&out, false);
    cg_special_src(&out, m);
    bool has_mm = false, has_sdpa = false, has_fb = false, has_conv = false, has_conv_bwd = false;
    if (scan_externs(ctx, s, &has_mm, &has_sdpa, &has_fb, &has_conv, &has_conv_bwd) < 0) { sb_free(&out); return NULL; }
    for (int j = 0; j < m->noutputs; j++)   /* an output sized by an unbacked symbol: fb->alloc_out */
        has_fb |= m->outputs[j] && m->outputs[j]->kind != BUF_INPUT && ir_layout_unbacked(m, &m->outputs[j]->layout, false);
    if (m->nunbacked) sb_put(&out, cg_unbacked_src);
    bool has_ind = false, has_atomic = false;
    scan_indirect(s, &has_ind, &has_atomic);
    if (has_half(s)) sb_put(&out, half_src);
    if (cg_uses_f8(s)) cg_f8_src(&out, false);
    if (has_ind) sb_put(&out, indirect_src);
    if (has_zdiv(s)) sb_put(&out, zdiv_src);
    if (cg_has_while(s)) sb_put(&out, cg_while_src);
    if (has_atomic) sb_put(&out, atomic_src);
    if (has_atomic && has_half(s)) sb_put(&out, atomic_half_src);
    if (has_fb) sb_put(&out, cg_fallback_abi);
#ifdef HAVE_DNNL
    if (has_mm || has_sdpa) sb_put(&out, gemm_dnnl_src);   /* mi_gemm's and mi_sdpa's */
#endif
    if (has_mm) {
        sb_put(&out, gemm_src);
        sb_put(&out, cg_gemm_f64_src);
        if (has_half(s)) sb_put(&out, cg_gemm_half_src);
    }
    if (ctx->flush_denormal) sb_put(&out, denormal_src);
    if (has_conv) sb_put(&out, cg_conv_src);
    if (has_conv_bwd) sb_put(&out, cg_conv_bwd_src);
    sb_put(&out, vecmath_src);
    sb_put(&out, cg_stream_src);
    if (has_sdpa) sb_put(&out, cg_sdpa_src);   /* after the vector math: it calls mi_expf */
    sb_put(&out, cg_arena_src);
    CgMemPlan *mem = cg_mem_plan(s);
    for (int k = 0; k < s->nkernels; k++) {   /* a kernel linked to an earlier one's source calls that */
        if (s->kernels[k].is_extern || s->kernels[k].same_as >= 0) continue;
        if (cg_emit_kernel(ctx, s, &s->kernels[k], mem, &out) < 0) { cg_mem_plan_free(mem); sb_free(&out); return NULL; }
    }
    if (emit_branch_kernels(ctx, s, &out) < 0 || emit_branches(ctx, s, has_fb, &out) < 0) { cg_mem_plan_free(mem); sb_free(&out); return NULL; }
    /* ABI symbols */
    sb_put(&out, "const char *mi_sym_names[] = {");
    for (int i = 0; i < m->nsyms; i++) sb_printf(&out, "\"%s\", ", m->sym_names[i]);
    sb_put(&out, "NULL};\n");
    sb_put(&out, "const char *mi_guards[] = {");   /* call() returns MI_GUARD_FAILED + k when guard k fails */
    for (int i = 0; i < m->nguards; i++) sb_printf(&out, "\"%s\", ", m->guards[i]);
    sb_put(&out, "NULL};\n");
    sb_printf(&out, "const int mi_num_outputs = %d;\n", m->noutputs);
    cg_emit_output_alias(m, "", &out);
    sb_put(&out, "\n");
    emit_profile_tables(s, &out);
    const char *entry = has_fb ? "call_fb" : "call";
    if (ctx->flush_denormal) {   /* call() sets the denormal mode around the module's body */
        if (emit_call_fn(ctx, s, mem, has_fb ? "mi_body_fb" : "mi_body", has_fb, &out) < 0) { cg_mem_plan_free(mem); sb_free(&out); return NULL; }
        sb_printf(&out, "\nint %s(void *const *inputs, void *const *outputs, const int64_t *syms%s)\n{\n"
                        "    mi_fpmode saved[MI_FP_MAX_THREADS];\n    mi_fp_enter(saved);\n    int r = %s(inputs, outputs, syms%s);\n"
                        "    mi_fp_leave(saved);\n    return r;\n}\n",
                  entry, has_fb ? ", const MiFb *fb" : "", has_fb ? "mi_body_fb" : "mi_body", has_fb ? ", fb" : "");
    } else if (emit_call_fn(ctx, s, mem, entry, has_fb, &out) < 0) { cg_mem_plan_free(mem); sb_free(&out); return NULL; }
    cg_mem_plan_free(mem);
    if (has_fb)   /* without the callback table a fallback cannot run */
        sb_put(&out, "\nint call(void *const *inputs, void *const *outputs, const int64_t *syms)\n{\n"
                     "    return call_fb(inputs, outputs, syms, NULL);\n}\n");
    return sb_take(&out);
}

/* The per-kernel profile of the module ABI (runtime.h): while the caller sets mi_profile,
 * call() adds the wall time of kernel k (a fused cpp kernel or an extern / fallback call) to
 * mi_prof_ns[k]; mi_prof_names[k] says which, "extern_mm (bmm -> buf5)" for an extern. One
 * clock_gettime pair per kernel when on, one untaken branch when off. mi_profile == 2 reads the
 * calling thread's CPU clock instead of the wall clock (one thread on a shared machine). */
static void emit_profile_tables(const Schedule *s, StrBuf *out) {
    sb_put(out, "int mi_profile;\nint64_t mi_prof_ns[");
    sb_printf(out, "%d];\nconst char *mi_prof_names[] = {", s->nkernels > 0 ? s->nkernels : 1);
    for (int k = 0; k < s->nkernels; k++) {
        const SchedKernel *kn = &s->kernels[k];
        const Buffer *eb = kn->is_extern ? s->nodes[s->groups[s->order[kn->first]].nodes[0]].buf : NULL;
        if (eb) sb_printf(out, "\"%s (%s -> %s)\", ", kn->name, ir_extern_kind_name(eb->ext), eb->name);
        else sb_printf(out, "\"%s\", ", kn->name);
    }
    sb_put(out, "NULL};\nstatic inline int64_t mi_ns(void) { struct timespec t; clock_gettime(mi_profile == 2 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t); return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }\n\n");
}

/* One guard "LHS OP RHS" (ir_add_guard's text) as a C check returning MI_GUARD_FAILED + k.
 * A guard whose sides do not parse is left out (the module then cannot check it). */
static void emit_guard(MiCtx *ctx, const IrModule *m, const char *g, int k, StrBuf *out) {
    static const char *const rel[] = {" == ", " != ", " >= ", " <= ", " < ", " > "};
    for (size_t r = 0; r < sizeof rel / sizeof rel[0]; r++) {
        const char *at = strstr(g, rel[r]);
        if (!at) continue;
        char lhs[256];
        snprintf(lhs, sizeof lhs, "%.*s", (int)(at - g), g);
        MiTry tentative = mi_try(ctx);
        Expr *a = sym_parse(ctx, lhs, NULL), *b = sym_parse(ctx, at + strlen(rel[r]), NULL);
        mi_try_end(&tentative);
        if (!a || !b) return;
        Layout probe = {.ndim = 2, .size = (Expr *[]){a, b}, .stride = (Expr *[]){a, b}};
        if (ir_layout_unbacked(m, &probe, false)) return;   /* u0 is not known on entry */
        sb_put(out, "    if (!(");
        sym_c_sb(a, out);
        sb_printf(out, "%s", rel[r]);
        sym_c_sb(b, out);
        sb_printf(out, ")) return MI_GUARD_FAILED + %d;   /* %s */\n", k, g);
        return;
    }
}

/* The arena block of a call (mem: the plan, core/codegen/codegen_mem.c): `char *mi_ar` taken
 * from the function's static arena `mi_arena_NAME`; slot offsets are constants when the plan
 * is packed, else `mi_off[slot]`, summed here from the sizes (symbolic: end to end). */
static void emit_arena_take(const CgMemPlan *mem, const char *fname, StrBuf *out) {
    if (mem->packed) {
        sb_printf(out, "    char *mi_ar = mi_arena_take(&mi_arena_%s, %lldu);   /* %d slots packed by lifetime */\n",
                  fname, (long long)mem->total, mem->nslots);
    } else {
        sb_printf(out, "    size_t mi_off[%d], mi_need = 0;\n", mem->nslots);
        for (int i = 0; i < mem->nslots; i++) {
            sb_printf(out, "    mi_off[%d] = mi_need; mi_need += ((size_t)(", i);
            ex(out, mem->size[i]);
            sb_put(out, ") + 63) / 64 * 64;\n");
        }
        sb_printf(out, "    char *mi_ar = mi_arena_take(&mi_arena_%s, mi_need);\n", fname);
    }
    sb_put(out, "    if (!mi_ar) return 1;\n");
}

/* Storage of buffer b, first written by group g, whose size an unbacked symbol gives (known by
 * now: its definer ran first, ir_deps.c): a graph output from the caller (fb->alloc_out), a
 * data-dependent FallbackKernel result from that call (NULL until it returns), any other
 * buffer malloc'd into mi_ub (freed when the call returns). Example: `buf2 = (float
 * *)fb->alloc_out(fb->ctx, 1, 1, mi_sym_names, syms);` for full([u1]) returned. */
static int emit_unbacked_alloc(MiCtx *ctx, const Schedule *s, const Buffer *b, const SchedGroup *g, const int *ub_of, bool fb,
                               const char *cleanup, StrBuf *out) {
    const IrModule *m = s->ir;
    const char *ct = cg_ctype(b->layout.dtype);
    if (!ct) return mi_err(ctx, NULL, 0, 0, "buffer '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype));
    const Buffer *eb = g->is_extern ? s->nodes[g->nodes[0]].buf : NULL, *outs[64];
    bool fresh = false;
    for (int k = 0, n = eb && eb->ext == EXT_FALLBACK ? cg_fallback_outs(eb, outs, 64) : 0; k < n; k++) fresh |= outs[k] == b;
    fresh = fresh && ir_call_sizes_result(m, b);
    if (b->output_index >= 0) {
        if (fresh || !fb)
            return mi_err(ctx, NULL, 0, 0, "output '%s': a data-dependent result returned as it is (its size %s) is not supported by the compiled module",
                          b->name, "comes back from the fallback's call");
        sb_printf(out, "    %s = (%s *)fb->alloc_out(fb->ctx, %d, %d, mi_sym_names, syms);   /* sized by an unbacked symbol */\n",
                  b->name, ct, b->output_index, m->nsyms);
        sb_printf(out, "    if (!%s) {%s return MI_FALLBACK_FAILED; }\n", b->name, cleanup);
        return 0;
    }
    if (fresh) {   /* the call hands it back contiguous (rt_fallback_run) */
        Layout c = layout_contiguous((IrModule *)m, b->layout.dtype, b->layout.device, b->layout.ndim, b->layout.size);
        for (int d = 0; d < b->layout.ndim; d++) {
            int64_t one = 0;
            if (b->layout.stride[d] != c.stride[d] && !(sym_is_int(b->layout.size[d], &one) && one == 1))
                return mi_err(ctx, NULL, 0, 0, "buffer '%s': a data-dependent FallbackKernel result must be contiguous here", b->name);
        }
        sb_printf(out, "    %s *%s = NULL;   /* allocated by its FallbackKernel's call */\n", ct, b->name);
        return 0;
    }
    sb_printf(out, "    %s *%s = (%s *)mi_ub_alloc(&mi_ub[%d], (size_t)(", ct, b->name, ct, ub_of[b->id]);
    ex(out, layout_storage_size(m->ctx->sym, &b->layout));
    sb_printf(out, ") * %zu);\n    if (!%s) {%s return 1; }\n", dtype_size(b->layout.dtype), b->name, cleanup);
    return 0;
}

/* `int NAME(inputs, outputs, syms)`: take the arena, run the kernels in order, give it back.
 * Intermediates are pointers into the arena at their first writer, as Inductor's
 * AllocateLine / ReuseLine / in-place reuse place them (mem). */
static int emit_call_fn(MiCtx *ctx, const Schedule *s, const CgMemPlan *mem, const char *fname, bool fb, StrBuf *outp) {
    const IrModule *m = s->ir;
    StrBuf out;
    sb_init(&out);
    bool entry = !strcmp(fname, "call") || !strcmp(fname, "call_fb");
    if (mem->nslots)   /* the function's arena, freed when the module is unloaded */
        sb_printf(outp, "static mi_arena mi_arena_%s;\n__attribute__((destructor)) static void mi_arena_%s_fini(void) { mi_big_free(mi_arena_%s.p); }\n",
                  fname, fname, fname);
    if (!entry) sb_put(&out, "static ");
    /* unbacked symbols: the call's own copy of syms, where it stores them once defined */
    const char *sy = m->nunbacked ? "mi_syms_in" : "syms";
    if (fb) sb_printf(&out, "int %s(void *const *inputs, void *const *outputs, const int64_t *%s, const MiFb *fb)\n{\n    (void)fb;\n", fname, sy);
    else sb_printf(&out, "int %s(void *const *inputs, void *const *outputs, const int64_t *%s)\n{\n", fname, sy);
    int nub = 0, *ub_of = cg_unbacked_slots(s, mem, &nub);
    if (m->nunbacked)
        sb_printf(&out, "    int64_t syms[%d];\n    for (int mi_i = 0; mi_i < %d; mi_i++) syms[mi_i] = mi_syms_in[mi_i];\n    void *mi_ub[%d] = {0}; (void)mi_ub;\n",
                  m->nsyms, m->nsyms, nub + 1);
    sb_put(&out, "    (void)inputs; (void)outputs; (void)syms;\n");
    bool ind = false, atomic = false;
    scan_indirect(s, &ind, &atomic);
    if (ind) sb_put(&out, "    mi_index_oob_info[0] = 0;\n");
    if (has_zdiv(s)) sb_put(&out, "    mi_zero_div = 0;\n");
    bool prof = !m->name_prefix;   /* the top-level module; a cond branch is timed as one call */
    if (prof) sb_put(&out, "    int64_t mi_t = 0; (void)mi_t;\n");
    for (int i = 0; i < m->nsyms; i++)
        if (ir_unbacked_find(m, m->sym_names[i])) sb_printf(&out, "    int64_t %s = 0; (void)%s;\n", m->sym_names[i], m->sym_names[i]);
        else sb_printf(&out, "    const int64_t %s = syms[%d]; (void)%s;\n", m->sym_names[i], i, m->sym_names[i]);
    /* the size relations this module was generated for (branches share them). "s0 >= 1" is
     * recorded but not checked: an empty tensor runs no loop iteration, so size 0 still works */
    if (!m->name_prefix)
        for (int i = 0; i < m->nguards; i++) {
            const char *g = m->guards[i], *ge = strstr(g, " >= 1");
            if (ge && ge[5] == 0 && (size_t)(ge - g) == strcspn(g, " +*-(")) continue;
            emit_guard(ctx, m, g, i, &out);
        }
    for (int i = 0; i < m->ninputs; i++) {
        const Buffer *b = m->inputs[i];
        const char *ct = cg_ctype(b->layout.dtype);
        if (!ct) { free(ub_of); sb_free(&out); return mi_err(ctx, NULL, 0, 0, "input '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype)); }
        sb_printf(&out, "    %s *%s = (%s *)inputs[%d]; (void)%s;\n", ct, b->name, ct, i, b->name);
    }
    for (int i = 0; i < m->ninputs; i++) cg_unbacked_item_defs(m, m->inputs[i], &out);   /* item() of an input: on entry */
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->output_index >= 0 && b->kind != BUF_INPUT) {
            const char *ct = cg_ctype(b->layout.dtype);
            if (!ct) { free(ub_of); sb_free(&out); return mi_err(ctx, NULL, 0, 0, "output '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype)); }
            /* sized by an unbacked symbol: the caller allocates it once that is known (alloc_out) */
            if (ir_layout_unbacked(m, &b->layout, false)) sb_printf(&out, "    %s *%s = NULL;\n", ct, b->name);
            else sb_printf(&out, "    %s *%s = (%s *)outputs[%d];\n", ct, b->name, ct, b->output_index);
        }
    }
    char cleanup[160] = "";   /* what an early return runs */
    if (mem->nslots) {
        emit_arena_take(mem, fname, &out);
        snprintf(cleanup, sizeof cleanup, " mi_arena_give(&mi_arena_%s, mi_ar);", fname);
    }
    if (nub) snprintf(cleanup + strlen(cleanup), sizeof cleanup - strlen(cleanup), " mi_ub_free(mi_ub, %d);", nub);
    bool *allocated = mi_xcalloc(m->nbufs + 1, 1);
    for (int k = 0; k < s->nkernels; k++) {
        const SchedKernel *kn = &s->kernels[k];
        const SchedGroup *g = &s->groups[s->order[kn->first]];
        int *gids;
        bool *gwr;
        int ngid = cg_kernel_bufs(s, kn, &gids, &gwr);
        for (int q = 0; q < ngid; q++) {
            int i = gids[q];
            const Buffer *b = m->bufs[i];
            int sl = mem->slot[i];
            if (allocated[i] || !gwr[q]) continue;
            if (sl < 0 && (ub_of[i] >= 0 || (b->output_index >= 0 && b->kind != BUF_INPUT && ir_layout_unbacked(m, &b->layout, false)))) {
                allocated[i] = true;
                if (emit_unbacked_alloc(ctx, s, b, g, ub_of, fb, cleanup, &out) < 0) { free(ub_of); free(gids); free(gwr); free(allocated); sb_free(&out); return -1; }
                continue;
            }
            if (sl < 0) continue;
            allocated[i] = true;
            const char *ct = cg_ctype(b->layout.dtype);
            if (!ct) { free(gids); free(gwr); free(allocated); sb_free(&out); return mi_err(ctx, NULL, 0, 0, "buffer '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype)); }
            if (mem->packed) sb_printf(&out, "    %s *%s = (%s *)(mi_ar + %lld);", ct, b->name, ct, (long long)mem->offset[sl]);
            else sb_printf(&out, "    %s *%s = (%s *)(mi_ar + mi_off[%d]);", ct, b->name, ct, sl);
            if (mem->inplace_of[i] >= 0) sb_printf(&out, "   /* in place of %s */", m->bufs[mem->inplace_of[i]]->name);
            else if (mem->reuse_of[i] >= 0) sb_printf(&out, "   /* reuses %s's storage */", m->bufs[mem->reuse_of[i]]->name);
            sb_put(&out, "\n");
        }
        const Buffer *eb = g->is_extern ? s->nodes[g->nodes[0]].buf : NULL;
        cg_source_comment(s, kn, "    ", &out);
        if (prof) sb_put(&out, "    if (mi_profile) mi_t = mi_ns();\n");
        /* the kernel's debug handle: what inductor_provenance_tracking_node_mappings names it by */
        sb_printf(&out, "    /* [Provenance debug handles] %s:%d */\n", kn->name, k + 1);
        /* a failing fallback returns at once, giving the arena back */
        if (eb && eb->ext == EXT_MULTI_OUTPUT) cg_emit_multi_output(eb, &out);
        else if (eb && eb->ext == EXT_CONCAT) cg_emit_concat(eb, &out);
        else if (eb && eb->ext == EXT_COND && eb->cond->is_while) {
            CgWhileHow how = {false, fb, cleanup};
            if (cg_emit_while_call(ctx, s, eb, &how, &out) < 0) { free(gids); free(gwr); free(allocated); sb_free(&out); return -1; }
        } else if (eb && eb->ext == EXT_COND) {
            CondHow how = {fb, cleanup};
            if (cg_emit_cond_call(ctx, s, eb, cond_tail, &how, &out) < 0) { free(gids); free(gwr); free(allocated); sb_free(&out); return -1; }
        } else if (eb && (cg_conv_uses_dnnl(eb) || cg_conv_bwd_uses_dnnl(eb))) {   /* oneDNN; the reference if it refuses */
            if (eb->ext == EXT_CONV) cg_emit_conv_call(&out, eb);
            else cg_emit_conv_bwd_call(&out, eb);
            sb_put(&out, "    if (mi_conv_status)\n");
            emit_fallback_call(s, eb, cleanup, ctx->flush_denormal, ub_of, &out);
        } else if (eb && (eb->ext == EXT_FALLBACK || eb->ext == EXT_CONV)) emit_fallback_call(s, eb, cleanup, ctx->flush_denormal, ub_of, &out);
        else if (eb) emit_extern_call(s, eb, &out);
        else {
            sb_printf(&out, "    %s(", kn->name);
            int na = 0;
            for (int q = 0; q < ngid; q++)
                if (!cg_mem_inplace_here(mem, gids[q], gids, ngid)) sb_printf(&out, "%s%s", na++ ? ", " : "", m->bufs[gids[q]]->name);
            sb_printf(&out, "%ssyms);\n", na ? ", " : "");
            if (kernel_has(s, kn, false))
                sb_printf(&out, "    if (mi_index_oob_info[0]) {%s return MI_INDEX_OOB; }\n", cleanup);
            if (kernel_has(s, kn, true))
                sb_printf(&out, "    if (mi_zero_div) {%s mi_zero_div_kernel = \"%s\"; return MI_ZERO_DIV; }\n", cleanup, kn->name);
        }
        if (prof) sb_printf(&out, "    if (mi_profile) mi_prof_ns[%d] += mi_ns() - mi_t;\n", k);
        for (int q = 0; m->nunbacked && q < ngid; q++)   /* item() of a buffer this kernel wrote */
            if (gwr[q]) cg_unbacked_item_defs(m, m->bufs[gids[q]], &out);
        free(gids);
        free(gwr);
    }
    if (mem->nslots || nub) sb_printf(&out, "   %s\n", cleanup);
    free(allocated);
    free(ub_of);
    sb_put(&out, "    return 0;\n}\n");
    sb_put(outp, out.s);
    sb_free(&out);
    return 0;
}
