/* test_shell_ux.c — what a user trips over in the shell, each found by using it: `exec` after
 * `lower; sched` keeps the pass history and the compiled state (no second "lowering first");
 * stdout and stderr stay in order when both go to one pipe; a truncated TORCH_TRACE log is
 * named with its line on `load`; small kernels stay serial (an OpenMP if() clause); `show
 * fusion` schedules on demand; lint names FILE:LINE; `diff` prints '-' before '+';
 * `load DIR` hints; sdpa's second output is drawn inside its kernel's cluster; `save
 * session` keeps the entered subgraph; Ctrl-C at the prompt drops the line, not the shell;
 * devices and full disks give errors, not a hang or an exit. Drives the
 * built binary ($MINDUCTOR_BIN, else ./build/minductor). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "tests/support/shell_harness.h"

static ShellEnv env;

#define LN "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/pre_post_grad.py"
#define SEED_LOG "tests/fixtures/logs/cpu_seed_example.log"

/* stdout and stderr of `bin -q -k -c CMDS` through one pipe (the shared harness);
 * *status: the exit status */
static char *run(const char *cmds, int *status) {
    ShResult r = sh_run(&env, "-q -k", cmds, NULL);
    if (status) *status = r.status;
    return r.out;
}

static int count_of(const char *s, const char *w) {
    int c = 0;
    for (const char *p = s; (p = strstr(p, w)); p += strlen(w)) c++;
    return c;
}

/* offset of the first occurrence of w in s, or -1 */
static long pos(const char *s, const char *w) {
    const char *p = strstr(s, w);
    return p ? p - s : -1;
}

static void test_exec_keeps_state(void) {
    char *o = run("load " LN "; next 3; lower; sched; exec 2; passes", NULL);
    is_int(count_of(o, "lowering 18 nodes"), 1, "exec after lower; sched does not lower again");
    ok(!strstr(o, "lowering first"), "no 'lowering first' from exec");
    ok(strstr(o, "exec: ok") != NULL, "exec ran and matched");
    ok(strstr(o, ">   4   reorder_for_locality") != NULL, "the pass cursor is still after step 3");
    free(o);
    /* the implicit random inputs feed the numerics checks of later steps */
    o = run("load " LN "; lower; exec 0; step", NULL);
    ok(strstr(o, "step 1/19 functionalize: no change") && strstr(o, "numerics ok"),
       "a step after exec checks numerics with exec's inputs");
    free(o);
}

static void test_output_order(void) {
    char *o = run("load " LN "; exec 0", NULL);
    long a = pos(o, "lowering first"), b = pos(o, "lowered to"), c = pos(o, "compiling "),
         d = pos(o, "compiled "), e = pos(o, "exec: ok");
    ok(a >= 0 && a < b && b < c && c < d && d < e,
       "progress (stderr) and results (stdout) stay in order in one pipe");
    free(o);
}

static void test_truncated_log(void) {
    char path[300], cmds[700];
    snprintf(path, sizeof path, "%s/trunc.log", env.tmpdir);
    FILE *in = fopen(SEED_LOG, "rb"), *out = fopen(path, "wb");
    if (!in || !out) { ok(0, "copy the log"); if (in) fclose(in); if (out) fclose(out); return; }
    /* the first 57 lines, the last one cut in the middle */
    int lines = 0, ch;
    long bytes_in_line = 0;
    while ((ch = fgetc(in)) != EOF) {
        if (lines == 56 && bytes_in_line == 120) break;
        fputc(ch, out);
        bytes_in_line++;
        if (ch == '\n') { lines++; bytes_in_line = 0; }
    }
    fclose(in); fclose(out);
    snprintf(cmds, sizeof cmds, "load %s", path);
    char *o = run(cmds, NULL);
    char want[400];
    snprintf(want, sizeof want, "warning: %s:57: bad_json", path);
    ok(strstr(o, want) != NULL, "load names the damaged line of a truncated log");
    ok(pos(o, "0/0 ") >= 0 && pos(o, "0/0 ") < pos(o, "warning:") && pos(o, "warning:") < pos(o, "error:"),
       "listing, then the warning, then the error");
    ok(strstr(o, ": no compile has a graph artifact (before_post_grad_graph, aot_inference_graph, ...); "
                 "to load another FX artifact name it: load ") != NULL,
       "with no graph in the log, the error says which artifacts were looked for");
    free(o);
    o = run("load " SEED_LOG, NULL);
    ok(!strstr(o, "warning:"), "no warning for an intact log");
    free(o);
}

