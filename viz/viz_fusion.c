/* viz_fusion.c — fusion groups as clusters: the buffer graph where every buffer that the
 * scheduler fused into kernel K sits inside subgraph "cluster_K" labelled with the kernel name
 * and the group's description (e.g. the fusion reason). */
#include <stdlib.h>
#include <string.h>
#include "viz_internal.h"

VizGraph *viz_fusion(MiCtx *ctx, const VizBufGraph *bg, const VizOptions *opt) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    VizGraph *vg = vizg_new(ctx, "fusion", opt);
    if (!vg) return NULL;
    /* Members go into their cluster first; a name claimed by a cluster keeps it. */
    for (int k = 0; k < bg->ngroups; k++) {
        const VizGroup *grp = &bg->groups[k];
        StrBuf lab; sb_init(&lab);
        viz_escape_sb(&lab, grp->kernel);
        if (grp->label && *grp->label) { sb_put(&lab, "\\n"); viz_escape_sb(&lab, grp->label); }
        Agraph_t *sub = vizg_cluster(vg, grp->kernel, lab.s);
        sb_free(&lab);
        for (int m = 0; m < grp->nmembers; m++) {
            const VizBufNode *bn = NULL;
            for (int i = 0; i < bg->n; i++)
                if (strcmp(bg->nodes[i].name, grp->members[m]) == 0) { bn = &bg->nodes[i]; break; }
            StrBuf nl; sb_init(&nl);
            viz_escape_sb(&nl, grp->members[m]);
            if (bn && bn->label && *bn->label) { sb_put(&nl, "\\n"); viz_escape_sb(&nl, bn->label); }
            vizg_node(vg, sub, grp->members[m], nl.s, bn ? bn->cls : VIZ_POINTWISE);
            sb_free(&nl);
        }
    }
    for (int i = 0; i < bg->n; i++) {
        if (agnode(vg->g, (char *)bg->nodes[i].name, 0)) continue;
        StrBuf nl; sb_init(&nl);
        viz_escape_sb(&nl, bg->nodes[i].name);
        if (bg->nodes[i].label && *bg->nodes[i].label) { sb_put(&nl, "\\n"); viz_escape_sb(&nl, bg->nodes[i].label); }
        vizg_node(vg, NULL, bg->nodes[i].name, nl.s, bg->nodes[i].cls);
        sb_free(&nl);
    }
    for (int i = 0; i < bg->nedges; i++)
        vizg_edge(vg, bg->edges[i].from, bg->edges[i].to, bg->edges[i].label);
    return vg;
}
