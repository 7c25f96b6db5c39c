/* test_shell_walk.c — what walking through the shell as its users found (session 13: a compiler
 * developer loading their own graph, a teacher, an engineer reading a trace log), each on the
 * exact text the user reads:
 *   - `diff` of a pass prints the graph before it in the form of the graph after it: the
 *     post-grad graph's SymFloat annotations are torch/_inductor/utils.py sympy_str
 *     (print_readable(fast_sympy_print=True)), the loaded AOT graph's sympy's str(); a pass
 *     that changed nothing showed its SymFloat lines as changed;
 *     and a cond branch's SymFloats print in that form too (print_readable's _override_sym_repr
 *     holds while it prints the submodules); `diff session` compares B's graph in A's form;
 *   - functionalize keeps a SymFloat node a SymFloat: an in-place op taking one
 *     (mul_.Tensor(clone, truediv_1)) failed with "has no tensor metadata";
 *   - a hand-written graph that fails lint is not lowered (an add of [4, 4] and [3, 5] became
 *     a kernel with a size guard '3 == 4'; a view of 20 elements of 16 was dropped): `lower`,
 *     `exec` name the file, the line and lint's reason;
 *   - a TORCH_TRACE log cut before the post-grad graph: `load LOG` and `load LOG ID` agree
 *     (both load its aot_joint_graph, and say so), and `load LOG ID` warns of the cut too;
 *   - `codegen NAME` takes NAME as a whole identifier ('x' printed mi_modidx(int64_t x, ...)
 *     and the rest of the file) and prints a one-line helper as its line;
 *   - `next` after the last pass says so, as `step` does (it printed nothing);
 *   - `show diff STEP` takes STEP as `diff STEP` does, with its words ("no pass applied yet"
 *     after `run` for step 0, "step 99 out of range" for a pass name it did not know);
 *   - `artifact LOG ID [NAME]`: the artifacts that are not graphs (recompile_reasons, guards,
 *     output code) were only readable through tlparse; the tours printed "minductor> @artifact"
 *     lines a learner could not type;
 *   - `load DIR` of a recorded case (graph0/, graph1/ inside) says how to load its first graph;
 *   - `help report` says a running trace is closed by it, `help trace` how to stop one.
 * Drives the built binary ($MINDUCTOR_BIN, else ./build/minductor). */
#include "tap.h"
#include "tests/support/shell_harness.h"

#include <stdlib.h>
#include <string.h>

static ShellEnv env;

/* The output of `-k -c CMDS` from the first `from` on (the whole output when it is absent,
 * so that is_str shows it); malloc'd. */
static char *output_from(const char *cmds, const char *from) {
    char *o = sh_output(&env, cmds, NULL);
    const char *p = o ? strstr(o, from) : NULL;
    char *r = strdup(p ? p : o ? o : "");
    free(o);
    return r;
}

static bool write_tmp(const char *name, const char *text, char *path, size_t n);

/* tests/fixtures/sym/symfloat_running_var.py with x * n / (n - 1) computed in place on a
 * clone of x (mul_.Tensor(clone, truediv_1)), into the temporary folder; its path in path[n] */
static bool write_inplace(char *path, size_t n) {
    char *fx = sh_read_file("tests/fixtures/sym/symfloat_running_var.py");
    const char *mul = "        mul: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.mul.Tensor(x, truediv_1);  x = truediv_1 = None\n"
                      "        return (mul,)\n";
    char *at = fx ? strstr(fx, mul) : NULL;
    bool r = false;
    if (at) {
        *at = 0;
        char text[4096];
        snprintf(text, sizeof text, "%s"
                 "        clone: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.clone.default(x);  x = None\n"
                 "        mul_: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.mul_.Tensor(clone, truediv_1);  truediv_1 = None\n"
                 "        return (mul_,)\n", fx);
        r = write_tmp("symfloat_inplace.py", text, path, n);
    }
    free(fx);
    return r;
}

/* step 1 of the running_var graph (cpu_dynamic_true_train) changes nothing: its diff is
 * empty, not the SymFloat line printed two ways */
