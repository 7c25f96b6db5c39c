/* session_provenance.c — the inductor_provenance_tracking_node_mappings artifact of a shell
 * session's trace, in Inductor's format (torch/_inductor/debug.py, version 2): which FX node of
 * the loaded graph became which nodes after the post-grad passes (preToPost / postToPre) and
 * which kernel, by debug handle "NAME:K" (the K-th kernel call of the generated code, the
 * number its "[Provenance debug handles]" comment carries), computes which post-grad nodes
 * (cppCodeToPost / postToCppCode). minductor adds irToPost / postToIr (buffer names), which
 * tlparse ignores and the report's provenance view uses.
 *
 * Pre -> post follows the pass steps: a node keeps its name through passes that do not replace
 * it; a node a pattern match added comes from the nodes that match removed (PassChange.match).
 * Kernel -> post comes from the IR origins of the kernel's buffers (core/ir/ir_origins.c). */
#include <stdlib.h>
#include <string.h>
#include <cJSON.h>
#include "session.h"
#include "scheduler/scheduler.h"

/* name -> list of pre-graph names, a flat table (graphs have up to a few thousand nodes). */
typedef struct Orig { const char *name; char **pre; int n; } Orig;
typedef struct OrigMap { Orig *v; int n; } OrigMap;

static Orig *om_find(OrigMap *m, const char *name) {
    for (int i = m->n - 1; i >= 0; i--) if (!strcmp(m->v[i].name, name)) return &m->v[i];
    return NULL;
}

static void om_add_pre(Orig *o, const char *pre) {
    for (int i = 0; i < o->n; i++) if (!strcmp(o->pre[i], pre)) return;
    o->pre = mi_xrealloc(o->pre, sizeof *o->pre * (size_t)(o->n + 1));
    o->pre[o->n++] = mi_xstrdup(pre);
}

static Orig *om_set(OrigMap *m, const char *name) {
    Orig *o = om_find(m, name);
    if (o) { for (int i = 0; i < o->n; i++) free(o->pre[i]); o->n = 0; return o; }
    m->v = mi_xrealloc(m->v, sizeof *m->v * (size_t)(m->n + 1));
    o = &m->v[m->n++];
    o->name = name;
    o->pre = NULL;
    o->n = 0;
    return o;
}

static void om_free(OrigMap *m) {
    for (int i = 0; i < m->n; i++) {
        for (int k = 0; k < m->v[i].n; k++) free(m->v[i].pre[k]);
        free(m->v[i].pre);
    }
    free(m->v);
}

/* Add "key": [..., val] to object o (the list made on first use, no duplicates). */
static void put(cJSON *o, const char *key, const char *val) {
    cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a) a = cJSON_AddArrayToObject(o, key);
    cJSON *x;
    cJSON_ArrayForEach(x, a) if (!strcmp(x->valuestring, val)) return;
    cJSON_AddItemToArray(a, cJSON_CreateString(val));
}

char *session_provenance_json(Session *s, const Schedule *sc) {
    const Graph *pre = s->graph, *post = sc->ir->graph;
    if (!pre || !post) return NULL;
    OrigMap om = {0};
    for (int i = 0; i < pre->n; i++)
        if (pre->nodes[i]->kind == N_CALL_FUNCTION) om_add_pre(om_set(&om, pre->nodes[i]->name), pre->nodes[i]->name);
    int cur = s->pm ? pm_cursor(s->pm) : 0;
    for (int st = 0; st < cur; st++) {
        const PassStep *ps = pm_step_record(s->pm, st);
        if (!ps) continue;
        for (int k = 0; k < ps->nchanges; k++) {
            const PassChange *c = &ps->changes[k];
            if (c->kind != '+') continue;
            /* what the added node comes from: the nodes its match removed or rewrote */
            Orig tmp = {c->node, NULL, 0};
            for (int j = 0; c->match && j < ps->nchanges; j++) {
                const PassChange *d = &ps->changes[j];
                if (d->match != c->match || d->kind == '+') continue;
                Orig *from = om_find(&om, d->node);
                for (int q = 0; from && q < from->n; q++) om_add_pre(&tmp, from->pre[q]);
            }
            Orig *o = om_set(&om, c->node);
            o->pre = tmp.pre;
            o->n = tmp.n;
        }
    }
    cJSON *j = cJSON_CreateObject();
    cJSON *p2p = cJSON_AddObjectToObject(j, "preToPost"), *p2r = cJSON_AddObjectToObject(j, "postToPre");
    cJSON *k2p = cJSON_AddObjectToObject(j, "cppCodeToPost"), *p2k = cJSON_AddObjectToObject(j, "postToCppCode");
    cJSON *i2p = cJSON_AddObjectToObject(j, "irToPost"), *p2i = cJSON_AddObjectToObject(j, "postToIr");
    for (int i = 0; i < post->n; i++) {
        const Node *n = post->nodes[i];
        if (n->kind != N_CALL_FUNCTION) continue;
        Orig *o = om_find(&om, n->name);
        for (int q = 0; o && q < o->n; q++) {
            put(p2r, n->name, o->pre[q]);
            put(p2p, o->pre[q], n->name);
        }
    }
    const IrModule *m = sc->ir;
    for (int k = 0; k < sc->nkernels; k++) {      /* debug handle K: the K-th kernel call */
        const SchedKernel *kn = &sc->kernels[k];
        char handle[300];
        snprintf(handle, sizeof handle, "%s:%d", kn->name ? kn->name : "kernel", k + 1);
        for (int gi = 0; gi < kn->n; gi++) {
        const SchedGroup *g = &sc->groups[sc->order[kn->first + gi]];
        for (int b = 0; b < g->n; b++) {
            const Buffer *buf = sc->nodes[g->nodes[b]].buf;
            const Node **v;
            int nv = ir_origin_nodes(m, buf, &v);
            for (int q = 0; q < nv; q++) {
                put(k2p, handle, v[q]->name);
                put(p2k, v[q]->name, handle);
                put(i2p, buf->name, v[q]->name);
                put(p2i, v[q]->name, buf->name);
            }
            free(v);
        }
        }
    }
    cJSON_AddNumberToObject(j, "version", 2.0);
    char *txt = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    om_free(&om);
    return txt;
}
