/* runtime.c — compile generated C with the system compiler, cache the shared object on disk,
 * dlopen it, bind size symbols, call it, time it and compare it with the interpreter.
 * See runtime.h for the module ABI and the cache layout.
 *
 * BLAS: when the library is built with HAVE_CBLAS (configure found cblas; config.mk's
 * BLAS_CFLAGS carry -DHAVE_CBLAS), modules get -DMI_HAVE_CBLAS plus include/link flags taken
 * from, in order: $MINDUCTOR_BLAS_FLAGS, the compile-time string MI_RT_BLAS_FLAGS (a build can
 * pass -DMI_RT_BLAS_FLAGS='"$(BLAS_CFLAGS) $(BLAS_LIBS)"'), else a probe of the usual
 * locations of cblas.h and libopenblas / libcblas / libblas. */
#define _GNU_SOURCE
#include "runtime/runtime.h"
#include "base/mem.h"
#include "ops/numerics.h"
#include "ir/ir.h"
#include "codegen/codegen_cuda.h"
#include "fx_passes/functionalize.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

extern char **environ;

#define RT_MAX_ARGS 64
#define RT_GUARD_FAILED 1000   /* MI_GUARD_FAILED of core/codegen/codegen_c.c */
#define RT_FALLBACK_FAILED 2000   /* MI_FALLBACK_FAILED of core/codegen/codegen_c.c */
#define RT_INDEX_OOB 3000         /* MI_INDEX_OOB: a kernel met an index outside its dim */
#define RT_ZERO_DIV 3001          /* MI_ZERO_DIV: a kernel divided an integer by zero */
#define RT_WHILE_LIMIT 3002       /* MI_WHILE_LIMIT: a while_loop ran past ctx->limits.while_iterations */

/* ---- compiler command line ---- */

typedef struct CcArgs {
    char *argv[RT_MAX_ARGS + 1];
    int argc;
    int nlink;              /* link flags (-L, -l, -Wl) go after the source: kept separately */
    char *link[RT_MAX_ARGS];
    StrBuf storage;         /* "flag\0flag\0..." owned strings */
} CcArgs;

static void cc_add(CcArgs *a, const char *flag) {
    bool is_link = strncmp(flag, "-l", 2) == 0 || strncmp(flag, "-L", 2) == 0 ||
                   strncmp(flag, "-Wl,", 4) == 0;
    char *s = mi_xstrdup(flag);
    if (is_link) {
        if (a->nlink < RT_MAX_ARGS) a->link[a->nlink++] = s; else free(s);
    } else {
        if (a->argc < RT_MAX_ARGS - 8) a->argv[a->argc++] = s; else free(s);
    }
}

/* Split on blanks (no quoting: flags with spaces are not supported). */
static void cc_add_split(CcArgs *a, const char *flags) {
    while (flags && *flags) {
        while (*flags == ' ' || *flags == '\t' || *flags == '\n') flags++;
        const char *e = flags;
        while (*e && *e != ' ' && *e != '\t' && *e != '\n') e++;
        if (e > flags) {
            char tmp[512];
            size_t n = (size_t)(e - flags) < sizeof tmp - 1 ? (size_t)(e - flags) : sizeof tmp - 1;
            memcpy(tmp, flags, n);
            tmp[n] = 0;
            cc_add(a, tmp);
        }
        flags = e;
    }
}

static void cc_free(CcArgs *a) {
    for (int i = 0; i < a->argc; i++) free(a->argv[i]);
    for (int i = 0; i < a->nlink; i++) free(a->link[i]);
    a->argc = a->nlink = 0;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

#ifdef HAVE_CBLAS
/* Find cblas.h and a BLAS library in the usual Debian / Fedora / Homebrew places. */
static void probe_blas(CcArgs *a) {
    static const char *const inc_dirs[] = {
        "/usr/include/x86_64-linux-gnu/openblas-pthread", "/usr/include/aarch64-linux-gnu/openblas-pthread",
        "/usr/include/openblas", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu",
        "/usr/include", "/usr/local/include", "/opt/homebrew/opt/openblas/include", NULL};
    static const char *const lib_dirs[] = {
        "/usr/lib/x86_64-linux-gnu/openblas-pthread", "/usr/lib/aarch64-linux-gnu/openblas-pthread",
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
        "/usr/local/lib", "/opt/homebrew/opt/openblas/lib", NULL};
    static const char *const libs[] = {"openblas", "cblas", "blas", NULL};
    char path[600], flag[600];
    for (int i = 0; inc_dirs[i]; i++) {
        snprintf(path, sizeof path, "%s/cblas.h", inc_dirs[i]);
        if (file_exists(path)) {
            snprintf(flag, sizeof flag, "-I%s", inc_dirs[i]);
            cc_add(a, flag);
            break;
        }
    }
    for (int l = 0; libs[l]; l++)
        for (int i = 0; lib_dirs[i]; i++) {
            snprintf(path, sizeof path, "%s/lib%s.so", lib_dirs[i], libs[l]);
            if (!file_exists(path)) snprintf(path, sizeof path, "%s/lib%s.dylib", lib_dirs[i], libs[l]);
            if (!file_exists(path)) continue;
            snprintf(flag, sizeof flag, "-L%s", lib_dirs[i]);
            cc_add(a, flag);
            snprintf(flag, sizeof flag, "-Wl,-rpath,%s", lib_dirs[i]);
            cc_add(a, flag);
            snprintf(flag, sizeof flag, "-l%s", libs[l]);
            cc_add(a, flag);
            return;
        }
}
#endif

#ifdef HAVE_SLEEF
/* Sleef's header and library where this process runs (a copy of minductor built with Sleef
 * may run on a machine without it: bench/vs_torch.py's GPU machine): -I / -L flags for a
 * non-default place; $MINDUCTOR_SLEEF_DIR names a folder holding both (make -C bench portable
 * copies them into bench/build/lib). false: none found, modules use glibc's vector math. */
static bool probe_sleef(CcArgs *a) {
    static const char *const inc_dirs[] = {"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu",
                                           "/usr/local/include", NULL};
    static const char *const lib_dirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                                           "/usr/local/lib", NULL};
    char path[600], flag[600];
    const char *dir = getenv("MINDUCTOR_SLEEF_DIR");   /* sleef.h and libsleef.so side by side */
    if (dir && *dir) {
        snprintf(path, sizeof path, "%s/sleef.h", dir);
        bool h = file_exists(path);
        snprintf(path, sizeof path, "%s/libsleef.so", dir);
        if (!h || !file_exists(path)) return false;
        snprintf(flag, sizeof flag, "-I%s", dir);
        cc_add(a, flag);
        snprintf(flag, sizeof flag, "-L%s", dir);
        cc_add(a, flag);
        snprintf(flag, sizeof flag, "-Wl,-rpath,%s", dir);
        cc_add(a, flag);
        return true;
    }
    int inc = -1, lib = -1;
    for (int i = 0; inc < 0 && inc_dirs[i]; i++) {
        snprintf(path, sizeof path, "%s/sleef.h", inc_dirs[i]);
        if (file_exists(path)) inc = i;
    }
    for (int i = 0; lib < 0 && lib_dirs[i]; i++) {
        snprintf(path, sizeof path, "%s/libsleef.so", lib_dirs[i]);
        if (file_exists(path)) lib = i;
    }
    if (inc < 0 || lib < 0) return false;
    if (strcmp(inc_dirs[inc], "/usr/include") != 0) { snprintf(flag, sizeof flag, "-I%s", inc_dirs[inc]); cc_add(a, flag); }
    snprintf(flag, sizeof flag, "-L%s", lib_dirs[lib]);
    cc_add(a, flag);
    return true;
}
#endif

