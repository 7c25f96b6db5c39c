/* decomp_shape.c — layout ops defined by decomposition (torch/_refs, torch/_decomp,
 * torch/_inductor/decomposition.py): the *_copy variants of views (view + clone), repeat,
 * roll, flip, tril/triu, diag_embed, eye, block_diag, pixel_(un)shuffle, channel_shuffle, and
 * the scatters of views (diagonal_scatter, as_strided_scatter: clone + view + copy_). */
#include "ops/decomp.h"
#include "ops/ops_impl.h"

#include <stdio.h>
#include <string.h>

static int one(Value *outs, int *nout, Node *x) { outs[0] = value_node(x); *nout = 1; return 0; }
#define RET(x) return one(outs, nout, (x))

/* Number of results of a tuple op node (its registry meta inference). */
static int db_nouts(DecompB *b, Node *x) {
    if (!x) return 0;
    TensorMeta *m = arena_alloc(&b->g->arena, OP_MAX_OUTS * sizeof *m);
    int n = OP_MAX_OUTS;
    if (op_infer_meta(b->ctx, b->g, x, m, &n)) { b->failed = true; return 0; }
    return n;
}

/* inductor/refs X_copy(args) = X(args).clone(); "aten.permute_copy.default" -> "aten.permute.default" */
static int dc_view_copy(DecompB *b, Value *outs, int *nout) {
    char view[128];
    const char *t = b->n->target, *c = strstr(t, "_copy");
    if (!c) return db_fail(b, "not a _copy op");
    snprintf(view, sizeof view, "%.*s%s", (int)(c - t), t, c + 5);
    Node *v = db_call(b, view, b->n->args, b->n->nargs, b->n->kwargs, b->n->nkwargs);
    if (!v) return -1;
    const OpDef *op = op_lookup(view);
    if (op && (op->flags & OPF_TUPLE)) {
        int n = db_nouts(b, v);
        for (int k = 0; k < n; k++) outs[k] = value_node(db_clone(b, db_getitem(b, v, k)));
        *nout = n;
        return 0;
    }
    RET(db_clone(b, v));
}

/* diagonal_scatter / as_strided_scatter: a clone of self with the view's elements set to src */
static int scatter_of_view(DecompB *b, Value *outs, int *nout, const char *view) {
    Node *s = db_tensor(b, 0, "self"), *src = db_tensor(b, 1, "src");
    Node *c = db_clone(b, s);
    Value args[8] = {VN(c)};
    int n = b->n->nargs - 1;
    if (n > 7) n = 7;
    for (int i = 0; i < n - 1; i++) args[1 + i] = b->n->args[2 + i];
    Node *v = db_call(b, view, args, n, b->n->kwargs, b->n->nkwargs);
    db_op(b, "aten.copy_.default", VN(v), VN(src));
    RET(c);
}
static int dc_diagonal_scatter(DecompB *b, Value *o, int *n) { return scatter_of_view(b, o, n, "aten.diagonal.default"); }
static int dc_as_strided_scatter(DecompB *b, Value *o, int *n) { return scatter_of_view(b, o, n, "aten.as_strided.default"); }

/* inductor decomposition resize_as(self, other, memory_format) = resize(self, other.shape, memory_format) */
static int dc_resize_as(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self"), *t = db_tensor(b, 1, "the_template");
    const Value *mf = db_arg(b, 2, "memory_format");
    if (!x || !t) return -1;
    if (mf && mf->kind != V_NONE) RET(db_op(b, "aten.resize.default", VN(x), db_shape_val(b, t), *mf));
    RET(db_op(b, "aten.resize.default", VN(x), db_shape_val(b, t)));
}

/* refs.repeat: view as [1.., s0, 1, s1, ...], expand to [r0, s0, r1, s1, ...], reshape */
static int dc_repeat(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t rep[MI_MAX_DIMS];
    int nr = db_ints(b, 1, "repeats", rep, MI_MAX_DIMS);
    int nd = db_ndim(b, x);
    if (nr < nd) return db_fail(b, "number of repeat dims can not be smaller than number of tensor dims");
    if (2 * nr > MI_MAX_DIMS) return db_fail(b, "too many dims to repeat (%d)", nr);
    Value inter[MI_MAX_DIMS], exp[MI_MAX_DIMS], target[MI_MAX_DIMS];
    for (int i = 0; i < nr; i++) {
        int j = i - (nr - nd);
        Value s = j >= 0 ? db_size_val(b, x, j) : VI(1);
        inter[2 * i] = VI(1); inter[2 * i + 1] = s;
        exp[2 * i] = VI(rep[i]); exp[2 * i + 1] = s;
        Expr *e = j >= 0 ? db_size(b, x, j) : sym_int(b->ctx->sym, 1);
        target[i] = db_expr_val(b, sym_mul(b->ctx->sym, e, sym_int(b->ctx->sym, rep[i])));
    }
    Node *v = db_view(b, x, db_vlist(b, inter, 2 * nr));
    Node *e = db_clone(b, db_expand(b, v, db_vlist(b, exp, 2 * nr)));
    RET(db_view(b, e, db_vlist(b, target, nr)));
}

