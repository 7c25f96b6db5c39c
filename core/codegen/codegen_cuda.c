/* codegen_cuda.c — Schedule -> one CUDA C++ file (see codegen_cuda.h): the prelude (index
 * helpers, block/column reductions, welford, error and GPU probe), the extern kernels (cuBLAS
 * GEMMs, flash attention, convolution: codegen_cuda_extern.c), one __global__ kernel per fused group (core/codegen/codegen_cuda_kernel.c), and the
 * host wrapper: mi_launch (all kernels on device pointers, intermediates from the stream-ordered
 * pool), call() (copies in, runs, copies out) and mi_cuda_time (kernels alone, CUDA events). */
#include "codegen/codegen_cuda.h"
#include "codegen/codegen_cuda_kernel.h"
#include "codegen/codegen_cuda_extern.h"
#include "codegen/codegen_cuda_unbacked.h"
#include "codegen/codegen_kernel.h"
#include "codegen/codegen_fallback.h"
#include "codegen/codegen_f8.h"
#include "codegen/op_overrides.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool codegen_is_cuda_source(const char *src) {
    return src && strncmp(src, CODEGEN_CUDA_MARKER, strlen(CODEGEN_CUDA_MARKER)) == 0;
}

static void ex(StrBuf *sb, const Expr *e) { sym_c_sb(e, sb); }

static const char *prelude =
    "#include <cstdint>\n#include <cstdio>\n#include <cmath>\n#include <cstring>\n#include <cstdlib>\n"
    "#include <cuda_runtime.h>\n";
