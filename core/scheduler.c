/* scheduler.c — SchedNodes from IR buffers, dead-buffer removal, fusion rounds with a
 * bytes-saved score and recorded decisions, topological kernel order, buffer reuse planning.
 * See scheduler.h for the kernel model; core/codegen_c.c turns the result into C. */
#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool node_reads(const SchedNode *n, const Buffer *b) {
    for (int i = 0; i < n->deps.nreads; i++)
        if (n->deps.reads[i].buf == b) return true;
    return false;
}
static bool node_writes(const SchedNode *n, const Buffer *b) {
    for (int i = 0; i < n->deps.nwrites; i++)
        if (n->deps.writes[i].buf == b) return true;
    return false;
}
/* node i must run before node j. Input mutations (copy_ into a placeholder) run after every
 * reader of the old value. */
static bool node_edge(const Schedule *s, int i, int j) {
    const SchedNode *a = &s->nodes[i], *b = &s->nodes[j];
    for (int k = 0; k < a->deps.nwrites; k++) {
        const Buffer *x = a->deps.writes[k].buf;
        if (x->kind != BUF_INPUT && node_reads(b, x)) return true;
        if (i < j && node_writes(b, x)) return true;
    }
    for (int k = 0; k < b->deps.nwrites; k++) {
        const Buffer *x = b->deps.writes[k].buf;
        if (x->kind == BUF_INPUT && node_reads(a, x)) return true;
    }
    return false;
}

static bool group_edge(const Schedule *s, int ga, int gb) {
    const SchedGroup *A = &s->groups[ga], *B = &s->groups[gb];
    for (int i = 0; i < A->n; i++)
        for (int j = 0; j < B->n; j++)
            if (A->nodes[i] != B->nodes[j] && node_edge(s, A->nodes[i], B->nodes[j])) return true;
    return false;
}

/* is there a path ga -> ... -> gb through some other group? */
static bool reach_via_other(const Schedule *s, int ga, int gb, bool *edge) {
    int G = s->ngroups;
    bool *seen = mi_xcalloc(G, 1);
    int *stack = mi_xmalloc(sizeof(int) * (G + 1)), sp = 0;
    for (int c = 0; c < G; c++)
        if (c != gb && s->groups[c].alive && edge[ga * G + c] && !seen[c]) { seen[c] = true; stack[sp++] = c; }
    bool found = false;
    while (sp && !found) {
        int c = stack[--sp];
        if (edge[c * G + gb]) { found = true; break; }
        for (int d = 0; d < G; d++)
            if (d != gb && d != ga && s->groups[d].alive && edge[c * G + d] && !seen[d]) { seen[d] = true; stack[sp++] = d; }
    }
    free(seen);
    free(stack);
    return found;
}

static const LoopBody *nbody(const Schedule *s, int n) { return s->nodes[n].buf->body; }

static bool uses_var_from(const Expr *e, int m) {
    if (e->kind == EX_SYM && e->name[0] == 'p' && atoi(e->name + 1) >= m) return true;
    for (int i = 0; i < e->n; i++)
        if (uses_var_from(e->args[i], m)) return true;
    return false;
}

static bool same_inner(const LoopBody *a, const LoopBody *b, int m) {
    if (a->nvars != b->nvars) return false;
    for (int i = m; i < a->nvars; i++)
        if (a->ranges[i] != b->ranges[i]) return false;
    return true;
}

static int64_t buf_bytes(const Buffer *b, SymCtx *sy) {
    int64_t n;
    if (!sym_is_int(layout_numel(sy, &b->layout), &n)) return 4096;
    return n * (int64_t)dtype_size(b->layout.dtype);
}

