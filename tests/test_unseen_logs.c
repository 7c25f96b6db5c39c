/* test_unseen_logs.c — real torch.compile logs of models written after the rest of the project
 * (tests/fixtures/unseen/logs.tgz, see its README): every graph Inductor compiled in them goes
 * through tests/tools/survey_logs.sh with this build's binary: load from the log, the post-grad
 * passes (their text must equal the log's inductor_post_grad_graph), `inputs random; check;
 * exec 1`. One TAP point per graph, and the count of graphs, so a log that stops loading fails. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "tests/support/shell_harness.h"

int main(void) {
    ShellEnv env;
    if (sh_init(&env, "minductor_unseenXXXXXX") < 0) return 0;
    FILE *p = sh_unseen_survey(&env, "survey_logs.sh");
    if (!ok(p != NULL, "the logs unpack")) { sh_cleanup(&env); return done_testing(); }
    char line[4096];
    int graphs = 0, exact = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "ok    ", 6) || !strncmp(line, "FAIL  ", 6)) {
            graphs++;
            bool same = strstr(line, "(post-grad exact)") != NULL;
            exact += same;
            ok(line[0] == 'o' && same, "%s", line + 6);
        } else if (line[0]) diag("%s", line);
    }
    pclose(p);
    is_int(graphs, 464, "464 compiled graphs in the 299 logs (GRU, LSTM and two avg pools: Dynamo refuses them; inference runs compile no backward)");
    is_int(exact, graphs, "every one gives PyTorch's post-grad text exactly");
    sh_cleanup(&env);
    return done_testing();
}
