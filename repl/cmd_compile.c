/* cmd_compile.c — shell commands for the back half of the pipeline: lower (FX -> loop IR),
 * ir (ir_pre_fusion style dump), sched (fusion groups and decisions), codegen (C source) and
 * exec (compile with cc, run, compare with the reference interpreter, time). The session keeps
 * the results in a CompileState that is dropped whenever the graph changes. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "ops/numerics.h"
#include "viz/viz.h"
#include "runtime/runtime.h"
#include "codegen/codegen_cuda.h"
#include "base/tensor.h"
#include "trace/trace.h"
#include "compile_fx/compile_fx.h"

/* The pipeline driver's state for the current graph: IR, schedule, code, loaded module. */
struct CompileState {
    CompiledFx fx;
};

void compile_state_free(CompileState *cs) {
    if (!cs) return;
    compile_fx_free(&cs->fx);
    free(cs);
}


static const char *buf_kind_name(const Buffer *b) {
    switch (b->kind) {
    case BUF_INPUT: return "InputBuffer";
    case BUF_EXTERN: return b->ext == EXT_MULTI_OUTPUT ? "MultiOutput" : b->ext == EXT_CONCAT ? "ConcatKernel" : b->layout.multi ? "FallbackKernel" : "ExternKernel";
    case BUF_COMPUTED: return b->scan ? (b->scan->op == SCAN_SORT ? "Sort" : "Scan") : b->is_reduction ? "Reduction" : "Pointwise";
    }
    return "?";
}

static VizClass buf_class(const Buffer *b) {
    switch (b->kind) {
    case BUF_INPUT: return VIZ_PLACEHOLDER;
    case BUF_EXTERN: return VIZ_EXTERN;
    case BUF_COMPUTED: return b->is_reduction ? VIZ_REDUCTION : VIZ_POINTWISE;
    }
    return VIZ_OTHER;
}

static void layout_text(const Buffer *b, StrBuf *sb) {
    if (b->layout.multi) { sb_put(sb, "MultiOutputLayout"); return; }   /* its items hold the results */
    sb_printf(sb, "%s[", dtype_abbrev(b->layout.dtype));
    for (int d = 0; d < b->layout.ndim; d++) {
        if (d) sb_put(sb, ", ");
        sym_str_sb(b->layout.size[d], sb);
    }
    sb_putc(sb, ']');
}

/* Run `lower` or `sched` on behalf of another command (codegen, exec, show): its table goes
 * to stderr with the other notes, so that `codegen > k.c` (or `minductor -c codegen > k.c`)
 * gets the C source alone. */
static int run_implicit(Session *s, CmdFn fn, const char *name) {
    FILE *out = s->out;
    fflush(out);
    s->out = s->err;
    int rc = fn(s, 1, (char *[]){(char *)name, NULL});
    fflush(s->err);
    s->out = out;
    return rc;
}

/* The IR of the current graph, lowering it first when needed (as sched/codegen/exec do). */
static bool require_ir(Session *s) {
    if (s->cs && s->cs->fx.ir) return true;
    if (!session_require_graph(s)) return false;
    fprintf(s->err, "lowering first\n");
    return run_implicit(s, cmd_lower, "lower") == 0;
}

/* cond branches: their functions ("true_graph_0") and kernels, recursively */
static void add_branch_names(const Schedule *s, char ***names, int *n, int *cap) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            const Schedule *b = s->branches[i].s[k];
            if (*n + b->nkernels + 2 >= *cap) {
                *cap = 2 * *cap + b->nkernels + 2;
                *names = mi_xrealloc(*names, sizeof **names * (size_t)*cap);
            }
            (*names)[(*n)++] = mi_xstrdup(s->branches[i].fn[k]);
            for (int j = 0; j < b->nkernels; j++) (*names)[(*n)++] = mi_xstrdup(b->kernels[j].name);
            add_branch_names(b, names, n, cap);
        }
}

char **compile_state_names(CompileState *cs) {
    if (!cs || !cs->fx.ir) return NULL;
    const IrModule *ir = cs->fx.ir;
    const Schedule *sc = cs->fx.sched;
    int n = 0, extra = sc ? sc->nkernels : 0;
    int cap = ir->nbufs + extra + 1;
    char **names = mi_xcalloc(cap, sizeof *names);
    for (int i = 0; i < ir->nbufs; i++) names[n++] = mi_xstrdup(ir->bufs[i]->name);
    for (int k = 0; k < extra; k++) names[n++] = mi_xstrdup(sc->kernels[k].name);
    if (sc) add_branch_names(sc, &names, &n, &cap);
    names[n] = NULL;
    return names;
}