/* The compiler and every flag except -o and the file names. */
static void cc_command(CcArgs *a) {
    memset(a, 0, sizeof *a);
    const char *cc = getenv("MINDUCTOR_CC");
    cc_add(a, cc && *cc ? cc : "cc");
    /* -fno-math-errno -fno-trapping-math as Inductor's cpp backend; -D__FAST_MATH__ alone (not
     * -ffast-math: NaN, infinities and signed zeros keep IEEE semantics) makes glibc's math.h
     * declare the SIMD variants of expf/tanhf/erff/... (libmvec), so loops calling them
     * vectorize: ~25x on transcendental-heavy pointwise kernels. */
    cc_add_split(a, "-O3 -march=native -fopenmp -fno-math-errno -fno-trapping-math -D__FAST_MATH__ -shared -fPIC");
    /* -fno-tree-sink: GCC's sinking pass moves a value used by one arm of a select into that
     * arm (softplus / mish / elu: `x > t ? x : log1pf(expf(x))`), and a call under a branch
     * leaves the `omp simd` loop scalar ("control flow in loop"); vectorized, both arms are
     * computed anyway (as ATen's Vectorized blendv does) */
    cc_add(a, "-fno-tree-sink");
#if defined(__x86_64__)
    /* GCC on Intel AVX-512 parts (sapphirerapids) prefers 256-bit vectors, so loops and the
     * libmvec calls ran 8 wide; Inductor's Vectorized<float> is 16 wide there. Ignored where
     * the CPU has no AVX-512. (MINDUCTOR_CFLAGS below can override it.) */
    cc_add(a, "-mprefer-vector-width=512");
#endif
    cc_add_split(a, getenv("MINDUCTOR_CFLAGS"));
#ifdef HAVE_CBLAS
    cc_add(a, "-DMI_HAVE_CBLAS");
    const char *bf = getenv("MINDUCTOR_BLAS_FLAGS");
    if (bf && *bf) cc_add_split(a, bf);
#ifdef MI_RT_BLAS_FLAGS
    else cc_add_split(a, MI_RT_BLAS_FLAGS);
#else
    else probe_blas(a);
#endif
#endif
#ifdef HAVE_DNNL
    /* convolution extern kernels call oneDNN (core/codegen/codegen_conv.c); as-needed: only
     * modules that use it depend on it */
    cc_add(a, "-Wl,--as-needed");
    cc_add(a, "-ldnnl");
#endif
#ifdef HAVE_SLEEF
    /* Sleef for the f32 exp (and the erf / sigmoid over it) of generated kernels (codegen_c.c:
     * vecmath_src), as ATen's Vectorized<float> calls it: constant cost over every input range.
     * MINDUCTOR_VECMATH=libmvec keeps glibc's functions (the module is then built as without
     * Sleef). */
    const char *vm = getenv("MINDUCTOR_VECMATH");
    if ((!vm || strcmp(vm, "libmvec") != 0) && probe_sleef(a)) {
        cc_add(a, "-DMI_HAVE_SLEEF");
        cc_add(a, "-lsleef");
    }
#endif
    cc_add(a, "-lm");
}

/* nvcc for CUDA sources: $MINDUCTOR_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc.
 * NULL when none is found. */
static bool is_program(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}
static const char *find_nvcc(char *buf, size_t n) {
    const char *env = getenv("MINDUCTOR_NVCC");
    if (env && *env) return is_program(env) ? env : NULL;
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        if (len) {
            snprintf(buf, n, "%.*s/nvcc", (int)len, path);
            if (is_program(buf)) return buf;
        }
        path = e ? e + 1 : NULL;
    }
    snprintf(buf, n, "/usr/local/cuda/bin/nvcc");
    return is_program(buf) ? buf : NULL;
}

static void nvcc_command(CcArgs *a, const char *nvcc) {
    memset(a, 0, sizeof *a);
    cc_add(a, nvcc);
    cc_add_split(a, "-O3 -shared -Xcompiler -fPIC -Wno-deprecated-gpu-targets -diag-suppress 177,550");
    const char *fl = getenv("MINDUCTOR_NVCC_FLAGS");
    cc_add_split(a, fl && *fl ? fl : "-arch=sm_90");
    cc_add_split(a, "-x cu");
}

/* A loaded CUDA module: bind its extra exports and make sure a GPU is there. */
/* dlsym for a module's exports, most of them optional: a failed lookup leaves glibc's error
 * message pending in the thread, freed only by a later dlerror or dl call; read it twice here
 * (the second read frees it), so a module never dlclose'd (rt_free, keep_mapped) leaks nothing. */
static void *rt_sym(void *handle, const char *name) {
    void *p = dlsym(handle, name);
    if (!p) (void)dlerror(), (void)dlerror();
    return p;
}

static int load_cuda_exports(MiCtx *ctx, RtModule *m) {
    m->is_cuda = true;
    *(void **)&m->cuda_time = rt_sym(m->handle, "mi_cuda_time");
    *(void **)&m->cuda_error = rt_sym(m->handle, "mi_cuda_error");
    *(void **)&m->cuda_libs = rt_sym(m->handle, "mi_cuda_libs");   /* optional */
    int (*probe)(char *, int);
    *(void **)&probe = rt_sym(m->handle, "mi_cuda_probe");
    if (!probe || !m->cuda_time || !m->cuda_error)
        return mi_err(ctx, m->src_path, 0, 0, "compiled CUDA module lacks mi_cuda_probe/mi_cuda_time/mi_cuda_error");
    char msg[256] = "";
    if (probe(msg, (int)sizeof msg) != 0)
        return mi_err(ctx, m->src_path, 0, 0, "no CUDA GPU available (%s); 'codegen' still shows the CUDA source", msg);
    return 0;
}

/* ---- cache ---- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static int mkdir_p(MiCtx *ctx, const char *dir) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return mi_err(ctx, tmp, 0, 0, "cannot create cache directory: %s", strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return mi_err(ctx, tmp, 0, 0, "cannot create cache directory: %s", strerror(errno));
    return 0;
}

const char *rt_cache_dir(MiCtx *ctx, char *buf, size_t n) {
    const char *env;
    if (ctx->cache_dir[0]) snprintf(buf, n, "%s", ctx->cache_dir);
    else if ((env = getenv("MINDUCTOR_CACHE")) && *env) snprintf(buf, n, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env) snprintf(buf, n, "%s/minductor", env);
    else if ((env = getenv("HOME")) && *env) snprintf(buf, n, "%s/.cache/minductor", env);
    else snprintf(buf, n, "/tmp/minductor-cache-%d", (int)getuid());
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/') buf[--len] = 0;
    if (mkdir_p(ctx, buf) != 0) return NULL;
    return buf;
}

/* Write data to path atomically: a unique temp file in the same directory, then rename. */
static int write_atomic(MiCtx *ctx, const char *path, const char *data, size_t len) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d.%llx", path, (int)getpid(), (unsigned long long)mi_now_ns());
    if (mi_write_file(ctx, tmp, data, len) != 0) return -1;
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return mi_err(ctx, path, 0, 0, "cannot rename into cache: %s", strerror(errno));
    }
    return 0;
}

/* First `maxlines` lines of a file, for the error message, with `strip` (the cache directory
 * and a slash) removed where a line starts with it. */
static void head_lines(const char *path, const char *strip, int maxlines, char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t len = 0;
    char line[512];
    size_t sl = strlen(strip);
    for (int i = 0; i < maxlines && fgets(line, sizeof line, f); i++) {
        const char *p = line;
        if (sl && strncmp(p, strip, sl) == 0 && p[sl] == '/') p += sl + 1;
        size_t l = strlen(p);
        if (len + l + 1 >= n) break;
        memcpy(out + len, p, l + 1);
        len += l;
    }
    fclose(f);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r')) out[--len] = 0;
}

/* Run argv with stdout+stderr to err_path; returns the exit status, -1 + ctx error if it could
 * not be started or Ctrl-C stopped it. The wait polls (every 5 ms) so that an interrupt of the
 * shell alone (not of the terminal's whole process group) still stops the compiler: it gets
 * SIGTERM and the call fails with "interrupted (Ctrl-C) while compiling". */
