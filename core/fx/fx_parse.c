/* fx_parse.c — reads the `print_readable` text PyTorch writes for FX graphs (ATen level, as in
 * TORCH_COMPILE_DEBUG's fx_graph_readable.py and the graph artifacts of TORCH_TRACE logs) into a
 * Graph. This is the front door of the pipeline: everything downstream works on the Graph.
 *
 * The grammar is line oriented, indentation defines the blocks:
 *
 *   class NAME(torch.nn.Module):
 *       def forward(self, a: "f32[8][1]cpu", n: "Sym(s0)"):      (or one parameter per line)
 *           # File: ... code: ...                                  (group comment)
 *           x: "f32[8][1]cpu" = torch.ops.aten.sin.default(a);  a = None
 *           t = torch.ops.aten.var_mean.correction(x, [0], correction = 0)
 *           y: "f32[8][1]cpu" = t[0]
 *           sub = self.sub                                         (get_attr)
 *           return (y,)
 *
 *       class sub(torch.nn.Module):                                (subgraphs, same grammar)
 *           ...
 *
 * Deletion suffixes (";  a = b = None") are ignored; the printer recomputes them. Every error
 * names the file, line and column and says what was expected. */
#include "fx/graph.h"
#include "ops/ops.h"
#include "base/symbool.h"
#include "base/symfloat.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

/* Names of the graph being read -> nodes (open addressing; NULL value = removed). */
typedef struct NameMap { const char **keys; Node **vals; size_t cap, n; } NameMap;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static Node *nm_get(const NameMap *m, const char *k) {
    if (!m->cap) return NULL;
    for (size_t i = hash_str(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) return NULL;
        if (strcmp(m->keys[i], k) == 0) return m->vals[i];
    }
}

static void nm_put(NameMap *m, const char *k, Node *v) {
    if ((m->n + 1) * 2 > m->cap) {
        NameMap bigger = {0};
        bigger.cap = m->cap ? m->cap * 2 : 64;
        bigger.keys = mi_xcalloc(bigger.cap, sizeof *bigger.keys);
        bigger.vals = mi_xcalloc(bigger.cap, sizeof *bigger.vals);
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) nm_put(&bigger, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = bigger;
    }
    size_t i = hash_str(k) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], k) != 0) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->n++;
    m->keys[i] = k;
    m->vals[i] = v;
}

