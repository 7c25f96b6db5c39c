/* ir_print.c — the printing handler: IR text in the style of Inductor's ir_pre_fusion.txt
 * (opN blocks with writes/dependencies, buffer layouts and users, and the loop body replayed
 * against a handler that prints `load = ops.load('arg0_1', get_index)` lines). */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ir_print_layout(const Layout *l, StrBuf *sb) {
    char dev[32];
    sb_printf(sb, "%s('%s', %s, size=[", l->fixed ? "FixedLayout" : "FlexibleLayout",
              device_str(l->device, dev, sizeof dev), dtype_torch_name(l->dtype));
    for (int d = 0; d < l->ndim; d++) { if (d) sb_put(sb, ", "); sym_str_sb(l->size[d], sb); }
    sb_put(sb, "], stride=[");
    for (int d = 0; d < l->ndim; d++) { if (d) sb_put(sb, ", "); sym_str_sb(l->stride[d], sb); }
    sb_put(sb, "]");
    int64_t off;
    if (!(sym_is_int(l->offset, &off) && off == 0)) { sb_put(sb, ", offset="); sym_str_sb(l->offset, sb); }
    sb_put(sb, ")");
}

typedef struct PrintH {
    OpsHandler h;
    StrBuf *sb;
    const LoopBody *b;
    char (*names)[48];
    int n, cap;
    int counts[64];   /* per op-kind name counter */
    const char *kinds[64]; int nkinds;
} PrintH;

static const char *fresh(PrintH *p, const char *base) {
    int k;
    for (k = 0; k < p->nkinds; k++)
        if (strcmp(p->kinds[k], base) == 0) break;
    if (k == p->nkinds && p->nkinds < 64) { p->kinds[p->nkinds] = base; p->counts[p->nkinds++] = 0; }
    if (p->n == p->cap) { p->cap = p->cap ? 2 * p->cap : 32; p->names = mi_xrealloc(p->names, sizeof(*p->names) * p->cap); }
    int c = k < 64 ? p->counts[k]++ : 0;
    if (c) snprintf(p->names[p->n], 48, "%s_%d", base, c);
    else snprintf(p->names[p->n], 48, "%s", base);
    return p->names[p->n++];
}
static int index_no(PrintH *p, Expr *e) {
    for (int i = 0; i < p->b->nindexes; i++)
        if (p->b->indexes[i] == e) return i;
    return 0;
}
static const char *get_index(PrintH *p, Expr *e) {
    const char *g = fresh(p, "get_index");
    sb_printf(p->sb, "        %s = self.get_index('index%d')\n", g, index_no(p, e));
    return g;
}
static IrVal p_load(OpsHandler *h, Buffer *buf, Expr *index) {
    PrintH *p = h->self;
    const char *g = get_index(p, index);
    const char *v = fresh(p, "load");
    sb_printf(p->sb, "        %s = ops.load('%s', %s)\n", v, buf->name, g);
    return p->n - 1;
}
static void p_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    PrintH *p = h->self;
    const char *g = get_index(p, index);
    const char *s = fresh(p, "store");
    sb_printf(p->sb, "        %s = ops.store('%s', %s, %s, None)\n", s, buf->name, g, v >= 0 ? p->names[v] : "?");
}
static void num(StrBuf *sb, double v, DType dt) {
    char buf[64];
    if (dtype_is_float(dt)) sb_put(sb, fx_float_repr(v, buf, sizeof buf));
    else if (dt == DT_BOOL) sb_put(sb, v != 0 ? "True" : "False");
    else sb_printf(sb, "%lld", (long long)v);
}
static IrVal p_constant(OpsHandler *h, double v, DType dt) {
    PrintH *p = h->self;
    const char *c = fresh(p, "constant");
    sb_printf(p->sb, "        %s = ops.constant(", c);
    num(p->sb, v, dt);
    sb_printf(p->sb, ", %s)\n", dtype_torch_name(dt));
    return p->n - 1;
}
static IrVal p_index_expr(OpsHandler *h, Expr *e, DType dt) {
    PrintH *p = h->self;
    const char *g = get_index(p, e);
    const char *c = fresh(p, "index_expr");
    sb_printf(p->sb, "        %s = ops.index_expr(%s, %s)\n", c, g, dtype_torch_name(dt));
    return p->n - 1;
}
static IrVal p_to_dtype(OpsHandler *h, IrVal v, DType dt, DType src) {
    PrintH *p = h->self;
    const char *c = fresh(p, "to_dtype");
    sb_printf(p->sb, "        %s = ops.to_dtype(%s, %s, src_dtype = %s)\n", c, p->names[v], dtype_torch_name(dt), dtype_torch_name(src));
    return p->n - 1;
}
static IrVal p_math(OpsHandler *h, IrMathOp op, const IrVal *a, DType dt) {
    PrintH *p = h->self;
    const char *c = fresh(p, ir_math_name(op));
    sb_printf(p->sb, "        %s = ops.%s(", c, ir_math_name(op));
    for (int i = 0; i < ir_math_arity(op); i++) sb_printf(p->sb, "%s%s", i ? ", " : "", a[i] >= 0 ? p->names[a[i]] : "?");
    sb_put(p->sb, ")\n");
    return p->n - 1;
}
static IrVal p_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, IrVal v) {
    PrintH *p = h->self;
    const char *c = fresh(p, "reduction");
    sb_printf(p->sb, "        %s = ops.reduction(%s, %s, '%s', %s)\n", c, dtype_torch_name(dt), dtype_torch_name(src),
              ir_reduce_name(rt), p->names[v]);
    return p->n - 1;
}
static IrVal p_getitem(OpsHandler *h, IrVal v, int k) {
    PrintH *p = h->self;
    const char *c = fresh(p, "getitem");
    sb_printf(p->sb, "        %s = %s[%d]\n", c, p->names[v], k);
    return p->n - 1;
}
static void p_store_red(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    PrintH *p = h->self;
    const char *g = get_index(p, index);
    const char *s = fresh(p, "store_reduction");
    sb_printf(p->sb, "        %s = ops.store_reduction('%s', %s, %s)\n", s, buf->name, g, p->names[v]);
}