static int spawn_wait(MiCtx *ctx, char *const argv[], const char *err_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return mi_err(ctx, NULL, 0, 0, "cannot run the C compiler '%s': %s", argv[0], strerror(rc));
    int status;
    uint64_t t0 = mi_now_ns();
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return mi_err(ctx, NULL, 0, 0, "waitpid: %s", strerror(errno));
        if (mi_interrupted(ctx)) {
            kill(pid, SIGTERM);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return mi_err_interrupted(ctx, "while compiling (%s stopped after %.1f s)", argv[0], (mi_now_ns() - t0) * 1e-9);
        }
        mi_progress(ctx, "compiling (seconds)", (long)((mi_now_ns() - t0) / 1000000000ull), 0);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    if (mi_interrupted(ctx))     /* the terminal's Ctrl-C reached the compiler too */
        return mi_err_interrupted(ctx, "while compiling (%s stopped)", argv[0]);
    if (WIFEXITED(status)) {
        /* posix_spawnp reports a missing program as exit status 127 from the child on glibc */
        if (WEXITSTATUS(status) == 127 && !file_exists(argv[0]) && strchr(argv[0], '/'))
            return mi_err(ctx, NULL, 0, 0, "cannot run the C compiler '%s'", argv[0]);
        return WEXITSTATUS(status);
    }
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int load_module(MiCtx *ctx, RtModule *m) {
    uint64_t t0 = mi_now_ns();
    m->handle = dlopen(m->so_path, RTLD_NOW | RTLD_LOCAL);
    if (!m->handle) {
        const char *e = dlerror();
        return mi_err(ctx, m->so_path, 0, 0, "cannot load compiled module: %s", e ? e : "?");
    }
    void *call = rt_sym(m->handle, "call");
    const char *const *names = rt_sym(m->handle, "mi_sym_names");
    const int *nout = rt_sym(m->handle, "mi_num_outputs");
    const char *missing = !call ? "call" : !names ? "mi_sym_names" : !nout ? "mi_num_outputs" : NULL;
    if (missing)
        return mi_err(ctx, m->src_path, 0, 0, "compiled module does not export '%s'", missing);
    *(void **)&m->call = call;
    *(void **)&m->call_fb = rt_sym(m->handle, "call_fb");
    m->sym_names = names;
    m->nsyms = 0;
    while (names[m->nsyms]) m->nsyms++;
    m->num_outputs = *nout;
    m->output_alias = rt_sym(m->handle, "mi_output_alias");
    *(void **)&m->output_strides = rt_sym(m->handle, "mi_output_strides");
    *(void **)&m->output_view = rt_sym(m->handle, "mi_output_view");
    m->guards = rt_sym(m->handle, "mi_guards");
    m->nguards = 0;
    while (m->guards && m->guards[m->nguards]) m->nguards++;
    MiMemHooks *mem = rt_sym(m->handle, "mi_mem_hooks");   /* the module's arena: our allocator */
    if (mem) *mem = (MiMemHooks){mi_mem_alloc_raw, mi_mem_free};
    m->profile = rt_sym(m->handle, "mi_profile");
    m->prof_ns = rt_sym(m->handle, "mi_prof_ns");
    m->prof_names = rt_sym(m->handle, "mi_prof_names");
    m->nprof = 0;
    while (m->prof_names && m->prof_names[m->nprof]) m->nprof++;
    if (!m->profile || !m->prof_ns) m->prof_names = NULL, m->nprof = 0;
    m->load_s = (double)(mi_now_ns() - t0) * 1e-9;
    return 0;
}

/* Run cc on the cached source into a temp file, then rename it to m->so_path. */
static int build_so(MiCtx *ctx, RtModule *m, CcArgs *cc, const char *dir) {
    char err_path[1100], tmp_so[1100];
    snprintf(err_path, sizeof err_path, "%s/mi_%s.err.%d", dir, m->key, (int)getpid());
    snprintf(tmp_so, sizeof tmp_so, "%s.tmp.%d.%llx.so", m->so_path, (int)getpid(),
             (unsigned long long)mi_now_ns());
    char *argv[RT_MAX_ARGS * 2 + 8];
    int n = 0;
    for (int i = 0; i < cc->argc; i++) argv[n++] = cc->argv[i];
    argv[n++] = "-o";
    argv[n++] = tmp_so;
    argv[n++] = m->src_path;
    for (int i = 0; i < cc->nlink; i++) argv[n++] = cc->link[i];
    argv[n] = NULL;
    uint64_t t0 = mi_now_ns();
    int rc = spawn_wait(ctx, argv, err_path);
    m->compile_s = (double)(mi_now_ns() - t0) * 1e-9;
    if (rc != 0) {
        unlink(tmp_so);
        if (rc > 0) {
            char head[800], final_err[1100];
            head_lines(err_path, dir, 8, head, sizeof head);
            snprintf(final_err, sizeof final_err, "%s/mi_%s.err", dir, m->key);
            rename(err_path, final_err);
            mi_err(ctx, m->src_path, 0, 0, "C compiler failed (exit %d; full output in %s):\n%s", rc,
                   final_err, head);
        } else {
            unlink(err_path);
        }
        return -1;
    }
    unlink(err_path);
    if (rename(tmp_so, m->so_path) != 0) {
        unlink(tmp_so);
        return mi_err(ctx, m->so_path, 0, 0, "cannot rename into cache: %s", strerror(errno));
    }
    return 0;
}

RtModule *rt_compile(MiCtx *ctx, const char *c_source) {
    char dir[900];
    if (!rt_cache_dir(ctx, dir, sizeof dir)) return NULL;
    CcArgs cc;
    bool cuda = codegen_is_cuda_source(c_source);
    if (cuda) {
        char nvbuf[1024];
        const char *nvcc = find_nvcc(nvbuf, sizeof nvbuf);
        if (!nvcc) {
            mi_err(ctx, NULL, 0, 0, "cannot build CUDA code: nvcc not found (install the CUDA toolkit or set "
                   "MINDUCTOR_NVCC); 'codegen' still shows the CUDA source");
            return NULL;
        }
        nvcc_command(&cc, nvcc);
    } else {
        rt_blas_tune();   /* before the module's first gemm */
        cc_command(&cc);
    }
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < cc.argc; i++) h = fnv1a(h, cc.argv[i], strlen(cc.argv[i]) + 1);
    for (int i = 0; i < cc.nlink; i++) h = fnv1a(h, cc.link[i], strlen(cc.link[i]) + 1);
    h = fnv1a(h, c_source, strlen(c_source));

    RtModule *m = mi_xcalloc(1, sizeof *m);
    snprintf(m->key, sizeof m->key, "%016llx", (unsigned long long)h);
    snprintf(m->src_path, sizeof m->src_path, "%s/mi_%s.%s", dir, m->key, cuda ? "cu" : "c");
    snprintf(m->so_path, sizeof m->so_path, "%s/mi_%s.so", dir, m->key);
    size_t len = strlen(c_source);
    int rc = 0;
    if (file_exists(m->so_path)) {
        m->cache_hit = true;
        /* keep the source beside it for messages and inspection */
        if (!file_exists(m->src_path)) write_atomic(ctx, m->src_path, c_source, len);
        if (load_module(ctx, m) == 0) {
            if (cuda && load_cuda_exports(ctx, m) != 0) goto fail;
            goto done;
        }
        if (m->handle) goto fail;            /* loaded but an export is missing: a real error */
        /* unloadable (truncated, other machine): rebuild it once */
        m->cache_hit = false;
        unlink(m->so_path);
    }
    rc = write_atomic(ctx, m->src_path, c_source, len);
    if (rc == 0) rc = build_so(ctx, m, &cc, dir);
    if (rc == 0) rc = load_module(ctx, m);
    if (rc == 0 && cuda) rc = load_cuda_exports(ctx, m);
    if (rc != 0) goto fail;
done:
    mi_clear_err(ctx);
    cc_free(&cc);
    return m;
fail:
    cc_free(&cc);
    rt_free(m);
    return NULL;
}

void rt_free(RtModule *m) {
    if (!m) return;
    if (m->handle && m->is_cuda) {   /* the module's device workspaces (codegen_cuda.c: mi_workspace) */
        void (*release)(void);
        *(void **)&release = rt_sym(m->handle, "mi_cuda_release");
        if (release) release();
    }
    if (m->handle && !m->keep_mapped) dlclose(m->handle);
    free(m);
}

/* ---- binding sizes, inputs and outputs ---- */

typedef struct Bindings { SymBinding *b; int n, cap; } Bindings;

static const SymBinding *bind_find(const Bindings *bs, const char *name) {
    for (int i = 0; i < bs->n; i++)
        if (strcmp(bs->b[i].name, name) == 0) return &bs->b[i];
    return NULL;
}

static void bind_add(Bindings *bs, const char *name, int64_t v) {
    if (bind_find(bs, name)) return;
    if (bs->n == bs->cap) {
        bs->cap = bs->cap ? bs->cap * 2 : 16;
        bs->b = mi_xrealloc(bs->b, (size_t)bs->cap * sizeof *bs->b);
    }
    bs->b[bs->n].name = name;
    bs->b[bs->n].value = v;
    bs->n++;
}

/* Bind symbols as the interpreter does: SymInt placeholders from IV_INT inputs, then plain
 * symbols among the placeholders' sizes (and strides) from the input tensors. Then check every
 * tensor input's shape against its meta. */
