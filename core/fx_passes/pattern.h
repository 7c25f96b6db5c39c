/* pattern.h — the pattern matcher: small op subgraphs with wildcards and constraints,
 * replaced by other subgraphs. Used by pass_pattern_0..2 (core/fx_passes/pattern_builtin.c holds the
 * rewrites Inductor made on the real cases) and by user pattern files (core/fx_passes/pattern_file.c,
 * format in core/fx_passes/patterns.md).
 *
 * A Pattern is a list of statements `name = target(args...)`; arguments are other statement
 * names, wildcards (names not defined by a statement: they bind to any value, a node or a
 * constant, the same one at every use), `_` (anything, not bound) or constants. The last
 * statement is the anchor: matching starts at every graph node with the anchor's target and
 * walks the arguments backward. Nodes matched by non-anchor statements must have no users
 * outside the match (they die with it).
 *
 * The replacement is another statement list over the wildcards, plus `return X` naming the
 * value that replaces the anchor (a new statement or a wildcard). New nodes are named like
 * Inductor's (`mm_default`, `add_tensor`) and carry no stack. When a wildcard replaces the
 * anchor directly (x*1 -> x), the anchor's meta must equal the wildcard's (no broadcast, no
 * dtype change); otherwise the match is refused.
 *
 * `retarget` rules change a node's target in place (aten.view.default -> aten.reshape.default),
 * keeping its name and stack, as Inductor's view_to_reshape does. */
#ifndef PATTERN_H
#define PATTERN_H

#include "fx_passes/passes.h"

typedef struct PatArg PatArg;
typedef enum { PA_REF, PA_WILD, PA_ANY, PA_CONST, PA_LIST } PatArgKind;
struct PatArg {
    PatArgKind kind;
    int ref;             /* PA_REF: statement index; PA_WILD: wildcard index */
    Value c;             /* PA_CONST (scalars, None, strings) */
    int n; PatArg *items;   /* PA_LIST */
};

typedef struct PatStmt {
    char *name;
    char *target;
    int nargs; PatArg *args;
} PatStmt;

typedef enum { PDEV_ANY, PDEV_CPU, PDEV_CUDA } PatDevice;

typedef struct Pattern {
    char *name;
    char *doc;
    PatDevice device;
    bool is_retarget;             /* retarget from -> to */
    char *from, *to;
    PatStmt *match; int nmatch;
    PatStmt *repl; int nrepl;
    PatArg ret;                   /* PA_REF into repl or PA_WILD */
    char **wild; int nwild;       /* wildcard names */
    /* Extra constraint in C (built-ins); NULL = none. binds[] are the wildcard values. */
    bool (*check)(const Graph *g, Node *anchor, const Value *binds);
} Pattern;

struct PatternSet {
    Pattern *pats; int n, cap;
};

void patternset_init(PatternSet *ps);
void patternset_free(PatternSet *ps);
/* Free n arguments (lists recursively, strings) and the array (the pattern file parser's
 * error path; patternset_free uses it for every statement). */
void patargs_free(PatArg *a, int n);

/* Parse pattern text (core/fx_passes/patterns.md) into ps; `source` names it in error messages. */
int pattern_parse(MiCtx *ctx, PatternSet *ps, const char *text, const char *source);
int pattern_load_file(MiCtx *ctx, PatternSet *ps, const char *path);

/* Apply every pattern of ps once over g (one forward sweep per pattern; a match's
 * replacement is not re-matched). Returns number of rewrites, -1 on error. */
int pattern_apply(PassCtx *pc, Graph *g, const PatternSet *ps);

/* ---- Inductor's own patterns, written in C (core/fx_passes/post_grad_patterns.c) ---- */

/* What a built-in pattern matched: the graph nodes of the pattern (all of them; the
 * mutation-region check looks at these) and values it bound (pattern-specific). */
typedef struct PatMatch {
    Node *nodes[8]; int nnodes;
    Value binds[4];
} PatMatch;

/* One register_graph_pattern / register_replacement entry. match() looks at the anchor and
 * the nodes around it (and runs the pattern's extra_check); replace() rewrites: 1 done, 0
 * declined (the handler returned without a change), -1 error. */
typedef struct GraphPatternEntry {
    const char *name;
    const char *anchors[3];          /* targets the match starts from, NULL-terminated */
    bool (*match)(PassCtx *pc, Graph *g, Node *anchor, PatMatch *m);
    int (*replace)(PassCtx *pc, Graph *g, PatMatch *m);
} GraphPatternEntry;

/* mkldnn_fusion.py's unary lowering patterns (core/fx_passes/mkldnn_fusion.c): the match of
 * unary(mkldnn._convolution_pointwise(..., 'none', [], '')) from the unary node, and its
 * replacement by the handler node "fn". */
bool mkldnn_match_unary(PassCtx *pc, Graph *g, Node *anchor, PatMatch *m);
int mkldnn_replace_unary(PassCtx *pc, Graph *g, PatMatch *m);

/* The entries of pass_patterns[group] in registration order (NULL, *n = 0 for none). */
const GraphPatternEntry *post_grad_pattern_entries(int group, int *n);
/* PatternMatcherPass.apply: every node whose target anchors some entry, last node first
 * (in the order before any rewrite; erased ones skipped); at each, the entries for its target
 * in order; a match whose nodes lie in different mutation regions (an in-place op between
 * them) is dropped. Returns the number of rewrites or -1. */
int pattern_entries_apply(PassCtx *pc, Graph *g, const GraphPatternEntry *e, int n);
/* utils.py is_pointwise_use: use is a pointwise op (torch.Tag.pointwise), or a getitem / view
 * whose own uses all are (recursively). depth: 0. */
bool pattern_is_pointwise_use(const Node *use, int depth);
/* The same with is_pointwise_fn: an op for which extra(use) is true counts as pointwise too
 * (lowering.py cat: aten.cat and aten.constant_pad_nd uses). */
bool pattern_is_pointwise_use_or(const Node *use, bool (*extra)(const Node *), int depth);

/* The built-in groups (core/fx_passes/pattern_builtin.c), run by pass_pattern_0..2. */
int pattern_builtin_group(PassCtx *pc, Graph *g, int group);

/* Helper for built-ins: create a call node before `anchor` named like Inductor's new nodes,
 * with no stack, meta inferred. NULL with ctx error. */
Node *pattern_new_node(PassCtx *pc, Graph *g, Node *anchor, const char *target,
                       const Value *args, int nargs, const Kwarg *kw, int nkw);

/* Why PATTERN does (not) match at NODE of g (the shell's `why-not`): for a user pattern the first
 * place the match fails (a statement whose target differs, a bound wildcard used for another
 * value, a matched node used outside the match, the extra check); for Inductor's entries which
 * nodes it starts from, or that its match refused. Text appended to out; -1 + ctx error for an
 * unknown node or pattern. */
int pattern_why_not(MiCtx *ctx, const PatternSet *user, Graph *g, Device dev, const char *pattern,
                    const char *node, StrBuf *out);

#endif
