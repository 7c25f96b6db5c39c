/* test_tlparse.c — the tlparse report on real PyTorch logs. The test scans each log itself with
 * plain string matching (not the reader) and checks that the report lists exactly those compile
 * ids and artifact names, verified every md5, and wrote its files. Then it damages a copy of a
 * log in six known ways and checks that exactly those lines are reported, by kind and line,
 * while every other artifact is still in the report; then corrupts k random artifacts of a log
 * (k up to 16, six kinds including records of another rank interleaved) the same way. */
#include "tap.h"
#include "tests/support/shell_harness.h"
#include "trace/trace.h"

#include <cJSON.h>
#include <md5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include "tests/support/tlparse_rules.h"

#define LOGS "tests/fixtures/logs/"

typedef struct Env {
    long line;
    char key[64], name[160], cid[64];
    bool has_payload, listed;
} Env;

typedef struct Scan {
    Env *e;
    int n;
    char **lines;   /* every line of the file, newline stripped */
    int n_lines;
} Scan;

static const char *last_strstr(const char *s, const char *pat) {
    const char *r = NULL, *p = s;
    while ((p = strstr(p, pat))) r = p++;
    return r;
}

static int field(const char *s, const char *pat) {
    const char *p = last_strstr(s, pat);
    return p ? atoi(p + strlen(pat)) : -1;
}

/* Independent scan: envelope lines, their event key, artifact name, compile id, payload flag. */
static void scan(const char *path, Scan *sc) {
    memset(sc, 0, sizeof *sc);
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (f && (len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        sc->lines = realloc(sc->lines, sizeof(char *) * (size_t)(sc->n_lines + 1));
        sc->lines[sc->n_lines++] = strdup(line);
        if (line[0] == '\t' || line[0] == 0) continue;
        const char *j = strstr(line, "] {\"");
        if (!j) continue;
        sc->e = realloc(sc->e, sizeof(Env) * (size_t)(sc->n + 1));
        Env *e = &sc->e[sc->n++];
        memset(e, 0, sizeof *e);
        e->line = sc->n_lines;
        j += 4;
        snprintf(e->key, sizeof e->key, "%.*s", (int)strcspn(j, "\""), j);
        snprintf(e->name, sizeof e->name, "%s", e->key);
        if (!strcmp(e->key, "artifact")) {
            const char *nm = strstr(j, "\"name\": \"");
            if (nm) snprintf(e->name, sizeof e->name, "%.*s", (int)strcspn(nm + 9, "\""), nm + 9);
        }
        int fid = field(j, "\"frame_id\": "), fc = field(j, "\"frame_compile_id\": "), at = field(j, "\"attempt\": ");
        if (fid >= 0 && fc >= 0) {
            if (at > 0) snprintf(e->cid, sizeof e->cid, "%d/%d_%d", fid, fc, at);
            else snprintf(e->cid, sizeof e->cid, "%d/%d", fid, fc);
        }
        e->has_payload = last_strstr(j, "\"has_payload\": \"") != NULL;
        e->listed = e->has_payload && strcmp(e->key, "chromium_event") && strcmp(e->key, "str") &&
                    strncmp(e->key, "describe_", 9) && !strstr(e->key, "compilation_metrics");
    }
    free(line);
    if (f) fclose(f);
}

static void scan_free(Scan *sc) {
    for (int i = 0; i < sc->n_lines; i++) free(sc->lines[i]);
    free(sc->lines);
    free(sc->e);
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* The output directory against tlparse's rules (tests/support/tlparse_rules.c): the same
 * compile_directory.json and the same files outside minductor/. */
static void check_layout(const char *log, const char *out, const char *label) {
    TlrLayout want;
    ok(tlr_expect(log, false, false, false, &want) == 0, "%s: tlparse's layout computed", label);
    char why[2000];
    int nd = tlr_check(out, &want, why, sizeof why);
    is_int(nd, 0, "%s: exactly tlparse's files (%d compile_directory.json keys, %d files)", label, want.n, want.nfiles);
    if (nd) diag("%s", why);
    tlr_free(&want);
}

/* "damaged payload" marks over the compile pages (each artifact is listed on one). */
static int count_damaged(const char *out) {
    char p[600];
    snprintf(p, sizeof p, "%s/minductor", out);
    DIR *d = opendir(p);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "compile_", 8)) continue;
        char f[900];
        snprintf(f, sizeof f, "%s/%s", p, e->d_name);
        char *s = sh_read_file(f);
        for (const char *q = s; q && (q = strstr(q, "damaged payload")); q++) n++;
        free(s);
    }
    if (d) closedir(d);
    return n;
}

