/* pattern_file.c — the user pattern file: a small text format (core/fx_passes/patterns.md) parsed into
 * Patterns so a user can add a rewrite without recompiling. Example:
 *
 *     pattern mul_by_one device=any
 *       doc: x * 1 -> x
 *       match:
 *         m = aten.mul.Tensor(x, 1)
 *       replace:
 *         return x
 *     end
 *     retarget aten.view.default -> aten.reshape.default
 *
 * Errors name the file, line and column. */
#include "fx_passes/pattern.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    MiCtx *ctx;
    const char *src;
    int line;
    const char *p, *line_start;
    Pattern *pat;
    bool in_repl;
} PF;

static int perr(PF *f, const char *msg, const char *detail) {
    return mi_err(f->ctx, f->src, f->line, (int)(f->p - f->line_start) + 1, "%s%s%s", msg,
                  detail ? ": " : "", detail ? detail : "");
}

static void skipws(PF *f) { while (*f->p == ' ' || *f->p == '\t') f->p++; }

static int ident(PF *f, char *buf, size_t n) {
    skipws(f);
    size_t k = 0;
    while ((isalnum((unsigned char)*f->p) || *f->p == '_' || *f->p == '.') && k + 1 < n) buf[k++] = *f->p++;
    buf[k] = 0;
    return (int)k;
}

static int find_stmt(PatStmt *s, int n, const char *name) {
    for (int i = 0; i < n; i++) if (!strcmp(s[i].name, name)) return i;
    return -1;
}

static int wild_index(Pattern *p, const char *name, bool create) {
    for (int i = 0; i < p->nwild; i++) if (!strcmp(p->wild[i], name)) return i;
    if (!create) return -1;
    p->wild = mi_xrealloc(p->wild, (p->nwild + 1) * sizeof *p->wild);
    p->wild[p->nwild] = mi_xstrdup(name);
    return p->nwild++;
}

static int parse_arg(PF *f, PatArg *out) {
    memset(out, 0, sizeof *out);
    skipws(f);
    char c = *f->p;
    if (c == '[' || c == '(') {
        char close = c == '[' ? ']' : ')';
        f->p++;
        out->kind = PA_LIST;
        for (;;) {
            skipws(f);
            if (*f->p == close) { f->p++; return 0; }
            out->items = mi_xrealloc(out->items, (out->n + 1) * sizeof *out->items);
            /* a failed item is counted too: its partial lists are freed with this one */
            if (parse_arg(f, &out->items[out->n++]) < 0) return -1;
            skipws(f);
            if (*f->p == ',') f->p++;
            else if (*f->p != close) return perr(f, "expected ',' or closing bracket", NULL);
        }
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        char *end;
        const char *s = f->p;
        long long iv = strtoll(s, &end, 10);
        if (*end == '.' || *end == 'e' || *end == 'E') {
            double d = strtod(s, &end);
            out->kind = PA_CONST;
            out->c = value_float(d);
        } else {
            out->kind = PA_CONST;
            out->c = value_int(iv);
        }
        if (end == s) return perr(f, "bad number", NULL);
        f->p = end;
        return 0;
    }
    if (c == '"' || c == '\'') {
        const char *s = ++f->p;
        while (*f->p && *f->p != c && *f->p != '\n') f->p++;
        if (*f->p != c) return perr(f, "unterminated string", NULL);
        out->kind = PA_CONST;
        out->c.kind = V_STR;
        char *str = mi_xmalloc(f->p - s + 1);
        memcpy(str, s, f->p - s);
        str[f->p - s] = 0;
        out->c.s = str;
        f->p++;
        return 0;
    }
    char name[128];
    if (!ident(f, name, sizeof name)) return perr(f, "expected an argument", NULL);
    if (!strcmp(name, "_")) { out->kind = PA_ANY; return 0; }
    if (!strcmp(name, "True") || !strcmp(name, "False")) { out->kind = PA_CONST; out->c = value_bool(name[0] == 'T'); return 0; }
    if (!strcmp(name, "None")) { out->kind = PA_CONST; out->c = value_none(); return 0; }
    Pattern *p = f->pat;
    if (f->in_repl) {
        int r = find_stmt(p->repl, p->nrepl, name);
        if (r >= 0) { out->kind = PA_REF; out->ref = r; return 0; }
        int w = wild_index(p, name, false);
        if (w < 0) return perr(f, "replacement uses a name the match does not bind", name);
        out->kind = PA_WILD;
        out->ref = w;
        return 0;
    }
    int r = find_stmt(p->match, p->nmatch, name);
    if (r >= 0) { out->kind = PA_REF; out->ref = r; return 0; }
    out->kind = PA_WILD;
    out->ref = wild_index(p, name, true);
    return 0;
}

