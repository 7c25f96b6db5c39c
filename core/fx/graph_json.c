/* graph_json.c — the JSON form of a Graph (format in core/fx/graph-format.md): the same content
 * as the FX text (nodes, kinds, targets, typed args/kwargs, metas with sizes as expression
 * strings, stack comments, subgraphs), for tools that do not want to parse Python-like text.
 * FX -> JSON -> FX reproduces the text exactly. Also graph_load_file, which picks the reader
 * by content. Uses cJSON. */
#include "fx/graph.h"
#include "ops/ops.h"
#include "base/symbool.h"
#include "base/symfloat.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_NAME "minductor-graph"
#define FORMAT_VERSION 1

/* ---- writing ---- */

static const char *kind_name(NodeKind k) {
    switch (k) {
    case N_PLACEHOLDER: return "placeholder";
    case N_CALL_FUNCTION: return "call_function";
    case N_GET_ATTR: return "get_attr";
    case N_OUTPUT: return "output";
    }
    return "?";
}

static cJSON *expr_json(const Expr *e) {
    StrBuf sb;
    sb_init(&sb);
    if (e) sym_str_sb(e, &sb);
    cJSON *j = cJSON_CreateString(sb.s ? sb.s : "?");
    sb_free(&sb);
    return j;
}

static cJSON *tagged(const char *tag, cJSON *v) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, tag, v);
    return o;
}

static cJSON *value_json(const Value *v) {
    char buf[64];
    switch (v->kind) {
    case V_NONE: return cJSON_CreateNull();
    case V_NODE: return tagged("node", cJSON_CreateString(v->node && v->node->name ? v->node->name : "?"));
    case V_INT:
        if (v->i > -(1LL << 53) && v->i < (1LL << 53)) return cJSON_CreateNumber((double)v->i);
        snprintf(buf, sizeof buf, "%lld", (long long)v->i);
        return tagged("int", cJSON_CreateString(buf));
    case V_FLOAT: return tagged("float", cJSON_CreateString(fx_float_repr(v->f, buf, sizeof buf)));
    case V_COMPLEX: return tagged("complex", cJSON_CreateString(fx_complex_repr(v->cx.re, v->cx.im, buf, sizeof buf)));
    case V_BOOL: return cJSON_CreateBool(v->b);
    case V_STR: return cJSON_CreateString(v->s ? v->s : "");
    case V_DTYPE: return tagged("dtype", cJSON_CreateString(dtype_abbrev(v->dtype)));
    case V_DEVICE: return tagged("device", cJSON_CreateString(device_str(v->device, buf, sizeof buf)));
    case V_TORCH: return tagged("torch", cJSON_CreateString(v->s ? v->s : ""));
    case V_SYM: return tagged("sym", expr_json(v->sym));
    case V_LIST: case V_TUPLE: case V_DICT: {   /* a dict: {"dict": [key, value, key, value, ...]} */
        cJSON *a = cJSON_CreateArray();
        for (int i = 0; i < v->list.n; i++) cJSON_AddItemToArray(a, value_json(&v->list.items[i]));
        return tagged(v->kind == V_LIST ? "list" : v->kind == V_TUPLE ? "tuple" : "dict", a);
    }
    }
    return cJSON_CreateNull();
}

static cJSON *meta_json(const TensorMeta *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "dtype", dtype_abbrev(m->dtype));
    cJSON *s = cJSON_AddArrayToObject(o, "size");
    for (int i = 0; i < m->ndim; i++) cJSON_AddItemToArray(s, expr_json(m->size ? m->size[i] : NULL));
    if (m->has_stride) {
        cJSON *t = cJSON_AddArrayToObject(o, "stride");
        for (int i = 0; i < m->ndim; i++) cJSON_AddItemToArray(t, expr_json(m->stride ? m->stride[i] : NULL));
    }
    if (m->has_device) {
        char d[32];
        cJSON_AddStringToObject(o, "device", device_str(m->device, d, sizeof d));
    }
    return o;
}

