/* lowering.c — FX graph -> IR (Inductor's GraphLowering.run_node and lowering.py's table):
 * walks the graph in order and gives every node an IR value through its row of the lowering
 * table (the family tables of core/lowering/lowering_{pointwise,views,reductions,indexing,
 * extern,pooling}.c), or a FallbackKernel; placeholders become input buffers, SymInt nodes their
 * annotations, _assert_scalar module guards, and the output node realizes every result into
 * its final layout. See lowering.h, lowering_impl.h and core/ir/ir.md. */
#include "lowering/lowering_impl.h"
#include "fx_passes/functionalize.h"
#include "fx_passes/passes.h"
#include "base/symbool.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the lowering table: the family tables seen as one list ---- */

static int lower_checkpoint(Lower *L, const Node *n, int arg);

/* rows of higher-order ops lowered here */
static const LoweringDef driver_rows[] = {
    {"higher_order.tag_activation_checkpoint", lower_checkpoint, 0},
};

static const struct { const LoweringDef *rows; const int *n; } families[] = {
    {lowering_pointwise_table, &lowering_pointwise_count},
    {lowering_views_table, &lowering_views_count},
    {lowering_reductions_table, &lowering_reductions_count},
    {lowering_indexing_table, &lowering_indexing_count},
    {lowering_extern_table, &lowering_extern_count},
    {lowering_pooling_table, &lowering_pooling_count},
    {lowering_pooling_backward_table, &lowering_pooling_backward_count},
    {lowering_bucketize_table, &lowering_bucketize_count},
    {lowering_gather_table, &lowering_gather_count},
    {lowering_scan_table, &lowering_scan_count},
    {lowering_random_table, &lowering_random_count},
    {lowering_decomp_table, &lowering_decomp_count},
    {lowering_mkldnn_table, &lowering_mkldnn_count},
};
#define NFAM ((int)(sizeof families / sizeof families[0]))
#define NDRIVER ((int)(sizeof driver_rows / sizeof driver_rows[0]))

/* Row i of the table as one list: the families in order, then the driver's rows. */
static const LoweringDef *lowering_at(int i) {
    if (i < 0) return NULL;
    for (int f = 0; f < NFAM; f++) {
        if (i < *families[f].n) return &families[f].rows[i];
        i -= *families[f].n;
    }
    return i < NDRIVER ? &driver_rows[i] : NULL;
}

int lowering_count(void) {
    int n = NDRIVER;
    for (int f = 0; f < NFAM; f++) n += *families[f].n;
    return n;
}

const char *lowering_name(int i) {
    const LoweringDef *d = lowering_at(i);
    return d ? d->name : NULL;
}

const LoweringDef *lowering_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0, n = lowering_count(); i < n; i++) {
        const LoweringDef *d = lowering_at(i);
        if (!strcmp(d->name, name)) return d;
    }
    if (!strncmp(name, "aten._foreach_", 14) && op_lookup(name)) return &lowering_foreach_row;   /* every foreach op of the registry */
    char buf[256];
    const char *def = op_packet_default(name, buf, sizeof buf);
    return def ? lowering_find(def) : NULL;
}

bool lw_gpu_backend(Lower *L, const Node *n) {
    return (n->has_meta ? n->meta.device : L->dev).kind != DEV_CPU && L->ctx->target == MI_DEV_CUDA;
}

/* aten._assert_scalar and the range hints of unbacked SymInts: no kernel; the assert becomes
 * size guards of the module (checked by the C wrapper) */
static bool is_sym_check(const char *t) {
    return t && (!strcmp(t, "aten._assert_scalar.default") || !strcmp(t, "aten.sym_constrain_range.default") ||
                 !strcmp(t, "aten.sym_constrain_range_for_size.default") ||
                 !strcmp(t, "aten._functional_sym_constrain_range.default"));
}

/* _assert_scalar(cond, msg) with cond a SymBool node "Sym(s0 >= 2)": each relation of the
 * condition (a conjunction) over the module's size symbols becomes a guard "s0 >= 2". A
 * condition that is no conjunction (Or) or names other symbols (unbacked u0) is not checked. */
