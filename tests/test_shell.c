/* test_shell.c — drives the built `minductor` binary ($MINDUCTOR_BIN, else ./build/minductor)
 * with scripted sessions: a real case through every pass and the back end, error handling in
 * -c mode (stop, exit 1) and keep-going mode (the graph survives), save/replay of a session,
 * pictures, inputs from .npy; abuse: over 10 000 random commands (valid, invalid, garbage) in
 * sessions that must never crash nor lose the graph, one of them interactive on a pseudo-terminal;
 * huge shapes that must give errors; a full session that LeakSanitizer checks in SANITIZE=1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "trace/trace.h"
#include <cJSON.h>

static ShellEnv env;        /* env.workdir: when set, sessions start there (tmpdir/tests links to ours) */

#define SEED "tests/fixtures/torch-cases/cpu/seed_example/graph0/pre_post_grad.py"
#define SEED_IN "tests/fixtures/torch-cases/cpu/seed_example/graph0"
#define LN "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/pre_post_grad.py"
#define VM "tests/fixtures/torch-cases/cpu/view_mutation/graph0/pre_post_grad.py"

/* The shared harness (tests/support/shell_harness.h) under the names these tests use. */
typedef ShResult Result;
static Result run(const char *opts, const char *cmds, const char *input) { return sh_run(&env, opts, cmds, input); }
static bool has(const Result *r, const char *s) { return sh_has(r, s); }
static bool has_line(const Result *r, const char *line) { return sh_has_line(r, line); }
static int count_of(const Result *r, const char *s) { return sh_count(r, s); }
static bool file_has(const char *path, const char *s) { return sh_file_has(path, s); }

/* The pass names as `passes` lists them. */
static int pass_names(const Result *r, char names[][64], int max) {
    int n = 0;
    for (const char *p = r->out; *p && n < max;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        /* "%c%c %2d %c %-40s": markers, number, status mark, name from column 8 */
        int idx = len > 8 ? atoi(p + 2) : 0;
        if (idx == n + 1 && p[5] == ' ' && p[7] == ' ') {
            int k = 0;
            while (k < 63 && 8 + k < (int)len && p[8 + k] != ' ') { names[n][k] = p[8 + k]; k++; }
            names[n][k] = 0;
            n++;
        }
        p += len + (nl ? 1 : 0);
    }
    return n;
}

static void test_help(void) {
    Result r = run(NULL, "help", NULL);
    is_int(r.status, 0, "help exits 0");
    ok(has(&r, "commands (help COMMAND for details):"), "help lists commands");
    const char *cmds[] = {"load", "graph", "passes", "step", "next", "back", "goto", "run", "break",
                          "diff", "lint", "check", "bisect", "inputs", "lower", "ir", "sched",
                          "codegen", "exec", "show", "trace", "report", "save", "set", "quit"};
    int missing = 0;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "\n  %s ", cmds[i]);
        if (!has(&r, want)) { diag("help lacks %s", cmds[i]); missing++; }
    }
    is_int(missing, 0, "help lists every command");
    free(r.out);
    r = run(NULL, "help load", NULL);
    ok(has_line(&r, "usage: load FILE | load LOG COMPILE_ID [ARTIFACT]"), "help load shows usage");
    free(r.out);
    r = run(NULL, "help lod", NULL);
    is_int(r.status, 1, "help of an unknown command fails");
    ok(has(&r, "did you mean 'load'"), "help suggests");
    free(r.out);
    r = run("--help", NULL, NULL);
    is_int(r.status, 0, "--help exits 0");
    ok(has(&r, "usage: minductor"), "--help prints usage");
    free(r.out);
}

