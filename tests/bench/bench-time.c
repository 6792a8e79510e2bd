/* SPDX-License-Identifier: MIT */
/*
 * bench-time: wall time, CPU time and peak RSS of whole processes, side by
 * side. Each SPEC is one command; the commands run in rounds (one run of
 * each per round, the starting command rotating from round to round) so
 * drift during a sitting hits them alike. Reports per command the median
 * and p90 (nearest rank) wall time, the median user+sys CPU time and the
 * median peak RSS from wait4() (the largest of the process and the
 * descendants it waited for), and the difference and ratio of its median
 * to a reference command's (the first one unless -r names another).
 * With -m, the peak RSS (VmHWM of /proc/PID/status) and the CPU time
 * (/proc/PID/schedstat) of the process itself, apart from its
 * descendants', are reported too: read every 2 ms while it runs, they are
 * what it had reached at the last read, up to 2 ms before its exit. Figures only: it exits 0
 * whatever the times, and also when a command fails (the failed runs are
 * counted and left out).
 *
 * usage: bench-time [-n RUNS] [-w WARMUP] [-t TIMEOUT_S] [-T TSV] SPEC [; SPEC]...
 *   SPEC: LABEL [-i IN] [-o OUT] [-E ERR] [-C DIR] [-e K=V]... [-u K]...
 *               [-r REF] [-b BYTES] [-m 1] [-s STAMPS] -- PROG [ARG]...
 *   -i IN     stdin (default /dev/null)     -o OUT  stdout (default /dev/null)
 *   -E ERR    stderr appended to ERR (default /dev/null)
 *   -C DIR    working directory             -e K=V  set, -u K unset in the env
 *   -r REF    the label of the reference command for this one
 *   -b BYTES  also report BYTES / median wall time as MB/s (1 MB = 10^6 B)
 *   -m 1      poll the process's own VmHWM and CPU time (wakes this process
 *             every 2 ms)
 *   -s STAMPS append "spawn <us>" and "reaped <us>" per run to STAMPS:
 *             CLOCK_REALTIME in microseconds just before posix_spawn and
 *             just after wait4, to line the process's own clock marks up
 *             with its parent's (tests/bench/steps.sh); written after the run
 *   -T TSV    append one tab-separated line per command to TSV: label, good
 *             runs, runs, median ms, p90 ms, min ms, cpu ms, rss KiB, ref,
 *             diff ms, ratio, MB/s, own rss KiB, own cpu ms (these two with -m,
 *             else empty)
 * A ";" argument (quote it in a shell) ends a SPEC; so does the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_SPECS 16
#define MAX_RUNS 1000

struct spec {
    const char *label, *in, *out, *err, *dir, *ref, *stamps;
    char **argv;  /* into the program's argv */
    char **env;   /* built from environ and -e/-u */
    double bytes; /* 0: no MB/s */
    double wall[MAX_RUNS], cpu[MAX_RUNS], rss[MAX_RUNS], own[MAX_RUNS], own_cpu[MAX_RUNS];
    int hwm; /* -m: poll VmHWM */
    int good, runs, last_status;
};

static struct spec specs[MAX_SPECS];
static int nspecs;

static void die(const char *msg)
{
    fprintf(stderr, "bench-time: %s\n", msg);
    exit(2);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        die(what);
    return v;
}

/* The environment of a spec: environ, minus the -u names, with the -e
 * assignments replacing or adding. */
static char **build_env(char **sets, int nsets, char **unsets, int nunsets)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + (size_t)nsets + 1, sizeof(*env));
    if (!env)
        die("out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int drop = 0;
        for (int j = 0; j < nunsets && !drop; j++)
            drop = strlen(unsets[j]) == len && strncmp(unsets[j], environ[i], len) == 0;
        for (int j = 0; j < nsets && !drop; j++)
            drop = strncmp(sets[j], environ[i], len) == 0 && sets[j][len] == '=';
        if (!drop)
            env[k++] = environ[i];
    }
    for (int j = 0; j < nsets; j++)
        env[k++] = sets[j];
    env[k] = NULL;
    return env;
}