static int bind_inputs(MiCtx *ctx, const Graph *g, IValue *inputs, int ninputs, Bindings *bs) {
    int nph = graph_num_placeholders(g);
    if (ninputs != nph)
        return mi_err(ctx, g->source, 0, 0, "graph takes %d inputs, got %d", nph, ninputs);
    for (int i = 0; i < nph; i++) {
        const Node *p = graph_placeholder(g, i);
        const IValue *v = &inputs[i];
        if (p->is_sym) {
            if (v->kind != IV_INT && v->kind != IV_BOOL)
                return mi_err(ctx, g->source, p->src_line, 0, "input %d ('%s') must be an int", i, p->name);
            if (p->sym_val && p->sym_val->kind == EX_SYM) bind_add(bs, p->sym_val->name, v->i);
            continue;
        }
        if (v->kind != IV_TENSOR || !v->t)
            return mi_err(ctx, g->source, p->src_line, 0, "input %d ('%s') must be a tensor", i, p->name);
        if (!p->has_meta) continue;
        if (p->meta.ndim != v->t->ndim)
            return mi_err(ctx, g->source, p->src_line, 0, "input %d ('%s') has %d dims, graph expects %d",
                          i, p->name, v->t->ndim, p->meta.ndim);
        for (int d = 0; d < p->meta.ndim; d++) {
            Expr *e = p->meta.size[d];
            if (e && e->kind == EX_SYM) bind_add(bs, e->name, v->t->size[d]);
        }
    }
    for (int i = 0; i < nph; i++) {   /* strides bind last: sizes are the better source */
        const Node *p = graph_placeholder(g, i);
        if (p->is_sym || !p->has_meta || !p->meta.stride) continue;
        for (int d = 0; d < p->meta.ndim; d++) {
            Expr *e = p->meta.stride[d];
            if (e && e->kind == EX_SYM) bind_add(bs, e->name, inputs[i].t->stride[d]);
        }
    }
    for (int i = 0; i < nph; i++) {
        const Node *p = graph_placeholder(g, i);
        if (p->is_sym || !p->has_meta) continue;
        const Tensor *t = inputs[i].t;
        for (int d = 0; d < p->meta.ndim; d++) {
            int64_t want;
            if (sym_eval(ctx, p->meta.size[d], bs->b, bs->n, &want) != 0) return -1;
            if (want != t->size[d]) {
                char buf[256];
                return mi_err(ctx, g->source, p->src_line, 0,
                              "input %d ('%s'): size of dim %d is %lld, graph expects %s", i, p->name, d,
                              (long long)t->size[d], meta_str(&p->meta, buf, sizeof buf));
            }
        }
    }
    return 0;
}

/* Evaluated sizes and strides of a meta. */
static int eval_layout(MiCtx *ctx, const TensorMeta *m, const Bindings *bs, int64_t *size,
                       int64_t *stride, int64_t *offset) {
    if (m->ndim > MI_MAX_DIMS) return mi_err(ctx, NULL, 0, 0, "tensor of %d dims (max %d)", m->ndim, MI_MAX_DIMS);
    for (int d = 0; d < m->ndim; d++)
        if (sym_eval(ctx, m->size[d], bs->b, bs->n, &size[d]) != 0) return -1;
    if (m->stride) {
        for (int d = 0; d < m->ndim; d++)
            if (sym_eval(ctx, m->stride[d], bs->b, bs->n, &stride[d]) != 0) return -1;
    } else {
        int64_t s = 1;
        for (int d = m->ndim - 1; d >= 0; d--) { stride[d] = s; s *= size[d] > 1 ? size[d] : 1; }
    }
    *offset = 0;
    if (m->offset && sym_eval(ctx, m->offset, bs->b, bs->n, offset) != 0) return -1;
    return 0;
}

static void *data_ptr(const Tensor *t) {
    return (char *)t->storage->data + (size_t)t->offset * dtype_size(t->dtype);
}

/* Copy elements between tensors of the same dtype and sizes, any strides. */
static void copy_elems(Tensor *dst, const Tensor *src) {
    size_t es = dtype_size(src->dtype);
    int64_t n = tensor_numel(src);
    if (n == 0) return;
    if (tensor_is_contiguous(dst) && tensor_is_contiguous(src)) {
        memcpy(data_ptr(dst), data_ptr(src), (size_t)n * es);
        return;
    }
    int64_t idx[MI_MAX_DIMS] = {0};
    int nd = src->ndim;
    for (int64_t k = 0; k < n; k++) {
        memcpy(tensor_elem_ptr(dst, idx), tensor_elem_ptr(src, idx), es);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < src->size[d]) break;
            idx[d] = 0;
        }
    }
}

static bool same_layout(const Tensor *t, const int64_t *stride) {
    for (int d = 0; d < t->ndim; d++)
        if (t->size[d] > 1 && t->stride[d] != stride[d]) return false;
    return true;
}

/* Everything one call needs, built from the graph and the inputs. */
typedef struct Prepared {
    Bindings bs;
    int64_t *syms;
    void **in_ptrs;
    int nin;
    Tensor **staged;        /* per input: NULL or a relaid-out copy (copied back after) */
    int *staged_of;         /* placeholder index of each tensor input */
    void **out_ptrs;
    IValue *outs;
    int nouts;
    const Graph *g;         /* for fallbacks */
    int threads;            /* OpenMP threads of the calls (ctx->threads or the default) */
} Prepared;

static void prep_free(Prepared *pp, bool keep_outs) {
    for (int i = 0; i < pp->nin; i++)
        if (pp->staged && pp->staged[i]) tensor_unref(pp->staged[i]);
    if (!keep_outs && pp->outs) interp_free_outputs(pp->outs, pp->nouts);
    free(pp->bs.b);
    free(pp->syms);
    free(pp->in_ptrs);
    free(pp->staged);
    free(pp->staged_of);
    free(pp->out_ptrs);
    memset(pp, 0, sizeof *pp);
}

/* The output node's values: `return (a, b)` stores one tuple argument; a nested return is
 * flattened as the lowering flattens it (graph_output_flat). */
static void output_values(const Graph *g, const Value **vals, int *n) {
    *vals = graph_output_flat(g, n);
}

/* Output j that the module returns as a view (mi_output_view's v = {owner, numel, offset,
 * size[nd], stride[nd]}): of an input's storage (owner -1: the tensor the module read, the
 * staged copy when there is one), or of a fresh storage of numel elements the module writes
 * (owner j). Returns 1 when the owner is another output (built after every output has its
 * tensor), 0 when done, -1 on error. Example: Inductor's `return (reinterpret_tensor(primals_3,
 * (12, 32), (32, 1), 0), ...)` is a [12, 32] view of input primals_3. */
static int output_as_view(MiCtx *ctx, RtModule *m, Prepared *pp, IValue *inputs, int j, DType dt, int nd,
                          const int64_t *v, int alias) {
    IValue *o = &pp->outs[j];
    if (alias >= 0) {
        Tensor *base = alias < pp->nin ? pp->staged[alias] : NULL;
        if (!base && alias < pp->nin && pp->staged_of[alias] >= 0 && inputs[pp->staged_of[alias]].kind == IV_TENSOR)
            base = inputs[pp->staged_of[alias]].t;
        if (!base) return mi_err(ctx, m->src_path, 0, 0, "output %d: the module names input %d, which is not a tensor input", j, alias);
        o->kind = IV_TENSOR;
        o->t = tensor_view(base, nd, v + 3, v + 3 + nd, base->offset + v[2]);
        return 0;
    }
    if (v[0] != j) return 1;
    int64_t numel = v[1] > 0 ? v[1] : 0;
    Tensor *st = tensor_new(ctx, dt, 1, &numel);
    if (!st) return -1;
    o->kind = IV_TENSOR;
    o->t = tensor_view(st, nd, v + 3, v + 3 + nd, v[2]);
    pp->out_ptrs[j] = data_ptr(st);
    tensor_unref(st);
    return 0;
}

/* Inductor's unbacked SymInts are u0, u1, ...: no input binds them, the call defines them */
static bool unbacked_name(const char *s) {
    if (!s || s[0] != 'u' || !s[1]) return false;
    for (const char *c = s + 1; *c; c++) if (*c < '0' || *c > '9') return false;
    return true;
}

/* Does meta m name a symbol bs does not bind (an unbacked u1: the output is allocated by the
 * call, through alloc_out, once u1 is known)? */
static bool meta_names_unbound(const TensorMeta *m, const Bindings *bs) {
    for (int d = 0; d < m->ndim; d++) {
        const char *names[16];
        int k = sym_free_symbols(m->size[d], names, 16);
        for (int i = 0; i < k && i < 16; i++) if (!bind_find(bs, names[i])) return true;
    }
    return false;
}

