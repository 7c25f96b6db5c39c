/* codegen_split.c — where a pointwise segment's innermost loop splits into pieces
 * (used by core/codegen/codegen_kernel.c's emit_group).
 *
 * A cat along the last dim is one Pointwise whose value is a select between its inputs on the
 * innermost index: `where(p3 < 16, a[min(15, p3)], b[max(0, p3 - 16)])` (the clamps keep the
 * load not taken in bounds). GCC cannot vectorize that loop once the two sides hold calls
 * (it sinks each side into its branch: "control flow in loop"), and every element computes both
 * sides. Inductor's CppVecKernel computes both sides as vectors with masked loads and blends;
 * here the loop is cut where the innermost variable decides a comparison or a clamp, so each
 * piece reads one input, the select and the clamps fold (codegen_kernel.c's range folding),
 * and each piece vectorizes: [0, 16) computes a[p3], [16, 32) computes b[p3 - 16].
 *
 * Split points come from the recorded bodies, never from the op that made them:
 *   - Min(c, v + r) in an index: below v = c - r + 1 it is v + r, from there on c;
 *   - Max(c, v + r): from v = c - r on it is v + r;
 *   - a comparison between index_expr(v + r) and an integer constant c: `v + r < c` changes at
 *     v = c - r, `v + r <= c` at c - r + 1 (mirrored when the constant is on the left).
 * Only unit coefficients and constant offsets count; anything else adds no point. */
#include "codegen/codegen_split.h"

#include <stdlib.h>

/* x = var + r with r a constant: *r set, true. */
static bool unit_affine(SymCtx *sy, Expr *x, Expr *var, int64_t *r) {
    Expr *c = sym_coeff(sy, x, var->name);
    int64_t k;
    if (!c || !sym_is_int(c, &k) || k != 1) return false;
    return sym_is_int(sym_sub(sy, x, var), r);
}

static void add_point(int64_t p, int64_t n, int64_t *pts, int *np, int max) {
    if (p <= 0 || p >= n) return;
    for (int i = 0; i < *np; i++)
        if (pts[i] == p) return;
    if (*np < max) pts[*np] = p;
    (*np)++;   /* counts past max too: the caller refuses too many pieces */
}

/* Min / Max nodes of index x whose sides are a constant and var + r. */
static void clamp_points(SymCtx *sy, Expr *x, Expr *var, int64_t n, int64_t *pts, int *np, int max) {
    if (x->kind == EX_MIN || x->kind == EX_MAX) {
        if (x->n == 2) {
            for (int k = 0; k < 2; k++) {
                int64_t c, r;
                if (sym_is_int(x->args[k], &c) && unit_affine(sy, x->args[1 - k], var, &r))
                    add_point(x->kind == EX_MIN ? c - r + 1 : c - r, n, pts, np, max);
            }
        }
    }
    for (int i = 0; i < x->n; i++) clamp_points(sy, x->args[i], var, n, pts, np, max);
}

/* op i of b as var + r (an index_expr, possibly through an integer to_dtype): true, *r set */
static bool op_affine(SymCtx *sy, const LoopBody *b, int i, Expr *var, int64_t *r) {
    const LoopOp *o = &b->ops[i];
    if (o->kind == LOP_TO_DTYPE && o->args[0] >= 0 && o->args[0] < i && !dtype_is_float(o->dtype))
        return op_affine(sy, b, o->args[0], var, r);
    return o->kind == LOP_INDEX_EXPR && unit_affine(sy, b->indexes[o->index], var, r);
}
/* op i of b as an integer constant */
static bool op_const(const LoopBody *b, int i, int64_t *c) {
    const LoopOp *o = &b->ops[i];
    if (o->kind == LOP_TO_DTYPE && o->args[0] >= 0 && o->args[0] < i && !dtype_is_float(o->dtype)) return op_const(b, o->args[0], c);
    if (o->kind == LOP_CONST && o->cval == (double)(int64_t)o->cval) { *c = (int64_t)o->cval; return true; }
    return o->kind == LOP_INDEX_EXPR && sym_is_int(b->indexes[o->index], c);
}

int cg_split_points(SymCtx *sy, const LoopBody *const *bodies, int nb, Expr *var, int64_t n, int64_t *pts, int max) {
    int np = 0;
    for (int k = 0; k < nb; k++) {
        const LoopBody *b = bodies[k];
        for (int i = 0; i < b->nops; i++) {
            const LoopOp *o = &b->ops[i];
            if ((o->kind == LOP_LOAD || o->kind == LOP_STORE || o->kind == LOP_INDEX_EXPR) && o->index >= 0)
                clamp_points(sy, b->indexes[o->index], var, n, pts, &np, max);
            if (o->kind != LOP_MATH || !ir_math_is_compare(o->op) || ir_math_arity(o->op) != 2) continue;
            if (o->op == IOP_LOGICAL_AND || o->op == IOP_LOGICAL_OR) continue;
            int x = o->args[0], y = o->args[1];
            if (x < 0 || y < 0 || x >= i || y >= i) continue;
            int64_t r, c;
            bool left;   /* the variable on the left: v + r OP c */
            if (op_affine(sy, b, x, var, &r) && op_const(b, y, &c)) left = true;
            else if (op_affine(sy, b, y, var, &r) && op_const(b, x, &c)) left = false;
            else continue;
            IrMathOp op = o->op;
            if (!left) op = op == IOP_LT ? IOP_GT : op == IOP_LE ? IOP_GE : op == IOP_GT ? IOP_LT : op == IOP_GE ? IOP_LE : op;
            switch (op) {
            case IOP_LT: case IOP_GE: add_point(c - r, n, pts, &np, max); break;
            case IOP_LE: case IOP_GT: add_point(c - r + 1, n, pts, &np, max); break;
            case IOP_EQ: case IOP_NE: add_point(c - r, n, pts, &np, max); add_point(c - r + 1, n, pts, &np, max); break;
            default: break;
            }
        }
    }
    int m = np < max ? np : max;
    for (int i = 1; i < m; i++)   /* ascending */
        for (int j = i; j > 0 && pts[j - 1] > pts[j]; j--) { int64_t t = pts[j]; pts[j] = pts[j - 1]; pts[j - 1] = t; }
    return np;
}
