/* lineedit.h — reading command lines: GNU readline (HAVE_READLINE) or libedit (HAVE_LIBEDIT)
 * with history in ~/.minductor_history ($MINDUCTOR_HISTORY overrides) and tab completion of
 * commands, pass names, node/buffer names, show/set keywords and files; plain getline when
 * neither library is there or the input is not a terminal. */
#ifndef REPL_LINEEDIT_H
#define REPL_LINEEDIT_H

#include "session.h"

typedef struct LineEditor LineEditor;

LineEditor *le_open(Session *s, bool interactive);
/* Next line without its newline (malloc'd), NULL at end of input. */
char *le_read(LineEditor *le, const char *prompt);
void le_close(LineEditor *le);     /* saves the history */

/* Completion candidates for the word `prefix` in `line` (the word starts at `start`):
 * malloc'd NULL-terminated array of malloc'd strings; NULL when the word is a file name. */
char **le_candidates(Session *s, const char *line, int start, const char *prefix);

#endif
