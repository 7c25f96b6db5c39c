/* test_shell_daily.c — the shell as a daily tool (issue #16), one group per point of the issue:
 * 2 bisect says when the loaded graph already fails, numbering passes as `passes` does;
 * 3 after one pass breaks numerics, only it is marked failed and later passes are judged
 *   against their own input; 4 `save session` keeps every setting that changes results and a
 *   replay gives the same state; 5 `./minductor` everywhere; 6 exec's timing line (threads,
 *   median, spread); 8 scripting (errors name the script line, `-c ''` on a multi-compile
 *   log, `codegen > FILE` is C that compiles, `codegen <Tab>`); 9 pictures of large graphs
 *   (collapse by kernel or op runs, a legend, one kernel name in sched and the picture).
 * Point 1 (Ctrl-C) is tests/test_shell_interrupt.c; point 7 (inputs shapes) test_inputs.c.
 * Drives the built binary ($MINDUCTOR_BIN, else ./build/minductor). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "tests/support/shell_harness.h"

static ShellEnv env;

#define LN "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/pre_post_grad.py"
#define DR "tests/fixtures/patterns/double_relu.py"
#define TRAIN_BWD "tests/fixtures/torch-cases/cpu/mlp_train/graph1/pre_post_grad.py"

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

/* The line of the output that contains s (up to its newline), malloc'd; "" when none. */
static char *line_with(const ShResult *r, const char *s) {
    long p = sh_pos(r, s, 0);
    if (p < 0) return strdup("");
    long a = p;
    while (a > 0 && r->out[a - 1] != '\n') a--;
    size_t n = strcspn(r->out + a, "\n");
    return strndup(r->out + a, n);
}

/* 2. A wrong annotation: lint fails on the loaded graph, and bisect must not blame pass 1. */
static void test_bisect_loaded(void) {
    char g[700];
    snprintf(g, sizeof g, "%s/badmeta.py", env.tmpdir);
    write_file(g, "class <lambda>(torch.nn.Module):\n"
                  "    def forward(self, arg0_1: \"f32[4, 4][4, 1]cpu\", arg1_1: \"f32[4, 4][4, 1]cpu\"):\n"
                  "        add: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, arg1_1);  arg0_1 = None\n"
                  "        mul: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.mul.Tensor(add, arg1_1);  add = arg1_1 = None\n"
                  "        return (mul,)\n");
    char cmds[900];
    snprintf(cmds, sizeof cmds, "load %s; bisect; run; passes", g);
    ShResult r = sh_run(&env, "-q -k", cmds, NULL);
    ok(sh_has(&r, "bisect: the loaded graph already fails (before pass 1): lint: 2 problems: "),
       "2: bisect says the loaded graph already fails lint");
    ok(!sh_has(&r, "broke it"), "2: no pass is blamed");
    ok(sh_has(&r, "the loaded graph already fails lint (see 'goto 0; lint'); each of the ") && !sh_has(&r, " ! "),
       "2: run says so too, and no pass is marked failed");
    if (!sh_has(&r, "bisect: the loaded graph")) diag("%s", r.out);
    sh_result_free(&r);
}