/* Can nodes[] (sorted) form one kernel? Returns nouter >= 0, or -1 with reason. */
static int group_shape(const Schedule *s, const int *nodes, int n, char *why, size_t wn) {
    int m = -1;
    const LoopBody *ref = NULL;
    for (int i = 0; i < n; i++) {
        const Buffer *b = s->nodes[nodes[i]].buf;
        if (b->kind != BUF_COMPUTED) { snprintf(why, wn, "extern kernel"); return -1; }
        if (b->body->nred) {
            if (m >= 0 && m != b->body->npoint) { snprintf(why, wn, "reductions over different outer sizes"); return -1; }
            m = b->body->npoint;
        }
    }
    if (m < 0) {   /* only pointwise: identical iteration spaces */
        ref = nbody(s, nodes[0]);
        for (int i = 1; i < n; i++) {
            const LoopBody *b = nbody(s, nodes[i]);
            if (b->nvars != ref->nvars) { snprintf(why, wn, "different iteration ranks"); return -1; }
            for (int k = 0; k < b->nvars; k++)
                if (b->ranges[k] != ref->ranges[k]) { snprintf(why, wn, "different sizes"); return -1; }
        }
        m = ref->nvars > 0 ? ref->nvars - 1 : 0;
    }
    for (int i = 0; i < n; i++) {
        const LoopBody *b = nbody(s, nodes[i]);
        if (b->npoint < m) { snprintf(why, wn, "iteration space smaller than the shared outer loop"); return -1; }
        if (!ref) ref = b;
        for (int k = 0; k < m; k++)
            if (b->ranges[k] != ref->ranges[k]) { snprintf(why, wn, "outer sizes differ"); return -1; }
    }
    /* data dependencies inside the kernel must be element-local */
    for (int j = 0; j < n; j++) {
        const SchedNode *B = &s->nodes[nodes[j]];
        for (int r = 0; r < B->deps.nreads; r++) {
            const Dep *rd = &B->deps.reads[r];
            for (int i = 0; i < n; i++) {
                if (i == j) continue;
                const SchedNode *A = &s->nodes[nodes[i]];
                for (int w = 0; w < A->deps.nwrites; w++) {
                    const Dep *wr = &A->deps.writes[w];
                    if (wr->buf != rd->buf) continue;
                    if (wr->index != rd->index) { snprintf(why, wn, "%s read at a different index than %s writes it", rd->buf->name, A->name); return -1; }
                    if (uses_var_from(wr->index, m) && !same_inner(A->buf->body, B->buf->body, m)) {
                        snprintf(why, wn, "%s crosses inner loops of different sizes", rd->buf->name);
                        return -1;
                    }
                    if (i > j && !A->buf->mutates) { snprintf(why, wn, "order"); return -1; }
                }
            }
        }
    }
    return m;
}

static const char *gname(Schedule *s, const SchedGroup *g) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < g->n; i++) sb_printf(&sb, "%s%s", i ? "_" : "", s->nodes[g->nodes[i]].name);
    char *r = arena_strdup(&s->arena, sb.s ? sb.s : "");
    sb_free(&sb);
    return r;
}

const char *sched_group_name(const Schedule *s, int g, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < s->groups[g].n && k + 1 < n; i++)
        k += snprintf(buf + k, n - k, "%s%s", i ? "_" : "", s->nodes[s->groups[g].nodes[i]].name);
    return buf;
}

static void record(Schedule *s, const char *a, const char *b, bool acc, int64_t score, const char *why) {
    for (int i = 0; i < s->ndecisions; i++)   /* a rejection is listed once */
        if (!acc && !s->decisions[i].accepted && strcmp(s->decisions[i].a, a) == 0 && strcmp(s->decisions[i].b, b) == 0) return;
    if (s->ndecisions == s->capdecisions) {
        s->capdecisions = s->capdecisions ? 2 * s->capdecisions : 16;
        s->decisions = mi_xrealloc(s->decisions, sizeof(FusionDecision) * s->capdecisions);
    }
    FusionDecision *d = &s->decisions[s->ndecisions++];
    d->a = a;
    d->b = b;
    d->accepted = acc;
    d->score = score;
    snprintf(d->reason, sizeof d->reason, "%s", why);
}

/* execution order inside a kernel: creation order, input mutations last (insertion sort) */
static void sort_nodes(const Schedule *s, int *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int x = v[j - 1], y = v[j];
            int mx = s->nodes[x].buf->mutates != NULL, my = s->nodes[y].buf->mutates != NULL;
            if (mx < my || (mx == my && x < y)) break;
            v[j - 1] = y;
            v[j] = x;
        }
}

