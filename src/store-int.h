/* SPDX-License-Identifier: MIT */
/*
 * store-int: what the store-*.c files share inside the store module. Not a
 * public header: only store*.c include it, and no SQLite type leaves them.
 *
 * Statement rules (see store.c): a statement is reset and its bindings
 * cleared before each use and after it, so text can be bound SQLITE_STATIC
 * and no read transaction outlives a call. Writes of several rows go
 * through bt_st_tx_begin / bt_st_tx_end.
 */
#ifndef BT_STORE_INT_H
#define BT_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "id.h"
#include "store.h"
#include "util.h"

#define BT_STORE_STMTS_MAX 64 /* room for store.c's statement table */

struct bt_store {
    sqlite3 *db;                             /* the connection */
    char *home;                              /* $BATON_HOME as given */
    char *db_path;                           /* home/baton.db, home resolved (SQLite's
                                                NOFOLLOW refuses a link anywhere) */
    int created_db;                          /* bt_st_prepare_home made the db file */
    struct bt_buf err;                       /* last error message */
    int batch;                               /* 1 while an event batch transaction is open */
    int wal_pages;                           /* pages in the WAL after this handle's last commit */
    sqlite3_stmt *stmts[BT_STORE_STMTS_MAX]; /* store.c's statements, prepared on first use */
    struct {
        const char *sql; /* a static SQL string: the key is its address */
        sqlite3_stmt *q; /* prepared on first use */
    } cache[32];         /* statements of the other store-*.c files */
};

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
/* Reset q after use (ends its read) and return rc. */
int bt_st_done(sqlite3_stmt *q, int rc);
/* Step a statement that returns no rows; returns 0 or BT_ESTORE. */
int bt_st_run(struct bt_store *s, sqlite3_stmt *q, const char *what);
/* Step once: 1 for a row (q stays positioned), 0 for none, BT_ESTORE. */
int bt_st_step(struct bt_store *s, sqlite3_stmt *q, const char *what);

void bt_st_bind_text(sqlite3_stmt *q, int i, const char *text);  /* NULL binds NULL */
char *bt_st_col_str(sqlite3_stmt *q, int i);                     /* NULL for NULL */
char *bt_st_col_str0(sqlite3_stmt *q, int i);                    /* "" for NULL */
void bt_st_col_id(sqlite3_stmt *q, int i, char out[BT_ID_SIZE]); /* "" if not an id */
int64_t bt_st_col_i64(sqlite3_stmt *q, int i, int64_t dflt);     /* dflt for NULL */

/* Step q, a query of one integer column, into *v (BT_ESTORE if no row). */
int bt_st_query_int(struct bt_store *s, sqlite3_stmt *q, const char *what, int64_t *v);
/* BT_EBUSY (naming the run) if the conversation has a running run. */
int bt_st_check_not_running(struct bt_store *s, const char *conv);

/* Inside a write transaction: -EPERM if the conversation was handed off
 * (transferred) unless force, which makes it active again; BT_ENOTFOUND if
 * there is no such conversation. */
int bt_st_check_owner(struct bt_store *s, const char *conv, int force);

/* Fill c (owned strings) from the first 12 columns of a row shaped like
 * store.c's CONV_SELECT: id, title, coder, model, cwd, native session id and
 * path, status, created, updated, last run id and state. */
void bt_st_read_conversation(sqlite3_stmt *q, struct bt_store_conversation *c);

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

/* Insert one event row, in whatever transaction is open. */
int bt_st_insert_event(struct bt_store *s, const struct bt_store_event *ev);
/* Inside a write transaction: what bt_store_run_finish changes. */
int bt_st_finish_run(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                     int64_t now);

/* Inside a write transaction: give message msg, just queued in conv, the
 * conversation's next queue number, written to *queue_no (may be NULL). */
int bt_st_queue_number(struct bt_store *s, const char *conv, int64_t msg, int64_t *queue_no);

/* Commit pending events, then BEGIN IMMEDIATE. */
int bt_st_tx_begin(struct bt_store *s);
/* Commit if rc is 0, else roll back keeping the error; returns the result. */
int bt_st_tx_end(struct bt_store *s, int rc);

#endif
