/* inputs.c — graph inputs from .npy files, validated against the placeholders' metadata, and
 * recorded tensors of a real run (see inputs.h). */
#include "ops/inputs.h"
#include "base/sym.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void inputs_free(IValue *in, int n) {
    if (!in) return;
    for (int i = 0; i < n; i++) ivalue_clear(&in[i]);
    free(in);
}

/* Bind plain-symbol sizes (s0, s77) and SymInt placeholder values. */
typedef struct { SymBinding b[64]; int n; } Binds;

static const int64_t *bound(const Binds *bs, const char *name) {
    for (int i = 0; i < bs->n; i++) if (!strcmp(bs->b[i].name, name)) return &bs->b[i].value;
    return NULL;
}

static void bind(Binds *bs, const char *name, int64_t v) {
    if (bound(bs, name) || bs->n == (int)(sizeof bs->b / sizeof bs->b[0])) return;
    bs->b[bs->n].name = name;
    bs->b[bs->n++].value = v;
}

/* SymInt placeholder value from a tensor input whose placeholder has that symbol as a size. */
static bool sym_from_tensors(const Graph *g, const Node *sym_ph, const IValue *in, int64_t *out) {
    for (int i = 0; i < graph_num_placeholders(g); i++) {
        const Node *ph = graph_placeholder(g, i);
        if (!ph->has_meta || in[i].kind != IV_TENSOR) continue;
        for (int d = 0; d < ph->meta.ndim && d < in[i].t->ndim; d++)
            if (ph->meta.size[d] == sym_ph->sym_val) { *out = in[i].t->size[d]; return true; }
    }
    return false;
}

/* The sizes of tensor input i agree with its placeholder: constants exactly, symbols with the
 * value the first input naming them gave, other expressions by evaluation when every symbol
 * they use is bound. 0 or -1 + error naming the file, the input and both types. */
static int check_sizes(MiCtx *ctx, const Node *ph, int i, const Tensor *t, const char *path, Binds *bs, bool pass2) {
    for (int d = 0; d < ph->meta.ndim; d++) {
        const Expr *e = ph->meta.size[d];
        int64_t want;
        bool known = sym_is_int(e, &want);
        if (!known && e->kind == EX_SYM) {
            const int64_t *v = bound(bs, e->name);
            if (v) { want = *v; known = true; }
            else if (!pass2) { bind(bs, e->name, t->size[d]); continue; }
        }
        if (!known && pass2) {
            MiTry tentative = mi_try(ctx);
            known = sym_eval(ctx, e, bs->b, bs->n, &want) == 0;
            mi_try_end(&tentative);
        }
        if (known && want != t->size[d]) {
            char w[256], got[256];
            meta_str(&ph->meta, w, sizeof w);
            tensor_type_str(t, got, sizeof got);
            return mi_err(ctx, path, 0, 0, "input %d ('%s') should be %s, the file holds %s (size %d is %lld, not %lld)",
                          i, ph->name, w, got, d, (long long)t->size[d], (long long)want);
        }
    }
    return 0;
}

int inputs_from_npy(MiCtx *ctx, const Graph *g, char *const *paths, int npaths, IValue **out, int *n) {
    int nph = graph_num_placeholders(g), ntensor = 0;
    for (int i = 0; i < nph; i++) if (!graph_placeholder(g, i)->is_sym) ntensor++;
    if (npaths != nph && npaths != ntensor)
        return mi_err(ctx, NULL, 0, 0, "the graph has %d inputs (%d tensors) but %d .npy files were given",
                      nph, ntensor, npaths);
    IValue *in = mi_xcalloc(nph ? nph : 1, sizeof *in);
    const char **from = mi_xcalloc(nph ? nph : 1, sizeof *from);
    Binds bs = {.n = 0};
    int k = 0, rc = 0;
    for (int i = 0; i < nph && rc == 0; i++) {
        const Node *ph = graph_placeholder(g, i);
        if (ph->is_sym && npaths == ntensor) continue;
        from[i] = paths[k];
        Tensor *t = npy_load(ctx, paths[k++]);
        if (!t) { rc = -1; break; }
        if (ph->is_sym) {
            in[i].kind = IV_INT;
            in[i].i = tensor_numel(t) ? tensor_get_i(t, 0) : 0;
            tensor_unref(t);
            if (ph->sym_val && ph->sym_val->kind == EX_SYM) bind(&bs, ph->sym_val->name, in[i].i);
            continue;
        }
        in[i].kind = IV_TENSOR;
        in[i].t = t;
        if (ph->has_meta && (t->ndim != ph->meta.ndim || t->dtype != ph->meta.dtype)) {
            char want[256], got[256];
            meta_str(&ph->meta, want, sizeof want);
            tensor_type_str(t, got, sizeof got);
            rc = mi_err(ctx, from[i], 0, 0, "input %d ('%s') should be %s, the file holds %s", i, ph->name, want, got);
        }
    }
    /* sizes: bind plain symbols first, then check everything against the bindings */
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (int i = 0; i < nph && rc == 0; i++) {
            const Node *ph = graph_placeholder(g, i);
            if (in[i].kind == IV_TENSOR && ph->has_meta) rc = check_sizes(ctx, ph, i, in[i].t, from[i], &bs, pass == 1);
        }
    for (int i = 0; i < nph && rc == 0; i++) {
        const Node *ph = graph_placeholder(g, i);
        if (!ph->is_sym || in[i].kind != IV_NONE) continue;
        int64_t v = 0;
        if (!sym_from_tensors(g, ph, in, &v))
            rc = mi_err(ctx, NULL, 0, 0, "cannot infer the value of SymInt input '%s' from the tensors", ph->name);
        in[i].kind = IV_INT;
        in[i].i = v;
    }
    free(from);
    if (rc < 0) { inputs_free(in, nph); return -1; }
    *out = in;
    *n = nph;
    return 0;
}

