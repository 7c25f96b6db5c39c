/* fx_print.c — prints a Graph as PyTorch's GraphModule.print_readable() does, so that
 * parse -> print reproduces the original text byte for byte: annotations, "# File:" group
 * comments with blank lines between groups, ";  x = None" deletion lists computed like FX's
 * codegen (values whose last use is this node, then the node itself when unused), nested
 * subgraph classes. Also the small value/float formatters other printers reuse. */
#include "fx/graph.h"
#include "base/symfloat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's repr() of a float: shortest digits that round-trip; exponent form when the decimal
 * exponent is < -4 or >= 16; always a '.' or an exponent. */
const char *fx_float_repr(double f, char *buf, size_t n) {
    if (isnan(f)) { snprintf(buf, n, "nan"); return buf; }
    if (isinf(f)) { snprintf(buf, n, f < 0 ? "-inf" : "inf"); return buf; }
    if (f == 0) { snprintf(buf, n, signbit(f) ? "-0.0" : "0.0"); return buf; }
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, f);
        if (strtod(e, NULL) == f) break;
    }
    /* e = "-d.ddde[+-]XX" -> sign, digits, exponent */
    const char *s = e;
    bool neg = *s == '-';
    if (neg) s++;
    char digits[24];
    int nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && nd < 23) digits[nd++] = *s;
    digits[nd] = 0;
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = 0;
    int exp10 = *s == 'e' ? atoi(s + 1) : 0;
    char out[64];
    int o = 0;
    if (neg) out[o++] = '-';
    if (exp10 < -4 || exp10 >= 16) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++) out[o++] = digits[i];
        }
        o += snprintf(out + o, sizeof out - o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 >= 0) {
        for (int i = 0; i <= exp10; i++) out[o++] = i < nd ? digits[i] : '0';
        out[o++] = '.';
        if (nd > exp10 + 1)
            for (int i = exp10 + 1; i < nd; i++) out[o++] = digits[i];
        else out[o++] = '0';
        out[o] = 0;
    } else {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) out[o++] = '0';
        for (int i = 0; i < nd; i++) out[o++] = digits[i];
        out[o] = 0;
    }
    snprintf(buf, n, "%s", out);
    return buf;
}

/* One part of a complex repr: float repr() without the ".0" Python adds to a float (CPython's
 * 'r' format without Py_DTSF_ADD_DOT_0), with a leading sign when `sign`. Example: 2.0 -> "+2". */
static void complex_part(double f, bool sign, char *buf, size_t n) {
    char t[64];
    fx_float_repr(f, t, sizeof t);
    size_t l = strlen(t);
    if (l > 2 && !strcmp(t + l - 2, ".0")) t[l - 2] = 0;
    snprintf(buf, n, "%s%s", sign && t[0] != '-' ? "+" : "", t);
}

/* Python's repr() of a complex (complexobject.c complex_repr): "2j" when the real part is +0,
 * else "(re+imj)" with the imaginary part's sign always written. Examples: (1, 2) -> "(1+2j)",
 * (0, -1.5) -> "-1.5j", (-0.0, 1) -> "(-0+1j)", (1e-05, 2) -> "(1e-05+2j)". */
const char *fx_complex_repr(double re, double im, char *buf, size_t n) {
    char r[64], i[64];
    if (re == 0 && !signbit(re)) {
        complex_part(im, false, i, sizeof i);
        snprintf(buf, n, "%sj", i);
    } else {
        complex_part(re, false, r, sizeof r);
        complex_part(im, true, i, sizeof i);
        snprintf(buf, n, "(%s%sj)", r, i);
    }
    return buf;
}

static void put_pystr(StrBuf *sb, const char *s) {
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    sb_putc(sb, q);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '\\' || *c == (unsigned char)q) { sb_putc(sb, '\\'); sb_putc(sb, (char)*c); }
        else if (*c == '\n') sb_put(sb, "\\n");
        else if (*c == '\t') sb_put(sb, "\\t");
        else if (*c == '\r') sb_put(sb, "\\r");
        else if (*c < 32 || *c == 127) sb_printf(sb, "\\x%02x", *c);
        else sb_putc(sb, (char)*c);
    }
    sb_putc(sb, q);
}