void ir_print_body(const LoopBody *b, const char *opname, StrBuf *sb) {
    sb_printf(sb, "class %s_loop_body:\n    var_ranges = {", opname);
    for (int i = 0; i < b->nvars; i++) {
        if (i) sb_put(sb, ", ");
        sb_printf(sb, "%s: ", b->vars[i]->name);
        sym_str_sb(b->ranges[i], sb);
    }
    sb_put(sb, "}\n");
    for (int i = 0; i < b->nindexes; i++) {
        sb_printf(sb, "    index%d = ", i);
        sym_str_sb(b->indexes[i], sb);
        sb_putc(sb, '\n');
    }
    sb_put(sb, "    def body(self, ops):\n");
    PrintH p = {0};
    p.sb = sb;
    p.b = b;
    p.h = (OpsHandler){&p, p_load, p_store, p_constant, p_index_expr, p_to_dtype, p_math, p_red, p_getitem, p_store_red};
    loop_body_run(b, &p.h);
    const char *last = p.n ? p.names[p.n - 1] : "None";
    sb_printf(sb, "        return %s\n", last);
    free(p.names);
}

static void print_users(const IrModule *m, const Buffer *b, StrBuf *sb) {
    sb_printf(sb, "    %s.users = [", b->name);
    int k = 0;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *u = m->bufs[i];
        if (!ir_is_op(u) || u == b) continue;
        bool reads = false;
        if (u->body)
            for (int o = 0; o < u->body->nops; o++)
                reads |= u->body->ops[o].kind == LOP_LOAD && u->body->ops[o].buf == b;
        for (int a = 0; a < u->neargs; a++) reads |= u->eargs[a].buf == b;
        if (reads) sb_printf(sb, "%sNodeUser(node=SchedulerNode(name='%sop%d'), can_inplace=False, is_weak=False)", k++ ? ", " : "", ir_prefix(m), u->id - m->ninputs);
    }
    if (b->output_index >= 0) sb_printf(sb, "%sNodeUser(node=OUTPUT, can_inplace=False, is_weak=False)", k++ ? ", " : "");
    sb_put(sb, "]\n");
}

