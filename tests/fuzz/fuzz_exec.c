/* fuzz_exec.c — libFuzzer target, differential, the last stage: FX text that parses and lints
 * clean (placeholders up to 64K elements) goes through the post-grad passes and the whole
 * compile (compile_fx CFX_BUILT: lowering, scheduler, C code, cc, dlopen; core/runtime), and
 * the module's call() runs under the runtime's fault guard (rt_run, core/runtime/rt_guard.c) on
 * the interpreter's random inputs, compared by rt_check (the shell's `check`). What it reaches that fuzz_lower (code text only) does not:
 * the compiled host loop of a while_loop and its bound (limit while_iterations, 1000 here), the
 * integer division checks (MI_ZERO_DIV: ATen's ZeroDivisionError), the indirect-index checks
 * (MI_INDEX_OOB), FallbackKernels called back from the module (a user's custom op fails there
 * naming the op), SymFloat sizes computed in the kernels, and the guard. Checked: when the
 * interpreter and the module both run, they agree on every output and mutated input by
 * torch._dynamo.utils.same's rule with the shell's tolerance (rtol = atol = 1e-4), else abort;
 * when either refuses, the module runs alone (its error paths); an error is no finding, a
 * crash, leak, UB or hang is. Each new input costs a cc run (about a second): the kernel cache is
 * build-fuzz/exec-cache (MINDUCTOR_CACHE), so a corpus replays from it.
 * Seeds: seed-exec (tests/fuzz/seeds.sh: the fixtures of those surfaces). */
#include "fx_passes/passes.h"
#include "compile_fx/compile_fx.h"
#include "tests/fuzz/fuzz_graph.h"
#include "runtime/runtime.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_vals(IValue *v, int n) { if (v) interp_free_outputs(v, n); }

/* The modules are built by cc -fopenmp (libgomp); this target by clang (libomp). The shell has
 * libgomp loaded for good (gcc -fopenmp); here the first module would load it and its unloading
 * take libgomp along, leaving libgomp's thread-pool state unreachable (LeakSanitizer: 8 bytes
 * from an unknown module). So libgomp is loaded once, as in the shell. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    setenv("MINDUCTOR_CACHE", "build-fuzz/exec-cache", 0);
    if (!dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL)) fprintf(stderr, "fuzz_exec: libgomp: %s\n", dlerror());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MiCtx *ctx = mi_ctx_new();
    ctx->seed = 1;
    ctx->threads = 1;
    mi_limit_set(ctx, "while_iterations", 1000);
    Graph *g = fx_parse(ctx, (const char *)data, size, "fuzz.py", 1);
    IValue *in = NULL;
    int nin = 0;
    if (!g && getenv("FUZZ_EXEC_VERBOSE")) fprintf(stderr, "fuzz_exec: parse: %s\n", ctx->err.msg);
    if (g) ops_resolve_graph(g);   /* a user's custom op stays unknown: it lowers as a FallbackKernel */
    bool go = g && graph_lint(ctx, g, NULL) == 0 && fz_small_graph(g) && interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0;
    if (g && !go && getenv("FUZZ_EXEC_VERBOSE")) fprintf(stderr, "fuzz_exec: lint / inputs: %s\n", ctx->err.msg);
    if (go) {
        PassManager *pm = pm_new(ctx, g, NULL, 0);   /* no numerics checks: the interpreter may refuse */
        if (pm && pm_run_all(pm) == pm_num_passes(pm)) {   /* pm_run_all gives the cursor */
            const Graph *h = pm_graph(pm);
            CompiledFx c;
            compile_fx_init(&c, h);
            int rc = -2;
            if (compile_fx(ctx, &c, CFX_BUILT) == 0) {
                StrBuf rep;
                sb_init(&rep);
                rc = rt_check(ctx, c.mod, h, in, nin, 1e-4, 1e-4, &rep);
                if (rc == 0) {
                    fprintf(stderr, "fuzz_exec: the compiled module and the interpreter differ (torch._dynamo.utils.same, rtol = atol = 1e-4):\n%s",
                            rep.s ? rep.s : "");
                    abort();
                }
                sb_free(&rep);
                if (rc < 0) {   /* the interpreter or the module refused: the module alone, its error paths */
                    IValue *ib = fz_clone(ctx, in, nin), *ob = NULL;
                    int nb = 0;
                    MiTry t = mi_try(ctx);
                    if (rt_run(ctx, c.mod, h, ib, nin, &ob, &nb, NULL) == 0) free_vals(ob, nb);
                    mi_try_end(&t);
                    free_vals(ib, nin);
                }
            }
            if (rc != 1 && getenv("FUZZ_EXEC_VERBOSE")) {   /* triage: why this input stopped */
                char msg[1200];
                fprintf(stderr, "fuzz_exec: %s\n", mi_err_str(ctx, msg, sizeof msg));
            }
            compile_fx_free(&c);
        }
        else if (getenv("FUZZ_EXEC_VERBOSE")) fprintf(stderr, "fuzz_exec: passes: %s\n", ctx->err.msg);
        pm_free(pm);
    }
    free_vals(in, nin);
    graph_free(g);
    mi_ctx_free(ctx);
    return 0;
}
