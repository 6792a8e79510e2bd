/* SPDX-License-Identifier: MIT */
/*
 * store-int: what the store-*.c files share inside the store module. Not a
 * public header: only store*.c include it, and no SQLite type leaves them.
 *
 * Statement rules. Every statement is a static SQL string of the file that
 * uses it (static const char SQL_X[]), prepared once per handle on first
 * use by bt_st_sql, which keys its cache by the string's address. A loop
 * that calls back while it steps (bt_store_event_each) takes its statement
 * out of the cache instead (bt_st_take, bt_st_give), so that its callback
 * may read through the same handle, even with the same SQL. A statement is
 * reset and its bindings cleared before each use and after it, so text can
 * be bound SQLITE_STATIC and no read transaction outlives a call.
 *
 * Transactions. Writes of more than one row go through bt_st_tx_begin /
 * bt_st_tx_end (BEGIN IMMEDIATE, so a waiting writer is handled by the
 * busy timeout rather than failing on a lock upgrade). Event appends keep
 * one transaction open (s->batch) until bt_store_flush; every other write
 * commits that batch first (bt_st_tx_begin, bt_st_write_sql), so nothing is
 * committed out of order.
 */
#ifndef BT_STORE_INT_H
#define BT_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "id.h"
#include "store.h"
#include "util.h"

#define BT_ST_CACHE_SIZE 128 /* statements of all store*.c files; a power of 2 */

struct bt_store {
    sqlite3 *db;           /* the connection */
    char *home;            /* $BATON_HOME as given */
    char *db_path;         /* home/baton.db, home resolved (SQLite's
                              NOFOLLOW refuses a link anywhere) */
    int created_db;        /* bt_st_prepare_home made the db file */
    struct bt_buf err;     /* last error message */
    int batch;             /* 1 while an event batch transaction is open */
    int64_t appended;      /* rowid of the last event appended, 0 if none */
    int wal_pages;         /* pages in the WAL after this handle's last commit */
    int64_t busy_since_ms; /* when the present wait for a lock began (on_busy) */
    struct bt_st_slot {
        const char *sql;       /* a static SQL string: the key is its address */
        sqlite3_stmt *q;       /* prepared on first use; NULL while lent */
    } cache[BT_ST_CACHE_SIZE]; /* bt_st_sql's statements, finalized on close */
};

/* The stored names of store.h's enums, indexed by value; [0] is "none". */
/* one term of the count of an X list; NOLINTNEXTLINE(bugprone-macro-parentheses) */
#define BT_ST_ONE(name, text) +1
#define BT_ST_N_CONV_STATUSES (1 BT_STORE_CONV_STATUSES(BT_ST_ONE))
#define BT_ST_N_ROLES (1 BT_STORE_ROLES(BT_ST_ONE))
#define BT_ST_N_MSG_STATES (1 BT_STORE_MSG_STATES(BT_ST_ONE))
#define BT_ST_N_RUN_STATES (1 BT_STORE_RUN_STATES(BT_ST_ONE))
extern const char *const bt_st_conv_status_names[BT_ST_N_CONV_STATUSES];
extern const char *const bt_st_role_names[BT_ST_N_ROLES];
extern const char *const bt_st_msg_state_names[BT_ST_N_MSG_STATES];
extern const char *const bt_st_run_state_names[BT_ST_N_RUN_STATES];

/* The enum value of a stored name in names[0..n); 0 if unknown or NULL. */
int bt_st_value_of(const char *const *names, size_t n, const unsigned char *text);
/* Column i of q read as the enum whose names are names. */
#define BT_ST_COL_ENUM(q, i, names)                                                                \
    bt_st_value_of(names, BT_ARRAY_SIZE(names), sqlite3_column_text(q, i))
/* 1 if v is a valid (non-zero, in range) value of the enum of names. */
#define BT_ST_VALID(names, v) ((int)(v) > 0 && (size_t)(v) < BT_ARRAY_SIZE(names))