static cJSON *graph_json(const Graph *g) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "class", g->class_name ? g->class_name : "GraphModule");
    if (g->expanded_def) cJSON_AddBoolToObject(o, "expanded_def", true);
    if (g->nout_comments) {
        cJSON *c = cJSON_AddArrayToObject(o, "out_comments");
        for (int i = 0; i < g->nout_comments; i++)
            cJSON_AddItemToArray(c, g->out_comments[i] ? cJSON_CreateString(g->out_comments[i]) : cJSON_CreateNull());
    }
    if (g->trailer) cJSON_AddStringToObject(o, "trailer", g->trailer);
    if (g->npytree_args) {
        cJSON *pa = cJSON_AddArrayToObject(o, "pytree_args");
        for (int i = 0; i < g->npytree_args; i++) cJSON_AddItemToArray(pa, cJSON_CreateString(g->pytree_args[i]));
    }
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (int i = 0; i < g->n; i++) {
        const Node *n = g->nodes[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", n->name);
        cJSON_AddStringToObject(j, "kind", n->is_method ? "call_method" : kind_name(n->kind));
        if (n->target && !(n->kind == N_OUTPUT && strcmp(n->target, "output") == 0) &&
            !(n->kind == N_PLACEHOLDER && strcmp(n->target, n->name) == 0))
            cJSON_AddStringToObject(j, "target", n->target);
        if (n->nargs) {
            cJSON *a = cJSON_AddArrayToObject(j, "args");
            for (int k = 0; k < n->nargs; k++) cJSON_AddItemToArray(a, value_json(&n->args[k]));
        }
        if (n->nkwargs) {
            cJSON *kw = cJSON_AddObjectToObject(j, "kwargs");
            for (int k = 0; k < n->nkwargs; k++) cJSON_AddItemToObject(kw, n->kwargs[k].name, value_json(&n->kwargs[k].v));
        }
        if (n->annotated && n->symbool) cJSON_AddStringToObject(j, "symbool", n->symbool);
        else if (n->annotated && n->symfloat) cJSON_AddStringToObject(j, "symfloat", n->symfloat);
        else if (n->annotated && n->is_sym) cJSON_AddItemToObject(j, "sym", expr_json(n->sym_val));
        else if (n->annotated && n->has_meta) cJSON_AddItemToObject(j, "meta", meta_json(&n->meta));
        else if (n->has_meta) cJSON_AddItemToObject(j, "meta_unprinted", meta_json(&n->meta));
        if (n->stack) cJSON_AddStringToObject(j, "stack", n->stack);
        if (n->comment) cJSON_AddStringToObject(j, "comment", n->comment);
        if (n->group_start) cJSON_AddBoolToObject(j, "group_start", true);
        if (n->ph_comment) cJSON_AddStringToObject(j, "ph_comment", n->ph_comment);
        if (n->fused_unary) cJSON_AddStringToObject(j, "fused_unary", n->fused_unary);
        if (n->pytree_leaf) cJSON_AddBoolToObject(j, "pytree_leaf", true);
        cJSON_AddItemToArray(nodes, j);
    }
    if (g->nsubs) {
        cJSON *subs = cJSON_AddArrayToObject(o, "subgraphs");
        for (int s = 0; s < g->nsubs; s++) {
            cJSON *sj = graph_json(g->subs[s].g);
            cJSON_AddItemToArray(subs, sj);
        }
    }
    return o;
}

char *graph_to_json(const Graph *g) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", FORMAT_NAME);
    cJSON_AddNumberToObject(root, "version", FORMAT_VERSION);
    cJSON_AddItemToObject(root, "graph", graph_json(g));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    /* cJSON allocates with malloc by default: hand it on as ours */
    char *r = mi_xstrdup(s ? s : "{}");
    free(s);
    return r;
}

/* ---- reading ---- */

typedef struct JR {
    MiCtx *ctx;
    const char *source;
    char path[512];     /* JSON path of the thing being read, for messages */
} JR;

