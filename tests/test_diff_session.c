/* test_diff_session.c — the shell's `diff session A.mi B.mi` (repl/cmd_diff_session.c): two
 * session scripts replayed apart and compared (settings, passes, graph node by node, fusion
 * groups and kernels by origins, each kernel's code), exact lines of text; the current session
 * untouched; errors naming the script, line and reason. */
#include "tap.h"
#include "tests/support/shell_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ShellEnv env;

static char *sh(const char *cmds, int *status) { return sh_output(&env, cmds, status); }
static bool has(const char *s, const char *pat) { return sh_text_has(s, pat); }

/* env.tmpdir/name holding text; the path in buf */
static const char *put(const char *name, const char *text, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", env.tmpdir, name);
    FILE *f = fopen(buf, "w");
    if (f) { fputs(text, f); fclose(f); }
    return buf;
}

static const char GRAPH[] =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[8, 16][16, 1]cpu\"):\n"
    "        relu: \"f32[8, 16][16, 1]cpu\" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None\n"
    "        add: \"f32[8, 16][16, 1]cpu\" = torch.ops.aten.add.Tensor(relu, %s);  relu = None\n"
    "        return (add,)\n";

int main(void) {
    if (sh_init(&env, "minductor_dsXXXXXX") < 0) return 0;
    char a[300], b[300], cmds[1400], text[800];
    int st;
    put("A.mi", "load examples/ln_gelu.py\nrun\n", a, sizeof a);
    put("B.mi", "# written by hand\nset fusion off\nload examples/ln_gelu.py   # the same graph\ngoto 3\n", b, sizeof b);

    /* fusion on, all passes vs fusion off, 3 passes; the current session (softmax at step 2) stays */
    snprintf(cmds, sizeof cmds, "load examples/softmax.py; next 2; diff session %s %s; passes; graph", a, b);
    int st1;
    char *o = sh(cmds, &st1);
    is_int(st1, 0, "diff session exits 0");
    ok(has(o, "  fusion                 A: on                         B: off\n") &&
           has(o, "  same: device cpu, threads 0, seed "), "settings: the one that differs, aligned; the ones that agree");
    ok(has(o, "passes: A at step 19 of 19, B at step 3 of 19\n") &&
           has(o, "  step  pass                                 A            B\n"
                  "  4     reorder_for_locality                 changed      pending\n"
                  "  5     remove_profiler_ops                  no change    pending\n"),
       "passes: step by step, applied/changed in A, pending in B");
    ok(has(o, "graph after the applied passes: A 18 nodes, B 18 nodes\n") &&
           has(o, "\n  -        sub: \"f32[64, 256][256, 1]cpu\" = torch.ops.aten.sub.Tensor(arg2_1, getitem_1);") &&
           has(o, "\n  +        sub: \"f32[64, 256][256, 1]cpu\" = torch.ops.aten.sub.Tensor(arg2_1, getitem_1);"),
       "graph: node by node, reorder_for_locality's move of sub (A only)");
    ok(has(o, "fusion groups (one loop nest each, matched by the FX nodes they compute): A 1, B 4, 0 in both\n"
              "  - only in A: [add add_1 add_2 erf mul mul_1 mul_2 mul_3 mul_4 rsqrt sub var_mean] in "
              "cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0\n") &&
           has(o, "  + only in B: [add_2 erf mul_2 mul_3 mul_4] in cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0\n"),
       "fusion groups: one in A, four loop nests in B, by the FX nodes they compute");
    ok(has(o, "kernels and their code (matched by the FX nodes they compute): A 1, B 1\n"
              "  ~ cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0  [add add_1 add_2 erf mul mul_1 mul_2 mul_3 mul_4 rsqrt sub var_mean]"
              "  code differs:\n") &&
           has(o, "\n      -        float loc_buf2[256];\n"), "kernels: matched by origins, the code's diff");
    ok(has(o, "diff session: 25 differences\n"), "the count: 1 setting, 16 steps, 2 graph lines, 5 groups, 1 kernel");
    /* the session it ran in: same passes and graph as without the diff */
    snprintf(cmds, sizeof cmds, "load examples/softmax.py; next 2; passes; graph");
    char *o0 = sh(cmds, &st);
    const char *t0 = o0 ? strstr(o0, "class <lambda>") : NULL, *t1 = o ? strstr(o, "class <lambda>") : NULL;
    ok(t0 && t1 && !strcmp(t0, t1) && has(o, "\n>   3   fake_tensor_prop"),
       "the current session's graph and pass cursor are what they were");
    free(o0);
    free(o);

    /* the same script twice: no difference */
    snprintf(cmds, sizeof cmds, "diff session %s %s", a, a);
    o = sh(cmds, &st);
    ok(has(o, "  same steps, same results\n") && has(o, "  same, node by node\n") &&
           has(o, "  = cpp_fused_add_erf_mul_rsqrt_sub_var_mean_0  [add add_1 add_2 erf mul mul_1 mul_2 mul_3 mul_4 rsqrt sub var_mean]  code same\n") &&
           has(o, "diff session: the two sessions agree (settings, passes, graph, kernels and their code)\n"),
       "a script against itself agrees everywhere");
    free(o);

    /* same fusion, different constant: the kernel's code differs in one line */
    char g1[300], g2[300], c1[300], c2[300];
    snprintf(text, sizeof text, GRAPH, "1.0");
    put("g1.py", text, g1, sizeof g1);
    snprintf(text, sizeof text, GRAPH, "2.0");
    put("g2.py", text, g2, sizeof g2);
    snprintf(text, sizeof text, "load %s\n", g1);
    put("c1.mi", text, c1, sizeof c1);
    snprintf(text, sizeof text, "load %s\n", g2);
    put("c2.mi", text, c2, sizeof c2);
    snprintf(cmds, sizeof cmds, "diff session %s %s", c1, c2);
    o = sh(cmds, &st);
    ok(has(o, "fusion groups (one loop nest each, matched by the FX nodes they compute): A 1, B 1, 1 in both\n") &&
           has(o, "  ~ cpp_fused_add_relu_0  [add relu]  code differs:\n") &&
           has(o, "\n      -            float tmp2 = 1.0f;\n      +            float tmp2 = 2.0f;\n") &&
           has(o, "diff session: 4 differences\n"),
       "kernels: same group, the code differs in the constant");
    free(o);

    /* save session, then compare the saved state with a script */
    char saved[300];
    snprintf(saved, sizeof saved, "%s/saved.mi", env.tmpdir);
    snprintf(cmds, sizeof cmds, "set fusion off; load examples/ln_gelu.py; goto 3; save session %s; diff session %s %s", saved,
             saved, b);
    o = sh(cmds, &st);
    ok(has(o, "  same steps, same results\n") && has(o, "diff session: the two sessions agree"),
       "a saved session and the script that builds the same state agree");
    free(o);

    /* errors: file, line, reason; nothing runs past them */
    static const struct { const char *name, *text, *want; } bad[] = {
        {"typo.mi", "load examples/ln_gelu.py\nlod x\n", "typo.mi:2: unknown command 'lod' (did you mean 'load'?)"},
        {"serve.mi", "load examples/ln_gelu.py\nserve\n", "serve.mi:2: 'serve' is not run by diff session: a compared script only builds state"},
        {"noload.mi", "set fusion off\n", "noload.mi: the script loads no graph (a session script starts with `load FILE`)"},
        {"badload.mi", "load /nonexistent/g.py\n", "badload.mi:1: load: /nonexistent/g.py: no such file"},
        {"semi.mi", "load examples/ln_gelu.py; set threads x\n", "semi.mi:1: set: threads must be a non-negative integer, got 'x'"},
        {"bin.mi", "load\x01\x02", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char p[300];
        put(bad[i].name, bad[i].text, p, sizeof p);
        if (!bad[i].want) {     /* a NUL byte inside: binary */
            FILE *f = fopen(p, "wb");
            if (f) { fwrite("load\0x\n", 1, 7, f); fclose(f); }
        }
        snprintf(cmds, sizeof cmds, "load examples/softmax.py; diff session %s %s; graph", a, p);
        o = sh(cmds, &st);
        char want[400];
        snprintf(want, sizeof want, "error: %s/%s", env.tmpdir, bad[i].want ? bad[i].want : "bin.mi: a binary file, not a session script");
        ok(st == 1 && has(o, want) && !strstr(o, "diff session A =") && has(o, "amax: \"f32[64, 1][1, 1]cpu\" = torch.ops.aten.amax.default"),
           "%s: the error names the script%s; the session goes on", bad[i].name, bad[i].want && strchr(bad[i].want, ':') < strchr(bad[i].want, ' ') ? " and line" : "");
        free(o);
    }
    snprintf(cmds, sizeof cmds, "diff session %s %s/missing.mi", a, env.tmpdir);
    o = sh(cmds, &st);
    snprintf(text, sizeof text, "error: %s/missing.mi: cannot open: No such file or directory", env.tmpdir);
    ok(st == 1 && has(o, text), "a missing script");
    free(o);
    o = sh("diff session only_one.mi", &st);
    ok(st == 1 && has(o, "usage: diff [STEP|PASS] | diff session A.mi B.mi"), "usage");
    free(o);
    o = sh("help diff", &st);
    ok(has(o, "diff session: replay two session scripts (`save session FILE`), each in a session of its\n"), "help diff explains it");
    free(o);
    sh_cleanup(&env);
    return done_testing();
}