void ir_print_buffer(const IrModule *m, const Buffer *b, const char *opname, StrBuf *sb) {
    const char *kind = b->kind == BUF_EXTERN ? "ExternKernelSchedulerNode" : "SchedulerNode";
    const char *bk = b->kind == BUF_EXTERN ? "ExternKernelOut" : "ComputedBuffer";
    sb_printf(sb, "%s: %s(%s)\n", opname, kind, bk);
    DepSet d;
    ir_deps_collect(m, b, &d);
    sb_printf(sb, "%s.writes = [", opname);
    for (int i = 0; i < d.nwrites; i++) { if (i) sb_put(sb, ", "); dep_print(&d.writes[i], b->body, sb); }
    sb_printf(sb, "]\n%s.unmet_dependencies = [", opname);
    int k = 0;
    for (int i = 0; i < d.nreads; i++)
        if (d.reads[i].buf->kind != BUF_INPUT) { if (k++) sb_put(sb, ", "); dep_print(&d.reads[i], b->body, sb); }
    sb_printf(sb, "]\n%s.met_dependencies = [", opname);
    k = 0;
    for (int i = 0; i < d.nreads; i++)
        if (d.reads[i].buf->kind == BUF_INPUT) { if (k++) sb_put(sb, ", "); dep_print(&d.reads[i], b->body, sb); }
    sb_printf(sb, "]\n%s.outputs = [\n    %s: %s\n    %s.layout = ", opname, b->name, bk, b->name);
    ir_print_layout(&b->layout, sb);
    sb_putc(sb, '\n');
    if (b->mutates) sb_printf(sb, "    %s.mutations = ['%s']\n", b->name, b->mutates->name);
    print_users(m, b, sb);
    sb_put(sb, "]\n");
    dep_set_free(&d);
    if (b->kind == BUF_EXTERN) {
        static const char *kn[] = {"extern_kernels.mm", "extern_kernels.addmm", "extern_kernels.bmm", "aten._scaled_dot_product_flash_attention_for_cpu", "torch.ops.higher_order.cond"};
        sb_printf(sb, "%s.node.kernel = %s\n", opname, kn[b->ext]);
        if (b->cond) sb_printf(sb, "%s.node.subgraphs = ['%s', '%s']\n", opname, b->cond->names[0], b->cond->names[1]);
        return;
    }
    char dev[32];
    sb_printf(sb, "%s.group.device = %s\n", opname, device_str(b->layout.device, dev, sizeof dev));
    const LoopBody *lb = b->body;
    sb_printf(sb, "%s.group.iteration = ((", opname);
    for (int i = 0; i < lb->npoint; i++) { if (i) sb_put(sb, ", "); sym_str_sb(lb->ranges[i], sb); }
    sb_put(sb, lb->npoint == 1 ? ",), (" : "), (");
    for (int i = lb->npoint; i < lb->nvars; i++) { if (i > lb->npoint) sb_put(sb, ", "); sym_str_sb(lb->ranges[i], sb); }
    sb_put(sb, lb->nred == 1 ? ",))\n" : "))\n");
    sb_printf(sb, "%s.sizes = ([", opname);
    for (int i = 0; i < lb->npoint; i++) { if (i) sb_put(sb, ", "); sym_str_sb(lb->ranges[i], sb); }
    sb_put(sb, "], [");
    for (int i = lb->npoint; i < lb->nvars; i++) { if (i > lb->npoint) sb_put(sb, ", "); sym_str_sb(lb->ranges[i], sb); }
    sb_put(sb, "])\n");
    /* layouts of everything the body touches */
    const Buffer *seen[64];
    int ns = 0;
    for (int o = 0; o < lb->nops; o++) {
        const Buffer *x = lb->ops[o].buf;
        if (!x) continue;
        bool dup = false;
        for (int i = 0; i < ns; i++) dup |= seen[i] == x;
        if (dup || ns >= 64) continue;
        seen[ns++] = x;
        sb_printf(sb, "%s_layout = ", x->name);
        ir_print_layout(&x->layout, sb);
        sb_putc(sb, '\n');
    }
    ir_print_body(lb, opname, sb);
}

char *ir_print(const IrModule *m) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (!ir_is_op(b)) continue;
        char op[256];
        snprintf(op, sizeof op, "%.200sop%d", ir_prefix(m), b->id - m->ninputs);
        ir_print_buffer(m, b, op, &sb);
        sb_put(&sb, "\n\n");
    }
    ir_print_branches(m, &sb);
    if (m->nguards) {
        sb_put(&sb, "guards = [");
        for (int i = 0; i < m->nguards; i++) sb_printf(&sb, "%s'%s'", i ? ", " : "", m->guards[i]);
        sb_put(&sb, "]\n");
    }
    if (!sb.s) sb_put(&sb, "");
    return sb_take(&sb);
}
