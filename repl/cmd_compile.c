/* cmd_compile.c — shell commands for the back half of the pipeline: lower (FX -> loop IR),
 * ir (ir_pre_fusion style dump), sched (fusion groups and decisions), codegen (C source) and
 * exec (compile with cc, run, compare with the reference interpreter, time). The session keeps
 * the results in a CompileState that is dropped whenever the graph changes. */
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "viz/viz.h"
#include "runtime.h"
#include "tensor.h"
#ifdef HAVE_TRACE
#include "trace/trace.h"
#endif
#ifdef HAVE_IR
#include "ir.h"
#endif
#ifdef HAVE_SCHED
#include "scheduler.h"
#endif
#ifdef HAVE_CODEGEN
#include "codegen_c.h"
#include "codegen_cuda.h"
#endif

struct CompileState {
#ifdef HAVE_IR
    IrModule *ir;
#endif
#ifdef HAVE_SCHED
    Schedule *sched;
#endif
    char *code;               /* generated C (codegen) */
    int unused;
};

void compile_state_free(CompileState *cs) {
    if (!cs) return;
#ifdef HAVE_SCHED
    if (cs->sched) sched_free(cs->sched);
#endif
#ifdef HAVE_IR
    if (cs->ir) ir_free(cs->ir);
#endif
    free(cs->code);
    free(cs);
}

#define NOT_YET(name, what) \
    int name(Session *s, int argc, char **argv) { \
        (void)argc; (void)argv; \
        return mi_err(s->ctx, "", 0, 0, "not available yet: %s", what); }

#ifdef HAVE_IR

static const char *buf_kind_name(const Buffer *b) {
    switch (b->kind) {
    case BUF_INPUT: return "InputBuffer";
    case BUF_EXTERN: return "ExternKernel";
    case BUF_COMPUTED: return b->is_reduction ? "Reduction" : "Pointwise";
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
    sb_printf(sb, "%s[", dtype_abbrev(b->layout.dtype));
    for (int d = 0; d < b->layout.ndim; d++) {
        if (d) sb_put(sb, ", ");
        sym_str_sb(b->layout.size[d], sb);
    }
    sb_putc(sb, ']');
}

/* The IR of the current graph, lowering it first when needed (as sched/codegen/exec do). */
static bool require_ir(Session *s) {
    if (s->cs && s->cs->ir) return true;
    if (!session_require_graph(s)) return false;
    fprintf(s->err, "lowering first\n");
    return cmd_lower(s, 1, (char *[]){"lower", NULL}) == 0;
}

#ifdef HAVE_SCHED
/* cond branches: their functions ("true_graph_0") and kernels, recursively */
static void add_branch_names(const Schedule *s, char ***names, int *n, int *cap) {
    for (int i = 0; i < s->nbranches; i++)
        for (int k = 0; k < 2; k++) {
            const Schedule *b = s->branches[i].s[k];
            if (*n + b->norder + 2 >= *cap) {
                *cap = 2 * *cap + b->norder + 2;
                *names = mi_xrealloc(*names, sizeof **names * (size_t)*cap);
            }
            (*names)[(*n)++] = mi_xstrdup(s->branches[i].fn[k]);
            for (int j = 0; j < b->norder; j++)
                if (b->groups[b->order[j]].kernel_name) (*names)[(*n)++] = mi_xstrdup(b->groups[b->order[j]].kernel_name);
            add_branch_names(b, names, n, cap);
        }
}
#endif

char **compile_state_names(CompileState *cs) {
    if (!cs || !cs->ir) return NULL;
    int n = 0, extra = 0;
#ifdef HAVE_SCHED
    if (cs->sched) extra = cs->sched->norder;
#endif
    int cap = cs->ir->nbufs + extra + 1;
    char **names = mi_xcalloc(cap, sizeof *names);
    for (int i = 0; i < cs->ir->nbufs; i++) names[n++] = mi_xstrdup(cs->ir->bufs[i]->name);
#ifdef HAVE_SCHED
    for (int k = 0; k < extra; k++) {
        const SchedGroup *grp = &cs->sched->groups[cs->sched->order[k]];
        if (grp->kernel_name) names[n++] = mi_xstrdup(grp->kernel_name);
    }
    if (cs->sched) add_branch_names(cs->sched, &names, &n, &cap);
#endif
    names[n] = NULL;
    return names;
}

int cmd_lower(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "lower");
    if (!session_require_graph(s)) return -1;
    fprintf(s->err, "lowering %d nodes...\n", session_graph(s)->n);
    uint64_t t0 = mi_now_ns();
    IrModule *m = ir_lower(s->ctx, session_graph(s));
    if (!m) return -1;
    session_drop_compile(s);
    s->cs = mi_xcalloc(1, sizeof *s->cs);
    s->cs->ir = m;
    int nin = 0, ncomp = 0, next = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->kind == BUF_INPUT) { nin++; continue; }
        if (b->kind == BUF_EXTERN) next++; else ncomp++;
        StrBuf sb; sb_init(&sb);
        layout_text(b, &sb);
        fprintf(s->out, "  %-8s %-12s %-20s", b->name, buf_kind_name(b), sb.s ? sb.s : "");
        sb_free(&sb);
        if (b->norigins) {
            fprintf(s->out, " origins:");
            for (int k = 0; k < b->norigins; k++) fprintf(s->out, " %s", b->origins[k]);
        }
        if (b->extern_owner) fprintf(s->out, " written by %s's kernel", b->extern_owner->name);
        if (b->output_index >= 0) fprintf(s->out, "  -> output %d", b->output_index);
        fputc('\n', s->out);
    }
    fprintf(s->out, "lowered to %d buffers (%d inputs, %d computed, %d extern) in %.3f ms\n",
            m->nbufs, nin, ncomp, next, (mi_now_ns() - t0) / 1e6);
    return 0;
}

