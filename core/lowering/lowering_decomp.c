/* lowering_decomp.c — lowering an op through its decomposition, as Inductor does for the ops
 * of its decomposition table (select_decomp_table: addcmul, lerp, linalg_vector_norm, the
 * batch-norm family, ... are decomposed before lowering, not run as extern kernels), and the
 * _foreach_* ops (register_foreach_pointwise / register_foreach_inplace in lowering.py): item
 * k of a foreach result is the plain op on item k of the list arguments, lowered by that op's
 * own row, so each item is a pending pointwise value that fuses like any other.
 *
 * The trick: the op's decomposition (core/ops/decomp_*.c, the one the interpreter runs) is
 * built into a small scratch graph whose placeholders stand for the node's tensor arguments,
 * and that graph is lowered inline with the placeholders taking the arguments' values (as
 * tag_activation_checkpoint's body is). The in-place foreach forms, which reinplace makes
 * only on graph inputs that nothing reads afterwards, then write each item into its input
 * (mutate_to with unsafe_alias: the item's own buffer is the mutation, lw_alias_into_input);
 * the items read the new values from those buffers.
 *   addcmul(s, a, b, value=2)         ->  add(s, mul(mul(a, b), 2)): one pending Pointwise
 *   _foreach_mul.Scalar([a, b], 0.9)  ->  items (mul(a, 0.9), mul(b, 0.9)), pending
 *   _foreach_add_.Scalar([s], 1)      ->  buf0 = s + 1 stored into s (mutates s); item buf0 */
#include "lowering/lowering_impl.h"
#include "fx_passes/functionalize.h"
#include "ops/decomp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scratch graph under construction: outer nodes already given a placeholder. */
typedef struct Scratch { Graph *g; const Node **outer; Node **ph; int n, cap; bool skipped; } Scratch;

/* v as a Value of the scratch graph: node references become placeholders (one per outer
 * node, carrying its meta), size symbols stay symbols, lists are rebuilt item by item. */
static Value scratch_value(Scratch *s, const Value *v) {
    if (v->kind == V_NODE) {
        const Node *x = v->node;
        if (x->is_sym && x->sym_val) { Value e = {.kind = V_SYM}; e.sym = x->sym_val; return e; }
        for (int i = 0; i < s->n; i++)
            if (s->outer[i] == x) return value_node(s->ph[i]);
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 16;
            s->outer = mi_xrealloc(s->outer, sizeof *s->outer * s->cap);
            s->ph = mi_xrealloc(s->ph, sizeof *s->ph * s->cap);
        }
        Node *p = graph_add_node(s->g, N_PLACEHOLDER, x->name, x->name);
        p->meta = x->meta;   /* the arrays stay the outer graph's, which outlives the module */
        p->has_meta = x->has_meta;
        p->annotated = x->annotated;
        s->outer[s->n] = x;
        s->ph[s->n++] = p;
        return value_node(p);
    }
    if (v->kind == V_LIST || v->kind == V_TUPLE) {
        Value *items = mi_xcalloc((size_t)(v->list.n ? v->list.n : 1), sizeof *items);
        for (int k = 0; k < v->list.n; k++) items[k] = scratch_value(s, &v->list.items[k]);
        Value r = v->kind == V_LIST ? value_list(s->g, items, v->list.n) : value_tuple(s->g, items, v->list.n);
        free(items);
        return r;
    }
    return value_copy(s->g, v);
}

/* The decomposition of n as op `target` (its functional form, for an in-place foreach op) in a
 * new scratch graph ending in an output node that returns the results; *s keeps the
 * placeholders' outer nodes. NULL with ctx error. */