char **session_kernel_names(Session *s) {
    if (!session_graph(s)) return NULL;
    if (!s->cs || !s->cs->fx.sched) {      /* schedule silently: completion must not print */
        FILE *out = s->out, *err = s->err, *sink = fopen("/dev/null", "w");
        if (!sink) return NULL;
        MiError saved = s->ctx->err;
        s->out = s->err = sink;
        const Schedule *sc = session_schedule(s);
        s->out = out; s->err = err;
        fclose(sink);
        s->ctx->err = saved;
        if (!sc) return NULL;
    }
    const Schedule *sc = s->cs->fx.sched;
    int n = 0, cap = sc->nkernels + 1;
    char **names = mi_xcalloc(cap, sizeof *names);
    for (int k = 0; k < sc->nkernels; k++) names[n++] = mi_xstrdup(sc->kernels[k].name);
    add_branch_names(sc, &names, &n, &cap);
    names[n] = NULL;
    return names;
}

int cmd_lower(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "lower");
    if (!session_require_graph(s)) return -1;
    fprintf(s->err, "lowering %d nodes...\n", session_graph(s)->n);
    CompileState *cs = mi_xcalloc(1, sizeof *cs);
    compile_fx_init(&cs->fx, session_graph(s));
    if (compile_fx(s->ctx, &cs->fx, CFX_LOWERED) < 0) {
        strace_fail(s, NULL, s->ctx->err.msg);
        compile_state_free(cs);
        return -1;
    }
    session_drop_compile(s);
    s->cs = cs;
    const IrModule *m = cs->fx.ir;
    int nin = 0, ncomp = 0, next = 0, ndead = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->kind == BUF_INPUT) { nin++; continue; }
        if (b->kind == BUF_EXTERN) next++; else ncomp++;
        ndead += b->dead;
        StrBuf sb; sb_init(&sb);
        layout_text(b, &sb);
        fprintf(s->out, "  %-8s %-14s %-20s", b->name, buf_kind_name(b), sb.s ? sb.s : "");
        sb_free(&sb);
        if (b->norigins) {
            fprintf(s->out, " origins:");
            for (int k = 0; k < b->norigins; k++) fprintf(s->out, " %s", b->origins[k]);
        }
        if (b->extern_owner) fprintf(s->out, " written by %s's kernel", b->extern_owner->name);
        if (b->mo_of && b->mo_of->fb && !b->mo_of->fb->tuple) fprintf(s->out, " = %s", b->mo_of->name);   /* one result */
        else if (b->mo_of) fprintf(s->out, " = %s[%d]", b->mo_of->name, b->mo_index);
        if (b->alias_of) fprintf(s->out, " slice of %s", b->alias_of->name);
        if (b->output_index >= 0) fprintf(s->out, "  -> output %d", b->output_index);
        if (b->dead) fprintf(s->out, "  (dead: nothing reads it)");
        fputc('\n', s->out);
    }
    uint64_t ns = cs->fx.ns[CFX_LOWERED];
    char dead[64] = "";   /* realized readers of a mutated input that nothing reads (ir_mark_dead) */
    if (ndead) snprintf(dead, sizeof dead, ", %d of them dead", ndead);
    fprintf(s->out, "lowered to %d buffers (%d inputs, %d computed, %d extern%s) in %.3f ms\n",
            m->nbufs, nin, ncomp, next, dead, ns / 1e6);
    if (s->ctx->trace) {     /* the graph lowered is the post-grad graph */
        strace_span(s, "GraphLowering.run", ns);
        char *text = fx_print(session_graph(s), true);
        strace_artifact(s, "inductor_post_grad_graph", text);
        free(text);
        text = ir_print(m);
        strace_artifact(s, "ir_pre_fusion", text);
        free(text);
    }
    return 0;
}

int cmd_ir(Session *s, int argc, char **argv) {
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "post") && strcmp(argv[1], "pre"))) return usage_error(s, "ir");
    if (!require_ir(s)) return -1;
    if (argc == 2 && !strcmp(argv[1], "post")) {
        if (!s->cs->fx.sched && run_implicit(s, cmd_sched, "sched") < 0) return -1;
        char *post = sched_print(s->cs->fx.sched);
        if (!post) return mi_err(s->ctx, "", 0, 0, "cannot print the schedule");
        fputs(post, s->out);
        if (*post && post[strlen(post) - 1] != '\n') fputc('\n', s->out);
        free(post);
        return 0;
    }
    char *text = ir_print(s->cs->fx.ir);
    if (!text) return mi_err(s->ctx, "", 0, 0, "cannot print the IR");
    fputs(text, s->out);
    if (*text && text[strlen(text) - 1] != '\n') fputc('\n', s->out);
    free(text);
    return 0;
}

/* Growing arrays of a VizBufGraph under construction. */
typedef struct BgBuild { VizBufGraph *g; int ncap, ecap, gcap; } BgBuild;