int cmd_ir(Session *s, int argc, char **argv) {
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "post") && strcmp(argv[1], "pre"))) return usage_error(s, "ir");
    if (!require_ir(s)) return -1;
    if (argc == 2 && !strcmp(argv[1], "post")) {
#ifdef HAVE_SCHED
        if (!s->cs->sched && cmd_sched(s, 1, (char *[]){"sched", NULL}) < 0) return -1;
        char *post = sched_print(s->cs->sched);
        if (!post) return mi_err(s->ctx, "", 0, 0, "cannot print the schedule");
        fputs(post, s->out);
        if (*post && post[strlen(post) - 1] != '\n') fputc('\n', s->out);
        free(post);
        return 0;
#else
        return mi_err(s->ctx, "", 0, 0, "not available yet: the scheduler (core/scheduler.h) is missing");
#endif
    }
    char *text = ir_print(s->cs->ir);
    if (!text) return mi_err(s->ctx, "", 0, 0, "cannot print the IR");
    fputs(text, s->out);
    if (*text && text[strlen(text) - 1] != '\n') fputc('\n', s->out);
    free(text);
    return 0;
}

int compile_state_bufgraph(Session *s, VizBufGraph *out, bool with_groups) {
    memset(out, 0, sizeof *out);
    if (!require_ir(s)) return -1;
#ifdef HAVE_SCHED
    if (with_groups && !s->cs->sched) {     /* schedule on demand, as codegen/exec do */
        fprintf(s->err, "scheduling first\n");
        if (cmd_sched(s, 1, (char *[]){"sched", NULL}) < 0) return -1;
    }
    const Schedule *sc = s->cs->sched;
#else
    const void *sc = NULL;
#endif
    if (with_groups && !sc) return mi_err(s->ctx, "", 0, 0, "no fusion groups yet (try 'sched')");
    IrModule *m = s->cs->ir;
#ifdef HAVE_SCHED
    if (with_groups) {
        out->groups = mi_xcalloc(sc->norder ? sc->norder : 1, sizeof *out->groups);
        for (int k = 0; k < sc->norder; k++) {
            const SchedGroup *grp = &sc->groups[sc->order[k]];
            char nb[128];
            const char *kn = grp->kernel_name ? grp->kernel_name : sched_group_name(sc, sc->order[k], nb, sizeof nb);
            VizGroup *vgp = &out->groups[out->ngroups++];
            bool dup = false;                 /* extern calls share a name: keep clusters apart */
            for (int j = 0; j < out->ngroups - 1; j++) if (!strcmp(out->groups[j].kernel, kn)) dup = true;
            char uniq[160];
            snprintf(uniq, sizeof uniq, "%s_%d", kn, k);
            vgp->kernel = mi_xstrdup(dup ? uniq : kn);
            char lab[64];
            snprintf(lab, sizeof lab, "%d node%s%s", grp->n, grp->n == 1 ? "" : "s", grp->is_extern ? ", extern" : "");
            vgp->label = mi_xstrdup(lab);
            vgp->members = mi_xcalloc(2 * grp->n + 1, sizeof *vgp->members);
            for (int j = 0; j < grp->n; j++) {
                const Buffer *mb = sc->nodes[grp->nodes[j]].buf;
                vgp->members[vgp->nmembers++] = mi_xstrdup(mb->name);
                /* a second output of the same kernel (sdpa's logsumexp) sits in its cluster */
                if (mb->extra_out) vgp->members[vgp->nmembers++] = mi_xstrdup(mb->extra_out->name);
            }
        }
    }
#endif
    out->nodes = mi_xcalloc(m->nbufs ? m->nbufs : 1, sizeof *out->nodes);
    int cap = 16;
    out->edges = mi_xcalloc(cap, sizeof *out->edges);
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        StrBuf sb; sb_init(&sb);
        sb_printf(&sb, "%s ", buf_kind_name(b));
        layout_text(b, &sb);
        if (b->output_index >= 0) sb_printf(&sb, " (output %d)", b->output_index);
        out->nodes[out->n].name = mi_xstrdup(b->name);
        out->nodes[out->n].label = sb_take(&sb);
        out->nodes[out->n].cls = buf_class(b);
        out->n++;
        if (b->kind == BUF_INPUT) continue;
        if (b->extern_owner) {      /* written by another buffer's kernel: say so with an edge */
            if (out->nedges == cap) { cap *= 2; out->edges = mi_xrealloc(out->edges, cap * sizeof *out->edges); }
            out->edges[out->nedges].from = mi_xstrdup(b->extern_owner->name);
            out->edges[out->nedges].to = mi_xstrdup(b->name);
            out->edges[out->nedges].label = NULL;
            out->nedges++;
        }
        DepSet ds = {0};
        ir_deps_collect(m, b, &ds);
        for (int r = 0; r < ds.nreads; r++) {
            if (!ds.reads[r].buf || ds.reads[r].buf == b) continue;
            if (out->nedges == cap) { cap *= 2; out->edges = mi_xrealloc(out->edges, cap * sizeof *out->edges); }
            out->edges[out->nedges].from = mi_xstrdup(ds.reads[r].buf->name);
            out->edges[out->nedges].to = mi_xstrdup(b->name);
            out->edges[out->nedges].label = NULL;
            out->nedges++;
        }
        dep_set_free(&ds);
    }
    return 0;
}