static int64_t pair_score(Schedule *s, int ga, int gb) {
    int64_t score = 0;
    IrModule *m = s->ir;
    for (int bi = 0; bi < m->nbufs; bi++) {
        Buffer *b = m->bufs[bi];
        bool ta = false, tb = false;
        for (int i = 0; i < s->groups[ga].n; i++) {
            SchedNode *n = &s->nodes[s->groups[ga].nodes[i]];
            ta |= node_reads(n, b) || node_writes(n, b);
        }
        for (int i = 0; i < s->groups[gb].n; i++) {
            SchedNode *n = &s->nodes[s->groups[gb].nodes[i]];
            tb |= node_reads(n, b) || node_writes(n, b);
        }
        if (ta && tb) score += buf_bytes(b, m->ctx->sym);
    }
    return score;
}

static void fuse_rounds(Schedule *s) {
    int G = s->ngroups;
    for (;;) {
        bool *edge = mi_xcalloc((size_t)G * G, 1);
        for (int a = 0; a < G; a++)
            for (int b = 0; b < G; b++)
                if (a != b && s->groups[a].alive && s->groups[b].alive) edge[a * G + b] = group_edge(s, a, b);
        int best_a = -1, best_b = -1;
        int64_t best = 0;
        for (int a = 0; a < G; a++) {
            if (!s->groups[a].alive || s->groups[a].is_extern) continue;
            for (int b = a + 1; b < G; b++) {
                if (!s->groups[b].alive || s->groups[b].is_extern) continue;
                int64_t score = pair_score(s, a, b);
                if (score <= 0) continue;
                const char *na = gname(s, &s->groups[a]), *nb = gname(s, &s->groups[b]);
                if (reach_via_other(s, a, b, edge) || reach_via_other(s, b, a, edge)) {
                    record(s, na, nb, false, score, "would create a cycle through another kernel");
                    continue;
                }
                int tmp[512], n = 0;
                for (int i = 0; i < s->groups[a].n && n < 512; i++) tmp[n++] = s->groups[a].nodes[i];
                for (int i = 0; i < s->groups[b].n && n < 512; i++) tmp[n++] = s->groups[b].nodes[i];
                sort_nodes(s, tmp, n);
                char why[160];
                if (group_shape(s, tmp, n, why, sizeof why) < 0) { record(s, na, nb, false, score, why); continue; }
                if (score > best) { best = score; best_a = a; best_b = b; }
            }
        }
        free(edge);
        if (best_a < 0) break;
        SchedGroup *A = &s->groups[best_a], *B = &s->groups[best_b];
        const char *na = gname(s, A), *nb = gname(s, B);
        bool vertical = group_edge(s, best_a, best_b) || group_edge(s, best_b, best_a);
        record(s, na, nb, true, best, vertical ? "vertical: producer into consumer" : "horizontal: shared reads");
        A->nodes = mi_xrealloc(A->nodes, sizeof(int) * (A->n + B->n));
        memcpy(A->nodes + A->n, B->nodes, sizeof(int) * B->n);
        A->n += B->n;
        sort_nodes(s, A->nodes, A->n);
        char why[160];
        A->nouter = group_shape(s, A->nodes, A->n, why, sizeof why);
        for (int i = 0; i < B->n; i++) s->nodes[B->nodes[i]].group = best_a;
        B->alive = false;
    }
}

