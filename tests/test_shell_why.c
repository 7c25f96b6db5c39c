/* test_shell_why.c — the shell's `why`, `why-not`, `dump` and the refusal labels of the fusion
 * picture, on fixtures whose schedule and patterns are known: exact lines of text, files. */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "base/mi.h"
#include "trace/trace_internal.h"

#include <sys/stat.h>
#include <sys/wait.h>

static ShellEnv env;

static char *sh(const char *cmds, int *status) { return sh_output(&env, cmds, status); }
static bool has(const char *s, const char *pat) { return sh_text_has(s, pat); }

int main(void) {
    if (sh_init(&env, "minductor_whyXXXXXX") < 0) return 0;
    int st;
    /* fused: layer norm + gelu is one kernel; the decision that joined them is named */
    char *o = sh("load examples/ln_gelu.py; run; why buf0 buf3", &st);
    is_int(st, 0, "why on a fused pair");
    ok(has(o, "  buf0 (op0): FX nodes var_mean\n") && has(o, "fused: buf0 and buf3 are in one kernel, cpp_fused_") &&
           has(o, "decided by: fuse op0_op1 + op2_op3 (score 66048 bytes): vertical: producer into consumer\n"),
       "why: fused, the FX nodes, the deciding rule and score");
    free(o);
    /* an extern call: the rule, not a decision */
    o = sh("load examples/mlp.py; run; why buf0 buf1", &st);
    ok(has(o, "  buf0 (op0): FX nodes addmm\n") && has(o, "  buf1 (op1): FX nodes relu\n") &&
           has(o, "not fused: buf0 is in extern_mm, buf1 in cpp_fused_relu_0\n") &&
           has(o, "rule: buf0 is an extern kernel call (extern_mm)"), "why: an extern kernel never fuses");
    free(o);
    /* a refusal: the scheduler's reason (the transposed read shares no normalized dependency
     * with the reductions' writes: choices.py can_fuse); the fusion picture's edge carries it */
    o = sh("load tests/fixtures/codegen/sched_split_outer_permuted_view.py; why buf0 buf2; show fusion", &st);
    ok(has(o, "refused: op0_op1 + op2 (score 0 bytes): no shared data; every buffer of the producer is read at other (normalized) indexes than it is written (choices.py can_fuse: shared_data_score 0)\n"),
       "why: the refusal and its reason");
    ok(has(o, "buf0 -> buf2\t[color=\"#cc4125\",\n\t\tfontcolor=\"#cc4125\",\n\t\tfontname=Helvetica,\n\t\tfontsize=10,\n"
              "\t\tlabel=\"no shared data\",\n"
              "\t\tlabeltooltip=\"refused: op0_op1 + op2 (score 0 bytes): no shared data; every buffer of the producer is read at other (normalized) indexes than"),
       "the fusion picture: the refusal's head on the edge, the decision and Inductor's whole text as its tooltip");
    free(o);
    /* the SVG: the short text drawn, the full text as the edge's title (hover) */
    char svgcmd[300];
    snprintf(svgcmd, sizeof svgcmd, "load tests/fixtures/codegen/sched_split_outer_permuted_view.py; show fusion --svg %s/f.svg", env.tmpdir);
    o = sh(svgcmd, &st);
    free(o);
    MiCtx *vc = mi_ctx_new();
    char svgpath[200];
    snprintf(svgpath, sizeof svgpath, "%s/f.svg", env.tmpdir);
    char *svg = mi_read_file(vc, svgpath, NULL);
    ok(svg && strstr(svg, "<a xlink:title=\"refused: op0_op1 + op2 (score 0 bytes): no shared data; every buffer of the producer is read at other (normalized) indexes than it is written (choices.py can_fuse: shared_data_score 0)\">") &&
           strstr(svg, "fill=\"#cc4125\">no shared data</text>"),
       "SVG: the edge's label is the short reason, its title the decision with the full text");
    free(svg);
    mi_ctx_free(vc);
    /* collapsed to kernel boxes (cuda: one kernel per group), the edge between the kernels keeps it */
    o = sh("set device cuda; load tests/fixtures/codegen/sched_split_outer_permuted_view.py; set collapse 2; show fusion", &st);
    ok(has(o, "cuda_fused_var_mean_0 -> cuda_fused_add_clone_mul_permute_reshape_sub_1\t[color=\"#cc4125\"") &&
           has(o, "label=\"memory deps did not match\""), "collapsed fusion picture: the edge between kernel boxes carries the refusal");
    free(o);
    /* fusion off: no decision, the rule says so */
    o = sh("load examples/ln_gelu.py; set fusion off; why buf0 buf3", &st);
    ok(has(o, "rule: fusion is off (`set fusion on`): every node is its own kernel\n"), "why with fusion off");
    free(o);
    o = sh("load examples/mlp.py; why buf0 buf9", &st);
    ok(st == 1 && has(o, "no scheduled buffer 'buf9'"), "why: an unknown buffer is an error");
    free(o);
    /* the report's why page: every decision with its FX nodes, and the shell's own `why` text */
    char rep[700];
    snprintf(rep, sizeof rep, "load tests/fixtures/codegen/sched_split_outer_permuted_view.py; trace on %s/w.log; run; sched; "
             "why buf0 buf2; report %s/rep", env.tmpdir, env.tmpdir);
    o = sh(rep, &st);
    is_int(st, 0, "a traced session's report");
    const char *w0 = o ? strstr(o, "  buf0 (op0): FX nodes var_mean\n") : NULL, *w1 = w0 ? strstr(w0, "\nrefused: ") : NULL;
    w1 = w1 ? strchr(w1 + 1, '\n') : NULL;
    ok(w0 && w1, "the shell's why text");
    StrBuf want;
    sb_init(&want);
    sb_put(&want, "<tr id=\"s1-d2\" class=\"refused\"><td>2</td><td>refused</td><td class=\"side\">buf0 (op0): <b>var_mean</b><br>"
                  "buf1 (op1): <b>var_mean</b></td><td class=\"side\">buf2 (op2): <b>sub</b>, <b>mul</b>, "
                  "<b>permute</b>, <b>clone</b>, <b>view</b>, <b>add</b></td><td>0</td><td>"
                  "no shared data; every buffer of the producer is read at other (normalized) indexes than it is written "
                  "(choices.py can_fuse: shared_data_score 0)<details><summary>why buf0 buf2</summary><pre>");
    if (w0 && w1) html_escn(&want, w0, (size_t)(w1 + 1 - w0));
    sb_put(&want, "</pre></details></td></tr>\n");
    free(o);
    MiCtx *pc = mi_ctx_new();
    char pp[300];
    snprintf(pp, sizeof pp, "%s/rep/minductor/why_-_0_0_0.html", env.tmpdir);
    char *wpage = mi_read_file(pc, pp, NULL), *page = wpage;
    ok(page && strstr(page, "<h2>Why: fusion decisions of compile 0/0</h2>") &&
           strstr(page, "cpu): 1 kernel(s), 2 decision(s): 1 fused, 1 refused</h2>"), "why page: title and the schedule's counts");
    ok(page && strstr(page, want.s), "why page: the refused pair, both sides' FX nodes, Inductor's words, and exactly the shell's why text");
    ok(page && strstr(page, "<tr id=\"s1-d1\" class=\"fused\"><td>1</td><td>fused</td><td class=\"side\">buf0 (op0): <b>var_mean</b></td>"
                            "<td class=\"side\">buf1 (op1): <b>var_mean</b></td><td>960</td><td>horizontal: shared reads<details>"),
       "why page: the fused pair and its rule");
    ok(page && strstr(page, "<svg") && strstr(page, "fill=\"#cc4125\">no shared data</text>") &&
           strstr(page, "<tr><td>cpp_fused_add_clone_mul_permute_reshape_sub_0</td><td>buf0 buf1 buf2</td></tr>"),
       "why page: the fusion picture inline with the refused edges labelled; the kernels");
    free(page);
    snprintf(pp, sizeof pp, "%s/rep/minductor/compile_-_0_0_0.html", env.tmpdir);
    page = mi_read_file(pc, pp, NULL);
    ok(page && strstr(page, " · <a href=\"why_-_0_0_0.html\">why (fusion decisions)</a>"), "the compile page links the why page");
    free(page);
    snprintf(pp, sizeof pp, "%s/rep/index.html", env.tmpdir);
    page = mi_read_file(pc, pp, NULL);
    ok(page && strstr(page, " · <a href=\"minductor/why_-_0_0_0.html\">why</a>"), "index.html links it in the compile table");
    free(page);
    /* a second schedule (fusion off) is a second section; past limit draw_nodes, no picture */
    snprintf(rep, sizeof rep, "load tests/fixtures/codegen/sched_split_outer_permuted_view.py; trace on %s/w2.log; set limit draw_nodes 2; "
             "sched; set fusion off; sched; report %s/rep2", env.tmpdir, env.tmpdir);
    o = sh(rep, &st);
    is_int(st, 0, "two schedules traced");
    free(o);
    snprintf(pp, sizeof pp, "%s/rep2/minductor/why_-_0_0_0.html", env.tmpdir);
    page = mi_read_file(pc, pp, NULL);
    ok(page && strstr(page, "cpu): 1 kernel(s), 2 decision(s): 1 fused, 1 refused</h2>") &&
           strstr(page, "cpu): 1 kernel(s), 0 decision(s): 0 fused, 0 refused</h2>") &&
           strstr(page, "<p>No pair was tried (fusion off, or no two groups share a buffer).</p>") && !strstr(page, "<svg"),
       "why page: one section per schedule; a picture past limit draw_nodes is left out, the decisions stay");
    free(page);
    mi_ctx_free(pc);
    sb_free(&want);
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
    page = mi_read_file(ctx, p, NULL);
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
