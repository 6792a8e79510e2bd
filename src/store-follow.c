/* SPDX-License-Identifier: MIT */
/*
 * store-follow: what a process that follows many runs at once (baton serve)
 * reads (store.h, "following"). Events are found in the order they were
 * committed by their rowid: SQLite gives a new row the largest rowid plus
 * one while its writer holds the write lock, so rowids grow in commit
 * order. Deleting the newest rows (baton rm) lets SQLite give their rowids
 * again; followers therefore also read by (run, seq), and a rowid cursor
 * past the largest rowid is pulled back (bt_store_event_last).
 */
#include "store-follow.h"
#include "store-int.h"

#include <errno.h>
#include <string.h>

#include "error.h"

static const char SQL_FOLLOW[] =
    "SELECT e.run, e.seq, e.type, e.ts_ms, e.data, r.conversation, e.rowid"
    " FROM events e JOIN runs r ON r.id = e.run WHERE e.rowid > ?1 ORDER BY e.rowid LIMIT ?2";

static const char SQL_CHANGED[] = "SELECT r.conversation, e.run, r.state, max(e.rowid) AS last"
                                  " FROM events e JOIN runs r ON r.id = e.run WHERE e.rowid > ?1"
                                  " GROUP BY e.run ORDER BY last";
static const char SQL_ROWID[] = "SELECT rowid FROM events WHERE run = ?1 AND seq = ?2";
static const char SQL_MAX_SEQ[] = "SELECT coalesce(max(seq), 0) FROM events WHERE run = ?1";
static const char SQL_LAST[] = "SELECT coalesce(max(rowid), 0) FROM events";
/* Runs in the order they started (as bt_store_run_last reads them): a
 * retry is another run of the same turn, so the turn number cannot say
 * which comes next. */
static const char SQL_NEXT_RUN[] =
    "SELECT r.id FROM runs AS c JOIN runs AS r ON r.conversation = c.conversation"
    " WHERE c.id = ?2 AND c.conversation = ?1 AND (r.started_ms > c.started_ms"
    "  OR (r.started_ms = c.started_ms AND r.rowid > c.rowid))"
    " ORDER BY r.started_ms, r.rowid LIMIT 1";

int bt_store_data_version(struct bt_store *s, int64_t *version)
{
    sqlite3_stmt *q = bt_st_sql(s, "PRAGMA data_version");
    return q ? bt_st_query_int(s, q, "read the data version", version) : BT_ESTORE;
}

int bt_store_event_last(struct bt_store *s, int64_t *rowid)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_LAST);
    return q ? bt_st_query_int(s, q, "read the newest event", rowid) : BT_ESTORE;
}

int bt_store_event_rowid(struct bt_store *s, const char *run, int64_t seq, int64_t *rowid)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_ROWID);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    sqlite3_bind_int64(q, 2, seq);
    int rc = bt_st_step(s, q, "find an event");
    if (rc != 1)
        return rc ? rc : BT_ENOTFOUND;
    *rowid = sqlite3_column_int64(q, 0);
    return bt_st_done(q, 0);
}

/* Its statement taken from the cache, as bt_store_event_each's: the
 * callback may read. */
int bt_store_event_after(struct bt_store *s, int64_t after, size_t limit, bt_store_follow_fn fn,
                         void *data)
{
    if (!fn)
        return bt_st_fail(s, -EINVAL, "no callback");
    sqlite3_stmt *q = bt_st_take(s, SQL_FOLLOW);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, after);
    sqlite3_bind_int64(q, 2, limit > INT32_MAX ? INT32_MAX : (int64_t)limit);
    int rc, stop = 0;
    while (stop == 0 && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct bt_store_event ev = {
            .run = (const char *)sqlite3_column_text(q, 0),
            .seq = sqlite3_column_int64(q, 1),
            .type = (const char *)sqlite3_column_text(q, 2),
            .ts_ms = sqlite3_column_int64(q, 3),
            .data = (const char *)sqlite3_column_text(q, 4),
            .len = (size_t)sqlite3_column_bytes(q, 4),
        };
        if (!ev.data)
            ev.data = "";
        const char *conv = (const char *)sqlite3_column_text(q, 5);
        stop = fn(data, &ev, conv ? conv : "", sqlite3_column_int64(q, 6));
    }
    if (stop == 0 && rc != SQLITE_DONE)
        stop = bt_st_db_fail(s, "read events");
    bt_st_give(s, SQL_FOLLOW, q);
    return stop;
}

int bt_store_event_changed(struct bt_store *s, int64_t after, bt_store_changed_fn fn, void *data)
{
    if (!fn)
        return bt_st_fail(s, -EINVAL, "no callback");
    sqlite3_stmt *q = bt_st_take(s, SQL_CHANGED);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, after);
    int rc, stop = 0;
    while (stop == 0 && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *conv = (const char *)sqlite3_column_text(q, 0);
        const char *run = (const char *)sqlite3_column_text(q, 1);
        int running = BT_ST_COL_ENUM(q, 2, bt_st_run_state_names) == BT_STORE_RUN_RUNNING;
        stop = fn(data, conv ? conv : "", run ? run : "", running, sqlite3_column_int64(q, 3));
    }
    if (stop == 0 && rc != SQLITE_DONE)
        stop = bt_st_db_fail(s, "read changed runs");
    bt_st_give(s, SQL_CHANGED, q);
    return stop;
}

int bt_store_run_next(struct bt_store *s, const char *conv, const char *run, char id[BT_ID_SIZE])
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_NEXT_RUN);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    bt_st_bind_text(q, 2, run);
    int rc = bt_st_step(s, q, "find the next run");
    if (rc != 1)
        return rc ? rc : BT_ENOTFOUND;
    bt_st_col_id(q, 0, id);
    return bt_st_done(q, 0);
}

int bt_store_event_max_seq(struct bt_store *s, const char *run, int64_t *seq)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_MAX_SEQ);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    return bt_st_query_int(s, q, "read a run's last event", seq);
}