static long count_lines_of(const char *path) {
    FILE *f = fopen(path, "r");
    long n = 0;
    int c;
    while (f && (c = fgetc(f)) != EOF) n += c == '\n';
    if (f) fclose(f);
    return n;
}

/* "line:kind " for every row of the report's failures table, in order. */
static void failures_listed(const char *index, char *out, size_t n) {
    out[0] = 0;
    for (const char *q = index; q && (q = strstr(q, "<tr class=\"failure\"><td>"));) {
        q += 24;
        long ln = atol(q);
        const char *k = strstr(q, "<td>");
        if (!k) break;
        k += 4;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%ld:%.*s ", ln, (int)strcspn(k, "<"), k);
    }
}

/* Corrupt k random listed artifacts of a real log (every envelope tagged rank 0), each in one
 * of six ways, and check that the report counts exactly those k problems by kind, lists each
 * with its line, and still lists every other artifact:
 *   truncated_payload (payload dropped; still listed, flagged), md5_mismatch (still listed,
 *   flagged), bad_json (dropped), bad_glog (garbage line inserted before it), unknown_event (a
 *   new record inserted before it, listed), other_rank (a copy of it from rank 1 inserted before
 *   it: interleaved ranks, not listed). */
enum { DK_TRUNC, DK_MD5, DK_JSON, DK_GLOG, DK_UNKNOWN, DK_RANK, DK_N };
static const char *const dk_name[DK_N] = {"truncated_payload", "md5_mismatch", "bad_json", "bad_glog",
                                          "unknown_event", "other_rank"};
static const TraceIssueKind dk_issue[DK_N] = {TRACE_TRUNCATED_PAYLOAD, TRACE_MD5_MISMATCH, TRACE_BAD_JSON,
                                              TRACE_BAD_GLOG, TRACE_UNKNOWN_EVENT, TRACE_OTHER_RANK};

/* envelope line L with "rank": R added as its last field */
static void put_ranked(FILE *f, const char *L, int rank) {
    size_t n = strlen(L);
    while (n && L[n - 1] != '}') n--;
    fprintf(f, "%.*s, \"rank\": %d}\n", (int)(n ? n - 1 : 0), L, rank);
}