static void lower_assert_scalar(IrModule *m, MiCtx *ctx, const Node *n) {
    if (strcmp(n->target, "aten._assert_scalar.default") || n->nargs < 1 || n->args[0].kind != V_NODE ||
        !n->args[0].node->symbool)
        return;
    MiTry tentative = mi_try(ctx);
    SymBool *b = symbool_parse(ctx, n->args[0].node->symbool, NULL);
    mi_try_end(&tentative);
    StrBuf sb;
    sb_init(&sb);
    if (b && symbool_guards(b, &sb) > 0) {
        for (char *line = sb.s, *nl; line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            *nl = 0;
            SymBool *r = symbool_parse(ctx, line, NULL);
            const char *names[16];
            int k = r ? sym_free_symbols(r->lhs, names, 8) : 0;
            k += r ? sym_free_symbols(r->rhs, names + k, 8) : 0;
            bool known = r != NULL;
            for (int i = 0; i < k && known; i++) {
                known = false;
                for (int j = 0; j < m->nsyms; j++)
                    if (!strcmp(m->sym_names[j], names[i])) known = true;
            }
            mi_try_end(&tentative);
            symbool_free(r);
            if (known) ir_add_guard(m, "%s", line);
        }
    }
    sb_free(&sb);
    symbool_free(b);
}

bool lowering_supported(const Graph *g, char *why, size_t n) {
    for (int i = 0; i < g->n; i++) {
        const Node *nd = g->nodes[i];
        if (nd->kind == N_GET_ATTR) {
            /* a subgraph (cond branch): lowered with the cond, so it must be lowerable too */
            const Graph *sub = nd->target ? graph_subgraph(g, nd->target) : NULL;
            if (!sub && nd->has_meta) continue;   /* a tensor constant: an input of the module */
            if (!sub) {
                if (why) snprintf(why, n, "get_attr '%s' is neither a subgraph nor an annotated tensor constant (node '%s')", nd->target, nd->name);
                return false;
            }
            if (!lowering_supported(sub, why, n)) return false;
            continue;
        }
        if (nd->kind != N_CALL_FUNCTION) continue;
        if (nd->is_sym && nd->sym_val) continue;   /* SymInt arithmetic: its value is the annotation */
        if (nd->symbool || is_sym_check(nd->target)) continue;   /* SymBools and their asserts: guards */
        if (nd->symfloat) continue;   /* SymFloats: inlined into their readers */
        if (!lowering_find(nd->target) && !ir_fallback_ok(nd->op ? nd->op : op_lookup(nd->target)) &&
            !lw_custom_fallback_ok(nd)) {
            if (why) snprintf(why, n, "unsupported op '%s' (node '%s')", nd->target, nd->name);
            return false;
        }
    }
    return true;
}

static void note_complex(Node *x, void *ud) {
    if (x->has_meta && dtype_is_complex(x->meta.dtype)) *(bool *)ud = true;
}

/* Inductor's fallback_node_due_to_unsupported_type: a node that reads or writes a complex
 * tensor is a FallbackKernel ("Torchinductor does not support code generation for complex
 * operators"), whatever its row; placeholders stay inputs. Its results: the node's meta, or
 * for a tuple op every item's. Example: _to_copy(f32 -> c64), view_as_real(c64), _fft_r2c. */
static bool touches_complex(Lower *L, const Node *n) {
    bool hit = false;
    for (int i = 0; i < n->nargs && !hit; i++) value_for_each_node(&n->args[i], note_complex, &hit);
    for (int i = 0; i < n->nkwargs && !hit; i++) value_for_each_node(&n->kwargs[i].v, note_complex, &hit);
    if (hit || n->has_meta) return hit || dtype_is_complex(n->meta.dtype);
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    if (!op || !(op->flags & OPF_TUPLE)) return false;
    TensorMeta outs[OP_MAX_OUTS];
    int nout = OP_MAX_OUTS;
    MiTry tentative = mi_try(L->ctx);
    int rc = op_infer_meta(L->ctx, (Graph *)L->g, n, outs, &nout);
    mi_try_end(&tentative);
    for (int k = 0; rc == 0 && k < nout && k < OP_MAX_OUTS; k++)
        if (outs[k].dtype != DT_INVALID && dtype_is_complex(outs[k].dtype)) return true;
    return false;
}

