/* SPDX-License-Identifier: MIT */
/*
 * store-coder: the versions of coders' executables (store.h, "coder
 * versions"; docs/store.md, "coder_versions"). A turn needs its coder's
 * version for turn.started; asking `<coder> --version` costs a whole
 * process start (0.8 s for pi, a Node program), so the answer is kept by the
 * executable's identity and asked again only when the file changes.
 */
#include "store.h"
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "error.h"

static const char SQL_GET[] = "SELECT version FROM coder_versions WHERE path = ?1 AND dev = ?2"
                              " AND ino = ?3 AND size = ?4 AND mtime_ns = ?5 AND ctime_ns = ?6"
                              " AND coder = ?9";

static const char SQL_PUT[] =
    "INSERT INTO coder_versions (coder, path, dev, ino, size, mtime_ns, ctime_ns, version,"
    " seen_ms) VALUES (?9, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (coder, path) DO UPDATE"
    " SET dev = ?2, ino = ?3, size = ?4, mtime_ns = ?5, ctime_ns = ?6, version = ?7,"
    " seen_ms = ?8";

static const char SQL_RUN_VERSION[] = "UPDATE runs SET coder_version = ?2 WHERE id = ?1";

static int64_t ns(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int bt_store_exe_stat(const char *coder, const char *path, struct bt_store_exe *exe)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    *exe = (struct bt_store_exe){.coder = coder,
                                 .path = path,
                                 .dev = (int64_t)st.st_dev,
                                 .ino = (int64_t)st.st_ino,
                                 .size = (int64_t)st.st_size,
                                 .mtime_ns = ns(st.st_mtim),
                                 .ctime_ns = ns(st.st_ctim)};
    return 0;
}

static void bind_exe(sqlite3_stmt *q, const struct bt_store_exe *exe)
{
    bt_st_bind_text(q, 1, exe->path);
    sqlite3_bind_int64(q, 2, exe->dev);
    sqlite3_bind_int64(q, 3, exe->ino);
    sqlite3_bind_int64(q, 4, exe->size);
    sqlite3_bind_int64(q, 5, exe->mtime_ns);
    sqlite3_bind_int64(q, 6, exe->ctime_ns);
    bt_st_bind_text(q, 9, exe->coder);
}

int bt_store_coder_version_get(struct bt_store *s, const struct bt_store_exe *exe, char **version)
{
    *version = NULL;
    if (!exe || !exe->path || !exe->coder)
        return bt_st_fail(s, -EINVAL, "no executable given");
    sqlite3_stmt *q = bt_st_sql(s, SQL_GET);
    if (!q)
        return BT_ESTORE;
    bind_exe(q, exe);
    int rc = bt_st_step(s, q, "read a coder version");
    int found = rc == 1;
    if (found)
        *version = bt_st_col_str(q, 0);
    rc = bt_st_done(q, rc < 0 ? rc : 0);
    if (rc == 0 && !found)
        return bt_st_fail(s, BT_ENOTFOUND, "no version stored for '%s'", exe->path);
    return rc;
}

int bt_store_coder_version_put(struct bt_store *s, const struct bt_store_exe *exe,
                               const char *version)
{
    if (!exe || !exe->path || !exe->coder || (version && !*version))
        return bt_st_fail(s, -EINVAL, "no executable given, or an empty version");
    sqlite3_stmt *q = bt_st_sql(s, SQL_PUT);
    if (!q)
        return BT_ESTORE;
    bind_exe(q, exe);
    bt_st_bind_text(q, 7, version);
    sqlite3_bind_int64(q, 8, bt_now_ms());
    return bt_st_run(s, q, "store a coder version");
}

int bt_store_run_set_version(struct bt_store *s, const char *run, const char *version)
{
    if (!run || !version)
        return bt_st_fail(s, -EINVAL, "no run or version given");
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_VERSION);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    bt_st_bind_text(q, 2, version);
    int rc = bt_st_run(s, q, "store a run's coder version");
    if (rc == 0 && sqlite3_changes(sqlite3_db_handle(q)) == 0)
        return bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", run);
    return rc;
}
