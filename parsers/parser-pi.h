/* SPDX-License-Identifier: MIT */
/*
 * pi parser: the read side of `pi --mode rpc`, pi 0.73.1
 * (@mariozechner/pi-coding-agent) and pi 1.x (1.6.0,
 * @earendil-works/pi-coding-agent); protocol in the package's docs/rpc.md
 * (1.x: also docs/json.md, docs/rpc-commands.md), observations in
 * docs/pi.md.
 *
 * Lines are JSON objects with a "type": "response" (to a command, matched by
 * its string id), agent events (agent_start/end, turn_*, message_*,
 * tool_execution_*, auto_retry_*, compaction_*; 1.x adds agent_settled and
 * entry_appended), and extension_ui_request (dialogs that need an answer,
 * and fire-and-forget UI calls).
 *
 * Every 0.73.1 message_update repeats the whole partial message, twice (1.x
 * sends the delta only): the delta is read with jscan without building
 * those copies. When the turn ends: 0.73.1's agent_end after a failed
 * request may be followed by a retry or a compaction (both announced within
 * a millisecond), so such an end is tentative. pi 1.x is told apart by its
 * prompt response (data.disposition): its agent_end ends nothing, and
 * agent_settled, which follows the last one, is the definite end.
 */
#ifndef BT_PARSER_PI_H
#define BT_PARSER_PI_H

#include "parser.h"

extern const struct bt_parser_ops bt_parser_pi;

#endif
