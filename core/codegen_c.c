/* codegen_c.c — the C emitter handler and the file around it. Each fused group becomes
 *
 *   static void cpp_fused_..._N(bufs..., const int64_t *syms) {
 *       #pragma omp parallel for            <- over the group's shared outer dims
 *       for (p0 ...) {
 *           { acc init; #pragma omp simd reduction(..) for (p1 ...) { body } store }   <- a reduction
 *           { #pragma omp simd for (p1 ...) { body; store } }                          <- a pointwise
 *       }
 *   }
 *
 * bodies are LoopBodies replayed against the emitting handler below. */
#include "codegen_c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void codegen_expr_c(const Expr *e, StrBuf *sb) {
    switch (e->kind) {
    case EX_INT: sb_printf(sb, "%lldLL", (long long)e->ival); return;
    case EX_SYM: sb_put(sb, e->name); return;
    case EX_ADD: case EX_MUL:
        sb_putc(sb, '(');
        for (int i = 0; i < e->n; i++) {
            if (i) sb_put(sb, e->kind == EX_ADD ? " + " : "*");
            codegen_expr_c(e->args[i], sb);
        }
        sb_putc(sb, ')');
        return;
    case EX_FLOORDIV: sb_put(sb, "mi_floordiv("); break;
    case EX_CEILDIV: sb_put(sb, "mi_ceildiv("); break;
    case EX_MOD: sb_put(sb, "mi_mod("); break;
    case EX_MODIDX: sb_put(sb, "mi_modidx("); break;
    case EX_MIN: sb_put(sb, "mi_min("); break;
    case EX_MAX: sb_put(sb, "mi_max("); break;
    }
    for (int i = 0; i < e->n; i++) {
        if (i) sb_put(sb, ", ");
        codegen_expr_c(e->args[i], sb);
    }
    sb_putc(sb, ')');
}

static const char *ctype(DType t) {
    switch (t) {
    case DT_F32: return "float";
    case DT_F64: return "double";
    case DT_I64: return "int64_t";
    case DT_I32: return "int32_t";
    case DT_I16: return "int16_t";
    case DT_I8: return "int8_t";
    case DT_U8: return "uint8_t";
    case DT_BOOL: return "_Bool";
    default: return NULL;
    }
}

/* ---- the emitting handler ---- */
typedef struct Em {
    OpsHandler h;
    StrBuf *pre, *body, *post;     /* before the inner loop, inside it, after it */
    const char *indent;            /* body lines */
    const char *oindent;           /* lines before / after the inner loop */
    char (*names)[64];
    DType *dts;
    int n, cap;
    int *tmp;                      /* kernel-wide temp counter */
    bool simd_ok;                  /* reductions in this loop can use a simd reduction clause */
    StrBuf *clauses;               /* "reduction(+:acc0) ..." */
    bool bad;
    char err[160];
} Em;

