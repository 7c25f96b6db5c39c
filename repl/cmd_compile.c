/* cmd_compile.c — shell commands for the back half of the pipeline: lower (FX -> loop IR),
 * ir (ir_pre_fusion style dump), sched (fusion groups and decisions), codegen (C source) and
 * exec (compile with cc, run, compare with the reference interpreter, time). The session keeps
 * the results in a CompileState that is dropped whenever the graph changes. */
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "viz/viz.h"

struct CompileState { int unused; };

void compile_state_free(CompileState *cs) { free(cs); }
char **compile_state_names(CompileState *cs) { (void)cs; return NULL; }

#define NOT_YET(name) \
    int name(Session *s, int argc, char **argv) { \
        return mi_err(s->ctx, "", 0, 0, "not available yet: lowering/IR/scheduler/codegen (core/lowering.h, core/ir.h, core/scheduler.h, core/codegen_c.h) are missing"); }
NOT_YET(cmd_lower) NOT_YET(cmd_ir) NOT_YET(cmd_sched) NOT_YET(cmd_codegen) NOT_YET(cmd_exec)

int compile_state_bufgraph(Session *s, VizBufGraph *out, bool with_groups) {
    (void)out; (void)with_groups;
    return mi_err(s->ctx, "", 0, 0, "not available yet: the IR (core/ir.h) is missing");
}
void compile_bufgraph_free(VizBufGraph *bg) { (void)bg; }