static void test_real_case(void) {
    Result r = run(NULL, "load " SEED "; graph; lint; passes", NULL);
    is_int(r.status, 0, "load/graph/lint/passes exit 0");
    ok(has_line(&r, "loaded " SEED ": 5 nodes (1 inputs, 3 ops)"), "load summary");
    ok(has_line(&r, "        add: \"f32[64, 64][1, 64]cpu\" = torch.ops.aten.add.Tensor(permute, select);  permute = select = None"),
       "graph prints the FX text");
    ok(has_line(&r, "lint: ok"), "lint: ok");
    char names[64][64];
    int np = pass_names(&r, names, 64);
    ok(np >= 10, "passes lists %d passes", np);
    /* Inductor's post-grad order */
    const char *order[] = {"reorder_for_locality", "remove_profiler_ops", "remove_noop_ops",
                           "remove_assert_ops", "pass_pattern_0", "pass_pattern_1", "stable_sort",
                           "reinplace_inplaceable_ops"};
    int at = -1, in_order = 1;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        int found = -1;
        for (int i = 0; i < np; i++) if (!strcmp(names[i], order[k])) found = i;
        if (found <= at) { diag("pass %s out of order or missing", order[k]); in_order = 0; }
        at = found;
    }
    ok(in_order, "passes are in Inductor's post-grad order");
    free(r.out);

    /* step through every pass, then diff, lint, check */
    char cmds[4096];
    int n = snprintf(cmds, sizeof cmds, "load " SEED "; inputs " SEED_IN);
    for (int i = 0; i < np; i++) n += snprintf(cmds + n, sizeof cmds - n, "; step");
    snprintf(cmds + n, sizeof cmds - n, "; step; diff 1; lint; check; passes; back; goto 0; goto %d", np);
    r = run(NULL, cmds, NULL);
    is_int(r.status, 0, "stepping through all %d passes exits 0", np);
    if (r.status) diag("%s", r.out);
    int steps_ok = 1;
    for (int i = 0; i < np; i++) {
        char want[160];
        snprintf(want, sizeof want, "step %d/%d %.64s: ", i + 1, np, names[i]);
        if (!has(&r, want)) { diag("missing '%s'", want); steps_ok = 0; }
    }
    ok(steps_ok, "every step reports its pass name in order");
    ok(has_line(&r, "all passes applied"), "one step too many says all passes applied");
    is_int(count_of(&r, "lint FAILED"), 0, "no step broke lint");
    is_int(count_of(&r, "numerics FAILED"), 0, "no step broke numerics");
    ok(has(&r, "diff of step 1 "), "diff 1 prints a header");
    ok(has_line(&r, "lint: ok"), "lint ok after all passes");
    ok(has(&r, "check: ok (1 output, max abs err"), "check: ok against the loaded graph");
    char want[128];
    snprintf(want, sizeof want, "back to step %d (undid %s)", np - 1, names[np - 1]);
    ok(has_line(&r, want), "back undoes the last pass");
    ok(has_line(&r, "at step 0/19 (the loaded graph)") || has(&r, "at step 0/"), "goto 0");
    free(r.out);

    /* the back end: lower, ir, sched, codegen, exec (each skipped while its module is missing) */
    r = run(NULL, "load " LN "; run; lower; ir; show ir", NULL);
    if (has(&r, "not available yet")) skip(4, "lowering/IR not available yet");
    else {
        is_int(r.status, 0, "lower/ir/show ir exit 0");
        if (r.status) diag("%s", r.out);
        ok(has(&r, "lowered to "), "lower summarizes the buffers");
        ok(has(&r, "buf0"), "IR names buffers");
        ok(has(&r, "digraph ir") && has(&r, "-> buf"), "show ir draws the buffer graph");
    }
    free(r.out);
    r = run(NULL, "load " LN "; run; sched; ir post; show fusion", NULL);
    if (has(&r, "not available yet")) skip(3, "scheduler not available yet");
    else {
        is_int(r.status, 0, "sched/show fusion exit 0");
        if (r.status) diag("%s", r.out);
        ok(has(&r, " kernel") && has(&r, "cpp_fused"), "sched lists kernels");
        ok(has(&r, "subgraph \"cluster_cpp_fused") || has(&r, "subgraph cluster_cpp_fused"), "show fusion has kernel clusters");
    }
    free(r.out);
    r = run(NULL, "load " SEED "; inputs " SEED_IN "; run; lower; sched; codegen cpp_fused_add_permute_select_0; exec 3", NULL);
    if (has(&r, "not available yet")) skip(4, "codegen not available yet");
    else {
        is_int(r.status, 0, "codegen/exec exit 0");
        if (r.status) diag("%s", r.out);
        const char *m = strstr(r.out, "max abs err ");
        double err = m ? atof(m + strlen("max abs err ")) : 1e9;
        ok(m && err < 1e-4, "exec: max abs err %g below 1e-4", err);
        ok(has_line(&r, "exec: ok"), "exec: ok");
        ok(has(&r, "static void cpp_fused_add_permute_select_0(") && !has(&r, "int call("),
           "codegen KERNEL prints that kernel alone");
    }
    free(r.out);
    /* exec with no inputs set makes random ones (and keeps working after the pass manager restarts) */
    r = run(NULL, "load tests/fixtures/torch-cases/cpu/softmax/graph0/pre_post_grad.py; run; lower; sched; set fusion off; sched; exec 2", NULL);
    if (has(&r, "not available yet")) skip(2, "codegen not available yet");
    else {
        is_int(r.status, 0, "fusion off + exec with random inputs exit 0");
        if (r.status) diag("%s", r.out);
        ok(has(&r, "(fusion off)") && has_line(&r, "exec: ok"), "unfused kernels agree with the interpreter");
    }
    free(r.out);
}

static void test_errors(void) {
    Result r = run(NULL, "foo", NULL);
    is_int(r.status, 1, "unknown command: exit 1");
    ok(has_line(&r, "error: unknown command 'foo' (try 'help')"), "unknown command message");
    free(r.out);
    r = run(NULL, "grpah", NULL);
    ok(has(&r, "unknown command 'grpah' (did you mean 'graph'?"), "close match suggested");
    free(r.out);

    r = run(NULL, "load nosuch.py", NULL);
    is_int(r.status, 1, "missing file: exit 1");
    ok(has_line(&r, "error: nosuch.py: no such file"), "missing file message");
    free(r.out);

    /* stops at the first error in -c mode */
    r = run(NULL, "load " SEED "; load nosuch.py; graph", NULL);
    is_int(r.status, 1, "-c stops with 1 at the first error");
    ok(!has(&r, "class <lambda>"), "commands after the error did not run");
    free(r.out);

    /* keep going: -k */
    r = run("-k", "load " SEED "; load nosuch.py; next x; goto 999; diff 0; set threads -1; show nope; graph", NULL);
    is_int(r.status, 1, "-k: still exit 1 when a command failed");
    ok(has(&r, "N must be a non-negative integer, got 'x'"), "next x: bad argument");
    ok(has(&r, "'999' is neither a step number"), "goto 999: out of range");
    ok(has(&r, "step 0 is the loaded graph: nothing to diff"), "diff 0: nothing to diff");
    ok(has(&r, "threads must be a non-negative integer"), "set threads -1 refused");
    ok(has(&r, "'nope' is not one of fx, ir, fusion, diff"), "show nope refused");
    ok(has_line(&r, "class <lambda>(torch.nn.Module):"), "-k: graph still loaded after errors");
    free(r.out);

    /* bounds on runaway work: set limit */
    r = run("-k", "set limit sym_degree 4; set limit sym_degree 0; set limit bogus 1; set", NULL);
    ok(has(&r, "limit sym_degree = 4"), "set limit sym_degree 4");
    ok(has(&r, "limit sym_degree must be between 1 and 4096, got 0"), "out of range refused");
    ok(has(&r, "unknown limit 'bogus' (limits: sym_degree, pattern_matches, fusion_rounds, draw_nodes, while_iterations)"),
       "unknown limit names the limits");
    ok(has(&r, "limit sym_degree       4  (highest degree a size expression is multiplied out to; default 32)"),
       "set lists the limits with their values");
    free(r.out);
    /* each bound stops its work with an error naming the limit; the session goes on */
    r = run("-k", "set limit pattern_matches 1; load tests/fixtures/patterns/two_double_relus.py; "
                  "patterns tests/fixtures/patterns/user.pat; run; set limit draw_nodes 3; show fx --svg /dev/null; "
                  "set limit pattern_matches 100; run; graph", NULL);
    ok(has(&r, "pass_pattern_2 failed: more than 1 pattern rewrites in one pass (limit pattern_matches = 1; "
               "raise it with 'set limit pattern_matches N')"), "pattern_matches: two rewrites over a limit of 1");
    ok(has(&r, "the picture has 7 boxes, over the drawing limit") && has(&r, "limit draw_nodes = 3;"),
       "draw_nodes: a 7-box picture over a limit of 3");
    ok(has(&r, "step 11/19 pass_pattern_2: changed") && has_line(&r, "class GraphModule(torch.nn.Module):"),
       "raised, the same passes run and the session still has its graph");
    free(r.out);

    /* script on stdin with errexit off; a broken file keeps the previous graph */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.py", env.tmpdir);
    FILE *f = fopen(bad, "w");
    fputs("class <lambda>(torch.nn.Module):\n    def forward(self, x: \"f32[4][1]cpu\"):\n"
          "        y: \"f32[4][1]cpu\" = torch.ops.aten.add.Tensor(x, \n", f);
    fclose(f);
    char script[1024];
    snprintf(script, sizeof script,
             "set errexit off\nload " SEED "\nload %s\nload %s 0/0\ngraph\nlint\n", bad, bad);
    r = run(NULL, NULL, script);
    is_int(r.status, 1, "stdin script with errors exits 1");
    char want[512];
    snprintf(want, sizeof want, "error: %s:", bad);
    ok(has(&r, want), "bad file error names the file");
    ok(has_line(&r, "class <lambda>(torch.nn.Module):") && has_line(&r, "lint: ok"),
       "previous graph kept after a failed load");
    free(r.out);

    /* commands that need a graph */
    r = run("-k", "graph; passes; lint; check; show fx; inputs random", NULL);
    is_int(count_of(&r, "no graph loaded"), 6, "six commands say no graph loaded");
    ok(!r.signaled, "no crash without a graph");
    free(r.out);

    r = run("-x", NULL, NULL);
    is_int(r.status, 2, "unknown option: exit 2");
    free(r.out);
    r = run("tlparse", NULL, NULL);
    ok(!r.signaled && r.status != 0, "tlparse without arguments fails cleanly (%d)", r.status);
    free(r.out);
}