static int prepare(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs, Prepared *pp) {
    memset(pp, 0, sizeof *pp);
    pp->g = g;
    pp->threads = ctx->threads > 0 ? ctx->threads : rt_default_threads(NULL, 0);
    if (bind_inputs(ctx, g, inputs, ninputs, &pp->bs) != 0) goto fail;
    pp->syms = mi_xcalloc((size_t)m->nsyms + 1, sizeof *pp->syms);
    for (int i = 0; i < m->nsyms; i++) {
        const SymBinding *b = bind_find(&pp->bs, m->sym_names[i]);
        if (!b && unbacked_name(m->sym_names[i])) continue;   /* the call defines it (0 until then) */
        if (!b) {
            mi_err(ctx, g->source, 0, 0, "module needs size symbol '%s' that no input binds", m->sym_names[i]);
            goto fail;
        }
        pp->syms[i] = b->value;
    }
    int nconst = 0;
    for (int i = 0; i < g->n; i++) nconst += ir_is_tensor_constant(g, g->nodes[i]);
    pp->in_ptrs = mi_xcalloc((size_t)(ninputs + nconst) + 1, sizeof *pp->in_ptrs);
    pp->staged = mi_xcalloc((size_t)(ninputs + nconst) + 1, sizeof *pp->staged);
    pp->staged_of = mi_xcalloc((size_t)(ninputs + nconst) + 1, sizeof *pp->staged_of);
    for (int i = 0; i < ninputs; i++) {
        const Node *p = graph_placeholder(g, i);
        if (p->is_sym) continue;
        Tensor *t = inputs[i].t;
        int k = pp->nin++;
        pp->staged_of[k] = i;
        if (p->has_meta) {
            if (p->meta.dtype != t->dtype) {
                mi_err(ctx, g->source, p->src_line, 0, "input %d ('%s') is %s, graph expects %s", i, p->name,
                       dtype_abbrev(t->dtype), dtype_abbrev(p->meta.dtype));
                goto fail;
            }
            int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off;
            if (eval_layout(ctx, &p->meta, &pp->bs, size, stride, &off) != 0) goto fail;
            if (!same_layout(t, stride)) {
                Tensor *c = tensor_new_strided(ctx, t->dtype, t->ndim, t->size, stride, 0);
                if (!c) goto fail;
                copy_elems(c, t);
                pp->staged[k] = c;
                t = c;
            }
        }
        pp->in_ptrs[k] = data_ptr(t);
    }
    /* tensor constants, after the placeholders in graph order (as ir_lower made them inputs) */
    for (int i = 0; i < g->n; i++) {
        const Node *c = g->nodes[i];
        if (!ir_is_tensor_constant(g, c)) continue;
        Tensor *t = mi_const_get(ctx, c->target);
        if (!t) {
            mi_err(ctx, g->source, c->src_line, 0, "tensor constant '%s' has no value ('inputs DIR' reads DIR/%s.npy)", c->target, c->target);
            goto fail;
        }
        bool same = t->dtype == c->meta.dtype && t->ndim == c->meta.ndim;
        for (int d = 0; same && d < t->ndim; d++) {
            int64_t v;
            same = sym_is_int(c->meta.size[d], &v) && v == t->size[d];
        }
        if (!same) {
            char want[256];
            meta_str(&c->meta, want, sizeof want);
            mi_err(ctx, g->source, c->src_line, 0, "tensor constant '%s' is %s of %d dims, graph expects %s", c->target,
                   dtype_abbrev(t->dtype), t->ndim, want);
            goto fail;
        }
        int k = pp->nin++;
        pp->staged_of[k] = -1;   /* never copied back */
        pp->staged[k] = tensor_contiguous(ctx, t);
        if (!pp->staged[k]) goto fail;
        pp->in_ptrs[k] = data_ptr(pp->staged[k]);
    }

    const Value *vals;
    int nv;
    output_values(g, &vals, &nv);
    if (nv != m->num_outputs) {
        mi_err(ctx, g->source, 0, 0, "graph returns %d values but the module writes %d", nv, m->num_outputs);
        goto fail;
    }
    pp->nouts = nv;
    pp->outs = mi_xcalloc((size_t)nv + 1, sizeof *pp->outs);
    pp->out_ptrs = mi_xcalloc((size_t)nv + 1, sizeof *pp->out_ptrs);
    for (int j = 0; j < nv; j++) {
        const Value *v = &vals[j];
        IValue *o = &pp->outs[j];
        if (v->kind == V_NONE) continue;
        if (v->kind == V_INT || v->kind == V_BOOL) {
            o->kind = v->kind == V_INT ? IV_INT : IV_BOOL;
            o->i = v->i;
            continue;
        }
        if (v->kind != V_NODE) {
            mi_err(ctx, g->source, 0, 0, "output %d: unsupported output value", j);
            goto fail;
        }
        const Node *n = v->node;
        if (!n->is_sym && n->has_meta && meta_names_unbound(&n->meta, &pp->bs)) continue;   /* the call asks alloc_out */
        int alias = m->output_alias ? m->output_alias[j] : -1;
        int64_t view[3 + 2 * MI_MAX_DIMS];
        if (n->has_meta && n->meta.ndim <= MI_MAX_DIMS && m->output_view && m->output_view(j, pp->syms, view)) {
            /* another output's storage (1) is looked at after this loop */
            if (output_as_view(ctx, m, pp, inputs, j, n->meta.dtype, n->meta.ndim, view, alias) < 0) goto fail;
            continue;
        }
        if (alias >= 0 && alias < pp->nin && pp->staged_of[alias] < 0) {   /* a tensor constant returned: a copy */
            o->kind = IV_TENSOR;
            if (!(o->t = tensor_clone(ctx, pp->staged[alias]))) goto fail;
            continue;
        }
        if (alias >= 0) {   /* an input returned as it is: the caller's tensor (after copy_back) */
            if (alias >= pp->nin || inputs[pp->staged_of[alias]].kind != IV_TENSOR) {
                mi_err(ctx, g->source, 0, 0, "output %d: the module names input %d, which is not a tensor input", j, alias);
                goto fail;
            }
            o->kind = IV_TENSOR;
            o->t = tensor_ref(inputs[pp->staged_of[alias]].t);
            continue;
        }
        if (n->is_sym) {
            o->kind = IV_INT;
            if (sym_eval(ctx, n->sym_val, pp->bs.b, pp->bs.n, &o->i) != 0) goto fail;
            continue;
        }
        if (!n->has_meta) {
            mi_err(ctx, g->source, n->src_line, 0, "output %d ('%s') has no tensor meta", j, n->name);
            goto fail;
        }
        int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off;
        if (eval_layout(ctx, &n->meta, &pp->bs, size, stride, &off) != 0) goto fail;
        if (m->output_strides) m->output_strides(j, pp->syms, stride);   /* laid out by the module */
        Tensor *t = tensor_new_strided(ctx, n->meta.dtype, n->meta.ndim, size, stride, 0);
        if (!t) goto fail;
        o->kind = IV_TENSOR;
        o->t = t;
        pp->out_ptrs[j] = data_ptr(t);
    }
    /* views of another output's storage, once every owner has its tensor */
    for (int j = 0; j < nv; j++) {
        const Node *n = vals[j].kind == V_NODE ? vals[j].node : NULL;
        int64_t view[3 + 2 * MI_MAX_DIMS];
        if (!n || pp->outs[j].kind == IV_TENSOR || !n->has_meta || n->meta.ndim > MI_MAX_DIMS || !m->output_view ||
            meta_names_unbound(&n->meta, &pp->bs) ||
            !m->output_view(j, pp->syms, view))
            continue;
        int k = (int)view[0];
        if (k < 0 || k >= nv || pp->outs[k].kind != IV_TENSOR) {
            mi_err(ctx, g->source, 0, 0, "output %d: the module names output %d as its storage, which has none", j, k);
            goto fail;
        }
        pp->outs[j].kind = IV_TENSOR;
        pp->outs[j].t = tensor_view(pp->outs[k].t, n->meta.ndim, view + 3, view + 3 + n->meta.ndim, view[2]);
    }
    return 0;
fail:
    prep_free(pp, false);
    return -1;
}

/* MiFb.alloc_out: output j of the call, sized by unbacked symbols now known (syms: the call's
 * own, in the order of names): its annotation evaluated with them and the inputs' bindings,
 * the module's strides (output_strides) when it lays it out. The tensor becomes the call's
 * output j; NULL + ctx error (the call then fails). */
