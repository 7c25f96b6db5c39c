/* multirank.c — reports for a directory of per-rank logs (dedicated_log_torch_trace_rank_N_*.log):
 * parses the ranks in parallel (pthreads), writes rank_N/ reports, and a landing page that
 * lines the ranks up: compile ids per rank and where they diverge, recompiles and failures per
 * rank, and the collective sequence of each compile per rank with a warning on mismatch. */
#include "tlparse_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct RankJob {
    int rank;
    char log[1024];
    char out[1200];
    const TlparseOptions *opt;
    Tl t;
    TlparseSummary s;
    int rc;
    char err[1400];
    bool parsed;
} RankJob;

static void *rank_thread(void *arg) {
    RankJob *j = arg;
    MiCtx *ctx = mi_ctx_new();          /* one context per thread: errors are per context */
    uint64_t t0 = mi_now_ns();
    j->rc = tl_parse(&j->t, ctx, j->log, j->out, j->opt);
    j->parsed = true;
    if (j->rc == 0) j->rc = tl_render(&j->t, j->log);
    if (j->rc == 0) j->rc = tl_finish_raw(&j->t, j->log);
    if (tl_finish_files(&j->t) != 0) j->rc = -1;
    tl_fill_summary(&j->t, &j->s);
    j->s.seconds = (double)(mi_now_ns() - t0) / 1e9;
    if (j->rc != 0) mi_err_str(ctx, j->err, sizeof j->err);
    j->t.ctx = NULL;
    mi_ctx_free(ctx);
    return NULL;
}

/* "dedicated_log_torch_trace_rank_3_abc.log" -> 3, else -1 */
static int rank_of(const char *name) {
    static const char pre[] = "dedicated_log_torch_trace_rank_";
    size_t n = strlen(name);
    if (strncmp(name, pre, sizeof pre - 1) != 0 || n < 4 || strcmp(name + n - 4, ".log") != 0) return -1;
    const char *p = name + sizeof pre - 1;
    if (*p < '0' || *p > '9') return -1;
    long r = strtol(p, NULL, 10);
    return r >= 0 && r < 1000000 ? (int)r : -1;
}

static int job_cmp(const void *a, const void *b) {
    const RankJob *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return strcmp(x->log, y->log);
}

static const char *cell_class(const TlCompile *c) {
    return !c ? "bad" : c->failed ? "bad" : c->restarted ? "warn" : "ok";
}

static void link2(StrBuf *b, const char *href, const char *text) {
    sb_put(b, "<a href=\"");
    html_esc(b, href);
    sb_put(b, "\">");
    html_esc(b, text);
    sb_put(b, "</a>");
}

