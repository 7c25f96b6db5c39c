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
#if __has_include("lowering.h") && __has_include("ir.h") && __has_include("scheduler.h") && __has_include("codegen_c.h")
#define HAVE_COMPILE 1
#endif

#endif
