/* ir_loop_order.c — the loop sizes Inductor gives a C++ (cpu) scheduler node: its
 * SchedulerNode.group, (iteration sizes, reduction sizes), as ComputedBuffer.simplify_and_reorder
 * (ir.py) makes them before any fusion decision. Our lowered bodies keep the tensor's dims as
 * loops; Inductor first reorders each set of loops (_apply_loop_reordering: pick_loop_order over
 * the strides of every store and load) and then merges neighbours the indexes walk as one
 * (_simplify_loops with index_prevent_reordering's contiguous formula). The C++ backend fuses
 * two nodes only by comparing these sizes (cpp.py _why_fuse_nodes, _get_outer_loop_fusion_depth),
 * so the scheduler asks for them (core/scheduler/sched_cpp.c), and `ir` prints them as
 * ir_pre_fusion.txt's group.iteration. Example: a sum over [2, 9] x [16] whose every index
 * walks 16*p1 + 144*p0 as one is ((18,), (16,)); its neighbour reading a transposed input at
 * p1 + 9*p2 + 144*p0 keeps ((2, 9), (16,)), and the two never share a loop in C++. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV (MI_MAX_DIMS * 2)

static bool is_one(const Expr *e) {
    int64_t v;
    return sym_is_int(e, &v) && v == 1;
}

/* f with the named vars replaced (n pairs) */
static Expr *subst(SymCtx *S, Expr *f, const char **nm, Expr **to, int n) { return n ? sym_subst(S, f, nm, to, n) : f; }

/* sizevars._stride_vars(index, [v], support): the other support vars set to 0, then
 * f(v = 1) - f(v = 0). */
static Expr *stride_of(SymCtx *S, Expr *f, const char *v, const char *const *support, int ns) {
    const char *nm[MAXV + 1];
    Expr *to[MAXV + 1];
    int k = 0;
    for (int j = 0; j < ns; j++)
        if (strcmp(support[j], v)) { nm[k] = support[j]; to[k++] = sym_int(S, 0); }
    f = subst(S, f, nm, to, k);
    const char *one[1] = {v};
    Expr *a = sym_int(S, 1), *z = sym_int(S, 0);
    return sym_sub(S, sym_subst(S, f, one, &a, 1), sym_subst(S, f, one, &z, 1));
}

/* an index with every indirect symbol (indirectK) at 0, as stride_hints does */
static Expr *no_indirect(SymCtx *S, Expr *f) {
    const char *used[64];
    int nu = sym_free_symbols(f, used, 64);
    const char *nm[64];
    Expr *to[64];
    int k = 0;
    for (int u = 0; u < nu; u++)
        if (!strncmp(used[u], "indirect", 8) || !strncmp(used[u], "tmp", 3)) { nm[k] = used[u]; to[k++] = sym_int(S, 0); }
    return subst(S, f, nm, to, k);
}

/* scheduler.pick_loop_order's index_cmp over the stride hints sl[addr][dim] (absolute):
 * the dim with the smaller stride in more addresses first (a stride of 0 counts for the
 * other dim); a tie keeps the later dim first. -1 / 0 / 1 as Python's cmp. */
static int index_cmp(int a, int b, int64_t (*sl)[MI_MAX_DIMS * 2], int na, Expr *const *sizes) {
    bool a1 = is_one(sizes[a]), b1 = is_one(sizes[b]);
    if (a1 || b1) return (int)a1 - (int)b1;
    int af = 0, bf = 0;
    for (int r = 0; r < na; r++) {
        af += sl[r][b] == 0 || sl[r][a] < sl[r][b];
        bf += sl[r][a] == 0 || sl[r][b] < sl[r][a];
    }
    if (af > bf) return -1;
    if (bf > af) return 1;
    return (b > a) - (b < a);
}