/* refs.roll: index_select with (start + arange(size)) % size, one dim at a time */
static int dc_roll(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t sh[MI_MAX_DIMS], dims[MI_MAX_DIMS];
    int ns = db_ints(b, 1, "shifts", sh, MI_MAX_DIMS), nd = db_ints(b, 2, "dims", dims, MI_MAX_DIMS);
    if (nd < 0) nd = 0;
    if (nd == 0) {
        if (ns != 1) return db_fail(b, "shifts must be a single int when no dims are given");
        Value flat[1] = {VI(-1)};
        Node *f = db_reshape(b, x, db_vlist(b, flat, 1));
        int64_t n;
        if (!db_size_const(b, f, 0, &n)) return db_fail(b, "roll of a symbolic size");
        if (n == 0) RET(db_clone(b, x));
        int64_t start = ((n - sh[0]) % n + n) % n;
        Node *idx = db_op(b, "aten.fmod.Scalar", VN(db_op(b, "aten.add.Tensor", VN(db_arange(b, VI(n), DT_I64)), VI(start))), VI(n));
        RET(db_view(b, db_op(b, "aten.index_select.default", VN(f), VI(0), VN(idx)), db_shape_val(b, x)));
    }
    if (ns != nd) return db_fail(b, "shifts and dimensions must align (%d vs %d)", ns, nd);
    Node *r = x;
    for (int k = 0; k < nd; k++) {
        int d = db_wrap_dim(b, dims[k], db_ndim(b, x));
        int64_t n;
        if (!db_size_const(b, x, d, &n)) return db_fail(b, "roll of a symbolic size");
        if (n == 0) continue;
        int64_t start = ((n - sh[k]) % n + n) % n;
        Node *idx = db_op(b, "aten.fmod.Scalar", VN(db_op(b, "aten.add.Tensor", VN(db_arange(b, VI(n), DT_I64)), VI(start))), VI(n));
        r = db_op(b, "aten.index_select.default", VN(r), VI(d), VN(idx));
    }
    RET(r == x ? db_clone(b, x) : r);
}

/* refs.flip: prims.rev over the canonical dims (repeated dims are refused by prims.rev), so the
 * interpreter and the lowering (Inductor's `rev`: a Pointwise reading size - 1 - i) are one. */
static int dc_flip(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t dims[MI_MAX_DIMS];
    int nd = db_ints(b, 1, "dims", dims, MI_MAX_DIMS);
    if (nd < 0) return db_fail(b, "flip needs a list of dims");
    for (int k = 0; k < nd; k++) dims[k] = db_wrap_dim(b, dims[k], db_ndim(b, x));
    RET(db_op(b, "prims.rev.default", VN(x), db_ilist(b, dims, nd)));
}

/* refs.tril / triu: where((col - row) <= diagonal (>= for triu), a, 0) */
static int tri(DecompB *b, Value *outs, int *nout, bool lower) {
    Node *a = db_tensor(b, 0, "self");
    int64_t diag = db_int(b, 1, "diagonal", 0);
    if (db_ndim(b, a) < 2) return db_fail(b, "input tensor must have at least 2 dimensions");
    Node *row = db_unsqueeze(b, db_arange(b, db_size_val(b, a, -2), DT_I64), -1);
    Node *col = db_arange(b, db_size_val(b, a, -1), DT_I64);
    Node *d = db_sub(b, col, row);
    Node *mask = db_op(b, lower ? "aten.le.Scalar" : "aten.ge.Scalar", VN(d), VI(diag));
    RET(db_op(b, "aten.where.ScalarOther", VN(mask), VN(a), VI(0)));
}
static int dc_tril(DecompB *b, Value *o, int *n) { return tri(b, o, n, true); }
static int dc_triu(DecompB *b, Value *o, int *n) { return tri(b, o, n, false); }

