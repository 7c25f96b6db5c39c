/* lsan_defaults.h — LeakSanitizer's defaults for a program of the project (read only in a
 * SANITIZE=1 build): the shell includes it in repl/main.c, every test through tests/tap.h, so
 * both run alike. Include it in exactly one translation unit of a program: it defines the two
 * hooks LeakSanitizer looks up.
 *
 * use_tls=0: the exit scan of thread-local storage crashes ("Tracer caught signal 11" on a
 * garbage DTLS range of an OpenMP worker) once oneDNN's GEMMs ran in the process. With TLS not
 * scanned, what libgomp keeps only in its workers' TLS (their team state) would read as leaks,
 * so libgomp's own allocations are suppressed, as are the plugin tables Graphviz (and the
 * readline of the shell) keep until exit; print_suppressions=0: no count printed at exit (tests
 * comparing a whole output would read it). Every other allocation is still checked. */
#ifndef MI_LSAN_DEFAULTS_H
#define MI_LSAN_DEFAULTS_H

const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "use_tls=0:print_suppressions=0"; }
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libgomp.so\nleak:libgvc\nleak:libcgraph\nleak:libcdt\nleak:libgvplugin\nleak:libpango\n"
           "leak:libfontconfig\nleak:libcairo\nleak:libglib\nleak:libltdl\nleak:libexpat\nleak:libreadline\n";
}

#endif
