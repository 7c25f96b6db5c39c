/* cmd_graph.c — shell commands about the graph itself: load (FX text, JSON, a compile of a
 * TORCH_TRACE log), graph (print), lint, inputs (random / .npy / directory) and check (the
 * current graph against the loaded one on the reference interpreter). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "commands.h"
#include "ops/inputs.h"
#include "ops/numerics.h"
#include "base/same.h"
#include "base/tensor.h"
#include "trace/trace.h"

/* argv[1..] as one line the splitter gives back word for word (for `save session`). */
static char *join_args(int argc, char **argv) {
    StrBuf sb; sb_init(&sb);
    sb_put(&sb, "");
    for (int i = 1; i < argc; i++) {
        if (i > 1) sb_putc(&sb, ' ');
        char *q = quote_word(argv[i]);
        sb_put(&sb, q);
        free(q);
    }
    return sb_take(&sb);
}

/* A TORCH_TRACE log starts with a glog prefix: "V1122 18:41:45.357000 ..." (or I/W/E). */
bool looks_like_trace_log(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char buf[16] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n >= 6 && strchr("VIWE", buf[0]) && buf[1] >= '0' && buf[1] <= '9' &&
           buf[2] >= '0' && buf[2] <= '9' && buf[5] == ' ';
}

static void print_graph_summary(Session *s, const Graph *g, const char *what) {
    int ph = 0, calls = 0, unsupported = 0;
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind == N_PLACEHOLDER) ph++;
        else if (n->kind == N_CALL_FUNCTION) { calls++; if (!n->op) unsupported++; }
    }
    fprintf(s->out, "loaded %s: %d nodes (%d inputs, %d ops", what, g->n, ph, calls);
    if (unsupported) fprintf(s->out, ", %d unsupported", unsupported);
    fprintf(s->out, ")\n");
    /* The passes follow the graph's device; lowering, sched and codegen follow `set device`. */
    if (graph_device(g).kind == DEV_CUDA && s->ctx->target != MI_DEV_CUDA)
        fprintf(s->out, "  on cuda: the passes run as for cuda; lower, sched and codegen target the CPU until 'set device cuda' (Inductor's GPU schedule, CUDA code)\n");
    if (unsupported) {
        for (int i = 0; i < g->n; i++) {
            const Node *n = g->nodes[i];
            if (n->kind == N_CALL_FUNCTION && !n->op)
                fprintf(s->out, "  unsupported op '%s' (node '%s')\n", n->target, n->name);
        }
    }
}

static const char *const default_artifacts[] = {
    "before_post_grad_graph", "aot_inference_graph", "aot_forward_graph", "aot_joint_graph", NULL
};

/* "a, b#1 (forward), b#2 (backward)": the graph artifacts of c, as `load LOG ID SPEC` takes. */
static void graph_specs_text(const TraceCompileInfo *c, StrBuf *b) {
    char **v = trace_graph_specs(c, true);
    for (int i = 0; v[i]; i++) {
        sb_printf(b, "%s%s", i ? ", " : "", v[i]);
        free(v[i]);
    }
    free(v);
}

/* The listing's "graphs:" line under a compile, wrapped at about 100 columns. */
static void print_graph_specs(Session *s, const TraceCompileInfo *c) {
    char **v = trace_graph_specs(c, true);
    int col = 0;
    for (int i = 0; v[i]; i++) {
        int l = (int)strlen(v[i]);
        if (i == 0) col = fprintf(s->out, "  %-8s graphs: %s", "", v[i]);
        else if (col + 2 + l > 100) col = fprintf(s->out, ",\n  %-8s         %s", "", v[i]) - 2;
        else col += fprintf(s->out, ", %s", v[i]);
        free(v[i]);
    }
    if (v[0]) fputc('\n', s->out);
    free(v);
}

/* A truncated or damaged log: say where, before anything fails (a warning, not an error: what
 * was read may well be the graph wanted). Example: "warning: t.log:547: truncated_payload:
 * torch._functorch.config: log ends inside the payload (1 problem line in the log; ...)". */
static void warn_log_issues(Session *s, const char *log, const TraceCompileList *cl) {
    if (cl->n_issues <= 0) return;
    const TraceIssue *is = &cl->first_issue;
    fprintf(s->err, "warning: %s:%ld: %s%s%s (%ld problem line%s in the log; "
            "'minductor tlparse %s' lists them)\n", log, is->line, trace_issue_kind_name(is->kind),
            is->detail[0] ? ": " : "", is->detail, cl->n_issues, cl->n_issues == 1 ? "" : "s", log);
}