/* after the includes, and <cuda_fp16.h> / <cuda_bf16.h> when some buffer is f16 / bf16 */
static const char *prelude_defs =
    "\n"
    "#define MI_HD __host__ __device__ __forceinline__\n"
    "MI_HD int64_t mi_floordiv(int64_t a, int64_t b) { int64_t q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q--; return q; }\n"
    "MI_HD int64_t mi_mod(int64_t a, int64_t b) { int64_t r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
    "MI_HD int64_t mi_modidx(int64_t x, int64_t d, int64_t m) { return mi_mod(mi_floordiv(x, d), m); }\n"
    "MI_HD int64_t mi_ceildiv(int64_t a, int64_t b) { return -mi_floordiv(-a, b); }\n"
    "MI_HD int64_t mi_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "MI_HD int64_t mi_max(int64_t a, int64_t b) { return a > b ? a : b; }\n\n"
    "/* ---- block reductions: warp shuffles (__shfl_xor_sync), then one value per warp through shared memory ---- */\n"
    "template <class T> __device__ __forceinline__ T mi_max_nan(T a, T b) { return (b != b || b > a) ? b : a; }\n"
    /* ops.bucketize: ATen's cus_lower_bound / cus_upper_bound over b[off + i * st], i < len */
    "template <class T, class V> __device__ __forceinline__ int64_t mi_bucketize(const T *b, int64_t off, int64_t len, int64_t st, V v, bool right) {\n"
    "    int64_t lo = 0, hi = len;\n"
    "    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; V m = (V)b[off + mid * st]; if (right ? !(m > v) : !(m >= v)) lo = mid + 1; else hi = mid; }\n"
    "    return lo;\n}\n"
    "template <class T> __device__ __forceinline__ T mi_min_nan(T a, T b) { return (b != b || b < a) ? b : a; }\n"
    "struct MiSum { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };\n"
    "struct MiProd { template <class T> __device__ T operator()(T a, T b) const { return a * b; } };\n"
    "struct MiMax { template <class T> __device__ T operator()(T a, T b) const { return mi_max_nan(a, b); } };\n"
    "struct MiMin { template <class T> __device__ T operator()(T a, T b) const { return mi_min_nan(a, b); } };\n"
    "struct MiWelford { float mean, m2, n; };\n"
    "__device__ __forceinline__ void mi_welford_add(MiWelford &w, float x) { float d = x - w.mean; w.n += 1.0f; w.mean += d / w.n; w.m2 += d * (x - w.mean); }\n"
    "struct MiWelfordOp {\n"
    "    __device__ MiWelford operator()(MiWelford a, MiWelford b) const {\n"
    "        if (b.n == 0.0f) return a;\n        if (a.n == 0.0f) return b;\n"
    "        float n = a.n + b.n, d = b.mean - a.mean, f = b.n / n;\n"
    "        return MiWelford{a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f, n};\n    }\n};\n"
    "template <class T> struct MiArg { T v; int64_t i; };\n"
    "/* arg-extremum: the first NaN wins, then the extremum, ties to the smaller index */\n"
    "template <class T, int MAX> __device__ __forceinline__ MiArg<T> mi_arg_combine(MiArg<T> a, MiArg<T> b) {\n"
    "    bool an = a.v != a.v, bn = b.v != b.v;\n"
    "    if (an || bn) return (an && bn) ? (a.i <= b.i ? a : b) : (an ? a : b);\n"
    "    if (MAX ? a.v > b.v : a.v < b.v) return a;\n    if (MAX ? b.v > a.v : b.v < a.v) return b;\n"
    "    return a.i <= b.i ? a : b;\n}\n"
    "template <class T, int MAX> struct MiArgOp { __device__ MiArg<T> operator()(MiArg<T> a, MiArg<T> b) const { return mi_arg_combine<T, MAX>(a, b); } };\n"
    "__device__ __forceinline__ float mi_shfl(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }\n"
    "__device__ __forceinline__ double mi_shfl(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }\n"
    "__device__ __forceinline__ long mi_shfl(long v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }\n"
    "__device__ __forceinline__ long long mi_shfl(long long v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }\n"
    "template <class T> __device__ __forceinline__ T mi_shfl(T v, int o) { return (T)__shfl_xor_sync(0xffffffffu, (int)v, o); }\n"
    "__device__ __forceinline__ MiWelford mi_shfl(MiWelford v, int o) { return MiWelford{mi_shfl(v.mean, o), mi_shfl(v.m2, o), mi_shfl(v.n, o)}; }\n"
    "template <class T> __device__ __forceinline__ MiArg<T> mi_shfl(MiArg<T> v, int o) { return MiArg<T>{mi_shfl(v.v, o), mi_shfl(v.i, o)}; }\n"
    "/* blockDim.x is a power of two >= 32; every thread returns the block's result */\n"
    "template <class T, class Op> __device__ T mi_block_reduce(T v, Op op, double *shared) {\n"
    "    T *sh = reinterpret_cast<T *>(shared);\n"
    "    for (int o = 16; o > 0; o >>= 1) v = op(v, mi_shfl(v, o));\n"
    "    const int nw = blockDim.x >> 5;\n"
    "    if (nw == 1) return v;\n"
    "    const int lane = threadIdx.x & 31;\n"
    "    __syncthreads();\n"
    "    if (lane == 0) sh[threadIdx.x >> 5] = v;\n"
    "    __syncthreads();\n"
    "    v = sh[lane & (nw - 1)];\n"
    "    for (int o = nw >> 1; o > 0; o >>= 1) v = op(v, mi_shfl(v, o));\n"
    "    return v;\n}\n"
    "/* blockDim = (8, ny), ny a power of two >= 4: reduce over threadIdx.y, one result per threadIdx.x */\n"
    "template <class T, class Op> __device__ T mi_col_reduce(T v, Op op, double *shared) {\n"
    "    T *sh = reinterpret_cast<T *>(shared);\n"
    "    v = op(v, mi_shfl(v, 8));\n    v = op(v, mi_shfl(v, 16));\n"
    "    const int t = threadIdx.x + 8 * threadIdx.y, nw = (8 * blockDim.y) >> 5;\n"
    "    __syncthreads();\n"
    "    if ((t & 31) < 8) sh[(t >> 5) * 8 + (t & 7)] = v;\n"
    "    __syncthreads();\n"
    "    T r = sh[threadIdx.x];\n"
    "    for (int k = 1; k < nw; k++) r = op(r, sh[k * 8 + threadIdx.x]);\n"
    "    return r;\n}\n"
    "/* blockDim = (32, ny), ny <= 24: reduce over threadIdx.y; the result is in the threads of threadIdx.y == 0 */\n"
    "template <class T, class Op> __device__ T mi_col_reduce32(T v, Op op, double *shared) {\n"
    "    T *sh = reinterpret_cast<T *>(shared);\n"
    "    __syncthreads();\n"
    "    sh[threadIdx.y * 32 + threadIdx.x] = v;\n"
    "    __syncthreads();\n"
    "    if (threadIdx.y == 0)\n"
    "        for (int k = 1; k < (int)blockDim.y; k++) v = op(v, sh[k * 32 + threadIdx.x]);\n"
    "    return v;\n}\n"
    "\n"
    "static char mi_errbuf[512];\n"
    "extern \"C\" const char *mi_cuda_error(void) { return mi_errbuf; }\n"
    "static int mi_fail(cudaError_t e, const char *what) {\n"
    "    snprintf(mi_errbuf, sizeof mi_errbuf, \"%s: %s\", what, cudaGetErrorString(e));\n    return 1;\n}\n"
    "#define MI_CK(x) do { cudaError_t mi_e_ = (x); if (mi_e_ != cudaSuccess) return mi_fail(mi_e_, #x); } while (0)\n"
    "extern \"C\" int mi_cuda_probe(char *msg, int n) {\n"
    "    int count = 0;\n    cudaError_t e = cudaGetDeviceCount(&count);\n"
    "    if (e != cudaSuccess) { snprintf(msg, n, \"cudaGetDeviceCount: %s\", cudaGetErrorString(e)); return -1; }\n"
    "    if (count == 0) { snprintf(msg, n, \"cudaGetDeviceCount found 0 devices\"); return -1; }\n"
    "    return 0;\n}\n"
    "/* The workspace of a launch function: its intermediates in one device allocation that stays\n"
    "   between calls (*ws, *cap: the function's static pointer and size) and grows when a call needs\n"
    "   more (after the device is idle: kernels of an earlier call may still use the old one). What\n"
    "   Inductor gets from PyTorch's caching allocator; a stream-ordered cudaMallocAsync +\n"
    "   cudaFreeAsync pair per call cost reductions 2.2 us of 21 (cuda-lab-2026-11-26T1806.log).\n"
    "   Calls of one module are serialized (one stream, one host thread), as its __device__\n"
    "   split-reduction buffers already require. mi_cuda_release frees them all (the runtime calls\n"
    "   it before it unloads the module). */\n"
    "static void **mi_ws_reg[64];\nstatic size_t *mi_ws_capreg[64];\nstatic int mi_ws_nreg;\n"
    "static cudaError_t mi_workspace(void **ws, size_t *cap, size_t need) {\n"
    "    if (need <= *cap) return cudaSuccess;\n"
    "    if (*ws) { cudaError_t e = cudaDeviceSynchronize(); if (e != cudaSuccess) return e; cudaFree(*ws); *ws = NULL; *cap = 0; }\n"
    "    else if (mi_ws_nreg < 64) { mi_ws_reg[mi_ws_nreg] = ws; mi_ws_capreg[mi_ws_nreg++] = cap; }\n"
    "    cudaError_t e = cudaMalloc(ws, need);\n"
    "    if (e == cudaSuccess) *cap = need;\n"
    "    return e;\n}\n"
    "extern \"C\" void mi_cuda_release(void) {\n"
    "    for (int i = 0; i < mi_ws_nreg; i++) { if (*mi_ws_reg[i]) cudaFree(*mi_ws_reg[i]); *mi_ws_reg[i] = NULL; *mi_ws_capreg[i] = 0; }\n"
    "    mi_ws_nreg = 0;\n}\n"
    "static unsigned mi_blocks(int64_t want, int64_t cap) { if (want < 1) want = 1; return (unsigned)(want < cap ? want : cap); }\n"
    "/* Programmatic dependent launch (sm_90+): a kernel launched with mi_launch_pdl may start while\n"
    "   the kernel before it in the stream still runs. Every generated kernel lets its dependents\n"
    "   launch at its start (MI_GDC_LAUNCH) and, when so launched (MiSyms.pdl), waits for the kernel\n"
    "   before it (MI_PDL_WAIT: all of its blocks done, their writes visible) before it stores\n"
    "   anything or loads a buffer other than a graph input nobody writes. */\n"
    "#ifndef MI_GDC_LAUNCH   /* (bench/cuda/reduction_lab.cu defines them itself to measure without) */\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
    "#define MI_GDC_LAUNCH() asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\")\n"
    "#define MI_GDC_WAIT() asm volatile(\"griddepcontrol.wait;\" ::: \"memory\")\n"
    "#else\n#define MI_GDC_LAUNCH() do { } while (0)\n#define MI_GDC_WAIT() do { } while (0)\n#endif\n#endif\n"
    "template <class... P, class... A> static cudaError_t mi_launch_pdl(void (*k)(P...), dim3 grid, dim3 block, cudaStream_t st, A... a) {\n"
    "    cudaLaunchConfig_t cfg = {};\n    cfg.gridDim = grid; cfg.blockDim = block; cfg.dynamicSmemBytes = 0; cfg.stream = st;\n"
    "    cudaLaunchAttribute at[1];\n    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
    "    at[0].val.programmaticStreamSerializationAllowed = 1;\n    cfg.attrs = at; cfg.numAttrs = 1;\n"
    "    return cudaLaunchKernelEx(&cfg, k, a...);\n}\n"
    "/* PDL on this device: compute capability 9 or more, and MINDUCTOR_CUDA_PDL not \"0\" */\n"
    "static bool mi_pdl_on(void) {\n    int cc = 0;\n    const char *e = getenv(\"MINDUCTOR_CUDA_PDL\");\n"
    "    if (e && e[0] == '0') return false;\n"
    "    return cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && cc >= 9;\n}\n"
    "/* blocks of one sub-kernel of a combo kernel (host and device agree on the split) */\n"
    "__host__ __device__ static inline int64_t mi_combo_blocks(int64_t n) { int64_t b = (n / 4 + 255) / 256; return b < 1 ? 1 : b > 4096 ? 4096 : b; }\n"
    "/* threads per block for a row of `inner` elements: a power of two in [32, 1024], ~4 elements each */\n"
    "static unsigned mi_row_threads(int64_t inner) { unsigned t = 32; while (t < 1024 && (int64_t)t * 4 < inner) t *= 2; return t; }\n"
    "/* rows given a warp each or a block each (a row kernel generated both ways): on sms SMs that keep\n"
    "   w (warp kernel) or b (block kernel) rows each resident, the rows run in waves; the block kernel\n"
    "   when the last wave it leaves is fuller (waves / ceil(waves) larger), else the warp kernel. 4096\n"
    "   rows of 1024 on 132 SMs: warps of 80 registers 24 rows per SM, 1.29 waves (0.65); blocks of 128\n"
    "   threads 16, 1.94 waves (0.97): blocks. 8192 rows: 3.88 waves either way: warps. */\n"
    "static bool mi_rows_by_block(int64_t rows, int sms, int w, int b) {\n"
    "    if (rows < 1 || sms < 1 || b < 1) return false;\n    if (w < 1) return true;\n"
    "    const double ww = (double)rows / ((double)sms * w), wb = (double)rows / ((double)sms * b);\n"
    "    return wb / ceil(wb) > ww / ceil(ww);\n}\n\n";

