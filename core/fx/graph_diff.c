/* graph_diff.c — differences between two graphs: a unified-style line diff of their FX
 * prints (common prefix/suffix trimmed, LCS on the middle) and a structural change list by
 * node name (added, removed, rewritten, moved; moved = off the longest increasing run of kept
 * nodes). The pass manager shows these per step; viz colours pass diffs with them. */
#include "fx/graph_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char **s; int *len; int n; } Lines;

static Lines split_lines(const char *t) {
    Lines L = {0};
    int cap = 16;
    L.s = mi_xmalloc(cap * sizeof *L.s);
    L.len = mi_xmalloc(cap * sizeof *L.len);
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        int len = e ? (int)(e - p) : (int)strlen(p);
        if (L.n == cap) {
            cap *= 2;
            L.s = mi_xrealloc(L.s, cap * sizeof *L.s);
            L.len = mi_xrealloc(L.len, cap * sizeof *L.len);
        }
        L.s[L.n] = p;
        L.len[L.n++] = len;
        p += len + (e ? 1 : 0);
    }
    return L;
}

static bool line_eq(const Lines *a, int i, const Lines *b, int j) {
    return a->len[i] == b->len[j] && memcmp(a->s[i], b->s[j], a->len[i]) == 0;
}

/* ops: ' ' keep, '-' from a, '+' from b, as (op, index) pairs */
typedef struct { char op; int idx; } DOp;

char *text_diff(const char *ta, const char *tb, const char *name_a, const char *name_b, int context) {
    if (strcmp(ta, tb) == 0) return mi_xstrdup("");
    Lines a = split_lines(ta), b = split_lines(tb);
    int pre = 0;
    while (pre < a.n && pre < b.n && line_eq(&a, pre, &b, pre)) pre++;
    int suf = 0;
    while (suf < a.n - pre && suf < b.n - pre && line_eq(&a, a.n - 1 - suf, &b, b.n - 1 - suf)) suf++;
    int m = a.n - pre - suf, n = b.n - pre - suf;
    DOp *ops = mi_xmalloc((size_t)(a.n + b.n + 1) * sizeof *ops);
    int no = 0;
    for (int i = 0; i < pre; i++) ops[no++] = (DOp){' ', i};
    if ((long long)(m + 1) * (n + 1) <= 4000000LL) {
        int *L = mi_xcalloc((size_t)(m + 1) * (n + 1), sizeof(int));
#define AT(i, j) L[(size_t)(i) * (n + 1) + (j)]
        for (int i = m - 1; i >= 0; i--)
            for (int j = n - 1; j >= 0; j--)
                AT(i, j) = line_eq(&a, pre + i, &b, pre + j) ? AT(i + 1, j + 1) + 1
                         : (AT(i + 1, j) >= AT(i, j + 1) ? AT(i + 1, j) : AT(i, j + 1));
        int i = 0, j = 0;
        while (i < m || j < n) {
            if (i < m && j < n && line_eq(&a, pre + i, &b, pre + j)) { ops[no++] = (DOp){' ', pre + i}; i++; j++; }
            /* on a tie, removed lines first: '-' before '+' as diff -u prints a changed block */
            else if (i < m && (j == n || AT(i + 1, j) >= AT(i, j + 1))) { ops[no++] = (DOp){'-', pre + i}; i++; }
            else { ops[no++] = (DOp){'+', pre + j}; j++; }
        }
#undef AT
        free(L);
    } else {
        for (int i = 0; i < m; i++) ops[no++] = (DOp){'-', pre + i};
        for (int j = 0; j < n; j++) ops[no++] = (DOp){'+', pre + j};
    }
    for (int i = 0; i < suf; i++) ops[no++] = (DOp){' ', a.n - suf + i};
    if (context > no) context = no;      /* "whole file" callers pass a huge context */
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "--- %s\n+++ %s\n", name_a ? name_a : "a", name_b ? name_b : "b");
    /* hunks: runs of changes with `context` lines around */
    int k = 0;
    while (k < no) {
        if (ops[k].op == ' ') { k++; continue; }
        int start = k - context < 0 ? 0 : k - context;
        int end = k;
        /* extend while the next change is within 2*context keeps */
        for (;;) {
            while (end < no && ops[end].op != ' ') end++;
            int gap = end;
            while (gap < no && ops[gap].op == ' ' && (long)(gap - end) < 2L * context) gap++;
            if (gap < no && ops[gap].op != ' ') { end = gap; continue; }
            break;
        }
        int stop = end + context > no ? no : end + context;
        /* line numbers */
        int la = 0, lb = 0, ca = 0, cb = 0;
        for (int q = 0; q < start; q++) { if (ops[q].op != '+') la++; if (ops[q].op != '-') lb++; }
        for (int q = start; q < stop; q++) { if (ops[q].op != '+') ca++; if (ops[q].op != '-') cb++; }
        sb_printf(&sb, "@@ -%d,%d +%d,%d @@\n", la + 1, ca, lb + 1, cb);
        for (int q = start; q < stop; q++) {
            const Lines *src = ops[q].op == '+' ? &b : &a;
            int idx = ops[q].idx;
            sb_putc(&sb, ops[q].op);
            sb_putn(&sb, src->s[idx], src->len[idx]);
            sb_putc(&sb, '\n');
        }
        k = stop;
    }
    free(ops);
    free(a.s); free(a.len); free(b.s); free(b.len);
    return sb_take(&sb);
}