static IrVal em_new(Em *e, const char *name, DType dt) {
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 32;
        e->names = mi_xrealloc(e->names, sizeof(*e->names) * e->cap);
        e->dts = mi_xrealloc(e->dts, sizeof(DType) * e->cap);
    }
    snprintf(e->names[e->n], 64, "%s", name);
    e->dts[e->n] = dt;
    return e->n++;
}
static IrVal em_tmp(Em *e, DType dt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static IrVal em_tmp(Em *e, DType dt, const char *fmt, ...) {
    char nm[32];
    snprintf(nm, sizeof nm, "tmp%d", (*e->tmp)++);
    const char *ct = ctype(dt);
    if (!ct) { e->bad = true; snprintf(e->err, sizeof e->err, "dtype %s is not supported by the C code generator", dtype_abbrev(dt)); ct = "float"; }
    sb_printf(e->body, "%s    %s %s = ", e->indent, ct, nm);
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sb_put(e->body, buf);
    sb_put(e->body, ";\n");
    return em_new(e, nm, dt);
}
static const char *nm(Em *e, IrVal v) { return v >= 0 && v < e->n ? e->names[v] : "0"; }
static DType dtv(Em *e, IrVal v) { return v >= 0 && v < e->n ? e->dts[v] : DT_F32; }

static IrVal c_load(OpsHandler *h, Buffer *buf, Expr *index) {
    Em *e = h->self;
    StrBuf ix;
    sb_init(&ix);
    codegen_expr_c(index, &ix);
    IrVal v = em_tmp(e, buf->layout.dtype, "%s[%s]", ir_store_target(buf)->name, ix.s);
    sb_free(&ix);
    return v;
}
static void c_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Em *e = h->self;
    sb_printf(e->body, "%s    %s[", e->indent, buf->name);
    codegen_expr_c(index, e->body);
    sb_printf(e->body, "] = %s;\n", nm(e, v));
}
static void lit(StrBuf *sb, double v, DType dt) {
    if (isnan(v)) sb_put(sb, "NAN");
    else if (isinf(v)) sb_put(sb, v > 0 ? "INFINITY" : "-INFINITY");
    else if (dtype_is_float(dt)) {
        char b[64];
        snprintf(b, sizeof b, "%.17g", v);
        if (!strpbrk(b, ".eEn")) strcat(b, ".0");
        sb_printf(sb, "%s%s", b, dt == DT_F32 ? "f" : "");
    }
    else sb_printf(sb, "%lldLL", (long long)v);
}
static IrVal c_constant(OpsHandler *h, double v, DType dt) {
    Em *e = h->self;
    StrBuf s;
    sb_init(&s);
    lit(&s, v, dt);
    IrVal r = em_tmp(e, dt, "%s", s.s);
    sb_free(&s);
    return r;
}
static IrVal c_index_expr(OpsHandler *h, Expr *x, DType dt) {
    Em *e = h->self;
    StrBuf s;
    sb_init(&s);
    codegen_expr_c(x, &s);
    IrVal r = em_tmp(e, dt, "%s", s.s);
    sb_free(&s);
    return r;
}
static IrVal c_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    Em *e = h->self;
    return em_tmp(e, dt, "(%s)(%s)", ctype(dt) ? ctype(dt) : "float", nm(e, v));
}

static IrVal c_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) {
    Em *e = h->self;
    const char *x = nm(e, a[0]), *y = ir_math_arity(op) > 1 ? nm(e, a[1]) : "", *z = ir_math_arity(op) > 2 ? nm(e, a[2]) : "";
    DType at = dtv(e, a[0]);
    bool f32 = at == DT_F32, fl = dtype_is_float(at);
    const char *sf = f32 ? "f" : "";
    switch (op) {
    case IOP_NEG: return em_tmp(e, dt, "-%s", x);
    case IOP_EXP: return em_tmp(e, dt, "exp%s(%s)", sf, x);
    case IOP_LOG: return em_tmp(e, dt, "log%s(%s)", sf, x);
    case IOP_SQRT: return em_tmp(e, dt, "sqrt%s(%s)", sf, x);
    case IOP_RSQRT: return em_tmp(e, dt, "1%s / sqrt%s(%s)", f32 ? ".0f" : ".0", sf, x);
    case IOP_TANH: return em_tmp(e, dt, "tanh%s(%s)", sf, x);
    case IOP_SIGMOID: return em_tmp(e, dt, "1%s / (1%s + exp%s(-%s))", f32 ? ".0f" : ".0", f32 ? ".0f" : ".0", sf, x);
    case IOP_RELU: return em_tmp(e, dt, "%s < 0 ? 0 : %s", x, x);
    case IOP_ERF: return em_tmp(e, dt, "erf%s(%s)", sf, x);
    case IOP_SIN: return em_tmp(e, dt, "sin%s(%s)", sf, x);
    case IOP_COS: return em_tmp(e, dt, "cos%s(%s)", sf, x);
    case IOP_TAN: return em_tmp(e, dt, "tan%s(%s)", sf, x);
    case IOP_ABS: return fl ? em_tmp(e, dt, "fabs%s(%s)", sf, x) : em_tmp(e, dt, "%s < 0 ? -%s : %s", x, x, x);
    case IOP_RECIPROCAL: return em_tmp(e, dt, "1%s / %s", f32 ? ".0f" : ".0", x);
    case IOP_EXPM1: return em_tmp(e, dt, "expm1%s(%s)", sf, x);
    case IOP_LOG1P: return em_tmp(e, dt, "log1p%s(%s)", sf, x);
    case IOP_FLOOR: return em_tmp(e, dt, "floor%s(%s)", sf, x);
    case IOP_CEIL: return em_tmp(e, dt, "ceil%s(%s)", sf, x);
    case IOP_ROUND: return em_tmp(e, dt, "nearbyint%s(%s)", sf, x);
    case IOP_SIGN: return em_tmp(e, dt, "(%s > 0) - (%s < 0)", x, x);
    case IOP_LOGICAL_NOT: return em_tmp(e, dt, "!%s", x);
    case IOP_ADD: return em_tmp(e, dt, "%s + %s", x, y);
    case IOP_SUB: return em_tmp(e, dt, "%s - %s", x, y);
    case IOP_MUL: return em_tmp(e, dt, "%s * %s", x, y);
    case IOP_TRUEDIV: return em_tmp(e, dt, "%s / %s", x, y);
    case IOP_POW: return em_tmp(e, dt, "pow%s(%s, %s)", sf, x, y);
    case IOP_MAXIMUM: return fl ? em_tmp(e, dt, "fmax%s(%s, %s)", sf, x, y) : em_tmp(e, dt, "%s > %s ? %s : %s", x, y, x, y);
    case IOP_MINIMUM: return fl ? em_tmp(e, dt, "fmin%s(%s, %s)", sf, x, y) : em_tmp(e, dt, "%s < %s ? %s : %s", x, y, x, y);
    case IOP_EQ: return em_tmp(e, dt, "%s == %s", x, y);
    case IOP_NE: return em_tmp(e, dt, "%s != %s", x, y);
    case IOP_LT: return em_tmp(e, dt, "%s < %s", x, y);
    case IOP_LE: return em_tmp(e, dt, "%s <= %s", x, y);
    case IOP_GT: return em_tmp(e, dt, "%s > %s", x, y);
    case IOP_GE: return em_tmp(e, dt, "%s >= %s", x, y);
    case IOP_LOGICAL_AND: return em_tmp(e, dt, "%s && %s", x, y);
    case IOP_LOGICAL_OR: return em_tmp(e, dt, "%s || %s", x, y);
    case IOP_FLOORDIV: return fl ? em_tmp(e, dt, "floor%s(%s / %s)", sf, x, y) : em_tmp(e, dt, "mi_floordiv(%s, %s)", x, y);
    case IOP_FMOD: return fl ? em_tmp(e, dt, "fmod%s(%s, %s)", sf, x, y) : em_tmp(e, dt, "%s %% %s", x, y);
    case IOP_WHERE: return em_tmp(e, dt, "%s ? %s : %s", x, y, z);
    default: break;
    }
    e->bad = true;
    snprintf(e->err, sizeof e->err, "op %s has no C lowering", ir_math_name(op));
    return em_tmp(e, dt, "0");
}