static void damage_k(MiCtx *ctx, const char *dir, const char *log, unsigned seed) {
    Scan sc;
    scan(log, &sc);
    int listed[256], nl = 0;
    for (int i = 0; i < sc.n && nl < 256; i++)
        if (sc.e[i].listed) listed[nl++] = i;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (seed + 1);
#define RND(n) (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, (int)(rng % (uint64_t)(n)))
    int k = 1 + RND(nl < 16 ? nl : 16);
    int *kind = malloc(sizeof(int) * (size_t)(sc.n + 1));   /* per envelope: -1 or DK_* */
    for (int i = 0; i < sc.n; i++) kind[i] = -1;
    long want_count[DK_N] = {0};
    for (int c = 0; c < k;) {
        int e = listed[RND(nl)];
        if (kind[e] >= 0) continue;
        kind[e] = c < DK_N ? c : RND(DK_N);  /* every kind once when k allows, then any */
        want_count[kind[e]]++;
        c++;
    }
    char dpath[300];
    snprintf(dpath, sizeof dpath, "%s/damaged_%u.log", dir, seed);
    FILE *f = fopen(dpath, "w");
    long outl = 0;
    static char want_issues[16384];
    want_issues[0] = 0;
    char hex[33];
    MD5Data((const uint8_t *)"hello\nworld", 11, hex);
#define ISSUE(line, kd) snprintf(want_issues + strlen(want_issues), sizeof want_issues - strlen(want_issues), \
                                 "%ld:%s ", (long)(line), dk_name[kd])
    int env_i = -1;
    bool drop_payload = false;
    for (int li = 0; li < sc.n_lines; li++) {
        const char *L = sc.lines[li];
        if (L[0] == '\t' || L[0] == 0) {
            if (!(drop_payload && L[0] == '\t')) { fprintf(f, "%s\n", L); outl++; }
            continue;
        }
        int e = ++env_i;
        drop_payload = false;
        switch (kind[e]) {
        case DK_GLOG:
            fputs("this line is garbage, not a glog line\n", f);
            ISSUE(++outl, DK_GLOG);
            break;
        case DK_UNKNOWN: {
            int fid = 0, fc = 0;
            sscanf(sc.e[e].cid, "%d/%d", &fid, &fc);
            fprintf(f, "V1122 18:41:45.352000 445 x.py:1] {\"my_new_event\": {}, \"frame_id\": %d, "
                       "\"frame_compile_id\": %d, \"attempt\": 0, \"rank\": 0, \"has_payload\": \"%s\"}\n\thello\n\tworld\n",
                    fid, fc, hex);
            ISSUE(++outl, DK_UNKNOWN);
            outl += 2;
            break;
        }
        case DK_RANK:       /* the same record as written by rank 1, payload and all */
            put_ranked(f, L, 1);
            ISSUE(++outl, DK_RANK);
            for (int lj = li + 1; lj < sc.n_lines && sc.lines[lj][0] == '\t'; lj++) {
                fprintf(f, "%s\n", sc.lines[lj]);
                outl++;
            }
            break;
        case DK_TRUNC:
            drop_payload = true;
            break;
        }
        if (kind[e] == DK_MD5) {
            char *cp = strdup(L);
            char *h = strstr(cp, "\"has_payload\": \"") + 16;
            memcpy(h, "0123456789abcdef0123456789abcdef", 32);
            put_ranked(f, cp, 0);
            free(cp);
        } else if (kind[e] == DK_JSON) {
            const char *b = strstr(L, "] {");
            fprintf(f, "%.*s] {{", (int)(b - L), L);
            put_ranked(f, b + 3, 0);
        } else {
            put_ranked(f, L, 0);
        }
        outl++;
        if (kind[e] == DK_TRUNC || kind[e] == DK_MD5 || kind[e] == DK_JSON) ISSUE(outl, kind[e]);
    }
    fclose(f);
    char out[300], label[64];
    snprintf(out, sizeof out, "%s/damaged_%u", dir, seed);
    snprintf(label, sizeof label, "damaged k=%d (seed %u)", k, seed);
    TlparseSummary s;
    is_int(tlparse_run(ctx, dpath, out, NULL, &s), 0, "%s: tlparse succeeds", label);
    is_int(trace_stats_failures(&s.stats), k, "%s: exactly %d problems", label, k);
    bool counts = true;
    for (int d = 0; d < DK_N; d++)
        if (s.stats.issues[dk_issue[d]] != want_count[d]) {
            counts = false;
            diag("%s: %s %ld, want %ld", label, dk_name[d], s.stats.issues[dk_issue[d]], want_count[d]);
        }
    ok(counts, "%s: counted by kind", label);
    is_int(s.rank, 0, "%s: the log's rank is 0", label);
    char p[600];
    snprintf(p, sizeof p, "%s/index.html", out);
    char *index = sh_read_file(p);
    static char got_issues[16384];
    failures_listed(index, got_issues, sizeof got_issues);
    is_str(got_issues, want_issues, "%s: the report lists each problem with its line and kind", label);
    free(index);
    /* every other record still gives tlparse's files */
    int want_damaged = 0;
    for (int i = 0; i < sc.n; i++) want_damaged += kind[i] == DK_TRUNC || kind[i] == DK_MD5;
    check_layout(dpath, out, label);
    is_int(count_damaged(out), want_damaged, "%s: the truncated and md5-mismatched artifacts (%d) are flagged", label, want_damaged);
