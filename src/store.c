/* SPDX-License-Identifier: MIT */
/*
 * store: what every store-*.c file shares (store-int.h): the stored names
 * of states, error messages, the statement cache, column and binding
 * helpers, and transactions. See store.h for the contract, docs/store.md
 * for the schema, and store-int.h for the statement rules.
 *
 * The files by subject: store-open.c (the home's files, opening, closing),
 * store-schema.c (migrations), store-conv.c (conversations, messages),
 * store-handoff.c, store-queue.c (submitting a turn, the queue), store-run.c
 * (a run's life), store-event.c, store-recover.c (runs whose baton died),
 * store-rebuild.c, store-browse.c (search, removal), store-coder.c.
 */
#include "store-int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

/* --- names -------------------------------------------------------------- */

#define NAME_TEXT(name, text) text,

const char *const bt_st_conv_status_names[BT_ST_N_CONV_STATUSES] = {
    "none", BT_STORE_CONV_STATUSES(NAME_TEXT)};
const char *const bt_st_role_names[BT_ST_N_ROLES] = {"none", BT_STORE_ROLES(NAME_TEXT)};
const char *const bt_st_msg_state_names[BT_ST_N_MSG_STATES] = {"none",
                                                               BT_STORE_MSG_STATES(NAME_TEXT)};
const char *const bt_st_run_state_names[BT_ST_N_RUN_STATES] = {"none",
                                                               BT_STORE_RUN_STATES(NAME_TEXT)};
#undef NAME_TEXT

static const char *name_of(const char *const *names, size_t n, int v)
{
    return v > 0 && (size_t)v < n ? names[v] : names[0];
}

int bt_st_value_of(const char *const *names, size_t n, const unsigned char *text)
{
    for (size_t i = 1; text && i < n; i++)
        if (strcmp(names[i], (const char *)text) == 0)
            return (int)i;
    return 0;
}

const char *bt_store_conv_status_name(enum bt_store_conv_status v)
{
    return name_of(bt_st_conv_status_names, BT_ARRAY_SIZE(bt_st_conv_status_names), (int)v);
}

const char *bt_store_role_name(enum bt_store_role v)
{
    return name_of(bt_st_role_names, BT_ARRAY_SIZE(bt_st_role_names), (int)v);
}

const char *bt_store_msg_state_name(enum bt_store_msg_state v)
{
    return name_of(bt_st_msg_state_names, BT_ARRAY_SIZE(bt_st_msg_state_names), (int)v);
}

const char *bt_store_run_state_name(enum bt_store_run_state v)
{
    return name_of(bt_st_run_state_names, BT_ARRAY_SIZE(bt_st_run_state_names), (int)v);
}

/* --- errors ------------------------------------------------------------- */

/* Set the message and return code. */
BT_PRINTF(3, 4)
int bt_st_fail(struct bt_store *s, int code, const char *fmt, ...)
{
    va_list ap;
    bt_buf_reset(&s->err);
    va_start(ap, fmt);
    bt_buf_vaddf(&s->err, fmt, ap);
    va_end(ap);
    return code;
}

/* Record SQLite's message for the failed step `what`; returns BT_ESTORE. */
int bt_st_db_fail(struct bt_store *s, const char *what)
{
    return bt_st_fail(s, BT_ESTORE, "%s: %s", what, sqlite3_errmsg(s->db));
}

const char *bt_store_errmsg(const struct bt_store *s)
{
    return s ? s->err.data : "";
}

const char *bt_store_home(const struct bt_store *s)
{
    return s->home;
}

int bt_st_changed_one(struct bt_store *s, const char *what, const char *id)
{
    return sqlite3_changes(s->db) > 0 ? 0 : bt_st_fail(s, BT_ENOTFOUND, "no %s '%s'", what, id);
}

/* --- statements --------------------------------------------------------- */

static const char SQL_BEGIN[] = "BEGIN IMMEDIATE";
static const char SQL_COMMIT[] = "COMMIT";

/* Open addressing on the SQL text's address (a static string never moves):
 * each use costs a hash and a compare or two, however many statements the
 * files have. A failed prepare leaves its slot free. NULL when every slot
 * holds another statement. */
static struct bt_st_slot *slot_of(struct bt_store *s, const char *sql)
{
    const size_t n = BT_ARRAY_SIZE(s->cache);
    size_t i = (size_t)(((uint64_t)(uintptr_t)sql >> 3) * 0x9E3779B97F4A7C15ULL >> 40) & (n - 1);
    for (size_t probes = 0; s->cache[i].sql && s->cache[i].sql != sql; i = (i + 1) & (n - 1))
        if (++probes == n) {
            bt_st_fail(s, BT_ESTORE, "prepare: too many statements");
            return NULL;
        }
    return &s->cache[i];
}

static sqlite3_stmt *prepare(struct bt_store *s, const char *sql)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q, NULL) != SQLITE_OK) {
        bt_st_db_fail(s, "prepare");
        return NULL;
    }
    return q;
}