static IrVal c_reduction(OpsHandler *h, DType dt, DType src, IrReduceType rt, IrVal v) {
    Em *e = h->self;
    char acc[32];
    int id = (*e->tmp)++;
    snprintf(acc, sizeof acc, "acc%d", id);
    const char *ct = ctype(dt) ? ctype(dt) : "float";
    const char *x = nm(e, v);
    bool fl = dtype_is_float(dt);
    switch (rt) {
    case RED_SUM:
        sb_printf(e->pre, "%s    %s %s = 0;\n", e->oindent, ct, acc);
        sb_printf(e->body, "%s    %s += %s;\n", e->indent, acc, x);
        sb_printf(e->clauses, " reduction(+:%s)", acc);
        break;
    case RED_PROD:
        sb_printf(e->pre, "%s    %s %s = 1;\n", e->oindent, ct, acc);
        sb_printf(e->body, "%s    %s *= %s;\n", e->indent, acc, x);
        sb_printf(e->clauses, " reduction(*:%s)", acc);
        break;
    case RED_MAX: case RED_MIN: {
        bool mx = rt == RED_MAX;
        if (fl) sb_printf(e->pre, "%s    %s %s = %sINFINITY;\n", e->oindent, ct, acc, mx ? "-" : "");
        else sb_printf(e->pre, "%s    %s %s = %s;\n", e->oindent, ct, acc, mx ? "INT64_MIN" : "INT64_MAX");
        /* NaN propagates like torch.amax/amin: a NaN x wins and then sticks (x > NaN is false) */
        sb_printf(e->body, "%s    %s = (%s != %s || %s %s %s) ? %s : %s;\n", e->indent, acc, x, x, x, mx ? ">" : "<", acc, x, acc);
        if (fl) e->simd_ok = false;   /* omp's max/min combiner would drop a NaN lane */
        else sb_printf(e->clauses, " reduction(%s:%s)", mx ? "max" : "min", acc);
        break;
    }
    case RED_ARGMAX: case RED_ARGMIN: {
        bool mx = rt == RED_ARGMAX;
        const char *st = ctype(src) ? ctype(src) : "float";
        sb_printf(e->pre, "%s    %s %s_v = %s; int64_t %s = 0; int64_t %s_i = 0;\n", e->oindent, st, acc,
                  dtype_is_float(src) ? (mx ? "-INFINITY" : "INFINITY") : (mx ? "INT64_MIN" : "INT64_MAX"), acc, acc);
        /* like torch: the first NaN is the arg-extremum */
        sb_printf(e->body, "%s    if (%s_v == %s_v && (%s != %s || %s %s %s_v)) { %s_v = %s; %s = %s_i; }\n%s    %s_i++;\n", e->indent,
                  acc, acc, x, x, x, mx ? ">" : "<", acc, acc, x, acc, acc, e->indent, acc);
        e->simd_ok = false;
        break;
    }
    case RED_WELFORD:
        sb_printf(e->pre, "%s    double %s_mean = 0, %s_m2 = 0, %s_n = 0;\n", e->oindent, acc, acc, acc);
        sb_printf(e->body, "%s    { double d_ = (double)%s - %s_mean; %s_n += 1; %s_mean += d_ / %s_n; %s_m2 += d_ * ((double)%s - %s_mean); }\n",
                  e->indent, x, acc, acc, acc, acc, acc, x, acc);
        e->simd_ok = false;
        break;
    default: break;
    }
    return em_new(e, acc, dt);
}
static IrVal c_getitem(OpsHandler *h, IrVal v, int k) {
    Em *e = h->self;
    char n2[80];
    static const char *sfx[3] = {"_mean", "_m2", "_n"};
    snprintf(n2, sizeof n2, "(float)%s%s", nm(e, v), sfx[k < 3 && k >= 0 ? k : 0]);
    return em_new(e, n2, dtv(e, v));
}
static void c_store_red(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    Em *e = h->self;
    sb_printf(e->post, "%s    %s[", e->oindent, ir_store_target(buf)->name);
    codegen_expr_c(index, e->post);
    sb_printf(e->post, "] = %s;\n", nm(e, v));
}

