/* test_shell_interrupt.c — Ctrl-C in the interactive shell stops the running command and
 * gives the prompt back with the session intact (issue #16 item 1): on a pseudo-terminal, a
 * long `run` (the numerics check of each pass runs the interpreter), a long `exec` (2 000 000
 * timed runs) and a long `show` (Graphviz laying out 800 wide nodes) are each interrupted with
 * Ctrl-C; the shell answers `graph`, `passes` and `inputs` afterwards, with the pass cursor,
 * inputs and compiled state it had. A script interrupted the same way stops with status 130,
 * also in `report` reading a 60 MB TORCH_TRACE log (the reader polls Ctrl-C: tlparse of a
 * large log takes seconds, and showed no progress and could not be stopped).
 * Drives the built binary ($MINDUCTOR_BIN, else ./build/minductor). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"
#include "tests/support/shell_harness.h"

static ShellEnv env;

/* A wide graph: n binary ops (add/mul/sub of the last value and any earlier one), each followed
 * by a tanh so values stay bounded; long edges make Graphviz's layout slow; every 50th value
 * goes through a clone, which remove_noop_ops (pass 6) removes, so `run` interprets the graph
 * again to check that pass. */
static void write_wide_graph(const char *path, int n, int size) {
    FILE *f = fopen(path, "w");
    if (!f) return;
    char ann[64];
    snprintf(ann, sizeof ann, "f32[%d, %d][%d, 1]cpu", size, size, size);
    fprintf(f, "class GraphModule(torch.nn.Module):\n    def forward(self, arg0_1: \"%s\", arg1_1: \"%s\"):\n", ann, ann);
    char (*names)[32] = calloc((size_t)n + 2, sizeof *names);
    snprintf(names[0], 32, "arg0_1");
    snprintf(names[1], 32, "arg1_1");
    int have = 2;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    static const char *const ops[] = {"add.Tensor", "mul.Tensor", "sub.Tensor"};
    for (int i = 0; i < n; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int recent = have - 1;            /* every value is used: nothing for dce to remove */
        int any = (int)((rng >> 33) % (uint64_t)have);
        fprintf(f, "        op_%d: \"%s\" = torch.ops.aten.%s(%s, %s)\n", i, ann, ops[i % 3], names[recent], names[any]);
        fprintf(f, "        tanh_%d: \"%s\" = torch.ops.aten.tanh.default(op_%d)\n", i, ann, i);
        snprintf(names[have++], 32, "tanh_%d", i);
        if (i % 50 == 49) {   /* a clone for remove_noop_ops: that pass changes the graph */
            fprintf(f, "        clone_%d: \"%s\" = torch.ops.aten.clone.default(tanh_%d)\n", i, ann, i);
            snprintf(names[have - 1], 32, "clone_%d", i);
        }
    }
    fprintf(f, "        return (%s,)\n", names[have - 1]);
    free(names);
    fclose(f);
}

/* The text printed between the first `from` and the next `to` (or the end); malloc'd. */
static char *between(const ShResult *r, const char *from, const char *to) {
    long a = sh_pos(r, from, 0);
    if (a < 0) return strdup("");
    long b = sh_pos(r, to, a + (long)strlen(from));
    size_t n = b < 0 ? strlen(r->out + a) : (size_t)(b - a);
    char *s = malloc(n + 1);
    memcpy(s, r->out + a, n);
    s[n] = 0;
    return s;
}

