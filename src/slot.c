/* SPDX-License-Identifier: MIT */
/*
 * slot: turn slots across processes (slot.h). Everything is a lock file:
 * flock(2) locks belong to the open file and go when the process does, so
 * nothing needs cleaning after a crash but the names of stale wait
 * entries, which any waiter removes when it finds their lock free.
 *
 * A wait entry is made under a temporary name, locked, then renamed into
 * wait/, so no one ever sees an entry of a live waiter unlocked.
 */
#include "slot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define TICKET_DIGITS 20

int bt_slot_default(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    long long by_cpu = cores > 0 ? 2LL * cores : 2;
    long long by_mem = pages > 0 && page > 0 ? (long long)pages * page / (256LL << 20) : by_cpu;
    long long n = by_cpu < by_mem ? by_cpu : by_mem;
    if (n < 2)
        n = 2;
    return n > BT_SLOT_MAX ? BT_SLOT_MAX : (int)n;
}

int bt_slot_parse(const char *text, int *n)
{
    char *end;
    if (!text || *text < '0' || *text > '9')
        return -EINVAL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 1 || v > BT_SLOT_MAX)
        return -EINVAL;
    *n = (int)v;
    return 0;
}

int bt_slot_limit(const char **bad)
{
    const char *env = getenv("BATON_MAX_TURNS");
    int n;
    if (bad)
        *bad = NULL;
    if (env && *env && bt_slot_parse(env, &n) == 0)
        return n;
    if (env && *env && bad)
        *bad = env;
    return bt_slot_default();
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0700) == 0 || errno == EEXIST)
        return 0;
    return -errno;
}

/* A lock held by someone: open path and try a shared lock. 1 held, 0 free
 * (or gone), so a stale entry reads as free. */
static int held(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    int busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

/* Put our wait entry in wait/: made and locked under a temporary name,
 * then renamed, so it is never seen unlocked. */
static int enter(const char *wait, const char *run, struct bt_slot *slot)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char *tmp = bt_xasprintf("%s/.new-%ld-%s", wait, (long)getpid(), run);
    char *path =
        bt_xasprintf("%s/%0*lld-%ld-%s", wait, TICKET_DIGITS,
                     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, (long)getpid(), run);
    int rc = 0;
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0 || rename(tmp, path) != 0) {
        rc = -errno;
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        free(path);
    } else {
        slot->wait_fd = fd;
        slot->wait_path = path;
    }
    free(tmp);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* How many waiters are ahead of ours: 0 when none that lives is (we are
 * first). Liveness is checked from the oldest entry on, up to the first
 * live one, removing the stale ones met; those further back count as they
 * are (the number only spaces out the looks of the waiters far back). */
static int ahead_of(const char *wait, const char *mine)
{
    DIR *d = mine ? opendir(wait) : NULL;
    if (!d)
        return 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp(e->d_name, mine) >= 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            names = bt_xrealloc(names, cap * sizeof *names);
        }
        names[n++] = bt_xstrdup(e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, by_name);
    size_t stale = 0;
    int live = 0;
    for (size_t i = 0; i < n; i++) {
        if (!live) {
            char *path = bt_xasprintf("%s/%s", wait, names[i]);
            if (held(path))
                live = 1;
            else if (unlink(path) == 0 || errno == ENOENT) /* its waiter died */
                stale++;
            free(path);
        }
        free(names[i]);
    }
    free(names);
    return live ? (int)(n - stale) : 0;
}

/* Take a free slot.N of 0..limit-1: 0 held, 1 none free, or -errno. */
static int grab(const char *dir, int limit, struct bt_slot *slot)
{
    for (int i = 0; i < limit; i++) {
        char *path = bt_xasprintf("%s/slot.%d", dir, i);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        int err = errno;
        free(path);
        if (fd < 0)
            return -err;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            slot->fd = fd;
            return 0;
        }
        close(fd);
    }
    return 1;
}

static void nap(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void leave(struct bt_slot *slot)
{
    if (slot->wait_path)
        unlink(slot->wait_path);
    if (slot->wait_fd >= 0)
        close(slot->wait_fd);
    free(slot->wait_path);
    slot->wait_fd = -1;
    slot->wait_path = NULL;
}

int bt_slot_take(const char *home, const char *run, int limit, int (*stop)(void *data),
                 void (*on_wait)(void *data, int ahead), void *data, struct bt_slot *slot)
{
    char *dir = bt_xasprintf("%s/%s", home, BT_SLOT_DIR);
    char *wait = bt_xasprintf("%s/wait", dir);
    int rc = make_dir(dir);
    if (rc == 0)
        rc = make_dir(wait);
    if (rc == 0)
        rc = enter(wait, run, slot);
    const char *mine = slot->wait_path ? strrchr(slot->wait_path, '/') + 1 : NULL;
    for (int told = 0; rc == 0;) {
        if (stop && stop(data)) {
            rc = 1;
            break;
        }
        int ahead = ahead_of(wait, mine);
        if (ahead == 0 && (rc = grab(dir, limit, slot)) <= 0)
            break; /* held, or an error */
        rc = 0;
        if (!told && on_wait)
            on_wait(data, ahead);
        told = 1;
        int ms = BT_SLOT_POLL_MS + 20 * ahead;
        nap(ms > BT_SLOT_POLL_MAX ? BT_SLOT_POLL_MAX : ms);
    }
    leave(slot);
    free(wait);
    free(dir);
    return rc;
}

void bt_slot_release(struct bt_slot *slot)
{
    leave(slot);
    if (slot->fd >= 0)
        close(slot->fd);
    slot->fd = -1;
}

int bt_slot_waiting(const char *home, const char *run)
{
    char *wait = bt_xasprintf("%s/%s/wait", home, BT_SLOT_DIR);
    DIR *d = opendir(wait);
    int found = 0;
    size_t rl = strlen(run);
    struct dirent *e;
    while (d && !found && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || l <= rl + 1 ||
            e->d_name[l - rl - 1] != '-' || strcmp(e->d_name + l - rl, run) != 0)
            continue;
        char *path = bt_xasprintf("%s/%s", wait, e->d_name);
        found = held(path);
        free(path);
    }
    if (d)
        closedir(d);
    free(wait);
    return found;
}
