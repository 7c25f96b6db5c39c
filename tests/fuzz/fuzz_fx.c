/* fuzz_fx.c — libFuzzer target: the FX text parser, printer and lint must never crash.
 * Whatever parses must print and re-parse to the same text, and its JSON form (every value
 * kind, dict literals included: {"dict": [k, v, ...]}) must load back. */
#include "fx/graph.h"
#include "ops/ops.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = fx_parse(ctx, (const char *)data, size, "fuzz.py", 1);
    if (g) {
        graph_lint(ctx, g, NULL);
        char *text = fx_print(g, true);
        Graph *g2 = fx_parse(ctx, text, strlen(text), "printed.py", 1);
        if (!g2) abort();               /* our own output must parse */
        char *text2 = fx_print(g2, true);
        if (strcmp(text, text2) != 0) abort();
        char *js = graph_to_json(g);
        Graph *g3 = js ? graph_from_json(ctx, js, strlen(js), "printed.json") : NULL;
        if (!g3) abort();               /* our own JSON must load */
        graph_free(g3);
        free(js);
        free(text2);
        graph_free(g2);
        free(text);
        graph_free(g);
    }
    mi_ctx_free(ctx);
    return 0;
}