/* ---- kernels ---- */

static bool group_writes(const Schedule *s, const SchedGroup *g, const Buffer *b) {
    for (int i = 0; i < g->n; i++) {
        const DepSet *d = &s->nodes[g->nodes[i]].deps;
        for (int w = 0; w < d->nwrites; w++)
            if (d->writes[w].buf == b) return true;
    }
    return false;
}
static bool group_touches(const Schedule *s, const SchedGroup *g, const Buffer *b) {
    for (int i = 0; i < g->n; i++) {
        const DepSet *d = &s->nodes[g->nodes[i]].deps;
        for (int w = 0; w < d->nwrites; w++) if (d->writes[w].buf == b) return true;
        for (int r = 0; r < d->nreads; r++) if (d->reads[r].buf == b) return true;
    }
    return false;
}

static void emit_loop_header(StrBuf *sb, const char *ind, const LoopBody *b, int v) {
    sb_printf(sb, "%sfor (int64_t %s = 0; %s < ", ind, b->vars[v]->name, b->vars[v]->name);
    codegen_expr_c(b->ranges[v], sb);
    sb_printf(sb, "; %s++)\n", b->vars[v]->name);
}

static int emit_kernel(MiCtx *ctx, const Schedule *s, const SchedGroup *g, StrBuf *out) {
    const IrModule *m = s->ir;
    sb_printf(out, "static void %s(", g->kernel_name);
    int na = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->mutates || b->extern_owner != NULL ? false : false) continue;
        if (!group_touches(s, g, b)) continue;
        const char *ct = ctype(b->layout.dtype);
        if (!ct) return mi_err(ctx, NULL, 0, 0, "dtype %s of buffer '%s' is not supported by the C code generator", dtype_abbrev(b->layout.dtype), b->name);
        sb_printf(out, "%s%s%s *restrict %s", na++ ? ", " : "", group_writes(s, g, b) ? "" : "const ", ct, b->name);
    }
    sb_printf(out, "%sconst int64_t *syms)\n{\n", na ? ", " : "");
    for (int i = 0; i < m->nsyms; i++) sb_printf(out, "    const int64_t %s = syms[%d];\n", m->sym_names[i], i);
    sb_put(out, "    (void)syms;\n");
    int tmp = 0;
    int mo = g->nouter;
    const LoopBody *b0 = s->nodes[g->nodes[0]].buf->body;
    char ind[128] = "    ";
    if (mo > 0) {
        if (mo > 1) sb_printf(out, "    #pragma omp parallel for collapse(%d)\n", mo);
        else sb_put(out, "    #pragma omp parallel for\n");
        for (int v = 0; v < mo; v++) {
            emit_loop_header(out, ind, b0, v);
            if (v + 1 < mo) strcat(ind, "    ");
        }
        sb_printf(out, "%s{\n", ind);
    } else sb_printf(out, "%s{\n", ind);
    for (int i = 0; i < g->n; i++) {
        const Buffer *bf = s->nodes[g->nodes[i]].buf;
        const LoopBody *b = bf->body;
        StrBuf pre, body, post, clauses;
        sb_init(&pre); sb_init(&body); sb_init(&post); sb_init(&clauses);
        char inner[160];
        char outer_ind[160];
        snprintf(outer_ind, sizeof outer_ind, "%s    ", ind);
        snprintf(inner, sizeof inner, "%s    ", ind);
        for (int v = mo; v < b->nvars; v++) strcat(inner, "    ");
        Em e = {0};
        e.pre = &pre; e.body = &body; e.post = &post; e.clauses = &clauses;
        e.indent = b->nvars > mo ? inner : outer_ind;
        e.oindent = outer_ind;
        e.tmp = &tmp;
        e.simd_ok = true;
        e.h = (OpsHandler){&e, c_load, c_store, c_constant, c_index_expr, c_to_dtype, c_math,
                           c_reduction, c_getitem, c_store_red};
        loop_body_run(b, &e.h);
        free(e.names);
        free(e.dts);
        if (e.bad) {
            sb_free(&pre); sb_free(&body); sb_free(&post); sb_free(&clauses);
            return mi_err(ctx, NULL, 0, 0, "%s (buffer '%s')", e.err, bf->name);
        }
        sb_printf(out, "%s    /* %s: %s */\n%s    {\n", ind, s->nodes[g->nodes[i]].name, bf->name, ind);
        if (pre.s) sb_put(out, pre.s);
        if (b->nvars > mo) {
            char li[160];
            snprintf(li, sizeof li, "%s        ", ind);
            for (int v = mo; v < b->nvars; v++) {
                bool innermost = v == b->nvars - 1;
                if (mo == 0 && v == 0 && !b->nred && b->nvars == 1) sb_printf(out, "%s#pragma omp parallel for simd\n", li);
                else if (mo == 0 && v == 0 && !b->nred) sb_printf(out, "%s#pragma omp parallel for\n", li);
                else if (innermost && e.simd_ok) sb_printf(out, "%s#pragma omp simd%s\n", li, clauses.s ? clauses.s : "");
                emit_loop_header(out, li, b, v);
                sb_printf(out, "%s{\n", li);
                strcat(li, "    ");
            }
            if (body.s) sb_put(out, body.s);
            for (int v = b->nvars - 1; v >= mo; v--) {
                li[strlen(li) - 4] = 0;
                sb_printf(out, "%s}\n", li);
            }
        } else if (body.s) sb_put(out, body.s);
        if (post.s) sb_put(out, post.s);
        sb_printf(out, "%s    }\n", ind);
        sb_free(&pre); sb_free(&body); sb_free(&post); sb_free(&clauses);
    }
    sb_printf(out, "%s}\n}\n\n", ind);
    return 0;
}