static int list_compiles(Session *s, const char *log, TraceCompileList *cl) {
    if (trace_list_compiles(s->ctx, log, cl) < 0) return -1;
    fprintf(s->out, "%s: %d compile%s\n", log, cl->n, cl->n == 1 ? "" : "s");
    int w = 40;     /* the status column fits the longest status (restart/failure reasons) */
    for (int i = 0; i < cl->n; i++) {
        int l = (int)strlen(cl->c[i].status);
        if (l > w) w = l > 80 ? 80 : l;
    }
    for (int i = 0; i < cl->n; i++) {
        const TraceCompileInfo *c = &cl->c[i];
        int graphs = 0;
        for (int a = 0; a < c->n_artifacts; a++)
            for (int d = 0; default_artifacts[d]; d++)
                if (strcmp(c->artifacts[a], default_artifacts[d]) == 0) graphs++;
        fprintf(s->out, "  %-8s %-*s %d artifacts%s\n", c->id, w, c->status, c->n_artifacts,
                graphs ? ", has a graph" : "");
        print_graph_specs(s, c);
        char cg[600];
        if (*trace_cudagraph_summary(c, cg, sizeof cg)) fprintf(s->out, "  %-8s cudagraphs: %s\n", "", cg);
    }
    warn_log_issues(s, log, cl);
    return 0;
}

static bool has_graph(const TraceCompileInfo *c) {
    for (int a = 0; a < c->n_artifacts; a++)
        for (int d = 0; default_artifacts[d]; d++)
            if (strcmp(c->artifacts[a], default_artifacts[d]) == 0) return true;
    return false;
}

/* Why compile `cid` of the log gives no graph: it is not there (the ids are listed), or it
 * failed / was restarted (the retry that has the graph is named). */
static void explain_no_graph(Session *s, const char *log, const char *cid) {
    TraceCompileList cl = {0};
    if (trace_list_compiles(s->ctx, log, &cl) < 0) return;
    const TraceCompileInfo *c = NULL, *retry = NULL;
    StrBuf ids; sb_init(&ids);
    sb_put(&ids, "");
    size_t n = strlen(cid);
    for (int i = 0; i < cl.n; i++) {
        if (!strcmp(cl.c[i].id, cid)) c = &cl.c[i];
        else if (!strncmp(cl.c[i].id, cid, n) && cl.c[i].id[n] == '_' && has_graph(&cl.c[i])) retry = &cl.c[i];
        if (ids.len < 300) sb_printf(&ids, "%s%s", i ? ", " : "", cl.c[i].id);
    }
    if (!c) mi_err(s->ctx, log, 0, 0, "no compile %s in this log (compile ids: %s)", cid, cl.n ? ids.s : "none");
    else if (retry) mi_err(s->ctx, log, 0, 0, "compile %s has no graph (%.200s); its retry has one: load %s %s", cid,
                           c->status, log, retry->id);
    else if (c->failed || c->restarted) mi_err(s->ctx, log, 0, 0, "compile %s has no graph: %.300s", cid, c->status);
    sb_free(&ids);
    trace_compile_list_free(&cl);
}

static const TraceCompileInfo *find_compile(const TraceCompileList *cl, const char *cid) {
    for (int i = 0; cid && i < cl->n; i++)
        if (!strcmp(cl->c[i].id, cid)) return &cl->c[i];
    return NULL;
}

/* "NAME" / "NAME#N" and " (backward)" for the nth artifact NAME of c, into desc. */
static void describe_artifact(const TraceCompileInfo *c, const char *name, int nth, char *desc, size_t n) {
    int count = 0, at = -1;
    for (int a = 0; a < c->n_artifacts; a++)
        if (!strcmp(c->artifacts[a], name) && ++count == nth) at = a;
    int len = count > 1 ? snprintf(desc, n, "%s#%d", name, nth) : snprintf(desc, n, "%s", name);
    char role = at >= 0 && c->roles ? c->roles[at] : 0;
    if (role && len > 0 && (size_t)len < n)
        snprintf(desc + len, n - (size_t)len, " (%s)", role == 'f' ? "forward" : role == 'b' ? "backward" : "joint");
}

/* SPEC names no graph of compile c: say which exist. */
static void spec_not_found(Session *s, const char *log, const TraceCompileInfo *c, const char *spec) {
    StrBuf g; sb_init(&g);
    sb_put(&g, "");
    graph_specs_text(c, &g);
    const char *hash = strchr(spec, '#');
    size_t len = hash ? (size_t)(hash - spec) : strlen(spec);
    int count = 0;
    for (int a = 0; a < c->n_artifacts; a++)
        count += strlen(c->artifacts[a]) == len && !strncmp(c->artifacts[a], spec, len);
    char what[400];
    if (!strcmp(spec, "forward") || !strcmp(spec, "backward"))
        snprintf(what, sizeof what, "compile %s has no graph the log marks as %s", c->id, spec);
    else if (hash && count > 0)
        snprintf(what, sizeof what, "compile %s has %d \"%.*s\" artifact%s, no \"%.200s\"", c->id, count, (int)len, spec,
                 count == 1 ? "" : "s", spec);
    else
        snprintf(what, sizeof what, "no artifact \"%.200s\" for compile id %s in this log", spec, c->id);
    if (g.len)
        mi_err(s->ctx, log, 0, 0, "%s; its graphs: %.2000s (load %s %s NAME, NAME#N for the N-th of a repeated name)",
               what, g.s, log, c->id);
    else
        mi_err(s->ctx, log, 0, 0, "%s; it has no graph artifact (%d other artifacts)", what, c->n_artifacts);
    sb_free(&g);
}