static void test_small_kernels_serial(void) {
    char *o = run("load " LN "; codegen", NULL);
    ok(strstr(o, "#pragma omp parallel for if((64LL) * (256LL) * (int64_t)1 >= (int64_t)4096 * omp_get_max_threads())") != NULL,
       "parallel loops carry the minimum-work if() clause");
    free(o);
}

static void test_show_fusion_and_lint(void) {
    char cmds[700];
    snprintf(cmds, sizeof cmds, "load " LN "; show fusion --dot %s/f.dot", env.tmpdir);
    char *o = run(cmds, NULL);
    ok(strstr(o, "scheduling first") && !strstr(o, "error:"), "show fusion schedules on demand");
    char path[400];
    snprintf(path, sizeof path, "%s/f.dot", env.tmpdir);
    FILE *f = fopen(path, "r");
    char buf[8192] = {0};
    if (f) { size_t n = fread(buf, 1, sizeof buf - 1, f); buf[n] = 0; fclose(f); }
    ok(strstr(buf, "cluster_cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0") != NULL, "the picture has the kernel's cluster");
    free(o);
    /* a wrong annotation: lint names file and line */
    char src[400], bad[400];
    snprintf(bad, sizeof bad, "%s/bad_annot.py", env.tmpdir);
    FILE *in = fopen(LN, "r"), *out = fopen(bad, "w");
    if (!in || !out) { ok(0, "copy the graph"); if (in) fclose(in); if (out) fclose(out); return; }
    while (fgets(src, sizeof src, in)) {
        char *p = strstr(src, "getitem: \"f32[64, 1]");
        if (p) memcpy(p + strlen("getitem: \"f32[64, "), "7", 1);
        fputs(src, out);
    }
    fclose(in); fclose(out);
    snprintf(cmds, sizeof cmds, "load %s; lint", bad);
    o = run(cmds, NULL);
    char want[500];
    snprintf(want, sizeof want, "%s:5: node 'getitem': annotation f32[64, 7]", bad);
    ok(strstr(o, want) != NULL, "lint problems are named FILE:LINE");
    free(o);
}

static void test_diff_order(void) {
    char *o = run("load tests/fixtures/torch-cases/cpu/view_mutation/graph0/pre_post_grad.py; run; diff 14", NULL);
    long minus = pos(o, "\n-        slice_scatter: "), plus = pos(o, "\n+        slice_scatter_default: ");
    ok(minus >= 0 && plus > minus, "a changed block reads '-' lines then '+' lines, as diff -u");
    free(o);
}

static void test_load_messages(void) {
    char *o = run("load tests/fixtures/torch-cases/cpu/ln_gelu/graph0", NULL);
    ok(strstr(o, "error: tests/fixtures/torch-cases/cpu/ln_gelu/graph0: is a directory, not a graph file "
                 "(try 'load tests/fixtures/torch-cases/cpu/ln_gelu/graph0/pre_post_grad.py; inputs ") != NULL,
       "load of a recorded case's directory says which file to load");
    free(o);
    o = run("load tests/fixtures/logs/multirank/ok", NULL);
    ok(strstr(o, "(2 logs here: 'load tests/fixtures/logs/multirank/ok/FILE.log', or 'report --all-ranks") != NULL,
       "load of a log directory points at its logs");
    free(o);
    o = run("load tests/fixtures/logs/cpu_graph_break.log", NULL);
    long a = pos(o, "\n  0/0_1    ok "), b = pos(o, "\n  1/0      ok ");
    const char *r = strstr(o, "graph_break()` 1 artifacts");
    ok(a >= 0 && b >= 0 && r && strstr(o + a + 1, "17 artifacts") - (o + a) == r + strlen("graph_break()` ") - strstr(o, "\n  0/0      restarted"),
       "the compile list keeps its artifact column aligned under a long restart reason");
    free(o);
}

