/* codegen_cuda_kernel.c — the CUDA emitting handler (LoopBodies replayed into CUDA C++) and the
 * kernel shapes of core/codegen/codegen_cuda.h:
 *
 *   pointwise group   -> flat grid-stride loop over all elements (the float4 path's loop steps
 *                        per block); float4 vector path when every
 *                        store (and the loads that can) are contiguous f32, then a scalar tail;
 *                        a static size that the grid covers exactly (flat_exact): one float4
 *                        per thread, 32-bit index, no loop
 *   reduction group   -> see RowPlan: persistent rows (row in registers: a warp or a block per
 *                        row by Inductor's persistent_reduction rule, both kernels where the
 *                        launch decides by occupancy; slots in float4 groups where the row
 *                        allows), generic block-per-row, or column reductions (split ones)
 * A kernel carries the programmatic-dependent-launch instructions only where a generated kernel
 * is launched right before (the wait) or right after it (launch_dependents): pdl_neighbours.
 *
 * The file around the kernels (prelude, extern kernels, host wrapper) is core/codegen/codegen_cuda.c. */
#include "codegen/codegen_cuda_kernel.h"
#include "codegen/codegen_kernel.h"
#include "codegen/codegen_f8.h"
#include "codegen/op_overrides.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ex(StrBuf *sb, const Expr *e) { sym_c_sb(e, sb); }

/* The C backend's types (cg_ctype) except bool and the CUDA half types. */
const char *cu_type(DType t) {
    switch (t) {
    case DT_BOOL: return "bool";
    case DT_F16: return "__half";
    case DT_BF16: return "__nv_bfloat16";
    /* storage only, cuComplex's layout: complex buffers are read and written by
     * FallbackKernels on the host (lowering.c, as Inductor); kernel_params refuses them */
    case DT_C64: return "float2";
    case DT_C128: return "double2";
    default: return cg_ctype(t);
    }
}

/* What CUDA spells differently from the shared (C) spelling: the rsqrt intrinsic, fmaxf/fminf
 * once NaN is ruled out (TritonOverrides uses triton_helpers.maximum/minimum likewise). */
static bool cuda_math(StrBuf *out, IrMathOp op, DType at, const char *const *a) {
    const char *sf = at == DT_F32 ? "f" : "";
    switch (op) {
    case IOP_RSQRT: sb_printf(out, "rsqrt%s(%s)", sf, a[0]); return true;
    /* the special functions Triton has in libdevice (pointwise_overrides_data's triton=...;
     * the others are FallbackKernels on the GPU: lowering_special.c) */
    case IOP_ERFINV: sb_printf(out, "erfinv%s(%s)", sf, a[0]); return true;
    case IOP_ERFCX: sb_printf(out, "erfcx%s(%s)", sf, a[0]); return true;
    case IOP_I0: case IOP_MODIFIED_BESSEL_I0: sb_printf(out, "cyl_bessel_i0%s(%s)", sf, a[0]); return true;
    case IOP_I1: case IOP_MODIFIED_BESSEL_I1: sb_printf(out, "cyl_bessel_i1%s(%s)", sf, a[0]); return true;
    case IOP_BESSEL_J0: case IOP_BESSEL_J1: case IOP_BESSEL_Y0: case IOP_BESSEL_Y1:
        sb_printf(out, "%s%s(%s)", ir_math_name(op) + 7, sf, a[0]);
        return true;
    case IOP_MAXIMUM: case IOP_MINIMUM:
        if (!dtype_is_float(at)) return false;
        sb_printf(out, "(%s != %s || %s != %s) ? %s + %s : %s%s(%s, %s)", a[0], a[0], a[1], a[1], a[0], a[1],
                  op == IOP_MAXIMUM ? "fmax" : "fmin", sf, a[0], a[1]);
        return true;
    default: return false;
    }
}
/* Half precision as Triton computes it (triton_compute_type): f16 and bf16 values are floats
 * in registers; a load converts up, a store rounds to nearest even. An explicit cast to f16 or
 * bf16 rounds too (as the cpp backend's legalized casts and eager do), then goes on as float. */
/* float8 likewise (codegen_f8.c: e4m3fn / e5m2 stores saturate, as Triton's conversion). */
static DType cuda_compute_dtype(DType t) { return t == DT_F16 || t == DT_BF16 || dtype_is_float8(t) ? DT_F32 : t; }
static bool cuda_to_dtype(StrBuf *out, const char *x, DType dt, DType src) {
    char fn[32];
    if (dt == DT_F16) sb_printf(out, "__half2float(__float2half_rn((float)(%s)))", x);
    else if (dt == DT_BF16) sb_printf(out, "__bfloat162float(__float2bfloat16_rn((float)(%s)))", x);
    else if (dtype_is_float8(dt)) sb_printf(out, "%s((float)(%s))", cg_f8_fn(dt, 'r', fn, sizeof fn), x);
    else return false;
    return true;
}
static const CgOverrides cuda_overrides = {"CUDA", cu_type, cuda_compute_dtype, "true", "false", cuda_math, cuda_to_dtype};

/* The register type of values of dtype t (float for f16/bf16). */
static const char *cu_vtype(DType t) { return cg_value_type(&cuda_overrides, t); }
/* A loaded element of a buffer of dtype t in its register type / a value v rounded for a
 * store into such a buffer: `__half2float(p[i])`, `__float2half_rn(v)`. */
static void cu_load_expr(StrBuf *out, DType t, const char *elem) {
    char fn[32];
    if (t == DT_F16) sb_printf(out, "__half2float(%s)", elem);
    else if (dtype_is_float8(t)) sb_printf(out, "%s(%s)", cg_f8_fn(t, 'l', fn, sizeof fn), elem);
    else if (t == DT_BF16) sb_printf(out, "__bfloat162float(%s)", elem);
    else sb_put(out, elem);
}
static const char *cu_store_val(DType t, const char *v, char *buf, size_t n) {
    char fn[32];
    if (dtype_is_float8(t)) { snprintf(buf, n, "%s(%s)", cg_f8_fn(t, 's', fn, sizeof fn), v); return buf; }
    if (t != DT_F16 && t != DT_BF16) return v;
    snprintf(buf, n, "%s(%s)", t == DT_F16 ? "__float2half_rn" : "__float2bfloat16_rn", v);
    return buf;
}

/* ---- the emitting handler ---- */
typedef struct VecBuf { char name[64]; bool is_store; bool loaded, stored; } VecBuf;

/* Persistent rows: loads of buffers the kernel does not write, kept in registers across the
 * nodes of a row kernel (mi_cK[slot]), so each element is read from memory once. */
typedef struct RowCache {
    struct { const Buffer *buf; const Expr *idx; int id; bool scalar; } e[64];
    int n;
    StrBuf decls;                      /* "float mi_c0[8];" at row scope */
    struct { IrReduceType rt; int src; char var[24]; } red[16];   /* reductions done in this row */
    int nred;
    int slots, threads;
    bool exact;
    bool vec4;                         /* slots in groups of 4 consecutive elements (vec4_access) */
    bool shared_rw;                    /* some node loads, from memory, what this kernel wrote */
    const Schedule *s;
    const SchedGroup *g;
} RowCache;

typedef struct Cu {
    OpsHandler h;
    StrBuf *pre, *body, *mid, *post;   /* before the element loop, in it, after it (reduce), store */
    const char *indent;
    CgVals v;                          /* values so far (tag: the RowCache entry a value was
                                          loaded through, or -1) */
    int *tmp;
    /* flat pointwise: vector mode (4 lanes, lane index `k`, flat index `x`) */
    bool vec;
    Expr *contig;                      /* flat contiguous index of the loop vars */
    VecBuf vb[32]; int nvb;
    bool vec_fail;
    StrBuf *vpre, *vpost;
    RowCache *rc;                      /* persistent row kernel, else NULL */
    const LoopBody *lb;                /* the body being replayed (persistent rows) */
    const char *reducer;               /* mi_block_reduce (row per block) / mi_col_reduce */
    const char *red_guard;             /* who stores a reduced value */
    char split_acc[40];                /* split column reduction: the accumulator and its combiner */
    const char *split_op;
    SymCtx *sy;                        /* indirect indexes name their variables in it */
    /* scan / sort nodes (codegen_cuda_scan.c): stores guarded by store_guard ("mi_in": the
     * element is in the row, the chunk's lanes past it only take part in the block scan);
     * a sort's tail (getitem, store) goes to `after`, the loop over the sorted row */
    const char *store_guard;
    StrBuf *after;
    IrVal scan_tuple;                  /* the handle ops.scan / ops.sort returned, -1: none */
    char scan_item[2][48];             /* its items and their dtypes */
    DType scan_dt[2];
    bool bad;
    char err[160];
} Cu;