static const char *prelude =
    "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include <omp.h>\n"
    "#ifdef MI_HAVE_CBLAS\n#include <cblas.h>\n#endif\n\n"
    "static inline int64_t mi_floordiv(int64_t a, int64_t b) { int64_t q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q--; return q; }\n"
    "static inline int64_t mi_mod(int64_t a, int64_t b) { int64_t r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
    "static inline int64_t mi_modidx(int64_t x, int64_t d, int64_t m) { return mi_mod(mi_floordiv(x, d), m); }\n"
    "static inline int64_t mi_ceildiv(int64_t a, int64_t b) { return -mi_floordiv(-a, b); }\n"
    "static inline int64_t mi_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "static inline int64_t mi_max(int64_t a, int64_t b) { return a > b ? a : b; }\n\n";

static const char *gemm_src =
    "/* C[M,N] (+)= A[M,K] @ B[K,N]; A, B strided; C row-major with leading dim ldc */\n"
    "static void mi_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t sa0, int64_t sa1,\n"
    "                    const float *B, int64_t sb0, int64_t sb1, float *C, int64_t ldc, int acc)\n{\n"
    "#ifdef MI_HAVE_CBLAS\n"
    "    int ta = -1, tb = -1; int64_t lda = 0, ldb = 0;\n"
    "    if (sa1 == 1 && sa0 >= (K > 1 ? K : 1)) { ta = 0; lda = sa0; } else if (sa0 == 1 && sa1 >= (M > 1 ? M : 1)) { ta = 1; lda = sa1; }\n"
    "    if (sb1 == 1 && sb0 >= (N > 1 ? N : 1)) { tb = 0; ldb = sb0; } else if (sb0 == 1 && sb1 >= (K > 1 ? K : 1)) { tb = 1; ldb = sb1; }\n"
    "    if (ta >= 0 && tb >= 0 && M > 0 && N > 0 && K > 0 && M * N * K >= (1 << 21)) {   /* small: the loop below wins */\n"
    "        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,\n"
    "                    (int)M, (int)N, (int)K, 1.0f, A, (int)lda, B, (int)ldb, acc ? 1.0f : 0.0f, C, (int)ldc);\n"
    "        return;\n    }\n#endif\n"
    "    #pragma omp parallel for\n"
    "    for (int64_t i = 0; i < M; i++) {\n"
    "        float *c = C + i * ldc;\n"
    "        if (!acc) for (int64_t j = 0; j < N; j++) c[j] = 0;\n"
    "        for (int64_t k0 = 0; k0 < K; k0 += 64) {\n"
    "            int64_t k1 = k0 + 64 < K ? k0 + 64 : K;\n"
    "            for (int64_t k = k0; k < k1; k++) {\n"
    "                float a = A[i * sa0 + k * sa1];\n"
    "                const float *b = B + k * sb0;\n"
    "                #pragma omp simd\n"
    "                for (int64_t j = 0; j < N; j++) c[j] += a * b[j * sb1];\n"
    "            }\n        }\n    }\n}\n\n";

