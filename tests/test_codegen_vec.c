/* test_codegen_vec.c — the C the code generator emits inside `#pragma omp simd` loops is the C
 * GCC vectorizes (core/codegen/codegen_kernel.c): bool elements read and written through their
 * byte, a float -> integer cast as truncf then the cast; and the runtime's -fno-tree-sink keeps a
 * select between x and a call (softplus) vectorizable; a costly value of the innermost var alone
 * (a channels-last batch norm's 1 / sqrt(var + eps)), or of it and one outer var (RoPE's cos / sin
 * of position and frequency), is computed once per call into an array
 * (codegen_hoist.c); a copy to channels last runs its width as the simd loop, its 3 channels
 * inside (codegen_tile.c); f16 loads and stores convert without branches (codegen_c.c half_src);
 * an indirect index's bounds check in a simd loop is a min reduction (c_indirect); a
 * channels-last mean vectorizes along the channels with its division (column mode); make bench's
 * pointwise_chain is one row-contiguous simd loop, the same C with fusion off.
 * Each graph is compiled and checked
 * against the interpreter (random inputs, and a NaN where the ops have a NaN path); with GCC 12 on
 * x86-64 (the compiler these constructs were measured with) the module is built again with
 * -fopt-info-vec-optimized added to the runtime's flags and every simd loop of its kernels must
 * be reported vectorized. */
#include "tap.h"
#include "tests/support/codegen_check.h"
#include "fx/graph.h"
#include "ops/interp.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define compile_check cg_check   /* one TAP point: agrees with the interpreter (nan_at >= 0: a NaN in input 0) */

/* relu and its mask (a bool store beside a float store: the backward's `le`), where() on a
 * bool input (a bool load), maximum */
static const char *bools =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[33, 70][70, 1]cpu\", arg1_1: \"f32[33, 70][70, 1]cpu\", arg2_1: \"b8[33, 70][70, 1]cpu\"):\n"
    "        relu: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.relu.default(arg0_1)\n"
    "        le: \"b8[33, 70][70, 1]cpu\" = torch.ops.aten.le.Scalar(relu, 0)\n"
    "        where: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.where.self(arg2_1, arg1_1, relu)\n"
    "        maximum: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.maximum.default(where, arg1_1)\n"
    "        return (relu, le, maximum)\n";

/* int8 quantization: round(x * s), clamped to [-128, 127], cast to int8 and back */
static const char *quantize =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[33, 70][70, 1]cpu\"):\n"
    "        mul: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, 40)\n"
    "        round_1: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.round.default(mul)\n"
    "        clamp: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.clamp.default(round_1, -128, 127)\n"
    "        to_i8: \"i8[33, 70][70, 1]cpu\" = torch.ops.prims.convert_element_type.default(clamp, torch.int8)\n"
    "        to_f: \"f32[33, 70][70, 1]cpu\" = torch.ops.prims.convert_element_type.default(to_i8, torch.float32)\n"
    "        return (to_f, to_i8)\n";

/* softplus: where(x > 20, x, log1p(exp(x))): GCC's sinking pass moved the calls into the select's
 * arm until the runtime passed -fno-tree-sink */
static const char *softplus =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[33, 70][70, 1]cpu\"):\n"
    "        softplus: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.softplus.default(arg0_1)\n"
    "        return (softplus,)\n";

/* a batch norm over the last dim (channels last): 1 / sqrt(var + eps) depends on the channel
 * alone; mean and weight are loaded per channel */
static const char *bn_last =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[16][1]cpu\", arg1_1: \"f32[40, 16][16, 1]cpu\", arg2_1: \"f32[16][1]cpu\", arg3_1: \"f32[16][1]cpu\"):\n"
    "        sub: \"f32[40, 16][16, 1]cpu\" = torch.ops.aten.sub.Tensor(arg1_1, arg2_1)\n"
    "        add: \"f32[16][1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, 1e-05)\n"
    "        sqrt: \"f32[16][1]cpu\" = torch.ops.aten.sqrt.default(add)\n"
    "        reciprocal: \"f32[16][1]cpu\" = torch.ops.aten.reciprocal.default(sqrt)\n"
    "        mul: \"f32[40, 16][16, 1]cpu\" = torch.ops.aten.mul.Tensor(sub, reciprocal)\n"
    "        mul_1: \"f32[40, 16][16, 1]cpu\" = torch.ops.aten.mul.Tensor(mul, arg3_1)\n"
    "        add_1: \"f32[40, 16][16, 1]cpu\" = torch.ops.aten.add.Tensor(mul_1, arg2_1)\n"
    "        relu: \"f32[40, 16][16, 1]cpu\" = torch.ops.aten.relu.default(add_1)\n"
    "        return (relu,)\n";

