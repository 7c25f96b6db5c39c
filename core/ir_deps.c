/* ir_deps.c — the dependency-extraction handler: replays a buffer's LoopBody and records
 * MemoryDep(buffer, index) reads and writes (extern kernels: StarDeps on whole buffers).
 * The scheduler decides fusion legality from these. */
#include "ir.h"

#include <stdlib.h>

typedef struct DepH { OpsHandler h; DepSet *d; } DepH;

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
static IrVal d_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, IrVal v) { return 0; }
static IrVal d_getitem(OpsHandler *h, IrVal v, int k) { return 0; }

void ir_deps_collect(const IrModule *m, const Buffer *b, DepSet *out) {
    *out = (DepSet){0};
    if (b->kind == BUF_EXTERN) {
        for (int i = 0; i < b->neargs; i++)
            add_dep(&out->reads, &out->nreads, (Dep){DEP_STAR, b->eargs[i].buf, NULL, false});
        add_dep(&out->writes, &out->nwrites, (Dep){DEP_STAR, (Buffer *)b, NULL, false});
        if (b->extra_out) add_dep(&out->writes, &out->nwrites, (Dep){DEP_STAR, b->extra_out, NULL, false});
        for (int k = 1; b->cond && k < b->cond->nouts; k++)
            add_dep(&out->writes, &out->nwrites, (Dep){DEP_STAR, b->cond->outs[k], NULL, false});
        return;
    }
    if (!b->body) return;
    DepH s = {{0}, out};
    s.h = (OpsHandler){&s, d_load, d_store, d_constant, d_index_expr, d_to_dtype, d_math, d_red,
                       d_getitem, d_store};
    loop_body_run(b->body, &s.h);
}

void dep_set_free(DepSet *d) {
    free(d->reads);
    free(d->writes);
    *d = (DepSet){0};
}

void dep_print(const Dep *d, const LoopBody *body, StrBuf *sb) {
    if (d->kind == DEP_STAR) { sb_printf(sb, "StarDep(name='%s')", d->buf->name); return; }
    sb_printf(sb, "MemoryDep('%s', ", d->buf->name);
    sym_str_sb(d->index, sb);
    sb_put(sb, ", {");
    for (int i = 0; body && i < body->nvars; i++) {
        if (i) sb_put(sb, ", ");
        sb_printf(sb, "%s: ", body->vars[i]->name);
        sym_str_sb(body->ranges[i], sb);
    }
    sb_put(sb, "})");
}
