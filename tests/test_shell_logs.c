/* test_shell_logs.c — the shell on a TRAINING job's TORCH_TRACE log, where one compile id
 * (0/0) holds two graphs that went through Inductor's post-grad passes: the forward and, compiled
 * lazily at the first backward call, the backward. `load LOG` lists each compile's graph
 * artifacts (numbered when a name repeats, marked forward/backward/joint from the log's
 * chromium events); `load LOG 0/0 NAME#N`, `forward`, `backward` pick one; an unknown name lists
 * what exists; the backward runs on PyTorch's recorded inputs and matches its outputs; Tab
 * completes compile ids and graph names. Fixture: tests/fixtures/logs/cpu_mlp_train.log, PyTorch
 * 2.11's log of cpu/mlp_train with the cache-miss dumps cut (see tests/fixtures/logs/README.md).
 * Drives the built binary ($MINDUCTOR_BIN, else ./build/minductor). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tap.h"
#include "tests/support/shell_harness.h"

static ShellEnv env;

#define TRAIN "tests/fixtures/logs/cpu_mlp_train.log"
#define SEED "tests/fixtures/logs/cpu_seed_example.log"
#define GRAPH1 "tests/fixtures/torch-cases/cpu/mlp_train/graph1"

/* stdout and stderr of `bin -q -k ARGS` through one pipe (ARGS is shell text; the shared
 * harness) */
static char *run_args(const char *args) {
    char opts[2048];
    snprintf(opts, sizeof opts, "-q -k %s", args);
    return sh_run(&env, opts, NULL, NULL).out;
}

static char *run(const char *cmds) {
    setenv("MI_LOGS_CMDS", cmds, 1);
    return run_args("-c \"$MI_LOGS_CMDS\"");
}

static const char listing[] =
    TRAIN ": 1 compile\n"
    "  0/0      ok                                       24 artifacts, has a graph\n"
    "           graphs: dynamo_output_graph, before_pre_grad_graph, after_pre_grad_graph,\n"
    "                   aot_joint_graph (joint), aot_forward_graph (forward),\n"
    "                   aot_backward_graph (backward), before_post_grad_graph#1 (forward),\n"
    "                   inductor_post_grad_graph#1 (forward), before_post_grad_graph#2 (backward),\n"
    "                   inductor_post_grad_graph#2 (backward)\n";

static const char graphs[] =
    "its graphs: dynamo_output_graph, before_pre_grad_graph, after_pre_grad_graph, aot_joint_graph (joint), "
    "aot_forward_graph (forward), aot_backward_graph (backward), before_post_grad_graph#1 (forward), "
    "inductor_post_grad_graph#1 (forward), before_post_grad_graph#2 (backward), inductor_post_grad_graph#2 (backward) "
    "(load " TRAIN " 0/0 NAME, NAME#N for the N-th of a repeated name)\n";

/* `minductor LOG` and `load LOG`: the graphs of each compile, and the default (the forward) */
static void test_listing(void) {
    char *o = run_args(TRAIN " -c quit");
    is_str(o, "tests/fixtures/logs/cpu_mlp_train.log: 1 compile\n"
              "  0/0      ok                                       24 artifacts, has a graph\n"
              "           graphs: dynamo_output_graph, before_pre_grad_graph, after_pre_grad_graph,\n"
              "                   aot_joint_graph (joint), aot_forward_graph (forward),\n"
              "                   aot_backward_graph (backward), before_post_grad_graph#1 (forward),\n"
              "                   inductor_post_grad_graph#1 (forward), before_post_grad_graph#2 (backward),\n"
              "                   inductor_post_grad_graph#2 (backward)\n"
              "note: before_post_grad_graph#1 equals inductor_post_grad_graph: torch logs it after view_to_reshape and the example inputs' meta propagation, so it shows no pass at work. Loaded aot_forward_graph, the graph Inductor was handed, with the example inputs' layouts of fx_graph_runnable; steps view_to_reshape and fake_tensor_prop redo the rest\n"
              "loaded " TRAIN " compile 0/0 aot_forward_graph (forward): 11 nodes (5 inputs, 5 ops)\n"
              "  the backward: load " TRAIN " 0/0 backward\n",
           "minductor LOG: graphs listed in log order, numbered, forward/backward marked; the forward loads");
    free(o);
    o = run("load " TRAIN);
    ok(!strncmp(o, listing, strlen(listing)), "load LOG lists the same");
    free(o);
    /* an inference log: no forward/backward marks, nothing numbered */
    o = run("load " SEED);
    ok(strstr(o, "  0/0      ok                                       17 artifacts, has a graph\n"
                 "           graphs: dynamo_output_graph, before_pre_grad_graph, after_pre_grad_graph,\n"
                 "                   aot_inference_graph, before_joint_graph, after_joint_graph,\n"
                 "                   before_post_grad_graph, inductor_post_grad_graph\n"
                 "note: before_post_grad_graph equals inductor_post_grad_graph: torch logs it after view_to_reshape and the "
                 "example inputs' meta propagation, so it shows no pass at work. Loaded after_joint_graph, the graph Inductor "
                 "was handed, with the example inputs' layouts of fx_graph_runnable; steps view_to_reshape and "
                 "fake_tensor_prop redo the rest\n"
                 "loaded " SEED " compile 0/0 after_joint_graph: 5 nodes (1 inputs, 3 ops)\n") != NULL,
       "an inference compile: graphs listed without marks; the graph Inductor was handed loads, saying why");
    free(o);
}