static const char *sdpa_src =
    "/* out = softmax(q @ k^T * scale) @ v per (batch, head); lse = logsumexp of the scores */\n"
    "static void mi_sdpa(int64_t B, int64_t H, int64_t L, int64_t S, int64_t E, int64_t Ev, float scale,\n"
    "                    const float *q, const int64_t *sq, const float *k, const int64_t *sk,\n"
    "                    const float *v, const int64_t *sv, float *out, float *lse)\n{\n"
    "    #pragma omp parallel for collapse(3)\n"
    "    for (int64_t b = 0; b < B; b++) for (int64_t h = 0; h < H; h++) for (int64_t i = 0; i < L; i++) {\n"
    "        float *w = malloc(sizeof(float) * (S > 0 ? S : 1));\n"
    "        if (!w) continue;\n"
    "        const float *qi = q + b * sq[0] + h * sq[1] + i * sq[2];\n"
    "        float mx = -INFINITY;\n"
    "        for (int64_t j = 0; j < S; j++) {\n"
    "            const float *kj = k + b * sk[0] + h * sk[1] + j * sk[2];\n"
    "            float d = 0;\n"
    "            for (int64_t e = 0; e < E; e++) d += qi[e * sq[3]] * kj[e * sk[3]];\n"
    "            w[j] = d * scale;\n"
    "            if (w[j] > mx) mx = w[j];\n"
    "        }\n"
    "        float sum = 0;\n"
    "        for (int64_t j = 0; j < S; j++) { w[j] = expf(w[j] - mx); sum += w[j]; }\n"
    "        float *o = out + ((b * H + h) * L + i) * Ev;\n"
    "        for (int64_t e = 0; e < Ev; e++) o[e] = 0;\n"
    "        for (int64_t j = 0; j < S; j++) {\n"
    "            const float *vj = v + b * sv[0] + h * sv[1] + j * sv[2];\n"
    "            float p = w[j] / sum;\n"
    "            for (int64_t e = 0; e < Ev; e++) o[e] += p * vj[e * sv[3]];\n"
    "        }\n"
    "        if (lse) lse[(b * H + h) * L + i] = logf(sum) + mx;\n"
    "        free(w);\n"
    "    }\n}\n\n";

static void ex(StrBuf *sb, Expr *e) { codegen_expr_c(e, sb); }