void ir_pick_loop_sort(int *v, int n, int64_t (*sl)[MI_MAX_DIMS * 2], int na, Expr *const *sizes) {
    for (int d = 0; d < n; d++) v[d] = n - 1 - d;
    if (n < 2) return;
    /* list.sort(key=cmp_to_key(index_cmp)) as CPython sorts a short list (count_run, then a
     * binary insertion sort), so that a comparison that is not transitive orders as in Inductor */
    int run = 2;
    if (index_cmp(v[1], v[0], sl, na, sizes) < 0) {   /* strictly descending run: reversed */
        while (run < n && index_cmp(v[run], v[run - 1], sl, na, sizes) < 0) run++;
        for (int i = 0, j = run - 1; i < j; i++, j--) { int t = v[i]; v[i] = v[j]; v[j] = t; }
    } else
        while (run < n && index_cmp(v[run], v[run - 1], sl, na, sizes) >= 0) run++;
    for (int s = run; s < n; s++) {
        int pivot = v[s], l = 0, r = s;
        while (l < r) {
            int p = l + ((r - l) >> 1);
            if (index_cmp(pivot, v[p], sl, na, sizes) < 0) r = p;
            else l = p + 1;
        }
        memmove(v + l + 1, v + l, sizeof(int) * (size_t)(s - l));
        v[l] = pivot;
    }
}

/* One of simplify_and_reorder's two calls: the vars [from, to) of b (iteration or reduction
 * vars), size-1 ones squeezed out. Reorders them by pick_loop_order over the stores' and
 * loads' strides, then merges (_simplify_loops_impl: pairs (i, j) from the innermost, i the
 * inner, while stride_k[i] * size[i] == stride_k[j] and the sound substitution test hold for
 * every index formula and the contiguous one). Writes the sizes outer to inner. */