/* rotary embedding as llama's graph computes it: cos / sin of position p1 times the frequency of
 * p3, applied to q in a (batch, position, head, 16) nest: the angle depends on (p1, p3) alone */
static const char *rope =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 64, 4, 16][4096, 64, 16, 1]cpu\"):\n"
    "        iota: \"i64[64][1]cpu\" = torch.ops.prims.iota.default(64, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        convert_element_type: \"f32[64][1]cpu\" = torch.ops.prims.convert_element_type.default(iota, torch.float32)\n"
    "        iota_1: \"i64[16][1]cpu\" = torch.ops.prims.iota.default(16, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)\n"
    "        convert_element_type_1: \"f32[16][1]cpu\" = torch.ops.prims.convert_element_type.default(iota_1, torch.float32)\n"
    "        div: \"f32[16][1]cpu\" = torch.ops.aten.div.Tensor(convert_element_type_1, 16)\n"
    "        pow_1: \"f32[16][1]cpu\" = torch.ops.aten.pow.Scalar(10000.0, div)\n"
    "        reciprocal: \"f32[16][1]cpu\" = torch.ops.aten.reciprocal.default(pow_1)\n"
    "        unsqueeze: \"f32[64, 1][1, 1]cpu\" = torch.ops.aten.unsqueeze.default(convert_element_type, 1)\n"
    "        mul: \"f32[64, 16][16, 1]cpu\" = torch.ops.aten.mul.Tensor(unsqueeze, reciprocal)\n"
    "        cos: \"f32[64, 16][16, 1]cpu\" = torch.ops.aten.cos.default(mul)\n"
    "        sin: \"f32[64, 16][16, 1]cpu\" = torch.ops.aten.sin.default(mul)\n"
    "        unsqueeze_1: \"f32[64, 1, 16][16, 16, 1]cpu\" = torch.ops.aten.unsqueeze.default(cos, 1)\n"
    "        unsqueeze_2: \"f32[64, 1, 16][16, 16, 1]cpu\" = torch.ops.aten.unsqueeze.default(sin, 1)\n"
    "        mul_1: \"f32[4, 64, 4, 16][4096, 64, 16, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, unsqueeze_1)\n"
    "        mul_2: \"f32[4, 64, 4, 16][4096, 64, 16, 1]cpu\" = torch.ops.aten.mul.Tensor(arg0_1, unsqueeze_2)\n"
    "        add: \"f32[4, 64, 4, 16][4096, 64, 16, 1]cpu\" = torch.ops.aten.add.Tensor(mul_1, mul_2)\n"
    "        return (add,)\n";

/* NCHW -> NHWC of a 3-channel image: the channel loop (3) is innermost, its load strided */
static const char *to_channels_last =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[8, 3, 16, 32][1536, 512, 32, 1]cpu\"):\n"
    "        permute: \"f32[8, 16, 32, 3][1536, 32, 1, 512]cpu\" = torch.ops.aten.permute.default(arg0_1, [0, 2, 3, 1])\n"
    "        clone: \"f32[8, 16, 32, 3][1536, 96, 3, 1]cpu\" = torch.ops.aten.clone.default(permute, memory_format = torch.contiguous_format)\n"
    "        return (clone,)\n";