static IrVal cu_new(Cu *e, const char *name, DType dt) { return cg_val_new(&e->v, name, cuda_compute_dtype(dt), -1); }
static IrVal cu_tmp(Cu *e, DType dt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static IrVal cu_tmp(Cu *e, DType dt, const char *fmt, ...) {
    char nm[32];
    snprintf(nm, sizeof nm, "tmp%d", (*e->tmp)++);
    const char *ct = dtype_is_complex(dt) ? NULL : cu_type(cuda_compute_dtype(dt));
    if (!ct) { e->bad = true; snprintf(e->err, sizeof e->err, "dtype %s is not supported by the CUDA code generator", dtype_abbrev(dt)); ct = "float"; }
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sb_printf(e->body, "%s%s %s = %s;\n", e->indent, ct, nm, buf);
    return cu_new(e, nm, dt);
}
static const char *nm(Cu *e, IrVal v) { return cg_val_name(&e->v, v); }
static DType dtv(Cu *e, IrVal v) { return cg_val_dtype(&e->v, v); }

static VecBuf *vec_buf(Cu *e, const char *name) {
    for (int i = 0; i < e->nvb; i++) if (!strcmp(e->vb[i].name, name)) return &e->vb[i];
    if (e->nvb == 32) return NULL;
    VecBuf *v = &e->vb[e->nvb++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    return v;
}

static bool vec4_access(const RowCache *rc, const LoopBody *b, Expr *idx, DType dt);
static bool vec4_index(MiCtx *ctx, const LoopBody *b, Expr *idx, int var);
static bool static_int(MiCtx *ctx, Expr *e, int64_t *v);
static IrVal cu_load(OpsHandler *h, Buffer *buf, Expr *index) {
    Cu *e = h->self;
    const char *name = ir_store_target(buf)->name;
    if (e->vec && index == e->contig && buf->layout.dtype == DT_F32) {
        VecBuf *v = vec_buf(e, name);
        if (v) {
            if (v->stored) return cu_tmp(e, DT_F32, "vo_%s[mi_k]", name);   /* written earlier in this lane */
            if (!v->loaded) {
                v->loaded = true;
                sb_printf(e->vpre, "%s    float vi_%s[4]; *reinterpret_cast<float4 *>(vi_%s) = *reinterpret_cast<const float4 *>(%s + 4 * mi_v);\n",
                          "        ", name, name, name);
            }
            return cu_tmp(e, DT_F32, "vi_%s[mi_k]", name);
        }
    }
    RowCache *rc = e->rc;
    const Buffer *tb = ir_store_target(buf);
    bool cacheable = rc && cu_type(buf->layout.dtype) && !cg_group_writes(rc->s, rc->g, tb);
    if (rc)   /* read before in this row, or stored by an earlier node of this thread */
        for (int i = 0; i < rc->n; i++)
            if (rc->e[i].buf == tb && rc->e[i].idx == index) {
                IrVal r = cu_tmp(e, buf->layout.dtype, rc->e[i].scalar ? "mi_c%d" : "mi_c%d[mi_j]", rc->e[i].id);
                if (!rc->e[i].scalar) e->v.tag[r] = rc->e[i].id;
                return r;
            }
    if (rc && !cacheable) rc->shared_rw = true;
    if (cacheable && rc->n < 64 && vec4_access(rc, e->lb, index, buf->layout.dtype)) {
        /* the group's first slot loads all 4 (one 16-byte load), every slot reads its own */
        int id = rc->n;
        rc->e[rc->n].buf = tb; rc->e[rc->n].idx = index; rc->e[rc->n].id = id; rc->e[rc->n].scalar = false; rc->n++;
        sb_printf(&rc->decls, "        float mi_c%d[%d];\n", id, rc->slots);
        sb_printf(e->body, "%sif ((mi_j & 3) == 0) { const float4 mi_q = *reinterpret_cast<const float4 *>(&%s[", e->indent, name);
        ex(e->body, index);
        sb_printf(e->body, "]); mi_c%d[mi_j] = mi_q.x; mi_c%d[mi_j + 1] = mi_q.y; mi_c%d[mi_j + 2] = mi_q.z; mi_c%d[mi_j + 3] = mi_q.w; }\n",
                  id, id, id, id);
        IrVal r = cu_tmp(e, DT_F32, "mi_c%d[mi_j]", id);
        e->v.tag[r] = id;
        return r;
    }
    StrBuf ix, el;
    sb_init(&ix);
    sb_init(&el);
    ex(&ix, index);
    sb_printf(&ix, "]");
    sb_printf(&el, "%s[%s", name, ix.s);
    sb_free(&ix);
    sb_init(&ix);
    cu_load_expr(&ix, buf->layout.dtype, el.s);
    IrVal r = cu_tmp(e, buf->layout.dtype, "%s", ix.s);
    sb_free(&ix);
    sb_free(&el);
    if (cacheable && rc->n < 64) {
        int id = rc->n;
        rc->e[rc->n].buf = tb; rc->e[rc->n].idx = index; rc->e[rc->n].id = id; rc->e[rc->n].scalar = false; rc->n++;
        sb_printf(&rc->decls, "        %s mi_c%d[%d];\n", cu_vtype(buf->layout.dtype), id, rc->slots);
        sb_printf(e->body, "%smi_c%d[mi_j] = %s;\n", e->indent, id, nm(e, r));
        e->v.tag[r] = id;
    }
    return r;
}
static bool group_local_any(const Schedule *s, const SchedGroup *g, const Buffer *b, const Expr *store_idx, bool red);
static bool group_local(const Schedule *s, const SchedGroup *g, const Buffer *b, const Expr *store_idx) { return group_local_any(s, g, b, store_idx, false); }
/* The array a store names: a ConcatKernel input's NonOwningLayout slice is stored into the
 * cat's storage (its index already carries the slice's offset and strides). */
static const char *store_name(const Buffer *buf) { return buf->alias_of ? buf->alias_of->name : buf->name; }
static void cu_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Cu *e = h->self;
    RowCache *rc = e->rc;
    if (rc && cu_type(buf->layout.dtype) && rc->n < 64) {   /* keep the value for later nodes */
        int id = rc->n;
        rc->e[rc->n].buf = buf; rc->e[rc->n].idx = index; rc->e[rc->n].id = id; rc->e[rc->n].scalar = false; rc->n++;
        sb_printf(&rc->decls, "        %s mi_c%d[%d];\n", cu_vtype(buf->layout.dtype), id, rc->slots);
        sb_printf(e->body, "%smi_c%d[mi_j] = %s;\n", e->indent, id, nm(e, v));
        if (group_local(rc->s, rc->g, buf, index)) {
            sb_printf(e->body, "%s/* %s is only read inside this kernel, from registers: not stored */\n", e->indent, buf->name);
            return;
        }
        if (!e->store_guard && vec4_access(rc, e->lb, index, buf->layout.dtype)) {   /* the group's last slot stores all 4 */
            sb_printf(e->body, "%sif ((mi_j & 3) == 3) *reinterpret_cast<float4 *>(&%s[(", e->indent, store_name(buf));
            ex(e->body, index);
            sb_printf(e->body, ") - 3]) = make_float4(mi_c%d[mi_j - 3], mi_c%d[mi_j - 2], mi_c%d[mi_j - 1], mi_c%d[mi_j]);\n", id, id, id, id);
            return;
        }
    }
    const char *name = store_name(buf);
    if (e->vec) {
        VecBuf *vb = index == e->contig && buf->layout.dtype == DT_F32 ? vec_buf(e, name) : NULL;
        if (!vb) { e->vec_fail = true; return; }
        if (!vb->stored) {
            vb->stored = true;
            sb_printf(e->vpre, "            float vo_%s[4];\n", name);
            sb_printf(e->vpost, "            *reinterpret_cast<float4 *>(%s + 4 * mi_v) = *reinterpret_cast<const float4 *>(vo_%s);\n",
                      name, name);
        }
        sb_printf(e->body, "%svo_%s[mi_k] = %s;\n", e->indent, name, nm(e, v));
        return;
    }
    sb_printf(e->body, "%s%s%s%s[", e->indent, e->store_guard ? e->store_guard : "", e->store_guard ? " " : "", name);
    ex(e->body, index);
    char sv[128];
    sb_printf(e->body, "] = %s;\n", cu_store_val(buf->layout.dtype, nm(e, v), sv, sizeof sv));
}
/* ops.indirect_indexing: the value as int64, wrapped (x < 0: x + size); an index outside the
 * dim is replaced by 0 so the kernel stays in bounds (not yet reported to the host: the C
 * backend reports it, core/codegen/codegen_kernel.c). The variable's name stands for it in
 * the indexes that follow. */
static Expr *cu_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    Cu *e = h->self;
    StrBuf sz;
    sb_init(&sz);
    ex(&sz, size);
    const char *xv = nm(e, x);
    IrVal v = wrap_neg ? cu_tmp(e, DT_I64, "%s < 0 ? (int64_t)%s + %s : (int64_t)%s", xv, xv, sz.s, xv)
                       : cu_tmp(e, DT_I64, "(int64_t)%s", xv);
    sb_printf(e->body, "%sif (!(0 <= %s && %s < %s)) %s = 0;\n", e->indent, nm(e, v), nm(e, v), sz.s, nm(e, v));
    sb_free(&sz);
    e->vec_fail |= e->vec;   /* gathers: the scalar path */
    return sym_symbol(e->sy, nm(e, v));
}
/* ops.bucketize: mi_bucketize's binary search (Triton's bucketize_binary_search) over the run
 * of the boundaries buffer (a kernel argument through its StarDep) at the value's offset:
 * "int64_t tmp3 = (int64_t)mi_bucketize(buf0, (int64_t)tmp2, 4LL, 1LL, tmp1, true);" */
static IrVal cu_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) {
    Cu *e = h->self;
    StrBuf len, st;
    sb_init(&len);
    sb_init(&st);
    ex(&len, b->len);
    ex(&st, b->stride);
    IrVal r = cu_tmp(e, b->index_dtype, "(%s)mi_bucketize(%s, (int64_t)%s, %s, %s, %s, %s)", cu_type(b->index_dtype),
                     ir_store_target(b->buf)->name, nm(e, off), len.s, st.s, nm(e, v), b->right ? "true" : "false");
    sb_free(&len);
    sb_free(&st);
    e->vec_fail |= e->vec;   /* a gather: the scalar path */
    return r;
}
/* ops.store(..., mode="atomic_add"): atomicAdd (int64 through unsigned long long) */
static void cu_store_atomic_add(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Cu *e = h->self;
    if (e->vec) { e->vec_fail = true; return; }
    DType dt = buf->layout.dtype;
    if (dt != DT_F32 && dt != DT_F64 && dt != DT_I32 && dt != DT_I64 && dt != DT_F16) {
        e->bad = true;
        snprintf(e->err, sizeof e->err, "atomic_add of dtype %s is not supported by the CUDA code generator", dtype_abbrev(dt));
        return;
    }
    StrBuf ix;
    sb_init(&ix);
    ex(&ix, index);
    const char *t = ir_store_target(buf)->name;
    if (dt == DT_I64) sb_printf(e->body, "%satomicAdd((unsigned long long *)&%s[%s], (unsigned long long)%s);\n", e->indent, t, ix.s, nm(e, v));
    else if (dt == DT_F16) sb_printf(e->body, "%satomicAdd(&%s[%s], __float2half_rn(%s));\n", e->indent, t, ix.s, nm(e, v));
    else sb_printf(e->body, "%satomicAdd(&%s[%s], %s);\n", e->indent, t, ix.s, nm(e, v));
    sb_free(&ix);
}
static IrVal cu_constant(OpsHandler *h, double v, DType dt) {
    Cu *e = h->self;
    char *s = cg_constant(&cuda_overrides, v, dt);
    IrVal r = cu_tmp(e, dt, "%s", s);
    free(s);
    return r;
}
static IrVal cu_index_expr(OpsHandler *h, Expr *x, DType dt) {
    Cu *e = h->self;
    StrBuf s;
    sb_init(&s);
    ex(&s, x);
    IrVal r = cu_tmp(e, dt, "%s", s.s);
    sb_free(&s);
    return r;
}
static IrVal cu_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    Cu *e = h->self;
    char *x = cg_to_dtype(&cuda_overrides, nm(e, v), dt, src);
    IrVal r = cu_tmp(e, dt, "%s", x);
    free(x);
    return r;
}

static IrVal cu_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) {
    Cu *e = h->self;
    const char *args[4];
    for (int i = 0; i < ir_math_arity(op) && i < 4; i++) args[i] = nm(e, a[i]);
    char *x = cg_math(&cuda_overrides, op, dtv(e, a[0]), args);
    if (!x) {
        e->bad = true;
        snprintf(e->err, sizeof e->err, "op %s has no CUDA lowering", ir_math_name(op));
    }
    IrVal r = cu_tmp(e, dt, "%s", x ? x : "0");
    free(x);
    return r;
}

