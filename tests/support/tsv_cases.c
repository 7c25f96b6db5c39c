/* tsv_cases.c — a table of recorded "INPUT\tWANT" texts checked against our printer (see
 * tsv_cases.h). */
#include "tests/support/tsv_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits the file in place line by line; the tab ends the input, the rest of the line is the
 * text PyTorch's side printed. Example line: "x + 2*y\t2*y + x". */
TsvTally tsv_compare(MiCtx *ctx, const char *path, const char *label, TsvOurs ours, void *user) {
    TsvTally t = {-1, 0};
    char *text = mi_read_file(ctx, path, NULL);
    if (!text) return t;
    t.n = 0;
    for (char *line = text, *nl; *line; line = nl) {
        nl = strchr(line, '\n');
        if (nl) *nl++ = 0;
        else nl = line + strlen(line);
        char *tab = strchr(line, '\t');
        if (line[0] == '#' || !tab) continue;
        *tab = 0;
        StrBuf sb;
        sb_init(&sb);
        t.n++;
        if (ours(ctx, line, &sb, user) && sb.s && !strcmp(sb.s, tab + 1)) t.same++;
        else if (t.n - t.same <= 5) {
            fflush(stdout);
            fprintf(stderr, "# %s: %s \"%s\", ours \"%s\"\n", line, label, tab + 1, sb.s ? sb.s : "");
        }
        sb_free(&sb);
    }
    free(text);
    return t;
}
