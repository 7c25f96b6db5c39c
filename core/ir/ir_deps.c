/* ir_deps.c — the dependency-extraction handler: replays a buffer's LoopBody and records
 * MemoryDep(buffer, index) reads and writes (extern kernels: StarDeps on whole buffers).
 * The scheduler decides fusion legality from these. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct DepH { OpsHandler h; DepSet *d; SymCtx *S; } DepH;

static void add_dep(Dep **v, int *n, Dep d) {
    for (int i = 0; i < *n; i++)
        if ((*v)[i].buf == d.buf && (*v)[i].index == d.index && (*v)[i].kind == d.kind) return;
    *v = mi_xrealloc(*v, sizeof(Dep) * (*n + 1));
    (*v)[(*n)++] = d;
}

static IrVal d_load(OpsHandler *h, Buffer *buf, Expr *index) {
    DepH *s = h->self;
    add_dep(&s->d->reads, &s->d->nreads, (Dep){DEP_MEMORY, buf, index, false});
    return 0;
}
static void d_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    DepH *s = h->self;
    add_dep(&s->d->writes, &s->d->nwrites, (Dep){DEP_MEMORY, buf, index, false});
}
static IrVal d_constant(OpsHandler *h, double v, DType dt) { return 0; }
static IrVal d_index_expr(OpsHandler *h, Expr *e, DType dt) { return 0; }
static IrVal d_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) { return 0; }
static IrVal d_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) { return 0; }
static IrVal d_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) { return 0; }
static IrVal d_getitem(OpsHandler *h, IrVal v, int k) { return 0; }
static IrVal d_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dt, const IrVal *v, int n) { return 0; }
/* ops.bucketize reads its whole boundaries buffer: a StarDep, as Inductor's
 * _RecordLoadStoreInner.bucketize records */
static IrVal d_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) {
    DepH *s = h->self;
    add_dep(&s->d->reads, &s->d->nreads, (Dep){DEP_STAR, b->buf, NULL, false});
    return 0;
}
/* indirectK reads as tmpK, as Inductor's extract_read_writes names indirect variables
 * ("MemoryDep('primals_1', c1 + 64*tmp0, {c0: 32, c1: 64})") */
static Expr *d_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    DepH *s = h->self;
    const char *k = sym ? sym->name + strcspn(sym->name, "0123456789") : "0";
    char nm[32];
    snprintf(nm, sizeof nm, "tmp%s", k);
    return sym_symbol(s->S, nm);
}

/* Inductor's mutation_renames for a Scatter into a graph input (index_put_ lowered in place):
 * a buffer made after the Scatter that reads the input reads it after the Scatter, so it gets a
 * StarDep on the Scatter's buffer. Example: index_put_(k_cache, [None, None, pos], k) then
 * sdpa(q, index_put_, ...): the attention extern depends on the Scatter. */
/* The index: list[start[x->id] .. start[x->id + 1]) holds the Scatters into input x in id
 * order; mark[] (one stamp per buffer) is add_mutation_deps' scratch set of the buffers a
 * DepSet reads already. Built in O(nbufs) once per lowered module. */
typedef struct IrScatterIndex { int nbufs; int *start; Buffer **list; unsigned *mark; unsigned stamp; } IrScatterIndex;

void ir_scatter_index_free(IrModule *m) {
    IrScatterIndex *ix = m->scatter_index;
    if (!ix) return;
    free(ix->start);
    free(ix->list);
    free(ix->mark);
    free(ix);
    m->scatter_index = NULL;
}

static bool is_inplace_scatter(const Buffer *mb) {
    return mb->mutates && mb->mutates->kind == BUF_INPUT && mb->inplace_alias && mb->trace && mb->trace->scatter;
}

/* m's index, (re)built when buffers were added since (the module is a cache holder here: the
 * lowered IR itself is not changed) */
static IrScatterIndex *scatter_index(const IrModule *cm) {
    IrModule *m = (IrModule *)cm;
    if (m->scatter_index && m->scatter_index->nbufs == m->nbufs) return m->scatter_index;
    ir_scatter_index_free(m);
    IrScatterIndex *ix = mi_xcalloc(1, sizeof *ix);
    int n = m->nbufs;
    ix->nbufs = n;
    ix->start = mi_xcalloc((size_t)n + 2, sizeof(int));
    ix->mark = mi_xcalloc((size_t)n + 1, sizeof(unsigned));
    for (int i = 0; i < n; i++)
        if (is_inplace_scatter(m->bufs[i])) ix->start[m->bufs[i]->mutates->id + 1]++;
    for (int i = 0; i < n; i++) ix->start[i + 1] += ix->start[i];
    ix->list = mi_xmalloc(sizeof(Buffer *) * ((size_t)ix->start[n] + 1));
    int *fill = mi_xmalloc(sizeof(int) * ((size_t)n + 1));
    memcpy(fill, ix->start, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)   /* ascending i: each list in id order */
        if (is_inplace_scatter(m->bufs[i])) ix->list[fill[m->bufs[i]->mutates->id]++] = m->bufs[i];
    free(fill);
    m->scatter_index = ix;
    return ix;
}