void compile_bufgraph_free(VizBufGraph *bg) {
    for (int i = 0; i < bg->n; i++) { free((char *)bg->nodes[i].name); free((char *)bg->nodes[i].label); }
    for (int i = 0; i < bg->nedges; i++) { free((char *)bg->edges[i].from); free((char *)bg->edges[i].to); }
    for (int i = 0; i < bg->ngroups; i++) {
        free((char *)bg->groups[i].kernel); free((char *)bg->groups[i].label);
        for (int k = 0; k < bg->groups[i].nmembers; k++) free((char *)bg->groups[i].members[k]);
        free(bg->groups[i].members);
    }
    free(bg->nodes); free(bg->edges); free(bg->groups);
    memset(bg, 0, sizeof *bg);
}

#else  /* !HAVE_IR */

char **compile_state_names(CompileState *cs) { (void)cs; return NULL; }
NOT_YET(cmd_lower, "lowering (core/ir.h and its implementation) is missing")
NOT_YET(cmd_ir, "the IR (core/ir.h and its implementation) is missing")
int compile_state_bufgraph(Session *s, VizBufGraph *out, bool with_groups) {
    (void)out; (void)with_groups;
    return mi_err(s->ctx, "", 0, 0, "not available yet: the IR (core/ir.h) is missing");
}
void compile_bufgraph_free(VizBufGraph *bg) { (void)bg; }

#endif

/* Compile C source, run it on the session inputs, compare every output with the reference
 * interpreter on the current graph, and time it. Prints "max abs err" per output. */
