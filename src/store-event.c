/* SPDX-License-Identifier: MIT */
/*
 * store-event: a run's events (store.h, "events"). Appends keep one write
 * transaction open (s->batch) until bt_store_flush or the next other write,
 * so a streaming turn commits in batches and nothing lands out of order.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

static const char SQL_EVENT_INSERT[] = "INSERT INTO events (run, seq, type, ts_ms, data)"
                                       " VALUES (?1, ?2, ?3, ?4, ?5)";

static const char SQL_EVENT_SELECT[] = "SELECT run, seq, type, ts_ms, data FROM events"
                                       " WHERE run = ?1 AND seq >= ?2 ORDER BY seq";

int bt_st_insert_event(struct bt_store *s, const struct bt_store_event *ev)
{
    size_t len = ev->len;
    if (len > 0 && ev->data[len - 1] == '\n')
        len--;
    if (len > INT32_MAX)
        return bt_st_fail(s, BT_ETOOBIG, "event %lld of run '%s' is too large", (long long)ev->seq,
                          ev->run);
    sqlite3_stmt *q = bt_st_sql(s, SQL_EVENT_INSERT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, ev->run);
    sqlite3_bind_int64(q, 2, ev->seq);
    bt_st_bind_text(q, 3, ev->type);
    sqlite3_bind_int64(q, 4, ev->ts_ms);
    sqlite3_bind_text(q, 5, len ? ev->data : "", (int)len, SQLITE_STATIC);
    return bt_st_run(s, q, "append event");
}

int bt_store_event_append(struct bt_store *s, const struct bt_store_event *ev)
{
    if (!ev || !ev->run || !ev->type || (!ev->data && ev->len) || ev->seq < 1)
        return bt_st_fail(s, -EINVAL, "an event needs a run, a seq >= 1, a type and data");
    if (!s->batch) {
        int rc = bt_st_begin(s, "begin events");
        if (rc)
            return rc;
        s->batch = 1;
    }
    int rc = bt_st_insert_event(s, ev);
    s->appended = rc ? 0 : sqlite3_last_insert_rowid(s->db);
    if (rc && sqlite3_get_autocommit(s->db)) {
        s->batch = 0; /* SQLite rolled the whole batch back */
        bt_buf_adds(&s->err, " (the batch of events was lost)");
    }
    return rc;
}

static void read_event(sqlite3_stmt *q, struct bt_store_event *ev)
{
    ev->run = (const char *)sqlite3_column_text(q, 0);
    ev->seq = sqlite3_column_int64(q, 1);
    ev->type = (const char *)sqlite3_column_text(q, 2);
    ev->ts_ms = sqlite3_column_int64(q, 3);
    ev->data = (const char *)sqlite3_column_text(q, 4);
    ev->len = (size_t)sqlite3_column_bytes(q, 4);
    if (!ev->data)
        ev->data = "";
}

/* A statement taken from the cache: the callback may use the handle, and
 * a shared one it stepped would reset this loop's. */
int bt_store_event_each(struct bt_store *s, const char *run, int64_t from_seq, bt_store_event_fn fn,
                        void *data)
{
    if (!run || !fn)
        return bt_st_fail(s, -EINVAL, "no run or callback");
    sqlite3_stmt *q = bt_st_take(s, SQL_EVENT_SELECT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    sqlite3_bind_int64(q, 2, from_seq);
    int rc, stop = 0;
    while (stop == 0 && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct bt_store_event ev;
        read_event(q, &ev);
        stop = fn(data, &ev);
    }
    if (stop == 0 && rc != SQLITE_DONE)
        stop = bt_st_db_fail(s, "read events");
    bt_st_give(s, SQL_EVENT_SELECT, q);
    return stop;
}

int64_t bt_store_event_appended(const struct bt_store *s)
{
    return s->appended;
}