/* An edge; a tooltip marks a refused fusion (viz/viz.h VizEdge). */
static void bg_edge_tip(BgBuild *b, const char *from, const char *to, const char *label, const char *tooltip) {
    VizBufGraph *g = b->g;
    if (g->nedges == b->ecap) { b->ecap = b->ecap ? 2 * b->ecap : 16; g->edges = mi_xrealloc(g->edges, b->ecap * sizeof *g->edges); }
    g->edges[g->nedges].from = mi_xstrdup(from);
    g->edges[g->nedges].to = mi_xstrdup(to);
    g->edges[g->nedges].label = label ? mi_xstrdup(label) : NULL;
    g->edges[g->nedges].tooltip = tooltip ? mi_xstrdup(tooltip) : NULL;
    g->nedges++;
}
static void bg_edge(BgBuild *b, const char *from, const char *to, const char *label) { bg_edge_tip(b, from, to, label, NULL); }

static VizGroup *bg_group(BgBuild *b, const char *kernel, const char *label, int parent, bool subgraph, int nmembers) {
    VizBufGraph *g = b->g;
    if (g->ngroups == b->gcap) { b->gcap = b->gcap ? 2 * b->gcap : 8; g->groups = mi_xrealloc(g->groups, b->gcap * sizeof *g->groups); }
    VizGroup *vg = &g->groups[g->ngroups++];
    memset(vg, 0, sizeof *vg);
    vg->kernel = mi_xstrdup(kernel);
    vg->label = mi_xstrdup(label);
    vg->parent = parent;
    vg->subgraph = subgraph;
    vg->members = mi_xcalloc(nmembers + 1, sizeof *vg->members);
    return vg;
}

/* Node id of a buffer: its name; a branch's inputs get the branch prefix ("true_graph_0_arg0_1")
 * so that they do not collide with the caller's buffers of the same placeholder name. */
static void buf_id(const IrModule *m, const Buffer *b, char *out, size_t n) {
    if (b->kind == BUF_INPUT && ir_prefix(m)[0]) snprintf(out, n, "%s%s", ir_prefix(m), b->name);
    else snprintf(out, n, "%s", b->name);
}

/* Kernel k of sc as the pictures name it: its `sched` name, prefixed for a cond branch; extern
 * calls share a name ("extern_mm"), so theirs gets its first buffer ("extern_mm_buf2"). */
static void kernel_display_name(const IrModule *m, const Schedule *sc, int k, char *out, size_t n) {
    const SchedKernel *kr = &sc->kernels[k];
    const Buffer *first = kr->n ? sc->nodes[sc->groups[sc->order[kr->first]].nodes[0]].buf : NULL;
    bool dup = false;
    for (int j = 0; j < sc->nkernels; j++) if (j != k && !strcmp(sc->kernels[j].name, kr->name)) dup = true;
    snprintf(out, n, "%s%s%s%s", strncmp(kr->name, ir_prefix(m), strlen(ir_prefix(m))) ? ir_prefix(m) : "", kr->name,
             dup && first ? "_" : "", dup && first ? first->name : "");
}

char **session_node_kernels(Session *s, const Graph *g) {
    if (!s->cs || !s->cs->fx.sched || s->scope || g != session_graph(s) || g != s->cs->fx.graph) return NULL;
    const Schedule *sc = s->cs->fx.sched;
    const IrModule *m = s->cs->fx.ir;
    char **names = mi_xcalloc((size_t)g->n + 1, sizeof *names);
    for (int k = 0; k < sc->nkernels; k++) {
        char kn[300];
        kernel_display_name(m, sc, k, kn, sizeof kn);
        const SchedKernel *kr = &sc->kernels[k];
        for (int gi = kr->first; gi < kr->first + kr->n; gi++) {
            const SchedGroup *grp = &sc->groups[sc->order[gi]];
            for (int j = 0; j < grp->n; j++) {
                const Node **origin = NULL;
                int no = ir_origin_nodes(m, sc->nodes[grp->nodes[j]].buf, &origin);
                for (int o = 0; o < no; o++)
                    for (int i = 0; i < g->n; i++)
                        if (!names[i] && !strcmp(g->nodes[i]->name, origin[o]->name)) { names[i] = mi_xstrdup(kn); break; }
                free(origin);
            }
        }
    }
    return names;
}

/* The buffers of m (and its kernels when sc is given) in the group `parent` (1-based; 0 = top),
 * then each cond branch as a subgraph group holding its own buffers and kernels, recursively. */