static Graph *build_items(Lower *L, const Node *n, const char *functional, Scratch *s) {
    const OpDef *op = op_lookup(functional);
    const DecompDef *d = decomp_find(functional);
    if (!op || !d) { lw_err(L, n, "'%s' has no decomposition to lower", functional); return NULL; }
    s->g = graph_new("foreach");
    s->g->source = L->g->source;
    Value *args = mi_xcalloc((size_t)(n->nargs + 1), sizeof *args);
    Kwarg *kw = mi_xcalloc((size_t)(n->nkwargs + 1), sizeof *kw);
    for (int i = 0; i < n->nargs; i++) args[i] = scratch_value(s, &n->args[i]);
    for (int i = 0; i < n->nkwargs; i++) { kw[i].name = n->kwargs[i].name; kw[i].v = scratch_value(s, &n->kwargs[i].v); }
    Node *call = graph_add_node(s->g, N_CALL_FUNCTION, n->name, functional);
    graph_set_args(s->g, call, args, n->nargs);
    graph_set_kwargs(s->g, call, kw, n->nkwargs);
    call->op = op;
    call->src_line = n->src_line;
    free(args);
    free(kw);
    Value *outs = mi_xcalloc(OP_MAX_OUTS, sizeof *outs);
    int nout = 0;
    DecompB b = {.ctx = L->ctx, .g = s->g, .anchor = call, .n = call};
    int rc = d->fn(&b, outs, &nout);
    if (rc == DECOMP_SKIP) {   /* not for these arguments (repeat_interleave without an int output_size) */
        free(outs);
        graph_free(s->g);
        s->g = NULL;
        s->skipped = true;
        return NULL;
    }
    graph_remove_node(s->g, call);
    if (rc == 0 && !b.failed) {
        Node *o = graph_add_node(s->g, N_OUTPUT, "output", "output");
        Value t = value_tuple(s->g, outs, nout);
        graph_set_args(s->g, o, &t, 1);
    }
    free(outs);
    if (rc != 0 || b.failed) {
        if (!strstr(L->ctx->err.msg, n->name)) {
            char msg[700];
            snprintf(msg, sizeof msg, "%.600s", L->ctx->err.msg);
            lw_err(L, n, "%s", msg);
        }
        graph_free(s->g);
        return NULL;
    }
    for (int i = 0; i < s->g->n; i++) s->g->nodes[i]->src_line = n->src_line;   /* errors point at the foreach line */
    return s->g;
}

/* Lower the scratch graph inline: placeholders take the outer values, every call goes
 * through its own row; items[0..*nitems) receive the output's values. */
static int lower_items(Lower *L, const Node *n, const Scratch *s, IrTBox **items, int *nitems) {
    const Graph *g = s->g;
    Lower S = *L;
    S.g = g;
    S.scratch = true;
    S.vals = mi_xcalloc(g->n ? g->n : 1, sizeof(LVal));
    lw_users_init(&S);
    int rc = 0, k = 0;
    for (int i = 0; i < g->n && rc == 0; i++) {
        const Node *x = g->nodes[i];
        S.cur = x;
        if (x->kind == N_PLACEHOLDER) {
            LVal *src = lw_node_val(L, s->outer[k++]);
            if (!src || src->kind == LV_NONE) rc = lw_err(L, n, "argument '%s' has no value", x->name);
            else S.vals[i] = *src;
        } else if (x->kind == N_CALL_FUNCTION) {
            rc = lw_lower_node(&S, x);
        } else if (x->kind == N_OUTPUT) {
            const Value *r = &x->args[0];
            for (int j = 0; j < r->list.n && rc == 0; j++) {
                if (r->list.items[j].kind == V_NONE) { items[j] = NULL; continue; }   /* an absent tuple item */
                LVal *lv = r->list.items[j].kind == V_NODE ? lw_node_val(&S, r->list.items[j].node) : NULL;
                if (!lv || lv->kind != LV_TBOX) rc = lw_err(L, n, "result %d of its decomposition is not a tensor", j);
                else items[j] = lv->t;
            }
            *nitems = r->list.n;
        }
    }
    free(S.vals);
    lw_users_free(&S);
    L->relaid |= S.relaid;
    L->cur = n;
    return rc;
}

/* Every call of g lowers through a row, or through a decomposition that does (depth-limited):
 * a FallbackKernel has to name a node of the graph the module runs with, which a scratch
 * graph's node is not, so an op whose decomposition would need one is not decomposed. */