static int jerr(JR *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jerr(JR *r, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mi_err(r->ctx, r->source, 0, 0, "%s: %s", r->path, msg);
}

static Expr *read_expr(JR *r, const cJSON *j, const char *what) {
    if (!cJSON_IsString(j)) { jerr(r, "%s must be a string expression", what); return NULL; }
    const char *end = NULL;
    MiTry tentative = mi_try(r->ctx);
    Expr *e = sym_parse(r->ctx, j->valuestring, &end);
    if (!e || (end && *end)) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", e ? "trailing text" : r->ctx->err.msg);
        mi_try_end(&tentative);
        jerr(r, "bad %s '%s': %s", what, j->valuestring, msg);
        return NULL;
    }
    return e;
}

static int parse_device_str(const char *s, Device *d) {
    d->index = -1;
    if (strncmp(s, "cpu", 3) == 0) { d->kind = DEV_CPU; s += 3; }
    else if (strncmp(s, "cuda", 4) == 0) { d->kind = DEV_CUDA; s += 4; }
    else if (strncmp(s, "meta", 4) == 0) { d->kind = DEV_META; s += 4; }
    else return -1;
    if (*s == ':') {
        char *e;
        long v = strtol(s + 1, &e, 10);
        if (e == s + 1 || *e || v < 0 || v > 1 << 20) return -1;
        d->index = (int)v;
        return 0;
    }
    return *s ? -1 : 0;
}

static int read_value(JR *r, Graph *g, const cJSON *j, Value *out, int depth) {
    memset(out, 0, sizeof *out);
    if (depth > 64) return jerr(r, "values nested too deeply");
    if (cJSON_IsNull(j)) { *out = value_none(); return 0; }
    if (cJSON_IsBool(j)) { *out = value_bool(cJSON_IsTrue(j)); return 0; }
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d != floor(d) || fabs(d) > 9007199254740992.0)
            return jerr(r, "plain JSON numbers must be integers; write floats as {\"float\": \"%g\"}", d);
        *out = value_int((int64_t)d);
        return 0;
    }
    if (cJSON_IsString(j)) { *out = value_str(g, j->valuestring); return 0; }
    if (cJSON_IsArray(j)) return jerr(r, "bare arrays are ambiguous: use {\"list\": [...]} or {\"tuple\": [...]}");
    if (!cJSON_IsObject(j) || !j->child || j->child->next)
        return jerr(r, "expected a value: null, true/false, integer, string or {\"tag\": ...}");
    const cJSON *c = j->child;
    const char *tag = c->string;
    if (strcmp(tag, "node") == 0) {
        if (!cJSON_IsString(c)) return jerr(r, "\"node\" must name a node");
        Node *n = graph_find(g, c->valuestring);
        if (!n) return jerr(r, "use of undefined name '%s'", c->valuestring);
        *out = value_node(n);
        return 0;
    }
    if (strcmp(tag, "int") == 0) {
        if (!cJSON_IsString(c)) return jerr(r, "\"int\" must be a decimal string");
        char *e;
        long long v = strtoll(c->valuestring, &e, 10);
        if (e == c->valuestring || *e) return jerr(r, "bad integer '%s'", c->valuestring);
        *out = value_int(v);
        return 0;
    }
    if (strcmp(tag, "float") == 0) {
        if (cJSON_IsNumber(c)) { *out = value_float(c->valuedouble); return 0; }
        if (!cJSON_IsString(c)) return jerr(r, "\"float\" must be a string like \"1e-05\"");
        const char *s = c->valuestring;
        if (strcmp(s, "inf") == 0) *out = value_float(INFINITY);
        else if (strcmp(s, "-inf") == 0) *out = value_float(-INFINITY);
        else if (strcmp(s, "nan") == 0) *out = value_float(NAN);
        else {
            char *e;
            double d = strtod(s, &e);
            if (e == s || *e) return jerr(r, "bad float '%s'", s);
            *out = value_float(d);
        }
        return 0;
    }
    if (strcmp(tag, "dtype") == 0) {
        if (!cJSON_IsString(c)) return jerr(r, "\"dtype\" must be a string");
        DType t = dtype_from_abbrev(c->valuestring, strlen(c->valuestring));
        if (t == DT_INVALID) t = dtype_from_torch_name(c->valuestring, strlen(c->valuestring));
        if (t == DT_INVALID) return jerr(r, "unknown dtype '%s'", c->valuestring);
        out->kind = V_DTYPE;
        out->dtype = t;
        return 0;
    }
    if (strcmp(tag, "device") == 0) {
        if (!cJSON_IsString(c) || parse_device_str(c->valuestring, &out->device) < 0)
            return jerr(r, "bad device (expected \"cpu\", \"cuda:0\", ...)");
        out->kind = V_DEVICE;
        return 0;
    }
    if (strcmp(tag, "torch") == 0) {
        if (!cJSON_IsString(c)) return jerr(r, "\"torch\" must be a string");
        out->kind = V_TORCH;
        out->s = arena_strdup(&g->arena, c->valuestring);
        return 0;
    }
    if (strcmp(tag, "sym") == 0) {
        Expr *e = read_expr(r, c, "symbolic value");
        if (!e) return -1;
        out->kind = V_SYM;
        out->sym = e;
        return 0;
    }
    if (strcmp(tag, "list") == 0 || strcmp(tag, "tuple") == 0 || strcmp(tag, "dict") == 0) {
        if (!cJSON_IsArray(c)) return jerr(r, "\"%s\" must be an array", tag);
        int n = cJSON_GetArraySize(c);
        if (tag[0] == 'd' && n % 2) return jerr(r, "\"dict\" must alternate keys and values (an even count, got %d)", n);
        Value *items = n ? mi_xcalloc(n, sizeof *items) : NULL;
        int i = 0;
        for (const cJSON *it = c->child; it; it = it->next, i++)
            if (read_value(r, g, it, &items[i], depth + 1) < 0) { free(items); return -1; }
        *out = tag[0] == 'l' ? value_list(g, items, n) : tag[0] == 'd' ? value_dict(g, items, n) : value_tuple(g, items, n);
        free(items);
        return 0;
    }
    return jerr(r, "unknown value tag '%s'", tag);
}