/* Reductions: a per-thread accumulator updated in the element loop, then mi_block_reduce. */
static IrVal cu_reduction(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *vs) {
    Cu *e = h->self;
    char acc[32];
    snprintf(acc, sizeof acc, "acc%d", (*e->tmp)++);
    const char *ct = cu_vtype(dt), *st = cu_vtype(src);
    IrVal v = vs[0];
    const char *x = nm(e, v);
    const char *ind = "            ";
    char out[64];
    snprintf(out, sizeof out, "%s", acc);
    RowCache *rc = e->rc;
    /* (welford_combine's three values are no one row value: not cached) */
    int src_id = rc && rt != RED_WELFORD_COMBINE && v >= 0 && v < e->v.n ? e->v.tag[v] : -1;
    if (src_id >= 0)   /* the same reduction of the same row values already ran in this kernel */
        for (int i = 0; i < rc->nred; i++)
            if (rc->red[i].rt == rt && rc->red[i].src == src_id) {
                snprintf(out, sizeof out, "%s%s", rc->red[i].var, rt == RED_ARGMAX || rt == RED_ARGMIN ? ".i" : "");
                return cu_new(e, out, dt);
            }
    if (src_id >= 0 && rc->nred < 16) {
        int k = rc->nred++;
        rc->red[k].rt = rt;
        rc->red[k].src = src_id;
        snprintf(rc->red[k].var, sizeof rc->red[k].var, "mi_red%d", k);
        const char *ty = rt == RED_WELFORD ? "MiWelford" : NULL;
        char tyb[48];
        if (rt == RED_ARGMAX || rt == RED_ARGMIN) { snprintf(tyb, sizeof tyb, "MiArg<%s>", st); ty = tyb; }
        sb_printf(&rc->decls, "        %s mi_red%d;\n", ty ? ty : ct, k);
    }
    /* A persistent row's thread reduces its slots into 4 partial accumulators (slot j into
     * j % 4), combined pairwise after the slot loop: dependency chains of slots / 4 instead of
     * slots (32 in a warp-per-row kernel of 1024). Sums are reassociated as Triton's tl.sum
     * does (a tree); max / min with NaN propagation do not depend on the order. */
    const bool part4 = rc && rc->slots >= 8 && rc->slots % 4 == 0;
    if (rt == RED_WELFORD && rc) {
        /* persistent row: two passes over registers (sum, then squared deviations), no divisions
         * per element; n is the row length */
        if (part4) {
            sb_printf(e->pre, "%sfloat %s_s4[4] = {0.0f, 0.0f, 0.0f, 0.0f}; float %s_x[%d];\n", ind, acc, acc, rc->slots);
            sb_printf(e->body, "%s%s_s4[mi_j & 3] += (float)%s; %s_x[mi_j] = (float)%s;\n", e->indent, acc, x, acc, x);
            sb_printf(e->mid, "%sfloat %s_s = (%s_s4[0] + %s_s4[1]) + (%s_s4[2] + %s_s4[3]);\n", ind, acc, acc, acc, acc, acc);
        } else {
            sb_printf(e->pre, "%sfloat %s_s = 0.0f; float %s_x[%d];\n", ind, acc, acc, rc->slots);
            sb_printf(e->body, "%s%s_s += (float)%s; %s_x[mi_j] = (float)%s;\n", e->indent, acc, x, acc, x);
        }
        sb_printf(e->mid, "%s%s_s = mi_block_reduce(%s_s, MiSum(), mi_shared);\n"
                          "%sconst float %s_mean = %s_s / (float)mi_inner;\n"
                          "%sfloat %s_q%s = %s;\n"
                          "%s#pragma unroll\n"
                          "%sfor (int mi_j = 0; mi_j < %d; mi_j++)\n"
                          "%s    if (threadIdx.x + (int64_t)mi_j * %d < mi_inner || %d) { float d_ = %s_x[mi_j] - %s_mean; %s_q%s += d_ * d_; }\n",
                  ind, acc, acc, ind, acc, acc, ind, acc, part4 ? "4[4]" : "", part4 ? "{0.0f, 0.0f, 0.0f, 0.0f}" : "0.0f",
                  ind, ind, rc->slots, ind, rc->threads, rc->exact, acc, acc, acc, part4 ? "4[mi_j & 3]" : "");
        if (part4) sb_printf(e->mid, "%sfloat %s_q = (%s_q4[0] + %s_q4[1]) + (%s_q4[2] + %s_q4[3]);\n", ind, acc, acc, acc, acc, acc);
        sb_printf(e->mid, "%s%s_q = mi_block_reduce(%s_q, MiSum(), mi_shared);\n"
                          "%sconst MiWelford %s = {%s_mean, %s_q, (float)mi_inner};\n",
                  ind, acc, acc, ind, acc, acc, acc);
        if (src_id >= 0) sb_printf(e->mid, "%smi_red%d = %s;\n", ind, rc->nred - 1, acc);
        return cu_new(e, out, dt);
    }
    if (part4 && (rt == RED_SUM || rt == RED_MAX || rt == RED_MIN)) {
        bool mx = rt == RED_MAX;
        const char *init = rt == RED_SUM ? "0" : cg_red_init(dt, mx), *f = mx ? "mi_max_nan" : "mi_min_nan";
        sb_printf(e->pre, "%s%s %s_p[4] = {%s, %s, %s, %s};\n", ind, ct, acc, init, init, init, init);
        if (rt == RED_SUM) {
            sb_printf(e->body, "%s%s_p[mi_j & 3] += %s;\n", e->indent, acc, x);
            sb_printf(e->mid, "%s%s %s = (%s_p[0] + %s_p[1]) + (%s_p[2] + %s_p[3]);\n", ind, ct, acc, acc, acc, acc, acc);
        } else {
            sb_printf(e->body, "%s%s_p[mi_j & 3] = %s(%s_p[mi_j & 3], %s);\n", e->indent, acc, f, acc, x);
            sb_printf(e->mid, "%s%s %s = %s(%s(%s_p[0], %s_p[1]), %s(%s_p[2], %s_p[3]));\n", ind, ct, acc, f, f, acc, acc, f, acc, acc);
        }
        sb_printf(e->mid, "%s%s = %s(%s, %s(), mi_shared);\n", ind, acc, e->reducer, acc, rt == RED_SUM ? "MiSum" : mx ? "MiMax" : "MiMin");
        if (src_id >= 0) sb_printf(e->mid, "%smi_red%d = %s;\n", ind, rc->nred - 1, acc);
        return cu_new(e, out, dt);
    }
    switch (rt) {
    case RED_SUM:
        snprintf(e->split_acc, sizeof e->split_acc, "%s", acc); e->split_op = "MiSum";
        sb_printf(e->pre, "%s%s %s = 0;\n", ind, ct, acc);
        sb_printf(e->body, "%s%s += %s;\n", e->indent, acc, x);
        sb_printf(e->mid, "%s%s = %s(%s, MiSum(), mi_shared);\n", ind, acc, e->reducer, acc);
        break;
    case RED_PROD:
        snprintf(e->split_acc, sizeof e->split_acc, "%s", acc); e->split_op = "MiProd";
        sb_printf(e->pre, "%s%s %s = 1;\n", ind, ct, acc);
        sb_printf(e->body, "%s%s *= %s;\n", e->indent, acc, x);
        sb_printf(e->mid, "%s%s = %s(%s, MiProd(), mi_shared);\n", ind, acc, e->reducer, acc);
        break;
    case RED_MAX: case RED_MIN: {
        bool mx = rt == RED_MAX;
        snprintf(e->split_acc, sizeof e->split_acc, "%s", acc); e->split_op = mx ? "MiMax" : "MiMin";
        sb_printf(e->pre, "%s%s %s = %s;\n", ind, ct, acc, cg_red_init(dt, mx));
        /* NaN propagates like torch.amax/amin */
        sb_printf(e->body, "%s%s = %s(%s, %s);\n", e->indent, acc, mx ? "mi_max_nan" : "mi_min_nan", acc, x);
        sb_printf(e->mid, "%s%s = %s(%s, %s(), mi_shared);\n", ind, acc, e->reducer, acc, mx ? "MiMax" : "MiMin");
        break;
    }
    case RED_ARGMAX: case RED_ARGMIN: {
        bool mx = rt == RED_ARGMAX;
        sb_printf(e->pre, "%sMiArg<%s> %s = {%s, INT64_MAX};\n", ind, st, acc, cg_red_init(src, mx));
        sb_printf(e->body, "%s%s = mi_arg_combine<%s, %d>(%s, MiArg<%s>{%s, mi_r});\n", e->indent, acc, st, mx, acc, st, x);
        sb_printf(e->mid, "%s%s = %s(%s, MiArgOp<%s, %d>(), mi_shared);\n", ind, acc, e->reducer, acc, st, mx);
        snprintf(out, sizeof out, "%s.i", acc);
        break;
    }
    case RED_WELFORD:
        sb_printf(e->pre, "%sMiWelford %s = {0.0f, 0.0f, 0.0f};\n", ind, acc);
        sb_printf(e->body, "%smi_welford_add(%s, (float)%s);\n", e->indent, acc, x);
        sb_printf(e->mid, "%s%s = %s(%s, MiWelfordOp(), mi_shared);\n", ind, acc, e->reducer, acc);
        break;
    case RED_WELFORD_COMBINE:   /* partial (mean, m2, weight) triples: triton_helpers.welford_combine */
        sb_printf(e->pre, "%sMiWelford %s = {0.0f, 0.0f, 0.0f};\n", ind, acc);
        sb_printf(e->body, "%s%s = MiWelfordOp()(%s, MiWelford{(float)%s, (float)%s, (float)%s});\n", e->indent, acc, acc, x,
                  nm(e, vs[1]), nm(e, vs[2]));
        sb_printf(e->mid, "%s%s = %s(%s, MiWelfordOp(), mi_shared);\n", ind, acc, e->reducer, acc);
        break;
    default: break;
    }
    if (src_id >= 0) sb_printf(e->mid, "%smi_red%d = %s;\n", ind, rc->nred - 1, acc);
    return cu_new(e, out, dt);
}
static IrVal cu_getitem(OpsHandler *h, IrVal v, int k) {
    Cu *e = h->self;
    if (v >= 0 && v == e->scan_tuple && k >= 0 && k < 2) return cu_new(e, e->scan_item[k], e->scan_dt[k]);
    char n2[96];
    static const char *sfx[3] = {".mean", ".m2", ".n"};
    snprintf(n2, sizeof n2, "%s%s", nm(e, v), sfx[k < 3 && k >= 0 ? k : 0]);
    return cu_new(e, n2, dtv(e, v));
}
static void cu_store_red(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Cu *e = h->self;
    RowCache *rc = e->rc;
    if (rc && cu_type(buf->layout.dtype) && rc->n < 64) {   /* every thread holds the reduced value */
        const Buffer *tb = ir_store_target(buf);
        int id = rc->n;
        rc->e[rc->n].buf = tb; rc->e[rc->n].idx = index; rc->e[rc->n].id = id; rc->e[rc->n].scalar = true; rc->n++;
        sb_printf(&rc->decls, "        %s mi_c%d;\n", cu_vtype(buf->layout.dtype), id);
        sb_printf(e->post, "            mi_c%d = %s;\n", id, nm(e, v));
        if (group_local_any(rc->s, rc->g, tb, index, true)) {   /* (cu_buffer_unstored) */
            sb_printf(e->post, "            /* %s is only read inside this kernel, from registers: not stored */\n", tb->name);
            return;
        }
    }
    sb_printf(e->post, "            if (%s) %s[", e->red_guard, ir_store_target(buf)->name);
    ex(e->post, index);
    char sv[128];
    sb_printf(e->post, "] = %s;\n", cu_store_val(buf->layout.dtype, nm(e, v), sv, sizeof sv));
}

/* ops.scan: this chunk's values scanned across the block and continued from the carry
 * (mi_scan_chunk; emit_rows runs the node's element loop in chunks of blockDim.x with the lanes
 * past the row clamped to its last element and their stores guarded). ops.sort: phase A (the
 * element loop) stages (key, index) in shared memory, the node's `mid` sorts the row
 * (mi_block_sort), and the rest of the body runs in a second loop (`after`) on the sorted row. */
