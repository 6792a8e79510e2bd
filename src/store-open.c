/* SPDX-License-Identifier: MIT */
/*
 * store-open: $BATON_HOME's files before and after SQLite opens them
 * (docs/store.md, "$BATON_HOME"). Before: directories are made, a new db
 * file is created 0600, and whatever sits at baton.db, baton.db-wal and
 * baton.db-shm must be a regular file (SQLite follows links, and would write
 * its index into whatever a -shm link points at). After a successful open
 * only: modes are tightened, on regular files this user owns, never through
 * a link. When the open fails, nothing has been changed, and
 * bt_st_open_explain says why in words: a directory, a link, no permission,
 * a read-only directory or file system.
 */
/* O_PATH (Linux): see tighten */
#define _GNU_SOURCE
#include "store-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "util.h"

static const char *const db_suffix[] = {"", "-wal", "-shm"};

/* mkdir one path component with 0700 unless it exists. */
static int mkdir_one(struct bt_store *s, const char *path)
{
    if (mkdir(path, 0700) == 0)
        return chmod(path, 0700) == 0
                   ? 0
                   : bt_st_fail(s, -errno, "chmod '%s': %s", path, strerror(errno));
    if (errno == EEXIST)
        return 0;
    return bt_st_fail(s, -errno, "cannot create directory '%s': %s", path, strerror(errno));
}

/* mkdir -p path; new directories get 0700, existing ones keep their mode
 * (a home or runs/ that is a link to a directory is the user's choice). */