static __attribute__((unused)) int exec_source(Session *s, const char *src, long reps) {
    const Graph *g = session_graph(s);    /* inputs are made before the code (see cmd_exec) */
    fprintf(s->err, "compiling %zu bytes of %s...\n", strlen(src), codegen_is_cuda_source(src) ? "CUDA with nvcc" : "C");
#ifdef HAVE_TRACE
    /* logged before building, so the code of a CUDA run shows in tlparse even without a GPU */
    if (s->ctx->trace) trace_artifact(s->ctx->trace, "inductor_output_code", "string", src);
#endif
    RtModule *mod = rt_compile(s->ctx, src);
    if (!mod) return -1;
    fprintf(s->out, "compiled %s: %s (%.3f s cc, %.3f ms load)\n", mod->key,
            mod->cache_hit ? "cache hit" : "built", mod->compile_s, mod->load_s * 1e3);
    IValue *in_ref = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
    IValue *in_rt = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
    IValue *ro = NULL, *co = NULL; int nr = 0, nc = 0;
    double run_s = 0;
    int rc = -1;
    if (!in_ref || !in_rt) goto done;
    if (interp_run(s->ctx, g, in_ref, s->ninputs, &ro, &nr) < 0) goto done;
    if (rt_run(s->ctx, mod, g, in_rt, s->ninputs, &co, &nc, &run_s) < 0) goto done;
    if (nr != nc) { mi_err(s->ctx, "", 0, 0, "exec: the kernel returned %d outputs, the interpreter %d", nc, nr); goto done; }
    int bad = 0;
    double worst = 0;
    for (int i = 0; i < nr; i++) {
        if (ro[i].kind != IV_TENSOR || co[i].kind != IV_TENSOR) continue;
        CompareResult cr = tensor_compare(co[i].t, ro[i].t, s->rtol, s->atol);
        char ty[128];
        tensor_type_str(ro[i].t, ty, sizeof ty);
        fprintf(s->out, "output %d: %s max abs err %.3g max rel err %.3g %s\n", i, ty, cr.max_abs, cr.max_rel,
                cr.ok ? "ok" : cr.shape_ok ? "MISMATCH" : "SHAPE MISMATCH");
        if (!cr.ok) {
            StrBuf note;
            sb_init(&note);
            rt_explain_mismatch(ro[i].t, &cr, &note);
            if (note.s && note.len) fputs(note.s, s->out);
            sb_free(&note);
            bad++;
        }
        if (cr.max_abs > worst) worst = cr.max_abs;
    }
    /* in-place updates of inputs must match too */
    for (int i = 0; i < s->ninputs; i++) {
        if (in_ref[i].kind != IV_TENSOR) continue;
        CompareResult cr = tensor_compare(in_rt[i].t, in_ref[i].t, s->rtol, s->atol);
        if (!cr.ok) { fprintf(s->out, "input %d after the run: MISMATCH max abs err %.3g\n", i, cr.max_abs); bad++; }
    }
    fprintf(s->out, "max abs err %.3g over %d output%s\n", worst, nr, nr == 1 ? "" : "s");
    double med = 0, best = 0;
    if (reps > 0) {
        fprintf(s->err, "timing %ld runs...\n", reps);
        if (rt_time(s->ctx, mod, g, in_rt, s->ninputs, 2, (int)reps, &med, &best) < 0) goto done;
        uint64_t t0 = mi_now_ns();
        IValue *o2 = NULL; int n2 = 0;
        IValue *in2 = session_clone_inputs(s->ctx, s->inputs, s->ninputs);
        if (in2 && interp_run(s->ctx, g, in2, s->ninputs, &o2, &n2) == 0) interp_free_outputs(o2, n2);
        double interp_s = (mi_now_ns() - t0) / 1e9;
        if (in2) session_free_inputs(in2, s->ninputs);
        fprintf(s->out, "time: median %.4f ms, min %.4f ms over %ld runs; interpreter %.3f ms (%.1fx)\n",
                med * 1e3, best * 1e3, reps, interp_s * 1e3, med > 0 ? interp_s / med : 0.0);
        if (reps >= 3 && best > 0 && med > 4 * best)   /* say why, instead of leaving a puzzle */
            fprintf(s->err, "note: the median is %.0fx the min: the runs were disturbed (other processes on the "
                    "cores, or OpenMP threads waiting for one); try more REPS or 'set threads 1'\n", med / best);
    }
    if (bad) { mi_err(s->ctx, "", 0, 0, "exec: %d comparison%s failed", bad, bad == 1 ? "" : "s"); goto done; }
    fprintf(s->out, "exec: ok\n");
    rc = 0;
done:
    if (ro) interp_free_outputs(ro, nr);
    if (co) interp_free_outputs(co, nc);
    if (in_ref) session_free_inputs(in_ref, s->ninputs);
    if (in_rt) session_free_inputs(in_rt, s->ninputs);
    rt_free(mod);
    return rc;
}