static IrVal cu_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dtypes, const IrVal *v, int n) {
    Cu *e = h->self;
    const char *T = cu_vtype(dtypes[0]);
    int id = (*e->tmp)++;
    const char *x0 = nm(e, v[0]), *x1 = n > 1 ? nm(e, v[1]) : "0";
    if (!e->pre || !e->mid) { e->bad = true; snprintf(e->err, sizeof e->err, "ops.scan outside a row kernel"); return cu_new(e, "0", dtypes[0]); }
    if (op == SCAN_SORT) {
        if (!e->after) { e->bad = true; snprintf(e->err, sizeof e->err, "ops.sort outside a sort loop"); return cu_new(e, "0", dtypes[0]); }
        sb_printf(e->pre, "            %s *mi_sk%d = reinterpret_cast<%s *>(mi_sh_scan), *mi_sks%d = reinterpret_cast<%s *>(mi_sh_scan + 8192);\n"
                          "            int64_t *mi_si%d = reinterpret_cast<int64_t *>(mi_sh_scan + 4096), *mi_sis%d = reinterpret_cast<int64_t *>(mi_sh_scan + 12288);\n",
                  T, id, T, id, T, id, id);
        sb_printf(e->body, "%smi_sk%d[mi_r] = (%s)%s; mi_si%d[mi_r] = (int64_t)%s;\n", e->indent, id, T, x0, id, x1);
        sb_printf(e->mid, "            mi_block_sort<%s>(mi_sk%d, mi_si%d, mi_sks%d, mi_sis%d, mi_inner, %s);\n", T, id, id, id, id,
                  flags & SCAN_DESCENDING ? "true" : "false");
        snprintf(e->scan_item[0], sizeof e->scan_item[0], "mi_sks%d[mi_r]", id);
        snprintf(e->scan_item[1], sizeof e->scan_item[1], "mi_sis%d[mi_r]", id);
        e->body = e->after;
    } else {
        sb_printf(e->pre, "            MiSP<%s> mi_carry%d;\n", T, id);
        sb_printf(e->body, "%sconst MiSP<%s> mi_s%d = mi_scan_chunk(MiSP<%s>{(%s)%s, (int64_t)%s}, %s(), reinterpret_cast<MiSP<%s> *>(mi_sh_scan), mi_carry%d, mi_c == 0,\n"
                           "%s    mi_inner - mi_c < (int64_t)blockDim.x ? mi_inner - mi_c : (int64_t)blockDim.x);\n",
                  e->indent, T, id, T, T, x0, x1, cu_scan_functor(op), T, id, e->indent);
        snprintf(e->scan_item[0], sizeof e->scan_item[0], "mi_s%d.v", id);
        snprintf(e->scan_item[1], sizeof e->scan_item[1], "mi_s%d.i", id);
    }
    e->scan_dt[0] = dtypes[0];
    e->scan_dt[1] = n > 1 ? dtypes[1] : dtypes[0];
    e->scan_tuple = cu_new(e, e->scan_item[0], dtypes[0]);
    return e->scan_tuple;
}

static void cu_init(Cu *e, int *tmp, StrBuf *pre, StrBuf *body, StrBuf *mid, StrBuf *post, const char *indent) {
    memset(e, 0, sizeof *e);
    e->pre = pre; e->body = body; e->mid = mid; e->post = post;
    e->indent = indent;
    e->tmp = tmp;
    e->reducer = "mi_block_reduce";
    e->red_guard = "threadIdx.x == 0";
    e->scan_tuple = -1;
    e->h = (OpsHandler){e, cu_load, cu_store, cu_constant, cu_index_expr, cu_to_dtype, cu_math,
                        cu_reduction, cu_getitem, cu_store_red, cu_indirect, cu_store_atomic_add, cu_scan, cu_bucketize};
}
static void cu_done(Cu *e) { cg_vals_free(&e->v); }

/* ---- kernels ---- */


/* A buffer this group writes at store_idx that nobody else reads and that the group only reads
 * back at that same index: its values can live in registers alone (persistent rows). */
static bool group_local_any(const Schedule *s, const SchedGroup *g, const Buffer *b, const Expr *store_idx, bool red) {
    if (b->kind != BUF_COMPUTED || b->mutates || b->alias_of || b->output_index >= 0 || (b->is_reduction && !red)) return false;
    for (int k = 0; k < s->nnodes; k++) {
        const SchedNode *sn = &s->nodes[k];
        bool in_g = false;
        for (int i = 0; i < g->n; i++) in_g |= g->nodes[i] == k;
        if (in_g) {
            const LoopBody *body = sn->buf->body;
            for (int o = 0; body && o < body->nops; o++) {
                const LoopOp *op = &body->ops[o];
                if ((op->kind == LOP_LOAD || op->kind == LOP_STORE) && op->buf && ir_store_target(op->buf) == b &&
                    body->indexes[op->index] != store_idx) return false;
            }
            continue;
        }
        if (sn->dead) continue;
        for (int r = 0; r < sn->deps.nreads; r++) if (sn->deps.reads[r].buf == b) return false;
    }
    return true;
}
bool cu_group_has_reduction(const Schedule *s, const SchedGroup *g) {
    for (int i = 0; i < g->n; i++)
        if (s->nodes[g->nodes[i]].buf->body->nred) return true;
    return false;
}

/* Product of ranges[from..to) as C ("1LL" when empty). */
static void emit_numel(StrBuf *sb, const LoopBody *b, int from, int to) {
    if (from >= to) { sb_put(sb, "1LL"); return; }
    for (int v = from; v < to; v++) {
        if (v > from) sb_put(sb, " * ");
        sb_putc(sb, '(');
        ex(sb, b->ranges[v]);
        sb_putc(sb, ')');
    }
}

/* The ranges [from, to) multiply to a constant below 2^31. */
static bool fits_int32(const LoopBody *b, int from, int to) {
    int64_t n = 1, r;
    for (int v = from; v < to; v++) {
        if (!sym_is_int(b->ranges[v], &r) || r < 0) return false;
        n *= r;
        if (n >= (1LL << 31)) return false;
    }
    return true;
}

/* const int64_t pK = ... for vars [from, to) from the linear index `lin` (row-major). The trick:
 * where the ranges' product fits in 32 bits the divisions and remainders are 32-bit (Triton's
 * int32 index dtype, Inductor's choice whenever numel fits), which is cheaper on the GPU and
 * also keeps nvcc 13.0's cicc from crashing on a 64-bit `%` / `/=` chain it miscompiles in
 * some reduction loops (cuda_perceiver_cross_attn_train's backward, tests/fixtures/unseen). */
static void emit_decompose(StrBuf *sb, const char *ind, const LoopBody *b, int from, int to, const char *lin) {
    if (from >= to) return;
    if (to - from == 1) { sb_printf(sb, "%sconst int64_t %s = %s;\n", ind, b->vars[from]->name, lin); return; }
    bool i32 = fits_int32(b, from, to);
    sb_printf(sb, i32 ? "%sint mi_rem = (int)(%s);\n" : "%sint64_t mi_rem = %s;\n", ind, lin);
    for (int v = to - 1; v > from; v--) {
        sb_printf(sb, "%sconst int64_t %s = mi_rem %% %s(", ind, b->vars[v]->name, i32 ? "(int)" : "");
        ex(sb, b->ranges[v]);
        sb_printf(sb, "); mi_rem /= %s(", i32 ? "(int)" : "");
        ex(sb, b->ranges[v]);
        sb_put(sb, ");\n");
    }
    sb_printf(sb, "%sconst int64_t %s = mi_rem;\n", ind, b->vars[from]->name);
}

/* The flat contiguous index sum_k p_k * prod(ranges after k) of a body's vars. */
static Expr *contig_index(SymCtx *sy, const LoopBody *b) {
    Expr *idx = sym_int(sy, 0), *stride = sym_int(sy, 1);
    for (int v = b->nvars - 1; v >= 0; v--) {
        idx = sym_add(sy, idx, sym_mul(sy, b->vars[v], stride));
        stride = sym_mul(sy, stride, b->ranges[v]);
    }
    return idx;
}

/* The buffer whose storage g writes b in (Inductor's in_out_ptr: sched_inplace.c) when g reads
 * that one too, else NULL: b is then no argument of g's kernel but a name for the other one's. */
static const Buffer *inplace_src(const Schedule *s, const SchedGroup *g, const Buffer *b) {
    int a = s->inplace_of ? s->inplace_of[b->id] : -1;
    return a >= 0 && cg_group_touches(s, g, s->ir->bufs[a]) ? s->ir->bufs[a] : NULL;
}

/* Does g write some buffer in a's storage (a is then an in/out argument)? */
static bool inplace_dst(const Schedule *s, const SchedGroup *g, const Buffer *a) {
    for (int i = 0; i < g->n; i++)
        if (inplace_src(s, g, s->nodes[g->nodes[i]].buf) == a) return true;
    return false;
}

/* The kernel's parameters, every buffer g touches in buffer order (one written in place of
 * another: a local name for that one's pointer, `float *const buf6 = buf5;`), then MiSyms; and
 * the opening of its body. */
static int kernel_params(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out) {
    const IrModule *m = s->ir;
    int na = 0;
    StrBuf alias;
    sb_init(&alias);
    sb_put(&alias, "");
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (!cg_group_touches(s, g, b)) continue;
        const Buffer *src = inplace_src(s, g, b);
        if (src) {
            const char *ct = cu_type(b->layout.dtype);
            sb_printf(&alias, "    %s *const %s = %s; (void)%s;   /* in place of %s (in_out_ptr) */\n", ct, b->name, src->name, b->name, src->name);
            continue;
        }
        const char *ct = cu_type(b->layout.dtype);
        if (!ct || dtype_is_complex(b->layout.dtype)) {
            sb_free(&alias);
            return mi_err(ctx, NULL, 0, 0, "dtype %s of buffer '%s' is not supported by the CUDA code generator%s", dtype_abbrev(b->layout.dtype), b->name,
                          ct ? " in a generated kernel (complex tensors are read and written by FallbackKernels only, as in Inductor)" : "");
        }
        /* __restrict__ only on what the kernel only reads: a buffer it writes is read back by other
         * threads of the block after a __syncthreads (a row kernel's later node reads what an
         * earlier one stored: a sort's values, a reduction's result), and with __restrict__ on it
         * nvcc may serve those reads from a stale copy (cuda_sort_cumsum on an H200: the scan after
         * sort, max and sum read the sum as written before; right without it) */
        bool w = cg_group_writes(s, g, b) || inplace_dst(s, g, b);
        sb_printf(out, "%s%s%s *%s%s", na++ ? ", " : "", w ? "" : "const ", ct, w ? "" : "__restrict__ ", b->name);
    }
    sb_printf(out, "%sMiSyms mi_sy)\n{\n%s", na ? ", " : "", alias.s);
    sb_free(&alias);
    for (int i = 0; i < m->nsyms; i++) sb_printf(out, "    const int64_t %s = mi_sy.v[%d]; (void)%s;\n", m->sym_names[i], i, m->sym_names[i]);
    sb_put(out, "    (void)mi_sy;\n");
    return 0;
}

/* The number of elements of a flat group when it is static (n) and exactly covered by
 * cu_emit_launch's grid of n / 1024 blocks of 256 threads, one float4 each: n a multiple of 1024
 * below 2^31. Inductor's rules for the same case: its Triton kernel drops the mask where xnumel
 * is a multiple of XBLOCK (`xmask = tl.full([XBLOCK], True, tl.int1)`, no bound check) and
 * indexes in int32 where every numel fits (select_index_dtype). seed_example (4096 x 4096):
 * this form 35.6 us against 36.5 for the block-strided loop with a guard and 64-bit indices,
 * Triton's kernel 36.4 (H200, one harness: bench/results/cuda-lab-2026-11-26T1806.log). */
static bool flat_exact(MiCtx *ctx, const LoopBody *b) {
    int64_t n = 1, r;
    for (int v = 0; v < b->nvars; v++) {
        if (!static_int(ctx, b->ranges[v], &r) || r < 0) return false;
        n *= r;
        if (n >= (1LL << 31)) return false;
    }
    return b->nvars > 0 && n > 0 && n % 1024 == 0;
}

/* The loops of a flat pointwise group over mi_n elements from mi_start by mi_step (declared
 * before): a float4 path when it can, then the scalar grid-stride loop. exact (flat_exact, the
 * kernel's own launch): the float4 path alone, a float4 per thread, 32-bit index, no loop or
 * guard, when the float4 path is possible; returns 1 then (the caller declares no mi_start /
 * mi_step), else 0, -1 on error. */
