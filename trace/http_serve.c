/* http_serve.c — the loopback HTTP server of http_serve.h: one thread (all signals blocked)
 * polls the listening socket and a wake-up pipe; each connection is read (head capped, timed
 * out), answered and closed before the next. Answering is a function of the request bytes alone
 * (http_serve_answer), so tests and the fuzz target enter it without a socket. Used by
 * `minductor tlparse --serve` and the shell's live view (`serve`, repl/serve.c). */
#define _GNU_SOURCE
#include "http_serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct HttpServer {
    int fd, port;
    int wake[2];
    pthread_t th;
    char root[PATH_MAX];       /* realpath of the root, "" when none */
    HttpServeOptions opt;
    long requests;
    bool running;              /* the thread runs (not a detached server) */
    pthread_mutex_t mu;
};

static const char *ctype_of(const char *path) {
    static const char *const map[][2] = {
        {".html", "text/html; charset=utf-8"}, {".json", "application/json"}, {".svg", "image/svg+xml"},
        {".png", "image/png"}, {".css", "text/css"}, {".js", "text/javascript"}, {".jsonl", "text/plain; charset=utf-8"},
        {".txt", "text/plain; charset=utf-8"}, {".log", "text/plain; charset=utf-8"}, {".py", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof map / sizeof *map; i++)
        if (!strcmp(dot, map[i][0])) return map[i][1];
    return "application/octet-stream";
}

static void send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

/* Status line, headers and (unless HEAD) the body into out. */
static void reply(StrBuf *out, int status, const char *ctype, const char *body, size_t len, bool head) {
    const char *text = status == 200 ? "OK" : status == 400 ? "Bad Request" : status == 403 ? "Forbidden"
                     : status == 404 ? "Not Found" : status == 405 ? "Method Not Allowed"
                     : status == 413 ? "Request Header Fields Too Large" : "Error";
    sb_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
              status, text, ctype, len);
    if (!head && len) sb_putn(out, body, len);
}

static void reply_text(StrBuf *out, int status, const char *msg) {
    reply(out, status, "text/plain; charset=utf-8", msg, strlen(msg), false);
}

/* "%2F" -> '/', stops at '?' or '#'. False on a bad escape or a NUL. */
static bool url_decode(const char *s, size_t n, char *out, size_t on) {
    size_t j = 0;
    for (size_t i = 0; i < n && s[i] != '?' && s[i] != '#'; i++) {
        if (j + 1 >= on) return false;
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return false;
            char hx[3] = {s[i + 1], s[i + 2], 0};
            char *end;
            long v = strtol(hx, &end, 16);
            if (*end || v <= 0) return false;
            c = (char)v;
            i += 2;
        }
        out[j++] = c;
    }
    out[j] = 0;
    return true;
}

/* A path under the root, or false: no "..", no backslash; the real path stays in the root. */
static bool resolve(const HttpServer *s, const char *path, char *out, size_t n) {
    if (!s->root[0] || strstr(path, "..") || strchr(path, '\\')) return false;
    char full[PATH_MAX * 2];
    snprintf(full, sizeof full, "%s%s", s->root, path);
    struct stat st;
    if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) strncat(full, path[strlen(path) - 1] == '/' ? "index.html" : "/index.html", sizeof full - strlen(full) - 1);
    char real[PATH_MAX];
    if (!realpath(full, real)) return false;
    size_t rl = strlen(s->root);
    if (strncmp(real, s->root, rl) || (real[rl] != '/' && real[rl] != 0)) return false;
    snprintf(out, n, "%s", real);
    return true;
}

static bool host_ok(const HttpServer *s, const char *head) {
    const char *h = strcasestr(head, "\r\nHost:");
    if (!h) return true;                    /* HTTP/1.0 clients send none */
    h += 7;
    while (*h == ' ') h++;
    size_t len = strcspn(h, "\r\n");
    char a[64], b[64];
    snprintf(a, sizeof a, "127.0.0.1:%d", s->port);
    snprintf(b, sizeof b, "localhost:%d", s->port);
    return (len == strlen(a) && !strncasecmp(h, a, len)) || (len == strlen(b) && !strncasecmp(h, b, len));
}

