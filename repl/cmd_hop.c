/* cmd_hop.c — looking inside higher-order ops' subgraphs in the shell: `enter NAME` narrows
 * graph / lint / show fx / passes / step / diff to a subgraph (a cond branch), `leave` goes back
 * out. The scope is a dotted path ("false_graph_0.true_graph_0") resolved again on every use,
 * so it follows the pass manager's cursor; the passes themselves always run over the whole tree
 * (core/fx_passes/passes.c, subgraphs first), and a subgraph's changes are named "true_graph_0.sin". */
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "fx_passes/passes.h"

const Graph *graph_at_path(const Graph *g, const char *path) {
    char part[256];
    while (g && path && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof part) return NULL;
        memcpy(part, path, n);
        part[n] = 0;
        g = graph_subgraph(g, part);
        path = dot ? dot + 1 : path + n;
    }
    return g;
}

const Graph *session_view(const Session *s) {
    const Graph *g = session_graph(s);
    if (!g || !s->scope) return g;
    const Graph *v = graph_at_path(g, s->scope);
    return v ? v : g;
}

char **session_subgraph_names(Session *s) {
    const Graph *g = session_view(s);
    int n = g ? g->nsubs : 0;
    char **names = mi_xcalloc(n + 1, sizeof *names);
    for (int i = 0; i < n; i++) names[i] = mi_xstrdup(g->subs[i].name);
    return names;
}

static void where(Session *s) {
    const Graph *g = session_view(s);
    int ops = 0;
    for (int i = 0; i < g->n; i++) ops += g->nodes[i]->kind == N_CALL_FUNCTION;
    if (s->scope) fprintf(s->out, "in subgraph %s: %d nodes (%d inputs, %d ops)", s->scope, g->n, graph_num_placeholders(g), ops);
    else fprintf(s->out, "at the top-level graph: %d nodes (%d inputs, %d ops)", g->n, graph_num_placeholders(g), ops);
    if (g->nsubs) {
        fprintf(s->out, "; subgraphs:");
        for (int i = 0; i < g->nsubs; i++) fprintf(s->out, " %s", g->subs[i].name);
    }
    fputc('\n', s->out);
}

int cmd_enter(Session *s, int argc, char **argv) {
    if (argc != 2) return usage_error(s, "enter");
    if (!session_require_graph(s)) return -1;
    const Graph *g = session_view(s);
    if (!graph_subgraph(g, argv[1])) {
        StrBuf names;
        sb_init(&names);
        for (int i = 0; i < g->nsubs; i++) sb_printf(&names, "%s%s", i ? ", " : "", g->subs[i].name);
        int rc = mi_err(s->ctx, "", 0, 0, "no subgraph '%s' here (%s%s)", argv[1], g->nsubs ? "subgraphs: " : "this graph has none",
                        names.s ? names.s : "");
        sb_free(&names);
        return rc;
    }
    size_t n = (s->scope ? strlen(s->scope) + 1 : 0) + strlen(argv[1]) + 1;
    char *path = mi_xmalloc(n);
    snprintf(path, n, "%s%s%s", s->scope ? s->scope : "", s->scope ? "." : "", argv[1]);
    free(s->scope);
    s->scope = path;
    where(s);
    return 0;
}

int cmd_leave(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "leave");
    if (!s->scope) return mi_err(s->ctx, "", 0, 0, "not inside a subgraph (see 'enter')");
    char *dot = strrchr(s->scope, '.');
    if (dot) *dot = 0;
    else { free(s->scope); s->scope = NULL; }
    if (session_graph(s)) where(s);
    return 0;
}

char *scoped_changes(Session *s, int step, bool *changed, int *count) {
    const PassStep *st = pm_step_record(s->pm, step);
    StrBuf b;
    sb_init(&b);
    *count = 0;
    *changed = false;
    size_t pl = strlen(s->scope);
    for (int k = 0; st && k < st->nchanges; k++) {
        const char *node = st->changes[k].node;
        /* its own nodes only: "scope.x", not "scope.inner.x" */
        if (strncmp(node, s->scope, pl) || node[pl] != '.' || strchr(node + pl + 1, '.')) continue;
        sb_printf(&b, "%c %s (%s)\n", st->changes[k].kind, node + pl + 1, st->changes[k].reason);
        (*count)++;
    }
    const Graph *a = graph_at_path(pm_graph_at(s->pm, step), s->scope);
    const Graph *z = graph_at_path(pm_graph_at(s->pm, step + 1), s->scope);
    if (a && z) {
        char *ta = fx_print_as(a, z, true), *tz = fx_print(z, true);
        *changed = strcmp(ta, tz) != 0;
        free(ta);
        free(tz);
    }
    if (!b.s) sb_put(&b, "");
    return sb_take(&b);
}
