/* lowering_random.c — Inductor's random numbers (lowering.py: inductor_lookup_seed and
 * inductor_random, the prims that replace_random_passes puts in training graphs with dropout):
 * the seeds tensor stays an extern call (ir.RandomSeeds, an ExternKernelOut: the reference run by
 * lw_extern_out), a seed lookup is a
 * 0-d load of it, and the random tensor is a Pointwise computing
 *     ops.rand(seed_loader([]), ops.index_expr(contiguous linear index, int32))
 * so the draws fuse with the mask and the multiply that use them, one kernel instead of a
 * kernel, an extern call and a kernel. The generator is Philox-4x32-10 (codegen/op_overrides.c
 * cg_rand_src), as Triton's tl.rand and ATen's CPU Philox are; the values are not PyTorch's
 * (its seeds come from its own generator), which is why `check` compares them statistically. */
#include "lowering/lowering_impl.h"

#include <string.h>

/* inductor_lookup_seed(seeds, index): seeds[index] as a 0-d pending value */
static int lower_lookup_seed(Lower *L, const Node *n, int arg) {
    (void)arg;
    IrTBox *seeds = lw_arg_tbox(L, n, 0);
    int64_t idx;
    if (!seeds || seeds->ndim != 1 || !lw_arg_int(n, 1, "index", &idx))
        return lw_err(L, n, "inductor_lookup_seed needs a 1-d seeds tensor and an index");
    int64_t count;
    if (sym_is_int(seeds->size[0], &count) && (idx < 0 || idx >= count))
        return lw_err(L, n, "seed index %lld out of range for %lld seeds", (long long)idx, (long long)count);
    Expr *map[1] = {sym_int(L->s, idx)};
    return lw_set_pointwise(L, n, lw_reindex(L, seeds->loader, 0, map, 1), seeds->dtype, 1);
}

/* inductor_random(size, seed, mode): ops.rand / ops.randn of the seed and the element's
 * contiguous position, float32, realized as Inductor does (result.realize()) */
static int lower_inductor_random(Lower *L, const Node *n, int arg) {
    (void)arg;
    const TensorMeta *m = lw_out_meta(n);
    IrTBox *seed = lw_arg_tbox(L, n, 1);
    const Value *mv = lw_arg_or_kw(n, 2, "mode");
    const char *mode = mv && mv->kind == V_STR ? mv->s : NULL;
    if (!m || !seed || seed->ndim != 0) return lw_err(L, n, "inductor_random needs a shape and a 0-d seed");
    if (!mode || (strcmp(mode, "rand") && strcmp(mode, "randn"))) return lw_err(L, n, "inductor_random: mode must be 'rand' or 'randn'");
    Expr *pos = sym_int(L->s, 0), *stride = sym_int(L->s, 1);
    for (int d = m->ndim - 1; d >= 0; d--) {   /* FlexibleLayout.contiguous_strides(size).make_indexer() */
        pos = sym_add(L->s, pos, sym_mul(L->s, stride, lw_var(L, d)));
        stride = sym_mul(L->s, stride, m->size[d]);
    }
    const IrFn *s = lw_broadcast(L, seed->loader, 0, NULL, m->ndim, m->size);
    const IrFn *off = lw_index_expr(L, pos, m->ndim, DT_I32);   /* torch.int32, as Inductor */
    if (!s || !off) return lw_err(L, n, "inductor_random: bad seed");
    const IrFn *f = lw_math(L, strcmp(mode, "rand") ? IOP_RANDN : IOP_RAND, DT_F32, lw_to_dtype(L, s, DT_I64), off, NULL);
    if (lw_set_pointwise(L, n, f, DT_F32, 0)) return -1;
    LVal *lv = lw_node_val(L, n);
    if (lv->t->sb && !lv->t->sb->buf) lw_realize(L, lv->t->sb, NULL);
    return 0;
}

/* inductor_randint(low, high, size, seed): ops.randint64(seed, the element's contiguous position
 * as int32, low, high), an int64 Pointwise (lowering.py inductor_randint: not realized, so it
 * fuses into its consumers), which replace_random.py makes of aten.randint.low in training graphs */
static int lower_inductor_randint(Lower *L, const Node *n, int arg) {
    (void)arg;
    const TensorMeta *m = lw_out_meta(n);
    IrTBox *seed = lw_arg_tbox(L, n, 3);
    int64_t lo, hi;
    if (!m || !seed || seed->ndim != 0) return lw_err(L, n, "inductor_randint needs a shape and a 0-d seed");
    if (!lw_arg_int(n, 0, "low", &lo) || !lw_arg_int(n, 1, "high", &hi)) return lw_err(L, n, "inductor_randint needs int low and high");
    Expr *pos = sym_int(L->s, 0), *stride = sym_int(L->s, 1);
    for (int d = m->ndim - 1; d >= 0; d--) {   /* FlexibleLayout.contiguous_strides(size).make_indexer() */
        pos = sym_add(L->s, pos, sym_mul(L->s, stride, lw_var(L, d)));
        stride = sym_mul(L->s, stride, m->size[d]);
    }
    const IrFn *s = lw_broadcast(L, seed->loader, 0, NULL, m->ndim, m->size);
    const IrFn *off = lw_index_expr(L, pos, m->ndim, DT_I32);
    const IrFn *l = lw_index_expr(L, sym_int(L->s, lo), m->ndim, DT_I64), *h = lw_index_expr(L, sym_int(L->s, hi), m->ndim, DT_I64);
    if (!s || !off || !l || !h) return lw_err(L, n, "inductor_randint: bad seed");
    return lw_set_pointwise(L, n, lw_math4(L, IOP_RANDINT64, DT_I64, s, off, l, h), DT_I64, 0);
}

/* inductor_seeds(count, device): ir.RandomSeeds, an ExternKernelOut (aten.randint.low_out into
 * its own buffer), not a FallbackKernel with a MultiOutput */
static int lower_seeds(Lower *L, const Node *n, int arg) {
    (void)arg;
    return lw_extern_out(L, n);
}

const LoweringDef lowering_random_table[] = {
    {"prims.inductor_seeds.default", lower_seeds, 0},
    {"prims.inductor_lookup_seed.default", lower_lookup_seed, 0},
    {"prims.inductor_random.default", lower_inductor_random, 0},
    {"prims.inductor_randint.default", lower_inductor_randint, 0},
};
const int lowering_random_count = sizeof lowering_random_table / sizeof lowering_random_table[0];
