/* SPDX-License-Identifier: MIT */
/*
 * service-cancel: stopping a conversation's running turn and taking back a
 * queued message (service-conv.h), for every front end: `baton cancel` and
 * `rm-queued`, POST /v1/conversations/{id}/cancel and DELETE …/queue/{n},
 * and `baton acp`'s session/cancel. A cancel is a request stored first
 * (bt_store_run_cancel): the run's owner (a foreground baton or a detached
 * worker) reads it and stops its coder the normal way (protocol
 * interrupt, SIGTERM, SIGKILL to the group). No signal goes to a pid read
 * from the store, so a reused pid is never hit; an owner that died
 * meanwhile is recovered, and its run reads as cancelled because the
 * request was stored first.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "error.h"
#include "service-conv.h"

static int refuse(struct bt_service_outcome *out, enum bt_service_result result, int rc,
                  char *message)
{
    out->result = result;
    out->message = message;
    return rc;
}

int bt_service_cancel(struct bt_store *s, const char *conv, struct bt_service_outcome *out)
{
    struct bt_store_run run = {0};
    int rc = bt_store_run_cancel(s, conv, &run);
    snprintf(out->conversation, sizeof out->conversation, "%s", conv);
    if (rc == BT_ENOTFOUND)
        rc = refuse(out, BT_SERVICE_USAGE, rc,
                    bt_xasprintf("no turn of %s is running: nothing to cancel", conv));
    else if (rc)
        rc = refuse(out, BT_SERVICE_FAILED, rc,
                    bt_xasprintf("cannot cancel: %s", bt_store_errmsg(s)));
    else {
        out->result = BT_SERVICE_OK;
        snprintf(out->run, sizeof out->run, "%s", run.id);
        bt_service_control_wake(s, run.id); /* else its owner reads it within a second */
    }
    bt_store_run_release(&run);
    return rc;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

enum bt_store_run_state bt_service_cancel_wait(struct bt_store *s, const char *run, unsigned ms,
                                               bt_service_say_fn say, void *data)
{
    for (unsigned waited = 0;; waited += 100) {
        struct bt_store_run r;
        if (waited % 1000 == 0)
            bt_service_recover(s, say, data); /* an owner that died meanwhile */
        enum bt_store_run_state st =
            bt_store_run_get(s, run, &r) == 0 ? r.state : BT_STORE_RUN_INTERRUPTED;
        bt_store_run_release(&r);
        if (st != BT_STORE_RUN_RUNNING || waited >= ms)
            return st;
        sleep_ms(100);
    }
}

int bt_service_unqueue(struct bt_store *s, const char *conv, int64_t n,
                       struct bt_service_outcome *out)
{
    int rc = bt_store_queued_discard(s, conv, n, NULL);
    snprintf(out->conversation, sizeof out->conversation, "%s", conv);
    out->queue_no = n;
    if (rc == 0)
        out->result = BT_SERVICE_OK;
    else
        refuse(out, rc == BT_ENOTFOUND || rc == -EALREADY ? BT_SERVICE_USAGE : BT_SERVICE_FAILED,
               rc, bt_xstrdup(bt_store_errmsg(s)));
    return rc;
}
