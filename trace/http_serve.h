/* http_serve.h — a small HTTP server for looking at reports in a browser, on this machine only.
 *
 * It binds 127.0.0.1 (never another address) on the first free port of a bounded range, serves
 * GET/HEAD from one thread, and stops when its owner calls http_serve_stop (the `tlparse
 * --serve` CLI on Ctrl-C; the shell when the session ends). Files come from a root directory
 * (paths with "..", NUL or a symlink out of the root are refused), or from a handler the owner
 * gives (a live page). Limits: the request head is capped (413 beyond), one connection at a
 * time with a read timeout, no keep-alive. A Host header other than 127.0.0.1:PORT or
 * localhost:PORT is refused (403), so a web page elsewhere cannot read the files through DNS
 * rebinding.
 *
 *     HttpServeOptions o = {.root = "tl_out", .port_lo = 8000, .port_hi = 8099};
 *     HttpServer *s = http_serve_start(ctx, &o);     // NULL + ctx->err: no free port, ...
 *     printf("http://127.0.0.1:%d/\n", http_serve_port(s));
 *     ... http_serve_stop(s);
 */
#ifndef HTTP_SERVE_H
#define HTTP_SERVE_H

#include "base/mi.h"

typedef struct HttpServer HttpServer;

/* A dynamic page: for `path` (decoded, starts with '/', no query), set *body (malloc'd, owned
 * by the server afterwards), *len and *ctype and return the status (200, 404, ...); return 0 to
 * fall back to the root directory. Runs on the server's thread. */
typedef int (*HttpHandler)(void *ud, const char *path, char **body, size_t *len, const char **ctype);

typedef struct HttpServeOptions {
    const char *root;          /* directory served (NULL: the handler only) */
    int port_lo, port_hi;      /* ports tried in order; 0/0 = 8000..8099; at most 1000 ports */
    size_t max_request;        /* cap on the request head in bytes; 0 = 8192 */
    int timeout_ms;            /* per-connection read timeout; 0 = 5000 */
    HttpHandler handler;
    void *ud;
} HttpServeOptions;

HttpServer *http_serve_start(MiCtx *ctx, const HttpServeOptions *opt);
int http_serve_port(const HttpServer *s);
/* Requests answered so far (any status). */
long http_serve_requests(const HttpServer *s);
/* The whole answer (status line, headers, body) to one request head `req` of n bytes as read
 * from a client (complete: the blank line ending the head was seen; n is at most max_request).
 * The socket loop sends it; tests and the fuzz target (tests/fuzz/fuzz_serve.c) call it
 * directly. Counts as a request. malloc'd, length in *len. */
char *http_serve_answer(HttpServer *s, const char *req, size_t n, bool complete, size_t *len);
/* A server that answers only through http_serve_answer: no socket, no thread; it takes
 * opt->port_lo as its port (for the Host check). Free it with http_serve_stop. */
HttpServer *http_serve_detached(MiCtx *ctx, const HttpServeOptions *opt);
/* Stop accepting, finish the connection in progress, join the thread, free. NULL is fine. */
void http_serve_stop(HttpServer *s);

#endif