sqlite3_stmt *bt_st_sql(struct bt_store *s, const char *sql)
{
    struct bt_st_slot *slot = slot_of(s, sql);
    if (!slot)
        return NULL;
    if (!slot->q) {
        if (!(slot->q = prepare(s, sql)))
            return NULL;
        slot->sql = sql;
    }
    sqlite3_reset(slot->q);
    sqlite3_clear_bindings(slot->q);
    return slot->q;
}

sqlite3_stmt *bt_st_take(struct bt_store *s, const char *sql)
{
    struct bt_st_slot *slot = slot_of(s, sql);
    if (!slot)
        return NULL;
    sqlite3_stmt *q = slot->q;
    if (q) {
        slot->q = NULL; /* a nested take or bt_st_sql of sql prepares another */
        return q;
    }
    if ((q = prepare(s, sql)) != NULL)
        slot->sql = sql;
    return q;
}

void bt_st_give(struct bt_store *s, const char *sql, sqlite3_stmt *q)
{
    if (!q)
        return;
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    struct bt_st_slot *slot = slot_of(s, sql);
    if (slot && !slot->q) {
        slot->q = q;
        slot->sql = sql;
    } else {
        sqlite3_finalize(q); /* another took its place meanwhile */
    }
}

/* Reset q after use (ends its read) and return rc. */
int bt_st_done(sqlite3_stmt *q, int rc)
{
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc;
}

/* Step a statement that returns no rows; returns 0 or BT_ESTORE. */
int bt_st_run(struct bt_store *s, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q) == SQLITE_DONE ? 0 : bt_st_db_fail(s, what);
    return bt_st_done(q, rc);
}

/* Step once: 1 for a row (q stays positioned), 0 for none, BT_ESTORE. */
int bt_st_step(struct bt_store *s, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        return 1;
    return bt_st_done(q, rc == SQLITE_DONE ? 0 : bt_st_db_fail(s, what));
}

int bt_st_query_int(struct bt_store *s, sqlite3_stmt *q, const char *what, int64_t *v)
{
    int rc = bt_st_step(s, q, what);
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ESTORE, "%s: no result", what);
    *v = sqlite3_column_int64(q, 0);
    return bt_st_done(q, 0);
}

void bt_st_bind_text(sqlite3_stmt *q, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(q, i, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(q, i);
}

char *bt_st_col_str(sqlite3_stmt *q, int i)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    return t ? bt_xstrdup((const char *)t) : NULL;
}

char *bt_st_col_str0(sqlite3_stmt *q, int i)
{
    char *t = bt_st_col_str(q, i);
    return t ? t : bt_xstrdup("");
}

/* Copy an id column into out; "" if NULL or not an id. */
void bt_st_col_id(sqlite3_stmt *q, int i, char out[BT_ID_SIZE])
{
    const char *t = (const char *)sqlite3_column_text(q, i);
    if (t && strlen(t) < BT_ID_SIZE)
        memcpy(out, t, strlen(t) + 1);
    else
        out[0] = '\0';
}

/* The column as int64, or dflt when NULL. */
int64_t bt_st_col_i64(sqlite3_stmt *q, int i, int64_t dflt)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(q, i);
}

/* --- transactions ------------------------------------------------------- */

int bt_store_flush(struct bt_store *s)
{
    if (!s->batch)
        return 0;
    s->batch = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_COMMIT);
    int rc = q ? bt_st_run(s, q, "commit events") : BT_ESTORE;
    if (rc == 0)
        return 0;
    char *why = bt_xstrdup(s->err.data);
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    bt_st_fail(s, rc, "%s (the batch of events was lost)", why);
    free(why);
    return rc;
}

int bt_st_begin(struct bt_store *s, const char *what)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_BEGIN);
    return q ? bt_st_run(s, q, what) : BT_ESTORE;
}

/* Commit pending events, then BEGIN IMMEDIATE. */
int bt_st_tx_begin(struct bt_store *s)
{
    int rc = bt_store_flush(s);
    return rc ? rc : bt_st_begin(s, "begin");
}

/* Commit if rc is 0, else roll back keeping the error; returns the result. */
int bt_st_tx_end(struct bt_store *s, int rc)
{
    if (rc == 0) {
        sqlite3_stmt *q = bt_st_sql(s, SQL_COMMIT);
        rc = q ? bt_st_run(s, q, "commit") : BT_ESTORE;
        if (rc == 0)
            return 0;
    }
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

sqlite3_stmt *bt_st_write_sql(struct bt_store *s, const char *sql)
{
    return bt_store_flush(s) == 0 ? bt_st_sql(s, sql) : NULL;
}

int bt_st_run_keyed(struct bt_store *s, const char *sql, const char *conv, int64_t msg,
                    const char *what)
{
    sqlite3_stmt *q = bt_st_sql(s, sql);
    if (!q)
        return BT_ESTORE;
    if (conv)
        bt_st_bind_text(q, 1, conv);
    else
        sqlite3_bind_int64(q, 1, msg);
    return bt_st_run(s, q, what);
}

int bt_st_exec(struct bt_store *s, const char *sql, const char *what)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : bt_st_db_fail(s, what);
}