/* refs.diag_embed */
static int dc_diag_embed(DecompB *b, Value *outs, int *nout) {
    Node *t = db_tensor(b, 0, "self");
    int64_t off = db_int(b, 1, "offset", 0);
    if (b->failed) return -1;
    int rank = db_ndim(b, t) + 1;
    if (rank < 2 || rank > MI_MAX_DIMS) return db_fail(b, "diag_embed needs a tensor of rank 1 to %d", MI_MAX_DIMS - 1);
    int d1 = db_wrap_dim(b, db_int(b, 2, "dim1", -2), rank), d2 = db_wrap_dim(b, db_int(b, 3, "dim2", -1), rank);
    if (d1 > d2) { int s = d1; d1 = d2; d2 = s; off = -off; }
    int64_t last;
    if (!db_size_const(b, t, -1, &last)) return db_fail(b, "diag_embed of a symbolic size");
    if (off != 0) {
        Value shape[MI_MAX_DIMS];
        int nd = db_ndim(b, t);
        for (int i = 0; i < nd; i++) shape[i] = db_size_val(b, t, i);
        shape[nd - 1] = VI(off > 0 ? off : -off);
        Kwarg kw[1] = {{"dtype", VDT(db_dtype(b, t))}};
        Node *z = db_call(b, "aten.zeros.default", DBV(db_vlist(b, shape, nd)), kw, 1);
        Node *pair[2] = {off > 0 ? z : t, off > 0 ? t : z};
        t = db_cat(b, pair, 2, -1);
        last += off > 0 ? off : -off;
    }
    t = db_unsqueeze(b, t, d1);
    /* movedim(-1, d2) */
    int64_t perm[MI_MAX_DIMS];
    for (int i = 0, k = 0; i < rank; i++) perm[i] = i == d2 ? rank - 1 : k++;
    t = db_permute(b, t, perm, rank);
    Node *ar = db_arange(b, VI(last), DT_I64);
    Kwarg kw[1] = {{"dtype", VDT(DT_I64)}};
    Node *br = db_call(b, "aten.arange.start_step", DBV(VI(off), VI(last + off), VI(1)), kw, 1);
    Node *cond = db_binary(b, "aten.eq.Tensor", ar, db_unsqueeze(b, br, -1));
    int64_t cs[MI_MAX_DIMS];
    for (int i = 0; i < rank; i++) cs[i] = i == d1 || i == d2 ? last : 1;
    cond = db_reshape(b, cond, db_ilist(b, cs, rank));
    RET(db_op(b, "aten.where.ScalarOther", VN(cond), VN(t), VI(0)));
}

/* refs.eye: arange(n).unsqueeze(-1) == arange(m), converted to dtype (default float32) */
static int dc_eye(DecompB *b, Value *outs, int *nout) {
    Value n = db_scalar(b, 0, "n", VI(0));
    Value m = db_arg(b, 1, "m") && db_arg(b, 1, "m")->kind != V_DTYPE ? db_scalar(b, 1, "m", n) : n;
    const Value *dv = db_arg(b, -1, "dtype");
    DType dt = dv && dv->kind == V_DTYPE ? dv->dtype : default_float();
    Node *c = db_binary(b, "aten.eq.Tensor", db_unsqueeze(b, db_arange(b, n, DT_I64), -1), db_arange(b, m, DT_I64));
    RET(db_to(b, c, dt));
}

/* refs block_diag: each tensor as a matrix, padded with zeros left and right, rows concatenated */
static int dc_block_diag(DecompB *b, Value *outs, int *nout) {
    const Value *l = db_arg(b, 0, "tensors");
    if (!l || (l->kind != V_LIST && l->kind != V_TUPLE) || l->list.n > 64) return db_fail(b, "tensors must be a list");
    int n = l->list.n;
    Node *m[64];
    int64_t cols[64], total = 0;
    PromoteState ps;
    promote_init(&ps);
    for (int i = 0; i < n; i++) {
        if (l->list.items[i].kind != V_NODE) return db_fail(b, "tensors must be tensors");
        Node *t = l->list.items[i].node;
        const TensorMeta *tm = db_meta(b, t);
        if (!tm) return -1;
        promote_tensor(&ps, tm);
        int nd = tm->ndim;
        if (nd > 2) return db_fail(b, "Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions", i, nd);
        if (nd == 0) t = db_view(b, t, db_ilist(b, (int64_t[]){1, 1}, 2));
        else if (nd == 1) t = db_unsqueeze(b, t, 0);
        m[i] = t;
        if (!db_size_const(b, t, 1, &cols[i])) return db_fail(b, "block_diag of a symbolic size");
        total += cols[i];
    }
    DType dt = promote_result(&ps);
    Node *rows[64];
    int64_t left = 0;
    for (int i = 0; i < n; i++) {
        int64_t pad[2] = {left, total - left - cols[i]};
        rows[i] = db_op(b, "aten.constant_pad_nd.default", VN(db_to(b, m[i], dt)), db_ilist(b, pad, 2), VI(0));
        left += cols[i];
    }
    RET(db_cat(b, rows, n, 0));
}