static int emit_flat_loops(MiCtx *ctx, const Schedule *s, const SchedGroup *g, bool exact, StrBuf *out) {
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    int tmp = 0;
    /* vector path */
    StrBuf vbody, vpre, vpost;
    sb_init(&vbody); sb_init(&vpre); sb_init(&vpost);
    Cu e;
    cu_init(&e, &tmp, NULL, &vbody, NULL, NULL, "                ");
    e.sy = ctx->sym;
    e.vec = true;
    e.contig = contig_index(ctx->sym, b0);
    e.vpre = &vpre; e.vpost = &vpost;
    for (int i = 0; i < g->n; i++) {
        const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
        sb_printf(&vbody, "                /* %s: %s */\n", s->nodes[g->nodes[i]].name, s->nodes[g->nodes[i]].buf->name);
        loop_body_run(b, &e.h);
    }
    bool vec_ok = !e.vec_fail && !e.bad && vpost.s && b0->nvars > 0;
    cu_done(&e);
    exact = exact && vec_ok;
    if (exact) {
        sb_put(out, "    /* one float4 per thread: the grid covers the mi_n / 4 float4s exactly (mi_n static, a multiple of 1024 below 2^31) */\n"
                    "    {\n"
                    "        const int mi_v = (int)blockIdx.x * 256 + (int)threadIdx.x;\n"
                    "        {\n");
    } else if (vec_ok) {
        /* the loop runs per block (its condition the same in all threads of the block), a lane
         * past the end skips its float4: bench/cuda/pointwise_lab.cu on an H200, seed_example's
         * kernel with the same grid (a float4 per thread) 36.7-36.9 us as a per-thread
         * grid-stride loop, 36.0-36.2 so (cuda-pointwise-lab-2026-11-26T1503.log; a copy of its
         * bytes 35.8; 2 float4s per thread or 32-bit indices no faster there; without the
         * loop and guard too, flat_exact's form, faster: cuda-lab-2026-11-26T1806.log) */
        sb_put(out, "    /* float4 path: 4 consecutive elements per thread and step */\n"
                    "    const int64_t mi_nv = mi_n / 4;\n"
                    "    for (int64_t mi_t = mi_start - threadIdx.x; mi_t < mi_nv; mi_t += mi_step) {\n"
                    "        const int64_t mi_v = mi_t + threadIdx.x;\n"
                    "        if (mi_v < mi_nv) {\n");
    }
    if (vec_ok) {
        sb_put(out, vpre.s);
        /* innermost range a static multiple of 4: the 4 lanes share the outer vars, decomposed
         * once per float4 (and a load of those alone, x[2, :] in seed_example, is the same
         * load in every lane) */
        int64_t last = 0;
        int nv = b0->nvars;
        bool hoist = nv > 1 && static_int(ctx, b0->ranges[nv - 1], &last) && last > 0 && last % 4 == 0;
        if (hoist && exact)
            sb_printf(out, "            const int mi_q = (4 * mi_v) / %lld, mi_l0 = 4 * mi_v - mi_q * %lld;\n", (long long)last, (long long)last);
        else if (hoist)
            sb_printf(out, "            const int64_t mi_q = (4 * mi_v) / %lldLL, mi_l0 = 4 * mi_v - mi_q * %lldLL;\n", (long long)last, (long long)last);
        if (hoist) {
            emit_decompose(out, "            ", b0, 0, nv - 1, "mi_q");
        }
        sb_put(out, "            #pragma unroll\n            for (int mi_k = 0; mi_k < 4; mi_k++) {\n"
                    "                const int64_t mi_x = 4 * mi_v + mi_k;\n");
        if (hoist) sb_printf(out, "                const int64_t %s = mi_l0 + mi_k; (void)%s; (void)mi_x;\n", b0->vars[nv - 1]->name, b0->vars[nv - 1]->name);
        else emit_decompose(out, "                ", b0, 0, nv, "mi_x");
        sb_put(out, vbody.s);
        sb_put(out, "            }\n");
        sb_put(out, vpost.s);
        sb_put(out, "        }\n    }\n");
    }
    sb_free(&vbody); sb_free(&vpre); sb_free(&vpost);
    if (exact) return 1;   /* mi_n % 4 == 0: no tail */
    /* scalar grid-stride loop (the tail after the vector path, or everything) */
    StrBuf body;
    sb_init(&body);
    cu_init(&e, &tmp, NULL, &body, NULL, NULL, "        ");
    e.sy = ctx->sym;
    for (int i = 0; i < g->n; i++) {
        sb_printf(&body, "        /* %s: %s */\n", s->nodes[g->nodes[i]].name, s->nodes[g->nodes[i]].buf->name);
        loop_body_run(s->nodes[g->nodes[i]].buf->body, &e.h);
    }
    cu_done(&e);
    if (e.bad) { sb_free(&body); return mi_err(ctx, NULL, 0, 0, "%s (kernel '%s')", e.err, g->kernel_name); }
    sb_printf(out, "    for (int64_t mi_x = %smi_start; mi_x < mi_n; mi_x += mi_step) {\n", vec_ok ? "mi_nv * 4 + " : "");
    emit_decompose(out, "        ", b0, 0, b0->nvars, "mi_x");
    if (body.s) sb_put(out, body.s);
    sb_put(out, "    }\n");
    sb_free(&body);
    return 0;
}

/* Where group g stands in mi_launch's order (emit_launch_fn in codegen_cuda.c): in, a
 * generated kernel is launched right before it (so it may be launched with PDL and then
 * waits: MI_PDL_WAIT); out, one is launched right after it (so it lets it start early:
 * MI_GDC_LAUNCH). A kernel defined once for several groups (codegen_reuse: same_as; it compares
 * the text without these lines) takes the union over them; one defined for several schedules
 * (shared) both. A module of one kernel has
 * neither: its kernel carries no PDL instruction (ln_gelu, bench/cuda/run_ab.sh at 09:11:
 * 23.8 us without, 24.3 with them). */
static int kernel_class(const Schedule *s, int k) {
    int ki = sched_kernel_of_pos(s, k);
    return s->kernels[ki].same_as >= 0 && !s->kernels[ki].same_sched ? s->kernels[ki].same_as : ki;
}
static void pdl_neighbours(const Schedule *s, const SchedGroup *g, bool *in, bool *out) {
    *in = *out = false;
    int kg = -1;
    for (int k = 0; k < s->norder && kg < 0; k++)
        if (&s->groups[s->order[k]] == g) kg = k;
    /* not in the order (not expected), or defined for another schedule's launches too (a cond
     * branch's, codegen_reuse: shared), whose neighbours are not seen here: keep both */
    if (kg < 0 || s->kernels[sched_kernel_of_pos(s, kg)].shared) { *in = *out = true; return; }
    int c = kernel_class(s, kg);
    for (int k = 0; k < s->norder; k++) {
        if (s->groups[s->order[k]].is_extern || kernel_class(s, k) != c) continue;
        *in |= k > 0 && !s->groups[s->order[k - 1]].is_extern;
        *out |= k + 1 < s->norder && !s->groups[s->order[k + 1]].is_extern;
    }
}

/* A warp-per-row kernel's rows per block (blockDim (32, 4)): 4 warps, a warp per row. */
enum { CU_WARP_ROWS = 4 };

