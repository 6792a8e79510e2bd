/* SPDX-License-Identifier: MIT */
/*
 * codex runner: the write side of `codex app-server --listen stdio://`
 * (codex-cli 0.171.0, schema from `codex app-server generate-json-schema`:
 * ClientRequest.json, ServerRequest.json, *ApprovalResponse.json).
 *
 * Client requests, with fixed ids so recorded fixtures replay by id:
 *   1 initialize {clientInfo}            -> then the `initialized` notification
 *   2 thread/start {cwd, approvalPolicy, sandbox, model?}
 *     or thread/resume {threadId, excludeTurns:true}
 *   3 turn/start {threadId, input:[{type:"text", text}]}
 *   4 turn/interrupt {threadId, turnId}
 * Messages carry no "jsonrpc" member (codex app-server omits it too).
 */
#ifndef BT_RUNNER_CODEX_H
#define BT_RUNNER_CODEX_H

#include "runner.h"

enum {
    BT_CODEX_ID_INITIALIZE = 1,
    BT_CODEX_ID_THREAD = 2,
    BT_CODEX_ID_TURN = 3,
    BT_CODEX_ID_INTERRUPT = 4,
};

extern const struct bt_runner_ops bt_runner_codex;

/* The runner's resolve_launcher op (runners/codex-launcher.c): the native
 * binary npm's bin/codex.js would run, and the environment it would give. */
int bt_codex_resolve_launcher(const char *path, char **native, struct bt_strv *env);

#endif