/* 2 and 3. A user pattern that is wrong (relu(x) -> x) breaks numerics in pass_pattern_2. */
static void test_one_failure(void) {
    char pat[700], cmds[1500];
    snprintf(pat, sizeof pat, "%s/wrong.pat", env.tmpdir);
    write_file(pat, "pattern drop_relu\n  match:\n    r = aten.relu.default(x)\n  replace:\n    return x\nend\n");
    snprintf(cmds, sizeof cmds, "patterns %s; load " DR "; inputs random 3; bisect; run; passes", pat);
    ShResult r = sh_run(&env, "-q -k", cmds, NULL);
    char *bis = line_with(&r, "bisect: ");
    char *lst = line_with(&r, "! pass_pattern_2 ");
    int num = atoi(lst + 2);
    char want[200];
    snprintf(want, sizeof want, "bisect: pass %d pass_pattern_2 broke it (the graph before it was clean): numerics: out0", num);
    ok(num > 0 && strstr(bis, want) != NULL, "2: bisect names the pass with the number 'passes' gives it (%s)", bis);
    ok(num > 0, "3: the breaking pass is marked '!' (%s)", lst);
    ok(sh_count(&r, " ! ") == 1, "3: and only it");
    char *next = line_with(&r, " stable_sort ");
    snprintf(want, sizeof want, "(fails since step %d; same as its input)", num);
    ok(strstr(next, want) != NULL, "3: a later pass is judged against its input (%s)", next);
    ok(sh_count(&r, "    numerics: out0") == 1, "3: the numerics failure is printed once, at its step");
    snprintf(want, sizeof want, "pass %d pass_pattern_2 broke numerics: out0", num);
    ok(sh_has(&r, want), "3: run's summary names the first failure");
    free(bis); free(lst); free(next);
    sh_result_free(&r);
}

/* s with every time ("0.008 ms") replaced by "T ms", malloc'd: timings differ between runs. */
static char *without_times(const char *s) {
    char *out = malloc(strlen(s) + 1), *o = out;
    for (const char *p = s; *p;) {
        const char *q = p;
        while (*q == '.' || (*q >= '0' && *q <= '9')) q++;
        if (q > p && !strncmp(q, " ms", 3) && (p == s || p[-1] == ' ')) { *o++ = 'T'; p = q; }
        else *o++ = *p++;
    }
    *o = 0;
    return out;
}

/* 4. save session, replay it into a fresh shell: the same settings, pattern file, breakpoint,
 * cursor, schedule and graph. */
static void test_session_replay(void) {
    char pat[700], path[700], cmds[2000];
    snprintf(pat, sizeof pat, "%s/p.pat", env.tmpdir);
    write_file(pat, "pattern double_relu\n  match:\n    r1 = aten.relu.default(x)\n    r2 = aten.relu.default(r1)\n"
                    "  replace:\n    r = aten.relu.default(x)\n    return r\nend\n");
    snprintf(path, sizeof path, "%s/s.mi", env.tmpdir);
    const char *probe = "set; patterns; break; passes; graph; sched";
    snprintf(cmds, sizeof cmds, "set seed 11; set fusion off; set threads 1; set tolerance 0.001 1e-06; set limit sym_degree 40; "
             "patterns %s; load " DR "; inputs random; next 11; break stable_sort; sched; save session %s; %s", pat, path, probe);
    ShResult a = sh_run(&env, "-q", cmds, NULL);
    is_int(a.status, 0, "4: the session runs and saves");
    ok(sh_file_has(path, "set fusion off\n") && sh_file_has(path, "set threads 1\n") && sh_file_has(path, "set seed 11\n") &&
       sh_file_has(path, "set tolerance 0.001 1e-06\n") && sh_file_has(path, "set limit sym_degree 40\n"),
       "4: the file keeps fusion, threads, seed, tolerance, limits");
    char want[800];
    snprintf(want, sizeof want, "patterns %s\nload " DR "\n", pat);
    ok(sh_file_has(path, want) && sh_file_has(path, "break stable_sort\n") && sh_file_has(path, "goto 11\n") &&
       sh_file_has(path, "sched\n"), "4: the pattern file (before load), breakpoint, cursor and schedule");
    FILE *f = fopen(path, "a");
    if (f) { fprintf(f, "%s\n", probe); fclose(f); }
    f = fopen(path, "r");
    char *body = calloc(1, 1 << 16);
    size_t n = f ? fread(body, 1, (1 << 16) - 1, f) : 0;
    body[n] = 0;
    if (f) fclose(f);
    ShResult b = sh_run(&env, "-q", NULL, body);
    is_int(b.status, 0, "4: the replay runs");
    /* the probe's output: from the last settings listing to the end */
    const char *pa = NULL, *pb = NULL;
    for (const char *p = a.out; (p = strstr(p, "device    ")); p++) pa = p;
    for (const char *p = b.out; (p = strstr(p, "device    ")); p++) pb = p;
    char *ta = without_times(pa ? pa : ""), *tb = without_times(pb ? pb : "");
    ok(pa && pb && !strcmp(ta, tb), "4: settings, patterns, breakpoint, passes, graph and schedule are the same after the replay");
    if (!(pa && pb && !strcmp(ta, tb))) diag("original:\n%s\nreplay:\n%s", ta, tb);
    free(ta); free(tb);
    free(body);
    sh_result_free(&a);
    sh_result_free(&b);
}