static void test_diff_symfloat(void) {
    char *d = output_from("load tests/fixtures/sym/symfloat_running_var.py; step; diff", "diff of step");
    is_str(d, "diff of step 1 functionalize:\n(no change to the graph text)\n",
           "diff of a pass that changed nothing on a SymFloat graph: no change");
    free(d);
    /* a pass that changes something: only its lines, the SymFloat ones as context */
    char inplace[300], cmds[900];
    if (!ok(write_inplace(inplace, sizeof inplace), "the running_var graph with its mul in place")) return;
    snprintf(cmds, sizeof cmds, "load %s; step; diff", inplace);
    d = output_from(cmds, "diff of step");
    is_str(d,
           "diff of step 1 functionalize:\n"
           "--- before\n"
           "+++ after\n"
           "@@ -6,4 +6,4 @@\n"
           "         truediv_1: \"Sym(FloatTrueDiv(IntTrueDiv(8*s0*s1, 8), (IntTrueDiv(8*s0*s1, 8)) - 1.0))\" = truediv / sub;  truediv = sub = None\n"
           "         clone: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.clone.default(x);  x = None\n"
           "-        mul_: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.mul_.Tensor(clone, truediv_1);  clone = truediv_1 = None\n"
           "-        return (mul_,)\n"
           "+        mul: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.mul.Tensor(clone, truediv_1);  clone = truediv_1 = None\n"
           "+        return (mul,)\n"
           "changes:\n"
           "~ graph (functionalized: in-place ops -> functional ops + copy_ epilogue)\n",
           "diff of functionalize on a SymFloat graph: the rewritten lines only");
    free(d);
    /* the graph after all the passes, as inductor_post_grad_graph prints it */
    snprintf(cmds, sizeof cmds, "load %s; run; graph", inplace);
    d = output_from(cmds, "class GraphModule");
    is_str(d,
           "class GraphModule(torch.nn.Module):\n"
           "    def forward(self, x: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\"):\n"
           "        sym_numel_default: \"Sym(8*s0*s1)\" = torch.ops.aten.sym_numel.default(x)\n"
           "        truediv: \"Sym(IntTrueDiv(8*s0*s1, 8))\" = sym_numel_default / 8;  sym_numel_default = None\n"
           "        sub: \"Sym(-1.00000000000000 + IntTrueDiv(8*s0*s1, 8))\" = truediv - 1.0\n"
           "        truediv_1: \"Sym(FloatTrueDiv(IntTrueDiv(8*s0*s1, 8), (IntTrueDiv(8*s0*s1, 8)) - 1.0))\" = truediv / sub;  truediv = sub = None\n"
           "        mul: \"f32[s0, 8, s1][8*s1, s1, 1]cpu\" = torch.ops.aten.mul.Tensor(x, truediv_1);  x = truediv_1 = None\n"
           "        return (mul,)\n",
           "an in-place op on a SymFloat functionalizes; the passes end in the post-grad form");
    free(d);
    /* and its numbers: x * n / (n - 1), n = 2*8*3 / 8 = 6, by the interpreter and the C module */
    snprintf(cmds, sizeof cmds, "load %s; inputs random; run; check; exec 1", inplace);
    char *o = sh_output(&env, cmds, NULL);
    ok(sh_text_has(o, "check: ok") && sh_text_has(o, "exec: ok"), "the functionalized graph checks and runs");
    free(o);
}

/* text has `line` as a whole line; when not, the text as a TAP comment */
/* how many times w stands in text */
static int sh_count_of(const char *text, const char *w) {
    int c = 0;
    for (const char *p = text; p && (p = strstr(p, w)); p += strlen(w)) c++;
    return c;
}

static bool has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; p && (p = strstr(p, line)); p += n)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0)) return true;
    diag("missing line: %s\nin:\n%s", line, text ? text : "(null)");
    return false;
}

/* a file of the test's temporary folder holding text; its path in path[n] */
static bool write_tmp(const char *name, const char *text, char *path, size_t n) {
    snprintf(path, n, "%s/%s", env.tmpdir, name);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(text, f);
    return fclose(f) == 0;
}

/* a cond whose true branch computes x * (n / 4 - 1.0), n = numel(x) (a SymFloat of the
 * branch's own input, tests/fixtures/hop/cond_dynamic.py's shape) */