static bool needs_alloc(const Buffer *b) {
    return (b->kind == BUF_COMPUTED && !b->mutates && b->output_index < 0) ||
           (b->kind == BUF_EXTERN && b->output_index < 0 && !b->layout.multi);
}

/* Bytes of a buffer's storage, as a C expression of the size symbols. */
static void emit_bytes(const IrModule *m, const Buffer *b, StrBuf *out) {
    sb_printf(out, "sizeof(%s) * (size_t)(", cu_type(b->layout.dtype));
    ex(out, layout_storage_size(m->ctx->sym, &b->layout));
    sb_put(out, ")");
}

bool codegen_cuda_on_host(const Buffer *b) {
    if (b->kind != BUF_EXTERN || b->ext == EXT_COND || b->ext == EXT_MULTI_OUTPUT || b->ext == EXT_CONCAT) return false;
    if (b->ext == EXT_FALLBACK) return true;
    if (b->extern_owner) return codegen_cuda_on_host(b->extern_owner);   /* a result item (lse, philox seed) */
    if (b->ext == EXT_CONV) return !cg_cuda_conv_on_gpu(b);
    if (b->ext != EXT_MM && b->ext != EXT_ADDMM && b->ext != EXT_BMM && b->ext != EXT_SDPA) return true;
    /* mm / addmm / bmm in f32, f64, f16, bf16 (operands of the output's dtype); attention in f32
     * (any mask: the lowering allows f32 or bool ones) */
    DType dt = b->layout.dtype;
    if (dt != DT_F32 && (b->ext == EXT_SDPA || (dt != DT_F64 && dt != DT_F16 && dt != DT_BF16))) return true;
    for (int i = 0; i < (b->ext == EXT_SDPA && b->neargs > 3 ? 3 : b->neargs); i++)   /* not the mask */
        if (b->eargs[i].buf->layout.dtype != dt) return true;
    return false;
}

/* Bytes of buffer x's storage as text: "48 KiB", or the element count expression. */
static void put_bytes(const IrModule *m, const Buffer *x, StrBuf *out) {
    Expr *n = layout_storage_size(m->ctx->sym, &x->layout);
    int64_t v;
    double by;
    if (!sym_is_int(n, &v)) { sb_put(out, "("); sym_str_sb(n, out); sb_printf(out, ")*%d bytes", (int)dtype_size(x->layout.dtype)); return; }
    by = (double)v * (double)dtype_size(x->layout.dtype);
    if (by < 1024) sb_printf(out, "%.0f bytes", by);
    else if (by < 1024 * 1024) sb_printf(out, "%.1f KiB", by / 1024);
    else sb_printf(out, "%.1f MiB", by / (1024 * 1024));
}

void codegen_cuda_host_note(const IrModule *m, const Buffer *b, StrBuf *out) {
    const Buffer *outs[64], *seen[128];
    int nouts = cg_fallback_outs(b, outs, 64), ns = 0;
    bool back = false;
    sb_put(out, "host round trip: to the host");
    for (int i = 0; i < b->neargs + nouts; i++) {
        const Buffer *x = i < b->neargs ? b->eargs[i].buf : outs[i - b->neargs];
        bool dup = !x;
        for (int k = 0; k < ns && !dup; k++) dup = seen[k] == x;
        if (dup || ns == 128) continue;
        if (i >= b->neargs && !back) { sb_put(out, "; back to the GPU"); back = true; }
        seen[ns++] = x;
        sb_printf(out, " %s (", x->name);
        put_bytes(m, x, out);
        sb_put(out, ")");
    }
}

