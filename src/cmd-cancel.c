/* SPDX-License-Identifier: MIT */
/*
 * cmd-cancel: `baton cancel CONV` stops a conversation's running turn from
 * any process, and `baton rm-queued CONV N` takes back the conversation's
 * queued message #N (its queue number, store.h "Queue numbers").
 *
 * cancel records the request in the store and waits: the run's owner (a
 * foreground baton or a detached worker) looks for it every 100 ms and
 * stops its coder the normal way (protocol interrupt, SIGTERM, SIGKILL to
 * the group). No signal goes to a pid read from the store, so a reused pid
 * is never hit; an owner that died meanwhile is recovered here, and its run
 * reads as cancelled because the request was stored first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "service.h"
#include "store.h"

/* How long cancel waits for the turn to end: the owner's stop escalation
 * takes at most two grace periods of 3 s, plus the coder's linger. */
#define CANCEL_WAIT_MS 20000

/* Wait for run to end; its final state or RUNNING after the wait. */
static enum bt_store_run_state wait_end(struct bt_store *s, const char *run)
{
    for (unsigned waited = 0;; waited += 100) {
        struct bt_store_run r;
        if (waited % 1000 == 0)
            bt_cmd_recover(s); /* an owner that died meanwhile */
        enum bt_store_run_state st =
            bt_store_run_get(s, run, &r) == 0 ? r.state : BT_STORE_RUN_INTERRUPTED;
        bt_store_run_release(&r);
        if (st != BT_STORE_RUN_RUNNING || waited >= CANCEL_WAIT_MS)
            return st;
        bt_cmd_sleep_ms(100);
    }
}

int bt_cmd_cancel(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, a.operands[0], conv)) != 0)
        goto out;
    struct bt_store_run run;
    rc = bt_store_run_cancel(s, conv, &run);
    if (rc == BT_ENOTFOUND) {
        rc = bt_cmd_fail(BT_EXIT_USAGE, "no turn of %s is running: nothing to cancel", conv);
        goto out;
    }
    if (rc) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot cancel: %s", bt_store_errmsg(s));
        goto out;
    }
    bt_service_control_wake(s, run.id); /* else its owner reads it within a second */
    enum bt_store_run_state st = wait_end(s, run.id);
    if (st == BT_STORE_RUN_RUNNING)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "run %s of %s is still stopping; it was asked to cancel",
                         run.id, conv);
    else
        fprintf(stderr, "baton: run %s of %s ended %s\n", run.id, conv,
                bt_store_run_state_name(st));
    bt_store_run_release(&run);
out:
    bt_store_close(s);
    return rc;
}

/* A queue number: a positive decimal integer. */
static int parse_msg(const char *text, int64_t *msg)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || v <= 0 || errno == ERANGE || text[0] == '+' || text[0] == ' ')
        return -1;
    *msg = v;
    return 0;
}

int bt_cmd_rm_queued(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    int64_t msg;
    if (parse_msg(a.operands[1], &msg))
        return bt_args_fail(&a, "N must be a queue number (`baton show` gives it), not '%s'",
                            a.operands[1]);
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, a.operands[0], conv)) == 0) {
        rc = bt_store_queued_discard(s, conv, msg, NULL);
        if (rc == 0)
            fprintf(stderr, "baton: took back queued message #%lld of %s\n", (long long)msg, conv);
        else
            rc = bt_cmd_fail(rc == BT_ESTORE ? BT_EXIT_FAILED : BT_EXIT_USAGE, "%s",
                             bt_store_errmsg(s));
    }
    bt_store_close(s);
    return rc;
}