/* One call_function node: a FallbackKernel when it touches a complex tensor (as Inductor's
 * GraphLowering does), else its row's lowering, else a FallbackKernel calling the reference
 * implementation at run time (aten.embedding without a row -> FallbackKernel), else an error. */
int lw_lower_node(Lower *L, const Node *n) {
    const LoweringDef *d = lowering_find(n->target);
    const OpDef *op = n->op ? n->op : op_lookup(n->target);
    int rc;
    bool getitem = n->target && !strcmp(n->target, "operator.getitem");   /* GraphLowering takes tuple items first */
    if (!L->scratch && !getitem && ir_fallback_ok(op) && touches_complex(L, n)) rc = lw_fallback(L, n);
    else if (d) rc = d->fn(L, n, d->arg);
    else if (lw_lowers_by_decomposition(n)) rc = lw_lower_decomposed(L, n);   /* as select_decomp_table */
    else if (ir_fallback_ok(n->op ? n->op : op_lookup(n->target)) || lw_custom_fallback_ok(n)) rc = lw_fallback(L, n);
    else return lw_err(L, n, "unsupported op '%s'", n->target);
    if (rc == 0) lw_layout_opt_output_rule(L, n);   /* channels-last saved outputs (layout_opt.c) */
    if (rc == 0) lw_after_node(L, n);   /* store or recompute (lowering_realize.c) */
    return rc;
}

/* ---- symbols, inputs, outputs ---- */

static void add_sym(IrModule *m, const char *name) {
    for (int i = 0; i < m->nsyms; i++)
        if (strcmp(m->sym_names[i], name) == 0) return;
    m->sym_names = mi_xrealloc(m->sym_names, sizeof(char *) * (m->nsyms + 1));
    m->sym_names[m->nsyms++] = arena_strdup(&m->arena, name);
    ir_add_guard(m, "%s >= 1", name);
}
static void add_syms_of(IrModule *m, const Expr *e) {
    const char *names[16];
    int k = sym_free_symbols(e, names, 16);
    for (int i = 0; i < k; i++) add_sym(m, names[i]);
}

/* Output j of the graph is the view t of a realized storage: outputs[j] is that buffer and
 * out_views[j] the view (its size, strides and offset over the buffer's storage). Accepted when
 * the view is strided (lw_probe_view: Inductor's convert_to_reinterpret_view), has the
 * output's dtype and its strides (size-1 dims aside; run_node asked for them). A buffer not yet
 * returned is written into output j's storage (output_index = j); one returned already, or a graph
 * input, is only looked at. Example: `view = reshape(primals_3, [12, 32])` returned beside the
 * result is reinterpret_tensor(primals_3, (12, 32), (32, 1), 0) in Inductor's wrapper. */
static bool output_view(Lower *L, IrTBox *t, const Layout *l, int j) {
    IrModule *m = L->m;
    Buffer *c = NULL;
    Layout v;
    if (!lw_probe_view(L, t, &c, &v)) return false;
    if (c->kind != BUF_INPUT && c->kind != BUF_COMPUTED && c->kind != BUF_EXTERN) return false;
    if (c->mutates || v.ndim != l->ndim || v.dtype != l->dtype) return false;
    const Buffer *own = c->extern_owner;   /* an extern's second result: where its kernel can write it */
    if (own && own->ext != EXT_COND && own->ext != EXT_FALLBACK && own->ext != EXT_SDPA) return false;
    for (int d = 0; d < l->ndim; d++) {
        int64_t one;
        if (v.size[d] != l->size[d]) return false;
        if (!(sym_is_int(l->size[d], &one) && one == 1) && v.stride[d] != l->stride[d]) return false;
    }
    if (c->kind != BUF_INPUT) {
        if (c->output_index < 0) c->output_index = j;
        c->layout.fixed = true;   /* read through a ReinterpretView */
    }
    m->outputs[j] = c;
    m->out_views[j] = lw_alloc(L, sizeof(Layout));
    *m->out_views[j] = lw_layout_copy(L, &v);
    return true;
}