/* refs.pixel_shuffle / pixel_unshuffle: view, permute, reshape */
static int pixel(DecompB *b, Value *outs, int *nout, bool shuffle) {
    Node *x = db_tensor(b, 0, "self");
    int64_t r = db_int(b, 1, shuffle ? "upscale_factor" : "downscale_factor", 1);
    int nd = db_ndim(b, x);
    if (nd < 3) return db_fail(b, "pixel_shuffle expects input to have at least 3 dimensions, but got input with %d", nd);
    int nb = nd - 3;
    int64_t C, H, W;
    if (!db_size_const(b, x, -3, &C) || !db_size_const(b, x, -2, &H) || !db_size_const(b, x, -1, &W))
        return db_fail(b, "pixel shuffle of symbolic sizes");
    Value v[MI_MAX_DIMS], o[MI_MAX_DIMS];
    for (int i = 0; i < nb; i++) v[i] = o[i] = db_size_val(b, x, i);
    int64_t perm[MI_MAX_DIMS];
    for (int i = 0; i < nb; i++) perm[i] = i;
    if (shuffle) {
        int64_t tail[5] = {C / (r * r), r, r, H, W}, p5[5] = {0, 3, 1, 4, 2}, out3[3] = {C / (r * r), H * r, W * r};
        for (int i = 0; i < 5; i++) { v[nb + i] = VI(tail[i]); perm[nb + i] = nb + p5[i]; }
        for (int i = 0; i < 3; i++) o[nb + i] = VI(out3[i]);
    } else {
        int64_t tail[5] = {C, H / r, r, W / r, r}, p5[5] = {0, 2, 4, 1, 3}, out3[3] = {C * r * r, H / r, W / r};
        for (int i = 0; i < 5; i++) { v[nb + i] = VI(tail[i]); perm[nb + i] = nb + p5[i]; }
        for (int i = 0; i < 3; i++) o[nb + i] = VI(out3[i]);
    }
    Node *y = db_permute(b, db_view(b, x, db_vlist(b, v, nb + 5)), perm, nb + 5);
    RET(db_clone(b, db_reshape(b, y, db_vlist(b, o, nb + 3))));
}
static int dc_pixel_shuffle(DecompB *b, Value *o, int *n) { return pixel(b, o, n, true); }
static int dc_pixel_unshuffle(DecompB *b, Value *o, int *n) { return pixel(b, o, n, false); }

/* channel_shuffle: view(n, g, c/g, *rest).transpose(1, 2).contiguous().view(shape) */
static int dc_channel_shuffle(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    int64_t g = db_int(b, 1, "groups", 1), c;
    int nd = db_ndim(b, x);
    if (nd < 3 || !db_size_const(b, x, 1, &c)) return db_fail(b, "channel_shuffle needs a [N, C, *] tensor with constant C");
    Value v[MI_MAX_DIMS + 1];
    v[0] = db_size_val(b, x, 0); v[1] = VI(g); v[2] = VI(c / g);
    for (int i = 2; i < nd; i++) v[i + 1] = db_size_val(b, x, i);
    Node *y = db_op(b, "aten.transpose.int", VN(db_view(b, x, db_vlist(b, v, nd + 1))), VI(1), VI(2));
    RET(db_reshape(b, y, db_shape_val(b, x)));
}

/* split.Tensor under its unsafe name */
static int dc_unsafe_split(DecompB *b, Value *outs, int *nout) {
    Node *v = db_call(b, "aten.split.Tensor", b->n->args, b->n->nargs, b->n->kwargs, b->n->nkwargs);
    int n = db_nouts(b, v);
    for (int k = 0; k < n; k++) outs[k] = value_node(db_getitem(b, v, k));
    *nout = n;
    return b->failed ? -1 : 0;
}

