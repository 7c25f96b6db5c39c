/* session.c — creating and changing the shell's Session (see session.h): loading a graph
 * resets the pass history and the compiled state; inputs feed the pass manager's numerics
 * checks; errors are printed here in one format. */
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include "session.h"
#include "teach.h"
#include "ops/inputs.h"
#include "base/tensor.h"
#include "base/same.h"
#include "viz/viz.h"
#include "trace/trace.h"

Session *session_new(void) {
    Session *s = mi_xcalloc(1, sizeof *s);
    s->ctx = mi_ctx_new();
    s->out = stdout;
    s->err = stderr;
    s->errexit = true;
    s->collapse_over = 200;
    s->rtol = 1e-4;
    s->atol = 1e-4;
    return s;
}

void session_drop_compile(Session *s) {
    if (s->cs) { compile_state_free(s->cs); s->cs = NULL; }
}

void session_free_inputs(IValue *in, int n) { inputs_free(in, n); }

static void drop_pm(Session *s) {
    if (s->pm) { pm_free(s->pm); s->pm = NULL; }
}

void session_free(Session *s) {
    if (!s) return;
    teach_free(s);                /* stops the live view's server before the state goes */
    if (s->ctx && s->ctx->trace) strace_close(s);     /* its metrics name the graph: first */
    session_drop_compile(s);
    drop_pm(s);
    session_free_inputs(s->inputs, s->ninputs);
    input_layouts_free(s->layouts, s->nlayouts);
    if (s->graph) graph_free(s->graph);
    if (s->forward) graph_free(s->forward);
    free(s->trace_fail);
    viz_renderer_free(s->viz);
    free(s->load_args);
    free(s->inputs_args);
    free(s->break_pass);
    free(s->patterns_path);
    free(s->scope);
    free(s->trace_path);
    mi_ctx_free(s->ctx);
    free(s);
}

const Graph *session_graph(const Session *s) {
    if (s->pm) return pm_graph(s->pm);
    return s->graph;
}

bool session_require_graph(Session *s) {
    if (session_graph(s)) return true;
    mi_err(s->ctx, "", 0, 0, "no graph loaded (try 'load FILE')");
    return false;
}

int session_rebuild_pm(Session *s) {
    int cursor = s->pm ? pm_cursor(s->pm) : 0;
    session_drop_compile(s);      /* the IR points into the pass manager's graphs */
    drop_pm(s);
    if (!s->graph) return 0;
    s->pm = pm_new(s->ctx, s->graph, s->inputs, s->ninputs);
    if (!s->pm) return -1;
    if (s->ctx->target == MI_DEV_CUDA) {
        Device d = { DEV_CUDA, 0 };
        pm_set_device(s->pm, d);
    }
    pm_set_tolerance(s->pm, s->rtol, s->atol);
    if (s->nlayouts) pm_set_input_layouts(s->pm, s->layouts, s->nlayouts);
    if (s->patterns_path && pm_load_patterns(s->pm, s->patterns_path) < 0) return -1;
    if (s->break_pass) pm_set_break(s->pm, s->break_pass);
    if (cursor > 0 && pm_goto(s->pm, cursor) < 0) return -1;
    return 0;
}

void session_set_graph(Session *s, Graph *g, const char *load_args) {
    session_drop_compile(s);
    drop_pm(s);
    if (s->graph) graph_free(s->graph);
    s->graph = g;
    if (s->forward) graph_free(s->forward);
    s->forward = NULL;
    free(s->load_args);
    s->load_args = load_args ? mi_xstrdup(load_args) : NULL;
    /* inputs belong to the previous graph */
    session_free_inputs(s->inputs, s->ninputs);
    s->inputs = NULL; s->ninputs = 0;
    mi_consts_clear(s->ctx);   /* and so do its tensor constants */
    free(s->inputs_args); s->inputs_args = NULL;
    free(s->break_pass); s->break_pass = NULL;
    free(s->scope); s->scope = NULL;
    input_layouts_free(s->layouts, s->nlayouts);
    s->layouts = NULL; s->nlayouts = 0;
    session_rebuild_pm(s);
}

void session_set_layouts(Session *s, InputLayout *l, int n) {
    input_layouts_free(s->layouts, s->nlayouts);
    s->layouts = l;
    s->nlayouts = n;
    if (s->pm) pm_set_input_layouts(s->pm, l, n);
}

void session_set_inputs(Session *s, IValue *in, int n, const char *args) {
    session_free_inputs(s->inputs, s->ninputs);
    s->inputs = in; s->ninputs = n;
    free(s->inputs_args);
    s->inputs_args = args ? mi_xstrdup(args) : NULL;
    session_rebuild_pm(s);
}