static void test_pick(void) {
    static const struct { const char *spec, *want; } cases[] = {
        {"before_post_grad_graph#2", "loaded " TRAIN " 0/0 before_post_grad_graph#2 (backward): 19 nodes (4 inputs, 14 ops)\n"},
        {"backward", "note: before_post_grad_graph#2 equals inductor_post_grad_graph: torch logs it after view_to_reshape and the example inputs' meta propagation, so it shows no pass at work. Loaded aot_backward_graph, the graph Inductor was handed, with the example inputs' layouts of fx_graph_runnable; steps view_to_reshape and fake_tensor_prop redo the rest\n" "loaded " TRAIN " 0/0 aot_backward_graph (backward): 19 nodes (4 inputs, 14 ops)\n"},
        {"forward", "note: before_post_grad_graph#1 equals inductor_post_grad_graph: torch logs it after view_to_reshape and the example inputs' meta propagation, so it shows no pass at work. Loaded aot_forward_graph, the graph Inductor was handed, with the example inputs' layouts of fx_graph_runnable; steps view_to_reshape and fake_tensor_prop redo the rest\n" "loaded " TRAIN " 0/0 aot_forward_graph (forward): 11 nodes (5 inputs, 5 ops)\n"},
        {"before_post_grad_graph", "loaded " TRAIN " 0/0 before_post_grad_graph#1 (forward): 11 nodes (5 inputs, 5 ops)\n"},
        {"before_post_grad_graph#1", "loaded " TRAIN " 0/0 before_post_grad_graph#1 (forward): 11 nodes (5 inputs, 5 ops)\n"},
        {"inductor_post_grad_graph#2", "loaded " TRAIN " 0/0 inductor_post_grad_graph#2 (backward): 19 nodes (4 inputs, 14 ops)\n"},
        {"aot_backward_graph", "loaded " TRAIN " 0/0 aot_backward_graph (backward): 19 nodes (4 inputs, 14 ops)\n"},
        {"aot_joint_graph", "loaded " TRAIN " 0/0 aot_joint_graph (joint): 31 nodes (6 inputs, 24 ops)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "load " TRAIN " 0/0 %s", cases[i].spec);
        char *o = run(cmd);
        is_str(o, cases[i].want, "load LOG 0/0 %s", cases[i].spec);
        free(o);
    }
    /* the backward's graph is the one PyTorch's backward got: its graph text, node for node */
    char *o = run("load " TRAIN " 0/0 backward; graph");
    ok(strstr(o, "        where: \"f32[32, 128][128, 1]cpu\" = torch.ops.aten.where.self(le, full_default, mm);") &&
       strstr(o, "        return (mm_2, view_1, None, mm_1, view)\n") && strstr(o, "def forward(self, primals_3: "),
       "the backward graph's text, printed as Inductor prints what it was handed (where ..., return (mm_2, ...))");
    free(o);
}

static void test_errors(void) {
    char *o = run("load " TRAIN " 0/0 nope");
    ok(!strncmp(o, "error: " TRAIN ": no artifact \"nope\" for compile id 0/0 in this log; ", 80) &&
       strstr(o, graphs) != NULL, "unknown name: the graphs listed");
    free(o);
    o = run("load " TRAIN " 0/0 before_post_grad_graph#3");
    ok(strstr(o, "error: " TRAIN ": compile 0/0 has 2 \"before_post_grad_graph\" artifacts, no \"before_post_grad_graph#3\"; ") &&
       strstr(o, graphs), "#3 of a name logged twice: says there are 2, lists the graphs");
    free(o);
    o = run("load " TRAIN " 0/0 before_post_grad_graph#x");
    ok(strstr(o, "compile 0/0 has 2 \"before_post_grad_graph\" artifacts, no \"before_post_grad_graph#x\"") != NULL,
       "#x is not a number: same error");
    free(o);
    o = run("load " TRAIN " 0/0 before_post_grad_graph#0");
    ok(strstr(o, "no \"before_post_grad_graph#0\"") != NULL, "#0: occurrences count from 1");
    free(o);
    o = run("load " SEED " 0/0 backward");
    ok(strstr(o, "error: " SEED ": compile 0/0 has no graph the log marks as backward; its graphs: dynamo_output_graph, "
                 "before_pre_grad_graph, after_pre_grad_graph, aot_inference_graph,") != NULL,
       "backward of an inference compile: says so, lists the graphs");
    free(o);
    o = run("load " TRAIN " 3/0 backward");
    ok(strstr(o, "error: " TRAIN ": no compile id 3/0 in this log") != NULL, "an unknown compile id is named");
    free(o);
    /* the graph loaded before an error stays */
    o = run("load " TRAIN " 0/0 backward; load " TRAIN " 0/0 nope; lint");
    ok(strstr(o, "lint: ok") != NULL, "a failed load keeps the loaded graph");
    free(o);
}

/* The backward on PyTorch's recorded inputs (graph1 of the case is the backward): run the
 * passes, and `check` agrees with PyTorch's recorded outputs. */
static void test_backward_inputs(void) {
    char *o = run("load " TRAIN " 0/0 backward; inputs " GRAPH1 "; run; check");
    ok(strstr(o, "  3 tangents_1: f32[32, 10] {1, 1, 1, 1, 1, 1, ...}\n") != NULL, "the recorded inputs match the backward's placeholders");
    ok(strstr(o, "all 19 applied passes clean") != NULL, "the passes run on the backward");
    ok(strstr(o, "output 0 vs PyTorch (" GRAPH1 "/out0.npy): f32[128, 64] ok") && strstr(o, "output 4 vs PyTorch (" GRAPH1 "/out4.npy): f32[10] ok") &&
       strstr(o, "check: ok (5 outputs, max abs err "), "check agrees with PyTorch's recorded backward outputs");
    ok(!strstr(o, "error"), "no error");
    free(o);
}

/* An interactive shell on a pseudo-terminal; each of `keys` is written after the output
 * went quiet for a moment (readline is then waiting at the prompt). All output returned. */
static char *run_tty(const char *const *keys, int nkeys, int *status) {
    ShStep steps[16];
    for (int i = 0; i < nkeys && i < 16; i++) steps[i] = (ShStep){NULL, keys[i]};
    ShResult r = sh_tty_dialogue(&env, NULL, steps, nkeys < 16 ? nkeys : 16, 20);
    *status = r.status;
    return r.out;
}

/* Tab after `load LOG ` completes the compile id, after the id the graph names */
static void test_completion(void) {
    const char *keys[] = {"load " TRAIN " 0/\t", "back\t", "\n",
                          "load " TRAIN " 0/0 inductor_post\t", "1\n", "quit\n"};
    int st = 0;
    char *o = run_tty(keys, 6, &st);
    if (st == -2 || st == 126) { skip(2, "no pseudo-terminal"); free(o); return; }
    ok(strstr(o, "loaded " TRAIN " 0/0 aot_backward_graph (backward): 19 nodes") != NULL,
       "'load LOG 0/<Tab>back<Tab>' completes the compile id and 'backward'");
    /* two candidates (#1, #2) share the prefix up to '#': readline stops there, the typed
     * '1' finishes the name (a unique candidate would have got a space after it) */
    ok(strstr(o, "loaded " TRAIN " 0/0 inductor_post_grad_graph#1 (forward): 11 nodes") != NULL,
       "'inductor_post<Tab>1' completes to 'inductor_post_grad_graph#1' and loads it");
    free(o);
}

int main(void) {
    if (sh_init(&env, "minductor_logsXXXXXX") < 0) return 0;
    test_listing();
    test_pick();
    test_errors();
    test_backward_inputs();
    test_completion();
    sh_cleanup(&env);
    return done_testing();
}
