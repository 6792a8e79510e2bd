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
 *   100 + n turn/steer {threadId, expectedTurnId, input:[{type:"text", text}]}
 *     for the turn's nth steer (TurnSteerParams; TurnSteerResponse {turnId},
 *     or an error when the turn is no longer the active one)
 * Messages carry no "jsonrpc" member (codex app-server omits it too).
 *
 * Listing the models (runners/codex-models.c), in a process of its own:
 *   1 initialize, `initialized`, then
 *   5 model/list {limit} (ModelListParams), page after page while the
 *     answer names a nextCursor: ModelListResponse {data: [Model {model,
 *     displayName, hidden, isDefault, ...}], nextCursor}.
 */
#ifndef BT_RUNNER_CODEX_H
#define BT_RUNNER_CODEX_H

#include "runner.h"

enum {
    BT_CODEX_ID_INITIALIZE = 1,
    BT_CODEX_ID_THREAD = 2,
    BT_CODEX_ID_TURN = 3,
    BT_CODEX_ID_INTERRUPT = 4,
    BT_CODEX_ID_MODELS = 5,
    BT_CODEX_ID_STEER = 100, /* + the steer's index in the turn */
};

/* Steers one turn takes, at most (the rest are queued as the next turn's). */
#define BT_CODEX_STEERS_MAX 64

extern const struct bt_runner_ops bt_runner_codex;

/* The runner's resolve_launcher op (runners/codex-launcher.c): the native
 * binary npm's bin/codex.js would run, and the environment it would give. */
int bt_codex_resolve_launcher(const char *path, char **native, struct bt_strv *env);

/* The runner's models_* ops (runners/codex-models.c; runner.h). */
void bt_codex_models_argv(struct bt_strv *argv);
void bt_codex_models_start(struct bt_buf *out);
int bt_codex_models_line(const char *line, size_t len, struct bt_runner_models *m,
                         struct bt_buf *out, char **why);

#endif
