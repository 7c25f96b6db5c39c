/* sched_explain.c — the scheduler's fusion decisions explained, for people: the one place that
 * reads Schedule.decisions for the shell's `why`, the refusal labels on the fusion picture's
 * edges (repl/cmd_compile.c) and the report's why page (the minductor_fusion_decisions artifact
 * the shell's trace writes; trace/tlparse_why.c renders it). Nothing here decides anything: the
 * fusion rounds of core/scheduler/scheduler.c record each pair of groups they tried (which
 * groups, after how many fusions, fused or refused, the score, Inductor's WhyNoFuse words), and
 * sched_group_at() recovers the members of each side from the groups' merge log, so a decision
 * names its FX nodes even when its group name was abbreviated ("op0_..(20 nodes).._op9").
 *
 *   why buf0 buf3   ->    buf0 (op0): FX nodes var_mean
 *                         buf3 (op3): FX nodes mul_1
 *                       fused: buf0 and buf3 are in one kernel, cpp_fused_add_mul_0
 *                       decided by: fuse op0_op1_op2 + op3 (score 65536 bytes): vertical: ... */
#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

/* The scheduler node computing buffer b, or -1 (an input): through the writers index when b
 * is a buffer of this schedule's module. */
static int node_of_buf(const Schedule *s, const Buffer *b) {
    if (s->wr_start && b->id >= 0 && b->id < s->ir->nbufs && s->ir->bufs[b->id] == b) {
        for (int k = s->wr_start[b->id]; k < s->wr_start[b->id + 1]; k++)
            if (s->nodes[s->wr[k]].buf == b) return s->wr[k];
        return -1;
    }
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].buf == b) return i;
    return -1;
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* The nodes on either side of d, ascending: only the final groups that absorbed d's two groups
 * can hold them (groups only grow), so only their nodes are looked at. malloc'd; count returned. */
static int decision_nodes(const Schedule *s, const FusionDecision *d, int **out) {
    int f[2] = {d->ga, d->gb}, n = 0;
    for (int k = 0; k < 2; k++)
        while (s->groups[f[k]].merged_into >= 0) f[k] = s->groups[f[k]].merged_into;
    int cap = s->groups[f[0]].n + (f[1] != f[0] ? s->groups[f[1]].n : 0);
    int *v = mi_xmalloc(sizeof *v * (size_t)(cap + 1));
    for (int k = 0; k < (f[1] != f[0] ? 2 : 1); k++)
        for (int i = 0; i < s->groups[f[k]].n; i++)
            if (sched_decision_side(s, d, s->groups[f[k]].nodes[i]) >= 0) v[n++] = s->groups[f[k]].nodes[i];
    qsort(v, n, sizeof *v, cmp_int);
    *out = v;
    return n;
}

const FusionDecision *sched_refusal(const Schedule *s, const Buffer *x, const Buffer *y) {
    int a = node_of_buf(s, x), b = node_of_buf(s, y);
    if (a < 0 || b < 0 || s->nodes[a].group == s->nodes[b].group) return NULL;
    const FusionDecision *why = NULL;
    for (int i = 0; i < s->ndecisions; i++) {
        const FusionDecision *d = &s->decisions[i];
        if (d->accepted) continue;
        int sa = sched_decision_side(s, d, a), sb = sched_decision_side(s, d, b);
        if (sa >= 0 && sb >= 0 && sa != sb) why = d;
    }
    return why;
}

void sched_reason_short(const char *reason, char *out, size_t n) {
    size_t len = strcspn(reason, ";");
    if (len > 48) {     /* cut at a character boundary (UTF-8 continuation bytes are 10xxxxxx) */
        len = 45;
        while (len > 0 && ((unsigned char)reason[len] & 0xC0) == 0x80) len--;
        snprintf(out, n, "%.*s…", (int)len, reason);
    } else snprintf(out, n, "%.*s", (int)len, reason);
}

/* "  buf0 (op0): FX nodes var_mean\n" */
static void origins_line(const Schedule *s, int node, StrBuf *sb) {
    const Buffer *b = s->nodes[node].buf;
    const Node **v;
    int n = ir_origin_nodes(s->ir, b, &v);
    sb_printf(sb, "  %s (%s): FX nodes", b->name, s->nodes[node].name);
    for (int i = 0; i < n; i++) sb_printf(sb, " %s", v[i]->name);
    if (!n) sb_put(sb, " (none: an input or a buffer made by lowering)");
    sb_put(sb, "\n");
    free(v);
}

static int kernel_of(const Schedule *s, int group) {
    for (int k = 0; k < s->nkernels; k++)
        for (int p = 0; p < s->kernels[k].n; p++)
            if (s->order[s->kernels[k].first + p] == group) return k;
    return -1;
}

