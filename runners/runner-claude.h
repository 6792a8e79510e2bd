/* SPDX-License-Identifier: MIT */
/*
 * claude runner: the write side of `claude -p --output-format stream-json
 * --input-format stream-json` (Claude Code 2.1.332; flags from its
 * `claude --help`, messages observed in docs/claude.md).
 *
 * argv: -p --output-format stream-json --input-format stream-json --verbose
 * --include-partial-messages, then --permission-prompt-tool stdio (approval
 * deny/auto: permission asks come as control_request can_use_tool) or
 * --permission-mode bypassPermissions (approval never), [--model M],
 * [--settings {"env":{"CLAUDE_CODE_MAX_RETRIES":"0"}}] with --no-retry, and
 * --session-id <uuid> on the first turn or --resume <id> after it.
 *
 * The native session: baton chooses a new conversation's session id (a
 * random UUID) on the first turn through new_session_path, as the path of
 * the transcript claude will write:
 * $CLAUDE_CONFIG_DIR (or ~/.claude)/projects/<cwd, every byte but [A-Za-z0-9]
 * as '-'>/<uuid>.jsonl. The path is stored before claude starts; its name
 * gives the id for --session-id. Once claude's init has named the session
 * (session.started stores native_session_id), later turns pass --resume.
 *
 * stdin: the prompt as one stream-json user message; answers to control
 * requests; the interrupt control request. The engine closes stdin at the
 * turn's end (the result), and claude then exits.
 */
#ifndef BT_RUNNER_CLAUDE_H
#define BT_RUNNER_CLAUDE_H

#include "runner.h"

extern const struct bt_runner_ops bt_runner_claude;

#endif