static int read_meta(JR *r, Graph *g, Node *n, const cJSON *m) {
    if (!cJSON_IsObject(m)) return jerr(r, "\"meta\" must be an object");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(m, "dtype");
    if (!cJSON_IsString(dt)) return jerr(r, "meta needs a \"dtype\" string");
    DType t = dtype_from_abbrev(dt->valuestring, strlen(dt->valuestring));
    if (t == DT_INVALID) return jerr(r, "unknown dtype '%s'", dt->valuestring);
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(m, "size");
    const cJSON *stride = cJSON_GetObjectItemCaseSensitive(m, "stride");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(m, "device");
    if (!cJSON_IsArray(size)) return jerr(r, "meta needs a \"size\" array");
    int nd = cJSON_GetArraySize(size);
    if (nd > 64) return jerr(r, "too many dimensions");
    if (stride && (!cJSON_IsArray(stride) || cJSON_GetArraySize(stride) != nd))
        return jerr(r, "\"stride\" must be an array as long as \"size\" (%d)", nd);
    Expr *sz[64], *st[64];
    int i = 0;
    for (const cJSON *e = size->child; e; e = e->next, i++)
        if (!(sz[i] = read_expr(r, e, "size"))) return -1;
    SymCtx *sc = r->ctx->sym;
    if (stride) {
        i = 0;
        for (const cJSON *e = stride->child; e; e = e->next, i++)
            if (!(st[i] = read_expr(r, e, "stride"))) return -1;
    } else {
        Expr *s = sym_int(sc, 1);
        for (i = nd - 1; i >= 0; i--) {
            st[i] = s;
            int64_t v;
            if (!(sym_is_int(sz[i], &v) && v <= 1)) s = sym_mul(sc, s, sz[i]);
        }
    }
    TensorMeta tm;
    memset(&tm, 0, sizeof tm);
    tm.dtype = t;
    tm.ndim = nd;
    tm.size = sz;
    tm.stride = st;
    tm.offset = sym_int(sc, 0);
    tm.has_stride = stride != NULL;
    tm.device.index = -1;
    if (dev) {
        if (!cJSON_IsString(dev) || parse_device_str(dev->valuestring, &tm.device) < 0)
            return jerr(r, "bad device in meta");
        tm.has_device = true;
    }
    graph_set_meta(g, n, &tm);
    return 0;
}