static void bg_add_module(BgBuild *bb, const IrModule *m, const struct Schedule *sc, int parent, int depth) {
    VizBufGraph *out = bb->g;
    if (sc) {
        /* one cluster per kernel, named as `sched` lists it (all of a cpp kernel's groups in it);
         * extern calls share a name ("extern_mm"): theirs gets the buffer ("extern_mm_buf2") */
        for (int k = 0; k < sc->nkernels; k++) {
            const SchedKernel *kr = &sc->kernels[k];
            int nbuf = 0;
            for (int g = kr->first; g < kr->first + kr->n; g++) nbuf += sc->groups[sc->order[g]].n;
            char name[300], lab[64];
            kernel_display_name(m, sc, k, name, sizeof name);
            snprintf(lab, sizeof lab, "%d node%s%s", nbuf, nbuf == 1 ? "" : "s", kr->is_extern ? ", extern" : "");
            VizGroup *vgp = bg_group(bb, name, lab, parent, false, 2 * nbuf);
            for (int g = kr->first; g < kr->first + kr->n; g++) {
                const SchedGroup *grp = &sc->groups[sc->order[g]];
                for (int j = 0; j < grp->n; j++) {
                    const Buffer *mb = sc->nodes[grp->nodes[j]].buf;
                    vgp->members[vgp->nmembers++] = mi_xstrdup(mb->name);
                }
            }
        }
    }
    VizGroup *home = parent ? &out->groups[parent - 1] : NULL;   /* inputs of a branch sit in it */
    int home_i = parent - 1;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        char id[300];
        buf_id(m, b, id, sizeof id);
        StrBuf sb; sb_init(&sb);
        sb_printf(&sb, "%s ", buf_kind_name(b));
        layout_text(b, &sb);
        if (b->output_index >= 0) sb_printf(&sb, " (output %d)", b->output_index);
        if (out->n == bb->ncap) { bb->ncap = bb->ncap ? 2 * bb->ncap : 16; out->nodes = mi_xrealloc(out->nodes, bb->ncap * sizeof *out->nodes); }
        out->nodes[out->n].name = mi_xstrdup(id);
        out->nodes[out->n].label = sb_take(&sb);
        out->nodes[out->n].cls = buf_class(b);
        out->n++;
        if (home) {      /* every buffer of a branch belongs to its subgraph cluster */
            home = &out->groups[home_i];
            home->members = mi_xrealloc(home->members, (home->nmembers + 2) * sizeof *home->members);
            home->members[home->nmembers++] = mi_xstrdup(id);
        }
        if (b->kind == BUF_INPUT) continue;
        if (b->extern_owner) bg_edge(bb, b->extern_owner->name, b->name, NULL);   /* written by another buffer's kernel */
        DepSet ds = {0};
        ir_deps_collect(m, b, &ds);
        for (int r = 0; r < ds.nreads; r++) {
            if (!ds.reads[r].buf || ds.reads[r].buf == b) continue;
            char from[300];
            buf_id(m, ds.reads[r].buf, from, sizeof from);
            /* an edge between two kernels carries the scheduler's refusal, when it made one:
             * its head on the edge, "refused: A + B: <Inductor's words>" on hover */
            const FusionDecision *why = sc ? sched_refusal(sc, ds.reads[r].buf, b) : NULL;
            if (why) {
                char shrt[64], tip[600];
                sched_reason_short(why->reason, shrt, sizeof shrt);
                snprintf(tip, sizeof tip, "refused: %s + %s (score %lld bytes): %s", why->a, why->b, (long long)why->score, why->reason);
                bg_edge_tip(bb, from, b->name, shrt, tip);
            } else bg_edge(bb, from, b->name, NULL);
        }
        dep_set_free(&ds);
    }
    if (depth > 16) return;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (!b->cond) continue;
        const SchedBranch *br = sc ? sched_branch_of(sc, b) : NULL;
        for (int k = 0; k < 2; k++) {
            const IrModule *bm = b->cond->branch[k];
            if (!bm) continue;
            char gname[300], lab[400];
            snprintf(gname, sizeof gname, "sub_%s%s", ir_prefix(m), b->cond->names[k]);
            snprintf(lab, sizeof lab, "class %s (%s of %s)", b->cond->names[k], ir_cond_role(b->cond, k), b->name);
            bg_group(bb, gname, lab, parent, true, 0);
            int gi = out->ngroups;            /* 1-based index of the subgraph group */
            bg_add_module(bb, bm, br ? br->s[k] : NULL, gi, depth + 1);
            /* operands flow into the branch's inputs; its outputs are the cond's results */
            for (int j = 0; j < bm->nbufs; j++) {
                const Buffer *in = bm->bufs[j];
                char id[300];
                buf_id(bm, in, id, sizeof id);
                int base = b->cond->is_while ? 0 : 1;   /* a while_loop has no predicate argument */
                if (in->kind == BUF_INPUT && in->input_index >= 0 && base + in->input_index < b->neargs && b->eargs[base + in->input_index].buf) {
                    char from[300];
                    buf_id(m, b->eargs[base + in->input_index].buf, from, sizeof from);
                    bg_edge(bb, from, id, "operand");
                }
                if (b->cond->is_while && k == 0) continue;   /* cond_fn's result is the loop's test */
                if (in->output_index >= 0 && in->output_index < b->cond->nouts && b->cond->outs[in->output_index])
                    bg_edge(bb, id, b->cond->outs[in->output_index]->name, b->cond->is_while ? "carried" : k ? "false" : "true");
            }
        }
    }
}