static void test_interactive(const char *graph) {
    char svg[700], show[900];
    snprintf(svg, sizeof svg, "%s/wide.svg", env.tmpdir);
    snprintf(show, sizeof show, "show fx --collapse 100000 --svg %s\n", svg);
    const char *args[] = {graph, NULL};
    const ShStep steps[] = {
        {"minductor> ", "inputs random 7\n"},
        {"inputs (random 7)", NULL},
        {"minductor> ", "next 2\n"},                 /* the cursor and its checks before the run */
        {"minductor> ", "run\n"},
        {"running passes 3..", NULL},
        /* the step line of post_grad_custom_pre_pass comes just before remove_noop_ops (next in
         * Inductor's order) changes the graph and its check interprets 800 ops on 256x256
         * tensors: Ctrl-C lands in that check */
        {" post_grad_custom_pre_pass: ", "\003"},
        {"interrupted (Ctrl-C)", NULL},
        {"minductor> ", "passes\n"},
        {"minductor> ", "lower\n"},
        {"lowered to", NULL},
        {"minductor> ", "exec 2000000\n"},
        {"timing 2000000 runs", NULL},
        {"] timing runs: ", "\003"},                /* Ctrl-C in the timing loop */
        {"interrupted (Ctrl-C)", NULL},
        {"minductor> ", show},
        {"rendering ", NULL},
        {"] drawing (seconds): ", "\003"},          /* Ctrl-C while graphviz lays it out */
        {"interrupted (Ctrl-C)", NULL},
        {"minductor> ", "graph\n"},
        {"minductor> ", "inputs\n"},
        {"minductor> ", "exec 0\n"},                 /* the compiled module is still there */
        {"exec: ok", NULL},
        {"minductor> ", "quit\n"},
    };
    ShResult r = sh_tty_dialogue(&env, args, steps, (int)(sizeof steps / sizeof steps[0]), 240);
    if (r.status == -2) { skip(12, "no pseudo-terminal"); sh_result_free(&r); return; }
    is_int(r.status, 0, "the shell survives three Ctrl-C and exits 0 at quit");
    if (r.status != 0) diag("%s", r.out);
    ok(!sh_sanitizer_report(&r), "no sanitizer report");

    /* run: stopped in a pass, nothing recorded for it; the steps before it stay */
    long run = sh_pos(&r, "running passes 3..", 0);
    long intr = sh_pos(&r, "interrupted (Ctrl-C)", run);
    ok(run >= 0 && intr > run, "run: Ctrl-C stops it");
    char *msg = between(&r, "interrupted (Ctrl-C)", "\n");
    ok(strstr(msg, "while checking pass ") && strstr(msg, " remove_noop_ops;") &&
       strstr(msg, "back at the prompt, the session as it was"), "run: the message names the pass it stopped in (%s)", msg);
    ok(sh_has(&r, " after post_grad_custom_pre_pass\r\n"), "run: it says where the cursor is");
    free(msg);
    char *passes = between(&r, "passes\r\n", "minductor> ");
    ok(strstr(passes, " 1 . functionalize") != NULL && !strstr(passes, " ! "),
       "passes: the steps before the interrupt are recorded, no step is marked failed");
    const char *noop = strstr(passes, "   remove_noop_ops");
    ok(noop && noop - passes >= 5 && noop[-5] == '>' && !strstr(passes, "passes applied"),
       "passes: the cursor stopped before the interrupted pass, which has no record");
    free(passes);

    /* exec: the timing loop stops and says how far it got */
    long ex = sh_pos(&r, "timing 2000000 runs", 0);
    msg = ex >= 0 ? between(&r, "interrupted (Ctrl-C) while timing", "\n") : strdup("");
    ok(strstr(msg, "runs done") != NULL, "exec: Ctrl-C stops the timing loop (%s)", msg);
    free(msg);

    /* show: graphviz's layout is killed; no picture is written */
    msg = between(&r, "interrupted (Ctrl-C) while drawing", "\n");
    ok(strstr(msg, "nodes (graphviz stopped after") != NULL, "show: Ctrl-C stops the drawing (%s)", msg);
    free(msg);
    ok(access(svg, F_OK) != 0 || !sh_file_has(svg, "</svg>"), "show: no complete picture was written");

    /* the session afterwards */
    long g = sh_pos(&r, "graph\r\n", sh_pos(&r, "interrupted (Ctrl-C) while drawing", 0));
    ok(g >= 0 && sh_pos(&r, "class GraphModule(torch.nn.Module):", g) > g && sh_pos(&r, "return (clone_399,)", g) > g,
       "the session answers 'graph' afterwards");
    ok(sh_has(&r, "] timing runs: ") && sh_has(&r, "] drawing (seconds): "),
       "the long exec and show showed progress before the interrupt");
    ok(sh_pos(&r, "inputs (random 7):", g) > g, "the inputs are the ones set before the interrupts");
    long e0 = sh_pos(&r, "exec 0\r\n", g);
    ok(e0 > 0 && sh_pos(&r, "loaded already", e0) > e0 && sh_pos(&r, "exec: ok", e0) > e0,
       "the lowered and compiled state survives: exec 0 reuses the module and agrees");
    ok(sh_count(&r, "interrupted (Ctrl-C)") == 3, "three interrupts, three messages");
    sh_result_free(&r);
}