/* The answer to one request head, into out (see http_serve.h). */
static void answer(HttpServer *s, const char *req, size_t n, bool complete, StrBuf *out) {
    char *buf = mi_xmalloc(n + 1);      /* a private NUL-terminated copy: req may hold NULs */
    memcpy(buf, req, n);
    buf[n] = 0;
    pthread_mutex_lock(&s->mu);
    s->requests++;
    pthread_mutex_unlock(&s->mu);
    if (strlen(buf) != n) { reply_text(out, 400, "NUL byte in the request\n"); free(buf); return; }
    if (!complete || !(strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))) {
        if (n >= s->opt.max_request) reply_text(out, 413, "request head too large\n");
        else reply_text(out, 400, n ? "incomplete request\n" : "empty request\n");
        free(buf);
        return;
    }
    bool head = !strncmp(buf, "HEAD ", 5);
    if (strncmp(buf, "GET ", 4) && !head) { reply_text(out, 405, "only GET and HEAD\n"); free(buf); return; }
    const char *p = buf + (head ? 5 : 4);
    size_t plen = strcspn(p, " \r\n");
    char path[2048];
    if (!plen || p[0] != '/' || !url_decode(p, plen, path, sizeof path)) {
        reply_text(out, 400, "bad path\n");
        free(buf);
        return;
    }
    if (!host_ok(s, buf)) { reply_text(out, 403, "wrong Host\n"); free(buf); return; }
    free(buf);
    if (s->opt.handler) {
        char *body = NULL;
        size_t len = 0;
        const char *ct = "text/html; charset=utf-8";
        int st = s->opt.handler(s->opt.ud, path, &body, &len, &ct);
        if (st) {
            reply(out, st, ct, body ? body : "", body ? len : 0, head);
            free(body);
            return;
        }
        free(body);
    }
    char file[PATH_MAX];
    if (!resolve(s, path, file, sizeof file)) { reply_text(out, 404, "not found\n"); return; }
    FILE *f = fopen(file, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        if (f) fclose(f);
        reply_text(out, 404, "not found\n");
        return;
    }
    char *body = mi_xmalloc((size_t)st.st_size + 1);
    size_t got = fread(body, 1, (size_t)st.st_size, f);
    fclose(f);
    reply(out, 200, ctype_of(file), body, got, head);
    free(body);
}

char *http_serve_answer(HttpServer *s, const char *req, size_t n, bool complete, size_t *len) {
    StrBuf out;
    sb_init(&out);
    sb_put(&out, "");
    answer(s, req, n, complete, &out);
    *len = out.len;
    return sb_take(&out);
}

/* Read one request head from connection c (capped, timed out) and send the answer. */
static void serve_one(HttpServer *s, int c) {
    struct timeval tv = {s->opt.timeout_ms / 1000, (s->opt.timeout_ms % 1000) * 1000};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    size_t cap = s->opt.max_request;
    char *buf = mi_xmalloc(cap + 1);
    size_t n = 0;
    bool done = false;
    while (n < cap) {
        ssize_t r = recv(c, buf + n, cap - n, 0);
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = 0;
        if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n")) { done = true; break; }
    }
    if (!done && n == 0) { free(buf); return; }      /* the client went away without a word */
    size_t len;
    char *resp = http_serve_answer(s, buf, n, done, &len);
    send_all(c, resp, len);
    free(resp);
    free(buf);
}