/* An extern that runs on the host (codegen_cuda_on_host): wait for the GPU, copy the storage of
 * every argument buffer to host memory, run the graph node's C reference through the callback
 * table (core/codegen/codegen_fallback.h), copy the results back. What it costs is in the
 * comment and in `sched` (the bytes of each copy). */
static void emit_host_call(const Schedule *s, const Buffer *b, const int *ub_of, StrBuf *sb) {
    const IrModule *m = s->ir;
    const Buffer *outs[64], *bufs[128];
    int nouts = cg_fallback_outs(b, outs, 64), nb = 0, nin = 0;
    int arg_of[64], out_of[64];
    for (int i = 0; i < b->neargs + nouts && i < 128; i++) {
        const Buffer *x = i < b->neargs ? b->eargs[i].buf : outs[i - b->neargs];
        if (i >= b->neargs && x && ir_defines_unbacked_size(m, x)) { out_of[i - b->neargs] = -1; continue; }   /* sized by the call */
        int j = -1;
        for (int k = 0; x && k < nb; k++) if (bufs[k] == x) j = k;
        if (x && j < 0) { j = nb; bufs[nb++] = x; nin += i < b->neargs; }
        if (i < b->neargs) arg_of[i] = j; else out_of[i - b->neargs] = j;
    }
    char node[256];
    cg_fallback_node(b, node, sizeof node, m);
    sb_printf(sb, "    {   /* %s: node '%s' runs on the host (C reference): %d tensor%s copied to the host, %d back */\n",
              b->ext == EXT_FALLBACK ? "FallbackKernel" : "ExternKernel without a GPU kernel", node, nin, nin == 1 ? "" : "s", nb - nin);
    sb_put(sb, "        MI_CK(cudaStreamSynchronize(mi_st));\n        int mi_fr = 0;\n");
    for (int j = 0; j < nb; j++) {
        sb_printf(sb, "        const size_t mi_hb%d = ", j);
        emit_bytes(m, bufs[j], sb);
        sb_printf(sb, ";\n        char *mi_h%d = (char *)malloc(mi_hb%d + 16);\n        if (!mi_h%d) mi_fr = 1;\n", j, j, j);
    }
    for (int j = 0; j < nin; j++)
        sb_printf(sb, "        if (!mi_fr && mi_hb%d && cudaMemcpy(mi_h%d, %s, mi_hb%d, cudaMemcpyDeviceToHost) != cudaSuccess) mi_fr = 2;\n",
                  j, j, bufs[j]->name, j);
    char names[192][16];
    const char *ad[64], *od[64];
    for (int i = 0; i < b->neargs && i < 64; i++) { snprintf(names[i], 16, "mi_h%d", arg_of[i]); ad[i] = names[i]; }
    for (int k = 0; k < nouts && k < 64; k++) { snprintf(names[64 + k], 16, "mi_h%d", out_of[k]); od[k] = outs[k] && out_of[k] >= 0 ? names[64 + k] : NULL; }
    cg_emit_fallback_descs(sb, m, b, ad, od);
    sb_put(sb, "        if (!mi_fr && (");
    cg_emit_fallback_run(sb, m, b);
    sb_put(sb, ")) mi_fr = 3;\n");
    for (int j = nin; j < nb; j++)
        sb_printf(sb, "        if (!mi_fr && mi_hb%d && cudaMemcpy(%s, mi_h%d, mi_hb%d, cudaMemcpyHostToDevice) != cudaSuccess) mi_fr = 2;\n",
                  j, bufs[j]->name, j, j);
    for (int k = 0; k < nouts && k < 64; k++)   /* a result whose size the call decided */
        if (outs[k] && out_of[k] < 0) cu_unbacked_fresh_result(m, outs[k], k, ub_of[outs[k]->id], cu_type(outs[k]->layout.dtype), sb);
    for (int j = 0; j < nb; j++) sb_printf(sb, "        free(mi_h%d);\n", j);
    sb_printf(sb, "        if (mi_fr) {\n"
                  "            snprintf(mi_errbuf, sizeof mi_errbuf, \"node '%s' on the host: %%s\", mi_fr == 1 ? \"out of host memory\" :\n"
                  "                     mi_fr == 2 ? \"copy between GPU and host failed\" : fb ? \"the C reference failed\" : \"no callback table (call_fb)\");\n"
                  "            return MI_FALLBACK_FAILED;\n        }\n    }\n", node);
}

/* the extern sources (x) and has_fb over s and its cond branches; -1 + ctx error on what the backend lacks */
static int scan_externs(MiCtx *ctx, const Schedule *s, CuExterns *x, bool *has_fb, int *max_syms) {
    if (s->ir->nsyms > *max_syms) *max_syms = s->ir->nsyms;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        if (!g->is_extern) continue;
        const Buffer *b = s->nodes[g->nodes[0]].buf;
        if (b->ext == EXT_COND || b->ext == EXT_MULTI_OUTPUT) continue;
        if (b->ext == EXT_CONCAT) continue;   /* a NopKernelSchedulerNode: its inputs wrote its slices */
        if (codegen_cuda_on_host(b)) {
            char node[256];
            if (!cg_fallback_node(b, node, sizeof node, s->ir))
                return mi_err(ctx, NULL, 0, 0, "extern kernel '%s' has no GPU kernel and no graph node to run on the host", b->name);
            *has_fb = true;
        } else if (b->ext == EXT_SDPA) x->sdpa = true;
        else if (b->ext == EXT_CONV) x->conv = true;
        else x->mm = true;
    }
    for (int i = 0; i < s->ir->nbufs; i++)
        if (!cu_type(s->ir->bufs[i]->layout.dtype))
            return mi_err(ctx, NULL, 0, 0, "buffer '%s': dtype %s is not supported by the CUDA code generator", s->ir->bufs[i]->name, dtype_abbrev(s->ir->bufs[i]->layout.dtype));
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (scan_externs(ctx, s->branches[i].s[k], x, has_fb, max_syms) < 0) return -1;
    return 0;
}

