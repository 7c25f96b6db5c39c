/* fuzz_serve.c — libFuzzer target: the request handler of the loopback HTTP server
 * (trace/http_serve.c, http_serve_answer) entered directly, no socket, for both of its users:
 *  - the shell's live view (`serve`, repl/serve.c): a session with a graph run through the
 *    passes, lowered and scheduled, whose page the handler serves;
 *  - a file root (`minductor tlparse --serve`): a directory with two files and a symlink that
 *    points out of it.
 * The input is the request head as a client would send it (cut at the 8 KB cap, "complete"
 * when it holds the blank line, as the socket loop decides). Every answer must be a
 * well-formed HTTP/1.1 response with a known status whose Content-Length matches the body;
 * the root server may only ever answer 200 with one of its own files (the symlink's target,
 * outside the root, must never come back). Seeds: build-fuzz/seed-serve (tests/fuzz/seeds.sh). */
#define _GNU_SOURCE
#include "repl/teach.h"
#include "trace/http_serve.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char graph_text[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[8, 16][16, 1]cpu\"):\n"
    "        amax: \"f32[8, 1][1, 1]cpu\" = torch.ops.aten.amax.default(x, [1], True)\n"
    "        sub: \"f32[8, 16][16, 1]cpu\" = torch.ops.aten.sub.Tensor(x, amax);  x = amax = None\n"
    "        exp: \"f32[8, 16][16, 1]cpu\" = torch.ops.aten.exp.default(sub);  sub = None\n"
    "        t: \"f32[16, 8][1, 16]cpu\" = torch.ops.aten.permute.default(exp, [1, 0]);  exp = None\n"
    "        return (t,)\n";

static Session *sess;              /* alive for the whole run: the live handler reads its page */
static HttpServer *live_srv, *file_srv;
static char secret[64];

#define MAX_REQUEST 8192

static void setup(void) {
    Session *s = sess = session_new();
    s->out = s->err = fopen("/dev/null", "w");
    Graph *g = fx_parse(s->ctx, graph_text, strlen(graph_text), "fuzz.py", 1);
    if (!g) abort();
    session_set_graph(s, g, "fuzz.py");
    if (session_rebuild_pm(s) < 0) abort();
    run_line(s, "run; lower; sched");
    Teach *t = teach_of(s);
    t->live = live_new();                 /* no socket: the page only */
    live_refresh(s);
    HttpServeOptions o = {.port_lo = 8000, .port_hi = 8000, .max_request = MAX_REQUEST,
                          .handler = live_handler, .ud = t->live};
    live_srv = http_serve_detached(s->ctx, &o);
    /* a root with two files and a symlink out of it */
    char dir[] = "/tmp/fuzz_serve_XXXXXX";
    if (!mkdtemp(dir)) abort();
    char p[200];
    snprintf(p, sizeof p, "%s/index.html", dir);
    FILE *f = fopen(p, "w"); fputs("<p>index</p>", f); fclose(f);
    snprintf(p, sizeof p, "%s/sub", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sub/a.txt", dir);
    f = fopen(p, "w"); fputs("file a", f); fclose(f);
    snprintf(secret, sizeof secret, "%s.secret", dir);
    f = fopen(secret, "w"); fputs("SECRET-OUTSIDE-ROOT", f); fclose(f);
    snprintf(p, sizeof p, "%s/out", dir);
    if (symlink(secret, p) != 0) abort();
    HttpServeOptions r = {.root = dir, .port_lo = 8001, .port_hi = 8001, .max_request = MAX_REQUEST};
    file_srv = http_serve_detached(s->ctx, &r);
    if (!live_srv || !file_srv) abort();
}

/* A well-formed response: status line, Content-Length equal to what follows the head (HEAD:
 * no body). Returns the status; aborts on a malformed answer. */
static int check_response(const char *resp, size_t len, bool head, const char **body, size_t *blen) {
    int status = 0;
    if (len < 16 || strncmp(resp, "HTTP/1.1 ", 9) || sscanf(resp + 9, "%d", &status) != 1) abort();
    if (status != 200 && status != 400 && status != 403 && status != 404 && status != 405 && status != 413) abort();
    const char *end = memmem(resp, len, "\r\n\r\n", 4);
    const char *cl = memmem(resp, end ? (size_t)(end - resp) : len, "Content-Length: ", 16);
    if (!end || !cl) abort();
    size_t want = strtoul(cl + 16, NULL, 10);
    *body = end + 4;
    *blen = len - (size_t)(end + 4 - resp);
    if (*blen != want && !(head && *blen == 0)) abort();      /* HEAD: the length, no body */
    return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!live_srv) setup();
    size_t n = size < MAX_REQUEST ? size : MAX_REQUEST;
    char *req = malloc(n + 1);
    memcpy(req, data, n);
    req[n] = 0;
    bool complete = memmem(req, n, "\r\n\r\n", 4) || memmem(req, n, "\n\n", 2);
    bool head = n >= 5 && !memcmp(req, "HEAD ", 5);
    size_t len;
    const char *body;
    size_t blen;
    char *resp = http_serve_answer(live_srv, req, n, complete, &len);
    check_response(resp, len, head, &body, &blen);
    free(resp);
    resp = http_serve_answer(file_srv, req, n, complete, &len);
    int st = check_response(resp, len, head, &body, &blen);
    if (st == 200 && blen) {
        bool mine = (blen == 12 && !memcmp(body, "<p>index</p>", 12)) || (blen == 6 && !memcmp(body, "file a", 6));
        if (!mine || memmem(body, blen, "SECRET", 6)) {
            fprintf(stderr, "fuzz_serve: the root server answered 200 with something not in its root\n");
            abort();
        }
    }
    free(resp);
    free(req);
    return 0;
}
