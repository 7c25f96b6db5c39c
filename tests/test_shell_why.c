/* test_shell_why.c — the shell's `why`, `why-not`, `dump` and the refusal labels of the fusion
 * picture, on fixtures whose schedule and patterns are known: exact lines of text, files. */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "base/mi.h"

#include <sys/stat.h>
#include <sys/wait.h>

static ShellEnv env;

/* stdout and stderr of `bin -k -c CMDS` (the shared harness); *status: its exit status */
static char *sh(const char *cmds, int *status) {
    ShResult r = sh_run(&env, "-k", cmds, NULL);
    if (status) *status = r.status;
    return r.out;
}

static bool has(const char *s, const char *pat) {
    bool y = s && strstr(s, pat);
    if (!y) diag("missing: %s", pat);
    return y;
}

int main(void) {
    if (sh_init(&env, "minductor_whyXXXXXX") < 0) return 0;
    int st;
    /* fused: layer norm + gelu is one kernel; the decision that joined them is named */
    char *o = sh("load examples/ln_gelu.py; run; why buf0 buf3", &st);
    is_int(st, 0, "why on a fused pair");
    ok(has(o, "  buf0 (op0): FX nodes var_mean\n") && has(o, "fused: buf0 and buf3 are in one kernel, cpp_fused_") &&
           has(o, "decided by: fuse op0_op1_op2 + op3 (score 65536 bytes): vertical: producer into consumer\n"),
       "why: fused, the FX nodes, the deciding rule and score");
    free(o);
    /* an extern call: the rule, not a decision */
    o = sh("load examples/mlp.py; run; why buf0 buf1", &st);
    ok(has(o, "  buf0 (op0): FX nodes addmm\n") && has(o, "  buf1 (op1): FX nodes relu\n") &&
           has(o, "not fused: buf0 is in extern_mm, buf1 in cpp_fused_relu_0\n") &&
           has(o, "rule: buf0 is an extern kernel call (extern_mm)"), "why: an extern kernel never fuses");
    free(o);
    /* a refusal: the scheduler's reason; the fusion picture's edge carries it */
    o = sh("load tests/fixtures/codegen/sched_split_outer_permuted_view.py; why buf0 buf2; show fusion", &st);
    ok(has(o, "refused: op0_op1 + op2 (score 1152 bytes): memory deps did not match; outer sizes differ: [4, 6] vs [24, 10]"),
       "why: the refusal and its reason");
    ok(has(o, "buf0 -> buf2\t[label=\"memory deps did not match; outer sizes differ"), "the fusion picture labels the refused edge");
    free(o);
    o = sh("load examples/mlp.py; why buf0 buf9", &st);
    ok(st == 1 && has(o, "no scheduled buffer 'buf9'"), "why: an unknown buffer is an error");
    free(o);
    /* why-not: a user pattern, reason by reason; Inductor's entries */
    o = sh("patterns tests/fixtures/patterns/user.pat; load tests/fixtures/patterns/double_relu.py; "
           "why-not double_relu relu_1; why-not double_relu relu; why-not addmm relu; why-not nope relu", &st);
    ok(has(o, "double_relu matches at relu_1: r1=relu, r2=relu_1\n"), "why-not: a match, with its nodes");
    ok(has(o, "double_relu does not match at relu: statement r1 = aten.relu.default(...) does not match node x, which is not a call\n"),
       "why-not: the statement that failed and why");
    ok(has(o, "addmm (pass_pattern_2) starts from aten.add.Tensor") && has(o, "relu is aten.relu.default"),
       "why-not: an Inductor entry names its anchors");
    ok(has(o, "error: no pattern 'nope'"), "why-not: an unknown pattern is an error");
    free(o);
    /* dump: TORCH_COMPILE_DEBUG's files and the interactive pictures */
    char dir[] = "/tmp/mi_dump_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    char cmds[600];
    snprintf(cmds, sizeof cmds, "load examples/ln_gelu.py; run; dump %s/d", dir);
    o = sh(cmds, &st);
    is_int(st, 0, "dump");
    free(o);
    const char *files[] = {"fx_graph_readable.py", "fx_graph_transformed.py", "ir_pre_fusion.txt", "ir_post_fusion.txt",
                           "output_code.c", "fx_graph.svg", "fx_graph.html", "ir_graph.html", "fusion_graph.html"};
    bool all = true;
    for (int i = 0; i < 9; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/d/%s", dir, files[i]);
        struct stat sb;
        if (stat(p, &sb) != 0 || sb.st_size == 0) { all = false; diag("missing %s", p); }
    }
    ok(all, "dump writes the debug files and pictures");
    char p[700];
    snprintf(p, sizeof p, "%s/d/output_code.c", dir);
    MiCtx *ctx = mi_ctx_new();
    char *code = mi_read_file(ctx, p, NULL);
    ok(code && strstr(code, "/* Topologically Sorted Source Nodes: [var_mean, ") && strstr(code, "Original ATen: [aten.var_mean") &&
           strstr(code, "/* [Provenance debug handles] cpp_fused_"), "the code carries Inductor's source-node comments");
    free(code);
    snprintf(p, sizeof p, "%s/d/fx_graph.html", dir);
    char *page = mi_read_file(ctx, p, NULL);
    ok(page && strstr(page, "<input id=\"q\" placeholder=\"search nodes\"") && strstr(page, "<h3>Legend</h3>") &&
           strstr(page, "<svg") && strstr(page, "data-fx=\"fx_graph_transformed.py\""),
       "the picture page: search, legend, the SVG inline, the texts it links");
    free(page);
    mi_ctx_free(ctx);
    snprintf(cmds, sizeof cmds, "rm -rf '%s'", dir);
    ok(system(cmds) == 0, "cleanup");
    sh_cleanup(&env);
    return done_testing();
}
