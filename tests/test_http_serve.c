/* test_http_serve.c — the loopback server (trace/http_serve.c): files from a root, 404 for
 * missing files and for every way out of the root ("..", %2e%2e, a symlink), 405 for POST,
 * 413 for an oversized head, 403 for a foreign Host, a handler's page, the port range (a busy
 * port is skipped; a range with no free port fails naming it), and the socket bound to
 * 127.0.0.1 only (read back from /proc/net/tcp). */
#include "tap.h"
#include "trace/http_serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Send raw request text to 127.0.0.1:port; the whole response (malloc'd). */
static char *request(int port, const char *text, size_t n) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { close(fd); return strdup("(connect failed)"); }
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    ssize_t r;
    while ((r = recv(fd, buf + len, cap - len, 0)) > 0) len += (size_t)r;
    buf[len] = 0;
    close(fd);
    return buf;
}

static char *get(int port, const char *path) {
    char req[600];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
    return request(port, req, (size_t)n);
}

static int status_of(const char *resp) { return !strncmp(resp, "HTTP/1.1 ", 9) ? atoi(resp + 9) : -1; }

static int page(void *ud, const char *path, char **body, size_t *len, const char **ctype) {
    (void)ud;
    if (strcmp(path, "/live")) return 0;
    *body = strdup("live page");
    *len = 9;
    *ctype = "text/plain";
    return 200;
}

/* Is port listened on at 127.0.0.1 (and nowhere else) per /proc/net/tcp? */
static int listen_addr(int port, unsigned *addr) {
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f) return -1;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned a, p, st;
        if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X", &a, &p, &st) == 3 && (int)p == port && st == 0x0A) {
            *addr = a;
            found++;
        }
    }
    fclose(f);
    return found;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char dir[] = "/tmp/mi_http_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    char p[1400], root[700];
    snprintf(root, sizeof root, "%s/root", dir);
    mkdir(root, 0755);
    snprintf(p, sizeof p, "%s/index.html", root);
    FILE *f = fopen(p, "w"); fputs("<h1>report</h1>", f); fclose(f);
    snprintf(p, sizeof p, "%s/secret.txt", dir);
    f = fopen(p, "w"); fputs("outside", f); fclose(f);
    snprintf(p, sizeof p, "%s/sub", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sub/a b.json", root);
    f = fopen(p, "w"); fputs("{\"x\": 1}", f); fclose(f);
    char link[1500];
    snprintf(link, sizeof link, "%s/escape.txt", root);
    snprintf(p, sizeof p, "%s/secret.txt", dir);
    ok(symlink(p, link) == 0, "symlink out of the root");

    HttpServeOptions o = {.root = root, .port_lo = 18700, .port_hi = 18799, .handler = page};
    HttpServer *s = http_serve_start(ctx, &o);
    ok(s != NULL, "server starts on a port of 18700-18799");
    int port = http_serve_port(s);
    ok(port >= 18700 && port <= 18799, "port %d in the range", port);
    unsigned addr = 0;
    is_int(listen_addr(port, &addr), 1, "one listening socket on the port");
    is_int(addr, 0x0100007F, "bound to 127.0.0.1 (not 0.0.0.0)");

    char *r = get(port, "/");
    ok(status_of(r) == 200 && strstr(r, "<h1>report</h1>") && strstr(r, "Content-Type: text/html"), "GET / serves index.html");
    free(r);
    r = get(port, "/sub/a%20b.json");
    ok(status_of(r) == 200 && strstr(r, "{\"x\": 1}") && strstr(r, "application/json"), "%%20 decoded; json content type");
    free(r);
    r = get(port, "/missing.html");
    is_int(status_of(r), 404, "missing file: 404");
    free(r);
    const char *escapes[] = {"/../secret.txt", "/%2e%2e/secret.txt", "/sub/../../secret.txt", "/escape.txt"};
    for (int i = 0; i < 4; i++) {
        r = get(port, escapes[i]);
        ok(status_of(r) == 404 && !strstr(r, "outside"), "%s: refused, nothing outside the root is read", escapes[i]);
        free(r);
    }
    r = get(port, "/live");
    ok(status_of(r) == 200 && strstr(r, "\r\n\r\nlive page"), "the handler's page");
    free(r);
    const char *post = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    r = request(port, post, strlen(post));
    is_int(status_of(r), 405, "POST: 405");
    free(r);
    char req[200];
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n", port);
    r = request(port, req, strlen(req));
    is_int(status_of(r), 403, "a foreign Host header: 403 (no DNS rebinding)");
    free(r);
    size_t big = 20000;
    char *huge = malloc(big + 1);
    memset(huge, 'a', big);
    memcpy(huge, "GET /", 5);
    huge[big] = 0;
    r = request(port, huge, big);
    is_int(status_of(r), 413, "a 20 kB request head: 413 (cap 8 kB)");
    free(r);
    free(huge);
    ok(http_serve_requests(s) >= 11, "requests counted (%ld)", http_serve_requests(s));

    /* the port is taken: a second server moves on to the next one */
    HttpServeOptions o2 = {.root = root, .port_lo = port, .port_hi = port + 5};
    HttpServer *s2 = http_serve_start(ctx, &o2);
    ok(s2 && http_serve_port(s2) > port, "a busy port is skipped (%d -> %d)", port, http_serve_port(s2));
    http_serve_stop(s2);
    HttpServeOptions o3 = {.root = root, .port_lo = port, .port_hi = port};
    mi_clear_err(ctx);
    ok(http_serve_start(ctx, &o3) == NULL && strstr(ctx->err.msg, "no free port"), "no free port: an error naming the range");
    HttpServeOptions o4 = {.root = root, .port_lo = 9000, .port_hi = 8000};
    ok(http_serve_start(ctx, &o4) == NULL && strstr(ctx->err.msg, "port range"), "a bad range is refused");
    http_serve_stop(s);
    r = get(port, "/");
    ok(!strncmp(r, "(connect failed)", 16), "after stop nothing listens");
    free(r);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ok(system(cmd) == 0, "cleanup");
    mi_ctx_free(ctx);
    return done_testing();
}