/* Has s or one of its cond branches a buffer of dtype t? */
static bool uses_dtype(const Schedule *s, DType t) {
    for (int i = 0; i < s->ir->nbufs; i++)
        if (s->ir->bufs[i]->layout.dtype == t) return true;
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (uses_dtype(s->branches[i].s[k], t)) return true;
    return false;
}

static int emit_launch_fn(MiCtx *ctx, const Schedule *s, const char *fname, bool fb, StrBuf *out);

/* The kernels of every cond branch (recursively), then the kernels of s itself: all defined
 * before any launch function (emit_branch_launchers), since a kernel linked to another
 * schedule's (codegen_reuse: same_sched) launches a definition emitted for that one. */
static int emit_kernels(MiCtx *ctx, const Schedule *s, StrBuf *out) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++)
            if (emit_kernels(ctx, s->branches[i].s[k], out) < 0) return -1;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        const SchedKernel *kn = &s->kernels[sched_kernel_of_pos(s, k)];
        if (kn->combo) {   /* a foreach node's sub-kernels: one kernel, emitted at its first group */
            if (kn->first == k && cu_emit_combo(ctx, s, kn, out) < 0) return -1;
            continue;
        }
        if (g->is_extern || kn->same_as >= 0) continue;   /* linked to an identical source: defined once */
        if (cu_emit_kernel(ctx, s, g, out) < 0) return -1;
    }
    return 0;
}

/* Each cond branch's launch function (recursively, nested branches first). */
static int emit_branch_launchers(MiCtx *ctx, const Schedule *s, bool fb, StrBuf *out) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            const Schedule *bs = s->branches[i].s[k];
            if (emit_branch_launchers(ctx, bs, fb, out) < 0) return -1;
            sb_printf(out, "/* subgraph %s */\n", s->branches[i].cond->cond->names[k]);
            if (emit_launch_fn(ctx, bs, s->branches[i].fn[k], fb, out) < 0) return -1;
        }
    return 0;
}

/* torch.ops.higher_order.cond: the predicate is read back to the host (one element, the stream
 * synchronized), then one branch's launch function runs on the operands' device pointers. */
typedef struct CondHow { const char *pred_type; bool fb; } CondHow;
static void cond_tail(void *arg, const char *pred, const char *index, const char *f0, const char *f1, StrBuf *out) {
    const CondHow *h = arg;
    const char *fb = h->fb ? ", fb" : "";
    sb_printf(out, "        %s mi_pred;\n        MI_CK(cudaMemcpyAsync(&mi_pred, %s + %s, sizeof mi_pred, cudaMemcpyDeviceToHost, mi_st));\n"
                   "        MI_CK(cudaStreamSynchronize(mi_st));\n"
                   "        int mi_brc = mi_pred ? %s(cin, cout, csyms0, mi_st%s) : %s(cin, cout, csyms1, mi_st%s);\n        if (mi_brc) return mi_brc;\n    }\n",
              h->pred_type, pred, index, f0, fb, f1, fb);
}

/* `static int NAME(d_in, d_out, syms, stream[, fb])`: every kernel of s in order on device
 * pointers, intermediates in the function's workspace (mi_workspace); with host round trips (fb) the callback
 * table too. */
