/* test_cuda_cases.c — `--device cuda` on every recorded cuda graph (tests/fixtures/torch-cases/cuda
 * and tests/fixtures/torch-cases-b2/cuda): the pipeline driver generates CUDA for the post-grad
 * graph PyTorch logged, and nvcc compiles it (`nvcc -c`, no GPU needed). Where nvcc is missing
 * (CI) the compile points are TAP skips saying so. A graph whose *lowering* lacks an op is a TAP
 * TODO naming it (lowering is another stage's work); a codegen or nvcc failure fails. The GPU run
 * of the same graphs against PyTorch's recorded outputs is bench/cuda/run_cases.sh. */
#include "tap.h"
#include "codegen/codegen_cuda.h"
#include "compile_fx/compile_fx.h"
#include "tests/support/fixture_graph.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool has(const char *s, const char *needle) { return s && strstr(s, needle); }

static int ngraphs, ncompiled, ntodo;

/* One graph: generate, check what its dtypes and fallbacks must produce, nvcc -c. */
static void one_graph(MiCtx *ctx, const char *dir, const char *name, const char *nvcc) {
    char path[1200];
    snprintf(path, sizeof path, "%s/post_post_grad.py", dir);
    Graph *g = graph_load_file(ctx, path);
    ngraphs++;
    if (!g) { ok(0, "%s: loads (%s)", name, ctx->err.msg); return; }
    ops_resolve_graph(g);
    ctx->target = MI_DEV_CUDA;
    CompiledFx c;
    compile_fx_init(&c, g);
    int rc = compile_fx(ctx, &c, CFX_GENERATED);
    if (rc < 0 && strncmp(ctx->err.msg, "lowering: ", 10) == 0) {   /* a missing lowering: not this stage's */
        printf("not ok %d - %s: CUDA source # TODO %.300s\n", ++tap_run_, name, ctx->err.msg);
        ntodo++;
        if (nvcc) skip(1, "no source to compile");
        compile_fx_free(&c);
        graph_free(g);
        return;
    }
    ok(rc == 0 && codegen_is_cuda_source(c.code), "%s: CUDA source%s%s", name, rc ? ": " : "", rc ? ctx->err.msg : "");
    if (rc == 0) {
        /* what the graph's dtypes and fallbacks must show in the text */
        bool bf16 = false, f16 = false, host = false;
        for (int i = 0; i < c.ir->nbufs; i++) {
            bf16 |= c.ir->bufs[i]->layout.dtype == DT_BF16;
            f16 |= c.ir->bufs[i]->layout.dtype == DT_F16;
            host |= codegen_cuda_on_host(c.ir->bufs[i]);
        }
        if (bf16 || f16 || host)
            ok((!bf16 || (has(c.code, "#include <cuda_bf16.h>") && has(c.code, "__bfloat162float(") && has(c.code, "__float2bfloat16_rn("))) &&
               (!f16 || (has(c.code, "#include <cuda_fp16.h>") && has(c.code, "__half2float(") && has(c.code, "__float2half_rn("))) &&
               (!host || (has(c.code, "runs on the host (C reference)") && has(c.code, "extern \"C\" int call_fb("))),
               "%s:%s%s%s", name, bf16 ? " bf16 as __nv_bfloat16 computed in float" : "", f16 ? " f16 as __half computed in float" : "",
               host ? " ops without a GPU kernel as host round trips" : "");
    }
    if (nvcc && rc == 0) {
        bool built = tf_nvcc_compiles(c.code) == 1;   /* nvcc's output on stderr when not */
        ok(built, "%s: nvcc compiles it", name);
        ncompiled += built;
    } else if (nvcc) skip(1, "no source to compile");
    compile_fx_free(&c);
    graph_free(g);
}

static void walk(MiCtx *ctx, const char *root, const char *nvcc) {
    DIR *d = opendir(root);
    if (!d) { ok(0, "%s exists", root); return; }
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256)
        if (de->d_name[0] != '.' && strcmp(de->d_name, "README.md")) names[n++] = mi_xstrdup(de->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 8; k++) {
            char dir[1100], p[1200], name[400];
            snprintf(dir, sizeof dir, "%s/%s/graph%d", root, names[i], k);
            snprintf(p, sizeof p, "%s/post_post_grad.py", dir);
            struct stat st;
            if (stat(p, &st) != 0) continue;
            snprintf(name, sizeof name, "%s/graph%d", names[i], k);
            one_graph(ctx, dir, name, nvcc);
        }
        free(names[i]);
    }
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    const char *nvcc = tf_find_nvcc();
    if (!nvcc) diag("nvcc not found: the compile points are skipped (CI has no CUDA toolkit; set MINDUCTOR_NVCC)");
    walk(ctx, "tests/fixtures/torch-cases/cuda", nvcc);
    walk(ctx, "tests/fixtures/torch-cases-b2/cuda", nvcc);
    if (!nvcc) skip(1, "nvcc not found: no CUDA source was compiled");
    else ok(ncompiled + ntodo == ngraphs, "%d of %d graphs compiled with nvcc (%d wait for a lowering)", ncompiled, ngraphs, ntodo);
    mi_ctx_free(ctx);
    return done_testing();
}
