/* fuzz_session.c — libFuzzer target, differential: `save session` then replaying the saved
 * script into a fresh session gives the same state (issue #20: session save/replay). Each
 * input byte picks one command from a vocabulary of the shell's state-changing commands
 * (load, inputs, step/next/back/goto, set device/threads/fusion/seed/tolerance/limit/collapse,
 * patterns, break, lower, sched, enter/leave; the loaded graphs include a cond and a while_loop); session A runs them with errexit off, saves
 * itself, session B replays the file line by line, and both must agree on the graph text, the
 * pass cursor, the breakpoint, the pattern file, every setting and the lowered/scheduled state.
 * A disagreement aborts (a finding). Then `diff session` (repl/cmd_diff_session.c), run from a
 * third session C: the saved script against itself must agree everywhere, and against a
 * second script (the commands of the input's odd bytes, with a line of the input's printable
 * bytes — no '/', so no path outside the tree — as a malformed line when the first byte is odd)
 * it must give a result or an error; C's state must not change either way.
 * Every session starts with limit while_iterations 1000 (a while_loop's random bound must not
 * outrun the per-input timeout); `save session` keeps it as any other setting.
 * Seeds: seed-session (tests/fuzz/seeds.sh). */
#include "repl/commands.h"
#include "repl/session.h"
#include "fx_passes/passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const vocab[] = {
    "load examples/softmax.py", "load examples/ln_gelu.py", "load examples/seed_example.py",
    "load tests/fixtures/patterns/double_relu.py", "load tests/fixtures/hop/cond_two_results.py",
    "inputs random", "inputs random 3", "inputs examples/inputs/softmax",
    "step", "next 2", "back", "goto 5", "goto 0", "run", "break stable_sort", "break pass_pattern_1",
    "set device cuda", "set device cpu", "set threads 2", "set threads 0", "set fusion off", "set fusion on",
    "set seed 7", "set seed 12345", "set tolerance 0.001 1e-05", "set tolerance 0.0001",
    "set limit sym_degree 16", "set limit fusion_rounds 3", "set collapse 40",
    "patterns tests/fixtures/patterns/user.pat", "patterns off", "lower", "sched",
    "enter true_graph_0", "leave",
    "load tests/fixtures/hop/while_loop.py", "set limit while_iterations 5", "enter while_loop_body_graph_0",
};
#define NVOCAB ((int)(sizeof vocab / sizeof vocab[0]))

/* Everything `save session` promises to keep, as text. */
static char *state_of(Session *s) {
    StrBuf sb;
    sb_init(&sb);
    MiCtx *c = s->ctx;
    sb_printf(&sb, "device %d threads %d fusion %d seed %llu rtol %.17g atol %.17g collapse %d\n", c->target,
              c->threads, c->fusion, (unsigned long long)c->seed, s->rtol, s->atol, s->collapse_over);
    for (const MiLimitInfo *l = mi_limit_info(); l->name; l++)
        sb_printf(&sb, "limit %s %d\n", l->name, *(const int *)((const char *)&c->limits + l->offset));
    sb_printf(&sb, "patterns %s\nbreak %s\nscope %s\nload %s\ninputs %s\n", s->patterns_path ? s->patterns_path : "-",
              s->break_pass ? s->break_pass : "-", s->scope ? s->scope : "-", s->load_args ? s->load_args : "-",
              s->inputs_args ? s->inputs_args : "-");
    sb_printf(&sb, "cursor %d compiled %d\n", s->pm ? pm_cursor(s->pm) : -1, s->cs != NULL);
    const Graph *g = session_graph(s);
    if (g) {
        char *t = fx_print(g, false);
        sb_put(&sb, t);
        free(t);
    }
    return sb_take(&sb);
}

/* Two states (state_of) must be equal: else a finding (abort) showing both; frees both. */
static void same_state(const char *what, const char *na, char *x, const char *nb, char *y) {
    if (strcmp(x, y) != 0) {
        fprintf(stderr, "fuzz_session: %s\n--- %s:\n%s\n--- %s:\n%s\n", what, na, x, nb, y);
        abort();
    }
    free(x);
    free(y);
}

static Session *quiet_session(void) {
    Session *s = session_new();
    s->out = fopen("/dev/null", "w");
    s->err = fopen("/dev/null", "w");
    s->errexit = false;
    mi_limit_set(s->ctx, "while_iterations", 1000);
    return s;
}

static void close_session(Session *s) {
    fclose(s->out);
    fclose(s->err);
    s->out = s->err = NULL;
    session_free(s);
}

/* The output of one command run in s (s->out captured); malloc'd. */
static char *output_of(Session *s, const char *cmd, int *rc) {
    char *buf = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&buf, &n), *keep = s->out;
    s->out = mem;
    *rc = run_line(s, cmd);
    s->out = keep;
    fclose(mem);
    return buf;
}

/* saved: the script session A saved (with a graph loaded when has_graph). */
static void diff_sessions(const char *saved, bool has_graph, const uint8_t *data, size_t size) {
    char other[64], cmd[200];
    snprintf(other, sizeof other, "/tmp/fuzz_session_%d_b.mi", (int)getpid());
    FILE *f = fopen(other, "w");
    if (!f) return;
    for (size_t i = 1; i < size; i += 2) fprintf(f, "%s\n", vocab[data[i] % NVOCAB]);
    if (size && (data[0] & 1)) {
        for (size_t i = 0; i < size; i++) if (data[i] >= ' ' && data[i] < 127 && data[i] != '/') fputc(data[i], f);
        fputc('\n', f);
    }
    fclose(f);
    Session *c = quiet_session();
    run_line(c, "load examples/softmax.py; next 2");
    char *before = state_of(c);
    snprintf(cmd, sizeof cmd, "diff session %s %s", saved, saved);
    int rc;
    char *out = output_of(c, cmd, &rc);
    if (has_graph && (rc != 0 || !out || !strstr(out, "diff session: the two sessions agree"))) {
        fprintf(stderr, "fuzz_session: a saved session differs from itself:\n%s\n", out ? out : "(no output)");
        abort();
    }
    free(out);
    snprintf(cmd, sizeof cmd, "diff session %s %s", saved, other);
    free(output_of(c, cmd, &rc));
    same_state("diff session changed the session it ran in", "before", before, "after", state_of(c));
    close_session(c);
    unlink(other);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 24) size = 24;                  /* a session of up to 24 commands */
    Session *a = quiet_session();
    for (size_t i = 0; i < size; i++) run_line(a, vocab[data[i] % NVOCAB]);
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_session_%d.mi", (int)getpid());
    char cmd[96];
    snprintf(cmd, sizeof cmd, "save session %s", path);
    if (run_line(a, cmd) == 0) {
        Session *b = quiet_session();
        size_t len = 0;
        char *script = mi_read_file(b->ctx, path, &len);
        for (char *line = script, *nl; line && *line; line = nl ? nl + 1 : line + strlen(line)) {
            nl = strchr(line, '\n');
            if (nl) *nl = 0;
            if (*line && *line != '#') run_line(b, line);
            if (!nl) break;
        }
        free(script);
        same_state("the replayed session differs", "saved", state_of(a), "replayed", state_of(b));
        close_session(b);
        diff_sessions(path, a->graph != NULL, data, size);
    }
    unlink(path);
    close_session(a);
    return 0;
}
