/* pattern.c — the generic pattern matcher over FX graphs: match a statement list backward
 * from an anchor node (wildcards bind consistently, inner matched nodes must die with the
 * match), build the replacement before the anchor with Inductor-style names and no stack,
 * rewire users and erase the dead match. Also `retarget` rules. Used by user pattern files
 * (pattern_file.c) and by the simple built-in rewrites (pattern_builtin.c). */
#include "fx_passes/pattern.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void patternset_init(PatternSet *ps) { memset(ps, 0, sizeof *ps); }

static void patarg_free(PatArg *a) {
    if (a->kind == PA_LIST) {
        for (int i = 0; i < a->n; i++) patarg_free(&a->items[i]);
        free(a->items);
    }
    if (a->kind == PA_CONST && a->c.kind == V_STR) free((char *)a->c.s);
}

void patargs_free(PatArg *a, int n) {
    for (int k = 0; k < n; k++) patarg_free(&a[k]);
    free(a);
}

static void stmts_free(PatStmt *s, int n) {
    for (int i = 0; i < n; i++) {
        free(s[i].name);
        free(s[i].target);
        patargs_free(s[i].args, s[i].nargs);
    }
    free(s);
}

void patternset_free(PatternSet *ps) {
    for (int i = 0; i < ps->n; i++) {
        Pattern *p = &ps->pats[i];
        free(p->name); free(p->doc); free(p->from); free(p->to);
        stmts_free(p->match, p->nmatch);
        stmts_free(p->repl, p->nrepl);
        for (int k = 0; k < p->nwild; k++) free(p->wild[k]);
        free(p->wild);
    }
    free(ps->pats);
    memset(ps, 0, sizeof *ps);
}

Node *pattern_new_node(PassCtx *pc, Graph *g, Node *anchor, const char *target,
                       const Value *args, int nargs, const Kwarg *kw, int nkw) {
    const OpDef *op = op_lookup(target);
    if (!op && strcmp(target, "operator.getitem") != 0) {
        mi_err(pc->ctx, g->source, 0, 0, "pattern: unsupported op '%s'", target);
        return NULL;
    }
    const char *name = pass_node_name_for(pc, g, target);
    Node *n = graph_insert_before(g, anchor, N_CALL_FUNCTION, name, target);
    graph_set_args(g, n, args, nargs);
    if (nkw) graph_set_kwargs(g, n, kw, nkw);
    n->op = op;
    n->stack = "";
    if (op_infer_node_meta(pc->ctx, g, n) < 0) return NULL;
    return n;
}

/* ---- matching ---- */

typedef struct Match {
    const Pattern *p;
    Value *binds; bool *bound;
    Node **nodes;            /* per match statement */
    StrBuf *why;             /* pattern_why_not: the first reason a match fails (else NULL) */
} Match;