char *graph_diff_text(const Graph *before, const Graph *after) {
    char *a = fx_print_as(before, after, false), *b = fx_print(after, false);
    char *d = text_diff(a, b, "before", "after", 2);
    free(a);
    free(b);
    return d;
}

static void value_sb(const Value *v, StrBuf *sb) {
    char buf[64];
    switch (v->kind) {
    case V_NONE: sb_put(sb, "None"); break;
    case V_NODE: sb_put(sb, v->node ? v->node->name : "?"); break;
    case V_INT: sb_printf(sb, "%lld", (long long)v->i); break;
    case V_FLOAT: sb_printf(sb, "%.17g", v->f); break;
    case V_COMPLEX: sb_put(sb, fx_complex_repr(v->cx.re, v->cx.im, buf, sizeof buf)); break;
    case V_BOOL: sb_put(sb, v->b ? "True" : "False"); break;
    case V_STR: sb_printf(sb, "'%s'", v->s); break;
    case V_DTYPE: sb_put(sb, dtype_torch_name(v->dtype)); break;
    case V_DEVICE: sb_put(sb, device_repr(v->device, buf, sizeof buf)); break;
    case V_TORCH: sb_put(sb, v->s); break;
    case V_SYM: sym_str_sb(v->sym, sb); break;
    case V_LIST: case V_TUPLE:
        sb_putc(sb, v->kind == V_LIST ? '[' : '(');
        for (int i = 0; i < v->list.n; i++) {
            if (i) sb_put(sb, ", ");
            value_sb(&v->list.items[i], sb);
        }
        sb_putc(sb, v->kind == V_LIST ? ']' : ')');
        break;
    case V_DICT:
        sb_putc(sb, '{');
        for (int i = 0; i + 1 < v->list.n; i += 2) {
            if (i) sb_put(sb, ", ");
            value_sb(&v->list.items[i], sb);
            sb_put(sb, ": ");
            value_sb(&v->list.items[i + 1], sb);
        }
        sb_putc(sb, '}');
        break;
    }
}

