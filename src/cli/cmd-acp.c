/* SPDX-License-Identifier: MIT */
/*
 * cmd-acp: `baton acp`, baton as an ACP agent on stdin and stdout for an
 * editor (acp-agent.h, docs/acp-agent.md). stdout carries the protocol
 * and nothing else; what baton has to say goes to stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "acp-agent.h"
#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "coder.h"
#include "error.h"

int bt_cmd_acp(int argc, char **argv)
{
    struct bt_args a;
    struct bt_service_turn t = {.idle_timeout_ms = BT_CMD_IDLE_TIMEOUT_MS};
    struct bt_acp_opts o = {0};
    int id, rc;
    bt_args_init(&a, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        if (id == 'c') {
            if ((rc = bt_cmd_check_coders(&a, a.value, 0)) != 0)
                return rc;
            o.coder = a.value;
        } else if (id == 'm') {
            o.model = a.value;
        } else if (id == 'L') {
            o.no_model_list = 1;
        } else if ((rc = bt_cmd_turn_option(&a, id, &t)) != 0) {
            return rc;
        }
    }
    rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? BT_EXIT_OK : rc;
    if (isatty(STDIN_FILENO))
        fprintf(stderr, "baton acp: an editor starts this and speaks ACP (JSON-RPC lines) on "
                        "stdin; docs/acp-agent.md says how to set one up\n");
    o.approval = t.approval;
    o.timeout_ms = t.timeout_ms;
    o.idle_timeout_ms = t.idle_timeout_ms;
    o.no_retry = t.no_retry;
    o.no_snapshot = t.no_snapshot;
    struct bt_acp_end end = {0};
    rc = bt_acp_agent_run(&o, STDIN_FILENO, STDOUT_FILENO, &end);
    if (rc == BT_ACP_END_SIGNAL) {
        fprintf(stderr,
                "baton acp: stopped by SIG%s: running turns were cancelled (what they "
                "produced is stored); queued prompts wait\n",
                end.signo == SIGINT    ? "INT"
                : end.signo == SIGTERM ? "TERM"
                                       : "HUP");
        return BT_EXIT_CANCELLED;
    }
    if (rc == BT_ACP_END_STDOUT) {
        fprintf(stderr,
                "baton acp: cannot write to stdout (%s): running turns were cancelled "
                "(what they produced is stored); queued prompts wait\n",
                end.out_errno == EPIPE ? "the editor closed it" : bt_strerror(-end.out_errno));
        return BT_EXIT_STDOUT_CLOSED;
    }
    return rc ? BT_EXIT_FAILED : BT_EXIT_OK;
}