static void *rt_alloc_out(void *vctx, int j, int nsyms, const char *const *names, const int64_t *syms) {
    RtFbCtx *fc = vctx;
    Prepared *pp = fc->pp;
    const RtModule *m = fc->mod;
    const Value *vals;
    int nv;
    output_values(pp->g, &vals, &nv);
    if (j < 0 || j >= nv || j >= pp->nouts || vals[j].kind != V_NODE || !vals[j].node->has_meta) {
        fc->failed = true;
        mi_err(fc->ctx, pp->g->source, 0, 0, "compiled module: alloc_out of output %d, which is no tensor output", j);
        return NULL;
    }
    const Node *n = vals[j].node;
    Bindings bs = {0};
    for (int i = 0; i < pp->bs.n; i++) bind_add(&bs, pp->bs.b[i].name, pp->bs.b[i].value);
    for (int i = 0; i < nsyms; i++) bind_add(&bs, names[i], syms[i]);
    int64_t size[MI_MAX_DIMS], stride[MI_MAX_DIMS], off;
    Tensor *t = NULL;
    if (eval_layout(fc->ctx, &n->meta, &bs, size, stride, &off) == 0) {
        if (m->output_strides) m->output_strides(j, syms, stride);
        t = tensor_new_strided(fc->ctx, n->meta.dtype, n->meta.ndim, size, stride, 0);
    }
    free(bs.b);
    if (!t) { fc->failed = true; return NULL; }
    ivalue_clear(&pp->outs[j]);
    pp->outs[j].kind = IV_TENSOR;
    pp->outs[j].t = t;
    pp->out_ptrs[j] = data_ptr(t);
    return pp->out_ptrs[j];
}

/* one call of the module: what rt_guarded_call runs */
typedef struct CallArgs { RtModule *m; Prepared *pp; RtFb *fb; } CallArgs;
static int call_module(void *arg) {
    CallArgs *a = arg;
    return a->m->call_fb ? a->m->call_fb(a->pp->in_ptrs, a->pp->out_ptrs, a->pp->syms, a->fb)
                         : a->m->call(a->pp->in_ptrs, a->pp->out_ptrs, a->pp->syms);
}

/* A guarded call that faulted: the error, and one thread for the session's later runs when the
 * fault left an OpenMP team waiting (rt_guard.c). */
static int fault_error(MiCtx *ctx, RtModule *m, const RtFault *f) {
    const char *name = f->sig == SIGSEGV ? "SIGSEGV" : f->sig == SIGBUS ? "SIGBUS" : f->sig == SIGFPE ? "SIGFPE" : "a signal";
    if (f->omp_broken) ctx->threads = 1, m->keep_mapped = true;   /* its team's threads may still run its code */
    return mi_err(ctx, m->src_path, 0, 0, "compiled module: call() stopped by %s (%s at %p): the run is abandoned, the session goes on%s",
                  name, f->sig == SIGFPE ? "an arithmetic trap" : "an invalid memory access", f->addr,
                  f->omp_broken ? "; it faulted inside an OpenMP parallel region, whose other threads still wait: later runs use 1 thread (restart the shell for more)" : "");
}

static int invoke(MiCtx *ctx, RtModule *m, Prepared *pp) {
#ifdef _OPENMP
    if (omp_get_max_threads() != pp->threads) omp_set_num_threads(pp->threads);
#endif
    RtFbCtx fc = {ctx, pp->g, false, NULL, pp, m};
    RtFb fb = {&fc, rt_fallback_run, rt_alloc_out};
    CallArgs ca = {m, pp, &fb};
    RtFault fault;
    int rc = -1;
    if (rt_guarded_call(call_module, &ca, &rc, &fault)) {
        if (fc.fg) graph_free(fc.fg);
        return fault_error(ctx, m, &fault);
    }
    if (fc.fg) graph_free(fc.fg);
    if (rc != 0 && fc.failed) return -1;   /* rt_fallback_run's error is in ctx */
    if (rc >= RT_GUARD_FAILED && rc < RT_GUARD_FAILED + m->nguards) {
        char vals[512] = "";
        size_t L = 0;
        for (int i = 0; i < m->nsyms && L < sizeof vals - 1; i++)
            L += (size_t)snprintf(vals + L, sizeof vals - L, "%s%s=%lld", i ? ", " : "", m->sym_names[i], (long long)pp->syms[i]);
        return mi_err(ctx, m->src_path, 0, 0, "size guard '%s' of the compiled module does not hold for these inputs (%s)",
                      m->guards[rc - RT_GUARD_FAILED], vals);
    }
    if (rc == RT_INDEX_OOB) {   /* {found, index, size} of the first bad index */
        const int64_t *info = rt_sym(m->handle, "mi_index_oob_info");
        return mi_err(ctx, m->src_path, 0, 0, "compiled module: index %lld is out of bounds for dimension with size %lld",
                      info ? (long long)info[1] : -1LL, info ? (long long)info[2] : -1LL);
    }
    if (rc == RT_ZERO_DIV) {   /* ATen's CPU kernels: TORCH_CHECK(b != 0, "ZeroDivisionError") */
        const char *const *k = rt_sym(m->handle, "mi_zero_div_kernel");
        return mi_err(ctx, m->src_path, 0, 0, "compiled module: kernel '%s': ZeroDivisionError: an integer division, "
                      "remainder or fmod by zero", k && *k ? *k : "?");
    }
    if (rc == RT_WHILE_LIMIT) {   /* the bound was generated into the loop: the session's limit then */
        const char *const *w = rt_sym(m->handle, "mi_while_limit_loop");
        return mi_err(ctx, m->src_path, 0, 0, "compiled module: while_loop %s", w && *w ? *w : "?");
    }
    if (rc != 0 && m->cuda_error) return mi_err(ctx, m->src_path, 0, 0, "CUDA module failed: %s", m->cuda_error());
    if (rc != 0) return mi_err(ctx, m->src_path, 0, 0, "compiled module returned %d", rc);
    return 0;
}

/* One call with every tensor output in a fresh allocation, freed after: the cost
 * torch.compile's wrapper pays per call (empty_strided; large buffers are new mmaps whose pages
 * fault on first touch). The allocation is the one rt_run's outputs get (base/mem.h: the
 * session's cache of freed blocks, 2 MiB pages for large ones), not zero-filled, as
 * empty_strided's. Used by rt_time for like-for-like timings against it. */
static int invoke_fresh_outputs(MiCtx *ctx, RtModule *m, Prepared *pp) {
    void **keep = mi_xcalloc((size_t)pp->nouts + 1, sizeof *keep);
    int rc = 0;
    for (int j = 0; j < pp->nouts && rc == 0; j++) {
        keep[j] = pp->out_ptrs[j];
        const Tensor *t = pp->outs[j].kind == IV_TENSOR ? pp->outs[j].t : NULL;
        if (!t || !pp->out_ptrs[j]) continue;
        size_t bytes = t->storage ? t->storage->nbytes : 0;
        void *p = mi_mem_cache_alloc(ctx->mem_cache, bytes, false);
        if (!p) rc = mi_err(ctx, NULL, 0, 0, "out of memory timing output %d", j);
        pp->out_ptrs[j] = p;
    }
    if (rc == 0) rc = invoke(ctx, m, pp);
    for (int j = 0; j < pp->nouts; j++) {
        if (pp->out_ptrs[j] != keep[j]) mi_mem_free(pp->out_ptrs[j]);
        pp->out_ptrs[j] = keep[j];
    }
    free(keep);
    return rc;
}

static void copy_back(Prepared *pp, IValue *inputs) {
    for (int k = 0; k < pp->nin; k++)
        if (pp->staged[k] && pp->staged_of[k] >= 0) copy_elems(inputs[pp->staged_of[k]].t, pp->staged[k]);
}