/* 4. `set tolerance` checks the steps again: the cursor stays, the lowered state (which
 * pointed into the old steps' graphs) goes; drawing after it must not touch freed graphs. */
static void test_tolerance_keeps_cursor(void) {
    ShResult r = sh_run(&env, "-q", "load " LN "; inputs random; next 4; sched; set tolerance 1e-3; passes; show fx --collapse 3", NULL);
    is_int(r.status, 0, "4: set tolerance after sched, then show: no crash");
    ok(sh_has(&r, ">   5   ") && sh_has(&r, "collapsed 14 of 18 nodes"), "4: the cursor stays after 'set tolerance'");
    sh_result_free(&r);
}

/* 5. The README's commands leave ./minductor, and the docs use that name. */
static void test_one_name(void) {
    ok(access("minductor", X_OK) == 0, "5: make check left ./minductor");
    const char *docs[] = {"README.md", "examples/README.md", "repl/README.md"};
    int bad = 0;
    for (int i = 0; i < 3; i++)
        if (sh_file_has(docs[i], "build/minductor")) { diag("%s names build/minductor", docs[i]); bad++; }
    is_int(bad, 0, "5: README.md, examples/README.md and repl/README.md say ./minductor");
    ok(sh_file_has("Makefile", "check: $(TESTS) $(BIN) minductor") && sh_file_has("Makefile", "demo: $(BIN) minductor"),
       "5: make check and make demo make ./minductor");
}

/* 6. exec's timing: threads and where their number came from, warm-up, median and spread. */
static void test_timing(void) {
    ShResult r = sh_run(&env, "-q", "load " LN "; exec 20; set threads 1; exec 20", NULL);
    char *t = line_with(&r, "timing 20 runs on ");
    ok(strstr(t, "physical cores") || strstr(t, "OMP_NUM_THREADS") || strstr(t, "CPU quota"),
       "6: the default thread count says where it comes from (%s)", t);
    ok(sh_has(&r, "timing 20 runs on 1 thread (set threads)"), "6: 'set threads 1' is used as is");
    char *tm = line_with(&r, "time: median ");
    ok(strstr(tm, "(p10-p90 ") && strstr(tm, "spread ") && strstr(tm, " warm-up, ") && strstr(tm, "20 runs"),
       "6: median, p10-p90 spread, warm-up and runs (%s)", tm);
    free(t); free(tm);
    sh_result_free(&r);
    setenv("OMP_NUM_THREADS", "1", 1);
    r = sh_run(&env, "-q", "load " LN "; exec 5", NULL);
    unsetenv("OMP_NUM_THREADS");
    ok(sh_has(&r, "timing 5 runs on 1 thread (OMP_NUM_THREADS)"), "6: OMP_NUM_THREADS decides when set");
    sh_result_free(&r);
}