/* A script (stdin not a terminal) stops at Ctrl-C with status 130: SIGINT to the shell alone,
 * as `kill -INT` does. */
static void test_script(const char *graph) {
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "exec '%s' -q -c 'load %s; lower; exec 2000000; graph' </dev/null >%s/script.out 2>&1",
             env.bin, graph, env.tmpdir);
    pid_t pid = fork();
    if (pid == 0) { execl("/bin/sh", "sh", "-c", cmd, (char *)NULL); _exit(127); }
    char path[700];
    snprintf(path, sizeof path, "%s/script.out", env.tmpdir);
    for (int i = 0; i < 1200 && !sh_file_has(path, "timing 2000000 runs"); i++) usleep(100000);
    kill(pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 130, "a script interrupted by SIGINT exits 130");
    ok(sh_file_has(path, "interrupted (Ctrl-C) while timing") && sh_file_has(path, "; the script stops here") &&
       !sh_file_has(path, "class GraphModule"),
       "it says where it stopped and runs nothing after");
}

/* 150 copies of a training log (60 MB), `report` on it interrupted in the reading loop */
static void test_report_interrupt(void) {
    char log[700], dir[700], cmd[3000], path[700];
    snprintf(log, sizeof log, "%s/big.log", env.tmpdir);
    snprintf(dir, sizeof dir, "%s/rep", env.tmpdir);
    char *one = sh_read_file("tests/fixtures/logs/cpu_mlp_train.log");
    FILE *f = fopen(log, "w");
    for (int i = 0; one && f && i < 150; i++) fputs(one, f);
    if (f) fclose(f);
    free(one);
    snprintf(cmd, sizeof cmd, "exec '%s' -q -c 'load %s 0/0; report %s; graph' </dev/null >%s/report.out 2>&1",
             env.bin, log, dir, env.tmpdir);
    snprintf(path, sizeof path, "%s/report.out", env.tmpdir);
    pid_t pid = fork();
    if (pid == 0) { execl("/bin/sh", "sh", "-c", cmd, (char *)NULL); _exit(127); }
    for (int i = 0; i < 6000 && !sh_file_has(path, "parsing "); i++) usleep(10000);
    kill(pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 130, "report interrupted by SIGINT: the script exits 130");
    char want[2000];
    snprintf(want, sizeof want, "interrupted (Ctrl-C) while reading %s (", log);
    ok(sh_file_has(path, want), "it says it stopped reading the log");
    snprintf(want, sizeof want, " of 57 MB read; %s holds an unfinished report); the script stops here", dir);
    ok(sh_file_has(path, want) && !sh_file_has(path, "report: "), "how far it read, where the unfinished report is");
}

int main(void) {
    if (sh_init(&env, "minductor_intrXXXXXX") < 0) return 0;
    char graph[700];
    snprintf(graph, sizeof graph, "%s/wide.py", env.tmpdir);
    write_wide_graph(graph, 400, 256);
    test_interactive(graph);
    test_script(graph);
    test_report_interrupt();
    sh_cleanup(&env);
    return done_testing();
}