static void test_sdpa_second_output(void) {
    char *o = run("load tests/fixtures/torch-cases/cpu/attention/graph0/pre_post_grad.py; show fusion", NULL);
    ok(strstr(o, "  buf0     FallbackKernel MultiOutputLayout    origins: _scaled_dot_product_flash_attention_for_cpu\n") &&
       strstr(o, "  buf2     MultiOutput    f32[2, 4, 64]        origins: _scaled_dot_product_flash_attention_for_cpu = buf0[1]\n") != NULL,
       "lower shows the attention's FallbackKernel and names the item each MultiOutput is (the logsumexp: buf0[1])");
    const char *cl = strstr(o, "subgraph cluster_extern_multi_output_buf0 {"), *b1 = strstr(o, "\t\tbuf1\t[");
    ok(cl && b1 && b1 > cl, "the attention's result sits in its MultiOutput node's cluster");
    ok(strstr(o, "buf0 -> buf1;") != NULL, "with an edge from the FallbackKernel whose call writes it");
    free(o);
}

static void test_save_session_scope(void) {
    char cmds[800], path[400];
    snprintf(path, sizeof path, "%s/nested.mi", env.tmpdir);
    snprintf(cmds, sizeof cmds, "load tests/fixtures/hop/cond_nested.py; enter true_graph_0; enter false_graph_0; "
             "step; save session %s", path);
    char *o = run(cmds, NULL);
    free(o);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "(cat '%s'; echo leave; echo leave; echo leave) | \"%s\" -q -k 2>&1", path, env.bin);
    FILE *p = popen(cmd, "r");
    char buf[1 << 14];
    size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    buf[n] = 0;
    if (p) pclose(p);
    ok(strstr(buf, "in subgraph true_graph_0.false_graph_0:") != NULL, "a saved session re-enters the nested subgraph");
    ok(strstr(buf, "at the top-level graph") && strstr(buf, "error: not inside a subgraph"),
       "two levels deep: two leaves get back to the top");
}

/* An interactive shell on a pseudo-terminal (`bin -q LN`); each of `keys` is written after the
 * output went quiet for a moment (readline is then waiting at the prompt). All output returned. */
static char *run_tty(const char *const *keys, int nkeys, int *status) {
    ShStep steps[16];
    for (int i = 0; i < nkeys && i < 16; i++) steps[i] = (ShStep){NULL, keys[i]};
    const char *args[] = {LN, NULL};
    ShResult r = sh_tty_dialogue(&env, args, steps, nkeys < 16 ? nkeys : 16, 20);
    *status = r.status;
    return r.out;
}

/* `diff ses<Tab>` completes the sub-form; after it, file names (the scripts) */
static void test_tty_diff_session_completion(void) {
    const char *keys[] = {"diff ses\t", "nope_a.mi nope_b.mi\n", "quit\n"};
    int st = 0;
    char *o = run_tty(keys, 3, &st);
    if (st == -2 || st == 126) { skip(1, "no pseudo-terminal"); free(o); return; }
    ok(o && strstr(o, "error: nope_a.mi: cannot open: No such file or directory"), "'diff ses<Tab>' completes to 'diff session '");
    free(o);
}

static void test_ctrl_c_at_prompt(void) {
    const char *keys[] = {"graph --json", "\003", "lint\n", "gra\003", "quit\n"};
    int st = 0;
    char *o = run_tty(keys, 5, &st);
    if (st == -2 || st == 126) { skip(3, "no pseudo-terminal"); free(o); return; }
    is_int(st, 0, "Ctrl-C at the prompt does not kill the shell (it exits 0 at 'quit')");
    ok(strstr(o, "lint: ok") != NULL, "the graph survives and the next command runs");
    ok(!strstr(o, "\"nodes\""), "the interrupted line was dropped, not run");
    free(o);
}

/* Tab completes a pass name, a show keyword and a kernel name; the history file keeps the
 * lines, and the next session recalls them (Ctrl-P twice: the line before 'quit'). */