static void test_fixtures(void) {
    /* a script file on stdin */
    FILE *f = fopen("tests/fixtures/scripts/seed_session.mi", "r");
    static char body[4096];
    size_t n = f ? fread(body, 1, sizeof body - 1, f) : 0;
    body[n] = 0;
    if (f) fclose(f);
    Result r = run(NULL, NULL, body);
    is_int(r.status, 0, "seed_session.mi runs to the end");
    if (r.status) diag("%s", r.out);
    ok(has_line(&r, "lint: ok"), "script: lint ok after run");
    ok(has(&r, "check: ok (1 output, max abs err 0)"), "script: passes keep the seed example exact");
    ok(has_line(&r, "at step 0/19 (the loaded graph)") || has(&r, "(the loaded graph)"), "script: goto 0");
    free(r.out);

    /* numerics against the outputs PyTorch recorded */
    r = run(NULL, "load " LN "; inputs tests/fixtures/torch-cases/cpu/ln_gelu/graph0; run; check", NULL);
    is_int(r.status, 0, "ln_gelu: run + check against PyTorch exit 0");
    const char *m = strstr(r.out, "output 0 vs PyTorch (tests/fixtures/torch-cases/cpu/ln_gelu/graph0/out0.npy): f32[64, 256] ok max abs err ");
    double err = m ? atof(strstr(m, "max abs err ") + 12) : 1e9;
    ok(m && err < 1e-5, "ln_gelu after all passes matches PyTorch's output (max abs err %g)", err);
    free(r.out);

    /* a real TORCH_TRACE log as the FILE argument */
    r = run("tests/fixtures/scripts/seed_example_trace.log", "graph", NULL);
    is_int(r.status, 0, "minductor LOG loads the only compile");
    ok(has_line(&r, "  0/0      ok                                       3 artifacts, has a graph"),
       "the log's compiles are listed");
    ok(has_line(&r, "loaded tests/fixtures/scripts/seed_example_trace.log compile 0/0 aot_inference_graph: 5 nodes (1 inputs, 3 ops)"),
       "load summary names the compile and the graph (before_post_grad_graph equals the post-grad one)");
    ok(has_line(&r, "        select: \"f32[64][1]cpu\" = torch.ops.aten.select.int(arg0_1, 0, 2);  arg0_1 = None"),
       "graph from the log");
    free(r.out);
    r = run(NULL, "load tests/fixtures/scripts/seed_example_trace.log 0/0 inductor_post_grad_graph; lint", NULL);
    is_int(r.status, 0, "load LOG 0/0 ARTIFACT");
    ok(has_line(&r, "lint: ok"), "post-grad graph from the log lints");
    free(r.out);
    r = run(NULL, "load tests/fixtures/scripts/seed_example_trace.log 7/0", NULL);
    is_int(r.status, 1, "unknown compile id fails");
    ok(has(&r, "error: "), "with an error message");
    free(r.out);
}

static void test_session_save(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/session.mi", env.tmpdir);
    char cmds[1024];
    snprintf(cmds, sizeof cmds, "set seed 7; load " LN "; inputs random; step; step; break stable_sort; save session %s; graph", path);
    Result a = run(NULL, cmds, NULL);
    is_int(a.status, 0, "save session");
    ok(file_has(path, "load " LN "\n") && file_has(path, "goto 2\n") && file_has(path, "break stable_sort\n")
       && file_has(path, "inputs random 7\n"), "session file rebuilds load, inputs, breakpoint, step");
    char script[512];
    snprintf(script, sizeof script, "graph\n");
    FILE *f = fopen(path, "a"); fputs("graph\n", f); fclose(f);
    FILE *in = fopen(path, "r");
    static char body[8192];
    size_t n = fread(body, 1, sizeof body - 1, in); body[n] = 0; fclose(in);
    Result b = run(NULL, NULL, body);
    is_int(b.status, 0, "replaying the session exits 0");
    const char *ga = strstr(a.out, "class <lambda>"), *gb = strstr(b.out, "class <lambda>");
    ok(ga && gb && !strcmp(ga, gb), "replayed session prints the same graph");
    free(a.out); free(b.out);
    /* the seed set after `inputs random 3` survives the replay (fuzz_session found it reset to 3:
     * tests/fixtures/crashers/session_seed_after_inputs.session) */
    snprintf(cmds, sizeof cmds, "load " LN "; inputs random 3; set seed 12345; save session %s", path);
    a = run(NULL, cmds, NULL);
    in = fopen(path, "r");
    n = fread(body, 1, sizeof body - 200, in); body[n] = 0; fclose(in);
    strcat(body, "set\n");
    b = run(NULL, NULL, body);
    ok(has(&b, "seed      12345") && file_has(path, "inputs random 3\nset seed 12345\n"),
       "the replayed session has the seed set after the inputs");
    free(a.out); free(b.out);
}