/* Each mutated input b reads gets StarDeps on the Scatters into it made before b, each once.
 * The trick: the index lists them per input, and a stamp per buffer marks what the DepSet
 * reads already, so the work is the reads plus the deps added (it was every buffer of the
 * module for every read: O(nbufs) per read). */
static void add_mutation_deps(const IrModule *m, const Buffer *b, DepSet *out) {
    IrScatterIndex *ix = NULL;
    for (int r = 0, nr = out->nreads; r < nr; r++) {
        const Buffer *x = out->reads[r].buf;
        if (!x || x->kind != BUF_INPUT || !x->mutated) continue;
        if (!ix) {
            ix = scatter_index(m);
            if (++ix->stamp == 0) { memset(ix->mark, 0, sizeof(unsigned) * (size_t)(ix->nbufs + 1)); ix->stamp = 1; }
            for (int q = 0; q < out->nreads; q++)   /* StarDeps already there */
                if (out->reads[q].kind == DEP_STAR && out->reads[q].buf && out->reads[q].buf->id < ix->nbufs)
                    ix->mark[out->reads[q].buf->id] = ix->stamp;
        }
        if (x->id >= ix->nbufs) continue;
        int lo = ix->start[x->id], hi = ix->start[x->id + 1], k = 0;
        while (lo + k < hi && ix->list[lo + k]->id < b->id) k++;
        if (!k) continue;
        out->reads = mi_xrealloc(out->reads, sizeof(Dep) * (size_t)(out->nreads + k));
        for (int j = lo; j < lo + k; j++) {
            Buffer *mb = ix->list[j];
            if (mb == b || ix->mark[mb->id] == ix->stamp) continue;
            ix->mark[mb->id] = ix->stamp;
            out->reads[out->nreads++] = (Dep){DEP_STAR, mb, NULL, false};
        }
    }
}

static void ir_deps_collect_own(const IrModule *m, const Buffer *b, DepSet *out);

/* StarDeps on the definers of the unbacked symbols e names (u0 defined by a fallback's result
 * or an item() of a computed buffer), as Inductor's scheduler adds a dependency on the node
 * whose unbacked_bindings define a symbol a node uses (get_unbacked_symbol_uses); an item() of a
 * graph input is defined on entry, nothing to wait for. */
static void add_unbacked_deps_of(const IrModule *m, const Buffer *b, const Expr *e, DepSet *out) {
    const char *names[16];
    int k = e ? sym_free_symbols(e, names, 16) : 0;
    for (int i = 0; i < k && i < 16; i++) {
        const IrUnbacked *u = ir_unbacked_find(m, names[i]);
        if (u && u->buf != b && u->buf->kind != BUF_INPUT) add_dep(&out->reads, &out->nreads, (Dep){DEP_STAR, u->buf, NULL, false});
    }
}

/* b's sizes, strides, loop ranges, index expressions and extern views, looked at for unbacked
 * symbols. Example: full([u1]) * x after u1 = buf0.item(): a StarDep on buf0. */
static void add_unbacked_deps(const IrModule *m, const Buffer *b, DepSet *out) {
    if (!m->nunbacked) return;
    for (int d = 0; d < b->layout.ndim; d++) {
        add_unbacked_deps_of(m, b, b->layout.size[d], out);
        add_unbacked_deps_of(m, b, b->layout.stride[d], out);
    }
    add_unbacked_deps_of(m, b, b->layout.offset, out);
    for (int i = 0; b->body && i < b->body->nvars; i++) add_unbacked_deps_of(m, b, b->body->ranges[i], out);
    for (int i = 0; b->body && i < b->body->nindexes; i++) add_unbacked_deps_of(m, b, b->body->indexes[i], out);
    for (int i = 0; i < b->neargs; i++)
        for (int d = 0; d < b->eargs[i].view.ndim; d++) {
            add_unbacked_deps_of(m, b, b->eargs[i].view.size[d], out);
            add_unbacked_deps_of(m, b, b->eargs[i].view.stride[d], out);
        }
}

