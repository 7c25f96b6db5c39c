/* graph_random.c — build a random valid ATen graph from a seed (see graph_random.h).
 *
 * The generator keeps no table of shapes of its own: it proposes a call (an op from the
 * registry with arguments drawn from the nodes built so far), asks the registry to infer its
 * meta, and keeps it only when inference succeeds. Proposals are biased towards success
 * (binary operands chosen broadcast-compatible, dims in range) so graphs come out long. */
#include "graph_random.h"
#include "ops/ops.h"

#include <stdio.h>
#include <string.h>

typedef struct Gen {
    MiCtx *ctx;
    Graph *g;
    const RandomGraphOpts *o;
    uint64_t rng;
    int base_rank;
    int64_t base[8];
} Gen;

/* splitmix64 */
static uint64_t rnext(Gen *G) {
    uint64_t z = (G->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int rint_(Gen *G, int n) { return n <= 0 ? 0 : (int)(rnext(G) % (uint64_t)n); }
static bool coin(Gen *G, int percent) { return rint_(G, 100) < percent; }

void graph_random_default_opts(RandomGraphOpts *o) {
    memset(o, 0, sizeof *o);
    o->max_inputs = 3;
    o->max_calls = 12;
    o->max_rank = 3;
    o->max_dim = 6;
    o->max_outputs = 3;
    o->cuda_percent = 25;
    o->symbolic_percent = 25;
    o->views = o->reductions = o->mutations = o->view_mutations = o->risky_math = true;
}

/* ---- looking at what we have ---- */

/* Value of a size expression with every symbol at its hint RG_HINT (the value the
 * interpreter's random inputs give unbound symbols); -1 when not computable. */
#define RG_HINT 8
static bool hint_eval(const Expr *e, int64_t *out) {
    int64_t a, b, c;
    switch (e->kind) {
    case EX_INT: *out = e->ival; return true;
    case EX_SYM: *out = RG_HINT; return true;
    case EX_ADD: case EX_MUL: {
        int64_t acc = e->kind == EX_ADD ? 0 : 1;
        for (int i = 0; i < e->n; i++) {
            if (!hint_eval(e->args[i], &a)) return false;
            acc = e->kind == EX_ADD ? acc + a : acc * a;
        }
        *out = acc;
        return true;
    }
    case EX_FLOORDIV:
        if (!hint_eval(e->args[0], &a) || !hint_eval(e->args[1], &b) || a < 0 || b <= 0) return false;
        *out = a / b;
        return true;
    case EX_MODIDX:
        if (!hint_eval(e->args[0], &a) || !hint_eval(e->args[1], &b) || !hint_eval(e->args[2], &c) ||
            a < 0 || b <= 0 || c <= 0) return false;
        *out = (a / b) % c;
        return true;
    default: return false;
    }
}
static int64_t hint_of(const Expr *e) {
    int64_t v;
    return hint_eval(e, &v) ? v : -1;
}

/* Sizes of a tensor node (symbols at their hint); -1 when not a tensor. */
static int sizes_of(const Node *n, int64_t *sz) {
    if (!n->has_meta || n->is_sym || n->meta.ndim > 8) return -1;
    for (int i = 0; i < n->meta.ndim; i++)
        if (!sym_is_int(n->meta.size[i], &sz[i]) && (sz[i] = hint_of(n->meta.size[i])) < 0) return -1;
    return n->meta.ndim;
}

static bool has_symbolic_size(const Node *n) {
    for (int i = 0; i < n->meta.ndim; i++)
        if (sym_has_symbols(n->meta.size[i])) return true;
    return false;
}

static int64_t numel_of(const Node *n) {
    int64_t sz[8], p = 1;
    int r = sizes_of(n, sz);
    for (int i = 0; i < r; i++) p *= sz[i];
    return r < 0 ? -1 : p;
}

static bool is_float(const Node *n) { return n->has_meta && (n->meta.dtype == DT_F32 || n->meta.dtype == DT_F64); }
static bool is_bool(const Node *n) { return n->has_meta && n->meta.dtype == DT_BOOL; }
static bool is_tensor(const Node *n) { int64_t sz[8]; return sizes_of(n, sz) >= 0; }

static bool is_view_node(const Node *n) {
    return n->kind == N_CALL_FUNCTION && n->op && (n->op->flags & (OPF_VIEW | OPF_INPLACE));
}

/* Strides equal the contiguous ones (a mutation target must own its memory densely). */
static bool is_dense(const Node *n) {
    int64_t sz[8], want = 1;
    int r = sizes_of(n, sz);
    if (r < 0) return false;
    for (int i = r - 1; i >= 0; i--) {
        int64_t st;
        if (!sym_is_int(n->meta.stride[i], &st) && (st = hint_of(n->meta.stride[i])) < 0) return false;
        if (sz[i] != 1 && st != want) return false;
        want *= sz[i];
    }
    return true;
}

typedef bool (*NodePred)(const Node *);

static Node *pick(Gen *G, NodePred pred) {
    Node *cand[512];
    int nc = 0;
    for (int i = 0; i < G->g->n && nc < 512; i++) {
        Node *n = G->g->nodes[i];
        if ((n->kind == N_PLACEHOLDER || n->kind == N_CALL_FUNCTION) && is_tensor(n) && (!pred || pred(n)))
            cand[nc++] = n;
    }
    if (!nc) return NULL;
    /* favour recent nodes so graphs grow deep, not only wide */
    if (nc > 2 && coin(G, 50)) return cand[nc - 1 - rint_(G, nc < 3 ? nc : 3)];
    return cand[rint_(G, nc)];
}

/* b broadcasts with a; when into_a, the result shape must be a's (for in-place ops). */
static bool broadcasts(const Node *a, const Node *b, bool into_a) {
    int64_t sa[8], sb[8];
    int ra = sizes_of(a, sa), rb = sizes_of(b, sb);
    if (ra < 0 || rb < 0) return false;
    if (into_a && rb > ra) return false;
    for (int i = 1; i <= ra && i <= rb; i++) {
        int64_t x = sa[ra - i], y = sb[rb - i];
        if (x != y && x != 1 && y != 1) return false;
        if (into_a && x == 1 && y != 1) return false;
    }
    return true;
}

static Node *pick_partner(Gen *G, const Node *a, NodePred pred, bool into_a) {
    Node *cand[512];
    int nc = 0;
    for (int i = 0; i < G->g->n && nc < 512; i++) {
        Node *n = G->g->nodes[i];
        if ((n->kind == N_PLACEHOLDER || n->kind == N_CALL_FUNCTION) && is_tensor(n) &&
            (!pred || pred(n)) && broadcasts(a, n, into_a))
            cand[nc++] = n;
    }
    return nc ? cand[rint_(G, nc)] : NULL;
}

/* ---- emitting a call ---- */

/* FX's node name for a target: "aten.add.Tensor" -> "add", "aten.add_.Tensor" -> "add_". */
static void base_name(const char *target, char *buf, size_t n) {
    const char *p = strchr(target, '.');
    p = p ? p + 1 : target;
    const char *e = strchr(p, '.');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len >= n) len = n - 1;
    memcpy(buf, p, len);
    buf[len] = 0;
}

static Node *emit(Gen *G, const char *target, const Value *args, int nargs, const Kwarg *kw, int nkw) {
    const OpDef *op = op_lookup(target);
    if (!op) return NULL;
    char base[64];
    base_name(target, base, sizeof base);
    Graph *g = G->g;
    Node *n = graph_add_node(g, N_CALL_FUNCTION, graph_unique_name(g, base), target);
    graph_set_args(g, n, args, nargs);
    if (nkw) graph_set_kwargs(g, n, kw, nkw);
    n->op = op;
    int64_t numel;
    if (op_infer_node_meta(G->ctx, g, n) < 0 || !n->has_meta || (numel = numel_of(n)) < 0 ||
        numel > 4096 || n->meta.ndim > 4) {
        graph_remove_node(g, n);
        mi_clear_err(G->ctx);
        return NULL;
    }
    return n;
}

static Node *emit1(Gen *G, const char *t, Value a) { return emit(G, t, &a, 1, NULL, 0); }
static Node *emit2(Gen *G, const char *t, Value a, Value b) {
    Value v[2] = {a, b};
    return emit(G, t, v, 2, NULL, 0);
}
static Node *emit3(Gen *G, const char *t, Value a, Value b, Value c) {
    Value v[3] = {a, b, c};
    return emit(G, t, v, 3, NULL, 0);
}

static Value int_list(Gen *G, const int64_t *xs, int n) {
    Value items[8];
    for (int i = 0; i < n && i < 8; i++) items[i] = value_int(xs[i]);
    return value_list(G->g, items, n);
}

static double pick_scalar(Gen *G) {
    static const double vals[] = {0.5, 2.0, -1.5, 3.0, 0.1, -0.25, 1.0, 0.0};
    return vals[rint_(G, (int)(sizeof vals / sizeof *vals))];
}

/* ---- proposal kinds ---- */

static Node *gen_unary(Gen *G) {
    static const char *safe[] = {
        "aten.relu.default", "aten.neg.default", "aten.abs.default", "aten.sin.default",
        "aten.cos.default", "aten.exp.default", "aten.tanh.default", "aten.sigmoid.default",
        "aten.floor.default", "aten.ceil.default", "aten.gelu.default", "aten.silu.default",
        "aten.erf.default", "aten.clone.default", "aten.sign.default", "aten.trunc.default",
        "aten.hardswish.default", "aten.hardsigmoid.default", "aten.mish.default",
        "aten.softplus.default", "aten.elu.default", "aten.atan.default", "aten.sinh.default",
        "aten.asinh.default", "aten.exp2.default", "aten.erfc.default", "aten.frac.default",
    };
    static const char *risky[] = {
        "aten.log.default", "aten.sqrt.default", "aten.rsqrt.default", "aten.reciprocal.default",
        "aten.acos.default", "aten.asin.default", "aten.lgamma.default", "aten.tan.default",
        "aten.log2.default", "aten.log10.default", "aten.acosh.default", "aten.atanh.default", "aten.cosh.default",
    };
    Node *x = pick(G, is_float);
    if (!x) return NULL;
    const char *t = G->o->risky_math && coin(G, 20) ? risky[rint_(G, (int)(sizeof risky / sizeof *risky))]
                                                    : safe[rint_(G, (int)(sizeof safe / sizeof *safe))];
    return emit1(G, t, value_node(x));
}

static Node *gen_binary(Gen *G) {
    static const char *ops[] = {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
                                "aten.maximum.default", "aten.minimum.default", "aten.div.Tensor"};
    static const char *more[] = {"aten.atan2.default", "aten.copysign.Tensor", "aten.hypot.default",
                                 "aten.fmax.default", "aten.fmin.default", "aten.nextafter.default"};
    Node *a = pick(G, is_float);
    if (!a) return NULL;
    Node *b = pick_partner(G, a, is_float, false);
    if (!b) return NULL;
    if (coin(G, 15)) return emit2(G, more[rint_(G, 6)], value_node(a), value_node(b));
    if (coin(G, 8)) {   /* div with a rounding mode (floor / trunc of the quotient) */
        Kwarg kw = {"rounding_mode", value_str(G->g, coin(G, 50) ? "floor" : "trunc")};
        Value v[2] = {value_node(a), value_node(b)};
        return emit(G, "aten.div.Tensor_mode", v, 2, &kw, 1);
    }
    int k = rint_(G, G->o->risky_math ? 6 : 5);
    if (k == 0 && coin(G, 20)) {
        Kwarg kw = {"alpha", value_float(pick_scalar(G))};
        Value v[2] = {value_node(a), value_node(b)};
        return emit(G, ops[k], v, 2, &kw, 1);
    }
    return emit2(G, ops[k], value_node(a), value_node(b));
}

static Node *gen_scalar(Gen *G) {
    Node *x = pick(G, is_float);
    if (!x) return NULL;
    Value vx = value_node(x);
    double s = pick_scalar(G);
    switch (rint_(G, 10)) {
    case 0: return emit2(G, "aten.add.Tensor", vx, value_float(s));
    case 1: return emit2(G, "aten.mul.Tensor", vx, value_float(s));
    case 2: return emit2(G, "aten.sub.Tensor", vx, value_int(rint_(G, 5) - 2));
    case 3: return emit2(G, "aten.div.Tensor", vx, value_float(s == 0.0 ? 4.0 : s));
    case 4: return emit2(G, "aten.pow.Tensor_Scalar", vx, value_int(2 + rint_(G, 2)));
    case 5: return emit2(G, "aten.clamp_min.default", vx, value_float(s));
    case 6: return emit2(G, "aten.clamp_max.default", vx, value_float(s));
    case 7: return emit3(G, "aten.clamp.default", vx, value_float(-0.5), value_float(0.5));
    case 8: return emit2(G, "aten.leaky_relu.default", vx, value_float(0.2));
    default: return emit2(G, "aten.rsub.Scalar", vx, value_float(s));
    }
}

static Node *gen_compare(Gen *G) {
    static const char *cmp[] = {"aten.gt.Tensor", "aten.lt.Tensor", "aten.ge.Tensor", "aten.le.Tensor"};
    Node *c = NULL;
    if (coin(G, 60) || !(c = pick(G, is_bool))) {
        Node *a = pick(G, is_float);
        Node *b = a ? pick_partner(G, a, is_float, false) : NULL;
        if (!b) return NULL;
        c = emit2(G, cmp[rint_(G, 4)], value_node(a), value_node(b));
        if (!c || coin(G, 30)) return c;
    }
    if (coin(G, 15)) return emit1(G, "aten.logical_not.default", value_node(c));
    if (coin(G, 15)) {   /* bitwise ops of bools (FallbackKernels) */
        static const char *bw[] = {"aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor", "aten.bitwise_xor.Tensor"};
        Node *c2 = pick_partner(G, c, is_bool, false);
        if (!c2 || coin(G, 25)) return emit1(G, "aten.bitwise_not.default", value_node(c));
        return emit2(G, bw[rint_(G, 3)], value_node(c), value_node(c2));
    }
    Node *a = pick_partner(G, c, is_float, false);
    if (!a) return NULL;
    if (coin(G, 30))
        return emit3(G, "aten.masked_fill.Scalar", value_node(a), value_node(c), value_float(pick_scalar(G)));
    Node *b = pick_partner(G, a, is_float, false);
    if (!b) return NULL;
    return emit3(G, "aten.where.self", value_node(c), value_node(a), value_node(b));
}

static Node *gen_reduction(Gen *G) {
    Node *x = pick(G, is_float);
    int64_t sz[8];
    int r = x ? sizes_of(x, sz) : -1;
    if (r < 1) return NULL;
    int64_t d = rint_(G, r);
    if (coin(G, 25)) d -= r;                      /* negative dims too */
    Value vx = value_node(x), vd = int_list(G, &d, 1), kd = value_bool(coin(G, 50));
    switch (rint_(G, 9)) {
    case 0: return emit3(G, "aten.sum.dim_IntList", vx, vd, kd);
    case 1: return emit3(G, "aten.mean.dim", vx, vd, kd);
    case 2: return emit3(G, "aten.amax.default", vx, vd, kd);
    case 3: return emit3(G, "aten.amin.default", vx, vd, kd);
    case 4: return emit1(G, "aten.sum.default", vx);
    case 5:   /* argmax / argmin over a dim, or of the flattened tensor (no dim) */
        if (coin(G, 30)) return emit1(G, coin(G, 50) ? "aten.argmax.default" : "aten.argmin.default", vx);
        return emit3(G, "aten.argmax.default", vx, value_int(d), kd);
    case 6: return emit3(G, "aten.softmax.int", vx, value_int(d), value_bool(false));
    case 7: return emit3(G, "aten.log_softmax.int", vx, value_int(d), value_bool(false));
    default: {
        if (r < 2) return emit3(G, "aten.sum.dim_IntList", vx, vd, kd);
        int64_t two[2] = {0, r - 1};
        return emit3(G, "aten.sum.dim_IntList", vx, int_list(G, two, 2), kd);
    }
    }
}

static Node *gen_view(Gen *G) {
    Node *x = pick(G, is_tensor);
    int64_t sz[8];
    int r = x ? sizes_of(x, sz) : -1;
    if (r < 0) return NULL;
    Value vx = value_node(x);
    int64_t sh[8];
    switch (rint_(G, 10)) {
    case 0: {                                                  /* permute */
        if (r < 2) return NULL;
        int64_t p[8];
        for (int i = 0; i < r; i++) p[i] = i;
        for (int i = r - 1; i > 0; i--) { int j = rint_(G, i + 1); int64_t t = p[i]; p[i] = p[j]; p[j] = t; }
        return emit2(G, "aten.permute.default", vx, int_list(G, p, r));
    }
    case 1:
        if (r < 2) return NULL;
        return emit3(G, "aten.transpose.int", vx, value_int(rint_(G, r)), value_int(rint_(G, r)));
    case 2: return emit2(G, "aten.unsqueeze.default", vx, value_int(rint_(G, r + 1)));
    case 3: {                                                  /* squeeze a size-1 dim */
        for (int i = 0; i < r; i++)
            if (sz[i] == 1) return emit2(G, "aten.squeeze.dim", vx, value_int(i));
        return NULL;
    }
    case 4: case 5: {                                          /* view / reshape */
        int n = 0;
        if (has_symbolic_size(x)) {                            /* sizes would need SymInt nodes */
            sh[0] = -1;
            return emit2(G, is_dense(x) ? "aten.view.default" : "aten.reshape.default", vx, int_list(G, sh, 1));
        }
        int64_t numel = numel_of(x);
        int how = rint_(G, 3);
        if (how == 0 || r < 2) { sh[n++] = coin(G, 50) ? numel : -1; }
        else if (how == 1) {                                   /* merge two adjacent dims */
            int i = rint_(G, r - 1);
            for (int k = 0; k < r; k++) {
                if (k == i) { sh[n++] = sz[k] * sz[k + 1]; k++; }
                else sh[n++] = sz[k];
            }
        } else {                                               /* split a dim */
            int i = rint_(G, r);
            for (int k = 0; k < r; k++) {
                if (k == i && sz[k] % 2 == 0 && r < 4) { sh[n++] = 2; sh[n++] = sz[k] / 2; }
                else sh[n++] = sz[k];
            }
        }
        bool contig = is_dense(x);
        const char *t = contig && coin(G, 70) ? "aten.view.default" : "aten.reshape.default";
        return emit2(G, t, vx, int_list(G, sh, n));
    }
    case 6: {                                                  /* slice */
        if (r < 1) return NULL;
        int d = rint_(G, r);
        if (sz[d] < 2) return NULL;
        int64_t start = rint_(G, (int)sz[d]), end = start + 1 + rint_(G, (int)(sz[d] - start));
        if (coin(G, 20) || sym_has_symbols(x->meta.size[d])) end = INT64_MAX;   /* to the end */
        if (coin(G, 25)) {
            Value v[5] = {vx, value_int(d), value_int(start), value_int(end), value_int(2)};
            return emit(G, "aten.slice.Tensor", v, 5, NULL, 0);
        }
        Value v[4] = {vx, value_int(d), value_int(start), value_int(end)};
        return emit(G, "aten.slice.Tensor", v, 4, NULL, 0);
    }
    case 7: {                                                  /* select */
        if (r < 1) return NULL;
        int d = rint_(G, r);
        int64_t i = rint_(G, (int)sz[d]);
        if (coin(G, 20)) i -= sz[d];
        return emit3(G, "aten.select.int", vx, value_int(d), value_int(i));
    }
    case 8: {                                                  /* expand size-1 dims */
        int n = 0;
        if (r < 4 && coin(G, 30)) sh[n++] = 2;
        bool any = n > 0;
        for (int k = 0; k < r; k++) {
            if (sz[k] == 1 && coin(G, 70)) { sh[n++] = 2 + rint_(G, 3); any = true; }
            else sh[n++] = coin(G, 20) || sym_has_symbols(x->meta.size[k]) ? -1 : sz[k];
        }
        if (!any) return NULL;
        return emit2(G, "aten.expand.default", vx, int_list(G, sh, n));
    }
    default:
        if (r == 2) return emit1(G, "aten.t.default", vx);
        return emit1(G, "aten.alias.default", vx);
    }
}

/* A mutation target: an f32 tensor that owns its memory (input or fresh result), or — with
 * view_mutations — a slice/select view of one. */
static bool mut_target(const Node *n) {
    return n->has_meta && n->meta.dtype == DT_F32 && !is_view_node(n) && is_dense(n);
}

static Node *gen_mutation(Gen *G) {
    Node *t = pick(G, mut_target);
    if (!t) return NULL;
    if (G->o->view_mutations && t->kind == N_CALL_FUNCTION && coin(G, 30)) {
        int64_t sz[8];
        int r = sizes_of(t, sz);
        if (r >= 1) {
            int d = rint_(G, r);
            Node *v = NULL;
            if (sz[d] >= 2 && coin(G, 60)) {
                Value a[4] = {value_node(t), value_int(d), value_int(1), value_int(sz[d])};
                v = emit(G, "aten.slice.Tensor", a, 4, NULL, 0);
            } else {
                v = emit3(G, "aten.select.int", value_node(t), value_int(d), value_int(rint_(G, (int)sz[d])));
            }
            if (v) t = v;
        }
    }
    Value vt = value_node(t);
    switch (rint_(G, 8)) {
    case 0: case 1: case 2: {
        static const char *ops[] = {"aten.add_.Tensor", "aten.mul_.Tensor", "aten.copy_.default"};
        Node *y = pick_partner(G, t, is_float, true);
        if (!y) return NULL;
        return emit2(G, ops[rint_(G, 3)], vt, value_node(y));
    }
    case 3: return emit1(G, "aten.relu_.default", vt);
    case 4: return emit1(G, "aten.sigmoid_.default", vt);
    case 5: return emit2(G, "aten.mul_.Scalar", vt, value_float(pick_scalar(G)));
    case 6: return emit2(G, "aten.clamp_min_.default", vt, value_float(0.0));
    default: return emit2(G, "aten.fill_.Scalar", vt, value_float(pick_scalar(G)));
    }
}

static bool is_float2d(const Node *n) { return is_float(n) && n->meta.ndim == 2; }

/* mm / addmm (extern kernels; pattern passes rewrite them): a [m, k] @ b [k, n] */
static Node *gen_matmul(Gen *G) {
    Node *a = pick(G, is_float2d);
    int64_t sa[8], sb[8];
    if (!a || sizes_of(a, sa) != 2) return NULL;
    Node *b = NULL;
    for (int i = 0; i < G->g->n && !b; i++) {
        Node *c = G->g->nodes[i];
        if (is_float2d(c) && c->meta.dtype == a->meta.dtype && sizes_of(c, sb) == 2 && sb[0] == sa[1] && coin(G, 60)) b = c;
    }
    if (!b) {                                              /* a @ a.t() */
        b = emit1(G, "aten.t.default", value_node(a));
        if (!b || sizes_of(b, sb) != 2) return NULL;
    }
    Node *mm = NULL;
    if (coin(G, 40)) {
        Node *bias = pick(G, is_float);
        int64_t sbias[8];
        int rb = bias ? sizes_of(bias, sbias) : -1;
        if (!(rb == 1 && sbias[0] == sb[1] && bias->meta.dtype == a->meta.dtype)) {
            int64_t zero = 0;                              /* a bias made from b: sum over rows */
            bias = emit3(G, "aten.sum.dim_IntList", value_node(b), int_list(G, &zero, 1), value_bool(false));
        }
        if (bias && coin(G, 30)) {   /* beta * bias + alpha * (a @ b) */
            Value args[3] = {value_node(bias), value_node(a), value_node(b)};
            Kwarg kw[2] = {{"beta", value_float(coin(G, 30) ? 0.0 : 0.5)}, {"alpha", value_float(-2.0)}};
            mm = emit(G, "aten.addmm.default", args, 3, kw, 2);
        } else if (bias) mm = emit3(G, "aten.addmm.default", value_node(bias), value_node(a), value_node(b));
        if (mm && coin(G, 60)) return emit1(G, "aten.relu.default", value_node(mm));   /* epilogue */
    }
    return mm ? mm : emit2(G, "aten.mm.default", value_node(a), value_node(b));
}

/* Decomposed softmax as it appears in post-grad graphs (the cuda pattern pass rewrites it):
 * amax(x, [d], True); sub; exp; sum(., [d], True); div. */
static Node *gen_softmax_decomposed(Gen *G) {
    Node *x = pick(G, is_float);
    int64_t sz[8];
    int r = x ? sizes_of(x, sz) : -1;
    if (r < 1) return NULL;
    int64_t d = rint_(G, r);
    Node *m = emit3(G, "aten.amax.default", value_node(x), int_list(G, &d, 1), value_bool(true));
    Node *s = m ? emit2(G, "aten.sub.Tensor", value_node(x), value_node(m)) : NULL;
    Node *e = s ? emit1(G, "aten.exp.default", value_node(s)) : NULL;
    Node *t = e ? emit3(G, "aten.sum.dim_IntList", value_node(e), int_list(G, &d, 1), value_bool(true)) : NULL;
    return t ? emit2(G, "aten.div.Tensor", value_node(e), value_node(t)) : NULL;
}

/* Indirect indexing (core/lowering/lowering_gather.c) with indexes that are in range whatever
 * the inputs: argmax over a dim d of x gives positions < x.size(d). Then gather (= amax),
 * nearest upsampling of the last one or two dims,
 * index.Tensor / index_select along d, embedding of a 2-d x by its column argmaxes, scatter of
 * the row maxima back to their positions (one write per slice: deterministic), index_put
 * accumulating (duplicates add up). */
static Node *gen_indexing(Gen *G) {
    Node *x = pick(G, is_float);
    int64_t sz[8];
    int r = x ? sizes_of(x, sz) : -1;
    if (r < 1) return NULL;
    int64_t d = rint_(G, r);
    Value vx = value_node(x), vd = value_int(d);
    Node *ik = emit3(G, "aten.argmax.default", vx, vd, value_bool(true));
    if (!ik) return NULL;
    switch (rint_(G, 7)) {
    case 6: {                                                  /* nearest upsampling of the last dims */
        if (r < 3) return NULL;
        int nsp = r == 3 ? 1 : 2;
        int64_t o[2];
        for (int i = 0; i < nsp; i++) o[i] = sz[r - nsp + i] + 1 + rint_(G, 3);
        return emit2(G, nsp == 1 ? (coin(G, 50) ? "aten.upsample_nearest1d.default" : "aten._upsample_nearest_exact1d.default")
                                 : "aten.upsample_nearest2d.default", vx, int_list(G, o, nsp));
    }
    case 0: return emit3(G, "aten.gather.default", vx, vd, value_node(ik));
    case 1: {                                                  /* x[:, .., idx] with idx over the rest */
        Node *ix = emit2(G, "aten.argmax.default", vx, vd);
        if (!ix) return NULL;
        Value items[8];
        for (int k = 0; k < d; k++) items[k] = value_none();
        items[d] = value_node(ix);
        return emit2(G, "aten.index.Tensor", vx, value_list(G->g, items, (int)d + 1));
    }
    case 2: {
        Node *ix = emit2(G, "aten.argmax.default", vx, vd);
        Node *flat = ix ? emit2(G, "aten.view.default", value_node(ix), int_list(G, (int64_t[]){-1}, 1)) : NULL;
        return flat ? emit3(G, "aten.index_select.default", vx, vd, value_node(flat)) : NULL;
    }
    case 3: {                                                  /* embedding(x2, argmax(x2, 0)) */
        if (r != 2) return NULL;
        Node *ix = emit2(G, "aten.argmax.default", vx, value_int(0));
        return ix ? emit2(G, "aten.embedding.default", vx, value_node(ix)) : NULL;
    }
    case 4: {                                                  /* scatter(x, d, argmax, -amax) */
        Node *m = emit3(G, "aten.amax.default", vx, int_list(G, &d, 1), value_bool(true));
        Node *nm = m ? emit1(G, "aten.neg.default", value_node(m)) : NULL;
        if (!nm) return NULL;
        if (coin(G, 30)) return emit(G, "aten.scatter.value", (Value[]){vx, vd, value_node(ik), value_float(0.5)}, 4, NULL, 0);
        return emit(G, "aten.scatter.src", (Value[]){vx, vd, value_node(ik), value_node(nm)}, 4, NULL, 0);
    }
    default: {                                                 /* index_put(x, [.., idx], v, True) */
        Node *ix = emit2(G, "aten.argmax.default", vx, vd);
        if (!ix) return NULL;
        Value items[8];
        for (int k = 0; k < d; k++) items[k] = value_none();
        items[d] = value_node(ix);
        Node *v = emit1(G, "aten.sum.default", vx);             /* 0-d: broadcasts to the indexed shape */
        return v ? emit(G, "aten.index_put.default", (Value[]){vx, value_list(G->g, items, (int)d + 1), value_node(v),
                                                               value_bool(true)}, 4, NULL, 0) : NULL;
    }
    }
}

/* A _foreach_* op over two float tensors, as torch.optim's multi-tensor steps make them, and
 * its two items (lowered through core/lowering/lowering_decomp.c): add.List with alpha,
 * mul.Scalar, addcmul.Scalar with a positional value, lerp.Scalar, sqrt of abs. */
static Node *gen_foreach(Gen *G) {
    Node *a = pick(G, is_float), *b = pick(G, is_float);
    if (!a || !b) return NULL;
    Graph *g = G->g;
    Value l = value_list(g, (Value[]){value_node(a), value_node(b)}, 2);
    static const char *const targets[] = {"aten._foreach_add.List", "aten._foreach_mul.Scalar", "aten._foreach_addcmul.Scalar",
                                          "aten._foreach_lerp.Scalar", "aten._foreach_abs.default"};
    int k = rint_(G, 5);
    Value args[4] = {l, k == 1 ? value_float(1.5) : l, l, value_float(0.25)};
    int nargs = k == 0 || k == 3 ? 2 : k == 1 ? 2 : k == 2 ? 4 : 1;
    if (k == 3) { args[1] = l; args[2] = value_float(0.3); nargs = 3; }
    Kwarg kw[1] = {{"alpha", value_float(0.5)}};
    char base[64];
    base_name(targets[k], base, sizeof base);
    Node *n = graph_add_node(g, N_CALL_FUNCTION, graph_unique_name(g, base), targets[k]);
    graph_set_args(g, n, args, nargs);
    if (k == 0) graph_set_kwargs(g, n, kw, 1);
    n->op = op_lookup(targets[k]);
    TensorMeta m[OP_MAX_OUTS];
    int nm = OP_MAX_OUTS;
    if (!n->op || op_infer_meta(G->ctx, g, n, m, &nm) < 0) { graph_remove_node(g, n); mi_clear_err(G->ctx); return NULL; }
    Node *i0 = emit2(G, "operator.getitem", value_node(n), value_int(0));
    Node *i1 = emit2(G, "operator.getitem", value_node(n), value_int(1));
    if (k == 4 && i0) i0 = emit1(G, "aten.sqrt.default", value_node(i0));
    return i1 ? i1 : i0;
}

static Node *gen_misc(Gen *G) {
    if (coin(G, 10)) return gen_foreach(G);
    if (coin(G, 25)) return gen_indexing(G);
    if (coin(G, 20)) return gen_softmax_decomposed(G);
    if (coin(G, 30)) return gen_matmul(G);
    if (coin(G, 50)) {                                         /* cat along a dim */
        Node *a = pick(G, is_float);
        int64_t sa[8], sb[8];
        int r = a ? sizes_of(a, sa) : -1;
        if (r < 1) return NULL;
        int d = rint_(G, r);
        for (int i = 0; i < G->g->n; i++) {
            Node *b = G->g->nodes[i];
            if (b == a || !is_float(b) || sizes_of(b, sb) != r) continue;
            bool same = true;
            for (int k = 0; k < r; k++) if (k != d && sa[k] != sb[k]) same = false;
            if (!same || coin(G, 40)) continue;
            Value items[2] = {value_node(a), value_node(b)};
            return emit2(G, "aten.cat.default", value_list(G->g, items, 2), value_int(d));
        }
        return emit2(G, "aten.cat.default", value_list(G->g, (Value[]){value_node(a), value_node(a)}, 2), value_int(d));
    }
    Node *x = pick(G, is_tensor);
    if (!x) return NULL;
    /* f16: one rounding in the compiled code and in the interpreter (within rtol 1e-3) */
    static const DType to[] = {DT_F64, DT_F32, DT_I64, DT_F16};
    DType dt = x->meta.dtype == DT_F32 ? to[rint_(G, 4)] : DT_F32;
    Value d = {.kind = V_DTYPE, .dtype = dt};
    return emit2(G, "prims.convert_element_type.default", value_node(x), d);
}

/* ---- the graph ---- */

Graph *graph_random(MiCtx *ctx, uint64_t seed, const RandomGraphOpts *opts) {
    RandomGraphOpts def;
    if (!opts) { graph_random_default_opts(&def); opts = &def; }
    if (!op_lookup("aten.add.Tensor")) {
        mi_err(ctx, "", 0, 0, "random graph: the op registry lacks aten.add.Tensor");
        return NULL;
    }
    Gen G = {.ctx = ctx, .o = opts, .rng = seed * 0x2545f4914f6cdd1dULL + 1};
    G.g = graph_new("GraphModule");
    Graph *g = G.g;
    int maxr = opts->max_rank < 1 ? 1 : opts->max_rank > 4 ? 4 : opts->max_rank;
    int maxd = opts->max_dim < 1 ? 1 : opts->max_dim;
    G.base_rank = 1 + rint_(&G, maxr);
    for (int i = 0; i < G.base_rank; i++) G.base[i] = 1 + rint_(&G, maxd);
    /* dynamic shapes: some base dims become symbols s0, s1, ... (hint RG_HINT), each with a
     * SymInt placeholder first, as AOT inference graphs have them */
    Expr *sym_dim[8] = {0};
    int nsym = 0, nph = 0;
    if (coin(&G, opts->symbolic_percent)) {
        for (int i = 0; i < G.base_rank; i++)
            if (coin(&G, 60) || (i == G.base_rank - 1 && nsym == 0)) {
                char sname[16];
                snprintf(sname, sizeof sname, "s%d", nsym++);
                sym_dim[i] = sym_symbol(ctx->sym, sname);
                G.base[i] = RG_HINT;
            }
    }

    /* placeholders: the base shape, a suffix of it, or it with some dims set to 1 */
    int nin = 1 + rint_(&G, opts->max_inputs < 1 ? 1 : opts->max_inputs);
    Device dev = {DEV_CPU, -1};
    if (coin(&G, opts->cuda_percent)) dev = (Device){DEV_CUDA, 0};
    for (int i = 0; i < G.base_rank; i++) {
        if (!sym_dim[i]) continue;
        char name[32];
        snprintf(name, sizeof name, "arg%d_1", nph++);
        Node *p = graph_add_node(g, N_PLACEHOLDER, name, name);
        p->is_sym = p->annotated = true;
        p->sym_val = sym_dim[i];
    }
    for (int k = 0; k < nin; k++) {
        char name[32];
        snprintf(name, sizeof name, "arg%d_1", nph++);
        Node *p = graph_add_node(g, N_PLACEHOLDER, name, name);
        int r = G.base_rank, skip = 0;
        if (k > 0 && coin(&G, 30)) skip = rint_(&G, r);      /* fewer leading dims */
        Expr *sz[8];
        for (int i = skip; i < r; i++)
            sz[i - skip] = k > 0 && coin(&G, 20) ? sym_int(ctx->sym, 1)
                         : sym_dim[i] ? sym_dim[i] : sym_int(ctx->sym, G.base[i]);
        meta_init_contiguous(ctx->sym, &p->meta, &g->arena, DT_F32, r - skip, sz, dev);
        p->has_meta = p->annotated = true;
    }

    int want = 2 + rint_(&G, opts->max_calls < 2 ? 1 : opts->max_calls - 1);
    int made = 0;
    for (int tries = 0; made < want && tries < want * 20; tries++) {
        int k = rint_(&G, 100);
        Node *n;
        if (k < 22) n = gen_unary(&G);
        else if (k < 44) n = gen_binary(&G);
        else if (k < 54) n = gen_scalar(&G);
        else if (k < 62) n = gen_compare(&G);
        else if (k < 74) n = opts->reductions ? gen_reduction(&G) : NULL;
        else if (k < 88) n = opts->views ? gen_view(&G) : NULL;
        else if (k < 94) n = opts->mutations ? gen_mutation(&G) : NULL;
        else n = gen_misc(&G);
        if (n) made++;
    }

    /* outputs: the last call plus a few others, tensors only, no duplicates */
    Value outs[8];
    int nout = 0, maxo = opts->max_outputs < 1 ? 1 : opts->max_outputs > 8 ? 8 : opts->max_outputs;
    for (int i = g->n - 1; i >= 0 && nout < maxo; i--) {
        Node *n = g->nodes[i];
        if (n->kind != N_CALL_FUNCTION || !is_tensor(n)) continue;
        if (nout > 0 && !coin(&G, 35)) continue;
        outs[nout++] = value_node(n);
    }
    if (nout == 0) outs[nout++] = value_node(g->nodes[g->n - 1]);
    Node *o = graph_add_node(g, N_OUTPUT, "output", "output");
    Value tup = value_tuple(g, outs, nout);
    graph_set_args(g, o, &tup, 1);
    ops_resolve_graph(g);
    return g;
}