static int emit_launch_fn(MiCtx *ctx, const Schedule *s, const char *fname, bool fb, StrBuf *outp) {
    const IrModule *m = s->ir;
    StrBuf out;
    sb_init(&out);
    sb_printf(&out, "static int %s(void *const *d_in, void *const *d_out, const int64_t *syms, cudaStream_t mi_st%s)\n{\n"
                    "    MiSyms mi_sy;\n    memset(&mi_sy, 0, sizeof mi_sy);\n    (void)d_in; (void)d_out; (void)syms;%s\n", fname,
              fb ? ", const MiFb *fb" : "", fb ? " (void)fb;" : "");
    for (int i = 0; i < m->nsyms; i++)
        if (ir_unbacked_find(m, m->sym_names[i]))   /* defined inside (codegen_cuda_unbacked.c) */
            sb_printf(&out, "    int64_t %s = 0; (void)%s;\n", m->sym_names[i], m->sym_names[i]);
        else sb_printf(&out, "    const int64_t %s = syms[%d]; mi_sy.v[%d] = %s; (void)%s;\n", m->sym_names[i], i, i, m->sym_names[i], m->sym_names[i]);
    int nub = 0, *ub_of = cu_unbacked_slots(m, &nub);
    if (nub) sb_printf(&out, "    void *mi_ub[%d] = {0};\n", nub);
    sb_put(&out, "    int mi_sms = 0;\n    MI_CK(cudaDeviceGetAttribute(&mi_sms, cudaDevAttrMultiProcessorCount, 0));\n"
                 "    const bool mi_pdl = mi_pdl_on(); (void)mi_pdl;\n");
    for (int i = 0; i < m->ninputs; i++) {
        const Buffer *b = m->inputs[i];
        const char *ct = cu_type(b->layout.dtype);
        sb_printf(&out, "    %s *%s = (%s *)d_in[%d]; (void)%s;\n", ct, b->name, ct, i, b->name);
    }
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->output_index >= 0 && b->kind != BUF_INPUT) {
            const char *ct = cu_type(b->layout.dtype);
            sb_printf(&out, "    %s *%s = (%s *)d_out[%d];\n", ct, b->name, ct, b->output_index);
        }
    }
    /* every intermediate lives in the function's workspace (mi_workspace), set up before the
     * first launch: an allocation between two kernels puts a gap between them (bench/cuda/
     * reduction_lab.cu) and keeps the second from starting early (PDL); each at a 256-byte
     * offset (as cudaMalloc aligns). The sizes first, then the pointers in the order of their
     * first writer (a reused buffer names the one it reuses). */
    bool *allocated = mi_xcalloc(m->nbufs + 1, 1), *own = mi_xcalloc(m->nbufs + 1, 1), *unstored = mi_xcalloc(m->nbufs + 1, 1);
    StrBuf decls;
    sb_init(&decls);
    int nown = 0;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        for (int i = 0; i < m->nbufs; i++) {
            const Buffer *b = m->bufs[i];
            if (!needs_alloc(b) || allocated[i] || !cg_group_writes(s, g, b)) continue;
            allocated[i] = true;
            const char *ct = cu_type(b->layout.dtype);
            if (cu_buffer_unstored(s, b)) {   /* kept in registers by its kernel: no memory */
                unstored[i] = true;
                sb_printf(&decls, "    %s *%s = NULL;   /* only in registers of its kernel, never stored */\n", ct, b->name);
            } else if (ub_of[i] >= 0) {   /* sized by an unbacked symbol: allocated at its first writer */
                sb_printf(&decls, "    %s *%s = NULL;\n", ct, b->name);
            } else if (s->reuse_of[i] >= 0 && !unstored[s->reuse_of[i]] && ub_of[s->reuse_of[i]] < 0) {
                const Buffer *r = m->bufs[s->reuse_of[i]];
                sb_printf(&decls, "    %s *%s = (%s *)%s;   /* %s %s */\n", ct, b->name, ct, r->name,
                          s->inplace_of[i] == r->id ? "written in place of" : r->output_index >= 0 ? "in the storage of output" : "reuses the freed", r->name);
            } else {
                own[i] = true;
                if (nown++ == 0) sb_put(&out, "    size_t mi_ws_need = 0;\n");
                sb_printf(&out, "    const size_t mi_o_%s = mi_ws_need; mi_ws_need += (", b->name);
                emit_bytes(m, b, &out);
                sb_put(&out, " + 16 + 255) & ~(size_t)255;\n");
                sb_printf(&decls, "    %s *%s = (%s *)((char *)mi_ws + mi_o_%s);\n", ct, b->name, ct, b->name);
            }
        }
    }
    if (nown)
        sb_put(&out, "    static void *mi_ws = NULL;\n    static size_t mi_ws_cap = 0;\n"
                     "    MI_CK(mi_workspace(&mi_ws, &mi_ws_cap, mi_ws_need));\n");
    if (decls.s) sb_put(&out, decls.s);
    sb_free(&decls);
    for (int i = 0; i < m->ninputs; i++)   /* item() of a graph input: on entry */
        cu_unbacked_item_defs(m, m->inputs[i], cu_type(m->inputs[i]->layout.dtype), &out);
    bool *item_done = mi_xcalloc(m->nbufs + 1, 1), *late_done = mi_xcalloc(m->nbufs + 1, 1);
    /* the launches; a generated kernel right after another one may start early (PDL) */
    bool after_kernel = false;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        const Buffer *eb = g->is_extern ? s->nodes[g->nodes[0]].buf : NULL;
        if (m->nunbacked && k > 0) {   /* item() of what the launches before wrote */
            const SchedKernel *pk = &s->kernels[sched_kernel_of_pos(s, k - 1)];
            if (!pk->combo || k - 1 == pk->first + pk->n - 1)
                for (int i = 0; i < m->nunbacked; i++) {
                    const Buffer *ib = m->unbacked[i].buf;
                    if (m->unbacked[i].dim >= 0 || ib->kind == BUF_INPUT || item_done[ib->id]) continue;
                    for (int q = 0; q < k && !item_done[ib->id]; q++)
                        if (cg_group_writes(s, &s->groups[s->order[q]], ib)) {
                            item_done[ib->id] = true;
                            cu_unbacked_item_defs(m, ib, cu_type(ib->layout.dtype), &out);
                            after_kernel = false;   /* a copy and a sync between: no early start (PDL) */
                        }
                }
        }
        for (int i = 0; nub && i < m->nbufs; i++) {   /* storage sized by an unbacked symbol, known by now */
            const Buffer *b = m->bufs[i];
            if (ub_of[i] < 0 || late_done[i] || !cg_group_writes(s, g, b)) continue;
            late_done[i] = true;
            if (ir_defines_unbacked_size(m, b)) continue;   /* a call's result: its storage comes with it */
            if (!unstored[i]) { cu_unbacked_alloc(m, b, ub_of[i], cu_type(b->layout.dtype), &out); after_kernel = false; }
        }
        if (eb && eb->ext == EXT_MULTI_OUTPUT) cg_emit_multi_output(eb, &out);
        else if (eb && eb->ext == EXT_CONCAT) cg_emit_concat(eb, &out);
        else if (eb && eb->ext == EXT_COND && eb->cond->is_while) {
            CgWhileHow how = {true, fb, ""};
            if (cg_emit_while_call(ctx, s, eb, &how, &out) < 0) { free(allocated); free(own); free(unstored); free(item_done); free(late_done); free(ub_of); sb_free(&out); return -1; }
        } else if (eb && eb->ext == EXT_COND) {
            CondHow how = {cu_type(eb->eargs[0].buf->layout.dtype), fb};
            if (cg_emit_cond_call(ctx, s, eb, cond_tail, &how, &out) < 0) { free(allocated); free(own); free(unstored); free(item_done); free(late_done); free(ub_of); sb_free(&out); return -1; }
        } else if (eb && codegen_cuda_on_host(eb)) emit_host_call(s, eb, ub_of, &out);
        else if (eb) cg_cuda_emit_extern(eb, &out);
        else if (s->kernels[sched_kernel_of_pos(s, k)].combo) {   /* launched at its last group */
            const SchedKernel *kn = &s->kernels[sched_kernel_of_pos(s, k)];
            if (k == kn->first + kn->n - 1) cu_emit_combo_launch(s, kn, &out);
            after_kernel = true;
            continue;
        } else {
            cu_emit_launch(s, g, after_kernel, &out);
            after_kernel = true;
            continue;
        }
        after_kernel = false;
    }
    sb_put(&out, "    MI_CK(cudaGetLastError());\n");
    cu_unbacked_free(nub, &out);
    sb_put(&out, "    (void)mi_sms;\n    return 0;\n}\n\n");
    free(allocated); free(own); free(unstored); free(item_done); free(late_done); free(ub_of);
    sb_put(outp, out.s);
    sb_free(&out);
    return 0;
}

static const char *stage_src, *call_src, *time_src;

