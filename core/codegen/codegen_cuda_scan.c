/* codegen_cuda_scan.c — the device code behind ir.Scan / ir.Sort nodes of a CUDA row kernel
 * (core/codegen/codegen_cuda_kernel.c emits the calls; the prelude holds this text when the
 * module has a scan). Inductor's Triton kernel runs tl.associative_scan / sort_with_index over
 * the row's RBLOCK; here one block owns a row:
 *   scan  the row in chunks of blockDim.x elements: a block-wide inclusive scan of the chunk
 *         (Hillis-Steele in shared memory: any blockDim, any associative combine, the left
 *         operand the earlier element), continued from the carry of the chunks before; so any
 *         length and dtype, and (value, index) pairs for cummax / cummin
 *   sort  the row (at most 512 elements, as ir.Sort.create allows) staged in shared memory,
 *         each element placed at its rank by (key, position): a stable sort, NaN last
 *         (descending: first), as torch.sort
 * The combine functions are Inductor's (lowering.py), as core/ir/ir_scan.c computes them. */
#include "codegen/codegen_cuda_kernel.h"

#include <stdbool.h>
#include <string.h>

static const char *scan_src =
    "/* ---- scans and sorts (ir.Scan / ir.Sort): one block per row (codegen_cuda_scan.c) ---- */\n"
    "template <class T> struct MiSP { T v; int64_t i; };\n"
    "struct MiScanAdd { template <class T> __device__ MiSP<T> operator()(MiSP<T> a, MiSP<T> b) const { return MiSP<T>{(T)(a.v + b.v), 0}; } };\n"
    "struct MiScanMul { template <class T> __device__ MiSP<T> operator()(MiSP<T> a, MiSP<T> b) const { return MiSP<T>{(T)(a.v * b.v), 0}; } };\n"
    "/* logcumsumexp's log_add_exp_helper: where((min != max) | ~isinf(min), log1p(exp(min - max)) + max, a) */\n"
    "struct MiScanLogAddExp {\n"
    "    template <class T> __device__ MiSP<T> operator()(MiSP<T> a, MiSP<T> b) const {\n"
    "        const bool nan = a.v != a.v || b.v != b.v;\n"
    "        const T mn = nan ? a.v + b.v : (a.v < b.v ? a.v : b.v), mx = nan ? a.v + b.v : (a.v > b.v ? a.v : b.v);\n"
    "        return MiSP<T>{(mn != mx || !isinf(mn)) ? (T)(log1p(exp(mn - mx)) + mx) : a.v, 0};\n    }\n};\n"
    "/* cummax / cummin: the argmax / argmin combine with ties to the later element (the larger index) */\n"
    "template <int MIN> struct MiScanArg {\n"
    "    template <class T> __device__ MiSP<T> operator()(MiSP<T> a, MiSP<T> b) const {\n"
    "        const bool an = a.v != a.v, bn = b.v != b.v;\n"
    "        const bool mask = (MIN ? a.v < b.v : a.v > b.v) || (an && !bn), equal = a.v == b.v || (an && bn);\n"
    "        return (mask || (equal && a.i > b.i)) ? a : b;\n    }\n};\n"
    "/* inclusive scan over the block's threads; sh holds blockDim.x values */\n"
    "template <class T, class Op> __device__ MiSP<T> mi_block_scan(MiSP<T> x, Op op, MiSP<T> *sh) {\n"
    "    const int t = threadIdx.x;\n"
    "    __syncthreads();\n    sh[t] = x;\n    __syncthreads();\n"
    "    for (int o = 1; o < (int)blockDim.x; o <<= 1) {\n"
    "        const MiSP<T> y = t >= o ? op(sh[t - o], x) : x;\n"
    "        __syncthreads();\n        sh[t] = y;\n        x = y;\n        __syncthreads();\n    }\n"
    "    return x;\n}\n"
    "/* one chunk of n elements (the first: no carry); carry becomes the chunk's last result */\n"
    "template <class T, class Op> __device__ MiSP<T> mi_scan_chunk(MiSP<T> x, Op op, MiSP<T> *sh, MiSP<T> &carry, bool first, int64_t n) {\n"
    "    x = mi_block_scan(x, op, sh);\n"
    "    if (!first) x = op(carry, x);\n"
    "    __syncthreads();\n    if ((int64_t)threadIdx.x == n - 1) sh[0] = x;\n    __syncthreads();\n"
    "    carry = sh[0];\n    return x;\n}\n"
    "template <class T> __device__ __forceinline__ int mi_sort_cmp(T a, T b, bool desc) {\n"
    "    const bool an = a != a, bn = b != b;\n"
    "    const int c = an && bn ? 0 : an ? 1 : bn ? -1 : a < b ? -1 : b < a ? 1 : 0;\n"
    "    return desc ? -c : c;\n}\n"
    "/* the row's n pairs (k, ix) into (ks, is) in sorted order: each element at its rank */\n"
    "template <class T> __device__ void mi_block_sort(const T *k, const int64_t *ix, T *ks, int64_t *is, int64_t n, bool desc) {\n"
    "    __syncthreads();\n"
    "    for (int64_t a = threadIdx.x; a < n; a += blockDim.x) {\n"
    "        const T ka = k[a];\n        int64_t rank = 0;\n"
    "        for (int64_t b = 0; b < n; b++) { const int c = mi_sort_cmp(k[b], ka, desc); rank += c < 0 || (c == 0 && b < a); }\n"
    "        ks[rank] = ka;\n        is[rank] = ix[a];\n    }\n"
    "    __syncthreads();\n}\n\n";

const char *cu_scan_prelude(void) { return scan_src; }

const LoopOp *cu_body_scan(const LoopBody *b) {
    for (int i = 0; b && i < b->nops; i++)
        if (b->ops[i].kind == LOP_SCAN) return &b->ops[i];
    return NULL;
}

bool cu_group_has_scan(const Schedule *s, const SchedGroup *g) {
    for (int i = 0; i < g->n; i++)
        if (cu_body_scan(s->nodes[g->nodes[i]].buf->body)) return true;
    return false;
}

bool cu_module_has_scan(const Schedule *s) {
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].buf->kind == BUF_COMPUTED && cu_body_scan(s->nodes[i].buf->body)) return true;
    return false;
}

const char *cu_scan_functor(IrScanOp op) {
    switch (op) {
    case SCAN_SUM: return "MiScanAdd";
    case SCAN_PROD: return "MiScanMul";
    case SCAN_LOGADDEXP: return "MiScanLogAddExp";
    case SCAN_MAX: return "MiScanArg<0>";
    case SCAN_MIN: return "MiScanArg<1>";
    default: return NULL;
    }
}
