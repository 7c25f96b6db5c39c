/* pass_dce.c — dead code elimination, as torch.fx's eliminate_dead_code: a node with no
 * users that has no side effect (not a placeholder, output, in-place op, assert) is removed.
 * Inductor runs it at the start of the post-grad passes; one backward sweep, O(n). */
#include "fx_passes/passes.h"

#include <stdlib.h>

typedef struct { int *live_users; } DceState;

static void mark_used(Node *in, void *ud) {
    DceState *st = ud;
    if (in->id >= 0) st->live_users[in->id]++;
}

int pass_dce(PassCtx *pc, Graph *g) {
    DceState st = {mi_xcalloc(g->n + 1, sizeof(int))};
    bool *dead = mi_xcalloc(g->n + 1, sizeof(bool));
    int ndead = 0;
    for (int i = g->n - 1; i >= 0; i--) {
        Node *n = g->nodes[i];
        if (!pu_is_impure(n) && st.live_users[i] == 0) {
            dead[i] = true;
            ndead++;
            pass_note(pc, '-', n->name, "dead code");
            continue;
        }
        pu_for_each_input(n, mark_used, &st);
    }
    if (ndead) pu_remove_nodes(g, dead);
    free(dead);
    free(st.live_users);
    return 0;
}