static void test_save_graph(void) {
    char js[256], py[256], cmds[2048];
    snprintf(js, sizeof js, "%s/g.json", env.tmpdir);
    snprintf(py, sizeof py, "%s/g.py", env.tmpdir);
    snprintf(cmds, sizeof cmds, "load " LN "; run; save graph %s; save graph %s; graph; load %s; graph; load %s; graph",
             js, py, js, py);
    Result r = run(NULL, cmds, NULL);
    is_int(r.status, 0, "save graph / load back exit 0");
    if (r.status) diag("%s", r.out);
    ok(has(&r, "(JSON)") && has(&r, "(FX text)"), "save graph says which format");
    /* the three prints of the graph are the same text */
    const char *a = strstr(r.out, "class <lambda>");
    const char *b = a ? strstr(a + 1, "class <lambda>") : NULL;
    const char *c = b ? strstr(b + 1, "class <lambda>") : NULL;
    const char *ea = b ? strstr(a, "loaded ") : NULL, *eb = c ? strstr(b, "loaded ") : NULL;
    ok(a && b && ea && eb && ea - a == eb - b && !strncmp(a, b, ea - a),
       "graph after passes == graph loaded back from JSON");
    ok(c && b && eb && strlen(c) == (size_t)(eb - b) && !strncmp(b, c, eb - b), "JSON and FX text round trips agree");
    free(r.out);
}

static void test_show_and_inputs(void) {
    char svg[256], dot[256];
    snprintf(svg, sizeof svg, "%s/g.svg", env.tmpdir);
    snprintf(dot, sizeof dot, "%s/g.dot", env.tmpdir);
    char cmds[1024];
    snprintf(cmds, sizeof cmds, "load " SEED "; show fx --svg %s; show fx --dot %s; show fx; "
             "inputs " SEED_IN "/in0.npy; inputs; step; show diff 1", svg, dot);
    Result r = run(NULL, cmds, NULL);
    is_int(r.status, 0, "show/inputs exit 0");
    if (r.status) diag("%s", r.out);
    ok(file_has(svg, "<title>add</title>") && file_has(svg, "<title>arg0_1</title>"), "SVG has node ids");
    ok(file_has(dot, "permute -> add"), "DOT file has the edges");
    ok(has(&r, "\tpermute -> add;"), "show fx prints DOT");
    ok(has(&r, "  0 arg0_1: f32[64, 64]"), "inputs lists the loaded tensor");
    ok(has(&r, "digraph diff"), "show diff prints a diff picture");
    free(r.out);
    r = run(NULL, "load " SEED "; inputs " LN, NULL);
    is_int(r.status, 1, "a non-npy input fails");
    free(r.out);
    r = run(NULL, "load " LN "; inputs " SEED_IN "/in0.npy", NULL);
    ok(has(&r, "inputs (3 tensors) but 1 .npy files"), "wrong input count explained");
    free(r.out);
}

static void test_trace(void) {
    char log[256], out[256], idx[300];
    snprintf(log, sizeof log, "%s/t.log", env.tmpdir);
    snprintf(out, sizeof out, "%s/tl", env.tmpdir);
    snprintf(idx, sizeof idx, "%s/index.html", out);
    char cmds[1024];
    snprintf(cmds, sizeof cmds, "load " SEED "; trace on %s; step; step; trace off; report %s", log, out);
    Result r = run(NULL, cmds, NULL);
    if (has(&r, "not available yet") || has(&r, "undefined")) { skip(3, "trace not available yet"); free(r.out); return; }
    is_int(r.status, 0, "trace on/step/off/report exit 0");
    if (r.status) diag("%s", r.out);
    ok(file_has(log, "minductor_pass_01_functionalize") && file_has(log, "minductor_pass_02_view_to_reshape") &&
       !file_has(log, "minductor_pass_00_") && file_has(log, "before_post_grad_graph"), "log has the pass steps, numbered like the shell's");
    ok(access(idx, R_OK) == 0, "report wrote index.html");
    free(r.out);
    /* load the graph back from the log */
    snprintf(cmds, sizeof cmds, "load %s 0/0 before_post_grad_graph; graph", log);
    r = run(NULL, cmds, NULL);
    ok(r.status == 0 && has(&r, "add: \"f32[64, 64][1, 64]cpu\""), "load LOG COMPILE_ID ARTIFACT");
    free(r.out);
}

/* What a traced session wrote, read back with the reader and counted per compile id. */
typedef struct TraceCount {
    int records, issues, dynamo_start[3], metrics[3], spans_b[3], spans_e[3];
    char artifacts[3][2048];       /* " name" per artifact of compile N/0, minductor_pass_* left out */
    char span_names[3][4096];      /* " name" per chromium B event */
    double metric_s[3];
    char fail[3][300], co_name[3][64];
    bool ts_ordered;               /* every span's E is at or after its B */
} TraceCount;