/* Landing page + counts of divergences. */
static int landing(MiCtx *ctx, const char *out_dir, RankJob *jobs, int n, TlparseMultiSummary *ms) {
    /* union of compile ids in first-seen order */
    int nu = 0, cap = 0;
    char (*ids)[64] = NULL;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < jobs[r].t.n_c; i++) {
            const char *id = jobs[r].t.c[i].id;
            int k;
            for (k = 0; k < nu; k++) if (!strcmp(ids[k], id)) break;
            if (k < nu) continue;
            if (nu == cap) { cap = cap ? cap * 2 : 16; ids = mi_xrealloc(ids, sizeof *ids * (size_t)cap); }
            snprintf(ids[nu++], 64, "%s", id);
        }
    StrBuf b, coll;
    sb_init(&b);
    sb_init(&coll);
    tl_page_begin(&b, "tlparse: all ranks");
    sb_put(&b, "<p>directory of per-rank logs; one report per rank:</p>\n<ul>\n");
    for (int r = 0; r < n; r++) {
        char href[64], text[1200];
        snprintf(href, sizeof href, "rank_%d/index.html", jobs[r].rank);
        snprintf(text, sizeof text, "rank %d", jobs[r].rank);
        sb_put(&b, "<li>");
        link2(&b, href, text);
        sb_put(&b, " — ");
        html_esc(&b, jobs[r].log);
        sb_printf(&b, " · %d compile ids, %d failed, %d restarted, %ld log problems</li>\n", jobs[r].s.n_compiles,
                  jobs[r].s.n_failed, jobs[r].s.n_restarted, trace_stats_failures(&jobs[r].s.stats));
    }
    sb_put(&b, "</ul>\n<h3>Compile ids by rank</h3>\n<table><tr><th>compile id</th>");
    for (int r = 0; r < n; r++) sb_printf(&b, "<th>rank %d</th>", jobs[r].rank);
    sb_put(&b, "<th>note</th></tr>\n");
    for (int k = 0; k < nu; k++) {
        int present = 0, failed = 0, ncoll = 0;
        const char *first_seq = NULL, *first_why = NULL;
        bool coll_mismatch = false, why_mismatch = false, seen = false;
        for (int r = 0; r < n; r++) {
            TlCompile *c = tl_find(&jobs[r].t, ids[k]);
            if (!c) continue;
            present++;
            if (c->failed) failed++;
            if (c->n_coll) ncoll++;
            const char *seq = c->coll.s ? c->coll.s : "";
            if (!first_seq) first_seq = seq;
            else if (strcmp(first_seq, seq) != 0) coll_mismatch = true;
            const char *why = c->recompile_reason ? c->recompile_reason : "";
            if (!seen) { first_why = why; seen = true; }
            else if (strcmp(first_why, why) != 0) why_mismatch = true;
        }
        if (ncoll && ncoll != present) coll_mismatch = true;
        if (ncoll && present != n) coll_mismatch = true;
        bool divergent = present != n;
        if (divergent) ms->n_divergent_compiles++;
        if (coll_mismatch) ms->n_collective_mismatches++;
        if (failed && failed != n) ms->n_failure_mismatches++;
        if (why_mismatch) ms->n_recompile_mismatches++;
        sb_printf(&b, "<tr%s><td>", divergent ? " class=\"diverge\"" : "");
        html_esc(&b, ids[k]);
        sb_put(&b, "</td>");
        for (int r = 0; r < n; r++) {
            TlCompile *c = tl_find(&jobs[r].t, ids[k]);
            sb_printf(&b, "<td class=\"%s\">", cell_class(c));
            if (!c) sb_put(&b, "<b>missing</b>");
            else {
                char href[200];
                snprintf(href, sizeof href, "rank_%d/minductor/compile_%s.html", jobs[r].rank, c->dir);
                link2(&b, href, c->status);
                sb_printf(&b, " (%d artifacts)", c->n_arts);
                if (c->recompile_reason) { sb_put(&b, "<br><small>recompile: "); html_esc(&b, c->recompile_reason); sb_put(&b, "</small>"); }
            }
            sb_put(&b, "</td>");
        }
        sb_put(&b, "<td class=\"warn\">");
        if (divergent) sb_printf(&b, "DIVERGENCE: present on %d of %d ranks. ", present, n);
        if (failed && failed != n) sb_printf(&b, "fails on %d of %d ranks. ", failed, n);
        if (coll_mismatch) sb_put(&b, "collective sequences differ. ");
        if (why_mismatch) sb_put(&b, "recompile reasons differ (the ranks saw different inputs). ");
        sb_put(&b, "</td></tr>\n");
        /* collectives section */
        if (ncoll) {
            sb_printf(&coll, "<h4%s>compile ", coll_mismatch ? " class=\"bad\"" : "");
            html_esc(&coll, ids[k]);
            sb_put(&coll, coll_mismatch ? " — WARNING: collective sequences differ across ranks (possible hang)</h4>\n"
                                        : " — same sequence on every rank</h4>\n");
            sb_put(&coll, "<table><tr>");
            for (int r = 0; r < n; r++) sb_printf(&coll, "<th>rank %d</th>", jobs[r].rank);
            sb_put(&coll, "</tr><tr>");
            for (int r = 0; r < n; r++) {
                TlCompile *c = tl_find(&jobs[r].t, ids[k]);
                sb_put(&coll, "<td><pre>");
                if (!c) sb_put(&coll, "(compile missing)");
                else if (!c->n_coll) sb_put(&coll, "(no collectives)");
                else {
                    html_esc(&coll, c->coll.s);
                    sb_put(&coll, "from ");
                    html_esc(&coll, c->coll_src);
                }
                sb_put(&coll, "</pre></td>");
            }
            sb_put(&coll, "</tr></table>\n");
        }
    }
    sb_put(&b, "</table>\n");
    /* the order of compiles: the first position where a rank differs from rank 0 */
    for (int r = 1; r < n; r++) {
        int m = jobs[0].t.n_c < jobs[r].t.n_c ? jobs[0].t.n_c : jobs[r].t.n_c, k = 0;
        while (k < m && !strcmp(jobs[0].t.c[k].id, jobs[r].t.c[k].id)) k++;
        if (k == m && jobs[0].t.n_c == jobs[r].t.n_c) continue;
        sb_printf(&b, "<p class=\"bad\">rank %d diverges from rank %d at compile #%d: ", jobs[r].rank, jobs[0].rank, k + 1);
        html_esc(&b, k < jobs[0].t.n_c ? jobs[0].t.c[k].id : "(end)");
        sb_printf(&b, " on rank %d, ", jobs[0].rank);
        html_esc(&b, k < jobs[r].t.n_c ? jobs[r].t.c[k].id : "(end)");
        sb_printf(&b, " on rank %d</p>\n", jobs[r].rank);
    }
    sb_printf(&b, "<p>%d compile id(s) diverge across ranks; %d with failures on some ranks only; "
                  "%d with differing collective sequences; %d recompiled for different reasons.</p>\n",
              ms->n_divergent_compiles, ms->n_failure_mismatches, ms->n_collective_mismatches,
              ms->n_recompile_mismatches);
    /* recompiles and failures per rank */
    sb_put(&b, "<h3>Recompiles and failures per rank</h3>\n<table><tr><th>rank</th><th>recompiles</th><th>failures</th></tr>\n");
    for (int r = 0; r < n; r++) {
        sb_printf(&b, "<tr><td>%d</td><td>", jobs[r].rank);
        for (int i = 0; i < jobs[r].t.n_c; i++) {
            const TlCompile *c = &jobs[r].t.c[i];
            int f = 0, fc = 0;
            if (sscanf(c->id, "%d/%d", &f, &fc) == 2 && fc > 0) {
                html_esc(&b, c->id);
                sb_put(&b, c->recompile_reason ? ": " : "");
                if (c->recompile_reason) html_esc(&b, c->recompile_reason);
                sb_put(&b, "<br>");
            }
        }
        sb_put(&b, "</td><td>");
        for (int i = 0; i < jobs[r].t.n_c; i++) {
            const TlCompile *c = &jobs[r].t.c[i];
            if (!c->failed && !c->restarted) continue;
            html_esc(&b, c->id);
            sb_put(&b, ": ");
            html_esc(&b, c->status);
            sb_put(&b, "<br>");
        }
        sb_put(&b, "</td></tr>\n");
    }
    sb_put(&b, "</table>\n<h3>Collectives per rank</h3>\n");
    if (coll.len) sb_putn(&b, coll.s, coll.len);
    else sb_put(&b, "<p>No graph contains collectives.</p>\n");
    tl_page_end(&b);
    char path[1400];
    snprintf(path, sizeof path, "%s/index.html", out_dir);
    int rc = mi_write_file(ctx, path, b.s, b.len);
    sb_free(&b);
    sb_free(&coll);
    free(ids);
    return rc;
}