/* log_softmax over f16 rows, computed in float: every load and store converts a half */
static const char *f16_log_softmax =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f16[33, 70][70, 1]cpu\"):\n"
    "        convert_element_type: \"f32[33, 70][70, 1]cpu\" = torch.ops.prims.convert_element_type.default(arg0_1, torch.float32)\n"
    "        amax: \"f32[33, 1][1, 1]cpu\" = torch.ops.aten.amax.default(convert_element_type, [1], True)\n"
    "        sub: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.sub.Tensor(convert_element_type, amax)\n"
    "        exp: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.exp.default(sub)\n"
    "        sum_1: \"f32[33, 1][1, 1]cpu\" = torch.ops.aten.sum.dim_IntList(exp, [1], True)\n"
    "        log: \"f32[33, 1][1, 1]cpu\" = torch.ops.aten.log.default(sum_1)\n"
    "        sub_1: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.sub.Tensor(sub, log)\n"
    "        convert_element_type_1: \"f16[33, 70][70, 1]cpu\" = torch.ops.prims.convert_element_type.default(sub_1, torch.float16)\n"
    "        return (convert_element_type_1,)\n";

/* gather along the rows: the index changes with the simd loop's var, so its bounds check is
 * inside the loop (a min reduction of the bad indexes, codegen_kernel.c c_indirect), and
 * index_select with a per-row index beside it (its check is hoisted out of the loop) */
static const char *gather_rows =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[33, 70][70, 1]cpu\", arg1_1: \"i64[33, 70][70, 1]cpu\", arg2_1: \"i64[33][1]cpu\"):\n"
    "        gather: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.gather.default(arg0_1, 1, arg1_1)\n"
    "        mul: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.mul.Tensor(gather, 2)\n"
    "        index_select: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.index_select.default(arg0_1, 0, arg2_1)\n"
    "        add: \"f32[33, 70][70, 1]cpu\" = torch.ops.aten.add.Tensor(mul, index_select)\n"
    "        return (add,)\n";

/* a mean over H and W of a channels-last activation (the cnn's pooling head): the sum walks
 * the channels as its simd tile (column mode), and the division by H*W after it runs over the
 * same tile; and a column sum over 70 columns (a full tile of 64 and one of 6) times 2 */
static const char *mean_channels_last =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 16, 6, 6][576, 1, 96, 16]cpu\", arg1_1: \"f32[100, 70][70, 1]cpu\"):\n"
    "        relu: \"f32[4, 16, 6, 6][576, 1, 96, 16]cpu\" = torch.ops.aten.relu.default(arg0_1)\n"
    "        mean: \"f32[4, 16, 1, 1][16, 1, 1, 1]cpu\" = torch.ops.aten.mean.dim(relu, [-1, -2], True)\n"
    "        sum_1: \"f32[70][1]cpu\" = torch.ops.aten.sum.dim_IntList(arg1_1, [0])\n"
    "        mul: \"f32[70][1]cpu\" = torch.ops.aten.mul.Tensor(sum_1, 2)\n"
    "        return (mean, mul)\n";

/* The text of the innermost simd loop of src (from its pragma to the end), or "" */
static const char *simd_body(const char *src) {
    const char *p = src ? strstr(src, "#pragma omp simd") : NULL;
    return p ? p : "";
}

/* Which simd loops of the kernels in `src` has GCC's -fopt-info-vec report `rep` vectorized?
 * A loop is its `for` line after the pragma through its closing brace; vectorized when the
 * report names a line in that range ("FILE:LINE:COL: optimized: loop vectorized"). Returns the
 * number of simd loops; *nvec the vectorized ones; the first scalar one's line in *first. */