int compile_state_bufgraph(Session *s, VizBufGraph *out, bool with_groups) {
    memset(out, 0, sizeof *out);
    if (!require_ir(s)) return -1;
    if (with_groups && !s->cs->fx.sched) {     /* schedule on demand, as codegen/exec do */
        fprintf(s->err, "scheduling first\n");
        if (run_implicit(s, cmd_sched, "sched") < 0) return -1;
    }
    const Schedule *sc = with_groups ? s->cs->fx.sched : NULL;
    if (with_groups && !sc) return mi_err(s->ctx, "", 0, 0, "no fusion groups yet (try 'sched')");
    BgBuild bb = { out, 0, 0, 0 };
    bg_add_module(&bb, s->cs->fx.ir, sc, 0, 0);
    return 0;
}

bool compile_state_scheduled(const CompileState *cs) { return cs && cs->fx.sched; }

void compile_bufgraph_free(VizBufGraph *bg) {
    for (int i = 0; i < bg->n; i++) { free((char *)bg->nodes[i].name); free((char *)bg->nodes[i].label); }
    for (int i = 0; i < bg->nedges; i++) {
        free((char *)bg->edges[i].from); free((char *)bg->edges[i].to); free((char *)bg->edges[i].label);
        free((char *)bg->edges[i].tooltip);
    }
    for (int i = 0; i < bg->ngroups; i++) {
        free((char *)bg->groups[i].kernel); free((char *)bg->groups[i].label);
        for (int k = 0; k < bg->groups[i].nmembers; k++) free((char *)bg->groups[i].members[k]);
        free(bg->groups[i].members);
    }
    free(bg->nodes); free(bg->edges); free(bg->groups);
    memset(bg, 0, sizeof *bg);
}


/* The timing line of exec: median with the spread of the usual runs (p10..p90), min, warm-up
 * and threads, the interpreter for scale; a warning when the spread is too wide to trust:
 *   time: median 0.0123 ms (p10-p90 0.0120-0.0131 ms, spread 9%), min 0.0119 ms; 10 runs after
 *   40 warm-up, 2 threads; interpreter 1.234 ms (100.3x) */
static void print_timing(Session *s, const RtTiming *t, double interp_s) {
    fprintf(s->out, "time: median %.4f ms (p10-p90 %.4f-%.4f ms, spread %.0f%%), min %.4f ms; %d runs after %d warm-up, "
            "%d thread%s; interpreter %.3f ms (%.1fx)\n", t->median * 1e3, t->p10 * 1e3, t->p90 * 1e3, t->spread * 100,
            t->min * 1e3, t->reps, t->warmup, t->threads, t->threads == 1 ? "" : "s", interp_s * 1e3,
            t->median > 0 ? interp_s / t->median : 0.0);
    if (t->reps >= 5 && t->spread > RT_SPREAD_WIDE)   /* say so, instead of leaving a puzzle */
        fprintf(s->err, "warning: the spread of the runs is %.0f%% of the median (over %.0f%%): this timing is not to be "
                "trusted; the machine is busy or threads wait for each other (try more REPS, or 'set threads 1')\n",
                t->spread * 100, RT_SPREAD_WIDE * 100);
    else if (t->reps < 5)
        fprintf(s->err, "note: %d run%s: too few for a spread; 'exec 10' or more for a timing to trust\n", t->reps,
                t->reps == 1 ? "" : "s");
}

/* The interpreter raised (its error in ctx): exec holds when the compiled module raises the same
 * PyTorch exception (session_same_raise: ZeroDivisionError from an integer remainder by 0);
 * -1 + ctx error when the module runs, or fails otherwise. */
static int exec_raises(Session *s, RtModule *mod, const Graph *g, IValue *in_rt) {
    char first[2048];
    mi_err_str(s->ctx, first, sizeof first);
    mi_clear_err(s->ctx);
    IValue *co = NULL;
    int nc = 0;
    if (rt_run(s->ctx, mod, g, in_rt, s->ninputs, &co, &nc, NULL) == 0) {
        interp_free_outputs(co, nc);
        return mi_errf(s->ctx, "exec: the interpreter raises and the compiled module does not: %s", first);
    }
    if (session_same_raise(s, "exec", first, "interpreter", "compiled module")) return 0;
    char second[2048];
    mi_err_str(s->ctx, second, sizeof second);
    mi_clear_err(s->ctx);
    return mi_errf(s->ctx, "exec: the interpreter raises (%s) and the compiled module fails otherwise: %s", first, second);
}

/* Compile the generated source (once; the loaded module stays in the CompileState), run it on
 * the session inputs, compare every output with the reference interpreter on the current
 * graph, and time it. Prints "max abs err" per output. */