static void topo_order(Schedule *s) {
    int G = s->ngroups;
    int *indeg = mi_xcalloc(G, sizeof(int));
    bool *done = mi_xcalloc(G, 1);
    bool *edge = mi_xcalloc((size_t)G * G, 1);
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++)
            if (a != b && s->groups[a].alive && s->groups[b].alive && group_edge(s, a, b)) { edge[a * G + b] = true; indeg[b]++; }
    s->order = mi_xmalloc(sizeof(int) * (G + 1));
    s->norder = 0;
    for (;;) {
        int pick = -1;
        for (int g = 0; g < G; g++)
            if (s->groups[g].alive && !done[g] && indeg[g] == 0 &&
                (pick < 0 || s->groups[g].nodes[0] < s->groups[pick].nodes[0])) pick = g;
        if (pick < 0) break;
        done[pick] = true;
        s->order[s->norder++] = pick;
        for (int b = 0; b < G; b++)
            if (edge[pick * G + b]) indeg[b]--;
    }
    free(indeg);
    free(done);
    free(edge);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void name_kernels(Schedule *s) {
    for (int k = 0; k < s->norder; k++) {
        SchedGroup *g = &s->groups[s->order[k]];
        if (g->is_extern) {
            g->kernel_name = arena_printf(&s->arena, "extern_%s", s->nodes[g->nodes[0]].buf->ext == EXT_SDPA ? "sdpa" : "mm");
            continue;
        }
        const char *names[64];
        int nn = 0;
        for (int i = 0; i < g->n; i++) {
            const Buffer *b = s->nodes[g->nodes[i]].buf;
            for (int o = 0; o < b->norigins; o++) {
                bool dup = false;
                for (int q = 0; q < nn; q++) dup |= strcmp(names[q], b->origins[o]) == 0;
                if (!dup && nn < 64) names[nn++] = b->origins[o];
            }
        }
        qsort(names, nn, sizeof(char *), cmp_str);
        StrBuf sb;
        sb_init(&sb);
        sb_put(&sb, "cpp_fused");
        for (int i = 0; i < nn && i < 6; i++) {
            sb_putc(&sb, '_');
            for (const char *c = names[i]; *c; c++) sb_putc(&sb, (*c == '.' ? '_' : *c));
        }
        sb_printf(&sb, "_%d", k);
        g->kernel_name = arena_strdup(&s->arena, sb.s);
        sb_free(&sb);
    }
}

static bool is_intermediate(const Buffer *b) {
    return (b->kind == BUF_COMPUTED && !b->mutates && b->output_index < 0) ||
           (b->kind == BUF_EXTERN && b->output_index < 0);
}

static void plan_memory(Schedule *s) {
    IrModule *m = s->ir;
    s->reuse_of = mi_xmalloc(sizeof(int) * (m->nbufs + 1));
    int *last = mi_xmalloc(sizeof(int) * (m->nbufs + 1));
    for (int i = 0; i < m->nbufs; i++) { s->reuse_of[i] = -1; last[i] = -1; }
    for (int k = 0; k < s->norder; k++) {
        SchedGroup *g = &s->groups[s->order[k]];
        for (int i = 0; i < g->n; i++) {
            SchedNode *n = &s->nodes[g->nodes[i]];
            for (int r = 0; r < n->deps.nreads; r++) last[n->deps.reads[r].buf->id] = k;
            for (int w = 0; w < n->deps.nwrites; w++)
                if (last[n->deps.writes[w].buf->id] < k) last[n->deps.writes[w].buf->id] = k;
        }
    }
    int *freed = mi_xmalloc(sizeof(int) * (m->nbufs + 1)), nfreed = 0;
    SymCtx *sy = m->ctx->sym;
    for (int k = 0; k < s->norder; k++) {
        SchedGroup *g = &s->groups[s->order[k]];
        for (int i = 0; i < g->n; i++) {
            SchedNode *n = &s->nodes[g->nodes[i]];
            for (int w = 0; w < n->deps.nwrites; w++) {
                Buffer *b = n->deps.writes[w].buf;
                if (!is_intermediate(b)) continue;
                Expr *sz = layout_storage_size(sy, &b->layout);
                for (int f = 0; f < nfreed; f++) {
                    Buffer *o = m->bufs[freed[f]];
                    if (o->layout.dtype == b->layout.dtype && layout_storage_size(sy, &o->layout) == sz) {
                        s->reuse_of[b->id] = o->id;
                        freed[f] = freed[--nfreed];
                        break;
                    }
                }
            }
        }
        for (int i = 0; i < m->nbufs; i++)
            if (last[i] == k && is_intermediate(m->bufs[i])) {
                /* the storage actually freed is the root of its reuse chain */
                freed[nfreed++] = i;
            }
    }
    free(last);
    free(freed);
}