static int simd_loops(const char *src, const char *rep, int *nvec, int *first) {
    int nl = 1;
    for (const char *p = src; *p; p++) nl += *p == '\n';
    const char **ln = malloc(sizeof *ln * (size_t)(nl + 1));
    char *vec = calloc((size_t)nl + 2, 1);
    int n = 0;
    ln[n++] = src;
    for (const char *p = src; *p; p++) if (*p == '\n') ln[n++] = p + 1;
    for (const char *p = rep; (p = strstr(p, ": optimized: loop vectorized")); p++) {
        const char *q = p;   /* back over ":COL" to ":LINE" */
        int colons = 0;
        while (q > rep && q[-1] != '\n' && colons < 2) { q--; if (*q == ':') colons++; }
        int l = atoi(q + 1);
        if (l > 0 && l <= nl) vec[l] = 1;
    }
    int loops = 0, in_kernels = 0;
    *nvec = 0;
    *first = 0;
    for (int i = 0; i < n; i++) {
        if (!strncmp(ln[i], "static void cpp_fused", 21)) in_kernels = 1;
        if (!strncmp(ln[i], "const char *mi_sym_names", 24)) in_kernels = 0;
        const char *e = strchr(ln[i], '\n');
        size_t len = e ? (size_t)(e - ln[i]) : strlen(ln[i]);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 511 ? len : 511), ln[i]);
        if (!in_kernels || !strstr(buf, "#pragma omp") || !strstr(buf, "simd")) continue;
        int f = i + 1;
        while (f < n && strncmp(ln[f] + strspn(ln[f], " "), "for", 3)) f++;
        int depth = 0, started = 0, end = f;
        for (; end < n; end++) {
            for (const char *c = ln[end]; *c && *c != '\n'; c++) {
                if (*c == '{') { depth++; started = 1; }
                if (*c == '}') depth--;
            }
            if (started && depth <= 0) break;
        }
        loops++;
        int hit = 0;
        for (int l = f + 1; l <= end + 1 && l <= nl; l++) hit |= vec[l];
        *nvec += hit;
        if (!hit && !*first) *first = f + 1;
    }
    free(ln);
    free(vec);
    return loops;
}

/* Build src again with the runtime's flags plus -fopt-info-vec-optimized into a file (a fresh
 * kernel cache, so cc runs) and check that `want` simd loops of its kernels are vectorized
 * (-1: every one). */
static void check_vectorized(MiCtx *ctx, const char *name, const char *src, int want) {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12 && defined(__x86_64__)
    char dir[] = "/tmp/mi_vec_XXXXXX";
    if (!mkdtemp(dir)) { skip(1, "no temporary directory"); return; }
    char rep_path[64], flags[128];
    snprintf(rep_path, sizeof rep_path, "%s/vec.txt", dir);
    snprintf(flags, sizeof flags, "-fopt-info-vec-optimized=%s", rep_path);
    const char *old_cache = getenv("MINDUCTOR_CACHE");
    char *keep = old_cache ? strdup(old_cache) : NULL;
    setenv("MINDUCTOR_CACHE", dir, 1);
    setenv("MINDUCTOR_CFLAGS", flags, 1);
    RtModule *rt = rt_compile(ctx, src);
    unsetenv("MINDUCTOR_CFLAGS");
    if (keep) setenv("MINDUCTOR_CACHE", keep, 1); else unsetenv("MINDUCTOR_CACHE");
    free(keep);
    StrBuf rep;
    sb_init(&rep);
    FILE *f = fopen(rep_path, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) sb_put(&rep, line);
    if (f) fclose(f);
    int nvec = 0, first = 0, loops = simd_loops(src, rep.s ? rep.s : "", &nvec, &first);
    if (want < 0) want = loops;
    ok(rt && loops > 0 && nvec >= want, "%s: GCC vectorizes %d of the %d simd loops of its kernels (%d did)", name, want, loops, nvec);
    if (nvec < want && first) diag("first scalar simd loop at line %d of:\n%s", first, src);
    sb_free(&rep);
    rt_free(rt);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
#else
    (void)ctx; (void)name; (void)src; (void)want;
    skip(1, "the vectorization report is checked with GCC 12 on x86-64 only");
#endif
}

/* gather_rows compiled and run on indexes of every kind: in range, negative (wrapped), and
 * then past the dim: the module agrees with the interpreter, GCC vectorizes its simd loop,
 * and a bad index is reported by value (the smallest bad one of the loop), as before */