static void test_branch_symfloat(void) {
    char path[300], cmds[600];
    ok(write_tmp("cond_symfloat.py",
                 "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, arg0_1: \"Sym(s0)\", arg1_1: \"f32[s0, 4][4, 1]cpu\"):\n"
                 "        sum_1: \"f32[][]cpu\" = torch.ops.aten.sum.default(arg1_1)\n"
                 "        gt: \"b8[][]cpu\" = torch.ops.aten.gt.Scalar(sum_1, 0);  sum_1 = None\n"
                 "        true_graph_0 = self.true_graph_0\n"
                 "        false_graph_0 = self.false_graph_0\n"
                 "        cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (arg1_1,));  gt = true_graph_0 = false_graph_0 = arg1_1 = None\n"
                 "        getitem: \"f32[s0, 4][4, 1]cpu\" = cond[0];  cond = None\n"
                 "        return (getitem,)\n"
                 "\n"
                 "    class true_graph_0(torch.nn.Module):\n"
                 "        def forward(self, arg1_1: \"f32[s0, 4][4, 1]cpu\"):\n"
                 "            sym_numel_default: \"Sym(4*s0)\" = torch.ops.aten.sym_numel.default(arg1_1)\n"
                 "            truediv: \"Sym(IntTrueDiv(4*s0, 4))\" = sym_numel_default / 4;  sym_numel_default = None\n"
                 "            sub: \"Sym((IntTrueDiv(4*s0, 4)) - 1.0)\" = truediv - 1.0;  truediv = None\n"
                 "            mul: \"f32[s0, 4][4, 1]cpu\" = torch.ops.aten.mul.Tensor(arg1_1, sub);  arg1_1 = sub = None\n"
                 "            return (mul,)\n"
                 "\n"
                 "    class false_graph_0(torch.nn.Module):\n"
                 "        def forward(self, arg1_1: \"f32[s0, 4][4, 1]cpu\"):\n"
                 "            cos: \"f32[s0, 4][4, 1]cpu\" = torch.ops.aten.cos.default(arg1_1);  arg1_1 = None\n"
                 "            return (cos,)\n", path, sizeof path), "write the cond graph");
    snprintf(cmds, sizeof cmds, "load %s; graph; step; diff; run; graph", path);
    char *o = sh_output(&env, cmds, NULL);
    const char *asread = "            sub: \"Sym((IntTrueDiv(4*s0, 4)) - 1.0)\" = truediv - 1.0;  truediv = None";
    const char *fast = "            sub: \"Sym(-1.00000000000000 + IntTrueDiv(4*s0, 4))\" = truediv - 1.0;  truediv = None";
    const char *d = o ? strstr(o, "diff of step 1") : NULL;
    ok(d && !strncmp(d, "diff of step 1 functionalize:\n(no change to the graph text)\n", 60),
       "step 1 on the cond graph: no change");
    ok(has_line(o, asread) && has_line(o, fast) && strstr(o, asread) < strstr(o, fast),
       "the branch's SymFloat: as read when loaded, sympy_str after the passes");
    free(o);
}

/* two scripts, the running_var graph loaded and the same graph after the passes: the same
 * nodes; only the steps differ */
static void test_diff_session_symfloat(void) {
    char a[300], b[300], cmds[800];
    ok(write_tmp("sa.mi", "load tests/fixtures/sym/symfloat_running_var.py\n", a, sizeof a) &&
       write_tmp("sb.mi", "load tests/fixtures/sym/symfloat_running_var.py\nrun\n", b, sizeof b), "write the two scripts");
    snprintf(cmds, sizeof cmds, "diff session %s %s", a, b);
    char *o = sh_output(&env, cmds, NULL);
    ok(has_line(o, "graph after the applied passes: A 7 nodes, B 7 nodes") && has_line(o, "  same, node by node"),
       "diff session: a SymFloat printed two ways is the same node");
    free(o);
}

static void test_lint_before_lowering(void) {
    char bc[300], vw[300], cmds[1000], want[1200];
    ok(write_tmp("broadcast.py",
                 "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, x: \"f32[4, 4][4, 1]cpu\", y: \"f32[3, 5][5, 1]cpu\"):\n"
                 "        add: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.add.Tensor(x, y)\n"
                 "        return (add,)\n", bc, sizeof bc) &&
       write_tmp("view.py",
                 "class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, x: \"f32[4, 4][4, 1]cpu\"):\n"
                 "        mm: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.mm.default(x, x)\n"
                 "        view: \"f32[5, 4][4, 1]cpu\" = torch.ops.aten.view.default(mm, [5, 4])\n"
                 "        return (view,)\n", vw, sizeof vw), "write the two graphs");
    snprintf(cmds, sizeof cmds, "load %s; lower", bc);
    char *o = sh_output(&env, cmds, NULL);
    snprintf(want, sizeof want, "error: %s:3: lowering: the graph fails lint (1 problem; 'lint' lists them): node 'add': "
             "aten.add.Tensor: shapes do not broadcast: size 4 vs 3 at dimension 0", bc);
    ok(has_line(o, want), "lower: an add that does not broadcast is refused with lint's reason");
    ok(!strstr(o, "lowered to"), "nothing lowered");
    free(o);
    snprintf(cmds, sizeof cmds, "load %s; run; exec 1", vw);
    o = sh_output(&env, cmds, NULL);
    snprintf(want, sizeof want, "error: %s:4: lowering: the graph fails lint (1 problem; 'lint' lists them): node 'view': "
             "aten.reshape.default: shape of 20 elements is invalid for input of size 16", vw);
    ok(has_line(o, want), "exec after the passes: a view of 20 elements of 16 is refused, naming the node's line");
    ok(!strstr(o, "compiling"), "nothing compiled");
    free(o);
}

