/* SPDX-License-Identifier: MIT */
/*
 * bench-latency: how long a line written by the coder takes to come out as
 * an event on the stdout of the process read. Each SPEC's command runs with
 * its stdout on a pipe read here; the fake coder (FAKE_CODER_STAMP=@@STAMP@@)
 * writes the CLOCK_REALTIME of each write into the line, and every line
 * read that holds exactly one "bt-stamp=<ns>" gives a sample: the time the
 * read() that completed the line returned, minus the stamp. Commands run in
 * rounds as in bench-time; samples of all runs of a command are pooled.
 * Reports p50, p90, p99 and max in microseconds per command, and the
 * difference of its p50 and p99 to the first command's (the reference: the
 * fake coder read directly). Figures only: exit 0 whatever they are.
 *
 * usage: bench-latency [-n RUNS] [-T TSV] SPEC [; SPEC]...
 *   SPEC: LABEL [-i IN] -- PROG [ARG]...    (stdin IN, default /dev/null)
 *   -T TSV  append per command: label, samples, p50, p90, p99, max (us),
 *           diff p50, diff p99 (us)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPECS 8
#define MARK "bt-stamp="

struct spec {
    const char *label, *in;
    char **argv;
    double *us; /* samples */
    size_t n, cap;
    int failed;
};

static struct spec specs[MAX_SPECS];
static int nspecs;

static void die(const char *msg)
{
    fprintf(stderr, "bench-latency: %s\n", msg);
    exit(2);
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void add(struct spec *s, double us)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->us = realloc(s->us, s->cap * sizeof(*s->us));
        if (!s->us)
            die("out of memory");
    }
    s->us[s->n++] = us;
}

/* The stamp of a line holding exactly one, or -1. */
static long long stamp_of(const char *line, size_t n)
{
    const size_t m = sizeof(MARK) - 1;
    long long stamp = -1;
    int found = 0;
    for (size_t i = 0; i + m <= n; i++) {
        if (line[i] != MARK[0] || memcmp(line + i, MARK, m) != 0)
            continue;
        if (++found > 1)
            return -1;
        long long v = 0;
        size_t k = i + m;
        for (; k < n && line[k] >= '0' && line[k] <= '9'; k++)
            v = v * 10 + (line[k] - '0');
        stamp = k > i + m ? v : -1;
    }
    return stamp;
}

static void run_once(struct spec *s)
{
    int p[2];
    if (pipe(p) != 0)
        die("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        int in = open(s->in ? s->in : "/dev/null", O_RDONLY);
        int null = open("/dev/null", O_WRONLY);
        if (in < 0 || null < 0)
            _exit(127);
        dup2(in, 0);
        dup2(p[1], 1);
        dup2(null, 2);
        close(p[0]);
        close(p[1]);
        execv(s->argv[0], s->argv);
        _exit(127);
    }
    close(p[1]);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    for (;;) {
        if (cap - len < 65536) {
            cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown)
                die("out of memory");
            buf = grown;
        }
        ssize_t r = read(p[0], buf + len, cap - len);
        long long arrival = now_ns();
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        size_t off = 0;
        char *nl;
        while ((nl = memchr(buf + off, '\n', len - off)) != NULL) {
            long long st = stamp_of(buf + off, (size_t)(nl - (buf + off)));
            if (st > 0)
                add(s, (double)(arrival - st) / 1e3);
            off = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + off, len - off);
        len -= off;
    }
    close(p[0]);
    free(buf);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        s->failed++;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank of the sorted sample. */
static double rank(const double *v, size_t n, double p)
{
    size_t k = (size_t)(p * (double)n + 0.999999);
    return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

static void parse_spec(int argc, char **argv, int *i)
{
    if (nspecs == MAX_SPECS)
        die("too many commands");
    struct spec *s = &specs[nspecs++];
    s->label = argv[(*i)++];
    while (*i + 1 < argc && strcmp(argv[*i], "--") != 0) {
        if (strcmp(argv[*i], "-i") != 0)
            die("bad SPEC option (missing --?)");
        s->in = argv[*i + 1];
        *i += 2;
    }
    if (*i >= argc - 1)
        die("SPEC without a program");
    (*i)++;
    s->argv = &argv[*i];
    while (*i < argc && strcmp(argv[*i], ";") != 0)
        (*i)++;
    if (*i < argc)
        argv[(*i)++] = NULL;
}

int main(int argc, char **argv)
{
    long runs = 7;
    const char *tsv = NULL;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "-n") == 0)
            runs = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-T") == 0)
            tsv = argv[i + 1];
        else
            die("unknown option");
    }
    while (i < argc)
        parse_spec(argc, argv, &i);
    if (nspecs == 0 || runs < 1)
        die("usage: bench-latency [-n RUNS] [-T TSV] SPEC [; SPEC]...");
    for (long r = 0; r < runs; r++)
        for (int k = 0; k < nspecs; k++)
            run_once(&specs[(k + r) % nspecs]);
    FILE *t = tsv ? fopen(tsv, "a") : NULL;
    double ref50 = 0, ref99 = 0;
    for (int k = 0; k < nspecs; k++) {
        struct spec *s = &specs[k];
        if (s->n == 0) {
            printf("  %-50s no stamped lines read (%d runs failed)\n", s->label, s->failed);
            continue;
        }
        qsort(s->us, s->n, sizeof(*s->us), cmp_double);
        double p50 = rank(s->us, s->n, 0.5), p90 = rank(s->us, s->n, 0.9);
        double p99 = rank(s->us, s->n, 0.99), max = s->us[s->n - 1];
        if (k == 0) {
            ref50 = p50;
            ref99 = p99;
        }
        printf("  %-50s %6zu lines  p50 %7.1f us  p90 %7.1f  p99 %7.1f  max %8.1f", s->label, s->n,
               p50, p90, p99, max);
        if (k > 0)
            printf("  (p50 %+.1f us, p99 %+.1f us vs %s)", p50 - ref50, p99 - ref99,
                   specs[0].label);
        if (s->failed)
            printf("  [%d runs failed]", s->failed);
        printf("\n");
        if (t)
            fprintf(t, "%s\t%zu\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", s->label, s->n, p50, p90,
                    p99, max, k ? p50 - ref50 : 0, k ? p99 - ref99 : 0);
    }
    if (t)
        fclose(t);
    return 0;
}