/* Where a graph picked from a log comes from (load_from_log's result besides the graph). */
typedef struct LogPick {
    char desc[400];          /* "before_post_grad_graph#2 (backward)" when the log tells more than the id */
    bool other_backward;     /* a default load took a forward and the compile also has a backward */
    bool backward;           /* the graph loaded is a backward (its forward is in the same compile) */
    char note[800];          /* why another graph than the one asked for was loaded, or "" */
    InputLayout *layouts;    /* the example inputs' layouts of that compilation (fx_graph_runnable) */
    int nlayouts;
} LogPick;

/* The example inputs of the compile's nth fx_graph_runnable, into p (none when unreadable),
 * and its SymInt inputs' values as g's size hints. */
static void pick_layouts(Session *s, const char *log, const char *cid, int nth, LogPick *p, Graph *g) {
    if (nth <= 0) return;
    MiError saved = s->ctx->err;
    char *text = trace_extract_artifact_nth(s->ctx, log, cid, "fx_graph_runnable", nth, NULL);
    s->ctx->err = saved;
    if (!text) return;
    p->nlayouts = input_layouts_parse(text, &p->layouts);
    if (g) input_size_hints(text, g);
    free(text);
}

/* How many placeholders of g the example inputs give other strides than g prints. */
static int layouts_differing(const Graph *g, const InputLayout *l, int n) {
    int differ = 0;
    for (int i = 0; i < n; i++) {
        const Node *ph = graph_find((Graph *)g, l[i].name);
        if (!ph || ph->kind != N_PLACEHOLDER || !ph->has_meta || ph->meta.ndim != l[i].ndim) continue;
        for (int d = 0; d < l[i].ndim; d++) {
            int64_t st;
            if (!sym_is_int(ph->meta.stride[d], &st) || st != l[i].stride[d]) { differ++; break; }
        }
    }
    return differ;
}

/* Load a graph of compile cid (NULL = any) of the log: spec names it ("NAME", "NAME#N",
 * "forward", "backward"), NULL = the first of default_artifacts. For the default and
 * forward/backward, a before_post_grad_graph that equals the inductor_post_grad_graph after it
 * gives way to the graph the compile was handed (trace_prepass_graph says why, in p->note);
 * the compilation's example-input layouts go to p->layouts. warn: a damaged log (truncated, bad
 * lines) is named first, as `load LOG` does when it lists the compiles. */
static Graph *load_from_log(Session *s, const char *log, const char *cid, const char *spec, LogPick *p, bool warn) {
    char *text = NULL;
    int first_line = 1;
    memset(p, 0, sizeof *p);
    TraceCompileList cl = {0};
    if (cid && trace_list_compiles(s->ctx, log, &cl) < 0) return NULL;
    if (cid && warn) warn_log_issues(s, log, &cl);
    const TraceCompileInfo *c = find_compile(&cl, cid);
    const char *name = NULL;
    int nth = 1, runnable = 0;
    bool choose = false;          /* the choice is ours (default, forward, backward) */
    if (spec && c) {
        if (trace_resolve_graph_spec(c, spec, &name, &nth)) choose = !strcmp(spec, "forward") || !strcmp(spec, "backward");
        else spec_not_found(s, log, c, spec);
    } else if (spec) {
        text = trace_extract_artifact(s->ctx, log, cid, spec, &first_line);
    } else if (c) {
        for (int d = 0; default_artifacts[d] && !name; d++)
            for (int a = 0; a < c->n_artifacts && !name; a++)
                if (!strcmp(c->artifacts[a], default_artifacts[d])) name = c->artifacts[a];
        choose = name != NULL;
    } else {
        for (int d = 0; default_artifacts[d] && !text; d++) {
            mi_clear_err(s->ctx);
            text = trace_extract_artifact(s->ctx, log, cid, default_artifacts[d], &first_line);
        }
    }
    if (name) {
        if (choose && trace_prepass_graph(s->ctx, log, c, &name, &nth, &runnable, p->note, sizeof p->note) < 0) {
            trace_compile_list_free(&cl);
            return NULL;
        }
        if (!choose) runnable = trace_runnable_of(c, name, nth);   /* a named artifact: its example inputs */
        text = trace_extract_artifact_nth(s->ctx, log, cid, name, nth, &first_line);
        describe_artifact(c, name, nth, p->desc, sizeof p->desc);
        int a = 0, seen = 0;
        for (; a < c->n_artifacts; a++)
            if (!strcmp(c->artifacts[a], name) && ++seen == nth) break;
        bool has_role = a < c->n_artifacts && c->roles && c->roles[a];
        p->backward = has_role && c->roles[a] == 'b';
        if (!spec && has_role) {
            const char *bn;
            int bnth;
            p->other_backward = c->roles[a] != 'b' && trace_resolve_graph_spec(c, "backward", &bn, &bnth);
        }
        /* inference: the id says it all, unless the pick is not the usual graph (a log cut
         * before the post-grad graph: its aot_joint_graph) */
        if (!has_role && !spec && !p->note[0] && (!strcmp(name, default_artifacts[0]) || !strcmp(name, default_artifacts[1])))
            p->desc[0] = 0;
        if (!text) runnable = 0;
    } else if (!text && !spec) {
        mi_err(s->ctx, log, 0, 0, "compile %s has no graph artifact (%s, %s, ...); "
               "name one: load LOG COMPILE_ID ARTIFACT", cid ? cid : "(any)",
               default_artifacts[0], default_artifacts[1]);
        if (cid) explain_no_graph(s, log, cid);
    }
    trace_compile_list_free(&cl);
    if (!text) return NULL;
    Graph *g = fx_parse(s->ctx, text, strlen(text), log, first_line);
    free(text);
    if (g) pick_layouts(s, log, cid, runnable, p, g);
    if (g && p->note[0]) {        /* printed from now on as Inductor prints what it was handed */
        g->expanded_def = false;
        g->nout_comments = 0;
    }
    return g;
}

