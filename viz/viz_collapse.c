/* viz_collapse.c — a large FX graph as a readable picture: its call nodes collapse into boxes,
 * placeholders and the output stay, edges run between boxes, a legend says what the shapes
 * are, and VizGraph.note tells the shell what was collapsed and how.
 *
 * What a box holds, first rule that applies:
 *   1. module path: the "# File: model.py:11 in forward" comment a node sits under, when at
 *      least half of the call nodes have one (forward graphs of real models);
 *   2. kernel: the kernel `sched` put the node in (VizOptions.node_kernel, from the shell's
 *      schedule), when it covers at least half of the call nodes — backward graphs have no
 *      "# File:" comments at all, and one box of 300 nodes says nothing;
 *   3. op run: consecutive call nodes in program order, a run ending at a reduction or an
 *      extern call (where Inductor's fusion would end a kernel too) or at a size cap of
 *      max(12, calls / 25); its box names the ops it holds ("mul x5, add x3, sum").
 * Rules 1 and 2 apply only when no box would hold more than half of the call nodes (a graph
 * that is one module or one kernel gets op runs). Nodes that rule 1 or 2 leave without a key
 * get their op run's box. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "viz_internal.h"

typedef enum { BY_MODULE, BY_KERNEL, BY_RUN } CollapseRule;

/* The module key of a stack: "/path/models.py:11 in seed_example" (text before ", code:"). */
static char *module_key(const Node *n) {
    const char *s = n->stack;
    if (!s || !*s) return NULL;
    const char *end = strstr(s, ", code:");
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char *k = mi_xcalloc(1, len + 1);
    memcpy(k, s, len);
    return k;
}

/* "mul x5, add x3, sum": the op kinds of the call nodes calls[k] of g with box[k] == b, most
 * frequent first (at most four, then "..."). */
static void run_label(const Graph *g, const int *calls, const int *box, int ncalls, int b, StrBuf *sb) {
    char names[64][48];
    int counts[64], n = 0;
    for (int c = 0; c < ncalls; c++) {
        if (box[c] != b) continue;
        char buf[48];
        const char *t = g->nodes[calls[c]]->target ? g->nodes[calls[c]]->target : "?";
        const char *dot = strchr(t, '.');          /* "aten.mul.Tensor" -> "mul" */
        const char *s = dot ? dot + 1 : t;
        const char *e = strchr(s, '.');
        snprintf(buf, sizeof buf, "%.*s", (int)(e ? e - s : (long)strlen(s)), s);
        int k = 0;
        while (k < n && strcmp(names[k], buf)) k++;
        if (k == n && n < 64) { snprintf(names[n], sizeof names[n], "%s", buf); counts[n++] = 0; }
        if (k < 64) counts[k]++;
    }
    for (int shown = 0; shown < 4 && shown < n; shown++) {
        int best = 0;
        for (int k = 1; k < n; k++) if (counts[k] > counts[best]) best = k;
        sb_printf(sb, "%s%s", shown ? ", " : "", names[best]);
        if (counts[best] > 1) sb_printf(sb, " x%d", counts[best]);
        counts[best] = -1;
    }
    if (n > 4) sb_put(sb, ", ...");
}

/* The key of node i under rule 1 or 2 (malloc'd), NULL when it has none. */
static char *rule_key(const Graph *g, const VizOptions *opt, int i, CollapseRule rule) {
    if (rule == BY_MODULE) return module_key(g->nodes[i]);
    if (rule == BY_KERNEL && i < opt->nnode_kernel && opt->node_kernel[i]) return mi_xstrdup(opt->node_kernel[i]);
    return NULL;
}

/* Does the rule spread the nodes over boxes, or would one box hold most of them (a graph
 * that is one kernel, or one module)? Readable: no box holds more than half of the calls. */
static bool spread_out(const Graph *g, const VizOptions *opt, const int *calls, int ncalls, CollapseRule rule) {
    char **k = mi_xcalloc((size_t)ncalls + 1, sizeof *k);
    int *cnt = mi_xcalloc((size_t)ncalls + 1, sizeof *cnt), nk = 0, most = 0;
    for (int c = 0; c < ncalls; c++) {
        char *key = rule_key(g, opt, calls[c], rule);
        if (!key) continue;
        int j = 0;
        while (j < nk && strcmp(k[j], key)) j++;
        if (j == nk) k[nk++] = key; else free(key);
        if (++cnt[j] > most) most = cnt[j];
    }
    for (int j = 0; j < nk; j++) free(k[j]);
    free(k); free(cnt);
    return 2 * most <= ncalls;
}

