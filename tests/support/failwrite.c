/* SPDX-License-Identifier: MIT */
/*
 * failwrite: an LD_PRELOAD shim that makes writes to one file fail with
 * ENOSPC, a real fault in the real baton binary (no test hook in baton):
 *
 *   FAILWRITE_SUFFIX=<text>   the file: a descriptor whose path (as
 *                             /proc/self/fd shows it) ends in this text
 *                             (default "baton.db-wal")
 *   FAILWRITE_TRIGGER=<file>  writes fail only while this file exists
 *                             (unset: always)
 *   FAILWRITE_TIMES=<n>       at most n writes fail in this process, then
 *                             they succeed again (unset: no limit)
 *   FAILWRITE_ALSO=<text>     a second file whose writes fail while the
 *                             trigger exists, not counted in the times
 *
 * write, pwrite and pwrite64 are covered: SQLite's unix VFS writes with
 * pwrite64 (or pwrite, or lseek + write, as it was built). Other calls
 * pass through untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long failed; /* writes failed so far */

static int ends_with(const char *path, size_t n, const char *suffix)
{
    size_t len = suffix ? strlen(suffix) : 0;
    return len && n >= len && strcmp(path + n - len, suffix) == 0;
}

/* 1 if this write to fd is to fail. */
static int should_fail(int fd)
{
    const char *trigger = getenv("FAILWRITE_TRIGGER");
    if (trigger && access(trigger, F_OK) != 0)
        return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    if (ends_with(path, (size_t)n, getenv("FAILWRITE_ALSO")))
        return 1;
    const char *times = getenv("FAILWRITE_TIMES");
    if (times && failed >= strtol(times, NULL, 10))
        return 0;
    const char *suffix = getenv("FAILWRITE_SUFFIX");
    if (!ends_with(path, (size_t)n, suffix && *suffix ? suffix : "baton.db-wal"))
        return 0;
    failed++;
    return 1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "write");
    if (should_fail(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pwrite");
    if (should_fail(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pwrite64");
    if (should_fail(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n, off);
}
