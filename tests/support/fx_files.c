/* fx_files.c — finding the FX graph texts of tests/fixtures for the loader tests (see
 * fx_files.h). */
#define _GNU_SOURCE
#include "tests/support/fx_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A graph dump as PyTorch names it in a torch-cases run or a TORCH_COMPILE_DEBUG directory. */
static bool graph_dump_name(const char *name) {
    return strcmp(name, "pre_post_grad.py") == 0 || strcmp(name, "post_post_grad.py") == 0 ||
           strcmp(name, "fx_graph_readable.py") == 0;
}

void fx_files_walk(const char *dir, FxFiles *f, bool any_py) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) fx_files_walk(path, f, any_py);
        else if (graph_dump_name(e->d_name) || (any_py && strstr(e->d_name, ".py"))) {
            if (f->n == f->cap) { f->cap = f->cap ? f->cap * 2 : 64; f->v = realloc(f->v, f->cap * sizeof *f->v); }
            f->v[f->n++] = strdup(path);
        }
    }
    closedir(d);
}

void fx_files_free(FxFiles *f) {
    for (int i = 0; i < f->n; i++) free(f->v[i]);
    free(f->v);
    memset(f, 0, sizeof *f);
}