void ir_deps_collect(const IrModule *m, const Buffer *b, DepSet *out) {
    *out = (DepSet){0};
    ir_deps_collect_own(m, b, out);
    add_mutation_deps(m, b, out);
    add_unbacked_deps(m, b, out);
}

/* The reads and writes of b's own body (or extern call). */
static void ir_deps_collect_own(const IrModule *m, const Buffer *b, DepSet *out) {
    if (b->kind == BUF_EXTERN) {
        for (int i = 0; i < b->neargs; i++)
            add_dep(&out->reads, &out->nreads, (Dep){DEP_STAR, b->eargs[i].buf, NULL, false});
        add_dep(&out->writes, &out->nwrites, (Dep){DEP_STAR, (Buffer *)b, NULL, false});
        /* a MultiOutputLayout's call fills its items' storage (marked: not printed) */
        for (int k = 0; b->layout.multi && k < b->nitems; k++)
            if (b->items[k]) add_dep(&out->writes, &out->nwrites, (Dep){DEP_STAR, b->items[k], NULL, false, .fill = true});
        for (int k = 1; b->cond && k < b->cond->nouts; k++)
            add_dep(&out->writes, &out->nwrites, (Dep){DEP_STAR, b->cond->outs[k], NULL, false});
        return;
    }
    if (!b->body) return;
    DepH s = {{0}, out, m->ctx->sym};
    s.h = (OpsHandler){&s, d_load, d_store, d_constant, d_index_expr, d_to_dtype, d_math, d_red,
                       d_getitem, d_store, d_indirect, d_store, d_scan, d_bucketize};
    loop_body_run(b->body, &s.h);
    /* a Scatter mutating an intermediate (index_put's clone) runs after what wrote it: a
     * StarDep on it, as Inductor's scheduler adds for a mutation (never fused with its writer) */
    /* an in-place foreach item's buffer is the input after it: it "writes" itself at the
     * input's elements too, so its readers depend on it (Inductor renames them to the input) */
    for (int i = 0, nw = out->nwrites; b->inplace_alias && i < nw; i++)
        if (out->writes[i].buf == b->mutates) { Dep d = out->writes[i]; d.buf = (Buffer *)b; add_dep(&out->writes, &out->nwrites, d); }
    if (b->mutates && b->mutates->kind != BUF_INPUT) {
        add_dep(&out->reads, &out->nreads, (Dep){DEP_STAR, b->mutates, NULL, false});
        for (int i = 0; i < out->nwrites; i++) out->writes[i].scatter = true;
    }
}

void dep_set_free(DepSet *d) {
    free(d->reads);
    free(d->writes);
    *d = (DepSet){0};
}

/* Inductor's MemoryDep normalization (dependencies.py, _RecordLoadStoreInner._normalize), so a
 * dependency prints as in ir_pre_fusion.txt: size-1 loop variables drop out; a variable i and a
 * variable j merge when the index walks them as one (stride_i * size_i == stride_j; both must
 * appear linearly) and so does the loop nest itself (index_prevent_reordering adds the
 * contiguous-strides formula to _simplify_loops: loops merge in loop order only, so a column
 * walk p0 + 256*p1 + 32*p2 over [32, 4, 8] is p0 + 32*c1 over [32, 32], never c0 over [1024]); the survivors are renamed c0, c1, ... in loop order and trailing variables
 * the index does not use are dropped ("MemoryDep('buf0', c0, {c0: 64})" for a row reduction's
 * store). Returns the index; vars/sizes (body->nvars entries) get the kept ranges. */