/* Append text with every occurrence of a1 replaced by b1 and of a2 by b2. */
static void put_subst(StrBuf *out, const char *text, const char *a1, const char *b1, const char *a2, const char *b2) {
    while (*text) {
        const char *p1 = strstr(text, a1), *p2 = strstr(text, a2);
        const char *p = p1 && (!p2 || p1 < p2) ? p1 : p2;
        if (!p) { sb_put(out, text); return; }
        sb_putn(out, text, (size_t)(p - text));
        sb_put(out, p == p1 ? b1 : b2);
        text = p + strlen(p == p1 ? a1 : a2);
    }
}

char *codegen_cuda(MiCtx *ctx, const Schedule *s) {
    const IrModule *m = s->ir;
    /* unbacked symbols: defined inside mi_launch (codegen_cuda_unbacked.c), but not yet for an
     * output the host staging (mi_sizes) would have to size before the first launch */
    if (cu_unbacked_check(ctx, s) < 0) return NULL;
    StrBuf out;
    sb_init(&out);
    sb_put(&out, CODEGEN_CUDA_MARKER ": one __global__ kernel per fused group, then call() */\n");
    sb_put(&out, prelude);
    CuExterns xs = {0};
    bool has_fb = false;
    int nsyms = 1;
    if (scan_externs(ctx, s, &xs, &has_fb, &nsyms) < 0) { sb_free(&out); return NULL; }
    if (uses_dtype(s, DT_F16)) sb_put(&out, "#include <cuda_fp16.h>\n");
    if (uses_dtype(s, DT_BF16)) sb_put(&out, "#include <cuda_bf16.h>\n");
    sb_put(&out, prelude_defs);
    if (cg_uses_f8(s)) cg_f8_src(&out, true);
    if (cu_module_has_scan(s)) sb_put(&out, cu_scan_prelude());
    if (ir_module_uses_math(m, IOP_RAND) || ir_module_uses_math(m, IOP_RANDN) || ir_module_uses_math(m, IOP_RANDINT64)) cg_rand_src(&out, true);
    if (has_fb) sb_put(&out, cg_fallback_abi);
    if (cg_has_while(s)) sb_put(&out, cg_while_src);
    /* pdl: 0 for an ordinary launch; for a programmatic dependent one, where the kernel waits:
     * 1 before its first store, 2 at its start (it loads early what a kernel before writes) */
    sb_printf(&out, "struct MiSyms { int64_t v[%d]; int pdl; };\nstruct MiStrides4 { int64_t s[4]; };\n"
                    "/* (PDL) wait for the kernel before when (sy).pdl has a bit of `when` (1: the kernel's first\n"
                    "   store, 2: its start): one thread waits, then the block (griddepcontrol.wait makes that\n"
                    "   kernel's writes visible to the whole grid). Each waiting warp costs time\n"
                    "   (bench/cuda/reduction_lab.cu: 2.5 us over the 16384 warps of a 4096-row kernel), so one\n"
                    "   warp per block, and none in an ordinary launch. Where it waits is decided at the launch\n"
                    "   (MiSyms.pdl), so kernels of the same text stay one definition. */\n"
                    "#define MI_PDL_WAIT(sy, when) do { if ((sy).pdl & (when)) { if (threadIdx.x + threadIdx.y + threadIdx.z == 0) MI_GDC_WAIT(); __syncthreads(); } } while (0)\n"
                    "/* the same for a warp that owns its row (one lane waits, then the warp) */\n"
                    "#define MI_PDL_WAIT_WARP(sy, when) do { if ((sy).pdl & (when)) { if (threadIdx.x == 0) MI_GDC_WAIT(); __syncwarp(); } } while (0)\n\n", nsyms);
    cg_cuda_extern_sources(&xs, &out);
    if (emit_kernels(ctx, s, &out) < 0 || emit_branch_launchers(ctx, s, has_fb, &out) < 0) { sb_free(&out); return NULL; }
    /* ABI symbols */
    sb_put(&out, "extern \"C\" const char *mi_sym_names[] = {");
    for (int i = 0; i < m->nsyms; i++) sb_printf(&out, "\"%s\", ", m->sym_names[i]);
    sb_put(&out, "NULL};\n");
    sb_printf(&out, "extern \"C\" const int mi_num_outputs = %d;\n", m->noutputs);
    cg_emit_output_alias(m, "extern \"C\" ", &out);
    sb_put(&out, "/* all kernels in order, on device pointers */\n");
    if (emit_launch_fn(ctx, s, "mi_launch", has_fb, &out) < 0) { sb_free(&out); return NULL; }

    /* host-side staging: storage bytes of each input and output */
    sb_put(&out, "static void mi_sizes(const int64_t *syms, size_t *in_bytes, size_t *out_bytes)\n{\n");
    for (int i = 0; i < m->nsyms; i++) sb_printf(&out, "    const int64_t %s = syms[%d]; (void)%s;\n", m->sym_names[i], i, m->sym_names[i]);
    sb_put(&out, "    (void)syms; (void)in_bytes; (void)out_bytes;\n");
    for (int i = 0; i < m->ninputs; i++) {
        sb_printf(&out, "    in_bytes[%d] = ", i);
        emit_bytes(m, m->inputs[i], &out);
        sb_put(&out, ";\n");
    }
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->output_index >= 0 && b->kind != BUF_INPUT) {
            sb_printf(&out, "    out_bytes[%d] = ", b->output_index);
            emit_bytes(m, b, &out);
            sb_put(&out, ";\n");
        }
    }
    sb_put(&out, "}\n");
    sb_printf(&out, "static const int mi_num_inputs = %d;\n", m->ninputs);
    sb_put(&out, "static const bool mi_input_mutated[] = {");
    for (int i = 0; i < m->ninputs; i++) sb_printf(&out, "%s, ", m->inputs[i]->mutated ? "true" : "false");
    sb_put(&out, "false};\n\n");
    sb_put(&out, stage_src);
    if (has_fb) {   /* call_fb passes minductor's callback table on; call() has none */
        put_subst(&out, call_src, "int call(void *const *inputs, void *const *outputs, const int64_t *syms)",
                  "int call_fb(void *const *inputs, void *const *outputs, const int64_t *syms, const MiFb *fb)", "syms, 0)", "syms, 0, fb)");
        sb_put(&out, "extern \"C\" int call(void *const *inputs, void *const *outputs, const int64_t *syms)\n{\n"
                     "    return call_fb(inputs, outputs, syms, NULL);\n}\n\n");
        put_subst(&out, time_src, "/* device-only timing:", "/* device-only timing (no host round trip can run: no callback table):",
                  "syms, 0)", "syms, 0, NULL)");
    } else {
        sb_put(&out, call_src);
        sb_put(&out, time_src);
    }
    return sb_take(&out);
}

