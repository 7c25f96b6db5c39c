/* codegen_f8.c — float8 buffers in generated code. A float8 buffer holds the bits (uint8_t);
 * values are floats, as Inductor computes low-precision floats: a load converts up
 * (mi_from_f8e4m3fn), a store rounds back (mi_to_f8e4m3fn), an explicit cast rounds and stays a
 * float (mi_round_f8e4m3fn). The C module converts exactly as c10's Float8_* types do (and
 * core/base/tensor.c, the interpreter's storage): Inductor's cpp backend calls c10::convert. The
 * CUDA module stores e4m3fn / e5m2 with the saturating cvt.rn.satfinite instruction, as
 * Triton's fp32 -> fp8e4nv / fp8e5 conversion does (a value over 448 becomes 448 on the GPU
 * where eager PyTorch 2.11 gives NaN; values in range round the same). */
#include "codegen/codegen_f8.h"

#include <stdio.h>

/* The shared decoder and c10's encoder, written once for both backends over two bit-cast
 * helpers and MI_F8_FN (the function qualifiers) that each backend defines first. e5 / fnuz
 * pick the format; they are constants at every call, so the compiler folds the branches. */
static const char f8_core[] =
    "MI_F8_FN float mi_f8_dec(uint8_t b, int e5, int fnuz) {\n"
    "    int M = e5 ? 2 : 3, bias = (e5 ? 15 : 7) + fnuz, e = (b & 0x7f) >> M, m = b & ((1 << M) - 1);\n"
    "    if (fnuz && b == 0x80) return NAN;\n"
    "    if (!fnuz && e5 && e == 31) return m ? NAN : (b >> 7) ? -INFINITY : INFINITY;\n"
    "    if (!fnuz && !e5 && e == 15 && m == 7) return NAN;\n"
    "    float v = e == 0 ? ldexpf((float)m, 1 - bias - M) : ldexpf(1.0f + (float)m / (float)(1 << M), e - bias);\n"
    "    return (b >> 7) ? -v : v;\n}\n"
    "MI_F8_FN uint8_t mi_f8_enc(float f, int e5, int fnuz) {\n"
    "    int M = e5 ? 2 : 3, bias = (e5 ? 15 : 7) + fnuz, drop = 23 - M;\n"
    "    uint32_t u = mi_f8_fbits(f), sign = u & 0x80000000u, r;\n"
    "    u ^= sign;\n"
    "    uint32_t max = e5 ? 143u << 23 : fnuz ? 0x87u << 23 : 1087u << 20;\n"
    "    if (u >= max) return fnuz ? 0x80 : (uint8_t)((e5 ? (u > 0x7f800000u ? 0x7f : 0x7c) : 0x7f) | (sign >> 24));\n"
    "    if (u < ((uint32_t)(128 - bias) << 23)) {\n"
    "        uint32_t magic = (uint32_t)(128 - bias + drop) << 23;\n"
    "        r = mi_f8_fbits(mi_f8_bitsf(u) + mi_f8_bitsf(magic)) - magic;\n"
    "        if (fnuz && r == 0) return 0;\n"
    "    } else {\n"
    "        uint32_t odd = (u >> drop) & 1;\n"
    "        u += ((uint32_t)(bias - 127) << 23) + ((1u << (drop - 1)) - 1) + odd;\n"
    "        r = u >> drop;\n"
    "    }\n"
    "    return (uint8_t)(r | (sign >> 24));\n}\n";

static const struct { DType dt; int e5, fnuz; } f8_types[] = {
    {DT_F8E4M3, 0, 0}, {DT_F8E5M2, 1, 0}, {DT_F8E4M3FNUZ, 0, 1}, {DT_F8E5M2FNUZ, 1, 1},
};

const char *cg_f8_fn(DType dt, char kind, char *buf, size_t n) {
    snprintf(buf, n, "mi_%s_%s", kind == 'l' ? "from" : kind == 's' ? "to" : "round", dtype_abbrev(dt));
    return buf;
}

/* cg_f8_src: the qualifiers and bit casts of the backend, the core, then per format its three
 * wrappers. Example (C, e4m3fn): static inline uint8_t mi_to_f8e4m3fn(float f) { return
 * mi_f8_enc(f, 0, 0); }; CUDA: ... { return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3); } */
void cg_f8_src(StrBuf *out, bool cuda) {
    if (cuda)
        sb_put(out, "#include <cuda_fp8.h>\n#define MI_F8_FN static __device__ __forceinline__\n"
                    "MI_F8_FN uint32_t mi_f8_fbits(float f) { return __float_as_uint(f); }\n"
                    "MI_F8_FN float mi_f8_bitsf(uint32_t u) { return __uint_as_float(u); }\n");
    else
        sb_put(out, "#define MI_F8_FN static inline\n"
                    "MI_F8_FN uint32_t mi_f8_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
                    "MI_F8_FN float mi_f8_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n");
    sb_put(out, "/* float8 <-> float (core/codegen/codegen_f8.c) */\n");
    sb_put(out, f8_core);
    for (size_t i = 0; i < sizeof f8_types / sizeof f8_types[0]; i++) {
        const char *nm = dtype_abbrev(f8_types[i].dt);
        int e5 = f8_types[i].e5, fnuz = f8_types[i].fnuz;
        sb_printf(out, "MI_F8_FN float mi_from_%s(uint8_t b) { return mi_f8_dec(b, %d, %d); }\n", nm, e5, fnuz);
        if (cuda && !fnuz)
            sb_printf(out, "MI_F8_FN uint8_t mi_to_%s(float f) { return (uint8_t)__nv_cvt_float_to_fp8(f, __NV_SATFINITE, %s); }\n",
                      nm, e5 ? "__NV_E5M2" : "__NV_E4M3");
        else sb_printf(out, "MI_F8_FN uint8_t mi_to_%s(float f) { return mi_f8_enc(f, %d, %d); }\n", nm, e5, fnuz);
        sb_printf(out, "MI_F8_FN float mi_round_%s(float f) { return mi_from_%s(mi_to_%s(f)); }\n", nm, nm, nm);
    }
    sb_put(out, "\n");
}

bool cg_uses_f8(const Schedule *s) {
    for (int i = 0; i < s->ir->nbufs; i++) {
        const Buffer *b = s->ir->bufs[i];
        if (dtype_is_float8(b->layout.dtype)) return true;
        for (int k = 0; b->body && k < b->body->nops; k++)
            if (b->body->ops[k].kind == LOP_TO_DTYPE && dtype_is_float8(b->body->ops[k].dtype)) return true;
    }
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (cg_uses_f8(s->branches[i].s[k])) return true;
    return false;
}
