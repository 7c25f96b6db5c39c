/* viz_fusion.c — buffer pictures with groups: the fusion picture (every buffer that the
 * scheduler fused into kernel K sits inside subgraph "cluster_K", labelled with the kernel name
 * and the group's description); viz_ir.c draws only the cond-branch groups. A cond branch is a
 * dashed cluster "cluster_sub_<name>" holding its buffers, with its kernels' clusters nested
 * inside. Large fusion pictures (more buffers than opt->collapse_over) collapse each kernel to
 * one box named after it, with the edges between kernels. An edge between two kernels that the
 * scheduler tried to fuse and refused carries the refusal: its head in red on the edge
 * ("memory deps did not match"), Inductor's whole WhyNoFuse text as the SVG tooltip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "viz_internal.h"

/* The cluster of each group (NULL when not drawn), nested through `parent`. */
static Agraph_t **make_clusters(VizGraph *vg, const VizBufGraph *bg, bool subgraphs_only) {
    Agraph_t **cl = mi_xcalloc(bg->ngroups ? bg->ngroups : 1, sizeof *cl);
    for (int k = 0; k < bg->ngroups; k++) {
        const VizGroup *grp = &bg->groups[k];
        if (subgraphs_only && !grp->subgraph) continue;
        Agraph_t *parent = grp->parent > 0 && grp->parent <= k ? cl[grp->parent - 1] : NULL;
        if (grp->parent > 0 && !parent) continue;        /* its parent is not drawn */
        StrBuf lab; sb_init(&lab);
        viz_escape_sb(&lab, grp->subgraph ? "" : grp->kernel);
        if (grp->label && *grp->label) { if (!grp->subgraph) sb_put(&lab, "\\n"); viz_escape_sb(&lab, grp->label); }
        char name[600];
        snprintf(name, sizeof name, "cluster_%s", grp->kernel);
        cl[k] = agsubg(parent ? parent : vg->g, name, 1);
        vizg_set(cl[k], "label", lab.s ? lab.s : "");
        /* the title in the top-left corner, with room under it: edges run to the members'
         * centres, so they pass beside the title rather than through it */
        vizg_set(cl[k], "labeljust", "l");
        vizg_set(cl[k], "margin", "14");
        if (grp->subgraph) {
            vizg_set(cl[k], "style", "rounded,dashed");
            vizg_set(cl[k], "color", "#3c78d8");
        } else {
            vizg_set(cl[k], "style", "rounded,filled");
            vizg_set(cl[k], "fillcolor", "#f7f7f7");
            vizg_set(cl[k], "color", "#888888");
        }
        sb_free(&lab);
    }
    return cl;
}

static const VizBufNode *find_buf(const VizBufGraph *bg, const char *name) {
    for (int i = 0; i < bg->n; i++)
        if (strcmp(bg->nodes[i].name, name) == 0) return &bg->nodes[i];
    return NULL;
}

static void buf_node(VizGraph *vg, Agraph_t *where, const VizBufGraph *bg, const char *name) {
    const VizBufNode *bn = find_buf(bg, name);
    StrBuf nl; sb_init(&nl);
    viz_escape_sb(&nl, name);
    if (bn && bn->label && *bn->label) { sb_put(&nl, "\\n"); viz_escape_sb(&nl, bn->label); }
    vizg_node(vg, where, name, nl.s, bn ? bn->cls : VIZ_POINTWISE);
    sb_free(&nl);
}

/* Groups' members go into their clusters (deepest last, so a kernel inside a branch wins);
 * then the remaining buffers at the top; then the edges (through alias when collapsed). */
VizGraph *viz_grouped(MiCtx *ctx, const VizBufGraph *bg, const char *title, const VizOptions *opt,
                         bool subgraphs_only) {
    VizOptions def;
    if (!opt) { viz_default_options(&def); opt = &def; }
    VizGraph *vg = vizg_new(ctx, title, opt);
    if (!vg) return NULL;
    bool collapse = !subgraphs_only && opt->collapse_over > 0 && bg->n > opt->collapse_over;
    Agraph_t **cl = make_clusters(vg, bg, subgraphs_only);
    const char **alias = mi_xcalloc(bg->n ? bg->n : 1, sizeof *alias);   /* buffer -> kernel box */
    for (int k = 0; collapse && k < bg->ngroups; k++)
        if (cl[k] && !bg->groups[k].subgraph)
            for (int m = 0; m < bg->groups[k].nmembers; m++)
                for (int i = 0; i < bg->n; i++)
                    if (!strcmp(bg->nodes[i].name, bg->groups[k].members[m])) alias[i] = bg->groups[k].kernel;
    for (int k = 0; k < bg->ngroups; k++) {
        const VizGroup *grp = &bg->groups[k];
        if (!cl[k]) continue;
        if (collapse && !grp->subgraph) {
            /* one box per kernel, inside its parent (a branch) if any */
            Agraph_t *parent = grp->parent > 0 ? cl[grp->parent - 1] : NULL;
            agdelsubg(parent ? parent : vg->g, cl[k]);
            cl[k] = NULL;
            StrBuf lab; sb_init(&lab);
            viz_escape_sb(&lab, grp->kernel);
            sb_printf(&lab, "\\n(%s)", grp->label ? grp->label : "");
            vizg_node(vg, parent, grp->kernel, lab.s, VIZ_GROUP);
            sb_free(&lab);
            continue;
        }
        for (int m = 0; m < grp->nmembers; m++) {
            bool in_kernel = false;             /* drawn by a kernel group inside this branch */
            if (collapse && grp->subgraph)
                for (int i = 0; i < bg->n; i++)
                    if (!strcmp(bg->nodes[i].name, grp->members[m]) && alias[i]) in_kernel = true;
            if (!in_kernel) buf_node(vg, cl[k], bg, grp->members[m]);
        }
    }
    for (int i = 0; i < bg->n; i++) {
        if (alias[i] || agnode(vg->g, (char *)bg->nodes[i].name, 0)) continue;
        buf_node(vg, NULL, bg, bg->nodes[i].name);
    }
    for (int i = 0; i < bg->nedges; i++) {
        const char *from = bg->edges[i].from, *to = bg->edges[i].to;
        for (int j = 0; j < bg->n; j++) {
            if (!alias[j]) continue;
            if (!strcmp(bg->nodes[j].name, from)) from = alias[j];
            if (!strcmp(bg->nodes[j].name, to)) to = alias[j];
        }
        Agedge_t *e = vizg_edge(vg, from, to, bg->edges[i].label);
        if (!e || !bg->edges[i].label) continue;
        if (!bg->edges[i].tooltip) { vizg_set(e, "style", "dashed"); continue; }   /* operand / result of a branch */
        /* a refused fusion: the short reason on the edge (also when collapsed kernels share an
         * edge another buffer pair made first), the full text on hover */
        const char *had = agget(e, "label");
        if (!had || !*had) vizg_set(e, "label", bg->edges[i].label);
        vizg_set(e, "tooltip", bg->edges[i].tooltip);
        vizg_set(e, "labeltooltip", bg->edges[i].tooltip);
        vizg_set(e, "color", "#cc4125");
        vizg_set(e, "fontcolor", "#cc4125");
        vizg_set(e, "fontsize", "10");
        vizg_set(e, "fontname", "Helvetica");
    }
    free(alias);
    free(cl);
    return vg;
}

VizGraph *viz_fusion(MiCtx *ctx, const VizBufGraph *bg, const VizOptions *opt) {
    return viz_grouped(ctx, bg, "fusion", opt, false);
}