/* The host side of every module: staging inputs and outputs between host and GPU ... */
static const char *stage_src =
        "/* copy inputs to the GPU, allocate outputs there */\n"
        "struct MiStage { void *d_in[64 + 1]; void *d_out[64 + 1]; size_t in_bytes[64 + 1], out_bytes[64 + 1]; };\n"
        "static int mi_stage_in(MiStage *g, void *const *inputs, const int64_t *syms)\n{\n"
        "    memset(g, 0, sizeof *g);\n"
        "    if (mi_num_inputs > 64 || mi_num_outputs > 64) { snprintf(mi_errbuf, sizeof mi_errbuf, \"too many inputs/outputs\"); return 1; }\n"
        "    mi_sizes(syms, g->in_bytes, g->out_bytes);\n"
        "    cudaMemPool_t pool;   /* keep freed intermediates in the pool (no unmap at every sync) */\n"
        "    if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) {\n"
        "        uint64_t keep = UINT64_MAX;\n"
        "        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);\n"
        "    }\n"
        "    for (int i = 0; i < mi_num_inputs; i++) {\n"
        "        MI_CK(cudaMalloc(&g->d_in[i], g->in_bytes[i] + 16));\n"
        "        if (g->in_bytes[i]) MI_CK(cudaMemcpy(g->d_in[i], inputs[i], g->in_bytes[i], cudaMemcpyHostToDevice));\n"
        "    }\n"
        "    for (int j = 0; j < mi_num_outputs; j++)\n"
        "        if (g->out_bytes[j]) MI_CK(cudaMalloc(&g->d_out[j], g->out_bytes[j] + 16));\n"
        "    return 0;\n}\n"
        "static int mi_stage_out(MiStage *g, void *const *inputs, void *const *outputs)\n{\n"
        "    int rc = 0;\n"
        "    for (int j = 0; j < mi_num_outputs; j++)\n"
        "        if (g->d_out[j] && outputs[j] && cudaMemcpy(outputs[j], g->d_out[j], g->out_bytes[j], cudaMemcpyDeviceToHost) != cudaSuccess) rc = 1;\n"
        "    for (int i = 0; i < mi_num_inputs; i++)\n"
        "        if (mi_input_mutated[i] && g->in_bytes[i] && cudaMemcpy(inputs[i], g->d_in[i], g->in_bytes[i], cudaMemcpyDeviceToHost) != cudaSuccess) rc = 1;\n"
        "    return rc;\n}\n"
        "static void mi_stage_free(MiStage *g)\n{\n"
        "    for (int i = 0; i < 64; i++) { if (g->d_in[i]) cudaFree(g->d_in[i]); if (g->d_out[i]) cudaFree(g->d_out[i]); }\n}\n\n";
/* ... call(): copies in, runs, copies out ... */
static const char *call_src =
        "extern \"C\" int call(void *const *inputs, void *const *outputs, const int64_t *syms)\n{\n"
        "    char msg[256];\n"
        "    if (mi_cuda_probe(msg, sizeof msg) != 0) { snprintf(mi_errbuf, sizeof mi_errbuf, \"no CUDA GPU available (%s)\", msg); return 1; }\n"
        "    MiStage g;\n"
        "    int rc = mi_stage_in(&g, inputs, syms);\n"
        "    if (rc == 0) rc = mi_launch(g.d_in, g.d_out, syms, 0);\n"
        "    if (rc == 0) { cudaError_t e = cudaDeviceSynchronize(); if (e != cudaSuccess) rc = mi_fail(e, \"kernels\"); }\n"
        "    if (rc == 0) rc = mi_stage_out(&g, inputs, outputs);\n"
        "    mi_stage_free(&g);\n"
        "    return rc;\n}\n\n";
/* ... and mi_cuda_time(): the kernels alone */
static const char *time_src =
        "/* device-only timing: inputs copied once; ms[r] = CUDA-event time of run r (after `warmup` runs);\n"
        "   before each run a 256 MB memset evicts L2 (as triton.testing.do_bench does) */\n"
        "extern \"C\" int mi_cuda_time(void *const *inputs, void *const *outputs, const int64_t *syms, int warmup, int reps, double *ms)\n{\n"
        "    MiStage g;\n"
        "    int rc = mi_stage_in(&g, inputs, syms);\n"
        "    cudaEvent_t a = NULL, b = NULL;\n"
        "    if (rc == 0 && (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)) rc = 1;\n"
        "    void *flush = NULL;\n"
        "    const size_t flush_bytes = (size_t)256 << 20;\n"
        "    if (rc == 0 && cudaMalloc(&flush, flush_bytes) != cudaSuccess) rc = 1;\n"
        "    for (int i = 0; i < warmup && rc == 0; i++) rc = mi_launch(g.d_in, g.d_out, syms, 0);\n"
        "    for (int r = 0; r < reps && rc == 0; r++) {\n"
        "        cudaMemsetAsync(flush, 0, flush_bytes, 0);\n"
        "        cudaEventRecord(a, 0);\n"
        "        rc = mi_launch(g.d_in, g.d_out, syms, 0);\n"
        "        cudaEventRecord(b, 0);\n"
        "        cudaEventSynchronize(b);\n"
        "        float t = 0;\n"
        "        cudaEventElapsedTime(&t, a, b);\n"
        "        ms[r] = t;\n"
        "    }\n"
        "    if (rc == 0) { cudaError_t e = cudaDeviceSynchronize(); if (e != cudaSuccess) rc = mi_fail(e, \"kernels\"); }\n"
        "    if (rc == 0) rc = mi_stage_out(&g, inputs, outputs);\n"
        "    if (a) cudaEventDestroy(a);\n    if (b) cudaEventDestroy(b);\n    if (flush) cudaFree(flush);\n"
        "    mi_stage_free(&g);\n"
        "    return rc;\n}\n";