char **load_log_names(Session *s, const char *log, const char *cid) {
    if (!looks_like_trace_log(log)) return NULL;
    TraceCompileList cl = {0};
    MiTry tentative = mi_try(s->ctx);      /* completing must not leave an error behind */
    int rc = trace_list_compiles(s->ctx, log, &cl);
    mi_try_end(&tentative);
    if (rc < 0) return NULL;
    char **v;
    if (!cid) {
        v = mi_xcalloc((size_t)cl.n + 1, sizeof *v);
        for (int i = 0; i < cl.n; i++) v[i] = mi_xstrdup(cl.c[i].id);
    } else {
        const TraceCompileInfo *c = find_compile(&cl, cid);
        if (!c) { trace_compile_list_free(&cl); return NULL; }
        v = trace_graph_specs(c, false);
        const char *bn;
        int k = 0, bnth;
        while (v[k]) k++;
        v = mi_xrealloc(v, sizeof *v * (size_t)(k + 3));
        if (trace_resolve_graph_spec(c, "forward", &bn, &bnth)) v[k++] = mi_xstrdup("forward");
        if (trace_resolve_graph_spec(c, "backward", &bn, &bnth)) v[k++] = mi_xstrdup("backward");
        v[k] = NULL;
    }
    trace_compile_list_free(&cl);
    return v;
}

/* What a user who typed `load DIR` probably meant: a recorded case's graph, or a log in it. */
static const char *dir_hint(const char *dir, char *buf, size_t n) {
    buf[0] = 0;
    DIR *d = opendir(dir);
    if (!d) return buf;
    int logs = 0;
    bool graph = false;
    char first_log[256] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".log") && !logs++) snprintf(first_log, sizeof first_log, "%s", e->d_name);
        if (!strcmp(e->d_name, "pre_post_grad.py")) graph = true;
    }
    closedir(d);
    const char *sep = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
    if (!graph && !logs) {     /* a recorded case's folder: its graphs are graph0/, graph1/, ... */
        int ngraphs = 0;
        char sub[1200];
        for (;; ngraphs++) {
            snprintf(sub, sizeof sub, "%s%sgraph%d/pre_post_grad.py", dir, sep, ngraphs);
            if (access(sub, R_OK) != 0) break;
        }
        if (ngraphs)
            snprintf(buf, n, " (a recorded case with %d graph%s: try 'load %s%sgraph0/pre_post_grad.py; inputs %s%sgraph0')",
                     ngraphs, ngraphs == 1 ? "" : "s", dir, sep, dir, sep);
        return buf;
    }
    if (graph) snprintf(buf, n, " (try 'load %s%spre_post_grad.py; inputs %s')", dir, sep, dir);
    else if (logs == 1) snprintf(buf, n, " (try 'load %s%s%s')", dir, sep, first_log);
    else if (logs > 1) snprintf(buf, n, " (%d logs here: 'load %s%sFILE.log', or 'report --all-ranks %s')", logs, dir, sep, dir);
    return buf;
}

/* The forward of a backward g loaded from a log (the same compile's), or NULL when it cannot
 * be read: g's placeholders take the conj/neg bits of the forward nodes they were saved from,
 * as AOT's partitioner gives them (ops_view_bits_from_forward; *bits counts them), and random
 * inputs run the forward for the primals and saved tensors (session_random_inputs).
 * Example: `load hyena.log 0/0 backward`: `_conj` is a conjugate view, so clone(_conj) stays. */
static Graph *link_forward(Session *s, Graph *g, const char *log, const char *cid, int *bits) {
    LogPick fp;
    MiTry tentative = mi_try(s->ctx);
    Graph *fw = load_from_log(s, log, cid, "forward", &fp, false);
    mi_try_end(&tentative);
    input_layouts_free(fp.layouts, fp.nlayouts);
    *bits = 0;
    if (!fw) return NULL;
    ops_resolve_graph(fw);
    *bits = ops_view_bits_from_forward(g, fw);
    return fw;
}