void session_set_forward(Session *s, Graph *fw) {
    if (s->forward) graph_free(s->forward);
    s->forward = fw;
}

int session_random_inputs(Session *s, IValue **in, int *n) {
    if (s->forward) {
        int taken = 0;
        MiTry tentative = mi_try(s->ctx);
        int rc = interp_random_inputs_from_forward(s->ctx, s->graph, s->forward, in, n, &taken);
        char why[300];
        snprintf(why, sizeof why, "%.299s", s->ctx->err.msg);
        mi_try_end(&tentative);
        if (rc == 0) {
            if (taken) fprintf(s->err, "note: %d input%s from a run of the forward graph (primals and saved tensors), the rest random\n",
                               taken, taken == 1 ? "" : "s");
            return 0;
        }
        fprintf(s->err, "note: the forward graph does not run (%s): every input is random\n", why);
    }
    return interp_random_inputs(s->ctx, s->graph, NULL, 0, in, n);
}

int session_ensure_inputs(Session *s) {
    if (s->inputs) return 0;
    if (!session_require_graph(s)) return -1;
    IValue *in = NULL; int n = 0;
    if (session_random_inputs(s, &in, &n) < 0) return -1;
    char args[64];
    snprintf(args, sizeof args, "random %llu", (unsigned long long)s->ctx->seed);
    /* Implicit inputs (exec after lower/sched) must not throw away the pass history or the
     * compiled state: hand them to the pass manager for the checks from here on. */
    session_free_inputs(s->inputs, s->ninputs);
    s->inputs = in; s->ninputs = n;
    free(s->inputs_args);
    s->inputs_args = mi_xstrdup(args);
    if (s->pm) pm_set_inputs(s->pm, in, n);
    return 0;
}

IValue *session_clone_inputs(MiCtx *ctx, const IValue *in, int n) {
    IValue *c = mi_xcalloc(n ? n : 1, sizeof *c);
    for (int i = 0; i < n; i++) {
        c[i] = in[i];
        if (in[i].kind == IV_TENSOR && in[i].t) {
            Tensor *copy = tensor_clone(ctx, in[i].t);
            if (!copy) {
                for (int j = 0; j < i; j++) ivalue_clear(&c[j]);
                free(c);
                return NULL;
            }
            c[i].t = copy;
        } else if (in[i].kind == IV_TUPLE) {
            c[i].kind = IV_NONE;     /* inputs are never tuples */
        }
    }
    return c;
}

VizRenderer *session_renderer(Session *s) {
    if (!s->viz) s->viz = viz_renderer_new(s->ctx);
    return s->viz;
}

void session_print_error(Session *s) {
    char buf[2048];
    mi_err_str(s->ctx, buf, sizeof buf);
    fflush(s->out);
    fprintf(s->err, "error: %s\n", buf[0] ? buf : "unknown error");
    fflush(s->err);
    mi_clear_err(s->ctx);
}
bool session_input_changed(const Session *s, const IValue *after, int i) {
    return s->inputs[i].kind == IV_TENSOR && after[i].kind == IV_TENSOR &&
           !tensor_same(s->inputs[i].t, after[i].t, NULL, 0, 0).ok;
}


/* The PyTorch exception an error message names: the first word ending in "Error" followed by
 * ':' ("... node 'div' (aten.div.Tensor_mode): ZeroDivisionError: ..." -> "ZeroDivisionError"),
 * copied into cls; false when it names none. */
static bool torch_exception(const char *msg, char *cls, size_t n) {
    for (const char *p = strstr(msg, "Error:"); p; p = strstr(p + 1, "Error:")) {
        const char *b = p;
        while (b > msg && isalpha((unsigned char)b[-1])) b--;
        if (b == p || !isupper((unsigned char)*b)) continue;
        snprintf(cls, n, "%.*s", (int)(p + 5 - b), b);
        return true;
    }
    return false;
}

bool session_same_raise(Session *s, const char *what, const char *first, const char *a, const char *b) {
    char second[2048], c1[64], c2[64];
    mi_err_str(s->ctx, second, sizeof second);
    if (!torch_exception(first, c1, sizeof c1) || !torch_exception(second, c2, sizeof c2) || strcmp(c1, c2)) return false;
    mi_clear_err(s->ctx);
    fprintf(s->out, "%s: ok (both raise %s, as PyTorch does on these inputs)\n  %s: %s\n  %s: %s\n", what, c1, a, first, b, second);
    return true;
}