/* Set the error message; returns code. */
int bt_st_fail(struct bt_store *s, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Record SQLite's message for the failed step `what`; returns BT_ESTORE. */
int bt_st_db_fail(struct bt_store *s, const char *what);

/* The prepared statement for a static SQL string, reset and with no
 * bindings; NULL with the error set. */
sqlite3_stmt *bt_st_sql(struct bt_store *s, const char *sql);
/* The cached statement for sql lent out, reset and with no bindings: until
 * bt_st_give returns it, a nested use of sql prepares another. NULL with
 * the error set. Prepared once per handle, not once per loop: a loop's
 * prepare was a third of baton serve's CPU at every commit. */
sqlite3_stmt *bt_st_take(struct bt_store *s, const char *sql);
/* Reset q (ending its read) and put it back in sql's slot, or finalize it
 * when the slot was filled meanwhile. q NULL does nothing. */
void bt_st_give(struct bt_store *s, const char *sql, sqlite3_stmt *q);
/* The same for a single-statement write: pending events are committed
 * first, so writes reach the database in call order. */
sqlite3_stmt *bt_st_write_sql(struct bt_store *s, const char *sql);
/* Run one or more statements without results (opening, migrations). */
int bt_st_exec(struct bt_store *s, const char *sql, const char *what);
/* Reset q after use (ends its read) and return rc. */
int bt_st_done(sqlite3_stmt *q, int rc);
/* Step a statement that returns no rows; returns 0 or BT_ESTORE. */
int bt_st_run(struct bt_store *s, sqlite3_stmt *q, const char *what);
/* Run sql with ?1 = key: conv, or message id msg when conv is NULL. */
int bt_st_run_keyed(struct bt_store *s, const char *sql, const char *conv, int64_t msg,
                    const char *what);
/* Step once: 1 for a row (q stays positioned), 0 for none, BT_ESTORE. */
int bt_st_step(struct bt_store *s, sqlite3_stmt *q, const char *what);

void bt_st_bind_text(sqlite3_stmt *q, int i, const char *text);  /* NULL binds NULL */
char *bt_st_col_str(sqlite3_stmt *q, int i);                     /* NULL for NULL */
char *bt_st_col_str0(sqlite3_stmt *q, int i);                    /* "" for NULL */
void bt_st_col_id(sqlite3_stmt *q, int i, char out[BT_ID_SIZE]); /* "" if not an id */
int64_t bt_st_col_i64(sqlite3_stmt *q, int i, int64_t dflt);     /* dflt for NULL */

/* 0 if the last statement changed a row, else BT_ENOTFOUND: "no what 'id'". */
int bt_st_changed_one(struct bt_store *s, const char *what, const char *id);

/* Step q, a query of one integer column, into *v (BT_ESTORE if no row). */
int bt_st_query_int(struct bt_store *s, sqlite3_stmt *q, const char *what, int64_t *v);
/* BT_EBUSY (naming the run) if the conversation has a running run. */
int bt_st_check_not_running(struct bt_store *s, const char *conv);

/* Inside a write transaction: -EPERM if the conversation was handed off
 * (transferred) unless force, which makes it active again; BT_ENOTFOUND if
 * there is no such conversation. */
int bt_st_check_owner(struct bt_store *s, const char *conv, int force);

/* A conversation c's columns after its last run's, as CONV_SELECT reads
 * them: its worktree and its group. */
#define BT_ST_WORKTREE_COLUMNS                                                                     \
    "c.wt_path, c.wt_branch, c.wt_base, c.wt_start, c.wt_repo, c.group_id"

/* Lower-case text into buf if it can be a prefix of an id (1), else 0. */
int bt_st_id_prefix(const char *text, char buf[BT_ID_SIZE]);

/* A conversation with its last run (bt_st_read_conversation reads it). */
#define BT_ST_CONV_SELECT                                                                          \
    "SELECT c.id, c.title, c.coder, c.model, c.cwd, c.native_session_id,"                          \
    " c.native_session_path, c.status, c.created_ms, c.updated_ms, r.id,"                          \
    " r.state, " BT_ST_WORKTREE_COLUMNS " FROM conversations c LEFT JOIN runs r ON r.rowid ="      \
    " (SELECT r2.rowid FROM runs r2 WHERE r2.conversation = c.id"                                  \
    " ORDER BY r2.started_ms DESC, r2.rowid DESC LIMIT 1)"

/* Fill c (owned strings) from the first 18 columns of a row shaped like
 * BT_ST_CONV_SELECT: id, title, coder, model, cwd, native session id and
 * path, status, created, updated, last run id and state, then
 * BT_ST_WORKTREE_COLUMNS. */
/* Fill c from a row; s: to know whether its last run waits for a turn
 * slot (slot.h). */
void bt_st_read_conversation(struct bt_store *s, sqlite3_stmt *q, struct bt_store_conversation *c);

/* store-open.c. Before SQLite opens the db: make the home and runs/
 * (0700), create a missing db file 0600, and refuse a db, -wal or -shm that
 * is not a regular file (a link, a directory). Changes no existing mode. */
int bt_st_prepare_home(struct bt_store *s);
/* After a failed open: remove db_path, the db file bt_st_prepare_home made
 * (NULL: none), if it is still empty, so a failure leaves nothing behind. */
void bt_st_unprepare(const char *db_path);
/* After a successful open: chmod 0600 the db, -wal and -shm that are
 * regular files of this user with group or other bits, never through a
 * link. */
int bt_st_fix_modes(struct bt_store *s);
/* After a failed open: replace the message with why, when permissions or
 * a read-only file system are the reason (the path and mode named). */
void bt_st_open_explain(struct bt_store *s);

/* store-schema.c: migrate the opened database to BT_STORE_SCHEMA_VERSION
 * (BT_ESCHEMA if it is newer). */
int bt_st_migrate(struct bt_store *s);

/* store-conv.c, inside a write transaction: set the conversation's
 * updated_ms (BT_ENOTFOUND if there is none); insert a message at the end
 * of its conversation, *id its id (may be NULL), and a queued one gets its
 * queue number (*queue_no, may be NULL). */
int bt_st_touch_conversation(struct bt_store *s, const char *conv, int64_t now);
int bt_st_insert_message(struct bt_store *s, const struct bt_store_message_new *o, int64_t now,
                         int64_t *id, int64_t *queue_no);

/* Insert one event row, in whatever transaction is open. */
int bt_st_insert_event(struct bt_store *s, const struct bt_store_event *ev);
/* Inside a write transaction: what bt_store_run_finish changes. */
int bt_st_finish_run(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                     int64_t now);

/* Inside a write transaction: give message msg, just queued in conv, the
 * conversation's next queue number, written to *queue_no (may be NULL). */
int bt_st_queue_number(struct bt_store *s, const char *conv, int64_t msg, int64_t *queue_no);

/* BEGIN IMMEDIATE, without committing pending events (the batch's own). */
int bt_st_begin(struct bt_store *s, const char *what);
/* Commit pending events, then BEGIN IMMEDIATE. */
int bt_st_tx_begin(struct bt_store *s);
/* Commit if rc is 0, else roll back keeping the error; returns the result. */
int bt_st_tx_end(struct bt_store *s, int rc);

#endif