Schedule *sched_run(MiCtx *ctx, IrModule *m) {
    Schedule *s = mi_xcalloc(1, sizeof *s);
    s->ir = m;
    arena_init(&s->arena);
    s->nodes = mi_xcalloc(m->nbufs + 1, sizeof(SchedNode));
    for (int i = 0; i < m->nbufs; i++) {
        Buffer *b = m->bufs[i];
        if (!ir_is_op(b)) continue;
        SchedNode *n = &s->nodes[s->nnodes];
        n->id = s->nnodes++;
        n->buf = b;
        n->name = arena_printf(&s->arena, "op%d", b->id - m->ninputs);
        ir_deps_collect(m, b, &n->deps);
    }
    /* dead buffer removal (repeat: removing a node can kill its producers) */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < s->nnodes; i++) {
            SchedNode *n = &s->nodes[i];
            if (n->dead || n->buf->output_index >= 0 || n->buf->mutates) continue;
            if (n->buf->extra_out && n->buf->extra_out->output_index >= 0) continue;
            bool used = false;
            for (int j = 0; j < s->nnodes && !used; j++) {
                if (j == i || s->nodes[j].dead) continue;
                for (int w = 0; w < n->deps.nwrites; w++)
                    used |= node_reads(&s->nodes[j], n->deps.writes[w].buf);
            }
            if (!used) { n->dead = true; changed = true; }
        }
    }
    s->groups = mi_xcalloc(s->nnodes + 1, sizeof(SchedGroup));
    for (int i = 0; i < s->nnodes; i++) {
        SchedGroup *g = &s->groups[i];
        g->nodes = mi_xmalloc(sizeof(int));
        g->nodes[0] = i;
        g->n = 1;
        g->alive = !s->nodes[i].dead;
        g->is_extern = s->nodes[i].buf->kind == BUF_EXTERN;
        char why[160];
        g->nouter = g->is_extern ? 0 : group_shape(s, g->nodes, 1, why, sizeof why);
        s->nodes[i].group = i;
    }
    s->ngroups = s->nnodes;
    if (ctx->fusion) fuse_rounds(s);
    topo_order(s);
    name_kernels(s);
    plan_memory(s);
    return s;
}

void sched_free(Schedule *s) {
    if (!s) return;
    for (int i = 0; i < s->nnodes; i++) dep_set_free(&s->nodes[i].deps);
    for (int i = 0; i < s->ngroups; i++) free(s->groups[i].nodes);
    free(s->nodes);
    free(s->groups);
    free(s->order);
    free(s->decisions);
    free(s->reuse_of);
    arena_free(&s->arena);
    free(s);
}

int sched_num_kernels(const Schedule *s) { return s->norder; }

char *sched_decisions_text(const Schedule *s) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < s->ndecisions; i++) {
        const FusionDecision *d = &s->decisions[i];
        sb_printf(&sb, "%s %s + %s score=%lld: %s\n", d->accepted ? "fuse" : "skip", d->a, d->b,
                  (long long)d->score, d->reason);
    }
    if (!sb.s) sb_put(&sb, "");
    return sb_take(&sb);
}

char *sched_print(const Schedule *s) {
    StrBuf sb;
    sb_init(&sb);
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        char nm[512];
        sched_group_name(s, s->order[k], nm, sizeof nm);
        if (g->n > 1) {
            sb_printf(&sb, "%s: FusedSchedulerNode(", nm);
            for (int i = 0; i < g->n; i++) sb_printf(&sb, "%sSchedulerNode", i ? "," : "");
            sb_printf(&sb, ")\n%s.kernel = %s\n%s.outer_loops = %d\n", nm, g->kernel_name, nm, g->nouter);
            for (int i = 0; i < g->n; i++) {
                sb_printf(&sb, "%s.snodes[%d] =\n", nm, i);
                ir_print_buffer(s->ir, s->nodes[g->nodes[i]].buf, s->nodes[g->nodes[i]].name, &sb);
            }
        } else {
            ir_print_buffer(s->ir, s->nodes[g->nodes[0]].buf, s->nodes[g->nodes[0]].name, &sb);
        }
        sb_put(&sb, "\n\n");
    }
    if (!sb.s) sb_put(&sb, "");
    return sb_take(&sb);
}
