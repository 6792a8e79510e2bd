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
#include "cmd-opts.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "coder.h"
#include "error.h"

static const struct bt_opt acp_opts[] = {
    {.id = 'c',
     .letter = 'c',
     .name = "coder",
     .value = "CODER",
     .help = "a new session's coder (default: the first `baton\ncoders` lists); the editor "
             "can pick another"},
    {.id = 'm',
     .letter = 'm',
     .name = "model",
     .value = "MODEL",
     .help = "a new session's model, as the coder names it\n(default: its own)"},
    {.id = 'a',
     .name = "approval",
     .value = "POLICY",
     .help = HELP_ACP_APPROVAL,
     .choices = "deny|auto|never"},
    {.id = 't', .name = "timeout", .value = "S", .help = HELP_TIMEOUT},
    {.id = 'i', .name = "idle-timeout", .value = "S", .help = HELP_IDLE},
    {.id = 'r', .name = "no-retry", .help = "no retries of failed model requests (pi, claude)"},
    {.id = 'S',
     .name = "no-snapshot",
     .help =
         "no snapshots of the git working tree: turns record\nno changes (also BATON_SNAPSHOTS=0)"},
    {.id = 'L',
     .name = "no-model-list",
     .help = "do not start a coder to list its models (codex, pi):\nthe model select offers "
             "the default and the models\nused before"},
    {0},
};

const struct bt_cmd bt_cmd_def_acp = {
    .name = "acp",
    .run = bt_cmd_acp,
    .summary = "be an ACP agent for an editor, on stdin and stdout",
    .opts = acp_opts,
    .notes = "An editor that speaks the Agent Client Protocol (Zed, JetBrains IDEs, Neovim\n"
             "and Emacs plugins) starts `baton acp` as its agent: every coder baton drives\n"
             "answers behind it, each session a baton conversation (`baton ls` lists it,\n"
             "`baton acp` opens one the CLI started). stdout carries the protocol only.\n"
             "Setting up an editor: docs/acp-agent.md.\n"};

int bt_cmd_acp(int argc, char **argv)
{
    struct bt_args a;
    struct bt_service_turn t = {.idle_timeout_ms = BT_CMD_IDLE_TIMEOUT_MS};
    struct bt_acp_opts o = {0};
    int id, rc;
    bt_args_init(&a, &bt_cmd_def_acp, argc, argv);
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