static void emit_extern_call(const Schedule *s, const Buffer *b, StrBuf *sb) {
    const ExternArg *a = b->eargs;
    if (b->ext == EXT_SDPA) {
        sb_put(sb, "    {\n");
        const char *nmq[3] = {"sq", "sk", "sv"};
        for (int i = 0; i < 3; i++) {
            sb_printf(sb, "        const int64_t %s[4] = {", nmq[i]);
            for (int d = 0; d < 4; d++) { if (d) sb_put(sb, ", "); ex(sb, a[i].view.stride[d]); }
            sb_put(sb, "};\n");
        }
        sb_put(sb, "        mi_sdpa(");
        ex(sb, a[0].view.size[0]); sb_put(sb, ", "); ex(sb, a[0].view.size[1]); sb_put(sb, ", ");
        ex(sb, a[0].view.size[2]); sb_put(sb, ", "); ex(sb, a[1].view.size[2]); sb_put(sb, ", ");
        ex(sb, a[0].view.size[3]); sb_put(sb, ", "); ex(sb, a[2].view.size[3]);
        sb_printf(sb, ", %.9gf,\n                ", b->scale);
        for (int i = 0; i < 3; i++) {
            sb_printf(sb, "%s + ", a[i].buf->name); ex(sb, a[i].view.offset); sb_printf(sb, ", %s, ", nmq[i]);
        }
        sb_printf(sb, "%s, %s);\n    }\n", b->name, b->extra_out ? b->extra_out->name : "NULL");
        return;
    }
    const ExternArg *A = b->ext == EXT_ADDMM ? &a[1] : &a[0], *Bm = b->ext == EXT_ADDMM ? &a[2] : &a[1];
    int off = b->ext == EXT_BMM ? 1 : 0;
    sb_put(sb, "    {\n");
    if (b->ext == EXT_ADDMM) {   /* C = bias broadcast, then accumulate */
        const Layout *bl = &a[0].view;
        sb_put(sb, "        #pragma omp parallel for\n        for (int64_t i = 0; i < ");
        ex(sb, b->layout.size[0]);
        sb_put(sb, "; i++)\n            for (int64_t j = 0; j < ");
        ex(sb, b->layout.size[1]);
        sb_printf(sb, "; j++)\n                %s[i * ", b->name);
        ex(sb, b->layout.stride[0]);
        sb_printf(sb, " + j] = %s[", a[0].buf->name);
        ex(sb, bl->offset);
        if (bl->ndim == 1) { sb_put(sb, " + j * "); ex(sb, bl->stride[0]); }
        else if (bl->ndim == 2) { sb_put(sb, " + i * "); ex(sb, bl->stride[0]); sb_put(sb, " + j * "); ex(sb, bl->stride[1]); }
        sb_put(sb, "];\n");
    }
    if (b->ext == EXT_BMM) {
        sb_put(sb, "        for (int64_t bt = 0; bt < ");
        ex(sb, b->layout.size[0]);
        sb_put(sb, "; bt++)\n    ");
    }
    sb_put(sb, "        mi_gemm(");
    ex(sb, b->layout.size[off]); sb_put(sb, ", "); ex(sb, b->layout.size[off + 1]); sb_put(sb, ", ");
    ex(sb, A->view.size[off + 1]);
    sb_printf(sb, ", %s + ", A->buf->name); ex(sb, A->view.offset);
    if (off) { sb_put(sb, " + bt * "); ex(sb, A->view.stride[0]); }
    sb_put(sb, ", "); ex(sb, A->view.stride[off]); sb_put(sb, ", "); ex(sb, A->view.stride[off + 1]);
    sb_printf(sb, ", %s + ", Bm->buf->name); ex(sb, Bm->view.offset);
    if (off) { sb_put(sb, " + bt * "); ex(sb, Bm->view.stride[0]); }
    sb_put(sb, ", "); ex(sb, Bm->view.stride[off]); sb_put(sb, ", "); ex(sb, Bm->view.stride[off + 1]);
    sb_printf(sb, ", %s", b->name);
    if (off) { sb_put(sb, " + bt * "); ex(sb, b->layout.stride[0]); }
    sb_put(sb, ", "); ex(sb, b->layout.stride[off]);
    sb_printf(sb, ", %d);\n    }\n", b->ext == EXT_ADDMM);
}

static bool needs_alloc(const Buffer *b) {
    return (b->kind == BUF_COMPUTED && !b->mutates && b->output_index < 0) ||
           (b->kind == BUF_EXTERN && b->output_index < 0);
}