static void count_trace(const char *log, TraceCount *c) {
    memset(c, 0, sizeof *c);
    c->ts_ordered = true;
    MiCtx *ctx = mi_ctx_new();
    TraceReader *rd = trace_reader_open(ctx, log);
    if (!rd) { mi_ctx_free(ctx); return; }
    TraceRecord r;
    double open_ts[3] = {0};
    while (trace_reader_next(rd, &r) == 1) {
        c->records++;
        int f = r.frame_id;
        if (f < 0 || f > 2 || r.frame_compile_id != 0 || r.attempt != 0) continue;
        if (!strcmp(r.key, "dynamo_start")) c->dynamo_start[f]++;
        else if (!strcmp(r.key, "compilation_metrics")) {
            c->metrics[f]++;
            cJSON *t = cJSON_GetObjectItem(r.meta, "entire_frame_compile_time_s");
            c->metric_s[f] = cJSON_IsNumber(t) ? t->valuedouble : -1;
            const char *co = cJSON_GetStringValue(cJSON_GetObjectItem(r.meta, "co_name"));
            snprintf(c->co_name[f], sizeof c->co_name[f], "%s", co ? co : "(none)");
            cJSON *fr = cJSON_GetObjectItem(r.meta, "fail_reason");
            snprintf(c->fail[f], sizeof c->fail[f], "%s", cJSON_IsString(fr) ? fr->valuestring : "");
        } else if (!strcmp(r.key, "artifact") && strncmp(r.name, "minductor_pass_", 15)) {
            size_t l = strlen(c->artifacts[f]);
            snprintf(c->artifacts[f] + l, sizeof c->artifacts[f] - l, " %s", r.name);
        } else if (!strcmp(r.key, "chromium_event")) {
            cJSON *ev = cJSON_Parse(r.payload);
            const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ph"));
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "name"));
            cJSON *ts = cJSON_GetObjectItem(ev, "ts");
            if (ph && name && cJSON_IsNumber(ts)) {
                if (*ph == 'B') {
                    c->spans_b[f]++;
                    open_ts[f] = ts->valuedouble;
                    size_t l = strlen(c->span_names[f]);
                    snprintf(c->span_names[f] + l, sizeof c->span_names[f] - l, " %s", name);
                } else {
                    c->spans_e[f]++;
                    if (ts->valuedouble < open_ts[f]) c->ts_ordered = false;
                }
            }
            cJSON_Delete(ev);
        }
    }
    c->issues = (int)trace_stats_failures(trace_reader_stats(rd));
    trace_reader_close(rd);
    mi_ctx_free(ctx);
}

/* A traced session logs what PyTorch logs, under the same names: a compile id per loaded graph
 * (dynamo_start, before_post_grad_graph, compilation_metrics), a chromium span per pass
 * (pass.post_grad_passes.<pass>) and per back-end stage, and the IR before/after fusion. */
static void test_trace_pipeline(void) {
    char log[256], out[256], cmds[2048];
    snprintf(log, sizeof log, "%s/pipe.log", env.tmpdir);
    snprintf(out, sizeof out, "%s/pipe_tl", env.tmpdir);
    snprintf(cmds, sizeof cmds, "trace on %s; load " SEED "; next 3; lower; sched; codegen; "
             "load tests/fixtures/hop/cond_two_results.py; run; report %s", log, out);
    Result r = run(NULL, cmds, NULL);
    is_int(r.status, 0, "traced session exits 0");
    TraceCount c;
    count_trace(log, &c);
    is_int(c.issues, 0, "the log reads back without a problem");
    ok(c.dynamo_start[0] == 1 && c.dynamo_start[1] == 1 && c.dynamo_start[2] == 0,
       "one dynamo_start per loaded graph (compile ids 0/0 and 1/0)");
    ok(c.metrics[0] == 1 && c.metrics[1] == 1, "one compilation_metrics per compile (written at the next load / report)");
    is_str(c.artifacts[0], " before_post_grad_graph inductor_post_grad_graph ir_pre_fusion ir_post_fusion minductor_fusion_svg "
           "minductor_fusion_decisions inductor_output_code inductor_provenance_tracking_node_mappings",
           "0/0: the graph, the post-grad graph, the IR before and after fusion, the fusion picture and decisions, the code, "
           "its provenance");
    is_str(c.artifacts[1], " before_post_grad_graph", "1/0: only the loaded graph (not lowered)");
    is_str(c.span_names[0], " pass.post_grad_passes.functionalize pass.post_grad_passes.view_to_reshape "
           "pass.post_grad_passes.fake_tensor_prop GraphLowering.run Scheduler.__init__ GraphLowering.codegen",
           "0/0: a span per pass step and per back-end stage, named as in PyTorch's logs");
    ok(c.spans_b[1] == 19 && c.spans_e[1] == 19, "1/0: 19 pass spans after 'run' (%d/%d)", c.spans_b[1], c.spans_e[1]);
    ok(c.ts_ordered, "every span ends at or after its start");
    ok(c.metric_s[0] > 0 && c.metric_s[0] < 60, "0/0: the compile time is the summed steps (%g s)", c.metric_s[0]);
    is_str(c.fail[0], "", "0/0: no failure");
    ok(!strcmp(c.co_name[0], "<lambda>") && !strcmp(c.co_name[1], "GraphModule"),
       "each compile's metrics name its own graph (%s, %s)", c.co_name[0], c.co_name[1]);
    free(r.out);
    /* the report reads the compile time and status from the metrics */
    char idx[300];
    snprintf(idx, sizeof idx, "%s/index.html", out);
    ok(file_has(idx, "<a href=\"minductor/compile_-_1_0_0.html\">1/0</a>") && file_has(idx, "pre_post_grad.py:1 in &lt;lambda&gt;") &&
       file_has(idx, "cond_two_results.py:1 in GraphModule"),
       "the report lists both compiles and their loaded files in the stack trie");
    /* a failure in the back end becomes the compile's fail_reason */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/unsupported.py", env.tmpdir);
    FILE *f = fopen(bad, "w");
    fputs("class GraphModule(torch.nn.Module):\n"
          "    def forward(self, arg0_1: \"f32[4, 4][4, 1]cpu\"):\n"
          "        foo: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.my_custom_op.default(arg0_1);  arg0_1 = None\n"
          "        return (foo,)\n", f);
    fclose(f);
    snprintf(cmds, sizeof cmds, "set errexit off; trace on %s; load %s; lower; trace off", log, bad);
    r = run(NULL, cmds, NULL);
    count_trace(log, &c);
    ok(c.metrics[0] == 1 && !strcmp(c.fail[0], "lowering: unsupported op 'aten.my_custom_op.default' (node 'foo')"),
       "a failed lowering is the compile's fail_reason (%s)", c.fail[0]);
    free(r.out);
}