/* Note why matching failed (the first, innermost reason is kept); returns false. */
static bool refuse(Match *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool refuse(Match *m, const char *fmt, ...) {
    if (m->why && !m->why->len) {
        va_list ap;
        va_start(ap, fmt);
        char buf[600];
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        sb_put(m->why, buf);
    }
    return false;
}

static bool num_equal(const Value *a, const Value *b) {
    double x, y;
    if ((a->kind == V_INT || a->kind == V_FLOAT) && (b->kind == V_INT || b->kind == V_FLOAT) &&
        value_as_double(a, &x) && value_as_double(b, &y)) return x == y;
    return value_equal(a, b);
}

static bool match_stmt(Match *m, int si, Node *n);

static bool match_arg(Match *m, const PatArg *pa, const Value *v) {
    switch (pa->kind) {
    case PA_ANY: return true;
    case PA_WILD:
        if (m->bound[pa->ref]) {
            const Value *b = &m->binds[pa->ref];
            bool same = (b->kind == V_NODE || v->kind == V_NODE) ? b->kind == v->kind && b->node == v->node : num_equal(b, v);
            return same || refuse(m, "wildcard %s is bound to %s, but this use is %s", m->p->wild[pa->ref],
                                  b->kind == V_NODE ? b->node->name : "a constant", v->kind == V_NODE ? v->node->name : "another value");
        }
        m->bound[pa->ref] = true;
        m->binds[pa->ref] = *v;
        return true;
    case PA_CONST: return num_equal(&pa->c, v) || refuse(m, "a constant of the pattern differs from the graph's argument");
    case PA_REF:
        return (v->kind == V_NODE || refuse(m, "statement %s needs a node there, the graph has a constant",
                                            m->p->match[pa->ref].name)) && match_stmt(m, pa->ref, v->node);
    case PA_LIST:
        if ((v->kind != V_LIST && v->kind != V_TUPLE) || v->list.n != pa->n)
            return refuse(m, "a list of %d items in the pattern, not in the graph", pa->n);
        for (int i = 0; i < pa->n; i++)
            if (!match_arg(m, &pa->items[i], &v->list.items[i])) return false;
        return true;
    }
    return false;
}

static bool match_stmt(Match *m, int si, Node *n) {
    const PatStmt *s = &m->p->match[si];
    if (m->nodes[si]) return m->nodes[si] == n || refuse(m, "statement %s already matched %s, not %s", s->name, m->nodes[si]->name, n->name);
    if (n->kind != N_CALL_FUNCTION || strcmp(n->target, s->target) != 0)
        return refuse(m, "statement %s = %s(...) does not match node %s, which is %s", s->name, s->target, n->name,
                      n->kind == N_CALL_FUNCTION ? n->target : "not a call");
    if (n->nargs != s->nargs || n->nkwargs != 0)
        return refuse(m, "statement %s takes %d positional args and no kwargs; node %s has %d args, %d kwargs", s->name,
                      s->nargs, n->name, n->nargs, n->nkwargs);
    m->nodes[si] = n;
    for (int i = 0; i < s->nargs; i++)
        if (!match_arg(m, &s->args[i], &n->args[i])) return false;
    return true;
}

static bool device_ok(PatDevice d, Device dev) {
    return d == PDEV_ANY || (d == PDEV_CUDA && dev.kind == DEV_CUDA) || (d == PDEV_CPU && dev.kind == DEV_CPU);
}

static Value build_arg(Graph *g, const PatArg *pa, const Match *m, Node **made) {
    switch (pa->kind) {
    case PA_REF: return value_node(made[pa->ref]);
    case PA_WILD: return m->binds[pa->ref];
    case PA_CONST: return pa->c;
    case PA_LIST: {
        Value *items = mi_xcalloc(pa->n + 1, sizeof *items);
        for (int i = 0; i < pa->n; i++) items[i] = build_arg(g, &pa->items[i], m, made);
        Value v = value_list(g, items, pa->n);
        free(items);
        return v;
    }
    default: return value_none();
    }
}

/* The storage x lives in: follow view ops back to their base. */
static const Node *storage_base(const Node *x) {
    for (int k = 0; k < 256 && x->kind == N_CALL_FUNCTION && x->op && (x->op->flags & OPF_VIEW) &&
                    x->nargs > 0 && x->args[0].kind == V_NODE; k++)
        x = x->args[0].node;
    return x;
}

/* Some in-place op of g (the copy_ epilogue of a mutated input, say) writes x's storage:
 * then x's value is not the same everywhere and a node computing a copy of it must stay. */
static bool storage_mutated(const Graph *g, const Node *x) {
    const Node *b = storage_base(x);
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION || !n->op || !(n->op->flags & OPF_INPLACE)) continue;
        if (n->nargs > 0 && n->args[0].kind == V_NODE && storage_base(n->args[0].node) == b) return true;
    }
    return false;
}

