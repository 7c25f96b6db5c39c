/* tour.h — a lesson of `tour` as data: parsed from a text file (examples/tours/NN-NAME.tour,
 * format in examples/tours/README.md) by repl/tour_lesson.c, run by repl/cmd_tour.c.
 *
 *     title: What an ATen FX graph is
 *     == The graph as PyTorch prints it          a step: its explanation first,
 *     An FX graph is ...                          then lines run in the session:
 *     > load {root}/examples/seed_example.py        '>' a shell line
 *     ! load {root}/tests/fixtures/logs/x.log       '!' a shell line that may fail
 *     @artifact LOG COMPILE_ID NAME                 '@' a tour directive (prints a log artifact)
 *     == exercise                                 last: the question and how it is checked
 *     What are the strides of permute?
 *     answer: 1, 64 | [1, 64]                     accepted answers, or
 *     answer-from: graph ~ permute: "f32\[[^]]*\]\[([^]]*)\]"   the answer the session computes
 *     check: patterns {answer}                    or a command run with the answer whose
 *     expect: - neg_1 \(pattern                   output must match every expect regex
 *     hint: ...
 */
#ifndef REPL_TOUR_H
#define REPL_TOUR_H

#include "base/mi.h"

/* One item of a step, shown/run in order. */
typedef enum { TI_TEXT, TI_RUN, TI_RUN_MAYFAIL, TI_DIRECTIVE } TourItemKind;
typedef struct TourItem {
    TourItemKind kind;
    char *text;              /* the paragraph, or the line to run (without its marker) */
    int line;                /* line in the lesson file */
} TourItem;

typedef struct TourStep {
    char *title;
    TourItem *items;
    int nitems;
    int line;
} TourStep;

typedef struct TourExercise {
    char *question;
    char **answers;          /* literal accepted answers (compared normalized) */
    int nanswers;
    char *from_cmd, *from_re;   /* answer-from: CMD ~ REGEX (group 1, else the whole match) */
    char **checks;           /* check: lines run with {answer} replaced, in order */
    int nchecks;
    char **expects;          /* each must match the checks' output */
    int nexpects;
    char *hint;
    int line;
} TourExercise;

struct Lesson {
    char *name;              /* "fx" for 01-fx.tour */
    char *path;
    char *title;
    TourStep *steps;
    int nsteps;
    TourExercise ex;
};
typedef struct Lesson Lesson;

/* Parse a lesson; NULL + ctx error naming path:line. `name` may be NULL (taken from the path). */
Lesson *lesson_parse(MiCtx *ctx, const char *text, size_t len, const char *path, const char *name);
Lesson *lesson_load(MiCtx *ctx, const char *path);
void lesson_free(Lesson *l);
/* The lesson name of a file: "examples/tours/03-passes.tour" -> "passes". malloc'd. */
char *lesson_name_of(const char *path);
/* The .tour files of dir, sorted by name (NULL-terminated, malloc'd); NULL + ctx error when
 * the directory cannot be read. */
char **lesson_files(MiCtx *ctx, const char *dir, int *n);
/* An answer as compared: lower case, no blanks, without surrounding brackets/quotes and a
 * final '.' ("[1, 64]" -> "1,64"). malloc'd. */
char *lesson_normalize(const char *s);

#endif
