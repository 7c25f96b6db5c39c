/* graph_diff.h — what changed between two graphs: a unified-style text diff of their FX
 * prints, and a structural change list by node name (added / removed / rewritten / moved).
 * The pass manager shows it per step; viz colours a pass diff with it. */
#ifndef GRAPH_DIFF_H
#define GRAPH_DIFF_H

#include "fx/graph.h"

/* Unified-style diff of two texts, line based ("--- a", "+++ b", "@@ ... @@", ' ', '-', '+'
 * lines, `context` lines around changes). Returns malloc'd text; "" when equal. */
/* context: lines kept around each change; a value past the line count (1 << 30) keeps every line. */
char *text_diff(const char *a, const char *b, const char *name_a, const char *name_b, int context);

/* Diff of the FX prints (without stack comments) of two graphs, both in after's print form
 * (fx_print_as): a pass that changes nothing gives "". malloc'd. */
char *graph_diff_text(const Graph *before, const Graph *after);

typedef enum { GD_ADDED, GD_REMOVED, GD_REWRITTEN, GD_MOVED } GraphChangeKind;
typedef struct GraphChange { GraphChangeKind kind; const char *name; } GraphChange;

/* Structural changes by node name. `name` points into before (removed) or after (others).
 * Rewritten: same name, different target/args/meta. Moved: same node, order changed relative to
 * its neighbours (a node is 'moved' when it is not on the longest common subsequence of kept
 * nodes). Returns a malloc'd array, count in *n (may be 0). */
GraphChange *graph_diff(const Graph *before, const Graph *after, int *n);

/* The right-hand side of a node as printed, "aten.add.Tensor(x, 1)" with node names; used to
 * compare nodes. Appended to sb. */
void graph_node_rhs(const Node *n, StrBuf *sb);

#endif
