/* highlight.c — Python source as highlighted HTML, for inductor_output_code pages (tlparse
 * renders them with syntect's Python syntax and the InspiredGitHub theme). A small lexer:
 * comments, strings (single, triple-quoted, with r/b/f prefixes, spanning lines), numbers,
 * keywords, builtins, and the name after def/class. Every source line becomes
 * <span class="ln" id="L<n>">...</span>, so a line can be linked (#L12) and highlighted by the
 * provenance view; a token that spans lines is closed and reopened at each line break. */
#include "tlparse_internal.h"

#include <ctype.h>
#include <string.h>

static const char *const keywords[] = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
    "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
};
static const char *const builtins[] = {
    "print", "len", "range", "int", "float", "str", "list", "dict", "tuple", "set", "isinstance",
    "super", "object", "zip", "globals", "bool", "min", "max", "sum", "enumerate", "type",
};

static bool in_list(const char *s, size_t n, const char *const *l, size_t nl) {
    for (size_t i = 0; i < nl; i++)
        if (strlen(l[i]) == n && !memcmp(l[i], s, n)) return true;
    return false;
}

typedef struct Hl {
    StrBuf *b;
    int line;
    const char *cls;        /* class of the open span inside the line, or NULL */
} Hl;

static void open_line(Hl *h) {
    sb_printf(h->b, "<span class=\"ln\" id=\"L%d\">", h->line);
    if (h->cls) sb_printf(h->b, "<span class=\"%s\">", h->cls);
}

static void close_line(Hl *h) {
    if (h->cls) sb_put(h->b, "</span>");
    sb_put(h->b, "</span>");       /* block spans: a newline between them would double the lines */
}

/* Emit text of class cls (NULL: plain), breaking spans at newlines. */
static void put(Hl *h, const char *cls, const char *s, size_t n) {
    if (cls) sb_printf(h->b, "<span class=\"%s\">", cls);
    h->cls = cls;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
        html_escn(h->b, s + i, len);
        i += len;
        if (nl) {
            close_line(h);
            h->line++;
            open_line(h);
            i++;
        }
    }
    if (cls) sb_put(h->b, "</span>");
    h->cls = NULL;
}

void hl_python_html(StrBuf *b, const char *src, size_t n) {
    Hl h = {b, 1, NULL};
    sb_put(b, "<pre class=\"code\">");
    open_line(&h);
    bool after_def = false;
    size_t i = 0;
    while (i < n) {
        char c = src[i];
        size_t j = i;
        if (c == '#') {                                   /* comment to the end of the line */
            while (j < n && src[j] != '\n') j++;
            put(&h, "c", src + i, j - i);
        } else if (c == '"' || c == '\'' ||
                   ((c == 'r' || c == 'b' || c == 'f' || c == 'R' || c == 'B' || c == 'F') && i + 1 < n &&
                    (src[i + 1] == '"' || src[i + 1] == '\'') && (i == 0 || !isalnum((unsigned char)src[i - 1])))) {
            bool raw = c == 'r' || c == 'R';
            if (c != '"' && c != '\'') j++;
            char q = src[j];
            bool triple = j + 2 < n && src[j + 1] == q && src[j + 2] == q;
            j += triple ? 3 : 1;
            while (j < n) {
                if (src[j] == '\\' && !raw && j + 1 < n) { j += 2; continue; }
                if (!triple && src[j] == '\n') break;
                if (src[j] == q && (!triple || (j + 2 < n && src[j + 1] == q && src[j + 2] == q))) {
                    j += triple ? 3 : 1;
                    break;
                }
                j++;
            }
            put(&h, "s", src + i, j - i);
        } else if (isdigit((unsigned char)c) || (c == '.' && i + 1 < n && isdigit((unsigned char)src[i + 1]))) {
            while (j < n && (isalnum((unsigned char)src[j]) || src[j] == '.' || src[j] == '_')) j++;
            put(&h, "n", src + i, j - i);
        } else if (isalpha((unsigned char)c) || c == '_') {
            while (j < n && (isalnum((unsigned char)src[j]) || src[j] == '_')) j++;
            size_t len = j - i;
            const char *cls = NULL;
            if (after_def) cls = "f";
            else if (in_list(src + i, len, keywords, sizeof keywords / sizeof *keywords)) cls = "k";
            else if (in_list(src + i, len, builtins, sizeof builtins / sizeof *builtins)) cls = "bi";
            after_def = (len == 3 && !memcmp(src + i, "def", 3)) || (len == 5 && !memcmp(src + i, "class", 5));
            put(&h, cls, src + i, len);
        } else {
            j = i + 1;
            put(&h, NULL, src + i, 1);
        }
        i = j;
    }
    close_line(&h);
    sb_put(b, "</pre>\n");
}

static const char CODE_CSS[] =
    "body{font-family:sans-serif;margin:1em}pre.code{font-size:12px;line-height:1.35;background:#fff}"
    "pre.code .ln{display:block}pre.code .ln:before{content:attr(id);color:#aaa;display:inline-block;"
    "width:4.5em;text-align:right;margin-right:1em;user-select:none}"
    "pre.code .ln:target,pre.code .ln.hl{background:#fff3a0}"
    ".k{color:#a71d5d;font-weight:bold}.s{color:#183691}.c{color:#969896;font-style:italic}"
    ".n{color:#0086b3}.f{color:#795da3;font-weight:bold}.bi{color:#0086b3}";

void hl_python_page(StrBuf *b, const char *title, const char *src, size_t n) {
    sb_put(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    html_esc(b, title);
    sb_printf(b, "</title><style>%s</style></head><body>\n", CODE_CSS);
    hl_python_html(b, src, n);
    sb_put(b, "</body></html>\n");
}
