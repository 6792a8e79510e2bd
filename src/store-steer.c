/* SPDX-License-Identifier: MIT */
/*
 * store-steer: a steer that did not go into its turn becomes the next
 * turn's queued message, and its control request says so, in one
 * transaction (store.h bt_store_control_queue): never lost, never queued
 * twice, never both in the turn and queued.
 */
#include "store-int.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "error.h"

static const char SQL_SETTINGS[] = "UPDATE messages SET approval = ?2, timeout_ms = ?3,"
                                   " idle_timeout_ms = ?4, no_retry = ?5 WHERE id = ?1";

/* Keep the sender's settings with queued message msg. */
static int keep_settings(struct bt_store *s, int64_t msg, const struct bt_store_settings *st)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_SETTINGS);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, msg);
    sqlite3_bind_int(q, 2, st->approval);
    sqlite3_bind_int64(q, 3, st->timeout_ms > INT64_MAX ? INT64_MAX : (int64_t)st->timeout_ms);
    sqlite3_bind_int64(q, 4,
                       st->idle_timeout_ms > INT64_MAX ? INT64_MAX : (int64_t)st->idle_timeout_ms);
    sqlite3_bind_int(q, 5, st->no_retry != 0);
    return bt_st_run(s, q, "store the message's settings");
}

int bt_store_control_queue(struct bt_store *s, int64_t id, const char *text, const char *why,
                           const struct bt_store_settings *settings, int64_t *queue_no)
{
    struct bt_store_control c;
    int rc = bt_store_control_get(s, id, &c);
    if (rc)
        return rc;
    if (c.state != BT_STORE_CONTROL_PENDING) {
        bt_store_control_release(&c);
        return bt_st_fail(s, -EALREADY, "control request %lld was already finished", (long long)id);
    }
    int64_t no = 0;
    struct bt_buf result = BT_BUF_INIT;
    rc = bt_st_tx_begin(s);
    if (rc == 0) {
        struct bt_store_message_new u = {.conversation = c.conversation,
                                         .role = BT_STORE_ROLE_USER,
                                         .state = BT_STORE_MSG_QUEUED,
                                         .text = text};
        int64_t msg = 0, now = bt_now_ms();
        rc = bt_st_touch_conversation(s, c.conversation, now);
        if (rc == 0)
            rc = bt_st_insert_message(s, &u, now, &msg, &no);
        if (rc == 0 && settings)
            rc = keep_settings(s, msg, settings);
    }
    if (rc == 0) {
        bt_buf_adds(&result, "{\"reason\":");
        bt_json_quote(&result, why ? why : "", why ? strlen(why) : 0);
        bt_buf_addf(&result, ",\"queue_no\":%lld}", (long long)no);
        /* finishing checks pending again, inside the transaction: a
         * request two processes finish at once is queued by one (the
         * other's message is rolled back) */
        rc = bt_store_control_finish(s, id, BT_STORE_CONTROL_QUEUED, result.data);
    }
    bt_buf_release(&result);
    bt_store_control_release(&c);
    rc = bt_st_tx_end(s, rc);
    if (rc == 0 && queue_no)
        *queue_no = no;
    return rc;
}