/* Flat pointwise kernel: all nodes share the iteration space (scheduler guarantees it). */
static int emit_flat(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out) {
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    sb_printf(out, "__global__ void __launch_bounds__(256) %s(", g->kernel_name);
    if (kernel_params(ctx, s, g, out) < 0) return -1;
    sb_put(out, "    const int64_t mi_n = ");
    emit_numel(out, b0, 0, b0->nvars);
    bool pdl_in, pdl_out;
    pdl_neighbours(s, g, &pdl_in, &pdl_out);
    sb_put(out, ";\n    (void)mi_n;\n");
    if (pdl_out) sb_put(out, "    MI_GDC_LAUNCH();\n");
    if (pdl_in) sb_put(out, "    MI_PDL_WAIT(mi_sy, 3);   /* (PDL) the kernel before is done */\n");
    /* the loops go to a buffer: the strided form needs mi_start / mi_step declared before them */
    StrBuf loops;
    sb_init(&loops);
    int rc = emit_flat_loops(ctx, s, g, flat_exact(ctx, b0), &loops);
    if (rc == 0)
        sb_put(out, "    const int64_t mi_start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "    const int64_t mi_step = (int64_t)gridDim.x * blockDim.x;\n");
    if (rc >= 0 && loops.s) sb_put(out, loops.s);
    sb_free(&loops);
    if (rc < 0) return -1;
    sb_put(out, "}\n\n");
    return 0;
}

/* A combo kernel's groups as one pseudo-group (every node): its parameters and launch
 * arguments are the union of the sub-kernels'. */
static SchedGroup combo_union(const Schedule *s, const SchedKernel *k) {
    SchedGroup u = {0};
    for (int p = 0; p < k->n; p++) u.n += s->groups[s->order[k->first + p]].n;
    u.nodes = mi_xmalloc(sizeof(int) * (size_t)(u.n + 1));
    u.n = 0;
    for (int p = 0; p < k->n; p++) {
        const SchedGroup *g = &s->groups[s->order[k->first + p]];
        for (int i = 0; i < g->n; i++) u.nodes[u.n++] = g->nodes[i];
    }
    return u;
}

/* Combo kernel (Inductor's triton_for_fused_N, ComboKernel.SequentialDispatch): sub-kernel i
 * owns mi_combo_blocks(n_i) consecutive blocks; a block finds its sub-kernel by the running
 * sums and runs that group's flat loops over its own block range. */
int cu_emit_combo(MiCtx *ctx, const Schedule *s, const SchedKernel *k, StrBuf *out) {
    for (int p = 0; p < k->n; p++)
        if (cu_group_has_reduction(s, &s->groups[s->order[k->first + p]]))
            return mi_err(ctx, NULL, 0, 0, "combo kernel '%s': a sub-kernel with a reduction is not supported", k->name);
    SchedGroup u = combo_union(s, k);
    sb_printf(out, "__global__ void __launch_bounds__(256) %s(", k->name);
    int rc = kernel_params(ctx, s, &u, out);
    free(u.nodes);
    if (rc < 0) return -1;
    sb_put(out, "    const int64_t mi_b = blockIdx.x;\n    int64_t mi_b0 = 0;\n");
    for (int p = 0; p < k->n && rc == 0; p++) {
        const SchedGroup *g = &s->groups[s->order[k->first + p]];
        const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
        sb_printf(out, "    /* sub-kernel %d: %s */\n    {\n    const int64_t mi_n = ", p, s->nodes[g->nodes[0]].name);
        emit_numel(out, b0, 0, b0->nvars);
        sb_put(out, ";\n    const int64_t mi_nb = mi_combo_blocks(mi_n);\n"
                    "    if (mi_b >= mi_b0 && mi_b < mi_b0 + mi_nb) {\n"
                    "    const int64_t mi_start = (mi_b - mi_b0) * blockDim.x + threadIdx.x;\n"
                    "    const int64_t mi_step = mi_nb * blockDim.x;\n");
        rc = emit_flat_loops(ctx, s, g, false, out) < 0 ? -1 : 0;
        sb_put(out, "    return;\n    }\n    mi_b0 += mi_nb;\n    }\n");
    }
    sb_put(out, "}\n\n");
    return rc;
}

/* Launch of a combo kernel: as many blocks as its sub-kernels own together. */
void cu_emit_combo_launch(const Schedule *s, const SchedKernel *k, StrBuf *out) {
    const IrModule *m = s->ir;
    sb_put(out, "    {\n        int64_t mi_nb = 0;\n");
    for (int p = 0; p < k->n; p++) {
        const SchedGroup *g = &s->groups[s->order[k->first + p]];
        const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
        sb_put(out, "        mi_nb += mi_combo_blocks(");
        emit_numel(out, b0, 0, b0->nvars);
        sb_put(out, ");\n");
    }
    sb_printf(out, "        %s<<<(unsigned)mi_nb, 256, 0, mi_st>>>(", k->name);
    SchedGroup u = combo_union(s, k);
    for (int i = 0; i < m->nbufs; i++)
        if (cg_group_touches(s, &u, m->bufs[i])) sb_printf(out, "%s, ", m->bufs[i]->name);
    free(u.nodes);
    sb_put(out, "mi_sy);\n    }\n");
}

/* How a group with reductions maps onto the GPU.
 *   ROW_GENERIC    one block per row, threads stride the row (row length symbolic or large)
 *   ROW_PERSIST    one block of `threads` per row, each thread owns `slots` elements of the row
 *                  (unrolled), loads of read-only buffers stay in registers across the nodes;
 *                  warp: a warp per row (row_plan says when), 4 rows per block (blockDim
 *                  (32, 4)), reductions by shuffles alone, no __syncthreads; dual: a block-per-row
 *                  twin `<kernel>_blk` too, the launch picks one by occupancy;
 *                  vec4: exact rows of slots in groups of 4, slot j of a thread is element
 *                  4*(thread + (j/4)*threads) + j%4, so a group's loads and stores of a
 *                  contiguous f32 buffer are one 16-byte access (vec4_access). Measured on an
 *                  H200 (bench/results/cuda-ab-2026-11-26T1216.log, cudabench --reps 50):
 *                  ln_gelu (8192 rows of 1024) 24.4 -> 21.8 us, softmax (4096 of 4096, a block
 *                  of 512) 38.9 -> 37.4, reductions 23.6 -> 22.3 (21.0 with a block per row:
 *                  its 4096 rows make about 1.3 waves as warps of 80 registers, 1.9 as blocks
 *                  of 32, by ptxas' register counts; ln_gelu's 8192 3.9 either way)
 *   ROW_COLUMNS    the reduced dim is strided and the last outer dim contiguous (x.sum(dim=0)):
 *                  blocks of 8 rows x 128 reduction lanes, so a warp reads 4 x 32 contiguous bytes
 *                  split > 1 (a split reduction): blocks of `tile` (32) outputs x 8 lanes (a warp
 *                  reads 128 contiguous bytes of one input row) over 1/split of the reduced dim
 *                  each, grid (tiles, split); each writes its partial results, and the last block
 *                  of a tile to finish (a counter per tile) combines the split partials in split
 *                  order, so the result does not depend on which block finished last
 */
typedef enum { ROW_GENERIC, ROW_PERSIST, ROW_COLUMNS } RowMode;
typedef struct RowPlan {
    RowMode mode; int threads, slots; bool exact;   /* threads * slots == row */
    bool vec4, warp, dual;                          /* ROW_PERSIST: slots in float4 groups (vec4_access); a warp per row; and a block-per-row twin */
    int split, tile; int64_t outs, inner;           /* ROW_COLUMNS split: outputs per block, static output count; reduced length (ROW_PERSIST: the row) */
    IrReduceType rt; DType dt;                      /* ... its one reduction */
} RowPlan;


static bool static_int(MiCtx *ctx, Expr *e, int64_t *v) {
    int rc = sym_eval(ctx, e, NULL, 0, v);
    mi_clear_err(ctx);
    return rc == 0;
}
/* Persistent rows in vec4 mode (RowCache.vec4: slot j of a thread is element
 * 4*(threadIdx.x + (j/4)*threads) + j%4 of the row, and the innermost var's range is a multiple
 * of 4, so the 4 slots of a group step that var by 1 and keep the others): can the group's 4
 * elements of an f32 buffer at idx be one 16-byte access? Yes when idx is linear in every var
 * with static coefficients, 1 for the innermost var and multiples of 4 for the others, and its
 * constant part is a multiple of 4 (buffers start 256-byte aligned: cudaMalloc). Example, rows
 * of 1024: x[1024*p0 + p1] and w[p1] yes; x[p1 + 1], x[2*p1] or x[p1 // 2] no (scalar). */
static bool vec4_access(const RowCache *rc, const LoopBody *b, Expr *idx, DType dt) {
    if (!rc || !rc->vec4 || !b || dt != DT_F32) return false;
    return vec4_index(rc->s->ir->ctx, b, idx, b->nvars - 1);
}
/* The index test of vec4_access for the 4 consecutive values of var `var` (the others fixed). */
static bool vec4_index(MiCtx *ctx, const LoopBody *b, Expr *idx, int var) {
    if (!ctx || !b || b->nvars < 1 || b->nvars > 32 || var < 0 || var >= b->nvars) return false;
    const char *names[32];
    Expr *zero[32];
    for (int v = 0; v < b->nvars; v++) {
        Expr *c = sym_coeff(ctx->sym, idx, b->vars[v]->name);
        int64_t cv;
        if (!c || !static_int(ctx, c, &cv) || (v == var ? cv != 1 : cv % 4 != 0)) return false;
        names[v] = b->vars[v]->name;
        zero[v] = sym_int(ctx->sym, 0);
    }
    int64_t k;
    return static_int(ctx, sym_subst(ctx->sym, idx, names, zero, b->nvars), &k) && k % 4 == 0;
}
static Expr *inner_numel(MiCtx *ctx, const LoopBody *b, int mo) {
    Expr *n = sym_int(ctx->sym, 1);
    for (int v = mo; v < b->nvars; v++) n = sym_mul(ctx->sym, n, b->ranges[v]);
    return n;
}
/* Coefficient of var v in an affine index (others 0), or INT64_MIN when not static. */
static int64_t index_coef(MiCtx *ctx, const LoopBody *b, Expr *idx, int v) {
    SymBinding bs[MI_MAX_DIMS * 2];
    int n = 0;
    for (int k = 0; k < b->nvars && n < MI_MAX_DIMS * 2; k++) { bs[n].name = b->vars[k]->name; bs[n].value = 0; n++; }
    int64_t a0, a1;
    if (sym_eval(ctx, idx, bs, n, &a0) != 0) { mi_clear_err(ctx); return INT64_MIN; }
    bs[v].value = 1;
    if (sym_eval(ctx, idx, bs, n, &a1) != 0) { mi_clear_err(ctx); return INT64_MIN; }
    return a1 - a0;
}
static bool columns_pattern(MiCtx *ctx, const Schedule *s, const SchedGroup *g) {
    int mo = g->nouter;
    if (mo < 1) return false;
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    for (int i = 0; i < g->n; i++) {
        const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
        if (!b->nred || b->nvars != b0->nvars) return false;
        for (int v = mo; v < b->nvars; v++) if (b->ranges[v] != b0->ranges[v]) return false;
    }
    bool strided = false;
    for (int i = 0; i < g->n; i++) {
        const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
        for (int k = 0; k < b->nops; k++) {
            if (b->ops[k].kind != LOP_LOAD) continue;
            Expr *idx = b->indexes[b->ops[k].index];
            int64_t cr = index_coef(ctx, b, idx, b->nvars - 1), co = index_coef(ctx, b, idx, mo - 1);
            if (cr == INT64_MIN || co == INT64_MIN || cr == 1) return false;
            if (cr != 0 && co == 1) strided = true;
        }
    }
    return strided;
}
/* Split a one-node column reduction (sum, prod, max, min of f32 or f64) whose sizes are
 * static: enough blocks to fill the GPU (Inductor splits a reduction whose output is too small
 * to occupy the device likewise, ir.Reduction.num_splits: there in two kernels). Aim at ~512
 * blocks of 32 outputs, each over >= 256 of the reduced elements; the partials and counters are
 * static device arrays of the module (<= 4 MB). bench/cuda/reduction_lab.cu on an H200,
 * x.sum(dim=0) of 4096 x 1024 (bench/results/cuda-reduction-lab-2026-11-26T0855.log and
 * cuda-ab-2026-11-26T*.log): this kernel with 16 splits 11.9-12.1 us in four runs; with 32 splits
 * (and the partials added by all 8 lanes) 12.5; wider tiles (64-1024 outputs per block, scalar or
 * float4) were slower in the hand-written twins; float4 loads marked L2 evict_last reached 9.9 us
 * alone but nothing in the pair with the row kernel. */
static void split_plan(MiCtx *ctx, const Schedule *s, const SchedGroup *g, RowPlan *p) {
    p->split = 1;
    if (g->n != 1) return;
    const LoopBody *b = s->nodes[g->nodes[0]].buf->body;
    int nr = 0;
    for (int k = 0; k < b->nops; k++)
        if (b->ops[k].kind == LOP_REDUCTION) {
            nr++;
            p->rt = b->ops[k].rtype;
            p->dt = b->ops[k].dtype;
        }
    if (nr != 1 || (p->rt != RED_SUM && p->rt != RED_PROD && p->rt != RED_MAX && p->rt != RED_MIN)) return;
    if (p->dt != DT_F32 && p->dt != DT_F64) return;
    Expr *outs = sym_int(ctx->sym, 1), *inner = inner_numel(ctx, b, g->nouter);
    for (int v = 0; v < g->nouter; v++) outs = sym_mul(ctx->sym, outs, b->ranges[v]);
    if (!inner || !static_int(ctx, outs, &p->outs) || !static_int(ctx, inner, &p->inner) || p->outs < 1) return;
    /* ~512 blocks; each split >= 256 reduced elements (32 per lane). A float4 of 4 outputs per
     * thread and step (128 outputs x 8 lanes per block) was tried (bench/cuda/reduction_lab.cu:
     * 9.8 us alone against 11.9) and lost in bench/graphs/reductions.py's pair with the row
     * kernel (22.9 against 22.3 us, 21.8 against 21.1: cuda-ab-2026-11-26T1210.log), so it went */
    int64_t tiles = (p->outs + 31) / 32, sp = 512 / tiles;
    if (sp > p->inner / 256) sp = p->inner / 256;
    if (sp > 64) sp = 64;
    if (sp < 2 || tiles > 65535 || (double)sp * (double)p->outs * 8 > 4e6) return;
    p->split = (int)sp;
    p->tile = 32;
    p->threads = 32 * 8;
}

/* Threads and slots of a persistent row of n elements: a warp (32 threads), or a block of a
 * power of two threads giving about 8 elements each (n = 1024: 128 x 8; 4096: 512 x 8). vec4
 * when the row is exactly threads x slots, slots a multiple of 4 and every node's innermost
 * range a static multiple of 4 (a group of 4 slots stays inside one value of the other vars). */
static void persist_shape(MiCtx *ctx, const Schedule *s, const SchedGroup *g, int64_t n, bool warp, RowPlan *p) {
    int t = 32;
    while (!warp && t < 1024 && (int64_t)t * 8 < n) t *= 2;
    p->warp = warp;
    p->threads = t;
    p->slots = (int)((n + t - 1) / t);
    p->exact = (int64_t)p->slots * t == n;
    p->vec4 = p->exact && p->slots % 4 == 0;
    for (int i = 0; i < g->n && p->vec4; i++) {
        const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
        int64_t last;
        p->vec4 = b->nvars > g->nouter && static_int(ctx, b->ranges[b->nvars - 1], &last) && last % 4 == 0;
    }
}

/* The plan of a reduction group. Persistent rows follow Inductor's persistent_reduction for an
 * inner reduction (triton_heuristics._persistent_reduction_configs, not max-autotune): rows of
 * 256..1024 elements, when there are at least 1024 of them (xnumel // 8 >= 128), get one warp
 * each (num_warps 1, XBLOCK min(1024 // rnumel, 8)); fewer or longer rows one block each
 * (XBLOCK 1; our block keeps ~8 elements per thread); shorter rows, which Inductor autotunes
 * over XBLOCK 1..128, a warp each. Where Inductor takes warps for rows of 257..1024 the block
 * kernel is generated too (dual) and the launch takes the one whose last wave of rows is fuller
 * (mi_rows_by_block: SM count x resident blocks from cudaOccupancyMaxActiveBlocksPerMultiprocessor,
 * which knows ptxas' registers). */
static void row_plan(MiCtx *ctx, const Schedule *s, const SchedGroup *g, RowPlan *p) {
    p->mode = ROW_GENERIC; p->threads = 0; p->slots = 0; p->exact = false; p->split = 1; p->tile = 8;
    p->vec4 = p->warp = p->dual = false;
    if (cu_group_has_scan(s, g)) return;   /* a block per row, scanned in chunks of blockDim.x */
    if (columns_pattern(ctx, s, g)) {
        p->mode = ROW_COLUMNS; p->threads = 8 * 128;
        split_plan(ctx, s, g, p);
        return;
    }
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    for (int i = 1; i < g->n; i++) {   /* same inner loops: a slot is the same element in every node */
        const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
        if (b->nvars != b0->nvars) return;
        for (int v = g->nouter; v < b->nvars; v++) if (b->ranges[v] != b0->ranges[v]) return;
    }
    Expr *n0 = inner_numel(ctx, b0, g->nouter), *r0 = sym_int(ctx->sym, 1);
    int64_t n, rows;
    if (!n0 || !static_int(ctx, n0, &n) || n < 1 || n > 16384) return;
    for (int v = 0; v < g->nouter; v++) r0 = sym_mul(ctx->sym, r0, b0->ranges[v]);
    bool few = static_int(ctx, r0, &rows) && rows < 1024;   /* Inductor: xnumel // 8 < 128 */
    p->mode = ROW_PERSIST;
    p->inner = n;
    p->warp = n <= 1024 && (n < 256 || !few);
    p->dual = p->warp && n > 256;   /* a block has 64 or 128 threads (256: one warp either way) */
    persist_shape(ctx, s, g, n, p->warp, p);
}

/* Does the body load a buffer other than a graph input nobody writes? Such a load must come
 * after the wait for the kernel launched before (PDL); loads of stable inputs may run early. */
static bool pdl_loads_unstable(const LoopBody *b) {
    for (int k = 0; k < b->nops; k++) {
        if (b->ops[k].kind != LOP_LOAD || !b->ops[k].buf) continue;
        const Buffer *t = ir_store_target(b->ops[k].buf);
        if (t->kind != BUF_INPUT || t->mutated) return true;
    }
    return false;
}
/* Where a row kernel launched with PDL waits (MiSyms.pdl). emit_rows puts MI_PDL_WAIT(1) in its
 * first node: at the node's start when it stores in its loop (pointwise, scan, sort), else after
 * the reduction's loop, before its stores. 1 there when that node's loads before it are all of
 * stable inputs; else 2, at the kernel's start. */
static int row_pdl_wait(const Schedule *s, const SchedGroup *g) {
    const LoopBody *b = g->n ? s->nodes[g->nodes[0]].buf->body : NULL;
    if (!b || !b->nred || cu_body_scan(b)) return 1;
    return pdl_loads_unstable(b) ? 2 : 1;
}

/* Row kernel `kname` of plan pp (see RowPlan): grid-stride over rows of the shared outer dims;
 * every node walks its inner range, reductions finish with a block reduction; __syncthreads()
 * between nodes. */
static int emit_rows_as(MiCtx *ctx, const Schedule *s, const SchedGroup *g, const RowPlan *pp, const char *kname, StrBuf *out) {
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    int mo = g->nouter;
    const RowPlan plan = *pp;
    bool cols = plan.mode == ROW_COLUMNS, persist = plan.mode == ROW_PERSIST, warp = persist && plan.warp;
    bool pdl_in, pdl_out;
    pdl_neighbours(s, g, &pdl_in, &pdl_out);
    /* a warp per row: only the warp's own lanes meet (a per-warp PDL wait, __syncwarp) */
    const char *wait1 = !pdl_in ? "" : warp ? "            MI_PDL_WAIT_WARP(mi_sy, 1);   /* (PDL) the kernel before is done */\n"
                                            : "            MI_PDL_WAIT(mi_sy, 1);   /* (PDL) the kernel before is done */\n";
    int split = cols ? plan.split : 1, tile = split > 1 ? plan.tile : 8;
    const char *ct = split > 1 ? cu_vtype(plan.dt) : NULL;
    if (split > 1)   /* the split partials and the per-tile counters (zero at load; the last block resets its own) */
        sb_printf(out, "__device__ %s %s_part[%lld];\n__device__ unsigned %s_done[%lld];\n", ct, kname,
                  (long long)(split * plan.outs), kname, (long long)((plan.outs + 31) / 32));
    /* A block-per-row persistent kernel with at most 8 slots per thread asks nvcc for full
     * occupancy (2048 / threads blocks per SM: 32 registers): softmax's rows of 4096 (512 x 8)
     * took 35 registers with float4 slot groups, 3 blocks per SM, 41.5 us; 38.5 us with the
     * bound (bench/results/cuda-ab-2026-11-26T1159.log) */
    char minb[16] = "";
    if (persist && !warp && plan.slots <= 8) snprintf(minb, sizeof minb, ", %d", 2048 / plan.threads);
    sb_printf(out, "/* %s */\n__global__ void __launch_bounds__(%d%s) %s(", split > 1 ? "split column reduction: 32 outputs x 8 lanes per block over a part of the reduced dim, the last block of a tile combines the parts" :
              cols ? "column reduction: 8 rows x 128 reduction lanes per block" :
              warp ? "persistent rows: a warp per row (blockDim.y rows per block), the row stays in registers" :
              persist ? "persistent rows: one block per row, the row stays in registers" : "one block per row",
              warp ? 32 * CU_WARP_ROWS : plan.threads ? plan.threads : 1024, minb, kname);
    if (kernel_params(ctx, s, g, out) < 0) return -1;
    if (cu_group_has_scan(s, g))
        sb_printf(out, "    __shared__ __align__(16) unsigned char mi_sh_scan[%d];   /* block scans and sorts */\n", CU_SCAN_SHARED_BYTES);
    sb_printf(out, "    __shared__ double mi_shared[%s];   /* block reductions */\n%s%s    const int64_t mi_rows = ", cols ? "3 * 256" : "3 * 32",
              pdl_out ? "    MI_GDC_LAUNCH();\n" : "",
              pdl_in ? "    MI_PDL_WAIT(mi_sy, 2);   /* (PDL) it loads early what the kernel before writes */\n" : "");
    emit_numel(out, b0, 0, mo);
    sb_put(out, ";\n");
    if (split > 1)
        sb_printf(out, "    __shared__ bool mi_last;\n    const int64_t mi_per = %lldLL;   /* reduced elements per split */\n",
                  (long long)((plan.inner + split - 1) / split));
    if (cols) {
        sb_printf(out, "    for (int64_t mi_row0 = (int64_t)blockIdx.x * %d; mi_row0 < mi_rows; mi_row0 += (int64_t)gridDim.x * %d) {\n"
                       "        const int64_t mi_row = mi_row0 + threadIdx.x;\n"
                       "        const bool mi_valid = mi_row < mi_rows;\n", tile, tile);
    } else if (warp)   /* blockDim (32, rows per block): warp threadIdx.y of block b takes row b * blockDim.y + threadIdx.y */
        sb_put(out, "    for (int64_t mi_row = (int64_t)blockIdx.x * blockDim.y + threadIdx.y; mi_row < mi_rows; mi_row += (int64_t)gridDim.x * blockDim.y) {\n");
    else
        sb_put(out, "    for (int64_t mi_row = blockIdx.x; mi_row < mi_rows; mi_row += gridDim.x) {\n");
    emit_decompose(out, "        ", b0, 0, mo, "mi_row");
    RowCache rc;
    memset(&rc, 0, sizeof rc);
    sb_init(&rc.decls);
    rc.slots = plan.slots;
    rc.threads = plan.threads;
    rc.exact = plan.exact;
    rc.vec4 = persist && plan.vec4;
    rc.s = s; rc.g = g;
    StrBuf nodes;
    sb_init(&nodes);
    int tmp = 0;
    bool waited = false;   /* MI_PDL_WAIT(1) emitted (PDL): before the first store (row_pdl_wait) */
    for (int i = 0; i < g->n; i++) {
        const Buffer *bf = s->nodes[g->nodes[i]].buf;
        const LoopBody *b = bf->body;
        StrBuf pre, body, mid, post, after;
        sb_init(&pre); sb_init(&body); sb_init(&mid); sb_init(&post); sb_init(&after);
        Cu e;
        cu_init(&e, &tmp, &pre, &body, &mid, &post, persist ? "                    " : "                ");
        e.sy = ctx->sym;
        const LoopOp *sop = cu_body_scan(b);
        bool scan = sop && sop->sop != SCAN_SORT, sort = sop && sop->sop == SCAN_SORT;
        if (scan) e.store_guard = "if (mi_in)";
        if (sort) e.after = &after;
        if (persist) e.rc = &rc;
        e.lb = b;
        if (cols) { e.reducer = split > 1 ? "mi_col_reduce32" : "mi_col_reduce"; e.red_guard = "threadIdx.y == 0 && mi_valid"; }
        loop_body_run(b, &e.h);
        cu_done(&e);
        if (e.bad) {
            sb_free(&pre); sb_free(&body); sb_free(&mid); sb_free(&post); sb_free(&after); sb_free(&nodes); sb_free(&rc.decls);
            return mi_err(ctx, NULL, 0, 0, "%s (buffer '%s')", e.err, bf->name);
        }
        if (i) sb_put(&nodes, "        MI_NODE_SYNC\n");
        sb_printf(&nodes, "        /* %s: %s%s */\n        {\n", s->nodes[g->nodes[i]].name, bf->name, b->nred ? " (reduction)" : "");
        if (!waited && (!b->nred || sop)) {   /* it stores in its loop */
            sb_put(&nodes, wait1);
            waited = true;
        }
        if (pre.s) sb_put(&nodes, pre.s);
        sb_put(&nodes, "            const int64_t mi_inner = ");
        emit_numel(&nodes, b, mo, b->nvars);
        if (persist) {
            if (plan.vec4)
                sb_printf(&nodes, ";\n            #pragma unroll\n            for (int mi_j = 0; mi_j < %d; mi_j++) {\n"
                                  "                const int64_t mi_r = 4 * (threadIdx.x + (int64_t)(mi_j >> 2) * %d) + (mi_j & 3);   /* float4 groups */\n"
                                  "                if (true /* the row is exactly threads x slots */) {\n", plan.slots, plan.threads);
            else
                sb_printf(&nodes, ";\n            #pragma unroll\n            for (int mi_j = 0; mi_j < %d; mi_j++) {\n"
                                  "                const int64_t mi_r = threadIdx.x + (int64_t)mi_j * %d;\n"
                                  "                if (%s) {\n", plan.slots, plan.threads,
                          plan.exact ? "true /* the row is exactly threads x slots */" : "mi_r < mi_inner");
            emit_decompose(&nodes, "                    ", b, mo, b->nvars, "mi_r");
            if (body.s) sb_put(&nodes, body.s);
            sb_put(&nodes, "                }\n            }\n");
        } else {
            if (split > 1) sb_put(&nodes, ";\n            const int64_t mi_r1 = mi_inner < (blockIdx.y + 1) * mi_per ? mi_inner : (blockIdx.y + 1) * mi_per;\n"
                                          "            if (mi_valid)\n            #pragma unroll 8\n"
                                          "            for (int64_t mi_r = blockIdx.y * mi_per + threadIdx.y; mi_r < mi_r1; mi_r += blockDim.y) {\n");
            else if (cols) sb_put(&nodes, ";\n            if (mi_valid)\n            #pragma unroll 8\n            for (int64_t mi_r = threadIdx.y; mi_r < mi_inner; mi_r += blockDim.y) {\n");
            else if (scan) sb_put(&nodes, ";\n            /* the row in chunks of blockDim.x, each scanned across the block */\n"
                                          "            for (int64_t mi_c = 0; mi_c < mi_inner; mi_c += blockDim.x) {\n"
                                          "                const bool mi_in = mi_c + (int64_t)threadIdx.x < mi_inner;\n"
                                          "                const int64_t mi_r = mi_in ? mi_c + (int64_t)threadIdx.x : mi_inner - 1;\n");
            else sb_put(&nodes, ";\n            #pragma unroll 4\n            for (int64_t mi_r = threadIdx.x; mi_r < mi_inner; mi_r += blockDim.x) {\n");
            emit_decompose(&nodes, "                ", b, mo, b->nvars, "mi_r");
            if (body.s) sb_put(&nodes, body.s);
            sb_put(&nodes, "            }\n");
        }
        if (mid.s) sb_put(&nodes, mid.s);
        if (sort) {   /* the sorted row: each element's getitem and store */
            sb_put(&nodes, "            for (int64_t mi_r = threadIdx.x; mi_r < mi_inner; mi_r += blockDim.x) {\n");
            emit_decompose(&nodes, "                ", b, mo, b->nvars, "mi_r");
            if (after.s) sb_put(&nodes, after.s);
            sb_put(&nodes, "            }\n");
        }
        if (!waited) {   /* a reduction: its loads are done, its stores follow */
            sb_put(&nodes, wait1);
            waited = true;
        }
        if (split > 1 && e.split_acc[0]) {   /* partial out; the tile's last block combines in split order */
            const char *A = e.split_acc, *K = kname;
            sb_printf(&nodes, "            if (threadIdx.y == 0 && mi_valid) %s_part[(int64_t)blockIdx.y * mi_rows + mi_row] = %s;\n"
                              "            __threadfence();\n            __syncthreads();\n"
                              "            if (threadIdx.x == 0 && threadIdx.y == 0) mi_last = atomicAdd(&%s_done[mi_row0 / %d], 1u) == gridDim.y - 1;\n"
                              "            __syncthreads();\n            if (!mi_last) continue;\n"
                              "            if (threadIdx.x == 0 && threadIdx.y == 0) %s_done[mi_row0 / %d] = 0;\n"
                              "            if (threadIdx.y == 0 && mi_valid) {\n"
                              "                %s = __ldcg(&%s_part[mi_row]);\n"
                              "                for (int mi_k = 1; mi_k < (int)gridDim.y; mi_k++) %s = %s()(%s, __ldcg(&%s_part[mi_k * mi_rows + mi_row]));\n"
                              "            }\n",
                      K, A, K, tile, K, tile, A, K, A, e.split_op, A, K);
        }
        if (post.s) sb_put(&nodes, post.s);
        sb_put(&nodes, "        }\n");
        sb_free(&pre); sb_free(&body); sb_free(&mid); sb_free(&post); sb_free(&after);
    }
    if (rc.decls.s) sb_put(out, rc.decls.s);
    /* between nodes (and rows) a barrier is needed only when a node reads from memory what
     * another thread of the block wrote; persistent rows usually read registers only */
    bool sync = !persist || rc.shared_rw;
    const char *bar = warp ? "        __syncwarp();\n" : "        __syncthreads();\n";
    const char *sync_line = sync ? bar : "        /* no barrier: every value read here comes from this thread's registers */\n";
    for (const char *q = nodes.s; q && *q;) {
        const char *t = strstr(q, "        MI_NODE_SYNC\n");
        if (!t) { sb_put(out, q); break; }
        sb_putn(out, q, (size_t)(t - q));
        sb_put(out, sync_line);
        q = t + strlen("        MI_NODE_SYNC\n");
    }
    sb_printf(out, "%s    }\n}\n\n", sync ? bar : "");
    sb_free(&nodes);
    sb_free(&rc.decls);
    return 0;
}

/* The kernel(s) of a reduction group: its plan's, and for a dual plan (row_plan) the
 * block-per-row twin `<kernel>_blk` of the same rows. */
static int emit_rows(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out) {
    RowPlan plan;
    row_plan(ctx, s, g, &plan);
    if (emit_rows_as(ctx, s, g, &plan, g->kernel_name, out) < 0) return -1;
    if (!plan.dual) return 0;
    RowPlan blk = plan;
    persist_shape(ctx, s, g, plan.inner, false, &blk);
    char *name = mi_xmalloc(strlen(g->kernel_name) + 8);
    sprintf(name, "%s_blk", g->kernel_name);
    int rc = emit_rows_as(ctx, s, g, &blk, name, out);
    free(name);
    return rc;
}

/* One launch statement of kernel `name` (a generated kernel launched right after another one:
 * with PDL when the device has it, mi_pdl; see the prelude). */
static void launch_stmt(StrBuf *out, const char *guard, bool pdl, int when, const char *name, const char *grid, const char *block, const char *args) {
    if (pdl)
        sb_printf(out, "        %s{\n            if (mi_pdl) {\n                mi_sy.pdl = %d;\n                MI_CK(mi_launch_pdl(%s, dim3(%s), dim3(%s), mi_st, %s));\n"
                       "                mi_sy.pdl = 0;\n            } else %s<<<%s, %s, 0, mi_st>>>(%s);\n        }\n",
                  guard, when, name, grid, block, args, name, grid, block, args);
    else
        sb_printf(out, "        %s%s<<<%s, %s, 0, mi_st>>>(%s);\n", guard, name, grid, block, args);
}

/* Launch of one fused group from the host wrapper: `kernel<<<grid, block, 0, mi_st>>>(...)`;
 * with pdl (a generated kernel was launched just before) also the programmatic dependent launch
 * of the same grid, taken when the device has it (mi_pdl, see the prelude). */
void cu_emit_launch(const Schedule *s, const SchedGroup *g, bool pdl, StrBuf *out) {
    const IrModule *m = s->ir;
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    char grid[96], block[48];
    const char *guard = "";
    int when = 1;   /* MiSyms.pdl of a PDL launch */
    int dual_threads = 0;   /* a dual plan: the block-per-row twin's threads */
    sb_put(out, "    {\n");
    if (cu_group_has_reduction(s, g)) {
        sb_put(out, "        const int64_t mi_rows = ");
        emit_numel(out, b0, 0, g->nouter);
        sb_put(out, ";\n        int64_t mi_inner = 1;\n");
        for (int i = 0; i < g->n; i++) {
            const LoopBody *b = s->nodes[g->nodes[i]].buf->body;
            sb_put(out, "        mi_inner = mi_max(mi_inner, ");
            emit_numel(out, b, g->nouter, b->nvars);
            sb_put(out, ");\n");
        }
        RowPlan plan;
        row_plan(s->ir->ctx, s, g, &plan);
        when = row_pdl_wait(s, g);
        if (plan.mode != ROW_GENERIC) sb_put(out, "        (void)mi_inner;\n");
        if (plan.mode == ROW_COLUMNS && plan.split > 1) {   /* tiles of 32 outputs, 32 x 8 threads */
            snprintf(grid, sizeof grid, "dim3((unsigned)((mi_rows + %d) / %d), %d)", plan.tile - 1, plan.tile, plan.split);
            snprintf(block, sizeof block, "dim3(%d, %d)", plan.tile, plan.threads / plan.tile);
        } else if (plan.mode == ROW_COLUMNS) {
            snprintf(grid, sizeof grid, "mi_blocks((mi_rows + 7) / 8, 65535LL * 32)");
            snprintf(block, sizeof block, "dim3(8, 128)");
        } else if (plan.mode == ROW_PERSIST && plan.warp) {
            snprintf(grid, sizeof grid, "mi_blocks((mi_rows + %d) / %d, 65535LL * 32)", CU_WARP_ROWS - 1, CU_WARP_ROWS);
            snprintf(block, sizeof block, "dim3(32, %d)", CU_WARP_ROWS);
            if (plan.dual) {   /* the block-per-row twin when its last wave of rows is fuller */
                RowPlan blk = plan;
                persist_shape(s->ir->ctx, s, g, plan.inner, false, &blk);
                dual_threads = blk.threads;
                sb_printf(out, "        static int mi_occ_w = -1, mi_occ_b = -1;   /* resident blocks per SM of the two kernels */\n"
                               "        if (mi_occ_w < 0) {\n"
                               "            MI_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&mi_occ_w, %s, %d, 0));\n"
                               "            MI_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&mi_occ_b, %s_blk, %d, 0));\n"
                               "        }\n", g->kernel_name, 32 * CU_WARP_ROWS, g->kernel_name, blk.threads);
            }
        } else if (plan.mode == ROW_PERSIST) {
            snprintf(grid, sizeof grid, "mi_blocks(mi_rows, 65535LL * 32)");
            snprintf(block, sizeof block, "%d", plan.threads);
        } else {
            snprintf(grid, sizeof grid, "mi_blocks(mi_rows, 65535LL * 32)");
            snprintf(block, sizeof block, "mi_row_threads(mi_inner)");
        }
    } else {
        sb_put(out, "        const int64_t mi_n = ");
        emit_numel(out, b0, 0, b0->nvars);
        sb_put(out, ";\n");
        /* a block per 1024 elements (Triton's one program per XBLOCK tile); the loop inside still
         * strides, so any grid is correct. bench/cuda/pointwise_lab.cu on an H200: against a grid
         * capped at 8 blocks per SM, pointwise_chain 54.8 -> 52.1 us, seed_example 38.1 -> 36.7 us */
        snprintf(grid, sizeof grid, "mi_blocks((mi_n / 4 + 255) / 256, 2147483647LL)");
        snprintf(block, sizeof block, "256");
        guard = "if (mi_n > 0) ";
    }
    StrBuf args;
    sb_init(&args);
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (cg_group_touches(s, g, b) && !inplace_src(s, g, b)) sb_printf(&args, "%s, ", b->name);
    }
    sb_put(&args, "mi_sy");
    if (dual_threads) {
        char blk_name[256], blk_block[16];
        snprintf(blk_name, sizeof blk_name, "%s_blk", g->kernel_name);
        snprintf(blk_block, sizeof blk_block, "%d", dual_threads);
        sb_printf(out, "        if (mi_rows_by_block(mi_rows, mi_sms, %d * mi_occ_w, mi_occ_b))\n", CU_WARP_ROWS);
        launch_stmt(out, guard, pdl, when, blk_name, "mi_blocks(mi_rows, 65535LL * 32)", blk_block, args.s);
        sb_put(out, "        else\n");
    }
    launch_stmt(out, guard, pdl, when, g->kernel_name, grid, block, args.s);
    sb_put(out, "    }\n");
    sb_free(&args);
}

