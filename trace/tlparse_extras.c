/* tlparse_extras.c — minductor's pages beyond tlparse's, all under minductor/ so that the rest
 * of the output directory is exactly tlparse's: per-compile pass pages (tlparse_passes.c),
 * guards and recompiles per frame (tlparse_guards.c), why pages of fusion decisions
 * (tlparse_why.c). tl_render_extras writes them;
 * tl_index_extras adds their sections to index.html. */
#include "tlparse_internal.h"

void tl_render_extras(Tl *t) {
    if (t->opt->no_artifact_files) return;
    for (int i = 0; i < t->n_c; i++) tl_passes_page(t, &t->c[i]);
    tl_prov_pages(t);
    tl_guards_pages(t);
    tl_why_pages(t);
}

/* index.html's "Frames" section: each frame's compiles, recompiles, a link to its page. */
void tl_index_extras(Tl *t, StrBuf *b) {
    bool any = false;
    for (int i = 0; i < t->n_c; i++) {
        const TlCompile *c = &t->c[i];
        if (c->frame_id < 0 || c->id[0] == '!') continue;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++) seen = t->c[k].frame_id == c->frame_id && t->c[k].id[0] != '!';
        if (seen) continue;
        if (!any) sb_put(b, "<h2>Frames: guards and recompiles</h2>\n<ul>\n");
        any = true;
        int n = 0, nre = 0;
        for (int k = i; k < t->n_c; k++)
            if (t->c[k].frame_id == c->frame_id && t->c[k].id[0] != '!') { n++; nre += t->c[k].recompile_full != NULL; }
        sb_printf(b, "<li><a href=\"minductor/frame_%d.html\">frame %d</a>: %d compile(s), %d with recompile reasons</li>\n",
                  c->frame_id, c->frame_id, n, nre);
    }
    if (any) sb_put(b, "</ul>\n");
}