int inputs_from_dir(MiCtx *ctx, const Graph *g, const char *dir, IValue **out, int *n) {
    int nph = graph_num_placeholders(g), found = 0, rc = 0;
    char **paths = mi_xcalloc(nph ? nph : 1, sizeof *paths);
    for (int i = 0; i < nph && rc == 0; i++) {
        char p[1200];
        struct stat st;
        snprintf(p, sizeof p, "%s/in%d.npy", dir, i);
        if (stat(p, &st) == 0) paths[found++] = mi_xstrdup(p);
        else if (!graph_placeholder(g, i)->is_sym)
            rc = mi_err(ctx, dir, 0, 0, "no in%d.npy for input %d ('%s')", i, i, graph_placeholder(g, i)->name);
    }
    if (rc == 0) {
        int ntensor = 0;
        for (int i = 0; i < nph; i++) if (!graph_placeholder(g, i)->is_sym) ntensor++;
        if (found != nph && found != ntensor)
            rc = mi_err(ctx, dir, 0, 0, "some SymInt inputs have .npy files and some do not");
        else rc = inputs_from_npy(ctx, g, paths, found, out, n);
    }
    for (int i = 0; i < found; i++) free(paths[i]);
    free(paths);
    return rc;
}

Tensor *recorded_tensor(MiCtx *ctx, const char *dir, const char *stem, int k, const char *suffix, bool *missing) {
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s%d%s.npy", dir, stem, k, suffix ? suffix : "");
    *missing = stat(p, &st) != 0;
    return *missing ? NULL : npy_load(ctx, p);
}

/* One recorded tensor against a computed value; 1 compared, 0 nothing recorded, -1 differs. */
static int check_one(MiCtx *ctx, const char *dir, const char *stem, int k, const char *suffix, const IValue *v,
                     double rtol, double atol, double *worst, char *why, size_t wn) {
    bool missing;
    if (v->kind != IV_TENSOR) return 0;
    Tensor *want = recorded_tensor(ctx, dir, stem, k, suffix, &missing);
    if (!want) {
        if (missing) return 0;
        snprintf(why, wn, "%s%d%s.npy: %s", stem, k, suffix, ctx->err.msg);
        return -1;
    }
    CompareResult c = tensor_compare(v->t, want, rtol, atol);
    tensor_unref(want);
    if (worst && c.max_abs > *worst) *worst = c.max_abs;
    if (c.ok) return 1;
    if (*suffix) snprintf(why, wn, "input %d after mutation differs: max_abs %g", k, c.max_abs);
    else snprintf(why, wn, "output %d differs: max_abs %g", k, c.max_abs);
    return -1;
}

int recorded_check(MiCtx *ctx, const char *dir, const IValue *outs, int nout, const IValue *in, int nin,
                   double rtol, double atol, double *worst, char *why, size_t wn) {
    int compared = 0;
    for (int k = 0; k < nout + nin; k++) {
        int r = k < nout ? check_one(ctx, dir, "out", k, "", &outs[k], rtol, atol, worst, why, wn)
                         : check_one(ctx, dir, "in", k - nout, "_after", &in[k - nout], rtol, atol, worst, why, wn);
        if (r < 0) return -1;
        compared += r;
    }
    return compared;
}
