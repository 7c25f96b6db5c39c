/* test_errors.c — the error contract of core/base/mi.h: mi_err / mi_errf fill ctx->err and
 * return -1, mi_err_str formats "file:line:col: msg", a tentative call inside mi_try /
 * mi_try_end leaves ctx->err as it was, and node errors (graph_node_err, op_unsupported_err)
 * name the graph's file, the node's line and the node. */
#include "tap.h"
#include "fx/graph.h"
#include "ops/ops.h"
#include "base/sym.h"

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char buf[2048];

    is_int(mi_err(ctx, "g.py", 3, 7, "bad %s", "thing"), -1, "mi_err returns -1");
    is_str(mi_err_str(ctx, buf, sizeof buf), "g.py:3:7: bad thing", "file:line:col: msg");
    is_int(mi_errf(ctx, "no %d location", 1), -1, "mi_errf returns -1");
    is_str(mi_err_str(ctx, buf, sizeof buf), "no 1 location", "mi_errf: message alone");
    is_str(ctx->err.file, "", "mi_errf: no file");

    /* a tentative parse that fails leaves the earlier error in place */
    mi_err(ctx, "keep.py", 1, 0, "the real error");
    MiTry t = mi_try(ctx);
    Expr *e = sym_parse(ctx, "2 * * s0", NULL);
    ok(e == NULL && strcmp(ctx->err.msg, "the real error") != 0, "inside the try: the parse error (%s)", ctx->err.msg);
    mi_try_end(&t);
    is_str(mi_err_str(ctx, buf, sizeof buf), "keep.py:1: the real error", "after mi_try_end: the earlier error");

    /* node errors */
    const char *src =
        "class M(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4]\"):\n"
        "        y: \"f32[4]\" = torch.ops.aten.frobnicate.default(x);  x = None\n"
        "        return (y,)\n";
    Graph *g = fx_parse(ctx, src, strlen(src), "m.py", 1);
    if (ok(g != NULL, "graph parses")) {
        Node *y = NULL;
        for (int i = 0; i < g->n; i++) if (!strcmp(g->nodes[i]->name, "y")) y = g->nodes[i];
        is_int(graph_node_err(ctx, g, y, "cannot %s", "lower"), -1, "graph_node_err returns -1");
        is_str(mi_err_str(ctx, buf, sizeof buf), "m.py:3: cannot lower (node 'y')", "file, node line, reason, node");
        op_unsupported_err(ctx, g, y);
        is_str(mi_err_str(ctx, buf, sizeof buf), "m.py:3: unsupported op 'aten.frobnicate.default' (node 'y')",
               "an unknown op names itself and its node");
        graph_free(g);
    }
    mi_ctx_free(ctx);
    return done_testing();
}