/* The artifacts of c as `artifact LOG ID NAME` takes them: "name", "name#N" for the N-th of a
 * repeated one. Example: "dynamo_output_graph, ..., before_post_grad_graph#1, ...". */
static void artifact_names(const TraceCompileInfo *c, StrBuf *b) {
    for (int a = 0; a < c->n_artifacts; a++) {
        int count = 0, nth = 0;
        for (int k = 0; k < c->n_artifacts; k++)
            if (!strcmp(c->artifacts[k], c->artifacts[a])) { count++; if (k <= a) nth++; }
        sb_printf(b, "%s%s", a ? ", " : "", c->artifacts[a]);
        if (count > 1) sb_printf(b, "#%d", nth);
    }
}

/* `artifact LOG ID [NAME[#N]]`: what an engineer reading a log wants besides its graphs
 * (recompile_reasons, dynamo_guards, inductor_output_code, ...), as the log holds it; the
 * listing without NAME. The tours' @artifact lines run this. */
int cmd_artifact(Session *s, int argc, char **argv) {
    if (argc < 3 || argc > 4) return usage_error(s, "artifact");
    const char *log = argv[1], *cid = argv[2];
    struct stat st;
    if (stat(log, &st) != 0) return mi_err(s->ctx, log, 0, 0, "no such file");
    if (!S_ISREG(st.st_mode) || !looks_like_trace_log(log)) return mi_err(s->ctx, log, 0, 0, "not a TORCH_TRACE log");
    TraceCompileList cl = {0};
    if (trace_list_compiles(s->ctx, log, &cl) < 0) return -1;
    warn_log_issues(s, log, &cl);
    const TraceCompileInfo *c = find_compile(&cl, cid);
    StrBuf b;
    sb_init(&b);
    int rc = 0;
    if (!c) {
        for (int i = 0; i < cl.n; i++) sb_printf(&b, "%s%s", i ? ", " : "", cl.c[i].id);
        rc = mi_err(s->ctx, log, 0, 0, "no compile %s in this log (compile ids: %s)", cid, cl.n ? b.s : "none");
    } else if (argc == 3) {
        artifact_names(c, &b);
        fprintf(s->out, "compile %s of %s: %d artifact%s\n", cid, log, c->n_artifacts, c->n_artifacts == 1 ? "" : "s");
        int col = 0;      /* wrapped at 96 columns, after a comma */
        for (char *w = b.s ? strtok(b.s, " ") : NULL; w; w = strtok(NULL, " ")) {
            int wl = (int)strlen(w);
            if (col && col + 1 + wl > 96) { fputc('\n', s->out); col = 0; }
            col += fprintf(s->out, "%s%s", col ? " " : "  ", w);
        }
        fputc('\n', s->out);
    } else {
        char name[256];
        snprintf(name, sizeof name, "%s", argv[3]);
        char *hash = strchr(name, '#');
        long nth = 1;
        if (hash) { *hash = 0; nth = strtol(hash + 1, NULL, 10); }
        int have = 0;
        for (int a = 0; a < c->n_artifacts; a++) have += !strcmp(c->artifacts[a], name);
        char *text = NULL;
        if (nth >= 1 && nth <= have) text = trace_extract_artifact_nth(s->ctx, log, cid, name, (int)nth, NULL);
        if (text) {
            fprintf(s->out, "%s artifact of compile %s in %s:\n", argv[3], cid, log);
            fputs(text, s->out);
            if (*text && text[strlen(text) - 1] != '\n') fputc('\n', s->out);
            free(text);
        } else if (nth >= 1 && nth <= have) rc = -1;      /* the reader's error (a cut payload) */
        else {
            artifact_names(c, &b);
            rc = mi_err(s->ctx, log, 0, 0, "compile %s has no artifact %s; its artifacts: %s", cid, argv[3],
                        c->n_artifacts ? b.s : "none");
        }
    }
    sb_free(&b);
    trace_compile_list_free(&cl);
    return rc;
}