void value_print_sb(const Value *v, StrBuf *sb) {
    char buf[64];
    switch (v->kind) {
    case V_NONE: sb_put(sb, "None"); break;
    case V_NODE: sb_put(sb, v->node && v->node->name ? v->node->name : "<null>"); break;
    case V_INT: sb_printf(sb, "%lld", (long long)v->i); break;
    case V_FLOAT: sb_put(sb, fx_float_repr(v->f, buf, sizeof buf)); break;
    case V_COMPLEX: sb_put(sb, fx_complex_repr(v->cx.re, v->cx.im, buf, sizeof buf)); break;
    case V_BOOL: sb_put(sb, v->b ? "True" : "False"); break;
    case V_STR: put_pystr(sb, v->s ? v->s : ""); break;
    case V_DTYPE: sb_put(sb, dtype_torch_name(v->dtype)); break;
    case V_DEVICE: sb_put(sb, device_repr(v->device, buf, sizeof buf)); break;
    case V_TORCH: sb_put(sb, v->s ? v->s : ""); break;
    case V_SYM: if (v->sym) sym_str_sb(v->sym, sb); else sb_put(sb, "?"); break;
    case V_LIST: case V_TUPLE:
        sb_putc(sb, v->kind == V_LIST ? '[' : '(');
        for (int i = 0; i < v->list.n; i++) {
            if (i) sb_put(sb, ", ");
            value_print_sb(&v->list.items[i], sb);
        }
        if (v->kind == V_TUPLE && v->list.n == 1) sb_putc(sb, ',');
        sb_putc(sb, v->kind == V_LIST ? ']' : ')');
        break;
    case V_DICT:   /* Python's dict repr: {'BACKEND': 'AUTO', 'PRESCALE_QK': False} */
        sb_putc(sb, '{');
        for (int i = 0; i + 1 < v->list.n; i += 2) {
            if (i) sb_put(sb, ", ");
            value_print_sb(&v->list.items[i], sb);
            sb_put(sb, ": ");
            value_print_sb(&v->list.items[i + 1], sb);
        }
        sb_putc(sb, '}');
        break;
    }
}

bool node_annotation_sb(const Node *n, StrBuf *sb) {
    if (!n->annotated) return false;
    if (n->symbool || n->symfloat) {
        sb_put(sb, "Sym(");
        sb_put(sb, n->symbool ? n->symbool : n->symfloat);
        sb_putc(sb, ')');
    } else if (n->is_sym) {
        sb_put(sb, "Sym(");
        if (n->sym_val) sym_str_sb(n->sym_val, sb);
        else sb_putc(sb, '?');
        sb_putc(sb, ')');
    } else meta_str_sb(&n->meta, sb);
    return true;
}

void node_comment_sb(const Node *n, StrBuf *sb) {
    if (n->comment) sb_put(sb, n->comment);
    else if (n->stack && *n->stack) { sb_put(sb, "File: "); sb_put(sb, n->stack); }
    else sb_put(sb, "No stacktrace found for following nodes");
}

/* "torch.ops." is dropped from ATen/prims/... targets; other callables keep their full name. */
static void put_target(StrBuf *sb, const char *t) {
    if (!t) { sb_put(sb, "<null>"); return; }
    if (strncmp(t, "torch.", 6) != 0 && strncmp(t, "operator.", 9) != 0 && strncmp(t, "_operator.", 10) != 0 && !fx_is_global_fn(t))
        sb_put(sb, "torch.ops.");
    sb_put(sb, t);
}

static void indent(StrBuf *sb, int n) {
    for (int i = 0; i < n; i++) sb_putc(sb, ' ');
}

/* n's name and annotation; a SymFloat's in the printed form (fast: Inductor's post-grad
 * graph prints sympy_str of the expression, "Sym(-1.00000000000000 + IntTrueDiv(8*s0, 8))") */
static void put_annotated_name(StrBuf *sb, bool fast, const Node *n) {
    sb_put(sb, n->name);
    StrBuf a;
    sb_init(&a);
    if (fast && n->annotated && n->symfloat) {
        sb_put(&a, "Sym(");
        if (!symfloat_fast_str(n->symfloat, &a)) sb_put(&a, n->symfloat);
        sb_putc(&a, ')');
        sb_printf(sb, ": \"%s\"", a.s);
    } else if (node_annotation_sb(n, &a)) sb_printf(sb, ": \"%s\"", a.s);
    sb_free(&a);
}