static int apply_one(PassCtx *pc, Graph *g, const Pattern *p) {
    if (!device_ok(p->device, pc->device)) return 0;
    int count = 0;
    if (p->is_retarget) {
        const OpDef *op = op_lookup(p->to);
        for (int i = 0; i < g->n; i++) {
            Node *n = g->nodes[i];
            if (n->kind != N_CALL_FUNCTION || strcmp(n->target, p->from) != 0) continue;
            n->target = arena_strdup(&g->arena, p->to);
            n->op = op;
            pc->cur_match = ++pc->match_seq;
            pass_note(pc, '~', n->name, "pattern %s: %s -> %s", p->name, p->from, p->to);
            pc->cur_match = 0;
            count++;
        }
        return count;
    }
    const PatStmt *anchor_s = &p->match[p->nmatch - 1];
    int n0 = g->n;
    Node **snapshot = mi_xmalloc((n0 + 1) * sizeof *snapshot);
    memcpy(snapshot, g->nodes, n0 * sizeof *snapshot);
    Match m = {p};
    m.binds = mi_xcalloc(p->nwild + 1, sizeof *m.binds);
    m.bound = mi_xcalloc(p->nwild + 1, sizeof *m.bound);
    m.nodes = mi_xcalloc(p->nmatch + 1, sizeof *m.nodes);
    Node **made = mi_xcalloc(p->nrepl + 1, sizeof *made);
    /* single-node patterns that return a wildcard (x*1 -> x) are applied in one batch */
    bool batch = p->nmatch == 1 && p->ret.kind == PA_WILD;
    Node **map = batch ? mi_xcalloc(n0 + 1, sizeof *map) : NULL;
    bool *dead = batch ? mi_xcalloc(n0 + 1, sizeof *dead) : NULL;
    int rc = 0;
    for (int i = 0; i < n0; i++) {
        Node *a = snapshot[i];
        if (a->id < 0 || a->kind != N_CALL_FUNCTION || strcmp(a->target, anchor_s->target) != 0) continue;
        memset(m.bound, 0, (p->nwild + 1) * sizeof *m.bound);
        memset(m.nodes, 0, (p->nmatch + 1) * sizeof *m.nodes);
        if (!match_stmt(&m, p->nmatch - 1, a)) continue;
        bool all = true;
        for (int k = 0; k < p->nmatch; k++) if (!m.nodes[k]) all = false;
        if (!all) continue;
        if (!batch && !g->users_valid) graph_compute_users(g);
        /* inner nodes must die with the match */
        bool ok = true;
        for (int k = 0; k < p->nmatch - 1 && ok; k++) {
            Node *x = m.nodes[k];
            for (int u = 0; u < x->nusers && ok; u++) {
                bool inside = false;
                for (int j = 0; j < p->nmatch; j++) if (m.nodes[j] == x->users[u]) inside = true;
                if (!inside) ok = false;
            }
        }
        if (!ok) continue;
        if (p->check && !p->check(g, a, m.binds)) continue;
        Node *ret = NULL;
        if (p->ret.kind == PA_WILD) {
            const Value *b = &m.binds[p->ret.ref];
            if (b->kind != V_NODE) continue;
            ret = b->node;
            if (!a->has_meta || !ret->has_meta || !meta_equal(&a->meta, &ret->meta)) continue;
            /* a is a fresh tensor; x (or a, through a user) may be written in place later */
            if (storage_mutated(g, ret) || storage_mutated(g, a)) continue;
            if (batch) {
                map[a->id] = ret;
                dead[a->id] = true;
                pc->cur_match = ++pc->match_seq;
                pass_note(pc, '-', a->name, "pattern %s", p->name);
                pc->cur_match = 0;
                count++;
                continue;
            }
        } else {
            pc->cur_match = ++pc->match_seq;
            for (int r = 0; r < p->nrepl; r++) {
                const PatStmt *s = &p->repl[r];
                Value *args = mi_xcalloc(s->nargs + 1, sizeof *args);
                for (int k = 0; k < s->nargs; k++) args[k] = build_arg(g, &s->args[k], &m, made);
                made[r] = pattern_new_node(pc, g, a, s->target, args, s->nargs, NULL, 0);
                free(args);
                if (!made[r]) { rc = -1; pc->cur_match = 0; goto done; }
                pass_note(pc, '+', made[r]->name, "pattern %s", p->name);
            }
            ret = made[p->ret.ref];
        }
        graph_replace_all_uses(g, a, ret);
        if (!pc->cur_match) pc->cur_match = ++pc->match_seq;     /* a wildcard returned, not batched */
        for (int k = p->nmatch - 1; k >= 0; k--) {
            Node *x = m.nodes[k];
            if (x->id < 0) continue;
            bool dup = false;
            for (int j = k + 1; j < p->nmatch; j++) if (m.nodes[j] == x) dup = true;
            if (dup) continue;
            pass_note(pc, '-', x->name, "pattern %s", p->name);
            graph_remove_node(g, x);
        }
        pc->cur_match = 0;
        graph_compute_users(g);
        count++;
    }
done:
    if (batch && count) {
        pu_replace_uses(g, map);
        pu_remove_nodes(g, dead);
    }
    free(map);
    free(dead);
    free(snapshot);
    free(m.binds);
    free(m.bound);
    free(m.nodes);
    free(made);
    return rc < 0 ? -1 : count;
}

