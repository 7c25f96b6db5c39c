/* fx_files.h — the FX graph texts under tests/fixtures that the loader tests go through
 * (test_fx_load, test_graph_json): PyTorch's own printed graphs in tests/fixtures/torch-cases
 * (pre_post_grad.py, post_post_grad.py, fx_graph_readable.py) and the .py files of
 * tests/fixtures/fx. Test support only (tests/support/ -> libtestsupport.a). */
#ifndef FX_FILES_H
#define FX_FILES_H

#include <stdbool.h>

typedef struct FxFiles { char **v; int n, cap; } FxFiles;   /* paths, malloc'd */

/* Append the FX texts under dir, depth first in directory order: files named as PyTorch's
 * graph dumps, and with any_py every .py file. Example: fx_files_walk("tests/fixtures/fx",
 * &f, true). */
void fx_files_walk(const char *dir, FxFiles *f, bool any_py);
void fx_files_free(FxFiles *f);

#endif