static void print_call(StrBuf *sb, const Node *n) {
    if (n->kind == N_GET_ATTR) { sb_put(sb, "self."); sb_put(sb, n->target ? n->target : "?"); return; }
    if (n->target && strcmp(n->target, "operator.getitem") == 0 && n->nargs == 2 && n->nkwargs == 0 &&
        n->args[0].kind == V_NODE) {
        value_print_sb(&n->args[0], sb);
        sb_putc(sb, '[');
        value_print_sb(&n->args[1], sb);
        sb_putc(sb, ']');
        return;
    }
    const char *tok = fx_binop_token(n->target);
    if (tok && n->nargs == 2 && n->nkwargs == 0) {
        value_print_sb(&n->args[0], sb);
        sb_printf(sb, " %s ", tok);
        value_print_sb(&n->args[1], sb);
        return;
    }
    if (n->target && n->nargs == 1 && n->nkwargs == 0 &&
        (strcmp(n->target, "operator.neg") == 0 || strcmp(n->target, "operator.invert") == 0 ||
         strcmp(n->target, "operator.pos") == 0)) {
        sb_putc(sb, n->target[9] == 'n' && n->target[10] == 'e' ? '-' : n->target[9] == 'i' ? '~' : '+');
        value_print_sb(&n->args[0], sb);
        return;
    }
    int first = 0;
    if (n->is_method && n->nargs >= 1) {
        value_print_sb(&n->args[0], sb);
        sb_putc(sb, '.');
        sb_put(sb, n->target ? n->target : "?");
        first = 1;
    } else put_target(sb, n->target);
    sb_putc(sb, '(');
    for (int i = first; i < n->nargs; i++) {
        if (i > first) sb_put(sb, ", ");
        value_print_sb(&n->args[i], sb);
    }
    for (int k = 0; k < n->nkwargs; k++) {
        if (k || n->nargs > first) sb_put(sb, ", ");
        sb_printf(sb, "%s = ", n->kwargs[k].name);
        value_print_sb(&n->kwargs[k].v, sb);
    }
    sb_putc(sb, ')');
}

/* One class of the print: g's signature, body and nested classes. expanded and fast are the
 * print's form (fx_print_as): a nested class keeps its own expanded_def (PyTorch's _print_readable
 * does not pass expanded_def to submodules) and takes the top's fast_sympy_print
 * (print_readable's _override_sym_repr holds for the children too). */