/* ---- the driver of Inductor's built-in entries ---- */

static bool anchors_entry(const GraphPatternEntry *e, const Node *n) {
    for (int k = 0; k < 3 && e->anchors[k]; k++)
        if (!strcmp(n->target, e->anchors[k])) return true;
    return false;
}

/* mut[i] = number of mutation ops at positions <= i (Inductor's mutation_region_id). */
static void mutation_regions(const Graph *g, int *mut) {
    int r = 0;
    for (int i = 0; i < g->n; i++) {
        if (pu_is_mutation(g->nodes[i])) r++;
        mut[i] = r;
    }
}

/* A pattern pass rewrote more than MiLimits.pattern_matches times: an error, not a hang. */
static int too_many_matches(PassCtx *pc) {
    char hint[160];
    return mi_errf(pc->ctx, "more than %d pattern rewrites in one pass (%s)", pc->ctx->limits.pattern_matches,
                   mi_limit_hint("pattern_matches", pc->ctx->limits.pattern_matches, hint, sizeof hint));
}

int pattern_entries_apply(PassCtx *pc, Graph *g, const GraphPatternEntry *e, int ne) {
    int n0 = g->n, nc = 0, count = 0;
    Node **cand = mi_xmalloc((n0 + 1) * sizeof *cand);
    for (int i = 0; i < n0; i++) {
        Node *x = g->nodes[i];
        if (x->kind != N_CALL_FUNCTION) continue;
        for (int k = 0; k < ne; k++)
            if (anchors_entry(&e[k], x)) { cand[nc++] = x; break; }
    }
    int *mut = NULL, cap = 0;
    bool regions_valid = false;
    graph_compute_users(g);
    for (int c = nc - 1; c >= 0; c--) {
        Node *a = cand[c];
        for (int k = 0; k < ne; k++) {
            if (a->id < 0) break;                 /* erased by an earlier rewrite */
            if (!anchors_entry(&e[k], a)) continue;
            if (!g->users_valid) graph_compute_users(g);
            PatMatch m;
            memset(&m, 0, sizeof m);
            if (!e[k].match(pc, g, a, &m)) continue;
            if (!regions_valid) {
                if (cap < g->n + 1) { cap = 2 * (g->n + 1); mut = mi_xrealloc(mut, cap * sizeof *mut); }
                mutation_regions(g, mut);
                regions_valid = true;
            }
            bool same = true;
            for (int j = 1; j < m.nnodes; j++) same &= mut[m.nodes[j]->id] == mut[m.nodes[0]->id];
            if (!same) continue;
            pc->cur_match = ++pc->match_seq;     /* the replacement's notes are one match */
            int rc = e[k].replace(pc, g, &m);
            pc->cur_match = 0;
            if (rc == 0) pc->match_seq--;
            if (rc < 0) { free(cand); free(mut); return -1; }
            if (rc > 0) {
                count++;
                regions_valid = false;
                graph_compute_users(g);
                if (count > pc->ctx->limits.pattern_matches) { free(cand); free(mut); return too_many_matches(pc); }
            }
        }
    }
    free(cand);
    free(mut);
    return count;
}

int pattern_apply(PassCtx *pc, Graph *g, const PatternSet *ps) {
    int total = 0;
    for (int i = 0; ps && i < ps->n; i++) {
        int c = apply_one(pc, g, &ps->pats[i]);
        if (c < 0) return -1;
        total += c;
        if (total > pc->ctx->limits.pattern_matches) return too_many_matches(pc);
    }
    return total;
}

/* ---- why not ---- */