void graph_node_rhs(const Node *n, StrBuf *sb) {
    sb_put(sb, n->target ? n->target : (n->kind == N_PLACEHOLDER ? "placeholder" : "output"));
    sb_putc(sb, '(');
    for (int i = 0; i < n->nargs; i++) {
        if (i) sb_put(sb, ", ");
        value_sb(&n->args[i], sb);
    }
    for (int k = 0; k < n->nkwargs; k++) {
        if (n->nargs || k) sb_put(sb, ", ");
        sb_printf(sb, "%s=", n->kwargs[k].name);
        value_sb(&n->kwargs[k].v, sb);
    }
    sb_putc(sb, ')');
    if (n->has_meta) {
        char buf[512];
        sb_printf(sb, " : %s", meta_str(&n->meta, buf, sizeof buf));
    }
}

typedef struct { const char *name; int idx; } NameIdx;
static int cmp_name(const void *a, const void *b) { return strcmp(((const NameIdx *)a)->name, ((const NameIdx *)b)->name); }

static bool same_node(const Node *a, const Node *b) {
    StrBuf x, y;
    sb_init(&x); sb_init(&y);
    graph_node_rhs(a, &x);
    graph_node_rhs(b, &y);
    bool eq = strcmp(x.s ? x.s : "", y.s ? y.s : "") == 0;
    sb_free(&x); sb_free(&y);
    return eq;
}

GraphChange *graph_diff(const Graph *before, const Graph *after, int *nout) {
    int nb = before->n, na = after->n;
    NameIdx *bi = mi_xmalloc((nb + 1) * sizeof *bi);
    for (int i = 0; i < nb; i++) bi[i] = (NameIdx){before->nodes[i]->name, i};
    qsort(bi, nb, sizeof *bi, cmp_name);
    int *match_a = mi_xmalloc((na + 1) * sizeof(int));   /* after idx -> before idx or -1 */
    bool *kept_b = mi_xcalloc(nb + 1, sizeof(bool));
    for (int j = 0; j < na; j++) {
        NameIdx key = {after->nodes[j]->name, 0};
        NameIdx *f = bsearch(&key, bi, nb, sizeof *bi, cmp_name);
        match_a[j] = f ? f->idx : -1;
        if (f) kept_b[f->idx] = true;
    }
    GraphChange *out = mi_xmalloc((na + nb + 1) * sizeof *out);
    int n = 0;
    /* longest increasing subsequence of before-indexes over kept nodes in after order */
    int *seq = mi_xmalloc((na + 1) * sizeof(int)), *pos = mi_xmalloc((na + 1) * sizeof(int));
    int ns = 0;
    for (int j = 0; j < na; j++) if (match_a[j] >= 0) { seq[ns] = match_a[j]; pos[ns++] = j; }
    int *tail = mi_xmalloc((ns + 1) * sizeof(int)), *prev = mi_xmalloc((ns + 1) * sizeof(int));
    int len = 0;
    for (int i = 0; i < ns; i++) {
        int lo = 0, hi = len;
        while (lo < hi) { int mid = (lo + hi) / 2; if (seq[tail[mid]] < seq[i]) lo = mid + 1; else hi = mid; }
        prev[i] = lo > 0 ? tail[lo - 1] : -1;
        tail[lo] = i;
        if (lo == len) len++;
    }
    bool *on_lis = mi_xcalloc(na + 1, sizeof(bool));
    for (int i = len ? tail[len - 1] : -1; i >= 0; i = prev[i]) on_lis[pos[i]] = true;
    for (int i = 0; i < nb; i++)
        if (!kept_b[i]) out[n++] = (GraphChange){GD_REMOVED, before->nodes[i]->name};
    for (int j = 0; j < na; j++) {
        const Node *x = after->nodes[j];
        if (match_a[j] < 0) { out[n++] = (GraphChange){GD_ADDED, x->name}; continue; }
        if (!same_node(before->nodes[match_a[j]], x)) out[n++] = (GraphChange){GD_REWRITTEN, x->name};
        else if (!on_lis[j]) out[n++] = (GraphChange){GD_MOVED, x->name};
    }
    free(bi); free(match_a); free(kept_b); free(seq); free(pos); free(tail); free(prev); free(on_lis);
    *nout = n;
    return out;
}