int cmd_load(Session *s, int argc, char **argv) {
    if (argc < 2 || argc > 4) return usage_error(s, "load");
    const char *path = argv[1];
    struct stat st;
    if (stat(path, &st) != 0) return mi_err(s->ctx, path, 0, 0, "no such file");
    char hint[1200];
    if (S_ISDIR(st.st_mode)) return mi_err(s->ctx, path, 0, 0, "is a directory, not a graph file%s", dir_hint(path, hint, sizeof hint));
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))    /* /dev/zero would be read forever */
        return mi_err(s->ctx, path, 0, 0, "is a device, not a graph file");
    Graph *g = NULL;
    char picked[96] = "";
    LogPick lp;
    memset(&lp, 0, sizeof lp);
    if (looks_like_trace_log(path)) {
        if (argc == 2) {
            TraceCompileList cl = {0};
            if (list_compiles(s, path, &cl) < 0) return -1;
            /* exactly one compile with a graph: load it; otherwise ask for an id */
            int pick = -1, ngraph = 0;   /* the compiles with a graph `load LOG ID` takes */
            for (int i = 0; i < cl.n; i++)
                if (has_graph(&cl.c[i])) { ngraph++; pick = i; }
            char cid[64] = "";
            if (ngraph == 1) snprintf(cid, sizeof cid, "%s", cl.c[pick].id);
            trace_compile_list_free(&cl);
            if (ngraph > 1) {        /* the listing was the answer: not an error (`minductor LOG -c ''`) */
                fprintf(s->err, "%d compiles have graphs: pick one with 'load %s COMPILE_ID [GRAPH]'%s\n", ngraph, path,
                        s->graph ? " (the current graph stays loaded)" : "");
                return 0;
            }
            if (ngraph == 0)
                return mi_err(s->ctx, path, 0, 0, "no compile has a graph artifact (%s, %s, ...); "
                              "to load another FX artifact name it: load %s COMPILE_ID ARTIFACT",
                              default_artifacts[0], default_artifacts[1], path);
            g = load_from_log(s, path, cid, NULL, &lp, false);   /* list_compiles warned */
            snprintf(picked, sizeof picked, "compile %s", cid);
        } else {
            g = load_from_log(s, path, argv[2], argc == 4 ? argv[3] : NULL, &lp, true);
        }
    } else {
        if (argc > 2) return mi_err(s->ctx, path, 0, 0, "not a TORCH_TRACE log: a COMPILE_ID only makes sense for logs");
        g = graph_load_file(s->ctx, path);
    }
    if (!g) { input_layouts_free(lp.layouts, lp.nlayouts); return -1; }
    ops_resolve_graph(g);
    int bits = 0;
    Graph *fw = lp.backward && argc > 2 ? link_forward(s, g, path, argv[2], &bits) : NULL;
    char *args = join_args(argc, argv);
    char what[1600];
    snprintf(what, sizeof what, "%s%s%s%s%s", path, argc > 2 ? " " : (picked[0] ? " " : ""),
             argc > 2 ? argv[2] : picked, lp.desc[0] ? " " : "", lp.desc);
    strace_end_compile(s);       /* tracing: the previous graph's compile ends here */
    session_set_graph(s, g, args);
    session_set_forward(s, fw);
    free(args);
    if (lp.note[0]) fprintf(s->out, "note: %s\n", lp.note);
    print_graph_summary(s, g, what);
    if (lp.nlayouts) {
        int differ = layouts_differing(g, lp.layouts, lp.nlayouts);
        session_set_layouts(s, lp.layouts, lp.nlayouts);
        if (differ)
            fprintf(s->out, "  example inputs: %d placeholder%s laid out otherwise (fx_graph_runnable); step fake_tensor_prop "
                    "re-infers the metas\n", differ, differ == 1 ? " is" : "s are");
    }
    if (lp.other_backward)
        fprintf(s->out, "  the backward: load %s %s backward\n", path, argc > 2 ? argv[2] : picked + 8);
    if (bits)
        fprintf(s->out, "  %d saved input%s conjugate or negative view%s in the forward (is_conj/is_neg, as remove_noop_ops compares)\n",
                bits, bits == 1 ? " is a" : "s are", bits == 1 ? "" : "s");
    strace_begin_compile(s);     /* tracing: this graph is the next compile id */
    return 0;
}

int cmd_graph(Session *s, int argc, char **argv) {
    bool stack = false, json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--stack")) stack = true;
        else if (!strcmp(argv[i], "--json")) json = true;
        else return usage_error(s, "graph");
    }
    if (!session_require_graph(s)) return -1;
    const Graph *g = session_view(s);    /* the entered subgraph, if any */
    char *text = json ? graph_to_json(g) : fx_print(g, stack);
    if (!text) return mi_err(s->ctx, "", 0, 0, "cannot print the graph");
    fputs(text, s->out);
    if (*text && text[strlen(text) - 1] != '\n') fputc('\n', s->out);
    free(text);
    return 0;
}

int cmd_lint(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "lint");
    if (!session_require_graph(s)) return -1;
    StrBuf rep; sb_init(&rep);
    int problems = graph_lint(s->ctx, (Graph *)session_view(s), &rep);
    if (problems == 0) {
        fprintf(s->out, "lint: ok\n");
        sb_free(&rep);
        return 0;
    }
    if (rep.s) fputs(rep.s, s->out);
    sb_free(&rep);
    mi_clear_err(s->ctx);
    return mi_err(s->ctx, "", 0, 0, "lint: %d problem%s", problems, problems == 1 ? "" : "s");
}

