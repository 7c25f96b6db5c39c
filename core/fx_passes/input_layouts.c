/* input_layouts.c — the example inputs' layouts, as a TORCH_TRACE log records them in the
 * fx_graph_runnable artifact that compile_fx_inner writes right before its post-grad passes:
 *
 *     reader.tensor(buf0, (16, 3, 3, 3), (27, 1, 9, 3), is_leaf=True)  # primals_1
 *     reader.tensor(buf2, (16,), is_leaf=True)  # primals_7          (no strides: contiguous)
 *
 * These are what fake_tensor_prop (pass_fake_tensor_prop.c) puts on the placeholders. A SymInt
 * input's line, "reader.symint(6)  # arg0_1", is the value of the symbol arg0_1 is typed with
 * (Sym(s77)): ShapeEnv's hint for it, which Inductor sizes buffers by (memory.py). */
#include "fx_passes/passes.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* "(16, 3, 3, 3)" or "(16,)" at *p: integers into v (up to max); false when something else
 * (a symbol, a nested expression) sits there. */
static bool int_tuple(const char **p, int64_t *v, int *n, int max) {
    const char *s = *p;
    while (*s == ' ') s++;
    if (*s != '(') return false;
    s++;
    *n = 0;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ')') { s++; break; }
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end == s || *n >= max) return false;
        v[(*n)++] = x;
        s = end;
        while (*s == ' ') s++;
        if (*s == ',') s++;
        else if (*s != ')') return false;
    }
    *p = s;
    return true;
}

/* One "reader.tensor(...)  # name" line (from s to e) into l; false when it is not one. */
static bool parse_line(const char *s, const char *e, InputLayout *l) {
    const char *t = strstr(s, "reader.tensor(");
    if (!t || t >= e) return false;
    const char *hash = NULL;
    for (const char *q = e; q > t; q--) if (q[-1] == '#') { hash = q; break; }
    if (!hash) return false;
    const char *p = strchr(t, ',');          /* after the storage argument */
    if (!p || p >= e) return false;
    p++;
    int64_t size[64], stride[64];
    int nd = 0, ns = 0;
    if (!int_tuple(&p, size, &nd, 64)) return false;
    while (*p == ' ') p++;
    bool have_stride = false;
    if (*p == ',') {
        const char *q = p + 1;
        while (*q == ' ') q++;
        if (*q == '(' && int_tuple(&q, stride, &ns, 64) && ns == nd) have_stride = true;
    }
    if (!have_stride) {                      /* contiguous */
        int64_t acc = 1;
        for (int d = nd - 1; d >= 0; d--) { stride[d] = acc; acc *= size[d] > 1 ? size[d] : 1; }
    }
    while (*hash == ' ') hash++;
    const char *ne = hash;
    while (ne < e && (isalnum((unsigned char)*ne) || *ne == '_')) ne++;
    if (ne == hash) return false;
    l->name = mi_xmalloc((size_t)(ne - hash) + 1);
    memcpy(l->name, hash, (size_t)(ne - hash));
    l->name[ne - hash] = 0;
    l->ndim = nd;
    l->size = mi_xcalloc(nd + 1, sizeof *l->size);
    l->stride = mi_xcalloc(nd + 1, sizeof *l->stride);
    memcpy(l->size, size, nd * sizeof *size);
    memcpy(l->stride, stride, nd * sizeof *stride);
    return true;
}

/* Every reader.tensor line of an fx_graph_runnable payload, in order. Lines that are not
 * tensors (reader.symint, storages) or whose sizes are symbolic are skipped. Returns the
 * number found (0 is not an error: the graph may take no tensors). */
int input_layouts_parse(const char *text, InputLayout **out) {
    int n = 0, cap = 0;
    InputLayout *v = NULL;
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, '\n');
        if (!e) e = s + strlen(s);
        InputLayout l;
        if (parse_line(s, e, &l)) {
            if (n == cap) { cap = cap ? 2 * cap : 16; v = mi_xrealloc(v, cap * sizeof *v); }
            v[n++] = l;
        }
        s = *e ? e + 1 : e;
    }
    *out = v;
    return n;
}

/* input_size_hints: each "reader.symint(N)  # name" line; the placeholder's symbol gets N. */
int input_size_hints(const char *text, Graph *g) {
    int n = 0;
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, '\n');
        if (!e) e = s + strlen(s);
        const char *t = strstr(s, "reader.symint(");
        if (t && t < e) {
            char *end;
            long long v = strtoll(t + 14, &end, 10);
            const char *hash = end < e && *end == ')' ? memchr(end, '#', (size_t)(e - end)) : NULL;
            if (hash) {
                hash++;
                while (hash < e && *hash == ' ') hash++;
                const char *ne = hash;
                while (ne < e && (isalnum((unsigned char)*ne) || *ne == '_')) ne++;
                char name[128];
                if (ne > hash && ne - hash < (long)sizeof name) {
                    memcpy(name, hash, (size_t)(ne - hash));
                    name[ne - hash] = 0;
                    n += graph_add_size_hint(g, name, v);
                }
            }
        }
        s = *e ? e + 1 : e;
    }
    return n;
}