static void test_tty_completion_history(void) {
    char dot[400], k2[500];
    snprintf(dot, sizeof dot, " --dot %s/tty_fusion.dot\n", env.tmpdir);
    const char *keys[] = {"goto reo\t", "\n", "show fu\t", dot, "codegen cpp_fused_add\t", "\n", "quit\n"};
    int st = 0;
    char *o = run_tty(keys, 7, &st);
    if (st == -2 || st == 126) { skip(5, "no pseudo-terminal"); free(o); return; }
    ok(strstr(o, "at step 4/19 after reorder_for_locality") != NULL, "a pass name completes ('goto reo<Tab>')");
    snprintf(k2, sizeof k2, "wrote %s/tty_fusion.dot (dot,", env.tmpdir);
    ok(strstr(o, k2) != NULL, "a show keyword completes ('show fu<Tab>')");
    ok(strstr(o, "static void cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0(const float") != NULL,
       "a kernel name completes ('codegen cpp_fused_add<Tab>')");
    free(o);
    const char *hist = getenv("MINDUCTOR_HISTORY");
    FILE *f = hist ? fopen(hist, "r") : NULL;
    char buf[4096] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f) fclose(f);
    ok(strstr(buf, "goto reorder_for_locality \nshow fusion  --dot ") && strstr(buf, "codegen cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0 \nquit\n"),
       "the history file holds the completed lines");
    const char *keys2[] = {"\020\020", "\n", "quit\n"};
    o = run_tty(keys2, 3, &st);
    ok(strstr(o, "static void cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0(const float") != NULL,
       "the next session recalls the history (Ctrl-P twice, Enter: the codegen line runs again)");
    free(o);
}

static void test_diff_zero(void) {
    char *o = run("load " LN "; next 5; diff 0", NULL);
    ok(strstr(o, "error: step 0 is the loaded graph: nothing to diff (steps are 1..19)") != NULL,
       "diff 0 after some steps says what step 0 is (not 'no pass applied yet')");
    free(o);
}

/* README and `make demo` promise examples/ with PyTorch's inputs and outputs: check them */
static void test_examples(void) {
    const char *ex[] = {"seed_example", "ln_gelu", "mlp", "softmax", "view_mutation"};
    const char *ty[] = {"f32[64, 64]", "f32[64, 256]", "f32[32, 10]", "f32[64, 1000]", "f32[8, 8]"};
    for (int i = 0; i < 5; i++) {
        char cmds[400], want[300];
        snprintf(cmds, sizeof cmds, "load examples/%s.py; inputs examples/inputs/%s; run; check", ex[i], ex[i]);
        char *o = run(cmds, NULL);
        snprintf(want, sizeof want, "output 0 vs PyTorch (examples/inputs/%s/out0.npy): %s ok", ex[i], ty[i]);
        ok(strstr(o, want) && strstr(o, "check: ok"), "examples/%s.py after all passes matches PyTorch's output", ex[i]);
        free(o);
    }
}
/* Files that are not files, and disks that are full: an error each, and the shell goes on
 * with its graph (graphviz's own file output would exit() the program on a failed write). */