static const char *opt_str(JR *r, Graph *g, const cJSON *o, const char *key, bool *bad) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!j || cJSON_IsNull(j)) return NULL;
    if (!cJSON_IsString(j)) { jerr(r, "\"%s\" must be a string", key); *bad = true; return NULL; }
    return arena_strdup(&g->arena, j->valuestring);
}

static int read_graph(JR *r, Graph *g, const cJSON *o, int depth) {
    if (depth > 16) return jerr(r, "subgraphs nested too deeply");
    if (!cJSON_IsObject(o)) return jerr(r, "a graph must be an object");
    bool bad = false;
    const char *cls = opt_str(r, g, o, "class", &bad);
    if (bad) return -1;
    if (cls) g->class_name = cls;
    g->expanded_def = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "expanded_def"));
    g->trailer = opt_str(r, g, o, "trailer", &bad);
    if (bad) return -1;
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(o, "pytree_args");
    if (pa) {
        if (!cJSON_IsArray(pa)) return jerr(r, "\"pytree_args\" must be an array of names");
        g->npytree_args = cJSON_GetArraySize(pa);
        g->pytree_args = arena_alloc(&g->arena, (g->npytree_args + 1) * sizeof(char *));
        int i = 0;
        for (const cJSON *c = pa->child; c; c = c->next, i++) {
            if (!cJSON_IsString(c)) return jerr(r, "\"pytree_args\" must be an array of names");
            g->pytree_args[i] = arena_strdup(&g->arena, c->valuestring);
        }
    }
    const cJSON *oc = cJSON_GetObjectItemCaseSensitive(o, "out_comments");
    if (oc) {
        if (!cJSON_IsArray(oc)) return jerr(r, "\"out_comments\" must be an array");
        g->nout_comments = cJSON_GetArraySize(oc);
        g->out_comments = g->nout_comments ? arena_alloc(&g->arena, g->nout_comments * sizeof(char *)) : NULL;
        int i = 0;
        for (const cJSON *c = oc->child; c; c = c->next, i++)
            g->out_comments[i] = cJSON_IsString(c) ? arena_strdup(&g->arena, c->valuestring) : NULL;
    }
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(o, "nodes");
    if (!cJSON_IsArray(nodes)) return jerr(r, "a graph needs a \"nodes\" array");
    size_t plen = strlen(r->path);
    /* pass 1: create the nodes (so that references may be checked by name) */
    int i = 0;
    for (const cJSON *j = nodes->child; j; j = j->next, i++) {
        snprintf(r->path + plen, sizeof r->path - plen, ".nodes[%d]", i);
        if (!cJSON_IsObject(j)) return jerr(r, "a node must be an object");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
        if (!cJSON_IsString(name) || !*name->valuestring) return jerr(r, "a node needs a \"name\" string");
        if (!cJSON_IsString(kind)) return jerr(r, "node '%s' needs a \"kind\" string", name->valuestring);
        NodeKind k;
        if (strcmp(kind->valuestring, "placeholder") == 0) k = N_PLACEHOLDER;
        else if (strcmp(kind->valuestring, "call_function") == 0) k = N_CALL_FUNCTION;
        else if (strcmp(kind->valuestring, "call_method") == 0) k = N_CALL_FUNCTION;
        else if (strcmp(kind->valuestring, "get_attr") == 0) k = N_GET_ATTR;
        else if (strcmp(kind->valuestring, "output") == 0) k = N_OUTPUT;
        else return jerr(r, "unknown node kind '%s'", kind->valuestring);
        if (graph_find(g, name->valuestring)) return jerr(r, "duplicate name '%s'", name->valuestring);
        Node *n = graph_add_node(g, k, name->valuestring, NULL);
        n->target = opt_str(r, g, j, "target", &bad);
        if (bad) return -1;
        if (!n->target) {
            if (k == N_OUTPUT) n->target = "output";
            else if (k == N_PLACEHOLDER) n->target = n->name;
            else return jerr(r, "node '%s' needs a \"target\"", n->name);
        }
        n->stack = opt_str(r, g, j, "stack", &bad);
        n->comment = opt_str(r, g, j, "comment", &bad);
        n->ph_comment = opt_str(r, g, j, "ph_comment", &bad);
        n->fused_unary = opt_str(r, g, j, "fused_unary", &bad);
        if (bad) return -1;
        n->group_start = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "group_start"));
        n->pytree_leaf = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "pytree_leaf"));
        n->is_method = strcmp(kind->valuestring, "call_method") == 0;
        const cJSON *sym = cJSON_GetObjectItemCaseSensitive(j, "sym");
        const cJSON *sbool = cJSON_GetObjectItemCaseSensitive(j, "symbool");
        const cJSON *sfloat = cJSON_GetObjectItemCaseSensitive(j, "symfloat");
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "meta");
        const cJSON *meta_u = cJSON_GetObjectItemCaseSensitive(j, "meta_unprinted");
        if (sbool) {
            if (!cJSON_IsString(sbool)) return jerr(r, "node '%s': \"symbool\" must be a string", n->name);
            MiTry tentative = mi_try(r->ctx);
            SymBool *b = symbool_parse(r->ctx, sbool->valuestring, NULL);
            if (!b) {
                char why[700];
                snprintf(why, sizeof why, "%.600s", r->ctx->err.msg);
                mi_try_end(&tentative);
                return jerr(r, "node '%s': bad \"symbool\" \"%s\": %s", n->name, sbool->valuestring, why);
            }
            symbool_free(b);
            n->symbool = arena_strdup(&g->arena, sbool->valuestring);
            n->annotated = true;
        } else if (sfloat) {
            if (!cJSON_IsString(sfloat)) return jerr(r, "node '%s': \"symfloat\" must be a string", n->name);
            MiTry tentative = mi_try(r->ctx);
            if (symfloat_check(r->ctx, sfloat->valuestring, NULL) != 0) {
                char why[700];
                snprintf(why, sizeof why, "%.600s", r->ctx->err.msg);
                mi_try_end(&tentative);
                return jerr(r, "node '%s': bad \"symfloat\" \"%s\": %s", n->name, sfloat->valuestring, why);
            }
            n->symfloat = arena_strdup(&g->arena, sfloat->valuestring);
            n->annotated = true;
        } else if (sym) {
            if (!(n->sym_val = read_expr(r, sym, "sym"))) return -1;
            n->is_sym = n->annotated = true;
        } else if (meta) {
            if (read_meta(r, g, n, meta) < 0) return -1;
            n->annotated = true;
        } else if (meta_u) {
            if (read_meta(r, g, n, meta_u) < 0) return -1;
        }
    }
    /* pass 2: arguments */
    i = 0;
    for (const cJSON *j = nodes->child; j; j = j->next, i++) {
        Node *n = g->nodes[i];
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
        const cJSON *kwargs = cJSON_GetObjectItemCaseSensitive(j, "kwargs");
        if (args) {
            if (!cJSON_IsArray(args)) {
                snprintf(r->path + plen, sizeof r->path - plen, ".nodes[%d]", i);
                return jerr(r, "\"args\" must be an array");
            }
            int na = cJSON_GetArraySize(args);
            Value *v = na ? mi_xcalloc(na, sizeof *v) : NULL;
            int a = 0;
            for (const cJSON *x = args->child; x; x = x->next, a++) {
                snprintf(r->path + plen, sizeof r->path - plen, ".nodes[%d].args[%d]", i, a);
                if (read_value(r, g, x, &v[a], 0) < 0) { free(v); return -1; }
            }
            graph_set_args(g, n, v, na);
            free(v);
        }
        if (kwargs) {
            if (!cJSON_IsObject(kwargs)) {
                snprintf(r->path + plen, sizeof r->path - plen, ".nodes[%d]", i);
                return jerr(r, "\"kwargs\" must be an object");
            }
            int nk = cJSON_GetArraySize(kwargs);
            Kwarg *kw = nk ? mi_xcalloc(nk, sizeof *kw) : NULL;
            int k = 0;
            for (const cJSON *x = kwargs->child; x; x = x->next, k++) {
                snprintf(r->path + plen, sizeof r->path - plen, ".nodes[%d].kwargs.%s", i, x->string);
                kw[k].name = x->string;
                if (read_value(r, g, x, &kw[k].v, 0) < 0) { free(kw); return -1; }
            }
            graph_set_kwargs(g, n, kw, nk);
            free(kw);
        }
    }
    r->path[plen] = 0;
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(o, "subgraphs");
    if (subs) {
        if (!cJSON_IsArray(subs)) return jerr(r, "\"subgraphs\" must be an array");
        i = 0;
        for (const cJSON *s = subs->child; s; s = s->next, i++) {
            snprintf(r->path + plen, sizeof r->path - plen, ".subgraphs[%d]", i);
            const cJSON *cn = cJSON_GetObjectItemCaseSensitive(s, "class");
            if (!cJSON_IsString(cn)) return jerr(r, "a subgraph needs a \"class\" name");
            if (graph_subgraph(g, cn->valuestring)) return jerr(r, "duplicate subgraph '%s'", cn->valuestring);
            Graph *sub = graph_add_subgraph(g, cn->valuestring);
            if (read_graph(r, sub, s, depth + 1) < 0) return -1;
        }
        r->path[plen] = 0;
    }
    return 0;
}