/* the first 30000 bytes of the training log: compile 0/0 up to its aot_joint_graph */
static void test_truncated_log_load(void) {
    char *log = sh_read_file("tests/fixtures/logs/cpu_mlp_train.log");
    char path[300], cmds[800], want[1200];
    if (!ok(log && strlen(log) > 30000, "read cpu_mlp_train.log")) { free(log); return; }
    log[30000] = 0;
    ok(write_tmp("cut.log", log, path, sizeof path), "write its first 30000 bytes");
    free(log);
    snprintf(cmds, sizeof cmds, "load %s; graph; load %s 0/0", path, path);
    char *o = sh_output(&env, cmds, NULL);
    snprintf(want, sizeof want, "warning: %s:547: truncated_payload: torch._functorch.config: log ends inside the payload "
             "(1 problem line in the log; 'minductor tlparse %s' lists them)", path, path);
    is_int(sh_count_of(o, want), 2, "the cut is named by `load LOG` and by `load LOG ID`");
    snprintf(want, sizeof want, "loaded %s compile 0/0 aot_joint_graph: 31 nodes (6 inputs, 24 ops)", path);
    ok(has_line(o, want), "load LOG: the one compile's aot_joint_graph, named");
    snprintf(want, sizeof want, "loaded %s 0/0 aot_joint_graph: 31 nodes (6 inputs, 24 ops)", path);
    ok(has_line(o, want), "load LOG ID: the same graph, named");
    ok(has_line(o, "class inner_f(torch.nn.Module):"), "the joint graph is the current graph");
    free(o);
}

static void test_codegen_name(void) {
    char *o = sh_output(&env, "load examples/softmax.py; codegen x", NULL);
    ok(has_line(o, "error: no function 'x' in the generated code (see 'sched' for kernel names)"),
       "codegen x: no function x (not the x of a helper's parameters)");
    free(o);
    o = output_from("load examples/softmax.py; codegen mi_modidx", "static inline");
    is_str(o, "static inline int64_t mi_modidx(int64_t x, int64_t d, int64_t m) { return mi_mod(mi_floordiv(x, d), m); }\n",
           "codegen of a one-line helper: its line");
    free(o);
}

static void test_next_at_end_and_help(void) {
    char *o = output_from("load examples/softmax.py; run; next 3; next; next 0; step", "all 19 applied passes");
    is_str(o, "all 19 applied passes lint clean; numerics not checked (no inputs)\n"
              "all passes applied\nall passes applied\nall passes applied\n",
           "next / next 3 / step after the last pass: 'all passes applied'; next 0: nothing");
    free(o);
    o = output_from("help report; help trace", "usage: report");
    is_str(o, "usage: report [DIR] | report --all-ranks LOGDIR [DIR]\n"
              "Turn the current trace log into a tlparse-like HTML report in DIR (default tl_out); without\n"
              "one, the TORCH_TRACE log the graph was loaded from. A trace still being written is closed\n"
              "first (its compile ends there, as a finished run's log does); 'trace on FILE' starts another.\n"
              "--all-ranks: LOGDIR's dedicated_log_torch_trace_rank_N_*.log files, parsed in parallel, one\n"
              "report per rank under DIR/rank_N/ and a landing page lining the ranks up (divergent compile\n"
              "ids, failures, collective sequences per rank).\n"
              "usage: trace on FILE | trace off | trace\n"
              "Write a TORCH_TRACE log of what the session does (graphs, pass steps, code) to FILE;\n"
              "'trace off' closes it, 'trace' alone says where it goes. 'report' turns it into HTML.\n",
           "help report and help trace");
    free(o);
}