static void *loop(void *arg) {
    HttpServer *s = arg;
    for (;;) {
        struct pollfd p[2] = {{s->fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || (p[1].revents & POLLIN)) break;
        if (!(p[0].revents & POLLIN)) continue;
        int c = accept(s->fd, NULL, NULL);
        if (c < 0) continue;
        serve_one(s, c);
        /* a lingering close: unread input (an oversized request) would make the kernel reset
         * the connection and the client could lose the reply */
        shutdown(c, SHUT_WR);
        struct timeval tv = {0, 200000};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char junk[4096];
        for (int k = 0; k < 256 && recv(c, junk, sizeof junk, 0) > 0; k++) {}
        close(c);
    }
    return NULL;
}

/* Options checked and defaulted, the root resolved: a server with no socket yet (fd -1). */
static HttpServer *server_new(MiCtx *ctx, const HttpServeOptions *opt) {
    HttpServeOptions o = *opt;
    if (!o.port_lo && !o.port_hi) { o.port_lo = 8000; o.port_hi = 8099; }
    if (o.port_lo < 1 || o.port_hi > 65535 || o.port_lo > o.port_hi || o.port_hi - o.port_lo >= 1000) {
        mi_err(ctx, NULL, 0, 0, "port range %d-%d: give 1..65535, low <= high, at most 1000 ports", o.port_lo, o.port_hi);
        return NULL;
    }
    if (!o.max_request) o.max_request = 8192;
    if (!o.timeout_ms) o.timeout_ms = 5000;
    HttpServer *s = mi_xcalloc(1, sizeof *s);
    s->opt = o;
    s->fd = -1;
    s->wake[0] = s->wake[1] = -1;
    if (o.root && !realpath(o.root, s->root)) {
        mi_err(ctx, o.root, 0, 0, "cannot serve: %s", strerror(errno));
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

HttpServer *http_serve_detached(MiCtx *ctx, const HttpServeOptions *opt) {
    HttpServer *s = server_new(ctx, opt);
    if (s) s->port = s->opt.port_lo;
    return s;
}

HttpServer *http_serve_start(MiCtx *ctx, const HttpServeOptions *opt) {
    HttpServer *s = server_new(ctx, opt);
    if (!s) return NULL;
    HttpServeOptions o = s->opt;
    int err = 0;
    for (int port = o.port_lo; port <= o.port_hi && s->fd < 0; port++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) { err = errno; break; }
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);          /* 127.0.0.1 only */
        if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 16) == 0) { s->fd = fd; s->port = port; }
        else { err = errno; close(fd); }
    }
    if (s->fd < 0) {
        mi_err(ctx, NULL, 0, 0, "no free port in %d-%d on 127.0.0.1 (%s)", o.port_lo, o.port_hi, strerror(err));
        http_serve_stop(s);
        return NULL;
    }
    if (pipe2(s->wake, O_CLOEXEC) != 0) {
        mi_err(ctx, NULL, 0, 0, "pipe: %s", strerror(errno));
        s->wake[0] = s->wake[1] = -1;
        http_serve_stop(s);
        return NULL;
    }
    /* the thread blocks every signal: Ctrl-C and the like go to the owner's thread (the shell
     * interrupts its command, `tlparse --serve` stops), never to a thread that cannot act */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->th, NULL, loop, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        mi_err(ctx, NULL, 0, 0, "cannot start the server thread");
        http_serve_stop(s);
        return NULL;
    }
    s->running = true;
    return s;
}

int http_serve_port(const HttpServer *s) { return s ? s->port : 0; }

long http_serve_requests(const HttpServer *s) {
    if (!s) return 0;
    pthread_mutex_lock((pthread_mutex_t *)&s->mu);
    long n = s->requests;
    pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
    return n;
}

void http_serve_stop(HttpServer *s) {
    if (!s) return;
    if (s->running) {
        ssize_t w = write(s->wake[1], "x", 1);
        (void)w;
        pthread_join(s->th, NULL);
    }
    if (s->fd >= 0) close(s->fd);
    if (s->wake[0] >= 0) close(s->wake[0]);
    if (s->wake[1] >= 0) close(s->wake[1]);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
