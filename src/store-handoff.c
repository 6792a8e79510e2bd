/* SPDX-License-Identifier: MIT */
/*
 * store-handoff: a conversation handed off to its coder's own terminal UI
 * (`baton handoff`). Its status becomes `transferred`: the terminal owns the
 * native session now, so baton sends no turn of it unless forced, which
 * makes it active again. Both decisions are taken inside write transactions,
 * so a handoff racing a send either sees the send's run (and refuses) or
 * makes the send refuse.
 */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "store-int.h"

static const char SQL_STATUS[] = "SELECT status FROM conversations WHERE id = ?1";
static const char SQL_SET_STATUS[] = "UPDATE conversations SET status = ?2 WHERE id = ?1";
static const char SQL_QUEUED[] = "SELECT count(*) FROM messages WHERE conversation = ?1"
                                 " AND state = 'queued' AND role = 'user'";

/* 1 if the conversation is transferred, 0 if not; or an error. */
static int is_transferred(struct bt_store *s, const char *conv)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_STATUS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc = bt_st_step(s, q, "read conversation status");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation '%s'", conv);
    const char *st = (const char *)sqlite3_column_text(q, 0);
    int transferred = st && strcmp(st, "transferred") == 0;
    return bt_st_done(q, transferred);
}

static int set_status(struct bt_store *s, const char *conv, const char *status)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_SET_STATUS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    bt_st_bind_text(q, 2, status);
    return bt_st_run(s, q, "set conversation status");
}

int bt_st_check_owner(struct bt_store *s, const char *conv, int force)
{
    int rc = is_transferred(s, conv);
    if (rc <= 0)
        return rc;
    if (!force)
        return bt_st_fail(s, -EPERM,
                          "conversation '%s' was handed off: its coder's terminal owns the "
                          "session now",
                          conv);
    return set_status(s, conv, "active");
}

/* The body of bt_store_conversation_hand_off (mark) and of its check, in
 * its transaction. */
static int hand_off(struct bt_store *s, const char *conv, int mark)
{
    int rc = is_transferred(s, conv);
    if (rc >= 0)
        rc = bt_st_check_not_running(s, conv);
    int64_t queued = 0;
    sqlite3_stmt *q = rc == 0 ? bt_st_sql(s, SQL_QUEUED) : NULL;
    if (rc == 0 && !q)
        return BT_ESTORE;
    if (q) {
        bt_st_bind_text(q, 1, conv);
        rc = bt_st_query_int(s, q, "count queued messages", &queued);
    }
    if (rc == 0 && queued > 0)
        return bt_st_fail(s, -EAGAIN,
                          "%lld queued message(s) of '%s' wait to be sent: send them or take "
                          "them back (baton rm-queued) first",
                          (long long)queued, conv);
    return rc || !mark ? rc : set_status(s, conv, "transferred");
}

int bt_store_conversation_hand_off(struct bt_store *s, const char *conv)
{
    if (!conv)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = bt_st_tx_begin(s);
    return rc ? rc : bt_st_tx_end(s, hand_off(s, conv, 1));
}

int bt_store_conversation_hand_off_check(struct bt_store *s, const char *conv)
{
    if (!conv)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = bt_st_tx_begin(s);
    return rc ? rc : bt_st_tx_end(s, hand_off(s, conv, 0));
}

static const char SQL_RUN_BUSY[] = "SELECT id FROM runs WHERE conversation = ?1"
                                   " AND state = 'running'";

int bt_st_check_not_running(struct bt_store *s, const char *conv)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_BUSY);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc = bt_st_step(s, q, "find running run");
    if (rc != 1)
        return rc;
    rc = bt_st_fail(s, BT_EBUSY, "conversation '%s' already has a running run '%s'", conv,
                    (const char *)sqlite3_column_text(q, 0));
    return bt_st_done(q, rc);
}