static int lower_output(Lower *L, const Node *out) {
    IrModule *m = L->m;
    int nout = 0;
    const Value *items = graph_output_flat(L->g, &nout);   /* a nested return is flattened (pytree) */
    (void)out;
    m->noutputs = nout;
    m->outputs = mi_xcalloc(nout ? nout : 1, sizeof(Buffer *));
    m->out_views = mi_xcalloc(nout ? nout : 1, sizeof(Layout *));
    for (int j = 0; j < nout; j++) {
        const Value *it = &items[j];
        if (it->kind == V_NONE) continue;
        if (it->kind != V_NODE) return lw_err(L, out, "output %d is not a tensor", j);
        const Node *src = it->node;
        LVal *lv = lw_node_val(L, src);
        if (!lv || lv->kind != LV_TBOX) {
            /* a SymInt output (a size the forward hands its backward): no buffer, the caller
             * evaluates it from the input sizes (rt_run: the output node's sym_val) */
            if (lv && lv->kind == LV_SYM && src->is_sym && src->sym_val) continue;
            if (lv && lv->kind == LV_SYM) return lw_err(L, out, "SymInt outputs are not supported");
            return lw_err(L, out, "output %d ('%s') is not a tensor", j, src->name);
        }
        IrTBox *t = lv->t;
        Layout l;
        if (src->has_meta) {
            l = layout_contiguous(m, src->meta.dtype, src->meta.device, src->meta.ndim, src->meta.size);
            for (int d = 0; d < l.ndim; d++) l.stride[d] = src->meta.stride[d];
        } else l = layout_contiguous(m, t->dtype, L->dev, t->ndim, t->size);
        lw_output_channels_last(L, src, l.stride);   /* a saved activation near convolutions */
        l.fixed = true;
        L->cur = src;
        Buffer *b = NULL;
        if (t->sb && !t->is_view && t->sb->buf && t->sb->buf->kind == BUF_INPUT && !L->branch) {
            /* a graph input returned as it is (a forward saving a weight for backward): the
             * output is the caller's input tensor, no copy kernel, as GraphLowering.output
             * keeps the InputBuffer and the wrapper says `return (buf2, primals_3, ...)`. The
             * module leaves outputs[j] alone (mi_output_alias); a cond branch still copies
             * into the cond's result buffer */
            m->outputs[j] = t->sb->buf;
            continue;
        }
        if (t->sb && !t->is_view && t->sb->buf && t->sb->buf->output_index >= 0 && !L->branch) {
            /* a buffer returned twice: the second output looks at the first one's storage */
            if (output_view(L, t, &l, j)) continue;
        }
        if (t->sb && !t->is_view && !t->sb->buf) {
            b = lw_realize(L, t->sb, &l);
        } else if (t->sb && !t->is_view && t->sb->buf && t->sb->buf->kind != BUF_INPUT &&
                   t->sb->buf->output_index < 0 && !t->sb->buf->mutates &&
                   (!t->sb->buf->extern_owner || t->sb->buf->extern_owner->ext == EXT_COND || t->sb->buf->extern_owner->ext == EXT_FALLBACK ||
                    t->sb->buf->extern_owner->ext == EXT_SDPA)) {
            Buffer *c = t->sb->buf;
            bool same = c->layout.ndim == l.ndim;
            for (int d = 0; same && d < l.ndim; d++) {
                int64_t one;
                if (sym_is_int(l.size[d], &one) && one == 1) continue;
                if (c->layout.stride[d] != l.stride[d]) same = false;
            }
            if (same) { b = c; b->layout.fixed = true; }
        } else if (t->is_view && !L->branch) {
            /* a returned view of a realized storage (an input, a computed or an extern buffer,
             * possibly returned already): a ReinterpretView of it, no copy kernel, as
             * GraphLowering.output's ExternKernel.realize_input does (convert_to_reinterpret_view;
             * copy_input only when the view is not strided). The caller builds the view over the
             * storage (mi_output_view) */
            if (output_view(L, t, &l, j)) continue;
        } else if (t->is_view) {
            /* in a cond branch: a view covering a computed buffer's whole storage with the
             * output's strides (a keepdim reduction returned through view/squeeze) is written
             * straight into the cond's result, as Inductor returns reinterpret_tensor(buf) */
            Buffer *c = NULL;
            Layout v;
            SymCtx *s = L->s;
            int64_t off;
            if (ir_probe_strided(m, t->loader, t->ndim, t->size, &c, &v) && (c->kind == BUF_COMPUTED || c->kind == BUF_EXTERN) &&
                c->output_index < 0 && !c->mutates && v.ndim == l.ndim && sym_is_int(v.offset, &off) && off == 0 &&
                (!l.offset || (sym_is_int(l.offset, &off) && off == 0)) && v.dtype == l.dtype &&
                layout_storage_size(s, &v) == layout_storage_size(s, &c->layout) &&
                layout_storage_size(s, &l) == layout_storage_size(s, &c->layout)) {
                bool same = true;
                for (int d = 0; same && d < l.ndim; d++) {
                    int64_t one;
                    if (v.size[d] != l.size[d]) same = false;
                    else if (!(sym_is_int(l.size[d], &one) && one == 1) && v.stride[d] != l.stride[d]) same = false;
                }
                if (same) {
                    b = c;
                    b->layout.fixed = true;   /* read through a ReinterpretView */
                    m->out_views[j] = lw_alloc(L, sizeof(Layout));
                    *m->out_views[j] = lw_layout_copy(L, &l);
                }
            }
        }
        if (!b) {
            const char **o = NULL;
            int no = 0;
            lw_origins_add(L, &o, &no, "clone");
            IrStorage *sb = lw_storage_new(L, lw_to_dtype(L, t->loader, l.dtype), l.dtype, l.ndim, l.size, o, no);
            b = lw_realize(L, sb, &l);
        }
        b->output_index = j;
        m->outputs[j] = b;
    }
    return 0;
}