/* ---------------------------------------------------------------- abuse: random sessions
 * Valid and invalid commands, bad arguments and garbage, in sessions that each start from a
 * real case. After each session the graph must still be loaded and lint clean, the settings
 * kept, and `quit` must end the program normally (exit 0 when interactive; a script that had
 * errors exits 1, see repl/README.md). Most sessions read a script on stdin; one drives the
 * interactive shell (readline) through a pseudo-terminal, with tab completion. No exec (cc):
 * test_full_session and test_oom run it. The sessions run in the temp dir. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (unsigned)(rng % n);
}

typedef struct Script { char *s; size_t len, cap; int commands; } Script;
static void sc_put(Script *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sc_put(Script *sc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (sc->len + (size_t)n + 1 > sc->cap) {
        sc->cap = (sc->len + (size_t)n + 1) * 2;
        sc->s = realloc(sc->s, sc->cap);
    }
    va_start(ap, fmt);
    vsnprintf(sc->s + sc->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sc->len += (size_t)n;
}

static const char *const abuse_words[] = {
    /* loads: real cases, a log, JSON, bad files */
    "load " SEED, "load " VM, "load " LN, "load tests/fixtures/torch-cases/cpu/softmax/graph0/pre_post_grad.py",
    "load tests/fixtures/scripts/seed_example_trace.log", "load tests/fixtures/scripts/seed_example_trace.log 0/0",
    "load tests/fixtures/scripts/seed_example_trace.log 0/0 inductor_post_grad_graph",
    "load tests/fixtures/scripts/seed_example_trace.log 9/9", "load tests/fixtures/scripts/seed_session.mi",
    "load nosuch.py", "load tests", "load /dev/null", "load " SEED " 0/0", "load", "load a b c d",
    /* the pass manager */
    "graph", "graph --stack", "graph --json", "graph extra args", "passes", "step", "step", "step", "next",
    "next 3", "next -1", "next x", "next 99999999999999999999", "back", "back", "goto 0", "goto 3", "goto 99",
    "goto -1", "goto stable_sort", "goto reinplace_inplaceable_ops", "goto nosuch", "run", "break stable_sort",
    "break off", "break nosuch", "break", "diff", "diff 1", "diff 2", "diff 99", "diff stable_sort", "lint",
    "check", "bisect",
    /* inputs */
    "inputs", "inputs random", "inputs random 3", "inputs random -1", "inputs random x", "inputs " SEED_IN,
    "inputs " SEED_IN "/in0.npy", "inputs tests/fixtures/torch-cases/cpu/ln_gelu/graph0", "inputs nosuch.npy",
    "inputs /dev/null", "inputs random 1 2 3", "inputs " SEED,
    /* the back end (no exec here: it runs cc) */
    "lower", "ir", "ir post", "ir nosuch", "sched", "codegen", "codegen nosuch_kernel", "codegen cpp_fused_add_permute_select_0",
    /* pictures and files: %T is the session's temp dir */
    "show fx", "show diff", "show ir", "show fusion", "show", "show nope", "show fx --svg", "show diff 999",
    "show fx --svg %T/r.svg", "show fx --dot %T/r.dot", "show diff 1 --svg %T/d.svg", "show ir --dot %T/ir.dot",
    "show fusion --dot %T/f.dot", "show fx --png", "save", "save session", "save session %T/s.mi",
    "save graph %T/g.json", "save graph %T/g.py", "save graph /nonexistent/dir/g.py", "load %T/g.json",
    "load %T/g.py", "load %T/s.mi", "trace", "trace off", "trace on /nonexistent/x.log",

    /* settings */
    "set", "set seed 5", "set seed -5", "set fusion off", "set fusion on", "set fusion maybe", "set threads 2",
    "set threads -1", "set device cuda", "set device cpu", "set device tpu", "set foo 1", "set collapse 2",
    "set collapse 0", "set tolerance 1e-3", "set tolerance x y z", "set tolerance 1e-4 1e-5", "set timer on",
    "set timer off", "set",
    /* help, typos, quoting */
    "help", "help step", "help help", "help nosuch", "fo", "stpe", "grpah", "'unterminated", "\"quoted word\"",
    "\"graph\"", "'graph' --stack", "###", "  ", ";;", "# a comment", "graph # trailing comment",
};
#define N_ABUSE_WORDS ((int)(sizeof abuse_words / sizeof abuse_words[0]))

/* slow: a report writes a file per artifact of the growing log (1 in 1000 commands) */
static const char *const report_words[] = {"report %T/rep", "report", "report /nonexistent/dir/rep"};

/* words only the interactive session uses: tab completion */
static const char *const tty_words[] = {
    "lo\t" SEED, "gr\t", "set de\tcpu", "goto sta\t", "show f\t", "inputs tests/fix\t", "help st\t",
};

static void garbage(Script *sc, bool printable) {
    int n = 1 + (int)rnd(40);
    for (int i = 0; i < n; i++) {
        int c = printable ? 32 + (int)rnd(95) : 1 + (int)rnd(255);
        if (c == '\n' || (printable && c == 127)) c = 'x';
        sc_put(sc, "%c", c);
    }
}

/* One line of 1-3 commands. */
static void random_line(Script *sc, bool tty) {
    int k = 1 + (int)rnd(3);
    for (int c = 0; c < k; c++) {
        if (c) sc_put(sc, "; ");
        unsigned r = rnd(100);
        if (r < 4) garbage(sc, tty);
        else if (tty && r < 8) sc_put(sc, "%s", tty_words[rnd((unsigned)(sizeof tty_words / sizeof tty_words[0]))]);
        else {
            const char *w = r < 99 ? abuse_words[rnd(N_ABUSE_WORDS)]
                          : rnd(10) ? "trace on %T/t.log" : report_words[rnd(3)];
            for (const char *p = w; *p; p++) {
                if (p[0] == '%' && p[1] == 'T') { sc_put(sc, "%s", env.tmpdir); p++; }
                else sc_put(sc, "%c", *p);
            }
        }
        sc->commands++;
    }
    sc_put(sc, "\n");
}