static int parse_stmt(PF *f) {
    char name[128], target[256];
    if (!ident(f, name, sizeof name)) return perr(f, "expected 'name = target(args)'", NULL);
    Pattern *p = f->pat;
    if (!strcmp(name, "return")) {
        if (!f->in_repl) return perr(f, "'return' belongs in replace:", NULL);
        char r[128];
        if (!ident(f, r, sizeof r)) return perr(f, "expected a name after return", NULL);
        int k = find_stmt(p->repl, p->nrepl, r);
        if (k >= 0) { p->ret.kind = PA_REF; p->ret.ref = k; return 0; }
        k = wild_index(p, r, false);
        if (k < 0) return perr(f, "return of an unknown name", r);
        p->ret.kind = PA_WILD;
        p->ret.ref = k;
        return 0;
    }
    skipws(f);
    if (*f->p != '=') return perr(f, "expected '='", NULL);
    f->p++;
    if (!ident(f, target, sizeof target) || !strchr(target, '.')) return perr(f, "expected an op like aten.mul.Tensor", NULL);
    if (!strncmp(target, "torch.ops.", 10)) memmove(target, target + 10, strlen(target + 10) + 1);
    skipws(f);
    if (*f->p != '(') return perr(f, "expected '('", NULL);
    f->p++;
    PatStmt st = {0};
    st.name = mi_xstrdup(name);
    st.target = mi_xstrdup(target);
    for (;;) {
        skipws(f);
        if (*f->p == ')') { f->p++; break; }
        st.args = mi_xrealloc(st.args, (st.nargs + 1) * sizeof *st.args);
        if (parse_arg(f, &st.args[st.nargs]) < 0) { st.nargs++; goto bad; }
        st.nargs++;
        skipws(f);
        if (*f->p == ',') f->p++;
        else if (*f->p != ')') { perr(f, "expected ',' or ')'", NULL); goto bad; }
    }
    if (f->in_repl) {
        p->repl = mi_xrealloc(p->repl, (p->nrepl + 1) * sizeof *p->repl);
        p->repl[p->nrepl++] = st;
    } else {
        p->match = mi_xrealloc(p->match, (p->nmatch + 1) * sizeof *p->match);
        p->match[p->nmatch++] = st;
    }
    return 0;
bad:
    free(st.name); free(st.target);
    patargs_free(st.args, st.nargs);   /* the failed argument is counted: its lists go too */
    return -1;
}

static PatDevice parse_device(PF *f, bool *ok) {
    *ok = true;
    skipws(f);
    if (strncmp(f->p, "device=", 7) != 0) return PDEV_ANY;
    f->p += 7;
    char d[32];
    ident(f, d, sizeof d);
    if (!strcmp(d, "cuda")) return PDEV_CUDA;
    if (!strcmp(d, "cpu")) return PDEV_CPU;
    if (!strcmp(d, "any")) return PDEV_ANY;
    *ok = false;
    perr(f, "device must be cpu, cuda or any", d);
    return PDEV_ANY;
}

static Pattern *new_pattern(PatternSet *ps) {
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? 2 * ps->cap : 8;
        ps->pats = mi_xrealloc(ps->pats, ps->cap * sizeof *ps->pats);
    }
    Pattern *p = &ps->pats[ps->n++];
    memset(p, 0, sizeof *p);
    return p;
}