/* refs.rot90: k % 4 quarter turns in the plane of dims: flips and a transpose */
static int dc_rot90(DecompB *b, Value *outs, int *nout) {
    Node *a = db_tensor(b, 0, "self");
    int64_t k = db_int(b, 1, "k", 1), dims[2] = {0, 1};
    if (db_arg(b, 2, "dims") && db_ints(b, 2, "dims", dims, 2) != 2) return db_fail(b, "expected total rotation dims == 2");
    int nd = db_ndim(b, a);
    if (nd < 2) return db_fail(b, "expected total dims >= 2, but got total dims = %d", nd);
    int d0 = db_wrap_dim(b, dims[0], nd), d1 = db_wrap_dim(b, dims[1], nd);
    if (d0 == d1) return db_fail(b, "expected rotation dims to be different");
    k = ((k % 4) + 4) % 4;
    int64_t f1[1] = {d1}, f0[1] = {d0}, both[2] = {d0, d1};
    if (k == 1) RET(db_op(b, "aten.transpose.int", VN(db_op(b, "aten.flip.default", VN(a), db_ilist(b, f1, 1))), VI(d0), VI(d1)));
    if (k == 2) RET(db_op(b, "aten.flip.default", VN(a), db_ilist(b, both, 2)));
    if (k == 3) RET(db_op(b, "aten.transpose.int", VN(db_op(b, "aten.flip.default", VN(a), db_ilist(b, f0, 1))), VI(d0), VI(d1)));
    RET(db_clone(b, a));
}

/* decompositions._chunk_cat: each tensor padded along dim to a multiple of num_chunks, viewed as
 * [..., num_chunks, -1], concatenated along dim + 1 */
static int dc_chunk_cat(DecompB *b, Value *outs, int *nout) {
    const Value *l = db_arg(b, 0, "tensors");
    if (!l || (l->kind != V_LIST && l->kind != V_TUPLE) || l->list.n < 1 || l->list.n > 64) return db_fail(b, "tensors must be a non-empty list");
    int64_t nc = db_int(b, 2, "num_chunks", 1);
    Node *parts[64];
    int nd0 = l->list.items[0].kind == V_NODE ? db_ndim(b, l->list.items[0].node) : 0;
    int d = db_wrap_dim(b, db_int(b, 1, "dim", 0), nd0);
    for (int i = 0; i < l->list.n; i++) {
        if (l->list.items[i].kind != V_NODE) return db_fail(b, "tensors must be tensors");
        Node *t = l->list.items[i].node;
        int nd = db_ndim(b, t);
        int64_t sz;
        if (!db_size_const(b, t, d, &sz)) return db_fail(b, "symbolic size along dim");
        int64_t padded = (sz + nc - 1) / nc * nc;
        Value view[MI_MAX_DIMS];
        for (int j = 0; j < d; j++) view[j] = db_size_val(b, t, j);
        view[d] = VI(nc);
        view[d + 1] = VI(-1);
        if (padded != sz) {
            int64_t pad[2 * MI_MAX_DIMS] = {0};
            int np = 2 * (nd - d - 1) + 2;
            pad[np - 1] = padded - sz;
            t = db_op(b, "aten.constant_pad_nd.default", VN(t), db_ilist(b, pad, np), VI(0));
        }
        parts[i] = db_view(b, t, db_vlist(b, view, d + 2));
    }
    RET(db_cat(b, parts, l->list.n, d + 1));
}

/* new_empty_strided(self, size, stride, dtype=...): empty_strided with self's dtype by default */
static int dc_new_empty_strided(DecompB *b, Value *outs, int *nout) {
    Node *x = db_tensor(b, 0, "self");
    const Value *size = db_arg(b, 1, "size"), *stride = db_arg(b, 2, "stride"), *dt = db_arg(b, -1, "dtype");
    if (!size || !stride) return db_fail(b, "needs size and stride");
    Kwarg kw[1] = {{"dtype", dt && dt->kind == V_DTYPE ? *dt : VDT(db_dtype(b, x))}};
    RET(db_call(b, "aten.empty_strided.default", DBV(*size, *stride), kw, 1));
}