Expr *dep_normalize(SymCtx *S, Expr *index, const LoopBody *b, Expr **vars, Expr **sizes, int *nv) {
    int n = b ? b->nvars : 0;
    Expr *coef[MI_MAX_DIMS * 2], *size[MI_MAX_DIMS * 2];
    bool alive[MI_MAX_DIMS * 2];
    const char *nm[MI_MAX_DIMS * 2];
    Expr *zero = sym_int(S, 0), *repl[MI_MAX_DIMS * 2];
    *nv = 0;
    if (n > MI_MAX_DIMS * 2) return index;
    for (int i = 0; i < n; i++) {
        size[i] = b->ranges[i];
        nm[i] = b->vars[i]->name;
        int64_t one;
        alive[i] = !(sym_is_int(size[i], &one) && one == 1);
        if (!alive[i]) index = sym_subst(S, index, &nm[i], &zero, 1);
    }
    for (int i = 0; i < n; i++) coef[i] = alive[i] ? sym_coeff(S, index, nm[i]) : NULL;
    Expr *cstride[MI_MAX_DIMS * 2];   /* index_prevent_reordering: the contiguous strides of the loops */
    for (int i = n - 1; i >= 0; i--) cstride[i] = i == n - 1 ? sym_int(S, 1) : sym_mul(S, cstride[i + 1], b->ranges[i + 1]);
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = n - 1; i >= 0 && !changed; i--)
            for (int j = n - 1; j >= 0 && !changed; j--) {
                if (i == j || !alive[i] || !alive[j] || !coef[i] || !coef[j]) continue;
                if (sym_mul(S, coef[i], size[i]) != coef[j] || sym_mul(S, cstride[i], size[i]) != cstride[j]) continue;
                /* c_i*v_i + c_i*size_i*v_j == c_i*v with v = v_i + size_i*v_j over size_i*size_j */
                index = sym_subst(S, index, &nm[j], &zero, 1);
                size[i] = sym_mul(S, size[i], size[j]);
                alive[j] = false;
                changed = true;
            }
    }
    int k = 0;
    const char *from[MI_MAX_DIMS * 2];
    for (int i = 0; i < n; i++) {
        if (!alive[i]) continue;
        char c[16];
        snprintf(c, sizeof c, "c%d", k);
        from[k] = nm[i];
        repl[k] = sym_symbol(S, c);
        sizes[k++] = size[i];
    }
    index = sym_subst(S, index, from, repl, k);
    const char *used[64];
    int nu = sym_free_symbols(index, used, 64);
    while (k > 0) {   /* drop trailing variables the index does not use */
        bool in = false;
        for (int u = 0; u < nu; u++) in |= strcmp(used[u], repl[k - 1]->name) == 0;
        if (in) break;
        k--;
    }
    for (int i = 0; i < k; i++) vars[i] = repl[i];
    *nv = k;
    return index;
}

void dep_print(const Dep *d, const LoopBody *body, SymCtx *S, StrBuf *sb) {
    if (d->kind == DEP_STAR) { sb_printf(sb, "StarDep(name='%s', mode=None)", d->buf->name); return; }
    Expr *vars[MI_MAX_DIMS * 2], *sizes[MI_MAX_DIMS * 2];
    int nv = 0;
    Expr *index = dep_normalize(S, d->index, body, vars, sizes, &nv);
    sb_printf(sb, "MemoryDep('%s', ", d->buf->name);
    sym_str_sb(index, sb);
    sb_put(sb, ", {");
    for (int i = 0; i < nv; i++) {
        if (i) sb_put(sb, ", ");
        sb_printf(sb, "%s: ", vars[i]->name);
        sym_str_sb(sizes[i], sb);
    }
    sb_put(sb, "})");
}

/* Example: x an input, y = x * 2 realized by copy_(x, z)'s mark_buffer_mutated but read by no
 * one -> y.dead; a dead reader's own reads are re-counted (worklist over readers, reverse
 * creation order, as Inductor walks its topologically sorted nodes backwards). */
void ir_mark_dead(IrModule *m) {
    int nb = m->nbufs;
    DepSet *d = mi_xcalloc((size_t)nb + 1, sizeof *d);
    int *nread = mi_xcalloc((size_t)nb + 1, sizeof *nread);
    bool *out = mi_xcalloc((size_t)nb + 1, 1);
    for (int j = 0; j < m->noutputs; j++)
        if (m->outputs[j]) out[m->outputs[j]->id] = true;
    for (int i = 0; i < nb; i++) {
        const Buffer *b = m->bufs[i];
        if (!ir_is_op(b)) continue;
        ir_deps_collect(m, b, &d[i]);
        for (int r = 0; r < d[i].nreads; r++) {
            const Buffer *x = d[i].reads[r].buf;
            bool first = x && x != b;   /* each buffer once per reader, itself not */
            for (int k = 0; first && k < r; k++) first = d[i].reads[k].buf != x;
            if (first) nread[x->id]++;
        }
    }
    for (int i = nb - 1; i >= 0; i--) {
        Buffer *b = m->bufs[i];
        if (!ir_is_op(b) || b->kind != BUF_COMPUTED || b->dead || out[b->id] || b->output_index >= 0 || b->mutates ||
            b->side_effect || b->alias_of || b->extern_owner || nread[b->id] > 0)
            continue;
        b->dead = true;   /* its reads no longer count; readers come after writers, so one pass */
        for (int r = 0; r < d[i].nreads; r++) {
            const Buffer *x = d[i].reads[r].buf;
            bool first = x && x != b;
            for (int k = 0; first && k < r; k++) first = d[i].reads[k].buf != x;
            if (first) nread[x->id]--;
        }
    }
    for (int i = 0; i < nb; i++) dep_set_free(&d[i]);
    free(d);
    free(nread);
    free(out);
}
