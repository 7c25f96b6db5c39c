/* inputs.c — graph inputs from .npy files, validated against the placeholders' metadata, and
 * recorded tensors of a real run (see inputs.h). */
#include "ops/inputs.h"
#include "ops/numerics.h"
#include "base/sym.h"

#include <math.h>
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

/* Strides of ph's annotation at t's sizes (its plain size symbols bound from t); false when
 * there are none or they do not evaluate. */
static bool annotated_strides(MiCtx *ctx, const TensorMeta *m, const Tensor *t, int64_t *stride) {
    if (!m->has_stride) return false;
    SymBinding b[MI_MAX_DIMS];
    int nb = 0;
    for (int i = 0; i < m->ndim; i++)
        if (m->size[i]->kind == EX_SYM) { b[nb].name = m->size[i]->name; b[nb].value = t->size[i]; nb++; }
    MiError saved = ctx->err;
    for (int i = 0; i < m->ndim; i++)
        if (sym_eval(ctx, m->stride[i], b, nb, &stride[i]) || stride[i] < 0) { ctx->err = saved; return false; }
    return true;
}

Tensor *inputs_conform(MiCtx *ctx, const Graph *g, int k, Tensor *t, const char *source, char *note, size_t n) {
    const Node *ph = graph_placeholder(g, k);
    if (note && n) note[0] = 0;
    if (!ph || !ph->has_meta) return tensor_ref(t);
    const TensorMeta *m = &ph->meta;
    DType want = m->dtype == DT_INVALID ? t->dtype : m->dtype;
    bool rounded = want != t->dtype && t->dtype == DT_F32 && dtype_is_float(want) && !dtype_npy_descr(want);
    if (t->ndim != m->ndim || (want != t->dtype && !rounded)) {
        char ws[256], gs[256];
        meta_str(m, ws, sizeof ws);
        mi_err(ctx, source, 0, 0, "input %d ('%s') should be %s, the file holds %s", k, ph->name, ws,
               tensor_type_str(t, gs, sizeof gs));
        return NULL;
    }
    int64_t stride[MI_MAX_DIMS];
    bool restride = false;
    if (annotated_strides(ctx, m, t, stride))
        for (int i = 0; i < t->ndim; i++) restride |= t->size[i] > 1 && stride[i] != t->stride[i];
    if (!rounded && !restride) return tensor_ref(t);
    Tensor *r = restride ? tensor_new_strided(ctx, want, t->ndim, t->size, stride, 0) : tensor_new(ctx, want, t->ndim, t->size);
    if (!r || tensor_copy_into(ctx, r, t)) { tensor_unref(r); return NULL; }
    if (rounded && note && n) {
        int64_t total = tensor_numel(t), changed = 0;
        for (int64_t i = 0; i < total; i++) {
            double a = tensor_get_f(r, i), b = tensor_get_f(t, i);
            changed += a != b && !(isnan(a) && isnan(b));
        }
        snprintf(note, n, "input %d ('%s') is %s; the file holds f32 (.npy has no %s): rounded, %lld of %lld values changed",
                 k, ph->name, dtype_abbrev(want), dtype_abbrev(want), (long long)changed, (long long)total);
    }
    return r;
}

int inputs_from_npy(MiCtx *ctx, const Graph *g, char *const *paths, int npaths, IValue **out, int *n) {
    return inputs_from_npy_noted(ctx, g, paths, npaths, out, n, NULL);
}

int inputs_from_npy_noted(MiCtx *ctx, const Graph *g, char *const *paths, int npaths, IValue **out, int *n,
                          StrBuf *notes) {
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
        char note[512];
        Tensor *c = inputs_conform(ctx, g, i, t, from[i], note, sizeof note);   /* dtype, rank, strides */
        tensor_unref(t);
        if (!c) { rc = -1; break; }
        if (note[0] && notes) sb_printf(notes, "note: %s\n", note);
        in[i].kind = IV_TENSOR;
        in[i].t = c;
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
    return inputs_from_dir_noted(ctx, g, dir, out, n, NULL);
}

int inputs_from_dir_noted(MiCtx *ctx, const Graph *g, const char *dir, IValue **out, int *n, StrBuf *notes) {
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
        else rc = inputs_from_npy_noted(ctx, g, paths, found, out, n, notes);
    }
    for (int i = 0; i < found; i++) free(paths[i]);
    free(paths);
    if (rc == 0 && inputs_constants_from_dir(ctx, g, dir, notes) < 0) { inputs_free(*out, *n); *out = NULL; *n = 0; rc = -1; }
    return rc;
}