static int exec_module(Session *s, long reps) {
    const Graph *g = session_graph(s);    /* inputs are made before the code (see cmd_exec) */
    CompiledFx *fx = &s->cs->fx;
    if (!fx->mod) {
        fprintf(s->err, "compiling %zu bytes of %s...\n", strlen(fx->code), fx->cuda ? "CUDA with nvcc" : "C");
        if (compile_fx(s->ctx, fx, CFX_BUILT) < 0) return -1;
        fprintf(s->out, "compiled %s: %s (%.3f s cc, %.3f ms load)\n", fx->mod->key,
                fx->mod->cache_hit ? "cache hit" : "built", fx->mod->compile_s, fx->mod->load_s * 1e3);
    } else
        fprintf(s->out, "compiled %s: loaded already\n", fx->mod->key);
    RtModule *mod = fx->mod;
    IValue *in_ref = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
    IValue *in_rt = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
    IValue *ro = NULL, *co = NULL; int nr = 0, nc = 0;
    double run_s = 0;
    int rc = -1;
    if (!in_ref || !in_rt) goto done;
    if (interp_run(s->ctx, g, in_ref, s->ninputs, &ro, &nr) < 0) {
        if (!mi_interrupted(s->ctx)) rc = exec_raises(s, mod, g, in_rt);
        goto done;
    }
    if (rt_run(s->ctx, mod, g, in_rt, s->ninputs, &co, &nc, &run_s) < 0) goto done;
    if (nr != nc) { mi_err(s->ctx, "", 0, 0, "exec: the kernel returned %d outputs, the interpreter %d", nc, nr); goto done; }
    /* the compiled values against the interpreter's, by torch._dynamo.utils.same's rule (a float64
     * run of the interpreter decides what is rounding); random values statistically */
    bool *rnd = mi_xcalloc((size_t)nr + 1, sizeof *rnd), *rin = mi_xcalloc((size_t)s->ninputs + 1, sizeof *rin);
    num_random_outputs(g, rnd, nr, rin, s->ninputs);
    StrBuf rep;
    sb_init(&rep);
    NumCheck c = {.ctx = s->ctx, .rtol = s->rtol, .atol = s->atol, .report = &rep,
                  .fp64 = numref_new(s->ctx, g, s->inputs, s->ninputs),
                  .random_why = "not comparable: the kernel's random draws are not the interpreter's"};
    num_check_outputs(&c, ro, co, nr, rnd);
    /* in-place updates of inputs must match too (only mismatches are listed) */
    int nmut = 0;
    for (int i = 0; i < s->ninputs; i++) {
        if (in_ref[i].kind != IV_TENSOR) continue;
        if (session_input_changed(s, in_ref, i)) nmut++;
        StrBuf one;
        sb_init(&one);
        c.report = &one;
        char label[64];
        snprintf(label, sizeof label, "input %d after the run", i);
        if (!num_check_value(&c, label, &in_ref[i], &in_rt[i], NUM_IN_AFTER, i, rin[i]) && one.s) sb_put(&rep, one.s);
        sb_free(&one);
    }
    if (rep.s) fputs(rep.s, s->out);
    sb_free(&rep);
    numref_free(c.fp64);
    free(rnd);
    free(rin);
    int bad = c.bad;
    double worst = c.worst_abs;
    fprintf(s->out, "max abs err %.3g over %d output%s", worst, nr, nr == 1 ? "" : "s");
    if (nmut) fprintf(s->out, " and %d mutated input%s", nmut, nmut == 1 ? "" : "s");
    fputc('\n', s->out);
    if (reps > 0) {
        char why[96] = "set threads";
        int nt = s->ctx->threads > 0 ? s->ctx->threads : rt_default_threads(why, sizeof why);
        fprintf(s->err, "timing %ld runs on %d thread%s (%s)...\n", reps, nt, nt == 1 ? "" : "s", why);
        RtTiming tm;
        if (rt_time_stats(s->ctx, mod, g, in_rt, s->ninputs, 2, (int)reps, &tm) < 0) goto done;
        uint64_t t0 = mi_now_ns();
        IValue *o2 = NULL; int n2 = 0;
        IValue *in2 = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
        if (in2 && interp_run(s->ctx, g, in2, s->ninputs, &o2, &n2) == 0) interp_free_outputs(o2, n2);
        double interp_s = (mi_now_ns() - t0) / 1e9;
        if (in2) session_free_inputs(in2, s->ninputs);
        if (mi_interrupted(s->ctx)) goto done;
        mi_clear_err(s->ctx);
        print_timing(s, &tm, interp_s);
    }
    if (bad) { mi_err(s->ctx, "", 0, 0, "exec: %d comparison%s failed", bad, bad == 1 ? "" : "s"); goto done; }
    fprintf(s->out, "exec: ok\n");
    rc = 0;
done:
    if (ro) interp_free_outputs(ro, nr);
    if (co) interp_free_outputs(co, nc);
    if (in_ref) session_free_inputs(in_ref, s->ninputs);
    if (in_rt) session_free_inputs(in_rt, s->ninputs);
    return rc;
}

static int ensure_lowered(Session *s) { return require_ir(s) ? 0 : -1; }

/* Kernels of a schedule and of its cond branches, recursively. */
static void count_kernels(const Schedule *sc, int *n) {
    *n += sched_num_kernels(sc);
    for (int i = 0; i < sc->nbranches; i++)
        for (int k = 0; k < 2; k++) if (sc->branches[i].s[k]) count_kernels(sc->branches[i].s[k], n);
}