int pattern_why_not(MiCtx *ctx, const PatternSet *user, Graph *g, Device dev, const char *pattern,
                    const char *node, StrBuf *out) {
    Node *a = NULL;
    for (int i = 0; i < g->n; i++) if (!strcmp(g->nodes[i]->name, node)) a = g->nodes[i];
    if (!a) return mi_err(ctx, NULL, 0, 0, "no node '%s' in the current graph", node);
    /* a user pattern (the declarative matcher, reason by reason) */
    for (int i = 0; user && i < user->n; i++) {
        const Pattern *p = &user->pats[i];
        if (strcmp(p->name, pattern)) continue;
        if (!device_ok(p->device, dev)) { sb_printf(out, "%s is for another device than the graph's", p->name); return 0; }
        if (p->is_retarget) {
            if (a->kind == N_CALL_FUNCTION && !strcmp(a->target, p->from)) sb_printf(out, "%s matches %s (a %s)", p->name, node, p->from);
            else sb_printf(out, "%s rewrites %s nodes; %s is %s", p->name, p->from, node, a->kind == N_CALL_FUNCTION ? a->target : "not a call");
            return 0;
        }
        Match m = {p};
        StrBuf why;
        sb_init(&why);
        m.why = &why;
        m.binds = mi_xcalloc(p->nwild + 1, sizeof *m.binds);
        m.bound = mi_xcalloc(p->nwild + 1, sizeof *m.bound);
        m.nodes = mi_xcalloc(p->nmatch + 1, sizeof *m.nodes);
        graph_compute_users(g);
        bool okm = match_stmt(&m, p->nmatch - 1, a);
        for (int k = 0; okm && k < p->nmatch - 1; k++) {
            Node *x = m.nodes[k];
            if (!x) { okm = refuse(&m, "statement %s matched no node", p->match[k].name); break; }
            for (int u = 0; u < x->nusers; u++) {
                bool inside = false;
                for (int j = 0; j < p->nmatch; j++) inside |= m.nodes[j] == x->users[u];
                if (!inside) { okm = refuse(&m, "%s (statement %s) has a user outside the match, %s: it would not die with it",
                                            x->name, p->match[k].name, x->users[u]->name); break; }
            }
        }
        if (okm && p->check && !p->check(g, a, m.binds)) okm = refuse(&m, "the pattern's extra check refused");
        if (okm) {
            sb_printf(out, "%s matches at %s: ", p->name, node);
            for (int k = 0; k < p->nmatch; k++) sb_printf(out, "%s%s=%s", k ? ", " : "", p->match[k].name, m.nodes[k]->name);
        } else sb_printf(out, "%s does not match at %s: %s", p->name, node, why.s ? why.s : "no match");
        sb_free(&why);
        free(m.binds); free(m.bound); free(m.nodes);
        return 0;
    }
    /* Inductor's built-in entries (their match functions give yes or no) */
    for (int grp = 1; grp <= 2; grp++) {
        int ne;
        const GraphPatternEntry *e = post_grad_pattern_entries(grp, &ne);
        bool found = false, anchored = false;
        for (int k = 0; k < ne; k++) {
            if (strcmp(e[k].name, pattern)) continue;
            found = true;
            if (a->kind != N_CALL_FUNCTION || !anchors_entry(&e[k], a)) continue;
            anchored = true;
            PassCtx pc = {0};
            pc.ctx = ctx;
            pc.device = dev;
            PatMatch pm;
            memset(&pm, 0, sizeof pm);
            graph_compute_users(g);
            if (e[k].match(&pc, g, a, &pm)) {
                sb_printf(out, "%s (pass_pattern_%d) matches at %s: nodes", pattern, grp, node);
                for (int j = 0; j < pm.nnodes; j++) sb_printf(out, " %s", pm.nodes[j]->name);
                return 0;
            }
        }
        if (found && anchored) {
            sb_printf(out, "%s (pass_pattern_%d) starts at %s but its match refused: the nodes around it do not have the "
                           "pattern's shape, or its extra_check (users, dtypes, devices) did not hold", pattern, grp, node);
            return 0;
        }
        if (found) {
            sb_printf(out, "%s (pass_pattern_%d) starts from", pattern, grp);
            for (int k = 0; k < ne; k++)
                for (int j = 0; !strcmp(e[k].name, pattern) && j < 3 && e[k].anchors[j]; j++) sb_printf(out, " %s", e[k].anchors[j]);
            sb_printf(out, " nodes; %s is %s", node, a->kind == N_CALL_FUNCTION ? a->target : "not a call");
            return 0;
        }
    }
    return mi_err(ctx, NULL, 0, 0, "no pattern '%s' (Inductor's: prepare_softmax, unfuse_bias_add_to_pointwise, addmm, "
                                   "reuse_partial; or a rule of the file given to `patterns`)", pattern);
}