static void print_class(Graph *g, bool with_stack, int ind, bool expanded, bool fast, StrBuf *sb) {
    sb_printf(sb, "%*sclass %s(torch.nn.Module):\n", ind, "", g->class_name ? g->class_name : "GraphModule");
    int ip = ind + 4, ib = ind + 8;
    /* signature */
    if (g->npytree_args > 0) {
        /* AOT joint graph: pytree parameters, then the leaves declared and flattened */
        indent(sb, ip);
        sb_put(sb, expanded ? "def forward(\n" : "def forward(self");
        if (expanded) { indent(sb, ib); sb_put(sb, "self,\n"); }
        for (int i = 0; i < g->npytree_args; i++) {
            if (expanded) { indent(sb, ib); sb_printf(sb, "%s,\n", g->pytree_args[i]); }
            else sb_printf(sb, ", %s", g->pytree_args[i]);
        }
        if (expanded) { indent(sb, ip); sb_put(sb, "):\n"); }
        else sb_put(sb, "):\n");
        for (int i = 0; i < g->n; i++) {
            const Node *n = g->nodes[i];
            if (n->kind != N_PLACEHOLDER || !n->annotated) continue;
            indent(sb, ib);
            put_annotated_name(sb, fast, n);
            if (n->ph_comment) sb_printf(sb, "  # %s", n->ph_comment);
            sb_putc(sb, '\n');
        }
        indent(sb, ib);
        for (int i = 0; i < g->n; i++)
            if (g->nodes[i]->kind == N_PLACEHOLDER) sb_printf(sb, "%s, ", g->nodes[i]->name);
        sb_put(sb, "= fx_pytree.tree_flatten_spec([");
        for (int i = 0; i < g->npytree_args; i++) sb_printf(sb, "%s%s", i ? ", " : "", g->pytree_args[i]);
        sb_put(sb, "], self._in_spec)\n");
    } else if (expanded) {
        indent(sb, ip); sb_put(sb, "def forward(\n");
        indent(sb, ib); sb_put(sb, "self,\n");
        for (int i = 0; i < g->n; i++) {
            const Node *n = g->nodes[i];
            if (n->kind != N_PLACEHOLDER) continue;
            indent(sb, ib);
            Node tmp = *n;
            tmp.name = n->target ? n->target : n->name;
            put_annotated_name(sb, fast, &tmp);
            sb_putc(sb, ',');
            if (n->ph_comment) sb_printf(sb, "  # %s", n->ph_comment);
            sb_putc(sb, '\n');
        }
        indent(sb, ip); sb_put(sb, "):\n");
    } else {
        indent(sb, ip); sb_put(sb, "def forward(self");
        for (int i = 0; i < g->n; i++) {
            const Node *n = g->nodes[i];
            if (n->kind != N_PLACEHOLDER) continue;
            sb_put(sb, ", ");
            Node tmp = *n;
            tmp.name = n->target ? n->target : n->name;
            put_annotated_name(sb, fast, &tmp);
        }
        sb_put(sb, "):\n");
    }
    if (!g->users_valid) graph_compute_users(g);
    bool body_started = false;
    /* placeholders whose node name differs from the parameter: "l_x_ = L_x_" */
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        if (n->kind == N_PLACEHOLDER && n->target && strcmp(n->target, n->name) != 0) {
            indent(sb, ib);
            sb_printf(sb, "%s = %s\n", n->name, n->target);
            body_started = true;
        }
    }
    StrBuf prev, cur;
    sb_init(&prev);
    sb_init(&cur);
    bool have_prev = false;
    Node **dead = mi_xmalloc((g->n + 1) * sizeof *dead);
    for (int i = 0; i < g->n; i++) {
        Node *n = g->nodes[i];
        if (n->kind == N_PLACEHOLDER) continue;
        if (n->kind == N_OUTPUT) {
            indent(sb, ib);
            sb_put(sb, "return ");
            const Value *v = n->nargs ? &n->args[0] : NULL;
            bool pytree = g->npytree_args > 0 && v && v->kind == V_LIST;
            if (pytree || (expanded && v && v->kind == V_TUPLE)) {
                if (pytree) sb_put(sb, "pytree.tree_unflatten([\n");
                else sb_put(sb, "(\n");
                for (int k = 0; k < v->list.n; k++) {
                    indent(sb, ib + 4);
                    value_print_sb(&v->list.items[k], sb);
                    sb_putc(sb, ',');
                    if (g->nout_comments == v->list.n && g->out_comments[k])
                        sb_printf(sb, "  # %s", g->out_comments[k]);
                    sb_putc(sb, '\n');
                }
                indent(sb, ib);
                sb_put(sb, pytree ? "], self._out_spec)\n" : ")\n");
            } else {
                if (v) value_print_sb(v, sb);
                else sb_put(sb, "None");
                sb_putc(sb, '\n');
            }
            continue;
        }
        if (with_stack) {
            cur.len = 0;
            if (cur.s) cur.s[0] = 0;
            node_comment_sb(n, &cur);
            if (!have_prev || n->group_start || strcmp(cur.s, prev.s) != 0) {
                if (body_started) sb_putc(sb, '\n');
                indent(sb, ib);
                sb_printf(sb, "# %s\n", cur.s);
                prev.len = 0;
                sb_put(&prev, cur.s);
                have_prev = true;
            }
        }
        indent(sb, ib);
        put_annotated_name(sb, fast, n);
        sb_put(sb, " = ");
        print_call(sb, n);
        int nd = graph_dead_after(g, n, dead, g->n + 1);
        if (nd) {
            sb_put(sb, ";  ");
            for (int k = 0; k < nd; k++) sb_printf(sb, "%s = ", dead[k]->name);
            sb_put(sb, "None");
        }
        sb_putc(sb, '\n');
        body_started = true;
    }
    free(dead);
    sb_free(&prev);
    sb_free(&cur);
    for (int s = 0; s < g->nsubs; s++) {
        sb_putc(sb, '\n');
        print_class(g->subs[s].g, with_stack, ind + 4, g->subs[s].g->expanded_def, fast, sb);
    }
}

char *fx_print(const Graph *g, bool with_stack) { return fx_print_as(g, g, with_stack); }

/* The form is only the top graph's two flags; the trick is that the nodes come from g, so a
 * pass's "before" graph prints in its "after" graph's form and a diff shows only what the pass
 * changed. Example: fx_print_as(loaded, after_step_1, false) prints the loaded AOT graph's
 * "Sym((IntTrueDiv(8*s0*s1, 8)) - 1.0)" as "Sym(-1.00000000000000 + IntTrueDiv(8*s0*s1, 8))". */
char *fx_print_as(const Graph *g, const Graph *form, bool with_stack) {
    StrBuf sb;
    sb_init(&sb);
    /* printing computes users on demand; that is a cache, not a change of the graph */
    print_class((Graph *)g, with_stack, 0, form->expanded_def, form->fast_sympy_print, &sb);
    if (g->trailer) sb_put(&sb, g->trailer);
    return sb_take(&sb);
}