static int mkdir_p(struct bt_store *s, const char *path)
{
    char *p = bt_xstrdup(path);
    int rc = 0;
    for (char *c = p + 1; rc == 0; c++) {
        char save = *c;
        if (save != '/' && save != '\0')
            continue;
        *c = '\0';
        rc = mkdir_one(s, p);
        *c = save;
        if (save == '\0')
            break;
    }
    free(p);
    struct stat st;
    if (rc == 0 && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = bt_st_fail(s, -ENOTDIR, "'%s' is not a directory", path);
    return rc;
}

/* What a file type is, for "'…' is %s". */
static const char *type_words(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory, not a file";
    if (S_ISLNK(m))
        return "a symbolic link: baton keeps its store in regular files only";
    if (S_ISFIFO(m))
        return "a FIFO, not a file";
    if (S_ISSOCK(m))
        return "a socket, not a file";
    return "not a regular file";
}

/* 0 if path is missing or a regular file (not a link), else why not. */
static int check_regular(struct bt_store *s, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT
                   ? 0
                   : bt_st_fail(s, -errno, "cannot look at '%s': %s", path, strerror(errno));
    if (S_ISREG(st.st_mode))
        return 0;
    return bt_st_fail(s, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL, "'%s' is %s (remove it)", path,
                      type_words(st.st_mode));
}

/* Check that the db and its -wal and -shm are regular files or missing (a
 * -shm link beside a new db would be followed too), then create the db
 * file 0600 if it is missing. An existing db is not opened here: closing
 * any fd of it would drop the POSIX locks SQLite holds on it in this
 * process. */
static int prepare_db_file(struct bt_store *s)
{
    for (size_t i = 0; i < BT_ARRAY_SIZE(db_suffix); i++) {
        char *path = bt_xasprintf("%s%s", s->db_path, db_suffix[i]);
        int rc = check_regular(s, path);
        free(path);
        if (rc)
            return rc;
    }
    int fd = open(s->db_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST) /* a link put there since is refused by the open */
        return 0;
    if (fd < 0) /* EACCES, EROFS: the message says which */
        return bt_st_fail(s, -errno, "cannot create '%s': %s", s->db_path, strerror(errno));
    s->created_db = 1;
    int rc = fchmod(fd, 0600) == 0 ? 0 : -errno;
    close(fd);
    return rc ? bt_st_fail(s, rc, "chmod '%s': %s", s->db_path, strerror(-rc)) : 0;
}

void bt_st_unprepare(const char *db_path)
{
    struct stat st;
    if (db_path && lstat(db_path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
        unlink(db_path);
}

/* db_path under the home resolved: the user's home may be reached through
 * a link (/home -> /data/home), which SQLITE_OPEN_NOFOLLOW would refuse;
 * only baton.db itself must not be one. */
static int resolve_db_path(struct bt_store *s)
{
    char *real = realpath(s->home, NULL);
    if (!real)
        return bt_st_fail(s, -errno, "cannot resolve '%s': %s", s->home, strerror(errno));
    free(s->db_path);
    s->db_path = bt_xasprintf("%s/baton.db", real);
    free(real);
    return 0;
}

int bt_st_prepare_home(struct bt_store *s)
{
    char *runs = bt_xasprintf("%s/runs", s->home);
    int rc = mkdir_p(s, s->home);
    if (rc == 0)
        rc = mkdir_p(s, runs);
    free(runs);
    if (rc == 0)
        rc = resolve_db_path(s);
    return rc ? rc : prepare_db_file(s);
}

/* chmod path to 0600 if it is a regular file of ours with group or other
 * bits. Through an O_PATH descriptor: it does not follow a link swapped in
 * meanwhile, and closing it drops no POSIX lock (Linux keeps the locks of
 * a process when an O_PATH fd of the file closes, unlike any other fd). */
static int tighten(struct bt_store *s, const char *path)
{
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : bt_st_fail(s, -errno, "'%s': %s", path, strerror(errno));
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : -errno;
    if (rc == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) && st.st_uid == geteuid()) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        rc = chmod(proc, 0600) == 0 ? 0 : -errno;
    }
    close(fd);
    return rc ? bt_st_fail(s, rc, "chmod '%s': %s", path, strerror(-rc)) : 0;
}

int bt_st_fix_modes(struct bt_store *s)
{
    for (size_t i = 0; i < BT_ARRAY_SIZE(db_suffix); i++) {
        char *path = bt_xasprintf("%s%s", s->db_path, db_suffix[i]);
        int rc = tighten(s, path);
        free(path);
        if (rc)
            return rc;
    }
    return 0;
}

/* Why path cannot be read and written by us, or NULL (caller frees). */
static char *no_access(const char *path, int is_dir)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    struct statvfs fs;
    if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_RDONLY))
        return bt_xasprintf("'%s' is on a read-only file system", path);
    if (access(path, is_dir ? W_OK | X_OK : R_OK | W_OK) == 0)
        return NULL;
    if (errno == EROFS)
        return bt_xasprintf("'%s' is on a read-only file system", path);
    if (is_dir)
        return bt_xasprintf("the directory '%s' is not writable (mode %04o): SQLite must create "
                            "baton.db-wal and baton.db-shm in it",
                            path, (unsigned)(st.st_mode & 07777));
    return bt_xasprintf("no permission to read and write '%s' (mode %04o, owner uid %u)", path,
                        (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
}

void bt_st_open_explain(struct bt_store *s)
{
    char *why = no_access(s->db_path, 0);
    for (size_t i = 1; !why && i < BT_ARRAY_SIZE(db_suffix); i++) {
        char *path = bt_xasprintf("%s%s", s->db_path, db_suffix[i]);
        struct stat st;
        if (lstat(path, &st) == 0)
            why = no_access(path, 0);
        else if (errno == ENOENT) /* SQLite must create it */
            why = no_access(s->home, 1);
        free(path);
    }
    char *was = bt_xstrdup(s->err.data ? s->err.data : "");
    if (why)
        bt_st_fail(s, BT_ESTORE, "%s (%s)", why, was);
    else if (!strstr(was, s->db_path)) /* SQLite's words alone name no file */
        bt_st_fail(s, BT_ESTORE, "'%s': %s", s->db_path, was);
    free(was);
    free(why);
}
