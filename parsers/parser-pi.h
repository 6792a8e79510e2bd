/* SPDX-License-Identifier: MIT */
/*
 * pi parser: the read side of `pi --mode rpc` (pi 0.73.1,
 * @mariozechner/pi-coding-agent; protocol in the package's docs/rpc.md,
 * observations in docs/pi.md).
 *
 * Lines are JSON objects with a "type": "response" (to a command, matched by
 * its string id), agent events (agent_start/end, turn_*, message_*,
 * tool_execution_*, auto_retry_*, compaction_*), and extension_ui_request
 * (dialogs that need an answer, and fire-and-forget UI calls).
 *
 * Every message_update repeats the whole partial message, twice: the delta
 * is read with jscan without building those copies. An agent_end after a
 * failed request may be followed by a retry or a compaction (both announced
 * within a millisecond): such an end is tentative.
 */
#ifndef BT_PARSER_PI_H
#define BT_PARSER_PI_H

#include "parser.h"

extern const struct bt_parser_ops bt_parser_pi;

#endif