/* Parse one SPEC from argv[*i]; leaves *i after its terminator. */
static void parse_spec(int argc, char **argv, int *i)
{
    if (nspecs == MAX_SPECS)
        die("too many commands");
    struct spec *s = &specs[nspecs++];
    char *sets[64], *unsets[64];
    int nsets = 0, nunsets = 0;
    s->label = argv[(*i)++];
    while (*i < argc && strcmp(argv[*i], "--") != 0) {
        const char *o = argv[*i];
        if (*i + 1 >= argc || o[0] != '-' || strlen(o) != 2)
            die("bad SPEC option (missing --?)");
        const char *v = argv[*i + 1];
        *i += 2;
        switch (o[1]) {
        case 'i': s->in = v; break;
        case 'o': s->out = v; break;
        case 'E': s->err = v; break;
        case 'C': s->dir = v; break;
        case 'r': s->ref = v; break;
        case 'b': s->bytes = (double)parse_long(v, "bad -b"); break;
        case 'm': s->hwm = parse_long(v, "bad -m") != 0; break;
        case 's': s->stamps = v; break;
        case 'e':
            if (nsets == 64 || !strchr(v, '='))
                die("bad -e");
            sets[nsets++] = (char *)v;
            break;
        case 'u':
            if (nunsets == 64)
                die("too many -u");
            unsets[nunsets++] = (char *)v;
            break;
        default: die("unknown SPEC option");
        }
    }
    if (*i >= argc - 1)
        die("SPEC without a program");
    (*i)++; /* "--" */
    s->argv = &argv[*i];
    while (*i < argc && strcmp(argv[*i], ";") != 0)
        (*i)++;
    if (*i < argc)
        argv[(*i)++] = NULL; /* the ";" ends this argv */
    s->env = build_env(sets, nsets, unsets, nunsets);
}

/* VmHWM (KiB) and CPU time (ms) of a running process so far; each
 * left as it was if it cannot be read. */
static void own_stats(pid_t pid, double *hwm, double *cpu)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            *hwm = strtod(line + 6, NULL);
    if (f)
        fclose(f);
    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    f = fopen(path, "re");
    if (f && fgets(line, sizeof(line), f))
        *cpu = strtod(line, NULL) / 1e6; /* ns on the CPU */
    if (f)
        fclose(f);
}

static long long unix_us(const struct timespec *ts)
{
    return (long long)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
}

/* -s: the parent's clock at spawn and at reaping, appended to the file. */
static void write_stamps(const char *path, const struct timespec *spawned,
                         const struct timespec *reaped)
{
    FILE *f = fopen(path, "ae");
    if (!f)
        die("cannot open the -s file");
    fprintf(f, "spawn %lld\nreaped %lld\n", unix_us(spawned), unix_us(reaped));
    if (fclose(f) != 0)
        die("cannot write the -s file");
}

/* One run of s; returns 0 and fills the figures, or -1. */
static int run_once(struct spec *s, int timeout_s, double *wall, double *cpu, double *rss,
                    double *own, double *own_cpu)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, chld;
    sigemptyset(&none);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, s->in ? s->in : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, s->out ? s->out : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, s->err ? s->err : "/dev/null",
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    int cwd = -1;
    if (s->dir) {
        cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cwd < 0 || chdir(s->dir) != 0)
            die("cannot change to the -C directory");
    }
    pid_t pid;
    struct timespec spawned, reaped;
    clock_gettime(CLOCK_REALTIME, &spawned);
    double t0 = now_ms();
    int rc = posix_spawn(&pid, s->argv[0], &fa, &attr, s->argv, s->env);
    if (cwd >= 0) {
        if (fchdir(cwd) != 0)
            die("cannot change back");
        close(cwd);
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        fprintf(stderr, "bench-time: %s: cannot run %s: %s\n", s->label, s->argv[0], strerror(rc));
        return -1;
    }
    int status = 0;
    struct rusage ru;
    struct timespec left = {timeout_s, 0};
    double deadline = t0 + timeout_s * 1e3;
    *own = 0;
    *own_cpu = 0;
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid)
            break;
        double rest = deadline - now_ms();
        if (rest <= 0) {
            fprintf(stderr, "bench-time: %s: timed out after %d s, killed\n", s->label, timeout_s);
            kill(-pid, SIGKILL);
            while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
                ;
            s->last_status = -1;
            return -1;
        }
        if (s->hwm) {
            own_stats(pid, own, own_cpu);
            rest = rest < 2 ? rest : 2;
        }
        left.tv_sec = (time_t)(rest / 1e3);
        left.tv_nsec = (long)((rest - (double)left.tv_sec * 1e3) * 1e6);
        sigtimedwait(&chld, NULL, &left);
    }
    *wall = now_ms() - t0;
    clock_gettime(CLOCK_REALTIME, &reaped);
    if (s->stamps)
        write_stamps(s->stamps, &spawned, &reaped);
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    *rss = (double)ru.ru_maxrss; /* KiB */
    s->last_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Nearest rank: the smallest value with at least p of the sample at or
 * below it. v sorted. */