/* Is buffer b never stored (no memory needed): written by a persistent row kernel that keeps
 * it in registers alone (cu_store / cu_store_red: group_local), its group small enough that
 * the register cache never fills (fewer than 64 loads and stores)? ln_gelu's normalized row
 * (32 MB at 8192 x 1024) and its mean and m2 are such. */
bool cu_buffer_unstored(const Schedule *s, const Buffer *b) {
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        if (g->is_extern || !cg_group_writes(s, g, b)) continue;
        if (s->kernels[sched_kernel_of_pos(s, k)].combo || !cu_group_has_reduction(s, g) || !cu_type(b->layout.dtype)) return false;
        RowPlan p;
        row_plan(s->ir->ctx, s, g, &p);
        if (p.mode != ROW_PERSIST) return false;
        int nls = 0;
        const Expr *idx = NULL;
        for (int i = 0; i < g->n; i++) {
            const LoopBody *body = s->nodes[g->nodes[i]].buf->body;
            for (int o = 0; o < body->nops; o++) {
                const LoopOp *op = &body->ops[o];
                if (op->kind != LOP_LOAD && op->kind != LOP_STORE && op->kind != LOP_STORE_REDUCTION) continue;
                if (op->kind == LOP_STORE && op->atomic_add && op->buf == b) return false;   /* stored by atomicAdd */
                nls++;
                if (op->kind != LOP_LOAD && op->buf == b) idx = body->indexes[op->index];
            }
        }
        return nls < 64 && idx && group_local_any(s, g, b, idx, true);
    }
    return false;
}

int cu_emit_kernel(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out) {
    return cu_group_has_reduction(s, g) ? emit_rows(ctx, s, g, out) : emit_flat(ctx, s, g, out);
}