static int order_and_merge(SymCtx *S, const LoopBody *b, int from, int to, Expr **out) {
    const char *all[MAXV];
    int nall = 0, x[MAXV], n = 0;
    const char *sq[MAXV];
    Expr *zero[MAXV];
    int nsq = 0;
    for (int v = 0; v < b->nvars && v < MAXV; v++) {
        if (is_one(b->ranges[v])) { sq[nsq] = b->vars[v]->name; zero[nsq++] = sym_int(S, 0); continue; }
        all[nall++] = b->vars[v]->name;
        if (v >= from && v < to) x[n++] = v;
    }
    if (n == 0) return 0;
    /* Inductor's default loops walk the dims in their logical order (get_default_sizes_body);
     * ours may follow the layout (by_layout): start from the dim order */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && b->dim_of_var[x[j]] < b->dim_of_var[x[j - 1]]; j--) { int t = x[j]; x[j] = x[j - 1]; x[j - 1] = t; }
    /* the memory addresses: stores first, then loads (ComputedBuffer.simplify_and_reorder) */
    int naddr = 0;
    for (int i = 0; i < b->nops; i++)
        naddr += b->ops[i].kind == LOP_LOAD || b->ops[i].kind == LOP_STORE || b->ops[i].kind == LOP_STORE_REDUCTION;
    int64_t (*sl)[MAXV] = mi_xcalloc((size_t)naddr + 1, sizeof *sl);
    bool hints = true;
    int r = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < b->nops; i++) {
            LoopOpKind k = b->ops[i].kind;
            if (pass == 0 ? !(k == LOP_STORE || k == LOP_STORE_REDUCTION) : k != LOP_LOAD) continue;
            Expr *f = no_indirect(S, subst(S, b->indexes[b->ops[i].index], sq, zero, nsq));
            for (int d = 0; d < n; d++) {
                int64_t st;
                if (!sym_is_int(stride_of(S, f, b->vars[x[d]]->name, all, nall), &st)) { hints = false; st = 0; }
                sl[r][d] = st < 0 ? -st : st;
            }
            r++;
        }
    Expr *sizes[MAXV];
    for (int d = 0; d < n; d++) sizes[d] = b->ranges[x[d]];
    int order[MAXV];
    if (hints) ir_pick_loop_sort(order, n, sl, naddr, sizes);
    else for (int d = 0; d < n; d++) order[d] = n - 1 - d;   /* symbolic strides: Inductor would use hints we lack */
    free(sl);
    /* loops outer to inner: reversed(pick_loop_order) */
    const char *xv[MAXV];
    Expr *sz[MAXV];
    for (int d = 0; d < n; d++) { xv[d] = b->vars[x[order[n - 1 - d]]]->name; sz[d] = sizes[order[n - 1 - d]]; }
    /* index formulas: the body's, then the contiguous one over the reordered loops */
    int nf = b->nindexes + 1;
    Expr **fs = mi_xmalloc(sizeof(Expr *) * (size_t)(nf + 1));
    for (int k = 0; k < b->nindexes; k++) fs[k] = subst(S, b->indexes[k], sq, zero, nsq);
    Expr *cont = sym_int(S, 0), *acc = sym_int(S, 1);
    for (int d = n - 1; d >= 0; d--) { cont = sym_add(S, cont, sym_mul(S, acc, sym_symbol(S, xv[d]))); acc = sym_mul(S, acc, sz[d]); }
    fs[nf - 1] = cont;
    Expr *(*st)[MAXV] = mi_xmalloc(sizeof *st * (size_t)(nf + 1));
    for (int k = 0; k < nf; k++)
        for (int d = 0; d < n; d++) st[k][d] = stride_of(S, fs[k], xv[d], xv, n);
    bool alive[MAXV];
    for (int d = 0; d < n; d++) alive[d] = true;
    Expr *m1 = sym_symbol(S, "_merge_tester1"), *m2 = sym_symbol(S, "_merge_tester2");
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = n - 1; i >= 0; i--)
            for (int j = n - 1; j >= 0; j--) {
                if (i == j || !alive[i] || !alive[j]) continue;
                bool can = true;
                for (int k = 0; k < nf && can; k++) {
                    if (sym_mul(S, st[k][i], sz[i]) != st[k][j]) { can = false; break; }
                    const char *nm[2] = {xv[i], xv[j]};
                    Expr *r1[2] = {sym_mul(S, m1, sz[i]), m2}, *r2[2] = {sym_int(S, 0), sym_add(S, m1, m2)};
                    can = sym_subst(S, fs[k], nm, r1, 2) == sym_subst(S, fs[k], nm, r2, 2);
                }
                if (!can) continue;
                changed = true;
                sz[i] = sym_mul(S, sz[i], sz[j]);
                alive[j] = false;
            }
    }
    int k = 0;
    for (int d = 0; d < n; d++) if (alive[d]) out[k++] = sz[d];
    free(st);
    free(fs);
    return k;
}

bool ir_cpp_group(SymCtx *S, const LoopBody *b, IrGroup *g) {
    memset(g, 0, sizeof *g);
    if (!b || b->nvars > MAXV) return false;
    g->nv = order_and_merge(S, b, 0, b->npoint, g->v);
    g->nr = order_and_merge(S, b, b->npoint, b->nvars, g->r);
    return true;
}

bool ir_group_eq(const Expr *const *a, int na, const Expr *const *b, int nb) {
    if (na != nb) return false;
    for (int i = 0; i < na; i++) if (a[i] != b[i]) return false;
    return true;
}

void ir_group_print(const IrGroup *g, StrBuf *sb) {
    sb_put(sb, "((");
    for (int i = 0; i < g->nv; i++) { if (i) sb_put(sb, ", "); sym_str_sb(g->v[i], sb); }
    sb_put(sb, g->nv == 1 ? ",), (" : "), (");
    for (int i = 0; i < g->nr; i++) { if (i) sb_put(sb, ", "); sym_str_sb(g->r[i], sb); }
    sb_put(sb, g->nr == 1 ? ",))" : "))");
}