#ifdef HAVE_SCHED
static int ensure_lowered(Session *s) { return require_ir(s) ? 0 : -1; }

int cmd_sched(Session *s, int argc, char **argv) {
    if (argc != 1) return usage_error(s, "sched");
    if (!session_require_graph(s)) return -1;
    if (ensure_lowered(s) < 0) return -1;
    if (s->cs->sched) { sched_free(s->cs->sched); s->cs->sched = NULL; }
    free(s->cs->code); s->cs->code = NULL;
    uint64_t t0 = mi_now_ns();
    Schedule *sc = sched_run(s->ctx, s->cs->ir);
    if (!sc) return -1;
    s->cs->sched = sc;
    fprintf(s->out, "%d kernel%s (fusion %s), scheduled in %.3f ms:\n", sched_num_kernels(sc),
            sched_num_kernels(sc) == 1 ? "" : "s", s->ctx->fusion ? "on" : "off", (mi_now_ns() - t0) / 1e6);
    for (int k = 0; k < sc->norder; k++) {
        const SchedGroup *grp = &sc->groups[sc->order[k]];
        char nb[128];
        const char *kn = grp->kernel_name ? grp->kernel_name : sched_group_name(sc, sc->order[k], nb, sizeof nb);
        fprintf(s->out, "  %-32s", kn);
        for (int j = 0; j < grp->n; j++) {
            const SchedNode *sn = &sc->nodes[grp->nodes[j]];
            fprintf(s->out, " %s(%s)", sn->buf->name, sn->name);
        }
        if (grp->is_extern) fprintf(s->out, "  [extern]");
        fputc('\n', s->out);
    }
    char *dec = sched_decisions_text(sc);
    if (dec && *dec) {
        fprintf(s->out, "fusion decisions:\n");
        fputs(dec, s->out);
        if (dec[strlen(dec) - 1] != '\n') fputc('\n', s->out);
    }
    free(dec);
    return 0;
}
#else
NOT_YET(cmd_sched, "the scheduler (core/scheduler.h) is missing")
#endif
#ifdef HAVE_CODEGEN
/* Lower, schedule and generate as needed; the source stays in the CompileState. */
static const char *ensure_code(Session *s) {
    if (!session_require_graph(s)) return NULL;
    if (!s->cs || !s->cs->sched) {
        if (cmd_sched(s, 1, (char *[]){"sched", NULL}) < 0) return NULL;
    }
    if (!s->cs->code) {
        uint64_t t0 = mi_now_ns();
        bool cuda = s->ctx->target == MI_DEV_CUDA;   /* `set device cuda` / --device cuda */
        s->cs->code = cuda ? codegen_cuda(s->ctx, s->cs->sched) : codegen_c(s->ctx, s->cs->sched);
        if (!s->cs->code) return NULL;
        fprintf(s->err, "generated %zu bytes of %s in %.3f ms\n", strlen(s->cs->code), cuda ? "CUDA" : "C", (mi_now_ns() - t0) / 1e6);
    }
    return s->cs->code;
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
        const char *line = p;
        while (line > code && line[-1] != '\n') line--;
        if (*line == ' ' || *line == '\t') continue;          /* a call, not the definition */
        const char *end = strstr(p, "\n}\n");
        if (!end) continue;
        const char *semi = strchr(p, ';'), *brace = strchr(p, '{');
        if (semi && brace && semi < brace) continue;          /* a declaration */
        fprintf(s->out, "%.*s\n", (int)(end + 2 - line), line);
        return 0;
    }
    return mi_err(s->ctx, "", 0, 0, "no function '%s' in the generated code (see 'sched' for kernel names)", argv[1]);
}

int cmd_exec(Session *s, int argc, char **argv) {
    long reps = 10;
    if (argc > 2) return usage_error(s, "exec");
    if (argc == 2 && parse_count(s, argv[1], "REPS", &reps) < 0) return -1;
    if (!session_require_graph(s)) return -1;
    /* random inputs when none are set (keeps the pass history and the compiled state) */
    if (session_ensure_inputs(s) < 0) return -1;
    const char *code = ensure_code(s);
    if (!code) return -1;
    return exec_source(s, code, reps);
}
#else
NOT_YET(cmd_codegen, "C code generation (core/codegen_c.h) is missing")
NOT_YET(cmd_exec, "C code generation (core/codegen_c.h) is missing")
#endif