static void print_inputs(Session *s) {
    if (!s->inputs) { fprintf(s->out, "no inputs set (random ones are made when needed)\n"); return; }
    fprintf(s->out, "inputs (%s):\n", s->inputs_args ? s->inputs_args : "?");
    for (int i = 0; i < s->ninputs; i++) {
        const Node *ph = s->graph ? graph_placeholder(s->graph, i) : NULL;
        char buf[256];
        if (s->inputs[i].kind == IV_TENSOR) tensor_summary(s->inputs[i].t, buf, sizeof buf);
        else if (s->inputs[i].kind == IV_INT) snprintf(buf, sizeof buf, "%lld", (long long)s->inputs[i].i);
        else snprintf(buf, sizeof buf, "(none)");
        fprintf(s->out, "  %d %s: %s\n", i, ph ? ph->name : "?", buf);
    }
    for (int i = 0; i < s->ctx->nconsts; i++) {   /* the graph's tensor constants (self._tensor_constant0) */
        char buf[256];
        tensor_summary(s->ctx->consts[i].t, buf, sizeof buf);
        fprintf(s->out, "  constant %s: %s\n", s->ctx->consts[i].name, buf);
    }
}

int cmd_inputs(Session *s, int argc, char **argv) {
    if (argc == 1) { print_inputs(s); return 0; }
    if (!s->graph) return mi_err(s->ctx, "", 0, 0, "no graph loaded (try 'load FILE')");
    char *args = join_args(argc, argv);
    IValue *in = NULL; int n = 0;
    if (!strcmp(argv[1], "random")) {
        if (argc > 3) { free(args); return usage_error(s, "inputs"); }
        if (argc == 3) {
            long seed;
            if (parse_count(s, argv[2], "seed", &seed) < 0) { free(args); return -1; }
            s->ctx->seed = (uint64_t)seed;
        }
        int had = s->ctx->nconsts;
        if (session_random_inputs(s, &in, &n) < 0) { free(args); return -1; }
        for (int i = had; i < s->ctx->nconsts; i++)
            fprintf(s->err, "note: tensor constant '%s' has no recorded value: random too ('inputs DIR' reads DIR/%s.npy)\n",
                    s->ctx->consts[i].name, s->ctx->consts[i].name);
        free(args);
        char a[64];
        snprintf(a, sizeof a, "random %llu", (unsigned long long)s->ctx->seed);
        args = mi_xstrdup(a);
    } else {
        struct stat st;
        int rc;
        StrBuf notes;
        sb_init(&notes);
        if (argc == 2 && stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode))
            rc = inputs_from_dir_noted(s->ctx, s->graph, argv[1], &in, &n, &notes);  /* DIR/in<K>.npy */
        else
            rc = inputs_from_npy_noted(s->ctx, s->graph, argv + 1, argc - 1, &in, &n, &notes);
        if (notes.s) fputs(notes.s, s->err);     /* bf16 inputs recorded as float32 */
        sb_free(&notes);
        if (rc < 0) { free(args); return -1; }
    }
    session_set_inputs(s, in, n, args);
    free(args);
    print_inputs(s);
    return 0;
}

/* Run g on a copy of the session inputs; *after gets the inputs as the run left them. */
static int run_ref(Session *s, const Graph *g, IValue **outs, int *nouts, IValue **after) {
    IValue *in = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
    if (!in) return -1;
    int rc = interp_run(s->ctx, g, in, s->ninputs, outs, nouts);
    if (rc == 0) *after = in;
    else session_free_inputs(in, s->ninputs);
    return rc;
}

/* Did the run change input i? (only those get an "input i after" line) */

/* The arrays PyTorch recorded beside the inputs (DIR/out<k>.npy, DIR/in<k>_after.npy) against
 * the current graph's results. Returns -1 on an unreadable file. */
