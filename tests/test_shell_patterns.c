/* test_shell_patterns.c — a user adds a rewrite without recompiling: the shell's `patterns FILE`
 * loads a pattern file (core/fx_passes/patterns.md) into pass_pattern_2, keeps it for later graphs,
 * recomputes the steps, reports a bad file by file:line:col without changing anything, and
 * `patterns off` drops the rules. Drives $MINDUCTOR_BIN (else ./build/minductor) with -c. */
#include "tap.h"
#include "tests/support/shell_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static ShellEnv env;

/* `bin -c CMDS` through one pipe: the shared harness (tests/support/shell_harness.h) */
typedef ShResult Result;
static Result run(const char *cmds) { return sh_run(&env, NULL, cmds, NULL); }

#define PAT "tests/fixtures/patterns/user.pat"
#define DR "tests/fixtures/patterns/double_relu.py"

int main(void) {
    if (sh_init(&env, "minductor_patXXXXXX") < 0) return 0;
    /* set before loading, kept for the graph; the steps are checked with random inputs */
    Result r = run("patterns; patterns " PAT "; load " DR "; patterns; inputs random; run; graph");
    is_int(r.status, 0, "session exits 0");
    ok(strstr(r.out, "no user patterns\n") != NULL, "none at start");
    ok(strstr(r.out, "4 patterns from " PAT " (run in pass_pattern_2)\n") != NULL, "loading says how many");
    ok(strstr(r.out, "patterns from " PAT "\n") != NULL, "kept for the graph loaded after");
    ok(strstr(r.out, "    + relu_default (pattern double_relu)\n") != NULL, "pass_pattern_2 applies the user's rule");
    ok(strstr(r.out, "all 19 applied passes clean") != NULL, "lint and numerics hold");
    ok(strstr(r.out, "        relu_default: \"f32[4][1]cpu\" = torch.ops.aten.relu.default(x);  x = None\n"
                     "        return (relu_default,)\n") != NULL, "relu(relu(x)) became relu(x)");
    if (r.status) diag("%s", r.out);
    free(r.out);

    /* set after running: the steps are recomputed, the cursor stays; a bad file changes
     * nothing; off brings the graph back */
    r = run("set errexit off; load " DR "; run; patterns " PAT "; graph; patterns tests/fixtures/patterns/bad_syntax.pat; "
            "patterns; patterns off; graph; patterns a b");
    ok(strstr(r.out, "        return (relu_default,)\n") != NULL, "patterns after run: the current graph is rewritten");
    ok(strstr(r.out, "error: tests/fixtures/patterns/bad_syntax.pat:3:") != NULL, "bad file: file:line:col error");
    ok(strstr(r.out, "patterns from " PAT "\n") != NULL, "bad file: the previous rules stay");
    ok(strstr(r.out, "user patterns off\n") != NULL, "off");
    const char *off = strstr(r.out, "user patterns off\n");
    ok(off && strstr(off, "        return (relu_1,)\n") != NULL, "off: the original rewrite is gone");
    ok(strstr(r.out, "error: usage: patterns [FILE|off]") != NULL, "usage error");
    free(r.out);

    r = run("help patterns");
    ok(strstr(r.out, "usage: patterns [FILE|off]") != NULL, "help patterns");
    free(r.out);
    sh_cleanup(&env);
    return done_testing();
}
