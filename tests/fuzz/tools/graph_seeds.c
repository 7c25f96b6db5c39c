/* graph_seeds.c — seed files for the graph fuzzers: every FX file given on the command line
 * (that loads) is written as graph JSON, plus N random graphs (tests/support/graph_random.c) as both
 * JSON and FX text. Used by tests/fuzz/seeds.sh:
 *     graph_seeds OUT_JSON_DIR OUT_FX_DIR N file.py...                                    */
#include "tests/support/graph_random.h"
#include "ops/ops.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(MiCtx *ctx, const char *dir, const char *name, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mi_write_file(ctx, path, text, strlen(text));
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: graph_seeds JSON_DIR FX_DIR N [file.py...]\n"); return 2; }
    MiCtx *ctx = mi_ctx_new();
    int n = atoi(argv[3]), made = 0;
    for (int i = 4; i < argc; i++) {
        Graph *g = graph_load_file(ctx, argv[i]);
        if (!g) continue;
        char *js = graph_to_json(g), name[64];
        snprintf(name, sizeof name, "fx%d.json", i - 3);
        put(ctx, argv[1], name, js);
        free(js);
        graph_free(g);
        made++;
    }
    for (int s = 1; s <= n; s++) {
        Graph *g = graph_random(ctx, (uint64_t)s, NULL);
        if (!g) break;
        char *js = graph_to_json(g), *fx = fx_print(g, true), name[64];
        snprintf(name, sizeof name, "random%d.json", s);
        put(ctx, argv[1], name, js);
        snprintf(name, sizeof name, "random%d.py", s);
        put(ctx, argv[2], name, fx);
        free(js);
        free(fx);
        graph_free(g);
    }
    printf("graph_seeds: %d FX files as JSON, %d random graphs\n", made, n);
    mi_ctx_free(ctx);
    return 0;
}