#define END_MARK "END_OF_ABUSE"
/* The tail of every session: state checks, then quit, then a command that must not run. */
static void session_end(Script *sc) {
    sc_put(sc, END_MARK "\nset\ngraph\nlint\nquit\nAFTER_QUIT\n");
    sc->commands += 6;
}

/* What a session printed after END_MARK shows the state survived. */
static bool state_survived(const char *out, int session) {
    const char *m = NULL;
    for (const char *p = out; (p = strstr(p, "unknown command '" END_MARK "'")); p++) m = p;
    if (!m) { diag("session %d: never reached its end", session); return false; }
    bool ok_ = strstr(m, "errexit   off") && strstr(m, "class <lambda>(torch.nn.Module):") &&
               strstr(m, "torch.ops.aten.") && strstr(m, "lint: ok") && !strstr(m, "'AFTER_QUIT'");
    if (!ok_) diag("session %d: after the abuse: %.600s", session, m);
    return ok_;
}

static bool sanitizer_report(const char *out) {
    ShResult r = {.out = (char *)out};
    return sh_sanitizer_report(&r);
}

/* Bin on a pseudo-terminal, typing `input` a line at a time; killed after limit_s seconds. */
static Result run_tty(const char *input, int limit_s) { return sh_tty_type(&env, NULL, input, limit_s); }

