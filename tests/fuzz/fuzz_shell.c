/* fuzz_shell.c — libFuzzer target: the shell's command-line word splitter (repl/commands.c)
 * and command lookup never crash, leak or hang.
 *
 * Commands themselves are not run (they load files, write reports, compile C); helper "repl"
 * tests them with random command sequences. Checked differentially: re-quoting the words
 * split_words returns and splitting again gives the same words (so what a user quotes is what
 * a command receives). command_find / command_suggest must accept every word. */
#include "repl/commands.h"
#include <stdlib.h>
#include <string.h>

/* "word" with \ and " escaped: split_words reads it back as word. */
static void quote(StrBuf *b, const char *w) {
    sb_putc(b, '"');
    for (const char *p = w; *p; p++) {
        if (*p == '"' || *p == '\\') sb_putc(b, '\\');
        sb_putc(b, *p);
    }
    sb_putc(b, '"');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *line = malloc(size + 1);
    memcpy(line, data, size);
    line[size] = 0;
    int argc = -1;
    char **argv = split_words(line, &argc);
    if (!argv || argc < 0 || argv[argc] != NULL) abort();
    StrBuf b;
    sb_init(&b);
    sb_put(&b, "");
    for (int i = 0; i < argc; i++) {
        if (!argv[i]) abort();
        (void)command_find(argv[i]);
        (void)command_suggest(argv[i]);
        if (i) sb_putc(&b, ' ');
        quote(&b, argv[i]);
    }
    int argc2 = -1;
    char **argv2 = split_words(b.s, &argc2);
    if (argc2 != argc) abort();
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], argv2[i]) != 0) abort();
    free_words(argv2, argc2);
    free_words(argv, argc);
    sb_free(&b);
    free(line);
    return 0;
}