static double rank(const double *v, int n, double p)
{
    int k = (int)(p * n + 0.999999);
    return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

struct figures {
    double med, p90, min, cpu, rss, own, own_cpu;
};

static struct figures figures_of(struct spec *s)
{
    struct figures f = {0};
    if (s->good == 0)
        return f;
    f.med = median(s->wall, s->good);
    f.p90 = rank(s->wall, s->good, 0.9);
    f.min = s->wall[0];
    f.cpu = median(s->cpu, s->good);
    f.rss = median(s->rss, s->good);
    f.own = s->hwm ? median(s->own, s->good) : 0;
    f.own_cpu = s->hwm ? median(s->own_cpu, s->good) : 0;
    return f;
}

int main(int argc, char **argv)
{
    long runs = 7, warm = 1, timeout_s = 120;
    const char *tsv = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] && !argv[i][2]; i += 2) {
        if (i + 1 >= argc)
            die("missing option value");
        switch (argv[i][1]) {
        case 'n': runs = parse_long(argv[i + 1], "bad -n"); break;
        case 'w': warm = parse_long(argv[i + 1], "bad -w"); break;
        case 't': timeout_s = parse_long(argv[i + 1], "bad -t"); break;
        case 'T': tsv = argv[i + 1]; break;
        default: die("unknown option");
        }
    }
    if (runs < 1 || runs > MAX_RUNS || timeout_s < 1)
        die("bad -n or -t");
    while (i < argc)
        parse_spec(argc, argv, &i);
    if (nspecs == 0)
        die("usage: bench-time [-n RUNS] [-w WARMUP] [-t S] [-T TSV] SPEC [; SPEC]...");
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL); /* for sigtimedwait */

    for (long r = -warm; r < runs; r++) {
        for (int k = 0; k < nspecs; k++) {
            struct spec *s = &specs[(k + (r < 0 ? 0 : r)) % nspecs];
            double w, c, m, o, oc;
            int ok = run_once(s, (int)timeout_s, &w, &c, &m, &o, &oc) == 0;
            if (r < 0)
                continue;
            s->runs++;
            if (ok) {
                s->wall[s->good] = w;
                s->cpu[s->good] = c;
                s->rss[s->good] = m;
                s->own[s->good] = o;
                s->own_cpu[s->good] = oc;
                s->good++;
            }
        }
    }

    struct figures fig[MAX_SPECS];
    for (int k = 0; k < nspecs; k++)
        fig[k] = figures_of(&specs[k]);
    FILE *t = tsv ? fopen(tsv, "a") : NULL;
    for (int k = 0; k < nspecs; k++) {
        struct spec *s = &specs[k];
        const struct figures *f = &fig[k];
        int ref = 0;
        for (int j = 0; s->ref && j < nspecs; j++)
            if (strcmp(specs[j].label, s->ref) == 0)
                ref = j;
        if (s->good == 0) {
            printf("  %-50s failed: %d of %d runs (last exit %d)\n", s->label, s->runs - s->good,
                   s->runs, s->last_status);
            if (t)
                fprintf(t, "%s\t0\t%d\t\t\t\t\t\t\t\t\t\t\t\n", s->label, s->runs);
            continue;
        }
        double diff = f->med - fig[ref].med;
        double ratio = fig[ref].med > 0 ? f->med / fig[ref].med : 0;
        double mbps = s->bytes > 0 ? s->bytes / 1e6 / (f->med / 1e3) : 0;
        printf("  %-50s %8.1f ms  p90 %8.1f  cpu %8.1f ms  rss %6.1f MiB", s->label, f->med, f->p90,
               f->cpu, f->rss / 1024);
        if (s->hwm)
            printf("  own: rss %.1f MiB, cpu %.1f ms", f->own / 1024, f->own_cpu);
        if (mbps > 0)
            printf("  %7.1f MB/s", mbps);
        if (k != ref && specs[ref].good)
            printf("  %+8.1f ms (x%.2f) vs %s", diff, ratio, specs[ref].label);
        if (s->good < s->runs)
            printf("  [%d of %d runs failed, last exit %d]", s->runs - s->good, s->runs,
                   s->last_status);
        printf("\n");
        if (!t)
            continue;
        fprintf(t, "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t%.2f\t%.3f\t%.1f\t", s->label,
                s->good, s->runs, f->med, f->p90, f->min, f->cpu, f->rss,
                k != ref ? specs[ref].label : "", k != ref ? diff : 0, k != ref ? ratio : 1, mbps);
        if (s->hwm)
            fprintf(t, "%.0f\t%.2f", f->own, f->own_cpu);
        fprintf(t, "\n");
    }
    if (t)
        fclose(t);
    fflush(stdout);
    return 0;
}
