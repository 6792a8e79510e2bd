/* SPDX-License-Identifier: MIT */
/*
 * acp-agent: `baton acp`, baton as an Agent Client Protocol agent: an
 * editor (the ACP client) starts it and speaks JSON-RPC 2.0 on its stdin
 * and stdout, one message per line; every coder baton drives answers
 * behind it, with baton's store, queue and resume (docs/acp-agent.md).
 *
 * Protocol: ACP version 1, the schema shipped in @agentclientprotocol/sdk
 * 2.4.0 (schema/v1/schema.json) and
 * https://agentclientprotocol.com/protocol/v1/ (initialization,
 * session-setup, session-list, prompt-turn, tool-calls).
 *
 * A session is a baton conversation: its sessionId is the conversation
 * id. session/new hands out a new id; the conversation is stored with the
 * first prompt (an editor opens sessions it never uses). Each prompt runs
 * one baton turn in a thread of this process, streaming session/update
 * notifications; a prompt sent while the session's turn runs waits queued
 * in the store, as `baton send` does, and goes out when that turn
 * completes.
 */
#ifndef BT_ACP_AGENT_H
#define BT_ACP_AGENT_H

#include <stdint.h>

#include "runner.h"

struct bt_acp_opts {
    const char *coder;         /* default coder of a new session; NULL: bt_coders[0] */
    const char *model;         /* default model; NULL: the coder's */
    enum bt_approval approval; /* approval policy of every turn */
    uint64_t timeout_ms;       /* each turn; 0 = none */
    uint64_t idle_timeout_ms;  /* each turn; 0 = none */
    int no_retry;              /* ask the coder not to retry failed requests */
    int no_snapshot;           /* no working-tree snapshots (--no-snapshot) */
    int no_model_list;         /* do not start coders to list their models */
};

/* How bt_acp_agent_run ended. */
enum {
    BT_ACP_END_STDIN = 0,  /* the client closed in_fd, or stopped reading out_fd */
    BT_ACP_END_SIGNAL = 1, /* SIGINT, SIGTERM or SIGHUP (end->signo says which) */
    BT_ACP_END_STDOUT = 2, /* a message could not be written: output was lost */
};

struct bt_acp_end {
    int signo;     /* the stop signal that came first, 0 none */
    int out_errno; /* why a write failed (ETIMEDOUT: no reading after a signal), 0 none */
};

/* Serve one client on in_fd (its requests) and out_fd (baton's messages,
 * nothing else), with the store of $BATON_HOME, until in_fd ends, a stop
 * signal comes, or out_fd's reader goes away or a write to it fails. Turns still running then are
 * cancelled (what they produced stays stored, prompts still queued stay
 * queued) and waited for; a second signal meanwhile kills their coders'
 * process groups. A write to a client that reads nothing gives up a
 * second after a signal. Returns a BT_ACP_END_* with *end filled, or a
 * negative error when the store cannot be opened or the signals watched
 * (said on stderr). */
int bt_acp_agent_run(const struct bt_acp_opts *o, int in_fd, int out_fd, struct bt_acp_end *end);

#endif
