/* avail.h — which pipeline modules the shell can use. The shell is built while other modules
 * are still being written: a module's commands are compiled in when its header exists, and
 * print "not available yet: ..." otherwise. */
#ifndef REPL_AVAIL_H
#define REPL_AVAIL_H

#if __has_include("passes.h")
#define HAVE_PASSES 1
#endif
#if __has_include("graph_diff.h")
#define HAVE_GRAPH_DIFF 1
#endif
#if __has_include("trace/trace.h")
#define HAVE_TRACE 1
#endif
/* The back end is used once its implementation files exist too (a header alone would not link). */
#if __has_include("ir.h") && __has_include("ir.c") && __has_include("lowering.c") && \
    __has_include("ir_print.c") && __has_include("ir_deps.c")
#define HAVE_IR 1
#endif
#if defined(HAVE_IR) && __has_include("scheduler.h") && __has_include("scheduler.c")
#define HAVE_SCHED 1
#endif
#if defined(HAVE_SCHED) && __has_include("codegen_c.h") && __has_include("codegen_c.c")
#define HAVE_CODEGEN 1
#endif

#endif
