/* SPDX-License-Identifier: MIT */
/*
 * cmd-cancel: `baton cancel CONV` stops a conversation's running turn from
 * any process, and `baton rm-queued CONV N` takes back the conversation's
 * queued message #N (its queue number, store.h "Queue numbers").
 *
 * Both are the service's (service-cancel.c): the command parses, calls
 * and says what came of it; cancel then waits for the run to end, as a
 * person at a terminal expects (the API and `baton acp` do not wait).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd.h"
#include "error.h"
#include "service-conv.h"

/* How long cancel waits for the turn to end: the owner's stop escalation
 * takes at most two grace periods of 3 s, plus the coder's linger. */
#define CANCEL_WAIT_MS 20000

const struct bt_cmd bt_cmd_def_cancel = {
    .name = "cancel",
    .run = bt_cmd_cancel,
    .operands = "CONV",
    .summary = "stop the running turn of a conversation",
    .notes = "The stop is recorded first, then the turn's owner stops its coder (within\n"
             "about 100 ms); cancel waits for the turn to end and says how it ended.\n"};

int bt_cmd_cancel(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, &bt_cmd_def_cancel, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, a.operands[0], conv)) != 0)
        goto out;
    struct bt_service_outcome o = {0};
    if (bt_service_cancel(s, conv, &o) != 0) {
        rc = bt_cmd_fail(bt_cmd_exit_service(&o), "%s", o.message);
        free(o.message);
        goto out;
    }
    enum bt_store_run_state st = bt_service_cancel_wait(s, o.run, CANCEL_WAIT_MS, bt_cmd_say, NULL);
    if (st == BT_STORE_RUN_RUNNING)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "run %s of %s is still stopping; it was asked to cancel",
                         o.run, conv);
    else
        fprintf(stderr, "baton: run %s of %s ended %s\n", o.run, conv, bt_store_run_state_name(st));
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

const struct bt_cmd bt_cmd_def_rm_queued = {
    .name = "rm-queued",
    .run = bt_cmd_rm_queued,
    .operands = "CONV N",
    .summary = "take back a queued message before it goes",
    .notes = "N is the message's queue number in CONV, as `baton send` and `baton show`\n"
             "print it (#N): 1 is the first message ever queued in CONV. Numbers are never\n"
             "reused.\n"};

int bt_cmd_rm_queued(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, &bt_cmd_def_rm_queued, argc, argv);
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
        struct bt_service_outcome o = {0};
        if (bt_service_unqueue(s, conv, msg, &o) == 0)
            fprintf(stderr, "baton: took back queued message #%lld of %s\n", (long long)msg, conv);
        else
            rc = bt_cmd_fail(bt_cmd_exit_service(&o), "%s", o.message);
        free(o.message);
    }
    bt_store_close(s);
    return rc;
}