static void json_error_pos(const char *text, size_t len, const char *at, int *line, int *col) {
    *line = 1;
    *col = 1;
    if (!at || at < text || at > text + len) return;
    for (const char *p = text; p < at; p++) {
        if (*p == '\n') { ++*line; *col = 1; }
        else ++*col;
    }
}

static void set_sources(Graph *g, const char *s) {
    g->source = s ? arena_strdup(&g->arena, s) : NULL;
    for (int i = 0; i < g->nsubs; i++) set_sources(g->subs[i].g, s);
}

Graph *graph_from_json(MiCtx *ctx, const char *text, size_t len, const char *source) {
    const char *src = source ? source : "<json>";
    if (!text || len == 0) { mi_err(ctx, src, 1, 1, "empty input: expected a JSON graph object"); return NULL; }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        int line, col;
        json_error_pos(text, len, at ? at : end, &line, &col);
        mi_err(ctx, src, line, col, "malformed JSON");
        return NULL;
    }
    JR r = {ctx, src, "$"};
    Graph *g = NULL;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(root, "graph");
    if (!cJSON_IsObject(root)) jerr(&r, "expected a JSON object at the top");
    else if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT_NAME) != 0)
        jerr(&r, "expected \"format\": \"" FORMAT_NAME "\"");
    else if (!cJSON_IsNumber(ver) || ver->valueint != FORMAT_VERSION)
        jerr(&r, "unsupported version (expected %d)", FORMAT_VERSION);
    else if (!graph) jerr(&r, "missing \"graph\"");
    else {
        strcpy(r.path, "$.graph");
        g = graph_new("GraphModule");
        if (read_graph(&r, g, graph, 0) < 0) { graph_free(g); g = NULL; }
    }
    cJSON_Delete(root);
    if (g) {
        set_sources(g, source);
        ops_resolve_graph(g);
    }
    return g;
}

Graph *graph_load_json_file(MiCtx *ctx, const char *path) {
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    if (!text) return NULL;
    Graph *g = graph_from_json(ctx, text, len, path);
    free(text);
    return g;
}