#undef ISSUE
#undef RND
    free(kind);
    scan_free(&sc);
}

/* Exit status of `BIN tlparse IN -o OUT` (output discarded); -1 when it did not exit. */
static int run_cli(const char *bin, const char *in, const char *out) {
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "'%s' tlparse '%s' -o '%s' >/dev/null 2>&1", bin, in, out);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void) {
    MiCtx *ctx = mi_ctx_new();
    char dir[] = "/tmp/mi_tlparse_XXXXXX";
    ok(mkdtemp(dir) != NULL, "temp dir");
    const char *logs[] = {"cpu_seed_example", "cpu_recompile", "cpu_graph_break", "cuda_hop_cond", "cuda_reduce_overhead"};
    for (int li = 0; li < 5; li++) {
        char log[300], out[300];
        snprintf(log, sizeof log, LOGS "%s.log", logs[li]);
        snprintf(out, sizeof out, "%s/%s", dir, logs[li]);
        Scan sc;
        scan(log, &sc);
        char want_cids[2048] = "";     /* compile ids in first-seen order, "a|b|" */
        long n_payload = 0, n_chrome = 0, n_str = 0;
        for (int i = 0; i < sc.n; i++) {
            n_payload += sc.e[i].has_payload;
            n_chrome += !strcmp(sc.e[i].key, "chromium_event");
            n_str += !strcmp(sc.e[i].key, "str");
            char one[80], seen[2100];
            snprintf(one, sizeof one, "|%s|", sc.e[i].cid);
            snprintf(seen, sizeof seen, "|%s", want_cids);
            if (sc.e[i].cid[0] && !strstr(seen, one)) {
                strcat(want_cids, sc.e[i].cid);
                strcat(want_cids, "|");
            }
        }
        TlparseSummary s;
        is_int(tlparse_run(ctx, log, out, NULL, &s), 0, "%s: tlparse_run", logs[li]);
        is_int(trace_stats_failures(&s.stats), 0, "%s: no failures", logs[li]);
        is_int(s.stats.md5_checked, n_payload, "%s: %ld md5s checked", logs[li], n_payload);
        is_int(s.n_chromium_events, n_chrome, "%s: chromium events", logs[li]);
        check_layout(log, out, logs[li]);
        is_int(count_damaged(out), 0, "%s: no damaged artifacts", logs[li]);
        char p[600];
        snprintf(p, sizeof p, "%s/index.html", out);
        char *index = sh_read_file(p);
        ok(index != NULL, "%s: index.html", logs[li]);
        bool all = true;
        for (const char *c = want_cids; index && *c;) {
            size_t len = strcspn(c, "|");
            char pat[80];
            snprintf(pat, sizeof pat, ">%.*s</a>", (int)len, c);
            if (!strstr(index, pat)) { all = false; diag("index lacks %s", pat); }
            c += len + 1;
        }
        ok(all, "%s: index.html links every compile id", logs[li]);
        ok(index && strstr(index, "Stack trie") && strstr(index, "/home/user/torchgen/models.py:"),
           "%s: stack trie with interned file names", logs[li]);
        free(index);
        snprintf(p, sizeof p, "%s/raw.jsonl", out);
        is_int(count_lines_of(p), 1 + sc.n - n_str - n_chrome,
               "%s: raw.jsonl: the string table + one line per envelope but str and chromium_event", logs[li]);
        char *rj = sh_read_file(p);
        ok(rj && !strncmp(rj, "{\"string_table\":[", 17) && strstr(rj, "\"/home/user/torchgen/models.py\""),
           "%s: raw.jsonl starts with the string table", logs[li]);
        /* tlparse's fields: sorted keys, pathname with the regex's leading space, glog line */
        ok(rj && strstr(rj, ",\"pathname\":\" torch/_dynamo/") && strstr(rj, "\"payload_filename\":\"-_0_0_0/") &&
               strstr(rj, "\"thread\":") && strstr(rj, "\"timestamp\":\"20"),
           "%s: raw.jsonl lines carry lineno/pathname/payload_filename/thread/timestamp", logs[li]);
        const char *l2 = rj ? strchr(rj, '\n') : NULL;
        ok(l2 && !strncmp(l2 + 1, "{\"attempt\":0,\"dynamo_start\":", 28), "%s: raw.jsonl keys sorted, compact", logs[li]);
        free(rj);
        snprintf(p, sizeof p, "%s/raw.log", out);
        char *rl = sh_read_file(p), *orig = sh_read_file(log);
        ok(rl && orig && !strcmp(rl, orig), "%s: raw.log is the log", logs[li]);
        free(rl);
        free(orig);
        snprintf(p, sizeof p, "%s/chromium_events.json", out);
        char *ch = sh_read_file(p);
        cJSON *arr = ch ? cJSON_Parse(ch) : NULL;
        is_int(cJSON_GetArraySize(arr), n_chrome, "%s: chromium_events.json is a JSON array of every event", logs[li]);
        cJSON_Delete(arr);
        free(ch);
        snprintf(p, sizeof p, "%s/failures_and_restarts.html", out);
        ok(exists(p), "%s: failures_and_restarts.html", logs[li]);
        if (!strcmp(logs[li], "cpu_graph_break")) {
            char *fr = sh_read_file(p);
            ok(fr && strstr(fr, ">[0/0_1]</a>") && strstr(fr, "RestartAnalysis") && strstr(fr, "graph_break()") &&
                   strstr(fr, "-_0_0_1/compilation_metrics_"),
               "graph_break: [0/0_1]'s restart reason listed, linked to its metrics (as tlparse)");
            free(fr);
            is_int(s.n_restarted, 1, "graph_break: one restart");
        }
        if (!strcmp(logs[li], "cuda_reduce_overhead")) {
            snprintf(p, sizeof p, "%s/minductor/compile_-_0_0_0.html", out);
            char *cp = sh_read_file(p);
            ok(cp && strstr(cp, "CUDA graphs") && strstr(cp, "requested (fx_kwargs[cudagraphs] in the FX graph cache key): <b>yes</b>") &&
                   strstr(cp, "CUDAGraphNode.record") && strstr(cp, "cudagraphify.get_container") &&
                   strstr(cp, "runtime_cudagraphify_time_us: 12073"),
               "reduce_overhead: cudagraphs section (requested, events, runtime)");
            free(cp);
        }
        if (!strcmp(logs[li], "cpu_recompile")) {
            snprintf(p, sizeof p, "%s/minductor/compile_-_0_1_0.html", out);
            char *cp = sh_read_file(p);
            ok(cp && strstr(cp, "Recompile reason"), "recompile: 0/1 shows its recompile reason");
            free(cp);
        }
        scan_free(&sc);
    }

    /* ---- a damaged copy of cpu_recompile: six known problems */
    Scan sc;
    scan(LOGS "cpu_recompile.log", &sc);
    int listed_idx[64], nl = 0, second_start = -1, nstart = 0;
    for (int i = 0; i < sc.n && nl < 64; i++) {
        if (sc.e[i].listed) listed_idx[nl++] = i;
        if (!strcmp(sc.e[i].key, "dynamo_start") && ++nstart == 2) second_start = i;
    }
    ok(nl >= 20 && second_start >= 0, "enough artifacts to damage");
    int T = listed_idx[4], M = listed_idx[7], J = listed_idx[9], G = listed_idx[11], U = listed_idx[13];
    char dpath[300];
    snprintf(dpath, sizeof dpath, "%s/damaged.log", dir);
    FILE *f = fopen(dpath, "w");
    long outl = 0;
    char want_issues[1024] = "";
    long line_T = 0, line_M = 0, line_J = 0, line_G = 0, line_U = 0, line_S = 0;
    char hex[33];
    MD5Data((const uint8_t *)"hello\nworld", 11, hex);
    int env_i = 0;
    bool drop_payload = false;
    for (int li = 0; li < sc.n_lines; li++) {
        const char *L = sc.lines[li];
        bool is_env = L[0] != '\t' && L[0] != 0;
        if (is_env) {
            int e = env_i++;
            drop_payload = false;
            if (e == G) { fputs("this line is garbage, not a glog line\n", f); line_G = ++outl; }
            if (e == U) {
                int fid = 0, fc = 0;
                sscanf(sc.e[e].cid, "%d/%d", &fid, &fc);
                fprintf(f, "V1122 18:41:45.352000 445 x.py:1] {\"my_new_event\": {}, \"frame_id\": %d, "
                           "\"frame_compile_id\": %d, \"attempt\": 0, \"has_payload\": \"%s\"}\n\thello\n\tworld\n",
                        fid, fc, hex);
                line_U = ++outl;
                outl += 2;
            }
            if (e == T) { drop_payload = true; line_T = outl + 1; }
            if (e == M) {
                char *cp = strdup(L);
                char *h = strstr(cp, "\"has_payload\": \"") + 16;
                memcpy(h, "0123456789abcdef0123456789abcdef", 32);
                fprintf(f, "%s\n", cp);
                free(cp);
                line_M = ++outl;
                continue;
            }
            if (e == J) {
                const char *b = strstr(L, "] {");
                fprintf(f, "%.*s] {{%s\n", (int)(b - L), L, b + 3);
                line_J = ++outl;
                continue;
            }
            fprintf(f, "%s\n", L);
            outl++;
            if (e == second_start) { fputs("\tstray payload line\n", f); line_S = ++outl; }
            continue;
        }
        if (drop_payload && L[0] == '\t') continue;
        fprintf(f, "%s\n", L);
        outl++;
    }
    fclose(f);
    /* the reader lists problems in line order */
    long lines[6] = {line_T, line_M, line_J, line_G, line_U, line_S};
    const char *kinds[6] = {"truncated_payload", "md5_mismatch", "bad_json", "bad_glog", "unknown_event", "stray_payload"};
    for (int a = 0; a < 6; a++)
        for (int b = a + 1; b < 6; b++)
            if (lines[b] < lines[a]) {
                long t = lines[a]; lines[a] = lines[b]; lines[b] = t;
                const char *k = kinds[a]; kinds[a] = kinds[b]; kinds[b] = k;
            }
    for (int a = 0; a < 6; a++) {
        char one[64];
        snprintf(one, sizeof one, "%ld:%s ", lines[a], kinds[a]);
        strcat(want_issues, one);
    }
    char out[300];
    snprintf(out, sizeof out, "%s/damaged", dir);
    TlparseSummary s;
    is_int(tlparse_run(ctx, dpath, out, NULL, &s), 0, "damaged: tlparse still succeeds");
    is_int(trace_stats_failures(&s.stats), 6, "damaged: exactly 6 problems");
    is_int(s.stats.issues[TRACE_TRUNCATED_PAYLOAD], 1, "truncated_payload: 1");
    is_int(s.stats.issues[TRACE_MD5_MISMATCH], 1, "md5_mismatch: 1");
    is_int(s.stats.issues[TRACE_BAD_JSON], 1, "bad_json: 1");
    is_int(s.stats.issues[TRACE_BAD_GLOG], 1, "bad_glog: 1");
    is_int(s.stats.issues[TRACE_UNKNOWN_EVENT], 1, "unknown_event: 1");
    is_int(s.stats.issues[TRACE_STRAY_PAYLOAD], 1, "stray_payload: 1");
    /* the failures section lists each with line and kind */
    char p[600];
    snprintf(p, sizeof p, "%s/index.html", out);
    char *index = sh_read_file(p);
    char got_issues[1024] = "";
    for (const char *q = index; q && (q = strstr(q, "<tr class=\"failure\"><td>"));) {
        q += 24;
        long ln = atol(q);
        const char *k = strstr(q, "<td>") + 4;
        char one[64];
        snprintf(one, sizeof one, "%ld:%.*s ", ln, (int)strcspn(k, "<"), k);
        strcat(got_issues, one);
    }
    is_str(got_issues, want_issues, "damaged: the report's failures section lists exactly those lines by kind");
    free(index);
    /* every other record still gives tlparse's files */
    check_layout(dpath, out, "damaged");
    is_int(count_damaged(out), 2, "damaged: the truncated and the md5-mismatched artifacts are flagged");
    scan_free(&sc);

    /* k random corruptions of a real log, six kinds, interleaved ranks among them */
    for (unsigned seed = 1; seed <= 6; seed++)
        damage_k(ctx, dir, LOGS "cpu_recompile.log", seed);

    /* every real log of ../shared (when the checkout has it beside it): tlparse's files */
    DIR *cases = opendir("../shared/torch-cases");
    if (!cases) skip(1, "no ../shared/torch-cases");
    else {
        int nlogs = 0, nbad = 0;
        const char *devs[] = {"cpu", "cuda"};
        for (int dv = 0; dv < 2; dv++) {
            char dpath[300];
            snprintf(dpath, sizeof dpath, "../shared/torch-cases/%s", devs[dv]);
            DIR *dd = opendir(dpath);
            struct dirent *e;
            while (dd && (e = readdir(dd))) {
                if (e->d_name[0] == '.') continue;
                char log[700], outd[700], label[400];
                snprintf(log, sizeof log, "%s/%s/trace.log", dpath, e->d_name);
                if (!exists(log)) continue;
                snprintf(outd, sizeof outd, "%s/shared_%s_%s", dir, devs[dv], e->d_name);
                snprintf(label, sizeof label, "%s/%s", devs[dv], e->d_name);
                TlparseSummary ss;
                TlrLayout want;
                char why[2000];
                int nd = -1;
                if (tlparse_run(ctx, log, outd, NULL, &ss) == 0 && tlr_expect(log, false, false, false, &want) == 0) {
                    nd = tlr_check(outd, &want, why, sizeof why);
                    tlr_free(&want);
                }
                nlogs++;
                if (nd) { nbad++; diag("%s: %s", label, nd < 0 ? "tlparse failed" : why); }
            }
            if (dd) closedir(dd);
        }
        closedir(cases);
        ok(nlogs >= 20 && nbad == 0, "every real log under ../shared (%d): exactly tlparse's files (%d differ)", nlogs, nbad);
    }

    /* errors */
    mi_clear_err(ctx);
    is_int(tlparse_run(ctx, LOGS "missing.log", out, NULL, NULL), -1, "missing log fails");
    ok(strstr(ctx->err.file, "missing.log") != NULL, "error names the log");

    /* the CLI entry (repl/tlparse_cli.c, run as `minductor tlparse ...`) */
    const char *bin = getenv("MINDUCTOR_BIN");
    if (!bin) skip(5, "MINDUCTOR_BIN not set");
    else {
        snprintf(out, sizeof out, "%s/cli", dir);
        is_int(run_cli(bin, LOGS "cuda_hop_cond.log", out), 0, "minductor tlparse LOG -o DIR");
        snprintf(p, sizeof p, "%s/index.html", out);
        ok(exists(p), "CLI wrote index.html");
        /* a directory without --all-ranks, a device, a file that is no log: exit status 1 */
        is_int(run_cli(bin, LOGS "multirank/ok", out), 1, "tlparse DIR without --all-ranks fails");
        is_int(run_cli(bin, "/dev/zero", out), 1, "tlparse of a device fails (instead of reading forever)");
        is_int(run_cli(bin, "tests/fixtures/hop/cond_two_results.py", out), 1,
               "tlparse of a graph file fails: no record in it");
    }

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("cleanup failed");
    mi_ctx_free(ctx);
    return done_testing();
}
