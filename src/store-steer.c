/* SPDX-License-Identifier: MIT */
/*
 * store-steer: a steer that did not go into its turn becomes the next
 * turn's queued message, and its control request says so, in one
 * transaction (store.h bt_store_control_queue): never lost, never queued
 * twice, never both in the turn and queued.
 */
#include "store-int.h"

#include <errno.h>
#include <string.h>

#include "error.h"

int bt_store_control_queue(struct bt_store *s, int64_t id, const char *text,
                           const char *result_json, int64_t *queue_no)
{
    struct bt_store_control c;
    int rc = bt_store_control_get(s, id, &c);
    if (rc)
        return rc;
    if (c.state != BT_STORE_CONTROL_PENDING) {
        bt_store_control_release(&c);
        return bt_st_fail(s, -EALREADY, "control request %lld was already finished", (long long)id);
    }
    rc = bt_st_tx_begin(s);
    if (rc == 0)
        /* finishing checks pending again, inside the transaction: a
         * request two processes finish at once is queued by one */
        rc = bt_store_control_finish(s, id, BT_STORE_CONTROL_QUEUED, result_json);
    if (rc == 0) {
        struct bt_store_message_new u = {.conversation = c.conversation,
                                         .role = BT_STORE_ROLE_USER,
                                         .state = BT_STORE_MSG_QUEUED,
                                         .text = text};
        rc = bt_st_insert_message(s, &u, bt_now_ms(), NULL, queue_no);
    }
    bt_store_control_release(&c);
    return bt_st_tx_end(s, rc);
}