int rt_run(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
           IValue **outs, int *nouts, double *seconds) {
    Prepared pp;
    if (prepare(ctx, m, g, inputs, ninputs, &pp) != 0) return -1;
    uint64_t t0 = mi_now_ns();
    int rc = invoke(ctx, m, &pp);
    uint64_t t1 = mi_now_ns();
    if (seconds) *seconds = (double)(t1 - t0) * 1e-9;
    if (rc != 0) {
        prep_free(&pp, false);
        return -1;
    }
    copy_back(&pp, inputs);
    *outs = pp.outs;
    *nouts = pp.nouts;
    prep_free(&pp, true);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int rt_time(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
            int warmup, int reps, double *median_s, double *min_s) {
    RtTiming t;
    if (rt_time_stats(ctx, m, g, inputs, ninputs, warmup, reps, &t) < 0) return -1;
    if (median_s) *median_s = t.median;
    if (min_s) *min_s = t.min;
    return 0;
}

/* The q-quantile of sorted t[0..n) (nearest rank below): q = 0.1 of 10 values is t[0]. */
static double quantile(const double *t, int n, double q) {
    int k = (int)(q * (n - 1));
    return t[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* One timed or warm-up call; the interrupt is checked between calls, never inside one. */
static int timed_call(MiCtx *ctx, RtModule *m, Prepared *pp, double *sec) {
    uint64_t t0 = mi_now_ns();
    int rc = ctx->time_fresh_outputs ? invoke_fresh_outputs(ctx, m, pp) : invoke(ctx, m, pp);
    if (sec) *sec = (double)(mi_now_ns() - t0) * 1e-9;
    return rc;
}

int rt_time_stats(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
                  int warmup, int reps, RtTiming *out) {
    memset(out, 0, sizeof *out);
    if (reps < 1) reps = 1;
    Prepared pp;
    if (prepare(ctx, m, g, inputs, ninputs, &pp) != 0) return -1;
    out->threads = m->cuda_time && !m->call_fb ? 0 : pp.threads;
    double *t = mi_xcalloc((size_t)reps, sizeof *t);
    int rc = 0, done = 0;
    /* kernels alone, CUDA events, inputs staying on the GPU; a CUDA module with host round
     * trips (call_fb) is timed whole, copies included, as its fallbacks need the callbacks */
    bool device_time = m->cuda_time && !m->call_fb;
    if (device_time) {
        rc = m->cuda_time(pp.in_ptrs, pp.out_ptrs, pp.syms, warmup, reps, t);
        if (rc != 0) rc = mi_err(ctx, m->src_path, 0, 0, "CUDA module failed: %s", m->cuda_error ? m->cuda_error() : "?");
        for (int i = 0; i < reps; i++) t[i] *= 1e-3;
        done = reps;
        out->warmup = warmup;
    } else {
        uint64_t w0 = mi_now_ns();
        while (rc == 0 && out->warmup < reps && (out->warmup < warmup || mi_now_ns() - w0 < 20000000ull)) {
            if (mi_interrupted(ctx)) { rc = mi_err_interrupted(ctx, "while timing: warming up, %d calls done", out->warmup); break; }
            rc = timed_call(ctx, m, &pp, NULL);
            out->warmup++;
        }
        for (; done < reps && rc == 0; done++) {
            if (mi_interrupted(ctx)) {
                rc = mi_err_interrupted(ctx, "while timing: %d of %d runs done", done, reps);
                break;
            }
            mi_progress(ctx, "timing runs", done, reps);
            rc = timed_call(ctx, m, &pp, &t[done]);
        }
    }
    if (rc == 0) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        out->reps = reps;
        out->median = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        out->min = t[0];
        out->max = t[reps - 1];
        out->p10 = quantile(t, reps, 0.1);
        out->p90 = quantile(t, reps, 0.9);
        out->spread = out->median > 0 ? (out->p90 - out->p10) / out->median : 0;
        copy_back(&pp, inputs);
    }
    free(t);
    prep_free(&pp, false);
    return rc;
}

static double median_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* CPU time of the whole process (every thread), in ns */
static uint64_t cpu_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int rt_profile(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
               int warmup, int reps, RtProfile *out) {
    memset(out, 0, sizeof *out);
    if (!m->prof_names)
        return mi_err(ctx, m->src_path, 0, 0, "this module has no per-kernel profile (%s)",
                      m->is_cuda ? "CUDA modules are timed whole" : "generated before profiling existed");
    if (reps < 1) reps = 1;
    Prepared pp;
    if (prepare(ctx, m, g, inputs, ninputs, &pp) != 0) return -1;
    int n = m->nprof, rc = 0;
    double *per = mi_xcalloc((size_t)n * reps + 1, sizeof *per), *whole = mi_xcalloc((size_t)reps, sizeof *whole);
    for (int i = 0; i < warmup && rc == 0; i++) rc = invoke(ctx, m, &pp);
    const char *clk = getenv("MINDUCTOR_PROFILE_CLOCK");
    bool cpu = clk && !strcmp(clk, "cpu");
    *m->profile = cpu ? 2 : 1;
    for (int r = 0; r < reps && rc == 0; r++) {
        memset(m->prof_ns, 0, sizeof *m->prof_ns * (size_t)n);
        uint64_t t0 = cpu ? cpu_now_ns() : mi_now_ns();
        rc = invoke(ctx, m, &pp);
        whole[r] = (double)((cpu ? cpu_now_ns() : mi_now_ns()) - t0) * 1e-6;
        for (int k = 0; k < n; k++) per[(size_t)k * reps + r] = (double)m->prof_ns[k] * 1e-6;
    }
    *m->profile = 0;
    if (rc == 0) {
        out->n = n;
        out->names = mi_xcalloc((size_t)n + 1, sizeof *out->names);
        out->ms = mi_xcalloc((size_t)n + 1, sizeof *out->ms);
        for (int k = 0; k < n; k++) {
            out->names[k] = m->prof_names[k];
            out->ms[k] = median_of(per + (size_t)k * reps, reps);
        }
        out->call_ms = median_of(whole, reps);
        copy_back(&pp, inputs);
    }
    free(per);
    free(whole);
    prep_free(&pp, false);
    return rc;
}

void rt_profile_format(const RtProfile *p, StrBuf *sb) {
    int *ord = mi_xcalloc((size_t)p->n + 1, sizeof *ord);
    double sum = 0;
    for (int k = 0; k < p->n; k++) ord[k] = k, sum += p->ms[k];
    for (int i = 1; i < p->n; i++)   /* slowest first; ties in call order */
        for (int j = i; j > 0 && p->ms[ord[j]] > p->ms[ord[j - 1]]; j--) { int t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t; }
    sb_put(sb, "        ms   share  #  kernel\n");
    for (int i = 0; i < p->n; i++) {
        int k = ord[i];
        sb_printf(sb, "%10.3f  %5.1f%%  %-2d %s\n", p->ms[k], p->call_ms > 0 ? 100.0 * p->ms[k] / p->call_ms : 0.0, k + 1, p->names[k]);
    }
    sb_printf(sb, "%10.3f  %5.1f%%     sum of the kernels\n", sum, p->call_ms > 0 ? 100.0 * sum / p->call_ms : 0.0);
    sb_printf(sb, "%10.3f  100.0%%     whole call (medians over the calls)\n", p->call_ms);
    free(ord);
}

void rt_profile_free(RtProfile *p) {
    free(p->names);
    free(p->ms);
    memset(p, 0, sizeof *p);
}

/* ---- checking against the interpreter ---- */

static int clone_inputs(MiCtx *ctx, IValue *in, int n, IValue **out) {
    IValue *c = mi_xcalloc((size_t)n + 1, sizeof *c);
    for (int i = 0; i < n; i++) {
        c[i] = in[i];
        c[i].items = NULL;
        c[i].n = 0;
        c[i].t = NULL;
        if (in[i].kind == IV_TENSOR && in[i].t) {
            Tensor *t = tensor_new(ctx, in[i].t->dtype, in[i].t->ndim, in[i].t->size);
            if (!t) {
                interp_free_outputs(c, i);
                return -1;
            }
            copy_elems(t, in[i].t);
            c[i].t = t;
        } else if (in[i].kind == IV_TUPLE) {
            interp_free_outputs(c, i);
            return mi_err(ctx, NULL, 0, 0, "input %d: tuple inputs are not supported", i);
        }
    }
    *out = c;
    return 0;
}

int rt_check(MiCtx *ctx, RtModule *m, const Graph *g, IValue *inputs, int ninputs,
             double rtol, double atol, StrBuf *report) {
    IValue *in_ref = NULL, *in_mod = NULL, *out_ref = NULL, *out_mod = NULL;
    int nref = 0, nmod = 0, result = -1;
    if (clone_inputs(ctx, inputs, ninputs, &in_ref) != 0) return -1;
    if (clone_inputs(ctx, inputs, ninputs, &in_mod) != 0) goto done;
    uint64_t t0 = mi_now_ns();
    if (interp_run(ctx, g, in_ref, ninputs, &out_ref, &nref) != 0) goto done;
    double t_ref = (double)(mi_now_ns() - t0) * 1e-9, t_mod = 0;
    if (rt_run(ctx, m, g, in_mod, ninputs, &out_mod, &nmod, &t_mod) != 0) goto done;
    if (nref != nmod) {
        mi_err(ctx, g->source, 0, 0, "interpreter returned %d values, module %d", nref, nmod);
        goto done;
    }
    /* torch._dynamo.utils.same's rule against the interpreter, a float64 run deciding rounding */
    bool *rnd = mi_xcalloc((size_t)nref + 1, sizeof *rnd), *rin = mi_xcalloc((size_t)ninputs + 1, sizeof *rin);
    num_random_outputs(g, rnd, nref, rin, ninputs);
    NumCheck c = {.ctx = ctx, .rtol = rtol, .atol = atol, .report = report, .fp64 = numref_new(ctx, g, inputs, ninputs),
                  .random_why = "not comparable: the module's random draws are not the interpreter's"};
    num_check_outputs(&c, out_ref, out_mod, nref, rnd);
    /* in-place updates of inputs must agree too (only mismatches are reported) */
    c.report = NULL;
    for (int i = 0; i < ninputs; i++) {
        if (in_ref[i].kind != IV_TENSOR) continue;
        char label[48];
        snprintf(label, sizeof label, "input %d after the call", i);
        StrBuf one;
        sb_init(&one);
        c.report = report ? &one : NULL;
        if (!num_check_value(&c, label, &in_ref[i], &in_mod[i], NUM_IN_AFTER, i, rin[i]) && report && one.s) sb_put(report, one.s);
        sb_free(&one);
    }
    numref_free(c.fp64);
    free(rnd);
    free(rin);
    int all_ok = c.bad == 0;
    if (report)
        sb_printf(report, "interp %.3f ms, compiled %.3f ms (%.1fx)%s\n", t_ref * 1e3, t_mod * 1e3,
                  t_mod > 0 ? t_ref / t_mod : 0.0, m->cache_hit ? ", module from cache" : "");
    result = all_ok;
done:
    if (out_ref) interp_free_outputs(out_ref, nref);
    if (out_mod) interp_free_outputs(out_mod, nmod);
    if (in_ref) interp_free_outputs(in_ref, ninputs);
    if (in_mod) interp_free_outputs(in_mod, ninputs);
    return result;
}

/* ---- fallbacks: the callback a compiled module calls for a FallbackKernel ---- */

/* "embedding" in g, "true_graph_0_embedding" in g's subgraph true_graph_0 (nested: the path) */
static const Node *find_node(const Graph *g, const char *name) {
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i]->kind == N_CALL_FUNCTION && g->nodes[i]->name && strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    for (int k = 0; k < g->nsubs; k++) {
        size_t L = g->subs[k].name ? strlen(g->subs[k].name) : 0;
        if (!L || strncmp(name, g->subs[k].name, L) != 0 || name[L] != '_') continue;
        const Node *n = find_node(g->subs[k].g, name + L + 1);
        if (n) return n;
    }
    return NULL;
}

static const Node *find_node_anywhere(const Graph *g, const char *name) {
    for (int k = 0; k < g->nsubs; k++) {
        const Graph *sg = g->subs[k].g;
        for (int i = 0; i < sg->n; i++)
            if (sg->nodes[i]->kind == N_CALL_FUNCTION && sg->nodes[i]->name && strcmp(sg->nodes[i]->name, name) == 0) return sg->nodes[i];
        const Node *n = find_node_anywhere(sg, name);
        if (n) return n;
    }
    return NULL;
}

static Tensor *wrap_fb(MiCtx *ctx, const RtFbTensor *t, const char *node, int k) {
    if (!t->data) return NULL;
    if (t->ndim < 0 || t->ndim > 16 || t->ndim > MI_MAX_DIMS || t->dtype < 0 || t->dtype >= DT_COUNT) {
        mi_err(ctx, NULL, 0, 0, "fallback '%s': tensor %d has a bad description", node, k);
        return NULL;
    }
    return ir_fallback_wrap(t->data, (DType)t->dtype, t->ndim, t->size, t->stride, t->offset);
}

/* Result k of node n, which the call sized (an unbacked u0): storage malloc'd for it,
 * contiguous (the layout the module's buffer has: codegen_c.c checks it), the values copied
 * in, and described in *d for the module (which frees data). 0, or -1 + ctx error. Example:
 * nonzero of a 6 x 3 mask with 4 true elements: i64[4, 2] strides [2, 1]. */
static int give_fresh(MiCtx *ctx, const Node *n, const Tensor *r, RtFbTensor *d) {
    if (r->ndim > 16) return mi_err(ctx, NULL, n->src_line, 0, "fallback '%s': a data-dependent result of %d dims", n->name, r->ndim);
    int64_t stride[MI_MAX_DIMS], numel = 1;
    for (int k = r->ndim - 1; k >= 0; k--) { stride[k] = numel; numel *= r->size[k]; }
    d->data = malloc((size_t)(numel ? numel : 1) * dtype_size(r->dtype));
    if (!d->data) return mi_err(ctx, NULL, n->src_line, 0, "fallback '%s': out of memory for its result", n->name);
    d->dtype = (int32_t)r->dtype;
    d->ndim = r->ndim;
    d->offset = 0;
    for (int k = 0; k < r->ndim; k++) { d->size[k] = r->size[k]; d->stride[k] = stride[k]; }
    Tensor *v = ir_fallback_wrap(d->data, r->dtype, r->ndim, r->size, stride, 0);
    copy_elems(v, r);
    ir_fallback_unwrap(v);
    return 0;
}

int rt_fallback_run(void *vctx, const char *node, int nargs, const RtFbTensor *args, int nouts, RtFbTensor *outs,
                    int nsyms, const char *const *sym_names, const int64_t *syms) {
    RtFbCtx *fc = vctx;
    MiCtx *ctx = fc->ctx;
    const Node *n = fc->g ? find_node(fc->g, node) : NULL;
    if (!n && fc->g) n = find_node_anywhere(fc->g, node);   /* a checkpoint body, lowered inline */
    const Graph *eg = fc->g;
    if (!n && fc->g && functionalize_needed_for_lowering(fc->g)) {   /* a node of the functional form ir_lower lowered */
        if (!fc->fg && (fc->fg = functionalize(ctx, fc->g))) ops_resolve_graph(fc->fg);
        if (fc->fg && (n = find_node(fc->fg, node))) eg = fc->fg;
    }
    if (!n) { fc->failed = true; return mi_err(ctx, fc->g ? fc->g->source : NULL, 0, 0, "compiled module: fallback node '%s' is not in the graph it was run with", node); }
    Tensor **a = mi_xcalloc((size_t)nargs + 1, sizeof *a), **o = mi_xcalloc((size_t)nouts + 1, sizeof *o);
    SymBinding *b = mi_xcalloc((size_t)nsyms + 1, sizeof *b);
    for (int i = 0; i < nsyms; i++) { b[i].name = sym_names[i]; b[i].value = syms[i]; }
    int rc = 0;
    for (int i = 0; i < nargs && rc == 0; i++)
        if (!(a[i] = wrap_fb(ctx, &args[i], node, i))) rc = mi_err(ctx, NULL, 0, 0, "fallback '%s': argument %d has no data", node, i);
    for (int k = 0; k < nouts && rc == 0; k++)
        if (outs[k].data && !(o[k] = wrap_fb(ctx, &outs[k], node, k))) rc = -1;
    Tensor **fresh = mi_xcalloc((size_t)nouts + 1, sizeof *fresh);
    if (rc == 0) rc = ir_fallback_eval_fresh(ctx, eg, n, a, nargs, o, nouts, b, nsyms, fresh);
    for (int k = 0; k < nouts; k++) {   /* the results whose size the call decided */
        if (rc == 0 && !outs[k].data && outs[k].offset == -1)
            rc = fresh[k] ? give_fresh(ctx, n, fresh[k], &outs[k])
                          : mi_err(ctx, NULL, n->src_line, 0, "fallback '%s': result %d is no tensor", node, k);
        if (fresh[k]) tensor_unref(fresh[k]);
    }
    free(fresh);
    for (int i = 0; i < nargs; i++) ir_fallback_unwrap(a[i]);
    for (int k = 0; k < nouts; k++) ir_fallback_unwrap(o[k]);
    free(a);
    free(o);
    free(b);
    if (rc) fc->failed = true;
    return rc ? -1 : 0;
}