#define D(name, flags, fn, ind, doc) DECOMP_ROW(name, flags, fn, ind, doc)
#define CP(name, doc) D(name, 0, dc_view_copy, true, doc)
const OpDef ops_decomp_shape_table[] = {
    CP("aten.alias_copy.default", "copy of alias"),
    CP("aten.expand_copy.default", "copy of expand"),
    CP("aten.permute_copy.default", "copy of permute"),
    CP("aten.t_copy.default", "copy of t"),
    CP("aten.transpose_copy.int", "copy of transpose"),
    CP("aten.unsqueeze_copy.default", "copy of unsqueeze"),
    CP("aten.view_copy.default", "copy of view"),
    CP("aten.squeeze_copy.default", "copy of squeeze"),
    CP("aten.squeeze_copy.dim", "copy of squeeze"),
    CP("aten.squeeze_copy.dims", "copy of squeeze"),
    CP("aten.diagonal_copy.default", "copy of diagonal"),
    CP("aten.unfold_copy.default", "copy of unfold"),
    CP("aten.narrow_copy.default", "copy of narrow"),
    CP("aten.as_strided_copy.default", "copy of as_strided"),
    CP("aten.slice_copy.Tensor", "copy of slice"),
    CP("aten.select_copy.int", "copy of select"),
    CP("aten.detach_copy.default", "copy of detach"),
    {"aten.unbind_copy.int", OPF_TUPLE, op_infer_generic, decomp_eval, "copies of unbind", decomp_shape,
     &(const DecompDef){"aten.unbind_copy.int", dc_view_copy, true}},
    {"aten.split_with_sizes_copy.default", OPF_TUPLE, op_infer_generic, decomp_eval, "copies of split_with_sizes", decomp_shape,
     &(const DecompDef){"aten.split_with_sizes_copy.default", dc_view_copy, true}},
    {"aten.split_copy.Tensor", OPF_TUPLE, op_infer_generic, decomp_eval, "copies of split", decomp_shape,
     &(const DecompDef){"aten.split_copy.Tensor", dc_view_copy, true}},
    {"aten.unsafe_split.Tensor", OPF_TUPLE, op_infer_generic, decomp_eval, "split", decomp_shape,
     &(const DecompDef){"aten.unsafe_split.Tensor", dc_unsafe_split, true}},
    D("aten.diagonal_scatter.default", OPF_SCATTER, dc_diagonal_scatter, false, "clone of self with its diagonal set to src"),
    D("aten.as_strided_scatter.default", OPF_SCATTER, dc_as_strided_scatter, false, "clone of self with an as_strided view set to src"),
    D("aten.repeat.default", 0, dc_repeat, false, "tile the tensor repeats[i] times along each dim"),
    D("aten.roll.default", 0, dc_roll, true, "rotate elements along dims"),
    D("aten.flip.default", 0, dc_flip, true, "reverse the order along dims"),
    D("aten.tril.default", 0, dc_tril, true, "lower triangle (below diagonal), rest 0"),
    D("aten.triu.default", 0, dc_triu, true, "upper triangle (above diagonal), rest 0"),
    D("aten.diag_embed.default", 0, dc_diag_embed, true, "matrices with the last dim on a diagonal"),
    D("aten.resize_as.default", 0, dc_resize_as, true, "resize to the template's size"),
    D("aten.eye.default", OPF_CONSTRUCTOR, dc_eye, true, "identity matrix"),
    D("aten.eye.m", OPF_CONSTRUCTOR, dc_eye, true, "n x m identity matrix"),
    D("aten.block_diag.default", 0, dc_block_diag, true, "block diagonal matrix of the tensors"),
    D("aten.pixel_shuffle.default", 0, dc_pixel_shuffle, true, "[*, C r^2, H, W] -> [*, C, H r, W r]"),
    D("aten.pixel_unshuffle.default", 0, dc_pixel_unshuffle, true, "[*, C, H r, W r] -> [*, C r^2, H, W]"),
    D("aten.channel_shuffle.default", 0, dc_channel_shuffle, true, "interleave channel groups"),
    D("aten.rot90.default", 0, dc_rot90, true, "rotate by k quarter turns in the plane of dims"),
    D("aten._chunk_cat.default", 0, dc_chunk_cat, true, "tensors chunked along dim, chunks concatenated"),
    D("aten.new_empty_strided.default", 0, dc_new_empty_strided, true, "uninitialized tensor of size/stride (zeros here)"),
};
const int ops_decomp_shape_count = sizeof ops_decomp_shape_table / sizeof ops_decomp_shape_table[0];
