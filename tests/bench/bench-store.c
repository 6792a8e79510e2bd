/* SPDX-License-Identifier: MIT */
/*
 * bench-store: browsing a large store. Generates N conversations (default
 * 10,000) with tests/support/gen-store, then reports the wall time of the
 * generation and the median wall time of several runs of `baton search`
 * (a word in one conversation, a word in every one), `baton ls` (human
 * and --json) and `baton show --last 2`, stdout to /dev/null, and the size
 * of the database. Figures only: it never fails on speed.
 *
 * usage: bench-store [N]
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define BATON BT_BINARY_DIR "/baton"
#define GEN_STORE BT_BINARY_DIR "/tests/support/gen-store"
#define RUNS 7 /* runs per command; the median is reported */

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Run argv with stdout to out (NULL: /dev/null) and stderr to /dev/null;
 * returns the wall time in ms, or -1 if it did not exit 0 (or 1 when
 * ok1). */
static double timed(const char *const *argv, const char *out, int ok1)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now_ms();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    double t = now_ms() - t0;
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && !(ok1 && WEXITSTATUS(status) == 1)))
        return -1;
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median wall time of RUNS runs of baton with args (exit 1 allowed when
 * ok1); prints a line. */
static void bench(const char *what, const char *const *args, int ok1)
{
    const char *argv[16] = {BATON};
    size_t n = 1;
    while (args[n - 1] && n < 15) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    double t[RUNS];
    for (int i = 0; i < RUNS; i++) {
        if ((t[i] = timed(argv, NULL, ok1)) < 0) {
            printf("  %-36s failed\n", what);
            return;
        }
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    printf("  %-36s %8.1f ms median  (min %.1f, max %.1f, %d runs)\n", what, t[RUNS / 2], t[0],
           t[RUNS - 1], RUNS);
}

static long long file_size(const char *dir, const char *name)
{
    char *path = bt_xasprintf("%s/%s", dir, name);
    struct stat st;
    long long v = stat(path, &st) == 0 ? (long long)st.st_size : 0;
    free(path);
    return v;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    if (n < 2) {
        fprintf(stderr, "usage: bench-store [N >= 2]\n");
        return 2;
    }
    char dir[] = "/tmp/baton-bench-store-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench-store: mkdtemp");
        return 1;
    }
    char *home = bt_xasprintf("%s/home", dir);
    char *ids = bt_xasprintf("%s/ids", dir);
    char count[32];
    snprintf(count, sizeof count, "%ld", n);
    setenv("BATON_HOME", home, 1);
    setenv("NO_COLOR", "1", 1);

    printf("store: %ld generated conversations (2 turns, 3 events a run; gen-store)\n", n);
    const char *gen[] = {GEN_STORE, home, count, "42", NULL};
    double tgen = timed(gen, ids, 0);
    if (tgen < 0) {
        printf("  gen-store failed\n");
    } else {
        printf("  %-36s %8.1f ms  (%.2f ms a conversation, 7 commits each)\n", "generate", tgen,
               tgen / (double)n);
        long long db = file_size(home, "baton.db"), wal = file_size(home, "baton.db-wal");
        printf("  %-36s %8.1f MiB  (+ %.1f MiB WAL; %.1f KiB a conversation)\n", "database",
               (double)db / 1048576.0, (double)wal / 1048576.0, (double)db / 1024.0 / (double)n);
        char rare[32], last[64] = "";
        snprintf(rare, sizeof rare, "zebra%ld", n / 2);
        FILE *f = fopen(ids, "r");
        if (f) {
            for (long i = 0; i <= n / 3 && fgets(last, sizeof last, f); i++)
                ;
            last[strcspn(last, "\n")] = '\0';
            fclose(f);
        }
        const char *search_rare[] = {"search", rare, NULL};
        const char *search_common[] = {"search", "answer", NULL};
        const char *search_common_all[] = {"search", "--limit", "1000000", "answer", NULL};
        const char *search_none[] = {"search", "quetzalcoatl", NULL};
        const char *ls[] = {"ls", NULL};
        const char *ls_json[] = {"ls", "--json", NULL};
        bench("baton search <word in 1>", search_rare, 1);
        bench("baton search <word in all> (50)", search_common, 1);
        bench("baton search <word in all> (all)", search_common_all, 1);
        bench("baton search <word in none>", search_none, 1);
        bench("baton ls", ls, 0);
        bench("baton ls --json", ls_json, 0);
        if (last[0]) {
            const char *show[] = {"show", "--last", "2", last, NULL};
            bench("baton show --last 2", show, 0);
        }
        const char *rm[] = {BATON, "rm", last, NULL};
        double trm = last[0] ? timed(rm, NULL, 0) : -1;
        if (trm >= 0)
            printf("  %-36s %8.1f ms  (one run)\n", "baton rm", trm);
    }
    if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "bench-store: could not remove %s\n", dir);
    free(ids);
    free(home);
    return 0;
}
