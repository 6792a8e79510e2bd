/* SPDX-License-Identifier: MIT */
/*
 * store-queue: queue numbers and the text of a running turn (store.h,
 * "Queue numbers" and bt_store_run_answer; docs/store.md, "One run per
 * conversation, queued messages, cancel").
 *
 * A queued message's number comes from its conversation's counter
 * (conversations.queue_last, schema 5), not from the messages left, so a
 * number is never given twice in a conversation: a script that queued #3
 * and takes #3 back cannot take someone else's message, whatever was sent
 * or removed meanwhile.
 */
#include "store.h"
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "error.h"
#include "util.h"

/* --- SQL ---------------------------------------------------------------- */

static const char SQL_BUMP[] = "UPDATE conversations SET queue_last = queue_last + 1"
                               " WHERE id = ?1";
static const char SQL_MARK[] = "UPDATE messages SET queue_no = (SELECT queue_last FROM"
                               " conversations WHERE id = messages.conversation) WHERE id = ?1";
static const char SQL_NUMBER[] = "SELECT queue_no FROM messages WHERE id = ?1";
static const char SQL_FIND[] = "SELECT id FROM messages WHERE conversation = ?1 AND queue_no = ?2"
                               " AND state = 'queued' AND role = 'user'";
static const char SQL_DELETE[] = "DELETE FROM messages WHERE id = ?1";
static const char SQL_NUMBERED[] = "SELECT run FROM messages WHERE conversation = ?1"
                                   " AND queue_no = ?2";
/* the queue number of message id ?2, if it is queued in ?1 */
static const char SQL_NUMBER_OF[] = "SELECT queue_no FROM messages WHERE conversation = ?1"
                                    " AND id = ?2 AND state = 'queued' AND queue_no IS NOT NULL";
static const char SQL_WAITING[] = "SELECT queue_no FROM messages WHERE conversation = ?1"
                                  " AND state = 'queued' AND role = 'user' ORDER BY seq";
/* only the events answer.h reads: a long turn's tool output is skipped */
static const char SQL_ANSWER_EVENTS[] = "SELECT data FROM events WHERE run = ?1"
                                        " AND type IN ('item.delta', 'item.completed')"
                                        " ORDER BY seq";

/* --- numbering ---------------------------------------------------------- */

/* Run sql with ?1 = key (a conversation id or a message id). */
static int run_keyed(struct bt_store *s, const char *sql, const char *conv, int64_t msg,
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

int bt_st_queue_number(struct bt_store *s, const char *conv, int64_t msg, int64_t *queue_no)
{
    int64_t no = 0;
    int rc = run_keyed(s, SQL_BUMP, conv, 0, "number the queued message");
    if (rc == 0)
        rc = run_keyed(s, SQL_MARK, NULL, msg, "number the queued message");
    sqlite3_stmt *q = rc ? NULL : bt_st_sql(s, SQL_NUMBER);
    if (q) {
        sqlite3_bind_int64(q, 1, msg);
        rc = bt_st_query_int(s, q, "number the queued message", &no);
    } else if (rc == 0) {
        rc = BT_ESTORE;
    }
    if (queue_no)
        *queue_no = rc ? 0 : no;
    return rc;
}

/* --- taking one back ---------------------------------------------------- */

/* " (queued now: #3, #4)" or " (nothing is queued)" into b. */
static int describe_waiting(struct bt_store *s, const char *conv, struct bt_buf *b)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_WAITING);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc, n = 0;
    while ((rc = bt_st_step(s, q, "list queued messages")) == 1)
        bt_buf_addf(b, "%s#%lld", n++ ? ", " : " (queued now: ", (long long)bt_st_col_i64(q, 0, 0));
    bt_buf_adds(b, n ? ")" : " (nothing is queued)");
    return rc;
}

/* Why nothing was removed: -EALREADY for a number that was sent,
 * BT_ENOTFOUND for one never given. */
static int discard_miss(struct bt_store *s, const char *conv, int64_t number)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_NUMBERED);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, number);
    int rc = bt_st_step(s, q, "find queued message");
    if (rc == 1) {
        const char *run = (const char *)sqlite3_column_text(q, 0);
        rc =
            bt_st_fail(s, -EALREADY, "queued message #%lld is not queued any more: it was sent%s%s",
                       (long long)number, run ? " in run " : "", run ? run : "");
        return bt_st_done(q, rc);
    }
    if (rc)
        return rc;
    int64_t its = 0; /* a message id given as the number: say which number it has */
    if ((q = bt_st_sql(s, SQL_NUMBER_OF)) == NULL)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, number);
    if ((rc = bt_st_step(s, q, "find queued message")) == 1)
        its = bt_st_col_i64(q, 0, 0);
    bt_st_done(q, 0);
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addf(&b, "conversation %s has no queued message #%lld", conv, (long long)number);
    if (rc >= 0)
        rc = describe_waiting(s, conv, &b);
    if (its)
        bt_buf_addf(&b, "; message id %lld is queued as #%lld: the queue number is what counts",
                    (long long)number, (long long)its);
    if (rc == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "%s", b.data);
    bt_buf_release(&b);
    return rc;
}

int bt_store_queued_discard(struct bt_store *s, const char *conversation, int64_t number,
                            int64_t *msg)
{
    if (msg)
        *msg = 0;
    if (!conversation)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    int64_t id = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_FIND);
    if (!q) {
        rc = BT_ESTORE;
    } else {
        bt_st_bind_text(q, 1, conversation);
        sqlite3_bind_int64(q, 2, number);
        rc = bt_st_step(s, q, "find the queued message");
        if (rc == 1)
            id = sqlite3_column_int64(q, 0);
        rc = rc == 1 ? bt_st_done(q, 0) : rc ? rc : discard_miss(s, conversation, number);
    }
    if (rc == 0)
        rc = run_keyed(s, SQL_DELETE, NULL, id, "take back the queued message");
    rc = bt_st_tx_end(s, rc);
    if (rc == 0 && msg)
        *msg = id;
    return rc;
}

/* --- a running turn's text ---------------------------------------------- */

int bt_store_run_answer(struct bt_store *s, const char *run, char **text)
{
    *text = NULL;
    sqlite3_stmt *q = run ? bt_st_sql(s, SQL_ANSWER_EVENTS) : NULL;
    if (!q)
        return run ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no run id");
    struct bt_answer a;
    bt_answer_init(&a);
    bt_st_bind_text(q, 1, run);
    int rc;
    while ((rc = bt_st_step(s, q, "read the run's events")) == 1)
        bt_answer_add_json(&a, (const char *)sqlite3_column_text(q, 0),
                           (size_t)sqlite3_column_bytes(q, 0));
    if (rc == 0)
        *text = bt_answer_text(&a);
    bt_answer_release(&a);
    return rc;
}
