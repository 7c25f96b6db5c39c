/* graph_load.c — graph_load_file: load any supported graph file, choosing the reader by
 * extension and content: JSON (".json", or text starting with '{') or FX print_readable text
 * (everything else: .py, .txt, payloads copied from logs). */
#include "fx/graph.h"

#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

Graph *graph_load_file(MiCtx *ctx, const char *path) {
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    if (!text) return NULL;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) i++;
    bool json = ends_with(path, ".json") || (i < len && text[i] == '{');
    Graph *g = json ? graph_from_json(ctx, text, len, path) : fx_parse(ctx, text, len, path, 1);
    free(text);
    return g;
}