static void test_show_diff_steps(void) {
    char *o = sh_output(&env, "show diff; load examples/mlp.py; run; show diff 0; show diff 99; show diff nonsense; "
                              "diff 0", NULL);
    ok(has_line(o, "error: no graph loaded (try 'load FILE')"), "show diff without a graph");
    is_int(sh_count_of(o, "error: step 0 is the loaded graph: nothing to diff (steps are 1..19)"), 2,
           "show diff 0 and diff 0: the same error");
    ok(has_line(o, "error: '99' is neither a step number 0..19 nor a pass name (see 'passes')") &&
       has_line(o, "error: 'nonsense' is neither a step number 0..19 nor a pass name (see 'passes')"),
       "show diff of a step that is not there: diff's words");
    free(o);
    o = output_from("load examples/mlp.py; run; show diff view_to_reshape", "diff of step");
    const char *head = "diff of step 2 view_to_reshape: 0 added, 0 removed, 0 rewritten\ndigraph diff {\n";
    ok(o && !strncmp(o, head, strlen(head)),
       "show diff PASS: the DOT text of that step");
    free(o);
}

static void test_load_case_dir(void) {
    char *o = sh_output(&env, "load tests/fixtures/torch-cases/cpu/graph_break", NULL);
    ok(has_line(o, "error: tests/fixtures/torch-cases/cpu/graph_break: is a directory, not a graph file (a recorded case "
                   "with 2 graphs: try 'load tests/fixtures/torch-cases/cpu/graph_break/graph0/pre_post_grad.py; "
                   "inputs tests/fixtures/torch-cases/cpu/graph_break/graph0')"),
       "load of a recorded case's folder: the hint names its first graph and inputs");
    free(o);
}

#define RECOMPILE "tests/fixtures/logs/cpu_recompile.log"

static void test_artifact(void) {
    char *o = output_from("artifact " RECOMPILE " 0/1; artifact " RECOMPILE " 0/1 recompile_reasons", "compile 0/1");
    is_str(o, "compile 0/1 of " RECOMPILE ": 18 artifacts\n"
              "  recompile_reasons, dynamo_output_graph, before_pre_grad_graph, after_pre_grad_graph,\n"
              "  aotautograd_cache_miss, aot_forward_graph_fw_metadata, aot_inference_graph,\n"
              "  torch._functorch.config, before_joint_graph, after_joint_graph, fx_graph_runnable,\n"
              "  before_post_grad_graph, inductor_post_grad_graph, inductor_output_code,\n"
              "  inductor_provenance_tracking_node_mappings, inductor_provenance_tracking_kernel_stack_traces,\n"
              "  fx_graph_cache_miss, dynamo_cpp_guards_str\n"
              "recompile_reasons artifact of compile 0/1 in " RECOMPILE ":\n"
              "0/0: tensor 'x' size mismatch at index 0. expected 16, actual 32\n",
           "artifact: the compile's artifacts, then one as the log holds it");
    free(o);
    o = sh_output(&env, "artifact tests/fixtures/logs/cpu_mlp_train.log 0/0 inductor_output_code#2; "
                        "artifact " RECOMPILE " 0/0 recompile_reasons; artifact " RECOMPILE " 7/0; artifact README.md 0/0", NULL);
    ok(o && strstr(o, "inductor_output_code#2 artifact of compile 0/0 in tests/fixtures/logs/cpu_mlp_train.log:\n"
                      "# AOT ID: ['0_backward']\n"), "NAME#2: the backward's output code");
    ok(o && strstr(o, "error: " RECOMPILE ": compile 0/0 has no artifact recompile_reasons; its artifacts: dynamo_output_graph, "),
       "an artifact the compile does not have: its artifacts named");
    ok(has_line(o, "error: " RECOMPILE ": no compile 7/0 in this log (compile ids: 0/0, 0/1)"), "a compile that is not there");
    ok(has_line(o, "error: README.md: not a TORCH_TRACE log"), "not a log");
    free(o);
    o = sh_output(&env, "tour dynamic; next; next; next", NULL);
    ok(has_line(o, "minductor> artifact tests/fixtures/logs/cpu_recompile.log 0/1 recompile_reasons"),
       "the tour shows the command a learner can type");
    free(o);
}

int main(void) {
    if (sh_init(&env, "minductor_walkXXXXXX") < 0) return 0;
    test_diff_symfloat();
    test_branch_symfloat();
    test_diff_session_symfloat();
    test_lint_before_lowering();
    test_truncated_log_load();
    test_codegen_name();
    test_next_at_end_and_help();
    test_show_diff_steps();
    test_load_case_dir();
    test_artifact();
    sh_cleanup(&env);
    return done_testing();
}
