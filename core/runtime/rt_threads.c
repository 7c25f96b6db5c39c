/* rt_threads.c — how many OpenMP threads the generated kernels get when the session does not
 * say (`set threads 0`, the default). The last stage of the pipeline (runtime) calls it once per
 * run or timing loop.
 *
 * The rule is PyTorch's: $OMP_NUM_THREADS when it is set (at::intraop_default_num_threads),
 * else the number of physical cores (c10::TaskThreadPoolBase::defaultNumThreads: "cpuinfo's
 * cores are physical ones and processors are virtual"). Hyper-threads of one core share its
 * vector units, so a thread per logical CPU only adds contention; on a small VM whose vCPUs are
 * shared with other guests, more threads than cores make every timing a lottery. Only the CPUs
 * this process may run on count (sched_getaffinity: taskset, cgroup cpusets), and a cgroup v2
 * CPU quota (cpu.max "200000 100000" = 2 CPUs) caps the count further.
 *
 * Not oversubscribing also means not asking for cores that other processes keep busy right
 * now: an OpenMP team waits at every barrier for its slowest thread, and a thread that shares
 * its core with another runnable process loses whole scheduler slices (a 7 us kernel measured
 * 16 ms). So the cores that the runnable tasks of /proc/loadavg (4th field, "8/134": 8
 * runnable, this process included) leave free are the limit, at least one. */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer from a one-line sysfs/cgroup file, or -1. */
static long read_long(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* CPUs of a cgroup v2 quota (ceil(quota / period)), 0 when unlimited or unknown. */
static int cgroup_cpu_limit(void) {
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (!f) return 0;
    char quota[32] = "";
    long period = 0;
    int n = fscanf(f, "%31s %ld", quota, &period);
    fclose(f);
    if (n != 2 || !strcmp(quota, "max") || period <= 0) return 0;
    long q = atol(quota);
    return q > 0 ? (int)((q + period - 1) / period) : 0;
}

/* Physical cores among the CPUs of this process's affinity mask: distinct (package, core id)
 * pairs from sysfs topology; 0 when that cannot be read. Example: 4 vCPUs that are 2 cores
 * with 2 hyper-threads each -> 2. */
static int physical_cores(int *logical) {
    cpu_set_t set;
    *logical = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    long seen[CPU_SETSIZE];
    int nseen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        (*logical)++;
        char p[128];
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
        long core = read_long(p);
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        long pkg = read_long(p);
        if (core < 0) return 0;
        long key = (pkg < 0 ? 0 : pkg) * 1000000 + core;
        int k = 0;
        while (k < nseen && seen[k] != key) k++;
        if (k == nseen) seen[nseen++] = key;
    }
    return nseen;
}

/* Threads of this process that are runnable now (state R in /proc/self/task/TID/stat), at least
 * one: the caller. The trick: OpenMP's idle workers spin for a while after a parallel region
 * (libgomp's GOMP_SPINCOUNT) and /proc/loadavg counts them as runnable, but they are this
 * process's own team, not other work (minibench's figure 1 ran its kernels on 1 thread of 2 after
 * its own interpreter run: softmax 6.1 ms instead of 3.5). */
static int own_runnable(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 1;
    int running = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        const char *p = strrchr(buf, ')');   /* the state follows the command name, which may hold spaces */
        running += p && p[1] == ' ' && p[2] == 'R';
    }
    closedir(d);
    return running > 0 ? running : 1;
}

/* Runnable tasks of other processes (/proc/loadavg's "R/T" field minus this process's runnable
 * threads), -1 if unknown. */
static int other_runnable(void) {
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1;
    double l1, l5, l15;
    int run = 0, total = 0;
    int n = fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &run, &total);
    fclose(f);
    if (n != 5 || run < 1) return -1;
    int others = run - own_runnable();
    return others > 0 ? others : 0;
}

int rt_default_threads(char *why, size_t n) {
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && atoi(env) > 0) {
        if (why) snprintf(why, n, "OMP_NUM_THREADS");
        return atoi(env);
    }
    int logical = 0, cores = physical_cores(&logical);
    int limit = cgroup_cpu_limit();
    int t = cores > 0 ? cores : logical > 0 ? logical : 1;
    if (limit > 0 && limit < t) {
        if (why) snprintf(why, n, "the cgroup's CPU quota of %d", limit);
        return limit;
    }
    int busy = other_runnable();
    int free_cores = busy < 0 ? t : t - busy < 1 ? 1 : t - busy;
    if (why) {
        int k = 0;
        k = snprintf(why, n, "%d %s", t, cores > 0 ? "physical cores" : "CPUs");
        if (cores > 0 && cores < logical && k >= 0 && (size_t)k < n) k += snprintf(why + k, n - (size_t)k, " of %d logical CPUs", logical);
        if (free_cores < t && k >= 0 && (size_t)k < n)
            snprintf(why + k, n - (size_t)k, ", %d kept busy by %d other runnable task%s", t - free_cores, busy, busy == 1 ? "" : "s");
    }
    return free_cores;
}