/* 8. Scripting. */
static void test_scripting(void) {
    ShResult r = sh_run(&env, "-q", NULL, "set errexit off\nload " LN "\n\n# a comment\nlint; bogus 1; graph\ngoto 99\n");
    ok(sh_has(&r, "error: unknown command 'bogus' (try 'help')\n  at <stdin>:5: bogus 1   (command 2 of the line)\n"),
       "8: an error in a stdin script names its line and command");
    ok(sh_has(&r, "  at <stdin>:6: goto 99\n"), "8: and the next one its line");
    sh_result_free(&r);
    r = sh_run(&env, "-q -k", "load " LN "\nlint; nope", NULL);
    ok(sh_has(&r, "  at -c:2: nope   (command 2 of the line)\n"), "8: -c commands on several lines too");
    sh_result_free(&r);
    r = sh_run(&env, "-q tests/fixtures/logs/cpu_recompile.log", "", NULL);
    is_int(r.status, 0, "8: '-c ''' on a log with several compiles is no error");
    ok(sh_has(&r, "tests/fixtures/logs/cpu_recompile.log: 2 compiles\n") &&
       sh_has(&r, "2 compiles have graphs: pick one with 'load tests/fixtures/logs/cpu_recompile.log COMPILE_ID [GRAPH]'"),
       "8: it lists them and says how to pick one");
    sh_result_free(&r);
    /* codegen > FILE: the C source alone, which cc compiles */
    char k1[700], k2[700], cmds[1600];
    snprintf(k1, sizeof k1, "%s/k1.c", env.tmpdir);
    snprintf(k2, sizeof k2, "%s/k2.c", env.tmpdir);
    snprintf(cmds, sizeof cmds, "load " LN "; codegen > %s", k1);
    r = sh_run(&env, "-q", cmds, NULL);
    ok(sh_has(&r, "lowered to 7 buffers") && !sh_file_has(k1, "lowered to") && !sh_file_has(k1, "fusion decisions") &&
       sh_file_has(k1, "int call("), "8: 'codegen > FILE': the tables go to the terminal, the file holds the code");
    sh_result_free(&r);
    snprintf(cmds, sizeof cmds, "\"%s\" -q " LN " -c codegen > %s 2>/dev/null", env.bin, k2);
    int st = system(cmds);
    ok(st == 0 && !sh_file_has(k2, "loaded ") && sh_file_has(k2, "int call("), "8: 'minductor G -c codegen > FILE' too");
    for (int i = 0; i < 2; i++) {
        snprintf(cmds, sizeof cmds, "cc -fopenmp -c -o %s/k%d.o %s 2>&1", env.tmpdir, i, i ? k2 : k1);
        ok(system(cmds) == 0, "8: cc compiles %s", i ? "k2.c" : "k1.c");
    }
    snprintf(cmds, sizeof cmds, "load " LN "; graph >> %s; lint > a b", k1);
    r = sh_run(&env, "-q -k", cmds, NULL);
    ok(sh_file_has(k1, "class <lambda>") && sh_has(&r, "error: '>' needs one file name after it"),
       "8: '>>' appends, '>' with two names is an error");
    sh_result_free(&r);
    /* Tab after `codegen ` completes a kernel name on a freshly loaded graph (no sched yet) */
    const char *args[] = {LN, NULL};
    const ShStep steps[] = {{"minductor> ", "codegen cpp\t"}, {NULL, "\n"}, {"minductor> ", "quit\n"}};
    r = sh_tty_dialogue(&env, args, steps, 3, 60);
    if (r.status == -2) skip(1, "no pseudo-terminal");
    else ok(sh_has(&r, "static void cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0("), "8: 'codegen cpp<Tab>' completes the kernel name");
    sh_result_free(&r);
}

