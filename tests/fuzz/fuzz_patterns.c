/* fuzz_patterns.c — libFuzzer target for user pattern files (core/fx_passes/pattern_file.c,
 * the shell's `patterns FILE`): the input is a pattern file, optionally followed by a line
 * "===" and an FX graph (else a small built-in graph). The patterns are parsed (errors are
 * fine); when they load, the whole pass pipeline runs with them in pass_pattern_2 and that
 * step must leave a graph that lints clean: a rewrite that breaks the graph must be refused by
 * the matcher, not applied (a lint failure there aborts: a finding). Seeds: seed-patterns. */
#include "fx_passes/passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char builtin_graph[] =
    "class M(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[4, 8]\", y: \"f32[4, 8]\"):\n"
    "        r1: \"f32[4, 8]\" = torch.ops.aten.relu.default(x)\n"
    "        r2: \"f32[4, 8]\" = torch.ops.aten.relu.default(r1);  r1 = None\n"
    "        n: \"f32[4, 8]\" = torch.ops.aten.neg.default(y)\n"
    "        s: \"f32[4, 8]\" = torch.ops.aten.sub.Tensor(r2, n);  r2 = n = None\n"
    "        m: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(s, x);  s = x = None\n"
    "        t: \"f32[8, 4]\" = torch.ops.aten.permute.default(m, [1, 0]);  m = None\n"
    "        return (t, y)\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    const char *graph = builtin_graph;
    char *sep = strstr(text, "\n===\n");
    if (sep) { *sep = 0; graph = sep + 5; }
    MiCtx *ctx = mi_ctx_new();
    Graph *g = fx_parse(ctx, graph, strlen(graph), "fuzz.py", 1);
    IValue *in = NULL;
    int nin = 0;
    ctx->seed = 1;
    if (g && ops_resolve_graph(g) == 0 && graph_lint(ctx, g, NULL) == 0 && graph_num_placeholders(g) <= 8 &&
        interp_random_inputs(ctx, g, NULL, 0, &in, &nin) == 0) {
        bool small = true;
        for (int i = 0; i < nin; i++) if (in[i].kind == IV_TENSOR && tensor_numel(in[i].t) > 65536) small = false;
        PassManager *pm = small ? pm_new(ctx, g, in, nin) : NULL;
        if (pm && pm_add_patterns(pm, text, "fuzz.pat") == 0) {
            pm_run_all(pm);
            const PassStep *st = pm_step_record(pm, pm_find_pass(pm, "pass_pattern_2"));
            if (st && !st->error && !st->lint_ok) {
                fprintf(stderr, "fuzz_patterns: pass_pattern_2 left a graph that does not lint:\n%s\n",
                        st->lint_report ? st->lint_report : "");
                abort();
            }
        }
        pm_free(pm);
    }
    if (in) interp_free_outputs(in, nin);
    graph_free(g);
    mi_ctx_free(ctx);
    free(text);
    return 0;
}