static void nm_free(NameMap *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

typedef struct Parser {
    MiCtx *ctx;
    const char *src;          /* text */
    size_t len, pos;
    int line;                 /* 1-based line within text */
    size_t line_start;        /* offset of the current line */
    const char *source;       /* file name for messages */
    int first_line;
    int depth;
    Graph *g;                 /* graph being filled (names resolve here) */
    NameMap names;            /* its node names */
    const char *comment;      /* current group comment (arena of g) */
    bool new_group;
    bool failed;
    size_t last_end;          /* just after the last statement of a class (for the trailer) */
    bool repeated_comment;    /* the current group comment repeats the previous one */
} Parser;

/* ---- errors ---- */

static int perr_at(Parser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr_at(Parser *p, size_t at, const char *fmt, ...) {
    if (p->failed) return -1;    /* keep the first error */
    p->failed = true;
    /* the error position may lie before the current line (rare): recount */
    int line = 1;
    size_t ls = 0;
    for (size_t i = 0; i < at && i < p->len; i++)
        if (p->src[i] == '\n') { line++; ls = i + 1; }
    va_list ap;
    va_start(ap, fmt);
    mi_verr(p->ctx, p->source, p->first_line + line - 1, (int)(at - ls) + 1, fmt, ap);
    va_end(ap);
    return -1;
}
#define perr(p, ...) perr_at(p, (p)->pos, __VA_ARGS__)

/* A short printable description of what is at the cursor, for messages. */
static const char *found(Parser *p, char *buf, size_t n) {
    if (p->pos >= p->len) return "end of file";
    unsigned char c = p->src[p->pos];
    if (c == '\n') return "end of line";
    if (c < 32 || c >= 127) { snprintf(buf, n, "byte 0x%02x", c); return buf; }
    size_t k = 0;
    while (p->pos + k < p->len && k < 20 && p->src[p->pos + k] != '\n' &&
           (unsigned char)p->src[p->pos + k] >= 32 && (unsigned char)p->src[p->pos + k] < 127) k++;
    snprintf(buf, n, "'%.*s'", (int)k, p->src + p->pos);
    return buf;
}

/* ---- cursor ---- */

static int peek(Parser *p) { return p->pos < p->len ? (unsigned char)p->src[p->pos] : 0; }
static int peek_at(Parser *p, size_t k) { return p->pos + k < p->len ? (unsigned char)p->src[p->pos + k] : 0; }
static bool at_end(Parser *p) { return p->pos >= p->len; }

static void advance(Parser *p) {
    if (p->pos >= p->len) return;
    if (p->src[p->pos] == '\n') { p->line++; p->line_start = p->pos + 1; }
    p->pos++;
}

static void skip_spaces(Parser *p) {
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\r') advance(p);
}

/* Spaces, newlines and (when allow_comments) "# ..." to end of line, inside brackets. */
static void skip_ws_nl(Parser *p) {
    for (;;) {
        int c = peek(p);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') advance(p);
        else break;
    }
}

static bool starts(Parser *p, const char *lit) {
    size_t n = strlen(lit);
    return p->pos + n <= p->len && memcmp(p->src + p->pos, lit, n) == 0;
}

static bool accept(Parser *p, const char *lit) {
    if (!starts(p, lit)) return false;
    for (size_t i = strlen(lit); i > 0; i--) advance(p);
    return true;
}

static int expect(Parser *p, const char *lit, const char *what) {
    if (accept(p, lit)) return 0;
    char b[64];
    return perr(p, "expected %s, found %s", what, found(p, b, sizeof b));
}

static bool is_id_start(int c) { return isalpha(c) || c == '_'; }
static bool is_id_char(int c) { return isalnum(c) || c == '_'; }

/* Identifier at the cursor into the graph arena; NULL (no error) when none. */
static const char *ident(Parser *p) {
    if (!is_id_start(peek(p))) return NULL;
    size_t s = p->pos;
    while (is_id_char(peek(p))) advance(p);
    return arena_strndup(&p->g->arena, p->src + s, p->pos - s);
}

/* Dotted name "a.b.c" (identifiers joined by dots). */
static const char *dotted(Parser *p) {
    if (!is_id_start(peek(p))) return NULL;
    size_t s = p->pos;
    for (;;) {
        while (is_id_char(peek(p))) advance(p);
        if (peek(p) == '.' && is_id_start(peek_at(p, 1))) advance(p);
        else break;
    }
    return arena_strndup(&p->g->arena, p->src + s, p->pos - s);
}

static bool at_eol(Parser *p) { return at_end(p) || peek(p) == '\n'; }

/* Rest of the line (without the newline), cursor left at the newline. */
static const char *rest_of_line(Parser *p) {
    size_t s = p->pos;
    while (!at_eol(p)) advance(p);
    size_t e = p->pos;
    while (e > s && (p->src[e - 1] == ' ' || p->src[e - 1] == '\r')) e--;
    return arena_strndup(&p->g->arena, p->src + s, e - s);
}

static int end_line(Parser *p) {
    skip_spaces(p);
    /* a trailing Python comment on a hand-edited line ("... = None  # note") is dropped */
    if (peek(p) == '#') while (!at_eol(p)) advance(p);
    if (at_end(p)) return 0;
    if (peek(p) == '\n') { advance(p); return 0; }
    char b[64];
    return perr(p, "expected end of line, found %s", found(p, b, sizeof b));
}

/* Indentation of the line starting at the cursor (which must be at a line start). */
static int line_indent(Parser *p, bool *blank) {
    size_t k = 0;
    while (p->pos + k < p->len && p->src[p->pos + k] == ' ') k++;
    size_t e = p->pos + k;
    while (e < p->len && (p->src[e] == '\r' || p->src[e] == ' ')) e++;
    *blank = e >= p->len || p->src[e] == '\n';
    return (int)k;
}

static void skip_line(Parser *p) {
    while (!at_eol(p)) advance(p);
    advance(p);
}

/* ---- values ---- */

static int parse_value(Parser *p, Value *out);

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int parse_string(Parser *p, Value *out) {
    int q = peek(p);
    size_t start = p->pos;
    advance(p);
    StrBuf sb;
    sb_init(&sb);
    for (;;) {
        int c = peek(p);
        if (at_end(p) || c == '\n') {
            sb_free(&sb);
            return perr_at(p, start, "unterminated string");
        }
        advance(p);
        if (c == q) break;
        if (c == '\\') {
            int e = peek(p);
            advance(p);
            switch (e) {
            case 'n': sb_putc(&sb, '\n'); break;
            case 't': sb_putc(&sb, '\t'); break;
            case 'r': sb_putc(&sb, '\r'); break;
            case '0': sb_putc(&sb, '\0'); break;
            case 'x': {     /* \xHH, as the printer writes control bytes */
                int h = hexval(peek(p)), l = h < 0 ? -1 : hexval(p->pos + 1 < p->len ? p->src[p->pos + 1] : 0);
                if (h < 0 || l < 0) { sb_putc(&sb, 'x'); break; }
                advance(p);
                advance(p);
                sb_putc(&sb, (char)(h * 16 + l));
                break;
            }
            default: sb_putc(&sb, (char)e); break;
            }
        } else sb_putc(&sb, (char)c);
    }
    out->kind = V_STR;
    out->s = arena_strdup(&p->g->arena, sb.s ? sb.s : "");
    sb_free(&sb);
    return 0;
}

static int parse_real(Parser *p, Value *out) {
    size_t s = p->pos;
    bool neg = false;
    if (peek(p) == '-' || peek(p) == '+') { neg = peek(p) == '-'; advance(p); }
    if (accept(p, "inf")) {
        *out = value_float(neg ? -INFINITY : INFINITY);
        return 0;
    }
    if (accept(p, "nan")) {
        *out = value_float(NAN);
        return 0;
    }
    bool is_float = false;
    while (isdigit(peek(p))) advance(p);
    if (peek(p) == '.') { is_float = true; advance(p); while (isdigit(peek(p))) advance(p); }
    if ((peek(p) == 'e' || peek(p) == 'E') &&
        (isdigit(peek_at(p, 1)) || ((peek_at(p, 1) == '-' || peek_at(p, 1) == '+') && isdigit(peek_at(p, 2))))) {
        is_float = true;
        advance(p);
        if (peek(p) == '-' || peek(p) == '+') advance(p);
        while (isdigit(peek(p))) advance(p);
    }
    size_t n = p->pos - s;
    if (n == 0 || (n == 1 && (p->src[s] == '-' || p->src[s] == '+')) || (is_id_char(peek(p)) && peek(p) != 'j')) {
        char b[64];
        if (is_id_char(peek(p))) while (is_id_char(peek(p))) advance(p);
        return perr_at(p, s, "malformed number %s", (p->pos = s, found(p, b, sizeof b)));
    }
    char buf[64];
    if (n >= sizeof buf) return perr_at(p, s, "number too long");
    memcpy(buf, p->src + s, n);
    buf[n] = 0;
    if (is_float) *out = value_float(strtod(buf, NULL));
    else {
        errno = 0;
        long long v = strtoll(buf, NULL, 10);
        if (errno) return perr_at(p, s, "integer %s out of range", buf);
        *out = value_int(v);
    }
    return 0;
}

/* A number as FX prints Python scalars: an int, a float, or a complex in repr() form: an
 * imaginary literal "2j" / "-1.5j" / "infj", or "re+imj" / "re-imj" (the parentheses of
 * "(1+2j)" are read as a one-element tuple around it). Example: "1e-05+2j" -> complex(1e-05, 2). */
static double num_of(const Value *v, bool neg) {
    return v->kind == V_INT ? (v->i == 0 && neg ? -0.0 : (double)v->i) : v->f;   /* "-0" keeps its sign */
}

static int parse_number(Parser *p, Value *out) {
    bool neg = peek(p) == '-';
    if (parse_real(p, out)) return -1;
    if (peek(p) == 'j' && !is_id_char(peek_at(p, 1))) {   /* an imaginary literal */
        advance(p);
        *out = value_complex(0.0, num_of(out, neg));
        return 0;
    }
    if (peek(p) != '+' && peek(p) != '-') return 0;
    int c1 = peek_at(p, 1);
    if (!isdigit(c1) && c1 != '.' && c1 != 'i' && c1 != 'n') return 0;
    size_t s = p->pos;
    bool ineg = peek(p) == '-';
    Value im;
    if (parse_real(p, &im) == 0 && peek(p) == 'j' && !is_id_char(peek_at(p, 1))) {
        advance(p);
        *out = value_complex(num_of(out, neg), num_of(&im, ineg));
        return 0;
    }
    p->pos = s;   /* not "re+imj": leave the sign to the caller */
    return 0;
}

static int parse_seq(Parser *p, char close, ValueKind kind, Value *out) {
    size_t start = p->pos;
    advance(p);   /* opening bracket */
    Value items[256];
    Value *heap = NULL;
    int n = 0, cap = 256;
    Value *v = items;
    bool trailing_comma = false;
    skip_ws_nl(p);
    while (peek(p) != close) {
        if (at_end(p)) {
            free(heap);
            return perr_at(p, start, "unbalanced '%c': expected '%c' before end of file", p->src[start], close);
        }
        if (n == cap) {
            cap *= 2;
            if (!heap) { heap = mi_xmalloc(cap * sizeof *heap); memcpy(heap, items, n * sizeof *heap); }
            else heap = mi_xrealloc(heap, cap * sizeof *heap);
            v = heap;
        }
        if (parse_value(p, &v[n]) < 0) { free(heap); return -1; }
        n++;
        skip_ws_nl(p);
        trailing_comma = false;
        if (peek(p) == ',') { advance(p); trailing_comma = true; skip_ws_nl(p); continue; }
        if (peek(p) != close) {
            char b[64];
            free(heap);
            return perr(p, "expected ',' or '%c' in %s, found %s", close, kind == V_LIST ? "list" : "tuple",
                        found(p, b, sizeof b));
        }
    }
    advance(p);
    if (kind == V_TUPLE && n == 1 && !trailing_comma) *out = v[0];   /* "(x)" is just x */
    else if (kind == V_LIST) *out = value_list(p->g, v, n);
    else *out = value_tuple(p->g, v, n);
    free(heap);
    return 0;
}

/* dict := '{' [value ':' value (',' value ':' value)* [',']] '}'
 * A Python dict literal, as FX prints a HOP's dict argument (flex_attention's kernel_options
 * "{'BACKEND': 'AUTO', 'PRESCALE_QK': False}"); keys are constants (strings, numbers). Kept in
 * the printed order; a repeated key is an error, as it would silently drop a value. */
static int parse_dict(Parser *p, Value *out) {
    size_t start = p->pos;
    advance(p);   /* '{' */
    Value *kv = NULL;
    int n = 0, cap = 0;
    skip_ws_nl(p);
    while (peek(p) != '}') {
        char b[64];
        if (at_end(p)) { free(kv); return perr_at(p, start, "unbalanced '{': expected '}' before end of file"); }
        if (n + 2 > cap) { cap = cap ? cap * 2 : 16; kv = mi_xrealloc(kv, cap * sizeof *kv); }
        size_t kpos = p->pos;
        if (parse_value(p, &kv[n]) < 0) { free(kv); return -1; }
        ValueKind kk = kv[n].kind;
        if (kk != V_STR && kk != V_INT && kk != V_BOOL && kk != V_FLOAT && kk != V_NONE) {
            free(kv);
            return perr_at(p, kpos, "a dict key must be a constant (a string or a number)");
        }
        for (int i = 0; i < n; i += 2)
            if (value_equal(&kv[i], &kv[n])) { free(kv); return perr_at(p, kpos, "repeated key in a dict"); }
        skip_ws_nl(p);
        if (peek(p) != ':') { free(kv); return perr(p, "expected ':' after a dict key, found %s", found(p, b, sizeof b)); }
        advance(p);
        skip_ws_nl(p);
        if (parse_value(p, &kv[n + 1]) < 0) { free(kv); return -1; }
        n += 2;
        skip_ws_nl(p);
        if (peek(p) == ',') { advance(p); skip_ws_nl(p); continue; }
        if (peek(p) != '}') { free(kv); return perr(p, "expected ',' or '}' in dict, found %s", found(p, b, sizeof b)); }
    }
    advance(p);
    *out = value_dict(p->g, kv, n);
    free(kv);
    return 0;
}

/* device(type='cuda', index=0) */
static int parse_device(Parser *p, Value *out) {
    size_t start = p->pos;
    Device d = {DEV_CPU, -1};
    skip_spaces(p);
    if (expect(p, "(", "'(' after device") < 0) return -1;
    skip_spaces(p);
    if (expect(p, "type=", "'type=' in device(...)") < 0) return -1;
    Value t;
    if (peek(p) != '\'' && peek(p) != '"') return perr(p, "expected a quoted device type");
    if (parse_string(p, &t) < 0) return -1;
    if (strcmp(t.s, "cpu") == 0) d.kind = DEV_CPU;
    else if (strcmp(t.s, "cuda") == 0) d.kind = DEV_CUDA;
    else if (strcmp(t.s, "meta") == 0) d.kind = DEV_META;
    else return perr_at(p, start, "unknown device type '%s'", t.s);
    skip_spaces(p);
    if (accept(p, ",")) {
        skip_spaces(p);
        if (expect(p, "index=", "'index=' in device(...)") < 0) return -1;
        Value i;
        if (parse_number(p, &i) < 0) return -1;
        if (i.kind != V_INT || i.i < 0 || i.i > 1 << 20) return perr_at(p, start, "bad device index");
        d.index = (int)i.i;
        skip_spaces(p);
    }
    if (expect(p, ")", "')' after device arguments") < 0) return -1;
    out->kind = V_DEVICE;
    out->device = d;
    return 0;
}

/* "float17", "int4", "bfloat": a torch.<name> that can only mean a dtype (torch.strided,
 * torch.contiguous_format, ... are other constants and stay verbatim) */
static bool looks_like_dtype(const char *s) {
    static const char *const pre[] = {"float", "int", "uint", "bfloat", "complex", "bool", "half", "double",
                                      "long", "short", "cfloat", "cdouble", "qint", "quint", "bits"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (!strncmp(s, pre[i], strlen(pre[i]))) return true;
    return false;
}

static int parse_value(Parser *p, Value *out) {
    memset(out, 0, sizeof *out);
    if (++p->depth > MAX_DEPTH) { p->depth--; return perr(p, "values nested too deeply"); }
    int rc = 0;
    int c = peek(p);
    size_t start = p->pos;
    if (c == '[') rc = parse_seq(p, ']', V_LIST, out);
    else if (c == '(') rc = parse_seq(p, ')', V_TUPLE, out);
    else if (c == '{') rc = parse_dict(p, out);
    else if (c == '\'' || c == '"') rc = parse_string(p, out);
    else if (isdigit(c) || c == '-' || c == '+' || c == '.') rc = parse_number(p, out);
    else if (is_id_start(c)) {
        const char *name = dotted(p);
        if (strcmp(name, "None") == 0) *out = value_none();
        else if (strcmp(name, "True") == 0) *out = value_bool(true);
        else if (strcmp(name, "False") == 0) *out = value_bool(false);
        else if (strcmp(name, "inf") == 0) *out = value_float(INFINITY);
        else if (strcmp(name, "nan") == 0) *out = value_float(NAN);
        else if (strcmp(name, "device") == 0 && peek(p) == '(') rc = parse_device(p, out);
        else if (strcmp(name, "slice") == 0 && peek(p) == '(') {
            /* slice(start, stop, step): kept verbatim (Dynamo-level subscripts) */
            int level = 0;
            do {
                if (at_eol(p)) { rc = perr_at(p, start, "unbalanced '(' in slice(...)"); break; }
                if (peek(p) == '(') level++;
                else if (peek(p) == ')') level--;
                advance(p);
            } while (level > 0);
            if (rc == 0) { out->kind = V_TORCH; out->s = arena_strndup(&p->g->arena, p->src + start, p->pos - start); }
        }
        else if (strcmp(name, "float") == 0 && peek(p) == '(') {
            advance(p);
            Value s;
            if (peek(p) != '\'' && peek(p) != '"') rc = perr(p, "expected a quoted float in float(...)");
            else if ((rc = parse_string(p, &s)) == 0) {
                const char *t = s.s;
                if (strcmp(t, "inf") == 0) *out = value_float(INFINITY);
                else if (strcmp(t, "-inf") == 0) *out = value_float(-INFINITY);
                else if (strcmp(t, "nan") == 0) *out = value_float(NAN);
                else rc = perr_at(p, start, "unknown float constant '%s'", t);
                if (rc == 0) rc = expect(p, ")", "')' after float(...)");
            }
        } else if (strncmp(name, "torch.", 6) == 0) {
            DType dt = dtype_from_torch_name(name, strlen(name));
            if (dt != DT_INVALID) { out->kind = V_DTYPE; out->dtype = dt; }
            else if (looks_like_dtype(name + 6)) rc = perr_at(p, start, "unknown dtype '%s'", name);
            else { out->kind = V_TORCH; out->s = name; }
        } else if (strchr(name, '.')) {
            rc = perr_at(p, start, "unsupported expression '%s' in an argument", name);
        } else {
            Node *n = nm_get(&p->names, name);
            if (!n) rc = perr_at(p, start, "use of undefined name '%s'", name);
            else *out = value_node(n);
        }
    } else {
        char b[64];
        rc = perr(p, "expected a value, found %s", found(p, b, sizeof b));
    }
    p->depth--;
    return rc;
}

/* Arguments "(a, b, k = v)" into the node; cursor at '('. */
static int parse_call_args(Parser *p, Node *n) {
    size_t open = p->pos;
    advance(p);
    Value args[64];
    Kwarg kw[64];
    int na = 0, nk = 0;
    skip_ws_nl(p);
    while (peek(p) != ')') {
        if (at_end(p) || peek(p) == ';') return perr_at(p, open, "unbalanced '(': expected ')' after arguments");
        if (na + nk >= 64) return perr(p, "too many arguments");
        /* keyword? identifier followed by '=' (not '==') */
        size_t save = p->pos;
        int save_line = p->line;
        size_t save_ls = p->line_start;
        const char *id = is_id_start(peek(p)) ? ident(p) : NULL;
        bool is_kw = false;
        if (id) {
            skip_spaces(p);
            if (peek(p) == '=' && peek_at(p, 1) != '=') { advance(p); skip_spaces(p); is_kw = true; }
        }
        if (!is_kw) { p->pos = save; p->line = save_line; p->line_start = save_ls; }
        if (is_kw) {
            for (int k = 0; k < nk; k++)
                if (strcmp(kw[k].name, id) == 0) return perr_at(p, save, "keyword argument '%s' repeated", id);
            kw[nk].name = id;
            size_t vat = p->pos;
            if (parse_value(p, &kw[nk].v) < 0) return -1;
            if (!strcmp(id, "dtype") && kw[nk].v.kind == V_TORCH)
                return perr_at(p, vat, "unknown dtype '%s'", kw[nk].v.s);
            nk++;
        } else {
            if (nk) return perr_at(p, save, "positional argument after keyword argument");
            if (parse_value(p, &args[na]) < 0) return -1;
            na++;
        }
        skip_ws_nl(p);
        if (peek(p) == ',') { advance(p); skip_ws_nl(p); continue; }
        if (peek(p) != ')') {
            char b[64];
            if (at_end(p) || peek(p) == ';' || peek(p) == '\n')
                return perr(p, "expected ')' after arguments, found %s", found(p, b, sizeof b));
            return perr(p, "expected ',' or ')' in arguments, found %s", found(p, b, sizeof b));
        }
    }
    advance(p);
    graph_set_args(p->g, n, args, na);
    graph_set_kwargs(p->g, n, kw, nk);
    return 0;
}

/* ---- annotations ---- */

/* Parse the inside of an annotation string (between the quotes) into node n. */
static int parse_annotation(Parser *p, Node *n, const char *text, size_t len, size_t at) {
    char *s = mi_xmalloc(len + 1);
    memcpy(s, text, len);
    s[len] = 0;
    int rc = 0;
    SymCtx *sc = p->ctx->sym;
    const char *c = s;
    if (strncmp(s, "Sym(", 4) == 0) {
        const char *end = NULL;
        Expr *e = sym_parse(p->ctx, s + 4, &end);
        char why[1024];
        snprintf(why, sizeof why, "%s", p->ctx->err.msg);
        size_t inner = len > 5 && s[len - 1] == ')' ? len - 5 : 0;   /* text between "Sym(" and ")" */
        if (symbool_looks_bool(p->ctx, s + 4)) {
            /* a SymBool ("Sym(s0 >= 2)", "Sym(Eq(s0, s1))"): kept verbatim, checked here */
            char *cond = mi_xmalloc(inner + 1);
            memcpy(cond, s + 4, inner);
            cond[inner] = 0;
            const char *cend = NULL;
            SymBool *b = inner ? symbool_parse(p->ctx, cond, &cend) : NULL;
            if (!inner) rc = perr_at(p, at, "expected ')' closing Sym( in annotation \"%s\"", s);
            else if (!b) {
                snprintf(why, sizeof why, "%s", p->ctx->err.msg);
                rc = perr_at(p, at + 4 + (p->ctx->err.col > 0 ? p->ctx->err.col - 1 : 0),
                             "bad symbolic condition in annotation \"%s\": %s", s, why);
            } else if (*cend) rc = perr_at(p, at + 4 + (cend - cond), "unexpected '%c' in symbolic condition \"%s\"", *cend, s);
            else { n->symbool = arena_strdup(&p->g->arena, cond); n->annotated = true; }
            symbool_free(b);
            free(cond);
        }
        else if (!e && inner && symfloat_looks_float(s + 4)) {
            /* a SymFloat ("Sym(IntTrueDiv(8*s0, 8))", "Sym(0.1)"): kept verbatim, checked here */
            char *text = mi_xmalloc(inner + 1);
            memcpy(text, s + 4, inner);
            text[inner] = 0;
            if (symfloat_check(p->ctx, text, NULL) != 0) {
                snprintf(why, sizeof why, "%s", p->ctx->err.msg);
                rc = perr_at(p, at + 4 + (p->ctx->err.col > 0 ? p->ctx->err.col - 1 : 0),
                             "bad symbolic float expression in annotation \"%s\": %s", s, why);
            } else { n->symfloat = arena_strdup(&p->g->arena, text); n->annotated = true; }
            free(text);
        }
        else if (!e) rc = perr_at(p, at + 4, "bad symbolic expression in annotation \"%s\": %s", s, why);
        else if (!end || *end != ')' || end[1]) rc = perr_at(p, at, "expected ')' closing Sym( in annotation \"%s\"", s);
        else { n->is_sym = true; n->sym_val = e; n->annotated = true; }
        free(s);
        return rc;
    }
    size_t k = 0;
    while (isalnum((unsigned char)c[k])) k++;
    DType dt = dtype_from_abbrev(c, k);
    if (dt == DT_INVALID) {
        rc = perr_at(p, at, "unknown dtype '%.*s' in annotation \"%s\"", (int)k, c, s);
        free(s);
        return rc;
    }
    c += k;
    Expr *dims[2][64];
    int nd[2] = {0, 0};
    int lists = 0;
    while (*c == '[' && lists < 2) {
        c++;
        while (*c == ' ') c++;
        while (*c != ']') {
            if (nd[lists] >= 64) { rc = perr_at(p, at + (c - s), "too many dimensions"); goto done; }
            if (!*c) { rc = perr_at(p, at + (c - s), "expected ']' in annotation \"%s\"", s); goto done; }
            const char *end = NULL;
            Expr *e = sym_parse(p->ctx, c, &end);
            if (!e || end == c) {
                char why[1024];
                snprintf(why, sizeof why, "%s", e ? "" : p->ctx->err.msg);
                rc = perr_at(p, at + (c - s), "bad size expression in annotation \"%s\"%s%s", s,
                             e ? "" : ": ", why);
                goto done;
            }
            dims[lists][nd[lists]++] = e;
            c = end;
            while (*c == ' ') c++;
            if (*c == ',') { c++; while (*c == ' ') c++; }
            else if (*c != ']') { rc = perr_at(p, at + (c - s), "expected ',' or ']' in annotation \"%s\"", s); goto done; }
        }
        c++;
        lists++;
    }
    if (lists == 0) { rc = perr_at(p, at + (c - s), "expected '[' after dtype in annotation \"%s\"", s); goto done; }
    if (lists == 2 && nd[0] != nd[1]) {
        rc = perr_at(p, at, "annotation \"%s\" has %d sizes but %d strides", s, nd[0], nd[1]);
        goto done;
    }
    Device dev = {DEV_CPU, -1};
    bool has_dev = false;
    if (*c) {
        if (strncmp(c, "cpu", 3) == 0) { dev.kind = DEV_CPU; c += 3; }
        else if (strncmp(c, "cuda", 4) == 0) { dev.kind = DEV_CUDA; c += 4; }
        else if (strncmp(c, "meta", 4) == 0) { dev.kind = DEV_META; c += 4; }
        else { rc = perr_at(p, at + (c - s), "unknown device '%s' in annotation \"%s\"", c, s); goto done; }
        has_dev = true;
        if (*c == ':') {
            c++;
            if (!isdigit((unsigned char)*c)) { rc = perr_at(p, at + (c - s), "expected a device index in annotation \"%s\"", s); goto done; }
            long idx = strtol(c, (char **)&c, 10);
            dev.index = idx > 1 << 20 ? 1 << 20 : (int)idx;
        }
        if (*c) { rc = perr_at(p, at + (c - s), "unexpected '%s' at the end of annotation \"%s\"", c, s); goto done; }
    }
    TensorMeta m;
    memset(&m, 0, sizeof m);
    m.dtype = dt;
    m.ndim = nd[0];
    m.device = dev;
    m.has_device = has_dev;
    m.has_stride = lists == 2;
    m.offset = sym_int(sc, 0);
    m.size = dims[0];
    if (lists == 2) m.stride = dims[1];
    else {
        /* contiguous strides */
        Expr *st = sym_int(sc, 1);
        for (int i = nd[0] - 1; i >= 0; i--) {
            dims[1][i] = st;
            int64_t v;
            if (!(sym_is_int(dims[0][i], &v) && v <= 1)) st = sym_mul(sc, st, dims[0][i]);
        }
        m.stride = dims[1];
    }
    graph_set_meta(p->g, n, &m);
    n->annotated = true;
done:
    free(s);
    return rc;
}

/* `: "ann"` after a name (cursor at ':'): consumes it and gives where the text between the
 * quotes starts in the source (*at) and its length. The trick: either quote closes what it
 * opened (PyTorch prints "..."; a hand edit may use '...'). Example: in `x: "f32[4][1]cpu" = ...`
 * it gives the 13 characters f32[4][1]cpu. */
static int scan_colon_annotation(Parser *p, size_t *at, size_t *len) {
    advance(p);
    skip_spaces(p);
    int quote = peek(p);
    if (quote != '"' && quote != '\'') {
        char b[64];
        return perr(p, "expected a quoted type annotation after ':', found %s", found(p, b, sizeof b));
    }
    size_t q = p->pos;
    advance(p);
    while (!at_eol(p) && peek(p) != quote) advance(p);
    if (peek(p) != quote) return perr_at(p, q, "unterminated annotation string");
    *at = q + 1;
    *len = p->pos - q - 1;
    advance(p);
    return 0;
}

/* `: "ann"` after a name (cursor at ':'); consumes it and sets n's meta from it. */
static int parse_colon_annotation(Parser *p, Node *n) {
    size_t at, len;
    if (scan_colon_annotation(p, &at, &len)) return -1;
    return parse_annotation(p, n, p->src + at, len, at);
}

/* ---- statements ---- */

static bool name_taken(Parser *p, const char *name) { return nm_get(&p->names, name) != NULL; }

static Node *new_node(Parser *p, NodeKind kind, const char *name, size_t at) {
    if (name_taken(p, name)) {
        Node *o = nm_get(&p->names, name);
        perr_at(p, at, "duplicate name '%s' (first defined on line %d)", name, p->first_line + o->src_line - 1);
        return NULL;
    }
    Node *n = graph_add_node(p->g, kind, name, NULL);
    n->src_line = p->line;
    nm_put(&p->names, n->name, n);
    return n;
}

/* Put node n under the current group comment. The comment text is kept only when it is not
 * what the stack alone prints ("File: <stack>" / "No stacktrace found for following nodes"). */
static void attach_group(Parser *p, Node *n) {
    const char *c = p->comment;
    n->group_start = p->new_group && p->repeated_comment;
    p->new_group = false;
    n->comment = NULL;
    if (!c) { n->stack = NULL; return; }
    if (strcmp(c, "No stacktrace found for following nodes") == 0) { n->stack = ""; return; }
    if (strncmp(c, "File: ", 6) == 0) { n->stack = c + 6; return; }
    const char *f = strstr(c, "File: ");
    n->stack = f ? f + 6 : c;
    n->comment = c;
}

/* "a, b, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)" (cursor after
 * the first name): the forward() parameters become pytree inputs, the declared leaves the
 * real placeholders. */
static int parse_flatten(Parser *p, const char *first, size_t at) {
    Graph *g = p->g;
    const char *leaves[1024];
    int nl = 0;
    leaves[nl++] = first;
    for (;;) {
        skip_spaces(p);
        if (!accept(p, ",")) break;
        skip_spaces(p);
        if (peek(p) == '=') break;
        const char *id = ident(p);
        if (!id) {
            char b[64];
            return perr(p, "expected a name in the flattened inputs, found %s", found(p, b, sizeof b));
        }
        if (nl >= 1024) return perr(p, "too many inputs");
        leaves[nl++] = id;
    }
    skip_spaces(p);
    if (expect(p, "=", "'=' after the flattened inputs") < 0) return -1;
    skip_spaces(p);
    if (expect(p, "fx_pytree.tree_flatten_spec([", "'fx_pytree.tree_flatten_spec(['") < 0) return -1;
    /* the pytree parameters: the placeholders that are not leaves */
    const char *trees[64];
    int nt = 0;
    for (;;) {
        skip_spaces(p);
        if (peek(p) == ']') { advance(p); break; }
        size_t ts = p->pos;
        const char *id = ident(p);
        if (!id) {
            char b[64];
            return perr(p, "expected a parameter name in tree_flatten_spec, found %s", found(p, b, sizeof b));
        }
        Node *ph = nm_get(&p->names, id);
        if (!ph || ph->kind != N_PLACEHOLDER || ph->pytree_leaf) return perr_at(p, ts, "'%s' is not a parameter of forward", id);
        if (nt >= 64) return perr(p, "too many pytree parameters");
        trees[nt++] = id;
        skip_spaces(p);
        accept(p, ",");
    }
    skip_spaces(p);
    if (expect(p, ", self._in_spec)", "', self._in_spec)'") < 0) return -1;
    /* drop the pytree parameters, check the leaves */
    for (int i = 0; i < nt; i++) {
        graph_remove_node(g, nm_get(&p->names, trees[i]));
        nm_put(&p->names, trees[i], NULL);
    }
    int k = 0;
    for (int i = 0; i < g->n && g->nodes[i]->kind == N_PLACEHOLDER; i++, k++)
        if (k >= nl || strcmp(g->nodes[i]->name, leaves[k]) != 0) break;
    if (k == 0) {
        /* no declarations above: the leaves are new, unannotated placeholders */
        for (int i = 0; i < nl; i++) {
            Node *ph = new_node(p, N_PLACEHOLDER, leaves[i], at);
            if (!ph) return -1;
            ph->target = leaves[i];
            ph->pytree_leaf = true;
        }
    } else if (k != nl || graph_num_placeholders(g) != nl)
        return perr_at(p, at, "the flattened inputs do not match the declared placeholders");
    g->npytree_args = nt;
    g->pytree_args = arena_alloc(&g->arena, nt * sizeof(char *));
    for (int i = 0; i < nt; i++) g->pytree_args[i] = trees[i];
    return end_line(p);
}

/* Python operators FX prints in infix form (its magic_methods table), longest first. */
static const struct { const char *tok, *target; } binops[] = {
    {"//", "operator.floordiv"}, {"**", "operator.pow"}, {"<<", "operator.lshift"}, {">>", "operator.rshift"},
    {"<=", "operator.le"}, {">=", "operator.ge"}, {"==", "operator.eq"}, {"!=", "operator.ne"},
    {"+", "operator.add"}, {"-", "operator.sub"}, {"*", "operator.mul"}, {"/", "operator.truediv"},
    {"%", "operator.mod"}, {"@", "operator.matmul"}, {"<", "operator.lt"}, {">", "operator.gt"},
    {"&", "operator.and_"}, {"|", "operator.or_"}, {"^", "operator.xor"},
};

const char *fx_binop_token(const char *target) {
    if (!target) return NULL;
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (strcmp(binops[i].target, target) == 0) return binops[i].tok;
    return NULL;
}

/* An infix operator at the cursor (after spaces): its target, cursor moved past it. */
static const char *accept_binop(Parser *p) {
    size_t save = p->pos;
    skip_spaces(p);
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++) {
        size_t n = strlen(binops[i].tok);
        if (starts(p, binops[i].tok) && peek_at(p, n) == ' ') {
            for (size_t k = 0; k < n; k++) advance(p);
            skip_spaces(p);
            return binops[i].target;
        }
    }
    p->pos = save;
    return NULL;
}

/* A Python function of a torch module as FX's code names its global: the qualified name with
 * '.' as '_' and no dot left ("torch__inductor_fx_passes_mkldnn_fusion_fn", the handler of a
 * lowering pattern). Other bare names stay errors (a typo, an undefined function). */
bool fx_is_global_fn(const char *target) {
    return strncmp(target, "torch_", 6) == 0 && !strchr(target, '.') && target[6];
}

/* "name[: ann] = rhs[;  x = None]" where rhs is
 *   torch.ops.<ns>.<op>.<overload>(args)    call_function (target without "torch.ops.")
 *   torch.<fn>(args), operator.<fn>(args)   call_function (target as written)
 *   torch_<module>_<fn>(args)               call_function of a module's function (fx_is_global_fn)
 *   x.<method>(args)                        call_method (Dynamo-level graphs)
 *   x[i]                                    operator.getitem
 *   a <op> b, -a                            Python operators (operator.add, operator.neg, ...)
 *   self.<attr>                             get_attr
 *   L_x_                                    placeholder alias ("l_x_ = L_x_") */
static int parse_assignment(Parser *p) {
    size_t at = p->pos;
    const char *name = ident(p);
    if (!name) {
        char b[64];
        return perr(p, "expected a statement (name = ..., return, # comment), found %s", found(p, b, sizeof b));
    }
    skip_spaces(p);
    bool has_ann = false;
    size_t ann_at = 0;
    const char *ann_s = NULL;
    size_t ann_len = 0;
    if (peek(p) == ':') {
        /* remember the annotation text; parse it once the node exists */
        if (scan_colon_annotation(p, &ann_at, &ann_len)) return -1;
        ann_s = p->src + ann_at;
        has_ann = true;
        skip_spaces(p);
    }
    if (has_ann && (peek(p) == '#' || at_eol(p))) {
        /* "primals_1: "f32[..]"  # PlainAOTInput(idx=0)": a placeholder declared before the
         * fx_pytree flatten line of an AOT joint graph */
        if (p->g->n && p->g->nodes[p->g->n - 1]->kind != N_PLACEHOLDER)
            return perr_at(p, at, "placeholder declaration '%s' after other statements", name);
        Node *ph = new_node(p, N_PLACEHOLDER, name, at);
        if (!ph) return -1;
        ph->target = name;
        ph->pytree_leaf = true;
        if (parse_annotation(p, ph, ann_s, ann_len, ann_at) < 0) return -1;
        if (peek(p) == '#') {
            advance(p);
            skip_spaces(p);
            ph->ph_comment = rest_of_line(p);
        }
        return end_line(p);
    }
    if (peek(p) == ',' && !has_ann) return parse_flatten(p, name, at);
    if (peek(p) != '=' || peek_at(p, 1) == '=') {
        char b[64];
        return perr(p, "expected '=' after '%s', found %s", name, found(p, b, sizeof b));
    }
    advance(p);
    skip_spaces(p);
    size_t rhs = p->pos;
    Node *n = NULL;
    if (accept(p, "self.")) {
        const char *attr = dotted(p);
        if (!attr) return perr(p, "expected an attribute name after 'self.'");
        if (!(n = new_node(p, N_GET_ATTR, name, at))) return -1;
        n->target = attr;
    } else if ((peek(p) == '-' || peek(p) == '~' || peek(p) == '+') && is_id_start(peek_at(p, 1))) {
        /* unary operator on a node */
        const char *target = peek(p) == '-' ? "operator.neg" : peek(p) == '~' ? "operator.invert" : "operator.pos";
        advance(p);
        Value v;
        if (parse_value(p, &v) < 0) return -1;
        if (!(n = new_node(p, N_CALL_FUNCTION, name, at))) return -1;
        n->target = target;
        graph_set_args(p->g, n, &v, 1);
    } else if (is_id_start(peek(p))) {
        const char *callee = dotted(p);
        const char *dot = strrchr(callee, '.');
        Node *self_node = dot ? nm_get(&p->names, arena_strndup(&p->g->arena, callee, dot - callee)) : NULL;
        Node *ref = nm_get(&p->names, callee);
        const char *op;
        skip_spaces(p);
        if (peek(p) == '(') {
            if (self_node) {
                /* method call on a value: call_method */
                if (!(n = new_node(p, N_CALL_FUNCTION, name, at))) return -1;
                n->target = dot + 1;
                n->is_method = true;
                if (parse_call_args(p, n) < 0) return -1;
                Value *args = mi_xmalloc((n->nargs + 1) * sizeof *args);
                args[0] = value_node(self_node);
                if (n->nargs) memcpy(args + 1, n->args, n->nargs * sizeof *args);
                graph_set_args(p->g, n, args, n->nargs + 1);
                free(args);
            } else {
                if (strncmp(callee, "torch.ops.", 10) == 0) {
                    callee += 10;
                    /* the printer writes torch.* and operator.* targets without this prefix, so
                     * such a name after it would not print back as written */
                    if (strncmp(callee, "torch.", 6) == 0 || strncmp(callee, "operator.", 9) == 0 ||
                        strncmp(callee, "_operator.", 10) == 0)
                        return perr_at(p, rhs, "'torch.ops.%.*s' names no op namespace (expected torch.ops.aten.*, prims.*, ...)",
                                       (int)strcspn(callee, "("), callee);
                } else if (!(strncmp(callee, "torch.", 6) == 0 || strncmp(callee, "operator.", 9) == 0 ||
                           strncmp(callee, "_operator.", 10) == 0 || fx_is_global_fn(callee))) {
                    if (dot) return perr_at(p, rhs, "use of undefined name '%.*s'", (int)strcspn(callee, "."), callee);
                    return perr_at(p, rhs, "unsupported call target '%s'; expected torch.ops.*", callee);
                }
                if (!*callee) return perr_at(p, rhs, "expected an operator name after 'torch.ops.'");
                if (!(n = new_node(p, N_CALL_FUNCTION, name, at))) return -1;
                n->target = callee;
                if (parse_call_args(p, n) < 0) return -1;
            }
        } else if (peek(p) == '[') {
            /* subscript: x[0] -> operator.getitem */
            if (!ref) return perr_at(p, rhs, "use of undefined name '%s'", callee);
            advance(p);
            skip_spaces(p);
            Value idx;
            if (parse_value(p, &idx) < 0) return -1;
            skip_spaces(p);
            if (expect(p, "]", "']' after subscript") < 0) return -1;
            if (!(n = new_node(p, N_CALL_FUNCTION, name, at))) return -1;
            n->target = "operator.getitem";
            Value a[2] = {value_node(ref), idx};
            graph_set_args(p->g, n, a, 2);
        } else if (ref && (op = accept_binop(p))) {
            Value a[2] = {value_node(ref), value_none()};
            if (parse_value(p, &a[1]) < 0) return -1;
            if (!(n = new_node(p, N_CALL_FUNCTION, name, at))) return -1;
            n->target = op;
            graph_set_args(p->g, n, a, 2);
        } else if (ref && ref->kind == N_PLACEHOLDER && ref->target && strcmp(ref->target, callee) == 0 &&
                   strcmp(ref->name, callee) == 0 && p->g->nodes[p->g->n - 1]->kind == N_PLACEHOLDER && !has_ann) {
            /* "l_x_ = L_x_": a placeholder whose node name differs from its parameter name */
            if (name_taken(p, name)) return perr_at(p, at, "duplicate name '%s'", name);
            nm_put(&p->names, ref->name, NULL);
            ref->name = name;
            nm_put(&p->names, name, ref);
            return end_line(p);
        } else if (!ref && !dot) {
            return perr_at(p, rhs, "use of undefined name '%s'", callee);
        } else {
            char b[64];
            return perr(p, "expected '(' , '[' or an operator after '%s', found %s", callee, found(p, b, sizeof b));
        }
    } else if (isdigit(peek(p)) || peek(p) == '-' || peek(p) == '.' || peek(p) == '(' || peek(p) == '[') {
        /* constant on the left of an operator: "2 * x" */
        Value a[2];
        if (parse_value(p, &a[0]) < 0) return -1;
        const char *op = accept_binop(p);
        if (!op) {
            char b[64];
            return perr(p, "expected an operator, found %s", found(p, b, sizeof b));
        }
        if (parse_value(p, &a[1]) < 0) return -1;
        if (!(n = new_node(p, N_CALL_FUNCTION, name, at))) return -1;
        n->target = op;
        graph_set_args(p->g, n, a, 2);
    } else {
        char b[64];
        return perr(p, "expected torch.ops.<op>(...), x[i] or self.<attr> after '=', found %s", found(p, b, sizeof b));
    }
    attach_group(p, n);
    if (has_ann && parse_annotation(p, n, ann_s, ann_len, ann_at) < 0) return -1;
    skip_spaces(p);
    if (peek(p) == ';') {
        /* ";  a = b = None" deletion list: recomputed by the printer */
        while (!at_eol(p)) advance(p);
    }
    return end_line(p);
}

/* "return X" / expanded "return (\n item,  # c\n ...)" */
static int parse_return(Parser *p, bool expanded) {
    Node *out = new_node(p, N_OUTPUT, "output", p->pos);
    if (!out) return -1;
    out->target = "output";
    skip_spaces(p);
    Value v;
    bool pytree = accept(p, "pytree.tree_unflatten(");
    if (pytree && peek(p) != '[') return perr(p, "expected '[' after 'pytree.tree_unflatten('");
    if (pytree || (expanded && peek(p) == '(' && (peek_at(p, 1) == '\n'))) {
        size_t open = p->pos;
        char close = pytree ? ']' : ')';
        advance(p);
        Value items[256];
        const char *comments[256];
        int n = 0;
        for (;;) {
            skip_ws_nl(p);
            if (at_end(p)) return perr_at(p, open, "unbalanced '%c': expected '%c' closing return", p->src[open], close);
            if (peek(p) == close) { advance(p); break; }
            if (n >= 256) return perr(p, "too many returned values");
            if (parse_value(p, &items[n]) < 0) return -1;
            skip_spaces(p);
            if (expect(p, ",", "',' after a returned value") < 0) return -1;
            skip_spaces(p);
            comments[n] = NULL;
            if (peek(p) == '#') {
                advance(p);
                skip_spaces(p);
                comments[n] = rest_of_line(p);
            }
            n++;
        }
        v = pytree ? value_list(p->g, items, n) : value_tuple(p->g, items, n);
        if (pytree && expect(p, ", self._out_spec)", "', self._out_spec)' closing pytree.tree_unflatten") < 0) return -1;
        p->g->nout_comments = n;
        p->g->out_comments = n ? arena_alloc(&p->g->arena, n * sizeof(char *)) : NULL;
        for (int i = 0; i < n; i++) p->g->out_comments[i] = comments[i];
    } else {
        if (at_eol(p)) return perr(p, "expected a value after 'return'");
        if (parse_value(p, &v) < 0) return -1;
    }
    graph_set_args(p->g, out, &v, 1);
    return end_line(p);
}

/* "def forward(self, a: "ann", ...):" (cursor after "def forward"). The expanded form puts
 * one parameter per line, each optionally followed by "  # descriptor". */
static int parse_forward_def(Parser *p) {
    skip_spaces(p);
    if (expect(p, "(", "'(' after 'def forward'") < 0) return -1;
    skip_spaces(p);
    bool expanded = peek(p) == '\n';
    skip_ws_nl(p);
    if (!accept(p, "self")) {
        char b[64];
        return perr(p, "expected 'self' as the first parameter of forward, found %s", found(p, b, sizeof b));
    }
    Node *last = NULL;
    for (;;) {
        skip_spaces(p);
        bool comma = accept(p, ",");
        skip_spaces(p);
        if (peek(p) == '#') {
            advance(p);
            skip_spaces(p);
            const char *c = rest_of_line(p);
            if (last) last->ph_comment = c;
        }
        skip_ws_nl(p);
        if (peek(p) == ')') { advance(p); break; }
        if (!comma) {
            char b[64];
            return perr(p, "expected ',' or ')' in the parameters of forward, found %s", found(p, b, sizeof b));
        }
        size_t at = p->pos;
        const char *name = ident(p);
        if (!name) {
            char b[64];
            return perr(p, "expected a parameter name, found %s", found(p, b, sizeof b));
        }
        Node *n = new_node(p, N_PLACEHOLDER, name, at);
        if (!n) return -1;
        n->target = name;
        skip_spaces(p);
        if (peek(p) == ':' && parse_colon_annotation(p, n) < 0) return -1;
        last = n;
    }
    p->g->expanded_def = expanded;
    skip_spaces(p);
    if (expect(p, ":", "':' after the parameters of forward") < 0) return -1;
    return end_line(p);
}

/* class NAME(torch.nn.Module): ... at indentation `ind`. Cursor at the line start. */
static int parse_class(Parser *p, int ind, Graph *g) {
    if (++p->depth > 16) return perr(p, "subgraphs nested too deeply");
    bool blank;
    line_indent(p, &blank);
    for (int i = 0; i < ind; i++) advance(p);
    if (!accept(p, "class ")) {
        char b[64];
        return perr(p, "expected 'class <name>(torch.nn.Module):', found %s", found(p, b, sizeof b));
    }
    skip_spaces(p);
    if (accept(p, "<lambda>")) g->class_name = "<lambda>";
    else {
        const char *cn = ident(p);
        if (!cn) return perr(p, "expected a class name after 'class'");
        g->class_name = cn;
    }
    /* "(torch.nn.Module):" as PyTorch prints it, or with spaces a hand edit may add */
    size_t cls_at = p->pos;
    skip_spaces(p);
    bool cls_ok = accept(p, "(");
    skip_spaces(p);
    cls_ok = cls_ok && accept(p, "torch.nn.Module");
    skip_spaces(p);
    cls_ok = cls_ok && accept(p, ")");
    skip_spaces(p);
    cls_ok = cls_ok && accept(p, ":");
    if (!cls_ok) {
        char b[64];
        p->pos = cls_at;   /* same line: line/column bookkeeping is unchanged */
        return perr(p, "expected '(torch.nn.Module):' after the class name, found %s", found(p, b, sizeof b));
    }
    if (end_line(p) < 0) return -1;
    /* def forward */
    while (!at_end(p)) {
        line_indent(p, &blank);
        if (!blank) break;
        skip_line(p);
    }
    if (at_end(p)) return perr(p, "expected 'def forward(self, ...):' before end of file");
    int k = line_indent(p, &blank);
    if (k != ind + 4) return perr(p, "expected 'def forward' indented by %d spaces", ind + 4);
    for (int i = 0; i < k; i++) advance(p);
    if (!accept(p, "def forward")) {
        char b[64];
        return perr(p, "expected 'def forward(self, ...):', found %s", found(p, b, sizeof b));
    }
    if (parse_forward_def(p) < 0) return -1;
    /* body */
    int body = ind + 8;
    bool returned = false;
    p->comment = NULL;
    p->new_group = false;
    while (!at_end(p)) {
        k = line_indent(p, &blank);
        if (blank) { skip_line(p); continue; }
        if (k < body) break;
        for (int i = 0; i < k; i++) advance(p);
        if (k > body) return perr(p, "unexpected indentation (expected %d spaces)", body);
        if (returned) return perr(p, "statement after 'return'");
        if (peek(p) == '#') {
            advance(p);
            skip_spaces(p);
            const char *c = rest_of_line(p);
            p->repeated_comment = p->comment && strcmp(p->comment, c) == 0;
            p->comment = c;
            p->new_group = true;
            advance(p);
            continue;
        }
        if (starts(p, "return") && !is_id_char(peek_at(p, 6))) {
            accept(p, "return");
            if (parse_return(p, g->expanded_def) < 0) return -1;
            returned = true;
            p->last_end = p->pos;
            continue;
        }
        if (parse_assignment(p) < 0) return -1;
    }
    if (!returned) return perr(p, "missing 'return' at the end of forward in class %s", g->class_name);
    /* nested classes */
    while (!at_end(p)) {
        k = line_indent(p, &blank);
        if (blank) { skip_line(p); continue; }
        if (k != ind + 4) break;
        size_t save = p->pos;
        for (int i = 0; i < k; i++) advance(p);
        if (!starts(p, "class ")) { p->pos = save; break; }
        p->pos = save;
        /* the name is read again by the nested call */
        size_t q = save + k + 6;
        size_t e = q;
        while (e < p->len && is_id_char((unsigned char)p->src[e])) e++;
        char *sname = arena_strndup(&g->arena, p->src + q, e - q);
        if (graph_subgraph(g, sname)) return perr(p, "duplicate subgraph class '%s'", sname);
        Graph *sub = graph_add_subgraph(g, sname);
        Graph *outer = p->g;
        NameMap outer_names = p->names;
        memset(&p->names, 0, sizeof p->names);
        p->g = sub;
        int rc = parse_class(p, ind + 4, sub);
        nm_free(&p->names);
        p->names = outer_names;
        p->g = outer;
        p->depth--;
        if (rc < 0) return -1;
    }
    return 0;
}

static void set_source(Graph *g, const char *s) {
    g->source = s ? arena_strdup(&g->arena, s) : NULL;
    for (int i = 0; i < g->nsubs; i++) set_source(g->subs[i].g, s);
}

static Graph *parse_top(Parser *p, Graph *g);

Graph *fx_parse(MiCtx *ctx, const char *text, size_t len, const char *source, int first_line) {
    Parser p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.src = text ? text : "";
    p.len = text ? len : 0;
    p.line = 1;
    p.source = source ? source : "<input>";
    p.first_line = first_line > 0 ? first_line : 1;
    Graph *g = graph_new("GraphModule");
    p.g = g;
    /* leading blank lines */
    bool blank;
    while (!at_end(&p)) {
        line_indent(&p, &blank);
        if (!blank) break;
        skip_line(&p);
    }
    if (at_end(&p)) {
        perr(&p, "empty input: expected 'class <name>(torch.nn.Module):'");
        graph_free(g);
        return NULL;
    }
    g = parse_top(&p, g);
    nm_free(&p.names);
    if (!g) return NULL;
    set_source(g, source);
    ops_resolve_graph(g);
    return g;
}

/* The top-level class and what may follow it. Frees g and returns NULL on errors. */
/* The files next to fx_graph_readable.py in a TORCH_COMPILE_DEBUG folder are not graphs we
 * read: say what the file is and what to load instead. */
static bool src_contains(const Parser *p, const char *lit) {
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= p->len; i++)
        if (p->src[i] == lit[0] && !memcmp(p->src + i, lit, n)) return true;
    return false;
}

static void hint_other_file(Parser *p) {
    MiError *e = &p->ctx->err;
    if (strncmp(e->msg, "expected 'class", 15)) return;
    const char *hint = NULL;
    if (src_contains(p, "class Repro(torch.nn.Module):"))
        hint = "this is an fx_graph_runnable.py repro script: load fx_graph_readable.py from the same folder, "
               "or the TORCH_TRACE log";
    else if (src_contains(p, "async_compile") || src_contains(p, "# AOT ID:"))
        hint = "this is Inductor's generated output_code.py, not an FX graph: load fx_graph_readable.py from "
               "the same folder, or the TORCH_TRACE log";
    if (hint) {
        size_t n = strlen(e->msg);
        snprintf(e->msg + n, sizeof e->msg - n, " (%s)", hint);
    }
}

static Graph *parse_top(Parser *p, Graph *g) {
    bool blank;
    for (size_t i = 0; i < p->len; i++)
        if (p->src[i] == 0) {
            perr_at(p, i, "unexpected NUL byte (binary data?)");
            graph_free(g);
            return NULL;
        }
    int ind = line_indent(p, &blank);
    if (ind != 0 || parse_class(p, 0, g) < 0) {
        if (!p->failed) perr(p, "expected 'class <name>(torch.nn.Module):' at the start of a line");
        hint_other_file(p);
        graph_free(g);
        return NULL;
    }
    /* trailer: only blank lines and comments may follow */
    size_t rest = p->last_end;
    bool only_ws = true;
    while (!at_end(p)) {
        line_indent(p, &blank);
        if (!blank) {
            while (peek(p) == ' ') advance(p);
            if (peek(p) != '#') {
                char b[64];
                perr(p, "unexpected text after the graph: %s", found(p, b, sizeof b));
                graph_free(g);
                return NULL;
            }
            only_ws = false;
        }
        skip_line(p);
    }
    if (!only_ws) g->trailer = arena_strndup(&g->arena, p->src + rest, p->len - rest);
    return g;
}

Graph *fx_load_file(MiCtx *ctx, const char *path) {
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    if (!text) return NULL;
    Graph *g = fx_parse(ctx, text, len, path, 1);
    free(text);
    return g;
}