/* tag_activation_checkpoint(body, *operands): only a recompute hint, so the body is lowered
 * inline into the caller's module (its placeholders take the operands' values), as the AOT
 * graphs Inductor sees have it inlined already. */
static int lower_checkpoint(Lower *L, const Node *n, int arg) {
    const Value *bv = n->nargs ? &n->args[0] : NULL;
    const Graph *sub = bv && bv->kind == V_NODE && bv->node->kind == N_GET_ATTR ? graph_subgraph(L->g, bv->node->target) : NULL;
    if (!sub) return lw_err(L, n, "the checkpointed body is not a subgraph");
    if (graph_num_placeholders(sub) != n->nargs - 1) return lw_err(L, n, "the body takes %d inputs, %d given", graph_num_placeholders(sub), n->nargs - 1);
    Lower S = *L;
    S.g = sub;
    S.vals = mi_xcalloc(sub->n ? sub->n : 1, sizeof(LVal));
    lw_users_init(&S);
    int rc = 0, k = 0;
    for (int i = 0; i < sub->n && rc == 0; i++) {
        const Node *x = sub->nodes[i];
        S.cur = x;
        if (x->kind == N_PLACEHOLDER) {
            const Value *o = &n->args[1 + k++];
            LVal *src = o->kind == V_NODE ? lw_node_val(L, o->node) : NULL;
            if (!src) { rc = lw_err(L, n, "checkpoint operand %d is not a node", k - 1); break; }
            S.vals[i] = *src;
        } else if (x->kind == N_CALL_FUNCTION) {
            rc = lw_lower_node(&S, x);
        } else if (x->kind == N_OUTPUT) {
            const Value *r = x->nargs ? &x->args[0] : NULL;
            int nout = !r ? 0 : (r->kind == V_TUPLE || r->kind == V_LIST) ? r->list.n : 1;
            IrTBox **items = lw_alloc(L, sizeof(IrTBox *) * (nout + 1));
            for (int j = 0; j < nout && rc == 0; j++) {
                const Value *it = (r->kind == V_TUPLE || r->kind == V_LIST) ? &r->list.items[j] : r;
                LVal *lv = it->kind == V_NODE ? lw_node_val(&S, it->node) : NULL;
                if (!lv || lv->kind != LV_TBOX) rc = lw_err(L, n, "checkpoint result %d is not a tensor", j);
                else items[j] = lv->t;
            }
            if (rc == 0) rc = lw_set_tuple(L, n, items, nout);
        }
    }
    free(S.vals);
    lw_users_free(&S);
    L->relaid |= S.relaid;
    L->cur = n;
    return rc;
}