static void test_random(void) {
    static const char *const starts[] = {SEED, VM, LN, "tests/fixtures/torch-cases/cpu/softmax/graph0/pre_post_grad.py",
                                         "tests/fixtures/torch-cases/cpu/reductions/graph0/pre_post_grad.py",
                                         "tests/fixtures/torch-cases/cpu/mlp/graph0/pre_post_grad.py"};
    int commands = 0, crashes = 0, lost = 0, bad_status = 0, sessions = 0;
    /* run in the temp dir (a bare `report` writes ./tl_out), with tests/ linked there */
    char cwd[300], link[400];
    snprintf(link, sizeof link, "%s/tests", env.tmpdir);
    if (!getcwd(cwd, sizeof cwd - 8) || symlink(strcat(cwd, "/tests"), link) != 0) { skip(5, "no tests/ link"); return; }
    snprintf(env.workdir, sizeof env.workdir, "%s", env.tmpdir);
    /* scripts on stdin */
    for (int proc = 0; proc < 6; proc++, sessions++) {
        Script sc = {0};
        sc_put(&sc, "set errexit off\nload %s\n", starts[proc]);
        sc.commands += 2;
        for (int line = 0; line < 850; line++) {
            if (rnd(50) == 0) { garbage(&sc, false); sc_put(&sc, "\n"); sc.commands++; }
            else random_line(&sc, false);
        }
        session_end(&sc);
        commands += sc.commands;
        const char *dump = getenv("MI_TEST_DUMP");     /* debugging aid: keep the scripts */
        if (dump) {
            char path[512];
            snprintf(path, sizeof path, "%s/random_%d.mi", dump, proc);
            FILE *df = fopen(path, "w");
            if (df) { fputs(sc.s, df); fclose(df); }
        }
        Result r = run(NULL, NULL, sc.s);
        if (r.signaled || sanitizer_report(r.out)) {
            crashes++;
            const char *t = strstr(r.out, "ERROR");
            diag("session %d: status %d signal %d %.2000s", proc, r.status, r.sig, t ? t : "");
        }
        if (!state_survived(r.out, proc)) lost++;
        if (r.status != 1) { bad_status++; diag("session %d: exit status %d, want 1 (a script with errors)", proc, r.status); }
        free(r.out);
        free(sc.s);
    }
    /* the interactive shell on a pseudo-terminal */
    Script sc = {0};
    sc_put(&sc, "set errexit off\nload " LN "\n");
    sc.commands += 2;
    for (int line = 0; line < 400; line++) random_line(&sc, true);
    session_end(&sc);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Result r = run_tty(sc.s, 60);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    diag("interactive session: %.2f s", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    const char *dump = getenv("MI_TEST_DUMP");
    if (dump) {
        char path[512];
        snprintf(path, sizeof path, "%s/tty.out", dump);
        FILE *df = fopen(path, "w");
        if (df) { fputs(r.out, df); fclose(df); }
        snprintf(path, sizeof path, "%s/tty.in", dump);
        df = fopen(path, "w");
        if (df) { fputs(sc.s, df); fclose(df); }
    }
    if (r.status == -2) { skip(1, "no pseudo-terminal"); }
    else {
        commands += sc.commands;
        sessions++;
        if (r.signaled || sanitizer_report(r.out)) {
            crashes++;
            const char *t = strstr(r.out, "ERROR");
            diag("interactive session: signal %d %.2000s", r.sig, t ? t : "");
        }
        if (!state_survived(r.out, 6)) lost++;
        is_int(r.status, 0, "interactive session (%d commands, readline, tab completion): quit exits 0", sc.commands);
    }
    free(r.out);
    free(sc.s);
    env.workdir[0] = 0;
    ok(commands >= 10000, "%d random commands in %d sessions", commands, sessions);
    is_int(crashes, 0, "no crash, no sanitizer report");
    is_int(lost, 0, "every session still has its graph (lint clean) and settings at the end, and nothing runs after quit");
    is_int(bad_status, 0, "scripts with errors end with status 1 at quit");
}

/* ---------------------------------------------------------------- out of memory
 * Graphs whose tensors cannot fit (4 TB; an element count past int64) must give an error
 * from inputs/check/run/bisect/exec, never kill the shell, and keep the graph. */
static void test_oom(void) {
    static const struct { const char *name, *text; } g[] = {
        {"huge_input", "    def forward(self, arg0_1: \"f32[1000000, 1000000][1000000, 1]cpu\"):\n"
                       "        relu: \"f32[1000000, 1000000][1000000, 1]cpu\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
                       "        return (relu,)\n"},
        {"broadcast", "    def forward(self, arg0_1: \"f32[1000000, 1][1, 1]cpu\", arg1_1: \"f32[1, 1000000][1000000, 1]cpu\"):\n"
                      "        add: \"f32[1000000, 1000000][1000000, 1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None\n"
                      "        return (add,)\n"},
        {"expand", "    def forward(self, arg0_1: \"f32[1][1]cpu\"):\n"
                   "        expand: \"f32[1000000, 1000000][0, 0]cpu\" = torch.ops.aten.expand.default(arg0_1, [1000000, 1000000]);  arg0_1 = None\n"
                   "        relu: \"f32[1000000, 1000000][1000000, 1]cpu\" = torch.ops.aten.relu.default(expand);  expand = None\n"
                   "        return (relu,)\n"},
        {"overflow", "    def forward(self, arg0_1: \"f32[10000000000, 10000000000][10000000000, 1]cpu\"):\n"
                     "        relu: \"f32[10000000000, 10000000000][10000000000, 1]cpu\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
                     "        return (relu,)\n"},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        char path[300], cmds[1024];
        snprintf(path, sizeof path, "%s/%s.py", env.tmpdir, g[i].name);
        FILE *f = fopen(path, "w");
        fprintf(f, "class <lambda>(torch.nn.Module):\n%s", g[i].text);
        fclose(f);
        /* exec (cc) for one graph only, to keep the test fast */
        snprintf(cmds, sizeof cmds, "load %s; inputs random; check; run; check; bisect; lower; sched; codegen;%s graph",
                 path, i == 2 ? " exec 1;" : "");
        Result r = run("-k", cmds, NULL);
        ok(!r.signaled && r.status == 1 && !sanitizer_report(r.out), "%s: errors, no crash (status %d)", g[i].name, r.status);
        int n = count_of(&r, "more than this machine's memory");
        ok(n >= 2, "%s: %d 'cannot allocate ... (more than this machine's memory)' errors", g[i].name, n);
        ok(has_line(&r, "class <lambda>(torch.nn.Module):"), "%s: the graph is still loaded", g[i].name);
        if (r.signaled || n < 2) diag("%.3000s", r.out);
        free(r.out);
    }
    /* a tensor of exactly the machine's memory: not more than physical memory, but more than is
     * ever available (it is refused before anything is allocated) */
    unsigned long long kb = 0;
    char line[128];
    FILE *mi = fopen("/proc/meminfo", "r");
    while (mi && fgets(line, sizeof line, mi) && sscanf(line, "MemTotal: %llu kB", &kb) != 1) {}
    if (mi) fclose(mi);
    if (!kb) { skip(2, "no /proc/meminfo"); return; }
    char path[300], cmds[600];
    snprintf(path, sizeof path, "%s/all_memory.py", env.tmpdir);
    FILE *f = fopen(path, "w");
    fprintf(f, "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[%llu][1]cpu\"):\n"
               "        relu: \"f32[%llu][1]cpu\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
               "        return (relu,)\n", kb * 256, kb * 256);
    fclose(f);
    snprintf(cmds, sizeof cmds, "load %s; inputs random; graph", path);
    Result r = run("-k", cmds, NULL);
    ok(!r.signaled && r.status == 1 && has(&r, "of memory available)"), "all of memory: refused as more than is available");
    ok(has_line(&r, "class <lambda>(torch.nn.Module):"), "all of memory: the graph is still loaded");
    if (!has(&r, "of memory available)")) diag("%.2000s", r.out);
    free(r.out);
}

/* ---------------------------------------------------------------- a full session, leak-checked
 * load a real case, inputs, passes, lower, sched, codegen, exec, trace, report, save, quit. In
 * the SANITIZE=1 build LeakSanitizer runs at exit: a leak makes the exit status nonzero and
 * prints a report. */
static void test_full_session(void) {
    char cmds[2048];
    snprintf(cmds, sizeof cmds,
             "trace on %s/full.log; load " SEED "; inputs " SEED_IN "; graph; passes; step; step; diff 1; run; "
             "lint; check; bisect; goto 0; run; lower; ir; ir post; sched; codegen; exec 2; show fx --svg %s/full.svg; "
             "show fusion --dot %s/fusion.dot; trace off; report %s/full_report; save session %s/full.mi; "
             "save graph %s/full.json; load %s/full.json; lower; sched; exec 1; quit",
             env.tmpdir, env.tmpdir, env.tmpdir, env.tmpdir, env.tmpdir, env.tmpdir, env.tmpdir);
    Result r = run(NULL, cmds, NULL);
    is_int(r.status, 0, "full session (load, passes, lower, sched, codegen, exec, trace, report, save) exits 0");
    ok(!sanitizer_report(r.out), "full session: no sanitizer or leak report");
    is_int(count_of(&r, "exec: ok"), 2, "full session: both execs agree with the interpreter");
    char p[400];
    snprintf(p, sizeof p, "%s/full_report/index.html", env.tmpdir);
    ok(access(p, R_OK) == 0, "full session: report written");
    if (r.status || sanitizer_report(r.out)) diag("%.4000s", r.out);
    free(r.out);
    /* is LeakSanitizer really on in this binary? (ASan prints its flags with help=1) */
    const char *old = getenv("ASAN_OPTIONS");
    char *saved = old ? strdup(old) : NULL;
    setenv("ASAN_OPTIONS", "help=1", 1);
    r = run(NULL, "quit", NULL);
    diag("full session ran %s", has(&r, "detect_leaks") ? "under ASan with LeakSanitizer" : "without sanitizers (plain build)");
    free(r.out);
    if (saved) { setenv("ASAN_OPTIONS", saved, 1); free(saved); } else unsetenv("ASAN_OPTIONS");
}

int main(void) {
    if (sh_init(&env, "minductor_shellXXXXXX") < 0) return 0;
    struct { const char *name; void (*fn)(void); } groups[] = {
        {"help", test_help}, {"real case", test_real_case}, {"errors", test_errors},
        {"fixtures", test_fixtures}, {"session save", test_session_save}, {"save graph", test_save_graph},
        {"show and inputs", test_show_and_inputs}, {"trace", test_trace}, {"trace pipeline", test_trace_pipeline}, {"random", test_random},
        {"out of memory", test_oom}, {"full session", test_full_session},
    };
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        groups[i].fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        diag("%s: %.2f s", groups[i].name, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    sh_cleanup(&env);
    return done_testing();
}