static void test_bad_files(void) {
    if (access("/dev/full", W_OK) != 0) { skip(6, "no /dev/full"); return; }
    int st = 0;
    char *o = run("load /dev/zero; load " LN "; show fx --svg /dev/full; show fusion --png /dev/full; lint", &st);
    ok(strstr(o, "error: /dev/zero: is a device, not a graph file\n") != NULL, "load of a device is refused (not read forever)");
    ok(strstr(o, "error: /dev/full: write failed: No space left on device\n") && count_of(o, "write failed") == 2,
       "a picture that cannot be written is an error");
    ok(strstr(o, "lint: ok") != NULL, "the shell goes on with its graph after the failed writes");
    free(o);
    /* a directory nobody may write in (/proc, read-only also for root): every writer says so */
    o = run("load " LN "; show fx --svg /proc/mi.svg; save outputs /proc/mi; save session /proc/mi.txt; dump /proc/midump; "
            "trace on /proc/mi.log; save transcript /proc/t.html; lint", &st);
    ok(count_of(o, "error: /proc/") == 6 && strstr(o, "error: /proc/mi: cannot create directory: ") &&
       strstr(o, "error: /proc/mi.log: cannot open trace log for writing: ") && strstr(o, "lint: ok"),
       "six writers into a read-only directory: six errors naming the path, the session goes on");
    if (!strstr(o, "lint: ok")) diag("%s", o);
    free(o);
    o = run("load " LN "; trace on /dev/full; run; trace off; lint", &st);
    ok(strstr(o, "error: /dev/full: writing the trace log failed\n") && !strstr(o, "trace closed") && strstr(o, "lint: ok"),
       "a trace log that could not be written is reported at 'trace off'");
    free(o);
    /* `trace on` the log being written: closed first, so the new log is not written over */
    char cmds[1024];
    snprintf(cmds, sizeof cmds, "load " LN "; trace on %s/again.log; next 2; trace on %s/again.log; step; trace off", env.tmpdir, env.tmpdir);
    free(run(cmds, &st));
    snprintf(cmds, sizeof cmds, "\"%s\" tlparse %s/again.log -o %s/again_tl 2>&1", env.bin, env.tmpdir, env.tmpdir);
    FILE *p = popen(cmds, "r");
    char buf[4096] = "";
    size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    buf[n] = 0;
    if (p) pclose(p);
    ok(strstr(buf, "no log problems") && strstr(buf, " 1 compile ids"), "the log started again reads back clean");
}

/* load LOG ID for an id that is not there, or a compile without a graph: say why, and where
 * the graph is (the retry of a restarted frame). */
static void test_log_compile_hints(void) {
    const char *gb = "tests/fixtures/logs/cpu_graph_break.log";
    const char *cc = "tests/fixtures/logs/multirank/compiler_collectives_failure/dedicated_log_torch_trace_rank_0_zxb1ue1g.log";
    char cmds[1024];
    snprintf(cmds, sizeof cmds, "load %s 9/9; load %s 0/0; load %s 0/0; load %s 0/0_1", gb, gb, cc, gb);
    int st = 0;
    char *o = run(cmds, &st);
    char want[1024];
    snprintf(want, sizeof want, "error: %s: no compile 9/9 in this log (compile ids: 0/0, 0/0_1, 1/0)\n", gb);
    ok(strstr(o, want) != NULL, "an id that is not in the log: the ids are listed");
    snprintf(want, sizeof want, "error: %s: compile 0/0 has no graph (restarted: Call to `torch._dynamo.graph_break()`); "
             "its retry has one: load %s 0/0_1\n", gb, gb);
    ok(strstr(o, want) != NULL, "a restarted compile points at its retry");
    snprintf(want, sizeof want, "error: %s: compile 0/0 has no graph: failed: TypeError: sequence item 0: expected str "
             "instance, torch.device found\n", cc);
    ok(strstr(o, want) != NULL, "a failed compile says why it has no graph");
    ok(strstr(o, "0/0_1 after_joint_graph: 4 nodes (1 inputs, 2 ops)") != NULL, "and the retry loads");
    free(o);
    /* `report` without a session trace: the log the graph came from */
    snprintf(cmds, sizeof cmds, "report %s/r0; load %s 1/0; report %s/r1", env.tmpdir, gb, env.tmpdir);
    o = run(cmds, &st);
    snprintf(want, sizeof want, "report: %s/r1/index.html (3 compiles, 35 artifacts, 0 failed,", env.tmpdir);
    ok(strstr(o, "error: no trace log: start one with 'trace on FILE' (or load a graph from a TORCH_TRACE log)") &&
       strstr(o, want), "report without a trace: the loaded log's report (3 compiles, 35 artifacts)");
    free(o);
}

int main(void) {
    if (sh_init(&env, "minductor_uxXXXXXX") < 0) return 0;
    test_exec_keeps_state();
    test_output_order();
    test_truncated_log();
    test_small_kernels_serial();
    test_show_fusion_and_lint();
    test_diff_order();
    test_load_messages();
    test_sdpa_second_output();
    test_save_session_scope();
    test_ctrl_c_at_prompt();
    test_tty_completion_history();
    test_tty_diff_session_completion();
    test_diff_zero();
    test_examples();
    test_bad_files();
    test_log_compile_hints();
    sh_cleanup(&env);
    return done_testing();
}