static int check_recorded(Session *s, NumCheck *c, const IValue *co, int nc, const IValue *ca, const bool *rnd,
                          const bool *rnd_in) {
    struct stat st;
    const char *dir = s->inputs_args;
    if (!dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    c->random_why = "not comparable with PyTorch's RNG";
    c->fp64_of_result = true;     /* our interpreter made both the result and the float64 run */
    for (int pass = 0; pass < 2; pass++) {
        int n = pass == 0 ? nc : s->ninputs;
        for (int i = 0; i < n; i++) {
            const IValue *got = pass == 0 ? &co[i] : &ca[i];
            char p[1200], label[1400];
            snprintf(p, sizeof p, pass == 0 ? "%s/out%d.npy" : "%s/in%d_after.npy", dir, i);
            if (stat(p, &st) != 0 || got->kind != IV_TENSOR) continue;
            Tensor *file = npy_load(s->ctx, p);
            if (!file) return -1;
            Tensor *want = num_recorded_as(s->ctx, file, got->t->dtype);
            bool as = want && want != file;
            tensor_unref(file);
            if (!want) return -1;
            snprintf(label, sizeof label, "%s %d%s vs PyTorch (%s%s%s)", pass == 0 ? "output" : "input", i,
                     pass == 0 ? "" : " after", p, as ? ", recorded as f32: .npy has no " : "",
                     as ? dtype_abbrev(got->t->dtype) : "");
            IValue w = {.kind = IV_TENSOR, .t = want};
            num_check_value(c, label, &w, got, pass == 0 ? NUM_OUT : NUM_IN_AFTER, i,
                            pass == 0 ? rnd[i] : rnd_in[i]);
            tensor_unref(want);
        }
    }
    return 0;
}

/* The loaded graph raised (its error in ctx): the check holds when the current graph raises the
 * same PyTorch exception (session_same_raise: integer inputs of 0 make remainder raise
 * ZeroDivisionError in both); -1 + ctx error when it runs, or fails otherwise. */
static int check_raises(Session *s, const Graph *cur) {
    char first[2048];
    mi_err_str(s->ctx, first, sizeof first);
    mi_clear_err(s->ctx);
    fprintf(s->err, "running it on the current graph...\n");
    IValue *co = NULL, *ca = NULL;
    int nc = 0;
    if (run_ref(s, cur, &co, &nc, &ca) == 0) {
        interp_free_outputs(co, nc);
        session_free_inputs(ca, s->ninputs);
        return mi_errf(s->ctx, "check: the loaded graph raises and the current one does not: %s", first);
    }
    if (session_same_raise(s, "check", first, "loaded graph", "current graph")) return 0;
    mi_clear_err(s->ctx);
    return mi_errf(s->ctx, "%s", first);
}

int cmd_check(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "check");
    if (!session_require_graph(s)) return -1;
    if (session_ensure_inputs(s) < 0) return -1;
    const Graph *ref = s->graph, *cur = session_graph(s);
    IValue *ro = NULL, *co = NULL, *ra = NULL, *ca = NULL; int nr = 0, nc = 0, rc = -1;
    fprintf(s->err, "running the reference interpreter on the loaded graph...\n");
    if (run_ref(s, ref, &ro, &nr, &ra) < 0) return mi_interrupted(s->ctx) ? -1 : check_raises(s, cur);
    fprintf(s->err, "running it on the current graph...\n");
    if (run_ref(s, cur, &co, &nc, &ca) < 0) { interp_free_outputs(ro, nr); session_free_inputs(ra, s->ninputs); return -1; }
    if (nr != nc) {
        mi_err(s->ctx, "", 0, 0, "check: the current graph returns %d values, the loaded one %d", nc, nr);
        goto done;
    }
    /* values that depend on random ops in either graph are compared statistically */
    bool *rnd = mi_xcalloc((size_t)nr + 1, sizeof *rnd), *rnd2 = mi_xcalloc((size_t)nr + 1, sizeof *rnd2);
    bool *rin = mi_xcalloc((size_t)s->ninputs + 1, sizeof *rin), *rin2 = mi_xcalloc((size_t)s->ninputs + 1, sizeof *rin2);
    num_random_outputs(ref, rnd, nr, rin, s->ninputs);
    num_random_outputs(cur, rnd2, nr, rin2, s->ninputs);
    for (int i = 0; i < nr; i++) rnd[i] |= rnd2[i];
    for (int i = 0; i < s->ninputs; i++) rin[i] |= rin2[i];
    StrBuf rep;
    sb_init(&rep);
    NumCheck c = {.ctx = s->ctx, .rtol = s->rtol, .atol = s->atol, .report = &rep,
                  .fp64 = numref_new(s->ctx, ref, s->inputs, s->ninputs),
                  .random_why = "not comparable: the two graphs' random ops draw differently"};
    num_check_outputs(&c, ro, co, nr, rnd);
    int nmut = 0;
    for (int i = 0; i < s->ninputs; i++) {
        if (!session_input_changed(s, ra, i) && !session_input_changed(s, ca, i)) continue;
        char label[64];
        snprintf(label, sizeof label, "input %d after", i);
        num_check_value(&c, label, &ra[i], &ca[i], NUM_IN_AFTER, i, rin[i]);
        nmut++;
    }
    int frc = check_recorded(s, &c, co, nc, ca, rnd, rin);
    if (rep.s) fputs(rep.s, s->out);
    sb_free(&rep);
    numref_free(c.fp64);
    free(rnd); free(rnd2); free(rin); free(rin2);
    if (frc < 0) goto done;
    if (c.bad) { mi_err(s->ctx, "", 0, 0, "check: %d of %d comparisons differ", c.bad, c.compared); goto done; }
    if (nmut) fprintf(s->out, "check: ok (%d output%s and %d mutated input%s, max abs err %.3g)\n", nr, nr == 1 ? "" : "s",
                      nmut, nmut == 1 ? "" : "s", c.worst_abs);
    else fprintf(s->out, "check: ok (%d output%s, max abs err %.3g)\n", nr, nr == 1 ? "" : "s", c.worst_abs);
    rc = 0;
done:
    interp_free_outputs(ro, nr);
    interp_free_outputs(co, nc);
    session_free_inputs(ra, s->ninputs);
    session_free_inputs(ca, s->ninputs);
    return rc;
}