/* ir_lower / lw_lower_branch: `branch` is a cond branch's body, whose results are copied into
 * the cond's result buffers (an input it returns included). */
static IrModule *lower_module(MiCtx *ctx, const Graph *g, bool branch) {
    char why[512];
    if (functionalize_needed_for_lowering(g)) {
        /* in-place ops other than the copy_ epilogue (reinplace's copy_ into a view of an
         * intermediate, say): lower the functional form of g, which computes the same values */
        Graph *f = functionalize(ctx, g);
        if (!f) return NULL;
        ops_resolve_graph(f);
        IrModule *m = functionalize_needed_for_lowering(f) ? NULL : lower_module(ctx, f, branch);
        if (!m) {
            if (functionalize_needed_for_lowering(f)) mi_err(ctx, g->source, 0, 0, "ir_lower: the graph stays non-functional after functionalize");
            graph_free(f);
            return NULL;
        }
        m->owned_graph = f;
        return m;
    }
    if (!lowering_supported(g, why, sizeof why)) {
        const Node *bad = NULL;
        for (int i = 0; i < g->n && !bad; i++)
            if ((g->nodes[i]->kind == N_CALL_FUNCTION && !lowering_find(g->nodes[i]->target) &&
                 !ir_fallback_ok(g->nodes[i]->op ? g->nodes[i]->op : op_lookup(g->nodes[i]->target))) ||
                (g->nodes[i]->kind == N_GET_ATTR && !graph_subgraph(g, g->nodes[i]->target)))
                bad = g->nodes[i];
        mi_err(ctx, g->source, bad ? bad->src_line : 0, 0, "%s", why);
        return NULL;
    }
    IrModule *m = mi_xcalloc(1, sizeof *m);
    m->ctx = ctx;
    m->graph = g;
    arena_init(&m->arena);
    Lower L = {ctx, ctx->sym, m, g, NULL, NULL, NULL, NULL, graph_device(g), branch};
    L.vals = mi_xcalloc(g->n ? g->n : 1, sizeof(LVal));
    lw_users_init(&L);
    lw_layout_opt_init(&L);
    /* placeholders: symbols first (in order of appearance), then tensor inputs */
    int ninputs = 0;
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind != N_PLACEHOLDER) continue;
        if (n->is_sym) { if (n->sym_val) add_syms_of(m, n->sym_val); continue; }
        if (!n->has_meta) { mi_err(ctx, g->source, n->src_line, 0, "placeholder '%s' has no tensor annotation", n->name); goto fail; }
        for (int d = 0; d < n->meta.ndim; d++) { add_syms_of(m, n->meta.size[d]); add_syms_of(m, n->meta.stride[d]); }
        ninputs++;
    }
    for (int i = 0; i < g->n; i++) ninputs += ir_is_tensor_constant(g, g->nodes[i]);   /* after the placeholders */
    m->inputs = mi_xcalloc(ninputs ? ninputs : 1, sizeof(Buffer *));
    bool inputs_done = false;
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        L.cur = n;
        if (n->kind == N_PLACEHOLDER) {
            if (n->is_sym) { L.vals[i].kind = LV_SYM; L.vals[i].sym = n->sym_val; continue; }
            Layout l = layout_contiguous(m, n->meta.dtype, n->meta.device, n->meta.ndim, n->meta.size);
            for (int d = 0; d < l.ndim; d++) l.stride[d] = n->meta.stride[d];
            if (n->meta.offset) l.offset = n->meta.offset;
            l.fixed = true;
            Buffer *b = lw_new_buffer(&L, BUF_INPUT, &l);
            b->name = arena_strdup(&m->arena, n->name);
            b->input_index = m->ninputs;
            m->inputs[m->ninputs++] = b;
            L.vals[i].kind = LV_TBOX;
            L.vals[i].t = lw_tbox_of_buffer(&L, b);
            continue;
        }
        if (ir_is_tensor_constant(g, n)) {
            /* Inductor's constants (V.graph.constants): a contiguous input the caller passes
             * after the placeholders, named by the attribute (the runtime reads it from the
             * session: mi_const_get) */
            for (int d = 0; d < n->meta.ndim; d++)
                if (!sym_is_int(n->meta.size[d], NULL)) { mi_err(ctx, g->source, n->src_line, 0, "tensor constant '%s' has a symbolic size", n->target); goto fail; }
            Layout l = layout_contiguous(m, n->meta.dtype, n->meta.device, n->meta.ndim, n->meta.size);
            l.fixed = true;
            Buffer *b = lw_new_buffer(&L, BUF_INPUT, &l);
            char name[128];
            snprintf(name, sizeof name, "%s", n->target);
            for (char *c = name; *c; c++) if (!isalnum((unsigned char)*c)) *c = '_';   /* a C name */
            b->name = arena_strdup(&m->arena, name);
            b->input_index = m->ninputs;
            m->inputs[m->ninputs++] = b;
            L.vals[i].kind = LV_TBOX;
            L.vals[i].t = lw_tbox_of_buffer(&L, b);
            continue;
        }
        if (!inputs_done && (n->kind == N_OUTPUT || n->kind == N_CALL_FUNCTION)) {
            /* run_node's output rule for the placeholders, once every input buffer exists (the
             * copies it makes are the first computed buffers) */
            inputs_done = true;
            for (int k = 0; k < i; k++)
                if (g->nodes[k]->kind == N_PLACEHOLDER && L.vals[k].kind == LV_TBOX) {
                    L.cur = g->nodes[k];
                    lw_layout_opt_output_rule(&L, g->nodes[k]);
                }
            L.cur = n;
        }
        if (n->kind == N_OUTPUT) { if (lower_output(&L, n) < 0) goto fail; continue; }
        if (n->kind != N_CALL_FUNCTION) continue;
        if (mi_interrupted(ctx)) { mi_err_interrupted(ctx, "while lowering node '%s' (%d of %d)", n->name, i + 1, g->n); goto fail; }
        mi_progress(ctx, "lowering", i + 1, g->n);
        /* sym_size / operator.mul ... on sizes: the annotation ("Sym(2*s0)") is the value; views
         * and factories read sizes from their own annotations */
        if (n->is_sym && n->sym_val) {
            if (lw_unbacked_item(&L, n) < 0) goto fail;   /* .item(): defines an unbacked u1 */
            L.vals[i].kind = LV_SYM; L.vals[i].sym = n->sym_val; continue;
        }
        if (n->symbool) continue;
        if (n->symfloat) continue;   /* a SymFloat: its readers inline the annotation (lw_arg_loader) */
        if (is_sym_check(n->target)) { lower_assert_scalar(m, ctx, n); continue; }
        if (lw_lower_node(&L, n) < 0) goto fail;
        lw_unbacked_sizes(&L, n, i);   /* nonzero, masked_select: their result's size u0 */
    }
    /* GraphLowering.finalize: the layouts still flexible follow their reads; bodies recorded
     * before a layout they read was decided are recorded again */
    if (ir_decide_layouts(m) || L.relaid) ir_retrace_all(m);
    ir_extern_args_follow(m);
    ir_mark_dead(m);
    free(L.vals);
    free(L.prefer_cl);
    lw_users_free(&L);
    return m;
fail:
    free(L.vals);
    free(L.prefer_cl);
    lw_users_free(&L);
    ir_free(m);
    return NULL;
}

IrModule *ir_lower(MiCtx *ctx, const Graph *g) { return lower_module(ctx, g, false); }

IrModule *lw_lower_branch(MiCtx *ctx, const Graph *g) { return lower_module(ctx, g, true); }