VizGraph *viz_fx_collapsed(MiCtx *ctx, const Graph *g, const VizOptions *opt) {
    VizGraph *vg = vizg_new(ctx, g->class_name ? g->class_name : "graph", opt);
    if (!vg) return NULL;
    int n = g->n ? g->n : 1;
    int *calls = mi_xcalloc(n, sizeof *calls), ncalls = 0, with_stack = 0, with_kernel = 0;
    for (int i = 0; i < g->n; i++) {
        const Node *nd = g->nodes[i];
        if (nd->kind != N_CALL_FUNCTION) continue;
        calls[ncalls++] = i;
        with_stack += nd->stack && *nd->stack;
        with_kernel += opt->node_kernel && i < opt->nnode_kernel && opt->node_kernel[i];
    }
    CollapseRule rule = 2 * with_stack >= ncalls && with_stack && spread_out(g, opt, calls, ncalls, BY_MODULE) ? BY_MODULE
                      : 2 * with_kernel >= ncalls && with_kernel && spread_out(g, opt, calls, ncalls, BY_KERNEL) ? BY_KERNEL
                      : BY_RUN;
    /* the op runs, for rule 3 and for nodes the other rules leave without a box */
    int cap = ncalls / 25 > 12 ? ncalls / 25 : 12;
    int *run_of = mi_xcalloc(n, sizeof *run_of), nruns = 0;
    int *run_start = mi_xcalloc((size_t)ncalls + 1, sizeof *run_start);
    for (int c = 0, len = 0; c < ncalls; c++) {
        if (len == 0) run_start[nruns++] = c;
        run_of[calls[c]] = nruns - 1;
        len++;
        VizClass cls = viz_node_class(g->nodes[calls[c]]);
        if (cls == VIZ_REDUCTION || cls == VIZ_EXTERN || len >= cap) len = 0;
    }
    run_start[nruns] = ncalls;
    /* each call node's box: a key per box, in order of first use */
    char **key = mi_xcalloc(n, sizeof *key);       /* node -> "box_K" */
    char **keys = mi_xcalloc(n, sizeof *keys);
    int *box = mi_xcalloc((size_t)ncalls + 1, sizeof *box);
    bool *is_run = mi_xcalloc(n, sizeof *is_run);
    int *count = mi_xcalloc(n, sizeof *count), *first = mi_xcalloc(n, sizeof *first), *last = mi_xcalloc(n, sizeof *last);
    int nkeys = 0, by_rule = 0;
    unsigned present = 1u << VIZ_GROUP;
    for (int c = 0; c < ncalls; c++) {
        int i = calls[c];
        char *k = rule_key(g, opt, i, rule);
        bool run = !k;
        if (k) by_rule++;
        else {                                     /* its op run */
            char kb[32];
            snprintf(kb, sizeof kb, "\x01run%d", run_of[i]);     /* never equal to a module or kernel name */
            k = mi_xstrdup(kb);
        }
        int gi = 0;
        while (gi < nkeys && strcmp(keys[gi], k)) gi++;
        if (gi == nkeys) { keys[nkeys] = k; is_run[nkeys] = run; first[nkeys++] = c; } else free(k);
        count[gi]++;
        last[gi] = c;
        box[c] = gi;
        char id[32];
        snprintf(id, sizeof id, "group_%d", gi);
        key[i] = mi_xstrdup(id);
    }
    for (int i = 0; i < g->n; i++) {               /* placeholders, get_attr, output stay */
        const Node *nd = g->nodes[i];
        if (nd->kind == N_CALL_FUNCTION) continue;
        char *lab = viz_fx_label(nd, opt->show_meta);
        vizg_node(vg, NULL, nd->name, lab, viz_node_class(nd));
        present |= 1u << viz_node_class(nd);
        free(lab);
    }
    for (int gi = 0; gi < nkeys; gi++) {
        char id[32];
        snprintf(id, sizeof id, "group_%d", gi);
        StrBuf lab; sb_init(&lab);
        if (is_run[gi]) {                          /* "ops 12-31: mul x5, add x3, sum" */
            StrBuf t; sb_init(&t);
            sb_printf(&t, "ops %d-%d: ", first[gi] + 1, last[gi] + 1);
            run_label(g, calls, box, ncalls, gi, &t);
            viz_escape_sb(&lab, t.s);
            sb_free(&t);
        } else viz_escape_sb(&lab, keys[gi]);
        sb_printf(&lab, "\\n(%d node%s)", count[gi], count[gi] == 1 ? "" : "s");
        vizg_node(vg, NULL, id, lab.s, VIZ_GROUP);
        sb_free(&lab);
    }
    viz_fx_add_edges(vg, g, (const char *const *)key);
    vizg_legend(vg, present);
    static const char *const rule_name[] = {"module path ('# File:' comments)", "kernel (as 'sched' names them)",
                                            "runs of ops ending at a reduction or extern call"};
    const char *why = rule == BY_MODULE ? "" : rule == BY_KERNEL ? " (the nodes have no '# File:' comments)"
                    : with_stack ? " (the '# File:' comments put most nodes in one module)"
                    : with_kernel ? " (no '# File:' comments; one kernel holds most nodes)"
                                  : " (no '# File:' comments and no schedule: 'sched' first to box by kernel)";
    snprintf(vg->note, sizeof vg->note, "collapsed %d of %d nodes into %d boxes by %s%s%s; 'show fx --collapse 0' draws every node",
             ncalls, g->n, nkeys, rule_name[rule], why, by_rule < ncalls && rule != BY_RUN ? ", the rest by op runs" : "");
    for (int i = 0; i < g->n; i++) free(key[i]);
    for (int gi = 0; gi < nkeys; gi++) free(keys[gi]);
    free(key); free(keys); free(box); free(is_run); free(count); free(first); free(last);
    free(calls); free(run_of); free(run_start);
    return vg;
}