char *codegen_c(MiCtx *ctx, const Schedule *s) {
    const IrModule *m = s->ir;
    StrBuf out;
    sb_init(&out);
    sb_put(&out, "/* generated by minductor: one function per fused kernel, then call() */\n");
    sb_put(&out, prelude);
    bool has_mm = false, has_sdpa = false;
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        if (g->is_extern) {
            const Buffer *b = s->nodes[g->nodes[0]].buf;
            if (b->ext == EXT_SDPA) has_sdpa = true; else has_mm = true;
            for (int i = 0; i < b->neargs; i++)
                if (b->eargs[i].buf->layout.dtype != DT_F32) { sb_free(&out); mi_err(ctx, NULL, 0, 0, "extern kernel '%s': only f32 is supported", b->name); return NULL; }
        }
    }
    if (has_mm) sb_put(&out, gemm_src);
    if (has_sdpa) sb_put(&out, sdpa_src);
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        if (g->is_extern) continue;
        if (emit_kernel(ctx, s, g, &out) < 0) { sb_free(&out); return NULL; }
    }
    /* ABI symbols */
    sb_put(&out, "const char *mi_sym_names[] = {");
    for (int i = 0; i < m->nsyms; i++) sb_printf(&out, "\"%s\", ", m->sym_names[i]);
    sb_put(&out, "NULL};\n");
    sb_printf(&out, "const int mi_num_outputs = %d;\n\n", m->noutputs);
    sb_put(&out, "int call(void *const *inputs, void *const *outputs, const int64_t *syms)\n{\n");
    for (int i = 0; i < m->nsyms; i++) sb_printf(&out, "    const int64_t %s = syms[%d]; (void)%s;\n", m->sym_names[i], i, m->sym_names[i]);
    for (int i = 0; i < m->ninputs; i++) {
        const Buffer *b = m->inputs[i];
        const char *ct = ctype(b->layout.dtype);
        if (!ct) { sb_free(&out); mi_err(ctx, NULL, 0, 0, "input '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype)); return NULL; }
        sb_printf(&out, "    %s *%s = (%s *)inputs[%d]; (void)%s;\n", ct, b->name, ct, i, b->name);
    }
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (b->output_index >= 0 && b->kind != BUF_INPUT) {
            const char *ct = ctype(b->layout.dtype);
            if (!ct) { sb_free(&out); mi_err(ctx, NULL, 0, 0, "output '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype)); return NULL; }
            sb_printf(&out, "    %s *%s = (%s *)outputs[%d];\n", ct, b->name, ct, b->output_index);
        }
    }
    /* dead / never-written intermediates still get a name so kernels compile */
    bool *allocated = mi_xcalloc(m->nbufs + 1, 1);
    for (int k = 0; k < s->norder; k++) {
        const SchedGroup *g = &s->groups[s->order[k]];
        for (int i = 0; i < m->nbufs; i++) {
            const Buffer *b = m->bufs[i];
            if (!needs_alloc(b) || allocated[i] || !group_writes(s, g, b)) continue;
            allocated[i] = true;
            const char *ct = ctype(b->layout.dtype);
            if (!ct) { free(allocated); sb_free(&out); mi_err(ctx, NULL, 0, 0, "buffer '%s': dtype %s is not supported", b->name, dtype_abbrev(b->layout.dtype)); return NULL; }
            if (s->reuse_of[i] >= 0) {
                sb_printf(&out, "    %s *%s = %s;   /* reuses the freed %s */\n", ct, b->name, m->bufs[s->reuse_of[i]]->name, m->bufs[s->reuse_of[i]]->name);
            } else {
                sb_printf(&out, "    %s *%s = malloc(sizeof(%s) * (size_t)(", ct, b->name, ct);
                ex(&out, layout_storage_size(m->ctx->sym, &b->layout));
                sb_printf(&out, "));\n    if (!%s) return 1;\n", b->name);
            }
        }
        if (g->is_extern) emit_extern_call(s, s->nodes[g->nodes[0]].buf, &out);
        else sb_printf(&out, "    %s(", g->kernel_name);
        if (!g->is_extern) {
            int na = 0;
            for (int i = 0; i < m->nbufs; i++) {
                const Buffer *b = m->bufs[i];
                if (group_touches(s, g, b)) sb_printf(&out, "%s%s", na++ ? ", " : "", b->name);
            }
            sb_printf(&out, "%ssyms);\n", na ? ", " : "");
        }
    }
    for (int i = 0; i < m->nbufs; i++)
        if (allocated[i] && s->reuse_of[i] < 0) sb_printf(&out, "    free(%s);\n", m->bufs[i]->name);
    free(allocated);
    sb_put(&out, "    return 0;\n}\n");
    return sb_take(&out);
}
