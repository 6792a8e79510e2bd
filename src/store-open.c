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
 *
 * Then opening itself (WAL, pragmas, the schema's migrations in
 * store-schema.c), and closing, which checkpoints a WAL grown large.
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
#include <time.h>
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

/* --- opening ------------------------------------------------------------ */

char *bt_store_default_home(void)
{
    const char *v = getenv("BATON_HOME");
    if (v && *v) /* relative: a worker or a later cwd would find another */
        return v[0] == '/' ? bt_xstrdup(v) : NULL;
    v = getenv("XDG_STATE_HOME");
    if (v && v[0] == '/')
        return bt_xasprintf("%s/baton", v);
    v = getenv("HOME");
    if (v && *v)
        return bt_xasprintf("%s/.local/state/baton", v);
    return NULL;
}

#define WAL_CHECKPOINT_PAGES 128 /* 512 KiB: about three text turns */

#define WAL_MAX_PAGES 4096 /* 16 MiB: checkpoint even mid-turn */

/* After each commit (SQLite's WAL hook, which replaces its own
 * autocheckpoint): note the WAL's size for bt_store_close, and checkpoint
 * at once only when a very long turn has made it large. */
static int on_wal_commit(void *data, sqlite3 *db, const char *name, int pages)
{
    struct bt_store *s = data;
    s->wal_pages = pages;
    if (pages >= WAL_MAX_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

/* Another connection holds the lock this one needs: wait a little and try
 * again, for at most BT_STORE_BUSY_TIMEOUT_MS in all. SQLite's own handler
 * (sqlite3_busy_timeout) sleeps 1, 2, 5, 10 ms... between tries, while
 * the writers here (runs streaming into one store) hold the lock for a
 * commit of tens of microseconds: one event in six of two runs at once
 * waited a whole millisecond or more (serve-bench, docs/performance.md).
 * These sleeps start at 20 us and double up to 2 ms. */
static int on_busy(void *data, int count)
{
    struct bt_store *s = data;
    int64_t now = bt_mono_ms();
    if (count == 0)
        s->busy_since_ms = now;
    if (now - s->busy_since_ms >= BT_STORE_BUSY_TIMEOUT_MS)
        return 0;
    long us = count < 7 ? 20L << count : 2000L;
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
    return 1;
}

/* PRAGMA journal_mode=WAL, waiting for other openers: on a new db, the
 * switch to WAL needs a lock that SQLite's busy handler does not wait for
 * (three batons opening a new store at once failed "database is locked"
 * one time in five). */
static int step_journal_mode(struct bt_store *s, sqlite3_stmt **q)
{
    int waited = 0;
    for (;;) {
        int rc = *q ? SQLITE_OK : sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, q, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(*q);
        if (rc == SQLITE_ROW)
            return 0;
        if ((rc & 0xff) != SQLITE_BUSY || waited >= BT_STORE_BUSY_TIMEOUT_MS)
            return bt_st_db_fail(s, "journal_mode");
        if (*q)
            sqlite3_reset(*q);
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
        waited += 5;
    }
}

static int set_wal(struct bt_store *s)
{
    sqlite3_stmt *q = NULL;
    int rc = step_journal_mode(s, &q);
    const char *mode = rc == 0 ? (const char *)sqlite3_column_text(q, 0) : NULL;
    if (rc == 0 && (!mode || strcmp(mode, "wal") != 0))
        rc = bt_st_fail(s, BT_ESTORE, "'%s' cannot use WAL mode (journal_mode is %s)", s->db_path,
                        mode ? mode : "unknown");
    sqlite3_finalize(q);
    return rc;
}

static int open_db(struct bt_store *s)
{
    /* NOFOLLOW: a link put at baton.db after bt_st_prepare_home looked */
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
    int rc = sqlite3_open_v2(s->db_path, &s->db, flags, NULL);
    if (rc != SQLITE_OK)
        return s->db ? bt_st_db_fail(s, s->db_path)
                     : bt_st_fail(s, BT_ESTORE, "%s: %s", s->db_path, sqlite3_errstr(rc));
    /* SQLite opens a file it may not write read-only, without a word */
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return bt_st_fail(s, BT_ESTORE, "'%s' can only be read", s->db_path);
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_handler(s->db, on_busy, s);
    sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    rc = set_wal(s);
    if (rc == 0)
        rc = bt_st_exec(s,
                        "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                        " PRAGMA journal_size_limit=4194304",
                        "pragma");
    /* Every baton command is a short process, and the last connection to
     * close would checkpoint the WAL into the db, fsync both and delete it:
     * about 3 ms of each turn. The WAL is durable as it is (kill -9 loses
     * nothing; synchronous=NORMAL never promised more against power loss),
     * so closing leaves it. Nor does a commit checkpoint (SQLite's default
     * past 1000 pages): two fsyncs on the event loop stall a streaming
     * turn, by 200 ms on a busy disk. bt_store_close checkpoints instead,
     * after the turn, once the WAL holds WAL_CHECKPOINT_PAGES pages; that
     * also bounds what the next opener reads to rebuild the WAL index (0.6
     * ms per MB here). */
    if (rc == 0) {
        sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
        sqlite3_wal_hook(s->db, on_wal_commit, s);
    }
    return rc;
}

int bt_store_open(const char *home, struct bt_store **out, char **errmsg)
{
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    struct bt_store *s = bt_xcalloc(1, sizeof *s);
    bt_buf_init(&s->err);
    int rc = -EINVAL;
    if (!home || !*home)
        bt_st_fail(s, rc, "no store directory given");
    else {
        s->home = bt_xstrdup(home);
        s->db_path = bt_xasprintf("%s/baton.db", home);
        rc = bt_st_prepare_home(s);
    }
    if (rc == 0 && (rc = open_db(s)) != 0)
        bt_st_open_explain(s);
    if (rc == 0)
        rc = bt_st_migrate(s);
    /* only a store that opened gets its modes fixed: SQLite made its -wal
     * and -shm with the db's mode, so they are fixed together */
    if (rc == 0)
        rc = bt_st_fix_modes(s);
    if (rc == 0) {
        *out = s;
        return 0;
    }
    if (errmsg)
        *errmsg = bt_xstrdup(s->err.data);
    char *made = s->created_db ? bt_xstrdup(s->db_path) : NULL;
    bt_store_close(s);
    bt_st_unprepare(made); /* once SQLite let go of it */
    free(made);
    return rc;
}

/* Copy the WAL into the db and empty it, unless another connection is in
 * the way (then it waits for a later close: never for the busy timeout).
 * Emptied, not only copied: the next process to open the store finds no
 * other connection and rebuilds the WAL index, which forgets what was
 * copied, so a WAL only ever copied would grow without end. */
static void checkpoint_on_close(struct bt_store *s)
{
    sqlite3_busy_timeout(s->db, 0);
    if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

void bt_store_close(struct bt_store *s)
{
    if (!s)
        return;
    if (s->db)
        bt_store_flush(s);
    if (s->db && s->wal_pages >= WAL_CHECKPOINT_PAGES)
        checkpoint_on_close(s);
    for (size_t i = 0; i < BT_ARRAY_SIZE(s->cache); i++)
        sqlite3_finalize(s->cache[i].q);
    sqlite3_close_v2(s->db);
    bt_buf_release(&s->err);
    free(s->db_path);
    free(s->home);
    free(s);
}

char *bt_store_run_file(const struct bt_store *s, const char *run, const char *suffix)
{
    if (!bt_id_valid(run) || !suffix || strchr(suffix, '/'))
        return NULL;
    return bt_xasprintf("%s/runs/%s%s", s->home, run, suffix);
}