/* Whether nodes a and b touch a common buffer (one reads what the other writes, or both read it). */
static bool share_buffer(const Schedule *s, int a, int b) {
    const DepSet *da = &s->nodes[a].deps, *db = &s->nodes[b].deps;
    for (int i = 0; i < da->nreads + da->nwrites; i++) {
        const Buffer *x = i < da->nreads ? da->reads[i].buf : da->writes[i - da->nreads].buf;
        for (int j = 0; j < db->nreads + db->nwrites; j++)
            if (x && x == (j < db->nreads ? db->reads[j].buf : db->writes[j - db->nreads].buf)) return true;
    }
    return false;
}

void sched_explain(const Schedule *s, int a, int b, StrBuf *sb) {
    const SchedNode *na = &s->nodes[a], *nb = &s->nodes[b];
    origins_line(s, a, sb);
    origins_line(s, b, sb);
    if (na->dead || nb->dead) {
        sb_printf(sb, "%s is never used: the scheduler removed it, so it fuses with nothing\n", (na->dead ? na : nb)->buf->name);
        return;
    }
    int ka = kernel_of(s, na->group), kb = kernel_of(s, nb->group);
    /* the decisions with the two on opposite sides: the one that joined them, the last refusal */
    const FusionDecision *acc = NULL, *rej = NULL;
    for (int i = 0; i < s->ndecisions; i++) {
        const FusionDecision *d = &s->decisions[i];
        int sa = sched_decision_side(s, d, a), sd = sched_decision_side(s, d, b);
        if (sa < 0 || sd < 0 || sa == sd || d->verb) continue;   /* (a foreach grouping fuses no loops) */
        if (d->accepted) acc = d; else rej = d;
    }
    if (na->group == nb->group) {
        sb_printf(sb, "fused: %s and %s are in one kernel, %s\n", na->buf->name, nb->buf->name, ka >= 0 ? s->kernels[ka].name : "?");
        if (acc) sb_printf(sb, "decided by: fuse %s + %s (score %lld bytes): %s\n", acc->a, acc->b, (long long)acc->score, acc->reason);
        else sb_printf(sb, "decided by: a decision past the first %d the list keeps (see `sched`)\n", s->ndecisions);
        return;
    }
    sb_printf(sb, "not fused: %s is in %s, %s in %s\n", na->buf->name, ka >= 0 ? s->kernels[ka].name : "?", nb->buf->name,
              kb >= 0 ? s->kernels[kb].name : "?");
    if (ka >= 0 && ka == kb && s->kernels[ka].combo)
        sb_put(sb, "(both are sub-kernels of one combo kernel: subnodes of one ForeachKernelSchedulerNode, made from "
                   "the items of a _foreach_* list; each keeps its own loop, the kernel's blocks are split between them)\n");
    else if (ka >= 0 && ka == kb)
        sb_put(sb, "(both groups run in one cpp kernel function, one loop nest each: Inductor's CppScheduling "
                   "kernel group; they are not one loop)\n");
    const SchedGroup *ga = &s->groups[na->group], *gb = &s->groups[nb->group];
    if (rej) {
        sb_printf(sb, "refused: %s + %s (score %lld bytes): %s\n", rej->a, rej->b, (long long)rej->score, rej->reason);
    } else if (ga->is_extern || gb->is_extern)
        sb_printf(sb, "rule: %s is an extern kernel call (%s); Inductor fuses no pointwise work into extern calls\n",
                  (ga->is_extern ? na : nb)->buf->name, (ga->is_extern ? ga : gb)->kernel_name);
    else if (s->ir->ctx && !s->ir->ctx->fusion)
        sb_put(sb, "rule: fusion is off (`set fusion on`): every node is its own kernel\n");
    else if (!share_buffer(s, a, b))
        sb_put(sb, "rule: they share no buffer (neither reads what the other writes, no common read), "
                   "so the scheduler never scored the pair (score 0: Inductor's score_fusion_memory)\n");
    else if (s->decisions_full)
        sb_printf(sb, "rule: no decision on this pair was kept (the list keeps the first %d; see `sched`)\n", s->ndecisions);
    else
        sb_put(sb, "rule: no fusion round tried their two groups together (a buffer read by more than 32 groups pairs "
                   "only neighbours in node order; the rounds stop after limit fusion_rounds)\n");
}

