/* SPDX-License-Identifier: MIT */
/*
 * claude parser: the read side of `claude -p --output-format stream-json
 * --verbose --include-partial-messages` (Claude Code 2.1.332,
 * @anthropic-ai/claude-code; no published schema: the shapes are those of
 * fixtures/claude/2.1.332, described in docs/claude.md).
 *
 * Lines are JSON objects with a "type": system (subtype init names the
 * session and claude's version; status, thinking_tokens and others are
 * progress or noise), stream_event (the Anthropic SSE event: text and
 * thinking deltas, tool_use blocks), assistant (one per finished content
 * block; only what was not streamed is used), user (tool results),
 * control_request (can_use_tool: a permission ask the runner must answer),
 * control_response (to the runner's interrupt) and result (the end of the
 * turn: is_error decides, whatever the subtype).
 *
 * Signals: RESPONSE with method "init" and the session id (runner emits
 * session.started); CODER_VERSION; REQUEST for every control_request
 * (method = its subtype; request_id = its id as JSON text; params_json =
 * the tool input as JSON text); TURN_END at result.
 */
#ifndef BT_PARSER_CLAUDE_H
#define BT_PARSER_CLAUDE_H

#include "parser.h"

extern const struct bt_parser_ops bt_parser_claude;

#endif