static void gather_check(MiCtx *ctx) {
    Graph *g = fx_parse(ctx, gather_rows, strlen(gather_rows), "gather_rows", 1);
    if (!ok(g != NULL, "gather_rows parses")) return;
    ops_resolve_graph(g);
    ctx->fusion = true;
    CgBuild b;
    int rc = cg_compile(ctx, g, &b, 0);
    RtModule *rt = b.rt;
    const char *src = b.src;
    IValue *in = NULL;
    int nin = 0;
    if (!ok(rc == 0 && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0 && nin == 3, "gather_rows compiles")) {
        diag("%s", ctx->err.msg);
        goto out;
    }
    for (int64_t k = 0; k < 33 * 70; k++) tensor_set_f(in[1].t, k, (double)((k * 37) % 140 - 70));   /* -70 .. 69 */
    for (int64_t k = 0; k < 33; k++) tensor_set_f(in[2].t, k, (double)((k * 5) % 66 - 33));         /* -33 .. 32 */
    StrBuf rep;
    sb_init(&rep);
    int r = rt_check(ctx, rt, g, in, nin, 1e-6, 1e-6, &rep);
    ok(r == 1, "gather_rows (negative and positive indexes) agrees with the interpreter");
    if (r != 1) diag("%s%s", rep.s ? rep.s : "", ctx->err.msg);
    sb_free(&rep);
    ok(strstr(src, "#pragma omp simd reduction(min:mi_oob") && strstr(src, "mi_index_oob(mi_oob") &&
       strstr(simd_body(src), "if (!(0 <=") == NULL,
       "the gather's check in the simd loop is a min reduction reported after the loop, no branch");
    check_vectorized(ctx, "gather_rows", src, -1);
    tensor_set_f(in[1].t, 5 * 70 + 9, 75);   /* past the row's 70: two of them, 72 the smaller */
    tensor_set_f(in[1].t, 5 * 70 + 3, 72);
    IValue *got = NULL;
    int ngot = 0;
    r = rt_run(ctx, rt, g, in, nin, &got, &ngot, NULL);
    ok(r < 0 && strstr(ctx->err.msg, "index 72 is out of bounds for dimension with size 70"), "an index past the dim is reported (%s)", ctx->err.msg);
    interp_free_outputs(got, ngot);
    tensor_set_f(in[1].t, 5 * 70 + 9, 0);
    tensor_set_f(in[1].t, 5 * 70 + 3, -71);   /* wraps to -1: still outside */
    got = NULL;
    ngot = 0;
    r = rt_run(ctx, rt, g, in, nin, &got, &ngot, NULL);
    ok(r < 0 && strstr(ctx->err.msg, "index -1 is out of bounds for dimension with size 70"), "an index below -size is reported after the wrap (%s)", ctx->err.msg);
    interp_free_outputs(got, ngot);
out:
    if (in) interp_free_outputs(in, nin);
    cg_free(&b);
    graph_free(g);
}

/* bench/graphs/pointwise_chain.py, make bench's first workload: lowering inlines the whole chain
 * into one buffer, so fusion on and off generate the same C (make bench's "x fusion" then times
 * one module twice, and fig_kernels.c says so); its one simd loop is the row, p1, with contiguous
 * loads and store, and GCC vectorizes it. The C is byte-identical to the 10:52 run's tree
 * (5b98d50), where the kernel ran at 114% of the triad. */