/* The kernels (name, buffers) and the fusion decisions of a schedule; then each cond branch's
 * own schedule under a "subgraph" header, indented one more level. */
static void print_schedule(Session *s, const Schedule *sc, int depth) {
    int ind = 2 + 4 * depth;
    for (int k = 0; k < sc->nkernels; k++) {   /* a cpp kernel's fused groups split by " |" */
        const SchedKernel *kn = &sc->kernels[k];
        fprintf(s->out, "%*s%-32s", ind, "", kn->name);
        for (int p = 0; p < kn->n; p++) {
            const SchedGroup *grp = &sc->groups[sc->order[kn->first + p]];
            if (p) fprintf(s->out, " |");
            for (int j = 0; j < grp->n; j++) {
                const SchedNode *sn = &sc->nodes[grp->nodes[j]];
                fprintf(s->out, " %s(%s)", sn->buf->name, sn->name);
            }
        }
        const Buffer *eb = kn->is_extern ? sc->nodes[sc->groups[sc->order[kn->first]].nodes[0]].buf : NULL;
        if (eb && s->ctx->target == MI_DEV_CUDA && codegen_cuda_on_host(eb)) {   /* what the GPU backend pays for it */
            StrBuf note;
            sb_init(&note);
            codegen_cuda_host_note(sc->ir, eb, &note);
            fprintf(s->out, "  [extern, %s]", note.s);
            sb_free(&note);
        } else if (eb && eb->ext == EXT_MULTI_OUTPUT) fprintf(s->out, "  [MultiOutput, no code: %s's call wrote it]", eb->mo_of->name);
        else if (eb && eb->ext == EXT_CONCAT) fprintf(s->out, "  [nop: its inputs wrote their slices]");
        else if (kn->is_extern) fprintf(s->out, "  [extern]");
        else if (kn->same_as >= 0 && kn->same_sched)   /* one src_to_kernel for a graph and its subgraphs */
        {
            const char *pre = ir_prefix(kn->same_sched->ir);   /* "true_graph_1_": its functions' prefix */
            size_t n = strlen(pre);
            fprintf(s->out, "  [same source as kernel %d of %.*s: defined once, called again]", kn->same_as,
                    n ? (int)n - (pre[n - 1] == '_') : 15, n ? pre : "the outer graph");
        }
        else if (kn->same_as >= 0)   /* Inductor's src_to_kernel: the source is defined once */
            fprintf(s->out, "  [same source as kernel %d: defined once, called again]", kn->same_as);
        fputc('\n', s->out);
    }
    char *dec = sched_decisions_text(sc);
    if (dec && *dec) {
        fprintf(s->out, "%*sfusion decisions:\n", ind - 2, "");
        for (const char *p = dec; *p;) {
            size_t l = strcspn(p, "\n");
            fprintf(s->out, "%*s%.*s\n", ind - 2, "", (int)l, p);
            p += l + (p[l] == '\n');
        }
    }
    free(dec);
    for (int i = 0; i < sc->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            const Schedule *b = sc->branches[i].s[k];
            if (!b) continue;
            fprintf(s->out, "%*ssubgraph %s (%s of %s, function %s): %d kernel%s\n", ind, "",
                    sc->branches[i].cond->cond->names[k], ir_cond_role(sc->branches[i].cond->cond, k), sc->branches[i].cond->name,
                    sc->branches[i].fn[k], sched_num_kernels(b), sched_num_kernels(b) == 1 ? "" : "s");
            print_schedule(s, b, depth + 1);
        }
}

int cmd_sched(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "sched");
    if (!session_require_graph(s)) return -1;
    if (ensure_lowered(s) < 0) return -1;
    CompiledFx *fx = &s->cs->fx;
    compile_fx_drop(fx, CFX_SCHEDULED);
    if (compile_fx(s->ctx, fx, CFX_SCHEDULED) < 0) { strace_fail(s, NULL, s->ctx->err.msg); return -1; }
    const Schedule *sc = fx->sched;
    if (s->ctx->trace) {
        strace_span(s, "Scheduler.__init__", fx->ns[CFX_SCHEDULED]);
        char *text = sched_print(sc);
        strace_artifact(s, "ir_post_fusion", text);
        free(text);
        strace_schedule(s, sc);
    }
    int total = 0;
    count_kernels(sc, &total);
    if (sc->mem_note[0]) fprintf(s->out, "%s (memory.py reorder_for_peak_memory)\n", sc->mem_note);
    fprintf(s->out, "%d kernel%s (fusion %s), scheduled in %.3f ms:\n", total, total == 1 ? "" : "s",
            s->ctx->fusion ? "on" : "off", fx->ns[CFX_SCHEDULED] / 1e6);
    print_schedule(s, sc, 0);
    return 0;
}
/* Lower, schedule and generate as needed; the source stays in the CompileState. */
static const char *ensure_code(Session *s) {
    if (!session_require_graph(s)) return NULL;
    if (!s->cs || !s->cs->fx.sched) {
        if (run_implicit(s, cmd_sched, "sched") < 0) return NULL;
    }
    CompiledFx *fx = &s->cs->fx;
    if (!fx->code) {          /* C or CUDA by `set device cuda` / --device cuda */
        if (compile_fx(s->ctx, fx, CFX_GENERATED) < 0) { strace_fail(s, NULL, s->ctx->err.msg); return NULL; }
        /* logged before building, so the code of a CUDA run shows in tlparse even without a GPU */
        strace_span(s, "GraphLowering.codegen", fx->ns[CFX_GENERATED]);
        strace_artifact(s, "inductor_output_code", fx->code);
        if (s->ctx->trace) {      /* which FX nodes each kernel computes (tlparse -i) */
            char *pm = session_provenance_json(s, fx->sched);
            if (pm && s->trace_in_compile)
                trace_artifact(s->ctx->trace, "inductor_provenance_tracking_node_mappings", "json", pm);
            free(pm);
        }
        fprintf(s->err, "generated %zu bytes of %s in %.3f ms\n", strlen(fx->code), fx->cuda ? "CUDA" : "C",
                fx->ns[CFX_GENERATED] / 1e6);
    }
    return fx->code;
}