int inputs_constants_from_dir(MiCtx *ctx, const Graph *g, const char *dir, StrBuf *notes) {
    int loaded = 0;
    for (int i = 0; i < g->n; i++) {
        const Node *x = g->nodes[i];
        if (x->kind != N_GET_ATTR || !x->target || graph_subgraph(g, x->target)) continue;
        char p[1200];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s.npy", dir, x->target);
        if (strchr(x->target, '/') || stat(p, &st) != 0) {
            if (notes) sb_printf(notes, "note: tensor constant '%s' has no %s: the nodes that read it cannot run\n", x->target, p);
            continue;
        }
        Tensor *t = npy_load(ctx, p);
        if (!t) return -1;
        if (x->has_meta) {
            const TensorMeta *m = &x->meta;
            bool same = t->ndim == m->ndim;
            for (int d = 0; same && d < m->ndim; d++) {
                int64_t v;
                same = !sym_is_int(m->size[d], &v) || v == t->size[d];
            }
            if (same && t->dtype != m->dtype && t->dtype == DT_F32 && dtype_is_float(m->dtype)) {   /* bf16 saved as f32 */
                Tensor *c = tensor_to_dtype(ctx, t, m->dtype);
                tensor_unref(t);
                if (!(t = c)) return -1;
            }
            if (!same || t->dtype != m->dtype) {
                char want[256], got[256];
                meta_str(m, want, sizeof want);
                snprintf(got, sizeof got, "%s[", dtype_abbrev(t->dtype));
                for (int d = 0; d < t->ndim; d++)
                    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "", (long long)t->size[d]);
                snprintf(got + strlen(got), sizeof got - strlen(got), "]");
                tensor_unref(t);
                return mi_err(ctx, p, 0, 0, "tensor constant '%s' should be %s, the file holds %s", x->target, want, got);
            }
        }
        mi_const_set(ctx, x->target, t);
        tensor_unref(t);
        loaded++;
    }
    return loaded;
}

Tensor *recorded_tensor(MiCtx *ctx, const char *dir, const char *stem, int k, const char *suffix, bool *missing) {
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s%d%s.npy", dir, stem, k, suffix ? suffix : "");
    *missing = stat(p, &st) != 0;
    return *missing ? NULL : npy_load(ctx, p);
}

/* One recorded tensor against a computed value by the numerics verdict; 1 compared, 0
 * nothing recorded, -1 differs (why: its report line) or does not load. */
static int check_one(MiCtx *ctx, NumCheck *c, const char *dir, const char *stem, int k, const char *suffix,
                     const IValue *v, bool random, char *why, size_t wn) {
    bool missing;
    if (v->kind != IV_TENSOR) return 0;
    Tensor *file = recorded_tensor(ctx, dir, stem, k, suffix, &missing);
    if (!file) {
        if (missing) return 0;
        snprintf(why, wn, "%s%d%s.npy: %s", stem, k, suffix, ctx->err.msg);
        return -1;
    }
    IValue want = {.kind = IV_TENSOR, .t = num_recorded_as(ctx, file, v->t->dtype)};   /* bf16 recorded as f32 */
    tensor_unref(file);
    if (!want.t) { snprintf(why, wn, "%s%d%s.npy: %s", stem, k, suffix, ctx->err.msg); return -1; }
    char label[64];
    snprintf(label, sizeof label, *suffix ? "input %d after mutation" : "output %d", k);
    StrBuf line;
    sb_init(&line);
    c->report = &line;
    bool ok = num_check_value(c, label, &want, v, *suffix ? NUM_IN_AFTER : NUM_OUT, k, random);
    if (!ok) snprintf(why, wn, "%s", line.s ? line.s : label);
    size_t L = strlen(why);
    while (!ok && L && why[L - 1] == '\n') why[--L] = 0;
    sb_free(&line);
    tensor_unref(want.t);
    return ok ? 1 : -1;
}

int recorded_check(MiCtx *ctx, const Graph *g, const char *dir, const IValue *outs, int nout, const IValue *in, int nin,
                   double rtol, double atol, double *worst, char *why, size_t wn) {
    /* the float64 reference runs g on the recorded inputs as they were before the run */
    IValue *orig = NULL;
    int norig = 0;
    MiError saved = ctx->err;
    if (g && inputs_from_dir(ctx, g, dir, &orig, &norig) < 0) { orig = NULL; norig = 0; ctx->err = saved; }
    NumCheck c = {.ctx = ctx, .rtol = rtol, .atol = atol, .fp64 = orig ? numref_new(ctx, g, orig, norig) : NULL};
    bool *rnd = mi_xcalloc((size_t)nout + 1, sizeof *rnd), *rin = mi_xcalloc((size_t)nin + 1, sizeof *rin);
    if (g) num_random_outputs(g, rnd, nout, rin, nin);
    int compared = 0;
    for (int k = 0; k < nout + nin; k++) {
        int r = k < nout ? check_one(ctx, &c, dir, "out", k, "", &outs[k], rnd[k], why, wn)
                         : check_one(ctx, &c, dir, "in", k - nout, "_after", &in[k - nout], rin[k - nout], why, wn);
        if (r < 0) { compared = -1; break; }
        compared += r;
    }
    if (worst && c.worst_abs > *worst) *worst = c.worst_abs;
    numref_free(c.fp64);
    inputs_free(orig, norig);
    free(rnd);
    free(rin);
    return compared;
}
