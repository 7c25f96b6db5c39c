/* ir_print.c — the printing handler: IR text in the style of Inductor's ir_pre_fusion.txt
 * (opN blocks with writes/dependencies, buffer layouts and users, and the loop body replayed
 * against a handler that prints `load = ops.load('arg0_1', get_index)` lines). */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ir_print_layout(const Layout *l, StrBuf *sb) {
    char dev[32];
    if (l->multi) {   /* ir.MultiOutputLayout: a torch.device, no storage */
        if (l->device.kind == DEV_CPU) sb_put(sb, "MultiOutputLayout(device=device(type='cpu'))");
        else sb_printf(sb, "MultiOutputLayout(device=device(type='cuda', index=%d))", l->device.index < 0 ? 0 : l->device.index);
        return;
    }
    /* Printed after lowering, when every realized buffer's layout is decided (Inductor freezes
     * them too: its ir_pre_fusion.txt shows FixedLayout); `fixed` only guided lowering. */
    sb_printf(sb, "%s('%s', %s, size=[", l->non_owning ? "NonOwningLayout" : "FixedLayout", device_str(l->device, dev, sizeof dev),
              dtype_torch_name(l->dtype));
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
    bool none_return;  /* the body ends in a store_reduction of a plain reduction */
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
/* "get_index_N = self.get_index('indexK')"; returns the name's slot: a later fresh() may move
 * p->names, so callers read p->names[slot] after it, never a pointer kept across it */
static int get_index(PrintH *p, Expr *e) {
    const char *g = fresh(p, "get_index");
    sb_printf(p->sb, "        %s = self.get_index('index%d')\n", g, index_no(p, e));
    return p->n - 1;
}
static IrVal p_load(OpsHandler *h, Buffer *buf, Expr *index) {
    PrintH *p = h->self;
    int g = get_index(p, index);
    const char *v = fresh(p, "load");
    sb_printf(p->sb, "        %s = ops.load('%s', %s)\n", v, buf->name, p->names[g]);
    return p->n - 1;
}
static void p_store(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    PrintH *p = h->self;
    int g = get_index(p, index);
    p->none_return = false;
    const char *s = fresh(p, "store");
    sb_printf(p->sb, "        %s = ops.store('%s', %s, %s, None)\n", s, buf->name, p->names[g], v >= 0 ? p->names[v] : "?");
}
static void p_store_atomic_add(OpsHandler *h, Buffer *buf, Expr *index, IrVal v) {
    PrintH *p = h->self;
    int g = get_index(p, index);
    p->none_return = false;
    const char *s = fresh(p, "store");
    sb_printf(p->sb, "        %s = ops.store('%s', %s, %s, 'atomic_add')\n", s, buf->name, p->names[g], v >= 0 ? p->names[v] : "?");
}
/* LoopBody's submodule call for an indirect index: "set_indirect0 = self.set_indirect0(load)" */
static Expr *p_indirect(OpsHandler *h, IrVal x, Expr *size, bool check, bool wrap_neg, Expr *sym) {
    PrintH *p = h->self;
    const char *n = sym ? sym->name : "indirect";
    sb_printf(p->sb, "        set_%s = self.set_%s(%s)\n", n, n, x >= 0 ? p->names[x] : "?");
    return sym;
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
    int g = get_index(p, e);
    const char *c = fresh(p, "index_expr");
    sb_printf(p->sb, "        %s = ops.index_expr(%s, %s)\n", c, p->names[g], dtype_torch_name(dt));
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
/* ops.reduction; welford_combine's three values print as FX prints a tuple argument:
 * "(load, load_1, load_2)" */
static IrVal p_red(OpsHandler *h, DType dt, DType src, IrReduceType rt, const IrVal *v) {
    PrintH *p = h->self;
    const char *c = fresh(p, "reduction");
    int n = ir_reduce_arity(rt);
    sb_printf(p->sb, "        %s = ops.reduction(%s, %s, '%s', %s", c, dtype_torch_name(dt), dtype_torch_name(src),
              ir_reduce_name(rt), n > 1 ? "(" : "");
    for (int k = 0; k < n; k++) sb_printf(p->sb, "%s%s", k ? ", " : "", v[k] >= 0 ? p->names[v[k]] : "?");
    sb_put(p->sb, n > 1 ? "))\n" : ")\n");
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
    int g = get_index(p, index);
    p->none_return = strncmp(p->names[v], "getitem", 7) != 0;
    const char *s = fresh(p, "store_reduction");
    sb_printf(p->sb, "        %s = ops.store_reduction('%s', %s, %s)\n", s, buf->name, p->names[g], p->names[v]);
}

/* LoopBody's scan submodule call (its combine_fn is the submodule, not printed) and the
 * traced ops.sort: "scan = self.scan((torch.float32,), (load,))",
 * "sort = ops.sort((torch.float32, torch.int16), (load, index_expr), False, True)" */
static IrVal p_scan(OpsHandler *h, IrScanOp op, int flags, const DType *dtypes, const IrVal *v, int n) {
    PrintH *p = h->self;
    bool sort = op == SCAN_SORT;
    const char *c = fresh(p, sort ? "sort" : "scan");
    sb_printf(p->sb, "        %s = %s(", c, sort ? "ops.sort" : "self.scan");
    for (int pass = 0; pass < 2; pass++) {
        sb_put(p->sb, pass ? ", (" : "(");
        for (int k = 0; k < n; k++)
            sb_printf(p->sb, "%s%s", k ? ", " : "", pass ? (v[k] >= 0 ? p->names[v[k]] : "?") : dtype_torch_name(dtypes[k]));
        sb_put(p->sb, n == 1 ? ",)" : ")");
    }
    if (sort) sb_printf(p->sb, ", %s, %s", flags & SCAN_STABLE ? "True" : "False", flags & SCAN_DESCENDING ? "True" : "False");
    sb_put(p->sb, ")\n");
    return p->n - 1;
}

/* ops.bucketize as Inductor's LoopBody prints it: the boundaries tuple (name, size[-1],
 * numel, stride[-1]) with the run's length for the numel (our buffers of several runs print
 * their own length), the offset, the index dtype, right:
 * "bucketize = ops.bucketize(index_expr, ('buf0', 4, 4, 1), constant, torch.int64, True)" */
static IrVal p_bucketize(OpsHandler *h, IrVal v, const IrBoundaries *b, IrVal off) {
    PrintH *p = h->self;
    const char *c = fresh(p, "bucketize");
    sb_printf(p->sb, "        %s = ops.bucketize(%s, ('%s', ", c, p->names[v], ir_store_target(b->buf)->name);
    sym_str_sb(b->len, p->sb);
    sb_put(p->sb, ", ");
    sym_str_sb(b->len, p->sb);
    sb_put(p->sb, ", ");
    sym_str_sb(b->stride, p->sb);
    sb_printf(p->sb, "), %s, %s, %s)\n", p->names[off], dtype_torch_name(b->index_dtype), b->right ? "True" : "False");
    return p->n - 1;
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
    p.h = (OpsHandler){&p, p_load, p_store, p_constant, p_index_expr, p_to_dtype, p_math, p_red, p_getitem, p_store_red,
                       p_indirect, p_store_atomic_add, p_scan, p_bucketize};
    loop_body_run(b, &p.h);
    /* Inductor's bodies return their last store; one ending in a store_reduction of a plain
     * reduction returns None (one storing a welford getitem returns the store_reduction) */
    const char *last = p.n && !p.none_return ? p.names[p.n - 1] : "None";
    sb_printf(sb, "        return %s\n", last);
    free(p.names);
}

/* Inductor's SchedulerNode.can_inplace, merged over the user's reads of b: the user writes one
 * dependency, and reads b at the same normalized index and ranges as it writes. */
static bool can_inplace(const IrModule *m, const Buffer *user, const Buffer *b) {
    if (user->kind != BUF_COMPUTED || !user->body) return false;
    DepSet d;
    ir_deps_collect(m, user, &d);
    bool ok = d.nwrites == 1 && d.writes[0].kind == DEP_MEMORY;
    Expr *wv[MI_MAX_DIMS * 2], *ws[MI_MAX_DIMS * 2], *rv[MI_MAX_DIMS * 2], *rs[MI_MAX_DIMS * 2];
    int wn = 0, rn = 0;
    Expr *wi = ok ? dep_normalize(m->ctx->sym, d.writes[0].index, user->body, wv, ws, &wn) : NULL;
    for (int i = 0; ok && i < d.nreads; i++) {
        if (d.reads[i].buf != b) continue;
        if (d.reads[i].kind != DEP_MEMORY) { ok = false; break; }   /* a Scatter's StarDep */
        Expr *ri = dep_normalize(m->ctx->sym, d.reads[i].index, user->body, rv, rs, &rn);
        ok = ri == wi && rn == wn && (wn == 0 || memcmp(rs, ws, sizeof(Expr *) * wn) == 0);
    }
    dep_set_free(&d);
    return ok;
}

/* Does x read y (a load, an extern argument, a Scatter into y)? */
static bool node_reads(const Buffer *x, const Buffer *y) {
    bool reads = false;
    if (x->body)
        for (int o = 0; o < x->body->nops; o++)
            reads |= x->body->ops[o].kind == LOP_LOAD && x->body->ops[o].buf == y;
    for (int a = 0; a < x->neargs; a++) reads |= x->eargs[a].buf == y;
    reads |= x->mutates == y && y->kind != BUF_INPUT;   /* a Scatter into y (index_put) */
    return reads;
}

/* A buffer's users, as Scheduler.compute_dependencies lists them: a ConcatKernel's buffer and
 * its NonOwningLayout inputs share one list (the users of any of them, the ConcatKernel's own
 * node included). */
static void print_users(const IrModule *m, const Buffer *b, StrBuf *sb) {
    char (*u)[160] = NULL;
    int k = 0;
    const Buffer *root = b->alias_of ? b->alias_of : b;
    bool group = root->ext == EXT_CONCAT && root->kind == BUF_EXTERN;
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *x = m->bufs[i];
        if (!ir_is_op(x) || x->dead || (x == b && !group)) continue;   /* dead_node_elimination drops a dead reader */
        bool reads = node_reads(x, b);
        for (int a = 0; group && a < root->neargs; a++) reads |= node_reads(x, root->eargs[a].buf) || node_reads(x, root);
        if (!reads) continue;
        u = mi_xrealloc(u, sizeof(*u) * (k + 1));
        snprintf(u[k++], sizeof u[0], "NodeUser(node=%s(name='%sop%d'), can_inplace=%s, is_weak=False)",
                 x->ext == EXT_CONCAT && x->kind == BUF_EXTERN ? "NopKernelSchedulerNode" : x->kind == BUF_EXTERN ? "ExternKernelSchedulerNode" : "SchedulerNode",
                 ir_prefix(m), x->id - m->ninputs, can_inplace(m, x, b) ? "True" : "False");
    }
    if (b->output_index >= 0) {
        u = mi_xrealloc(u, sizeof(*u) * (k + 1));
        snprintf(u[k++], sizeof u[0], "NodeUser(node=OUTPUT, can_inplace=False, is_weak=False)");
    }
    /* as Inductor's BaseSchedulerBuffer.debug_str: one line, or one user per line */
    if (k <= 1) sb_printf(sb, "    %s.users = [%s]\n", b->name, k ? u[0] : "");
    else {
        sb_printf(sb, "    %s.users = [\n", b->name);
        for (int i = 0; i < k; i++) sb_printf(sb, "        %s,\n", u[i]);
        sb_put(sb, "    ]\n");
    }
    free(u);
}

/* A dependency list as Inductor's utils.pformat prints a set: sorted by text, duplicates gone,
 * pprint.pformat(indent=4) (one line up to 80 columns, else one item per line), a multi-line
 * result indented by 4 on a fresh line. */
static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
void ir_print_dep_list(char **items, int n, StrBuf *sb) {
    qsort(items, n, sizeof *items, cmp_cstr);
    int k = 0;
    size_t len = 2;
    for (int i = 0; i < n; i++) {
        if (k && strcmp(items[k - 1], items[i]) == 0) continue;
        items[k++] = items[i];
        len += strlen(items[i]) + (k > 1 ? 2 : 0);
    }
    if (len <= 80) {
        sb_putc(sb, '[');
        for (int i = 0; i < k; i++) sb_printf(sb, "%s%s", i ? ", " : "", items[i]);
        sb_putc(sb, ']');
        return;
    }
    sb_put(sb, "\n    [   ");
    for (int i = 0; i < k; i++) sb_printf(sb, "%s%s", items[i], i + 1 < k ? ",\n        " : "]");
}

char *ir_dep_text(const Dep *d, const LoopBody *body, SymCtx *S) {
    StrBuf t;
    sb_init(&t);
    dep_print(d, body, S, &t);
    return sb_take(&t);
}

/* prims.device_put's ir.DeviceCopy (core/lowering/lowering_extern.c lower_device_put): an
 * ExternKernelOut of the node, run as its reference copy */
static bool is_device_copy(const Buffer *b) {
    return b->kind == BUF_EXTERN && b->ext == EXT_FALLBACK && b->fb && !b->layout.multi &&
           !strcmp(b->fb->kernel, "prims.device_put.default");
}

static const char *buffer_kind(const Buffer *b) {
    if (b->kind != BUF_EXTERN) return "ComputedBuffer";
    if (is_device_copy(b)) return "DeviceCopy";
    if (b->ext == EXT_MULTI_OUTPUT) return "MultiOutput";
    if (b->ext == EXT_CONCAT) return "ConcatKernel";
    if (b->layout.multi) return "FallbackKernel";
    if (b->ext == EXT_FALLBACK) return "ExternKernelOut";   /* lw_extern_out (ir.RandomSeeds) */
    if (b->ext == EXT_CONV) return "ExternKernelAlloc";   /* ir.Convolution */
    return "ExternKernelOut";
}

void ir_print_buffer_output(const IrModule *m, const Buffer *b, StrBuf *sb) {
    const char *bk = buffer_kind(b);
    sb_printf(sb, "    %s: %s\n    %s.layout = ", b->name, bk, b->name);
    ir_print_layout(&b->layout, sb);
    sb_putc(sb, '\n');
    if (b->alias_of) sb_printf(sb, "    %s.aliases = ['%s']\n", b->name, b->alias_of->name);
    if (b->mutates) sb_printf(sb, "    %s.mutations = ['%s']\n", b->name, b->mutates->name);
    print_users(m, b, sb);
}

void ir_print_buffer(const IrModule *m, const Buffer *b, const char *opname, StrBuf *sb) {
    ir_print_buffer_as(m, b, opname, true, sb);
}

void ir_print_buffer_as(const IrModule *m, const Buffer *b, const char *opname, bool cpp_group, StrBuf *sb) {
    const char *kind = b->kind == BUF_EXTERN ? (b->ext == EXT_CONCAT ? "NopKernelSchedulerNode" : "ExternKernelSchedulerNode") : "SchedulerNode";
    const char *bk = buffer_kind(b);
    sb_printf(sb, "%s: %s(%s)\n", opname, kind, bk);
    DepSet d;
    ir_deps_collect(m, b, &d);
    SymCtx *S = m->ctx->sym;
    char **items = mi_xcalloc((size_t)d.nreads + d.nwrites + 1, sizeof *items);
    int k = 0;
    for (int i = 0; i < d.nwrites; i++)
        if (!d.writes[i].fill) items[k++] = ir_dep_text(&d.writes[i], b->body, S);
    sb_printf(sb, "%s.writes = ", opname);
    ir_print_dep_list(items, k, sb);
    for (int i = 0; i < k; i++) free(items[i]);
    k = 0;
    for (int i = 0; i < d.nreads; i++)
        if (d.reads[i].buf->kind != BUF_INPUT) items[k++] = ir_dep_text(&d.reads[i], b->body, S);
    sb_printf(sb, "\n%s.unmet_dependencies = ", opname);
    ir_print_dep_list(items, k, sb);
    for (int i = 0; i < k; i++) free(items[i]);
    k = 0;
    for (int i = 0; i < d.nreads; i++)
        if (d.reads[i].buf->kind == BUF_INPUT) items[k++] = ir_dep_text(&d.reads[i], b->body, S);
    sb_printf(sb, "\n%s.met_dependencies = ", opname);
    ir_print_dep_list(items, k, sb);
    for (int i = 0; i < k; i++) free(items[i]);
    free(items);
    sb_printf(sb, "\n%s.outputs = [\n", opname);
    ir_print_buffer_output(m, b, sb);
    sb_put(sb, "]\n");
    if (b->kind == BUF_EXTERN && b->ext == EXT_CONCAT) { dep_set_free(&d); return; }   /* a NopKernelSchedulerNode */
    if (b->ext == EXT_MULTI_OUTPUT) {   /* the wrapper's `buf4 = buf3[0]`: no kernel */
        dep_set_free(&d);
        sb_printf(sb, "%s.node.kernel = None\n", opname);
        return;
    }
    if (is_device_copy(b)) {   /* the wrapper's copy_, no python_kernel_name */
        dep_set_free(&d);
        sb_printf(sb, "%s.node.kernel = None\n", opname);
        return;
    }
    if (b->kind == BUF_EXTERN && b->ext == EXT_FALLBACK) {
        dep_set_free(&d);
        sb_printf(sb, "%s.node.kernel = torch.ops.%s\n", opname, b->fb->kernel);
        sb_printf(sb, "%s.node.python_kernel_name = %s\n", opname, b->fb->kernel);
        return;
    }
    if (b->kind == BUF_EXTERN) {
        dep_set_free(&d);
        static const char *kn[] = {"extern_kernels.mm", "extern_kernels.addmm", "extern_kernels.bmm", "",
                                   "torch.ops.higher_order.cond", "", "extern_kernels.convolution", "None"};
        if (b->ext == EXT_SDPA && b->origin)   /* the attention's ATen overload, as a FallbackKernel */
            sb_printf(sb, "%s.node.kernel = torch.ops.%s\n", opname, b->origin->target);
        else if (b->cond && b->cond->is_while) sb_printf(sb, "%s.node.kernel = torch.ops.higher_order.while_loop\n", opname);
        else sb_printf(sb, "%s.node.kernel = %s\n", opname, kn[b->ext]);
        if (b->cond) sb_printf(sb, "%s.node.subgraphs = ['%s', '%s']\n", opname, b->cond->names[0], b->cond->names[1]);
        return;
    }
    char dev[32];
    sb_printf(sb, "%s.group.device = %s\n", opname, device_str(b->layout.device, dev, sizeof dev));
    const LoopBody *lb = b->body;
    /* the C++ backend's group is the simplified, reordered loop sizes (ir_cpp_group); the
     * GPU's keeps our loops (its loops merge only after fusion) */
    IrGroup grp;
    if (!cpp_group || m->ctx->target == MI_DEV_CUDA || !ir_cpp_group(m->ctx->sym, lb, &grp)) {
        grp.nv = lb->npoint < MI_MAX_DIMS * 2 ? lb->npoint : 0;
        grp.nr = lb->nred < MI_MAX_DIMS * 2 ? lb->nred : 0;
        for (int i = 0; i < grp.nv; i++) grp.v[i] = lb->ranges[i];
        for (int i = 0; i < grp.nr; i++) grp.r[i] = lb->ranges[lb->npoint + i];
    }
    sb_printf(sb, "%s.group.iteration = ", opname);
    ir_group_print(&grp, sb);
    sb_printf(sb, "\n%s.sizes = ([", opname);
    for (int i = 0; i < grp.nv; i++) { if (i) sb_put(sb, ", "); sym_str_sb(grp.v[i], sb); }
    sb_put(sb, "], [");
    for (int i = 0; i < grp.nr; i++) { if (i) sb_put(sb, ", "); sym_str_sb(grp.r[i], sb); }
    sb_put(sb, "])\n");
    /* a layout line per dependency, as Inductor's debug_str_extra: reads in load order (one per
     * distinct normalized dep, so a buffer read at two indexes shows twice), then writes */
    for (int pass = 0; pass < 2; pass++) {
        const Dep *v = pass ? d.writes : d.reads;
        int nv = pass ? d.nwrites : d.nreads;
        char **seen = mi_xcalloc((size_t)nv + 1, sizeof *seen);
        for (int i = 0; i < nv; i++) {
            seen[i] = ir_dep_text(&v[i], lb, S);
            bool dup = false;
            for (int j = 0; j < i; j++) dup |= strcmp(seen[j], seen[i]) == 0;
            if (dup) continue;
            sb_printf(sb, "%s_layout = ", v[i].buf->name);
            ir_print_layout(&v[i].buf->layout, sb);
            sb_putc(sb, '\n');
        }
        for (int i = 0; i < nv; i++) free(seen[i]);
        free(seen);
    }
    dep_set_free(&d);
    ir_print_body(lb, opname, sb);
}

char *ir_print(const IrModule *m) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < m->nbufs; i++) {
        const Buffer *b = m->bufs[i];
        if (!ir_is_op(b) || b->dead) continue;   /* ir_pre_fusion.txt comes after dead_node_elimination */
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
