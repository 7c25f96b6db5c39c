/* side_by_side.c — two texts in two columns (Compiler Explorer's diff view) for the pass pages
 * and the comparison of two runs, from the line diff core/fx/graph_diff.c computes (text_diff
 * with unlimited context: every line, ' ' / '-' / '+'); a run of removed lines and the run of
 * added lines after it share rows. Also op counts of FX graph texts. */
#define _GNU_SOURCE
#include "tlparse_internal.h"
#include "fx/graph_diff.h"

#include <stdlib.h>
#include <string.h>

typedef struct Row { const char *l, *r; size_t ln, rn; char kind; } Row;   /* kind ' ', '-', '+', '~' */

static void cell(StrBuf *b, const char *cls, const char *s, size_t n, bool has) {
    sb_printf(b, "<td class=\"%s\">", cls);
    if (has) html_escn(b, s, n);
    sb_put(b, "</td>");
}

void tl_side_by_side(StrBuf *b, const char *left, const char *right, const char *title_l, const char *title_r,
                     int *nadd, int *ndel) {
    int na = 0, nd = 0;
    char *d = text_diff(left ? left : "", right ? right : "", "a", "b", 1 << 30);
    sb_put(b, "<table class=\"sbs\"><tr><th>");
    html_esc(b, title_l);
    sb_put(b, "</th><th>");
    html_esc(b, title_r);
    sb_put(b, "</th></tr>\n");
    if (!*d) {                   /* equal: one row per line on both sides */
        for (const char *p = left ? left : ""; *p;) {
            size_t n = strcspn(p, "\n");
            sb_put(b, "<tr>");
            cell(b, "same", p, n, true);
            cell(b, "same", p, n, true);
            sb_put(b, "</tr>\n");
            p += n + (p[n] == '\n');
        }
    } else {
        /* skip the header and the one hunk line, then walk the ops */
        const char *p = d;
        for (int k = 0; k < 3 && *p; k++) p += strcspn(p, "\n") + 1;
        Row *rows = NULL;
        int nr = 0, cap = 0, pend = 0;     /* rows of the current '-' run awaiting '+' */
        while (*p) {
            size_t n = strcspn(p, "\n");
            char op = *p;
            const char *t = p + 1;
            size_t tn = n ? n - 1 : 0;
            if (nr == cap) { cap = cap ? 2 * cap : 256; rows = mi_xrealloc(rows, sizeof *rows * (size_t)cap); }
            if (op == '-') { rows[nr++] = (Row){t, NULL, tn, 0, '-'}; pend++; nd++; }
            else if (op == '+') {
                na++;
                if (pend) { rows[nr - pend].r = t; rows[nr - pend].rn = tn; rows[nr - pend].kind = '~'; pend--; }
                else rows[nr++] = (Row){NULL, t, 0, tn, '+'};
            } else if (op == ' ') { rows[nr++] = (Row){t, t, tn, tn, ' '}; pend = 0; }
            else if (op == '@') pend = 0;
            p += n + (p[n] == '\n');
        }
        for (int i = 0; i < nr; i++) {
            Row *r = &rows[i];
            sb_put(b, "<tr>");
            cell(b, r->kind == ' ' ? "same" : r->l ? "del" : "none", r->l, r->ln, r->l != NULL);
            cell(b, r->kind == ' ' ? "same" : r->r ? "add" : "none", r->r, r->rn, r->r != NULL);
            sb_put(b, "</tr>\n");
        }
        free(rows);
    }
    sb_put(b, "</table>\n");
    free(d);
    if (nadd) *nadd = na;
    if (ndel) *ndel = nd;
}

/* "x = torch.ops.aten.add.Tensor(" (print_readable) or "x = aten.add.Tensor(" -> "aten.add.Tensor" */
static bool op_of_line(const char *p, size_t n, const char **op, size_t *on) {
    const char *eq = memmem(p, n, " = ", 3);
    if (!eq) return false;
    const char *q = eq + 3, *end = p + n;
    if (end - q > 10 && !memcmp(q, "torch.ops.", 10)) q += 10;
    const char *par = memchr(q, '(', (size_t)(end - q));
    if (!par || par == q) return false;
    for (const char *c = q; c < par; c++)
        if (!(*c == '.' || *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return false;
    if (!memchr(q, '.', (size_t)(par - q))) return false;     /* an op has a namespace */
    *op = q;
    *on = (size_t)(par - q);
    return true;
}

int tl_count_ops(const char *text) {
    int n = 0;
    for (const char *p = text ? text : ""; *p;) {
        size_t len = strcspn(p, "\n");
        const char *op;
        size_t on;
        if (op_of_line(p, len, &op, &on)) n++;
        p += len + (p[len] == '\n');
    }
    return n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void tl_op_histogram(const char *text, StrBuf *b) {
    char **v = NULL;
    int n = 0, cap = 0;
    for (const char *p = text ? text : ""; *p;) {
        size_t len = strcspn(p, "\n");
        const char *op;
        size_t on;
        if (op_of_line(p, len, &op, &on)) {
            if (n == cap) { cap = cap ? 2 * cap : 64; v = mi_xrealloc(v, sizeof *v * (size_t)cap); }
            v[n] = mi_xmalloc(on + 1);
            memcpy(v[n], op, on);
            v[n++][on] = 0;
        }
        p += len + (p[len] == '\n');
    }
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_str);   /* v is NULL for a graph with no ops */
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(v[j], v[i])) j++;
        sb_printf(b, "%s %d\n", v[i], j - i);
        i = j;
    }
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}
