/* SPDX-License-Identifier: MIT */
/*
 * cmd-turn: what the commands that run turns share (cmd-run.c: run, send,
 * retry; cmd-worker.c: __worker): the turn options and their values, and
 * starting a detached worker, then hearing its report (cmd-worker.c's
 * header has the report's lines).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "error.h"
#include "id.h"
#include "service-conv.h"
#include "slot.h"

int bt_cmd_parse_seconds(const char *s, uint64_t *ms)
{
    return bt_service_seconds_parse(s, ms);
}

int bt_cmd_parse_approval(const char *s, enum bt_approval *a)
{
    return bt_service_approval_parse(s, a);
}

/* The options every turn takes (also the worker's); returns 0 when id was
 * one of them, 1 when it was not, or an exit code. */
int bt_cmd_turn_option(const struct bt_args *a, int id, struct bt_service_turn *t)
{
    switch (id) {
    case 'r': t->no_retry = 1; return 0;
    case 'S': t->no_snapshot = 1; return 0;
    case 'a':
        if (bt_cmd_parse_approval(a->value, &t->approval))
            return bt_args_fail(a, "--approval takes deny, auto, never or ask, not '%s'", a->value);
        return 0;
    case 't':
        if (bt_cmd_parse_seconds(a->value, &t->timeout_ms))
            return bt_args_fail(a, "--timeout takes seconds, e.g. 300, not '%s'", a->value);
        return 0;
    case 'i':
        if (bt_cmd_parse_seconds(a->value, &t->idle_timeout_ms))
            return bt_args_fail(a, "--idle-timeout takes seconds, e.g. 120, not '%s'", a->value);
        return 0;
    default: return 1;
    }
}

int bt_cmd_worker_start(const char *mode, const char *conv, const struct bt_service_turn *t,
                        int *notify_fd)
{
    return bt_service_worker_start(mode, conv, t, notify_fd);
}

static int report_started(const char *conv, const char *run, int json)
{
    if (json) {
        struct bt_buf b = BT_BUF_INIT;
        bt_buf_addc(&b, '{');
        bt_json_member(&b, "conversation", conv);
        bt_json_member(&b, "run", run);
        bt_buf_adds(&b, ",\"detached\":true}\n");
        fputs(b.data, stdout);
        bt_buf_release(&b);
    } else {
        printf("%s\n", conv);
        fprintf(stderr,
                "baton: the turn runs in a detached worker: `baton attach %.12s` follows it\n",
                conv);
    }
    return BT_EXIT_OK;
}

int bt_cmd_worker_report(int fd, char run[BT_ID_SIZE], char **why)
{
    struct bt_service_outcome o = {0};
    int rc = bt_service_worker_report(fd, &o);
    memcpy(run, o.run, BT_ID_SIZE);
    *why = o.message;
    if (rc == 0 && o.run[0]) {
        free(o.message);
        *why = NULL;
        return 0;
    }
    int code = bt_cmd_exit_service(&o);
    if (o.error_kind == BT_ERROR_KIND_AUTH_REQUIRED)
        code = BT_EXIT_AUTH;
    return code ? code : BT_EXIT_FAILED;
}

int bt_cmd_worker_detach(struct bt_store *s, const char *mode, const char *conv, int64_t queued,
                         const struct bt_service_turn *t, int json)
{
    int fd = -1;
    const char *bad = NULL; /* the worker says so only in worker.log */
    int limit = bt_slot_limit(&bad);
    if (bad)
        fprintf(stderr, "baton: BATON_MAX_TURNS is a number from 1 to %d, not '%s'; %d it is\n",
                BT_SLOT_MAX, bad, limit);
    int rc = bt_service_worker_start(mode, conv, t, &fd);
    if (rc == 0) {
        struct bt_service_outcome o = {0};
        int started = bt_service_worker_report(fd, &o) == 0;
        if (started) /* no run: another turn took the queue meanwhile */
            rc = report_started(o.run[0] ? o.conversation : conv, o.run[0] ? o.run : NULL, json);
        else if (o.error_kind == BT_ERROR_KIND_AUTH_REQUIRED)
            rc = bt_cmd_fail(BT_EXIT_AUTH, "%s", o.message);
        else
            rc = bt_cmd_fail(bt_cmd_exit_service(&o), "%s", o.message);
        free(o.message);
        if (started)
            return rc;
    } else {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot start a worker: %s", bt_strerror(rc));
    }
    if (queued > 0 && bt_service_take_back(s, conv, queued, 0) == 0)
        fputs("baton: nothing was sent (the prompt queued for it was taken back)\n", stderr);
    return rc;
}
