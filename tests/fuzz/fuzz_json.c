/* fuzz_json.c — libFuzzer target: the JSON graph loader never crashes; what loads writes back
 * to JSON that loads again. */
#include "fx/graph.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MiCtx *ctx = mi_ctx_new();
    Graph *g = graph_from_json(ctx, (const char *)data, size, "fuzz.json");
    if (g) {
        graph_lint(ctx, g, NULL);
        char *js = graph_to_json(g);
        Graph *g2 = graph_from_json(ctx, js, strlen(js), "written.json");
        if (!g2) abort();
        graph_free(g2);
        free(js);
        graph_free(g);
    }
    mi_ctx_free(ctx);
    return 0;
}