void sched_decision_pair(const Schedule *s, const FusionDecision *d, int *x, int *y) {
    int first[2] = {-1, -1}, *v, nv = decision_nodes(s, d, &v);
    for (int i = 0; i < nv; i++) {
        int side = sched_decision_side(s, d, v[i]);
        if (first[side] < 0) first[side] = v[i];
    }
    *x = first[0];
    *y = first[1];
    /* a producer on one side whose buffer a node of the other side reads */
    for (int i = 0; i < nv; i++) {
        int n = v[i], side = sched_decision_side(s, d, n);
        const DepSet *ds = &s->nodes[n].deps;
        for (int r = 0; r < ds->nreads; r++) {
            int p = ds->reads[r].buf ? node_of_buf(s, ds->reads[r].buf) : -1;
            if (p < 0 || p == n || sched_decision_side(s, d, p) != 1 - side) continue;
            *x = side == 1 ? p : n;
            *y = side == 1 ? n : p;
            free(v);
            return;
        }
    }
    free(v);
}

#define SIDE_LIST 16     /* nodes listed per side of a decision (the count says the rest) */

/* [{buf, op, fx: [...]}] of the nodes on `side` of d (the first SIDE_LIST); their count. The
 * fx list of node n is made once into fx_of[n] (ir_origin_nodes walks the graph), then copied. */
static int side_json(const Schedule *s, const FusionDecision *d, int side, cJSON *arr, cJSON **fx_of) {
    int count = 0, *v, nv = decision_nodes(s, d, &v);
    for (int i = 0; i < nv; i++) {
        int n = v[i];
        if (sched_decision_side(s, d, n) != side) continue;
        if (count++ >= SIDE_LIST) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "buf", s->nodes[n].buf->name);
        cJSON_AddStringToObject(o, "op", s->nodes[n].name);
        if (!fx_of[n]) {
            fx_of[n] = cJSON_CreateArray();
            const Node **on;
            int no = ir_origin_nodes(s->ir, s->nodes[n].buf, &on);
            for (int k = 0; k < no; k++) cJSON_AddItemToArray(fx_of[n], cJSON_CreateString(on[k]->name));
            free(on);
        }
        cJSON_AddItemToObject(o, "fx", cJSON_Duplicate(fx_of[n], 1));
        cJSON_AddItemToArray(arr, o);
    }
    free(v);
    return count;
}

char *sched_decisions_json(const Schedule *s) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "device", s->ir->ctx && s->ir->ctx->target == MI_DEV_CUDA ? "cuda" : "cpu");
    cJSON *ks = cJSON_AddArrayToObject(j, "kernels");
    for (int k = 0; k < s->nkernels; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", s->kernels[k].name);
        cJSON_AddBoolToObject(o, "extern", s->kernels[k].is_extern);
        cJSON *bs = cJSON_AddArrayToObject(o, "buffers");
        for (int p = 0; p < s->kernels[k].n; p++) {
            const SchedGroup *g = &s->groups[s->order[s->kernels[k].first + p]];
            for (int i = 0; i < g->n; i++) cJSON_AddItemToArray(bs, cJSON_CreateString(s->nodes[g->nodes[i]].buf->name));
        }
        cJSON_AddItemToArray(ks, o);
    }
    cJSON_AddBoolToObject(j, "truncated", s->decisions_full);
    cJSON *ds = cJSON_AddArrayToObject(j, "decisions");
    StrBuf sb;
    sb_init(&sb);
    cJSON **fx_of = mi_xcalloc((size_t)s->nnodes + 1, sizeof *fx_of);
    for (int i = 0; i < s->ndecisions; i++) {
        const FusionDecision *d = &s->decisions[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "n", i + 1);
        cJSON_AddStringToObject(o, "verdict", d->verb ? d->verb : d->accepted ? "fused" : "refused");
        cJSON_AddStringToObject(o, "a", d->a);
        cJSON_AddStringToObject(o, "b", d->b);
        cJSON_AddNumberToObject(o, "score", (double)d->score);
        cJSON_AddStringToObject(o, "reason", d->reason);
        cJSON_AddNumberToObject(o, "a_count", side_json(s, d, 0, cJSON_AddArrayToObject(o, "a_nodes"), fx_of));
        cJSON_AddNumberToObject(o, "b_count", side_json(s, d, 1, cJSON_AddArrayToObject(o, "b_nodes"), fx_of));
        int x, y;
        sched_decision_pair(s, d, &x, &y);
        if (x >= 0 && y >= 0) {      /* what `why X Y` prints in the shell, word for word */
            cJSON *w = cJSON_AddArrayToObject(o, "why");
            cJSON_AddItemToArray(w, cJSON_CreateString(s->nodes[x].buf->name));
            cJSON_AddItemToArray(w, cJSON_CreateString(s->nodes[y].buf->name));
            sb.len = 0;
            if (sb.s) sb.s[0] = 0;
            sched_explain(s, x, y, &sb);
            cJSON_AddStringToObject(o, "explain", sb.s ? sb.s : "");
        }
        cJSON_AddItemToArray(ds, o);
    }
    sb_free(&sb);
    for (int n = 0; n < s->nnodes; n++) cJSON_Delete(fx_of[n]);
    free(fx_of);
    char *txt = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return txt;
}