static bool fully_lowerable(Lower *L, const Graph *g, int depth) {
    for (int i = 0; i < g->n; i++) {
        const Node *x = g->nodes[i];
        const LoweringDef *d = x->kind == N_CALL_FUNCTION ? lowering_find(x->target) : NULL;
        if (x->kind != N_CALL_FUNCTION || (d && !(d->gpu_only && !lw_gpu_backend(L, x)))) continue;   /* a row that would fall back: not lowerable */
        if (depth >= 8 || !lw_lowers_by_decomposition(x)) return false;
        Scratch s = {0};
        Graph *sub = build_items(L, x, x->target, &s);
        bool ok = sub && fully_lowerable(L, sub, depth + 1);
        if (sub) graph_free(sub);
        free(s.outer);
        free(s.ph);
        if (!ok) return false;
    }
    return true;
}

/* Lower n through the decomposition of `target` into items[0..*nitems) (lw_alloc'd); 1 (and
 * nothing done) when a part of it has no lowering. */
static int lower_through(Lower *L, const Node *n, const char *target, IrTBox ***items, int *nitems) {
    Scratch s = {0};
    Graph *g = build_items(L, n, target, &s);
    if (!g) { free(s.outer); free(s.ph); return s.skipped ? 1 : -1; }
    if (!fully_lowerable(L, g, 0)) { graph_free(g); free(s.outer); free(s.ph); return 1; }
    IrModule *m = L->m;   /* the module keeps the graph: the IR may point at its metas */
    m->scratch = mi_xrealloc(m->scratch, sizeof *m->scratch * (m->nscratch + 1));
    m->scratch[m->nscratch++] = g;
    *items = lw_alloc(L, sizeof(IrTBox *) * OP_MAX_OUTS);
    *nitems = 0;
    int rc = lower_items(L, n, &s, *items, nitems);
    free(s.outer);
    free(s.ph);
    return rc;
}

bool lw_lowers_by_decomposition(const Node *n) {
    const DecompDef *d = n->kind == N_CALL_FUNCTION ? decomp_find(n->target) : NULL;
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    return d && d->inductor && op && !(op->flags & (OPF_INPLACE | OPF_RANDOM));
}

int lw_lower_decomposed(Lower *L, const Node *n) {
    IrTBox **items;
    int nitems;
    int rc = lower_through(L, n, n->target, &items, &nitems);
    if (rc > 0) return lw_fallback(L, n);   /* a part has no lowering: an extern kernel, as before */
    if (rc < 0) return -1;
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    if (nitems == 1 && items[0] && !(op->flags & OPF_TUPLE)) return lw_set_tbox(L, n, items[0]);
    return lw_set_tuple(L, n, items, nitems);
}

/* Ops Inductor lowers by a composition of other lowerings, which is our decomposition of the
 * op (not in Inductor's decomposition table, so lw_lowers_by_decomposition leaves them): glu
 * (lowering.py glu: mul(slice_(x, dim, 0, n), sigmoid(slice_(x, dim, n, 2n))), one Pointwise). */
static int lower_as_composition(Lower *L, const Node *n, int arg) {
    (void)arg;
    if (lw_lower_decomposed(L, n)) return -1;
    LVal *lv = lw_node_val(L, n);
    IrTBox *t = lv && lv->kind == LV_TBOX ? lv->t : NULL;
    if (!t || t->is_view || !t->sb || t->sb->buf) return 0;
    const char **o = NULL;   /* a lowering's origins: the node itself and what its inputs hold */
    int no = 0;
    lw_origins_add(L, &o, &no, lw_short_name(L, n->target));
    for (int i = 0; i < n->nargs; i++)
        if (n->args[i].kind == V_NODE) lw_origins_merge(L, &o, &no, lw_arg_tbox(L, n, i));
    t->origins = t->sb->origins = o;
    t->norigins = t->sb->norigins = no;
    return 0;
}

const LoweringDef lowering_decomp_table[] = {
    {"aten.glu.default", lower_as_composition, 0},
};
const int lowering_decomp_count = sizeof lowering_decomp_table / sizeof lowering_decomp_table[0];

/* Inductor's foreach_ops test for a user: a _foreach_* op lowered item by item (not
 * _foreach_norm, which Inductor decomposes rather than registers). */
static bool is_foreach_user(const Node *w) {
    char b[96];
    bool ip;
    return w->kind == N_CALL_FUNCTION && foreach_plain_op(w->target, b, sizeof b, &ip) && !strstr(w->target, "_foreach_norm");
}