/* 9. A graph without '# File:' comments as a picture. */
static void test_pictures(void) {
    char g[700];
    snprintf(g, sizeof g, "%s/chain.py", env.tmpdir);
    FILE *f = fopen(g, "w");
    if (!f) return;
    fprintf(f, "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[8, 8][8, 1]cpu\"):\n");
    const char *prev = "x";
    char names[300][16];
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "%s_%d", i % 10 == 9 ? "sum" : i % 2 ? "mul" : "sin", i);
        if (i % 10 == 9)
            fprintf(f, "        %s: \"f32[8, 1][1, 1]cpu\" = torch.ops.aten.sum.dim_IntList(%s, [1], True)\n", names[i], prev);
        else if (i % 10 == 0 && i)     /* sin of the [8, 1] sum; the mul after it broadcasts back */
            fprintf(f, "        %s: \"f32[8, 1][1, 1]cpu\" = torch.ops.aten.sin.default(%s)\n", names[i], prev);
        else if (i % 2)
            fprintf(f, "        %s: \"f32[8, 8][8, 1]cpu\" = torch.ops.aten.mul.Tensor(%s, x)\n", names[i], prev);
        else
            fprintf(f, "        %s: \"f32[8, 8][8, 1]cpu\" = torch.ops.aten.sin.default(%s)\n", names[i], prev);
        prev = names[i];
    }
    fprintf(f, "        return (%s,)\n", prev);
    fclose(f);
    char cmds[1200];
    snprintf(cmds, sizeof cmds, "load %s; show fx; sched; show fx; show fusion", g);
    ShResult r = sh_run(&env, "-q", cmds, NULL);
    ok(sh_has(&r, "collapsed 300 of 302 nodes into 30 boxes by runs of ops ending at a reduction or extern call (no '# File:' "
                  "comments and no schedule: 'sched' first to box by kernel); 'show fx --collapse 0' draws every node"),
       "9: without '# File:' comments and a schedule: 30 boxes of op runs, and it says so");
    ok(sh_has(&r, "label=\"ops 1-10: sin x5, mul x4, sum\\n(10 nodes)\""), "9: a box names the ops it holds");
    ok(sh_has(&r, "subgraph cluster_legend {") && sh_has(&r, "legend_placeholder") && sh_has(&r, "legend_group"), "9: a legend");
    ok(sh_has(&r, "into 30 boxes by runs of ops ending at a reduction or extern call (no '# File:' comments; one kernel "
                  "holds most nodes)"), "9: after sched, one cpp kernel holds them all: still op runs, and it says why");
    sh_result_free(&r);
    /* a training backward graph (no '# File:' comments either): by kernel, leftovers by op runs */
    r = sh_run(&env, "-q", "load " TRAIN_BWD "; sched; show fx --collapse 10; show fusion", NULL);
    ok(sh_has(&r, "into 9 boxes by kernel (as 'sched' names them) (the nodes have no '# File:' comments), the rest by op runs"),
       "9: backward graph: boxed by kernel");
    ok(sh_has(&r, "label=\"cpp_fused_full_le_sum_where_0\\n(4 nodes)\"") && sh_has(&r, "label=\"extern_mm_buf0\\n(1 node)\""),
       "9: kernels and extern calls as boxes");
    /* the kernel names of `sched` are the boxes' and the fusion clusters' names (extern calls,
     * which share one name in sched, with their buffer: extern_mm_buf0) */
    int named = 0, kernels = 0;
    for (const char *p = r.out; (p = strstr(p, "\n  cpp_fused_")) != NULL; p++) {
        char kn[128];
        if (sscanf(p + 3, "%127s", kn) != 1) break;
        kernels++;
        char box[200], cl[200];
        snprintf(box, sizeof box, "label=\"%s\\n(", kn);
        snprintf(cl, sizeof cl, "subgraph cluster_%s {", kn);
        named += sh_has(&r, box) && sh_has(&r, cl);
    }
    ok(kernels == 2 && named == kernels, "9: each of the %d cpp kernels of 'sched' names a box and a fusion cluster (%d)", kernels, named);
    ok(sh_has(&r, "subgraph cluster_extern_mm_buf0 {") && sh_has(&r, "  extern_mm                        buf0(op0)"),
       "9: an extern call: 'extern_mm buf0' in sched, extern_mm_buf0 in the pictures");
    sh_result_free(&r);
}

int main(void) {
    if (sh_init(&env, "minductor_dailyXXXXXX") < 0) return 0;
    test_bisect_loaded();
    test_one_failure();
    test_session_replay();
    test_tolerance_keeps_cursor();
    test_one_name();
    test_timing();
    test_scripting();
    test_pictures();
    sh_cleanup(&env);
    return done_testing();
}
