/* rt_guard.c — the last stage of the pipeline (runtime) runs a compiled module's call() under a
 * guard, so that a module that faults (SIGSEGV / SIGBUS from a wrong address, SIGFPE from a
 * trapping instruction) fails the command instead of ending the shell and its session. The
 * generated code does not trap by design (integer division checks its divisor: codegen_c.c
 * zdiv_src, indirect indexes their bounds); the guard is the net under a bug.
 *
 * How: sigaction handlers for the three signals, installed once (the first guarded call) and
 * kept: six sigaction calls around every call cost 2 us, a third of a small kernel's time in
 * `exec`'s timings. The handler jumps back (siglongjmp) only on a thread inside a guarded call,
 * which it finds in a thread-local pointer (a signal handler reaches no other state). A fault
 * anywhere else — the shell's own code, or an OpenMP worker, which cannot be unwound since its
 * team waits for it at a barrier — puts back the action there was before the guard (the default,
 * or a sanitizer's) and returns: the instruction faults again and the process ends as it would
 * have without the guard. The jump keeps no signal mask (sigsetjmp(.., 0): no syscall per call),
 * so the caught signal, blocked while its handler ran, is unblocked after it. After a jump the
 * calling thread's floating-point environment (call() sets flush-to-zero on entry and restores it
 * on return) is restored, and when the fault came from inside a parallel region (the calling
 * thread is still at OpenMP level > 0, its team's other threads waiting for it) the caller is
 * told to run one thread from then on. */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The calling thread's floating-point mode (rounding, flush-to-zero / denormals-are-zero) as
 * one register: MXCSR on x86-64, FPCR on AArch64 (fegetenv elsewhere: 0.2 us a call on x86). */
#if defined(__x86_64__)
typedef unsigned FpMode;
static FpMode fp_get(void) { return __builtin_ia32_stmxcsr(); }
static void fp_set(FpMode m) { __builtin_ia32_ldmxcsr(m); }
#elif defined(__aarch64__)
typedef unsigned long FpMode;
static FpMode fp_get(void) { FpMode c; __asm__ volatile("mrs %0, fpcr" : "=r"(c)); return c; }
static void fp_set(FpMode c) { __asm__ volatile("msr fpcr, %0" :: "r"(c)); }
#else
typedef fenv_t FpMode;
static FpMode fp_get(void) { fenv_t e; fegetenv(&e); return e; }
static void fp_set(FpMode e) { fesetenv(&e); }
#endif

/* the guarded call's way back and the fault's address, on the calling thread only */
static __thread sigjmp_buf *guard_jmp;
static __thread void *guard_addr;

static const int guard_sigs[] = {SIGSEGV, SIGBUS, SIGFPE};
enum { NSIGS = sizeof guard_sigs / sizeof guard_sigs[0] };
/* the actions before the guard's: written once by install (pthread_once), read by the handler */
static struct sigaction guard_prev[NSIGS];
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

/* The handler: back to the guarded call on its own thread; elsewhere, the action before the
 * guard, and the instruction faults again. */
static void on_fault(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    if (guard_jmp) {
        guard_addr = si ? si->si_addr : NULL;
        siglongjmp(*guard_jmp, sig);
    }
    for (int i = 0; i < NSIGS; i++)
        if (guard_sigs[i] == sig) sigaction(sig, &guard_prev[i], NULL);
}

static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSIGS; i++) sigaction(guard_sigs[i], &sa, &guard_prev[i]);
}

/* Run fn(arg) under the guard; 0 when it returned (its result in *rc), else the signal that
 * stopped it, with f describing it. Example: a call() that writes through NULL -> SIGSEGV,
 * f->addr NULL, f->omp_broken false when it ran outside a parallel region. */
int rt_guarded_call(int (*fn)(void *), void *arg, int *rc, RtFault *f) {
    pthread_once(&guard_once, install);
    FpMode fp = fp_get();
    memset(f, 0, sizeof *f);
    sigjmp_buf jb;
    int sig = sigsetjmp(jb, 0);
    if (sig == 0) {
        guard_jmp = &jb;
        *rc = fn(arg);
    }
    guard_jmp = NULL;
    if (sig) {
        sigset_t un;
        sigemptyset(&un);
        sigaddset(&un, sig);
        pthread_sigmask(SIG_UNBLOCK, &un, NULL);
        fp_set(fp);
        f->sig = sig;
        f->addr = guard_addr;
#ifdef _OPENMP
        f->omp_broken = omp_get_level() > 0;
#endif
    }
    return sig;
}