int tlparse_all_ranks(MiCtx *ctx, const char *dir, const char *out_dir, const TlparseOptions *opt,
                      TlparseMultiSummary *out) {
    TlparseMultiSummary local;
    TlparseMultiSummary *ms = out ? out : &local;
    memset(ms, 0, sizeof *ms);
    DIR *d = opendir(dir);
    if (!d) return mi_err(ctx, dir, 0, 0, "cannot open directory of rank logs");
    RankJob *jobs = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int r = rank_of(de->d_name);
        if (r < 0) continue;
        jobs = mi_xrealloc(jobs, sizeof *jobs * (size_t)(n + 1));
        memset(&jobs[n], 0, sizeof jobs[n]);
        jobs[n].rank = r;
        snprintf(jobs[n].log, sizeof jobs[n].log, "%s/%s", dir, de->d_name);
        n++;
    }
    closedir(d);
    if (n == 0) {
        free(jobs);
        return mi_err(ctx, dir, 0, 0, "no dedicated_log_torch_trace_rank_<N>_*.log files in this directory");
    }
    qsort(jobs, (size_t)n, sizeof *jobs, job_cmp);
    if (mkdir_p(ctx, out_dir) != 0) { free(jobs); return -1; }
    for (int i = 0; i < n; i++) {
        snprintf(jobs[i].out, sizeof jobs[i].out, "%s/rank_%d", out_dir, jobs[i].rank);
        for (int k = 0; k < i; k++)    /* two logs of one rank: keep them apart */
            if (jobs[k].rank == jobs[i].rank) snprintf(jobs[i].out, sizeof jobs[i].out, "%s/rank_%d_%d", out_dir, jobs[i].rank, i);
        jobs[i].opt = opt;
    }
    /* at most 8 threads at once */
    for (int base = 0; base < n; base += 8) {
        pthread_t th[8];
        bool started[8] = {0};
        int m = n - base < 8 ? n - base : 8;
        for (int i = 0; i < m; i++) started[i] = pthread_create(&th[i], NULL, rank_thread, &jobs[base + i]) == 0;
        for (int i = 0; i < m; i++) {
            if (started[i]) pthread_join(th[i], NULL);
            else rank_thread(&jobs[base + i]);
        }
    }
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (jobs[i].rc != 0) {
            rc = mi_err(ctx, jobs[i].log, 0, 0, "rank %d: %s", jobs[i].rank, jobs[i].err);
            break;
        }
    if (rc == 0) rc = landing(ctx, out_dir, jobs, n, ms);
    ms->n_ranks = n;
    ms->ranks = mi_xcalloc((size_t)n, sizeof *ms->ranks);
    for (int i = 0; i < n; i++) {
        ms->ranks[i].rank = jobs[i].rank;
        snprintf(ms->ranks[i].log, sizeof ms->ranks[i].log, "%s", jobs[i].log);
        ms->ranks[i].s = jobs[i].s;
        for (int k = 0; k < jobs[i].t.n_c; k++)
            if (jobs[i].t.c[k].n_coll) ms->ranks[i].n_collective_graphs++;
        tl_free(&jobs[i].t);
    }
    free(jobs);
    if (ms == &local) tlparse_multi_summary_free(&local);
    return rc;
}

void tlparse_multi_summary_free(TlparseMultiSummary *s) {
    if (!s) return;
    free(s->ranks);
    memset(s, 0, sizeof *s);
}
