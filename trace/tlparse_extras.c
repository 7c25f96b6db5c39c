/* tlparse_extras.c — minductor's pages beyond tlparse's, all under minductor/ so that the rest
 * of the output directory is exactly tlparse's: per-compile pass pages (tlparse_passes.c),
 * guards and recompiles per frame (tlparse_guards.c). tl_render_extras writes them;
 * tl_index_extras adds their sections to index.html. */
#include "tlparse_internal.h"

void tl_render_extras(Tl *t) {
    if (t->opt->no_artifact_files) return;
    for (int i = 0; i < t->n_c; i++) tl_passes_page(t, &t->c[i]);
    tl_prov_pages(t);
}

void tl_index_extras(Tl *t, StrBuf *b) {
    (void)t;
    (void)b;
}