static void pointwise_chain_check(MiCtx *ctx) {
    const char *path = "bench/graphs/pointwise_chain.py";
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    Graph *g = text ? fx_parse(ctx, text, len, path, 1) : NULL;
    free(text);
    if (!ok(g != NULL, "%s parses", path)) return;
    ops_resolve_graph(g);
    CgBuild on, off;
    ctx->fusion = false;
    int rc = cg_compile(ctx, g, &off, CG_SOURCE);
    ctx->fusion = true;
    rc |= cg_compile(ctx, g, &on, CG_SOURCE);
    ok(rc == 0 && on.src && off.src && !strcmp(on.src, off.src), "pointwise_chain: fusion on and off generate the same C");
    const char *b = simd_body(on.src);
    const char *f = strchr(b, '\n');
    f = f ? f + 1 + strspn(f + 1, " ") : "";
    ok(cg_check_count(on.src, "#pragma omp simd") == 1 && !strncmp(f, "for (int64_t p1 = 0; p1 < 4096LL; p1++)", 39) &&
       strstr(b, "= arg0_1[((4096LL*p0) + p1)];") && strstr(b, "= arg1_1[((4096LL*p0) + p1)];") &&
       strstr(b, "buf0[((4096LL*p0) + p1)] = "),
       "pointwise_chain: one simd loop, over the row (p1), its loads and store contiguous along it");
    if (on.src) check_vectorized(ctx, "pointwise_chain", on.src, -1);
    cg_free(&on);
    cg_free(&off);
    graph_free(g);
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    gather_check(ctx);
    pointwise_chain_check(ctx);
    char *src = compile_check(ctx, "bools", bools, -1);
    if (src) {
        ok(strstr(src, "((uint8_t *)buf") && strstr(src, "((const uint8_t *)arg2_1)["), "bool elements are stored and loaded through their byte");
        check_vectorized(ctx, "bools", src, -1);
    }
    free(src);
    free(compile_check(ctx, "bools", bools, 5 * 70 + 3));
    src = compile_check(ctx, "quantize", quantize, -1);
    if (src) {
        ok(strstr(src, "(int8_t)truncf(") != NULL, "the cast to int8 truncates with truncf first");
        check_vectorized(ctx, "quantize", src, -1);
    }
    free(src);   /* (no NaN in quantize: a NaN cast to int8 is undefined in C, as in ATen's static_cast) */
    src = compile_check(ctx, "bn_last", bn_last, -1);
    if (src) {
        ok(strstr(src, "float mi_h") && strstr(src, "= sqrtf(") && strstr(src, "= sqrtf(") < simd_body(src) &&
           !strstr(simd_body(src), "sqrtf(") && strstr(simd_body(src), " = mi_h"),
           "1 / sqrt(var + eps) of the channel is computed once per call into an array the loop reads");
        check_vectorized(ctx, "bn_last", src, -1);
    }
    free(src);
    free(compile_check(ctx, "bn_last", bn_last, 3));   /* a NaN variance */
    src = compile_check(ctx, "rope", rope, -1);
    if (src) {
        const char *nest = strstr(src, "#pragma omp parallel for collapse(3)");   /* after the prologue */
        const char *cosv = strstr(src, " = mi_cosf("), *sinv = strstr(src, " = mi_sinf(");
        ok(nest && strstr(src, "[1024];   /* a value of (p1, p3) alone") && cosv && cosv < nest && sinv && sinv < nest &&
           !strstr(nest, "mi_cosf(") && !strstr(nest, "mi_sinf(") && strstr(nest, "[p1*16LL + p3]"),
           "cos / sin of (position, frequency) are a 64 x 16 table computed once per call, read by the loop");
        check_vectorized(ctx, "rope", src, -1);
    }
    free(src);
    src = compile_check(ctx, "to_channels_last", to_channels_last, 5);
    if (src) {
        const char *b = simd_body(src);
        ok(!strncmp(b, "#pragma omp simd\n                for (int64_t p2 = 0; p2 < 32LL; p2++)", 69) &&
           strstr(b, "    for (int64_t p3 = 0; p3 < 3LL; p3++)") && strstr(src, "collapse(2)"),
           "the width loop is the simd loop, the 3 channels inside it");
        check_vectorized(ctx, "to_channels_last", src, -1);
    }
    free(src);
    src = compile_check(ctx, "f16_log_softmax", f16_log_softmax, -1);
    /* its max and sum loops, and the last (sub, round to f16 and store): mi_f2h has no fminf
     * and no _Bool arithmetic, which GCC 12 left scalar */
    if (src) check_vectorized(ctx, "f16_log_softmax", src, -1);
    free(src);
    src = compile_check(ctx, "mean_channels_last", mean_channels_last, 5);
    if (src) {
        ok(cg_check_count(src, "#pragma omp simd\n") == 4 && !strstr(src, "reduction(") &&
           cg_check_count(src, "for (int64_t mi_l = 0; mi_l < mi_n; mi_l++) {") == 5,
           "the channels-last mean and the column sum run their output tile as the simd loop, the column "
           "sum's epilogue too; the mean's division is a loop nest of its own (Inductor's groups ((64,),) "
           "and ((4, 16), (36,)) differ, so cpp.py does not fuse them)");
        check_vectorized(ctx, "mean_channels_last", src, -1);
    }
    free(src);
    src = compile_check(ctx, "softplus", softplus, 3);
    if (src) check_vectorized(ctx, "softplus", src, -1);
    free(src);
    mi_ctx_free(ctx);
    return exit_status();
}
