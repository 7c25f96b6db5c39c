/* prepass.c — which graph of a compile in a TORCH_TRACE log is the one Inductor's post-grad
 * passes start from, for `load LOG ID` (repl/cmd_graph.c).
 *
 * torch 2.11's compile_fx_inner logs before_post_grad_graph after view_to_reshape and after
 * re-propagating the metas from the example inputs, then runs the passes and logs
 * inductor_post_grad_graph. When the two payloads are equal the log shows no pass at work
 * (a backward graph's view -> reshape is already in before_post_grad_graph, and so are its
 * example inputs' layouts), so we load the graph the compile was handed instead:
 * aot_forward_graph / aot_backward_graph for training, after_joint_graph (else
 * aot_inference_graph) for inference, and take the example inputs' layouts from the compile's
 * fx_graph_runnable, so the steps view_to_reshape and fake_tensor_prop redo what the log
 * skipped. */
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_before(const TraceCompileInfo *c, const char *name, int upto) {
    int k = 0;
    for (int a = 0; a < upto && a < c->n_artifacts; a++) k += !strcmp(c->artifacts[a], name);
    return k;
}

static int index_of(const TraceCompileInfo *c, const char *name, int nth) {
    int k = 0;
    for (int a = 0; a < c->n_artifacts; a++)
        if (!strcmp(c->artifacts[a], name) && ++k == nth) return a;
    return -1;
}

/* Which of the compile's Inductor compilations (1: forward or inference, 2: the backward)
 * the nth artifact `name` belongs to. */
static int inductor_index(const TraceCompileInfo *c, const char *name, int nth) {
    if (!strcmp(name, "before_post_grad_graph") || !strcmp(name, "inductor_post_grad_graph") ||
        !strcmp(name, "fx_graph_runnable"))
        return nth;
    int a = index_of(c, name, nth);
    if (a >= 0 && c->roles && c->roles[a] == 'b') {
        int k = count_before(c, "fx_graph_runnable", c->n_artifacts);
        return k > 1 ? k : 1;
    }
    return 1;
}

int trace_runnable_of(const TraceCompileInfo *c, const char *name, int nth) {
    int k = inductor_index(c, name, nth);
    return index_of(c, "fx_graph_runnable", k) >= 0 ? k : 0;
}

int trace_prepass_graph(MiCtx *ctx, const char *log, const TraceCompileInfo *c, const char **name, int *nth,
                        int *runnable_nth, char *note, size_t nnote) {
    note[0] = 0;
    int k = inductor_index(c, *name, *nth);
    *runnable_nth = trace_runnable_of(c, *name, *nth);
    if (strcmp(*name, "before_post_grad_graph") != 0 || index_of(c, "inductor_post_grad_graph", k) < 0) return 0;
    char *before = trace_extract_artifact_nth(ctx, log, c->id, "before_post_grad_graph", *nth, NULL);
    if (!before) return -1;
    char *after = trace_extract_artifact_nth(ctx, log, c->id, "inductor_post_grad_graph", k, NULL);
    if (!after) { free(before); return -1; }
    bool same = strcmp(before, after) == 0;
    free(before);
    free(after);
    if (!same) return 0;
    int a = index_of(c, *name, *nth);
    char role = a >= 0 && c->roles ? c->roles[a] : 0;
    const char *alt = NULL;
    if (role == 'b') alt = "aot_backward_graph";
    else if (role == 'f') alt = "aot_forward_graph";
    else if (index_of(c, "after_joint_graph", 1) >= 0) alt = "after_joint_graph";
    else alt = "aot_inference_graph";
    if (index_of(c, alt, 1) < 0) {
        snprintf(note, nnote, "%s equals inductor_post_grad_graph (torch logs it after view_to_reshape and the "
                 "example inputs' meta propagation) and the log has no %s to load instead", *name, alt);
        return 0;
    }
    char was[96];
    if (count_before(c, *name, c->n_artifacts) > 1) snprintf(was, sizeof was, "%s#%d", *name, *nth);
    else snprintf(was, sizeof was, "%s", *name);
    bool before_joint = !strcmp(alt, "aot_inference_graph");
    snprintf(note, nnote, "%s equals inductor_post_grad_graph: torch logs it after view_to_reshape and the example "
             "inputs' meta propagation, so it shows no pass at work. Loaded %s, %s%s; "
             "steps view_to_reshape and fake_tensor_prop redo the rest", was, alt,
             before_joint ? "the graph before Inductor's joint-graph passes (the log has no after_joint_graph)"
                          : "the graph Inductor was handed",
             *runnable_nth ? ", with the example inputs' layouts of fx_graph_runnable" : "");
    *name = c->artifacts[index_of(c, alt, 1)];
    *nth = 1;
    return 0;
}