/* make_foreach_pointwise's realize_outputs: the op has no users, is in place, or one of its
 * items is read by something that is not a foreach op (cur_node_has_non_foreach_users: the
 * users of each getitem) -- then every item is realized, and on a backend with the FOREACH
 * feature (the GPU target; the cpp backend has none) registered as one list. */
static bool foreach_realizes_outputs(Lower *L, const Node *n, bool inplace) {
    int i = graph_index_of(L->g, n);
    if (inplace || i < 0 || L->nusers[i] == 0) return true;
    for (int k = 0; k < L->nusers[i]; k++) {
        int j = graph_index_of(L->g, L->users[i][k]);
        for (int q = 0; j >= 0 && q < L->nusers[j]; q++)
            if (!is_foreach_user(L->users[j][q])) return true;
    }
    return false;
}

/* V.graph.register_operation_list: the items' buffers, realized now, as one list; items with
 * a symbolic size are left out (group_foreach_args: use_foreach is false for dynamic args). */
static void register_list(Lower *L, const Node *n, IrTBox **items, int nitems) {
    Buffer **bufs = lw_alloc(L, sizeof(Buffer *) * (size_t)(nitems + 1));
    int nb = 0;
    for (int k = 0; k < nitems; k++) {
        IrTBox *t = items[k];
        bool dyn = false;
        for (int d = 0; t && d < t->ndim; d++) dyn |= sym_has_symbols(t->size[d]);
        if (!t || dyn || t->is_view || !t->sb) continue;
        if (!t->sb->buf && t->sb->fn) lw_realize(L, t->sb, NULL);
        Buffer *b = t->sb->buf;
        if (b && b->kind == BUF_COMPUTED && !b->is_reduction) bufs[nb++] = b;
    }
    if (!nb) return;
    IrModule *m = L->m;
    IrList *nl = lw_alloc(L, sizeof(IrList) * (size_t)(m->nlists + 1));
    if (m->nlists) memcpy(nl, m->lists, sizeof(IrList) * (size_t)m->nlists);
    nl[m->nlists++] = (IrList){bufs, nb, n};
    m->lists = nl;
}

static int lower_foreach(Lower *L, const Node *n, int arg) {
    (void)arg;
    char buf[96], functional[128];
    bool inplace = false;
    if (!foreach_plain_op(n->target, buf, sizeof buf, &inplace)) return lw_err(L, n, "'%s' is not a foreach op Inductor lowers", n->target);
    snprintf(functional, sizeof functional, "%s", n->target);
    if (inplace) {   /* "aten._foreach_add_.List" -> "aten._foreach_add.List" */
        char *dot = strchr(functional + 5, '.');
        char *us = dot ? dot - 1 : functional + strlen(functional) - 1;
        memmove(us, us + 1, strlen(us + 1) + 1);
        if (!functionalize_foreach_is_epilogue(L->g, n))
            return lw_err(L, n, "in-place '%s' on tensors that are not graph inputs, or read after it (run functionalize first)", n->target);
    }
    IrTBox **items;
    int nitems;
    int rc = lower_through(L, n, functional, &items, &nitems);
    if (rc > 0 && !inplace && ir_fallback_ok(n->op ? n->op : op_lookup(n->target))) return lw_fallback(L, n);
    if (rc > 0) return lw_err(L, n, "'%s': the op it applies to each item has no lowering", n->target);
    for (int k = 0; rc == 0 && inplace && k < nitems; k++) {
        LVal *dst = lw_node_val(L, n->args[0].list.items[k].node);
        IrTBox *dt = dst && dst->kind == LV_TBOX ? dst->t : NULL;
        if (!lw_alias_into_input(L, dt, items[k])) rc = lw_mutate_input(L, n, dt, items[k]);
    }
    if (rc == 0 && !L->scratch && L->ctx->target == MI_DEV_CUDA && is_foreach_user(n) && foreach_realizes_outputs(L, n, inplace))
        register_list(L, n, items, nitems);
    return rc ? rc : lw_set_tuple(L, n, items, nitems);
}

/* The row every registry op "aten._foreach_*" lowers through (lowering_find asks here). */
const LoweringDef lowering_foreach_row = {"aten._foreach_*", lower_foreach, 0};