int cmd_codegen(Session *s, int argc, char **argv) {
    if (argc > 2) return usage_error(s, "codegen");
    const char *code = ensure_code(s);
    if (!code) return -1;
    if (argc == 1) {
        fputs(code, s->out);
        if (*code && code[strlen(code) - 1] != '\n') fputc('\n', s->out);
        return 0;
    }
    /* one function: from the line that defines NAME( to the closing brace at column 0 */
    size_t nl = strlen(argv[1]);
    for (const char *p = code; (p = strstr(p, argv[1])); p += nl) {
        if (p[nl] != '(') continue;
        if (p > code && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;   /* 'x' in mi_modidx( */
        const char *line = p;
        while (line > code && line[-1] != '\n') line--;
        if (*line == ' ' || *line == '\t') continue;          /* a call, not the definition */
        const char *semi = strchr(p, ';'), *brace = strchr(p, '{');
        if (semi && brace && semi < brace) continue;          /* a declaration */
        const char *eol = strchr(p, '\n');
        if (brace && eol && brace < eol && eol[-1] == '}') {   /* a one-line helper: "... { return ...; }" */
            fprintf(s->out, "%.*s\n", (int)(eol - line), line);
            return 0;
        }
        const char *end = strstr(p, "\n}\n");
        if (!end) continue;
        fprintf(s->out, "%.*s\n", (int)(end + 2 - line), line);
        return 0;
    }
    return mi_err(s->ctx, "", 0, 0, "no function '%s' in the generated code (see 'sched' for kernel names)", argv[1]);
}

/* exec --profile: where the module's time goes, per fused kernel and extern call (rt_profile) */
static int exec_profile(Session *s, long reps) {
    RtProfile p;
    IValue *in = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
    if (!in) return -1;
    fprintf(s->err, "profiling %ld runs...\n", reps);
    int rc = rt_profile(s->ctx, s->cs->fx.mod, session_graph(s), in, s->ninputs, 2, (int)(reps > 0 ? reps : 1), &p);
    session_free_inputs(in, s->ninputs);
    if (rc < 0) return -1;
    StrBuf t;
    sb_init(&t);
    rt_profile_format(&p, &t);
    fprintf(s->out, "per kernel (median of %ld runs; %s):\n%s", reps > 0 ? reps : 1, rt_blas_tune(), t.s ? t.s : "");
    sb_free(&t);
    rt_profile_free(&p);
    return 0;
}

int cmd_exec(Session *s, int argc, char **argv) {
    long reps = 10;
    bool profile = argc > 1 && !strcmp(argv[argc - 1], "--profile");
    if (profile) argc--;
    if (argc > 2) return usage_error(s, "exec");
    if (argc == 2 && parse_count(s, argv[1], "REPS", &reps) < 0) return -1;
    if (!session_require_graph(s)) return -1;
    /* random inputs when none are set (keeps the pass history and the compiled state) */
    if (session_ensure_inputs(s) < 0) return -1;
    if (!ensure_code(s)) return -1;
    if (exec_module(s, reps) < 0) return -1;
    return profile ? exec_profile(s, reps) : 0;
}

/* The current schedule for `why` / `dump` (repl/cmd_why.c): schedules first when needed, as
 * codegen does, without printing the schedule; NULL + ctx error. */
const Schedule *session_schedule(Session *s) {
    if (!session_require_graph(s)) return NULL;
    if (!s->cs || !s->cs->fx.sched) {
        FILE *keep = s->out, *sink = fopen("/dev/null", "w");
        if (sink) s->out = sink;
        int rc = cmd_sched(s, 1, (char *[]){"sched", NULL});
        s->out = keep;
        if (sink) fclose(sink);
        if (rc < 0) return NULL;
    }
    return s->cs->fx.sched;
}