int pattern_parse(MiCtx *ctx, PatternSet *ps, const char *text, const char *source) {
    PF f = {ctx, source ? source : "<patterns>", 0, text, text, NULL, false};
    int section = 0;   /* 0 outside, 1 header, 2 match, 3 replace */
    int first_new = ps->n;
    const char *next;
    for (const char *line = text; *line; line = next) {
        f.line++;
        const char *eol = strchr(line, '\n');
        next = eol ? eol + 1 : line + strlen(line);
        f.p = f.line_start = line;
        skipws(&f);
        if (*f.p == '#' || *f.p == '\n' || *f.p == '\r' || *f.p == 0) continue;
        char kw[64];
        const char *save = f.p;
        ident(&f, kw, sizeof kw);
        bool devok;
        if (section == 0) {
            if (!strcmp(kw, "retarget")) {
                char from[256], to[256];
                if (!ident(&f, from, sizeof from)) { perr(&f, "expected an op", NULL); goto fail; }
                skipws(&f);
                if (strncmp(f.p, "->", 2) != 0) { perr(&f, "expected '->'", NULL); goto fail; }
                f.p += 2;
                if (!ident(&f, to, sizeof to)) { perr(&f, "expected an op", NULL); goto fail; }
                PatDevice d = parse_device(&f, &devok);
                if (!devok) goto fail;
                Pattern *p = new_pattern(ps);
                p->is_retarget = true;
                p->from = mi_xstrdup(from);
                p->to = mi_xstrdup(to);
                p->device = d;
                char nm[600];
                snprintf(nm, sizeof nm, "retarget_%s", from);
                p->name = mi_xstrdup(nm);
                continue;
            }
            if (strcmp(kw, "pattern") != 0) { f.p = save; perr(&f, "expected 'pattern NAME' or 'retarget A -> B'", kw); goto fail; }
            char name[128];
            if (!ident(&f, name, sizeof name)) { perr(&f, "pattern needs a name", NULL); goto fail; }
            PatDevice d = parse_device(&f, &devok);
            if (!devok) goto fail;
            f.pat = new_pattern(ps);
            f.pat->name = mi_xstrdup(name);
            f.pat->device = d;
            f.pat->ret.kind = PA_ANY;
            f.in_repl = false;
            section = 1;
            continue;
        }
        if (!strcmp(kw, "doc") && *f.p == ':') {
            f.p++;
            skipws(&f);
            const char *e = f.p;
            while (*e && *e != '\n' && *e != '\r') e++;
            free(f.pat->doc);
            f.pat->doc = mi_xmalloc(e - f.p + 1);
            memcpy(f.pat->doc, f.p, e - f.p);
            f.pat->doc[e - f.p] = 0;
            continue;
        }
        if (!strcmp(kw, "match") && *f.p == ':') { section = 2; f.in_repl = false; continue; }
        if (!strcmp(kw, "replace") && *f.p == ':') {
            if (!f.pat->nmatch) { perr(&f, "replace: before any match statement", NULL); goto fail; }
            section = 3; f.in_repl = true; continue;
        }
        if (!strcmp(kw, "end")) {
            if (!f.pat->nmatch) { perr(&f, "pattern has no match statements", f.pat->name); goto fail; }
            if (f.pat->ret.kind == PA_ANY) { perr(&f, "pattern has no 'return' in replace:", f.pat->name); goto fail; }
            section = 0;
            continue;
        }
        if (section < 2) { f.p = save; perr(&f, "expected doc:, match: or replace:", kw); goto fail; }
        f.p = save;
        if (parse_stmt(&f) < 0) goto fail;
    }
    if (section != 0) { perr(&f, "missing 'end' of pattern", f.pat ? f.pat->name : NULL); goto fail; }
    return 0;
fail:;
    /* drop the patterns added by this call */
    PatternSet tail = {ps->pats ? ps->pats + first_new : NULL, ps->n - first_new, 0};   /* none yet: NULL + 0 is UB */
    PatternSet tmp;
    patternset_init(&tmp);
    tmp.pats = mi_xmalloc((tail.n + 1) * sizeof *tmp.pats);
    if (tail.n) memcpy(tmp.pats, tail.pats, tail.n * sizeof *tmp.pats);
    tmp.n = tail.n;
    patternset_free(&tmp);
    ps->n = first_new;
    return -1;
}

int pattern_load_file(MiCtx *ctx, PatternSet *ps, const char *path) {
    size_t len;
    char *text = mi_read_file(ctx, path, &len);
    if (!text) return -1;
    int rc = pattern_parse(ctx, ps, text, path);
    free(text);
    return rc;
}
