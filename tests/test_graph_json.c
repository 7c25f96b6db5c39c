/* test_graph_json.c — the JSON form of graphs: every FX fixture goes FX -> JSON -> FX back to
 * identical text (and JSON -> JSON is stable); graph_load_file picks the reader by content;
 * malformed JSON gives one clear error each. */
#include "fx/graph.h"
#include "tap.h"
#include "tests/support/fx_files.h"

#include <unistd.h>

static void bad_json(MiCtx *ctx, const char *text, int line, const char *substr, const char *name) {
    mi_clear_err(ctx);
    Graph *g = graph_from_json(ctx, text, strlen(text), "bad.json");
    ok(g == NULL, "%s: rejected", name);
    graph_free(g);
    ok(strstr(ctx->err.msg, substr) != NULL, "%s: message mentions '%s'", name, substr);
    if (!strstr(ctx->err.msg, substr)) diag("message: %s", ctx->err.msg);
    is_str(ctx->err.file, "bad.json", "%s: names the file", name);
    if (line) is_int(ctx->err.line, line, "%s: line", name);
}

int main(void) {
    FxFiles f = {0};
    fx_files_walk("tests/fixtures/torch-cases", &f, false);
    fx_files_walk("tests/fixtures/fx", &f, true);
    ok(f.n >= 110, "found %d FX fixtures", f.n);
    MiCtx *ctx = mi_ctx_new();
    int same = 0, stable = 0;
    for (int i = 0; i < f.n; i++) {
        size_t len;
        char *text = mi_read_file(ctx, f.v[i], &len);
        Graph *g = fx_parse(ctx, text, len, f.v[i], 1);
        if (!g) { ok(0, "load %s", f.v[i]); free(text); continue; }
        char *json = graph_to_json(g);
        Graph *h = graph_from_json(ctx, json, strlen(json), "mem.json");
        if (!h) {
            char eb[1400];
            ok(0, "JSON of %s reads back", f.v[i]);
            diag("%s", mi_err_str(ctx, eb, sizeof eb));
        } else {
            char *back = fx_print(h, true);
            if (strcmp(back, text) == 0) same++;
            else ok(0, "FX -> JSON -> FX identical for %s", f.v[i]);
            char *json2 = graph_to_json(h);
            if (strcmp(json, json2) == 0) stable++;
            else ok(0, "JSON -> graph -> JSON stable for %s", f.v[i]);
            if (graph_lint(ctx, h, NULL) != 0) ok(0, "JSON graph lints clean: %s", f.v[i]);
            free(json2);
            free(back);
            graph_free(h);
        }
        free(json);
        graph_free(g);
        free(text);
    }
    is_int(same, f.n, "FX -> JSON -> FX gives identical text for all %d fixtures", f.n);
    is_int(stable, f.n, "JSON is stable through a round trip");

    /* content of the JSON for one graph */
    Graph *g = fx_load_file(ctx, "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/post_post_grad.py");
    char *json = g ? graph_to_json(g) : NULL;
    ok(json && strstr(json, "\"target\":\t\"aten.var_mean.correction\""), "targets without torch.ops.");
    ok(json && strstr(json, "\"float\":\t\"1e-05\""), "floats as repr strings");
    ok(json && strstr(json, "\"size\":\t[\"64\", \"1\"]"), "sizes as expression strings");
    ok(json && strstr(json, "\"kwargs\":\t{"), "kwargs object");
    /* graph_load_file dispatches on content */
    const char *tmp = "/tmp/minductor_test_graph_json.json";
    if (json) {
        FILE *o = fopen(tmp, "w");
        fputs(json, o);
        fclose(o);
        Graph *h = graph_load_file(ctx, tmp);
        ok(h && h->n == g->n, "graph_load_file reads .json");
        graph_free(h);
        unlink(tmp);
    }
    Graph *h = graph_load_file(ctx, "tests/fixtures/torch-cases/cpu/ln_gelu/graph0/post_post_grad.py");
    ok(h && g && h->n == g->n, "graph_load_file reads FX text");
    graph_free(h);
    h = graph_load_file(ctx, "tests/fixtures/does-not-exist.py");
    ok(!h && strstr(ctx->err.msg, "cannot open"), "missing file: clear error");
    free(json);
    graph_free(g);

    /* dynamic shapes: sym placeholders and symbolic sizes survive */
    g = fx_load_file(ctx, "tests/fixtures/fx/cpu_dynamic_pointwise_aot_inference_graph.py");
    json = g ? graph_to_json(g) : NULL;
    ok(json && strstr(json, "\"sym\":\t\"s77\""), "Sym placeholder in JSON");
    ok(json && strstr(json, "\"s77\", \"s27\""), "symbolic sizes in JSON");
    free(json);
    graph_free(g);

    /* malformed JSON */
    bad_json(ctx, "", 1, "empty input", "empty");
    bad_json(ctx, "{\"format\": \"minductor-graph\",\n \"version\": 1,\n \"graph\": {\"nodes\": [}", 3, "malformed JSON", "syntax error");
    bad_json(ctx, "[1, 2]", 0, "expected a JSON object", "not an object");
    bad_json(ctx, "{\"format\": \"other\", \"version\": 1, \"graph\": {}}", 0, "format", "wrong format");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 7, \"graph\": {}}", 0, "unsupported version", "version");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {}}", 0, "\"nodes\" array", "no nodes");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": [{\"name\": \"x\", \"kind\": \"banana\"}]}}",
             0, "unknown node kind 'banana'", "bad kind");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": ["
                  "{\"name\": \"x\", \"kind\": \"placeholder\", \"meta\": {\"dtype\": \"f33\", \"size\": []}}]}}",
             0, "unknown dtype 'f33'", "bad dtype");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": ["
                  "{\"name\": \"y\", \"kind\": \"call_function\", \"target\": \"aten.sin.default\", \"args\": [{\"node\": \"foo\"}]}]}}",
             0, "undefined name 'foo'", "undefined node");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": ["
                  "{\"name\": \"x\", \"kind\": \"placeholder\"}, {\"name\": \"x\", \"kind\": \"placeholder\"}]}}",
             0, "duplicate name 'x'", "duplicate");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": ["
                  "{\"name\": \"x\", \"kind\": \"placeholder\", \"meta\": {\"dtype\": \"f32\", \"size\": [\"2 +\"]}}]}}",
             0, "bad size", "bad size expression");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": ["
                  "{\"name\": \"y\", \"kind\": \"call_function\", \"target\": \"aten.add.Tensor\", \"args\": [1.5]}]}}",
             0, "must be integers", "bare float");
    bad_json(ctx, "{\"format\": \"minductor-graph\", \"version\": 1, \"graph\": {\"nodes\": ["
                  "{\"name\": \"y\", \"kind\": \"call_function\", \"target\": \"aten.add.Tensor\", \"args\": [{\"bogus\": 1}]}]}}",
             0, "unknown value tag 'bogus'", "bad tag");
    ok(strstr(ctx->err.msg, "$.graph.nodes[0].args[0]") != NULL, "error names the JSON path");

    fx_files_free(&f);
    mi_ctx_free(ctx);
    return done_testing();
}
